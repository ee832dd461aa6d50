package org.ferrodl.spark;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.api.java.JavaRDD;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.TimeBreakdown;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Parameter averaging's rounds inside one Spark job (docs/ARCHITECTURE.md §9.2) train exactly as
 * one Spark job per split: same parameters, updater state, counters and score, for 2–4 workers,
 * with and without saveUpdater and rngSeed, with a short last split that leaves workers idle.
 */
class AveragingRoundsTest {
    private static final String ONE_JOB = "spark.ferrodl.paramavg.roundsInOneJob";
    private static final String IN_PROCESS = "spark.ferrodl.paramavg.inProcess";

    /** Both paths sum in double and round once; only the order of two or three additions may differ. */
    private static final float TOL = 1e-6f;

    static Stream<Arguments> settings() {
        return Stream.of(Arguments.of(2, true, null), Arguments.of(3, true, 7L), Arguments.of(3, false, null),
                Arguments.of(4, true, 11L));
    }

    private record Fit(MultiLayerNetwork net, double score, TimeBreakdown breakdown) {
    }

    private static Fit fit(MultiLayerConfiguration conf, List<DataSet> data, int workers, boolean saveUpdater,
                           Long seed, boolean oneJob, int epochs) {
        return fit(conf, data, workers, saveUpdater, seed, oneJob, epochs, true);
    }

    private static Fit fit(MultiLayerConfiguration conf, List<DataSet> data, int workers, boolean saveUpdater,
                           Long seed, boolean oneJob, int epochs, boolean inProcess) {
        ParameterAveragingTrainingMaster.Builder b = new ParameterAveragingTrainingMaster.Builder(workers, 4)
                .batchSizePerWorker(4).averagingFrequency(2).saveUpdater(saveUpdater).workerPrefetchNumBatches(1)
                .collectTrainingStats(true);
        if (seed != null) {
            b.rngSeed(seed);
        }
        ParameterAveragingTrainingMaster tm = b.build();
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), conf, tm);
        JavaRDD<DataSet> rdd = sc().parallelize(data, 3);
        if (workers == 3) {
            // cached with one partition per worker: the one-job fit deals it without a shuffle (DealtRDD)
            rdd = rdd.cache();
        }
        sc().setLocalProperty(ONE_JOB, Boolean.toString(oneJob));
        sc().setLocalProperty(IN_PROCESS, Boolean.toString(inProcess));
        try {
            for (int e = 0; e < epochs; e++) {
                spark.fit(rdd);
            }
        } finally {
            sc().setLocalProperty(ONE_JOB, null);
            sc().setLocalProperty(IN_PROCESS, null);
            rdd.unpersist(false);
        }
        return new Fit(spark.getNetwork(), spark.getScore(), tm.getTrainingStats().getTimeBreakdown());
    }

    @ParameterizedTest
    @MethodSource("settings")
    void roundsInOneJobTrainAsOneJobPerSplit(int workers, boolean saveUpdater, Long seed) {
        MultiLayerConfiguration conf = conf(saveUpdater ? new Adam(0.01) : new Nesterovs(0.05, 0.9), 1e-3);
        // 2 objects per worker and split; 23 objects leave a short last split with idle workers
        List<DataSet> data = data(23, 4, 40 + workers);
        Fit perSplit = fit(conf, data, workers, saveUpdater, seed, false, 2);
        Fit oneJob = fit(conf, data, workers, saveUpdater, seed, true, 2);

        assertEquals("parameter averaging", perSplit.breakdown().getMaster());
        assertEquals("parameter averaging, rounds in one job", oneJob.breakdown().getMaster());
        float diff = maxAbsDiff(perSplit.net().params().toFloatVector(), oneJob.net().params().toFloatVector());
        assertTrue(diff <= TOL, "params: max |one job - per split| = " + diff);
        float updaterDiff = maxAbsDiff(perSplit.net().getUpdaterState().toFloatVector(),
                oneJob.net().getUpdaterState().toFloatVector());
        assertTrue(updaterDiff <= TOL, "updater state: max |one job - per split| = " + updaterDiff);
        assertEquals(perSplit.net().getIterationCount(), oneJob.net().getIterationCount());
        assertEquals(2, oneJob.net().getEpochCount());
        assertEquals(perSplit.score(), oneJob.score(), 1e-6);
        // local[N]: the workers exchanged through the driver's in-process hub; through the relay's
        // sockets they hold the same bits
        Fit overRelay = fit(conf, data, workers, saveUpdater, seed, true, 2, false);
        assertEquals(0f, maxAbsDiff(oneJob.net().params().toFloatVector(), overRelay.net().params().toFloatVector()));
        assertEquals(0f, maxAbsDiff(oneJob.net().getUpdaterState().toFloatVector(),
                overRelay.net().getUpdaterState().toFloatVector()));
        assertEquals(oneJob.score(), overRelay.score());
        // the exchange is measured, and the phases stay within the wall time
        assertTrue(oneJob.breakdown().format().contains("exchange: wait for every worker's message of the round"),
                oneJob.breakdown().format());
    }

    /** More workers than task slots (local[4]): every worker task cannot run at once, so one job per split. */
    @Test
    void moreWorkersThanTaskSlotsFallBackToOneJobPerSplit() {
        MultiLayerConfiguration conf = conf(new Adam(0.01), 0);
        Fit f = fit(conf, data(20, 4, 5), 5, true, null, true, 1);
        assertEquals("parameter averaging", f.breakdown().getMaster());
        assertEquals(4, f.net().getIterationCount()); // 2 splits of 2 minibatches per worker
        assertTrue(Double.isFinite(f.score()));
    }
}
