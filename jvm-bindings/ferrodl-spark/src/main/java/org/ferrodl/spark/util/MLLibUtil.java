package org.ferrodl.spark.util;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.mllib.linalg.DenseMatrix;
import org.apache.spark.mllib.linalg.DenseVector;
import org.apache.spark.mllib.linalg.Matrix;
import org.apache.spark.mllib.linalg.Vector;
import org.apache.spark.mllib.regression.LabeledPoint;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;

/**
 * Conversions between Spark MLlib's {@link LabeledPoint}, {@link Vector} and {@link Matrix} and
 * ferrodl's {@link DataSet} and {@link INDArray}. MLlib matrices are column-major, ferrodl arrays
 * row-major: the conversions keep element {@code (i, j)} in place. Classification labels are class
 * indices {@code 0..numPossibleLabels-1} stored as doubles and become one-hot rows.
 */
public final class MLLibUtil {
    private MLLibUtil() {
    }

    /** @return {@code m} as a {@code rows × cols} array */
    public static INDArray toMatrix(Matrix m) {
        int rows = m.numRows();
        int cols = m.numCols();
        double[] out = new double[rows * cols];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                out[i * cols + j] = m.apply(i, j);
            }
        }
        return Nd4j.create(out, rows, cols);
    }

    /** @return a rank-2 array as a dense MLlib matrix */
    public static Matrix toMatrix(INDArray arr) {
        if (arr.rank() != 2) {
            throw new IllegalArgumentException("only rank-2 arrays convert to a Matrix, got shape "
                    + Arrays.toString(arr.shape()));
        }
        int rows = Math.toIntExact(arr.size(0));
        int cols = Math.toIntExact(arr.size(1));
        double[] colMajor = new double[rows * cols];
        double[] d = arr.toDoubleVector();
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                colMajor[j * rows + i] = d[i * cols + j];
            }
        }
        return new DenseMatrix(rows, cols, colMajor);
    }

    /** @return {@code v} (dense or sparse) as a {@code 1 × n} row */
    public static INDArray toVector(Vector v) {
        return Nd4j.create(v.toArray(), 1, v.size());
    }

    /** @return a vector-shaped array ({@code [n]}, {@code 1 × n} or {@code n × 1}) as a dense MLlib vector */
    public static Vector toVector(INDArray arr) {
        if (!(arr.rank() == 1 || (arr.rank() == 2 && (arr.size(0) == 1 || arr.size(1) == 1)))) {
            throw new IllegalArgumentException("only vectors convert to a Vector, got shape "
                    + Arrays.toString(arr.shape()));
        }
        return new DenseVector(arr.toDoubleVector());
    }

    /** One labeled point as a one-example DataSet with a one-hot label of {@code numPossibleLabels}. */
    public static DataSet fromLabeledPoint(LabeledPoint point, int numPossibleLabels) {
        return fromLabeledPoints(List.of(point), numPossibleLabels, false);
    }

    /** One labeled point as a one-example regression DataSet (the label as one column). */
    public static DataSet fromContinuousLabeledPoint(LabeledPoint point) {
        return fromLabeledPoints(List.of(point), 1, true);
    }

    /**
     * Labeled points as DataSets of up to {@code batchSize} examples each (grouped within each
     * partition, in order), with one-hot labels of {@code numPossibleLabels} classes.
     */
    public static JavaRDD<DataSet> fromLabeledPoint(JavaRDD<LabeledPoint> data, int numPossibleLabels,
                                                    int batchSize) {
        if (numPossibleLabels < 1) {
            throw new IllegalArgumentException("numPossibleLabels must be >= 1, got " + numPossibleLabels);
        }
        return batched(data, batchSize, numPossibleLabels, false);
    }

    /** Labeled points with continuous labels as regression DataSets of up to {@code batchSize} examples. */
    public static JavaRDD<DataSet> fromContinuousLabeledPoint(JavaRDD<LabeledPoint> data, int batchSize) {
        return batched(data, batchSize, 1, true);
    }

    private static JavaRDD<DataSet> batched(JavaRDD<LabeledPoint> data, int batchSize, int numLabels,
                                            boolean continuous) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
        }
        return data.mapPartitions(it -> new Iterator<DataSet>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public DataSet next() {
                if (!it.hasNext()) {
                    throw new NoSuchElementException();
                }
                List<LabeledPoint> points = new ArrayList<>(batchSize);
                while (it.hasNext() && points.size() < batchSize) {
                    points.add(it.next());
                }
                return fromLabeledPoints(points, numLabels, continuous);
            }
        });
    }

    /**
     * @throws DL4JInvalidInputException for points of different widths, or a class label that is
     *     not an integer in {@code [0, numPossibleLabels)}
     */
    static DataSet fromLabeledPoints(List<LabeledPoint> points, int numPossibleLabels, boolean continuous) {
        int n = points.size();
        int width = points.get(0).features().size();
        int labelCols = continuous ? 1 : numPossibleLabels;
        double[] f = new double[n * width];
        double[] l = new double[n * labelCols];
        for (int i = 0; i < n; i++) {
            LabeledPoint p = points.get(i);
            double[] x = p.features().toArray();
            if (x.length != width) {
                throw new DL4JInvalidInputException("labeled points have different numbers of features: "
                        + width + " and " + x.length + " (point " + p + ")");
            }
            System.arraycopy(x, 0, f, i * width, width);
            double label = p.label();
            if (continuous) {
                l[i] = label;
            } else {
                if (label != Math.rint(label) || label < 0 || label >= numPossibleLabels) {
                    throw new DL4JInvalidInputException("class label " + label + " of a labeled point is not an "
                            + "integer in [0, " + numPossibleLabels + "); the network has " + numPossibleLabels
                            + " outputs");
                }
                l[i * labelCols + (int) label] = 1.0;
            }
        }
        return new DataSet(Nd4j.create(f, n, width), Nd4j.create(l, n, labelCols));
    }

    /**
     * The examples of a DataSet as labeled points: the label is the argmax of a one-hot (or
     * probability) label row, or the value itself for a single label column.
     */
    public static List<LabeledPoint> toLabeledPoint(DataSet ds) {
        double[][] f = ds.getFeatures().toDoubleMatrix();
        double[][] l = ds.getLabels().toDoubleMatrix();
        List<LabeledPoint> out = new ArrayList<>(f.length);
        for (int i = 0; i < f.length; i++) {
            double label;
            if (l[i].length == 1) {
                label = l[i][0];
            } else {
                int best = 0;
                for (int c = 1; c < l[i].length; c++) {
                    if (l[i][c] > l[i][best]) {
                        best = c;
                    }
                }
                label = best;
            }
            out.add(new LabeledPoint(label, new DenseVector(f[i])));
        }
        return out;
    }

    /** Every example of every DataSet as a labeled point (see {@link #toLabeledPoint(DataSet)}). */
    public static JavaRDD<LabeledPoint> fromDataSet(JavaRDD<DataSet> data) {
        return data.flatMap(ds -> toLabeledPoint(ds).iterator());
    }
}
