package org.ferrodl.nn.conf;

import static org.ferrodl.nn.conf.ConfTestSupport.invalid;
import static org.ferrodl.nn.conf.ConfTestSupport.network;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.linalg.lossfunctions.impl.LossMCXENT;
import org.ferrodl.nn.conf.distribution.NormalDistribution;
import org.ferrodl.nn.conf.distribution.UniformDistribution;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ActivationLayer;
import org.ferrodl.nn.conf.layers.BatchNormalization;
import org.ferrodl.nn.conf.layers.Convolution1DLayer;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.DropoutLayer;
import org.ferrodl.nn.conf.layers.GlobalPoolingLayer;
import org.ferrodl.nn.conf.layers.LossLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.conf.layers.PoolingType;
import org.ferrodl.nn.conf.layers.SubsamplingLayer;
import org.ferrodl.nn.conf.layers.Upsampling2D;
import org.ferrodl.nn.conf.layers.ZeroPaddingLayer;
import org.ferrodl.nn.conf.layers.misc.FrozenLayer;
import org.junit.jupiter.api.Test;

/** Every configuration error is a DL4JInvalidConfigException naming the layer and the problem. */
class ConfigValidationTest {

    private static final InputType IMG = InputType.convolutional(8, 8, 2);

    private static LossLayer loss() {
        return new LossLayer.Builder(LossFunction.MSE).build();
    }

    private static void expect(String message, String... parts) {
        for (String p : parts) {
            assertTrue(message.contains(p), "expected \"" + p + "\" in: " + message);
        }
    }

    @Test
    void convolutionWindowSettings() {
        expect(invalid(() -> network(IMG, new ConvolutionLayer.Builder(0, 3).name("c").nOut(2).build(), loss())),
                "layer 0 (ConvolutionLayer \"c\")", "kernelSize=[0, 3] is invalid");
        expect(invalid(() -> network(IMG, new ConvolutionLayer.Builder(3, 3).stride(1, 0).nOut(2).build(), loss())),
                "stride=[1, 0]");
        expect(invalid(() -> network(IMG, new ConvolutionLayer.Builder(3, 3).dilation(0).nOut(2).build(), loss())),
                "dilation=[0, 0]");
        expect(invalid(() -> network(IMG, new ConvolutionLayer.Builder(3, 3).padding(-1, 0).nOut(2).build(), loss())),
                "padding=[-1, 0]", "at least 0");
        expect(invalid(() -> network(IMG, new ConvolutionLayer.Builder(3, 3).build(), loss())), "nOut is not set");
        expect(invalid(() -> network(IMG, new SubsamplingLayer.Builder(2, 2).stride(0, 2).build(), loss())),
                "layer 0 (SubsamplingLayer)", "stride=[0, 2]");
        expect(invalid(() -> network(IMG, new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.PNORM).pnorm(0)
                .build(), loss())), "pnorm=0");
        expect(invalid(() -> network(IMG, new GlobalPoolingLayer.Builder(PoolingType.PNORM).pnorm(0).build(),
                loss())), "layer 0 (GlobalPoolingLayer)", "pnorm=0");
        expect(invalid(() -> network(InputType.recurrent(2, 8), new Convolution1DLayer.Builder(3, 0).nOut(2).build(),
                new GlobalPoolingLayer.Builder().build(), loss())), "stride=0");
        expect(invalid(() -> network(IMG, new Upsampling2D.Builder(0).build(), loss())), "layer 0 (Upsampling2D)",
                "size=[0, 0]");
        expect(invalid(() -> network(IMG, new ZeroPaddingLayer.Builder(1, -1).build(), loss())),
                "layer 0 (ZeroPaddingLayer)", "padding=[1, 1, -1, -1]");
        // array lengths are checked where they are given
        expect(assertThrows(DL4JInvalidConfigException.class,
                () -> new ConvolutionLayer.Builder().kernelSize(1, 2, 3)).getMessage(), "kernelSize", "[1, 2, 3]");
        expect(assertThrows(DL4JInvalidConfigException.class,
                () -> new ZeroPaddingLayer.Builder(new int[] {1, 2, 3})).getMessage(), "padding", "[1, 2, 3]");
    }

    @Test
    void regularizationDropoutAndNormalizationRanges() {
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2).l1(-0.1).build(), loss())),
                "layer 0 (DenseLayer)", "l1 must be finite and >= 0, got -0.1");
        expect(invalid(() -> new NeuralNetConfiguration.Builder().weightDecay(-1).list()
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build()), "weightDecay must be finite");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2).weightDecayBias(Double.NaN)
                .build(), loss())), "weightDecayBias");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2).dropOut(1.5).build(), loss())),
                "layer 0 (DenseLayer)", "dropOut=1.5 is invalid");
        expect(invalid(() -> new NeuralNetConfiguration.Builder().dropOut(-0.5).list()
                .layer(new OutputLayer.Builder().nIn(2).nOut(2).build()).build()), "dropOut=-0.5");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2).build(),
                new DropoutLayer.Builder(Double.NaN).build(), loss())), "layer 1 (DropoutLayer)", "dropOut=NaN");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2)
                .gradientNormalization(GradientNormalization.ClipL2PerParamType).gradientNormalizationThreshold(0)
                .build(), loss())), "gradientNormalizationThreshold=0.0");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2).biasInit(Double.POSITIVE_INFINITY)
                .build(), loss())), "biasInit=Infinity");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2)
                .weightInit(new NormalDistribution(0, 0)).build(), loss())), "weightInitDistribution", "std=0.0");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2)
                .weightInit(new UniformDistribution(1, 1)).build(), loss())), "lower=1.0, upper=1.0");
    }

    @Test
    void batchNormalizationSettings() {
        expect(invalid(() -> network(IMG, new BatchNormalization.Builder().decay(1.5).build(), loss())),
                "layer 0 (BatchNormalization)", "decay=1.5");
        expect(invalid(() -> network(IMG, new BatchNormalization.Builder().eps(0).build(), loss())), "eps=0.0");
        expect(invalid(() -> network(IMG, new BatchNormalization.Builder().nIn(2).nOut(3).build(), loss())),
                "nOut=3 must equal nIn=2");
        expect(invalid(() -> network(IMG, new BatchNormalization.Builder().gamma(Double.NaN).build(), loss())),
                "gamma=NaN");
    }

    @Test
    void outputLayersAndLosses() {
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2).build(), loss(),
                new OutputLayer.Builder().nOut(2).build())), "layer 1 (LossLayer)", "must be the last layer");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2).build(),
                new ActivationLayer(Activation.RELU))), "layer 1 (ActivationLayer)",
                // the engine's wording (it says "OutputLayer" only; a LossLayer is accepted too)
                "the last layer must be an OutputLayer");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(1).build(),
                new LossLayer.Builder().activation(Activation.SOFTMAX).build())), "layer 1 (LossLayer)",
                "SOFTMAX with nOut=1");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(1).activation(Activation.SOFTMAX)
                .build(), loss())), "layer 0 (DenseLayer)", "SOFTMAX");
        expect(invalid(() -> network(null, new OutputLayer.Builder(new LossMCXENT(Nd4j.createFromArray(1.0, 2.0)))
                .nIn(2).nOut(3).build())), "layer 0 (OutputLayer)", "lossWeights has 2 values but the layer has 3");
        expect(invalid(() -> network(null, new DenseLayer.Builder().nIn(2).nOut(2).build(),
                new LossLayer.Builder(new LossMCXENT(Nd4j.createFromArray(1.0, -2.0))).build())),
                "layer 1 (LossLayer)", "lossWeights contains -2");
        expect(assertThrows(DL4JInvalidConfigException.class, () -> new LossMCXENT(Nd4j.create(new double[][] {
            {1, 2}, {3, 4}}))).getMessage(), "LossMCXENT", "vector");
        // a later lossFunction(..) drops the weights of an earlier loss object
        OutputLayer o = new OutputLayer.Builder(new LossMCXENT(Nd4j.createFromArray(1.0, 2.0)))
                .lossFunction(LossFunction.MSE).nIn(2).nOut(3).build();
        assertEquals(null, o.getLossWeights());
    }

    @Test
    void frozenLayers() {
        FrozenLayer inner = new FrozenLayer(new DenseLayer.Builder().nIn(2).nOut(2).build());
        expect(assertThrows(DL4JInvalidConfigException.class, () -> new FrozenLayer(inner)).getMessage(),
                "cannot wrap another FrozenLayer");
        expect(assertThrows(DL4JInvalidConfigException.class, () -> new FrozenLayer.Builder().build()).getMessage(),
                "not set");
        // settings of the wrapped layer are checked under the wrapper's description
        expect(invalid(() -> network(null, new FrozenLayer.Builder().name("fz")
                .layer(new DenseLayer.Builder().nIn(2).nOut(2).l2(-1).build()).build(), loss())),
                "layer 0 (FrozenLayer \"fz\")", "l2 must be finite");
    }

    @Test
    void invalidJsonIsRejectedWithTheLayerAndField() {
        MultiLayerConfiguration c = network(IMG, new ConvolutionLayer.Builder(3, 3).nOut(2).build(),
                new SubsamplingLayer.Builder(2, 2).build(), new GlobalPoolingLayer.Builder().build(), loss());
        String json = c.toJson();
        expect(invalid(() -> MultiLayerConfiguration.fromJson(json.replace("\"pnorm\" : 2,",
                "\"pnorm\" : 2, \"surprise\" : 1,"))), "surprise");
        expect(invalid(() -> MultiLayerConfiguration.fromJson(json.replace("\"kernelSize\" : [ 3, 3 ]",
                "\"kernelSize\" : [ 9, 9 ]"))), "layer 0 (ConvolutionLayer)", "larger than the height");
        expect(invalid(() -> MultiLayerConfiguration.fromJson(json.replace("\"convolutionMode\" : \"Truncate\",",
                ""))), "layer 1 (SubsamplingLayer)", "convolutionMode is missing");
        expect(invalid(() -> MultiLayerConfiguration.fromJson(json.replace("\"height\" : 8", "\"height\" : 0"))),
                "inputType", "zero dimension");
        expect(invalid(() -> MultiLayerConfiguration.fromJson(json.replace("\"type\" : \"convolutional\"",
                "\"type\" : \"convolutional3D\""))), "convolutional3D");
        expect(invalid(() -> MultiLayerConfiguration.fromJson(json.replace("\"nIn\" : 2", "\"nIn\" : 3"))),
                "layer 0 (ConvolutionLayer)", "nIn=3", "2 channels");
        // without its inputType the convolutional configuration has no usable input
        String noInput = json.substring(0, json.indexOf("  \"inputType\""))
                + json.substring(json.indexOf("  \"layers\""));
        expect(invalid(() -> MultiLayerConfiguration.fromJson(noInput)), "layer 0 (ConvolutionLayer)",
                "needs a convolutional input");
    }
}
