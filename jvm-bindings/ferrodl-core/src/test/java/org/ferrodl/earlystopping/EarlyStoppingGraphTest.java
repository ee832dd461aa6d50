package org.ferrodl.earlystopping;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.datasets.iterator.impl.ListMultiDataSetIterator;
import org.ferrodl.earlystopping.EarlyStoppingResult.TerminationReason;
import org.ferrodl.earlystopping.saver.LocalFileGraphSaver;
import org.ferrodl.earlystopping.scorecalc.ClassificationScoreCalculator;
import org.ferrodl.earlystopping.scorecalc.DataSetLossCalculatorCG;
import org.ferrodl.earlystopping.scorecalc.ROCScoreCalculator;
import org.ferrodl.earlystopping.termination.MaxEpochsTerminationCondition;
import org.ferrodl.earlystopping.trainer.EarlyStoppingGraphTrainer;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.classification.ROCMultiClass;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.graph.ComputationGraph;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Early stopping of a ComputationGraph on one machine: EarlyStoppingGraphTrainer with
 * DataSetLossCalculatorCG and LocalFileGraphSaver (best and latest graph on disk, reloaded equal),
 * the classification and ROC calculators on a graph (equal to evaluating its output),
 * DataSets and MultiDataSets giving the same run, and the saver's errors for bad directories.
 */
class EarlyStoppingGraphTest {

    private static ComputationGraphConfiguration conf() {
        return new NeuralNetConfiguration.Builder().seed(1).updater(new Adam(0.05)).graphBuilder()
                .addInputs("in")
                .addLayer("d", new DenseLayer.Builder().nIn(4).nOut(6).activation(Activation.TANH).build(), "in")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nIn(6).nOut(3)
                        .activation(Activation.SOFTMAX).build(), "d")
                .setOutputs("out")
                .build();
    }

    private static ComputationGraph graph() {
        ComputationGraph g = new ComputationGraph(conf());
        g.init();
        return g;
    }

    private static List<MultiDataSet> multi(List<DataSet> data) {
        List<MultiDataSet> out = new ArrayList<>();
        data.forEach(d -> out.add(MultiDataSet.fromDataSet(d)));
        return out;
    }

    @Test
    void localFileGraphSaverKeepsTheBestAndLatestGraphs(@TempDir File dir) throws Exception {
        List<DataSet> train = EarlyStoppingTest.data(6, 10, 1);
        List<DataSet> test = EarlyStoppingTest.data(2, 25, 2);
        DataSetLossCalculatorCG loss = new DataSetLossCalculatorCG(new ListDataSetIterator(test), true);
        File saveDir = new File(dir, "not-yet-created");
        EarlyStoppingConfiguration<ComputationGraph> conf = new EarlyStoppingConfiguration.Builder<ComputationGraph>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(4)).scoreCalculator(loss)
                .modelSaver(new LocalFileGraphSaver(saveDir.getPath())).saveLastModel(true).build();
        ComputationGraph net = graph();
        EarlyStoppingResult<ComputationGraph> r = new EarlyStoppingGraphTrainer(conf, net,
                new ListDataSetIterator(train, 1)).fit();

        assertEquals(TerminationReason.EpochTerminationCondition, r.getTerminationReason());
        assertEquals(4, r.getTotalEpochs());
        assertEquals(4, net.getEpochCount());
        assertEquals(24, net.getIterationCount());
        Map<Integer, Double> scores = r.getScoreVsEpoch();
        double min = scores.values().stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        assertEquals(min, r.getBestModelScore(), 0);
        assertTrue(scores.get(3) < scores.get(0), "the loss fell: " + scores);
        assertTrue(new File(saveDir, LocalFileGraphSaver.BEST_GRAPH_BIN).isFile());
        assertTrue(new File(saveDir, LocalFileGraphSaver.LATEST_GRAPH_BIN).isFile());
        // the best graph read back from bestGraph.bin scores what was recorded for its epoch
        assertEquals(r.getBestModelScore(), loss.calculateScore(r.getBestModel()), 1e-6);
        // the latest graph read back equals the trained graph: parameters, updater state, configuration
        ComputationGraph latest = conf.getModelSaver().getLatestModel();
        assertArrayEquals(net.params().toFloatVector(), latest.params().toFloatVector(), 0f);
        assertArrayEquals(net.getUpdaterState().toFloatVector(), latest.getUpdaterState().toFloatVector(), 0f);
        assertEquals(net.getConfiguration().toJson(), latest.getConfiguration().toJson());
        assertEquals(scores.get(3), loss.calculateScore(latest), 1e-6);
    }

    @Test
    void multiDataSetsTrainAsTheirDataSets() {
        List<DataSet> train = EarlyStoppingTest.data(4, 8, 3);
        List<DataSet> test = EarlyStoppingTest.data(1, 20, 4);
        EarlyStoppingConfiguration<ComputationGraph> a = new EarlyStoppingConfiguration.Builder<ComputationGraph>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(3))
                .scoreCalculator(new DataSetLossCalculatorCG(new ListDataSetIterator(test), true)).build();
        EarlyStoppingConfiguration<ComputationGraph> b = new EarlyStoppingConfiguration.Builder<ComputationGraph>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(3))
                .scoreCalculator(new DataSetLossCalculatorCG(new ListMultiDataSetIterator(multi(test), 1), true))
                .build();
        ComputationGraph ga = graph();
        ComputationGraph gb = graph();
        EarlyStoppingResult<ComputationGraph> ra = new EarlyStoppingGraphTrainer(a, ga,
                new ListDataSetIterator(train, 1)).fit();
        EarlyStoppingResult<ComputationGraph> rb = new EarlyStoppingGraphTrainer(b, gb,
                new ListMultiDataSetIterator(multi(train), 1)).fit();
        assertEquals(ra.getScoreVsEpoch(), rb.getScoreVsEpoch());
        assertEquals(ra.getBestModelEpoch(), rb.getBestModelEpoch());
        assertArrayEquals(ga.params().toFloatVector(), gb.params().toFloatVector(), 0f);
        assertNotNull(ra.getBestModel(), "the default in-memory saver keeps the best graph");
    }

    @Test
    void classificationAndRocCalculatorsScoreAGraph() {
        List<DataSet> train = EarlyStoppingTest.data(6, 10, 7);
        List<DataSet> test = EarlyStoppingTest.data(2, 25, 8);
        ComputationGraph g = graph();
        g.fit(new ListDataSetIterator(train, 1), 3);
        Evaluation e = new Evaluation();
        ROCMultiClass roc = new ROCMultiClass();
        for (DataSet d : test) {
            e.eval(d.getLabels(), g.outputSingle(false, d.getFeatures()));
            roc.eval(d.getLabels(), g.outputSingle(false, d.getFeatures()));
        }
        double accuracy = new ClassificationScoreCalculator(Evaluation.Metric.ACCURACY, new ListDataSetIterator(test))
                .calculateScore(g);
        assertEquals(e.accuracy(), accuracy, 0);
        assertTrue(accuracy > 0.5, "trained well above chance (1/3): " + accuracy);
        assertEquals(roc.calculateAverageAUC(), new ROCScoreCalculator(ROCScoreCalculator.ROCType.MULTICLASS,
                new ListDataSetIterator(test)).calculateScore(g), 0);
        // a graph-typed early-stopping configuration takes these calculators
        EarlyStoppingConfiguration<ComputationGraph> c = new EarlyStoppingConfiguration.Builder<ComputationGraph>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(2))
                .scoreCalculator(new ClassificationScoreCalculator(Evaluation.Metric.ACCURACY,
                        new ListDataSetIterator(test))).build();
        EarlyStoppingResult<ComputationGraph> r = new EarlyStoppingGraphTrainer(c, g, new ListDataSetIterator(train, 1))
                .fit();
        assertEquals(2, r.getScoreVsEpoch().size());
    }

    @Test
    void badDirectoriesAndMissingModels(@TempDir File dir) throws IOException {
        File plain = new File(dir, "a-file");
        Files.writeString(plain.toPath(), "not a directory");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new LocalFileGraphSaver(plain.getPath()));
        assertTrue(e.getMessage().contains(plain.getPath()) && e.getMessage().contains("not a directory"),
                e.getMessage());
        // below a file: accepted at construction (nothing exists yet), refused at the first save
        File below = new File(plain, "sub");
        LocalFileGraphSaver saver = new LocalFileGraphSaver(below.getPath());
        assertNull(saver.getBestModel(), "nothing saved yet");
        assertNull(saver.getLatestModel(), "nothing saved yet");
        IOException io = assertThrows(IOException.class, () -> saver.saveBestModel(graph(), 1.0));
        assertTrue(io.getMessage().contains("cannot create directory " + below.getPath()), io.getMessage());
        // a DataSet iterator only fits a graph with one input and one output
        ComputationGraphConfiguration twoIn = new NeuralNetConfiguration.Builder().seed(1).graphBuilder()
                .addInputs("a", "b")
                .addLayer("da", new DenseLayer.Builder().nIn(2).nOut(2).build(), "a")
                .addLayer("db", new DenseLayer.Builder().nIn(2).nOut(2).build(), "b")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MSE).nIn(4).nOut(2)
                        .activation(Activation.IDENTITY).build(), "da", "db")
                .setOutputs("out").build();
        ComputationGraph g = new ComputationGraph(twoIn);
        g.init();
        EarlyStoppingConfiguration<ComputationGraph> c = new EarlyStoppingConfiguration.Builder<ComputationGraph>()
                .epochTerminationConditions(new MaxEpochsTerminationCondition(1))
                .scoreCalculator(new DataSetLossCalculatorCG(new ListDataSetIterator(List.of()), true)).build();
        IllegalArgumentException two = assertThrows(IllegalArgumentException.class,
                () -> new EarlyStoppingGraphTrainer(c, g, new ListDataSetIterator(EarlyStoppingTest.data(1, 2, 5))));
        assertTrue(two.getMessage().contains("[a, b]"), two.getMessage());
        IllegalArgumentException calc = assertThrows(IllegalArgumentException.class,
                () -> new ClassificationScoreCalculator(Evaluation.Metric.ACCURACY,
                        new ListDataSetIterator(EarlyStoppingTest.data(1, 2, 5))).calculateScore(g));
        assertTrue(calc.getMessage().contains("one input and one output"), calc.getMessage());
    }
}
