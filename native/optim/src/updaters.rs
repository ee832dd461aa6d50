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
pub trait Updater {
    /// Number of state values this updater keeps for a block of `n` parameters.
    fn state_len(&self, n: usize) -> usize;
    /// Writes the initial state of a block (`state_len(n)` values). Zero for every updater except
    /// [`RmsProp`] and [`AdaGrad`], whose accumulators start at `epsilon` (as in the reference).
    fn init_state<T: Scalar>(&self, state: &mut [T]) {
        state.fill(T::zero());
    }
    /// Replaces the gradient `grad` with the update for 0-based `iteration` and `epoch`, advancing
    /// `state` (`state_len(grad.len())` values).
    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64);
    /// [`apply`](Self::apply), then `params -= update`; `grad` ends up holding the update as with
    /// `apply`. Updaters override it with a single pass over the data where that saves a trip
    /// through memory (Adam); the results are bit-identical to the two-step form.
    fn apply_and_subtract<T: Scalar>(
        &self,
        params: &mut [T],
        grad: &mut [T],
        state: &mut [T],
        iteration: u64,
        epoch: u64,
    ) {
        self.apply(grad, state, iteration, epoch);
        for (p, &u) in params.iter_mut().zip(grad.iter()) {
            *p = *p - u;
        }
    }
    /// The learning rate at `(iteration, epoch)`; `NaN` for updaters without one
    /// ([`AdaDelta`], [`NoOp`]), as the reference's `getLearningRate(iteration, epoch)`.
    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64;
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

impl Updater for Sgd {
    fn state_len(&self, _n: usize) -> usize {
        0
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], _state: &mut [T], iteration: u64, epoch: u64) {
        let lr = T::of(self.learning_rate_at(iteration, epoch));
        grad.iter_mut().for_each(|g| *g = *g * lr);
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(
            self.learning_rate,
            &self.learning_rate_schedule,
            iteration,
            epoch,
        )
    }
}

impl Updater for Adam {
    fn state_len(&self, n: usize) -> usize {
        2 * n
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64) {
        let n = grad.len();
        assert_eq!(state.len(), 2 * n, "Adam state length");
        let (m, v) = state.split_at_mut(n);
        let t = t_of(iteration);
        let lr = self.learning_rate_at(iteration, epoch);
        let alpha = lr * (1.0 - self.beta2.powi(t)).sqrt() / (1.0 - self.beta1.powi(t));
        let (b1, b2, eps, a) = (
            T::of(self.beta1),
            T::of(self.beta2),
            T::of(self.epsilon),
            T::of(alpha),
        );
        let (one_b1, one_b2) = (T::one() - b1, T::one() - b2);
        for ((g, mi), vi) in grad.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()) {
            *mi = b1 * *mi + one_b1 * *g;
            *vi = b2 * *vi + one_b2 * *g * *g;
            *g = a * *mi / (vi.sqrt() + eps);
        }
    }

    fn apply_and_subtract<T: Scalar>(
        &self,
        params: &mut [T],
        grad: &mut [T],
        state: &mut [T],
        iteration: u64,
        epoch: u64,
    ) {
        let n = grad.len();
        assert_eq!(state.len(), 2 * n, "Adam state length");
        assert_eq!(params.len(), n, "Adam params length");
        let (m, v) = state.split_at_mut(n);
        let t = t_of(iteration);
        let lr = self.learning_rate_at(iteration, epoch);
        let alpha = lr * (1.0 - self.beta2.powi(t)).sqrt() / (1.0 - self.beta1.powi(t));
        let (b1, b2, eps, a) = (
            T::of(self.beta1),
            T::of(self.beta2),
            T::of(self.epsilon),
            T::of(alpha),
        );
        let (one_b1, one_b2) = (T::one() - b1, T::one() - b2);
        // The same operations as `apply` then the subtraction, in one pass over p, g, m, v.
        for (((p, g), mi), vi) in params
            .iter_mut()
            .zip(grad.iter_mut())
            .zip(m.iter_mut())
            .zip(v.iter_mut())
        {
            *mi = b1 * *mi + one_b1 * *g;
            *vi = b2 * *vi + one_b2 * *g * *g;
            *g = a * *mi / (vi.sqrt() + eps);
            *p = *p - *g;
        }
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(
            self.learning_rate,
            &self.learning_rate_schedule,
            iteration,
            epoch,
        )
    }
}

impl Updater for AdaMax {
    fn state_len(&self, n: usize) -> usize {
        2 * n
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64) {
        let n = grad.len();
        assert_eq!(state.len(), 2 * n, "AdaMax state length");
        let (m, u) = state.split_at_mut(n);
        let lr = self.learning_rate_at(iteration, epoch);
        let alpha = lr / (1.0 - self.beta1.powi(t_of(iteration)));
        let (b1, b2, eps, a) = (
            T::of(self.beta1),
            T::of(self.beta2),
            T::of(self.epsilon),
            T::of(alpha),
        );
        let one_b1 = T::one() - b1;
        for ((g, mi), ui) in grad.iter_mut().zip(m.iter_mut()).zip(u.iter_mut()) {
            *mi = b1 * *mi + one_b1 * *g;
            *ui = (b2 * *ui).max(g.abs());
            *g = a * *mi / (*ui + eps);
        }
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(
            self.learning_rate,
            &self.learning_rate_schedule,
            iteration,
            epoch,
        )
    }
}

impl Updater for Nadam {
    fn state_len(&self, n: usize) -> usize {
        2 * n
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64) {
        let n = grad.len();
        assert_eq!(state.len(), 2 * n, "Nadam state length");
        let (m, v) = state.split_at_mut(n);
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
        for ((g, mi), vi) in grad.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()) {
            let g1 = one_b1 * *g;
            *mi = b1 * *mi + g1;
            *vi = b2 * *vi + one_b2 * *g * *g;
            *g = c * (b1 * *mi + g1) / (vi.sqrt() + eps);
        }
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(
            self.learning_rate,
            &self.learning_rate_schedule,
            iteration,
            epoch,
        )
    }
}

impl Updater for AMSGrad {
    fn state_len(&self, n: usize) -> usize {
        3 * n
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64) {
        let n = grad.len();
        assert_eq!(state.len(), 3 * n, "AMSGrad state length");
        let (m, rest) = state.split_at_mut(n);
        let (v, vhat) = rest.split_at_mut(n);
        let t = t_of(iteration);
        let lr = self.learning_rate_at(iteration, epoch);
        let alpha = lr * (1.0 - self.beta2.powi(t)).sqrt() / (1.0 - self.beta1.powi(t));
        let (b1, b2, eps, a) = (
            T::of(self.beta1),
            T::of(self.beta2),
            T::of(self.epsilon),
            T::of(alpha),
        );
        let (one_b1, one_b2) = (T::one() - b1, T::one() - b2);
        for (((g, mi), vi), hi) in grad
            .iter_mut()
            .zip(m.iter_mut())
            .zip(v.iter_mut())
            .zip(vhat.iter_mut())
        {
            *mi = b1 * *mi + one_b1 * *g;
            *vi = b2 * *vi + one_b2 * *g * *g;
            *hi = hi.max(*vi);
            *g = a * *mi / (hi.sqrt() + eps);
        }
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(
            self.learning_rate,
            &self.learning_rate_schedule,
            iteration,
            epoch,
        )
    }
}

impl Updater for RmsProp {
    fn state_len(&self, n: usize) -> usize {
        n
    }

    fn init_state<T: Scalar>(&self, state: &mut [T]) {
        state.fill(T::of(self.epsilon));
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64) {
        assert_eq!(state.len(), grad.len(), "RmsProp state length");
        let (lr, d, eps) = (
            T::of(self.learning_rate_at(iteration, epoch)),
            T::of(self.rms_decay),
            T::of(self.epsilon),
        );
        let one_d = T::one() - d;
        for (g, s) in grad.iter_mut().zip(state.iter_mut()) {
            *s = d * *s + one_d * *g * *g;
            *g = lr * *g / (s.sqrt() + eps);
        }
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(
            self.learning_rate,
            &self.learning_rate_schedule,
            iteration,
            epoch,
        )
    }
}

impl Updater for Nesterovs {
    fn state_len(&self, n: usize) -> usize {
        n
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64) {
        assert_eq!(state.len(), grad.len(), "Nesterovs state length");
        let (mu, lr) = (
            T::of(self.momentum_at(iteration, epoch)),
            T::of(self.learning_rate_at(iteration, epoch)),
        );
        let one_mu = T::one() + mu;
        for (g, v) in grad.iter_mut().zip(state.iter_mut()) {
            let v_prev = *v;
            *v = mu * *v - lr * *g;
            *g = mu * v_prev - one_mu * *v;
        }
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(
            self.learning_rate,
            &self.learning_rate_schedule,
            iteration,
            epoch,
        )
    }
}

impl Updater for AdaGrad {
    fn state_len(&self, n: usize) -> usize {
        n
    }

    fn init_state<T: Scalar>(&self, state: &mut [T]) {
        state.fill(T::of(self.epsilon));
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64, epoch: u64) {
        assert_eq!(state.len(), grad.len(), "AdaGrad state length");
        let (lr, eps) = (
            T::of(self.learning_rate_at(iteration, epoch)),
            T::of(self.epsilon),
        );
        for (g, h) in grad.iter_mut().zip(state.iter_mut()) {
            *h = *h + *g * *g;
            *g = lr * *g / (h.sqrt() + eps);
        }
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        rate(
            self.learning_rate,
            &self.learning_rate_schedule,
            iteration,
            epoch,
        )
    }
}

impl Updater for AdaDelta {
    fn state_len(&self, n: usize) -> usize {
        2 * n
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], _iteration: u64, _epoch: u64) {
        let n = grad.len();
        assert_eq!(state.len(), 2 * n, "AdaDelta state length");
        let (msg, msdx) = state.split_at_mut(n);
        let (rho, eps) = (T::of(self.rho), T::of(self.epsilon));
        let one_rho = T::one() - rho;
        for ((g, a), b) in grad.iter_mut().zip(msg.iter_mut()).zip(msdx.iter_mut()) {
            *a = rho * *a + one_rho * *g * *g;
            let u = *g * (*b + eps).sqrt() / (*a + eps).sqrt();
            *b = rho * *b + one_rho * u * u;
            *g = u;
        }
    }

    fn learning_rate_at(&self, _iteration: u64, _epoch: u64) -> f64 {
        f64::NAN
    }
}

impl Updater for NoOp {
    fn state_len(&self, _n: usize) -> usize {
        0
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], _state: &mut [T], _iteration: u64, _epoch: u64) {
        grad.fill(T::zero());
    }

    fn learning_rate_at(&self, _iteration: u64, _epoch: u64) -> f64 {
        f64::NAN
    }
}
