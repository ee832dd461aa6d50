//! Bit-level Golomb–Rice coding of sorted positions with a sign bit each (payload of kind 2).
//!
//! A message lists `n` distinct positions `p_0 < p_1 < … < p_{n-1}` of a vector of `P` entries,
//! each with a sign. It codes the gaps `g_0 = p_0`, `g_i = p_i - p_{i-1} - 1` (the number of
//! skipped positions, so `sum (g_i + 1) = p_{n-1} + 1 <= P`) with the Rice parameter `k`:
//!
//! * the quotient `q = g >> k` in unary: `q` zero bits, then a one bit;
//! * the remainder `g & (2^k - 1)` in `k` bits, least significant first;
//! * one sign bit: 0 = `+t`, 1 = `-t`.
//!
//! Bits are packed least significant bit first into consecutive bytes; the payload is
//! `ceil(bits / 8)` bytes and the unused high bits of its last byte are 0.
//!
//! Size: every entry costs `k + 2` bits plus its quotient, and the quotients add up to at most
//! `(P - n) >> k` (the gaps add up to at most `P - n`), so a payload never exceeds
//! [`max_bits`]`(P, n, k)` bits. [`parameter`] picks the `k` that minimises that bound, which for
//! uniformly scattered positions (geometric gaps of mean `P/n`) costs about `log2(P/n) + 2.5`
//! bits per entry.

use crate::error::CodecError;

/// Largest Rice parameter a message may carry (gaps are `u64`).
pub const MAX_RICE_PARAMETER: u8 = 63;

/// Upper bound, in bits, of the payload for `n` of `p` entries with parameter `k`:
/// `n (k + 2) + ((p - n) >> k)`. Saturating, so hostile headers cannot overflow it.
pub fn max_bits(p: u64, n: u64, k: u8) -> u64 {
    n.saturating_mul(u64::from(k) + 2)
        .saturating_add(p.saturating_sub(n) >> k)
}

/// Smallest possible payload in bits: every quotient 0.
pub fn min_bits(n: u64, k: u8) -> u64 {
    n.saturating_mul(u64::from(k) + 2)
}

/// The Rice parameter a writer uses for `n` entries out of `p`: the `k` in `0..=63` with the
/// smallest [`max_bits`] (the smallest such `k` on ties); 0 when `n` is 0. The minimum lies near
/// `log2((p - n) ln 2 / n)`, i.e. it follows the mean gap.
pub fn parameter(p: u64, n: u64) -> u8 {
    if n == 0 {
        return 0;
    }
    let mut best = (max_bits(p, n, 0), 0u8);
    for k in 1..=MAX_RICE_PARAMETER {
        let bits = max_bits(p, n, k);
        if bits < best.0 {
            best = (bits, k);
        }
    }
    best.1
}

/// Appends bits, least significant first, to a byte vector.
pub(crate) struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    /// Bits held in `acc`; below 32 between calls.
    held: u32,
}

impl<'a> BitWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter {
            out,
            acc: 0,
            held: 0,
        }
    }

    /// The low `width` (<= 32) bits of `bits`; higher bits of `bits` must be 0.
    #[inline]
    fn put(&mut self, bits: u64, width: u32) {
        debug_assert!(width <= 32 && (width == 64 || bits >> width == 0));
        self.acc |= bits << self.held;
        self.held += width;
        if self.held >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.held -= 32;
        }
    }

    /// One entry: gap `gap` with parameter `k`, then the sign bit.
    #[inline(always)]
    pub(crate) fn entry(&mut self, gap: u64, k: u8, negative: bool) {
        let q = gap >> k;
        if q + u64::from(k) <= 30 {
            // The whole entry in one write: q zeros, a one, the k remainder bits, the sign.
            let k = u32::from(k);
            let bits = 1u64 << q | (gap & low_mask(k)) << (q + 1) | u64::from(negative) << (q as u32 + 1 + k);
            self.put(bits, q as u32 + k + 2);
        } else {
            self.long_entry(gap, k, negative);
        }
    }

    /// [`Self::entry`] for an entry of more than 32 bits, written in pieces.
    #[inline(never)]
    fn long_entry(&mut self, gap: u64, k: u8, negative: bool) {
        let mut q = gap >> k;
        while q >= 31 {
            self.put(0, 31);
            q -= 31;
        }
        self.put(1 << q, q as u32 + 1);
        let mut rest = u32::from(k);
        let mut r = gap & low_mask(rest);
        while rest > 0 {
            let w = rest.min(32);
            self.put(r & low_mask(w), w);
            r = if w == 64 { 0 } else { r >> w };
            rest -= w;
        }
        self.put(u64::from(negative), 1);
    }

    /// Flushes the partial last byte (its unused bits are 0).
    pub(crate) fn finish(self) {
        let bytes = self.held.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
    }
}

#[inline]
fn low_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// `walk` refills below this many held bits; a refill from 8 or more bytes left holds at least
/// 56 after it, so the fast path takes every entry with a quotient up to `54 - k` (an entry is
/// quotient + `k` + 2 bits).
const FAST_HELD: u32 = 56;

/// Reads bits, least significant first; every read is bounded by the bytes present.
struct BitReader<'a> {
    bytes: &'a [u8],
    /// Next byte to load into `acc`.
    next: usize,
    acc: u64,
    /// Valid bits in `acc` (the bits above are 0).
    held: u32,
    /// Bits consumed so far.
    consumed: u64,
}

impl<'a> BitReader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        BitReader {
            bytes,
            next: 0,
            acc: 0,
            held: 0,
            consumed: 0,
        }
    }

    #[inline]
    fn refill(&mut self) {
        if self.next + 8 <= self.bytes.len() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&self.bytes[self.next..self.next + 8]);
            let take = (63 - self.held) / 8;
            // Keep only the `take` whole bytes that fit, so `acc` holds no bits beyond `held`.
            let word = u64::from_le_bytes(w) & low_mask(8 * take);
            self.acc |= word << self.held;
            self.held += 8 * take;
            self.next += take as usize;
        } else {
            while self.held <= 56 && self.next < self.bytes.len() {
                self.acc |= u64::from(self.bytes[self.next]) << self.held;
                self.held += 8;
                self.next += 1;
            }
        }
    }

    #[inline]
    fn consume(&mut self, bits: u32) {
        self.acc = if bits >= 64 { 0 } else { self.acc >> bits };
        self.held -= bits;
        self.consumed += u64::from(bits);
    }

    /// The unary quotient: counts zero bits up to a one bit. `None` when the bytes run out
    /// first; `Err(limit + 1)` as soon as the count exceeds `limit` (the same value however
    /// many bits happened to be held, so an error never depends on the reader's buffering).
    #[inline]
    fn unary(&mut self, limit: u64) -> Result<Option<u64>, u64> {
        let mut q = 0u64;
        loop {
            if self.held == 0 {
                self.refill();
                if self.held == 0 {
                    return Ok(None);
                }
            }
            let zeros = self.acc.trailing_zeros();
            if zeros < self.held {
                q += u64::from(zeros);
                if q > limit {
                    return Err(limit.saturating_add(1));
                }
                self.consume(zeros + 1);
                return Ok(Some(q));
            }
            q += u64::from(self.held);
            self.consume(self.held);
            if q > limit {
                return Err(limit.saturating_add(1));
            }
        }
    }

    /// `width` (<= 64) bits as a number; `None` when the bytes run out.
    #[inline]
    fn bits(&mut self, width: u32) -> Option<u64> {
        let mut value = 0u64;
        let mut done = 0u32;
        while done < width {
            if self.held == 0 || self.held < (width - done).min(32) {
                self.refill();
            }
            let w = (width - done).min(32).min(self.held);
            if w == 0 {
                return None;
            }
            value |= (self.acc & low_mask(w)) << done;
            self.consume(w);
            done += w;
        }
        Some(value)
    }
}

/// Walks a Rice payload of `n` entries over `p` positions with parameter `k`, calling
/// `each(position, negative)` in order. Validates everything: every entry complete, every
/// position below `p`, no unary run longer than the positions left allow, and nothing after the
/// last entry except zero padding bits in the last byte. On error `each` may have been called for
/// a prefix of the entries, so callers run a validating pass with a no-op `each` first.
pub(crate) fn walk(
    payload: &[u8],
    p: u64,
    n: u64,
    k: u8,
    each: impl FnMut(u64, bool),
) -> Result<(), CodecError> {
    walk_with::<true>(payload, p, n, k, each)
}

/// [`walk`]; `FAST = false` decodes every entry on the general path alone (the tests hold the
/// fast path to its results and errors).
fn walk_with<const FAST: bool>(
    payload: &[u8],
    p: u64,
    n: u64,
    k: u8,
    mut each: impl FnMut(u64, bool),
) -> Result<(), CodecError> {
    let k_mask = low_mask(u32::from(k));
    let mut reader = BitReader::new(payload);
    // The next position an entry may take.
    let mut next = 0u64;
    for entry in 0..n {
        if next >= p {
            return Err(CodecError::RiceGapPastEnd {
                entry,
                position: next,
                param_count: p,
            });
        }
        // The largest gap that stays below p; its quotient bounds the unary run.
        let room = p - 1 - next;
        let max_q = room >> k;
        if FAST && reader.held < FAST_HELD {
            reader.refill();
        }
        // Fast path: the whole entry (unary run, its one bit, `k` remainder bits, the sign) lies
        // in the bits already held and its quotient is allowed. Anything else — an entry split
        // across a refill, a long run, a bad quotient, the end of the bytes — takes the general
        // path below from the same reader state, so errors are exactly the general path's.
        let z = reader.acc.trailing_zeros();
        let width = z + u32::from(k) + 2;
        if FAST && width <= reader.held && u64::from(z) <= max_q {
            let rest = reader.acc >> (z + 1);
            let gap = (u64::from(z) << k) | (rest & k_mask);
            if gap <= room {
                let position = next + gap;
                each(position, (rest >> k) & 1 == 1);
                reader.consume(width);
                next = position + 1;
                continue;
            }
        }
        let q = match reader.unary(max_q) {
            Ok(Some(q)) => q,
            Ok(None) => {
                return Err(CodecError::RiceTruncated {
                    entry,
                    entry_count: n,
                })
            }
            Err(at_least) => {
                return Err(CodecError::RiceUnaryTooLong {
                    entry,
                    at_least,
                    max: max_q,
                })
            }
        };
        let r = reader.bits(u32::from(k)).ok_or(CodecError::RiceTruncated {
            entry,
            entry_count: n,
        })?;
        // q <= room >> k, so q << k <= room: no overflow.
        let gap = (q << k) | r;
        if gap > room {
            return Err(CodecError::RiceGapPastEnd {
                entry,
                position: next.saturating_add(gap),
                param_count: p,
            });
        }
        let position = next + gap;
        let negative = reader.bits(1).ok_or(CodecError::RiceTruncated {
            entry,
            entry_count: n,
        })? == 1;
        each(position, negative);
        next = position + 1;
    }
    let used = reader.consumed.div_ceil(8);
    if payload.len() as u64 != used {
        return Err(CodecError::RiceTrailingBytes {
            used,
            len: payload.len() as u64,
        });
    }
    let tail = (reader.consumed % 8) as u32;
    if tail != 0 && payload[payload.len() - 1] >> tail != 0 {
        return Err(CodecError::RicePaddingBits);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(p: u64, k: u8, entries: &[(u64, bool)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        let mut next = 0;
        for &(pos, neg) in entries {
            w.entry(pos - next, k, neg);
            next = pos + 1;
        }
        w.finish();
        let _ = p;
        out
    }

    fn decode(payload: &[u8], p: u64, n: u64, k: u8) -> Result<Vec<(u64, bool)>, CodecError> {
        let mut v = Vec::new();
        walk(payload, p, n, k, |pos, neg| v.push((pos, neg)))?;
        Ok(v)
    }

    #[test]
    fn bits_by_hand() {
        // k = 2: gap 5 = q 1, r 01; gap 0 = q 0, r 00.
        // Entry 0 at position 5 (+): bits 0,1 | 1,0 | 0  -> LSB first: 0 1 1 0 0
        // Entry 1 at position 6 (-): bits 1 | 0,0 | 1    -> 1 0 0 1
        let out = encode(10, 2, &[(5, false), (6, true)]);
        // bit string (first bit = bit 0): 0 1 1 0 0 1 0 0 | 1 -> 0b0010_0110, 0b0000_0001
        assert_eq!(out, vec![0b0010_0110, 0b0000_0001]);
        assert_eq!(decode(&out, 10, 2, 2).unwrap(), vec![(5, false), (6, true)]);
    }

    #[test]
    fn round_trips_over_parameters_and_long_gaps() {
        let p = 1u64 << 40;
        let entries = [
            (0u64, true),
            (1, false),
            (1000, true),
            (1 << 33, false),
            ((1 << 40) - 1, true),
        ];
        for k in [0u8, 1, 7, 31, 32, 33, 40, 63] {
            if k < 20 {
                // Unary runs of 2^40 >> k bits would be huge; covered with small p below.
                continue;
            }
            let out = encode(p, k, &entries);
            assert_eq!(decode(&out, p, 5, k).unwrap(), entries, "k {k}");
        }
        let entries = [(3u64, false), (4, true), (70, true), (199, false)];
        for k in 0..=MAX_RICE_PARAMETER {
            let out = encode(200, k, &entries);
            assert_eq!(decode(&out, 200, 4, k).unwrap(), entries, "k {k}");
            assert!(out.len() as u64 * 8 <= max_bits(200, 4, k).div_ceil(8) * 8);
            assert!(out.len() as u64 * 8 >= min_bits(4, k));
        }
    }

    /// The fast path takes an entry only when all of it lies in the bits already held; every
    /// other entry (long runs, large `k`, an entry across a refill, the last bytes, bad input)
    /// goes the general way. Valid and damaged payloads alike must give exactly what the general
    /// path alone gives: the same entries, or the same error.
    #[test]
    fn the_fast_path_agrees_with_the_general_path() {
        let mut rng = ferrodl_testutil::Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut rand = move || rng.next_u64();
        let both = |payload: &[u8], p: u64, n: u64, k: u8| {
            let (mut fast, mut general) = (Vec::new(), Vec::new());
            let f = walk_with::<true>(payload, p, n, k, |q, neg| fast.push((q, neg)));
            let g = walk_with::<false>(payload, p, n, k, |q, neg| general.push((q, neg)));
            assert_eq!(f, g, "p {p} n {n} k {k}");
            assert_eq!(fast, general, "p {p} n {n} k {k}");
            f.is_ok()
        };
        let (mut valid, mut refused) = (0, 0);
        for case in 0..3000 {
            let p = [64u64, 1000, 443_610, 1 << 20][case % 4];
            // Mean gaps from dense to very sparse, so quotients range from 0 to long runs.
            let mean = 1u64 << (rand() % 16);
            let mut entries = Vec::new();
            let mut next = 0u64;
            loop {
                let gap = rand() % (2 * mean);
                if next + gap >= p || entries.len() >= 3000 {
                    break;
                }
                entries.push((next + gap, rand() & 1 == 1));
                next += gap + 1;
            }
            let n = entries.len() as u64;
            let k = match rand() % 4 {
                0 => parameter(p, n),
                1 => (rand() % 24) as u8,
                2 => parameter(p, n).saturating_sub(3),
                _ => (rand() % 64) as u8,
            };
            if (p - n) >> k > 1 << 16 {
                continue; // unary runs too long to write in a test
            }
            let payload = encode(p, k, &entries);
            assert!(both(&payload, p, n, k));
            assert_eq!(decode(&payload, p, n, k).unwrap(), entries);
            valid += 1;
            // Damaged copies: a flipped bit, a cut, an extra byte, a wrong count or length.
            let mut flipped = payload.clone();
            if !flipped.is_empty() {
                let bit = rand() as usize % (8 * flipped.len());
                flipped[bit / 8] ^= 1 << (bit % 8);
            }
            let cut = &payload[..payload.len() - (rand() as usize % (payload.len() + 1)).min(payload.len())];
            let mut longer = payload.clone();
            longer.push(rand() as u8);
            for (bytes, p2, n2) in [
                (&flipped[..], p, n),
                (cut, p, n),
                (&longer[..], p, n),
                (&payload[..], p, n + 1),
                (&payload[..], p, n.saturating_sub(1)),
                (&payload[..], next.max(1), n),
            ] {
                if !both(bytes, p2, n2, k) {
                    refused += 1;
                }
            }
        }
        assert!(valid > 1500 && refused > 1500, "valid {valid} refused {refused}");
    }

    #[test]
    fn parameter_follows_the_mean_gap() {
        assert_eq!(parameter(100, 0), 0);
        assert_eq!(parameter(1, 1), 0);
        // 1 of 1,000,000: a single long gap is cheapest with a large k.
        assert!(parameter(1_000_000, 1) >= 18);
        // Sparsity 1e-3 over 443,610 parameters: mean gap ~1000, k = 9 (1000 ln 2 ~ 2^9.4).
        assert_eq!(parameter(443_610, 443), 9);
        assert_eq!(parameter(443_610, 4436), 6);
        // Dense: every position sent, all gaps 0.
        assert_eq!(parameter(1000, 1000), 0);
    }
}
