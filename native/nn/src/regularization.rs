//! What the network does to gradients between backpropagation and `params -= update`, per
//! parameter block (the reference's order): gradient normalization/clipping of the raw gradient,
//! L1/L2 added before the updater, the updater, weight decay added after it (scaled by the
//! learning rate), and zero updates for frozen layers. Running statistics (`ParamKind::State`)
//! bypass all of it.

use crate::config::{GradientNormalization, LayerConfig};
use crate::layers::{ParamKind, ParamSpec};
use ferrodl_optim::AnyUpdater;
use ferrodl_tensor::{sum_abs, sum_squares, Scalar};
use std::ops::Range;

/// One parameter block of the network with the settings that apply to it.
#[derive(Clone, Debug)]
pub struct ParamBlock {
    pub layer: usize,
    pub name: &'static str,
    pub kind: ParamKind,
    pub shape: Vec<usize>,
    /// Absolute range in the network's parameter vector.
    pub range: Range<usize>,
    pub frozen: bool,
    pub l1: f64,
    pub l2: f64,
    pub weight_decay: f64,
    pub updater: AnyUpdater,
    pub normalization: GradientNormalization,
    pub threshold: f64,
}

impl ParamBlock {
    pub fn new(
        layer: usize,
        conf: &LayerConfig,
        frozen: bool,
        spec: ParamSpec,
        range: Range<usize>,
    ) -> Self {
        let base = conf.base();
        let (l1, l2, wd, updater) = match (spec.kind, &base) {
            (ParamKind::Weight, Some(b)) => (b.l1, b.l2, b.weight_decay, b.updater.to_updater()),
            (ParamKind::Bias, Some(b)) => (
                b.l1_bias,
                b.l2_bias,
                b.weight_decay_bias,
                b.bias_updater.to_updater(),
            ),
            (ParamKind::Gain, Some(b)) => (0.0, 0.0, 0.0, b.updater.to_updater()),
            _ => (0.0, 0.0, 0.0, AnyUpdater::default()),
        };
        // Frozen layers are not regularized either: their parameters are constants.
        let (l1, l2, wd) = if frozen {
            (0.0, 0.0, 0.0)
        } else {
            (l1, l2, wd)
        };
        ParamBlock {
            layer,
            name: spec.name,
            kind: spec.kind,
            shape: spec.shape,
            range,
            frozen,
            l1,
            l2,
            weight_decay: wd,
            updater,
            normalization: base.map_or(GradientNormalization::None, |b| b.gradient_normalization),
            threshold: base.map_or(1.0, |b| b.gradient_normalization_threshold),
        }
    }

    /// Whether an updater moves this block.
    pub fn trains(&self) -> bool {
        !self.frozen && self.kind != ParamKind::State
    }
}

/// `Σ l1·|w| + 0.5·l2·w²` over all blocks.
pub fn score<T: Scalar>(blocks: &[ParamBlock], params: &[T]) -> f64 {
    blocks
        .iter()
        .map(|b| {
            let w = &params[b.range.clone()];
            let mut s = 0.0;
            if b.l2 != 0.0 {
                s += 0.5 * b.l2 * sum_squares(w);
            }
            if b.l1 != 0.0 {
                s += b.l1 * sum_abs(w);
            }
            s
        })
        .sum()
}

/// Adds the gradient of [`score`]: `l2·w + l1·sign(w)` (the subgradient at 0 is 0).
pub fn add_gradient<T: Scalar>(blocks: &[ParamBlock], params: &[T], grads: &mut [T]) {
    for b in blocks {
        if b.l1 == 0.0 && b.l2 == 0.0 {
            continue;
        }
        let (l1, l2) = (T::of(b.l1), T::of(b.l2));
        for (g, &w) in grads[b.range.clone()]
            .iter_mut()
            .zip(&params[b.range.clone()])
        {
            let sign = if w > T::zero() {
                T::one()
            } else if w < T::zero() {
                -T::one()
            } else {
                T::zero()
            };
            *g = *g + l2 * w + l1 * sign;
        }
    }
}

fn l2_norm<T: Scalar>(grads: &[T], ranges: &[Range<usize>]) -> f64 {
    ranges
        .iter()
        .map(|r| sum_squares(&grads[r.clone()]))
        .sum::<f64>()
        .sqrt()
}

fn scale<T: Scalar>(grads: &mut [T], ranges: &[Range<usize>], factor: f64) {
    let f = T::of(factor);
    for r in ranges {
        grads[r.clone()].iter_mut().for_each(|g| *g = *g * f);
    }
}

/// Gradient normalization of the raw gradient, per layer or per parameter block.
pub fn normalize_gradients<T: Scalar>(blocks: &[ParamBlock], grads: &mut [T]) {
    let mut i = 0;
    while i < blocks.len() {
        // The trainable blocks of one layer.
        let layer = blocks[i].layer;
        let mut j = i;
        while j < blocks.len() && blocks[j].layer == layer {
            j += 1;
        }
        let group: Vec<&ParamBlock> = blocks[i..j].iter().filter(|b| b.trains()).collect();
        i = j;
        let Some(first) = group.first() else { continue };
        let (mode, t) = (first.normalization, first.threshold);
        let all: Vec<Range<usize>> = group.iter().map(|b| b.range.clone()).collect();
        match mode {
            GradientNormalization::None => {}
            GradientNormalization::RenormalizeL2PerLayer => {
                let n = l2_norm(grads, &all);
                if n > 0.0 {
                    scale(grads, &all, 1.0 / n);
                }
            }
            GradientNormalization::RenormalizeL2PerParamType => {
                for r in &all {
                    let n = l2_norm(grads, std::slice::from_ref(r));
                    if n > 0.0 {
                        scale(grads, std::slice::from_ref(r), 1.0 / n);
                    }
                }
            }
            GradientNormalization::ClipElementWiseAbsoluteValue => {
                let (lo, hi) = (T::of(-t), T::of(t));
                for r in &all {
                    grads[r.clone()]
                        .iter_mut()
                        .for_each(|g| *g = g.max(lo).min(hi));
                }
            }
            GradientNormalization::ClipL2PerLayer => {
                let n = l2_norm(grads, &all);
                if n > t {
                    scale(grads, &all, t / n);
                }
            }
            GradientNormalization::ClipL2PerParamType => {
                for r in &all {
                    let n = l2_norm(grads, std::slice::from_ref(r));
                    if n > t {
                        scale(grads, std::slice::from_ref(r), t / n);
                    }
                }
            }
        }
    }
}

/// After the updater: weight decay `update += lr·λ·w` on trainable blocks (`λ·w` for updaters
/// without a learning rate; none for NoOp), zero update for frozen
/// blocks; running-statistics blocks keep their `old − new`.
pub fn finish_update<T: Scalar>(
    blocks: &[ParamBlock],
    params: &[T],
    grads: &mut [T],
    iteration: u64,
    epoch: u64,
) {
    for b in blocks {
        if b.frozen {
            grads[b.range.clone()].fill(T::zero());
        } else if b.weight_decay != 0.0
            && b.kind != ParamKind::State
            && !matches!(b.updater, AnyUpdater::NoOp(_))
        {
            // Updaters without a learning rate (AdaDelta) take the decay unscaled; NoOp never
            // moves its parameters.
            let lr = if b.updater.has_learning_rate() {
                b.updater.learning_rate_at(iteration, epoch)
            } else {
                1.0
            };
            let k = T::of(lr * b.weight_decay);
            for (g, &w) in grads[b.range.clone()]
                .iter_mut()
                .zip(&params[b.range.clone()])
            {
                *g = *g + k * w;
            }
        }
    }
}

/// For [`Optimizer::step_and_apply`](ferrodl_optim::Optimizer::step_and_apply), which moved only
/// the trained blocks: frozen blocks get a zero update, running statistics move by their
/// `old − new` (`params -= update`), as [`finish_update`] plus the subtraction would do.
pub fn apply_untrained<T: Scalar>(blocks: &[ParamBlock], params: &mut [T], grads: &mut [T]) {
    for b in blocks {
        if b.frozen {
            grads[b.range.clone()].fill(T::zero());
        } else if b.kind == ParamKind::State {
            for (p, &u) in params[b.range.clone()]
                .iter_mut()
                .zip(&grads[b.range.clone()])
            {
                *p = *p - u;
            }
        }
    }
}
