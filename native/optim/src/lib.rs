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
        let mut out: Vec<Block> = Vec::new();
        let mut offset = 0;
        for (params, updater) in blocks {
            // The step carves each block's slices off the front of the vectors in one pass.
            assert!(
                out.last().iter().all(|b| b.params.end <= params.start) && params.start <= params.end,
                "optimizer blocks must be given in parameter order without overlap (block {params:?})"
            );
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

    /// The flat state vector, to be written in place (parameter averaging averages it there
    /// instead of copying a new state in).
    pub fn state_mut(&mut self) -> &mut [T] {
        &mut self.state
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
        self.run(Some(params), grad, None, iteration, epoch);
    }

    /// [`step`](Self::step) with weight decay: on block `i` (in [`blocks`](Self::blocks) order)
    /// `update += decay[i]·params` after the updater (nothing where `decay[i]` is 0), then, with
    /// `apply`, `params -= update`. One pass over the data in cache-sized pieces, bit-identical to
    /// `step`, [`ferrodl_tensor::axpy`] per block and [`ferrodl_tensor::sub_assign`] one after
    /// the other (three passes). Entries outside every block are left alone in both vectors.
    pub fn step_with_decay(
        &mut self,
        params: &mut [T],
        grad: &mut [T],
        decay: &[T],
        apply: bool,
        iteration: u64,
        epoch: u64,
    ) {
        assert_eq!(
            decay.len(),
            self.blocks.len(),
            "one weight-decay coefficient per optimizer block"
        );
        self.run(Some(params), grad, Some((decay, apply)), iteration, epoch);
    }

    /// Turns the full gradient vector into the full update vector, block by block, for the
    /// 0-based `iteration` and `epoch` (schedules read one or the other; Adam-like bias
    /// corrections use `t = iteration + 1`). Entries of `grad` outside every block are left as
    /// they are.
    pub fn step(&mut self, grad: &mut [T], iteration: u64, epoch: u64) {
        self.run(None, grad, None, iteration, epoch);
    }

    fn run(
        &mut self,
        params: Option<&mut [T]>,
        grad: &mut [T],
        decay: Option<(&[T], bool)>,
        iteration: u64,
        epoch: u64,
    ) {
        if let Some(p) = &params {
            assert_eq!(p.len(), grad.len(), "params and gradient lengths differ");
        }
        let isa = ferrodl_tensor::vector_isa();
        run_blocks(
            isa,
            &self.blocks,
            params,
            grad,
            &mut self.state,
            decay,
            iteration,
            epoch,
        );
    }
}

/// Smallest share of a step worth a thread of its own: below this, waking a helper costs more
/// than the element loop (measured: a 443,610-parameter Adam step takes ~240 µs on one thread).
const MIN_PIECE: usize = 16 * 1024;

/// Shares per thread: the threads claim shares one at a time, so a helper that other processes
/// hold back (a loaded machine) delays one share, not half the step. The pass is bound by memory
/// bandwidth, not by the number of pieces (2026-11-28, Intel Xeon: the same ~0.8 ns per Adam
/// element with or without its division and square root).
const SHARES_PER_THREAD: usize = 4;

/// Values per array that a decayed step finishes before it moves on (16 KiB of f32: the
/// gradient, the parameters and the updater's state vectors of one chunk stay in the core's
/// caches between the updater, the decay and the subtraction).
const DECAY_CHUNK: usize = 16 * 1024;

/// A piece of one block for [`ferrodl_tensor::vectorized`]: the updater's element kernel over
/// matching pieces of the parameters (when fused), the gradient and each state vector.
struct Piece<'a, T> {
    updater: &'a AnyUpdater,
    params: Option<&'a mut [T]>,
    grad: &'a mut [T],
    state: [&'a mut [T]; 3],
    /// Weight decay after the kernel: (the block's coefficient, then `params -= update`).
    decay: Option<(T, bool)>,
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
            decay,
            iteration,
            epoch,
        } = self;
        let Some((k, apply)) = decay else {
            return updater.apply_chunk(params, grad, state, iteration, epoch);
        };
        let mut params = params.expect("a decayed step has the parameters");
        let (mut grad, [mut s0, mut s1, mut s2]) = (grad, state);
        // chunk by chunk, each step of the three-pass form on values still in cache
        while !grad.is_empty() {
            let n = grad.len().min(DECAY_CHUNK);
            let (g, p) = (cut(&mut grad, n), cut(&mut params, n));
            let s = [cut(&mut s0, n), cut(&mut s1, n), cut(&mut s2, n)];
            updater.apply_chunk(None, g, s, iteration, epoch);
            if k != T::zero() {
                ferrodl_tensor::axpy(k, p, g);
            }
            if apply {
                ferrodl_tensor::sub_assign(p, g);
            }
        }
    }
}

/// One step of every block in ONE parallel section: the blocks' parameters are cut into at most
/// [`SHARES_PER_THREAD`] × [`ferrodl_tensor::num_threads`] shares of about equal length (a share
/// may span the end of one block and the start of the next; each of its pieces runs its own
/// block's updater), claimed by the threads one at a time, so the threads finish together and
/// the helpers are woken once per step, not once per block. Each
/// piece's kernel is compiled for `isa` (inlined, see `updaters`); every element's update
/// depends only on that element's gradient and state, so the result is bit-identical for any
/// cut, thread count or width.
#[allow(clippy::too_many_arguments)]
fn run_blocks<T: Scalar>(
    isa: ferrodl_tensor::VectorIsa,
    blocks: &[Block],
    mut params: Option<&mut [T]>,
    grad: &mut [T],
    state: &mut [T],
    decay: Option<(&[T], bool)>,
    iteration: u64,
    epoch: u64,
) {
    let total: usize = blocks.iter().map(|b| b.params.len()).sum();
    let threads = ferrodl_tensor::num_threads();
    let shares = if threads == 1 {
        1
    } else {
        (threads * SHARES_PER_THREAD).min(total / MIN_PIECE).max(1)
    };
    let target = total.div_ceil(shares).max(1);
    let mut items: Vec<Vec<Piece<'_, T>>> = (0..shares).map(|_| Vec::new()).collect();
    let (mut filled, mut item) = (0usize, 0usize);
    // Carve each block's slices off the front of what is left (blocks are in parameter order,
    // disjoint; gaps between them are skipped), then cut them at the share boundaries.
    let (mut p_rest, mut g_rest, mut s_rest) = (params.take(), grad, state);
    let (mut p_at, mut s_at) = (0usize, 0usize);
    for (i, b) in blocks.iter().enumerate() {
        debug_assert!(b.params.start >= p_at, "blocks in order (checked by `new`)");
        let decay = decay.map(|(k, apply)| (k[i], apply));
        let skip = b.params.start - p_at;
        let n = b.params.len();
        let (g_block, g_next) = std::mem::take(&mut g_rest)[skip..].split_at_mut(n);
        g_rest = g_next;
        let mut p_block = p_rest.take().map(|p| {
            let (mine, next) = p[skip..].split_at_mut(n);
            p_rest = Some(next);
            mine
        });
        p_at = b.params.end;
        debug_assert_eq!(b.state.start, s_at, "state blocks are contiguous");
        let (s_block, s_next) = std::mem::take(&mut s_rest).split_at_mut(b.state.len());
        s_rest = s_next;
        s_at = b.state.end;
        let [mut s0, mut s1, mut s2] = updaters::state_parts(b.updater.state_vectors(), n, s_block);
        let mut g_block = g_block;
        let mut left = n;
        while left > 0 {
            if filled >= target && item + 1 < shares {
                item += 1;
                filled = 0;
            }
            // the last share takes whatever is left; the others fill up to `target`
            let take = if item + 1 == shares {
                left
            } else {
                left.min(target - filled)
            };
            items[item].push(Piece {
                updater: &b.updater,
                params: p_block.as_mut().map(|p| cut(p, take)),
                grad: cut(&mut g_block, take),
                state: [cut(&mut s0, take), cut(&mut s1, take), cut(&mut s2, take)],
                decay,
                iteration,
                epoch,
            });
            filled += take;
            left -= take;
        }
    }
    let run = |share: Vec<Piece<'_, T>>| {
        for piece in share {
            ferrodl_tensor::vectorized_with(isa, piece);
        }
    };
    if shares == 1 {
        items.into_iter().for_each(run);
    } else {
        ferrodl_tensor::parallel_for_each(items, run);
    }
}

/// The first `take` values of `v` (fewer if it is shorter: an unused, empty state vector),
/// leaving the rest in `v`.
fn cut<'a, T>(v: &mut &'a mut [T], take: usize) -> &'a mut [T] {
    let at = take.min(v.len());
    let (head, tail) = std::mem::take(v).split_at_mut(at);
    *v = tail;
    head
}

/// [`run_blocks`] over one block that covers `grad` (the tests compare the widths with this).
#[cfg(test)]
fn run_block_with<T: Scalar>(
    isa: ferrodl_tensor::VectorIsa,
    updater: &AnyUpdater,
    params: Option<&mut [T]>,
    grad: &mut [T],
    state: &mut [T],
    iteration: u64,
    epoch: u64,
) {
    let block = Block {
        params: 0..grad.len(),
        state: 0..state.len(),
        updater: updater.clone(),
    };
    run_blocks(isa, &[block], params, grad, state, None, iteration, epoch);
}

#[cfg(test)]
mod tests;
