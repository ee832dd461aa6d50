//! The vertices between sequences and vectors, each tied to a network input by name:
//! `LastTimeStepVertex` (a sequence's last real step, by the feature mask of
//! `maskArrayInputName`) and `DuplicateToTimeSeriesVertex` (a vector repeated at every step of
//! network input `inputName`'s sequence, which also passes that input's mask on).

use super::Vertex;
use crate::batch::Mask;
use crate::config::Shape;
use crate::layers::last_time_step::{gather_steps, scatter_steps};
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LastTimeStepVertexConfig {
    /// The network input whose feature mask marks the real steps (none: the last step).
    #[serde(default)]
    pub mask_array_input_name: Option<String>,
}

impl LastTimeStepVertexConfig {
    pub fn output_shape(&self, input: Shape) -> Result<Shape, String> {
        match input {
            Shape::Seq { c, .. } => Ok(Shape::Flat(c)),
            other => Err(format!("needs a recurrent input but its input is {other}")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DuplicateToTimeSeriesVertexConfig {
    /// The network input whose time steps (and mask) the output takes.
    pub input_name: String,
}

impl DuplicateToTimeSeriesVertexConfig {
    pub fn output_shape(&self, input: Shape, aux: Option<Shape>) -> Result<Shape, String> {
        let len = match aux {
            Some(Shape::Seq { len, .. }) => len,
            Some(other) => {
                return Err(format!(
                    "network input \"{}\" is {other}, not a sequence to take the length from",
                    self.input_name
                ))
            }
            None => return Err(format!("\"{}\" is not a network input", self.input_name)),
        };
        match input {
            Shape::Flat(c) => Ok(Shape::Seq { c, len }),
            other => Err(format!("needs a feed-forward input but its input is {other}")),
        }
    }
}

/// What a vertex reads from its network input besides its own inputs.
#[derive(Clone, Copy, Debug)]
pub struct Aux<'a, T> {
    pub steps: usize,
    pub mask: Option<Mask<'a, T>>,
}

#[derive(Debug, Default)]
pub(super) struct LastStep {
    idx: Vec<usize>,
    steps: usize,
    c: usize,
}

impl LastStep {
    pub fn new(input: Shape) -> Self {
        LastStep {
            c: input.channels(),
            ..Default::default()
        }
    }
}

impl<T: Scalar> Vertex<T> for LastStep {
    fn any_length(&self) -> bool {
        true
    }

    fn prepare(&mut self, rows: usize, in_steps: usize, aux: Option<Aux<'_, T>>) {
        self.steps = in_steps;
        self.idx.clear();
        let mask = aux.and_then(|a| a.mask).filter(|m| m.cols == 1 || m.cols == in_steps);
        for i in 0..rows {
            let last = match mask {
                Some(m) => (0..in_steps)
                    .rev()
                    .find(|&s| m.at(i, s) != T::zero())
                    .unwrap_or(in_steps - 1),
                None => in_steps - 1,
            };
            self.idx.push(last);
        }
    }

    fn forward(&mut self, inputs: &[&[T]], _rows: usize, output: &mut [T]) {
        gather_steps(inputs[0], self.c, self.steps, &self.idx, output);
    }

    fn backward(
        &mut self,
        _inputs: &[&[T]],
        _output: &[T],
        _rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        if let Some(g) = grads[0].as_deref_mut() {
            scatter_steps(delta, self.c, self.steps, &self.idx, g);
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct Duplicate {
    steps: usize,
}

impl<T: Scalar> Vertex<T> for Duplicate {
    fn any_length(&self) -> bool {
        true
    }

    fn prepare(&mut self, _rows: usize, _in_steps: usize, aux: Option<Aux<'_, T>>) {
        self.steps = aux.map_or(1, |a| a.steps);
    }

    fn output_steps(&self, _in_steps: usize) -> Option<usize> {
        Some(self.steps)
    }

    fn forward(&mut self, inputs: &[&[T]], rows: usize, output: &mut [T]) {
        let x = inputs[0];
        let c = x.len() / rows.max(1);
        let t = self.steps;
        for (i, row) in output.chunks_exact_mut(c * t).enumerate().take(rows) {
            for ch in 0..c {
                row[ch * t..(ch + 1) * t].fill(x[i * c + ch]);
            }
        }
    }

    fn backward(
        &mut self,
        inputs: &[&[T]],
        _output: &[T],
        rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        let Some(g) = grads[0].as_deref_mut() else {
            return;
        };
        let c = inputs[0].len() / rows.max(1);
        let t = self.steps;
        for (i, row) in delta.chunks_exact(c * t).enumerate().take(rows) {
            for ch in 0..c {
                g[i * c + ch] = row[ch * t..(ch + 1) * t].iter().copied().sum();
            }
        }
    }
}
