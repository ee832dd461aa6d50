//! Loss functions with optional per-output weights and labels masks (ARCHITECTURE.md §3).
//!
//! Per-example scores are sums over outputs of `weight_c · mask · ℓ(y_c, a_c)` (the "mean" losses
//! divide by nOut); the network divides the sum over examples by N (miniBatch). Gradients are
//! taken with respect to the activations `a` and then pushed through the activation, except for
//! the fused pairs softmax + MCXENT/NLL and sigmoid + XENT whose `dL/dz` is computed directly
//! (it avoids dividing by tiny probabilities).

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

#[inline]
fn clip_prob(p: f64) -> f64 {
    p.clamp(LOG_CLIP_MIN, 1.0)
}

impl LossFunction {
    pub const NAMES: [&'static str; 14] = [
        "MCXENT",
        "NEGATIVELOGLIKELIHOOD",
        "MSE",
        "L1",
        "L2",
        "XENT",
        "MEAN_ABSOLUTE_ERROR",
        "MEAN_ABSOLUTE_PERCENTAGE_ERROR",
        "MEAN_SQUARED_LOGARITHMIC_ERROR",
        "HINGE",
        "SQUARED_HINGE",
        "KL_DIVERGENCE",
        "COSINE_PROXIMITY",
        "POISSON",
    ];

    pub const ALL: [LossFunction; 14] = [
        LossFunction::Mcxent,
        LossFunction::NegativeLogLikelihood,
        LossFunction::Mse,
        LossFunction::L1,
        LossFunction::L2,
        LossFunction::Xent,
        LossFunction::MeanAbsoluteError,
        LossFunction::MeanAbsolutePercentageError,
        LossFunction::MeanSquaredLogarithmicError,
        LossFunction::Hinge,
        LossFunction::SquaredHinge,
        LossFunction::KlDivergence,
        LossFunction::CosineProximity,
        LossFunction::Poisson,
    ];

    fn is_multiclass_cross_entropy(self) -> bool {
        matches!(
            self,
            LossFunction::Mcxent | LossFunction::NegativeLogLikelihood
        )
    }

    /// Whether the per-output terms are averaged over nOut (the reference's "mean" losses).
    fn divides_by_n_out(self) -> bool {
        matches!(
            self,
            LossFunction::Mse
                | LossFunction::MeanAbsoluteError
                | LossFunction::MeanAbsolutePercentageError
                | LossFunction::MeanSquaredLogarithmicError
        )
    }

    /// Per-output loss `ℓ(y, a)` and its derivative `dℓ/da` (elementwise losses only).
    #[inline]
    fn term(self, y: f64, a: f64) -> (f64, f64) {
        match self {
            LossFunction::Mcxent | LossFunction::NegativeLogLikelihood => {
                let p = clip_prob(a);
                let d = if (LOG_CLIP_MIN..=1.0).contains(&a) {
                    -y / a
                } else {
                    0.0
                };
                (-y * p.ln(), d)
            }
            LossFunction::Mse | LossFunction::L2 => ((y - a) * (y - a), 2.0 * (a - y)),
            LossFunction::L1 | LossFunction::MeanAbsoluteError => {
                let d = a - y;
                (
                    d.abs(),
                    if d > 0.0 {
                        1.0
                    } else if d < 0.0 {
                        -1.0
                    } else {
                        0.0
                    },
                )
            }
            LossFunction::MeanAbsolutePercentageError => {
                // 100·|y − a| / |y|; labels of 0 are the caller's problem (the reference too).
                let d = a - y;
                let s = if d > 0.0 {
                    1.0
                } else if d < 0.0 {
                    -1.0
                } else {
                    0.0
                };
                (100.0 * d.abs() / y.abs(), 100.0 * s / y.abs())
            }
            LossFunction::MeanSquaredLogarithmicError => {
                let diff = (a + 1.0).ln() - (y + 1.0).ln();
                (diff * diff, 2.0 * diff / (a + 1.0))
            }
            LossFunction::Xent => {
                let p = clip_prob(a);
                let q = clip_prob(1.0 - a);
                let dp = if (LOG_CLIP_MIN..=1.0).contains(&a) {
                    -y / a
                } else {
                    0.0
                };
                let dq = if (LOG_CLIP_MIN..=1.0).contains(&(1.0 - a)) {
                    (1.0 - y) / (1.0 - a)
                } else {
                    0.0
                };
                (-(y * p.ln() + (1.0 - y) * q.ln()), dp + dq)
            }
            LossFunction::Hinge => {
                let m = 1.0 - y * a;
                if m > 0.0 {
                    (m, -y)
                } else {
                    (0.0, 0.0)
                }
            }
            LossFunction::SquaredHinge => {
                let m = 1.0 - y * a;
                if m > 0.0 {
                    (m * m, -2.0 * y * m)
                } else {
                    (0.0, 0.0)
                }
            }
            LossFunction::KlDivergence => {
                let yc = clip_prob(y);
                let p = clip_prob(a);
                let d = if (LOG_CLIP_MIN..=1.0).contains(&a) {
                    -yc / a
                } else {
                    0.0
                };
                (yc * (yc / p).ln(), d)
            }
            LossFunction::Poisson => {
                // Rates are not probabilities: clip only from below.
                let p = a.max(LOG_CLIP_MIN);
                let d = if a >= LOG_CLIP_MIN { 1.0 - y / a } else { 1.0 };
                (a - y * p.ln(), d)
            }
            LossFunction::CosineProximity => unreachable!("row-wise loss"),
        }
    }

    /// Per-example losses (`rows` values, accumulated in f64): masked, weighted, not divided by N.
    pub fn score_examples<T: Scalar>(
        self,
        output: &[T],
        labels: &[T],
        mask: Option<&LabelsMask<'_, T>>,
        weights: Option<&[f64]>,
        cols: usize,
        out: &mut [f64],
    ) {
        let w = |c: usize| weights.map_or(1.0, |w| w[c]);
        for (r, ((orow, yrow), o)) in output
            .chunks_exact(cols)
            .zip(labels.chunks_exact(cols))
            .zip(out.iter_mut())
            .enumerate()
        {
            if self == LossFunction::CosineProximity {
                // −(y·a)/(|y||a|), weights applied to both vectors, the mask per example.
                let (mut dot, mut yy, mut aa) = (0.0, 0.0, 0.0);
                for c in 0..cols {
                    let (y, a) = (yrow[c].f64() * w(c), orow[c].f64() * w(c));
                    dot += y * a;
                    yy += y * y;
                    aa += a * a;
                }
                let m = mask_at(mask, r, 0).f64();
                *o = if m == 0.0 {
                    0.0
                } else {
                    -m * dot / (yy.sqrt() * aa.sqrt()).max(1e-300)
                };
                continue;
            }
            let mut total = 0.0f64;
            for c in 0..cols {
                let m = mask_at(mask, r, c).f64();
                if m == 0.0 {
                    continue;
                }
                total += m * w(c) * self.term(yrow[c].f64(), orow[c].f64()).0;
            }
            *o = if self.divides_by_n_out() {
                total / cols as f64
            } else {
                total
            };
        }
    }

    /// Sum over all examples of the per-example loss.
    pub fn score_sum<T: Scalar>(
        self,
        output: &[T],
        labels: &[T],
        mask: Option<&LabelsMask<'_, T>>,
        weights: Option<&[f64]>,
        cols: usize,
    ) -> f64 {
        let rows = output.len() / cols.max(1);
        let mut per = vec![0.0f64; rows];
        self.score_examples(output, labels, mask, weights, cols, &mut per);
        per.iter().sum()
    }

    /// Writes `scale · dL/dz` into `delta` for the activations `output = act(z)` (`z` only for
    /// activations that [need it](Activation::needs_preactivation)).
    #[allow(clippy::too_many_arguments)]
    pub fn delta<T: Scalar>(
        self,
        activation: Activation,
        z: Option<&[T]>,
        output: &[T],
        labels: &[T],
        mask: Option<&LabelsMask<'_, T>>,
        weights: Option<&[f64]>,
        cols: usize,
        scale: T,
        delta: &mut [T],
    ) {
        let w = |c: usize| weights.map_or(T::one(), |w| T::of(w[c]));
        let rows_iter = output
            .chunks_exact(cols)
            .zip(labels.chunks_exact(cols))
            .zip(delta.chunks_exact_mut(cols))
            .enumerate();
        if self.is_multiclass_cross_entropy() && activation == Activation::Softmax {
            // dz_j = a_j·Σ_k w_k m_k y_k − w_j m_j y_j  (a − y for one-hot labels, no weights).
            for (r, ((arow, yrow), drow)) in rows_iter {
                let wy_sum: T = (0..cols)
                    .map(|c| w(c) * mask_at(mask, r, c) * yrow[c])
                    .sum();
                for (c, ((&a, &y), d)) in arow.iter().zip(yrow).zip(drow.iter_mut()).enumerate() {
                    *d = scale * (a * wy_sum - w(c) * mask_at(mask, r, c) * y);
                }
            }
            return;
        }
        if self == LossFunction::Xent && activation == Activation::Sigmoid {
            // dz = w m (a − y), exact where no clipping is active.
            for (r, ((arow, yrow), drow)) in rows_iter {
                for (c, ((&a, &y), d)) in arow.iter().zip(yrow).zip(drow.iter_mut()).enumerate() {
                    *d = scale * w(c) * mask_at(mask, r, c) * (a - y);
                }
            }
            return;
        }
        let n_div = if self.divides_by_n_out() {
            1.0 / cols as f64
        } else {
            1.0
        };
        for (r, ((arow, yrow), drow)) in rows_iter {
            if self == LossFunction::CosineProximity {
                let m = mask_at(mask, r, 0).f64();
                let wf = |c: usize| weights.map_or(1.0, |w| w[c]);
                let (mut dot, mut yy, mut aa) = (0.0, 0.0, 0.0);
                for c in 0..cols {
                    let (y, a) = (yrow[c].f64() * wf(c), arow[c].f64() * wf(c));
                    dot += y * a;
                    yy += y * y;
                    aa += a * a;
                }
                let (ny, na) = (yy.sqrt().max(1e-300), aa.sqrt().max(1e-300));
                for c in 0..cols {
                    let (y, a) = (yrow[c].f64() * wf(c), arow[c].f64() * wf(c));
                    // d/da_c of −(y·a)/(|y||a|), times the weight from a_c's scaling.
                    let g = -(y / (ny * na) - dot * a / (ny * na * na * na)) * wf(c);
                    drow[c] = scale * T::of(m * g);
                }
                continue;
            }
            for (c, ((&a, &y), d)) in arow.iter().zip(yrow).zip(drow.iter_mut()).enumerate() {
                let m = mask_at(mask, r, c).f64();
                let g = if m == 0.0 {
                    0.0
                } else {
                    m * w(c).f64() * n_div * self.term(y.f64(), a.f64()).1
                };
                *d = scale * T::of(g);
            }
        }
        activation.backward_in_place(z, output, delta, cols);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every elementwise term's derivative against a central difference.
    #[test]
    fn term_derivatives_match_finite_differences() {
        let h = 1e-7;
        let cases = [(0.3, 0.6), (1.0, 0.25), (0.0, 0.7), (-1.0, 0.4), (2.0, 1.5)];
        for loss in LossFunction::ALL {
            if loss == LossFunction::CosineProximity {
                continue;
            }
            for &(y, a) in &cases {
                let probability_loss = matches!(
                    loss,
                    LossFunction::Mcxent
                        | LossFunction::NegativeLogLikelihood
                        | LossFunction::Xent
                        | LossFunction::KlDivergence
                );
                if probability_loss && !(0.0..=1.0).contains(&a) {
                    continue;
                }
                if (loss == LossFunction::MeanAbsolutePercentageError && y == 0.0)
                    || (loss == LossFunction::MeanSquaredLogarithmicError && y <= -1.0)
                {
                    continue;
                }
                let num = (loss.term(y, a + h).0 - loss.term(y, a - h).0) / (2.0 * h);
                let ana = loss.term(y, a).1;
                assert!(
                    (num - ana).abs() <= 1e-5 * num.abs().max(1.0),
                    "{loss:?} y={y} a={a}: numeric {num}, analytic {ana}"
                );
            }
        }
    }

    #[test]
    fn hand_computed_scores() {
        let s = |l: LossFunction, y: &[f64], a: &[f64], w: Option<&[f64]>| {
            l.score_sum(a, y, None, w, y.len())
        };
        let y = [1.0, 0.0, 2.0];
        let a = [0.5, 0.5, 1.0];
        assert!((s(LossFunction::Mse, &y, &a, None) - (0.25 + 0.25 + 1.0) / 3.0).abs() < 1e-15);
        assert!((s(LossFunction::L2, &y, &a, None) - 1.5).abs() < 1e-15);
        assert!((s(LossFunction::L1, &y, &a, None) - 2.0).abs() < 1e-15);
        assert!((s(LossFunction::MeanAbsoluteError, &y, &a, None) - 2.0 / 3.0).abs() < 1e-15);
        let w = [2.0, 1.0, 0.5];
        assert!((s(LossFunction::L2, &y, &a, Some(&w)) - (0.5 + 0.25 + 0.5)).abs() < 1e-15);
        // Hinge with ±1 labels: max(0, 1 − y a)
        let (yh, ah) = ([1.0, -1.0], [0.3, 0.5]);
        assert!((s(LossFunction::Hinge, &yh, &ah, None) - (0.7 + 1.5)).abs() < 1e-15);
        assert!((s(LossFunction::SquaredHinge, &yh, &ah, None) - (0.49 + 2.25)).abs() < 1e-12);
        // Cosine of parallel vectors is −1.
        assert!(
            (s(
                LossFunction::CosineProximity,
                &[1.0, 2.0],
                &[2.0, 4.0],
                None
            ) + 1.0)
                .abs()
                < 1e-12
        );
        // Poisson: a − y ln a
        assert!(
            (s(LossFunction::Poisson, &[2.0], &[0.5], None) - (0.5 - 2.0 * 0.5f64.ln())).abs()
                < 1e-15
        );
        // KL: y ln(y/a)
        assert!(
            (s(LossFunction::KlDivergence, &[0.25, 0.75], &[0.5, 0.5], None)
                - (0.25 * 0.5f64.ln() + 0.75 * 1.5f64.ln()))
            .abs()
                < 1e-15
        );
    }
}
