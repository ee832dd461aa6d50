"""Python peers of the ferrodl benchmark: numpy (OpenBLAS) GEMM and JAX training steps (the MLP and
the LeNet-style CNN).

Both mirror what the Rust side measures (bench/rust/src): FP32 n x n x n products, and the
784-500-100-10 MLP (ReLU hidden, softmax + cross-entropy output, He-normal weights, zero biases)
trained with Adam (lr 1e-3, beta1 0.9, beta2 0.999, eps 1e-8, bias correction folded into the step
size exactly like ferrodl-optim) on random features in [0, 1) with random one-hot labels; and the
LeNet-style CNN of bench/rust/src/lenet.rs (see `lenet_loss`).
"""

import time

import numpy as np

SIZES = (784, 500, 100, 10)
POOL_EXAMPLES = 32 * 1024  # same pool size as bench/rust/src/mlp.rs


class NumpyGemm:
    def __init__(self, n):
        rng = np.random.default_rng(n)
        self.n = n
        self.a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        self.b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        self.c = np.empty((n, n), dtype=np.float32)

    def gflops(self, secs):
        """GFLOP/s over a batch of products lasting at least `secs` (after one warm-up)."""
        np.matmul(self.a, self.b, out=self.c)
        reps = 0
        start = time.perf_counter()
        while reps < 2 or time.perf_counter() - start < secs:
            np.matmul(self.a, self.b, out=self.c)
            reps += 1
        t = time.perf_counter() - start
        return 2.0 * self.n**3 * reps / t / 1e9


def mlp_params(seed=42):
    """He-normal weights (WeightInit.RELU), zero biases: [(w, b)] for 784-500-100-10."""
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(seed)
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        key, sub = jax.random.split(key)
        w = jax.random.normal(sub, (n_in, n_out), jnp.float32) * np.sqrt(2.0 / n_in)
        params.append((w, jnp.zeros((n_out,), jnp.float32)))
    return params


def mlp_logits(params, x):
    import jax

    h = x
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = params[-1]
    return h @ w + b


# LeNet-style CNN: conv 5x5x20 (identity) -> max-pool 2/2 -> conv 5x5x50 (identity) -> max-pool 2/2
# -> dense 500 ReLU -> dense 10 softmax; NHWC activations and HWIO kernels (XLA's preferred layout
# on CPU, what a JAX user writes), Xavier-normal weights, zero biases.
LENET_PARAMS = 20 * 25 + 20 + 50 * 20 * 25 + 50 + 800 * 500 + 500 + 500 * 10 + 10
# forward multiply-adds per example (see bench/rust/src/lenet.rs); training FLOPs = 6 x this
LENET_FORWARD_MULADDS = 24 * 24 * 20 * 25 + 8 * 8 * 50 * 20 * 25 + 800 * 500 + 500 * 10


def lenet_params(seed=42):
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(seed)
    shapes = [(5, 5, 1, 20), (5, 5, 20, 50), (800, 500), (500, 10)]
    params = []
    for shape in shapes:
        key, sub = jax.random.split(key)
        if len(shape) == 4:
            fan_in, fan_out = shape[0] * shape[1] * shape[2], shape[0] * shape[1] * shape[3]
        else:
            fan_in, fan_out = shape
        w = jax.random.normal(sub, shape, jnp.float32) * np.sqrt(2.0 / (fan_in + fan_out))
        params.append((w, jnp.zeros((shape[-1],), jnp.float32)))
    return params


def lenet_logits(params, x):
    import jax
    from jax import lax

    (c1, b1), (c2, b2), (w3, b3), (w4, b4) = params
    h = x.reshape((x.shape[0], 28, 28, 1))
    dn = ("NHWC", "HWIO", "NHWC")

    def pool(h):
        return lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    h = pool(lax.conv_general_dilated(h, c1, (1, 1), "VALID", dimension_numbers=dn) + b1)
    h = pool(lax.conv_general_dilated(h, c2, (1, 1), "VALID", dimension_numbers=dn) + b2)
    # flatten in channel-major (C, H, W) order like the NCHW engines, so that the dense weights
    # mean the same thing; the transpose is part of the measured step
    h = h.transpose((0, 3, 1, 2)).reshape((h.shape[0], 800))
    h = jax.nn.relu(h @ w3 + b3)
    return h @ w4 + b4


# Small residual CNN (the graph row of the JVM bench; ferrodl builds it as a ComputationGraph with
# ElementWiseVertex Add): conv 3x3x16 same ReLU -> max-pool 2/2 -> two residual blocks
# [conv 3x3x16 same ReLU -> conv 3x3x16 same identity -> add the block input -> ReLU] -> max-pool
# 2/2 -> dense 10 softmax; NHWC/HWIO, Xavier-normal weights, zero biases, flatten in (C, H, W) order.
RESCNN_FORWARD_MULADDS = 28 * 28 * 16 * 9 + 4 * 14 * 14 * 16 * 16 * 9 + 7 * 7 * 16 * 10


def rescnn_params(seed=42):
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(seed)
    shapes = [(3, 3, 1, 16)] + [(3, 3, 16, 16)] * 4 + [(7 * 7 * 16, 10)]
    params = []
    for shape in shapes:
        key, sub = jax.random.split(key)
        if len(shape) == 4:
            fan_in, fan_out = shape[0] * shape[1] * shape[2], shape[0] * shape[1] * shape[3]
        else:
            fan_in, fan_out = shape
        w = jax.random.normal(sub, shape, jnp.float32) * np.sqrt(2.0 / (fan_in + fan_out))
        params.append((w, jnp.zeros((shape[-1],), jnp.float32)))
    return params


def rescnn_logits(params, x):
    import jax
    from jax import lax

    (c0, b0), (c1, b1), (c2, b2), (c3, b3), (c4, b4), (w5, b5) = params
    h = x.reshape((x.shape[0], 28, 28, 1))
    dn = ("NHWC", "HWIO", "NHWC")

    def conv(h, c, b):
        return lax.conv_general_dilated(h, c, (1, 1), "SAME", dimension_numbers=dn) + b

    def pool(h):
        return lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    h = pool(jax.nn.relu(conv(h, c0, b0)))
    for (ca, ba), (cb, bb) in (((c1, b1), (c2, b2)), ((c3, b3), (c4, b4))):
        h = jax.nn.relu(h + conv(jax.nn.relu(conv(h, ca, ba)), cb, bb))
    h = pool(h)
    h = h.transpose((0, 3, 1, 2)).reshape((h.shape[0], 7 * 7 * 16))
    return h @ w5 + b5


MODELS = {
    "mlp": (mlp_params, mlp_logits, 6 * (784 * 500 + 500 + 500 * 100 + 100 + 100 * 10 + 10)),
    "cnn": (lenet_params, lenet_logits, 6 * LENET_FORWARD_MULADDS),
    "rescnn": (rescnn_params, rescnn_logits, 6 * RESCNN_FORWARD_MULADDS),
}


def jax_train_step(logits_fn, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    """A jitted train step: softmax cross-entropy (mean over the batch), its gradient, Adam with
    ferrodl-optim's formulas (bias correction folded into the step size). Donates params/m/v."""
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        logp = jax.nn.log_softmax(logits_fn(params, x))
        return -jnp.mean(jnp.sum(y * logp, axis=1))

    def step(params, m, v, t, x, y):
        score, g = jax.value_and_grad(loss)(params, x, y)
        t = t + 1
        tf = t.astype(jnp.float32)
        alpha = lr * jnp.sqrt(1 - b2**tf) / (1 - b1**tf)
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - alpha * m / (jnp.sqrt(v) + eps), params, m, v
        )
        return params, m, v, t, score

    return jax.jit(step, donate_argnums=(0, 1, 2))


class JaxTrainer:
    """Jitted full train step (forward, backward, Adam) on one minibatch; `model` "mlp" (default)
    or "cnn" (the LeNet-style CNN)."""

    def __init__(self, batch, seed=7, model="mlp"):
        import jax
        import jax.numpy as jnp

        self.jax = jax
        self.batch = batch
        init, logits, _ = MODELS[model]
        params = init()
        self.params = params
        self.m = jax.tree_util.tree_map(jnp.zeros_like, params)
        self.v = jax.tree_util.tree_map(jnp.zeros_like, params)
        self.t = jnp.zeros((), jnp.int32)

        rng = np.random.default_rng(seed)
        count = max(1, POOL_EXAMPLES // batch)
        self.data = []
        for _ in range(count):
            x = rng.uniform(0, 1, (batch, SIZES[0])).astype(np.float32)
            y = np.zeros((batch, SIZES[-1]), np.float32)
            y[np.arange(batch), rng.integers(0, SIZES[-1], batch)] = 1.0
            self.data.append((jax.device_put(x), jax.device_put(y)))
        self.next = 0
        self.step_fn = jax_train_step(logits)
        for _ in range(10):  # compile + warm-up
            self.step()
        self.block()

    def step(self):
        x, y = self.data[self.next % len(self.data)]
        self.next += 1
        self.params, self.m, self.v, self.t, self.score = self.step_fn(
            self.params, self.m, self.v, self.t, x, y
        )

    def block(self):
        self.jax.block_until_ready((self.params, self.score))

    def examples_per_sec(self, secs):
        start = time.perf_counter()
        steps = 0
        while steps < 3 or time.perf_counter() - start < secs:
            self.step()
            steps += 1
        self.block()
        t = time.perf_counter() - start
        assert np.isfinite(float(self.score)), "JAX training diverged"
        return steps * self.batch / t


JaxMlp = JaxTrainer  # the name run_bench.py used before the CNN was added
