package org.ferrodl.spark.ml;

import org.apache.spark.ml.linalg.VectorUDT;
import org.apache.spark.ml.util.DefaultParamsReader;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;

/**
 * Spark ML estimator of a ferrodl classifier network: a DataFrame with a Vector features column and
 * a label column holding class indices 0, 1, ..., n-1 (n = the network's output width; one-hot
 * encoded for training) trains the network with the configured training master; the model appends
 * class probabilities and the predicted index. Works in a {@code Pipeline} and a
 * {@code CrossValidator}; writes and reads itself.
 *
 * <pre>{@code
 * FerrodlClassifier clf = new FerrodlClassifier().setNetworkConfiguration(conf)
 *         .setTrainingMaster(new ParameterAveragingTrainingMaster.Builder(32).build()).setEpochs(5);
 * FerrodlClassificationModel model = clf.fit(train);
 * model.transform(test).select("prediction", "label");
 * }</pre>
 */
public final class FerrodlClassifier extends FerrodlEstimator<FerrodlClassificationModel, FerrodlClassifier> {
    private static final long serialVersionUID = 1L;

    public FerrodlClassifier() {
        this(Identifiable$.MODULE$.randomUID("ferrodlClassifier"));
    }

    public FerrodlClassifier(String uid) {
        super(uid);
    }

    @Override
    DataFrames.LabelEncoder labelEncoder(String labelCol) {
        return DataFrames.classIndex(labelCol);
    }

    @Override
    FerrodlClassificationModel newModel(String uid, MultiLayerNetwork network) {
        return new FerrodlClassificationModel(uid, network);
    }

    @Override
    StructType addOutputColumns(StructType schema, String predictionCol) {
        return schema.add("probability", new VectorUDT(), false).add(predictionCol, DataTypes.DoubleType, false);
    }

    public static MLReader<FerrodlClassifier> read() {
        return new DefaultParamsReader<>();
    }

    public static FerrodlClassifier load(String path) {
        return read().load(path);
    }
}
