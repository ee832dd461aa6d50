package org.ferrodl.bench.jvm;

import java.nio.file.Path;
import java.nio.file.Paths;

/** Command-line options shared by the ferrodl and DL4J benchmark mains. */
public final class Options {
    /** mlp, cnn, graves, lstm, or (ferrodl only) rescnn, jni */
    public String model = "mlp";
    public int batch = 64;
    /** epochs in all, the first {@link #warmupEpochs} of them untimed */
    public int epochs = 20;
    public int warmupEpochs = 1;
    /** untimed iterations before the first window; negative: {@link #warmupEpochs} whole epochs */
    public int warmupIters = -1;
    /** with {@link #maxSeconds}: the windows measured at least */
    public int minWindows = 1;
    /** iterations per timed window (windows tile the timed epochs) */
    public int window = 124;
    /**
     * stop after the first window that ends past this many seconds of training, once
     * {@link #minWindows} windows are in (0: no limit), so that a slow configuration still finishes
     * in bounded time; the output says how many epochs and iterations ran
     */
    public double maxSeconds = 0;
    /** jni mode: rounds of interleaved windows */
    public int rounds = 8;
    /** repetition number given by run.sh, copied into the output */
    public int rep = 0;
    public long seed = 12345L;
    public Path data = Paths.get("spark-example/src/main/resources/mnist10k");
    /** the LSTM rows (graves, lstm): characters per sequence (one fit() = a minibatch of sequences) */
    public int seqLength = 1000;
    /** the LSTM rows: one-hot vocabulary, units per recurrent layer, truncated BPTT length */
    public int vocab = 77;
    public int hidden = 200;
    public int tbptt = 50;
    /** the LSTM rows: distinct training minibatches, cycled (an "epoch" is one pass over them) */
    public int batches = 4;

    public static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--model": o.model = v; i++; break;
                case "--batch": o.batch = Integer.parseInt(v); i++; break;
                case "--epochs": o.epochs = Integer.parseInt(v); i++; break;
                case "--warmup-epochs": o.warmupEpochs = Integer.parseInt(v); i++; break;
                case "--window": o.window = Integer.parseInt(v); i++; break;
                case "--warmup-iters": o.warmupIters = Integer.parseInt(v); i++; break;
                case "--min-windows": o.minWindows = Integer.parseInt(v); i++; break;
                case "--max-seconds": o.maxSeconds = Double.parseDouble(v); i++; break;
                case "--rounds": o.rounds = Integer.parseInt(v); i++; break;
                case "--rep": o.rep = Integer.parseInt(v); i++; break;
                case "--seed": o.seed = Long.parseLong(v); i++; break;
                case "--data": o.data = Paths.get(v); i++; break;
                case "--seq-length": o.seqLength = Integer.parseInt(v); i++; break;
                case "--vocab": o.vocab = Integer.parseInt(v); i++; break;
                case "--hidden": o.hidden = Integer.parseInt(v); i++; break;
                case "--tbptt": o.tbptt = Integer.parseInt(v); i++; break;
                case "--batches": o.batches = Integer.parseInt(v); i++; break;
                default:
                    throw new IllegalArgumentException("unknown option " + a + " (options: --model mlp|cnn|rescnn|jni|graves|lstm "
                            + "--batch N --epochs N --warmup-epochs N --warmup-iters N --window ITERS --min-windows N "
                            + "--max-seconds S --rounds N --rep N "
                            + "--seed N --data DIR --seq-length N --vocab N --hidden N --tbptt N --batches N)");
            }
        }
        if (o.warmupIters < 0 && o.epochs <= o.warmupEpochs) {
            throw new IllegalArgumentException("--epochs must exceed --warmup-epochs");
        }
        return o;
    }
}
