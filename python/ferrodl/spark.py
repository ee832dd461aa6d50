"""ferrodl's Java classes for PySpark, through the Py4J gateway of the active SparkSession."""
from types import SimpleNamespace

from ._gateway import JavaProxy, call, unwrap

# Python name -> Java class, for `classes(spark)` (configuration builders, updaters, layers, masters,
# evaluation); anything else: `jvm(spark)` reaches every class under org.ferrodl
_CLASSES = {
    "NeuralNetConfiguration": "org.ferrodl.nn.conf.NeuralNetConfiguration",
    "MultiLayerConfiguration": "org.ferrodl.nn.conf.MultiLayerConfiguration",
    "DenseLayer": "org.ferrodl.nn.conf.layers.DenseLayer",
    "OutputLayer": "org.ferrodl.nn.conf.layers.OutputLayer",
    "DropoutLayer": "org.ferrodl.nn.conf.layers.DropoutLayer",
    "BatchNormalization": "org.ferrodl.nn.conf.layers.BatchNormalization",
    "ConvolutionLayer": "org.ferrodl.nn.conf.layers.ConvolutionLayer",
    "SubsamplingLayer": "org.ferrodl.nn.conf.layers.SubsamplingLayer",
    "InputType": "org.ferrodl.nn.conf.inputs.InputType",
    "Activation": "org.ferrodl.linalg.activations.Activation",
    "LossFunctions": "org.ferrodl.linalg.lossfunctions.LossFunctions",
    "WeightInit": "org.ferrodl.nn.weights.WeightInit",
    "Adam": "org.ferrodl.linalg.learning.config.Adam",
    "Sgd": "org.ferrodl.linalg.learning.config.Sgd",
    "Nesterovs": "org.ferrodl.linalg.learning.config.Nesterovs",
    "MultiLayerNetwork": "org.ferrodl.nn.multilayer.MultiLayerNetwork",
    "ComputationGraphConfiguration": "org.ferrodl.nn.conf.ComputationGraphConfiguration",
    "ComputationGraph": "org.ferrodl.nn.graph.ComputationGraph",
    "MergeVertex": "org.ferrodl.nn.conf.graph.MergeVertex",
    "ElementWiseVertex": "org.ferrodl.nn.conf.graph.ElementWiseVertex",
    "MultiDataSet": "org.ferrodl.linalg.dataset.MultiDataSet",
    "RegressionEvaluation": "org.ferrodl.evaluation.regression.RegressionEvaluation",
    "Nd4j": "org.ferrodl.linalg.factory.Nd4j",
    "DataSet": "org.ferrodl.linalg.dataset.DataSet",
    "Evaluation": "org.ferrodl.evaluation.classification.Evaluation",
    "ParameterAveragingTrainingMaster": "org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster",
    "SharedTrainingMaster": "org.ferrodl.spark.parameterserver.training.SharedTrainingMaster",
    "AdaptiveThresholdAlgorithm":
        "org.ferrodl.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm",
    "TargetSparsityThresholdAlgorithm":
        "org.ferrodl.optimize.solvers.accumulation.encoding.threshold.TargetSparsityThresholdAlgorithm",
    "DataFrames": "org.ferrodl.spark.ml.DataFrames",
}


def _active(spark):
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is None:
            raise RuntimeError("no active SparkSession: create one with ferrodl.session_builder().getOrCreate()")
    return spark


def jvm(spark=None):
    """The `org.ferrodl` package of the session's JVM, with Python errors (e.g. `jvm().nn.conf...`)."""
    return JavaProxy(_active(spark)._jvm.org.ferrodl)


def _resolve(gateway_jvm, fqn):
    node = gateway_jvm
    for part in fqn.split("."):
        node = getattr(node, part)
    return node


def classes(spark=None):
    """The Java classes most programs need, by their Java names: `c.NeuralNetConfiguration.Builder()`,
    `c.Activation.RELU`, `c.LossFunctions.LossFunction.MCXENT`, `c.Adam(1e-3)`,
    `c.ParameterAveragingTrainingMaster.Builder(32)`, ..."""
    g = _active(spark)._jvm
    ns = {name: JavaProxy(_resolve(g, fqn)) for name, fqn in _CLASSES.items()}
    return SimpleNamespace(**ns)


def to_datasets(df, features_col="features", label_col="label", rows_per_dataset=32, num_classes=0):
    """A JavaRDD of DataSet objects built on the executors from a DataFrame (a Vector features column
    and a numeric label column: class indices one-hot encoded into `num_classes` columns, or, with
    num_classes=0, the value itself as a one-column regression target)."""
    j = _active(df.sparkSession)._jvm
    return call(_resolve(j, _CLASSES["DataFrames"]).toDataSets, df._jdf, features_col, label_col,
                int(rows_per_dataset), int(num_classes))


def to_multi_datasets(df, features_cols, label_cols, rows_per_dataset=32, num_classes=None):
    """A JavaRDD of MultiDataSet objects built on the executors from a DataFrame, for a
    ComputationGraph: one Vector column per network input and one numeric label column per output
    (in the graph's order); `num_classes` gives, per label column, the classes its indices are
    one-hot encoded into, or 0 for a one-column regression target."""
    features_cols, label_cols = list(features_cols), list(label_cols)
    if num_classes is None or len(num_classes) != len(label_cols):
        raise ValueError(f"num_classes needs one entry per label column {label_cols}, got {num_classes}")
    spark = _active(df.sparkSession)
    gateway = spark.sparkContext._gateway
    return call(_resolve(spark._jvm, _CLASSES["DataFrames"]).toMultiDataSets, df._jdf,
                _java_array(gateway, gateway.jvm.java.lang.String, features_cols),
                _java_array(gateway, gateway.jvm.java.lang.String, label_cols), int(rows_per_dataset),
                _java_array(gateway, gateway.jvm.int, [int(k) for k in num_classes]))


def strings(*values, spark=None):
    """A Java String[] for the Java methods that take `String...` (Py4J passes varargs as an array):
    `.addInputs(ferrodl.strings("a", "b"))`, `.addLayer("d", layer, ferrodl.strings("a"))`,
    `.setOutputs(ferrodl.strings("out"))`."""
    gateway = _active(spark).sparkContext._gateway
    return _java_array(gateway, gateway.jvm.java.lang.String, [str(v) for v in values])


def _java_array(gateway, cls, values):
    array = gateway.new_array(cls, len(values))
    for i, v in enumerate(values):
        array[i] = unwrap(v)
    return array


class _SparkNetwork:
    """What the two Spark wrappers share: construction from a configuration or a network, DataFrames
    turned into DataSets for `fit`/`evaluate`, and every other Java method as an attribute."""

    _JAVA_CLASS = None

    def __init__(self, spark_context, configuration, training_master):
        spark = _active(None)
        jsc = spark_context._jsc if hasattr(spark_context, "_jsc") else spark_context
        cls = _resolve(spark._jvm, self._JAVA_CLASS)
        self._ferrodl_java_object = unwrap(call(cls, jsc, configuration, training_master))
        self._gateway = spark.sparkContext._gateway

    def _output_widths(self):
        # Abstract: each wrapper (SparkDl4jMultiLayer, SparkComputationGraph) returns its outputs'
        # widths; the base class is never used on its own.
        raise NotImplementedError

    def _data(self, data, features_col, label_col, rows_per_dataset, num_classes):
        if hasattr(data, "_jdf"):
            if num_classes is None:
                widths = self._output_widths()
                if len(widths) != 1:
                    raise ValueError(f"a DataFrame with one label column trains a network with one output; this "
                                     f"one has {len(widths)} (use fit_multi with one label column per output)")
                num_classes = widths[0]
            return to_datasets(data, features_col, label_col, rows_per_dataset, num_classes)
        return data

    def fit(self, data, features_col="features", label_col="label", rows_per_dataset=32, num_classes=None):
        """One pass over `data` (a DataFrame, or a JavaRDD of DataSet); returns self. `num_classes`
        defaults to the network's output width."""
        call(self._ferrodl_java_object.fit, self._data(data, features_col, label_col, rows_per_dataset,
                                                       num_classes))
        return self

    def evaluate(self, data, features_col="features", label_col="label", rows_per_dataset=256, num_classes=None):
        """Classification evaluation (`org.ferrodl.evaluation.classification.Evaluation`)."""
        return call(self._ferrodl_java_object.evaluate, self._data(data, features_col, label_col,
                                                                   rows_per_dataset, num_classes))

    def __getattr__(self, name):
        return getattr(JavaProxy(self._ferrodl_java_object), name)


class SparkDl4jMultiLayer(_SparkNetwork):
    """`org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer` for PySpark.

    `fit`/`evaluate` take a DataFrame (converted with `to_datasets`) or a JavaRDD of DataSet; every
    other Java method is reachable as an attribute (`net.getNetwork()`, `net.getScore()`, ...).
    """

    _JAVA_CLASS = "org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer"

    def _output_widths(self):
        return [int(call(self._ferrodl_java_object.getNetwork().numOutputs))]


class SparkComputationGraph(_SparkNetwork):
    """`org.ferrodl.spark.impl.graph.SparkComputationGraph` for PySpark: a ComputationGraph (or its
    configuration) trained with either training master.

    `fit`/`evaluate` take, for a graph with one input and one output, a DataFrame with a Vector
    features column and a label column (or a JavaRDD of DataSet); `fit_multi`/`evaluate_output`
    take a DataFrame with one Vector column per input and one label column per output (converted
    with `to_multi_datasets`) or a JavaRDD of MultiDataSet. Every other Java method is reachable as
    an attribute (`graph.getNetwork()`, `graph.getScore()`, `graph.scoreExamplesMultiDataSet(...)`).
    """

    _JAVA_CLASS = "org.ferrodl.spark.impl.graph.SparkComputationGraph"

    def _output_widths(self):
        return [int(w) for w in call(self._ferrodl_java_object.getNetwork().numOutputs)]

    def _multi(self, data, features_cols, label_cols, rows_per_dataset, num_classes):
        if not hasattr(data, "_jdf"):
            return data
        if features_cols is None or label_cols is None:
            raise ValueError("a DataFrame needs features_cols (one per graph input) and label_cols (one per output)")
        if num_classes is None:
            num_classes = self._output_widths()
        return to_multi_datasets(data, features_cols, label_cols, rows_per_dataset, num_classes)

    def fit_multi(self, data, features_cols=None, label_cols=None, rows_per_dataset=32, num_classes=None):
        """One pass over `data` as MultiDataSets (`fitMultiDataSet`); returns self. `num_classes`
        defaults to the width of each output (class indices one-hot encoded)."""
        call(self._ferrodl_java_object.fitMultiDataSet,
             self._multi(data, features_cols, label_cols, rows_per_dataset, num_classes))
        return self

    def evaluate_output(self, data, output_name, features_cols=None, label_cols=None, rows_per_dataset=256,
                        num_classes=None, evaluation=None):
        """An evaluation (default: classification `Evaluation`) of the graph's output `output_name`
        over MultiDataSets, computed on the executors (`doEvaluationMDS` with that output's name)."""
        rdd = self._multi(data, features_cols, label_cols, rows_per_dataset, num_classes)
        if evaluation is None:
            evaluation = _resolve(self._gateway.jvm, _CLASSES["Evaluation"])()
        evaluations = _java_array(self._gateway, self._gateway.jvm.org.ferrodl.evaluation.IEvaluation, [evaluation])
        workers = call(self._ferrodl_java_object.getDefaultEvaluationWorkers)
        return call(self._ferrodl_java_object.doEvaluationMDS, rdd, workers, int(rows_per_dataset), output_name,
                    evaluations)[0]
