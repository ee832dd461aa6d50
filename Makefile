# ferrodl front door. `make example` builds everything and runs the example on an embedded local
# Spark; `make test` installs what the tests need and runs every test (Rust, JVM, real cluster).
SHELL := /bin/bash
ROOT := $(CURDIR)
MVN ?= mvn -B -q
OS_ARCH := linux-x86_64
STAGED_LIB := target/native-staging/org/ferrodl/native/$(OS_ARCH)/libferrodl.so
# two Spark lines from one source tree: ferrodl-spark_2.13 (Spark 4.x) and ferrodl-spark_2.12 (3.5)
SPARK_VERSION := 4.2.0
SPARK_VERSION_2_12 := 3.5.9
SPARK_DIST := $(ROOT)/.build/spark-dist
SPARK_DIST_2_12 := $(ROOT)/.build/spark-dist-3.5
export SPARK_HOME := $(SPARK_DIST)/pyspark

.PHONY: all native stage jvm example example-lstm example-lenet test test-deps test-rust test-valgrind test-valgrind-relay test-jvm test-cluster test-python test-python-all python-wheel spark-dist clean bench

all: jvm

native:
	cargo build --release --lib

# linux-aarch64 is cross-built and packaged too when the Rust target and a cross linker are
# installed (rustup target add aarch64-unknown-linux-gnu; apt-get install gcc-aarch64-linux-gnu);
# NATIVE_AARCH64=no skips it. Without them only linux-x86_64 is built (README, "Platforms").
AARCH64_TARGET := aarch64-unknown-linux-gnu
AARCH64_LINKER ?= aarch64-linux-gnu-gcc
AARCH64_STAGED := target/native-staging/org/ferrodl/native/linux-aarch64/libferrodl.so
NATIVE_AARCH64 ?= $(shell rustup target list --installed 2>/dev/null | grep -qx $(AARCH64_TARGET) \
	&& command -v $(AARCH64_LINKER) >/dev/null && echo yes)

stage: native
	mkdir -p $(dir $(STAGED_LIB))
	cp target/release/libferrodl.so $(STAGED_LIB)
ifeq ($(NATIVE_AARCH64),yes)
	CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=$(AARCH64_LINKER) \
		cargo build --release --lib --target $(AARCH64_TARGET)
	mkdir -p $(dir $(AARCH64_STAGED))
	cp target/$(AARCH64_TARGET)/release/libferrodl.so $(AARCH64_STAGED)
else
	rm -rf $(dir $(AARCH64_STAGED))
endif

jvm: stage
	$(MVN) -f jvm-bindings/pom.xml install -DskipTests

test-rust:
	cargo test --workspace --all-targets

# every native crate's tests under valgrind's memcheck: all pass, no memory error, 0 bytes
# definitely lost (installs valgrind if missing; about 25 minutes on 2 cores, see README "Testing
# under valgrind"), so not part of `make test`
test-valgrind:
	tests/valgrind/run-valgrind.sh

# the relay's tests under valgrind (30-50 s): the crate of threads, sockets and timeouts
test-valgrind-relay:
	tests/valgrind/run-valgrind.sh ferrodl-relay

# headless Chromium (Debian's package) renders the training-stats page in StatsHtmlTest
test-deps:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

test-jvm: stage test-deps
	$(MVN) -f jvm-bindings/pom.xml install

clean:
	cargo clean
	$(MVN) -f jvm-bindings/pom.xml clean
	rm -rf .build

# ---- Spark example and real-cluster test ----
PYTHON ?= python3
EXAMPLE_JAR := spark-example/target/ferrodl-spark-example-0.1.0.jar
# Spark's own runtime classpath, resolved by Maven from a standalone pom (Spark's dependency versions)
EXAMPLE_SPARK_CP := spark-example/target/spark-runtime.classpath
EXAMPLE_ARGS ?=
# the module openings Spark's own launcher passes on Java 17+ (plain `java` needs them spelled out)
SPARK_JAVA_OPTS := -XX:+IgnoreUnrecognizedVMOptions \
	--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED \
	--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
	--add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
	--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
	--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
	--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED \
	--add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED \
	-Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true

# the Spark distributions the cluster test runs (pyspark's package directory is a full SPARK_HOME)
spark-dist: $(SPARK_HOME)/bin/spark-submit $(SPARK_DIST_2_12)/pyspark/bin/spark-submit

$(SPARK_HOME)/bin/spark-submit:
	mkdir -p $(SPARK_DIST)
	$(PYTHON) -m pip install --no-deps --target $(SPARK_DIST) pyspark==$(SPARK_VERSION)

$(SPARK_DIST_2_12)/pyspark/bin/spark-submit:
	mkdir -p $(SPARK_DIST_2_12)
	$(PYTHON) -m pip install --no-deps --target $(SPARK_DIST_2_12) pyspark==$(SPARK_VERSION_2_12)

# runs main class $(1) of the example jar on an embedded local[*] Spark (Spark's classpath resolved
# by Maven, no installation needed) with $(EXAMPLE_ARGS)
define run-example
	$(MVN) -f spark-example/spark-classpath.pom.xml dependency:build-classpath \
		-Dspark.version=$(SPARK_VERSION) -Dmdep.outputFile=$(ROOT)/$(EXAMPLE_SPARK_CP)
	SPARK_LOCAL_IP=127.0.0.1 java -Xmx2g $(SPARK_JAVA_OPTS) \
		-cp "$(EXAMPLE_JAR):$$(cat $(EXAMPLE_SPARK_CP))" $(1) $(EXAMPLE_ARGS)
endef

# builds everything, then trains the MNIST MLP on an embedded local[*] Spark.
# Options: make example EXAMPLE_ARGS="--epochs 3"
example: jvm
	$(call run-example,org.ferrodl.examples.MnistMlpExample)

# the reference's character model (2 x GravesLSTM 200, TBPTT 50, RmsProp) trained with parameter
# averaging on the novel inside the example jar, on an embedded local[*] Spark; prints the held-out
# loss per epoch and generated text. Options: make example-lstm EXAMPLE_ARGS="--epochs 1"
example-lstm: jvm
	$(call run-example,org.ferrodl.examples.CharacterLstmExample)

# a LeNet-style CNN trained locally (no Spark) on the MNIST digits inside the example jar
example-lenet: jvm
	java -Xmx2g -cp "$(EXAMPLE_JAR)" org.ferrodl.examples.LeNetMnistExample $(EXAMPLE_ARGS)

# a standalone master + two workers on 127.0.0.1, the example submitted with spark-submit: on
# Spark 4.x (Scala 2.13), then on Spark 3.5 (Scala 2.12) with the example built for that line.
# Parameter averaging trains from a saved directory (paramavg-dir: fit(String), the reference's
# production workflow) on 2.13 and from an RDD (paramavg) on 2.12; a ComputationGraph (graph:
# MnistGraphExample through SparkComputationGraph) and the executor-kill scenario run on
# 2.13 only by default, and so does gradient sharing (the CI budget: the JVM tests run both
# lines' sharing path; on 2.12 the cluster scenarios passed too, 2026-11-27:
# make test-cluster CLUSTER_SCENARIOS_2_12="paramavg shared shared-kill")
CLUSTER_SCENARIOS_2_12 ?= paramavg
test-cluster: jvm
	tests/cluster/run-cluster-test.sh
	SPARK_LINE=2.12 tests/cluster/run-cluster-test.sh $(CLUSTER_SCENARIOS_2_12)

# the PySpark front end (python/): its wheel (with the bundle jars of both lines) installed into
# .build, then pytest on local Spark 3.5 and on a standalone cluster of Spark 4.2 (both lines, both
# modes, within the CI budget; make test-python-all adds local Spark 4.2)
PY_DEPS := $(ROOT)/.build/python-deps
PY_FERRODL := $(ROOT)/.build/python-ferrodl
WHEEL_DIR := $(ROOT)/.build/wheel
PYTEST = cd $(ROOT)/.build && PYTHONPATH=$(PY_FERRODL):$(PY_DEPS):$(1):$(wildcard $(1)/pyspark/python/lib/py4j-*-src.zip) \
	SPARK_HOME=$(1)/pyspark SPARK_LOCAL_IP=127.0.0.1 $(2) $(PYTHON) -m pytest -q -p no:cacheprovider $(ROOT)/python/tests

$(PY_DEPS)/numpy:
	$(PYTHON) -m pip install -q --target $(PY_DEPS) numpy pytest

python-wheel: jvm
	rm -rf $(WHEEL_DIR) $(PY_FERRODL)
	$(PYTHON) -m pip wheel -q --no-deps -w $(WHEEL_DIR) ./python
	$(PYTHON) -m pip install -q --no-deps --target $(PY_FERRODL) $(WHEEL_DIR)/ferrodl-0.1.0-py3-none-any.whl

test-python: python-wheel spark-dist $(PY_DEPS)/numpy
	$(call PYTEST,$(SPARK_DIST_2_12),)
	$(call PYTEST,$(SPARK_DIST),FERRODL_TEST_CLUSTER=1)

test-python-all: test-python
	$(call PYTEST,$(SPARK_DIST),)

test: test-rust test-valgrind-relay test-jvm test-cluster test-python

# every benchmark of issue 5 in one session, not a test (never part of `make test`): GEMM and
# engine-level training vs numpy/JAX, training through the Java API vs DL4J and JAX with JNI
# overhead and memory, distributed time-to-accuracy vs DL4J and MLlib, the Spark path against local
# training (issue 15); writes docs/BENCHMARKS.md and the charts (bench/bench.sh has the details;
# 50-65 min on 2 cores). Options:
# make bench BENCH_PARTS="gemm single" BENCH_REPS=3   (parts: gemm single jvm cluster spark; default all)
# BENCH_ROUNDS / BENCH_JVM_REPS / BENCH_CLUSTER_REPEATS / BENCH_SPARK_ROUNDS per part, BENCH_ARGS for run_bench.py
BENCH_PARTS ?= all
bench:
	BENCH_PARTS="$(BENCH_PARTS)" PYTHON="$(PYTHON)" MVN="$(MVN)" bench/bench.sh
