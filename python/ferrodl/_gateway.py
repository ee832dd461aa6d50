"""Py4J proxies that turn Java exceptions into FerrodlError (see _errors)."""
from py4j.java_gateway import JavaClass, JavaMember, JavaObject, JavaPackage
from ._errors import FerrodlClassPathError, from_java, java_errors

_JAVA_TYPES = (JavaObject, JavaClass, JavaMember, JavaPackage)


def wrap(value):
    """A proxy for a Py4J object; other values as they are."""
    if isinstance(value, _JAVA_TYPES):
        return JavaProxy(value)
    return value


def unwrap(value):
    """The Py4J object behind a proxy (also inside lists and tuples)."""
    if isinstance(value, JavaProxy):
        return value._target
    if isinstance(value, _JAVA_TYPES):
        return value  # (Py4J answers any attribute name, so no getattr probing below)
    if isinstance(value, (list, tuple)):
        return type(value)(unwrap(v) for v in value)
    java = getattr(value, "_ferrodl_java_object", None)  # ferrodl's Python wrappers
    return java if java is not None else value


def call(fn, *args):
    """Calls a Py4J callable with unwrapped arguments, translating Java exceptions."""
    try:
        return wrap(fn(*[unwrap(a) for a in args]))
    except java_errors() as e:
        raise from_java(e) from None


class JavaProxy:
    """A Java object, class, method or package seen through the gateway, with Python errors.

    Attribute access and calls behave as on the Py4J object; results are proxies again, so builder
    chains (`NeuralNetConfiguration.Builder().seed(1).list()...`) keep translating errors.
    """

    __slots__ = ("_target",)

    def __init__(self, target):
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name):
        target = object.__getattribute__(self, "_target")
        if isinstance(target, JavaPackage) and name[:1].isupper():
            # a class that is not on the JVM's class path shows up as a package in Py4J
            value = getattr(target, name)
            if isinstance(value, JavaPackage):
                raise FerrodlClassPathError(
                    f"{value._fqn} is not on the Spark JVM's class path: create the SparkSession with "
                    "ferrodl.session_builder() (or spark.jars=ferrodl.jar_path())")
            return wrap(value)
        try:
            return wrap(getattr(target, name))
        except java_errors() as e:
            raise from_java(e) from None

    def __call__(self, *args):
        return call(object.__getattribute__(self, "_target"), *args)

    def __iter__(self):
        return (wrap(v) for v in self._target)

    def __len__(self):
        return len(self._target)

    def __getitem__(self, key):
        return wrap(self._target[key])

    def __eq__(self, other):
        return self._target == unwrap(other)

    def __hash__(self):
        return hash(self._target)

    def __str__(self):
        return str(self._target)

    def __repr__(self):
        return f"JavaProxy({self._target!r})"
