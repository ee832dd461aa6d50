package org.ferrodl.optimize.solvers.accumulation.encoding.threshold;

/** Argument checks shared by the threshold algorithms; messages name the argument. */
final class Checks {
    /**
     * Smallest and largest threshold the native encoder accepts (ferrodl-comm's
     * {@code MIN_THRESHOLD} / {@code MAX_THRESHOLD}): checking the same range here refuses a bad value
     * when the configuration is built rather than when a fit starts.
     */
    static final double MIN_THRESHOLD = 1e-30;
    static final double MAX_THRESHOLD = 1e30;

    private Checks() {}

    static double threshold(String name, double v) {
        if (!(v >= MIN_THRESHOLD && v <= MAX_THRESHOLD)) {
            throw new IllegalArgumentException(name + " must be a number in [" + MIN_THRESHOLD + ", "
                    + MAX_THRESHOLD + "], got " + v);
        }
        return v;
    }

    static double fraction(String name, double v) {
        if (!(v > 0 && v <= 1)) {
            throw new IllegalArgumentException(name + " must be in (0, 1], got " + v);
        }
        return v;
    }

    static double decay(double v) {
        if (!(v > 0 && v < 1)) {
            throw new IllegalArgumentException("decayRate must be in (0, 1), got " + v);
        }
        return v;
    }

    /** A double as a JSON number that parses back to the same value (validated values are finite). */
    static String num(double v) {
        return Double.toString(v);
    }
}
