#!/usr/bin/env bash
# `make bench`: every benchmark of issue 5 (and the performance table of issue 3) in one session,
# then docs/BENCHMARKS.md and the charts (bench/report.py). Not a test: nothing in `make test`
# runs it.
#
# Parts (BENCH_PARTS, space- or comma-separated; default: all, in this order):
#   gemm     FP32 GEMM 256³/1024³/2048³, ferrodl vs numpy (OpenBLAS); per kernel where ferrodl-tensor
#            dispatches between kernels (FERRODL_GEMM)                       ~1 min
#   single   engine-level training throughput, ferrodl (Rust API) vs JAX (jit): MLP batch 64/256,
#            LeNet CNN batch 64, as examples/s and achieved FLOP/s ÷ GEMM 1024³; step profile   ~2 min
#            (gemm and single run in one process, interleaved: bench/python/run_bench.py)
#   jvm      through the public Java API: ferrodl vs DL4J 1.0.0-M2.1 vs JAX, MLP and LeNet batch 64 on
#            the MNIST digits; JNI overhead; peak RSS over 20 epochs; the LSTM rows (the reference's
#            character model, GravesLSTM and LSTM, batch 32, also vs PyTorch) (bench/jvm/run.sh)  ~20-25 min
#   cluster  distributed time-to-accuracy on a real 2-worker standalone cluster: ferrodl paramavg and
#            shared vs DL4J's masters vs MLlib (bench/cluster/run.sh)             ~25 min per repeat
#   spark    the Spark path (issue 15): SparkDl4jMultiLayer.fit on a cached RDD against local
#            MultiLayerNetwork.fit on the same cores, both masters, on local[2] and on a standalone
#            cluster, ratios from one application each; per-phase time breakdown (bench/spark/run.sh)
#                                                                          ~10 min
#   (aliases: jni, memory -> jvm; all -> every part)
#
# Repetitions: BENCH_REPS sets all three below; each can be set on its own:
#   BENCH_ROUNDS (7)             rounds of gemm/single (systems interleaved within a round)
#   BENCH_JVM_REPS (3)           repetitions of every jvm measurement (each its own JVM / process)
#   BENCH_CLUSTER_REPEATS (1)    repeats of every distributed system
#   BENCH_SPARK_ROUNDS (5)       timed rounds of the spark part (one epoch of every configuration)
# BENCH_ARGS: extra options for run_bench.py (e.g. "--mlp-secs 2"); BENCH_OUT: the report (default
# docs/BENCHMARKS.md; another path to try the command without touching it).
#
# A part that fails does not stop the others; the report marks it failed and keeps its previous
# section under "Previous results". Logs: .build/bench-logs/. Exit status: 1 if any part failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
VENV="$ROOT/.build/bench-venv"
LOGS="$ROOT/.build/bench-logs"
RESULTS="$HERE/results"
mkdir -p "$LOGS" "$RESULTS"
log() { echo "[make bench] $(date -u +%H:%M:%S) $*" >&2; }

# ---- which parts
ALL=(gemm single jvm cluster spark)
req=${BENCH_PARTS:-all}
req=${req//,/ }
want=()
for p in $req; do
  case $p in
    all) want+=("${ALL[@]}") ;;
    gemm|single|jvm|cluster|spark) want+=("$p") ;;
    jni|memory) want+=(jvm) ;;
    *) echo "make bench: unknown part '$p' in BENCH_PARTS; valid: gemm single jvm cluster spark (jni, memory: jvm; all)" >&2
       exit 2 ;;
  esac
done
parts=()
for p in "${ALL[@]}"; do
  for w in "${want[@]}"; do [ "$w" = "$p" ] && { parts+=("$p"); break; }; done
done
has() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }

ROUNDS=${BENCH_ROUNDS:-${BENCH_REPS:-7}}
JVM_REPS=${BENCH_JVM_REPS:-${BENCH_REPS:-3}}
CLUSTER_REPEATS=${BENCH_CLUSTER_REPEATS:-${BENCH_REPS:-1}}
for n in "$ROUNDS" "$JVM_REPS" "$CLUSTER_REPEATS"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "make bench: repetition counts must be positive integers, got '$n'" >&2; exit 2; }
done

SESSION_START=$(date -u +"%Y-%m-%d %H:%M")
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "parts: ${parts[*]}; rounds $ROUNDS, jvm repetitions $JVM_REPS, cluster repeats $CLUSTER_REPEATS; load $LOAD_START"

# ---- the Python peers (numpy, jax[cpu], threadpoolctl, matplotlib for the charts)
if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV"
  "$PYTHON" -m venv "$VENV" || { echo "make bench: cannot create $VENV" >&2; exit 1; }
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$HERE/python/requirements.txt" \
  || { echo "make bench: pip install -r bench/python/requirements.txt failed" >&2; exit 1; }

ran=()
failed=()
run_part() { # name log command...
  local name=$1 logf=$2
  shift 2
  log "$name: $* (log: $logf)"
  if "$@" 2>&1 | tee "$logf"; then
    ran+=("$name")
  else
    log "$name FAILED (see $logf)"
    ran+=("$name")
    failed+=("$name")
  fi
}

# ---- gemm / single: one process, the systems interleaved
engine_parts=()
has gemm && engine_parts+=(gemm)
has single && engine_parts+=(single)
if [ ${#engine_parts[@]} -gt 0 ]; then
  ep=$(IFS=,; echo "${engine_parts[*]}")
  if ! cargo build --release --manifest-path bench/rust/Cargo.toml > "$LOGS/build-bench-rust.log" 2>&1; then
    log "building bench/rust failed (see $LOGS/build-bench-rust.log)"
    failed+=("${engine_parts[@]}")
  else
    log "$ep: bench/python/run_bench.py (log: $LOGS/engine.log)"
    # shellcheck disable=SC2086
    "$VENV/bin/python" bench/python/run_bench.py --parts "$ep" \
      --server bench/rust/target/release/ferrodl-bench --json "$RESULTS/engine.json" \
      --rounds "$ROUNDS" ${BENCH_ARGS:-} 2>&1 | tee "$LOGS/engine.log" || failed+=("${engine_parts[@]}")
  fi
  ran+=("${engine_parts[@]}")
fi

# ---- PyTorch: the jvm part's LSTM row, the spark part's TorchDistributor rows (BENCH_TORCH=0 skips both)
torch=0
if { has jvm || has spark; } && [ "${BENCH_TORCH:-1}" != 0 ]; then
  torch=1
  reqs=(-r "$HERE/python/requirements-torch.txt")
  has spark && reqs+=(-r "$HERE/spark/requirements-torch-distributor.txt")
  log "pip install ${reqs[*]#$HERE/} (PyTorch for the LSTM row and TorchDistributor; BENCH_TORCH=0 skips it)"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir "${reqs[@]}" \
    > "$LOGS/pip-torch.log" 2>&1 || { log "installing torch failed (see $LOGS/pip-torch.log): no PyTorch rows"; torch=0; }
fi

# ---- jvm: Java API vs DL4J vs JAX (and PyTorch on the LSTM row), JNI overhead, memory
if has jvm; then
  run_part jvm "$LOGS/jvm.log" env JVM_BENCH_REPS="$JVM_REPS" JVM_BENCH_JAX_PYTHON="$VENV/bin/python" \
    JVM_BENCH_TORCH="$torch" MVN="${MVN:-mvn -B -q}" bench/jvm/run.sh
fi

# ---- cluster: distributed time-to-accuracy
if has cluster; then
  run_part cluster "$LOGS/cluster.log" env REPEATS="$CLUSTER_REPEATS" PYTHON="$PYTHON" bench/cluster/run.sh
fi

# ---- spark: the Spark path against local training (issue 15)
if has spark; then
  run_part spark "$LOGS/spark.log" env SPARK_BENCH_ROUNDS="${BENCH_SPARK_ROUNDS:-${BENCH_REPS:-5}}" SPARK_BENCH_TORCH="$torch" \
    PYTHON="$PYTHON" MVN="${MVN:-mvn -B -q}" bench/spark/run.sh
fi

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
"$VENV/bin/python" - "$RESULTS/session.json" "$SESSION_START" "$LOAD_START" "$LOAD_END" <<'EOF'
import json, os, subprocess, sys, time
path, start, l0, l1 = sys.argv[1:5]
cpu = "unknown"
for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
    if line.startswith("Model name:"):
        cpu = line.split(":", 1)[1].strip()
json.dump({"start": start, "end": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "cpu_model": cpu,
           "cores": os.cpu_count(), "load_start": l0, "load_end": l1}, open(path, "w"), indent=1)
EOF

clean() { local x out=(); for x in "$@"; do [ -n "$x" ] && out+=("$x"); done; (IFS=,; echo "${out[*]}"); }
RAN=$(clean "${ran[@]}")
FAILED=$(clean "${failed[@]}")
"$VENV/bin/python" bench/report.py --parts "$RAN" --failed "$FAILED" \
  --engine "$RESULTS/engine.json" --jvm bench/jvm/results.json --cluster bench/cluster/results.json --spark bench/spark/results.json \
  --session "$RESULTS/session.json" --out "${BENCH_OUT:-docs/BENCHMARKS.md}" --charts "$HERE/charts" \
  || { log "writing docs/BENCHMARKS.md failed"; exit 1; }
log "done: ${RAN}${FAILED:+ (failed: $FAILED)}; load $LOAD_START -> $LOAD_END"
[ -z "$FAILED" ]
