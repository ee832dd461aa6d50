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
 * One-vs-all ROC of a multi-class classifier ({@code N × C} one-hot labels, softmax output,
 * {@code C >= 2}): for class {@code c}, the examples of class {@code c} are the positives and the
 * predicted probability of {@code c} is the score. Per-example masks only. Exact with
 * {@code thresholdSteps == 0} (the default), thresholded otherwise (see {@link ROC}). Not
 * thread-safe.
 */
public class ROCMultiClass implements IEvaluation<ROCMultiClass> {
    private static final long serialVersionUID = 1L;

    private int thresholdSteps;
    private List<ROC> underlying;
    private List<String> labels;

    /** Exact mode. */
    public ROCMultiClass() {
        this(0);
    }

    /** @param thresholdSteps 0 for exact mode, else the number of threshold steps */
    public ROCMultiClass(int thresholdSteps) {
        if (thresholdSteps < 0) {
            throw new IllegalArgumentException("thresholdSteps must be >= 0 (0: exact), got " + thresholdSteps);
        }
        this.thresholdSteps = thresholdSteps;
    }

    /** Names the classes (used by {@link #stats()}). */
    public ROCMultiClass setLabelNames(List<String> labels) {
        this.labels = labels == null ? null : new ArrayList<>(labels);
        return this;
    }

    @Override
    public void eval(INDArray labelsArr, INDArray predictions, INDArray mask) {
        if (labelsArr.rank() == 3) { // time series [N, C, T] with an [N, T] mask: one row per unmasked step
            evalTimeSeries(labelsArr, predictions, mask);
            return;
        }
        int[] rc = EvalInputs.rowsCols(labelsArr, predictions, "ROCMultiClass");
        int rows = rc[0];
        int cols = rc[1];
        if (cols < 2) {
            throw new IllegalArgumentException("ROCMultiClass needs one-hot labels with >= 2 columns, got " + cols
                    + ": use ROC for a single binary output");
        }
        ensure(cols);
        float[] m = EvalInputs.entryMask(mask, rows, cols, false, "ROCMultiClass");
        float[] l = NDArray.internalData(labelsArr);
        float[] p = NDArray.internalData(predictions);
        for (int r = 0; r < rows; r++) {
            if (m != null && m[r * cols] == 0f) {
                continue;
            }
            for (int c = 0; c < cols; c++) {
                int i = r * cols + c;
                underlying.get(c).add(p[i], EvalInputs.binaryLabel(l[i], r, c, "ROCMultiClass"));
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
            throw new IllegalArgumentException("this ROCMultiClass has " + underlying.size()
                    + " classes but the labels have " + cols + " columns");
        }
    }

    @Override
    public void merge(ROCMultiClass other) {
        if (other == null || other.underlying == null) {
            return;
        }
        if (other.thresholdSteps != thresholdSteps) {
            throw new IllegalArgumentException("cannot merge a ROCMultiClass with thresholdSteps="
                    + other.thresholdSteps + " into one with thresholdSteps=" + thresholdSteps);
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

    /** @return the number of classes, or 0 before the first evaluation */
    public int getNumClasses() {
        return underlying == null ? 0 : underlying.size();
    }

    /** @return the one-vs-all ROC of class {@code classIdx} (live) */
    public ROC getROC(int classIdx) {
        if (classIdx < 0 || classIdx >= getNumClasses()) {
            throw new IllegalArgumentException("class " + classIdx + " out of range for " + getNumClasses()
                    + " classes");
        }
        return underlying.get(classIdx);
    }

    public double calculateAUC(int classIdx) {
        return getROC(classIdx).calculateAUC();
    }

    public double calculateAUCPR(int classIdx) {
        return getROC(classIdx).calculateAUCPR();
    }

    /** @return the mean one-vs-all AUC over classes */
    public double calculateAverageAUC() {
        double s = 0;
        for (int c = 0; c < getNumClasses(); c++) {
            s += calculateAUC(c);
        }
        return getNumClasses() == 0 ? Double.NaN : s / getNumClasses();
    }

    /** @return the mean one-vs-all AUPRC over classes */
    public double calculateAverageAUCPR() {
        double s = 0;
        for (int c = 0; c < getNumClasses(); c++) {
            s += calculateAUCPR(c);
        }
        return getNumClasses() == 0 ? Double.NaN : s / getNumClasses();
    }

    @Override
    public String stats() {
        StringBuilder sb = new StringBuilder("ROCMultiClass (").append(thresholdSteps == 0 ? "exact"
                : thresholdSteps + " threshold steps").append(", one vs all)\n");
        for (int c = 0; c < getNumClasses(); c++) {
            String name = labels != null && c < labels.size() ? labels.get(c) : String.valueOf(c);
            ROC r = underlying.get(c);
            sb.append(String.format(Locale.ROOT, "  %-12s AUC %.6f  AUPRC %.6f%n", name, r.calculateAUC(),
                    r.calculateAUCPR()));
        }
        sb.append(String.format(Locale.ROOT, "  average AUC %.6f%n", calculateAverageAUC()));
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ROCMultiClass r && r.thresholdSteps == thresholdSteps
                && Objects.equals(r.underlying, underlying);
    }

    @Override
    public int hashCode() {
        return Objects.hash(thresholdSteps, underlying);
    }
}
