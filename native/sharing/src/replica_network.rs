//! The network a gradient-sharing replica trains: a layer chain (`MultiLayerNetwork`) or a graph
//! (`ComputationGraph`), behind the few operations the replica needs. Both are the same executor;
//! they differ only in how a minibatch is given.

use ferrodl_nn::computation_graph::MaskArg;
use ferrodl_nn::{
    ComputationGraph, ComputationGraphConfiguration, MultiLayerConfiguration, MultiLayerNetwork,
    NnError, ParamInit,
};

/// One minibatch, in the form of the network it is for.
pub enum ReplicaBatch<'a> {
    /// Features `rows × nIn` (`rows × C·T` for sequences), labels `rows × nOut`, optional
    /// features mask (`[rows, T]`) and labels mask (values, columns).
    Chain {
        features: &'a [f32],
        labels: &'a [f32],
        rows: usize,
        features_mask: MaskArg<'a, f32>,
        labels_mask: MaskArg<'a, f32>,
    },
    /// One array per network input and output; masks per input/output (empty: none).
    Graph {
        inputs: &'a [&'a [f32]],
        labels: &'a [&'a [f32]],
        rows: usize,
        feature_masks: &'a [MaskArg<'a, f32>],
        label_masks: &'a [MaskArg<'a, f32>],
    },
}

impl ReplicaBatch<'_> {
    pub fn rows(&self) -> usize {
        match self {
            ReplicaBatch::Chain { rows, .. } | ReplicaBatch::Graph { rows, .. } => *rows,
        }
    }
}

/// A replica's network.
pub enum ReplicaNetwork {
    Chain(MultiLayerNetwork<f32>),
    Graph(ComputationGraph<f32>),
}

macro_rules! each {
    ($self:expr, $net:ident => $e:expr) => {
        match $self {
            ReplicaNetwork::Chain($net) => $e,
            ReplicaNetwork::Graph($net) => $e,
        }
    };
}

impl ReplicaNetwork {
    /// Builds the network from its configuration JSON: a `ComputationGraphConfiguration` when
    /// `graph`, else a `MultiLayerConfiguration` (docs/ARCHITECTURE.md §2).
    /// Builds the configured network with zero parameters (a worker takes the driver's at
    /// connect: drawing seeded weights first cost 8–10 ms more per MNIST MLP replica).
    pub fn from_json(json: &str, graph: bool) -> Result<Self, NnError> {
        Ok(if graph {
            ReplicaNetwork::Graph(ComputationGraph::with_init(
                ComputationGraphConfiguration::from_json(json)?,
                ParamInit::Zeros,
            )?)
        } else {
            ReplicaNetwork::Chain(MultiLayerNetwork::with_init(
                MultiLayerConfiguration::from_json(json)?,
                ParamInit::Zeros,
            )?)
        })
    }

    pub fn num_params(&self) -> usize {
        each!(self, n => n.num_params())
    }

    pub fn params(&self) -> &[f32] {
        each!(self, n => n.params())
    }

    pub fn params_mut(&mut self) -> &mut [f32] {
        each!(self, n => n.params_mut())
    }

    pub fn set_params(&mut self, p: &[f32]) -> Result<(), NnError> {
        each!(self, n => n.set_params(p))
    }

    pub fn updater_state(&self) -> &[f32] {
        each!(self, n => n.updater_state())
    }

    pub fn set_updater_state(&mut self, s: &[f32]) -> Result<(), NnError> {
        each!(self, n => n.set_updater_state(s))
    }

    /// The update of the last [`compute_update`](Self::compute_update) (layout of `params()`).
    pub fn update(&self) -> &[f32] {
        each!(self, n => n.update())
    }

    pub fn iteration_count(&self) -> u64 {
        each!(self, n => n.iteration_count())
    }

    pub fn epoch_count(&self) -> u64 {
        each!(self, n => n.epoch_count())
    }

    pub fn set_counters(&mut self, iteration: u64, epoch: u64) {
        each!(self, n => n.set_counters(iteration, epoch))
    }

    /// A training iteration that leaves the parameters alone (see
    /// `MultiLayerNetwork::compute_update`); returns the score.
    pub fn compute_update(&mut self, batch: &ReplicaBatch<'_>) -> Result<f64, NnError> {
        match (self, batch) {
            (
                ReplicaNetwork::Chain(n),
                ReplicaBatch::Chain {
                    features,
                    labels,
                    rows,
                    features_mask,
                    labels_mask,
                },
            ) => n.compute_update_masked(features, labels, *rows, *features_mask, *labels_mask),
            (
                ReplicaNetwork::Graph(g),
                ReplicaBatch::Graph {
                    inputs,
                    labels,
                    rows,
                    feature_masks,
                    label_masks,
                },
            ) => g.compute_update(inputs, labels, *rows, feature_masks, label_masks),
            (ReplicaNetwork::Chain(_), ReplicaBatch::Graph { .. }) => Err(NnError::Shape(
                "this worker trains a MultiLayerNetwork: give one features and one labels matrix, \
                 not graph arrays"
                    .into(),
            )),
            (ReplicaNetwork::Graph(_), ReplicaBatch::Chain { .. }) => Err(NnError::Shape(
                "this worker trains a ComputationGraph: give one array per network input and output"
                    .into(),
            )),
        }
    }
}
