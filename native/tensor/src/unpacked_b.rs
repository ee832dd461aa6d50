//! f32 products with a short A side (a minibatch of rows) and a row-major B (a weight matrix),
//! computed without packing B.
//!
//! `matrixmultiply` copies ("packs") both operands into kernel order before every product. When
//! A has few rows, each element of B takes part in only `m` multiply-adds, and copying B costs as
//! much as a good share of them: at batch 64, packing was ~15 % of the MLP's training step
//! (`perf`, `ferrodl-bench mlp 64`), most of it the 784×500 weights of the first layer, packed
//! again in every forward pass. A row-major B (`Op::N`) is already in the order an
//! outer-product kernel reads — 16 consecutive floats of one row per vector load — so this path
//! reads it in place and packs only the small A (`m × KC` values per block of the inner
//! dimension, into a per-thread buffer).
//!
//! **Same bits as `matrixmultiply`.** Each element of C is summed exactly as `matrixmultiply`'s
//! FMA kernels sum it: a fused multiply-add chain over `k` in order, starting from zero, restarted
//! for every block of [`KC`] (= its `S_KC`, 256), each block's sum then added to C (the first one
//! to `beta·C`, or written alone when `beta` is 0). That holds for `alpha = 1` (the only value the
//! engine passes): `matrixmultiply`'s interior tiles compute `fma(alpha, sum, beta·C)` and its edge
//! tiles `alpha·sum + beta·C`, which agree when `alpha` is 1; other values of `alpha` take the
//! packed path. So switching paths, or the thread count, never changes a result
//! (`unpacked_b_matches_matrixmultiply_bit_for_bit`).
//!
//! Only on x86-64 with AVX-512F (16 floats per register; the register tile is 8 rows × 32
//! columns, 16 accumulators), and only for products whose B stays in cache from one call to the
//! next: the caller says so by calling [`crate::gemm_resident_b`] (the recurrent weights of a
//! time loop: the character model's fit ran 5–9 % (LSTM) and 11 % (GravesLSTM) faster with its
//! per-step products reading B in place). A B read once per call — the weights of a feed-forward layer, just rewritten by
//! the updater — is packed: inside the MLP's two-thread training step the packed path was faster
//! (Intel Xeon with AVX-512, two `ferrodl-bench serve` processes alternating: batch 32 +15 %, 64
//! +16–18 %, 128 +4 %; one thread a tie), because each thread's pass down its columns of a cold B
//! — rows 2,000 bytes apart, read again by every 8-row panel — waits on memory where packing
//! streams B once. (Until 2026-11-28 every short product read B in place, from one-thread
//! measurements on an AMD EPYC.) `FERRODL_GEMM_UNPACKED=1` reads B in place for every eligible
//! product, `=0` for none (read once); see `docs/GEMM.md`, "Short A".

use std::cell::RefCell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// Inner-dimension block: must equal `matrixmultiply`'s `S_KC` for the results to agree bit for
/// bit (its f32 kernels restart their sums every 256 steps of `k`).
pub(crate) const KC: usize = 256;

/// Rows of one register tile.
const MR: usize = 8;

/// Products with at most this many rows in A take the unpacked path (more rows share the cost
/// of packing B among more multiply-adds, and the packed kernel's contiguous B wins). Measured
/// on one thread, AMD EPYC (Zen 4), on-CPU time, x·W1 (m×500×784) and a1·W2 (m×100×500):
/// see `docs/BENCHMARKS.md`, "GEMM at batch sizes".
pub(crate) const MAX_M: usize = 128;

/// When B is read in place: `FERRODL_GEMM_UNPACKED` (read once) or, in tests, [`set_mode`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// For [`crate::gemm_resident_b`] products (the default).
    Resident,
    /// For every eligible product (`FERRODL_GEMM_UNPACKED=1`).
    Always,
    /// Never (`FERRODL_GEMM_UNPACKED=0`).
    Never,
}

fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        1 => Mode::Resident,
        2 => Mode::Always,
        3 => Mode::Never,
        _ => *FROM_ENV.get_or_init(|| {
            match std::env::var("FERRODL_GEMM_UNPACKED")
                .as_deref()
                .map(str::trim)
            {
                Ok("1") => Mode::Always,
                Ok("0") => Mode::Never,
                _ => Mode::Resident,
            }
        }),
    }
}

/// 0: as the environment says.
static MODE: AtomicU8 = AtomicU8::new(0);
static FROM_ENV: OnceLock<Mode> = OnceLock::new();

/// Overrides the environment for the process (the tests hold both paths to the same bits).
#[cfg(test)]
pub(crate) fn set_mode(m: Mode) {
    MODE.store(
        match m {
            Mode::Resident => 1,
            Mode::Always => 2,
            Mode::Never => 3,
        },
        Ordering::Relaxed,
    );
}

fn cpu_has_it() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether `C = alpha·A·B + beta·C` with these dimensions and B strides takes this path;
/// `resident`: the caller reads this B again in its next products ([`crate::gemm_resident_b`]).
pub(crate) fn wanted(m: usize, alpha: f32, csb: isize, resident: bool) -> bool {
    let on = match mode() {
        Mode::Resident => resident,
        Mode::Always => true,
        Mode::Never => false,
    };
    on && m <= MAX_M && alpha == 1.0 && csb == 1 && cpu_has_it()
}

/// Columns of one register tile.
const NR: usize = 32;

/// How [`gemm`] products are cut among `parts` threads: `(split_rows, granule)` — blocks of C
/// rows in multiples of `MR`, or of columns in multiples of `NR`, whichever gives the busiest
/// thread the fewest register tiles. (Cutting rows makes every thread read all of B, which costs
/// nothing to pack here; e.g. 64×100 splits into two 32-row halves of equal work, where a column
/// cut leaves 64 and 36 columns.) The cut never changes a result: every element is computed alone.
pub(crate) fn plan(m: usize, n: usize, parts: usize) -> (bool, usize) {
    // work of a block in half tiles (MR rows × 16 columns): a partial tile of more than 16
    // columns costs a whole one
    let work = |rows: usize, cols: usize| {
        let half = 2 * (cols / NR)
            + match cols % NR {
                0 => 0,
                r if r > 16 => 2,
                _ => 1,
            };
        rows.div_ceil(MR) * half
    };
    let busiest = |rows: bool| {
        let (len, g) = if rows { (m, MR) } else { (n, NR) };
        (0..parts)
            .map(|i| {
                let w = block_start(len, parts, i + 1, g) - block_start(len, parts, i, g);
                if rows {
                    work(w, n)
                } else {
                    work(m, w)
                }
            })
            .max()
            .unwrap_or(0)
    };
    if busiest(true) < busiest(false) {
        (true, MR)
    } else {
        (false, NR)
    }
}

/// Start of block `i` of `parts` over `0..len`: the nearest multiple of `granule` to
/// `len·i/parts` (`len` for `i >= parts`).
pub(crate) fn block_start(len: usize, parts: usize, i: usize, granule: usize) -> usize {
    if i >= parts {
        return len;
    }
    let ideal = len * i / parts;
    (((ideal + granule / 2) / granule) * granule).min(len)
}

thread_local! {
    /// Packed A of one K block (`ceil(m / MR)·MR × KC` floats at most), kept between products.
    static A_PACK: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// `C = A·B + beta·C` for `m <= MAX_M` rows, B row-major with row stride `rsb` (unit column
/// stride), C row-major with row stride `rsc` (unit column stride), A with any strides.
///
/// # Safety
/// The strides and dimensions must describe memory inside the operands, `c` must not alias `a`
/// or `b`, `m, n, k > 0`, and [`available`] must be true (AVX-512F).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm(
    m: usize,
    k: usize,
    n: usize,
    a: *const f32,
    rsa: isize,
    csa: isize,
    b: *const f32,
    rsb: isize,
    beta: f32,
    c: *mut f32,
    rsc: isize,
) {
    debug_assert!(m > 0 && n > 0 && k > 0 && m <= MAX_M);
    let panels = m.div_ceil(MR);
    let run = |pack: &mut Vec<f32>| {
        if pack.len() < panels * MR * KC {
            pack.resize(panels * MR * KC, 0.0);
        }
        #[cfg(target_arch = "x86_64")]
        x86::gemm(
            m,
            k,
            n,
            a,
            rsa,
            csa,
            b,
            rsb,
            beta,
            c,
            rsc,
            pack.as_mut_ptr(),
        );
    };
    A_PACK.with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => run(&mut v),
        Err(_) => run(&mut Vec::new()),
    })
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{KC, MR, NR};
    use std::arch::x86_64::*;

    /// Packs rows `0..m` of A, columns `k0..k0 + kc`, into `MR`-row panels, `kk`-major inside a
    /// panel (`pack[p·MR·kc + kk·MR + i]`), rows past `m` zero.
    #[inline(always)]
    unsafe fn pack_a(
        m: usize,
        k0: usize,
        kc: usize,
        a: *const f32,
        rsa: isize,
        csa: isize,
        pack: *mut f32,
    ) {
        let panels = m.div_ceil(MR);
        for p in 0..panels {
            let dst = pack.add(p * MR * kc);
            for i in 0..MR {
                let row = p * MR + i;
                if row < m {
                    let src = a.offset(row as isize * rsa + k0 as isize * csa);
                    for kk in 0..kc {
                        *dst.add(kk * MR + i) = *src.offset(kk as isize * csa);
                    }
                } else {
                    for kk in 0..kc {
                        *dst.add(kk * MR + i) = 0.0;
                    }
                }
            }
        }
    }

    /// Lanes of a 16-float vector starting at column `j` that lie inside `n` columns.
    #[inline(always)]
    fn lanes(j: usize, n: usize) -> __mmask16 {
        let left = n.saturating_sub(j);
        if left >= 16 {
            0xFFFF
        } else {
            ((1u32 << left) - 1) as __mmask16
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn gemm(
        m: usize,
        k: usize,
        n: usize,
        a: *const f32,
        rsa: isize,
        csa: isize,
        b: *const f32,
        rsb: isize,
        beta: f32,
        c: *mut f32,
        rsc: isize,
        pack: *mut f32,
    ) {
        let panels = m.div_ceil(MR);
        let mut k0 = 0;
        while k0 < k {
            let kc = KC.min(k - k0);
            pack_a(m, k0, kc, a, rsa, csa, pack);
            // The first K block writes beta·C + sum (C unread when beta is 0); later blocks add.
            let first = k0 == 0;
            let bk = b.offset(k0 as isize * rsb);
            let mut j = 0;
            while j < n {
                let (m0, m1) = (lanes(j, n), lanes(j + 16, n));
                for p in 0..panels {
                    let rows = MR.min(m - p * MR);
                    tile(
                        kc,
                        pack.add(p * MR * kc),
                        bk.add(j),
                        rsb,
                        m0,
                        m1,
                        c.offset((p * MR) as isize * rsc).add(j),
                        rsc,
                        rows,
                        first,
                        beta,
                    );
                }
                j += NR;
            }
            k0 += kc;
        }
    }

    /// One `MR × 32` tile of C over `kc` steps of K: `sum = Σ_kk a[i, kk]·b[kk, j]` (a fused
    /// multiply-add chain from zero, in `kk` order), then `C = sum` (first block, `beta` 0),
    /// `C = beta·C + sum` (first block) or `C = C + sum` (later blocks), rows `< rows` and the
    /// lanes of `m0`/`m1` only.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn tile(
        kc: usize,
        ap: *const f32,
        b: *const f32,
        rsb: isize,
        m0: __mmask16,
        m1: __mmask16,
        c: *mut f32,
        rsc: isize,
        rows: usize,
        first: bool,
        beta: f32,
    ) {
        let z = _mm512_setzero_ps();
        let mut acc = [[z; 2]; MR];
        let mut ap = ap;
        let mut bp = b;
        if m1 != 0 {
            for _ in 0..kc {
                let b0 = _mm512_maskz_loadu_ps(m0, bp);
                let b1 = _mm512_maskz_loadu_ps(m1, bp.add(16));
                for (i, row) in acc.iter_mut().enumerate() {
                    let av = _mm512_set1_ps(*ap.add(i));
                    row[0] = _mm512_fmadd_ps(av, b0, row[0]);
                    row[1] = _mm512_fmadd_ps(av, b1, row[1]);
                }
                ap = ap.add(MR);
                bp = bp.offset(rsb);
            }
        } else {
            // 16 columns or fewer left: half the work.
            for _ in 0..kc {
                let b0 = _mm512_maskz_loadu_ps(m0, bp);
                for (i, row) in acc.iter_mut().enumerate() {
                    let av = _mm512_set1_ps(*ap.add(i));
                    row[0] = _mm512_fmadd_ps(av, b0, row[0]);
                }
                ap = ap.add(MR);
                bp = bp.offset(rsb);
            }
        }
        let betav = _mm512_set1_ps(beta);
        for (i, row) in acc.iter().enumerate().take(rows) {
            let ci = c.offset(i as isize * rsc);
            for (h, (&mask, &sum)) in [m0, m1].iter().zip(row).enumerate() {
                if mask == 0 {
                    continue;
                }
                let cp = ci.add(16 * h);
                let out = if !first {
                    _mm512_add_ps(_mm512_maskz_loadu_ps(mask, cp), sum)
                } else if beta == 0.0 {
                    sum
                } else {
                    _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, cp), betav), sum)
                };
                _mm512_mask_storeu_ps(cp, mask, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{gemm, gemm_resident_b, set_num_threads, Op, Rng, Scalar};

    /// `matrixmultiply` alone (the packed path), single-threaded.
    #[allow(clippy::too_many_arguments)]
    fn packed(
        op_a: Op,
        m: usize,
        n: usize,
        k: usize,
        a: &[f32],
        b: &[f32],
        beta: f32,
        c: &mut [f32],
    ) {
        let (rsa, csa) = match op_a {
            Op::N => (k as isize, 1),
            Op::T => (1, m as isize),
        };
        // SAFETY: the slices have exactly the extents the strides address.
        unsafe {
            f32::gemm_raw(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                rsa,
                csa,
                b.as_ptr(),
                n as isize,
                1,
                beta,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    }

    fn same_bits(x: &[f32], y: &[f32]) -> bool {
        x.iter()
            .zip(y)
            .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
    }

    /// The unpacked path gives exactly `matrixmultiply`'s bits — for both layouts of A, every
    /// `beta` kind (0 with NaN garbage in C, 1, other), edge rows and columns, inner dimensions
    /// around the 256-step blocks, NaN and infinities in the operands — on 1 and 2 threads. On a
    /// CPU without AVX-512 both sides are `matrixmultiply` and the test checks only the threading.
    #[test]
    fn unpacked_b_matches_matrixmultiply_bit_for_bit() {
        let _lock = crate::parallel::SETTING_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        super::set_mode(super::Mode::Resident);
        let mut rng = Rng::new(3);
        let mut cases = 0;
        for &m in &[1usize, 3, 8, 9, 16, 31, 64, 100, 128] {
            for &n in &[1usize, 10, 16, 17, 32, 33, 100, 500] {
                for &k in &[1usize, 7, 255, 256, 257, 784] {
                    if m * n * k > 3_000_000 && !(m == 64 && n == 500) {
                        continue;
                    }
                    let op_a = if (m + n + k) % 2 == 0 { Op::N } else { Op::T };
                    let beta = [0.0f32, 1.0, 0.3][(m * 7 + n + k) % 3];
                    let mut a = vec![0.0f32; m * k];
                    let mut b = vec![0.0f32; k * n];
                    let mut c0 = vec![0.0f32; m * n];
                    rng.fill_uniform(&mut a, -1.0, 1.0);
                    rng.fill_uniform(&mut b, -1.0, 1.0);
                    rng.fill_uniform(&mut c0, -1.0, 1.0);
                    if beta == 0.0 {
                        c0.iter_mut().step_by(3).for_each(|v| *v = f32::NAN);
                    }
                    if k > 5 && n > 3 && m > 1 {
                        a[1] = f32::INFINITY;
                        b[k * n - 2] = f32::NAN;
                    }
                    let mut want = c0.clone();
                    packed(op_a, m, n, k, &a, &b, beta, &mut want);
                    for threads in [1, 2] {
                        set_num_threads(threads);
                        // in place (resident B), and packed
                        for resident in [true, false] {
                            let mut got = c0.clone();
                            if resident {
                                gemm_resident_b(op_a, Op::N, m, n, k, 1.0, &a, &b, beta, &mut got);
                            } else {
                                gemm(op_a, Op::N, m, n, k, 1.0, &a, &b, beta, &mut got);
                            }
                            assert!(
                                same_bits(&got, &want),
                                "{m}x{n}x{k} {op_a:?} beta {beta} on {threads} threads, resident {resident}"
                            );
                        }
                    }
                    cases += 1;
                }
            }
        }
        set_num_threads(0);
        assert!(cases > 300, "{cases}");
        // which products read B in place in each mode
        assert_eq!(super::wanted(64, 1.0, 1, true), super::cpu_has_it());
        assert!(!super::wanted(64, 1.0, 1, false));
        assert!(!super::wanted(64, 1.0, 64, true), "B transposed");
        assert!(!super::wanted(129, 1.0, 1, true), "more than MAX_M rows");
        super::set_mode(super::Mode::Always);
        assert_eq!(super::wanted(64, 1.0, 1, false), super::cpu_has_it());
        super::set_mode(super::Mode::Never);
        assert!(!super::wanted(64, 1.0, 1, true));
        super::set_mode(super::Mode::Resident);
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    #[test]
    fn cuts_balance_the_register_tiles() {
        // x·W1 at batch 64: columns at 256 (8 full tiles | 7 full + one of 20 columns).
        assert_eq!(plan(64, 500, 2), (false, NR));
        assert_eq!(block_start(500, 2, 1, NR), 256);
        // a1·W2 at batch 64: two 32-row halves, not 64 | 36 columns.
        assert_eq!(plan(64, 100, 2), (true, MR));
        assert_eq!(block_start(64, 2, 1, MR), 32);
        // ends and clamping
        assert_eq!(block_start(10, 3, 0, MR), 0);
        assert_eq!(block_start(10, 3, 3, MR), 10);
        assert_eq!(block_start(10, 3, 2, MR), 8);
        assert_eq!(block_start(20, 2, 1, NR), 0); // one empty block: nothing to gain from a cut
    }
}
