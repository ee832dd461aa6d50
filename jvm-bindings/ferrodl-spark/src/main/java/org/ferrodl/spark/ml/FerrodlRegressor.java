package org.ferrodl.spark.ml;

import org.apache.spark.ml.util.DefaultParamsReader;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Spark ML estimator of a ferrodl regression network with one output: a Vector features column and
 * a numeric label column; the model appends the network's output as {@code predictionCol}.
 */
public final class FerrodlRegressor extends FerrodlEstimator<FerrodlRegressionModel, FerrodlRegressor> {
    private static final long serialVersionUID = 1L;

    public FerrodlRegressor() {
        this(Identifiable$.MODULE$.randomUID("ferrodlRegressor"));
    }

    public FerrodlRegressor(String uid) {
        super(uid);
    }

    @Override
    DataFrames.LabelEncoder labelEncoder(String labelCol) {
        return DataFrames.regression(labelCol);
    }

    @Override
    FerrodlRegressionModel newModel(String uid, MultiLayerNetwork network) {
        return new FerrodlRegressionModel(uid, network);
    }

    @Override
    StructType addOutputColumns(StructType schema, String predictionCol) {
        return schema.add(predictionCol, DataTypes.DoubleType, false);
    }

    public static MLReader<FerrodlRegressor> read() {
        return new DefaultParamsReader<>();
    }

    public static FerrodlRegressor load(String path) {
        return read().load(path);
    }
}
