//! Activation functions: forward in place on pre-activations, backward to `dL/dz`.
//!
//! Most derivatives can be written in terms of the output `a`, so layers keep only `a`; the few
//! that cannot (GELU, SWISH, CUBE, RATIONALTANH — [`Activation::needs_preactivation`]) also keep
//! the pre-activations `z` in an [`ActivationCache`].

use crate::config::Activation;
use ferrodl_tensor::{softmax_rows, Scalar};

/// Negative-side slope of LEAKYRELU (the reference's default).
pub const LEAKY_RELU_ALPHA: f64 = 0.01;
/// ELU's α (the reference's default).
pub const ELU_ALPHA: f64 = 1.0;
/// SELU's λ and α (Klambauer et al. 2017).
pub const SELU_LAMBDA: f64 = 1.050_700_987_355_480_5;
pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
/// GELU in the reference's default (non-"precise") form `z·σ(1.702 z)`.
pub const GELU_SIGMOID_SCALE: f64 = 1.702;
/// Scale of the rational tanh approximation `1.7159·tanh≈(2z/3)`.
pub const RATIONAL_TANH_SCALE: f64 = 1.7159;

#[inline]
fn sigmoid<T: Scalar>(z: T) -> T {
    T::one() / (T::one() + (-z).exp())
}

/// `tanh(y) ≈ sgn(y)·(1 − 1/(1 + |y| + y² + 1.41645·y⁴))` and its derivative.
#[inline]
fn rational_tanh_parts<T: Scalar>(y: T) -> (T, T) {
    let c = T::of(1.41645);
    let ay = y.abs();
    let y2 = y * y;
    let den = T::one() + ay + y2 + c * y2 * y2;
    let value = y.signum() * (T::one() - T::one() / den);
    // d/dy of 1 − 1/den is den'/den² with den' = sgn(y) + 2y + 4c y³; times sgn(y) for the value.
    let dden = y.signum() + T::of(2.0) * y + T::of(4.0) * c * y2 * y;
    let deriv = y.signum() * dden / (den * den);
    (value, deriv)
}

impl Activation {
    /// All names accepted in JSON, for messages.
    pub const NAMES: [&'static str; 17] = [
        "IDENTITY",
        "RELU",
        "RELU6",
        "LEAKYRELU",
        "ELU",
        "SELU",
        "GELU",
        "SWISH",
        "TANH",
        "HARDTANH",
        "SIGMOID",
        "HARDSIGMOID",
        "SOFTMAX",
        "SOFTPLUS",
        "SOFTSIGN",
        "CUBE",
        "RATIONALTANH",
    ];

    /// Every activation, in [`NAMES`](Self::NAMES) order (for tests and documentation).
    pub const ALL: [Activation; 17] = [
        Activation::Identity,
        Activation::Relu,
        Activation::Relu6,
        Activation::LeakyRelu,
        Activation::Elu,
        Activation::Selu,
        Activation::Gelu,
        Activation::Swish,
        Activation::Tanh,
        Activation::HardTanh,
        Activation::Sigmoid,
        Activation::HardSigmoid,
        Activation::Softmax,
        Activation::SoftPlus,
        Activation::SoftSign,
        Activation::Cube,
        Activation::RationalTanh,
    ];

    /// `true` when the activation acts on each element independently (everything but SOFTMAX).
    pub fn is_elementwise(self) -> bool {
        self != Activation::Softmax
    }

    /// `true` when the derivative needs `z`, not just `a = act(z)`.
    pub fn needs_preactivation(self) -> bool {
        matches!(
            self,
            Activation::Gelu | Activation::Swish | Activation::Cube | Activation::RationalTanh
        )
    }

    /// Applies the activation to a single value (elementwise activations only).
    #[inline]
    pub(crate) fn scalar<T: Scalar>(self, z: T) -> T {
        let zero = T::zero();
        let one = T::one();
        match self {
            Activation::Identity | Activation::Softmax => z,
            Activation::Relu => z.max(zero),
            Activation::Relu6 => z.max(zero).min(T::of(6.0)),
            Activation::LeakyRelu => {
                if z > zero {
                    z
                } else {
                    z * T::of(LEAKY_RELU_ALPHA)
                }
            }
            Activation::Elu => {
                if z > zero {
                    z
                } else {
                    T::of(ELU_ALPHA) * z.exp_m1()
                }
            }
            Activation::Selu => {
                let l = T::of(SELU_LAMBDA);
                if z > zero {
                    l * z
                } else {
                    l * T::of(SELU_ALPHA) * z.exp_m1()
                }
            }
            Activation::Gelu => z * sigmoid(T::of(GELU_SIGMOID_SCALE) * z),
            Activation::Swish => z * sigmoid(z),
            Activation::Tanh => z.tanh(),
            Activation::HardTanh => z.max(-one).min(one),
            Activation::Sigmoid => sigmoid(z),
            Activation::HardSigmoid => (T::of(0.2) * z + T::of(0.5)).max(zero).min(one),
            Activation::SoftPlus => {
                // ln(1 + e^z) without overflow: max(z, 0) + ln(1 + e^-|z|).
                z.max(zero) + (-z.abs()).exp().ln_1p()
            }
            Activation::SoftSign => z / (one + z.abs()),
            Activation::Cube => z * z * z,
            Activation::RationalTanh => {
                T::of(RATIONAL_TANH_SCALE) * rational_tanh_parts(T::of(2.0 / 3.0) * z).0
            }
        }
    }

    /// `dact/dz` of an elementwise activation from `z` (when needed) and `a`.
    #[inline]
    pub(crate) fn derivative<T: Scalar>(self, z: T, a: T) -> T {
        let zero = T::zero();
        let one = T::one();
        let step = |on: bool| if on { one } else { zero };
        match self {
            Activation::Identity | Activation::Softmax => one,
            Activation::Relu => step(a > zero),
            Activation::Relu6 => step(a > zero && a < T::of(6.0)),
            // a > 0 exactly when z > 0 because the negative-side slopes are positive.
            Activation::LeakyRelu => {
                if a > zero {
                    one
                } else {
                    T::of(LEAKY_RELU_ALPHA)
                }
            }
            Activation::Elu => {
                if a > zero {
                    one
                } else {
                    a + T::of(ELU_ALPHA)
                }
            }
            Activation::Selu => {
                let l = T::of(SELU_LAMBDA);
                if a > zero {
                    l
                } else {
                    a + l * T::of(SELU_ALPHA)
                }
            }
            Activation::Gelu => {
                let k = T::of(GELU_SIGMOID_SCALE);
                let s = sigmoid(k * z);
                s + k * z * s * (one - s)
            }
            Activation::Swish => {
                let s = sigmoid(z);
                s + a * (one - s)
            }
            Activation::Tanh => one - a * a,
            Activation::HardTanh => step(a > -one && a < one),
            Activation::Sigmoid => a * (one - a),
            Activation::HardSigmoid => {
                if a > zero && a < one {
                    T::of(0.2)
                } else {
                    zero
                }
            }
            // σ(z) = 1 − e^(−a)
            Activation::SoftPlus => -(-a).exp_m1(),
            // 1/(1+|z|)² = (1 − |a|)²
            Activation::SoftSign => (one - a.abs()) * (one - a.abs()),
            Activation::Cube => T::of(3.0) * z * z,
            Activation::RationalTanh => {
                let c = T::of(2.0 / 3.0);
                T::of(RATIONAL_TANH_SCALE) * c * rational_tanh_parts(c * z).1
            }
        }
    }

    /// Replaces the pre-activations `z` (a `rows × cols` matrix) by `act(z)`.
    pub fn forward_in_place<T: Scalar>(self, z: &mut [T], cols: usize) {
        match self {
            Activation::Identity => {}
            Activation::Softmax => softmax_rows(z, cols),
            Activation::Relu => z.iter_mut().for_each(|v| *v = v.max(T::zero())),
            _ => z.iter_mut().for_each(|v| *v = self.scalar(*v)),
        }
    }

    /// Adds `bias` to every row of `z` and applies the activation in one pass over the data
    /// (the fused form layers use after their GEMM).
    pub fn bias_forward_in_place<T: Scalar>(self, z: &mut [T], cols: usize, bias: Option<&[T]>) {
        match (bias, self) {
            (Some(b), Activation::Relu) => {
                for row in z.chunks_exact_mut(cols) {
                    for (v, &bi) in row.iter_mut().zip(b) {
                        *v = (*v + bi).max(T::zero());
                    }
                }
            }
            (Some(b), Activation::Identity) => ferrodl_tensor::add_row_vector(z, cols, b),
            (Some(b), a) if a.is_elementwise() => {
                for row in z.chunks_exact_mut(cols) {
                    for (v, &bi) in row.iter_mut().zip(b) {
                        *v = self.scalar(*v + bi);
                    }
                }
            }
            (Some(b), _) => {
                ferrodl_tensor::add_row_vector(z, cols, b);
                self.forward_in_place(z, cols);
            }
            (None, _) => self.forward_in_place(z, cols),
        }
    }

    /// Turns `delta = dL/da` into `dL/dz` in place, given `a = act(z)` and, for activations that
    /// [need it](Self::needs_preactivation), `z` (ignored otherwise).
    pub fn backward_in_place<T: Scalar>(
        self,
        z: Option<&[T]>,
        a: &[T],
        delta: &mut [T],
        cols: usize,
    ) {
        debug_assert_eq!(a.len(), delta.len());
        match self {
            Activation::Identity => {}
            Activation::Relu => {
                // A select, not a branch: on real activations the sign is a coin flip and a
                // mispredicted branch per value cost 14x (measured on LeNet's conv1 output).
                for (d, &ai) in delta.iter_mut().zip(a) {
                    *d = if ai > T::zero() { *d } else { T::zero() };
                }
            }
            Activation::Softmax => {
                // Jacobian-vector product of softmax: dz_j = a_j (da_j - Σ_k da_k a_k).
                for (drow, arow) in delta.chunks_exact_mut(cols).zip(a.chunks_exact(cols)) {
                    let dot: T = drow.iter().zip(arow).map(|(&d, &ai)| d * ai).sum();
                    for (d, &ai) in drow.iter_mut().zip(arow) {
                        *d = ai * (*d - dot);
                    }
                }
            }
            _ if self.needs_preactivation() => {
                let z = z.expect("activation needs its pre-activations");
                debug_assert_eq!(z.len(), a.len());
                for ((d, &zi), &ai) in delta.iter_mut().zip(z).zip(a) {
                    *d = *d * self.derivative(zi, ai);
                }
            }
            _ => {
                for (d, &ai) in delta.iter_mut().zip(a) {
                    *d = *d * self.derivative(T::zero(), ai);
                }
            }
        }
    }
}

/// An activation plus the pre-activation copy the few `z`-dependent derivatives need; layers
/// own one and reuse its buffer across iterations.
#[derive(Clone, Debug, Default)]
pub struct ActivationCache<T> {
    pub activation: Activation,
    z: Vec<T>,
}

impl<T: Scalar> ActivationCache<T> {
    pub fn new(activation: Activation) -> Self {
        ActivationCache {
            activation,
            z: Vec::new(),
        }
    }

    /// Room for the pre-activations of `len` values when the derivative needs them (checked
    /// against the native memory budget; nothing otherwise).
    pub fn reserve(
        &mut self,
        len: usize,
        who: &str,
    ) -> Result<(), ferrodl_tensor::memory::MemoryError> {
        if !self.activation.needs_preactivation() {
            return Ok(());
        }
        ferrodl_tensor::memory::try_capacity(&mut self.z, len, || {
            format!("the pre-activations ({:?}) of {who}", self.activation)
        })
    }

    /// `out` holds `x·W` (or any pre-bias value): adds `bias` per row (when given) and applies the
    /// activation, keeping `z` when the derivative needs it.
    pub fn forward(&mut self, out: &mut [T], cols: usize, bias: Option<&[T]>) {
        if self.activation.needs_preactivation() {
            if let Some(b) = bias {
                ferrodl_tensor::add_row_vector(out, cols, b);
            }
            self.z.clear();
            self.z.extend_from_slice(out);
            self.activation.forward_in_place(out, cols);
        } else {
            self.activation.bias_forward_in_place(out, cols, bias);
        }
    }

    /// `delta = dL/da` -> `dL/dz`, with `a` the output of the last [`forward`](Self::forward).
    pub fn backward(&self, a: &[T], delta: &mut [T], cols: usize) {
        let z = self
            .activation
            .needs_preactivation()
            .then(|| &self.z[..a.len()]);
        self.activation.backward_in_place(z, a, delta, cols);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every derivative against a central difference of `scalar` at points away from kinks.
    #[test]
    fn derivatives_match_finite_differences() {
        let h = 1e-6;
        for act in Activation::ALL {
            if !act.is_elementwise() {
                continue;
            }
            for &z in &[-2.7, -0.9, -0.3, 0.2, 0.45, 0.8, 1.7, 3.3, 6.5] {
                let a = act.scalar::<f64>(z);
                let num = (act.scalar::<f64>(z + h) - act.scalar::<f64>(z - h)) / (2.0 * h);
                let ana = act.derivative::<f64>(z, a);
                assert!(
                    (num - ana).abs() <= 1e-6 * num.abs().max(1.0),
                    "{act:?} at z={z}: numeric {num}, analytic {ana}"
                );
            }
        }
    }

    #[test]
    fn reference_values() {
        let f = |a: Activation, z: f64| a.scalar::<f64>(z);
        assert_eq!(f(Activation::Relu6, 7.5), 6.0);
        assert_eq!(f(Activation::HardSigmoid, 1.0), 0.7);
        assert_eq!(f(Activation::HardTanh, -3.0), -1.0);
        assert!((f(Activation::Elu, -1.0) - (1f64.exp().recip() - 1.0)).abs() < 1e-15);
        assert!((f(Activation::Selu, 1.0) - SELU_LAMBDA).abs() < 1e-15);
        assert!((f(Activation::SoftPlus, 0.0) - 2f64.ln()).abs() < 1e-15);
        assert!((f(Activation::SoftPlus, 800.0) - 800.0).abs() < 1e-12);
        assert_eq!(f(Activation::SoftSign, 3.0), 0.75);
        assert_eq!(f(Activation::Cube, -2.0), -8.0);
        // rational tanh at z = 1.5: y = 1, den = 1 + 1 + 1 + 1.41645
        let want = RATIONAL_TANH_SCALE * (1.0 - 1.0 / 4.41645);
        assert!((f(Activation::RationalTanh, 1.5) - want).abs() < 1e-12);
        let want = 2.0 / (1.0 + (-1.702f64 * 2.0).exp());
        assert!((f(Activation::Gelu, 2.0) - want).abs() < 1e-12);
    }
}
