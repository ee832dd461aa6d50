"""ferrodl single-node benchmark: drives the Rust bench server and the Python peers in ONE run,
interleaved round by round, and writes docs/BENCHMARKS.md.

Usage (what `make bench` runs):
    .build/bench-venv/bin/python bench/python/run_bench.py \
        --server bench/rust/target/release/ferrodl-bench --out docs/BENCHMARKS.md
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

    def __init__(self, path):
        self.p = subprocess.Popen(
            [path, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
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


def run(args):
    server = Server(args.server)
    cores = os.cpu_count()
    threads = server.ask("threads 0")["threads"]
    load_start = os.getloadavg()
    t0 = time.time()
    res = {"gemm": {}, "gemm1": {}, "mlp": {}, "mlp_state": {}}

    # ---- GEMM, all cores: ferrodl and numpy interleaved, order alternating each round
    np_cases = {n: peers.NumpyGemm(n) for n in GEMM_SIZES}
    samples = {(s, n): [] for s in ("ferrodl", "numpy") for n in GEMM_SIZES}
    for r in range(args.rounds):
        for n in GEMM_SIZES:
            order = ("ferrodl", "numpy") if r % 2 == 0 else ("numpy", "ferrodl")
            for system in order:
                if system == "ferrodl":
                    v = server.ask(f"gemm {n} {args.gemm_secs}")["gflops"]
                else:
                    v = np_cases[n].gflops(args.gemm_secs)
                samples[(system, n)].append(v)
                settle()
    res["gemm"] = {k: stats(v) for k, v in samples.items()}

    # ---- GEMM 1024³ on one thread each (kernel quality, no threading)
    samples1 = {"ferrodl": [], "numpy": []}
    server.ask("threads 1")
    with blas_limit(1):
        for r in range(args.rounds):
            order = ("ferrodl", "numpy") if r % 2 == 0 else ("numpy", "ferrodl")
            for system in order:
                if system == "ferrodl":
                    v = server.ask(f"gemm 1024 {args.gemm_secs}")["gflops"]
                else:
                    v = np_cases[1024].gflops(args.gemm_secs)
                samples1[system].append(v)
                settle()
    server.ask("threads 0")
    res["gemm1"] = {k: stats(v) for k, v in samples1.items()}
    del np_cases

    # ---- MLP training throughput, ferrodl and JAX interleaved
    jax_models = {b: peers.JaxMlp(b) for b in BATCHES}
    systems = ("ferrodl", "jax")
    msamples = {(s, b): [] for s in systems for b in BATCHES}
    for r in range(args.rounds):
        for b in BATCHES:
            order = systems if r % 2 == 0 else systems[::-1]
            for system in order:
                if system == "ferrodl":
                    reply = server.ask(f"mlp {b} {args.mlp_secs}")
                    v = reply["examples_per_sec"]
                    res["mlp_state"][b] = reply
                else:
                    v = jax_models[b].examples_per_sec(args.mlp_secs)
                msamples[(system, b)].append(v)
                settle()
    res["mlp"] = {k: stats(v) for k, v in msamples.items()}
    del jax_models

    # ---- LeNet-style CNN (to be added by the lead): same pattern as the MLP rows —
    # a `cnn BATCH SECS` command in bench/rust/src/main.rs and a JaxCnn class in peers.py,
    # measured interleaved here, and a row in the MLP table of write_doc().

    # ---- where the ferrodl step spends its time, and the subnormal-state slowdown
    res["profile"] = [server.ask(f"profile {b} {args.profile_steps} 1") for b in BATCHES]
    settle()
    res["subnormal"] = server.ask(f"subnormal {args.subnormal_steps} 200")
    server.close()

    res["load"] = (load_start, os.getloadavg())
    res["wall_s"] = time.time() - t0
    res["threads"] = threads
    res["cores"] = cores
    return res


def gemm_section(res):
    g, g1 = res["gemm"], res["gemm1"]
    lines = [
        f"FP32 `C = A·B`, n×n×n, GFLOP/s = 2n³/t. {g[('ferrodl', 1024)]['n']} rounds, ferrodl and "
        "numpy interleaved (order alternating); each sample is a batch of products lasting "
        "≥ the sample time; median (min–max).",
        "",
        "| n | ferrodl (`ferrodl_tensor::gemm`) | numpy (OpenBLAS) | ferrodl / numpy (medians) |",
        "|---|---|---|---|",
    ]
    for n in GEMM_SIZES:
        f, p = g[("ferrodl", n)], g[("numpy", n)]
        lines.append(
            f"| {n}³, all cores | {fmt(f)} | {fmt(p)} | {f['median'] / p['median']:.2f} |"
        )
    f, p = g1["ferrodl"], g1["numpy"]
    lines.append(f"| 1024³, 1 thread | {fmt(f)} | {fmt(p)} | {f['median'] / p['median']:.2f} |")
    return lines


def mlp_section(res):
    m, g = res["mlp"], res["gemm"]
    fg = g[("ferrodl", 1024)]["median"]
    ng = g[("numpy", 1024)]["median"]
    lines = [
        "MLP 784-500-100-10 (ReLU, softmax + MCXENT, Adam lr 1e-3), random features and one-hot "
        f"labels (a pool of {peers.POOL_EXAMPLES} examples cycled), warm-up excluded. "
        f"{PARAMS} parameters; achieved GFLOP/s = 6 × parameters × examples/s; "
        "\"of GEMM\" = that rate / the same system's 1024³ all-core GEMM median of this run "
        "(JAX: / numpy's). ferrodl: `MultiLayerNetwork::fit`, one network per batch size, "
        "trained on through the rounds. JAX: one jitted train step (forward, backward, Adam in "
        "jax.numpy), all cores. Rounds interleave the two, alternating who goes first.",
        "",
        "| batch | system | examples/s | / JAX (medians) | GFLOP/s (of GEMM) |",
        "|---|---|---|---|---|",
    ]
    for b in BATCHES:
        j = m[("jax", b)]
        for system, label, ref in (
            ("ferrodl", "ferrodl", fg),
            ("jax", "JAX (XLA CPU)", ng),
        ):
            s = m[(system, b)]
            gf = 6 * PARAMS * s["median"] / 1e9
            lines.append(
                f"| {b} | {label} | {fmt(s, 0)} | {s['median'] / j['median']:.2f} | "
                f"{gf:.1f} ({100 * gf / ref:.0f} %) |"
            )
    lines.append("| CNN (LeNet-style) | *to be added* | | | |")
    st = res["mlp_state"]
    lines += [
        "",
        "ferrodl's Adam state at the end: "
        + "; ".join(
            f"batch {b}: {st[b]['steps']} steps, {100 * st[b]['subnormal']:.1f} % subnormal"
            for b in BATCHES
        )
        + ".",
    ]
    return lines


def profile_section(res):
    lines = [
        "The step re-assembled from the engine's GEMM/row helpers with the elementwise parts of "
        "ferrodl-nn/ferrodl-optim mirrored (`bench/rust/src/profile.rs`), a clock around each "
        f"phase; all cores ({res['threads']} threads), subnormals flushed on the thread as "
        "`fit` does. µs per step (share of the phases' sum).",
        "",
    ]
    profs = res["profile"]
    head = "| phase | " + " | ".join(f"batch {p['batch']}" for p in profs) + " |"
    lines += [head, "|---|" + "---|" * len(profs)]
    names = [ph[0] for ph in profs[0]["phases"]]
    for i, name in enumerate(names):
        cells = []
        for p in profs:
            tot = sum(t for _, t in p["phases"])
            t = p["phases"][i][1]
            cells.append(f"{t * 1e6:.0f} ({100 * t / tot:.1f} %)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append(
        "| **sum of phases** | "
        + " | ".join(f"**{sum(t for _, t in p['phases']) * 1e6:.0f}**" for p in profs)
        + " |"
    )
    lines.append(
        "| `fit` (real engine, same data, interleaved) | "
        + " | ".join(f"{p['fit'] * 1e6:.0f}" for p in profs)
        + " |"
    )
    lines.append(
        f"| prototype: the fused Adam pass over `parallel_for_each` ({res['threads']} threads) | "
        + " | ".join(f"{p['fused_adam_nt'] * 1e6:.0f}" for p in profs)
        + " |"
    )
    lines.append(
        "| **prototype step**: the mirrored step with that parallel Adam pass | "
        + " | ".join(f"**{p['proposed_step'] * 1e6:.0f}**" for p in profs)
        + " |"
    )
    s = res["subnormal"]
    lines += [
        "",
        f"Subnormal-state regression check (`subnormal`): `fit` at batch 64 on 8 cycled "
        f"(memorised) batches, {s['steps']} steps: {s['early']:.0f} examples/s over the first "
        f"200 steps, {s['late']:.0f} over the last 200; {100 * s['subnormal']:.1f} % of the "
        "updater state subnormal at the end (before the engine flushed subnormals: 6× slower "
        "late steps and 21 % subnormal state, see the analysis).",
    ]
    return lines


def latest_block(res, info):
    model, cores, simd = info["machine"]
    v = info["versions"]
    (l0, l1) = res["load"]
    lines = [
        LATEST_START,
        f"## Latest results — {info['date']}",
        "",
        f"- Machine: {model}, {cores} cores ({', '.join(simd) or 'no AVX2/FMA/AVX-512'}); "
        f"ferrodl used {res['threads']} threads.",
        f"- Commit: `{info['commit']}`; {v['rustc']}; Python {v['python']}, numpy {v['numpy']} "
        f"({v['blas']}), jax {v['jax']} / jaxlib {v['jaxlib']}.",
        f"- Load average (1/5/15 min) at start {l0[0]:.2f}/{l0[1]:.2f}/{l0[2]:.2f}, at end "
        f"{l1[0]:.2f}/{l1[1]:.2f}/{l1[2]:.2f} (other work on the machine shows up here); "
        f"measuring took {res['wall_s']:.0f} s.",
        "",
        "### GEMM",
        "",
        *gemm_section(res),
        "",
        "### MLP training throughput",
        "",
        *mlp_section(res),
        "",
        "### Where the ferrodl MLP step spends its time",
        "",
        *profile_section(res),
        LATEST_END,
    ]
    return "\n".join(lines)


TEMPLATE = f"""# Benchmarks

`make bench` measures ferrodl on one node against Python peers and rewrites the "Latest results"
section below (the previous one moves to "Previous results"; everything else here is kept).

{LATEST_START}
{LATEST_END}

{PREVIOUS}
## Previous results
"""


def write_doc(path, block):
    doc = open(path).read() if os.path.exists(path) else TEMPLATE
    if LATEST_START not in doc or PREVIOUS not in doc:
        doc = TEMPLATE + "\n" + doc
    s, e = doc.index(LATEST_START), doc.index(LATEST_END) + len(LATEST_END)
    old = doc[s:e]
    doc = doc[:s] + block + doc[e:]
    old_body = old[len(LATEST_START) : -len(LATEST_END)].strip()
    if old_body:
        # demote: "## Latest results — date" becomes "### Run of date", subsections one deeper
        old_body = old_body.replace("## Latest results — ", "### Run of ", 1)
        old_body = re.sub(r"(?m)^### (?!Run of )", "#### ", old_body)
        p = doc.index(PREVIOUS)
        nl = doc.index("\n", doc.index("## Previous results", p)) + 1
        doc = doc[:nl] + "\n" + old_body + "\n" + doc[nl:]
    with open(path, "w") as f:
        f.write(doc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="path of the ferrodl-bench binary")
    ap.add_argument("--out", default="docs/BENCHMARKS.md")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--gemm-secs", type=float, default=0.4)
    ap.add_argument("--mlp-secs", type=float, default=1.0)
    ap.add_argument("--profile-steps", type=int, default=200)
    ap.add_argument("--subnormal-steps", type=int, default=1200)
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args()

    info = {
        "machine": machine_info(),
        "versions": versions(),
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "commit": cmd_out(["git", "rev-parse", "--short", "HEAD"])
        + (" (+ uncommitted changes)" if cmd_out(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/BENCHMARKS.md"]) else ""),
    }
    res = run(args)
    block = latest_block(res, info)
    print(block)
    write_doc(args.out, block)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "results": {k: str(v) for k, v in res.items()}}, f, indent=1)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
