package org.ferrodl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.storage.StorageLevel;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.nn.api.Model;
import org.ferrodl.spark.api.RDDTrainingApproach;
import org.ferrodl.spark.api.Repartition;
import org.ferrodl.spark.api.TrainingHook;
import org.ferrodl.spark.api.RepartitionStrategy;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.api.Test;

/** Invariant 10 for ParameterAveragingTrainingMaster: JSON and YAML round trips with every option set. */
class TrainingMasterSerializationTest {

    private static ParameterAveragingTrainingMaster everyOptionSet() {
        return new ParameterAveragingTrainingMaster.Builder(7, 32)
                .batchSizePerWorker(48).averagingFrequency(9).aggregationDepth(3).saveUpdater(false)
                .workerPrefetchNumBatches(4).repartionData(Repartition.Never)
                .repartitionStrategy(RepartitionStrategy.Balanced).storageLevel(StorageLevel.MEMORY_AND_DISK_SER())
                .rngSeed(123456789L).collectTrainingStats(true)
                .storageLevelStreams(StorageLevel.DISK_ONLY()).rddTrainingApproach(RDDTrainingApproach.Direct)
                .exportDirectory("hdfs://namenode:8020/tmp/export").trainingHooks(new MarkerHook("a"))
                .build();
    }

    /** A hook with state, to see it survive the round trip (hooks travel by class name). */
    public static final class MarkerHook implements TrainingHook {
        private static final long serialVersionUID = 1L;
        public String marker;

        public MarkerHook() {
        }

        MarkerHook(String marker) {
            this.marker = marker;
        }

        @Override
        public void preUpdate(DataSet minibatch, Model model) {
        }

        @Override
        public void postUpdate(DataSet minibatch, Model model) {
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof MarkerHook h && java.util.Objects.equals(h.marker, marker);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hashCode(marker);
        }
    }

    private static void assertEveryOption(ParameterAveragingTrainingMaster m) {
        assertEquals(7, m.getNumWorkers());
        assertEquals(32, m.getRddDataSetNumExamples());
        assertEquals(48, m.getBatchSizePerWorker());
        assertEquals(9, m.getAveragingFrequency());
        assertEquals(3, m.getAggregationDepth());
        assertFalse(m.isSaveUpdater());
        assertEquals(4, m.getPrefetchNumBatches());
        assertEquals(Repartition.Never, m.getRepartition());
        assertEquals(RepartitionStrategy.Balanced, m.getRepartitionStrategy());
        assertEquals(StorageLevel.MEMORY_AND_DISK_SER(), m.getStorageLevel());
        assertEquals(123456789L, m.getRngSeed());
        assertTrue(m.getIsCollectTrainingStats());
        assertEquals(StorageLevel.DISK_ONLY(), m.getStorageLevelStreams());
        assertEquals(RDDTrainingApproach.Direct, m.getRddTrainingApproach());
        assertEquals("hdfs://namenode:8020/tmp/export", m.getExportDirectory());
        assertEquals(java.util.List.of(new MarkerHook("a")), m.getTrainingHooks());
    }

    @Test
    void jsonRoundTripKeepsEveryOption() {
        ParameterAveragingTrainingMaster m = everyOptionSet();
        ParameterAveragingTrainingMaster back = ParameterAveragingTrainingMaster.fromJson(m.toJson());
        assertEveryOption(back);
        assertEquals(m, back);
    }

    @Test
    void yamlRoundTripKeepsEveryOption() {
        ParameterAveragingTrainingMaster m = everyOptionSet();
        ParameterAveragingTrainingMaster back = ParameterAveragingTrainingMaster.fromYaml(m.toYaml());
        assertEveryOption(back);
        assertEquals(m, back);
    }

    @Test
    void defaultsFollowTheReferenceDocumentation() {
        ParameterAveragingTrainingMaster m = new ParameterAveragingTrainingMaster.Builder(16).build();
        assertNull(m.getNumWorkers(), "numWorkers defaults to Spark's default parallelism at fit time");
        assertTrue(m.isSaveUpdater(), "saveUpdater is documented as enabled by default");
        assertEquals(2, m.getAggregationDepth());
        assertEquals(0, m.getPrefetchNumBatches());
        assertEquals(StorageLevel.MEMORY_ONLY_SER(), m.getStorageLevel());
        assertNull(m.getRngSeed());
        assertFalse(m.getIsCollectTrainingStats());
        assertEquals(RDDTrainingApproach.Export, m.getRddTrainingApproach(), "Export is the documented default");
        assertNull(m.getExportDirectory());
        assertEquals(StorageLevel.MEMORY_ONLY(), m.getStorageLevelStreams());
        assertEquals(Repartition.Always, m.getRepartition());
        assertEquals(RepartitionStrategy.Balanced, m.getRepartitionStrategy());
        assertTrue(m.getTrainingHooks().isEmpty());
        assertEquals(m, ParameterAveragingTrainingMaster.fromJson(m.toJson()));
    }

    @Test
    void hooksAreAddedAndRemoved() {
        ParameterAveragingTrainingMaster m = new ParameterAveragingTrainingMaster.Builder(4)
                .trainingHooks(java.util.List.of(new MarkerHook("x"))).build();
        m.addHook(new MarkerHook("y"));
        assertEquals(java.util.List.of(new MarkerHook("x"), new MarkerHook("y")), m.getTrainingHooks());
        m.removeHook(new MarkerHook("x"));
        assertEquals(java.util.List.of(new MarkerHook("y")), m.getTrainingHooks());
        assertEquals(m, ParameterAveragingTrainingMaster.fromJson(m.toJson()));
        assertThrows(NullPointerException.class, () -> m.addHook(null));
        assertThrows(DL4JInvalidConfigException.class,
                () -> new ParameterAveragingTrainingMaster.Builder(4).exportDirectory(" "));
    }

    @Test
    void invalidOptionsAreRefusedNamingTheOption() {
        DL4JInvalidConfigException e = assertThrows(DL4JInvalidConfigException.class,
                () -> new ParameterAveragingTrainingMaster.Builder(16).batchSizePerWorker(0));
        assertTrue(e.getMessage().contains("batchSizePerWorker"), e.getMessage());
        String json = new ParameterAveragingTrainingMaster.Builder(16).build().toJson()
                .replace("\"averagingFrequency\" : 5", "\"averagingFrequency\" : -1");
        e = assertThrows(DL4JInvalidConfigException.class, () -> ParameterAveragingTrainingMaster.fromJson(json));
        assertTrue(e.getMessage().contains("averagingFrequency"), e.getMessage());
        e = assertThrows(DL4JInvalidConfigException.class,
                () -> ParameterAveragingTrainingMaster.fromJson("{\"noSuchOption\": 1}"));
        assertTrue(e.getMessage().contains("noSuchOption"), e.getMessage());
    }
}
