package org.ferrodl.spark.parameterserver.training;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
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
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.impl.repartitioner.DefaultRepartitioner;
import org.ferrodl.spark.impl.repartitioner.EqualRepartitioner;
import org.ferrodl.spark.impl.repartitioner.NoOpRepartitioner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The configuration side of {@link SharedTrainingMaster}: builder, defaults, validation, JSON/YAML, Java serialization. */
class SharedTrainingMasterConfigTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Every option at a value other than its default (RepartitionStrategy has a single value). */
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
                .storageLevel(StorageLevel.MEMORY_AND_DISK_SER_2())
                .rddTrainingApproach(RDDTrainingApproach.Direct)
                .exportDirectory("hdfs://nn:8020/tmp/x")
                .rngSeed(-42)
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
        TargetSparsityThresholdAlgorithm t = (TargetSparsityThresholdAlgorithm) m.getThresholdAlgorithm();
        assertEquals(2e-4, t.getInitialThreshold());
        assertEquals(3e-3, t.getSparsityTarget());
        assertEquals(0.9, t.getDecayRate());
        ResidualClippingPostProcessor c = (ResidualClippingPostProcessor) m.getResidualPostProcessor();
        assertEquals(4.5, c.getThresholdMultipleClipValue());
        assertEquals(7, c.getFrequency());
        assertEquals(new EqualRepartitioner(), m.getRepartitioner());
        assertEquals(Repartition.Never, m.getRepartition());
        assertEquals(RepartitionStrategy.Balanced, m.getRepartitionStrategy());
        assertEquals(StorageLevel.MEMORY_AND_DISK_SER_2(), m.getStorageLevel());
        assertEquals(RDDTrainingApproach.Direct, m.getRddTrainingApproach());
        assertEquals("hdfs://nn:8020/tmp/x", m.getExportDirectory());
        assertEquals(-42L, m.getRngSeed());
        assertTrue(m.getIsCollectTrainingStats());
        assertTrue(m.isEncodingDebugMode());
        assertEquals(12, m.getDebugLongerIterations());
        assertFalse(m.isWorkerTogglePeriodicGC());
        assertEquals(777, m.getWorkerPeriodicGCFrequency());
        assertArrayEquals(new int[] {41000, 41010}, m.getRelayPortRange());
        assertEquals("10.1.2.3", m.getRelayBindAddress());
        assertEquals(9, m.getRelayQueueLimit());
        assertEquals(4321, m.getRelayTimeoutMs());
    }

    private static SharedTrainingMaster javaRoundTrip(SharedTrainingMaster m) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(m);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return (SharedTrainingMaster) in.readObject();
        }
    }

    // ---------------------------------------------------------------------------------- round trips

    @Test
    void everyOptionSurvivesJsonYamlAndJavaSerialization() throws Exception {
        SharedTrainingMaster m = everyOptionSet();
        assertEveryOption(m);

        String json = m.toJson();
        SharedTrainingMaster fromJson = SharedTrainingMaster.fromJson(json);
        assertEveryOption(fromJson);
        assertEquals(m, fromJson);
        assertEquals(m.hashCode(), fromJson.hashCode());
        assertEquals(json, fromJson.toJson());

        String yaml = m.toYaml();
        SharedTrainingMaster fromYaml = SharedTrainingMaster.fromYaml(yaml);
        assertEveryOption(fromYaml);
        assertEquals(m, fromYaml);
        assertEquals(yaml, fromYaml.toYaml());

        SharedTrainingMaster fromJava = javaRoundTrip(m);
        assertEveryOption(fromJava);
        assertEquals(m, fromJava);
    }

    @Test
    void otherImplementationsAndNullsSurviveToo() throws Exception {
        SharedTrainingMaster other = new SharedTrainingMaster.Builder(4)
                .thresholdAlgorithm(new FixedThresholdAlgorithm(3e-3))
                .residualPostProcessor(new NoOpResidualPostProcessor())
                .repartitioner(new DefaultRepartitioner(17))
                .storageLevel(null)
                .build();
        SharedTrainingMaster awkward = new SharedTrainingMaster.Builder(1)
                .thresholdAlgorithm(new AdaptiveThresholdAlgorithm(0.1 + 0.2, 1e-4 / 3, 0.5, Math.nextDown(1.0)))
                .repartitioner(new NoOpRepartitioner())
                .build();
        SharedTrainingMaster noRepartitioner = new SharedTrainingMaster.Builder(2).repartitioner(null).build();
        for (SharedTrainingMaster m : List.of(other, awkward, noRepartitioner)) {
            for (SharedTrainingMaster back : List.of(SharedTrainingMaster.fromJson(m.toJson()),
                    SharedTrainingMaster.fromYaml(m.toYaml()), javaRoundTrip(m))) {
                assertEquals(m, back);
                assertEquals(m.getThresholdAlgorithm(), back.getThresholdAlgorithm());
                assertEquals(m.getResidualPostProcessor(), back.getResidualPostProcessor());
                assertEquals(m.getRepartitioner(), back.getRepartitioner());
                assertEquals(m.getStorageLevel(), back.getStorageLevel());
                assertEquals(m.getRngSeed(), back.getRngSeed());
                assertEquals(m.getRelayBindAddress(), back.getRelayBindAddress());
            }
        }
        assertNull(SharedTrainingMaster.fromYaml(other.toYaml()).getStorageLevel());
        assertNull(SharedTrainingMaster.fromJson(noRepartitioner.toJson()).getRepartitioner());
        assertEquals(0.1 + 0.2, ((AdaptiveThresholdAlgorithm) SharedTrainingMaster.fromYaml(awkward.toYaml())
                .getThresholdAlgorithm()).getInitialThreshold());
    }

    @Test
    void jsonUsesTheNativeTypeNamesForNestedObjects() throws Exception {
        JsonNode json = JSON.readTree(new SharedTrainingMaster.Builder(8).build().toJson());
        assertEquals("adaptive", json.get("thresholdAlgorithm").get("type").textValue());
        assertEquals(JSON.readTree(new AdaptiveThresholdAlgorithm().toNativeJson()), json.get("thresholdAlgorithm"));
        assertEquals(JSON.readTree(new ResidualClippingPostProcessor(5.0, 5).toNativeJson()),
                json.get("residualPostProcessor"));
        assertEquals("default", json.get("repartitioner").get("type").textValue());
        assertEquals(5000, json.get("repartitioner").get("maxPartitions").intValue());
        assertEquals("MEMORY_ONLY_SER", json.get("storageLevel").textValue());
        assertEquals("Export", json.get("rddTrainingApproach").textValue());
        assertFalse(json.has("lastStats"));
        // YAML names the types the same way, so it can be written by hand
        String yaml = new SharedTrainingMaster.Builder(8).build().toYaml();
        assertTrue(yaml.contains("type: \"adaptive\""), yaml);
        SharedTrainingMaster hand = SharedTrainingMaster.fromYaml(String.join("\n",
                "rddDataSetNumExamples: 8",
                "thresholdAlgorithm:",
                "  type: fixed",
                "  threshold: 0.002",
                "residualPostProcessor: {type: noop}",
                "repartitioner:",
                "  type: equal",
                "storageLevel: DISK_ONLY",
                "relayPortRange: [7000, 7005]", ""));
        assertEquals(new FixedThresholdAlgorithm(2e-3), hand.getThresholdAlgorithm());
        assertEquals(new NoOpResidualPostProcessor(), hand.getResidualPostProcessor());
        assertEquals(new EqualRepartitioner(), hand.getRepartitioner());
        assertEquals(StorageLevel.DISK_ONLY(), hand.getStorageLevel());
        assertArrayEquals(new int[] {7000, 7005}, hand.getRelayPortRange());
    }

    // ------------------------------------------------------------------------------------ defaults

    @Test
    @SuppressWarnings("deprecation")
    void defaultsAreTheReferenceDefaults() {
        SharedTrainingMaster m = new SharedTrainingMaster.Builder(32).build();
        assertEquals(32, m.getRddDataSetNumExamples());
        assertEquals(16, m.getBatchSizePerWorker()); // the reference documents none
        assertEquals(-1, m.getWorkersPerNode());
        assertEquals(2, m.getWorkerPrefetchNumBatches());
        assertEquals(new AdaptiveThresholdAlgorithm(1e-4, 1e-4, 1e-2, Math.pow(0.5, 1 / 20.0)), m.getThresholdAlgorithm());
        assertEquals(new ResidualClippingPostProcessor(5.0, 5), m.getResidualPostProcessor());
        assertEquals(new DefaultRepartitioner(5000), m.getRepartitioner());
        assertEquals(Repartition.Always, m.getRepartition());
        assertEquals(RepartitionStrategy.Balanced, m.getRepartitionStrategy());
        assertEquals(StorageLevel.MEMORY_ONLY_SER(), m.getStorageLevel());
        assertEquals(RDDTrainingApproach.Export, m.getRddTrainingApproach());
        assertNull(m.getExportDirectory());
        assertNull(m.getRngSeed());
        assertFalse(m.getIsCollectTrainingStats());
        assertFalse(m.isEncodingDebugMode());
        assertEquals(0, m.getDebugLongerIterations());
        assertTrue(m.isWorkerTogglePeriodicGC());
        assertEquals(5000, m.getWorkerPeriodicGCFrequency());
        assertNull(m.getRelayPortRange());
        assertNull(m.getRelayBindAddress());
        assertEquals(64, m.getRelayQueueLimit());
        assertEquals(60_000, m.getRelayTimeoutMs());
        assertNull(m.getTrainingStats());
        // the reference's constructors: a threshold algorithm, or (deprecated) an initial adaptive threshold
        assertEquals(new FixedThresholdAlgorithm(1e-3),
                new SharedTrainingMaster.Builder(new FixedThresholdAlgorithm(1e-3), 32).build().getThresholdAlgorithm());
        assertEquals(new AdaptiveThresholdAlgorithm(1e-3), new SharedTrainingMaster.Builder(1e-3, 32).build()
                .getThresholdAlgorithm());
        // the deprecated updatesThreshold is, as in the reference, an adaptive threshold starting there
        assertEquals(new AdaptiveThresholdAlgorithm(1e-3),
                new SharedTrainingMaster.Builder(32).updatesThreshold(1e-3).build().getThresholdAlgorithm());
        // null post-processor: none
        assertEquals(new NoOpResidualPostProcessor(),
                new SharedTrainingMaster.Builder(32).residualPostProcessor(null).build().getResidualPostProcessor());
        // a JSON document with only the required field takes every default
        assertEquals(m, SharedTrainingMaster.fromJson("{\"rddDataSetNumExamples\": 32}"));
        assertEquals(m, SharedTrainingMaster.fromYaml("rddDataSetNumExamples: 32\n"));
    }

    // ---------------------------------------------------------------------------------- validation

    @Test
    @SuppressWarnings("deprecation")
    void everyInvalidOptionIsRefusedNamingItAndTheValue() {
        refused("rddDataSetNumExamples", "0", () -> new SharedTrainingMaster.Builder(0));
        refused("rddDataSetNumExamples", "-3", () -> new SharedTrainingMaster.Builder(new AdaptiveThresholdAlgorithm(), -3));
        refused("thresholdAlgorithm", "null", () -> new SharedTrainingMaster.Builder(null, 8));
        refused("batchSizePerWorker", "0", b -> b.batchSizePerWorker(0));
        refused("batchSizePerWorker", "-16", b -> b.batchSizePerWorker(-16));
        refused("workersPerNode", "0", b -> b.workersPerNode(0));
        refused("workersPerNode", "-2", b -> b.workersPerNode(-2));
        refused("workerPrefetchNumBatches", "-1", b -> b.workerPrefetchNumBatches(-1));
        refused("thresholdAlgorithm", "null", b -> b.thresholdAlgorithm(null));
        refused("updatesThreshold", "0.0", b -> b.updatesThreshold(0));
        refused("updatesThreshold", "NaN", b -> b.updatesThreshold(Double.NaN));
        refused("repartitionData", "null", b -> b.repartitionData(null));
        refused("repartitionStrategy", "null", b -> b.repartitionStrategy(null));
        StorageLevel custom = StorageLevel.apply(true, true, false, false, 3);
        refused("storageLevel", custom.description(), b -> b.storageLevel(custom));
        refused("rddTrainingApproach", "null", b -> b.rddTrainingApproach(null));
        refused("exportDirectory", "\" \"", b -> b.exportDirectory(" "));
        refused("exportDirectory", "\"\"", b -> b.exportDirectory(""));
        refused("debugLongerIterations", "-5", b -> b.debugLongerIterations(-5));
        refused("workerPeriodicGCFrequency", "0", b -> b.workerPeriodicGCFrequency(0));
        refused("relayPortRange", "5000..4000", b -> b.relayPortRange(5000, 4000));
        refused("relayPortRange", "0..10", b -> b.relayPortRange(0, 10));
        refused("relayPortRange", "65000..70000", b -> b.relayPortRange(65000, 70000));
        refused("relayBindAddress", "\"\"", b -> b.relayBindAddress(""));
        refused("relayBindAddress", "\" 10.0.0.1\"", b -> b.relayBindAddress(" 10.0.0.1"));
        refused("relayQueueLimit", "0", b -> b.relayQueueLimit(0));
        refused("relayTimeoutMs", "10", b -> b.relayTimeoutMs(10));
        refused("relayTimeoutMs", "-1", b -> b.relayTimeoutMs(-1));
        // the limits themselves are accepted
        SharedTrainingMaster edge = new SharedTrainingMaster.Builder(1).batchSizePerWorker(1).workersPerNode(1)
                .workerPrefetchNumBatches(0).debugLongerIterations(0).workerPeriodicGCFrequency(1)
                .relayPortRange(1, 65535).relayPortRange(4000, 4000).relayQueueLimit(1).relayTimeoutMs(100)
                .exportDirectory(null).relayBindAddress(null).build();
        assertArrayEquals(new int[] {4000, 4000}, edge.getRelayPortRange());
        assertEquals(100, edge.getRelayTimeoutMs());
    }

    private static void refused(String option, String value, UnaryOperator<SharedTrainingMaster.Builder> bad) {
        refused(option, value, () -> bad.apply(new SharedTrainingMaster.Builder(8)));
    }

    private static void refused(String option, String value, Executable bad) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, bad, option + " = " + value);
        assertTrue(e.getMessage().contains("option " + option + ":"), e.getMessage());
        assertTrue(e.getMessage().contains("invalid value " + value + " "), e.getMessage());
    }

    @Test
    void jsonAndYamlRefuseUnknownFieldsAndInvalidValuesNamingThem() throws Exception {
        String json = everyOptionSet().toJson();
        // unknown fields, at the top and inside the polymorphic options
        refusedJson(json, n -> n.put("batchSizePerWorkr", 3), "batchSizePerWorkr");
        refusedJson(json, n -> ((ObjectNode) n.get("thresholdAlgorithm")).put("initialThreshhold", 1e-3),
                "initialThreshhold");
        refusedJson(json, n -> ((ObjectNode) n.get("residualPostProcessor")).put("type", "magic"), "magic");
        // invalid values, named
        Map<String, UnaryOperator<ObjectNode>> invalid = new LinkedHashMap<>();
        invalid.put("rddDataSetNumExamples", n -> n.put("rddDataSetNumExamples", 0));
        invalid.put("batchSizePerWorker", n -> n.put("batchSizePerWorker", -1));
        invalid.put("workersPerNode", n -> n.put("workersPerNode", 0));
        invalid.put("workerPrefetchNumBatches", n -> n.put("workerPrefetchNumBatches", -1));
        invalid.put("thresholdAlgorithm", n -> n.putNull("thresholdAlgorithm"));
        invalid.put("residualPostProcessor", n -> n.putNull("residualPostProcessor"));
        invalid.put("repartitionData", n -> n.putNull("repartition"));
        invalid.put("repartitionStrategy", n -> n.putNull("repartitionStrategy"));
        invalid.put("storageLevel", n -> n.put("storageLevel", "MEMORY_SOMETIMES"));
        invalid.put("rddTrainingApproach", n -> n.putNull("rddTrainingApproach"));
        invalid.put("exportDirectory", n -> n.put("exportDirectory", ""));
        invalid.put("debugLongerIterations", n -> n.put("debugLongerIterations", -1));
        invalid.put("workerPeriodicGCFrequency", n -> n.put("workerPeriodicGCFrequency", 0));
        invalid.put("relayPortRange", n -> {
            n.putArray("relayPortRange").add(10);
            return n;
        });
        invalid.put("relayBindAddress", n -> n.put("relayBindAddress", " "));
        invalid.put("relayQueueLimit", n -> n.put("relayQueueLimit", 0));
        invalid.put("relayTimeoutMs", n -> n.put("relayTimeoutMs", 5));
        invalid.put("sparsityTarget", n -> ((ObjectNode) n.get("thresholdAlgorithm")).put("sparsityTarget", 2.0));
        invalid.put("frequency", n -> ((ObjectNode) n.get("residualPostProcessor")).put("frequency", 0));
        invalid.put("maxPartitions", n -> n.set("repartitioner",
                JSON.createObjectNode().put("type", "default").put("maxPartitions", 0)));
        List<String> notNamed = new ArrayList<>();
        for (Map.Entry<String, UnaryOperator<ObjectNode>> e : invalid.entrySet()) {
            ObjectNode tree = (ObjectNode) JSON.readTree(json);
            e.getValue().apply(tree); // edits the tree in place
            String bad = tree.toString();
            DL4JInvalidConfigException ex = assertThrows(DL4JInvalidConfigException.class,
                    () -> SharedTrainingMaster.fromJson(bad), e.getKey());
            if (!ex.getMessage().contains(e.getKey())) {
                notNamed.add(e.getKey() + ": " + ex.getMessage());
            }
        }
        assertEquals(List.of(), notNamed);
        // YAML goes through the same checks
        String yaml = everyOptionSet().toYaml();
        DL4JInvalidConfigException ex = assertThrows(DL4JInvalidConfigException.class,
                () -> SharedTrainingMaster.fromYaml(yaml.replace("relayQueueLimit: 9", "relayQueueLimit: 0")));
        assertTrue(ex.getMessage().contains("relayQueueLimit") && ex.getMessage().contains("YAML"), ex.getMessage());
        ex = assertThrows(DL4JInvalidConfigException.class,
                () -> SharedTrainingMaster.fromYaml(yaml + "relayQueueLimitt: 3\n"));
        assertTrue(ex.getMessage().contains("relayQueueLimitt"), ex.getMessage());
        assertThrows(DL4JInvalidConfigException.class, () -> SharedTrainingMaster.fromJson("{}"));
        assertThrows(DL4JInvalidConfigException.class, () -> SharedTrainingMaster.fromJson("not json"));
    }

    private static void refusedJson(String json, UnaryOperator<ObjectNode> edit, String named) throws Exception {
        ObjectNode tree = (ObjectNode) JSON.readTree(json);
        edit.apply(tree); // edits the tree in place
        String bad = tree.toString();
        DL4JInvalidConfigException e = assertThrows(DL4JInvalidConfigException.class,
                () -> SharedTrainingMaster.fromJson(bad));
        assertTrue(e.getMessage().contains(named), e.getMessage());
    }

    // ------------------------------------------------------------------ equality, stats, toString

    @Test
    void equalityCoversEveryOption() {
        SharedTrainingMaster base = everyOptionSet();
        List<SharedTrainingMaster> variants = List.of(
                new SharedTrainingMaster.Builder(8).build(),
                new SharedTrainingMaster.Builder(7).build(),
                new SharedTrainingMaster.Builder(7).batchSizePerWorker(17).build(),
                new SharedTrainingMaster.Builder(7).workersPerNode(2).build(),
                new SharedTrainingMaster.Builder(7).workerPrefetchNumBatches(0).build(),
                new SharedTrainingMaster.Builder(7).thresholdAlgorithm(new FixedThresholdAlgorithm(1e-3)).build(),
                new SharedTrainingMaster.Builder(7).residualPostProcessor(null).build(),
                new SharedTrainingMaster.Builder(7).repartitioner(new NoOpRepartitioner()).build(),
                repartitionNever(),
                new SharedTrainingMaster.Builder(7).storageLevel(StorageLevel.DISK_ONLY()).build(),
                new SharedTrainingMaster.Builder(7).rddTrainingApproach(RDDTrainingApproach.Direct).build(),
                new SharedTrainingMaster.Builder(7).exportDirectory("/tmp/e").build(),
                new SharedTrainingMaster.Builder(7).rngSeed(1).build(),
                new SharedTrainingMaster.Builder(7).collectTrainingStats(true).build(),
                new SharedTrainingMaster.Builder(7).encodingDebugMode(true).build(),
                new SharedTrainingMaster.Builder(7).debugLongerIterations(1).build(),
                new SharedTrainingMaster.Builder(7).workerTogglePeriodicGC(false).build(),
                new SharedTrainingMaster.Builder(7).workerPeriodicGCFrequency(1).build(),
                new SharedTrainingMaster.Builder(7).relayPortRange(1, 2).build(),
                new SharedTrainingMaster.Builder(7).relayBindAddress("h").build(),
                new SharedTrainingMaster.Builder(7).relayQueueLimit(1).build(),
                new SharedTrainingMaster.Builder(7).relayTimeoutMs(100).build());
        for (int i = 0; i < variants.size(); i++) {
            assertNotEquals(base, variants.get(i));
            for (int j = i + 1; j < variants.size(); j++) {
                assertNotEquals(variants.get(i), variants.get(j), i + " vs " + j);
            }
        }
        assertEquals(everyOptionSet(), everyOptionSet());
        assertEquals(everyOptionSet().hashCode(), everyOptionSet().hashCode());
        assertTrue(base.toString().startsWith("SharedTrainingMaster"), base.toString());
        assertTrue(base.toString().contains("relayQueueLimit"), base.toString());
    }

    @SuppressWarnings("deprecation")
    private static SharedTrainingMaster repartitionNever() {
        return new SharedTrainingMaster.Builder(7).repartitionData(Repartition.Never).build();
    }

    @Test
    void trainingStatsAreReturnedOnlyWhenCollected() throws Exception {
        SharedTrainingMaster m = new SharedTrainingMaster.Builder(8).collectTrainingStats(true).build();
        assertNull(m.getTrainingStats()); // no fit yet
        SparkTrainingStats stats = new SparkTrainingStats();
        Field last = SharedTrainingMaster.class.getDeclaredField("lastStats");
        last.setAccessible(true);
        last.set(m, stats);
        assertSame(stats, m.getTrainingStats());
        m.setCollectTrainingStats(false);
        assertFalse(m.getIsCollectTrainingStats());
        assertNull(m.getTrainingStats());
        m.setCollectTrainingStats(true);
        assertTrue(m.getIsCollectTrainingStats());
        // statistics are not configuration: they are not written and not shipped
        assertEquals(m, SharedTrainingMaster.fromJson(m.toJson()));
        assertNull(SharedTrainingMaster.fromJson(m.toJson()).getTrainingStats());
        assertNull(javaRoundTrip(m).getTrainingStats());
    }

    @Test
    void relayPortRangeIsDefensivelyCopied() {
        SharedTrainingMaster m = new SharedTrainingMaster.Builder(8).relayPortRange(5000, 5010).build();
        m.getRelayPortRange()[0] = 1;
        assertArrayEquals(new int[] {5000, 5010}, m.getRelayPortRange());
    }
}
