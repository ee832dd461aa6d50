package org.ferrodl.evaluation.regression;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.cpu.nativecpu.NDArray;

/**
 * Regression metrics per output column; pure Java, serializable and mergeable (evaluate parts of the
 * data separately, then {@link #merge(RegressionEvaluation)}).
 *
 * <h2>Metrics of column {@code j}</h2>
 * Over the {@code n} counted (unmasked) values {@code y} (label) and {@code p} (prediction) of the
 * column, with {@code ȳ}, {@code p̄} their means:
 * <ul>
 *   <li>MSE {@code = Σ(y-p)² / n}; MAE {@code = Σ|y-p| / n}; RMSE {@code = √MSE};</li>
 *   <li>RSE (relative squared error) {@code = Σ(y-p)² / Σ(y-ȳ)²};</li>
 *   <li>R² (coefficient of determination) {@code = 1 - RSE};</li>
 *   <li>PC (Pearson correlation) {@code = Σ(y-ȳ)(p-p̄) / √(Σ(y-ȳ)² · Σ(p-p̄)²)}.</li>
 * </ul>
 * Every metric is NaN for a column with no counted values. RSE, R² and PC divide by the spread of
 * the labels (and PC also of the predictions): when that is 0 they follow IEEE arithmetic (an
 * infinite RSE, a NaN PC, ...). The sums of squared deviations are accumulated with Welford's
 * update and Chan's merge, so they do not suffer from the cancellation of {@code Σy² - (Σy)²/n}.
 * The {@code average...} methods are means of the per-column values.
 *
 * <p>Not thread-safe.
 */
public class RegressionEvaluation implements org.ferrodl.evaluation.IEvaluation<RegressionEvaluation> {
    private static final long serialVersionUID = 1L;

    /** Number of significant digits {@link #stats()} prints by default. */
    public static final int DEFAULT_PRECISION = 5;

    /** The metrics, for {@link #scoreForMetric(Metric)}. */
    public enum Metric {
        MSE, MAE, RMSE, RSE, PC, R2;

        /** @return true when smaller values are better */
        public boolean minimize() {
            return this != PC && this != R2;
        }
    }

    private List<String> columnNames;
    private final int precision;
    private int columns = -1;
    // per column
    private long[] count;
    private double[] meanLabel;
    private double[] meanPrediction;
    private double[] m2Label;
    private double[] m2Prediction;
    private double[] coMoment;
    private double[] sumSquaredErrors;
    private double[] sumAbsoluteErrors;

    /** An evaluation whose number of columns is taken from the first {@code eval} call. */
    public RegressionEvaluation() {
        this.precision = DEFAULT_PRECISION;
    }

    /** @param nColumns number of columns (&gt;= 1); named {@code col_0}, {@code col_1}, ... */
    public RegressionEvaluation(long nColumns) {
        this(nColumns, DEFAULT_PRECISION);
    }

    /**
     * @param nColumns number of columns (&gt;= 1)
     * @param precision significant digits in {@link #stats()} (&gt;= 1)
     */
    public RegressionEvaluation(long nColumns, long precision) {
        this(defaultNames(nColumns), precision);
    }

    /** @param columnNames one name per column */
    public RegressionEvaluation(String... columnNames) {
        this(Arrays.asList(Objects.requireNonNull(columnNames, "columnNames")), DEFAULT_PRECISION);
    }

    /** @param columnNames one name per column */
    public RegressionEvaluation(List<String> columnNames) {
        this(columnNames, DEFAULT_PRECISION);
    }

    /**
     * @param columnNames one name per column (at least one)
     * @param precision significant digits in {@link #stats()} (&gt;= 1)
     */
    public RegressionEvaluation(List<String> columnNames, long precision) {
        Objects.requireNonNull(columnNames, "columnNames");
        if (columnNames.isEmpty()) {
            throw new IllegalArgumentException("at least one column is needed");
        }
        if (precision < 1 || precision > 17) {
            throw new IllegalArgumentException("precision must be in 1..17, got " + precision);
        }
        this.precision = (int) precision;
        this.columnNames = new ArrayList<>(columnNames);
        allocate(columnNames.size());
    }

    private static List<String> defaultNames(long n) {
        if (n < 1 || n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("nColumns must be >= 1, got " + n);
        }
        List<String> names = new ArrayList<>((int) n);
        for (int i = 0; i < n; i++) {
            names.add("col_" + i);
        }
        return names;
    }

    private void allocate(int n) {
        columns = n;
        count = new long[n];
        meanLabel = new double[n];
        meanPrediction = new double[n];
        m2Label = new double[n];
        m2Prediction = new double[n];
        coMoment = new double[n];
        sumSquaredErrors = new double[n];
        sumAbsoluteErrors = new double[n];
    }

    /** Forgets every value counted so far (the number of columns and their names stay). */
    @Override
    public void reset() {
        if (columns > 0) {
            allocate(columns);
        }
    }

    /**
     * Counts one minibatch.
     *
     * @param labels {@code N × C} true values
     * @param predictions {@code N × C} network output
     */
    public void eval(INDArray labels, INDArray predictions) {
        eval(labels, predictions, null);
    }

    /**
     * Counts one minibatch, skipping masked values.
     *
     * @param labels {@code N × C} true values
     * @param predictions {@code N × C} network output
     * @param mask null; a per-example mask ({@code [N]} or {@code N × 1}); or a per-output mask
     *     ({@code N × C}). A value is counted where its mask is not 0.
     * @throws IllegalArgumentException for shapes that do not match each other or this evaluation
     */
    public void eval(INDArray labels, INDArray predictions, INDArray mask) {
        Objects.requireNonNull(labels, "labels");
        Objects.requireNonNull(predictions, "predictions");
        if (labels.rank() == 3) { // time series: one row per unmasked (example, step), as the reference
            evalTimeSeries(labels, predictions, mask);
            return;
        }
        if (labels.rank() != 2 || predictions.rank() != 2) {
            throw new IllegalArgumentException("RegressionEvaluation needs rank-2 labels and predictions, got shapes "
                    + Arrays.toString(labels.shape()) + " and " + Arrays.toString(predictions.shape()));
        }
        if (!Arrays.equals(labels.shape(), predictions.shape())) {
            throw new IllegalArgumentException("labels and predictions shapes differ: "
                    + Arrays.toString(labels.shape()) + " vs " + Arrays.toString(predictions.shape()));
        }
        int rows = Math.toIntExact(labels.size(0));
        int cols = Math.toIntExact(labels.size(1));
        if (columns < 0) {
            columnNames = defaultNames(cols);
            allocate(cols);
        } else if (cols != columns) {
            throw new IllegalArgumentException("this RegressionEvaluation has " + columns
                    + " columns but the labels have " + cols);
        }
        float[] m = null;
        boolean perOutput = false;
        if (mask != null) {
            boolean perExample = mask.length() == rows
                    && (mask.rank() == 1 || (mask.rank() == 2 && mask.size(1) == 1));
            perOutput = !perExample && Arrays.equals(mask.shape(), labels.shape());
            if (!perExample && !perOutput) {
                throw new IllegalArgumentException("the mask must be per example ([" + rows + "] or [" + rows
                        + ", 1]) or per output (" + Arrays.toString(labels.shape()) + "), got "
                        + Arrays.toString(mask.shape()));
            }
            m = NDArray.internalData(mask);
        }
        float[] y = NDArray.internalData(labels);
        float[] p = NDArray.internalData(predictions);
        for (int r = 0; r < rows; r++) {
            if (m != null && !perOutput && m[r] == 0f) {
                continue;
            }
            for (int c = 0; c < cols; c++) {
                int i = r * cols + c;
                if (perOutput && m[i] == 0f) {
                    continue;
                }
                add(c, y[i], p[i]);
            }
        }
    }

    /** Welford's update of the means, squared deviations and co-moment of column {@code c}. */
    private void add(int c, double y, double p) {
        long n = ++count[c];
        double dy = y - meanLabel[c];
        double dp = p - meanPrediction[c];
        meanLabel[c] += dy / n;
        meanPrediction[c] += dp / n;
        m2Label[c] += dy * (y - meanLabel[c]);
        m2Prediction[c] += dp * (p - meanPrediction[c]);
        coMoment[c] += dy * (p - meanPrediction[c]);
        double e = y - p;
        sumSquaredErrors[c] += e * e;
        sumAbsoluteErrors[c] += Math.abs(e);
    }

    /**
     * Adds another evaluation's values to this one.
     *
     * @param other an evaluation with the same number of columns, or none yet
     */
    public void merge(RegressionEvaluation other) {
        Objects.requireNonNull(other, "other");
        if (other.columns < 0) {
            return;
        }
        if (columns < 0) {
            columnNames = new ArrayList<>(other.columnNames);
            allocate(other.columns);
        } else if (other.columns != columns) {
            throw new IllegalArgumentException("cannot merge a RegressionEvaluation of " + other.columns
                    + " columns into one of " + columns);
        }
        for (int c = 0; c < columns; c++) {
            long na = count[c];
            long nb = other.count[c];
            if (nb == 0) {
                continue;
            }
            double n = na + nb;
            double dy = other.meanLabel[c] - meanLabel[c];
            double dp = other.meanPrediction[c] - meanPrediction[c];
            double w = na * (double) nb / n;
            m2Label[c] += other.m2Label[c] + dy * dy * w;
            m2Prediction[c] += other.m2Prediction[c] + dp * dp * w;
            coMoment[c] += other.coMoment[c] + dy * dp * w;
            meanLabel[c] += dy * nb / n;
            meanPrediction[c] += dp * nb / n;
            count[c] = na + nb;
            sumSquaredErrors[c] += other.sumSquaredErrors[c];
            sumAbsoluteErrors[c] += other.sumAbsoluteErrors[c];
        }
    }

    /** @return number of columns, or -1 before the first {@code eval} of a no-argument evaluation */
    public int numColumns() {
        return columns;
    }

    /** @return the column names (read-only), empty before the number of columns is known */
    public List<String> getColumnNames() {
        return columnNames == null ? Collections.emptyList() : Collections.unmodifiableList(columnNames);
    }

    private void check(int column) {
        if (column < 0 || column >= columns) {
            throw new IllegalArgumentException("column " + column + " is out of range: this evaluation has "
                    + Math.max(columns, 0) + " columns");
        }
    }

    /**
     * @param column a column
     * @return the number of values counted in it
     */
    public long exampleCount(int column) {
        check(column);
        return count[column];
    }

    /**
     * @param column a column
     * @return mean squared error
     */
    public double meanSquaredError(int column) {
        check(column);
        return count[column] == 0 ? Double.NaN : sumSquaredErrors[column] / count[column];
    }

    /**
     * @param column a column
     * @return mean absolute error
     */
    public double meanAbsoluteError(int column) {
        check(column);
        return count[column] == 0 ? Double.NaN : sumAbsoluteErrors[column] / count[column];
    }

    /**
     * @param column a column
     * @return root mean squared error
     */
    public double rootMeanSquaredError(int column) {
        return Math.sqrt(meanSquaredError(column));
    }

    /**
     * @param column a column
     * @return relative squared error: squared errors over the labels' squared deviations from their mean
     */
    public double relativeSquaredError(int column) {
        check(column);
        return count[column] == 0 ? Double.NaN : sumSquaredErrors[column] / m2Label[column];
    }

    /**
     * @param column a column
     * @return coefficient of determination R² = 1 - RSE
     */
    public double rSquared(int column) {
        return 1.0 - relativeSquaredError(column);
    }

    /**
     * @param column a column
     * @return Pearson correlation of labels and predictions
     */
    public double pearsonCorrelation(int column) {
        check(column);
        return count[column] == 0 ? Double.NaN
                : coMoment[column] / Math.sqrt(m2Label[column] * m2Prediction[column]);
    }

    /**
     * The reference's older name of {@link #pearsonCorrelation(int)} (it is the correlation, not
     * its square).
     *
     * @param column a column
     * @return Pearson correlation of labels and predictions
     */
    public double correlationR2(int column) {
        return pearsonCorrelation(column);
    }

    private interface PerColumn {
        double of(int column);
    }

    private double average(PerColumn f) {
        if (columns <= 0) {
            return Double.NaN;
        }
        double s = 0;
        for (int c = 0; c < columns; c++) {
            s += f.of(c);
        }
        return s / columns;
    }

    /** @return mean over columns of {@link #meanSquaredError(int)} */
    public double averageMeanSquaredError() {
        return average(this::meanSquaredError);
    }

    /** @return mean over columns of {@link #meanAbsoluteError(int)} */
    public double averageMeanAbsoluteError() {
        return average(this::meanAbsoluteError);
    }

    /** @return mean over columns of {@link #rootMeanSquaredError(int)} (the reference's spelling) */
    public double averagerootMeanSquaredError() {
        return average(this::rootMeanSquaredError);
    }

    /** @return the same as {@link #averagerootMeanSquaredError()} */
    public double averageRootMeanSquaredError() {
        return averagerootMeanSquaredError();
    }

    /** @return mean over columns of {@link #relativeSquaredError(int)} (the reference's spelling) */
    public double averagerelativeSquaredError() {
        return average(this::relativeSquaredError);
    }

    /** @return the same as {@link #averagerelativeSquaredError()} */
    public double averageRelativeSquaredError() {
        return averagerelativeSquaredError();
    }

    /** @return mean over columns of {@link #pearsonCorrelation(int)} */
    public double averagePearsonCorrelation() {
        return average(this::pearsonCorrelation);
    }

    /** @return the same as {@link #averagePearsonCorrelation()} (the reference's older name) */
    public double averagecorrelationR2() {
        return averagePearsonCorrelation();
    }

    /** @return mean over columns of {@link #rSquared(int)} */
    public double averageRSquared() {
        return average(this::rSquared);
    }

    /**
     * @param metric a metric
     * @return its average over the columns
     */
    public double scoreForMetric(Metric metric) {
        switch (Objects.requireNonNull(metric, "metric")) {
            case MSE:
                return averageMeanSquaredError();
            case MAE:
                return averageMeanAbsoluteError();
            case RMSE:
                return averagerootMeanSquaredError();
            case RSE:
                return averagerelativeSquaredError();
            case PC:
                return averagePearsonCorrelation();
            case R2:
                return averageRSquared();
            default:
                throw new IllegalArgumentException("unknown metric " + metric);
        }
    }

    /**
     * @return a table with one row per column: its name, MSE, MAE, RMSE, RSE, PC and R², in
     *     scientific notation with {@code precision} significant digits; a note when nothing was
     *     evaluated
     */
    public String stats() {
        long counted = 0;
        for (int c = 0; c < Math.max(columns, 0); c++) {
            counted += count[c];
        }
        if (counted == 0) {
            return "RegressionEvaluation: no data evaluated";
        }
        String[] head = {"Column", "MSE", "MAE", "RMSE", "RSE", "PC", "R^2"};
        List<String[]> rows = new ArrayList<>();
        rows.add(head);
        String fmt = "%." + (precision - 1) + "e";
        for (int c = 0; c < columns; c++) {
            double[] v = {meanSquaredError(c), meanAbsoluteError(c), rootMeanSquaredError(c),
                relativeSquaredError(c), pearsonCorrelation(c), rSquared(c)};
            String[] row = new String[head.length];
            row[0] = columnNames.get(c);
            for (int k = 0; k < v.length; k++) {
                row[k + 1] = String.format(Locale.ROOT, fmt, v[k]);
            }
            rows.add(row);
        }
        int[] width = new int[head.length];
        for (String[] r : rows) {
            for (int k = 0; k < r.length; k++) {
                width[k] = Math.max(width[k], r[k].length());
            }
        }
        StringBuilder b = new StringBuilder();
        for (String[] r : rows) {
            for (int k = 0; k < r.length; k++) {
                String cell = k == 0 ? pad(r[k], width[k], false) : pad(r[k], width[k], true);
                b.append(cell).append(k + 1 < r.length ? "  " : "\n");
            }
        }
        return b.toString();
    }

    private static String pad(String s, int w, boolean right) {
        StringBuilder b = new StringBuilder(w);
        if (!right) {
            b.append(s);
        }
        for (int i = s.length(); i < w; i++) {
            b.append(' ');
        }
        if (right) {
            b.append(s);
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return stats();
    }
}
