//! `LastTimeStep`: runs a recurrent layer and keeps, per example, its output at the last real
//! time step — the last step whose feature mask is not 0 (the last step without a mask), as the
//! reference does. `[C, T]` → `[nOut]`; the mask ends here.

use super::recurrent::ensure;
use super::{Batch, Ctx, Layer, LayerKind, MaskRule, ParamSpec, StateMode};
use crate::config::{
    Activation, BaseConfig, LayerConfig, LayerFields, LayerShapes, Shape, ShapeCx,
};
use crate::NnError;
use ferrodl_tensor::{Rng, Scalar};
use serde::{Deserialize, Serialize};

/// The index of each example's last real step.
pub fn last_steps<T: Scalar>(batch: &Batch<'_, T>, out: &mut Vec<usize>) {
    let (n, t) = (batch.rows, batch.time_steps);
    out.clear();
    for i in 0..n {
        let last = match batch.mask {
            Some(m) => (0..t).rev().find(|&s| m.at(i, s) != T::zero()).unwrap_or(t - 1),
            None => t - 1,
        };
        out.push(last);
    }
}

/// Picks step `idx[i]` of each NCW row of `c` channels and `t` steps into `out` (`N × c`).
pub fn gather_steps<T: Scalar>(x: &[T], c: usize, t: usize, idx: &[usize], out: &mut [T]) {
    for (i, &s) in idx.iter().enumerate() {
        for ch in 0..c {
            out[i * c + ch] = x[i * c * t + ch * t + s];
        }
    }
}

/// The inverse of [`gather_steps`] for gradients: `delta` at the picked steps, 0 elsewhere.
pub fn scatter_steps<T: Scalar>(delta: &[T], c: usize, t: usize, idx: &[usize], out: &mut [T]) {
    out.fill(T::zero());
    for (i, &s) in idx.iter().enumerate() {
        for ch in 0..c {
            out[i * c * t + ch * t + s] = delta[i * c + ch];
        }
    }
}

#[derive(Debug)]
pub struct LastTimeStepLayer<T: Scalar> {
    inner: Box<dyn Layer<T>>,
    c: usize,
    idx: Vec<usize>,
    /// The inner layer's full output and its gradient.
    y: Vec<T>,
    dy: Vec<T>,
}

impl<T: Scalar> Layer<T> for LastTimeStepLayer<T> {
    fn type_name(&self) -> &'static str {
        "LastTimeStep"
    }
    fn input_shape(&self) -> Shape {
        self.inner.input_shape()
    }
    fn output_shape(&self) -> Shape {
        Shape::Flat(self.c)
    }
    fn mask_rule(&self) -> MaskRule {
        MaskRule::Drop
    }
    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        self.inner.output_steps(steps).map(|_| 1)
    }
    fn param_specs(&self) -> Vec<ParamSpec> {
        self.inner.param_specs()
    }
    fn check_input(&self, input: &[T], rows: usize) -> Result<(), String> {
        self.inner.check_input(input, rows)
    }
    fn check_state_mode(&self, mode: StateMode) -> Result<(), String> {
        self.inner.check_state_mode(mode)
    }
    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        self.inner.init_params(params, rng)
    }
    fn state_keys(&self) -> &'static [&'static str] {
        self.inner.state_keys()
    }
    fn state(&self, key: &str) -> Option<&[T]> {
        self.inner.state(key)
    }
    fn set_state(&mut self, key: &str, values: &[T], rows: usize) -> Result<(), String> {
        self.inner.set_state(key, values, rows)
    }
    fn clear_state(&mut self, mode: StateMode) {
        self.inner.clear_state(mode)
    }
    fn reserve_workspace(
        &mut self,
        rows: usize,
        steps: usize,
        who: &str,
    ) -> Result<(), ferrodl_tensor::memory::MemoryError> {
        self.inner.reserve_workspace(rows, steps, who)
    }

    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        ctx: &mut Ctx,
    ) {
        let (n, t) = (batch.rows, batch.time_steps);
        ensure(&mut self.y, n * self.c * t);
        let y = &mut self.y[..n * self.c * t];
        self.inner.forward(params, input, batch, y, ctx);
        last_steps(batch, &mut self.idx);
        gather_steps(y, self.c, t, &self.idx, output);
    }

    fn backward(
        &mut self,
        params: &[T],
        input: &[T],
        _output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let (n, t) = (batch.rows, batch.time_steps);
        ensure(&mut self.dy, n * self.c * t);
        let dy = &mut self.dy[..n * self.c * t];
        scatter_steps(delta, self.c, t, &self.idx, dy);
        let y = &self.y[..n * self.c * t];
        self.inner
            .backward(params, input, y, batch, dy, grads, grad_input);
    }
}

/// `LastTimeStep`: the wrapped recurrent layer's output at each example's last real step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LastTimeStepConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    pub underlying: Box<LayerConfig>,
}

impl LayerFields for LastTimeStepConfig {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn drop_out(&self) -> f64 {
        self.drop_out
    }
    fn base(&self) -> Option<BaseConfig<'_>> {
        self.underlying.base()
    }
    fn n_in(&self) -> Option<usize> {
        self.underlying.n_in()
    }
    fn n_out(&self) -> Option<usize> {
        self.underlying.n_out()
    }
    fn activation(&self) -> Option<Activation> {
        self.underlying.activation()
    }
}

impl LayerKind for LastTimeStepConfig {
    fn rnn_format(&self) -> Option<crate::config::RnnFormat> {
        self.underlying.rnn_format()
    }

    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        match self.underlying.output_shape(cx)? {
            Shape::Seq { c, .. } if cx.input.is_seq() => Ok(Shape::Flat(c)),
            other => Err(cx.err(format!(
                "LastTimeStep needs a recurrent layer on a recurrent input, but its {} gives {other}",
                self.underlying.type_name()
            ))),
        }
    }

    fn infer_n_in(&mut self, input: Shape) {
        self.underlying.infer_n_in(input);
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        let inner = self.underlying.build::<T>(shapes)?;
        let c = inner.output_shape().channels();
        Ok(Box::new(LastTimeStepLayer {
            inner,
            c,
            idx: Vec::new(),
            y: Vec::new(),
            dy: Vec::new(),
        }))
    }
}
