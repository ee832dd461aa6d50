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
}

impl NnError {
    /// The message without the variant (what the Java exception carries).
    pub fn message(&self) -> &str {
        match self {
            NnError::InvalidConfig(m) | NnError::InvalidInput(m) | NnError::Shape(m) => m,
        }
    }
}

impl fmt::Display for NnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for NnError {}
