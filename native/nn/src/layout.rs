//! The `RNNFormat` of a network's own time-series arrays. The engine computes every sequence in
//! the reference's default NCW layout (`[N, C, T]`, one example = `C·T` values); a network whose
//! first recurrent layer (or its recurrent input type) says NWC takes `[N, T, C]` features, and
//! one whose output layer says NWC gives `[N, T, C]` outputs and takes labels (and per-output
//! label masks) in that layout. Only these boundary arrays are converted: a layer's format
//! between two layers changes nothing (the reference permutes there, the same numbers), and
//! `[N, T]` masks and `rnnTimeStep` states (`[N, size]`) have no channel axis to move.

use std::borrow::Cow;

use crate::config::{InputType, LayerConfig, RnnFormat, Shape};

/// Per network input and per network output: `Some(c)` when that array is an NWC sequence of
/// `c` channels, `None` when it is NCW or not a sequence.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Boundary {
    inputs: Vec<Option<usize>>,
    outputs: Vec<Option<usize>>,
}

/// `Some(c)` for an NWC sequence shape.
fn nwc(shape: Shape, format: Option<RnnFormat>) -> Option<usize> {
    match (shape, format) {
        (Shape::Seq { c, .. }, Some(RnnFormat::NWC)) => Some(c),
        _ => None,
    }
}

/// The format an input array has: the input type's when it says NWC, else that of the first
/// layer reading it.
pub(crate) fn input_format(t: Option<&InputType>, first: Option<&LayerConfig>) -> Option<RnnFormat> {
    match t {
        Some(InputType::Recurrent { format: RnnFormat::NWC, .. }) => Some(RnnFormat::NWC),
        _ => first.and_then(|l| l.rnn_format()),
    }
}

impl Boundary {
    /// `inputs` / `outputs`: each array's engine shape and declared format.
    pub(crate) fn new(
        inputs: impl IntoIterator<Item = (Shape, Option<RnnFormat>)>,
        outputs: impl IntoIterator<Item = (Shape, Option<RnnFormat>)>,
    ) -> Self {
        Boundary {
            inputs: inputs.into_iter().map(|(s, f)| nwc(s, f)).collect(),
            outputs: outputs.into_iter().map(|(s, f)| nwc(s, f)).collect(),
        }
    }

    /// Whether network input `k` is `[N, T, C]`.
    pub fn input_is_nwc(&self, k: usize) -> bool {
        matches!(self.inputs.get(k), Some(Some(_)))
    }

    /// Whether network output `k` (and its labels) is `[N, T, C]`.
    pub fn output_is_nwc(&self, k: usize) -> bool {
        matches!(self.outputs.get(k), Some(Some(_)))
    }

    /// Network input `k` in the engine's layout.
    pub fn input<'a, T: Copy>(&self, k: usize, x: &'a [T], rows: usize) -> Cow<'a, [T]> {
        match self.inputs.get(k) {
            Some(&Some(c)) => Cow::Owned(nwc_to_ncw(x, rows, c)),
            _ => Cow::Borrowed(x),
        }
    }

    /// Labels of network output `k` in the engine's layout.
    pub fn labels<'a, T: Copy>(&self, k: usize, y: &'a [T], rows: usize) -> Cow<'a, [T]> {
        match self.outputs.get(k) {
            Some(&Some(c)) => Cow::Owned(nwc_to_ncw(y, rows, c)),
            _ => Cow::Borrowed(y),
        }
    }

    /// A labels mask of output `k` in the engine's layout: only a per-output mask (`C·T`
    /// columns, the labels' own shape) has a channel axis; `[N, T]` and per-example masks stay.
    pub fn labels_mask<'a, T: Copy>(
        &self,
        k: usize,
        mask: Option<(&'a [T], usize)>,
        rows: usize,
        labels_len: usize,
    ) -> Option<(Cow<'a, [T]>, usize)> {
        let (m, cols) = mask?;
        match self.outputs.get(k) {
            Some(&Some(c)) if c > 1 && rows > 0 && cols * rows == labels_len => {
                Some((Cow::Owned(nwc_to_ncw(m, rows, c)), cols))
            }
            _ => Some((Cow::Borrowed(m), cols)),
        }
    }

    /// Every network input in the engine's layout.
    pub fn inputs<'a, T: Copy>(&self, xs: &[&'a [T]], rows: usize) -> Vec<Cow<'a, [T]>> {
        xs.iter().enumerate().map(|(k, x)| self.input(k, x, rows)).collect()
    }

    /// Every output's labels in the engine's layout.
    pub fn all_labels<'a, T: Copy>(&self, ys: &[&'a [T]], rows: usize) -> Vec<Cow<'a, [T]>> {
        ys.iter().enumerate().map(|(k, y)| self.labels(k, y, rows)).collect()
    }

    /// Every output's labels mask in the engine's layout (`ys`: the labels, for their lengths).
    #[allow(clippy::type_complexity)]
    pub fn all_labels_masks<'a, T: Copy>(
        &self,
        masks: &[Option<(&'a [T], usize)>],
        rows: usize,
        ys: &[&[T]],
    ) -> Vec<Option<(Cow<'a, [T]>, usize)>> {
        masks
            .iter()
            .enumerate()
            .map(|(k, m)| self.labels_mask(k, *m, rows, ys.get(k).map_or(0, |y| y.len())))
            .collect()
    }

    /// Network output `k` in the user's layout.
    pub fn output<T: Copy>(&self, k: usize, out: Vec<T>, rows: usize) -> Vec<T> {
        match self.outputs.get(k) {
            Some(&Some(c)) => ncw_to_nwc(&out, rows, c),
            _ => out,
        }
    }
}

/// Each of `rows` rows `[T, C]` → `[C, T]` (`T` from the length; a ragged length is left for
/// the shape checks to name).
fn nwc_to_ncw<T: Copy>(x: &[T], rows: usize, c: usize) -> Vec<T> {
    transpose_rows(x, rows, c, false)
}

/// Each of `rows` rows `[C, T]` → `[T, C]`.
fn ncw_to_nwc<T: Copy>(x: &[T], rows: usize, c: usize) -> Vec<T> {
    transpose_rows(x, rows, c, true)
}

fn transpose_rows<T: Copy>(x: &[T], rows: usize, c: usize, to_nwc: bool) -> Vec<T> {
    if rows == 0 || c == 0 || x.len() % (rows * c) != 0 {
        return x.to_vec();
    }
    let t = x.len() / (rows * c);
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks_exact(c * t) {
        if to_nwc {
            // row is [C, T]: read column s of every channel
            for s in 0..t {
                out.extend((0..c).map(|ch| row[ch * t + s]));
            }
        } else {
            // row is [T, C]
            for ch in 0..c {
                out.extend((0..t).map(|s| row[s * c + ch]));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_each_row_and_back() {
        // 2 rows of 3 steps × 2 channels, NWC
        let x: Vec<i32> = (0..12).collect();
        let b = Boundary {
            inputs: vec![Some(2)],
            outputs: vec![Some(2)],
        };
        let ncw = b.input(0, &x, 2).into_owned();
        assert_eq!(ncw, vec![0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11]);
        assert_eq!(b.output(0, ncw, 2), x);
        let plain = Boundary::default();
        assert!(matches!(plain.input(0, &x, 2), Cow::Borrowed(_)));
        // [N, T] masks are not moved; a per-output mask is
        let m = [1, 1, 0, 1, 0, 0];
        assert!(matches!(b.labels_mask(0, Some((&m[..], 3)), 2, 12), Some((Cow::Borrowed(_), 3))));
        let per: Vec<i32> = (0..12).collect();
        let (moved, cols) = b.labels_mask(0, Some((&per[..], 6)), 2, 12).unwrap();
        assert_eq!((moved.into_owned(), cols), (ncw_check(), 6));
    }

    fn ncw_check() -> Vec<i32> {
        vec![0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11]
    }
}
