package org.ferrodl.nn.transferlearning;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.FerroIllegalArgumentException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Nesterovs;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.distribution.NormalDistribution;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ActivationLayer;
import org.ferrodl.nn.conf.layers.BaseLayer;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LossLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TransferLearning.Builder on real networks. Needs the native library. */
class TransferLearningTest {

    @TempDir
    File tmp;

    /** 6 -> 10 tanh -> 8 relu -> 6 tanh -> 3 softmax, Adam, l2 on every layer. */
    private static MultiLayerConfiguration mlp() {
        return new NeuralNetConfiguration.Builder().seed(42).updater(new Adam(0.01)).l2(1e-4).list()
                .layer(new DenseLayer.Builder().nIn(6).nOut(10).activation(Activation.TANH).build())
                .layer(new DenseLayer.Builder().nIn(10).nOut(8).activation(Activation.RELU).build())
                .layer(new DenseLayer.Builder().nIn(8).nOut(6).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(6).nOut(3).activation(Activation.SOFTMAX)
                        .build())
                .build();
    }

    /** Random features in [0, 1) and random one-hot labels. */
    private static DataSet data(long seed, int rows, int nIn, int classes) {
        INDArray x = Nd4j.rand(seed, new long[] {rows, nIn});
        INDArray u = Nd4j.rand(seed + 1, new long[] {rows, 1});
        INDArray y = Nd4j.zeros(rows, classes);
        for (int r = 0; r < rows; r++) {
            y.putScalar(r, Math.min(classes - 1, (int) (u.getDouble(r) * classes)), 1);
        }
        return new DataSet(x, y);
    }

    private static MultiLayerNetwork trained() {
        MultiLayerNetwork net = new MultiLayerNetwork(mlp());
        net.init();
        DataSet d = data(1, 32, 6, 3);
        for (int i = 0; i < 5; i++) {
            net.fit(d);
        }
        return net;
    }

    private static float[] p(MultiLayerNetwork net, String key) {
        return net.getParam(key).toFloatVector();
    }

    private static Layer conf(MultiLayerNetwork net, int i) {
        return net.getLayerWiseConfigurations().getLayers().get(i);
    }

    private static <T extends Layer> T inner(MultiLayerNetwork net, int i, Class<T> type) {
        Layer l = conf(net, i);
        return type.cast(l instanceof FrozenLayer ? ((FrozenLayer) l).getLayer() : l);
    }

    /** The activations of layers 0..1: a copy of the network cut after layer 1 with an identity loss layer. */
    private static INDArray frozenPartOutput(MultiLayerNetwork net, INDArray x) {
        try (MultiLayerNetwork cut = new TransferLearning.Builder(net).removeLayersFromOutput(net.getnLayers() - 2)
                .addLayer(new LossLayer.Builder(LossFunction.MSE).activation(Activation.IDENTITY).build()).build()) {
            return cut.output(x);
        }
    }

    private static void assertBitEqual(float[] expected, float[] actual, String what) {
        assertTrue(Arrays.equals(expected, actual), what + " changed");
    }

    // ---- feature extraction ---------------------------------------------------------------------

    @Test
    void featureExtractorFreezesLayersKeepsTheOriginalAndTrainsTheRest() {
        try (MultiLayerNetwork orig = trained()) {
            DataSet d = data(7, 32, 6, 4);
            INDArray x = d.getFeatures();
            float[] origParams = orig.params().toFloatVector();
            float[] origUpdater = orig.getUpdaterState().toFloatVector();
            String origJson = orig.getLayerWiseConfigurations().toJson();
            float[] origOut = orig.output(x).toFloatVector();
            int origIterations = orig.getIterationCount();
            float[] frozenOut = frozenPartOutput(orig, x).toFloatVector();

            FineTuneConfiguration ft = new FineTuneConfiguration.Builder().updater(new Sgd(0.5)).seed(3).build();
            try (MultiLayerNetwork tl = new TransferLearning.Builder(orig).fineTuneConfiguration(ft)
                    .setFeatureExtractor(1).removeOutputLayer()
                    .addLayer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(4).activation(Activation.SOFTMAX)
                            .build())
                    .build()) {
                assertTrue(tl.isInitCalled());
                assertEquals(4, tl.getnLayers());
                assertInstanceOf(FrozenLayer.class, conf(tl, 0));
                assertInstanceOf(FrozenLayer.class, conf(tl, 1));
                assertInstanceOf(DenseLayer.class, conf(tl, 2));
                assertEquals(6L, inner(tl, 3, OutputLayer.class).getNIn(), "nIn of the added layer inferred");
                assertEquals(4, tl.numOutputs());
                assertTrue(tl.getLayer(0).isFrozen() && tl.getLayer(1).isFrozen() && !tl.getLayer(2).isFrozen());
                assertEquals(0, tl.getIterationCount());
                for (String key : new String[] {"0_W", "0_b", "1_W", "1_b", "2_W", "2_b"}) {
                    assertBitEqual(p(orig, key), p(tl, key), "copied " + key);
                }
                assertArrayEquals(new long[] {6, 4}, tl.getParam("3_W").shape());
                float[] newOutW = p(tl, "3_W");
                assertBitEqual(frozenOut, frozenPartOutput(tl, x).toFloatVector(), "frozen part output");

                for (int i = 0; i < 20; i++) {
                    tl.fit(d);
                }
                assertEquals(20, tl.getIterationCount());
                for (String key : new String[] {"0_W", "0_b", "1_W", "1_b"}) {
                    assertBitEqual(p(orig, key), p(tl, key), "frozen " + key);
                }
                assertFalse(Arrays.equals(p(orig, "2_W"), p(tl, "2_W")), "trainable layer 2 trained");
                assertFalse(Arrays.equals(p(orig, "2_b"), p(tl, "2_b")), "trainable layer 2 bias trained");
                assertFalse(Arrays.equals(newOutW, p(tl, "3_W")), "new output layer trained");
                assertBitEqual(frozenOut, frozenPartOutput(tl, x).toFloatVector(), "frozen part output after fit");
            }

            assertBitEqual(origParams, orig.params().toFloatVector(), "original parameters");
            assertBitEqual(origUpdater, orig.getUpdaterState().toFloatVector(), "original updater state");
            assertEquals(origJson, orig.getLayerWiseConfigurations().toJson(), "original configuration");
            assertBitEqual(origOut, orig.output(x).toFloatVector(), "original output");
            assertEquals(origIterations, orig.getIterationCount());
            assertFalse(orig.isClosed());
        }
    }

    @Test
    void unchangedNetworkGivesTheSameOutputsAndFreshUpdaterState() {
        try (MultiLayerNetwork orig = trained();
                MultiLayerNetwork copy = new TransferLearning.Builder(orig).build()) {
            INDArray x = data(3, 10, 6, 3).getFeatures();
            assertEquals(orig.getLayerWiseConfigurations().getLayers(), copy.getLayerWiseConfigurations().getLayers());
            assertBitEqual(orig.params().toFloatVector(), copy.params().toFloatVector(), "parameters");
            assertBitEqual(orig.output(x).toFloatVector(), copy.output(x).toFloatVector(), "output");
            assertEquals(orig.getLayerWiseConfigurations().getSeed(), copy.getLayerWiseConfigurations().getSeed());
            float[] state = copy.getUpdaterState().toFloatVector();
            for (float v : state) {
                assertEquals(0f, v, "the updater starts fresh");
            }
        }
    }

    // ---- fine-tune configuration ----------------------------------------------------------------

    @Test
    void fineTuneConfigurationReachesTrainableLayersOnly() {
        try (MultiLayerNetwork orig = trained()) {
            FineTuneConfiguration ft = new FineTuneConfiguration.Builder().updater(new Nesterovs(0.02, 0.8))
                    .l1(1e-5).dropOut(0.9).seed(99).build();
            try (MultiLayerNetwork tl = new TransferLearning.Builder(orig).fineTuneConfiguration(ft)
                    .setFeatureExtractor(0).removeOutputLayer()
                    .addLayer(new DenseLayer.Builder().nOut(5).activation(Activation.RELU).build())
                    .addLayer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).updater(new Sgd(0.3))
                            .activation(Activation.SOFTMAX).build())
                    .build()) {
                MultiLayerConfiguration c = tl.getLayerWiseConfigurations();
                assertEquals(99, c.getSeed());

                DenseLayer frozen = inner(tl, 0, DenseLayer.class);
                assertEquals(new Adam(0.01), frozen.getIUpdater(), "frozen layers keep their updater");
                assertEquals(1e-4, frozen.getL2());
                assertEquals(0.0, frozen.getL1());
                assertEquals(conf(orig, 0), frozen, "frozen layer configuration unchanged");

                for (int i = 1; i <= 3; i++) {
                    BaseLayer b = inner(tl, i, BaseLayer.class);
                    assertInstanceOf(Nesterovs.class, b.getIUpdater(), "layer " + i);
                    assertEquals(0.02, b.getIUpdater().getLearningRate(), 0, "layer " + i);
                    assertEquals(new Nesterovs(0.02, 0.8), b.getBiasUpdater(), "layer " + i);
                    assertEquals(1e-5, b.getL1(), "layer " + i);
                    assertEquals(0.0, b.getL2(), "l1 > 0 replaces the layer's weight regularization, layer " + i);
                    assertEquals(0.9, b.getDropOut(), "layer " + i);
                    assertEquals(0.02, tl.getLearningRate(i), 1e-12, "the engine's learning rate, layer " + i);
                }
                BaseLayer out = inner(tl, 4, BaseLayer.class);
                assertEquals(new Sgd(0.3), out.getIUpdater(), "an added layer's own updater wins");
                assertEquals(0.3, tl.getLearningRate(4), 1e-12);
                assertEquals(Activation.RELU, inner(tl, 3, DenseLayer.class).getActivation());
                assertEquals(1e-5, out.getL1(), "added layers take the fine-tune values as defaults");

                DataSet d = data(5, 16, 6, 3);
                tl.fit(d);
                assertBitEqual(p(orig, "0_W"), p(tl, "0_W"), "frozen 0_W");
            }
        }
    }

    @Test
    void withoutFineTuneTheOriginalSettingsAndSeedAreKept() {
        try (MultiLayerNetwork orig = trained();
                MultiLayerNetwork tl = new TransferLearning.Builder(orig).setFeatureExtractor(2).build()) {
            assertEquals(42, tl.getLayerWiseConfigurations().getSeed());
            assertEquals(conf(orig, 3), conf(tl, 3));
            for (int i = 0; i <= 2; i++) {
                assertEquals(new FrozenLayer(conf(orig, i)), conf(tl, i));
            }
            assertEquals(orig.numParams(), tl.numParams());
        }
    }

    // ---- nOutReplace / nInReplace -----------------------------------------------------------------

    @Test
    void nOutReplaceChangesShapesAndKeepsTheOtherLayers() {
        try (MultiLayerNetwork orig = trained();
                MultiLayerNetwork tl = new TransferLearning.Builder(orig)
                        .nOutReplace(1, 12, WeightInit.ONES, WeightInit.ZERO).build()) {
            // 6·10+10 + 10·12+12 + 12·6+6 + 6·3+3
            assertEquals(70 + 132 + 78 + 21, tl.numParams());
            assertEquals(70 + 88 + 54 + 21, orig.numParams());
            assertEquals(12L, inner(tl, 1, DenseLayer.class).getNOut());
            assertEquals(12L, inner(tl, 2, DenseLayer.class).getNIn());
            assertEquals(WeightInit.ONES, inner(tl, 1, DenseLayer.class).getWeightInit());
            assertEquals(WeightInit.ZERO, inner(tl, 2, DenseLayer.class).getWeightInit());
            assertArrayEquals(new long[] {10, 12}, tl.getParam("1_W").shape());
            assertArrayEquals(new long[] {12, 6}, tl.getParam("2_W").shape());
            for (float v : p(tl, "1_W")) {
                assertEquals(1f, v, "layer 1 re-initialized with ONES");
            }
            for (float v : p(tl, "2_W")) {
                assertEquals(0f, v, "layer 2 re-initialized with ZERO");
            }
            for (String key : new String[] {"0_W", "0_b", "3_W", "3_b"}) {
                assertBitEqual(p(orig, key), p(tl, key), "copied " + key);
            }
            DataSet d = data(2, 16, 6, 3);
            tl.fit(d);
            assertTrue(Double.isFinite(tl.score()));
            assertEquals(8L, inner(orig, 1, DenseLayer.class).getNOut());
        }
    }

    @Test
    void nOutReplaceOfTheOutputLayerWithADistributionAndOfLayersInARow() {
        try (MultiLayerNetwork orig = trained();
                MultiLayerNetwork tl = new TransferLearning.Builder(orig)
                        .nOutReplace(0, 9, WeightInit.XAVIER)
                        .nOutReplace(1, 11, WeightInit.RELU)
                        .nOutReplace(3, 5, new NormalDistribution(0, 0.01))
                        .build()) {
            assertEquals(6 * 9 + 9 + 9 * 11 + 11 + 11 * 6 + 6 + 6 * 5 + 5, tl.numParams());
            assertEquals(9L, inner(tl, 1, DenseLayer.class).getNIn());
            assertEquals(11L, inner(tl, 2, DenseLayer.class).getNIn());
            assertEquals(WeightInit.RELU, inner(tl, 2, DenseLayer.class).getWeightInit(),
                    "the next layer gets the scheme too");
            OutputLayer out = inner(tl, 3, OutputLayer.class);
            assertEquals(WeightInit.DISTRIBUTION, out.getWeightInit());
            assertEquals(new NormalDistribution(0, 0.01), out.getWeightInitDistribution());
            assertEquals(5, tl.numOutputs());
            assertArrayEquals(new long[] {11, 6}, tl.getParam("2_W").shape());
            for (float v : p(tl, "3_W")) {
                assertTrue(Math.abs(v) < 0.1, "N(0, 0.01) weights, got " + v);
            }
            tl.fit(data(4, 8, 6, 5));
        }
    }

    @Test
    void nOutReplaceFollowsThroughBatchNormalizationAndPooling() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(8).updater(new Adam(1e-2)).list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(4).activation(Activation.RELU).build())
                .layer(new BatchNormalization.Builder().build())
                .layer(new SubsamplingLayer.Builder(new int[] {2, 2}, new int[] {2, 2}).build())
                .layer(new ActivationLayer.Builder().activation(Activation.TANH).build())
                .layer(new DenseLayer.Builder().nOut(5).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(6, 6, 1))
                .build();
        try (MultiLayerNetwork orig = new MultiLayerNetwork(c)) {
            orig.init();
            orig.fit(data(9, 8, 36, 2));
            assertEquals(16L, inner(orig, 4, DenseLayer.class).getNIn());
            try (MultiLayerNetwork tl = new TransferLearning.Builder(orig).nOutReplace(0, 6, WeightInit.RELU)
                    .build()) {
                assertEquals(6L, inner(tl, 1, BatchNormalization.class).getNIn());
                assertEquals(6L, inner(tl, 1, BatchNormalization.class).getNOut());
                assertEquals(24L, inner(tl, 4, DenseLayer.class).getNIn(), "6 channels · 2 · 2 after pooling");
                // conv 6·1·3·3+6, BN 4·6, dense 24·5+5, output 5·2+2
                assertEquals(60 + 24 + 125 + 12, tl.numParams());
                assertBitEqual(p(orig, "5_W"), p(tl, "5_W"), "output layer copied");
                assertEquals(tl.getLayerWiseConfigurations().getInputType(), InputType.convolutionalFlat(6, 6, 1));
                tl.fit(data(9, 8, 36, 2));
            }
        }
    }

    @Test
    void nInReplaceOfTheFirstLayerChangesTheInput() {
        try (MultiLayerNetwork orig = trained();
                MultiLayerNetwork tl = new TransferLearning.Builder(orig).nInReplace(0, 4, WeightInit.XAVIER).build()) {
            assertEquals(4, tl.numInputs());
            assertEquals(orig.numParams() - 2 * 10, tl.numParams());
            for (String key : new String[] {"1_W", "1_b", "2_W", "3_W"}) {
                assertBitEqual(p(orig, key), p(tl, key), "copied " + key);
            }
            tl.fit(data(6, 8, 4, 3));
        }
    }

    @Test
    void setInputTypeIsRecordedAndDrivesInference() {
        try (MultiLayerNetwork orig = trained();
                MultiLayerNetwork tl = new TransferLearning.Builder(orig).setInputType(InputType.feedForward(6))
                        .removeLayersFromOutput(2)
                        .addLayer(new DenseLayer.Builder().nOut(7).build())
                        .addLayer(new OutputLayer.Builder(LossFunction.MSE).nOut(2).activation(Activation.IDENTITY)
                                .build())
                        .build()) {
            assertEquals(InputType.feedForward(6), tl.getLayerWiseConfigurations().getInputType());
            assertEquals(8L, inner(tl, 2, DenseLayer.class).getNIn());
            assertEquals(7L, inner(tl, 3, OutputLayer.class).getNIn());
            assertEquals(70 + 88 + 63 + 16, tl.numParams());
        }
    }

    // ---- JSON, save and load --------------------------------------------------------------------

    @Test
    void newConfigurationRoundTripsAndSaveLoadKeepsFrozenLayers() throws Exception {
        try (MultiLayerNetwork orig = trained();
                MultiLayerNetwork tl = new TransferLearning.Builder(orig)
                        .fineTuneConfiguration(new FineTuneConfiguration.Builder().updater(new Adam(1e-3)).build())
                        .setFeatureExtractor(1).nOutReplace(2, 7, WeightInit.XAVIER).build()) {
            MultiLayerConfiguration c = tl.getLayerWiseConfigurations();
            assertEquals(c, MultiLayerConfiguration.fromJson(c.toJson()));
            assertEquals(c, MultiLayerConfiguration.fromYaml(c.toYaml()));
            assertTrue(c.toJson().contains("\"type\" : \"FrozenLayer\""));

            DataSet d = data(11, 16, 6, 3);
            tl.fit(d);
            File f = new File(tmp, "tl.zip");
            tl.save(f);
            try (MultiLayerNetwork loaded = MultiLayerNetwork.load(f)) {
                assertEquals(c, loaded.getLayerWiseConfigurations());
                assertBitEqual(tl.params().toFloatVector(), loaded.params().toFloatVector(), "loaded parameters");
                assertBitEqual(tl.getUpdaterState().toFloatVector(), loaded.getUpdaterState().toFloatVector(),
                        "loaded updater state");
                assertTrue(loaded.getLayer(0).isFrozen() && loaded.getLayer(1).isFrozen());
                for (int i = 0; i < 5; i++) {
                    loaded.fit(d);
                }
                for (String key : new String[] {"0_W", "0_b", "1_W", "1_b"}) {
                    assertBitEqual(p(orig, key), p(loaded, key), "frozen " + key + " after load and fit");
                }
                assertFalse(Arrays.equals(p(tl, "2_W"), p(loaded, "2_W")));
            }
            try (MultiLayerNetwork copy = SerializationUtil.javaRoundTrip(tl)) {
                assertEquals(c, copy.getLayerWiseConfigurations());
            }
        }
    }

    @Test
    void aTransferLearnedNetworkCanBeEditedAgainAndBuildIsRepeatable() {
        try (MultiLayerNetwork orig = trained()) {
            TransferLearning.Builder b = new TransferLearning.Builder(orig).setFeatureExtractor(0);
            try (MultiLayerNetwork first = b.build(); MultiLayerNetwork second = b.build()) {
                assertEquals(first.getLayerWiseConfigurations(), second.getLayerWiseConfigurations());
                assertBitEqual(first.params().toFloatVector(), second.params().toFloatVector(), "repeat build");
                first.fit(data(1, 8, 6, 3));
                try (MultiLayerNetwork again = new TransferLearning.Builder(first).setFeatureExtractor(1).build()) {
                    assertInstanceOf(FrozenLayer.class, conf(again, 0));
                    assertInstanceOf(DenseLayer.class, ((FrozenLayer) conf(again, 0)).getLayer(),
                            "an already frozen layer is not wrapped twice");
                    assertInstanceOf(FrozenLayer.class, conf(again, 1));
                    assertBitEqual(p(first, "1_W"), p(again, "1_W"), "trained layer 1 copied");
                    assertBitEqual(p(orig, "0_W"), p(again, "0_W"), "frozen layer 0 copied");
                    DL4JInvalidConfigException e = assertThrows(DL4JInvalidConfigException.class,
                            () -> new TransferLearning.Builder(first).nOutReplace(0, 3, WeightInit.XAVIER));
                    assertTrue(e.getMessage().contains("frozen"), e.getMessage());
                }
            }
        }
    }

    // ---- validation -------------------------------------------------------------------------------

    private static void assertInvalid(String expected, Supplier<?> edit) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
            Object r = edit.get();
            if (r instanceof MultiLayerNetwork) {
                ((MultiLayerNetwork) r).close();
            }
        });
        assertTrue(e.getMessage().contains(expected), "expected \"" + expected + "\" in: " + e.getMessage());
    }

    @Test
    void invalidEditsAreRefusedNamingTheProblem() {
        MultiLayerConfiguration withActivation = new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new DenseLayer.Builder().nIn(3).nOut(4).build())
                .layer(new BatchNormalization.Builder().build())
                .layer(new ActivationLayer.Builder().activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder(LossFunction.MSE).nOut(2).activation(Activation.IDENTITY).build())
                .build();
        try (MultiLayerNetwork orig = trained(); MultiLayerNetwork other = new MultiLayerNetwork(withActivation)) {
            other.init();
            assertInvalid("layer index 4 is out of range: the network has 4 layers (0..3)",
                    () -> new TransferLearning.Builder(orig).setFeatureExtractor(4));
            assertInvalid("layer index -1 is out of range", () -> new TransferLearning.Builder(orig)
                    .setFeatureExtractor(-1));
            assertInvalid("nOutReplace: layer index 9", () -> new TransferLearning.Builder(orig)
                    .nOutReplace(9, 3, WeightInit.XAVIER));
            assertInvalid("nOut must be at least 1, got 0", () -> new TransferLearning.Builder(orig)
                    .nOutReplace(1, 0, WeightInit.XAVIER));
            assertInvalid("use the overload that takes a Distribution", () -> new TransferLearning.Builder(orig)
                    .nOutReplace(1, 4, WeightInit.DISTRIBUTION));
            assertInvalid("layer 2 (ActivationLayer) has no nOut", () -> new TransferLearning.Builder(other)
                    .nOutReplace(2, 4, WeightInit.XAVIER));
            assertInvalid("layer 1 (BatchNormalization) takes its size from its input",
                    () -> new TransferLearning.Builder(other).nOutReplace(1, 4, WeightInit.XAVIER));
            assertInvalid("removeLayersFromOutput(5): the network has 4 layers",
                    () -> new TransferLearning.Builder(orig).removeLayersFromOutput(5));
            assertInvalid("the last layer must be an OutputLayer",
                    () -> new TransferLearning.Builder(orig).removeOutputLayer().build());
            assertInvalid("setFeatureExtractor(3): layer index out of range: the network has 3 layers",
                    () -> new TransferLearning.Builder(orig).setFeatureExtractor(3).removeOutputLayer().build());
            assertInvalid("which addLayer added", () -> new TransferLearning.Builder(orig).setFeatureExtractor(3)
                    .removeOutputLayer().addLayer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(2)
                            .activation(Activation.SOFTMAX).build()).build());
            assertInvalid("re-initialized by nOutReplace", () -> new TransferLearning.Builder(orig)
                    .setFeatureExtractor(2).nOutReplace(1, 5, WeightInit.XAVIER).build());
            assertInvalid("nIn=5 does not match", () -> new TransferLearning.Builder(orig).removeOutputLayer()
                    .addLayer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(5).nOut(2)
                            .activation(Activation.SOFTMAX).build()).build());
            assertThrows(NullPointerException.class, () -> new TransferLearning.Builder(orig).addLayer(null));

            // nothing above changed the original
            assertEquals(mlp().getLayers(), orig.getLayerWiseConfigurations().getLayers());
        }
    }

    @Test
    void theOriginalMustBeInitializedAndOpen() {
        MultiLayerNetwork fresh = new MultiLayerNetwork(mlp());
        FerroIllegalArgumentException e = assertThrows(FerroIllegalArgumentException.class,
                () -> new TransferLearning.Builder(fresh));
        assertTrue(e.getMessage().contains("not initialized"), e.getMessage());
        fresh.init();
        TransferLearning.Builder b = new TransferLearning.Builder(fresh);
        fresh.close();
        e = assertThrows(FerroIllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(FerroIllegalArgumentException.class, () -> new TransferLearning.Builder(fresh));
    }

    @Test
    void editsDoNotLeakIntoTheBuilderInputs() {
        try (MultiLayerNetwork orig = trained()) {
            OutputLayer added = new OutputLayer.Builder(LossFunction.MCXENT).nOut(2).activation(Activation.SOFTMAX)
                    .build();
            FineTuneConfiguration ft = new FineTuneConfiguration.Builder().updater(new Sgd(0.2)).build();
            try (MultiLayerNetwork tl = new TransferLearning.Builder(orig).fineTuneConfiguration(ft)
                    .removeOutputLayer().addLayer(added).build()) {
                assertEquals(null, added.getNIn(), "the added layer object is copied, not filled in");
                assertEquals(null, added.getIUpdater());
                assertNotEquals(added, conf(tl, 3));
                List<Layer> origLayers = orig.getLayerWiseConfigurations().getLayers();
                assertEquals(new Adam(0.01), ((FeedForwardLayer) origLayers.get(0)).getIUpdater());
                Map<String, INDArray> table = tl.paramTable();
                assertEquals(8, table.size());
            }
        }
    }
}
