"""The LSTM rows of bench/jvm (issue 12 item 8) for the Python peers: the reference's character
model (2 recurrent layers of 200 units, softmax + cross-entropy over the vocabulary at every step,
RmsProp 0.1 / decay 0.95 / epsilon 1e-8, l2 0.001 on the weights, truncated BPTT 50) in JAX
(`--framework jax`, the cell written out and run with `lax.scan`) or PyTorch (`--framework torch`,
`torch.nn.LSTM`), on the same synthetic characters as bench/jvm/common/.../CharData.java (its
java.util.Random generator reproduced), under the protocol of Harness.java, printing the same JSON
lines (info, window, memory, run) so that summarize.py treats it as one more system.

Cells: `--model graves` is GravesLSTM's (peepholes: the forget and input gates see the previous
cell state, the output gate the new one; only JAX runs it -- torch.nn.LSTM has no peepholes);
`--model lstm` is the plain LSTM cell (DL4J's `LSTM`, torch.nn.LSTM's).

What each framework is given, to run as its users would:
- JAX: one jitted function per truncated-BPTT segment (forward, backward, l2, RmsProp): the input
  projection of all 50 steps as one product, the recurrence as `lax.scan`; the segments of a
  minibatch are dispatched one after another, the carried (h, c) an input of the next; a window is
  timed as a whole (clock, its steps, block_until_ready, clock).
- PyTorch: `nn.LSTM(num_layers=2)` + `nn.Linear`, `torch.optim.RMSprop(lr=0.1, alpha=0.95,
  eps=1e-8)` with weight_decay 0.001 on the weights only (the same l2-in-the-gradient as DL4J),
  (h, c) detached between segments; `torch.set_num_threads(cores)`; each fit timed on its own.
Both: float32, one-hot float inputs (as the JVM systems get them), time-major arrays prepared once
before timing (the JVM systems get their DataSets ready-made too), state zeroed at the start of
every minibatch (DL4J clears it at the start of fit()).

Usage (bench/jvm/run.sh runs it with the bench venv's python):
  python bench/jvm/python/char_lstm_bench.py --framework jax --model graves --batch 32 \\
      --seq-length 1000 --tbptt 50 --epochs 20 --warmup-iters 1 --window 2 --min-windows 3 \\
      --max-seconds 30
"""

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "jax"))
from jax_bench import JavaRandom, emit, memory_kb  # noqa: E402


def generate(batches, rows, vocab, length, seed):
    """CharData.generate: next-character indices [batches][rows, length+1] (the first column is
    the first character)."""
    out = np.zeros((batches, rows, length + 1), np.int64)
    for b in range(batches):
        for r in range(rows):
            rng = JavaRandom(seed + b * rows + r)
            c = rng.next_int(vocab)
            out[b, r, 0] = c
            for s in range(length):
                c = (c + 1 + rng.next_int(3)) % vocab
                out[b, r, s + 1] = c
    return out


def one_hot_tnv(chars, vocab):
    """[rows, length] indices -> time-major one-hot float32 [length, rows, vocab]."""
    return np.eye(vocab, dtype=np.float32)[chars.T]


def xavier(rng, shape, fan_in, fan_out):
    # DL4J WeightInit.XAVIER: N(0, 2 / (fanIn + fanOut))
    return (rng.standard_normal(shape) * math.sqrt(2.0 / (fan_in + fan_out))).astype(np.float32)


# ------------------------------------------------------------------------------------------ JAX

def jax_system(o, chars, test_chars):
    import jax
    import jax.numpy as jnp
    import jaxlib

    V, H, N, T, K = o.vocab, o.hidden, o.batch, o.seq_length, o.tbptt
    peep = o.model == "graves"
    info = dict(jax_version=jax.__version__, jaxlib_version=jaxlib.__version__, backend=jax.default_backend(),
                devices=str(jax.devices()), xla_flags=os.environ.get("XLA_FLAGS", ""))
    rng = np.random.default_rng(o.seed)

    def layer(n_in):
        # the reference's fan-in nOut, fan-out nIn + nOut for both matrices; gate blocks [a|f|o|g]
        p = {"W": xavier(rng, (n_in, 4 * H), H, n_in + H), "RW": xavier(rng, (H, 4 * H), H, n_in + H),
             "b": np.zeros(4 * H, np.float32)}
        p["b"][H:2 * H] = 1.0  # forgetGateBiasInit
        if peep:
            p["P"] = xavier(rng, (3, H), H, n_in + H)  # GravesLSTM's last 3 RW columns: f, o, g
        return p

    params = {"l1": layer(V), "l2": layer(H), "out": {"W": xavier(rng, (H, V), H, V),
                                                      "b": np.zeros(V, np.float32)}}
    params = jax.tree_util.tree_map(jnp.asarray, params)
    decay_mask = jax.tree_util.tree_map_with_path(
        lambda path, _: getattr(path[-1], "key", "") != "b", params)

    def run_layer(p, x, h0, c0):
        zx = x @ p["W"] + p["b"]  # the input projection of all steps: one product

        def step(carry, z_in):
            h, c = carry
            z = z_in + h @ p["RW"]
            za, zf, zo, zg = jnp.split(z, 4, axis=-1)
            if peep:
                zf = zf + c * p["P"][0]
                zg = zg + c * p["P"][2]
            a, f, g = jnp.tanh(za), jax.nn.sigmoid(zf), jax.nn.sigmoid(zg)
            c = f * c + g * a
            if peep:
                zo = zo + c * p["P"][1]
            h = jax.nn.sigmoid(zo) * jnp.tanh(c)
            return (h, c), h

        (h, c), hs = jax.lax.scan(step, (h0, c0), zx)
        return hs, h, c

    def forward(params, x, state):
        h1, c1, h2, c2 = state
        y1, h1, c1 = run_layer(params["l1"], x, h1, c1)
        y2, h2, c2 = run_layer(params["l2"], y1, h2, c2)
        return y2 @ params["out"]["W"] + params["out"]["b"], (h1, c1, h2, c2)

    def loss_fn(params, x, y, state):
        logits, state = forward(params, x, state)
        # MCXENT summed over steps, divided by the minibatch size (DL4J's score)
        loss = -jnp.sum(y * jax.nn.log_softmax(logits, axis=-1)) / x.shape[1]
        return loss, state

    @jax.jit
    def segment(params, v, state, x, y):
        (loss, state), g = jax.value_and_grad(loss_fn, has_aux=True)(params, x, y, state)
        g = jax.tree_util.tree_map(lambda gi, p, d: gi + 0.001 * p if d else gi, g, params, decay_mask)
        v = jax.tree_util.tree_map(lambda vi, gi: 0.95 * vi + 0.05 * gi * gi, v, g)
        params = jax.tree_util.tree_map(lambda p, gi, vi: p - 0.1 * gi / (jnp.sqrt(vi) + 1e-8), params, g, v)
        return params, v, state, loss

    predict = jax.jit(lambda params, x, state: forward(params, x, state)[0])
    v = jax.tree_util.tree_map(lambda p: jnp.full_like(p, 1e-8), params)  # RmsProp state starts at eps
    segs = [(s, min(T, s + K)) for s in range(0, T, K)]
    data = []
    for b in range(chars.shape[0]):
        x = one_hot_tnv(chars[b, :, :-1], V)
        y = one_hot_tnv(chars[b, :, 1:], V)
        data.append([(jax.device_put(x[s:e]), jax.device_put(y[s:e])) for s, e in segs])
    zeros = jnp.zeros((N, H), jnp.float32)
    box = {"params": params, "v": v, "loss": None}

    def fit(i):
        state = (zeros, zeros, zeros, zeros)
        for x, y in data[i]:
            box["params"], box["v"], state, box["loss"] = segment(box["params"], box["v"], state, x, y)

    def sync():
        jax.block_until_ready((box["params"], box["loss"]))

    def score():
        return float(box["loss"])

    def accuracy():
        x = jnp.asarray(one_hot_tnv(test_chars[0, :, :-1], V))
        out = np.asarray(predict(box["params"], x, (zeros, zeros, zeros, zeros)))  # [T, N, V]
        return float(np.mean(out.argmax(-1) == test_chars[0, :, 1:].T))

    def state_values():
        return np.concatenate([np.asarray(a).ravel() for a in jax.tree_util.tree_leaves(box["v"])])

    n_params = sum(int(np.prod(a.shape)) for a in jax.tree_util.tree_leaves(params))
    return info, n_params, fit, sync, score, accuracy, state_values, True


# -------------------------------------------------------------------------------------- PyTorch

def torch_system(o, chars, test_chars):
    import torch

    if o.model != "lstm":
        raise SystemExit("torch.nn.LSTM has no peephole connections: the torch system runs --model lstm only")
    V, H, N, T, K = o.vocab, o.hidden, o.batch, o.seq_length, o.tbptt
    torch.set_num_threads(o.threads or os.cpu_count())
    torch.manual_seed(o.seed)
    info = dict(torch_version=torch.__version__, torch_threads=torch.get_num_threads(),
                torch_parallel_info=torch.__config__.parallel_info().splitlines()[:6],
                mkldnn_enabled=bool(torch.backends.mkldnn.enabled))
    lstm = torch.nn.LSTM(V, H, num_layers=2)
    out = torch.nn.Linear(H, V)
    decay = [p for n, p in list(lstm.named_parameters()) + list(out.named_parameters()) if "weight" in n]
    no_decay = [p for n, p in list(lstm.named_parameters()) + list(out.named_parameters()) if "bias" in n]
    opt = torch.optim.RMSprop([{"params": decay, "weight_decay": 0.001}, {"params": no_decay}],
                              lr=0.1, alpha=0.95, eps=1e-8)
    segs = [(s, min(T, s + K)) for s in range(0, T, K)]
    data = []
    for b in range(chars.shape[0]):
        x = torch.from_numpy(one_hot_tnv(chars[b, :, :-1], V))
        y = torch.from_numpy(np.ascontiguousarray(chars[b, :, 1:].T))
        data.append([(x[s:e].contiguous(), y[s:e].contiguous()) for s, e in segs])
    box = {"loss": None}

    def fit(i):
        h = torch.zeros(2, N, H)
        c = torch.zeros(2, N, H)
        for x, y in data[i]:
            ys, (h, c) = lstm(x, (h, c))
            logits = out(ys)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), y.reshape(-1), reduction="sum") / N
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            h, c = h.detach(), c.detach()
            box["loss"] = loss.detach()

    def sync():
        pass

    def score():
        return float(box["loss"])

    def accuracy():
        with torch.no_grad():
            x = torch.from_numpy(one_hot_tnv(test_chars[0, :, :-1], V))
            pred = out(lstm(x)[0]).argmax(-1).numpy()
        return float(np.mean(pred == test_chars[0, :, 1:].T))

    def state_values():
        return np.concatenate([s["square_avg"].numpy().ravel() for s in opt.state.values()])

    n_params = sum(p.numel() for p in list(lstm.parameters()) + list(out.parameters()))
    return info, n_params, fit, sync, score, accuracy, state_values, False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framework", choices=("jax", "torch"), required=True)
    ap.add_argument("--model", choices=("graves", "lstm"), default="graves")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq-length", type=int, default=1000)
    ap.add_argument("--vocab", type=int, default=77)
    ap.add_argument("--hidden", type=int, default=200)
    ap.add_argument("--tbptt", type=int, default=50)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--warmup-epochs", type=int, default=1)
    ap.add_argument("--warmup-iters", type=int, default=-1)
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--min-windows", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch: intra-op threads (0: cores)")
    ap.add_argument("--rep", type=int, default=0)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--data", default=None, help="ignored (the JVM mains' MNIST option)")
    o = ap.parse_args()

    chars = generate(o.batches, o.batch, o.vocab, o.seq_length, o.seed)
    test_chars = generate(1, o.batch, o.vocab, o.seq_length, o.seed + 1_000_000)
    make = jax_system if o.framework == "jax" else torch_system
    info, n_params, fit, sync, score, accuracy, state_values, whole_window = make(o, chars, test_chars)
    tag = {"system": o.framework, "model": o.model, "batch": o.batch, "rep": o.rep}
    emit("info", **tag, **info, python=sys.version.split()[0], cpu_count=os.cpu_count(), num_params=n_params,
         seq_length=o.seq_length, tbptt=o.tbptt, vocab=o.vocab, hidden=o.hidden)

    nb = len(chars)
    per_fit = o.batch * o.seq_length
    warmup = o.warmup_iters if o.warmup_iters >= 0 else o.warmup_epochs * nb
    rates, window_no, iteration, epochs_run, stop = [], 0, 0, 0, False
    in_window, secs = 0, 0.0
    w0 = None
    start = time.perf_counter()
    for epoch in range(1, o.epochs + 1):
        if stop:
            break
        e0 = time.perf_counter()
        i = 0
        while i < nb and not stop:
            timed = iteration >= warmup
            iteration += 1
            if timed and in_window == 0:
                sync()  # the window starts with nothing in flight
                w0 = time.perf_counter()
                secs = 0.0
            t0 = time.perf_counter()
            fit(i)
            if timed:
                secs += time.perf_counter() - t0
                in_window += 1
                if in_window == o.window:
                    sync()
                    # JAX: the window as a whole (asynchronous dispatch); torch: the sum of its fits
                    window_secs = time.perf_counter() - w0 if whole_window else secs
                    rate = in_window * per_fit / window_secs
                    rates.append(rate)
                    emit("window", **tag, epoch=epoch, window=window_no, iterations=in_window,
                         seconds=window_secs, examples_per_sec=rate)
                    window_no += 1
                    in_window = 0
                    stop = (o.max_seconds > 0 and len(rates) >= o.min_windows
                            and time.perf_counter() - start > o.max_seconds)
            i += 1
        sync()
        emit("memory", **tag, epoch=epoch, complete_epoch=(i == nb),
             epoch_seconds=time.perf_counter() - e0, score=score(), **memory_kb())
        epochs_run = epoch
    if not rates:
        raise SystemExit("char_lstm_bench: no timed window completed (too few iterations for the warm-up "
                         "and the window size)")
    state = state_values()
    subnormal = float(np.mean((state != 0) & (np.abs(state) < np.finfo(np.float32).tiny)))
    emit("run", **tag, epochs=epochs_run, epochs_asked=o.epochs, iterations=iteration,
         warmup_iterations=warmup, window=o.window, max_seconds=o.max_seconds, windows=len(rates),
         examples_per_sec=statistics.median(rates), examples_per_sec_min=min(rates),
         examples_per_sec_max=max(rates), final_score=score(), test_accuracy=accuracy(),
         updater_state_subnormal_share=subnormal, **memory_kb())


if __name__ == "__main__":
    main()
