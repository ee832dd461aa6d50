package org.ferrodl.nn.graph;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.datasets.iterator.impl.ListMultiDataSetIterator;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.evaluation.regression.RegressionEvaluation;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.exception.NativeStateException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.api.Layer;
import org.ferrodl.nn.api.Model;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.graph.ElementWiseVertex;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.optimize.api.BaseTrainingListener;
import org.ferrodl.testutil.SerializationUtil;
import org.ferrodl.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java ComputationGraph on small synthetic data (the whole class runs in about 2 s): the chain
 * case equals MultiLayerNetwork bit for bit, two inputs and two outputs with masks, parameters and
 * layers by vertex name, listeners, save/load and Java serialization bit-exact, clone
 * independence, closed-graph errors, evaluation against a hand count. MNIST training is in the
 * example module (GraphMnistTest), which ships the digits.
 */
class ComputationGraphTest {
    @TempDir
    Path tmp;

    private static INDArray gaussian(Random r, int rows, int cols) {
        float[] v = new float[rows * cols];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return new NDArray(v, rows, cols);
    }

    /** One-hot labels whose class depends on the features (so the task is learnable). */
    private static INDArray classes(INDArray x, int nClasses) {
        int rows = (int) x.size(0);
        int cols = (int) x.size(1);
        float[] y = new float[rows * nClasses];
        for (int i = 0; i < rows; i++) {
            double s = 0;
            for (int j = 0; j < cols; j++) {
                s += x.getDouble(i, j) * (j % 2 == 0 ? 1 : -0.5);
            }
            int c = s < -0.5 ? 0 : s < 0.5 ? 1 : 2;
            y[i * nClasses + Math.min(c, nClasses - 1)] = 1;
        }
        return new NDArray(y, rows, nClasses);
    }

    private static List<DataSet> batches(long seed, int n, int rows, int nIn, int nClasses) {
        Random r = new Random(seed);
        List<DataSet> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            INDArray x = gaussian(r, rows, nIn);
            out.add(new DataSet(x, classes(x, nClasses)));
        }
        return out;
    }

    // ---- the chain case ---------------------------------------------------------------------------

    private static NeuralNetConfiguration.Builder chainGlobals() {
        return new NeuralNetConfiguration.Builder().seed(99).updater(new Adam(0.01)).l2(1e-4);
    }

    private static DenseLayer d1() {
        return d1(0.8);
    }

    private static DenseLayer d1(double retain) {
        return new DenseLayer.Builder().nIn(6).nOut(8).activation(Activation.RELU).dropOut(retain).build();
    }

    private static BatchNormalization bn() {
        return new BatchNormalization.Builder().nOut(8).build();
    }

    private static DenseLayer d2() {
        return new DenseLayer.Builder().nIn(8).nOut(5).activation(Activation.TANH).build();
    }

    private static OutputLayer out3() {
        return new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX)
                .updater(new Nesterovs(0.05, 0.9)).build();
    }

    static ComputationGraphConfiguration chainGraph() {
        return chainGraph(0.8);
    }

    /** @param retain the first layer's dropout retain probability (1: none) */
    static ComputationGraphConfiguration chainGraph(double retain) {
        return chainGlobals().graphBuilder().addInputs("in")
                .addLayer("d1", d1(retain), "in")
                .addLayer("bn", bn(), "d1")
                .addLayer("d2", d2(), "bn")
                .addLayer("out", out3(), "d2")
                .setOutputs("out")
                .build();
    }

    @Test
    void aChainGraphTrainsToTheSameParametersAsTheMultiLayerNetwork() {
        MultiLayerConfiguration mc = chainGlobals().list().layer(d1()).layer(bn()).layer(d2()).layer(out3()).build();
        List<DataSet> data = batches(5, 12, 7, 6, 3);
        try (MultiLayerNetwork mln = new MultiLayerNetwork(mc); ComputationGraph cg = new ComputationGraph(chainGraph())) {
            mln.init();
            cg.init();
            assertArrayEquals(mln.params().toFloatVector(), cg.params().toFloatVector(), "same seeded init");
            for (DataSet d : data.subList(0, 6)) {
                mln.fit(d);
                cg.fit(d);
                assertEquals(Double.doubleToLongBits(mln.score()), Double.doubleToLongBits(cg.score()));
            }
            // the iterator paths as well (epoch counters, two epochs)
            mln.fit(new ListDataSetIterator(data.subList(6, 12), 1), 2);
            cg.fit(new ListDataSetIterator(data.subList(6, 12), 1), 2);
            assertArrayEquals(mln.params().toFloatVector(), cg.params().toFloatVector());
            assertArrayEquals(mln.getUpdaterState().toFloatVector(), cg.getUpdaterState().toFloatVector());
            assertEquals(18, cg.getIterationCount());
            assertEquals(2, cg.getEpochCount());
            assertEquals(mln.getIterationCount(), cg.getIterationCount());
            INDArray x = data.get(0).getFeatures();
            assertArrayEquals(mln.output(x).toFloatVector(), cg.outputSingle(x).toFloatVector());
            assertEquals(mln.score(data.get(1)), cg.score(data.get(1)), 0.0);
            assertArrayEquals(mln.scoreExamples(data.get(1), true).toFloatVector(),
                    cg.scoreExamples(data.get(1), true).toFloatVector());
            // same blocks, keyed by vertex name instead of layer index
            List<String> mk = new ArrayList<>(mln.paramTable().keySet());
            List<String> gk = new ArrayList<>(cg.paramTable().keySet());
            assertEquals(mk.size(), gk.size());
            assertEquals("0_W", mk.get(0));
            assertEquals("d1_W", gk.get(0));
            assertEquals(List.of("d1_W", "d1_b", "bn_gamma", "bn_beta", "bn_mean", "bn_var", "d2_W", "d2_b", "out_W",
                    "out_b"), gk);
            assertArrayEquals(mln.getParam("2_W").toFloatVector(), cg.getParam("d2_W").toFloatVector());
            assertArrayEquals(mln.getParam("2_W").shape(), cg.getParam("d2_W").shape());
        }
    }

    // ---- two inputs, two outputs --------------------------------------------------------------------

    /** a(3) -> da(4); b(2) -> db(4); add = da + db -> cls (softmax 2); [add, b] -> reg (identity 1). */
    static ComputationGraphConfiguration twoByTwo() {
        return new NeuralNetConfiguration.Builder().seed(5).updater(new Sgd(0.1)).activation(Activation.TANH)
                .graphBuilder()
                .addInputs("a", "b")
                .addLayer("da", new DenseLayer.Builder().nIn(3).nOut(4).build(), "a")
                .addLayer("db", new DenseLayer.Builder().nIn(2).nOut(4).build(), "b")
                .addVertex("add", new ElementWiseVertex(ElementWiseVertex.Op.Add), "da", "db")
                .addLayer("cls", new OutputLayer.Builder(LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX)
                        .build(), "add")
                .addLayer("reg", new OutputLayer.Builder(LossFunction.MSE).nOut(1).activation(Activation.IDENTITY)
                        .build(), "add", "b")
                .setOutputs("cls", "reg")
                .build();
    }

    private static MultiDataSet twoByTwoData(Random r, int rows) {
        INDArray a = gaussian(r, rows, 3);
        INDArray b = gaussian(r, rows, 2);
        float[] cls = new float[rows * 2];
        float[] reg = new float[rows];
        for (int i = 0; i < rows; i++) {
            cls[i * 2 + (a.getDouble(i, 0) + b.getDouble(i, 1) > 0 ? 1 : 0)] = 1;
            reg[i] = (float) (0.5 * a.getDouble(i, 2) - b.getDouble(i, 0));
        }
        return new MultiDataSet(new INDArray[] {a, b}, new INDArray[] {new NDArray(cls, rows, 2), new NDArray(reg, rows, 1)});
    }

    @Test
    void twoInputsAndTwoOutputsTrainPredictAndNameThemselves() {
        Random r = new Random(3);
        List<MultiDataSet> train = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            train.add(twoByTwoData(r, 16));
        }
        MultiDataSet test = twoByTwoData(r, 64);
        try (ComputationGraph g = new ComputationGraph(twoByTwo())) {
            g.init();
            assertEquals(3 * 4 + 4 + 2 * 4 + 4 + 4 * 2 + 2 + 6 + 1, g.numParams());
            assertArrayEquals(new long[] {3, 2}, g.numInputs());
            assertArrayEquals(new long[] {2, 1}, g.numOutputs());
            assertEquals(2, g.getNumInputArrays());
            assertEquals(2, g.getNumOutputArrays());
            double before = g.score(test);
            int[] calls = new int[3];
            g.setListeners(new BaseTrainingListener() {
                @Override
                public void iterationDone(Model model, int iteration, int epoch) {
                    assertSame(g, model);
                    assertEquals(calls[0], iteration);
                    calls[0]++;
                }

                @Override
                public void onEpochStart(Model model) {
                    calls[1]++;
                }

                @Override
                public void onEpochEnd(Model model) {
                    calls[2]++;
                }
            });
            g.fit(new ListMultiDataSetIterator(train, 1), 5);
            assertArrayEquals(new int[] {100, 5, 5}, calls);
            assertEquals(100, g.getIterationCount());
            assertEquals(5, g.getEpochCount());
            assertEquals(16, g.batchSize());
            double after = g.score(test);
            assertTrue(after < 0.6 * before, before + " -> " + after);

            INDArray[] out = g.output(test.getFeatures());
            assertEquals(2, out.length);
            assertArrayEquals(new long[] {64, 2}, out[0].shape());
            assertArrayEquals(new long[] {64, 1}, out[1].shape());
            assertEquals(1.0, out[0].getDouble(0, 0) + out[0].getDouble(0, 1), 1e-6);
            IllegalStateException single = assertThrows(IllegalStateException.class,
                    () -> g.outputSingle(test.getFeatures()));
            assertTrue(single.getMessage().contains("[cls, reg]"), single.getMessage());

            Map<String, INDArray> ff = g.feedForward(test.getFeatures(), false);
            assertEquals(List.of("a", "b", "da", "db", "add", "cls", "reg-merge", "reg"), new ArrayList<>(ff.keySet()));
            assertSame(test.getFeatures(0), ff.get("a"));
            assertArrayEquals(new long[] {64, 6}, ff.get("reg-merge").shape());
            assertArrayEquals(out[0].toFloatVector(), ff.get("cls").toFloatVector());
            assertArrayEquals(out[1].toFloatVector(), ff.get("reg").toFloatVector());
            float[] add = ff.get("add").toFloatVector();
            float[] da = ff.get("da").toFloatVector();
            float[] db = ff.get("db").toFloatVector();
            for (int i = 0; i < add.length; i++) {
                assertEquals(da[i] + db[i], add[i], 1e-6);
            }

            // over an iterator: the minibatches' outputs and scores stacked in order
            List<MultiDataSet> halves = List.of(test.getRange(0, 40), test.getRange(40, 64));
            INDArray[] stacked = g.output(new ListMultiDataSetIterator(halves, 1));
            assertArrayEquals(new long[] {64, 2}, stacked[0].shape());
            assertArrayEquals(out[0].toFloatVector(), stacked[0].toFloatVector());
            assertArrayEquals(out[1].toFloatVector(), stacked[1].toFloatVector());
            assertArrayEquals(g.scoreExamples(test, true).toFloatVector(),
                    g.scoreExamples(new ListMultiDataSetIterator(halves, 1), true).toFloatVector());
            // the mean of per-example scores is the score (no L1/L2 here)
            INDArray per = g.scoreExamples(test, false);
            assertArrayEquals(new long[] {64, 1}, per.shape());
            assertEquals(g.score(test), per.meanNumber().doubleValue(), 1e-5);

            // parameters and layers by vertex name
            Map<String, INDArray> table = g.paramTable();
            assertEquals(List.of("da_W", "da_b", "db_W", "db_b", "cls_W", "cls_b", "reg_W", "reg_b"),
                    new ArrayList<>(table.keySet()));
            assertArrayEquals(new long[] {6, 1}, table.get("reg_W").shape());
            assertArrayEquals(new long[] {1, 4}, table.get("da_b").shape());
            Layer da1 = g.getLayer("da");
            assertArrayEquals(table.get("da_W").toFloatVector(), da1.getParam("W").toFloatVector());
            assertEquals(4, g.getLayers().length);
            assertEquals(4, g.getNumLayers());
            IllegalArgumentException noLayer = assertThrows(IllegalArgumentException.class, () -> g.getLayer("add"));
            assertTrue(noLayer.getMessage().contains("[da, db, cls, reg]"), noLayer.getMessage());
            assertEquals(0.1, g.getLearningRate("da"), 1e-12);
            assertNull(g.getLearningRate("add"));
            assertTrue(g.getVertexNames().indexOf("add") > g.getVertexNames().indexOf("db"));
            assertTrue(g.getVertex("add") instanceof ElementWiseVertex);
            INDArray w = new NDArray(new float[] {1, 2, 3, 4, 5, 6}, 6, 1);
            g.setParam("reg_W", w);
            assertArrayEquals(w.toFloatVector(), g.getParam("reg_W").toFloatVector());
            assertThrows(IllegalArgumentException.class, () -> g.setParam("reg_W", new NDArray(new float[2], 1, 2)));
            IllegalArgumentException noKey = assertThrows(IllegalArgumentException.class, () -> g.getParam("x_W"));
            assertTrue(noKey.getMessage().contains("da_W"), noKey.getMessage());

            String summary = g.summary();
            assertTrue(summary.contains("Vertex Inputs"), summary);
            assertTrue(summary.contains("add (ElementWiseVertex)"), summary);
            assertTrue(summary.contains("reg-merge (MergeVertex)"), summary);
            assertTrue(summary.contains("da, db"), summary);
            assertTrue(summary.contains("a (InputVertex)"), summary);
            assertTrue(summary.contains("[4] + [2] -> [6]"), summary); // reg-merge: add and b
            assertTrue(summary.contains("Total parameters:     " + g.numParams()), summary);
        }
    }

    @Test
    void masksGoToTheirInputsAndOutputs() {
        Random r = new Random(11);
        MultiDataSet d = twoByTwoData(r, 4);
        try (ComputationGraph g = new ComputationGraph(twoByTwo())) {
            g.init();
            double[] per = g.scoreExamples(d, false).toDoubleVector();
            // Example 1 masked out of the classification output only: it keeps its regression loss.
            INDArray clsMask = new NDArray(new float[] {1, 0, 1, 1}, 4, 1);
            MultiDataSet masked = new MultiDataSet(d.getFeatures(), d.getLabels(), null,
                    new INDArray[] {clsMask, null});
            double[] m = g.scoreExamples(masked, false).toDoubleVector();
            assertEquals(per[0], m[0], 1e-6);
            assertEquals(per[2], m[2], 1e-6);
            assertTrue(m[1] < per[1] && m[1] > 0, Arrays.toString(m));
            // Every label masked: plain SGD, no regularization -> a fit changes nothing.
            INDArray none = new NDArray(new float[4], 4, 1);
            float[] p0 = g.params().toFloatVector();
            g.fit(new MultiDataSet(d.getFeatures(), d.getLabels(), null, new INDArray[] {none, none}));
            assertArrayEquals(p0, g.params().toFloatVector());
            assertEquals(0.0, g.score(), 1e-12);
            g.fit(new MultiDataSet(d.getFeatures(), d.getLabels(), null, new INDArray[] {none, null}));
            assertFalse(Arrays.equals(p0, g.params().toFloatVector()), "the regression output still trains");
        }
    }

    @Test
    void badInputIsAnExceptionNamingTheInputOrOutput() {
        Random r = new Random(1);
        MultiDataSet d = twoByTwoData(r, 4);
        try (ComputationGraph g = new ComputationGraph(twoByTwo())) {
            g.init();
            DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                    () -> g.output(d.getFeatures(0), gaussian(r, 5, 2)));
            assertEquals("features for \"b\" have 5 examples but those for \"a\" have 4", e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> g.output(d.getFeatures(0), gaussian(r, 4, 3)));
            assertTrue(e.getMessage().contains("\"b\""), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> g.output(d.getFeatures(0)));
            assertTrue(e.getMessage().contains("2 network inputs"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> g.fit(new MultiDataSet(d.getFeatures(),
                    new INDArray[] {d.getLabels(0), gaussian(r, 4, 3)})));
            assertTrue(e.getMessage().contains("\"reg\""), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> g.fit(new DataSet(d.getFeatures(0), d.getLabels(0))));
            assertTrue(e.getMessage().contains("2 network inputs"), e.getMessage());
            INDArray nan = d.getFeatures(1).dup();
            nan.putScalar(0, 1, Double.NaN);
            assertThrows(DL4JInvalidInputException.class, () -> g.fit(new MultiDataSet(
                    new INDArray[] {d.getFeatures(0), nan}, d.getLabels())));
            assertEquals(0, g.getIterationCount(), "a refused minibatch does not count");
        }
    }

    @Test
    void computeGradientAndScoreLeavesTheParametersAndGivesTheGradientByKey() {
        Random r = new Random(2);
        MultiDataSet d = twoByTwoData(r, 8);
        try (ComputationGraph g = new ComputationGraph(twoByTwo())) {
            g.init();
            float[] p0 = g.params().toFloatVector();
            g.computeGradientAndScore(d);
            assertArrayEquals(p0, g.params().toFloatVector());
            assertEquals(g.score(d), g.score(), 1e-6, "no dropout: training and inference scores agree");
            org.ferrodl.nn.gradient.Gradient grad = g.gradient();
            assertEquals(g.numParams(), grad.gradient().length());
            assertArrayEquals(new long[] {3, 4}, grad.getGradientFor("da_W").shape());
            // one plain-SGD step moves the parameters by -lr * gradient
            g.fit(d);
            float[] p1 = g.params().toFloatVector();
            float[] gv = grad.gradient().toFloatVector();
            for (int i = 0; i < p0.length; i++) {
                assertEquals(p0[i] - 0.1f * gv[i], p1[i], 1e-6, "parameter " + i);
            }
        }
    }

    /** in (4×4×1) -> conv 3×3×2 same -> [conv, in] merged along channels -> softmax 3. */
    static ComputationGraphConfiguration smallConv() {
        return new NeuralNetConfiguration.Builder().seed(4).updater(new Sgd(0.05))
                .convolutionMode(org.ferrodl.nn.conf.ConvolutionMode.Same)
                .graphBuilder()
                .addInputs("img")
                .setInputTypes(org.ferrodl.nn.conf.inputs.InputType.convolutional(4, 4, 1))
                .addLayer("conv", new org.ferrodl.nn.conf.layers.ConvolutionLayer.Builder(3, 3).nOut(2)
                        .activation(Activation.TANH).build(), "img")
                .addVertex("cat", new org.ferrodl.nn.conf.graph.MergeVertex(), "conv", "img")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX)
                        .build(), "cat")
                .setOutputs("out")
                .build();
    }

    @Test
    void imageInputsMayKeepTheirShapeAndNamedActivationsComeBackShaped() {
        Random r = new Random(8);
        INDArray flat = gaussian(r, 5, 16);
        INDArray image = flat.reshape(5, 1, 4, 4);
        try (ComputationGraph g = new ComputationGraph(smallConv())) {
            g.init();
            assertArrayEquals(g.outputSingle(flat).toFloatVector(), g.outputSingle(image).toFloatVector());
            INDArray[] acts = g.output(List.of("cat", "conv"), false, new INDArray[] {image}, null);
            assertArrayEquals(new long[] {5, 3, 4, 4}, acts[0].shape());
            assertArrayEquals(new long[] {5, 2, 4, 4}, acts[1].shape());
            // the merge puts conv's 2 channels first, then the image's 1
            float[] cat = acts[0].toFloatVector();
            float[] conv = acts[1].toFloatVector();
            float[] img = image.toFloatVector();
            for (int n = 0; n < 5; n++) {
                for (int p = 0; p < 16; p++) {
                    assertEquals(conv[n * 32 + p], cat[n * 48 + p], 0f);
                    assertEquals(conv[n * 32 + 16 + p], cat[n * 48 + 16 + p], 0f);
                    assertEquals(img[n * 16 + p], cat[n * 48 + 32 + p], 0f);
                }
            }
            assertThrows(IllegalArgumentException.class,
                    () -> g.output(List.of("nope"), false, new INDArray[] {image}, null));
            assertEquals(2, g.layerSize("conv"));
            assertEquals(1, g.layerInputSize("conv"));
            assertEquals(48, g.layerInputSize("out"));
            assertEquals("out", g.getOutputLayer(0).getLayerName());
            assertThrows(IllegalArgumentException.class, () -> g.getOutputLayer(1));
            DataSet d = new DataSet(image, classes(flat, 3));
            org.ferrodl.evaluation.classification.ROCMultiClass roc =
                    g.evaluateROCMultiClass(new ListDataSetIterator(List.of(d), 1), 0);
            assertTrue(roc.calculateAUC(0) >= 0 && roc.calculateAUC(0) <= 1);
            g.fit(new INDArray[] {image}, new INDArray[] {d.getLabels()}, null,
                    new INDArray[] {new NDArray(new float[5], 5, 1)});
            assertEquals(1, g.getIterationCount());
        }
    }

    // ---- persistence, copies, lifecycle -------------------------------------------------------------

    /**
     * Adam, Nesterovs, batch normalization; no dropout, because dropout masks come from a random
     * stream that is not part of a saved model (as in the reference), so training after a load
     * would draw other masks.
     */
    private static ComputationGraph trainedAdamGraph() {
        ComputationGraph g = new ComputationGraph(chainGraph(1.0));
        g.init();
        for (DataSet d : batches(8, 5, 6, 6, 3)) {
            g.fit(d);
        }
        g.incrementEpochCount();
        return g;
    }

    private static void assertSameState(ComputationGraph a, ComputationGraph b) {
        assertArrayEquals(a.params().toFloatVector(), b.params().toFloatVector());
        assertArrayEquals(a.getUpdaterState().toFloatVector(), b.getUpdaterState().toFloatVector());
        assertEquals(a.getIterationCount(), b.getIterationCount());
        assertEquals(a.getEpochCount(), b.getEpochCount());
    }

    @Test
    void saveAndLoadAreBitExactAndContinueTrainingIdentically() throws Exception {
        File f = tmp.resolve("graph.zip").toFile();
        List<DataSet> more = batches(9, 3, 6, 6, 3);
        try (ComputationGraph g = trainedAdamGraph()) {
            g.save(f);
            try (ComputationGraph l = ComputationGraph.load(f)) {
                assertSameState(g, l);
                assertEquals(g.getConfiguration(), l.getConfiguration());
                for (DataSet d : more) {
                    g.fit(d);
                    l.fit(d);
                }
                assertSameState(g, l);
            }
            try (ComputationGraph noUpd = ModelSerializer.restoreComputationGraph(f, false)) {
                assertEquals(g.numParams(), noUpd.numParams());
                assertTrue(Arrays.stream(noUpd.getUpdaterState().toDoubleVector()).allMatch(x -> x == 0.0));
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            ModelSerializer.writeModel(g, bytes, true);
            try (ComputationGraph s = ModelSerializer.restoreComputationGraph(new ByteArrayInputStream(bytes.toByteArray()))) {
                assertSameState(g, s);
            }
            ComputationGraph j = SerializationUtil.javaRoundTrip(g);
            try (ComputationGraph jj = j) {
                assertSameState(g, jj);
                assertEquals(Double.doubleToLongBits(g.score()), Double.doubleToLongBits(jj.score()));
            }
        }
    }

    @Test
    void aNetworkFileOfTheOtherTypeIsRefusedByName() throws Exception {
        File mlnFile = tmp.resolve("mln.zip").toFile();
        File cgFile = tmp.resolve("cg.zip").toFile();
        MultiLayerConfiguration mc = chainGlobals().list().layer(d1()).layer(bn()).layer(d2()).layer(out3()).build();
        try (MultiLayerNetwork mln = new MultiLayerNetwork(mc); ComputationGraph cg = new ComputationGraph(chainGraph())) {
            mln.init();
            cg.init();
            mln.save(mlnFile);
            cg.save(cgFile);
        }
        IOException e = assertThrows(IOException.class, () -> ModelSerializer.restoreComputationGraph(mlnFile));
        assertTrue(e.getMessage().contains("holds a MultiLayerNetwork, not a ComputationGraph"), e.getMessage());
        assertTrue(e.getMessage().contains("restoreMultiLayerNetwork"), e.getMessage());
        e = assertThrows(IOException.class, () -> MultiLayerNetwork.load(cgFile));
        assertTrue(e.getMessage().contains("holds a ComputationGraph, not a MultiLayerNetwork"), e.getMessage());
        assertTrue(e.getMessage().contains("restoreComputationGraph"), e.getMessage());
    }

    @Test
    void aCloneIsIndependent() {
        try (ComputationGraph g = trainedAdamGraph()) {
            ComputationGraph c = g.clone();
            try {
                assertSameState(g, c);
                assertEquals(Double.doubleToLongBits(g.score()), Double.doubleToLongBits(c.score()));
                float[] before = g.params().toFloatVector();
                c.fit(batches(10, 1, 6, 6, 3).get(0));
                assertArrayEquals(before, g.params().toFloatVector(), "training the clone leaves the original");
                assertNotEquals(g.getIterationCount(), c.getIterationCount());
                g.close();
                assertEquals(6, c.getIterationCount(), "the clone outlives the original");
            } finally {
                c.close();
            }
        }
        try (ComputationGraph fresh = new ComputationGraph(chainGraph()); ComputationGraph c = fresh.clone()) {
            assertFalse(c.isInitCalled(), "a clone of an uninitialized graph is uninitialized");
        }
    }

    @Test
    void aClosedOrUninitializedGraphSaysSo() {
        ComputationGraph g = new ComputationGraph(twoByTwo());
        NativeStateException e = assertThrows(NativeStateException.class, g::params);
        assertTrue(e.getMessage().contains("call init() first"), e.getMessage());
        assertTrue(g.summary().contains("da (DenseLayer)"), "summary works before init()");
        g.init();
        g.close();
        g.close(); // idempotent
        assertTrue(g.isClosed());
        MultiDataSet d = twoByTwoData(new Random(4), 2);
        for (org.junit.jupiter.api.function.Executable call : List.<org.junit.jupiter.api.function.Executable>of(
                () -> g.fit(d), () -> g.output(d.getFeatures()), g::params, g::paramTable, () -> g.score(d),
                g::summary, g::getConfiguration, g::init, () -> g.getLayer("da"), g::clone)) {
            e = assertThrows(NativeStateException.class, call);
            assertEquals("network is closed", e.getMessage());
        }
    }

    // ---- evaluation ---------------------------------------------------------------------------------

    @Test
    void evaluateEqualsAHandCount() {
        List<DataSet> test = batches(21, 4, 25, 6, 3);
        try (ComputationGraph g = trainedAdamGraph()) {
            int correct = 0;
            int total = 0;
            for (DataSet d : test) {
                INDArray out = g.outputSingle(d.getFeatures());
                for (int i = 0; i < out.size(0); i++) {
                    total++;
                    if (argMax(out, i) == argMax(d.getLabels(), i)) {
                        correct++;
                    }
                }
            }
            INDArray all = g.outputSingle(new ListDataSetIterator(test, 1));
            assertArrayEquals(new long[] {100, 3}, all.shape());
            assertArrayEquals(g.outputSingle(test.get(3).getFeatures()).toFloatVector(),
                    all.getRows(75, 100).toFloatVector());
            Evaluation e = g.evaluate(new ListDataSetIterator(test, 1));
            assertEquals(100, total);
            assertEquals(correct / (double) total, e.accuracy(), 1e-12);
            assertTrue(correct > 0 && correct < total, "a partly trained net: " + correct);
        }
        try (ComputationGraph g = new ComputationGraph(twoByTwo())) {
            g.init();
            Random r = new Random(6);
            List<MultiDataSet> data = List.of(twoByTwoData(r, 10), twoByTwoData(r, 10));
            IllegalStateException ise = assertThrows(IllegalStateException.class,
                    () -> g.evaluate(new ListMultiDataSetIterator(data, 1)));
            assertTrue(ise.getMessage().contains("2 outputs"), ise.getMessage());
            Evaluation cls = new Evaluation(2);
            RegressionEvaluation reg = new RegressionEvaluation(1);
            Map<Integer, IEvaluation<?>[]> m = new LinkedHashMap<>();
            m.put(0, new IEvaluation<?>[] {cls});
            m.put(1, new IEvaluation<?>[] {reg});
            g.doEvaluation(new ListMultiDataSetIterator(data, 1), m);
            assertEquals(20, cls.getNumRowCounter(), 0);
            double sse = 0;
            for (MultiDataSet d : data) {
                INDArray o = g.output(d.getFeatures())[1];
                for (int i = 0; i < 10; i++) {
                    double diff = o.getDouble(i, 0) - d.getLabels(1).getDouble(i, 0);
                    sse += diff * diff;
                }
            }
            assertEquals(sse / 20, reg.meanSquaredError(0), 1e-6);
        }
    }

    private static int argMax(INDArray a, int row) {
        int best = 0;
        for (int j = 1; j < a.size(1); j++) {
            if (a.getDouble(row, j) > a.getDouble(row, best)) {
                best = j;
            }
        }
        return best;
    }
}
