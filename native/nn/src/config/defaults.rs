//! Default values of configuration fields (the reference's), named for serde's `default = ".."`.

use super::enums::Activation;
use serde::Deserialize;

/// `nIn`/`nOut` that the builder may leave unset: absent or null reads as 0, which
/// [`MultiLayerConfiguration::resolve`](super::MultiLayerConfiguration::resolve) infers and
/// validation otherwise refuses.
pub(crate) fn zero_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    Ok(Option::<usize>::deserialize(d)?.unwrap_or(0))
}

pub(crate) fn default_true() -> bool {
    true
}
pub(crate) fn default_one() -> f64 {
    1.0
}
pub(crate) fn default_decay() -> f64 {
    0.9
}
pub(crate) fn default_bn_eps() -> f64 {
    1e-5
}
pub(crate) fn default_pool_eps() -> f64 {
    1e-8
}
pub(crate) fn default_pnorm() -> u32 {
    2
}
pub(crate) fn default_kernel_2d() -> [usize; 2] {
    [5, 5]
}
pub(crate) fn default_kernel_1d() -> usize {
    5
}
pub(crate) fn ones_2d() -> [usize; 2] {
    [1, 1]
}
pub(crate) fn twos_2d() -> [usize; 2] {
    [2, 2]
}
pub(crate) fn one_usize() -> usize {
    1
}
pub(crate) fn two_usize() -> usize {
    2
}
pub(crate) fn identity_activation() -> Activation {
    Activation::Identity
}

pub(crate) fn tanh_activation() -> Activation {
    Activation::Tanh
}

pub(crate) fn sigmoid_activation() -> Activation {
    Activation::Sigmoid
}
