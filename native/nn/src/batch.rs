//! The batch descriptor: what every layer call is about besides the values themselves — how many
//! examples (rows), how many time steps each has, and which steps are real (a feature mask).
//!
//! Networks have no time axis yet (sequences are fixed-length `[C, L]` rows), so `time_steps` is
//! the `L` of a recurrent shape and 1 otherwise, and masks are carried from the network inputs to
//! the layers without changing any layer's arithmetic. Recurrent layers use the same descriptor
//! for variable lengths and per-step masks, so the executor does not change again for them.

use crate::config::Shape;

/// A mask of `rows × cols` values (1 = real, 0 = padding); `cols` is 1 (per example) or the
/// number of time steps.
#[derive(Clone, Copy, Debug)]
pub struct Mask<'a, T> {
    pub data: &'a [T],
    pub cols: usize,
}

/// What one forward or backward call of a layer or vertex covers.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a, T> {
    /// Examples in the minibatch (rows of the activation matrices).
    pub rows: usize,
    /// Time steps per example: 1 without a time axis.
    pub time_steps: usize,
    /// The feature mask that reaches this layer, if the network input it derives from has one.
    pub mask: Option<Mask<'a, T>>,
}

impl<'a, T> Batch<'a, T> {
    /// `rows` examples without a time axis or mask.
    pub fn rows(rows: usize) -> Self {
        Batch {
            rows,
            time_steps: 1,
            mask: None,
        }
    }

    /// `rows` examples of activations shaped `shape`, without a mask.
    pub fn new(rows: usize, shape: Shape) -> Self {
        Batch {
            rows,
            time_steps: match shape {
                Shape::Seq { len, .. } => len,
                _ => 1,
            },
            mask: None,
        }
    }
}

/// How a layer or vertex passes the feature mask of its input on to its output (the hook each
/// layer answers; the executor applies it when it assigns masks to nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskRule {
    /// The output has the same examples and steps as the input: the mask carries over.
    Keep,
    /// The output has no time axis or no longer lines up with the mask (e.g. global pooling).
    Drop,
}
