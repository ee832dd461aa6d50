//! The one executor behind every network: nodes (layers and vertices) with numbered inputs, run
//! forward in topological order and backward in reverse, with gradients accumulated where an
//! activation feeds several consumers and one loss head per output (ARCHITECTURE.md §13).
//!
//! `MultiLayerNetwork` is the chain case (node i reads node i−1) and `ComputationGraph` the
//! general one; both keep their own API, input checks and configuration and hand the executor a
//! list of [`NodeDef`]s. Parameters live in one flat vector laid out node by node in execution
//! order; each node's blocks are keyed `<key>_<param>` (`0_W` for a multi-layer network,
//! `dense1_W` for a graph).
//!
//! Buffers: each node keeps its output activation; gradients with respect to activations live in
//! a few shared slots assigned at construction by liveness in backward order (a chain uses two,
//! as a ping-pong pair), and everything only grows, so repeated calls with one batch size do not
//! allocate.

use crate::activation::ActivationCache;
use crate::batch::{Batch, Mask, MaskRule};
use crate::config::{LayerConfig, LayerShapes, LossFunction, Shape};
use crate::error::NnError;
use crate::layers::misc::DropoutMask;
use crate::layers::recurrent::{ncw_to_nwc, nwc_to_ncw};
use crate::layers::{build_layer, Ctx, Layer, StateMode};
use crate::loss::LabelsMask;
use crate::regularization::{self, ParamBlock};
use crate::vertices::{PerStepVertex, Vertex, VertexConfig};
use ferrodl_optim::{AnyUpdater, Optimizer};
use ferrodl_tensor::{memory, Rng, Scalar};
use std::ops::Range;

/// Seed offset of the training RNG (dropout masks), so it never replays the initialisation draws.
const TRAIN_RNG_STREAM: u64 = 0x7472_6169_6e5f_726e;

/// Where a node input comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// Network input `k`.
    Input(usize),
    /// The output of node `j` (an earlier node).
    Node(usize),
}

/// What to build for one node.
pub(crate) struct NodeDef<'a> {
    /// Parameter-key prefix (`"0"`, `"dense1"`).
    pub key: String,
    /// How messages name the node (`layer 2 (DenseLayer)`, `vertex "add" (ElementWiseVertex)`).
    pub who: String,
    pub sources: Vec<Src>,
    pub kind: NodeDefKind<'a>,
}

pub(crate) enum NodeDefKind<'a> {
    Layer {
        conf: &'a LayerConfig,
        shapes: LayerShapes,
        /// Parameters never change and the layer runs in inference mode.
        frozen: bool,
    },
    Vertex {
        conf: &'a VertexConfig,
        inputs: Vec<Shape>,
        output: Shape,
        /// Inside a per-step region: the per-step shapes of its inputs (it runs on `N·T` rows).
        step_inputs: Option<Vec<Shape>>,
        /// The network input the vertex reads by name (its steps and mask).
        aux: Option<usize>,
    },
}

/// The activation and loss applied to an output layer's result.
///
/// A sequence output (`RnnOutputLayer`, `RnnLossLayer`) has its activation and loss applied per
/// time step: the `[N, C, T]` activations are laid out as `N·T` rows of `C` (`rows_out`, with
/// the pre-activations in `rows_z`), and only the user's `out` is in NCW.
#[derive(Debug)]
struct Head<T> {
    node: usize,
    act: ActivationCache<T>,
    loss: LossFunction,
    weights: Option<Vec<f64>>,
    /// The activated output of the last forward pass (the node's layout: NCW for sequences).
    out: Vec<T>,
    /// Sequence outputs: channels per step, and the per-step rows of the last forward pass.
    seq: Option<usize>,
    rows_out: Vec<T>,
    rows_z: Vec<T>,
    /// Scratch for labels and loss deltas laid out per step.
    rows_labels: Vec<T>,
    rows_delta: Vec<T>,
    rows_mask: Vec<T>,
}

/// A labels mask as the loss reads it for a head: per example (or per output) rows, or, for a
/// sequence head, per (example, step) rows (`[N, T]` reinterpreted, `[N, C, T]` transposed, or
/// a per-example value repeated over the steps).
fn step_rows_mask<'m, T: Scalar>(
    mask: Option<&LabelsMask<'m, T>>,
    n: usize,
    c: usize,
    t: usize,
    scratch: &'m mut Vec<T>,
) -> Option<LabelsMask<'m, T>> {
    let m = mask?;
    if m.cols == t {
        Some(LabelsMask { data: m.data, cols: 1 })
    } else if m.cols == c * t {
        grow(scratch, n * c * t);
        ncw_to_nwc(m.data, n, c, t, &mut scratch[..n * c * t]);
        Some(LabelsMask { data: &scratch[..n * c * t], cols: c })
    } else {
        grow(scratch, n * t);
        for i in 0..n {
            scratch[i * t..(i + 1) * t].fill(m.data[i]);
        }
        Some(LabelsMask { data: &scratch[..n * t], cols: 1 })
    }
}

#[derive(Debug)]
struct LayerNode<T: Scalar> {
    layer: Box<dyn Layer<T>>,
    shapes: LayerShapes,
    range: Range<usize>,
    frozen: bool,
    /// Input dropout (`dropOut`), and the masked input it produced.
    drop: DropoutMask<T>,
    dropped: Vec<T>,
}

#[derive(Debug)]
enum Op<T: Scalar> {
    Layer(LayerNode<T>),
    Vertex(Box<dyn Vertex<T>>),
}

#[derive(Debug)]
struct Node<T: Scalar> {
    key: String,
    who: String,
    sources: Vec<Src>,
    shape: Shape,
    op: Op<T>,
    /// Some trainable parameter is at or before this node: backward must reach it.
    backprop: bool,
    /// Which network input's feature mask reaches this node (the nodes' MaskRules between).
    mask_from: Option<usize>,
    /// A vertex's named network input, and how the vertex passes masks on.
    aux: Option<usize>,
    vertex_mask: MaskRule,
    /// Delta slot of this node (module docs); `usize::MAX` when it never receives a delta.
    slot: usize,
}

/// How a new network's parameters are filled. Building the MNIST MLP (443,610 parameters, Adam)
/// took 9–13 ms seeded and 1–3.5 ms without the draw (2-vCPU Xeon, 2026-11-28): a network whose
/// parameters are about to be replaced (a Spark worker restoring the driver's) need not pay for
/// it. The training RNG (dropout) starts from the seed either way.
#[derive(Clone, Copy, Debug)]
pub enum ParamInit<'a, T> {
    /// Drawn from the configuration's seed by each layer's weight initialisation.
    Seeded,
    /// These values (as many as the network has parameters); nothing is drawn.
    Given(&'a [T]),
    /// Zeros, for the caller to set; nothing is drawn.
    Zeros,
}

/// The executor: nodes in execution order, parameters, optimizer and buffers.
#[derive(Debug)]
pub(crate) struct Executor<T: Scalar> {
    nodes: Vec<Node<T>>,
    input_shapes: Vec<Shape>,
    heads: Vec<Head<T>>,
    blocks: Vec<ParamBlock>,
    params: Vec<T>,
    grads: Vec<T>,
    optimizer: Optimizer<T>,
    /// Weight decay's coefficient per trained block for the current step (reused).
    decay: Vec<T>,
    mini_batch: bool,
    /// Output of each node for the last forward pass, its row count and time steps.
    acts: Vec<Vec<T>>,
    rows: Vec<usize>,
    steps: Vec<usize>,
    /// Rows and time steps of the network inputs in the last forward pass.
    rows_in: usize,
    steps_in: Vec<usize>,
    /// Truncated BPTT: how many final steps the next backward pass covers.
    backprop_steps: usize,
    /// `dL/d(activation)` slots, and whether a node's delta has been written in this backward.
    slots: Vec<Vec<T>>,
    written: Vec<bool>,
    /// Scratch: a further consumer's contribution, and vertex input gradients (one per input).
    scratch: Vec<Vec<T>>,
    train_rng: Rng,
    /// The training RNG's seed (from the configuration's), for [`Executor::reset_training_rng`].
    train_seed: u64,
}

/// Two distinct elements of a slice, mutably.
fn two_mut<X>(v: &mut [X], a: usize, b: usize) -> (&mut X, &mut X) {
    debug_assert_ne!(a, b);
    if a < b {
        let (l, r) = v.split_at_mut(b);
        (&mut l[a], &mut r[0])
    } else {
        let (l, r) = v.split_at_mut(a);
        (&mut r[0], &mut l[b])
    }
}

/// Makes `v` exactly `n` values long: growing is checked against the native memory budget,
/// shrinking keeps the capacity (so a later larger batch reuses it).
fn fit_len<T: Scalar>(
    v: &mut Vec<T>,
    n: usize,
    what: impl FnOnce() -> String,
) -> Result<(), NnError> {
    if v.len() < n {
        memory::try_grow(v, n, T::zero(), what)?;
    } else {
        v.truncate(n);
    }
    Ok(())
}

/// The error for a size that does not fit 64 bits.
fn too_big(what: impl FnOnce() -> String) -> NnError {
    NnError::Memory(memory::MemoryError {
        what: what(),
        bytes: None,
        budget: memory::budget(),
        in_use: memory::in_use(),
    })
}

/// Grows `v` to at least `n` values (never shrinks: capacity and pointers stay put).
fn grow<T: Scalar>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::zero());
    }
}

impl<T: Scalar> Node<T> {
    /// Rows and time steps of this node's output for an input of `in_rows` rows of `in_steps`
    /// steps; a vertex is prepared for that input (`aux`: its named network input's steps and
    /// mask). The one rule for the forward pass and for validating before it.
    fn out_rows_steps(
        &mut self,
        in_rows: usize,
        in_steps: usize,
        aux: Option<crate::vertices::Aux<'_, T>>,
    ) -> Result<(usize, usize), NnError> {
        let who = &self.who;
        match &mut self.op {
            Op::Layer(l) => Ok((
                in_rows,
                l.layer
                    .output_steps(in_steps)
                    .map_err(|m| NnError::InvalidInput(format!("{who}: {m}")))?,
            )),
            Op::Vertex(v) => {
                v.check_rows(in_rows)
                    .map_err(|m| NnError::InvalidInput(format!("{who}: {m}")))?;
                v.prepare(in_rows, in_steps, aux);
                let out_steps = match self.shape {
                    _ if v.output_steps(in_steps).is_some() => v.output_steps(in_steps).unwrap_or(1),
                    Shape::Seq { len, .. } if len != in_steps && !v.any_length() => {
                        return Err(NnError::InvalidInput(format!(
                            "{who}: takes sequences of the configured length {len} only, not \
                             {in_steps} steps"
                        )))
                    }
                    Shape::Seq { .. } => in_steps,
                    _ => 1,
                };
                Ok((v.output_rows(in_rows), out_steps))
            }
        }
    }
}

impl<T: Scalar> Executor<T> {
    /// Values per example of every output for inputs of `rows` examples and `steps_in` time
    /// steps each: what a forward pass would give (the same rule per node), without running one.
    /// Truncated BPTT checks the labels with it before its first segment.
    pub fn output_widths_for(&mut self, rows: usize, steps_in: &[usize]) -> Result<Vec<usize>, NnError> {
        let n = self.nodes.len();
        let (mut rows_of, mut steps) = (vec![0; n], vec![1; n]);
        for j in 0..n {
            let (in_rows, in_steps) = match self.nodes[j].sources[0] {
                Src::Input(k) => (rows, steps_in[k]),
                Src::Node(m) => (rows_of[m], steps[m]),
            };
            let node = &mut self.nodes[j];
            // No mask: only the steps matter here (the forward pass prepares the vertex again).
            let aux = node.aux.map(|k| crate::vertices::Aux { steps: steps_in[k], mask: None });
            (rows_of[j], steps[j]) = node.out_rows_steps(in_rows, in_steps, aux)?;
        }
        Ok(self.heads.iter().map(|h| self.nodes[h.node].shape.width(steps[h.node])).collect())
    }

    /// Builds the nodes (in the given order, which must be topological), lays out and fills the
    /// parameters as `init` says (from `seed` node by node, given, or zeros), and plans masks and
    /// buffers. `outputs` are the nodes (output or loss layers) that get a loss head, in order.
    pub fn new(
        defs: Vec<NodeDef<'_>>,
        input_shapes: Vec<Shape>,
        outputs: &[usize],
        seed: i64,
        mini_batch: bool,
        init: ParamInit<'_, T>,
    ) -> Result<Self, NnError> {
        let n = defs.len();
        let mut nodes: Vec<Node<T>> = Vec::with_capacity(n);
        let mut blocks = Vec::new();
        let mut heads = Vec::with_capacity(outputs.len());
        let mut offset: usize = 0;
        for (j, def) in defs.into_iter().enumerate() {
            let mut aux_of = None;
            let mut vertex_mask = MaskRule::Keep;
            let (shape, op) = match def.kind {
                NodeDefKind::Layer {
                    conf,
                    shapes,
                    frozen,
                } => {
                    let mut layer = build_layer::<T>(conf, shapes).map_err(|e| match e {
                        // A refused allocation stays a memory error (NativeMemoryException).
                        NnError::Memory(m) => NnError::Memory(m),
                        e => NnError::InvalidConfig(format!("{}: {e}", def.who)),
                    })?;
                    // A layer of an RnnToCnn region runs on each time step's image.
                    if shapes.per_step {
                        layer = Box::new(crate::layers::per_step::PerStep::new(layer));
                    }
                    let shapes = shapes.node();
                    let start = offset;
                    for spec in layer.param_specs() {
                        let len = spec
                            .shape
                            .iter()
                            .try_fold(1usize, |a, &d| a.checked_mul(d))
                            .and_then(|len| offset.checked_add(len).map(|end| (len, end)));
                        let Some((len, end)) = len else {
                            return Err(memory::MemoryError {
                                what: format!(
                                    "{}: parameter {:?} of shape {:?}",
                                    def.who, spec.name, spec.shape
                                ),
                                bytes: None,
                                budget: memory::budget(),
                                in_use: memory::in_use(),
                            }
                            .into());
                        };
                        blocks.push(ParamBlock::new(j, conf, frozen, spec, offset..end));
                        offset += len;
                    }
                    if outputs.contains(&j) {
                        let Some((act, loss, weights)) = conf.head() else {
                            return Err(NnError::InvalidConfig(format!(
                                "{}: an output must be an OutputLayer, LossLayer, RnnOutputLayer \
                                 or RnnLossLayer, not a {}",
                                def.who,
                                conf.unfrozen().type_name()
                            )));
                        };
                        heads.push(Head {
                            node: j,
                            act: ActivationCache::new(act),
                            loss,
                            weights: weights.cloned(),
                            out: Vec::new(),
                            seq: match shapes.output {
                                Shape::Seq { c, .. } => Some(c),
                                _ => None,
                            },
                            rows_out: Vec::new(),
                            rows_z: Vec::new(),
                            rows_labels: Vec::new(),
                            rows_delta: Vec::new(),
                            rows_mask: Vec::new(),
                        });
                    }
                    let node = LayerNode {
                        layer,
                        shapes,
                        range: start..offset,
                        frozen,
                        drop: DropoutMask::new(conf.input_drop_out()),
                        dropped: Vec::new(),
                    };
                    (shapes.output, Op::Layer(node))
                }
                NodeDefKind::Vertex {
                    conf,
                    inputs,
                    output,
                    step_inputs,
                    aux,
                } => {
                    aux_of = aux;
                    vertex_mask = conf.mask_rule();
                    let vertex = match step_inputs {
                        Some(steps) => {
                            let c_in = steps.iter().map(|s| s.len()).collect();
                            let inner = conf.build::<T>(&steps);
                            Box::new(PerStepVertex::new(inner, c_in, output.channels()))
                        }
                        None => conf.build::<T>(&inputs),
                    };
                    (output, Op::Vertex(vertex))
                }
            };
            nodes.push(Node {
                key: def.key,
                who: def.who,
                sources: def.sources,
                shape,
                op,
                backprop: false,
                mask_from: None,
                aux: aux_of,
                vertex_mask,
                slot: usize::MAX,
            });
        }
        // Heads in the order of `outputs`.
        heads.sort_by_key(|h| outputs.iter().position(|&o| o == h.node));
        if heads.len() != outputs.len() {
            return Err(NnError::InvalidConfig(
                "every network output must be an output layer".into(),
            ));
        }
        // Parameters, gradients and updater state are allocated together: check them together
        // before any of it is (the optimizer's state is sized by each trained block's updater).
        let state_len = blocks
            .iter()
            .filter(|b| b.trains())
            .map(|b| ferrodl_optim::Updater::state_vectors(&b.updater).checked_mul(b.range.len()))
            .try_fold(0usize, |a, n| a.checked_add(n?));
        let values = state_len.and_then(|s| offset.checked_mul(2)?.checked_add(s));
        let largest = nodes
            .iter()
            .filter_map(|n| match &n.op {
                Op::Layer(l) => Some((l.range.len(), n.who.as_str())),
                Op::Vertex(_) => None,
            })
            .max_by_key(|(len, _)| *len);
        memory::check(
            || match largest {
                Some((len, who)) => format!(
                    "the network's {} parameters (the largest block: {who}, {} parameters), their \
                     gradients and updater state",
                    memory::grouped(offset as u64),
                    memory::grouped(len as u64)
                ),
                None => "the network's parameters".into(),
            },
            values.and_then(|v| memory::bytes_of(v, std::mem::size_of::<T>())),
        )?;
        if let ParamInit::Given(p) = init {
            if p.len() != offset {
                return Err(NnError::InvalidInput(format!(
                    "params have {} values but this network has {offset} parameters",
                    p.len()
                )));
            }
        }
        let mut params = memory::try_filled(offset, T::zero(), || "the parameters".into())?;
        let grads = memory::try_filled(offset, T::zero(), || "the gradients".into())?;
        match init {
            ParamInit::Seeded => {
                let mut rng = Rng::new(seed as u64);
                for node in &nodes {
                    if let Op::Layer(l) = &node.op {
                        l.layer.init_params(&mut params[l.range.clone()], &mut rng);
                    }
                }
            }
            ParamInit::Given(p) => params.copy_from_slice(p),
            ParamInit::Zeros => {}
        }
        let optimizer = Optimizer::new(
            blocks
                .iter()
                .filter(|b| b.trains())
                .map(|b| (b.range.clone(), b.updater.clone()))
                .collect::<Vec<(Range<usize>, AnyUpdater)>>(),
        );
        let mut exec = Executor {
            grads,
            params,
            optimizer,
            decay: Vec::new(),
            blocks,
            heads,
            mini_batch,
            acts: vec![Vec::new(); n],
            rows: vec![0; n],
            steps: vec![1; n],
            rows_in: 0,
            steps_in: Vec::new(),
            backprop_steps: usize::MAX,
            slots: Vec::new(),
            written: vec![false; n],
            scratch: Vec::new(),
            train_rng: Rng::new((seed as u64) ^ TRAIN_RNG_STREAM),
            train_seed: (seed as u64) ^ TRAIN_RNG_STREAM,
            input_shapes,
            nodes,
        };
        exec.plan_backprop();
        exec.plan_masks();
        exec.plan_slots();
        Ok(exec)
    }

    /// Marks the nodes backpropagation must reach: those with a trainable layer at or before
    /// them. Nothing before the first trainable layer learns, so its backward pass is skipped.
    fn plan_backprop(&mut self) {
        for j in 0..self.nodes.len() {
            let own = match &self.nodes[j].op {
                Op::Layer(l) => !l.frozen && !l.layer.param_specs().is_empty(),
                Op::Vertex(_) => false,
            };
            let upstream = self.nodes[j].sources.iter().any(|s| match *s {
                Src::Node(m) => self.nodes[m].backprop,
                Src::Input(_) => false,
            });
            self.nodes[j].backprop = own || upstream;
        }
    }

    /// Assigns each node the network input whose feature mask reaches it.
    fn plan_masks(&mut self) {
        for j in 0..self.nodes.len() {
            let rule = match &self.nodes[j].op {
                Op::Layer(l) => l.layer.mask_rule(),
                Op::Vertex(_) => self.nodes[j].vertex_mask,
            };
            let from = self.nodes[j].sources.iter().find_map(|s| match *s {
                Src::Input(k) => Some(k),
                Src::Node(m) => self.nodes[m].mask_from,
            });
            // The node's own input mask is what its layer sees; `mask_from` is what it passes on.
            self.nodes[j].mask_from = match rule {
                MaskRule::Keep => from,
                MaskRule::Drop => None,
                MaskRule::FromAux => self.nodes[j].aux,
            };
        }
    }

    /// The feature mask a node's layer receives (its first input's).
    fn input_mask_of(&self, j: usize) -> Option<usize> {
        self.nodes[j].sources.iter().find_map(|s| match *s {
            Src::Input(k) => Some(k),
            Src::Node(m) => self.nodes[m].mask_from,
        })
    }

    /// Assigns delta slots by liveness in backward order: a node's slot is taken when its
    /// last consumer (first in backward order) writes into it and freed after its own backward.
    fn plan_slots(&mut self) {
        let mut free: Vec<usize> = Vec::new();
        let mut count = 0;
        let mut alloc = |free: &mut Vec<usize>| {
            free.pop().unwrap_or_else(|| {
                count += 1;
                count - 1
            })
        };
        for h in &self.heads {
            self.nodes[h.node].slot = alloc(&mut free);
        }
        for j in (0..self.nodes.len()).rev() {
            if !self.nodes[j].backprop || self.nodes[j].slot == usize::MAX {
                continue;
            }
            for s in self.nodes[j].sources.clone() {
                if let Src::Node(m) = s {
                    if self.nodes[m].backprop && self.nodes[m].slot == usize::MAX {
                        self.nodes[m].slot = alloc(&mut free);
                    }
                }
            }
            free.push(self.nodes[j].slot);
        }
        self.slots = vec![Vec::new(); count];
    }

    // ---- structure ----------------------------------------------------------------------------

    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    pub fn input_shape(&self, k: usize) -> Shape {
        self.input_shapes[k]
    }

    /// Channels per step of output `k` when it is a sequence output, `None` otherwise.
    pub fn output_seq_channels(&self, k: usize) -> Option<usize> {
        self.heads[k].seq
    }

    /// Values per example of output `k` in the last forward pass.
    pub fn output_width(&self, k: usize) -> usize {
        let j = self.heads[k].node;
        self.nodes[j].shape.width(self.steps[j])
    }

    /// The activation of output `k`'s head.
    pub fn output_activation(&self, k: usize) -> crate::config::Activation {
        self.heads[k].act.activation
    }

    pub fn node_shape(&self, j: usize) -> Shape {
        self.nodes[j].shape
    }

    /// The layer of node `j`, if it is a layer node.
    pub fn layer(&self, j: usize) -> Option<&dyn Layer<T>> {
        match &self.nodes.get(j)?.op {
            Op::Layer(l) => Some(l.layer.as_ref()),
            Op::Vertex(_) => None,
        }
    }

    pub fn layer_shapes(&self, j: usize) -> Option<LayerShapes> {
        match &self.nodes.get(j)?.op {
            Op::Layer(l) => Some(l.shapes),
            Op::Vertex(_) => None,
        }
    }

    /// Range of node `j`'s parameters in `params()` (empty for vertices).
    pub fn param_range(&self, j: usize) -> Option<Range<usize>> {
        match &self.nodes.get(j)?.op {
            Op::Layer(l) => Some(l.range.clone()),
            Op::Vertex(_) => Some(0..0),
        }
    }

    /// (`"<key>_<name>"`, range in `params()`, shape) for every parameter block in layout order.
    pub fn param_table(&self) -> Vec<(String, Range<usize>, Vec<usize>)> {
        self.blocks
            .iter()
            .map(|b| {
                (
                    format!("{}_{}", self.nodes[b.layer].key, b.name),
                    b.range.clone(),
                    b.shape.clone(),
                )
            })
            .collect()
    }

    // ---- parameters and state ---------------------------------------------------------------

    pub fn params(&self) -> &[T] {
        &self.params
    }

    pub fn params_mut(&mut self) -> &mut [T] {
        &mut self.params
    }

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

    /// The gradient of the last backward pass, or the update of the last training step.
    pub fn grads(&self) -> &[T] {
        &self.grads
    }

    pub fn updater_state(&self) -> &[T] {
        self.optimizer.state()
    }

    /// Starts the training RNG (dropout and other training-time noise) again from the
    /// configuration's seed, as a newly built network has it.
    pub fn reset_training_rng(&mut self) {
        self.train_rng = Rng::new(self.train_seed);
    }

    pub fn updater_state_mut(&mut self) -> &mut [T] {
        self.optimizer.state_mut()
    }

    pub fn set_updater_state(&mut self, s: &[T]) -> Result<(), NnError> {
        self.optimizer
            .set_state(s)
            .map_err(|e| NnError::InvalidInput(e.to_string()))
    }

    /// The learning rate of node `j`'s weights at the given counters; `None` without parameters.
    pub fn learning_rate(&self, j: usize, iteration: u64, epoch: u64) -> Option<f64> {
        self.blocks
            .iter()
            .find(|b| b.layer == j && b.kind != crate::layers::ParamKind::State)
            .map(|b| b.updater.learning_rate_at(iteration, epoch))
    }

    /// `Σ l1·|w| + 0.5·l2·w²` over all parameters.
    pub fn regularization_score(&self) -> f64 {
        regularization::score(&self.blocks, &self.params)
    }

    /// Checks values the layers reading network inputs directly cannot take (embedding indices);
    /// layers reading other nodes are checked during the forward pass.
    pub fn check_input_values(&self, inputs: &[&[T]], rows: usize) -> Result<(), NnError> {
        for node in &self.nodes {
            if let (Op::Layer(l), Src::Input(k)) = (&node.op, node.sources[0]) {
                l.layer
                    .check_input(inputs[k], rows)
                    .map_err(|m| NnError::InvalidInput(format!("{}: {m}", node.who)))?;
            }
        }
        Ok(())
    }

    // ---- computation ------------------------------------------------------------------------

    fn input_of<'s>(inputs: &[&'s [T]], acts: &'s [Vec<T>], s: Src) -> &'s [T] {
        match s {
            Src::Input(k) => inputs[k],
            Src::Node(m) => &acts[m],
        }
    }

    /// Time steps of network input `k` given `len` values for `rows` examples: 1 without a time
    /// axis; for a sequence input of `C` channels, `len / (rows·C)` (any length), with a message
    /// when `len` is not a whole number of steps.
    pub fn input_steps(&self, k: usize, len: usize, rows: usize) -> Result<usize, String> {
        match self.input_shapes[k] {
            Shape::Seq { c, .. } => {
                let per = rows.checked_mul(c).filter(|&p| p > 0 && len > 0 && len.is_multiple_of(p));
                match per {
                    Some(p) => Ok(len / p),
                    None => Err(format!(
                        "{len} values for {rows} examples are not a whole number of time steps \
                         of the recurrent input's {c} channels (an example is C·T values, NCW)"
                    )),
                }
            }
            _ => Ok(1),
        }
    }

    /// Forward pass over validated inputs (`rows` examples each), starting recurrent layers
    /// from, and leaving them with, the state of `state` (`Stateless` for `fit`/`output`;
    /// `rnnTimeStep`, truncated BPTT). Layer outputs end up in the nodes' activations, the
    /// network outputs in the heads. `masks` has one optional feature mask per network input (or
    /// is empty).
    pub fn forward_in(
        &mut self,
        inputs: &[&[T]],
        masks: &[Option<Mask<'_, T>>],
        rows: usize,
        train: bool,
        state: StateMode,
    ) -> Result<(), NnError> {
        if state != StateMode::Stateless {
            for node in &self.nodes {
                if let Op::Layer(l) = &node.op {
                    l.layer
                        .check_state_mode(state)
                        .map_err(|m| NnError::InvalidInput(format!("{}: {m}", node.who)))?;
                }
            }
        }
        self.rows_in = rows;
        self.steps_in.clear();
        for (k, x) in inputs.iter().enumerate() {
            let t = self
                .input_steps(k, x.len(), rows)
                .map_err(NnError::Shape)?;
            self.steps_in.push(t);
        }
        for j in 0..self.nodes.len() {
            let (in_rows, in_steps) = match self.nodes[j].sources[0] {
                Src::Input(k) => (rows, self.steps_in[k]),
                Src::Node(m) => (self.rows[m], self.steps[m]),
            };
            // A mask applies while its columns line up with the steps (or it is per example).
            let mask = self
                .input_mask_of(j)
                .and_then(|k| masks.get(k).copied().flatten())
                .filter(|m| m.cols == 1 || m.cols == in_steps);
            let Executor {
                nodes,
                acts,
                params,
                train_rng,
                rows: node_rows,
                steps: node_steps,
                steps_in,
                ..
            } = self;
            let (before, rest) = acts.split_at_mut(j);
            let node = &mut nodes[j];
            let aux = node.aux.map(|k| crate::vertices::Aux {
                steps: steps_in[k],
                mask: masks.get(k).copied().flatten(),
            });
            let (out_rows, out_steps) = node.out_rows_steps(in_rows, in_steps, aux)?;
            let who = &node.who;
            let out = &mut rest[0];
            let width = node.shape.width(out_steps);
            let need = out_rows.checked_mul(width).ok_or_else(|| {
                too_big(|| format!("the activations of {who} for {out_rows} rows"))
            })?;
            fit_len(out, need, || {
                format!("the activations of {who} for a minibatch of {out_rows} examples")
            })?;
            node_rows[j] = out_rows;
            node_steps[j] = out_steps;
            match &mut node.op {
                Op::Layer(l) => {
                    let src = node.sources[0];
                    let mut input: &[T] = Self::input_of(inputs, before, src);
                    if let Src::Node(_) = src {
                        l.layer
                            .check_input(input, in_rows)
                            .map_err(|m| NnError::InvalidInput(format!("{}: {m}", node.who)))?;
                    }
                    // Frozen layers run in inference mode (no dropout, running statistics).
                    let train_j = train && !l.frozen;
                    if l.drop.enabled() {
                        fit_len(&mut l.dropped, input.len(), || {
                            format!("the dropout input of {} for {in_rows} rows", node.who)
                        })?;
                        if train_j {
                            l.drop.reserve(input.len(), &node.who)?;
                        }
                        l.drop.apply(input, &mut l.dropped, train_j, train_rng);
                        input = &l.dropped;
                    }
                    // The layer's own scratch (im2col columns, arg-max, statistics, ...),
                    // checked against the budget before the pass that uses it.
                    l.layer.reserve_workspace(in_rows, in_steps, &node.who)?;
                    let mut batch = Batch::with_steps(in_rows, in_steps);
                    batch.mask = mask;
                    let mut ctx = Ctx {
                        train: train_j,
                        rng: train_rng,
                        state,
                    };
                    l.layer
                        .forward(&params[l.range.clone()], input, &batch, out, &mut ctx);
                }
                Op::Vertex(v) => {
                    let ins: Vec<&[T]> = node
                        .sources
                        .iter()
                        .map(|&s| Self::input_of(inputs, before, s))
                        .collect();
                    v.forward(&ins, in_rows, out);
                }
            }
        }
        for h in &mut self.heads {
            let a = &self.acts[h.node];
            fit_len(&mut h.out, a.len(), || "the network output".into())?;
            h.act.reserve(a.len(), "the network output")?;
            match h.seq {
                None => {
                    h.out.copy_from_slice(a);
                    let cols = self.nodes[h.node].shape.len();
                    h.act.forward(&mut h.out, cols, None);
                }
                Some(c) => {
                    // Per step: the activation (softmax over C) on N·T rows, then back to NCW.
                    let (n, t) = (self.rows[h.node], self.steps[h.node]);
                    fit_len(&mut h.rows_out, a.len(), || "the network output".into())?;
                    ncw_to_nwc(a, n, c, t, &mut h.rows_out);
                    if h.act.activation.needs_preactivation() {
                        fit_len(&mut h.rows_z, a.len(), || "the network output".into())?;
                        h.rows_z.copy_from_slice(&h.rows_out);
                    }
                    h.act.forward(&mut h.rows_out, c, None);
                    nwc_to_ncw(&h.rows_out, n, c, t, &mut h.out);
                }
            }
        }
        if train {
            self.reserve_backward_buffers()?;
        }
        Ok(())
    }

    /// Sizes the delta slots and scratch for the batch of the last forward pass, so that the
    /// backward pass allocates nothing (buffers only grow).
    fn reserve_backward_buffers(&mut self) -> Result<(), NnError> {
        for j in 0..self.nodes.len() {
            let node = &self.nodes[j];
            let len = self.rows[j] * node.shape.width(self.steps[j]);
            if node.slot != usize::MAX {
                memory::try_grow(&mut self.slots[node.slot], len, T::zero(), || {
                    format!("the gradient buffers of {}", node.who)
                })?;
            }
            if !node.backprop {
                continue;
            }
            while self.scratch.len() < node.sources.len().max(1) {
                self.scratch.push(Vec::new());
            }
            for (i, s) in node.sources.iter().enumerate() {
                let n = match *s {
                    Src::Input(_) => continue,
                    Src::Node(m) => self.acts[m].len(),
                };
                memory::try_grow(&mut self.scratch[i], n, T::zero(), || {
                    format!("the gradient buffers of {}", node.who)
                })?;
            }
        }
        Ok(())
    }

    /// Output `k` of the last forward pass (activated, `rows × nOut`).
    pub fn output(&self, k: usize) -> &[T] {
        &self.heads[k].out
    }

    /// Node `j`'s activation of the last forward pass (before a head's activation).
    pub fn activation(&self, j: usize) -> &[T] {
        &self.acts[j]
    }

    /// Output `k`'s loss per row of its loss view after `forward`: one value per example, or per
    /// (example, step) for a sequence output.
    fn head_losses(&self, k: usize, labels: &[T], mask: Option<&LabelsMask<'_, T>>) -> Vec<f64> {
        let h = &self.heads[k];
        let w = h.weights.as_deref();
        match h.seq {
            None => {
                let cols = self.nodes[h.node].shape.len();
                let mut per = vec![0.0f64; self.rows[h.node]];
                h.loss.score_examples(&h.out, labels, mask, w, cols, &mut per);
                per
            }
            Some(c) => {
                let (n, t) = (self.rows[h.node], self.steps[h.node]);
                let mut rows_labels = vec![T::zero(); n * c * t];
                ncw_to_nwc(labels, n, c, t, &mut rows_labels);
                let mut scratch = Vec::new();
                let m = step_rows_mask(mask, n, c, t, &mut scratch);
                let mut per = vec![0.0f64; n * t];
                h.loss
                    .score_examples(&h.rows_out, &rows_labels, m.as_ref(), w, c, &mut per);
                per
            }
        }
    }

    /// The data term of the score after `forward`: each output's loss sum (over examples, and
    /// over unmasked steps for a sequence output), divided by the minibatch size when
    /// `miniBatch`, summed over outputs (regularization not included).
    pub fn data_score(&self, labels: &[&[T]], masks: &[Option<LabelsMask<'_, T>>]) -> f64 {
        let mut total: Option<f64> = None;
        for (k, y) in labels.iter().enumerate().take(self.heads.len()) {
            let data: f64 = self
                .head_losses(k, y, masks.get(k).and_then(Option::as_ref))
                .iter()
                .sum();
            let term = if self.mini_batch {
                data / self.rows[self.heads[k].node] as f64
            } else {
                data
            };
            // The first output's term as it is (no `0.0 +`, which would turn -0.0 into 0.0).
            total = Some(total.map_or(term, |t| t + term));
        }
        total.unwrap_or(0.0)
    }

    /// Per-example loss summed over outputs (and over the steps of sequence outputs) after
    /// `forward` (not divided by N).
    pub fn score_examples(&self, labels: &[&[T]], masks: &[Option<LabelsMask<'_, T>>]) -> Vec<f64> {
        let mut per = vec![0.0f64; self.rows_in];
        for (k, y) in labels.iter().enumerate().take(self.heads.len()) {
            let losses = self.head_losses(k, y, masks.get(k).and_then(Option::as_ref));
            let steps = losses.len() / self.rows_in.max(1);
            for (p, ex) in per.iter_mut().zip(losses.chunks(steps.max(1))) {
                if k == 0 && steps == 1 {
                    *p = ex[0];
                } else {
                    *p += ex.iter().sum::<f64>();
                }
            }
        }
        per
    }

    /// Backward pass after `forward` on the same inputs: the raw data gradient (no
    /// regularization) into `grads()`.
    pub fn backward(
        &mut self,
        inputs: &[&[T]],
        masks: &[Option<Mask<'_, T>>],
        labels: &[&[T]],
        label_masks: &[Option<LabelsMask<'_, T>>],
    ) {
        // miniBatch=true: the score is a mean over examples, so is the gradient; with
        // miniBatch=false both are sums (the reference's meaning of the flag).
        let scale = if self.mini_batch {
            T::one() / T::of(self.rows_in as f64)
        } else {
            T::one()
        };
        // Size the delta slots for this batch (they only grow).
        for j in 0..self.nodes.len() {
            let s = self.nodes[j].slot;
            if s != usize::MAX {
                grow(
                    &mut self.slots[s],
                    self.rows[j] * self.nodes[j].shape.width(self.steps[j]),
                );
            }
        }
        self.written.fill(false);
        for (k, h) in self.heads.iter_mut().enumerate() {
            let j = h.node;
            let mask = label_masks.get(k).and_then(Option::as_ref);
            let needs_z = h.act.activation.needs_preactivation();
            match h.seq {
                None => {
                    let cols = self.nodes[j].shape.len();
                    let len = self.rows[j] * cols;
                    h.loss.delta(
                        h.act.activation,
                        needs_z.then(|| &self.acts[j][..]),
                        &h.out,
                        labels[k],
                        mask,
                        h.weights.as_deref(),
                        cols,
                        scale,
                        &mut self.slots[self.nodes[j].slot][..len],
                    );
                }
                Some(c) => {
                    // The loss per step on N·T rows, then the delta back to NCW.
                    let (n, t) = (self.rows[j], self.steps[j]);
                    let len = n * c * t;
                    grow(&mut h.rows_labels, len);
                    grow(&mut h.rows_delta, len);
                    ncw_to_nwc(labels[k], n, c, t, &mut h.rows_labels[..len]);
                    let m = step_rows_mask(mask, n, c, t, &mut h.rows_mask);
                    h.loss.delta(
                        h.act.activation,
                        needs_z.then(|| &h.rows_z[..len]),
                        &h.rows_out[..len],
                        &h.rows_labels[..len],
                        m.as_ref(),
                        h.weights.as_deref(),
                        c,
                        scale,
                        &mut h.rows_delta[..len],
                    );
                    nwc_to_ncw(
                        &h.rows_delta[..len],
                        n,
                        c,
                        t,
                        &mut self.slots[self.nodes[j].slot][..len],
                    );
                }
            }
            self.written[j] = true;
        }
        for j in (0..self.nodes.len()).rev() {
            self.backward_node(j, inputs, masks);
        }
    }

    fn backward_node(&mut self, j: usize, inputs: &[&[T]], masks: &[Option<Mask<'_, T>>]) {
        let in_steps = match self.nodes[j].sources[0] {
            Src::Input(k) => self.steps_in[k],
            Src::Node(m) => self.steps[m],
        };
        let mask = self
            .input_mask_of(j)
            .and_then(|k| masks.get(k).copied().flatten())
            .filter(|m| m.cols == 1 || m.cols == in_steps);
        let backprop_steps = self.backprop_steps;
        let Executor {
            nodes,
            acts,
            params,
            grads,
            slots,
            written,
            scratch,
            rows,
            rows_in,
            steps,
            ..
        } = self;
        let (before, rest) = nodes.split_at_mut(j);
        let node = &mut rest[0];
        if !node.backprop {
            if let Op::Layer(l) = &node.op {
                grads[l.range.clone()].fill(T::zero());
            }
            return;
        }
        let in_rows = match node.sources[0] {
            Src::Input(_) => *rows_in,
            Src::Node(m) => rows[m],
        };
        let out_len = rows[j] * node.shape.width(steps[j]);
        // Which sources receive a gradient, and their slots.
        let wants: Vec<Option<usize>> = node
            .sources
            .iter()
            .map(|s| match *s {
                Src::Node(m) if before[m].backprop => Some(m),
                _ => None,
            })
            .collect();
        let my_slot = node.slot;
        match &mut node.op {
            Op::Layer(l) => {
                let src = node.sources[0];
                let input: &[T] = if l.drop.enabled() {
                    &l.dropped
                } else {
                    Self::input_of(inputs, acts, src)
                };
                let mut batch = Batch::with_steps(in_rows, in_steps);
                batch.mask = mask;
                batch.backprop_steps = backprop_steps;
                let r = l.range.clone();
                match wants[0] {
                    Some(m) => {
                        let in_len = in_rows * l.shapes.input.width(in_steps);
                        let first = !written[m];
                        let (mine, theirs) = two_mut(slots, my_slot, before[m].slot);
                        if scratch.is_empty() {
                            scratch.push(Vec::new());
                        }
                        let target: &mut [T] = if first {
                            &mut theirs[..in_len]
                        } else {
                            grow(&mut scratch[0], in_len);
                            &mut scratch[0][..in_len]
                        };
                        l.layer.backward(
                            &params[r.clone()],
                            input,
                            &acts[j],
                            &batch,
                            &mut mine[..out_len],
                            &mut grads[r],
                            Some(target),
                        );
                        let target: &mut [T] = if first {
                            &mut theirs[..in_len]
                        } else {
                            &mut scratch[0][..in_len]
                        };
                        l.drop.backward_in_place(target);
                        if !first {
                            crate::vertices::add_into(&mut theirs[..in_len], &scratch[0][..in_len]);
                        }
                        written[m] = true;
                    }
                    None => {
                        l.layer.backward(
                            &params[r.clone()],
                            input,
                            &acts[j],
                            &batch,
                            &mut slots[my_slot][..out_len],
                            &mut grads[r],
                            None,
                        );
                    }
                }
            }
            Op::Vertex(v) => {
                let ins: Vec<&[T]> = node
                    .sources
                    .iter()
                    .map(|&s| Self::input_of(inputs, acts, s))
                    .collect();
                while scratch.len() < ins.len() {
                    scratch.push(Vec::new());
                }
                for (i, x) in ins.iter().enumerate() {
                    if wants[i].is_some() {
                        grow(&mut scratch[i], x.len());
                    }
                }
                {
                    let mut outs: Vec<Option<&mut [T]>> = scratch
                        .iter_mut()
                        .zip(&ins)
                        .zip(&wants)
                        .map(|((s, x), w)| w.map(|_| &mut s[..x.len()]))
                        .collect();
                    v.backward(
                        &ins,
                        &acts[j],
                        in_rows,
                        &slots[my_slot][..out_len],
                        &mut outs,
                    );
                }
                for (i, w) in wants.iter().enumerate() {
                    let Some(m) = *w else { continue };
                    let len = ins[i].len();
                    let dst = &mut slots[before[m].slot][..len];
                    if written[m] {
                        crate::vertices::add_into(dst, &scratch[i][..len]);
                    } else {
                        dst.copy_from_slice(&scratch[i][..len]);
                        written[m] = true;
                    }
                }
            }
        }
    }

    // ---- recurrent state ----------------------------------------------------------------------

    /// Forgets every layer's state of `mode`.
    pub fn clear_state(&mut self, mode: StateMode) {
        for node in &mut self.nodes {
            if let Op::Layer(l) = &mut node.op {
                l.layer.clear_state(mode);
            }
        }
    }

    /// The layer of node `j`, mutably (recurrent state).
    pub fn layer_mut(&mut self, j: usize) -> Option<&mut dyn Layer<T>> {
        match &mut self.nodes.get_mut(j)?.op {
            Op::Layer(l) => Some(l.layer.as_mut()),
            Op::Vertex(_) => None,
        }
    }

    /// Truncated BPTT: the next backward passes cover only the last `steps` time steps of each
    /// recurrent layer (`usize::MAX`: all).
    pub fn set_backprop_steps(&mut self, steps: usize) {
        self.backprop_steps = steps;
    }

    // ---- training steps after backward ------------------------------------------------------

    /// Adds the L1/L2 gradient to `grads()`.
    pub fn add_regularization_gradient(&mut self) {
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
    }

    /// After `backward`: gradient normalization, L1/L2, updater, weight decay and
    /// `params -= update` (the updater's pass does the last three), untrained blocks (running
    /// statistics, frozen) handled; `grads()` then holds the update that was applied.
    pub fn fit_step(&mut self, iteration: u64, epoch: u64) {
        regularization::normalize_gradients(&self.blocks, &mut self.grads);
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
        if regularization::decay_coefficients(&self.blocks, iteration, epoch, &mut self.decay) {
            // the decay reads each weight before the same pass subtracts its update
            self.optimizer.step_with_decay(
                &mut self.params,
                &mut self.grads,
                &self.decay,
                true,
                iteration,
                epoch,
            );
        } else {
            self.optimizer
                .step_and_apply(&mut self.params, &mut self.grads, iteration, epoch);
        }
        regularization::apply_untrained(&self.blocks, &mut self.params, &mut self.grads);
    }

    /// After `backward`: gradient normalization, L1/L2, updater, weight decay; `grads()` then
    /// holds the update `params -= update` would apply. The parameters are not touched.
    pub fn update_step(&mut self, iteration: u64, epoch: u64) {
        regularization::normalize_gradients(&self.blocks, &mut self.grads);
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
        if regularization::decay_coefficients(&self.blocks, iteration, epoch, &mut self.decay) {
            self.optimizer.step_with_decay(
                &mut self.params,
                &mut self.grads,
                &self.decay,
                false,
                iteration,
                epoch,
            );
        } else {
            self.optimizer.step(&mut self.grads, iteration, epoch);
        }
        regularization::zero_frozen(&self.blocks, &mut self.grads);
    }

    /// Makes `grads()` the update that led from `before` to the current parameters
    /// (`before − params`) and restores `before`: several steps taken as one update.
    pub fn take_update_from(&mut self, before: &[T]) {
        for ((g, p), &b) in self.grads.iter_mut().zip(self.params.iter_mut()).zip(before) {
            *g = b - *p;
            *p = b;
        }
    }

    /// Buffer addresses, for the allocation tests.
    #[cfg(test)]
    pub fn buffer_ptrs(&self) -> Vec<*const T> {
        let mut v: Vec<*const T> = self.acts.iter().map(|a| a.as_ptr()).collect();
        v.extend(self.slots.iter().map(|s| s.as_ptr()));
        v.extend(self.heads.iter().map(|h| h.out.as_ptr()));
        v.push(self.params.as_ptr());
        v
    }
}
