//! The DataSet format, version 1: one features array, one labels array and up to two masks.

use crate::multi_dataset::MULTI_MAGIC;
pub use crate::wire::END_MARKER;
use crate::wire::{encoded_array_len, put_array, put_trailer, Reader};
use crate::{Array, DataError};

/// File signature (8 bytes).
pub const MAGIC: [u8; 8] = *b"FRDLDSET";
/// The only format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Flag bit: a features mask follows the labels.
pub const FLAG_FEATURES_MASK: u32 = 1;
/// Flag bit: a labels mask follows (after the features mask, if any).
pub const FLAG_LABELS_MASK: u32 = 2;

/// Features and labels of a set of examples, with optional masks.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DataSet {
    pub features: Array,
    pub labels: Array,
    pub features_mask: Option<Array>,
    pub labels_mask: Option<Array>,
}

impl DataSet {
    /// Checks every array's data length against its shape and that all arrays have the same
    /// number of rows (first dimension).
    pub fn validate(&self) -> Result<(), DataError> {
        let arrays = [
            ("features", Some(&self.features)),
            ("labels", Some(&self.labels)),
            ("features mask", self.features_mask.as_ref()),
            ("labels mask", self.labels_mask.as_ref()),
        ];
        for (name, a) in arrays {
            let Some(a) = a else { continue };
            a.validate(name)?;
            if a.rows() != self.features.rows() {
                return Err(DataError::Shape(format!(
                    "{name} have {} rows but features have {} rows",
                    a.rows(),
                    self.features.rows()
                )));
            }
        }
        Ok(())
    }
}

/// Serialises a DataSet (after [`DataSet::validate`]).
pub fn encode(ds: &DataSet) -> Result<Vec<u8>, DataError> {
    ds.validate()?;
    let masks = [&ds.features_mask, &ds.labels_mask];
    let len = 8
        + 4
        + 4
        + encoded_array_len(&ds.features)
        + encoded_array_len(&ds.labels)
        + masks
            .iter()
            .filter_map(|m| m.as_ref())
            .map(encoded_array_len)
            .sum::<usize>()
        + 8;
    let mut out = ferrodl_memory::try_with_capacity(len, || "encoding the DataSet".into())?;
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    let mut flags = 0;
    if ds.features_mask.is_some() {
        flags |= FLAG_FEATURES_MASK;
    }
    if ds.labels_mask.is_some() {
        flags |= FLAG_LABELS_MASK;
    }
    out.extend_from_slice(&flags.to_le_bytes());
    put_array(&mut out, &ds.features);
    put_array(&mut out, &ds.labels);
    for m in masks.into_iter().flatten() {
        put_array(&mut out, m);
    }
    put_trailer(&mut out);
    debug_assert_eq!(out.len(), len);
    Ok(out)
}

/// Parses a DataSet; any malformed input gives `DataError::Format` (never a panic), and a
/// well-formed file describing inconsistent shapes gives `DataError::Shape`.
pub fn decode(bytes: &[u8]) -> Result<DataSet, DataError> {
    let mut r = Reader::new(bytes);
    r.magic(&MAGIC, |b| {
        if b.starts_with(&MULTI_MAGIC) {
            "not a ferrodl DataSet (bad magic): this is a MultiDataSet file (MultiDataSet.load reads it)"
                .into()
        } else {
            "not a ferrodl DataSet (bad magic)".into()
        }
    })?;
    let version = r.u32("format version")?;
    if version != FORMAT_VERSION {
        return Err(DataError::Format(format!(
            "unsupported format version {version} (this build reads {FORMAT_VERSION})"
        )));
    }
    let flags = r.u32("flags")?;
    if flags & !(FLAG_FEATURES_MASK | FLAG_LABELS_MASK) != 0 {
        return Err(DataError::Format(format!(
            "unknown flags 0x{flags:08x} (this build knows 0x00000003)"
        )));
    }
    let features = r.array("features")?;
    let labels = r.array("labels")?;
    let features_mask = if flags & FLAG_FEATURES_MASK != 0 {
        Some(r.array("features mask")?)
    } else {
        None
    };
    let labels_mask = if flags & FLAG_LABELS_MASK != 0 {
        Some(r.array("labels mask")?)
    } else {
        None
    };
    r.trailer("DataSet")?;
    let ds = DataSet {
        features,
        labels,
        features_mask,
        labels_mask,
    };
    ds.validate()?;
    Ok(ds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crc32;
    use ferrodl_testutil::Rng;

    fn arr(shape: &[usize], rng: &mut Rng) -> Array {
        let n = shape.iter().product();
        Array::new(
            shape.to_vec(),
            (0..n).map(|_| rng.next_gaussian() as f32).collect(),
        )
    }

    fn sample(fm: bool, lm: bool) -> DataSet {
        let mut rng = Rng::new(17);
        DataSet {
            features: arr(&[4, 3, 2], &mut rng),
            labels: arr(&[4, 5], &mut rng),
            features_mask: fm.then(|| arr(&[4, 2], &mut rng)),
            labels_mask: lm.then(|| arr(&[4, 1], &mut rng)),
        }
    }

    #[test]
    fn round_trip_with_and_without_masks() {
        for fm in [false, true] {
            for lm in [false, true] {
                let ds = sample(fm, lm);
                let bytes = encode(&ds).unwrap();
                assert_eq!(decode(&bytes).unwrap(), ds);
            }
        }
        // Special values survive bit for bit; empty DataSets are allowed.
        let ds = DataSet {
            features: Array::new(vec![1, 3], vec![f32::NAN, -0.0, f32::INFINITY]),
            labels: Array::new(vec![1, 1], vec![f32::MIN_POSITIVE]),
            ..Default::default()
        };
        let back = decode(&encode(&ds).unwrap()).unwrap();
        let bits = |a: &Array| a.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.features), bits(&ds.features));
        let empty = DataSet {
            features: Array::new(vec![0, 784], vec![]),
            labels: Array::new(vec![0, 10], vec![]),
            ..Default::default()
        };
        assert_eq!(decode(&encode(&empty).unwrap()).unwrap(), empty);
    }

    #[test]
    fn byte_layout_matches_the_documentation() {
        let ds = DataSet {
            features: Array::new(vec![1, 2], vec![1.0, 2.0]),
            labels: Array::new(vec![1], vec![0.5]),
            features_mask: None,
            labels_mask: Some(Array::new(vec![1], vec![1.0])),
        };
        let b = encode(&ds).unwrap();
        let mut want = Vec::new();
        want.extend_from_slice(b"FRDLDSET");
        want.extend_from_slice(&[1, 0, 0, 0]); // version 1
        want.extend_from_slice(&[2, 0, 0, 0]); // flags: labels mask
        want.extend_from_slice(&[2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0x40]); // 1.0, 2.0
        want.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x3F]);
        want.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x80, 0x3F]);
        want.extend_from_slice(b"DEND");
        let crc = crc32(&want);
        want.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(b, want);
        // Standard CRC-32 check value.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn every_truncation_point_is_a_format_error() {
        for (fm, lm) in [(false, false), (true, true)] {
            let bytes = encode(&sample(fm, lm)).unwrap();
            for cut in 0..bytes.len() {
                match decode(&bytes[..cut]) {
                    Err(DataError::Format(m)) => {
                        assert!(
                            m.starts_with("truncated") || (cut < 8 && m.contains("bad magic")),
                            "cut {cut}: {m}"
                        );
                    }
                    other => panic!("cut at {cut} gave {other:?}"),
                }
            }
        }
        let bytes = encode(&sample(false, false)).unwrap();
        // Cut inside the features data: 16 header + 4 rank + 24 dims + 10 data bytes.
        assert_eq!(
            decode(&bytes[..54]).unwrap_err(),
            DataError::Format("truncated: expected 96 bytes of features, found 10".into())
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut rng = Rng::new(5);
        let valid = encode(&sample(true, true)).unwrap();
        for i in 0..3000 {
            let len = rng.below(200) as usize;
            let mut g: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if i % 2 == 0 && g.len() >= 16 {
                // Valid header so decoding reaches the array parser.
                g[..8].copy_from_slice(&MAGIC);
                g[8..12].copy_from_slice(&1u32.to_le_bytes());
                g[12..16].copy_from_slice(&((i as u32 / 2) % 4).to_le_bytes());
            }
            assert!(decode(&g).is_err());
            // Single corrupted byte of a valid file: always detected.
            let mut c = valid.clone();
            let at = rng.below(c.len() as u64) as usize;
            c[at] ^= 1 + (rng.next_u64() % 255) as u8;
            assert!(decode(&c).is_err(), "flip at {at} went unnoticed");
        }
        // Huge dims are rejected before any allocation.
        let mut h = Vec::new();
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&1u32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&2u32.to_le_bytes());
        h.extend_from_slice(&(1u64 << 40).to_le_bytes());
        h.extend_from_slice(&(1u64 << 20).to_le_bytes());
        assert!(matches!(decode(&h), Err(DataError::Format(m)) if m.starts_with("truncated")));
        h.truncate(h.len() - 8);
        h.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(decode(&h), Err(DataError::Format(m)) if m.contains("overflow")));
    }

    #[test]
    fn header_errors() {
        assert_eq!(
            decode(b"PK\x03\x04hello").unwrap_err(),
            DataError::Format("not a ferrodl DataSet (bad magic)".into())
        );
        let mut b = encode(&sample(false, false)).unwrap();
        b[8] = 7;
        assert_eq!(
            decode(&b).unwrap_err(),
            DataError::Format("unsupported format version 7 (this build reads 1)".into())
        );
        let mut b = encode(&sample(false, false)).unwrap();
        b[12] = 4;
        assert!(decode(&b)
            .unwrap_err()
            .to_string()
            .starts_with("unknown flags"));
        let mut b = encode(&sample(false, false)).unwrap();
        b.push(0);
        assert_eq!(
            decode(&b).unwrap_err(),
            DataError::Format("1 unexpected bytes after the end of the DataSet".into())
        );
        let mut b = encode(&sample(false, false)).unwrap();
        let n = b.len();
        b[n - 20] ^= 0x40; // inside the labels data
        assert!(decode(&b)
            .unwrap_err()
            .to_string()
            .starts_with("checksum mismatch"));
    }

    #[test]
    fn shape_errors() {
        let mut ds = sample(false, false);
        ds.labels = Array::new(vec![3, 5], vec![0.0; 15]);
        assert_eq!(
            encode(&ds).unwrap_err(),
            DataError::Shape("labels have 3 rows but features have 4 rows".into())
        );
        let mut ds = sample(false, false);
        ds.features.data.pop();
        assert_eq!(
            encode(&ds).unwrap_err(),
            DataError::Shape("features have 23 values but shape [4, 3, 2] needs 24".into())
        );
        let mut ds = sample(false, true);
        ds.labels_mask = Some(Array::new(vec![2, 1], vec![1.0; 2]));
        assert!(
            matches!(encode(&ds), Err(DataError::Shape(m)) if m.starts_with("labels mask have 2 rows"))
        );
        let mut ds = sample(false, false);
        ds.features = Array::new(vec![], vec![1.0]);
        assert!(matches!(encode(&ds), Err(DataError::Shape(m)) if m.contains("rank 0")));

        // A well-formed file with inconsistent rows decodes to a Shape error.
        let mut b = Vec::new();
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        for rows in [1u64, 2] {
            b.extend_from_slice(&1u32.to_le_bytes());
            b.extend_from_slice(&rows.to_le_bytes());
            for _ in 0..rows {
                b.extend_from_slice(&0f32.to_le_bytes());
            }
        }
        b.extend_from_slice(&END_MARKER);
        let crc = crc32(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        assert!(matches!(decode(&b), Err(DataError::Shape(_))));
    }
}
