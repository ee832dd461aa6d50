//! ferrodl-tensor: the numeric floor of the engine.
//!
//! * [`Scalar`]: the element type (implemented for `f32` and `f64`) so that every layer is written
//!   once and gradient checks can run in double precision.
//! * [`gemm`]: row-major matrix products through `matrixmultiply`, with transposed operands
//!   expressed as strides (no copies), on [`num_threads`] threads for products large enough to
//!   gain from it ([`set_num_threads`] changes the count at run time).
//! * f32 products large enough run on the AMX tile unit when the CPU and OS allow it, with
//!   operands split into three bf16 parts so the result keeps fp32 accuracy ([`GemmKernel`],
//!   [`active_gemm_kernel`], `docs/GEMM.md`).
//! * [`flush_denormals`]: a guard that flushes subnormal floats to zero on this thread (they
//!   cost ~100 cycles per operation on x86, and Adam's state decays into them).
//! * [`Rng`]: a seeded, platform-independent random generator (SplitMix64-seeded xoshiro256**,
//!   Box–Muller normals) so one seed gives bit-identical parameters everywhere.
//! * [`vectorized`]: runs an elementwise loop compiled for the CPU's widest vector unit
//!   (AVX-512 / AVX2, chosen at run time; bit-identical to the baseline build).
//! * Row-wise helpers ([`add_row_vector`], [`column_sums`], [`softmax_rows`], ...) used by layers.
//!
//! All matrices are dense, row-major and contiguous: a `rows × cols` matrix is a slice of exactly
//! `rows * cols` elements. Length mismatches are programming errors of the engine (user input is
//! validated before it reaches this crate), so they are checked with `assert!` — the checks also
//! keep the unsafe GEMM calls sound.

// The AMX kernel is x86_64 assembly; elsewhere `amx_support()` reports it unavailable.
#[cfg(target_arch = "x86_64")]
mod amx;
#[cfg(all(test, target_arch = "x86_64"))]
mod amx_tests;
mod cpu;
mod denormals;
mod kernel;
/// Native memory accounting lives in its own crate (the codec and relay crates need it without
/// the numeric kernels); re-exported so the engine keeps one path to it.
pub use ferrodl_memory as memory;
mod parallel;
mod pool;
mod simd;
mod unpacked_b;

pub use cpu::amx_support;
pub use kernel::{
    active_gemm_kernel, gemm_kernel, set_gemm_kernel, GemmKernel, GemmKernelInfo, AMX_MIN_K,
    AMX_MIN_MN, AMX_MIN_MULADDS,
};

pub use denormals::{denormals_flushed, flush_denormals, DenormalsFlushed};

pub use simd::{
    supported_vector_isas, vector_isa, vectorized, vectorized_with, Elementwise, VectorIsa,
};

pub use parallel::{
    chunk_len, default_num_threads, num_threads, parallel_for_each, set_num_threads,
    MIN_MULADDS_PER_THREAD,
};

use num_traits::{Float, FromPrimitive};
use std::fmt::{Debug, Display};
use std::iter::Sum;

/// Element type of the engine: `f32` for training, `f64` for gradient checks.
pub trait Scalar:
    Float + FromPrimitive + Sum + Default + Debug + Display + Send + Sync + 'static
{
    /// Short name used in messages ("f32" / "f64").
    const NAME: &'static str;

    /// `c = alpha · A · B + beta · c` with explicit strides (elements, not bytes).
    ///
    /// # Safety
    /// The strides and dimensions must describe memory inside `a`, `b` and `c`; `c` must not alias
    /// `a` or `b`. The safe wrapper [`gemm`] guarantees this.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_raw(
        m: usize,
        k: usize,
        n: usize,
        alpha: Self,
        a: *const Self,
        rsa: isize,
        csa: isize,
        b: *const Self,
        rsb: isize,
        csb: isize,
        beta: Self,
        c: *mut Self,
        rsc: isize,
        csc: isize,
    );

    /// Lossy conversion from `f64` (rounds to nearest for `f32`).
    fn of(x: f64) -> Self;
    /// Widening conversion to `f64`.
    fn f64(self) -> f64;
}

impl Scalar for f32 {
    const NAME: &'static str = "f32";

    #[inline]
    unsafe fn gemm_raw(
        m: usize,
        k: usize,
        n: usize,
        alpha: f32,
        a: *const f32,
        rsa: isize,
        csa: isize,
        b: *const f32,
        rsb: isize,
        csb: isize,
        beta: f32,
        c: *mut f32,
        rsc: isize,
        csc: isize,
    ) {
        matrixmultiply::sgemm(m, k, n, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc)
    }

    #[inline]
    fn of(x: f64) -> f32 {
        x as f32
    }

    #[inline]
    fn f64(self) -> f64 {
        self as f64
    }
}

impl Scalar for f64 {
    const NAME: &'static str = "f64";

    #[inline]
    unsafe fn gemm_raw(
        m: usize,
        k: usize,
        n: usize,
        alpha: f64,
        a: *const f64,
        rsa: isize,
        csa: isize,
        b: *const f64,
        rsb: isize,
        csb: isize,
        beta: f64,
        c: *mut f64,
        rsc: isize,
        csc: isize,
    ) {
        matrixmultiply::dgemm(m, k, n, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc)
    }

    #[inline]
    fn of(x: f64) -> f64 {
        x
    }

    #[inline]
    fn f64(self) -> f64 {
        self
    }
}

/// Whether an operand of [`gemm`] is used as stored or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Use the matrix as stored.
    N,
    /// Use the transpose of the stored matrix (expressed through strides, never copied).
    T,
}

/// `C = alpha · op(A) · op(B) + beta · C` on row-major contiguous matrices.
///
/// `op(A)` is `m × k` and `op(B)` is `k × n`, so `A` is stored as `m × k` (`Op::N`) or `k × m`
/// (`Op::T`), likewise `B` as `k × n` or `n × k`; `C` is `m × n`. With `beta == 0` the previous
/// contents of `C` are ignored (they may be anything, even NaN).
///
/// Products of at least twice [`MIN_MULADDS_PER_THREAD`] multiply-adds (`m·n·k`) run on up to
/// [`num_threads`] threads; the result does not depend on the thread count (bit for bit).
///
/// f32 products go to the kernel chosen by [`gemm_kernel`] (see [`GemmKernel`]): on the AMX
/// path the result agrees with the FMA path to fp32 rounding, not bit for bit. The parts of C
/// that depend on a NaN or an infinity in `A` or `B` are computed on the FMA path, so IEEE
/// special values propagate as in fp32 arithmetic.
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: Scalar>(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: &[T],
    b: &[T],
    beta: T,
    c: &mut [T],
) {
    gemm_with_threads(
        num_threads(),
        gemm_kernel(),
        false,
        op_a,
        op_b,
        m,
        n,
        k,
        alpha,
        a,
        b,
        beta,
        c,
    );
}

/// [`gemm`] for a B that the caller reads again in its next products, so that it stays in cache
/// between calls: the recurrent weights of a time loop. Same result, bit for bit; on AVX-512 CPUs
/// an f32 product with a short A (at most 128 rows), a row-major B and `alpha = 1` reads such a B
/// where it lies instead of packing it (`docs/GEMM.md`, "Short A"). A B read once per call (a
/// feed-forward layer's weights, rewritten by the updater between calls) is better packed, which
/// [`gemm`] does.
#[allow(clippy::too_many_arguments)]
#[rustfmt::skip]
pub fn gemm_resident_b<T: Scalar>(op_a: Op, op_b: Op, m: usize, n: usize, k: usize, alpha: T, a: &[T], b: &[T], beta: T, c: &mut [T]) {
    gemm_with_threads(num_threads(), gemm_kernel(), true, op_a, op_b, m, n, k, alpha, a, b, beta, c);
}

/// Which kernel an f32 [`gemm`] (`resident_b`: [`gemm_resident_b`]) with this shape, `op(B)` and
/// `alpha = 1` takes under the current setting, for reports (e.g. the benchmark's step profile):
/// `"amx"`, `"fma, B in place"` or `"fma"` (operands holding NaN or infinities go to FMA whatever
/// this says).
pub fn f32_gemm_path(op_b: Op, m: usize, n: usize, k: usize, resident_b: bool) -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if kernel::wants_amx(gemm_kernel(), m, n, k) {
        return "amx";
    }
    let csb = match op_b {
        Op::N => 1,
        Op::T => k as isize,
    };
    if unpacked_b::wanted(m, 1.0, csb, resident_b) {
        "fma, B in place"
    } else {
        "fma"
    }
}

/// [`gemm`] on at most `threads` threads with an explicit kernel choice (f32 only; f64 always
/// uses FMA) and `resident_b` as [`gemm_resident_b`] sets it; returns the number of blocks
/// computed in parallel (1: by the calling thread alone).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_with_threads<T: Scalar>(
    threads: usize,
    choice: GemmKernel,
    resident_b: bool,
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: &[T],
    b: &[T],
    beta: T,
    c: &mut [T],
) -> usize {
    assert_eq!(
        a.len(),
        m * k,
        "gemm: A has {} elements, expected {m}x{k}",
        a.len()
    );
    assert_eq!(
        b.len(),
        k * n,
        "gemm: B has {} elements, expected {k}x{n}",
        b.len()
    );
    assert_eq!(
        c.len(),
        m * n,
        "gemm: C has {} elements, expected {m}x{n}",
        c.len()
    );
    if m == 0 || n == 0 {
        return 0;
    }
    if k == 0 {
        // Empty inner dimension: the product is zero, only the beta term remains.
        scale_in_place(c, beta);
        return 0;
    }
    let (rsa, csa) = match op_a {
        Op::N => (k as isize, 1),
        Op::T => (1, m as isize),
    };
    let (rsb, csb) = match op_b {
        Op::N => (n as isize, 1),
        Op::T => (1, k as isize),
    };
    #[cfg(target_arch = "x86_64")]
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
        && kernel::wants_amx(choice, m, n, k)
    {
        // SAFETY: as below; T is f32 (checked), so the casts only restate the type, and the
        // f64 round trip of alpha and beta is exact. AMX usability was checked by `wants_amx`.
        // The bf16 split cannot reproduce IEEE infinities (an infinite part times a zero part
        // gives NaN), so the AMX driver hands operands with NaN or infinities to the FMA path:
        // a non-finite B makes it return `None` before touching C.
        let done = unsafe {
            amx::gemm(
                m,
                k,
                n,
                alpha.f64() as f32,
                a.as_ptr() as *const f32,
                rsa,
                csa,
                b.as_ptr() as *const f32,
                rsb,
                csb,
                beta.f64() as f32,
                c.as_mut_ptr() as *mut f32,
                threads,
            )
        };
        if let Some(parts) = done {
            return parts;
        }
    }
    // A short f32 A and a row-major B: B is read in place instead of packed (same bits).
    let unpacked = std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
        && unpacked_b::wanted(m, alpha.f64() as f32, csb, resident_b);
    // SAFETY: the asserts above pin every slice to exactly the extent the strides address, and
    // `c` is a unique borrow, so it cannot alias `a` or `b`; `unpacked` holds only for f32.
    unsafe {
        parallel::gemm_threaded(
            m,
            k,
            n,
            alpha,
            a.as_ptr(),
            rsa,
            csa,
            b.as_ptr(),
            rsb,
            csb,
            beta,
            c.as_mut_ptr(),
            threads,
            unpacked,
        )
    }
}

/// `x *= s` elementwise; `s == 0` writes exact zeros (clears NaN garbage too).
pub fn scale_in_place<T: Scalar>(x: &mut [T], s: T) {
    if s == T::zero() {
        x.fill(T::zero());
    } else if s != T::one() {
        mul_scalar(x, s);
    }
}

/// `y += alpha · x` elementwise, compiled for the CPU's vector width ([`vectorized`]; the
/// engine's weight decay).
pub fn axpy<T: Scalar>(alpha: T, x: &[T], y: &mut [T]) {
    assert_eq!(x.len(), y.len(), "axpy: length mismatch");
    vectorized(Axpy { alpha, x, y });
}

struct Axpy<'a, T> {
    alpha: T,
    x: &'a [T],
    y: &'a mut [T],
}

impl<T: Scalar> Elementwise for Axpy<'_, T> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let alpha = self.alpha;
        for (yi, &xi) in self.y.iter_mut().zip(self.x) {
            *yi = *yi + alpha * xi;
        }
    }
}

/// `y -= x` elementwise, at the CPU's vector width (applying an update to parameters).
pub fn sub_assign<T: Scalar>(y: &mut [T], x: &[T]) {
    assert_eq!(x.len(), y.len(), "sub_assign: length mismatch");
    vectorized(SubAssign { x, y });
}

struct SubAssign<'a, T> {
    x: &'a [T],
    y: &'a mut [T],
}

impl<T: Scalar> Elementwise for SubAssign<'_, T> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        for (yi, &xi) in self.y.iter_mut().zip(self.x) {
            *yi = *yi - xi;
        }
    }
}

/// `x *= s` elementwise with no special case (unlike [`scale_in_place`]: `s = 0` keeps the
/// signs of zeros and NaN), at the CPU's vector width (gradient renormalization).
pub fn mul_scalar<T: Scalar>(x: &mut [T], s: T) {
    vectorized(MulScalar { x, s });
}

struct MulScalar<'a, T> {
    x: &'a mut [T],
    s: T,
}

impl<T: Scalar> Elementwise for MulScalar<'_, T> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let s = self.s;
        // `for`, not `for_each`: an out-of-line `fold` would run at the baseline width (see
        // Adam's update-only loop in ferrodl-optim)
        for v in self.x.iter_mut() {
            *v = *v * s;
        }
    }
}

/// `x = min(max(x, lo), hi)` elementwise (`f32::max`/`min`: a NaN becomes `lo`), at the CPU's
/// vector width (gradient clipping).
pub fn clamp_in_place<T: Scalar>(x: &mut [T], lo: T, hi: T) {
    vectorized(Clamp { x, lo, hi });
}

struct Clamp<'a, T> {
    x: &'a mut [T],
    lo: T,
    hi: T,
}

impl<T: Scalar> Elementwise for Clamp<'_, T> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let (lo, hi) = (self.lo, self.hi);
        for g in self.x.iter_mut() {
            *g = g.max(lo).min(hi);
        }
    }
}

/// Adds the `1 × cols` vector `row` to every row of the `rows × cols` matrix `mat`.
pub fn add_row_vector<T: Scalar>(mat: &mut [T], cols: usize, row: &[T]) {
    assert_eq!(row.len(), cols, "add_row_vector: row length mismatch");
    if cols == 0 {
        return;
    }
    assert_eq!(
        mat.len() % cols,
        0,
        "add_row_vector: matrix is not a whole number of rows"
    );
    for r in mat.chunks_exact_mut(cols) {
        for (v, &b) in r.iter_mut().zip(row) {
            *v = *v + b;
        }
    }
}

/// Writes the column sums of the `rows × cols` matrix `mat` into `out` (`beta` scales the old
/// contents of `out` first: 0 overwrites, 1 accumulates).
pub fn column_sums<T: Scalar>(mat: &[T], cols: usize, beta: T, out: &mut [T]) {
    assert_eq!(out.len(), cols, "column_sums: output length mismatch");
    scale_in_place(out, beta);
    if cols == 0 {
        return;
    }
    assert_eq!(
        mat.len() % cols,
        0,
        "column_sums: matrix is not a whole number of rows"
    );
    for r in mat.chunks_exact(cols) {
        for (o, &v) in out.iter_mut().zip(r) {
            *o = *o + v;
        }
    }
}

/// Numerically stable in-place softmax of every row of a `rows × cols` matrix.
pub fn softmax_rows<T: Scalar>(mat: &mut [T], cols: usize) {
    if cols == 0 {
        return;
    }
    for r in mat.chunks_exact_mut(cols) {
        // Subtracting the row maximum keeps exp() from overflowing; the result is unchanged.
        let max = r.iter().copied().fold(T::neg_infinity(), T::max);
        let mut sum = T::zero();
        for v in r.iter_mut() {
            *v = (*v - max).exp();
            sum = sum + *v;
        }
        let inv = T::one() / sum;
        r.iter_mut().for_each(|v| *v = *v * inv);
    }
}

/// Sum of squares, accumulated in `f64` so long vectors do not lose precision in `f32`.
/// Compiled for the CPU's vector width ([`vectorized`]); the same bits at every width.
pub fn sum_squares<T: Scalar>(x: &[T]) -> f64 {
    vectorized(SumSquares(x))
}

/// Sum of absolute values, accumulated in `f64` (as [`sum_squares`]).
pub fn sum_abs<T: Scalar>(x: &[T]) -> f64 {
    vectorized(SumAbs(x))
}

struct SumSquares<'a, T>(&'a [T]);

impl<T: Scalar> Elementwise for SumSquares<'_, T> {
    type Output = f64;
    #[inline(always)]
    fn run(self) -> f64 {
        sum_f64_lanes(self.0, |v| v * v)
    }
}

struct SumAbs<'a, T>(&'a [T]);

impl<T: Scalar> Elementwise for SumAbs<'_, T> {
    type Output = f64;
    #[inline(always)]
    fn run(self) -> f64 {
        sum_f64_lanes(self.0, f64::abs)
    }
}

/// `Σ f(x_i)` in `f64` over eight running sums. One running sum is one dependent add per element,
/// bound by the add's latency: the L2 score of the MNIST MLP's 443,610 weights, computed with
/// every training step's score, took about 10 % of a batch-16 gradient-sharing run's CPU time
/// (`perf`, 2-core AMD EPYC, 2026-11-29). Eight independent sums pipeline and vectorise: 2 f64
/// lanes wide in the baseline build, where the pass was still ~10 % of a batch-16 MLP step with
/// l2; 4 or 8 wide under [`vectorized`].
#[inline(always)]
fn sum_f64_lanes<T: Scalar>(x: &[T], f: impl Fn(f64) -> f64) -> f64 {
    const LANES: usize = 8;
    let mut acc = [0.0f64; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += f(v.f64());
        }
    }
    let mut tail = 0.0;
    for v in rest {
        tail += f(v.f64());
    }
    // pairwise, so the result does not depend on which lane got the large values
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// Returns the position `(index)` of the first NaN or infinite value, if any.
pub fn first_non_finite<T: Scalar>(x: &[T]) -> Option<usize> {
    // A search that stops at the first hit does not vectorise; an all-finite test over a block
    // without early exit does (several times faster on the engine's input checks, which scan
    // every minibatch). Only a block that fails is searched element by element.
    // The blocks are tested at the CPU's vector width (`vectorized`): 20 -> 11 µs on a 256×784
    // batch (AMD EPYC, one thread, `ferrodl-bench helpers`).
    vectorized(FirstNonFinite(x))
}

struct FirstNonFinite<'a, T>(&'a [T]);

impl<T: Scalar> Elementwise for FirstNonFinite<'_, T> {
    type Output = Option<usize>;
    #[inline(always)]
    fn run(self) -> Option<usize> {
        const BLOCK: usize = 256;
        for (b, block) in self.0.chunks(BLOCK).enumerate() {
            if !block.iter().fold(true, |ok, v| ok & v.is_finite()) {
                let i = block.iter().position(|v| !v.is_finite());
                return i.map(|i| b * BLOCK + i);
            }
        }
        None
    }
}

/// Seeded pseudo-random generator: xoshiro256** whose 256-bit state is expanded from the 64-bit
/// seed with SplitMix64 (the expansion its authors recommend).
///
/// Every value is produced with integer arithmetic and the IEEE-754 basic operations (`+ - * /`,
/// `sqrt`), which are correctly rounded everywhere; the logarithm of the normal sampler is our own
/// [`det_ln`] built from those operations, not the platform's `libm`. So a seed produces a
/// bit-identical stream on every machine and operating system.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
    /// Second value of the last Box–Muller pair, handed out by the next `next_gaussian` call.
    spare: Option<f64>,
}

impl Rng {
    /// Creates a generator from a 64-bit seed (any value, including 0, is fine).
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut s = [0u64; 4];
        for v in &mut s {
            *v = splitmix64(&mut sm);
        }
        // SplitMix64 output is never all-zero for four consecutive draws, but stay defensive:
        // xoshiro must not start from the all-zero state.
        if s == [0; 4] {
            s[0] = 0x9E37_79B9_7F4A_7C15;
        }
        Rng { s, spare: None }
    }

    /// Next 64 uniformly distributed bits (xoshiro256**).
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// Standard normal via the polar form of Box–Muller (Marsaglia): draw `u, v` uniform in
    /// `(-1, 1)` (two `next_u64` calls per attempt) until `0 < s = u² + v² < 1`, then both
    /// `u·f` and `v·f` with `f = sqrt(-2 ln s / s)` are normal. The first is returned, the second
    /// is kept and returned by the following call. The polar form needs no `sin`/`cos`, so only
    /// [`det_ln`] and IEEE-exact operations are involved.
    pub fn next_gaussian(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        loop {
            let u = 2.0 * self.next_f64() - 1.0;
            let v = 2.0 * self.next_f64() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * det_ln(s) / s).sqrt();
                self.spare = Some(v * f);
                return u * f;
            }
        }
    }

    /// Uniform integer in `[0, n)` (`n > 0`), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// Fills `out` with `N(0, std²)` samples, drawn in slice order.
    pub fn fill_normal<T: Scalar>(&mut self, out: &mut [T], std: f64) {
        for v in out {
            *v = T::of(self.next_gaussian() * std);
        }
    }

    /// Fills `out` with uniform samples in `[lo, hi)`, drawn in slice order.
    pub fn fill_uniform<T: Scalar>(&mut self, out: &mut [T], lo: f64, hi: f64) {
        for v in out {
            *v = T::of(self.uniform(lo, hi));
        }
    }
}

/// Natural logarithm of a positive, finite, normal `x`, computed only with IEEE-754 basic
/// operations so the result is identical on every platform (unlike `f64::ln`, which calls the
/// platform's math library). Accurate to about 1 ulp; used by the normal sampler.
pub fn det_ln(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 || x.is_infinite() {
        return if x == 0.0 {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
    }
    // x = m · 2^e with m in [1, 2), read from the bits; subnormals are scaled up first.
    let (x, bias) = if x < f64::MIN_POSITIVE {
        (x * (1u64 << 54) as f64, -54)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7FF) as i64 - 1023 + bias;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    // Centre m on 1 (m in [sqrt(1/2), sqrt(2))) so the series below converges fast.
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2·atanh(t) = 2(t + t³/3 + t⁵/5 + ...), t = (m-1)/(m+1), |t| <= 0.172, t² <= 0.0295:
    // 12 terms leave a truncation error below 1e-19.
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let mut sum = 0.0;
    let mut k = 23.0;
    while k >= 1.0 {
        sum = sum * t2 + 1.0 / k;
        k -= 2.0;
    }
    // ln 2 split into a high part with few significant bits (exact when multiplied by e) and a
    // small correction, to keep e·ln2 accurate for large |e|.
    let ln2_hi = f64::from_bits(0x3FE6_2E42_FEE0_0000); // 6.93147180369123816490e-01
    let ln2_lo = f64::from_bits(0x3DEA_39EF_3579_3C76); // 1.90821492927058770002e-10
    let ef = e as f64;
    ef * ln2_hi + (2.0 * t * sum + ef * ln2_lo)
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            }
        }
        c
    }

    fn transpose(x: &[f64], r: usize, c: usize) -> Vec<f64> {
        let mut t = vec![0.0; r * c];
        for i in 0..r {
            for j in 0..c {
                t[j * r + i] = x[i * c + j];
            }
        }
        t
    }

    #[test]
    fn gemm_all_transpose_combinations_match_naive() {
        let (m, k, n) = (5, 7, 3);
        let mut rng = Rng::new(1);
        let a: Vec<f64> = (0..m * k).map(|_| rng.next_gaussian()).collect();
        let b: Vec<f64> = (0..k * n).map(|_| rng.next_gaussian()).collect();
        let want = naive(&a, &b, m, k, n);
        let at = transpose(&a, m, k);
        let bt = transpose(&b, k, n);
        for (oa, aa) in [(Op::N, &a), (Op::T, &at)] {
            for (ob, bb) in [(Op::N, &b), (Op::T, &bt)] {
                let mut c = vec![f64::NAN; m * n];
                gemm(oa, ob, m, n, k, 1.0, aa, bb, 0.0, &mut c);
                for (x, y) in c.iter().zip(&want) {
                    assert!((x - y).abs() < 1e-12, "{oa:?}{ob:?}: {x} vs {y}");
                }
            }
        }
        // beta = 1 accumulates, in f32 too.
        let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
        let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
        let mut c = vec![1.0f32; m * n];
        gemm(Op::N, Op::N, m, n, k, 2.0, &a32, &b32, 1.0, &mut c);
        for (x, y) in c.iter().zip(&want) {
            assert!((*x as f64 - (1.0 + 2.0 * y)).abs() < 1e-4);
        }
    }

    /// Reference `alpha·op(A)·op(B) + beta·C` in f64 (naive triple loop, explicit indexing of
    /// the stored layouts).
    #[allow(clippy::too_many_arguments)]
    fn naive_general(
        op_a: Op,
        op_b: Op,
        m: usize,
        n: usize,
        k: usize,
        alpha: f64,
        a: &[f64],
        b: &[f64],
        beta: f64,
        c: &[f64],
    ) -> Vec<f64> {
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0;
                for p in 0..k {
                    let av = match op_a {
                        Op::N => a[i * k + p],
                        Op::T => a[p * m + i],
                    };
                    let bv = match op_b {
                        Op::N => b[p * n + j],
                        Op::T => b[j * k + p],
                    };
                    s += av * bv;
                }
                out[i * n + j] = alpha * s + beta * c[i * n + j];
            }
        }
        out
    }

    /// Every transpose combination, odd sizes (including ones cut in blocks by 2 threads, split
    /// by rows and by columns), alpha/beta, f32 and f64, 1 and 2 threads: matches the naive loop,
    /// and 2 threads give bit-identical results to 1.
    fn check_gemm_against_naive<T: Scalar>(tol: f64) {
        let shapes = [
            (1, 1, 1),
            (3, 5, 7),
            (17, 1, 33),
            (1, 19, 5),
            (129, 67, 131), // 2 threads: row blocks
            (45, 301, 97),  // 2 threads: column blocks
            (64, 500, 97),
            (33, 47, 255), // 2 threads: column blocks of 16 and 31
            (1, 4099, 67), // 2 threads: a single row
        ];
        let mut rng = Rng::new(5);
        for &(m, n, k) in &shapes {
            let a: Vec<f64> = (0..m * k).map(|_| rng.next_gaussian()).collect();
            let b: Vec<f64> = (0..k * n).map(|_| rng.next_gaussian()).collect();
            let c0: Vec<f64> = (0..m * n).map(|_| rng.next_gaussian()).collect();
            let (at, bt): (Vec<T>, Vec<T>) = (
                a.iter().map(|&v| T::of(v)).collect(),
                b.iter().map(|&v| T::of(v)).collect(),
            );
            // The reference sees exactly the rounded inputs.
            let (ar, br): (Vec<f64>, Vec<f64>) = (
                at.iter().map(|v| v.f64()).collect(),
                bt.iter().map(|v| v.f64()).collect(),
            );
            for op_a in [Op::N, Op::T] {
                for op_b in [Op::N, Op::T] {
                    for (alpha, beta) in [(1.0, 0.0), (-0.5, 1.0), (2.0, 0.25)] {
                        let want = naive_general(op_a, op_b, m, n, k, alpha, &ar, &br, beta, &c0);
                        let mut got1: Vec<T> = c0.iter().map(|&v| T::of(v)).collect();
                        if beta == 0.0 {
                            got1.fill(T::nan()); // beta = 0 must ignore C's old contents
                        }
                        let mut got2 = got1.clone();
                        let parts1 = gemm_with_threads(
                            1,
                            GemmKernel::Fma,
                            false,
                            op_a,
                            op_b,
                            m,
                            n,
                            k,
                            T::of(alpha),
                            &at,
                            &bt,
                            T::of(beta),
                            &mut got1,
                        );
                        let parts2 = gemm_with_threads(
                            2,
                            GemmKernel::Fma,
                            false,
                            op_a,
                            op_b,
                            m,
                            n,
                            k,
                            T::of(alpha),
                            &at,
                            &bt,
                            T::of(beta),
                            &mut got2,
                        );
                        assert_eq!(parts1, 1);
                        let big = m * n * k >= 2 * MIN_MULADDS_PER_THREAD && m.max(n) >= 32;
                        assert_eq!(parts2, if big { 2 } else { 1 }, "{m}x{n}x{k}");
                        let scale = (k as f64).sqrt() * (1.0 + alpha.abs()) + beta.abs();
                        for (i, (x, y)) in got1.iter().zip(&want).enumerate() {
                            assert!(
                                (x.f64() - y).abs() <= tol * scale,
                                "{} {op_a:?}{op_b:?} {m}x{n}x{k} a={alpha} b={beta} [{i}]: {x} vs {y}",
                                T::NAME
                            );
                        }
                        let same = got1
                            .iter()
                            .zip(&got2)
                            .all(|(x, y)| x.f64().to_bits() == y.f64().to_bits());
                        assert!(same, "1 vs 2 threads differ: {op_a:?}{op_b:?} {m}x{n}x{k}");
                    }
                }
            }
        }
    }

    #[test]
    fn gemm_f64_matches_naive_on_1_and_2_threads() {
        check_gemm_against_naive::<f64>(1e-12);
    }

    #[test]
    fn gemm_f32_matches_naive_on_1_and_2_threads() {
        check_gemm_against_naive::<f32>(2e-5);
    }

    /// The process-wide setting is observed and takes effect on the next product, in both
    /// directions, and any count gives the same bits. (The only test that changes the setting.)
    #[test]
    fn set_num_threads_takes_effect_at_run_time() {
        let _g = parallel::SETTING_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (m, n, k) = (256, 192, 160);
        let mut rng = Rng::new(11);
        let a: Vec<f32> = (0..m * k).map(|_| rng.next_gaussian() as f32).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.next_gaussian() as f32).collect();
        let run = || {
            let mut c = vec![0.0f32; m * n];
            let parts = gemm_with_threads(
                num_threads(),
                GemmKernel::Fma,
                false,
                Op::N,
                Op::T,
                m,
                n,
                k,
                1.0,
                &a,
                &b,
                0.0,
                &mut c,
            );
            // The public entry point reads the same setting.
            let mut c2 = vec![0.0f32; m * n];
            set_gemm_kernel(GemmKernel::Fma);
            gemm(Op::N, Op::T, m, n, k, 1.0, &a, &b, 0.0, &mut c2);
            set_gemm_kernel(GemmKernel::Auto);
            assert_eq!(c, c2);
            (parts, c)
        };
        assert_eq!(num_threads(), default_num_threads());
        assert!(default_num_threads() >= 1);
        set_num_threads(1);
        assert_eq!(num_threads(), 1);
        let (p1, c1) = run();
        set_num_threads(2);
        assert_eq!(num_threads(), 2);
        let (p2, c2) = run();
        set_num_threads(3);
        let (p3, c3) = run();
        set_num_threads(1);
        let (p1b, c1b) = run();
        set_num_threads(0);
        assert_eq!(num_threads(), default_num_threads());
        assert_eq!((p1, p2, p3, p1b), (1, 2, 3, 1));
        assert!(c1 == c2 && c1 == c3 && c1 == c1b);
    }

    #[test]
    fn gemm_empty_inner_dimension_scales_c() {
        let mut c = vec![3.0f64; 4];
        gemm(Op::N, Op::N, 2, 2, 0, 1.0, &[], &[], 0.5, &mut c);
        assert_eq!(c, vec![1.5; 4]);
    }

    #[test]
    fn rng_is_deterministic_and_seed_sensitive() {
        let a: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::new(43);
            (0..8).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn splitmix64_matches_reference_value() {
        // First output of SplitMix64 seeded with 0 is a widely published constant.
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn det_ln_matches_std_ln() {
        let mut r = Rng::new(9);
        for _ in 0..100_000 {
            // Log-uniform over many binades, plus the sampler's range (0, 1).
            let x = (r.next_f64() * 80.0 - 40.0).exp2() * (1.0 + r.next_f64());
            let (a, b) = (det_ln(x), x.ln());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0),
                "ln({x}): {a} vs {b}"
            );
        }
        for x in [
            1.0,
            2.0,
            0.5,
            std::f64::consts::E,
            1e-300,
            5e-324,
            f64::MAX,
            1.0 - 1e-16,
        ] {
            let (a, b) = (det_ln(x), x.ln());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0),
                "ln({x}): {a} vs {b}"
            );
        }
        assert_eq!(det_ln(1.0), 0.0);
        assert!(det_ln(-1.0).is_nan() && det_ln(0.0) == f64::NEG_INFINITY);
    }

    #[test]
    fn gaussian_stream_is_pinned() {
        // Golden values: a change here changes every network's initial parameters.
        let mut r = Rng::new(12345);
        let g: Vec<u64> = (0..4).map(|_| r.next_gaussian().to_bits()).collect();
        assert_eq!(
            g,
            [
                0x3fd87d441d454dbf,
                0xbfe2947ddbdf918c,
                0x3f9c5bf541d85809,
                0xbfcf6f030cda5520
            ]
        );
    }

    #[test]
    fn gaussian_moments_are_plausible() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| r.next_gaussian()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "var {var}");
        let u: f64 = (0..n).map(|_| r.next_f64()).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.01);
        for _ in 0..1000 {
            assert!(r.below(7) < 7);
        }
    }

    #[test]
    fn row_helpers() {
        let mut m = vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
        add_row_vector(&mut m, 3, &[1.0, 0.0, -1.0]);
        assert_eq!(m, vec![2.0, 2.0, 2.0, 5.0, 5.0, 5.0]);
        let mut s = vec![f64::NAN; 3];
        column_sums(&m, 3, 0.0, &mut s);
        assert_eq!(s, vec![7.0, 7.0, 7.0]);
        column_sums(&m, 3, 1.0, &mut s);
        assert_eq!(s, vec![14.0, 14.0, 14.0]);

        let mut x = vec![1000.0f64, 1000.0, 0.0, 1.0, 2.0, 3.0];
        softmax_rows(&mut x, 3);
        assert!((x[0] - 0.5).abs() < 1e-12 && x[2] < 1e-300);
        let row2: f64 = x[3..].iter().sum();
        assert!((row2 - 1.0).abs() < 1e-12);
        assert!((x[5] / x[4] - std::f64::consts::E).abs() < 1e-12);

        assert_eq!(first_non_finite(&[1.0f32, f32::INFINITY]), Some(1));
        assert_eq!(first_non_finite(&[1.0f32]), None);
        assert_eq!(first_non_finite::<f32>(&[]), None);
        for len in [1usize, 255, 256, 257, 1000] {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                for at in [0, len / 2, len - 1] {
                    let mut v = vec![f32::MAX; len];
                    v[at] = bad;
                    if at + 1 < len {
                        v[len - 1] = f32::NAN; // a later one does not matter
                    }
                    assert_eq!(first_non_finite(&v), Some(at), "len {len} at {at}");
                }
            }
            let ok = vec![f64::MIN_POSITIVE / 2.0; len]; // subnormals are finite
            assert_eq!(first_non_finite(&ok), None);
        }
        assert_eq!(sum_squares(&[3.0f32, -4.0]), 25.0);
        assert_eq!(sum_abs(&[3.0f32, -4.0]), 7.0);
    }

    /// `axpy`, `sub_assign`, `mul_scalar` and `clamp_in_place` give the bits of their plain
    /// scalar loops at every vector width this CPU runs, on lengths with vector tails and values
    /// with signed zeros, subnormals, infinities and NaN.
    #[test]
    fn elementwise_helpers_have_the_same_bits_at_every_width() {
        let mut rng = Rng::new(5);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for n in [0usize, 1, 7, 8, 17, 1_003] {
            let mut x = vec![0f32; n];
            rng.fill_normal(&mut x, 1.0);
            let mut y = vec![0f32; n];
            rng.fill_normal(&mut y, 1.0);
            for (i, v) in x.iter_mut().enumerate() {
                match i % 13 {
                    0 => *v = 0.0,
                    1 => *v = -0.0,
                    2 => *v = f32::NAN,
                    3 => *v = f32::NEG_INFINITY,
                    4 => *v = 1e-40,
                    _ => {}
                }
            }
            for isa in supported_vector_isas() {
                let what = format!("{isa:?}, n {n}");
                let mut a = y.clone();
                vectorized_with(isa, Axpy { alpha: 0.37, x: &x, y: &mut a });
                let want: Vec<f32> = y.iter().zip(&x).map(|(&y, &x)| y + 0.37 * x).collect();
                assert_eq!(bits(&a), bits(&want), "{what}: axpy");
                let mut a = y.clone();
                vectorized_with(isa, SubAssign { x: &x, y: &mut a });
                let want: Vec<f32> = y.iter().zip(&x).map(|(&y, &x)| y - x).collect();
                assert_eq!(bits(&a), bits(&want), "{what}: sub_assign");
                for s in [0.0f32, 0.5, -3.0] {
                    let mut a = x.clone();
                    vectorized_with(isa, MulScalar { x: &mut a, s });
                    let want: Vec<f32> = x.iter().map(|&v| v * s).collect();
                    assert_eq!(bits(&a), bits(&want), "{what}: mul_scalar {s}");
                }
                let mut a = x.clone();
                vectorized_with(isa, Clamp { x: &mut a, lo: -0.5, hi: 0.5 });
                let want: Vec<f32> = x.iter().map(|&v| v.max(-0.5).min(0.5)).collect();
                assert_eq!(bits(&a), bits(&want), "{what}: clamp_in_place");
            }
        }
        // the public functions take the default width
        let (x, mut y) = (vec![1.0f32, -2.0, 3.0], vec![0.5f32, 0.5, 0.5]);
        axpy(2.0, &x, &mut y);
        assert_eq!(y, [2.5, -3.5, 6.5]);
        sub_assign(&mut y, &x);
        assert_eq!(y, [1.5, -1.5, 3.5]);
        mul_scalar(&mut y, 2.0);
        assert_eq!(y, [3.0, -3.0, 7.0]);
        clamp_in_place(&mut y, -1.0, 4.0);
        assert_eq!(y, [3.0, -1.0, 4.0]);
    }

    #[test]
    fn lane_sums_match_one_running_sum() {
        // every length around the 8 lanes (remainders 0..7) and a long one; integers are exact
        for len in (0..40).chain([1_003, 443_610]) {
            let x: Vec<f32> = (0..len as u64).map(|i| ((i * 7919) % 201) as f32 - 100.0).collect();
            let squares: f64 = x.iter().map(|&v| v as f64 * v as f64).sum();
            let abs: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
            assert_eq!(sum_squares(&x), squares, "len {len}");
            assert_eq!(sum_abs(&x), abs, "len {len}");
            // values with fractions: f64 rounding differs by order only, far below f32's precision
            let y: Vec<f32> = x.iter().map(|&v| v * 1.0e-3 + 1.0e-7).collect();
            let squares: f64 = y.iter().map(|&v| v as f64 * v as f64).sum();
            assert!((sum_squares(&y) - squares).abs() <= 1e-12 * squares.max(1e-300), "len {len}");
        }
    }
}
