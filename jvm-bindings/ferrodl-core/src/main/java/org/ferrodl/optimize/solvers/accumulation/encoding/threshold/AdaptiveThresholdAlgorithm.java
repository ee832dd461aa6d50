package org.ferrodl.optimize.solvers.accumulation.encoding.threshold;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;
import org.ferrodl.optimize.solvers.accumulation.encoding.ThresholdAlgorithm;

/**
 * The default threshold algorithm: starts at {@code initialThreshold} and, after every step, lowers
 * the threshold (multiplies by {@code decayRate}) when fewer than {@code minTargetSparsity} of the
 * entries were sent, raises it (divides) when more than {@code maxTargetSparsity} were, and keeps it
 * otherwise. Defaults: 1e-4, 1e-4, 1e-2, 0.5^(1/20) (halving or doubling takes 20 steps).
 */
public final class AdaptiveThresholdAlgorithm implements ThresholdAlgorithm {
    private static final long serialVersionUID = 1L;
    public static final double DEFAULT_INITIAL_THRESHOLD = 1e-4;
    public static final double DEFAULT_MIN_SPARSITY_TARGET = 1e-4;
    public static final double DEFAULT_MAX_SPARSITY_TARGET = 1e-2;
    public static final double DEFAULT_DECAY_RATE = Math.pow(0.5, 1 / 20.0);

    private final double initialThreshold;
    private final double minTargetSparsity;
    private final double maxTargetSparsity;
    private final double decayRate;

    /** All defaults: {@code (1e-4, 1e-4, 1e-2, 0.5^(1/20))}. */
    public AdaptiveThresholdAlgorithm() {
        this(DEFAULT_INITIAL_THRESHOLD);
    }

    /** @param initialThreshold threshold of the first step; the other settings take their defaults */
    public AdaptiveThresholdAlgorithm(double initialThreshold) {
        this(initialThreshold, DEFAULT_MIN_SPARSITY_TARGET, DEFAULT_MAX_SPARSITY_TARGET, DEFAULT_DECAY_RATE);
    }

    /**
     * @param initialThreshold  threshold of the first step, in [1e-30, 1e30]
     * @param minTargetSparsity lower the threshold when a smaller fraction of the entries was sent; in (0, 1]
     * @param maxTargetSparsity raise the threshold when a larger fraction was sent; in (0, 1], at least
     *                          {@code minTargetSparsity}
     * @param decayRate         factor of one step, in (0, 1)
     * @throws IllegalArgumentException naming the first argument out of range
     */
    @JsonCreator
    public AdaptiveThresholdAlgorithm(@JsonProperty("initialThreshold") double initialThreshold,
                                      @JsonProperty("minTargetSparsity") double minTargetSparsity,
                                      @JsonProperty("maxTargetSparsity") double maxTargetSparsity,
                                      @JsonProperty("decayRate") double decayRate) {
        this.initialThreshold = Checks.threshold("initialThreshold", initialThreshold);
        this.minTargetSparsity = Checks.fraction("minTargetSparsity", minTargetSparsity);
        this.maxTargetSparsity = Checks.fraction("maxTargetSparsity", maxTargetSparsity);
        if (minTargetSparsity > maxTargetSparsity) {
            throw new IllegalArgumentException("minTargetSparsity (" + minTargetSparsity
                    + ") must not exceed maxTargetSparsity (" + maxTargetSparsity + ")");
        }
        this.decayRate = Checks.decay(decayRate);
    }

    public double getInitialThreshold() {
        return initialThreshold;
    }

    public double getMinTargetSparsity() {
        return minTargetSparsity;
    }

    public double getMaxTargetSparsity() {
        return maxTargetSparsity;
    }

    public double getDecayRate() {
        return decayRate;
    }

    @Override
    public String toNativeJson() {
        return "{\"type\":\"adaptive\",\"initialThreshold\":" + Checks.num(initialThreshold)
                + ",\"minTargetSparsity\":" + Checks.num(minTargetSparsity)
                + ",\"maxTargetSparsity\":" + Checks.num(maxTargetSparsity)
                + ",\"decayRate\":" + Checks.num(decayRate) + "}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AdaptiveThresholdAlgorithm a && a.initialThreshold == initialThreshold
                && a.minTargetSparsity == minTargetSparsity && a.maxTargetSparsity == maxTargetSparsity
                && a.decayRate == decayRate;
    }

    @Override
    public int hashCode() {
        return Objects.hash(initialThreshold, minTargetSparsity, maxTargetSparsity, decayRate);
    }

    @Override
    public String toString() {
        return "AdaptiveThresholdAlgorithm" + toNativeJson();
    }
}
