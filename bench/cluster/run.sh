#!/usr/bin/env bash
# Distributed time-to-accuracy benchmark (not a test): the MNIST digits, an MLP 784-500-100-10, two
# workers on a real Spark standalone cluster on 127.0.0.1, for
#   ferrodl-paramavg / ferrodl-shared   spark-submit of the example jar (make jvm), pyspark==4.2.0 cluster
#   dl4j-paramavg / dl4j-shared         Deeplearning4j (bench/cluster/dl4j-spark), pyspark==3.5.9 cluster
#   mllib-mlp                           Spark MLlib MultilayerPerceptronClassifier, pyspark==4.2.0 cluster
# Writes bench/cluster/results.json and bench/cluster/time_to_accuracy.png.
#
# On a fresh machine it installs what it needs under .build/ (the two Spark distributions from PyPI, a
# venv with matplotlib) and builds the ferrodl example jar (make jvm) and the DL4J uber-jar; every
# Spark daemon, executor and driver it starts is stopped when it ends, also on failure or Ctrl-C.
#
# Usage: bench/cluster/run.sh [bench.py options]      e.g. --systems ferrodl-shared,dl4j-shared
# Environment: REPEATS (1; each repeat runs every system once, ~22 min each on 2 cores), BUDGET
#   (training seconds per run, 300), PYTHON (python3), SKIP_BUILD=1 (use the jars as they are),
#   KEEP_LOGS=DIR (copy all logs there).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
SPARK35_VERSION="3.5.9"
SPARK35_DIR="$ROOT/.build/bench-spark35"
VENV="$ROOT/.build/bench-cluster-venv"
REPEATS="${REPEATS:-1}"
BUDGET="${BUDGET:-300}"

log() { printf '[bench-cluster] %s\n' "$*" >&2; }
cd "$ROOT"

# ---- Spark distributions (a pip-installed pyspark package directory is a complete SPARK_HOME) ----
make -s spark-dist PYTHON="$PYTHON" # pyspark==4.2.0 into .build/spark-dist, as the cluster test uses
if [[ ! -x "$SPARK35_DIR/pyspark/bin/spark-submit" ]]; then
  log "installing pyspark==$SPARK35_VERSION into $SPARK35_DIR (Spark 3.5 / Scala 2.12 for DL4J)"
  mkdir -p "$SPARK35_DIR"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps --target "$SPARK35_DIR" \
    "pyspark==$SPARK35_VERSION"
fi

# ---- venv: numpy for pyspark.ml (MLlib driver), matplotlib for the chart ----
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -c 'import matplotlib, numpy' 2>/dev/null \
  || "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"

# ---- jars ----
if [[ "${SKIP_BUILD:-0}" != "1" ]]; then
  log "building the ferrodl example jar (make jvm)"
  make -s jvm
  # DL4J's Spark modules: 1.0.0-M2.1 (the release of deeplearning4j-core / nd4j-native used) if Maven
  # Central serves it, else 1.0.0-M2; what happened is kept for results.json
  mkdir -p "$HERE/dl4j-spark/target"
  DL4J_SPARK_VERSION="1.0.0-M2.1"
  : >"$HERE/dl4j-spark/target/dl4j-resolution.txt"
  for artifact in dl4j-spark_2.12 dl4j-spark-parameterserver_2.12; do
    if out="$(mvn -B -U dependency:get -Dartifact="org.deeplearning4j:$artifact:1.0.0-M2.1" -Dtransitive=false 2>&1)"; then
      echo "org.deeplearning4j:$artifact:1.0.0-M2.1 resolved" >>"$HERE/dl4j-spark/target/dl4j-resolution.txt"
    else
      DL4J_SPARK_VERSION="1.0.0-M2"
      { echo "org.deeplearning4j:$artifact:1.0.0-M2.1 refused:"
        grep -m1 -E '^\[ERROR\]' <<<"$out" || echo "(no [ERROR] line)"; } >>"$HERE/dl4j-spark/target/dl4j-resolution.txt"
    fi
  done
  echo "DL4J Spark modules used: $DL4J_SPARK_VERSION" >>"$HERE/dl4j-spark/target/dl4j-resolution.txt"
  log "$(tr '\n' ' ' <"$HERE/dl4j-spark/target/dl4j-resolution.txt")"
  log "building the DL4J uber-jar (bench/cluster/dl4j-spark; Linux x86-64 natives only)"
  mvn -B -q -f "$HERE/dl4j-spark/pom.xml" package -DskipTests -Djavacpp.platform=linux-x86_64 \
    -Ddl4j.spark.version="$DL4J_SPARK_VERSION"
  # the DL4J/ND4J/Aeron artifacts that went into the jar, for results.json
  mvn -B -q -f "$HERE/dl4j-spark/pom.xml" dependency:list -Djavacpp.platform=linux-x86_64 \
    -Ddl4j.spark.version="$DL4J_SPARK_VERSION" -DincludeScope=runtime -DoutputFile="$HERE/dl4j-spark/target/dependency-list.txt" >/dev/null
  # The version list is informational (copied into results.json); grep exits 1 when nothing
  # matches, which must not abort the benchmark under `set -e` -- hence `|| true`.
  grep -E 'org\.deeplearning4j:|org\.nd4j:nd4j-(native|api|aeron|parameter)|io\.aeron:|org\.bytedeco:(openblas|javacpp):' \
    "$HERE/dl4j-spark/target/dependency-list.txt" | sed -E 's/^ +//; s/ -- .*//' | sort -u \
    >"$HERE/dl4j-spark/target/dl4j-versions.txt" || true
fi
[[ -f "$ROOT/spark-example/target/ferrodl-spark-example-0.1.0.jar" ]] || { log "example jar missing (make jvm)"; exit 1; }
[[ -f "$HERE/dl4j-spark/target/dl4j-spark-bench.jar" ]] || { log "DL4J jar missing"; exit 1; }

args=(--repeats "$REPEATS" --budget "$BUDGET")
[[ -z "${KEEP_LOGS:-}" ]] || args+=(--keep-logs "$KEEP_LOGS")
log "running bench/cluster/bench.py ${args[*]} $*"
exec "$VENV/bin/python" "$HERE/bench.py" "${args[@]}" "$@"
