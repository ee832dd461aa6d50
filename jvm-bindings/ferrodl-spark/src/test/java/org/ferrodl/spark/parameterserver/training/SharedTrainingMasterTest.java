package org.ferrodl.spark.parameterserver.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.ferrodl.spark.SparkTestSupport;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.SparkTrainingStats.SharingWorkerStats;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Gradient sharing on a local[4] Spark: real relay, real workers, real sockets. */
public class SharedTrainingMasterTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A learnable problem: the class is the argmax of a fixed linear map of the features. */
    public static List<DataSet> separable(int count, int size, long seed) {
        Random r = new Random(seed);
        int nIn = SparkTestSupport.N_IN;
        int nOut = SparkTestSupport.N_OUT;
        float[][] w = {{1, -1, 0.5f, 0, 0.3f, -0.2f}, {-0.5f, 1, -1, 0.4f, 0, 0.6f}, {0.2f, 0.1f, 1, -1, -0.7f, 0}};
        List<DataSet> out = new ArrayList<>();
        for (int d = 0; d < count; d++) {
            float[] f = new float[size * nIn];
            float[] l = new float[size * nOut];
            for (int i = 0; i < size; i++) {
                float best = Float.NEGATIVE_INFINITY;
                int cls = 0;
                for (int j = 0; j < nIn; j++) {
                    f[i * nIn + j] = r.nextFloat() * 2 - 1;
                }
                for (int c = 0; c < nOut; c++) {
                    float s = 0;
                    for (int j = 0; j < nIn; j++) {
                        s += w[c][j] * f[i * nIn + j];
                    }
                    if (s > best) {
                        best = s;
                        cls = c;
                    }
                }
                l[i * nOut + cls] = 1f;
            }
            out.add(new DataSet(Nd4j.create(f, size, nIn), Nd4j.create(l, size, nOut)));
        }
        return out;
    }

    private static SharedTrainingMaster.Builder master(RDDTrainingApproach approach) {
        return new SharedTrainingMaster.Builder(8).batchSizePerWorker(16).rddTrainingApproach(approach)
                .collectTrainingStats(true).rngSeed(1);
    }

    @Test
    void learnsWithFarFewerBytesThanDenseAndAppliesEveryMessage() throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        SharedTrainingMaster tm = master(RDDTrainingApproach.Direct).build();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        JavaRDD<DataSet> train = sc.parallelize(separable(400, 8, 3), 4);
        int iterationBefore = net.getNetwork().getIterationCount();
        double scoreBefore = net.getNetwork().score(DataSet.merge(separable(50, 8, 99)));
        for (int epoch = 0; epoch < 3; epoch++) {
            net.fit(train);
        }
        SparkTrainingStats stats = tm.getTrainingStats();
        Evaluation eval = net.evaluate(sc.parallelize(separable(50, 8, 99), 2));
        double scoreAfter = net.getNetwork().score(DataSet.merge(separable(50, 8, 99)));
        assertTrue(eval.accuracy() >= 0.85, "accuracy " + eval.accuracy());
        assertTrue(scoreAfter < 0.6 * scoreBefore, scoreBefore + " -> " + scoreAfter);
        assertEquals(3, net.getNetwork().getEpochCount());

        // 400 DataSets of 8 = 3200 examples in 4 balanced partitions of 800 = 50 minibatches of 16
        List<SharingWorkerStats> workers = stats.getSharingWorkerStats();
        assertEquals(4, workers.size());
        long minibatches = 0;
        for (SharingWorkerStats w : workers) {
            assertEquals(50, w.minibatches(), w.toString());
            assertEquals(800, w.examples());
            assertEquals(50, w.messagesSent());
            assertEquals(50, w.replicaSteps().get(0).size());
            minibatches += w.minibatches();
        }
        // the iteration counter grows by the minibatches per worker (all started from the same counter)
        assertEquals(iterationBefore + 3 * 50, net.getNetwork().getIterationCount());
        JsonNode relay = JSON.readTree(stats.getRelayStatsJson());
        assertEquals(minibatches, relay.get("messagesApplied").asLong());
        assertEquals(0, relay.get("messagesDropped").asLong());
        assertEquals(0, relay.get("connectionsRejected").asLong());
        assertEquals(4, relay.get("connectionsAccepted").asLong());
        // sparse messages: far below the dense fp32 update of every iteration
        double dense = 4.0 * stats.getParameterCount();
        assertTrue(stats.getMeanBytesPerWorkerIteration() < dense / 2,
                stats.getMeanBytesPerWorkerIteration() + " bytes vs dense " + dense);
        // the score is the mean of the workers' last minibatch scores
        double mean = workers.stream().mapToDouble(SharingWorkerStats::lastScore).average().orElseThrow();
        assertEquals(mean, net.getScore(), 1e-12);
    }

    @Test
    void exportApproachTrainsFromFilesAndCleansUp(@TempDir Path dir) {
        JavaSparkContext sc = SparkTestSupport.sc();
        SharedTrainingMaster tm = master(RDDTrainingApproach.Export).exportDirectory(dir.toString()).build();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        float[] before = net.getNetwork().params().toFloatVector();
        net.fit(sc.parallelize(separable(64, 8, 5), 2));
        assertEquals(64 * 8, tm.getTrainingStats().getSharingWorkerStats().stream()
                .mapToLong(SharingWorkerStats::examples).sum());
        assertNotEquals(before[0], net.getNetwork().params().toFloatVector()[0]);
        File[] left = dir.toFile().listFiles();
        assertEquals(0, left == null ? 0 : left.length, "export directory must be cleaned up");
    }

    @Test
    void twoNetworksDoNotShareThresholdsButOneNetworkCarriesItsOwn() {
        JavaSparkContext sc = SparkTestSupport.sc();
        SharedTrainingMaster tm = master(RDDTrainingApproach.Direct)
                .thresholdAlgorithm(new AdaptiveThresholdAlgorithm(1e-1, 0.05, 0.5, 0.9)).build();
        JavaRDD<DataSet> train = sc.parallelize(separable(64, 8, 7), 2);

        SparkDl4jMultiLayer a = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        a.fit(train);
        float firstFitFirstThreshold = tm.getTrainingStats().getSharingWorkerStats().get(0).replicaSteps().get(0)
                .get(0).threshold();
        // A fresh encoder fits its first threshold to its first update, from the configured 0.1 (which
        // sends almost nothing here) into the algorithm's band (docs/UPDATE_FORMAT.md, small networks).
        assertTrue(firstFitFirstThreshold > 0 && firstFitFirstThreshold < 0.1f, "first " + firstFitFirstThreshold);
        String state = a.getCarriedTrainingState(SharedTrainingDriver.THRESHOLD_STATE_KEY);
        assertNotNull(state, "the averaged end-of-fit thresholds are carried with the network");
        a.fit(train);
        float carried = tm.getTrainingStats().getSharingWorkerStats().get(0).replicaSteps().get(0).get(0).threshold();
        // The second fit continues from the carried thresholds. Whether they moved away from the calibrated
        // first value during the first fit depends on the run (timing of the other worker's updates), so
        // the carried value may equal it: only its band is asserted (was a flaky assertNotEquals, 2 in 5).
        assertTrue(carried > 0 && carried < 0.1f, "carried threshold " + carried);

        SparkDl4jMultiLayer b = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        assertNull(b.getCarriedTrainingState(SharedTrainingDriver.THRESHOLD_STATE_KEY), "a new network carries nothing");
        b.fit(train);
        float fresh = tm.getTrainingStats().getSharingWorkerStats().get(0).replicaSteps().get(0).get(0).threshold();
        // Calibrated afresh from the configured 0.1 as in a's first fit. The first update itself depends on
        // whether the other worker's first message arrived before it (an idle machine runs both at once:
        // 0.019999553 vs 0.019999975 once), so the two calibrations agree closely, not to the bit.
        assertEquals(firstFitFirstThreshold, fresh, 0.01f * firstFitFirstThreshold,
                "a different network starts fresh: the same first update gives the same first threshold");
    }

    @Test
    void directUsesAnRddTheUserAlreadyPersistedAsItIs() {
        JavaSparkContext sc = SparkTestSupport.sc();
        // the master's level (MEMORY_ONLY_SER) differs from the user's: Spark refuses to change it
        SharedTrainingMaster tm = master(RDDTrainingApproach.Direct).build();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        JavaRDD<DataSet> train = sc.parallelize(separable(64, 8, 13), 2).persist(StorageLevel.MEMORY_AND_DISK());
        net.fit(train);
        net.fit(train);
        assertEquals(2 * 64 * 8, tm.getTrainingStats().getSharingWorkerStats().stream()
                .mapToLong(SharingWorkerStats::examples).sum() * 2);
        assertEquals(StorageLevel.MEMORY_AND_DISK(), train.getStorageLevel(), "the user's RDD stays as it was");
        train.unpersist(true);
    }

    @Test
    void emptyRddIsAClearError() {
        JavaSparkContext sc = SparkTestSupport.sc();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0),
                master(RDDTrainingApproach.Direct).build());
        DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                () -> net.fit(sc.parallelize(new ArrayList<DataSet>(), 2)));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());
        SparkDl4jMultiLayer net2 = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0),
                master(RDDTrainingApproach.Export).exportDirectory(System.getProperty("java.io.tmpdir")).build());
        assertThrows(DL4JInvalidInputException.class, () -> net2.fit(sc.parallelize(new ArrayList<DataSet>(), 2)));
    }

    @Test
    void wrongFeatureWidthFailsTheFitWithTheShapeInTheMessage() {
        JavaSparkContext sc = SparkTestSupport.sc();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0),
                master(RDDTrainingApproach.Direct).build());
        DataSet bad = new DataSet(Nd4j.zeros(4, 5), Nd4j.zeros(4, 3));
        Exception e = assertThrows(Exception.class, () -> net.fit(sc.parallelize(List.of(bad, bad), 2)));
        String text = String.valueOf(e.getMessage());
        assertTrue(text.contains("5") && text.contains("6"), text);
        assertFalse(text.isEmpty());
    }

    @Test
    void replicasPerWorkerSplitTheMinibatchesAndAllReachTheDriver() throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        SharedTrainingMaster tm = master(RDDTrainingApproach.Direct).workersPerNode(2).build();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Adam(0.02), 0), tm);
        net.fit(sc.parallelize(separable(128, 8, 11), 2));
        SparkTrainingStats stats = tm.getTrainingStats();
        long minibatches = 0;
        for (SharingWorkerStats w : stats.getSharingWorkerStats()) {
            assertEquals(2, w.replicaSteps().size(), "two replicas per worker task");
            minibatches += w.minibatches();
            assertEquals(w.minibatches(), w.replicaSteps().get(0).size() + w.replicaSteps().get(1).size());
        }
        // 128 x 8 examples in minibatches of 16, whichever replica took them
        assertEquals(64, minibatches);
        JsonNode relay = JSON.readTree(stats.getRelayStatsJson());
        assertEquals(64, relay.get("messagesApplied").asLong());
        assertEquals(stats.getSharingWorkerStats().size(), relay.get("connectionsAccepted").asLong(),
                "one relay connection per worker task, shared by its replicas");
    }
}
