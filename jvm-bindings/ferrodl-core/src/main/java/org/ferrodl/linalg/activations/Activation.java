package org.ferrodl.linalg.activations;

/**
 * Activation functions of a layer.
 */
public enum Activation {
    /** {@code f(x) = x}. */
    IDENTITY,
    /** {@code f(x) = max(0, x)}. */
    RELU,
    /** {@code f(x) = x} for {@code x > 0}, else {@code 0.01·x}. */
    LEAKYRELU,
    /** Hyperbolic tangent. */
    TANH,
    /** {@code f(x) = 1 / (1 + exp(-x))}. */
    SIGMOID,
    /** Softmax over the outputs of each example (needs at least two outputs). */
    SOFTMAX
}
