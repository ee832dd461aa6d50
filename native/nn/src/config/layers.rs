//! Layer objects of the configuration JSON (ARCHITECTURE.md §2.2).
//!
//! serde cannot combine `flatten` with `deny_unknown_fields`, so the fields every parameterised
//! ("base") layer shares are stamped into each struct by [`base_layer!`] and read back through
//! [`BaseConfig`].

use super::enums::*;
use ferrodl_optim::UpdaterConfig;
use serde::{Deserialize, Serialize};

/// `nIn`/`nOut` that the builder may leave unset: absent or null reads as 0, which
/// [`MultiLayerConfiguration::resolve`](super::MultiLayerConfiguration::resolve) infers and
/// validation otherwise refuses.
fn zero_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    Ok(Option::<usize>::deserialize(d)?.unwrap_or(0))
}

pub(crate) fn default_true() -> bool {
    true
}
fn default_one() -> f64 {
    1.0
}
fn default_decay() -> f64 {
    0.9
}
fn default_bn_eps() -> f64 {
    1e-5
}
fn default_pool_eps() -> f64 {
    1e-8
}
fn default_pnorm() -> u32 {
    2
}
fn default_kernel_2d() -> [usize; 2] {
    [5, 5]
}
fn default_kernel_1d() -> usize {
    5
}
fn ones_2d() -> [usize; 2] {
    [1, 1]
}
fn twos_2d() -> [usize; 2] {
    [2, 2]
}
fn one_usize() -> usize {
    1
}
fn two_usize() -> usize {
    2
}
fn identity_activation() -> Activation {
    Activation::Identity
}

/// The settings every parameterised layer has, borrowed from its configuration.
#[derive(Clone, Copy, Debug)]
pub struct BaseConfig<'a> {
    pub activation: Activation,
    pub weight_init: WeightInit,
    pub weight_init_distribution: Option<Distribution>,
    pub bias_init: f64,
    pub l1: f64,
    pub l2: f64,
    pub l1_bias: f64,
    pub l2_bias: f64,
    pub weight_decay: f64,
    pub weight_decay_bias: f64,
    pub updater: &'a UpdaterConfig,
    pub bias_updater: &'a UpdaterConfig,
    pub gradient_normalization: GradientNormalization,
    pub gradient_normalization_threshold: f64,
}

/// Declares a parameterised layer configuration: the base fields, then the layer's own.
macro_rules! base_layer {
    ($(#[$sm:meta])* $name:ident, default_activation = $da:expr, { $($(#[$fm:meta])* $f:ident : $t:ty,)* }) => {
        $(#[$sm])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            #[serde(default)]
            pub name: Option<String>,
            /// Retain probability of this layer's input (0 or 1: no dropout).
            #[serde(default)]
            pub drop_out: f64,
            #[serde(default = $da)]
            pub activation: Activation,
            #[serde(default)]
            pub weight_init: WeightInit,
            #[serde(default)]
            pub weight_init_distribution: Option<Distribution>,
            #[serde(default)]
            pub bias_init: f64,
            #[serde(default)]
            pub l1: f64,
            #[serde(default)]
            pub l2: f64,
            #[serde(default)]
            pub l1_bias: f64,
            #[serde(default)]
            pub l2_bias: f64,
            #[serde(default)]
            pub weight_decay: f64,
            #[serde(default)]
            pub weight_decay_bias: f64,
            #[serde(default)]
            pub updater: UpdaterConfig,
            #[serde(default)]
            pub bias_updater: UpdaterConfig,
            #[serde(default)]
            pub gradient_normalization: GradientNormalization,
            #[serde(default = "default_one")]
            pub gradient_normalization_threshold: f64,
            $($(#[$fm])* pub $f: $t,)*
        }

        impl $name {
            pub fn base(&self) -> BaseConfig<'_> {
                BaseConfig {
                    activation: self.activation,
                    weight_init: self.weight_init,
                    weight_init_distribution: self.weight_init_distribution,
                    bias_init: self.bias_init,
                    l1: self.l1,
                    l2: self.l2,
                    l1_bias: self.l1_bias,
                    l2_bias: self.l2_bias,
                    weight_decay: self.weight_decay,
                    weight_decay_bias: self.weight_decay_bias,
                    updater: &self.updater,
                    bias_updater: &self.bias_updater,
                    gradient_normalization: self.gradient_normalization,
                    gradient_normalization_threshold: self.gradient_normalization_threshold,
                }
            }
        }
    };
}

base_layer!(
    /// A fully connected layer: `a = act(x·W + b)`.
    DenseLayerConfig, default_activation = "Activation::default", {
        #[serde(default, deserialize_with = "zero_if_null")]
        n_in: usize,
        n_out: usize,
        #[serde(default = "default_true")]
        has_bias: bool,
    }
);

base_layer!(
    /// A dense layer with a loss function; must be the last layer.
    OutputLayerConfig, default_activation = "Activation::default", {
        #[serde(default, deserialize_with = "zero_if_null")]
        n_in: usize,
        n_out: usize,
        #[serde(default = "default_true")]
        has_bias: bool,
        #[serde(default)]
        loss_function: LossFunction,
        /// Per-output weights of the loss (nOut values), or none.
        #[serde(default)]
        loss_weights: Option<Vec<f64>>,
    }
);

base_layer!(
    /// Batch normalization over features (dense input) or channels (convolutional input).
    BatchNormalizationConfig, default_activation = "identity_activation", {
        #[serde(default, deserialize_with = "zero_if_null")]
        n_in: usize,
        #[serde(default, deserialize_with = "zero_if_null")]
        n_out: usize,
        #[serde(default = "default_decay")]
        decay: f64,
        #[serde(default = "default_bn_eps")]
        eps: f64,
        #[serde(default)]
        lock_gamma_beta: bool,
        #[serde(default = "default_one")]
        gamma: f64,
        #[serde(default)]
        beta: f64,
    }
);

base_layer!(
    /// 2-D convolution over NCHW input; weights `[nOut, nIn, kH, kW]`.
    ConvolutionLayerConfig, default_activation = "Activation::default", {
        #[serde(default, deserialize_with = "zero_if_null")]
        n_in: usize,
        n_out: usize,
        #[serde(default = "default_kernel_2d")]
        kernel_size: [usize; 2],
        #[serde(default = "ones_2d")]
        stride: [usize; 2],
        #[serde(default)]
        padding: [usize; 2],
        #[serde(default = "ones_2d")]
        dilation: [usize; 2],
        #[serde(default)]
        convolution_mode: ConvolutionMode,
        #[serde(default = "default_true")]
        has_bias: bool,
    }
);

base_layer!(
    /// 1-D convolution over `[C, L]` input; weights `[nOut, nIn, k]`.
    Convolution1DLayerConfig, default_activation = "Activation::default", {
        #[serde(default, deserialize_with = "zero_if_null")]
        n_in: usize,
        n_out: usize,
        #[serde(default = "default_kernel_1d")]
        kernel_size: usize,
        #[serde(default = "one_usize")]
        stride: usize,
        #[serde(default)]
        padding: usize,
        #[serde(default = "one_usize")]
        dilation: usize,
        #[serde(default)]
        convolution_mode: ConvolutionMode,
        #[serde(default = "default_true")]
        has_bias: bool,
    }
);

base_layer!(
    /// A lookup table: the input is one column of indices in `[0, nIn)`, the output row `i` is
    /// `act(W[index_i] + b)`.
    EmbeddingLayerConfig, default_activation = "Activation::default", {
        #[serde(default, deserialize_with = "zero_if_null")]
        n_in: usize,
        n_out: usize,
        #[serde(default)]
        has_bias: bool,
    }
);

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

/// Dropout as a layer of its own (`dropOut` is its retain probability).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DropoutLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
}

/// 2-D pooling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubsamplingLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub pooling_type: PoolingType,
    #[serde(default = "ones_2d")]
    pub kernel_size: [usize; 2],
    #[serde(default = "twos_2d")]
    pub stride: [usize; 2],
    #[serde(default)]
    pub padding: [usize; 2],
    #[serde(default = "ones_2d")]
    pub dilation: [usize; 2],
    #[serde(default)]
    pub convolution_mode: ConvolutionMode,
    #[serde(default = "default_pnorm")]
    pub pnorm: u32,
    #[serde(default = "default_pool_eps")]
    pub eps: f64,
}

/// 1-D pooling over `[C, L]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Subsampling1DLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub pooling_type: PoolingType,
    #[serde(default = "two_usize")]
    pub kernel_size: usize,
    #[serde(default = "one_usize")]
    pub stride: usize,
    #[serde(default)]
    pub padding: usize,
    #[serde(default = "one_usize")]
    pub dilation: usize,
    #[serde(default)]
    pub convolution_mode: ConvolutionMode,
    #[serde(default = "default_pnorm")]
    pub pnorm: u32,
    #[serde(default = "default_pool_eps")]
    pub eps: f64,
}

/// Nearest-neighbour upsampling: each pixel repeated `size[0] × size[1]` times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Upsampling2DConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default = "ones_2d")]
    pub size: [usize; 2],
}

/// Zeros around the image: `[top, bottom, left, right]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZeroPaddingLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub padding: [usize; 4],
}

/// Pooling over all spatial positions (or time steps): `[C,H,W]`/`[C,L]` -> `[C]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GlobalPoolingLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub pooling_type: PoolingType,
    #[serde(default = "default_pnorm")]
    pub pnorm: u32,
    #[serde(default = "default_true")]
    pub collapse_dimensions: bool,
}

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

/// One layer of the configuration, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum LayerConfig {
    DenseLayer(DenseLayerConfig),
    OutputLayer(OutputLayerConfig),
    LossLayer(LossLayerConfig),
    ActivationLayer(ActivationLayerConfig),
    DropoutLayer(DropoutLayerConfig),
    BatchNormalization(BatchNormalizationConfig),
    ConvolutionLayer(ConvolutionLayerConfig),
    Convolution1DLayer(Convolution1DLayerConfig),
    SubsamplingLayer(SubsamplingLayerConfig),
    Subsampling1DLayer(Subsampling1DLayerConfig),
    Upsampling2D(Upsampling2DConfig),
    ZeroPaddingLayer(ZeroPaddingLayerConfig),
    GlobalPoolingLayer(GlobalPoolingLayerConfig),
    EmbeddingLayer(EmbeddingLayerConfig),
    FrozenLayer(FrozenLayerConfig),
}

/// Runs `$body` with `$c` bound to the inner configuration, whatever the variant.
macro_rules! each_variant {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            LayerConfig::DenseLayer($c) => $body,
            LayerConfig::OutputLayer($c) => $body,
            LayerConfig::LossLayer($c) => $body,
            LayerConfig::ActivationLayer($c) => $body,
            LayerConfig::DropoutLayer($c) => $body,
            LayerConfig::BatchNormalization($c) => $body,
            LayerConfig::ConvolutionLayer($c) => $body,
            LayerConfig::Convolution1DLayer($c) => $body,
            LayerConfig::SubsamplingLayer($c) => $body,
            LayerConfig::Subsampling1DLayer($c) => $body,
            LayerConfig::Upsampling2D($c) => $body,
            LayerConfig::ZeroPaddingLayer($c) => $body,
            LayerConfig::GlobalPoolingLayer($c) => $body,
            LayerConfig::EmbeddingLayer($c) => $body,
            LayerConfig::FrozenLayer($c) => $body,
        }
    };
}

impl LayerConfig {
    /// The JSON `type` name.
    pub fn type_name(&self) -> &'static str {
        match self {
            LayerConfig::DenseLayer(_) => "DenseLayer",
            LayerConfig::OutputLayer(_) => "OutputLayer",
            LayerConfig::LossLayer(_) => "LossLayer",
            LayerConfig::ActivationLayer(_) => "ActivationLayer",
            LayerConfig::DropoutLayer(_) => "DropoutLayer",
            LayerConfig::BatchNormalization(_) => "BatchNormalization",
            LayerConfig::ConvolutionLayer(_) => "ConvolutionLayer",
            LayerConfig::Convolution1DLayer(_) => "Convolution1DLayer",
            LayerConfig::SubsamplingLayer(_) => "SubsamplingLayer",
            LayerConfig::Subsampling1DLayer(_) => "Subsampling1DLayer",
            LayerConfig::Upsampling2D(_) => "Upsampling2D",
            LayerConfig::ZeroPaddingLayer(_) => "ZeroPaddingLayer",
            LayerConfig::GlobalPoolingLayer(_) => "GlobalPoolingLayer",
            LayerConfig::EmbeddingLayer(_) => "EmbeddingLayer",
            LayerConfig::FrozenLayer(_) => "FrozenLayer",
        }
    }

    pub fn name(&self) -> Option<&str> {
        each_variant!(self, c => c.name.as_deref())
    }

    /// Retain probability of the input (0 or 1: no dropout); a DropoutLayer's own is not an
    /// input dropout, so it reports 0 here. An EmbeddingLayer's input is a column of indices,
    /// which dropout would corrupt: like the reference, its `dropOut` is not applied.
    pub fn input_drop_out(&self) -> f64 {
        match self {
            LayerConfig::DropoutLayer(_) => 0.0,
            _ if matches!(self.unfrozen(), LayerConfig::EmbeddingLayer(_)) => 0.0,
            _ => each_variant!(self, c => c.drop_out),
        }
    }

    /// The base settings of a parameterised layer (a frozen layer reports its inner layer's).
    pub fn base(&self) -> Option<BaseConfig<'_>> {
        match self {
            LayerConfig::DenseLayer(c) => Some(c.base()),
            LayerConfig::OutputLayer(c) => Some(c.base()),
            LayerConfig::BatchNormalization(c) => Some(c.base()),
            LayerConfig::ConvolutionLayer(c) => Some(c.base()),
            LayerConfig::Convolution1DLayer(c) => Some(c.base()),
            LayerConfig::EmbeddingLayer(c) => Some(c.base()),
            LayerConfig::FrozenLayer(c) => c.layer.base(),
            _ => None,
        }
    }

    /// The layer without its FrozenLayer wrapper(s).
    pub fn unfrozen(&self) -> &LayerConfig {
        match self {
            LayerConfig::FrozenLayer(c) => c.layer.unfrozen(),
            other => other,
        }
    }

    pub fn is_frozen(&self) -> bool {
        matches!(self, LayerConfig::FrozenLayer(_))
    }

    /// Whether this layer ends the network with a loss (OutputLayer or LossLayer).
    pub fn is_output(&self) -> bool {
        matches!(
            self.unfrozen(),
            LayerConfig::OutputLayer(_) | LayerConfig::LossLayer(_)
        )
    }

    /// Configured nIn for layers that have one.
    pub fn n_in(&self) -> Option<usize> {
        match self.unfrozen() {
            LayerConfig::DenseLayer(c) => Some(c.n_in),
            LayerConfig::OutputLayer(c) => Some(c.n_in),
            LayerConfig::BatchNormalization(c) => Some(c.n_in),
            LayerConfig::ConvolutionLayer(c) => Some(c.n_in),
            LayerConfig::Convolution1DLayer(c) => Some(c.n_in),
            LayerConfig::EmbeddingLayer(c) => Some(c.n_in),
            _ => None,
        }
    }

    /// Configured nOut for layers that have one.
    pub fn n_out(&self) -> Option<usize> {
        match self.unfrozen() {
            LayerConfig::DenseLayer(c) => Some(c.n_out),
            LayerConfig::OutputLayer(c) => Some(c.n_out),
            LayerConfig::BatchNormalization(c) => Some(c.n_out),
            LayerConfig::ConvolutionLayer(c) => Some(c.n_out),
            LayerConfig::Convolution1DLayer(c) => Some(c.n_out),
            LayerConfig::EmbeddingLayer(c) => Some(c.n_out),
            _ => None,
        }
    }

    /// The activation this layer applies, if any.
    pub fn activation(&self) -> Option<Activation> {
        match self.unfrozen() {
            LayerConfig::LossLayer(c) => Some(c.activation),
            LayerConfig::ActivationLayer(c) => Some(c.activation),
            other => other.base().map(|b| b.activation),
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
