//! Dense (fully connected) layers; also the parameterised part of `OutputLayer`.

use super::{Batch, Ctx, Layer, ParamKind, ParamSpec};
use crate::activation::ActivationCache;
use crate::config::defaults::*;
use crate::config::{Activation, BaseConfig, Distribution, Shape, WeightInit};
use crate::config::{LayerShapes, ShapeCx};
use crate::init::init_weights;
use crate::layers::per_step::PerStep;
use crate::layers::LayerKind;
use crate::NnError;
use ferrodl_tensor::{column_sums, gemm, Op, Rng, Scalar};

/// `a = act(x·W + b)` with `W` (`nIn × nOut`, row-major) followed by `b` (`nOut`, when `hasBias`)
/// in its parameter block. A convolutional input is read as its flattened row (`C·H·W`).
///
/// Initialisation consumes the RNG for the weights only, in row-major order of `W`; biases are
/// set to `biasInit` and draw nothing.
#[derive(Clone, Debug)]
pub struct DenseLayer<T> {
    type_name: &'static str,
    input: Shape,
    n_in: usize,
    n_out: usize,
    has_bias: bool,
    weight_init: WeightInit,
    distribution: Option<Distribution>,
    bias_init: f64,
    act: ActivationCache<T>,
}

impl<T: Scalar> DenseLayer<T> {
    pub fn new(
        type_name: &'static str,
        input: Shape,
        n_out: usize,
        has_bias: bool,
        base: BaseConfig<'_>,
    ) -> Self {
        DenseLayer {
            type_name,
            input,
            n_in: input.len(),
            n_out,
            has_bias,
            weight_init: base.weight_init,
            distribution: base.weight_init_distribution,
            bias_init: base.bias_init,
            act: ActivationCache::new(base.activation),
        }
    }

    pub fn activation(&self) -> Activation {
        self.act.activation
    }

    fn n_weights(&self) -> usize {
        self.n_in * self.n_out
    }

    /// Backpropagation from `dz = dL/dz` (already through the activation): parameter gradients
    /// into `grads`, and `dL/dx = dz·Wᵀ` into `grad_input` when requested.
    pub fn backward_from_preactivation(
        &self,
        params: &[T],
        input: &[T],
        rows: usize,
        dz: &[T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let (n_in, n_out) = (self.n_in, self.n_out);
        let w = &params[..self.n_weights()];
        let (gw, gb) = grads.split_at_mut(self.n_weights());
        // dW = xᵀ·dz without materialising xᵀ.
        gemm(
            Op::T,
            Op::N,
            n_in,
            n_out,
            rows,
            T::one(),
            input,
            dz,
            T::zero(),
            gw,
        );
        if self.has_bias {
            column_sums(dz, n_out, T::zero(), gb);
        }
        if let Some(gx) = grad_input {
            gemm(
                Op::N,
                Op::T,
                rows,
                n_in,
                n_out,
                T::one(),
                dz,
                w,
                T::zero(),
                gx,
            );
        }
    }
}

impl<T: Scalar> Layer<T> for DenseLayer<T> {
    fn type_name(&self) -> &'static str {
        self.type_name
    }

    fn input_shape(&self) -> Shape {
        self.input
    }

    fn output_shape(&self) -> Shape {
        Shape::Flat(self.n_out)
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
        let (w, b) = params.split_at_mut(self.n_weights());
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
        let (n_in, n_out) = (self.n_in, self.n_out);
        let (w, b) = params.split_at(self.n_weights());
        gemm(
            Op::N,
            Op::N,
            rows,
            n_out,
            n_in,
            T::one(),
            input,
            w,
            T::zero(),
            output,
        );
        self.act.forward(output, n_out, self.has_bias.then_some(b));
    }

    fn backward(
        &mut self,
        params: &[T],
        input: &[T],
        output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let rows = batch.rows;
        self.act.backward(output, delta, self.n_out);
        self.backward_from_preactivation(params, input, rows, delta, grads, grad_input);
    }
}

crate::config::layers::base_layer!(
    /// A fully connected layer: `a = act(x·W + b)`.
    DenseLayerConfig, default_activation = "crate::config::Activation::default", {
        #[serde(default = "default_true")]
        has_bias: bool,
    }
);

impl LayerKind for DenseLayerConfig {
    /// On a recurrent input the layer applies at every time step (the reference infers
    /// RnnToFeedForward / FeedForwardToRnn preprocessors around it): `[C, L]` → `[nOut, L]`.
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        if let Shape::Seq { c, len } = cx.input {
            cx.channels_match(self.n_in, c)?;
            cx.positive("nOut", self.n_out)?;
            return Ok(Shape::Seq { c: self.n_out, len });
        }
        cx.flat_n_in(self.n_in)?;
        cx.positive("nOut", self.n_out)?;
        Ok(Shape::Flat(self.n_out))
    }

    /// nIn is the flat width of a feed-forward or convolutional input, the channels of a
    /// recurrent one.
    fn infer_n_in(&mut self, input: Shape) {
        if self.n_in == 0 {
            self.n_in = match input {
                Shape::Seq { c, .. } => c,
                other => other.len(),
            };
        }
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        let dense = |input| DenseLayer::new("DenseLayer", input, self.n_out, self.has_bias, self.base());
        Ok(match shapes.input {
            Shape::Seq { c, .. } => Box::new(PerStep::new(Box::new(dense(Shape::Flat(c))))),
            input => Box::new(dense(input)),
        })
    }
}
