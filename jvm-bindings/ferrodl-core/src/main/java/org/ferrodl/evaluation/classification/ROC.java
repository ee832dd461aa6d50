package org.ferrodl.evaluation.classification;

import java.util.Arrays;
import java.util.Locale;
import org.ferrodl.evaluation.EvalInputs;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.curves.PrecisionRecallCurve;
import org.ferrodl.evaluation.curves.RocCurve;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * ROC and precision-recall analysis of one binary output: area under the ROC curve (AUC) and
 * under the precision-recall curve (AUPRC), and both curves.
 *
 * <h2>Input</h2>
 * Labels and predictions are either {@code N × 1} (label 0/1, predicted probability of class 1)
 * or {@code N × 2} (one-hot labels, softmax output; column 1 is the positive class). A per-example
 * mask skips examples.
 *
 * <h2>Exact and thresholded</h2>
 * With {@code thresholdSteps == 0} ({@link #ROC()}, the default) every (probability, label) pair
 * is kept and the curves have one point per distinct probability: the AUC equals the
 * Mann–Whitney statistic, ties counting one half. Memory grows with the number of examples. With
 * {@code thresholdSteps = s > 0} only counts at the thresholds {@code 0, 1/s, ..., 1} are kept
 * (constant memory): a probability {@code p} counts as predicted positive at threshold {@code t}
 * when {@code p >= t}; the curves have those points plus (0, 0).
 *
 * <p>Areas are trapezoid sums over the curve points (AUPRC over recall, starting at recall 0,
 * precision 1). They depend only on the multiset of evaluated pairs, so merging partial
 * evaluations in any order gives exactly the local result. With no positive or no negative
 * example the AUC is NaN (undefined). Not thread-safe.
 */
public class ROC implements IEvaluation<ROC> {
    private static final long serialVersionUID = 1L;

    private int thresholdSteps;
    private long countActualPositive;
    private long countActualNegative;
    // thresholded: counts by level k+1, where k = the highest threshold index with k/steps <= p (-1: none)
    private long[] positivesByLevel;
    private long[] negativesByLevel;
    // exact: the pairs (first exactCount entries are used)
    private float[] exactProbabilities;
    private boolean[] exactLabels;
    private int exactCount;

    /** Exact mode. */
    public ROC() {
        this(0);
    }

    /** @param thresholdSteps 0 for exact mode, else the number of threshold steps (thresholds i/steps) */
    public ROC(int thresholdSteps) {
        if (thresholdSteps < 0) {
            throw new IllegalArgumentException("thresholdSteps must be >= 0 (0: exact), got " + thresholdSteps);
        }
        this.thresholdSteps = thresholdSteps;
        reset();
    }

    @Override
    public void reset() {
        countActualPositive = 0;
        countActualNegative = 0;
        if (thresholdSteps > 0) {
            positivesByLevel = new long[thresholdSteps + 2];
            negativesByLevel = new long[thresholdSteps + 2];
            exactProbabilities = null;
            exactLabels = null;
        } else {
            exactProbabilities = new float[16];
            exactLabels = new boolean[16];
        }
        exactCount = 0;
    }

    public int getThresholdSteps() {
        return thresholdSteps;
    }

    public boolean isExact() {
        return thresholdSteps == 0;
    }

    public long getCountActualPositive() {
        return countActualPositive;
    }

    public long getCountActualNegative() {
        return countActualNegative;
    }

    @Override
    public void eval(INDArray labels, INDArray predictions, INDArray mask) {
        if (labels.rank() == 3) { // time series [N, C, T] with an [N, T] mask: one row per unmasked step
            evalTimeSeries(labels, predictions, mask);
            return;
        }
        int[] rc = EvalInputs.rowsCols(labels, predictions, "ROC");
        int rows = rc[0];
        int cols = rc[1];
        if (cols > 2) {
            throw new IllegalArgumentException("ROC evaluates one binary output (1 or 2 columns), got " + cols
                    + " columns: use ROCMultiClass (one-vs-all) or ROCBinary (independent outputs)");
        }
        float[] m = EvalInputs.entryMask(mask, rows, cols, false, "ROC");
        float[] l = NDArray.internalData(labels);
        float[] p = NDArray.internalData(predictions);
        int col = cols - 1;
        for (int r = 0; r < rows; r++) {
            int i = r * cols + col;
            if (m != null && m[i] == 0f) {
                continue;
            }
            add(p[i], EvalInputs.binaryLabel(l[i], r, col, "ROC"));
        }
    }

    /** Counts one (probability, label) pair. */
    public void add(float probability, boolean positive) {
        if (Float.isNaN(probability)) {
            throw new IllegalArgumentException("ROC: predicted probability is NaN");
        }
        if (positive) {
            countActualPositive++;
        } else {
            countActualNegative++;
        }
        if (thresholdSteps > 0) {
            int level = levelOf(probability) + 1;
            (positive ? positivesByLevel : negativesByLevel)[level]++;
        } else {
            if (exactCount == exactProbabilities.length) {
                int n = Math.max(16, exactCount * 2);
                exactProbabilities = Arrays.copyOf(exactProbabilities, n);
                exactLabels = Arrays.copyOf(exactLabels, n);
            }
            exactProbabilities[exactCount] = probability;
            exactLabels[exactCount] = positive;
            exactCount++;
        }
    }

    /** The highest threshold index k with {@code k / steps <= p}, or -1 when none. */
    private int levelOf(float p) {
        double v = p;
        int k = (int) Math.max(-1, Math.min(thresholdSteps, Math.floor(v * thresholdSteps)));
        while (k + 1 <= thresholdSteps && (k + 1) / (double) thresholdSteps <= v) {
            k++;
        }
        while (k >= 0 && k / (double) thresholdSteps > v) {
            k--;
        }
        return k;
    }

    @Override
    public void merge(ROC other) {
        if (other == null) {
            return;
        }
        if (other.thresholdSteps != thresholdSteps) {
            throw new IllegalArgumentException("cannot merge a ROC with thresholdSteps=" + other.thresholdSteps
                    + " into one with thresholdSteps=" + thresholdSteps);
        }
        countActualPositive += other.countActualPositive;
        countActualNegative += other.countActualNegative;
        if (thresholdSteps > 0) {
            for (int i = 0; i < positivesByLevel.length; i++) {
                positivesByLevel[i] += other.positivesByLevel[i];
                negativesByLevel[i] += other.negativesByLevel[i];
            }
        } else {
            int n = Math.addExact(exactCount, other.exactCount);
            if (n > exactProbabilities.length) {
                exactProbabilities = Arrays.copyOf(exactProbabilities, n);
                exactLabels = Arrays.copyOf(exactLabels, n);
            }
            System.arraycopy(other.exactProbabilities, 0, exactProbabilities, exactCount, other.exactCount);
            System.arraycopy(other.exactLabels, 0, exactLabels, exactCount, other.exactCount);
            exactCount = n;
        }
    }

    /**
     * Cumulative counts at each curve point, in order of decreasing threshold, starting with the
     * point where nothing is predicted positive: {thresholds, truePositives, falsePositives}.
     */
    private Object[] points() {
        if (thresholdSteps > 0) {
            int n = thresholdSteps + 2;
            double[] thr = new double[n];
            long[] tp = new long[n];
            long[] fp = new long[n];
            thr[0] = Double.POSITIVE_INFINITY;
            long cumTp = 0;
            long cumFp = 0;
            for (int k = thresholdSteps; k >= 0; k--) {
                cumTp += positivesByLevel[k + 1];
                cumFp += negativesByLevel[k + 1];
                int i = thresholdSteps - k + 1;
                thr[i] = k / (double) thresholdSteps;
                tp[i] = cumTp;
                fp[i] = cumFp;
            }
            return new Object[] {thr, tp, fp};
        }
        // exact: sort the pairs by probability (as a sortable integer) with the label in the low bit
        long[] keys = new long[exactCount];
        for (int i = 0; i < exactCount; i++) {
            int bits = Float.floatToIntBits(exactProbabilities[i]);
            int sortable = bits ^ ((bits >> 31) & 0x7fffffff);
            keys[i] = ((long) sortable << 1) | (exactLabels[i] ? 1 : 0);
        }
        Arrays.sort(keys);
        double[] thr = new double[exactCount + 1];
        long[] tp = new long[exactCount + 1];
        long[] fp = new long[exactCount + 1];
        thr[0] = Double.POSITIVE_INFINITY;
        int points = 1;
        long cumTp = 0;
        long cumFp = 0;
        int i = exactCount - 1;
        while (i >= 0) {
            long group = keys[i] >> 1;
            while (i >= 0 && (keys[i] >> 1) == group) {
                if ((keys[i] & 1) == 1) {
                    cumTp++;
                } else {
                    cumFp++;
                }
                i--;
            }
            int sortable = (int) group;
            int bits = sortable ^ ((sortable >> 31) & 0x7fffffff);
            thr[points] = Float.intBitsToFloat(bits);
            tp[points] = cumTp;
            fp[points] = cumFp;
            points++;
        }
        return new Object[] {Arrays.copyOf(thr, points), Arrays.copyOf(tp, points), Arrays.copyOf(fp, points)};
    }

    /** @return the ROC curve (rates are NaN where a class has no examples) */
    public RocCurve getRocCurve() {
        Object[] pts = points();
        double[] thr = (double[]) pts[0];
        long[] tp = (long[]) pts[1];
        long[] fp = (long[]) pts[2];
        double[] fpr = new double[thr.length];
        double[] tpr = new double[thr.length];
        for (int i = 0; i < thr.length; i++) {
            fpr[i] = fp[i] / (double) countActualNegative;
            tpr[i] = tp[i] / (double) countActualPositive;
        }
        return new RocCurve(thr, fpr, tpr);
    }

    /** @return the precision-recall curve (recall is NaN without positive examples) */
    public PrecisionRecallCurve getPrecisionRecallCurve() {
        Object[] pts = points();
        double[] thr = (double[]) pts[0];
        long[] tp = (long[]) pts[1];
        long[] fp = (long[]) pts[2];
        double[] precision = new double[thr.length];
        double[] recall = new double[thr.length];
        for (int i = 0; i < thr.length; i++) {
            precision[i] = tp[i] + fp[i] == 0 ? 1.0 : tp[i] / (double) (tp[i] + fp[i]);
            recall[i] = tp[i] / (double) countActualPositive;
        }
        return new PrecisionRecallCurve(thr, precision, recall);
    }

    /** @return the area under the ROC curve; NaN without positive or without negative examples */
    public double calculateAUC() {
        if (countActualPositive == 0 || countActualNegative == 0) {
            return Double.NaN;
        }
        RocCurve c = getRocCurve();
        return trapezoid(c.fpr(), c.tpr());
    }

    /** @return the area under the precision-recall curve; NaN without positive examples */
    public double calculateAUCPR() {
        if (countActualPositive == 0) {
            return Double.NaN;
        }
        PrecisionRecallCurve c = getPrecisionRecallCurve();
        return trapezoid(c.recall(), c.precision());
    }

    /** Same as {@link #calculateAUCPR()}. */
    public double calculateAUPRC() {
        return calculateAUCPR();
    }

    static double trapezoid(double[] x, double[] y) {
        double area = 0;
        for (int i = 1; i < x.length; i++) {
            area += (x[i] - x[i - 1]) * (y[i] + y[i - 1]) / 2;
        }
        return area;
    }

    @Override
    public String stats() {
        return String.format(Locale.ROOT, "ROC (%s): AUC %.6f, AUPRC %.6f, %d positive and %d negative examples",
                isExact() ? "exact" : thresholdSteps + " threshold steps", calculateAUC(), calculateAUCPR(),
                countActualPositive, countActualNegative);
    }

    @Override
    public String toString() {
        return stats();
    }

    /** Same configuration and the same evaluated pairs (exact mode: as a multiset) or counts. */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ROC r) || r.thresholdSteps != thresholdSteps
                || r.countActualPositive != countActualPositive || r.countActualNegative != countActualNegative) {
            return false;
        }
        if (thresholdSteps > 0) {
            return Arrays.equals(positivesByLevel, r.positivesByLevel) && Arrays.equals(negativesByLevel,
                    r.negativesByLevel);
        }
        Object[] a = points();
        Object[] b = r.points();
        return Arrays.equals((double[]) a[0], (double[]) b[0]) && Arrays.equals((long[]) a[1], (long[]) b[1])
                && Arrays.equals((long[]) a[2], (long[]) b[2]);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(countActualPositive * 31 + countActualNegative) * 31 + thresholdSteps;
    }
}
