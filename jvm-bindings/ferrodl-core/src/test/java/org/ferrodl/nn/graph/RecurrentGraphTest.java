package org.ferrodl.nn.graph;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.BackpropType;
import org.ferrodl.nn.conf.ComputationGraphConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.RNNFormat;
import org.ferrodl.nn.conf.graph.L2NormalizeVertex;
import org.ferrodl.nn.conf.graph.SubsetVertex;
import org.ferrodl.nn.conf.graph.rnn.LastTimeStepVertex;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.GlobalPoolingLayer;
import org.ferrodl.nn.conf.layers.LSTM;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.PoolingType;
import org.ferrodl.nn.conf.layers.recurrent.SimpleRnn;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.preprocessor.RnnToCnnPreProcessor;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.linalg.dataset.DataSet;
import org.junit.jupiter.api.Test;

/**
 * A recurrent ComputationGraph through the Java API: two per-step outputs ([N, nOut, T]) from an
 * LSTM and a SimpleRnn on it, masks, rnnTimeStep by vertex name equal to output on the whole
 * sequence (1e-5), state per graph object.
 */
class RecurrentGraphTest {
    private static final double TOL = 1e-5;

    private static ComputationGraph graph(long seed) {
        ComputationGraphConfiguration c = new NeuralNetConfiguration.Builder().seed(seed).updater(new Adam(0.02))
                .activation(Activation.TANH).graphBuilder()
                .addInputs("in").setInputTypes(InputType.recurrent(3))
                .addLayer("lstm", new LSTM.Builder().nOut(4).build(), "in")
                .addLayer("perStep", new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY)
                        .nOut(2).build(), "lstm")
                .addLayer("rnn2", new SimpleRnn.Builder().nOut(3).build(), "lstm")
                .addLayer("summary", new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY)
                        .nOut(1).build(), "rnn2")
                .setOutputs("perStep", "summary")
                .build();
        ComputationGraph g = new ComputationGraph(c);
        g.init();
        return g;
    }

    private static INDArray step(INDArray a, int s) {
        int n = (int) a.size(0);
        int c = (int) a.size(1);
        int t = (int) a.size(2);
        float[] src = NDArray.internalData(a);
        float[] out = new float[n * c];
        for (int i = 0; i < n * c; i++) {
            out[i] = src[i * t + s];
        }
        return new NDArray(out, n, c);
    }

    private static void assertClose(INDArray want, INDArray got, String what) {
        assertArrayEquals(want.shape(), got.shape(), what + " shape");
        for (int i = 0; i < want.length(); i++) {
            assertEquals(want.getDouble(i), got.getDouble(i), TOL, what + " value " + i);
        }
    }

    @Test
    void outputsShapesMasksAndFit() {
        try (ComputationGraph g = graph(1)) {
            INDArray f = Nd4j.rand(3, new long[] {2, 3, 5});
            INDArray mask = Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, 2, 5);
            INDArray[] out = g.output(false, new INDArray[] {f}, new INDArray[] {mask});
            assertArrayEquals(new long[] {2, 2, 5}, out[0].shape());
            assertArrayEquals(new long[] {2, 1, 5}, out[1].shape());
            // example 1 has two real steps (mask): its outputs there equal running those two steps alone
            INDArray alone = Nd4j.create(new float[] {
                (float) f.getDouble(1, 0, 0), (float) f.getDouble(1, 0, 1),
                (float) f.getDouble(1, 1, 0), (float) f.getDouble(1, 1, 1),
                (float) f.getDouble(1, 2, 0), (float) f.getDouble(1, 2, 1)}, 1, 3, 2);
            INDArray[] one = g.output(false, alone);
            for (int k = 0; k < 2; k++) {
                for (int s = 0; s < 2; s++) {
                    assertClose(step(one[k], s), step(out[k].getRows(1, 2), s), "output " + k + " step " + s);
                }
            }
            MultiDataSet d = new MultiDataSet(new INDArray[] {f}, new INDArray[] {Nd4j.rand(4, new long[] {2, 2, 5}),
                Nd4j.rand(5, new long[] {2, 1, 5})}, new INDArray[] {mask}, new INDArray[] {mask.dup(), mask.dup()});
            double before = g.score(d);
            for (int i = 0; i < 60; i++) {
                g.fit(d);
            }
            assertTrue(g.score(d) < 0.5 * before, before + " -> " + g.score(d));
        }
    }

    @Test
    void rnnTimeStepByVertexEqualsOutput() {
        try (ComputationGraph g = graph(2)) {
            INDArray f = Nd4j.rand(7, new long[] {3, 3, 6});
            INDArray full = g.output(false, f)[0];
            for (int s = 0; s < 6; s++) {
                INDArray[] o = g.rnnTimeStep(step(f, s));
                assertArrayEquals(new long[] {3, 2}, o[0].shape());
                assertClose(step(full, s), o[0], "step " + s);
            }
            Map<String, INDArray> st = g.rnnGetPreviousState("lstm");
            assertEquals(List.of("prevAct", "prevMem"), List.copyOf(st.keySet()));
            assertArrayEquals(new long[] {3, 4}, st.get("prevMem").shape());
            try (ComputationGraph other = g.clone()) {
                assertTrue(other.rnnGetPreviousState("lstm").isEmpty(), "a clone does not share the state");
                other.rnnSetPreviousState("lstm", st);
                INDArray next = Nd4j.rand(8, new long[] {3, 3});
                assertClose(g.rnnTimeStep(next)[0], other.rnnTimeStep(next)[0], "moved state");
            }
            g.rnnClearPreviousState();
            assertClose(step(full, 0), g.rnnTimeStep(step(f, 0))[0], "after clear");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> g.rnnGetPreviousState("perStep"));
            assertTrue(e.getMessage().contains("\"perStep\"") && e.getMessage().contains("not a recurrent"),
                    e.getMessage());
        }
    }

    @Test
    void maskedPoolingOverTimeEqualsTheUnpaddedSequence() {
        ComputationGraphConfiguration c = new NeuralNetConfiguration.Builder().seed(3).activation(Activation.TANH)
                .graphBuilder()
                .addInputs("in").setInputTypes(InputType.recurrent(3))
                .addLayer("lstm", new LSTM.Builder().nOut(4).build(), "in")
                .addLayer("pool", new GlobalPoolingLayer.Builder(PoolingType.AVG).build(), "lstm")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nOut(1)
                        .build(), "pool")
                .setOutputs("out")
                .build();
        try (ComputationGraph g = new ComputationGraph(c)) {
            g.init();
            INDArray f = Nd4j.rand(9, new long[] {2, 3, 5});
            INDArray mask = Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, 2, 5);
            INDArray out = g.output(false, new INDArray[] {f}, new INDArray[] {mask})[0];
            assertArrayEquals(new long[] {2, 1}, out.shape());
            INDArray alone = Nd4j.create(new float[] {
                (float) f.getDouble(1, 0, 0), (float) f.getDouble(1, 0, 1),
                (float) f.getDouble(1, 1, 0), (float) f.getDouble(1, 1, 1),
                (float) f.getDouble(1, 2, 0), (float) f.getDouble(1, 2, 1)}, 1, 3, 2);
            assertClose(g.output(false, alone)[0], out.getRows(1, 2), "AVG over the two real steps");
        }
    }

    @Test
    void lastTimeStepVertexTakesEachExamplesLastRealStep() {
        ComputationGraphConfiguration c = new NeuralNetConfiguration.Builder().seed(4).activation(Activation.TANH)
                .graphBuilder()
                .addInputs("in").setInputTypes(InputType.recurrent(3))
                .addLayer("lstm", new LSTM.Builder().nOut(4).build(), "in")
                .addVertex("last", new LastTimeStepVertex("in"), "lstm")
                .addLayer("out", new OutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nOut(1)
                        .build(), "last")
                .setOutputs("out")
                .build();
        try (ComputationGraph g = new ComputationGraph(c)) {
            g.init();
            INDArray f = Nd4j.rand(10, new long[] {2, 3, 5});
            INDArray mask = Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, 2, 5);
            INDArray out = g.output(false, new INDArray[] {f}, new INDArray[] {mask})[0];
            INDArray alone = Nd4j.create(new float[] {
                (float) f.getDouble(1, 0, 0), (float) f.getDouble(1, 0, 1),
                (float) f.getDouble(1, 1, 0), (float) f.getDouble(1, 1, 1),
                (float) f.getDouble(1, 2, 0), (float) f.getDouble(1, 2, 1)}, 1, 3, 2);
            assertClose(g.output(false, alone)[0], out.getRows(1, 2), "the last unmasked step (step 1)");
            INDArray unmasked = g.output(false, f)[0];
            assertClose(unmasked.getRows(0, 1), out.getRows(0, 1), "example 0 has no padding");
        }
        String tbptt = assertThrows(DL4JInvalidConfigException.class,
                () -> new NeuralNetConfiguration.Builder().seed(4).graphBuilder()
                        .addInputs("in").setInputTypes(InputType.recurrent(3))
                        .addLayer("lstm", new LSTM.Builder().nOut(4).build(), "in")
                        .addVertex("last", new LastTimeStepVertex("in"), "lstm")
                        .addLayer("out", new OutputLayer.Builder(LossFunction.MSE).nOut(1).build(), "last")
                        .setOutputs("out").backpropType(BackpropType.TruncatedBPTT).build()).getMessage();
        assertTrue(tbptt.contains("\"last\"") && tbptt.contains("truncated BPTT"), tbptt);
    }

    /**
     * The reference's per-frame CNN in a graph: a layer vertex with an RnnToCnnPreProcessor runs the
     * convolution and pooling on every time step's image, the LSTM after them closes the region (its
     * CnnToRnn is implied), every nIn comes from setInputTypes; the same numbers as the
     * MultiLayerNetwork built from the same layers.
     */
    @Test
    void convolutionsRunAtEveryTimeStepInAGraphAsInAMultiLayerNetwork() {
        NeuralNetConfiguration.Builder base = new NeuralNetConfiguration.Builder().seed(5).updater(new Adam(0.05))
                .activation(Activation.TANH);
        ComputationGraphConfiguration c = base.graphBuilder()
                .addInputs("in").setInputTypes(InputType.recurrent(16))
                .addLayer("conv", new ConvolutionLayer.Builder(3, 3).nOut(2).build(), new RnnToCnnPreProcessor(4, 4, 1),
                        "in")
                .addLayer("pool", new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2)
                        .stride(2, 2).build(), "conv")
                .addLayer("lstm", new LSTM.Builder().nOut(3).build(), "pool")
                .addLayer("out", new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nOut(2)
                        .build(), "lstm")
                .setOutputs("out")
                .build();
        Map<String, InputType> types = c.getLayerActivationTypes();
        assertEquals(InputType.convolutional(2, 2, 2), types.get("conv"), "one time step's image");
        assertEquals(InputType.convolutional(1, 1, 2), types.get("pool"));
        assertEquals(InputType.recurrent(3), types.get("lstm"));
        MultiLayerConfiguration m = base.list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2)
                        .build())
                .layer(new LSTM.Builder().nOut(3).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nOut(2).build())
                .inputPreProcessor(0, new RnnToCnnPreProcessor(4, 4, 1))
                .setInputType(InputType.recurrent(16))
                .build();
        try (ComputationGraph g = new ComputationGraph(c); MultiLayerNetwork n = new MultiLayerNetwork(m)) {
            g.init();
            n.init();
            assertEquals(n.numParams(), g.numParams(), "conv + lstm + output");
            g.setParams(n.params());
            INDArray f = Nd4j.rand(77, new long[] {4, 16, 6}).mul(2).sub(Nd4j.ones(4, 16, 6));
            INDArray mask = Nd4j.ones(4, 6);
            mask.putScalar(new long[] {1, 5}, 0.0);
            mask.putScalar(new long[] {2, 4}, 0.0);
            mask.putScalar(new long[] {2, 5}, 0.0);
            INDArray out = g.output(false, new INDArray[] {f}, new INDArray[] {mask})[0];
            assertArrayEquals(new long[] {4, 2, 6}, out.shape());
            assertClose(n.output(f, false, mask, null), out, "graph == MultiLayerNetwork");
            INDArray labels = Nd4j.zeros(4, 2, 6);
            for (int i = 0; i < 4; i++) {
                for (int t = 0; t < 6; t++) {
                    labels.putScalar(new long[] {i, i % 2, t}, 1.0);
                }
            }
            MultiDataSet d = new MultiDataSet(new INDArray[] {f}, new INDArray[] {labels},
                    new INDArray[] {mask}, new INDArray[] {mask});
            double before = g.score(d);
            assertEquals(n.score(new DataSet(f, labels, mask, mask)), before, TOL, "same score");
            for (int k = 0; k < 30; k++) {
                g.fit(d);
            }
            assertTrue(g.score(d) < 0.5 * before, "per-step CNN + LSTM learns: " + before + " -> " + g.score(d));
        }
    }

    /**
     * Any vertex but the time-series ones runs inside the region, on each step's values as the
     * reference runs it on [N*T, C, H, W] (here a channel subset, then an L2 normalisation); a
     * preprocessor's rnnDataFormat must be the layout of its sequence side.
     */
    @Test
    void verticesRunInsideTheRegionAndAPreprocessorsFormatMustMatchItsSequence() {
        NeuralNetConfiguration.Builder base = new NeuralNetConfiguration.Builder().seed(5).updater(new Adam(0.05))
                .activation(Activation.TANH);
        ComputationGraphConfiguration c = base.graphBuilder()
                .addInputs("in").setInputTypes(InputType.recurrent(16))
                .addLayer("conv", new ConvolutionLayer.Builder(3, 3).nOut(4).build(), new RnnToCnnPreProcessor(4, 4, 1),
                        "in")
                .addVertex("half", new SubsetVertex(2, 3), "conv")
                .addVertex("norm", new L2NormalizeVertex(), "half")
                .addLayer("lstm", new LSTM.Builder().nOut(3).build(), "norm")
                .addLayer("out", new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nOut(2)
                        .build(), "lstm")
                .setOutputs("out")
                .build();
        assertEquals(InputType.convolutional(2, 2, 2), c.getLayerActivationTypes().get("half"), "one step's channels 2-3");
        try (ComputationGraph g = new ComputationGraph(c)) {
            g.init();
            INDArray f = Nd4j.rand(78, new long[] {4, 16, 5}).mul(2).sub(Nd4j.ones(4, 16, 5));
            INDArray labels = Nd4j.zeros(4, 2, 5);
            for (int i = 0; i < 4; i++) {
                for (int t = 0; t < 5; t++) {
                    labels.putScalar(new long[] {i, (i + t) % 2, t}, 1.0);
                }
            }
            MultiDataSet d = new MultiDataSet(new INDArray[] {f}, new INDArray[] {labels});
            double before = g.score(d);
            for (int k = 0; k < 40; k++) {
                g.fit(d);
            }
            assertTrue(g.score(d) < 0.6 * before, "learns through the vertices: " + before + " -> " + g.score(d));
        }
        String e = assertThrows(DL4JInvalidConfigException.class,
                () -> base.graphBuilder()
                        .addInputs("in").setInputTypes(InputType.recurrent(16, RNNFormat.NWC))
                        .addLayer("conv", new ConvolutionLayer.Builder(3, 3).nOut(2).build(),
                                new RnnToCnnPreProcessor(4, 4, 1), "in")
                        .addLayer("lstm", new LSTM.Builder().nOut(3).build(), "conv")
                        .addLayer("out", new RnnOutputLayer.Builder(LossFunction.MCXENT).nOut(2).build(), "lstm")
                        .setOutputs("out").build()).getMessage();
        assertTrue(e.contains("\"conv\"") && e.contains("RnnToCnnPreProcessor has rnnDataFormat NCW")
                && e.contains("network input \"in\", which is NWC"), e);
        base.graphBuilder()
                .addInputs("in").setInputTypes(InputType.recurrent(16, RNNFormat.NWC))
                .addLayer("conv", new ConvolutionLayer.Builder(3, 3).nOut(2).build(),
                        new RnnToCnnPreProcessor(4, 4, 1, RNNFormat.NWC), "in")
                .addLayer("lstm", new LSTM.Builder().nOut(3).build(), "conv")
                .addLayer("out", new RnnOutputLayer.Builder(LossFunction.MCXENT).nOut(2).build(), "lstm")
                .setOutputs("out").build();
    }

    /** The reference infers no RNN -> CNN preprocessor: a convolution on a sequence is refused, by name. */
    @Test
    void aConvolutionOnASequenceWithoutRnnToCnnIsRefusedNamingTheLayer() {
        String graph = assertThrows(DL4JInvalidConfigException.class,
                () -> new NeuralNetConfiguration.Builder().graphBuilder()
                        .addInputs("in").setInputTypes(InputType.recurrent(16))
                        .addLayer("conv", new ConvolutionLayer.Builder(3, 3).nOut(2).build(), "in")
                        .addLayer("lstm", new LSTM.Builder().nOut(3).build(), "conv")
                        .addLayer("out", new RnnOutputLayer.Builder(LossFunction.MCXENT).nOut(2).build(), "lstm")
                        .setOutputs("out").build()).getMessage();
        assertTrue(graph.contains("\"conv\"") && graph.contains("RnnToCnnPreProcessor"), graph);
        String list = assertThrows(DL4JInvalidConfigException.class,
                () -> new NeuralNetConfiguration.Builder().list()
                        .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).build())
                        .layer(new LSTM.Builder().nOut(3).build())
                        .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).nOut(2).build())
                        .setInputType(InputType.recurrent(16)).build()).getMessage();
        assertTrue(list.contains("layer 0 (ConvolutionLayer)") && list.contains("RnnToCnnPreProcessor"), list);
    }
}
