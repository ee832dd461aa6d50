//! `LSTM` and `GravesLSTM` (the same cell, GravesLSTM with peephole connections), the
//! reference's gate layout and defaults.
//!
//! Per step, with `z = x·W + h₋₁·RW + b` split into four blocks of `nOut` columns
//! `[a | f | o | g]` (the reference's order: cell input, forget, output, input gate):
//! `a = act(z_a)`, `f = gate(z_f + c₋₁⊙p_f)`, `g = gate(z_g + c₋₁⊙p_g)`, `c = f⊙c₋₁ + g⊙a`,
//! `o = gate(z_o + c⊙p_o)`, `h = o⊙act(c)` — the peephole terms `p` (the last three columns of
//! GravesLSTM's `RW`: `p_f, p_o, p_g`) only for GravesLSTM. A masked step (feature mask 0)
//! outputs 0 and zeroes the carried `h` and `c`, as the reference does.
//!
//! The input projection of all steps is one matrix product over the time-major input; each step
//! then adds `h₋₁·RW` and runs the cell element-wise (`lstm_cell.rs`, fused and vectorised).
//! Backward runs the steps in reverse (at most `Batch::backprop_steps` of them), per step the
//! cell and `dh₋₁ = dz·RWᵀ` (`RWᵀ` stored transposed once per backward pass); the `RW` gradient
//! (`Σ h₋₁ᵀ·dz` over the steps), the peephole gradients, the `W` gradient and the input gradient
//! are one pass each. The per-step work is cut by rows of the minibatch, one block per thread,
//! each block running all its steps alone (`on_row_blocks`).

use super::recurrent::{
    elementwise, ensure, infer_recurrent_n_in, ncw_to_tnc, product, recurrent_input, reserve_all,
    tnc_to_ncw, StateSlots,
};
use super::lstm_cell::{self, Acts, StepBwd, StepFwd};
use super::{Batch, Ctx, Layer, ParamKind, ParamSpec, StateMode};
use crate::config::{Activation, Distribution, LayerShapes, RnnFormat, Shape, ShapeCx, WeightInit};
use crate::init::init_weights;
use crate::layers::LayerKind;
use crate::NnError;
use ferrodl_tensor::{
    add_row_vector, chunk_len, column_sums, gemm, gemm_resident_b, num_threads, parallel_for_each, Op, Rng,
    Scalar,
};
use std::marker::PhantomData;

/// The reference's state keys: the last output and the last cell state.
const KEYS: &[&str] = &["prevAct", "prevMem"];

#[derive(Debug)]
pub struct LstmLayer<T> {
    type_name: &'static str,
    n_in: usize,
    h: usize,
    peephole: bool,
    act: Activation,
    gate: Activation,
    weight_init: WeightInit,
    distribution: Option<Distribution>,
    weight_init_recurrent: WeightInit,
    distribution_recurrent: Option<Distribution>,
    forget_bias: f64,
    /// Scratch (grown, never shrunk): time-major input, pre-activations and gate values
    /// `[T, N, 4H]`, cell states before masking `[T, N, H]`, `act(c)`, and the carried `h`/`c`
    /// `[T+1, N, H]` (block 0 is the initial state).
    x: Vec<T>,
    z: Vec<T>,
    gates: Vec<T>,
    c_raw: Vec<T>,
    act_c: Vec<T>,
    hs: Vec<T>,
    cs: Vec<T>,
    /// `RW` without the peephole columns, contiguous for the per-step product; GravesLSTM's
    /// peephole columns as `[p_f | p_o | p_g]` (3 × nOut) and their gradient.
    rw: Vec<T>,
    /// `rw` transposed (`4H × H`), for the backward `dz·RWᵀ`.
    rwt: Vec<T>,
    peep: Vec<T>,
    gpeep: Vec<T>,
    /// Backward scratch: `dL/dh` time-major, `dL/dz`, carried `dh`/`dc`, the `RW` gradient.
    dh_out: Vec<T>,
    dz: Vec<T>,
    dh: Vec<T>,
    dc: Vec<T>,
    drw: Vec<T>,
    dx: Vec<T>,
    states: StateSlots<T>,
    /// Rows and steps of the last forward pass.
    last: (usize, usize),
}

impl<T: Scalar> LstmLayer<T> {
    fn g4(&self) -> usize {
        4 * self.h
    }

    fn rw_cols(&self) -> usize {
        self.g4() + if self.peephole { 3 } else { 0 }
    }

    fn n_w(&self) -> usize {
        self.n_in * self.g4()
    }

    fn n_rw(&self) -> usize {
        self.h * self.rw_cols()
    }

    /// `(W, RW, b)` of a parameter (or gradient) block.
    fn split<'p>(&self, p: &'p [T]) -> (&'p [T], &'p [T], &'p [T]) {
        let (w, rest) = p.split_at(self.n_w());
        let (rw, b) = rest.split_at(self.n_rw());
        (w, rw, b)
    }

    /// Copies `RW`'s gate columns into the contiguous `H × 4H` matrix the products use, and
    /// the peephole columns into `[p_f | p_o | p_g]`.
    fn load_rw(&mut self, rw_full: &[T]) {
        let (h, g4, cols) = (self.h, self.g4(), self.rw_cols());
        ensure(&mut self.rw, h * g4);
        for j in 0..h {
            self.rw[j * g4..(j + 1) * g4].copy_from_slice(&rw_full[j * cols..j * cols + g4]);
        }
        if self.peephole {
            ensure(&mut self.peep, 3 * h);
            for j in 0..h {
                for k in 0..3 {
                    self.peep[k * h + j] = rw_full[j * cols + g4 + k];
                }
            }
        }
    }

    /// The peephole weights the cell uses (empty for LSTM).
    fn peep_len(&self) -> usize {
        if self.peephole {
            3 * self.h
        } else {
            0
        }
    }
}

impl<T: Scalar> Layer<T> for LstmLayer<T> {
    fn type_name(&self) -> &'static str {
        self.type_name
    }

    fn input_shape(&self) -> Shape {
        Shape::Seq {
            c: self.n_in,
            len: 0,
        }
    }

    fn output_shape(&self) -> Shape {
        Shape::Seq { c: self.h, len: 0 }
    }

    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        Ok(steps)
    }

    fn param_specs(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new("W", ParamKind::Weight, vec![self.n_in, self.g4()]),
            ParamSpec::new("RW", ParamKind::Weight, vec![self.h, self.rw_cols()]),
            ParamSpec::new("b", ParamKind::Bias, vec![self.g4()]),
        ]
    }

    /// `W` then `RW` from the RNG (fan-in `nOut`, fan-out `nIn + nOut`, the reference's), then
    /// `b`: 0 except the forget-gate block, `forgetGateBiasInit`.
    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        let (n_w, n_rw) = (self.n_w(), self.n_rw());
        let (w, rest) = params.split_at_mut(n_w);
        let (rw, b) = rest.split_at_mut(n_rw);
        let (fan_in, fan_out) = (self.h as f64, (self.n_in + self.h) as f64);
        init_weights(
            self.weight_init,
            self.distribution,
            fan_in,
            fan_out,
            &[self.n_in, self.g4()],
            w,
            rng,
        );
        init_weights(
            self.weight_init_recurrent,
            self.distribution_recurrent,
            fan_in,
            fan_out,
            &[self.h, self.rw_cols()],
            rw,
            rng,
        );
        b.fill(T::zero());
        b[self.h..2 * self.h].fill(T::of(self.forget_bias));
    }

    fn state_keys(&self) -> &'static [&'static str] {
        KEYS
    }

    /// Every buffer forward and backward use for `rows` examples of `steps` steps.
    fn reserve_workspace(
        &mut self,
        rows: usize,
        steps: usize,
        who: &str,
    ) -> Result<(), ferrodl_tensor::memory::MemoryError> {
        let (n, t, c_in, h, g4) = (rows, steps, self.n_in, self.h, self.g4());
        let t1 = t.checked_add(1);
        let tn = product(&[t, n]);
        let tnh = tn.and_then(|x| x.checked_mul(h));
        let tng = tn.and_then(|x| x.checked_mul(g4));
        let tnc = tn.and_then(|x| x.checked_mul(c_in));
        let t1nh = t1.and_then(|t1| product(&[t1, n, h]));
        let np = Some(if self.peephole { 3 * h } else { 0 });
        let LstmLayer { x, z, gates, c_raw, act_c, hs, cs, rw, rwt, peep, gpeep, dh_out, dz, dh, dc, drw, dx, .. } = self;
        reserve_all(
            &mut [
                (x, tnc), (z, tng), (gates, tng), (c_raw, tnh), (act_c, tnh), (hs, t1nh),
                (cs, t1nh), (rw, product(&[h, g4])), (rwt, product(&[h, g4])), (peep, np), (gpeep, np), (dh_out, tnh), (dz, tng),
                (dh, product(&[n, h])), (dc, product(&[n, h])), (drw, product(&[h, g4])), (dx, tnc),
            ],
            || format!("the recurrent workspace of {who} for {rows} examples of {steps} steps"),
        )
    }

    fn state(&self, key: &str) -> Option<&[T]> {
        let k = KEYS.iter().position(|&k| k == key)?;
        self.states.get(k)
    }

    fn set_state(&mut self, key: &str, values: &[T], rows: usize) -> Result<(), String> {
        let k = KEYS
            .iter()
            .position(|&k| k == key)
            .ok_or_else(|| format!("has no state {key:?} (its states: {KEYS:?})"))?;
        self.states.set(k, KEYS.len(), self.h, values, rows)
    }

    fn clear_state(&mut self, mode: StateMode) {
        self.states.clear(mode);
    }

    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        ctx: &mut Ctx,
    ) {
        let (n, t, c_in, h) = (batch.rows, batch.time_steps, self.n_in, self.h);
        let g4 = self.g4();
        let nh = n * h;
        self.last = (n, t);
        ensure(&mut self.x, t * n * c_in);
        ensure(&mut self.z, t * n * g4);
        ensure(&mut self.gates, t * n * g4);
        ensure(&mut self.c_raw, t * nh);
        ensure(&mut self.act_c, t * nh);
        ensure(&mut self.hs, (t + 1) * nh);
        ensure(&mut self.cs, (t + 1) * nh);
        let (w, rw_full, b) = self.split(params);
        ncw_to_tnc(input, n, c_in, t, &mut self.x);
        gemm(
            Op::N,
            Op::N,
            t * n,
            g4,
            c_in,
            T::one(),
            &self.x[..t * n * c_in],
            w,
            T::zero(),
            &mut self.z[..t * n * g4],
        );
        add_row_vector(&mut self.z[..t * n * g4], g4, b);
        match self.states.start(ctx.state, n) {
            Some(s) => {
                self.hs[..nh].copy_from_slice(&s.values[0]);
                self.cs[..nh].copy_from_slice(&s.values[1]);
            }
            None => {
                self.hs[..nh].fill(T::zero());
                self.cs[..nh].fill(T::zero());
            }
        }
        self.load_rw(rw_full);
        let acts = Acts { act: self.act, gate: self.gate };
        let peep = &self.peep[..self.peep_len()];
        let rw = &self.rw[..h * g4];
        let (z, gates) = (Rows::new(&mut self.z[..t * n * g4]), Rows::new(&mut self.gates[..t * n * g4]));
        let (c_raw, act_c) = (Rows::new(&mut self.c_raw[..t * nh]), Rows::new(&mut self.act_c[..t * nh]));
        let (hs, cs) = (Rows::new(&mut self.hs[..(t + 1) * nh]), Rows::new(&mut self.cs[..(t + 1) * nh]));
        let mask = batch.mask;
        let run = |(r0, r1): (usize, usize)| {
            let nb = r1 - r0;
            for s in 0..t {
                let (zb, cb) = (s * n * g4 + r0 * g4, s * nh + r0 * h);
                let (hb, hb1) = (cb, cb + nh);
                // SAFETY: rows r0..r1 of one step's blocks, which no other block of rows
                // touches; h and c of step s (read) and s + 1 (written) are distinct ranges.
                let (h_prev, step) = unsafe {
                    let step = StepFwd {
                        z: z.get(zb, nb * g4),
                        gates: gates.get(zb, nb * g4),
                        c_raw: c_raw.get(cb, nb * h),
                        act_c: act_c.get(cb, nb * h),
                        c_prev: cs.get(hb, nb * h),
                        c_next: cs.get(hb1, nb * h),
                        h_next: hs.get(hb1, nb * h),
                    };
                    (&*hs.get(hb, nb * h), step)
                };
                // RW is read by every step: kept in cache, read in place
                gemm_resident_b(Op::N, Op::N, nb, g4, h, T::one(), h_prev, rw, T::one(), &mut *step.z);
                lstm_cell::forward(nb, h, step, peep, |i| mask.map_or(T::one(), |mk| mk.at(r0 + i, s)), acts);
            }
        };
        on_row_blocks(n, run);
        tnc_to_ncw(&self.hs[nh..(t + 1) * nh], n, h, t, output);
        if ctx.state != StateMode::Stateless {
            let keep = vec![
                self.hs[t * nh..(t + 1) * nh].to_vec(),
                self.cs[t * nh..(t + 1) * nh].to_vec(),
            ];
            self.states.keep(ctx.state, n, keep);
        }
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
        let (n, t, c_in, h) = (batch.rows, batch.time_steps, self.n_in, self.h);
        debug_assert_eq!((n, t), self.last, "backward after a forward of another shape");
        let g4 = self.g4();
        let nh = n * h;
        let (n_w, n_rw) = (self.n_w(), self.n_rw());
        ensure(&mut self.dh_out, t * nh);
        ensure(&mut self.dz, t * n * g4);
        ensure(&mut self.dh, nh);
        ensure(&mut self.dc, nh);
        ensure(&mut self.drw, h * g4);
        let np = self.peep_len();
        ensure(&mut self.gpeep, np);
        ncw_to_tnc(delta, n, h, t, &mut self.dh_out);
        self.dh[..nh].fill(T::zero());
        self.dc[..nh].fill(T::zero());
        self.gpeep[..np].fill(T::zero());
        grads.fill(T::zero());
        let acts = Acts { act: self.act, gate: self.gate };
        let peep = &self.peep[..np];
        let cols = self.rw_cols();
        let stop = t - t.min(batch.backprop_steps);
        self.dz[..stop * n * g4].fill(T::zero());
        // RWᵀ as a row-major 4H × H matrix: dz·RWᵀ then reads it in place (the short-A GEMM
        // path) instead of packing the transpose again at every step
        ensure(&mut self.rwt, g4 * h);
        transpose(&self.rw[..h * g4], h, g4, &mut self.rwt[..g4 * h]);
        let rwt = &self.rwt[..g4 * h];
        let (z, gates, c_raw, act_c) = (&self.z, &self.gates, &self.c_raw, &self.act_c);
        let (cs, dh_out) = (&self.cs, &self.dh_out);
        let (dz, dh, dc) = (Rows::new(&mut self.dz[..t * n * g4]), Rows::new(&mut self.dh[..nh]), Rows::new(&mut self.dc[..nh]));
        let mask = batch.mask;
        let run = |(r0, r1): (usize, usize)| {
            let nb = r1 - r0;
            let (zr, hr) = (r0 * g4..r0 * g4 + nb * g4, r0 * h..r0 * h + nb * h);
            // SAFETY: rows r0..r1, which no other block of rows touches.
            let (dh, dc) = unsafe { (dh.get(hr.start, nb * h), dc.get(hr.start, nb * h)) };
            for s in (stop..t).rev() {
                let (zo, ho) = (s * n * g4, s * nh);
                let zs = (zo + zr.start)..(zo + zr.end);
                let hs = (ho + hr.start)..(ho + hr.end);
                // SAFETY: as above, rows r0..r1 of step s.
                let dzs = unsafe { dz.get(zs.start, nb * g4) };
                let step = StepBwd {
                    z: &z[zs.clone()],
                    gates: &gates[zs],
                    c_raw: &c_raw[hs.clone()],
                    act_c: &act_c[hs.clone()],
                    c_prev: &cs[hs.clone()],
                    dh_out: &dh_out[hs],
                    dh_next: &*dh,
                    dc: &mut *dc,
                    dz: &mut *dzs,
                };
                lstm_cell::backward(nb, h, step, peep, |i| mask.map_or(T::one(), |mk| mk.at(r0 + i, s)), acts);
                // dh₋₁ = dz·RWᵀ, except before the first step run (nothing reads it there)
                if s > stop {
                    gemm_resident_b(Op::N, Op::N, nb, h, g4, T::one(), dzs, rwt, T::zero(), &mut *dh);
                }
            }
        };
        on_row_blocks(n, run);
        if self.peephole {
            // Σ over the steps run (latest first) and rows of dz·(c₋₁ or c): the order the
            // per-step sums had when the cell accumulated them, cut by units instead of rows
            let (gf, rest) = self.gpeep[..np].split_at_mut(h);
            let (go, gg) = rest.split_at_mut(h);
            let c = chunk_len(h, 16);
            let items: Vec<_> = gf.chunks_mut(c).zip(go.chunks_mut(c)).zip(gg.chunks_mut(c)).enumerate().collect();
            let (dz, cs, c_raw) = (&self.dz, &self.cs, &self.c_raw);
            parallel_for_each(items, |(k, ((gf, go), gg))| {
                lstm_cell::peephole_grads(n, h, (stop..t).rev(), k * c, dz, cs, c_raw, [gf, go, gg]);
            });
        }
        // dRW = Σ h₋₁ᵀ·dz over the steps run: hs blocks stop..t are those steps' h₋₁, so one product
        let k = (t - stop) * n;
        gemm(
            Op::T,
            Op::N,
            h,
            g4,
            k,
            T::one(),
            &self.hs[stop * nh..t * nh],
            &self.dz[stop * n * g4..t * n * g4],
            T::zero(),
            &mut self.drw[..h * g4],
        );
        let (gw, rest) = grads.split_at_mut(n_w);
        let (grw, gb) = rest.split_at_mut(n_rw);
        let dz = &self.dz[..t * n * g4];
        gemm(Op::T, Op::N, c_in, g4, t * n, T::one(), &self.x[..t * n * c_in], dz, T::zero(), gw);
        column_sums(dz, g4, T::zero(), gb);
        for j in 0..h {
            grw[j * cols..j * cols + g4].copy_from_slice(&self.drw[j * g4..(j + 1) * g4]);
            if self.peephole {
                for k in 0..3 {
                    grw[j * cols + g4 + k] = self.gpeep[k * h + j];
                }
            }
        }
        if let Some(gx) = grad_input {
            ensure(&mut self.dx, t * n * c_in);
            let w = &params[..n_w];
            gemm(Op::N, Op::T, t * n, c_in, g4, T::one(), dz, w, T::zero(), &mut self.dx[..t * n * c_in]);
            tnc_to_ncw(&self.dx, n, c_in, t, gx);
        }
    }
}

/// Blocks of rows for [`on_row_blocks`]: one per thread, in multiples of 8 rows (the short-A
/// GEMM's register tile), none smaller than 8 rows.
fn row_blocks(n: usize, threads: usize) -> Vec<(usize, usize)> {
    let parts = threads.min(n / 8).max(1);
    let len = n.div_ceil(parts).div_ceil(8) * 8;
    (0..n).step_by(len.max(1)).map(|r0| (r0, (r0 + len).min(n))).collect()
}

/// Runs the recurrence of each block of rows ([`row_blocks`]) on its own thread. The rows of a
/// minibatch are independent (a row's `h` and `c` depend only on its own past), so each block
/// runs all its steps without waiting for the others: the per-step products and cells of the
/// whole minibatch ran one after the other on one thread (the cell) or were split per step
/// (the products), a few microseconds each. Every element is computed as on one thread (a
/// product's elements do not depend on how its rows are cut), so results are the same bits.
/// One block (few rows or one thread): run here, its products split by the GEMM as usual.
fn on_row_blocks(n: usize, f: impl Fn((usize, usize)) + Sync) {
    let blocks = row_blocks(n, num_threads());
    match blocks.len() {
        0 => {}
        1 => f(blocks[0]),
        _ => parallel_for_each(blocks, f),
    }
}

/// A scratch buffer that the blocks of [`on_row_blocks`] share, each reading and writing only
/// its own rows of it.
struct Rows<'a, T> {
    ptr: *mut T,
    len: usize,
    _buf: PhantomData<&'a mut [T]>,
}

// SAFETY: `Rows` hands out only ranges its callers guarantee disjoint between threads.
unsafe impl<T: Send> Sync for Rows<'_, T> {}
unsafe impl<T: Send> Send for Rows<'_, T> {}

impl<'a, T> Rows<'a, T> {
    fn new(v: &'a mut [T]) -> Self {
        Rows { ptr: v.as_mut_ptr(), len: v.len(), _buf: PhantomData }
    }

    /// # Safety
    /// No other live reference may overlap `start..start + len` while the result is in use.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self, start: usize, len: usize) -> &'a mut [T] {
        assert!(start <= self.len && len <= self.len - start, "rows out of range");
        std::slice::from_raw_parts_mut(self.ptr.add(start), len)
    }
}

/// `out` (`cols × rows`) = the transpose of `m` (`rows × cols`), both row-major; in tiles so
/// that neither side is walked with a large stride for long.
fn transpose<T: Copy>(m: &[T], rows: usize, cols: usize, out: &mut [T]) {
    const B: usize = 16;
    for r0 in (0..rows).step_by(B) {
        for c0 in (0..cols).step_by(B) {
            for c in c0..(c0 + B).min(cols) {
                for r in r0..(r0 + B).min(rows) {
                    out[c * rows + r] = m[r * cols + c];
                }
            }
        }
    }
}

macro_rules! lstm_config {
    ($(#[$m:meta])* $name:ident, $type_name:literal, $peephole:literal) => {
        crate::config::layers::base_layer!(
            $(#[$m])*
            $name, default_activation = "crate::config::defaults::tanh_activation", {
                #[serde(default = "crate::config::defaults::sigmoid_activation")]
                gate_activation_fn: Activation,
                #[serde(default = "crate::config::defaults::default_one")]
                forget_gate_bias_init: f64,
                #[serde(default)]
                weight_init_recurrent: Option<WeightInit>,
                #[serde(default)]
                weight_init_recurrent_distribution: Option<Distribution>,
                #[serde(default)]
                rnn_data_format: RnnFormat,
            }
        );

        impl LayerKind for $name {
            fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
                let (_, len) = recurrent_input(cx, $type_name, self.n_in)?;
                cx.positive("nOut", self.n_out)?;
                elementwise(cx, "activation", self.activation)?;
                elementwise(cx, "gateActivationFn", self.gate_activation_fn)?;
                Ok(Shape::Seq { c: self.n_out, len })
            }

            fn infer_n_in(&mut self, input: Shape) {
                infer_recurrent_n_in(&mut self.n_in, input);
            }

            fn rnn_format(&self) -> Option<RnnFormat> {
                Some(self.rnn_data_format)
            }

            fn build<T: Scalar>(&self, _shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
                Ok(Box::new(LstmLayer {
                    type_name: $type_name,
                    n_in: self.n_in,
                    h: self.n_out,
                    peephole: $peephole,
                    act: self.activation,
                    gate: self.gate_activation_fn,
                    weight_init: self.weight_init,
                    distribution: self.weight_init_distribution,
                    weight_init_recurrent: self.weight_init_recurrent.unwrap_or(self.weight_init),
                    distribution_recurrent: match self.weight_init_recurrent {
                        Some(_) => self.weight_init_recurrent_distribution,
                        None => self.weight_init_distribution,
                    },
                    forget_bias: self.forget_gate_bias_init,
                    x: Vec::new(),
                    z: Vec::new(),
                    gates: Vec::new(),
                    c_raw: Vec::new(),
                    act_c: Vec::new(),
                    hs: Vec::new(),
                    cs: Vec::new(),
                    rw: Vec::new(),
                    rwt: Vec::new(),
                    peep: Vec::new(),
                    gpeep: Vec::new(),
                    dh_out: Vec::new(),
                    dz: Vec::new(),
                    dh: Vec::new(),
                    dc: Vec::new(),
                    drw: Vec::new(),
                    dx: Vec::new(),
                    states: StateSlots::default(),
                    last: (0, 0),
                }))
            }
        }
    };
}

lstm_config!(
    /// `LSTM`: the long short-term memory layer without peephole connections.
    LSTMConfig, "LSTM", false
);
lstm_config!(
    /// `GravesLSTM`: LSTM with peephole connections (Graves 2013), the three peephole weights per
    /// unit stored as the last three columns of `RW`.
    GravesLSTMConfig, "GravesLSTM", true
);
