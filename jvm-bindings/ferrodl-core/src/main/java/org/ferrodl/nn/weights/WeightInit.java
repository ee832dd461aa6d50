package org.ferrodl.nn.weights;

/**
 * Weight initialization schemes, with the reference's names. Biases are initialized to the
 * layer's {@code biasInit}. Fan-in/fan-out: dense layers {@code nIn}/{@code nOut}; convolutions
 * {@code nIn·kH·kW} / {@code nOut·kH·kW/(sH·sW)} (docs/ARCHITECTURE.md §2.2).
 */
public enum WeightInit {
    /** Normal distribution, mean 0, standard deviation {@code sqrt(2 / (fanIn + fanOut))}. */
    XAVIER,
    /** Uniform in {@code ±sqrt(6 / (fanIn + fanOut))}. */
    XAVIER_UNIFORM,
    /** Normal distribution, standard deviation {@code sqrt(1 / fanIn)}. */
    XAVIER_FAN_IN,
    /** He initialization: normal distribution, mean 0, standard deviation {@code sqrt(2 / fanIn)}. */
    RELU,
    /** Uniform in {@code ±sqrt(6 / fanIn)}. */
    RELU_UNIFORM,
    /** Truncated normal with standard deviation {@code sqrt(1 / fanIn)}. */
    LECUN_NORMAL,
    /** Uniform in {@code ±sqrt(3 / fanIn)}. */
    LECUN_UNIFORM,
    /** Normal distribution with standard deviation {@code 1 / sqrt(fanIn)}. */
    NORMAL,
    /** Uniform in {@code ±1 / sqrt(fanIn)}. */
    UNIFORM,
    /** All weights 0. */
    ZERO,
    /** All weights 1. */
    ONES,
    /** The identity matrix (square layers only). */
    IDENTITY,
    /**
     * Drawn from a distribution: use {@code weightInit(Distribution)} with a
     * {@link org.ferrodl.nn.conf.distribution.NormalDistribution},
     * {@link org.ferrodl.nn.conf.distribution.UniformDistribution} or
     * {@link org.ferrodl.nn.conf.distribution.TruncatedNormalDistribution}.
     */
    DISTRIBUTION
}
