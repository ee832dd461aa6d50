package org.ferrodl.linalg.schedule;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * Sigmoid decay: {@code value(i) = initialValue / (1 + exp(-gamma·(i - stepSize)))}, where
 * {@code i} is the iteration or the epoch (use a negative {@code gamma} for a decreasing value).
 *
 * <p>JSON: {@code {"type":"SigmoidSchedule","scheduleType":"EPOCH","initialValue":0.1,"gamma":0.5,
 * "stepSize":10}}.
 */
public final class SigmoidSchedule implements ISchedule {
    private static final long serialVersionUID = 1L;

    private final ScheduleType scheduleType;
    private final double initialValue;
    private final double gamma;
    private final int stepSize;

    /**
     * @param scheduleType ITERATION or EPOCH
     * @param initialValue the scale of the sigmoid (finite, >= 0)
     * @param gamma the steepness (finite)
     * @param stepSize the position of the midpoint, where the value is {@code initialValue/2}
     * @throws IllegalArgumentException naming the invalid parameter
     */
    @JsonCreator
    public SigmoidSchedule(@JsonProperty(value = "scheduleType", required = true) ScheduleType scheduleType,
            @JsonProperty(value = "initialValue", required = true) double initialValue,
            @JsonProperty(value = "gamma", required = true) double gamma,
            @JsonProperty(value = "stepSize", required = true) int stepSize) {
        this.scheduleType = ScheduleChecks.type("SigmoidSchedule", scheduleType);
        this.initialValue = ScheduleChecks.nonNegative("SigmoidSchedule", "initialValue", initialValue);
        this.gamma = ScheduleChecks.finite("SigmoidSchedule", "gamma", gamma);
        this.stepSize = stepSize;
    }

    @Override
    public double valueAt(int iteration, int epoch) {
        int i = scheduleType.position(iteration, epoch);
        return initialValue / (1.0 + Math.exp(-gamma * ((double) i - stepSize)));
    }

    @Override
    public ScheduleType getScheduleType() {
        return scheduleType;
    }

    /** @return the scale */
    public double getInitialValue() {
        return initialValue;
    }

    /** @return the steepness */
    public double getGamma() {
        return gamma;
    }

    /** @return the midpoint position */
    public int getStepSize() {
        return stepSize;
    }

    @Override
    public SigmoidSchedule clone() {
        return new SigmoidSchedule(scheduleType, initialValue, gamma, stepSize);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SigmoidSchedule)) {
            return false;
        }
        SigmoidSchedule s = (SigmoidSchedule) o;
        return scheduleType == s.scheduleType && Double.compare(initialValue, s.initialValue) == 0
                && Double.compare(gamma, s.gamma) == 0 && stepSize == s.stepSize;
    }

    @Override
    public int hashCode() {
        return Objects.hash("SigmoidSchedule", scheduleType, initialValue, gamma, stepSize);
    }

    @Override
    public String toString() {
        return "SigmoidSchedule(scheduleType=" + scheduleType + ", initialValue=" + initialValue + ", gamma=" + gamma
                + ", stepSize=" + stepSize + ")";
    }
}
