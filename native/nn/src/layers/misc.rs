//! Layers without parameters that keep the shape: identity (the parameterised part of a
//! `LossLayer`), `ActivationLayer`, `DropoutLayer`, and the inverted-dropout mask the network also
//! uses for every layer's `dropOut`.

use super::{Batch, Ctx, Layer};
use crate::activation::ActivationCache;
use crate::config::defaults::*;
use crate::config::layers::plain_layer_fields;
use crate::config::{Activation, Shape};
use crate::config::{LayerShapes, ShapeCx};
use crate::layers::LayerKind;
use crate::NnError;
use ferrodl_tensor::memory::{self, MemoryError};
use ferrodl_tensor::{Rng, Scalar};
use serde::{Deserialize, Serialize};

/// Inverted dropout: in training each value is kept with probability `p` and scaled by `1/p`
/// (so inference needs no rescaling); outside training it is the identity.
#[derive(Clone, Debug)]
pub struct DropoutMask<T> {
    retain: f64,
    /// The draws of the last training-mode pass, 1 (kept) or 0: the mask value of entry `i` is
    /// `keep[i] / p`, made from them in a loop of its own, so that no loop branches on a coin flip
    /// (see `apply`).
    keep: Vec<u8>,
    active: bool,
    _values: std::marker::PhantomData<T>,
}

impl<T: Scalar> DropoutMask<T> {
    /// `retain` of 0 or 1 means no dropout.
    pub fn new(retain: f64) -> Self {
        DropoutMask {
            retain,
            keep: Vec::new(),
            active: false,
            _values: std::marker::PhantomData,
        }
    }

    /// Whether this mask ever drops anything.
    pub fn enabled(&self) -> bool {
        self.retain > 0.0 && self.retain < 1.0
    }

    /// Room for the mask of `len` values (training only), checked against the native memory
    /// budget; `who` names the layer in a refusal.
    pub fn reserve(&mut self, len: usize, who: &str) -> Result<(), MemoryError> {
        if !self.enabled() {
            return Ok(());
        }
        memory::try_capacity(&mut self.keep, len, || format!("the dropout mask of {who}"))
    }

    /// `out = input ⊙ mask` in training (drawing a new mask from `rng`), `out = input` otherwise.
    pub fn apply(&mut self, input: &[T], out: &mut [T], train: bool, rng: &mut Rng) {
        self.active = train && self.enabled();
        if !self.active {
            out.copy_from_slice(input);
            return;
        }
        let scale = self.scale();
        self.keep.resize(input.len(), 0);
        // Two loops without a branch on the coin flips (a branch mispredicts half of them at
        // retain 0.5: ~15 % of a batch-16 MLP step with dropout, AMD EPYC). Computed in one loop,
        // `scale · keep` becomes such a branch again (x86 has no conditional move for floats).
        for k in self.keep.iter_mut() {
            *k = u8::from(rng.next_f64() < self.retain);
        }
        for ((o, &x), &k) in out.iter_mut().zip(input).zip(&self.keep) {
            *o = x * (scale * T::of(f64::from(k)));
        }
    }

    /// `1/p`, a kept value's factor.
    fn scale(&self) -> T {
        T::of(1.0 / self.retain)
    }

    /// `grad ⊙= mask` for the mask of the last [`apply`](Self::apply) (nothing when inactive).
    pub fn backward_in_place(&self, grad: &mut [T]) {
        if self.active {
            let scale = self.scale();
            for (g, &k) in grad.iter_mut().zip(&self.keep) {
                *g = *g * (scale * T::of(f64::from(k)));
            }
        }
    }
}

/// Passes its input through (a LossLayer's body: the network applies activation and loss).
#[derive(Clone, Debug)]
pub struct IdentityLayer {
    type_name: &'static str,
    shape: Shape,
}

impl IdentityLayer {
    pub fn new(type_name: &'static str, shape: Shape) -> Self {
        IdentityLayer { type_name, shape }
    }
}

impl<T: Scalar> Layer<T> for IdentityLayer {
    fn type_name(&self) -> &'static str {
        self.type_name
    }
    fn input_shape(&self) -> Shape {
        self.shape
    }
    fn output_shape(&self) -> Shape {
        self.shape
    }
    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        Ok(if self.shape.is_seq() { steps } else { 1 })
    }
    fn forward(&mut self, _: &[T], input: &[T], _: &Batch<'_, T>, output: &mut [T], _: &mut Ctx) {
        output.copy_from_slice(input);
    }
    fn backward(
        &mut self,
        _: &[T],
        _: &[T],
        _: &[T],
        _: &Batch<'_, T>,
        delta: &mut [T],
        _: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        if let Some(gx) = grad_input {
            gx.copy_from_slice(delta);
        }
    }
}

/// `a = act(x)` on any shape (softmax acts on each example's whole row).
#[derive(Clone, Debug)]
pub struct ActivationLayer<T> {
    shape: Shape,
    act: ActivationCache<T>,
}

impl<T: Scalar> ActivationLayer<T> {
    pub fn new(shape: Shape, activation: Activation) -> Self {
        ActivationLayer {
            shape,
            act: ActivationCache::new(activation),
        }
    }
}

impl<T: Scalar> Layer<T> for ActivationLayer<T> {
    fn type_name(&self) -> &'static str {
        "ActivationLayer"
    }
    fn input_shape(&self) -> Shape {
        self.shape
    }
    fn output_shape(&self) -> Shape {
        self.shape
    }
    fn reserve_workspace(&mut self, rows: usize, steps: usize, who: &str) -> Result<(), MemoryError> {
        self.act.reserve(rows.saturating_mul(self.shape.width(steps)), who)
    }
    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        Ok(if self.shape.is_seq() { steps } else { 1 })
    }
    fn forward(&mut self, _: &[T], input: &[T], b: &Batch<'_, T>, output: &mut [T], _: &mut Ctx) {
        output.copy_from_slice(input);
        self.act.forward(output, self.shape.width(b.time_steps), None);
    }
    fn backward(
        &mut self,
        _: &[T],
        _: &[T],
        output: &[T],
        b: &Batch<'_, T>,
        delta: &mut [T],
        _: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        if let Some(gx) = grad_input {
            self.act.backward(output, delta, self.shape.width(b.time_steps));
            gx.copy_from_slice(delta);
        }
    }
}

/// Inverted dropout as a layer of its own.
#[derive(Clone, Debug)]
pub struct DropoutLayer<T> {
    shape: Shape,
    mask: DropoutMask<T>,
}

impl<T: Scalar> DropoutLayer<T> {
    pub fn new(shape: Shape, retain: f64) -> Self {
        DropoutLayer {
            shape,
            mask: DropoutMask::new(retain),
        }
    }
}

impl<T: Scalar> Layer<T> for DropoutLayer<T> {
    fn type_name(&self) -> &'static str {
        "DropoutLayer"
    }
    fn input_shape(&self) -> Shape {
        self.shape
    }
    fn output_shape(&self) -> Shape {
        self.shape
    }
    fn reserve_workspace(&mut self, rows: usize, steps: usize, who: &str) -> Result<(), MemoryError> {
        self.mask
            .reserve(rows.saturating_mul(self.shape.width(steps)), who)
    }
    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        Ok(if self.shape.is_seq() { steps } else { 1 })
    }
    fn forward(&mut self, _: &[T], input: &[T], _: &Batch<'_, T>, output: &mut [T], ctx: &mut Ctx) {
        self.mask.apply(input, output, ctx.train, ctx.rng);
    }
    fn backward(
        &mut self,
        _: &[T],
        _: &[T],
        _: &[T],
        _: &Batch<'_, T>,
        delta: &mut [T],
        _: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        if let Some(gx) = grad_input {
            gx.copy_from_slice(delta);
            self.mask.backward_in_place(gx);
        }
    }
}

/// An activation function as a layer of its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActivationLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default = "identity_activation")]
    pub activation: Activation,
}

impl crate::config::LayerFields for ActivationLayerConfig {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn drop_out(&self) -> f64 {
        self.drop_out
    }
    fn activation(&self) -> Option<Activation> {
        Some(self.activation)
    }
}

impl LayerKind for ActivationLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        Ok(cx.input)
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(ActivationLayer::new(
            shapes.input,
            self.activation,
        )))
    }
}

/// Dropout as a layer of its own (`dropOut` is its retain probability).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DropoutLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
}

plain_layer_fields!(DropoutLayerConfig);

impl LayerKind for DropoutLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        Ok(cx.input)
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(DropoutLayer::new(shapes.input, self.drop_out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverted_dropout_keeps_the_expected_fraction_and_scale() {
        let mut m = DropoutMask::<f64>::new(0.8);
        let x = vec![1.0; 100_000];
        let mut out = vec![0.0; x.len()];
        let mut rng = Rng::new(5);
        m.apply(&x, &mut out, true, &mut rng);
        let kept = out.iter().filter(|&&v| v != 0.0).count() as f64 / x.len() as f64;
        assert!((kept - 0.8).abs() < 0.005, "kept {kept}");
        assert!(out.iter().all(|&v| v == 0.0 || (v - 1.25).abs() < 1e-15));
        // The mean is preserved (inverted dropout).
        let mean = out.iter().sum::<f64>() / x.len() as f64;
        assert!((mean - 1.0).abs() < 0.01, "mean {mean}");
        // Backward uses the same mask.
        let mut g = vec![2.0; x.len()];
        m.backward_in_place(&mut g);
        assert!(g.iter().zip(&out).all(|(&gi, &o)| gi == 2.0 * o));
        // Inference: identity.
        m.apply(&x, &mut out, false, &mut rng);
        assert!(out.iter().all(|&v| v == 1.0));
        let mut g = vec![2.0; x.len()];
        m.backward_in_place(&mut g);
        assert!(g.iter().all(|&v| v == 2.0));
    }
}
