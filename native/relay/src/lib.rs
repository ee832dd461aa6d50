//! ferrodl-relay: the driver-hosted TCP hub of gradient sharing, no JNI.
//!
//! The driver of a fit starts a [`Relay`] on a free port; every worker (a Spark task, possibly
//! re-run on another host) connects with a [`RelayClient`]. Each update a worker sends is
//! (1) applied by the relay to the driver's master copy through [`MasterState::apply`] and
//! (2) forwarded to every *other* connected worker — unless the state answers every worker with
//! messages of its own instead ([`MasterState::forwards_updates`], [`MasterState::take_broadcasts`]:
//! parameter averaging's round averages from three workers on). Payloads are opaque bytes here.
//!
//! # Protocol (version 2; also `docs/RELAY_PROTOCOL.md`, which is the reference)
//!
//! All integers are big-endian.
//!
//! **Handshake** (before any update is read; every pending handshake is a socket in the one
//! accept loop's readiness poll — no thread — with an absolute `handshake_timeout` deadline, and
//! past `max_pending_handshakes` the oldest pending one is evicted; see `handshake.rs`):
//!
//! 1. relay → client `HELLO`: `"FDLRELAY"`, version `u16`, 32-byte random relay nonce.
//! 2. client → relay `AUTH`: `"FDLRAUTH"`, version `u16`, 32-byte random client nonce, partition
//!    `u32`, attempt `u32`, heartbeat wish `u32` (ms), flags `u8` (`0x01`: sealed frames), then
//!    `HMAC-SHA256(secret, "ferrodl-relay/v3/client-auth\0" || relay_nonce || client_nonce ||
//!    partition || attempt || flags)`.
//! 3. The relay verifies the tag in constant time. On failure it sends the verdict byte `0x00`
//!    (`0x02` for a malformed/other-version AUTH, `0x03` when shutting down, `0x04` when a newer
//!    attempt of the same partition is connected) and closes; the connection counts in
//!    [`RelayStats::connections_rejected`].
//! 4. On success: verdict `0x01`, then the relay's own proof `HMAC-SHA256(secret,
//!    "ferrodl-relay/v3/relay-auth\0" || relay_nonce || client_nonce || partition || attempt ||
//!    flags)`
//!    (the client checks it in constant time: it reached the real relay, not an impostor), the
//!    relay's heartbeat wish `u32` (ms), then the snapshot: length `u64` and the bytes of
//!    [`MasterState::snapshot`] (sealed: in chunks of at most 1 MiB, each followed by its tag).
//!
//! Each side sends a PING after `min(own io_timeout / 3, peer's wish)` of idleness, so peers
//! with different `io_timeout`s still hear from each other in time (the wishes are not covered
//! by the tags: they only tune heartbeats).
//!
//! Both nonces are fresh per connection, so a recorded handshake cannot be replayed, and the
//! two domain tags differ, so one side's proof can never be reflected back as the other's.
//!
//! **Frames** after the handshake: `type u8, length u32, payload`. A length above
//! `max_message_bytes` is refused before anything is allocated.
//!
//! | type | direction | payload |
//! |------|-----------|---------|
//! | `0x01` UPDATE | worker → relay | one encoded update |
//! | `0x02` FINISH | worker → relay | empty: no more updates |
//! | `0x03` PING | both | empty heartbeat, sent after the negotiated idle period |
//! | `0x11` RELAYED | relay → worker | an update of another worker |
//! | `0x12` FINISH_ACK | relay → worker | empty: every update of this worker is applied |
//! | `0x13` ERROR | relay → worker | UTF-8 reason; the relay then closes |
//! | `0x04` STALL | worker → relay | UTF-8 report of a worker that made no progress |
//!
//! **Relay, per connection**: a reader thread handles frames in order. For an UPDATE it reads
//! the payload into one buffer, applies it under the state lock, and — under the same lock —
//! picks the other live connections as destinations; then it pushes one shared
//! `Arc` of that buffer to each destination's bounded queue (blocking at most `io_timeout`:
//! back-pressure to the sender; a destination still full after that is disconnected and its
//! undelivered messages count as `messages_dropped_outbound`). A writer thread drains the queue
//! to the socket. Because a new connection takes its snapshot and registers under that same
//! lock, every update is either in its snapshot or forwarded to it — never both, never neither.
//! On FINISH every earlier update is already applied (in-order handling); the relay stops
//! forwarding to the worker, waits for forwards already aimed at it to be queued, and answers
//! FINISH_ACK, so the worker has also received every update applied before its FINISH.
//!
//! **Client**: a reader thread always drains the socket (calling `on_message`), so a worker can
//! never deadlock the relay; a writer thread drains a bounded queue (back-pressure in
//! [`RelayClient::send`]). Both sides treat `io_timeout` without any frame (heartbeats included)
//! as a dead peer.
//!
//! **Memory** is bounded by the per-connection queues (`queue_limit_messages` each, payloads
//! shared between destinations) and one read buffer per connection; nothing grows with the
//! number of iterations.
//!
//! **Attempts**: the newest attempt of a partition wins. When attempt `a` of partition `p`
//! authenticates, every live connection of `p` (attempt `<= a`) is unregistered, marked
//! superseded under the state lock (so none of its later updates is applied: they count in
//! `messages_dropped`), sent an ERROR frame naming the newer attempt and closed; it counts in
//! [`RelayStats::connections_superseded`], not in `connections_aborted`. An attempt older than a
//! live one of its partition is refused with verdict `0x04`. (Spark runs a speculative copy of a
//! slow task, or re-runs a task whose executor it lost while the old one may still be talking;
//! two live attempts would apply the same data twice.) An attempt that connects after an older
//! one *finished* is accepted: Spark re-runs a finished task only when its result was lost, and
//! refusing would fail the fit, while training the partition's data twice is harmless.
//!
//! **Faults**: a connection that drops mid-frame has the partial frame discarded and counted
//! in `messages_dropped`; the partition may connect again (next attempt), receives a fresh
//! snapshot, and counts in `reconnects`.
//!
//! Threads are named `ferrodl-relay-accept`, `ferrodl-relay-handshake` (admission of an
//! authenticated connection),
//! `ferrodl-relay-conn-<partition>-r|w` and `ferrodl-relay-client-<partition>-r|w`; all are
//! joined by [`Relay::shutdown`] / drop and [`RelayClient::finish`] / drop. There is no global
//! state: two relays in one process are independent.
//!
//! The handshake authenticates both ends. With [`RelayConfig::encrypt`] every frame after it (and
//! the snapshot) is sealed with ChaCha20-Poly1305 under per-connection, per-direction keys and
//! sequence-number nonces (`seal.rs`): confidential, authenticated, and refused when replayed,
//! reordered or dropped. Without it frames are neither encrypted nor individually
//! authenticated: the secret keeps strangers out but not an attacker on the network path.
//! A worker's STALL frame (`0x04`, a UTF-8 report) is recorded in [`RelayStats::stalls`].

mod client;
mod error;
mod handshake;
mod proto;
mod relay;
mod seal;
mod snapshot;
mod spare;
mod tree;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use client::{OnMessage, OnPayload, RelayClient};
pub use error::RelayError;
pub use relay::{Relay, UPSTREAM_WORKER};
pub use snapshot::{SnapshotBytes, SnapshotPart};
pub use spare::SpareBuffers;
pub use tree::{TreeNode, TREE_NODE_PARTITION_BASE};

/// Largest STALL report (longer ones are cut by the client).
pub const MAX_STALL_REPORT_BYTES: usize = proto::MAX_ERROR_LEN;

/// The driver's master copy, implemented by the caller (decodes the payload and subtracts it
/// from the parameters). Calls are serialized by the relay.
pub trait MasterState: Send + 'static {
    /// Applies one update; an `Err` means the payload was invalid: the relay counts it as
    /// dropped, logs, and closes that worker's connection.
    fn apply(&mut self, worker: WorkerId, payload: &[u8]) -> Result<(), String>;
    /// Current state (parameters + counters), opaque bytes sent to every worker when it
    /// connects (a re-run task starts from it). Called under the state lock for every connect:
    /// share what did not change since the last call (`Arc` parts) rather than copy it.
    fn snapshot(&self) -> SnapshotBytes;
    /// Whether each applied update is forwarded to every other connected worker (the default).
    /// A state that answers updates with messages of its own ([`MasterState::take_broadcasts`])
    /// may turn forwarding off.
    fn forwards_updates(&self) -> bool {
        true
    }
    /// Messages of the state's own for every live connection (the update's sender included),
    /// taken right after each applied update under the same lock: ordered with every new
    /// connection's snapshot exactly as a forwarded update is. Default: none.
    fn take_broadcasts(&mut self) -> Vec<Arc<Vec<u8>>> {
        Vec::new()
    }
    /// Takes a worker's final state, sent with its FINISH after its last update (e.g. its
    /// updater state, which the driver averages): an `Err` refuses it like an invalid update.
    /// By default only an empty state is accepted.
    fn finish(&mut self, worker: WorkerId, state: &[u8]) -> Result<(), String> {
        let _ = worker;
        if state.is_empty() {
            Ok(())
        } else {
            Err(format!("this relay takes no final state ({} bytes sent)", state.len()))
        }
    }
}

/// A worker: Spark partition index and attempt number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkerId {
    pub partition: u32,
    pub attempt: u32,
}

/// Upper bound of `queue_limit_messages` (queues are preallocated).
pub const MAX_QUEUE_LIMIT: usize = 1 << 20;

/// Receives the relay's log lines (dropped connections, rejected strangers). Default: stderr.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Configuration of a [`Relay`].
#[derive(Clone)]
pub struct RelayConfig {
    /// Interface to listen on, e.g. "0.0.0.0" or "127.0.0.1".
    pub bind_host: String,
    /// `None`: any free port. `Some((lo, hi))`: the first free port in the inclusive range.
    pub port_range: Option<(u16, u16)>,
    /// Per-fit random secret, at least 16 bytes, generated by the caller.
    pub secret: Vec<u8>,
    /// Larger frames are refused: the connection is closed and the message counted as dropped.
    pub max_message_bytes: usize,
    /// The largest final state a worker may send with its FINISH (0: none; a larger one ends the
    /// connection like a too-large update).
    pub max_final_state_bytes: usize,
    /// Bound of each connection's outbound queue (messages, at most [`MAX_QUEUE_LIMIT`]).
    pub queue_limit_messages: usize,
    /// Read/write timeout; also how long a full destination queue may block a forward before
    /// that destination is dropped, and how long a peer may stay silent (heartbeats included).
    pub io_timeout: Duration,
    /// A connection that has not authenticated within this (an absolute deadline from accept)
    /// is closed.
    pub handshake_timeout: Duration,
    /// At most this many handshakes are pending at once (each is a socket in the accept loop's
    /// poll, no thread); a new connection beyond that evicts the oldest pending one.
    pub max_pending_handshakes: usize,
    /// Seal every frame after the handshake (and the snapshot) with ChaCha20-Poly1305 under
    /// per-connection keys derived from the secret (protocol v2, `seal.rs`). Clients must use the
    /// same setting: one that differs is refused in the handshake.
    pub encrypt: bool,
    /// Where log lines go; `None`: stderr.
    pub log: Option<LogSink>,
}

impl Default for RelayConfig {
    /// Listens on all interfaces, any port, 64 MiB messages, 64-message queues, 60 s I/O and
    /// 5 s handshake timeouts, 512 pending handshakes. The secret is empty: [`Relay::start`] fails until one is set.
    fn default() -> Self {
        RelayConfig {
            bind_host: "0.0.0.0".into(),
            port_range: None,
            secret: Vec::new(),
            max_message_bytes: 64 << 20,
            max_final_state_bytes: 0,
            queue_limit_messages: 64,
            io_timeout: Duration::from_secs(60),
            handshake_timeout: Duration::from_secs(5),
            max_pending_handshakes: 512,
            encrypt: false,
            log: None,
        }
    }
}

impl fmt::Debug for RelayConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RelayConfig")
            .field("bind_host", &self.bind_host)
            .field("port_range", &self.port_range)
            .field(
                "secret",
                &format_args!("<{} bytes redacted>", self.secret.len()),
            )
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_final_state_bytes", &self.max_final_state_bytes)
            .field("queue_limit_messages", &self.queue_limit_messages)
            .field("io_timeout", &self.io_timeout)
            .field("handshake_timeout", &self.handshake_timeout)
            .field("max_pending_handshakes", &self.max_pending_handshakes)
            .field("encrypt", &self.encrypt)
            .field("log", &self.log.as_ref().map(|_| "<sink>"))
            .finish()
    }
}

/// Configuration of a [`RelayClient`].
#[derive(Clone)]
pub struct ClientConfig {
    /// The fit's secret (the relay's [`RelayConfig::secret`]).
    pub secret: Vec<u8>,
    pub worker: WorkerId,
    pub connect_timeout: Duration,
    /// Handshake read/write timeout, and how long the relay may stay silent (it sends
    /// heartbeats) before the connection is declared dead.
    pub io_timeout: Duration,
    /// Largest update sent or received; use the relay's value (a relayed update larger than
    /// this ends the connection).
    pub max_message_bytes: usize,
    /// Bound of the outbound queue: [`RelayClient::send`] blocks when it is full.
    pub queue_limit_messages: usize,
    /// Seal frames (the relay's [`RelayConfig::encrypt`]; a mismatch is refused).
    pub encrypt: bool,
}

impl Default for ClientConfig {
    /// 10 s connect and 60 s I/O timeouts, 64 MiB messages, 64-message queue, worker 0/0;
    /// the secret is empty: [`RelayClient::connect`] fails until one is set.
    fn default() -> Self {
        ClientConfig {
            secret: Vec::new(),
            worker: WorkerId::default(),
            connect_timeout: Duration::from_secs(10),
            io_timeout: Duration::from_secs(60),
            max_message_bytes: 64 << 20,
            queue_limit_messages: 64,
            encrypt: false,
        }
    }
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field(
                "secret",
                &format_args!("<{} bytes redacted>", self.secret.len()),
            )
            .field("worker", &self.worker)
            .field("connect_timeout", &self.connect_timeout)
            .field("io_timeout", &self.io_timeout)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("queue_limit_messages", &self.queue_limit_messages)
            .field("encrypt", &self.encrypt)
            .finish()
    }
}

/// A worker's report that it made no progress (a STALL frame), as the relay received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StallReport {
    pub partition: u32,
    pub attempt: u32,
    /// The connection's remote address (`host:port`).
    pub peer: String,
    /// The worker's own words: executor, host, what it did last (at most 4096 bytes).
    pub report: String,
}

/// Counters of one partition (all its attempts together), as seen by the relay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerCounters {
    /// Complete UPDATE frames read from this worker.
    pub messages_received: u64,
    pub bytes_received: u64,
    /// Updates of this worker applied to the master state.
    pub messages_applied: u64,
    /// Updates of this worker discarded: rejected by the master state, oversized, or partial
    /// (connection lost mid-frame).
    pub messages_dropped: u64,
    /// Updates of other workers written to this worker's socket.
    pub messages_relayed_out: u64,
    pub bytes_relayed_out: u64,
    /// Updates of other workers meant for this worker but not delivered because its
    /// connection was dropped (slow, dead, or invalid).
    pub messages_dropped_outbound: u64,
    /// Authenticated connections of this partition (1 + reconnects).
    pub attempts_seen: u32,
    /// Attempt number of the latest connection.
    pub last_attempt: u32,
    /// Connections of this partition that ended with FINISH / FINISH_ACK.
    pub finished: u32,
}

/// The relay's counters (cumulative) and gauges (current).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Per Spark partition.
    pub per_worker: BTreeMap<u32, WorkerCounters>,
    /// Connections that completed the handshake.
    pub connections_accepted: u64,
    /// Connections closed during the handshake: failed authentication, garbage, silence past
    /// `handshake_timeout`, evicted as the oldest of `max_pending_handshakes` pending ones.
    pub connections_rejected: u64,
    /// Authenticated connections that ended before FINISH (lost, invalid data, too slow), not
    /// counting superseded ones.
    pub connections_aborted: u64,
    /// Live connections closed because a newer attempt of their partition connected (the newest
    /// attempt wins; the older one's later updates are dropped). An attempt older than a live
    /// one of its partition is refused in the handshake and counts in `connections_rejected`.
    pub connections_superseded: u64,
    /// Authenticated connections of a partition that had connected before.
    pub reconnects: u64,
    /// Frames with a bad type or an oversized length from authenticated workers.
    pub protocol_errors: u64,
    /// Forwards that found a destination queue full and had to wait (back-pressure events).
    pub outbound_waits: u64,
    /// Gauge: authenticated connections currently registered for forwarding.
    pub live_connections: u64,
    /// Gauge: relay threads currently alive (accept, handshake, reader, writer).
    pub live_threads: u64,
    /// Gauge: messages currently queued for all workers together.
    pub queued_messages: u64,
    /// High-water mark of any single outbound queue (never above `queue_limit_messages`).
    pub max_queued_per_connection: u64,
    /// Stall reports received, in order (the driver fails the fit on the first).
    pub stalls: Vec<StallReport>,
    /// Relay tree nodes only: updates received from the parent (applied and forwarded to every
    /// connection) and updates of this node's connections sent to the parent.
    pub upstream_received: u64,
    pub upstream_sent: u64,
    /// Nanoseconds the relay held its core lock to apply updates and pick their destinations:
    /// the serial part of its work (every update passes through it one at a time).
    pub locked_nanos: u64,
    /// The CPU time of those holds (the lock holders' thread clocks; 0 off Unix): the serial
    /// cost of an update without the time a preempted holder waits for a core.
    pub locked_cpu_nanos: u64,
}

/// A client's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Updates written to the socket.
    pub messages_sent: u64,
    /// Payload bytes of those updates.
    pub bytes_sent: u64,
    /// Every byte this client wrote to its socket: the AUTH message, and each frame's 2–6-byte
    /// header and payload (updates, heartbeats, FINISH). What the connection cost on the wire,
    /// except a final state sent with FINISH, which is counted in `final_state_bytes`.
    pub wire_bytes_sent: u64,
    /// The FINISH frame that carried a final state ([`RelayClient::finish_with`]), if any.
    pub final_state_bytes: u64,
    /// Relayed updates received (and passed to `on_message`).
    pub messages_received: u64,
    pub bytes_received: u64,
    /// High-water mark of the outbound queue (never above `queue_limit_messages`).
    pub max_queued: u64,
}
