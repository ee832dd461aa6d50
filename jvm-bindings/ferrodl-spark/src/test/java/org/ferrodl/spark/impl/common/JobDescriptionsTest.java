package org.ferrodl.spark.impl.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.spark.SparkTestSupport;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;
import org.junit.jupiter.api.Test;

/** The Spark UI names ferrodl's jobs by fit, epoch and split, and the caller's own description survives. */
class JobDescriptionsTest {

    /** Descriptions of the jobs started while it was registered. */
    static final class Descriptions extends SparkListener {
        final List<String> seen = new CopyOnWriteArrayList<>();

        @Override
        public void onJobStart(SparkListenerJobStart start) {
            String d = start.properties() == null ? null : start.properties().getProperty("spark.job.description");
            seen.add(String.valueOf(d));
        }

        /** Waits (listener events are asynchronous) until a description matches, up to 20 s. */
        void await(String regex) throws InterruptedException {
            Pattern p = Pattern.compile(regex);
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (seen.stream().noneMatch(d -> p.matcher(d).matches())) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no job described as /" + regex + "/ among " + seen);
                }
                Thread.sleep(20);
            }
        }
    }

    @Test
    void fitEpochAndSplitAreInTheJobDescriptions() throws Exception {
        JavaSparkContext sc = SparkTestSupport.sc();
        Descriptions d = new Descriptions();
        sc.sc().addSparkListener(d);
        try {
            sc.setJobDescription("the user's own jobs");
            JavaRDD<DataSet> data = sc.parallelize(SparkTestSupport.data(16, 4, 5), 2);
            ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4)
                    .batchSizePerWorker(4).averagingFrequency(2).rngSeed(3).build();
            SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Sgd(0.1), 0), tm);
            net.fit(data);
            net.fit(data);
            net.evaluate(data);
            // 16 objects, 2 workers, 2 objects per worker and split: 4 splits per epoch, all in one job
            d.await("ferrodl fit \\d+ \\(epoch 0, ParameterAveragingTrainingMaster\\): splits 1-4/4 \\(averaging "
                    + "rounds of 2 workers in one job\\)");
            d.await("ferrodl fit \\d+ \\(epoch 1, ParameterAveragingTrainingMaster\\): splits 1-4/4 .*");
            // one Spark job per split where the rounds cannot run in one job
            sc.setLocalProperty("spark.ferrodl.paramavg.roundsInOneJob", "false");
            try {
                net.fit(data);
            } finally {
                sc.setLocalProperty("spark.ferrodl.paramavg.roundsInOneJob", null);
            }
            d.await("ferrodl fit \\d+ \\(epoch 2, ParameterAveragingTrainingMaster\\): split 1/4");
            d.await("ferrodl fit \\d+ \\(epoch 2, ParameterAveragingTrainingMaster\\): split 4/4");
            d.await("ferrodl evaluate");
            assertEquals("the user's own jobs", sc.getLocalProperty("spark.job.description"),
                    "ferrodl puts the caller's description back");
            assertEquals(null, sc.getLocalProperty(JobDescriptions.FIT_DESCRIPTION));
            sc.parallelize(List.of(1, 2)).count();
            d.await("the user's own jobs");
            assertTrue(d.seen.stream().filter(s -> s.startsWith("ferrodl fit"))
                    .allMatch(s -> s.matches("ferrodl fit \\d+ \\(epoch [012], ParameterAveragingTrainingMaster\\)"
                            + "(: (split [1-4]/4|splits 1-4/4 \\(averaging rounds of 2 workers in one job\\)"
                            + "|counting DataSet objects|exporting DataSet objects))?")), d.seen.toString());

            SharedTrainingMaster shared = new SharedTrainingMaster.Builder(4).batchSizePerWorker(4).rngSeed(1).build();
            new SparkDl4jMultiLayer(sc, SparkTestSupport.conf(new Sgd(0.1), 0), shared).fit(data);
            d.await("ferrodl fit \\d+ \\(epoch 0, SharedTrainingMaster\\): gradient-sharing workers");
            assertEquals("the user's own jobs", sc.getLocalProperty("spark.job.description"));
        } finally {
            sc.sc().removeSparkListener(d);
            sc.setJobDescription(null);
        }
    }
}
