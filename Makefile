# ferrodl front door. `make example` builds everything and runs the example on an embedded local
# Spark; `make test` installs what the tests need and runs every test (Rust, JVM, real cluster).
SHELL := /bin/bash
ROOT := $(CURDIR)
MVN ?= mvn -B -q
OS_ARCH := linux-x86_64
STAGED_LIB := target/native-staging/org/ferrodl/native/$(OS_ARCH)/libferrodl.so
SPARK_VERSION := 4.2.0
SPARK_DIST := $(ROOT)/.build/spark-dist
export SPARK_HOME := $(SPARK_DIST)/pyspark

.PHONY: all native stage jvm example test test-rust test-jvm test-cluster spark-dist clean

all: jvm

native:
	cargo build --release --lib

stage: native
	mkdir -p $(dir $(STAGED_LIB))
	cp target/release/libferrodl.so $(STAGED_LIB)

jvm: stage
	$(MVN) -f jvm-bindings/pom.xml install -DskipTests

test-rust:
	cargo test --workspace --all-targets

test-jvm: stage
	$(MVN) -f jvm-bindings/pom.xml install

clean:
	cargo clean
	$(MVN) -f jvm-bindings/pom.xml clean
	rm -rf .build
