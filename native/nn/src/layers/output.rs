//! The layers that end a network with a loss: `OutputLayer` (a dense layer whose activation and
//! loss the network applies as its head) and `LossLayer` (activation and loss on its input, no
//! parameters).

use super::dense::DenseLayer;
use super::misc::IdentityLayer;
use super::per_step::PerStep;
use super::{Layer, LayerKind};
use crate::config::defaults::*;
use crate::config::{Activation, LayerFields, LayerShapes, LossFunction, RnnFormat, Shape, ShapeCx};
use crate::NnError;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

crate::config::layers::base_layer!(
    /// A dense layer with a loss function; must be the last layer.
    OutputLayerConfig, default_activation = "crate::config::Activation::default", {
        #[serde(default = "default_true")]
        has_bias: bool,
        #[serde(default)]
        loss_function: LossFunction,
        /// Per-output weights of the loss (nOut values), or none.
        #[serde(default)]
        loss_weights: Option<Vec<f64>>,
    }
);

impl LayerKind for OutputLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        cx.flat_n_in(self.n_in)?;
        cx.positive("nOut", self.n_out)?;
        cx.loss_weights(&self.loss_weights, self.n_out)?;
        Ok(Shape::Flat(self.n_out))
    }

    /// nIn is the flat width of a feed-forward or convolutional input.
    fn infer_n_in(&mut self, input: Shape) {
        if self.n_in == 0 && !matches!(input, Shape::Seq { .. }) {
            self.n_in = input.len();
        }
    }

    /// The parameterised part: a dense layer with identity activation (the head applies the
    /// configured activation and the loss).
    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        let mut base = self.base();
        base.activation = Activation::Identity;
        Ok(Box::new(DenseLayer::new(
            "OutputLayer",
            shapes.input,
            self.n_out,
            self.has_bias,
            base,
        )))
    }
}

crate::config::layers::base_layer!(
    /// An output layer per time step: a dense layer applied at every step of a recurrent input,
    /// with a loss per step (masked steps count nowhere).
    RnnOutputLayerConfig, default_activation = "crate::config::Activation::default", {
        #[serde(default = "default_true")]
        has_bias: bool,
        #[serde(default)]
        loss_function: LossFunction,
        #[serde(default)]
        loss_weights: Option<Vec<f64>>,
        #[serde(default)]
        rnn_data_format: RnnFormat,
    }
);

impl LayerKind for RnnOutputLayerConfig {
    fn rnn_format(&self) -> Option<RnnFormat> {
        Some(self.rnn_data_format)
    }

    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (_, len) = super::recurrent::recurrent_input(cx, "RnnOutputLayer", self.n_in)?;
        cx.positive("nOut", self.n_out)?;
        cx.loss_weights(&self.loss_weights, self.n_out)?;
        Ok(Shape::Seq { c: self.n_out, len })
    }

    fn infer_n_in(&mut self, input: Shape) {
        super::recurrent::infer_recurrent_n_in(&mut self.n_in, input);
    }

    fn build<T: Scalar>(&self, _shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        let mut base = self.base();
        base.activation = Activation::Identity;
        Ok(Box::new(PerStep::new(Box::new(DenseLayer::new(
            "RnnOutputLayer",
            Shape::Flat(self.n_in),
            self.n_out,
            self.has_bias,
            base,
        )))))
    }
}

/// Activation and loss per time step on a recurrent input (no parameters).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RnnLossLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default = "identity_activation")]
    pub activation: Activation,
    #[serde(default)]
    pub loss_function: LossFunction,
    #[serde(default)]
    pub loss_weights: Option<Vec<f64>>,
    #[serde(default)]
    pub rnn_data_format: RnnFormat,
}

impl LayerFields for RnnLossLayerConfig {
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

impl LayerKind for RnnLossLayerConfig {
    fn rnn_format(&self) -> Option<RnnFormat> {
        Some(self.rnn_data_format)
    }

    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (c, len) = cx.seq("RnnLossLayer")?;
        cx.loss_weights(&self.loss_weights, c)?;
        Ok(Shape::Seq { c, len })
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        let Shape::Seq { c, .. } = shapes.input else {
            return Err(NnError::InvalidConfig("RnnLossLayer needs a recurrent input".into()));
        };
        Ok(Box::new(IdentityLayer::new("RnnLossLayer", Shape::Seq { c, len: 0 })))
    }
}

/// Activation and loss on the previous layer's output (no parameters); must be the last layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LossLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default = "identity_activation")]
    pub activation: Activation,
    #[serde(default)]
    pub loss_function: LossFunction,
    #[serde(default)]
    pub loss_weights: Option<Vec<f64>>,
}

impl LayerFields for LossLayerConfig {
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

impl LayerKind for LossLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        cx.loss_weights(&self.loss_weights, cx.input.len())?;
        Ok(cx.input)
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(IdentityLayer::new("LossLayer", shapes.input)))
    }
}
