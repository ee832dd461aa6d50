//! What the recurrent layers share: layout changes between the network's NCW rows and the
//! time-major blocks the per-step matrix products want, the state kept between calls
//! (`rnnTimeStep` and truncated BPTT), and the configuration checks of recurrent layers.

use super::StateMode;
use crate::config::{Activation, Shape, ShapeCx};
use crate::NnError;
use ferrodl_tensor::Scalar;

/// `[N, C, T]` (one NCW row per example) → `[T, N, C]` (time-major: step `t` is a contiguous
/// `N × C` block).
pub fn ncw_to_tnc<T: Scalar>(x: &[T], n: usize, c: usize, t: usize, out: &mut [T]) {
    assert!(x.len() >= n * c * t && out.len() >= n * c * t, "ncw_to_tnc: arrays too short");
    for i in 0..n {
        // each example is a C × T matrix written transposed with a row stride of N·C
        transpose_into(&x[i * c * t..(i + 1) * c * t], c, t, &mut out[i * c..], n * c);
    }
}

/// `[T, N, C]` → `[N, C, T]`, the inverse of [`ncw_to_tnc`].
pub fn tnc_to_ncw<T: Scalar>(x: &[T], n: usize, c: usize, t: usize, out: &mut [T]) {
    assert!(x.len() >= n * c * t && out.len() >= n * c * t, "tnc_to_ncw: arrays too short");
    for i in 0..n {
        transpose_from(&x[i * c..], n * c, t, c, &mut out[i * c * t..(i + 1) * c * t]);
    }
}

/// `[N, C, T]` → `[N, T, C]` (each example's steps as consecutive rows of `C`: the layout a
/// layer applied per time step, or a loss per step, reads as `N·T` rows).
pub fn ncw_to_nwc<T: Scalar>(x: &[T], n: usize, c: usize, t: usize, out: &mut [T]) {
    assert!(x.len() >= n * c * t && out.len() >= n * c * t, "ncw_to_nwc: arrays too short");
    for i in 0..n {
        let r = i * c * t..(i + 1) * c * t;
        transpose_into(&x[r.clone()], c, t, &mut out[r], c);
    }
}

/// `[N, T, C]` → `[N, C, T]`, the inverse of [`ncw_to_nwc`].
pub fn nwc_to_ncw<T: Scalar>(x: &[T], n: usize, c: usize, t: usize, out: &mut [T]) {
    assert!(x.len() >= n * c * t && out.len() >= n * c * t, "nwc_to_ncw: arrays too short");
    for i in 0..n {
        let r = i * c * t..(i + 1) * c * t;
        transpose_from(&x[r.clone()], c, t, c, &mut out[r]);
    }
}

/// Tile edge of the transposes: a tile's reads and writes each touch 8 cache lines, reused 8
/// times, where an element-by-element walk strides across a line per element (the layout
/// changes were ~6 % of a character-model step, `perf`).
const TILE: usize = 8;

/// Writes the `rows × cols` matrix `m` transposed: element `(r, k)` to `out[k·stride + r]`.
fn transpose_into<T: Copy>(m: &[T], rows: usize, cols: usize, out: &mut [T], stride: usize) {
    for r0 in (0..rows).step_by(TILE) {
        let r1 = (r0 + TILE).min(rows);
        for k0 in (0..cols).step_by(TILE) {
            for k in k0..(k0 + TILE).min(cols) {
                let dst = &mut out[k * stride + r0..k * stride + r1];
                for (r, d) in (r0..r1).zip(dst) {
                    *d = m[r * cols + k];
                }
            }
        }
    }
}

/// Reads `out` (`rows × cols`, row-major) from the transposed matrix stored in `x` with a row
/// stride of `stride`: `out[r·cols + k] = x[k·stride + r]`, where `x` has `cols` rows of
/// at least `rows` used elements.
fn transpose_from<T: Copy>(x: &[T], stride: usize, cols: usize, rows: usize, out: &mut [T]) {
    for r0 in (0..rows).step_by(TILE) {
        let r1 = (r0 + TILE).min(rows);
        for k0 in (0..cols).step_by(TILE) {
            for k in k0..(k0 + TILE).min(cols) {
                let src = &x[k * stride + r0..k * stride + r1];
                for (r, &v) in (r0..r1).zip(src) {
                    out[r * cols + k] = v;
                }
            }
        }
    }
}

/// Makes `v` at least `n` long (scratch buffers only grow).
pub fn ensure<T: Scalar>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::zero());
    }
}

/// Grows each `(buffer, length)` to its length, the growth checked against the native memory
/// budget as one request first (`what` names the layer and the minibatch in a refusal).
pub fn reserve_all<T: Scalar>(
    bufs: &mut [(&mut Vec<T>, Option<usize>)],
    what: impl Fn() -> String,
) -> Result<(), ferrodl_tensor::memory::MemoryError> {
    use ferrodl_tensor::memory;
    let mut more: Option<usize> = Some(0);
    for (v, n) in bufs.iter() {
        more = match (more, n) {
            (Some(m), Some(n)) => m.checked_add(n.saturating_sub(v.len())),
            _ => None,
        };
    }
    memory::check(&what, more.and_then(|m| memory::bytes_of(m, std::mem::size_of::<T>())))?;
    for (v, n) in bufs.iter_mut() {
        memory::try_grow(v, n.unwrap_or(usize::MAX), T::zero(), &what)?;
    }
    Ok(())
}

/// `a · b · c` with overflow as `None`.
pub fn product(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// One recurrent state: a `rows × width` block per key (`prevAct`, and `prevMem` for LSTMs).
#[derive(Clone, Debug, Default)]
pub struct State<T> {
    pub rows: usize,
    pub values: Vec<Vec<T>>,
}

/// The two states a recurrent layer keeps: `rnnTimeStep`'s and truncated BPTT's (the reference
/// keeps them apart, so stepping a network never disturbs a fit and vice versa).
#[derive(Clone, Debug, Default)]
pub struct StateSlots<T> {
    pub time_step: Option<State<T>>,
    pub tbptt: Option<State<T>>,
}

impl<T: Scalar> StateSlots<T> {
    /// The state a forward pass of `rows` examples starts from in `mode` (None: zeros). A stored
    /// state of another minibatch size is not used (the reference refuses it; we start afresh).
    pub fn start(&self, mode: StateMode, rows: usize) -> Option<&State<T>> {
        let s = match mode {
            StateMode::Stateless => None,
            StateMode::TimeStep => self.time_step.as_ref(),
            StateMode::Tbptt => self.tbptt.as_ref(),
        }?;
        (s.rows == rows).then_some(s)
    }

    /// Keeps the state a forward pass in `mode` ended with.
    pub fn keep(&mut self, mode: StateMode, rows: usize, values: Vec<Vec<T>>) {
        let s = Some(State { rows, values });
        match mode {
            StateMode::Stateless => {}
            StateMode::TimeStep => self.time_step = s,
            StateMode::Tbptt => self.tbptt = s,
        }
    }

    pub fn clear(&mut self, mode: StateMode) {
        match mode {
            StateMode::Stateless => {}
            StateMode::TimeStep => self.time_step = None,
            StateMode::Tbptt => self.tbptt = None,
        }
    }

    /// The `rnnTimeStep` state under key number `k`.
    pub fn get(&self, k: usize) -> Option<&[T]> {
        self.time_step.as_ref().map(|s| &s.values[k][..])
    }

    /// Sets the `rnnTimeStep` state of key number `k` of `n_keys`, each `rows × width`; the other
    /// keys are kept if their row count matches, zeroed otherwise.
    pub fn set(
        &mut self,
        k: usize,
        n_keys: usize,
        width: usize,
        values: &[T],
        rows: usize,
    ) -> Result<(), String> {
        if rows == 0 || values.len() != rows * width {
            return Err(format!(
                "a state of {} values is not {rows} rows × {width} (rows must be at least 1)",
                values.len()
            ));
        }
        let mut s = match self.time_step.take() {
            Some(s) if s.rows == rows => s,
            _ => State {
                rows,
                values: vec![vec![T::zero(); rows * width]; n_keys],
            },
        };
        s.values[k].copy_from_slice(values);
        self.time_step = Some(s);
        Ok(())
    }
}

/// The `[C, L]` input of a recurrent layer (`what` is its type), with `nIn` checked against `C`.
pub fn recurrent_input(cx: &ShapeCx<'_>, what: &str, n_in: usize) -> Result<(usize, usize), NnError> {
    let (c, len) = cx.seq(what)?;
    cx.channels_match(n_in, c)?;
    Ok((c, len))
}

/// Recurrent layers apply their activations element by element at every step.
pub fn elementwise(cx: &ShapeCx<'_>, field: &str, a: Activation) -> Result<(), NnError> {
    if a.is_elementwise() {
        Ok(())
    } else {
        Err(cx.err(format!(
            "{field} {a:?} is not an element-wise activation (SOFTMAX normalises across units; \
             use it in the output layer)"
        )))
    }
}

/// `nIn` of a recurrent layer is the channels of its recurrent input.
pub fn infer_recurrent_n_in(n_in: &mut usize, input: Shape) {
    if let (0, Shape::Seq { c, .. }) = (*n_in, input) {
        *n_in = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_round_trip() {
        let (n, c, t) = (2, 3, 4);
        let x: Vec<f64> = (0..n * c * t).map(|v| v as f64).collect();
        let mut a = vec![0.0; x.len()];
        let mut b = vec![0.0; x.len()];
        ncw_to_tnc(&x, n, c, t, &mut a);
        // example 1, channel 2, step 3 = x[1*12 + 2*4 + 3] = 23 at ((3*2)+1)*3+2 = 23
        assert_eq!(a[(3 * n + 1) * c + 2], 23.0);
        tnc_to_ncw(&a, n, c, t, &mut b);
        assert_eq!(b, x);
        ncw_to_nwc(&x, n, c, t, &mut a);
        assert_eq!(a[12 + 3 * c + 2], 23.0);
        nwc_to_ncw(&a, n, c, t, &mut b);
        assert_eq!(b, x);
    }
}
