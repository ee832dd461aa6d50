package org.ferrodl.nn.conf;

import static org.ferrodl.nn.conf.ConfTestSupport.invalid;
import static org.ferrodl.nn.conf.ConfTestSupport.network;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.Convolution1DLayer;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.EmbeddingLayer;
import org.ferrodl.nn.conf.layers.FeedForwardLayer;
import org.ferrodl.nn.conf.layers.GlobalPoolingLayer;
import org.ferrodl.nn.conf.layers.Layer;
import org.ferrodl.nn.conf.layers.LossLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.PoolingType;
import org.ferrodl.nn.conf.layers.Subsampling1DLayer;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.layers.Upsampling2D;
import org.ferrodl.nn.conf.layers.ZeroPaddingLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.junit.jupiter.api.Test;

/** setInputType(..): output sizes per convolution mode and the nIn inference of every layer type. */
class InputTypeInferenceTest {

    private static LossLayer loss() {
        return new LossLayer.Builder(LossFunction.MSE).build();
    }

    private static long nIn(MultiLayerConfiguration c, int i) {
        Layer l = c.getLayers().get(i);
        return ((FeedForwardLayer) (l instanceof FrozenLayer ? ((FrozenLayer) l).getLayer() : l)).getNIn();
    }

    private static MultiLayerConfiguration lenet(InputType in) {
        return network(in,
                new ConvolutionLayer.Builder(5, 5).stride(1, 1).nOut(20).activation(Activation.IDENTITY).build(),
                new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2).build(),
                new ConvolutionLayer.Builder(5, 5).stride(1, 1).nOut(50).activation(Activation.IDENTITY).build(),
                new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2).build(),
                new DenseLayer.Builder().activation(Activation.RELU).nOut(500).build(),
                new OutputLayer.Builder(LossFunction.NEGATIVELOGLIKELIHOOD).nOut(10).activation(Activation.SOFTMAX)
                        .build());
    }

    @Test
    void lenetInfersEveryNIn() {
        for (InputType in : new InputType[] {InputType.convolutionalFlat(28, 28, 1),
            InputType.convolutional(28, 28, 1)}) {
            MultiLayerConfiguration c = lenet(in);
            assertEquals(1L, nIn(c, 0));
            assertEquals(20L, nIn(c, 2));
            assertEquals(800L, nIn(c, 4), "dense after conv: C·H·W = 50·4·4");
            assertEquals(500L, nIn(c, 5));
            assertEquals(List.of(in, InputType.convolutional(24, 24, 20), InputType.convolutional(12, 12, 20),
                    InputType.convolutional(8, 8, 50), InputType.convolutional(4, 4, 50), InputType.feedForward(500)),
                    c.getLayerInputTypes());
            assertEquals(InputType.feedForward(10), c.getLayerActivationTypes().get(5));
            assertEquals(784L, c.getInputSize());
            assertEquals(10L, c.getOutputSize());
            assertEquals(in, c.getInputType());
            assertEquals(in, MultiLayerConfiguration.fromJson(c.toJson()).getInputType());
        }
        // the same layers sized for another input, without changing the configuration
        MultiLayerConfiguration c = lenet(InputType.convolutional(28, 28, 1));
        String m = invalid(() -> c.getLayerActivationTypes(InputType.convolutional(32, 32, 1)));
        assertTrue(m.contains("layer 4 (DenseLayer)") && m.contains("nIn=800") && m.contains("1250 values"), m);
        assertEquals(800L, nIn(c, 4));
    }

    @Test
    void outputSizesFollowTheConvolutionMode() {
        // Truncate: floor((in + 2p - d(k-1) - 1)/s) + 1
        assertEquals(InputType.convolutional(3, 3, 1), network(InputType.convolutional(7, 7, 1),
                new SubsamplingLayer.Builder(2, 2).build(), loss()).getLayerActivationTypes().get(0));
        // padding 1, kernel 3, stride 2 on 6: (6 + 2 - 3)/2 + 1 = 3; dilation 2 on 9 with kernel 3: 5
        assertEquals(InputType.convolutional(3, 5, 4), network(InputType.convolutional(6, 9, 2),
                new ConvolutionLayer.Builder(3, 3).stride(2, 1).padding(1, 0).dilation(1, 2).nOut(4).build(),
                loss()).getLayerActivationTypes().get(0));
        // Same: ceil(in / s), padding ignored
        assertEquals(InputType.convolutional(4, 7, 3), network(InputType.convolutional(7, 7, 1),
                new ConvolutionLayer.Builder(3, 3).stride(2, 1).padding(5, 5).nOut(3)
                        .convolutionMode(ConvolutionMode.Same).build(), loss()).getLayerActivationTypes().get(0));
        // Strict: exact division only
        assertEquals(InputType.convolutional(4, 4, 1), network(InputType.convolutional(8, 8, 1),
                new SubsamplingLayer.Builder(2, 2).convolutionMode(ConvolutionMode.Strict).build(), loss())
                .getLayerActivationTypes().get(0));
        String m = invalid(() -> network(InputType.convolutional(7, 8, 1),
                new ConvolutionLayer.Builder(1, 1).nOut(1).build(),
                new SubsamplingLayer.Builder(2, 2).name("pool").convolutionMode(ConvolutionMode.Strict).build(),
                loss()));
        assertTrue(m.contains("layer 1 (SubsamplingLayer \"pool\")") && m.contains("Strict")
                && m.contains("not divisible by stride 2") && m.contains("height 7"), m);
        // the global mode applies to layers without their own
        String g = invalid(() -> new NeuralNetConfiguration.Builder().convolutionMode(ConvolutionMode.Strict).list()
                .layer(new SubsamplingLayer.Builder(2, 2).build()).layer(loss())
                .setInputType(InputType.convolutional(5, 5, 1)).build());
        assertTrue(g.contains("Strict"), g);
        // upsampling multiplies, zero padding adds, global pooling keeps the channels
        MultiLayerConfiguration c = network(InputType.convolutional(3, 4, 2), new Upsampling2D.Builder(2).build(),
                new ZeroPaddingLayer.Builder(1, 2, 3, 4).build(), new GlobalPoolingLayer.Builder().build(), loss());
        assertEquals(List.of(InputType.convolutional(6, 8, 2), InputType.convolutional(9, 15, 2),
                InputType.feedForward(2), InputType.feedForward(2)), c.getLayerActivationTypes());
    }

    @Test
    void kernelLargerThanThePaddedInputIsRejected() {
        String m = invalid(() -> network(InputType.convolutional(3, 3, 1),
                new ConvolutionLayer.Builder(5, 5).nOut(2).build(), loss()));
        assertTrue(m.contains("layer 0 (ConvolutionLayer)") && m.contains("kernel 5") && m.contains("larger than the "
                + "height of the input (3)"), m);
        // padding makes room
        network(InputType.convolutional(3, 3, 1), new ConvolutionLayer.Builder(5, 5).padding(1, 1).nOut(2).build(),
                loss());
        // dilation widens the kernel: 3 with dilation 2 is 5
        String d = invalid(() -> network(InputType.recurrent(2, 4),
                new Convolution1DLayer.Builder(3).dilation(2).nOut(2).build(), new GlobalPoolingLayer.Builder().build(),
                loss()));
        assertTrue(d.contains("effective 5") && d.contains("length of the input (4)"), d);
    }

    @Test
    void recurrentLayersInferChannels() {
        MultiLayerConfiguration c = network(InputType.recurrent(5, 20),
                new Convolution1DLayer.Builder(3).nOut(8).build(),
                new Subsampling1DLayer.Builder(PoolingType.AVG, 2, 2).build(),
                new Convolution1DLayer.Builder(3).nOut(4).convolutionMode(ConvolutionMode.Causal).build(),
                new BatchNormalization.Builder().build(),
                new GlobalPoolingLayer.Builder(PoolingType.SUM).build(),
                new DenseLayer.Builder().nOut(3).build(), loss());
        assertEquals(5L, nIn(c, 0));
        assertEquals(8L, nIn(c, 2));
        assertEquals(4L, nIn(c, 3));
        assertEquals(4L, nIn(c, 5));
        // 20 -> k3 -> 18 -> k2 s2 -> 9 -> causal -> 9
        assertEquals(List.of(InputType.recurrent(8, 18), InputType.recurrent(8, 9), InputType.recurrent(4, 9),
                InputType.recurrent(4, 9), InputType.feedForward(4), InputType.feedForward(3),
                InputType.feedForward(3)), c.getLayerActivationTypes());
        assertEquals(100L, c.getInputSize());
    }

    @Test
    void batchNormalizationTakesFeaturesOrChannels() {
        MultiLayerConfiguration ff = network(null, new DenseLayer.Builder().nIn(4).nOut(6).build(),
                new BatchNormalization.Builder().build(), new OutputLayer.Builder().nOut(2).build());
        assertEquals(6L, nIn(ff, 1));
        assertEquals(6L, ((BatchNormalization) ff.getLayers().get(1)).getNOut());
        assertEquals(6L, nIn(ff, 2));
        MultiLayerConfiguration flat = network(InputType.convolutionalFlat(4, 4, 3),
                new BatchNormalization.Builder().build(), new ConvolutionLayer.Builder(2, 2).nOut(2).build(), loss());
        assertEquals(3L, nIn(flat, 0));
        assertEquals(3L, nIn(flat, 1));
        String m = invalid(() -> network(InputType.convolutional(4, 4, 3), new BatchNormalization.Builder().nIn(4)
                .nOut(4).build(), loss()));
        assertTrue(m.contains("layer 0 (BatchNormalization)") && m.contains("nIn=4") && m.contains("3 channels"), m);
    }

    @Test
    void aContradictingUserNInIsRejectedWithBothValues() {
        String dense = invalid(() -> network(InputType.convolutional(8, 8, 1),
                new ConvolutionLayer.Builder(3, 3).nOut(2).build(),
                new DenseLayer.Builder().name("fc").nIn(100).nOut(3).build(), loss()));
        assertTrue(dense.contains("layer 1 (DenseLayer \"fc\")") && dense.contains("nIn=100")
                && dense.contains("72 values") && dense.contains("the output of layer 0 (ConvolutionLayer)"), dense);
        String conv = invalid(() -> network(InputType.convolutional(8, 8, 1),
                new ConvolutionLayer.Builder(3, 3).nIn(3).nOut(2).build(), loss()));
        assertTrue(conv.contains("layer 0 (ConvolutionLayer)") && conv.contains("nIn=3")
                && conv.contains("the 1 channels") && conv.contains("the network input"), conv);
        String ff = invalid(() -> network(InputType.feedForward(10), new DenseLayer.Builder().nIn(9).nOut(3).build(),
                loss()));
        assertTrue(ff.contains("nIn=9") && ff.contains("feed-forward [10]"), ff);
    }

    @Test
    void layersRejectInputsTheyCannotUse() {
        String noType = invalid(() -> network(null, new ConvolutionLayer.Builder(3, 3).nIn(1).nOut(2).build(),
                loss()));
        assertTrue(noType.contains("layer 0 (ConvolutionLayer)") && noType.contains("needs a convolutional input")
                && noType.contains("setInputType"), noType);
        String pool = invalid(() -> network(null, new SubsamplingLayer.Builder().build(), loss()));
        assertTrue(pool.contains("layer 0 (SubsamplingLayer)") && pool.contains("setInputType"), pool);
        // A dense layer after a recurrent input applies at every time step (the reference infers
        // RnnToFeedForward/FeedForwardToRnn around it): nIn is the per-step size, the output stays a series.
        MultiLayerConfiguration perStep = network(InputType.recurrent(3, 5), new DenseLayer.Builder().nOut(2).build(),
                loss());
        assertEquals(3L, ((DenseLayer) perStep.getLayers().get(0)).getNIn());
        assertEquals(InputType.recurrent(2, 5), perStep.getLayerActivationTypes().get(0));
        String rnnDenseNIn = invalid(() -> network(InputType.recurrent(3, 5),
                new DenseLayer.Builder().nIn(15).nOut(2).build(), loss()));
        assertTrue(rnnDenseNIn.contains("layer 0 (DenseLayer)") && rnnDenseNIn.contains("nIn=15")
                && rnnDenseNIn.contains("3 channels"), rnnDenseNIn);
        String rnnOut = invalid(() -> network(InputType.recurrent(3, 5),
                new OutputLayer.Builder().nOut(2).build()));
        assertTrue(rnnOut.contains("RnnOutputLayer") && rnnOut.contains("GlobalPoolingLayer"), rnnOut);
        String gp = invalid(() -> network(InputType.feedForward(3), new GlobalPoolingLayer.Builder().build(), loss()));
        assertTrue(gp.contains("layer 0 (GlobalPoolingLayer)") && gp.contains("convolutional or recurrent"), gp);
        String conv1d = invalid(() -> network(InputType.convolutional(4, 4, 1),
                new Convolution1DLayer.Builder(2).nOut(2).build(), loss()));
        assertTrue(conv1d.contains("needs a recurrent"), conv1d);
        String causal = invalid(() -> network(InputType.convolutional(4, 4, 1),
                new ConvolutionLayer.Builder(2, 2).nOut(2).convolutionMode(ConvolutionMode.Causal).build(), loss()));
        assertTrue(causal.contains("Causal is only for 1D layers"), causal);
        // a recurrent input of any length (timeSeriesLength 0 in JSON): pooling over time gives [3]
        assertEquals(InputType.feedForward(3), network(InputType.recurrent(3), new GlobalPoolingLayer.Builder().build(),
                loss()).getLayerActivationTypes().get(0));
        String emb = invalid(() -> network(null, new DenseLayer.Builder().nIn(3).nOut(2).build(),
                new EmbeddingLayer.Builder().nIn(10).nOut(2).build(), loss()));
        assertTrue(emb.contains("layer 1 (EmbeddingLayer)") && emb.contains("one column of indices"), emb);
        String embNIn = invalid(() -> network(null, new EmbeddingLayer.Builder().nOut(2).build(), loss()));
        assertTrue(embNIn.contains("nIn is not set") && embNIn.contains("vocabulary size"), embNIn);
    }

    @Test
    void frozenLayersInferThroughTheWrapper() {
        MultiLayerConfiguration c = network(InputType.convolutional(6, 6, 2),
                new FrozenLayer(new ConvolutionLayer.Builder(3, 3).nOut(4).build()),
                new FrozenLayer(new DenseLayer.Builder().nOut(3).build()), loss());
        assertEquals(2L, nIn(c, 0));
        assertEquals(64L, nIn(c, 1));
        String m = invalid(() -> network(InputType.convolutional(6, 6, 2),
                new FrozenLayer.Builder().name("f").layer(new DenseLayer.Builder().nIn(5).nOut(3).build()).build(),
                loss()));
        assertTrue(m.contains("layer 0 (FrozenLayer \"f\")") && m.contains("nIn=5"), m);
        // a frozen output layer still ends the network
        network(null, new DenseLayer.Builder().nIn(3).nOut(3).build(),
                new FrozenLayer(new OutputLayer.Builder().nOut(2).build()));
    }

    @Test
    void setNInIsThePublicInferenceHook() {
        DenseLayer d = new DenseLayer.Builder().nOut(3).build();
        d.setNIn(InputType.convolutional(2, 3, 4), false);
        assertEquals(24L, d.getNIn());
        d.setNIn(InputType.feedForward(7), false);
        assertEquals(24L, d.getNIn(), "a set value is kept without override");
        d.setNIn(InputType.feedForward(7), true);
        assertEquals(7L, d.getNIn());
        ConvolutionLayer conv = new ConvolutionLayer.Builder(2, 2).nOut(5).build();
        conv.setNIn(InputType.convolutionalFlat(4, 4, 3), false);
        assertEquals(3L, conv.getNIn());
        assertEquals(InputType.convolutional(3, 3, 5), conv.getOutputType(0, InputType.convolutional(4, 4, 3)));
    }
}
