package org.ferrodl.spark.parameterserver.training;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.jni.NativeRelay;
import org.ferrodl.jni.NativeSharedWorker;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TimeBreakdown;
import org.ferrodl.spark.api.SparkTrainingStats.EncodingStep;
import org.ferrodl.spark.api.SparkTrainingStats.SharingWorkerStats;
import org.ferrodl.spark.impl.common.CachedBlocksRDD;
import org.ferrodl.spark.impl.common.DataSetExport;
import org.ferrodl.spark.impl.repartitioner.DefaultRepartitioner;
import org.ferrodl.spark.impl.common.JobDescriptions;
import org.ferrodl.spark.impl.common.SparkListeners;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.SparkNetwork;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one gradient-sharing fit on the driver: starts the native relay on a free port with a fresh
 * random secret, broadcasts the network and the relay's address to the workers, runs one worker per
 * partition, and takes the final parameters from the relay's master copy (every message has been
 * applied to it before a worker task ends). Nothing outlives the fit: the relay, its port, the
 * secret and the workers' residuals are per fit; only the averaged thresholds are carried to the
 * next fit of the same network.
 */
final class SharedTrainingDriver {
    private static final Logger LOG = LoggerFactory.getLogger(SharedTrainingDriver.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Key of the averaged threshold state in {@link SparkNetwork#getCarriedTrainingState}. */
    static final String THRESHOLD_STATE_KEY = "sharedTrainingMaster.thresholdState";

    private SharedTrainingDriver() {}

    /** Trains {@code sparkNetwork} on {@code data}; returns the fit's statistics (null when not collected). */
    static <N extends NativeHandleOwner & Model, B> SparkTrainingStats run(SharedTrainingMaster master,
                                                                     SparkNetwork<N, B> sparkNetwork, JavaRDD<B> data) {
        long fitStart = System.nanoTime();
        JavaSparkContext sc = sparkNetwork.getSparkContext();
        NetworkKind<N, B> kind = sparkNetwork.getNetworkKind();

        // An RDD the user persisted is trained from as it is (RDDTrainingApproach's javadoc).
        boolean userPersisted = !data.getStorageLevel().equals(StorageLevel.NONE());
        if (master.getRddTrainingApproach() == RDDTrainingApproach.Export && !userPersisted) {
            String base = master.getExportDirectory() != null ? master.getExportDirectory()
                    : DataSetExport.defaultBaseDirectory(sc);
            String fitId = "ferrodl-fit-" + UUID.randomUUID();
            try {
                DataSetExport.Exported exported = DataSetExport.exportCounted(sc, data, base, fitId, kind);
                if (java.util.Arrays.stream(exported.sizes()).sum() == 0) {
                    throw empty(kind);
                }
                // the export's partition sizes are known: no counting jobs before training
                JavaRDD<String> paths = master.getRepartitioner() instanceof DefaultRepartitioner balanced
                        ? balanced.repartition(exported.paths(), minObjectsPerPartition(master),
                                sc.defaultParallelism(), exported.sizes())
                        : repartition(master, exported.paths(), sc);
                return train(master, sparkNetwork, paths.mapPartitions(it -> DataSetExport.load(it, kind)), fitStart);
            } finally {
                for (String problem : DataSetExport.delete(sc, base, fitId)) {
                    LOG.warn("ferrodl gradient sharing: {}", problem);
                }
            }
        }

        JavaRDD<B> input = data;
        StorageLevel level = master.getStorageLevel();
        // An RDD the user already persisted is used as it is (Spark cannot change its level, and
        // it is the user's to unpersist); otherwise it is persisted for the fit and released after.
        boolean persisted = !userPersisted && level != null && !level.equals(StorageLevel.NONE());
        if (persisted) {
            input = input.persist(level);
        }
        try {
            JavaRDD<B> partitioned;
            if (userPersisted && master.getRepartitioner() instanceof DefaultRepartitioner balanced) {
                // the same persisted RDD every epoch: counted once (SharedTrainingMaster)
                long[] sizes = master.persistedPartitionSizes(input);
                if (java.util.Arrays.stream(sizes).sum() == 0) {
                    throw empty(kind);
                }
                partitioned = balanced.repartition(input, minObjectsPerPartition(master), sc.defaultParallelism(),
                        sizes);
            } else {
                if (input.isEmpty()) {
                    throw empty(kind);
                }
                partitioned = repartition(master, input, sc);
            }
            return train(master, sparkNetwork, partitioned, fitStart);
        } finally {
            if (persisted) {
                input.unpersist(false);
            }
        }
    }

    /**
     * Trains on the objects stored at {@code paths} (repartitioned as the data would be), each
     * worker loading its files one at a time with {@code load}; nothing is exported.
     */
    static <N extends NativeHandleOwner & Model, B> SparkTrainingStats runPaths(
            SharedTrainingMaster master, SparkNetwork<N, B> sparkNetwork, JavaRDD<String> paths,
            FlatMapFunction<Iterator<String>, B> load) {
        return runPaths(master, sparkNetwork, paths, load, System.nanoTime());
    }

    private static <N extends NativeHandleOwner & Model, B> SparkTrainingStats runPaths(
            SharedTrainingMaster master, SparkNetwork<N, B> sparkNetwork, JavaRDD<String> paths,
            FlatMapFunction<Iterator<String>, B> load, long fitStart) {
        if (paths.isEmpty()) {
            throw empty(sparkNetwork.getNetworkKind());
        }
        JavaRDD<String> partitioned = repartition(master, paths, sparkNetwork.getSparkContext());
        return train(master, sparkNetwork, partitioned.mapPartitions(load), fitStart);
    }

    /** {@code rdd} as the master's repartitioner (if any) deals it out. */
    private static <T> JavaRDD<T> repartition(SharedTrainingMaster master, JavaRDD<T> rdd, JavaSparkContext sc) {
        return master.getRepartitioner() == null ? rdd
                : master.getRepartitioner().repartition(rdd, minObjectsPerPartition(master), sc.defaultParallelism());
    }

    private static int minObjectsPerPartition(SharedTrainingMaster master) {
        return Math.max(1, master.getBatchSizePerWorker() / Math.max(1, master.getRddDataSetNumExamples()));
    }

    private static DL4JInvalidInputException empty(NetworkKind<?, ?> kind) {
        return new DL4JInvalidInputException("cannot fit: the training RDD is empty (0 " + kind.batchName()
                + " objects)");
    }

    /**
     * @param fitStart System.nanoTime() when the fit began: what passed before this call (exporting
     *                 or persisting, checking and repartitioning the data) is the breakdown's data phase
     */
    private static <N extends NativeHandleOwner & Model, B> SparkTrainingStats train(
            SharedTrainingMaster master, SparkNetwork<N, B> sparkNetwork, JavaRDD<B> data, long fitStart) {
        long relayStart = System.nanoTime();
        double prepareMillis = (relayStart - fitStart) / 1e6;
        JavaSparkContext sc = sparkNetwork.getSparkContext();
        N network = sparkNetwork.getNetwork();
        NetworkKind<N, B> kind = sparkNetwork.getNetworkKind();
        RelayTrust trust = RelayTrust.check(sc.getConf(), sc.master(), master.isRelayAllowWithoutSparkAuthentication());
        if (trust.warning() != null) {
            LOG.warn(trust.warning());
        }
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        String secretHex = HexFormat.of().formatHex(secret);
        int paramCount = Math.toIntExact(network.numParams());
        long maxMessageBytes = 64L + 4L * ((paramCount + 15) / 16) + 64L;
        // In local mode every worker runs in this JVM: the relay listens on the loopback only.
        String bindHost = master.getRelayBindAddress() != null ? master.getRelayBindAddress()
                : trust.localMaster() ? "127.0.0.1" : "0.0.0.0";
        String advertisedHost = master.getRelayBindAddress() != null ? master.getRelayBindAddress()
                : trust.localMaster() ? "127.0.0.1" : sc.getConf().get("spark.driver.host", "127.0.0.1");

        // every worker takes the parameters and the start updater state from the relay at connect
        // (the relay reads them from the network's engine arrays), and sends its replicas' final
        // updater states with its FINISH
        int replicas = master.getWorkersPerNode() > 0 ? master.getWorkersPerNode() : 1;
        long relay = NativeRelay.start(relaySettings(master, bindHost, secretHex, maxMessageBytes, trust.encrypt()),
                network.nativeHandle(), replicas, kind.iterationCount(network), kind.epochCount(network));
        try {
            String address = advertisedHost + ":" + NativeRelay.port(relay);
            LOG.info("ferrodl gradient sharing: relay listening on {} for {} parameters", address, paramCount);
            SharedFitSpec<B> spec = new SharedFitSpec<>(kind, kind.configurationJson(network), paramCount,
                    address, secretHex,
                    master.getThresholdAlgorithm().toNativeJson(), master.getResidualPostProcessor().toNativeJson(),
                    sparkNetwork.getCarriedTrainingState(THRESHOLD_STATE_KEY), master.getBatchSizePerWorker(),
                    replicas, master.getWorkerPrefetchNumBatches(), master.getRelayTimeoutMs(),
                    master.getRelayTimeoutMs(), master.getRelayQueueLimit(), maxMessageBytes,
                    master.getIsCollectTrainingStats(), master.isEncodingDebugMode(),
                    master.getDebugLongerIterations(), trust.encrypt(), master.getWorkerStallTimeoutMs(),
                    SparkListeners.forWorkers(sparkNetwork.getListeners(), master.getWorkerListeners()),
                    master.getTrainingHooks());

            JobDescriptions.part(sc, "gradient-sharing workers");
            double setupMillis = (System.nanoTime() - relayStart) / 1e6;
            long jobStartWall = System.currentTimeMillis();
            List<SharedWorkerResult> results = StallWatch.collect(sc,
                    CachedBlocksRDD.of(data).mapPartitionsWithIndex(new SharedTrainingWorker<>(kind, spec), false),
                    relay);
            long jobEndWall = System.currentTimeMillis();
            long stopStart = System.nanoTime();

            // Every worker waited for its messages to be applied: the master copy is final.
            NativeRelay.shutdown(relay);
            long[] counters = NativeRelay.counters(relay);
            String relayStats = NativeRelay.statsJson(relay);
            long finishStart = System.nanoTime();
            double stopMillis = (finishStart - stopStart) / 1e6;
            SparkTrainingStats stats = finish(master, sparkNetwork, results, relay, counters,
                    relayStats);
            if (stats != null) {
                double finishMillis = (System.nanoTime() - finishStart) / 1e6;
                stats.setTimeBreakdown(breakdown(results, (System.nanoTime() - fitStart) / 1e6, prepareMillis,
                        setupMillis, jobStartWall, jobEndWall, stopMillis, finishMillis));
            }
            return stats;
        } finally {
            NativeRelay.destroy(relay);
        }
    }

    /** Where the fit's time went (docs/ARCHITECTURE.md §7): driver, Spark, Java and native phases. */
    static TimeBreakdown breakdown(List<SharedWorkerResult> results, double fitMillis, double prepareMillis,
                                   double setupMillis, long jobStartWall, long jobEndWall, double stopMillis,
                                   double finishMillis) {
        long maxPerWorker = 0;
        long all = 0;
        double startDelay = 0;
        double connect = 0;
        double firstData = 0;
        double data = 0;
        double fitCall = 0;
        double finishWait = 0;
        double result = 0;
        double decode = 0;
        long lastTaskEnd = jobStartWall;
        double[] step = new double[STEP_PHASES.length];
        for (SharedWorkerResult r : results) {
            long minibatches = 0;
            for (String json : r.replicaReportsJson) {
                JsonNode rep = parse(json);
                minibatches += rep.path("minibatches").asLong();
                JsonNode t = rep.path("stepTimes");
                for (int i = 0; i < STEP_PHASES.length; i++) {
                    step[i] += t.path(STEP_PHASES[i]).asLong() / 1e6;
                }
            }
            maxPerWorker = Math.max(maxPerWorker, minibatches);
            all += minibatches;
            startDelay += Math.max(0, r.startWallMillis - jobStartWall);
            lastTaskEnd = Math.max(lastTaskEnd, r.startWallMillis + r.fitMillis);
            connect += r.connectNanos / 1e6;
            firstData += r.firstDataNanos / 1e6;
            data += r.dataNanos / 1e6;
            fitCall += r.fitCallNanos / 1e6;
            finishWait += r.finishNanos / 1e6;
            result += r.resultNanos / 1e6;
            decode += parse(r.nodeReportJson).path("decodeReceivedMillis").asDouble();
        }
        // Tasks with equal partitions do not end together (they share cores, and one is slower):
        // each waits for the last one, which the mean worker's phases above do not show.
        double waitForLast = 0;
        for (SharedWorkerResult r : results) {
            waitForLast += Math.max(0, lastTaskEnd - (r.startWallMillis + r.fitMillis));
        }
        double nativeSteps = 0;
        for (double x : step) {
            nativeSteps += x;
        }
        TimeBreakdown b = new TimeBreakdown("gradient sharing", fitMillis, maxPerWorker, all)
                .driver("data: persist/export and repartition", prepareMillis)
                .driver("relay start with the network's state", setupMillis)
                .worker("Spark scheduling and task start", startDelay)
                .worker("task: first object (data source)", firstData)
                .worker("connect: build network, relay handshake, download params + updater state", connect)
                .worker("wait for minibatches (data source, deserialization)", data)
                .worker("apply received updates (inbox)", step[0])
                .worker("compute: forward, backward, updater", step[1])
                .worker("encode (threshold, residual)", step[2])
                .worker("apply own encoded update", step[3])
                .worker("send: frame and queue to the relay", step[4])
                .worker("JNI call and minibatch copy", Math.max(0, fitCall - nativeSteps))
                .worker("finish: wait until the driver applied the last updates", finishWait)
                .worker("reports and updater states", result)
                .worker("done, waiting for the last task to finish its partition", waitForLast)
                .driver("task results to the driver", Math.max(0, jobEndWall - lastTaskEnd))
                .driver("relay stop, master copy and counters read", stopMillis)
                .driver("driver: master copy to the network, updater states averaged", finishMillis)
                .concurrent("receive + decode relayed updates (reader thread)", decode);
        return b;
    }

    /** Fields of the native replica report's {@code stepTimes}, in step order. */
    private static final String[] STEP_PHASES = {"applyReceivedNanos", "computeNanos", "encodeNanos",
            "applyOwnNanos", "sendNanos"};

    private static <N extends NativeHandleOwner & Model> SparkTrainingStats finish(
            SharedTrainingMaster master, SparkNetwork<N, ?> sparkNetwork, List<SharedWorkerResult> results,
            long relay, long[] counters, String relayStats) {
        N network = sparkNetwork.getNetwork();
        NetworkKind<N, ?> kind = sparkNetwork.getNetworkKind();
        long iteration = counters[0];
        double scoreSum = 0;
        int scored = 0;
        ArrayNode thresholdStates = JSON.createArrayNode();
        SparkTrainingStats stats = master.getIsCollectTrainingStats() ? new SparkTrainingStats() : null;
        for (SharedWorkerResult r : results) {
            JsonNode node = parse(r.nodeReportJson);
            long minibatches = 0;
            long examples = 0;
            double lastScore = Double.NaN;
            List<List<EncodingStep>> steps = new ArrayList<>();
            for (int i = 0; i < r.replicaReportsJson.size(); i++) {
                JsonNode rep = parse(r.replicaReportsJson.get(i));
                minibatches += rep.path("minibatches").asLong();
                examples += rep.path("examples").asLong();
                iteration = Math.max(iteration, rep.path("iteration").asLong());
                if (rep.hasNonNull("lastScore")) {
                    lastScore = rep.get("lastScore").asDouble();
                    scoreSum += lastScore;
                    scored++;
                }
                if (rep.hasNonNull("thresholdState")) {
                    thresholdStates.add(rep.get("thresholdState"));
                }
                List<EncodingStep> series = new ArrayList<>();
                for (JsonNode st : rep.path("steps")) {
                    series.add(new EncodingStep(st.path("iteration").asLong(), (float) st.path("threshold").asDouble(),
                            st.path("sparsity").asDouble(), st.path("bytes").asInt()));
                }
                steps.add(series);
            }
            if (stats != null) {
                // bytesSent: everything the worker's relay connection wrote to its socket (handshake,
                // frame headers, update payloads with their counters, heartbeats, FINISH), so that
                // bytes per iteration compare honestly with a dense fp32 update.
                stats.addSharingWorker(new SharingWorkerStats(r.partition, r.attempt, r.executorId, r.fitMillis,
                        minibatches, examples, lastScore, node.path("messagesSent").asLong(),
                        node.path("wireBytesSent").asLong(), node.path("messagesReceived").asLong(),
                        node.path("bytesReceived").asLong(), node.path("startIteration").asLong(), steps,
                        node.path("nativeBytesInUse").asLong(), node.path("nativeBytesPeak").asLong()));
            }
        }
        // the master copy and the mean of the replicas' final updater states (sent with their
        // FINISH), straight into the network's engine arrays
        NativeRelay.applyFinal(relay, network.nativeHandle(), true);
        kind.setCounters(network, Math.toIntExact(iteration), kind.epochCount(network) + 1);
        sparkNetwork.setScore(scored == 0 ? Double.NaN : scoreSum / scored);
        if (!thresholdStates.isEmpty()) {
            String averaged = NativeSharedWorker.averageThresholdStates(thresholdStates.toString());
            sparkNetwork.setCarriedTrainingState(THRESHOLD_STATE_KEY, "null".equals(averaged) ? null : averaged);
        }
        if (stats != null) {
            stats.setRelayStatsJson(relayStats);
            stats.setParameterCount(network.numParams());
        }
        LOG.info("ferrodl gradient sharing: fit done, {} worker results, relay {}", results.size(), relayStats);
        return stats;
    }

    private static String relaySettings(SharedTrainingMaster master, String bindHost, String secretHex,
                                        long maxMessageBytes, boolean encrypt) {
        ObjectNode s = JSON.createObjectNode();
        s.put("bindHost", bindHost);
        s.put("encrypt", encrypt);
        if (master.getRelayPortRange() != null) {
            s.put("portFrom", master.getRelayPortRange()[0]);
            s.put("portTo", master.getRelayPortRange()[1]);
        } else {
            s.putNull("portFrom");
            s.putNull("portTo");
        }
        s.put("secretHex", secretHex);
        s.put("maxMessageBytes", maxMessageBytes);
        s.put("queueLimit", master.getRelayQueueLimit());
        s.put("ioTimeoutMs", master.getRelayTimeoutMs());
        // Short: a pending handshake holds a socket and nothing else, a worker answers within one RTT.
        s.put("handshakeTimeoutMs", Math.min(5_000L, master.getRelayTimeoutMs()));
        return s.toString();
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException("malformed native report: " + json, e);
        }
    }
}
