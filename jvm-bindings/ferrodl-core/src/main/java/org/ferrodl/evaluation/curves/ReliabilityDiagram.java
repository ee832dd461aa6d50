package org.ferrodl.evaluation.curves;

/**
 * A reliability diagram of one class: for each probability bin (empty bins left out when the
 * evaluation excludes them), the mean predicted probability and the fraction of examples in the
 * bin that belong to the class. A perfectly calibrated classifier lies on the diagonal.
 */
public record ReliabilityDiagram(String title, double[] meanPredictedValueX, double[] fractionPositivesY) {
}
