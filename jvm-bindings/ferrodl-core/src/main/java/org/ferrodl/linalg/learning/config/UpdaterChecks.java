package org.ferrodl.linalg.learning.config;

/** Shared checks of updater hyper-parameters. */
final class UpdaterChecks {
    private UpdaterChecks() {
    }

    static String nonNegative(String name, double v) {
        return Double.isFinite(v) && v >= 0 ? null : name + " must be finite and >= 0, got " + v;
    }

    static String inUnitInterval(String name, double v) {
        return Double.isFinite(v) && v >= 0 && v < 1 ? null : name + " must be in [0, 1), got " + v;
    }

    static String firstProblem(String... problems) {
        for (String p : problems) {
            if (p != null) {
                return p;
            }
        }
        return null;
    }
}
