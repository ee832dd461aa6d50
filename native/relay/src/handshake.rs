//! The accept loop: accepts connections and runs every pending handshake on one thread, with
//! readiness from the OS (mio), so that connections that have not proven the secret hold
//! nothing scarce.
//!
//! Flood resistance (all of it, because every connection may come from one address):
//! - A pending handshake is a socket and a ~100-byte record in this loop: no thread, no queue.
//! - Its deadline is absolute (`handshake_timeout` from accept): trickling bytes does not extend it.
//! - The first bytes a client sends are its AUTH: wrong magic is refused at the 8th byte, a wrong
//!   tag as soon as its 87 bytes are in; nothing is allocated for
//!   them and the HMAC check takes microseconds, so the loop never waits on one client.
//! - At most `max_pending_handshakes` are pending; a new connection beyond that evicts the
//!   *oldest* pending one (instead of being refused), so a flood can only push out connections
//!   that have been silent for a while — a worker answers the greeting within one round trip.
//! - Only a connection that proved the secret gets threads (admission and the connection's
//!   reader and writer, see `relay.rs`).

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use crate::error::human;
use crate::proto::{self, Side};
use crate::relay::{admit, Shared};

/// The listener's token; pending handshakes use tokens from 2 on, the waker 1.
const LISTENER: Token = Token(0);
pub(crate) const WAKER: Token = Token(1);
/// The loop wakes at least this often (deadlines, shutdown; the waker makes shutdown immediate).
const TICK: Duration = Duration::from_millis(100);
/// After this many rejected connections are logged one by one, further ones are summed up in
/// one line every `REJECT_LOG_EVERY` (a flood must not flood the driver's log as well).
const REJECT_LOG_LINES: u64 = 20;
const REJECT_LOG_EVERY: Duration = Duration::from_secs(10);

/// A connection that has not authenticated yet.
struct Pending {
    stream: TcpStream,
    /// A second handle on the same socket, registered with the poll (deregistered before drop).
    watch: mio::net::TcpStream,
    peer: SocketAddr,
    relay_nonce: [u8; proto::NONCE_LEN],
    buf: [u8; proto::AUTH_LEN],
    got: usize,
    deadline: Instant,
}

/// What a read from a pending connection led to.
enum Step {
    /// Needs more bytes.
    More,
    /// Authenticated: hand over to admission.
    Admit(proto::Auth),
    /// Refused: the verdict byte to send (if any) and the reason for the log.
    Reject(Option<u8>, String),
}

pub(crate) struct AcceptLoop {
    poll: Poll,
    listener: TcpListener,
    watch_listener: mio::net::TcpListener,
    pending: HashMap<Token, Pending>,
    /// Tokens in accept order (= deadline order); stale entries are skipped.
    order: VecDeque<Token>,
    next_token: usize,
    rejected_logged: u64,
    rejected_unlogged: u64,
    last_summary: Instant,
}

impl AcceptLoop {
    /// Registers the (non-blocking) listener; `poll` already carries the shutdown waker.
    pub(crate) fn new(poll: Poll, listener: TcpListener) -> io::Result<AcceptLoop> {
        let mut watch_listener = mio::net::TcpListener::from_std(listener.try_clone()?);
        poll.registry()
            .register(&mut watch_listener, LISTENER, Interest::READABLE)?;
        Ok(AcceptLoop {
            poll,
            listener,
            watch_listener,
            pending: HashMap::new(),
            order: VecDeque::new(),
            next_token: 2,
            rejected_logged: 0,
            rejected_unlogged: 0,
            last_summary: Instant::now(),
        })
    }

    pub(crate) fn run(mut self, sh: &Arc<Shared>) {
        let mut events = Events::with_capacity(256);
        while !sh.stop.load(Ordering::SeqCst) {
            let wait = self
                .order
                .front()
                .and_then(|t| self.pending.get(t))
                .map(|p| p.deadline.saturating_duration_since(Instant::now()))
                .unwrap_or(TICK)
                .min(TICK);
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    sh.log(&format!("accept loop: poll failed: {e}"));
                    std::thread::sleep(TICK);
                }
                continue;
            }
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept_all(sh),
                    WAKER => {}
                    t => self.progress(sh, t),
                }
            }
            self.expire(sh);
        }
        // Shutdown: pending strangers are simply closed (dropping the streams closes them).
        for (_, mut p) in self.pending.drain() {
            let _ = self.poll.registry().deregister(&mut p.watch);
        }
        let _ = self.poll.registry().deregister(&mut self.watch_listener);
    }

    fn accept_all(&mut self, sh: &Arc<Shared>) {
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => self.on_accept(sh, stream, peer),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Out of file descriptors (or similar): free the oldest pending handshake so
                    // that the next connection can be accepted; without one, back off a little.
                    sh.log(&format!("accept failed: {e}"));
                    if !self.evict_oldest(sh, "the relay ran out of resources to accept") {
                        std::thread::sleep(Duration::from_millis(10));
                        return;
                    }
                }
            }
        }
    }

    fn on_accept(&mut self, sh: &Arc<Shared>, stream: TcpStream, peer: SocketAddr) {
        let cfg = &sh.cfg;
        while self.pending.len() >= cfg.max_pending_handshakes {
            if !self.evict_oldest(
                sh,
                &format!(
                    "evicted: {} handshakes were pending and this one was the oldest",
                    cfg.max_pending_handshakes
                ),
            ) {
                break;
            }
        }
        let relay_nonce = match proto::random_nonce() {
            Ok(n) => n,
            Err(e) => return self.reject_stream(sh, &stream, peer, None, e),
        };
        let setup = stream
            .set_nonblocking(true)
            .and_then(|_| stream.set_nodelay(true))
            .and_then(|_| stream.try_clone());
        let watch = match setup {
            Ok(s) => mio::net::TcpStream::from_std(s),
            Err(e) => return self.reject_stream(sh, &stream, peer, None, e.to_string()),
        };
        // 42 bytes into a fresh socket's empty send buffer: a short write does not happen.
        match (&stream).write(&proto::encode_hello(&relay_nonce)) {
            Ok(n) if n == proto::HELLO_LEN => {}
            Ok(_) | Err(_) => {
                return self.reject_stream(sh, &stream, peer, None, "sending greeting failed".into())
            }
        }
        let token = Token(self.next_token);
        self.next_token += 1;
        let mut p = Pending {
            stream,
            watch,
            peer,
            relay_nonce,
            buf: [0; proto::AUTH_LEN],
            got: 0,
            deadline: Instant::now() + cfg.handshake_timeout,
        };
        if let Err(e) = self
            .poll
            .registry()
            .register(&mut p.watch, token, Interest::READABLE)
        {
            return self.reject_stream(sh, &p.stream, peer, None, format!("cannot watch socket: {e}"));
        }
        self.pending.insert(token, p);
        self.order.push_back(token);
        // Bytes may already be there (edge-triggered readiness: read now, not only on events).
        self.progress(sh, token);
    }

    /// Reads what is available from one pending connection and acts on it.
    fn progress(&mut self, sh: &Arc<Shared>, token: Token) {
        let Some(p) = self.pending.get_mut(&token) else {
            return;
        };
        let step = read_auth(sh, p);
        match step {
            Step::More => {}
            Step::Reject(verdict, reason) => {
                let mut p = self.pending.remove(&token).expect("present");
                let _ = self.poll.registry().deregister(&mut p.watch);
                self.reject_stream(sh, &p.stream, p.peer, verdict, reason);
            }
            Step::Admit(auth) => {
                let mut p = self.pending.remove(&token).expect("present");
                let _ = self.poll.registry().deregister(&mut p.watch);
                drop(p.watch);
                if let Err(e) = p.stream.set_nonblocking(false) {
                    return self.reject_stream(sh, &p.stream, p.peer, None, e.to_string());
                }
                admit(sh, p.stream, p.peer, p.relay_nonce, auth);
            }
        }
    }

    /// Closes pending handshakes whose deadline passed.
    fn expire(&mut self, sh: &Arc<Shared>) {
        let now = Instant::now();
        while let Some(&t) = self.order.front() {
            match self.pending.get(&t) {
                None => {
                    self.order.pop_front();
                }
                Some(p) if p.deadline <= now => {
                    self.order.pop_front();
                    let mut p = self.pending.remove(&t).expect("present");
                    let _ = self.poll.registry().deregister(&mut p.watch);
                    let reason = format!(
                        "no authentication within the handshake timeout ({})",
                        human(sh.cfg.handshake_timeout)
                    );
                    self.reject_stream(sh, &p.stream, p.peer, None, reason);
                }
                Some(_) => return,
            }
        }
    }

    /// Closes the oldest pending handshake; false when none is pending.
    fn evict_oldest(&mut self, sh: &Arc<Shared>, reason: &str) -> bool {
        while let Some(t) = self.order.pop_front() {
            if let Some(mut p) = self.pending.remove(&t) {
                let _ = self.poll.registry().deregister(&mut p.watch);
                self.reject_stream(sh, &p.stream, p.peer, None, reason.to_string());
                return true;
            }
        }
        false
    }

    fn reject_stream(
        &mut self,
        sh: &Arc<Shared>,
        stream: &TcpStream,
        peer: SocketAddr,
        verdict: Option<u8>,
        reason: String,
    ) {
        // Counted and logged before the peer can see the verdict: whoever observes the refusal
        // also finds it in the statistics and the log.
        sh.stats().connections_rejected += 1;
        if !sh.stop.load(Ordering::SeqCst) {
            self.log_rejection(sh, peer, &reason);
        }
        if let Some(v) = verdict {
            // Non-blocking: the byte goes into the send buffer or is not sent at all.
            let _ = (&*stream).write(&[v]);
        }
        let _ = stream.shutdown(Shutdown::Both);
    }

    fn log_rejection(&mut self, sh: &Shared, peer: SocketAddr, reason: &str) {
        if self.rejected_logged < REJECT_LOG_LINES {
            self.rejected_logged += 1;
            sh.log(&format!("rejected connection from {peer}: {reason}"));
        } else {
            self.rejected_unlogged += 1;
            if self.last_summary.elapsed() >= REJECT_LOG_EVERY {
                sh.log(&format!(
                    "rejected {} more connections that did not authenticate (latest from {peer}: {reason})",
                    self.rejected_unlogged
                ));
                self.rejected_unlogged = 0;
                self.last_summary = Instant::now();
            }
        }
    }
}

/// Reads the AUTH bytes available without blocking and checks them as early as possible.
fn read_auth(sh: &Shared, p: &mut Pending) -> Step {
    while p.got < proto::AUTH_LEN {
        match (&p.stream).read(&mut p.buf[p.got..]) {
            Ok(0) => return Step::Reject(None, "connection closed during the handshake".into()),
            Ok(n) => {
                let before = p.got;
                p.got += n;
                // Refuse garbage at once instead of waiting for the full message.
                if before < 8 && p.got >= 8 && &p.buf[..8] != proto::AUTH_MAGIC {
                    return Step::Reject(
                        Some(proto::VERDICT_REJECT_PROTOCOL),
                        "not a ferrodl relay client (bad authentication magic)".into(),
                    );
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::More,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Step::Reject(None, format!("reading authentication: {e}")),
        }
    }
    let auth = match proto::parse_auth(&p.buf) {
        Ok(a) => a,
        Err(e) => return Step::Reject(Some(proto::VERDICT_REJECT_PROTOCOL), e),
    };
    let w = auth.worker;
    if !proto::verify_tag(
        &sh.cfg.secret,
        Side::Client,
        &p.relay_nonce,
        &auth.client_nonce,
        w,
        auth.flags,
        &auth.tag,
    ) {
        return Step::Reject(
            Some(proto::VERDICT_REJECT_AUTH),
            format!(
                "authentication failed for partition {} attempt {} (wrong secret?)",
                w.partition, w.attempt
            ),
        );
    }
    // Checked after the tag: only a holder of the secret learns which setting the relay has.
    let want = if sh.cfg.encrypt { proto::FLAG_SEALED } else { 0 };
    if auth.flags != want {
        return Step::Reject(
            Some(proto::VERDICT_REJECT_PROTOCOL),
            format!(
                "partition {} attempt {}: the client {} frame encryption but this relay {} it \
                 (both sides must use the same spark.network.crypto.enabled)",
                w.partition,
                w.attempt,
                if auth.flags & proto::FLAG_SEALED != 0 { "asks for" } else { "does not use" },
                if sh.cfg.encrypt { "requires" } else { "does not use" },
            ),
        );
    }
    Step::Admit(auth)
}
