package org.ferrodl.optimize.solvers.accumulation.encoding.threshold;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;
import org.ferrodl.optimize.solvers.accumulation.encoding.ThresholdAlgorithm;

/** The same threshold at every step (what the deprecated {@code updatesThreshold} option sets). */
public final class FixedThresholdAlgorithm implements ThresholdAlgorithm {
    private static final long serialVersionUID = 1L;

    private final double threshold;

    /**
     * @param threshold the threshold of every step, in [1e-30, 1e30]
     * @throws IllegalArgumentException when it is out of range
     */
    @JsonCreator
    public FixedThresholdAlgorithm(@JsonProperty("threshold") double threshold) {
        this.threshold = Checks.threshold("threshold", threshold);
    }

    public double getThreshold() {
        return threshold;
    }

    @Override
    public String toNativeJson() {
        return "{\"type\":\"fixed\",\"threshold\":" + Checks.num(threshold) + "}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FixedThresholdAlgorithm f && f.threshold == threshold;
    }

    @Override
    public int hashCode() {
        return Objects.hash(threshold);
    }

    @Override
    public String toString() {
        return "FixedThresholdAlgorithm" + toNativeJson();
    }
}
