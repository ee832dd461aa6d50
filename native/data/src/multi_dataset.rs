//! The MultiDataSet format, version 1: any number of features and labels arrays (a graph's inputs
//! and outputs), each with an optional mask.

use crate::dataset::MAGIC;
use crate::wire::{encoded_array_len, put_array, put_trailer, Reader};
use crate::{Array, DataError};

/// File signature (8 bytes); differs from the DataSet one so neither reader misreads the other.
pub const MULTI_MAGIC: [u8; 8] = *b"FRDLMDST";
/// The only MultiDataSet format version this build reads and writes.
pub const MULTI_FORMAT_VERSION: u32 = 1;
/// Flag bit: one mask slot per features array follows the labels arrays.
pub const MULTI_FLAG_FEATURES_MASKS: u32 = 1;
/// Flag bit: one mask slot per labels array follows (after the features mask slots, if any).
pub const MULTI_FLAG_LABELS_MASKS: u32 = 2;
/// Most features (or labels) arrays one file may declare; a graph with more inputs than this is
/// not a realistic model, and the bound keeps a corrupted count from driving allocations.
pub const MAX_ARRAYS: usize = 1024;

/// Smallest encoding of one array (rank 1, dim 0): the floor used to check a declared count
/// against the bytes that remain.
const MIN_ARRAY_BYTES: usize = 4 + 8;

/// Features and labels of a set of examples for a network with several inputs and outputs.
///
/// `features_masks`, when present, has one slot per features array (`None` = that input has no
/// mask); the same for `labels_masks`. `None` for the whole list and a list of `None`s are
/// different values and both survive a round trip.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MultiDataSet {
    pub features: Vec<Array>,
    pub labels: Vec<Array>,
    pub features_masks: Option<Vec<Option<Array>>>,
    pub labels_masks: Option<Vec<Option<Array>>>,
}

impl MultiDataSet {
    /// Number of examples: rows of the first features array (else of the first labels array).
    pub fn rows(&self) -> usize {
        self.features
            .first()
            .or(self.labels.first())
            .map_or(0, Array::rows)
    }

    /// Checks array counts, every array's data length against its shape, mask lists against
    /// their arrays, and that all arrays have the same number of rows.
    pub fn validate(&self) -> Result<(), DataError> {
        for (what, n) in [
            ("features", self.features.len()),
            ("labels", self.labels.len()),
        ] {
            if n > MAX_ARRAYS {
                return Err(DataError::Shape(format!(
                    "{n} {what} arrays; at most {MAX_ARRAYS} are supported"
                )));
            }
        }
        for (what, masks, n) in [
            ("features", &self.features_masks, self.features.len()),
            ("labels", &self.labels_masks, self.labels.len()),
        ] {
            if let Some(m) = masks {
                if m.len() != n {
                    return Err(DataError::Shape(format!(
                        "{} {what} mask slots for {n} {what} arrays (one slot per array, null where there is no mask)",
                        m.len()
                    )));
                }
            }
        }
        let rows = self.rows();
        let all = named(self);
        for (name, a) in &all {
            a.validate(name)?;
            if a.rows() != rows {
                let first = if self.features.is_empty() {
                    "labels[0]"
                } else {
                    "features[0]"
                };
                return Err(DataError::Shape(format!(
                    "{name} have {} rows but {first} have {rows} rows",
                    a.rows()
                )));
            }
        }
        Ok(())
    }
}

/// Every present array with its name for messages ("features[1]", "labels mask[0]").
fn named(m: &MultiDataSet) -> Vec<(String, &Array)> {
    let mut out = Vec::new();
    for (i, a) in m.features.iter().enumerate() {
        out.push((format!("features[{i}]"), a));
    }
    for (i, a) in m.labels.iter().enumerate() {
        out.push((format!("labels[{i}]"), a));
    }
    for (what, masks) in [("features", &m.features_masks), ("labels", &m.labels_masks)] {
        for (i, a) in masks.iter().flatten().enumerate() {
            if let Some(a) = a {
                out.push((format!("{what} mask[{i}]"), a));
            }
        }
    }
    out
}

/// Serialises a MultiDataSet (after [`MultiDataSet::validate`]).
pub fn encode_multi(m: &MultiDataSet) -> Result<Vec<u8>, DataError> {
    m.validate()?;
    let mask_slots = |masks: &Option<Vec<Option<Array>>>| -> usize {
        masks
            .iter()
            .flatten()
            .map(|a| 1 + a.as_ref().map_or(0, encoded_array_len))
            .sum()
    };
    let len = 8
        + 4 * 4
        + m.features
            .iter()
            .chain(&m.labels)
            .map(encoded_array_len)
            .sum::<usize>()
        + mask_slots(&m.features_masks)
        + mask_slots(&m.labels_masks)
        + 8;
    let mut out = ferrodl_memory::try_with_capacity(len, || "encoding the MultiDataSet".into())?;
    out.extend_from_slice(&MULTI_MAGIC);
    out.extend_from_slice(&MULTI_FORMAT_VERSION.to_le_bytes());
    let mut flags = 0;
    if m.features_masks.is_some() {
        flags |= MULTI_FLAG_FEATURES_MASKS;
    }
    if m.labels_masks.is_some() {
        flags |= MULTI_FLAG_LABELS_MASKS;
    }
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&(m.features.len() as u32).to_le_bytes());
    out.extend_from_slice(&(m.labels.len() as u32).to_le_bytes());
    for a in m.features.iter().chain(&m.labels) {
        put_array(&mut out, a);
    }
    for slot in [&m.features_masks, &m.labels_masks]
        .into_iter()
        .flatten()
        .flatten()
    {
        match slot {
            None => out.push(0),
            Some(a) => {
                out.push(1);
                put_array(&mut out, a);
            }
        }
    }
    put_trailer(&mut out);
    debug_assert_eq!(out.len(), len);
    Ok(out)
}

fn read_count(r: &mut Reader<'_>, what: &str) -> Result<usize, DataError> {
    let n = r.u32(&format!("{what} count"))? as usize;
    if n > MAX_ARRAYS {
        return Err(DataError::Format(format!(
            "declares {n} {what} arrays; this build reads at most {MAX_ARRAYS} (the file is corrupted or not a MultiDataSet)"
        )));
    }
    Ok(n)
}

fn read_arrays(r: &mut Reader<'_>, n: usize, what: &str) -> Result<Vec<Array>, DataError> {
    // Never reserve more slots than the remaining bytes could hold.
    let mut out = Vec::with_capacity(n.min(r.remaining() / MIN_ARRAY_BYTES));
    for i in 0..n {
        out.push(r.array(&format!("{what}[{i}]"))?);
    }
    Ok(out)
}

fn read_mask_slots(
    r: &mut Reader<'_>,
    n: usize,
    what: &str,
) -> Result<Vec<Option<Array>>, DataError> {
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for i in 0..n {
        let name = format!("{what} mask[{i}]");
        match r.u8(&format!("{name} presence"))? {
            0 => out.push(None),
            1 => out.push(Some(r.array(&name)?)),
            b => {
                return Err(DataError::Format(format!(
                    "{name} presence byte is {b} (0 = absent or 1 = present expected; the file is corrupted)"
                )))
            }
        }
    }
    Ok(out)
}

/// Parses a MultiDataSet; any malformed input gives `DataError::Format` (never a panic), and a
/// well-formed file describing inconsistent shapes gives `DataError::Shape`.
pub fn decode_multi(bytes: &[u8]) -> Result<MultiDataSet, DataError> {
    let mut r = Reader::new(bytes);
    r.magic(&MULTI_MAGIC, |b| {
        if b.starts_with(&MAGIC) {
            "not a ferrodl MultiDataSet (bad magic): this is a DataSet file (DataSet.load reads it)"
                .into()
        } else {
            "not a ferrodl MultiDataSet (bad magic)".into()
        }
    })?;
    let version = r.u32("format version")?;
    if version != MULTI_FORMAT_VERSION {
        return Err(DataError::Format(format!(
            "unsupported MultiDataSet format version {version} (this build reads {MULTI_FORMAT_VERSION})"
        )));
    }
    let known = MULTI_FLAG_FEATURES_MASKS | MULTI_FLAG_LABELS_MASKS;
    let flags = r.u32("flags")?;
    if flags & !known != 0 {
        return Err(DataError::Format(format!(
            "unknown flags 0x{flags:08x} (this build knows 0x{known:08x})"
        )));
    }
    let n_features = read_count(&mut r, "features")?;
    let n_labels = read_count(&mut r, "labels")?;
    let features = read_arrays(&mut r, n_features, "features")?;
    let labels = read_arrays(&mut r, n_labels, "labels")?;
    let features_masks = if flags & MULTI_FLAG_FEATURES_MASKS != 0 {
        Some(read_mask_slots(&mut r, n_features, "features")?)
    } else {
        None
    };
    let labels_masks = if flags & MULTI_FLAG_LABELS_MASKS != 0 {
        Some(read_mask_slots(&mut r, n_labels, "labels")?)
    } else {
        None
    };
    r.trailer("MultiDataSet")?;
    let m = MultiDataSet {
        features,
        labels,
        features_masks,
        labels_masks,
    };
    m.validate()?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{crc32, decode, encode, DataSet};
    use ferrodl_testutil::Rng;

    fn arr(shape: &[usize], rng: &mut Rng) -> Array {
        let n = shape.iter().product();
        Array::new(
            shape.to_vec(),
            (0..n).map(|_| rng.next_gaussian() as f32).collect(),
        )
    }

    /// Two inputs (one CNN-shaped), two outputs; masks on the second input and first output only.
    fn sample(masks: bool) -> MultiDataSet {
        let mut rng = Rng::new(23);
        MultiDataSet {
            features: vec![arr(&[3, 4], &mut rng), arr(&[3, 2, 2, 2], &mut rng)],
            labels: vec![arr(&[3, 5], &mut rng), arr(&[3, 1], &mut rng)],
            features_masks: masks.then(|| vec![None, Some(arr(&[3, 2], &mut rng))]),
            labels_masks: masks.then(|| vec![Some(arr(&[3, 5], &mut rng)), None]),
        }
    }

    #[test]
    fn round_trip_with_and_without_masks() {
        for masks in [false, true] {
            let m = sample(masks);
            assert_eq!(decode_multi(&encode_multi(&m).unwrap()).unwrap(), m);
        }
        // A list of absent masks is not the same value as no list, and both survive.
        let mut m = sample(false);
        m.features_masks = Some(vec![None, None]);
        let back = decode_multi(&encode_multi(&m).unwrap()).unwrap();
        assert_eq!(back.features_masks, Some(vec![None, None]));
        assert_eq!(back.labels_masks, None);
        // No labels (inference data), zero examples, special values bit for bit.
        let m = MultiDataSet {
            features: vec![Array::new(vec![1, 3], vec![f32::NAN, -0.0, f32::INFINITY])],
            ..Default::default()
        };
        let back = decode_multi(&encode_multi(&m).unwrap()).unwrap();
        let bits: Vec<u32> = back.features[0].data.iter().map(|v| v.to_bits()).collect();
        let want: Vec<u32> = m.features[0].data.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, want);
        let empty = MultiDataSet {
            features: vec![
                Array::new(vec![0, 784], vec![]),
                Array::new(vec![0, 3], vec![]),
            ],
            labels: vec![Array::new(vec![0, 10], vec![])],
            ..Default::default()
        };
        assert_eq!(decode_multi(&encode_multi(&empty).unwrap()).unwrap(), empty);
        assert_eq!(
            decode_multi(&encode_multi(&MultiDataSet::default()).unwrap()).unwrap(),
            MultiDataSet::default()
        );
    }

    #[test]
    fn byte_layout_matches_the_documentation() {
        // The example of docs/DATASET_FORMAT.md: two inputs, one output, a mask on input 1 only.
        let m = MultiDataSet {
            features: vec![
                Array::new(vec![1, 2], vec![1.0, 2.0]),
                Array::new(vec![1], vec![3.0]),
            ],
            labels: vec![Array::new(vec![1], vec![0.5])],
            features_masks: Some(vec![None, Some(Array::new(vec![1], vec![1.0]))]),
            labels_masks: None,
        };
        let b = encode_multi(&m).unwrap();
        let mut want = Vec::new();
        want.extend_from_slice(b"FRDLMDST");
        want.extend_from_slice(&[1, 0, 0, 0]); // version 1
        want.extend_from_slice(&[1, 0, 0, 0]); // flags: features mask slots
        want.extend_from_slice(&[2, 0, 0, 0]); // 2 features arrays
        want.extend_from_slice(&[1, 0, 0, 0]); // 1 labels array
        want.extend_from_slice(&[2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0x40]); // 1.0, 2.0
        want.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x40, 0x40]); // 3.0
        want.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x3F]); // 0.5
        want.push(0); // features mask[0]: absent
        want.push(1); // features mask[1]: present
        want.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x80, 0x3F]); // 1.0
        want.extend_from_slice(b"DEND");
        assert_eq!(want.len(), 106);
        let crc = crc32(&want);
        want.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(b, want);
    }

    #[test]
    fn every_truncation_point_is_a_format_error() {
        for masks in [false, true] {
            let bytes = encode_multi(&sample(masks)).unwrap();
            for cut in 0..bytes.len() {
                match decode_multi(&bytes[..cut]) {
                    Err(DataError::Format(m)) => {
                        assert!(m.starts_with("truncated"), "cut {cut}: {m}")
                    }
                    other => panic!("cut at {cut} gave {other:?}"),
                }
            }
        }
        // Cut inside features[1]: 24 header + 68 (features[0]) + 4 rank + 32 dims + 5 data bytes.
        let bytes = encode_multi(&sample(false)).unwrap();
        assert_eq!(
            decode_multi(&bytes[..133]).unwrap_err(),
            DataError::Format("truncated: expected 96 bytes of features[1], found 5".into())
        );
    }

    #[test]
    fn garbage_never_panics_and_every_flipped_byte_is_noticed() {
        let mut rng = Rng::new(7);
        let valid = encode_multi(&sample(true)).unwrap();
        for i in 0..3000u32 {
            let len = rng.below(300) as usize;
            let mut g: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if i % 2 == 0 && g.len() >= 24 {
                // Valid header with small counts so decoding reaches the array and mask parsers.
                g[..8].copy_from_slice(&MULTI_MAGIC);
                g[8..12].copy_from_slice(&1u32.to_le_bytes());
                g[12..16].copy_from_slice(&((i / 2) % 4).to_le_bytes());
                g[16..20].copy_from_slice(&(i % 3).to_le_bytes());
                g[20..24].copy_from_slice(&((i / 3) % 3).to_le_bytes());
            }
            assert!(decode_multi(&g).is_err());
            let mut c = valid.clone();
            let at = rng.below(c.len() as u64) as usize;
            c[at] ^= 1 + (rng.next_u64() % 255) as u8;
            assert!(decode_multi(&c).is_err(), "flip at {at} went unnoticed");
        }
    }

    #[test]
    fn huge_declared_sizes_are_refused_before_allocating() {
        let header = |nf: u32, nl: u32| {
            let mut h = Vec::new();
            h.extend_from_slice(&MULTI_MAGIC);
            h.extend_from_slice(&1u32.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            h.extend_from_slice(&nf.to_le_bytes());
            h.extend_from_slice(&nl.to_le_bytes());
            h
        };
        assert_eq!(
            decode_multi(&header(u32::MAX, 1)).unwrap_err(),
            DataError::Format(
                "declares 4294967295 features arrays; this build reads at most 1024 (the file is corrupted or not a MultiDataSet)"
                    .into()
            )
        );
        assert!(decode_multi(&header(1, 1025))
            .unwrap_err()
            .to_string()
            .starts_with("declares 1025 labels arrays"));
        // 1024 declared arrays but no bytes: a truncation, found before reading any array data.
        assert_eq!(
            decode_multi(&header(1024, 0)).unwrap_err(),
            DataError::Format("truncated: expected 4 bytes of features[0] rank, found 0".into())
        );
        // A dimension of 2^40 x 2^20 floats is checked against the remaining bytes, not allocated.
        let mut h = header(1, 0);
        h.extend_from_slice(&2u32.to_le_bytes());
        h.extend_from_slice(&(1u64 << 40).to_le_bytes());
        h.extend_from_slice(&(1u64 << 20).to_le_bytes());
        assert!(matches!(decode_multi(&h), Err(DataError::Format(m))
            if m.starts_with("truncated: expected 4611686018427387904 bytes of features[0]")));
        h.truncate(h.len() - 8);
        h.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(
            matches!(decode_multi(&h), Err(DataError::Format(m)) if m.contains("features[0] dims overflow"))
        );
    }

    #[test]
    fn header_and_trailer_errors() {
        assert_eq!(
            decode_multi(b"PK\x03\x04hello").unwrap_err(),
            DataError::Format("not a ferrodl MultiDataSet (bad magic)".into())
        );
        // Each reader recognises the other format's file and says which loader reads it.
        let ds = DataSet {
            features: Array::new(vec![1, 1], vec![1.0]),
            labels: Array::new(vec![1, 1], vec![1.0]),
            ..Default::default()
        };
        assert!(decode_multi(&encode(&ds).unwrap())
            .unwrap_err()
            .to_string()
            .contains("this is a DataSet file"));
        assert!(decode(&encode_multi(&sample(false)).unwrap())
            .unwrap_err()
            .to_string()
            .contains("this is a MultiDataSet file"));
        let mut b = encode_multi(&sample(false)).unwrap();
        b[8] = 2;
        assert_eq!(
            decode_multi(&b).unwrap_err(),
            DataError::Format(
                "unsupported MultiDataSet format version 2 (this build reads 1)".into()
            )
        );
        let mut b = encode_multi(&sample(false)).unwrap();
        b[12] = 4;
        assert_eq!(
            decode_multi(&b).unwrap_err(),
            DataError::Format("unknown flags 0x00000004 (this build knows 0x00000003)".into())
        );
        let mut b = encode_multi(&sample(true)).unwrap();
        b.extend_from_slice(&[0, 0]);
        assert_eq!(
            decode_multi(&b).unwrap_err(),
            DataError::Format("2 unexpected bytes after the end of the MultiDataSet".into())
        );
        let mut b = encode_multi(&sample(true)).unwrap();
        let n = b.len();
        b[n - 12] ^= 0x01; // inside the last mask's data
        assert!(decode_multi(&b)
            .unwrap_err()
            .to_string()
            .starts_with("checksum mismatch"));
        // A presence byte other than 0/1, in an otherwise valid (re-checksummed) file.
        let m = MultiDataSet {
            features: vec![Array::new(vec![1], vec![1.0])],
            features_masks: Some(vec![None]),
            ..Default::default()
        };
        let mut b = encode_multi(&m).unwrap();
        let slot = b.len() - 9;
        assert_eq!(b[slot], 0);
        b[slot] = 2;
        b.truncate(b.len() - 4);
        let crc = crc32(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(
            decode_multi(&b).unwrap_err(),
            DataError::Format(
                "features mask[0] presence byte is 2 (0 = absent or 1 = present expected; the file is corrupted)"
                    .into()
            )
        );
    }

    #[test]
    fn shape_errors() {
        let mut m = sample(false);
        m.labels[1] = Array::new(vec![2, 1], vec![0.0; 2]);
        assert_eq!(
            encode_multi(&m).unwrap_err(),
            DataError::Shape("labels[1] have 2 rows but features[0] have 3 rows".into())
        );
        let mut m = sample(true);
        m.features[1].data.pop();
        assert_eq!(
            encode_multi(&m).unwrap_err(),
            DataError::Shape("features[1] have 23 values but shape [3, 2, 2, 2] needs 24".into())
        );
        let mut m = sample(true);
        m.labels_masks = Some(vec![None]);
        assert_eq!(
            encode_multi(&m).unwrap_err(),
            DataError::Shape(
                "1 labels mask slots for 2 labels arrays (one slot per array, null where there is no mask)"
                    .into()
            )
        );
        let mut m = sample(true);
        m.features_masks = Some(vec![None, Some(Array::new(vec![4, 2], vec![1.0; 8]))]);
        assert_eq!(
            encode_multi(&m).unwrap_err(),
            DataError::Shape("features mask[1] have 4 rows but features[0] have 3 rows".into())
        );
        let m = MultiDataSet {
            labels: vec![
                Array::new(vec![2], vec![0.0; 2]),
                Array::new(vec![1], vec![0.0]),
            ],
            ..Default::default()
        };
        assert_eq!(
            encode_multi(&m).unwrap_err(),
            DataError::Shape("labels[1] have 1 rows but labels[0] have 2 rows".into())
        );
        // A well-formed file with inconsistent rows decodes to a Shape error.
        let mut b = Vec::new();
        b.extend_from_slice(&MULTI_MAGIC);
        for v in [1u32, 0, 2, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for rows in [1u64, 2] {
            b.extend_from_slice(&1u32.to_le_bytes());
            b.extend_from_slice(&rows.to_le_bytes());
            for _ in 0..rows {
                b.extend_from_slice(&0f32.to_le_bytes());
            }
        }
        b.extend_from_slice(b"DEND");
        let crc = crc32(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(
            decode_multi(&b).unwrap_err(),
            DataError::Shape("features[1] have 2 rows but features[0] have 1 rows".into())
        );
    }
}
