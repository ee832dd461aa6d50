package org.ferrodl.optimize.solvers.accumulation.encoding.residual;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;
import org.ferrodl.optimize.solvers.accumulation.encoding.ResidualPostProcessor;

/**
 * Every {@code frequency} iterations (iterations 0, f, 2f, ...), clips each residual entry to
 * ±{@code thresholdMultipleClipValue} × the current threshold. The default post-processor of
 * gradient sharing is {@code new ResidualClippingPostProcessor(5.0, 5)}.
 */
public final class ResidualClippingPostProcessor implements ResidualPostProcessor {
    private static final long serialVersionUID = 1L;

    private final double thresholdMultipleClipValue;
    private final int frequency;

    /**
     * @param thresholdMultipleClipValue clip to ± this multiple of the current threshold; finite and > 0
     * @param frequency                  clip every this many iterations; at least 1
     * @throws IllegalArgumentException naming the argument out of range
     */
    @JsonCreator
    public ResidualClippingPostProcessor(@JsonProperty("thresholdMultipleClipValue") double thresholdMultipleClipValue,
                                         @JsonProperty("frequency") int frequency) {
        if (!(thresholdMultipleClipValue > 0) || Double.isInfinite(thresholdMultipleClipValue)) {
            throw new IllegalArgumentException("thresholdMultipleClipValue must be a finite number > 0, got "
                    + thresholdMultipleClipValue);
        }
        if (frequency < 1) {
            throw new IllegalArgumentException("frequency must be >= 1, got " + frequency);
        }
        this.thresholdMultipleClipValue = thresholdMultipleClipValue;
        this.frequency = frequency;
    }

    public double getThresholdMultipleClipValue() {
        return thresholdMultipleClipValue;
    }

    public int getFrequency() {
        return frequency;
    }

    @Override
    public String toNativeJson() {
        return "{\"type\":\"clipping\",\"thresholdMultipleClipValue\":" + thresholdMultipleClipValue
                + ",\"frequency\":" + frequency + "}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ResidualClippingPostProcessor r
                && r.thresholdMultipleClipValue == thresholdMultipleClipValue && r.frequency == frequency;
    }

    @Override
    public int hashCode() {
        return Objects.hash(thresholdMultipleClipValue, frequency);
    }

    @Override
    public String toString() {
        return "ResidualClippingPostProcessor" + toNativeJson();
    }
}
