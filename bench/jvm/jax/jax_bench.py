"""JAX on CPU in the bench/jvm single-node comparison: the same networks (bench/python/peers.py:
MLP 784-500-100-10, the LeNet-style CNN and the small residual CNN, Adam 1e-3, softmax cross-entropy), the same MNIST
digits in the same order and the same measurement protocol as bench/jvm/common/.../Harness.java,
printing the same JSON lines (info, window, memory, run) so that summarize.py treats it as one more
system.

Protocol differences, both deliberate: a JAX train step is dispatched asynchronously, so a window
is timed as a whole (clock, `window` jitted steps, block_until_ready, clock) -- how a JAX user's
training loop runs -- where the JVM harness sums the times of its synchronous fit() calls; and the
memory lines have no Java heap fields.

Usage (bench/jvm/run.sh runs it with the bench venv's python):
  python bench/jvm/jax/jax_bench.py --model cnn --batch 64 --rep 1 --data DIR --epochs 4 \
      --warmup-iters 31 --window 31 --min-windows 3 --max-seconds 30
"""

import argparse
import gzip
import json
import os
import statistics
import struct
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import peers  # noqa: E402

SIDE, PIXELS, CLASSES = 28, 784, 10


class JavaRandom:
    """java.util.Random (the 48-bit LCG), for the same shuffle as Mnist.batches()."""

    MULT, ADD, MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1

    def __init__(self, seed):
        self.seed = (seed ^ self.MULT) & self.MASK

    def next_bits(self, bits):
        self.seed = (self.seed * self.MULT + self.ADD) & self.MASK
        return self.seed >> (48 - bits)

    def next_int(self, bound):
        if bound & (bound - 1) == 0:
            return (bound * self.next_bits(31)) >> 31
        while True:
            bits = self.next_bits(31)
            val = bits % bound
            if bits - val + (bound - 1) < (1 << 31):  # Java: no int overflow
                return val


def load(data_dir, split):
    with gzip.open(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"), "rb") as f:
        magic, n, rows, cols = struct.unpack(">iiii", f.read(16))
        if (magic, rows, cols) != (2051, SIDE, SIDE):
            raise SystemExit(f"{split} images: bad IDX header {magic} {rows}x{cols}")
        px = np.frombuffer(f.read(n * PIXELS), np.uint8).reshape(n, PIXELS)
    with gzip.open(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"), "rb") as f:
        magic, m = struct.unpack(">ii", f.read(8))
        if magic != 2049 or m != n:
            raise SystemExit(f"{split} labels: bad IDX header {magic} {m} (images: {n})")
        lab = np.frombuffer(f.read(n), np.uint8)
    return px, lab


def batches(px, lab, batch, seed, full_only):
    """As Mnist.batches(): Fisher-Yates with java.util.Random(seed) (file order if seed < 0)."""
    n = len(lab)
    order = list(range(n))
    if seed >= 0:
        rng = JavaRandom(seed)
        for i in range(n - 1, 0, -1):
            j = rng.next_int(i + 1)
            order[i], order[j] = order[j], order[i]
    nb = n // batch if full_only else (n + batch - 1) // batch
    out = []
    for b in range(nb):
        idx = np.array(order[b * batch:min(n, (b + 1) * batch)])
        x = px[idx].astype(np.float32) / np.float32(255.0)
        y = np.zeros((len(idx), CLASSES), np.float32)
        y[np.arange(len(idx)), lab[idx]] = 1.0
        out.append((x, y, lab[idx]))
    return out


def memory_kb():
    out = {}
    try:
        for line in open("/proc/self/status"):
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"):
                out[k + "_kB"] = int(v.split()[0])
    except OSError:
        out["proc_status_unreadable"] = -1
    return out


def emit(kind, **kv):
    print(json.dumps({"type": kind, **kv}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("mlp", "cnn", "rescnn"), default="mlp")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--warmup-epochs", type=int, default=1)
    ap.add_argument("--warmup-iters", type=int, default=-1)
    ap.add_argument("--window", type=int, default=124)
    ap.add_argument("--min-windows", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=0)
    ap.add_argument("--rep", type=int, default=0)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--data", default="spark-example/src/main/resources/mnist10k")
    o = ap.parse_args()

    import jax
    import jax.numpy as jnp
    import jaxlib

    tag = {"system": "jax", "model": o.model, "batch": o.batch, "rep": o.rep}
    emit("info", **tag, jax_version=jax.__version__, jaxlib_version=jaxlib.__version__,
         backend=jax.default_backend(), devices=str(jax.devices()),
         python=sys.version.split()[0], cpu_count=os.cpu_count(),
         xla_flags=os.environ.get("XLA_FLAGS", ""))

    train = batches(*load(o.data, "train"), o.batch, o.seed, True)
    test = batches(*load(o.data, "test"), 500, -1, False)
    train_dev = [(jax.device_put(x), jax.device_put(y)) for x, y, _ in train]
    init, logits_fn, _ = peers.MODELS[o.model]
    params = init(o.seed)
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    t = jnp.zeros((), jnp.int32)
    step = peers.jax_train_step(logits_fn)
    predict = jax.jit(logits_fn)

    nb = len(train)
    warmup = o.warmup_iters if o.warmup_iters >= 0 else o.warmup_epochs * nb
    rates, window_no, iteration, epochs_run, stop = [], 0, 0, 0, False
    in_window, examples, w0 = 0, 0, None
    score = None
    start = time.perf_counter()
    for epoch in range(1, o.epochs + 1):
        if stop:
            break
        e0 = time.perf_counter()
        i = 0
        while i < nb and not stop:
            x, y = train_dev[i]
            timed = iteration >= warmup
            iteration += 1
            if timed and in_window == 0:
                jax.block_until_ready(params)  # the window starts with nothing in flight
                w0 = time.perf_counter()
            params, m, v, t, score = step(params, m, v, t, x, y)
            if timed:
                in_window += 1
                examples += len(train[i][2])
                if in_window == o.window:
                    jax.block_until_ready((params, score))
                    secs = time.perf_counter() - w0
                    rate = examples / secs
                    rates.append(rate)
                    emit("window", **tag, epoch=epoch, window=window_no, iterations=in_window,
                         seconds=secs, examples_per_sec=rate)
                    window_no += 1
                    in_window, examples = 0, 0
                    stop = (o.max_seconds > 0 and len(rates) >= o.min_windows
                            and time.perf_counter() - start > o.max_seconds)
            i += 1
        jax.block_until_ready(params)
        emit("memory", **tag, epoch=epoch, complete_epoch=(i == nb),
             epoch_seconds=time.perf_counter() - e0, score=float(score), **memory_kb())
        epochs_run = epoch
    state = np.concatenate([np.asarray(a).ravel() for a in jax.tree_util.tree_leaves((m, v))])
    subnormal = float(np.mean((state != 0) & (np.abs(state) < np.finfo(np.float32).tiny)))
    correct = total = 0
    for x, _, cls in test:
        pred = np.asarray(predict(params, jnp.asarray(x))).argmax(axis=1)
        correct += int((pred == cls).sum())
        total += len(cls)
    if not rates:
        raise SystemExit("jax_bench: no timed window completed (too few iterations for the warm-up "
                         "and the window size)")
    emit("run", **tag, epochs=epochs_run, epochs_asked=o.epochs, iterations=iteration,
         warmup_iterations=warmup, window=o.window, max_seconds=o.max_seconds, windows=len(rates),
         examples_per_sec=statistics.median(rates), examples_per_sec_min=min(rates),
         examples_per_sec_max=max(rates), final_score=float(score), test_accuracy=correct / total,
         updater_state_subnormal_share=subnormal, **memory_kb())


if __name__ == "__main__":
    main()
