//! The batch descriptor: what every layer call is about besides the values themselves — how many
//! examples (rows), how many time steps each has, and which steps are real (a feature mask).
//!
//! A sequence activation is one row of `C·T` values per example (NCW); `T` is the minibatch's own
//! length (`time_steps`), which may differ from call to call. Masks come from the network inputs
//! (feature masks, `[N, T]`) and reach each layer through the layers' [`MaskRule`]s; recurrent
//! layers zero the output and state of masked steps, the other layers ignore masks.

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
    /// Truncated BPTT: backward covers only the last `backprop_steps` time steps (earlier steps
    /// get no gradient); `usize::MAX` otherwise.
    pub backprop_steps: usize,
}

impl<T: Copy> Mask<'_, T> {
    /// The mask value of example `row` at step `t` (a per-example mask covers every step).
    #[inline]
    pub fn at(&self, row: usize, t: usize) -> T {
        if self.cols == 1 {
            self.data[row]
        } else {
            self.data[row * self.cols + t]
        }
    }
}

impl<'a, T> Batch<'a, T> {
    /// `rows` examples without a time axis or mask.
    pub fn rows(rows: usize) -> Self {
        Batch {
            rows,
            time_steps: 1,
            mask: None,
            backprop_steps: usize::MAX,
        }
    }

    /// `rows` examples of activations shaped `shape` (a sequence of its configured length),
    /// without a mask.
    pub fn new(rows: usize, shape: Shape) -> Self {
        Batch::with_steps(
            rows,
            match shape {
                Shape::Seq { len, .. } => len,
                _ => 1,
            },
        )
    }

    /// `rows` examples of `time_steps` steps each, without a mask.
    pub fn with_steps(rows: usize, time_steps: usize) -> Self {
        Batch {
            rows,
            time_steps,
            mask: None,
            backprop_steps: usize::MAX,
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
    /// The output takes the mask of the network input the vertex is tied to by name
    /// (`DuplicateToTimeSeriesVertex`).
    FromAux,
}
