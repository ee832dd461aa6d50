//! Errors of gradient-sharing training.

use std::fmt;

#[derive(Debug)]
pub enum SharingError {
    /// A bad worker or relay configuration (names the field).
    Config(String),
    /// The network refused the configuration or a minibatch.
    Nn(ferrodl_nn::NnError),
    /// Encoding failed (e.g. a NaN in an update) or a relayed message was malformed.
    Codec(ferrodl_comm::CodecError),
    /// Connecting to, or talking with, the relay failed (the message names host and port).
    Relay(ferrodl_relay::RelayError),
    /// A malformed payload or snapshot.
    Message(String),
}

impl fmt::Display for SharingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharingError::Config(m) => write!(f, "gradient sharing configuration: {m}"),
            SharingError::Nn(e) => write!(f, "{e}"),
            SharingError::Codec(e) => write!(f, "{e}"),
            SharingError::Relay(e) => write!(f, "{e}"),
            SharingError::Message(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SharingError {}

impl From<ferrodl_nn::NnError> for SharingError {
    fn from(e: ferrodl_nn::NnError) -> Self {
        SharingError::Nn(e)
    }
}

impl From<ferrodl_comm::CodecError> for SharingError {
    fn from(e: ferrodl_comm::CodecError) -> Self {
        SharingError::Codec(e)
    }
}

impl From<ferrodl_relay::RelayError> for SharingError {
    fn from(e: ferrodl_relay::RelayError) -> Self {
        SharingError::Relay(e)
    }
}

/// A refused native allocation (a buffer sized by the network) is the network's memory error.
impl From<ferrodl_memory::MemoryError> for SharingError {
    fn from(e: ferrodl_memory::MemoryError) -> Self {
        SharingError::Nn(ferrodl_nn::NnError::Memory(e))
    }
}
