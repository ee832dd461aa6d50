package org.ferrodl.spark.earlystopping;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.net;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.EarlyStoppingResult;
import org.ferrodl.earlystopping.scorecalc.DataSetLossCalculator;
import org.ferrodl.earlystopping.scorecalc.ScoreCalculator;
import org.ferrodl.earlystopping.termination.MaxEpochsTerminationCondition;
import org.ferrodl.earlystopping.termination.MaxScoreIterationTerminationCondition;
import org.ferrodl.earlystopping.trainer.EarlyStoppingTrainer;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.api.Test;

/** SparkEarlyStoppingTrainer with one worker equals the local EarlyStoppingTrainer; iteration conditions on Spark. */
class SparkEarlyStoppingTrainerTest {
    private static final MultiLayerConfiguration CONF = conf(new Adam(0.02), 1e-3);

    private static EarlyStoppingConfiguration<MultiLayerNetwork> es(ScoreCalculator<? super MultiLayerNetwork> calc) {
        return new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(3)).scoreCalculator(calc).build();
    }

    @Test
    void oneWorkerEqualsLocalEarlyStopping() {
        List<DataSet> train = data(8, 4, 81);
        List<DataSet> test = data(3, 10, 82);
        MultiLayerNetwork localNet = net(CONF);
        // local minibatches of 8 = pairs of the 4-example DataSets, as one paramavg worker with batch 8 sees them
        EarlyStoppingResult<MultiLayerNetwork> local = new EarlyStoppingTrainer(
                es(new DataSetLossCalculator(new ListDataSetIterator(test, 1), true)), localNet,
                new ListDataSetIterator(train, 2)).fit();

        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(1, 4)
                .batchSizePerWorker(8).averagingFrequency(2).build();
        MultiLayerNetwork sparkNet = net(CONF);
        SparkEarlyStoppingTrainer trainer = new SparkEarlyStoppingTrainer(sc(), tm,
                es(new SparkDataSetLossCalculator(sc().parallelize(test, 2), true, sc())), sparkNet,
                sc().parallelize(train, 3));
        EarlyStoppingResult<MultiLayerNetwork> dist = trainer.fit();

        assertEquals(local.getTerminationReason(), dist.getTerminationReason());
        assertEquals(3, dist.getTotalEpochs());
        assertEquals(local.getBestModelEpoch(), dist.getBestModelEpoch());
        assertEquals(new ArrayList<>(local.getScoreVsEpoch().keySet()), new ArrayList<>(dist.getScoreVsEpoch().keySet()));
        for (int e : local.getScoreVsEpoch().keySet()) {
            assertEquals(local.getScoreVsEpoch().get(e), dist.getScoreVsEpoch().get(e), 1e-5, "epoch " + e);
        }
        assertTrue(maxAbsDiff(local.getBestModel().params().toFloatVector(),
                dist.getBestModel().params().toFloatVector()) <= 1e-5f);
        assertEquals(localNet.getIterationCount(), sparkNet.getIterationCount());
        assertEquals(3, sparkNet.getEpochCount());
    }

    @Test
    void iterationConditionUsesTheDistributedScore() {
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(2, 4)
                .batchSizePerWorker(4).averagingFrequency(1).build();
        EarlyStoppingConfiguration<MultiLayerNetwork> conf = new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(5))
                .iterationTerminationConditions(new MaxScoreIterationTerminationCondition(0.0))
                .scoreCalculator(new SparkDataSetLossCalculator(sc().parallelize(data(1, 4, 83), 1), true, sc()))
                .build();
        EarlyStoppingResult<MultiLayerNetwork> r = new SparkEarlyStoppingTrainer(sc(), tm, conf, net(CONF),
                sc().parallelize(data(4, 4, 84), 2)).fit();
        assertEquals(EarlyStoppingResult.TerminationReason.IterationTerminationCondition, r.getTerminationReason());
        assertEquals(1, r.getTotalEpochs());
        assertNull(r.getBestModel());
    }
}
