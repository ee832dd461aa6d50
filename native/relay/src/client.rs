//! The worker side: connect + mutual authentication + snapshot, then a reader thread that always
//! drains the socket and a writer thread fed by a bounded queue.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crossbeam::channel::{self, Receiver, Sender};

use crate::error::RelayError;
use crate::proto::{self, HeaderError, Side};
use crate::seal::{self, Opener, Sealer};
use crate::snapshot;
use crate::spare::SpareBuffers;
use crate::relay::lock;
use crate::{ClientConfig, ClientStats};

/// Called for every update relayed from another worker, on the client's reader thread.
pub type OnMessage = Box<dyn FnMut(&[u8]) + Send>;

/// [`OnMessage`] for a receiver that keeps some payloads: it gets the reader's buffer and may take
/// it (`std::mem::replace` with a spare buffer, or `take`); the reader reads the next payload into
/// whatever it leaves there. Keeping a 5 MB payload so costs no copy.
pub type OnPayload = Box<dyn FnMut(&mut Vec<u8>) + Send>;

enum Out {
    Update(Vec<u8>),
    Stall(Vec<u8>),
    Flush,
    Finish(Vec<u8>),
}

#[derive(Default)]
struct Counters {
    messages_sent: AtomicU64,
    bytes_sent: AtomicU64,
    wire_bytes_sent: AtomicU64,
    final_state_bytes: AtomicU64,
    messages_received: AtomicU64,
    bytes_received: AtomicU64,
    max_queued: AtomicU64,
}

struct Shared {
    addr: String,
    stream: TcpStream,
    closed: AtomicBool,
    /// Wakes the writer when the connection closes.
    wake_tx: Sender<()>,
    error: Mutex<Option<RelayError>>,
    counters: Counters,
    /// FLUSHes queued and FLUSH_ACKs received (relay trees: [`RelayClient::flush`]).
    flushes: Mutex<(u64, u64)>,
    flushed: Condvar,
    /// Buffers of updates already written, for the sender's next ones
    /// ([`RelayClient::spare_buffer`]).
    spent: SpareBuffers,
}

impl Shared {
    /// Records the first failure and closes the socket (unblocking both threads).
    fn fail(&self, e: RelayError) {
        {
            let mut g = lock(&self.error);
            if g.is_none() {
                *g = Some(e);
            }
        }
        self.close();
    }
    fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            let _ = self.stream.shutdown(Shutdown::Both);
            let _ = self.wake_tx.try_send(());
        }
        // Wake a flush waiting for an ack that will not come.
        let _g = lock(&self.flushes);
        self.flushed.notify_all();
    }
    fn error(&self) -> RelayError {
        lock(&self.error)
            .clone()
            .unwrap_or_else(|| RelayError::Closed {
                addr: self.addr.clone(),
                reason: "client closed".into(),
            })
    }
    fn stats(&self) -> ClientStats {
        let c = &self.counters;
        ClientStats {
            messages_sent: c.messages_sent.load(Ordering::SeqCst),
            bytes_sent: c.bytes_sent.load(Ordering::SeqCst),
            wire_bytes_sent: c.wire_bytes_sent.load(Ordering::SeqCst),
            final_state_bytes: c.final_state_bytes.load(Ordering::SeqCst),
            messages_received: c.messages_received.load(Ordering::SeqCst),
            bytes_received: c.bytes_received.load(Ordering::SeqCst),
            max_queued: c.max_queued.load(Ordering::SeqCst),
        }
    }
}

/// A worker's connection to the relay. See the crate documentation.
pub struct RelayClient {
    shared: Arc<Shared>,
    tx: Option<Sender<Out>>,
    /// The reader's verdict: `Ok` on FINISH_ACK, else the failure.
    ack_rx: Receiver<Result<(), RelayError>>,
    reader: Option<JoinHandle<()>>,
    writer: Option<JoinHandle<()>>,
    max_message_bytes: usize,
    io_timeout: Duration,
}

fn io_err(addr: &str, what: &str, e: &io::Error, after: Duration) -> RelayError {
    if proto::is_timeout(e) {
        RelayError::Timeout {
            addr: addr.into(),
            what: what.into(),
            after,
        }
    } else if e.kind() == io::ErrorKind::UnexpectedEof {
        RelayError::Closed {
            addr: addr.into(),
            reason: format!("the relay closed the connection during {what}"),
        }
    } else {
        RelayError::Io {
            addr: addr.into(),
            what: what.into(),
            detail: e.to_string(),
        }
    }
}

/// Like [`io_err`], but a sealed frame that failed authentication is a protocol error.
fn body_err(addr: &str, what: &str, e: &io::Error, after: Duration) -> RelayError {
    if e.kind() == io::ErrorKind::InvalidData {
        RelayError::Protocol {
            addr: addr.into(),
            detail: format!("{what}: {e}"),
        }
    } else {
        io_err(addr, what, e, after)
    }
}

fn validate(addr: &str, c: &ClientConfig) -> Result<(), RelayError> {
    let bad = |detail: String| {
        Err(RelayError::Config {
            addr: addr.into(),
            detail,
        })
    };
    if c.secret.len() < proto::MIN_SECRET_LEN {
        return bad(format!(
            "secret must be at least {} bytes, got {}",
            proto::MIN_SECRET_LEN,
            c.secret.len()
        ));
    }
    if c.max_message_bytes == 0 || c.max_message_bytes > u32::MAX as usize {
        return bad(format!(
            "max_message_bytes must be in 1..=4294967295, got {}",
            c.max_message_bytes
        ));
    }
    if c.queue_limit_messages == 0 || c.queue_limit_messages > crate::MAX_QUEUE_LIMIT {
        return bad(format!(
            "queue_limit_messages must be in 1..={}, got {}",
            crate::MAX_QUEUE_LIMIT,
            c.queue_limit_messages
        ));
    }
    if c.connect_timeout.is_zero() || c.io_timeout.is_zero() {
        return bad("connect_timeout and io_timeout must be positive".into());
    }
    Ok(())
}

fn tcp_connect(addr: &str, timeout: Duration) -> Result<TcpStream, RelayError> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| RelayError::Resolve {
            addr: addr.into(),
            detail: e.to_string(),
        })?
        .collect();
    if addrs.is_empty() {
        return Err(RelayError::Resolve {
            addr: addr.into(),
            detail: "no address".into(),
        });
    }
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) if proto::is_timeout(&e) => {
                last = Some(RelayError::ConnectTimeout {
                    addr: addr.into(),
                    after: timeout,
                })
            }
            Err(e) => {
                last = Some(RelayError::Connect {
                    addr: addr.into(),
                    detail: e.to_string(),
                })
            }
        }
    }
    Err(last.expect("at least one address was tried"))
}

impl RelayClient {
    /// Connects to `addr` ("host:port"), authenticates both ways and receives the snapshot of
    /// the master state. `on_message` then runs on the client's reader thread for every update
    /// relayed from the other workers; it must return quickly and must not call into this client.
    pub fn connect(
        addr: &str,
        config: ClientConfig,
        mut on_message: OnMessage,
    ) -> Result<(RelayClient, Vec<u8>), RelayError> {
        Self::connect_taking(addr, config, Box::new(move |buf: &mut Vec<u8>| on_message(buf)))
    }

    /// [`RelayClient::connect`] with a receiver that may keep the payloads' buffers ([`OnPayload`]).
    pub fn connect_taking(
        addr: &str,
        config: ClientConfig,
        on_message: OnPayload,
    ) -> Result<(RelayClient, Vec<u8>), RelayError> {
        validate(addr, &config)?;
        let stream = tcp_connect(addr, config.connect_timeout)?;
        let _ = stream.set_nodelay(true);
        let io = config.io_timeout;
        let hs = |what: &str, e: io::Error| io_err(addr, what, &e, io);
        stream
            .set_read_timeout(Some(io))
            .map_err(|e| hs("configuring the socket", e))?;
        stream
            .set_write_timeout(Some(io))
            .map_err(|e| hs("configuring the socket", e))?;
        let mut s = &stream;

        let mut hello = [0u8; proto::HELLO_LEN];
        s.read_exact(&mut hello)
            .map_err(|e| hs("waiting for the relay's greeting", e))?;
        let relay_nonce = proto::parse_hello(&hello).map_err(|detail| RelayError::Protocol {
            addr: addr.into(),
            detail,
        })?;
        let client_nonce = proto::random_nonce().map_err(|detail| RelayError::Config {
            addr: addr.into(),
            detail,
        })?;
        let w = config.worker;
        let flags = if config.encrypt { proto::FLAG_SEALED } else { 0 };
        let tag = proto::auth_tag(
            &config.secret,
            Side::Client,
            &relay_nonce,
            &client_nonce,
            w,
            flags,
        );
        let own_heartbeat = proto::heartbeat_for(io);
        let auth = proto::Auth {
            client_nonce,
            worker: w,
            heartbeat_ms: proto::to_ms(own_heartbeat),
            flags,
            tag,
        };
        s.write_all(&proto::encode_auth(&auth))
            .map_err(|e| hs("sending authentication", e))?;

        let mut verdict = [0u8; 1];
        match s.read_exact(&mut verdict) {
            Ok(()) => {}
            // A relay that refuses us may close before we read its verdict byte.
            Err(e)
                if e.kind() == io::ErrorKind::UnexpectedEof
                    || e.kind() == io::ErrorKind::ConnectionReset =>
            {
                return Err(RelayError::AuthFailed { addr: addr.into() })
            }
            Err(e) => return Err(hs("waiting for the authentication verdict", e)),
        }
        match verdict[0] {
            proto::VERDICT_ACCEPT => {}
            proto::VERDICT_REJECT_AUTH => return Err(RelayError::AuthFailed { addr: addr.into() }),
            proto::VERDICT_UNAVAILABLE => {
                return Err(RelayError::Unavailable { addr: addr.into() })
            }
            proto::VERDICT_SUPERSEDED => {
                return Err(RelayError::Superseded {
                    addr: addr.into(),
                    partition: w.partition,
                    attempt: w.attempt,
                })
            }
            proto::VERDICT_REJECT_PROTOCOL => {
                return Err(RelayError::Protocol {
                    addr: addr.into(),
                    detail: format!(
                        "the relay rejected our handshake (protocol version {} with frame \
                         encryption {}: another version, or the relay's encryption setting \
                         differs)",
                        proto::VERSION,
                        if config.encrypt { "on" } else { "off" }
                    ),
                })
            }
            v => {
                return Err(RelayError::Protocol {
                    addr: addr.into(),
                    detail: format!("unknown verdict byte {v:#04x}"),
                })
            }
        }
        let mut accept = [0u8; proto::ACCEPT_LEN - 1];
        s.read_exact(&mut accept)
            .map_err(|e| hs("reading the relay's proof", e))?;
        let (relay_tag, rest) = accept.split_at(proto::MAC_LEN);
        if !proto::verify_tag(
            &config.secret,
            Side::Relay,
            &relay_nonce,
            &client_nonce,
            w,
            flags,
            relay_tag,
        ) {
            return Err(RelayError::Impostor { addr: addr.into() });
        }
        let relay_wish = u32::from_be_bytes(rest[..4].try_into().expect("4 bytes"));
        let heartbeat = proto::heartbeat_with(own_heartbeat, relay_wish);
        // From here the peer is the authenticated relay, but its snapshot length (unauthenticated
        // on an unsealed connection) is still checked against the native memory budget and
        // reserved fallibly before a byte of it is read.
        let len = u64::from_be_bytes(rest[4..].try_into().expect("8 bytes"));
        let what = || format!("the relay's parameter snapshot of {len} bytes");
        ferrodl_memory::check(what, Some(len)).map_err(|error| RelayError::Memory {
            addr: addr.into(),
            error,
        })?;
        let mut snapshot = ferrodl_memory::try_with_capacity(
            usize::try_from(len).unwrap_or(usize::MAX),
            what,
        )
        .map_err(|error| RelayError::Memory {
            addr: addr.into(),
            error,
        })?;
        let mut keys = config
            .encrypt
            .then(|| seal::keys(&config.secret, false, &relay_nonce, &client_nonce, w));
        let truncated = |got: usize| RelayError::Closed {
            addr: addr.into(),
            reason: format!("snapshot truncated ({got} of {len} bytes)"),
        };
        match keys.as_mut() {
            None => {
                let got = s
                    .take(len)
                    .read_to_end(&mut snapshot)
                    .map_err(|e| hs("reading the snapshot", e))?;
                if (got as u64) < len {
                    return Err(truncated(got));
                }
            }
            // Sealed: chunk after chunk, each opened as it arrives (protocol version 5).
            Some((_, opener)) => {
                let mut tag = [0u8; seal::TAG_LEN];
                for _ in 0..snapshot::piece_count(len, proto::SNAPSHOT_CHUNK) {
                    let start = snapshot.len();
                    let want = (len - start as u64).min(proto::SNAPSHOT_CHUNK as u64);
                    let got = s
                        .take(want)
                        .read_to_end(&mut snapshot)
                        .map_err(|e| hs("reading the snapshot", e))?;
                    if (got as u64) < want {
                        return Err(truncated(snapshot.len()));
                    }
                    s.read_exact(&mut tag)
                        .map_err(|e| hs("reading the snapshot", e))?;
                    opener
                        .open(&len.to_be_bytes(), &mut snapshot[start..], &tag)
                        .map_err(|detail| RelayError::Protocol {
                            addr: addr.into(),
                            detail: format!("snapshot: {detail}"),
                        })?;
                }
            }
        }
        let (sealer, opener) = match keys {
            Some((s, o)) => (Some(s), Some(o)),
            None => (None, None),
        };
        // The writer blocks as long as the relay applies back-pressure; liveness is watched by
        // the reader (heartbeats), which closes the socket and so unblocks the writer.
        stream
            .set_write_timeout(None)
            .map_err(|e| hs("configuring the socket", e))?;
        let stream2 = stream
            .try_clone()
            .map_err(|e| hs("configuring the socket", e))?;

        let (wake_tx, wake_rx) = channel::bounded(1);
        let shared = Arc::new(Shared {
            addr: addr.to_string(),
            stream,
            closed: AtomicBool::new(false),
            wake_tx,
            error: Mutex::new(None),
            counters: Counters::default(),
            flushes: Mutex::new((0, 0)),
            flushed: Condvar::new(),
            spent: SpareBuffers::default(),
        });
        // The AUTH message is this connection's only write before the writer thread starts.
        shared
            .counters
            .wire_bytes_sent
            .store(proto::AUTH_LEN as u64, Ordering::SeqCst);
        let (tx, rx) = channel::bounded(config.queue_limit_messages);
        let (ack_tx, ack_rx) = channel::bounded(1);
        let p = w.partition;
        let spawn_err = |e: io::Error| RelayError::Io {
            addr: addr.into(),
            what: "starting the client threads".into(),
            detail: e.to_string(),
        };
        let sh = shared.clone();
        let max = config.max_message_bytes;
        let reader = thread::Builder::new()
            .name(format!("ferrodl-relay-client-{p}-r"))
            .spawn(move || reader_loop(&sh, stream2, max, io, on_message, ack_tx, opener))
            .map_err(|e| {
                shared.close();
                spawn_err(e)
            })?;
        let sh = shared.clone();
        let writer = thread::Builder::new()
            .name(format!("ferrodl-relay-client-{p}-w"))
            .spawn(move || writer_loop(&sh, rx, wake_rx, io, heartbeat, sealer));
        let writer = match writer {
            Ok(h) => h,
            Err(e) => {
                shared.close();
                let _ = reader.join();
                return Err(spawn_err(e));
            }
        };
        let client = RelayClient {
            shared,
            tx: Some(tx),
            ack_rx,
            reader: Some(reader),
            writer: Some(writer),
            max_message_bytes: max,
            io_timeout: io,
        };
        Ok((client, snapshot))
    }

    /// Queues one update. Blocks while the outbound queue is full (back-pressure). Fails when
    /// the connection has failed (the error names the relay's host:port) or the payload is
    /// larger than `max_message_bytes`.
    pub fn send(&self, payload: Vec<u8>) -> Result<(), RelayError> {
        if payload.len() > self.max_message_bytes {
            return Err(RelayError::TooLarge {
                addr: self.shared.addr.clone(),
                size: payload.len(),
                max: self.max_message_bytes,
            });
        }
        if self.shared.closed.load(Ordering::SeqCst) {
            return Err(self.shared.error());
        }
        let tx = self.tx.as_ref().expect("sender lives until finish/drop");
        tx.send(Out::Update(payload))
            .map_err(|_| self.shared.error())?;
        self.shared
            .counters
            .max_queued
            .fetch_max(tx.len() as u64, Ordering::SeqCst);
        Ok(())
    }

    /// An empty buffer for the next [`RelayClient::send`]: one whose update was written, with its
    /// capacity, when there is one (big updates only), else a new one.
    pub fn spare_buffer(&self) -> Vec<u8> {
        self.shared.spent.take()
    }

    /// Tells the relay that this worker made no progress (the stall watchdog), in `report`'s
    /// words (cut to [`crate::MAX_STALL_REPORT_BYTES`]). Queued behind updates already queued.
    pub fn report_stall(&self, report: &str) -> Result<(), RelayError> {
        if self.shared.closed.load(Ordering::SeqCst) {
            return Err(self.shared.error());
        }
        let mut end = report.len().min(crate::MAX_STALL_REPORT_BYTES);
        while !report.is_char_boundary(end) {
            end -= 1;
        }
        let tx = self.tx.as_ref().expect("sender lives until finish/drop");
        tx.send(Out::Stall(report.as_bytes()[..end].to_vec()))
            .map_err(|_| self.shared.error())
    }

    /// Waits until the relay confirms that every update queued before this call has been applied
    /// at the root of its tree (a FLUSH frame answered by FLUSH_ACK; relays forward it up their
    /// tree first). The connection stays open. Used by relay tree nodes (`TreeNode`) before they
    /// acknowledge a worker's FINISH. Fails when the connection fails or no ack comes within
    /// the I/O timeout.
    pub fn flush(&self) -> Result<(), RelayError> {
        let tx = self.tx.as_ref().expect("sender lives until finish/drop");
        let seq = {
            // Numbered in queue order: acks come back in the order the FLUSHes were sent.
            let mut f = lock(&self.shared.flushes);
            if self.shared.closed.load(Ordering::SeqCst) {
                return Err(self.shared.error());
            }
            tx.send(Out::Flush).map_err(|_| self.shared.error())?;
            f.0 += 1;
            f.0
        };
        let deadline = Instant::now() + self.io_timeout;
        let mut f = lock(&self.shared.flushes);
        while f.1 < seq {
            if self.shared.closed.load(Ordering::SeqCst) {
                return Err(self.shared.error());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(RelayError::Timeout {
                    addr: self.shared.addr.clone(),
                    what: "waiting for the relay to confirm a flush".into(),
                    after: self.io_timeout,
                });
            }
            f = self
                .shared
                .flushed
                .wait_timeout(f, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(())
    }

    /// Whether the connection has ended (failed, dropped by the relay, or finished).
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }

    /// The failure that ended the connection (or "client closed").
    pub fn error(&self) -> RelayError {
        self.shared.error()
    }

    /// Sends everything queued, then waits until the relay confirms that every message this
    /// client sent has been applied to the master state; then closes.
    pub fn finish(self) -> Result<ClientStats, RelayError> {
        self.finish_with(Vec::new())
    }

    /// [`RelayClient::finish`], handing the relay this worker's final `state` with the FINISH
    /// ([`crate::MasterState::finish`]; at most the relay's `max_message_bytes`).
    pub fn finish_with(mut self, state: Vec<u8>) -> Result<ClientStats, RelayError> {
        let tx = self.tx.take().expect("sender lives until finish/drop");
        let queued = tx.send(Out::Finish(state));
        drop(tx);
        let verdict = match queued {
            Err(_) => Err(self.shared.error()),
            Ok(()) => match self.ack_rx.recv() {
                Ok(v) => v,
                Err(_) => Err(self.shared.error()),
            },
        };
        self.shared.close();
        self.join();
        verdict.map(|()| self.shared.stats())
    }

    /// The error that closed this connection, if it has failed (a caller blocked on messages
    /// that will never come polls it).
    pub fn failure(&self) -> Option<RelayError> {
        self.shared.closed.load(Ordering::SeqCst).then(|| self.shared.error())
    }

    /// Counters of this client (updated by its threads).
    pub fn stats(&self) -> ClientStats {
        self.shared.stats()
    }

    /// The relay address this client was given.
    pub fn addr(&self) -> &str {
        &self.shared.addr
    }

    fn join(&mut self) {
        self.tx.take();
        if let Some(h) = self.writer.take() {
            let _ = h.join();
        }
        if let Some(h) = self.reader.take() {
            let _ = h.join();
        }
    }
}

impl Drop for RelayClient {
    /// Closes the connection without FINISH (the relay counts an aborted connection) and joins
    /// both threads (waits for an `on_message` call in progress to return).
    fn drop(&mut self) {
        if self.reader.is_some() || self.writer.is_some() {
            self.shared.close();
            self.join();
        }
    }
}

fn writer_loop(
    sh: &Shared,
    rx: Receiver<Out>,
    wake_rx: Receiver<()>,
    io: Duration,
    ping: Duration,
    mut sealer: Option<Sealer>,
) {
    let mut w = BufWriter::with_capacity(64 * 1024, &sh.stream);
    let (mut pend_msgs, mut pend_bytes, mut pend_wire) = (0u64, 0u64, 0u64);
    loop {
        if sh.closed.load(Ordering::SeqCst) {
            break;
        }
        let mut item = channel::select! {
            recv(rx) -> m => match m { Ok(m) => Some(m), Err(_) => break },
            recv(wake_rx) -> _ => break,
            default(ping) => None,
        };
        // Sealing encrypts the payload in place: the queued buffer is ours.
        let res = match &mut item {
            None => proto::write_frame_opt(&mut w, proto::T_PING, &mut [], sealer.as_mut()),
            Some(Out::Update(p)) => {
                pend_msgs += 1;
                pend_bytes += p.len() as u64;
                proto::write_frame_opt(&mut w, proto::T_UPDATE, p, sealer.as_mut())
            }
            Some(Out::Stall(r)) => proto::write_frame_opt(&mut w, proto::T_STALL, r, sealer.as_mut()),
            Some(Out::Flush) => {
                proto::write_frame_opt(&mut w, proto::T_FLUSH, &mut [], sealer.as_mut())
            }
            Some(Out::Finish(p)) => {
                proto::write_frame_opt(&mut w, proto::T_FINISH, p, sealer.as_mut())
            }
        };
        // a FINISH that carries a final state is counted apart (it is no update traffic)
        let final_state = matches!(&item, Some(Out::Finish(p)) if !p.is_empty());
        let res = res.map(|n| {
            if final_state {
                sh.counters.final_state_bytes.fetch_add(n, Ordering::SeqCst);
            } else {
                pend_wire += n;
            }
        });
        let last = matches!(item, Some(Out::Finish(_)));
        let push = last || matches!(item, Some(Out::Flush));
        let res = res.and_then(|_| {
            if push || rx.is_empty() {
                w.flush()
            } else {
                Ok(())
            }
        });
        if let Err(e) = res {
            if !sh.closed.load(Ordering::SeqCst) {
                sh.fail(io_err(&sh.addr, "sending to the relay", &e, io));
            }
            break;
        }
        if pend_wire > 0 && w.buffer().is_empty() {
            sh.counters
                .wire_bytes_sent
                .fetch_add(pend_wire, Ordering::SeqCst);
            pend_wire = 0;
        }
        if pend_msgs > 0 && w.buffer().is_empty() {
            sh.counters
                .messages_sent
                .fetch_add(pend_msgs, Ordering::SeqCst);
            sh.counters
                .bytes_sent
                .fetch_add(pend_bytes, Ordering::SeqCst);
            pend_msgs = 0;
            pend_bytes = 0;
        }
        if let Some(Out::Update(p)) = item {
            sh.spent.give(p);
        }
        if last {
            break;
        }
    }
    let _ = w.into_parts();
}

fn reader_loop(
    sh: &Shared,
    stream: TcpStream,
    max: usize,
    io: Duration,
    mut on_message: OnPayload,
    ack_tx: Sender<Result<(), RelayError>>,
    mut opener: Option<Opener>,
) {
    let addr = sh.addr.as_str();
    let mut r = BufReader::with_capacity(64 * 1024, &stream);
    // One buffer for all relayed payloads: grows to the largest message, never per message
    // (unless `on_message` takes it).
    let mut buf: Vec<u8> = Vec::new();
    let result: Result<(), RelayError> = loop {
        let (ty, len) = match proto::read_header(&mut r) {
            Ok(Some(h)) => h,
            Ok(None) => {
                break Err(RelayError::Closed {
                    addr: addr.into(),
                    reason: "the relay closed the connection".into(),
                })
            }
            Err(HeaderError::Malformed(detail)) => {
                break Err(RelayError::Protocol {
                    addr: addr.into(),
                    detail,
                })
            }
            Err(HeaderError::Partial(e)) | Err(HeaderError::Io(e)) => {
                break Err(io_err(
                    addr,
                    "waiting for data from the relay (heartbeat)",
                    &e,
                    io,
                ))
            }
        };
        match ty {
            proto::T_RELAYED => {
                if len > max {
                    break Err(RelayError::TooLarge {
                        addr: addr.into(),
                        size: len,
                        max,
                    });
                }
                if let Err(error) = proto::reserve_body(&mut buf, len, "a relayed update") {
                    break Err(RelayError::Memory {
                        addr: addr.into(),
                        error,
                    });
                }
                if let Err(e) = proto::read_body(&mut r, ty, len, &mut buf, opener.as_mut()) {
                    break Err(body_err(addr, "reading a relayed update", &e, io));
                }
                sh.counters.messages_received.fetch_add(1, Ordering::SeqCst);
                sh.counters
                    .bytes_received
                    .fetch_add(len as u64, Ordering::SeqCst);
                if catch_unwind(AssertUnwindSafe(|| on_message(&mut buf))).is_err() {
                    break Err(RelayError::Closed {
                        addr: addr.into(),
                        reason: "on_message panicked".into(),
                    });
                }
            }
            proto::T_PING | proto::T_FINISH_ACK | proto::T_FLUSH_ACK if len == 0 => {
                if let Err(e) = proto::read_body(&mut r, ty, 0, &mut buf, opener.as_mut()) {
                    break Err(body_err(addr, "waiting for data from the relay", &e, io));
                }
                if ty == proto::T_FINISH_ACK {
                    break Ok(());
                }
                if ty == proto::T_FLUSH_ACK {
                    let mut f = lock(&sh.flushes);
                    if f.1 >= f.0 {
                        break Err(RelayError::Protocol {
                            addr: addr.into(),
                            detail: "a FLUSH_ACK without a FLUSH".into(),
                        });
                    }
                    f.1 += 1;
                    sh.flushed.notify_all();
                }
            }
            proto::T_ERROR if len <= proto::MAX_ERROR_LEN => {
                let reason = match proto::read_body(&mut r, ty, len, &mut buf, opener.as_mut()) {
                    Ok(()) => String::from_utf8_lossy(&buf).into_owned(),
                    Err(e) => format!("(reason unreadable: {e})"),
                };
                break Err(RelayError::Closed {
                    addr: addr.into(),
                    reason: format!("the relay dropped us: {reason}"),
                });
            }
            _ => {
                break Err(RelayError::Protocol {
                    addr: addr.into(),
                    detail: format!("unexpected frame type {ty:#04x} with length {len}"),
                })
            }
        }
    };
    match &result {
        Ok(()) => {}
        Err(e) => {
            if !sh.closed.load(Ordering::SeqCst) {
                sh.fail(e.clone());
            }
        }
    }
    let _ = ack_tx.try_send(result.map_err(|_| sh.error()));
    sh.close();
}
