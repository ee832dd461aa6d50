//! `SubsetVertex`: features (or channels, for images and sequences) `from..=to` of its input.
//! With C-major rows that is one contiguous range of each row.

use super::Vertex;
use crate::config::Shape;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubsetVertexConfig {
    /// First feature/channel kept (inclusive).
    pub from: usize,
    /// Last feature/channel kept (inclusive).
    pub to: usize,
}

impl SubsetVertexConfig {
    pub fn output_shape(&self, input: Shape) -> Result<Shape, String> {
        let n = input.channels();
        if self.from > self.to || self.to >= n {
            let axis = if matches!(input, Shape::Flat(_)) {
                "features"
            } else {
                "channels"
            };
            return Err(format!(
                "from={} to={} is not a range of the {n} {axis} of its input, {input} (needs \
                 0 <= from <= to < {n})",
                self.from, self.to
            ));
        }
        let c = self.to - self.from + 1;
        Ok(match input {
            Shape::Flat(_) => Shape::Flat(c),
            Shape::Image { h, w, .. } => Shape::Image { c, h, w },
            Shape::Seq { len, .. } => Shape::Seq { c, len },
        })
    }
}

#[derive(Debug)]
pub(super) struct Subset {
    /// Values per input row, and the kept range of each row.
    width: usize,
    start: usize,
    len: usize,
}

impl Subset {
    pub fn new(c: &SubsetVertexConfig, input: Shape) -> Self {
        let per_channel = input.len() / input.channels();
        Subset {
            width: input.len(),
            start: c.from * per_channel,
            len: (c.to - c.from + 1) * per_channel,
        }
    }
}

impl<T: Scalar> Vertex<T> for Subset {
    fn forward(&mut self, inputs: &[&[T]], rows: usize, output: &mut [T]) {
        for r in 0..rows {
            let src = r * self.width + self.start;
            output[r * self.len..(r + 1) * self.len]
                .copy_from_slice(&inputs[0][src..src + self.len]);
        }
    }

    fn backward(
        &mut self,
        _inputs: &[&[T]],
        _output: &[T],
        rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        if let Some(g) = &mut grads[0] {
            g.fill(T::zero());
            for r in 0..rows {
                let dst = r * self.width + self.start;
                g[dst..dst + self.len].copy_from_slice(&delta[r * self.len..(r + 1) * self.len]);
            }
        }
    }
}
