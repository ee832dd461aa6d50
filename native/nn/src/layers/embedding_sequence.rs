//! `EmbeddingSequenceLayer`: a lookup table over a sequence of indices — the input is `[N, T]`
//! (or `[N, 1, T]`, the same values) indices in `[0, nIn)` as floats, the output `[N, nOut, T]`
//! with step `t` of example `i` = `act(W[index(i, t)] + b)`, times the feature mask of that step
//! when there is one (the reference multiplies the output by the mask).
//!
//! The input is a recurrent input of one channel (any length; `inputLength` with
//! `inferInputLength` false fixes it), or a feed-forward input of `T` columns (`[N, T]` of a fixed
//! `T`; without a time axis there, so no per-step feature mask reaches the layer). Indices are
//! checked before the pass: a fractional, negative or out-of-range value is an error naming its
//! example and step. Indices take no gradient and dropout is not applied to them (as the 2-D
//! EmbeddingLayer).

use super::recurrent::{ensure, ncw_to_nwc, nwc_to_ncw};
use super::{Batch, Ctx, Layer, ParamKind, ParamSpec};
use crate::activation::ActivationCache;
use crate::config::defaults::{default_true, one_usize};
use crate::config::{Distribution, LayerShapes, RnnFormat, Shape, ShapeCx, WeightInit};
use crate::init::init_weights;
use crate::layers::LayerKind;
use crate::NnError;
use ferrodl_tensor::memory::MemoryError;
use ferrodl_tensor::{column_sums, Rng, Scalar};

/// The row of `W` that value `x` selects, if it is an index in `[0, n_in)`.
fn index_of<T: Scalar>(x: T, n_in: usize) -> Option<usize> {
    let v = x.f64();
    (v.fract() == 0.0 && v >= 0.0 && v < n_in as f64).then_some(v as usize)
}

#[derive(Debug)]
pub struct EmbeddingSequenceLayer<T> {
    n_in: usize,
    n_out: usize,
    has_bias: bool,
    weight_init: WeightInit,
    distribution: Option<Distribution>,
    bias_init: f64,
    /// `Some(L)` when the input is feed-forward `[N, L]`: the steps are its columns.
    flat_len: Option<usize>,
    /// `Some(L)` when `inferInputLength` is false: only sequences of `inputLength` steps.
    fixed_len: Option<usize>,
    act: ActivationCache<T>,
    /// The activated output as `N·T` rows of `nOut` (before the mask), and backward's delta in
    /// the same layout.
    y: Vec<T>,
    dy: Vec<T>,
}

impl<T: Scalar> EmbeddingSequenceLayer<T> {
    fn steps(&self, batch: &Batch<'_, T>) -> usize {
        self.flat_len.unwrap_or(batch.time_steps)
    }

    /// The feature mask of example `i` at step `s` (1 without a mask).
    fn mask_at(batch: &Batch<'_, T>, i: usize, s: usize) -> T {
        batch.mask.map_or(T::one(), |m| m.at(i, s))
    }
}

impl<T: Scalar> Layer<T> for EmbeddingSequenceLayer<T> {
    fn type_name(&self) -> &'static str {
        "EmbeddingSequenceLayer"
    }

    fn input_shape(&self) -> Shape {
        match self.flat_len {
            Some(l) => Shape::Flat(l),
            None => Shape::Seq { c: 1, len: 0 },
        }
    }

    fn output_shape(&self) -> Shape {
        Shape::Seq {
            c: self.n_out,
            len: 0,
        }
    }

    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        if let Some(l) = self.flat_len {
            return Ok(l);
        }
        match self.fixed_len {
            Some(l) if l != steps => Err(format!(
                "takes sequences of inputLength={l} steps (inferInputLength is false), not \
                 {steps} steps"
            )),
            _ => Ok(steps),
        }
    }

    fn check_input(&self, input: &[T], rows: usize) -> Result<(), String> {
        let t = match rows {
            0 => return Ok(()),
            r => input.len() / r,
        };
        for (k, &x) in input.iter().enumerate() {
            if index_of(x, self.n_in).is_none() {
                return Err(format!(
                    "EmbeddingSequenceLayer input {} at example {}, step {} is not an index in \
                     [0, nIn={})",
                    x.f64(),
                    k / t.max(1),
                    k % t.max(1),
                    self.n_in
                ));
            }
        }
        Ok(())
    }

    fn param_specs(&self) -> Vec<ParamSpec> {
        let mut v = vec![ParamSpec::new(
            "W",
            ParamKind::Weight,
            vec![self.n_in, self.n_out],
        )];
        if self.has_bias {
            v.push(ParamSpec::new("b", ParamKind::Bias, vec![self.n_out]));
        }
        v
    }

    /// `W` as the 2-D EmbeddingLayer (fan-in nIn, fan-out nOut), then `b` = `biasInit`.
    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        let (w, b) = params.split_at_mut(self.n_in * self.n_out);
        init_weights(
            self.weight_init,
            self.distribution,
            self.n_in as f64,
            self.n_out as f64,
            &[self.n_in, self.n_out],
            w,
            rng,
        );
        b.fill(T::of(self.bias_init));
    }

    fn reserve_workspace(&mut self, rows: usize, steps: usize, who: &str) -> Result<(), MemoryError> {
        let t = self.flat_len.unwrap_or(steps);
        self.act
            .reserve(rows.saturating_mul(t).saturating_mul(self.n_out), who)
    }

    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        _: &mut Ctx,
    ) {
        let (n, t, o) = (batch.rows, self.steps(batch), self.n_out);
        let (w, b) = params.split_at(self.n_in * o);
        ensure(&mut self.y, n * t * o);
        let y = &mut self.y[..n * t * o];
        // Input [N, T]: example i's step s is input[i*T + s], its output row (i*T + s).
        for (r, &x) in input[..n * t].iter().enumerate() {
            // check_input ran before the pass; index 0 keeps this total regardless.
            let i = index_of(x, self.n_in).unwrap_or(0);
            y[r * o..(r + 1) * o].copy_from_slice(&w[i * o..(i + 1) * o]);
        }
        self.act.forward(y, o, self.has_bias.then_some(b));
        nwc_to_ncw(y, n, o, t, output);
        if batch.mask.is_some() {
            for i in 0..n {
                for s in 0..t {
                    let m = Self::mask_at(batch, i, s);
                    for ch in 0..o {
                        let k = i * o * t + ch * t + s;
                        output[k] = output[k] * m;
                    }
                }
            }
        }
    }

    fn backward(
        &mut self,
        _params: &[T],
        input: &[T],
        _output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let (n, t, o) = (batch.rows, self.steps(batch), self.n_out);
        ensure(&mut self.dy, n * t * o);
        let dy = &mut self.dy[..n * t * o];
        ncw_to_nwc(delta, n, o, t, dy);
        if batch.mask.is_some() {
            for i in 0..n {
                for s in 0..t {
                    let m = Self::mask_at(batch, i, s);
                    for v in &mut dy[(i * t + s) * o..(i * t + s + 1) * o] {
                        *v = *v * m;
                    }
                }
            }
        }
        self.act.backward(&self.y[..n * t * o], dy, o);
        let (gw, gb) = grads.split_at_mut(self.n_in * o);
        gw.fill(T::zero());
        for (r, &x) in input[..n * t].iter().enumerate() {
            let i = index_of(x, self.n_in).unwrap_or(0);
            for (g, &d) in gw[i * o..(i + 1) * o].iter_mut().zip(&dy[r * o..(r + 1) * o]) {
                *g = *g + d;
            }
        }
        if self.has_bias {
            column_sums(dy, o, T::zero(), gb);
        }
        // Indices are not differentiable.
        if let Some(gx) = grad_input {
            gx.fill(T::zero());
        }
    }
}

crate::config::layers::base_layer!(
    /// A lookup table over a sequence of indices: `[N, T]` (or `[N, 1, T]`) → `[N, nOut, T]`.
    EmbeddingSequenceLayerConfig, default_activation = "crate::config::Activation::default", {
        #[serde(default)]
        has_bias: bool,
        #[serde(default = "one_usize")]
        input_length: usize,
        #[serde(default = "default_true")]
        infer_input_length: bool,
        #[serde(default)]
        output_format: RnnFormat,
    }
);

impl LayerKind for EmbeddingSequenceLayerConfig {
    fn rnn_format(&self) -> Option<RnnFormat> {
        Some(self.output_format)
    }

    /// nIn is the vocabulary size (never inferred). The input is one channel of indices per step
    /// (`[N, T]` = `[N, 1, T]`) or feed-forward `[N, T]` columns.
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        cx.positive("nIn", self.n_in)?;
        cx.positive("nOut", self.n_out)?;
        if !self.infer_input_length {
            cx.positive("inputLength", self.input_length)?;
        }
        let len = match cx.input {
            Shape::Seq { c: 1, len } => len,
            Shape::Flat(len) => len,
            other => {
                return Err(cx.err(format!(
                    "the input must be indices in [0, nIn={}) shaped [minibatch, time] (a \
                     recurrent input of 1 channel, or feed-forward of one column per step), but \
                     it is {other} ({})",
                    self.n_in, cx.from
                )))
            }
        };
        if !self.infer_input_length && len != 0 && len != self.input_length {
            return Err(cx.err(format!(
                "inputLength={} does not match the {len} time steps of its input ({}); set \
                 inferInputLength(true) to take the input's length",
                self.input_length, cx.from
            )));
        }
        Ok(Shape::Seq { c: self.n_out, len })
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(EmbeddingSequenceLayer {
            n_in: self.n_in,
            n_out: self.n_out,
            has_bias: self.has_bias,
            weight_init: self.weight_init,
            distribution: self.weight_init_distribution,
            bias_init: self.bias_init,
            flat_len: match shapes.input {
                Shape::Flat(l) => Some(l),
                _ => None,
            },
            fixed_len: (!self.infer_input_length).then_some(self.input_length),
            act: ActivationCache::new(self.activation),
            y: Vec::new(),
            dy: Vec::new(),
        }))
    }
}
