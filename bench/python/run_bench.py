"""ferrodl engine-level benchmark (parts `gemm` and `single` of `make bench`): drives the Rust
bench server and the Python peers (numpy, JAX) in ONE run, interleaved round by round, and writes
the raw results as JSON; bench/report.py turns them into docs/BENCHMARKS.md.

Usage (what bench/bench.sh runs):
    .build/bench-venv/bin/python bench/python/run_bench.py --parts gemm,single \
        --server bench/rust/target/release/ferrodl-bench --json bench/results/engine.json
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

PARAMS = 784 * 500 + 500 + 500 * 100 + 100 + 100 * 10 + 10
CNN_BATCH = 64
GEMM_SIZES = (256, 1024, 2048)
BATCHES = (64, 256)
# A pause between two systems, so that one's idle-spinning threads (OpenBLAS, XLA, ferrodl's
# GEMM helpers) have gone to sleep before the other starts.
SETTLE_S = 0.25

LATEST_START = "<!-- bench:latest:start -->"
LATEST_END = "<!-- bench:latest:end -->"
PREVIOUS = "<!-- bench:previous -->"


class Server:
    """The Rust side: `ferrodl-bench serve`, one command per line, one JSON object per line."""

    def __init__(self, path, env=None):
        self.p = subprocess.Popen(
            [path, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=None if env is None else {**os.environ, **env},
        )

    def ask(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"bench server died on {cmd!r}")
        return json.loads(line)

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait(timeout=30)


def settle():
    time.sleep(SETTLE_S)


def stats(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def fmt(s, digits=1):
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def cmd_out(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:  # noqa: BLE001 - informational only
        return "unknown"


def machine_info():
    model, cores, flags = "unknown", os.cpu_count(), ""
    lscpu = cmd_out(["lscpu"])
    for line in lscpu.splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
        if line.startswith("Flags:"):
            flags = line
    simd = [f for f in ("avx2", "fma", "avx512f") if re.search(rf"\b{f}\b", flags)]
    return model, cores, simd


def versions():
    import jax
    import jaxlib
    import numpy as np

    blas = "unknown"
    try:
        from threadpoolctl import threadpool_info

        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            i = infos[0]
            blas = f"{i['internal_api']} {i['version']} ({i.get('architecture', '?')} kernels)"
    except Exception:  # noqa: BLE001 - informational only
        pass
    return {
        "rustc": cmd_out(["rustc", "--version"]),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
    }


def blas_limit(n):
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=n, user_api="blas")


def gemm_servers(args, server):
    """The ferrodl GEMM rows: the default server, and one server per forced kernel
    (FERRODL_GEMM=fma|amx), each labelled with the kernel it reports (detected at run time)."""
    default = server.ask("kernel")["kernel"]
    rows = [("ferrodl", default, server)]
    for k in ("fma", "amx"):
        s = Server(args.server, env={"FERRODL_GEMM": k})
        try:
            got = s.ask("kernel")["kernel"]
        except Exception as e:  # noqa: BLE001 - reported in the table, not fatal
            rows.append((f"ferrodl-{k}", f"server failed ({e})", None))
            continue
        rows.append((f"ferrodl-{k}", got, s))
    return rows


def measure_gemm(args, server, res):
    rows = gemm_servers(args, server)
    res["gemm_systems"] = [(key, label) for key, label, s in rows]
    live = [(key, s) for key, _, s in rows if s is not None]
    np_cases = {n: peers.NumpyGemm(n) for n in GEMM_SIZES}
    keys = [k for k, _ in live] + ["numpy"]
    samples = {k: {n: [] for n in GEMM_SIZES} for k in keys}
    for r in range(args.rounds):
        for n in GEMM_SIZES:
            order = keys[r % len(keys):] + keys[: r % len(keys)]  # rotate who goes first
            for key in order:
                if key == "numpy":
                    v = np_cases[n].gflops(args.gemm_secs)
                else:
                    v = dict(live)[key].ask(f"gemm {n} {args.gemm_secs}")["gflops"]
                samples[key][n].append(v)
                settle()
    res["gemm"] = {k: {str(n): stats(v) for n, v in d.items()} for k, d in samples.items()}

    # 1024³ on one thread each (kernel quality, no threading)
    samples1 = {k: [] for k in keys}
    for _, s in live:
        s.ask("threads 1")
    with blas_limit(1):
        for r in range(args.rounds):
            order = keys[r % len(keys):] + keys[: r % len(keys)]
            for key in order:
                if key == "numpy":
                    v = np_cases[1024].gflops(args.gemm_secs)
                else:
                    v = dict(live)[key].ask(f"gemm 1024 {args.gemm_secs}")["gflops"]
                samples1[key].append(v)
                settle()
    for _, s in live:
        s.ask("threads 0")
    res["gemm1"] = {k: stats(v) for k, v in samples1.items()}
    for key, s in live:
        if s is not server:
            s.close()


def measure_gemm_reference(args, server, res):
    """Only when part `single` runs without part `gemm`: the 1024³ all-core rates that the achieved
    FLOP/s of the training rows are divided by, measured in this run (interleaved)."""
    case = peers.NumpyGemm(1024)
    f, p = [], []
    for r in range(args.rounds):
        for key in (("ferrodl", "numpy") if r % 2 == 0 else ("numpy", "ferrodl")):
            if key == "ferrodl":
                f.append(server.ask(f"gemm 1024 {args.gemm_secs}")["gflops"])
            else:
                p.append(case.gflops(args.gemm_secs))
            settle()
    res["gemm_ref"] = {"ferrodl": stats(f), "numpy": stats(p)}


def measure_training(args, server, res):
    """MLP at batch 64 and 256 and the LeNet CNN at batch 64: ferrodl (`fit`) and JAX (jit)
    interleaved, alternating who goes first."""
    cases = [("mlp", b) for b in BATCHES] + [("cnn", CNN_BATCH)]
    jax_models = {c: peers.JaxTrainer(c[1], model=c[0]) for c in cases}
    samples = {f"{m}-{b}": {"ferrodl": [], "jax": []} for m, b in cases}
    # This host's speed swings up to 2x within minutes, so a ratio of two medians taken minutes
    # apart moves with it: each ferrodl sample also gets the 1024³ GEMM rate measured just
    # before it, and its own ratio (issue 15 item 7).
    paired = {f"{m}-{b}": [] for m, b in cases}
    res["train_state"] = {}
    for r in range(args.rounds):
        for m, b in cases:
            secs = args.mlp_secs if m == "mlp" else args.cnn_secs
            order = ("ferrodl", "jax") if r % 2 == 0 else ("jax", "ferrodl")
            for system in order:
                if system == "ferrodl":
                    g = server.ask(f"gemm 1024 {args.gemm_secs}")["gflops"]
                    reply = server.ask(f"{m} {b} {secs}")
                    paired[f"{m}-{b}"].append(
                        peers.MODELS[m][2] * reply["examples_per_sec"] / 1e9 / g)
                    v = reply["examples_per_sec"]
                    res["train_state"][f"{m}-{b}"] = reply
                else:
                    v = jax_models[(m, b)].examples_per_sec(secs)
                samples[f"{m}-{b}"][system].append(v)
                settle()
    res["train"] = {k: {s: stats(v) for s, v in d.items()} for k, d in samples.items()}
    res["train_of_gemm_paired"] = {k: stats(v) for k, v in paired.items()}
    res["train_flop_per_example"] = {
        f"{m}-{b}": peers.MODELS[m][2] for m, b in cases
    }


def run(args):
    parts = set(args.parts.split(","))
    unknown = parts - {"gemm", "single"}
    if unknown:
        raise SystemExit(f"run_bench.py: unknown part(s) {sorted(unknown)}; valid: gemm, single")
    server = Server(args.server)
    cores = os.cpu_count()
    threads = server.ask("threads 0")["threads"]
    load_start = os.getloadavg()
    t0 = time.time()
    kernel = server.ask("kernel")
    res = {"parts": sorted(parts), "kernel": kernel["kernel"], "simd": kernel.get("simd", "?")}
    if "gemm" in parts:
        measure_gemm(args, server, res)
    if "single" in parts:
        if "gemm" not in parts:
            measure_gemm_reference(args, server, res)
        measure_training(args, server, res)
        # where the ferrodl MLP step spends its time, and the subnormal-state regression check
        res["profile"] = [server.ask(f"profile {b} {args.profile_steps} 1") for b in BATCHES]
        settle()
        res["subnormal"] = server.ask(f"subnormal {args.subnormal_steps} 200")
    server.close()
    res["load"] = (load_start, os.getloadavg())
    res["wall_s"] = time.time() - t0
    res["threads"] = threads
    res["cores"] = cores
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="path of the ferrodl-bench binary")
    ap.add_argument("--parts", default="gemm,single", help="comma list of gemm, single")
    ap.add_argument("--json", required=True, help="write the results here (bench/report.py reads it)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--gemm-secs", type=float, default=0.4)
    ap.add_argument("--mlp-secs", type=float, default=1.0)
    ap.add_argument("--cnn-secs", type=float, default=1.5)
    ap.add_argument("--profile-steps", type=int, default=200)
    ap.add_argument("--subnormal-steps", type=int, default=1200)
    args = ap.parse_args()

    model, cores, simd = machine_info()
    info = {
        "machine": {"cpu_model": model, "cores": cores, "simd": simd},
        "versions": versions(),
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "commit": cmd_out(["git", "rev-parse", "--short", "HEAD"])
        + (" (+ uncommitted changes)" if cmd_out(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/BENCHMARKS.md", ":!bench"]) else ""),
        "rounds": args.rounds,
    }
    res = run(args)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"info": info, "results": res}, f, indent=1)
        f.write("\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
