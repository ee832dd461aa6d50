//! Pieces both file formats share: the array encoding, the bounds-checked reader, the CRC-32 and
//! the trailer ("DEND" + checksum, nothing after it).

use crate::{Array, DataError, MAX_RANK};

/// Marker that precedes the checksum.
pub const END_MARKER: [u8; 4] = *b"DEND";

/// CRC-32 (IEEE 802.3, reflected, as zlib and `java.util.zip.CRC32`) lookup table.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// CRC-32 of `bytes` (same value as `java.util.zip.CRC32`).
pub fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |c, &b| {
        CRC_TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8)
    })
}

pub fn encoded_array_len(a: &Array) -> usize {
    4 + 8 * a.shape.len() + 4 * a.data.len()
}

pub fn put_array(out: &mut Vec<u8>, a: &Array) {
    out.extend_from_slice(&(a.shape.len() as u32).to_le_bytes());
    for &d in &a.shape {
        out.extend_from_slice(&(d as u64).to_le_bytes());
    }
    for &v in &a.data {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends the end marker and the CRC-32 of everything written so far.
pub fn put_trailer(out: &mut Vec<u8>) {
    out.extend_from_slice(&END_MARKER);
    let crc = crc32(out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Bounds-checked little-endian reader: every read names what it reads for truncation messages.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DataError> {
        let left = self.remaining();
        if n > left {
            return Err(DataError::Format(format!(
                "truncated: expected {n} bytes of {what}, found {left}"
            )));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, DataError> {
        Ok(self.take(1, what)?[0])
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, DataError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Checks the magic; a prefix of it that ends early is a truncation, anything else `not_magic`.
    pub fn magic(
        &mut self,
        magic: &[u8; 8],
        not_magic: impl FnOnce(&[u8]) -> String,
    ) -> Result<(), DataError> {
        let n = self.bytes.len().min(magic.len());
        if self.bytes[..n] != magic[..n] {
            return Err(DataError::Format(not_magic(self.bytes)));
        }
        self.take(magic.len(), "magic").map(|_| ())
    }

    pub fn array(&mut self, name: &str) -> Result<Array, DataError> {
        let rank = self.u32(&format!("{name} rank"))? as usize;
        if rank == 0 || rank > MAX_RANK {
            return Err(DataError::Format(format!(
                "{name} have rank {rank}; this build reads ranks 1 to {MAX_RANK}"
            )));
        }
        let dims_bytes = self.take(8 * rank, &format!("{name} dims"))?;
        let mut shape = Vec::with_capacity(rank);
        let mut count: u64 = 1;
        for c in dims_bytes.chunks_exact(8) {
            let d = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            count = count.checked_mul(d).ok_or_else(|| {
                DataError::Format(format!(
                    "{name} dims overflow (the file is corrupted or not a DataSet)"
                ))
            })?;
            shape.push(usize::try_from(d).map_err(|_| {
                DataError::Format(format!(
                    "{name} dimension {d} is too large for this platform"
                ))
            })?);
        }
        // Check the byte count against what remains before allocating anything.
        let n_bytes = count
            .checked_mul(4)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| DataError::Format(format!("{name} dims {shape:?} are too large")))?;
        let raw = self.take(n_bytes, name)?;
        // The values are really there; their decoded copy is checked against the native memory
        // budget and reserved fallibly.
        let mut data = ferrodl_memory::try_with_capacity(n_bytes / 4, || {
            format!("decoding the {name} (shape {shape:?})")
        })?;
        data.extend(
            raw.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        Ok(Array { shape, data })
    }

    /// Reads the end marker and checksum and checks that nothing follows; `what` names the
    /// contents in the trailing-bytes message ("DataSet", "MultiDataSet").
    pub fn trailer(&mut self, what: &str) -> Result<(), DataError> {
        if self.take(4, "end marker")? != END_MARKER {
            return Err(DataError::Format(
                "bad end marker (the file is corrupted)".into(),
            ));
        }
        let covered = self.pos;
        let stored = self.u32("checksum")?;
        let computed = crc32(&self.bytes[..covered]);
        if stored != computed {
            return Err(DataError::Format(format!(
                "checksum mismatch: stored 0x{stored:08x}, computed 0x{computed:08x} (the file is corrupted)"
            )));
        }
        if self.pos != self.bytes.len() {
            return Err(DataError::Format(format!(
                "{} unexpected bytes after the end of the {what}",
                self.bytes.len() - self.pos
            )));
        }
        Ok(())
    }
}
