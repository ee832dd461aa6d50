"""Writes the "Latest results" of docs/BENCHMARKS.md and the PNG charts from the results files of
the parts that `make bench` (bench/bench.sh) has just run.

The latest block holds one section per part (gemm, single, jvm, cluster), each between
`<!-- bench:part:NAME:start/end -->` markers and carrying its own date, versions and load averages.
A part that ran replaces its section, and the section it replaces moves, unchanged, to the top
of "Previous results"; a part that did not run keeps its section. A latest
block of the older single-run layout moves to "Previous results" whole. Everything outside the
markers is hand-written and kept.

Usage (what bench/bench.sh runs):
  .build/bench-venv/bin/python bench/report.py --parts gemm,single,jvm,cluster \\
      --engine bench/results/engine.json --jvm bench/jvm/results.json \\
      --cluster bench/cluster/results.json --out docs/BENCHMARKS.md --charts bench/charts \\
      --session bench/results/session.json
"""

import argparse
import json
import os
import re

PARTS = ("gemm", "single", "jvm", "cluster", "spark")
TITLES = {
    "gemm": "GEMM: ferrodl vs numpy (OpenBLAS)",
    "single": "Single-node training, engine level (Rust API): ferrodl vs JAX",
    "jvm": "Single-node training through the Java API: ferrodl vs DL4J vs JAX; JNI overhead; memory",
    "cluster": "Distributed time-to-accuracy: ferrodl vs DL4J vs Spark MLlib",
    "spark": "The Spark path: SparkDl4jMultiLayer.fit against local MultiLayerNetwork.fit on the same cores",
}
LATEST_START = "<!-- bench:latest:start -->"
LATEST_END = "<!-- bench:latest:end -->"
PREVIOUS = "<!-- bench:previous -->"
GEMM_SIZES = ("256", "1024", "2048")
LSTM_ROW = ("2-layer 200-unit LSTM, TBPTT 50", "measured through the Java API only: the jvm part's "
            "character-model rows (GravesLSTM and LSTM, batch 32)")


def start(p):
    return f"<!-- bench:part:{p}:start -->"


def end(p):
    return f"<!-- bench:part:{p}:end -->"


def fmt(s, digits=1):
    if not s:
        return "–"
    return f"{s['median']:,.{digits}f} ({s['min']:,.{digits}f}–{s['max']:,.{digits}f})"


def load3(l):
    return "/".join(f"{x:.2f}" for x in l)


def rel(chart, out):
    return os.path.relpath(chart, os.path.dirname(os.path.abspath(out)))


# ---------------------------------------------------------------- engine parts (run_bench.py)

def engine_meta(e):
    info, res = e["info"], e["results"]
    m, v = info["machine"], info["versions"]
    l0, l1 = res["load"]
    return [
        f"- Measured {info['date']} by `bench/python/run_bench.py` ({info['rounds']} round(s); "
        f"parts {', '.join(res['parts'])} in one run, {res['wall_s']:.0f} s of measuring).",
        f"- Machine: {m['cpu_model']}, {m['cores']} cores ({', '.join(m['simd']) or 'no AVX2/FMA/AVX-512'}); "
        f"ferrodl used {res['threads']} threads; GEMM kernel: {res['kernel']}; "
        f"elementwise loops: {res.get('simd', '?')}.",
        f"- Versions: ferrodl `{info['commit']}`, {v['rustc']}; Python {v['python']}, numpy {v['numpy']} "
        f"({v['blas']}), jax {v['jax']} / jaxlib {v['jaxlib']}.",
        f"- Load average (1/5/15 min) at start {load3(l0)}, at end {load3(l1)}.",
    ]


def gemm_section(e):
    res = e["results"]
    g, g1 = res["gemm"], res["gemm1"]
    systems = res["gemm_systems"]  # [(key, label)]
    keys = [k for k, _ in systems if k in g]
    lines = [*engine_meta(e), "",
             "FP32 `C = A·B`, n×n×n, GFLOP/s = 2n³/t; the systems interleaved, the order rotating "
             "each round; each sample is a batch of products lasting ≥ the sample time; median "
             "(min–max) over the rounds; ratios are ratios of medians.", ""]
    short = {"ferrodl": "ferrodl, default", "ferrodl-fma": "ferrodl, FERRODL_GEMM=fma",
             "ferrodl-amx": "ferrodl, FERRODL_GEMM=amx"}
    for key, label in systems:
        lines.append(f"- {short.get(key, key)}: {label}"
                     + ("" if key in g else " — not measured"))
    lines.append("")
    heads = [short.get(k, k) for k in keys]
    lines += ["| n | " + " | ".join(heads) + " | numpy (OpenBLAS) | "
              + " | ".join(f"{h} / numpy" for h in heads) + " |",
              "|---|" + "---|" * (2 * len(keys) + 1)]
    for n in GEMM_SIZES:
        p = g["numpy"][n]
        lines.append(f"| {n}³, all cores | " + " | ".join(fmt(g[k][n]) for k in keys)
                     + f" | {fmt(p)} | "
                     + " | ".join(f"{g[k][n]['median'] / p['median']:.2f}" for k in keys) + " |")
    p = g1["numpy"]
    lines.append("| 1024³, 1 thread | " + " | ".join(fmt(g1[k]) for k in keys) + f" | {fmt(p)} | "
                 + " | ".join(f"{g1[k]['median'] / p['median']:.2f}" for k in keys) + " |")
    return lines


TRAIN_LABEL = {
    "mlp-64": ("MLP 784-500-100-10", 64),
    "mlp-256": ("MLP 784-500-100-10", 256),
    "cnn-64": ("LeNet-style CNN", 64),
}


def gemm_ref(res):
    if "gemm" in res:
        return res["gemm"]["ferrodl"]["1024"]["median"], res["gemm"]["numpy"]["1024"]["median"]
    return res["gemm_ref"]["ferrodl"]["median"], res["gemm_ref"]["numpy"]["median"]


def single_section(e, charts, out):
    res = e["results"]
    tr, flop = res["train"], res["train_flop_per_example"]
    fg, ng = gemm_ref(res)
    src = "the GEMM table of this run" if "gemm" in res else "a 1024³ reference measured in this run"
    lines = [*engine_meta(e), "",
             "ferrodl: `MultiLayerNetwork::fit` in a loop (one network per row, trained on through the "
             "rounds); JAX: one jitted train step (forward, backward, Adam in jax.numpy; asynchronous "
             "dispatch, blocked at the end of each sample), all cores. Same architecture, "
             "initialisation scheme, Adam formulas (lr 1e-3), batch, and data distribution: random "
             "features in [0, 1) and random one-hot labels, a pool of 32,768 examples cycled (the "
             "MNIST digits are used in the Java-API comparison below). Rounds interleave the two, "
             "alternating who goes first; examples/s after warm-up (JAX compilation excluded), "
             "median (min–max) over the rounds.",
             "",
             "Achieved FLOP/s = FLOP per example × examples/s, where FLOP per example = 6 × the "
             "forward multiply-adds of the layers with weights (forward 2 FLOP per multiply-add, "
             "backward 4: weight gradient and input gradient; bias, activation, pooling, loss and "
             "updater not counted). MLP: 6 × 443,610 parameters = 2,661,660. LeNet: forward "
             "multiply-adds = conv1 24·24·20·25 (288,000) + conv2 8·8·50·(20·25) (1,600,000) + dense "
             "800·500 (400,000) + output 500·10 (5,000) = 2,293,000, so 13,758,000 FLOP per example "
             "(conv1's input gradient, which an engine need not compute, is counted, as the MLP's "
             "first-layer input gradient is). \"of GEMM\" = achieved rate ÷ the same system's 1024³ "
             f"all-core GEMM median from {src} (ferrodl: {fg:.1f} GFLOP/s; JAX: numpy's {ng:.1f}).",
             "",
             "| model | batch | ferrodl examples/s | JAX examples/s | ferrodl / JAX (medians) | "
             "ferrodl GFLOP/s (of GEMM) | JAX GFLOP/s (of GEMM) |",
             "|---|---|---|---|---|---|---|"]
    for key in ("mlp-64", "mlp-256", "cnn-64"):
        if key not in tr:
            continue
        name, b = TRAIN_LABEL[key]
        f, j = tr[key]["ferrodl"], tr[key]["jax"]
        gf, gj = flop[key] * f["median"] / 1e9, flop[key] * j["median"] / 1e9
        lines.append(f"| {name} | {b} | {fmt(f, 0)} | {fmt(j, 0)} | **{f['median'] / j['median']:.2f}** | "
                     f"{gf:.1f} ({100 * gf / fg:.0f} %) | {gj:.1f} ({100 * gj / ng:.0f} %) |")
    pg = res.get("train_of_gemm_paired")
    if pg:
        parts = [f"{TRAIN_LABEL[k][0]} batch {TRAIN_LABEL[k][1]} {100 * v['median']:.0f} % "
                 f"({100 * v['min']:.0f}–{100 * v['max']:.0f})" for k, v in pg.items() if k in TRAIN_LABEL]
        tail_note = ("Paired: each ferrodl sample divided by the 1024³ GEMM rate the same server "
                     "measured just before it (this host's speed swings up to 2× within minutes, "
                     "which a ratio of medians taken minutes apart inherits), median (min–max) over "
                     "the rounds: " + "; ".join(parts) + ".")
    else:
        tail_note = None
    lines.append(f"| {LSTM_ROW[0]} | 64 | {LSTM_ROW[1]} | | | | |")
    if tail_note:
        lines += ["", tail_note]
    st = res["train_state"]
    lines += ["", "ferrodl's Adam state at the end: " + "; ".join(
        f"{TRAIN_LABEL[k][0]} batch {TRAIN_LABEL[k][1]}: {st[k]['steps']} steps, "
        f"{100 * st[k]['subnormal']:.1f} % subnormal" for k in ("mlp-64", "mlp-256", "cnn-64") if k in st) + "."]
    png = os.path.join(charts, "engine_throughput.png")
    if engine_chart(e, png):
        lines += ["", f"![engine-level training throughput]({rel(png, out)})"]
    lines += ["", "#### Where the ferrodl MLP step spends its time", "", *profile_section(res)]
    return lines


def profile_section(res):
    lines = [
        "The step re-assembled from the engine's GEMM/row helpers and its updater "
        "(`ferrodl_optim::Optimizer::step_and_apply`, as `fit` runs it), with the elementwise "
        "parts of ferrodl-nn mirrored (`bench/rust/src/profile.rs`), a clock around each "
        f"phase; all cores ({res['threads']} threads), subnormals flushed on the thread as "
        "`fit` does. µs per step (share of the phases' sum).",
        "",
    ]
    profs = res["profile"]
    lines += ["| phase | " + " | ".join(f"batch {p['batch']}" for p in profs) + " |",
              "|---|" + "---|" * len(profs)]
    for i, name in enumerate(ph[0] for ph in profs[0]["phases"]):
        cells = []
        for p in profs:
            tot = sum(t for _, t in p["phases"])
            t = p["phases"][i][1]
            cells.append(f"{t * 1e6:.0f} ({100 * t / tot:.1f} %)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| **sum of phases** | " + " | ".join(
        f"**{sum(t for _, t in p['phases']) * 1e6:.0f}**" for p in profs) + " |")
    lines.append("| `fit` (real engine, same data, interleaved) | "
                 + " | ".join(f"{p['fit'] * 1e6:.0f}" for p in profs) + " |")
    if all("products" in p for p in profs):
        # the GEMM rows above, one row per product: shape and the kernel each batch size takes
        for i in range(len(profs[0]["products"])):
            cells = []
            for p in profs:
                tot = sum(t for _, t in p["phases"])
                name, kernel, t = p["products"][i]
                cells.append(f"{t * 1e6:.0f} ({100 * t / tot:.1f} %) {name.split()[-1]} {kernel}")
            label = " ".join(profs[0]["products"][i][0].split()[:-1])
            lines.append(f"| GEMM {label} (m×n×k, kernel) | " + " | ".join(cells) + " |")
    if all("adam_alone" in p for p in profs):
        lines.append(f"| the updater pass alone in a loop, {res['threads']} threads | "
                     + " | ".join(f"{p['adam_alone'] * 1e6:.0f}" for p in profs) + " |")
        lines.append("| the updater pass alone in a loop, 1 thread | "
                     + " | ".join(f"{p['adam_alone_1t'] * 1e6:.0f}" for p in profs) + " |")
    s = res["subnormal"]
    lines += ["", f"Subnormal-state regression check (`subnormal`): `fit` at batch 64 on 8 cycled "
              f"(memorised) batches, {s['steps']} steps: {s['early']:.0f} examples/s over the first "
              f"200 steps, {s['late']:.0f} over the last 200; {100 * s['subnormal']:.1f} % of the "
              "updater state subnormal at the end."]
    return lines


def engine_chart(e, png):
    tr = e["results"]["train"]
    keys = [k for k in ("mlp-64", "mlp-256", "cnn-64") if k in tr]
    if not keys:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    w = 0.38
    for i, (system, color) in enumerate((("ferrodl", "#1f77b4"), ("jax", "#9467bd"))):
        xs = [x + (i - 0.5) * w for x in range(len(keys))]
        med = [tr[k][system]["median"] for k in keys]
        err = [[m - tr[k][system]["min"] for k, m in zip(keys, med)],
               [tr[k][system]["max"] - m for k, m in zip(keys, med)]]
        ax.bar(xs, med, w, yerr=err, capsize=3, color=color,
               label="ferrodl (Rust API)" if system == "ferrodl" else "JAX on CPU (jit)")
        for x, m in zip(xs, med):
            ax.text(x, m, f"{m:,.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([f"{TRAIN_LABEL[k][0]}\nbatch {TRAIN_LABEL[k][1]}" for k in keys], fontsize=9)
    ax.set_yscale("log")
    ax.set_ylabel("examples/s (log scale; median, bars = min–max)")
    ax.set_title(f"Engine-level training throughput, {e['info']['date']}, "
                 f"{e['info']['machine']['cores']} cores", fontsize=10)
    ax.legend(fontsize=9)
    ax.grid(axis="y", alpha=0.3, which="both")
    fig.tight_layout()
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png)
    plt.close(fig)
    return True


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ---------------------------------------------------------------- jvm part (bench/jvm/results.json)

JVM_LABEL = {
    "ferrodl": "ferrodl (Java API → JNI → Rust)",
    "dl4j": "DL4J 1.0.0-M2.1, OMP_NUM_THREADS=cores (recommended)",
    "dl4j-passive": "DL4J, + OMP_WAIT_POLICY=PASSIVE",
    "jax": "JAX on CPU (jit)",
    "torch": "PyTorch CPU (torch.nn.LSTM)",
}
MODEL_LABEL = {"mlp": "MLP 784-500-100-10", "cnn": "LeNet-style CNN", "rescnn": "Residual CNN (graph)",
               "graves": "Char model, 2 × GravesLSTM 200, TBPTT 50", "lstm": "Char model, 2 × LSTM 200, TBPTT 50"}
JVM_MODELS = ("mlp", "cnn", "rescnn", "graves", "lstm")
VARIANT_ORDER = ("ferrodl", "jax", "torch", "dl4j-passive", "dl4j")


def mb(s):
    if not s or s.get("median") is None:
        return "–"
    return f"{s['median'] / 1024:,.0f} ({s['min'] / 1024:,.0f}–{s['max'] / 1024:,.0f})"


def jvm_section(j, charts, out):
    v, h, p = j["versions"], j["host"], j["protocol"]
    lines = [
        f"- Measured {j['started']} – {j['generated']} (UTC) by `bench/jvm/run.sh`, "
        f"{p['repetitions']} repetitions, every run its own JVM / process, the systems interleaved "
        f"(order reversed every other repetition); {h['wall_s']} s in all.",
        f"- Machine: {v['cpu_model']}, {v['cores']} cores; load average at start {h['loadavg_start']}, "
        f"at end {h['loadavg_end']} (before every run: `results.json`).",
        f"- Versions: {v['java_version_in_jvm']} JVM ({v['java_opts']}); ferrodl "
        f"`{str(v['ferrodl_git_sha'])[:7]}`"
        f"{' + uncommitted engine changes' if v['ferrodl_uncommitted_engine_files'] else ''} "
        f"({v.get('ferrodl_engine_threads')} engine threads); Deeplearning4j {v['dl4j']} with "
        f"nd4j-native `{v['nd4j_native_classifier']}`; JAX {v.get('jax')} / jaxlib {v.get('jaxlib')} "
        f"(Python {v.get('jax_python')})"
        + (f"; PyTorch {v['torch']} ({v.get('torch_threads')} threads)" if v.get("torch") else "") + ".",
        "",
        f"Data: {p['data']}. Timing: {p['timing']}. JAX: {p.get('jax', 'not run')}. Networks: "
        f"{p['networks']}.",
        "",
        "| model (batch) | system | examples/s | ferrodl / system (per repetition) | epochs run | "
        "test accuracy |",
        "|---|---|---|---|---|---|",
    ]
    ratios = {(r["model"], r["denominator"]): r for r in j["ratios"]}
    meas = {(m["model"], m["variant"]): m for m in j["measurements"]}
    for model in JVM_MODELS:
        for var in VARIANT_ORDER:
            m = meas.get((model, var))
            if not m:
                continue
            r = ratios.get((model, var))
            eps = "/".join(str(x) for x in sorted({q["epochs"] for q in m["per_rep"]}))
            lines.append(f"| {MODEL_LABEL[model]} ({m['batch']}) | {JVM_LABEL.get(var, var)} | {fmt(m['examples_per_sec'], 0)} | "
                         f"{'1' if var == 'ferrodl' else ('**' + fmt(r['ratio'], 2) + '**') if r else '–'} | "
                         f"{eps} | {m['test_accuracy']['median']:.4f} |")
    if not any(k[0] in ("graves", "lstm") for k in meas):
        lines.append("| Char model (LSTM rows) | all | not run in this session (`JVM_BENCH_MODELS`) | | | |")
    if p.get("lstm") and any(k[0] in ("graves", "lstm") for k in meas):
        lines += ["", f"LSTM rows (examples = characters): {p['lstm']}."]
    goals = j.get("goals") or []
    if goals:
        lines += ["", "Issue 12 item 8's goals (ratios per repetition, the faster peer of each repetition):", "",
                  "| model | ferrodl / | ratio (median, min–max) | goal | met? |", "|---|---|---|---|---|"]
        for g in goals:
            lines.append(f"| {MODEL_LABEL[g['model']]} | {g['against']} ({', '.join(sorted(set(g['faster_peer_per_rep'])))}) | "
                         f"**{fmt(g['ratio'], 2)}** | ≥ {g['goal']} | {'yes' if g['met'] else '**no**'} |")
    probe = j.get("dl4j_mmul_probe") or []
    if probe:
        lines += ["", "DL4J diagnostic, one `[64×784]·[784×500]` ND4J product before training (µs, "
                  "median (min–max) over its JVMs): " + "; ".join(
                      f"{JVM_LABEL.get(q['variant'], q['variant'])}: {fmt(q['mmul_64x784x500_us'], 0)}"
                      for q in probe) + "."]
    png = os.path.join(charts, "jvm_throughput.png")
    if jvm_chart(j, png):
        lines += ["", f"![training throughput through the Java API]({rel(png, out)})"]
    jn = j.get("jni")
    if jn:
        s = jn["summary_over_reps"]
        lines += ["", "#### JNI overhead (ferrodl, MLP, batch 64)", "",
                  f"{jn['method']} Median (min–max) over {jn['repetitions']} JVMs.", "",
                  "| quantity | value |", "|---|---|",
                  f"| `MultiLayerNetwork.fit` step (µs) | {fmt(s['api_fit_us'], 0)} |",
                  f"| JNI call (µs) | {fmt(s['call_us'], 3)} |",
                  f"| copying the batch into Rust, {jn['copy_bytes']:,} bytes (µs) | {fmt(s['copy_us'], 1)} |",
                  f"| Java wrapper (µs) | {fmt(s['wrapper_us'], 1)} |",
                  f"| **overhead = call + copy + wrapper, share of the step (%)** | "
                  f"**{fmt({k: 100 * x for k, x in s['overhead_fraction'].items() if k != 'n'}, 2)}** |",
                  f"| cross-check: median(API step − raw `NativeNetwork.fit` step) (µs) | {fmt(s['step_diff_us'], 1)} "
                  f"(resolution, two identical API networks: {fmt(s['step_null_us'], 1)}) |"]
    mem = j.get("memory") or []
    if mem:
        lines += ["", "#### Memory of the training process (MLP, batch 64, up to 20 epochs)", "",
                  "`/proc/self/status` at the end of the first and of the last epoch the run reached "
                  "(MB, median (min–max) over repetitions); peak RSS = VmHWM. JAX is a Python process "
                  "(no Java heap).", "",
                  "| system | epochs | peak RSS, first epoch | peak RSS, last epoch | RSS, last epoch | "
                  "Java heap used / committed, last epoch |", "|---|---|---|---|---|---|"]
        for var in VARIANT_ORDER:
            for m in mem:
                if m["variant"] != var:
                    continue
                f, l = m["first"], m["last"]
                lines.append(f"| {JVM_LABEL.get(var, var)} | {m['first_epoch']} → {m['last_epoch']} | "
                             f"{mb(f['VmHWM_kB'])} | {mb(l['VmHWM_kB'])} | {mb(l['VmRSS_kB'])} | "
                             f"{mb(l.get('javaHeapUsed_kB'))} / {mb(l.get('javaHeapCommitted_kB'))} |")
    if j.get("errors"):
        lines += ["", "Errors of this run (details in `bench/jvm/results.json`):", ""]
        for e in j["errors"]:
            tail = [t for t in e.get("log_tail", []) if t.strip()]
            lines.append(f"- {e['system']} {e['stage']}: exit {e['rc']}: `{tail[-1] if tail else ''}`")
    return lines


def jvm_chart(j, png):
    meas = {(m["model"], m["variant"]): m for m in j["measurements"]}
    models = [m for m in JVM_MODELS if any(k[0] == m for k in meas)]
    if not models:
        return False
    plt = pyplot()
    colors = {"ferrodl": "#1f77b4", "jax": "#9467bd", "torch": "#2ca02c", "dl4j-passive": "#ff7f0e", "dl4j": "#d62728"}
    variants = [v for v in VARIANT_ORDER if any(k[1] == v for k in meas)]
    fig, ax = plt.subplots(figsize=(9, 5), dpi=110)
    w = 0.8 / len(variants)
    for i, var in enumerate(variants):
        xs, med, lo, hi = [], [], [], []
        for x, model in enumerate(models):
            m = meas.get((model, var))
            if not m:
                continue
            s = m["examples_per_sec"]
            xs.append(x + (i - (len(variants) - 1) / 2) * w)
            med.append(s["median"])
            lo.append(s["median"] - s["min"])
            hi.append(s["max"] - s["median"])
        ax.bar(xs, med, w, yerr=[lo, hi], capsize=3, color=colors.get(var), label=JVM_LABEL.get(var, var))
        for x, y in zip(xs, med):
            ax.text(x, y, f"{y:,.0f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels([MODEL_LABEL[m].replace(", TBPTT 50", "").replace("Char model, ", "chars, ")
                        + f", batch {next(v for k, v in meas.items() if k[0] == m)['batch']}" for m in models],
                       fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("examples/s, log scale (median over repetitions; bars: min–max)")
    ax.set_title(f"Training throughput through the public APIs (examples/s; LSTM rows: characters/s) ({j['started']}, "
                 f"{j['versions']['cores']} cores)", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(axis="y", alpha=0.3, which="both")
    fig.tight_layout()
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- cluster part

CLUSTER_LABEL = {
    "ferrodl-paramavg": "ferrodl ParameterAveragingTrainingMaster",
    "ferrodl-shared": "ferrodl SharedTrainingMaster (gradient sharing)",
    "dl4j-paramavg": "DL4J ParameterAveragingTrainingMaster",
    "dl4j-shared": "DL4J SharedTrainingMaster",
    "mllib-mlp": "Spark MLlib MultilayerPerceptronClassifier (sigmoid, L-BFGS)",
}


def cluster_section(c, out, cluster_dir):
    m, v = c["machine"], c["versions"]
    res = v.get("dl4j_maven_resolution") or ""
    if isinstance(res, list):
        res = " ".join(res)
    used = re.search(r"DL4J Spark modules used: (\S+)", res)
    if "refused" in res:
        # condensed; the full Maven answer is in results.json
        res = ("1.0.0-M2.1 of dl4j-spark_2.12 / dl4j-spark-parameterserver_2.12 refused by Maven Central "
               "(\"Could not find artifact ... in central\"), so "
               f"{used.group(1) if used else '?'} of those two modules with 1.0.0-M2.1 of the rest")
    lines = [
        f"- Measured {c['date']} by `bench/cluster/run.sh` ({c['repeats']} repeat(s) of every system, "
        f"{c['total_bench_seconds'] / 60:.0f} min); a Spark standalone master and two one-core workers "
        "on 127.0.0.1 per system; the configuration of each system, every point and every "
        "submission are in `bench/cluster/results.json`, the method in `bench/cluster/README.md`.",
        f"- Machine: {m['cpus']} CPUs; load average at start {load3(m['load_1_5_15_at_start'])}, at end "
        f"{load3(m.get('load_1_5_15_at_end', [0, 0, 0]))}.",
        f"- Versions: ferrodl `{v['ferrodl_git_head']}`"
        f"{' + uncommitted engine changes' if v.get('ferrodl_uncommitted_engine_changes') else ''} on "
        f"{v['spark_for_ferrodl_and_mllib']}; DL4J on {v['spark_for_dl4j']}; {v['java']}; Python "
        f"{v['python']}. DL4J Spark modules: {res.strip() or 'see results.json'}.",
        "",
        f"Target: {c['target_accuracy']} test accuracy on the 2,004 test digits; budget "
        f"{c['budget_training_seconds']:.0f} s of training per run. Seconds are training time as each "
        "application measures it (Spark start-up, data loading and evaluation excluded). Every point "
        "is a measurement: DL4J evaluates after every epoch; ferrodl and MLlib points are separate "
        "applications / fits with increasing epochs / maxIter (the ferrodl example prints test "
        "accuracy once, at the end).",
        "",
        f"| system | time to {c['target_accuracy']} (per run) | best accuracy within the budget (per run) | "
        "wire bytes per worker iteration |",
        "|---|---|---|---|",
    ]
    for name, s in c["systems"].items():
        su = s.get("summary", {})
        tt = su.get("time_to_target_seconds") or []
        runs = s.get("runs", [])
        best = ", ".join(f"{r['best_accuracy_within_budget']:.4f} (at {r['best_at_seconds']:.0f} s)"
                         for r in runs if r.get("best_accuracy_within_budget") is not None) or "no result"
        ttxt = ", ".join(f"{t:.1f} s" for t in tt) if tt else "not reached"
        if tt and len(tt) < len(runs):
            ttxt += f" ({su.get('reached_target_in')})"
        by = su.get("bytes_per_worker_iteration")
        if by:
            bytes_txt = ", ".join(f"{b:,.0f}" for b in by) + " (dense fp32 update: 1,774,440)"
        elif name == "dl4j-shared":
            bytes_txt = "not exposed by DL4J"
        else:
            bytes_txt = "dense parameters / gradients through Spark (not counted)"
        failed = su.get("runs_failed")
        if failed:
            ttxt += f"; {failed} run(s) failed (results.json)"
        lines.append(f"| {CLUSTER_LABEL.get(name, name)} | {ttxt} | {best} | {bytes_txt} |")
    png = os.path.join(cluster_dir, "time_to_accuracy.png")
    if os.path.exists(png):
        lines += ["", f"![test accuracy against training wall-clock time]({rel(png, out)})"]
    return lines


# ---------------------------------------------------------------- spark part (issue 15)

SPARK_MODE = {"local": "local[2] (one JVM, 2 cores)",
              "cluster": "standalone cluster: master + 2 one-core workers on 127.0.0.1, spark-submit"}
SPARK_CONFIG = {"local-32": "local `MultiLayerNetwork.fit`, batch 32, all cores",
                "local-16": "local `MultiLayerNetwork.fit`, batch 16, all cores",
                "paramavg-32": "ParameterAveragingTrainingMaster, batch 32, averaging frequency 10",
                "shared-16": "SharedTrainingMaster (gradient sharing), batch 16",
                "shared-32": "SharedTrainingMaster (gradient sharing), batch 32",
                "sharedts-16": "SharedTrainingMaster, batch 16, the README's recommended TargetSparsity(1e-4, 2.5e-3)",
                "sharedts-32": "SharedTrainingMaster, batch 32, the README's recommended TargetSparsity(1e-4, 2.5e-3)",
                "paramavgfresh-32": "ParameterAveragingTrainingMaster, batch 32, a new unpersisted RDD per epoch",
                "sharedfresh-16": "SharedTrainingMaster, batch 16, a new unpersisted RDD per epoch",
                "torch-32": "Spark's TorchDistributor (PyTorch DDP, gloo), batch 32 per process",
                "torch-16": "Spark's TorchDistributor (PyTorch DDP, gloo), batch 16 per process"}
SPARK_TTA_STYLE = {"local": ("#7f7f7f", "--"), "paramavg": ("#1f77b4", "-"), "shared": ("#2ca02c", "-"),
                   "sharedts": ("#2ca02c", "-."),
                   "torch": ("#d62728", "-")}


def spark_section(r, charts=None, out=None):
    v = r["versions"]
    lines = [
        f"- Measured {r['date']} (UTC) by `bench/spark/run.sh` ({r['rounds']} timed round(s) after one warm-up "
        "epoch per configuration; every configuration its own network; a round runs one epoch of each, "
        "the order rotating); raw epochs, load averages and the breakdowns: `bench/spark/results.json`.",
        f"- Machine: {v['cpu_model']}, {v['cpus']} CPUs; load average at start {load3(r['load_start'])}, at end "
        f"{load3(r['load_end'])} (per epoch: results.json).",
        f"- Versions: ferrodl `{v['git_head']}`{' + uncommitted engine changes' if v.get('uncommitted_engine_changes') else ''}"
        f" on the pyspark 4.2.0 distribution; {v['java']}.",
        "",
        "Network: MLP 784-500-100-10 (ReLU, softmax + MCXENT, Adam 1e-3, seed 12345); data: the 7,996 "
        "training digits of `spark-example`'s mnist10k in one fixed shuffle, as DataSets of one minibatch "
        "each, the training RDD parallelized into one partition per worker, persisted MEMORY_ONLY and "
        "materialised before the clock starts (the \"new unpersisted RDD per epoch\" rows instead parallelize "
        "the minibatches again inside every timed epoch and never persist them, as `make example` did until 2026-11-29, so "
        "the masters' default Export approach writes every minibatch to a file each epoch; throughput "
        "only). Local: `MultiLayerNetwork.fit` over the same minibatches on "
        "all cores of the same JVM (the driver's, in the cluster run), in the same run. Spark: "
        "`SparkDl4jMultiLayer.fit(rdd)` = one epoch, timed as a whole on the driver; masters as a user "
        "would configure them (prefetch 2, rngSeed, defaults otherwise). examples/s = 7,996 / epoch seconds; "
        "median (min–max) over the rounds; ratio = ratio of the medians (per-round ratios in results.json).",
        "",
    ]
    for mode, m in r["modes"].items():
        lines += [f"**{SPARK_MODE.get(mode, mode)}** (load {load3(m['load_start'])} → {load3(m['load_end'])}"
                  f"{'; FAILED, see results.json' if m.get('rc') else ''}):", "",
                  "| configuration | examples/s | test accuracy after the run (epochs) |", "|---|---|---|"]
        for c, t in m["throughput"].items():
            a = m["accuracy"].get(c)
            acc = f"{a['test_accuracy']:.4f} ({a['epochs']})" if a else "–"
            lines.append(f"| {SPARK_CONFIG.get(c, c)} | {fmt(t, 0)} | {acc} |")
        lines += ["", "| Spark ÷ local (same batch) | ratio of medians | per round (min–max) |", "|---|---|---|"]
        for x in m["ratios"]:
            lines.append(f"| {x['label']} | **{x['ratio_of_medians']:.2f}** | "
                         f"{x['per_round_min']:.2f}–{x['per_round_max']:.2f} |")
        tta = m.get("time_to_accuracy") or {}
        if tta.get("configs"):
            target = tta["target"]
            lines += ["", f"Time to {target} test accuracy (issue 15 goal 3; every configuration again from a fresh "
                      "network, one epoch at a time, the configurations' epochs interleaved (epoch k of each in "
                      "a rotating order, so that the host's speed swings fall on all alike), test accuracy "
                      "after each epoch off the clock; fit seconds summed, JVM start excluded):", "",
                      f"| configuration | fit seconds to {target} (epochs) | best accuracy | wire bytes per worker "
                      "iteration at that point |", "|---|---|---|---|"]
            for c, v in tta["configs"].items():
                reached = f"**{v['seconds']:.1f} s** ({v['epochs']})" if v["seconds"] else "not reached"
                wire = "dense fp32 gradients, all-reduced every step (not counted)" if c.startswith("torch") else "–"
                if v.get("bytes_per_worker_iteration"):
                    dense = 4 * v["parameters"]
                    wire = (f"{v['bytes_per_worker_iteration']:,.0f} (1/{dense / v['bytes_per_worker_iteration']:,.0f}"
                            f" of the dense fp32 update, {dense:,})")
                lines.append(f"| {SPARK_CONFIG.get(c, c)} | {reached} | {v['best']:.4f} | {wire} |")
            ours = [x for x in tta.get("ratios", []) if not x["spark"].startswith("torch")]
            if ours:
                lines += ["", "Spark ÷ local time to " + str(target) + ": " + ", ".join(
                    f"{x['spark']} **{x['ratio']:.2f}×**" for x in ours) + " (goal: ≤ 3×)."]
            lines += torch_distributor_lines(m, tta)
            png = os.path.join(charts, "spark_time_to_accuracy.png") if charts else None
            if png and mode == "cluster" and spark_tta_chart(r, m, png):
                lines += ["", f"![test accuracy against fit seconds on the cluster]({rel(png, out)})"]
        bds = [b for b in m.get("breakdown", []) if b.get("time_breakdown")]
        if bds:
            lines += ["", "Where the time goes (one extra epoch per Spark configuration with "
                      "`collectTrainingStats(true)`; `SparkTrainingStats.getTimeBreakdown()`, ms per worker "
                      "iteration):", ""]
            for b in bds:
                lines += ["```", b["time_breakdown"].rstrip(), "```"]
        lines.append("")
    return lines


def torch_distributor_lines(m, tta):
    """What the TorchDistributor rows measured and left off their clock, or why they are missing."""
    lines = []
    for e in m.get("torch_distributor_errors") or []:
        tail = [l for l in e["error_tail"] if l.strip()]
        lines += ["", f"Spark's TorchDistributor rows FAILED (spark-submit status {e['status']}; "
                  f"log `{os.path.basename(e['log'])}`, tail in results.json): `{tail[-1] if tail else ''}`"]
    for i in m.get("torch_distributor") or []:
        ratio = next((x for x in tta.get("ratios", []) if x["spark"] == i["config"]), None)
        lines += ["", f"{i['config']}: `TorchDistributor(num_processes={i['num_processes']}, local_mode=False, "
                  f"use_gpu=False).run(train)` on the same cluster after the ferrodl application (pyspark {i['pyspark']}, torch {i['torch']} from "
                  f"PyPI, CPU, {i['torch_threads']} thread per process, Python {i['python']}; "
                  "`bench/spark/torch_distributor_tta.py`): the same MLP, initialisation (N(0, 2/fan_in), biases 0), "
                  "Adam 1e-3, minibatches and halves of the shuffled digits per process; DDP averages the two "
                  "processes' gradients every step. Its clock runs from a barrier before the first step to one "
                  "after the last, per epoch"
                  + (f"; ÷ local time to {tta['target']}: **{ratio['ratio']:.2f}×**" if ratio else "")
                  + f". Not on the clock, as the JVM start is not on ferrodl's: the {i['startup_seconds']:.1f} s "
                  f"from `run()` to the first step (Spark barrier job, Python workers, torchrun and its agent, training processes "
                  f"{i['startup_to_function_seconds']:.1f} s, `import torch` {i['import_torch_seconds']:.1f} s, "
                  f"gloo rendezvous {i['init_process_group_seconds']:.1f} s, data and model "
                  f"{i['data_and_model_seconds']:.1f} s), the test evaluations ({i['eval_seconds']:.1f} s) and "
                  f"{i['shutdown_seconds']:.1f} s of teardown after the last epoch: `run()` took "
                  f"{i['run_wall_seconds']:.1f} s in all (load {load3(i['load_start'])} → {load3(i['load_end'])})."]
    return lines


def spark_tta_chart(r, m, png):
    """Test accuracy against fit seconds, every time-to-accuracy configuration of one mode."""
    configs = (m.get("time_to_accuracy") or {}).get("configs") or {}
    if not configs:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 5), dpi=110)
    target = m["time_to_accuracy"]["target"]
    for c, v in configs.items():
        kind = c.split("-")[0]
        color, style = SPARK_TTA_STYLE.get(kind, ("#000000", ":"))
        if c.endswith("-16"):
            style = ":"
        pts = v["points"]
        t = f" — {v['seconds']:.1f} s" if v["seconds"] else " — not reached"
        ax.plot([p["fit_seconds"] for p in pts], [p["test_accuracy"] for p in pts], style, marker="o", ms=3,
                color=color, label=SPARK_CONFIG.get(c, c).replace("`", "") + t)
    ax.axhline(target, color="black", lw=0.8, alpha=0.5)
    low = min(p["test_accuracy"] for v in configs.values() for p in v["points"])
    ax.set_ylim(max(0.85, low - 0.01), 0.98)
    ax.set_xlabel("fit seconds (evaluation and application / process start off the clock)")
    ax.set_ylabel("test accuracy (2,004 digits), after each epoch" + (f"; {low:.3f} off the chart" if low < 0.85 else ""))
    ax.set_title(f"Time to {target} on the standalone cluster (2 one-core workers), {r['date']} UTC, "
                 f"load {load3(m['load_start'])} → {load3(m['load_end'])}", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- the document

TEMPLATE = f"""# Benchmarks

`make bench` runs the benchmarks and rewrites the "Latest results" below.

{LATEST_START}
{LATEST_END}

{PREVIOUS}
## Previous results
"""


def sections_of(block):
    out = {}
    for p in PARTS:
        if start(p) in block and end(p) in block:
            s = block.index(start(p))
            e = block.index(end(p)) + len(end(p))
            out[p] = block[s:e]
    return out


def write_doc(path, new_sections, session_lines):
    doc = open(path).read() if os.path.exists(path) else TEMPLATE
    if LATEST_START not in doc or PREVIOUS not in doc:
        doc = TEMPLATE + "\n" + doc
    s, e = doc.index(LATEST_START), doc.index(LATEST_END) + len(LATEST_END)
    old_block = doc[s:e]
    old_sections = sections_of(old_block)
    demoted = []
    if not old_sections:
        body = old_block[len(LATEST_START):-len(LATEST_END)].strip()
        if body:  # the older single-run layout: the whole block goes
            body = body.replace("## Latest results — ", "### Run of ", 1)
            body = re.sub(r"(?m)^### (?!Run of )", "#### ", body)
            demoted.append(body)
    for p in PARTS:
        if p in new_sections and p in old_sections:
            inner = old_sections[p][len(start(p)):-len(end(p))].strip()
            demoted.append(inner)  # "###" under "## Previous results", as in "Latest results"
    parts = []
    for p in PARTS:
        if p in new_sections:
            parts.append(start(p) + "\n" + new_sections[p].strip() + "\n" + end(p))
        elif p in old_sections:
            parts.append(old_sections[p])
        else:
            parts.append(start(p) + f"\n### {TITLES[p]}\n\nNot measured yet in this layout: "
                         f"`make bench BENCH_PARTS={p}`.\n" + end(p))
    block = "\n".join([LATEST_START, "## Latest results", "", *session_lines, "", "\n\n".join(parts),
                       LATEST_END])
    doc = doc[:s] + block + doc[e:]
    if demoted:
        p = doc.index(PREVIOUS)
        nl = doc.index("\n", doc.index("## Previous results", p)) + 1
        doc = doc[:nl] + "\n" + "\n\n".join(d.strip() for d in demoted) + "\n" + doc[nl:]
    with open(path, "w") as f:
        f.write(doc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", required=True, help="the parts that ran: comma list of " + ", ".join(PARTS))
    ap.add_argument("--engine", default="bench/results/engine.json")
    ap.add_argument("--jvm", default="bench/jvm/results.json")
    ap.add_argument("--cluster", default="bench/cluster/results.json")
    ap.add_argument("--spark", default="bench/spark/results.json")
    ap.add_argument("--failed", default="", help="comma list of parts whose command failed")
    ap.add_argument("--session", help="JSON with the session's start/end dates and load averages")
    ap.add_argument("--out", default="docs/BENCHMARKS.md")
    ap.add_argument("--charts", default="bench/charts")
    a = ap.parse_args()
    parts = [p for p in a.parts.split(",") if p]
    bad = set(parts) - set(PARTS)
    if bad:
        raise SystemExit(f"report.py: unknown part(s) {sorted(bad)}; valid: {', '.join(PARTS)}")
    failed = {p for p in a.failed.split(",") if p}
    new = {}
    engine = json.load(open(a.engine)) if {"gemm", "single"} & set(parts) - failed else None
    for p in parts:
        title = f"### {TITLES[p]}"
        if p in failed:
            new[p] = (f"{title} — FAILED\n\nThe `{p}` part of the last `make bench` session failed; its "
                      "log is in `.build/bench-logs/`. Its previous section is under \"Previous results\".")
            continue
        if p == "gemm":
            body, date = gemm_section(engine), engine["info"]["date"]
        elif p == "single":
            body, date = single_section(engine, a.charts, a.out), engine["info"]["date"]
        elif p == "jvm":
            j = json.load(open(a.jvm))
            body, date = jvm_section(j, a.charts, a.out), j["started"]
        elif p == "spark":
            r = json.load(open(a.spark))
            body, date = spark_section(r, a.charts, a.out), r["date"]
        else:
            c = json.load(open(a.cluster))
            body, date = cluster_section(c, a.out, os.path.dirname(os.path.abspath(a.cluster))), c["date"]
        new[p] = f"{title} — {date}\n\n" + "\n".join(body)
    session = []
    if a.session and os.path.exists(a.session):
        s = json.load(open(a.session))
        session = [f"Last `make bench` session: {s['start']} – {s['end']} (UTC), parts "
                   f"{', '.join(parts)}{' (failed: ' + ', '.join(sorted(failed)) + ')' if failed else ''}; "
                   f"{s['cpu_model']}, {s['cores']} cores; load average (1/5/15 min) before "
                   f"{s['load_start']}, after {s['load_end']}. Each part below carries its own date, "
                   "versions and load; a part not run in that session keeps the section of the session "
                   "that ran it."]
    write_doc(a.out, new, session)
    print(f"wrote {a.out} ({', '.join(parts)})")


if __name__ == "__main__":
    main()
