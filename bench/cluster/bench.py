"""Distributed time-to-accuracy on the MNIST digits: ferrodl, Deeplearning4j and Spark MLlib, each on a
real Spark standalone cluster (a master and two one-core workers on 127.0.0.1) started here.

Run by bench/cluster/run.sh (which installs the Spark distributions, builds the jars and a venv with
matplotlib); it can also be run by hand:
  .build/bench-cluster-venv/bin/python bench/cluster/bench.py --systems ferrodl-paramavg --repeats 1

Every process started here (masters, workers and their executors, spark-submit and its driver) runs in
its own process group and is killed, group by group, when its part ends, on failure and on SIGINT or
SIGTERM too. Results: bench/cluster/results.json and bench/cluster/time_to_accuracy.png.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA_DIR = os.path.join(ROOT, "spark-example", "src", "main", "resources", "mnist10k")
FERRODL_JAR = os.path.join(ROOT, "spark-example", "target", "ferrodl-spark-example-0.1.0.jar")
DL4J_JAR = os.path.join(HERE, "dl4j-spark", "target", "dl4j-spark-bench.jar")
SPARK4_HOME = os.path.join(ROOT, ".build", "spark-dist", "pyspark")
SPARK35_HOME = os.path.join(ROOT, ".build", "bench-spark35", "pyspark")
SYSTEMS = ["ferrodl-paramavg", "ferrodl-shared", "dl4j-paramavg", "dl4j-shared", "mllib-mlp"]
DL4J_PORT_ENV = "DL4J_BENCH_VOID_PORT"
# DL4J 1.0.0-M2's Aeron transport sets aeron.client.liveness.timeout to 30 s while the Aeron it ships
# (1.32.0) keeps its 15 s default publication unblock timeout, and Aeron's media driver refuses to start
# unless the latter is longer ("publicationUnblockTimeoutNs=15000000000 <= clientLivenessTimeoutNs=
# 30000000000"): a user sets Aeron's own system property on the driver and the executors.
AERON_FIX = "-Daeron.publication.unblock.timeout=60000000000"

# the cluster every system runs on (the same for all): two workers, one core each
WORKER_CORES = 1
WORKER_MEMORY = "2g"
EXECUTOR_MEMORY = "1g"
DRIVER_MEMORY = "1g"

LIVE = []  # process groups alive now (pgids), killed by cleanup()


def log(msg):
    print(f"[bench-cluster {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def kill_groups(pgids, grace=15.0):
    """TERM whole process groups, wait up to grace seconds for all of them, then KILL what is left."""
    alive = []
    for g in pgids:
        try:
            os.killpg(g, signal.SIGTERM)
            alive.append(g)
        except ProcessLookupError:
            pass
    deadline = time.time() + grace
    while alive and time.time() < deadline:
        time.sleep(0.2)
        still = []
        for g in alive:
            try:
                os.killpg(g, 0)
                still.append(g)
            except ProcessLookupError:
                pass
        alive = still
    for g in alive:
        try:
            os.killpg(g, signal.SIGKILL)
        except ProcessLookupError:
            pass


def cleanup():
    groups = list(LIVE)
    LIVE.clear()
    kill_groups(groups)


def on_signal(signum, _frame):
    log(f"signal {signum}: stopping everything started here")
    cleanup()
    sys.exit(128 + signum)


def spawn(cmd, log_path, env=None):
    """Starts cmd in a new session (its own process group), output to log_path."""
    out = open(log_path, "wb")
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         env=env, start_new_session=True)
    out.close()
    LIVE.append(p.pid)
    return p


def reap(*procs):
    for p in procs:
        if p.pid in LIVE:
            LIVE.remove(p.pid)
    kill_groups([p.pid for p in procs])
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def free_udp_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def base_env(spark_home):
    env = dict(os.environ)
    for k in ("SPARK_CONF_DIR", "SPARK_MASTER_HOST", "SPARK_WORKER_DIR", "PYSPARK_SUBMIT_ARGS"):
        env.pop(k, None)
    env["SPARK_HOME"] = spark_home
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["SPARK_DAEMON_MEMORY"] = "512m"
    return env


class Cluster:
    """A standalone master and two workers of one Spark distribution, on 127.0.0.1."""

    def __init__(self, spark_home, tmp, name, worker_env=None):
        self.spark_home = spark_home
        self.dir = os.path.join(tmp, name)
        self.name = name
        self.worker_env = worker_env or [{}, {}]
        self.procs = []
        self.url = None

    def _wait_for(self, path, text, proc_list, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with open(path, "r", errors="replace") as f:
                    if text in f.read():
                        return
            except FileNotFoundError:
                pass
            for p in proc_list:
                if p.poll() is not None:
                    raise RuntimeError(f"{what}: a Spark daemon exited (status {p.returncode}); see {path}")
            time.sleep(0.5)
        raise RuntimeError(f"{what}: not ready within {timeout} s; see {path}")

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        port, ui, w1ui, w2ui = free_ports(4)
        self.url = f"spark://127.0.0.1:{port}"
        cls = os.path.join(self.spark_home, "bin", "spark-class")
        env = base_env(self.spark_home)
        master_log = os.path.join(self.dir, "master.log")
        self.procs.append(spawn([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                 "--port", str(port), "--webui-port", str(ui)], master_log, env))
        self._wait_for(master_log, "Starting Spark master at", self.procs, 90, f"{self.name} master")
        for i, wui in enumerate((w1ui, w2ui), 1):
            work = os.path.join(self.dir, f"work-{i}")
            os.makedirs(work, exist_ok=True)
            wenv = dict(env)
            wenv.update(self.worker_env[i - 1])
            self.procs.append(spawn([cls, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                     "--cores", str(WORKER_CORES), "--memory", WORKER_MEMORY,
                                     "--webui-port", str(wui), "--work-dir", work, self.url],
                                    os.path.join(self.dir, f"worker-{i}.log"), wenv))
        for i in (1, 2):
            self._wait_for(os.path.join(self.dir, f"worker-{i}.log"), "Successfully registered with master",
                           self.procs, 90, f"{self.name} worker {i}")
        log(f"{self.name}: master {self.url} and 2 workers up ({self.spark_home})")
        return self

    def stop(self):
        reap(*self.procs)
        self.procs = []
        log(f"{self.name}: stopped")

    def submit(self, app_args, log_path, timeout, env_extra=None, conf_extra=(), python=None):
        """spark-submit in client mode; returns (status, output text, wall seconds)."""
        env = base_env(self.spark_home)
        if env_extra:
            env.update(env_extra)
        if python:
            env["PYSPARK_PYTHON"] = python
            env["PYSPARK_DRIVER_PYTHON"] = python
        cmd = [os.path.join(self.spark_home, "bin", "spark-submit"), "--master", self.url,
               "--deploy-mode", "client", "--driver-memory", DRIVER_MEMORY, "--executor-memory", EXECUTOR_MEMORY,
               "--conf", "spark.ui.enabled=false", "--conf", "spark.cores.max=2",
               "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0",
               "--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=60s",
               "--conf", "spark.driver.host=127.0.0.1"]
        for c in conf_extra:
            cmd += ["--conf", c]
        cmd += app_args
        t0 = time.time()
        p = spawn(cmd, log_path, env)
        try:
            status = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = "timeout"
        wall = time.time() - t0
        reap(p)  # the driver and anything it left behind
        with open(log_path, "r", errors="replace") as f:
            text = f.read()
        return status, text, wall


# ---------------------------------------------------------------------------------------------------
# parsing


def floats(line, *names):
    out = []
    for n in names:
        m = re.search(r"(?:^|\s)" + re.escape(n) + r"=([-0-9.eE+naif]+)", line)
        out.append(float(m.group(1)) if m else None)
    return out


def error_excerpt(text, lines=25):
    keep = [l for l in text.splitlines()
            if re.search(r"Exception|Error|error:|Caused by|FAILED|refused|Killed", l)]
    return "\n".join(keep[:lines]) or "\n".join(text.splitlines()[-lines:])


def time_to(points, target):
    for pt in sorted(points, key=lambda p: p["seconds"]):
        if pt["accuracy"] >= target:
            return pt["seconds"]
    return None


def best_within(points, budget):
    inside = [p for p in points if p["seconds"] <= budget]
    if not inside:
        return None, None
    b = max(inside, key=lambda p: (p["accuracy"], -p["seconds"]))
    return b["accuracy"], b["seconds"]


# ---------------------------------------------------------------------------------------------------
# the systems


def ferrodl_run(cluster, tm, ladder, args, tmp, rep):
    """One repeat of ferrodl: the example prints no per-epoch test accuracy, so each point is its own
    spark-submit with --epochs k (k up the ladder), timed by the example's per-epoch seconds."""
    points, submissions, sharing = [], [], []
    for i, k in enumerate(ladder):
        log_path = os.path.join(tmp, f"ferrodl-{tm}-r{rep}-e{k}.log")
        load0 = os.getloadavg()[0]
        status, text, wall = cluster.submit(
            [FERRODL_JAR, "--workers", "2", "--epochs", str(k), "--batch-size", "32",
             "--training-master", tm, "--data-dir", DATA_DIR, "--seed", str(args.seed)],
            log_path, args.budget + 300, conf_extra=["spark.executorEnv.RAYON_NUM_THREADS=1",
                                                      # the bench cluster runs without Spark authentication,
                                                      # like the DL4J and MLlib runs it is compared with
                                                      "spark.ferrodl.relay.allowWithoutSparkAuthentication=true"])
        epoch_secs = [floats(l, "seconds")[0] for l in text.splitlines() if re.match(r"^epoch \d+/\d+ ", l)]
        final = [l for l in text.splitlines() if l.startswith("FINAL test_accuracy=")]
        shar = [l for l in text.splitlines() if l.startswith("SHARING ")]
        sub = {"epochs": k, "status": status, "submit_wall_seconds": round(wall, 2),
               "load_1min_before": round(load0, 2), "load_1min_after": round(os.getloadavg()[0], 2),
               "epoch_seconds": epoch_secs}
        if status != 0 or not final:
            sub["error"] = error_excerpt(text)
            submissions.append(sub)
            log(f"ferrodl {tm} epochs={k}: FAILED (status {status})")
            return points, submissions, sharing, sub["error"]
        acc, fsec = floats(final[-1], "test_accuracy", "seconds")
        train_sec = sum(epoch_secs)
        sub.update({"final_line": final[-1], "final_seconds_incl_eval": fsec})
        if shar:
            sub["sharing_line"] = shar[-1]
            b, d, it = floats(shar[-1], "bytes_per_worker_iteration", "dense_fp32_bytes", "worker_iterations")
            sharing.append({"epochs": k, "bytes_per_worker_iteration": b, "dense_fp32_bytes": d,
                            "worker_iterations": it})
        submissions.append(sub)
        points.append({"epochs": k, "seconds": round(train_sec, 2), "accuracy": acc})
        log(f"ferrodl {tm} epochs={k}: accuracy {acc:.4f} after {train_sec:.1f} s of training "
            f"(submit {wall:.0f} s, load {load0:.1f})")
        if acc >= args.target:
            break
        if i + 1 < len(ladder) and train_sec * ladder[i + 1] / k > args.budget:
            log(f"ferrodl {tm}: epochs={ladder[i + 1]} would overrun the {args.budget:.0f} s budget; ladder ends")
            break
    return points, submissions, sharing, None


def dl4j_submit(cluster, tm, args, log_path, driver_port, rdd_approach="direct", aeron_fix=True, epochs=None,
                timeout=None):
    app = [args.dl4j_jar, "--master-kind", tm, "--data-dir", DATA_DIR, "--epochs", str(epochs or args.max_epochs),
           "--batch-size", "32", "--averaging-frequency", str(args.dl4j_averaging_frequency),
           "--workers", "2", "--budget-seconds", str(args.budget), "--stop-accuracy", str(args.target),
           "--seed", str(args.seed), "--controller", "127.0.0.1", "--port-env", DL4J_PORT_ENV,
           "--rdd-approach", rdd_approach, "--workers-per-node", str(args.dl4j_workers_per_node)]
    conf = ["spark.executorEnv.OMP_NUM_THREADS=1"]
    if tm == "shared" and aeron_fix:
        conf += [f"spark.driver.extraJavaOptions={AERON_FIX}", f"spark.executor.extraJavaOptions={AERON_FIX}"]
    return cluster.submit(["--class", "org.ferrodl.bench.cluster.Dl4jSparkMnist"] + app, log_path,
                          timeout or args.budget + 300, env_extra={DL4J_PORT_ENV: str(driver_port)},
                          conf_extra=conf)


def dl4j_default_probes(cluster, args, tmp, driver_port):
    """DL4J exactly as configured by default (Export RDD approach; no Aeron property): the errors."""
    out = {}
    for name, tm, approach, fix in (("paramavg_export_rdd_approach", "paramavg", "export", True),
                                    ("shared_export_rdd_approach", "shared", "export", True),
                                    ("shared_without_aeron_property", "shared", "direct", False)):
        status, text, wall = dl4j_submit(cluster, tm, args, os.path.join(tmp, f"dl4j-probe-{name}.log"),
                                         driver_port, rdd_approach=approach, aeron_fix=fix, epochs=1, timeout=240)
        lines = text.splitlines()
        # the application's own failure; exceptions of Spark's shutdown may come before or after it
        main_exc = next((l for l in lines if l.startswith('Exception in thread "main"')), None)
        first = next((l for l in lines if "Exception" in l), None)
        ok = any(l.startswith("EPOCH ") for l in lines)
        out[name] = {"status": status, "trained_an_epoch": ok, "main_thread_exception": main_exc,
                     "first_exception_line": first, "submit_wall_seconds": round(wall, 1)}
        log(f"dl4j probe {name}: status {status}, " + (main_exc or first or "no exception"))
    return out


def dl4j_run(cluster, tm, args, tmp, rep, driver_port):
    log_path = os.path.join(tmp, f"dl4j-{tm}-r{rep}.log")
    load0 = os.getloadavg()[0]
    status, text, wall = dl4j_submit(cluster, tm, args, log_path, driver_port)
    points = []
    for l in text.splitlines():
        if l.startswith("EPOCH "):
            n = int(l.split()[1])
            acc, sec, ev = floats(l, "accuracy", "seconds", "eval_seconds")
            points.append({"epochs": n, "seconds": sec, "accuracy": acc, "eval_seconds": ev})
    sub = {"status": status, "submit_wall_seconds": round(wall, 2), "load_1min_before": round(load0, 2),
           "load_1min_after": round(os.getloadavg()[0], 2),
           "header": next((l for l in text.splitlines() if l.startswith("DL4J MNIST")), None)}
    err = None
    if status != 0 or not points:
        err = error_excerpt(text)
        sub["error"] = err
    log(f"dl4j {tm}: status {status}, {len(points)} epochs, "
        + (f"last accuracy {points[-1]['accuracy']:.4f} at {points[-1]['seconds']:.1f} s" if points else "no epoch"))
    return points, [sub], err


def mllib_run(cluster, args, tmp, rep, python):
    log_path = os.path.join(tmp, f"mllib-r{rep}.log")
    load0 = os.getloadavg()[0]
    status, text, wall = cluster.submit(
        [os.path.join(HERE, "mllib_mlp.py"), "--data-dir", DATA_DIR, "--work-dir", os.path.join(tmp, "libsvm"),
         "--max-iters", args.mllib_max_iters, "--budget-seconds", str(args.budget),
         "--stop-accuracy", str(args.target), "--seed", str(args.seed), "--partitions", "2"],
        log_path, args.budget * 2 + 300, python=python)
    points = []
    for l in text.splitlines():
        if l.startswith("POINT "):
            k, it, acc, sec, ev = floats(l, "max_iter", "iterations", "accuracy", "seconds", "eval_seconds")
            points.append({"max_iter": int(k), "iterations": int(it), "seconds": sec, "accuracy": acc,
                           "eval_seconds": ev})
    sub = {"status": status, "submit_wall_seconds": round(wall, 2), "load_1min_before": round(load0, 2),
           "load_1min_after": round(os.getloadavg()[0], 2),
           "header": next((l for l in text.splitlines() if l.startswith("MLLIB ")), None),
           "stop": next((l for l in text.splitlines() if l.startswith(("STOP ", "CONVERGED "))), None)}
    err = None
    if status != 0 or not points:
        err = error_excerpt(text)
        sub["error"] = err
    log(f"mllib: status {status}, {len(points)} fits"
        + (f", last accuracy {points[-1]['accuracy']:.4f} in {points[-1]['seconds']:.1f} s" if points else ""))
    return points, [sub], err


# ---------------------------------------------------------------------------------------------------


def versions(python):
    v = {"python": platform.python_version(), "java": None}
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
        v["java"] = out.splitlines()[0] if out else None
    except OSError:
        pass
    for name, home in (("spark_for_ferrodl_and_mllib", SPARK4_HOME), ("spark_for_dl4j", SPARK35_HOME)):
        jars = os.listdir(os.path.join(home, "jars")) if os.path.isdir(os.path.join(home, "jars")) else []
        core = [j for j in jars if j.startswith("spark-core_")]
        v[name] = core[0][:-4] if core else None
    try:
        v["ferrodl_git_head"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                               capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "native", "jvm-bindings",
                                "spark-example", "Cargo.toml", "Cargo.lock"], capture_output=True, text=True).stdout
        v["ferrodl_uncommitted_engine_changes"] = bool(dirty.strip())
        v["ferrodl_jar_built"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(FERRODL_JAR)))
    except (OSError, subprocess.SubprocessError):
        pass
    for key, name in (("dl4j_jar_contents", "dl4j-versions.txt"), ("dl4j_maven_resolution", "dl4j-resolution.txt")):
        path = os.path.join(HERE, "dl4j-spark", "target", name)
        if os.path.exists(path):
            with open(path) as f:
                v[key] = [l.strip() for l in f if l.strip()]
    return v


def system_config(name, args):
    common = {"cluster": f"Spark standalone, master + 2 workers on 127.0.0.1, {WORKER_CORES} core and "
                         f"{WORKER_MEMORY} each; executor memory {EXECUTOR_MEMORY}, driver memory {DRIVER_MEMORY}, "
                         f"spark.cores.max=2, client deploy mode",
              "data": "mnist10k: 7,996 training and 2,004 test digits (spark-example/src/main/resources/mnist10k), "
                      "pixels / 255",
              "clock": "training wall-clock seconds measured by the application: Spark start-up, data loading "
                       "and test evaluation excluded (end-to-end spark-submit times are kept per submission)"}
    net = ("MLP 784-500 ReLU, 500-100 ReLU, 100-10 softmax + MCXENT; Adam(1e-3), WeightInit.RELU, l2 1e-4, "
           "seed 12345; batch 32 per worker; a fresh shuffle per epoch, minibatches built on the driver")
    if name.startswith("ferrodl"):
        tm = name.split("-")[1]
        c = {"system": "ferrodl", "spark": "pyspark==4.2.0 distribution (.build/spark-dist)",
             "network": net, "command": f"spark-submit ferrodl-spark-example-0.1.0.jar --workers 2 --batch-size 32 "
                                        f"--training-master {tm} --epochs K --data-dir mnist10k",
             "executor_env": "RAYON_NUM_THREADS=1 (one engine thread per one-core executor)",
             "points": "the example prints test accuracy only at the end (FINAL line), so each point is a "
                       "separate spark-submit with --epochs K for K in " + (args.paramavg_ladder if tm == "paramavg"
                                                                              else args.shared_ladder)
                       + "; seconds = the sum of its per-epoch 'seconds=' lines"}
        if tm == "paramavg":
            c["training_master"] = ("ParameterAveragingTrainingMaster(workers=2, 32).batchSizePerWorker(32)"
                                    ".averagingFrequency(10).workerPrefetchNumBatches(2).aggregationDepth(2)"
                                    ".saveUpdater(true) (the example's defaults)")
        else:
            c["training_master"] = ("SharedTrainingMaster.Builder(32).thresholdAlgorithm(AdaptiveThresholdAlgorithm())"
                                    ".batchSizePerWorker(32).workersPerNode(1).workerPrefetchNumBatches(2) "
                                    "(the example's defaults); wire bytes from its SHARING line")
    elif name.startswith("dl4j"):
        tm = name.split("-")[1]
        c = {"system": "Deeplearning4j", "spark": "pyspark==3.5.9 distribution (.build/bench-spark35), Scala 2.12",
             "network": net, "command": "spark-submit --class org.ferrodl.bench.cluster.Dl4jSparkMnist "
                                        "bench/cluster/dl4j-spark/target/dl4j-spark-bench.jar --master-kind " + tm,
             "executor_env": "OMP_NUM_THREADS=1 (one native thread per one-core executor)",
             "points": "test accuracy after every epoch (SparkDl4jMultiLayer.evaluate, outside the clock)",
             "rdd_training_approach": "Direct (DL4J's default, Export, is refused on a standalone cluster whose "
                                      "default file system is local; the refusal is recorded under "
                                      "dl4j_default_configuration_probes)"}
        if tm == "paramavg":
            c["training_master"] = (f"ParameterAveragingTrainingMaster.Builder(32).batchSizePerWorker(32)"
                                    f".averagingFrequency({args.dl4j_averaging_frequency}).workerPrefetchNumBatches(2)"
                                    f".rddTrainingApproach(Direct).rngSeed(12345)")
        else:
            c["training_master"] = ("SharedTrainingMaster.Builder(VoidConfiguration(controllerAddress=127.0.0.1, "
                                    "portSupplier=EnvironmentVarPortSupplier(" + DL4J_PORT_ENV + ")), 32)"
                                    ".batchSizePerWorker(32).workersPerNode(1).workerPrefetchNumBatches(2)"
                                    ".rddTrainingApproach(Direct).rngSeed(12345); threshold algorithm: the default "
                                    "(AdaptiveThresholdAlgorithm)")
            c["jvm_options"] = AERON_FIX + " on the driver and the executors (Aeron refuses DL4J M2's timeouts without it)"
            c["transport"] = ("DL4J's Aeron UDP transport; driver and both executors share 127.0.0.1, so each gets "
                              "its own UDP port through the environment variable " + DL4J_PORT_ENV +
                              " (set for spark-submit and, differently, for each Spark worker daemon)")
    else:
        c = {"system": "Spark MLlib", "spark": "pyspark==4.2.0 distribution (.build/spark-dist)",
             "network": "MultilayerPerceptronClassifier(layers=[784,500,100,10], solver='l-bfgs' (default), "
                        "blockSize=128 (default), tol=1e-6 (default), seed=12345): sigmoid hidden layers and "
                        "softmax output are fixed in MLlib (no ReLU, no Adam, no minibatch SGD), full-batch L-BFGS",
             "command": "spark-submit bench/cluster/mllib_mlp.py (PySpark driver; data read from the IDX files "
                        "with Python, written as LIBSVM, loaded by Spark's libsvm source, 2 partitions, cached)",
             "points": "a separate fit per maxIter in " + args.mllib_max_iters + " (same seed), each timed by "
                       "itself; accuracy by MulticlassClassificationEvaluator on the test digits"}
    c.update(common)
    return c


def summarize(name, runs, args):
    ok = [r for r in runs if r["points"]]
    tt = [r["time_to_target_seconds"] for r in ok if r["time_to_target_seconds"] is not None]
    s = {"runs_completed": len(ok), "runs_failed": len(runs) - len(ok),
         "time_to_target_seconds": tt,
         "reached_target_in": f"{len(tt)} of {len(runs)} runs",
         "best_accuracy_within_budget": [r["best_accuracy_within_budget"] for r in ok]}
    if tt:
        s["median_time_to_target_seconds"] = sorted(tt)[len(tt) // 2] if len(tt) % 2 else \
            (sorted(tt)[len(tt) // 2 - 1] + sorted(tt)[len(tt) // 2]) / 2
    bytes_ = [x["bytes_per_worker_iteration"] for r in ok for x in r.get("sharing", [])]
    if bytes_:
        s["bytes_per_worker_iteration"] = bytes_
    return s


def plot(results, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colors = {"ferrodl-paramavg": "#1f77b4", "ferrodl-shared": "#17becf", "dl4j-paramavg": "#d62728",
              "dl4j-shared": "#ff7f0e", "mllib-mlp": "#2ca02c"}
    fig, ax = plt.subplots(figsize=(10, 6), dpi=110)
    for name, sysres in results["systems"].items():
        first = True
        for r in sysres["runs"]:
            # in training order: epochs, or maxIter for MLlib (whose points, like ferrodl's, are separate
            # fits, so a later point can have taken less time than an earlier one)
            pts = sorted(r["points"], key=lambda p: p.get("epochs", p.get("max_iter", 0)))
            if not pts:
                continue
            separate = not name.startswith("dl4j")
            ax.plot([p["seconds"] for p in pts], [p["accuracy"] for p in pts], marker="s" if separate else "o",
                    ms=4, lw=1.3, ls="--" if separate else "-", color=colors.get(name), alpha=0.85,
                    label=(name + (" (per-epoch evaluation)" if not separate else " (each point a separate fit)"
                                   if name.startswith("mllib") else " (each point a separate spark-submit)"))
                    if first else None)
            first = False
        if first:
            ax.plot([], [], color=colors.get(name), label=f"{name} (no result: see results.json)")
    ax.axhline(results["target_accuracy"], color="grey", ls="--", lw=1)
    ax.text(1, results["target_accuracy"] + 0.002, f"target {results['target_accuracy']}", color="grey", fontsize=8)
    ax.set_xlabel("training wall-clock seconds (Spark start-up, data loading and evaluation excluded)")
    ax.set_ylabel("test accuracy (2,004 MNIST digits)")
    ax.set_ylim(0.70, 1.0)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    load = results["machine"].get("load_1_5_15_at_start", [None])[0]
    ax.set_title("MNIST MLP 784-500-100-10 on a 2-worker Spark standalone cluster (127.0.0.1, 1 core each)\n"
                 f"{results['date']}, {results['machine']['cpus']} CPUs shared with other work (1-min load "
                 f"{load} at start); one line per run", fontsize=10)
    ax.legend(loc="lower right", fontsize=9)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def probe_only(args, tmp):
    with open(args.out) as f:
        results = json.load(f)
    dport, w1port, w2port = free_udp_ports(3)
    cl = Cluster(SPARK35_HOME, tmp, "spark-3.5.9-probes",
                 worker_env=[{DL4J_PORT_ENV: str(w1port)}, {DL4J_PORT_ENV: str(w2port)}])
    try:
        cl.start()
        probes = dl4j_default_probes(cl, args, tmp, dport)
        probes["date"] = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        results["dl4j_default_configuration_probes"] = probes
        for key in ("dl4j_maven_resolution",):
            if key in versions(sys.executable):
                results["versions"][key] = versions(sys.executable)[key]
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    finally:
        cl.stop()
        cleanup()
        if args.keep_logs:
            shutil.copytree(tmp, args.keep_logs, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.jar"))
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--budget", type=float, default=300.0, help="training seconds per run (default 300)")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--max-epochs", type=int, default=60, help="DL4J: most epochs per run")
    ap.add_argument("--dl4j-averaging-frequency", type=int, default=10,
                    help="DL4J ParameterAveraging: minibatches between averagings (10, as ferrodl's example)")
    ap.add_argument("--paramavg-ladder", default="2,4,6,8,10,12,15,20")
    ap.add_argument("--shared-ladder", default="5,10,15,20,25,30")
    ap.add_argument("--mllib-max-iters", default="10,20,40,80,160,320")
    ap.add_argument("--out", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--png", default=os.path.join(HERE, "time_to_accuracy.png"))
    ap.add_argument("--probe-dl4j-defaults", type=int, default=1,
                    help="1: first submit DL4J with its default RDD approach and without the Aeron property, "
                         "one epoch each, and record what happens")
    ap.add_argument("--dl4j-workers-per-node", type=int, default=1,
                    help="DL4J SharedTrainingMaster workersPerNode (1: DL4J's advice for CPUs)")
    ap.add_argument("--dl4j-jar", default=DL4J_JAR, help="the DL4J uber-jar to submit")
    ap.add_argument("--probe-only", action="store_true",
                    help="only run the DL4J default-configuration probes and store them in the existing --out")
    ap.add_argument("--keep-logs", default=None, help="copy the submissions' and daemons' logs here")
    args = ap.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in SYSTEMS:
            ap.error(f"unknown system {s}; known: {', '.join(SYSTEMS)}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    tmp = tempfile.mkdtemp(prefix="ferrodl-bench-cluster.")
    if args.probe_only:
        return probe_only(args, tmp)
    started = time.time()
    results = {
        "benchmark": "distributed time-to-accuracy, MNIST digits, MLP 784-500-100-10, 2 workers",
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "target_accuracy": args.target, "budget_training_seconds": args.budget, "repeats": args.repeats,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_1_5_15_at_start": [round(x, 2) for x in os.getloadavg()],
                    "note": "2-core machine shared with other work: timings are noisy"},
        "versions": versions(sys.executable),
        "systems": {},
    }
    for s in systems:
        results["systems"][s] = {"configuration": system_config(s, args), "runs": []}

    def save():
        for s in systems:
            results["systems"][s]["summary"] = summarize(s, results["systems"][s]["runs"], args)
        results["total_bench_seconds"] = round(time.time() - started, 1)
        results["machine"]["load_1_5_15_at_end"] = [round(x, 2) for x in os.getloadavg()]
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")

    def record(s, rep, points, subs, err, sharing=None):
        run = {"repeat": rep, "points": points, "submissions": subs,
               "time_to_target_seconds": time_to(points, args.target) if points else None}
        run["best_accuracy_within_budget"], run["best_at_seconds"] = best_within(points, args.budget) \
            if points else (None, None)
        if sharing:
            run["sharing"] = sharing
        if err:
            run["error"] = err
        results["systems"][s]["runs"].append(run)
        save()

    spark4 = [s for s in systems if s.startswith("ferrodl") or s == "mllib-mlp"]
    spark35 = [s for s in systems if s.startswith("dl4j")]
    # Aeron UDP ports for DL4J's gradient sharing: one for the driver, one per worker's executor
    dport, w1port, w2port = free_udp_ports(3)
    try:
        # repeats interleaved (each repeat runs every system once) so that the machine's changing load
        # falls on all of them alike; a fresh cluster per repeat and Spark version
        for rep in range(1, args.repeats + 1):
            if spark4:
                cl = Cluster(SPARK4_HOME, tmp, f"spark-4.2.0-r{rep}")
                try:
                    cl.start()
                    for s in spark4:
                        if s.startswith("ferrodl"):
                            tm = s.split("-")[1]
                            ladder = [int(x) for x in (args.paramavg_ladder if tm == "paramavg"
                                                       else args.shared_ladder).split(",")]
                            pts, subs, shar, err = ferrodl_run(cl, tm, ladder, args, tmp, rep)
                            record(s, rep, pts, subs, err, shar)
                        else:
                            pts, subs, err = mllib_run(cl, args, tmp, rep, sys.executable)
                            record(s, rep, pts, subs, err)
                except RuntimeError as e:
                    for s in spark4:
                        results["systems"][s].setdefault("cluster_errors", []).append(str(e))
                    log(f"spark 4.2.0 cluster: {e}")
                finally:
                    cl.stop()
            if spark35:
                cl = Cluster(SPARK35_HOME, tmp, f"spark-3.5.9-r{rep}",
                             worker_env=[{DL4J_PORT_ENV: str(w1port)}, {DL4J_PORT_ENV: str(w2port)}])
                try:
                    cl.start()
                    if args.probe_dl4j_defaults and rep == 1:
                        results["dl4j_default_configuration_probes"] = dl4j_default_probes(cl, args, tmp, dport)
                        save()
                    for s in spark35:
                        pts, subs, err = dl4j_run(cl, s.split("-")[1], args, tmp, rep, dport)
                        record(s, rep, pts, subs, err)
                except RuntimeError as e:
                    for s in spark35:
                        results["systems"][s].setdefault("cluster_errors", []).append(str(e))
                    log(f"spark 3.5.9 cluster: {e}")
                finally:
                    cl.stop()
    finally:
        cleanup()
        save()
        if args.keep_logs:
            shutil.copytree(tmp, args.keep_logs, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.jar", "libsvm"))
        shutil.rmtree(tmp, ignore_errors=True)
    plot(results, args.png)
    log(f"wrote {args.out} and {args.png} in {time.time() - started:.0f} s")
    for s in systems:
        sm = results["systems"][s]["summary"]
        log(f"{s}: time to {args.target}: {sm['time_to_target_seconds']} best in budget: "
            f"{sm['best_accuracy_within_budget']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
