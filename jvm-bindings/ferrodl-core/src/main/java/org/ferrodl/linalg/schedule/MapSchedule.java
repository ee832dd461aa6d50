package org.ferrodl.linalg.schedule;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A piecewise constant schedule given by a map from position (iteration or epoch) to value: the
 * value at {@code i} is that of the largest key {@code <= i}, i.e. each value holds until the next
 * key. For example {@code (0, 1.0), (10, 0.5), (20, 0.2)} gives 1.0 for positions 0 to 9, 0.5 for
 * 10 to 19 and 0.2 from 20 on. The map must contain position 0 (the initial value).
 *
 * <p>JSON: {@code {"type":"MapSchedule","scheduleType":"EPOCH","values":{"0":0.1,"10":0.01}}}.
 */
public final class MapSchedule implements ISchedule {
    private static final long serialVersionUID = 1L;

    private final ScheduleType scheduleType;
    private final TreeMap<Integer, Double> values;

    /**
     * @param scheduleType ITERATION or EPOCH
     * @param values position to value; must contain position 0; positions >= 0; values finite and
     *     >= 0. The map is copied.
     * @throws IllegalArgumentException naming the invalid entry
     */
    @JsonCreator
    public MapSchedule(@JsonProperty(value = "scheduleType", required = true) ScheduleType scheduleType,
            @JsonProperty(value = "values", required = true) Map<Integer, Double> values) {
        this.scheduleType = ScheduleChecks.type("MapSchedule", scheduleType);
        if (values == null || !values.containsKey(0)) {
            throw new IllegalArgumentException("MapSchedule: values must contain the initial value at position 0, got "
                    + (values == null ? "null" : new TreeMap<>(values).toString()));
        }
        TreeMap<Integer, Double> copy = new TreeMap<>();
        for (Map.Entry<Integer, Double> e : values.entrySet()) {
            Integer k = e.getKey();
            if (k == null || k < 0) {
                throw new IllegalArgumentException("MapSchedule: positions must be >= 0, got " + k);
            }
            Double v = e.getValue();
            if (v == null) {
                throw new IllegalArgumentException("MapSchedule: values[" + k + "] must be finite and >= 0, got null");
            }
            copy.put(k, ScheduleChecks.nonNegative("MapSchedule", "values[" + k + "]", v));
        }
        this.values = copy;
    }

    @Override
    public double valueAt(int iteration, int epoch) {
        Map.Entry<Integer, Double> e = values.floorEntry(scheduleType.position(iteration, epoch));
        return (e != null ? e : values.firstEntry()).getValue();
    }

    @Override
    public ScheduleType getScheduleType() {
        return scheduleType;
    }

    /** @return position to value, sorted by position (read-only) */
    public SortedMap<Integer, Double> getValues() {
        return Collections.unmodifiableSortedMap(values);
    }

    @Override
    public MapSchedule clone() {
        return new MapSchedule(scheduleType, values);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof MapSchedule)) {
            return false;
        }
        MapSchedule s = (MapSchedule) o;
        return scheduleType == s.scheduleType && values.equals(s.values);
    }

    @Override
    public int hashCode() {
        return Objects.hash("MapSchedule", scheduleType, values);
    }

    @Override
    public String toString() {
        return "MapSchedule(scheduleType=" + scheduleType + ", values=" + values + ")";
    }

    /** Builds a {@link MapSchedule} point by point. Not thread-safe. */
    public static class Builder {
        private final ScheduleType scheduleType;
        private final Map<Integer, Double> values = new TreeMap<>();

        /** @param scheduleType ITERATION or EPOCH */
        public Builder(ScheduleType scheduleType) {
            this.scheduleType = scheduleType;
        }

        /**
         * @param position the iteration or epoch (from 0) from which {@code value} applies
         * @param value the value
         * @return this builder
         */
        public Builder add(int position, double value) {
            values.put(position, value);
            return this;
        }

        /**
         * @return the schedule
         * @throws IllegalArgumentException when position 0 is missing or an entry is invalid
         */
        public MapSchedule build() {
            return new MapSchedule(scheduleType, values);
        }
    }
}
