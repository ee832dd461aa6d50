package org.ferrodl.linalg.schedule;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * Polynomial decay: {@code value(i) = initialValue · (1 + i/maxIter)^(-power)} for
 * {@code i < maxIter} and 0 from {@code maxIter} on, where {@code i} is the iteration or the epoch.
 * This is the formula the reference documents; see docs/UPDATERS.md for how its code differs.
 *
 * <p>JSON: {@code {"type":"PolySchedule","scheduleType":"ITERATION","initialValue":0.1,"power":2.0,
 * "maxIter":100}}.
 */
public final class PolySchedule implements ISchedule {
    private static final long serialVersionUID = 1L;

    private final ScheduleType scheduleType;
    private final double initialValue;
    private final double power;
    private final int maxIter;

    /**
     * @param scheduleType ITERATION or EPOCH
     * @param initialValue the value at position 0 (finite, >= 0)
     * @param power the exponent (finite)
     * @param maxIter the position from which the value is 0 (> 0)
     * @throws IllegalArgumentException naming the invalid parameter
     */
    @JsonCreator
    public PolySchedule(@JsonProperty(value = "scheduleType", required = true) ScheduleType scheduleType,
            @JsonProperty(value = "initialValue", required = true) double initialValue,
            @JsonProperty(value = "power", required = true) double power,
            @JsonProperty(value = "maxIter", required = true) int maxIter) {
        this.scheduleType = ScheduleChecks.type("PolySchedule", scheduleType);
        this.initialValue = ScheduleChecks.nonNegative("PolySchedule", "initialValue", initialValue);
        this.power = ScheduleChecks.finite("PolySchedule", "power", power);
        if (maxIter <= 0) {
            throw new IllegalArgumentException("PolySchedule: maxIter must be > 0, got " + maxIter);
        }
        this.maxIter = maxIter;
    }

    @Override
    public double valueAt(int iteration, int epoch) {
        int i = scheduleType.position(iteration, epoch);
        if (i >= maxIter) {
            return 0;
        }
        return initialValue * Math.pow(1 + i / (double) maxIter, -power);
    }

    @Override
    public ScheduleType getScheduleType() {
        return scheduleType;
    }

    /** @return the value at position 0 */
    public double getInitialValue() {
        return initialValue;
    }

    /** @return the exponent */
    public double getPower() {
        return power;
    }

    /** @return the position from which the value is 0 */
    public int getMaxIter() {
        return maxIter;
    }

    @Override
    public PolySchedule clone() {
        return new PolySchedule(scheduleType, initialValue, power, maxIter);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof PolySchedule)) {
            return false;
        }
        PolySchedule s = (PolySchedule) o;
        return scheduleType == s.scheduleType && Double.compare(initialValue, s.initialValue) == 0
                && Double.compare(power, s.power) == 0 && maxIter == s.maxIter;
    }

    @Override
    public int hashCode() {
        return Objects.hash("PolySchedule", scheduleType, initialValue, power, maxIter);
    }

    @Override
    public String toString() {
        return "PolySchedule(scheduleType=" + scheduleType + ", initialValue=" + initialValue + ", power=" + power
                + ", maxIter=" + maxIter + ")";
    }
}
