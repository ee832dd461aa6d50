//! Layers: a [`Layer`] trait over flat parameter/gradient views, and the dense layers built from
//! their configurations (`DenseLayerConfig` -> [`DenseLayer`], `OutputLayerConfig` ->
//! [`OutputLayer`]).
//!
//! Layers own no parameters: the network keeps all parameters in one flat vector and hands each
//! layer its block (`W` row-major `nIn × nOut`, then `b`), and the same for gradients. That keeps
//! `params()` a zero-copy view and lets updaters run over the whole vector at once.

mod dense;

pub use dense::{DenseLayer, OutputLayer};

use ferrodl_optim::AnyUpdater;
use ferrodl_tensor::{Rng, Scalar};
use std::fmt::Debug;
use std::ops::Range;

/// A layer of a feed-forward network, generic over the element type.
///
/// All matrices are row-major with one example per row.
pub trait Layer<T: Scalar>: Send + Sync + Debug {
    /// Layer type name as in the configuration JSON (`"DenseLayer"`, ...).
    fn type_name(&self) -> &'static str;
    fn n_in(&self) -> usize;
    fn n_out(&self) -> usize;
    /// Length of this layer's parameter block.
    fn num_params(&self) -> usize;

    /// Writes initial values into this layer's parameter block, drawing from `rng` in the
    /// documented order (see [`DenseLayer`]).
    fn init_params(&self, params: &mut [T], rng: &mut Rng);

    /// `output (rows × n_out) = f(input (rows × n_in))`; `output`'s old contents are ignored.
    fn forward(&self, params: &[T], input: &[T], rows: usize, output: &mut [T]);

    /// Backpropagation. On entry `delta` holds `dL/d(output)` (`rows × n_out`); it is used as
    /// scratch. Writes this layer's parameter gradient into `grads` (overwriting it) and, when
    /// `grad_input` is given, `dL/d(input)` (`rows × n_in`) into it.
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        params: &[T],
        input: &[T],
        output: &[T],
        rows: usize,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    );

    /// L1/L2 penalty of this layer's parameters (added to the score).
    fn regularization_score(&self, params: &[T]) -> f64;

    /// Adds the gradient of [`Layer::regularization_score`] to `grads`.
    fn add_regularization_gradient(&self, params: &[T], grads: &mut [T]);

    /// The updater of each parameter sub-block (ranges relative to this layer's block).
    fn updater_blocks(&self) -> Vec<(Range<usize>, AnyUpdater)>;
}
