//! Embedding layer: a lookup table, mathematically a dense layer on a one-hot input.

use super::{Batch, Ctx, Layer, ParamKind, ParamSpec};
use crate::activation::ActivationCache;
use crate::config::{Distribution, Shape, WeightInit};
use crate::config::{LayerShapes, ShapeCx};
use crate::init::init_weights;
use crate::layers::LayerKind;
use crate::NnError;
use ferrodl_tensor::{column_sums, Rng, Scalar};

/// Input: one column of indices in `[0, nIn)` (as floats, the reference's convention); output row
/// `r` is `act(W[index_r] + b)` with `W` `[nIn, nOut]`. Initialisation as a dense layer of
/// `nIn × nOut` (fan-in nIn, fan-out nOut).
#[derive(Clone, Debug)]
pub struct EmbeddingLayer<T> {
    n_in: usize,
    n_out: usize,
    has_bias: bool,
    weight_init: WeightInit,
    distribution: Option<Distribution>,
    bias_init: f64,
    act: ActivationCache<T>,
}

impl<T: Scalar> EmbeddingLayer<T> {
    pub fn new(c: &EmbeddingLayerConfig) -> Self {
        EmbeddingLayer {
            n_in: c.n_in,
            n_out: c.n_out,
            has_bias: c.has_bias,
            weight_init: c.weight_init,
            distribution: c.weight_init_distribution,
            bias_init: c.bias_init,
            act: ActivationCache::new(c.activation),
        }
    }

    /// The row index of `x`, or a description of why it is not one.
    pub fn index_of(&self, x: T) -> Result<usize, String> {
        let v = x.f64();
        if v.fract() != 0.0 || v < 0.0 || v >= self.n_in as f64 {
            return Err(format!(
                "EmbeddingLayer input {v} is not an index in [0, nIn={})",
                self.n_in
            ));
        }
        Ok(v as usize)
    }
}

impl<T: Scalar> Layer<T> for EmbeddingLayer<T> {
    fn type_name(&self) -> &'static str {
        "EmbeddingLayer"
    }
    fn input_shape(&self) -> Shape {
        Shape::Flat(1)
    }
    fn output_shape(&self) -> Shape {
        Shape::Flat(self.n_out)
    }

    fn check_input(&self, input: &[T], _rows: usize) -> Result<(), String> {
        for (r, &x) in input.iter().enumerate() {
            self.index_of(x).map_err(|m| format!("{m} (row {r})"))?;
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

    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        let nw = self.n_in * self.n_out;
        let (w, b) = params.split_at_mut(nw);
        let (fi, fo) = (self.n_in as f64, self.n_out as f64);
        init_weights(
            self.weight_init,
            self.distribution,
            fi,
            fo,
            &[self.n_in, self.n_out],
            w,
            rng,
        );
        b.fill(T::of(self.bias_init));
    }

    fn reserve_workspace(
        &mut self,
        rows: usize,
        _steps: usize,
        who: &str,
    ) -> Result<(), ferrodl_tensor::memory::MemoryError> {
        self.act.reserve(rows.saturating_mul(self.n_out), who)
    }

    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        _: &mut Ctx,
    ) {
        let rows = batch.rows;
        let n_out = self.n_out;
        let (w, b) = params.split_at(self.n_in * n_out);
        for r in 0..rows {
            // check_input ran before the forward pass; clamp keeps this total regardless.
            let i = self.index_of(input[r]).unwrap_or(0);
            output[r * n_out..(r + 1) * n_out].copy_from_slice(&w[i * n_out..(i + 1) * n_out]);
        }
        self.act.forward(output, n_out, self.has_bias.then_some(b));
    }

    fn backward(
        &mut self,
        _params: &[T],
        input: &[T],
        output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let rows = batch.rows;
        let n_out = self.n_out;
        self.act.backward(output, delta, n_out);
        let (gw, gb) = grads.split_at_mut(self.n_in * n_out);
        gw.fill(T::zero());
        for r in 0..rows {
            let i = self.index_of(input[r]).unwrap_or(0);
            for (g, &d) in gw[i * n_out..(i + 1) * n_out]
                .iter_mut()
                .zip(&delta[r * n_out..(r + 1) * n_out])
            {
                *g = *g + d;
            }
        }
        if self.has_bias {
            column_sums(delta, n_out, T::zero(), gb);
        }
        // Indices are not differentiable.
        if let Some(gx) = grad_input {
            gx.fill(T::zero());
        }
    }
}

crate::config::layers::base_layer!(
    /// A lookup table: the input is one column of indices in `[0, nIn)`, the output row `i` is
    /// `act(W[index_i] + b)`.
    EmbeddingLayerConfig, default_activation = "crate::config::Activation::default", {
        #[serde(default)]
        has_bias: bool,
    }
);

impl LayerKind for EmbeddingLayerConfig {
    /// The input is one column of indices; nIn is the vocabulary size (never inferred).
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        cx.positive("nIn", self.n_in)?;
        cx.positive("nOut", self.n_out)?;
        if cx.input != Shape::Flat(1) {
            return Err(cx.err(format!(
                "the input must be one column of indices in [0, nIn={}), but it is {} ({})",
                self.n_in, cx.input, cx.from
            )));
        }
        Ok(Shape::Flat(self.n_out))
    }

    fn build<T: Scalar>(&self, _shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(EmbeddingLayer::new(self)))
    }
}
