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
import org.ferrodl.linalg.dataset.DataSet;
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
        return df.select(featuresCol, labelCol).toJavaRDD().mapPartitions((Iterator<Row> it) -> {
            List<DataSet> out = new ArrayList<>();
            float[] feat = new float[rows * nIn];
            float[] lab = new float[rows * nOut];
            int n = 0;
            long row = 0;
            while (it.hasNext()) {
                Row r = it.next();
                Vector v = (Vector) r.get(0);
                if (v == null || v.size() != nIn) {
                    throw new DL4JInvalidInputException("row " + row + " of column '" + featuresCol + "' has "
                            + (v == null ? "no vector" : v.size() + " features") + ", the first row had " + nIn);
                }
                if (r.isNullAt(1)) {
                    throw new DL4JInvalidInputException("row " + row + " of column '" + labelCol + "' is null");
                }
                for (int j = 0; j < nIn; j++) {
                    feat[n * nIn + j] = (float) v.apply(j);
                }
                encoder.encode(((Number) r.get(1)).doubleValue(), lab, n * nOut, nOut, row);
                n++;
                row++;
                if (n == rows) {
                    out.add(new DataSet(Nd4j.create(feat.clone(), rows, nIn), Nd4j.create(lab.clone(), rows, nOut)));
                    Arrays.fill(lab, 0f);
                    n = 0;
                }
            }
            if (n > 0) {
                out.add(new DataSet(Nd4j.create(Arrays.copyOf(feat, n * nIn), n, nIn),
                        Nd4j.create(Arrays.copyOf(lab, n * nOut), n, nOut)));
            }
            return out.iterator();
        });
    }
}
