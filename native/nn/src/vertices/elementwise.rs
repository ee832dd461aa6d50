//! `ElementWiseVertex`: Add, Subtract (two inputs), Product, Average or Max of inputs of one
//! shape. Max sends the gradient to the input holding the maximum (the first one on ties).

use super::Vertex;
use crate::config::Shape;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

/// The reference's `ElementWiseVertex.Op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ElementWiseOp {
    Add,
    Subtract,
    Product,
    Average,
    Max,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ElementWiseVertexConfig {
    pub op: ElementWiseOp,
}

impl ElementWiseVertexConfig {
    pub fn output_shape(&self, inputs: &[Shape]) -> Result<Shape, String> {
        for (j, s) in inputs.iter().enumerate().skip(1) {
            if *s != inputs[0] {
                return Err(format!(
                    "input {j} is {s} but input 0 is {}; {:?} needs inputs of one shape",
                    inputs[0], self.op
                ));
            }
        }
        Ok(inputs[0])
    }
}

#[derive(Debug)]
pub(super) struct ElementWise {
    op: ElementWiseOp,
}

impl ElementWise {
    pub fn new(op: ElementWiseOp) -> Self {
        ElementWise { op }
    }
}

impl<T: Scalar> Vertex<T> for ElementWise {
    fn any_length(&self) -> bool {
        true
    }

    fn forward(&mut self, inputs: &[&[T]], _rows: usize, output: &mut [T]) {
        output.copy_from_slice(inputs[0]);
        let rest = &inputs[1..];
        match self.op {
            ElementWiseOp::Add | ElementWiseOp::Average => {
                for x in rest {
                    super::add_into(output, x);
                }
                if self.op == ElementWiseOp::Average {
                    let k = T::of(inputs.len() as f64);
                    output.iter_mut().for_each(|o| *o = *o / k);
                }
            }
            ElementWiseOp::Subtract => {
                for (o, &b) in output.iter_mut().zip(rest[0].iter()) {
                    *o = *o - b;
                }
            }
            ElementWiseOp::Product => {
                for x in rest {
                    for (o, &v) in output.iter_mut().zip(x.iter()) {
                        *o = *o * v;
                    }
                }
            }
            ElementWiseOp::Max => {
                for x in rest {
                    for (o, &v) in output.iter_mut().zip(x.iter()) {
                        if v > *o {
                            *o = v;
                        }
                    }
                }
            }
        }
    }

    fn backward(
        &mut self,
        inputs: &[&[T]],
        output: &[T],
        _rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        let n = inputs.len();
        for (j, g) in grads.iter_mut().enumerate() {
            let Some(g) = g else { continue };
            match self.op {
                ElementWiseOp::Add => g.copy_from_slice(delta),
                ElementWiseOp::Average => {
                    let k = T::of(n as f64);
                    for (o, &d) in g.iter_mut().zip(delta) {
                        *o = d / k;
                    }
                }
                ElementWiseOp::Subtract => {
                    if j == 0 {
                        g.copy_from_slice(delta);
                    } else {
                        for (o, &d) in g.iter_mut().zip(delta) {
                            *o = T::zero() - d;
                        }
                    }
                }
                ElementWiseOp::Product => {
                    // d(prod)/dx_j = product of the other inputs (computed directly, so a zero
                    // input does not need a division).
                    g.copy_from_slice(delta);
                    for (m, x) in inputs.iter().enumerate() {
                        if m != j {
                            for (o, &v) in g.iter_mut().zip(x.iter()) {
                                *o = *o * v;
                            }
                        }
                    }
                }
                ElementWiseOp::Max => {
                    for (i, (o, &d)) in g.iter_mut().zip(delta).enumerate() {
                        // The winner is the first input equal to the maximum.
                        let winner = inputs.iter().position(|x| x[i] == output[i]);
                        *o = if winner == Some(j) { d } else { T::zero() };
                    }
                }
            }
        }
    }
}
