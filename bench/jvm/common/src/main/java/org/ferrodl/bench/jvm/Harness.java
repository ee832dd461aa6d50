package org.ferrodl.bench.jvm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The measurement protocol, identical for every system: the training minibatches in one fixed
 * order (the same every epoch); untimed warm-up iterations ({@code warmupEpochs} epochs, or
 * {@code warmupIters} iterations), then windows of {@code window} iterations, each {@code fit} call
 * timed with {@link System#nanoTime()} (the window's time is the sum), until {@code epochs} epochs
 * are done or, with {@code maxSeconds}, the first window that ends past that much time once
 * {@code minWindows} windows are in. One JSON line per window and one memory line per epoch; at the
 * end a summary line with the test accuracy (a check that the system really trained) and the share
 * of the updater state that is subnormal (Adam's moments can decay into subnormal floats once the
 * training set is fitted, and arithmetic on them is slow on x86).
 */
public final class Harness {
    /** What a system must provide. */
    public interface Trainer {
        /** one training iteration on training minibatch {@code i} */
        void fit(int i);

        /** class probabilities of test minibatch {@code i}, row-major {@code rows x 10} */
        float[] output(int i);

        /** the last minibatch's score as the system reports it */
        double score();

        /** the updater's state (Adam's moments) as floats, or null when the system cannot give it */
        float[] updaterState();
    }

    /** Share of {@code v} that is subnormal (nonzero, smaller in magnitude than Float.MIN_NORMAL). */
    public static double subnormalShare(float[] v) {
        if (v == null || v.length == 0) {
            return Double.NaN;
        }
        long n = 0;
        for (float x : v) {
            if (x != 0 && Math.abs(x) < Float.MIN_NORMAL) {
                n++;
            }
        }
        return n / (double) v.length;
    }

    private Harness() {
    }

    public static void run(String system, Options o, Mnist.Batches train, Mnist.Batches test, Trainer t) {
        run(system, o, train.size(), train::rows, t, () -> {
            int correct = 0;
            int total = 0;
            for (int i = 0; i < test.size(); i++) {
                float[] p = t.output(i);
                int rows = test.rows(i);
                for (int r = 0; r < rows; r++) {
                    int best = 0;
                    for (int c = 1; c < Mnist.CLASSES; c++) {
                        if (p[r * Mnist.CLASSES + c] > p[r * Mnist.CLASSES + best]) {
                            best = c;
                        }
                    }
                    if (best == test.classes[total]) {
                        correct++;
                    }
                    total++;
                }
            }
            return correct / (double) total;
        });
    }

    /**
     * The protocol over {@code nb} training minibatches of {@code examples.applyAsInt(i)} examples
     * each (the LSTM rows count characters); {@code testAccuracy} runs after training.
     */
    public static void run(String system, Options o, int nb, java.util.function.IntUnaryOperator examples,
            Trainer t, java.util.function.DoubleSupplier testAccuracy) {
        int warmupIters = o.warmupIters >= 0 ? o.warmupIters : o.warmupEpochs * nb;
        List<Double> rates = new ArrayList<>();
        long examplesInWindow = 0;
        int itersInWindow = 0;
        long windowNanos = 0;
        int window = 0;
        int epochsRun = 0;
        int iteration = 0;
        boolean stop = false;
        long start = System.nanoTime();
        for (int epoch = 1; epoch <= o.epochs && !stop; epoch++) {
            long e0 = System.nanoTime();
            int i = 0;
            for (; i < nb && !stop; i++) {
                boolean timed = iteration++ >= warmupIters;
                long s = System.nanoTime();
                t.fit(i);
                long d = System.nanoTime() - s;
                if (!timed) {
                    continue;
                }
                windowNanos += d;
                examplesInWindow += examples.applyAsInt(i);
                if (++itersInWindow == o.window) {
                    double rate = examplesInWindow / (windowNanos / 1e9);
                    rates.add(rate);
                    Json.of("window").put("system", system).put("model", o.model).put("batch", o.batch)
                            .put("rep", o.rep).put("epoch", epoch).put("window", window++)
                            .put("iterations", itersInWindow).put("seconds", windowNanos / 1e9)
                            .put("examples_per_sec", rate).emit();
                    itersInWindow = 0;
                    examplesInWindow = 0;
                    windowNanos = 0;
                    stop = o.maxSeconds > 0 && rates.size() >= o.minWindows
                            && (System.nanoTime() - start) / 1e9 > o.maxSeconds;
                }
            }
            Json.of("memory").put("system", system).put("model", o.model).put("batch", o.batch)
                    .put("rep", o.rep).put("epoch", epoch).put("complete_epoch", i == nb)
                    .put("epoch_seconds", (System.nanoTime() - e0) / 1e9)
                    .put("score", t.score()).putAll(ProcStatus.memoryKb()).emit();
            epochsRun = epoch;
        }
        // read once, after the last memory reading: the copy of the state is garbage the memory
        // readings should not see
        double subnormal = subnormalShare(t.updaterState());
        double accuracy = testAccuracy.getAsDouble();
        Json.of("run").put("system", system).put("model", o.model).put("batch", o.batch).put("rep", o.rep)
                .put("epochs", epochsRun).put("epochs_asked", o.epochs).put("iterations", iteration)
                .put("warmup_iterations", warmupIters)
                .put("window", o.window).put("max_seconds", o.maxSeconds)
                .put("windows", rates.size()).put("examples_per_sec", median(rates))
                .put("examples_per_sec_min", Collections.min(rates))
                .put("examples_per_sec_max", Collections.max(rates))
                .put("final_score", t.score()).put("test_accuracy", accuracy)
                .put("updater_state_subnormal_share", subnormal)
                .putAll(ProcStatus.memoryKb()).emit();
    }

    public static double median(List<Double> v) {
        List<Double> s = new ArrayList<>(v);
        Collections.sort(s);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    /** A JSON object of the JVM's identity, for the info line. */
    public static Json info(String system, Options o) {
        return Json.of("info").put("system", system).put("model", o.model).put("batch", o.batch).put("rep", o.rep)
                .put("java_version", System.getProperty("java.version"))
                .put("java_vm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"))
                .put("available_processors", Runtime.getRuntime().availableProcessors())
                .put("max_heap_MB", Runtime.getRuntime().maxMemory() >> 20)
                .put("OMP_NUM_THREADS", String.valueOf(System.getenv("OMP_NUM_THREADS")));
    }
}
