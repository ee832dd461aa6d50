package org.ferrodl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.datasets.iterator.impl.ListMultiDataSetIterator;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.ConvolutionMode;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.graph.ElementWiseVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ActivationLayer;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.graph.ComputationGraph;
import org.ferrodl.nn.weights.WeightInit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ComputationGraph through the Java API on the MNIST digits this module ships (mnist10k): a
 * residual CNN and a two-input/two-output network, each trained briefly and held to a stated test
 * accuracy (the measured values are next to each bar). Both together take about 22 s at load 15
 * on 2 cores.
 */
class GraphMnistTest {
    private static MnistData train;
    private static MnistData test;

    @BeforeAll
    static void load() throws Exception {
        train = MnistData.load(null, "train");
        test = MnistData.load(null, "test");
    }

    /**
     * conv 3×3×8 (same) → max-pool 2 → two residual blocks [conv 3×3×8 ReLU → conv 3×3×8 → Add with
     * the block input → ReLU] → max-pool 2 → dense 64 ReLU → softmax 10.
     */
    static ComputationGraphConfiguration residualCnn() {
        ComputationGraphConfiguration.GraphBuilder b = new NeuralNetConfiguration.Builder().seed(12345)
                .updater(new Adam(3e-3)).weightInit(WeightInit.RELU).convolutionMode(ConvolutionMode.Same)
                .graphBuilder()
                .addInputs("image")
                .setInputTypes(InputType.convolutionalFlat(28, 28, 1))
                .addLayer("stem", new ConvolutionLayer.Builder(3, 3).nOut(8).activation(Activation.RELU).build(), "image")
                .addLayer("pool1", new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2)
                        .stride(2, 2).build(), "stem");
        String in = "pool1";
        for (int k = 1; k <= 2; k++) {
            String p = "block" + k;
            b.addLayer(p + "_conv1", new ConvolutionLayer.Builder(3, 3).nOut(8).activation(Activation.RELU).build(), in)
                    .addLayer(p + "_conv2", new ConvolutionLayer.Builder(3, 3).nOut(8).activation(Activation.IDENTITY)
                            .build(), p + "_conv1")
                    .addVertex(p + "_add", new ElementWiseVertex(ElementWiseVertex.Op.Add), in, p + "_conv2")
                    .addLayer(p + "_relu", new ActivationLayer.Builder().activation(Activation.RELU).build(), p + "_add");
            in = p + "_relu";
        }
        return b.addLayer("pool2", new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2)
                        .stride(2, 2).build(), in)
                .addLayer("fc", new DenseLayer.Builder().nOut(64).activation(Activation.RELU).build(), "pool2")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nOut(10).activation(Activation.SOFTMAX)
                        .build(), "fc")
                .setOutputs("out")
                .build();
    }

    @Test
    void aResidualCnnLearnsTheDigits() {
        List<DataSet> batches = train.toDataSets(32, train.shuffledOrder(1));
        List<DataSet> testBatches = test.toDataSets(500, null);
        long t0 = System.nanoTime();
        try (ComputationGraph net = new ComputationGraph(residualCnn())) {
            net.init();
            assertEquals(8 * 9 + 8 + 4 * (8 * 8 * 9 + 8) + 7 * 7 * 8 * 64 + 64 + 64 * 10 + 10, net.numParams());
            net.fit(new ListDataSetIterator(batches, 1), 2);
            Evaluation e = net.evaluate(new ListDataSetIterator(testBatches, 1));
            double seconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf(Locale.ROOT, "residual CNN: test accuracy %.4f on %d digits, %.1f s%n", e.accuracy(),
                    test.count, seconds);
            assertEquals(test.count, e.getNumRowCounter());
            // measured 0.9536 (seeded; 2 cores)
            assertTrue(e.accuracy() >= 0.94, "test accuracy " + e.accuracy() + " < 0.94");
            // the residual additions are real: each block's output is relu(input + conv2)
            Map<String, INDArray> ff = net.feedForward(new INDArray[] {testBatches.get(0).getFeatures()}, false);
            float[] x = ff.get("pool1").toFloatVector();
            float[] c = ff.get("block1_conv2").toFloatVector();
            float[] y = ff.get("block1_relu").toFloatVector();
            assertArrayEqualsRelu(x, c, y);
            assertEquals(List.of(500L, 8L, 14L, 14L), longs(ff.get("block1_add").shape()));
        }
    }

    private static void assertArrayEqualsRelu(float[] x, float[] c, float[] y) {
        for (int i = 0; i < y.length; i++) {
            assertEquals(Math.max(0f, x[i] + c[i]), y[i], 1e-5, "element " + i);
        }
    }

    private static List<Long> longs(long[] a) {
        List<Long> out = new ArrayList<>();
        for (long v : a) {
            out.add(v);
        }
        return out;
    }

    /**
     * Inputs: the top and the bottom half of each digit (392 pixels each); outputs: the digit
     * (softmax 10) and whether it is even (softmax 2). Each half has its own dense layer; the two
     * are merged and feed a shared dense layer and both outputs.
     */
    static ComputationGraphConfiguration twoHalves() {
        return new NeuralNetConfiguration.Builder().seed(7).updater(new Adam(1e-3)).weightInit(WeightInit.RELU)
                .activation(Activation.RELU)
                .graphBuilder()
                .addInputs("top", "bottom")
                .addLayer("top_dense", new DenseLayer.Builder().nIn(392).nOut(128).build(), "top")
                .addLayer("bottom_dense", new DenseLayer.Builder().nIn(392).nOut(128).build(), "bottom")
                .addLayer("shared", new DenseLayer.Builder().nOut(64).build(), "top_dense", "bottom_dense")
                .addLayer("digit", new OutputLayer.Builder(LossFunction.MCXENT).nOut(10).activation(Activation.SOFTMAX)
                        .build(), "shared")
                .addLayer("even", new OutputLayer.Builder(LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX)
                        .build(), "shared")
                .setOutputs("digit", "even")
                .build();
    }

    private static MultiDataSet halves(DataSet d) {
        int rows = (int) d.getFeatures().size(0);
        float[] f = d.getFeatures().toFloatVector();
        float[] l = d.getLabels().toFloatVector();
        float[] even = new float[rows * 2];
        for (int r = 0; r < rows; r++) {
            int digit = 0;
            while (l[r * 10 + digit] == 0) {
                digit++;
            }
            even[r * 2 + (digit % 2 == 0 ? 1 : 0)] = 1;
        }
        INDArray top = new NDArray(new float[rows * 392], rows, 392);
        INDArray bottom = new NDArray(new float[rows * 392], rows, 392);
        float[] t = NDArray.internalData(top);
        float[] b = NDArray.internalData(bottom);
        for (int r = 0; r < rows; r++) {
            System.arraycopy(f, r * 784, t, r * 392, 392);
            System.arraycopy(f, r * 784 + 392, b, r * 392, 392);
        }
        return new MultiDataSet(new INDArray[] {top, bottom}, new INDArray[] {d.getLabels(), new NDArray(even, rows, 2)});
    }

    @Test
    void aTwoInputTwoOutputGraphLearnsDigitAndParity() {
        List<MultiDataSet> batches = new ArrayList<>();
        for (DataSet d : train.toDataSets(32, train.shuffledOrder(2))) {
            batches.add(halves(d));
        }
        List<MultiDataSet> testBatches = new ArrayList<>();
        for (DataSet d : test.toDataSets(500, null)) {
            testBatches.add(halves(d));
        }
        long t0 = System.nanoTime();
        try (ComputationGraph net = new ComputationGraph(twoHalves())) {
            net.init();
            net.fit(new ListMultiDataSetIterator(batches, 1), 5);
            Evaluation digit = new Evaluation(10);
            Evaluation even = new Evaluation(2);
            Map<Integer, IEvaluation<?>[]> evals = new LinkedHashMap<>();
            evals.put(0, new IEvaluation<?>[] {digit});
            evals.put(1, new IEvaluation<?>[] {even});
            net.doEvaluation(new ListMultiDataSetIterator(testBatches, 1), evals);
            double seconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf(Locale.ROOT, "two halves: digit accuracy %.4f, parity accuracy %.4f, %.1f s%n",
                    digit.accuracy(), even.accuracy(), seconds);
            assertEquals(test.count, digit.getNumRowCounter());
            // measured 0.9446 (seeded; 2 cores)
            assertTrue(digit.accuracy() >= 0.93, "digit accuracy " + digit.accuracy() + " < 0.93");
            // measured 0.9726 (seeded; 2 cores)
            assertTrue(even.accuracy() >= 0.96, "parity accuracy " + even.accuracy() + " < 0.96");
            assertEquals(5 * batches.size(), net.getIterationCount());
            assertTrue(Arrays.asList(net.summary().split("\n")).stream()
                    .anyMatch(line -> line.startsWith("2 ") && line.contains("top_dense, bottom_dense")),
                    net.summary());
        }
    }
}
