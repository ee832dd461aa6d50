//! Convolution layers: 2-D over NCHW images ([`Conv2dLayer`]) and 1-D over `[C, L]` sequences
//! ([`Conv1dLayer`], run as a one-row image), by im2col + GEMM.
//!
//! # Algorithm
//!
//! The minibatch is cut into chunks of `m` examples, `m = max(1, CHUNK_TARGET / (K·P))` with
//! `K = nIn·kH·kW` and `P = oH·oW`, so that a chunk's column matrix stays in cache between im2col
//! and its GEMMs. For a chunk, with `n = m·P`:
//!
//! * im2col writes the column matrix `col [K, n]`: row `(ci, kh, kw)`, column `(example, oh, ow)`
//!   holds the input value that kernel tap reads, or 0 where it reads padding;
//! * forward: `Z [nOut, n] = W [nOut, K] · col` (one GEMM per chunk), then `Z` is scattered to the
//!   NCHW output rows with the bias added (a one-example chunk is multiplied straight into its
//!   output row); the activation is then applied to the whole output in place;
//! * backward: after the activation's backward, `dZ` is gathered to `[nOut, n]` (a one-example
//!   chunk uses `delta` as it is); `dW += dZ · colᵀ` and `dcol = Wᵀ · dZ` (transposes as strides,
//!   never copied), and col2im adds `dcol` back onto the input positions.
//!
//! Chunks are dealt round-robin to up to [`MAX_SLOTS`] slots that run in parallel
//! (`ferrodl_tensor::parallel_for_each`; the GEMMs inside a slot then run on its thread, while a
//! batch of one chunk keeps the multi-threaded GEMM). Each slot owns its buffers and its share of
//! `dW`/`db`, and the shares are summed in slot order: the cut depends on the geometry and the
//! batch size only, so results are identical for any thread count.
//!
//! When the columns of the whole batch fit [`COL_BUDGET`], each slot keeps every chunk's column
//! matrix from forward to backward (no second im2col); `dcol` then overwrites them. Otherwise a
//! slot holds one chunk at a time and backward rebuilds it. Buffers grow with the largest batch
//! seen and are never shrunk or reallocated otherwise.
//!
//! # Activation
//!
//! Element-wise activations act on every output value. SOFTMAX normalises along the last axis of
//! the output (`oW` of an image, `L` of a sequence), as the reference's softmax over the last
//! dimension of an NCHW / NCW array does.

use super::{product, Batch, Ctx, Layer, ParamKind, ParamSpec};
use crate::activation::ActivationCache;
use crate::config::defaults::*;
use crate::config::{window, BaseConfig, ConvolutionMode, Distribution, Shape, WeightInit};
use crate::config::{LayerShapes, ShapeCx};
use crate::error::NnError;
use crate::init::init_weights;
use crate::layers::LayerKind;
use ferrodl_tensor::memory::{self, MemoryError};
use ferrodl_tensor::{gemm, parallel_for_each, Op, Rng, Scalar};

/// Largest column matrix (elements) built at once; bigger batches are processed in chunks.
/// 8 Mi elements = 32 MiB in f32: a LeNet/CIFAR-size layer keeps a batch of 64–128 in one chunk.
pub const COL_BUDGET: usize = 1 << 23;

/// Column-matrix elements per chunk aimed at (a chunk is `max(1, CHUNK_TARGET / (K·P))`
/// examples): small enough for the chunk's columns to stay in cache between im2col and GEMM.
pub const CHUNK_TARGET: usize = 1 << 17;

/// Most slots (sequential workers; each keeps its own `dW` share) a batch is spread over.
pub const MAX_SLOTS: usize = 16;

/// Largest total size of the slots' `dW` shares (elements).
const GRAD_BUDGET: usize = 1 << 22;

/// One spatial dimension of a sliding window (convolution or pooling). Output position `o` reads
/// the input positions `o·s − pad + j·d` for taps `j < k`; positions outside `[0, input)` are
/// padding (zeros for convolution, ignored cells for pooling).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Dim {
    pub input: usize,
    pub k: usize,
    pub s: usize,
    pub d: usize,
    pub pad: usize,
    pub out: usize,
}

impl Dim {
    /// Sizes the dimension with [`window`] (Same mode: padding chosen there, extra after).
    pub fn new(
        name: &str,
        input: usize,
        k: usize,
        s: usize,
        p: usize,
        d: usize,
        mode: ConvolutionMode,
    ) -> Result<Dim, String> {
        let w = window(name, input, k, s, p, d, mode)?;
        Ok(Dim {
            input,
            k,
            s,
            d,
            pad: w.pad_before,
            out: w.out,
        })
    }

    /// A dimension of extent 1 that the window does not move along (1-D layers as one-row images).
    pub fn unit() -> Dim {
        Dim {
            input: 1,
            k: 1,
            s: 1,
            d: 1,
            pad: 0,
            out: 1,
        }
    }

    /// Output positions `lo..hi` whose tap `j` lands inside the input (`lo <= hi`).
    pub fn valid_outputs(&self, j: usize) -> (usize, usize) {
        let off = j * self.d;
        let lo = if off >= self.pad {
            0
        } else {
            (self.pad - off).div_ceil(self.s)
        };
        let hi = if self.input + self.pad <= off {
            0
        } else {
            (self.input + self.pad - off).div_ceil(self.s)
        }
        .min(self.out);
        (lo.min(hi), hi)
    }

    /// Taps `lo..hi` of output position `o` that land inside the input (`lo <= hi`).
    pub fn valid_taps(&self, o: usize) -> (usize, usize) {
        let start = o * self.s;
        let lo = if start >= self.pad {
            0
        } else {
            (self.pad - start).div_ceil(self.d)
        };
        let hi = if self.input + self.pad <= start {
            0
        } else {
            (self.input + self.pad - start).div_ceil(self.d)
        }
        .min(self.k);
        (lo.min(hi), hi)
    }

    /// For each output position: the input index of its first valid tap and the number of valid
    /// taps (consecutive valid taps are `d` apart).
    pub fn tap_table(&self) -> Vec<(usize, usize)> {
        (0..self.out)
            .map(|o| {
                let (lo, hi) = self.valid_taps(o);
                if lo == hi {
                    (0, 0)
                } else {
                    (o * self.s + lo * self.d - self.pad, hi - lo)
                }
            })
            .collect()
    }
}

/// `ConvolutionLayer "name"` or `ConvolutionLayer` — how this module's messages name a layer.
pub(super) fn describe(kind: &str, name: &Option<String>) -> String {
    match name {
        Some(n) => format!("{kind} \"{n}\""),
        None => kind.to_string(),
    }
}

/// Channels and spatial geometry of a convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geom {
    cin: usize,
    cout: usize,
    h: Dim,
    w: Dim,
}

impl Geom {
    /// Input values per channel.
    fn in_plane(&self) -> usize {
        self.h.input * self.w.input
    }
    /// Output positions per channel (`P`).
    fn out_plane(&self) -> usize {
        self.h.out * self.w.out
    }
    /// Rows of the column matrix (`K = nIn·kH·kW`).
    fn k(&self) -> usize {
        self.cin * self.h.k * self.w.k
    }
    fn n_in(&self) -> usize {
        self.cin * self.in_plane()
    }
    fn n_out(&self) -> usize {
        self.cout * self.out_plane()
    }
}

/// Writes the column matrix `[K, m·P]` of the `m` examples in `x` (`m × nIn·H·W`).
fn im2col<T: Scalar>(g: &Geom, x: &[T], m: usize, col: &mut [T]) {
    let (ih_n, iw_n) = (g.h.input, g.w.input);
    let ow_n = g.w.out;
    let (plane, p) = (g.in_plane(), g.out_plane());
    let n = m * p;
    let zero = T::zero();
    let mut rows = col.chunks_exact_mut(n);
    for ci in 0..g.cin {
        for kh in 0..g.h.k {
            let (oh_lo, oh_hi) = g.h.valid_outputs(kh);
            for kw in 0..g.w.k {
                let (ow_lo, ow_hi) = g.w.valid_outputs(kw);
                let row = rows.next().expect("column matrix has K rows");
                for (r, dst) in row.chunks_exact_mut(p).enumerate() {
                    let src = &x[(r * g.cin + ci) * plane..][..plane];
                    dst[..oh_lo * ow_n].fill(zero);
                    dst[oh_hi * ow_n..].fill(zero);
                    for oh in oh_lo..oh_hi {
                        let ih = oh * g.h.s + kh * g.h.d - g.h.pad;
                        debug_assert!(ih < ih_n);
                        let srow = &src[ih * iw_n..][..iw_n];
                        let drow = &mut dst[oh * ow_n..][..ow_n];
                        drow[..ow_lo].fill(zero);
                        drow[ow_hi..].fill(zero);
                        if ow_lo == ow_hi {
                            continue;
                        }
                        let iw0 = ow_lo * g.w.s + kw * g.w.d - g.w.pad;
                        let len = ow_hi - ow_lo;
                        if g.w.s == 1 {
                            drow[ow_lo..ow_hi].copy_from_slice(&srow[iw0..iw0 + len]);
                        } else {
                            for (v, &s) in drow[ow_lo..ow_hi]
                                .iter_mut()
                                .zip(srow[iw0..].iter().step_by(g.w.s))
                            {
                                *v = s;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Adds the column matrix `[K, m·P]` back onto the input positions it was read from:
/// `dx (m × nIn·H·W) = col2im(col)`; `dx` is overwritten.
fn col2im<T: Scalar>(g: &Geom, col: &[T], m: usize, dx: &mut [T]) {
    let iw_n = g.w.input;
    let ow_n = g.w.out;
    let (plane, p) = (g.in_plane(), g.out_plane());
    let n = m * p;
    dx.fill(T::zero());
    let mut rows = col.chunks_exact(n);
    for ci in 0..g.cin {
        for kh in 0..g.h.k {
            let (oh_lo, oh_hi) = g.h.valid_outputs(kh);
            for kw in 0..g.w.k {
                let (ow_lo, ow_hi) = g.w.valid_outputs(kw);
                let row = rows.next().expect("column matrix has K rows");
                if ow_lo == ow_hi {
                    continue;
                }
                let iw0 = ow_lo * g.w.s + kw * g.w.d - g.w.pad;
                let len = ow_hi - ow_lo;
                for (r, src) in row.chunks_exact(p).enumerate() {
                    let dst = &mut dx[(r * g.cin + ci) * plane..][..plane];
                    for oh in oh_lo..oh_hi {
                        let ih = oh * g.h.s + kh * g.h.d - g.h.pad;
                        let drow = &mut dst[ih * iw_n..][..iw_n];
                        let srow = &src[oh * ow_n + ow_lo..][..len];
                        if g.w.s == 1 {
                            for (d, &s) in drow[iw0..iw0 + len].iter_mut().zip(srow) {
                                *d = *d + s;
                            }
                        } else {
                            for (d, &s) in drow[iw0..].iter_mut().step_by(g.w.s).zip(srow) {
                                *d = *d + s;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The shared implementation of both convolution layers.
#[derive(Debug)]
struct ConvCore<T> {
    type_name: &'static str,
    geom: Geom,
    input: Shape,
    output: Shape,
    has_bias: bool,
    weight_init: WeightInit,
    distribution: Option<Distribution>,
    bias_init: f64,
    /// Shape of `W`: `[nOut, nIn, kH, kW]` (2-D) or `[nOut, nIn, k]` (1-D).
    w_shape: Vec<usize>,
    act: ActivationCache<T>,
    /// Per-slot scratch; slot `s` processes chunks `s, s + S, s + 2S, ...` of a batch.
    slots: Vec<Slot<T>>,
    /// The plan of the last forward pass, when the slots still hold all its column matrices.
    cols_of: Option<Plan>,
    /// Maximum total size of the column matrices (elements); [`COL_BUDGET`] except in tests.
    col_budget: usize,
    /// Column-matrix elements per chunk aimed at; [`CHUNK_TARGET`] except in tests.
    chunk_target: usize,
}

/// Scratch of one slot (one sequential worker of the parallel loops).
#[derive(Debug, Default)]
struct Slot<T> {
    /// Column matrices of the slot's chunks (all of them when [`Plan::keep`], else one),
    /// `K × m·P` each; `dcol` overwrites them in backward.
    col: Vec<T>,
    /// `Z` / `dZ` of the current chunk in `[nOut, m·P]` order.
    z: Vec<T>,
    /// This slot's share of `dW` then `db`.
    grad: Vec<T>,
}

/// A slot and the chunks it processes: `(chunk index, the chunk's slices)`.
type SlotWork<'a, T, C> = (&'a mut Slot<T>, Vec<(usize, C)>);

/// A chunk's `dZ` rows and, when wanted, its block of `dL/dx`.
type GradChunk<'a, T> = (&'a [T], Option<&'a mut [T]>);

/// How a batch is cut: chunks of `sub` examples (the last one shorter), spread over `slots`
/// sequential workers that run in parallel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    rows: usize,
    sub: usize,
    chunks: usize,
    slots: usize,
    /// The column matrices of the whole batch fit [`COL_BUDGET`]: each slot keeps all of its
    /// chunks' columns, so backward need not rebuild them.
    keep: bool,
}

impl Plan {
    /// Chunks a slot processes.
    fn chunks_of_slot(&self, s: usize) -> usize {
        (self.chunks + self.slots - 1 - s) / self.slots
    }
}

/// IDENTITY initialisation of a convolution: the kernel's centre tap is 1 from channel `c` to
/// channel `c`, which needs as many output as input channels and odd kernel sizes. Applied when the
/// layer is built, which `resolve` (the Java builders' `build()`) also does.
fn identity_rule(
    who: &str,
    weight_init: WeightInit,
    n_in: usize,
    n_out: usize,
    kernel: &[usize],
) -> Result<(), NnError> {
    if weight_init == WeightInit::Identity
        && (n_in != n_out || !kernel.iter().all(|k| k % 2 == 1))
    {
        let kernel = kernel
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join("×");
        return Err(NnError::InvalidConfig(format!(
            "{who}: weightInit IDENTITY needs nIn == nOut and odd kernel sizes, but nIn={n_in}, \
             nOut={n_out}, kernel {kernel}"
        )));
    }
    Ok(())
}

impl<T: Scalar> ConvCore<T> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        type_name: &'static str,
        who: &str,
        geom: Geom,
        input: Shape,
        output: Shape,
        has_bias: bool,
        base: BaseConfig<'_>,
        w_shape: Vec<usize>,
    ) -> Result<Self, NnError> {
        let expected = output_shape(input, &geom);
        if output != expected {
            return Err(NnError::Shape(format!(
                "{who}: output shape {output} does not match the convolution's {expected}"
            )));
        }
        identity_rule(who, base.weight_init, geom.cin, geom.cout, &w_shape[2..])?;
        Ok(ConvCore {
            type_name,
            geom,
            input,
            output,
            has_bias,
            weight_init: base.weight_init,
            distribution: base.weight_init_distribution,
            bias_init: base.bias_init,
            w_shape,
            act: ActivationCache::new(base.activation),
            slots: Vec::new(),
            cols_of: None,
            col_budget: COL_BUDGET,
            chunk_target: CHUNK_TARGET,
        })
    }

    fn n_weights(&self) -> usize {
        self.w_shape.iter().product()
    }

    fn param_specs(&self) -> Vec<ParamSpec> {
        let mut v = vec![ParamSpec::new("W", ParamKind::Weight, self.w_shape.clone())];
        if self.has_bias {
            v.push(ParamSpec::new("b", ParamKind::Bias, vec![self.geom.cout]));
        }
        v
    }

    /// Weights by the scheme (fan-in `nIn·kH·kW`, fan-out `nOut·kH·kW/(sH·sW)`), drawn in
    /// row-major order of `W`; biases `biasInit` (no draws).
    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        let g = &self.geom;
        let kernel = (g.h.k * g.w.k) as f64;
        let fan_in = g.cin as f64 * kernel;
        let fan_out = g.cout as f64 * kernel / (g.h.s * g.w.s) as f64;
        let (w, b) = params.split_at_mut(self.n_weights());
        init_weights(
            self.weight_init,
            self.distribution,
            fan_in,
            fan_out,
            &self.w_shape,
            w,
            rng,
        );
        b.fill(T::of(self.bias_init));
    }

    /// Cuts a batch of `rows` examples into chunks and slots. Depends on the geometry and `rows`
    /// only (never on the thread count), so results are the same on any number of threads.
    fn plan(&self, rows: usize) -> Plan {
        let g = &self.geom;
        let per_example = (g.k() * g.out_plane()).max(1);
        let sub = (self.chunk_target / per_example).clamp(1, rows.max(1));
        let chunks = rows.div_ceil(sub);
        let keep = rows * per_example <= self.col_budget;
        let by_budget = if keep {
            chunks
        } else {
            self.col_budget / (sub * (per_example + g.n_out()))
        };
        let by_grad = GRAD_BUDGET / (g.cout * g.k() + g.cout).max(1);
        let slots = chunks.min(MAX_SLOTS).min(by_budget).min(by_grad).max(1);
        Plan {
            rows,
            sub,
            chunks,
            slots,
            keep,
        }
    }

    /// Sizes the slots' buffers for `plan` (they only ever grow): the im2col columns, the GEMM
    /// staging of `Z` and each slot's gradient share, with checked sizes, checked against the
    /// native memory budget as one request and reserved fallibly; `who` names the layer.
    fn reserve(&mut self, plan: &Plan, who: &str) -> Result<(), MemoryError> {
        let g = self.geom;
        let what = || {
            format!(
                "the convolution workspace (im2col columns) of {who} for a minibatch of {} \
                 examples",
                plan.rows
            )
        };
        let n = plan.sub.checked_mul(g.out_plane());
        let sizes: Vec<Option<[usize; 3]>> = (0..plan.slots)
            .map(|s| {
                let cols = if plan.keep { plan.chunks_of_slot(s) } else { 1 };
                let n = n?;
                let col = product(&[cols, g.k(), n])?;
                let z = if plan.sub > 1 { g.cout.checked_mul(n)? } else { 0 };
                let grad = g.cout.checked_mul(g.k())?.checked_add(g.cout)?;
                Some([col, z, grad])
            })
            .collect();
        // Everything this plan adds, as one request: the refusal states the whole workspace.
        let mut extra: Option<u64> = Some(0);
        for (s, size) in sizes.iter().enumerate() {
            let have = self.slots.get(s).map_or([0; 3], |sl| {
                [sl.col.capacity(), sl.z.capacity(), sl.grad.capacity()]
            });
            extra = match (extra, size) {
                (Some(e), Some(size)) => size.iter().zip(have).try_fold(e, |e, (&want, have)| {
                    e.checked_add(memory::bytes_of(want.saturating_sub(have), std::mem::size_of::<T>())?)
                }),
                _ => None,
            };
        }
        if extra != Some(0) {
            memory::check(what, extra)?;
        }
        if self.slots.len() < plan.slots {
            self.slots.resize_with(plan.slots, Slot::default);
        }
        for (slot, size) in self.slots[..plan.slots].iter_mut().zip(sizes) {
            let [col, z, grad] = size.expect("checked above");
            memory::try_grow(&mut slot.col, col, T::zero(), what)?;
            memory::try_grow(&mut slot.z, z, T::zero(), what)?;
            memory::try_grow(&mut slot.grad, grad, T::zero(), what)?;
        }
        let out = plan.rows.saturating_mul(g.n_out());
        self.act.reserve(out, who)
    }

    fn forward(&mut self, params: &[T], input: &[T], batch: &Batch<'_, T>, output: &mut [T]) {
        let rows = batch.rows;
        let g = self.geom;
        let (n_in, n_out, p, k) = (g.n_in(), g.n_out(), g.out_plane(), g.k());
        assert_eq!(input.len(), rows * n_in, "{}: input length", self.type_name);
        assert_eq!(
            output.len(),
            rows * n_out,
            "{}: output length",
            self.type_name
        );
        let (w, b) = params.split_at(self.n_weights());
        let bias = self.has_bias.then_some(b);
        let plan = self.plan(rows);
        super::reserved(self.reserve(&plan, self.type_name));
        let mut work: Vec<SlotWork<'_, T, &mut [T]>> = self.slots[..plan.slots]
            .iter_mut()
            .map(|s| (s, Vec::new()))
            .collect();
        for (i, out) in output.chunks_mut(plan.sub * n_out).enumerate() {
            work[i % plan.slots].1.push((i, out));
        }
        parallel_for_each(work, |(slot, chunks)| {
            for (j, (i, out)) in chunks.into_iter().enumerate() {
                let m = out.len() / n_out;
                let n = m * p;
                let x = &input[i * plan.sub * n_in..][..m * n_in];
                let off = if plan.keep { j * plan.sub * p * k } else { 0 };
                let col = &mut slot.col[off..off + k * n];
                im2col(&g, x, m, col);
                if m == 1 {
                    // One example: Z [nOut, P] is already the output row's layout.
                    gemm(Op::N, Op::N, g.cout, n, k, T::one(), w, col, T::zero(), out);
                    if let Some(b) = bias {
                        for (dst, &bc) in out.chunks_exact_mut(p).zip(b) {
                            dst.iter_mut().for_each(|d| *d = *d + bc);
                        }
                    }
                    continue;
                }
                let z = &mut slot.z[..g.cout * n];
                gemm(Op::N, Op::N, g.cout, n, k, T::one(), w, col, T::zero(), z);
                // Z [nOut, (example, position)] -> rows [example][nOut][position], plus bias.
                for (r, orow) in out.chunks_exact_mut(n_out).enumerate() {
                    for (c, dst) in orow.chunks_exact_mut(p).enumerate() {
                        let src = &z[c * n + r * p..][..p];
                        match bias {
                            Some(b) => {
                                let bc = b[c];
                                for (d, &s) in dst.iter_mut().zip(src) {
                                    *d = s + bc;
                                }
                            }
                            None => dst.copy_from_slice(src),
                        }
                    }
                }
            }
        });
        self.cols_of = plan.keep.then_some(plan);
        self.act.forward(output, g.w.out, None);
    }

    #[allow(clippy::too_many_arguments)]
    fn backward(
        &mut self,
        params: &[T],
        input: &[T],
        output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let rows = batch.rows;
        let g = self.geom;
        let (n_in, n_out, p, k) = (g.n_in(), g.n_out(), g.out_plane(), g.k());
        assert_eq!(
            delta.len(),
            rows * n_out,
            "{}: delta length",
            self.type_name
        );
        self.act.backward(output, delta, g.w.out);
        let nw = self.n_weights();
        let w = &params[..nw];
        let plan = self.plan(rows);
        let reuse = self.cols_of == Some(plan);
        super::reserved(self.reserve(&plan, self.type_name));
        let has_bias = self.has_bias;
        let wants_gx = grad_input.is_some();
        let delta: &[T] = delta;
        let mut gx_chunks = grad_input.map(|gx| gx.chunks_mut(plan.sub * n_in));
        let mut work: Vec<SlotWork<'_, T, GradChunk<'_, T>>> = self.slots[..plan.slots]
            .iter_mut()
            .map(|s| (s, Vec::new()))
            .collect();
        for (i, d) in delta.chunks(plan.sub * n_out).enumerate() {
            let gx = gx_chunks.as_mut().and_then(|c| c.next());
            work[i % plan.slots].1.push((i, (d, gx)));
        }
        parallel_for_each(work, |(slot, chunks)| {
            let (gw_s, gb_s) = slot.grad[..nw + g.cout].split_at_mut(nw);
            for (j, (i, (d, gx))) in chunks.into_iter().enumerate() {
                let m = d.len() / n_out;
                let n = m * p;
                let off = if plan.keep { j * plan.sub * p * k } else { 0 };
                let col = &mut slot.col[off..off + k * n];
                if !reuse {
                    im2col(&g, &input[i * plan.sub * n_in..][..m * n_in], m, col);
                }
                if has_bias {
                    if j == 0 {
                        gb_s.fill(T::zero());
                    }
                    for drow in d.chunks_exact(n_out) {
                        for (gbc, dc) in gb_s.iter_mut().zip(drow.chunks_exact(p)) {
                            *gbc = *gbc + lane_sum(dc);
                        }
                    }
                }
                let z: &[T] = if m == 1 {
                    // One example: its dZ rows are already in [nOut, P] order.
                    d
                } else {
                    // dZ rows [example][nOut][position] -> [nOut, (example, position)].
                    let z = &mut slot.z[..g.cout * n];
                    for (r, drow) in d.chunks_exact(n_out).enumerate() {
                        for (c, src) in drow.chunks_exact(p).enumerate() {
                            z[c * n + r * p..][..p].copy_from_slice(src);
                        }
                    }
                    z
                };
                let beta = if j == 0 { T::zero() } else { T::one() };
                gemm(Op::N, Op::T, g.cout, k, n, T::one(), z, col, beta, gw_s);
                if let Some(gx) = gx {
                    // dcol = Wᵀ·dZ into the column buffer (its im2col is no longer needed).
                    gemm(Op::T, Op::N, k, n, g.cout, T::one(), w, z, T::zero(), col);
                    col2im(&g, col, m, gx);
                }
            }
        });
        if wants_gx {
            self.cols_of = None;
        }
        // The slots' shares, summed in slot order.
        let len = nw + if has_bias { g.cout } else { 0 };
        let grads = &mut grads[..len];
        if rows == 0 {
            grads.fill(T::zero());
            return;
        }
        for (s, slot) in self.slots[..plan.slots].iter().enumerate() {
            let part = &slot.grad[..len];
            if s == 0 {
                grads.copy_from_slice(part);
            } else {
                grads.iter_mut().zip(part).for_each(|(a, &b)| *a = *a + b);
            }
        }
    }
}

/// `Σx` over 8 interleaved partial sums (vectorisable; a fixed order, so deterministic).
#[inline]
fn lane_sum<T: Scalar>(x: &[T]) -> T {
    let mut acc = [T::zero(); 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = *a + v;
        }
    }
    let s = chunks.remainder().iter().fold(T::zero(), |s, &v| s + v);
    acc.iter().fold(s, |s, &v| s + v)
}

fn output_shape(input: Shape, g: &Geom) -> Shape {
    match input {
        Shape::Seq { .. } => Shape::Seq {
            c: g.cout,
            len: g.w.out,
        },
        _ => Shape::Image {
            c: g.cout,
            h: g.h.out,
            w: g.w.out,
        },
    }
}

fn channels_error(who: &str, n_in: usize, input: Shape) -> NnError {
    NnError::InvalidConfig(format!(
        "{who}: nIn={n_in} does not match the {} channels of its input, {input}",
        input.channels()
    ))
}

/// 2-D convolution over NCHW input: `W [nOut, nIn, kH, kW]`, then `b [nOut]` when `hasBias`.
#[derive(Debug)]
pub struct Conv2dLayer<T> {
    core: ConvCore<T>,
}

impl<T: Scalar> Conv2dLayer<T> {
    pub fn new(c: &ConvolutionLayerConfig, input: Shape, output: Shape) -> Result<Self, NnError> {
        let who = describe("ConvolutionLayer", &c.name);
        let Shape::Image { c: ch, h, w } = input else {
            return Err(NnError::InvalidConfig(format!(
                "{who}: needs a convolutional input but gets {input}"
            )));
        };
        if ch != c.n_in {
            return Err(channels_error(&who, c.n_in, input));
        }
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
        let geom = Geom {
            cin: c.n_in,
            cout: c.n_out,
            h: dim("height", 0, h)?,
            w: dim("width", 1, w)?,
        };
        let w_shape = vec![c.n_out, c.n_in, c.kernel_size[0], c.kernel_size[1]];
        Ok(Conv2dLayer {
            core: ConvCore::new(
                "ConvolutionLayer",
                &who,
                geom,
                input,
                output,
                c.has_bias,
                c.base(),
                w_shape,
            )?,
        })
    }
}

/// 1-D convolution over `[C, L]` input: `W [nOut, nIn, k]`, then `b [nOut]` when `hasBias`.
#[derive(Debug)]
pub struct Conv1dLayer<T> {
    core: ConvCore<T>,
}

impl<T: Scalar> Conv1dLayer<T> {
    pub fn new(c: &Convolution1DLayerConfig, input: Shape, output: Shape) -> Result<Self, NnError> {
        let who = describe("Convolution1DLayer", &c.name);
        let Shape::Seq { c: ch, len } = input else {
            return Err(NnError::InvalidConfig(format!(
                "{who}: needs a recurrent input [C, L] but gets {input}"
            )));
        };
        if ch != c.n_in {
            return Err(channels_error(&who, c.n_in, input));
        }
        let wdim = Dim::new(
            "length",
            len,
            c.kernel_size,
            c.stride,
            c.padding,
            c.dilation,
            c.convolution_mode,
        )
        .map_err(|m| NnError::InvalidConfig(format!("{who}: {m}")))?;
        let geom = Geom {
            cin: c.n_in,
            cout: c.n_out,
            h: Dim::unit(),
            w: wdim,
        };
        let w_shape = vec![c.n_out, c.n_in, c.kernel_size];
        Ok(Conv1dLayer {
            core: ConvCore::new(
                "Convolution1DLayer",
                &who,
                geom,
                input,
                output,
                c.has_bias,
                c.base(),
                w_shape,
            )?,
        })
    }
}

macro_rules! delegate_layer {
    ($t:ident) => {
        impl<T: Scalar> Layer<T> for $t<T> {
            fn type_name(&self) -> &'static str {
                self.core.type_name
            }
            fn input_shape(&self) -> Shape {
                self.core.input
            }
            fn output_shape(&self) -> Shape {
                self.core.output
            }
            fn param_specs(&self) -> Vec<ParamSpec> {
                self.core.param_specs()
            }
            fn num_params(&self) -> usize {
                self.core.n_weights()
                    + if self.core.has_bias {
                        self.core.geom.cout
                    } else {
                        0
                    }
            }
            fn init_params(&self, params: &mut [T], rng: &mut Rng) {
                self.core.init_params(params, rng)
            }
            fn reserve_workspace(&mut self, rows: usize, _steps: usize, who: &str) -> Result<(), MemoryError> {
                let plan = self.core.plan(rows);
                self.core.reserve(&plan, who)
            }
            fn forward(
                &mut self,
                params: &[T],
                input: &[T],
                batch: &Batch<'_, T>,
                output: &mut [T],
                _ctx: &mut Ctx,
            ) {
                self.core.forward(params, input, batch, output)
            }
            fn backward(
                &mut self,
                params: &[T],
                input: &[T],
                output: &[T],
                batch: &Batch<'_, T>,
                delta: &mut [T],
                grads: &mut [T],
                grad_input: Option<&mut [T]>,
            ) {
                self.core
                    .backward(params, input, output, batch, delta, grads, grad_input)
            }
        }
    };
}

delegate_layer!(Conv2dLayer);
delegate_layer!(Conv1dLayer);

crate::config::layers::base_layer!(
    /// 2-D convolution over NCHW input; weights `[nOut, nIn, kH, kW]`.
    ConvolutionLayerConfig, default_activation = "crate::config::Activation::default", {
        #[serde(default = "default_kernel_2d")]
        kernel_size: [usize; 2],
        #[serde(default = "ones_2d")]
        stride: [usize; 2],
        #[serde(default)]
        padding: [usize; 2],
        #[serde(default = "ones_2d")]
        dilation: [usize; 2],
        #[serde(default)]
        convolution_mode: ConvolutionMode,
        #[serde(default = "default_true")]
        has_bias: bool,
    }
);

impl LayerKind for ConvolutionLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (ch, h, w) = cx.image("ConvolutionLayer")?;
        cx.no_causal(self.convolution_mode)?;
        cx.channels_match(self.n_in, ch)?;
        cx.positive("nOut", self.n_out)?;
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
            c: self.n_out,
            h: wh.out,
            w: ww.out,
        })
    }

    /// nIn is the channels of an image input.
    fn infer_n_in(&mut self, input: Shape) {
        if let (0, Shape::Image { c, .. }) = (self.n_in, input) {
            self.n_in = c;
        }
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(Conv2dLayer::new(
            self,
            shapes.input,
            shapes.output,
        )?))
    }
}

crate::config::layers::base_layer!(
    /// 1-D convolution over `[C, L]` input; weights `[nOut, nIn, k]`.
    Convolution1DLayerConfig, default_activation = "crate::config::Activation::default", {
        #[serde(default = "default_kernel_1d")]
        kernel_size: usize,
        #[serde(default = "one_usize")]
        stride: usize,
        #[serde(default)]
        padding: usize,
        #[serde(default = "one_usize")]
        dilation: usize,
        #[serde(default)]
        convolution_mode: ConvolutionMode,
        #[serde(default = "default_true")]
        has_bias: bool,
    }
);

impl LayerKind for Convolution1DLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (ch, len) = cx.seq("Convolution1DLayer")?;
        cx.channels_match(self.n_in, ch)?;
        cx.positive("nOut", self.n_out)?;
        let wl = cx.window(
            "length",
            len,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.convolution_mode,
        )?;
        Ok(Shape::Seq {
            c: self.n_out,
            len: wl.out,
        })
    }

    /// nIn is the channels of a `[C, L]` input.
    fn infer_n_in(&mut self, input: Shape) {
        if let (0, Shape::Seq { c, .. }) = (self.n_in, input) {
            self.n_in = c;
        }
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(Conv1dLayer::new(
            self,
            shapes.input,
            shapes.output,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn merge(mut base: Value, extra: Value) -> Value {
        if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        base
    }

    fn conf2d(extra: Value) -> ConvolutionLayerConfig {
        let v = merge(
            json!({"nIn": 2, "nOut": 3, "activation": "IDENTITY"}),
            extra,
        );
        serde_json::from_value(v).unwrap()
    }

    fn conf1d(extra: Value) -> Convolution1DLayerConfig {
        let v = merge(
            json!({"nIn": 2, "nOut": 3, "activation": "IDENTITY"}),
            extra,
        );
        serde_json::from_value(v).unwrap()
    }

    fn normal(rng: &mut Rng, n: usize) -> Vec<f64> {
        (0..n).map(|_| rng.next_gaussian()).collect()
    }

    fn ctx_run<L: Layer<f64>>(layer: &mut L, params: &[f64], x: &[f64], rows: usize) -> Vec<f64> {
        let mut out = vec![f64::NAN; rows * layer.n_out()];
        let mut rng = Rng::new(0);
        let mut ctx = Ctx {
            train: true,
            rng: &mut rng,
            state: crate::layers::StateMode::Stateless,
        };
        layer.forward(params, x, &Batch::rows(rows), &mut out, &mut ctx);
        out
    }

    /// The 2-D layer for `c` on a `[C, H, W]` input, output shape from the validation rules.
    fn build2d<T: Scalar>(c: &ConvolutionLayerConfig, h: usize, w: usize) -> Conv2dLayer<T> {
        let wh = window(
            "height",
            h,
            c.kernel_size[0],
            c.stride[0],
            c.padding[0],
            c.dilation[0],
            c.convolution_mode,
        )
        .unwrap();
        let ww = window(
            "width",
            w,
            c.kernel_size[1],
            c.stride[1],
            c.padding[1],
            c.dilation[1],
            c.convolution_mode,
        )
        .unwrap();
        Conv2dLayer::new(
            c,
            Shape::Image { c: c.n_in, h, w },
            Shape::Image {
                c: c.n_out,
                h: wh.out,
                w: ww.out,
            },
        )
        .unwrap()
    }

    /// Direct convolution, independent of im2col: `[rows, cin, H, W]` -> `[rows, cout, oH, oW]`
    /// pre-activations, with padding before (`ph`, `pw`) and everything outside the input zero.
    struct Naive {
        cin: usize,
        cout: usize,
        h: usize,
        w: usize,
        k: [usize; 2],
        s: [usize; 2],
        d: [usize; 2],
        pad: [usize; 2],
        out: [usize; 2],
    }

    impl Naive {
        fn of(g: &Geom) -> Naive {
            Naive {
                cin: g.cin,
                cout: g.cout,
                h: g.h.input,
                w: g.w.input,
                k: [g.h.k, g.w.k],
                s: [g.h.s, g.w.s],
                d: [g.h.d, g.w.d],
                pad: [g.h.pad, g.w.pad],
                out: [g.h.out, g.w.out],
            }
        }

        /// Input index read by output (oh, ow) at tap (kh, kw), if inside the image.
        fn at(&self, oh: usize, ow: usize, kh: usize, kw: usize) -> Option<(usize, usize)> {
            let ih = (oh * self.s[0] + kh * self.d[0]) as isize - self.pad[0] as isize;
            let iw = (ow * self.s[1] + kw * self.d[1]) as isize - self.pad[1] as isize;
            (ih >= 0 && iw >= 0 && (ih as usize) < self.h && (iw as usize) < self.w)
                .then_some((ih as usize, iw as usize))
        }

        fn widx(&self, co: usize, ci: usize, kh: usize, kw: usize) -> usize {
            ((co * self.cin + ci) * self.k[0] + kh) * self.k[1] + kw
        }

        fn forward(&self, wt: &[f64], b: Option<&[f64]>, x: &[f64], rows: usize) -> Vec<f64> {
            let [oh_n, ow_n] = self.out;
            let mut z = vec![0.0; rows * self.cout * oh_n * ow_n];
            for r in 0..rows {
                for co in 0..self.cout {
                    for oh in 0..oh_n {
                        for ow in 0..ow_n {
                            let mut s = b.map_or(0.0, |b| b[co]);
                            for ci in 0..self.cin {
                                for kh in 0..self.k[0] {
                                    for kw in 0..self.k[1] {
                                        if let Some((ih, iw)) = self.at(oh, ow, kh, kw) {
                                            s += wt[self.widx(co, ci, kh, kw)]
                                                * x[((r * self.cin + ci) * self.h + ih) * self.w
                                                    + iw];
                                        }
                                    }
                                }
                            }
                            z[((r * self.cout + co) * oh_n + oh) * ow_n + ow] = s;
                        }
                    }
                }
            }
            z
        }

        /// (dW, db, dx) from dz.
        fn backward(
            &self,
            wt: &[f64],
            x: &[f64],
            dz: &[f64],
            rows: usize,
        ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
            let [oh_n, ow_n] = self.out;
            let mut gw = vec![0.0; wt.len()];
            let mut gb = vec![0.0; self.cout];
            let mut gx = vec![0.0; x.len()];
            for r in 0..rows {
                for co in 0..self.cout {
                    for oh in 0..oh_n {
                        for ow in 0..ow_n {
                            let d = dz[((r * self.cout + co) * oh_n + oh) * ow_n + ow];
                            gb[co] += d;
                            for ci in 0..self.cin {
                                for kh in 0..self.k[0] {
                                    for kw in 0..self.k[1] {
                                        if let Some((ih, iw)) = self.at(oh, ow, kh, kw) {
                                            let xi =
                                                ((r * self.cin + ci) * self.h + ih) * self.w + iw;
                                            let wi = self.widx(co, ci, kh, kw);
                                            gw[wi] += d * x[xi];
                                            gx[xi] += d * wt[wi];
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            (gw, gb, gx)
        }
    }

    fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
        assert_eq!(got.len(), want.len(), "{what}: length");
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "{what}[{i}]: got {g}, want {w}"
            );
        }
    }

    /// Forward, weight/bias/input gradients against the direct convolution, with the batch in
    /// one chunk and in chunks of one and two examples.
    fn check_against_naive(extra: Value, h: usize, w: usize, rows: usize, seed: u64) {
        let c = conf2d(extra.clone());
        // (examples per chunk, column budget in examples): one chunk; chunks of 1 and 2 with
        // and without keeping the columns for backward (1-example budget: a single slot).
        for (chunk, budget) in [(1000, 1000), (1, 1000), (2, 1000), (1, 1), (2, 3)] {
            let mut layer = build2d::<f64>(&c, h, w);
            let g = layer.core.geom;
            layer.core.chunk_target = chunk * g.k() * g.out_plane();
            layer.core.col_budget = budget * g.k() * g.out_plane();
            let naive = Naive::of(&g);
            let mut rng = Rng::new(seed);
            let params = normal(&mut rng, Layer::<f64>::num_params(&layer));
            let x = normal(&mut rng, rows * g.n_in());
            let out = ctx_run(&mut layer, &params, &x, rows);
            let nw = layer.core.n_weights();
            let (wt, b) = params.split_at(nw);
            let bias = c.has_bias.then_some(b);
            let want = naive.forward(wt, bias, &x, rows);
            assert_close(&format!("{extra} forward"), &out, &want, 1e-12);

            let dz = normal(&mut rng, out.len());
            let mut delta = dz.clone();
            let mut grads = vec![f64::NAN; params.len()];
            let mut gx = vec![f64::NAN; x.len()];
            layer.backward(
                &params,
                &x,
                &out,
                &Batch::rows(rows),
                &mut delta,
                &mut grads,
                Some(&mut gx),
            );
            let (gw_want, gb_want, gx_want) = naive.backward(wt, &x, &dz, rows);
            assert_close(&format!("{extra} dW"), &grads[..nw], &gw_want, 1e-12);
            if c.has_bias {
                assert_close(&format!("{extra} db"), &grads[nw..], &gb_want, 1e-12);
            }
            assert_close(&format!("{extra} dx"), &gx, &gx_want, 1e-12);

            // Without an input gradient the parameter gradients are the same; a second backward
            // (column buffer now reused for dcol) recomputes the columns.
            let mut grads2 = vec![f64::NAN; params.len()];
            let mut delta = dz.clone();
            layer.backward(
                &params,
                &x,
                &out,
                &Batch::rows(rows),
                &mut delta,
                &mut grads2,
                None,
            );
            assert_close(&format!("{extra} dW again"), &grads2, &grads, 1e-12);
        }
    }

    #[test]
    fn matches_direct_convolution_across_geometries() {
        let cases = [
            (json!({"kernelSize": [3, 3]}), 5, 5, 2),
            (json!({"kernelSize": [3, 2], "stride": [2, 1]}), 7, 6, 3),
            (json!({"kernelSize": [3, 3], "padding": [1, 2]}), 5, 4, 2),
            (
                json!({"kernelSize": [2, 3], "stride": [2, 3], "padding": [1, 1]}),
                6,
                7,
                2,
            ),
            (json!({"kernelSize": [3, 3], "dilation": [2, 2]}), 7, 8, 2),
            (
                json!({"kernelSize": [2, 3], "dilation": [3, 2], "padding": [2, 1], "stride": [2, 2]}),
                9,
                7,
                3,
            ),
            (
                json!({"kernelSize": [3, 3], "convolutionMode": "Same"}),
                5,
                6,
                2,
            ),
            (
                json!({"kernelSize": [2, 2], "convolutionMode": "Same", "stride": [2, 2]}),
                7,
                5,
                2,
            ),
            (
                json!({"kernelSize": [4, 3], "convolutionMode": "Same", "stride": [3, 2], "dilation": [2, 1]}),
                8,
                9,
                2,
            ),
            (
                json!({"kernelSize": [3, 3], "convolutionMode": "Strict", "stride": [2, 2]}),
                7,
                9,
                2,
            ),
            (json!({"kernelSize": [1, 1]}), 3, 4, 3),
            (
                json!({"kernelSize": [1, 1], "stride": [2, 2], "hasBias": false}),
                5,
                5,
                2,
            ),
            (json!({"kernelSize": [5, 5], "nIn": 1, "nOut": 4}), 9, 8, 4),
            (
                json!({"kernelSize": [3, 3], "nIn": 3, "nOut": 1, "padding": [3, 3]}),
                2,
                3,
                2,
            ),
            (
                json!({"kernelSize": [3, 3], "hasBias": false, "padding": [1, 1]}),
                1,
                1,
                1,
            ),
        ];
        for (i, (extra, h, w, rows)) in cases.into_iter().enumerate() {
            check_against_naive(extra, h, w, rows, 100 + i as u64);
        }
    }

    /// Same mode puts the odd padding cell after the input: 3×3 input, 2×2 kernel of ones,
    /// stride 1 -> each output sums its 2×2 block, the last row/column reading zeros below/right.
    #[test]
    fn same_mode_pads_bottom_right() {
        let c =
            conf2d(json!({"nIn": 1, "nOut": 1, "kernelSize": [2, 2], "convolutionMode": "Same"}));
        let mut layer = build2d::<f64>(&c, 3, 3);
        let params = [1.0, 1.0, 1.0, 1.0, 0.5];
        let x: Vec<f64> = (1..=9).map(f64::from).collect();
        let out = ctx_run(&mut layer, &params, &x, 1);
        let want = [
            1.0 + 2.0 + 4.0 + 5.0,
            2.0 + 3.0 + 5.0 + 6.0,
            3.0 + 6.0,
            4.0 + 5.0 + 7.0 + 8.0,
            5.0 + 6.0 + 8.0 + 9.0,
            6.0 + 9.0,
            7.0 + 8.0,
            8.0 + 9.0,
            9.0,
        ]
        .map(|v| v + 0.5);
        assert_eq!(out, want);
    }

    #[test]
    fn activation_applies_to_the_convolution_output() {
        let c = conf2d(json!({"kernelSize": [2, 2], "activation": "TANH", "padding": [1, 0]}));
        let mut layer = build2d::<f64>(&c, 4, 3);
        let g = layer.core.geom;
        let naive = Naive::of(&g);
        let mut rng = Rng::new(5);
        let params = normal(&mut rng, Layer::<f64>::num_params(&layer));
        let x = normal(&mut rng, 2 * g.n_in());
        let out = ctx_run(&mut layer, &params, &x, 2);
        let (wt, b) = params.split_at(layer.core.n_weights());
        let z = naive.forward(wt, Some(b), &x, 2);
        let a: Vec<f64> = z.iter().map(|v| v.tanh()).collect();
        assert_close("tanh forward", &out, &a, 1e-12);
        let da = normal(&mut rng, out.len());
        let dz: Vec<f64> = da.iter().zip(&a).map(|(d, a)| d * (1.0 - a * a)).collect();
        let mut delta = da.clone();
        let mut grads = vec![0.0; params.len()];
        let mut gx = vec![0.0; x.len()];
        layer.backward(
            &params,
            &x,
            &out,
            &Batch::rows(2),
            &mut delta,
            &mut grads,
            Some(&mut gx),
        );
        let (gw, gb, gxw) = naive.backward(wt, &x, &dz, 2);
        assert_close("tanh dW", &grads[..wt.len()], &gw, 1e-12);
        assert_close("tanh db", &grads[wt.len()..], &gb, 1e-12);
        assert_close("tanh dx", &gx, &gxw, 1e-12);

        // SOFTMAX normalises along the width axis.
        let c = conf2d(json!({"kernelSize": [2, 2], "activation": "SOFTMAX"}));
        let mut layer = build2d::<f64>(&c, 4, 5);
        let out = ctx_run(&mut layer, &params, &normal(&mut rng, 2 * 2 * 20), 2);
        for row in out.chunks_exact(4) {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    /// f32 and f64 layers agree (same code path, single precision GEMM).
    #[test]
    fn f32_matches_f64() {
        let c = conf2d(
            json!({"kernelSize": [3, 3], "stride": [2, 1], "padding": [1, 1], "activation": "RELU"}),
        );
        let mut l64 = build2d::<f64>(&c, 6, 5);
        let mut l32 = build2d::<f32>(&c, 6, 5);
        let mut rng = Rng::new(9);
        let p = normal(&mut rng, Layer::<f64>::num_params(&l64));
        let x = normal(&mut rng, 3 * 2 * 30);
        let o64 = ctx_run(&mut l64, &p, &x, 3);
        let p32: Vec<f32> = p.iter().map(|&v| v as f32).collect();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut o32 = vec![0f32; o64.len()];
        let mut r = Rng::new(0);
        l32.forward(
            &p32,
            &x32,
            &Batch::rows(3),
            &mut o32,
            &mut Ctx {
                train: false,
                rng: &mut r,
                state: crate::layers::StateMode::Stateless,
            },
        );
        let o32: Vec<f64> = o32.iter().map(|&v| v as f64).collect();
        assert_close("f32 forward", &o32, &o64, 1e-5);
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn conv1d_matches_direct_convolution() {
        let cases = [
            (json!({"kernelSize": 3}), 9, 2),
            (json!({"kernelSize": 2, "stride": 2, "padding": 1}), 8, 3),
            (json!({"kernelSize": 3, "dilation": 2, "stride": 2}), 11, 2),
            (
                json!({"kernelSize": 4, "convolutionMode": "Same", "stride": 3}),
                10,
                2,
            ),
            (json!({"kernelSize": 1, "hasBias": false}), 5, 1),
        ];
        for (extra, len, rows) in cases {
            let c = conf1d(extra.clone());
            let wl = window(
                "length",
                len,
                c.kernel_size,
                c.stride,
                c.padding,
                c.dilation,
                c.convolution_mode,
            )
            .unwrap();
            let mut layer = Conv1dLayer::<f64>::new(
                &c,
                Shape::Seq { c: 2, len },
                Shape::Seq { c: 3, len: wl.out },
            )
            .unwrap();
            assert_eq!(
                Layer::<f64>::output_shape(&layer),
                Shape::Seq { c: 3, len: wl.out }
            );
            let mut rng = Rng::new(len as u64);
            let params = normal(&mut rng, Layer::<f64>::num_params(&layer));
            let x = normal(&mut rng, rows * 2 * len);
            let out = ctx_run(&mut layer, &params, &x, rows);
            // Direct 1-D convolution.
            let k = c.kernel_size;
            let (wt, b) = params.split_at(3 * 2 * k);
            let at = |o: usize, j: usize| {
                let i = (o * c.stride + j * c.dilation) as isize - wl.pad_before as isize;
                (i >= 0 && (i as usize) < len).then_some(i as usize)
            };
            let mut want = vec![0.0; out.len()];
            let dz = normal(&mut rng, out.len());
            let mut gw = vec![0.0; wt.len()];
            let mut gx = vec![0.0; x.len()];
            for r in 0..rows {
                for co in 0..3 {
                    for o in 0..wl.out {
                        let oi = (r * 3 + co) * wl.out + o;
                        let mut s = if c.has_bias { b[co] } else { 0.0 };
                        for ci in 0..2 {
                            for j in 0..k {
                                if let Some(i) = at(o, j) {
                                    let xi = (r * 2 + ci) * len + i;
                                    let wi = (co * 2 + ci) * k + j;
                                    s += wt[wi] * x[xi];
                                    gw[wi] += dz[oi] * x[xi];
                                    gx[xi] += dz[oi] * wt[wi];
                                }
                            }
                        }
                        want[oi] = s;
                    }
                }
            }
            assert_close(&format!("{extra} 1d forward"), &out, &want, 1e-12);
            let mut delta = dz.clone();
            let mut grads = vec![0.0; params.len()];
            let mut gxl = vec![0.0; x.len()];
            layer.backward(
                &params,
                &x,
                &out,
                &Batch::rows(rows),
                &mut delta,
                &mut grads,
                Some(&mut gxl),
            );
            assert_close(&format!("{extra} 1d dW"), &grads[..wt.len()], &gw, 1e-12);
            assert_close(&format!("{extra} 1d dx"), &gxl, &gx, 1e-12);
        }
    }

    #[test]
    fn parameter_layout_and_initialisation() {
        let c = conf2d(
            json!({"nIn": 4, "nOut": 6, "kernelSize": [3, 2], "stride": [1, 2],
                               "weightInit": "UNIFORM", "biasInit": 0.25}),
        );
        let layer = build2d::<f64>(&c, 8, 8);
        let specs = Layer::<f64>::param_specs(&layer);
        assert_eq!(
            specs,
            vec![
                ParamSpec::new("W", ParamKind::Weight, vec![6, 4, 3, 2]),
                ParamSpec::new("b", ParamKind::Bias, vec![6]),
            ]
        );
        assert_eq!(Layer::<f64>::num_params(&layer), 6 * 4 * 6 + 6);
        let mut p = vec![0.0; 150];
        layer.init_params(&mut p, &mut Rng::new(3));
        // UNIFORM: ±1/sqrt(fanIn), fanIn = nIn·kH·kW = 24.
        let bound = 1.0 / 24f64.sqrt();
        assert!(p[..144].iter().all(|v| v.abs() <= bound));
        assert!(p[..144].iter().any(|v| v.abs() > 0.8 * bound));
        assert!(p[144..].iter().all(|&v| v == 0.25));
        // Same seed, same values (the draws are in row-major order of W only).
        let mut q = vec![0.0; 150];
        layer.init_params(&mut q, &mut Rng::new(3));
        assert_eq!(p, q);

        let c = conf1d(json!({"kernelSize": 3, "hasBias": false}));
        let layer =
            Conv1dLayer::<f32>::new(&c, Shape::Seq { c: 2, len: 5 }, Shape::Seq { c: 3, len: 3 })
                .unwrap();
        assert_eq!(
            Layer::<f32>::param_specs(&layer),
            vec![ParamSpec::new("W", ParamKind::Weight, vec![3, 2, 3])]
        );
        assert_eq!(Layer::<f32>::type_name(&layer), "Convolution1DLayer");
    }

    #[test]
    fn identity_init_is_checked_and_passes_the_input_through() {
        let c =
            conf2d(json!({"nIn": 2, "nOut": 3, "kernelSize": [3, 3], "weightInit": "IDENTITY"}));
        let err = Conv2dLayer::<f64>::new(
            &c,
            Shape::Image { c: 2, h: 5, w: 5 },
            Shape::Image { c: 3, h: 3, w: 3 },
        )
        .unwrap_err();
        let m = err.to_string();
        assert!(
            m.contains("weightInit IDENTITY") && m.contains("nIn=2, nOut=3"),
            "{m}"
        );
        let c = conf2d(
            json!({"nIn": 2, "nOut": 2, "kernelSize": [2, 3], "weightInit": "IDENTITY", "name": "c1"}),
        );
        let m = Conv2dLayer::<f64>::new(
            &c,
            Shape::Image { c: 2, h: 5, w: 5 },
            Shape::Image { c: 2, h: 4, w: 3 },
        )
        .unwrap_err()
        .to_string();
        assert!(
            m.contains("ConvolutionLayer \"c1\"") && m.contains("kernel 2×3"),
            "{m}"
        );
        let c = conf1d(json!({"nIn": 2, "nOut": 2, "kernelSize": 4, "weightInit": "IDENTITY"}));
        assert!(Conv1dLayer::<f64>::new(
            &c,
            Shape::Seq { c: 2, len: 6 },
            Shape::Seq { c: 2, len: 3 }
        )
        .is_err());

        let c = conf2d(
            json!({"nIn": 2, "nOut": 2, "kernelSize": [3, 5], "weightInit": "IDENTITY",
                               "convolutionMode": "Same"}),
        );
        let mut layer = build2d::<f64>(&c, 4, 6);
        let mut p = vec![0.0; Layer::<f64>::num_params(&layer)];
        layer.init_params(&mut p, &mut Rng::new(1));
        let x = normal(&mut Rng::new(2), 2 * 48);
        let out = ctx_run(&mut layer, &p, &x, 2);
        assert_close("identity", &out, &x, 0.0);
    }

    #[test]
    fn wrong_shapes_are_errors() {
        let c = conf2d(json!({"kernelSize": [3, 3]}));
        assert!(Conv2dLayer::<f64>::new(&c, Shape::Flat(50), Shape::Flat(9)).is_err());
        let e = Conv2dLayer::<f64>::new(
            &c,
            Shape::Image { c: 4, h: 5, w: 5 },
            Shape::Image { c: 3, h: 3, w: 3 },
        )
        .unwrap_err();
        assert!(e.to_string().contains("nIn=2"), "{e}");
        assert!(Conv2dLayer::<f64>::new(
            &c,
            Shape::Image { c: 2, h: 5, w: 5 },
            Shape::Image { c: 3, h: 4, w: 3 }
        )
        .is_err());
        assert!(Conv2dLayer::<f64>::new(
            &c,
            Shape::Image { c: 2, h: 2, w: 5 },
            Shape::Image { c: 3, h: 1, w: 3 }
        )
        .unwrap_err()
        .to_string()
        .contains("larger than the height"));
    }

    /// LeNet's two convolutions (5×5×20 on 28×28×1, 5×5×50 on 12×12×20) with max pooling,
    /// forward + backward on a batch of 64, against the raw GEMM rate.
    /// `cargo test -p ferrodl-nn --release --lib -- --ignored lenet_conv_timing --nocapture`
    #[test]
    #[ignore = "timing printout, not a test (timed tests do not belong in CI); run with --ignored"]
    fn lenet_conv_timing() {
        use crate::config::SubsamplingLayerConfig;
        use crate::layers::Pooling2dLayer;
        use std::time::Instant;
        // Seconds of CPU time of this thread (the machine may be shared, so single-threaded runs
        // are timed by the CPU time they actually got), or of wall time.
        #[repr(C)]
        struct Timespec {
            sec: i64,
            nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
        }
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
        let start = Instant::now();
        let clock = |cpu: bool| -> f64 {
            let mut ts = Timespec { sec: 0, nsec: 0 };
            // SAFETY: clock_gettime writes one timespec (two 64-bit fields on 64-bit Linux).
            if cfg!(all(target_os = "linux", target_pointer_width = "64"))
                && cpu
                && unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0
            {
                ts.sec as f64 + ts.nsec as f64 * 1e-9
            } else {
                start.elapsed().as_secs_f64()
            }
        };
        type F = f32;
        let rows = 64;
        let mut rng = Rng::new(1);
        let rand = |rng: &mut Rng, n: usize| -> Vec<F> {
            (0..n).map(|_| rng.next_gaussian() as F).collect()
        };

        // Raw GEMM rate, 1024³, best of 5: on one thread (CPU time) and on all threads (wall).
        let n = 1024;
        let (a, b) = (rand(&mut rng, n * n), rand(&mut rng, n * n));
        let mut cm = vec![0.0 as F; n * n];
        let threads = ferrodl_tensor::num_threads();
        let mut gemm_rate = [0.0; 2];
        for (rate, t) in gemm_rate.iter_mut().zip([1, threads]) {
            ferrodl_tensor::set_num_threads(t);
            gemm(Op::N, Op::N, n, n, n, 1.0, &a, &b, 0.0, &mut cm);
            let mut best = f64::INFINITY;
            for _ in 0..5 {
                let t0 = clock(t == 1);
                gemm(Op::N, Op::N, n, n, n, 1.0, &a, &b, 0.0, &mut cm);
                best = best.min(clock(t == 1) - t0);
            }
            *rate = 2.0 * (n * n * n) as f64 / best / 1e9;
        }

        let c1 = conf2d(json!({"nIn": 1, "nOut": 20, "kernelSize": [5, 5], "activation": "RELU"}));
        let c2 = conf2d(json!({"nIn": 20, "nOut": 50, "kernelSize": [5, 5], "activation": "RELU"}));
        let pc: SubsamplingLayerConfig =
            serde_json::from_value(json!({"kernelSize": [2, 2], "stride": [2, 2]})).unwrap();
        let mut l1 = build2d::<F>(&c1, 28, 28);
        let mut p1 = Pooling2dLayer::new(
            &pc,
            Shape::Image {
                c: 20,
                h: 24,
                w: 24,
            },
            Shape::Image {
                c: 20,
                h: 12,
                w: 12,
            },
        )
        .unwrap();
        let mut l2 = build2d::<F>(&c2, 12, 12);
        let mut p2 = Pooling2dLayer::new(
            &pc,
            Shape::Image { c: 50, h: 8, w: 8 },
            Shape::Image { c: 50, h: 4, w: 4 },
        )
        .unwrap();
        let w1 = rand(&mut rng, Layer::<F>::num_params(&l1));
        let w2 = rand(&mut rng, Layer::<F>::num_params(&l2));
        let x = rand(&mut rng, rows * 784);
        let mut a1 = vec![0.0 as F; rows * 20 * 576];
        let mut a1p = vec![0.0 as F; rows * 20 * 144];
        let mut a2 = vec![0.0 as F; rows * 50 * 64];
        let mut a2p = vec![0.0 as F; rows * 50 * 16];
        let dtop = rand(&mut rng, a2p.len());
        let (mut d2p, mut d2, mut d1p, mut d1) = (
            vec![0.0 as F; a2p.len()],
            vec![0.0 as F; a2.len()],
            vec![0.0 as F; a1p.len()],
            vec![0.0 as F; a1.len()],
        );
        let (mut g1, mut g2) = (vec![0.0 as F; w1.len()], vec![0.0 as F; w2.len()]);
        let mut r = Rng::new(0);
        // MACs: conv1 20·25·576 per example (forward, dW); conv2 50·500·64 (forward, dW, dx).
        let macs1 = (20 * 25 * 576 * rows) as f64;
        let macs2 = (50 * 500 * 64 * rows) as f64;
        let flops = 2.0 * (2.0 * macs1 + 3.0 * macs2);
        println!(
            "gemm 1024³: {:.1} GFLOP/s on 1 thread (CPU time), {:.1} GFLOP/s on {threads} threads \
             (wall); LeNet convs, batch {rows}, best of 15 per phase:",
            gemm_rate[0], gemm_rate[1]
        );
        // Chunk sizes (examples): the default CHUNK_TARGET (9 for conv1, 4 for conv2), the whole
        // batch, one example.
        let default = (CHUNK_TARGET / (25 * 576), CHUNK_TARGET / (500 * 64));
        for (t, chunks) in [
            (1, default),
            (1, (64, 64)),
            (1, (1, 1)),
            (threads, default),
            (threads, (64, 64)),
            (threads, (1, 1)),
        ] {
            ferrodl_tensor::set_num_threads(t);
            let cpu = t == 1;
            l1.core.chunk_target = chunks.0 * 25 * 576;
            l2.core.chunk_target = chunks.1 * 500 * 64;
            // Best time of each phase: conv1 fwd, pool1 fwd, conv2 fwd, pool2 fwd+bwd, conv2 bwd,
            // pool1 bwd, conv1 bwd; then pool2 fwd and pool2 bwd alone.
            let mut best = [f64::INFINITY; 9];
            for _ in 0..15 {
                let mut ctx = Ctx {
                    train: true,
                    rng: &mut r,
                    state: crate::layers::StateMode::Stateless,
                };
                let t0 = clock(cpu);
                l1.forward(&w1, &x, &Batch::rows(rows), &mut a1, &mut ctx);
                let t1 = clock(cpu);
                Layer::<F>::forward(&mut p1, &[], &a1, &Batch::rows(rows), &mut a1p, &mut ctx);
                let t2 = clock(cpu);
                l2.forward(&w2, &a1p, &Batch::rows(rows), &mut a2, &mut ctx);
                let t3 = clock(cpu);
                Layer::<F>::forward(&mut p2, &[], &a2, &Batch::rows(rows), &mut a2p, &mut ctx);
                let t3b = clock(cpu);
                d2p.copy_from_slice(&dtop);
                Layer::<F>::backward(
                    &mut p2,
                    &[],
                    &a2,
                    &a2p,
                    &Batch::rows(rows),
                    &mut d2p,
                    &mut [],
                    Some(&mut d2),
                );
                let t4 = clock(cpu);
                l2.backward(
                    &w2,
                    &a1p,
                    &a2,
                    &Batch::rows(rows),
                    &mut d2,
                    &mut g2,
                    Some(&mut d1p),
                );
                let t5 = clock(cpu);
                Layer::<F>::backward(
                    &mut p1,
                    &[],
                    &a1,
                    &a1p,
                    &Batch::rows(rows),
                    &mut d1p,
                    &mut [],
                    Some(&mut d1),
                );
                let t6 = clock(cpu);
                l1.backward(&w1, &x, &a1, &Batch::rows(rows), &mut d1, &mut g1, None);
                let t7 = clock(cpu);
                let ts = [t0, t1, t2, t3, t4, t5, t6, t7];
                for (b, w) in best.iter_mut().zip(ts.windows(2)) {
                    *b = b.min((w[1] - w[0]) * 1e3);
                }
                best[7] = best[7].min((t3b - t3) * 1e3);
                best[8] = best[8].min((t4 - t3b) * 1e3);
            }
            let conv_ms = best[0] + best[2] + best[4] + best[6];
            println!(
                "  {t} thread(s) ({}), chunks {chunks:?}: conv1 fwd {:.2} ms, conv2 fwd {:.2}, conv2 bwd {:.2}, conv1 bwd \
                 {:.2} = {conv_ms:.2} ms ({:.1} GFLOP/s); pooling fwd {:.2}+{:.2}, bwd {:.2}+{:.2}; \
                 total {:.2} ms/batch",
                if cpu { "CPU time" } else { "wall" },
                best[0],
                best[2],
                best[4],
                best[6],
                flops / (conv_ms / 1e3) / 1e9,
                best[1],
                best[7],
                best[8],
                best[5],
                best[..7].iter().sum::<f64>()
            );
        }
        ferrodl_tensor::set_num_threads(0);
    }
}
