package org.ferrodl.evaluation.classification;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.ferrodl.evaluation.EvalInputs;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * ROC of several independent binary outputs (sigmoid outputs with 0/1 labels, one column each):
 * one {@link ROC} per column. Accepts per-example and per-output ({@code N × C}) masks. Exact with
 * {@code thresholdSteps == 0} (the default), thresholded otherwise (see {@link ROC}). Not
 * thread-safe.
 */
public class ROCBinary implements IEvaluation<ROCBinary> {
    private static final long serialVersionUID = 1L;

    private int thresholdSteps;
    private List<ROC> underlying;
    private List<String> labels;

    /** Exact mode. */
    public ROCBinary() {
        this(0);
    }

    /** @param thresholdSteps 0 for exact mode, else the number of threshold steps */
    public ROCBinary(int thresholdSteps) {
        if (thresholdSteps < 0) {
            throw new IllegalArgumentException("thresholdSteps must be >= 0 (0: exact), got " + thresholdSteps);
        }
        this.thresholdSteps = thresholdSteps;
    }

    /** Names the outputs (used by {@link #stats()}); one name per column. */
    public ROCBinary setLabelNames(List<String> labels) {
        this.labels = labels == null ? null : new ArrayList<>(labels);
        return this;
    }

    @Override
    public void eval(INDArray labelsArr, INDArray predictions, INDArray mask) {
        if (labelsArr.rank() == 3) { // time series [N, C, T] with an [N, T] mask: one row per unmasked step
            evalTimeSeries(labelsArr, predictions, mask);
            return;
        }
        int[] rc = EvalInputs.rowsCols(labelsArr, predictions, "ROCBinary");
        int rows = rc[0];
        int cols = rc[1];
        ensure(cols);
        float[] m = EvalInputs.entryMask(mask, rows, cols, true, "ROCBinary");
        float[] l = NDArray.internalData(labelsArr);
        float[] p = NDArray.internalData(predictions);
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                int i = r * cols + c;
                if (m != null && m[i] == 0f) {
                    continue;
                }
                underlying.get(c).add(p[i], EvalInputs.binaryLabel(l[i], r, c, "ROCBinary"));
            }
        }
    }

    private void ensure(int cols) {
        if (underlying == null) {
            underlying = new ArrayList<>(cols);
            for (int c = 0; c < cols; c++) {
                underlying.add(new ROC(thresholdSteps));
            }
        } else if (underlying.size() != cols) {
            throw new IllegalArgumentException("this ROCBinary has " + underlying.size()
                    + " outputs but the labels have " + cols + " columns");
        }
    }

    @Override
    public void merge(ROCBinary other) {
        if (other == null || other.underlying == null) {
            return;
        }
        if (other.thresholdSteps != thresholdSteps) {
            throw new IllegalArgumentException("cannot merge a ROCBinary with thresholdSteps=" + other.thresholdSteps
                    + " into one with thresholdSteps=" + thresholdSteps);
        }
        ensure(other.underlying.size());
        for (int c = 0; c < underlying.size(); c++) {
            underlying.get(c).merge(other.underlying.get(c));
        }
    }

    @Override
    public void reset() {
        underlying = null;
    }

    /** @return the number of outputs, or 0 before the first evaluation */
    public int numLabels() {
        return underlying == null ? 0 : underlying.size();
    }

    /** @return the ROC of output {@code outputNum} (live) */
    public ROC getROC(int outputNum) {
        if (outputNum < 0 || outputNum >= numLabels()) {
            throw new IllegalArgumentException("output " + outputNum + " out of range for " + numLabels() + " outputs");
        }
        return underlying.get(outputNum);
    }

    public double calculateAUC(int outputNum) {
        return getROC(outputNum).calculateAUC();
    }

    public double calculateAUCPR(int outputNum) {
        return getROC(outputNum).calculateAUCPR();
    }

    /** @return the mean AUC over outputs (NaN when an output's AUC is undefined) */
    public double calculateAverageAuc() {
        double s = 0;
        for (int c = 0; c < numLabels(); c++) {
            s += calculateAUC(c);
        }
        return numLabels() == 0 ? Double.NaN : s / numLabels();
    }

    /** @return the mean AUPRC over outputs */
    public double calculateAverageAUCPR() {
        double s = 0;
        for (int c = 0; c < numLabels(); c++) {
            s += calculateAUCPR(c);
        }
        return numLabels() == 0 ? Double.NaN : s / numLabels();
    }

    @Override
    public String stats() {
        StringBuilder sb = new StringBuilder("ROCBinary (").append(thresholdSteps == 0 ? "exact"
                : thresholdSteps + " threshold steps").append(")\n");
        for (int c = 0; c < numLabels(); c++) {
            String name = labels != null && c < labels.size() ? labels.get(c) : String.valueOf(c);
            ROC r = underlying.get(c);
            sb.append(String.format(Locale.ROOT, "  %-12s AUC %.6f  AUPRC %.6f  (+%d / -%d)%n", name,
                    r.calculateAUC(), r.calculateAUCPR(), r.getCountActualPositive(), r.getCountActualNegative()));
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ROCBinary r && r.thresholdSteps == thresholdSteps
                && Objects.equals(r.underlying, underlying);
    }

    @Override
    public int hashCode() {
        return Objects.hash(thresholdSteps, underlying);
    }
}
