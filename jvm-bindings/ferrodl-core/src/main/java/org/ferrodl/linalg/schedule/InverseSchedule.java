package org.ferrodl.linalg.schedule;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * Inverse decay: {@code value(i) = initialValue / (1 + gamma·i)^power}, where {@code i} is the
 * iteration or the epoch.
 *
 * <p>JSON: {@code {"type":"InverseSchedule","scheduleType":"ITERATION","initialValue":0.1,"gamma":0.5,
 * "power":2.0}}.
 */
public final class InverseSchedule implements ISchedule {
    private static final long serialVersionUID = 1L;

    private final ScheduleType scheduleType;
    private final double initialValue;
    private final double gamma;
    private final double power;

    /**
     * @param scheduleType ITERATION or EPOCH
     * @param initialValue the value at position 0 (finite, >= 0)
     * @param gamma the growth of the denominator's base per position (finite, >= 0)
     * @param power the exponent (finite)
     * @throws IllegalArgumentException naming the invalid parameter
     */
    @JsonCreator
    public InverseSchedule(@JsonProperty(value = "scheduleType", required = true) ScheduleType scheduleType,
            @JsonProperty(value = "initialValue", required = true) double initialValue,
            @JsonProperty(value = "gamma", required = true) double gamma,
            @JsonProperty(value = "power", required = true) double power) {
        this.scheduleType = ScheduleChecks.type("InverseSchedule", scheduleType);
        this.initialValue = ScheduleChecks.nonNegative("InverseSchedule", "initialValue", initialValue);
        this.gamma = ScheduleChecks.nonNegative("InverseSchedule", "gamma", gamma);
        this.power = ScheduleChecks.finite("InverseSchedule", "power", power);
    }

    @Override
    public double valueAt(int iteration, int epoch) {
        int i = scheduleType.position(iteration, epoch);
        return initialValue / Math.pow(1 + gamma * i, power);
    }

    @Override
    public ScheduleType getScheduleType() {
        return scheduleType;
    }

    /** @return the value at position 0 */
    public double getInitialValue() {
        return initialValue;
    }

    /** @return gamma */
    public double getGamma() {
        return gamma;
    }

    /** @return the exponent */
    public double getPower() {
        return power;
    }

    @Override
    public InverseSchedule clone() {
        return new InverseSchedule(scheduleType, initialValue, gamma, power);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof InverseSchedule)) {
            return false;
        }
        InverseSchedule s = (InverseSchedule) o;
        return scheduleType == s.scheduleType && Double.compare(initialValue, s.initialValue) == 0
                && Double.compare(gamma, s.gamma) == 0 && Double.compare(power, s.power) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash("InverseSchedule", scheduleType, initialValue, gamma, power);
    }

    @Override
    public String toString() {
        return "InverseSchedule(scheduleType=" + scheduleType + ", initialValue=" + initialValue + ", gamma=" + gamma
                + ", power=" + power + ")";
    }
}
