//! The element-wise part of one LSTM step (forward and backward) over all rows of the minibatch:
//! the gate nonlinearities, the cell update and, for GravesLSTM, the peephole terms — fused in one
//! pass per row. The matrix products around it are `lstm.rs`'s.
//!
//! One implementation, two instantiations: the activations as configured (`Activation::scalar`,
//! any `T`; what the f64 gradient checks run), and for `f32` with the default tanh/sigmoid a
//! branch-free, vectorisable `exp` (Cephes' `expf` polynomial, within 2 ulp) under which `tanh`
//! and `sigmoid` are written, compiled a second time for AVX2+FMA and chosen at run time. Through
//! libm the cell took about a third of a GravesLSTM training step (`expm1f`, `expf`, `tanhf`
//! called one value at a time); vectorised it is a few per cent.

use crate::config::Activation;
use ferrodl_tensor::Scalar;
use std::any::TypeId;

/// One step's views, `n` rows of `h` units; gate blocks `[a | f | o | g]` of `4h` columns.
pub struct StepFwd<'a, T> {
    /// Pre-activations of this step (input and recurrent products and bias); the peephole terms
    /// are added in place, so that backward sees the gates' real arguments.
    pub z: &'a mut [T],
    /// Gate values written here, the same layout as `z`.
    pub gates: &'a mut [T],
    /// The cell state before masking, and its activation.
    pub c_raw: &'a mut [T],
    pub act_c: &'a mut [T],
    pub c_prev: &'a [T],
    /// The carried state after masking (a masked step carries zeros).
    pub c_next: &'a mut [T],
    pub h_next: &'a mut [T],
}

pub struct StepBwd<'a, T> {
    pub z: &'a [T],
    pub gates: &'a [T],
    pub c_raw: &'a [T],
    pub act_c: &'a [T],
    pub c_prev: &'a [T],
    /// `dL/dh` of this step from the layer above, and from the next step (`dz₊₁·RWᵀ`).
    pub dh_out: &'a [T],
    pub dh_next: &'a [T],
    /// In: `dL/dc` from the next step; out: `dL/dc₋₁` for the previous one.
    pub dc: &'a mut [T],
    /// Out: `dL/dz` of this step.
    pub dz: &'a mut [T],
}

/// The activations of a cell: the configured ones, or the fast f32 tanh/sigmoid.
#[derive(Clone, Copy)]
pub struct Acts {
    pub act: Activation,
    pub gate: Activation,
}

impl Acts {
    /// Whether the fast f32 path applies (the configured activations are tanh and sigmoid).
    fn fast<T: Scalar>(self) -> bool {
        TypeId::of::<T>() == TypeId::of::<f32>()
            && self.act == Activation::Tanh
            && self.gate == Activation::Sigmoid
    }
}

/// `peep` is `[p_f | p_o | p_g]` (3h values) for GravesLSTM, empty for LSTM; `mask(i)` is row
/// `i`'s feature mask at this step (1 without a mask).
pub fn forward<T: Scalar>(
    n: usize,
    h: usize,
    s: StepFwd<'_, T>,
    peep: &[T],
    mask: impl Fn(usize) -> T,
    acts: Acts,
) {
    if acts.fast::<T>() {
        // SAFETY: T is f32 (checked by TypeId), so these are the same slices reinterpreted.
        let s = unsafe { cast_fwd(s) };
        let peep = unsafe { cast(peep) };
        let mask = |i| f32_of(mask(i));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2 and FMA (checked above).
            unsafe { forward_avx2(n, h, s, peep, &mask) };
            return;
        }
        forward_fast(n, h, s, peep, &mask);
        return;
    }
    let (act, gate) = (acts.act, acts.gate);
    if peep.is_empty() {
        forward_rows::<T, false>(n, h, s, peep, mask, |z| act.scalar(z), |z| gate.scalar(z));
    } else {
        forward_rows::<T, true>(n, h, s, peep, mask, |z| act.scalar(z), |z| gate.scalar(z));
    }
}

/// Backward of one step (the peephole weights' gradients: [`peephole_grads`], from `dz`).
pub fn backward<T: Scalar>(
    n: usize,
    h: usize,
    s: StepBwd<'_, T>,
    peep: &[T],
    mask: impl Fn(usize) -> T,
    acts: Acts,
) {
    if acts.fast::<T>() {
        // SAFETY: T is f32 (checked by TypeId).
        let s = unsafe { cast_bwd(s) };
        let peep = unsafe { cast(peep) };
        let mask = |i| f32_of(mask(i));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2 and FMA (checked above).
            unsafe { backward_avx2(n, h, s, peep, &mask) };
            return;
        }
        backward_fast(n, h, s, peep, &mask);
        return;
    }
    let (act, gate) = (acts.act, acts.gate);
    let da = |z, a| act.derivative(z, a);
    let dg = |z, a| gate.derivative(z, a);
    if peep.is_empty() {
        backward_rows::<T, false>(n, h, s, peep, mask, da, dg);
    } else {
        backward_rows::<T, true>(n, h, s, peep, mask, da, dg);
    }
}

/// GravesLSTM's peephole gradients of units `j0..j0 + gf.len()`, accumulated into
/// `[gf, go, gg]` over `steps` (in that order) and the `n` rows of each: `Σ dz_f·c₋₁`,
/// `Σ dz_o·c`, `Σ dz_g·c₋₁`. `dz` is `[T, n, 4h]`, `cs` the carried cell states `[T + 1, n, h]`
/// (step s's `c₋₁` is block s) and `c_raw` the cell states before masking `[T, n, h]`.
#[allow(clippy::too_many_arguments)]
pub fn peephole_grads<T: Scalar>(
    n: usize,
    h: usize,
    steps: impl Iterator<Item = usize>,
    j0: usize,
    dz: &[T],
    cs: &[T],
    c_raw: &[T],
    [gf, go, gg]: [&mut [T]; 3],
) {
    let (w, g4) = (gf.len(), 4 * h);
    let j = j0..j0 + w;
    for s in steps {
        for i in 0..n {
            let r = s * n + i;
            let (_, dzf, dzo, dzg) = blocks(&dz[r * g4..(r + 1) * g4], h);
            let (cp, c) = (&cs[r * h..(r + 1) * h], &c_raw[r * h..(r + 1) * h]);
            for ((g, &d), &c) in gf.iter_mut().zip(&dzf[j.clone()]).zip(&cp[j.clone()]) {
                *g = *g + d * c;
            }
            for ((g, &d), &c) in go.iter_mut().zip(&dzo[j.clone()]).zip(&c[j.clone()]) {
                *g = *g + d * c;
            }
            for ((g, &d), &c) in gg.iter_mut().zip(&dzg[j.clone()]).zip(&cp[j.clone()]) {
                *g = *g + d * c;
            }
        }
    }
}

// ---- the fast f32 instantiation

fn forward_fast(n: usize, h: usize, s: StepFwd<'_, f32>, peep: &[f32], mask: &dyn Fn(usize) -> f32) {
    if peep.is_empty() {
        forward_rows::<f32, false>(n, h, s, peep, mask, tanh_f32, sigmoid_f32);
    } else {
        forward_rows::<f32, true>(n, h, s, peep, mask, tanh_f32, sigmoid_f32);
    }
}

fn backward_fast(
    n: usize,
    h: usize,
    s: StepBwd<'_, f32>,
    peep: &[f32],
    mask: &dyn Fn(usize) -> f32,
) {
    // from the outputs: tanh' = 1 - a², sigmoid' = a(1 - a)
    let da = |_: f32, a: f32| 1.0 - a * a;
    let dg = |_: f32, a: f32| a * (1.0 - a);
    if peep.is_empty() {
        backward_rows::<f32, false>(n, h, s, peep, mask, da, dg);
    } else {
        backward_rows::<f32, true>(n, h, s, peep, mask, da, dg);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn forward_avx2(n: usize, h: usize, s: StepFwd<'_, f32>, peep: &[f32], mask: &dyn Fn(usize) -> f32) {
    if peep.is_empty() {
        forward_rows::<f32, false>(n, h, s, peep, mask, tanh_f32, sigmoid_f32);
    } else {
        forward_rows::<f32, true>(n, h, s, peep, mask, tanh_f32, sigmoid_f32);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn backward_avx2(
    n: usize,
    h: usize,
    s: StepBwd<'_, f32>,
    peep: &[f32],
    mask: &dyn Fn(usize) -> f32,
) {
    let da = |_: f32, a: f32| 1.0 - a * a;
    let dg = |_: f32, a: f32| a * (1.0 - a);
    if peep.is_empty() {
        backward_rows::<f32, false>(n, h, s, peep, mask, da, dg);
    } else {
        backward_rows::<f32, true>(n, h, s, peep, mask, da, dg);
    }
}

// ---- the cell, once

/// Units are processed `LANES` at a time through small local arrays: the compiler vectorises the
/// fixed-size lane loops (one loop over a dozen slices it would not, for fear of aliasing).
const LANES: usize = 8;

/// Lanes `j0..j0 + w` of `v` (`w <= LANES`). `FULL` (`w == LANES`) is a constant so that a full
/// chunk is a fixed-size copy: with a run-time `if w == LANES`, LLVM merged the two branches'
/// copies into one variable-length `memcpy` call per load and store (`perf`: 3-4 % of a
/// GravesLSTM training step in `memcpy` called from the cell).
#[inline(always)]
fn load<T: Scalar, const FULL: bool>(v: &[T], j0: usize, w: usize) -> [T; LANES] {
    let mut a = [T::zero(); LANES];
    if FULL {
        a.copy_from_slice(&v[j0..j0 + LANES]);
    } else {
        a[..w].copy_from_slice(&v[j0..j0 + w]);
    }
    a
}

#[inline(always)]
fn store<T: Scalar, const FULL: bool>(v: &mut [T], j0: usize, w: usize, a: &[T; LANES]) {
    if FULL {
        v[j0..j0 + LANES].copy_from_slice(a);
    } else {
        v[j0..j0 + w].copy_from_slice(&a[..w]);
    }
}

/// Per unit: `a = act(z_a)`, `f = gate(z_f + c₋₁·p_f)`, `g = gate(z_g + c₋₁·p_g)`,
/// `c = f·c₋₁ + g·a`, `o = gate(z_o + c·p_o)`, `h = o·act(c)`; masked rows carry zeros.
#[inline(always)]
fn forward_rows<T: Scalar, const PEEP: bool>(
    n: usize,
    h: usize,
    s: StepFwd<'_, T>,
    peep: &[T],
    mask: impl Fn(usize) -> T,
    act: impl Fn(T) -> T,
    gate: impl Fn(T) -> T,
) {
    let g4 = 4 * h;
    let (pf, po, pg) = peep_parts::<T, PEEP>(peep, h);
    let zero = [T::zero(); LANES];
    for i in 0..n {
        let m = mask(i);
        let (za, zf, zo, zg) = blocks_mut(&mut s.z[i * g4..(i + 1) * g4], h);
        let (ga, gf, go, gg) = blocks_mut(&mut s.gates[i * g4..(i + 1) * g4], h);
        let r = i * h..(i + 1) * h;
        let cp = &s.c_prev[r.clone()];
        let cr = &mut s.c_raw[r.clone()];
        let ac = &mut s.act_c[r.clone()];
        let cn = &mut s.c_next[r.clone()];
        let hn = &mut s.h_next[r];
        let mut j0 = 0;
        while j0 < h {
            let w = LANES.min(h - j0);
            // the chunk twice, for full chunks and the last one: see `load`
            macro_rules! chunk {
                ($full:literal) => {{
                    let (xa, mut xf, mut xo, mut xg, xc) =
                        (load::<_, $full>(za, j0, w), load::<_, $full>(zf, j0, w), load::<_, $full>(zo, j0, w), load::<_, $full>(zg, j0, w), load::<_, $full>(cp, j0, w));
                    let (yf, yo, yg) = if PEEP { (load::<_, $full>(pf, j0, w), load::<_, $full>(po, j0, w), load::<_, $full>(pg, j0, w)) } else { (zero, zero, zero) };
                    let (mut va, mut vf, mut vo, mut vg) = (zero, zero, zero, zero);
                    let (mut vc, mut vac, mut vcn, mut vhn) = (zero, zero, zero, zero);
                    for l in 0..LANES {
                        let c_prev = xc[l];
                        let a = act(xa[l]);
                        if PEEP {
                            xf[l] = xf[l] + c_prev * yf[l];
                            xg[l] = xg[l] + c_prev * yg[l];
                        }
                        let f = gate(xf[l]);
                        let g = gate(xg[l]);
                        let c = f * c_prev + g * a;
                        if PEEP {
                            xo[l] = xo[l] + c * yo[l];
                        }
                        let o = gate(xo[l]);
                        let a_c = act(c);
                        va[l] = a;
                        vf[l] = f;
                        vo[l] = o;
                        vg[l] = g;
                        vc[l] = c;
                        vac[l] = a_c;
                        vcn[l] = m * c;
                        vhn[l] = m * (o * a_c);
                    }
                    if PEEP {
                        store::<_, $full>(zf, j0, w, &xf);
                        store::<_, $full>(zg, j0, w, &xg);
                        store::<_, $full>(zo, j0, w, &xo);
                    }
                    store::<_, $full>(ga, j0, w, &va);
                    store::<_, $full>(gf, j0, w, &vf);
                    store::<_, $full>(go, j0, w, &vo);
                    store::<_, $full>(gg, j0, w, &vg);
                    store::<_, $full>(cr, j0, w, &vc);
                    store::<_, $full>(ac, j0, w, &vac);
                    store::<_, $full>(cn, j0, w, &vcn);
                    store::<_, $full>(hn, j0, w, &vhn);
                }};
            }
            if w == LANES {
                chunk!(true)
            } else {
                chunk!(false)
            }
            j0 += LANES;
        }
    }
}

/// The chain rule through [`forward_rows`]; `da`/`dg` are the activations' derivatives from
/// `(z, value)`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn backward_rows<T: Scalar, const PEEP: bool>(
    n: usize,
    h: usize,
    s: StepBwd<'_, T>,
    peep: &[T],
    mask: impl Fn(usize) -> T,
    da: impl Fn(T, T) -> T,
    dg: impl Fn(T, T) -> T,
) {
    let g4 = 4 * h;
    let (pf, po, pg) = peep_parts::<T, PEEP>(peep, h);
    let zero = [T::zero(); LANES];
    for i in 0..n {
        let m = mask(i);
        let (za, zf, zo, zg) = blocks(&s.z[i * g4..(i + 1) * g4], h);
        let (ga, gf, go, gg) = blocks(&s.gates[i * g4..(i + 1) * g4], h);
        let (dza, dzf, dzo, dzg) = blocks_mut(&mut s.dz[i * g4..(i + 1) * g4], h);
        let r = i * h..(i + 1) * h;
        let (cr, ac, cp) = (&s.c_raw[r.clone()], &s.act_c[r.clone()], &s.c_prev[r.clone()]);
        let (dho, dhn) = (&s.dh_out[r.clone()], &s.dh_next[r.clone()]);
        let dc = &mut s.dc[r];
        let mut j0 = 0;
        while j0 < h {
            let w = LANES.min(h - j0);
            // the chunk twice, for full chunks and the last one: see `load`
            macro_rules! chunk {
                ($full:literal) => {{
                    let (xa, xf, xo, xg) = (load::<_, $full>(za, j0, w), load::<_, $full>(zf, j0, w), load::<_, $full>(zo, j0, w), load::<_, $full>(zg, j0, w));
                    let (a, f, o, g) = (load::<_, $full>(ga, j0, w), load::<_, $full>(gf, j0, w), load::<_, $full>(go, j0, w), load::<_, $full>(gg, j0, w));
                    let (c, a_c, c_prev) = (load::<_, $full>(cr, j0, w), load::<_, $full>(ac, j0, w), load::<_, $full>(cp, j0, w));
                    let (h_out, h_next, mut dcv) = (load::<_, $full>(dho, j0, w), load::<_, $full>(dhn, j0, w), load::<_, $full>(dc, j0, w));
                    let (yf, yo, yg) = if PEEP { (load::<_, $full>(pf, j0, w), load::<_, $full>(po, j0, w), load::<_, $full>(pg, j0, w)) } else { (zero, zero, zero) };
                    let (mut d_a, mut d_f, mut d_o, mut d_g) = (zero, zero, zero, zero);
                    for l in 0..LANES {
                        let dh = (h_out[l] + h_next[l]) * m;
                        d_o[l] = dh * a_c[l] * dg(xo[l], o[l]);
                        let mut dcr = dh * o[l] * da(c[l], a_c[l]) + m * dcv[l];
                        if PEEP {
                            dcr = dcr + d_o[l] * yo[l];
                        }
                        d_a[l] = dcr * g[l] * da(xa[l], a[l]);
                        d_g[l] = dcr * a[l] * dg(xg[l], g[l]);
                        d_f[l] = dcr * c_prev[l] * dg(xf[l], f[l]);
                        let mut dcp = dcr * f[l];
                        if PEEP {
                            dcp = dcp + d_f[l] * yf[l] + d_g[l] * yg[l];
                        }
                        dcv[l] = dcp;
                    }
                    store::<_, $full>(dza, j0, w, &d_a);
                    store::<_, $full>(dzf, j0, w, &d_f);
                    store::<_, $full>(dzo, j0, w, &d_o);
                    store::<_, $full>(dzg, j0, w, &d_g);
                    store::<_, $full>(dc, j0, w, &dcv);
                }};
            }
            if w == LANES {
                chunk!(true)
            } else {
                chunk!(false)
            }
            j0 += LANES;
        }
    }
}

#[inline(always)]
fn peep_parts<T, const PEEP: bool>(peep: &[T], h: usize) -> (&[T], &[T], &[T]) {
    if PEEP {
        (&peep[..h], &peep[h..2 * h], &peep[2 * h..3 * h])
    } else {
        (&[], &[], &[])
    }
}

#[inline(always)]
fn blocks<T>(row: &[T], h: usize) -> (&[T], &[T], &[T], &[T]) {
    let (a, r) = row.split_at(h);
    let (f, r) = r.split_at(h);
    let (o, g) = r.split_at(h);
    (a, f, o, &g[..h])
}

#[inline(always)]
fn blocks_mut<T>(row: &mut [T], h: usize) -> (&mut [T], &mut [T], &mut [T], &mut [T]) {
    let (a, r) = row.split_at_mut(h);
    let (f, r) = r.split_at_mut(h);
    let (o, g) = r.split_at_mut(h);
    (a, f, o, &mut g[..h])
}

// ---- branch-free f32 exp, sigmoid, tanh

/// `e^x` for f32 without branches (so loops over it vectorise): `x = n·ln2 + r`, `|r| <= ln2/2`,
/// `e^r` by Cephes' `expf` polynomial, `2^n` put into the exponent bits. Arguments are clamped to
/// [-80, 80], where `e^x` and the sigmoids built on it stay normal floats (no subnormal slow
/// path); NaN stays NaN.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const ROUND: f32 = 12_582_912.0; // 1.5·2²³: adding it rounds to an integer in the low bits
    let x = if x < -80.0 {
        -80.0
    } else if x > 80.0 {
        80.0
    } else {
        x
    };
    let t = x * LOG2E + ROUND;
    let n = t - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 5.000_000_1e-1;
    let e = p * r * r + r + 1.0;
    let bits = ((t.to_bits() as i32 - 0x4B40_0000 + 127) << 23) as u32;
    e * f32::from_bits(bits)
}

#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    1.0 / (1.0 + exp_f32(-x))
}

/// `tanh` as Cephes' `tanhf`: an odd polynomial for `|x| < 0.625`, `1 − 2/(e^{2|x|} + 1)` with
/// the sign of `x` above (both computed, one chosen: no branch).
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let ax = x.abs();
    let big = 1.0 - 2.0 / (exp_f32(2.0 * ax) + 1.0);
    let big = if x < 0.0 { -big } else { big };
    let z = x * x;
    let small = ((((-5.704_988_7e-3 * z + 2.063_908_9e-2) * z - 5.373_971_6e-2) * z + 1.333_144_2e-1) * z
        - 3.333_328_2e-1)
        * z
        * x
        + x;
    if ax < 0.625 {
        small
    } else {
        big
    }
}

fn f32_of<T: Scalar>(v: T) -> f32 {
    v.to_f32().unwrap_or(f32::NAN)
}

/// # Safety
/// `T` must be `f32`.
unsafe fn cast<T: 'static>(s: &[T]) -> &[f32] {
    debug_assert_eq!(TypeId::of::<T>(), TypeId::of::<f32>());
    std::slice::from_raw_parts(s.as_ptr().cast(), s.len())
}

/// # Safety
/// `T` must be `f32`.
unsafe fn cast_mut<T: 'static>(s: &mut [T]) -> &mut [f32] {
    debug_assert_eq!(TypeId::of::<T>(), TypeId::of::<f32>());
    std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len())
}

unsafe fn cast_fwd<T: 'static>(s: StepFwd<'_, T>) -> StepFwd<'_, f32> {
    StepFwd {
        z: cast_mut(s.z),
        gates: cast_mut(s.gates),
        c_raw: cast_mut(s.c_raw),
        act_c: cast_mut(s.act_c),
        c_prev: cast(s.c_prev),
        c_next: cast_mut(s.c_next),
        h_next: cast_mut(s.h_next),
    }
}

unsafe fn cast_bwd<T: 'static>(s: StepBwd<'_, T>) -> StepBwd<'_, f32> {
    StepBwd {
        z: cast(s.z),
        gates: cast(s.gates),
        c_raw: cast(s.c_raw),
        act_c: cast(s.act_c),
        c_prev: cast(s.c_prev),
        dh_out: cast(s.dh_out),
        dh_next: cast(s.dh_next),
        dc: cast_mut(s.dc),
        dz: cast_mut(s.dz),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast functions against f64 libm over [-90, 90] (and the tails' clamping).
    #[test]
    fn fast_f32_functions_match_libm() {
        let (mut e_exp, mut e_sig, mut e_tanh) = (0f64, 0f64, 0f64);
        let mut x = -90.0f64;
        while x <= 90.0 {
            let xf = x as f32;
            let xd = xf as f64;
            if xd.abs() <= 80.0 {
                e_exp = e_exp.max(((exp_f32(xf) as f64) - xd.exp()).abs() / xd.exp());
            }
            let s = 1.0 / (1.0 + (-xd).exp());
            e_sig = e_sig.max(((sigmoid_f32(xf) as f64) - s).abs() / s.max(1e-30));
            let t = xd.tanh();
            e_tanh = e_tanh.max(((tanh_f32(xf) as f64) - t).abs() / t.abs().max(1e-30));
            x += 0.000_731;
        }
        // a few ulp (f32 ulp = 1.19e-7 relative); sigmoid's tail below -80 is clamped
        assert!(e_exp < 4e-7, "exp relative error {e_exp}");
        assert!(e_tanh < 4e-7, "tanh relative error {e_tanh}");
        assert!(sigmoid_f32(-85.0) > 0.0 && sigmoid_f32(-85.0).is_normal());
        let mut e_sig_in = 0f64;
        let mut x = -80.0f64;
        while x <= 80.0 {
            let xd = x as f32 as f64;
            let s = 1.0 / (1.0 + (-xd).exp());
            e_sig_in = e_sig_in.max(((sigmoid_f32(xd as f32) as f64) - s).abs() / s);
            x += 0.000_731;
        }
        assert!(e_sig_in < 6e-7, "sigmoid relative error {e_sig_in} (tails: {e_sig})");
        assert!(exp_f32(f32::NAN).is_nan() && tanh_f32(f32::NAN).is_nan() && sigmoid_f32(f32::NAN).is_nan());
        assert_eq!(tanh_f32(0.0), 0.0);
        assert_eq!(tanh_f32(100.0), 1.0);
        assert_eq!(tanh_f32(-100.0), -1.0);
    }

    /// The fast f32 cell (forward and backward, with and without peepholes) against the configured
    /// activations in f64 on the same step.
    #[test]
    fn fast_cell_equals_exact_cell() {
        let (n, h) = (3, 5);
        let g4 = 4 * h;
        let mut rng = ferrodl_tensor::Rng::new(7);
        let mut rand = |len: usize, scale: f64| -> Vec<f64> { (0..len).map(|_| rng.uniform(-scale, scale)).collect() };
        let z0 = rand(n * g4, 3.0);
        let cp = rand(n * h, 1.5);
        let dho = rand(n * h, 1.0);
        let dhn = rand(n * h, 1.0);
        let dc0 = rand(n * h, 1.0);
        let peep_vals = rand(3 * h, 0.5);
        let mask = |i: usize| if i == 1 { 0.0 } else { 1.0 };
        for peep in [&peep_vals[..], &[][..]] {
            let run = |fast: bool| -> Vec<f64> {
                let acts = Acts { act: Activation::Tanh, gate: Activation::Sigmoid };
                let mut out = Vec::new();
                macro_rules! go {
                    ($t:ty) => {{
                        let cv = |v: &[f64]| v.iter().map(|&x| x as $t).collect::<Vec<$t>>();
                        let (mut z, mut gates, mut cr, mut ac, mut cn, mut hn) =
                            (cv(&z0), vec![0.0 as $t; n * g4], vec![0.0 as $t; n * h], vec![0.0 as $t; n * h],
                             vec![0.0 as $t; n * h], vec![0.0 as $t; n * h]);
                        let (cpv, pv) = (cv(&cp), cv(peep));
                        forward::<$t>(n, h, StepFwd { z: &mut z, gates: &mut gates, c_raw: &mut cr, act_c: &mut ac,
                            c_prev: &cpv, c_next: &mut cn, h_next: &mut hn }, &pv, |i| mask(i) as $t, acts);
                        let (mut dc, mut dz, mut gp) = (cv(&dc0), vec![0.0 as $t; n * g4], vec![0.0 as $t; pv.len()]);
                        backward::<$t>(n, h, StepBwd { z: &z, gates: &gates, c_raw: &cr, act_c: &ac, c_prev: &cpv,
                            dh_out: &cv(&dho), dh_next: &cv(&dhn), dc: &mut dc, dz: &mut dz }, &pv,
                            |i| mask(i) as $t, acts);
                        if !pv.is_empty() {
                            // units 1..h in one call, unit 0 in another (a block of units)
                            let (gf, rest) = gp.split_at_mut(h);
                            let (go, gg) = rest.split_at_mut(h);
                            for (j0, j1) in [(1, h), (0, 1)] {
                                peephole_grads(n, h, 0..1, j0, &dz, &cpv, &cr,
                                    [&mut gf[j0..j1], &mut go[j0..j1], &mut gg[j0..j1]]);
                            }
                        }
                        for v in [&z, &gates, &cr, &ac, &cn, &hn, &dc, &dz, &gp] {
                            out.extend(v.iter().map(|&x| x as f64));
                        }
                    }};
                }
                if fast { go!(f32) } else { go!(f64) }
                out
            };
            let (a, b) = (run(true), run(false));
            assert_eq!(a.len(), b.len());
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!((x - y).abs() <= 2e-6 * y.abs().max(1.0), "value {k}: f32 fast {x} vs f64 {y}");
            }
        }
    }
}
