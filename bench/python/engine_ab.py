"""Engine-level before/after of the MLP step: two `ferrodl-bench serve` binaries (a base build and
the current one) and JAX, interleaved round by round with the order rotating, MLP 784-500-100-10 at
batch 64 and 256 (random data as in `make bench`'s `single` part). Prints medians, ratios and µs
per step and writes every sample to --json.

    python bench/python/engine_ab.py --base BASE/bench/rust/target/release/ferrodl-bench \
        --new bench/rust/target/release/ferrodl-bench --rounds 5 --json /tmp/ab.json

Build the base server from a commit with
    git archive BASE native bench/rust Cargo.toml Cargo.lock | tar -x -C DIR
    cargo build --release --manifest-path DIR/bench/rust/Cargo.toml
(run with the bench venv's python: it needs jax, like run_bench.py)."""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
import run_bench  # noqa: E402

BATCHES = (64, 256)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="ferrodl-bench built at the base commit")
    ap.add_argument("--new", required=True, help="ferrodl-bench of the current tree")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secs", type=float, default=1.0, help="seconds per sample")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    servers = {"base": run_bench.Server(args.base), "new": run_bench.Server(args.new)}
    load0 = os.getloadavg()
    jax = {b: peers.JaxTrainer(b) for b in BATCHES}
    samples = {b: {"base": [], "new": [], "jax": []} for b in BATCHES}
    for r in range(args.rounds):
        for b in BATCHES:
            order = ["base", "new", "jax"]
            order = order[r % 3:] + order[: r % 3]
            for s in order:
                if s == "jax":
                    v = jax[b].examples_per_sec(args.secs)
                else:
                    v = servers[s].ask(f"mlp {b} {args.secs}")["examples_per_sec"]
                samples[b][s].append(v)
                run_bench.settle()
    out = {
        "load": [load0, os.getloadavg()],
        "kernel": {s: srv.ask("kernel") for s, srv in servers.items()},
        "samples": samples,
    }
    for b in BATCHES:
        med = {s: statistics.median(v) for s, v in samples[b].items()}
        out[f"median_{b}"] = med
        rng = {s: f"{min(v):,.0f}–{max(v):,.0f}" for s, v in samples[b].items()}
        print(
            f"batch {b}: base {med['base']:,.0f} ({rng['base']}), new {med['new']:,.0f} ({rng['new']}), "
            f"jax {med['jax']:,.0f} ({rng['jax']}) examples/s; new/base {med['new'] / med['base']:.3f}, "
            f"base/jax {med['base'] / med['jax']:.3f}, new/jax {med['new'] / med['jax']:.3f}; µs per step "
            f"base {b / med['base'] * 1e6:.0f}, new {b / med['new'] * 1e6:.0f}, jax {b / med['jax'] * 1e6:.0f}"
        )
    print("load average at start / end:", out["load"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    for srv in servers.values():
        srv.close()


if __name__ == "__main__":
    main()
