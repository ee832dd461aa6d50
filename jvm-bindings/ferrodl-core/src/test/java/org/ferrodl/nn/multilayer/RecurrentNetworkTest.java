package org.ferrodl.nn.multilayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.ferrodl.datasets.iterator.impl.ListDataSetIterator;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.BackpropType;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.RNNFormat;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.preprocessor.RnnToCnnPreProcessor;
import org.ferrodl.nn.conf.layers.EmbeddingSequenceLayer;
import org.ferrodl.nn.conf.layers.GravesLSTM;
import org.ferrodl.nn.conf.layers.LSTM;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.RnnOutputLayer;
import org.ferrodl.nn.conf.layers.recurrent.Bidirectional;
import org.ferrodl.nn.conf.layers.recurrent.LastTimeStep;
import org.ferrodl.nn.conf.layers.recurrent.SimpleRnn;
import org.ferrodl.nn.conf.layers.recurrent.TimeDistributed;
import org.ferrodl.nn.conf.layers.util.MaskZeroLayer;
import org.ferrodl.testutil.SerializationUtil;
import org.ferrodl.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recurrent MultiLayerNetworks through the Java API: 3-D DataSets with masks fit and score, a masked
 * padded batch equals its sequences run one by one, rnnTimeStep step by step equals output on the
 * whole sequence, the stored state is per network object, TBPTT iterations, save/load bit-exact,
 * evaluation of time series, and wrong ranks/masks refused. Tolerances: 1e-5 (float32 engine).
 */
class RecurrentNetworkTest {
    private static final double TOL = 1e-5;

    @TempDir
    Path dir;

    /** LSTM(2 -> 3) -> SimpleRnn(3 -> 4) -> RnnOutputLayer(4 -> 2, identity, MSE). */
    private static MultiLayerNetwork net(long seed) {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(seed).updater(new Adam(0.02))
                .activation(Activation.TANH).list()
                .layer(new LSTM.Builder().nOut(3).build())
                .layer(new SimpleRnn.Builder().nOut(4).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nOut(2).build())
                .setInputType(InputType.recurrent(2))
                .build();
        MultiLayerNetwork n = new MultiLayerNetwork(c);
        n.init();
        return n;
    }

    /** [n, a, b] -> [n, b, a] (NCW <-> NWC). */
    private static INDArray swapLast(INDArray x) {
        int n = (int) x.size(0);
        int a = (int) x.size(1);
        int b = (int) x.size(2);
        float[] src = NDArray.internalData(x);
        float[] out = new float[src.length];
        for (int i = 0; i < n; i++) {
            for (int p = 0; p < a; p++) {
                for (int q = 0; q < b; q++) {
                    out[i * a * b + q * a + p] = src[i * a * b + p * b + q];
                }
            }
        }
        return new NDArray(out, n, b, a);
    }

    private static MultiLayerNetwork formatNet(RNNFormat f) {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(21).updater(new Adam(0.02))
                .activation(Activation.TANH).list()
                .layer(new LSTM.Builder().nIn(2).nOut(3).dataFormat(f).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nIn(3).nOut(2)
                        .dataFormat(f).build())
                .build();
        MultiLayerNetwork n = new MultiLayerNetwork(c);
        n.init();
        return n;
    }

    @Test
    void nwcNetworksTakeAndGiveTimeMajorArraysWithTheSameNumbers() {
        try (MultiLayerNetwork ncw = formatNet(RNNFormat.NCW); MultiLayerNetwork nwc = formatNet(RNNFormat.NWC)) {
            nwc.setParams(ncw.params());
            INDArray f = series(3, 2, 5, 41);
            INDArray labels = Nd4j.zeros(3, 2, 5);
            for (int i = 0; i < 3; i++) {
                for (int t = 0; t < 5; t++) {
                    labels.putScalar(new long[] {i, (i + t) % 2, t}, 1.0);
                }
            }
            INDArray mask = Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0}, 3, 5);
            INDArray outNwc = nwc.output(swapLast(f), false, mask, null);
            assertArrayEquals(new long[] {3, 5, 2}, outNwc.shape(), "NWC output is [N, T, nOut]");
            assertClose(swapLast(ncw.output(f, false, mask, null)), outNwc, "NWC output == NCW output transposed");
            DataSet a = new DataSet(f, labels, mask, mask);
            DataSet b = new DataSet(swapLast(f), swapLast(labels), mask, mask);
            assertEquals(ncw.score(a), nwc.score(b), 1e-6, "score");
            for (int k = 0; k < 3; k++) {
                ncw.fit(a);
                nwc.fit(b);
            }
            assertClose(ncw.params(), nwc.params(), "parameters after 3 fits");
            Evaluation ea = ncw.evaluate(new ListDataSetIterator(List.of(a), 3));
            Evaluation eb = nwc.evaluate(new ListDataSetIterator(List.of(b), 3));
            assertEquals(ea.getConfusionMatrix().toString(), eb.getConfusionMatrix().toString(), "evaluation");
            assertEquals(12, ea.getNumRowCounter(), "the 12 unmasked steps are evaluated");
            assertEquals(ea.getNumRowCounter(), eb.getNumRowCounter());
            assertEquals(ea.accuracy(), eb.accuracy(), 0.0);
            INDArray step = nwc.rnnTimeStep(swapLast(steps(f, 0, 2)));
            assertClose(swapLast(ncw.rnnTimeStep(steps(f, 0, 2))), step, "rnnTimeStep, 2 steps");
        }
    }

    @Test
    void perOutputLabelMasksOfTheLabelsShapeAreTaken() {
        try (MultiLayerNetwork n = net(3)) {
            INDArray f = series(2, 2, 4, 5);
            INDArray y = series(2, 2, 4, 6);
            INDArray perStep = Nd4j.create(new float[] {1, 1, 0, 1, 1, 0, 1, 1}, 2, 4);
            INDArray perOutput = Nd4j.zeros(2, 2, 4);
            for (int i = 0; i < 2; i++) {
                for (int c = 0; c < 2; c++) {
                    for (int t = 0; t < 4; t++) {
                        perOutput.putScalar(new long[] {i, c, t}, perStep.getDouble(i, t));
                    }
                }
            }
            double a = n.score(new DataSet(f, y, null, perStep));
            double b = n.score(new DataSet(f, y, null, perOutput));
            assertEquals(a, b, 1e-6, "a per-output mask equal on every output == the per-step mask");
            perOutput.putScalar(new long[] {0, 1, 0}, 0.0);
            double c = n.score(new DataSet(f, y, null, perOutput));
            assertTrue(Math.abs(c - a) > 1e-4, "masking one output of one step changes the score: " + a + " " + c);
        }
    }

    @Test
    void simpleRnnWithLayerNormHasGainsAndLearns() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(8).updater(new Adam(0.05)).list()
                .layer(new SimpleRnn.Builder().nIn(2).nOut(4).hasLayerNorm(true).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nIn(4).nOut(2)
                        .build())
                .build();
        try (MultiLayerNetwork n = new MultiLayerNetwork(c)) {
            n.init();
            assertEquals(2 * 4 + 4 * 4 + 4 + 2 * 4 + 4 * 2 + 2, n.numParams(), "W, RW, b, g [2·nOut], output");
            assertEquals(8, n.getParam("0_g").length());
            DataSet d = new DataSet(series(3, 2, 6, 12), series(3, 2, 6, 13));
            double before = n.score(d);
            for (int k = 0; k < 40; k++) {
                n.fit(d);
            }
            assertTrue(n.score(d) < 0.7 * before, before + " -> " + n.score(d));
        }
    }

    @Test
    void convolutionsRunAtEveryTimeStepAfterRnnToCnn() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(5).updater(new Adam(0.05))
                .activation(Activation.TANH).list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2)
                        .build())
                .layer(new LSTM.Builder().nOut(3).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nOut(2).build())
                .inputPreProcessor(0, new RnnToCnnPreProcessor(4, 4, 1))
                .setInputType(InputType.recurrent(16))
                .build();
        try (MultiLayerNetwork n = new MultiLayerNetwork(c)) {
            n.init();
            assertEquals(2 * 9 + 2 + 4 * (2 * 3 + 3 * 3 + 3) + 3 * 2 + 2, n.numParams(), "conv + lstm + output");
            INDArray f = series(4, 16, 6, 77);
            INDArray labels = Nd4j.zeros(4, 2, 6);
            for (int i = 0; i < 4; i++) {
                for (int t = 0; t < 6; t++) {
                    labels.putScalar(new long[] {i, i % 2, t}, 1.0);
                }
            }
            DataSet d = new DataSet(f, labels);
            INDArray out = n.output(f);
            assertArrayEquals(new long[] {4, 2, 6}, out.shape());
            double before = n.score(d);
            for (int k = 0; k < 30; k++) {
                n.fit(d);
            }
            assertTrue(n.score(d) < 0.5 * before, "per-step CNN + LSTM learns: " + before + " -> " + n.score(d));
        }
    }

    /** Deterministic [n, c, t] values in [-1, 1]. */
    private static INDArray series(int n, int c, int t, long seed) {
        return Nd4j.rand(seed, new long[] {n, c, t}).mul(2).sub(Nd4j.ones(n, c, t));
    }

    /** Steps [from, to) of a [n, c, t] array. */
    private static INDArray steps(INDArray a, int from, int to) {
        int n = (int) a.size(0);
        int c = (int) a.size(1);
        int t = (int) a.size(2);
        float[] src = NDArray.internalData(a);
        float[] out = new float[n * c * (to - from)];
        for (int i = 0; i < n * c; i++) {
            System.arraycopy(src, i * t + from, out, i * (to - from), to - from);
        }
        return new NDArray(out, n, c, to - from);
    }

    private static INDArray step2d(INDArray a, int s) {
        INDArray x = steps(a, s, s + 1);
        return x.reshape(x.size(0), x.size(1));
    }

    private static void assertClose(INDArray want, INDArray got, String what) {
        assertArrayEquals(want.shape(), got.shape(), what + " shape");
        float[] w = NDArray.internalData(want);
        float[] g = NDArray.internalData(got);
        for (int i = 0; i < w.length; i++) {
            assertEquals(w[i], g[i], TOL, what + " value " + i);
        }
    }

    @Test
    void maskedPaddedBatchEqualsTheSequencesRunOneByOne() {
        try (MultiLayerNetwork n = net(1)) {
            INDArray f = series(2, 2, 5, 11);
            INDArray l = series(2, 2, 5, 12);
            INDArray mask = Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, 2, 5);
            // example 1 is 3 steps long; its padding holds junk that must not matter
            DataSet padded = new DataSet(f, l, mask, mask.dup());
            INDArray out = n.output(f, false, mask, null);
            assertArrayEquals(new long[] {2, 2, 5}, out.shape());
            DataSet first = new DataSet(f.getRows(0, 1), l.getRows(0, 1));
            DataSet second = new DataSet(steps(f.getRows(1, 2), 0, 3), steps(l.getRows(1, 2), 0, 3));
            assertClose(n.output(first.getFeatures()), out.getRows(0, 1), "example 0");
            assertClose(n.output(second.getFeatures()), steps(out.getRows(1, 2), 0, 3), "example 1, real steps");
            double s0 = n.score(first);
            double s1 = n.score(second);
            assertEquals((s0 + s1) / 2, n.score(padded), TOL, "score: sum over unmasked steps / examples");
            INDArray perExample = n.scoreExamples(padded, false);
            assertEquals(s0, perExample.getDouble(0), TOL);
            assertEquals(s1, perExample.getDouble(1), TOL);
            // the padding's values do not matter
            INDArray junk = f.dup();
            junk.putScalar(new long[] {1, 0, 4}, 1e3);
            assertEquals(n.score(padded), n.score(new DataSet(junk, l, mask, mask.dup())), TOL);
        }
    }

    @Test
    void fitLearnsAMaskedSequenceTask() {
        // target: the running sum of input channel 0 (scaled); variable lengths through masks
        try (MultiLayerNetwork n = net(2)) {
            INDArray f = series(8, 2, 6, 21);
            INDArray l = Nd4j.zeros(8, 2, 6);
            float[] mask = new float[8 * 6];
            for (int i = 0; i < 8; i++) {
                int len = 3 + i % 4;
                double sum = 0;
                for (int s = 0; s < 6; s++) {
                    sum += f.getDouble(i, 0, s);
                    l.putScalar(new long[] {i, 0, s}, 0.5 * sum);
                    l.putScalar(new long[] {i, 1, s}, -0.5 * sum);
                    mask[i * 6 + s] = s < len ? 1 : 0;
                }
            }
            INDArray m = Nd4j.create(mask, 8, 6);
            DataSet d = new DataSet(f, l, m, m.dup());
            double before = n.score(d);
            for (int i = 0; i < 150; i++) {
                n.fit(d);
            }
            double after = n.score(d);
            assertTrue(after < 0.25 * before, "score " + before + " -> " + after);
            assertEquals(150, n.getIterationCount());
            n.fit(new ListDataSetIterator(d.asList(), 4));
            assertEquals(152, n.getIterationCount(), "two minibatches of 4 sequences");
        }
    }

    @Test
    void rnnTimeStepOneStepAtATimeEqualsOutputOnTheWholeSequence() {
        try (MultiLayerNetwork n = net(3)) {
            INDArray f = series(3, 2, 7, 31);
            INDArray full = n.output(f);
            for (int s = 0; s < 7; s++) {
                INDArray o = n.rnnTimeStep(step2d(f, s));
                assertArrayEquals(new long[] {3, 2}, o.shape(), "one step in, [N, nOut] out");
                assertClose(step2d(full, s), o, "step " + s);
            }
            Map<String, INDArray> lstm = n.rnnGetPreviousState(0);
            assertEquals(List.of("prevAct", "prevMem"), List.copyOf(lstm.keySet()));
            assertArrayEquals(new long[] {3, 3}, lstm.get("prevAct").shape());
            assertArrayEquals(new long[] {3, 4}, n.rnnGetPreviousState(1).values().iterator().next().shape());
            n.rnnClearPreviousState();
            assertTrue(n.rnnGetPreviousState(0).isEmpty());
            // chunks of 3 and 4 steps
            assertClose(steps(full, 0, 3), n.rnnTimeStep(steps(f, 0, 3)), "first chunk");
            assertClose(steps(full, 3, 7), n.rnnTimeStep(steps(f, 3, 7)), "second chunk");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> n.rnnGetPreviousState(2));
            assertTrue(e.getMessage().contains("layer 2 (RnnOutputLayer)") && e.getMessage().contains("not a recurrent"),
                    e.getMessage());
        }
    }

    @Test
    void stateIsPerNetworkAndCanBeMovedExplicitly() {
        try (MultiLayerNetwork a = net(4)) {
            INDArray f = series(2, 2, 5, 41);
            INDArray full = a.output(f);
            for (int s = 0; s < 3; s++) {
                a.rnnTimeStep(step2d(f, s));
            }
            try (MultiLayerNetwork b = a.clone()) {
                assertTrue(b.rnnGetPreviousState(0).isEmpty(), "a clone does not share the stored state");
                assertClose(step2d(full, 0), b.rnnTimeStep(step2d(f, 0)), "the clone starts from zero state");
                b.rnnClearPreviousState();
                b.rnnSetPreviousState(0, a.rnnGetPreviousState(0));
                b.rnnSetPreviousState(1, a.rnnGetPreviousState(1));
                INDArray fromB = b.rnnTimeStep(step2d(f, 3));
                INDArray fromA = a.rnnTimeStep(step2d(f, 3));
                assertClose(fromA, fromB, "the moved state continues identically");
                assertClose(step2d(full, 3), fromA, "and equals the full-sequence output");
            }
            // output, score and fit neither read nor change the stored state
            a.output(f);
            a.score(new DataSet(f, f));
            assertClose(step2d(full, 4), a.rnnTimeStep(step2d(f, 4)), "step 4 after output/score");
            DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                    () -> a.rnnSetPreviousState(0, Map.of("prevAct", Nd4j.zeros(2, 3, 1))));
            assertTrue(e.getMessage().contains("prevAct") && e.getMessage().contains("[2, 3, 1]"), e.getMessage());
        }
    }

    @Test
    void truncatedBpttMakesOneIterationPerSegment() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(5).updater(new Adam(0.01)).list()
                .layer(new GravesLSTM.Builder().nIn(3).nOut(4).activation(Activation.TANH).build())
                .layer(new RnnOutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nIn(4).nOut(3)
                        .build())
                .backpropType(BackpropType.TruncatedBPTT).tBPTTLength(4).build(); // no setInputType, as in the reference
        try (MultiLayerNetwork n = new MultiLayerNetwork(c)) {
            n.init();
            INDArray f = Nd4j.zeros(2, 3, 10);
            for (int i = 0; i < 2; i++) {
                for (int s = 0; s < 10; s++) {
                    f.putScalar(new long[] {i, (i + s) % 3, s}, 1);
                }
            }
            INDArray l = Nd4j.zeros(2, 3, 10);
            for (int i = 0; i < 2; i++) {
                for (int s = 0; s < 10; s++) {
                    l.putScalar(new long[] {i, (i + s + 1) % 3, s}, 1);
                }
            }
            DataSet d = new DataSet(f, l);
            double before = n.score(d);
            n.fit(d);
            assertEquals(3, n.getIterationCount(), "10 steps in segments of 4: 3 iterations");
            for (int i = 0; i < 40; i++) {
                n.fit(d);
            }
            assertTrue(n.score(d) < 0.5 * before, "next-symbol task: " + before + " -> " + n.score(d));
            Evaluation e = n.evaluate(new ListDataSetIterator(List.of(d)));
            assertEquals(20, e.getNumRowCounter(), "one prediction per (example, step)");
            assertTrue(e.accuracy() >= 0.9, "accuracy " + e.accuracy());
        }
    }

    @Test
    void saveLoadIsBitExactAndTheReferenceDoesNotSaveTheState() throws Exception {
        try (MultiLayerNetwork n = net(6)) {
            INDArray f = series(2, 2, 4, 61);
            n.fit(new DataSet(f, series(2, 2, 4, 62)));
            n.rnnTimeStep(step2d(f, 0));
            File file = dir.resolve("rnn.zip").toFile();
            ModelSerializer.writeModel(n, file, true);
            for (MultiLayerNetwork back : new MultiLayerNetwork[] {ModelSerializer.restoreMultiLayerNetwork(file),
                SerializationUtil.javaRoundTrip(n)}) {
                try (MultiLayerNetwork b = back) {
                    assertEquals(n.getLayerWiseConfigurations(), b.getLayerWiseConfigurations());
                    float[] p = NDArray.internalData(n.params());
                    float[] q = NDArray.internalData(b.params());
                    assertEquals(p.length, q.length);
                    for (int i = 0; i < p.length; i++) {
                        assertEquals(Float.floatToRawIntBits(p[i]), Float.floatToRawIntBits(q[i]), "param " + i);
                    }
                    assertEquals(n.getUpdaterState(), b.getUpdaterState());
                    assertEquals(n.output(f), b.output(f));
                    assertTrue(b.rnnGetPreviousState(0).isEmpty(), "rnnTimeStep state is not part of a saved model");
                }
            }
        }
    }

    @Test
    void wrongRanksAndMasksAreRefusedClearly() {
        try (MultiLayerNetwork n = net(7)) {
            INDArray f = series(2, 2, 4, 71);
            DL4JInvalidInputException e = assertThrows(DL4JInvalidInputException.class,
                    () -> n.fit(new DataSet(Nd4j.zeros(2, 8), f)));
            assertTrue(e.getMessage().contains("rank 3") && e.getMessage().contains("[2, 8]"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> n.output(Nd4j.zeros(2, 2)));
            assertTrue(e.getMessage().contains("rnnTimeStep"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> n.fit(new DataSet(f, Nd4j.zeros(2, 8))));
            assertTrue(e.getMessage().contains("labels") && e.getMessage().contains("rank 3"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class,
                    () -> n.fit(new DataSet(f, f, Nd4j.ones(2, 1, 4), null)));
            assertTrue(e.getMessage().contains("features mask") && e.getMessage().contains("[2, 1, 4]"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> n.fit(new DataSet(f, f, Nd4j.ones(2, 5), null)));
            assertTrue(e.getMessage().toLowerCase().contains("mask"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> n.output(f, false, Nd4j.ones(2, 3), null));
            assertTrue(e.getMessage().toLowerCase().contains("mask"), e.getMessage());
            e = assertThrows(DL4JInvalidInputException.class, () -> n.rnnTimeStep(Nd4j.zeros(2)));
            assertTrue(e.getMessage().contains("[2]"), e.getMessage());
        }
    }

    @Test
    void lastTimeStepClassifiesVariableLengthSequences() throws Exception {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(8).updater(new Adam(0.03))
                .activation(Activation.TANH).list()
                .layer(new LastTimeStep(new LSTM.Builder().nIn(2).nOut(6).build()))
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nIn(6).nOut(2)
                        .build())
                .build(); // no setInputType: the wrapped LSTM's nIn says the input is a sequence of 2
        assertEquals(c, MultiLayerConfiguration.fromJson(c.toJson()));
        DL4JInvalidConfigException tbptt = assertThrows(DL4JInvalidConfigException.class,
                () -> new NeuralNetConfiguration.Builder().seed(8).list()
                        .layer(new LastTimeStep(new LSTM.Builder().nIn(2).nOut(6).build()))
                        .layer(new OutputLayer.Builder(LossFunction.MCXENT).activation(Activation.SOFTMAX).nIn(6)
                                .nOut(2).build())
                        .backpropType(BackpropType.TruncatedBPTT).build());
        assertTrue(tbptt.getMessage().contains("layer 0 (LastTimeStep)")
                && tbptt.getMessage().contains("truncated BPTT"), tbptt.getMessage());
        try (MultiLayerNetwork n = new MultiLayerNetwork(c)) {
            n.init();
            // class = whether channel 0 summed over the example's real steps is positive
            int count = 32;
            int t = 6;
            INDArray f = series(count, 2, t, 81);
            INDArray l = Nd4j.zeros(count, 2);
            float[] mask = new float[count * t];
            for (int i = 0; i < count; i++) {
                int len = 2 + i % 5;
                double sum = 0;
                for (int s = 0; s < t; s++) {
                    mask[i * t + s] = s < len ? 1 : 0;
                    sum += s < len ? f.getDouble(i, 0, s) : 0;
                }
                l.putScalar(new long[] {i, sum > 0 ? 1 : 0}, 1);
            }
            INDArray m = Nd4j.create(mask, count, t);
            DataSet d = new DataSet(f, l, m, null);
            INDArray out = n.output(f, false, m, null);
            assertArrayEquals(new long[] {count, 2}, out.shape());
            // example 3 has 5 real steps: the padded batch gives what the 5-step sequence alone gives
            assertClose(n.output(steps(f.getRows(3, 4), 0, 5)), out.getRows(3, 4), "last unmasked step");
            for (int i = 0; i < 300; i++) {
                n.fit(d);
            }
            Evaluation e = n.evaluate(new ListDataSetIterator(List.of(d)));
            assertEquals(count, e.getNumRowCounter());
            assertTrue(e.accuracy() >= 0.9, "training accuracy " + e.accuracy());
        }
    }

    @Test
    void parameterKeysAndShapesAreTheReferences() {
        try (MultiLayerNetwork n = net(9)) {
            Map<String, INDArray> t = n.paramTable();
            assertEquals(List.of("0_W", "0_RW", "0_b", "1_W", "1_RW", "1_b", "2_W", "2_b"), List.copyOf(t.keySet()));
            assertArrayEquals(new long[] {2, 12}, t.get("0_W").shape(), "LSTM W [nIn, 4·nOut]");
            assertArrayEquals(new long[] {3, 12}, t.get("0_RW").shape(), "LSTM RW [nOut, 4·nOut]");
            assertArrayEquals(new long[] {1, 12}, t.get("0_b").shape());
            assertArrayEquals(new long[] {3, 4}, t.get("1_W").shape(), "SimpleRnn W [nIn, nOut]");
            assertArrayEquals(new long[] {4, 4}, t.get("1_RW").shape());
            assertArrayEquals(new long[] {4, 2}, t.get("2_W").shape());
            assertEquals(2 * 12 + 3 * 12 + 12 + 3 * 4 + 16 + 4 + 8 + 2, n.numParams());
            String summary = n.summary();
            assertTrue(summary.contains("LSTM") && summary.contains("SimpleRnn") && summary.contains("RnnOutputLayer"),
                    summary);
        }
        MultiLayerConfiguration graves = new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new GravesLSTM.Builder().nIn(3).nOut(5).build())
                .layer(new RnnOutputLayer.Builder().nIn(5).nOut(2).activation(Activation.SOFTMAX).build()).build();
        try (MultiLayerNetwork g = new MultiLayerNetwork(graves)) {
            g.init();
            assertArrayEquals(new long[] {5, 23}, g.paramTable().get("0_RW").shape(),
                    "GravesLSTM RW [nOut, 4·nOut + 3]: the last 3 columns are the peepholes");
            assertEquals(1.0, g.getParam("0_b").getDouble(5), 0.0, "forget gate bias starts at forgetGateBiasInit 1.0");
        }
    }

    @Test
    void wrappersAndEmbeddingSequencesRunPaddedAsAlone() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(10).activation(Activation.TANH).list()
                .layer(new EmbeddingSequenceLayer.Builder().nIn(10).nOut(4).build())
                .layer(new Bidirectional(Bidirectional.Mode.CONCAT, new LSTM.Builder().nIn(4).nOut(3).build()))
                .layer(new TimeDistributed(new DenseLayer.Builder().nIn(6).nOut(5).build()))
                .layer(new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nIn(5).nOut(2)
                        .build())
                .build();
        try (MultiLayerNetwork n = new MultiLayerNetwork(c)) {
            n.init();
            INDArray idx = Nd4j.create(new float[] {1, 4, 9, 0, 2, 7, 3, 3, 0, 0}, 2, 5);
            INDArray mask = Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, 2, 5);
            INDArray out = n.output(idx, false, mask, null);
            assertArrayEquals(new long[] {2, 2, 5}, out.shape());
            assertClose(out, n.output(idx.reshape(2, 1, 5), false, mask, null), "[N, 1, T] indices == [N, T]");
            // example 1 is [7, 3, 3] + 2 padded steps: the mask passes the embedding to Bidirectional
            INDArray alone = n.output(Nd4j.create(new float[] {7, 3, 3}, 1, 3), false, null, null);
            assertClose(alone, steps(out.getRows(1, 2), 0, 3), "embedding + bidirectional, padded == alone");
        }
        for (Bidirectional.Mode mode : Bidirectional.Mode.values()) {
            MultiLayerConfiguration bc = new NeuralNetConfiguration.Builder().seed(10).activation(Activation.TANH).list()
                    .layer(new Bidirectional(mode, new LSTM.Builder().nIn(2).nOut(3).build()))
                    .layer(new TimeDistributed(new DenseLayer.Builder().nIn(mode == Bidirectional.Mode.CONCAT ? 6 : 3)
                            .nOut(4).build()))
                    .layer(new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nIn(4).nOut(2)
                            .build())
                    .build();
            // As the reference: nIn,nOut of the wrapped layer; the output type says 2·nOut for CONCAT.
            assertEquals(InputType.recurrent(mode == Bidirectional.Mode.CONCAT ? 6 : 3),
                    bc.getLayerActivationTypes().get(0), mode + ": output type");
            assertEquals(3L, ((Bidirectional) bc.getConf(0).getLayer()).getNOut(), mode + ": nOut");
            try (MultiLayerNetwork n = new MultiLayerNetwork(bc)) {
                n.init();
                String row = n.summary().lines().filter(l -> l.contains("(Bidirectional)")).findFirst().orElse("");
                assertTrue(row.contains(" 2 -> 3 "), mode + ": summary row " + row);
                INDArray f = series(2, 2, 5, 3);
                INDArray mask = Nd4j.create(new float[] {1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, 2, 5);
                INDArray out = n.output(f, false, mask, null);
                // example 1 has 3 real steps: the backward direction starts at its last real step
                assertClose(n.output(steps(f.getRows(1, 2), 0, 3)), steps(out.getRows(1, 2), 0, 3),
                        mode + ": bidirectional, padded == alone");
            }
        }
        MultiLayerConfiguration mz = new NeuralNetConfiguration.Builder().seed(11).activation(Activation.TANH).list()
                .layer(new MaskZeroLayer(new LSTM.Builder().nIn(2).nOut(3).build(), 0.0))
                .layer(new RnnOutputLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).nIn(3).nOut(2)
                        .build())
                .build();
        try (MultiLayerNetwork n = new MultiLayerNetwork(mz)) {
            n.init();
            INDArray f = series(1, 2, 5, 91);
            INDArray padded = Nd4j.zeros(1, 2, 7);
            for (int ch = 0; ch < 2; ch++) {
                for (int s = 0; s < 5; s++) {
                    padded.putScalar(new long[] {0, ch, s}, f.getDouble(0, ch, s));
                }
            }
            // zero steps are masked by the layer itself: no features mask given
            assertClose(n.output(f), steps(n.output(padded), 0, 5), "MaskZeroLayer: zero padding == alone");
        }
    }
}
