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
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.jni.NativeRelay;
import org.ferrodl.jni.NativeSharedWorker;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.api.NativeHandleOwner;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.SparkTrainingStats.EncodingStep;
import org.ferrodl.spark.api.SparkTrainingStats.SharingWorkerStats;
import org.ferrodl.spark.impl.common.DataSetExport;
import org.ferrodl.spark.impl.common.JobDescriptions;
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
        JavaSparkContext sc = sparkNetwork.getSparkContext();
        NetworkKind<N, B> kind = sparkNetwork.getNetworkKind();

        if (master.getRddTrainingApproach() == RDDTrainingApproach.Export) {
            String base = master.getExportDirectory() != null ? master.getExportDirectory()
                    : DataSetExport.defaultBaseDirectory(sc);
            String fitId = "ferrodl-fit-" + UUID.randomUUID();
            try {
                JavaRDD<String> paths = DataSetExport.export(sc, data, base, fitId, kind);
                return runPaths(master, sparkNetwork, paths, it -> DataSetExport.load(it, kind));
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
        boolean userPersisted = !data.getStorageLevel().equals(StorageLevel.NONE());
        boolean persisted = !userPersisted && level != null && !level.equals(StorageLevel.NONE());
        if (persisted) {
            input = input.persist(level);
        }
        try {
            if (input.isEmpty()) {
                throw empty(kind);
            }
            JavaRDD<B> partitioned = master.getRepartitioner() == null ? input
                    : master.getRepartitioner().repartition(input, minObjectsPerPartition(master), sc.defaultParallelism());
            return train(master, sparkNetwork, partitioned);
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
        if (paths.isEmpty()) {
            throw empty(sparkNetwork.getNetworkKind());
        }
        JavaRDD<String> partitioned = master.getRepartitioner() == null ? paths
                : master.getRepartitioner().repartition(paths, minObjectsPerPartition(master),
                        sparkNetwork.getSparkContext().defaultParallelism());
        return train(master, sparkNetwork, partitioned.mapPartitions(load));
    }

    private static int minObjectsPerPartition(SharedTrainingMaster master) {
        return Math.max(1, master.getBatchSizePerWorker() / Math.max(1, master.getRddDataSetNumExamples()));
    }

    private static DL4JInvalidInputException empty(NetworkKind<?, ?> kind) {
        return new DL4JInvalidInputException("cannot fit: the training RDD is empty (0 " + kind.batchName()
                + " objects)");
    }

    private static <N extends NativeHandleOwner & Model, B> SparkTrainingStats train(
            SharedTrainingMaster master, SparkNetwork<N, B> sparkNetwork, JavaRDD<B> data) {
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
        float[] params = network.params().toFloatVector();
        long maxMessageBytes = 64L + 4L * ((params.length + 15) / 16) + 64L;
        // In local mode every worker runs in this JVM: the relay listens on the loopback only.
        String bindHost = master.getRelayBindAddress() != null ? master.getRelayBindAddress()
                : trust.localMaster() ? "127.0.0.1" : "0.0.0.0";
        String advertisedHost = master.getRelayBindAddress() != null ? master.getRelayBindAddress()
                : trust.localMaster() ? "127.0.0.1" : sc.getConf().get("spark.driver.host", "127.0.0.1");

        long relay = NativeRelay.start(relaySettings(master, bindHost, secretHex, maxMessageBytes, trust.encrypt()),
                params, kind.iterationCount(network), kind.epochCount(network));
        Broadcast<SharedFitSpec<B>> spec = null;
        try {
            String address = advertisedHost + ":" + NativeRelay.port(relay);
            LOG.info("ferrodl gradient sharing: relay listening on {} for {} parameters", address, params.length);
            int replicas = master.getWorkersPerNode() > 0 ? master.getWorkersPerNode() : 1;
            spec = sc.broadcast(new SharedFitSpec<>(kind, kind.configurationJson(network), params,
                    kind.updaterState(network).toFloatVector(), address, secretHex,
                    master.getThresholdAlgorithm().toNativeJson(), master.getResidualPostProcessor().toNativeJson(),
                    sparkNetwork.getCarriedTrainingState(THRESHOLD_STATE_KEY), master.getBatchSizePerWorker(),
                    replicas, master.getWorkerPrefetchNumBatches(), master.getRelayTimeoutMs(),
                    master.getRelayTimeoutMs(), master.getRelayQueueLimit(), maxMessageBytes,
                    master.getIsCollectTrainingStats(), master.isEncodingDebugMode(),
                    master.getDebugLongerIterations(), trust.encrypt(), master.getWorkerStallTimeoutMs(),
                    sparkNetwork.getListeners()));

            JobDescriptions.part(sc, "gradient-sharing workers");
            List<SharedWorkerResult> results = StallWatch.collect(sc,
                    data.mapPartitionsWithIndex(new SharedTrainingWorker<>(kind, spec), false), relay);

            // Every worker waited for its messages to be applied: the master copy is final.
            NativeRelay.shutdown(relay);
            float[] finalParams = NativeRelay.params(relay);
            long[] counters = NativeRelay.counters(relay);
            String relayStats = NativeRelay.statsJson(relay);
            return finish(master, sparkNetwork, results, finalParams, counters, relayStats);
        } finally {
            NativeRelay.destroy(relay);
            if (spec != null) {
                spec.destroy();
            }
        }
    }

    private static <N extends NativeHandleOwner & Model> SparkTrainingStats finish(
            SharedTrainingMaster master, SparkNetwork<N, ?> sparkNetwork, List<SharedWorkerResult> results,
            float[] params, long[] counters, String relayStats) {
        N network = sparkNetwork.getNetwork();
        NetworkKind<N, ?> kind = sparkNetwork.getNetworkKind();
        long iteration = counters[0];
        double scoreSum = 0;
        int scored = 0;
        float[] updaterSum = null;
        int updaterCount = 0;
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
                float[] u = r.updaterStates.get(i);
                if (u != null && u.length > 0) {
                    if (updaterSum == null) {
                        updaterSum = new float[u.length];
                    }
                    for (int j = 0; j < u.length; j++) {
                        updaterSum[j] += u[j];
                    }
                    updaterCount++;
                }
            }
            if (stats != null) {
                // bytesSent: everything the worker's relay connection wrote to its socket (handshake,
                // frame headers, update payloads with their counters, heartbeats, FINISH), so that
                // bytes per iteration compare honestly with a dense fp32 update.
                stats.addSharingWorker(new SharingWorkerStats(r.partition, r.attempt, r.executorId, r.fitMillis,
                        minibatches, examples, lastScore, node.path("messagesSent").asLong(),
                        node.path("wireBytesSent").asLong(), node.path("messagesReceived").asLong(),
                        node.path("bytesReceived").asLong(), node.path("startIteration").asLong(), steps));
            }
        }
        network.setParams(Nd4j.create(params, 1, params.length));
        if (updaterSum != null) {
            for (int j = 0; j < updaterSum.length; j++) {
                updaterSum[j] /= updaterCount;
            }
            kind.setUpdaterState(network, Nd4j.create(updaterSum, 1, updaterSum.length));
        }
        kind.setCounters(network, Math.toIntExact(iteration), kind.epochCount(network) + 1);
        sparkNetwork.setScore(scored == 0 ? Double.NaN : scoreSum / scored);
        if (!thresholdStates.isEmpty()) {
            String averaged = NativeSharedWorker.averageThresholdStates(thresholdStates.toString());
            sparkNetwork.setCarriedTrainingState(THRESHOLD_STATE_KEY, "null".equals(averaged) ? null : averaged);
        }
        if (stats != null) {
            stats.setRelayStatsJson(relayStats);
            stats.setParameterCount(params.length);
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
