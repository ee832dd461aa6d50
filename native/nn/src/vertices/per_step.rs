//! A vertex inside the per-time-step region of an `RnnToCnnPreProcessor`: the reference runs it
//! on `[N·T, C, H, W]` minibatches, one row per (example, step). The region's arrays stay
//! `[N, C·H·W, T]` sequences in the engine, so each input is laid out as `N·T` rows of its
//! per-step values (each example's steps in order, the reference's row order), the vertex runs
//! on those rows, and its output goes back to `[N', c, T]`. Stacking and unstacking keep whole
//! examples: `N·T` rows stacked `k` times are `k·N` examples of `T` steps.

use super::Vertex;
use crate::layers::recurrent::{ensure, ncw_to_nwc, nwc_to_ncw};
use ferrodl_tensor::Scalar;

#[derive(Debug)]
pub(crate) struct PerStepVertex<T: Scalar> {
    inner: Box<dyn Vertex<T>>,
    /// Values per step of each input and of the output.
    c_in: Vec<usize>,
    c_out: usize,
    /// Time steps of the current forward pass.
    steps: usize,
    /// The rows the inner vertex sees: inputs, output, output delta, input gradients.
    xs: Vec<Vec<T>>,
    y: Vec<T>,
    dy: Vec<T>,
    dxs: Vec<Vec<T>>,
}

impl<T: Scalar> PerStepVertex<T> {
    /// Wraps `inner`, built for the per-step shapes (`c_in[j]` values of input `j`, `c_out` out).
    pub fn new(inner: Box<dyn Vertex<T>>, c_in: Vec<usize>, c_out: usize) -> Self {
        let k = c_in.len();
        PerStepVertex {
            inner,
            c_in,
            c_out,
            steps: 1,
            xs: vec![Vec::new(); k],
            y: Vec::new(),
            dy: Vec::new(),
            dxs: vec![Vec::new(); k],
        }
    }
}

impl<T: Scalar> Vertex<T> for PerStepVertex<T> {
    /// Whole examples: `N·T` rows stacked `k` times are `k·N` examples (unstacking needs the
    /// examples, not only the rows, to divide, see `check_rows`).
    fn output_rows(&self, rows: usize) -> usize {
        self.inner.output_rows(rows)
    }

    fn any_length(&self) -> bool {
        true
    }

    fn prepare(&mut self, rows: usize, in_steps: usize, _aux: Option<super::Aux<'_, T>>) {
        self.steps = in_steps.max(1);
        self.inner.prepare(rows * self.steps, 1, None);
    }

    fn check_rows(&self, rows: usize) -> Result<(), String> {
        self.inner.check_rows(rows)
    }

    fn forward(&mut self, inputs: &[&[T]], rows: usize, output: &mut [T]) {
        let t = self.steps;
        for ((x, buf), &c) in inputs.iter().zip(&mut self.xs).zip(&self.c_in) {
            ensure(buf, rows * c * t);
            ncw_to_nwc(x, rows, c, t, &mut buf[..rows * c * t]);
        }
        let out_rows = self.inner.output_rows(rows);
        let len = out_rows * self.c_out * t;
        ensure(&mut self.y, len);
        let xs: Vec<&[T]> = self.xs.iter().zip(&self.c_in).map(|(b, &c)| &b[..rows * c * t]).collect();
        self.inner.forward(&xs, rows * t, &mut self.y[..len]);
        nwc_to_ncw(&self.y[..len], out_rows, self.c_out, t, output);
    }

    fn backward(
        &mut self,
        _inputs: &[&[T]],
        _output: &[T],
        rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        let t = self.steps;
        let out_rows = self.inner.output_rows(rows);
        let len = out_rows * self.c_out * t;
        ensure(&mut self.dy, len);
        ncw_to_nwc(delta, out_rows, self.c_out, t, &mut self.dy[..len]);
        for ((g, buf), &c) in grads.iter().zip(&mut self.dxs).zip(&self.c_in) {
            if g.is_some() {
                ensure(buf, rows * c * t);
            }
        }
        let xs: Vec<&[T]> = self.xs.iter().zip(&self.c_in).map(|(b, &c)| &b[..rows * c * t]).collect();
        let mut inner_grads: Vec<Option<&mut [T]>> = grads
            .iter()
            .zip(self.dxs.iter_mut())
            .zip(&self.c_in)
            .map(|((g, buf), &c)| g.as_ref().map(|_| &mut buf[..rows * c * t]))
            .collect();
        self.inner
            .backward(&xs, &self.y[..len], rows * t, &self.dy[..len], &mut inner_grads);
        for ((g, buf), &c) in grads.iter_mut().zip(&self.dxs).zip(&self.c_in) {
            if let Some(g) = g {
                nwc_to_ncw(&buf[..rows * c * t], rows, c, t, g);
            }
        }
    }
}
