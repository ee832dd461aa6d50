package org.ferrodl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.storage.StorageLevel;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.spark.api.Repartition;
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
                .rngSeed(123456789L).collectTrainingStats(true).build();
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
        assertEquals(m, ParameterAveragingTrainingMaster.fromJson(m.toJson()));
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
