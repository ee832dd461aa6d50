"""Spark ML stages of ferrodl for PySpark: FerrodlClassifier / FerrodlRegressor and their models.

They wrap the Java stages of `org.ferrodl.spark.ml` (same Param names), so they fit inside a
`Pipeline`, under `CrossValidator`, and save/load like Spark's own stages.
"""
import sys
import types

from pyspark import keyword_only
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import HasFeaturesCol, HasLabelCol, HasPredictionCol, HasProbabilityCol
from pyspark.ml.util import JavaMLReadable, JavaMLReader, JavaMLWritable
from pyspark.ml.wrapper import JavaEstimator, JavaModel

from ._errors import from_java, java_errors
from ._gateway import JavaProxy, unwrap

__all__ = ["FerrodlClassifier", "FerrodlClassificationModel", "FerrodlRegressor", "FerrodlRegressionModel"]


class _Reader(JavaMLReader):
    """Loads with the Java class named by the Python class's `_java_class`."""

    @classmethod
    def _java_loader_class(cls, clazz):
        return clazz._java_class


class _Readable(JavaMLReadable):
    @classmethod
    def read(cls):
        return _Reader(cls)


class _EstimatorParams(HasFeaturesCol, HasLabelCol, HasPredictionCol):
    networkConfiguration = Param(Params._dummy(), "networkConfiguration",
                                 "the network, as MultiLayerConfiguration.toJson()", TypeConverters.toString)
    trainingMasterType = Param(Params._dummy(), "trainingMasterType", "paramavg or shared",
                               TypeConverters.toString)
    trainingMaster = Param(Params._dummy(), "trainingMaster",
                           "the training master as its toJson(); empty: the type's defaults",
                           TypeConverters.toString)
    epochs = Param(Params._dummy(), "epochs", "passes over the data (>= 1)", TypeConverters.toInt)
    rowsPerDataSet = Param(Params._dummy(), "rowsPerDataSet", "rows per DataSet object (>= 1)",
                           TypeConverters.toInt)


class _FerrodlEstimator(JavaEstimator, _EstimatorParams, _Readable, JavaMLWritable):
    _java_class = None

    def __init__(self):
        super().__init__()
        self._java_obj = self._new_java_obj(self._java_class, self.uid)
        self._setDefault(featuresCol="features", labelCol="label", predictionCol="prediction",
                         trainingMasterType="paramavg", trainingMaster="", epochs=1, rowsPerDataSet=32)

    def _configure(self, kwargs):
        kwargs = dict(kwargs)
        conf = kwargs.pop("networkConfiguration", None)
        master = kwargs.pop("trainingMaster", None)
        self._set(**{k: v for k, v in kwargs.items() if v is not None})
        if conf is not None:
            self.setNetworkConfiguration(conf)
        if master is not None:
            self.setTrainingMaster(master)

    def setNetworkConfiguration(self, conf):
        """A MultiLayerConfiguration (from `ferrodl.classes().NeuralNetConfiguration.Builder()...build()`)
        or its JSON."""
        json = conf if isinstance(conf, str) else str(unwrap(conf).toJson())
        return self._set(networkConfiguration=json)

    def setTrainingMaster(self, master):
        """A ParameterAveragingTrainingMaster or SharedTrainingMaster (Java objects)."""
        target = unwrap(master)
        name = target.getClass().getSimpleName()
        kinds = {"ParameterAveragingTrainingMaster": "paramavg", "SharedTrainingMaster": "shared"}
        if name not in kinds:
            raise ValueError(f"unsupported training master {name}; use {' or '.join(kinds)}")
        return self._set(trainingMasterType=kinds[name], trainingMaster=str(target.toJson()))

    def setEpochs(self, value):
        return self._set(epochs=value)

    def setRowsPerDataSet(self, value):
        return self._set(rowsPerDataSet=value)

    def setFeaturesCol(self, value):
        return self._set(featuresCol=value)

    def setLabelCol(self, value):
        return self._set(labelCol=value)

    def setPredictionCol(self, value):
        return self._set(predictionCol=value)

    def _fit(self, dataset):
        try:
            return super()._fit(dataset)
        except java_errors() as e:
            raise from_java(e) from None


class _FerrodlModel(JavaModel, HasFeaturesCol, HasPredictionCol, _Readable, JavaMLWritable):
    _java_class = None

    @property
    def network(self):
        """The trained MultiLayerNetwork (Java, on the driver)."""
        return JavaProxy(self._java_obj.getNetwork())

    def _transform(self, dataset):
        try:
            return super()._transform(dataset)
        except java_errors() as e:
            raise from_java(e) from None


class FerrodlClassificationModel(_FerrodlModel, HasProbabilityCol):
    """Appends `probabilityCol` (the network's output) and `predictionCol` (its argmax)."""
    _java_class = "org.ferrodl.spark.ml.FerrodlClassificationModel"


class FerrodlRegressionModel(_FerrodlModel):
    """Appends `predictionCol`, the network's single output."""
    _java_class = "org.ferrodl.spark.ml.FerrodlRegressionModel"


class FerrodlClassifier(_FerrodlEstimator):
    """Trains a ferrodl classifier network on a DataFrame (Vector features, class-index labels).

    >>> clf = FerrodlClassifier(networkConfiguration=conf, trainingMaster=tm, epochs=5)
    """
    _java_class = "org.ferrodl.spark.ml.FerrodlClassifier"

    @keyword_only
    def __init__(self, *, featuresCol="features", labelCol="label", predictionCol="prediction",
                 networkConfiguration=None, trainingMaster=None, epochs=1, rowsPerDataSet=32):
        super().__init__()
        self._configure(self._input_kwargs)

    def _create_model(self, java_model):
        return FerrodlClassificationModel(java_model)


class FerrodlRegressor(_FerrodlEstimator):
    """Trains a ferrodl regression network (one output) on a DataFrame (Vector features, numeric label)."""
    _java_class = "org.ferrodl.spark.ml.FerrodlRegressor"

    @keyword_only
    def __init__(self, *, featuresCol="features", labelCol="label", predictionCol="prediction",
                 networkConfiguration=None, trainingMaster=None, epochs=1, rowsPerDataSet=32):
        super().__init__()
        self._configure(self._input_kwargs)

    def _create_model(self, java_model):
        return FerrodlRegressionModel(java_model)


def _register_java_package_alias():
    """PySpark finds the Python class of a loaded Java stage (PipelineModel.load) by its Java class
    name; `org.ferrodl.spark.ml` is made an alias of this module so that lookup lands here."""
    names = ["org", "org.ferrodl", "org.ferrodl.spark"]
    for name in names:
        if name not in sys.modules:
            sys.modules[name] = types.ModuleType(name)
    sys.modules["org.ferrodl.spark.ml"] = sys.modules[__name__]
    sys.modules["org.ferrodl.spark"].ml = sys.modules[__name__]
    sys.modules["org.ferrodl"].spark = sys.modules["org.ferrodl.spark"]
    sys.modules["org"].ferrodl = sys.modules["org.ferrodl"]


_register_java_package_alias()
