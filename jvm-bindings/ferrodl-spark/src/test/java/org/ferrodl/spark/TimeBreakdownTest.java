package org.ferrodl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.spark.api.SparkTrainingStats;
import org.ferrodl.spark.api.TimeBreakdown;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;
import org.junit.jupiter.api.Test;

/** Where a distributed fit's time goes (SparkTrainingStats.getTimeBreakdown), for both masters. */
public class TimeBreakdownTest {

    @Test
    void perIterationTimesByHand() {
        // 2 workers x 10 minibatches, 100 ms wall: 10 ms per iteration of wall time
        TimeBreakdown b = new TimeBreakdown("m", 100, 10, 20)
                .worker("compute", 80)      // 80 ms over 20 worker minibatches: 4 ms
                .driver("broadcast", 30)    // every worker waits: 30 / 10 = 3 ms
                .concurrent("reader", 40);  // 2 ms, not on the critical path
        assertEquals(10.0, b.getWallMillisPerIteration(), 1e-12);
        Map<String, Double> per = perIteration(b);
        assertEquals(4.0, per.get("compute"), 1e-12);
        assertEquals(3.0, per.get("broadcast"), 1e-12);
        assertEquals(2.0, per.get("reader"), 1e-12);
        assertEquals(3.0, b.getUnaccountedMillis(), 1e-12);
        assertTrue(b.format().contains("compute [worker]"), b.format());
    }

    @Test
    void parameterAveragingReportsItsPhases() {
        List<DataSet> data = SparkTestSupport.data(16, 8, 3);
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 8)
                .batchSizePerWorker(8).averagingFrequency(2).collectTrainingStats(true).build();
        TimeBreakdown b = fitAndBreakdown(tm, data);
        assertEquals("parameter averaging, rounds in one job", b.getMaster());
        // 16 objects of 8 examples, 2 workers: 8 minibatches each, 16 in all
        assertEquals(8, b.getIterationsPerWorker());
        assertEquals(16, b.getWorkerIterations());
        Map<String, Double> per = perIteration(b);
        assertTrue(per.containsKey("fit: forward, backward, updater (+ JNI, hooks)"), per.toString());
        assertTrue(per.containsKey("exchange: wait for every worker's message of the round"), per.toString());
        assertTrue(per.containsKey("Spark scheduling, shuffle and task start"), per.toString());
        checkSane(b);
        // one Spark job per split (the rounds cannot always run in one job): its own phases
        SparkTestSupport.sc().setLocalProperty("spark.ferrodl.paramavg.roundsInOneJob", "false");
        try {
            b = fitAndBreakdown(tm, data);
        } finally {
            SparkTestSupport.sc().setLocalProperty("spark.ferrodl.paramavg.roundsInOneJob", null);
        }
        assertEquals("parameter averaging", b.getMaster());
        per = perIteration(b);
        assertTrue(per.containsKey("snapshot + broadcast of params and updater state"), per.toString());
        assertTrue(per.containsKey("results to the driver + aggregation"), per.toString());
        checkSane(b);
    }

    @Test
    void parameterAveragingCountsTheExportOfAnUnpersistedRdd() {
        // the default Export approach on an RDD the user did not persist: the first fit writes the
        // files (its own phase, inside the fit's time); a second fit of the same RDD reuses them
        List<DataSet> data = SparkTestSupport.data(16, 8, 5);
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 8)
                .batchSizePerWorker(8).averagingFrequency(2).collectTrainingStats(true).build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(SparkTestSupport.sc(),
                SparkTestSupport.conf(new Adam(1e-2), 0), tm);
        JavaRDD<DataSet> rdd = SparkTestSupport.sc().parallelize(data, 2);
        try {
            spark.fit(rdd);
            TimeBreakdown first = tm.getTrainingStats().getTimeBreakdown();
            Map<String, Double> per = perIteration(first);
            String export = "data: export to files (once per RDD)";
            assertTrue(per.get(export) > 0, first.format());
            assertEquals(export, first.getPhases().get(0).name(), "the export comes first");
            checkSane(first);
            spark.fit(rdd);
            TimeBreakdown second = tm.getTrainingStats().getTimeBreakdown();
            assertTrue(!perIteration(second).containsKey(export), second.format());
            checkSane(second);
        } finally {
            tm.deleteTempFiles(SparkTestSupport.sc());
        }
    }

    @Test
    void gradientSharingReportsItsPhases() {
        List<DataSet> data = SparkTestSupport.data(16, 8, 4);
        SharedTrainingMaster tm = new SharedTrainingMaster.Builder(8).batchSizePerWorker(8)
                .collectTrainingStats(true).build();
        TimeBreakdown b = fitAndBreakdown(tm, data);
        assertEquals("gradient sharing", b.getMaster());
        assertEquals(16, b.getWorkerIterations());
        Map<String, Double> per = perIteration(b);
        // the native step phases are measured per step: compute and encode took time
        assertTrue(per.get("compute: forward, backward, updater") > 0, per.toString());
        assertTrue(per.get("encode (threshold, residual)") > 0, per.toString());
        checkSane(b);
    }

    private static TimeBreakdown fitAndBreakdown(org.ferrodl.spark.api.TrainingMaster tm, List<DataSet> data) {
        JavaRDD<DataSet> rdd = SparkTestSupport.sc().parallelize(data, 2).persist(StorageLevel.MEMORY_ONLY());
        try {
            SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(SparkTestSupport.sc(),
                    SparkTestSupport.conf(new Adam(1e-2), 0), tm);
            spark.fit(rdd);
            SparkTrainingStats stats = tm.getTrainingStats();
            assertNotNull(stats);
            assertNotNull(stats.getTimeBreakdown(), "collectTrainingStats(true) fills the time breakdown");
            return stats.getTimeBreakdown();
        } finally {
            rdd.unpersist(false);
        }
    }

    /** Every phase is a duration (>= 0); the critical-path phases do not exceed the wall time. */
    private static void checkSane(TimeBreakdown b) {
        double critical = 0;
        for (TimeBreakdown.Phase p : b.getPhases()) {
            assertTrue(p.totalMillis() >= 0, p.toString());
            if (p.criticalPath()) {
                critical += p.perIterationMillis();
            }
        }
        assertTrue(b.getFitMillis() > 0);
        // 10% slack: phases on different workers overlap imperfectly with the slowest one
        assertTrue(critical <= b.getWallMillisPerIteration() * 1.1 + 0.5,
                "phases " + critical + " ms exceed the wall " + b.getWallMillisPerIteration() + " ms\n" + b.format());
    }

    private static Map<String, Double> perIteration(TimeBreakdown b) {
        Map<String, Double> m = new HashMap<>();
        for (TimeBreakdown.Phase p : b.getPhases()) {
            m.put(p.name(), p.perIterationMillis());
        }
        return m;
    }
}
