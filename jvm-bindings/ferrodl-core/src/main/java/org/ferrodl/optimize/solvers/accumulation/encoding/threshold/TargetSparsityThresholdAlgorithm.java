package org.ferrodl.optimize.solvers.accumulation.encoding.threshold;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;
import org.ferrodl.optimize.solvers.accumulation.encoding.ThresholdAlgorithm;

/**
 * Aims at a fixed mean fraction of entries sent per step: after every step the threshold is multiplied
 * by {@code (m / sparsityTarget)^0.25}, where {@code m} is the fraction sent averaged over about the
 * last 20 steps, and the factor is kept within {@code [decayRate, 1 / decayRate]}. (The reference
 * moves by one {@code decayRate} step after each step according to that step's fraction alone, which
 * steers the median and lets the bursts that every step down releases push the mean several times
 * above the target; see the Rust {@code TargetSparsityThreshold}.) Defaults: initial threshold 1e-4,
 * target 1e-3, decay 0.5^(1/20).
 */
public final class TargetSparsityThresholdAlgorithm implements ThresholdAlgorithm {
    private static final long serialVersionUID = 1L;
    public static final double DEFAULT_INITIAL_THRESHOLD = 1e-4;
    public static final double DEFAULT_SPARSITY_TARGET = 1e-3;
    public static final double DEFAULT_DECAY_RATE = Math.pow(0.5, 1 / 20.0);

    private final double initialThreshold;
    private final double sparsityTarget;
    private final double decayRate;

    /** All defaults: {@code (1e-4, 1e-3, 0.5^(1/20))}. */
    public TargetSparsityThresholdAlgorithm() {
        this(DEFAULT_INITIAL_THRESHOLD, DEFAULT_SPARSITY_TARGET, DEFAULT_DECAY_RATE);
    }

    /**
     * @param initialThreshold threshold of the first step, in [1e-30, 1e30]
     * @param sparsityTarget   fraction of the entries to send per step, in (0, 1]
     * @param decayRate        factor of the largest step, in (0, 1)
     * @throws IllegalArgumentException naming the first argument out of range
     */
    @JsonCreator
    public TargetSparsityThresholdAlgorithm(@JsonProperty("initialThreshold") double initialThreshold,
                                            @JsonProperty("sparsityTarget") double sparsityTarget,
                                            @JsonProperty("decayRate") double decayRate) {
        this.initialThreshold = Checks.threshold("initialThreshold", initialThreshold);
        this.sparsityTarget = Checks.fraction("sparsityTarget", sparsityTarget);
        this.decayRate = Checks.decay(decayRate);
    }

    public double getInitialThreshold() {
        return initialThreshold;
    }

    public double getSparsityTarget() {
        return sparsityTarget;
    }

    public double getDecayRate() {
        return decayRate;
    }

    @Override
    public String toNativeJson() {
        return "{\"type\":\"targetSparsity\",\"initialThreshold\":" + Checks.num(initialThreshold)
                + ",\"sparsityTarget\":" + Checks.num(sparsityTarget)
                + ",\"decayRate\":" + Checks.num(decayRate) + "}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TargetSparsityThresholdAlgorithm t && t.initialThreshold == initialThreshold
                && t.sparsityTarget == sparsityTarget && t.decayRate == decayRate;
    }

    @Override
    public int hashCode() {
        return Objects.hash(initialThreshold, sparsityTarget, decayRate);
    }

    @Override
    public String toString() {
        return "TargetSparsityThresholdAlgorithm" + toNativeJson();
    }
}
