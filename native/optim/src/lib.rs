//! ferrodl-optim: updaters that turn a gradient into the update that is subtracted from the
//! parameters (`params -= update`), following the reference's formulas (ARCHITECTURE.md §3).
//!
//! Each updater works in place on one flat block: `grad` (input) is overwritten with `update`
//! (output), and the updater's state for that block lives in a separate slice. [`Optimizer`]
//! owns the state of a whole network as ONE flat vector laid out block by block in parameter order,
//! each updater's state blocks concatenated (Adam: `m` then `v`; Nesterovs: `v`; Sgd: none), so it
//! can be exported and imported as a single array.

use ferrodl_tensor::Scalar;
use std::fmt;
use std::ops::Range;

/// Common interface of the updaters.
pub trait Updater {
    /// Number of state values this updater keeps for a block of `n` parameters.
    fn state_len(&self, n: usize) -> usize;
    /// Replaces the gradient `grad` with the update for iteration `iteration` (0-based: the
    /// first `fit` is iteration 0), advancing `state` (`state_len(grad.len())` values).
    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64);
    /// The learning rate (for messages and validation).
    fn learning_rate(&self) -> f64;
}

/// Plain stochastic gradient descent: `update = lr · g`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sgd {
    pub learning_rate: f64,
}

/// Adam (Kingma & Ba) with the bias correction folded into the step size:
/// `m = β1 m + (1-β1) g`, `v = β2 v + (1-β2) g²`, `α = lr·sqrt(1-β2^t)/(1-β1^t)` with
/// `t = iteration + 1`, `update = α·m/(sqrt(v)+ε)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adam {
    pub learning_rate: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub epsilon: f64,
}

/// Nesterov momentum in the reference's form:
/// `vPrev = v; v = μ v - lr g; update = μ vPrev - (1+μ) v`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nesterovs {
    pub learning_rate: f64,
    pub momentum: f64,
}

impl Default for Sgd {
    fn default() -> Self {
        Sgd {
            learning_rate: 1e-3,
        }
    }
}

impl Default for Adam {
    fn default() -> Self {
        Adam {
            learning_rate: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
        }
    }
}

impl Default for Nesterovs {
    fn default() -> Self {
        Nesterovs {
            learning_rate: 0.1,
            momentum: 0.9,
        }
    }
}

impl Updater for Sgd {
    fn state_len(&self, _n: usize) -> usize {
        0
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], _state: &mut [T], _iteration: u64) {
        let lr = T::of(self.learning_rate);
        grad.iter_mut().for_each(|g| *g = *g * lr);
    }

    fn learning_rate(&self) -> f64 {
        self.learning_rate
    }
}

impl Updater for Adam {
    fn state_len(&self, n: usize) -> usize {
        2 * n
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64) {
        let n = grad.len();
        assert_eq!(state.len(), 2 * n, "Adam state length");
        let (m, v) = state.split_at_mut(n);
        // Bias correction computed once per block in f64; powi needs i32, and beyond ~2^31
        // iterations both corrections are 1 to machine precision anyway.
        let t = iteration.saturating_add(1).min(i32::MAX as u64) as i32;
        let alpha =
            self.learning_rate * (1.0 - self.beta2.powi(t)).sqrt() / (1.0 - self.beta1.powi(t));
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

    fn learning_rate(&self) -> f64 {
        self.learning_rate
    }
}

impl Updater for Nesterovs {
    fn state_len(&self, n: usize) -> usize {
        n
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], _iteration: u64) {
        assert_eq!(state.len(), grad.len(), "Nesterovs state length");
        let (mu, lr) = (T::of(self.momentum), T::of(self.learning_rate));
        let one_mu = T::one() + mu;
        for (g, v) in grad.iter_mut().zip(state.iter_mut()) {
            let v_prev = *v;
            *v = mu * *v - lr * *g;
            *g = mu * v_prev - one_mu * *v;
        }
    }

    fn learning_rate(&self) -> f64 {
        self.learning_rate
    }
}

/// Any of the supported updaters (what a layer's configuration names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AnyUpdater {
    Sgd(Sgd),
    Adam(Adam),
    Nesterovs(Nesterovs),
}

impl Updater for AnyUpdater {
    fn state_len(&self, n: usize) -> usize {
        match self {
            AnyUpdater::Sgd(u) => u.state_len(n),
            AnyUpdater::Adam(u) => u.state_len(n),
            AnyUpdater::Nesterovs(u) => u.state_len(n),
        }
    }

    fn apply<T: Scalar>(&self, grad: &mut [T], state: &mut [T], iteration: u64) {
        match self {
            AnyUpdater::Sgd(u) => u.apply(grad, state, iteration),
            AnyUpdater::Adam(u) => u.apply(grad, state, iteration),
            AnyUpdater::Nesterovs(u) => u.apply(grad, state, iteration),
        }
    }

    fn learning_rate(&self) -> f64 {
        match self {
            AnyUpdater::Sgd(u) => u.learning_rate,
            AnyUpdater::Adam(u) => u.learning_rate,
            AnyUpdater::Nesterovs(u) => u.learning_rate,
        }
    }
}

/// Error of [`Optimizer::set_state`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateLengthError {
    pub expected: usize,
    pub found: usize,
}

impl fmt::Display for StateLengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "updater state has {} values but this network needs {}",
            self.found, self.expected
        )
    }
}

impl std::error::Error for StateLengthError {}

#[derive(Clone, Debug)]
struct Block {
    params: Range<usize>,
    state: Range<usize>,
    updater: AnyUpdater,
}

/// The updaters of a whole network and their state, as one flat vector.
#[derive(Clone, Debug)]
pub struct Optimizer<T> {
    blocks: Vec<Block>,
    state: Vec<T>,
}

impl<T: Scalar> Optimizer<T> {
    /// Builds an optimizer from `(parameter range, updater)` blocks given in parameter order.
    /// State starts at zero (the reference's initial state for all three updaters).
    pub fn new(blocks: impl IntoIterator<Item = (Range<usize>, AnyUpdater)>) -> Self {
        let mut out = Vec::new();
        let mut offset = 0;
        for (params, updater) in blocks {
            let len = updater.state_len(params.len());
            out.push(Block {
                params,
                state: offset..offset + len,
                updater,
            });
            offset += len;
        }
        Optimizer {
            blocks: out,
            state: vec![T::zero(); offset],
        }
    }

    /// Total number of state values.
    pub fn state_len(&self) -> usize {
        self.state.len()
    }

    /// The flat state vector.
    pub fn state(&self) -> &[T] {
        &self.state
    }

    /// Replaces the flat state vector; its length must match [`Optimizer::state_len`].
    pub fn set_state(&mut self, s: &[T]) -> Result<(), StateLengthError> {
        if s.len() != self.state.len() {
            return Err(StateLengthError {
                expected: self.state.len(),
                found: s.len(),
            });
        }
        self.state.copy_from_slice(s);
        Ok(())
    }

    /// Turns the full gradient vector into the full update vector, block by block.
    pub fn step(&mut self, grad: &mut [T], iteration: u64) {
        for b in &self.blocks {
            b.updater.apply(
                &mut grad[b.params.clone()],
                &mut self.state[b.state.clone()],
                iteration,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
    }

    #[test]
    fn sgd_steps() {
        let u = Sgd { learning_rate: 0.1 };
        let mut st: [f64; 0] = [];
        let mut g = [2.0, -4.0];
        u.apply(&mut g, &mut st, 0);
        close(g[0], 0.2);
        close(g[1], -0.4);
        let mut g = [0.5, 0.0];
        u.apply(&mut g, &mut st, 1);
        close(g[0], 0.05);
        close(g[1], 0.0);
    }

    #[test]
    fn adam_first_three_steps_by_hand() {
        let u = Adam {
            learning_rate: 0.01,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
        };
        let mut st = [0.0f64; 2];
        // Step 1 (t=1), g=2: m=0.2, v=0.004, alpha=0.01*sqrt(0.001)/0.1,
        // update = alpha*0.2/(sqrt(0.004)+1e-8).
        let mut g = [2.0];
        u.apply(&mut g, &mut st, 0);
        close(st[0], 0.2);
        close(st[1], 0.004);
        let a1 = 0.01 * 0.001f64.sqrt() / 0.1;
        close(g[0], a1 * 0.2 / (0.004f64.sqrt() + 1e-8));
        // Step 2 (t=2), g=-1: m=0.9*0.2-0.1=0.08, v=0.999*0.004+0.001=0.004996,
        // alpha=0.01*sqrt(1-0.999^2)/(1-0.81).
        let mut g = [-1.0];
        u.apply(&mut g, &mut st, 1);
        close(st[0], 0.08);
        close(st[1], 0.004996);
        let a2 = 0.01 * (1.0 - 0.998001f64).sqrt() / 0.19;
        close(g[0], a2 * 0.08 / (0.004996f64.sqrt() + 1e-8));
        // Step 3 (t=3), g=0.5: m=0.072+0.05=0.122, v=0.004991004+0.00025=0.005241004.
        let mut g = [0.5];
        u.apply(&mut g, &mut st, 2);
        close(st[0], 0.122);
        close(st[1], 0.005241004);
        let a3 = 0.01 * (1.0 - 0.997002999f64).sqrt() / (1.0 - 0.729);
        close(g[0], a3 * 0.122 / (0.005241004f64.sqrt() + 1e-8));
    }

    #[test]
    fn nesterovs_first_three_steps_by_hand() {
        let u = Nesterovs {
            learning_rate: 0.1,
            momentum: 0.9,
        };
        let mut v = [0.0f64];
        // Step 1, g=1: v = -0.1; update = 0.9*0 - 1.9*(-0.1) = 0.19.
        let mut g = [1.0];
        u.apply(&mut g, &mut v, 0);
        close(v[0], -0.1);
        close(g[0], 0.19);
        // Step 2, g=1: v = -0.09 - 0.1 = -0.19; update = 0.9*(-0.1) - 1.9*(-0.19) = 0.271.
        let mut g = [1.0];
        u.apply(&mut g, &mut v, 1);
        close(v[0], -0.19);
        close(g[0], 0.271);
        // Step 3, g=-2: v = -0.171 + 0.2 = 0.029; update = 0.9*(-0.19) - 1.9*0.029 = -0.2261.
        let mut g = [-2.0];
        u.apply(&mut g, &mut v, 2);
        close(v[0], 0.029);
        close(g[0], -0.2261);
    }

    #[test]
    fn optimizer_layout_and_state_round_trip() {
        let adam = AnyUpdater::Adam(Adam::default());
        let nest = AnyUpdater::Nesterovs(Nesterovs::default());
        let sgd = AnyUpdater::Sgd(Sgd { learning_rate: 0.5 });
        // 3 params Adam, 2 params Sgd, 1 param Nesterovs.
        let mut opt = Optimizer::<f32>::new([(0..3, adam), (3..5, sgd), (5..6, nest)]);
        assert_eq!(opt.state_len(), 3 * 2 + 1); // Adam m+v, Sgd none, Nesterovs v
        let mut g = vec![1.0f32; 6];
        opt.step(&mut g, 0);
        // Adam m block (first 3) = 0.1, v block = 0.001, Nesterovs v = -0.1.
        assert!(opt.state()[..3].iter().all(|m| (m - 0.1).abs() < 1e-7));
        assert!((opt.state()[3] - 0.001).abs() < 1e-7);
        assert!((opt.state()[6] + 0.1).abs() < 1e-7);
        assert_eq!(&g[3..5], &[0.5, 0.5]);

        let mut other = Optimizer::<f32>::new([(0..3, adam), (3..5, sgd), (5..6, nest)]);
        other.set_state(opt.state()).unwrap();
        let (mut g1, mut g2) = (vec![0.3f32; 6], vec![0.3f32; 6]);
        opt.step(&mut g1, 1);
        other.step(&mut g2, 1);
        assert_eq!(g1, g2);
        assert_eq!(opt.state(), other.state());
        let err = other.set_state(&[0.0; 3]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "updater state has 3 values but this network needs 7"
        );
    }

    #[test]
    fn defaults_match_reference() {
        assert_eq!(Sgd::default().learning_rate, 1e-3);
        assert_eq!(
            Adam::default(),
            Adam {
                learning_rate: 1e-3,
                beta1: 0.9,
                beta2: 0.999,
                epsilon: 1e-8
            }
        );
        assert_eq!(
            Nesterovs::default(),
            Nesterovs {
                learning_rate: 0.1,
                momentum: 0.9
            }
        );
    }
}
