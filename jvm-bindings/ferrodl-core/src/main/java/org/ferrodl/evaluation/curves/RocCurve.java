package org.ferrodl.evaluation.curves;

/**
 * Points of a ROC curve in order of decreasing threshold (so false and true positive rates are
 * non-decreasing). Point {@code i} is what a classifier that says "positive" for probabilities
 * {@code >= threshold[i]} achieves; the first point is (0, 0) with threshold {@code +Infinity}.
 */
public record RocCurve(double[] threshold, double[] fpr, double[] tpr) {
    public int numPoints() {
        return threshold.length;
    }
}
