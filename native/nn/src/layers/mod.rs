//! Layers: a [`Layer`] trait over flat parameter/gradient views, and [`build_layer`], which turns
//! a layer configuration plus its input shape into a layer.
//!
//! Layers own no parameters: the network keeps all parameters in one flat vector and hands each
//! layer its block (laid out as [`Layer::param_specs`] says), and the same for gradients. That
//! keeps `params()` a zero-copy view and lets updaters run over the whole vector at once. Layers do
//! own their scratch buffers (im2col columns, pooling arg-max, batch statistics, pre-activations),
//! which grow only when the batch size grows, in [`Layer::reserve_workspace`]: checked against the
//! native memory budget and reserved fallibly before the forward pass, so a workspace too large for
//! the budget is a `NativeMemoryException` naming the layer, not an abort.
//!
//! Regularization, gradient normalization, updaters and frozen layers are handled by the network
//! from the configuration and the parameter kinds, so each layer only does forward/backward.

pub(crate) mod batchnorm;
pub(crate) mod bidirectional;
pub(crate) mod conv;
pub(crate) mod dense;
pub(crate) mod embedding;
pub(crate) mod embedding_sequence;
pub(crate) mod frozen;
pub(crate) mod last_time_step;
pub(crate) mod layer_norm;
pub(crate) mod lstm;
pub(crate) mod lstm_cell;
pub(crate) mod mask_zero;
pub mod misc;
pub(crate) mod output;
pub(crate) mod per_step;
pub(crate) mod pooling;
pub mod recurrent;
pub(crate) mod reshape;
pub(crate) mod simple_rnn;
pub(crate) mod time_distributed;

pub use batchnorm::BatchNormLayer;
pub use bidirectional::BidirectionalMode;
pub use conv::{Conv1dLayer, Conv2dLayer};
pub use dense::DenseLayer;
pub use embedding::EmbeddingLayer;
pub use misc::{ActivationLayer, DropoutLayer, IdentityLayer};
pub use pooling::{GlobalPoolingLayer, Pooling1dLayer, Pooling2dLayer};
pub use reshape::{Upsampling2dLayer, ZeroPaddingLayer};

pub use crate::batch::{Batch, Mask, MaskRule};
use crate::config::{LayerConfig, LayerShapes, Shape, ShapeCx};
use crate::error::NnError;
use ferrodl_tensor::memory::MemoryError;
use ferrodl_tensor::{Rng, Scalar};
use std::fmt::Debug;

/// What a parameter block is, which decides regularization and updater handling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Weights: `l1`, `l2`, `weightDecay`, the layer's `updater`.
    Weight,
    /// Biases (and batch-norm beta): `l1Bias`, `l2Bias`, `weightDecayBias`, `biasUpdater`.
    Bias,
    /// Batch-norm gamma: trained by the `updater`, not regularized.
    Gain,
    /// Running statistics: the layer computes `old − new` as the "gradient" so that
    /// `params -= update` moves them; no updater, no regularization, no normalization.
    State,
}

/// One named parameter block of a layer, in layout order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    /// The reference's parameter key: `W`, `b`, `gamma`, `beta`, `mean`, `var`.
    pub name: &'static str,
    pub kind: ParamKind,
    pub shape: Vec<usize>,
}

impl ParamSpec {
    pub fn new(name: &'static str, kind: ParamKind, shape: Vec<usize>) -> Self {
        ParamSpec { name, kind, shape }
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Which recurrent state a forward pass starts from and leaves behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateMode {
    /// From zeros; nothing is kept (`fit`, `output`, `score`).
    Stateless,
    /// From the state the last `rnnTimeStep` left (zeros if none), and keeps the new one.
    TimeStep,
    /// Truncated BPTT: from the state the previous segment of this minibatch left, and keeps the
    /// new one for the next segment (a state separate from `rnnTimeStep`'s).
    Tbptt,
}

/// Per-call context of a forward pass.
pub struct Ctx<'a> {
    /// Training mode: dropout active, batch norm on batch statistics.
    pub train: bool,
    /// The network's training RNG (dropout masks).
    pub rng: &'a mut Rng,
    /// Recurrent layers: where the state comes from and goes.
    pub state: StateMode,
}

/// A layer of a feed-forward network, generic over the element type.
///
/// All activations are row-major with one example per row of `shape.len()` values.
pub trait Layer<T: Scalar>: Send + Debug {
    /// Layer type name as in the configuration JSON (`"DenseLayer"`, ...).
    fn type_name(&self) -> &'static str;
    fn input_shape(&self) -> Shape;
    fn output_shape(&self) -> Shape;

    /// Values per example going in.
    fn n_in(&self) -> usize {
        self.input_shape().len()
    }

    /// Values per example coming out.
    fn n_out(&self) -> usize {
        self.output_shape().len()
    }

    /// The parameter blocks in layout order (empty for layers without parameters).
    fn param_specs(&self) -> Vec<ParamSpec> {
        Vec::new()
    }

    fn num_params(&self) -> usize {
        self.param_specs().iter().map(ParamSpec::len).sum()
    }

    /// Checks input values the layer cannot take (e.g. an embedding index out of range) before
    /// [`forward`](Self::forward) of `rows` examples; the message names the problem and the row
    /// (and step).
    fn check_input(&self, _input: &[T], _rows: usize) -> Result<(), String> {
        Ok(())
    }

    /// Refuses a forward pass that carries state across calls (`rnnTimeStep`, truncated BPTT)
    /// when the layer cannot (a Bidirectional layer reads each whole sequence backwards too).
    fn check_state_mode(&self, _mode: StateMode) -> Result<(), String> {
        Ok(())
    }

    /// Writes initial values into this layer's parameter block, drawing from `rng` in a
    /// documented order.
    fn init_params(&self, _params: &mut [T], _rng: &mut Rng) {}

    /// How this layer passes its input's feature mask on (default: unchanged).
    fn mask_rule(&self) -> MaskRule {
        MaskRule::Keep
    }

    /// Grows the layer's own scratch buffers to what [`forward`](Self::forward) and
    /// [`backward`](Self::backward) need for a minibatch of `rows` examples, each checked against
    /// the native memory budget and reserved fallibly (`ferrodl_tensor::memory`); `steps` is the
    /// input's time steps (1 without a time axis); `who` names the layer in the refusal. The
    /// executor calls it before every forward pass, so the passes themselves allocate nothing.
    /// Default: no workspace.
    fn reserve_workspace(
        &mut self,
        _rows: usize,
        _steps: usize,
        _who: &str,
    ) -> Result<(), MemoryError> {
        Ok(())
    }

    /// Time steps of the output for an input of `steps` steps (1 without a time axis). Layers
    /// that take sequences of any length say so here; the default takes only the configured
    /// length of a sequence input (1-D convolution and pooling sizes depend on it).
    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        let out = match self.output_shape() {
            Shape::Seq { len, .. } => len,
            _ => 1,
        };
        match self.input_shape() {
            Shape::Seq { len, .. } if steps != len => Err(format!(
                "takes sequences of the configured length {len} only, not {steps} steps"
            )),
            _ => Ok(out),
        }
    }

    /// The names of the recurrent state this layer keeps between calls (the reference's
    /// `rnnGetPreviousState` keys); empty for layers without state.
    fn state_keys(&self) -> &'static [&'static str] {
        &[]
    }

    /// The `rnnTimeStep` state under `key` (`rows × nOut` values), if one is stored.
    fn state(&self, _key: &str) -> Option<&[T]> {
        None
    }

    /// Replaces the `rnnTimeStep` state under `key` with `rows × nOut` values.
    fn set_state(&mut self, key: &str, _values: &[T], _rows: usize) -> Result<(), String> {
        Err(format!("has no recurrent state (no state {key:?})"))
    }

    /// Forgets the state of `mode` (`TimeStep`: `rnnClearPreviousState`; `Tbptt`: a new
    /// minibatch).
    fn clear_state(&mut self, _mode: StateMode) {}

    /// `output (rows × n_out) = f(input (rows × n_in))` for the `batch.rows` examples;
    /// `output`'s old contents are ignored.
    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        ctx: &mut Ctx,
    );

    /// Backpropagation after a training-mode or inference-mode [`forward`](Self::forward) on the
    /// same input and batch. On entry `delta` holds `dL/d(output)` (`rows × n_out`); it may be used as
    /// scratch. Writes this layer's parameter gradient into `grads` (overwriting it) and, when
    /// `grad_input` is given, `dL/d(input)` (`rows × n_in`) into it.
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &mut self,
        params: &[T],
        input: &[T],
        output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    );
}

/// What a layer type knows before it exists, implemented by its configuration in the layer's own
/// file: its shape rule, how it infers an unset `nIn`, and how it is built. The network's
/// validation, construction, parameter counts and the Java builders' `nIn` inference all go
/// through it (ARCHITECTURE.md §13).
pub trait LayerKind {
    /// The output shape for the input `cx.input`, checking the layer's own fields; errors name the
    /// layer through `cx`.
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError>;

    /// Sets unset sizes (0) from the input shape; layers without inferable sizes do nothing.
    fn infer_n_in(&mut self, _input: Shape) {}

    /// Builds the layer for shapes [`output_shape`](Self::output_shape) accepted.
    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError>;

    /// The layout of the layer's time-series arrays (`rnnDataFormat`), for layers that have one.
    /// The engine computes in NCW whatever the layers say; only the network's own arrays (inputs,
    /// outputs, labels) are converted, by [`crate::layout::Boundary`].
    fn rnn_format(&self) -> Option<crate::config::RnnFormat> {
        None
    }
}

/// For a forward or backward pass called without [`Layer::reserve_workspace`] (the layers' unit
/// tests call them directly): grows the workspace there. On the executor's path the workspace is
/// already sized, so this allocates nothing and cannot fail; a refusal here is a caller's bug.
pub(crate) fn reserved(r: Result<(), MemoryError>) {
    if let Err(e) = r {
        panic!("layer workspace not reserved before the pass: {e}");
    }
}

/// `a · b · ...` with overflow reported as `None` (workspace sizes).
pub(crate) fn product(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// Builds the layer for configuration `conf` (validated) with the shapes the validation computed.
pub fn build_layer<T: Scalar>(
    conf: &LayerConfig,
    shapes: LayerShapes,
) -> Result<Box<dyn Layer<T>>, NnError> {
    conf.build::<T>(shapes)
}
