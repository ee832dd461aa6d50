package org.ferrodl.earlystopping;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.earlystopping.EarlyStoppingResult.TerminationReason;
import org.ferrodl.earlystopping.listener.EarlyStoppingListener;
import org.ferrodl.earlystopping.saver.LocalFileModelSaver;
import org.ferrodl.earlystopping.scorecalc.ClassificationScoreCalculator;
import org.ferrodl.earlystopping.scorecalc.DataSetLossCalculator;
import org.ferrodl.earlystopping.scorecalc.ROCScoreCalculator;
import org.ferrodl.earlystopping.scorecalc.RegressionScoreCalculator;
import org.ferrodl.earlystopping.termination.BestScoreEpochTerminationCondition;
import org.ferrodl.earlystopping.termination.InvalidScoreIterationTerminationCondition;
import org.ferrodl.earlystopping.termination.MaxEpochsTerminationCondition;
import org.ferrodl.earlystopping.termination.MaxScoreIterationTerminationCondition;
import org.ferrodl.earlystopping.termination.MaxTimeIterationTerminationCondition;
import org.ferrodl.earlystopping.termination.ScoreImprovementEpochTerminationCondition;
import org.ferrodl.earlystopping.trainer.EarlyStoppingTrainer;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.learning.config.IUpdater;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Early stopping: termination conditions against hand-made score sequences, and whole runs. */
class EarlyStoppingTest {

    private static MultiLayerNetwork net(IUpdater updater) {
        MultiLayerNetwork n = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(1).updater(updater).list()
                .layer(new DenseLayer.Builder().nIn(4).nOut(6).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(6).nOut(3).activation(Activation.SOFTMAX).build())
                .build());
        n.init();
        return n;
    }

    /** Three linearly separable-ish classes: the class is the argmax of the first three features. */
    static List<DataSet> data(int batches, int size, long seed) {
        Random r = new Random(seed);
        List<DataSet> out = new ArrayList<>();
        for (int b = 0; b < batches; b++) {
            float[] f = new float[size * 4];
            float[] l = new float[size * 3];
            for (int i = 0; i < size; i++) {
                int best = 0;
                for (int j = 0; j < 4; j++) {
                    f[i * 4 + j] = r.nextFloat() * 2 - 1;
                    if (j < 3 && f[i * 4 + j] > f[i * 4 + best]) {
                        best = j;
                    }
                }
                l[i * 3 + best] = 1;
            }
            out.add(new DataSet(Nd4j.create(f, size, 4), Nd4j.create(l, size, 3)));
        }
        return out;
    }

    @Test
    void epochConditionsAgainstHandMadeScores() {
        ScoreImprovementEpochTerminationCondition imp = new ScoreImprovementEpochTerminationCondition(2, 0.1);
        imp.initialize();
        // minimize: 1.0, 0.95 (not > 0.1 better), 0.5 (better), 0.45, 0.44 -> stops at the 2nd non-improvement
        assertFalse(imp.terminate(0, 1.0, true));
        assertFalse(imp.terminate(1, 0.95, true));
        assertFalse(imp.terminate(2, 0.5, true));
        assertFalse(imp.terminate(3, 0.45, true));
        assertTrue(imp.terminate(4, 0.44, true));
        imp.initialize();
        assertFalse(imp.terminate(0, 0.5, false));
        assertFalse(imp.terminate(1, Double.NaN, false));
        assertFalse(imp.terminate(2, 0.7, false));
        BestScoreEpochTerminationCondition best = new BestScoreEpochTerminationCondition(0.9);
        assertFalse(best.terminate(0, 0.8, false));
        assertTrue(best.terminate(1, 0.9, false));
        assertFalse(best.terminate(1, 1.0, true));
        assertTrue(best.terminate(1, 0.2, true));
        MaxEpochsTerminationCondition max = new MaxEpochsTerminationCondition(3);
        assertFalse(max.terminate(1, 0, true));
        assertTrue(max.terminate(2, 0, true));
        assertThrows(IllegalArgumentException.class, () -> new MaxEpochsTerminationCondition(0));
    }

    @Test
    void iterationConditionsAgainstHandMadeScores() throws InterruptedException {
        InvalidScoreIterationTerminationCondition invalid = new InvalidScoreIterationTerminationCondition();
        assertTrue(invalid.terminate(Double.NaN));
        assertTrue(invalid.terminate(Double.POSITIVE_INFINITY));
        assertFalse(invalid.terminate(3.0));
        MaxScoreIterationTerminationCondition maxScore = new MaxScoreIterationTerminationCondition(10);
        assertFalse(maxScore.terminate(10));
        assertTrue(maxScore.terminate(10.5));
        assertTrue(maxScore.terminate(Double.NaN));
        MaxTimeIterationTerminationCondition time = new MaxTimeIterationTerminationCondition(20, TimeUnit.MILLISECONDS);
        time.initialize();
        assertFalse(time.terminate(0));
        Thread.sleep(30);
        assertTrue(time.terminate(0));
        MaxTimeIterationTerminationCondition hour = new MaxTimeIterationTerminationCondition(1, TimeUnit.HOURS);
        hour.initialize();
        assertFalse(hour.terminate(0));
    }

    @Test
    void maxEpochsRunKeepsTheBestModelAndItsScore(@TempDir File dir) throws Exception {
        List<DataSet> train = data(6, 10, 1);
        List<DataSet> test = data(2, 25, 2);
        DataSetLossCalculator loss = new DataSetLossCalculator(new ListDataSetIterator(test), true);
        EarlyStoppingConfiguration<MultiLayerNetwork> conf = new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(4)).scoreCalculator(loss)
                .modelSaver(new LocalFileModelSaver(dir)).saveLastModel(true).build();
        MultiLayerNetwork net = net(new Adam(0.05));
        List<String> events = new ArrayList<>();
        EarlyStoppingTrainer trainer = new EarlyStoppingTrainer(conf, net, new ListDataSetIterator(train, 1));
        trainer.setListener(new EarlyStoppingListener<>() {
            @Override
            public void onStart(EarlyStoppingConfiguration<MultiLayerNetwork> c, MultiLayerNetwork n) {
                events.add("start");
            }

            @Override
            public void onEpoch(int epochNum, double score, EarlyStoppingConfiguration<MultiLayerNetwork> c,
                                MultiLayerNetwork n) {
                events.add("epoch" + epochNum);
            }

            @Override
            public void onCompletion(EarlyStoppingResult<MultiLayerNetwork> r) {
                events.add("end");
            }
        });
        EarlyStoppingResult<MultiLayerNetwork> r = trainer.fit();
        assertEquals(List.of("start", "epoch0", "epoch1", "epoch2", "epoch3", "end"), events);
        assertEquals(TerminationReason.EpochTerminationCondition, r.getTerminationReason());
        assertTrue(r.getTerminationDetails().contains("MaxEpochs"), r.getTerminationDetails());
        assertEquals(4, r.getTotalEpochs());
        assertEquals(4, net.getEpochCount());
        assertEquals(24, net.getIterationCount());
        Map<Integer, Double> scores = r.getScoreVsEpoch();
        assertEquals(List.of(0, 1, 2, 3), new ArrayList<>(scores.keySet()));
        double min = scores.values().stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        assertEquals(min, r.getBestModelScore(), 0);
        assertEquals(scores.get(r.getBestModelEpoch()), r.getBestModelScore(), 0);
        // the saved best model scores what was recorded; the latest model is the trained network
        assertEquals(r.getBestModelScore(), loss.calculateScore(r.getBestModel()), 1e-6);
        assertEquals(scores.get(3), loss.calculateScore(net), 1e-6);
        assertTrue(new File(dir, LocalFileModelSaver.BEST_MODEL_BIN).isFile());
        assertArrayEquals(net.params().toFloatVector(),
                conf.getModelSaver().getLatestModel().params().toFloatVector(), 0f);
    }

    @Test
    void noImprovementStopsAfterPatience() {
        // learning rate 0: the score never changes, so two epochs without improvement end the run at epoch 2
        EarlyStoppingConfiguration<MultiLayerNetwork> conf = new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(50),
                        new ScoreImprovementEpochTerminationCondition(2))
                .scoreCalculator(new ClassificationScoreCalculator(Evaluation.Metric.ACCURACY,
                        new ListDataSetIterator(data(1, 30, 3))))
                .build();
        EarlyStoppingResult<MultiLayerNetwork> r = new EarlyStoppingTrainer(conf, net(new Sgd(0.0)),
                new ListDataSetIterator(data(2, 10, 4))).fit();
        assertEquals(3, r.getTotalEpochs());
        assertTrue(r.getTerminationDetails().contains("ScoreImprovement"), r.getTerminationDetails());
        assertEquals(0, r.getBestModelEpoch(), "ties do not replace the first best model");
    }

    @Test
    void iterationConditionStopsMidEpochWithoutABestModel() {
        EarlyStoppingConfiguration<MultiLayerNetwork> conf = new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .iterationTerminationConditions(new MaxScoreIterationTerminationCondition(0.0))
                .scoreCalculator(new DataSetLossCalculator(new ListDataSetIterator(data(1, 5, 5)), true)).build();
        MultiLayerNetwork net = net(new Sgd(0.1));
        EarlyStoppingResult<MultiLayerNetwork> r = new EarlyStoppingTrainer(conf, net,
                new ListDataSetIterator(data(4, 5, 6))).fit();
        assertEquals(TerminationReason.IterationTerminationCondition, r.getTerminationReason());
        assertEquals(1, net.getIterationCount(), "stopped after the first minibatch");
        assertEquals(-1, r.getBestModelEpoch());
        assertNull(r.getBestModel());
        assertTrue(Double.isNaN(r.getBestModelScore()));
    }

    @Test
    void rocAndRegressionCalculatorsAndEvaluateEveryNEpochs() {
        List<DataSet> test = data(1, 40, 7);
        EarlyStoppingConfiguration<MultiLayerNetwork> conf = new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(4), new BestScoreEpochTerminationCondition(1.01))
                .scoreCalculator(new ROCScoreCalculator(ROCScoreCalculator.ROCType.MULTICLASS,
                        new ListDataSetIterator(test)))
                .evaluateEveryNEpochs(2).build();
        MultiLayerNetwork net = net(new Adam(0.05));
        EarlyStoppingResult<MultiLayerNetwork> r = new EarlyStoppingTrainer(conf, net,
                new ListDataSetIterator(data(4, 10, 8))).fit();
        assertEquals(List.of(1, 3), new ArrayList<>(r.getScoreVsEpoch().keySet()));
        org.ferrodl.evaluation.classification.ROCMultiClass roc = new org.ferrodl.evaluation.classification.ROCMultiClass();
        roc.eval(test.get(0).getLabels(), net.output(test.get(0).getFeatures()));
        assertEquals(roc.calculateAverageAUC(), r.getScoreVsEpoch().get(3), 1e-9);
        assertFalse(conf.getScoreCalculator().minimizeScore());
        RegressionScoreCalculator mse = new RegressionScoreCalculator(RegressionEvaluation.Metric.MSE,
                new ListDataSetIterator(test));
        RegressionEvaluation re = new RegressionEvaluation();
        re.eval(test.get(0).getLabels(), net.output(test.get(0).getFeatures()));
        assertEquals(re.averageMeanSquaredError(), mse.calculateScore(net), 1e-9);
        assertTrue(mse.minimizeScore());
    }

    @Test
    void configurationNeedsACalculatorAndATerminationCondition() {
        DataSetLossCalculator loss = new DataSetLossCalculator(new ListDataSetIterator(data(1, 2, 9)), true);
        assertThrows(IllegalStateException.class, () -> new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(1)).build());
        assertThrows(IllegalStateException.class, () -> new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .scoreCalculator(loss).build());
        assertThrows(IllegalArgumentException.class, () -> new EarlyStoppingConfiguration.Builder<MultiLayerNetwork>()
                .evaluateEveryNEpochs(0));
    }
}
