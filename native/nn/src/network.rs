//! `MultiLayerNetwork`: a stack of layers ending in an output or loss layer, trained one minibatch
//! per `fit` call (ARCHITECTURE.md §3–§4).

use crate::activation::ActivationCache;
use crate::config::{
    Activation, GradientNormalization, LayerConfig, LayerShapes, LossFunction,
    MultiLayerConfiguration,
};
use crate::error::NnError;
use crate::layers::misc::DropoutMask;
use crate::layers::{build_layer, Ctx, Layer, ParamKind};
use crate::loss::LabelsMask;
use crate::regularization::{self, ParamBlock};
use ferrodl_optim::{AnyUpdater, Optimizer};
use ferrodl_tensor::{flush_denormals, Rng, Scalar};
use std::ops::Range;

/// Seed offset of the training RNG (dropout masks), so it never replays the initialisation draws.
const TRAIN_RNG_STREAM: u64 = 0x7472_6169_6e5f_726e;

/// The activation and loss applied to the last layer's output.
#[derive(Debug)]
struct Head<T> {
    act: ActivationCache<T>,
    loss: LossFunction,
    weights: Option<Vec<f64>>,
}

/// A feed-forward network with all parameters in one flat vector.
///
/// The element type defaults to `f32` (the public API the JNI facade uses);
/// `MultiLayerNetwork<f64>` (built with [`MultiLayerNetwork::from_configuration`]) runs the same
/// code in double precision for gradient checks.
///
/// Parameter layout (ARCHITECTURE.md §2.2): for each layer in order, its parameter blocks as
/// [`Layer::param_specs`] lists them (dense: `W` row-major `nIn × nOut`, then `b`). Gradients use
/// the same layout in a second flat vector, and updater state is one flat vector laid out block by
/// block in the same order. Forward/backward buffers are kept between calls and only grow, so
/// repeated `fit` calls with one batch size do not allocate.
///
/// Seeded initialisation: one [`Rng`] is created from `seed` (its bits as `u64`) and consumed
/// layer by layer in order (see each layer's `init_params`). Since the draws are made in `f64` and
/// then rounded, an `f32` and an `f64` network from one seed agree to `f32` rounding. Dropout
/// masks come from a second RNG derived from the same seed.
#[derive(Debug)]
pub struct MultiLayerNetwork<T: Scalar = f32> {
    conf: MultiLayerConfiguration,
    shapes: Vec<LayerShapes>,
    layers: Vec<Box<dyn Layer<T>>>,
    /// Parameter block of each layer.
    ranges: Vec<Range<usize>>,
    /// Every parameter block of the network with its regularization settings.
    blocks: Vec<ParamBlock>,
    frozen: Vec<bool>,
    /// Layers before this index neither train nor need a backward pass.
    first_trainable: usize,
    head: Head<T>,
    params: Vec<T>,
    grads: Vec<T>,
    optimizer: Optimizer<T>,
    /// Output of each layer for the last forward pass (`rows × n_out_i`).
    acts: Vec<Vec<T>>,
    /// Input dropout of each layer (`dropOut`), and the masked input it produced.
    drop_masks: Vec<DropoutMask<T>>,
    dropped: Vec<Vec<T>>,
    /// The head's activations (the network output).
    out: Vec<T>,
    /// Ping-pong buffers for `dL/d(activation)` during backpropagation.
    delta: Vec<T>,
    delta_next: Vec<T>,
    train_rng: Rng,
}

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
        let shapes = conf.layer_shapes()?;
        let n = conf.layers.len();
        let mut layers = Vec::with_capacity(n);
        for (i, (lc, s)) in conf.layers.iter().zip(&shapes).enumerate() {
            let layer = build_layer::<T>(lc, *s)
                .map_err(|e| NnError::InvalidConfig(format!("{}: {e}", lc.describe(i))))?;
            layers.push(layer);
        }
        let frozen: Vec<bool> = conf.layers.iter().map(LayerConfig::is_frozen).collect();

        let mut ranges = Vec::with_capacity(n);
        let mut blocks = Vec::new();
        let mut offset = 0;
        for (i, layer) in layers.iter().enumerate() {
            let start = offset;
            for spec in layer.param_specs() {
                let len = spec.len();
                blocks.push(ParamBlock::new(
                    i,
                    &conf.layers[i],
                    frozen[i],
                    spec,
                    offset..offset + len,
                ));
                offset += len;
            }
            ranges.push(start..offset);
        }
        let optimizer = Optimizer::new(
            blocks
                .iter()
                .filter(|b| b.trains())
                .map(|b| (b.range.clone(), b.updater.clone()))
                .collect::<Vec<(Range<usize>, AnyUpdater)>>(),
        );
        let mut params = vec![T::zero(); offset];
        let mut rng = Rng::new(conf.seed as u64);
        for (layer, r) in layers.iter().zip(&ranges) {
            layer.init_params(&mut params[r.clone()], &mut rng);
        }
        let head = match conf.layers[n - 1].unfrozen() {
            LayerConfig::OutputLayer(c) => Head {
                act: ActivationCache::new(c.activation),
                loss: c.loss_function,
                weights: c.loss_weights.clone(),
            },
            LayerConfig::LossLayer(c) => Head {
                act: ActivationCache::new(c.activation),
                loss: c.loss_function,
                weights: c.loss_weights.clone(),
            },
            // layer_shapes() guarantees an output or loss layer in last position.
            other => {
                return Err(NnError::InvalidConfig(format!(
                    "the last layer must be an OutputLayer, not a {}",
                    other.type_name()
                )))
            }
        };
        // Backward passes start at the first layer with parameters that change.
        let first_trainable = (0..n)
            .find(|&i| !frozen[i] && !layers[i].param_specs().is_empty())
            .unwrap_or(n);
        let drop_masks = conf
            .layers
            .iter()
            .map(|l| DropoutMask::new(l.input_drop_out()))
            .collect();
        Ok(MultiLayerNetwork {
            train_rng: Rng::new((conf.seed as u64) ^ TRAIN_RNG_STREAM),
            grads: vec![T::zero(); offset],
            params,
            ranges,
            blocks,
            frozen,
            first_trainable,
            head,
            optimizer,
            acts: vec![Vec::new(); n],
            drop_masks,
            dropped: vec![Vec::new(); n],
            out: Vec::new(),
            delta: Vec::new(),
            delta_next: Vec::new(),
            layers,
            shapes,
            conf,
        })
    }

    /// The configuration, with the current iteration and epoch counters.
    pub fn configuration(&self) -> &MultiLayerConfiguration {
        &self.conf
    }

    pub fn num_params(&self) -> usize {
        self.params.len()
    }

    /// All parameters, flat (layout in the type's docs).
    pub fn params(&self) -> &[T] {
        &self.params
    }

    /// Replaces all parameters; `p` must have [`num_params`](Self::num_params) values.
    pub fn set_params(&mut self, p: &[T]) -> Result<(), NnError> {
        if p.len() != self.params.len() {
            return Err(NnError::InvalidInput(format!(
                "params have {} values but this network has {} parameters",
                p.len(),
                self.params.len()
            )));
        }
        self.params.copy_from_slice(p);
        Ok(())
    }

    /// The gradient of the last [`compute_gradient_and_score`](Self::compute_gradient_and_score)
    /// (loss + L1/L2), same layout as `params()`. After `fit` it holds the update that was
    /// subtracted, not the raw gradient.
    pub fn gradient(&self) -> &[T] {
        &self.grads
    }

    /// Updater state, flat (docs/UPDATERS.md gives each updater's layout), per trainable block.
    pub fn updater_state(&self) -> &[T] {
        self.optimizer.state()
    }

    pub fn set_updater_state(&mut self, s: &[T]) -> Result<(), NnError> {
        self.optimizer
            .set_state(s)
            .map_err(|e| NnError::InvalidInput(e.to_string()))
    }

    /// Values per example of the input.
    pub fn n_in(&self) -> usize {
        self.shapes[0].input.len()
    }

    /// Values per example of the output (labels width).
    pub fn n_out(&self) -> usize {
        self.shapes[self.num_layers() - 1].output.len()
    }

    /// Number of layers (including the output layer).
    pub fn num_layers(&self) -> usize {
        self.layers.len()
    }

    /// Layer `i` (the last one is the output layer's parameterised part); `None` when out of range.
    pub fn layer(&self, i: usize) -> Option<&dyn Layer<T>> {
        self.layers.get(i).map(|l| l.as_ref())
    }

    /// Input and output shape of layer `i`.
    pub fn layer_shapes(&self, i: usize) -> Option<LayerShapes> {
        self.shapes.get(i).copied()
    }

    /// Range of layer `i`'s block in `params()`.
    pub fn param_range(&self, i: usize) -> Option<Range<usize>> {
        self.ranges.get(i).cloned()
    }

    /// The reference's parameter table: (`"<layer>_<name>"`, range in `params()`, shape) for
    /// every parameter block in layout order.
    pub fn param_table(&self) -> Vec<(String, Range<usize>, Vec<usize>)> {
        self.blocks
            .iter()
            .map(|b| {
                (
                    format!("{}_{}", b.layer, b.name),
                    b.range.clone(),
                    b.shape.clone(),
                )
            })
            .collect()
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
        self.blocks
            .iter()
            .find(|b| b.layer == i && b.kind != ParamKind::State)
            .map(|b| {
                b.updater
                    .learning_rate_at(self.conf.iteration_count, self.conf.epoch_count)
            })
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

    /// Full check of a features array (shape, then NaN/infinite values with row and column).
    pub fn check_features(&self, features: &[T], rows: usize) -> Result<(), NnError> {
        self.check_flat("features", features.len(), rows, self.n_in())?;
        check_finite("features contain", features, self.n_in())?;
        self.layers[0]
            .check_input(features)
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

    // ---- computation ------------------------------------------------------------------------

    /// Sizes the activation and delta buffers for `rows` examples (`resize` keeps capacity, so
    /// nothing is reallocated once a batch size has been seen).
    fn ensure_buffers(&mut self, rows: usize) {
        let mut widest = self.n_in();
        for (i, s) in self.shapes.iter().enumerate() {
            let w = s.output.len();
            widest = widest.max(w);
            self.acts[i].resize(rows * w, T::zero());
            if self.drop_masks[i].enabled() {
                self.dropped[i].resize(rows * s.input.len(), T::zero());
            }
        }
        self.out.resize(rows * self.n_out(), T::zero());
        self.delta.resize(rows * widest, T::zero());
        self.delta_next.resize(rows * widest, T::zero());
    }

    /// Forward pass over validated input; layer outputs end up in `self.acts`, the network output
    /// in `self.out`.
    fn forward(&mut self, features: &[T], rows: usize, train: bool) -> Result<(), NnError> {
        self.ensure_buffers(rows);
        for i in 0..self.num_layers() {
            let (before, rest) = self.acts.split_at_mut(i);
            let mut input: &[T] = if i == 0 { features } else { &before[i - 1] };
            if i > 0 {
                self.layers[i].check_input(input).map_err(|m| {
                    NnError::InvalidInput(format!("{}: {m}", self.conf.layers[i].describe(i)))
                })?;
            }
            // Frozen layers run in inference mode (no dropout, running batch-norm statistics).
            let train_i = train && !self.frozen[i];
            if self.drop_masks[i].enabled() {
                self.drop_masks[i].apply(input, &mut self.dropped[i], train_i, &mut self.train_rng);
                input = &self.dropped[i];
            }
            let mut ctx = Ctx {
                train: train_i,
                rng: &mut self.train_rng,
            };
            self.layers[i].forward(
                &self.params[self.ranges[i].clone()],
                input,
                rows,
                &mut rest[0],
                &mut ctx,
            );
        }
        let last = self.num_layers() - 1;
        self.out.copy_from_slice(&self.acts[last]);
        let n_out = self.n_out();
        self.head.act.forward(&mut self.out, n_out, None);
        Ok(())
    }

    /// Score of the current output against `labels` (after `forward`): data term + L1/L2.
    fn score_from_output(
        &self,
        labels: &[T],
        rows: usize,
        mask: Option<&LabelsMask<'_, T>>,
    ) -> f64 {
        let data = self.head.loss.score_sum(
            &self.out,
            labels,
            mask,
            self.head.weights.as_deref(),
            self.n_out(),
        );
        let data = if self.conf.mini_batch {
            data / rows as f64
        } else {
            data
        };
        data + regularization::score(&self.blocks, &self.params)
    }

    /// Backward pass after `forward`: the raw data gradient (no regularization) into `grads`.
    fn backward(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        mask: Option<&LabelsMask<'_, T>>,
    ) {
        let n = self.num_layers();
        let last = n - 1;
        // miniBatch=true: the score is a mean over examples, so is the gradient; with
        // miniBatch=false both are sums (the reference's meaning of the flag).
        let scale = if self.conf.mini_batch {
            T::one() / T::of(rows as f64)
        } else {
            T::one()
        };
        let n_out = self.n_out();
        let head_z = self
            .head
            .act
            .activation
            .needs_preactivation()
            .then(|| &self.acts[last][..]);
        self.head.loss.delta(
            self.head.act.activation,
            head_z,
            &self.out,
            labels,
            mask,
            self.head.weights.as_deref(),
            n_out,
            scale,
            &mut self.delta[..rows * n_out],
        );
        for i in (0..n).rev() {
            let r = self.ranges[i].clone();
            if i < self.first_trainable {
                // Nothing before the first trainable layer learns: skip its backward pass.
                self.grads[r].fill(T::zero());
                continue;
            }
            let (w_in, w_out) = (self.shapes[i].input.len(), self.shapes[i].output.len());
            let input: &[T] = if self.drop_masks[i].enabled() {
                &self.dropped[i]
            } else if i == 0 {
                features
            } else {
                &self.acts[i - 1]
            };
            let want_grad_input = i > self.first_trainable;
            let grad_input = want_grad_input.then(|| &mut self.delta_next[..rows * w_in]);
            self.layers[i].backward(
                &self.params[r.clone()],
                input,
                &self.acts[i],
                rows,
                &mut self.delta[..rows * w_out],
                &mut self.grads[r],
                grad_input,
            );
            if want_grad_input {
                self.drop_masks[i].backward_in_place(&mut self.delta_next[..rows * w_in]);
            }
            std::mem::swap(&mut self.delta, &mut self.delta_next);
        }
    }

    /// Validates a minibatch and runs forward + backward; `grads` holds the raw data gradient.
    fn forward_backward(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        self.check_features(features, rows)?;
        self.check_labels(labels, rows, labels_mask)?;
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        self.forward(features, rows, true)?;
        let score = self.score_from_output(labels, rows, mask.as_ref());
        self.backward(features, labels, rows, mask.as_ref());
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
        // Subnormal values (e.g. Adam's second moments late in training) are 5-8x slower
        // on x86; flushing them to zero changes results only below f32::MIN_POSITIVE.
        let _denormals = flush_denormals();
        let score = self.forward_backward(features, labels, rows, labels_mask)?;
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
        Ok(score)
    }

    /// One training iteration on one minibatch: forward, backward, updater, `params -= update`,
    /// iteration counter + 1. Returns the score of the forward pass (before the update).
    /// Bit-identical to [`compute_update`](Self::compute_update) followed by the subtraction; without
    /// weight decay the updater and the subtraction run as one pass over the parameters.
    pub fn fit(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        let _denormals = flush_denormals();
        if self.blocks.iter().any(|b| b.weight_decay != 0.0) {
            // Weight decay reads the parameters before the step: the two-step form.
            let score = self.compute_update(features, labels, rows, labels_mask)?;
            for (p, &u) in self.params.iter_mut().zip(&self.grads) {
                *p = *p - u;
            }
            return Ok(score);
        }
        let score = self.forward_backward(features, labels, rows, labels_mask)?;
        regularization::normalize_gradients(&self.blocks, &mut self.grads);
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
        let (iteration, epoch) = (self.conf.iteration_count, self.conf.epoch_count);
        self.optimizer
            .step_and_apply(&mut self.params, &mut self.grads, iteration, epoch);
        regularization::apply_untrained(&self.blocks, &mut self.params, &mut self.grads);
        self.conf.iteration_count += 1;
        Ok(score)
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
        // Subnormal values (e.g. Adam's second moments late in training) are 5-8x slower
        // on x86; flushing them to zero changes results only below f32::MIN_POSITIVE.
        let _denormals = flush_denormals();
        let score = self.forward_backward(features, labels, rows, labels_mask)?;
        regularization::normalize_gradients(&self.blocks, &mut self.grads);
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
        let (iteration, epoch) = (self.conf.iteration_count, self.conf.epoch_count);
        self.optimizer.step(&mut self.grads, iteration, epoch);
        regularization::finish_update(
            &self.blocks,
            &self.params,
            &mut self.grads,
            iteration,
            epoch,
        );
        self.conf.iteration_count += 1;
        Ok(score)
    }

    /// The update of the last [`compute_update`](Self::compute_update) or `fit` (layout of `params()`).
    pub fn update(&self) -> &[T] {
        &self.grads
    }

    /// Mutable parameters, for applying updates that were computed elsewhere (e.g. decoded from
    /// other workers' messages).
    pub fn params_mut(&mut self) -> &mut [T] {
        &mut self.params
    }

    /// Network output (`rows × nOut`) for `features`. `train` selects training-mode behaviour
    /// (dropout on, batch norm on batch statistics — without touching the running statistics).
    pub fn output(&mut self, features: &[T], rows: usize, train: bool) -> Result<Vec<T>, NnError> {
        // Subnormal values (e.g. Adam's second moments late in training) are 5-8x slower
        // on x86; flushing them to zero changes results only below f32::MIN_POSITIVE.
        let _denormals = flush_denormals();
        self.check_features(features, rows)?;
        self.forward(features, rows, train)?;
        Ok(self.out.clone())
    }

    /// Score (loss mean + L1/L2) of a minibatch in inference mode, without changing the network.
    pub fn score(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        // Subnormal values (e.g. Adam's second moments late in training) are 5-8x slower
        // on x86; flushing them to zero changes results only below f32::MIN_POSITIVE.
        let _denormals = flush_denormals();
        self.check_features(features, rows)?;
        self.check_labels(labels, rows, labels_mask)?;
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        self.forward(features, rows, false)?;
        Ok(self.score_from_output(labels, rows, mask.as_ref()))
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
        // Subnormal values (e.g. Adam's second moments late in training) are 5-8x slower
        // on x86; flushing them to zero changes results only below f32::MIN_POSITIVE.
        let _denormals = flush_denormals();
        self.check_features(features, rows)?;
        self.check_labels(labels, rows, labels_mask)?;
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        self.forward(features, rows, false)?;
        let mut per = vec![0.0f64; rows];
        self.head.loss.score_examples(
            &self.out,
            labels,
            mask.as_ref(),
            self.head.weights.as_deref(),
            self.n_out(),
            &mut per,
        );
        if include_regularization {
            let reg = regularization::score(&self.blocks, &self.params);
            per.iter_mut().for_each(|v| *v += reg);
        }
        Ok(per)
    }

    /// The activation of the network's output (after the last layer).
    pub fn output_activation(&self) -> Activation {
        self.head.act.activation
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
        let mut v: Vec<*const f32> = net.acts.iter().map(|a| a.as_ptr()).collect();
        v.push(net.delta.as_ptr());
        v.push(net.delta_next.as_ptr());
        v.push(net.out.as_ptr());
        v.sort();
        v
    }

    #[test]
    fn compute_update_then_subtract_equals_fit() {
        // Plain Sgd; Adam (fused step); batch norm running statistics and a frozen layer; weight
        // decay (the two-step path).
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
        let params_ptr = net.params.as_ptr();
        for _ in 0..5 {
            net.fit(&x, &y, 4, None).unwrap();
        }
        // A smaller batch fits in the existing capacity too.
        net.fit(&x[..6], &y[..4], 2, None).unwrap();
        // delta and delta_next are swapped each layer, hence the sorted comparison.
        assert_eq!(buffer_ptrs(&net), before);
        assert_eq!(net.params.as_ptr(), params_ptr);
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
