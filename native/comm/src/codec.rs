//! Wire format of a threshold-encoded update, with its encoder and validating decoder.
//!
//! An update message says "add `+t` or `-t` to these entries of a dense `f32` vector of
//! `param_count` parameters". All integers and floats are **little-endian**; there is no padding
//! besides what is listed.
//!
//! | offset | size | field | value |
//! |---|---|---|---|
//! | 0 | 4 | magic | ASCII `FRDU` |
//! | 4 | 2 | version | `u16` = 1 |
//! | 6 | 1 | kind | `u8`: 0 = sparse, 1 = bitmap |
//! | 7 | 1 | flags | `u8` = 0 (reserved, must be 0) |
//! | 8 | 8 | param_count | `u64`, length of the dense update vector |
//! | 16 | 8 | entry_count | `u64`, number of entries sent (each means `+t` or `-t`), at most param_count |
//! | 24 | 4 | threshold | `f32` `t`, finite and > 0 |
//! | 28 | 4 | reserved | `u32` = 0 |
//! | 32 | … | payload | below |
//!
//! * **Sparse** (kind 0): `entry_count` × `i32`, each a signed 1-based index: the sign is the sign
//!   of the value (`+t` or `-t`) and `|i| - 1` is the position. Magnitudes are strictly
//!   increasing and lie in `1..=min(param_count, i32::MAX)`; 0 and `i32::MIN` are invalid.
//! * **Bitmap** (kind 1): `ceil(param_count / 16)` × `u32` words, 2 bits per parameter;
//!   parameter `j` is at bits `2*(j % 16)` and `2*(j % 16) + 1` of word `j / 16`: `00` nothing,
//!   `01` = `+t`, `10` = `-t`, `11` invalid. Bits of the last word beyond `param_count` are 0, and
//!   the number of non-`00` codes equals `entry_count`.
//!
//! The message is exactly `32 + payload` bytes. A message with nothing to send is a sparse
//! message with `entry_count` 0 (32 bytes).
//!
//! **Choice of encoding** ([`choose_encoding`]): the sparse payload is `4 × entry_count` bytes,
//! the bitmap payload `4 × ceil(param_count / 16)` bytes. The writer picks sparse iff
//! `entry_count <= ceil(param_count / 16)` (the sparse payload is no larger; ties go to sparse),
//! bitmap otherwise. That is the exact form of "switch to bitmap when more than about 1/16 of the
//! entries qualify". When `param_count > i32::MAX`, indices cannot address every parameter, so
//! any message with entries is a bitmap. (A bitmap always fits: it is a sixteenth of the size of
//! the `f32` vector it encodes, which exists in memory.) Readers accept either kind whichever is
//! smaller.
//!
//! **Semantics.** Entry `j` of the residual `r` is sent iff `|r_j| >= t`, as `sign(r_j) * t`, in
//! both encodings (the reference treated positive and negative values asymmetrically in its
//! bitmap; we don't). The entries are counted first, the encoding is chosen, and only then is the
//! residual modified, once: `r_j -= sign(r_j) * t` for each sent entry (the reference lost the
//! residual mass of a discarded sparse pass when it fell back to the bitmap). So
//! `decoded + new residual == old residual`, exactly when `|r_j| <= 2t` (Sterbenz: `r_j - t` is
//! then exact) and within half an ulp of `r_j` otherwise.
//!
//! The full description, for the Java side and other readers, is `docs/UPDATE_FORMAT.md`.

use serde::{Deserialize, Serialize};

use crate::error::{CodecError, VectorKind};

/// The four bytes every message starts with.
pub const MAGIC: [u8; 4] = *b"FRDU";
/// The format version this build writes and reads.
pub const VERSION: u16 = 1;
/// Size of the fixed header that precedes the payload.
pub const HEADER_LEN: usize = 32;

/// Low bit of every 2-bit bitmap code.
const LOW_BITS: u32 = 0x5555_5555;

/// Payload kind of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Encoding {
    /// Signed 1-based indices, 4 bytes per entry.
    Sparse,
    /// 2 bits per parameter.
    Bitmap,
}

impl Encoding {
    /// The `kind` byte of the header.
    pub fn code(self) -> u8 {
        match self {
            Encoding::Sparse => 0,
            Encoding::Bitmap => 1,
        }
    }

    fn from_code(code: u8) -> Result<Self, CodecError> {
        match code {
            0 => Ok(Encoding::Sparse),
            1 => Ok(Encoding::Bitmap),
            other => Err(CodecError::UnknownKind(other)),
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
}

impl Header {
    /// Payload size in bytes that this header announces (saturating, so a hostile header cannot
    /// overflow the arithmetic; such a size is then simply never available).
    pub fn payload_len(&self) -> u64 {
        match self.kind {
            Encoding::Sparse => self.entry_count.saturating_mul(4),
            Encoding::Bitmap => bitmap_words(self.param_count).saturating_mul(4),
        }
    }

    /// Total message size in bytes: header plus payload.
    pub fn message_len(&self) -> u64 {
        self.payload_len().saturating_add(HEADER_LEN as u64)
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.push(self.kind.code());
        out.push(0);
        out.extend_from_slice(&self.param_count.to_le_bytes());
        out.extend_from_slice(&self.entry_count.to_le_bytes());
        out.extend_from_slice(&self.threshold.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
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

/// The encoding a writer uses for `entry_count` entries out of `param_count` parameters: sparse iff
/// there are no entries, or `param_count <= i32::MAX` and `entry_count <= ceil(param_count / 16)`.
pub fn choose_encoding(param_count: u64, entry_count: u64) -> Encoding {
    if entry_count == 0 {
        Encoding::Sparse
    } else if param_count > i32::MAX as u64 {
        Encoding::Bitmap
    } else if entry_count <= bitmap_words(param_count) {
        Encoding::Sparse
    } else {
        Encoding::Bitmap
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
    let param_count = residual.len() as u64;
    let header = Header {
        kind: choose_encoding(param_count, count),
        param_count,
        entry_count: count,
        threshold: t,
    };
    out.reserve(header.message_len() as usize);
    header.write_to(out);
    match header.kind {
        // count == 0 needs no pass at all: nothing qualifies and the residual stays as it is.
        Encoding::Sparse if count > 0 => {
            for (j, r) in residual.iter_mut().enumerate() {
                let x = *r;
                // j + 1 <= param_count <= i32::MAX, guaranteed by choose_encoding.
                let index = (j + 1) as i32;
                if x >= t {
                    out.extend_from_slice(&index.to_le_bytes());
                    *r = x - t;
                } else if x <= -t {
                    out.extend_from_slice(&(-index).to_le_bytes());
                    *r = x + t;
                }
            }
        }
        Encoding::Sparse => {}
        Encoding::Bitmap => {
            let mut chunks = residual.chunks_exact_mut(16);
            for chunk in &mut chunks {
                out.extend_from_slice(&bitmap_word(chunk, t).to_le_bytes());
            }
            let rest = chunks.into_remainder();
            if !rest.is_empty() {
                out.extend_from_slice(&bitmap_word(rest, t).to_le_bytes());
            }
        }
    }
    debug_assert_eq!(out.len() as u64, header.message_len());
    EncodeStats {
        encoding: header.kind,
        entries: count,
        bytes: out.len(),
        sparsity: if param_count == 0 {
            0.0
        } else {
            count as f64 / param_count as f64
        },
        threshold: t,
        param_count,
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

/// Parses and validates a header (magic, version, kind, flags, reserved, threshold finite > 0,
/// entry_count <= param_count, and the message length against the announced payload).
pub fn read_header(msg: &[u8]) -> Result<Header, CodecError> {
    if msg.len() < HEADER_LEN {
        return Err(CodecError::Truncated {
            len: msg.len(),
            needed: HEADER_LEN as u64,
            header_read: false,
        });
    }
    let magic = [msg[0], msg[1], msg[2], msg[3]];
    if magic != MAGIC {
        return Err(CodecError::BadMagic(magic));
    }
    // The version comes before anything else so that a future layout is reported as such.
    let version = u16_at(msg, 4);
    if version != VERSION {
        return Err(CodecError::UnsupportedVersion(version));
    }
    let kind = Encoding::from_code(msg[6])?;
    if msg[7] != 0 {
        return Err(CodecError::NonZeroFlags(msg[7]));
    }
    let param_count = u64_at(msg, 8);
    let entry_count = u64_at(msg, 16);
    let threshold = f32::from_bits(u32_at(msg, 24));
    let reserved = u32_at(msg, 28);
    if reserved != 0 {
        return Err(CodecError::NonZeroReserved(reserved));
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
    let header = Header {
        kind,
        param_count,
        entry_count,
        threshold,
    };
    let expected = header.message_len();
    let len = msg.len() as u64;
    if len < expected {
        return Err(CodecError::Truncated {
            len: msg.len(),
            needed: expected,
            header_read: true,
        });
    }
    if len > expected {
        return Err(CodecError::TrailingBytes {
            len: msg.len(),
            expected,
        });
    }
    Ok(header)
}

/// `target[j] += scale * decoded[j]`.
///
/// Validates everything first (header, `param_count == target.len()`, sparse indices in range
/// and strictly increasing, no `11` bitmap codes, no padding bits, bitmap entry count, exact
/// payload length, `scale * threshold` finite), so a bad message never half-applies: on error
/// `target` is unchanged. Entries the message does not mention keep their value (a `-0.0` among
/// them may become `+0.0`, as adding a decoded zero would).
pub fn decode_add(msg: &[u8], scale: f32, target: &mut [f32]) -> Result<Header, CodecError> {
    let header = read_header(msg)?;
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
    let payload = &msg[HEADER_LEN..];
    match header.kind {
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

    fn header_bytes(kind: u8, param_count: u64, entry_count: u64, threshold: f32) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(b"FRDU");
        m.extend_from_slice(&1u16.to_le_bytes());
        m.push(kind);
        m.push(0);
        m.extend_from_slice(&param_count.to_le_bytes());
        m.extend_from_slice(&entry_count.to_le_bytes());
        m.extend_from_slice(&threshold.to_le_bytes());
        m.extend_from_slice(&0u32.to_le_bytes());
        m
    }

    fn sparse_msg(param_count: u64, t: f32, indices: &[i32]) -> Vec<u8> {
        let mut m = header_bytes(0, param_count, indices.len() as u64, t);
        for i in indices {
            m.extend_from_slice(&i.to_le_bytes());
        }
        m
    }

    fn bitmap_msg(param_count: u64, entries: u64, t: f32, words: &[u32]) -> Vec<u8> {
        let mut m = header_bytes(1, param_count, entries, t);
        for w in words {
            m.extend_from_slice(&w.to_le_bytes());
        }
        m
    }

    #[test]
    fn sparse_bytes_are_exactly_as_documented() {
        // 40 parameters: a 3-word bitmap, so 2 entries (8 bytes) go sparse.
        let mut r = vec![0.0f32; 40];
        r[1] = 0.5;
        r[2] = -0.25;
        r[3] = 0.1;
        let mut out = Vec::new();
        let stats = encode(&mut r, 0.25, &mut out).unwrap();
        let expected = sparse_msg(40, 0.25, &[2, -3]);
        assert_eq!(out, expected);
        assert_eq!(
            &out[..32],
            &[
                b'F', b'R', b'D', b'U', 1, 0, 0, 0, 40, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0x80, 0x3e, 0, 0, 0, 0
            ]
        );
        assert_eq!(&out[32..], &[2, 0, 0, 0, 0xfd, 0xff, 0xff, 0xff]);
        assert_eq!(stats.encoding, Encoding::Sparse);
        assert_eq!(stats.entries, 2);
        assert_eq!(stats.bytes, 40);
        assert_eq!(stats.sparsity, 0.05);
        assert_eq!(stats.threshold, 0.25);
        // 0.5 - 0.25 and -0.25 + 0.25 are exact.
        let mut expect = vec![0.0f32; 40];
        expect[1] = 0.25;
        expect[3] = 0.1;
        assert_eq!(r, expect);
    }

    #[test]
    fn bitmap_bytes_are_exactly_as_documented() {
        // 17 parameters: 2 bitmap words; 3 entries > ceil(17/16) = 2, so bitmap.
        let mut r = vec![0.0f32; 17];
        r[0] = 1.0;
        r[15] = -1.5;
        r[16] = 2.0;
        r[3] = 0.999;
        let mut out = Vec::new();
        let stats = encode(&mut r, 1.0, &mut out).unwrap();
        assert_eq!(stats.encoding, Encoding::Bitmap);
        let w0 = 0b01 | (0b10 << 30);
        let w1 = 0b01;
        assert_eq!(out, bitmap_msg(17, 3, 1.0, &[w0, w1]));
        assert_eq!(stats.bytes, 40);
        let mut expect = vec![0.0f32; 17];
        expect[15] = -0.5;
        expect[16] = 1.0;
        expect[3] = 0.999;
        assert_eq!(r, expect);
    }

    #[test]
    fn empty_message_is_32_byte_sparse() {
        let mut r = vec![0.1f32; 100];
        let mut out = vec![9u8; 7];
        let stats = encode(&mut r, 0.5, &mut out).unwrap();
        assert_eq!(out, header_bytes(0, 100, 0, 0.5));
        assert_eq!(stats.bytes, 32);
        assert_eq!(stats.sparsity, 0.0);
        assert_eq!(r, vec![0.1f32; 100]);
        // A zero-length vector too.
        let stats = encode(&mut [], 0.5, &mut out).unwrap();
        assert_eq!((stats.bytes, stats.sparsity), (32, 0.0));
        let mut target: [f32; 0] = [];
        assert_eq!(decode_add(&out, 1.0, &mut target).unwrap().param_count, 0);
    }

    #[test]
    fn encoding_choice_is_the_cheaper_payload() {
        assert_eq!(choose_encoding(0, 0), Encoding::Sparse);
        assert_eq!(choose_encoding(16, 1), Encoding::Sparse);
        assert_eq!(choose_encoding(16, 2), Encoding::Bitmap);
        assert_eq!(choose_encoding(17, 2), Encoding::Sparse); // 8 bytes each: tie goes to sparse
        assert_eq!(choose_encoding(17, 3), Encoding::Bitmap);
        assert_eq!(choose_encoding(1600, 100), Encoding::Sparse);
        assert_eq!(choose_encoding(1600, 101), Encoding::Bitmap);
        assert_eq!(choose_encoding(1, 1), Encoding::Sparse);
        let max = i32::MAX as u64;
        assert_eq!(choose_encoding(max, 1), Encoding::Sparse);
        assert_eq!(choose_encoding(max + 1, 1), Encoding::Bitmap);
        assert_eq!(choose_encoding(max + 1, 0), Encoding::Sparse);
        assert_eq!(choose_encoding(u64::MAX, 0), Encoding::Sparse);
        assert_eq!(choose_encoding(u64::MAX, 5), Encoding::Bitmap);
    }

    #[test]
    fn encode_refuses_bad_threshold_and_non_finite_residual() {
        let mut r = vec![1.0f32, 2.0, f32::NAN, f32::INFINITY];
        let before = r.clone();
        let mut out = vec![1u8];
        for t in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let e = encode(&mut r, t, &mut out).unwrap_err();
            assert!(matches!(e, CodecError::InvalidThreshold(_)), "{e}");
            assert!(out.is_empty());
        }
        let e = encode(&mut r, 1.0, &mut out).unwrap_err();
        assert_eq!(
            e.to_string(),
            "residual entry 2 is NaN; nothing was encoded and the residual is unchanged"
        );
        r[2] = 0.0;
        let e = encode(&mut r, 1.0, &mut out).unwrap_err();
        assert_eq!(
            e.to_string(),
            "residual entry 3 is inf; nothing was encoded and the residual is unchanged"
        );
        assert_eq!(r[..2], before[..2]);
        assert!(out.is_empty());
    }

    #[test]
    fn decode_scales_and_adds() {
        let msg = sparse_msg(5, 0.5, &[1, -4, 5]);
        let mut target = vec![1.0f32; 5];
        let h = decode_add(&msg, -2.0, &mut target).unwrap();
        assert_eq!(
            h,
            Header {
                kind: Encoding::Sparse,
                param_count: 5,
                entry_count: 3,
                threshold: 0.5
            }
        );
        assert_eq!(target, vec![0.0, 1.0, 1.0, 2.0, 0.0]);
        let msg = bitmap_msg(18, 3, 0.25, &[0b10 << 2, 0b01 | (0b10 << 2)]);
        let mut target = vec![0.0f32; 18];
        decode_add(&msg, 1.0, &mut target).unwrap();
        let mut expect = vec![0.0f32; 18];
        expect[1] = -0.25;
        expect[16] = 0.25;
        expect[17] = -0.25;
        assert_eq!(target, expect);
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
        m[0] = b'X';
        assert_refused(
            &m,
            12,
            "update message: bad magic [58, 52, 44, 55] (expected \"FRDU\"); not a ferrodl update",
        );
        let mut m = good.clone();
        m[4] = 2;
        assert_refused(
            &m,
            12,
            "update message: unsupported version 2 (this build reads 1)",
        );
        let mut m = good.clone();
        m[6] = 2;
        assert_refused(
            &m,
            12,
            "update message: unknown encoding kind 2 (0 = sparse, 1 = bitmap)",
        );
        let mut m = good.clone();
        m[7] = 1;
        assert_refused(
            &m,
            12,
            "update message: flags byte is 0x01; it is reserved and must be 0",
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
        let m = header_bytes(0, 2, 3, 1.0);
        assert_refused(&m, 2, "update message: entry_count 3 exceeds param_count 2");
        // A hostile entry count cannot overflow the length arithmetic.
        let m = header_bytes(0, u64::MAX, u64::MAX, 1.0);
        assert!(matches!(
            read_header(&m).unwrap_err(),
            CodecError::Truncated { .. }
        ));
        let m = header_bytes(1, u64::MAX, 0, 1.0);
        assert!(matches!(
            read_header(&m).unwrap_err(),
            CodecError::Truncated { .. }
        ));
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
            &bitmap_msg(17, 1, 1.0, &[0b11 << 4, 0]),
            17,
            "update message: invalid bitmap code 11 for parameter 2",
        );
        assert_refused(
            &bitmap_msg(17, 1, 1.0, &[0, 0b01 << 2]),
            17,
            "update message: bitmap word 1 has bits set beyond param_count",
        );
        assert_refused(
            &bitmap_msg(17, 1, 1.0, &[0b1001, 0]),
            17,
            "update message: header says 1 entries but the bitmap holds 2",
        );
        // 32 parameters fill both words: the top code of the last word is a real parameter.
        let mut target = vec![0.0f32; 32];
        decode_add(&bitmap_msg(32, 1, 1.0, &[0, 0b10 << 30]), 1.0, &mut target).unwrap();
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
}
