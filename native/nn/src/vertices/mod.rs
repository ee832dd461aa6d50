//! Graph vertices: the nodes of a `ComputationGraph` that are not layers (merge, element-wise
//! arithmetic, subsets, stacking, scaling, distances, reshapes).
//!
//! Each file holds one vertex family: its configuration (the reference's names and defaults),
//! its shape rule (input shapes -> output shape, or a message saying what is wrong) and its
//! forward/backward computation. [`VertexConfig`] is the registry: adding a vertex is one new
//! file plus one variant there.
//!
//! Activations are row-major with one example per row, as everywhere in the engine; images are
//! `C·H·W` per row (NCHW) and sequences `C·L` (NCW). A vertex never owns parameters.

mod elementwise;
mod l2;
mod merge;
mod per_step;
mod reshape;
mod scale;
mod stack;
mod subset;
mod time_series;

pub use elementwise::{ElementWiseOp, ElementWiseVertexConfig};
pub use l2::{L2NormalizeVertexConfig, L2VertexConfig};
pub use merge::MergeVertexConfig;
pub(crate) use per_step::PerStepVertex;
pub use reshape::{PreProcessorConfig, PreprocessorVertexConfig, ReshapeVertexConfig};
pub use scale::{ScaleVertexConfig, ShiftVertexConfig};
pub use stack::{StackVertexConfig, UnstackVertexConfig};
pub use subset::SubsetVertexConfig;
pub use time_series::{Aux, DuplicateToTimeSeriesVertexConfig, LastTimeStepVertexConfig};

use crate::config::{LayerConfig, Shape};
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;

/// A computation on one or more input activations with no parameters.
///
/// `rows` is the number of rows of each input (all inputs of a vertex have the same);
/// [`output_rows`](Self::output_rows) says how many the output has.
pub trait Vertex<T: Scalar>: Send + Debug {
    /// Output rows for `rows` input rows (stacking multiplies them, unstacking divides).
    fn output_rows(&self, rows: usize) -> usize {
        rows
    }

    /// Takes sequences of any length (the default takes only the configured length of a
    /// sequence input).
    fn any_length(&self) -> bool {
        false
    }

    /// Called before each forward pass with the rows and time steps of the inputs and, for a
    /// vertex tied to a network input by name, that input's steps and feature mask.
    fn prepare(&mut self, _rows: usize, _in_steps: usize, _aux: Option<Aux<'_, T>>) {}

    /// The output's time steps when they are not the input's (`None`: the default rule).
    fn output_steps(&self, _in_steps: usize) -> Option<usize> {
        None
    }

    /// Refuses a minibatch the vertex cannot take (unstacking needs a multiple of the stack size).
    fn check_rows(&self, _rows: usize) -> Result<(), String> {
        Ok(())
    }

    /// `output = f(inputs)`; `output`'s old contents are ignored.
    fn forward(&mut self, inputs: &[&[T]], rows: usize, output: &mut [T]);

    /// Writes `dL/d(input j)` into `grads[j]` (overwriting it) for every `Some` entry, given
    /// `delta = dL/d(output)` after a [`forward`](Self::forward) on the same inputs.
    fn backward(
        &mut self,
        inputs: &[&[T]],
        output: &[T],
        rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    );
}

/// How a vertex changes the number of rows between input and output, as a reduced fraction
/// `num / den` of the network's minibatch (1/1 for almost everything).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowFactor {
    pub num: usize,
    pub den: usize,
}

impl RowFactor {
    pub const ONE: RowFactor = RowFactor { num: 1, den: 1 };

    pub fn times(self, num: usize, den: usize) -> RowFactor {
        fn gcd(a: usize, b: usize) -> usize {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        let (n, d) = (self.num * num, self.den * den);
        let g = gcd(n, d).max(1);
        RowFactor {
            num: n / g,
            den: d / g,
        }
    }
}

impl std::fmt::Display for RowFactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.den == 1 {
            write!(f, "{}× the minibatch", self.num)
        } else {
            write!(f, "{}/{} of the minibatch", self.num, self.den)
        }
    }
}

/// A `LayerVertex`: a layer, with an optional preprocessor applied to its input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LayerVertexConfig {
    pub layer: Box<LayerConfig>,
    #[serde(default)]
    pub pre_processor: Option<PreProcessorConfig>,
}

/// A `FrozenVertex`: the wrapped vertex's parameters (if it is a layer) never change and it runs
/// in inference mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FrozenVertexConfig {
    pub vertex: Box<VertexConfig>,
}

/// One vertex object of the graph configuration JSON, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum VertexConfig {
    LayerVertex(LayerVertexConfig),
    MergeVertex(MergeVertexConfig),
    ElementWiseVertex(ElementWiseVertexConfig),
    SubsetVertex(SubsetVertexConfig),
    StackVertex(StackVertexConfig),
    UnstackVertex(UnstackVertexConfig),
    ScaleVertex(ScaleVertexConfig),
    ShiftVertex(ShiftVertexConfig),
    L2Vertex(L2VertexConfig),
    L2NormalizeVertex(L2NormalizeVertexConfig),
    PreprocessorVertex(PreprocessorVertexConfig),
    ReshapeVertex(ReshapeVertexConfig),
    FrozenVertex(FrozenVertexConfig),
    LastTimeStepVertex(LastTimeStepVertexConfig),
    DuplicateToTimeSeriesVertex(DuplicateToTimeSeriesVertexConfig),
}

impl VertexConfig {
    /// The JSON `type` name.
    pub fn type_name(&self) -> &'static str {
        match self {
            VertexConfig::LayerVertex(_) => "LayerVertex",
            VertexConfig::MergeVertex(_) => "MergeVertex",
            VertexConfig::LastTimeStepVertex(_) => "LastTimeStepVertex",
            VertexConfig::DuplicateToTimeSeriesVertex(_) => "DuplicateToTimeSeriesVertex",
            VertexConfig::ElementWiseVertex(_) => "ElementWiseVertex",
            VertexConfig::SubsetVertex(_) => "SubsetVertex",
            VertexConfig::StackVertex(_) => "StackVertex",
            VertexConfig::UnstackVertex(_) => "UnstackVertex",
            VertexConfig::ScaleVertex(_) => "ScaleVertex",
            VertexConfig::ShiftVertex(_) => "ShiftVertex",
            VertexConfig::L2Vertex(_) => "L2Vertex",
            VertexConfig::L2NormalizeVertex(_) => "L2NormalizeVertex",
            VertexConfig::PreprocessorVertex(_) => "PreprocessorVertex",
            VertexConfig::ReshapeVertex(_) => "ReshapeVertex",
            VertexConfig::FrozenVertex(_) => "FrozenVertex",
        }
    }

    /// The vertex without its FrozenVertex wrapper(s).
    pub fn unfrozen(&self) -> &VertexConfig {
        match self {
            VertexConfig::FrozenVertex(f) => f.vertex.unfrozen(),
            other => other,
        }
    }

    pub fn unfrozen_mut(&mut self) -> &mut VertexConfig {
        match self {
            VertexConfig::FrozenVertex(f) => f.vertex.unfrozen_mut(),
            other => other,
        }
    }

    pub fn is_frozen(&self) -> bool {
        matches!(self, VertexConfig::FrozenVertex(_))
    }

    /// The layer of a (possibly frozen) LayerVertex.
    pub fn layer(&self) -> Option<&LayerConfig> {
        match self.unfrozen() {
            VertexConfig::LayerVertex(l) => Some(&l.layer),
            _ => None,
        }
    }

    /// The network input this vertex reads by name, if any.
    pub fn aux_input_name(&self) -> Option<&str> {
        match self {
            VertexConfig::LastTimeStepVertex(c) => c.mask_array_input_name.as_deref(),
            VertexConfig::DuplicateToTimeSeriesVertex(c) => Some(&c.input_name),
            _ => None,
        }
    }

    /// How the vertex passes feature masks on: its first input's (`Keep`), none (`Drop`: the
    /// last step), or its named network input's (`FromAux`: a vector repeated over time).
    pub fn mask_rule(&self) -> crate::batch::MaskRule {
        match self.unfrozen() {
            VertexConfig::LastTimeStepVertex(_) => crate::batch::MaskRule::Drop,
            VertexConfig::DuplicateToTimeSeriesVertex(_) => crate::batch::MaskRule::FromAux,
            _ => crate::batch::MaskRule::Keep,
        }
    }

    /// `(min, max)` number of inputs the vertex takes.
    pub fn input_count(&self) -> (usize, usize) {
        match self.unfrozen() {
            VertexConfig::LayerVertex(_)
            | VertexConfig::SubsetVertex(_)
            | VertexConfig::UnstackVertex(_)
            | VertexConfig::ScaleVertex(_)
            | VertexConfig::ShiftVertex(_)
            | VertexConfig::L2NormalizeVertex(_)
            | VertexConfig::PreprocessorVertex(_)
            | VertexConfig::LastTimeStepVertex(_)
            | VertexConfig::DuplicateToTimeSeriesVertex(_)
            | VertexConfig::ReshapeVertex(_) => (1, 1),
            VertexConfig::L2Vertex(_) => (2, 2),
            VertexConfig::ElementWiseVertex(c) if c.op == ElementWiseOp::Subtract => (2, 2),
            VertexConfig::ElementWiseVertex(_)
            | VertexConfig::MergeVertex(_)
            | VertexConfig::StackVertex(_) => (1, usize::MAX),
            VertexConfig::FrozenVertex(_) => unreachable!("unfrozen() removed the wrapper"),
        }
    }

    /// How many rows the output has relative to the inputs' (`n_inputs` inputs).
    pub fn row_factor(&self, n_inputs: usize) -> RowFactor {
        match self.unfrozen() {
            VertexConfig::StackVertex(_) => RowFactor::ONE.times(n_inputs, 1),
            VertexConfig::UnstackVertex(c) => RowFactor::ONE.times(1, c.stack_size.max(1)),
            _ => RowFactor::ONE,
        }
    }

    /// The output shape of a non-layer vertex for its input shapes (a LayerVertex's shape rule is
    /// its layer's); the error says what is wrong, without naming the vertex.
    pub fn output_shape(&self, inputs: &[Shape], aux: Option<Shape>) -> Result<Shape, String> {
        match self.unfrozen() {
            VertexConfig::LastTimeStepVertex(c) => c.output_shape(inputs[0]),
            VertexConfig::DuplicateToTimeSeriesVertex(c) => c.output_shape(inputs[0], aux),
            VertexConfig::LayerVertex(_) => {
                unreachable!("layer vertices are sized by their layer's shape rule")
            }
            VertexConfig::MergeVertex(c) => c.output_shape(inputs),
            VertexConfig::ElementWiseVertex(c) => c.output_shape(inputs),
            VertexConfig::SubsetVertex(c) => c.output_shape(inputs[0]),
            VertexConfig::StackVertex(c) => c.output_shape(inputs),
            VertexConfig::UnstackVertex(c) => c.output_shape(inputs[0]),
            VertexConfig::ScaleVertex(c) => c.output_shape(inputs[0]),
            VertexConfig::ShiftVertex(c) => c.output_shape(inputs[0]),
            VertexConfig::L2Vertex(c) => c.output_shape(inputs),
            VertexConfig::L2NormalizeVertex(c) => c.output_shape(inputs[0]),
            VertexConfig::PreprocessorVertex(c) => c.pre_processor.output_shape(inputs[0]),
            VertexConfig::ReshapeVertex(c) => c.output_shape(inputs[0]),
            VertexConfig::FrozenVertex(_) => unreachable!("unfrozen() removed the wrapper"),
        }
    }

    /// Builds the computation of a non-layer vertex for validated shapes.
    pub fn build<T: Scalar>(&self, inputs: &[Shape]) -> Box<dyn Vertex<T>> {
        match self.unfrozen() {
            VertexConfig::LayerVertex(_) => unreachable!("layer vertices are built as layers"),
            VertexConfig::MergeVertex(_) => Box::new(merge::Merge::new(inputs)),
            VertexConfig::LastTimeStepVertex(_) => Box::new(time_series::LastStep::new(inputs[0])),
            VertexConfig::DuplicateToTimeSeriesVertex(_) => {
                Box::new(time_series::Duplicate::default())
            }
            VertexConfig::ElementWiseVertex(c) => Box::new(elementwise::ElementWise::new(c.op)),
            VertexConfig::SubsetVertex(c) => Box::new(subset::Subset::new(c, inputs[0])),
            VertexConfig::StackVertex(_) => Box::new(stack::Stack { n: inputs.len() }),
            VertexConfig::UnstackVertex(c) => Box::new(stack::Unstack::new(c)),
            VertexConfig::ScaleVertex(c) => Box::new(scale::Affine::scale(c.scale_factor)),
            VertexConfig::ShiftVertex(c) => Box::new(scale::Affine::shift(c.shift_factor)),
            VertexConfig::L2Vertex(c) => Box::new(l2::L2Distance::new(c.eps, inputs[0].len())),
            VertexConfig::L2NormalizeVertex(c) => Box::new(l2::L2Normalize::new(c, inputs[0])),
            VertexConfig::PreprocessorVertex(_) | VertexConfig::ReshapeVertex(_) => {
                Box::new(reshape::Reshape)
            }
            VertexConfig::FrozenVertex(_) => unreachable!("unfrozen() removed the wrapper"),
        }
    }
}

/// `out[i] += src[i]`.
pub(crate) fn add_into<T: Scalar>(out: &mut [T], src: &[T]) {
    for (o, &s) in out.iter_mut().zip(src) {
        *o = *o + s;
    }
}
