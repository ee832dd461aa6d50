package org.ferrodl.nn.conf.layers;

import static org.ferrodl.nn.conf.ConfTestSupport.invalid;
import static org.ferrodl.nn.conf.ConfTestSupport.network;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.linalg.learning.config.Sgd;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.ConvolutionMode;
import org.ferrodl.nn.conf.GradientNormalization;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.NeuralNetConfiguration;
import org.ferrodl.nn.conf.distribution.NormalDistribution;
import org.ferrodl.nn.conf.distribution.UniformDistribution;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.ferrodl.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;

/** The reference's defaults of every layer, and how the global builder values resolve into layers. */
class LayerDefaultsTest {

    private static void assertGlobalDefaults(BaseLayer l) {
        assertEquals(Activation.SIGMOID, l.getActivation());
        assertEquals(WeightInit.XAVIER, l.getWeightInit());
        assertNull(l.getWeightInitDistribution());
        assertEquals(0.0, l.getBiasInit());
        assertEquals(0.0, l.getL1());
        assertEquals(0.0, l.getL2());
        assertEquals(0.0, l.getL1Bias());
        assertEquals(0.0, l.getL2Bias());
        assertEquals(0.0, l.getWeightDecay());
        assertEquals(0.0, l.getWeightDecayBias());
        assertEquals(new Sgd(1e-3), l.getIUpdater());
        assertEquals(new Sgd(1e-3), l.getBiasUpdater());
        assertEquals(GradientNormalization.None, l.getGradientNormalization());
        assertEquals(1.0, l.getGradientNormalizationThreshold());
        assertEquals(0.0, l.getDropOut());
        assertNull(l.getLayerName());
    }

    @Test
    void feedForwardLayerDefaults() {
        MultiLayerConfiguration c = network(null, new DenseLayer.Builder().nIn(3).nOut(4).build(),
                new OutputLayer.Builder().nOut(2).build());
        DenseLayer d = (DenseLayer) c.getLayers().get(0);
        assertGlobalDefaults(d);
        assertTrue(d.getHasBias());
        OutputLayer o = (OutputLayer) c.getLayers().get(1);
        assertGlobalDefaults(o);
        assertTrue(o.getHasBias());
        assertEquals(LossFunction.MCXENT, o.getLossFunction());
        assertNull(o.getLossWeights());
        assertTrue(c.isMiniBatch());

        MultiLayerConfiguration e = network(null, new EmbeddingLayer.Builder().nIn(10).nOut(4).build(),
                new LossLayer.Builder().build());
        EmbeddingLayer emb = (EmbeddingLayer) e.getLayers().get(0);
        assertGlobalDefaults(emb);
        assertFalse(emb.getHasBias(), "EmbeddingLayer defaults to no bias");
        LossLayer loss = (LossLayer) e.getLayers().get(1);
        assertEquals(Activation.IDENTITY, loss.getActivation());
        assertEquals(LossFunction.MCXENT, loss.getLossFunction());
        assertNull(loss.getLossWeights());
        assertEquals(0.0, loss.getDropOut());
    }

    @Test
    void convolutionalLayerDefaults() {
        MultiLayerConfiguration c = network(InputType.convolutional(12, 12, 1),
                new ConvolutionLayer.Builder().nOut(2).build(),
                new SubsamplingLayer.Builder().build(),
                new BatchNormalization.Builder().build(),
                new Upsampling2D.Builder().build(),
                new ZeroPaddingLayer.Builder().build(),
                new GlobalPoolingLayer.Builder().build(),
                new LossLayer.Builder().build());
        ConvolutionLayer conv = (ConvolutionLayer) c.getLayers().get(0);
        assertGlobalDefaults(conv);
        assertArrayEquals(new int[] {5, 5}, conv.getKernelSize());
        assertArrayEquals(new int[] {1, 1}, conv.getStride());
        assertArrayEquals(new int[] {0, 0}, conv.getPadding());
        assertArrayEquals(new int[] {1, 1}, conv.getDilation());
        assertEquals(ConvolutionMode.Truncate, conv.getConvolutionMode());
        assertTrue(conv.getHasBias());
        assertEquals(1L, conv.getNIn());

        SubsamplingLayer pool = (SubsamplingLayer) c.getLayers().get(1);
        assertEquals(PoolingType.MAX, pool.getPoolingType());
        assertArrayEquals(new int[] {1, 1}, pool.getKernelSize());
        assertArrayEquals(new int[] {2, 2}, pool.getStride());
        assertArrayEquals(new int[] {0, 0}, pool.getPadding());
        assertArrayEquals(new int[] {1, 1}, pool.getDilation());
        assertEquals(ConvolutionMode.Truncate, pool.getConvolutionMode());
        assertEquals(2, pool.getPnorm());
        assertEquals(1e-8, pool.getEps());

        BatchNormalization bn = (BatchNormalization) c.getLayers().get(2);
        assertEquals(0.9, bn.getDecay());
        assertEquals(1e-5, bn.getEps());
        assertFalse(bn.isLockGammaBeta());
        assertEquals(1.0, bn.getGamma());
        assertEquals(0.0, bn.getBeta());
        assertEquals(2L, bn.getNIn());
        assertEquals(2L, bn.getNOut());
        // as in the reference, batch normalization takes the global activation (SIGMOID by default)
        assertEquals(Activation.SIGMOID, bn.getActivation());

        assertArrayEquals(new int[] {1, 1}, ((Upsampling2D) c.getLayers().get(3)).getSize());
        assertArrayEquals(new int[] {0, 0, 0, 0}, ((ZeroPaddingLayer) c.getLayers().get(4)).getPadding());
        GlobalPoolingLayer gp = (GlobalPoolingLayer) c.getLayers().get(5);
        assertEquals(PoolingType.MAX, gp.getPoolingType());
        assertEquals(2, gp.getPnorm());
        assertTrue(gp.isCollapseDimensions());
        // 12 -> conv 5x5 -> 8 -> pool 1x1 stride 2 -> 4
        assertEquals(InputType.convolutional(4, 4, 2), c.getLayerActivationTypes().get(1));
    }

    @Test
    void oneDimensionalLayerDefaults() {
        MultiLayerConfiguration c = network(InputType.recurrent(3, 12),
                new Convolution1DLayer.Builder().kernelSize(3).nOut(2).build(),
                new Subsampling1DLayer.Builder().build(),
                new GlobalPoolingLayer.Builder().build(), new LossLayer.Builder().build());
        Convolution1DLayer conv = (Convolution1DLayer) c.getLayers().get(0);
        assertGlobalDefaults(conv);
        assertEquals(3L, conv.getNIn());
        assertEquals(1, conv.getStride());
        assertEquals(0, conv.getPadding());
        assertEquals(1, conv.getDilation());
        assertEquals(ConvolutionMode.Truncate, conv.getConvolutionMode());
        assertTrue(conv.getHasBias());
        // the reference's Subsampling1DLayer defaults: MAX, kernel 2, stride 1, padding 0
        Subsampling1DLayer pool = (Subsampling1DLayer) c.getLayers().get(1);
        assertEquals(PoolingType.MAX, pool.getPoolingType());
        assertEquals(2, pool.getKernelSize());
        assertEquals(1, pool.getStride());
        assertEquals(0, pool.getPadding());
        assertEquals(1, pool.getDilation());
        assertEquals(2, pool.getPnorm());
        assertEquals(1e-8, pool.getEps());
        // 12 -> k3 -> 10 -> k2 s1 -> 9
        assertEquals(InputType.recurrent(2, 9), c.getLayerActivationTypes().get(1));
        // as in the reference, a Convolution1DLayer needs its kernel size
        String m = invalid(() -> network(InputType.recurrent(3, 12), new Convolution1DLayer.Builder().nOut(2).build(),
                new GlobalPoolingLayer.Builder().build(), new LossLayer.Builder().build()));
        assertTrue(m.contains("layer 0 (Convolution1DLayer)") && m.contains("kernelSize is not set"), m);
    }

    @Test
    void noParameterLayerDefaultsTakeTheGlobalActivationAndDropout() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(1).activation(Activation.RELU)
                .dropOut(0.8).list()
                .layer(new DenseLayer.Builder().nIn(3).nOut(4).build())
                .layer(new ActivationLayer.Builder().build())
                .layer(new DropoutLayer.Builder().build())
                .layer(new DropoutLayer.Builder(0.5).build())
                .layer(new FrozenLayer(new DenseLayer.Builder().nOut(3).build()))
                .layer(new LossLayer.Builder().build())
                .build();
        assertEquals(Activation.RELU, ((ActivationLayer) c.getLayers().get(1)).getActivation());
        assertEquals(0.8, c.getLayers().get(1).getDropOut());
        assertEquals(0.8, c.getLayers().get(2).getDropOut());
        assertEquals(0.5, c.getLayers().get(3).getDropOut());
        FrozenLayer f = (FrozenLayer) c.getLayers().get(4);
        assertEquals(0.0, f.getDropOut(), "a frozen layer runs in inference mode: the global dropout skips it");
        assertEquals(Activation.RELU, ((DenseLayer) f.getLayer()).getActivation());
        assertEquals(4L, ((DenseLayer) f.getLayer()).getNIn());
        assertEquals(Activation.IDENTITY, ((LossLayer) c.getLayers().get(5)).getActivation());
        assertEquals(0.8, c.getLayers().get(5).getDropOut());
    }

    @Test
    void everyGlobalValueResolvesIntoLayersAndLayerValuesWin() {
        MultiLayerConfiguration c = new NeuralNetConfiguration.Builder().seed(7)
                .activation(Activation.ELU).weightInit(new UniformDistribution(-1, 1)).biasInit(0.5)
                .updater(new Adam(0.01)).biasUpdater(new Sgd(0.2))
                .l1(1e-5).l2(2e-5).l1Bias(3e-5).l2Bias(4e-5).weightDecay(5e-5).weightDecayBias(6e-5)
                .dropOut(0.9).gradientNormalization(GradientNormalization.RenormalizeL2PerParamType)
                .gradientNormalizationThreshold(3.0).convolutionMode(ConvolutionMode.Same).miniBatch(false)
                .list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).build())
                .layer(new SubsamplingLayer.Builder(2, 2).build())
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(2).convolutionMode(ConvolutionMode.Truncate)
                        .activation(Activation.GELU).weightInit(WeightInit.RELU).biasInit(-1).updater(new Sgd(0.3))
                        .l1(0.1).l2(0.2).l1Bias(0.3).l2Bias(0.4).weightDecay(0.5).weightDecayBias(0.6).dropOut(0.1)
                        .gradientNormalization(GradientNormalization.ClipElementWiseAbsoluteValue)
                        .gradientNormalizationThreshold(9).build())
                .layer(new BatchNormalization.Builder().build())
                .layer(new OutputLayer.Builder().nOut(2).activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutional(8, 8, 1))
                .build();
        assertEquals(7L, c.getSeed());
        assertFalse(c.isMiniBatch());
        ConvolutionLayer global = (ConvolutionLayer) c.getLayers().get(0);
        assertEquals(Activation.ELU, global.getActivation());
        assertEquals(WeightInit.DISTRIBUTION, global.getWeightInit());
        assertEquals(new UniformDistribution(-1, 1), global.getWeightInitDistribution());
        assertEquals(0.5, global.getBiasInit());
        assertEquals(new Adam(0.01), global.getIUpdater());
        assertEquals(new Sgd(0.2), global.getBiasUpdater());
        assertEquals(1e-5, global.getL1());
        assertEquals(2e-5, global.getL2());
        assertEquals(3e-5, global.getL1Bias());
        assertEquals(4e-5, global.getL2Bias());
        assertEquals(5e-5, global.getWeightDecay());
        assertEquals(6e-5, global.getWeightDecayBias());
        assertEquals(0.9, global.getDropOut());
        assertEquals(GradientNormalization.RenormalizeL2PerParamType, global.getGradientNormalization());
        assertEquals(3.0, global.getGradientNormalizationThreshold());
        assertEquals(ConvolutionMode.Same, global.getConvolutionMode());
        assertEquals(ConvolutionMode.Same, ((SubsamplingLayer) c.getLayers().get(1)).getConvolutionMode());

        ConvolutionLayer own = (ConvolutionLayer) c.getLayers().get(2);
        assertEquals(ConvolutionMode.Truncate, own.getConvolutionMode());
        assertEquals(Activation.GELU, own.getActivation());
        assertEquals(WeightInit.RELU, own.getWeightInit());
        assertNull(own.getWeightInitDistribution());
        assertEquals(-1.0, own.getBiasInit());
        assertEquals(new Sgd(0.3), own.getIUpdater());
        assertEquals(new Sgd(0.2), own.getBiasUpdater(), "the global bias updater wins over the layer's updater");
        assertEquals(0.1, own.getL1());
        assertEquals(0.2, own.getL2());
        assertEquals(0.3, own.getL1Bias());
        assertEquals(0.4, own.getL2Bias());
        assertEquals(0.5, own.getWeightDecay());
        assertEquals(0.6, own.getWeightDecayBias());
        assertEquals(0.1, own.getDropOut());
        assertEquals(GradientNormalization.ClipElementWiseAbsoluteValue, own.getGradientNormalization());
        assertEquals(9.0, own.getGradientNormalizationThreshold());

        BatchNormalization bn = (BatchNormalization) c.getLayers().get(3);
        assertEquals(Activation.ELU, bn.getActivation());
        assertEquals(new Adam(0.01), bn.getIUpdater());
        assertEquals(0.0, bn.getL2(), "global regularization does not apply to batch normalization");
        assertEquals(0.0, bn.getWeightDecay());
        assertEquals(0.9, bn.getDropOut());
        // 8 -> Same 3x3 -> 8 -> Same pool 2x2 stride 2 -> 4 -> Truncate 3x3 -> 2
        assertEquals(InputType.convolutional(2, 2, 2), c.getLayerActivationTypes().get(2));
        assertEquals(8L, ((OutputLayer) c.getLayers().get(4)).getNIn());
    }

    @Test
    void weightInitAndDistributionInteract() {
        DenseLayer d = new DenseLayer.Builder().weightInit(new NormalDistribution(0, 1)).weightInit(WeightInit.RELU)
                .build();
        assertEquals(WeightInit.RELU, d.getWeightInit());
        assertNull(d.getWeightInitDistribution(), "another scheme clears the distribution");
        // a global scheme other than DISTRIBUTION clears the global distribution set before it
        String cleared = invalid(() -> new NeuralNetConfiguration.Builder().seed(1)
                .dist(new NormalDistribution(0, 0.5)).weightInit(WeightInit.XAVIER).weightInit(WeightInit.DISTRIBUTION)
                .list().layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build());
        assertTrue(cleared.contains("weightInit DISTRIBUTION needs a distribution"), cleared);
        assertEquals(WeightInit.XAVIER, ((OutputLayer) new NeuralNetConfiguration.Builder().seed(1)
                .dist(new NormalDistribution(0, 0.5)).weightInit(WeightInit.XAVIER).list()
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build().getLayers().get(0)).getWeightInit());
        String m = invalid(() -> new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).weightInit(WeightInit.DISTRIBUTION).build()).build());
        assertTrue(m.contains("layer 0 (OutputLayer)") && m.contains("weightInit DISTRIBUTION needs a distribution"),
                m);
        MultiLayerConfiguration g = new NeuralNetConfiguration.Builder().seed(1).dist(new NormalDistribution(0, 0.5))
                .list().layer(new OutputLayer.Builder().nIn(2).nOut(2).weightInit(WeightInit.DISTRIBUTION).build())
                .build();
        assertEquals(new NormalDistribution(0, 0.5),
                ((OutputLayer) g.getLayers().get(0)).getWeightInitDistribution());
    }
}
