#!/usr/bin/env bash
# The `spark` part of `make bench` (issue 15): SparkDl4jMultiLayer.fit on a cached training RDD
# against local MultiLayerNetwork.fit on the same cores, same network and data, on local[2] and on a
# standalone cluster (master + two one-core workers on 127.0.0.1), every ratio from one application.
# Builds the library and the example jar (make jvm, unless SPARK_BENCH_BUILD=0), installs the pyspark
# distribution (make spark-dist; its jars are Spark's classpath), compiles bench/spark/src with javac against them, then
# runs bench/spark/bench.py, which writes bench/spark/results.json. Logs: .build/bench-logs/spark/.
#
# Environment: SPARK_BENCH_ROUNDS (5) timed rounds (one epoch of every configuration each),
#   SPARK_BENCH_MODES (local,cluster), SPARK_BENCH_CONFIGS (local-32,local-16,paramavg-32,shared-16,
#   shared-32,sharedts-16,sharedts-32; sharedts: the README's recommended TargetSparsity threshold),
#   SPARK_BENCH_TTA (20: time to 0.95 test accuracy, at most that many epochs per configuration; 0 skips it), SPARK_BENCH_BUILD (1), MVN (mvn -B -q), PYTHON (python3),
#   SPARK_BENCH_TORCH (1: add Spark's TorchDistributor rows to the cluster's time to accuracy when
#   SPARK_BENCH_TORCH_PYTHON imports torch, numpy, pandas and pyarrow; 0 skips them), SPARK_BENCH_TORCH_PYTHON
#   (.build/bench-venv/bin/python, where bench/bench.sh installs them), SPARK_BENCH_TORCH_BATCHES (32).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MVN=${MVN:-mvn -B -q}
PYTHON=${PYTHON:-python3}
cd "$ROOT"
log() { echo "[bench/spark] $(date -u +%H:%M:%S) $*" >&2; }

if [ "${SPARK_BENCH_BUILD:-1}" = 1 ]; then
  log "make jvm"
  make -s jvm MVN="$MVN"
fi
make -s spark-dist PYTHON="$PYTHON"
# Spark's own jars (the pyspark 4.2.0 distribution the cluster runs) are the local[2] classpath too
SPARK_JARS="$ROOT/.build/spark-dist/pyspark/jars/*"
EXAMPLE_JAR=spark-example/target/ferrodl-spark-example-0.1.0.jar
[ -f "$EXAMPLE_JAR" ] || { echo "bench/spark: $EXAMPLE_JAR missing (make jvm)" >&2; exit 1; }
rm -rf "$HERE/target"
mkdir -p "$HERE/target/classes"
javac -nowarn -d "$HERE/target/classes" -cp "$EXAMPLE_JAR:$SPARK_JARS" \
  $(find "$HERE/src" -name '*.java')
jar cf "$HERE/target/ferrodl-spark-bench.jar" -C "$HERE/target/classes" .
TORCH_PY=""
if [ "${SPARK_BENCH_TORCH:-1}" != 0 ]; then
  TORCH_PY=${SPARK_BENCH_TORCH_PYTHON:-$ROOT/.build/bench-venv/bin/python}
  if ! "$TORCH_PY" -c 'import torch, numpy, pandas, pyarrow' 2>/dev/null; then
    log "no TorchDistributor rows: $TORCH_PY cannot import torch, numpy, pandas, pyarrow (bench/bench.sh installs them)"
    TORCH_PY=""
  fi
fi
log "bench/spark/bench.py"
exec "$PYTHON" "$HERE/bench.py" --modes "${SPARK_BENCH_MODES:-local,cluster}" \
  --torch-python "$TORCH_PY" --torch-batches "${SPARK_BENCH_TORCH_BATCHES:-32}" \
  --rounds "${SPARK_BENCH_ROUNDS:-5}" --tta "${SPARK_BENCH_TTA:-20}" \
  --configs "${SPARK_BENCH_CONFIGS:-local-32,local-16,paramavg-32,shared-16,shared-32,sharedts-16,sharedts-32,paramavgfresh-32,sharedfresh-16}"
