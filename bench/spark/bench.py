"""The Spark-path benchmark (issue 15): SparkDl4jMultiLayer.fit examples/s against local
MultiLayerNetwork.fit on the same cores, in one application per Spark master, for
  local[2]   an embedded Spark in one JVM (plain `java -cp` with the pyspark distribution's jars)
  cluster    a standalone master and two one-core workers on 127.0.0.1 (bench/cluster/bench.py's
             Cluster), the bench submitted with spark-submit in client mode; the local rate is
             measured in the driver on the same machine, in the same run.
The Java side is bench/spark/src/org/ferrodl/bench/spark/SparkPathBench.java (it prints one
`BENCH {json}` line per epoch); run.sh builds it. Writes bench/spark/results.json (every epoch,
medians, ratios of medians, accuracies, load averages, versions) and prints a summary.

  python3 bench/spark/bench.py --modes local,cluster --rounds 5
"""

import argparse
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

def _cluster_module():
    """bench/cluster/bench.py (its Cluster class starts and stops the standalone cluster)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("cluster_bench", os.path.join(ROOT, "bench", "cluster", "bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


cluster_bench = _cluster_module()

EXAMPLE_JAR = os.path.join(ROOT, "spark-example", "target", "ferrodl-spark-example-0.1.0.jar")
BENCH_JAR = os.path.join(HERE, "target", "ferrodl-spark-bench.jar")
SPARK_HOME = os.path.join(ROOT, ".build", "spark-dist", "pyspark")
MAIN = "org.ferrodl.bench.spark.SparkPathBench"
TORCH_SCRIPT = os.path.join(HERE, "torch_distributor_tta.py")
DATA_DIR = os.path.join(ROOT, "spark-example", "src", "main", "resources", "mnist10k")
# the module openings Spark's launcher passes on Java 17+ (the Makefile's SPARK_JAVA_OPTS)
JAVA_OPENS = ["-XX:+IgnoreUnrecognizedVMOptions"] + [
    f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
        "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
        "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "sun.nio.ch", "sun.nio.cs",
        "sun.security.action", "sun.util.calendar")] + [
    "-Djdk.reflect.useDirectMethodHandle=false", "-Dio.netty.tryReflectionSetAccessible=true"]
# (spark, local baseline, label) pairs whose ratio is reported
TTA_TARGET = 0.95
RATIOS = [("paramavg-32", "local-32", "parameter averaging, batch 32, averaging frequency 10"),
          ("shared-16", "local-16", "gradient sharing, batch 16"),
          ("shared-32", "local-32", "gradient sharing, batch 32"),
          ("sharedts-16", "local-16", "gradient sharing, batch 16, recommended TargetSparsity 2.5e-3"),
          ("sharedts-32", "local-32", "gradient sharing, batch 32, recommended TargetSparsity 2.5e-3"),
          ("paramavgfresh-32", "local-32", "parameter averaging, batch 32, a new unpersisted RDD per epoch"),
          ("sharedfresh-16", "local-16", "gradient sharing, batch 16, a new unpersisted RDD per epoch")]


def log(msg):
    print(f"[bench/spark {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg():
    return [float(x) for x in open("/proc/loadavg").read().split()[:3]]


def parse(text):
    epochs, infos, breakdowns = [], [], []
    for line in text.splitlines():
        for tag, into in (("BENCH ", epochs), ("INFO ", infos), ("BREAKDOWN ", breakdowns), ("TTA ", infos)):
            if line.startswith(tag):
                into.append(json.loads(line[len(tag):]))
    return epochs, infos, breakdowns


def summarize(epochs, infos, breakdowns):
    timed = {}
    for e in epochs:
        if e["kind"] == "timed":
            timed.setdefault(e["config"], []).append(e)
    per = {}
    for c, es in timed.items():
        v = [e["examples_per_s"] for e in es]
        per[c] = {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v),
                  "seconds_median": statistics.median(e["seconds"] for e in es)}
    # ratio per round (the two epochs of one round ran minutes apart at most) and of the medians
    ratios = []
    for spark, local, label in RATIOS:
        if spark in timed and local in timed:
            by_round = {e["round"]: e["examples_per_s"] for e in timed[local]}
            rr = [e["examples_per_s"] / by_round[e["round"]] for e in timed[spark] if e["round"] in by_round]
            ratios.append({"spark": spark, "local": local, "label": label,
                           "ratio_of_medians": per[spark]["median"] / per[local]["median"],
                           "per_round": rr, "per_round_min": min(rr), "per_round_max": max(rr)})
    acc = {i["config"]: {"test_accuracy": i["test_accuracy"], "epochs": i["epochs"]}
           for i in infos if i.get("info") == "accuracy"}
    start = next((i for i in infos if i.get("info") == "start"), {})
    return {"start": start, "throughput": per, "ratios": ratios, "accuracy": acc, "breakdown": breakdowns,
            "time_to_accuracy": time_to_accuracy(infos),
            "torch_distributor": [i for i in infos if i.get("info") == "torch-distributor"]}


def time_to_accuracy(infos):
    """Per configuration: every epoch's point, and the fit seconds of the first at the target (goal 3);
    per Spark configuration the ratio to local training at the same batch."""
    pts = {}
    for i in infos:
        if "fit_seconds" in i:
            pts.setdefault(i["config"], []).append(i)
    out = {"target": TTA_TARGET, "configs": {}, "ratios": []}
    for c, ps in pts.items():
        hit = next((p for p in ps if p["test_accuracy"] >= TTA_TARGET), None)
        out["configs"][c] = {"points": ps, "seconds": hit["fit_seconds"] if hit else None,
                             "epochs": hit["epoch"] if hit else None,
                             "best": max(p["test_accuracy"] for p in ps),
                             "bytes_per_worker_iteration": (hit or ps[-1]).get("bytes_per_worker_iteration"),
                             "parameters": (hit or ps[-1]).get("parameters")}
    for c, v in out["configs"].items():
        local = out["configs"].get("local-" + c.split("-")[1])
        if not c.startswith("local") and local and local["seconds"] and v["seconds"]:
            out["ratios"].append({"spark": c, "local": "local-" + c.split("-")[1],
                                  "ratio": v["seconds"] / local["seconds"]})
    return out


def run_local(args, out_dir):
    cp = ":".join([BENCH_JAR, EXAMPLE_JAR, os.path.join(SPARK_HOME, "jars", "*")])
    cmd = ["java", "-Xmx3g", *JAVA_OPENS, "-Dspark.master=local[2]", *[f"-D{c}" for c in args.conf], "-cp", cp, MAIN,
           "--rounds", str(args.rounds), "--configs", args.configs] + (["--breakdown"] if args.breakdown else []) \
        + (["--tta", str(args.tta)] if args.tta and "local" in args.tta_modes.split(",") else [])
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    path = os.path.join(out_dir, "local.log")
    log(f"local[2]: {' '.join(cmd[-6:])} (log {path})")
    t0 = time.time()
    with open(path, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, timeout=args.timeout).returncode
    text = open(path, errors="replace").read()
    return rc, text, time.time() - t0


def run_cluster(args, out_dir):
    tmp = tempfile.mkdtemp(prefix="ferrodl-bench-spark.")
    cluster = cluster_bench.Cluster(SPARK_HOME, tmp, "spark-path").start()
    try:
        path = os.path.join(out_dir, "cluster.log")
        app = ["--class", MAIN, "--jars", BENCH_JAR, EXAMPLE_JAR, "--rounds", str(args.rounds),
               "--configs", args.configs] + (["--breakdown"] if args.breakdown else []) \
            + (["--tta", str(args.tta)] if args.tta and "cluster" in args.tta_modes.split(",") else [])
        log(f"cluster {cluster.url}: spark-submit {' '.join(app[-5:])} (log {path})")
        status, text, wall = cluster.submit(
            app, path, args.timeout,
            conf_extra=("spark.ferrodl.relay.allowWithoutSparkAuthentication=true", *args.conf))
        if args.torch_python and args.tta and "cluster" in args.tta_modes.split(","):
            text += run_torch(cluster, args, out_dir)
        return (0 if status == 0 else 1), text, wall
    finally:
        cluster.stop()


TORCH_ERRORS = []  # a failed TorchDistributor submission (its row is optional: the part does not fail)


def run_torch(cluster, args, out_dir):
    """Spark's TorchDistributor (PyTorch DDP) on the same cluster, after the ferrodl application:
    torch_distributor_tta.py's TTA / INFO lines (config torch-B), or nothing if it failed."""
    path = os.path.join(out_dir, "cluster-torch.log")
    app = [TORCH_SCRIPT, "--data-dir", DATA_DIR, "--batches", args.torch_batches, "--tta", str(args.tta)]
    log(f"cluster {cluster.url}: TorchDistributor, spark-submit {' '.join(app[-4:])} (log {path})")
    status, text, wall = cluster.submit(app, path, args.timeout, python=args.torch_python,
                                        conf_extra=("spark.executorEnv.OMP_NUM_THREADS=1",))
    if status != 0:
        TORCH_ERRORS.append({"status": str(status), "wall_s": wall, "log": path,
                             "error_tail": text.splitlines()[-40:]})
        log(f"TorchDistributor FAILED (status {status}); see {path}")
        return ""
    return "\n" + text


def versions():
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
    cpu = "unknown"
    for line in out(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            cpu = line.split(":", 1)[1].strip()
    return {"git_head": out(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]),
            "uncommitted_engine_changes": bool(out(["git", "-C", ROOT, "status", "--porcelain", "--", "src",
                                                    "native", "jvm-bindings"])),
            "java": subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0],
            "cpu_model": cpu, "cpus": os.cpu_count()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="local,cluster")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--configs", default="local-32,local-16,paramavg-32,shared-16,shared-32")
    ap.add_argument("--breakdown", action="store_true", default=True)
    ap.add_argument("--no-breakdown", dest="breakdown", action="store_false")
    ap.add_argument("--tta", type=int, default=0,
                    help="time to 0.95 test accuracy: at most this many epochs per configuration (0: off)")
    ap.add_argument("--tta-modes", default="cluster", help="the modes that measure time to accuracy (goal 3: the cluster)")
    ap.add_argument("--torch-python", default="",
                    help="a python with torch, numpy, pandas and pyarrow: Spark's TorchDistributor rows in the "
                         "cluster's time to accuracy ('': none)")
    ap.add_argument("--torch-batches", default="32", help="TorchDistributor configurations torch-B")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per application")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting for the ferrodl application (both modes; for A/B runs)")
    ap.add_argument("--out", default=os.path.join(HERE, "results.json"))
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, cluster_bench.on_signal)  # the cluster is stopped on TERM/INT too
    signal.signal(signal.SIGINT, cluster_bench.on_signal)
    out_dir = os.path.join(ROOT, ".build", "bench-logs", "spark")
    os.makedirs(out_dir, exist_ok=True)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
               "rounds": args.rounds, "configs": args.configs.split(","), "conf": args.conf, "versions": versions(),
               "load_start": loadavg(), "modes": {}}
    failed = False
    try:
        for mode in args.modes.split(","):
            l0 = loadavg()
            rc, text, wall = (run_local if mode == "local" else run_cluster)(args, out_dir)
            epochs, infos, breakdowns = parse(text)
            m = {"rc": rc, "wall_s": wall, "load_start": l0, "load_end": loadavg(), "epochs": epochs,
                 **summarize(epochs, infos, breakdowns)}
            if rc != 0 or not m["ratios"]:
                failed = True
                m["error_tail"] = text.splitlines()[-40:]
                log(f"{mode}: FAILED (rc {rc}); tail:\n" + "\n".join(m["error_tail"]))
            if mode == "cluster" and args.torch_python and args.tta:
                m["torch_distributor_errors"] = list(TORCH_ERRORS)
            results["modes"][mode] = m
            for r in m["ratios"]:
                log(f"{mode}: {r['spark']} / {r['local']} = {r['ratio_of_medians']:.3f} "
                    f"({per_fmt(m['throughput'][r['spark']])} vs {per_fmt(m['throughput'][r['local']])} examples/s)")
            for c, v in m["time_to_accuracy"]["configs"].items():
                log(f"{mode}: {c} time to {TTA_TARGET}: {v['seconds']} s ({v['epochs']} epochs; best {v['best']:.4f}"
                    + (f"; {v['bytes_per_worker_iteration']:.0f} bytes per worker iteration"
                       if v.get("bytes_per_worker_iteration") else "") + ")")
    finally:
        cluster_bench.cleanup()
        results["load_end"] = loadavg()
        json.dump(results, open(args.out, "w"), indent=1)
        log(f"wrote {args.out}")
    return 1 if failed else 0


def per_fmt(s):
    return f"{s['median']:,.0f} ({s['min']:,.0f}-{s['max']:,.0f})"


if __name__ == "__main__":
    sys.exit(main())
