package org.ferrodl.nn.weights;

/**
 * Weight initialization schemes. Biases are initialized to the layer's {@code biasInit}.
 */
public enum WeightInit {
    /** Normal distribution, mean 0, standard deviation {@code sqrt(2 / (nIn + nOut))}. */
    XAVIER,
    /** He initialization: normal distribution, mean 0, standard deviation {@code sqrt(2 / nIn)}. */
    RELU
}
