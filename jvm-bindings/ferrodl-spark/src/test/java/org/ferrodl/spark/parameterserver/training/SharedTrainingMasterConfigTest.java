package org.ferrodl.spark.parameterserver.training;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.function.Function;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.NoOpResidualPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.residual.ResidualClippingPostProcessor;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.FixedThresholdAlgorithm;
import org.ferrodl.optimize.solvers.accumulation.encoding.threshold.TargetSparsityThresholdAlgorithm;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.Repartition;
import org.ferrodl.spark.api.RepartitionStrategy;
import org.ferrodl.spark.impl.repartitioner.DefaultRepartitioner;
import org.ferrodl.spark.impl.repartitioner.EqualRepartitioner;
import org.junit.jupiter.api.Test;

class SharedTrainingMasterConfigTest {

    @SuppressWarnings("deprecation")
    static SharedTrainingMaster everyOptionSet() {
        return new SharedTrainingMaster.Builder(new TargetSparsityThresholdAlgorithm(2e-4, 3e-3, 0.9), 7)
                .batchSizePerWorker(33)
                .workersPerNode(3)
                .workerPrefetchNumBatches(5)
                .residualPostProcessor(new ResidualClippingPostProcessor(4.5, 7))
                .repartitioner(new EqualRepartitioner())
                .repartitionData(Repartition.Never)
                .repartitionStrategy(RepartitionStrategy.Balanced)
                .storageLevel(StorageLevel.MEMORY_AND_DISK())
                .rddTrainingApproach(RDDTrainingApproach.Direct)
                .exportDirectory("hdfs://nn:8020/tmp/x")
                .rngSeed(42)
                .collectTrainingStats(true)
                .encodingDebugMode(true)
                .debugLongerIterations(12)
                .workerTogglePeriodicGC(false)
                .workerPeriodicGCFrequency(777)
                .relayPortRange(41000, 41010)
                .relayBindAddress("10.1.2.3")
                .relayQueueLimit(9)
                .relayTimeoutMs(4321)
                .build();
    }

    @SuppressWarnings("deprecation")
    static void assertEveryOption(SharedTrainingMaster m) {
        assertEquals(7, m.getRddDataSetNumExamples());
        assertEquals(33, m.getBatchSizePerWorker());
        assertEquals(3, m.getWorkersPerNode());
        assertEquals(5, m.getWorkerPrefetchNumBatches());
        assertEquals(new TargetSparsityThresholdAlgorithm(2e-4, 3e-3, 0.9), m.getThresholdAlgorithm());
        assertEquals(new ResidualClippingPostProcessor(4.5, 7), m.getResidualPostProcessor());
        assertEquals(new EqualRepartitioner(), m.getRepartitioner());
        assertEquals(Repartition.Never, m.getRepartition());
        assertEquals(RepartitionStrategy.Balanced, m.getRepartitionStrategy());
        assertEquals(StorageLevel.MEMORY_AND_DISK(), m.getStorageLevel());
        assertEquals(RDDTrainingApproach.Direct, m.getRddTrainingApproach());
        assertEquals("hdfs://nn:8020/tmp/x", m.getExportDirectory());
        assertEquals(42L, m.getRngSeed());
        assertTrue(m.getIsCollectTrainingStats());
        assertTrue(m.isEncodingDebugMode());
        assertEquals(12, m.getDebugLongerIterations());
        assertEquals(false, m.isWorkerTogglePeriodicGC());
        assertEquals(777, m.getWorkerPeriodicGCFrequency());
        assertArrayEquals(new int[] {41000, 41010}, m.getRelayPortRange());
        assertEquals("10.1.2.3", m.getRelayBindAddress());
        assertEquals(9, m.getRelayQueueLimit());
        assertEquals(4321, m.getRelayTimeoutMs());
    }

    @Test
    void everyOptionSurvivesJsonYamlAndJavaSerialization() throws Exception {
        SharedTrainingMaster m = everyOptionSet();
        assertEveryOption(m);
        SharedTrainingMaster fromJson = SharedTrainingMaster.fromJson(m.toJson());
        assertEveryOption(fromJson);
        assertEquals(m, fromJson);
        SharedTrainingMaster fromYaml = SharedTrainingMaster.fromYaml(m.toYaml());
        assertEveryOption(fromYaml);
        assertEquals(m, fromYaml);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(m);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            assertEveryOption((SharedTrainingMaster) in.readObject());
        }
        // The other implementations survive too.
        SharedTrainingMaster other = new SharedTrainingMaster.Builder(4)
                .thresholdAlgorithm(new FixedThresholdAlgorithm(3e-3))
                .residualPostProcessor(new NoOpResidualPostProcessor())
                .repartitioner(new DefaultRepartitioner(17)).storageLevel(null).build();
        SharedTrainingMaster back = SharedTrainingMaster.fromYaml(other.toYaml());
        assertEquals(new FixedThresholdAlgorithm(3e-3), back.getThresholdAlgorithm());
        assertEquals(new NoOpResidualPostProcessor(), back.getResidualPostProcessor());
        assertEquals(new DefaultRepartitioner(17), back.getRepartitioner());
        assertNull(back.getStorageLevel());
        assertEquals(other, SharedTrainingMaster.fromJson(other.toJson()));
    }

    @Test
    @SuppressWarnings("deprecation")
    void defaultsAreTheReferenceDefaults() {
        SharedTrainingMaster m = new SharedTrainingMaster.Builder(32).build();
        assertEquals(new AdaptiveThresholdAlgorithm(1e-4, 1e-4, 1e-2, Math.pow(0.5, 1 / 20.0)), m.getThresholdAlgorithm());
        assertEquals(new ResidualClippingPostProcessor(5.0, 5), m.getResidualPostProcessor());
        assertEquals(new DefaultRepartitioner(5000), m.getRepartitioner());
        assertEquals(StorageLevel.MEMORY_ONLY_SER(), m.getStorageLevel());
        assertEquals(RDDTrainingApproach.Export, m.getRddTrainingApproach());
        assertEquals(2, m.getWorkerPrefetchNumBatches());
        assertEquals(-1, m.getWorkersPerNode());
        assertEquals(16, m.getBatchSizePerWorker());
        assertNull(m.getExportDirectory());
        assertNull(m.getRngSeed());
        assertEquals(false, m.getIsCollectTrainingStats());
        assertEquals(false, m.isEncodingDebugMode());
        assertNull(m.getRelayPortRange());
        // the deprecated threshold option means a fixed threshold
        assertEquals(new FixedThresholdAlgorithm(1e-3),
                new SharedTrainingMaster.Builder(32).updatesThreshold(1e-3).build().getThresholdAlgorithm());
    }

    @Test
    void invalidOptionsAreRefusedByName() {
        check("batchSizePerWorker", b -> b.batchSizePerWorker(0));
        check("workersPerNode", b -> b.workersPerNode(0));
        check("workerPrefetchNumBatches", b -> b.workerPrefetchNumBatches(-1));
        check("thresholdAlgorithm", b -> b.thresholdAlgorithm(null));
        check("debugLongerIterations", b -> b.debugLongerIterations(-5));
        check("relayPortRange", b -> b.relayPortRange(5000, 4000));
        check("relayQueueLimit", b -> b.relayQueueLimit(0));
        check("relayTimeoutMs", b -> b.relayTimeoutMs(10));
        check("exportDirectory", b -> b.exportDirectory(" "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new SharedTrainingMaster.Builder(0));
        assertTrue(e.getMessage().contains("rddDataSetNumExamples"), e.getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new AdaptiveThresholdAlgorithm(-1))
                .getMessage().contains("initialThreshold"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> new AdaptiveThresholdAlgorithm(1e-4, 0.1, 0.01, 0.9)).getMessage().contains("minTargetSparsity"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> new TargetSparsityThresholdAlgorithm(1e-4, 1e-3, 1.0)).getMessage().contains("decayRate"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> new ResidualClippingPostProcessor(5, 0)).getMessage().contains("frequency"));
        // and in JSON: an unknown field, an invalid value
        String json = new SharedTrainingMaster.Builder(8).build().toJson();
        assertThrows(DL4JInvalidConfigException.class,
                () -> SharedTrainingMaster.fromJson(json.replace("\"batchSizePerWorker\"", "\"batchSizePerWorkr\"")));
        assertThrows(RuntimeException.class,
                () -> SharedTrainingMaster.fromJson(json.replace("\"relayQueueLimit\" : 64", "\"relayQueueLimit\" : 0")));
    }

    private static void check(String option, Function<SharedTrainingMaster.Builder, Object> bad) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> bad.apply(new SharedTrainingMaster.Builder(8)));
        assertTrue(e.getMessage().contains(option), e.getMessage());
    }

    @Test
    void nativeJsonOfThresholdsAndPostProcessorsIsExact() throws Exception {
        ObjectMapper om = new ObjectMapper();
        JsonNode a = om.readTree(new AdaptiveThresholdAlgorithm(1.5e-4, 2e-4, 3e-2, 0.7).toNativeJson());
        assertEquals("adaptive", a.get("type").asText());
        assertEquals(1.5e-4, a.get("initialThreshold").asDouble());
        assertEquals(2e-4, a.get("minTargetSparsity").asDouble());
        assertEquals(3e-2, a.get("maxTargetSparsity").asDouble());
        assertEquals(0.7, a.get("decayRate").asDouble());
        double decay = Math.pow(0.5, 1 / 20.0);
        assertEquals(decay, om.readTree(new AdaptiveThresholdAlgorithm().toNativeJson()).get("decayRate").asDouble());
        JsonNode t = om.readTree(new TargetSparsityThresholdAlgorithm().toNativeJson());
        assertEquals("targetSparsity", t.get("type").asText());
        assertEquals(1e-3, t.get("sparsityTarget").asDouble());
        assertEquals("{\"type\":\"fixed\",\"threshold\":0.003}", new FixedThresholdAlgorithm(3e-3).toNativeJson());
        assertEquals("{\"type\":\"clipping\",\"thresholdMultipleClipValue\":5.0,\"frequency\":5}",
                new ResidualClippingPostProcessor(5.0, 5).toNativeJson());
        assertEquals("{\"type\":\"noop\"}", new NoOpResidualPostProcessor().toNativeJson());
    }
}
