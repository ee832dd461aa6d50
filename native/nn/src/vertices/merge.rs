//! `MergeVertex`: concatenates its inputs along the feature axis (feed-forward) or the channel
//! axis (images `[C,H,W]`, sequences `[C,L]`). With one example per row in C-major order, that is
//! a per-row concatenation for every kind of input.

use super::Vertex;
use crate::config::Shape;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeVertexConfig {}

impl MergeVertexConfig {
    pub fn output_shape(&self, inputs: &[Shape]) -> Result<Shape, String> {
        let first = inputs[0];
        let mut channels = 0;
        for (j, s) in inputs.iter().enumerate() {
            let same_kind = match (first, *s) {
                (Shape::Flat(_), Shape::Flat(_)) => true,
                (Shape::Image { h, w, .. }, Shape::Image { h: h2, w: w2, .. }) => {
                    h == h2 && w == w2
                }
                (Shape::Seq { len, .. }, Shape::Seq { len: l2, .. }) => len == l2,
                _ => false,
            };
            if !same_kind {
                return Err(format!(
                    "input {j} is {s} but input 0 is {first}; merging concatenates along the \
                     feature/channel axis, so every input must be of one kind with equal \
                     spatial sizes (height, width or length)"
                ));
            }
            channels += s.channels();
        }
        Ok(match first {
            Shape::Flat(_) => Shape::Flat(channels),
            Shape::Image { h, w, .. } => Shape::Image { c: channels, h, w },
            Shape::Seq { len, .. } => Shape::Seq { c: channels, len },
        })
    }
}

/// Per-row widths come from the inputs of each call, so sequences of any length merge.
#[derive(Debug)]
pub(super) struct Merge {
    widths: Vec<usize>,
}

impl Merge {
    pub fn new(inputs: &[Shape]) -> Self {
        Merge {
            widths: inputs.iter().map(Shape::len).collect(),
        }
    }

    fn set_widths<T>(&mut self, inputs: &[&[T]], rows: usize) {
        for (w, x) in self.widths.iter_mut().zip(inputs) {
            *w = x.len() / rows.max(1);
        }
    }
}

impl<T: Scalar> Vertex<T> for Merge {
    fn any_length(&self) -> bool {
        true
    }

    fn forward(&mut self, inputs: &[&[T]], rows: usize, output: &mut [T]) {
        self.set_widths(inputs, rows);
        let total: usize = self.widths.iter().sum();
        for r in 0..rows {
            let mut at = r * total;
            for (x, &w) in inputs.iter().zip(&self.widths) {
                output[at..at + w].copy_from_slice(&x[r * w..(r + 1) * w]);
                at += w;
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
        self.set_widths(inputs, rows);
        let total: usize = self.widths.iter().sum();
        let mut offset = 0;
        for (g, &w) in grads.iter_mut().zip(&self.widths) {
            if let Some(g) = g {
                for r in 0..rows {
                    let at = r * total + offset;
                    g[r * w..(r + 1) * w].copy_from_slice(&delta[at..at + w]);
                }
            }
            offset += w;
        }
    }
}
