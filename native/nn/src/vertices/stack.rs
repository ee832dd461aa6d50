//! `StackVertex` stacks its inputs along the minibatch axis (input 0's rows, then input 1's, ...);
//! `UnstackVertex` takes slice `from` of `stackSize` equal slices of the minibatch. Together they
//! run one set of layers over several inputs with shared weights (e.g. triplet embeddings).

use super::Vertex;
use crate::config::Shape;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackVertexConfig {}

impl StackVertexConfig {
    pub fn output_shape(&self, inputs: &[Shape]) -> Result<Shape, String> {
        for (j, s) in inputs.iter().enumerate().skip(1) {
            if *s != inputs[0] {
                return Err(format!(
                    "input {j} is {s} but input 0 is {}; stacking needs inputs of one shape",
                    inputs[0]
                ));
            }
        }
        Ok(inputs[0])
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnstackVertexConfig {
    /// Which slice to take (0-based).
    pub from: usize,
    /// How many equal slices the minibatch holds.
    pub stack_size: usize,
}

impl UnstackVertexConfig {
    pub fn output_shape(&self, input: Shape) -> Result<Shape, String> {
        if self.stack_size == 0 || self.from >= self.stack_size {
            return Err(format!(
                "from={} stackSize={} is invalid (needs stackSize >= 1 and 0 <= from < stackSize)",
                self.from, self.stack_size
            ));
        }
        Ok(input)
    }
}

#[derive(Debug)]
pub(super) struct Stack {
    /// Number of inputs stacked.
    pub n: usize,
}

impl<T: Scalar> Vertex<T> for Stack {
    fn output_rows(&self, rows: usize) -> usize {
        rows * self.n
    }

    fn forward(&mut self, inputs: &[&[T]], _rows: usize, output: &mut [T]) {
        let mut at = 0;
        for x in inputs {
            output[at..at + x.len()].copy_from_slice(x);
            at += x.len();
        }
    }

    fn backward(
        &mut self,
        inputs: &[&[T]],
        _output: &[T],
        _rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        let mut at = 0;
        for (x, g) in inputs.iter().zip(grads.iter_mut()) {
            if let Some(g) = g {
                g.copy_from_slice(&delta[at..at + x.len()]);
            }
            at += x.len();
        }
    }
}

#[derive(Debug)]
pub(super) struct Unstack {
    from: usize,
    stack_size: usize,
}

impl Unstack {
    pub fn new(c: &UnstackVertexConfig) -> Self {
        Unstack {
            from: c.from,
            stack_size: c.stack_size,
        }
    }

    fn slice(&self, len: usize) -> std::ops::Range<usize> {
        let part = len / self.stack_size;
        self.from * part..(self.from + 1) * part
    }
}

impl<T: Scalar> Vertex<T> for Unstack {
    fn check_rows(&self, rows: usize) -> Result<(), String> {
        if !rows.is_multiple_of(self.stack_size) {
            return Err(format!(
                "its input has {rows} rows, which do not split into stackSize={} equal slices",
                self.stack_size
            ));
        }
        Ok(())
    }

    fn output_rows(&self, rows: usize) -> usize {
        rows / self.stack_size
    }

    fn forward(&mut self, inputs: &[&[T]], _rows: usize, output: &mut [T]) {
        output.copy_from_slice(&inputs[0][self.slice(inputs[0].len())]);
    }

    fn backward(
        &mut self,
        inputs: &[&[T]],
        _output: &[T],
        _rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        if let Some(g) = &mut grads[0] {
            g.fill(T::zero());
            let r = self.slice(inputs[0].len());
            g[r].copy_from_slice(delta);
        }
    }
}
