//! Loss functions with optional labels masks (ARCHITECTURE.md §3).
//!
//! Scores are sums over examples; the network divides by the number of examples (miniBatch).

use crate::config::{Activation, LossFunction};
use ferrodl_tensor::Scalar;

/// Lower clip of probabilities inside `ln` (the reference's value).
pub const LOG_CLIP_MIN: f64 = 1e-10;

/// A labels mask: `cols == 1` weights whole examples, `cols == nOut` weights single outputs.
#[derive(Clone, Copy, Debug)]
pub struct LabelsMask<'a, T> {
    pub data: &'a [T],
    pub cols: usize,
}

impl<T: Scalar> LabelsMask<'_, T> {
    /// Mask value of row `r`, column `c`.
    #[inline]
    fn at(&self, r: usize, c: usize) -> T {
        if self.cols == 1 {
            self.data[r]
        } else {
            self.data[r * self.cols + c]
        }
    }
}

#[inline]
fn mask_at<T: Scalar>(mask: Option<&LabelsMask<'_, T>>, r: usize, c: usize) -> T {
    mask.map_or(T::one(), |m| m.at(r, c))
}

impl LossFunction {
    pub const NAMES: [&'static str; 3] = ["MCXENT", "NEGATIVELOGLIKELIHOOD", "MSE"];

    fn is_cross_entropy(self) -> bool {
        matches!(
            self,
            LossFunction::Mcxent | LossFunction::NegativeLogLikelihood
        )
    }

    /// Sum over all examples of the (masked) per-example loss, accumulated in f64.
    /// `output` and `labels` are `rows × cols`.
    pub fn score_sum<T: Scalar>(
        self,
        output: &[T],
        labels: &[T],
        mask: Option<&LabelsMask<'_, T>>,
        cols: usize,
    ) -> f64 {
        let mut total = 0.0f64;
        for (r, (orow, yrow)) in output
            .chunks_exact(cols)
            .zip(labels.chunks_exact(cols))
            .enumerate()
        {
            for (c, (&o, &y)) in orow.iter().zip(yrow).enumerate() {
                let m = mask_at(mask, r, c).f64();
                if m == 0.0 {
                    continue;
                }
                let (o, y) = (o.f64(), y.f64());
                let l = if self.is_cross_entropy() {
                    -y * o.clamp(LOG_CLIP_MIN, 1.0).ln()
                } else {
                    (y - o) * (y - o) / cols as f64
                };
                total += m * l;
            }
        }
        total
    }

    /// Writes `dL/dz` (gradient with respect to the output layer's pre-activations) into `delta`,
    /// multiplied by `scale` (1/N for minibatch means). `output` holds the activations `a`.
    ///
    /// Softmax with cross entropy uses the fused form `dz_j = a_j·Σ_k m_k y_k − m_j y_j` (which is
    /// `a − y` for one-hot labels): it avoids dividing by tiny probabilities.
    #[allow(clippy::too_many_arguments)]
    pub fn delta<T: Scalar>(
        self,
        activation: Activation,
        output: &[T],
        labels: &[T],
        mask: Option<&LabelsMask<'_, T>>,
        cols: usize,
        scale: T,
        delta: &mut [T],
    ) {
        let rows_iter = output
            .chunks_exact(cols)
            .zip(labels.chunks_exact(cols))
            .zip(delta.chunks_exact_mut(cols))
            .enumerate();
        if self.is_cross_entropy() && activation == Activation::Softmax {
            for (r, ((arow, yrow), drow)) in rows_iter {
                let my_sum: T = (0..cols).map(|c| mask_at(mask, r, c) * yrow[c]).sum();
                for (c, ((&a, &y), d)) in arow.iter().zip(yrow).zip(drow.iter_mut()).enumerate() {
                    *d = scale * (a * my_sum - mask_at(mask, r, c) * y);
                }
            }
            return;
        }
        let lo = T::of(LOG_CLIP_MIN);
        let two_over_n = T::of(2.0 / cols as f64);
        for (r, ((arow, yrow), drow)) in rows_iter {
            for (c, ((&a, &y), d)) in arow.iter().zip(yrow).zip(drow.iter_mut()).enumerate() {
                let m = mask_at(mask, r, c);
                *d = if self.is_cross_entropy() {
                    // d/da of -y ln(clip(a)); zero where the clip is active.
                    if a >= lo && a <= T::one() {
                        -scale * m * y / a
                    } else {
                        T::zero()
                    }
                } else {
                    scale * m * two_over_n * (a - y)
                };
            }
        }
        activation.backward_in_place(output, delta, cols);
    }
}
