//! The updaters. Each one is a serde structure (its JSON object without the `"type"` tag, see
//! [`crate::UpdaterConfig`]) and implements [`Updater`].
//!
//! Conventions for every updater: `g` is the gradient (regularization already added), the output
//! `update` overwrites `g` in place and the network applies `params -= update`; `t = iteration + 1`
//! (iterations are 0-based); `lr` is the learning rate at `(iteration, epoch)`: the schedule's value
//! when `learningRateSchedule` is set, the fixed `learningRate` otherwise. Scalars that do not depend
//! on the element (learning rate, bias corrections) are computed once per block in `f64`; the
//! element loops have no branches and allocate nothing.

use crate::schedule::Schedule;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

/// Common interface of the updaters.
///
/// Every updater's state for a block of `n` parameters is [`state_vectors`](Updater::state_vectors)
/// vectors of `n` values each, stored one after the other (Adam: `m` then `v`). The element
/// kernel, [`apply_chunk`](Updater::apply_chunk), sees those vectors as separate slices, so the
/// same kernel serves a whole block or any piece of it: [`crate::Optimizer`] cuts large blocks into
/// pieces and runs them on several threads with bit-identical results, since every element's
/// update depends only on that element.
pub trait Updater {
    /// Number of per-parameter state vectors (0 for Sgd and NoOp, 3 for AMSGrad).
    fn state_vectors(&self) -> usize;
    /// Number of state values this updater keeps for a block of `n` parameters.
    fn state_len(&self, n: usize) -> usize {
        n * self.state_vectors()
    }
    /// Writes the initial state of a block (`state_len(n)` values). Zero for every updater except
    /// [`RmsProp`] and [`AdaGrad`], whose accumulators start at `epsilon` (as in the reference).
    fn init_state<T: Scalar>(&self, state: &mut [T]) {
        state.fill(T::zero());
    }
    /// The element kernel on a piece of a block: replaces `grad` with the update for 0-based
    /// `iteration` and `epoch`, advancing the first `state_vectors()` slices of `state` (each
    /// `grad.len()` long; the others are ignored), then, when `params` is given, applies
    /// `params -= update` in the same pass.
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    );
    /// Replaces the gradient `grad` with the update for 0-based `iteration` and `epoch`, advancing
    /// `state` (`state_len(grad.len())` values).
    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64) {
        let parts = state_parts(self.state_vectors(), grad.len(), state);
        self.apply_chunk(None, grad, parts, iteration, epoch);
    }
    /// [`apply`](Self::apply), then `params -= update`, in one pass over the data; `grad` ends up
    /// holding the update as with `apply`, and the results are bit-identical to the two-step form.
    fn apply_and_subtract<T: Scalar>(
        &self,
        params: &mut [T],
        grad: &mut [T],
        state: &mut [T],
        iteration: u64,
        epoch: u64,
    ) {
        assert_eq!(
            params.len(),
            grad.len(),
            "params and gradient lengths differ"
        );
        let parts = state_parts(self.state_vectors(), grad.len(), state);
        self.apply_chunk(Some(params), grad, parts, iteration, epoch);
    }
    /// The learning rate at `(iteration, epoch)`; `NaN` for updaters without one
    /// ([`AdaDelta`], [`NoOp`]), as the reference's `getLearningRate(iteration, epoch)`.
    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64;
}

/// Cuts a block's contiguous state (`vectors` × `n` values) into its vectors; unused entries of the
/// array are empty.
pub(crate) fn state_parts<T>(vectors: usize, n: usize, state: &mut [T]) -> [&mut [T]; 3] {
    assert!(vectors <= 3, "at most 3 state vectors");
    assert_eq!(
        state.len(),
        vectors * n,
        "updater state has {} values, expected {vectors} x {n}",
        state.len()
    );
    let (a, rest) = state.split_at_mut(if vectors >= 1 { n } else { 0 });
    let (b, c) = rest.split_at_mut(if vectors >= 2 { n } else { 0 });
    [a, b, c]
}

/// Runs the element kernel `f(i)` for `i in 0..n` (`f` writes the update into the gradient and
/// returns it), subtracting each update from `params[i]` in the same loop when `params` is given.
/// Both loops index slices of exactly `n` values, so the bounds checks vanish and they vectorise.
#[inline(always)]
fn drive<T: Scalar>(params: Option<&mut [T]>, n: usize, mut f: impl FnMut(usize) -> T) {
    match params {
        Some(p) => {
            for (i, p) in p[..n].iter_mut().enumerate() {
                let u = f(i);
                *p = *p - u;
            }
        }
        None => {
            for i in 0..n {
                f(i);
            }
        }
    }
}

#[inline]
fn rate(fixed: f64, schedule: &Option<Schedule>, iteration: u64, epoch: u64) -> f64 {
    match schedule {
        Some(s) => s.value_at(iteration, epoch),
        None => fixed,
    }
}

/// `t = iteration + 1` as the exponent of `powi`. Beyond 2^31 iterations every `β^t` is 0 to
/// machine precision anyway.
#[inline]
fn t_of(iteration: u64) -> i32 {
    iteration.saturating_add(1).min(i32::MAX as u64) as i32
}

// ---------------------------------------------------------------------------------------------
// Defaults (the reference's, DL4J 1.0.0-M2).

pub(crate) mod defaults {
    pub fn sgd_lr() -> f64 {
        1e-3
    }
    pub fn adam_lr() -> f64 {
        1e-3
    }
    pub fn beta1() -> f64 {
        0.9
    }
    pub fn beta2() -> f64 {
        0.999
    }
    pub fn adam_epsilon() -> f64 {
        1e-8
    }
    pub fn rmsprop_lr() -> f64 {
        1e-1
    }
    pub fn rms_decay() -> f64 {
        0.95
    }
    pub fn nesterovs_lr() -> f64 {
        0.1
    }
    pub fn momentum() -> f64 {
        0.9
    }
    pub fn adagrad_lr() -> f64 {
        1e-1
    }
    pub fn adagrad_epsilon() -> f64 {
        1e-6
    }
    pub fn rho() -> f64 {
        0.95
    }
    pub fn adadelta_epsilon() -> f64 {
        1e-6
    }
}

// ---------------------------------------------------------------------------------------------

/// Plain stochastic gradient descent: `update = lr·g`. No state.
///
/// JSON `{"type":"Sgd","learningRate":1e-3,"learningRateSchedule":null}`; default learning rate
/// 1e-3 (the reference's `Sgd.DEFAULT_SGD_LR`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sgd {
    #[serde(default = "defaults::sgd_lr")]
    pub learning_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<Schedule>,
}

/// Adam (Kingma & Ba, 2014) with the bias correction folded into the step size:
/// `m = β1·m + (1-β1)·g`, `v = β2·v + (1-β2)·g²`, `α = lr·sqrt(1-β2^t)/(1-β1^t)`,
/// `update = α·m/(sqrt(v)+ε)`.
///
/// State per block of `n`: `m` (n values) then `v` (n values), both starting at 0.
/// Defaults (reference): lr 1e-3, β1 0.9, β2 0.999, ε 1e-8.
/// The reference replaces a step size `α` of exactly 0 (learning rate 0) by `ε`; we keep 0, so a
/// zero learning rate means no movement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Adam {
    #[serde(default = "defaults::adam_lr")]
    pub learning_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<Schedule>,
    #[serde(default = "defaults::beta1")]
    pub beta1: f64,
    #[serde(default = "defaults::beta2")]
    pub beta2: f64,
    #[serde(default = "defaults::adam_epsilon")]
    pub epsilon: f64,
}

/// AdaMax (Kingma & Ba, 2014, §7.1), Adam with the infinity norm:
/// `m = β1·m + (1-β1)·g`, `u = max(β2·u, |g|)`, `α = lr/(1-β1^t)`, `update = α·m/(u+ε)`.
///
/// State per block of `n`: `m` then `u`, both starting at 0.
/// Defaults (reference): lr 1e-3, β1 0.9, β2 0.999, ε 1e-8.
/// The reference divides by `u + 1e-32` and uses its `ε` only to replace a zero step size; we use
/// the configured `ε` in the denominator, as Adam does, which differs only where `u` is below ~ε.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdaMax {
    #[serde(default = "defaults::adam_lr")]
    pub learning_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<Schedule>,
    #[serde(default = "defaults::beta1")]
    pub beta1: f64,
    #[serde(default = "defaults::beta2")]
    pub beta2: f64,
    #[serde(default = "defaults::adam_epsilon")]
    pub epsilon: f64,
}

/// Nadam (Dozat, 2016), Adam with Nesterov momentum, in the reference's form:
/// `m = β1·m + (1-β1)·g`, `v = β2·v + (1-β2)·g²`,
/// `update = lr·(β1·m + (1-β1)·g)/(1-β1^t) / (sqrt(v)+ε)` (no bias correction of `v`, as in the
/// reference).
///
/// State per block of `n`: `m` then `v`, both starting at 0.
/// Defaults (reference): lr 1e-3, β1 0.9, β2 0.999, ε 1e-8.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Nadam {
    #[serde(default = "defaults::adam_lr")]
    pub learning_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<Schedule>,
    #[serde(default = "defaults::beta1")]
    pub beta1: f64,
    #[serde(default = "defaults::beta2")]
    pub beta2: f64,
    #[serde(default = "defaults::adam_epsilon")]
    pub epsilon: f64,
}

/// AMSGrad (Reddi et al., 2018): Adam with a non-decreasing second moment:
/// `m = β1·m + (1-β1)·g`, `v = β2·v + (1-β2)·g²`, `v̂ = max(v̂, v)`,
/// `α = lr·sqrt(1-β2^t)/(1-β1^t)`, `update = α·m/(sqrt(v̂)+ε)`.
///
/// State per block of `n`: `m`, then `v`, then `v̂` (3n values), all starting at 0.
/// Defaults (reference): lr 1e-3, β1 0.9, β2 0.999, ε 1e-8. As for Adam, a zero step size stays 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AMSGrad {
    #[serde(default = "defaults::adam_lr")]
    pub learning_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<Schedule>,
    #[serde(default = "defaults::beta1")]
    pub beta1: f64,
    #[serde(default = "defaults::beta2")]
    pub beta2: f64,
    #[serde(default = "defaults::adam_epsilon")]
    pub epsilon: f64,
}

/// RMSProp (Tieleman & Hinton, 2012): `s = d·s + (1-d)·g²`, `update = lr·g/(sqrt(s)+ε)` with
/// `d = rmsDecay`.
///
/// State per block of `n`: `s` (n values), starting at `ε` (as in the reference).
/// Defaults (reference): lr 1e-1, rmsDecay 0.95, ε 1e-8.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RmsProp {
    #[serde(default = "defaults::rmsprop_lr")]
    pub learning_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<Schedule>,
    #[serde(default = "defaults::rms_decay")]
    pub rms_decay: f64,
    #[serde(default = "defaults::adam_epsilon")]
    pub epsilon: f64,
}

/// Nesterov momentum in the reference's form, with `μ` the momentum at `(iteration, epoch)`:
/// `vPrev = v; v = μ·v - lr·g; update = μ·vPrev - (1+μ)·v`.
///
/// State per block of `n`: `v` (n values), starting at 0.
/// Defaults (reference): lr 0.1, momentum 0.9. Both may be given by a schedule
/// (`learningRateSchedule`, `momentumSchedule`), which then takes precedence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Nesterovs {
    #[serde(default = "defaults::nesterovs_lr")]
    pub learning_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<Schedule>,
    #[serde(default = "defaults::momentum")]
    pub momentum: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub momentum_schedule: Option<Schedule>,
}

/// AdaGrad (Duchi et al., 2011): `h = h + g²`, `update = lr·g/(sqrt(h)+ε)`.
///
/// State per block of `n`: `h` (n values), starting at `ε`. (The reference seeds it with its
/// default ε, 1e-6, whatever ε is configured; we seed it with the configured ε, which is the same
/// value unless ε is changed.)
/// Defaults (reference): lr 1e-1, ε 1e-6.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdaGrad {
    #[serde(default = "defaults::adagrad_lr")]
    pub learning_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate_schedule: Option<Schedule>,
    #[serde(default = "defaults::adagrad_epsilon")]
    pub epsilon: f64,
}

/// AdaDelta (Zeiler, 2012, Algorithm 1); no learning rate:
/// `a = ρ·a + (1-ρ)·g²`, `update = g·sqrt(b+ε)/sqrt(a+ε)`, `b = ρ·b + (1-ρ)·update²`.
///
/// State per block of `n`: `a` = E[g²] then `b` = E[Δx²], both starting at 0.
/// Defaults (reference): ρ 0.95, ε 1e-6. [`Updater::learning_rate_at`] is `NaN`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdaDelta {
    #[serde(default = "defaults::rho")]
    pub rho: f64,
    #[serde(default = "defaults::adadelta_epsilon")]
    pub epsilon: f64,
}

/// No updates: `update = 0`, so the parameters of this block never change, whatever the gradient
/// (and whatever L1/L2 regularization added to it). No state, no learning rate
/// ([`Updater::learning_rate_at`] is `NaN`).
///
/// The reference's `NoOp` "makes no changes to the gradient" and relies on its frozen layers
/// producing a zero gradient; used on a trainable layer it would move the parameters by the raw
/// gradient. We make the update itself zero, which is what the reference uses `NoOp` for
/// (holding parameters constant) and keeps frozen parameters bit-identical even with
/// regularization. JSON `{"type":"NoOp"}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOp {}

macro_rules! impl_default {
    ($t:ident { $($f:ident : $v:expr),* $(,)? }) => {
        impl Default for $t {
            fn default() -> Self {
                $t { $($f: $v),* }
            }
        }
    };
}

impl_default!(Sgd {
    learning_rate: defaults::sgd_lr(),
    learning_rate_schedule: None
});
impl_default!(Adam {
    learning_rate: defaults::adam_lr(),
    learning_rate_schedule: None,
    beta1: defaults::beta1(),
    beta2: defaults::beta2(),
    epsilon: defaults::adam_epsilon(),
});
impl_default!(AdaMax {
    learning_rate: defaults::adam_lr(),
    learning_rate_schedule: None,
    beta1: defaults::beta1(),
    beta2: defaults::beta2(),
    epsilon: defaults::adam_epsilon(),
});
impl_default!(Nadam {
    learning_rate: defaults::adam_lr(),
    learning_rate_schedule: None,
    beta1: defaults::beta1(),
    beta2: defaults::beta2(),
    epsilon: defaults::adam_epsilon(),
});
impl_default!(AMSGrad {
    learning_rate: defaults::adam_lr(),
    learning_rate_schedule: None,
    beta1: defaults::beta1(),
    beta2: defaults::beta2(),
    epsilon: defaults::adam_epsilon(),
});
impl_default!(RmsProp {
    learning_rate: defaults::rmsprop_lr(),
    learning_rate_schedule: None,
    rms_decay: defaults::rms_decay(),
    epsilon: defaults::adam_epsilon(),
});
impl_default!(Nesterovs {
    learning_rate: defaults::nesterovs_lr(),
    learning_rate_schedule: None,
    momentum: defaults::momentum(),
    momentum_schedule: None,
});
impl_default!(AdaGrad {
    learning_rate: defaults::adagrad_lr(),
    learning_rate_schedule: None,
    epsilon: defaults::adagrad_epsilon(),
});
impl_default!(AdaDelta {
    rho: defaults::rho(),
    epsilon: defaults::adadelta_epsilon()
});

impl Nesterovs {
    /// The momentum at `(iteration, epoch)`: the schedule's value when set, else `momentum`.
    pub fn momentum_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(self.momentum, &self.momentum_schedule, iteration, epoch)
    }
}

// ---------------------------------------------------------------------------------------------

/// `learning_rate_at` of an updater with `learning_rate` and `learning_rate_schedule` fields.
macro_rules! scheduled_rate {
    () => {
        fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
            rate(
                self.learning_rate,
                &self.learning_rate_schedule,
                iteration,
                epoch,
            )
        }
    };
}

impl Updater for Sgd {
    fn state_vectors(&self) -> usize {
        0
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        _state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    ) {
        let lr = T::of(self.learning_rate_at(iteration, epoch));
        let n = grad.len();
        drive(params, n, |i| {
            grad[i] = grad[i] * lr;
            grad[i]
        });
    }

    scheduled_rate!();
}

/// `α_t = lr · sqrt(1 - β2^t) / (1 - β1^t)`, the bias-corrected step of Adam and AMSGrad.
fn adam_alpha(lr: f64, beta1: f64, beta2: f64, iteration: u64) -> f64 {
    let t = t_of(iteration);
    lr * (1.0 - beta2.powi(t)).sqrt() / (1.0 - beta1.powi(t))
}

impl Updater for Adam {
    fn state_vectors(&self) -> usize {
        2
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    ) {
        let n = grad.len();
        let [m, v, _] = state;
        let (m, v) = (&mut m[..n], &mut v[..n]);
        let alpha = adam_alpha(
            self.learning_rate_at(iteration, epoch),
            self.beta1,
            self.beta2,
            iteration,
        );
        let (b1, b2, eps, a) = (
            T::of(self.beta1),
            T::of(self.beta2),
            T::of(self.epsilon),
            T::of(alpha),
        );
        let (one_b1, one_b2) = (T::one() - b1, T::one() - b2);
        // Zipped iterators rather than `drive`: measured ~4% faster for this, the most used
        // updater (240 vs 250 µs for 443,610 parameters on one thread).
        let step = |g: &mut T, mi: &mut T, vi: &mut T| {
            *mi = b1 * *mi + one_b1 * *g;
            *vi = b2 * *vi + one_b2 * *g * *g;
            *g = a * *mi / (vi.sqrt() + eps);
        };
        let gmv = grad.iter_mut().zip(m.iter_mut()).zip(v.iter_mut());
        match params {
            Some(p) => {
                for (p, ((g, mi), vi)) in p.iter_mut().zip(gmv) {
                    step(g, mi, vi);
                    *p = *p - *g;
                }
            }
            // a `for` loop, not `for_each`: `Zip::fold` was left out of line, compiled for the
            // baseline width outside `vectorized`'s AVX2 copy (the updater-only step — gradient
            // sharing's `compute_update` — ran at half the fused step's speed)
            None => {
                for ((g, mi), vi) in gmv {
                    step(g, mi, vi);
                }
            }
        }
    }

    scheduled_rate!();
}

impl Updater for AdaMax {
    fn state_vectors(&self) -> usize {
        2
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    ) {
        let n = grad.len();
        let [m, u, _] = state;
        let (m, u) = (&mut m[..n], &mut u[..n]);
        let lr = self.learning_rate_at(iteration, epoch);
        let alpha = lr / (1.0 - self.beta1.powi(t_of(iteration)));
        let (b1, b2, eps, a) = (
            T::of(self.beta1),
            T::of(self.beta2),
            T::of(self.epsilon),
            T::of(alpha),
        );
        let one_b1 = T::one() - b1;
        drive(params, n, |i| {
            let g = grad[i];
            m[i] = b1 * m[i] + one_b1 * g;
            u[i] = (b2 * u[i]).max(g.abs());
            grad[i] = a * m[i] / (u[i] + eps);
            grad[i]
        });
    }

    scheduled_rate!();
}

impl Updater for Nadam {
    fn state_vectors(&self) -> usize {
        2
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    ) {
        let n = grad.len();
        let [m, v, _] = state;
        let (m, v) = (&mut m[..n], &mut v[..n]);
        let lr = self.learning_rate_at(iteration, epoch);
        // update = c·(β1·m + (1-β1)·g)/(sqrt(v)+ε) with c = lr/(1-β1^t).
        let c = lr / (1.0 - self.beta1.powi(t_of(iteration)));
        let (b1, b2, eps, c) = (
            T::of(self.beta1),
            T::of(self.beta2),
            T::of(self.epsilon),
            T::of(c),
        );
        let (one_b1, one_b2) = (T::one() - b1, T::one() - b2);
        drive(params, n, |i| {
            let g = grad[i];
            let g1 = one_b1 * g;
            m[i] = b1 * m[i] + g1;
            v[i] = b2 * v[i] + one_b2 * g * g;
            grad[i] = c * (b1 * m[i] + g1) / (v[i].sqrt() + eps);
            grad[i]
        });
    }

    scheduled_rate!();
}

impl Updater for AMSGrad {
    fn state_vectors(&self) -> usize {
        3
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    ) {
        let n = grad.len();
        let [m, v, vhat] = state;
        let (m, v, vhat) = (&mut m[..n], &mut v[..n], &mut vhat[..n]);
        let alpha = adam_alpha(
            self.learning_rate_at(iteration, epoch),
            self.beta1,
            self.beta2,
            iteration,
        );
        let (b1, b2, eps, a) = (
            T::of(self.beta1),
            T::of(self.beta2),
            T::of(self.epsilon),
            T::of(alpha),
        );
        let (one_b1, one_b2) = (T::one() - b1, T::one() - b2);
        drive(params, n, |i| {
            let g = grad[i];
            m[i] = b1 * m[i] + one_b1 * g;
            v[i] = b2 * v[i] + one_b2 * g * g;
            vhat[i] = vhat[i].max(v[i]);
            grad[i] = a * m[i] / (vhat[i].sqrt() + eps);
            grad[i]
        });
    }

    scheduled_rate!();
}

impl Updater for RmsProp {
    fn state_vectors(&self) -> usize {
        1
    }

    fn init_state<T: Scalar>(&self, state: &mut [T]) {
        state.fill(T::of(self.epsilon));
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    ) {
        let n = grad.len();
        let [s, _, _] = state;
        let s = &mut s[..n];
        let (lr, d, eps) = (
            T::of(self.learning_rate_at(iteration, epoch)),
            T::of(self.rms_decay),
            T::of(self.epsilon),
        );
        let one_d = T::one() - d;
        drive(params, n, |i| {
            let g = grad[i];
            s[i] = d * s[i] + one_d * g * g;
            grad[i] = lr * g / (s[i].sqrt() + eps);
            grad[i]
        });
    }

    scheduled_rate!();
}

impl Updater for Nesterovs {
    fn state_vectors(&self) -> usize {
        1
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    ) {
        let n = grad.len();
        let [v, _, _] = state;
        let v = &mut v[..n];
        let (mu, lr) = (
            T::of(self.momentum_at(iteration, epoch)),
            T::of(self.learning_rate_at(iteration, epoch)),
        );
        let one_mu = T::one() + mu;
        drive(params, n, |i| {
            let v_prev = v[i];
            v[i] = mu * v[i] - lr * grad[i];
            grad[i] = mu * v_prev - one_mu * v[i];
            grad[i]
        });
    }

    scheduled_rate!();
}

impl Updater for AdaGrad {
    fn state_vectors(&self) -> usize {
        1
    }

    fn init_state<T: Scalar>(&self, state: &mut [T]) {
        state.fill(T::of(self.epsilon));
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        iteration: u64,
        epoch: u64,
    ) {
        let n = grad.len();
        let [h, _, _] = state;
        let h = &mut h[..n];
        let (lr, eps) = (
            T::of(self.learning_rate_at(iteration, epoch)),
            T::of(self.epsilon),
        );
        drive(params, n, |i| {
            let g = grad[i];
            h[i] = h[i] + g * g;
            grad[i] = lr * g / (h[i].sqrt() + eps);
            grad[i]
        });
    }

    scheduled_rate!();
}

impl Updater for AdaDelta {
    fn state_vectors(&self) -> usize {
        2
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        state: [&mut [T]; 3],
        _iteration: u64,
        _epoch: u64,
    ) {
        let n = grad.len();
        let [msg, msdx, _] = state;
        let (msg, msdx) = (&mut msg[..n], &mut msdx[..n]);
        let (rho, eps) = (T::of(self.rho), T::of(self.epsilon));
        let one_rho = T::one() - rho;
        drive(params, n, |i| {
            let g = grad[i];
            msg[i] = rho * msg[i] + one_rho * g * g;
            let u = g * (msdx[i] + eps).sqrt() / (msg[i] + eps).sqrt();
            msdx[i] = rho * msdx[i] + one_rho * u * u;
            grad[i] = u;
            u
        });
    }

    fn learning_rate_at(&self, _iteration: u64, _epoch: u64) -> f64 {
        f64::NAN
    }
}

impl Updater for NoOp {
    fn state_vectors(&self) -> usize {
        0
    }

    #[inline(always)]
    fn apply_chunk<T: Scalar>(
        &self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        _state: [&mut [T]; 3],
        _iteration: u64,
        _epoch: u64,
    ) {
        // `p - 0.0 == p` bit for bit (-0.0 and NaN included), so the parameters are left alone.
        let _ = params;
        grad.fill(T::zero());
    }

    fn learning_rate_at(&self, _iteration: u64, _epoch: u64) -> f64 {
        f64::NAN
    }
}
