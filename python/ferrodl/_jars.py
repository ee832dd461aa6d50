"""The ferrodl bundle jars inside this package, one per Spark line."""
import os

from ._errors import FerrodlError

VERSION = "0.1.0"
_JARS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars")


def spark_line(spark_version=None):
    """The Scala line of a Spark version: '2.12' for 3.5.x, '2.13' for 4.x (default: pyspark's)."""
    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    parts = spark_version.split(".")
    major, minor = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    if major == 3 and minor == 5:
        return "2.12"
    if major == 4:
        return "2.13"
    raise FerrodlError(
        f"ferrodl supports Spark 3.5.x (Scala 2.12) and 4.x (Scala 2.13); this is Spark {spark_version}")


def jar_path(spark_version=None):
    """The bundle jar (ferrodl, its native library for linux-x86_64, shaded dependencies) for a Spark version."""
    line = spark_line(spark_version)
    path = os.path.join(_JARS, f"ferrodl-spark_{line}-{VERSION}-bundle-linux-x86_64.jar")
    if not os.path.isfile(path):
        raise FerrodlError(f"{path} is missing from this ferrodl installation; reinstall it from a built "
                           "repository (make jvm, then pip install ./python)")
    return path


def session_builder(builder=None):
    """A SparkSession builder with the ferrodl jar for this pyspark's Spark line on spark.jars.

    Jars already set on `builder` with spark.jars are kept.
    """
    from pyspark.sql import SparkSession

    builder = builder if builder is not None else SparkSession.builder
    options = getattr(builder, "_options", {})
    jars = [j for j in options.get("spark.jars", "").split(",") if j]
    return builder.config("spark.jars", ",".join(jars + [jar_path()]))
