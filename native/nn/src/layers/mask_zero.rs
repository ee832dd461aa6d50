//! `MaskZeroLayer`: runs a recurrent layer (`underlying`) with a feature mask derived from its
//! input — a step is padding (mask 0) when every one of its `C` features equals `maskingValue`
//! exactly — the reference's Keras-style masking.
//!
//! As in the reference, the derived mask replaces any feature mask that reaches the layer, for
//! the wrapped layer only; the layer passes the mask it received on to the next layers unchanged
//! (the reference's `feedForwardMaskArray` returns its input mask). The derived mask also applies
//! under `rnnTimeStep` (the reference's stepping calls the wrapped layer directly, without the
//! masking; here a step that is all `maskingValue` is padding either way, so stepping equals the
//! full-sequence output).

use super::recurrent::ensure;
use super::{Batch, Ctx, Layer, LayerKind, Mask, ParamSpec, StateMode};
use crate::config::{
    Activation, BaseConfig, LayerConfig, LayerFields, LayerShapes, Shape, ShapeCx,
};
use crate::NnError;
use ferrodl_tensor::memory::MemoryError;
use ferrodl_tensor::{Rng, Scalar};
use serde::{Deserialize, Serialize};

#[derive(Debug)]
pub struct MaskZeroLayer<T: Scalar> {
    inner: Box<dyn Layer<T>>,
    value: T,
    c_in: usize,
    /// The derived `[N, T]` mask of the last pass.
    mask: Vec<T>,
}

impl<T: Scalar> MaskZeroLayer<T> {
    /// The `[N, T]` mask of `input` (NCW rows of `C·T`) into `mask`: 0 where all `C` features
    /// of a step equal the masking value, 1 elsewhere.
    fn derive(&mut self, input: &[T], n: usize, t: usize) {
        ensure(&mut self.mask, n * t);
        let c = self.c_in;
        for i in 0..n {
            let row = &input[i * c * t..(i + 1) * c * t];
            for s in 0..t {
                let padding = (0..c).all(|ch| row[ch * t + s] == self.value);
                self.mask[i * t + s] = if padding { T::zero() } else { T::one() };
            }
        }
    }
}

impl<T: Scalar> Layer<T> for MaskZeroLayer<T> {
    fn type_name(&self) -> &'static str {
        "MaskZeroLayer"
    }
    fn input_shape(&self) -> Shape {
        self.inner.input_shape()
    }
    fn output_shape(&self) -> Shape {
        self.inner.output_shape()
    }
    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        self.inner.output_steps(steps)
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
    fn reserve_workspace(&mut self, rows: usize, steps: usize, who: &str) -> Result<(), MemoryError> {
        self.inner.reserve_workspace(rows, steps, who)
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

    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        ctx: &mut Ctx,
    ) {
        let (n, t) = (batch.rows, batch.time_steps);
        self.derive(input, n, t);
        let b = Batch {
            mask: Some(Mask {
                data: &self.mask[..n * t],
                cols: t,
            }),
            ..*batch
        };
        self.inner.forward(params, input, &b, output, ctx);
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
        let (n, t) = (batch.rows, batch.time_steps);
        self.derive(input, n, t);
        let b = Batch {
            mask: Some(Mask {
                data: &self.mask[..n * t],
                cols: t,
            }),
            ..*batch
        };
        self.inner
            .backward(params, input, output, &b, delta, grads, grad_input);
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaskZeroLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    /// Retain probability of the input; 0 (unset) leaves the wrapped layer's.
    #[serde(default)]
    pub drop_out: f64,
    pub underlying: Box<LayerConfig>,
    #[serde(default)]
    pub masking_value: f64,
}

impl LayerFields for MaskZeroLayerConfig {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn drop_out(&self) -> f64 {
        if self.drop_out != 0.0 {
            self.drop_out
        } else {
            self.underlying.input_drop_out()
        }
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

impl LayerKind for MaskZeroLayerConfig {
    fn rnn_format(&self) -> Option<crate::config::RnnFormat> {
        self.underlying.rnn_format()
    }

    /// The wrapped recurrent layer's rule on the same input (its errors name it as
    /// `… underlying (LSTM)`).
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let u = &*self.underlying;
        if !matches!(
            u,
            LayerConfig::LSTM(_)
                | LayerConfig::GravesLSTM(_)
                | LayerConfig::SimpleRnn(_)
                | LayerConfig::Bidirectional(_)
                | LayerConfig::MaskZeroLayer(_)
        ) {
            return Err(cx.err(format!(
                "MaskZeroLayer wraps a recurrent layer (LSTM, GravesLSTM, SimpleRnn, \
                 Bidirectional), not a {}",
                u.type_name()
            )));
        }
        if !self.masking_value.is_finite() {
            return Err(cx.err(format!(
                "maskingValue={} is invalid (must be finite: a step is masked when its features \
                 equal it)",
                self.masking_value
            )));
        }
        cx.seq("MaskZeroLayer")?;
        let who = format!("{} underlying ({})", cx.who, u.type_name());
        let inner = ShapeCx {
            who: &who,
            input: cx.input,
            prev: cx.prev,
            from: cx.from,
        };
        u.output_shape(&inner)
    }

    fn infer_n_in(&mut self, input: Shape) {
        self.underlying.infer_n_in(input);
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        let Shape::Seq { c, .. } = shapes.input else {
            return Err(NnError::InvalidConfig(
                "MaskZeroLayer needs a recurrent input".into(),
            ));
        };
        Ok(Box::new(MaskZeroLayer {
            inner: self.underlying.build::<T>(shapes)?,
            value: T::of(self.masking_value),
            c_in: c,
            mask: Vec::new(),
        }))
    }
}
