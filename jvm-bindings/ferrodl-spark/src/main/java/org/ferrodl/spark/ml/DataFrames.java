package org.ferrodl.spark.ml;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.VectorUDT;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.NumericType;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.factory.Nd4j;

/**
 * DataFrame rows as DataSet objects, built on the executors: a Vector features column and a numeric
 * label column, {@code rowsPerDataSet} rows per DataSet (the last of a partition may be smaller).
 * Used by the Spark ML estimators and by the PySpark front end ({@code ferrodl.to_datasets}).
 */
public final class DataFrames {
    private DataFrames() {
    }

    /**
     * @param numClasses {@code > 0}: labels are class indices {@code 0..numClasses-1}, one-hot
     *     encoded; {@code 0}: the label itself is a one-column regression target
     */
    public static JavaRDD<DataSet> toDataSets(Dataset<?> df, String featuresCol, String labelCol,
                                              int rowsPerDataSet, int numClasses) {
        FerrodlEstimator.requireColumn(df.schema(), featuresCol,
                "a vector (org.apache.spark.ml.linalg.Vector) column", t -> t instanceof VectorUDT);
        FerrodlEstimator.requireColumn(df.schema(), labelCol, "a numeric column", t -> t instanceof NumericType);
        if (rowsPerDataSet < 1) {
            throw new IllegalArgumentException("rowsPerDataSet must be at least 1, got " + rowsPerDataSet);
        }
        if (numClasses < 0) {
            throw new IllegalArgumentException("numClasses must be 0 (regression) or positive, got " + numClasses);
        }
        List<Row> first = df.select(featuresCol).limit(1).collectAsList();
        if (first.isEmpty()) {
            throw new DL4JInvalidInputException("the DataFrame has no rows");
        }
        int nIn = ((Vector) first.get(0).get(0)).size();
        return toDataSets(df, featuresCol, labelCol, rowsPerDataSet, nIn, numClasses == 0 ? 1 : numClasses,
                numClasses == 0 ? regression(labelCol) : classIndex(labelCol));
    }

    /** How a label becomes its row of the label matrix. */
    interface LabelEncoder extends java.io.Serializable {
        void encode(double label, float[] out, int offset, int width, long row);
    }

    static LabelEncoder classIndex(String labelCol) {
        return (label, out, offset, width, row) -> {
            int k = (int) label;
            if (k != label || k < 0 || k >= width) {
                throw new DL4JInvalidInputException("label " + label + " in row " + row + " of column '" + labelCol
                        + "' is not a class index in [0, " + (width - 1) + "] (the network has " + width + " outputs)");
            }
            out[offset + k] = 1f;
        };
    }

    static LabelEncoder regression(String labelCol) {
        return (label, out, offset, width, row) -> {
            if (width != 1) {
                throw new DL4JInvalidInputException("a regression network must have one output, this one has "
                        + width);
            }
            if (!Double.isFinite(label)) {
                throw new DL4JInvalidInputException("label " + label + " in row " + row + " of column '" + labelCol
                        + "' is not finite");
            }
            out[offset] = (float) label;
        };
    }

    static JavaRDD<DataSet> toDataSets(Dataset<?> df, String featuresCol, String labelCol, int rows, int nIn,
                                       int nOut, LabelEncoder encoder) {
        return batches(df, new String[] {featuresCol}, new String[] {labelCol}, rows, new int[] {nIn},
                new int[] {nOut}, new LabelEncoder[] {encoder}, (f, l) -> new DataSet(f[0], l[0]));
    }

    /**
     * DataFrame rows as MultiDataSet objects for a ComputationGraph: one Vector column per network
     * input (in input order) and one numeric label column per output (in output order), each
     * one-hot encoded into {@code numClasses[k]} columns, or a one-column regression target where
     * {@code numClasses[k] == 0}; {@code rowsPerDataSet} rows per MultiDataSet (the last of a
     * partition may be smaller). Used by the PySpark front end ({@code ferrodl.to_multi_datasets}).
     */
    public static JavaRDD<MultiDataSet> toMultiDataSets(Dataset<?> df, String[] featuresCols, String[] labelCols,
                                                        int rowsPerDataSet, int[] numClasses) {
        if (featuresCols == null || featuresCols.length == 0 || labelCols == null || labelCols.length == 0) {
            throw new IllegalArgumentException("toMultiDataSets needs at least one features column and one label "
                    + "column");
        }
        if (numClasses == null || numClasses.length != labelCols.length) {
            throw new IllegalArgumentException("numClasses needs one entry per label column: "
                    + labelCols.length + " label columns, " + (numClasses == null ? "no" : numClasses.length)
                    + " numClasses");
        }
        if (rowsPerDataSet < 1) {
            throw new IllegalArgumentException("rowsPerDataSet must be at least 1, got " + rowsPerDataSet);
        }
        for (String c : featuresCols) {
            FerrodlEstimator.requireColumn(df.schema(), c, "a vector (org.apache.spark.ml.linalg.Vector) column",
                    t -> t instanceof VectorUDT);
        }
        LabelEncoder[] encoders = new LabelEncoder[labelCols.length];
        int[] nOut = new int[labelCols.length];
        for (int k = 0; k < labelCols.length; k++) {
            FerrodlEstimator.requireColumn(df.schema(), labelCols[k], "a numeric column",
                    t -> t instanceof NumericType);
            if (numClasses[k] < 0) {
                throw new IllegalArgumentException("numClasses of label column '" + labelCols[k]
                        + "' must be 0 (regression) or positive, got " + numClasses[k]);
            }
            encoders[k] = numClasses[k] == 0 ? regression(labelCols[k]) : classIndex(labelCols[k]);
            nOut[k] = numClasses[k] == 0 ? 1 : numClasses[k];
        }
        List<Row> first = select(df, featuresCols).limit(1).collectAsList();
        if (first.isEmpty()) {
            throw new DL4JInvalidInputException("the DataFrame has no rows");
        }
        int[] nIn = new int[featuresCols.length];
        for (int k = 0; k < featuresCols.length; k++) {
            nIn[k] = ((Vector) first.get(0).get(k)).size();
        }
        return batches(df, featuresCols, labelCols, rowsPerDataSet, nIn, nOut, encoders, MultiDataSet::new);
    }

    /** Builds one minibatch object from its features and labels arrays. */
    interface BatchFactory<T> extends java.io.Serializable {
        T make(INDArray[] features, INDArray[] labels);
    }

    /** Rows in groups of {@code rows}, each group's columns as arrays, made into objects on the executors. */
    static <T> JavaRDD<T> batches(Dataset<?> df, String[] featuresCols, String[] labelCols, int rows, int[] nIn,
                                  int[] nOut, LabelEncoder[] encoders, BatchFactory<T> make) {
        String[] columns = Arrays.copyOf(featuresCols, featuresCols.length + labelCols.length);
        System.arraycopy(labelCols, 0, columns, featuresCols.length, labelCols.length);
        int nf = featuresCols.length;
        int nl = labelCols.length;
        return select(df, columns).toJavaRDD().mapPartitions((Iterator<Row> it) -> {
            List<T> out = new ArrayList<>();
            float[][] feat = new float[nf][];
            float[][] lab = new float[nl][];
            for (int k = 0; k < nf; k++) {
                feat[k] = new float[rows * nIn[k]];
            }
            for (int k = 0; k < nl; k++) {
                lab[k] = new float[rows * nOut[k]];
            }
            int n = 0;
            long row = 0;
            while (it.hasNext()) {
                Row r = it.next();
                for (int k = 0; k < nf; k++) {
                    Vector v = (Vector) r.get(k);
                    if (v == null || v.size() != nIn[k]) {
                        throw new DL4JInvalidInputException("row " + row + " of column '" + featuresCols[k] + "' has "
                                + (v == null ? "no vector" : v.size() + " features") + ", the first row had "
                                + nIn[k]);
                    }
                    for (int j = 0; j < nIn[k]; j++) {
                        feat[k][n * nIn[k] + j] = (float) v.apply(j);
                    }
                }
                for (int k = 0; k < nl; k++) {
                    if (r.isNullAt(nf + k)) {
                        throw new DL4JInvalidInputException("row " + row + " of column '" + labelCols[k]
                                + "' is null");
                    }
                    encoders[k].encode(((Number) r.get(nf + k)).doubleValue(), lab[k], n * nOut[k], nOut[k], row);
                }
                n++;
                row++;
                if (n == rows) {
                    out.add(make.make(arrays(feat, nIn, n, true), arrays(lab, nOut, n, true)));
                    for (float[] l : lab) {
                        Arrays.fill(l, 0f);
                    }
                    n = 0;
                }
            }
            if (n > 0) {
                out.add(make.make(arrays(feat, nIn, n, false), arrays(lab, nOut, n, false)));
            }
            return out.iterator();
        });
    }

    /** The first {@code n} rows of each buffer as {@code [n, width]} arrays (copies: buffers are reused). */
    private static INDArray[] arrays(float[][] buffers, int[] widths, int n, boolean full) {
        INDArray[] out = new INDArray[buffers.length];
        for (int k = 0; k < buffers.length; k++) {
            float[] data = full ? buffers[k].clone() : Arrays.copyOf(buffers[k], n * widths[k]);
            out[k] = Nd4j.create(data, n, widths[k]);
        }
        return out;
    }

    private static Dataset<Row> select(Dataset<?> df, String[] columns) {
        return df.select(columns[0], Arrays.copyOfRange(columns, 1, columns.length));
    }
}
