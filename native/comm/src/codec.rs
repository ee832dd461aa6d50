//! Wire format of a threshold-encoded update, with its encoder and validating decoder.
//!
//! An update message says "add `+t` or `-t` to these entries of a dense `f32` vector of
//! `param_count` parameters". All integers and floats are **little-endian**; there is no padding
//! besides what is listed.
//!
//! Version 3 (written since 2026-11-25) has a compact header whose size follows what it says:
//!
//! | size | field | value |
//! |---|---|---|
//! | 1 | version | `0x03` (versions 1 and 2 start with the magic `FRDU` instead, see below) |
//! | 1 | kind and `k` | bits 7–6: kind (1 = bitmap, 2 = Rice); bits 5–0: the Rice parameter `k` (0 for the bitmap) |
//! | 1–10 | param_count | unsigned LEB128 varint ([`crate::varint`]: minimal encoding only), length of the dense update vector |
//! | 1–10 | entry_count | varint, number of entries sent (each means `+t` or `-t`), at most param_count |
//! | 4 | threshold | `f32` `t`, finite and > 0 |
//! | … | payload | below |
//!
//! (9 to 12 bytes for networks of 128 to 2 million parameters, against the 32 of version 2.)
//! Versions 1 and 2, still read:
//!
//! | offset | size | field | value |
//! |---|---|---|---|
//! | 0 | 4 | magic | ASCII `FRDU` |
//! | 4 | 2 | version | `u16` = 1 or 2 |
//! | 6 | 1 | kind | `u8`: 0 = sparse `i32` (read only), 1 = bitmap, 2 = Rice (version 2) |
//! | 7 | 1 | rice_k | `u8`: the Rice parameter `k` (0..=63) for kind 2; 0 otherwise |
//! | 8 | 8 | param_count | `u64` |
//! | 16 | 8 | entry_count | `u64` |
//! | 24 | 4 | threshold | `f32` `t`, finite and > 0 |
//! | 28 | 4 | reserved | `u32` = 0 |
//! | 32 | … | payload | below |
//!
//! * **Rice** (kind 2): the sorted positions of the entries as gaps (`g_0 = p_0`,
//!   `g_i = p_i - p_{i-1} - 1`), each Golomb–Rice coded with parameter `k` (quotient `g >> k` in
//!   unary as that many 0 bits and a 1 bit, then the low `k` bits of `g`), followed by one sign
//!   bit (0 = `+t`, 1 = `-t`); bits packed least significant first, the last byte padded with 0
//!   bits, nothing after it (see [`crate::rice`]). A message with `entry_count` 0 has `k` 0 and
//!   an empty payload.
//! * **Bitmap** (kind 1): `ceil(param_count / 16)` × `u32` words, 2 bits per parameter;
//!   parameter `j` is at bits `2*(j % 16)` and `2*(j % 16) + 1` of word `j / 16`: `00` nothing,
//!   `01` = `+t`, `10` = `-t`, `11` invalid. Bits of the last word beyond `param_count` are 0, and
//!   the number of non-`00` codes equals `entry_count`.
//! * **Sparse** (kind 0, written by version 1 writers, no longer written): `entry_count` × `i32`,
//!   each a signed 1-based index: the sign is the sign of the value and `|i| - 1` the position.
//!   Magnitudes strictly increasing, in `1..=min(param_count, i32::MAX)`.
//!
//! Version 1 messages (kinds 0 and 1, byte 7 = 0) are still read; a version 1 message with kind 2
//! is refused, and so is a version 3 message of kind 0.
//!
//! **Choice of encoding** ([`choose_encoding`]): with `n` entries out of `P` the writer takes the
//! Rice parameter `k` that minimises the Rice size bound `n (k + 2) + ((P - n) >> k)` bits
//! ([`crate::rice::parameter`]; it follows the mean gap `P / n`), and writes Rice iff that bound,
//! in whole bytes, is at most three quarters of the bitmap payload `4 × ceil(P / 16)` bytes;
//! bitmap otherwise. The actual Rice payload is never larger than the bound. Rice is never larger
//! than the bitmap (at `k = 0` its bound is `P + n <= 2P` bits), but near full density it saves
//! little and codes several times slower, so dense messages (about `n > P / 2`) stay bitmaps. For
//! scattered entries Rice costs about `log2(1/s) + 2.5` bits per entry at sparsity `s` (12.5 at
//! `s = 1e-3`, against 32 for an `i32` index).
//!
//! **Semantics.** Entry `j` of the residual `r` is sent iff `|r_j| >= t`, as `sign(r_j) * t`, in
//! every encoding (the reference treated positive and negative values asymmetrically in its
//! bitmap; we don't). The entries are counted first, the encoding is chosen, and only then is the
//! residual modified, once: `r_j -= sign(r_j) * t` for each sent entry (the reference lost the
//! residual mass of a discarded sparse pass when it fell back to the bitmap). So
//! `decoded + new residual == old residual`, exactly when `|r_j| <= 2t` (Sterbenz: `r_j - t` is
//! then exact) and within half an ulp of `r_j` otherwise.
//!
//! The full description, for the Java side and other readers, is `docs/UPDATE_FORMAT.md`.

use serde::{Deserialize, Serialize};

use crate::error::{CodecError, VectorKind};
use crate::rice::{self, BitWriter, MAX_RICE_PARAMETER};
use crate::varint;

/// The four bytes a version 1 or 2 message starts with.
pub const MAGIC: [u8; 4] = *b"FRDU";
/// The format version this build writes (its first byte; the compact header).
pub const VERSION: u16 = 3;
/// The oldest format version this build reads.
pub const MIN_READ_VERSION: u16 = 1;
/// Size of the fixed header of versions 1 and 2.
pub const HEADER_LEN: usize = 32;
/// Largest version 3 header: version, kind/k, two 10-byte varints, threshold.
pub const MAX_HEADER_LEN: usize = 2 + 2 * varint::MAX_LEN + 4;
/// Smallest version 3 header (one-byte counts).
pub const MIN_HEADER_LEN: usize = 2 + 2 + 4;

/// Low bit of every 2-bit bitmap code.
const LOW_BITS: u32 = 0x5555_5555;

/// Payload kind of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Encoding {
    /// Signed 1-based `i32` indices, 4 bytes per entry (version 1 writers; still read).
    Sparse,
    /// 2 bits per parameter.
    Bitmap,
    /// Golomb–Rice coded position gaps plus a sign bit per entry.
    Rice,
}

impl Encoding {
    /// The `kind` byte of the header.
    pub fn code(self) -> u8 {
        match self {
            Encoding::Sparse => 0,
            Encoding::Bitmap => 1,
            Encoding::Rice => 2,
        }
    }

    fn from_code(code: u8, version: u16) -> Result<Self, CodecError> {
        match code {
            0 if version <= 2 => Ok(Encoding::Sparse),
            1 => Ok(Encoding::Bitmap),
            2 if version >= 2 => Ok(Encoding::Rice),
            other => Err(CodecError::UnknownKind {
                kind: other,
                version,
            }),
        }
    }
}

/// The parsed, validated header of a message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    pub kind: Encoding,
    pub param_count: u64,
    pub entry_count: u64,
    pub threshold: f32,
    /// The Rice parameter `k` (0 for the other kinds).
    pub rice_k: u8,
}

impl Header {
    /// Smallest and largest payload size in bytes this header allows (saturating, so a hostile
    /// header cannot overflow the arithmetic; such a size is then simply never available). Equal
    /// for the sparse and bitmap kinds; for Rice the exact size depends on the positions.
    pub fn payload_len_range(&self) -> (u64, u64) {
        match self.kind {
            Encoding::Sparse => {
                let n = self.entry_count.saturating_mul(4);
                (n, n)
            }
            Encoding::Bitmap => {
                let n = bitmap_words(self.param_count).saturating_mul(4);
                (n, n)
            }
            Encoding::Rice => (
                rice::min_bits(self.entry_count, self.rice_k).div_ceil(8),
                rice::max_bits(self.param_count, self.entry_count, self.rice_k).div_ceil(8),
            ),
        }
    }

    /// Bytes of this header in the version 3 layout.
    pub fn encoded_len(&self) -> usize {
        2 + varint::len(self.param_count) + varint::len(self.entry_count) + 4
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        out.push(VERSION as u8);
        out.push((self.kind.code() << 6) | self.rice_k);
        varint::put(out, self.param_count);
        varint::put(out, self.entry_count);
        out.extend_from_slice(&self.threshold.to_le_bytes());
    }
}

/// What one call of [`encode`] produced.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EncodeStats {
    pub encoding: Encoding,
    /// Entries sent (each `+t` or `-t`).
    pub entries: u64,
    /// Size of the whole message in bytes, header included.
    pub bytes: usize,
    /// `entries / param_count`; 0 when `param_count` is 0.
    pub sparsity: f64,
    /// The threshold `t` the message was encoded with.
    pub threshold: f32,
    /// Length of the encoded vector.
    pub param_count: u64,
}

/// Number of `u32` words of a bitmap payload for `param_count` parameters.
pub fn bitmap_words(param_count: u64) -> u64 {
    param_count.div_ceil(16)
}

/// The encoding (and Rice parameter, 0 for the bitmap) a writer uses for `entry_count` entries
/// out of `param_count` parameters: Rice with `k = rice::parameter(P, n)` iff its size bound in
/// bytes is no larger than the bitmap payload (always when there are no entries), else bitmap.
pub fn choose_encoding(param_count: u64, entry_count: u64) -> (Encoding, u8) {
    let k = rice::parameter(param_count, entry_count);
    let rice_bytes = rice::max_bits(param_count, entry_count, k).div_ceil(8);
    let bitmap_bytes = bitmap_words(param_count).saturating_mul(4);
    // Rice must save at least a quarter: the bitmap is coded several times faster (see
    // docs/UPDATE_FORMAT.md), and near that density the bytes differ little.
    if entry_count == 0 || rice_bytes.saturating_mul(4) <= bitmap_bytes.saturating_mul(3) {
        (Encoding::Rice, k)
    } else {
        (Encoding::Bitmap, 0)
    }
}

/// Encodes the entries of `residual` with `|r| >= threshold` into `out` (cleared first) and
/// subtracts what was sent from `residual`.
///
/// Refuses a threshold that is not finite and > 0, and a residual holding NaN or an infinity
/// (naming the first such index); on error the residual is unchanged and `out` is empty.
pub fn encode(
    residual: &mut [f32],
    threshold: f32,
    out: &mut Vec<u8>,
) -> Result<EncodeStats, CodecError> {
    out.clear();
    check_threshold(threshold)?;
    let count = count_entries(residual, threshold)?;
    Ok(write_message(residual, threshold, count, out))
}

pub(crate) fn check_threshold(threshold: f32) -> Result<(), CodecError> {
    if threshold.is_finite() && threshold > 0.0 {
        Ok(())
    } else {
        Err(CodecError::InvalidThreshold(threshold))
    }
}

/// Counts the entries with `|r| >= t`, refusing non-finite values. Read-only.
pub(crate) fn count_entries(residual: &[f32], t: f32) -> Result<u64, CodecError> {
    let mut count = 0u64;
    // Branch-free accumulation keeps this loop vectorisable; the index is looked up only on error.
    let mut bad = false;
    for &x in residual {
        let a = x.abs();
        count += u64::from(a >= t);
        bad |= !a.is_finite();
    }
    if bad {
        if let Some((index, &value)) = residual.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(CodecError::NonFinite {
                vector: VectorKind::Residual,
                index,
                value,
            });
        }
    }
    Ok(count)
}

/// Writes the message for a residual known to hold `count` entries with `|r| >= t` (all finite),
/// and subtracts what it sent. `out` must be empty.
pub(crate) fn write_message(
    residual: &mut [f32],
    t: f32,
    count: u64,
    out: &mut Vec<u8>,
) -> EncodeStats {
    let (kind, rice_k) = choose_encoding(residual.len() as u64, count);
    write_kind(residual, None, t, count, kind, rice_k, out)
}

/// [`write_message`] for `residual + update`: adds `update` into the residual in the same pass
/// that encodes it (one pass over both vectors instead of two). `count` is the number of entries
/// with `|r + u| >= t`, all finite; `update` has the residual's length.
pub(crate) fn write_message_adding(
    residual: &mut [f32],
    update: &[f32],
    t: f32,
    count: u64,
    out: &mut Vec<u8>,
) -> EncodeStats {
    debug_assert_eq!(residual.len(), update.len());
    let (kind, rice_k) = choose_encoding(residual.len() as u64, count);
    write_kind(residual, Some(update), t, count, kind, rice_k, out)
}

/// The one pass of the encoder's encode, in place: `sum += update` (`sum` holds the residual);
/// the 64-entry blocks of `sum` holding an entry with `|x| >= t`, as (block, mask of those
/// entries), into `hot` (cleared first), and for each of those blocks the mask of its entries
/// that are negative (sent as `-t`) into `negative`; and those entries sent: `t` taken toward
/// zero from each (`x - t`, or `x + t` when negative) while its block is at hand, so the message
/// is then written from the masks alone ([`write_message_found`]). Returns the number of such
/// entries and the largest `|x|` of the sums (before sending; an upper bound of the new `|r|`),
/// or `None` when a sum is not finite (a non-finite update entry, or an overflow) — `sum` then
/// holds partial sums, so a caller that must refuse cleanly passes a copy of its residual (see
/// `ThresholdEncoder::encode_update`). `sum` and `update` have one length.
///
/// In place because a second residual-sized buffer costs cache and memory traffic where two
/// workers share a machine: two `encoder_speed` processes side by side (AMD EPYC, 2 vCPUs, one
/// build summing into a scratch buffer, the other in place after its read-only check of the
/// update), four runs: the encoder step took 384–435 µs with the scratch buffer, 315–385 µs in
/// place (median of the paired differences −14 %; alone, the two were within noise).
pub(crate) fn add_and_find(
    sum: &mut [f32],
    update: &[f32],
    t: f32,
    hot: &mut Vec<(u32, u64)>,
    negative: &mut Vec<u64>,
) -> Option<(u64, f32)> {
    assert!(sum.len() == update.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked above).
        return unsafe { add_and_find_avx2(sum, update, t, hot, negative) };
    }
    add_and_find_body(sum, update, t, hot, negative)
}

/// [`add_and_find_body`] in AVX2 intrinsics, with the same results bit for bit: per vector of
/// 8 sums, one compare and two `movemask`s give 8 bits of the block's mask and of its signs. The
/// portable loop finds the masks one entry at a time (a shift and an or per entry): at the 1-4 %
/// of entries an adaptive threshold sends early in training, most 64-entry blocks hold one, so
/// that loop ran for nearly every block and cost more than the additions (see
/// `docs/BENCHMARKS.md`, "Gradient sharing's encode and decode").
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_and_find_avx2(
    sum: &mut [f32],
    update: &[f32],
    t: f32,
    hot: &mut Vec<(u32, u64)>,
    negative: &mut Vec<u64>,
) -> Option<(u64, f32)> {
    use std::arch::x86_64::*;
    hot.clear();
    negative.clear();
    let full = sum.len() / 64;
    let (u, s) = (update.as_ptr(), sum.as_mut_ptr());
    let tv = _mm256_set1_ps(t);
    let abs = _mm256_set1_epi32(0x7fff_ffff);
    let mut all_max = _mm256_setzero_si256();
    let mut count = 0u64;
    for b in 0..full {
        let (mut mask, mut neg) = (0u64, 0u64);
        for q in 0..8 {
            let i = b * 64 + q * 8;
            // SAFETY: i + 8 <= full * 64 <= the length of both slices (asserted by the caller).
            let x = _mm256_add_ps(_mm256_loadu_ps(s.add(i)), _mm256_loadu_ps(u.add(i)));
            let bits = _mm256_and_si256(_mm256_castps_si256(x), abs);
            all_max = _mm256_max_epu32(all_max, bits);
            // |x| >= t, false for NaN as in the portable loop
            let ge = _mm256_cmp_ps::<_CMP_GE_OQ>(_mm256_castsi256_ps(bits), tv);
            // `after_sending` in vectors: x - (t with x's sign), i.e. x - t, or x - (-t), which is
            // x + t exactly
            let sign = _mm256_andnot_si256(abs, _mm256_castps_si256(x));
            let sent = _mm256_sub_ps(x, _mm256_or_ps(tv, _mm256_castsi256_ps(sign)));
            _mm256_storeu_ps(s.add(i), _mm256_blendv_ps(x, sent, ge));
            mask |= u64::from(_mm256_movemask_ps(ge) as u8) << (8 * q);
            // sign bits: for an entry of the mask (|x| >= t > 0, not NaN) the same as x < 0
            neg |= u64::from(_mm256_movemask_ps(x) as u8) << (8 * q);
        }
        if mask != 0 {
            count += u64::from(mask.count_ones());
            hot.push((b as u32, mask));
            negative.push(neg & mask);
        }
    }
    let mut lanes = [0u32; 8];
    _mm256_storeu_si256(lanes.as_mut_ptr().cast(), all_max);
    let mut max = lanes.into_iter().max().unwrap_or(0);
    // The last, partial block (fewer than 64 entries) as the portable loop does it.
    let at = full * 64;
    if at < sum.len() {
        let (c, m) = find_in_block(full, &mut sum[at..], &update[at..], t, hot, negative);
        count += c;
        max = max.max(m);
    }
    (max < f32::INFINITY.to_bits()).then(|| (count, f32::from_bits(max)))
}

#[inline(always)]
fn add_and_find_body(
    sum: &mut [f32],
    update: &[f32],
    t: f32,
    hot: &mut Vec<(u32, u64)>,
    negative: &mut Vec<u64>,
) -> Option<(u64, f32)> {
    hot.clear();
    negative.clear();
    // The largest |x| bit pattern seen: a non-finite x has one at or above infinity's.
    let mut all_max = 0u32;
    let mut count = 0u64;
    for (b, (s, u)) in sum.chunks_mut(64).zip(update.chunks(64)).enumerate() {
        let (c, max) = find_in_block(b, s, u, t, hot, negative);
        count += c;
        all_max = all_max.max(max);
    }
    (all_max < f32::INFINITY.to_bits()).then(|| (count, f32::from_bits(all_max)))
}

/// Block `b` (at most 64 entries) of [`add_and_find`]: `s += u`, notes the block in
/// `hot`/`negative` when an entry qualifies and sends those entries, and returns (its qualifying
/// entries, the largest `|x|` bit pattern of its sums).
#[inline(always)]
fn find_in_block(
    b: usize,
    s: &mut [f32],
    u: &[f32],
    t: f32,
    hot: &mut Vec<(u32, u64)>,
    negative: &mut Vec<u64>,
) -> (u64, u32) {
    // Branch-free (vectorises): the sum and the integer max of |x|'s bits (ordered as the values
    // are), which says whether any entry of the block qualifies.
    let mut max = 0u32;
    for (s, &u) in s.iter_mut().zip(u) {
        let x = *s + u;
        *s = x;
        max = max.max(x.to_bits() & 0x7fff_ffff);
    }
    let mut count = 0;
    if max >= t.to_bits() {
        let (mut mask, mut neg) = (0u64, 0u64);
        for (i, &x) in s.iter().enumerate() {
            mask |= u64::from(x.abs() >= t) << i;
            neg |= u64::from(x < 0.0) << i;
        }
        if mask != 0 {
            count = u64::from(mask.count_ones());
            hot.push((b as u32, mask));
            negative.push(neg & mask);
            let mut left = mask;
            while left != 0 {
                let i = left.trailing_zeros() as usize;
                left &= left - 1;
                s[i] = after_sending(s[i], t);
            }
        }
    }
    (count, max)
}

/// The largest `|x|` of `v`, or `None` when an entry is not finite. Read-only (the encoder's
/// check of an update before it touches the residual).
pub(crate) fn finite_max_abs(v: &[f32]) -> Option<f32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked above).
        return unsafe { finite_max_abs_avx2(v) };
    }
    finite_max_abs_body(v)
}

#[inline(always)]
fn finite_max_abs_body(v: &[f32]) -> Option<f32> {
    let max = max_abs_bits(v);
    (max < f32::INFINITY.to_bits()).then(|| f32::from_bits(max))
}

/// [`finite_max_abs_body`] with AVX2 (two vectors per step); the same result.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn finite_max_abs_avx2(v: &[f32]) -> Option<f32> {
    use std::arch::x86_64::*;
    let abs = _mm256_set1_epi32(0x7fff_ffff);
    let (mut a, mut b) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    let whole = v.len() / 16 * 16;
    let p = v.as_ptr();
    let mut i = 0;
    while i < whole {
        // SAFETY: i + 16 <= whole <= v.len().
        a = _mm256_max_epu32(a, _mm256_and_si256(_mm256_loadu_si256(p.add(i).cast()), abs));
        b = _mm256_max_epu32(b, _mm256_and_si256(_mm256_loadu_si256(p.add(i + 8).cast()), abs));
        i += 16;
    }
    let mut lanes = [0u32; 8];
    _mm256_storeu_si256(lanes.as_mut_ptr().cast(), _mm256_max_epu32(a, b));
    let max = lanes.into_iter().max().unwrap_or(0).max(max_abs_bits(&v[whole..]));
    (max < f32::INFINITY.to_bits()).then(|| f32::from_bits(max))
}

/// The message of the entries [`add_and_find`] found and sent (`count` of them, in the blocks of
/// `hot` with the signs of `negative`, out of `param_count`): the bytes [`write_message`] gives
/// for the same vector, written from the masks alone. `out` must be empty.
pub(crate) fn write_message_found(
    param_count: usize,
    t: f32,
    count: u64,
    hot: &[(u32, u64)],
    negative: &[u64],
    out: &mut Vec<u8>,
) -> EncodeStats {
    let (kind, rice_k) = choose_encoding(param_count as u64, count);
    let (header, max_payload) = begin_message(param_count as u64, count, t, kind, rice_k, out);
    match kind {
        Encoding::Rice => {
            if count > 0 {
                let mut bits = BitWriter::new(out);
                let mut next = 0usize;
                for (&(b, mut mask), &neg) in hot.iter().zip(negative) {
                    let base = b as usize * 64;
                    while mask != 0 {
                        let i = mask.trailing_zeros();
                        mask &= mask - 1;
                        let j = base + i as usize;
                        bits.entry((j - next) as u64, rice_k, neg >> i & 1 == 1);
                        next = j + 1;
                    }
                }
                bits.finish();
            }
        }
        Encoding::Bitmap => {
            // (rare: dense messages) 16 two-bit codes per word, 01 = +t, 10 = -t, 00 = nothing
            let words = bitmap_words(param_count as u64) as usize;
            let mut hot = hot.iter().zip(negative).peekable();
            for w in 0..words {
                let block = (w / 4) as u32;
                let (mask, neg) = match hot.peek() {
                    Some(&(&(b, mask), &neg)) if b == block => (mask, neg),
                    _ => (0, 0),
                };
                let shift = 16 * (w % 4);
                let (m, n) = ((mask >> shift) as u16, (neg >> shift) as u16);
                let word = spread_even(m & !n) | spread_even(m & n) << 1;
                out.extend_from_slice(&word.to_le_bytes());
                if w % 4 == 3 && hot.peek().is_some_and(|&(&(b, _), _)| b == block) {
                    hot.next();
                }
            }
        }
        Encoding::Sparse => unreachable!("choose_encoding never picks the version 1 sparse kind"),
    }
    debug_assert!(out.len() as u64 <= header.encoded_len() as u64 + max_payload);
    message_stats(&header, out.len())
}

/// The 16 bits of `x` moved to the even bit positions of a word (bit i to bit 2i).
#[inline]
fn spread_even(x: u16) -> u32 {
    let mut v = u32::from(x);
    v = (v | v << 8) & 0x00FF_00FF;
    v = (v | v << 4) & 0x0F0F_0F0F;
    v = (v | v << 2) & 0x3333_3333;
    (v | v << 1) & 0x5555_5555
}

/// Writes the header of a `kind` message of `count` entries and reserves room for its largest
/// payload; returns the header and that payload bound.
fn begin_message(param_count: u64, count: u64, t: f32, kind: Encoding, rice_k: u8, out: &mut Vec<u8>) -> (Header, u64) {
    let header = Header {
        kind,
        param_count,
        entry_count: count,
        threshold: t,
        rice_k,
    };
    let (_, max_payload) = header.payload_len_range();
    out.reserve(header.encoded_len() + max_payload as usize);
    header.write_to(out);
    (header, max_payload)
}

/// Sends entry `j` (value `*x`, `|x| >= t`) in a Rice message: its gap from `*next` and its sign,
/// and subtracts what it sends (`t` toward zero).
#[inline(always)]
fn send_entry(bits: &mut BitWriter, next: &mut usize, j: usize, x: &mut f32, t: f32, rice_k: u8) {
    bits.entry((j - *next) as u64, rice_k, *x < 0.0);
    *next = j + 1;
    *x = after_sending(*x, t);
}

/// What is left of an entry `x` (`|x| >= t`) once it is sent: `t` taken toward zero.
#[inline(always)]
fn after_sending(x: f32, t: f32) -> f32 {
    if x < 0.0 {
        x + t
    } else {
        x - t
    }
}

/// The stats of a message written with `header`, `bytes` long in all.
fn message_stats(header: &Header, bytes: usize) -> EncodeStats {
    let (count, param_count) = (header.entry_count, header.param_count);
    EncodeStats {
        encoding: header.kind,
        entries: count,
        bytes,
        sparsity: if param_count == 0 {
            0.0
        } else {
            count as f64 / param_count as f64
        },
        threshold: header.threshold,
        param_count,
    }
}

/// [`encode`] into a given kind instead of the chosen one: `Encoding::Rice` (with the Rice
/// parameter [`crate::rice::parameter`] picks) or `Encoding::Bitmap`. For tests and measurements
/// of each path; the version 1 sparse kind is not written any more and is refused.
pub fn encode_as(
    residual: &mut [f32],
    threshold: f32,
    kind: Encoding,
    out: &mut Vec<u8>,
) -> Result<EncodeStats, CodecError> {
    out.clear();
    if kind == Encoding::Sparse {
        return Err(CodecError::NotWritable(kind));
    }
    check_threshold(threshold)?;
    let count = count_entries(residual, threshold)?;
    let k = match kind {
        Encoding::Rice => rice::parameter(residual.len() as u64, count),
        _ => 0,
    };
    Ok(write_kind(residual, None, threshold, count, kind, k, out))
}

/// Writes the message of `residual` (plus `update`, added entry by entry as the pass goes, when
/// given) and subtracts what it sends.
fn write_kind(
    residual: &mut [f32],
    update: Option<&[f32]>,
    t: f32,
    count: u64,
    kind: Encoding,
    rice_k: u8,
    out: &mut Vec<u8>,
) -> EncodeStats {
    let (header, max_payload) = begin_message(residual.len() as u64, count, t, kind, rice_k, out);
    match header.kind {
        // count == 0 needs no pass at all: nothing qualifies and the residual stays as it is.
        Encoding::Rice if count > 0 => {
            let mut bits = BitWriter::new(out);
            // The next position a gap counts from.
            let mut next = 0usize;
            // Blocks of 64: a branch-free (vectorisable) pass builds the mask of qualifying
            // entries, and only its set bits are visited; at sparsity 1e-3 most masks are 0.
            let t_bits = t.to_bits();
            for (b, block) in residual.chunks_mut(64).enumerate() {
                if let Some(u) = update {
                    add_block(block, &u[b * 64..b * 64 + block.len()]);
                }
                // Most blocks hold no qualifying entry: an integer max over |x|'s bits (a
                // reduction that vectorises, unlike the mask below) skips them.
                if max_abs_bits(block) < t_bits {
                    continue;
                }
                let mut mask = 0u64;
                for (i, &x) in block.iter().enumerate() {
                    mask |= u64::from(x.abs() >= t) << i;
                }
                while mask != 0 {
                    let i = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    send_entry(&mut bits, &mut next, b * 64 + i, &mut block[i], t, rice_k);
                }
            }
            bits.finish();
        }
        // Nothing qualifies: the residual only takes the update.
        Encoding::Rice => {
            if let Some(u) = update {
                add_block(residual, u);
            }
        }
        Encoding::Bitmap => {
            // (rare: dense messages) adding first keeps the word loop as tight as it was
            if let Some(u) = update {
                add_block(residual, u);
            }
            let mut chunks = residual.chunks_exact_mut(16);
            for chunk in &mut chunks {
                out.extend_from_slice(&bitmap_word(chunk, t).to_le_bytes());
            }
            let rest = chunks.into_remainder();
            if !rest.is_empty() {
                out.extend_from_slice(&bitmap_word(rest, t).to_le_bytes());
            }
        }
        Encoding::Sparse => unreachable!("choose_encoding never picks the version 1 sparse kind"),
    }
    debug_assert!(out.len() as u64 <= header.encoded_len() as u64 + max_payload);
    message_stats(&header, out.len())
}

/// The largest `|x|` of finite floats, as its bits: for non-negative floats the order of the bit
/// patterns (as `u32`) is the order of the values, and an integer max reduction vectorises. An
/// infinity or NaN gives a pattern at or above infinity's ([`finite_max_abs`] relies on it).
#[inline]
fn max_abs_bits(block: &[f32]) -> u32 {
    block
        .iter()
        .fold(0u32, |m, x| m.max(x.to_bits() & 0x7fff_ffff))
}

/// `r += u`, entry by entry (the same f32 sums as a separate pass would give).
#[inline]
fn add_block(r: &mut [f32], u: &[f32]) {
    for (r, &u) in r.iter_mut().zip(u) {
        *r += u;
    }
}

/// Codes of up to 16 residual entries, subtracting what they send. Branch-free: in a bitmap many
/// entries qualify with random signs, which defeats branch prediction.
#[inline]
fn bitmap_word(chunk: &mut [f32], t: f32) -> u32 {
    let mut word = 0u32;
    for (i, r) in chunk.iter_mut().enumerate() {
        let x = *r;
        let plus = x >= t;
        let minus = x <= -t;
        word |= (u32::from(plus) | (u32::from(minus) << 1)) << (2 * i);
        // x - 0.0 == x for every finite x (including -0.0), so unsent entries keep their bits.
        let sent = if plus {
            t
        } else if minus {
            -t
        } else {
            0.0
        };
        *r = x - sent;
    }
    word
}

fn u16_at(msg: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([msg[at], msg[at + 1]])
}

fn u32_at(msg: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([msg[at], msg[at + 1], msg[at + 2], msg[at + 3]])
}

fn u64_at(msg: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&msg[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Parses and validates a header (version 3, or the magic and version 1 or 2; kind, Rice
/// parameter (the flags byte of version 1), reserved word, threshold finite > 0, entry_count <=
/// param_count, and the message length against the payload the header allows: exact for bitmap
/// and sparse, within the bounds of [`Header::payload_len_range`] for Rice).
pub fn read_header(msg: &[u8]) -> Result<Header, CodecError> {
    parse_header(msg).map(|(h, _)| h)
}

/// [`read_header`] and the header's length in bytes (where the payload starts).
pub fn parse_header(msg: &[u8]) -> Result<(Header, usize), CodecError> {
    let truncated = |needed: usize| CodecError::Truncated {
        len: msg.len(),
        needed: needed as u64,
        header_read: false,
        exact: true,
    };
    let (version, kind_code, rice_k, param_count, entry_count, threshold, header_len) =
        match msg.first() {
            None => return Err(truncated(MIN_HEADER_LEN)),
            Some(&b) if b == VERSION as u8 => {
                if msg.len() < 2 {
                    return Err(truncated(MIN_HEADER_LEN));
                }
                let mut pos = 2;
                let count = |field: &'static str, pos: &mut usize| {
                    varint::get(msg, pos).map_err(|e| match e {
                        varint::VarintError::Truncated => truncated(msg.len() + 1),
                        varint::VarintError::Malformed => CodecError::BadVarint(field),
                    })
                };
                let param_count = count("param_count", &mut pos)?;
                let entry_count = count("entry_count", &mut pos)?;
                if msg.len() < pos + 4 {
                    return Err(truncated(pos + 4));
                }
                let threshold = f32::from_bits(u32_at(msg, pos));
                (3, msg[1] >> 6, msg[1] & 0x3f, param_count, entry_count, threshold, pos + 4)
            }
            Some(&b'F') => {
                if msg.len() < HEADER_LEN {
                    return Err(truncated(HEADER_LEN));
                }
                let magic = [msg[0], msg[1], msg[2], msg[3]];
                if magic != MAGIC {
                    return Err(CodecError::BadMagic(magic));
                }
                // The version comes before anything else so that a future layout is reported
                // as such.
                let version = u16_at(msg, 4);
                if !(MIN_READ_VERSION..=2).contains(&version) {
                    return Err(CodecError::UnsupportedVersion(version));
                }
                let reserved = u32_at(msg, 28);
                if reserved != 0 {
                    return Err(CodecError::NonZeroReserved(reserved));
                }
                let threshold = f32::from_bits(u32_at(msg, 24));
                (version, msg[6], msg[7], u64_at(msg, 8), u64_at(msg, 16), threshold, HEADER_LEN)
            }
            Some(&b) => return Err(CodecError::UnknownFormat(b)),
        };
    let kind = Encoding::from_code(kind_code, version)?;
    match kind {
        // In version 1 this byte was a reserved flags byte.
        _ if version == 1 && rice_k != 0 => return Err(CodecError::NonZeroFlags(rice_k)),
        Encoding::Rice if rice_k > MAX_RICE_PARAMETER => {
            return Err(CodecError::BadRiceParameter { k: rice_k, kind })
        }
        Encoding::Sparse | Encoding::Bitmap if rice_k != 0 => {
            return Err(CodecError::BadRiceParameter { k: rice_k, kind })
        }
        _ => {}
    }
    if !(threshold.is_finite() && threshold > 0.0) {
        return Err(CodecError::BadHeaderThreshold(threshold));
    }
    if entry_count > param_count {
        return Err(CodecError::EntryCountTooLarge {
            entry_count,
            param_count,
        });
    }
    if kind == Encoding::Rice && entry_count == 0 && rice_k != 0 {
        return Err(CodecError::BadRiceParameter { k: rice_k, kind });
    }
    let header = Header {
        kind,
        param_count,
        entry_count,
        threshold,
        rice_k,
    };
    let (min, max) = header.payload_len_range();
    let exact = kind != Encoding::Rice;
    let payload = (msg.len() - header_len) as u64;
    if payload < min {
        return Err(CodecError::Truncated {
            len: msg.len(),
            needed: min.saturating_add(header_len as u64),
            header_read: true,
            exact,
        });
    }
    if payload > max {
        return Err(CodecError::TrailingBytes {
            len: msg.len(),
            expected: max + header_len as u64,
            exact,
        });
    }
    Ok((header, header_len))
}

thread_local! {
    /// The entries of the Rice message being decoded, noted by its one validating walk and then
    /// applied (`position << 1 | negative`). Kept per thread so a decode allocates only when a
    /// thread meets a longer message than before; a message of `n` entries has at least `2n`
    /// payload bits, so this holds at most 32 bytes per byte of the longest message decoded.
    static RICE_NOTES: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `target[j] += scale * decoded[j]`.
///
/// Validates everything first (header, `param_count == target.len()`, Rice gaps within
/// `param_count` with complete entries, bounded unary runs and zero padding, sparse indices in
/// range and strictly increasing, no `11` bitmap codes, no padding bits, bitmap entry count, exact
/// payload length, `scale * threshold` finite), so a bad message never half-applies: on error
/// `target` is unchanged. Entries the message does not mention keep their value (a `-0.0` among
/// them may become `+0.0`, as adding a decoded zero would).
pub fn decode_add(msg: &[u8], scale: f32, target: &mut [f32]) -> Result<Header, CodecError> {
    let (header, header_len) = parse_header(msg)?;
    if header.param_count != target.len() as u64 {
        return Err(CodecError::ParamCountMismatch {
            message: header.param_count,
            target: target.len(),
        });
    }
    let value = scale * header.threshold;
    if !value.is_finite() {
        return Err(CodecError::InvalidScale {
            scale,
            threshold: header.threshold,
        });
    }
    let payload = &msg[header_len..];
    match header.kind {
        Encoding::Rice => {
            let (p, n, k) = (header.param_count, header.entry_count, header.rice_k);
            let neg = -value;
            // One validating walk noting the entries, then the adds from the notes: walking
            // twice (validate, then apply) cost twice the bit decoding, most of a decode.
            RICE_NOTES.with_borrow_mut(|noted| {
                noted.clear();
                rice::walk(payload, p, n, k, |position, negative| {
                    noted.push(position << 1 | u64::from(negative));
                })?;
                for &e in noted.iter() {
                    target[(e >> 1) as usize] += if e & 1 == 1 { neg } else { value };
                }
                Ok::<(), CodecError>(())
            })?;
        }
        Encoding::Sparse => {
            validate_sparse(payload, header.param_count)?;
            for chunk in payload.chunks_exact(4) {
                let index = i32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                let position = index.unsigned_abs() as usize - 1;
                if index > 0 {
                    target[position] += value;
                } else {
                    target[position] -= value;
                }
            }
        }
        Encoding::Bitmap => {
            validate_bitmap(payload, header.param_count, header.entry_count)?;
            // Indexed by a validated 2-bit code (11 cannot occur).
            let by_code = [0.0, value, -value, 0.0];
            for (w, chunk) in payload.chunks_exact(4).enumerate() {
                let word = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                if word == 0 {
                    continue;
                }
                let base = w * 16;
                if word.count_ones() >= 4 && base + 16 <= target.len() {
                    // Dense word: one branch-free pass over its 16 parameters beats walking the
                    // set bits with unpredictable branches. (`x + 0.0` leaves every x but -0.0.)
                    for (i, x) in target[base..base + 16].iter_mut().enumerate() {
                        *x += by_code[((word >> (2 * i)) & 3) as usize];
                    }
                    continue;
                }
                let mut plus = word & LOW_BITS;
                while plus != 0 {
                    target[base + (plus.trailing_zeros() / 2) as usize] += value;
                    plus &= plus - 1;
                }
                let mut minus = (word >> 1) & LOW_BITS;
                while minus != 0 {
                    target[base + (minus.trailing_zeros() / 2) as usize] -= value;
                    minus &= minus - 1;
                }
            }
        }
    }
    Ok(header)
}

fn validate_sparse(payload: &[u8], param_count: u64) -> Result<(), CodecError> {
    let mut previous: Option<i32> = None;
    for (entry, chunk) in payload.chunks_exact(4).enumerate() {
        let index = i32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let magnitude = u64::from(index.unsigned_abs());
        // i32::MIN has no positive counterpart, so it is not a valid index.
        if index == 0 || index == i32::MIN || magnitude > param_count {
            return Err(CodecError::IndexOutOfRange {
                entry: entry as u64,
                index,
                param_count,
            });
        }
        if let Some(p) = previous {
            if magnitude <= u64::from(p.unsigned_abs()) {
                return Err(CodecError::NotIncreasing {
                    entry: entry as u64,
                    previous: p,
                    index,
                });
            }
        }
        previous = Some(index);
    }
    Ok(())
}

fn validate_bitmap(payload: &[u8], param_count: u64, entry_count: u64) -> Result<(), CodecError> {
    let words = payload.len() / 4;
    let mut actual = 0u64;
    for (w, chunk) in payload.chunks_exact(4).enumerate() {
        let word = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        if w + 1 == words {
            // Parameters in the last word: 1..=16; the bits of the rest must be 0.
            let used = param_count - 16 * w as u64;
            if used < 16 && word >> (2 * used) != 0 {
                return Err(CodecError::PaddingBits { word: w as u64 });
            }
        }
        let invalid = word & (word >> 1) & LOW_BITS;
        if invalid != 0 {
            return Err(CodecError::InvalidCode {
                parameter: 16 * w as u64 + u64::from(invalid.trailing_zeros() / 2),
            });
        }
        actual += u64::from(((word | (word >> 1)) & LOW_BITS).count_ones());
    }
    if actual != entry_count {
        return Err(CodecError::EntryCountMismatch {
            header: entry_count,
            actual,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_bytes(
        version: u16,
        kind: u8,
        k: u8,
        param_count: u64,
        entry_count: u64,
        threshold: f32,
    ) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(b"FRDU");
        m.extend_from_slice(&version.to_le_bytes());
        m.push(kind);
        m.push(k);
        m.extend_from_slice(&param_count.to_le_bytes());
        m.extend_from_slice(&entry_count.to_le_bytes());
        m.extend_from_slice(&threshold.to_le_bytes());
        m.extend_from_slice(&0u32.to_le_bytes());
        m
    }

    /// A version 1 sparse message (the kind this build still reads but no longer writes).
    fn sparse_msg(param_count: u64, t: f32, indices: &[i32]) -> Vec<u8> {
        let mut m = header_bytes(1, 0, 0, param_count, indices.len() as u64, t);
        for i in indices {
            m.extend_from_slice(&i.to_le_bytes());
        }
        m
    }

    fn bitmap_msg(version: u16, param_count: u64, entries: u64, t: f32, words: &[u32]) -> Vec<u8> {
        let mut m = header_bytes(version, 1, 0, param_count, entries, t);
        for w in words {
            m.extend_from_slice(&w.to_le_bytes());
        }
        m
    }

    fn rice_msg(param_count: u64, entries: u64, k: u8, t: f32, payload: &[u8]) -> Vec<u8> {
        let mut m = header_bytes(2, 2, k, param_count, entries, t);
        m.extend_from_slice(payload);
        m
    }

    #[test]
    fn rice_bytes_are_exactly_as_documented() {
        // 40 parameters, +t at position 1 and -t at position 2. k = 3 minimises the bound
        // 2 (k + 2) + (38 >> k) (14 bits at k = 3 and 4; the smaller k wins).
        let mut r = vec![0.0f32; 40];
        r[1] = 0.5;
        r[2] = -0.25;
        r[3] = 0.1;
        let mut out = Vec::new();
        let stats = encode(&mut r, 0.25, &mut out).unwrap();
        // Version 3, kind 2 << 6 | k 3, param_count 40, entry_count 2, threshold 0.25.
        assert_eq!(&out[..8], &[3, 0x83, 40, 2, 0, 0, 0x80, 0x3e]);
        // Entry 0: gap 1 = unary "1", remainder 001 as 1,0,0, sign 0 -> bits 1 1 0 0 0.
        // Entry 1: gap 0 = unary "1", remainder 0,0,0, sign 1        -> bits 1 0 0 0 1.
        // LSB first: 1100 0100 | 01 -> 0x23, 0x02.
        assert_eq!(&out[8..], &[0x23, 0x02]);
        let mut from_v2 = vec![0.0f32; 40];
        let mut from_v3 = vec![0.0f32; 40];
        decode_add(&rice_msg(40, 2, 3, 0.25, &[0x23, 0x02]), 1.0, &mut from_v2).unwrap();
        decode_add(&out, 1.0, &mut from_v3).unwrap();
        assert_eq!(from_v2, from_v3, "the version 2 form decodes to the same update");
        assert_eq!(stats.encoding, Encoding::Rice);
        assert_eq!(stats.entries, 2);
        assert_eq!(stats.bytes, 10);
        assert_eq!(stats.sparsity, 0.05);
        assert_eq!(stats.threshold, 0.25);
        // 0.5 - 0.25 and -0.25 + 0.25 are exact.
        let mut expect = vec![0.0f32; 40];
        expect[1] = 0.25;
        expect[3] = 0.1;
        assert_eq!(r, expect);
        let mut decoded = vec![0.0f32; 40];
        let h = decode_add(&out, 1.0, &mut decoded).unwrap();
        assert_eq!(
            h,
            Header {
                kind: Encoding::Rice,
                param_count: 40,
                entry_count: 2,
                threshold: 0.25,
                rice_k: 3
            }
        );
        let mut want = vec![0.0f32; 40];
        want[1] = 0.25;
        want[2] = -0.25;
        assert_eq!(decoded, want);
    }

    #[test]
    fn bitmap_bytes_are_exactly_as_documented() {
        // Writers no longer produce bitmaps (see choose_encoding), so this is a hand-made one:
        // 17 parameters, 2 words; +t at 0, -t at 15, +t at 16.
        let msg = bitmap_msg(2, 17, 3, 1.0, &[0b01 | (0b10 << 30), 0b01]);
        let mut target = vec![0.0f32; 17];
        let h = decode_add(&msg, 1.0, &mut target).unwrap();
        assert_eq!((h.kind, h.entry_count, h.rice_k), (Encoding::Bitmap, 3, 0));
        let mut expect = vec![0.0f32; 17];
        expect[0] = 1.0;
        expect[15] = -1.0;
        expect[16] = 1.0;
        assert_eq!(target, expect);
    }

    #[test]
    fn empty_message_is_a_9_byte_rice_message() {
        let mut r = vec![0.1f32; 100];
        let mut out = vec![9u8; 7];
        let stats = encode(&mut r, 0.5, &mut out).unwrap();
        assert_eq!(out, [3, 0x80, 100, 0, 0, 0, 0, 0x3f]);
        assert_eq!(stats.encoding, Encoding::Rice);
        assert_eq!(stats.bytes, 8);
        // The version 2 form of the same message still reads.
        let mut target = vec![0.0f32; 100];
        assert_eq!(
            decode_add(&header_bytes(2, 2, 0, 100, 0, 0.5), 1.0, &mut target).unwrap(),
            read_header(&out).unwrap()
        );
        assert_eq!(stats.sparsity, 0.0);
        assert_eq!(r, vec![0.1f32; 100]);
        // A zero-length vector too.
        let stats = encode(&mut [], 0.5, &mut out).unwrap();
        assert_eq!((stats.bytes, stats.sparsity), (8, 0.0));
        let mut target: [f32; 0] = [];
        assert_eq!(decode_add(&out, 1.0, &mut target).unwrap().param_count, 0);
    }

    #[test]
    fn rice_is_chosen_unless_it_saves_less_than_a_quarter() {
        assert_eq!(choose_encoding(0, 0), (Encoding::Rice, 0));
        assert_eq!(choose_encoding(u64::MAX, 0), (Encoding::Rice, 0));
        assert_eq!(choose_encoding(1, 1), (Encoding::Rice, 0));
        assert_eq!(choose_encoding(443_610, 443), (Encoding::Rice, 9));
        assert_eq!(choose_encoding(443_610, 4_436), (Encoding::Rice, 6));
        // Every parameter sent: Rice's bound is 2 bits per parameter, as large as the bitmap,
        // so the bitmap (several times faster to code) is written. Rice must save a quarter.
        assert_eq!(choose_encoding(16, 16), (Encoding::Bitmap, 0));
        assert_eq!(choose_encoding(1600, 1600), (Encoding::Bitmap, 0));
        // k = 0 bound P + n bits against 2P: the switch is at about n = P / 2.
        assert_eq!(choose_encoding(1600, 800), (Encoding::Rice, 0));
        assert_eq!(choose_encoding(1600, 801), (Encoding::Bitmap, 0));
        for p in 1u64..300 {
            for n in 0..=p {
                let (kind, k) = choose_encoding(p, n);
                let best_k = (0..=63u8).min_by_key(|&k| rice::max_bits(p, n, k)).unwrap();
                let rice_bytes = rice::max_bits(p, n, best_k).div_ceil(8);
                let bitmap_bytes = 4 * p.div_ceil(16);
                if n == 0 || 4 * rice_bytes <= 3 * bitmap_bytes {
                    assert_eq!((kind, k), (Encoding::Rice, if n == 0 { 0 } else { best_k }));
                } else {
                    assert_eq!((kind, k), (Encoding::Bitmap, 0), "p {p} n {n}");
                }
            }
        }
        // A huge vector with one entry: Rice with a large k, far smaller than the bitmap.
        let (kind, k) = choose_encoding(1 << 40, 1);
        assert_eq!(kind, Encoding::Rice);
        assert!(k >= 38, "{k}");
    }

    #[test]
    fn version_1_messages_are_still_read() {
        let msg = sparse_msg(5, 0.5, &[1, -4, 5]);
        let mut target = vec![1.0f32; 5];
        let h = decode_add(&msg, -2.0, &mut target).unwrap();
        assert_eq!(
            h,
            Header {
                kind: Encoding::Sparse,
                param_count: 5,
                entry_count: 3,
                threshold: 0.5,
                rice_k: 0
            }
        );
        assert_eq!(target, vec![0.0, 1.0, 1.0, 2.0, 0.0]);
        let msg = bitmap_msg(1, 18, 3, 0.25, &[0b10 << 2, 0b01 | (0b10 << 2)]);
        let mut target = vec![0.0f32; 18];
        decode_add(&msg, 1.0, &mut target).unwrap();
        let mut expect = vec![0.0f32; 18];
        expect[1] = -0.25;
        expect[16] = 0.25;
        expect[17] = -0.25;
        assert_eq!(target, expect);
        // The version 1 empty message (sparse, no entries) too.
        let mut target = vec![2.0f32; 9];
        decode_add(&header_bytes(1, 0, 0, 9, 0, 1.0), 1.0, &mut target).unwrap();
        assert_eq!(target, vec![2.0f32; 9]);
    }

    fn assert_refused(msg: &[u8], target_len: usize, message: &str) {
        let mut target = vec![3.0f32; target_len];
        let e = decode_add(msg, 1.0, &mut target).unwrap_err();
        assert_eq!(e.to_string(), message);
        assert!(
            target.iter().all(|&x| x == 3.0),
            "target modified by a refused message"
        );
    }

    #[test]
    fn malformed_headers_are_refused_with_named_problems() {
        let good = sparse_msg(12, 0.5, &[1, 2, 3, 4, 5, 6]);
        assert_refused(
            &good[..10],
            12,
            "update message: truncated: 10 bytes, the header needs 32",
        );
        assert_refused(
            &good[..40],
            12,
            "update message: truncated: 40 bytes, header says 56",
        );
        let mut long = good.clone();
        long.extend_from_slice(&[0, 0]);
        assert_refused(
            &long,
            12,
            "update message: 58 bytes, header says 56 (2 unexpected trailing bytes)",
        );
        let mut m = good.clone();
        m[1] = b'X';
        assert_refused(
            &m,
            12,
            "update message: bad magic [46, 58, 44, 55] (expected \"FRDU\"); not a ferrodl update",
        );
        for v in [0u8, 3] {
            let mut m = good.clone();
            m[4] = v;
            assert_refused(
                &m,
                12,
                &format!(
                    "update message: unsupported version {v} (this build reads 1 and 2 after \
                     the \"FRDU\" magic, and 3)"
                ),
            );
        }
        // Version 3 (compact) headers.
        let mut v3 = Vec::new();
        encode(&mut [0.0, 2.0, 0.0], 1.0, &mut v3).unwrap();
        assert_eq!(&v3[..4], &[3, 0x80, 3, 1], "Rice, k 0");
        assert_refused(&[7, 0x80, 3, 1], 3, "update message: first byte 0x07 is neither version 3 \
            (0x03) nor the \"FRDU\" magic of versions 1 and 2; not a ferrodl update");
        for cut in [0, 1, 2, 3, 5, 7] {
            let e = read_header(&v3[..cut]).unwrap_err();
            assert!(matches!(e, CodecError::Truncated { header_read: false, .. }), "{cut}: {e}");
        }
        let mut m = vec![3, 0x80, 0x83, 0x00, 1];
        m.extend_from_slice(&1.0f32.to_le_bytes());
        assert_refused(
            &m,
            3,
            "update message: param_count is not a minimal LEB128 varint of at most 10 bytes",
        );
        let mut m = vec![3, 0x80, 3];
        m.extend_from_slice(&[0xff; 10]);
        assert_refused(
            &m,
            3,
            "update message: entry_count is not a minimal LEB128 varint of at most 10 bytes",
        );
        let mut m = v3.clone();
        m[1] = 0x01;
        assert_refused(
            &m,
            3,
            "update message: unknown encoding kind 0 for version 3 (1 = bitmap, 2 = rice)",
        );
        m[1] = 0xc0;
        assert_refused(
            &m,
            3,
            "update message: unknown encoding kind 3 for version 3 (1 = bitmap, 2 = rice)",
        );
        let mut m = v3.clone();
        m[3] = 4;
        assert_refused(&m, 3, "update message: entry_count 4 exceeds param_count 3");
        let mut m = v3.clone();
        m.push(0);
        assert!(matches!(read_header(&m).unwrap_err(), CodecError::TrailingBytes { .. }));
        let mut m = good.clone();
        m[6] = 2;
        assert_refused(
            &m,
            12,
            "update message: unknown encoding kind 2 for version 1 (0 = sparse, 1 = bitmap)",
        );
        assert_refused(
            &header_bytes(2, 3, 0, 12, 0, 0.5),
            12,
            "update message: unknown encoding kind 3 for version 2 (0 = sparse, 1 = bitmap, 2 = rice)",
        );
        let mut m = good.clone();
        m[7] = 1;
        assert_refused(
            &m,
            12,
            "update message: flags byte is 0x01; it is reserved and must be 0",
        );
        let mut m = good.clone();
        m[4] = 2;
        m[7] = 1;
        assert_refused(
            &m,
            12,
            "update message: Rice parameter byte is 1 in a Sparse message; it must be 0",
        );
        let mut m = good.clone();
        m[31] = 1;
        assert_refused(
            &m,
            12,
            "update message: reserved word is 0x01000000; it must be 0",
        );
        for t in [0.0f32, -0.5, f32::NAN, f32::NEG_INFINITY] {
            let mut m = good.clone();
            m[24..28].copy_from_slice(&t.to_le_bytes());
            let e = read_header(&m).unwrap_err();
            assert!(matches!(e, CodecError::BadHeaderThreshold(_)), "{e}");
        }
        assert_refused(
            &good,
            10,
            "update message: param_count 12 does not match the target's 10 parameters",
        );
        let m = header_bytes(2, 2, 0, 2, 3, 1.0);
        assert_refused(&m, 2, "update message: entry_count 3 exceeds param_count 2");
        // Hostile counts cannot overflow the length arithmetic.
        for kind in [0u8, 1, 2] {
            let m = header_bytes(2, kind, 0, u64::MAX, u64::MAX, 1.0);
            assert!(matches!(
                read_header(&m).unwrap_err(),
                CodecError::Truncated { .. }
            ));
        }
        let m = header_bytes(2, 2, 63, u64::MAX, u64::MAX / 2, 1.0);
        assert!(matches!(
            read_header(&m).unwrap_err(),
            CodecError::Truncated { .. }
        ));
    }

    #[test]
    fn malformed_rice_payloads_are_refused_before_applying() {
        // The documented message: 40 parameters, k 3, [0x23, 0x02].
        let good = rice_msg(40, 2, 3, 0.25, &[0x23, 0x02]);
        let mut target = vec![0.0f32; 40];
        decode_add(&good, 1.0, &mut target).unwrap();
        assert_refused(
            &rice_msg(40, 2, 64, 0.25, &[0x23, 0x02]),
            40,
            "update message: bad Rice parameter 64 (0..=63, and 0 when there are no entries)",
        );
        assert_refused(
            &rice_msg(40, 0, 3, 0.25, &[]),
            40,
            "update message: bad Rice parameter 3 (0..=63, and 0 when there are no entries)",
        );
        // Shorter than n (k + 2) bits.
        assert_refused(
            &rice_msg(40, 2, 3, 0.25, &[0x23]),
            40,
            "update message: truncated: 33 bytes, header says at least 34",
        );
        // Longer than the bound n (k + 2) + (P - n) >> k = 14 bits.
        assert_refused(
            &rice_msg(40, 2, 3, 0.25, &[0x23, 0x02, 0]),
            40,
            "update message: 35 bytes, header says at most 34 (1 unexpected trailing bytes)",
        );
        // Three entries at k 3 need at least 15 bits (2 bytes), but two gaps of 8 (quotient 1:
        // bits 0 1, remainder 000, sign 0) take 12 bits, and the third entry's remainder and sign
        // run past the 16th bit: bits 1, 7 and 12 set.
        assert_refused(
            &rice_msg(40, 3, 3, 0.25, &[0x82, 0x10]),
            40,
            "update message: Rice payload ends inside entry 2 of 3",
        );
        // Padding bits set after the last entry (bit 10 of the payload).
        assert_refused(
            &rice_msg(40, 2, 3, 0.25, &[0x23, 0x06]),
            40,
            "update message: non-zero padding bits after the last Rice entry",
        );
        // One entry with k 0 whose unary run never ends within 10 parameters: 16 zero bits.
        // Bound: 1 * 2 + 9 = 11 bits -> at most 2 bytes.
        assert_refused(
            &rice_msg(10, 1, 0, 1.0, &[0, 0]),
            10,
            "update message: Rice entry 0 has a unary quotient of at least 10, more than the 9 the remaining positions allow",
        );
        // k 2 over 10 positions: quotient 2 is allowed (room 9 >> 2 = 2), remainder 3: gap 11.
        // bits: 0 0 1 | 1 1 | 0 -> 0b0001_1100.
        assert_refused(
            &rice_msg(10, 1, 2, 1.0, &[0b0001_1100]),
            10,
            "update message: Rice entry 0 lands on position 11, outside 0..10",
        );
        // Two entries, the first at the last position: the second has nowhere to go.
        // k 0, P 4: entry 0 gap 3 = 0001 then sign 0; entry 1 gap 0 = 1, sign 0.
        // bits: 0 0 0 1 0 | 1 0 -> 0b0010_1000.
        assert_refused(
            &rice_msg(4, 2, 0, 1.0, &[0b0010_1000]),
            4,
            "update message: Rice entry 1 lands on position 4, outside 0..4",
        );
        // The entries end inside byte 0 but a whole zero byte follows (within the bound).
        // P 100, 1 entry, k 0: bound 2 + 99 bits = 13 bytes. Entry: gap 0, sign 0: bits 1 0.
        assert_refused(
            &rice_msg(100, 1, 0, 1.0, &[0b01, 0]),
            100,
            "update message: the Rice entries end after 1 payload bytes but the payload has 2",
        );
        let mut target = vec![0.0f32; 100];
        decode_add(&rice_msg(100, 1, 0, 1.0, &[0b01]), 1.0, &mut target).unwrap();
        assert_eq!(target[0], 1.0);
    }

    #[test]
    fn malformed_sparse_payloads_are_refused_before_applying() {
        assert_refused(
            &sparse_msg(4, 1.0, &[1, 0]),
            4,
            "update message: sparse entry 1 has index 0, outside ±1..=4",
        );
        assert_refused(
            &sparse_msg(4, 1.0, &[1, -5]),
            4,
            "update message: sparse entry 1 has index -5, outside ±1..=4",
        );
        assert_refused(
            &sparse_msg(4, 1.0, &[i32::MIN]),
            4,
            "update message: sparse entry 0 has index -2147483648, outside ±1..=4",
        );
        assert_refused(
            &sparse_msg(4, 1.0, &[2, -2]),
            4,
            "update message: sparse entry 1 has index -2 after 2; index magnitudes must be strictly increasing",
        );
        assert_refused(
            &sparse_msg(4, 1.0, &[1, 3, 2]),
            4,
            "update message: sparse entry 2 has index 2 after 3; index magnitudes must be strictly increasing",
        );
    }

    #[test]
    fn malformed_bitmap_payloads_are_refused_before_applying() {
        assert_refused(
            &bitmap_msg(2, 17, 1, 1.0, &[0b11 << 4, 0]),
            17,
            "update message: invalid bitmap code 11 for parameter 2",
        );
        assert_refused(
            &bitmap_msg(2, 17, 1, 1.0, &[0, 0b01 << 2]),
            17,
            "update message: bitmap word 1 has bits set beyond param_count",
        );
        assert_refused(
            &bitmap_msg(2, 17, 1, 1.0, &[0b1001, 0]),
            17,
            "update message: header says 1 entries but the bitmap holds 2",
        );
        // 32 parameters fill both words: the top code of the last word is a real parameter.
        let mut target = vec![0.0f32; 32];
        decode_add(
            &bitmap_msg(2, 32, 1, 1.0, &[0, 0b10 << 30]),
            1.0,
            &mut target,
        )
        .unwrap();
        assert_eq!(target[31], -1.0);
    }

    #[test]
    fn decode_refuses_non_finite_scale() {
        let msg = sparse_msg(2, 1e30, &[1]);
        let mut target = vec![0.0f32; 2];
        assert_eq!(
            decode_add(&msg, 1e10, &mut target).unwrap_err().to_string(),
            "decode scale 10000000000 times the message's threshold 1000000000000000000000000000000 is not a finite number"
        );
        let e = decode_add(&sparse_msg(2, 1.0, &[1]), f32::NAN, &mut target).unwrap_err();
        assert_eq!(
            e.to_string(),
            "decode scale NaN times the message's threshold 1 is not a finite number"
        );
        assert_eq!(target, vec![0.0, 0.0]);
    }

    /// The AVX2 pass gives the portable loop's sums (in place), masks, signs, counts, largest
    /// sums and refusals bit for bit, and so does the update prescan: random lengths (partial last
    /// blocks), thresholds, densities, and the special values (±0, subnormals, values at the
    /// threshold, ±∞, NaN, sums that overflow).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn add_and_find_avx2_matches_the_portable_loop() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = ferrodl_testutil::Rng::new(0x2545_F491_4F6C_DD1D);
        let mut next = move || rng.next_u64();
        let t_values = [1e-3f32, 0.5, f32::MIN_POSITIVE, 3.0e38];
        let specials = [
            0.0f32,
            -0.0,
            1e-40,
            -1e-40,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            3.0e38,
            -3.0e38,
        ];
        let mut refused = 0;
        for case in 0..400 {
            let n = [1usize, 63, 64, 65, 127, 128, 1000, 4097][case % 8] + (next() % 3) as usize;
            let t = t_values[case % 4];
            let dense = [0.0, 0.01, 0.3, 1.0][(case / 4) % 4];
            let mut value = |special: bool| -> f32 {
                let x = next();
                if special && x % 50 == 0 {
                    return specials[(x >> 8) as usize % specials.len()];
                }
                let unit = (x >> 40) as f32 / (1u64 << 24) as f32;
                let sign = if x & 1 == 0 { 1.0 } else { -1.0 };
                if unit < dense {
                    // at or above the threshold, halves of it from both vectors
                    sign * t * 0.5 * (1.0 + (x >> 20 & 3) as f32 * 0.25)
                } else {
                    sign * t * 0.49 * unit
                }
            };
            let special = case % 3 == 0;
            let r: Vec<f32> = (0..n).map(|_| value(special)).collect();
            let u: Vec<f32> = (0..n).map(|_| value(special)).collect();
            let (mut s1, mut s2) = (r.clone(), r.clone());
            let (mut h1, mut h2, mut n1, mut n2) = (vec![(9, 9)], Vec::new(), vec![9], Vec::new());
            let a = add_and_find_body(&mut s1, &u, t, &mut h1, &mut n1);
            // SAFETY: AVX2 is present (checked above).
            let b = unsafe { add_and_find_avx2(&mut s2, &u, t, &mut h2, &mut n2) };
            let bits_of = |x: Option<(u64, f32)>| x.map(|(c, m)| (c, m.to_bits()));
            assert_eq!(bits_of(a), bits_of(b), "case {case}: count and largest sum");
            // the prescan of an update: the same verdict and bits both ways, and None exactly
            // when an entry is not finite
            let m = finite_max_abs(&u);
            assert_eq!(m.map(f32::to_bits), finite_max_abs_body(&u).map(f32::to_bits), "case {case}: prescan");
            assert_eq!(m.is_some(), u.iter().all(|x| x.is_finite()), "case {case}: prescan verdict");
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&s1), bits(&s2), "case {case}: sums");
            if a.is_some() {
                assert_eq!((h1, n1), (h2, n2), "case {case}: masks");
            } else {
                refused += 1;
            }
        }
        assert!(refused > 20, "{refused} refusals");
    }
}
