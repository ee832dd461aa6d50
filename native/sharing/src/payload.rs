//! What a worker sends through the relay and what the driver hands a connecting worker.
//!
//! Update payload: `iteration`, `epoch` (each an unsigned LEB128 varint, `ferrodl_comm::varint`:
//! 2–4 bytes together for any realistic fit, against 16 as two `u64`), then one encoded update
//! (docs/UPDATE_FORMAT.md).
//! Snapshot: `iteration u64 LE`, `epoch u64 LE`, `param_count u64 LE`, then `param_count` f32 LE.
//! The counters travel with the data so that a worker re-run by Spark resumes the driver's
//! iteration and epoch counters (learning-rate schedules and Adam's bias correction depend on them).

use crate::error::SharingError;

use ferrodl_comm::varint;

/// Prefixes `encoded` with the sender's counters into `out` (cleared first).
pub fn write_update(iteration: u64, epoch: u64, encoded: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(varint::len(iteration) + varint::len(epoch) + encoded.len());
    varint::put(out, iteration);
    varint::put(out, epoch);
    out.extend_from_slice(encoded);
}

/// Splits an update payload into `(iteration, epoch, encoded update)`.
pub fn read_update(payload: &[u8]) -> Result<(u64, u64, &[u8]), SharingError> {
    let mut pos = 0;
    let mut counter = |name: &str| {
        varint::get(payload, &mut pos).map_err(|e| {
            SharingError::Message(format!(
                "update payload of {} bytes: its {name} counter is {}",
                payload.len(),
                match e {
                    varint::VarintError::Truncated => "cut off",
                    varint::VarintError::Malformed => "not a minimal LEB128 varint",
                }
            ))
        })
    };
    let iteration = counter("iteration")?;
    let epoch = counter("epoch")?;
    Ok((iteration, epoch, &payload[pos..]))
}

/// The driver's state as sent to a connecting worker.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub iteration: u64,
    pub epoch: u64,
    pub params: Vec<f32>,
}

impl Snapshot {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + 4 * self.params.len());
        out.extend_from_slice(&self.iteration.to_le_bytes());
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.extend_from_slice(&(self.params.len() as u64).to_le_bytes());
        for p in &self.params {
            out.extend_from_slice(&p.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Snapshot, SharingError> {
        let bad = |m: String| SharingError::Message(format!("parameter snapshot: {m}"));
        if bytes.len() < 24 {
            return Err(bad(format!(
                "{} bytes, shorter than its 24-byte header",
                bytes.len()
            )));
        }
        let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let (iteration, epoch, n) = (word(0), word(8), word(16));
        let expected = n.checked_mul(4).and_then(|b| b.checked_add(24));
        if expected != Some(bytes.len() as u64) {
            return Err(bad(format!(
                "{} bytes, header says {n} parameters",
                bytes.len()
            )));
        }
        let mut params = ferrodl_memory::try_with_capacity(n as usize, || {
            format!("the parameter snapshot ({n} parameters)")
        })?;
        params.extend(
            bytes[24..]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))),
        );
        Ok(Snapshot {
            iteration,
            epoch,
            params,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_round_trip() {
        let mut out = vec![9u8; 3];
        write_update(7, 2, &[1, 2, 3], &mut out);
        assert_eq!(out, [7, 2, 1, 2, 3]);
        assert_eq!(read_update(&out).unwrap(), (7, 2, &[1u8, 2, 3][..]));
        write_update(300_000, 130, &[4], &mut out);
        assert_eq!(out.len(), 3 + 2 + 1);
        assert_eq!(read_update(&out).unwrap(), (300_000, 130, &[4u8][..]));
        assert_eq!(
            read_update(&out[..4]).unwrap_err().to_string(),
            "update payload of 4 bytes: its epoch counter is cut off"
        );
        assert!(read_update(&[0x80, 0x00, 1]).unwrap_err().to_string().contains("iteration"));
    }

    #[test]
    fn snapshot_round_trip_and_validation() {
        let s = Snapshot {
            iteration: 11,
            epoch: 3,
            params: vec![1.5, -2.25, f32::MIN_POSITIVE],
        };
        let b = s.to_bytes();
        assert_eq!(b.len(), 24 + 12);
        assert_eq!(Snapshot::from_bytes(&b).unwrap(), s);
        assert!(Snapshot::from_bytes(&b[..b.len() - 1])
            .unwrap_err()
            .to_string()
            .contains("3 parameters"));
        assert!(Snapshot::from_bytes(&b[..10]).is_err());
    }
}
