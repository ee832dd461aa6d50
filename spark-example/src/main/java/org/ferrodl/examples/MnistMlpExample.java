package org.ferrodl.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.schedule.ExponentialSchedule;
import org.ferrodl.linalg.schedule.ISchedule;
import org.ferrodl.linalg.schedule.ScheduleType;
import org.ferrodl.linalg.lossfunctions.LossFunctions;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.TargetSparsityThresholdAlgorithm;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TimeBreakdown;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;

/**
 * MNIST on Spark with ferrodl: an MLP 784-500-100-10 trained with {@link SparkDl4jMultiLayer} and
 * {@link ParameterAveragingTrainingMaster}, evaluated on the held-out digits.
 *
 * <p>Run it with {@code spark-submit --master spark://host:7077 ferrodl-spark-example-<v>.jar --workers 2},
 * or without any Spark installation through {@code make example} (an embedded {@code local[*]} Spark).
 * Output on stdout: one line per epoch, then the parseable
 * {@code FINAL test_accuracy=... train_examples=... epochs=... seconds=...}.
 */
public final class MnistMlpExample {
    static final int EXIT_USAGE = 2;
    static final int EXIT_FAILURE = 1;
    /** examples per DataSet of the test RDD (evaluation only; independent of the training batch size) */
    static final int EVAL_BATCH = 256;
    static final double L2 = 1e-4;

    private MnistMlpExample() {
    }

    public static void main(String[] args) {
        int status = run(args, System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /** Everything main does, with the exit status returned instead of exiting (testable). */
    static int run(String[] args, PrintStream out, PrintStream err) {
        ExampleOptions opts;
        try {
            opts = ExampleOptions.parse(args);
        } catch (ExampleOptions.UsageException e) {
            err.println("MnistMlpExample: error: " + e.getMessage());
            return EXIT_USAGE;
        }
        if (opts.help) {
            out.println(ExampleOptions.usage());
            return 0;
        }
        try {
            train(opts, out);
            return 0;
        } catch (IOException e) {
            err.println("MnistMlpExample: error: " + e.getMessage());
            return EXIT_FAILURE;
        } catch (RuntimeException e) {
            err.println("MnistMlpExample: error: " + e);
            e.printStackTrace(err);
            return EXIT_FAILURE;
        }
    }

    /** The network of this example, trained with Adam. */
    static MultiLayerConfiguration networkConfiguration(double learningRate, long seed) {
        return networkConfiguration("adam", learningRate, 1.0, seed);
    }

    /**
     * The network of this example with updater "adam" or "nesterovs" (momentum 0.9), its learning
     * rate multiplied by {@code lrDecay} per epoch when {@code lrDecay < 1}.
     */
    static MultiLayerConfiguration networkConfiguration(String updater, double learningRate, double lrDecay,
                                                        long seed) {
        ISchedule schedule = lrDecay < 1 ? new ExponentialSchedule(ScheduleType.EPOCH, learningRate, lrDecay) : null;
        IUpdater u = switch (updater) {
            case "adam" -> schedule == null ? new Adam(learningRate)
                    : new Adam(schedule, Adam.DEFAULT_ADAM_BETA1_MEAN_DECAY, Adam.DEFAULT_ADAM_BETA2_VAR_DECAY,
                            Adam.DEFAULT_ADAM_EPSILON);
            // SGD's updates keep the gradients' spread of magnitudes, which is what threshold
            // encoding selects on; Adam normalises every entry to about the learning rate.
            case "nesterovs" -> schedule == null
                    ? new Nesterovs(learningRate, Nesterovs.DEFAULT_NESTEROV_MOMENTUM)
                    : new Nesterovs(schedule, Nesterovs.DEFAULT_NESTEROV_MOMENTUM);
            default -> throw new IllegalArgumentException("updater " + updater);
        };
        return new NeuralNetConfiguration.Builder()
                .seed(seed)
                .updater(u)
                .weightInit(WeightInit.RELU)
                .l2(L2)
                .list()
                .layer(new DenseLayer.Builder().nIn(MnistData.PIXELS).nOut(500)
                        .activation(Activation.RELU).build())
                .layer(new DenseLayer.Builder().nIn(500).nOut(100)
                        .activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(100)
                        .nOut(MnistData.NUM_CLASSES).activation(Activation.SOFTMAX).build())
                .build();
    }

    /**
     * Spark configuration: --master wins, then what spark-submit set, then an embedded local[*];
     * the console level likewise (--log-level, spark.log.level, WARN).
     */
    static SparkConf sparkConf(ExampleOptions opts) {
        return sparkConf(opts.master, opts.logLevel, "ferrodl MNIST MLP example");
    }

    /**
     * The examples' Spark configuration: {@code master} (null: what spark-submit set, else an
     * embedded local[*]), the driver's console level {@code logLevel} (null: spark.log.level, else
     * WARN), {@code appName} unless set, and no web UI unless asked for.
     */
    static SparkConf sparkConf(String master, String logLevel, String appName) {
        SparkConf conf = new SparkConf();
        if (master != null) {
            conf.setMaster(master);
        } else if (!conf.contains("spark.master")) {
            conf.setMaster("local[*]");
        }
        // the driver's console at WARN unless asked otherwise (--log-level, or spark.log.level from
        // spark-submit --conf); set before the context starts, so its start-up INFO lines stay quiet
        // too. Executors keep their own logging (in their stderr files, not on this console).
        if (logLevel != null) {
            conf.set("spark.log.level", logLevel);
        } else {
            conf.setIfMissing("spark.log.level", "WARN");
        }
        conf.setIfMissing("spark.app.name", appName);
        conf.setIfMissing("spark.ui.enabled", "false");
        return conf;
    }

    static void train(ExampleOptions opts, PrintStream out) throws IOException {
        // read the data before starting Spark, so that bad files fail fast and clearly
        MnistData train = MnistData.load(opts.dataDir, "train");
        MnistData test = MnistData.load(opts.dataDir, "test");
        if (opts.saveData != null) {
            saveData(train.toDataSets(opts.batchSize, train.shuffledOrder(opts.seed)), opts.saveData, out);
            return;
        }

        SparkConf conf = sparkConf(opts);
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            if (opts.logLevel == null && "WARN".equals(conf.get("spark.log.level"))) {
                // This example builds its minibatches on the driver and parallelizes them, so the
                // tasks that first compute its training RDD carry their share of the digits and Spark
                // warns about each one ("task of very large size"); at the default level those
                // warnings only bury the epoch lines.
                org.apache.logging.log4j.core.config.Configurator.setLevel(
                        "org.apache.spark.scheduler.TaskSetManager", org.apache.logging.log4j.Level.ERROR);
            }
            int workers = opts.workers > 0 ? opts.workers : Math.max(1, sc.defaultParallelism());
            out.printf(Locale.ROOT, "ferrodl MNIST MLP 784-500-100-10: master=%s workers=%d batch-size=%d "
                            + "averaging-frequency=%d epochs=%d updater=%s learning-rate=%s lr-decay=%s seed=%d "
                            + "training-master=%s sparsity-target=%s train=%d test=%d data=%s%n",
                    sc.master(), workers, opts.batchSize, opts.averagingFrequency, opts.epochs, opts.updater,
                    opts.learningRate, opts.lrDecay, opts.seed, opts.trainingMaster,
                    opts.sparsityTarget > 0 ? String.valueOf(opts.sparsityTarget) : "adaptive",
                    train.count, test.count,
                    opts.dataDir == null ? "jar:" + MnistData.RESOURCE_DIR : opts.dataDir);

            TrainingMaster tm = trainingMaster(opts, workers);
            SparkDl4jMultiLayer sparkNet = new SparkDl4jMultiLayer(sc,
                    networkConfiguration(opts.updater, opts.learningRate, opts.lrDecay, opts.seed), tm);

            SharingTotals sharing = new SharingTotals();
            TimeBreakdown lastBreakdown = null;
            long t0 = System.nanoTime();
            // The minibatches are built on the driver once, distributed once and kept in the
            // executors' memory, and every epoch fits that RDD, as the reference's examples do: a
            // new RDD per epoch would send every digit to the executors again and be written to
            // files by the masters' Export approach (a third to a half of each epoch, BENCHMARKS.md).
            JavaRDD<DataSet> trainRdd = opts.trainDir != null ? null
                    : sc.parallelize(train.toDataSets(opts.batchSize, train.shuffledOrder(opts.seed)), workers)
                            .persist(StorageLevel.MEMORY_ONLY());
            for (int epoch = 1; epoch <= opts.epochs; epoch++) {
                long e0 = System.nanoTime();
                if (opts.trainDir != null) {
                    // the reference's production workflow: minibatches saved once, read by the workers
                    sparkNet.fit(opts.trainDir);
                } else {
                    sparkNet.fit(trainRdd);
                }
                double secs = (System.nanoTime() - e0) / 1e9;
                double eta = (System.nanoTime() - t0) / 1e9 / epoch * (opts.epochs - epoch);
                out.printf(Locale.ROOT, "epoch %d/%d score=%.5f examples/s=%.0f seconds=%.2f eta=%s%n",
                        epoch, opts.epochs, sparkNet.getScore(), train.count / secs, secs, duration(eta));
                if (tm instanceof SharedTrainingMaster) {
                    sharing.add(tm.getTrainingStats());
                }
                SparkTrainingStats stats = tm.getTrainingStats();
                if (stats != null && stats.getTimeBreakdown() != null) {
                    lastBreakdown = stats.getTimeBreakdown();
                }
                out.flush();
            }

            JavaRDD<DataSet> testRdd = sc.parallelize(test.toDataSets(EVAL_BATCH, null), workers);
            Evaluation eval = sparkNet.evaluate(testRdd);
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (tm instanceof SharedTrainingMaster) {
                out.println(sharing.summary());
            }
            if (lastBreakdown != null) {
                // where the last epoch's time went, per worker iteration (SparkTrainingStats)
                out.print("TIME " + lastBreakdown.format().replace("\n  ", "\nTIME   "));
            }
            out.printf(Locale.ROOT, "FINAL test_accuracy=%.4f train_examples=%d epochs=%d seconds=%.1f%n",
                    eval.accuracy(), train.count, opts.epochs, seconds);
            out.flush();
        }
    }

    /**
     * Writes {@code batches} as DataSet files {@code mnist-train-00000.bin}, ... into {@code dir}
     * through Hadoop's FileSystem (so {@code hdfs://} works), for {@code --train-dir}.
     */
    static void saveData(List<DataSet> batches, String dir, PrintStream out) throws IOException {
        org.apache.hadoop.fs.Path folder = new org.apache.hadoop.fs.Path(dir);
        org.apache.hadoop.fs.FileSystem fs = folder.getFileSystem(new org.apache.hadoop.conf.Configuration());
        fs.mkdirs(folder);
        for (int i = 0; i < batches.size(); i++) {
            org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(folder,
                    String.format(Locale.ROOT, "mnist-train-%05d.bin", i));
            try (java.io.OutputStream o = fs.create(file, true)) {
                batches.get(i).save(o);
            }
        }
        out.printf(Locale.ROOT, "SAVED %d DataSet files to %s%n", batches.size(), fs.makeQualified(folder));
        out.flush();
    }

    /** {@code 45s}, {@code 3m07s}, {@code 1h02m}: a remaining time for the epoch lines. */
    static String duration(double seconds) {
        long s = Math.round(seconds);
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%dh%02dm", s / 3600, s % 3600 / 60);
    }

    static TrainingMaster trainingMaster(ExampleOptions opts, int workers) {
        switch (opts.trainingMaster) {
            case "paramavg":
                return new ParameterAveragingTrainingMaster.Builder(workers, opts.batchSize)
                        .batchSizePerWorker(opts.batchSize)
                        .averagingFrequency(opts.averagingFrequency)
                        .workerPrefetchNumBatches(2)
                        .aggregationDepth(2)
                        .saveUpdater(true)
                        .rngSeed(opts.seed)
                        .collectTrainingStats(true)
                        .build();
            case "shared":
                return new SharedTrainingMaster.Builder(opts.batchSize)
                        .thresholdAlgorithm(opts.sparsityTarget > 0
                                // starts near where this network's thresholds settle, so the first
                                // steps are not sent as dense bitmaps while the threshold climbs
                                ? new TargetSparsityThresholdAlgorithm(opts.initialThreshold, opts.sparsityTarget,
                                        TargetSparsityThresholdAlgorithm.DEFAULT_DECAY_RATE)
                                : new AdaptiveThresholdAlgorithm())
                        .batchSizePerWorker(opts.batchSize)
                        .workersPerNode(1)
                        .workerPrefetchNumBatches(2)
                        .rngSeed(opts.seed)
                        .collectTrainingStats(true)
                        .build();
            default:
                // ExampleOptions.parse only lets known names through
                throw new IllegalStateException("training master " + opts.trainingMaster);
        }
    }

    /** Wire statistics of gradient sharing summed over the epochs (each epoch is one fit). */
    static final class SharingTotals {
        long bytes;
        long iterations;
        long parameters;
        long workerTasks;
        long reattempts;
        long reconnects;
        long aborted;
        long rejected;
        long dropped;

        void add(SparkTrainingStats stats) {
            if (stats == null) {
                return;
            }
            parameters = stats.getParameterCount();
            for (SparkTrainingStats.SharingWorkerStats w : stats.getSharingWorkerStats()) {
                bytes += w.bytesSent();
                iterations += w.minibatches();
                workerTasks++;
                if (w.attempt() > 0) {
                    reattempts++;
                }
            }
            try {
                com.fasterxml.jackson.databind.JsonNode relay =
                        new com.fasterxml.jackson.databind.ObjectMapper().readTree(stats.getRelayStatsJson());
                reconnects += relay.path("reconnects").asLong();
                aborted += relay.path("connectionsAborted").asLong();
                rejected += relay.path("connectionsRejected").asLong();
                dropped += relay.path("messagesDropped").asLong();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("relay statistics are not JSON", e);
            }
        }

        String summary() {
            double perIteration = iterations == 0 ? Double.NaN : (double) bytes / iterations;
            long dense = 4L * parameters;
            return String.format(Locale.ROOT, "SHARING bytes_per_worker_iteration=%.1f dense_fp32_bytes=%d "
                            + "ratio=%.6f worker_iterations=%d worker_tasks=%d reattempted_tasks=%d reconnects=%d "
                            + "aborted_connections=%d rejected_connections=%d dropped_messages=%d",
                    perIteration, dense, perIteration / dense, iterations, workerTasks, reattempts, reconnects,
                    aborted, rejected, dropped);
        }
    }
}
