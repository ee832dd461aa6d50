package org.ferrodl.linalg.schedule;

/** Parameter checks shared by the schedules; each failure is an IllegalArgumentException. */
final class ScheduleChecks {
    private ScheduleChecks() {
    }

    static ScheduleType type(String schedule, ScheduleType t) {
        if (t == null) {
            throw new IllegalArgumentException(schedule + ": scheduleType must be ITERATION or EPOCH, got null");
        }
        return t;
    }

    static double nonNegative(String schedule, String name, double v) {
        if (!(Double.isFinite(v) && v >= 0)) {
            throw new IllegalArgumentException(schedule + ": " + name + " must be finite and >= 0, got " + v);
        }
        return v;
    }

    static double positive(String schedule, String name, double v) {
        if (!(Double.isFinite(v) && v > 0)) {
            throw new IllegalArgumentException(schedule + ": " + name + " must be finite and > 0, got " + v);
        }
        return v;
    }

    static double finite(String schedule, String name, double v) {
        if (!Double.isFinite(v)) {
            throw new IllegalArgumentException(schedule + ": " + name + " must be finite, got " + v);
        }
        return v;
    }
}
