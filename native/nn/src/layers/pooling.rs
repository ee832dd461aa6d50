//! Pooling layers: windowed 2-D ([`Pooling2dLayer`], the reference's SubsamplingLayer) and 1-D
//! ([`Pooling1dLayer`], run as a one-row image), and global pooling over all positions
//! ([`GlobalPoolingLayer`]).
//!
//! # Semantics
//!
//! Padding cells (explicit `padding`, or the automatic padding of `ConvolutionMode.Same`) are not
//! part of any window: they are never a maximum, add nothing to a sum or p-norm, and are not
//! counted by AVG, which divides by the number of input cells its window covers (the reference's
//! default of excluding the padding from the divisor). For a window inside the input that is the
//! full kernel size `kH·kW`; only border windows of padded layers divide by fewer. A window that
//! covers only padding (possible when `padding >= kernel`) outputs 0 and passes no gradient.
//!
//! * MAX: `max x`; the gradient goes to the arg-max recorded in the forward pass (the first
//!   maximum in row-major window order on ties).
//! * AVG: `Σx / count`; SUM: `Σx`.
//! * PNORM: `(Σ|x|^p)^(1/p)`, gradient `x·|x|^(p−2) / max(‖x‖_p, eps)^(p−1)` (written as
//!   `sign(x)·|x|^(p−1)` so that `x = 0` gives 0 for every `p ≥ 1`); `eps` is the layer's
//!   (global pooling: [`GLOBAL_PNORM_EPS`]).

use super::conv::{describe, Dim};
use super::{product, Batch, Ctx, Layer};
use crate::config::defaults::*;
use crate::config::layers::plain_layer_fields;
use crate::config::ConvolutionMode;
use crate::config::{LayerShapes, ShapeCx};
use crate::config::{PoolingType, Shape};
use crate::error::NnError;
use crate::layers::LayerKind;
use ferrodl_tensor::memory::{self, MemoryError};
use ferrodl_tensor::{chunk_len, parallel_for_each, Scalar};
use serde::{Deserialize, Serialize};

/// The arg-max of a window that covers only padding.
const NO_CELL: u32 = u32::MAX;

/// Fewest input values a parallel block of pooling work gets.
const MIN_BLOCK_VALUES: usize = 1 << 15;

/// `eps` of global PNORM pooling's backward pass (its configuration has none).
pub const GLOBAL_PNORM_EPS: f64 = 1e-8;

/// `sign(x)·|x|^(p−1)`: the p-norm's numerator `x·|x|^(p−2)` without `0·∞` at `x = 0`.
#[inline]
fn pnorm_numerator<T: Scalar>(x: T, p: i32) -> T {
    match p {
        2 => x,
        3 => x * x.abs(),
        _ if x == T::zero() => T::zero(),
        _ => x.signum() * x.abs().powi(p - 1),
    }
}

/// `|x|^p`, with the common exponents written out (`powi` is a library call).
#[inline(always)]
fn abs_pow<T: Scalar>(x: T, p: i32) -> T {
    match p {
        1 => x.abs(),
        2 => x * x,
        3 => x.abs() * x * x,
        _ => x.abs().powi(p),
    }
}

/// The shared implementation of windowed 2-D and 1-D pooling.
#[derive(Debug)]
struct PoolCore {
    type_name: &'static str,
    kind: PoolingType,
    pnorm: i32,
    eps: f64,
    channels: usize,
    h: Dim,
    w: Dim,
    /// Per output row/column: the input index of its first valid tap and the number of valid taps.
    h_taps: Vec<(usize, usize)>,
    w_taps: Vec<(usize, usize)>,
    input: Shape,
    output: Shape,
    /// MAX: per output value, the offset of its arg-max within the example's input plane.
    argmax: Vec<u32>,
    /// MAX with every window wholly inside the input (no padding reaching it): each window cell's
    /// offset from the window's first, row-major, for [`PoolCore::max_full_windows`].
    full_window_offsets: Option<Vec<usize>>,
}

impl PoolCore {
    #[allow(clippy::too_many_arguments)]
    fn new(
        type_name: &'static str,
        who: &str,
        kind: PoolingType,
        pnorm: u32,
        eps: f64,
        channels: usize,
        h: Dim,
        w: Dim,
        input: Shape,
        output: Shape,
    ) -> Result<Self, NnError> {
        let expected = match input {
            Shape::Seq { .. } => Shape::Seq {
                c: channels,
                len: w.out,
            },
            _ => Shape::Image {
                c: channels,
                h: h.out,
                w: w.out,
            },
        };
        if output != expected {
            return Err(NnError::Shape(format!(
                "{who}: output shape {output} does not match the pooling's {expected}"
            )));
        }
        if kind == PoolingType::Pnorm && pnorm == 0 {
            return Err(NnError::InvalidConfig(format!(
                "{who}: pnorm=0 is invalid (must be at least 1)"
            )));
        }
        if h.input * w.input > NO_CELL as usize {
            return Err(NnError::InvalidConfig(format!(
                "{who}: an input plane of {} values is too large",
                h.input * w.input
            )));
        }
        // The window tables grow with the output plane, which the configuration sets.
        let taps = h.out.checked_add(w.out);
        memory::check(
            || format!("{who}: the pooling window tables"),
            taps.and_then(|t| memory::bytes_of(t, std::mem::size_of::<(usize, usize)>())),
        )?;
        let (h_taps, w_taps) = (h.tap_table(), w.tap_table());
        let full = h_taps.iter().all(|&(_, n)| n == h.k) && w_taps.iter().all(|&(_, n)| n == w.k);
        let full_window_offsets = if kind == PoolingType::Max && full {
            // a full window fits in the input plane, so this is at most its size
            memory::check(
                || format!("{who}: the pooling window offsets"),
                memory::bytes_of(h.k.saturating_mul(w.k), std::mem::size_of::<usize>()),
            )?;
            Some(
                (0..h.k)
                    .flat_map(|a| (0..w.k).map(move |b| a * h.d * w.input + b * w.d))
                    .collect(),
            )
        } else {
            None
        };
        Ok(PoolCore {
            type_name,
            kind,
            pnorm: pnorm.min(i32::MAX as u32) as i32,
            eps,
            channels,
            h,
            w,
            h_taps,
            w_taps,
            input,
            output,
            argmax: Vec::new(),
            full_window_offsets,
        })
    }

    /// The windows of all output positions, row-major.
    fn windows(&self) -> impl Iterator<Item = Win> + '_ {
        self.h_taps.iter().flat_map(move |&(h0, hn)| {
            self.w_taps
                .iter()
                .map(move |&(w0, wn)| Win { h0, hn, w0, wn })
        })
    }

    /// Calls `f(offset)` for every valid input cell of window `win`, row-major.
    #[inline(always)]
    fn cells(&self, win: Win, mut f: impl FnMut(usize)) {
        let iw_n = self.w.input;
        for a in 0..win.hn {
            let row = (win.h0 + a * self.h.d) * iw_n + win.w0;
            for b in 0..win.wn {
                f(row + b * self.w.d);
            }
        }
    }

    /// Planes (example × channel) per parallel block: at least [`MIN_BLOCK_VALUES`] input values.
    fn block_planes(&self, planes: usize) -> usize {
        let pin = (self.h.input * self.w.input).max(1);
        chunk_len(planes, MIN_BLOCK_VALUES.div_ceil(pin))
    }

    /// MAX keeps one arg-max offset per output value of the minibatch.
    fn reserve(&mut self, rows: usize, who: &str) -> Result<(), MemoryError> {
        if self.kind != PoolingType::Max {
            return Ok(());
        }
        let len = product(&[rows, self.channels, self.h.out, self.w.out]).unwrap_or(usize::MAX);
        memory::try_grow(&mut self.argmax, len, NO_CELL, || {
            format!("the arg-max positions of {who} for a minibatch of {rows} examples")
        })
    }

    fn forward<T: Scalar>(&mut self, input: &[T], rows: usize, output: &mut [T]) {
        let planes = rows * self.channels;
        let (pin, pout) = (self.h.input * self.w.input, self.h.out * self.w.out);
        assert_eq!(
            input.len(),
            planes * pin,
            "{}: input length",
            self.type_name
        );
        assert_eq!(
            output.len(),
            planes * pout,
            "{}: output length",
            self.type_name
        );
        if planes == 0 || pout == 0 {
            return;
        }
        let max = self.kind == PoolingType::Max;
        super::reserved(self.reserve(rows, self.type_name));
        let mut argmax = std::mem::take(&mut self.argmax);
        let per = self.block_planes(planes);
        let mut am_rest: &mut [u32] = if max {
            &mut argmax[..planes * pout]
        } else {
            &mut []
        };
        let mut blocks = Vec::new();
        for (x, y) in input.chunks(per * pin).zip(output.chunks_mut(per * pout)) {
            let (am, rest) =
                std::mem::take(&mut am_rest).split_at_mut(if max { y.len() } else { 0 });
            am_rest = rest;
            blocks.push((x, y, am));
        }
        let this = &*self;
        parallel_for_each(blocks, |(x, y, am)| this.forward_planes(x, y, am));
        self.argmax = argmax;
    }

    /// MAX over one plane, any windows (padding, partial or empty windows).
    fn max_any_windows<T: Scalar>(&self, x: &[T], y: &mut [T], am: &mut [u32]) {
        for ((yv, amv), win) in y.iter_mut().zip(am.iter_mut()).zip(self.windows()) {
            if win.hn * win.wn == 0 {
                *yv = T::zero();
                *amv = NO_CELL;
                continue;
            }
            let first = win.h0 * self.w.input + win.w0;
            let (mut best, mut at) = (x[first], first);
            // Branch-free update (random data would mispredict a branch half the
            // time); `>` keeps the first maximum on ties.
            self.cells(win, |i| {
                let v = x[i];
                let better = v > best;
                best = if better { v } else { best };
                at = if better { i } else { at };
            });
            *yv = best;
            *amv = at as u32;
        }
    }

    /// MAX over one plane whose windows are all full: the generic loop's result, arg-max and
    /// tie rule (the first maximum in row-major order; a NaN first cell stays) bit for bit,
    /// without its per-window iterator and closure, and 2×2 windows at stride 2 read as pairs of
    /// columns of two rows. The LeNet-style CNN's training step (batch 64, two threads): +4.5 %
    /// (8,842 against 8,491 examples/s, median of 8 alternating rounds, 2026-11-28 13:17 UTC).
    /// `offsets`: [`Self::full_window_offsets`].
    fn max_full_windows<T: Scalar>(&self, x: &[T], y: &mut [T], am: &mut [u32], offsets: &[usize]) {
        let iw = self.w.input;
        if (self.h.k, self.w.k, self.h.d, self.w.d, self.w.s) == (2, 2, 1, 1, 2) {
            // LeNet's 2×2 / 2: the two input rows of an output row, in pairs of columns
            let wo = self.w_taps.len();
            for (oh, &(h0, _)) in self.h_taps.iter().enumerate() {
                let w0 = self.w_taps[0].0;
                let r0 = &x[h0 * iw + w0..][..2 * wo];
                let r1 = &x[(h0 + 1) * iw + w0..][..2 * wo];
                let base = (h0 * iw + w0) as u32;
                let cells = r0.chunks_exact(2).zip(r1.chunks_exact(2));
                let outs = y[oh * wo..][..wo].iter_mut().zip(&mut am[oh * wo..][..wo]);
                for (j, ((yv, amv), (p, q))) in outs.zip(cells).enumerate() {
                    let at0 = base + 2 * j as u32;
                    let (mut best, mut at) = (p[0], at0);
                    for (v, i) in [(p[1], at0 + 1), (q[0], at0 + iw as u32), (q[1], at0 + iw as u32 + 1)] {
                        let better = v > best;
                        best = if better { v } else { best };
                        at = if better { i } else { at };
                    }
                    *yv = best;
                    *amv = at;
                }
            }
            return;
        }
        let (first, rest) = offsets.split_first().expect("a window has a cell");
        let wo = self.w_taps.len();
        for (oh, &(h0, _)) in self.h_taps.iter().enumerate() {
            let (y_row, am_row) = (&mut y[oh * wo..][..wo], &mut am[oh * wo..][..wo]);
            for ((yv, amv), &(w0, _)) in y_row.iter_mut().zip(am_row.iter_mut()).zip(&self.w_taps) {
                let base = h0 * iw + w0;
                let (mut best, mut at) = (x[base + first], base + first);
                for &o in rest {
                    let v = x[base + o];
                    let better = v > best;
                    best = if better { v } else { best };
                    at = if better { base + o } else { at };
                }
                *yv = best;
                *amv = at as u32;
            }
        }
    }

    /// Forward of whole planes: `x` (`planes × H·W`) -> `y` (`planes × oH·oW`), arg-max offsets
    /// into `am` (MAX only).
    fn forward_planes<T: Scalar>(&self, x: &[T], y: &mut [T], am: &mut [u32]) {
        let (pin, pout) = (self.h.input * self.w.input, self.h.out * self.w.out);
        for (pl, (x, y)) in x
            .chunks_exact(pin)
            .zip(y.chunks_exact_mut(pout))
            .enumerate()
        {
            match self.kind {
                PoolingType::Max => {
                    let am = &mut am[pl * pout..][..pout];
                    match &self.full_window_offsets {
                        Some(offsets) => self.max_full_windows(x, y, am, offsets),
                        None => self.max_any_windows(x, y, am),
                    }
                }
                PoolingType::Avg | PoolingType::Sum => {
                    let avg = self.kind == PoolingType::Avg;
                    for (yv, win) in y.iter_mut().zip(self.windows()) {
                        let mut s = T::zero();
                        self.cells(win, |i| s = s + x[i]);
                        let count = win.hn * win.wn;
                        *yv = if avg && count > 0 {
                            s / T::of(count as f64)
                        } else {
                            s
                        };
                    }
                }
                PoolingType::Pnorm => {
                    let p = self.pnorm;
                    let inv = T::one() / T::of(p as f64);
                    for (yv, win) in y.iter_mut().zip(self.windows()) {
                        let mut s = T::zero();
                        self.cells(win, |i| s = s + abs_pow(x[i], p));
                        *yv = match p {
                            1 => s,
                            2 => s.sqrt(),
                            _ => s.powf(inv),
                        };
                    }
                }
            }
        }
    }

    fn backward<T: Scalar>(
        &self,
        input: &[T],
        output: &[T],
        rows: usize,
        delta: &[T],
        grad_input: Option<&mut [T]>,
    ) {
        let Some(gx) = grad_input else {
            return;
        };
        let planes = rows * self.channels;
        let (pin, pout) = (self.h.input * self.w.input, self.h.out * self.w.out);
        assert_eq!(
            delta.len(),
            planes * pout,
            "{}: delta length",
            self.type_name
        );
        assert_eq!(
            gx.len(),
            planes * pin,
            "{}: grad_input length",
            self.type_name
        );
        if planes == 0 || pin == 0 {
            return;
        }
        if pout == 0 {
            gx.fill(T::zero());
            return;
        }
        let per = self.block_planes(planes);
        let max = self.kind == PoolingType::Max;
        let am: &[u32] = if max {
            &self.argmax[..planes * pout]
        } else {
            &[]
        };
        let blocks: Vec<_> = gx
            .chunks_mut(per * pin)
            .enumerate()
            .map(|(i, g)| {
                let (n, o0) = (g.len(), i * per * pout);
                let o1 = o0 + n / pin * pout;
                let a = if max { &am[o0..o1] } else { &[][..] };
                (
                    g,
                    &input[i * per * pin..][..n],
                    &output[o0..o1],
                    &delta[o0..o1],
                    a,
                )
            })
            .collect();
        parallel_for_each(blocks, |(g, x, y, d, a)| {
            self.backward_planes(x, y, d, g, a)
        });
    }

    /// Backward of whole planes: `g = dL/dx` (overwritten) from `d = dL/dy`.
    fn backward_planes<T: Scalar>(&self, x: &[T], y: &[T], d: &[T], g: &mut [T], am: &[u32]) {
        let (pin, pout) = (self.h.input * self.w.input, self.h.out * self.w.out);
        g.fill(T::zero());
        for (pl, (g, d)) in g
            .chunks_exact_mut(pin)
            .zip(d.chunks_exact(pout))
            .enumerate()
        {
            match self.kind {
                PoolingType::Max => {
                    let am = &am[pl * pout..][..pout];
                    for (&dv, &at) in d.iter().zip(am) {
                        if at != NO_CELL {
                            g[at as usize] = g[at as usize] + dv;
                        }
                    }
                }
                PoolingType::Avg | PoolingType::Sum => {
                    let avg = self.kind == PoolingType::Avg;
                    for (&dv, win) in d.iter().zip(self.windows()) {
                        let count = win.hn * win.wn;
                        let share = if avg && count > 0 {
                            dv / T::of(count as f64)
                        } else {
                            dv
                        };
                        self.cells(win, |i| g[i] = g[i] + share);
                    }
                }
                PoolingType::Pnorm => {
                    let p = self.pnorm;
                    let x = &x[pl * pin..][..pin];
                    let y = &y[pl * pout..][..pout];
                    let eps = T::of(self.eps);
                    for ((&dv, &yv), win) in d.iter().zip(y).zip(self.windows()) {
                        let scale = dv / yv.max(eps).powi(p - 1);
                        self.cells(win, |i| g[i] = g[i] + scale * pnorm_numerator(x[i], p));
                    }
                }
            }
        }
    }
}

/// The valid cells of one pooling window: rows `h0 + a·dH` (`a < hn`) × columns `w0 + b·dW`
/// (`b < wn`) of the input plane.
#[derive(Clone, Copy, Debug)]
struct Win {
    h0: usize,
    hn: usize,
    w0: usize,
    wn: usize,
}

/// 2-D pooling over NCHW input (the reference's SubsamplingLayer); no parameters.
#[derive(Debug)]
pub struct Pooling2dLayer {
    core: PoolCore,
}

impl Pooling2dLayer {
    pub fn new(c: &SubsamplingLayerConfig, input: Shape, output: Shape) -> Result<Self, NnError> {
        let who = describe("SubsamplingLayer", &c.name);
        let Shape::Image { c: ch, h, w } = input else {
            return Err(NnError::InvalidConfig(format!(
                "{who}: needs a convolutional input but gets {input}"
            )));
        };
        let dim = |name: &str, i: usize, x: usize| {
            Dim::new(
                name,
                x,
                c.kernel_size[i],
                c.stride[i],
                c.padding[i],
                c.dilation[i],
                c.convolution_mode,
            )
            .map_err(|m| NnError::InvalidConfig(format!("{who}: {m}")))
        };
        Ok(Pooling2dLayer {
            core: PoolCore::new(
                "SubsamplingLayer",
                &who,
                c.pooling_type,
                c.pnorm,
                c.eps,
                ch,
                dim("height", 0, h)?,
                dim("width", 1, w)?,
                input,
                output,
            )?,
        })
    }
}

/// 1-D pooling over `[C, L]` input (the reference's Subsampling1DLayer); no parameters.
#[derive(Debug)]
pub struct Pooling1dLayer {
    core: PoolCore,
}

impl Pooling1dLayer {
    pub fn new(c: &Subsampling1DLayerConfig, input: Shape, output: Shape) -> Result<Self, NnError> {
        let who = describe("Subsampling1DLayer", &c.name);
        let Shape::Seq { c: ch, len } = input else {
            return Err(NnError::InvalidConfig(format!(
                "{who}: needs a recurrent input [C, L] but gets {input}"
            )));
        };
        let w = Dim::new(
            "length",
            len,
            c.kernel_size,
            c.stride,
            c.padding,
            c.dilation,
            c.convolution_mode,
        )
        .map_err(|m| NnError::InvalidConfig(format!("{who}: {m}")))?;
        Ok(Pooling1dLayer {
            core: PoolCore::new(
                "Subsampling1DLayer",
                &who,
                c.pooling_type,
                c.pnorm,
                c.eps,
                ch,
                Dim::unit(),
                w,
                input,
                output,
            )?,
        })
    }
}

macro_rules! delegate_pooling {
    ($t:ident) => {
        impl<T: Scalar> Layer<T> for $t {
            fn type_name(&self) -> &'static str {
                self.core.type_name
            }
            fn input_shape(&self) -> Shape {
                self.core.input
            }
            fn output_shape(&self) -> Shape {
                self.core.output
            }
            fn reserve_workspace(&mut self, rows: usize, _steps: usize, who: &str) -> Result<(), MemoryError> {
                self.core.reserve(rows, who)
            }
            fn forward(
                &mut self,
                _params: &[T],
                input: &[T],
                batch: &Batch<'_, T>,
                output: &mut [T],
                _ctx: &mut Ctx,
            ) {
                self.core.forward(input, batch.rows, output)
            }
            fn backward(
                &mut self,
                _params: &[T],
                input: &[T],
                output: &[T],
                batch: &Batch<'_, T>,
                delta: &mut [T],
                _grads: &mut [T],
                grad_input: Option<&mut [T]>,
            ) {
                self.core
                    .backward(input, output, batch.rows, delta, grad_input)
            }
        }
    };
}

delegate_pooling!(Pooling2dLayer);
delegate_pooling!(Pooling1dLayer);

/// Pooling over all positions of each channel: `[C, H, W]` or `[C, L]` -> `C` values (shape
/// `[C]`, or `[C, 1, 1]` / `[C, 1]` when `collapseDimensions` is false — the same values).
#[derive(Debug)]
pub struct GlobalPoolingLayer {
    kind: PoolingType,
    pnorm: i32,
    channels: usize,
    /// Positions per channel (`H·W` or `L`).
    positions: usize,
    input: Shape,
    output: Shape,
    /// MAX: the arg-max position of each (example, channel).
    argmax: Vec<u32>,
}

impl GlobalPoolingLayer {
    pub fn new(c: &GlobalPoolingLayerConfig, input: Shape, output: Shape) -> Self {
        let channels = input.channels().max(1);
        GlobalPoolingLayer {
            kind: c.pooling_type,
            // Validation refuses pnorm=0 for PNORM; 1 keeps a bypassed check harmless.
            pnorm: c.pnorm.clamp(1, i32::MAX as u32) as i32,
            channels,
            positions: input.len() / channels,
            input,
            output,
            argmax: Vec::new(),
        }
    }
}

impl GlobalPoolingLayer {
    /// Positions per channel in this call: a sequence's steps, an image's `H·W`.
    fn positions_of<T>(&self, batch: &Batch<'_, T>) -> usize {
        match self.input {
            Shape::Seq { .. } => batch.time_steps,
            _ => self.positions,
        }
    }

    /// Pooling over the unmasked steps of each sequence (the reference's masked global pooling):
    /// MAX and PNORM ignore masked steps, SUM adds only real ones, AVG divides by their number;
    /// an example with no real step pools to 0.
    fn forward_masked<T: Scalar>(
        &mut self,
        input: &[T],
        rows: usize,
        t: usize,
        m: super::Mask<'_, T>,
        output: &mut [T],
    ) {
        let c = self.channels;
        let p = self.pnorm;
        for i in 0..rows {
            let real: Vec<usize> = (0..t).filter(|&s| m.at(i, s) != T::zero()).collect();
            for ch in 0..c {
                let pl = i * c + ch;
                let x = &input[pl * t..(pl + 1) * t];
                output[pl] = if real.is_empty() {
                    if self.kind == PoolingType::Max {
                        self.argmax[pl] = NO_CELL;
                    }
                    T::zero()
                } else {
                    match self.kind {
                        PoolingType::Max => {
                            let at = real
                                .iter()
                                .copied()
                                .reduce(|a, b| if x[b] > x[a] { b } else { a })
                                .unwrap_or(0);
                            self.argmax[pl] = at as u32;
                            x[at]
                        }
                        PoolingType::Avg => {
                            real.iter().map(|&s| x[s]).sum::<T>() / T::of(real.len() as f64)
                        }
                        PoolingType::Sum => real.iter().map(|&s| x[s]).sum::<T>(),
                        PoolingType::Pnorm => {
                            let sum: T = real.iter().map(|&s| abs_pow(x[s], p)).sum();
                            match p {
                                1 => sum,
                                2 => sum.sqrt(),
                                _ => sum.powf(T::one() / T::of(p as f64)),
                            }
                        }
                    }
                };
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn backward_masked<T: Scalar>(
        &self,
        input: &[T],
        output: &[T],
        rows: usize,
        t: usize,
        m: super::Mask<'_, T>,
        delta: &[T],
        gx: &mut [T],
    ) {
        let c = self.channels;
        let p = self.pnorm;
        let eps = T::of(GLOBAL_PNORM_EPS);
        gx.fill(T::zero());
        for i in 0..rows {
            let real: Vec<usize> = (0..t).filter(|&s| m.at(i, s) != T::zero()).collect();
            if real.is_empty() {
                continue;
            }
            for ch in 0..c {
                let pl = i * c + ch;
                let (d, g) = (delta[pl], &mut gx[pl * t..(pl + 1) * t]);
                match self.kind {
                    PoolingType::Max => g[self.argmax[pl] as usize] = d,
                    PoolingType::Avg => {
                        let v = d / T::of(real.len() as f64);
                        real.iter().for_each(|&s| g[s] = v);
                    }
                    PoolingType::Sum => real.iter().for_each(|&s| g[s] = d),
                    PoolingType::Pnorm => {
                        let x = &input[pl * t..(pl + 1) * t];
                        let scale = d / output[pl].max(eps).powi(p - 1);
                        real.iter().for_each(|&s| g[s] = scale * pnorm_numerator(x[s], p));
                    }
                }
            }
        }
    }
}

impl<T: Scalar> Layer<T> for GlobalPoolingLayer {
    fn type_name(&self) -> &'static str {
        "GlobalPoolingLayer"
    }

    /// The output has no spatial or time axis left for a mask to describe.
    fn mask_rule(&self) -> super::MaskRule {
        super::MaskRule::Drop
    }
    fn input_shape(&self) -> Shape {
        self.input
    }
    fn output_shape(&self) -> Shape {
        self.output
    }

    /// Pools a sequence of any length to one step.
    fn output_steps(&self, _steps: usize) -> Result<usize, String> {
        Ok(1)
    }

    /// MAX keeps one arg-max position per (example, channel).
    fn reserve_workspace(&mut self, rows: usize, _steps: usize, who: &str) -> Result<(), MemoryError> {
        if self.kind != PoolingType::Max {
            return Ok(());
        }
        let len = rows.saturating_mul(self.channels);
        memory::try_grow(&mut self.argmax, len, NO_CELL, || {
            format!("the arg-max positions of {who} for a minibatch of {rows} examples")
        })
    }

    fn forward(
        &mut self,
        _: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        _: &mut Ctx,
    ) {
        let rows = batch.rows;
        let s = self.positions_of(batch);
        let planes = rows * self.channels;
        assert_eq!(input.len(), planes * s, "GlobalPoolingLayer: input length");
        assert_eq!(output.len(), planes, "GlobalPoolingLayer: output length");
        super::reserved(Layer::<T>::reserve_workspace(
            self,
            rows,
            1,
            "GlobalPoolingLayer",
        ));
        if let (Shape::Seq { .. }, Some(m)) = (self.input, batch.mask) {
            self.forward_masked(input, rows, s, m, output);
            return;
        }
        let p = self.pnorm;
        for (pl, (x, y)) in input.chunks_exact(s).zip(output.iter_mut()).enumerate() {
            *y = match self.kind {
                PoolingType::Max => {
                    let (mut best, mut at) = (x[0], 0);
                    for (i, &v) in x.iter().enumerate().skip(1) {
                        if v > best {
                            best = v;
                            at = i;
                        }
                    }
                    self.argmax[pl] = at as u32;
                    best
                }
                PoolingType::Avg => x.iter().copied().sum::<T>() / T::of(s as f64),
                PoolingType::Sum => x.iter().copied().sum::<T>(),
                PoolingType::Pnorm => {
                    let sum: T = x.iter().map(|&v| abs_pow(v, p)).sum();
                    match p {
                        1 => sum,
                        2 => sum.sqrt(),
                        _ => sum.powf(T::one() / T::of(p as f64)),
                    }
                }
            };
        }
    }

    fn backward(
        &mut self,
        _: &[T],
        input: &[T],
        output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        _: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let rows = batch.rows;
        let Some(gx) = grad_input else {
            return;
        };
        let s = self.positions_of(batch);
        let planes = rows * self.channels;
        assert_eq!(
            gx.len(),
            planes * s,
            "GlobalPoolingLayer: grad_input length"
        );
        assert_eq!(delta.len(), planes, "GlobalPoolingLayer: delta length");
        if let (Shape::Seq { .. }, Some(m)) = (self.input, batch.mask) {
            self.backward_masked(input, output, rows, s, m, delta, gx);
            return;
        }
        let p = self.pnorm;
        let eps = T::of(GLOBAL_PNORM_EPS);
        for (pl, (g, &d)) in gx.chunks_exact_mut(s).zip(delta.iter()).enumerate() {
            match self.kind {
                PoolingType::Max => {
                    g.fill(T::zero());
                    g[self.argmax[pl] as usize] = d;
                }
                PoolingType::Avg => g.fill(d / T::of(s as f64)),
                PoolingType::Sum => g.fill(d),
                PoolingType::Pnorm => {
                    let x = &input[pl * s..][..s];
                    let scale = d / output[pl].max(eps).powi(p - 1);
                    for (gv, &xv) in g.iter_mut().zip(x) {
                        *gv = scale * pnorm_numerator(xv, p);
                    }
                }
            }
        }
    }
}

/// 2-D pooling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubsamplingLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub pooling_type: PoolingType,
    #[serde(default = "ones_2d")]
    pub kernel_size: [usize; 2],
    #[serde(default = "twos_2d")]
    pub stride: [usize; 2],
    #[serde(default)]
    pub padding: [usize; 2],
    #[serde(default = "ones_2d")]
    pub dilation: [usize; 2],
    #[serde(default)]
    pub convolution_mode: ConvolutionMode,
    #[serde(default = "default_pnorm")]
    pub pnorm: u32,
    #[serde(default = "default_pool_eps")]
    pub eps: f64,
}

plain_layer_fields!(SubsamplingLayerConfig);

impl LayerKind for SubsamplingLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (ch, h, w) = cx.image("SubsamplingLayer")?;
        cx.no_causal(self.convolution_mode)?;
        cx.pnorm(self.pooling_type, self.pnorm)?;
        let (k, s, p, d, m) = (
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.convolution_mode,
        );
        let wh = cx.window("height", h, k[0], s[0], p[0], d[0], m)?;
        let ww = cx.window("width", w, k[1], s[1], p[1], d[1], m)?;
        Ok(Shape::Image {
            c: ch,
            h: wh.out,
            w: ww.out,
        })
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(Pooling2dLayer::new(
            self,
            shapes.input,
            shapes.output,
        )?))
    }
}

/// 1-D pooling over `[C, L]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Subsampling1DLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub pooling_type: PoolingType,
    #[serde(default = "two_usize")]
    pub kernel_size: usize,
    #[serde(default = "one_usize")]
    pub stride: usize,
    #[serde(default)]
    pub padding: usize,
    #[serde(default = "one_usize")]
    pub dilation: usize,
    #[serde(default)]
    pub convolution_mode: ConvolutionMode,
    #[serde(default = "default_pnorm")]
    pub pnorm: u32,
    #[serde(default = "default_pool_eps")]
    pub eps: f64,
}

plain_layer_fields!(Subsampling1DLayerConfig);

impl LayerKind for Subsampling1DLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (ch, len) = cx.seq("Subsampling1DLayer")?;
        cx.pnorm(self.pooling_type, self.pnorm)?;
        let wl = cx.window(
            "length",
            len,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.convolution_mode,
        )?;
        Ok(Shape::Seq { c: ch, len: wl.out })
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(Pooling1dLayer::new(
            self,
            shapes.input,
            shapes.output,
        )?))
    }
}

/// Pooling over all spatial positions (or time steps): `[C,H,W]`/`[C,L]` -> `[C]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GlobalPoolingLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub pooling_type: PoolingType,
    #[serde(default = "default_pnorm")]
    pub pnorm: u32,
    #[serde(default = "default_true")]
    pub collapse_dimensions: bool,
}

plain_layer_fields!(GlobalPoolingLayerConfig);

impl LayerKind for GlobalPoolingLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        cx.pnorm(self.pooling_type, self.pnorm)?;
        Ok(match cx.input {
            Shape::Image { c, .. } if !self.collapse_dimensions => Shape::Image { c, h: 1, w: 1 },
            Shape::Seq { c, .. } if !self.collapse_dimensions => Shape::Seq { c, len: 1 },
            Shape::Image { c, .. } | Shape::Seq { c, .. } => Shape::Flat(c),
            Shape::Flat(_) => {
                return Err(cx.err(format!(
                    "global pooling needs a convolutional or recurrent input but gets {} ({})",
                    cx.input, cx.from
                )))
            }
        })
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(GlobalPoolingLayer::new(
            self,
            shapes.input,
            shapes.output,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodl_tensor::Rng;
    use serde_json::{json, Value};

    fn run_fwd<L: Layer<f64>>(l: &mut L, x: &[f64], rows: usize) -> Vec<f64> {
        let mut out = vec![f64::NAN; rows * l.n_out()];
        let mut rng = Rng::new(0);
        l.forward(
            &[],
            x,
            &Batch::new(rows, l.input_shape()),
            &mut out,
            &mut Ctx {
                train: true,
                rng: &mut rng,
                state: crate::layers::StateMode::Stateless,
            },
        );
        out
    }

    fn run_bwd<L: Layer<f64>>(l: &mut L, x: &[f64], y: &[f64], rows: usize, d: &[f64]) -> Vec<f64> {
        let mut gx = vec![f64::NAN; x.len()];
        let mut delta = d.to_vec();
        l.backward(
            &[],
            x,
            y,
            &Batch::new(rows, l.input_shape()),
            &mut delta,
            &mut [],
            Some(&mut gx),
        );
        gx
    }

    fn pool2d(extra: Value, c: usize, h: usize, w: usize) -> Pooling2dLayer {
        let mut v = json!({});
        for (k, val) in extra.as_object().unwrap() {
            v[k] = val.clone();
        }
        let conf: SubsamplingLayerConfig = serde_json::from_value(v).unwrap();
        let dim = |n: &str, i: usize, x: usize| {
            Dim::new(
                n,
                x,
                conf.kernel_size[i],
                conf.stride[i],
                conf.padding[i],
                conf.dilation[i],
                conf.convolution_mode,
            )
            .unwrap()
        };
        let (dh, dw) = (dim("height", 0, h), dim("width", 1, w));
        Pooling2dLayer::new(
            &conf,
            Shape::Image { c, h, w },
            Shape::Image {
                c,
                h: dh.out,
                w: dw.out,
            },
        )
        .unwrap()
    }

    const IMG: [f64; 16] = [
        1.0, 2.0, 5.0, 3.0, //
        4.0, -1.0, 0.0, 7.0, //
        -2.0, 6.0, 8.0, 1.0, //
        3.0, 0.5, -4.0, 2.0,
    ];

    #[test]
    fn hand_computed_4x4() {
        let mut l = pool2d(json!({"kernelSize": [2, 2], "stride": [2, 2]}), 1, 4, 4);
        let y = run_fwd(&mut l, &IMG, 1);
        assert_eq!(y, vec![4.0, 7.0, 6.0, 8.0]);
        let g = run_bwd(&mut l, &IMG, &y, 1, &[1.0, 2.0, 3.0, 4.0]);
        let mut want = [0.0; 16];
        want[4] = 1.0;
        want[7] = 2.0;
        want[9] = 3.0;
        want[10] = 4.0;
        assert_eq!(g, want);

        let mut l = pool2d(
            json!({"poolingType": "AVG", "kernelSize": [2, 2], "stride": [2, 2]}),
            1,
            4,
            4,
        );
        let y = run_fwd(&mut l, &IMG, 1);
        assert_eq!(y, vec![1.5, 3.75, 1.875, 1.75]);
        let g = run_bwd(&mut l, &IMG, &y, 1, &[4.0, 8.0, 12.0, 16.0]);
        assert_eq!(&g[..4], &[1.0, 1.0, 2.0, 2.0]);
        assert_eq!(&g[12..], &[3.0, 3.0, 4.0, 4.0]);

        let mut l = pool2d(
            json!({"poolingType": "SUM", "kernelSize": [3, 3], "stride": [1, 1]}),
            1,
            4,
            4,
        );
        let y = run_fwd(&mut l, &IMG, 1);
        assert_eq!(y, vec![23.0, 31.0, 14.5, 19.5]);

        let mut l = pool2d(
            json!({"poolingType": "PNORM", "pnorm": 2, "kernelSize": [2, 2], "stride": [2, 2]}),
            1,
            4,
            4,
        );
        let y = run_fwd(&mut l, &IMG, 1);
        let want = [
            (1.0f64 + 4.0 + 16.0 + 1.0).sqrt(),
            (25.0f64 + 9.0 + 0.0 + 49.0).sqrt(),
            (4.0f64 + 36.0 + 9.0 + 0.25).sqrt(),
            (64.0f64 + 1.0 + 16.0 + 4.0).sqrt(),
        ];
        for (a, b) in y.iter().zip(want) {
            assert!((a - b).abs() < 1e-14);
        }
        // d‖x‖/dx = x/‖x‖
        let g = run_bwd(&mut l, &IMG, &y, 1, &[1.0, 0.0, 0.0, 0.0]);
        assert!((g[0] - 1.0 / want[0]).abs() < 1e-14 && (g[5] + 1.0 / want[0]).abs() < 1e-14);
        assert_eq!(g[6], 0.0);
    }

    /// Padding is never a maximum and is not counted by AVG: 3×3 input, 2×2 windows, stride 2,
    /// Same mode (one padding row/column after).
    #[test]
    fn padding_is_ignored() {
        let x = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0];
        let mut l = pool2d(
            json!({"kernelSize": [2, 2], "stride": [2, 2], "convolutionMode": "Same"}),
            1,
            3,
            3,
        );
        assert_eq!(run_fwd(&mut l, &x, 1), vec![-1.0, -3.0, -7.0, -9.0]);
        let mut l = pool2d(
            json!({"poolingType": "AVG", "kernelSize": [2, 2], "stride": [2, 2], "convolutionMode": "Same"}),
            1,
            3,
            3,
        );
        assert_eq!(run_fwd(&mut l, &x, 1), vec![-3.0, -4.5, -7.5, -9.0]);
        // Explicit padding 1, 3×3 kernel, stride 1: corner windows cover 4 cells.
        let mut l = pool2d(
            json!({"poolingType": "AVG", "kernelSize": [3, 3], "stride": [1, 1], "padding": [1, 1]}),
            1,
            3,
            3,
        );
        let y = run_fwd(&mut l, &x, 1);
        assert_eq!(y[0], (-1.0 - 2.0 - 4.0 - 5.0) / 4.0);
        assert_eq!(y[4], -5.0);
        // A window entirely in the padding: 0 and no gradient.
        let mut l = pool2d(
            json!({"kernelSize": [1, 1], "stride": [1, 1], "padding": [1, 0]}),
            1,
            1,
            2,
        );
        let y = run_fwd(&mut l, &[-3.0, -4.0], 1);
        assert_eq!(y, vec![0.0, 0.0, -3.0, -4.0, 0.0, 0.0]);
        let g = run_bwd(&mut l, &[-3.0, -4.0], &y, 1, &[1.0; 6]);
        assert_eq!(g, vec![1.0, 1.0]);
    }

    /// Direct pooling loops over random data (no ties), forward and input gradient, for every
    /// type over strides, paddings, dilations and modes, batch of 2 with 3 channels.
    /// MAX's loop for full windows gives the generic loop's values and arg-max positions, bit
    /// for bit, with ties everywhere (values from {-1, 0, 1}) and NaN in some cells.
    #[test]
    fn full_window_max_is_the_generic_max() {
        let geometries = [
            json!({"kernelSize": [2, 2], "stride": [2, 2]}),
            json!({"kernelSize": [3, 2], "stride": [2, 1]}),
            json!({"kernelSize": [2, 3], "stride": [1, 2], "dilation": [2, 2]}),
            json!({"kernelSize": [1, 1], "stride": [1, 1]}),
        ];
        let mut rng = Rng::new(12);
        let mut windows = 0;
        for geo in &geometries {
            let l = pool2d(geo.clone(), 1, 9, 11);
            let offsets = l.core.full_window_offsets.as_deref().expect("full windows");
            let (pin, pout) = (9 * 11, l.core.h.out * l.core.w.out);
            for round in 0..50 {
                let x: Vec<f64> = (0..pin)
                    .map(|_| match rng.below(if round % 2 == 0 { 3 } else { 20 }) {
                        0 => -1.0,
                        1 => 0.0,
                        2 => 1.0,
                        _ => f64::NAN,
                    })
                    .collect();
                let (mut y1, mut y2) = (vec![0.0; pout], vec![0.0; pout]);
                let (mut a1, mut a2) = (vec![0u32; pout], vec![0u32; pout]);
                l.core.max_full_windows(&x, &mut y1, &mut a1, offsets);
                l.core.max_any_windows(&x, &mut y2, &mut a2);
                assert_eq!(a1, a2, "{geo}");
                assert!(y1.iter().zip(&y2).all(|(p, q)| p.to_bits() == q.to_bits()), "{geo}");
                windows += pout;
            }
        }
        assert!(windows > 1000);
        // padding reaching a window: the generic loop
        let l = pool2d(json!({"kernelSize": [3, 3], "stride": [2, 2], "padding": [1, 1]}), 1, 9, 11);
        assert!(l.core.full_window_offsets.is_none());
    }

    #[test]
    fn matches_naive_pooling() {
        let geometries = [
            json!({"kernelSize": [2, 2], "stride": [2, 2]}),
            json!({"kernelSize": [3, 2], "stride": [2, 1]}),
            json!({"kernelSize": [3, 3], "stride": [2, 2], "padding": [1, 1]}),
            json!({"kernelSize": [2, 3], "stride": [1, 2], "dilation": [2, 2]}),
            json!({"kernelSize": [3, 2], "stride": [2, 3], "convolutionMode": "Same"}),
            json!({"kernelSize": [2, 2], "stride": [3, 3], "dilation": [2, 1], "padding": [2, 1]}),
            json!({"kernelSize": [3, 3], "stride": [2, 2], "convolutionMode": "Strict"}),
        ];
        let kinds = [
            json!({"poolingType": "MAX"}),
            json!({"poolingType": "AVG"}),
            json!({"poolingType": "SUM"}),
            json!({"poolingType": "PNORM", "pnorm": 1}),
            json!({"poolingType": "PNORM", "pnorm": 2}),
            json!({"poolingType": "PNORM", "pnorm": 3}),
        ];
        let mut rng = Rng::new(11);
        // The larger input is cut into several parallel blocks of planes.
        for (c, h, w, rows) in [(3, 7, 9, 2), (8, 41, 43, 3)] {
            for geo in &geometries {
                for kind in &kinds {
                    let mut extra = geo.clone();
                    for (k, v) in kind.as_object().unwrap() {
                        extra[k] = v.clone();
                    }
                    let mut l = pool2d(extra.clone(), c, h, w);
                    let (dh, dw) = (l.core.h, l.core.w);
                    let x: Vec<f64> = (0..rows * c * h * w).map(|_| rng.next_gaussian()).collect();
                    let y = run_fwd(&mut l, &x, rows);
                    let d: Vec<f64> = (0..y.len()).map(|_| rng.next_gaussian()).collect();
                    let g = run_bwd(&mut l, &x, &y, rows, &d);
                    let p = kind.get("pnorm").and_then(Value::as_i64).unwrap_or(2) as i32;
                    let mut gw = vec![0.0; x.len()];
                    for pl in 0..rows * c {
                        for oh in 0..dh.out {
                            for ow in 0..dw.out {
                                let mut cells = Vec::new();
                                for kh in 0..dh.k {
                                    for kw in 0..dw.k {
                                        let ih = (oh * dh.s + kh * dh.d) as isize - dh.pad as isize;
                                        let iw = (ow * dw.s + kw * dw.d) as isize - dw.pad as isize;
                                        if ih >= 0
                                            && iw >= 0
                                            && (ih as usize) < h
                                            && (iw as usize) < w
                                        {
                                            cells.push(pl * h * w + ih as usize * w + iw as usize);
                                        }
                                    }
                                }
                                let oi = (pl * dh.out + oh) * dw.out + ow;
                                let vals: Vec<f64> = cells.iter().map(|&i| x[i]).collect();
                                let n = vals.len() as f64;
                                let (want, grads): (f64, Vec<f64>) = match kind["poolingType"]
                                    .as_str()
                                    .unwrap()
                                {
                                    "MAX" => {
                                        let (mi, &m) = vals
                                            .iter()
                                            .enumerate()
                                            .max_by(|a, b| a.1.total_cmp(b.1))
                                            .unwrap();
                                        (
                                            m,
                                            (0..vals.len())
                                                .map(|i| if i == mi { 1.0 } else { 0.0 })
                                                .collect(),
                                        )
                                    }
                                    "AVG" => {
                                        (vals.iter().sum::<f64>() / n, vec![1.0 / n; vals.len()])
                                    }
                                    "SUM" => (vals.iter().sum(), vec![1.0; vals.len()]),
                                    _ => {
                                        let nrm = vals
                                            .iter()
                                            .map(|v| v.abs().powi(p))
                                            .sum::<f64>()
                                            .powf(1.0 / p as f64);
                                        (
                                            nrm,
                                            vals.iter()
                                                .map(|v| v * v.abs().powi(p - 2) / nrm.powi(p - 1))
                                                .collect(),
                                        )
                                    }
                                };
                                assert!(
                                    (y[oi] - want).abs() < 1e-12,
                                    "{extra}: y[{oi}] {} vs {want}",
                                    y[oi]
                                );
                                for (&ci, gr) in cells.iter().zip(grads) {
                                    gw[ci] += d[oi] * gr;
                                }
                            }
                        }
                    }
                    for (i, (a, b)) in g.iter().zip(&gw).enumerate() {
                        assert!((a - b).abs() < 1e-12, "{extra}: dx[{i}] {a} vs {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn pooling_1d() {
        let conf: Subsampling1DLayerConfig =
            serde_json::from_value(json!({"kernelSize": 2, "stride": 2, "poolingType": "MAX"}))
                .unwrap();
        let mut l = Pooling1dLayer::new(
            &conf,
            Shape::Seq { c: 2, len: 5 },
            Shape::Seq { c: 2, len: 2 },
        )
        .unwrap();
        let x = [1.0, 3.0, 2.0, 0.0, 9.0, -1.0, -2.0, -3.0, -4.0, 5.0];
        let y = run_fwd(&mut l, &x, 1);
        assert_eq!(y, vec![3.0, 2.0, -1.0, -3.0]);
        let g = run_bwd(&mut l, &x, &y, 1, &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(g, vec![0.0, 1.0, 2.0, 0.0, 0.0, 3.0, 0.0, 4.0, 0.0, 0.0]);
        let conf: Subsampling1DLayerConfig = serde_json::from_value(
            json!({"kernelSize": 3, "stride": 2, "poolingType": "AVG", "convolutionMode": "Same"}),
        )
        .unwrap();
        let mut l = Pooling1dLayer::new(
            &conf,
            Shape::Seq { c: 2, len: 5 },
            Shape::Seq { c: 2, len: 3 },
        )
        .unwrap();
        // Same: out 3, total padding (2·2 + 3) − 5 = 2: one before, one after.
        let y = run_fwd(&mut l, &x, 1);
        assert_eq!(y, vec![2.0, 5.0 / 3.0, 4.5, -1.5, -3.0, 0.5]);
        assert!(Pooling1dLayer::new(&conf, Shape::Flat(10), Shape::Flat(6)).is_err());
        assert!(Pooling1dLayer::new(
            &conf,
            Shape::Seq { c: 2, len: 5 },
            Shape::Seq { c: 2, len: 2 }
        )
        .is_err());
    }

    #[test]
    fn global_pooling() {
        let x = [
            1.0, -3.0, 2.0, 4.0, -5.0, 0.5, 2.0, 2.0, -1.0, 3.0, 0.0, 4.0,
        ];
        let expect = |kind: &str, p: u32, want: [f64; 4], grad_first_plane: [f64; 3]| {
            let conf: GlobalPoolingLayerConfig =
                serde_json::from_value(json!({"poolingType": kind, "pnorm": p})).unwrap();
            for (input, output) in [
                (Shape::Seq { c: 2, len: 3 }, Shape::Flat(2)),
                (
                    Shape::Image { c: 2, h: 1, w: 3 },
                    Shape::Image { c: 2, h: 1, w: 1 },
                ),
            ] {
                let mut l = GlobalPoolingLayer::new(&conf, input, output);
                assert_eq!(Layer::<f64>::n_out(&l), 2);
                let y = run_fwd(&mut l, &x, 2);
                for (a, b) in y.iter().zip(want) {
                    assert!((a - b).abs() < 1e-14, "{kind}: {y:?} vs {want:?}");
                }
                let g = run_bwd(&mut l, &x, &y, 2, &[2.0, 0.0, 0.0, 0.0]);
                for (a, b) in g[..3].iter().zip(grad_first_plane) {
                    assert!((a - b).abs() < 1e-14, "{kind}: {g:?}");
                }
                assert!(g[3..].iter().all(|&v| v == 0.0));
            }
        };
        expect("MAX", 2, [2.0, 4.0, 2.0, 4.0], [0.0, 0.0, 2.0]);
        expect("AVG", 2, [0.0, -1.0 / 6.0, 1.0, 7.0 / 3.0], [2.0 / 3.0; 3]);
        expect("SUM", 2, [0.0, -0.5, 3.0, 7.0], [2.0; 3]);
        let n = 14f64.sqrt();
        expect(
            "PNORM",
            2,
            [n, (16.0f64 + 25.0 + 0.25).sqrt(), 3.0, 5.0],
            [2.0 / n, -6.0 / n, 4.0 / n],
        );
        expect("PNORM", 1, [6.0, 9.5, 5.0, 7.0], [2.0, -2.0, 2.0]);
    }

    #[test]
    fn global_pooling_matches_finite_differences() {
        // PNORM 3 and AVG through a central difference of a random linear functional.
        let mut rng = Rng::new(4);
        let x: Vec<f64> = (0..3 * 2 * 12).map(|_| rng.next_gaussian()).collect();
        let d: Vec<f64> = (0..3 * 2).map(|_| rng.next_gaussian()).collect();
        for (kind, p) in [("PNORM", 3), ("PNORM", 2), ("AVG", 2), ("MAX", 2)] {
            let conf: GlobalPoolingLayerConfig =
                serde_json::from_value(json!({"poolingType": kind, "pnorm": p})).unwrap();
            let mut l =
                GlobalPoolingLayer::new(&conf, Shape::Image { c: 2, h: 3, w: 4 }, Shape::Flat(2));
            let y = run_fwd(&mut l, &x, 3);
            let g = run_bwd(&mut l, &x, &y, 3, &d);
            let f = |l: &mut GlobalPoolingLayer, x: &[f64]| -> f64 {
                run_fwd(l, x, 3).iter().zip(&d).map(|(a, b)| a * b).sum()
            };
            for i in 0..x.len() {
                let h = 1e-6;
                let mut xp = x.clone();
                xp[i] += h;
                let fp = f(&mut l, &xp);
                xp[i] -= 2.0 * h;
                let fm = f(&mut l, &xp);
                let num = (fp - fm) / (2.0 * h);
                assert!(
                    (num - g[i]).abs() < 1e-7,
                    "{kind} {p}: {i}: {num} vs {}",
                    g[i]
                );
            }
        }
    }
}
