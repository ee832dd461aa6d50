//! The hub: accept thread, per-connection handshake / reader / writer threads.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufReader, BufWriter, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam::channel::{
    self, Receiver, RecvTimeoutError, SendTimeoutError, Sender, TrySendError,
};

use crate::error::{human, RelayError};
use crate::handshake::AcceptLoop;
use crate::proto::{self, HeaderError, Side};
use crate::seal::{self, Opener, Sealer};
use crate::spare::SpareBuffers;
use crate::{LogSink, MasterState, RelayClient, RelayConfig, RelayStats, WorkerId};

/// Buffer of the per-connection reader and writer (small frames are coalesced; larger payloads
/// go straight between the socket and their one buffer).
const IO_BUF: usize = 64 * 1024;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in a MasterState is caught where it is called; never let poisoning cascade.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One accepted TCP connection, from accept to close (handshake included).
struct Socket {
    id: u64,
    peer: SocketAddr,
    stream: TcpStream,
    closed: AtomicBool,
    /// Wakes the connection's writer when the connection is closed.
    wake_tx: Sender<()>,
    wake_rx: Receiver<()>,
}

impl Socket {
    /// Idempotent: marks closed, shuts the socket down (unblocking its reader and writer).
    fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            let _ = self.stream.shutdown(Shutdown::Both);
            let _ = self.wake_tx.try_send(());
        }
    }
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// What a connection's writer sends, in order.
enum Out {
    Update(Arc<Vec<u8>>),
    FinishAck,
    /// Answers a FLUSH of a child relay node (a relay tree).
    FlushAck,
    Error(String),
}

/// An authenticated worker connection, registered for forwarding.
struct Conn {
    sock: Arc<Socket>,
    worker: WorkerId,
    tx: Sender<Out>,
    /// Heartbeat period of the writer (negotiated in the handshake).
    heartbeat: Duration,
    /// Set by the writer once FINISH_ACK is flushed to the socket.
    acked: AtomicBool,
    /// Why the connection was closed by someone other than its reader (writer failure, full
    /// queue); the reader logs it once when the connection ends.
    close_reason: Mutex<Option<String>>,
    /// Forwards that chose this connection as a destination (under the core lock) and have not
    /// finished pushing yet. Lets FINISH and teardown account for every message exactly.
    inflight: AtomicUsize,
    /// Set (under the core lock) when a newer attempt of the same partition connected: nothing
    /// this connection sends is applied any more.
    superseded: AtomicBool,
}

impl Conn {
    /// Closes the connection, remembering the first reason for the log.
    fn fail(&self, reason: String) {
        if !self.sock.is_closed() {
            lock(&self.close_reason).get_or_insert(reason);
        }
        self.sock.close();
    }

    fn wait_inflight_zero(&self, mut drain: impl FnMut()) {
        loop {
            drain();
            if self.inflight.load(Ordering::SeqCst) == 0 {
                drain();
                return;
            }
            thread::sleep(Duration::from_micros(200));
        }
    }
}

/// State guarded by one lock: applying an update and choosing its destinations is atomic with
/// respect to a new connection taking its snapshot and registering, so every update is either
/// in a worker's snapshot or forwarded to it, never both, never neither.
struct Core {
    state: Option<Box<dyn MasterState>>,
    conns: BTreeMap<u64, Arc<Conn>>,
    stopping: bool,
}

pub(crate) struct Shared {
    pub(crate) cfg: RelayConfig,
    log: Option<LogSink>,
    addr: SocketAddr,
    core: Mutex<Core>,
    stats: Mutex<RelayStats>,
    sockets: Mutex<HashMap<u64, Arc<Socket>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) stop: AtomicBool,
    /// Wakes the accept loop at shutdown.
    waker: mio::Waker,
    next_id: AtomicU64,
    live_threads: AtomicUsize,
    max_queued: AtomicUsize,
    /// A relay tree node's connection to its parent: every update of this relay's connections
    /// is also sent there, and FINISH / FLUSH are acknowledged only once the parent confirms
    /// (`tree.rs`). `None` for the root (or a flat relay). Weak: the node owns the client, so
    /// the client is never dropped by one of its own threads.
    upstream: Option<Weak<RelayClient>>,
    /// `/proc/<pid>/task/<tid>` of every thread this relay started (Linux; for
    /// [`Relay::cpu_seconds`], the measurement of docs/SCALING.md).
    tasks: Mutex<Vec<std::path::PathBuf>>,
    /// Time spent holding the core lock to apply an update and pick its destinations: wall
    /// clock, and the holding threads' CPU time.
    locked_nanos: AtomicU64,
    locked_cpu_nanos: AtomicU64,
    /// Buffers of updates already relayed, for the readers' next ones ([`Shared::recycle`]).
    spare: SpareBuffers,
}

impl Shared {
    /// Keeps a relayed update's buffer for a reader when nobody else holds it any more.
    fn recycle(&self, msg: Arc<Vec<u8>>) {
        if let Ok(v) = Arc::try_unwrap(msg) {
            self.spare.give(v);
        }
    }

    pub(crate) fn log(&self, msg: &str) {
        match &self.log {
            Some(f) => f(msg),
            None => eprintln!("ferrodl-relay {}: {msg}", self.addr),
        }
    }

    pub(crate) fn stats(&self) -> MutexGuard<'_, RelayStats> {
        lock(&self.stats)
    }

    fn bump(&self, partition: u32, f: impl FnOnce(&mut crate::WorkerCounters)) {
        f(self.stats().per_worker.entry(partition).or_default());
    }

    /// Spawns a named thread counted in `live_threads` and joined on shutdown.
    fn spawn(self: &Arc<Self>, name: String, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
        struct Guard(Arc<Shared>);
        impl Drop for Guard {
            fn drop(&mut self) {
                self.0.live_threads.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.live_threads.fetch_add(1, Ordering::SeqCst);
        let guard = Guard(self.clone());
        let h = thread::Builder::new().name(name).spawn(move || {
            let _g = guard;
            _g.0.register_task();
            f()
        })?;
        let mut threads = lock(&self.threads);
        // Reap finished threads so the list never grows with reconnects.
        let mut i = 0;
        while i < threads.len() {
            if threads[i].is_finished() {
                let _ = threads.swap_remove(i).join();
            } else {
                i += 1;
            }
        }
        threads.push(h);
        Ok(())
    }

    /// Records the calling thread's `/proc` entry (nothing where there is none).
    fn register_task(&self) {
        if let Ok(p) = std::fs::read_link("/proc/thread-self") {
            lock(&self.tasks).push(std::path::Path::new("/proc").join(p));
        }
    }

    fn unregister(&self, conn: &Conn) {
        lock(&self.core).conns.remove(&conn.sock.id);
    }

    fn forget_socket(&self, id: u64) {
        lock(&self.sockets).remove(&id);
    }
}

/// The relay: a TCP hub started by the driver of a fit. See the crate documentation.
pub struct Relay {
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
    stopped: bool,
}

fn bind(cfg: &RelayConfig) -> Result<TcpListener, RelayError> {
    let host = &cfg.bind_host;
    match cfg.port_range {
        None => TcpListener::bind((host.as_str(), 0)).map_err(|e| RelayError::Bind {
            addr: format!("{host}:0"),
            detail: e.to_string(),
        }),
        Some((lo, hi)) => {
            let range = format!("{host}:{lo}-{hi}");
            if lo > hi || lo == 0 {
                return Err(RelayError::Config {
                    addr: range,
                    detail: format!("invalid port range {lo}-{hi}"),
                });
            }
            let mut last = String::new();
            for port in lo..=hi {
                match TcpListener::bind((host.as_str(), port)) {
                    Ok(l) => return Ok(l),
                    Err(e) => last = e.to_string(),
                }
            }
            Err(RelayError::Bind {
                addr: range,
                detail: format!("no free port in range {lo}-{hi} (last error: {last})"),
            })
        }
    }
}

fn validate(cfg: &RelayConfig) -> Result<(), String> {
    if cfg.secret.len() < proto::MIN_SECRET_LEN {
        return Err(format!(
            "secret must be at least {} bytes, got {}",
            proto::MIN_SECRET_LEN,
            cfg.secret.len()
        ));
    }
    if cfg.max_final_state_bytes > u32::MAX as usize {
        return Err(format!(
            "max_final_state_bytes must be at most 4294967295, got {}",
            cfg.max_final_state_bytes
        ));
    }
    if cfg.max_message_bytes == 0 || cfg.max_message_bytes > u32::MAX as usize {
        return Err(format!(
            "max_message_bytes must be in 1..=4294967295, got {}",
            cfg.max_message_bytes
        ));
    }
    if cfg.queue_limit_messages == 0 || cfg.queue_limit_messages > crate::MAX_QUEUE_LIMIT {
        return Err(format!(
            "queue_limit_messages must be in 1..={}, got {}",
            crate::MAX_QUEUE_LIMIT,
            cfg.queue_limit_messages
        ));
    }
    if cfg.io_timeout.is_zero() || cfg.handshake_timeout.is_zero() {
        return Err("io_timeout and handshake_timeout must be positive".into());
    }
    if cfg.max_pending_handshakes == 0 {
        return Err("max_pending_handshakes must be at least 1".into());
    }
    Ok(())
}

impl Relay {
    /// Binds, then starts the accept thread. Errors name the host and port (range).
    pub fn start(config: RelayConfig, state: Box<dyn MasterState>) -> Result<Relay, RelayError> {
        Relay::start_inner(config, state, None)
    }

    /// A relay whose connections' updates also go to `upstream` (a relay tree node).
    pub(crate) fn start_node(
        config: RelayConfig,
        state: Box<dyn MasterState>,
        upstream: Weak<RelayClient>,
    ) -> Result<Relay, RelayError> {
        Relay::start_inner(config, state, Some(upstream))
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    fn start_inner(
        config: RelayConfig,
        state: Box<dyn MasterState>,
        upstream: Option<Weak<RelayClient>>,
    ) -> Result<Relay, RelayError> {
        if let Err(detail) = validate(&config) {
            let port = match config.port_range {
                Some((lo, hi)) => format!("{lo}-{hi}"),
                None => "0".into(),
            };
            return Err(RelayError::Config {
                addr: format!("{}:{port}", config.bind_host),
                detail,
            });
        }
        let listener = bind(&config)?;
        let addr = listener.local_addr().map_err(|e| RelayError::Bind {
            addr: config.bind_host.clone(),
            detail: e.to_string(),
        })?;
        let bind_err = |e: io::Error| RelayError::Bind {
            addr: addr.to_string(),
            detail: e.to_string(),
        };
        listener.set_nonblocking(true).map_err(bind_err)?;
        let poll = mio::Poll::new().map_err(bind_err)?;
        let waker = mio::Waker::new(poll.registry(), crate::handshake::WAKER).map_err(bind_err)?;
        let accept_loop = AcceptLoop::new(poll, listener).map_err(bind_err)?;
        let shared = Arc::new(Shared {
            log: config.log.clone(),
            cfg: config,
            addr,
            core: Mutex::new(Core {
                state: Some(state),
                conns: BTreeMap::new(),
                stopping: false,
            }),
            stats: Mutex::new(RelayStats::default()),
            sockets: Mutex::new(HashMap::new()),
            threads: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            waker,
            next_id: AtomicU64::new(1),
            live_threads: AtomicUsize::new(0),
            max_queued: AtomicUsize::new(0),
            upstream,
            tasks: Mutex::new(Vec::new()),
            locked_nanos: AtomicU64::new(0),
            locked_cpu_nanos: AtomicU64::new(0),
            spare: SpareBuffers::default(),
        });
        let sh = shared.clone();
        shared.live_threads.fetch_add(1, Ordering::SeqCst);
        let accept = thread::Builder::new()
            .name("ferrodl-relay-accept".into())
            .spawn(move || {
                sh.register_task();
                accept_loop.run(&sh);
                sh.live_threads.fetch_sub(1, Ordering::SeqCst);
            })
            .map_err(|e| {
                shared.live_threads.fetch_sub(1, Ordering::SeqCst);
                RelayError::Bind {
                    addr: addr.to_string(),
                    detail: format!("cannot spawn accept thread: {e}"),
                }
            })?;
        Ok(Relay {
            shared,
            accept: Some(accept),
            stopped: false,
        })
    }

    /// The bound address (with the real port when the configuration asked for any port).
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// A snapshot of the counters and gauges.
    pub fn stats(&self) -> RelayStats {
        snapshot_stats(&self.shared)
    }

    /// CPU time (user + system, seconds) used so far by this relay's threads that are still
    /// running, from `/proc/<pid>/task/<tid>/stat` (Linux; 0 elsewhere). Resolution: one clock
    /// tick (usually 10 ms). Used by the scaling measurement to tell the hub's own cost from the
    /// machine's load (docs/SCALING.md).
    pub fn cpu_seconds(&self) -> f64 {
        // USER_HZ is 100 on every Linux ABI Rust targets.
        const TICKS_PER_SECOND: f64 = 100.0;
        let tasks = lock(&self.shared.tasks).clone();
        let ticks: u64 = tasks
            .iter()
            .filter_map(|t| std::fs::read_to_string(t.join("stat")).ok())
            .filter_map(|stat| {
                // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
                let rest = &stat[stat.rfind(')')? + 2..];
                let f: Vec<&str> = rest.split_whitespace().collect();
                Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
            })
            .sum();
        ticks as f64 / TICKS_PER_SECOND
    }

    /// Runs `f` on the master state, serialized with `apply`.
    pub fn with_state<R>(&self, f: impl FnOnce(&mut dyn MasterState) -> R) -> R {
        let mut core = lock(&self.shared.core);
        let state = core
            .state
            .as_mut()
            .expect("state is present until shutdown");
        f(state.as_mut())
    }

    /// Stops accepting, closes every connection, joins every thread; returns the master state
    /// and the final statistics.
    pub fn shutdown(mut self) -> (Box<dyn MasterState>, RelayStats) {
        self.stop();
        let state = lock(&self.shared.core)
            .state
            .take()
            .expect("state is present until shutdown");
        (state, snapshot_stats(&self.shared))
    }

    fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        let sh = &self.shared;
        sh.stop.store(true, Ordering::SeqCst);
        let _ = sh.waker.wake();
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
        lock(&sh.core).stopping = true;
        // No socket can be added any more (the accept thread is gone): close them all, then
        // join every thread, including threads spawned by handshakes that were finishing.
        loop {
            let socks: Vec<Arc<Socket>> = lock(&sh.sockets).values().cloned().collect();
            for s in &socks {
                s.close();
            }
            let handles: Vec<JoinHandle<()>> = std::mem::take(&mut *lock(&sh.threads));
            if handles.is_empty() {
                break;
            }
            for h in handles {
                let _ = h.join();
            }
        }
        lock(&sh.sockets).clear();
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop();
    }
}

fn snapshot_stats(sh: &Shared) -> RelayStats {
    let (queued, live) = {
        let core = lock(&sh.core);
        (
            core.conns.values().map(|c| c.tx.len() as u64).sum::<u64>(),
            core.conns.len() as u64,
        )
    };
    let mut s = sh.stats().clone();
    s.queued_messages = queued;
    s.live_connections = live;
    s.live_threads = sh.live_threads.load(Ordering::SeqCst) as u64;
    s.max_queued_per_connection = sh.max_queued.load(Ordering::SeqCst) as u64;
    s.locked_nanos = sh.locked_nanos.load(Ordering::Relaxed);
    s.locked_cpu_nanos = sh.locked_cpu_nanos.load(Ordering::Relaxed);
    s
}

/// Admission of a connection that proved the secret (called by the accept loop, which never
/// waits for it): registration and the snapshot happen on a thread of the connection's own.
pub(crate) fn admit(
    sh: &Arc<Shared>,
    stream: TcpStream,
    peer: SocketAddr,
    relay_nonce: [u8; proto::NONCE_LEN],
    auth: proto::Auth,
) {
    let fail = |why: String| {
        sh.stats().connections_rejected += 1;
        sh.log(&format!("rejected connection from {peer}: {why}"));
    };
    let Ok(stream2) = stream.try_clone() else {
        return fail("cannot clone the socket".into());
    };
    let (wake_tx, wake_rx) = channel::bounded(1);
    let id = sh.next_id.fetch_add(1, Ordering::SeqCst);
    let sock = Arc::new(Socket {
        id,
        peer,
        stream: stream2,
        closed: AtomicBool::new(false),
        wake_tx,
        wake_rx,
    });
    drop(stream);
    lock(&sh.sockets).insert(id, sock.clone());
    let sh2 = sh.clone();
    let sock2 = sock.clone();
    if let Err(e) = sh.spawn("ferrodl-relay-handshake".into(), move || {
        admission_thread(&sh2, sock2, relay_nonce, auth)
    }) {
        fail(format!("cannot spawn admission thread: {e}"));
        sock.close();
        sh.forget_socket(id);
    }
}

fn admission_thread(
    sh: &Arc<Shared>,
    sock: Arc<Socket>,
    relay_nonce: [u8; proto::NONCE_LEN],
    auth: proto::Auth,
) {
    match register(sh, &sock, relay_nonce, auth) {
        Ok(Some(r)) => start_conn(sh, r),
        Ok(None) => {
            // Authenticated and registered, but the snapshot could not be delivered.
            sock.close();
            sh.forget_socket(sock.id);
        }
        Err(reason) => {
            sh.stats().connections_rejected += 1;
            if !sh.stop.load(Ordering::SeqCst) {
                sh.log(&format!("rejected connection from {}: {reason}", sock.peer));
            }
            sock.close();
            sh.forget_socket(sock.id);
        }
    }
}

/// An admitted connection and what its writer and reader threads own.
struct Registered {
    conn: Arc<Conn>,
    rx: Receiver<Out>,
    sealer: Option<Sealer>,
    opener: Option<Opener>,
}

/// Registers an authenticated connection for forwarding and sends the ACCEPT and the snapshot.
/// `Err` = refused (shutting down, superseded; counted by the caller); `Ok(None)` = lost while
/// sending the snapshot (counted here as aborted).
fn register(
    sh: &Arc<Shared>,
    sock: &Arc<Socket>,
    relay_nonce: [u8; proto::NONCE_LEN],
    auth: proto::Auth,
) -> Result<Option<Registered>, String> {
    let cfg = &sh.cfg;
    let mut s = &sock.stream;
    s.set_write_timeout(Some(cfg.io_timeout))
        .map_err(|e| e.to_string())?;
    let w = auth.worker;
    let relay_tag = proto::auth_tag(
        &cfg.secret,
        Side::Relay,
        &relay_nonce,
        &auth.client_nonce,
        w,
        auth.flags,
    );
    let mut keys = cfg
        .encrypt
        .then(|| seal::keys(&cfg.secret, true, &relay_nonce, &auth.client_nonce, w));
    let (tx, rx) = channel::bounded(cfg.queue_limit_messages);
    let own_heartbeat = proto::heartbeat_for(cfg.io_timeout);
    let heartbeat = proto::heartbeat_with(own_heartbeat, auth.heartbeat_ms);
    let conn = Arc::new(Conn {
        sock: sock.clone(),
        worker: w,
        tx,
        heartbeat,
        acked: AtomicBool::new(false),
        close_reason: Mutex::new(None),
        inflight: AtomicUsize::new(0),
        superseded: AtomicBool::new(false),
    });
    let snapshot = {
        let mut core = lock(&sh.core);
        if core.stopping {
            drop(core);
            let _ = s.write_all(&[proto::VERDICT_UNAVAILABLE]);
            return Err("relay is shutting down".into());
        }
        // The newest attempt of a partition wins (Spark speculation, or a re-run while the old
        // attempt still lives): two live attempts would apply the same data twice.
        if let Some(newer) = core
            .conns
            .values()
            .find(|c| c.worker.partition == w.partition && c.worker.attempt > w.attempt)
        {
            let newer = newer.worker.attempt;
            drop(core);
            let _ = s.write_all(&[proto::VERDICT_SUPERSEDED]);
            return Err(format!(
                "partition {} attempt {}: attempt {newer} of this partition is already \
                 connected and the newest attempt wins",
                w.partition, w.attempt
            ));
        }
        let older: Vec<Arc<Conn>> = core
            .conns
            .values()
            .filter(|c| c.worker.partition == w.partition)
            .cloned()
            .collect();
        for old in older {
            core.conns.remove(&old.sock.id);
            old.superseded.store(true, Ordering::SeqCst);
            let reason = format!(
                "superseded by attempt {} of partition {}; updates from attempt {} are no \
                 longer applied",
                w.attempt, w.partition, old.worker.attempt
            );
            lock(&old.close_reason).get_or_insert(reason.clone());
            // Tell the old worker why, if its queue has room; otherwise just close it.
            if old.tx.try_send(Out::Error(reason.clone())).is_err() {
                old.fail(reason);
            }
            sh.stats().connections_superseded += 1;
        }
        let snap = catch_unwind(AssertUnwindSafe(|| {
            core.state
                .as_ref()
                .expect("state is present until shutdown")
                .snapshot()
        }))
        .map_err(|_| "MasterState::snapshot panicked".to_string())?;
        core.conns.insert(sock.id, conn.clone());
        let mut st = sh.stats();
        st.connections_accepted += 1;
        let c = st.per_worker.entry(w.partition).or_default();
        c.attempts_seen += 1;
        c.last_attempt = w.attempt;
        if c.attempts_seen > 1 {
            st.reconnects += 1;
        }
        snap
    };
    let mut head = Vec::with_capacity(proto::ACCEPT_LEN);
    head.push(proto::VERDICT_ACCEPT);
    head.extend_from_slice(&relay_tag);
    head.extend_from_slice(&proto::to_ms(own_heartbeat).to_be_bytes());
    head.extend_from_slice(&snapshot.len().to_be_bytes());
    // Sealed: chunk i of the snapshot is the relay's sealed message i, the length its AAD.
    let aad = snapshot.len().to_be_bytes();
    let sent = s.write_all(&head).and_then(|_| match keys.as_mut() {
        Some((sealer, _)) => {
            let mut chunk = Vec::new();
            snapshot.for_each_piece(proto::SNAPSHOT_CHUNK, &mut chunk, |piece| {
                let tag = sealer
                    .seal(&aad, piece)
                    .map_err(std::io::Error::other)?;
                s.write_all(piece)?;
                s.write_all(&tag)
            })
        }
        None => snapshot.parts().try_for_each(|part| s.write_all(part)),
    });
    drop(snapshot);
    if let Err(e) = sent {
        sh.log(&format!(
            "partition {} attempt {} ({}): sending the snapshot failed: {e}",
            w.partition, w.attempt, sock.peer
        ));
        sh.stats().connections_aborted += 1;
        sock.close();
        teardown(sh, &conn, &rx);
        return Ok(None);
    }
    let (sealer, opener) = match keys {
        Some((s, o)) => (Some(s), Some(o)),
        None => (None, None),
    };
    Ok(Some(Registered {
        conn,
        rx,
        sealer,
        opener,
    }))
}

fn start_conn(sh: &Arc<Shared>, r: Registered) {
    let Registered {
        conn,
        rx,
        sealer,
        opener,
    } = r;
    let p = conn.worker.partition;
    // The reader waits for the writer to finish sending an ERROR frame before closing.
    let (done_tx, done_rx) = channel::bounded::<()>(0);
    let (sh_w, conn_w) = (sh.clone(), conn.clone());
    let writer = sh.spawn(format!("ferrodl-relay-conn-{p}-w"), move || {
        writer_loop(&sh_w, &conn_w, rx, sealer);
        drop(done_tx);
    });
    if let Err(e) = writer {
        // `rx` went with the failed closure: nobody can be blocked on the queue for long.
        sh.log(&format!("partition {p}: cannot spawn writer thread: {e}"));
        sh.stats().connections_aborted += 1;
        conn.sock.close();
        sh.unregister(&conn);
        sh.forget_socket(conn.sock.id);
        return;
    }
    let (sh_r, conn_r) = (sh.clone(), conn.clone());
    if let Err(e) = sh.spawn(format!("ferrodl-relay-conn-{p}-r"), move || {
        reader_loop(&sh_r, &conn_r, done_rx, opener)
    }) {
        sh.log(&format!("partition {p}: cannot spawn reader thread: {e}"));
        sh.stats().connections_aborted += 1;
        conn.sock.close();
        sh.forget_socket(conn.sock.id);
    }
}

/// Unregisters the connection, then counts every message still queued for it (or still being
/// pushed to it) as dropped outbound. Called by the writer when it stops.
fn teardown(sh: &Shared, conn: &Conn, rx: &Receiver<Out>) {
    sh.unregister(conn);
    let mut dropped = 0u64;
    conn.wait_inflight_zero(|| {
        while let Ok(m) = rx.try_recv() {
            if matches!(m, Out::Update(_)) {
                dropped += 1;
            }
        }
    });
    if dropped > 0 {
        sh.bump(conn.worker.partition, |c| {
            c.messages_dropped_outbound += dropped
        });
    }
}

fn writer_loop(sh: &Arc<Shared>, conn: &Arc<Conn>, rx: Receiver<Out>, mut sealer: Option<Sealer>) {
    let p = conn.worker.partition;
    let ping = conn.heartbeat;
    let mut w = BufWriter::with_capacity(IO_BUF, &conn.sock.stream);
    // Sealing encrypts in place: a relayed payload is shared with other destinations, so it is
    // copied into this buffer first (reused, grows to the largest message).
    let mut scratch: Vec<u8> = Vec::new();
    // Messages handed to the BufWriter but not yet flushed: committed as relayed on flush.
    let (mut pend_msgs, mut pend_bytes) = (0u64, 0u64);
    let mut clean = false;
    let mut failure: Option<String> = None;
    loop {
        if conn.sock.is_closed() {
            break;
        }
        let item = channel::select! {
            recv(rx) -> m => match m { Ok(m) => Some(m), Err(_) => break },
            recv(conn.sock.wake_rx) -> _ => break,
            default(ping) => None,
        };
        let mut frame = |w: &mut BufWriter<&TcpStream>, ty: u8, body: &[u8]| match sealer.as_mut() {
            None => proto::write_frame(w, ty, body).map(|_| ()),
            Some(s) => {
                scratch.clear();
                scratch.extend_from_slice(body);
                proto::write_frame_opt(w, ty, &mut scratch, Some(s)).map(|_| ())
            }
        };
        let res = match &item {
            None => frame(&mut w, proto::T_PING, &[]),
            Some(Out::Update(msg)) => {
                pend_msgs += 1;
                pend_bytes += msg.len() as u64;
                frame(&mut w, proto::T_RELAYED, msg)
            }
            Some(Out::FinishAck) => {
                // The worker may read its stats as soon as it sees the ack: count first,
                // correct below if the ack cannot be written.
                let (m, b) = (pend_msgs, pend_bytes);
                sh.bump(p, |c| {
                    c.messages_relayed_out += m;
                    c.bytes_relayed_out += b;
                    c.finished += 1;
                });
                conn.acked.store(true, Ordering::SeqCst);
                frame(&mut w, proto::T_FINISH_ACK, &[])
            }
            Some(Out::Error(reason)) => {
                let r = reason.as_bytes();
                frame(&mut w, proto::T_ERROR, &r[..r.len().min(proto::MAX_ERROR_LEN)])
            }
            Some(Out::FlushAck) => frame(&mut w, proto::T_FLUSH_ACK, &[]),
        };
        let last = matches!(item, Some(Out::FinishAck) | Some(Out::Error(_)));
        let push = last || matches!(item, Some(Out::FlushAck));
        let res = res.and_then(|_| {
            if push || rx.is_empty() {
                w.flush()
            } else {
                Ok(())
            }
        });
        match res {
            Ok(()) => {
                if matches!(item, Some(Out::FinishAck)) {
                    (pend_msgs, pend_bytes) = (0, 0); // counted above
                }
                if pend_msgs > 0 && w.buffer().is_empty() {
                    let (m, b) = (pend_msgs, pend_bytes);
                    sh.bump(p, |c| {
                        c.messages_relayed_out += m;
                        c.bytes_relayed_out += b;
                    });
                    pend_msgs = 0;
                    pend_bytes = 0;
                }
            }
            Err(e) => {
                if matches!(item, Some(Out::FinishAck)) {
                    conn.acked.store(false, Ordering::SeqCst);
                    let (m, b) = (pend_msgs, pend_bytes);
                    sh.bump(p, |c| {
                        c.messages_relayed_out -= m;
                        c.bytes_relayed_out -= b;
                        c.finished -= 1;
                    });
                }
                failure = Some(if proto::is_timeout(&e) {
                    format!(
                        "did not read for {} (write timed out)",
                        human(sh.cfg.io_timeout)
                    )
                } else {
                    format!("write failed: {e}")
                });
                break;
            }
        }
        if last {
            clean = matches!(item, Some(Out::FinishAck));
            break;
        }
        if let Some(Out::Update(msg)) = item {
            sh.recycle(msg);
        }
    }
    if pend_msgs > 0 {
        sh.bump(p, |c| c.messages_dropped_outbound += pend_msgs);
    }
    // Forget the BufWriter without flushing again (a failed flush would just fail again).
    let _ = w.into_parts();
    if let Some(f) = failure {
        conn.fail(f);
    } else if clean {
        let _ = conn.sock.stream.shutdown(Shutdown::Write);
    } else {
        conn.sock.close();
    }
    teardown(sh, conn, &rx);
}

/// Pushes one update to a destination's queue: a blocking send bounded by `io_timeout`
/// (back-pressure to the sender); a destination that stays full that long is disconnected.
fn push(sh: &Shared, dest: &Conn, msg: &Arc<Vec<u8>>) {
    let dp = dest.worker.partition;
    if dest.sock.is_closed() {
        sh.bump(dp, |c| c.messages_dropped_outbound += 1);
        return;
    }
    let delivered = match dest.tx.try_send(Out::Update(msg.clone())) {
        Ok(()) => true,
        Err(TrySendError::Disconnected(_)) => false,
        Err(TrySendError::Full(m)) => {
            sh.stats().outbound_waits += 1;
            match dest.tx.send_timeout(m, sh.cfg.io_timeout) {
                Ok(()) => true,
                Err(SendTimeoutError::Disconnected(_)) => false,
                Err(SendTimeoutError::Timeout(_)) => {
                    dest.fail(format!(
                        "its queue of {} messages did not drain within {}",
                        sh.cfg.queue_limit_messages,
                        human(sh.cfg.io_timeout)
                    ));
                    false
                }
            }
        }
    };
    if delivered {
        sh.max_queued.fetch_max(dest.tx.len(), Ordering::SeqCst);
    } else {
        sh.bump(dp, |c| c.messages_dropped_outbound += 1);
    }
}

/// Adds the wall and CPU time from its creation to its drop to the relay's counters (the core
/// lock's hold time).
struct LockTimer<'a> {
    sh: &'a Shared,
    wall: Instant,
    cpu: u64,
}

impl<'a> LockTimer<'a> {
    fn new(sh: &'a Shared) -> Self {
        LockTimer {
            sh,
            wall: Instant::now(),
            cpu: thread_cpu_nanos(),
        }
    }
}

impl Drop for LockTimer<'_> {
    fn drop(&mut self) {
        let sh = self.sh;
        sh.locked_nanos
            .fetch_add(self.wall.elapsed().as_nanos() as u64, Ordering::Relaxed);
        sh.locked_cpu_nanos
            .fetch_add(thread_cpu_nanos().saturating_sub(self.cpu), Ordering::Relaxed);
    }
}

/// CPU time of the calling thread in nanoseconds (0 where the platform has no such clock).
#[cfg(unix)]
fn thread_cpu_nanos() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer; the clock id is a
    // constant every Unix Rust targets provides.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(not(unix))]
fn thread_cpu_nanos() -> u64 {
    0
}

/// Applies an update, then forwards it to every other live connection.
/// A worker's final state, sent with its FINISH: handed to the master state under the lock that
/// applies updates (every earlier update of the connection is applied: frames are handled in order).
fn take_final_state(sh: &Shared, conn: &Conn, state: &[u8]) -> Result<(), String> {
    let mut core = lock(&sh.core);
    if conn.superseded.load(Ordering::SeqCst) {
        return Err("superseded by a newer attempt of this partition".into());
    }
    let master = core.state.as_mut().ok_or("relay is shutting down")?;
    catch_unwind(AssertUnwindSafe(|| master.finish(conn.worker, state)))
        .unwrap_or_else(|_| Err("MasterState::finish panicked".into()))
        .map_err(|e| format!("final state rejected by the master state: {e}"))
}

/// After a worker's FINISH (frames are handled in order: every earlier update is applied): stops
/// forwarding to it, lets forwards already aimed at it land in its queue, and acks.
fn acknowledge_finish(sh: &Shared, conn: &Arc<Conn>) -> Result<(), ReadEnd> {
    sh.unregister(conn);
    conn.wait_inflight_zero(|| {});
    // In a tree, "applied" means at the root: wait for the parent's word.
    flush_upstream(sh).map_err(|reason| ReadEnd::Abort { reason, tell: true })?;
    conn.tx.send(Out::FinishAck).map_err(|_| ReadEnd::Abort {
        reason: "connection lost before FINISH_ACK".into(),
        tell: false,
    })
}

fn handle_update(sh: &Shared, conn: &Conn, payload: Vec<u8>) -> Result<(), String> {
    let w = conn.worker;
    let msg = Arc::new(payload);
    // each destination with what it gets: the update (forwarded to the others) and the state's
    // own messages (to everyone)
    let dests: Vec<(Arc<Conn>, bool)>;
    let own: Vec<Arc<Vec<u8>>>;
    {
        let mut core = lock(&sh.core);
        let _timer = LockTimer::new(sh);
        // Checked under the lock that sets it: nothing is applied after the supersession.
        if conn.superseded.load(Ordering::SeqCst) {
            sh.bump(w.partition, |c| c.messages_dropped += 1);
            return Err("superseded by a newer attempt of this partition".into());
        }
        let state = core.state.as_mut().ok_or("relay is shutting down")?;
        let res = catch_unwind(AssertUnwindSafe(|| {
            state
                .apply(w, &msg)
                .map(|()| (state.forwards_updates(), state.take_broadcasts()))
        }))
        .unwrap_or_else(|_| Err("MasterState::apply panicked".into()));
        let forwards = match res {
            Ok((forwards, broadcasts)) => {
                own = broadcasts;
                forwards
            }
            Err(e) => {
                sh.bump(w.partition, |c| c.messages_dropped += 1);
                return Err(format!("invalid update rejected by the master state: {e}"));
            }
        };
        sh.bump(w.partition, |c| c.messages_applied += 1);
        dests = core
            .conns
            .values()
            .filter_map(|c| {
                let forward = forwards && c.sock.id != conn.sock.id;
                (forward || !own.is_empty()).then(|| {
                    c.inflight.fetch_add(1, Ordering::SeqCst);
                    (c.clone(), forward)
                })
            })
            .collect();
    }
    for (d, forward) in dests {
        if forward {
            push(sh, &d, &msg);
        }
        for m in &own {
            push(sh, &d, m);
        }
        d.inflight.fetch_sub(1, Ordering::SeqCst);
    }
    if let Some(up) = &sh.upstream {
        // Blocks while the parent applies back-pressure, as a worker's send does.
        upstream(up)?
            .send(msg.as_ref().clone())
            .map_err(|e| format!("this relay node lost its parent relay: {e}"))?;
        sh.stats().upstream_sent += 1;
    }
    // the writers may all have sent it already
    sh.recycle(msg);
    Ok(())
}

/// The worker id a relay tree node passes to [`MasterState::apply`] for an update that came
/// from its parent.
pub const UPSTREAM_WORKER: WorkerId = WorkerId {
    partition: u32::MAX,
    attempt: 0,
};

/// Applies an update that came from this node's parent and forwards it to every connection
/// (the parent already excluded the connection it came from: this whole subtree).
pub(crate) fn inject(sh: &Shared, payload: Vec<u8>) -> Result<(), String> {
    let dests: Vec<Arc<Conn>> = {
        let mut core = lock(&sh.core);
        let _timer = LockTimer::new(sh);
        let state = core.state.as_mut().ok_or("relay is shutting down")?;
        catch_unwind(AssertUnwindSafe(|| state.apply(UPSTREAM_WORKER, &payload)))
            .unwrap_or_else(|_| Err("MasterState::apply panicked".into()))
            .map_err(|e| format!("an update from the parent relay was rejected: {e}"))?;
        core.conns
            .values()
            .map(|c| {
                c.inflight.fetch_add(1, Ordering::SeqCst);
                c.clone()
            })
            .collect()
    };
    sh.stats().upstream_received += 1;
    let msg = Arc::new(payload);
    for d in dests {
        push(sh, &d, &msg);
        d.inflight.fetch_sub(1, Ordering::SeqCst);
    }
    Ok(())
}

/// Ends every connection and refuses new ones (a relay tree node whose parent is gone: its
/// workers fail, and their re-run attempts connect elsewhere and take a fresh snapshot).
pub(crate) fn abort_all(sh: &Shared, reason: &str) {
    let conns: Vec<Arc<Conn>> = {
        let mut core = lock(&sh.core);
        core.stopping = true;
        core.conns.values().cloned().collect()
    };
    sh.log(&format!("closing every connection: {reason}"));
    for c in conns {
        c.fail(reason.to_string());
    }
    for s in lock(&sh.sockets).values() {
        s.close();
    }
}

/// A tree node's flush to its parent (nothing to do at the root).
fn flush_upstream(sh: &Shared) -> Result<(), String> {
    match &sh.upstream {
        None => Ok(()),
        Some(up) => upstream(up)?
            .flush()
            .map_err(|e| format!("this relay node lost its parent relay: {e}")),
    }
}

fn upstream(up: &Weak<RelayClient>) -> Result<Arc<RelayClient>, String> {
    up.upgrade()
        .ok_or_else(|| "this relay node's parent connection is closed".to_string())
}

enum ReadEnd {
    /// FINISH was acknowledged and the worker closed.
    Clean,
    /// Dropped before FINISH; the reason, and whether to tell the worker first.
    Abort { reason: String, tell: bool },
}

fn reader_loop(
    sh: &Arc<Shared>,
    conn: &Arc<Conn>,
    writer_done: Receiver<()>,
    mut opener: Option<Opener>,
) {
    let w = conn.worker;
    let p = w.partition;
    let max = sh.cfg.max_message_bytes;
    let io_timeout = sh.cfg.io_timeout;
    let _ = conn.sock.stream.set_read_timeout(Some(io_timeout));
    let mut r = BufReader::with_capacity(IO_BUF, &conn.sock.stream);
    let mut finished = false;
    let mut small: Vec<u8> = Vec::new();
    let dropped = |why: &str| {
        sh.bump(p, |c| c.messages_dropped += 1);
        why.to_string()
    };
    let end = loop {
        let (ty, len) = match proto::read_header(&mut r) {
            Ok(Some(h)) => h,
            Ok(None) if finished => break ReadEnd::Clean,
            Ok(None) => {
                break ReadEnd::Abort {
                    reason: "connection closed before FINISH".into(),
                    tell: false,
                }
            }
            Err(HeaderError::Malformed(why)) => {
                sh.stats().protocol_errors += 1;
                break ReadEnd::Abort {
                    reason: dropped(&why),
                    tell: true,
                };
            }
            Err(HeaderError::Partial(e)) => {
                break ReadEnd::Abort {
                    reason: dropped(&format!("partial frame header discarded ({e})")),
                    tell: false,
                }
            }
            Err(HeaderError::Io(e)) => {
                if finished {
                    break ReadEnd::Clean;
                }
                let reason = if proto::is_timeout(&e) {
                    format!("no data (not even a heartbeat) for {}", human(io_timeout))
                } else {
                    format!("read failed: {e}")
                };
                break ReadEnd::Abort {
                    reason,
                    tell: false,
                };
            }
        };
        // A sealed frame that fails authentication ends the connection without a word: the
        // stream was altered, so nothing more from it can be trusted.
        let tampered = |e: &io::Error| e.kind() == io::ErrorKind::InvalidData;
        match ty {
            proto::T_UPDATE if !finished => {
                if len > max {
                    sh.stats().protocol_errors += 1;
                    let reason = dropped(&format!(
                        "frame of {len} bytes exceeds max_message_bytes ({max})"
                    ));
                    break ReadEnd::Abort { reason, tell: true };
                }
                let mut payload = sh.spare.take();
                if let Err(e) = proto::reserve_body(&mut payload, len, "an update frame") {
                    let reason = dropped(&format!("update refused: {e}"));
                    break ReadEnd::Abort { reason, tell: true };
                }
                if let Err(e) = proto::read_body(&mut r, ty, len, &mut payload, opener.as_mut()) {
                    if tampered(&e) {
                        sh.stats().protocol_errors += 1;
                    }
                    break ReadEnd::Abort {
                        reason: dropped(&format!("update of {len} bytes discarded ({e})")),
                        tell: false,
                    };
                }
                sh.bump(p, |c| {
                    c.messages_received += 1;
                    c.bytes_received += len as u64;
                });
                if let Err(reason) = handle_update(sh, conn, payload) {
                    break ReadEnd::Abort { reason, tell: true };
                }
            }
            proto::T_FINISH if !finished && len > 0 => {
                let max_final = sh.cfg.max_final_state_bytes;
                if len > max_final {
                    sh.stats().protocol_errors += 1;
                    break ReadEnd::Abort {
                        reason: format!(
                            "final state of {len} bytes exceeds max_final_state_bytes ({max_final})"
                        ),
                        tell: true,
                    };
                }
                let mut state = Vec::new();
                if let Err(e) = proto::reserve_body(&mut state, len, "a final state") {
                    break ReadEnd::Abort {
                        reason: format!("final state refused: {e}"),
                        tell: true,
                    };
                }
                if let Err(e) = proto::read_body(&mut r, ty, len, &mut state, opener.as_mut()) {
                    if tampered(&e) {
                        sh.stats().protocol_errors += 1;
                    }
                    break ReadEnd::Abort {
                        reason: format!("final state of {len} bytes discarded ({e})"),
                        tell: false,
                    };
                }
                if let Err(reason) = take_final_state(sh, conn, &state) {
                    break ReadEnd::Abort { reason, tell: true };
                }
                if let Err(end) = acknowledge_finish(sh, conn) {
                    break end;
                }
                finished = true;
            }
            proto::T_PING | proto::T_FINISH | proto::T_STALL | proto::T_FLUSH
                if (ty == proto::T_STALL && len <= proto::MAX_ERROR_LEN)
                    || (len == 0 && !(ty != proto::T_PING && finished)) =>
            {
                if let Err(e) = proto::read_body(&mut r, ty, len, &mut small, opener.as_mut()) {
                    if tampered(&e) {
                        sh.stats().protocol_errors += 1;
                    }
                    break ReadEnd::Abort {
                        reason: format!("reading a frame of type {ty:#04x}: {e}"),
                        tell: false,
                    };
                }
                if ty == proto::T_STALL {
                    let report = String::from_utf8_lossy(&small).into_owned();
                    sh.log(&format!(
                        "partition {p} attempt {} ({}) reports a stall: {report}",
                        w.attempt, conn.sock.peer
                    ));
                    sh.stats().stalls.push(crate::StallReport {
                        partition: p,
                        attempt: w.attempt,
                        peer: conn.sock.peer.to_string(),
                        report,
                    });
                } else if ty == proto::T_FLUSH {
                    // Every earlier update of this connection is applied here (in-order
                    // handling) and queued for our own parent, if any: flush that first.
                    if let Err(reason) = flush_upstream(sh) {
                        break ReadEnd::Abort { reason, tell: true };
                    }
                    if conn.tx.send_timeout(Out::FlushAck, io_timeout).is_err() {
                        break ReadEnd::Abort {
                            reason: "could not queue FLUSH_ACK".into(),
                            tell: false,
                        };
                    }
                } else if ty == proto::T_FINISH {
                    if let Err(end) = acknowledge_finish(sh, conn) {
                        break end;
                    }
                    finished = true;
                }
            }
            _ => {
                sh.stats().protocol_errors += 1;
                if ty == proto::T_UPDATE || ty == proto::T_FINISH {
                    sh.bump(p, |c| c.messages_dropped += 1);
                }
                break ReadEnd::Abort {
                    reason: format!("unexpected frame type {ty:#04x} with length {len}"),
                    tell: true,
                };
            }
        }
    };
    let mut abort_reason = None;
    match end {
        ReadEnd::Abort { reason, tell } => {
            sh.unregister(conn);
            if tell
                && !conn.sock.is_closed()
                && conn
                    .tx
                    .send_timeout(Out::Error(reason.clone()), io_timeout)
                    .is_ok()
            {
                // Let the writer deliver the queued updates and the reason (bounded by io_timeout).
                let _ = writer_done.recv_timeout(io_timeout);
            }
            abort_reason = Some(reason);
        }
        ReadEnd::Clean => {
            // The writer ends after FINISH_ACK; wait for it so the ack is on the wire.
            let _ = writer_done.recv_timeout(io_timeout);
        }
    }
    conn.sock.close();
    // Wait for the writer so its teardown has run before the socket is forgotten.
    loop {
        match writer_done.recv_timeout(io_timeout) {
            Err(RecvTimeoutError::Disconnected) => break,
            _ => conn.sock.close(),
        }
    }
    if abort_reason.is_none() && !conn.acked.load(Ordering::SeqCst) {
        abort_reason = Some("FINISH_ACK could not be delivered".into());
    }
    // Someone else closed the connection first: their reason is the real one.
    if let Some(r) = lock(&conn.close_reason).take() {
        abort_reason = Some(r);
    }
    if let Some(reason) = abort_reason {
        // A superseded connection is counted as such (when it was displaced), not as aborted.
        if !conn.acked.load(Ordering::SeqCst) && !conn.superseded.load(Ordering::SeqCst) {
            sh.stats().connections_aborted += 1;
        }
        if !sh.stop.load(Ordering::SeqCst) {
            sh.log(&format!(
                "partition {p} attempt {} ({}): connection dropped: {reason}",
                w.attempt, conn.sock.peer
            ));
        }
    }
    sh.forget_socket(conn.sock.id);
}
