package org.ferrodl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.storage.StorageLevel;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;
import org.junit.jupiter.api.Test;

/**
 * The Spark jobs a fit costs (issue 15): every job is scheduling and task start on the critical
 * path of an epoch, so a fit of a persisted RDD the master has seen before runs only its training.
 */
public class SparkPathJobsTest {

    @Test
    void gradientSharingOnAPersistedRddRunsOneJobPerEpochAfterTheFirst() throws Exception {
        List<DataSet> data = SparkTestSupport.data(8, 8, 5);
        JavaRDD<DataSet> rdd = SparkTestSupport.sc().parallelize(data, 2).persist(StorageLevel.MEMORY_ONLY());
        AtomicInteger jobs = new AtomicInteger();
        SparkListener counter = new SparkListener() {
            @Override
            public void onJobStart(SparkListenerJobStart jobStart) {
                jobs.incrementAndGet();
            }
        };
        try {
            SharedTrainingMaster tm = new SharedTrainingMaster.Builder(8).batchSizePerWorker(8).build();
            SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(SparkTestSupport.sc(),
                    SparkTestSupport.conf(new Adam(1e-2), 0), tm);
            spark.fit(rdd); // first epoch: counts the partitions (one job) and trains (one job)
            SparkTestSupport.sc().sc().addSparkListener(counter);
            spark.fit(rdd);
            SparkTestSupport.sc().sc().listenerBus().waitUntilEmpty();
            // the second epoch: the training job only (it used to count the RDD twice more:
            // isEmpty and the repartitioner's partition sizes)
            assertEquals(1, jobs.get());
            assertEquals(2, spark.getNetwork().getEpochCount());
        } finally {
            SparkTestSupport.sc().sc().removeSparkListener(counter);
            rdd.unpersist(false);
        }
    }

    private interface Fit {
        void run() throws Exception;
    }

    /** Jobs started while {@code fit} runs. */
    private static int jobsOf(Fit fit) throws Exception {
        AtomicInteger jobs = new AtomicInteger();
        SparkListener counter = new SparkListener() {
            @Override
            public void onJobStart(SparkListenerJobStart jobStart) {
                jobs.incrementAndGet();
            }
        };
        SparkTestSupport.sc().sc().listenerBus().waitUntilEmpty();
        SparkTestSupport.sc().sc().addSparkListener(counter);
        try {
            fit.run();
            SparkTestSupport.sc().sc().listenerBus().waitUntilEmpty();
            return jobs.get();
        } finally {
            SparkTestSupport.sc().sc().removeSparkListener(counter);
        }
    }

    @Test
    void anUnpersistedRddIsExportedAndTrainedWithoutCountingJobs() throws Exception {
        // the Export approach (the default) on an RDD the user did not persist: the export knows how
        // many files each partition wrote, so neither isEmpty nor the repartitioner counts them
        List<DataSet> data = SparkTestSupport.data(9, 8, 6);
        SharedTrainingMaster shared = new SharedTrainingMaster.Builder(8).batchSizePerWorker(8).build();
        SparkDl4jMultiLayer sharing = new SparkDl4jMultiLayer(SparkTestSupport.sc(),
                SparkTestSupport.conf(new Adam(1e-2), 0), shared);
        // 9 objects in 3 partitions (3, 3, 3) dealt to the 2 workers of local[2]: the export and the
        // training (the deal's shuffle runs as a stage of the training job); it was 4 jobs, with
        // isEmpty and the repartitioner's count of the paths
        assertEquals(2, jobsOf(() -> sharing.fit(SparkTestSupport.sc().parallelize(data, 3))));
        assertEquals(1, sharing.getNetwork().getEpochCount());

        org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster averaging =
                new org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster.Builder(2, 8)
                        .batchSizePerWorker(8).averagingFrequency(2).build();
        SparkDl4jMultiLayer averaged = new SparkDl4jMultiLayer(SparkTestSupport.sc(),
                SparkTestSupport.conf(new Adam(1e-2), 0), averaging);
        JavaRDD<DataSet> fresh = SparkTestSupport.sc().parallelize(data, 2);
        int first = jobsOf(() -> averaged.fit(fresh));
        // the same RDD again: its export is reused, and its sizes too
        int second = jobsOf(() -> averaged.fit(fresh));
        // the export and the training (counting the paths was a third job); then the training only
        assertEquals(2, first);
        assertEquals(1, second);
        assertEquals(2, averaged.getNetwork().getEpochCount());
    }
}
