//! Network configuration: the JSON of ARCHITECTURE.md §2, parsed with serde.
//!
//! Every struct denies unknown fields, so a field that only one side (Java or Rust) knows is an
//! error instead of being silently ignored. Fields that the reference builder fills with a default
//! may be omitted in hand-written JSON and take the reference's default; `nIn`/`nOut` and the layer
//! `type` are always required. Java always writes every field.

use crate::error::NnError;
use ferrodl_optim::{Adam, AnyUpdater, Nesterovs, Sgd};
use serde::{Deserialize, Serialize};

/// The only configuration format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Activation functions (JSON names as in the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Activation {
    #[serde(rename = "IDENTITY")]
    Identity,
    #[serde(rename = "RELU")]
    Relu,
    /// Leaky ReLU with the reference's default slope 0.01 for negative inputs.
    #[serde(rename = "LEAKYRELU")]
    LeakyRelu,
    #[serde(rename = "TANH")]
    Tanh,
    #[serde(rename = "SIGMOID")]
    #[default]
    Sigmoid,
    #[serde(rename = "SOFTMAX")]
    Softmax,
}

/// Weight initialisation schemes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum WeightInit {
    /// Normal with std `sqrt(2 / (nIn + nOut))`.
    #[serde(rename = "XAVIER")]
    #[default]
    Xavier,
    /// Normal with std `sqrt(2 / nIn)` (He et al.).
    #[serde(rename = "RELU")]
    Relu,
}

/// Loss functions of output layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum LossFunction {
    /// Multi-class cross entropy `-Σ y·ln(p)`.
    #[serde(rename = "MCXENT")]
    #[default]
    Mcxent,
    /// Same maths as MCXENT (the reference keeps both names).
    #[serde(rename = "NEGATIVELOGLIKELIHOOD")]
    NegativeLogLikelihood,
    /// Mean squared error `Σ(y-ŷ)²/nOut` per example.
    #[serde(rename = "MSE")]
    Mse,
}

fn default_sgd_lr() -> f64 {
    Sgd::default().learning_rate
}
fn default_adam_lr() -> f64 {
    Adam::default().learning_rate
}
fn default_beta1() -> f64 {
    Adam::default().beta1
}
fn default_beta2() -> f64 {
    Adam::default().beta2
}
fn default_epsilon() -> f64 {
    Adam::default().epsilon
}
fn default_nesterovs_lr() -> f64 {
    Nesterovs::default().learning_rate
}
fn default_momentum() -> f64 {
    Nesterovs::default().momentum
}

/// `{"type":"Sgd","learningRate"}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SgdConfig {
    #[serde(default = "default_sgd_lr")]
    pub learning_rate: f64,
}

/// `{"type":"Adam","learningRate","beta1","beta2","epsilon"}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdamConfig {
    #[serde(default = "default_adam_lr")]
    pub learning_rate: f64,
    #[serde(default = "default_beta1")]
    pub beta1: f64,
    #[serde(default = "default_beta2")]
    pub beta2: f64,
    #[serde(default = "default_epsilon")]
    pub epsilon: f64,
}

/// `{"type":"Nesterovs","learningRate","momentum"}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NesterovsConfig {
    #[serde(default = "default_nesterovs_lr")]
    pub learning_rate: f64,
    #[serde(default = "default_momentum")]
    pub momentum: f64,
}

/// An updater object of the configuration, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum UpdaterConfig {
    Sgd(SgdConfig),
    Adam(AdamConfig),
    Nesterovs(NesterovsConfig),
}

impl Default for UpdaterConfig {
    /// The reference's default updater: Sgd with learning rate 1e-3.
    fn default() -> Self {
        UpdaterConfig::Sgd(SgdConfig {
            learning_rate: default_sgd_lr(),
        })
    }
}

impl UpdaterConfig {
    /// The engine-side updater.
    pub fn to_updater(&self) -> AnyUpdater {
        match self {
            UpdaterConfig::Sgd(c) => AnyUpdater::Sgd(Sgd {
                learning_rate: c.learning_rate,
            }),
            UpdaterConfig::Adam(c) => AnyUpdater::Adam(Adam {
                learning_rate: c.learning_rate,
                beta1: c.beta1,
                beta2: c.beta2,
                epsilon: c.epsilon,
            }),
            UpdaterConfig::Nesterovs(c) => AnyUpdater::Nesterovs(Nesterovs {
                learning_rate: c.learning_rate,
                momentum: c.momentum,
            }),
        }
    }

    /// Checks value ranges; `what` names the place for the message (e.g. `layer 0 (DenseLayer) updater`).
    fn validate(&self, what: &str) -> Result<(), NnError> {
        let bad = |field: &str, v: f64, rule: &str| {
            Err(NnError::InvalidConfig(format!(
                "{what}: {field}={v} is invalid ({rule})"
            )))
        };
        let lr = match self {
            UpdaterConfig::Sgd(c) => c.learning_rate,
            UpdaterConfig::Adam(c) => c.learning_rate,
            UpdaterConfig::Nesterovs(c) => c.learning_rate,
        };
        if !(lr.is_finite() && lr >= 0.0) {
            return bad("learningRate", lr, "must be a finite number >= 0");
        }
        match self {
            UpdaterConfig::Sgd(_) => {}
            UpdaterConfig::Adam(c) => {
                for (name, v) in [("beta1", c.beta1), ("beta2", c.beta2)] {
                    if !(0.0..1.0).contains(&v) {
                        return bad(name, v, "must be in [0, 1)");
                    }
                }
                if !(c.epsilon.is_finite() && c.epsilon > 0.0) {
                    return bad("epsilon", c.epsilon, "must be a finite number > 0");
                }
            }
            UpdaterConfig::Nesterovs(c) => {
                if !(c.momentum.is_finite() && c.momentum >= 0.0) {
                    return bad("momentum", c.momentum, "must be a finite number >= 0");
                }
            }
        }
        Ok(())
    }
}

fn default_true() -> bool {
    true
}

/// A fully connected hidden layer: `a = act(x·W + b)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DenseLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    pub n_in: usize,
    pub n_out: usize,
    #[serde(default)]
    pub activation: Activation,
    #[serde(default)]
    pub weight_init: WeightInit,
    #[serde(default)]
    pub bias_init: f64,
    #[serde(default = "default_true")]
    pub has_bias: bool,
    #[serde(default)]
    pub l1: f64,
    #[serde(default)]
    pub l2: f64,
    #[serde(default)]
    pub l1_bias: f64,
    #[serde(default)]
    pub l2_bias: f64,
    #[serde(default)]
    pub updater: UpdaterConfig,
    #[serde(default)]
    pub bias_updater: UpdaterConfig,
}

/// A dense layer with a loss function; must be the last layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    pub n_in: usize,
    pub n_out: usize,
    #[serde(default)]
    pub activation: Activation,
    #[serde(default)]
    pub weight_init: WeightInit,
    #[serde(default)]
    pub bias_init: f64,
    #[serde(default = "default_true")]
    pub has_bias: bool,
    #[serde(default)]
    pub l1: f64,
    #[serde(default)]
    pub l2: f64,
    #[serde(default)]
    pub l1_bias: f64,
    #[serde(default)]
    pub l2_bias: f64,
    #[serde(default)]
    pub updater: UpdaterConfig,
    #[serde(default)]
    pub bias_updater: UpdaterConfig,
    #[serde(default)]
    pub loss_function: LossFunction,
}

impl OutputLayerConfig {
    /// The dense part of this output layer (everything but the loss).
    pub fn dense(&self) -> DenseLayerConfig {
        DenseLayerConfig {
            name: self.name.clone(),
            n_in: self.n_in,
            n_out: self.n_out,
            activation: self.activation,
            weight_init: self.weight_init,
            bias_init: self.bias_init,
            has_bias: self.has_bias,
            l1: self.l1,
            l2: self.l2,
            l1_bias: self.l1_bias,
            l2_bias: self.l2_bias,
            updater: self.updater.clone(),
            bias_updater: self.bias_updater.clone(),
        }
    }
}

/// One layer of the configuration, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum LayerConfig {
    DenseLayer(DenseLayerConfig),
    OutputLayer(OutputLayerConfig),
}

impl LayerConfig {
    /// The JSON `type` name.
    pub fn type_name(&self) -> &'static str {
        match self {
            LayerConfig::DenseLayer(_) => "DenseLayer",
            LayerConfig::OutputLayer(_) => "OutputLayer",
        }
    }

    pub fn name(&self) -> Option<&str> {
        match self {
            LayerConfig::DenseLayer(c) => c.name.as_deref(),
            LayerConfig::OutputLayer(c) => c.name.as_deref(),
        }
    }

    pub fn n_in(&self) -> usize {
        match self {
            LayerConfig::DenseLayer(c) => c.n_in,
            LayerConfig::OutputLayer(c) => c.n_in,
        }
    }

    pub fn n_out(&self) -> usize {
        match self {
            LayerConfig::DenseLayer(c) => c.n_out,
            LayerConfig::OutputLayer(c) => c.n_out,
        }
    }

    /// The dense part shared by both layer kinds.
    pub fn dense(&self) -> DenseLayerConfig {
        match self {
            LayerConfig::DenseLayer(c) => c.clone(),
            LayerConfig::OutputLayer(c) => c.dense(),
        }
    }

    /// `layer 2 (DenseLayer "hidden2")` — how messages name a layer.
    pub fn describe(&self, index: usize) -> String {
        match self.name() {
            Some(n) => format!("layer {index} ({} \"{n}\")", self.type_name()),
            None => format!("layer {index} ({})", self.type_name()),
        }
    }
}

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
    pub layers: Vec<LayerConfig>,
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
    layers: Vec<serde_json::Value>,
}

impl MultiLayerConfiguration {
    /// Parses and validates a configuration.
    pub fn from_json(json: &str) -> Result<Self, NnError> {
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
            layers,
        };
        conf.validate()?;
        Ok(conf)
    }

    /// Serialises to the §2 JSON shape (every field written).
    pub fn to_json(&self) -> String {
        // Serialising plain structs of numbers, strings and enums cannot fail; fall back to an
        // empty object rather than panicking should serde_json ever disagree.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Checks everything serde cannot: layer sizes, ordering, value ranges.
    pub fn validate(&self) -> Result<(), NnError> {
        let err = |m: String| Err(NnError::InvalidConfig(m));
        if self.format_version != FORMAT_VERSION {
            return err(format!(
                "unsupported configuration formatVersion {} (this build reads {FORMAT_VERSION})",
                self.format_version
            ));
        }
        if self.layers.is_empty() {
            return err(
                "the configuration has no layers (the last layer must be an OutputLayer)".into(),
            );
        }
        let last = self.layers.len() - 1;
        for (i, layer) in self.layers.iter().enumerate() {
            let who = layer.describe(i);
            let d = layer.dense();
            if d.n_in == 0 {
                return err(format!("{who}: nIn=0 is invalid (must be at least 1)"));
            }
            if d.n_out == 0 {
                return err(format!("{who}: nOut=0 is invalid (must be at least 1)"));
            }
            if i > 0 {
                let prev = &self.layers[i - 1];
                if prev.n_out() != d.n_in {
                    return err(format!(
                        "{who}: nIn={} does not match nOut={} of {}",
                        d.n_in,
                        prev.n_out(),
                        prev.describe(i - 1)
                    ));
                }
            }
            match layer {
                LayerConfig::OutputLayer(_) if i != last => {
                    return err(format!(
                        "{who}: an OutputLayer must be the last layer, but {} more layer(s) follow it",
                        last - i
                    ));
                }
                LayerConfig::DenseLayer(_) if i == last => {
                    return err(format!(
                        "{who}: the last layer must be an OutputLayer (it defines the loss function)"
                    ));
                }
                _ => {}
            }
            if d.activation == Activation::Softmax && d.n_out == 1 {
                return err(format!(
                    "{who}: activation SOFTMAX with nOut=1 always outputs 1 and cannot learn; \
                     use SIGMOID for a single output or nOut >= 2"
                ));
            }
            for (field, v) in [
                ("l1", d.l1),
                ("l2", d.l2),
                ("l1Bias", d.l1_bias),
                ("l2Bias", d.l2_bias),
            ] {
                if !(v.is_finite() && v >= 0.0) {
                    return err(format!(
                        "{who}: {field}={v} is invalid (must be a finite number >= 0)"
                    ));
                }
            }
            if !d.bias_init.is_finite() {
                return err(format!(
                    "{who}: biasInit={} is invalid (must be finite)",
                    d.bias_init
                ));
            }
            d.updater.validate(&format!("{who} updater"))?;
            d.bias_updater.validate(&format!("{who} biasUpdater"))?;
        }
        Ok(())
    }

    /// Total number of parameters the configuration describes.
    pub fn num_params(&self) -> usize {
        self.layers
            .iter()
            .map(|l| {
                let d = l.dense();
                d.n_in * d.n_out + if d.has_bias { d.n_out } else { 0 }
            })
            .sum()
    }
}
