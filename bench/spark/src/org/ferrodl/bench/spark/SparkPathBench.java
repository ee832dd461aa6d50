package org.ferrodl.bench.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.examples.MnistData;
import org.ferrodl.jni.NativeInfo;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.TargetSparsityThresholdAlgorithm;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TimeBreakdown;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;

/**
 * The Spark-path benchmark of issue 15 (`make bench BENCH_PARTS=spark`, bench/spark/run.sh): in one
 * application, examples/s of {@code SparkDl4jMultiLayer.fit} on a cached training RDD against local
 * {@code MultiLayerNetwork.fit} on the same minibatches, same network (MLP 784-500-100-10, ReLU,
 * softmax + MCXENT, Adam 1e-3, seed 12345) and data (the example's mnist10k training digits, one
 * fixed shuffle).
 *
 * <p>Configurations (every one its own network): {@code local-B} — local fit on all cores of this
 * JVM ({@code NativeInfo.setNumThreads(cores)} before every epoch, because Spark tasks in the same
 * JVM set the engine's process-wide thread count to their task's cores); {@code paramavg-B} —
 * ParameterAveragingTrainingMaster, batchSizePerWorker B, averagingFrequency 10, prefetch 2, rngSeed
 * (the example's settings); {@code shared-B} — SharedTrainingMaster, batchSizePerWorker B, one
 * replica per task, prefetch 2, adaptive threshold (defaults), rngSeed. Both masters run with their
 * default training approach (Export) on an RDD of B-example DataSets, one partition per worker,
 * persisted MEMORY_ONLY and materialised before the clock starts, as a user who caches does;
 * {@code paramavgfresh-B} and {@code sharedfresh-B} — the same masters on a new RDD of the same
 * minibatches parallelized inside every timed epoch and never persisted, as {@code make example}
 * does: the Export approach then writes every minibatch to a file in every epoch (throughput only,
 * not in the time-to-accuracy runs).
 *
 * <p>Protocol: one untimed warm-up epoch per configuration, then {@code --rounds} rounds; a round
 * runs one epoch of every configuration, the order rotating from round to round, each epoch timed
 * as a whole with System.nanoTime (a Spark fit: the whole {@code fit(rdd)} call). Every epoch prints
 * one line {@code BENCH {json}}; at the end every configuration's test accuracy (2,004 held-out
 * digits) after its 1 + rounds epochs, and, when {@code --breakdown} is given, one extra epoch per
 * Spark configuration with training statistics on, its per-phase times as {@code BREAKDOWN {json}}.
 */
public final class SparkPathBench {
    private static final long SEED = 12345;
    private static final int AVERAGING_FREQUENCY = 10;

    private SparkPathBench() {
    }

    public static void main(String[] args) throws IOException {
        int rounds = 5;
        List<String> configs = List.of("local-32", "local-16", "paramavg-32", "shared-16", "shared-32");
        boolean breakdown = false;
        int ttaEpochs = 0;
        double ttaTarget = 0.95;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--configs" -> configs = List.of(args[++i].split(","));
                case "--breakdown" -> breakdown = true;
                case "--tta" -> ttaEpochs = Integer.parseInt(args[++i]);
                case "--tta-target" -> ttaTarget = Double.parseDouble(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (known: --rounds N, --configs a,b,..., --breakdown, --tta MAX_EPOCHS, --tta-target ACC)");
            }
        }
        MnistData train = MnistData.load(null, "train");
        MnistData test = MnistData.load(null, "test");
        int[] order = train.shuffledOrder(SEED);

        SparkConf conf = new SparkConf();
        conf.setIfMissing("spark.master", "local[2]");
        conf.setIfMissing("spark.app.name", "ferrodl Spark-path benchmark");
        conf.setIfMissing("spark.ui.enabled", "false");
        conf.setIfMissing("spark.log.level", "WARN");
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            org.apache.logging.log4j.core.config.Configurator.setLevel(
                    "org.apache.spark.scheduler.TaskSetManager", org.apache.logging.log4j.Level.ERROR);
            int workers = sc.defaultParallelism();
            int cores = Runtime.getRuntime().availableProcessors();
            info("start", Map.of("master", sc.master(), "workers", workers, "driver_cores", cores,
                    "spark_version", sc.version(), "rounds", rounds, "configs", String.join(",", configs),
                    "train_examples", train.count, "native_build", NativeInfo.buildInfo()));

            Map<String, Runner> runners = new LinkedHashMap<>();
            Map<Integer, List<DataSet>> batchesBySize = new LinkedHashMap<>();
            Map<Integer, JavaRDD<DataSet>> rddBySize = new LinkedHashMap<>();
            for (String c : configs) {
                String[] kv = c.split("-");
                int batch = Integer.parseInt(kv[1]);
                List<DataSet> batches = batchesBySize.computeIfAbsent(batch, b -> train.toDataSets(b, order));
                switch (kv[0]) {
                    case "local" -> runners.put(c, new LocalRunner(batches, cores));
                    case "paramavgfresh", "sharedfresh" -> runners.put(c, new SparkRunner(sc,
                            () -> sc.parallelize(batches, workers),
                            master(kv[0].substring(0, kv[0].length() - "fresh".length()), batch, workers)));
                    case "paramavg", "shared", "sharedts" -> {
                        JavaRDD<DataSet> rdd = rddBySize.computeIfAbsent(batch, b -> {
                            JavaRDD<DataSet> r = sc.parallelize(batches, workers).persist(StorageLevel.MEMORY_ONLY());
                            r.count();
                            return r;
                        });
                        runners.put(c, new SparkRunner(sc, () -> rdd, master(kv[0], batch, workers)));
                    }
                    default -> throw new IllegalArgumentException("configuration " + c
                            + ": expected local-B, paramavg-B, shared-B, sharedts-B, paramavgfresh-B or sharedfresh-B");
                }
            }
            for (Map.Entry<String, Runner> e : runners.entrySet()) {
                long t = System.nanoTime();
                e.getValue().epoch();
                emit("BENCH", e.getKey(), "warmup", 0, train.count, System.nanoTime() - t);
            }
            List<String> names = new ArrayList<>(runners.keySet());
            for (int r = 1; r <= rounds; r++) {
                for (int k = 0; k < names.size(); k++) {
                    String name = names.get((k + r - 1) % names.size());
                    double[] load = loadAverage();
                    long t = System.nanoTime();
                    runners.get(name).epoch();
                    long nanos = System.nanoTime() - t;
                    emit("BENCH", name, "timed", r, train.count, nanos, load);
                }
            }
            for (Map.Entry<String, Runner> e : runners.entrySet()) {
                info("accuracy", Map.of("config", e.getKey(), "epochs", rounds + 1,
                        "test_accuracy", accuracy(e.getValue().network(), test)));
            }
            if (breakdown) {
                for (Map.Entry<String, Runner> e : runners.entrySet()) {
                    if (e.getValue() instanceof SparkRunner s) {
                        s.breakdown(e.getKey(), train.count);
                    }
                }
            }
            if (ttaEpochs > 0) {
                timeToAccuracy(sc, configs, workers, cores, batchesBySize, rddBySize, test, ttaEpochs, ttaTarget);
            }
        }
    }

    /**
     * Time to accuracy: every configuration from a fresh network, one epoch at a time until its test
     * accuracy reaches the target (evaluation off the clock, JVM start excluded). The configurations'
     * epochs interleave (epoch k of each, in an order rotating with k), as the throughput rounds do,
     * so that a swing of the host's speed falls on all of them alike rather than on whichever
     * configuration ran in that minute.
     */
    static void timeToAccuracy(JavaSparkContext sc, List<String> configs, int workers, int cores,
            Map<Integer, List<DataSet>> batchesBySize, Map<Integer, JavaRDD<DataSet>> rddBySize, MnistData test,
            int ttaEpochs, double ttaTarget) {
        Map<String, Runner> runners = new LinkedHashMap<>();
        Map<String, TrainingMaster> masters = new LinkedHashMap<>();
        Map<String, Double> seconds = new LinkedHashMap<>();
        List<String> cached = configs.stream().filter(c -> !c.split("-")[0].endsWith("fresh")).toList();
        for (String c : cached) {
            String[] kv = c.split("-");
            int batch = Integer.parseInt(kv[1]);
            TrainingMaster tm = kv[0].equals("local") ? null : master(kv[0], batch, workers);
            if (tm != null && kv[0].startsWith("shared")) {
                tm.setCollectTrainingStats(true); // its wire bytes per worker iteration
            }
            runners.put(c, tm == null ? new LocalRunner(batchesBySize.get(batch), cores)
                    : new SparkRunner(sc, () -> rddBySize.get(batch), tm));
            masters.put(c, tm);
            seconds.put(c, 0.0);
        }
        List<String> pending = new ArrayList<>(cached);
        for (int epoch = 1; epoch <= ttaEpochs && !pending.isEmpty(); epoch++) {
            List<String> order = new ArrayList<>(pending);
            java.util.Collections.rotate(order, -((epoch - 1) % order.size()));
            for (String c : order) {
                Runner runner = runners.get(c);
                TrainingMaster tm = masters.get(c);
                long t = System.nanoTime();
                runner.epoch();
                double total = seconds.merge(c, (System.nanoTime() - t) / 1e9, Double::sum);
                double acc = accuracy(runner.network(), test);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("config", c);
                m.put("epoch", epoch);
                m.put("fit_seconds", total);
                m.put("test_accuracy", acc);
                m.put("load", loadAverage()[0]);
                if (tm != null && tm.getTrainingStats() != null
                        && !tm.getTrainingStats().getSharingWorkerStats().isEmpty()) {
                    m.put("bytes_per_worker_iteration", tm.getTrainingStats().getMeanBytesPerWorkerIteration());
                    m.put("parameters", runner.network().numParams());
                    m.put("thresholds", thresholdSummary(tm.getTrainingStats()));
                }
                System.out.println("TTA " + json(m));
                System.out.flush();
                if (acc >= ttaTarget) {
                    pending.remove(c);
                }
            }
        }
    }

    /**
     * Gradient sharing's thresholds in one fit (goal 3's wire bytes follow them): per worker, the
     * first and last step's threshold, the mean sparsity, and the steps below 1e-4 / above 1e-2
     * (where the default adaptive threshold moves), with the first eight of the former.
     */
    static String thresholdSummary(SparkTrainingStats stats) {
        StringBuilder sb = new StringBuilder();
        for (SparkTrainingStats.SharingWorkerStats w : stats.getSharingWorkerStats()) {
            for (List<SparkTrainingStats.EncodingStep> steps : w.replicaSteps()) {
                if (steps.isEmpty()) {
                    continue;
                }
                double sum = 0;
                int low = 0;
                int high = 0;
                StringBuilder lowAt = new StringBuilder();
                for (int i = 0; i < steps.size(); i++) {
                    SparkTrainingStats.EncodingStep st = steps.get(i);
                    sum += st.sparsity();
                    if (st.sparsity() < 1e-4) {
                        low++;
                        if (low <= 8) {
                            lowAt.append(low == 1 ? "" : ",").append(i);
                        }
                    }
                    high += st.sparsity() > 1e-2 ? 1 : 0;
                }
                sb.append(String.format(Locale.ROOT, "%st %.3g->%.3g s %.2e (<1e-4: %d at steps %s, >1e-2: %d, of %d)",
                        sb.length() == 0 ? "" : "; ", steps.get(0).threshold(),
                        steps.get(steps.size() - 1).threshold(), sum / steps.size(), low, lowAt, high, steps.size()));
            }
        }
        return sb.toString();
    }

    static MultiLayerConfiguration networkConf() {
        return new NeuralNetConfiguration.Builder()
                .seed(SEED)
                .updater(new Adam(1e-3))
                .weightInit(WeightInit.RELU)
                .list()
                .layer(new DenseLayer.Builder().nIn(MnistData.PIXELS).nOut(500).activation(Activation.RELU).build())
                .layer(new DenseLayer.Builder().nIn(500).nOut(100).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(100)
                        .nOut(MnistData.NUM_CLASSES).activation(Activation.SOFTMAX).build())
                .build();
    }

    static TrainingMaster master(String kind, int batch, int workers) {
        if (kind.equals("paramavg")) {
            return new ParameterAveragingTrainingMaster.Builder(workers, batch)
                    .batchSizePerWorker(batch)
                    .averagingFrequency(AVERAGING_FREQUENCY)
                    .workerPrefetchNumBatches(2)
                    .rngSeed(SEED)
                    .build();
        }
        SharedTrainingMaster.Builder b = new SharedTrainingMaster.Builder(batch)
                .batchSizePerWorker(batch)
                .workersPerNode(1)
                .workerPrefetchNumBatches(2)
                .rngSeed(SEED);
        if (kind.equals("sharedts")) {
            // the README's recommended setting for a bandwidth bound: aims at 2.5e-3 of the
            // parameters per message (~1/1100 of the dense bytes); "shared" keeps the default
            // AdaptiveThresholdAlgorithm, whose band lets a message reach 1e-2
            b.thresholdAlgorithm(new TargetSparsityThresholdAlgorithm(1e-4, 2.5e-3, Math.pow(0.5, 1 / 20.0)));
        }
        return b.build();
    }

    interface Runner {
        void epoch();

        MultiLayerNetwork network();
    }

    /** Local training on the driver's cores, the minibatches in the RDD's order. */
    static final class LocalRunner implements Runner {
        private final List<DataSet> batches;
        private final int threads;
        private final MultiLayerNetwork net;

        LocalRunner(List<DataSet> batches, int threads) {
            this.batches = batches;
            this.threads = threads;
            this.net = new MultiLayerNetwork(networkConf());
            net.init();
        }

        @Override
        public void epoch() {
            NativeInfo.setNumThreads(threads);
            for (DataSet d : batches) {
                net.fit(d);
            }
        }

        @Override
        public MultiLayerNetwork network() {
            return net;
        }
    }

    static final class SparkRunner implements Runner {
        private final java.util.function.Supplier<JavaRDD<DataSet>> rdd;
        private final SparkDl4jMultiLayer spark;

        /** {@code rdd} gives each epoch's RDD: the same persisted one, or a fresh one (timed with the fit). */
        SparkRunner(JavaSparkContext sc, java.util.function.Supplier<JavaRDD<DataSet>> rdd, TrainingMaster master) {
            this.rdd = rdd;
            this.spark = new SparkDl4jMultiLayer(sc, networkConf(), master);
        }

        @Override
        public void epoch() {
            spark.fit(rdd.get());
        }

        @Override
        public MultiLayerNetwork network() {
            return spark.getNetwork();
        }

        /** One more epoch with training statistics on; prints what the statistics say per phase. */
        void breakdown(String name, int examples) {
            TrainingMaster tm = spark.getTrainingMaster();
            tm.setCollectTrainingStats(true);
            long t = System.nanoTime();
            spark.fit(rdd.get());
            long nanos = System.nanoTime() - t;
            SparkTrainingStats s = tm.getTrainingStats();
            tm.setCollectTrainingStats(false);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("config", name);
            m.put("epoch_ms", nanos / 1e6);
            m.put("examples", examples);
            if (s != null) {
                m.put("stats", s.toString());
                long restore = 0;
                long data = 0;
                long fit = 0;
                long result = 0;
                long minibatches = 0;
                for (SparkTrainingStats.WorkerStats w : s.getWorkerStats()) {
                    restore += w.restoreMillis();
                    data += w.dataMillis();
                    fit += w.fitMillis();
                    result += w.resultMillis();
                    minibatches += w.minibatches();
                }
                long splits = s.getSplitMillis().stream().mapToLong(Long::longValue).sum();
                if (!s.getWorkerStats().isEmpty()) {
                    m.put("worker_results", s.getWorkerStats().size());
                    m.put("splits", s.getSplitMillis().size());
                    m.put("split_ms_sum", splits);
                    m.put("worker_restore_ms_sum", restore);
                    m.put("worker_data_ms_sum", data);
                    m.put("worker_fit_ms_sum", fit);
                    m.put("worker_result_ms_sum", result);
                    m.put("worker_minibatches", minibatches);
                }
                long sfit = 0;
                long steps = 0;
                for (SparkTrainingStats.SharingWorkerStats w : s.getSharingWorkerStats()) {
                    sfit += w.fitMillis();
                    steps += w.minibatches();
                }
                if (!s.getSharingWorkerStats().isEmpty()) {
                    m.put("sharing_tasks", s.getSharingWorkerStats().size());
                    m.put("sharing_task_ms_sum", sfit);
                    m.put("sharing_minibatches", steps);
                    m.put("bytes_per_worker_iteration", s.getMeanBytesPerWorkerIteration());
                }
            }
            if (s != null && s.getTimeBreakdown() != null) {
                m.put("time_breakdown", s.getTimeBreakdown().format());
                for (TimeBreakdown.Phase p : s.getTimeBreakdown().getPhases()) {
                    m.put("ms_per_iteration: " + p.name() + " [" + p.where() + "]", p.perIterationMillis());
                }
                m.put("ms_per_iteration: wall", s.getTimeBreakdown().getWallMillisPerIteration());
                m.put("ms_per_iteration: unaccounted", s.getTimeBreakdown().getUnaccountedMillis());
            }
            System.out.println("BREAKDOWN " + json(m));
            System.out.flush();
        }
    }

    static double accuracy(MultiLayerNetwork net, MnistData test) {
        List<DataSet> batches = test.toDataSets(256, null);
        long right = 0;
        long all = 0;
        for (DataSet d : batches) {
            INDArray out = net.output(d.getFeatures());
            float[][] p = out.toFloatMatrix();
            float[][] y = d.getLabels().toFloatMatrix();
            for (int i = 0; i < p.length; i++) {
                if (argMax(p[i]) == argMax(y[i])) {
                    right++;
                }
                all++;
            }
        }
        return (double) right / all;
    }

    private static int argMax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    static double[] loadAverage() {
        try {
            String[] f = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ");
            return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2])};
        } catch (IOException | RuntimeException e) {
            return new double[] {-1, -1, -1};
        }
    }

    private static void emit(String tag, String config, String kind, int round, int examples, long nanos) {
        emit(tag, config, kind, round, examples, nanos, loadAverage());
    }

    private static void emit(String tag, String config, String kind, int round, int examples, long nanos,
                             double[] load) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("config", config);
        m.put("kind", kind);
        m.put("round", round);
        m.put("examples", examples);
        m.put("seconds", nanos / 1e9);
        m.put("examples_per_s", examples / (nanos / 1e9));
        m.put("load", load);
        System.out.println(tag + " " + json(m));
        System.out.flush();
    }

    private static void info(String what, Map<String, Object> fields) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("info", what);
        m.putAll(fields);
        System.out.println("INFO " + json(m));
        System.out.flush();
    }

    /** A flat JSON object of strings, numbers and double arrays (no JSON library on this classpath). */
    static String json(Map<String, Object> m) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (b.length() > 1) {
                b.append(", ");
            }
            b.append('"').append(e.getKey()).append("\": ").append(value(e.getValue()));
        }
        return b.append('}').toString();
    }

    private static String value(Object v) {
        if (v instanceof Double d) {
            return Double.isFinite(d) ? String.format(Locale.ROOT, "%.6g", d) : "null";
        }
        if (v instanceof Number || v instanceof Boolean) {
            return v.toString();
        }
        if (v instanceof double[] a) {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < a.length; i++) {
                b.append(i == 0 ? "" : ", ").append(value(a[i]));
            }
            return b.append(']').toString();
        }
        String s = String.valueOf(v);
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
