"""Java exceptions as Python exceptions that carry the Java message.

A call through the gateway that throws becomes the `FerrodlError` subclass of the first ferrodl (or
argument) exception in the Java cause chain, so a failure inside a Spark job (wrapped by Spark in
SparkException) still surfaces as, for example, `FerrodlInvalidInputError` with ferrodl's own words.
"""


class FerrodlError(Exception):
    """An error raised by ferrodl's Java or native code.

    `java_class` is the Java exception's class name, `java_trace` its stack trace as text.
    """

    def __init__(self, message, java_class=None, java_trace=None):
        super().__init__(message)
        self.java_class = java_class
        self.java_trace = java_trace


class FerrodlInvalidInputError(FerrodlError, ValueError):
    """Bad data: wrong shapes, labels out of range, empty inputs (DL4JInvalidInputException)."""


class FerrodlInvalidConfigError(FerrodlError, ValueError):
    """A network or training-master configuration that cannot work (DL4JInvalidConfigException)."""


class FerrodlFormatError(FerrodlError, ValueError):
    """A file that is not in ferrodl's format (DataSetFormatException)."""


class FerrodlStateError(FerrodlError, RuntimeError):
    """An object used in a state that does not allow it, e.g. a closed network (NativeStateException)."""


class FerrodlNativeError(FerrodlError, RuntimeError):
    """The native library is missing or failed (NativeLibraryUnavailableException, NativePanicException)."""


class FerrodlClassPathError(FerrodlError, RuntimeError):
    """The ferrodl jar is not on the Spark JVM's class path."""


_BY_JAVA_CLASS = {
    "org.ferrodl.exception.DL4JInvalidInputException": FerrodlInvalidInputError,
    "org.ferrodl.exception.DL4JInvalidConfigException": FerrodlInvalidConfigError,
    "org.ferrodl.exception.DataSetFormatException": FerrodlFormatError,
    "org.ferrodl.exception.FerroIllegalArgumentException": FerrodlInvalidInputError,
    "org.ferrodl.exception.NativeStateException": FerrodlStateError,
    "org.ferrodl.exception.NativeLibraryUnavailableException": FerrodlNativeError,
    "org.ferrodl.exception.NativePanicException": FerrodlNativeError,
    "org.ferrodl.exception.RelayException": FerrodlError,
    "java.lang.IllegalArgumentException": FerrodlInvalidInputError,
    "java.lang.IllegalStateException": FerrodlStateError,
}


def java_errors():
    """The Python exception types a failed gateway call raises: Py4J's, and PySpark's own conversion
    of some Java exceptions (IllegalArgumentException, ...)."""
    from py4j.protocol import Py4JJavaError

    try:
        from pyspark.errors.exceptions.captured import CapturedException
    except ImportError:  # pyspark 3.x before the errors package
        from pyspark.sql.utils import CapturedException
    return Py4JJavaError, CapturedException


def from_java(error):
    """The FerrodlError for a Py4JJavaError or a PySpark CapturedException (walks the Java causes)."""
    top = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    trace = str(error)
    if top is None:
        return FerrodlError(trace, None, trace)
    t = top
    seen = 0
    while t is not None and seen < 20:
        name = t.getClass().getName()
        cls = _BY_JAVA_CLASS.get(name)
        if cls is not None:
            return cls(str(t.getMessage()), name, trace)
        t = t.getCause()
        seen += 1
    name = top.getClass().getName()
    return FerrodlError(f"{name}: {top.getMessage()}", name, trace)
