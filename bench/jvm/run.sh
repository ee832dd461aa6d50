#!/usr/bin/env bash
# Single-node training throughput through the public Java APIs, ferrodl vs Deeplearning4j
# 1.0.0-M2.1, with JAX on CPU (jit, same networks, data and protocol: bench/jvm/jax/jax_bench.py) as
# the third system (MLP and LeNet-style CNN on the MNIST digits of spark-example, batch 64), the
# graph row (a small residual CNN, two residual blocks joined by ElementWiseVertex Add: ferrodl's
# ComputationGraph vs JAX with the same architecture, bench/python/peers.py rescnn), plus ferrodl's
# JNI overhead per step and the resident memory of every system; and the LSTM rows (issue 12 item 8):
# the reference's character model (2 x 200 units, RnnOutputLayer softmax + MCXENT, RmsProp, l2,
# truncated BPTT 50, minibatch 32, characters per second) with GravesLSTM (ferrodl, DL4J, JAX with a
# peephole cell) and with LSTM (ferrodl, DL4J, JAX, PyTorch's torch.nn.LSTM):
# bench/jvm/python/char_lstm_bench.py is the Python side.
#
# Builds ferrodl-core (`make jvm`, which installs it into the Maven repository of $MVN) and the two standalone bench
# modules, runs every measurement in its own JVM, the systems interleaved (the order alternates
# from one repetition to the next), then writes bench/jvm/results.json and prints a summary.
# Raw output (one JSON line per measurement) and logs: bench/jvm/out/.
#
# Environment knobs (defaults in brackets):
#   JVM_BENCH_REPS [3]             repetitions of every measurement
#   JVM_BENCH_BUILD_FERRODL [1]    0: use the ferrodl-core already installed in ~/.m2
#   JVM_BENCH_MLP_MAX_S [35]       MLP runs stop after the first timed window (62 iterations) ending
#                                  past this many seconds once 2 windows are in (20 epochs otherwise);
#                                  bounds a slow configuration
#   JVM_BENCH_CNN_MAX_S [30]       the same for the CNN (31-iteration windows, at least 3; 4 epochs
#                                  otherwise)
#   JVM_BENCH_MODELS [mlp cnn rescnn jni graves lstm]  which rows to run (rescnn: ferrodl and JAX
#                                  only; graves: GravesLSTM char model, ferrodl/DL4J/JAX; lstm: LSTM
#                                  char model, ferrodl/DL4J/JAX/PyTorch)
#   JVM_BENCH_LSTM_MAX_S [20]      LSTM runs stop after the first window (one fit() of 32 sequences
#                                  of JVM_BENCH_LSTM_SEQ characters) ending past this many seconds
#                                  once 3 windows are in
#   JVM_BENCH_LSTM_SEQ [1000]      characters per sequence (the reference's exampleLength); TBPTT 50
#   JVM_BENCH_TORCH [1]            0: leave PyTorch out of the lstm row (it needs `torch` in the
#                                  python of JVM_BENCH_JAX_PYTHON; make bench installs it)
#   JVM_BENCH_PASSIVE_CNN [0]      1: also run the CNN under DL4J with OMP_WAIT_POLICY=PASSIVE
#   JVM_BENCH_JAVA_OPTS [-Xmx2g]   JVM options, the same for every run
#   JVM_BENCH_JAX_PYTHON [.build/bench-venv/bin/python]  a python with jax[cpu] (make bench makes
#                                  that venv); JVM_BENCH_JAX=0 leaves JAX out
#   JVM_BENCH_BASE_REF []          a git commit: also build ferrodl at that commit (in .build/bench-base,
#                                  with its own Maven repository) and run its MLP and CNN rows as
#                                  variant `ferrodl-base`, interleaved with the current tree's, so a
#                                  change is checked for a regression in one run on one machine
#   JVM_BENCH_SYSTEMS [all]        e.g. "ferrodl ferrodl-base": only these systems run
#   MVN [mvn -B -q]                the Maven command (e.g. with -Dmaven.repo.local=...)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT="$HERE/out"
REPS=${JVM_BENCH_REPS:-3}
MLP_MAX_S=${JVM_BENCH_MLP_MAX_S:-35}
CNN_MAX_S=${JVM_BENCH_CNN_MAX_S:-30}
PASSIVE_CNN=${JVM_BENCH_PASSIVE_CNN:-0}
JAVA_OPTS=${JVM_BENCH_JAVA_OPTS:--Xmx2g}
CORES=$(nproc)
DATA="$ROOT/spark-example/src/main/resources/mnist10k"
RUN_TIMEOUT_S=420
JAX_PY=${JVM_BENCH_JAX_PYTHON:-$ROOT/.build/bench-venv/bin/python}
JAX=${JVM_BENCH_JAX:-1}
MODELS=" ${JVM_BENCH_MODELS:-mlp cnn rescnn jni graves lstm} "
LSTM_MAX_S=${JVM_BENCH_LSTM_MAX_S:-20}
LSTM_SEQ=${JVM_BENCH_LSTM_SEQ:-1000}
TORCH=${JVM_BENCH_TORCH:-1}
MVN=${MVN:-mvn -B -q}
BASE_REF=${JVM_BENCH_BASE_REF:-}
BASE="$ROOT/.build/bench-base"
SYSTEMS=" ${JVM_BENCH_SYSTEMS:-ferrodl ferrodl-base jax torch dl4j dl4j-passive} "

rm -rf "$OUT"
mkdir -p "$OUT"
log() { echo "[bench/jvm] $(date +%H:%M:%S) $*" >&2; }

# An error line for results.json: stage, system, exit code and the tail of a log file.
record_error() { # stage system rc logfile
  python3 - "$@" >> "$OUT/errors.jsonl" <<'EOF'
import json, sys
stage, system, rc, path = sys.argv[1:5]
try:
    tail = open(path, errors="replace").read().splitlines()[-40:]
except OSError as e:
    tail = [f"(log unreadable: {e})"]
print(json.dumps({"type": "error", "stage": stage, "system": system, "rc": int(rc), "log": path,
                  "log_tail": tail}))
EOF
}

T0=$(date +%s)
{
  echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "git_sha=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  # uncommitted changes in what goes into libferrodl / ferrodl-core
  echo "git_engine_dirty=$(git -C "$ROOT" status --porcelain -- src native jvm-bindings Cargo.toml Cargo.lock build.rs 2>/dev/null | wc -l)"
  echo "cpu_model=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
  echo "cores=$CORES"
  echo "kernel=$(uname -r)"
  echo "java=$(java -version 2>&1 | head -1)"
  echo "java_runtime=$(java -version 2>&1 | sed -n 2p)"
  echo "mvn=$(mvn -v 2>/dev/null | head -1 | sed 's/\x1b\[[0-9;]*m//g')"
  echo "java_opts=$JAVA_OPTS"
  echo "reps=$REPS"
  echo "mlp_max_s=$MLP_MAX_S"
  echo "cnn_max_s=$CNN_MAX_S"
  echo "lstm_max_s=$LSTM_MAX_S"
  echo "lstm_seq=$LSTM_SEQ"
  echo "models=$(echo $MODELS)"
  [ -n "$BASE_REF" ] && echo "base_ref=$(git -C "$ROOT" rev-parse "$BASE_REF" 2>/dev/null || echo "$BASE_REF")"
} > "$OUT/env.txt"

# ---- builds
FERRODL_OK=1
DL4J_OK=1
if [ "${JVM_BENCH_BUILD_FERRODL:-1}" = 1 ]; then
  log "make jvm (libferrodl + ferrodl-core into the Maven repository)"
  make -C "$ROOT" jvm MVN="$MVN" > "$OUT/build-ferrodl-core.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    record_error build-ferrodl-core ferrodl $rc "$OUT/build-ferrodl-core.log"
    FERRODL_OK=0
  fi
fi
log "mvn package bench/jvm/ferrodl, bench/jvm/dl4j"
if [ $FERRODL_OK = 1 ]; then
  $MVN -f "$HERE/ferrodl/pom.xml" package > "$OUT/build-ferrodl.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    record_error build ferrodl $rc "$OUT/build-ferrodl.log"
    FERRODL_OK=0
  fi
fi
if [[ ($MODELS == *" mlp "* || $MODELS == *" cnn "* || $MODELS == *" graves "* || $MODELS == *" lstm "*) \
      && $SYSTEMS == *" dl4j"* ]]; then # the rows DL4J runs
  $MVN -f "$HERE/dl4j/pom.xml" package > "$OUT/build-dl4j.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    record_error build dl4j $rc "$OUT/build-dl4j.log"
    DL4J_OK=0
  fi
fi
# The baseline: the tree at BASE_REF, built with its own Maven repository (a hard-linked copy of
# ~/.m2, so nothing is downloaded again and the two ferrodl-core 0.1.0 installs do not meet).
BASE_OK=0
if [ -n "$BASE_REF" ] && [[ $SYSTEMS == *" ferrodl-base "* ]]; then
  log "baseline $BASE_REF into $BASE"
  (
    set -e
    rm -rf "$BASE"
    mkdir -p "$BASE/src" "$BASE/m2"
    git -C "$ROOT" archive "$BASE_REF" | tar -x -C "$BASE/src"
    [ -d "$HOME/.m2/repository" ] && cp -al "$HOME/.m2/repository/." "$BASE/m2/"
    rm -rf "$BASE/m2/org/ferrodl"
    make -C "$BASE/src" jvm MVN="mvn -B -q -Dmaven.repo.local=$BASE/m2"
    mvn -B -q -Dmaven.repo.local="$BASE/m2" -f "$BASE/src/bench/jvm/ferrodl/pom.xml" package
  ) > "$OUT/build-ferrodl-base.log" 2>&1
  rc=$?
  if [ $rc = 0 ]; then BASE_OK=1; else record_error build-base ferrodl-base $rc "$OUT/build-ferrodl-base.log"; fi
fi
JAX_OK=0
if [ "$JAX" = 1 ]; then
  if "$JAX_PY" -c 'import jax, numpy' > "$OUT/check-jax.log" 2>&1; then
    JAX_OK=1
    echo "jax_python=$JAX_PY" >> "$OUT/env.txt"
  else
    echo "cannot import jax with $JAX_PY (make bench creates .build/bench-venv)" >> "$OUT/check-jax.log"
    record_error check-jax jax 1 "$OUT/check-jax.log"
  fi
fi
TORCH_OK=0
if [ "$TORCH" = 1 ] && [[ $MODELS == *" lstm "* ]]; then
  if "$JAX_PY" -c 'import torch; torch.zeros(1).sum()' > "$OUT/check-torch.log" 2>&1; then
    TORCH_OK=1
  else
    echo "cannot import torch with $JAX_PY (make bench installs it into .build/bench-venv)" >> "$OUT/check-torch.log"
    record_error check-torch torch 1 "$OUT/check-torch.log"
  fi
fi

# ---- one measurement in its own JVM
# run VARIANT MODEL REP  (VARIANT: ferrodl | dl4j | dl4j-passive)
run() {
  local variant=$1 model=$2 rep=$3
  local dir main envs settings args
  [[ $SYSTEMS == *" $variant "* ]] || return 0
  case $variant in
    ferrodl)
      [ $FERRODL_OK = 1 ] || return 0
      dir=ferrodl; main=org.ferrodl.bench.jvm.FerrodlBench
      envs=(); settings="engine threads = cores (default)" ;;
    ferrodl-base)
      [ $BASE_OK = 1 ] || return 0
      dir=$BASE/src/bench/jvm/ferrodl; main=org.ferrodl.bench.jvm.FerrodlBench
      envs=(); settings="engine threads = cores (default), ferrodl at $BASE_REF" ;;
    dl4j)
      [ $DL4J_OK = 1 ] || return 0
      dir=dl4j; main=org.ferrodl.bench.jvm.Dl4jBench
      envs=(OMP_NUM_THREADS=$CORES); settings="OMP_NUM_THREADS=$CORES, workspaces default (recommended)" ;;
    dl4j-passive)
      [ $DL4J_OK = 1 ] || return 0
      dir=dl4j; main=org.ferrodl.bench.jvm.Dl4jBench
      envs=(OMP_NUM_THREADS=$CORES OMP_WAIT_POLICY=PASSIVE)
      settings="OMP_NUM_THREADS=$CORES OMP_WAIT_POLICY=PASSIVE, workspaces default" ;;
    jax)
      [ $JAX_OK = 1 ] || return 0
      envs=(); settings="jax[cpu], jit train step, XLA defaults (all cores), windows timed as a whole" ;;
    torch)
      [ $TORCH_OK = 1 ] || return 0
      envs=(); settings="PyTorch CPU, torch.nn.LSTM, torch.set_num_threads($CORES), each fit timed" ;;
  esac
  case $model in
    mlp) args=(--epochs 20 --warmup-epochs 1 --window 62 --min-windows 2 --max-seconds "$MLP_MAX_S") ;;
    cnn|rescnn) args=(--epochs 4 --warmup-iters 31 --window 31 --min-windows 3 --max-seconds "$CNN_MAX_S") ;;
    jni) args=(--rounds 8) ;;
    graves|lstm) args=(--epochs 100 --warmup-iters 1 --window 1 --min-windows 3 --max-seconds "$LSTM_MAX_S"
                       --seq-length "$LSTM_SEQ" --tbptt 50 --vocab 77 --hidden 200 --batches 4) ;;
  esac
  local batch=64
  [[ $model == graves || $model == lstm ]] && batch=32
  local name="$variant-$model-$rep"
  local file="$OUT/$name.jsonl"
  local cmd
  if [ "$variant" = jax ] && [[ $model == graves || $model == lstm ]]; then
    cmd=("$JAX_PY" "$HERE/python/char_lstm_bench.py" --framework jax)
  elif [ "$variant" = torch ]; then
    cmd=("$JAX_PY" "$HERE/python/char_lstm_bench.py" --framework torch)
  elif [ "$variant" = jax ]; then
    cmd=("$JAX_PY" "$HERE/jax/jax_bench.py")
  else
    local cp
    [[ $dir == /* ]] || dir="$HERE/$dir"
    cp="$dir/target/classes:$(cat "$dir/target/runtime.classpath")"
    # shellcheck disable=SC2206
    cmd=(java $JAVA_OPTS -cp "$cp" "$main")
  fi
  log "$name"
  printf '{"type":"meta","variant":"%s","model":"%s","rep":%d,"settings":"%s","loadavg_before":"%s"}\n' \
    "$variant" "$model" "$rep" "$settings" "$(cut -d' ' -f1-3 /proc/loadavg)" > "$file"
  local t0 t1 rc
  t0=$(date +%s.%N)
  env "${envs[@]}" timeout "$RUN_TIMEOUT_S" "${cmd[@]}" \
    --model "$model" --batch "$batch" --rep "$rep" --data "$DATA" "${args[@]}" >> "$file" 2> "$OUT/$name.log"
  rc=$?
  t1=$(date +%s.%N)
  printf '{"type":"exit","variant":"%s","model":"%s","rep":%d,"rc":%d,"wall_s":%.1f,"loadavg_after":"%s"}\n' \
    "$variant" "$model" "$rep" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$file"
  if [ $rc != 0 ]; then
    record_error "run $model" "$variant" $rc "$OUT/$name.log"
  fi
  sleep 1 # let the previous JVM's threads and memory go before the next starts
}

# ---- interleaved repetitions: within a repetition each model's systems run back to back, and
# the order flips from one repetition to the next
for rep in $(seq 1 "$REPS"); do
  if [ $((rep % 2)) = 1 ]; then mlp_order=(ferrodl ferrodl-base jax dl4j dl4j-passive); cnn_order=(ferrodl ferrodl-base jax dl4j)
  else mlp_order=(dl4j-passive dl4j jax ferrodl-base ferrodl); cnn_order=(dl4j jax ferrodl-base ferrodl); fi
  [ "$PASSIVE_CNN" = 1 ] && cnn_order+=(dl4j-passive)
  if [ $((rep % 2)) = 1 ]; then graph_order=(ferrodl jax); else graph_order=(jax ferrodl); fi
  [[ $MODELS == *" mlp "* ]] && for v in "${mlp_order[@]}"; do run "$v" mlp "$rep"; done
  [[ $MODELS == *" cnn "* ]] && for v in "${cnn_order[@]}"; do run "$v" cnn "$rep"; done
  # the graph row: DL4J is left out (the issue asks for ferrodl's ComputationGraph against JAX)
  [[ $MODELS == *" rescnn "* ]] && for v in "${graph_order[@]}"; do run "$v" rescnn "$rep"; done
  [[ $MODELS == *" jni "* ]] && run ferrodl jni "$rep"
  # the LSTM rows: GravesLSTM (torch.nn.LSTM has no peepholes, so no PyTorch) and LSTM
  if [ $((rep % 2)) = 1 ]; then lstm_order=(ferrodl ferrodl-base jax torch dl4j dl4j-passive)
  else lstm_order=(dl4j-passive dl4j torch jax ferrodl-base ferrodl); fi
  [[ $MODELS == *" graves "* ]] && for v in "${lstm_order[@]}"; do [ "$v" = torch ] || run "$v" graves "$rep"; done
  [[ $MODELS == *" lstm "* ]] && for v in "${lstm_order[@]}"; do run "$v" lstm "$rep"; done
done

echo "finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$OUT/env.txt"
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/env.txt"
echo "wall_s=$(( $(date +%s) - T0 ))" >> "$OUT/env.txt"

python3 "$HERE/summarize.py" --out-dir "$OUT" --results "$HERE/results.json"
