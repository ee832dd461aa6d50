package org.ferrodl.spark.earlystopping;

import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.ferrodl.earlystopping.EarlyStoppingConfiguration;
import org.ferrodl.earlystopping.EarlyStoppingResult;
import org.ferrodl.earlystopping.termination.MaxEpochsTerminationCondition;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.spark.impl.graph.SparkComputationGraphTest;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.api.Test;

/**
 * SparkEarlyStoppingGraphTrainer with one worker follows local training of the same two-input,
 * two-output graph epoch by epoch: the same scores (Spark loss calculator vs the local score of
 * the held-out set), the same best epoch, and a best model equal to the local graph of that epoch.
 * About 6 s.
 */
class SparkEarlyStoppingGraphTrainerTest {

    @Test
    void oneWorkerFollowsLocalGraphTraining() {
        ComputationGraphConfiguration conf = SparkComputationGraphTest.twoByTwo(new Adam(0.02), 0);
        List<MultiDataSet> train = SparkComputationGraphTest.twoByTwoData(8, 4, 91);
        List<MultiDataSet> test = SparkComputationGraphTest.twoByTwoData(3, 10, 92);
        MultiDataSet testAll = MultiDataSet.merge(test);

        ComputationGraph local = SparkComputationGraphTest.graph(conf);
        List<Double> localScores = new ArrayList<>();
        List<float[]> localParams = new ArrayList<>();
        for (int epoch = 0; epoch < 3; epoch++) {
            for (int i = 0; i < train.size(); i += 2) {
                local.fit(MultiDataSet.merge(train.subList(i, i + 2)));
            }
            localScores.add(local.score(testAll));
            localParams.add(local.params().toFloatVector());
        }
        int bestEpoch = 0;
        for (int e = 1; e < 3; e++) {
            if (localScores.get(e) < localScores.get(bestEpoch)) {
                bestEpoch = e;
            }
        }

        EarlyStoppingConfiguration<ComputationGraph> es = new EarlyStoppingConfiguration.Builder<ComputationGraph>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(3))
                .scoreCalculator(new SparkLossCalculatorComputationGraph(sc().parallelize(test, 2), true, sc()))
                .build();
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(1, 4)
                .batchSizePerWorker(8).averagingFrequency(2).build();
        ComputationGraph net = SparkComputationGraphTest.graph(conf);
        EarlyStoppingResult<ComputationGraph> r = new SparkEarlyStoppingGraphTrainer(sc(), tm, es, net,
                sc().parallelize(train, 3)).fit();

        assertEquals(EarlyStoppingResult.TerminationReason.EpochTerminationCondition, r.getTerminationReason());
        assertEquals(3, r.getTotalEpochs());
        for (int e = 0; e < 3; e++) {
            assertEquals(localScores.get(e), r.getScoreVsEpoch().get(e), 1e-5, "held-out score of epoch " + e);
        }
        assertEquals(bestEpoch, r.getBestModelEpoch());
        assertNotNull(r.getBestModel(), "the in-memory saver keeps a clone of the best graph");
        float diff = maxAbsDiff(localParams.get(bestEpoch), r.getBestModel().params().toFloatVector());
        assertTrue(diff <= 1e-5f, "best model vs local graph of epoch " + bestEpoch + ": " + diff);
        assertEquals(12, net.getIterationCount(), "3 epochs × 4 minibatches");
    }
}
