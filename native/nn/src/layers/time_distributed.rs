//! `TimeDistributed`: a feed-forward layer (`underlying`) applied at every time step of a
//! recurrent input, `[N, C, T]` → `[N, nOut, T]` — the reference's wrapper, computed by
//! [`PerStep`] (the same path a dense layer on a recurrent input takes). Like the reference, the
//! wrapped layer ignores the feature mask (its output at padded steps is not zeroed) and the mask
//! passes on unchanged to the next layer.

use super::per_step::PerStep;
use super::{Layer, LayerKind};
use crate::config::{
    Activation, BaseConfig, LayerConfig, LayerFields, LayerShapes, RnnFormat, Shape, ShapeCx,
};
use crate::NnError;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimeDistributedConfig {
    #[serde(default)]
    pub name: Option<String>,
    /// Retain probability of the input; 0 (unset) leaves the wrapped layer's.
    #[serde(default)]
    pub drop_out: f64,
    pub underlying: Box<LayerConfig>,
    #[serde(default)]
    pub rnn_data_format: RnnFormat,
}

impl LayerFields for TimeDistributedConfig {
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

impl LayerKind for TimeDistributedConfig {
    fn rnn_format(&self) -> Option<RnnFormat> {
        Some(self.rnn_data_format)
    }

    /// The wrapped layer's rule on one step, feed-forward `[C]` (its errors name it as
    /// `… underlying (DenseLayer)`); it must produce a feed-forward output.
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let u = &*self.underlying;
        if u.is_output() {
            return Err(cx.err(format!(
                "TimeDistributed cannot wrap an output layer ({}); use RnnOutputLayer for an \
                 output at every time step",
                u.type_name()
            )));
        }
        if matches!(
            u.unfrozen(),
            LayerConfig::LSTM(_)
                | LayerConfig::GravesLSTM(_)
                | LayerConfig::SimpleRnn(_)
                | LayerConfig::Bidirectional(_)
                | LayerConfig::TimeDistributed(_)
                | LayerConfig::MaskZeroLayer(_)
        ) {
            return Err(cx.err(format!(
                "TimeDistributed wraps a feed-forward layer, not a {} (a recurrent layer already \
                 reads the whole sequence)",
                u.type_name()
            )));
        }
        let (c, len) = cx.seq("TimeDistributed")?;
        let who = format!("{} underlying ({})", cx.who, u.type_name());
        let step = ShapeCx {
            who: &who,
            input: Shape::Flat(c),
            prev: cx.prev,
            from: cx.from,
        };
        match u.output_shape(&step)? {
            Shape::Flat(o) => Ok(Shape::Seq { c: o, len }),
            other => Err(cx.err(format!(
                "the wrapped {} outputs {other} for one step; TimeDistributed needs a \
                 feed-forward output",
                u.type_name()
            ))),
        }
    }

    /// The wrapped layer's `nIn` is the channels of one step.
    fn infer_n_in(&mut self, input: Shape) {
        if let Shape::Seq { c, .. } = input {
            self.underlying.infer_n_in(Shape::Flat(c));
        }
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        let Shape::Seq { c, .. } = shapes.input else {
            return Err(NnError::InvalidConfig(
                "TimeDistributed needs a recurrent input".into(),
            ));
        };
        // One step's shapes from the wrapped layer's own rule (a wrapper around this one may
        // pass its own output shape).
        let step = ShapeCx {
            who: "TimeDistributed underlying",
            input: Shape::Flat(c),
            prev: None,
            from: "one time step",
        };
        let output = self.underlying.output_shape(&step)?;
        let inner = self.underlying.build::<T>(LayerShapes::new(Shape::Flat(c), output))?;
        Ok(Box::new(PerStep::new(inner)))
    }
}
