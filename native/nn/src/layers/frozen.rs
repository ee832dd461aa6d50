//! `FrozenLayer`: a wrapper whose layer's parameters never change and which runs in inference
//! mode. The wrapped layer keeps its own shape rule and computation; the network reads the
//! frozenness from the configuration (no updater, no regularization, zero updates).

use super::{Layer, LayerKind};
use crate::config::{
    Activation, BaseConfig, LayerConfig, LayerFields, LayerShapes, Shape, ShapeCx,
};
use crate::NnError;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

/// A layer whose parameters never change; it runs in inference mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FrozenLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    pub layer: Box<LayerConfig>,
}

impl LayerFields for FrozenLayerConfig {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn drop_out(&self) -> f64 {
        self.drop_out
    }
    fn base(&self) -> Option<BaseConfig<'_>> {
        self.layer.base()
    }
    fn n_in(&self) -> Option<usize> {
        self.layer.n_in()
    }
    fn n_out(&self) -> Option<usize> {
        self.layer.n_out()
    }
    fn activation(&self) -> Option<Activation> {
        self.layer.activation()
    }
}

impl LayerKind for FrozenLayerConfig {
    fn rnn_format(&self) -> Option<crate::config::RnnFormat> {
        self.layer.rnn_format()
    }

    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        if self.layer.is_frozen() {
            return Err(cx.err("a FrozenLayer cannot wrap another FrozenLayer"));
        }
        self.layer.output_shape(cx)
    }

    fn infer_n_in(&mut self, input: Shape) {
        self.layer.infer_n_in(input);
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        self.layer.build::<T>(shapes)
    }
}
