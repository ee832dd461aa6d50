"""Build hook: the wheel carries the Spark bundle jars that `make jvm` built (one per Spark line).

Building fails, naming the missing jar, when the Maven build has not run; nothing is downloaded.
"""
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
JARS = {
    "ferrodl-spark_2.13-0.1.0-bundle-linux-x86_64.jar": "jvm-bindings/ferrodl-spark/target",
    "ferrodl-spark_2.12-0.1.0-bundle-linux-x86_64.jar": "jvm-bindings/ferrodl-spark_2.12/target",
}


class BuildWithJars(build_py):
    def run(self):
        target = os.path.join(HERE, "ferrodl", "jars")
        os.makedirs(target, exist_ok=True)
        for old in glob.glob(os.path.join(target, "*.jar")):
            os.remove(old)
        for name, folder in JARS.items():
            src = os.path.join(ROOT, folder, name)
            if not os.path.isfile(src):
                raise SystemExit(f"ferrodl: {src} is missing; build the jars first (make jvm at the repository root)")
            shutil.copy2(src, os.path.join(target, name))
        super().run()


setup(cmdclass={"build_py": BuildWithJars})
