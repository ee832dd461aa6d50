//! Network configuration: the JSON of ARCHITECTURE.md §2, parsed with serde, and its validation
//! (value ranges and the shape of every layer's input and output).
//!
//! Every struct denies unknown fields, so a field that only one side (Java or Rust) knows is an
//! error instead of being silently ignored. Fields that the reference builder fills with a default
//! may be omitted in hand-written JSON and take the reference's default; `nIn`/`nOut` and the layer
//! `type` are always required. Java always writes every field.

pub(crate) mod defaults;
mod enums;
mod graph;
mod info;
pub(crate) mod layers;
mod shapes;
mod validate;

pub use enums::*;
pub use ferrodl_optim::UpdaterConfig;
pub use graph::{ComputationGraphConfiguration, GraphPlan, GraphSource, GraphVertexConfig};
pub use layers::*;
pub use shapes::{window, InputType, Shape, Window};
pub use validate::{check_layer, infer_n_in, layer_num_params, LayerShapes, ShapeCx};

use crate::error::NnError;
use defaults::default_true;
use serde::{Deserialize, Serialize};

/// The only configuration format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A whole network configuration plus its training counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MultiLayerConfiguration {
    pub format_version: u32,
    /// Seed of the parameter initialisation (a Java `long`; its bits are used as a `u64`).
    pub seed: i64,
    #[serde(default = "default_true")]
    pub mini_batch: bool,
    #[serde(default)]
    pub iteration_count: u64,
    #[serde(default)]
    pub epoch_count: u64,
    /// What the input looks like (`setInputType`); `None`: feed-forward of the first nIn.
    #[serde(default)]
    pub input_type: Option<InputType>,
    /// Truncated backpropagation through time (`backpropType`, `tBPTTForwardLength`,
    /// `tBPTTBackwardLength`); written only when not the default.
    #[serde(default, skip_serializing_if = "BackpropType::is_standard")]
    pub backprop_type: BackpropType,
    #[serde(default = "default_tbptt", skip_serializing_if = "is_default_tbptt")]
    pub tbptt_fwd_length: usize,
    #[serde(default = "default_tbptt", skip_serializing_if = "is_default_tbptt")]
    pub tbptt_back_length: usize,
    /// Preprocessors given with `inputPreProcessor(i, p)`, by layer index (`"1"`); the engine
    /// infers the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_pre_processors: Option<std::collections::BTreeMap<String, crate::vertices::PreProcessorConfig>>,
    pub layers: Vec<LayerConfig>,
}

/// The reference's default truncated-BPTT segment length.
pub(crate) fn default_tbptt() -> usize {
    20
}

fn is_default_tbptt(v: &usize) -> bool {
    *v == 20
}

/// `tBPTTForwardLength` / `tBPTTBackwardLength` must be at least 1 under truncated BPTT.
pub(crate) fn check_tbptt(kind: BackpropType, fwd: usize, back: usize) -> Result<(), NnError> {
    if kind == BackpropType::TruncatedBptt && (fwd == 0 || back == 0) {
        return Err(NnError::InvalidConfig(format!(
            "truncated BPTT needs tBPTTForwardLength and tBPTTBackwardLength of at least 1 \
             (got {fwd} and {back})"
        )));
    }
    Ok(())
}

/// The top level with layers kept raw, so each layer can be parsed with its index in the message.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawConfiguration {
    format_version: u32,
    seed: i64,
    #[serde(default = "default_true")]
    mini_batch: bool,
    #[serde(default)]
    iteration_count: u64,
    #[serde(default)]
    epoch_count: u64,
    #[serde(default)]
    input_type: Option<InputType>,
    #[serde(default)]
    backprop_type: BackpropType,
    #[serde(default = "default_tbptt")]
    tbptt_fwd_length: usize,
    #[serde(default = "default_tbptt")]
    tbptt_back_length: usize,
    #[serde(default)]
    input_pre_processors: Option<std::collections::BTreeMap<String, crate::vertices::PreProcessorConfig>>,
    layers: Vec<serde_json::Value>,
}

impl MultiLayerConfiguration {
    /// Parses and validates a configuration.
    pub fn from_json(json: &str) -> Result<Self, NnError> {
        let conf = Self::parse_json(json)?;
        conf.validate()?;
        Ok(conf)
    }

    /// Parses without validating (unset `nIn` allowed): the input of [`resolve`](Self::resolve).
    pub fn parse_json(json: &str) -> Result<Self, NnError> {
        let raw: RawConfiguration = serde_json::from_str(json)
            .map_err(|e| NnError::InvalidConfig(format!("invalid configuration JSON: {e}")))?;
        if raw.format_version != FORMAT_VERSION {
            return Err(NnError::InvalidConfig(format!(
                "unsupported configuration formatVersion {} (this build reads {FORMAT_VERSION})",
                raw.format_version
            )));
        }
        let mut layers = Vec::with_capacity(raw.layers.len());
        for (i, v) in raw.layers.into_iter().enumerate() {
            let layer = LayerConfig::deserialize(v).map_err(|e| {
                NnError::InvalidConfig(format!("invalid configuration JSON: layer {i}: {e}"))
            })?;
            layers.push(layer);
        }
        let conf = MultiLayerConfiguration {
            format_version: raw.format_version,
            seed: raw.seed,
            mini_batch: raw.mini_batch,
            iteration_count: raw.iteration_count,
            epoch_count: raw.epoch_count,
            input_type: raw.input_type,
            backprop_type: raw.backprop_type,
            tbptt_fwd_length: raw.tbptt_fwd_length,
            tbptt_back_length: raw.tbptt_back_length,
            input_pre_processors: raw.input_pre_processors,
            layers,
        };
        Ok(conf)
    }

    /// Serialises to the §2 JSON shape (every field written).
    pub fn to_json(&self) -> String {
        // Serialising plain structs of numbers, strings and enums cannot fail; fall back to an
        // empty object rather than panicking should serde_json ever disagree.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}
