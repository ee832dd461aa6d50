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


class SparkDl4jMultiLayer:
    """`org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer` for PySpark.

    `fit`/`evaluate` take a DataFrame (converted with `to_datasets`) or a JavaRDD of DataSet; every
    other Java method is reachable as an attribute (`net.getNetwork()`, `net.getScore()`, ...).
    """

    def __init__(self, spark_context, configuration, training_master):
        spark = _active(None)
        jsc = spark_context._jsc if hasattr(spark_context, "_jsc") else spark_context
        cls = _resolve(spark._jvm, "org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer")
        self._ferrodl_java_object = unwrap(call(cls, jsc, configuration, training_master))
        self._num_classes = None

    def _data(self, data, features_col, label_col, rows_per_dataset, num_classes):
        if hasattr(data, "_jdf"):
            if num_classes is None:
                num_classes = self._output_width()
            return to_datasets(data, features_col, label_col, rows_per_dataset, num_classes)
        return data

    def _output_width(self):
        return int(call(self._ferrodl_java_object.getNetwork().numOutputs))

    def fit(self, data, features_col="features", label_col="label", rows_per_dataset=32, num_classes=None):
        """One pass over `data`; returns self. `num_classes` defaults to the network's output width."""
        call(self._ferrodl_java_object.fit, self._data(data, features_col, label_col, rows_per_dataset,
                                                       num_classes))
        return self

    def evaluate(self, data, features_col="features", label_col="label", rows_per_dataset=256, num_classes=None):
        """Classification evaluation (`org.ferrodl.evaluation.classification.Evaluation`)."""
        return call(self._ferrodl_java_object.evaluate, self._data(data, features_col, label_col,
                                                                   rows_per_dataset, num_classes))

    def __getattr__(self, name):
        return getattr(JavaProxy(self._ferrodl_java_object), name)
