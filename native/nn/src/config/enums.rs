//! Enumerations of the configuration JSON (the reference's names, ARCHITECTURE.md §2.2).

use serde::{Deserialize, Serialize};

/// Activation functions. The maths lives in `crate::activation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum Activation {
    Identity,
    Relu,
    /// `min(max(z, 0), 6)`.
    Relu6,
    /// Leaky ReLU with the reference's default slope 0.01 for negative inputs.
    #[serde(rename = "LEAKYRELU")]
    LeakyRelu,
    /// `z` for `z > 0`, `α(eᶻ − 1)` otherwise, α = 1.
    Elu,
    Selu,
    Gelu,
    Swish,
    Tanh,
    #[serde(rename = "HARDTANH")]
    HardTanh,
    #[default]
    Sigmoid,
    #[serde(rename = "HARDSIGMOID")]
    HardSigmoid,
    Softmax,
    #[serde(rename = "SOFTPLUS")]
    SoftPlus,
    #[serde(rename = "SOFTSIGN")]
    SoftSign,
    Cube,
    #[serde(rename = "RATIONALTANH")]
    RationalTanh,
}

/// Loss functions of output and loss layers. The maths lives in `crate::loss`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LossFunction {
    /// Multi-class cross entropy `-Σ y·ln(p)`.
    #[default]
    Mcxent,
    /// Same maths as MCXENT (the reference keeps both names).
    #[serde(rename = "NEGATIVELOGLIKELIHOOD")]
    NegativeLogLikelihood,
    /// Mean squared error `Σ(y-ŷ)²/nOut` per example.
    Mse,
    /// `Σ|y-ŷ|` per example.
    L1,
    /// `Σ(y-ŷ)²` per example.
    L2,
    /// Binary cross entropy `-Σ [y ln p + (1-y) ln(1-p)]`.
    Xent,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    Hinge,
    SquaredHinge,
    KlDivergence,
    CosineProximity,
    Poisson,
}

/// Weight initialisation schemes (fan-in/fan-out per layer kind, ARCHITECTURE.md §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WeightInit {
    /// Normal with std `sqrt(2 / (fanIn + fanOut))`.
    #[default]
    Xavier,
    /// Uniform in `±sqrt(6 / (fanIn + fanOut))`.
    XavierUniform,
    /// Normal with std `sqrt(1 / fanIn)`.
    XavierFanIn,
    /// Normal with std `sqrt(2 / fanIn)` (He et al.).
    Relu,
    /// Uniform in `±sqrt(6 / fanIn)`.
    ReluUniform,
    /// Truncated normal (±2σ) with std `sqrt(1 / fanIn)`.
    LecunNormal,
    /// Uniform in `±sqrt(3 / fanIn)`.
    LecunUniform,
    /// Normal with std `1 / sqrt(fanIn)`.
    Normal,
    /// Uniform in `±1 / sqrt(fanIn)`.
    Uniform,
    Zero,
    Ones,
    /// The identity matrix (square dense weights; convolutions with odd square kernels and
    /// nIn == nOut: a centred delta per channel).
    Identity,
    /// Drawn from `weightInitDistribution`.
    Distribution,
}

/// The distribution of `WeightInit::Distribution`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum Distribution {
    Normal {
        mean: f64,
        std: f64,
    },
    Uniform {
        lower: f64,
        upper: f64,
    },
    /// Normal redrawn until within two standard deviations of the mean.
    TruncatedNormal {
        mean: f64,
        std: f64,
    },
}

/// Gradient normalisation / clipping, applied to the raw gradient before regularization and
/// the updater (the reference's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum GradientNormalization {
    #[default]
    None,
    RenormalizeL2PerLayer,
    RenormalizeL2PerParamType,
    ClipElementWiseAbsoluteValue,
    ClipL2PerLayer,
    ClipL2PerParamType,
}

/// How convolution and subsampling layers size their output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum ConvolutionMode {
    /// `floor((in + 2p − d(k−1) − 1)/s) + 1`; border rows/columns that do not fit are dropped.
    #[default]
    Truncate,
    /// `ceil(in / s)`, padding chosen automatically (extra padding at the bottom/right).
    Same,
    /// As Truncate, but an error unless the division is exact.
    Strict,
    /// 1-D only: `d(k−1)` zeros before the sequence and none after, so output `t` sees inputs
    /// up to `t·s` only; output length `ceil(in / s)`.
    Causal,
}

/// Pooling of subsampling and global pooling layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum PoolingType {
    #[default]
    Max,
    Avg,
    Sum,
    Pnorm,
}

/// Layout of recurrent activations (the reference's `RNNFormat`): `NCW` = `[minibatch, size,
/// time]` (the default), `NWC` = `[minibatch, time, size]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum RnnFormat {
    #[default]
    NCW,
    NWC,
}

impl RnnFormat {
    pub fn is_ncw(&self) -> bool {
        *self == RnnFormat::NCW
    }
}

/// How a network backpropagates through time (the reference's `BackpropType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum BackpropType {
    #[default]
    Standard,
    #[serde(rename = "TruncatedBPTT")]
    TruncatedBptt,
}

impl BackpropType {
    pub fn is_standard(&self) -> bool {
        *self == BackpropType::Standard
    }
}
