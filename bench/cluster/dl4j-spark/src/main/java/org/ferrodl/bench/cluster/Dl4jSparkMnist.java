package org.ferrodl.bench.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.zip.GZIPInputStream;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.weights.WeightInit;
import org.deeplearning4j.spark.api.RDDTrainingApproach;
import org.deeplearning4j.spark.api.TrainingMaster;
import org.deeplearning4j.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.deeplearning4j.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.deeplearning4j.spark.parameterserver.training.SharedTrainingMaster;
import org.nd4j.evaluation.classification.Evaluation;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;
import org.nd4j.parameterserver.distributed.conf.VoidConfiguration;
import org.nd4j.parameterserver.distributed.v2.transport.impl.EnvironmentVarPortSupplier;

/**
 * The Deeplearning4j peer of ferrodl's MnistMlpExample for bench/cluster/run.sh: the same MLP
 * (784-500 ReLU, 500-100 ReLU, 100-10 softmax + MCXENT; Adam 1e-3, ReLU init, l2 1e-4, seed 12345), the
 * same digits (the four IDX .gz files), the same per-epoch reshuffle and minibatches of 32 built on
 * the driver, trained with SparkDl4jMultiLayer and a DL4J training master; after every epoch the test
 * accuracy is evaluated (outside the training clock) and printed as
 * {@code EPOCH n accuracy=a seconds=s eval_seconds=e}, s being the training time summed so far.
 *
 * <p>Usage: spark-submit ... dl4j-spark-bench.jar --master-kind paramavg|shared --data-dir DIR
 * [--epochs N] [--batch-size 32] [--averaging-frequency 5] [--workers 2] [--budget-seconds S]
 * [--stop-accuracy A] [--seed N] [--controller 127.0.0.1] [--port-env NAME] [--rdd-approach direct|export]
 * [--workers-per-node 1]
 *
 * <p>--rdd-approach: DL4J's default, Export, writes each epoch's minibatches to files on the default
 * Hadoop file system first; DL4J refuses it when that is the local file system and Spark is not in
 * local mode (a standalone cluster without HDFS, as here) and names Direct as the fix, so Direct is
 * this program's default.
 */
public final class Dl4jSparkMnist {
    static final int PIXELS = 784;
    static final int CLASSES = 10;

    private Dl4jSparkMnist() {
    }

    /** Digits from IDX files: pixels scaled to [0, 1] (as ferrodl's example), labels 0..9. */
    static final class Digits {
        final int count;
        final float[] pixels;
        final int[] labels;

        Digits(int count, float[] pixels, int[] labels) {
            this.count = count;
            this.pixels = pixels;
            this.labels = labels;
        }

        static Digits load(Path dir, String split) throws IOException {
            byte[] img = gunzip(dir.resolve(split + "-images-idx3-ubyte.gz"));
            byte[] lab = gunzip(dir.resolve(split + "-labels-idx1-ubyte.gz"));
            ByteBuffer ib = ByteBuffer.wrap(img); // IDX headers are big-endian, ByteBuffer's default
            ByteBuffer lb = ByteBuffer.wrap(lab);
            if (ib.getInt(0) != 2051 || lb.getInt(0) != 2049) {
                throw new IOException(split + ": not IDX image/label files (magic " + ib.getInt(0) + ", "
                        + lb.getInt(0) + ")");
            }
            int n = ib.getInt(4);
            if (ib.getInt(8) * ib.getInt(12) != PIXELS || lb.getInt(4) != n) {
                throw new IOException(split + ": expected 28x28 images with one label each");
            }
            float[] px = new float[n * PIXELS];
            for (int i = 0; i < px.length; i++) {
                px[i] = (img[16 + i] & 0xff) / 255.0f;
            }
            int[] y = new int[n];
            for (int i = 0; i < n; i++) {
                y[i] = lab[8 + i] & 0xff;
            }
            return new Digits(n, px, y);
        }

        private static byte[] gunzip(Path p) throws IOException {
            try (InputStream in = new GZIPInputStream(Files.newInputStream(p))) {
                return in.readAllBytes();
            }
        }

        /** a permutation of 0..count-1 from the seed (Fisher-Yates) */
        int[] order(long seed) {
            int[] o = new int[count];
            for (int i = 0; i < count; i++) {
                o[i] = i;
            }
            Random r = new Random(seed);
            for (int i = count - 1; i > 0; i--) {
                int j = r.nextInt(i + 1);
                int t = o[i];
                o[i] = o[j];
                o[j] = t;
            }
            return o;
        }

        List<DataSet> batches(int batch, int[] order) {
            List<DataSet> out = new ArrayList<>();
            for (int start = 0; start < count; start += batch) {
                int rows = Math.min(batch, count - start);
                float[] f = new float[rows * PIXELS];
                float[] l = new float[rows * CLASSES];
                for (int r = 0; r < rows; r++) {
                    int ex = order == null ? start + r : order[start + r];
                    System.arraycopy(pixels, ex * PIXELS, f, r * PIXELS, PIXELS);
                    l[r * CLASSES + labels[ex]] = 1f;
                }
                INDArray fa = Nd4j.create(f, new long[] {rows, PIXELS});
                INDArray la = Nd4j.create(l, new long[] {rows, CLASSES});
                out.add(new DataSet(fa, la));
            }
            return out;
        }
    }

    static final class Options {
        String masterKind = "paramavg";
        Path dataDir;
        int epochs = 20;
        int batchSize = 32;
        int averagingFrequency = 5;
        int workers = 2;
        double budgetSeconds = 300;
        double stopAccuracy = 0;
        long seed = 12345L;
        String controller = "127.0.0.1";
        String portEnv = "DL4J_BENCH_VOID_PORT";
        /** direct: the RDD's DataSets are fitted as they are; export (DL4J's default): written to files first */
        String rddApproach = "direct";
        /** SharedTrainingMaster workersPerNode: 1 for CPUs in DL4J's docs */
        int workersPerNode = 1;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i += 2) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(args[i] + " needs a value");
                }
                String v = args[i + 1];
                switch (args[i]) {
                    case "--master-kind": o.masterKind = v; break;
                    case "--data-dir": o.dataDir = Paths.get(v); break;
                    case "--epochs": o.epochs = Integer.parseInt(v); break;
                    case "--batch-size": o.batchSize = Integer.parseInt(v); break;
                    case "--averaging-frequency": o.averagingFrequency = Integer.parseInt(v); break;
                    case "--workers": o.workers = Integer.parseInt(v); break;
                    case "--budget-seconds": o.budgetSeconds = Double.parseDouble(v); break;
                    case "--stop-accuracy": o.stopAccuracy = Double.parseDouble(v); break;
                    case "--seed": o.seed = Long.parseLong(v); break;
                    case "--controller": o.controller = v; break;
                    case "--port-env": o.portEnv = v; break;
                    case "--rdd-approach": o.rddApproach = v; break;
                    case "--workers-per-node": o.workersPerNode = Integer.parseInt(v); break;
                    default: throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (o.dataDir == null) {
                throw new IllegalArgumentException("--data-dir is required");
            }
            if (!o.masterKind.equals("paramavg") && !o.masterKind.equals("shared")) {
                throw new IllegalArgumentException("--master-kind must be paramavg or shared");
            }
            if (!o.rddApproach.equals("direct") && !o.rddApproach.equals("export")) {
                throw new IllegalArgumentException("--rdd-approach must be direct or export");
            }
            return o;
        }

        RDDTrainingApproach approach() {
            return rddApproach.equals("export") ? RDDTrainingApproach.Export : RDDTrainingApproach.Direct;
        }
    }

    static MultiLayerConfiguration network(long seed) {
        return new NeuralNetConfiguration.Builder()
                .seed(seed)
                .updater(new Adam(1e-3))
                .weightInit(WeightInit.RELU)
                .l2(1e-4)
                .list()
                .layer(new DenseLayer.Builder().nIn(PIXELS).nOut(500).activation(Activation.RELU).build())
                .layer(new DenseLayer.Builder().nIn(500).nOut(100).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(100).nOut(CLASSES)
                        .activation(Activation.SOFTMAX).build())
                .build();
    }

    static TrainingMaster<?, ?> trainingMaster(Options o) {
        if (o.masterKind.equals("paramavg")) {
            // DL4J's documented setup: examples per RDD DataSet object = the worker minibatch,
            // averaging every 5-10 minibatches, prefetch 2
            return new ParameterAveragingTrainingMaster.Builder(o.batchSize)
                    .batchSizePerWorker(o.batchSize)
                    .averagingFrequency(o.averagingFrequency)
                    .workerPrefetchNumBatches(2)
                    .rddTrainingApproach(o.approach())
                    .rngSeed(o.seed)
                    .build();
        }
        // Gradient sharing over DL4J's Aeron UDP transport. The driver (controller) and each
        // executor bind their own UDP port; all of them are on 127.0.0.1 here, so every process
        // reads its port from an environment variable (DL4J's EnvironmentVarPortSupplier) that
        // run.sh sets differently for the driver and for each Spark worker.
        VoidConfiguration voidConf = VoidConfiguration.builder()
                .controllerAddress(o.controller)
                .portSupplier(new EnvironmentVarPortSupplier(o.portEnv))
                .build();
        // default threshold algorithm (AdaptiveThresholdAlgorithm); workersPerNode 1 for CPUs (DL4J docs)
        // unless --workers-per-node says otherwise
        return new SharedTrainingMaster.Builder(voidConf, o.batchSize)
                .batchSizePerWorker(o.batchSize)
                .workersPerNode(o.workersPerNode)
                .workerPrefetchNumBatches(2)
                .rddTrainingApproach(o.approach())
                .rngSeed(o.seed)
                .build();
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        Digits train = Digits.load(o.dataDir, "train");
        Digits test = Digits.load(o.dataDir, "test");

        SparkConf conf = new SparkConf();
        conf.setIfMissing("spark.app.name", "dl4j MNIST MLP " + o.masterKind);
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            sc.setLogLevel("WARN");
            TrainingMaster<?, ?> tm = trainingMaster(o);
            SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, network(o.seed), tm);
            System.out.printf(Locale.ROOT, "DL4J MNIST MLP 784-500-100-10: master=%s training-master=%s workers=%d "
                            + "batch-size=%d averaging-frequency=%d rdd-approach=%s workers-per-node=%d epochs<=%d budget=%.0fs train=%d "
                            + "test=%d nd4j-backend=%s%n",
                    sc.master(), o.masterKind, o.workers, o.batchSize, o.averagingFrequency, o.rddApproach, o.workersPerNode, o.epochs,
                    o.budgetSeconds, train.count, test.count, Nd4j.getBackend().getClass().getName());
            System.out.println("TRAINING_MASTER " + tm.getClass().getName());

            JavaRDD<DataSet> testRdd = sc.parallelize(test.batches(256, null), o.workers);
            double trainSeconds = 0;
            double best = 0;
            for (int epoch = 1; epoch <= o.epochs; epoch++) {
                // timed as in ferrodl's example: the epoch's shuffle and minibatches, then the fit
                long t0 = System.nanoTime();
                List<DataSet> batches = train.batches(o.batchSize, train.order(o.seed + epoch));
                JavaRDD<DataSet> rdd = sc.parallelize(batches, o.workers);
                net.fit(rdd);
                double epochSeconds = (System.nanoTime() - t0) / 1e9;
                trainSeconds += epochSeconds;
                long e0 = System.nanoTime();
                Evaluation eval = net.evaluate(testRdd);
                double evalSeconds = (System.nanoTime() - e0) / 1e9;
                double acc = eval.accuracy();
                best = Math.max(best, acc);
                System.out.printf(Locale.ROOT, "EPOCH %d accuracy=%.4f seconds=%.2f eval_seconds=%.2f score=%.5f%n",
                        epoch, acc, trainSeconds, evalSeconds, net.getScore());
                System.out.flush();
                if (o.stopAccuracy > 0 && acc >= o.stopAccuracy) {
                    break;
                }
                if (trainSeconds + epochSeconds > o.budgetSeconds) {
                    System.out.printf(Locale.ROOT, "STOP another epoch would end past the budget of %.0f s%n",
                            o.budgetSeconds);
                    break;
                }
            }
            System.out.printf(Locale.ROOT, "FINAL best_accuracy=%.4f seconds=%.2f%n", best, trainSeconds);
            tm.deleteTempFiles(sc); // the exported minibatch files (DL4J's default RDD training approach)
        }
        // the gradient-sharing transport (Aeron) keeps non-daemon threads alive
        System.exit(0);
    }
}
