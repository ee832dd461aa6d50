//! `ComputationGraph`: any directed acyclic graph of layers and vertices with several inputs and
//! outputs, on the shared executor (ARCHITECTURE.md §2.4, §13).
//!
//! Parameters are laid out vertex by vertex in execution order and keyed `<vertex>_<param>`
//! (`dense1_W`), as the reference's graph parameter table. The score of a minibatch is the sum
//! over outputs of each output's loss (mean over examples when `miniBatch`), plus L1/L2 once.

use crate::batch::Mask;
use crate::config::{
    Activation, BackpropType, ComputationGraphConfiguration, GraphPlan, GraphSource,
    Shape,
};
use crate::error::NnError;
use crate::executor::{Executor, NodeDef, NodeDefKind, ParamInit, Src};
use crate::layers::{Layer, StateMode};
use crate::tbptt;
use crate::loss::LabelsMask;
use crate::vertices::VertexConfig;
use crate::layout::{self, Boundary};
use std::borrow::Cow;
use ferrodl_tensor::{flush_denormals, Scalar};
use std::ops::Range;

/// A mask argument: `(values, columns)` of a `rows × columns` matrix.
pub use crate::tbptt::MaskArg;

/// Labels with their masks, one per network output.
type LabelsArg<'l, 'm, T> = Option<(&'l [&'l [T]], &'l [MaskArg<'m, T>])>;

/// A graph network with all parameters in one flat vector.
#[derive(Debug)]
pub struct ComputationGraph<T: Scalar = f32> {
    conf: ComputationGraphConfiguration,
    plan: GraphPlan,
    exec: Executor<T>,
    /// Executor node of each vertex (configuration order).
    node_of: Vec<usize>,
    /// NWC inputs/outputs converted at the boundary (`crate::layout`).
    layout: Boundary,
}

/// The borrowed views of arrays converted to the engine's layout.
fn views<'a, T>(v: &'a [Cow<'a, [T]>]) -> Vec<&'a [T]>
where
    [T]: ToOwned,
{
    v.iter().map(|c| &c[..]).collect()
}

#[allow(clippy::type_complexity)]
fn mask_views<'a, T>(v: &'a [Option<(Cow<'a, [T]>, usize)>]) -> Vec<MaskArg<'a, T>>
where
    [T]: ToOwned,
{
    v.iter().map(|m| m.as_ref().map(|(d, c)| (&d[..], *c))).collect()
}

impl ComputationGraph<f32> {
    /// Validates the configuration and builds an `f32` graph with seeded parameters.
    pub fn new(conf: ComputationGraphConfiguration) -> Result<Self, NnError> {
        Self::from_configuration(conf)
    }
}

fn non_finite_at<T: Scalar>(what: &str, data: &[T], cols: usize) -> Result<(), NnError> {
    match ferrodl_tensor::first_non_finite(data) {
        None => Ok(()),
        Some(i) => {
            let v = data[i].f64();
            let kind = if v.is_nan() {
                "NaN"
            } else if v > 0.0 {
                "+infinity"
            } else {
                "-infinity"
            };
            Err(NnError::InvalidInput(format!(
                "{what} {kind} at row {}, column {}",
                i / cols.max(1),
                i % cols.max(1)
            )))
        }
    }
}

impl<T: Scalar> ComputationGraph<T> {
    /// Builds a graph of any element type (`ComputationGraph::<f64>::from_configuration`).
    pub fn from_configuration(conf: ComputationGraphConfiguration) -> Result<Self, NnError> {
        Self::with_init(conf, ParamInit::Seeded)
    }

    /// [`Self::from_configuration`] with the parameters filled as `init` says: the same graph as
    /// `from_configuration` then `set_params`, without drawing the weights that would replace.
    pub fn with_init(conf: ComputationGraphConfiguration, init: ParamInit<'_, T>) -> Result<Self, NnError> {
        let plan = conf.plan()?;
        let mut node_of = vec![0; conf.vertices.len()];
        for (j, &v) in plan.order.iter().enumerate() {
            node_of[v] = j;
        }
        let defs: Vec<NodeDef<'_>> = plan
            .order
            .iter()
            .map(|&v| {
                let vc = &conf.vertices[v];
                let sources = plan.sources[v]
                    .iter()
                    .map(|s| match *s {
                        GraphSource::Input(k) => Src::Input(k),
                        GraphSource::Vertex(u) => Src::Node(node_of[u]),
                    })
                    .collect();
                let kind = match vc.vertex.unfrozen() {
                    VertexConfig::LayerVertex(l) => NodeDefKind::Layer {
                        conf: &l.layer,
                        shapes: plan.layer_shapes(v),
                        frozen: vc.is_frozen(),
                    },
                    other => {
                        let (inputs, output) = plan.node_shapes(v);
                        NodeDefKind::Vertex {
                            conf: other,
                            inputs,
                            output,
                            step_inputs: plan.step_shapes(v, other),
                            aux: conf.aux_input(v).ok().flatten(),
                        }
                    }
                };
                NodeDef {
                    key: vc.name.clone(),
                    who: vc.describe(),
                    sources,
                    kind,
                }
            })
            .collect();
        let outputs: Vec<usize> = plan.outputs.iter().map(|&v| node_of[v]).collect();
        let exec = Executor::new(
            defs,
            plan.input_shapes.clone(),
            &outputs,
            conf.seed,
            conf.mini_batch,
            init,
        )?;
        let layout = Self::boundary(&conf, &plan);
        Ok(ComputationGraph {
            conf,
            plan,
            exec,
            node_of,
            layout,
        })
    }

    /// Which network inputs and outputs are NWC sequences: an input is when its input type says
    /// so or the first layer vertex reading it does; an output when its layer does.
    fn boundary(conf: &ComputationGraphConfiguration, plan: &GraphPlan) -> Boundary {
        let first_reader = |k: usize| {
            plan.order.iter().find_map(|&v| {
                let reads = plan.sources[v].iter().any(|s| matches!(*s, GraphSource::Input(i) if i == k));
                reads.then(|| conf.vertices[v].vertex.layer()).flatten()
            })
        };
        let types = conf.input_types.as_ref();
        let inputs = plan.input_shapes.iter().enumerate().map(|(k, &s)| {
            let t = types.and_then(|ts| ts.get(k));
            (s, layout::input_format(t, first_reader(k)))
        });
        let outputs = plan.outputs.iter().map(|&v| {
            (plan.out_shapes[v], conf.vertices[v].vertex.layer().and_then(|l| l.rnn_format()))
        });
        Boundary::new(inputs, outputs)
    }

    /// The configuration, with the current iteration and epoch counters.
    pub fn configuration(&self) -> &ComputationGraphConfiguration {
        &self.conf
    }

    pub fn num_params(&self) -> usize {
        self.exec.params().len()
    }

    pub fn params(&self) -> &[T] {
        self.exec.params()
    }

    pub fn params_mut(&mut self) -> &mut [T] {
        self.exec.params_mut()
    }

    pub fn set_params(&mut self, p: &[T]) -> Result<(), NnError> {
        self.exec.set_params(p)
    }

    /// The gradient of the last [`compute_gradient_and_score`](Self::compute_gradient_and_score),
    /// or the update of the last `fit`/`compute_update`.
    pub fn gradient(&self) -> &[T] {
        self.exec.grads()
    }

    /// The update of the last [`compute_update`](Self::compute_update) or `fit`.
    pub fn update(&self) -> &[T] {
        self.exec.grads()
    }

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

    pub fn num_inputs(&self) -> usize {
        self.conf.network_inputs.len()
    }

    pub fn num_outputs(&self) -> usize {
        self.conf.network_outputs.len()
    }

    /// Values per example of network input `k`.
    pub fn input_width(&self, k: usize) -> usize {
        self.plan.input_shapes[k].len()
    }

    /// Values per example of network output `k` (its labels width).
    pub fn output_width(&self, k: usize) -> usize {
        self.plan.out_shapes[self.plan.outputs[k]].len()
    }

    /// The activation of output `k`'s layer.
    pub fn output_activation(&self, k: usize) -> Activation {
        self.exec.output_activation(k)
    }

    /// Vertex index (configuration order) by name.
    pub fn vertex_index(&self, name: &str) -> Option<usize> {
        self.conf.vertex_index(name)
    }

    /// The layer of vertex `v` (configuration order), if it is a layer vertex.
    pub fn layer(&self, v: usize) -> Option<&dyn Layer<T>> {
        self.exec.layer(*self.node_of.get(v)?)
    }

    /// Input shapes and output shape of vertex `v`.
    pub fn vertex_shapes(&self, v: usize) -> Option<(&[Shape], Shape)> {
        Some((self.plan.in_shapes.get(v)?, self.plan.out_shapes[v]))
    }

    /// Range of vertex `v`'s parameters in `params()`.
    pub fn param_range(&self, v: usize) -> Option<Range<usize>> {
        self.exec.param_range(*self.node_of.get(v)?)
    }

    /// Vertex indices in execution order.
    pub fn execution_order(&self) -> &[usize] {
        &self.plan.order
    }

    /// (`"<vertex>_<name>"`, range in `params()`, shape) for every parameter block in layout order.
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

    pub fn increment_epoch_count(&mut self) {
        self.conf.epoch_count += 1;
    }

    /// The learning rate of vertex `v`'s weights at the current counters; `None` without
    /// parameters.
    pub fn learning_rate(&self, v: usize) -> Option<f64> {
        self.exec.learning_rate(
            *self.node_of.get(v)?,
            self.conf.iteration_count,
            self.conf.epoch_count,
        )
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

    /// Shapes and values of the inputs and their feature masks.
    pub fn check_inputs(
        &self,
        inputs: &[&[T]],
        rows: usize,
        masks: &[MaskArg<'_, T>],
    ) -> Result<(), NnError> {
        Self::check_rows(rows)?;
        let n = self.num_inputs();
        if inputs.len() != n {
            return Err(NnError::Shape(format!(
                "the graph has {n} network inputs ({:?}) but {} feature arrays were given",
                self.conf.network_inputs,
                inputs.len()
            )));
        }
        for (k, x) in inputs.iter().enumerate() {
            let name = &self.conf.network_inputs[k];
            let shape = self.plan.input_shapes[k];
            if shape.is_seq() {
                let t = self.exec.input_steps(k, x.len(), rows).map_err(|m| {
                    NnError::Shape(format!(
                        "features for network input \"{name}\" ({shape}): {m}"
                    ))
                })?;
                non_finite_at(
                    &format!("features for network input \"{name}\" contain"),
                    x,
                    shape.width(t),
                )?;
                if let Some(Some((m, cols))) = masks.get(k) {
                    if (*cols != 1 && *cols != t) || m.len() != rows * cols {
                        return Err(NnError::Shape(format!(
                            "the feature mask of network input \"{name}\" has {} values in \
                             {cols} columns; for {rows} examples of {t} time steps it must be \
                             [N, T] = {rows}×{t} (or one value per example)",
                            m.len()
                        )));
                    }
                }
                continue;
            }
            let w = self.input_width(k);
            if x.len() != rows * w {
                let shape = self.plan.input_shapes[k];
                return Err(NnError::Shape(if x.len() % rows == 0 {
                    format!(
                        "features for network input \"{name}\" have {} columns but it takes {w} \
                         values per example ({shape})",
                        x.len() / rows
                    )
                } else {
                    format!(
                        "features for network input \"{name}\" have {} values, which is not {rows} \
                         rows of {w} columns ({} values)",
                        x.len(),
                        rows * w
                    )
                }));
            }
            non_finite_at(
                &format!("features for network input \"{name}\" contain"),
                x,
                w,
            )?;
        }
        if !masks.is_empty() && masks.len() != n {
            return Err(NnError::Shape(format!(
                "{} feature masks were given for {n} network inputs (give one per input, null \
                 where there is none)",
                masks.len()
            )));
        }
        for (k, m) in masks.iter().enumerate() {
            if let Some((data, cols)) = m {
                let name = &self.conf.network_inputs[k];
                if *cols == 0 || data.len() != rows * cols {
                    return Err(NnError::Shape(format!(
                        "the feature mask of network input \"{name}\" has {} values, which is not \
                         {rows} rows of {cols} columns",
                        data.len()
                    )));
                }
                non_finite_at(
                    &format!("the feature mask of network input \"{name}\" contains"),
                    data,
                    *cols,
                )?;
            }
        }
        self.exec.check_input_values(inputs, rows)
    }

    /// Shapes and values of the labels and their masks (after the forward pass, which fixes the
    /// steps of a recurrent output).
    pub fn check_labels(
        &self,
        labels: &[&[T]],
        rows: usize,
        masks: &[MaskArg<'_, T>],
    ) -> Result<(), NnError> {
        let widths: Vec<usize> = (0..self.num_outputs()).map(|k| self.exec.output_width(k)).collect();
        self.check_labels_for(labels, rows, masks, &widths)
    }

    /// [`check_labels`](Self::check_labels) against `widths`: values per example of each output.
    fn check_labels_for(
        &self,
        labels: &[&[T]],
        rows: usize,
        masks: &[MaskArg<'_, T>],
        widths: &[usize],
    ) -> Result<(), NnError> {
        let n = self.num_outputs();
        if labels.len() != n {
            return Err(NnError::Shape(format!(
                "the graph has {n} network outputs ({:?}) but {} label arrays were given",
                self.conf.network_outputs,
                labels.len()
            )));
        }
        if !masks.is_empty() && masks.len() != n {
            return Err(NnError::Shape(format!(
                "{} label masks were given for {n} network outputs (give one per output, null \
                 where there is none)",
                masks.len()
            )));
        }
        for (k, y) in labels.iter().enumerate() {
            let name = &self.conf.network_outputs[k];
            if let Some(c) = self.exec.output_seq_channels(k) {
                let w = widths[k];
                let t = w / c.max(1);
                if y.len() != rows * w {
                    return Err(NnError::Shape(format!(
                        "labels for output \"{name}\" have {} values but the output gives {rows} \
                         examples × nOut={c} × {t} time steps = {} (labels of a recurrent output \
                         are [N, nOut, T])",
                        y.len(),
                        rows * w
                    )));
                }
                non_finite_at(&format!("labels for output \"{name}\" contain"), y, w)?;
                if let Some(Some((m, cols))) = masks.get(k) {
                    if (*cols != 1 && *cols != t && *cols != w) || m.len() != rows * cols {
                        return Err(NnError::Shape(format!(
                            "the labels mask of output \"{name}\" has {} values in {cols} \
                             columns; for {rows} examples of {t} time steps it must be [N, T] = \
                             {rows}×{t} (or one value per example, or one per output and step)",
                            m.len()
                        )));
                    }
                }
                continue;
            }
            let w = self.output_width(k);
            if y.len() != rows * w {
                return Err(NnError::Shape(if y.len() % rows == 0 {
                    format!(
                        "labels for output \"{name}\" have {} columns but the output layer has \
                         nOut={w}",
                        y.len() / rows
                    )
                } else {
                    format!(
                        "labels for output \"{name}\" have {} values, which is not {rows} rows of \
                         {w} columns ({} values)",
                        y.len(),
                        rows * w
                    )
                }));
            }
            non_finite_at(&format!("labels for output \"{name}\" contain"), y, w)?;
            if let Some(Some((m, cols))) = masks.get(k) {
                if *cols != 1 && *cols != w {
                    return Err(NnError::Shape(format!(
                        "the labels mask of output \"{name}\" has {cols} columns; it must have 1 \
                         (one value per example) or nOut={w} (one value per output)"
                    )));
                }
                if m.len() != rows * cols {
                    return Err(NnError::Shape(format!(
                        "the labels mask of output \"{name}\" has {} values but {rows} rows × \
                         {cols} columns need {}",
                        m.len(),
                        rows * cols
                    )));
                }
                non_finite_at(
                    &format!("the labels mask of output \"{name}\" contains"),
                    m,
                    *cols,
                )?;
            }
        }
        Ok(())
    }

    // ---- computation ------------------------------------------------------------------------

    fn feature_masks<'a>(masks: &[MaskArg<'a, T>]) -> Vec<Option<Mask<'a, T>>> {
        masks
            .iter()
            .map(|m| m.map(|(data, cols)| Mask { data, cols }))
            .collect()
    }

    fn label_masks<'a>(masks: &[MaskArg<'a, T>]) -> Vec<Option<LabelsMask<'a, T>>> {
        masks
            .iter()
            .map(|m| m.map(|(data, cols)| LabelsMask { data, cols }))
            .collect()
    }

    /// Validates the inputs, runs the forward pass, then validates the labels (whose width a
    /// recurrent output's steps decide).
    fn forward_checked(
        &mut self,
        inputs: &[&[T]],
        labels: LabelsArg<'_, '_, T>,
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        train: bool,
        state: StateMode,
    ) -> Result<(), NnError> {
        self.check_inputs(inputs, rows, feature_masks)?;
        let fm = Self::feature_masks(feature_masks);
        self.exec.forward_in(inputs, &fm, rows, train, state)?;
        if let Some((y, lm)) = labels {
            self.check_labels(y, rows, lm)?;
        }
        Ok(())
    }

    fn forward_backward(
        &mut self,
        inputs: &[&[T]],
        labels: &[&[T]],
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        label_masks: &[MaskArg<'_, T>],
    ) -> Result<f64, NnError> {
        self.forward_checked(
            inputs,
            Some((labels, label_masks)),
            rows,
            feature_masks,
            true,
            StateMode::Stateless,
        )?;
        let fm = Self::feature_masks(feature_masks);
        let lm = Self::label_masks(label_masks);
        let score = self.exec.data_score(labels, &lm) + self.exec.regularization_score();
        self.exec.backward(inputs, &fm, labels, &lm);
        Ok(score)
    }

    /// Forward and backward without updating: [`gradient`](Self::gradient) then holds the
    /// gradient of the returned score (losses + L1/L2) with respect to `params()`.
    pub fn compute_gradient_and_score(
        &mut self,
        inputs: &[&[T]],
        labels: &[&[T]],
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        label_masks: &[MaskArg<'_, T>],
    ) -> Result<f64, NnError> {
        let _denormals = flush_denormals();
        let xs = self.layout.inputs(inputs, rows);
        let xs = views(&xs);
        let inputs = &xs[..];
        let ys = self.layout.all_labels(labels, rows);
        let lms = self.layout.all_labels_masks(label_masks, rows, labels);
        let (ys, lms) = (views(&ys), mask_views(&lms));
        let (labels, label_masks) = (&ys[..], &lms[..]);
        let score = self.forward_backward(inputs, labels, rows, feature_masks, label_masks)?;
        self.exec.add_regularization_gradient();
        Ok(score)
    }

    /// Truncated BPTT's segment lengths, when configured and some input is a sequence.
    fn tbptt(&self) -> Option<(usize, usize)> {
        (self.conf.backprop_type == BackpropType::TruncatedBptt
            && self.plan.input_shapes.iter().any(Shape::is_seq))
        .then_some((self.conf.tbptt_fwd_length, self.conf.tbptt_back_length))
    }

    /// Truncated BPTT over the minibatch: one training iteration per segment.
    #[allow(clippy::too_many_arguments)]
    fn fit_tbptt(
        &mut self,
        inputs: &[&[T]],
        labels: &[&[T]],
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        label_masks: &[MaskArg<'_, T>],
        fwd: usize,
        back: usize,
    ) -> Result<f64, NnError> {
        // Validated without a forward pass over all T steps (as a MultiLayerNetwork's): the
        // inputs and masks, then the labels against the widths the nodes give for those steps;
        // each segment's forward checks the rest.
        self.check_inputs(inputs, rows, feature_masks)?;
        let mut steps_in = Vec::with_capacity(inputs.len());
        for (k, x) in inputs.iter().enumerate() {
            steps_in.push(self.exec.input_steps(k, x.len(), rows).map_err(NnError::Shape)?);
        }
        let widths = self.exec.output_widths_for(rows, &steps_in)?;
        self.check_labels_for(labels, rows, label_masks, &widths)?;
        let t = (0..inputs.len())
            .filter(|&k| self.plan.input_shapes[k].is_seq())
            .map(|k| steps_in[k])
            .max()
            .unwrap_or(1);
        let none = vec![None; inputs.len()];
        let none_l = vec![None; labels.len()];
        let arrays = tbptt::Arrays {
            inputs,
            input_masks: if feature_masks.is_empty() { &none } else { feature_masks },
            labels,
            label_masks: if label_masks.is_empty() { &none_l } else { label_masks },
            rows,
        };
        let conf = &mut self.conf;
        let data = tbptt::run(&mut self.exec, &arrays, t, fwd, back, |exec| {
            exec.fit_step(conf.iteration_count, conf.epoch_count);
            conf.iteration_count += 1;
        })?;
        Ok(data + self.exec.regularization_score())
    }

    /// One training iteration on one minibatch; returns the score before the update (under
    /// truncated BPTT, one iteration per segment and the last segment's score).
    pub fn fit(
        &mut self,
        inputs: &[&[T]],
        labels: &[&[T]],
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        label_masks: &[MaskArg<'_, T>],
    ) -> Result<f64, NnError> {
        let _denormals = flush_denormals();
        let xs = self.layout.inputs(inputs, rows);
        let xs = views(&xs);
        let inputs = &xs[..];
        let ys = self.layout.all_labels(labels, rows);
        let lms = self.layout.all_labels_masks(label_masks, rows, labels);
        let (ys, lms) = (views(&ys), mask_views(&lms));
        let (labels, label_masks) = (&ys[..], &lms[..]);
        if let Some((fwd, back)) = self.tbptt() {
            return self.fit_tbptt(inputs, labels, rows, feature_masks, label_masks, fwd, back);
        }
        let score = self.forward_backward(inputs, labels, rows, feature_masks, label_masks)?;
        let (iteration, epoch) = (self.conf.iteration_count, self.conf.epoch_count);
        self.exec.fit_step(iteration, epoch);
        self.conf.iteration_count += 1;
        Ok(score)
    }

    /// A training iteration that leaves the parameters alone; [`update`](Self::update) then holds
    /// what `fit` would subtract (gradient sharing encodes it). Under truncated BPTT: the sum of
    /// the segments' updates.
    pub fn compute_update(
        &mut self,
        inputs: &[&[T]],
        labels: &[&[T]],
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        label_masks: &[MaskArg<'_, T>],
    ) -> Result<f64, NnError> {
        let _denormals = flush_denormals();
        let xs = self.layout.inputs(inputs, rows);
        let xs = views(&xs);
        let inputs = &xs[..];
        let ys = self.layout.all_labels(labels, rows);
        let lms = self.layout.all_labels_masks(label_masks, rows, labels);
        let (ys, lms) = (views(&ys), mask_views(&lms));
        let (labels, label_masks) = (&ys[..], &lms[..]);
        self.compute_update_engine(inputs, labels, rows, feature_masks, label_masks)
    }

    /// [`compute_update`](Self::compute_update) on arrays in the engine's layout.
    fn compute_update_engine(
        &mut self,
        inputs: &[&[T]],
        labels: &[&[T]],
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        label_masks: &[MaskArg<'_, T>],
    ) -> Result<f64, NnError> {
        if let Some((fwd, back)) = self.tbptt() {
            let before = self.exec.params().to_vec();
            let score =
                self.fit_tbptt(inputs, labels, rows, feature_masks, label_masks, fwd, back)?;
            self.exec.take_update_from(&before);
            return Ok(score);
        }
        let score = self.forward_backward(inputs, labels, rows, feature_masks, label_masks)?;
        let (iteration, epoch) = (self.conf.iteration_count, self.conf.epoch_count);
        self.exec.update_step(iteration, epoch);
        self.conf.iteration_count += 1;
        Ok(score)
    }

    /// The reference's `rnnTimeStep`: the outputs from the state the previous call left,
    /// keeping the new state (one step: `rows × C` per sequence input).
    pub fn rnn_time_step(&mut self, inputs: &[&[T]], rows: usize) -> Result<Vec<Vec<T>>, NnError> {
        let _denormals = flush_denormals();
        let xs = self.layout.inputs(inputs, rows);
        let xs = views(&xs);
        let inputs = &xs[..];
        self.forward_checked(inputs, None, rows, &[], false, StateMode::TimeStep)?;
        Ok(self.user_outputs(rows))
    }

    /// Forgets the `rnnTimeStep` state of every layer.
    pub fn rnn_clear_previous_state(&mut self) {
        self.exec.clear_state(StateMode::TimeStep);
    }

    /// The executor node of a layer vertex, by name.
    fn layer_node(&self, vertex: &str) -> Result<usize, NnError> {
        let v = self.vertex_index(vertex).ok_or_else(|| {
            NnError::InvalidInput(format!("the graph has no vertex named \"{vertex}\""))
        })?;
        match self.exec.layer(self.node_of[v]) {
            Some(_) => Ok(self.node_of[v]),
            None => Err(NnError::InvalidInput(format!(
                "vertex \"{vertex}\" is not a layer (it has no recurrent state)"
            ))),
        }
    }

    /// The state keys of layer vertex `vertex` (empty for layers without recurrent state).
    pub fn rnn_state_keys(&self, vertex: &str) -> Result<&'static [&'static str], NnError> {
        let j = self.layer_node(vertex)?;
        Ok(self.exec.layer(j).map_or(&[], |l| l.state_keys()))
    }

    /// Layer vertex `vertex`'s `rnnTimeStep` state under `key`, if it keeps one.
    pub fn rnn_previous_state(&self, vertex: &str, key: &str) -> Result<Option<&[T]>, NnError> {
        let j = self.layer_node(vertex)?;
        Ok(self.exec.layer(j).and_then(|l| l.state(key)))
    }

    /// Sets layer vertex `vertex`'s `rnnTimeStep` state under `key` to `rows × nOut` values.
    pub fn rnn_set_previous_state(
        &mut self,
        vertex: &str,
        key: &str,
        values: &[T],
        rows: usize,
    ) -> Result<(), NnError> {
        let j = self.layer_node(vertex)?;
        let layer = self.exec.layer_mut(j).expect("checked to be a layer");
        layer
            .set_state(key, values, rows)
            .map_err(|m| NnError::InvalidInput(format!("vertex \"{vertex}\": {m}")))
    }

    /// The outputs (one `rows × nOut` array per network output, activated).
    pub fn output(
        &mut self,
        inputs: &[&[T]],
        rows: usize,
        train: bool,
        feature_masks: &[MaskArg<'_, T>],
    ) -> Result<Vec<Vec<T>>, NnError> {
        let _denormals = flush_denormals();
        let xs = self.layout.inputs(inputs, rows);
        let xs = views(&xs);
        let inputs = &xs[..];
        self.forward_checked(inputs, None, rows, feature_masks, train, StateMode::Stateless)?;
        Ok(self.user_outputs(rows))
    }

    /// The network's outputs in the user's layout.
    fn user_outputs(&self, rows: usize) -> Vec<Vec<T>> {
        (0..self.num_outputs())
            .map(|k| self.layout.output(k, self.exec.output(k).to_vec(), rows))
            .collect()
    }

    /// Every vertex's activation (configuration order; output layers activated), as the
    /// reference's `feedForward` map without the inputs.
    pub fn feed_forward(
        &mut self,
        inputs: &[&[T]],
        rows: usize,
        train: bool,
        feature_masks: &[MaskArg<'_, T>],
    ) -> Result<Vec<Vec<T>>, NnError> {
        let _denormals = flush_denormals();
        let xs = self.layout.inputs(inputs, rows);
        let xs = views(&xs);
        let inputs = &xs[..];
        self.forward_checked(inputs, None, rows, feature_masks, train, StateMode::Stateless)?;
        Ok((0..self.conf.vertices.len())
            .map(|v| match self.plan.outputs.iter().position(|&o| o == v) {
                Some(k) => self.layout.output(k, self.exec.output(k).to_vec(), rows),
                None => self.exec.activation(self.node_of[v]).to_vec(),
            })
            .collect())
    }

    /// Score (sum of output losses + L1/L2) in inference mode, without changing the graph.
    pub fn score(
        &mut self,
        inputs: &[&[T]],
        labels: &[&[T]],
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        label_masks: &[MaskArg<'_, T>],
    ) -> Result<f64, NnError> {
        let _denormals = flush_denormals();
        let xs = self.layout.inputs(inputs, rows);
        let xs = views(&xs);
        let inputs = &xs[..];
        let ys = self.layout.all_labels(labels, rows);
        let lms = self.layout.all_labels_masks(label_masks, rows, labels);
        let (ys, lms) = (views(&ys), mask_views(&lms));
        let (labels, label_masks) = (&ys[..], &lms[..]);
        self.forward_checked(
            inputs,
            Some((labels, label_masks)),
            rows,
            feature_masks,
            false,
            StateMode::Stateless,
        )?;
        let lm = Self::label_masks(label_masks);
        Ok(self.exec.data_score(labels, &lm) + self.exec.regularization_score())
    }

    /// Per-example scores in inference mode: the sum over outputs of each example's loss, plus
    /// the whole L1/L2 term when `include_regularization`.
    #[allow(clippy::too_many_arguments)]
    pub fn score_examples(
        &mut self,
        inputs: &[&[T]],
        labels: &[&[T]],
        rows: usize,
        feature_masks: &[MaskArg<'_, T>],
        label_masks: &[MaskArg<'_, T>],
        include_regularization: bool,
    ) -> Result<Vec<f64>, NnError> {
        let _denormals = flush_denormals();
        let xs = self.layout.inputs(inputs, rows);
        let xs = views(&xs);
        let inputs = &xs[..];
        let ys = self.layout.all_labels(labels, rows);
        let lms = self.layout.all_labels_masks(label_masks, rows, labels);
        let (ys, lms) = (views(&ys), mask_views(&lms));
        let (labels, label_masks) = (&ys[..], &lms[..]);
        self.forward_checked(
            inputs,
            Some((labels, label_masks)),
            rows,
            feature_masks,
            false,
            StateMode::Stateless,
        )?;
        let lm = Self::label_masks(label_masks);
        let mut per = self.exec.score_examples(labels, &lm);
        if include_regularization {
            let reg = self.exec.regularization_score();
            per.iter_mut().for_each(|v| *v += reg);
        }
        Ok(per)
    }
}
