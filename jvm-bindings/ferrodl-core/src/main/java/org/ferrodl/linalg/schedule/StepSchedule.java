package org.ferrodl.linalg.schedule;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * Step decay: {@code value(i) = initialValue · decayRate^floor(i / step)}, where {@code i} is the
 * iteration or the epoch.
 *
 * <p>JSON: {@code {"type":"StepSchedule","scheduleType":"ITERATION","initialValue":0.1,
 * "decayRate":0.5,"step":100.0}}.
 */
public final class StepSchedule implements ISchedule {
    private static final long serialVersionUID = 1L;

    private final ScheduleType scheduleType;
    private final double initialValue;
    private final double decayRate;
    private final double step;

    /**
     * @param scheduleType ITERATION or EPOCH
     * @param initialValue the value at position 0 (finite, >= 0)
     * @param decayRate the factor applied every {@code step} positions (finite, >= 0)
     * @param step the length of one step in iterations or epochs (finite, > 0; may be fractional)
     * @throws IllegalArgumentException naming the invalid parameter
     */
    @JsonCreator
    public StepSchedule(@JsonProperty(value = "scheduleType", required = true) ScheduleType scheduleType,
            @JsonProperty(value = "initialValue", required = true) double initialValue,
            @JsonProperty(value = "decayRate", required = true) double decayRate,
            @JsonProperty(value = "step", required = true) double step) {
        this.scheduleType = ScheduleChecks.type("StepSchedule", scheduleType);
        this.initialValue = ScheduleChecks.nonNegative("StepSchedule", "initialValue", initialValue);
        this.decayRate = ScheduleChecks.nonNegative("StepSchedule", "decayRate", decayRate);
        this.step = ScheduleChecks.positive("StepSchedule", "step", step);
    }

    @Override
    public double valueAt(int iteration, int epoch) {
        int i = scheduleType.position(iteration, epoch);
        return initialValue * Math.pow(decayRate, Math.floor(i / step));
    }

    @Override
    public ScheduleType getScheduleType() {
        return scheduleType;
    }

    /** @return the value at position 0 */
    public double getInitialValue() {
        return initialValue;
    }

    /** @return the decay factor per step */
    public double getDecayRate() {
        return decayRate;
    }

    /** @return the step length */
    public double getStep() {
        return step;
    }

    @Override
    public StepSchedule clone() {
        return new StepSchedule(scheduleType, initialValue, decayRate, step);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof StepSchedule)) {
            return false;
        }
        StepSchedule s = (StepSchedule) o;
        return scheduleType == s.scheduleType && Double.compare(initialValue, s.initialValue) == 0
                && Double.compare(decayRate, s.decayRate) == 0 && Double.compare(step, s.step) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("StepSchedule", scheduleType, initialValue, decayRate, step);
    }

    @Override
    public String toString() {
        return "StepSchedule(scheduleType=" + scheduleType + ", initialValue=" + initialValue + ", decayRate="
                + decayRate + ", step=" + step + ")";
    }
}
