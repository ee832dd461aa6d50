"""Python peers of the ferrodl benchmark: numpy (OpenBLAS) GEMM and a JAX MLP training step.

Both mirror what the Rust side measures (bench/rust/src): FP32 n x n x n products, and the
784-500-100-10 MLP (ReLU hidden, softmax + cross-entropy output, He-normal weights, zero biases)
trained with Adam (lr 1e-3, beta1 0.9, beta2 0.999, eps 1e-8, bias correction folded into the step
size exactly like ferrodl-optim) on random features in [0, 1) with random one-hot labels.
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


class JaxMlp:
    """Jitted full train step (forward, backward, Adam) on one minibatch."""

    def __init__(self, batch, seed=7):
        import jax
        import jax.numpy as jnp

        self.jax = jax
        self.batch = batch
        key = jax.random.PRNGKey(42)
        params = []
        for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
            key, sub = jax.random.split(key)
            w = jax.random.normal(sub, (n_in, n_out), jnp.float32) * np.sqrt(2.0 / n_in)
            params.append((w, jnp.zeros((n_out,), jnp.float32)))
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

        lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

        def loss(params, x, y):
            h = x
            for w, b in params[:-1]:
                h = jax.nn.relu(h @ w + b)
            w, b = params[-1]
            logp = jax.nn.log_softmax(h @ w + b)
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

        self.step_fn = jax.jit(step, donate_argnums=(0, 1, 2))
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
