//! The one table mapping engine errors to Java exception classes (docs/ARCHITECTURE.md §6).

use ferrodl_data::DataError;
use ferrodl_nn::NnError;
use ferrodl_relay::RelayError;
use ferrodl_sharing::SharingError;
use std::fmt;

const PKG: &str = "org/ferrodl/exception/";

/// Everything that can go wrong in a native call, before it becomes a Java exception.
#[derive(Debug)]
pub enum FerroError {
    /// Engine errors: invalid configuration, bad input, shape mismatch.
    Nn(NnError),
    /// DataSet codec errors: malformed bytes or inconsistent shapes.
    Data(DataError),
    /// Gradient-sharing errors: configuration, relay connection, malformed messages.
    Sharing(SharingError),
    /// A bad argument detected in the facade itself (null array, negative dimension, ...).
    InvalidInput(String),
    /// Unknown or closed handle, poisoned state, internal inconsistency.
    State(String),
    /// A failed JNI call. When a Java exception is already pending it is left to propagate.
    Jni(jni::errors::Error),
}

impl FerroError {
    /// Fully qualified (slash-separated) Java class to throw.
    pub fn java_class(&self) -> String {
        let simple = match self {
            FerroError::Nn(NnError::InvalidConfig(_)) => "DL4JInvalidConfigException",
            FerroError::Nn(NnError::Memory(_))
            | FerroError::Data(DataError::Memory(_))
            | FerroError::Sharing(SharingError::Nn(NnError::Memory(_)))
            | FerroError::Sharing(SharingError::Relay(RelayError::Memory { .. })) => "NativeMemoryException",
            FerroError::Nn(_) => "DL4JInvalidInputException",
            FerroError::Data(DataError::Format(_)) => "DataSetFormatException",
            FerroError::Data(_) => "DL4JInvalidInputException",
            FerroError::Sharing(SharingError::Config(_)) => "DL4JInvalidConfigException",
            FerroError::Sharing(SharingError::Nn(NnError::InvalidConfig(_))) => {
                "DL4JInvalidConfigException"
            }
            FerroError::Sharing(SharingError::Nn(_)) => "DL4JInvalidInputException",
            FerroError::Sharing(SharingError::Relay(_)) => "RelayException",
            FerroError::Sharing(_) => "NativeStateException",
            FerroError::InvalidInput(_) => "DL4JInvalidInputException",
            FerroError::State(_) | FerroError::Jni(_) => "NativeStateException",
        };
        format!("{PKG}{simple}")
    }
}

impl fmt::Display for FerroError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FerroError::Nn(e) => write!(f, "{e}"),
            FerroError::Data(e) => write!(f, "{e}"),
            FerroError::Sharing(e) => write!(f, "{e}"),
            FerroError::InvalidInput(m) | FerroError::State(m) => f.write_str(m),
            FerroError::Jni(e) => write!(f, "JNI call failed: {e}"),
        }
    }
}

impl From<NnError> for FerroError {
    fn from(e: NnError) -> Self {
        FerroError::Nn(e)
    }
}

impl From<DataError> for FerroError {
    fn from(e: DataError) -> Self {
        FerroError::Data(e)
    }
}

impl From<SharingError> for FerroError {
    fn from(e: SharingError) -> Self {
        FerroError::Sharing(e)
    }
}

/// A refused native allocation of the facade itself (copies of Java arrays).
impl From<ferrodl_tensor::memory::MemoryError> for FerroError {
    fn from(e: ferrodl_tensor::memory::MemoryError) -> Self {
        FerroError::Nn(NnError::Memory(e))
    }
}

impl From<jni::errors::Error> for FerroError {
    fn from(e: jni::errors::Error) -> Self {
        FerroError::Jni(e)
    }
}

/// Class thrown for a caught panic.
pub const PANIC_CLASS: &str = "org/ferrodl/exception/NativePanicException";

pub type FerroResult<T> = Result<T, FerroError>;
