//! ferrodl-data: the binary formats of a DataSet and of a MultiDataSet (specified in
//! `docs/DATASET_FORMAT.md`).
//!
//! ```text
//! DataSet      = "FRDLDSET" | u32 version | u32 flags | features | labels | [fmask] | [lmask]
//!                | "DEND" | u32 CRC-32 of everything before it
//! MultiDataSet = "FRDLMDST" | u32 version | u32 flags | u32 nF | u32 nL | nF arrays | nL arrays
//!                | [nF optional masks] | [nL optional masks] | "DEND" | u32 CRC-32
//! array        = u32 rank | rank × u64 dims | prod(dims) × f32
//! ```
//! All integers and floats are little-endian. Decoding never panics and never allocates more than
//! the input can hold: every length is checked against the bytes that remain first.

mod dataset;
mod multi_dataset;
mod wire;

pub use dataset::{
    decode, encode, DataSet, END_MARKER, FLAG_FEATURES_MASK, FLAG_LABELS_MASK, FORMAT_VERSION,
    MAGIC,
};
pub use multi_dataset::{
    decode_multi, encode_multi, MultiDataSet, MAX_ARRAYS, MULTI_FLAG_FEATURES_MASKS,
    MULTI_FLAG_LABELS_MASKS, MULTI_FORMAT_VERSION, MULTI_MAGIC,
};
pub use wire::crc32;

use std::fmt;

/// Largest accepted array rank (the reference's arrays have at most 5 dimensions).
pub const MAX_RANK: usize = 8;

/// Errors of the encoders and decoders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataError {
    /// The bytes are not a valid file (bad magic, truncation, checksum, version...).
    Format(String),
    /// Array shapes are inconsistent (data length vs dims, rows of labels vs features...).
    Shape(String),
    /// Decoding needs more native memory than the budget allows (`ferrodl_memory`).
    Memory(ferrodl_memory::MemoryError),
}

impl From<ferrodl_memory::MemoryError> for DataError {
    fn from(e: ferrodl_memory::MemoryError) -> Self {
        DataError::Memory(e)
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataError::Format(m) | DataError::Shape(m) => f.write_str(m),
            DataError::Memory(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DataError {}

/// A dense `f32` array, row-major (C order), `data.len() == shape.iter().product()`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

impl Array {
    pub fn new(shape: Vec<usize>, data: Vec<f32>) -> Self {
        Array { shape, data }
    }

    /// Size of the first dimension (number of examples).
    pub fn rows(&self) -> usize {
        self.shape.first().copied().unwrap_or(0)
    }

    /// Checks the rank (1 to [`MAX_RANK`]) and that the data length is the product of the dims;
    /// `name` starts the error message ("features have ...").
    pub fn validate(&self, name: &str) -> Result<(), DataError> {
        if self.shape.is_empty() || self.shape.len() > MAX_RANK {
            return Err(DataError::Shape(format!(
                "{name} have rank {} (shape {:?}); a rank from 1 to {MAX_RANK} is required",
                self.shape.len(),
                self.shape
            )));
        }
        let n = self
            .shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d));
        if n != Some(self.data.len()) {
            return Err(DataError::Shape(format!(
                "{name} have {} values but shape {:?} needs {}",
                self.data.len(),
                self.shape,
                n.map_or_else(|| "more than usize::MAX".to_string(), |n| n.to_string())
            )));
        }
        Ok(())
    }
}
