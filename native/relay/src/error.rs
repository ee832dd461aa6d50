//! The one error type of the crate. Every message names the relay's `host:port` (or, for a
//! bind failure, the host and the port range tried) so that a Spark log line is actionable.

use std::fmt;
use std::time::Duration;

/// What went wrong talking to (or starting) a relay. `Clone` so that a failure seen by a
/// background thread can be handed to every later caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelayError {
    /// Invalid configuration (secret too short, zero limits, ...). `addr` is the address the
    /// configuration was for, when known.
    Config { addr: String, detail: String },
    /// The relay could not bind a listening socket.
    Bind { addr: String, detail: String },
    /// `host:port` did not resolve to any socket address.
    Resolve { addr: String, detail: String },
    /// The TCP connect did not complete within the connect timeout.
    ConnectTimeout { addr: String, after: Duration },
    /// The TCP connect failed (refused, unreachable, ...).
    Connect { addr: String, detail: String },
    /// The relay refused our credentials: wrong secret, or a relay of another fit.
    AuthFailed { addr: String },
    /// The peer answered, but could not prove it knows the secret: not the real relay.
    Impostor { addr: String },
    /// The peer does not speak this protocol (wrong magic, unsupported version, bad frame).
    Protocol { addr: String, detail: String },
    /// A message larger than `max_message_bytes` (sent or received).
    TooLarge {
        addr: String,
        size: usize,
        max: usize,
    },
    /// No data from the peer within the I/O timeout (heartbeats included): the peer is gone.
    Timeout {
        addr: String,
        what: String,
        after: Duration,
    },
    /// An I/O error on the connection (reset, broken pipe, ...).
    Io {
        addr: String,
        what: String,
        detail: String,
    },
    /// The relay closed the connection, possibly after telling us why.
    Closed { addr: String, reason: String },
    /// The relay is shutting down and no longer accepts workers.
    Unavailable { addr: String },
    /// A frame or snapshot the peer announced needs more native memory than the budget allows
    /// (`ferrodl_memory`); refused before anything was allocated.
    Memory {
        addr: String,
        error: ferrodl_memory::MemoryError,
    },
    /// A newer attempt of this partition is connected; the newest attempt wins.
    Superseded {
        addr: String,
        partition: u32,
        attempt: u32,
    },
}

/// Formats a duration the way people read it in a log: "10 s", "250 ms", "1.5 s".
pub(crate) fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 1000 && d.subsec_millis() == 0 {
        format!("{} s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1} s", d.as_secs_f64())
    } else if ms > 0 {
        format!("{ms} ms")
    } else {
        format!("{} µs", d.as_micros())
    }
}

impl fmt::Display for RelayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelayError::Config { addr, detail } => write!(f, "relay {addr}: invalid configuration: {detail}"),
            RelayError::Bind { addr, detail } => write!(f, "relay {addr}: cannot listen: {detail}"),
            RelayError::Resolve { addr, detail } => {
                write!(f, "relay {addr}: cannot resolve address: {detail}")
            }
            RelayError::ConnectTimeout { addr, after } => {
                write!(f, "relay {addr}: connect timed out after {}", human(*after))
            }
            RelayError::Connect { addr, detail } => write!(f, "relay {addr}: connect failed: {detail}"),
            RelayError::AuthFailed { addr } => write!(f, "relay {addr}: authentication failed (wrong secret?)"),
            RelayError::Impostor { addr } => write!(
                f,
                "relay {addr}: the peer could not prove it knows the secret (not the relay of this fit?)"
            ),
            RelayError::Protocol { addr, detail } => write!(f, "relay {addr}: protocol error: {detail}"),
            RelayError::TooLarge { addr, size, max } => write!(
                f,
                "relay {addr}: message of {size} bytes exceeds max_message_bytes ({max})"
            ),
            RelayError::Timeout { addr, what, after } => {
                write!(f, "relay {addr}: {what} timed out after {}", human(*after))
            }
            RelayError::Io { addr, what, detail } => write!(f, "relay {addr}: {what} failed: {detail}"),
            RelayError::Closed { addr, reason } => write!(f, "relay {addr}: connection closed: {reason}"),
            RelayError::Unavailable { addr } => {
                write!(f, "relay {addr}: the relay is shutting down and accepts no more workers")
            }
            RelayError::Memory { addr, error } => write!(f, "relay {addr}: {error}"),
            RelayError::Superseded {
                addr,
                partition,
                attempt,
            } => write!(
                f,
                "relay {addr}: partition {partition} attempt {attempt} refused: a newer attempt \
                 of this partition is connected (the newest attempt wins)"
            ),
        }
    }
}

impl std::error::Error for RelayError {}
