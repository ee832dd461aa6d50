//! `MultiLayerNetwork`: a stack of layers ending in an output layer, trained one minibatch per
//! `fit` call (ARCHITECTURE.md §3–§4).

use crate::config::{LayerConfig, MultiLayerConfiguration};
use crate::error::NnError;
use crate::layers::{DenseLayer, Layer, OutputLayer};
use crate::loss::LabelsMask;
use ferrodl_optim::Optimizer;
use ferrodl_tensor::{Rng, Scalar};
use std::ops::Range;

/// A feed-forward network with all parameters in one flat vector.
///
/// The element type defaults to `f32` (the public API the JNI facade uses);
/// `MultiLayerNetwork<f64>` (built with [`MultiLayerNetwork::from_configuration`]) runs the same
/// code in double precision for gradient checks.
///
/// Parameter layout (ARCHITECTURE.md §3): for each layer in order, `W` row-major (`nIn·nOut`
/// values) then `b` (`nOut` values, absent when `hasBias` is false). Gradients use the same layout
/// in a second flat vector, and updater state is one flat vector laid out block by block in the
/// same order. Forward/backward buffers are kept between calls and only resized when the batch
/// size changes, so repeated `fit` calls with one batch size do not allocate.
///
/// Seeded initialisation: one [`Rng`] is created from `seed` (its bits as `u64`) and consumed
/// layer by layer in order, each layer drawing one standard normal per weight in row-major order
/// of `W`; biases take `biasInit` without drawing. Since the draws are made in `f64` and then
/// rounded, an `f32` and an `f64` network from one seed agree to `f32` rounding.
#[derive(Debug)]
pub struct MultiLayerNetwork<T: Scalar = f32> {
    conf: MultiLayerConfiguration,
    hidden: Vec<Box<dyn Layer<T>>>,
    output: OutputLayer,
    /// Parameter block of each layer (hidden layers, then the output layer).
    ranges: Vec<Range<usize>>,
    params: Vec<T>,
    grads: Vec<T>,
    optimizer: Optimizer<T>,
    /// Activations of each layer for the last forward pass (`rows × nOut_i`).
    acts: Vec<Vec<T>>,
    /// Ping-pong buffers for `dL/d(activation)` during backpropagation.
    delta: Vec<T>,
    delta_next: Vec<T>,
}

/// Picks layer `i` out of the split storage (a free function so callers can borrow other fields
/// mutably at the same time).
fn layer_at<'a, T: Scalar>(
    hidden: &'a [Box<dyn Layer<T>>],
    output: &'a OutputLayer,
    i: usize,
) -> &'a dyn Layer<T> {
    if i < hidden.len() {
        hidden[i].as_ref()
    } else {
        output
    }
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
        conf.validate()?;
        let n = conf.layers.len();
        let mut hidden: Vec<Box<dyn Layer<T>>> = Vec::with_capacity(n - 1);
        let mut output = None;
        for layer in &conf.layers {
            match layer {
                LayerConfig::DenseLayer(c) => hidden.push(Box::new(DenseLayer::new(c.clone()))),
                LayerConfig::OutputLayer(c) => output = Some(OutputLayer::new(c.clone())),
            }
        }
        // validate() guarantees exactly one OutputLayer, in last position.
        let output = output.ok_or_else(|| {
            NnError::InvalidConfig("the last layer must be an OutputLayer".into())
        })?;

        let mut ranges = Vec::with_capacity(n);
        let mut offset = 0;
        let mut blocks = Vec::new();
        for i in 0..n {
            let layer = layer_at(&hidden, &output, i);
            let len = layer.num_params();
            for (r, u) in layer.updater_blocks() {
                blocks.push((offset + r.start..offset + r.end, u));
            }
            ranges.push(offset..offset + len);
            offset += len;
        }
        let mut params = vec![T::zero(); offset];
        let mut rng = Rng::new(conf.seed as u64);
        for (i, r) in ranges.iter().enumerate() {
            layer_at(&hidden, &output, i).init_params(&mut params[r.clone()], &mut rng);
        }
        Ok(MultiLayerNetwork {
            optimizer: Optimizer::new(blocks),
            grads: vec![T::zero(); offset],
            params,
            ranges,
            hidden,
            output,
            acts: vec![Vec::new(); n],
            delta: Vec::new(),
            delta_next: Vec::new(),
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

    /// The gradient of the last [`fit`](Self::fit) or
    /// [`compute_gradient_and_score`](Self::compute_gradient_and_score), same layout as `params()`.
    /// After `fit` it holds the update that was subtracted, not the raw gradient.
    pub fn gradient(&self) -> &[T] {
        &self.grads
    }

    /// Updater state, flat (Adam: m then v; Nesterovs: v; Sgd: nothing; per parameter block).
    pub fn updater_state(&self) -> &[T] {
        self.optimizer.state()
    }

    pub fn set_updater_state(&mut self, s: &[T]) -> Result<(), NnError> {
        self.optimizer
            .set_state(s)
            .map_err(|e| NnError::InvalidInput(e.to_string()))
    }

    /// Number of input columns (nIn of the first layer).
    pub fn n_in(&self) -> usize {
        self.conf.layers[0].n_in()
    }

    /// Number of output columns (nOut of the output layer).
    pub fn n_out(&self) -> usize {
        Layer::<T>::n_out(&self.output)
    }

    /// Number of layers (including the output layer).
    pub fn num_layers(&self) -> usize {
        self.ranges.len()
    }

    /// Layer `i` (the last one is the output layer); `None` when out of range.
    pub fn layer(&self, i: usize) -> Option<&dyn Layer<T>> {
        (i < self.num_layers()).then(|| layer_at(&self.hidden, &self.output, i))
    }

    /// Range of layer `i`'s block in `params()`.
    pub fn param_range(&self, i: usize) -> Option<Range<usize>> {
        self.ranges.get(i).cloned()
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
            return Err(NnError::Shape(format!(
                "features have {cols} columns but {} expects nIn={}",
                self.conf.layers[0].describe(0),
                self.n_in()
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
        check_finite("features contain", features, self.n_in())
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

    /// Sizes the activation and delta buffers for `rows` examples (no reallocation once a
    /// batch size has been seen, since `resize` keeps capacity).
    fn ensure_buffers(&mut self, rows: usize) {
        let mut widest = self.n_in();
        for (i, a) in self.acts.iter_mut().enumerate() {
            let w = layer_at(&self.hidden, &self.output, i).n_out();
            widest = widest.max(w);
            a.resize(rows * w, T::zero());
        }
        self.delta.resize(rows * widest, T::zero());
        self.delta_next.resize(rows * widest, T::zero());
    }

    /// Forward pass over validated input; activations end up in `self.acts`.
    fn forward(&mut self, features: &[T], rows: usize) {
        self.ensure_buffers(rows);
        for i in 0..self.num_layers() {
            let (before, rest) = self.acts.split_at_mut(i);
            let input: &[T] = if i == 0 { features } else { &before[i - 1] };
            let layer = layer_at(&self.hidden, &self.output, i);
            layer.forward(
                &self.params[self.ranges[i].clone()],
                input,
                rows,
                &mut rest[0],
            );
        }
    }

    fn regularization_score(&self) -> f64 {
        (0..self.num_layers())
            .map(|i| {
                layer_at(&self.hidden, &self.output, i)
                    .regularization_score(&self.params[self.ranges[i].clone()])
            })
            .sum()
    }

    /// Score of the current activations against `labels` (after `forward`).
    fn score_from_acts(&self, labels: &[T], rows: usize, mask: Option<&LabelsMask<'_, T>>) -> f64 {
        let out = &self.acts[self.num_layers() - 1];
        let data = self.output.score_sum(out, labels, mask);
        let data = if self.conf.mini_batch {
            data / rows as f64
        } else {
            data
        };
        data + self.regularization_score()
    }

    /// Forward and backward pass without updating anything: fills [`gradient`](Self::gradient)
    /// with the gradient of the returned score (loss mean + L1/L2) with respect to `params()`.
    pub fn compute_gradient_and_score(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        self.check_features(features, rows)?;
        self.check_labels(labels, rows, labels_mask)?;
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        self.forward(features, rows);
        let score = self.score_from_acts(labels, rows, mask.as_ref());
        self.backward(features, labels, rows, mask.as_ref());
        Ok(score)
    }

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
        self.output.loss_delta(
            &self.acts[last],
            labels,
            mask,
            scale,
            &mut self.delta[..rows * n_out],
        );
        for i in (0..n).rev() {
            let layer = layer_at(&self.hidden, &self.output, i);
            let (w_in, w_out) = (layer.n_in(), layer.n_out());
            let input: &[T] = if i == 0 { features } else { &self.acts[i - 1] };
            let params = &self.params[self.ranges[i].clone()];
            let grads = &mut self.grads[self.ranges[i].clone()];
            // The first layer's input gradient is never needed.
            let grad_input = (i > 0).then(|| &mut self.delta_next[..rows * w_in]);
            let delta = &mut self.delta[..rows * w_out];
            if i == last {
                // The loss already produced dL/dz (possibly fused with softmax).
                self.output
                    .dense()
                    .backward_from_preactivation(params, input, rows, delta, grads, grad_input);
            } else {
                layer.backward(params, input, &self.acts[i], rows, delta, grads, grad_input);
            }
            layer.add_regularization_gradient(params, grads);
            std::mem::swap(&mut self.delta, &mut self.delta_next);
        }
    }

    /// One training iteration on one minibatch: forward, backward, updater, `params -= update`,
    /// iteration counter + 1. Returns the score of the forward pass (before the update).
    pub fn fit(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        let score = self.compute_update(features, labels, rows, labels_mask)?;
        for (p, &u) in self.params.iter_mut().zip(&self.grads) {
            *p = *p - u;
        }
        Ok(score)
    }

    /// A training iteration that leaves the parameters alone: forward, backward and updater, then
    /// the iteration counter + 1. [`update`](Self::update) then holds what `fit` would subtract.
    /// Gradient sharing uses this: the update is threshold-encoded and only the encoded part is
    /// applied (to every replica alike), the rest stays in the worker's residual.
    pub fn compute_update(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        let score = self.compute_gradient_and_score(features, labels, rows, labels_mask)?;
        self.optimizer
            .step(&mut self.grads, self.conf.iteration_count);
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

    /// Network output (`rows × nOut`) for `features`. `train` selects training-mode behaviour of
    /// layers that have one (dropout, batch norm); the dense layers here behave the same.
    pub fn output(&mut self, features: &[T], rows: usize, train: bool) -> Result<Vec<T>, NnError> {
        let _ = train;
        self.check_features(features, rows)?;
        self.forward(features, rows);
        Ok(self.acts[self.num_layers() - 1].clone())
    }

    /// Score (loss mean + L1/L2) of a minibatch without changing the network.
    pub fn score(
        &mut self,
        features: &[T],
        labels: &[T],
        rows: usize,
        labels_mask: Option<(&[T], usize)>,
    ) -> Result<f64, NnError> {
        self.check_features(features, rows)?;
        self.check_labels(labels, rows, labels_mask)?;
        let mask = labels_mask.map(|(data, cols)| LabelsMask { data, cols });
        self.forward(features, rows);
        Ok(self.score_from_acts(labels, rows, mask.as_ref()))
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
        v.sort();
        v
    }

    #[test]
    fn compute_update_then_subtract_equals_fit() {
        let x = [0.5f32, -1.0, 2.0, 0.25, 0.0, -0.5];
        let y = [1.0f32, 0.0, 0.0, 1.0];
        let mut a = tiny();
        let mut b = tiny();
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
            assert_eq!(a.params(), b.params());
            assert_eq!(a.iteration_count(), b.iteration_count());
        }
        assert_eq!(a.iteration_count(), 3);
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
}
