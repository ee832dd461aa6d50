//! ferrodl-optim: updaters that turn a gradient into the update that is subtracted from the
//! parameters (`params -= update`), learning-rate schedules, and the updater part of the
//! configuration JSON, following the reference's formulas (docs/UPDATERS.md).
//!
//! Each updater works in place on one flat block: `grad` (input) is overwritten with `update`
//! (output), and the updater's state for that block lives in a separate slice. [`Optimizer`]
//! owns the state of a whole network as ONE flat vector laid out block by block in parameter order,
//! each updater's state blocks concatenated (Adam: `m` then `v`; AMSGrad: `m`, `v`, `v̂`; see each
//! updater's documentation), so it can be exported and imported as a single array.

mod config;
pub mod schedule;
mod updaters;

pub use config::UpdaterConfig;
pub use schedule::{
    ExponentialSchedule, InverseSchedule, MapSchedule, PolySchedule, Schedule, ScheduleType,
    SigmoidSchedule, StepSchedule,
};
pub use updaters::{
    AMSGrad, AdaDelta, AdaGrad, AdaMax, Adam, Nadam, Nesterovs, NoOp, RmsProp, Sgd, Updater,
};

use ferrodl_tensor::Scalar;
use std::fmt;
use std::ops::Range;

/// Any of the supported updaters (what a layer's configuration names), ready to run.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyUpdater {
    Sgd(Sgd),
    Adam(Adam),
    AdaMax(AdaMax),
    Nadam(Nadam),
    AMSGrad(AMSGrad),
    RmsProp(RmsProp),
    Nesterovs(Nesterovs),
    AdaGrad(AdaGrad),
    AdaDelta(AdaDelta),
    NoOp(NoOp),
}

macro_rules! dispatch {
    ($self:expr, $u:ident => $e:expr) => {
        match $self {
            AnyUpdater::Sgd($u) => $e,
            AnyUpdater::Adam($u) => $e,
            AnyUpdater::AdaMax($u) => $e,
            AnyUpdater::Nadam($u) => $e,
            AnyUpdater::AMSGrad($u) => $e,
            AnyUpdater::RmsProp($u) => $e,
            AnyUpdater::Nesterovs($u) => $e,
            AnyUpdater::AdaGrad($u) => $e,
            AnyUpdater::AdaDelta($u) => $e,
            AnyUpdater::NoOp($u) => $e,
        }
    };
}

impl Default for AnyUpdater {
    /// The reference's default updater: Sgd with learning rate 1e-3.
    fn default() -> Self {
        AnyUpdater::Sgd(Sgd::default())
    }
}

impl AnyUpdater {
    /// The learning rate at `(iteration, epoch)` (0-based): the schedule's value when one is set,
    /// else the fixed rate; `NaN` for AdaDelta and NoOp, which have none.
    pub fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        Updater::learning_rate_at(self, iteration, epoch)
    }

    /// Whether this updater has a learning rate (false for AdaDelta and NoOp).
    pub fn has_learning_rate(&self) -> bool {
        !matches!(self, AnyUpdater::AdaDelta(_) | AnyUpdater::NoOp(_))
    }

    /// The configuration object (JSON-serializable) of this updater.
    pub fn to_config(&self) -> UpdaterConfig {
        UpdaterConfig::from(self.clone())
    }
}

impl Updater for AnyUpdater {
    fn state_vectors(&self) -> usize {
        dispatch!(self, u => u.state_vectors())
    }

    fn init_state<T: Scalar>(&self, state: &mut [T]) {
        dispatch!(self, u => u.init_state(state))
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
        dispatch!(self, u => u.apply_chunk(params, grad, state, iteration, epoch))
    }

    fn learning_rate_at(&self, iteration: u64, epoch: u64) -> f64 {
        dispatch!(self, u => u.learning_rate_at(iteration, epoch))
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

#[derive(Clone, Debug, PartialEq)]
struct Block {
    params: Range<usize>,
    state: Range<usize>,
    updater: AnyUpdater,
}

/// The updaters of a whole network and their state, as one flat vector.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimizer<T> {
    blocks: Vec<Block>,
    state: Vec<T>,
}

impl<T: Scalar> Optimizer<T> {
    /// Builds an optimizer from `(parameter range, updater)` blocks given in parameter order.
    /// The state starts at each updater's initial state (zero, except the accumulators of RmsProp
    /// and AdaGrad, which start at their `epsilon`).
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
        let mut opt = Optimizer {
            blocks: out,
            state: vec![T::zero(); offset],
        };
        opt.reset_state();
        opt
    }

    /// Puts the state back to its initial value (as right after [`Optimizer::new`]).
    pub fn reset_state(&mut self) {
        for b in &self.blocks {
            b.updater.init_state(&mut self.state[b.state.clone()]);
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

    /// The `(parameter range, updater)` blocks, in order.
    pub fn blocks(&self) -> impl Iterator<Item = (&Range<usize>, &AnyUpdater)> {
        self.blocks.iter().map(|b| (&b.params, &b.updater))
    }

    /// [`step`](Self::step), then `params -= update` on every block in the same pass over the
    /// data; bit-identical to `step` followed by the subtraction. Entries outside every block are
    /// left alone in both vectors.
    pub fn step_and_apply(&mut self, params: &mut [T], grad: &mut [T], iteration: u64, epoch: u64) {
        assert_eq!(
            params.len(),
            grad.len(),
            "params and gradient lengths differ"
        );
        for b in &self.blocks {
            run_block(
                &b.updater,
                Some(&mut params[b.params.clone()]),
                &mut grad[b.params.clone()],
                &mut self.state[b.state.clone()],
                iteration,
                epoch,
            );
        }
    }

    /// Turns the full gradient vector into the full update vector, block by block, for the
    /// 0-based `iteration` and `epoch` (schedules read one or the other; Adam-like bias
    /// corrections use `t = iteration + 1`). Entries of `grad` outside every block are left as
    /// they are.
    pub fn step(&mut self, grad: &mut [T], iteration: u64, epoch: u64) {
        for b in &self.blocks {
            run_block(
                &b.updater,
                None,
                &mut grad[b.params.clone()],
                &mut self.state[b.state.clone()],
                iteration,
                epoch,
            );
        }
    }
}

/// Smallest piece of a block worth a thread of its own: below this, waking a helper costs more
/// than the element loop (measured: a 443,610-parameter Adam step takes ~240 µs on one thread).
const MIN_PIECE: usize = 16 * 1024;

/// Runs one block's updater over pieces of at least [`MIN_PIECE`] parameters on up to
/// [`ferrodl_tensor::num_threads`] threads. Each element's update depends only on that element's
/// gradient and state, so the result is bit-identical for any number of pieces.
fn run_block<T: Scalar>(
    updater: &AnyUpdater,
    params: Option<&mut [T]>,
    grad: &mut [T],
    state: &mut [T],
    iteration: u64,
    epoch: u64,
) {
    run_block_with(
        ferrodl_tensor::vector_isa(),
        updater,
        params,
        grad,
        state,
        iteration,
        epoch,
    )
}

/// One piece of a block for [`ferrodl_tensor::vectorized`].
struct Piece<'a, T> {
    updater: &'a AnyUpdater,
    params: Option<&'a mut [T]>,
    grad: &'a mut [T],
    state: [&'a mut [T]; 3],
    iteration: u64,
    epoch: u64,
}

impl<T: Scalar> ferrodl_tensor::Elementwise for Piece<'_, T> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let Piece {
            updater,
            params,
            grad,
            state,
            iteration,
            epoch,
        } = self;
        updater.apply_chunk(params, grad, state, iteration, epoch)
    }
}

/// [`run_block`] with the element kernel compiled for `isa` (the tests compare the widths).
fn run_block_with<T: Scalar>(
    isa: ferrodl_tensor::VectorIsa,
    updater: &AnyUpdater,
    params: Option<&mut [T]>,
    grad: &mut [T],
    state: &mut [T],
    iteration: u64,
    epoch: u64,
) {
    // Each piece's kernel (inlined, see `updaters`) runs in the CPU's widest vector unit:
    // bit-identical to the baseline width, since every element is computed on its own.
    let kernel = |params: Option<&mut [T]>, grad: &mut [T], state: [&mut [T]; 3]| {
        let piece = Piece {
            updater,
            params,
            grad,
            state,
            iteration,
            epoch,
        };
        ferrodl_tensor::vectorized_with(isa, piece)
    };
    let n = grad.len();
    let parts = updaters::state_parts(updater.state_vectors(), n, state);
    let piece = ferrodl_tensor::chunk_len(n, MIN_PIECE);
    if piece >= n {
        kernel(params, grad, parts);
        return;
    }
    let [s0, s1, s2] = parts;
    let (mut s0, mut s1, mut s2) = (
        s0.chunks_mut(piece),
        s1.chunks_mut(piece),
        s2.chunks_mut(piece),
    );
    let mut params = params.map(|p| p.chunks_mut(piece));
    let mut pieces = Vec::with_capacity(n.div_ceil(piece));
    for g in grad.chunks_mut(piece) {
        // Unused state vectors are empty and yield no pieces: hand the kernel empty slices.
        let p = params.as_mut().and_then(|it| it.next());
        let s = [
            s0.next().unwrap_or_default(),
            s1.next().unwrap_or_default(),
            s2.next().unwrap_or_default(),
        ];
        pieces.push((p, g, s));
    }
    ferrodl_tensor::parallel_for_each(pieces, |(p, g, s)| kernel(p, g, s));
}

#[cfg(test)]
mod tests;
