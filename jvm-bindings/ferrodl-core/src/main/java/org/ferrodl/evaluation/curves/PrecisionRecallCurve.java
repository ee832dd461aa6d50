package org.ferrodl.evaluation.curves;

/**
 * Points of a precision-recall curve in order of decreasing threshold (recall non-decreasing). The
 * first point is recall 0, precision 1 (threshold {@code +Infinity}); where nothing is predicted
 * positive, precision is taken as 1.
 */
public record PrecisionRecallCurve(double[] threshold, double[] precision, double[] recall) {
    public int numPoints() {
        return threshold.length;
    }
}
