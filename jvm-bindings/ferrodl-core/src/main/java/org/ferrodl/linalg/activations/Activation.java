package org.ferrodl.linalg.activations;

/**
 * Activation functions of a layer, with the reference's names (the JSON value is the constant's
 * name, docs/ARCHITECTURE.md §2.2).
 */
public enum Activation {
    /** {@code f(x) = x}. */
    IDENTITY,
    /** {@code f(x) = max(0, x)}. */
    RELU,
    /** {@code f(x) = min(max(0, x), 6)}. */
    RELU6,
    /** {@code f(x) = x} for {@code x > 0}, else {@code 0.01·x}. */
    LEAKYRELU,
    /** {@code f(x) = x} for {@code x > 0}, else {@code exp(x) - 1} (alpha 1). */
    ELU,
    /** Scaled ELU of self-normalizing networks. */
    SELU,
    /** Gaussian error linear unit. */
    GELU,
    /** {@code f(x) = x · sigmoid(x)}. */
    SWISH,
    /** Hyperbolic tangent. */
    TANH,
    /** {@code f(x) = min(max(x, -1), 1)}. */
    HARDTANH,
    /** {@code f(x) = 1 / (1 + exp(-x))}. */
    SIGMOID,
    /** {@code f(x) = min(max(0.2·x + 0.5, 0), 1)}. */
    HARDSIGMOID,
    /** Softmax over the outputs of each example (needs at least two outputs). */
    SOFTMAX,
    /** {@code f(x) = ln(1 + exp(x))}. */
    SOFTPLUS,
    /** {@code f(x) = x / (1 + |x|)}. */
    SOFTSIGN,
    /** {@code f(x) = x³}. */
    CUBE,
    /** Rational approximation of tanh. */
    RATIONALTANH
}
