//! `SimpleRnn`: `h_t = act(x_t·W + h_{t−1}·RW + b)` (the reference's Elman layer). A masked step
//! outputs 0 and carries a zero state, as in the reference. With `hasLayerNorm` (the reference's
//! option) both products are layer-normalized with their own gains, `g = [gx | gr]` (`[2·nOut]`,
//! initialised to 1): `h_t = act(gx ⊙ LN(x_t·W) + b + gr ⊙ LN(h_{t−1}·RW))` (`layer_norm.rs`).

use super::recurrent::{
    elementwise, ensure, infer_recurrent_n_in, ncw_to_tnc, product, recurrent_input, reserve_all,
    tnc_to_ncw, StateSlots,
};
use super::layer_norm::{standardize_rows, standardize_rows_backward};
use super::{Batch, Ctx, Layer, ParamKind, ParamSpec, StateMode};
use crate::config::{Activation, Distribution, LayerShapes, RnnFormat, Shape, ShapeCx, WeightInit};
use crate::init::init_weights;
use crate::layers::LayerKind;
use crate::NnError;
use ferrodl_tensor::{add_row_vector, column_sums, gemm, gemm_resident_b, Op, Rng, Scalar};

const KEYS: &[&str] = &["prevAct"];

#[derive(Debug)]
pub struct SimpleRnnLayer<T> {
    n_in: usize,
    h: usize,
    act: Activation,
    weight_init: WeightInit,
    distribution: Option<Distribution>,
    weight_init_recurrent: WeightInit,
    distribution_recurrent: Option<Distribution>,
    /// Scratch: time-major input, pre-activations and activations `[T, N, H]` (before
    /// masking), carried `h` `[T+1, N, H]`; backward's `dL/dh`, `dL/dz`, carried `dh`.
    x: Vec<T>,
    z: Vec<T>,
    a: Vec<T>,
    hs: Vec<T>,
    dh_out: Vec<T>,
    dz: Vec<T>,
    dh: Vec<T>,
    dx: Vec<T>,
    states: StateSlots<T>,
    /// `hasLayerNorm`: the standardized `x·W` and `h·RW` `[T, N, H]` with their row deviations
    /// `[T, N]`, the recurrent product of one step, and backward's `dL/d(x·W)`.
    layer_norm: bool,
    xhat_x: Vec<T>,
    sd_x: Vec<T>,
    xhat_r: Vec<T>,
    sd_r: Vec<T>,
    r: Vec<T>,
    du: Vec<T>,
}

impl<T: Scalar> SimpleRnnLayer<T> {
    fn n_w(&self) -> usize {
        self.n_in * self.h
    }
}

impl<T: Scalar> Layer<T> for SimpleRnnLayer<T> {
    fn type_name(&self) -> &'static str {
        "SimpleRnn"
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
        let mut v = vec![
            ParamSpec::new("W", ParamKind::Weight, vec![self.n_in, self.h]),
            ParamSpec::new("RW", ParamKind::Weight, vec![self.h, self.h]),
            ParamSpec::new("b", ParamKind::Bias, vec![self.h]),
        ];
        if self.layer_norm {
            // Gains, regularized and updated as biases (the reference's bias-type parameter).
            v.push(ParamSpec::new("g", ParamKind::Bias, vec![2 * self.h]));
        }
        v
    }

    /// `W` (fan-in `nIn`, fan-out `nOut`), then `RW` (fan-in = fan-out = `nOut`); `b` = 0.
    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        let (w, rest) = params.split_at_mut(self.n_w());
        let (rw, rest) = rest.split_at_mut(self.h * self.h);
        let (b, g) = rest.split_at_mut(self.h);
        g.fill(T::one());
        let (n_in, h) = (self.n_in as f64, self.h as f64);
        init_weights(
            self.weight_init,
            self.distribution,
            n_in,
            h,
            &[self.n_in, self.h],
            w,
            rng,
        );
        init_weights(
            self.weight_init_recurrent,
            self.distribution_recurrent,
            h,
            h,
            &[self.h, self.h],
            rw,
            rng,
        );
        b.fill(T::zero());
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
        let (n, t, c_in, h) = (rows, steps, self.n_in, self.h);
        let tnh = product(&[t, n, h]);
        let tnc = product(&[t, n, c_in]);
        let t1nh = t.checked_add(1).and_then(|t1| product(&[t1, n, h]));
        let ln = |v: Option<usize>| if self.layer_norm { v } else { Some(0) };
        let (ln_tnh, ln_tn, ln_nh) = (ln(tnh), ln(product(&[t, n])), ln(product(&[n, h])));
        let SimpleRnnLayer { x, z, a, hs, dh_out, dz, dh, dx, xhat_x, sd_x, xhat_r, sd_r, r, du, .. } =
            self;
        reserve_all(
            &mut [
                (x, tnc), (z, tnh), (a, tnh), (hs, t1nh), (dh_out, tnh), (dz, tnh),
                (dh, product(&[n, h])), (dx, tnc), (xhat_x, ln_tnh), (sd_x, ln_tn),
                (xhat_r, ln_tnh), (sd_r, ln_tn), (r, ln_nh), (du, ln_tnh),
            ],
            || format!("the recurrent workspace of {who} for {rows} examples of {steps} steps"),
        )
    }

    fn state(&self, key: &str) -> Option<&[T]> {
        (key == KEYS[0]).then(|| self.states.get(0)).flatten()
    }

    fn set_state(&mut self, key: &str, values: &[T], rows: usize) -> Result<(), String> {
        if key != KEYS[0] {
            return Err(format!("has no state {key:?} (its states: {KEYS:?})"));
        }
        self.states.set(0, 1, self.h, values, rows)
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
        let nh = n * h;
        ensure(&mut self.x, t * n * c_in);
        ensure(&mut self.z, t * nh);
        ensure(&mut self.a, t * nh);
        ensure(&mut self.hs, (t + 1) * nh);
        let (w, rest) = params.split_at(self.n_w());
        let (rw, rest) = rest.split_at(h * h);
        let (b, g) = rest.split_at(h);
        let (gx, gr) = g.split_at(g.len() / 2);
        ncw_to_tnc(input, n, c_in, t, &mut self.x);
        gemm(
            Op::N,
            Op::N,
            t * n,
            h,
            c_in,
            T::one(),
            &self.x[..t * n * c_in],
            w,
            T::zero(),
            &mut self.z[..t * nh],
        );
        if self.layer_norm {
            ensure(&mut self.xhat_x, t * nh);
            ensure(&mut self.sd_x, t * n);
            ensure(&mut self.xhat_r, t * nh);
            ensure(&mut self.sd_r, t * n);
            ensure(&mut self.r, nh);
            standardize_rows(&self.z[..t * nh], h, &mut self.xhat_x[..t * nh], &mut self.sd_x[..t * n]);
            for (zr, xr) in self.z[..t * nh].chunks_exact_mut(h).zip(self.xhat_x.chunks_exact(h)) {
                for ((zv, &xv), &gv) in zr.iter_mut().zip(xr).zip(gx) {
                    *zv = gv * xv;
                }
            }
        }
        add_row_vector(&mut self.z[..t * nh], h, b);
        match self.states.start(ctx.state, n) {
            Some(s) => self.hs[..nh].copy_from_slice(&s.values[0]),
            None => self.hs[..nh].fill(T::zero()),
        }
        for s in 0..t {
            let (h_prev, h_next) = self.hs[s * nh..(s + 2) * nh].split_at_mut(nh);
            let zs = &mut self.z[s * nh..(s + 1) * nh];
            if self.layer_norm {
                let r = &mut self.r[..nh];
                // RW is read by every step: kept in cache, read in place
                gemm_resident_b(Op::N, Op::N, n, h, h, T::one(), h_prev, rw, T::zero(), r);
                let xr = &mut self.xhat_r[s * nh..(s + 1) * nh];
                standardize_rows(r, h, xr, &mut self.sd_r[s * n..(s + 1) * n]);
                for (zr, xrr) in zs.chunks_exact_mut(h).zip(xr.chunks_exact(h)) {
                    for ((zv, &xv), &gv) in zr.iter_mut().zip(xrr).zip(gr) {
                        *zv = *zv + gv * xv;
                    }
                }
            } else {
                gemm_resident_b(Op::N, Op::N, n, h, h, T::one(), h_prev, rw, T::one(), zs);
            }
            let as_ = &mut self.a[s * nh..(s + 1) * nh];
            for i in 0..n {
                let m = batch.mask.map_or(T::one(), |mk| mk.at(i, s));
                for j in 0..h {
                    let k = i * h + j;
                    let a = self.act.scalar(zs[k]);
                    as_[k] = a;
                    h_next[k] = m * a;
                }
            }
        }
        tnc_to_ncw(&self.hs[nh..(t + 1) * nh], n, h, t, output);
        if ctx.state != StateMode::Stateless {
            self.states
                .keep(ctx.state, n, vec![self.hs[t * nh..(t + 1) * nh].to_vec()]);
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
        let nh = n * h;
        let n_w = self.n_w();
        ensure(&mut self.dh_out, t * nh);
        ensure(&mut self.dz, t * nh);
        ensure(&mut self.dh, nh);
        ncw_to_tnc(delta, n, h, t, &mut self.dh_out);
        self.dh[..nh].fill(T::zero());
        let (w, rest) = params.split_at(n_w);
        let rw = &rest[..h * h];
        let g = &rest[h * h + h..];
        let (gx, gr) = g.split_at(g.len() / 2);
        let (gw, grest) = grads.split_at_mut(n_w);
        let (grw, grest) = grest.split_at_mut(h * h);
        let (gb, gg) = grest.split_at_mut(h);
        let (ggx, ggr) = gg.split_at_mut(gg.len() / 2);
        grw.fill(T::zero());
        ggr.fill(T::zero());
        if self.layer_norm {
            ensure(&mut self.du, t * nh);
        }
        let stop = t - t.min(batch.backprop_steps);
        self.dz[..stop * nh].fill(T::zero());
        for s in (stop..t).rev() {
            let dzs = &mut self.dz[s * nh..(s + 1) * nh];
            for i in 0..n {
                let m = batch.mask.map_or(T::one(), |mk| mk.at(i, s));
                for j in 0..h {
                    let k = i * h + j;
                    let dh = (self.dh_out[s * nh + k] + self.dh[k]) * m;
                    dzs[k] = dh * self.act.derivative(self.z[s * nh + k], self.a[s * nh + k]);
                }
            }
            let h_prev = &self.hs[s * nh..(s + 1) * nh];
            // dL/d(h·RW): through the normalization when there is one.
            let dr: &[T] = if self.layer_norm {
                let xr = &self.xhat_r[s * nh..(s + 1) * nh];
                let dxhat = &mut self.r[..nh]; // forward's scratch, free here
                for ((d, &dzv), k) in dxhat.iter_mut().zip(dzs.iter()).zip(0..) {
                    *d = dzv * gr[k % h];
                    ggr[k % h] = ggr[k % h] + dzv * xr[k];
                }
                let du = &mut self.du[s * nh..(s + 1) * nh];
                standardize_rows_backward(xr, &self.sd_r[s * n..(s + 1) * n], dxhat, h, du);
                du
            } else {
                dzs
            };
            gemm(Op::T, Op::N, h, h, n, T::one(), h_prev, dr, T::one(), grw);
            gemm(Op::N, Op::T, n, h, h, T::one(), dr, rw, T::zero(), &mut self.dh[..nh]);
        }
        let dz = &self.dz[..t * nh];
        column_sums(dz, h, T::zero(), gb);
        // dL/d(x·W): through the normalization when there is one.
        let du: &[T] = if self.layer_norm {
            ggx.fill(T::zero());
            let dxhat = &mut self.dh_out[..t * nh]; // dL/dh of the steps, no longer needed
            for (k, ((d, &dzv), &xv)) in dxhat.iter_mut().zip(dz).zip(&self.xhat_x[..t * nh]).enumerate() {
                *d = dzv * gx[k % h];
                ggx[k % h] = ggx[k % h] + dzv * xv;
            }
            standardize_rows_backward(&self.xhat_x[..t * nh], &self.sd_x[..t * n], dxhat, h, &mut self.du[..t * nh]);
            &self.du[..t * nh]
        } else {
            dz
        };
        gemm(Op::T, Op::N, c_in, h, t * n, T::one(), &self.x[..t * n * c_in], du, T::zero(), gw);
        if let Some(gx) = grad_input {
            ensure(&mut self.dx, t * n * c_in);
            gemm(Op::N, Op::T, t * n, c_in, h, T::one(), du, w, T::zero(), &mut self.dx[..t * n * c_in]);
            tnc_to_ncw(&self.dx, n, c_in, t, gx);
        }
    }
}

crate::config::layers::base_layer!(
    /// `SimpleRnn`: the Elman recurrent layer.
    SimpleRnnConfig, default_activation = "crate::config::defaults::tanh_activation", {
        #[serde(default)]
        weight_init_recurrent: Option<WeightInit>,
        #[serde(default)]
        weight_init_recurrent_distribution: Option<Distribution>,
        #[serde(default)]
        rnn_data_format: RnnFormat,
        #[serde(default)]
        has_layer_norm: bool,
    }
);

impl LayerKind for SimpleRnnConfig {
    fn rnn_format(&self) -> Option<RnnFormat> {
        Some(self.rnn_data_format)
    }

    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (_, len) = recurrent_input(cx, "SimpleRnn", self.n_in)?;
        cx.positive("nOut", self.n_out)?;
        elementwise(cx, "activation", self.activation)?;
        Ok(Shape::Seq { c: self.n_out, len })
    }

    fn infer_n_in(&mut self, input: Shape) {
        infer_recurrent_n_in(&mut self.n_in, input);
    }

    fn build<T: Scalar>(&self, _shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(SimpleRnnLayer {
            n_in: self.n_in,
            h: self.n_out,
            act: self.activation,
            weight_init: self.weight_init,
            distribution: self.weight_init_distribution,
            weight_init_recurrent: self.weight_init_recurrent.unwrap_or(self.weight_init),
            distribution_recurrent: match self.weight_init_recurrent {
                Some(_) => self.weight_init_recurrent_distribution,
                None => self.weight_init_distribution,
            },
            x: Vec::new(),
            z: Vec::new(),
            a: Vec::new(),
            hs: Vec::new(),
            dh_out: Vec::new(),
            dz: Vec::new(),
            dh: Vec::new(),
            dx: Vec::new(),
            states: StateSlots::default(),
            layer_norm: self.has_layer_norm,
            xhat_x: Vec::new(),
            sd_x: Vec::new(),
            xhat_r: Vec::new(),
            sd_r: Vec::new(),
            r: Vec::new(),
            du: Vec::new(),
        }))
    }
}
