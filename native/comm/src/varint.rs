//! Unsigned LEB128 varints, the length and count fields of the compact wire formats (version 3
//! update headers, the gradient-sharing payload's counters): 7 bits per byte, least significant
//! group first, the high bit set on every byte but the last. Readers accept only the minimal
//! encoding of a value (no trailing `0x80 … 0x00` groups) and at most 10 bytes, so every value
//! has exactly one encoding and a hostile field cannot run on.

/// Most bytes a `u64` takes.
pub const MAX_LEN: usize = 10;

/// Bytes [`put`] writes for `v` (1 for 0..=127, 2 up to 16,383, 3 up to 2,097,151, …).
pub fn len(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// Appends the encoding of `v`.
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Why [`get`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintError {
    /// The bytes ended inside the varint.
    Truncated,
    /// Longer than 10 bytes, beyond `u64`, or not the minimal encoding of its value.
    Malformed,
}

/// Reads one varint from `buf` at `*pos` and advances `*pos` past it.
pub fn get(buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    let mut v = 0u64;
    for i in 0..MAX_LEN {
        let Some(&b) = buf.get(*pos + i) else {
            return Err(VarintError::Truncated);
        };
        let group = u64::from(b & 0x7f);
        // The 10th byte holds bit 63 only.
        if i == MAX_LEN - 1 && group > 1 {
            return Err(VarintError::Malformed);
        }
        v |= group << (7 * i);
        if b & 0x80 == 0 {
            // A last byte of 0 after other bytes is a non-minimal encoding.
            if i > 0 && b == 0 {
                return Err(VarintError::Malformed);
            }
            *pos += i + 1;
            return Ok(v);
        }
    }
    Err(VarintError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_lengths() {
        for v in [0u64, 1, 127, 128, 300, 16_383, 16_384, 443_610, 25_000_000, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put(&mut b, v);
            assert_eq!(b.len(), len(v), "{v}");
            let mut pos = 0;
            assert_eq!(get(&b, &mut pos), Ok(v));
            assert_eq!(pos, b.len());
        }
        assert_eq!((len(127), len(128), len(443_610), len(u64::MAX)), (1, 2, 3, 10));
    }

    #[test]
    fn refuses_truncated_long_and_non_minimal() {
        let mut pos = 0;
        assert_eq!(get(&[0x80], &mut pos), Err(VarintError::Truncated));
        assert_eq!(get(&[], &mut pos), Err(VarintError::Truncated));
        assert_eq!(get(&[0x80, 0x00], &mut pos), Err(VarintError::Malformed), "non-minimal 0");
        assert_eq!(get(&[0xff, 0x80, 0x00], &mut pos), Err(VarintError::Malformed));
        assert_eq!(get(&[0xff; 11], &mut pos), Err(VarintError::Malformed), "11 bytes");
        let mut over = vec![0xff; 9];
        over.push(0x02); // bit 64
        assert_eq!(get(&over, &mut pos), Err(VarintError::Malformed));
        assert_eq!(pos, 0, "a refused varint does not move the position");
    }
}
