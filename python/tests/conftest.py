"""A SparkSession with the installed ferrodl jar: local[2], or a standalone cluster (master and two
one-core workers on 127.0.0.1, started and stopped here) when FERRODL_TEST_CLUSTER=1."""
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

import pytest


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.fixture(scope="session")
def master():
    if os.environ.get("FERRODL_TEST_CLUSTER") != "1":
        yield "local[2]"
        return
    home = os.environ["SPARK_HOME"]
    spark_class = os.path.join(home, "bin", "spark-class")
    port, ui, w1, w2 = _free_ports(4)
    tmp = tempfile.mkdtemp(prefix="ferrodl-pytest-cluster-")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="512m")
    procs = []

    def start(name, *args):
        log = open(os.path.join(tmp, name + ".log"), "w")
        procs.append((subprocess.Popen([spark_class, *args], stdout=log, stderr=subprocess.STDOUT, env=env,
                                       start_new_session=True), log, name))

    url = f"spark://127.0.0.1:{port}"
    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(ui))
        _wait(tmp, "master", "Starting Spark master at", procs)
        for i, wport in ((1, w1), (2, w2)):
            start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
                  "--memory", "1g", "--webui-port", str(wport), "--work-dir", os.path.join(tmp, f"work-{i}"), url)
        for i in (1, 2):
            _wait(tmp, f"worker-{i}", "Successfully registered with master", procs)
        yield url
    finally:
        for p, log, _ in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)  # the daemon and the executors it started
            except ProcessLookupError:
                pass
        for p, log, _ in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
            log.close()


def _wait(tmp, name, text, procs, timeout=120):
    deadline = time.time() + timeout
    path = os.path.join(tmp, name + ".log")
    while time.time() < deadline:
        if os.path.exists(path) and re.search(re.escape(text), open(path).read()):
            return
        for p, _, n in procs:
            if p.poll() is not None:
                raise RuntimeError(f"Spark daemon {n} exited during start-up; see {tmp}/{n}.log")
        time.sleep(0.5)
    raise RuntimeError(f"{name} did not log '{text}' within {timeout}s; see {path}")


@pytest.fixture(scope="session")
def spark(master):
    import ferrodl
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName("ferrodl-pytest")
               .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
               .config("spark.executor.memory", "1g").config("spark.log.level", "WARN"))
    session = ferrodl.session_builder(builder).getOrCreate()
    yield session
    session.stop()
