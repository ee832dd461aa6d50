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
use crate::layers::{build_layer, Ctx, Layer};
use crate::loss::LabelsMask;
use crate::regularization::{self, ParamBlock};
use crate::vertices::{Vertex, VertexConfig};
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
    },
}

/// The activation and loss applied to an output layer's result.
#[derive(Debug)]
struct Head<T> {
    node: usize,
    act: ActivationCache<T>,
    loss: LossFunction,
    weights: Option<Vec<f64>>,
    /// The activated output of the last forward pass.
    out: Vec<T>,
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
    /// Delta slot of this node (module docs); `usize::MAX` when it never receives a delta.
    slot: usize,
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
    mini_batch: bool,
    /// Output of each node for the last forward pass, and its row count.
    acts: Vec<Vec<T>>,
    rows: Vec<usize>,
    /// Rows of the network inputs in the last forward pass.
    rows_in: usize,
    /// `dL/d(activation)` slots, and whether a node's delta has been written in this backward.
    slots: Vec<Vec<T>>,
    written: Vec<bool>,
    /// Scratch: a further consumer's contribution, and vertex input gradients (one per input).
    scratch: Vec<Vec<T>>,
    train_rng: Rng,
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

impl<T: Scalar> Executor<T> {
    /// Builds the nodes (in the given order, which must be topological), lays out and
    /// initialises the parameters from `seed` node by node, and plans masks and buffers.
    /// `outputs` are the nodes (output or loss layers) that get a loss head, in order.
    pub fn new(
        defs: Vec<NodeDef<'_>>,
        input_shapes: Vec<Shape>,
        outputs: &[usize],
        seed: i64,
        mini_batch: bool,
    ) -> Result<Self, NnError> {
        let n = defs.len();
        let mut nodes: Vec<Node<T>> = Vec::with_capacity(n);
        let mut blocks = Vec::new();
        let mut heads = Vec::with_capacity(outputs.len());
        let mut offset: usize = 0;
        for (j, def) in defs.into_iter().enumerate() {
            let (shape, op) = match def.kind {
                NodeDefKind::Layer {
                    conf,
                    shapes,
                    frozen,
                } => {
                    let layer = build_layer::<T>(conf, shapes).map_err(|e| match e {
                        // A refused allocation stays a memory error (NativeMemoryException).
                        NnError::Memory(m) => NnError::Memory(m),
                        e => NnError::InvalidConfig(format!("{}: {e}", def.who)),
                    })?;
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
                        let (act, loss, weights) = match conf.unfrozen() {
                            LayerConfig::OutputLayer(c) => {
                                (c.activation, c.loss_function, c.loss_weights.clone())
                            }
                            LayerConfig::LossLayer(c) => {
                                (c.activation, c.loss_function, c.loss_weights.clone())
                            }
                            other => {
                                return Err(NnError::InvalidConfig(format!(
                                    "{}: an output must be an OutputLayer or LossLayer, not a {}",
                                    def.who,
                                    other.type_name()
                                )))
                            }
                        };
                        heads.push(Head {
                            node: j,
                            act: ActivationCache::new(act),
                            loss,
                            weights,
                            out: Vec::new(),
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
                } => (output, Op::Vertex(conf.build::<T>(&inputs))),
            };
            nodes.push(Node {
                key: def.key,
                who: def.who,
                sources: def.sources,
                shape,
                op,
                backprop: false,
                mask_from: None,
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
        let mut params = memory::try_filled(offset, T::zero(), || "the parameters".into())?;
        let grads = memory::try_filled(offset, T::zero(), || "the gradients".into())?;
        let mut rng = Rng::new(seed as u64);
        for node in &nodes {
            if let Op::Layer(l) = &node.op {
                l.layer.init_params(&mut params[l.range.clone()], &mut rng);
            }
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
            blocks,
            heads,
            mini_batch,
            acts: vec![Vec::new(); n],
            rows: vec![0; n],
            rows_in: 0,
            slots: Vec::new(),
            written: vec![false; n],
            scratch: Vec::new(),
            train_rng: Rng::new((seed as u64) ^ TRAIN_RNG_STREAM),
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
                Op::Vertex(_) => MaskRule::Keep,
            };
            let from = self.nodes[j].sources.iter().find_map(|s| match *s {
                Src::Input(k) => Some(k),
                Src::Node(m) => self.nodes[m].mask_from,
            });
            // The node's own input mask is what its layer sees; `mask_from` is what it passes on.
            self.nodes[j].mask_from = if rule == MaskRule::Keep { from } else { None };
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

    pub fn has_weight_decay(&self) -> bool {
        self.blocks.iter().any(|b| b.weight_decay != 0.0)
    }

    /// `Σ l1·|w| + 0.5·l2·w²` over all parameters.
    pub fn regularization_score(&self) -> f64 {
        regularization::score(&self.blocks, &self.params)
    }

    /// Checks values the layers reading network inputs directly cannot take (embedding indices);
    /// layers reading other nodes are checked during the forward pass.
    pub fn check_input_values(&self, inputs: &[&[T]]) -> Result<(), NnError> {
        for node in &self.nodes {
            if let (Op::Layer(l), Src::Input(k)) = (&node.op, node.sources[0]) {
                l.layer
                    .check_input(inputs[k])
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

    /// Forward pass over validated inputs (`rows` examples each). Layer outputs end up in the
    /// nodes' activations, the networks outputs in the heads. `masks` has one optional feature
    /// mask per network input (or is empty).
    pub fn forward(
        &mut self,
        inputs: &[&[T]],
        masks: &[Option<Mask<'_, T>>],
        rows: usize,
        train: bool,
    ) -> Result<(), NnError> {
        self.rows_in = rows;
        for j in 0..self.nodes.len() {
            let in_rows = match self.nodes[j].sources[0] {
                Src::Input(_) => rows,
                Src::Node(m) => self.rows[m],
            };
            let mask = self
                .input_mask_of(j)
                .and_then(|k| masks.get(k).copied().flatten());
            let Executor {
                nodes,
                acts,
                params,
                train_rng,
                rows: node_rows,
                ..
            } = self;
            let (before, rest) = acts.split_at_mut(j);
            let node = &mut nodes[j];
            let out_rows = match &node.op {
                Op::Layer(_) => in_rows,
                Op::Vertex(v) => {
                    v.check_rows(in_rows)
                        .map_err(|m| NnError::InvalidInput(format!("{}: {m}", node.who)))?;
                    v.output_rows(in_rows)
                }
            };
            let out = &mut rest[0];
            let who = &node.who;
            let need = out_rows.checked_mul(node.shape.len()).ok_or_else(|| {
                too_big(|| format!("the activations of {who} for {out_rows} rows"))
            })?;
            fit_len(out, need, || {
                format!("the activations of {who} for a minibatch of {out_rows} examples")
            })?;
            node_rows[j] = out_rows;
            match &mut node.op {
                Op::Layer(l) => {
                    let src = node.sources[0];
                    let mut input: &[T] = Self::input_of(inputs, before, src);
                    if let Src::Node(_) = src {
                        l.layer
                            .check_input(input)
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
                    l.layer.reserve_workspace(in_rows, &node.who)?;
                    let mut batch = Batch::new(in_rows, l.shapes.input);
                    batch.mask = mask;
                    let mut ctx = Ctx {
                        train: train_j,
                        rng: train_rng,
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
            h.out.copy_from_slice(a);
            let cols = self.nodes[h.node].shape.len();
            h.act.forward(&mut h.out, cols, None);
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
            let len = self.rows[j] * node.shape.len();
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

    /// The data term of the score after `forward`: each output's loss sum, divided by the
    /// minibatch size when `miniBatch`, summed over outputs (regularization not included).
    pub fn data_score(&self, labels: &[&[T]], masks: &[Option<LabelsMask<'_, T>>]) -> f64 {
        let mut total: Option<f64> = None;
        for (k, h) in self.heads.iter().enumerate() {
            let cols = self.nodes[h.node].shape.len();
            let data = h.loss.score_sum(
                &h.out,
                labels[k],
                masks.get(k).and_then(Option::as_ref),
                h.weights.as_deref(),
                cols,
            );
            let term = if self.mini_batch {
                data / self.rows[h.node] as f64
            } else {
                data
            };
            // The first output's term as it is (no `0.0 +`, which would turn -0.0 into 0.0).
            total = Some(total.map_or(term, |t| t + term));
        }
        total.unwrap_or(0.0)
    }

    /// Per-example loss summed over outputs after `forward` (not divided by N).
    pub fn score_examples(&self, labels: &[&[T]], masks: &[Option<LabelsMask<'_, T>>]) -> Vec<f64> {
        let mut per = vec![0.0f64; self.rows_in];
        let mut one = vec![0.0f64; self.rows_in];
        for (k, h) in self.heads.iter().enumerate() {
            let cols = self.nodes[h.node].shape.len();
            let target: &mut [f64] = if k == 0 { &mut per } else { &mut one };
            h.loss.score_examples(
                &h.out,
                labels[k],
                masks.get(k).and_then(Option::as_ref),
                h.weights.as_deref(),
                cols,
                target,
            );
            if k > 0 {
                per.iter_mut().zip(&one).for_each(|(p, o)| *p += o);
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
                grow(&mut self.slots[s], self.rows[j] * self.nodes[j].shape.len());
            }
        }
        self.written.fill(false);
        for (k, h) in self.heads.iter().enumerate() {
            let j = h.node;
            let cols = self.nodes[j].shape.len();
            let len = self.rows[j] * cols;
            let z = h
                .act
                .activation
                .needs_preactivation()
                .then(|| &self.acts[j][..]);
            h.loss.delta(
                h.act.activation,
                z,
                &h.out,
                labels[k],
                label_masks.get(k).and_then(Option::as_ref),
                h.weights.as_deref(),
                cols,
                scale,
                &mut self.slots[self.nodes[j].slot][..len],
            );
            self.written[j] = true;
        }
        for j in (0..self.nodes.len()).rev() {
            self.backward_node(j, inputs, masks);
        }
    }

    fn backward_node(&mut self, j: usize, inputs: &[&[T]], masks: &[Option<Mask<'_, T>>]) {
        let mask = self
            .input_mask_of(j)
            .and_then(|k| masks.get(k).copied().flatten());
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
        let out_len = rows[j] * node.shape.len();
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
                let mut batch = Batch::new(in_rows, l.shapes.input);
                batch.mask = mask;
                let r = l.range.clone();
                match wants[0] {
                    Some(m) => {
                        let in_len = in_rows * l.shapes.input.len();
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

    // ---- training steps after backward ------------------------------------------------------

    /// Adds the L1/L2 gradient to `grads()`.
    pub fn add_regularization_gradient(&mut self) {
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
    }

    /// After `backward`: gradient normalization, L1/L2, updater and `params -= update` in one
    /// pass, untrained blocks (running statistics, frozen) handled. No weight decay allowed here.
    pub fn fit_step(&mut self, iteration: u64, epoch: u64) {
        regularization::normalize_gradients(&self.blocks, &mut self.grads);
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
        self.optimizer
            .step_and_apply(&mut self.params, &mut self.grads, iteration, epoch);
        regularization::apply_untrained(&self.blocks, &mut self.params, &mut self.grads);
    }

    /// After `backward`: gradient normalization, L1/L2, updater, weight decay; `grads()` then
    /// holds the update `params -= update` would apply. The parameters are not touched.
    pub fn update_step(&mut self, iteration: u64, epoch: u64) {
        regularization::normalize_gradients(&self.blocks, &mut self.grads);
        regularization::add_gradient(&self.blocks, &self.params, &mut self.grads);
        self.optimizer.step(&mut self.grads, iteration, epoch);
        regularization::finish_update(
            &self.blocks,
            &self.params,
            &mut self.grads,
            iteration,
            epoch,
        );
    }

    /// `params -= grads` (after [`update_step`](Self::update_step)).
    pub fn apply_update(&mut self) {
        for (p, &u) in self.params.iter_mut().zip(&self.grads) {
            *p = *p - u;
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
