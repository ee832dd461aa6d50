package org.ferrodl.evaluation.classification;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.ferrodl.evaluation.EvaluationAveraging;
import org.ferrodl.evaluation.IEvaluation;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * Classification metrics from a confusion matrix; pure Java, serializable and mergeable (for
 * distributed evaluation: evaluate parts separately, then {@link #merge(Evaluation)}).
 *
 * <h2>Predicted and actual class</h2>
 * For {@code N × C} labels and predictions with {@code C >= 2}, the class of a row is its argmax
 * (ties go to the lowest index). For a single column ({@code C == 1}, binary with a sigmoid output)
 * there are two classes: a value {@code >= 0.5} is class 1, otherwise class 0.
 *
 * <h2>Averaging of the no-argument metrics</h2>
 * <ul>
 *   <li>{@link #accuracy()}: correct / all counted examples; 0 when nothing was evaluated.</li>
 *   <li>With exactly two classes, {@link #precision()}, {@link #recall()} and {@link #f1()} return
 *       the value of the positive class 1 (as the reference does since its 1.0.0 releases).</li>
 *   <li>With three or more classes they are macro averages: the mean of the per-class values over
 *       the classes where the value is defined. Precision of class {@code c} is defined when
 *       {@code c} was predicted at least once ({@code TP + FP > 0}); recall when {@code c} occurs in
 *       the labels ({@code TP + FN > 0}); F1 when both are defined. A class absent from both labels
 *       and predictions is therefore excluded from all three averages (it counts neither as 0 nor
 *       as 1); a class that occurs only in the labels counts in recall (as 0) but not in precision,
 *       and not in F1. When no class qualifies the average is 0.</li>
 * </ul>
 * The per-class methods ({@link #precision(int)}, ...) return 0 where the value is undefined.
 *
 * <h2>Label names and top-N accuracy</h2>
 * Classes may be named ({@link #Evaluation(List)}); {@link #stats()} then prints the names. With
 * {@code topN > 1} an example also counts as top-N correct when fewer than {@code topN} classes
 * have a strictly higher predicted probability than its actual class; {@link #topNAccuracy()} is
 * the fraction of such examples (for {@code topN <= 1} it is {@link #accuracy()}).
 *
 * <p>Not thread-safe.
 */
public class Evaluation implements IEvaluation<Evaluation> {
    private static final long serialVersionUID = 1L;

    /** Metrics by name, for {@link #scoreForMetric(Metric)} (early stopping). */
    public enum Metric {
        ACCURACY, F1, PRECISION, RECALL, GMEASURE;

        /** @return false: every metric of a classifier is better when larger */
        public boolean minimize() {
            return false;
        }
    }

    /** Threshold for single-column (binary) labels and predictions. */
    public static final double BINARY_THRESHOLD = 0.5;

    private int numClasses = -1;
    private ConfusionMatrix confusion;
    private int numRowCounter;
    private List<String> labelsList;
    private int topN = 1;
    private long topNCorrectCount;
    private long topNTotalCount;

    /** An evaluation whose number of classes is taken from the first {@code eval} call. */
    public Evaluation() {
    }

    /** @param labels the class names, in class order (their count is the number of classes) */
    public Evaluation(List<String> labels) {
        this(labels, 1);
    }

    /**
     * @param labels the class names, in class order (their count is the number of classes)
     * @param topN N of {@link #topNAccuracy()} (&gt;= 1)
     */
    public Evaluation(List<String> labels, int topN) {
        Objects.requireNonNull(labels, "labels");
        if (labels.isEmpty()) {
            throw new IllegalArgumentException("at least one label name is needed");
        }
        if (topN < 1) {
            throw new IllegalArgumentException("topN must be >= 1, got " + topN);
        }
        this.labelsList = new ArrayList<>(labels);
        this.topN = topN;
        setNumClasses(labels.size() == 1 ? 2 : labels.size());
    }

    /** @param labels class index to name, for classes {@code 0..n-1} */
    public Evaluation(Map<Integer, String> labels) {
        this(namesInOrder(labels), 1);
    }

    /**
     * @param numClasses number of classes
     * @param topN N of {@link #topNAccuracy()} (&gt;= 1)
     */
    public Evaluation(int numClasses, int topN) {
        this(numClasses);
        if (topN < 1) {
            throw new IllegalArgumentException("topN must be >= 1, got " + topN);
        }
        this.topN = topN;
    }

    private static List<String> namesInOrder(Map<Integer, String> labels) {
        Objects.requireNonNull(labels, "labels");
        List<String> names = new ArrayList<>();
        for (int i = 0; i < labels.size(); i++) {
            String n = labels.get(i);
            if (n == null) {
                throw new IllegalArgumentException("label map must name classes 0.." + (labels.size() - 1)
                        + "; class " + i + " has no name");
            }
            names.add(n);
        }
        return names;
    }

    /** @param numClasses number of classes (&gt;= 2; one output column means 2 classes) */
    public Evaluation(int numClasses) {
        if (numClasses < 1) {
            throw new IllegalArgumentException("numClasses must be >= 1, got " + numClasses);
        }
        setNumClasses(numClasses == 1 ? 2 : numClasses);
    }

    private void setNumClasses(int n) {
        this.numClasses = n;
        this.confusion = new ConfusionMatrix(n);
    }

    /**
     * Counts one minibatch.
     *
     * @param labels {@code N × C} one-hot (or probability) labels, or {@code N × 1} binary labels
     * @param predictions network output of the same shape
     */
    public void eval(INDArray labels, INDArray predictions) {
        eval(labels, predictions, null);
    }

    /**
     * Counts one minibatch, skipping the examples whose mask value is 0.
     *
     * @param labels {@code N × C} labels
     * @param predictions {@code N × C} network output
     * @param labelsMask null, or a per-example mask of shape {@code N × 1} or {@code [N]}; for time
     *     series labels {@code [N, C, T]}, null or a per-step mask {@code [N, T]}
     * @throws IllegalArgumentException for mismatched shapes or a per-output ({@code N × C}, C &gt; 1) mask
     */
    public void eval(INDArray labels, INDArray predictions, INDArray labelsMask) {
        if (labels.rank() == 3) { // time series: one row per unmasked (example, step), as the reference
            evalTimeSeries(labels, predictions, labelsMask);
            return;
        }
        if (labels.rank() != 2 || predictions.rank() != 2) {
            throw new IllegalArgumentException("Evaluation needs rank-2 labels and predictions, got shapes "
                    + Arrays.toString(labels.shape()) + " and " + Arrays.toString(predictions.shape()));
        }
        if (!Arrays.equals(labels.shape(), predictions.shape())) {
            throw new IllegalArgumentException("labels and predictions shapes differ: "
                    + Arrays.toString(labels.shape()) + " vs " + Arrays.toString(predictions.shape()));
        }
        int rows = (int) labels.size(0);
        int cols = (int) labels.size(1);
        int classes = cols == 1 ? 2 : cols;
        if (numClasses < 0) {
            setNumClasses(classes);
        } else if (classes != numClasses) {
            throw new IllegalArgumentException("this Evaluation has " + numClasses + " classes"
                    + (labelsList != null ? " " + labelsList : "") + " but the labels have " + cols + " columns");
        }
        float[] mask = null;
        if (labelsMask != null) {
            boolean perExample = labelsMask.length() == rows
                    && (labelsMask.rank() == 1 || (labelsMask.rank() == 2 && labelsMask.size(1) == 1));
            if (!perExample) {
                throw new IllegalArgumentException("Evaluation supports only per-example label masks (N x 1); got "
                        + Arrays.toString(labelsMask.shape()) + " for " + rows + " examples");
            }
            mask = NDArray.internalData(labelsMask);
        }
        float[] l = NDArray.internalData(labels);
        float[] p = NDArray.internalData(predictions);
        for (int r = 0; r < rows; r++) {
            if (mask != null && mask[r] == 0f) {
                continue;
            }
            int actual = classOf(l, r, cols);
            int predicted = classOf(p, r, cols);
            confusion.add(actual, predicted);
            numRowCounter++;
            if (topN > 1 && cols > 1) {
                float trueProb = p[r * cols + actual];
                int higher = 0;
                for (int c = 0; c < cols; c++) {
                    if (p[r * cols + c] > trueProb) {
                        higher++;
                    }
                }
                if (higher < topN) {
                    topNCorrectCount++;
                }
                topNTotalCount++;
            }
        }
    }

    private static int classOf(float[] d, int row, int cols) {
        if (cols == 1) {
            return d[row] >= BINARY_THRESHOLD ? 1 : 0;
        }
        int off = row * cols;
        int best = 0;
        for (int c = 1; c < cols; c++) {
            if (d[off + c] > d[off + best]) {
                best = c;
            }
        }
        return best;
    }

    /**
     * Adds another evaluation's counts to this one.
     *
     * @param other an evaluation with the same number of classes (or none yet)
     */
    public void merge(Evaluation other) {
        if (other == null || other.numClasses < 0) {
            return;
        }
        if (numClasses < 0) {
            setNumClasses(other.numClasses);
        } else if (numClasses != other.numClasses) {
            throw new IllegalArgumentException("cannot merge an Evaluation of " + other.numClasses
                    + " classes into one of " + numClasses);
        }
        if (other.topN != topN) {
            throw new IllegalArgumentException("cannot merge an Evaluation with topN=" + other.topN
                    + " into one with topN=" + topN);
        }
        if (labelsList != null && other.labelsList != null && !labelsList.equals(other.labelsList)) {
            throw new IllegalArgumentException("cannot merge Evaluations with different label names: "
                    + other.labelsList + " into " + labelsList);
        }
        if (labelsList == null && other.labelsList != null) {
            labelsList = new ArrayList<>(other.labelsList);
        }
        confusion.add(other.confusion);
        numRowCounter += other.numRowCounter;
        topNCorrectCount += other.topNCorrectCount;
        topNTotalCount += other.topNTotalCount;
    }

    /** Forgets every count (the number of classes is kept only when label names fix it). */
    @Override
    public void reset() {
        numRowCounter = 0;
        topNCorrectCount = 0;
        topNTotalCount = 0;
        if (labelsList != null) {
            setNumClasses(labelsList.size() == 1 ? 2 : labelsList.size());
        } else if (numClasses > 0) {
            setNumClasses(numClasses);
        }
    }

    /** @return the class names, or null when none were given */
    public List<String> getLabelsList() {
        return labelsList == null ? null : List.copyOf(labelsList);
    }

    /** @return the name of class {@code c}, or its index as text without names */
    public String getClassLabel(int c) {
        return labelsList != null && c < labelsList.size() ? labelsList.get(c) : String.valueOf(c);
    }

    /** @return N of the top-N accuracy */
    public int getTopN() {
        return topN;
    }

    /** @return examples whose actual class is among the N most probable (counted when topN &gt; 1) */
    public long getTopNCorrectCount() {
        return topN <= 1 ? Math.round(accuracy() * numRowCounter) : topNCorrectCount;
    }

    /** @return examples counted for the top-N accuracy */
    public long getTopNTotalCount() {
        return topN <= 1 ? numRowCounter : topNTotalCount;
    }

    /** @return top-N accuracy; {@link #accuracy()} when topN &lt;= 1; 0 when nothing was counted */
    public double topNAccuracy() {
        if (topN <= 1 || topNTotalCount == 0) {
            return topN <= 1 ? accuracy() : 0.0;
        }
        return topNCorrectCount / (double) topNTotalCount;
    }

    /** @return the number of classes, or -1 before the first evaluation */
    public int getNumClasses() {
        return numClasses;
    }

    /** @return the confusion matrix (live), or null before the first evaluation */
    public ConfusionMatrix getConfusionMatrix() {
        return confusion;
    }

    /** @return the number of examples counted */
    public int getNumRowCounter() {
        return numRowCounter;
    }

    /**
     * @param c class
     * @return true positives of class c
     */
    public long truePositives(int c) {
        return confusion == null ? 0 : confusion.getCount(c, c);
    }

    /**
     * @param c class
     * @return false positives of class c (predicted c, actually another class)
     */
    public long falsePositives(int c) {
        return confusion == null ? 0 : confusion.getPredictedTotal(c) - confusion.getCount(c, c);
    }

    /**
     * @param c class
     * @return false negatives of class c (actually c, predicted another class)
     */
    public long falseNegatives(int c) {
        return confusion == null ? 0 : confusion.getActualTotal(c) - confusion.getCount(c, c);
    }

    /**
     * @param c class
     * @return true negatives of class c
     */
    public long trueNegatives(int c) {
        return numRowCounter - truePositives(c) - falsePositives(c) - falseNegatives(c);
    }

    /** @return the fraction of counted examples classified correctly; 0 when none were counted */
    public double accuracy() {
        if (numRowCounter == 0) {
            return 0.0;
        }
        long correct = 0;
        for (int c = 0; c < numClasses; c++) {
            correct += confusion.getCount(c, c);
        }
        return correct / (double) numRowCounter;
    }

    private static final double UNDEFINED = -1;

    private double precisionOrUndefined(int c) {
        long tp = truePositives(c);
        long fp = falsePositives(c);
        return tp + fp == 0 ? UNDEFINED : tp / (double) (tp + fp);
    }

    private double recallOrUndefined(int c) {
        long tp = truePositives(c);
        long fn = falseNegatives(c);
        return tp + fn == 0 ? UNDEFINED : tp / (double) (tp + fn);
    }

    private double f1OrUndefined(int c) {
        double p = precisionOrUndefined(c);
        double r = recallOrUndefined(c);
        if (p == UNDEFINED || r == UNDEFINED) {
            return UNDEFINED;
        }
        return p == 0 || r == 0 ? 0.0 : 2 * p * r / (p + r);
    }

    private void checkClass(int c) {
        if (numClasses < 0) {
            throw new IllegalStateException("nothing has been evaluated yet");
        }
        if (c < 0 || c >= numClasses) {
            throw new IllegalArgumentException("class " + c + " out of range for " + numClasses + " classes");
        }
    }

    /**
     * @param c class
     * @return TP / (TP + FP) of class c; 0 when c was never predicted
     */
    public double precision(int c) {
        checkClass(c);
        return Math.max(0.0, precisionOrUndefined(c));
    }

    /**
     * @param c class
     * @return TP / (TP + FN) of class c; 0 when c never occurs in the labels
     */
    public double recall(int c) {
        checkClass(c);
        return Math.max(0.0, recallOrUndefined(c));
    }

    /**
     * @param c class
     * @return harmonic mean of precision(c) and recall(c); 0 where undefined or both 0
     */
    public double f1(int c) {
        checkClass(c);
        return Math.max(0.0, f1OrUndefined(c));
    }

    /** @return precision: class 1's for two classes, else the macro average (see class doc) */
    public double precision() {
        return numClasses == 2 ? precision(1) : precision(EvaluationAveraging.Macro);
    }

    /** @return recall: class 1's for two classes, else the macro average (see class doc) */
    public double recall() {
        return numClasses == 2 ? recall(1) : recall(EvaluationAveraging.Macro);
    }

    /** @return F1: class 1's for two classes, else the macro average (see class doc) */
    public double f1() {
        return numClasses == 2 ? f1(1) : f1(EvaluationAveraging.Macro);
    }

    /**
     * @param averaging macro or micro
     * @return averaged precision over all classes
     */
    public double precision(EvaluationAveraging averaging) {
        return average(averaging, 0);
    }

    /**
     * @param averaging macro or micro
     * @return averaged recall over all classes
     */
    public double recall(EvaluationAveraging averaging) {
        return average(averaging, 1);
    }

    /**
     * @param averaging macro or micro
     * @return averaged F1 over all classes
     */
    public double f1(EvaluationAveraging averaging) {
        return average(averaging, 2);
    }

    private double average(EvaluationAveraging averaging, int metric) {
        if (numRowCounter == 0) {
            return 0.0;
        }
        if (averaging == EvaluationAveraging.Micro) {
            long tp = 0;
            long fp = 0;
            long fn = 0;
            for (int c = 0; c < numClasses; c++) {
                tp += truePositives(c);
                fp += falsePositives(c);
                fn += falseNegatives(c);
            }
            double p = tp + fp == 0 ? 0 : tp / (double) (tp + fp);
            double r = tp + fn == 0 ? 0 : tp / (double) (tp + fn);
            if (metric == 0) {
                return p;
            }
            if (metric == 1) {
                return r;
            }
            return p == 0 || r == 0 ? 0 : 2 * p * r / (p + r);
        }
        double sum = 0;
        int count = 0;
        for (int c = 0; c < numClasses; c++) {
            double v = metric == 0 ? precisionOrUndefined(c) : metric == 1 ? recallOrUndefined(c) : f1OrUndefined(c);
            if (v != UNDEFINED) {
                sum += v;
                count++;
            }
        }
        return count == 0 ? 0.0 : sum / count;
    }

    /**
     * @param metric the metric
     * @return its value as {@link #accuracy()}, {@link #f1()}, {@link #precision()},
     *     {@link #recall()} or, for GMEASURE, {@code sqrt(precision() * recall())}
     */
    public double scoreForMetric(Metric metric) {
        switch (metric) {
            case ACCURACY:
                return accuracy();
            case F1:
                return f1();
            case PRECISION:
                return precision();
            case RECALL:
                return recall();
            case GMEASURE:
                return Math.sqrt(precision() * recall());
            default:
                throw new IllegalArgumentException("unknown metric " + metric);
        }
    }

    /** @return a text report: counts, metrics and the confusion matrix */
    public String stats() {
        StringBuilder sb = new StringBuilder();
        sb.append("========================Evaluation Metrics========================\n");
        sb.append(" # of classes:    ").append(numClasses < 0 ? 0 : numClasses).append('\n');
        sb.append(" # of examples:   ").append(numRowCounter).append('\n');
        sb.append(String.format(Locale.ROOT, " Accuracy:        %.4f%n", accuracy()));
        if (topN > 1) {
            sb.append(String.format(Locale.ROOT, " Top %d Accuracy:  %.4f%n", topN, topNAccuracy()));
        }
        String avg = numClasses == 2 ? " (positive class 1)" : " (macro-averaged over classes where defined)";
        if (numClasses >= 0) {
            sb.append(String.format(Locale.ROOT, " Precision:       %.4f%s%n", precision(), avg));
            sb.append(String.format(Locale.ROOT, " Recall:          %.4f%s%n", recall(), avg));
            sb.append(String.format(Locale.ROOT, " F1 Score:        %.4f%s%n", f1(), avg));
            sb.append("\n=========================Confusion Matrix=========================\n");
            sb.append("(rows: actual class, columns: predicted class)\n");
            sb.append(confusion);
            if (labelsList != null) {
                for (int c = 0; c < labelsList.size(); c++) {
                    sb.append(String.format(Locale.ROOT, "%6d = %s%n", c, labelsList.get(c)));
                }
            }
        }
        sb.append("==================================================================");
        return sb.toString();
    }

    @Override
    public String toString() {
        return stats();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Evaluation)) {
            return false;
        }
        Evaluation e = (Evaluation) o;
        return numClasses == e.numClasses && numRowCounter == e.numRowCounter
                && Objects.equals(confusion, e.confusion) && Objects.equals(labelsList, e.labelsList)
                && topN == e.topN && topNCorrectCount == e.topNCorrectCount && topNTotalCount == e.topNTotalCount;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(numClasses, numRowCounter, confusion);
    }
}
