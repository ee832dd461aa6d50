package org.ferrodl.evaluation.classification;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.ferrodl.evaluation.EvalInputs;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * Classification metrics of several independent binary outputs (sigmoid outputs with 0/1 labels,
 * one column each): per output the counts of true/false positives/negatives, and accuracy,
 * precision, recall, F1 and the error rates from them. An output counts as predicted positive when
 * its probability is {@code >= } its decision threshold (0.5 unless given). Accepts per-example and
 * per-output masks. Metrics whose denominator is 0 are 0 (as in {@link Evaluation}). Not
 * thread-safe.
 */
public class EvaluationBinary implements IEvaluation<EvaluationBinary> {
    private static final long serialVersionUID = 1L;

    /** Default decision threshold. */
    public static final double DEFAULT_THRESHOLD = 0.5;

    private double[] decisionThreshold;
    private List<String> labels;
    private long[] truePositives;
    private long[] falsePositives;
    private long[] trueNegatives;
    private long[] falseNegatives;

    /** Threshold 0.5 for every output; the number of outputs is taken from the first evaluation. */
    public EvaluationBinary() {
    }

    /**
     * @param decisionThreshold one threshold per output (a {@code [C]} or {@code 1 × C} array), or
     *     null for 0.5
     */
    public EvaluationBinary(INDArray decisionThreshold) {
        if (decisionThreshold != null) {
            if (decisionThreshold.rank() > 2 || (decisionThreshold.rank() == 2 && decisionThreshold.size(0) != 1)) {
                throw new IllegalArgumentException("decision thresholds must be a vector, got shape "
                        + Arrays.toString(decisionThreshold.shape()));
            }
            this.decisionThreshold = decisionThreshold.toDoubleVector();
        }
    }

    /** Names the outputs (used by {@link #stats()}). */
    public EvaluationBinary setLabelNames(List<String> labels) {
        this.labels = labels == null ? null : new ArrayList<>(labels);
        return this;
    }

    @Override
    public void eval(INDArray labelsArr, INDArray predictions, INDArray mask) {
        if (labelsArr.rank() == 3) { // time series [N, C, T] with an [N, T] mask: one row per unmasked step
            evalTimeSeries(labelsArr, predictions, mask);
            return;
        }
        int[] rc = EvalInputs.rowsCols(labelsArr, predictions, "EvaluationBinary");
        int rows = rc[0];
        int cols = rc[1];
        ensure(cols);
        float[] m = EvalInputs.entryMask(mask, rows, cols, true, "EvaluationBinary");
        float[] l = NDArray.internalData(labelsArr);
        float[] p = NDArray.internalData(predictions);
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                int i = r * cols + c;
                if (m != null && m[i] == 0f) {
                    continue;
                }
                boolean actual = EvalInputs.binaryLabel(l[i], r, c, "EvaluationBinary");
                boolean predicted = p[i] >= threshold(c);
                if (actual) {
                    if (predicted) {
                        truePositives[c]++;
                    } else {
                        falseNegatives[c]++;
                    }
                } else if (predicted) {
                    falsePositives[c]++;
                } else {
                    trueNegatives[c]++;
                }
            }
        }
    }

    private double threshold(int c) {
        return decisionThreshold == null ? DEFAULT_THRESHOLD : decisionThreshold[c];
    }

    private void ensure(int cols) {
        if (truePositives == null) {
            if (decisionThreshold != null && decisionThreshold.length != cols) {
                throw new IllegalArgumentException("this EvaluationBinary has " + decisionThreshold.length
                        + " decision thresholds but the labels have " + cols + " columns");
            }
            truePositives = new long[cols];
            falsePositives = new long[cols];
            trueNegatives = new long[cols];
            falseNegatives = new long[cols];
        } else if (truePositives.length != cols) {
            throw new IllegalArgumentException("this EvaluationBinary has " + truePositives.length
                    + " outputs but the labels have " + cols + " columns");
        }
    }

    @Override
    public void merge(EvaluationBinary other) {
        if (other == null || other.truePositives == null) {
            return;
        }
        if (!Arrays.equals(other.decisionThreshold, decisionThreshold)) {
            throw new IllegalArgumentException("cannot merge EvaluationBinary objects with different decision "
                    + "thresholds");
        }
        ensure(other.truePositives.length);
        for (int c = 0; c < truePositives.length; c++) {
            truePositives[c] += other.truePositives[c];
            falsePositives[c] += other.falsePositives[c];
            trueNegatives[c] += other.trueNegatives[c];
            falseNegatives[c] += other.falseNegatives[c];
        }
    }

    @Override
    public void reset() {
        truePositives = null;
        falsePositives = null;
        trueNegatives = null;
        falseNegatives = null;
    }

    /** @return number of outputs, or 0 before the first evaluation */
    public int numLabels() {
        return truePositives == null ? 0 : truePositives.length;
    }

    private void check(int c) {
        if (c < 0 || c >= numLabels()) {
            throw new IllegalArgumentException("output " + c + " out of range for " + numLabels() + " outputs");
        }
    }

    public long truePositives(int c) {
        check(c);
        return truePositives[c];
    }

    public long falsePositives(int c) {
        check(c);
        return falsePositives[c];
    }

    public long trueNegatives(int c) {
        check(c);
        return trueNegatives[c];
    }

    public long falseNegatives(int c) {
        check(c);
        return falseNegatives[c];
    }

    /** @return the number of (unmasked) values counted for output {@code c} */
    public long totalCount(int c) {
        return truePositives(c) + falsePositives(c) + trueNegatives(c) + falseNegatives(c);
    }

    private static double ratio(long a, long b) {
        return b == 0 ? 0.0 : a / (double) b;
    }

    public double accuracy(int c) {
        return ratio(truePositives(c) + trueNegatives(c), totalCount(c));
    }

    public double precision(int c) {
        return ratio(truePositives(c), truePositives(c) + falsePositives(c));
    }

    public double recall(int c) {
        return ratio(truePositives(c), truePositives(c) + falseNegatives(c));
    }

    /** @return F-beta of output {@code c}: {@code (1+b²)PR / (b²P + R)}, 0 when P and R are 0 */
    public double fBeta(double beta, int c) {
        double p = precision(c);
        double r = recall(c);
        double b2 = beta * beta;
        return p == 0 && r == 0 ? 0.0 : (1 + b2) * p * r / (b2 * p + r);
    }

    public double f1(int c) {
        return fBeta(1.0, c);
    }

    /** @return FP / (FP + TN) */
    public double falsePositiveRate(int c) {
        return ratio(falsePositives(c), falsePositives(c) + trueNegatives(c));
    }

    /** @return FN / (FN + TP) */
    public double falseNegativeRate(int c) {
        return ratio(falseNegatives(c), falseNegatives(c) + truePositives(c));
    }

    /** @return the mean of the false positive and false negative rates */
    public double falseAlarmRate(int c) {
        return (falsePositiveRate(c) + falseNegativeRate(c)) / 2;
    }

    /** @return Matthews correlation coefficient of output {@code c} (0 when undefined) */
    public double matthewsCorrelation(int c) {
        double tp = truePositives(c);
        double fp = falsePositives(c);
        double tn = trueNegatives(c);
        double fn = falseNegatives(c);
        double d = Math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn));
        return d == 0 ? 0.0 : (tp * tn - fp * fn) / d;
    }

    private double mean(java.util.function.IntToDoubleFunction f) {
        double s = 0;
        for (int c = 0; c < numLabels(); c++) {
            s += f.applyAsDouble(c);
        }
        return numLabels() == 0 ? 0.0 : s / numLabels();
    }

    public double averageAccuracy() {
        return mean(this::accuracy);
    }

    public double averagePrecision() {
        return mean(this::precision);
    }

    public double averageRecall() {
        return mean(this::recall);
    }

    public double averageF1() {
        return mean(this::f1);
    }

    @Override
    public String stats() {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-12s %9s %9s %9s %9s %8s %8s %8s %8s%n",
                "Label", "Accuracy", "F1", "Precision", "Recall", "TP", "FP", "TN", "FN"));
        for (int c = 0; c < numLabels(); c++) {
            String name = labels != null && c < labels.size() ? labels.get(c) : String.valueOf(c);
            sb.append(String.format(Locale.ROOT, "%-12s %9.4f %9.4f %9.4f %9.4f %8d %8d %8d %8d%n", name,
                    accuracy(c), f1(c), precision(c), recall(c), truePositives[c], falsePositives[c],
                    trueNegatives[c], falseNegatives[c]));
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return stats();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EvaluationBinary e && Arrays.equals(e.decisionThreshold, decisionThreshold)
                && Arrays.equals(e.truePositives, truePositives) && Arrays.equals(e.falsePositives, falsePositives)
                && Arrays.equals(e.trueNegatives, trueNegatives) && Arrays.equals(e.falseNegatives, falseNegatives);
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(truePositives), Arrays.hashCode(falsePositives),
                Arrays.hashCode(trueNegatives), Arrays.hashCode(falseNegatives));
    }
}
