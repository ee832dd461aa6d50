package org.ferrodl.nn.transferlearning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.AdaGrad;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.ConvolutionMode;
import org.ferrodl.nn.conf.GradientNormalization;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.distribution.NormalDistribution;
import org.ferrodl.nn.conf.distribution.UniformDistribution;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.DropoutLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

/** FineTuneConfiguration on its own: how it changes layer configurations, JSON, validation. No native library. */
class FineTuneConfigurationTest {

    /** A resolved network: dense (l2 1e-3, Sgd 0.1, dropOut 0.9), BN, dropout layer, output. */
    private static MultiLayerConfiguration resolved() {
        return new NeuralNetConfiguration.Builder().seed(1).updater(new Sgd(0.1)).l2(1e-3).l2Bias(2e-3).dropOut(0.9)
                .list()
                .layer(new DenseLayer.Builder().nIn(4).nOut(5).activation(Activation.TANH).build())
                .layer(new BatchNormalization.Builder().l2(0.5).build())
                .layer(new DropoutLayer.Builder(0.7).build())
                .layer(new DenseLayer.Builder().nOut(5).biasUpdater(new Sgd(0.5)).l1(4e-4).weightDecay(1e-2).build())
                .layer(new OutputLayer.Builder(LossFunction.MCXENT).nOut(3).activation(Activation.SOFTMAX).build())
                .build();
    }

    private static <T extends Layer> T layer(MultiLayerConfiguration c, int i, Class<T> type) {
        return type.cast(c.getLayers().get(i).clone());
    }

    @Test
    void nothingSetChangesNothing() {
        MultiLayerConfiguration c = resolved();
        FineTuneConfiguration ft = new FineTuneConfiguration.Builder().build();
        for (Layer l : c.getLayers()) {
            Layer copy = l.clone();
            ft.applyToLayer(copy);
            assertEquals(l, copy);
        }
        assertEquals("{ }", ft.toJson().replaceAll("\\s+", " "));
    }

    @Test
    void updaterReplacesTheUpdaterAndABiasUpdaterThatFollowedIt() {
        MultiLayerConfiguration c = resolved();
        FineTuneConfiguration ft = new FineTuneConfiguration.Builder().updater(new Adam(1e-4)).build();

        DenseLayer plain = layer(c, 0, DenseLayer.class);
        ft.applyToLayer(plain);
        assertEquals(new Adam(1e-4), plain.getIUpdater());
        assertEquals(new Adam(1e-4), plain.getBiasUpdater(), "the bias updater was the layer's updater: it follows");

        DenseLayer ownBias = layer(c, 3, DenseLayer.class);
        ft.applyToLayer(ownBias);
        assertEquals(new Adam(1e-4), ownBias.getIUpdater());
        assertEquals(new Sgd(0.5), ownBias.getBiasUpdater(), "a distinct bias updater is kept");

        FineTuneConfiguration both = new FineTuneConfiguration.Builder().updater(new Adam(1e-4))
                .biasUpdater(new AdaGrad(0.3)).build();
        DenseLayer d = layer(c, 3, DenseLayer.class);
        both.applyToLayer(d);
        assertEquals(new AdaGrad(0.3), d.getBiasUpdater());
    }

    @Test
    void regularizationAboveZeroReplacesTheWholeGroup() {
        MultiLayerConfiguration c = resolved();
        DenseLayer d = layer(c, 3, DenseLayer.class); // l1 4e-4, l2 1e-3, weightDecay 1e-2, l2Bias 2e-3
        new FineTuneConfiguration.Builder().l2(1e-5).build().applyToLayer(d);
        assertEquals(0.0, d.getL1());
        assertEquals(1e-5, d.getL2());
        assertEquals(0.0, d.getWeightDecay());
        assertEquals(2e-3, d.getL2Bias(), "the bias group is separate and untouched");

        DenseLayer b = layer(c, 3, DenseLayer.class);
        new FineTuneConfiguration.Builder().l1Bias(1e-6).build().applyToLayer(b);
        assertEquals(1e-6, b.getL1Bias());
        assertEquals(0.0, b.getL2Bias());
        assertEquals(4e-4, b.getL1(), "the weight group is untouched");
    }

    @Test
    void regularizationOfZeroClearsOnlyThatTerm() {
        MultiLayerConfiguration c = resolved();
        DenseLayer d = layer(c, 3, DenseLayer.class);
        new FineTuneConfiguration.Builder().l2(0).build().applyToLayer(d);
        assertEquals(0.0, d.getL2());
        assertEquals(4e-4, d.getL1());
        assertEquals(1e-2, d.getWeightDecay());
    }

    @Test
    void batchNormalizationKeepsItsRegularizationAndLayersWithoutParametersKeepTheirDropout() {
        MultiLayerConfiguration c = resolved();
        FineTuneConfiguration ft = new FineTuneConfiguration.Builder().l2(1e-5).dropOut(0.5)
                .updater(new Adam(1e-3)).build();
        BatchNormalization bn = layer(c, 1, BatchNormalization.class);
        ft.applyToLayer(bn);
        assertEquals(0.5, bn.getL2(), "BN regularization is not replaced");
        assertEquals(new Adam(1e-3), bn.getIUpdater(), "but its updater is");
        assertEquals(0.5, bn.getDropOut());

        DropoutLayer drop = layer(c, 2, DropoutLayer.class);
        ft.applyToLayer(drop);
        assertEquals(0.7, drop.getDropOut(), "a DropoutLayer's own probability is kept");

        DenseLayer d = layer(c, 0, DenseLayer.class);
        new FineTuneConfiguration.Builder().dropOut(0).build().applyToLayer(d);
        assertEquals(0.0, d.getDropOut(), "dropOut(0) removes the layer's dropout");
    }

    @Test
    void activationWeightInitBiasInitAndGradientNormalization() {
        MultiLayerConfiguration c = resolved();
        FineTuneConfiguration ft = new FineTuneConfiguration.Builder().activation(Activation.RELU)
                .weightInit(new UniformDistribution(-0.1, 0.1)).biasInit(0.25)
                .gradientNormalization(GradientNormalization.ClipL2PerLayer).gradientNormalizationThreshold(2.5)
                .build();
        OutputLayer o = layer(c, 4, OutputLayer.class);
        ft.applyToLayer(o);
        assertEquals(Activation.RELU, o.getActivation(), "as in the reference: every layer with parameters");
        assertEquals(WeightInit.DISTRIBUTION, o.getWeightInit());
        assertEquals(new UniformDistribution(-0.1, 0.1), o.getWeightInitDistribution());
        assertEquals(0.25, o.getBiasInit());
        assertEquals(GradientNormalization.ClipL2PerLayer, o.getGradientNormalization());
        assertEquals(2.5, o.getGradientNormalizationThreshold());

        new FineTuneConfiguration.Builder().weightInit(WeightInit.RELU).build().applyToLayer(o);
        assertEquals(WeightInit.RELU, o.getWeightInit());
        assertNull(o.getWeightInitDistribution(), "a scheme other than DISTRIBUTION clears the distribution");
    }

    @Test
    void convolutionModeOnConvolutionAndSubsamplingLayers() {
        FineTuneConfiguration ft = new FineTuneConfiguration.Builder().convolutionMode(ConvolutionMode.Same).build();
        ConvolutionLayer conv = new ConvolutionLayer.Builder(3, 3).nIn(1).nOut(2).build();
        SubsamplingLayer pool = new SubsamplingLayer.Builder(2, 2).build();
        ft.applyToLayer(conv);
        ft.applyToLayer(pool);
        assertEquals(ConvolutionMode.Same, conv.getConvolutionMode());
        assertEquals(ConvolutionMode.Same, pool.getConvolutionMode());
    }

    @Test
    void frozenLayersAreNeverChanged() {
        MultiLayerConfiguration c = resolved();
        FrozenLayer f = new FrozenLayer(c.getLayers().get(0));
        FrozenLayer before = f.clone();
        new FineTuneConfiguration.Builder().updater(new Adam(1)).l1(1).dropOut(0.5).activation(Activation.CUBE).build()
                .applyToLayer(f);
        assertEquals(before, f);
    }

    @Test
    void appliedBuilderGivesTheDefaultsOfAddedLayers() {
        FineTuneConfiguration ft = new FineTuneConfiguration.Builder().seed(77).updater(new Adam(2e-3)).l2(1e-4)
                .activation(Activation.ELU).miniBatch(false).build();
        MultiLayerConfiguration c = ft.appliedNeuralNetConfigurationBuilder().list()
                .layer(new OutputLayer.Builder(LossFunction.MSE).nIn(3).nOut(2).activation(Activation.IDENTITY).build())
                .build();
        assertEquals(77, c.getSeed());
        assertFalse(c.isMiniBatch());
        OutputLayer o = (OutputLayer) c.getLayers().get(0);
        assertEquals(new Adam(2e-3), o.getIUpdater());
        assertEquals(new Adam(2e-3), o.getBiasUpdater());
        assertEquals(1e-4, o.getL2());
        assertEquals(Activation.IDENTITY, o.getActivation(), "the layer's own value wins");
        assertEquals(WeightInit.XAVIER, o.getWeightInit(), "unset everywhere: the library default");
    }

    @Test
    void jsonYamlAndJavaSerializationRoundTrip() throws Exception {
        FineTuneConfiguration ft = new FineTuneConfiguration.Builder().seed(5).miniBatch(true)
                .activation(Activation.LEAKYRELU).weightInit(new NormalDistribution(0, 0.05)).biasInit(0.1)
                .dropOut(0.8).updater(new Adam(1e-3)).biasUpdater(new Sgd(0.01)).l1(1e-5).l2(1e-4)
                .weightDecay(1e-3).l1Bias(1e-6).l2Bias(1e-7).weightDecayBias(1e-8)
                .gradientNormalization(GradientNormalization.RenormalizeL2PerLayer).gradientNormalizationThreshold(3)
                .convolutionMode(ConvolutionMode.Strict).build();
        String json = ft.toJson();
        assertTrue(json.contains("\"updater\"") && json.contains("\"type\" : \"Adam\""), json);
        assertEquals(ft, FineTuneConfiguration.fromJson(json));
        assertEquals(ft.hashCode(), FineTuneConfiguration.fromJson(json).hashCode());
        assertEquals(ft, FineTuneConfiguration.fromYaml(ft.toYaml()));
        assertEquals(ft, SerializationUtil.javaRoundTrip(ft));
        assertEquals(ft, ft.clone());
        assertNotEquals(ft, new FineTuneConfiguration.Builder().seed(5).build());

        FineTuneConfiguration small = FineTuneConfiguration.builder().l2(1e-4).build();
        assertEquals("{ \"l2\" : 1.0E-4 }", small.toJson().replaceAll("\\s+", " "));
        assertEquals(small, FineTuneConfiguration.fromJson("{\"l2\": 0.0001}"));
    }

    @Test
    void gettersReturnCopiesOfMutableValues() {
        FineTuneConfiguration ft = new FineTuneConfiguration.Builder().updater(new Sgd(0.1)).build();
        ft.getUpdater().setLearningRate(5);
        assertEquals(new Sgd(0.1), ft.getUpdater());
        assertInstanceOf(Sgd.class, ft.getUpdater());
    }

    @Test
    void invalidValuesAreRefusedNamingTheField() {
        DL4JInvalidConfigException e = assertThrows(DL4JInvalidConfigException.class,
                () -> new FineTuneConfiguration.Builder().l2(-1).build());
        assertTrue(e.getMessage().contains("l2"), e.getMessage());
        e = assertThrows(DL4JInvalidConfigException.class,
                () -> new FineTuneConfiguration.Builder().dropOut(1.5).build());
        assertTrue(e.getMessage().contains("dropOut=1.5"), e.getMessage());
        e = assertThrows(DL4JInvalidConfigException.class,
                () -> new FineTuneConfiguration.Builder().updater(new Sgd(-1)).build());
        assertTrue(e.getMessage().contains("updater Sgd"), e.getMessage());
        e = assertThrows(DL4JInvalidConfigException.class,
                () -> new FineTuneConfiguration.Builder().weightInit(WeightInit.DISTRIBUTION).build());
        assertTrue(e.getMessage().contains("DISTRIBUTION needs a distribution"), e.getMessage());
        e = assertThrows(DL4JInvalidConfigException.class,
                () -> new FineTuneConfiguration.Builder().gradientNormalizationThreshold(0).build());
        assertTrue(e.getMessage().contains("gradientNormalizationThreshold"), e.getMessage());
        e = assertThrows(DL4JInvalidConfigException.class, () -> FineTuneConfiguration.fromJson("{\"l3\": 1}"));
        assertTrue(e.getMessage().contains("l3"), e.getMessage());
        assertThrows(DL4JInvalidConfigException.class, () -> FineTuneConfiguration.fromJson("{\"l1\": -2}"));
        assertThrows(NullPointerException.class, () -> new FineTuneConfiguration.Builder().updater(null));
    }
}
