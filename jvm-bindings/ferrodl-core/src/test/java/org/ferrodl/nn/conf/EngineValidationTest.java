package org.ferrodl.nn.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.linalg.activations.Activation;
import org.ferrodl.linalg.lossfunctions.LossFunctions.LossFunction;
import org.ferrodl.nn.conf.inputs.InputType;
import org.ferrodl.nn.conf.layers.ConvolutionLayer;
import org.ferrodl.nn.conf.layers.DenseLayer;
import org.ferrodl.nn.conf.layers.OutputLayer;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.nn.weights.WeightInit;
import org.junit.jupiter.api.Test;

/**
 * build() and the engine agree: a configuration build() accepts can be initialized, and one the
 * engine refuses is refused at build(), with the layer named (the IDENTITY-init case used to pass
 * Java's build() and fail at init()).
 */
class EngineValidationTest {

    private static MultiLayerConfiguration conv(long nOut, int kernel) {
        return new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new ConvolutionLayer.Builder(kernel, kernel).nOut(nOut).weightInit(WeightInit.IDENTITY)
                        .activation(Activation.IDENTITY).build())
                .layer(new OutputLayer.Builder(LossFunction.MSE).nOut(2).activation(Activation.IDENTITY).build())
                .setInputType(InputType.convolutional(5, 5, 2))
                .build();
    }

    @Test
    void identityInitIsJudgedTheSameAtBuildAndAtInit() {
        // Square in channels with an odd kernel: accepted by both, and the layer starts as the identity.
        MultiLayerConfiguration ok = conv(2, 3);
        try (MultiLayerNetwork net = new MultiLayerNetwork(ok)) {
            net.init();
            assertEquals(1.0, net.getParam("0_W").getDouble(0, 0, 1, 1));
            assertEquals(0.0, net.getParam("0_W").getDouble(0, 1, 1, 1));
        }
        // Not square in channels, or an even kernel: refused at build(), not first at init().
        DL4JInvalidConfigException notSquare = assertThrows(DL4JInvalidConfigException.class, () -> conv(3, 3));
        assertTrue(notSquare.getMessage().startsWith("layer 0 (ConvolutionLayer)")
                && notSquare.getMessage().contains("IDENTITY") && notSquare.getMessage().contains("nOut=3"),
                notSquare.getMessage());
        DL4JInvalidConfigException even = assertThrows(DL4JInvalidConfigException.class, () -> conv(2, 2));
        assertTrue(even.getMessage().startsWith("layer 0 (ConvolutionLayer)") && even.getMessage().contains("odd"),
                even.getMessage());
        // A dense IDENTITY needs a square matrix: refused at build() (it used to pass Java's build()
        // and fail only when the engine created the network).
        DL4JInvalidConfigException dense = assertThrows(DL4JInvalidConfigException.class,
                () -> new NeuralNetConfiguration.Builder().list()
                        .layer(new DenseLayer.Builder().nIn(3).nOut(4).weightInit(WeightInit.IDENTITY).build())
                        .layer(new OutputLayer.Builder().nOut(2).build()).build());
        assertTrue(dense.getMessage().startsWith("layer 0 (DenseLayer)") && dense.getMessage().contains("IDENTITY")
                && dense.getMessage().contains("nIn=3"), dense.getMessage());
    }

    @Test
    void identityInitOfDenseLayersIsRefusedAtBuild() {
        // It used to pass Java's build() and fail only when the engine created the network.
        DL4JInvalidConfigException dense = assertThrows(DL4JInvalidConfigException.class,
                () -> new NeuralNetConfiguration.Builder().list()
                        .layer(new DenseLayer.Builder().nIn(3).nOut(4).weightInit(WeightInit.IDENTITY).build())
                        .layer(new OutputLayer.Builder().nOut(2).build()).build());
        assertTrue(dense.getMessage().startsWith("layer 0 (DenseLayer)") && dense.getMessage().contains("IDENTITY")
                && dense.getMessage().contains("nIn=3"), dense.getMessage());
        // A square one builds and initializes to the identity.
        MultiLayerConfiguration ok = new NeuralNetConfiguration.Builder().seed(1).list()
                .layer(new DenseLayer.Builder().nIn(3).nOut(3).weightInit(WeightInit.IDENTITY).build())
                .layer(new OutputLayer.Builder().nOut(2).build()).build();
        try (MultiLayerNetwork net = new MultiLayerNetwork(ok)) {
            net.init();
            assertEquals(1.0, net.getParam("0_W").getDouble(1, 1));
            assertEquals(0.0, net.getParam("0_W").getDouble(1, 2));
        }
    }
}
