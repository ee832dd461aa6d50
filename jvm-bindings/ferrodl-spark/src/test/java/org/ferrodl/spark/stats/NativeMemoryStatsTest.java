package org.ferrodl.spark.stats;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.ferrodl.jni.NativeInfo;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.SparkTrainingStats.SharingWorkerStats;
import org.ferrodl.spark.api.SparkTrainingStats.WorkerStats;
import org.ferrodl.spark.impl.common.TaskThreads;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The native memory budget on Spark: a fit under a budget too small for its network is refused
 * with a message naming the bytes, the budget and the option to raise; the same fit passes under a
 * larger one, and both masters' training statistics carry each executor's native bytes (in use at
 * the end of a task, and the peak), which the statistics page lists.
 */
class NativeMemoryStatsTest {

    @AfterEach
    void restore() {
        SparkEnv.get().conf().remove(TaskThreads.NATIVE_MEMORY_BUDGET);
        NativeInfo.setNativeMemoryBudget(0);
    }

    private static String messages(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c.getMessage()).append('\n');
        }
        return b.toString();
    }

    @Test
    void aFitUnderATinyBudgetIsRefusedClearlyAndPassesUnderALargerOneWithNativeBytesInItsStats() {
        SparkConf conf = SparkEnv.get().conf();
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(4).averagingFrequency(2).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Sgd(0.1), 0), tm);
        spark.setCollectTrainingStats(true);

        conf.set(TaskThreads.NATIVE_MEMORY_BUDGET, "1k");
        Exception e = assertThrows(Exception.class, () -> spark.fit(sc().parallelize(data(8, 4, 5), 2)));
        String m = messages(e);
        assertTrue(m.contains("NativeMemoryException"), m);
        assertTrue(m.contains("bytes of native memory, but the native memory budget is 1,024 bytes"), m);
        assertTrue(m.contains("spark.ferrodl.nativeMemoryBudget"), m);

        // An application's budget does not change between jobs; this test changes it in one JVM, where
        // tasks that do not train (the export of minibatches) would still see the last one set.
        conf.set(TaskThreads.NATIVE_MEMORY_BUDGET, "1g");
        NativeInfo.setNativeMemoryBudget(1L << 30);
        spark.fit(sc().parallelize(data(8, 4, 5), 2));
        SparkTrainingStats stats = spark.getSparkTrainingStats();
        List<WorkerStats> workers = stats.getWorkerStats();
        assertEquals(4, workers.size(), "8 objects, 2 workers x 2 objects: 2 splits of 2 tasks");
        long paramBytes = 4 * spark.getNetwork().numParams();
        for (WorkerStats w : workers) {
            // The worker's own network (parameters, gradients) is among the bytes in use.
            assertTrue(w.nativeBytesInUse() > 2 * paramBytes && w.nativeBytesPeak() >= w.nativeBytesInUse(),
                    w.toString());
        }
        Map<String, Long> peak = stats.getNativeBytesPeakByExecutor();
        assertEquals(stats.getExecutorIds(), List.copyOf(peak.keySet()));
        long driverPeak = peak.get("driver");
        assertEquals(workers.stream().mapToLong(WorkerStats::nativeBytesPeak).max().getAsLong(), driverPeak);
        assertTrue(summary(stats).contains(List.of("native memory peak, executor driver",
                String.format(java.util.Locale.ROOT, "%,d bytes", driverPeak))), summary(stats).toString());
    }

    @Test
    void gradientSharingStatsCarryTheExecutorsNativeBytes() {
        SharedTrainingMaster tm = new SharedTrainingMaster.Builder(4).batchSizePerWorker(4).rngSeed(1)
                .collectTrainingStats(true).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf(new Sgd(0.1), 0), tm);
        spark.fit(sc().parallelize(data(8, 4, 7), 2));
        List<SharingWorkerStats> workers = tm.getTrainingStats().getSharingWorkerStats();
        assertTrue(!workers.isEmpty());
        long paramBytes = 4 * spark.getNetwork().numParams();
        for (SharingWorkerStats w : workers) {
            assertTrue(w.nativeBytesInUse() > 2 * paramBytes && w.nativeBytesPeak() >= w.nativeBytesInUse(),
                    w.toString());
        }
        assertTrue(tm.getTrainingStats().getNativeBytesPeakByExecutor().get("driver") > 0);
    }

    @SuppressWarnings("unchecked")
    private static List<List<Object>> summary(SparkTrainingStats stats) {
        return (List<List<Object>>) StatsUtils.pageData(stats).get("summary");
    }
}
