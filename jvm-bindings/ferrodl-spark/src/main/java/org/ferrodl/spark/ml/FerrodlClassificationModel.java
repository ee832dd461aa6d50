package org.ferrodl.spark.ml;

import org.apache.spark.ml.linalg.VectorUDT;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * A trained {@link FerrodlClassifier}: appends {@code probabilityCol} (the network's output row,
 * a Vector) and {@code predictionCol} (the index of its largest entry, a double).
 */
public final class FerrodlClassificationModel extends FerrodlModel<FerrodlClassificationModel> {
    private static final long serialVersionUID = 1L;

    final Param<String> probabilityCol;

    public FerrodlClassificationModel(String uid, MultiLayerNetwork network) {
        super(uid, network);
        probabilityCol = new Param<>(this, "probabilityCol", "class probabilities column (the network's output)");
        setDefault(probabilityCol, "probability");
    }

    public Param<String> probabilityCol() { return probabilityCol; }

    public FerrodlClassificationModel setProbabilityCol(String v) { set(probabilityCol, v); return this; }
    public FerrodlClassificationModel setPredictionCol(String v) { set(predictionCol, v); return this; }
    public FerrodlClassificationModel setFeaturesCol(String v) { set(featuresCol, v); return this; }

    @Override
    StructType addOutputColumns(StructType schema) {
        return schema.add($(probabilityCol), new VectorUDT(), false)
                .add($(predictionCol), DataTypes.DoubleType, false);
    }

    @Override
    Object[] outputValues(float[] out, int offset, int width) {
        double[] p = new double[width];
        int best = 0;
        for (int j = 0; j < width; j++) {
            p[j] = out[offset + j];
            if (p[j] > p[best] || Double.isNaN(p[j])) {
                best = j;
            }
        }
        return new Object[] {Vectors.dense(p), (double) best};
    }

    @Override
    FerrodlClassificationModel newInstance(String uid, MultiLayerNetwork net) {
        return new FerrodlClassificationModel(uid, net);
    }

    public static MLReader<FerrodlClassificationModel> read() {
        return new Reader<>(FerrodlClassificationModel.class, FerrodlClassificationModel::new);
    }

    public static FerrodlClassificationModel load(String path) {
        return read().load(path);
    }
}
