package org.ferrodl.linalg.schedule;

/**
 * What a schedule is indexed by: the iteration count (one per minibatch fit) or the epoch count,
 * both starting at 0.
 */
public enum ScheduleType {
    /** The value changes with the iteration count. */
    ITERATION,
    /** The value changes with the epoch count. */
    EPOCH;

    /**
     * @param iteration the 0-based iteration
     * @param epoch the 0-based epoch
     * @return {@code iteration} for ITERATION, {@code epoch} for EPOCH
     */
    public int position(int iteration, int epoch) {
        return this == ITERATION ? iteration : epoch;
    }
}
