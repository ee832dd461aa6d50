//! Truncated backpropagation through time, shared by both network types: the minibatch's time
//! axis is cut into segments of `tBPTTForwardLength` steps; each segment is one iteration that
//! starts the recurrent layers from the state the previous segment left (zeros for the first),
//! backpropagates through at most `tBPTTBackwardLength` of its steps and updates the parameters.

use crate::batch::Mask;
use crate::error::NnError;
use crate::executor::Executor;
use crate::layers::StateMode;
use crate::loss::LabelsMask;
use ferrodl_tensor::Scalar;

/// An optional `(values, columns)` array (a feature or labels mask).
pub type MaskArg<'a, T> = Option<(&'a [T], usize)>;

/// Steps `t0..t1` of every row of `x` (`rows` rows of `channels × t` values, NCW; a mask is one
/// channel).
fn slice_steps<T: Scalar>(x: &[T], rows: usize, t: usize, t0: usize, t1: usize) -> Vec<T> {
    let row_len = x.len() / rows;
    let channels = row_len / t;
    let seg = t1 - t0;
    let mut out = Vec::with_capacity(rows * channels * seg);
    for r in 0..rows {
        for c in 0..channels {
            let line = &x[r * row_len + c * t..r * row_len + (c + 1) * t];
            out.extend_from_slice(&line[t0..t1]);
        }
    }
    out
}

/// One array cut to a segment when it has the minibatch's time axis (`per_step` columns per
/// step), kept whole otherwise.
fn cut<T: Scalar>(
    x: &[T],
    rows: usize,
    per_step: Option<usize>,
    t: usize,
    t0: usize,
    t1: usize,
) -> Option<Vec<T>> {
    match per_step {
        Some(c) if c > 0 && x.len() == rows * c * t => Some(slice_steps(x, rows, t, t0, t1)),
        _ => None,
    }
}

/// The arrays of one training call.
pub struct Arrays<'a, T> {
    pub inputs: &'a [&'a [T]],
    pub input_masks: &'a [MaskArg<'a, T>],
    pub labels: &'a [&'a [T]],
    pub label_masks: &'a [MaskArg<'a, T>],
    pub rows: usize,
}

/// Runs truncated BPTT over `a`: for each segment, forward (training mode, truncated-BPTT
/// state), score (data term), backward over at most `back` steps, then `step` (the update,
/// which also counts the iteration). Returns the data score of the last segment. The
/// network's inputs are already validated; `t` is their time steps.
pub fn run<T: Scalar>(
    exec: &mut Executor<T>,
    a: &Arrays<'_, T>,
    t: usize,
    fwd: usize,
    back: usize,
    mut step: impl FnMut(&mut Executor<T>),
) -> Result<f64, NnError> {
    let rows = a.rows;
    let in_seq: Vec<Option<usize>> = (0..a.inputs.len())
        .map(|k| exec.input_shape(k).is_seq().then(|| exec.input_shape(k).channels()))
        .collect();
    let out_seq: Vec<Option<usize>> = (0..a.labels.len())
        .map(|k| exec.output_seq_channels(k))
        .collect();
    exec.clear_state(StateMode::Tbptt);
    let mut score = 0.0;
    let mut t0 = 0;
    let result = (|| {
        while t0 < t {
            let t1 = (t0 + fwd).min(t);
            let own = |x: &[T], c: Option<usize>| cut(x, rows, c, t, t0, t1);
            let inputs: Vec<Option<Vec<T>>> =
                a.inputs.iter().zip(&in_seq).map(|(x, &c)| own(x, c)).collect();
            let labels: Vec<Option<Vec<T>>> =
                a.labels.iter().zip(&out_seq).map(|(y, &c)| own(y, c)).collect();
            // A feature mask per step has 1 column per step; a labels mask per step 1 or C.
            let fmasks: Vec<Option<(Vec<T>, usize)>> = a
                .input_masks
                .iter()
                .map(|m| {
                    m.and_then(|(d, cols)| {
                        (cols == t).then(|| (slice_steps(d, rows, t, t0, t1), t1 - t0))
                    })
                })
                .collect();
            let lmasks: Vec<Option<(Vec<T>, usize)>> = a
                .label_masks
                .iter()
                .zip(&out_seq)
                .map(|(m, c)| {
                    let (d, cols) = (*m)?;
                    let per = match c {
                        Some(c) if cols == c * t => *c,
                        _ if cols == t => 1,
                        _ => return None,
                    };
                    Some((slice_steps(d, rows, t, t0, t1), per * (t1 - t0)))
                })
                .collect();
            let xs: Vec<&[T]> = inputs
                .iter()
                .zip(a.inputs)
                .map(|(o, w)| o.as_deref().unwrap_or(w))
                .collect();
            let ys: Vec<&[T]> = labels
                .iter()
                .zip(a.labels)
                .map(|(o, w)| o.as_deref().unwrap_or(w))
                .collect();
            let fm: Vec<Option<Mask<'_, T>>> = fmasks
                .iter()
                .zip(a.input_masks)
                .map(|(own, whole)| match own {
                    Some((d, cols)) => Some(Mask { data: d, cols: *cols }),
                    None => whole.map(|(data, cols)| Mask { data, cols }),
                })
                .collect();
            let lm: Vec<Option<LabelsMask<'_, T>>> = lmasks
                .iter()
                .zip(a.label_masks)
                .map(|(own, whole)| match own {
                    Some((d, cols)) => Some(LabelsMask { data: d, cols: *cols }),
                    None => whole.map(|(data, cols)| LabelsMask { data, cols }),
                })
                .collect();
            exec.forward_in(&xs, &fm, rows, true, StateMode::Tbptt)?;
            score = exec.data_score(&ys, &lm);
            exec.set_backprop_steps(back);
            exec.backward(&xs, &fm, &ys, &lm);
            exec.set_backprop_steps(usize::MAX);
            step(exec);
            t0 = t1;
        }
        Ok(score)
    })();
    exec.clear_state(StateMode::Tbptt);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_each_channel_of_each_row() {
        // 2 rows, 2 channels, 4 steps
        let x: Vec<f64> = (0..16).map(|v| v as f64).collect();
        assert_eq!(
            slice_steps(&x, 2, 4, 1, 3),
            vec![1.0, 2.0, 5.0, 6.0, 9.0, 10.0, 13.0, 14.0]
        );
    }
}
