//! Activation functions: forward in place on pre-activations, backward from the activations.
//!
//! Every supported activation's derivative can be written in terms of its output `a`, so layers
//! keep only `a` (no separate pre-activation buffer) and apply the activation in place right after
//! the bias is added.

use crate::config::Activation;
use ferrodl_tensor::{softmax_rows, Scalar};

/// Negative-side slope of LEAKYRELU (the reference's default).
pub const LEAKY_RELU_ALPHA: f64 = 0.01;

impl Activation {
    /// All names accepted in JSON, for messages.
    pub const NAMES: [&'static str; 6] = [
        "IDENTITY",
        "RELU",
        "LEAKYRELU",
        "TANH",
        "SIGMOID",
        "SOFTMAX",
    ];

    /// `true` when the activation acts on each element independently (everything but SOFTMAX).
    pub fn is_elementwise(self) -> bool {
        self != Activation::Softmax
    }

    /// Applies the activation to a single value (elementwise activations only).
    #[inline]
    fn scalar<T: Scalar>(self, z: T) -> T {
        match self {
            Activation::Identity | Activation::Softmax => z,
            Activation::Relu => z.max(T::zero()),
            Activation::LeakyRelu => {
                if z > T::zero() {
                    z
                } else {
                    z * T::of(LEAKY_RELU_ALPHA)
                }
            }
            Activation::Tanh => z.tanh(),
            Activation::Sigmoid => T::one() / (T::one() + (-z).exp()),
        }
    }

    /// Replaces the pre-activations `z` (a `rows × cols` matrix) by `act(z)`.
    pub fn forward_in_place<T: Scalar>(self, z: &mut [T], cols: usize) {
        match self {
            Activation::Identity => {}
            Activation::Softmax => softmax_rows(z, cols),
            _ => z.iter_mut().for_each(|v| *v = self.scalar(*v)),
        }
    }

    /// Adds `bias` to every row of `z` and applies the activation in one pass over the data
    /// (the fused form layers use after their GEMM).
    pub fn bias_forward_in_place<T: Scalar>(self, z: &mut [T], cols: usize, bias: Option<&[T]>) {
        match (bias, self.is_elementwise()) {
            (Some(b), true) => {
                for row in z.chunks_exact_mut(cols) {
                    for (v, &bi) in row.iter_mut().zip(b) {
                        *v = self.scalar(*v + bi);
                    }
                }
            }
            (Some(b), false) => {
                ferrodl_tensor::add_row_vector(z, cols, b);
                self.forward_in_place(z, cols);
            }
            (None, _) => self.forward_in_place(z, cols),
        }
    }

    /// Turns `delta = dL/da` into `dL/dz` in place, given the activations `a = act(z)`.
    pub fn backward_in_place<T: Scalar>(self, a: &[T], delta: &mut [T], cols: usize) {
        debug_assert_eq!(a.len(), delta.len());
        let zero = T::zero();
        let one = T::one();
        match self {
            Activation::Identity => {}
            Activation::Relu => {
                for (d, &ai) in delta.iter_mut().zip(a) {
                    if ai <= zero {
                        *d = zero;
                    }
                }
            }
            Activation::LeakyRelu => {
                // a > 0 exactly when z > 0 because alpha > 0.
                let alpha = T::of(LEAKY_RELU_ALPHA);
                for (d, &ai) in delta.iter_mut().zip(a) {
                    if ai <= zero {
                        *d = *d * alpha;
                    }
                }
            }
            Activation::Tanh => {
                for (d, &ai) in delta.iter_mut().zip(a) {
                    *d = *d * (one - ai * ai);
                }
            }
            Activation::Sigmoid => {
                for (d, &ai) in delta.iter_mut().zip(a) {
                    *d = *d * ai * (one - ai);
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
        }
    }
}
