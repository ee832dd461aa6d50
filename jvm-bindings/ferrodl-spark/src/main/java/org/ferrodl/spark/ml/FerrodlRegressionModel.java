package org.ferrodl.spark.ml;

import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/** A trained {@link FerrodlRegressor}: appends {@code predictionCol}, the network's single output. */
public final class FerrodlRegressionModel extends FerrodlModel<FerrodlRegressionModel> {
    private static final long serialVersionUID = 1L;

    public FerrodlRegressionModel(String uid, MultiLayerNetwork network) {
        super(uid, network);
    }

    public FerrodlRegressionModel setPredictionCol(String v) { set(predictionCol, v); return this; }
    public FerrodlRegressionModel setFeaturesCol(String v) { set(featuresCol, v); return this; }

    @Override
    StructType addOutputColumns(StructType schema) {
        return schema.add($(predictionCol), DataTypes.DoubleType, false);
    }

    @Override
    Object[] outputValues(float[] out, int offset, int width) {
        if (width != 1) {
            throw new DL4JInvalidInputException("a regression network must have one output, this one has " + width);
        }
        return new Object[] {(double) out[offset]};
    }

    @Override
    FerrodlRegressionModel newInstance(String uid, MultiLayerNetwork net) {
        return new FerrodlRegressionModel(uid, net);
    }

    public static MLReader<FerrodlRegressionModel> read() {
        return new Reader<>(FerrodlRegressionModel.class, FerrodlRegressionModel::new);
    }

    public static FerrodlRegressionModel load(String path) {
        return read().load(path);
    }
}
