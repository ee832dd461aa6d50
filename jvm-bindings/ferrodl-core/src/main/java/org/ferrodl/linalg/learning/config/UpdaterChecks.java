package org.ferrodl.linalg.learning.config;

import org.ferrodl.linalg.schedule.ExponentialSchedule;
import org.ferrodl.linalg.schedule.ISchedule;
import org.ferrodl.linalg.schedule.InverseSchedule;
import org.ferrodl.linalg.schedule.MapSchedule;
import org.ferrodl.linalg.schedule.PolySchedule;
import org.ferrodl.linalg.schedule.SigmoidSchedule;
import org.ferrodl.linalg.schedule.StepSchedule;

/**
 * Shared checks of updater hyper-parameters. Each returns null when the value is valid, else a
 * message naming the field, the rule and the value ({@code "beta1 must be in [0, 1), got 1.5"}).
 * The rules are the native engine's (native/optim), so a configuration Java accepts is one Rust
 * accepts.
 */
final class UpdaterChecks {
    private UpdaterChecks() {
    }

    static String nonNegative(String name, double v) {
        return Double.isFinite(v) && v >= 0 ? null : name + " must be finite and >= 0, got " + v;
    }

    static String positive(String name, double v) {
        return Double.isFinite(v) && v > 0 ? null : name + " must be finite and > 0, got " + v;
    }

    static String inUnitInterval(String name, double v) {
        return Double.isFinite(v) && v >= 0 && v < 1 ? null : name + " must be in [0, 1), got " + v;
    }

    /**
     * A momentum schedule must start in [0, 1) (for a MapSchedule: every value in [0, 1)). Schedules
     * check their own parameters when constructed.
     */
    static String momentumSchedule(ISchedule s) {
        if (s == null) {
            return null;
        }
        if (s instanceof MapSchedule) {
            for (java.util.Map.Entry<Integer, Double> e : ((MapSchedule) s).getValues().entrySet()) {
                String p = inUnitInterval("momentumSchedule.values[" + e.getKey() + "]", e.getValue());
                if (p != null) {
                    return p;
                }
            }
            return null;
        }
        double initial;
        if (s instanceof StepSchedule) {
            initial = ((StepSchedule) s).getInitialValue();
        } else if (s instanceof ExponentialSchedule) {
            initial = ((ExponentialSchedule) s).getInitialValue();
        } else if (s instanceof InverseSchedule) {
            initial = ((InverseSchedule) s).getInitialValue();
        } else if (s instanceof PolySchedule) {
            initial = ((PolySchedule) s).getInitialValue();
        } else if (s instanceof SigmoidSchedule) {
            initial = ((SigmoidSchedule) s).getInitialValue();
        } else {
            return null;
        }
        return inUnitInterval("momentumSchedule.initialValue", initial);
    }

    static String firstProblem(String... problems) {
        for (String p : problems) {
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    /** Throws the problem, if any, as an IllegalArgumentException prefixed with the updater name. */
    static <T extends IUpdater> T checked(T u) {
        String p = u.validate();
        if (p != null) {
            throw new IllegalArgumentException(u.getClass().getSimpleName() + ": " + p);
        }
        return u;
    }
}
