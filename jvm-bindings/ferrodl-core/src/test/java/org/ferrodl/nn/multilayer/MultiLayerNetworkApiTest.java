package org.ferrodl.nn.multilayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.api.Layer;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.layers.ActivationLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.optimize.api.BaseTrainingListener;
import org.ferrodl.optimize.api.TrainingListener;
import org.junit.jupiter.api.Test;

/** scoreExamples, paramTable, layers, summary, listeners and evaluateRegression. Needs the native library. */
class MultiLayerNetworkApiTest {

    private static final INDArray W_B = Nd4j.create(new float[] {1, 2, 3, 4, 0.5f, -0.5f}, 1, 6);
    private static final INDArray X = Nd4j.create(new float[] {1, 1, 2, 0}, 2, 2);
    private static final INDArray Y = Nd4j.create(new float[] {4, 6, 3, 3}, 2, 2);

    /** 2 -> 8 tanh -> 3 softmax with L1 and L2 on the weights. */
    private static MultiLayerConfiguration regularizedClassifier(double l1, double l2) {
        return new NeuralNetConfiguration.Builder().seed(11).updater(new Sgd(0.1)).l1(l1).l2(l2).list()
                .layer(new DenseLayer.Builder().nIn(2).nOut(8).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(8).nOut(3).activation(Activation.SOFTMAX)
                        .build())
                .build();
    }

    private static double mean(INDArray column) {
        double s = 0;
        for (float v : column.toFloatVector()) {
            s += v;
        }
        return s / column.length();
    }

    // ---- scoreExamples ------------------------------------------------------------------------

    @Test
    void scoreExamplesMatchesHandComputedLossesAndAddsTheWholeL2Term() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.linearMse(0.1))) {
            net.init();
            net.setParams(W_B);
            // both examples: Σ(y-ŷ)²/nOut = (0.25+0.25)/2 = 0.25; L2 term 0.5·0.1·(1+4+9+16) = 1.5
            INDArray plain = net.scoreExamples(new DataSet(X, Y), false);
            assertArrayEquals(new long[] {2, 1}, plain.shape());
            assertArrayEquals(new float[] {0.25f, 0.25f}, plain.toFloatVector(), 1e-6f);
            INDArray reg = net.scoreExamples(new DataSet(X, Y), true);
            assertArrayEquals(new float[] {1.75f, 1.75f}, reg.toFloatVector(), 1e-6f);
            assertEquals(0, net.getIterationCount(), "scoreExamples does not train");

            DataSet masked = new DataSet(X, Y.dup());
            masked.getLabels().putScalar(1, 0, 100);
            masked.setLabelsMaskArray(Nd4j.create(new float[] {1, 0}, 2, 1));
            assertArrayEquals(new float[] {0.25f, 0f}, net.scoreExamples(masked, false).toFloatVector(), 1e-6f);
        }
    }

    @Test
    void meanOfScoreExamplesIsTheScoreAndRegularizationIsTheL1L2Term() {
        DataSet data = MultiLayerNetworkTest.blobs(5);
        double l1 = 1e-3;
        double l2 = 2e-3;
        try (MultiLayerNetwork plainNet = new MultiLayerNetwork(regularizedClassifier(0, 0));
             MultiLayerNetwork regNet = new MultiLayerNetwork(regularizedClassifier(l1, l2))) {
            plainNet.init();
            regNet.init();
            regNet.setParams(plainNet.params());
            INDArray perExample = plainNet.scoreExamples(data, false);
            assertEquals(90, perExample.length());
            assertEquals(plainNet.score(data), mean(perExample), 1e-6);
            // the same parameters with L1/L2: data term unchanged, each example carries the whole penalty
            assertArrayEquals(perExample.toFloatVector(), regNet.scoreExamples(data, false).toFloatVector(), 0f);
            double penalty = 0;
            for (Map.Entry<String, INDArray> e : regNet.paramTable().entrySet()) {
                if (e.getKey().endsWith("_W")) {
                    for (float w : e.getValue().toFloatVector()) {
                        penalty += l1 * Math.abs(w) + 0.5 * l2 * w * w;
                    }
                }
            }
            assertTrue(penalty > 1e-4, "penalty " + penalty);
            INDArray withReg = regNet.scoreExamples(data, true);
            for (int i = 0; i < 90; i++) {
                assertEquals(perExample.getDouble(i) + penalty, withReg.getDouble(i), 1e-5, "example " + i);
            }
            assertEquals(regNet.score(data), mean(withReg), 1e-5);
            assertEquals(plainNet.score(data) + penalty, regNet.score(data), 1e-6);
            // over an iterator: the same scores in order
            INDArray viaIterator = plainNet.scoreExamples(new ListDataSetIterator(data.asList(), 40), false);
            assertArrayEquals(new long[] {90, 1}, viaIterator.shape());
            assertArrayEquals(perExample.toFloatVector(), viaIterator.toFloatVector(), 1e-6f);
        }
    }

    @Test
    void scoreExamplesChecksItsInput() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.linearMse(0))) {
            net.init();
            assertThrows(DL4JInvalidInputException.class,
                    () -> net.scoreExamples(new DataSet(X, Nd4j.create(new float[] {1, 2, 3}, 1, 3)), false));
            assertThrows(DL4JInvalidInputException.class,
                    () -> net.scoreExamples(new DataSet(Nd4j.create(new float[] {1, 2, 3, 4, 5, 6}, 2, 3), Y), true));
        }
    }

    // ---- parameters ---------------------------------------------------------------------------

    @Test
    void paramTableHasTheReferenceKeysShapesAndSlicesOfParams() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.classifier(3))) {
            net.init();
            Map<String, INDArray> t = net.paramTable();
            assertEquals(List.of("0_W", "0_b", "1_W", "1_b"), new ArrayList<>(t.keySet()));
            assertArrayEquals(new long[] {2, 8}, t.get("0_W").shape());
            assertArrayEquals(new long[] {1, 8}, t.get("0_b").shape());
            assertArrayEquals(new long[] {8, 3}, t.get("1_W").shape());
            assertArrayEquals(new long[] {1, 3}, t.get("1_b").shape());
            float[] p = net.params().toFloatVector();
            int at = 0;
            for (INDArray v : t.values()) {
                float[] part = v.toFloatVector();
                assertArrayEquals(Arrays.copyOfRange(p, at, at + part.length), part, 0f);
                at += part.length;
            }
            assertEquals(p.length, at);
            // W is row-major [nIn, nOut]: element (i, j) is params[i·nOut + j]
            assertEquals(p[1 * 8 + 5], t.get("0_W").getFloat(1, 5), 0f);
            assertEquals(t.get("1_W"), net.getParam("1_W"));

            // copies: modifying them does not touch the network; setParam does
            t.get("1_b").putScalar(0, 0, 42);
            assertArrayEquals(p, net.params().toFloatVector(), 0f);
            net.setParam("1_b", Nd4j.create(new float[] {1, 2, 3}, 1, 3));
            assertArrayEquals(new float[] {1, 2, 3}, net.getParam("1_b").toFloatVector(), 0f);
            float[] after = net.params().toFloatVector();
            assertArrayEquals(new float[] {1, 2, 3}, Arrays.copyOfRange(after, 48, 51), 0f);
            assertArrayEquals(Arrays.copyOfRange(p, 0, 48), Arrays.copyOfRange(after, 0, 48), 0f);

            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> net.getParam("2_W"));
            assertTrue(e.getMessage().contains("0_W"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> net.setParam("0_b", Nd4j.zeros(1, 3)));
        }
    }

    @Test
    void layerViewsReadThroughToTheNetwork() {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(1).updater(new Adam(0.01)).list()
                .layer(new DenseLayer.Builder().name("hidden").nIn(3).nOut(4).activation(Activation.RELU).build())
                .layer(new ActivationLayer.Builder().activation(Activation.TANH).build())
                .layer(new FrozenLayer.Builder().layer(new DenseLayer.Builder().nIn(4).nOut(4)
                        .activation(Activation.SIGMOID).build()).build())
                .layer(new OutputLayer.Builder(LossFunction.MSE).nIn(4).nOut(2).activation(Activation.IDENTITY)
                        .updater(new Sgd(0.5)).build())
                .build();
        try (MultiLayerNetwork net = new MultiLayerNetwork(conf)) {
            net.init();
            Layer[] layers = net.getLayers();
            assertEquals(4, layers.length);
            Layer hidden = net.getLayer(0);
            assertEquals(0, hidden.getIndex());
            assertEquals("hidden", hidden.getLayerName());
            assertEquals("DenseLayer", hidden.getLayerType());
            assertEquals(Layer.Type.FEED_FORWARD, hidden.type());
            assertEquals("RELU", hidden.getActivation());
            assertEquals(16, hidden.numParams());
            assertArrayEquals(new long[] {3}, hidden.getInputShape());
            assertArrayEquals(new long[] {4}, hidden.getOutputShape());
            assertArrayEquals(Arrays.copyOfRange(net.params().toFloatVector(), 0, 16), hidden.params().toFloatVector(),
                    0f);
            assertEquals(List.of("W", "b"), new ArrayList<>(hidden.paramTable().keySet()));
            assertEquals(net.getParam("0_W"), hidden.getParam("W"));
            assertThrows(IllegalArgumentException.class, () -> hidden.getParam("gamma"));
            assertSame(conf.getLayers().get(0).getClass(), hidden.conf().getLayer().getClass());

            Layer act = layers[1];
            assertEquals("layer1", act.getLayerName(), "unnamed layers are called layer<index>");
            assertEquals(0, act.numParams());
            assertArrayEquals(new long[] {1, 0}, act.params().shape());
            assertTrue(act.paramTable().isEmpty());
            assertEquals("FrozenLayer", layers[2].getLayerType());
            assertTrue(layers[2].isFrozen());
            assertFalse(hidden.isFrozen());
            assertEquals(3, net.getLayer("layer3").getIndex());
            assertEquals(0, net.getLayer("hidden").getIndex());
            assertThrows(IllegalArgumentException.class, () -> net.getLayer("nope"));
            assertThrows(IllegalArgumentException.class, () -> net.getLayer(4));
            assertThrows(IllegalArgumentException.class, () -> net.getLayer(-1));

            // learning rates: per layer, none for a layer without parameters
            assertEquals(0.01, net.getLearningRate(0), 1e-12);
            assertNull(net.getLearningRate(1));
            assertEquals(0.5, net.getLearningRate(3), 1e-12);
            assertThrows(DL4JInvalidInputException.class, () -> net.getLearningRate(7));

            // the view reads the current parameters
            float[] before = hidden.params().toFloatVector();
            net.fit(Nd4j.rand(5, 3), Nd4j.rand(5, 2));
            assertFalse(Arrays.equals(before, hidden.params().toFloatVector()));
            net.close();
            assertThrows(NativeStateException.class, hidden::params);
        }
    }

    @Test
    void layersNeedAnInitializedNetwork() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.classifier(1))) {
            assertThrows(NativeStateException.class, () -> net.getLayer(0));
            assertThrows(NativeStateException.class, net::paramTable);
        }
    }

    // ---- summary ------------------------------------------------------------------------------

    @Test
    void summaryListsEveryLayerAndTheParameterCounts() {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new DenseLayer.Builder().nIn(2).nOut(8).activation(Activation.TANH).build())
                .layer(new FrozenLayer.Builder().layer(new DenseLayer.Builder().name("frozen").nIn(8).nOut(5)
                        .activation(Activation.RELU).build()).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX)
                        .build())
                .build();
        try (MultiLayerNetwork net = new MultiLayerNetwork(conf)) {
            String before = net.summary(); // works before init()
            net.init();
            String s = net.summary();
            assertEquals(before, s);
            assertTrue(s.contains("layer0 (DenseLayer)"), s);
            assertTrue(s.contains("frozen (FrozenLayer:DenseLayer)"), s);
            assertTrue(s.contains("layer2 (OutputLayer)"), s);
            assertTrue(s.contains("2 -> 8"), s);
            assertTrue(s.contains("W:{2,8}, b:{1,8}"), s);
            assertTrue(s.contains("SOFTMAX / MCXENT"), s);
            assertTrue(s.contains("[8] -> [5]"), s);
            long total = 2 * 8 + 8 + 8 * 5 + 5 + 5 * 3 + 3;
            assertEquals(total, net.numParams());
            assertTrue(s.contains("Total parameters:     " + total + "\n"), s);
            assertTrue(s.contains("Trainable parameters: " + (total - 45) + "\n"), s);
            assertTrue(s.contains("Frozen parameters:    45\n"), s);
            net.close();
            assertThrows(NativeStateException.class, net::summary);
        }
    }

    // ---- listeners ----------------------------------------------------------------------------

    /** Records every callback as text, with the model's counters where they matter. */
    static final class Recorder extends BaseTrainingListener {
        final List<String> events = new ArrayList<>();
        final List<Double> scores = new ArrayList<>();
        final List<Integer> batchSizes = new ArrayList<>();

        @Override
        public void iterationDone(Model model, int iteration, int epoch) {
            events.add("it " + iteration + " " + epoch);
            scores.add(model.score());
            batchSizes.add(model.batchSize());
        }

        @Override
        public void onEpochStart(Model model) {
            events.add("start " + ((MultiLayerNetwork) model).getEpochCount());
        }

        @Override
        public void onEpochEnd(Model model) {
            events.add("end " + ((MultiLayerNetwork) model).getEpochCount());
        }
    }

    @Test
    void listenersSeeEveryIterationAndEpochWithTheRightNumbers() {
        DataSet data = MultiLayerNetworkTest.blobs(9);
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.classifier(2))) {
            net.init();
            Recorder r = new Recorder();
            List<Integer> lambdaIterations = new ArrayList<>();
            net.setListeners(r, (model, iteration, epoch) -> lambdaIterations.add(iteration));
            assertEquals(2, net.getListeners().size());
            net.fit(new ListDataSetIterator(data.asList(), 30), 2); // 3 minibatches per epoch
            assertEquals(List.of("start 0", "it 0 0", "it 1 0", "it 2 0", "end 0",
                    "start 1", "it 3 1", "it 4 1", "it 5 1", "end 1"), r.events);
            assertEquals(List.of(0, 1, 2, 3, 4, 5), lambdaIterations);
            assertEquals(List.of(30, 30, 30, 30, 30, 30), r.batchSizes);
            assertEquals(net.score(), r.scores.get(5), 0.0, "the listener sees the minibatch's score");
            assertEquals(2, net.getEpochCount());

            // a single DataSet: one iteration, no epoch events
            net.fit(data.getRange(0, 7));
            assertEquals("it 6 2", r.events.get(r.events.size() - 1));
            assertEquals(11, r.events.size());
            assertEquals(7, r.batchSizes.get(6));
            assertEquals(0, net.getLastEtlTime());

            // the reported iteration is the network's counter, whatever it was set to
            net.setIterationCount(100);
            net.fit(data.getRange(0, 7));
            assertEquals("it 100 2", r.events.get(r.events.size() - 1));
        }
    }

    @Test
    void setAddAndGetListeners() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.linearMse(0))) {
            net.init();
            Recorder a = new Recorder();
            Recorder b = new Recorder();
            List<String> order = new ArrayList<>();
            TrainingListener first = (m, i, e) -> order.add("first");
            TrainingListener second = (m, i, e) -> order.add("second");
            net.setListeners(first);
            net.addListeners(second, a);
            assertEquals(List.of(first, second, a), new ArrayList<>(net.getListeners()));
            net.fit(X, Y);
            assertEquals(List.of("first", "second"), order);
            assertEquals(1, a.events.size());
            Collection<TrainingListener> view = net.getListeners();
            assertThrows(UnsupportedOperationException.class, () -> view.add(b));

            net.setListeners(List.of(b));
            net.fit(X, Y);
            assertEquals(1, a.events.size(), "replaced listeners are not called");
            assertEquals(List.of("it 1 0"), b.events);
            net.setListeners((Collection<TrainingListener>) null);
            assertTrue(net.getListeners().isEmpty());
            net.setListeners();
            assertTrue(net.getListeners().isEmpty());
            assertThrows(NullPointerException.class, () -> net.setListeners(first, null));
            assertThrows(NullPointerException.class, () -> net.addListeners((TrainingListener) null));

            try (MultiLayerNetwork copy = net.clone()) {
                net.setListeners(a);
                assertTrue(copy.getListeners().isEmpty(), "clones do not share listeners");
            }
        }
    }

    @Test
    void aFailingListenerStopsFitAfterTheUpdate() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.linearMse(0))) {
            net.init();
            net.setListeners((m, i, e) -> {
                throw new IllegalStateException("listener failed at " + i);
            });
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> net.fit(X, Y));
            assertEquals("listener failed at 0", e.getMessage());
            assertEquals(1, net.getIterationCount());
        }
    }

    // ---- evaluateRegression -------------------------------------------------------------------

    @Test
    void evaluateRegressionEqualsTheHandComputedMetricsOfTheOutput() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.linearMse(0))) {
            net.init();
            net.setParams(W_B); // y = x·[[1,2],[3,4]] + [0.5,-0.5]
            INDArray x = Nd4j.create(new float[] {1, 1, 2, 0, 0, 1, 1, 0}, 4, 2);
            INDArray y = Nd4j.create(new float[] {4, 6, 3, 3, 3, 5, 2, 1}, 4, 2);
            // output: [4.5,5.5], [2.5,3.5], [3.5,3.5], [1.5,1.5]
            assertEquals(Nd4j.create(new float[] {4.5f, 5.5f, 2.5f, 3.5f, 3.5f, 3.5f, 1.5f, 1.5f}, 4, 2),
                    net.output(x));
            // two minibatches (3 + 1 examples)
            RegressionEvaluation e = net.evaluateRegression(new ListDataSetIterator(new DataSet(x, y).asList(), 3));
            assertEquals(2, e.numColumns());
            assertEquals(List.of("col_0", "col_1"), e.getColumnNames());
            // column 0: errors ±0.5; labels 4,3,3,2 (mean 3, Σ(y-ȳ)² = 2); outputs' deviations 1.5,-.5,.5,-1.5
            assertEquals(0.25, e.meanSquaredError(0), 1e-12);
            assertEquals(0.5, e.meanAbsoluteError(0), 1e-12);
            assertEquals(0.5, e.rootMeanSquaredError(0), 1e-12);
            assertEquals(0.5, e.relativeSquaredError(0), 1e-12);
            assertEquals(0.5, e.rSquared(0), 1e-12);
            assertEquals(3 / Math.sqrt(2 * 5), e.pearsonCorrelation(0), 1e-12);
            // column 1: errors .5,-.5,1.5,-.5; labels 6,3,5,1 (mean 3.75, Σ(y-ȳ)² = 14.75); Σ(p-p̄)² = 8, co-moment 10
            assertEquals(0.75, e.meanSquaredError(1), 1e-12);
            assertEquals(0.75, e.meanAbsoluteError(1), 1e-12);
            assertEquals(Math.sqrt(0.75), e.rootMeanSquaredError(1), 1e-12);
            assertEquals(3 / 14.75, e.relativeSquaredError(1), 1e-12);
            assertEquals(1 - 3 / 14.75, e.rSquared(1), 1e-12);
            assertEquals(10 / Math.sqrt(14.75 * 8), e.pearsonCorrelation(1), 1e-12);
            assertEquals((0.25 + 0.75) / 2, e.averageMeanSquaredError(), 1e-12);

            RegressionEvaluation named = net.evaluateRegression(new ListDataSetIterator(new DataSet(x, y).asList(), 2),
                    List.of("a", "b"));
            assertEquals(List.of("a", "b"), named.getColumnNames());
            assertEquals(e.averageRSquared(), named.averageRSquared(), 1e-12);
        }
    }

    @Test
    void evaluateRegressionRefusesAClassifier() {
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.classifier(1))) {
            net.init();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> net.evaluateRegression(new ListDataSetIterator(MultiLayerNetworkTest.blobs(1).asList(), 10)));
            assertTrue(e.getMessage().contains("classifier"), e.getMessage());
        }
    }

    @Test
    void fitIteratorResetsAPartlyConsumedIteratorOnlyBetweenEpochs() {
        DataSet data = MultiLayerNetworkTest.blobs(4);
        try (MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerNetworkTest.classifier(4))) {
            net.init();
            ListDataSetIterator it = new ListDataSetIterator(data.asList(), 30);
            it.next(); // one of three minibatches consumed
            net.fit(it, 3);
            assertEquals(2 + 3 + 3, net.getIterationCount());
            assertEquals(3, net.getEpochCount());
        }
    }
}
