//! A feed-forward layer applied at every time step of a sequence: what the reference does with
//! `RnnToFeedForwardPreProcessor` + layer + `FeedForwardToRnnPreProcessor` (inferred by
//! `setInputType` for a dense layer after a recurrent one), with `RnnOutputLayer`, and with
//! `TimeDistributed`. The `[N, C, T]` input is laid out as `N·T` rows of `C` (each example's steps
//! in order), the inner layer runs on those rows, and its output goes back to `[N, nOut, T]`.

use super::recurrent::{ensure, ncw_to_nwc, nwc_to_ncw};
use super::{Batch, Ctx, Layer, ParamSpec};
use crate::config::Shape;
use ferrodl_tensor::{Rng, Scalar};

#[derive(Debug)]
pub struct PerStep<T: Scalar> {
    inner: Box<dyn Layer<T>>,
    c_in: usize,
    c_out: usize,
    /// The rows the inner layer sees: input, output, and the gradients of both.
    x: Vec<T>,
    y: Vec<T>,
    dy: Vec<T>,
    dx: Vec<T>,
}

impl<T: Scalar> PerStep<T> {
    /// Wraps `inner`, built for feed-forward rows of `c_in` → `c_out` values.
    pub fn new(inner: Box<dyn Layer<T>>) -> Self {
        let (c_in, c_out) = (inner.n_in(), inner.n_out());
        PerStep {
            inner,
            c_in,
            c_out,
            x: Vec::new(),
            y: Vec::new(),
            dy: Vec::new(),
            dx: Vec::new(),
        }
    }

    fn inner_batch<'b>(batch: &Batch<'b, T>) -> Batch<'b, T> {
        Batch::rows(batch.rows * batch.time_steps)
    }
}

impl<T: Scalar> Layer<T> for PerStep<T> {
    fn type_name(&self) -> &'static str {
        self.inner.type_name()
    }

    fn input_shape(&self) -> Shape {
        Shape::Seq {
            c: self.c_in,
            len: 0,
        }
    }

    fn output_shape(&self) -> Shape {
        Shape::Seq {
            c: self.c_out,
            len: 0,
        }
    }

    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        Ok(steps)
    }

    fn param_specs(&self) -> Vec<ParamSpec> {
        self.inner.param_specs()
    }

    /// The inner layer's check on the `rows · steps` rows it sees.
    fn check_input(&self, input: &[T], _rows: usize) -> Result<(), String> {
        self.inner.check_input(input, input.len() / self.c_in.max(1))
    }

    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        self.inner.init_params(params, rng)
    }

    /// The inner layer sees `rows · steps` rows.
    fn reserve_workspace(
        &mut self,
        rows: usize,
        steps: usize,
        who: &str,
    ) -> Result<(), ferrodl_tensor::memory::MemoryError> {
        self.inner
            .reserve_workspace(rows.saturating_mul(steps), 1, who)
    }

    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        ctx: &mut Ctx,
    ) {
        let (n, t) = (batch.rows, batch.time_steps);
        ensure(&mut self.x, n * t * self.c_in);
        ensure(&mut self.y, n * t * self.c_out);
        let x = &mut self.x[..n * t * self.c_in];
        ncw_to_nwc(input, n, self.c_in, t, x);
        let y = &mut self.y[..n * t * self.c_out];
        self.inner
            .forward(params, x, &Self::inner_batch(batch), y, ctx);
        nwc_to_ncw(y, n, self.c_out, t, output);
    }

    fn backward(
        &mut self,
        params: &[T],
        _input: &[T],
        _output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let (n, t) = (batch.rows, batch.time_steps);
        ensure(&mut self.dy, n * t * self.c_out);
        let dy = &mut self.dy[..n * t * self.c_out];
        ncw_to_nwc(delta, n, self.c_out, t, dy);
        let inner = Self::inner_batch(batch);
        let (x, y) = (&self.x[..n * t * self.c_in], &self.y[..n * t * self.c_out]);
        match grad_input {
            Some(gx) => {
                ensure(&mut self.dx, n * t * self.c_in);
                let dx = &mut self.dx[..n * t * self.c_in];
                self.inner
                    .backward(params, x, y, &inner, dy, grads, Some(dx));
                nwc_to_ncw(dx, n, self.c_in, t, gx);
            }
            None => self.inner.backward(params, x, y, &inner, dy, grads, None),
        }
    }
}
