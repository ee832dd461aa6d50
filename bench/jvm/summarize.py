"""Collects the JSON lines of bench/jvm/run.sh (bench/jvm/out/*.jsonl) into bench/jvm/results.json
and prints a human summary. Every number comes from this run's files; nothing is filled in.

Usage: python3 bench/jvm/summarize.py --out-dir bench/jvm/out --results bench/jvm/results.json
"""

import argparse
import glob
import json
import os
import statistics

SYSTEM_LABEL = {
    "ferrodl": "ferrodl",
    "ferrodl-base": "ferrodl at JVM_BENCH_BASE_REF (baseline)",
    "dl4j": "DL4J (OMP_NUM_THREADS=cores, recommended)",
    "dl4j-passive": "DL4J (+ OMP_WAIT_POLICY=PASSIVE)",
    "jax": "JAX on CPU (jit)",
    "torch": "PyTorch CPU (torch.nn.LSTM)",
}


def system_of(variant):
    return "dl4j" if variant.startswith("dl4j") else variant
MODEL_LABEL = {"mlp": "MLP 784-500-100-10", "cnn": "LeNet-style CNN", "rescnn": "Residual CNN (graph)",
               "graves": "Char model, 2 x GravesLSTM 200", "lstm": "Char model, 2 x LSTM 200"}
THROUGHPUT_MODELS = ("mlp", "cnn", "rescnn", "graves", "lstm")
RECURRENT_MODELS = ("graves", "lstm")


def spread(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)}


def read_env(path):
    env = {}
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v
    return env


def read_runs(out_dir):
    runs = []
    for path in sorted(glob.glob(os.path.join(out_dir, "*.jsonl"))):
        if os.path.basename(path) == "errors.jsonl":
            continue
        r = {"file": os.path.basename(path), "lines": []}
        for line in open(path, errors="replace"):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                d = json.loads(line)
            except ValueError:
                continue
            t = d.get("type")
            if t in ("meta", "exit", "info", "run", "jni_setup", "jni_run", "probe"):
                r[t] = d
            else:
                r["lines"].append(d)
        if "meta" in r:
            runs.append(r)
    return runs


def throughput(runs):
    out = []
    by = {}
    for r in runs:
        m = r["meta"]
        if m["model"] in THROUGHPUT_MODELS and "run" in r:
            by.setdefault((m["variant"], m["model"]), []).append(r)
    for (variant, model), rs in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        rs.sort(key=lambda r: r["meta"]["rep"])
        per_rep = []
        for r in rs:
            windows = [d for d in r["lines"] if d["type"] == "window"]
            epochs = sorted({d["epoch"] for d in windows})
            early = [d["examples_per_sec"] for d in windows if d["epoch"] in epochs[:3]]
            late = [d["examples_per_sec"] for d in windows if d["epoch"] in epochs[-3:]]
            run = r["run"]
            per_rep.append({
                "rep": r["meta"]["rep"],
                "examples_per_sec": run["examples_per_sec"],
                "window_min": run["examples_per_sec_min"],
                "window_max": run["examples_per_sec_max"],
                "windows": run["windows"],
                "epochs": run["epochs"],
                "iterations": run.get("iterations"),
                "early_epochs": epochs[:3],
                "early_examples_per_sec": statistics.median(early) if early else None,
                "late_epochs": epochs[-3:],
                "late_examples_per_sec": statistics.median(late) if late else None,
                "updater_state_subnormal_share_end": run.get("updater_state_subnormal_share"),
                "test_accuracy": run["test_accuracy"],
                "final_score": run["final_score"],
                "loadavg_before": r["meta"].get("loadavg_before"),
                "wall_s": r.get("exit", {}).get("wall_s"),
            })
        s = spread([p["examples_per_sec"] for p in per_rep])
        out.append({
            "system": system_of(variant),
            "variant": variant,
            "settings": rs[0]["meta"]["settings"],
            "model": model,
            "batch": rs[0]["run"]["batch"],
            "metric": "examples_per_sec (median of the timed windows of one JVM run)",
            "repetitions": len(per_rep),
            "examples_per_sec": s,
            "min": s["min"], "median": s["median"], "max": s["max"],
            "early_examples_per_sec": spread([p["early_examples_per_sec"] for p in per_rep]),
            "late_examples_per_sec": spread([p["late_examples_per_sec"] for p in per_rep]),
            "test_accuracy": spread([p["test_accuracy"] for p in per_rep]),
            "updater_state_subnormal_share_end": spread(
                [p["updater_state_subnormal_share_end"] for p in per_rep]),
            "per_rep": per_rep,
        })
    return out


def ratios(meas):
    out = []
    idx = {(m["variant"], m["model"]): m for m in meas}
    for (variant, model), m in sorted(idx.items()):
        if variant == "ferrodl" or ("ferrodl", model) not in idx:
            continue
        f = {p["rep"]: p["examples_per_sec"] for p in idx[("ferrodl", model)]["per_rep"]}
        d = {p["rep"]: p["examples_per_sec"] for p in m["per_rep"]}
        reps = sorted(set(f) & set(d))
        per_rep = [f[r] / d[r] for r in reps]
        out.append({
            "model": model,
            "numerator": "ferrodl",
            "denominator": variant,
            "what": "ferrodl examples/s divided by the other system's, repetition by repetition "
                    "(the two runs of a repetition are adjacent in time)",
            "per_rep": per_rep,
            "ratio": spread(per_rep),
        })
    return out


def goals(meas):
    """Issue 12 item 8's goals for the LSTM rows, repetition by repetition: ferrodl against the
    faster DL4J setting (goal >= 2) and against the faster of JAX and PyTorch (goal >= 1.2)."""
    idx = {(m["variant"], m["model"]): {p["rep"]: p["examples_per_sec"] for p in m["per_rep"]} for m in meas}
    out = []
    for model in RECURRENT_MODELS:
        f = idx.get(("ferrodl", model))
        if not f:
            continue
        for name, peers, goal in (("DL4J (faster setting)", ("dl4j", "dl4j-passive"), 2.0),
                                  ("faster of JAX and PyTorch", ("jax", "torch"), 1.2)):
            have = [p for p in peers if (p, model) in idx]
            if not have:
                continue
            per_rep, best = [], []
            for rep in sorted(f):
                vals = {p: idx[(p, model)][rep] for p in have if rep in idx[(p, model)]}
                if not vals:
                    continue
                b = max(vals, key=vals.get)
                per_rep.append(f[rep] / vals[b])
                best.append(b)
            if per_rep:
                r = spread(per_rep)
                out.append({"model": model, "against": name, "peers": have, "goal": goal,
                            "per_rep": per_rep, "faster_peer_per_rep": best, "ratio": r,
                            "met": r["median"] >= goal})
    return out


def probes(runs):
    by = {}
    for r in runs:
        if "probe" in r:
            by.setdefault(r["meta"]["variant"], []).append(r["probe"]["mmul_64x784x500_us_median"])
    return [{"variant": v, "what": "DL4J only, before training: median latency (us) of one ND4J "
             "[64x784]x[784x500] mmul over 50 timed products, one value per JVM run",
             "mmul_64x784x500_us": spread(x), "per_run": x} for v, x in sorted(by.items())]


def memory(runs):
    out = []
    by = {}
    for r in runs:
        m = r["meta"]
        if m["model"] == "mlp":
            mem = [d for d in r["lines"] if d["type"] == "memory"]
            if mem:
                by.setdefault(m["variant"], []).append((m["rep"], mem))
    keys = ("VmHWM_kB", "VmRSS_kB", "RssAnon_kB", "RssFile_kB", "javaHeapUsed_kB", "javaHeapCommitted_kB")
    for variant, items in sorted(by.items()):
        first = [min(mem, key=lambda d: d["epoch"]) for _, mem in items]
        last = []
        for _, mem in items:
            d = dict(max(mem, key=lambda d: d["epoch"]))
            # the kernel updates its high-water mark lazily, so a later read can show a slightly
            # lower VmHWM than an earlier one: the peak is the largest value read so far
            d["VmHWM_kB"] = max(x.get("VmHWM_kB", 0) for x in mem)
            last.append(d)
        out.append({
            "system": system_of(variant),
            "variant": variant,
            "model": "mlp",
            "repetitions": len(items),
            "what": "/proc/self/status of the training JVM at the end of an epoch (kB); VmHWM = "
                    "peak RSS so far. 'last' is the last epoch the run reached",
            "first_epoch": sorted({d["epoch"] for d in first}),
            "last_epoch": sorted({d["epoch"] for d in last}),
            "first": {k: spread([d.get(k) for d in first]) for k in keys},
            "last": {k: spread([d.get(k) for d in last]) for k in keys},
        })
    return out


def jni(runs):
    reps = [r for r in runs if r["meta"]["model"] == "jni" and "jni_run" in r]
    if not reps:
        return None
    rounds = [d for r in reps for d in r["lines"] if d["type"] == "jni"]
    per_round_fraction = [(d["wrapper_us"] + d["call_us"] + d["copy_us"]) / d["api_fit_us"] for d in rounds]
    keys = ("api_fit_us", "raw_fit_us", "wrapper_us", "call_us", "copy_us", "overhead_us",
            "overhead_fraction", "boundary_fraction", "step_diff_us", "step_null_us")
    return {
        "model": "mlp",
        "batch": reps[0]["jni_run"]["batch"],
        "method": (
            "All in one ferrodl JVM. api = MultiLayerNetwork.fit(DataSet) step time; call = "
            "NativeNetwork.numParams(handle) (JNI transition + boundary guard + handle lookup); copy = "
            "NativeNetwork.fit on a destroyed handle minus numParams on it (the native side copies the "
            "features and labels before it looks the handle up, then both throw the same exception); "
            "wrapper = MultiLayerNetwork.fit on a network whose handle was destroyed minus the raw dead-handle "
            "fit (the Java work before the native call). overhead = wrapper + call + copy, as a fraction of "
            "the median api step. Cross-check: api and raw NativeNetwork.fit steps on two identical networks, "
            "interleaved batch by batch; step_diff = median(api - raw), step_null = the same estimator on two "
            "identical MultiLayerNetworks (its resolution)."
        ),
        "copy_bytes": reps[0]["jni_run"]["copy_bytes"],
        "repetitions": len(reps),
        "rounds": len(rounds),
        "per_rep": [r["jni_run"] for r in reps],
        "summary_over_reps": {k: spread([r["jni_run"][k] for r in reps]) for k in keys},
        "overhead_fraction_over_rounds": spread(per_round_fraction),
        "call_us_over_rounds": spread([d["call_us"] for d in rounds]),
        "copy_us_over_rounds": spread([d["copy_us"] for d in rounds]),
        "wrapper_us_over_rounds": spread([d["wrapper_us"] for d in rounds]),
        "api_fit_us_over_rounds": spread([d["api_fit_us"] for d in rounds]),
    }


def errors(out_dir):
    path = os.path.join(out_dir, "errors.jsonl")
    out = []
    if os.path.exists(path):
        for line in open(path):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def versions(env, runs):
    info = {r["meta"]["variant"]: r["info"] for r in runs if "info" in r}
    f = info.get("ferrodl", {})
    d = info.get("dl4j", info.get("dl4j-passive", {}))
    t = info.get("torch") or {}
    return {
        "torch": t.get("torch_version"),
        "torch_threads": t.get("torch_threads"),
        "java": env.get("java"),
        "java_runtime": env.get("java_runtime"),
        "java_version_in_jvm": f.get("java_version") or d.get("java_version"),
        "java_opts": env.get("java_opts"),
        "dl4j": d.get("dl4j_version"),
        "nd4j_native_classifier": "linux-x86_64",
        "nd4j_backend": d.get("nd4j_backend"),
        "nd4j_environment": d.get("nd4j_environment"),
        "jax": (info.get("jax") or {}).get("jax_version"),
        "jaxlib": (info.get("jax") or {}).get("jaxlib_version"),
        "jax_python": (info.get("jax") or {}).get("python"),
        "ferrodl_git_sha": env.get("git_sha"),
        "ferrodl_uncommitted_engine_files": int(env.get("git_engine_dirty", "0") or 0),
        "ferrodl_library_build_info": f.get("ferrodl_build"),
        "ferrodl_engine_threads": f.get("engine_threads"),
        "cpu_model": env.get("cpu_model"),
        "cores": int(env.get("cores", "0") or 0),
        "kernel": env.get("kernel"),
        "maven": env.get("mvn"),
    }


def fmt(x, digits=0):
    return "-" if x is None else f"{x:,.{digits}f}"


def rng(s, digits=0, scale=1.0):
    if not s:
        return "-"
    return (f"{fmt(s['median'] * scale, digits)} ({fmt(s['min'] * scale, digits)}–"
            f"{fmt(s['max'] * scale, digits)})")


def print_summary(res):
    v = res["versions"]
    h = res["host"]
    print()
    print(f"== JVM training throughput (MLP/CNN: batch 64 on the MNIST digits; LSTM: batch 32, characters) "
          f"({v['cpu_model']}, {v['cores']} cores)")
    print(f"   Java {v['java_version_in_jvm']} ({v['java_opts']}), DL4J {v['dl4j']} nd4j-native "
          f"{v['nd4j_native_classifier']}, JAX {v['jax']}, PyTorch {v.get('torch')}, ferrodl {str(v['ferrodl_git_sha'])[:12]}"
          f"{' + uncommitted engine changes' if v['ferrodl_uncommitted_engine_files'] else ''}")
    print(f"   load average {h['loadavg_start']} at start, {h['loadavg_end']} at end; "
          f"{h['wall_s']} s in all; values: median (min–max) over {res['protocol']['repetitions']} "
          f"repetitions, each its own JVM")
    print()
    print(f"{'model':<20} {'system':<44} {'examples/s':>26} {'epochs':>7} {'test acc':>9}")
    for m in res["measurements"]:
        eps = sorted({p["epochs"] for p in m["per_rep"]})
        print(f"{MODEL_LABEL[m['model']]:<20} {SYSTEM_LABEL.get(m['variant'], m['variant']):<44} "
              f"{rng(m['examples_per_sec']):>26} {'/'.join(map(str, eps)):>7} "
              f"{fmt(m['test_accuracy']['median'], 4):>9}")
    print()
    for r in res["ratios"]:
        print(f"ratio ferrodl / {SYSTEM_LABEL.get(r['denominator'], r['denominator'])}, "
              f"{MODEL_LABEL[r['model']]}: {rng(r['ratio'], 2)}x (per repetition: "
              f"{', '.join(f'{x:.2f}' for x in r['per_rep'])})")
    for g in res.get("goals", []):
        print(f"GOAL {MODEL_LABEL[g['model']]}: ferrodl / {g['against']} = {rng(g['ratio'], 2)}x "
              f"(goal >= {g['goal']}: {'met' if g['met'] else 'NOT met'}; faster peer per repetition: "
              f"{', '.join(g['faster_peer_per_rep'])})")
    mlp = [m for m in res["measurements"] if m["model"] == "mlp"]
    if mlp:
        print()
        print("MLP examples/s early vs late in the run (median of the windows of the first / last 3 "
              "timed epochs), and the share of Adam's state that is subnormal at the end:")
        for m in mlp:
            p = m["per_rep"][0]
            print(f"  {SYSTEM_LABEL.get(m['variant'], m['variant']):<44} early {rng(m['early_examples_per_sec'])}"
                  f"  late {rng(m['late_examples_per_sec'])}  (epochs {p['early_epochs']} / {p['late_epochs']}"
                  f" of rep 1); Adam state subnormal at the end: "
                  f"{rng(m['updater_state_subnormal_share_end'], 1, 100)} %")
    if res["dl4j_mmul_probe"]:
        print()
        print("DL4J diagnostic: one [64x784]x[784x500] mmul (the MLP's first layer), us, median over JVM runs:")
        for p in res["dl4j_mmul_probe"]:
            print(f"  {SYSTEM_LABEL.get(p['variant'], p['variant']):<44} {rng(p['mmul_64x784x500_us'], 0)}")
    if res["memory"]:
        print()
        print("Memory, MLP training JVM (MB; median (min–max) over repetitions): first epoch -> last epoch")
        for m in res["memory"]:
            f, l = m["first"], m["last"]
            print(f"  {SYSTEM_LABEL.get(m['variant'], m['variant']):<44} epoch {m['first_epoch']} -> "
                  f"{m['last_epoch']}: peak RSS (VmHWM) {rng(f['VmHWM_kB'], 0, 1 / 1024)} -> "
                  f"{rng(l['VmHWM_kB'], 0, 1 / 1024)}; RSS {rng(f['VmRSS_kB'], 0, 1 / 1024)} -> "
                  f"{rng(l['VmRSS_kB'], 0, 1 / 1024)} (anonymous {rng(l['RssAnon_kB'], 0, 1 / 1024)}, "
                  f"Java heap used {rng(l['javaHeapUsed_kB'], 0, 1 / 1024)} of "
                  f"{rng(l['javaHeapCommitted_kB'], 0, 1 / 1024)} committed)")
    j = res["jni"]
    if j:
        s = j["summary_over_reps"]
        print()
        print(f"ferrodl JNI overhead, MLP batch 64 (median (min–max) over {j['repetitions']} JVMs x "
              f"{j['rounds'] // max(1, j['repetitions'])} rounds):")
        print(f"  MultiLayerNetwork.fit step {rng(s['api_fit_us'])} us = engine + overhead "
              f"{rng(s['overhead_us'], 1)} us = {rng(s['overhead_fraction'], 2, 100)} % of the step")
        print(f"    JNI call (numParams) {rng(s['call_us'], 3)} us; batch copy into Rust "
              f"({j['copy_bytes']:,} bytes) {rng(s['copy_us'], 1)} us; Java wrapper {rng(s['wrapper_us'], 1)} us")
        print(f"    per round: overhead {rng(j['overhead_fraction_over_rounds'], 2, 100)} % of the step")
        print(f"  cross-check: median(api - raw NativeNetwork.fit) {rng(s['step_diff_us'], 1)} us, "
              f"null (two identical API networks) {rng(s['step_null_us'], 1)} us")
    if res["errors"]:
        print()
        print("ERRORS (details in results.json):")
        for e in res["errors"]:
            tail = [t for t in e.get("log_tail", []) if t.strip()]
            print(f"  {e['system']} {e['stage']}: exit {e['rc']}: {tail[-1] if tail else ''}")
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--results", required=True)
    a = ap.parse_args()
    env = read_env(os.path.join(a.out_dir, "env.txt"))
    runs = read_runs(a.out_dir)
    meas = throughput(runs)
    res = {
        "generated": env.get("finished"),
        "started": env.get("started"),
        "host": {
            "cpu_model": env.get("cpu_model"),
            "cores": int(env.get("cores", "0") or 0),
            "loadavg_start": env.get("loadavg_start"),
            "loadavg_end": env.get("loadavg_end"),
            "wall_s": int(env.get("wall_s", "0") or 0),
            "note": "2 shared cores; other work ran on the machine (see the load averages, also "
                    "recorded before every run in per_rep)",
        },
        "versions": versions(env, runs),
        "protocol": {
            "repetitions": int(env.get("reps", "0") or 0),
            "data": "spark-example/src/main/resources/mnist10k: the 7,996 training digits in one fixed "
                    "order (java.util.Random(12345) shuffle), 124 full minibatches of 64 per epoch "
                    "(the last 60 digits dropped), the same order every epoch; accuracy on the 2,004 "
                    "test digits after training",
            "timing": "untimed warm-up (MLP: epoch 1; CNN: the first 31 iterations), then windows of N "
                      "fit() calls (MLP 62 = half an epoch, CNN 31 = a quarter epoch), each fit() timed with "
                      "System.nanoTime(); a run's value is its median window. MLP: up to 20 epochs, CNN: up "
                      "to 4; a run stops after the first window that ends past "
                      f"{env.get('mlp_max_s')} s (MLP, at least 2 windows) / {env.get('cnn_max_s')} s (CNN, "
                      "at least 3 windows) of training, so slow configurations run fewer epochs "
                      "(per_rep.epochs, per_rep.iterations)",
            "order": "repetition by repetition; within one, each model's systems run back to back in "
                     "their own JVMs, the order reversed in every other repetition",
            "jax": "bench/jvm/jax/jax_bench.py: the same digits in the same order (java.util.Random "
                   "shuffle reproduced), the same warm-up/window/stop rules; a window is timed as a "
                   "whole (jitted steps dispatched asynchronously, block_until_ready at the end of the "
                   "window); memory lines are /proc/self/status of the Python process",
            "lstm": "the reference's character model (seeds 004): 2 recurrent layers of 200 units (tanh, "
                    "sigmoid gates; graves: GravesLSTM with peepholes, ferrodl/DL4J/JAX; lstm: LSTM "
                    "without, ferrodl/DL4J/JAX/PyTorch), RnnOutputLayer softmax + MCXENT over 77 "
                    "one-hot characters, RmsProp 0.1 (decay 0.95, eps 1e-8), l2 0.001 on the weights, "
                    "Xavier, truncated BPTT 50 forward and backward, float32; minibatch 32 sequences of "
                    f"{env.get('lstm_seq')} synthetic characters (CharData.java: each next character "
                    "is the previous + 1..3 mod 77, java.util.Random, the same for every system), 4 "
                    "minibatches cycled; untimed warm-up of one fit(), then windows of one fit() "
                    "(32 x length characters), the median window; a run stops after the first window "
                    f"ending past {env.get('lstm_max_s')} s once 3 are in. JAX "
                    "(bench/jvm/python/char_lstm_bench.py): the same cell written out (GravesLSTM's "
                    "peepholes included), input projection of a segment as one product, lax.scan over "
                    "the steps, one jitted function per 50-step segment (forward, backward, l2, "
                    "RmsProp), windows timed as a whole; PyTorch: nn.LSTM(num_layers=2) + nn.Linear, "
                    "torch.optim.RMSprop(lr 0.1, alpha 0.95, eps 1e-8, weight_decay 0.001 on the "
                    "weights), (h, c) detached between segments, torch.set_num_threads(cores). "
                    "test accuracy = next-character accuracy on a held-out minibatch (at most ~1/3 "
                    "for this text)",
            "networks": "MLP 784-500-100-10 ReLU, softmax + MCXENT, Adam 1e-3, WeightInit.RELU; CNN conv "
                        "5x5x20 identity, max-pool 2/2, conv 5x5x50 identity, max-pool 2/2, dense 500 ReLU, "
                        "softmax 10 + MCXENT, Adam 1e-3, WeightInit.XAVIER, setInputType(convolutionalFlat(28, "
                        "28, 1)); seed 12345; no regularization",
        },
        "measurements": meas,
        "ratios": ratios(meas),
        "goals": goals(meas),
        "memory": memory(runs),
        "jni": jni(runs),
        "dl4j_mmul_probe": probes(runs),
        "errors": errors(a.out_dir),
        "runs": [{"file": r["file"], **r["meta"], **{k: r["exit"][k] for k in ("rc", "wall_s", "loadavg_after")
                                                     if k in r.get("exit", {})}} for r in runs],
    }
    with open(a.results, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    print_summary(res)
    print(f"wrote {a.results}")


if __name__ == "__main__":
    main()
