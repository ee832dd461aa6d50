package org.ferrodl.evaluation.classification;

import java.util.Arrays;
import java.util.Locale;
import org.ferrodl.evaluation.EvalInputs;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.evaluation.curves.Histogram;
import org.ferrodl.evaluation.curves.ReliabilityDiagram;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * How well a classifier's probabilities are calibrated: reliability diagrams, residual plots,
 * probability histograms and label/prediction counts per class.
 *
 * <p>Input: {@code N × C} one-hot labels and probabilities ({@code C >= 2}), or {@code N × 1}
 * binary labels and probabilities of class 1 (treated as two classes, {@code [1-p, p]}).
 * Per-example masks only. Probabilities fall into equal bins over [0, 1] (1.0 in the last bin).
 * <ul>
 *   <li>Reliability diagram of class {@code c}: for each of {@code reliabilityDiagNumBins} bins of
 *       {@code p_c} over all examples, the mean {@code p_c} (x) and the fraction of those examples
 *       whose label is {@code c} (y).</li>
 *   <li>Residual plot: histogram of {@code |label - p|} over every entry of every example; per
 *       label class {@code c}: of {@code |1 - p_c|} over the examples of class {@code c}.</li>
 *   <li>Probability histogram: of every entry {@code p}; per label class {@code c}: of {@code p_c}
 *       over the examples of class {@code c}.</li>
 *   <li>Label counts per class, and prediction counts (argmax, ties to the lowest index).</li>
 * </ul>
 * Counts merge exactly; the per-bin probability sums are doubles whose sum order may differ
 * between a merged and a local evaluation (last-bit differences). Not thread-safe.
 */
public class EvaluationCalibration implements IEvaluation<EvaluationCalibration> {
    private static final long serialVersionUID = 1L;

    public static final int DEFAULT_RELIABILITY_DIAG_NUM_BINS = 10;
    public static final int DEFAULT_HISTOGRAM_NUM_BINS = 50;

    private int reliabilityDiagNumBins;
    private int histogramNumBins;
    private boolean excludeEmptyBins;

    private int numClasses = -1;
    private long[][] rDiagBinPosCount;
    private long[][] rDiagBinTotalCount;
    private double[][] rDiagBinSumPredictions;
    private long[] labelCountsEachClass;
    private long[] predictionCountsEachClass;
    private long[] residualPlotOverall;
    private long[][] residualPlotByLabelClass;
    private long[] probHistogramOverall;
    private long[][] probHistogramByLabelClass;

    /** 10 reliability bins, 50 histogram bins, empty bins excluded from reliability diagrams. */
    public EvaluationCalibration() {
        this(DEFAULT_RELIABILITY_DIAG_NUM_BINS, DEFAULT_HISTOGRAM_NUM_BINS, true);
    }

    public EvaluationCalibration(int reliabilityDiagNumBins, int histogramNumBins) {
        this(reliabilityDiagNumBins, histogramNumBins, true);
    }

    /**
     * @param reliabilityDiagNumBins bins of the reliability diagrams (&gt;= 1)
     * @param histogramNumBins bins of the residual plots and probability histograms (&gt;= 1)
     * @param excludeEmptyBins leave bins without examples out of the reliability diagrams
     */
    public EvaluationCalibration(int reliabilityDiagNumBins, int histogramNumBins, boolean excludeEmptyBins) {
        if (reliabilityDiagNumBins < 1 || histogramNumBins < 1) {
            throw new IllegalArgumentException("bin counts must be >= 1, got reliabilityDiagNumBins="
                    + reliabilityDiagNumBins + ", histogramNumBins=" + histogramNumBins);
        }
        this.reliabilityDiagNumBins = reliabilityDiagNumBins;
        this.histogramNumBins = histogramNumBins;
        this.excludeEmptyBins = excludeEmptyBins;
    }

    private void allocate(int c) {
        numClasses = c;
        rDiagBinPosCount = new long[c][reliabilityDiagNumBins];
        rDiagBinTotalCount = new long[c][reliabilityDiagNumBins];
        rDiagBinSumPredictions = new double[c][reliabilityDiagNumBins];
        labelCountsEachClass = new long[c];
        predictionCountsEachClass = new long[c];
        residualPlotOverall = new long[histogramNumBins];
        residualPlotByLabelClass = new long[c][histogramNumBins];
        probHistogramOverall = new long[histogramNumBins];
        probHistogramByLabelClass = new long[c][histogramNumBins];
    }

    private static int bin(double p, int bins) {
        int b = (int) Math.floor(p * bins);
        return Math.max(0, Math.min(bins - 1, b));
    }

    @Override
    public void eval(INDArray labels, INDArray predictions, INDArray mask) {
        if (labels.rank() == 3) { // time series [N, C, T] with an [N, T] mask: one row per unmasked step
            evalTimeSeries(labels, predictions, mask);
            return;
        }
        int[] rc = EvalInputs.rowsCols(labels, predictions, "EvaluationCalibration");
        int rows = rc[0];
        int cols = rc[1];
        int classes = cols == 1 ? 2 : cols;
        if (numClasses < 0) {
            allocate(classes);
        } else if (numClasses != classes) {
            throw new IllegalArgumentException("this EvaluationCalibration has " + numClasses
                    + " classes but the labels have " + cols + " columns");
        }
        float[] m = EvalInputs.entryMask(mask, rows, cols, false, "EvaluationCalibration");
        float[] l = NDArray.internalData(labels);
        float[] p = NDArray.internalData(predictions);
        double[] prob = new double[classes];
        boolean[] label = new boolean[classes];
        for (int r = 0; r < rows; r++) {
            if (m != null && m[r * cols] == 0f) {
                continue;
            }
            int actual = -1;
            for (int c = 0; c < cols; c++) {
                boolean v = EvalInputs.binaryLabel(l[r * cols + c], r, c, "EvaluationCalibration");
                if (cols == 1) {
                    label[1] = v;
                    label[0] = !v;
                    prob[1] = p[r];
                    prob[0] = 1.0 - p[r];
                } else {
                    label[c] = v;
                    prob[c] = p[r * cols + c];
                }
            }
            int predicted = 0;
            for (int c = 0; c < classes; c++) {
                if (label[c]) {
                    if (actual >= 0) {
                        throw new IllegalArgumentException("EvaluationCalibration needs one-hot labels; row " + r
                                + " has more than one 1");
                    }
                    actual = c;
                }
                if (prob[c] > prob[predicted]) {
                    predicted = c;
                }
            }
            if (actual < 0) {
                throw new IllegalArgumentException("EvaluationCalibration needs one-hot labels; row " + r
                        + " has no 1");
            }
            labelCountsEachClass[actual]++;
            predictionCountsEachClass[predicted]++;
            for (int c = 0; c < classes; c++) {
                int b = bin(prob[c], reliabilityDiagNumBins);
                rDiagBinTotalCount[c][b]++;
                rDiagBinSumPredictions[c][b] += prob[c];
                if (label[c]) {
                    rDiagBinPosCount[c][b]++;
                }
                residualPlotOverall[bin(Math.abs((label[c] ? 1 : 0) - prob[c]), histogramNumBins)]++;
                probHistogramOverall[bin(prob[c], histogramNumBins)]++;
            }
            residualPlotByLabelClass[actual][bin(Math.abs(1 - prob[actual]), histogramNumBins)]++;
            probHistogramByLabelClass[actual][bin(prob[actual], histogramNumBins)]++;
        }
    }

    @Override
    public void merge(EvaluationCalibration other) {
        if (other == null || other.numClasses < 0) {
            return;
        }
        if (other.reliabilityDiagNumBins != reliabilityDiagNumBins || other.histogramNumBins != histogramNumBins) {
            throw new IllegalArgumentException("cannot merge EvaluationCalibration objects with different bins: "
                    + other.reliabilityDiagNumBins + "/" + other.histogramNumBins + " into "
                    + reliabilityDiagNumBins + "/" + histogramNumBins);
        }
        if (numClasses < 0) {
            allocate(other.numClasses);
        } else if (numClasses != other.numClasses) {
            throw new IllegalArgumentException("cannot merge an EvaluationCalibration of " + other.numClasses
                    + " classes into one of " + numClasses);
        }
        for (int c = 0; c < numClasses; c++) {
            add(rDiagBinPosCount[c], other.rDiagBinPosCount[c]);
            add(rDiagBinTotalCount[c], other.rDiagBinTotalCount[c]);
            for (int b = 0; b < reliabilityDiagNumBins; b++) {
                rDiagBinSumPredictions[c][b] += other.rDiagBinSumPredictions[c][b];
            }
            add(residualPlotByLabelClass[c], other.residualPlotByLabelClass[c]);
            add(probHistogramByLabelClass[c], other.probHistogramByLabelClass[c]);
        }
        add(labelCountsEachClass, other.labelCountsEachClass);
        add(predictionCountsEachClass, other.predictionCountsEachClass);
        add(residualPlotOverall, other.residualPlotOverall);
        add(probHistogramOverall, other.probHistogramOverall);
    }

    private static void add(long[] a, long[] b) {
        for (int i = 0; i < a.length; i++) {
            a[i] += b[i];
        }
    }

    @Override
    public void reset() {
        numClasses = -1;
        rDiagBinPosCount = null;
        rDiagBinTotalCount = null;
        rDiagBinSumPredictions = null;
        labelCountsEachClass = null;
        predictionCountsEachClass = null;
        residualPlotOverall = null;
        residualPlotByLabelClass = null;
        probHistogramOverall = null;
        probHistogramByLabelClass = null;
    }

    /** @return number of classes, or -1 before the first evaluation */
    public int numClasses() {
        return numClasses;
    }

    private void checkClass(int c) {
        if (numClasses < 0) {
            throw new IllegalStateException("nothing has been evaluated yet");
        }
        if (c < 0 || c >= numClasses) {
            throw new IllegalArgumentException("class " + c + " out of range for " + numClasses + " classes");
        }
    }

    /** @return the reliability diagram of class {@code classIdx} */
    public ReliabilityDiagram getReliabilityDiagram(int classIdx) {
        checkClass(classIdx);
        double[] x = new double[reliabilityDiagNumBins];
        double[] y = new double[reliabilityDiagNumBins];
        int n = 0;
        for (int b = 0; b < reliabilityDiagNumBins; b++) {
            long total = rDiagBinTotalCount[classIdx][b];
            if (total == 0 && excludeEmptyBins) {
                continue;
            }
            x[n] = total == 0 ? (b + 0.5) / reliabilityDiagNumBins : rDiagBinSumPredictions[classIdx][b] / total;
            y[n] = total == 0 ? 0.0 : rDiagBinPosCount[classIdx][b] / (double) total;
            n++;
        }
        return new ReliabilityDiagram("Reliability diagram: class " + classIdx, Arrays.copyOf(x, n),
                Arrays.copyOf(y, n));
    }

    /** @return histogram of {@code |label - p|} over all entries */
    public Histogram getResidualPlotAllClasses() {
        checkClass(0);
        return new Histogram("Residual plot: all classes", 0, 1, residualPlotOverall.clone());
    }

    /** @return histogram of {@code |1 - p_c|} over the examples of class {@code labelClassIdx} */
    public Histogram getResidualPlot(int labelClassIdx) {
        checkClass(labelClassIdx);
        return new Histogram("Residual plot: label class " + labelClassIdx, 0, 1,
                residualPlotByLabelClass[labelClassIdx].clone());
    }

    /** @return histogram of every predicted probability */
    public Histogram getProbabilityHistogramAllClasses() {
        checkClass(0);
        return new Histogram("Probability histogram: all classes", 0, 1, probHistogramOverall.clone());
    }

    /** @return histogram of {@code p_c} over the examples of class {@code labelClassIdx} */
    public Histogram getProbabilityHistogram(int labelClassIdx) {
        checkClass(labelClassIdx);
        return new Histogram("Probability histogram: label class " + labelClassIdx, 0, 1,
                probHistogramByLabelClass[labelClassIdx].clone());
    }

    /** @return the number of examples of each class */
    public long[] getLabelCountsEachClass() {
        return labelCountsEachClass == null ? null : labelCountsEachClass.clone();
    }

    /** @return the number of examples predicted as each class (argmax) */
    public long[] getPredictionCountsEachClass() {
        return predictionCountsEachClass == null ? null : predictionCountsEachClass.clone();
    }

    @Override
    public String stats() {
        if (numClasses < 0) {
            return "EvaluationCalibration: nothing evaluated";
        }
        StringBuilder sb = new StringBuilder("EvaluationCalibration\n");
        sb.append(String.format(Locale.ROOT, "%-8s %12s %12s%n", "class", "labels", "predictions"));
        for (int c = 0; c < numClasses; c++) {
            sb.append(String.format(Locale.ROOT, "%-8d %12d %12d%n", c, labelCountsEachClass[c],
                    predictionCountsEachClass[c]));
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return stats();
    }

    /** Same configuration and counts; probability sums equal to 1e-9 relative. */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof EvaluationCalibration e) || e.reliabilityDiagNumBins != reliabilityDiagNumBins
                || e.histogramNumBins != histogramNumBins || e.excludeEmptyBins != excludeEmptyBins
                || e.numClasses != numClasses) {
            return false;
        }
        if (numClasses < 0) {
            return true;
        }
        for (int c = 0; c < numClasses; c++) {
            for (int b = 0; b < reliabilityDiagNumBins; b++) {
                double a = rDiagBinSumPredictions[c][b];
                double x = e.rDiagBinSumPredictions[c][b];
                if (Math.abs(a - x) > 1e-9 * Math.max(1, Math.abs(a))) {
                    return false;
                }
            }
        }
        return Arrays.deepEquals(rDiagBinPosCount, e.rDiagBinPosCount)
                && Arrays.deepEquals(rDiagBinTotalCount, e.rDiagBinTotalCount)
                && Arrays.equals(labelCountsEachClass, e.labelCountsEachClass)
                && Arrays.equals(predictionCountsEachClass, e.predictionCountsEachClass)
                && Arrays.equals(residualPlotOverall, e.residualPlotOverall)
                && Arrays.deepEquals(residualPlotByLabelClass, e.residualPlotByLabelClass)
                && Arrays.equals(probHistogramOverall, e.probHistogramOverall)
                && Arrays.deepEquals(probHistogramByLabelClass, e.probHistogramByLabelClass);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(labelCountsEachClass) * 31 + numClasses;
    }
}
