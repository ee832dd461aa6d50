package org.ferrodl.nn.conf.layers;

import static org.ferrodl.nn.conf.ConfTestSupport.allBaseOptions;
import static org.ferrodl.nn.conf.ConfTestSupport.checkAllBaseOptions;
import static org.ferrodl.nn.conf.ConfTestSupport.network;
import static org.ferrodl.nn.conf.ConfTestSupport.roundTrips;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.linalg.lossfunctions.impl.LossMSE;
import org.ferrodl.linalg.lossfunctions.impl.LossNegativeLogLikelihood;
import org.ferrodl.nn.conf.ConvolutionMode;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.junit.jupiter.api.Test;

/**
 * For each layer type: a configuration with every option set to a non-default value survives JSON,
 * YAML, Java serialization and clone, and every field is checked on every copy.
 */
class LayerRoundTripTest {

    private static LossLayer mseLoss() {
        return new LossLayer.Builder(LossFunction.MSE).build();
    }

    @Test
    void denseLayer() throws Exception {
        MultiLayerConfiguration c = network(null,
                allBaseOptions(new DenseLayer.Builder()).nIn(4).nOut(5).hasBias(false).build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            DenseLayer d = assertInstanceOf(DenseLayer.class, l);
            checkAllBaseOptions(d);
            assertEquals(4L, d.getNIn());
            assertEquals(5L, d.getNOut());
            assertFalse(d.getHasBias());
        }
    }

    @Test
    void outputLayerWithWeightedLossObject() throws Exception {
        MultiLayerConfiguration c = network(null, allBaseOptions(new OutputLayer.Builder(
                new LossMSE(Nd4j.createFromArray(1.0, 2.0, 3.0)))).nIn(4).nOut(3).hasBias(false).build());
        for (Layer l : roundTrips(c, 0)) {
            OutputLayer o = assertInstanceOf(OutputLayer.class, l);
            checkAllBaseOptions(o);
            assertEquals(4L, o.getNIn());
            assertEquals(3L, o.getNOut());
            assertFalse(o.getHasBias());
            assertEquals(LossFunction.MSE, o.getLossFunction());
            assertArrayEquals(new double[] {1, 2, 3}, o.getLossWeights());
        }
    }

    @Test
    void lossLayer() throws Exception {
        MultiLayerConfiguration c = network(null, new DenseLayer.Builder().nIn(4).nOut(3).build(),
                new LossLayer.Builder(new LossNegativeLogLikelihood(Nd4j.createFromArray(0.5, 1.0, 2.0)))
                        .name("loss").dropOut(0.9).activation(Activation.SOFTMAX).build());
        for (Layer l : roundTrips(c, 1)) {
            LossLayer o = assertInstanceOf(LossLayer.class, l);
            assertEquals("loss", o.getLayerName());
            assertEquals(0.9, o.getDropOut());
            assertEquals(Activation.SOFTMAX, o.getActivation());
            assertEquals(LossFunction.NEGATIVELOGLIKELIHOOD, o.getLossFunction());
            assertArrayEquals(new double[] {0.5, 1, 2}, o.getLossWeights());
        }
    }

    @Test
    void activationLayer() throws Exception {
        MultiLayerConfiguration c = network(null, new DenseLayer.Builder().nIn(4).nOut(3).build(),
                new ActivationLayer.Builder().name("act").dropOut(0.4).activation(Activation.RELU6).build(),
                mseLoss());
        for (Layer l : roundTrips(c, 1)) {
            ActivationLayer a = assertInstanceOf(ActivationLayer.class, l);
            assertEquals("act", a.getLayerName());
            assertEquals(0.4, a.getDropOut());
            assertEquals(Activation.RELU6, a.getActivation());
        }
    }

    @Test
    void dropoutLayer() throws Exception {
        MultiLayerConfiguration c = network(null, new DenseLayer.Builder().nIn(4).nOut(3).build(),
                new DropoutLayer.Builder(0.6).name("drop").build(), mseLoss());
        for (Layer l : roundTrips(c, 1)) {
            DropoutLayer d = assertInstanceOf(DropoutLayer.class, l);
            assertEquals("drop", d.getLayerName());
            assertEquals(0.6, d.getDropOut());
        }
    }

    @Test
    void batchNormalization() throws Exception {
        MultiLayerConfiguration c = network(InputType.convolutional(4, 4, 3),
                allBaseOptions(new BatchNormalization.Builder()).nIn(3).nOut(3).decay(0.8).eps(1e-3)
                        .lockGammaBeta(true).gamma(2.0).beta(0.5).build(),
                new GlobalPoolingLayer.Builder().build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            BatchNormalization b = assertInstanceOf(BatchNormalization.class, l);
            checkAllBaseOptions(b);
            assertEquals(3L, b.getNIn());
            assertEquals(3L, b.getNOut());
            assertEquals(0.8, b.getDecay());
            assertEquals(1e-3, b.getEps());
            assertTrue(b.isLockGammaBeta());
            assertEquals(2.0, b.getGamma());
            assertEquals(0.5, b.getBeta());
        }
    }

    @Test
    void convolutionLayer() throws Exception {
        MultiLayerConfiguration c = network(InputType.convolutional(8, 8, 2),
                allBaseOptions(new ConvolutionLayer.Builder(3, 2)).nIn(2).nOut(3).stride(2, 1).padding(1, 0)
                        .dilation(1, 2).convolutionMode(ConvolutionMode.Same).hasBias(false).build(),
                new GlobalPoolingLayer.Builder().build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            ConvolutionLayer v = assertInstanceOf(ConvolutionLayer.class, l);
            checkAllBaseOptions(v);
            assertEquals(2L, v.getNIn());
            assertEquals(3L, v.getNOut());
            assertArrayEquals(new int[] {3, 2}, v.getKernelSize());
            assertArrayEquals(new int[] {2, 1}, v.getStride());
            assertArrayEquals(new int[] {1, 0}, v.getPadding());
            assertArrayEquals(new int[] {1, 2}, v.getDilation());
            assertEquals(ConvolutionMode.Same, v.getConvolutionMode());
            assertFalse(v.getHasBias());
        }
        assertEquals(InputType.convolutional(4, 8, 3), c.getLayerActivationTypes().get(0));
    }

    @Test
    void convolution1DLayer() throws Exception {
        MultiLayerConfiguration c = network(InputType.recurrent(3, 10),
                allBaseOptions(new Convolution1DLayer.Builder(3, 2, 1)).nIn(3).nOut(4).dilation(2)
                        .convolutionMode(ConvolutionMode.Causal).hasBias(false).build(),
                new GlobalPoolingLayer.Builder().build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            Convolution1DLayer v = assertInstanceOf(Convolution1DLayer.class, l);
            checkAllBaseOptions(v);
            assertEquals(3L, v.getNIn());
            assertEquals(4L, v.getNOut());
            assertEquals(3, v.getKernelSize());
            assertEquals(2, v.getStride());
            assertEquals(1, v.getPadding());
            assertEquals(2, v.getDilation());
            assertEquals(ConvolutionMode.Causal, v.getConvolutionMode());
            assertFalse(v.getHasBias());
        }
        assertEquals(InputType.recurrent(4, 5), c.getLayerActivationTypes().get(0));
    }

    @Test
    void subsamplingLayer() throws Exception {
        MultiLayerConfiguration c = network(InputType.convolutional(9, 8, 2),
                new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.PNORM).name("pool").dropOut(0.5)
                        .kernelSize(3, 2).stride(1, 2).padding(1, 1).dilation(2, 1)
                        .convolutionMode(ConvolutionMode.Strict).pnorm(3).eps(1e-6).build(),
                new GlobalPoolingLayer.Builder().build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            SubsamplingLayer s = assertInstanceOf(SubsamplingLayer.class, l);
            assertEquals("pool", s.getLayerName());
            assertEquals(0.5, s.getDropOut());
            assertEquals(PoolingType.PNORM, s.getPoolingType());
            assertArrayEquals(new int[] {3, 2}, s.getKernelSize());
            assertArrayEquals(new int[] {1, 2}, s.getStride());
            assertArrayEquals(new int[] {1, 1}, s.getPadding());
            assertArrayEquals(new int[] {2, 1}, s.getDilation());
            assertEquals(ConvolutionMode.Strict, s.getConvolutionMode());
            assertEquals(3, s.getPnorm());
            assertEquals(1e-6, s.getEps());
        }
        // height (9 + 2 - 5)/1 + 1 = 7, width (8 + 2 - 2)/2 + 1 = 5
        assertEquals(InputType.convolutional(7, 5, 2), c.getLayerActivationTypes().get(0));
    }

    @Test
    void subsampling1DLayer() throws Exception {
        MultiLayerConfiguration c = network(InputType.recurrent(2, 9),
                new Subsampling1DLayer.Builder(PoolingType.SUM, 3, 2, 1).name("pool1d").dropOut(0.5).dilation(1)
                        .convolutionMode(ConvolutionMode.Strict).pnorm(4).eps(1e-5).build(),
                new GlobalPoolingLayer.Builder().build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            Subsampling1DLayer s = assertInstanceOf(Subsampling1DLayer.class, l);
            assertEquals("pool1d", s.getLayerName());
            assertEquals(0.5, s.getDropOut());
            assertEquals(PoolingType.SUM, s.getPoolingType());
            assertEquals(3, s.getKernelSize());
            assertEquals(2, s.getStride());
            assertEquals(1, s.getPadding());
            assertEquals(1, s.getDilation());
            assertEquals(ConvolutionMode.Strict, s.getConvolutionMode());
            assertEquals(4, s.getPnorm());
            assertEquals(1e-5, s.getEps());
        }
        assertEquals(InputType.recurrent(2, 5), c.getLayerActivationTypes().get(0));
    }

    @Test
    void upsampling2D() throws Exception {
        MultiLayerConfiguration c = network(InputType.convolutional(2, 2, 1),
                new Upsampling2D.Builder().size(new int[] {2, 3}).name("up").dropOut(0.5).build(),
                new GlobalPoolingLayer.Builder().build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            Upsampling2D u = assertInstanceOf(Upsampling2D.class, l);
            assertEquals("up", u.getLayerName());
            assertEquals(0.5, u.getDropOut());
            assertArrayEquals(new int[] {2, 3}, u.getSize());
        }
        assertEquals(InputType.convolutional(4, 6, 1), c.getLayerActivationTypes().get(0));
    }

    @Test
    void zeroPaddingLayer() throws Exception {
        MultiLayerConfiguration c = network(InputType.convolutional(2, 2, 1),
                new ZeroPaddingLayer.Builder(1, 2, 3, 4).name("pad").dropOut(0.5).build(),
                new GlobalPoolingLayer.Builder().build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            ZeroPaddingLayer z = assertInstanceOf(ZeroPaddingLayer.class, l);
            assertEquals("pad", z.getLayerName());
            assertEquals(0.5, z.getDropOut());
            assertArrayEquals(new int[] {1, 2, 3, 4}, z.getPadding());
        }
        assertEquals(InputType.convolutional(5, 9, 1), c.getLayerActivationTypes().get(0));
    }

    @Test
    void globalPoolingLayer() throws Exception {
        MultiLayerConfiguration c = network(InputType.convolutional(3, 3, 2),
                new GlobalPoolingLayer.Builder(PoolingType.PNORM).pnorm(3).collapseDimensions(false).name("gp")
                        .dropOut(0.5).build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            GlobalPoolingLayer g = assertInstanceOf(GlobalPoolingLayer.class, l);
            assertEquals("gp", g.getLayerName());
            assertEquals(0.5, g.getDropOut());
            assertEquals(PoolingType.PNORM, g.getPoolingType());
            assertEquals(3, g.getPnorm());
            assertFalse(g.isCollapseDimensions());
        }
        assertEquals(InputType.convolutional(1, 1, 2), c.getLayerActivationTypes().get(0));
    }

    @Test
    void embeddingLayer() throws Exception {
        MultiLayerConfiguration c = network(null,
                allBaseOptions(new EmbeddingLayer.Builder()).nIn(10).nOut(4).hasBias(true).build(), mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            EmbeddingLayer e = assertInstanceOf(EmbeddingLayer.class, l);
            checkAllBaseOptions(e);
            assertEquals(10L, e.getNIn());
            assertEquals(4L, e.getNOut());
            assertTrue(e.getHasBias());
        }
        assertEquals(1L, c.getInputSize());
        assertEquals(4L, c.getOutputSize());
    }

    @Test
    void frozenLayer() throws Exception {
        DenseLayer inner = allBaseOptions(new DenseLayer.Builder()).nIn(4).nOut(5).hasBias(false).build();
        MultiLayerConfiguration c = network(null, new FrozenLayer.Builder().layer(inner).name("frozen").build(),
                mseLoss());
        for (Layer l : roundTrips(c, 0)) {
            FrozenLayer f = assertInstanceOf(FrozenLayer.class, l);
            assertEquals("frozen", f.getLayerName());
            assertEquals(0.0, f.getDropOut());
            DenseLayer d = assertInstanceOf(DenseLayer.class, f.getLayer());
            checkAllBaseOptions(d);
            assertEquals(4L, d.getNIn());
            assertEquals(5L, d.getNOut());
            assertFalse(d.getHasBias());
        }
        // the wrapper takes the wrapped layer's name by default
        assertEquals("layerUnderTest", new FrozenLayer(inner).getLayerName());
    }
}
