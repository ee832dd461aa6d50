//! `MultiLayerNetwork`: a stack of layers ending in an output or loss layer, trained one minibatch
//! per `fit` call (ARCHITECTURE.md §3–§4).

use crate::batch::Mask;
use crate::config::{
    Activation, BackpropType, GradientNormalization, LayerShapes, MultiLayerConfiguration,
};
use crate::error::NnError;
use crate::executor::{Executor, NodeDef, NodeDefKind, ParamInit, Src};
use crate::layers::{Layer, StateMode};
use crate::loss::LabelsMask;
use crate::tbptt::{self, MaskArg};
use ferrodl_tensor::{flush_denormals, Scalar};
use crate::layout::{self, Boundary};
use std::borrow::Cow;
use std::ops::Range;

/// A feed-forward network: the chain case of the graph executor (layer `i` reads layer `i − 1`,
/// the last layer is the one output head).
///
/// The element type defaults to `f32` (the public API the JNI facade uses);
/// `MultiLayerNetwork<f64>` (built with [`MultiLayerNetwork::from_configuration`]) runs the same
/// code in double precision for gradient checks.
///
/// Parameter layout (ARCHITECTURE.md §2.2): for each layer in order, its parameter blocks as
/// [`Layer::param_specs`] lists them (dense: `W` row-major `nIn × nOut`, then `b`), keyed
/// `<layer index>_<name>`. Gradients use the same layout in a second flat vector, and updater
/// state is one flat vector laid out block by block in the same order. Forward/backward buffers
/// are kept between calls and only grow, so repeated `fit` calls with one batch size do not
/// allocate.
///
/// Seeded initialisation: one RNG is created from `seed` (its bits as `u64`) and consumed
/// layer by layer in order (see each layer's `init_params`). Since the draws are made in `f64` and
/// then rounded, an `f32` and an `f64` network from one seed agree to `f32` rounding. Dropout
/// masks come from a second RNG derived from the same seed.
#[derive(Debug)]
pub struct MultiLayerNetwork<T: Scalar = f32> {
    conf: MultiLayerConfiguration,
    exec: Executor<T>,
    /// NWC features/outputs converted at the boundary (`crate::layout`).
    layout: Boundary,
}

/// Labels (and their mask) in the engine's layout, owned or borrowed.
type EngineLabels<'a, T> = (Cow<'a, [T]>, Option<(Cow<'a, [T]>, usize)>);

fn describe_value(v: f64) -> &'static str {
    if v.is_nan() {
        "NaN"
    } else if v > 0.0 {
        "+infinity"
    } else {
        "-infinity"
    }
}

/// Fails with the row and column of the first NaN/infinite value of a `? × cols` matrix;
/// `what` is the subject with its verb ("features contain").
fn check_finite<T: Scalar>(what: &str, data: &[T], cols: usize) -> Result<(), NnError> {
    match ferrodl_tensor::first_non_finite(data) {
        None => Ok(()),
        Some(i) => Err(NnError::InvalidInput(format!(
            "{what} {} at row {}, column {}",
            describe_value(data[i].f64()),
            i / cols,
            i % cols
        ))),
    }
}

impl MultiLayerNetwork<f32> {
    /// Validates the configuration and builds an `f32` network with seeded parameters.
    pub fn new(conf: MultiLayerConfiguration) -> Result<Self, NnError> {
        Self::from_configuration(conf)
    }
}

impl<T: Scalar> MultiLayerNetwork<T> {
    /// Builds a network of any element type (`MultiLayerNetwork::<f64>::from_configuration`).
    pub fn from_configuration(conf: MultiLayerConfiguration) -> Result<Self, NnError> {
        Self::with_init(conf, ParamInit::Seeded)
    }

    /// [`Self::from_configuration`] with the parameters filled as `init` says: the same network as
    /// `from_configuration` then `set_params`, without drawing the weights that would replace.
    pub fn with_init(conf: MultiLayerConfiguration, init: ParamInit<'_, T>) -> Result<Self, NnError> {
        let shapes = conf.layer_shapes()?;
        let n = conf.layers.len();
        let defs = conf
            .layers
            .iter()
            .zip(&shapes)
            .enumerate()
            .map(|(i, (lc, s))| NodeDef {
                key: i.to_string(),
                who: lc.describe(i),
                sources: vec![if i == 0 {
                    Src::Input(0)
                } else {
                    Src::Node(i - 1)
                }],
                kind: NodeDefKind::Layer {
                    conf: lc,
                    shapes: *s,
                    frozen: lc.is_frozen(),
                },
            })
            .collect();
        // layer_shapes() guarantees an output or loss layer in last position.
        let exec = Executor::new(
            defs,
            vec![shapes[0].node().input],
            &[n - 1],
            conf.seed,
            conf.mini_batch,
            init,
        )?;
        let last = &conf.layers[n - 1];
        let layout = Boundary::new(
            [(shapes[0].node().input, layout::input_format(conf.input_type.as_ref(), conf.layers.first()))],
            [(shapes[n - 1].node().output, last.rnn_format())],
        );
        Ok(MultiLayerNetwork { conf, exec, layout })
    }

    /// The configuration, with the current iteration and epoch counters.
    pub fn configuration(&self) -> &MultiLayerConfiguration {
        &self.conf
    }

    pub fn num_params(&self) -> usize {
        self.exec.params().len()
    }

    /// All parameters, flat (layout in the type's docs).
    pub fn params(&self) -> &[T] {
        self.exec.params()
    }

    /// Replaces all parameters; `p` must have [`num_params`](Self::num_params) values.
    pub fn set_params(&mut self, p: &[T]) -> Result<(), NnError> {
        self.exec.set_params(p)
    }

    /// The gradient of the last [`compute_gradient_and_score`](Self::compute_gradient_and_score)
    /// (loss + L1/L2), same layout as `params()`. After `fit` it holds the update that was
    /// subtracted, not the raw gradient.
    pub fn gradient(&self) -> &[T] {
        self.exec.grads()
    }

    /// Updater state, flat (docs/UPDATERS.md gives each updater's layout), per trainable block.
    pub fn updater_state(&self) -> &[T] {
        self.exec.updater_state()
    }

    pub fn set_updater_state(&mut self, s: &[T]) -> Result<(), NnError> {
        self.exec.set_updater_state(s)
    }

    /// Starts the training RNG (dropout masks, weight noise) again from the configuration's seed,
    /// where a newly built network starts it: a network reused for another fit draws what a new
    /// one would.
    pub fn reset_training_rng(&mut self) {
        self.exec.reset_training_rng();
    }

    /// The updater state to be written in place (same layout as [`Self::updater_state`]).
    pub fn updater_state_mut(&mut self) -> &mut [T] {
        self.exec.updater_state_mut()
    }

    /// Values per example of the input.
    pub fn n_in(&self) -> usize {
        self.exec.input_shape(0).len()
    }

    /// Values per example of the output (labels width).
    pub fn n_out(&self) -> usize {
        self.exec.node_shape(self.num_layers() - 1).len()
    }

    /// Number of layers (including the output layer).
    pub fn num_layers(&self) -> usize {
        self.exec.num_nodes()
    }

    /// Layer `i` (the last one is the output layer's parameterised part); `None` when out of range.
    pub fn layer(&self, i: usize) -> Option<&dyn Layer<T>> {
        self.exec.layer(i)
    }

    /// Input and output shape of layer `i`.
    pub fn layer_shapes(&self, i: usize) -> Option<LayerShapes> {
        self.exec.layer_shapes(i)
    }

    /// Range of layer `i`'s block in `params()`.
    pub fn param_range(&self, i: usize) -> Option<Range<usize>> {
        self.exec.param_range(i)
    }

    /// The reference's parameter table: (`"<layer>_<name>"`, range in `params()`, shape) for
    /// every parameter block in layout order.
    pub fn param_table(&self) -> Vec<(String, Range<usize>, Vec<usize>)> {
        self.exec.param_table()
    }

    pub fn iteration_count(&self) -> u64 {
        self.conf.iteration_count
    }

    pub fn epoch_count(&self) -> u64 {
        self.conf.epoch_count
    }

    pub fn set_counters(&mut self, iteration: u64, epoch: u64) {
        self.conf.iteration_count = iteration;
        self.conf.epoch_count = epoch;
    }

    /// Adds one to the epoch counter (what the reference does at the end of a pass over the data).
    pub fn increment_epoch_count(&mut self) {
        self.conf.epoch_count += 1;
    }

    /// The learning rate of layer `i`'s weights at the current counters (schedules applied);
    /// `None` for layers without parameters, NaN for updaters without one (AdaDelta, NoOp).
    pub fn learning_rate(&self, i: usize) -> Option<f64> {
        self.exec
            .learning_rate(i, self.conf.iteration_count, self.conf.epoch_count)
    }

    // ---- input validation -------------------------------------------------------------------

    fn check_rows(rows: usize) -> Result<(), NnError> {
        if rows == 0 {
            return Err(NnError::InvalidInput(
                "rows must be at least 1 (the minibatch is empty)".into(),
            ));
        }
        Ok(())
    }

    /// Checks a features matrix of `rows × cols` against the first layer.
    pub fn check_features_shape(&self, rows: usize, cols: usize) -> Result<(), NnError> {
        Self::check_rows(rows)?;
        if cols != self.n_in() {
            let what = match self.conf.input_type {
                Some(t) => format!("the input type {t:?} expects {} values", self.n_in()),
                None => format!(
                    "{} expects nIn={}",
                    self.conf.layers[0].describe(0),
                    self.n_in()
                ),
            };
            return Err(NnError::Shape(format!(
                "features have {cols} columns but {what}"
            )));
        }
        Ok(())
    }

    /// Checks a labels matrix of `rows × cols` against the output layer.
    pub fn check_labels_shape(&self, rows: usize, cols: usize) -> Result<(), NnError> {
        Self::check_rows(rows)?;
        if cols != self.n_out() {
            let last = self.num_layers() - 1;
            return Err(NnError::Shape(format!(
                "labels have {cols} columns but the output layer, {}, has nOut={}",
                self.conf.layers[last].describe(last),
                self.n_out()
            )));
        }
        Ok(())
    }

    /// Shape of a flat array given only its row count: infers columns, then checks them.
    fn check_flat(
        &self,
        what: &str,
        len: usize,
        rows: usize,
        expected_cols: usize,
    ) -> Result<(), NnError> {
        Self::check_rows(rows)?;
        if len == rows * expected_cols {
            return Ok(());
        }
        let cols = len / rows;
        if cols * rows == len {
            // A whole number of rows: report the width the caller actually has.
            return match what {
                "features" => self.check_features_shape(rows, cols),
                _ => self.check_labels_shape(rows, cols),
            };
        }
        Err(NnError::Shape(format!(
            "{what} have {len} values, which is not {rows} rows of {expected_cols} columns ({} values)",
            rows * expected_cols
        )))
    }

    /// Full check of a features array (shape, then NaN/infinite values with row and column). A
    /// recurrent input takes any whole number of time steps (`C·T` values per example).
    pub fn check_features(&self, features: &[T], rows: usize) -> Result<(), NnError> {
        let width = if self.exec.input_shape(0).is_seq() {
            Self::check_rows(rows)?;
            let t = self.exec.input_steps(0, features.len(), rows).map_err(|m| {
                NnError::Shape(format!(
                    "features: {m} ({} takes {})",
                    self.conf.layers[0].describe(0),
                    self.exec.input_shape(0)
                ))
            })?;
            self.exec.input_shape(0).width(t)
        } else {
            self.check_flat("features", features.len(), rows, self.n_in())?;
            self.n_in()
        };
        check_finite("features contain", features, width)?;
        self.exec
            .layer(0)
            .expect("a network has at least one layer")
            .check_input(features, rows)
            .map_err(|m| NnError::InvalidInput(format!("{}: {m}", self.conf.layers[0].describe(0))))
    }

    /// Full check of labels and the optional labels mask.
    pub fn check_labels(
        &self,
        labels: &[T],
        rows: usize,
        mask: Option<(&[T], usize)>,
    ) -> Result<(), NnError> {
        let n_out = self.n_out();
        if let Some(c) = self.exec.output_seq_channels(0) {
            let width = self.exec.output_width(0);
            return self.check_sequence_labels(labels, rows, mask, c, width);
        }
        self.check_flat("labels", labels.len(), rows, n_out)?;
        check_finite("labels contain", labels, n_out)?;
        if let Some((m, cols)) = mask {
            if cols != 1 && cols != n_out {
                return Err(NnError::Shape(format!(
                    "labels mask has {cols} columns; it must have 1 (one value per example) \
                     or nOut={n_out} (one value per output)"
                )));
            }
            if m.len() != rows * cols {
                return Err(NnError::Shape(format!(
                    "labels mask has {} values but {rows} rows × {cols} columns need {}",
                    m.len(),
                    rows * cols
                )));
            }
            check_finite("labels mask contains", m, cols)?;
        }
        Ok(())
    }

    /// Labels of a sequence output (after a forward pass, which fixes the output's steps):
    /// `rows × nOut·T`, and a mask of `[N, T]`, `[N, nOut·T]` or one value per example.
    fn check_sequence_labels(
        &self,
        labels: &[T],
        rows: usize,
        mask: Option<(&[T], usize)>,
        c: usize,
        width: usize,
    ) -> Result<(), NnError> {
        let t = width / c.max(1);
        let last = self.num_layers() - 1;
        if labels.len() != rows * width {
            return Err(NnError::Shape(format!(
                "labels have {} values but the output layer, {}, gives {rows} examples × \
                 nOut={c} × {t} time steps = {} (labels of a recurrent output are [N, nOut, T])",
                labels.len(),
                self.conf.layers[last].describe(last),
                rows * width
            )));
        }
        check_finite("labels contain", labels, width)?;
        if let Some((m, cols)) = mask {
            if (cols != 1 && cols != t && cols != width) || m.len() != rows * cols {
                return Err(NnError::Shape(format!(
                    "labels mask has {} values in {cols} columns; for {rows} examples of {t} time \
                     steps it must be [N, T] = {rows}×{t} (or one value per example, or one per \
                     output and step)",
                    m.len()
                )));
            }
            check_finite("labels mask contains", m, cols)?;
        }
        Ok(())
    }

    /// Validates the features (and mask) and runs the forward pass.
    fn forward_checked(
        &mut self,
        features: &[T],
        features_mask: MaskArg<'_, T>,
        rows: usize,
        train: bool,
        state: StateMode,
    ) -> Result<(), NnError> {
        self.check_features(features, rows)?;
        if features_mask.is_some() {
            // The mask's steps are the input's: known once the input is checked.
            let t = match self.exec.input_shape(0).is_seq() {
                true => self.exec.input_steps(0, features.len(), rows).unwrap_or(1),
                false => 1,
            };
            self.check_features_mask_steps(features_mask, rows, t)?;
        }
        let m = features_mask.map(|(data, cols)| Mask { data, cols });
        self.exec.forward_in(&[features], &[m], rows, train, state)
    }

    fn check_features_mask_steps(
        &self,
        mask: MaskArg<'_, T>,
        rows: usize,
        t: usize,
    ) -> Result<(), NnError> {
        let Some((m, cols)) = mask else {
            return Ok(());
        };
        if (cols != 1 && cols != t) || m.len() != rows * cols {
            return Err(NnError::Shape(format!(
                "features mask has {} values in {cols} columns; for {rows} examples of {t} time \
                 steps it must be [N, T] = {rows}×{t} (or one value per example)",
                m.len()
            )));
        }
        check_finite("features mask contains", m, cols)
    }

    /// Truncated BPTT's segment lengths, when configured and the input is a sequence.
    fn tbptt(&self) -> Option<(usize, usize)> {
        (self.conf.backprop_type == BackpropType::TruncatedBptt
            && self.exec.input_shape(0).is_seq())
        .then_some((self.conf.tbptt_fwd_length, self.conf.tbptt_back_length))
    }

    // ---- layouts ----------------------------------------------------------------------------

    /// Labels and labels mask in the engine's layout (NWC outputs converted).
    fn engine_labels<'a>(
        &self,
        labels: &'a [T],
        rows: usize,
        mask: MaskArg<'a, T>,
    ) -> EngineLabels<'a, T> {
        (
            self.layout.labels(0, labels, rows),
            self.layout.labels_mask(0, mask, rows, labels.len()),
        )
    }

    // ---- computation ------------------------------------------------------------------------

    /// Score of the current output against `labels` (after `forward`): data term + L1/L2.
    fn score_from_output(&self, labels: &[T], mask: Option<LabelsMask<'_, T>>) -> f64 {
        self.exec.data_score(&[labels], &[mask]) + self.exec.regularization_score()
    }

    /// Validates a minibatch and runs forward + backward; `grads` holds the raw data gradient.
    fn forward_backward(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        labels_mask: MaskArg<'_, T>,
    ) -> Result<f64, NnError> {
        self.forward_checked(features, features_mask, rows, true, StateMode::Stateless)?;
        self.check_labels(labels, rows, labels_mask)?;
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        let score = self.score_from_output(labels, mask);
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        let fmask = features_mask.map(|(data, cols)| Mask { data, cols });
        self.exec
            .backward(&[features], &[fmask], &[labels], &[mask]);
        Ok(score)
    }

    /// Forward (training mode) and backward pass without updating anything: fills
    /// [`gradient`](Self::gradient) with the gradient of the returned score (loss mean + L1/L2)
    /// with respect to `params()`. Running statistics blocks (batch norm `mean`/`var`) hold
    /// `old − new` instead, which is not a gradient of the score.
    pub fn compute_gradient_and_score(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        self.compute_gradient_and_score_masked(features, labels, rows, None, labels_mask)
    }

    /// [`compute_gradient_and_score`](Self::compute_gradient_and_score) with a features mask
    /// (full backpropagation through time; truncated BPTT applies to training calls only).
    pub fn compute_gradient_and_score_masked(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        labels_mask: MaskArg<'_, T>,
    ) -> Result<f64, NnError> {
        // Subnormal values (e.g. Adam's second moments late in training) are 5-8x slower
        // on x86; flushing them to zero changes results only below f32::MIN_POSITIVE.
        let _denormals = flush_denormals();
        let f = self.layout.input(0, features, rows);
        let features = &f[..];
        let (y, lm) = self.engine_labels(labels, rows, labels_mask);
        let (labels, labels_mask) = (&y[..], lm.as_ref().map(|(m, c)| (&m[..], *c)));
        let score = self.forward_backward(features, labels, rows, features_mask, labels_mask)?;
        self.exec.add_regularization_gradient();
        Ok(score)
    }

    /// One training iteration on one minibatch: forward, backward, updater, `params -= update`,
    /// iteration counter + 1. Returns the score of the forward pass (before the update).
    /// Bit-identical to [`compute_update`](Self::compute_update) followed by the subtraction; the
    /// updater, weight decay and the subtraction run as one pass over the parameters.
    pub fn fit(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        self.fit_masked(features, labels, rows, None, labels_mask)
    }

    /// [`fit`](Self::fit) with a features mask. Under truncated BPTT (a recurrent input and
    /// `backpropType` TruncatedBPTT) the minibatch is one iteration per segment of
    /// `tBPTTForwardLength` steps, and the score returned is the last segment's.
    pub fn fit_masked(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        labels_mask: MaskArg<'_, T>,
    ) -> Result<f64, NnError> {
        let _denormals = flush_denormals();
        let f = self.layout.input(0, features, rows);
        let features = &f[..];
        let (y, lm) = self.engine_labels(labels, rows, labels_mask);
        let (labels, labels_mask) = (&y[..], lm.as_ref().map(|(m, c)| (&m[..], *c)));
        if let Some((fwd, back)) = self.tbptt() {
            return self.fit_tbptt(features, labels, rows, features_mask, labels_mask, fwd, back);
        }
        let score = self.forward_backward(features, labels, rows, features_mask, labels_mask)?;
        let (iteration, epoch) = (self.conf.iteration_count, self.conf.epoch_count);
        self.exec.fit_step(iteration, epoch);
        self.conf.iteration_count += 1;
        Ok(score)
    }

    /// Truncated BPTT: validates the whole minibatch once, then one training iteration per
    /// segment (weight decay handled as in `fit`).
    #[allow(clippy::too_many_arguments)]
    fn fit_tbptt(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        labels_mask: MaskArg<'_, T>,
        fwd: usize,
        back: usize,
    ) -> Result<f64, NnError> {
        // Validated without a forward pass over all T steps (a third of the work at T = 1000,
        // TBPTT 50): features and masks here, the labels against the output steps the layers
        // give for T; each segment's forward checks the rest.
        self.check_features(features, rows)?;
        let t = self.exec.input_steps(0, features.len(), rows).map_err(NnError::Shape)?;
        self.check_features_mask_steps(features_mask, rows, t)?;
        let width = self.exec.output_widths_for(rows, &[t])?[0];
        match self.exec.output_seq_channels(0) {
            Some(c) => self.check_sequence_labels(labels, rows, labels_mask, c, width)?,
            None => self.check_labels(labels, rows, labels_mask)?,
        }
        let conf = &mut self.conf;
        let arrays = tbptt::Arrays {
            inputs: &[features],
            input_masks: &[features_mask],
            labels: &[labels],
            label_masks: &[labels_mask],
            rows,
        };
        let data = tbptt::run(&mut self.exec, &arrays, t, fwd, back, |exec| {
            exec.fit_step(conf.iteration_count, conf.epoch_count);
            conf.iteration_count += 1;
        })?;
        Ok(data + self.exec.regularization_score())
    }

    /// A training iteration that leaves the parameters alone: forward, backward, gradient
    /// normalization, L1/L2, updater, weight decay, then the iteration counter + 1.
    /// [`update`](Self::update) then holds what `fit` would subtract (zero for frozen layers,
    /// `old − new` for running statistics). Gradient sharing uses this: the update is
    /// threshold-encoded and only the encoded part is applied (to every replica alike), the rest
    /// stays in the worker's residual.
    pub fn compute_update(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        self.compute_update_masked(features, labels, rows, None, labels_mask)
    }

    /// [`compute_update`](Self::compute_update) with a features mask. Under truncated BPTT the
    /// segments are trained in turn as `fit` does, and the update is the sum of their updates
    /// (`params before − params after`); the parameters are then restored.
    pub fn compute_update_masked(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        labels_mask: MaskArg<'_, T>,
    ) -> Result<f64, NnError> {
        // Subnormal values (e.g. Adam's second moments late in training) are 5-8x slower
        // on x86; flushing them to zero changes results only below f32::MIN_POSITIVE.
        let _denormals = flush_denormals();
        let f = self.layout.input(0, features, rows);
        let features = &f[..];
        let (y, lm) = self.engine_labels(labels, rows, labels_mask);
        let (labels, labels_mask) = (&y[..], lm.as_ref().map(|(m, c)| (&m[..], *c)));
        self.compute_update_engine(features, labels, rows, features_mask, labels_mask)
    }

    /// [`compute_update_masked`](Self::compute_update_masked) on arrays in the engine's layout.
    fn compute_update_engine(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        labels_mask: MaskArg<'_, T>,
    ) -> Result<f64, NnError> {
        if let Some((fwd, back)) = self.tbptt() {
            let before = self.exec.params().to_vec();
            let score =
                self.fit_tbptt(features, labels, rows, features_mask, labels_mask, fwd, back)?;
            self.exec.take_update_from(&before);
            return Ok(score);
        }
        let score = self.forward_backward(features, labels, rows, features_mask, labels_mask)?;
        let (iteration, epoch) = (self.conf.iteration_count, self.conf.epoch_count);
        self.exec.update_step(iteration, epoch);
        self.conf.iteration_count += 1;
        Ok(score)
    }

    /// The update of the last [`compute_update`](Self::compute_update) or `fit` (layout of `params()`).
    pub fn update(&self) -> &[T] {
        self.exec.grads()
    }

    /// Mutable parameters, for applying updates that were computed elsewhere (e.g. decoded from
    /// other workers' messages).
    pub fn params_mut(&mut self) -> &mut [T] {
        self.exec.params_mut()
    }

    /// Network output (`rows × nOut`, or `rows × nOut·T` for a recurrent output) for
    /// `features`. `train` selects training-mode behaviour (dropout on, batch norm on batch
    /// statistics — without touching the running statistics).
    pub fn output(&mut self, features: &[T], rows: usize, train: bool) -> Result<Vec<T>, NnError> {
        self.output_masked(features, rows, None, train)
    }

    /// [`output`](Self::output) with a features mask.
    pub fn output_masked(
        &mut self,
        features: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        train: bool,
    ) -> Result<Vec<T>, NnError> {
        let _denormals = flush_denormals();
        let f = self.layout.input(0, features, rows);
        let features = &f[..];
        self.forward_checked(features, features_mask, rows, train, StateMode::Stateless)?;
        Ok(self.layout.output(0, self.exec.output(0).to_vec(), rows))
    }

    /// The reference's `rnnTimeStep`: inference from the state the previous call left (zeros
    /// at first or after [`rnn_clear_previous_state`](Self::rnn_clear_previous_state)), keeping
    /// the new state. `features` is `rows × C` (one step) or `rows × C·T`; the output has the
    /// same number of steps.
    pub fn rnn_time_step(&mut self, features: &[T], rows: usize) -> Result<Vec<T>, NnError> {
        let _denormals = flush_denormals();
        let f = self.layout.input(0, features, rows);
        let features = &f[..];
        self.forward_checked(features, None, rows, false, StateMode::TimeStep)?;
        Ok(self.layout.output(0, self.exec.output(0).to_vec(), rows))
    }

    /// Forgets the `rnnTimeStep` state of every layer.
    pub fn rnn_clear_previous_state(&mut self) {
        self.exec.clear_state(StateMode::TimeStep);
    }

    /// Layer `i`'s `rnnTimeStep` state under `key` (`rows × nOut`), if it keeps one.
    pub fn rnn_previous_state(&self, i: usize, key: &str) -> Option<&[T]> {
        self.exec.layer(i)?.state(key)
    }

    /// The state keys of layer `i` (empty for layers without recurrent state).
    pub fn rnn_state_keys(&self, i: usize) -> &'static [&'static str] {
        self.exec.layer(i).map_or(&[], |l| l.state_keys())
    }

    /// Sets layer `i`'s `rnnTimeStep` state under `key` to `rows × nOut` values.
    pub fn rnn_set_previous_state(
        &mut self,
        i: usize,
        key: &str,
        values: &[T],
        rows: usize,
    ) -> Result<(), NnError> {
        let who = match self.conf.layers.get(i) {
            Some(l) => l.describe(i),
            None => {
                return Err(NnError::InvalidInput(format!(
                    "layer {i} does not exist (the network has {} layers)",
                    self.conf.layers.len()
                )))
            }
        };
        let layer = self.exec.layer_mut(i).expect("a layer node per layer");
        layer
            .set_state(key, values, rows)
            .map_err(|m| NnError::InvalidInput(format!("{who}: {m}")))
    }

    /// Score (loss mean + L1/L2) of a minibatch in inference mode, without changing the network.
    pub fn score(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        self.score_masked(features, labels, rows, None, labels_mask)
    }

    /// [`score`](Self::score) with a features mask.
    pub fn score_masked(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        labels_mask: MaskArg<'_, T>,
    ) -> Result<f64, NnError> {
        let _denormals = flush_denormals();
        let f = self.layout.input(0, features, rows);
        let features = &f[..];
        let (y, lm) = self.engine_labels(labels, rows, labels_mask);
        let (labels, labels_mask) = (&y[..], lm.as_ref().map(|(m, c)| (&m[..], *c)));
        self.forward_checked(features, features_mask, rows, false, StateMode::Stateless)?;
        self.check_labels(labels, rows, labels_mask)?;
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        Ok(self.score_from_output(labels, mask))
    }

    /// Per-example scores in inference mode (the reference's `scoreExamples`): each example's
    /// loss, plus the whole L1/L2 term when `include_regularization` (not divided by N).
    pub fn score_examples(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
        include_regularization: bool,
    ) -> Result<Vec<f64>, NnError> {
        self.score_examples_masked(features, labels, rows, None, labels_mask, include_regularization)
    }

    /// [`score_examples`](Self::score_examples) with a features mask; a recurrent output's
    /// example score is the sum over its unmasked steps.
    pub fn score_examples_masked(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        features_mask: MaskArg<'_, T>,
        labels_mask: MaskArg<'_, T>,
        include_regularization: bool,
    ) -> Result<Vec<f64>, NnError> {
        let _denormals = flush_denormals();
        let f = self.layout.input(0, features, rows);
        let features = &f[..];
        let (y, lm) = self.engine_labels(labels, rows, labels_mask);
        let (labels, labels_mask) = (&y[..], lm.as_ref().map(|(m, c)| (&m[..], *c)));
        self.forward_checked(features, features_mask, rows, false, StateMode::Stateless)?;
        self.check_labels(labels, rows, labels_mask)?;
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        let mut per = self.exec.score_examples(&[labels], &[mask]);
        if include_regularization {
            let reg = self.exec.regularization_score();
            per.iter_mut().for_each(|v| *v += reg);
        }
        Ok(per)
    }

    /// The activation of the network's output (after the last layer).
    pub fn output_activation(&self) -> Activation {
        self.exec.output_activation(0)
    }

    /// Gradient normalization mode of layer `i` (for summaries).
    pub fn gradient_normalization(&self, i: usize) -> GradientNormalization {
        self.conf.layers[i]
            .base()
            .map_or(GradientNormalization::None, |b| b.gradient_normalization)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> MultiLayerNetwork<f32> {
        let json = r#"{"formatVersion":1,"seed":3,"layers":[
            {"type":"DenseLayer","nIn":3,"nOut":5,"activation":"RELU"},
            {"type":"OutputLayer","nIn":5,"nOut":2,"activation":"SOFTMAX","lossFunction":"MCXENT"}]}"#;
        MultiLayerNetwork::new(MultiLayerConfiguration::from_json(json).unwrap()).unwrap()
    }

    fn buffer_ptrs(net: &MultiLayerNetwork<f32>) -> Vec<*const f32> {
        net.exec.buffer_ptrs()
    }

    #[test]
    fn compute_update_then_subtract_equals_fit() {
        // Plain Sgd; Adam (fused step); batch norm running statistics and a frozen layer; weight
        // decay (in the updater's pass: applied by fit, not by compute_update), also beside a
        // frozen layer, batch norm and a block without decay.
        let confs = [
            r#"{"formatVersion":1,"seed":3,"layers":[
                {"type":"DenseLayer","nIn":3,"nOut":5,"activation":"RELU"},
                {"type":"OutputLayer","nIn":5,"nOut":2,"activation":"SOFTMAX"}]}"#,
            r#"{"formatVersion":1,"seed":3,"layers":[
                {"type":"FrozenLayer","layer":{"type":"DenseLayer","nIn":3,"nOut":5,"activation":"TANH"}},
                {"type":"DenseLayer","nIn":5,"nOut":4,"activation":"RELU","updater":{"type":"Adam"}},
                {"type":"BatchNormalization","nIn":4,"nOut":4,"updater":{"type":"Adam"}},
                {"type":"OutputLayer","nIn":4,"nOut":2,"activation":"SOFTMAX","updater":{"type":"Nadam"}}]}"#,
            r#"{"formatVersion":1,"seed":3,"layers":[
                {"type":"DenseLayer","nIn":3,"nOut":5,"activation":"RELU","weightDecay":0.1,
                 "updater":{"type":"Adam"}},
                {"type":"OutputLayer","nIn":5,"nOut":2,"activation":"SOFTMAX"}]}"#,
            r#"{"formatVersion":1,"seed":3,"layers":[
                {"type":"FrozenLayer","layer":{"type":"DenseLayer","nIn":3,"nOut":5,"activation":"TANH","weightDecay":0.2}},
                {"type":"DenseLayer","nIn":5,"nOut":4,"activation":"RELU","weightDecay":0.05,
                 "weightDecayBias":0.01,"updater":{"type":"Nesterovs"}},
                {"type":"BatchNormalization","nIn":4,"nOut":4,"weightDecay":0.1,"updater":{"type":"Adam"}},
                {"type":"OutputLayer","nIn":4,"nOut":2,"activation":"SOFTMAX","updater":{"type":"AdaDelta"},
                 "weightDecay":0.3}]}"#,
        ];
        let x = [0.5f32, -1.0, 2.0, 0.25, 0.0, -0.5];
        let y = [1.0f32, 0.0, 0.0, 1.0];
        for json in confs {
            let make = || {
                MultiLayerNetwork::new(MultiLayerConfiguration::from_json(json).unwrap()).unwrap()
            };
            let (mut a, mut b) = (make(), make());
            for _ in 0..3 {
                let sa = a.fit(&x, &y, 2, None).unwrap();
                let before = b.params().to_vec();
                let sb = b.compute_update(&x, &y, 2, None).unwrap();
                assert_eq!(
                    b.params(),
                    &before[..],
                    "compute_update must not touch the parameters"
                );
                let u = b.update().to_vec();
                for (p, d) in b.params_mut().iter_mut().zip(&u) {
                    *p -= d;
                }
                assert_eq!(sa, sb);
                assert_eq!(a.params(), b.params(), "{json}");
                assert_eq!(a.update(), b.update(), "{json}");
                assert_eq!(a.updater_state(), b.updater_state(), "{json}");
                assert_eq!(a.iteration_count(), b.iteration_count());
            }
            assert_eq!(a.iteration_count(), 3);
        }
    }

    #[test]
    fn buffers_are_reused_across_iterations() {
        let mut net = tiny();
        let x = [0.5f32; 12];
        let y = [1.0f32, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
        net.fit(&x, &y, 4, None).unwrap();
        let before = buffer_ptrs(&net);
        let params_ptr = net.params().as_ptr();
        for _ in 0..5 {
            net.fit(&x, &y, 4, None).unwrap();
        }
        // A smaller batch fits in the existing capacity too.
        net.fit(&x[..6], &y[..4], 2, None).unwrap();
        assert_eq!(buffer_ptrs(&net), before);
        assert_eq!(net.params().as_ptr(), params_ptr);
    }

    #[test]
    fn subnormals_are_flushed_during_calls_and_the_thread_mode_is_restored() {
        let json = r#"{"formatVersion":1,"seed":3,"layers":[
            {"type":"DenseLayer","nIn":3,"nOut":5,"activation":"RELU","updater":{"type":"Adam"}},
            {"type":"OutputLayer","nIn":5,"nOut":2,"activation":"SOFTMAX","lossFunction":"MCXENT",
             "updater":{"type":"Adam"}}]}"#;
        let mut net =
            MultiLayerNetwork::new(MultiLayerConfiguration::from_json(json).unwrap()).unwrap();
        // Zero features: the first layer's weight gradient is exactly 0, so Adam's state there
        // only decays; start it subnormal.
        let tiny = 1e-40f32;
        assert!(tiny > 0.0 && tiny < f32::MIN_POSITIVE);
        let state = vec![tiny; net.updater_state().len()];
        net.set_updater_state(&state).unwrap();
        let before = ferrodl_tensor::denormals_flushed();
        net.fit(&[0.0; 6], &[1.0, 0.0, 0.0, 1.0], 2, None).unwrap();
        assert_eq!(ferrodl_tensor::denormals_flushed(), before);
        // Layer 0's W block is the first 15 parameters; Adam keeps m then v per block.
        let s = net.updater_state();
        assert!(s[..15].iter().all(|&v| v == 0.0), "m: {:?}", &s[..15]);
        assert!(s[15..30].iter().all(|&v| v == 0.0), "v: {:?}", &s[15..30]);
    }
}
