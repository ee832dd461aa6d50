//! The engine's error type; the JNI facade maps each variant to a Java exception class
//! (ARCHITECTURE.md §6), using the `Display` text as the exception message.

use std::fmt;

/// Errors of configuration parsing, network construction and training calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NnError {
    /// The configuration JSON is malformed or describes an impossible network.
    InvalidConfig(String),
    /// A call received bad data (no rows, NaN/infinite values, wrong vector length).
    InvalidInput(String),
    /// Array dimensions do not fit the network (e.g. features width != nIn).
    Shape(String),
    /// A request for native memory past the budget (or a size that overflows).
    Memory(ferrodl_tensor::memory::MemoryError),
}

impl NnError {
    /// The message without the variant (what the Java exception carries).
    pub fn message(&self) -> String {
        match self {
            NnError::InvalidConfig(m) | NnError::InvalidInput(m) | NnError::Shape(m) => m.clone(),
            NnError::Memory(e) => e.to_string(),
        }
    }
}

impl fmt::Display for NnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NnError::InvalidConfig(m) | NnError::InvalidInput(m) | NnError::Shape(m) => {
                f.write_str(m)
            }
            NnError::Memory(e) => write!(f, "{e}"),
        }
    }
}

impl From<ferrodl_tensor::memory::MemoryError> for NnError {
    fn from(e: ferrodl_tensor::memory::MemoryError) -> Self {
        NnError::Memory(e)
    }
}

impl std::error::Error for NnError {}
