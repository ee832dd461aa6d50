package org.ferrodl.optimize.solvers.accumulation.encoding.threshold;

/** Argument checks shared by the threshold algorithms; messages name the argument. */
final class Checks {
    private Checks() {}

    static double positive(String name, double v) {
        if (!(v > 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(name + " must be a finite number > 0, got " + v);
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

    /** Doubles as JSON numbers that parse back to the same value. */
    static String num(double v) {
        return Double.toString(v);
    }
}
