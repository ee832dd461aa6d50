package org.ferrodl.linalg.schedule;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * Exponential decay: {@code value(i) = initialValue · gamma^i}, where {@code i} is the iteration or
 * the epoch.
 *
 * <p>JSON: {@code {"type":"ExponentialSchedule","scheduleType":"EPOCH","initialValue":0.2,"gamma":0.9}}.
 */
public final class ExponentialSchedule implements ISchedule {
    private static final long serialVersionUID = 1L;

    private final ScheduleType scheduleType;
    private final double initialValue;
    private final double gamma;

    /**
     * @param scheduleType ITERATION or EPOCH
     * @param initialValue the value at position 0 (finite, >= 0)
     * @param gamma the factor per position (finite, >= 0)
     * @throws IllegalArgumentException naming the invalid parameter
     */
    @JsonCreator
    public ExponentialSchedule(@JsonProperty(value = "scheduleType", required = true) ScheduleType scheduleType,
            @JsonProperty(value = "initialValue", required = true) double initialValue,
            @JsonProperty(value = "gamma", required = true) double gamma) {
        this.scheduleType = ScheduleChecks.type("ExponentialSchedule", scheduleType);
        this.initialValue = ScheduleChecks.nonNegative("ExponentialSchedule", "initialValue", initialValue);
        this.gamma = ScheduleChecks.nonNegative("ExponentialSchedule", "gamma", gamma);
    }

    @Override
    public double valueAt(int iteration, int epoch) {
        return initialValue * Math.pow(gamma, scheduleType.position(iteration, epoch));
    }

    @Override
    public ScheduleType getScheduleType() {
        return scheduleType;
    }

    /** @return the value at position 0 */
    public double getInitialValue() {
        return initialValue;
    }

    /** @return the factor per position */
    public double getGamma() {
        return gamma;
    }

    @Override
    public ExponentialSchedule clone() {
        return new ExponentialSchedule(scheduleType, initialValue, gamma);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ExponentialSchedule)) {
            return false;
        }
        ExponentialSchedule s = (ExponentialSchedule) o;
        return scheduleType == s.scheduleType && Double.compare(initialValue, s.initialValue) == 0
                && Double.compare(gamma, s.gamma) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("ExponentialSchedule", scheduleType, initialValue, gamma);
    }

    @Override
    public String toString() {
        return "ExponentialSchedule(scheduleType=" + scheduleType + ", initialValue=" + initialValue + ", gamma="
                + gamma + ")";
    }
}
