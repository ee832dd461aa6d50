#!/usr/bin/env python3
"""f32 GEMM GFLOP/s: ferrodl's FMA and AMX kernels against numpy (OpenBLAS), interleaved.

Usage (from the repository root, after
`cargo build --release -p ferrodl-tensor --example gemm_bench`):

    python3 native/tensor/examples/gemm_vs_numpy.py [--rounds 3] [--bench PATH] [SHAPE ...]

SHAPE is M,N,K (C is M x N, inner dimension K); default 256, 1024 and 2048 cubed. Each round
runs the Rust benchmark (FMA and AMX, 1 and 2 threads) and numpy on 1 and 2 threads
(OPENBLAS_NUM_THREADS, one process each), one after the other, so that load from other
processes hits all of them alike. Prints, per shape and thread count, the median over rounds
of each round's best GFLOP/s and the ratios AMX/numpy and FMA/numpy.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

NUMPY_TIMER = r"""
import sys, time
import numpy as np
reps = int(sys.argv[1])
clock = time.process_time if sys.argv[2] == "cpu" else time.perf_counter
for spec in sys.argv[3:]:
    m, n, k = map(int, spec.split(','))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.empty((m, n), dtype=np.float32)
    flops = 2.0 * m * n * k
    calls = max(1, min(10000, int(1e11 * 0.02 / flops)))
    np.matmul(a, b, out=c)
    best = 0.0
    for _ in range(reps):
        t = clock()
        for _ in range(calls):
            np.matmul(a, b, out=c)
        best = max(best, flops * calls / (clock() - t) / 1e9)
    print(f"{m}x{n}x{k} {best:.1f}")
"""


def run_numpy(python, threads, reps, shapes, cpu):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    clock = "cpu" if cpu and threads == 1 else "wall"
    out = subprocess.run([python, "-c", NUMPY_TIMER, str(reps), clock] + shapes, env=env,
                         check=True, capture_output=True, text=True).stdout
    return {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line}


def run_rust(bench, reps, shapes, cpu):
    env = dict(os.environ, GEMM_BENCH_CPU="1" if cpu else "0")
    out = subprocess.run([bench, str(reps)] + shapes, check=True, capture_output=True,
                         text=True, env=env).stdout
    res, kernel = {}, ""
    for line in out.splitlines():
        if line.startswith("kernel:"):
            kernel = line
        m = re.match(r"(\S+) NN\s+(\w+) (\d)T: best\s+([\d.]+)", line)
        if m:
            res[(m.group(1), m.group(2), int(m.group(3)))] = float(m.group(4))
    return res, kernel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5, help="timings per process (best is kept)")
    ap.add_argument("--bench", default="target/release/examples/gemm_bench")
    ap.add_argument("--python", default=sys.executable, help="a Python with numpy")
    ap.add_argument("--cpu", action="store_true",
                    help="time one-thread runs in CPU time (shared machine); 2-thread runs stay wall")
    ap.add_argument("shapes", nargs="*", default=["256,256,256", "1024,1024,1024", "2048,2048,2048"])
    args = ap.parse_args()
    rows = {}
    kernel = ""
    for r in range(args.rounds):
        rust, kernel = run_rust(args.bench, args.reps, args.shapes, args.cpu)
        for (shape, kern, th), v in rust.items():
            rows.setdefault((shape, th), {}).setdefault(kern, []).append(v)
        for th in (1, 2):
            for shape, v in run_numpy(args.python, th, args.reps, args.shapes, args.cpu).items():
                rows.setdefault((shape, th), {}).setdefault("numpy", []).append(v)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(kernel)
    print(f"{'shape':>16} thr {'fma':>7} {'amx':>7} {'numpy':>7}  amx/numpy fma/numpy  (median of "
          f"{args.rounds} rounds' best GFLOP/s)")
    for (shape, th), d in sorted(rows.items(), key=lambda x: (int(x[0][0].split('x')[0]), x[0][1])):
        med = {k: statistics.median(v) for k, v in d.items()}
        f, a, npy = med.get("fma", 0), med.get("amx", 0), med.get("numpy", 0)
        print(f"{shape:>16} {th:>3} {f:7.1f} {a:7.1f} {npy:7.1f}  {a / npy:9.2f} {f / npy:9.2f}")


if __name__ == "__main__":
    main()
