//! Batch normalization (Ioffe & Szegedy 2015) over features (dense input) or channels
//! (convolutional/recurrent input: statistics over examples and positions).
//!
//! Training: `x̂ = (x − μ_B)/sqrt(σ²_B + eps)` with the batch mean and biased batch variance,
//! `y = act(γ x̂ + β)`; the running statistics move as `mean ← decay·mean + (1−decay)·μ_B` (the same
//! for `var`), expressed as the "gradient" `old − new` of the `mean`/`var` parameter blocks so that
//! the network's `params -= update` performs it (and gradient sharing carries it to other workers).
//! Inference: `y = act(γ (x − mean)/sqrt(var + eps) + β)`.

use super::{Batch, Ctx, Layer, ParamKind, ParamSpec};
use crate::activation::ActivationCache;
use crate::config::defaults::*;
use crate::config::Shape;
use crate::config::{LayerShapes, ShapeCx};
use crate::layers::LayerKind;
use crate::NnError;
use ferrodl_tensor::memory::{self, MemoryError};
use ferrodl_tensor::{Rng, Scalar};

/// Trained gamma and beta, absent with `lockGammaBeta`.
type GammaBeta<'p, T> = Option<(&'p [T], &'p [T])>;

#[derive(Clone, Debug)]
pub struct BatchNormLayer<T> {
    shape: Shape,
    /// Features or channels.
    n: usize,
    /// Positions per channel per example (1 for dense input).
    spatial: usize,
    decay: f64,
    eps: f64,
    lock_gamma_beta: bool,
    gamma: f64,
    beta: f64,
    act: ActivationCache<T>,
    /// x̂ of the last forward pass (rows × shape.len()).
    xhat: Vec<T>,
    /// 1/sqrt(σ² + eps) per channel of the last pass (batch or running statistics).
    inv_std: Vec<T>,
    batch_mean: Vec<f64>,
    batch_var: Vec<f64>,
    sum_dy: Vec<f64>,
    sum_dy_xhat: Vec<f64>,
    trained: bool,
}

impl<T: Scalar> BatchNormLayer<T> {
    pub fn new(c: &BatchNormalizationConfig, shape: Shape) -> Self {
        let n = shape.channels();
        BatchNormLayer {
            shape,
            n,
            spatial: shape.len() / n,
            decay: c.decay,
            eps: c.eps,
            lock_gamma_beta: c.lock_gamma_beta,
            gamma: c.gamma,
            beta: c.beta,
            act: ActivationCache::new(c.activation),
            // Sized in `reserve_workspace`, against the native memory budget.
            xhat: Vec::new(),
            inv_std: Vec::new(),
            batch_mean: Vec::new(),
            batch_var: Vec::new(),
            sum_dy: Vec::new(),
            sum_dy_xhat: Vec::new(),
            trained: false,
        }
    }

    /// (gamma and beta unless locked, mean, var) views of the parameter block.
    fn split<'p>(&self, p: &'p [T]) -> (GammaBeta<'p, T>, &'p [T], &'p [T]) {
        let n = self.n;
        if self.lock_gamma_beta {
            (None, &p[..n], &p[n..2 * n])
        } else {
            (
                Some((&p[..n], &p[n..2 * n])),
                &p[2 * n..3 * n],
                &p[3 * n..4 * n],
            )
        }
    }

    fn gamma_beta(&self, gb: Option<(&[T], &[T])>, ch: usize) -> (T, T) {
        match gb {
            Some((g, b)) => (g[ch], b[ch]),
            None => (T::of(self.gamma), T::of(self.beta)),
        }
    }
}

impl<T: Scalar> Layer<T> for BatchNormLayer<T> {
    fn type_name(&self) -> &'static str {
        "BatchNormalization"
    }
    fn input_shape(&self) -> Shape {
        self.shape
    }
    fn output_shape(&self) -> Shape {
        self.shape
    }

    fn param_specs(&self) -> Vec<ParamSpec> {
        let n = self.n;
        let mut v = Vec::new();
        if !self.lock_gamma_beta {
            v.push(ParamSpec::new("gamma", ParamKind::Gain, vec![n]));
            v.push(ParamSpec::new("beta", ParamKind::Bias, vec![n]));
        }
        v.push(ParamSpec::new("mean", ParamKind::State, vec![n]));
        v.push(ParamSpec::new("var", ParamKind::State, vec![n]));
        v
    }

    /// gamma = `gamma`, beta = `beta`, mean = 0, var = 1; draws nothing.
    fn init_params(&self, params: &mut [T], _rng: &mut Rng) {
        let n = self.n;
        let mut off = 0;
        if !self.lock_gamma_beta {
            params[..n].fill(T::of(self.gamma));
            params[n..2 * n].fill(T::of(self.beta));
            off = 2 * n;
        }
        params[off..off + n].fill(T::zero());
        params[off + n..off + 2 * n].fill(T::one());
    }

    /// The per-channel statistics (5 vectors of `n`), `x̂` for `rows` examples and the
    /// pre-activations when the activation needs them.
    fn reserve_workspace(&mut self, rows: usize, _steps: usize, who: &str) -> Result<(), MemoryError> {
        let n = self.n;
        let what = || format!("the batch statistics of {who}");
        memory::try_grow(&mut self.inv_std, n, T::zero(), what)?;
        for v in [
            &mut self.batch_mean,
            &mut self.batch_var,
            &mut self.sum_dy,
            &mut self.sum_dy_xhat,
        ] {
            memory::try_grow(v, n, 0.0, what)?;
        }
        let len = rows.saturating_mul(self.shape.len());
        memory::try_capacity(&mut self.xhat, len, || {
            format!("the normalized inputs of {who} for a minibatch of {rows} examples")
        })?;
        self.act.reserve(len, who)
    }

    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        ctx: &mut Ctx,
    ) {
        let rows = batch.rows;
        super::reserved(self.reserve_workspace(rows, 1, "BatchNormalization"));
        let (n, s) = (self.n, self.spatial);
        let width = n * s;
        let (gb, mean, var) = self.split(params);
        let count = (rows * s) as f64;
        self.trained = ctx.train;
        // Per-channel statistics: the batch's in training, the running ones otherwise.
        for ch in 0..n {
            let (m, v) = if ctx.train {
                let mut sum = 0.0;
                for r in 0..rows {
                    let base = r * width + ch * s;
                    sum += input[base..base + s].iter().map(|x| x.f64()).sum::<f64>();
                }
                let m = sum / count;
                let mut sq = 0.0;
                for r in 0..rows {
                    let base = r * width + ch * s;
                    sq += input[base..base + s]
                        .iter()
                        .map(|x| (x.f64() - m) * (x.f64() - m))
                        .sum::<f64>();
                }
                (m, sq / count)
            } else {
                (mean[ch].f64(), var[ch].f64())
            };
            self.batch_mean[ch] = m;
            self.batch_var[ch] = v;
            self.inv_std[ch] = T::of(1.0 / (v + self.eps).sqrt());
        }
        self.xhat.resize(rows * width, T::zero());
        for r in 0..rows {
            for ch in 0..n {
                let (g, b) = self.gamma_beta(gb, ch);
                let (m, is) = (T::of(self.batch_mean[ch]), self.inv_std[ch]);
                let base = r * width + ch * s;
                for i in base..base + s {
                    let xh = (input[i] - m) * is;
                    self.xhat[i] = xh;
                    output[i] = g * xh + b;
                }
            }
        }
        self.act.forward(output, width, None);
    }

    fn backward(
        &mut self,
        params: &[T],
        _input: &[T],
        output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let rows = batch.rows;
        let (n, s) = (self.n, self.spatial);
        let width = n * s;
        self.act.backward(output, delta, width);
        let (gb, mean, var) = self.split(params);
        let count = (rows * s) as f64;
        // Per-channel Σdy and Σdy·x̂ (in f64), in buffers kept across iterations.
        let mut sum_dy = std::mem::take(&mut self.sum_dy);
        let mut sum_dy_xhat = std::mem::take(&mut self.sum_dy_xhat);
        sum_dy.iter_mut().for_each(|v| *v = 0.0);
        sum_dy_xhat.iter_mut().for_each(|v| *v = 0.0);
        for r in 0..rows {
            for ch in 0..n {
                let base = r * width + ch * s;
                for (d, xh) in delta[base..base + s].iter().zip(&self.xhat[base..base + s]) {
                    sum_dy[ch] += d.f64();
                    sum_dy_xhat[ch] += (*d * *xh).f64();
                }
            }
        }
        let state_off = if self.lock_gamma_beta {
            0
        } else {
            for ch in 0..n {
                grads[ch] = T::of(sum_dy_xhat[ch]);
                grads[n + ch] = T::of(sum_dy[ch]);
            }
            2 * n
        };
        // Running statistics: "gradient" = old − new, only after a training-mode pass.
        for ch in 0..n {
            let (gm, gv) = if self.trained {
                let k = 1.0 - self.decay;
                (
                    k * (mean[ch].f64() - self.batch_mean[ch]),
                    k * (var[ch].f64() - self.batch_var[ch]),
                )
            } else {
                (0.0, 0.0)
            };
            grads[state_off + ch] = T::of(gm);
            grads[state_off + n + ch] = T::of(gv);
        }
        if let Some(gx) = grad_input {
            for r in 0..rows {
                for ch in 0..n {
                    let (g, _) = self.gamma_beta(gb, ch);
                    let is = self.inv_std[ch];
                    let base = r * width + ch * s;
                    if self.trained {
                        // dx = γ·inv_std/M · (M·dy − Σdy − x̂·Σ(dy·x̂))
                        let (sd, sdx) = (T::of(sum_dy[ch]), T::of(sum_dy_xhat[ch]));
                        let (m, k) = (T::of(count), g * is / T::of(count));
                        for i in base..base + s {
                            gx[i] = k * (m * delta[i] - sd - self.xhat[i] * sdx);
                        }
                    } else {
                        // Fixed statistics: an affine map per channel.
                        for i in base..base + s {
                            gx[i] = g * is * delta[i];
                        }
                    }
                }
            }
        }
        self.sum_dy = sum_dy;
        self.sum_dy_xhat = sum_dy_xhat;
    }
}

crate::config::layers::base_layer!(
    /// Batch normalization over features (dense input) or channels (convolutional input).
    BatchNormalizationConfig, default_activation = "crate::config::defaults::identity_activation", {
        #[serde(default = "default_decay")]
        decay: f64,
        #[serde(default = "default_bn_eps")]
        eps: f64,
        #[serde(default)]
        lock_gamma_beta: bool,
        #[serde(default = "default_one")]
        gamma: f64,
        #[serde(default)]
        beta: f64,
    }
);

impl LayerKind for BatchNormalizationConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let input = cx.input;
        cx.positive("nIn", self.n_in)?;
        if self.n_out != self.n_in {
            return Err(cx.err(format!(
                "nOut={} must equal nIn={} (batch normalization keeps the shape)",
                self.n_out, self.n_in
            )));
        }
        let features = input.channels();
        if self.n_in != features {
            return Err(cx.err(format!(
                "nIn={} does not match its input, {input} ({}), which has {features} {}",
                self.n_in,
                cx.from,
                if matches!(input, Shape::Flat(_)) {
                    "features"
                } else {
                    "channels"
                }
            )));
        }
        if !(self.decay.is_finite() && (0.0..=1.0).contains(&self.decay)) {
            return Err(cx.err(format!(
                "decay={} is invalid (must be in [0, 1])",
                self.decay
            )));
        }
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(cx.err(format!(
                "eps={} is invalid (must be a finite number > 0)",
                self.eps
            )));
        }
        if !(self.gamma.is_finite() && self.beta.is_finite()) {
            return Err(cx.err("gamma and beta must be finite"));
        }
        Ok(input)
    }

    /// nIn is the features or channels of the input; nOut follows it.
    fn infer_n_in(&mut self, input: Shape) {
        if self.n_in == 0 {
            self.n_in = input.channels();
        }
        if self.n_out == 0 {
            self.n_out = self.n_in;
        }
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(BatchNormLayer::new(self, shapes.input)))
    }
}
