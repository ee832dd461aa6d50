"""Engine-level before/after of the MLP step: two `ferrodl-bench serve` binaries (a base build and
the current one) and JAX, interleaved round by round with the order rotating, MLP 784-500-100-10 at
batch 64 and 256 (random data as in `make bench`'s `single` part). Prints medians, ratios and µs
per step and writes every sample to --json.

    python bench/python/engine_ab.py --base BASE/bench/rust/target/release/ferrodl-bench \
        --new bench/rust/target/release/ferrodl-bench --rounds 5 --json /tmp/ab.json

Build the base server from a commit with
    git archive BASE native bench/rust Cargo.toml Cargo.lock | tar -x -C DIR
    cargo build --release --manifest-path DIR/bench/rust/Cargo.toml
(run with the bench venv's python: it needs jax, like run_bench.py).

On a shared machine: --gemm also times each server's 1024^3 GEMM every round (the step's share of
the GEMM rate is then a ratio of medians from the same run), --no-jax leaves JAX out, and every
ferrodl sample also records the server's on-CPU time (all its threads, /proc/PID/stat) per example,
so a before/after can be read in work done as well as in wall time."""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
import run_bench  # noqa: E402

# 6 x the MLP's 443,610 parameters (as run_bench.py counts FLOP per example)
FLOP_PER_EXAMPLE = 2_661_660


def cpu_seconds(pid):
    """utime + stime of a process, all its threads, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="ferrodl-bench built at the base commit")
    ap.add_argument("--new", required=True, help="ferrodl-bench of the current tree")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secs", type=float, default=1.0, help="seconds per sample")
    ap.add_argument("--json", default=None)
    ap.add_argument("--gemm", action="store_true", help="also time each server's 1024^3 GEMM")
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--batches", default="64,256")
    args = ap.parse_args()
    servers = {"base": run_bench.Server(args.base), "new": run_bench.Server(args.new)}
    load0 = os.getloadavg()
    batches = tuple(int(b) for b in args.batches.split(","))
    systems = ["base", "new"] + ([] if args.no_jax else ["jax"])
    jax = {} if args.no_jax else {b: peers.JaxTrainer(b) for b in batches}
    samples = {b: {s: [] for s in systems} for b in batches}
    cpu_us = {b: {"base": [], "new": []} for b in batches}
    gemm = {"base": [], "new": []}
    for r in range(args.rounds):
        if args.gemm:
            for s in (["base", "new"] if r % 2 == 0 else ["new", "base"]):
                gemm[s].append(servers[s].ask(f"gemm 1024 {args.secs}")["gflops"])
                run_bench.settle()
        for b in batches:
            order = systems[r % len(systems):] + systems[: r % len(systems)]
            for s in order:
                if s == "jax":
                    v = jax[b].examples_per_sec(args.secs)
                else:
                    c0 = cpu_seconds(servers[s].p.pid)
                    t0 = time.perf_counter()
                    v = servers[s].ask(f"mlp {b} {args.secs}")["examples_per_sec"]
                    wall = time.perf_counter() - t0
                    # on-CPU µs (all threads) per step; the ask's wall time is the sample's
                    cpu_us[b][s].append((cpu_seconds(servers[s].p.pid) - c0) / (v * wall / b) * 1e6)
                samples[b][s].append(v)
                run_bench.settle()
    out = {
        "load": [load0, os.getloadavg()],
        "kernel": {s: srv.ask("kernel") for s, srv in servers.items()},
        "samples": samples,
        "cpu_us_per_step": cpu_us,
        "gemm_1024_gflops": gemm,
    }
    if args.gemm:
        g = {s: statistics.median(v) for s, v in gemm.items()}
        out["median_gemm"] = g
        print(f"gemm 1024^3: base {g['base']:.1f} ({min(gemm['base']):.1f}–{max(gemm['base']):.1f}), "
              f"new {g['new']:.1f} ({min(gemm['new']):.1f}–{max(gemm['new']):.1f}) GFLOP/s")
    for b in batches:
        med = {s: statistics.median(v) for s, v in samples[b].items()}
        out[f"median_{b}"] = med
        rng = {s: f"{min(v):,.0f}–{max(v):,.0f}" for s, v in samples[b].items()}
        line = (f"batch {b}: base {med['base']:,.0f} ({rng['base']}), new {med['new']:,.0f} ({rng['new']})"
                f" examples/s; new/base {med['new'] / med['base']:.3f}; µs per step "
                f"base {b / med['base'] * 1e6:.0f}, new {b / med['new'] * 1e6:.0f}")
        if "jax" in med:
            line += (f"; jax {med['jax']:,.0f} ({rng['jax']}), base/jax {med['base'] / med['jax']:.3f}, "
                     f"new/jax {med['new'] / med['jax']:.3f}")
        cpu = {s: statistics.median(v) for s, v in cpu_us[b].items()}
        line += f"; on-CPU µs per step (all threads) base {cpu['base']:.0f}, new {cpu['new']:.0f}"
        if args.gemm:
            share = {s: med[s] * FLOP_PER_EXAMPLE / 1e9 / out["median_gemm"][s] for s in ("base", "new")}
            out[f"of_gemm_{b}"] = share
            line += f"; of own GEMM median base {100 * share['base']:.0f} %, new {100 * share['new']:.0f} %"
        print(line)
    print("load average at start / end:", out["load"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    for srv in servers.values():
        srv.close()


if __name__ == "__main__":
    main()
