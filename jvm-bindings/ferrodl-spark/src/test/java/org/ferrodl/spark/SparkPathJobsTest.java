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
}
