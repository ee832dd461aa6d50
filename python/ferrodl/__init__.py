"""ferrodl for PySpark: ferrodl's classes through the Py4J gateway, with the jars inside the wheel.

    import ferrodl
    spark = ferrodl.session_builder().master("local[2]").getOrCreate()
    c = ferrodl.classes()
    conf = (c.NeuralNetConfiguration.Builder().seed(1).updater(c.Adam(1e-3)).list()
            .layer(c.DenseLayer.Builder().nIn(784).nOut(100).activation(c.Activation.RELU).build())
            .layer(c.OutputLayer.Builder(c.LossFunctions.LossFunction.MCXENT).nIn(100).nOut(10)
                   .activation(c.Activation.SOFTMAX).build())
            .build())
    net = ferrodl.SparkDl4jMultiLayer(spark.sparkContext, conf, c.ParameterAveragingTrainingMaster.Builder(32).build())
    net.fit(train_df)                 # Vector "features", class-index "label"
    print(net.evaluate(test_df).accuracy())

Errors from Java come back as FerrodlError subclasses carrying the Java message.
"""
from ._errors import (FerrodlClassPathError, FerrodlError, FerrodlFormatError, FerrodlInvalidConfigError,
                      FerrodlInvalidInputError, FerrodlNativeError, FerrodlStateError)
from ._jars import VERSION as __version__
from ._jars import jar_path, session_builder, spark_line
from .spark import (SparkComputationGraph, SparkDl4jMultiLayer, classes, jvm, strings, to_datasets,
                    to_multi_datasets)

__all__ = [
    "FerrodlError", "FerrodlInvalidInputError", "FerrodlInvalidConfigError", "FerrodlFormatError",
    "FerrodlStateError", "FerrodlNativeError", "FerrodlClassPathError",
    "jar_path", "session_builder", "spark_line", "classes", "jvm", "strings", "to_datasets", "to_multi_datasets",
    "SparkDl4jMultiLayer", "SparkComputationGraph",
]
