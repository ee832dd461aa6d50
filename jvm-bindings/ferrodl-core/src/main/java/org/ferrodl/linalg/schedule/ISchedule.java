package org.ferrodl.linalg.schedule;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.io.Serializable;

/**
 * A value (typically a learning rate or a momentum) that changes with the iteration or the epoch.
 * Set one on an updater instead of a fixed learning rate, e.g. {@code new Adam(new
 * StepSchedule(ScheduleType.ITERATION, 1e-2, 0.5, 1000))}.
 *
 * <p>Serialized to JSON with a {@code "type"} property naming the implementation
 * ({@code StepSchedule}, {@code ExponentialSchedule}, {@code InverseSchedule}, {@code PolySchedule},
 * {@code SigmoidSchedule}, {@code MapSchedule}); only these six can be used in a configuration that
 * is trained by the native engine.
 *
 * <p>The implementations are immutable and thread-safe; their constructors refuse invalid
 * parameters with an {@link IllegalArgumentException} naming the parameter and its value.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = StepSchedule.class, name = "StepSchedule"),
    @JsonSubTypes.Type(value = ExponentialSchedule.class, name = "ExponentialSchedule"),
    @JsonSubTypes.Type(value = InverseSchedule.class, name = "InverseSchedule"),
    @JsonSubTypes.Type(value = PolySchedule.class, name = "PolySchedule"),
    @JsonSubTypes.Type(value = SigmoidSchedule.class, name = "SigmoidSchedule"),
    @JsonSubTypes.Type(value = MapSchedule.class, name = "MapSchedule")
})
public interface ISchedule extends Serializable, Cloneable {

    /**
     * @param iteration the 0-based iteration count
     * @param epoch the 0-based epoch count
     * @return the value at that point of training
     */
    double valueAt(int iteration, int epoch);

    /** @return whether the schedule reads the iteration or the epoch */
    ScheduleType getScheduleType();

    /** @return an equal copy */
    ISchedule clone();
}
