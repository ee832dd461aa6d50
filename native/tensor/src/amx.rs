//! FP32 GEMM on the AMX bf16 tile unit at fp32 accuracy ("bf16x6"); see `docs/GEMM.md`.
//!
//! Every f32 `x` is split exactly into three bf16 parts, `x = h + m + l`: `h = bf16(x)`,
//! `m = bf16(x - h)`, `l = bf16(x - h - m)`, each rounded to nearest, so `|m| <= 2^-8 |h|` and
//! `|l| <= 2^-8 |m|` (three 8-bit significands cover f32's 24 bits; `x - h` and `x - h - m` are
//! exact in f32). Then
//!
//! `a·b = ah·bh + (ah·bm + am·bh) + (ah·bl + al·bh + am·bm) + δ`, `|δ| <= 2^-23 |a·b|` (about),
//!
//! and the products of two bf16 values are exact in fp32, so six bf16 products per f32 product,
//! accumulated in fp32 by `tdpbf16ps`, give an fp32-accurate result. Each operand is packed once
//! into three planes (h, m, l) in tile layout, and the kernel ([`kernel`]) sums the five
//! correction products and the high×high products in separate accumulators, so the
//! accumulation error is that of an ordinary fp32 dot product of length `k`.
//!
//! Blocking: `K` is cut into blocks of [`KC`]; per block every 32×32 piece of `C` is computed
//! in the tiles and then added to `C` (`alpha`, and `beta` on the first block). `B` is packed
//! once per product for all blocks (shared by the threads); each thread packs its own `A` rows
//! block by block. Threads split `C`
//! into row blocks (and column groups when there are fewer row blocks than threads), never `K`,
//! so every element of `C` is computed by the same instructions in the same order whatever the
//! thread count: results are bit-identical for any number of threads.
//!
//! Edges are zero padding in the packed buffers: rows and columns up to a multiple of 32, `K`
//! up to a multiple of 32 per block; only the valid part of a piece is written to `C`.

use std::arch::asm;
use std::cell::RefCell;

/// Inner-dimension block (a multiple of 32, the bf16 depth of one tile).
pub(crate) const KC: usize = crate::kernel::AMX_KC;
/// Largest row block a thread packs and computes at once (a multiple of 32, at most 32·32: the
/// NaN bookkeeping keeps one bit per 32-row strip in a `u32`) while the packed B fits in
/// [`B_CACHED`]; larger B uses [`MC_LARGE_B`].
pub(crate) const MC: usize = 128;
/// Row block when the packed B is larger than [`B_CACHED`]: each row block streams the whole
/// packed B from L3/memory, so bigger blocks re-read it less often. Measured (one core, CPU
/// time): 1024³ (6 MiB packed B) ~205 GFLOP/s with 128 rows vs ~190 with 256; 2048³ (24 MiB)
/// ~151 with 128 vs ~172 with 256.
pub(crate) const MC_LARGE_B: usize = 256;
/// Packed-B size (bytes) up to which [`MC`] is used.
pub(crate) const B_CACHED: usize = 8 << 20;

/// bf16 elements in one tile: 16 rows of 64 bytes.
const TILE: usize = 512;
/// Row stride of every tile in memory, in bytes.
const STRIDE: usize = 64;

/// 64-byte aligned storage, so that no tile row straddles two cache lines.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u16; 32]);

#[repr(C, align(64))]
struct TileConfig([u8; 64]);

/// Palette 1, all eight tiles 16 rows × 64 bytes.
static CONFIG: TileConfig = {
    let mut c = [0u8; 64];
    c[0] = 1;
    let mut t = 0;
    while t < 8 {
        c[16 + 2 * t] = STRIDE as u8; // colsb[t] (u16, little-endian)
        c[48 + t] = 16; // rows[t]
        t += 1;
    }
    TileConfig(c)
};

/// Loads the tile configuration on this thread; pair with [`tile_release`] on the same thread.
///
/// # Safety
/// AMX must be usable ([`crate::cpu::amx_support`]).
unsafe fn tile_config() {
    asm!("ldtilecfg [{}]", in(reg) &CONFIG as *const TileConfig, options(nostack, readonly));
}

/// Returns the tile state of this thread to its initial (unused) state.
///
/// # Safety
/// AMX must be usable.
unsafe fn tile_release() {
    asm!("tilerelease", options(nostack, nomem));
}

/// Splits `x` into bf16 bit patterns `(h, m, l)` with `x == h + m + l` exactly (module docs),
/// rounding each part to nearest even. Two edge cases: a finite `x` so close to `f32::MAX` that
/// `h` would round up to infinity is truncated instead (the split stays exact), and a NaN or
/// infinite `x` keeps its class in `h` (NaN stays NaN) with `m = l = 0`.
#[inline(always)]
fn split(x: f32) -> (u16, u16, u16) {
    #[inline(always)]
    fn rn(b: u32) -> u32 {
        b.wrapping_add(0x7FFF + ((b >> 16) & 1)) >> 16
    }
    let bits = x.to_bits();
    let abs = bits & 0x7FFF_FFFF;
    let non_finite = abs >= 0x7F80_0000;
    let mut h = rn(bits);
    if h & 0x7F80 == 0x7F80 {
        h = bits >> 16;
    }
    if non_finite {
        h = (bits >> 16) | if abs > 0x7F80_0000 { 0x0040 } else { 0 };
    }
    let r1 = if non_finite {
        0.0
    } else {
        x - f32::from_bits(h << 16)
    };
    let m = rn(r1.to_bits());
    let r2 = r1 - f32::from_bits(m << 16);
    let l = rn(r2.to_bits());
    (h as u16, m as u16, l as u16)
}

/// Whether the CPU converts f32 to bf16 itself (AVX512-BF16's `vcvtneps2bf16`), which the
/// packing then uses for the split ([`split16`]). Every AMX CPU so far has it, but a hypervisor
/// may hide it; without it the packing splits with [`split`] alone, as it does when
/// `FERRODL_BF16_CONVERT=0` (read once; to measure what the conversion gains).
fn has_bf16_convert() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        let off = std::env::var("FERRODL_BF16_CONVERT").is_ok_and(|v| v.trim() == "0");
        !off && std::arch::is_x86_feature_detected!("avx512bf16")
    })
}

/// [`split`] of 16 values at once with the CPU's conversion, bit for bit, or `None` when a lane
/// needs [`split`] itself. `vcvtneps2bf16` rounds to nearest even as `split` does, but it treats
/// subnormal inputs as zero and rounds values within half a bf16 step of `f32::MAX` up to
/// infinity (`split` truncates those). So lanes that are non-finite, that close to overflowing,
/// or nonzero below 2^-102 (where `x - h` or `x - h - m` could be subnormal) are left to
/// `split`; in every other lane each converted value is normal or zero and the parts are
/// `split`'s. About twice as fast per value as `split`: 0.23–0.36 against 0.47 ns
/// (`speed::split_speed_vs_half`).
///
/// Only for functions compiled with `avx512f,avx512bw,avx512vl,avx512bf16` (inlined there).
#[inline(always)]
unsafe fn split16(x: std::arch::x86_64::__m512) -> Option<[std::arch::x86_64::__m256i; 3]> {
    use std::arch::x86_64::*;
    let abs = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7FFF_FFFF));
    let big = _mm512_cmpge_epu32_mask(abs, _mm512_set1_epi32(0x7F7F_8000));
    let nonzero = _mm512_test_epi32_mask(abs, abs);
    // 0x0C80_0000 is 2^-102.
    let tiny = _mm512_mask_cmplt_epu32_mask(nonzero, abs, _mm512_set1_epi32(0x0C80_0000));
    if big | tiny != 0 {
        return None;
    }
    let h = bits16(_mm512_cvtneps_pbh(x));
    let r1 = _mm512_sub_ps(x, widen16(h));
    let m = bits16(_mm512_cvtneps_pbh(r1));
    let l = bits16(_mm512_cvtneps_pbh(_mm512_sub_ps(r1, widen16(m))));
    Some([h, m, l])
}

/// The 16 bf16 bit patterns of a conversion.
#[inline(always)]
unsafe fn bits16(v: std::arch::x86_64::__m256bh) -> std::arch::x86_64::__m256i {
    // SAFETY: both are 32 bytes of plain bits.
    std::mem::transmute(v)
}

/// 16 bf16 bit patterns as the f32 values they stand for.
#[inline(always)]
unsafe fn widen16(b: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(b)))
}

/// Splits one tile's worth of f32 (`src`, in tile order) into the three planes at `dst`,
/// `dst + plane`, `dst + 2·plane`; returns `false` when a value was NaN or infinite.
/// With `BF16` (the caller compiled with `avx512bf16`), 16 values at a time through [`split16`].
#[inline(always)]
unsafe fn split_tile<const BF16: bool>(src: &[f32; TILE], dst: *mut u16, plane: usize) -> bool {
    use std::arch::x86_64::*;
    if !BF16 {
        return split_values(src, 0..TILE, dst, plane);
    }
    let mut finite = true;
    for i in (0..TILE).step_by(16) {
        match split16(_mm512_loadu_ps(src.as_ptr().add(i))) {
            Some([h, m, l]) => {
                _mm256_storeu_si256(dst.add(i) as *mut __m256i, h);
                _mm256_storeu_si256(dst.add(plane + i) as *mut __m256i, m);
                _mm256_storeu_si256(dst.add(2 * plane + i) as *mut __m256i, l);
            }
            None => finite &= split_values_cold(src, i..i + 16, dst, plane),
        }
    }
    finite
}

/// [`split_values`] out of line: the rare fallback of the converting split, kept out of its loop.
#[cold]
#[inline(never)]
unsafe fn split_values_cold(
    src: &[f32],
    range: std::ops::Range<usize>,
    dst: *mut u16,
    plane: usize,
) -> bool {
    split_values(src, range, dst, plane)
}

/// [`split`] of `src[range]` into the planes at `dst`, `dst + plane`, `dst + 2·plane` (same
/// indices); `false` when a value was NaN or infinite.
#[inline(always)]
unsafe fn split_values(
    src: &[f32],
    range: std::ops::Range<usize>,
    dst: *mut u16,
    plane: usize,
) -> bool {
    let mut finite = true;
    for i in range {
        let (h, m, l) = split(src[i]);
        *dst.add(i) = h;
        *dst.add(plane + i) = m;
        *dst.add(2 * plane + i) = l;
        finite &= src[i].is_finite();
    }
    finite
}

/// Whether rows `i0..i0+rows` (all `k` columns) of `a` are free of NaN and infinities.
unsafe fn rows_finite(a: Mat, i0: usize, rows: usize, k: usize) -> bool {
    if a.cs == 1 {
        (i0..i0 + rows)
            .all(|i| crate::first_non_finite(std::slice::from_raw_parts(a.at(i, 0), k)).is_none())
    } else if a.rs == 1 {
        (0..k).all(|kk| {
            crate::first_non_finite(std::slice::from_raw_parts(a.at(i0, kk), rows)).is_none()
        })
    } else {
        (i0..i0 + rows).all(|i| (0..k).all(|kk| (*a.at(i, kk)).is_finite()))
    }
}

/// One operand as row-major element strides: element `(r, c)` is at `ptr + r·rs + c·cs`.
#[derive(Clone, Copy)]
struct Mat {
    ptr: *const f32,
    rs: isize,
    cs: isize,
}

impl Mat {
    #[inline(always)]
    unsafe fn at(&self, r: usize, c: usize) -> *const f32 {
        self.ptr.offset(r as isize * self.rs + c as isize * self.cs)
    }
}

/// A packing job (rows of A or panels of B), run by [`pack`] compiled with or without the CPU's
/// bf16 conversion.
trait Packing {
    type Out;
    /// # Safety
    /// The job's pointers and extents must describe memory inside its operand and buffer;
    /// `BF16` only inside a function compiled with `avx512bf16` ([`pack_bf16`]).
    unsafe fn run<const BF16: bool>(self) -> Self::Out;
}

/// Runs `job` with the CPU's bf16 conversion when it has one ([`has_bf16_convert`]), else with
/// [`split`] alone; both write the same bits.
///
/// # Safety
/// As [`Packing::run`].
unsafe fn pack<P: Packing>(job: P) -> P::Out {
    if has_bf16_convert() {
        pack_bf16(job)
    } else {
        pack_plain(job)
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn pack_plain<P: Packing>(job: P) -> P::Out {
    job.run::<false>()
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
unsafe fn pack_bf16<P: Packing>(job: P) -> P::Out {
    job.run::<true>()
}

/// Packs rows `i0..i0+rows` and depth `k0..k0+kc` of `A` into `dst`: strips of 16 rows, each
/// strip three planes (h, m, l) of `steps` tiles (16 rows × 32 depth). Strips are padded with
/// zero rows to a multiple of 32 rows, depth with zeros to `32·steps`. (Rows holding NaN or
/// infinities are packed too; the caller computes their strips on the FMA path.) Returns the
/// set of 32-row strips that held a NaN or an infinity (bit `ir` for rows `32·ir..32·ir+32`).
#[derive(Clone, Copy)]
struct PackA {
    a: Mat,
    i0: usize,
    rows: usize,
    k0: usize,
    kc: usize,
    steps: usize,
    dst: *mut u16,
}

impl Packing for PackA {
    type Out = u32;

    #[inline(always)]
    unsafe fn run<const BF16: bool>(self) -> u32 {
        let PackA {
            a,
            i0,
            rows,
            k0,
            kc,
            steps,
            dst,
        } = self;
        let plane = steps * TILE;
        let strips = rows.div_ceil(32) * 2;
        let mut tmp = [0f32; TILE];
        let mut bad = 0u32;
        for t in 0..strips {
            for s in 0..steps {
                let kk0 = s * 32;
                let cnt = 32.min(kc - kk0);
                for r in 0..16 {
                    let i = t * 16 + r;
                    let row = &mut tmp[r * 32..r * 32 + 32];
                    if i >= rows {
                        row.fill(0.0);
                        continue;
                    }
                    let p = a.at(i0 + i, k0 + kk0);
                    if a.cs == 1 && kk0 + 96 < kc {
                        // 16 rows 4·k bytes apart, each read in 128-byte runs: fetch ahead.
                        prefetch(p.add(64));
                        prefetch(p.add(80));
                    }
                    if a.cs == 1 && cnt == 32 {
                        row.copy_from_slice(&*(p as *const [f32; 32]));
                    } else if a.cs == 1 {
                        row[..cnt].copy_from_slice(std::slice::from_raw_parts(p, cnt));
                    } else {
                        for (c, v) in row[..cnt].iter_mut().enumerate() {
                            *v = *p.offset(c as isize * a.cs);
                        }
                    }
                    row[cnt..].fill(0.0);
                }
                if !split_tile::<BF16>(&tmp, dst.add(t * 3 * plane + s * TILE), plane) {
                    bad |= 1 << (t / 2);
                }
            }
        }
        bad
    }
}

/// Hints the cache line holding `p` into L1.
#[inline(always)]
fn prefetch(p: *const f32) {
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8) }
}

/// Writes one row of pairs of a B tile: pair `(p, j)` of each plane gets depth rows `x0[j]`
/// (low half) and `x1[j]` (high half), split into h, m, l. Returns `false` on NaN/infinity.
/// With `BF16`, through [`split16`] unless a lane needs [`split`].
#[inline(always)]
unsafe fn emit_pairs<const BF16: bool>(x0: &[f32; 16], x1: &[f32; 16], out: PairRow) -> bool {
    use std::arch::x86_64::*;
    if !BF16 {
        return emit_pairs_split(x0, x1, out);
    }
    let Some(lo) = split16(_mm512_loadu_ps(x0.as_ptr())) else {
        return emit_pairs_split_cold(x0, x1, out);
    };
    let Some(hi) = split16(_mm512_loadu_ps(x1.as_ptr())) else {
        return emit_pairs_split_cold(x0, x1, out);
    };
    let pairs = |lo: __m256i, hi: __m256i| {
        _mm512_or_si512(
            _mm512_cvtepu16_epi32(lo),
            _mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(hi)),
        )
    };
    _mm512_storeu_si512(out.h as *mut __m512i, pairs(lo[0], hi[0]));
    _mm512_storeu_si512(out.m as *mut __m512i, pairs(lo[1], hi[1]));
    _mm512_storeu_si512(out.l as *mut __m512i, pairs(lo[2], hi[2]));
    true
}

/// Where [`emit_pairs`] writes: one row of 16 pairs in each plane of a B tile.
#[derive(Clone, Copy)]
struct PairRow {
    h: *mut u32,
    m: *mut u32,
    l: *mut u32,
}

/// [`emit_pairs_split`] out of line: the rare fallback of the converting packing, kept out of
/// its loop.
#[cold]
#[inline(never)]
unsafe fn emit_pairs_split_cold(x0: &[f32; 16], x1: &[f32; 16], out: PairRow) -> bool {
    emit_pairs_split(x0, x1, out)
}

#[inline(always)]
unsafe fn emit_pairs_split(x0: &[f32; 16], x1: &[f32; 16], out: PairRow) -> bool {
    let mut finite = true;
    for j in 0..16 {
        let (h0, m0, l0) = split(x0[j]);
        let (h1, m1, l1) = split(x1[j]);
        *out.h.add(j) = h0 as u32 | (h1 as u32) << 16;
        *out.m.add(j) = m0 as u32 | (m1 as u32) << 16;
        *out.l.add(j) = l0 as u32 | (l1 as u32) << 16;
        finite &= x0[j].is_finite() & x1[j].is_finite();
    }
    finite
}

/// Packs columns `16·q0..16·q1` (panels `q0..q1`) and depth `k0..k0+kc` of `B` into `dst`
/// (which points at panel `q0`): per panel three planes (h, m, l) of `steps` tiles in the
/// pair-interleaved layout `tdpbf16ps` reads (tile row `p`, column `2j + t` holds
/// `B[32s + 2p + t][j]`). Columns at or past `n` and depth past `kc` are zero. Returns `false`
/// when B held a NaN or an infinity.
#[derive(Clone, Copy)]
struct PackB {
    b: Mat,
    n: usize,
    q0: usize,
    q1: usize,
    k0: usize,
    kc: usize,
    steps: usize,
    dst: *mut u16,
}

impl Packing for PackB {
    type Out = bool;

    #[inline(always)]
    unsafe fn run<const BF16: bool>(self) -> bool {
        let PackB {
            b,
            n,
            q0,
            q1,
            k0,
            kc,
            steps,
            dst,
        } = self;
        let plane = steps * TILE;
        let mut finite = true;
        // Tile `s` of panel `q` as u32 pairs, for each plane.
        let planes = |q: usize, s: usize| {
            let h = dst.add((q - q0) * 3 * plane + s * TILE) as *mut u32;
            (h, h.add(plane / 2), h.add(plane))
        };
        if b.cs != 1 {
            // B stored transposed (columns contiguous): split each column's 32-deep run of a tile
            // at once; its 16 depth pairs are then 16 u32, written down the tile's rows.
            for q in q0..q1 {
                let j0 = q * 16;
                let cols = 16.min(n.saturating_sub(j0));
                for s in 0..steps {
                    let cnt = 32.min(kc - s * 32);
                    let (h, m, l) = planes(q, s);
                    for j in 0..16 {
                        let mut col = [0f32; 32];
                        if j < cols {
                            let src = b.at(k0 + s * 32, j0 + j);
                            if b.rs == 1 && cnt == 32 {
                                col = *(src as *const [f32; 32]);
                            } else {
                                for (kk, v) in col[..cnt].iter_mut().enumerate() {
                                    *v = *src.offset(kk as isize * b.rs);
                                }
                            }
                        }
                        let (mut hs, mut ms, mut ls) = ([0u32; 16], [0u32; 16], [0u32; 16]);
                        // Pair p of a plane is (col[2p], col[2p + 1]) low half first: the 32 parts
                        // in depth order, read as 16 u32.
                        let (lo, hi) = if BF16 {
                            use std::arch::x86_64::*;
                            (
                                split16(_mm512_loadu_ps(col.as_ptr())),
                                split16(_mm512_loadu_ps(col.as_ptr().add(16))),
                            )
                        } else {
                            (None, None)
                        };
                        if let (Some(lo), Some(hi)) = (lo, hi) {
                            for (dst, (lo, hi)) in [&mut hs, &mut ms, &mut ls]
                                .into_iter()
                                .zip(lo.into_iter().zip(hi))
                            {
                                use std::arch::x86_64::*;
                                _mm256_storeu_si256(dst.as_mut_ptr() as *mut __m256i, lo);
                                _mm256_storeu_si256(dst.as_mut_ptr().add(8) as *mut __m256i, hi);
                            }
                        } else {
                            for p in 0..16 {
                                let (x0, x1) = (col[2 * p], col[2 * p + 1]);
                                let (h0, m0, l0) = split(x0);
                                let (h1, m1, l1) = split(x1);
                                hs[p] = h0 as u32 | (h1 as u32) << 16;
                                ms[p] = m0 as u32 | (m1 as u32) << 16;
                                ls[p] = l0 as u32 | (l1 as u32) << 16;
                                finite &= x0.is_finite() & x1.is_finite();
                            }
                        }
                        for p in 0..16 {
                            *h.add(p * 16 + j) = hs[p];
                            *m.add(p * 16 + j) = ms[p];
                            *l.add(p * 16 + j) = ls[p];
                        }
                    }
                }
            }
            return finite;
        }
        // B stored as is: four panels at a time, panels innermost, so B is read in runs of 256
        // bytes per row and only 12 tiles are being written at once; full rows of a panel are split
        // straight from B (no staging copy).
        for qb in (q0..q1).step_by(4) {
            for s in 0..steps {
                for p in 0..16 {
                    let kk = s * 32 + 2 * p;
                    // Each row is visited in 256-byte runs 4·n bytes apart, too short for the
                    // hardware prefetcher: fetch the rows eight iterations ahead.
                    let ahead = kk + 16;
                    if ahead + 1 < kc {
                        let cols = (16 * (q1.min(qb + 4) - qb)).min(n - 16 * qb);
                        for t in 0..2 {
                            let row = b.at(k0 + ahead + t, 16 * qb);
                            for c in (0..cols).step_by(16) {
                                prefetch(row.add(c));
                            }
                        }
                    }
                    for q in qb..q1.min(qb + 4) {
                        let j0 = q * 16;
                        let cols = 16.min(n.saturating_sub(j0));
                        let (h, m, l) = planes(q, s);
                        let (h, m, l) = (h.add(p * 16), m.add(p * 16), l.add(p * 16));
                        if cols == 16 && kk + 1 < kc {
                            let x0 = &*(b.at(k0 + kk, j0) as *const [f32; 16]);
                            let x1 = &*(b.at(k0 + kk + 1, j0) as *const [f32; 16]);
                            finite &= emit_pairs::<BF16>(x0, x1, PairRow { h, m, l });
                        } else {
                            let mut rows = [[0f32; 16]; 2];
                            for (t, row) in rows.iter_mut().enumerate() {
                                if kk + t < kc {
                                    let src = b.at(k0 + kk + t, j0);
                                    row[..cols]
                                        .copy_from_slice(std::slice::from_raw_parts(src, cols));
                                }
                            }
                            finite &= emit_pairs::<BF16>(&rows[0], &rows[1], PairRow { h, m, l });
                        }
                    }
                }
            }
        }
        finite
    }
}

/// Computes one 32×32 piece of `A·B` over one K block: `a` points at the first of two
/// consecutive packed A strips, `b` at the first of two consecutive packed B panels, each
/// strip/panel three planes (h, m, l) of `plane` elements with `steps` tiles per plane.
///
/// Two passes over the block, each into tmm0-3 (a 2×2 grid of 16×16 fp32 accumulators; A tiles
/// in tmm4-5, B tiles in tmm6-7): first the five correction products (h·m, m·m, m·h, l·h, h·l),
/// stored to `corr`, then the high×high products from zero, stored to `out` (both row-major, 32
/// wide). Separate accumulators keep the rounding of the correction sums at their own, 2^-8
/// smaller, scale. Per step the loads are ordered so that each loaded tile serves two products:
/// 16 tile loads per 24 `tdpbf16ps` instead of 24 (measured ~1,950 vs ~1,700 bf16 GFLOP/s on
/// one core with 512-deep blocks from L2).
///
/// # Safety
/// The tile configuration must be loaded on this thread; the buffers must hold the strips and
/// panels described.
unsafe fn kernel(
    a: *const u16,
    b: *const u16,
    plane: usize,
    steps: usize,
    corr: &mut [f32; 1024],
    out: &mut [f32; 1024],
) {
    let zero = || {
        asm!(
            "tilezero tmm0",
            "tilezero tmm1",
            "tilezero tmm2",
            "tilezero tmm3",
            options(nostack, nomem)
        )
    };
    let store = |o: *mut f32| {
        asm!(
            "tilestored [{o0} + {st}*1], tmm0",
            "tilestored [{o1} + {st}*1], tmm1",
            "tilestored [{o2} + {st}*1], tmm2",
            "tilestored [{o3} + {st}*1], tmm3",
            o0 = in(reg) o,
            o1 = in(reg) o.add(16),
            o2 = in(reg) o.add(16 * 32),
            o3 = in(reg) o.add(16 * 32 + 16),
            st = in(reg) 32 * 4usize,
            options(nostack)
        )
    };
    let (a1, b1) = (3 * plane, 3 * plane); // second strip / panel
    zero();
    for s in 0..steps {
        let ah = a.add(s * TILE);
        let am = ah.add(plane);
        let al = am.add(plane);
        let bh = b.add(s * TILE);
        let bm = bh.add(plane);
        let bl = bm.add(plane);
        asm!(
            // h·m
            "tileloadd tmm4, [{ah} + {st}*1]",
            "tileloadd tmm6, [{bm} + {st}*1]",
            "tileloadd tmm5, [{ah1} + {st}*1]",
            "tileloadd tmm7, [{bm1} + {st}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            // m·m
            "tileloadd tmm4, [{am} + {st}*1]",
            "tileloadd tmm5, [{am1} + {st}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            // m·h
            "tileloadd tmm6, [{bh} + {st}*1]",
            "tileloadd tmm7, [{bh1} + {st}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            // l·h
            "tileloadd tmm4, [{al} + {st}*1]",
            "tileloadd tmm5, [{al1} + {st}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            // h·l
            "tileloadd tmm4, [{ah} + {st}*1]",
            "tileloadd tmm6, [{bl} + {st}*1]",
            "tileloadd tmm5, [{ah1} + {st}*1]",
            "tileloadd tmm7, [{bl1} + {st}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            ah = in(reg) ah,
            ah1 = in(reg) ah.add(a1),
            am = in(reg) am,
            am1 = in(reg) am.add(a1),
            al = in(reg) al,
            al1 = in(reg) al.add(a1),
            bh = in(reg) bh,
            bh1 = in(reg) bh.add(b1),
            bm = in(reg) bm,
            bm1 = in(reg) bm.add(b1),
            bl = in(reg) bl,
            bl1 = in(reg) bl.add(b1),
            st = in(reg) STRIDE,
            options(nostack, readonly)
        );
    }
    store(corr.as_mut_ptr());
    zero();
    for s in 0..steps {
        let ah = a.add(s * TILE);
        let bh = b.add(s * TILE);
        asm!(
            "tileloadd tmm4, [{ah} + {st}*1]",
            "tileloadd tmm6, [{bh} + {st}*1]",
            "tileloadd tmm7, [{bh1} + {st}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tileloadd tmm5, [{ah1} + {st}*1]",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            ah = in(reg) ah,
            ah1 = in(reg) ah.add(a1),
            bh = in(reg) bh,
            bh1 = in(reg) bh.add(b1),
            st = in(reg) STRIDE,
            options(nostack, readonly)
        );
    }
    store(out.as_mut_ptr());
}

/// Adds a computed piece to `C`: with `t = main + corr`, `C = alpha·t + beta·C` on the first K
/// block (`beta == 0` ignores C's old contents, NaN included), `C += alpha·t` on later ones.
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn update_c(
    main: &[f32; 1024],
    corr: &[f32; 1024],
    c: *mut f32,
    rsc: usize,
    rows: usize,
    cols: usize,
    alpha: f32,
    beta: f32,
    first: bool,
) {
    for r in 0..rows {
        let crow = std::slice::from_raw_parts_mut(c.add(r * rsc), cols);
        let t = main[r * 32..r * 32 + cols]
            .iter()
            .zip(&corr[r * 32..r * 32 + cols]);
        if !first {
            for (cv, (&x, &y)) in crow.iter_mut().zip(t) {
                *cv += alpha * (x + y);
            }
        } else if beta == 0.0 {
            for (cv, (&x, &y)) in crow.iter_mut().zip(t) {
                *cv = alpha * (x + y);
            }
        } else {
            for (cv, (&x, &y)) in crow.iter_mut().zip(t) {
                *cv = alpha * (x + y) + beta * *cv;
            }
        }
    }
}

thread_local! {
    /// Per-thread packing buffers, kept between products (first-touch page faults of a fresh
    /// multi-megabyte allocation cost as much as a medium product).
    static A_BUF: RefCell<Vec<Line>> = const { RefCell::new(Vec::new()) };
    static B_BUF: RefCell<Vec<Line>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's buffer `buf` grown to at least `len` u16 (a fresh one when it
/// is already borrowed).
fn with_buf<R>(
    buf: &'static std::thread::LocalKey<RefCell<Vec<Line>>>,
    len: usize,
    f: impl FnOnce(*mut u16) -> R,
) -> R {
    let lines = len.div_ceil(32);
    buf.with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => {
            if v.len() < lines {
                *v = vec![Line([0; 32]); lines];
            }
            f(v.as_mut_ptr() as *mut u16)
        }
        Err(_) => {
            let mut v = vec![Line([0; 32]); lines];
            f(v.as_mut_ptr() as *mut u16)
        }
    })
}

/// The K blocks of a product: `(k0, kc, steps)`.
fn k_blocks(k: usize) -> Vec<(usize, usize, usize)> {
    (0..k)
        .step_by(KC)
        .map(|k0| {
            let kc = KC.min(k - k0);
            (k0, kc, kc.div_ceil(32))
        })
        .collect()
}

/// Shared, read-only view of one product for the threads.
struct Job {
    m: usize,
    k: usize,
    n: usize,
    alpha: f32,
    beta: f32,
    a: Mat,
    b: Mat,
    c: *mut f32,
    /// Packed B: per K block, `panels` panels of `3·steps·TILE`.
    bp: *mut u16,
    /// Offset of each K block's panels in `bp`, and the block.
    blocks: Vec<(usize, (usize, usize, usize))>,
    panels: usize,
    /// Rows per row block (multiple of 32) and number of row blocks / column groups.
    mc: usize,
    row_blocks: usize,
    col_groups: usize,
}

// SAFETY: the pointers refer to buffers that outlive the parallel sections (they join before
// `gemm` returns); A and B are only read, packed B is written in disjoint panels before it is
// read, and each piece writes a disjoint block of C.
unsafe impl Sync for Job {}

impl Job {
    /// Packs panels `q0..q1` of B for every K block; `false` when B held a NaN or infinity.
    unsafe fn pack_b_panels(&self, q0: usize, q1: usize) -> bool {
        let mut finite = true;
        for &(off, (k0, kc, steps)) in &self.blocks {
            let dst = self.bp.add(off + q0 * 3 * steps * TILE);
            finite &= pack(PackB {
                b: self.b,
                n: self.n,
                q0,
                q1,
                k0,
                kc,
                steps,
                dst,
            });
        }
        finite
    }

    /// Rows `i0..i0+rows`, columns `j0..j1` of C on the FMA path (`matrixmultiply`), for strips
    /// of A that hold NaN or infinities: IEEE special values then propagate as in fp32.
    unsafe fn fma_block(&self, i0: usize, rows: usize, j0: usize, j1: usize) {
        matrixmultiply::sgemm(
            rows,
            self.k,
            j1 - j0,
            self.alpha,
            self.a.at(i0, 0),
            self.a.rs,
            self.a.cs,
            self.b.at(0, j0),
            self.b.rs,
            self.b.cs,
            self.beta,
            self.c.add(i0 * self.n + j0),
            self.n as isize,
            1,
        );
    }

    /// Computes piece `p` of C: one row block × one column group.
    unsafe fn piece(&self, p: usize) {
        let (rb, g) = (p % self.row_blocks, p / self.row_blocks);
        let i0 = rb * self.mc;
        let rows = self.mc.min(self.m - i0);
        let pairs = self.panels / 2;
        let (jp0, jp1) = (
            pairs * g / self.col_groups,
            pairs * (g + 1) / self.col_groups,
        );
        if jp0 >= jp1 || rows == 0 {
            return;
        }
        let max_steps = KC / 32;
        let strips = rows.div_ceil(32) * 2;
        let (j0, j1) = (32 * jp0, self.n.min(32 * jp1));
        // 32-row strips of A with a NaN or infinity go to the FMA path (bit ir of `fma`). Strips
        // start at multiples of 32 whatever the thread count, so the choice is the same for any
        // count. Packing reports them; only when a later K block could reveal one after C was
        // already scaled by a non-zero beta are the rows scanned beforehand.
        let mut fma = 0u32;
        if self.beta != 0.0 && self.blocks.len() > 1 {
            for ir in 0..strips / 2 {
                let i = i0 + 32 * ir;
                if !rows_finite(self.a, i, 32.min(self.m - i), self.k) {
                    fma |= 1 << ir;
                }
            }
        }
        with_buf(&A_BUF, strips * 3 * max_steps * TILE, |ap| {
            tile_config();
            let mut out = Tile([0.0; 1024]);
            let mut corr = Tile([0.0; 1024]);
            for (bi, &(off, (k0, kc, steps))) in self.blocks.iter().enumerate() {
                fma |= pack(PackA {
                    a: self.a,
                    i0,
                    rows,
                    k0,
                    kc,
                    steps,
                    dst: ap,
                });
                if fma.count_ones() as usize == strips / 2 {
                    break;
                }
                let plane = steps * TILE;
                for jp in jp0..jp1 {
                    let bq = self.bp.add(off + 2 * jp * 3 * plane);
                    let j = 32 * jp;
                    let cols = 32.min(self.n - j);
                    for ir in (0..strips / 2).filter(|&ir| fma & (1 << ir) == 0) {
                        // The C block's 32 rows are 4·n bytes apart: request them now, the
                        // kernel takes long enough for them to arrive.
                        let i = i0 + 32 * ir;
                        for r in 0..32.min(self.m - i) {
                            let row = self.c.add((i + r) * self.n + j);
                            prefetch(row);
                            prefetch(row.add(cols - 1));
                        }
                        kernel(
                            ap.add(2 * ir * 3 * plane),
                            bq,
                            plane,
                            steps,
                            &mut corr.0,
                            &mut out.0,
                        );
                        update_c(
                            &out.0,
                            &corr.0,
                            self.c.add(i * self.n + j),
                            self.n,
                            32.min(self.m - i),
                            cols,
                            self.alpha,
                            self.beta,
                            bi == 0,
                        );
                    }
                }
            }
            tile_release();
        });
        // With beta == 0 a strip found bad in a later K block is simply overwritten here.
        for ir in (0..strips / 2).filter(|&ir| fma & (1 << ir) != 0) {
            let i = i0 + 32 * ir;
            self.fma_block(i, 32.min(self.m - i), j0, j1);
        }
    }
}

#[repr(C, align(64))]
struct Tile([f32; 1024]);

/// `C = alpha·A·B + beta·C` (row-major C of `m × n`, unit column stride) on the AMX unit, on up
/// to `threads` threads; returns the number of pieces computed in parallel (1 when only the
/// calling thread worked), or `None`, with `C` untouched, when `B` holds a NaN or an infinity
/// (the caller then takes the FMA path). Row strips of `A` holding them are computed on the FMA
/// path here.
///
/// # Safety
/// AMX must be usable ([`crate::cpu::amx_support`] is `Ok`); the strides and dimensions must
/// describe memory inside the operands, `c` must not alias `a` or `b`, and `m, n, k > 0`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm(
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
    threads: usize,
) -> Option<usize> {
    let panels = n.div_ceil(32) * 2;
    let mut blocks = Vec::new();
    let mut total = 0;
    for blk in k_blocks(k) {
        blocks.push((total, blk));
        total += panels * 3 * blk.2 * TILE;
    }
    let threads = threads.max(1);
    let mc_max = if 2 * total > B_CACHED { MC_LARGE_B } else { MC };
    let mc = mc_max.min(m.div_ceil(threads).div_ceil(32) * 32);
    let row_blocks = m.div_ceil(mc);
    let col_groups = if row_blocks >= threads {
        1
    } else {
        (panels / 2).min(threads.div_ceil(row_blocks))
    };
    with_buf(&B_BUF, total, |bp| {
        let job = Job {
            m,
            k,
            n,
            alpha,
            beta,
            a: Mat {
                ptr: a,
                rs: rsa,
                cs: csa,
            },
            b: Mat {
                ptr: b,
                rs: rsb,
                cs: csb,
            },
            c,
            bp,
            blocks,
            panels,
            mc,
            row_blocks,
            col_groups,
        };
        // Phase 1: pack B, panel pairs split over the threads.
        let pack_parts = threads.min(panels / 2);
        let finite = std::sync::atomic::AtomicBool::new(true);
        let pack = |p: usize| {
            let pairs = panels / 2;
            let (q0, q1) = (
                2 * (pairs * p / pack_parts),
                2 * (pairs * (p + 1) / pack_parts),
            );
            // SAFETY: part p writes only panels q0..q1.
            if !unsafe { job.pack_b_panels(q0, q1) } {
                finite.store(false, std::sync::atomic::Ordering::Relaxed);
            }
        };
        crate::parallel::run_parts(threads, pack_parts, &pack);
        if !finite.into_inner() {
            return None;
        }
        // Phase 2: the pieces of C.
        let pieces = row_blocks * col_groups;
        let compute = |p: usize| {
            // SAFETY: piece p writes only its own block of C.
            unsafe { job.piece(p) }
        };
        crate::parallel::run_parts(threads, pieces, &compute);
        Some(threads.min(pieces))
    })
}

/// One `tdpbf16ps` of ones (16×32 by 32×16): every element must be 32. Run once by the
/// detection after the tile permission was granted.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn self_test() -> bool {
    let ones = [Line([0x3F80; 32]); 16];
    let mut out = Tile([0.0; 1024]);
    // SAFETY: called only after CPUID, XCR0 and the permission checks passed; the loads read
    // 16 rows of 64 bytes from `ones` and the stores write 4 tiles inside `out`.
    unsafe {
        tile_config();
        let p = ones.as_ptr() as *const u16;
        asm!(
            "tilezero tmm0",
            "tileloadd tmm4, [{p} + {st}*1]",
            "tileloadd tmm6, [{p} + {st}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tilezero tmm1",
            "tilezero tmm2",
            "tilezero tmm3",
            p = in(reg) p,
            st = in(reg) STRIDE,
            options(nostack, readonly)
        );
        let o = out.0.as_mut_ptr();
        asm!(
            "tilestored [{o0} + {st}*1], tmm0",
            o0 = in(reg) o,
            st = in(reg) 32 * 4usize,
            options(nostack)
        );
        tile_release();
    }
    (0..16).all(|r| out.0[r * 32..r * 32 + 16].iter().all(|&v| v == 32.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_exact_and_parts_shrink() {
        let mut rng = crate::Rng::new(3);
        for i in 0..200_000 {
            let x = if i % 2 == 0 {
                (rng.next_gaussian() * 2f64.powi((rng.below(60) as i32) - 30)) as f32
            } else {
                f32::from_bits(rng.next_u64() as u32 & 0xFF7F_FFFF) // any finite pattern
            };
            if !x.is_normal() || x.abs() < 1e-30 {
                continue;
            }
            let (h, m, l) = split(x);
            let f = |b: u16| f32::from_bits((b as u32) << 16) as f64;
            let (h, m, l) = (f(h), f(m), f(l));
            assert_eq!(h + m + l, x as f64, "{x:e}: {h:e} {m:e} {l:e}");
            assert!(m.abs() <= h.abs() * 2f64.powi(-8), "{x:e}");
            assert!(l.abs() <= m.abs() * 2f64.powi(-8), "{x:e}");
        }
    }

    #[test]
    fn split_edge_values() {
        let f = |b: u16| f32::from_bits((b as u32) << 16);
        // Near f32::MAX: h truncates instead of overflowing, and the parts still sum exactly.
        for x in [f32::MAX, -f32::MAX, f32::from_bits(0x7F7F_8000)] {
            let (h, m, l) = split(x);
            assert!(f(h).is_finite());
            assert_eq!(f(h) as f64 + f(m) as f64 + f(l) as f64, x as f64);
        }
        let (h, m, l) = split(f32::INFINITY);
        assert_eq!((f(h), m, l), (f32::INFINITY, 0, 0));
        let (h, _, _) = split(f32::NEG_INFINITY);
        assert_eq!(f(h), f32::NEG_INFINITY);
        // A NaN whose payload lives only in the low 16 bits must stay NaN.
        let (h, m, l) = split(f32::from_bits(0x7F80_0001));
        assert!(f(h).is_nan() && m == 0 && l == 0);
        assert_eq!(split(0.0), (0, 0, 0));
        assert_eq!(split(-0.0).0, 0x8000);
    }

    /// Each part is the round-to-nearest-even bf16 of what the parts before it left, as the
    /// `half` crate (an independent implementation) converts it; `split` does the same with bit
    /// operations because `half::bf16::from_f32` is about 2x slower in the packing loop
    /// (`speed::split_speed_vs_half`). Values whose `h` would overflow are the documented exception.
    #[test]
    fn split_rounds_like_half_bf16() {
        use half::bf16;
        let mut rng = crate::Rng::new(11);
        let mut checked = 0;
        for i in 0..200_000 {
            let x = if i % 2 == 0 {
                (rng.next_gaussian() * 2f64.powi((rng.below(60) as i32) - 30)) as f32
            } else {
                f32::from_bits(rng.next_u64() as u32)
            };
            let h = bf16::from_f32(x);
            if x.is_finite() && h.is_infinite() {
                continue; // truncated instead (split_edge_values)
            }
            let (sh, sm, sl) = split(x);
            if x.is_nan() {
                assert!(
                    bf16::from_bits(sh).is_nan() && sm == 0 && sl == 0,
                    "{:#x}",
                    x.to_bits()
                );
                continue;
            }
            let r1 = if x.is_finite() { x - h.to_f32() } else { 0.0 };
            let m = bf16::from_f32(r1);
            let l = bf16::from_f32(r1 - m.to_f32());
            assert_eq!(
                (sh, sm, sl),
                (h.to_bits(), m.to_bits(), l.to_bits()),
                "{x:e} ({:#x})",
                x.to_bits()
            );
            checked += 1;
        }
        assert!(checked > 190_000, "{checked}");
    }
}

#[cfg(test)]
mod bf16_convert_tests {
    use super::*;

    /// A value of one of the kinds the split treats differently, or an ordinary one.
    fn value(rng: &mut crate::Rng) -> f32 {
        let special = [
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            -f32::from_bits(1),
            f32::from_bits(0x0040_0000), // subnormal
            f32::from_bits(0x0C80_0000), // 2^-102: the first value split16 takes
            f32::from_bits(0x0C7F_FFFF), // just below it
            -f32::from_bits(0x0C80_0001),
            f32::from_bits(0x7F7F_7FFF), // the largest that rounds down
            f32::from_bits(0x7F7F_8000), // rounds up to infinity: truncated by split
            f32::MAX,
            -f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(0x7F80_0001), // NaN with a low payload
            f32::from_bits(0x3F80_8000), // a tie: rounds to even
            f32::from_bits(0x3F81_8000), // a tie: rounds up
        ];
        match rng.below(8) {
            0 => special[rng.below(special.len() as u64) as usize],
            1 => f32::from_bits(rng.next_u64() as u32), // any pattern
            _ => (rng.next_gaussian() * 2f64.powi(rng.below(80) as i32 - 40)) as f32,
        }
    }

    #[test]
    fn split16_gives_split_bits_or_leaves_the_lanes_to_it() {
        if !has_bf16_convert() {
            eprintln!("no AVX512-BF16 on this CPU: nothing to compare");
            return;
        }
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
        unsafe fn run(x: &[f32; 16]) -> Option<[[u16; 16]; 3]> {
            split16(std::arch::x86_64::_mm512_loadu_ps(x.as_ptr()))
                .map(|p| p.map(|v| std::mem::transmute(v)))
        }
        let mut rng = crate::Rng::new(21);
        let (mut fast, mut left) = (0, 0);
        for round in 0..60_000 {
            let mut x = [0f32; 16];
            for v in &mut x {
                // mostly ordinary vectors, so that both outcomes are common
                *v = if round % 4 == 0 {
                    value(&mut rng)
                } else {
                    (rng.next_gaussian() * 1e-3) as f32
                };
            }
            let needs_split = x.iter().any(|v| {
                let a = v.to_bits() & 0x7FFF_FFFF;
                a >= 0x7F7F_8000 || (a != 0 && a < 0x0C80_0000)
            });
            match unsafe { run(&x) } {
                Some([h, m, l]) => {
                    assert!(!needs_split, "{x:?}");
                    for i in 0..16 {
                        assert_eq!(
                            (h[i], m[i], l[i]),
                            split(x[i]),
                            "{:e} ({:#x})",
                            x[i],
                            x[i].to_bits()
                        );
                    }
                    fast += 1;
                }
                None => {
                    assert!(needs_split, "{x:?}");
                    left += 1;
                }
            }
        }
        assert!(fast > 40_000 && left > 10_000, "{fast} {left}");
    }

    /// Both compilations of the packing write the same planes and report the same NaN and
    /// infinities, for A and B as stored and transposed, with special values scattered in.
    #[test]
    fn both_packings_write_the_same_planes() {
        if !has_bf16_convert() {
            eprintln!("no AVX512-BF16 on this CPU: nothing to compare");
            return;
        }
        let mut rng = crate::Rng::new(22);
        for (k, n, sparse) in [
            (64usize, 48usize, false),
            (100, 37, true),
            (512, 64, true),
            (33, 16, false),
        ] {
            let src: Vec<f32> = (0..k * n)
                .map(|_| {
                    if sparse || rng.below(50) == 0 {
                        value(&mut rng)
                    } else {
                        rng.next_gaussian() as f32
                    }
                })
                .collect();
            let steps = k.div_ceil(32);
            // B: k × n, as stored and transposed
            for (rs, cs) in [(n as isize, 1), (1, k as isize)] {
                let b = Mat {
                    ptr: src.as_ptr(),
                    rs,
                    cs,
                };
                let panels = n.div_ceil(16);
                let len = panels * 3 * steps * TILE;
                let (mut d1, mut d2) = (vec![0u16; len], vec![0u16; len]);
                let (f1, f2) = unsafe {
                    (
                        pack_plain(PackB {
                            b,
                            n,
                            q0: 0,
                            q1: panels,
                            k0: 0,
                            kc: k,
                            steps,
                            dst: d1.as_mut_ptr(),
                        }),
                        pack_bf16(PackB {
                            b,
                            n,
                            q0: 0,
                            q1: panels,
                            k0: 0,
                            kc: k,
                            steps,
                            dst: d2.as_mut_ptr(),
                        }),
                    )
                };
                assert_eq!(f1, f2, "B {k}×{n} ({rs}, {cs})");
                assert!(d1 == d2, "B {k}×{n} ({rs}, {cs})");
            }
            // A: n × k (rows × depth), as stored and transposed
            for (rs, cs) in [(k as isize, 1), (1, n as isize)] {
                let a = Mat {
                    ptr: src.as_ptr(),
                    rs,
                    cs,
                };
                let len = n.div_ceil(32) * 2 * 3 * steps * TILE;
                let (mut d1, mut d2) = (vec![0u16; len], vec![0u16; len]);
                let (f1, f2) = unsafe {
                    (
                        pack_plain(PackA {
                            a,
                            i0: 0,
                            rows: n,
                            k0: 0,
                            kc: k,
                            steps,
                            dst: d1.as_mut_ptr(),
                        }),
                        pack_bf16(PackA {
                            a,
                            i0: 0,
                            rows: n,
                            k0: 0,
                            kc: k,
                            steps,
                            dst: d2.as_mut_ptr(),
                        }),
                    )
                };
                assert_eq!(f1, f2, "A {n}×{k} ({rs}, {cs})");
                assert!(d1 == d2, "A {n}×{k} ({rs}, {cs})");
            }
        }
    }
}

#[cfg(test)]
mod speed {
    use super::*;

    /// Splitting one tile (512 values) with `split` against the same split written with
    /// `half::bf16` conversions (ns per value). Run with
    /// `cargo test --release -p ferrodl-tensor split_speed_vs_half -- --ignored --nocapture`.
    #[test]
    #[ignore = "measurement for docs/GEMM.md, asserts nothing; run with --ignored --nocapture"]
    fn split_speed_vs_half() {
        use half::bf16;
        fn split_half(x: f32) -> (u16, u16, u16) {
            let mut h = bf16::from_f32(x);
            if h.is_infinite() && x.is_finite() {
                h = bf16::from_bits((x.to_bits() >> 16) as u16);
            }
            let r1 = if x.is_finite() { x - h.to_f32() } else { 0.0 };
            let m = bf16::from_f32(r1);
            let l = bf16::from_f32(r1 - m.to_f32());
            (h.to_bits(), m.to_bits(), l.to_bits())
        }
        #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
        unsafe fn tile_with<F: Fn(f32) -> (u16, u16, u16)>(
            f: F,
            src: &[f32; TILE],
            out: &mut [u16],
        ) {
            let (h, rest) = out.split_at_mut(TILE);
            let (m, l) = rest.split_at_mut(TILE);
            for i in 0..TILE {
                (h[i], m[i], l[i]) = f(src[i]);
            }
        }
        if !std::arch::is_x86_feature_detected!("avx512bw") {
            return;
        }
        let mut src = [0f32; TILE];
        crate::Rng::new(5).fill_uniform(&mut src, -4.0, 4.0);
        let mut out = vec![0u16; 3 * TILE];
        let reps = 100_000;
        let mut time = |name: &str, run: &dyn Fn(&mut [u16])| {
            let t = std::time::Instant::now();
            for _ in 0..reps {
                run(&mut out);
                std::hint::black_box(&out);
            }
            let ns = t.elapsed().as_secs_f64() * 1e9 / (reps * TILE) as f64;
            println!("split with {name}: {ns:.2} ns/value");
        };
        for _ in 0..3 {
            // each call monomorphised (inlined split), as in split_tile
            time("bit operations", &|o| unsafe {
                tile_with(split, std::hint::black_box(&src), o)
            });
            time("half::bf16", &|o| unsafe {
                tile_with(split_half, std::hint::black_box(&src), o)
            });
            if has_bf16_convert() {
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
                unsafe fn tile_bf16(src: &[f32; TILE], out: &mut [u16]) {
                    split_tile::<true>(src, out.as_mut_ptr(), TILE);
                }
                time("the CPU's bf16 conversion (split16)", &|o| unsafe {
                    tile_bf16(std::hint::black_box(&src), o)
                });
            }
        }
    }

    /// Packing speed (ns per element) for B as stored and transposed, and for A.
    #[test]
    #[ignore = "measurement for docs/GEMM.md, asserts nothing; run with --ignored --nocapture"]
    fn packing_speed() {
        /// ns per element of `reps` runs of `job`, with the split and, where the CPU has it, the
        /// bf16 conversion.
        fn time<P: Packing + Copy>(name: &str, job: P, reps: usize, elements: usize) {
            for (split, bf16) in [("split", false), ("bf16 convert", true)] {
                if bf16 && !has_bf16_convert() {
                    continue;
                }
                let t = std::time::Instant::now();
                for _ in 0..reps {
                    // SAFETY: the jobs below address `src` and `dst` within their extents.
                    unsafe {
                        if bf16 {
                            pack_bf16(job);
                        } else {
                            pack_plain(job);
                        }
                    }
                }
                let ns = t.elapsed().as_secs_f64() * 1e9 / (reps * elements) as f64;
                println!("pack {name} ({split}): {ns:.3} ns/element");
            }
        }
        let (k, n) = (512, 512);
        let src: Vec<f32> = (0..k * n).map(|i| (i as f32).sin()).collect();
        let steps = k / 32;
        let mut dst = vec![Line([0; 32]); (n / 16) * 3 * steps * TILE / 32];
        let dst = dst.as_mut_ptr() as *mut u16;
        let mat = |rs, cs| Mat {
            ptr: src.as_ptr(),
            rs,
            cs,
        };
        for (name, b) in [
            ("B as stored", mat(n as isize, 1)),
            ("B transposed", mat(1, k as isize)),
        ] {
            let job = PackB {
                b,
                n,
                q0: 0,
                q1: n / 16,
                k0: 0,
                kc: k,
                steps,
                dst,
            };
            time(name, job, 20, k * n);
        }
        for (name, a) in [
            ("A as stored", mat(k as isize, 1)),
            ("A transposed", mat(1, 256)),
        ] {
            let job = PackA {
                a,
                i0: 0,
                rows: 256,
                k0: 0,
                kc: k,
                steps,
                dst,
            };
            time(name, job, 40, k * 256);
        }
    }

    /// Kernel throughput with A and B resident in L1/L2 (bf16 GFLOP/s). Run with
    /// `cargo test --release -p ferrodl-tensor kernel_speed -- --ignored --nocapture`.
    #[test]
    #[ignore = "measurement for docs/GEMM.md, asserts nothing; run with --ignored --nocapture"]
    fn kernel_speed() {
        if crate::cpu::amx_support().is_err() {
            return;
        }
        for (steps, astrips) in [(4, 2), (8, 2), (8, 16), (4, 16), (16, 2), (16, 8), (32, 4)] {
            let plane = steps * TILE;
            let a = vec![Line([0x3F80; 32]); astrips * 3 * plane / 32];
            let b = vec![Line([0x3F80; 32]); 2 * 3 * plane / 32];
            let mut out = Tile([0.0; 1024]);
            let calls = 200_000 / steps;
            let mut corr = Tile([0.0; 1024]);
            let t2 = std::time::Instant::now();
            unsafe {
                tile_config();
                for i in 0..calls {
                    let ap = (a.as_ptr() as *const u16).add((i % (astrips / 2)) * 6 * plane);
                    kernel(
                        ap,
                        b.as_ptr() as *const u16,
                        plane,
                        steps,
                        &mut corr.0,
                        &mut out.0,
                    );
                }
                tile_release();
            }
            let dt2 = t2.elapsed().as_secs_f64();
            let flops = calls as f64 * 6.0 * steps as f64 * 4.0 * 16.0 * 16.0 * 32.0 * 2.0;
            println!(
                "steps {steps}, A strips {astrips}: {:.0} GFLOP/s bf16",
                flops / dt2 / 1e9
            );
        }
    }
}
