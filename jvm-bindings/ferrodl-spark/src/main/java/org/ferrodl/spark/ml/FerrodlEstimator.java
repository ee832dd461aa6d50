package org.ferrodl.spark.ml;

import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.VectorUDT;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.DefaultParamsWritable;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructType;
import org.ferrodl.exception.DL4JInvalidConfigException;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.api.TrainingMaster;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.ferrodl.spark.parameterserver.training.SharedTrainingMaster;

/**
 * What {@link FerrodlClassifier} and {@link FerrodlRegressor} share: the {@code Param}s (network
 * configuration and training master as JSON, epochs, rows per DataSet, column names) and the fit,
 * which turns the DataFrame into DataSet objects on the executors and trains a
 * {@link SparkDl4jMultiLayer} with the configured master for {@code epochs} passes.
 */
public abstract class FerrodlEstimator<M extends FerrodlModel<M>, E extends FerrodlEstimator<M, E>>
        extends Estimator<M> implements DefaultParamsWritable {
    private static final long serialVersionUID = 1L;

    /** Training master names of {@link #trainingMasterType}. */
    public static final String PARAMETER_AVERAGING = "paramavg";
    public static final String GRADIENT_SHARING = "shared";

    private final String uid;
    final Param<String> featuresCol;
    final Param<String> labelCol;
    final Param<String> predictionCol;
    final Param<String> networkConfiguration;
    final Param<String> trainingMasterType;
    final Param<String> trainingMaster;
    final IntParam epochs;
    final IntParam rowsPerDataSet;

    protected FerrodlEstimator(String uid) {
        this.uid = uid;
        featuresCol = new Param<>(this, "featuresCol", "features column (ml Vector)");
        labelCol = new Param<>(this, "labelCol", "label column (numeric)");
        predictionCol = new Param<>(this, "predictionCol", "prediction column written by the model");
        networkConfiguration = new Param<>(this, "networkConfiguration",
                "the network, as MultiLayerConfiguration.toJson()");
        trainingMasterType = new Param<>(this, "trainingMasterType", "paramavg or shared",
                ParamValidators.inArray(new String[] {PARAMETER_AVERAGING, GRADIENT_SHARING}));
        trainingMaster = new Param<>(this, "trainingMaster",
                "the training master as its toJson(); empty: the type's defaults with rowsPerDataSet");
        epochs = new IntParam(this, "epochs", "passes over the data (>= 1)", ParamValidators.gtEq(1));
        rowsPerDataSet = new IntParam(this, "rowsPerDataSet",
                "rows per DataSet object (the minibatch a worker fits; >= 1)", ParamValidators.gtEq(1));
        setDefault(featuresCol, "features");
        setDefault(labelCol, "label");
        setDefault(predictionCol, "prediction");
        setDefault(trainingMasterType, PARAMETER_AVERAGING);
        setDefault(trainingMaster, "");
        setDefault(epochs, 1);
        setDefault(rowsPerDataSet, 32);
    }

    @Override
    public String uid() {
        return uid;
    }

    // the Param accessors Spark finds by reflection (Params.params lists public no-argument methods
    // returning a Param)
    public Param<String> featuresCol() { return featuresCol; }
    public Param<String> labelCol() { return labelCol; }
    public Param<String> predictionCol() { return predictionCol; }
    public Param<String> networkConfiguration() { return networkConfiguration; }
    public Param<String> trainingMasterType() { return trainingMasterType; }
    public Param<String> trainingMaster() { return trainingMaster; }
    public IntParam epochs() { return epochs; }
    public IntParam rowsPerDataSet() { return rowsPerDataSet; }

    @SuppressWarnings("unchecked")
    private E self() {
        return (E) this;
    }

    public E setFeaturesCol(String v) { set(featuresCol, v); return self(); }
    public E setLabelCol(String v) { set(labelCol, v); return self(); }
    public E setPredictionCol(String v) { set(predictionCol, v); return self(); }
    public E setEpochs(int v) { set(epochs, v); return self(); }
    public E setRowsPerDataSet(int v) { set(rowsPerDataSet, v); return self(); }

    /** The network to train, as JSON (validated when set). */
    public E setNetworkConfiguration(String json) {
        MultiLayerConfiguration.fromJson(json); // refuses a bad configuration now, with its message
        set(networkConfiguration, json);
        return self();
    }

    public E setNetworkConfiguration(MultiLayerConfiguration conf) {
        set(networkConfiguration, conf.toJson());
        return self();
    }

    /** The training master: a {@link ParameterAveragingTrainingMaster} or a {@link SharedTrainingMaster}. */
    public E setTrainingMaster(TrainingMaster master) {
        if (master instanceof SharedTrainingMaster) {
            set(trainingMasterType, GRADIENT_SHARING);
        } else if (master instanceof ParameterAveragingTrainingMaster) {
            set(trainingMasterType, PARAMETER_AVERAGING);
        } else {
            throw new IllegalArgumentException("unsupported training master " + master.getClass().getName());
        }
        set(trainingMaster, master.toJson());
        return self();
    }

    /** The training master these Params describe. */
    public TrainingMaster buildTrainingMaster() {
        String json = $(trainingMaster);
        boolean shared = GRADIENT_SHARING.equals($(trainingMasterType));
        int rows = (Integer) $(rowsPerDataSet);
        if (json == null || json.isBlank()) {
            return shared ? new SharedTrainingMaster.Builder(rows).batchSizePerWorker(rows).build()
                    : new ParameterAveragingTrainingMaster.Builder(rows).batchSizePerWorker(rows).build();
        }
        return shared ? SharedTrainingMaster.fromJson(json) : ParameterAveragingTrainingMaster.fromJson(json);
    }

    /** How a label value becomes the network's label row. */
    abstract DataFrames.LabelEncoder labelEncoder(String labelCol);

    /** The model around a trained network. */
    abstract M newModel(String uid, MultiLayerNetwork network);

    /** Extra columns the model writes besides the prediction (name, type). */
    abstract StructType addOutputColumns(StructType schema, String predictionCol);

    @Override
    public StructType transformSchema(StructType schema) {
        requireColumn(schema, $(featuresCol), "a vector (org.apache.spark.ml.linalg.Vector) column",
                t -> t instanceof VectorUDT);
        requireColumn(schema, $(labelCol), "a numeric column", t -> t instanceof NumericType);
        return addOutputColumns(schema, $(predictionCol));
    }

    static void requireColumn(StructType schema, String name, String what,
                              java.util.function.Predicate<DataType> ok) {
        if (!java.util.Arrays.asList(schema.fieldNames()).contains(name)) {
            throw new IllegalArgumentException("column '" + name + "' does not exist; columns: "
                    + String.join(", ", schema.fieldNames()));
        }
        DataType t = schema.apply(name).dataType();
        if (!ok.test(t)) {
            throw new IllegalArgumentException("column '" + name + "' must be " + what + ", got " + t.simpleString());
        }
    }

    @Override
    public M fit(Dataset<?> dataset) {
        transformSchema(dataset.schema());
        if (!isDefined(networkConfiguration)) {
            throw new DL4JInvalidConfigException("networkConfiguration is not set (setNetworkConfiguration)");
        }
        MultiLayerConfiguration conf = MultiLayerConfiguration.fromJson($(networkConfiguration));
        MultiLayerNetwork network = new MultiLayerNetwork(conf);
        network.init();
        int nIn = inputWidth(dataset);
        int nOut = (int) network.output(Nd4j.create(new float[nIn], 1, nIn)).columns();
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(dataset.sparkSession().sparkContext());
        JavaRDD<DataSet> data = toDataSets(dataset, nIn, nOut);
        SparkDl4jMultiLayer sparkNet = new SparkDl4jMultiLayer(sc, network, buildTrainingMaster());
        int passes = (Integer) $(epochs);
        for (int e = 0; e < passes; e++) {
            sparkNet.fit(data);
        }
        M model = newModel(uid, sparkNet.getNetwork());
        copyValues(model, extractParamMap());
        return model.setParent(this);
    }

    private int inputWidth(Dataset<?> dataset) {
        List<Row> first = dataset.select($(featuresCol)).limit(1).collectAsList();
        if (first.isEmpty()) {
            throw new DL4JInvalidInputException("cannot fit: the DataFrame has no rows");
        }
        return ((Vector) first.get(0).get(0)).size();
    }

    private JavaRDD<DataSet> toDataSets(Dataset<?> dataset, int nIn, int nOut) {
        return DataFrames.toDataSets(dataset, $(featuresCol), $(labelCol), (Integer) $(rowsPerDataSet), nIn, nOut,
                labelEncoder($(labelCol)));
    }

    @Override
    public Estimator<M> copy(ParamMap extra) {
        return defaultCopy(extra);
    }
}
