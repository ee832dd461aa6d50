//! End-to-end tests over real sockets on 127.0.0.1, with exact counts.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::proto::{self, Side};
use crate::seal;
use crate::*;

const SECRET: &[u8] = b"test-secret-0123456789abcdef";

/// Sums payload bytes into 16 lanes and counts applied messages; rejects payloads starting
/// with "BAD!".
struct SumState {
    sums: [u64; 16],
    applied: u64,
    delay: Duration,
}

impl SumState {
    fn boxed() -> Box<dyn MasterState> {
        Box::new(SumState {
            sums: [0; 16],
            applied: 0,
            delay: Duration::ZERO,
        })
    }
}

fn add_sums(sums: &mut [u64; 16], payload: &[u8]) {
    for (i, b) in payload.iter().enumerate() {
        sums[i % 16] += *b as u64;
    }
}

impl MasterState for SumState {
    fn apply(&mut self, _worker: WorkerId, payload: &[u8]) -> Result<(), String> {
        if payload.starts_with(b"BAD!") {
            return Err("payload starts with BAD!".into());
        }
        if payload.starts_with(b"PANIC") {
            panic!("test state asked to panic");
        }
        if !self.delay.is_zero() {
            thread::sleep(self.delay);
        }
        add_sums(&mut self.sums, payload);
        self.applied += 1;
        Ok(())
    }
    /// A final state counts as one more applied message (and "BAD!" ones are refused).
    fn finish(&mut self, worker: WorkerId, state: &[u8]) -> Result<(), String> {
        if state.is_empty() {
            return Ok(());
        }
        self.apply(worker, state)
    }
    fn snapshot(&self) -> SnapshotBytes {
        let mut v = self.applied.to_be_bytes().to_vec();
        for s in self.sums {
            v.extend_from_slice(&s.to_be_bytes());
        }
        v.into()
    }
}

fn parse_snap(b: &[u8]) -> (u64, [u64; 16]) {
    assert_eq!(b.len(), 8 * 17);
    let applied = u64::from_be_bytes(b[..8].try_into().unwrap());
    let mut sums = [0u64; 16];
    for (i, s) in sums.iter_mut().enumerate() {
        *s = u64::from_be_bytes(b[8 + 8 * i..16 + 8 * i].try_into().unwrap());
    }
    (applied, sums)
}

fn state_of(relay: &Relay) -> (u64, [u64; 16]) {
    parse_snap(&relay.with_state(|s| s.snapshot()).to_vec())
}

/// Deterministic, content-checkable payload: partition, sequence, then derived filler.
fn payload(p: u32, seq: u32, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len.max(8));
    v.extend_from_slice(&p.to_be_bytes());
    v.extend_from_slice(&seq.to_be_bytes());
    for i in 8..len.max(8) {
        v.push((p as usize * 31 + seq as usize * 7 + i) as u8);
    }
    v
}

fn check_payload(b: &[u8]) -> Option<(u32, u32)> {
    if b.len() < 8 {
        return None;
    }
    let p = u32::from_be_bytes(b[..4].try_into().unwrap());
    let seq = u32::from_be_bytes(b[4..8].try_into().unwrap());
    (payload(p, seq, b.len()) == b).then_some((p, seq))
}

/// What a test client received.
#[derive(Default)]
struct Inbox {
    seen: Mutex<Vec<(u32, u32)>>,
    bad: AtomicU64,
    sums: Mutex<[u64; 16]>,
}

impl Inbox {
    fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
    fn set(&self) -> BTreeSet<(u32, u32)> {
        let v = self.seen.lock().unwrap();
        let s: BTreeSet<_> = v.iter().copied().collect();
        assert_eq!(s.len(), v.len(), "duplicate delivery");
        s
    }
    fn handler(self: &Arc<Self>, delay: Duration) -> OnMessage {
        let me = self.clone();
        Box::new(move |b: &[u8]| {
            match check_payload(b) {
                Some(id) => me.seen.lock().unwrap().push(id),
                None => {
                    me.bad.fetch_add(1, Ordering::SeqCst);
                }
            }
            add_sums(&mut me.sums.lock().unwrap(), b);
            if !delay.is_zero() {
                thread::sleep(delay);
            }
        })
    }
}

fn logs() -> (LogSink, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l2 = lines.clone();
    (
        Arc::new(move |m: &str| l2.lock().unwrap().push(m.to_string())),
        lines,
    )
}

fn relay_cfg(secret: &[u8]) -> (RelayConfig, Arc<Mutex<Vec<String>>>) {
    let (sink, lines) = logs();
    let cfg = RelayConfig {
        bind_host: "127.0.0.1".into(),
        secret: secret.to_vec(),
        max_message_bytes: 1 << 20,
        max_final_state_bytes: 1 << 20,
        queue_limit_messages: 16,
        io_timeout: Duration::from_secs(3),
        // Tests of the timeout set their own. Under valgrind (FERRODL_VALGRIND, one thread at a
        // time, many times slower) a client's handshake on a busy 2-core machine took longer than
        // 500 ms, and the relay closed it as a stranger (the client saw "authentication failed").
        handshake_timeout: match std::env::var_os("FERRODL_VALGRIND") {
            Some(_) => Duration::from_secs(5),
            None => Duration::from_millis(500),
        },
        log: Some(sink),
        ..RelayConfig::default()
    };
    (cfg, lines)
}

fn client_cfg(secret: &[u8], partition: u32, attempt: u32) -> ClientConfig {
    ClientConfig {
        secret: secret.to_vec(),
        worker: WorkerId { partition, attempt },
        connect_timeout: Duration::from_secs(2),
        io_timeout: Duration::from_secs(3),
        max_message_bytes: 1 << 20,
        queue_limit_messages: 16,
        encrypt: false,
    }
}

fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < timeout, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(2));
    }
}

const WAIT: Duration = Duration::from_secs(10);

/// Waits until `f()` has equalled `target` for 30 ms in a row.
fn wait_stable(what: &str, f: impl Fn() -> usize, target: usize) {
    let mut since = Instant::now();
    wait_until(what, WAIT, || {
        if f() != target {
            since = Instant::now();
        }
        since.elapsed() >= Duration::from_millis(30)
    });
}

fn connect(
    relay: &Relay,
    cfg: ClientConfig,
    inbox: &Arc<Inbox>,
    delay: Duration,
) -> (RelayClient, Vec<u8>) {
    RelayClient::connect(&relay.local_addr().to_string(), cfg, inbox.handler(delay)).unwrap()
}

/// Performs the client side of the handshake by hand; returns the stream after the snapshot.
fn raw_handshake(addr: &str, secret: &[u8], w: WorkerId) -> (TcpStream, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut hello = [0u8; proto::HELLO_LEN];
    s.read_exact(&mut hello).unwrap();
    let rn = proto::parse_hello(&hello).unwrap();
    let cn = [7u8; 32];
    let tag = proto::auth_tag(secret, Side::Client, &rn, &cn, w, 0);
    let auth = proto::Auth {
        client_nonce: cn,
        worker: w,
        heartbeat_ms: 60_000,
        flags: 0,
        tag,
    };
    s.write_all(&proto::encode_auth(&auth)).unwrap();
    let mut v = [0u8; proto::ACCEPT_LEN];
    s.read_exact(&mut v).unwrap();
    assert_eq!(v[0], proto::VERDICT_ACCEPT);
    assert!(proto::verify_tag(
        secret,
        Side::Relay,
        &rn,
        &cn,
        w,
        0,
        &v[1..33]
    ));
    let len = u64::from_be_bytes(v[37..].try_into().unwrap()) as usize;
    let mut snap = vec![0u8; len];
    s.read_exact(&mut snap).unwrap();
    (s, snap)
}

/// Reads until EOF or error; returns the bytes read and the time it took.
fn read_to_close(s: &mut TcpStream) -> (Vec<u8>, Duration) {
    read_to_close_within(s, Duration::from_secs(5))
}

/// [`read_to_close`], failing when the relay has not closed the connection within `limit`.
fn read_to_close_within(s: &mut TcpStream, limit: Duration) -> (Vec<u8>, Duration) {
    let t0 = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut out = Vec::new();
    let mut b = [0u8; 4096];
    loop {
        match s.read(&mut b) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&b[..n]),
            Err(e) => {
                assert!(
                    !proto::is_timeout(&e),
                    "the relay did not close the connection"
                );
                break;
            }
        }
    }
    (out, t0.elapsed())
}

/// The header of a frame of `len` bytes, as a peer writes it.
fn frame_header(ty: u8, len: usize) -> Vec<u8> {
    let (h, n) = proto::header(ty, len).unwrap();
    h[..n].to_vec()
}

fn send_all(
    client: &RelayClient,
    p: u32,
    n: u32,
    len: impl Fn(u32) -> usize,
    pace: Option<(u32, Duration)>,
) {
    for seq in 0..n {
        client.send(payload(p, seq, len(seq))).unwrap();
        if let Some((every, d)) = pace {
            if seq % every == every - 1 {
                thread::sleep(d);
            }
        }
    }
}

fn expected_from(partitions: &[(u32, u32)], except: u32) -> BTreeSet<(u32, u32)> {
    partitions
        .iter()
        .filter(|(p, _)| *p != except)
        .flat_map(|&(p, n)| (0..n).map(move |s| (p, s)))
        .collect()
}

#[test]
fn three_clients_exchange_exactly() {
    const N: u32 = 300;
    let (cfg, lines) = relay_cfg(SECRET);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let len = |seq: u32| 40 + (seq as usize % 50);
    let inboxes: Vec<Arc<Inbox>> = (0..3).map(|_| Arc::new(Inbox::default())).collect();
    let mut clients = Vec::new();
    for p in 0..3u32 {
        let (c, snap) = connect(
            &relay,
            client_cfg(SECRET, p, 0),
            &inboxes[p as usize],
            Duration::ZERO,
        );
        assert_eq!(parse_snap(&snap).0, 0);
        clients.push(c);
    }
    thread::scope(|s| {
        for (p, c) in clients.iter().enumerate() {
            s.spawn(move || send_all(c, p as u32, N, len, None));
        }
    });
    for ib in &inboxes {
        wait_until("every client to receive 2N", WAIT, || {
            ib.count() >= 2 * N as usize
        });
    }
    let mut expected_sums = [0u64; 16];
    for p in 0..3 {
        for seq in 0..N {
            add_sums(&mut expected_sums, &payload(p, seq, len(seq)));
        }
    }
    let all: Vec<(u32, u32)> = (0..3).map(|p| (p, N)).collect();
    for (p, c) in clients.into_iter().enumerate() {
        let st = c.finish().unwrap();
        // finish() returns only once everything this client sent is applied, and this
        // worker's own counters are final by then.
        let w = relay.stats().per_worker[&(p as u32)].clone();
        assert_eq!(
            (w.messages_applied, w.messages_relayed_out, w.finished),
            (N as u64, 2 * N as u64, 1)
        );
        let bytes: u64 = (0..N).map(|s| len(s) as u64).sum();
        assert_eq!((st.messages_sent, st.bytes_sent), (N as u64, bytes));
        // On the wire: the 87-byte AUTH, a 2-byte header per update (type, one-byte varint
        // length: every payload is under 128 bytes) and the FINISH frame, plus any number of
        // empty 2-byte heartbeats.
        let framed = 87 + bytes + 2 * N as u64 + 2;
        assert!(
            st.wire_bytes_sent >= framed && (st.wire_bytes_sent - framed).is_multiple_of(2),
            "{} wire bytes, {framed} without heartbeats",
            st.wire_bytes_sent
        );
        assert_eq!(
            (st.messages_received, st.bytes_received),
            (2 * N as u64, 2 * bytes)
        );
        assert!(st.max_queued <= 16);
        let ib = &inboxes[p];
        assert_eq!(ib.set(), expected_from(&all, p as u32));
        assert_eq!(ib.bad.load(Ordering::SeqCst), 0);
    }
    assert_eq!(state_of(&relay), (3 * N as u64, expected_sums));
    wait_until("connection threads to end", WAIT, || {
        relay.stats().live_threads == 1
    });
    let (state, stats) = relay.shutdown();
    assert_eq!(parse_snap(&state.snapshot().to_vec()).0, 3 * N as u64);
    for p in 0..3u32 {
        let c = &stats.per_worker[&p];
        let bytes: u64 = (0..N).map(|s| len(s) as u64).sum();
        assert_eq!(
            *c,
            WorkerCounters {
                messages_received: N as u64,
                bytes_received: bytes,
                messages_applied: N as u64,
                messages_dropped: 0,
                messages_relayed_out: 2 * N as u64,
                bytes_relayed_out: 2 * bytes,
                messages_dropped_outbound: 0,
                attempts_seen: 1,
                last_attempt: 0,
                finished: 1,
            }
        );
    }
    assert_eq!(
        (
            stats.connections_accepted,
            stats.connections_rejected,
            stats.connections_aborted,
            stats.reconnects
        ),
        (3, 0, 0, 0)
    );
    assert_eq!(
        (
            stats.live_threads,
            stats.live_connections,
            stats.queued_messages
        ),
        (0, 0, 0)
    );
    assert!(stats.max_queued_per_connection <= 16);
    assert!(
        lines.lock().unwrap().is_empty(),
        "{:?}",
        lines.lock().unwrap()
    );
}

/// Big updates travel in reused buffers: the relay reads the next update into the buffer of one
/// it has relayed, a client's `spare_buffer` hands back the buffer of an update it has written, and
/// a receiver that takes its payloads' buffers (`connect_taking`) leaves the reader a spare one.
/// Updates of changing lengths (64 KiB to 220 KiB), sealed and not, arrive whole and unmixed.
#[test]
fn big_updates_in_reused_buffers_arrive_whole() {
    const N: u32 = 16;
    let len = |seq: u32| 65_536 + (seq as usize * 40_503) % 160_000;
    for encrypt in [false, true] {
        let (cfg, lines) = relay_cfg(SECRET);
        let relay = Relay::start(RelayConfig { encrypt, ..cfg }, SumState::boxed()).unwrap();
        let addr = relay.local_addr().to_string();
        let cfg = |p: u32| ClientConfig { encrypt, ..client_cfg(SECRET, p, 0) };
        // client 0 keeps every payload's buffer, giving the reader back the one before
        let kept: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let handed_back = Arc::new(AtomicU64::new(0));
        let (k, h) = (kept.clone(), handed_back.clone());
        let taker = Box::new(move |buf: &mut Vec<u8>| {
            let mut kept = k.lock().unwrap();
            let spare = if kept.len() % 2 == 1 {
                h.fetch_add(1, Ordering::SeqCst);
                // a spare with stale bytes in it: the reader must clear it
                let mut v = kept.last().unwrap().clone();
                v.truncate(100);
                v
            } else {
                Vec::new()
            };
            kept.push(std::mem::replace(buf, spare));
        });
        let (c0, _) = RelayClient::connect_taking(&addr, cfg(0), taker).unwrap();
        let inboxes: Vec<Arc<Inbox>> = (0..2).map(|_| Arc::new(Inbox::default())).collect();
        let c1 = RelayClient::connect(&addr, cfg(1), inboxes[0].handler(Duration::ZERO)).unwrap().0;
        let c2 = RelayClient::connect(&addr, cfg(2), inboxes[1].handler(Duration::ZERO)).unwrap().0;
        let clients = [c0, c1, c2];
        let reused = AtomicU64::new(0);
        thread::scope(|s| {
            for (p, c) in clients.iter().enumerate() {
                let reused = &reused;
                s.spawn(move || {
                    for seq in 0..N {
                        let mut b = c.spare_buffer();
                        assert!(b.is_empty(), "a spare buffer comes empty");
                        if b.capacity() >= 65_536 {
                            reused.fetch_add(1, Ordering::SeqCst);
                        }
                        b.extend_from_slice(&payload(p as u32, seq, len(seq)));
                        c.send(b).unwrap();
                        if seq % 5 == 4 {
                            // let the writer catch up now and then, so that spares come back
                            wait_until("the writer", WAIT, || c.stats().messages_sent > u64::from(seq));
                        }
                    }
                });
            }
        });
        wait_until("client 0 to receive 2N", WAIT, || kept.lock().unwrap().len() >= 2 * N as usize);
        for ib in &inboxes {
            wait_until("every client to receive 2N", WAIT, || ib.count() >= 2 * N as usize);
        }
        let all: Vec<(u32, u32)> = (0..3).map(|p| (p, N)).collect();
        let got: BTreeSet<(u32, u32)> = kept.lock().unwrap().iter().map(|b| check_payload(b).expect("whole")).collect();
        assert_eq!(got, expected_from(&all, 0));
        for (i, ib) in inboxes.iter().enumerate() {
            assert_eq!(ib.set(), expected_from(&all, i as u32 + 1));
            assert_eq!(ib.bad.load(Ordering::SeqCst), 0);
        }
        assert_eq!(handed_back.load(Ordering::SeqCst), u64::from(N));
        assert!(reused.load(Ordering::SeqCst) >= 3, "spare buffers came back {} times", reused.load(Ordering::SeqCst));
        for c in clients {
            c.finish().unwrap();
        }
        let mut expected_sums = [0u64; 16];
        for p in 0..3 {
            for seq in 0..N {
                add_sums(&mut expected_sums, &payload(p, seq, len(seq)));
            }
        }
        assert_eq!(state_of(&relay), (3 * N as u64, expected_sums));
        relay.shutdown();
        assert!(lines.lock().unwrap().is_empty(), "{:?}", lines.lock().unwrap());
    }
}

#[test]
fn finish_waits_until_every_update_is_applied() {
    let (cfg, _l) = relay_cfg(SECRET);
    let state = Box::new(SumState {
        sums: [0; 16],
        applied: 0,
        delay: Duration::from_millis(3),
    });
    let relay = Relay::start(cfg, state).unwrap();
    let ib = Arc::new(Inbox::default());
    let (c, _) = connect(&relay, client_cfg(SECRET, 0, 0), &ib, Duration::ZERO);
    send_all(&c, 0, 40, |_| 64, None);
    let st = c.finish().unwrap();
    assert_eq!(st.messages_sent, 40);
    // No waiting: the relay acknowledged FINISH only after the 40th apply.
    assert_eq!(state_of(&relay).0, 40);
    assert_eq!(relay.stats().per_worker[&0].finished, 1);
}

/// A master state that keeps the default `finish` (takes no final state).
struct NoFinalState;

impl MasterState for NoFinalState {
    fn apply(&mut self, _worker: WorkerId, _payload: &[u8]) -> Result<(), String> {
        Ok(())
    }
    fn snapshot(&self) -> SnapshotBytes {
        SnapshotBytes::new()
    }
}

#[test]
fn a_final_state_travels_with_finish_after_every_update() {
    let (cfg, _l) = relay_cfg(SECRET);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let ib = Arc::new(Inbox::default());
    let (c, _) = connect(&relay, client_cfg(SECRET, 0, 0), &ib, Duration::ZERO);
    send_all(&c, 0, 5, |_| 64, None);
    // 300 KB: more than one read of the socket
    let st = c.finish_with(vec![3u8; 300_000]).unwrap();
    // counted apart from the update traffic
    assert!(st.final_state_bytes > 300_000 && st.final_state_bytes < 300_010, "{st:?}");
    assert!(st.wire_bytes_sent < 2_000, "{st:?}");
    let (applied, sums) = state_of(&relay);
    assert_eq!(applied, 6);
    assert!(sums.iter().sum::<u64>() >= 900_000, "{sums:?}");
    assert_eq!(relay.stats().per_worker[&0].finished, 1);

    // refused by the state, too large, or sent to a state that takes none: the worker's finish fails
    let (c, _) = connect(&relay, client_cfg(SECRET, 1, 0), &ib, Duration::ZERO);
    let e = c.finish_with(b"BAD!final".to_vec()).unwrap_err().to_string();
    assert!(e.contains("final state rejected by the master state: payload starts with BAD!"), "{e}");
    let (c, _) = connect(&relay, client_cfg(SECRET, 2, 0), &ib, Duration::ZERO);
    // the relay drops the connection after the frame header (the worker may see its ERROR or a
    // broken pipe while it still writes the body)
    assert!(c.finish_with(vec![0u8; (1 << 20) + 1]).is_err());
    assert_eq!(relay.stats().protocol_errors, 1);
    assert_eq!(state_of(&relay).0, 6);

    let (cfg, _l) = relay_cfg(SECRET);
    let plain = Relay::start(cfg, Box::new(NoFinalState)).unwrap();
    let (c, _) = connect(&plain, client_cfg(SECRET, 0, 0), &ib, Duration::ZERO);
    let e = c.finish_with(vec![1, 2, 3]).unwrap_err().to_string();
    assert!(e.contains("this relay takes no final state (3 bytes sent)"), "{e}");
    let (c, _) = connect(&plain, client_cfg(SECRET, 1, 0), &ib, Duration::ZERO);
    c.finish().unwrap();
}

#[test]
fn late_joiner_snapshot_is_consistent_and_reconnects_are_counted() {
    const N: u32 = 500;
    let (cfg, lines) = relay_cfg(SECRET);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let (ia, ib) = (Arc::new(Inbox::default()), Arc::new(Inbox::default()));
    let (a, _) = connect(&relay, client_cfg(SECRET, 0, 0), &ia, Duration::ZERO);
    let (k, b) = thread::scope(|s| {
        let sender = s.spawn(|| send_all(&a, 0, N, |_| 48, Some((10, Duration::from_millis(2)))));
        wait_until("100 applied", WAIT, || {
            relay
                .stats()
                .per_worker
                .get(&0)
                .map_or(0, |c| c.messages_applied)
                >= 100
        });
        // B joins while A is still sending: its snapshot plus what it receives must be all of A.
        let (b, snap) = connect(&relay, client_cfg(SECRET, 1, 0), &ib, Duration::ZERO);
        sender.join().unwrap();
        let (k, sums) = parse_snap(&snap);
        let mut expected = [0u64; 16];
        for seq in 0..k as u32 {
            add_sums(&mut expected, &payload(0, seq, 48));
        }
        assert_eq!(sums, expected, "snapshot = exactly the first k updates");
        (k, b)
    });
    a.finish().unwrap();
    b.finish().unwrap();
    assert!(k >= 100 && k <= N as u64);
    let got = ib.set();
    assert_eq!(
        got,
        (k as u32..N).map(|s| (0, s)).collect::<BTreeSet<_>>(),
        "k = {k}"
    );

    // Partition 2 is killed after 5 applied updates, then re-run as attempt 1.
    let ic = Arc::new(Inbox::default());
    let (c, snap) = connect(&relay, client_cfg(SECRET, 2, 0), &ic, Duration::ZERO);
    assert_eq!(parse_snap(&snap).0, N as u64);
    send_all(&c, 2, 5, |_| 16, None);
    wait_until("5 applied", WAIT, || {
        relay.stats().per_worker[&2].messages_applied == 5
    });
    drop(c);
    wait_until("abort counted", WAIT, || {
        relay.stats().connections_aborted == 1
    });
    let (c2, snap2) = connect(&relay, client_cfg(SECRET, 2, 1), &ic, Duration::ZERO);
    assert_eq!(parse_snap(&snap2).0, N as u64 + 5);
    assert_eq!(parse_snap(&snap2), state_of(&relay));
    send_all(&c2, 2, 3, |_| 16, None);
    c2.finish().unwrap();
    let st = relay.shutdown().1;
    let w2 = &st.per_worker[&2];
    assert_eq!(
        (
            w2.attempts_seen,
            w2.last_attempt,
            w2.messages_applied,
            w2.finished
        ),
        (2, 1, 8, 1)
    );
    assert_eq!(
        (
            st.reconnects,
            st.connections_aborted,
            st.connections_accepted
        ),
        (1, 1, 4)
    );
    assert_eq!(
        lines.lock().unwrap().len(),
        1,
        "one log line for the killed attempt"
    );
}

#[test]
fn the_newest_attempt_of_a_partition_wins() {
    let (cfg, lines) = relay_cfg(SECRET);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let addr = relay.local_addr().to_string();
    let (i0, i1, iw) = (
        Arc::new(Inbox::default()),
        Arc::new(Inbox::default()),
        Arc::new(Inbox::default()),
    );
    // Partition 1 trains alongside and sees who is forwarded.
    let (watcher, _) = connect(&relay, client_cfg(SECRET, 1, 0), &iw, Duration::ZERO);
    // Attempt 0 of partition 0 sends 4 updates, all applied.
    let (old, _) = connect(&relay, client_cfg(SECRET, 0, 0), &i0, Duration::ZERO);
    send_all(&old, 0, 4, |_| 16, None);
    wait_until("4 applied", WAIT, || {
        relay.stats().per_worker[&0].messages_applied == 4
    });
    // A speculative attempt 1 connects: it gets the current state, attempt 0 is closed.
    let (new, snap) = connect(&relay, client_cfg(SECRET, 0, 1), &i1, Duration::ZERO);
    assert_eq!(parse_snap(&snap).0, 4);
    wait_until("supersession counted", WAIT, || {
        relay.stats().connections_superseded == 1
    });
    // Whatever attempt 0 still sends is not applied, and its finish fails naming the reason.
    let _ = old.send(payload(0, 100, 16));
    let err = old.finish().unwrap_err().to_string();
    assert!(
        err.contains("superseded by attempt 1 of partition 0"),
        "{err}"
    );
    // An attempt older than the live one is refused in the handshake with a clear error.
    let refused = RelayClient::connect(&addr, client_cfg(SECRET, 0, 0), i0.handler(Duration::ZERO))
        .err()
        .expect("a stale attempt must be refused")
        .to_string();
    assert!(
        refused.contains(
            "partition 0 attempt 0 refused: a newer attempt of this partition is connected"
        ),
        "{refused}"
    );
    // Attempt 1 goes on normally (sequence numbers 10.. tell its updates apart).
    for seq in 10..13 {
        new.send(payload(0, seq, 16)).unwrap();
    }
    new.finish().unwrap();
    watcher.finish().unwrap();
    let (state, st) = relay.shutdown();
    let w0 = &st.per_worker[&0];
    // 4 from attempt 0 before the takeover + 3 from attempt 1; attempt 0's late one dropped
    // (if it was read at all before the connection closed).
    assert_eq!(
        (w0.messages_applied, w0.finished, w0.last_attempt),
        (7, 1, 1)
    );
    assert!(w0.messages_dropped <= 1);
    assert_eq!(parse_snap(&state.snapshot().to_vec()).0, 7);
    assert_eq!(
        (
            st.connections_superseded,
            st.connections_rejected,
            st.connections_aborted,
            st.connections_accepted
        ),
        (1, 1, 0, 3)
    );
    // The watcher received exactly the applied updates: attempt 0's four, attempt 1's three.
    let expected: BTreeSet<(u32, u32)> = [0, 1, 2, 3, 10, 11, 12].map(|s| (0, s)).into();
    assert_eq!(iw.set(), expected);
    let logged = lines.lock().unwrap().join("\n");
    assert!(logged.contains("superseded by attempt 1"), "{logged}");
}

#[test]
fn strangers_are_rejected_and_a_concurrent_fit_is_unaffected() {
    const N: u32 = 200;
    let (mut cfg, lines) = relay_cfg(SECRET);
    cfg.handshake_timeout = Duration::from_millis(300);
    cfg.max_message_bytes = 4096;
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let addr = relay.local_addr().to_string();
    let (i0, i1) = (Arc::new(Inbox::default()), Arc::new(Inbox::default()));
    let (c0, _) = connect(&relay, client_cfg(SECRET, 0, 0), &i0, Duration::ZERO);
    let (c1, _) = connect(&relay, client_cfg(SECRET, 1, 0), &i1, Duration::ZERO);
    let pace = Some((10, Duration::from_millis(3)));
    thread::scope(|s| {
        s.spawn(|| send_all(&c0, 0, N, |_| 100, pace));
        s.spawn(|| send_all(&c1, 1, N, |_| 100, pace));

        // Silence: cut off after the handshake timeout.
        s.spawn(|| {
            let mut st = TcpStream::connect(&addr).unwrap();
            let (got, took) = read_to_close(&mut st);
            assert_eq!(&got[..8], proto::HELLO_MAGIC);
            assert!(
                took >= Duration::from_millis(250) && took < Duration::from_secs(3),
                "{took:?}"
            );
        });
        // Wrong secret.
        s.spawn(|| {
            let e = RelayClient::connect(
                &addr,
                client_cfg(b"not-the-secret-of-this-fit", 5, 0),
                Box::new(|_: &[u8]| {}),
            )
            .err()
            .unwrap();
            assert_eq!(e, RelayError::AuthFailed { addr: addr.clone() });
            assert_eq!(
                e.to_string(),
                format!("relay {addr}: authentication failed (wrong secret?)")
            );
        });
        // Garbage bytes.
        s.spawn(|| {
            let mut st = TcpStream::connect(&addr).unwrap();
            let junk: Vec<u8> = (0..200u32).map(|i| (i * 97 + 13) as u8).collect();
            st.write_all(&junk).unwrap();
            read_to_close(&mut st);
        });
        // No secret: a well-formed AUTH with an all-zero tag.
        s.spawn(|| {
            let mut st = TcpStream::connect(&addr).unwrap();
            let mut hello = [0u8; proto::HELLO_LEN];
            st.read_exact(&mut hello).unwrap();
            let worker = WorkerId {
                partition: 6,
                attempt: 0,
            };
            let auth = proto::Auth {
                client_nonce: [1; 32],
                worker,
                heartbeat_ms: 1000,
                flags: 0,
                tag: [0; 32],
            };
            st.write_all(&proto::encode_auth(&auth)).unwrap();
            let (got, _) = read_to_close(&mut st);
            assert_eq!(got, vec![proto::VERDICT_REJECT_AUTH]);
        });
        // Valid handshake, then a truncated frame.
        s.spawn(|| {
            let (mut st, _) = raw_handshake(
                &addr,
                SECRET,
                WorkerId {
                    partition: 7,
                    attempt: 0,
                },
            );
            let mut f = frame_header(proto::T_UPDATE, 1000);
            f.extend_from_slice(&[9u8; 10]);
            st.write_all(&f).unwrap();
            // Half-close and drain (closing with unread data would reset the connection and
            // the relay might see the reset before the partial frame).
            st.shutdown(std::net::Shutdown::Write).unwrap();
            read_to_close(&mut st);
        });
        // Valid handshake, then an oversized length prefix: told why, then closed.
        s.spawn(|| {
            let (mut st, _) = raw_handshake(
                &addr,
                SECRET,
                WorkerId {
                    partition: 8,
                    attempt: 0,
                },
            );
            let f = frame_header(proto::T_UPDATE, u32::MAX as usize);
            st.write_all(&f).unwrap();
            let (got, _) = read_to_close(&mut st);
            // Possibly heartbeats and updates of the legit workers first, then the ERROR frame.
            let mut rest = &got[..];
            let reason = loop {
                let (ty, len) = match proto::read_header(&mut rest) {
                    Ok(Some(h)) => h,
                    _ => panic!("no ERROR frame"),
                };
                if ty == proto::T_ERROR {
                    break String::from_utf8_lossy(&rest[..len]).into_owned();
                }
                assert!(matches!(ty, proto::T_PING | proto::T_RELAYED), "{ty}");
                rest = &rest[len..];
            };
            assert!(
                reason.contains("exceeds max_message_bytes (4096)"),
                "{reason}"
            );
        });
        // A client without a secret never reaches the network.
        let e = RelayClient::connect(&addr, client_cfg(b"", 9, 0), Box::new(|_: &[u8]| {}))
            .err()
            .unwrap();
        assert!(
            matches!(e, RelayError::Config { .. }) && e.to_string().contains(&addr),
            "{e}"
        );
    });
    for ib in [&i0, &i1] {
        wait_until("legit deliveries", WAIT, || ib.count() >= N as usize);
    }
    c0.finish().unwrap();
    c1.finish().unwrap();
    let all = [(0, N), (1, N)];
    assert_eq!(i0.set(), expected_from(&all, 0));
    assert_eq!(i1.set(), expected_from(&all, 1));
    wait_until("stranger accounting", WAIT, || {
        let s = relay.stats();
        s.connections_rejected == 4 && s.connections_aborted == 2
    });
    assert_eq!(state_of(&relay).0, 2 * N as u64);
    let st = relay.shutdown().1;
    assert_eq!(
        (
            st.connections_accepted,
            st.connections_rejected,
            st.connections_aborted
        ),
        (4, 4, 2)
    );
    assert_eq!(st.protocol_errors, 1);
    for p in [0, 1] {
        let c = &st.per_worker[&p];
        assert_eq!(
            (
                c.messages_applied,
                c.messages_dropped,
                c.messages_relayed_out
            ),
            (N as u64, 0, N as u64)
        );
    }
    assert_eq!(
        (
            st.per_worker[&7].messages_dropped,
            st.per_worker[&7].messages_received
        ),
        (1, 0)
    );
    assert_eq!(
        (
            st.per_worker[&8].messages_dropped,
            st.per_worker[&8].messages_received
        ),
        (1, 0)
    );
    assert!(!st.per_worker.contains_key(&5) && !st.per_worker.contains_key(&6));
    let lines = lines.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("no authentication within the handshake timeout (300 ms)")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("partition 5 attempt 0 (wrong secret?)")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("update of 1000 bytes discarded")),
        "{lines:?}"
    );
}

#[test]
fn invalid_update_is_dropped_and_its_sender_disconnected() {
    let (cfg, lines) = relay_cfg(SECRET);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let addr = relay.local_addr().to_string();
    let (i0, i1) = (Arc::new(Inbox::default()), Arc::new(Inbox::default()));
    let (good, _) = connect(&relay, client_cfg(SECRET, 0, 0), &i0, Duration::ZERO);
    let (bad, _) = connect(&relay, client_cfg(SECRET, 1, 0), &i1, Duration::ZERO);
    send_all(&bad, 1, 3, |_| 20, None);
    bad.send(b"BAD! not an update".to_vec()).unwrap();
    let e = bad.finish().err().unwrap();
    assert!(
        e.to_string().starts_with(&format!(
            "relay {addr}: connection closed: the relay dropped us: invalid update"
        )),
        "{e}"
    );
    send_all(&good, 0, 10, |_| 20, None);
    good.finish().unwrap();
    assert_eq!(i0.set(), (0..3).map(|s| (1, s)).collect());
    let st = relay.shutdown().1;
    let w1 = &st.per_worker[&1];
    assert_eq!(
        (
            w1.messages_received,
            w1.messages_applied,
            w1.messages_dropped
        ),
        (4, 3, 1)
    );
    assert_eq!(
        (st.per_worker[&0].messages_applied, st.connections_aborted),
        (10, 1)
    );
    assert!(lines
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("payload starts with BAD!")));
}

#[test]
fn slow_consumer_holds_back_senders_without_loss() {
    const N: u32 = 300;
    const BIG: usize = 64 * 1024;
    let (mut cfg, lines) = relay_cfg(SECRET);
    cfg.queue_limit_messages = 4;
    // Longer than the stability wait below plus its 6 s bound: C is never dropped as too slow.
    cfg.io_timeout = Duration::from_secs(15);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let inboxes: Vec<Arc<Inbox>> = (0..3).map(|_| Arc::new(Inbox::default())).collect();
    let mut clients = Vec::new();
    for p in 0..2u32 {
        let mut cc = client_cfg(SECRET, p, 0);
        cc.queue_limit_messages = 4;
        clients.push(connect(&relay, cc, &inboxes[p as usize], Duration::ZERO).0);
    }
    // C first stalls (shorter than io_timeout), then consumes slowly.
    let (gate_tx, gate_rx) = crossbeam::channel::bounded::<()>(1);
    let mut inner = inboxes[2].handler(Duration::from_micros(200));
    let slow = RelayClient::connect(
        &relay.local_addr().to_string(),
        client_cfg(SECRET, 2, 0),
        Box::new(move |m: &[u8]| {
            let _ = gate_rx.recv_timeout(Duration::from_secs(12));
            inner(m)
        }),
    )
    .unwrap()
    .0;
    let applied = |p: u32| relay.stats().per_worker[&p].messages_applied;
    thread::scope(|s| {
        let (a, b) = (&clients[0], &clients[1]);
        s.spawn(move || send_all(a, 0, N, |_| BIG, None));
        s.spawn(move || send_all(b, 1, N, |_| 1024, None));
        // Once C's queue and socket buffers are full, the relay stops reading from the senders:
        // their updates wait (in their own queues and sockets) instead of piling up in memory.
        // Waits for that state instead of assuming how long it takes to reach (under valgrind
        // filling the buffers takes far longer than on a plain run); a relay that kept reading
        // never gets there and the wait fails.
        let mut last = (applied(0), applied(1));
        let mut since = Instant::now();
        wait_until(
            "the relay to stop reading while a destination is full",
            Duration::from_secs(6),
            || {
                let now = (applied(0), applied(1));
                if now != last {
                    (last, since) = (now, Instant::now());
                }
                since.elapsed() >= Duration::from_millis(300)
            },
        );
        let (a1, b1) = last;
        assert!(a1 + b1 < 2 * N as u64, "nothing was held back: {a1} + {b1}");
        let st = relay.stats();
        assert!(st.outbound_waits > 0);
        assert!(
            st.queued_messages <= 3 * 4 && st.max_queued_per_connection <= 4,
            "{st:?}"
        );
        drop(gate_tx);
    });
    wait_until("slow consumer gets everything", WAIT, || {
        inboxes[2].count() >= 2 * N as usize
    });
    for ib in &inboxes[..2] {
        wait_until("fast consumers", WAIT, || ib.count() >= N as usize);
    }
    let mut stats = Vec::new();
    for c in clients.into_iter().chain([slow]) {
        stats.push(c.finish().unwrap());
    }
    let all = [(0, N), (1, N)];
    for (p, ib) in inboxes.iter().enumerate() {
        assert_eq!(ib.set(), expected_from(&all, p as u32));
    }
    let st = relay.shutdown().1;
    assert!(st.max_queued_per_connection <= 4);
    assert!(stats.iter().all(|s| s.max_queued <= 4));
    assert_eq!(st.per_worker[&2].messages_relayed_out, 2 * N as u64);
    assert_eq!(st.connections_aborted, 0);
    assert!(st
        .per_worker
        .values()
        .all(|c| c.messages_dropped_outbound == 0 && c.messages_dropped == 0));
    assert!(
        lines.lock().unwrap().is_empty(),
        "{:?}",
        lines.lock().unwrap()
    );
}

#[test]
fn a_reader_that_stalls_past_io_timeout_is_dropped_and_others_finish() {
    const N: u32 = 300;
    const LEN: usize = 64 * 1024;
    let (mut cfg, lines) = relay_cfg(SECRET);
    cfg.queue_limit_messages = 4;
    cfg.io_timeout = Duration::from_millis(300);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let inboxes: Vec<Arc<Inbox>> = (0..3).map(|_| Arc::new(Inbox::default())).collect();
    let (a, _) = connect(
        &relay,
        client_cfg(SECRET, 0, 0),
        &inboxes[0],
        Duration::ZERO,
    );
    let (b, _) = connect(
        &relay,
        client_cfg(SECRET, 1, 0),
        &inboxes[1],
        Duration::ZERO,
    );
    let (gate_tx, gate_rx) = crossbeam::channel::bounded::<()>(1);
    let ic = inboxes[2].clone();
    let mut inner = ic.handler(Duration::ZERO);
    let stalled = RelayClient::connect(
        &relay.local_addr().to_string(),
        client_cfg(SECRET, 2, 0),
        Box::new(move |m: &[u8]| {
            let _ = gate_rx.recv_timeout(Duration::from_secs(10));
            inner(m)
        }),
    )
    .unwrap()
    .0;
    send_all(&a, 0, N, |_| LEN, None);
    wait_until("stalled reader dropped", WAIT, || {
        relay.stats().connections_aborted == 1
    });
    drop(gate_tx);
    a.finish().unwrap();
    wait_until("B receives all", WAIT, || inboxes[1].count() >= N as usize);
    b.finish().unwrap();
    let e = stalled.finish().err().unwrap();
    assert!(
        e.to_string().contains(&relay.local_addr().to_string()),
        "{e}"
    );
    assert_eq!(inboxes[1].set(), (0..N).map(|s| (0, s)).collect());
    let st = relay.shutdown().1;
    let w2 = &st.per_worker[&2];
    assert!(w2.messages_dropped_outbound > 0);
    // Updates applied after the drop are no longer meant for partition 2.
    assert!(
        w2.messages_relayed_out + w2.messages_dropped_outbound <= N as u64,
        "{w2:?}"
    );
    assert!((inboxes[2].count() as u64) <= w2.messages_relayed_out);
    assert_eq!(
        (
            st.per_worker[&0].messages_applied,
            st.per_worker[&1].messages_relayed_out
        ),
        (N as u64, N as u64)
    );
    assert_eq!(
        (
            st.connections_aborted,
            st.per_worker[&1].messages_dropped_outbound
        ),
        (1, 0)
    );
    assert!(
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.starts_with("partition 2 attempt 0")
                && l.contains("connection dropped: ")
                && l.contains("300 ms")),
        "{:?}",
        lines.lock().unwrap()
    );
}

#[test]
fn heartbeats_keep_idle_workers_and_silent_peers_are_dropped() {
    let (mut cfg, lines) = relay_cfg(SECRET);
    cfg.io_timeout = Duration::from_millis(200);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let addr = relay.local_addr().to_string();
    let ib = Arc::new(Inbox::default());
    let mut cc = client_cfg(SECRET, 0, 0);
    cc.io_timeout = Duration::from_millis(200);
    let (c, _) = connect(&relay, cc, &ib, Duration::ZERO);
    // A peer that authenticates and then says nothing (no heartbeats) is dropped.
    let (mut raw, _) = raw_handshake(
        &addr,
        SECRET,
        WorkerId {
            partition: 1,
            attempt: 0,
        },
    );
    let (_, took) = read_to_close(&mut raw);
    assert!(took >= Duration::from_millis(150), "{took:?}");
    // The real client idled for 3 timeouts and is still fine.
    thread::sleep(Duration::from_millis(400));
    c.send(payload(0, 0, 30)).unwrap();
    c.finish().unwrap();
    let st = relay.shutdown().1;
    assert_eq!(
        (
            st.connections_aborted,
            st.per_worker[&0].messages_applied,
            st.per_worker[&0].finished
        ),
        (1, 1, 1)
    );
    assert!(lines
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("not even a heartbeat")));
}

#[test]
fn bounded_memory_over_5000_messages() {
    const PER: u32 = 1667;
    let (mut cfg, _l) = relay_cfg(SECRET);
    cfg.queue_limit_messages = 8;
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let inboxes: Vec<Arc<Inbox>> = (0..3).map(|_| Arc::new(Inbox::default())).collect();
    let mut clients = Vec::new();
    for p in 0..3u32 {
        let mut cc = client_cfg(SECRET, p, 0);
        cc.queue_limit_messages = 8;
        clients.push(connect(&relay, cc, &inboxes[p as usize], Duration::ZERO).0);
    }
    // Each handshake thread spawns its connection's threads, then ends: wait until it is stable.
    wait_stable(
        "handshake threads to end",
        || relay.stats().live_threads as usize,
        7,
    );
    let done = std::sync::atomic::AtomicBool::new(false);
    let (max_threads, max_total_queued, samples) = thread::scope(|s| {
        let monitor = s.spawn(|| {
            let (mut mt, mut mq, mut n) = (0, 0, 0u64);
            while !done.load(Ordering::SeqCst) {
                let st = relay.stats();
                mt = mt.max(st.live_threads);
                mq = mq.max(st.queued_messages);
                n += 1;
                thread::sleep(Duration::from_millis(1));
            }
            (mt, mq, n)
        });
        thread::scope(|s2| {
            for (p, c) in clients.iter().enumerate() {
                s2.spawn(move || send_all(c, p as u32, PER, |_| 1024, None));
            }
        });
        for ib in &inboxes {
            wait_until("deliveries", WAIT, || ib.count() >= 2 * PER as usize);
        }
        done.store(true, Ordering::SeqCst);
        monitor.join().unwrap()
    });
    assert!(samples > 0);
    assert_eq!(
        max_threads, 7,
        "threads stay constant: accept + 3 × (reader, writer)"
    );
    assert!(max_total_queued <= 3 * 8, "{max_total_queued}");
    for c in clients {
        assert!(c.finish().unwrap().max_queued <= 8);
    }
    let st = relay.shutdown().1;
    assert!(st.max_queued_per_connection <= 8);
    let applied: u64 = st.per_worker.values().map(|c| c.messages_applied).sum();
    let relayed: u64 = st.per_worker.values().map(|c| c.messages_relayed_out).sum();
    assert_eq!((applied, relayed), (3 * PER as u64, 6 * PER as u64));
}

#[test]
fn two_relays_are_independent_and_impostors_are_detected() {
    let s2: &[u8] = b"second-fit-secret-0123456789";
    let r1 = Relay::start(relay_cfg(SECRET).0, SumState::boxed()).unwrap();
    let r2 = Relay::start(relay_cfg(s2).0, SumState::boxed()).unwrap();
    let a2 = r2.local_addr().to_string();
    let e = RelayClient::connect(&a2, client_cfg(SECRET, 0, 0), Box::new(|_: &[u8]| {}))
        .err()
        .unwrap();
    assert_eq!(e, RelayError::AuthFailed { addr: a2.clone() });
    let (i1, i2) = (Arc::new(Inbox::default()), Arc::new(Inbox::default()));
    let (c1a, _) = connect(&r1, client_cfg(SECRET, 0, 0), &i1, Duration::ZERO);
    let (c1b, _) = connect(
        &r1,
        client_cfg(SECRET, 1, 0),
        &Arc::new(Inbox::default()),
        Duration::ZERO,
    );
    let (c2, _) = connect(&r2, client_cfg(s2, 0, 0), &i2, Duration::ZERO);
    send_all(&c1b, 1, 20, |_| 10, None);
    c1b.finish().unwrap();
    c2.send(payload(0, 0, 10)).unwrap();
    c2.finish().unwrap();
    c1a.finish().unwrap();
    assert_eq!((i1.count(), i2.count()), (20, 0));
    assert_eq!((state_of(&r1).0, state_of(&r2).0), (20, 1));
    assert_eq!(r2.stats().connections_rejected, 1);
    assert_eq!(r1.stats().connections_rejected, 0);
    drop(r1);
    drop(r2);

    // A fake "relay" that does not know the secret cannot impersonate the real one.
    let fake = TcpListener::bind("127.0.0.1:0").unwrap();
    let faddr = fake.local_addr().unwrap().to_string();
    let t = thread::spawn(move || {
        let (mut s, _) = fake.accept().unwrap();
        s.write_all(&proto::encode_hello(&[3u8; 32])).unwrap();
        let mut auth = [0u8; proto::AUTH_LEN];
        s.read_exact(&mut auth).unwrap();
        let mut reply = vec![proto::VERDICT_ACCEPT];
        reply.extend_from_slice(&[0xAB; 32]);
        reply.extend_from_slice(&1000u32.to_be_bytes());
        reply.extend_from_slice(&0u64.to_be_bytes());
        s.write_all(&reply).unwrap();
        let _ = s.read(&mut [0u8; 1]);
    });
    let e = RelayClient::connect(&faddr, client_cfg(SECRET, 0, 0), Box::new(|_: &[u8]| {}))
        .err()
        .unwrap();
    assert_eq!(e, RelayError::Impostor { addr: faddr });
    t.join().unwrap();
}

#[test]
fn port_range_and_configuration_errors_are_clear() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let p = taken.local_addr().unwrap().port();
    let mut cfg = relay_cfg(SECRET).0;
    cfg.port_range = Some((p, p));
    let e = Relay::start(cfg.clone(), SumState::boxed()).err().unwrap();
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "relay 127.0.0.1:{p}-{p}: cannot listen: no free port in range {p}-{p}"
        )),
        "{msg}"
    );
    drop(taken);
    // Freed now (unless another process grabbed it in between, which would be a fluke).
    let r = Relay::start(cfg.clone(), SumState::boxed()).unwrap();
    assert_eq!(r.local_addr().port(), p);
    drop(r);

    cfg.port_range = None;
    cfg.secret = b"short".to_vec();
    let e = Relay::start(cfg.clone(), SumState::boxed()).err().unwrap();
    assert!(
        e.to_string().contains("secret must be at least 16 bytes"),
        "{e}"
    );
    let e = Relay::start(RelayConfig::default(), SumState::boxed())
        .err()
        .unwrap();
    assert!(matches!(e, RelayError::Config { .. }));
    cfg.secret = SECRET.to_vec();
    let dbg = format!("{cfg:?} {:?}", client_cfg(SECRET, 0, 0));
    assert!(
        !dbg.contains("test-secret") && dbg.contains("redacted"),
        "{dbg}"
    );

    // A closed port: refused, naming host:port.
    let gone = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let e = RelayClient::connect(&gone, client_cfg(SECRET, 0, 0), Box::new(|_: &[u8]| {}))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .starts_with(&format!("relay {gone}: connect failed")),
        "{e}"
    );
    let e = RelayError::ConnectTimeout {
        addr: "10.0.0.5:40213".into(),
        after: Duration::from_secs(10),
    };
    assert_eq!(
        e.to_string(),
        "relay 10.0.0.5:40213: connect timed out after 10 s"
    );
    assert_eq!(crate::error::human(Duration::from_millis(1500)), "1.5 s");
    assert_eq!(crate::error::human(Duration::from_millis(300)), "300 ms");
}

// --- threads: counted by name in /proc, in a child process of its own ----------------------

fn relay_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|c| c.starts_with("ferrodl-relay"))
        .count()
}

#[test]
#[ignore = "run by threads_are_joined_on_shutdown_and_drop in a process of its own"]
fn thread_census_child() {
    if std::env::var_os("FERRODL_RELAY_THREAD_CENSUS").is_none() {
        return;
    }
    assert_eq!(relay_threads(), 0);
    for graceful in [true, false] {
        let relay = Relay::start(relay_cfg(SECRET).0, SumState::boxed()).unwrap();
        let mut clients = Vec::new();
        for p in 0..2 {
            clients.push(
                connect(
                    &relay,
                    client_cfg(SECRET, p, 0),
                    &Arc::new(Inbox::default()),
                    Duration::ZERO,
                )
                .0,
            );
        }
        for (p, c) in clients.iter().enumerate() {
            c.send(payload(p as u32, 0, 10)).unwrap();
        }
        // accept + 2 × (relay reader, writer) + 2 × (client reader, writer)
        wait_stable("9 threads", relay_threads, 9);
        // Strangers in the middle of their handshakes cost no thread (the accept loop polls
        // them); the relay still shuts down at once with them connected.
        let strangers: Vec<TcpStream> = (0..50)
            .map(|_| TcpStream::connect(relay.local_addr()).unwrap())
            .collect();
        wait_until("strangers greeted", WAIT, || {
            strangers.iter().all(|s| {
                let mut b = [0u8; 1];
                s.set_nonblocking(true).unwrap();
                s.peek(&mut b).map(|n| n == 1).unwrap_or(false)
            })
        });
        wait_stable("no thread per stranger", relay_threads, 9);
        if graceful {
            for c in clients {
                c.finish().unwrap();
            }
            let (_, st) = relay.shutdown();
            assert_eq!(st.live_threads, 0);
        } else {
            drop(relay);
            drop(clients);
        }
        // Joined threads may linger in /proc for a moment while the kernel finishes their exit;
        // a leaked thread would stay.
        wait_until(
            &format!("no relay thread left (graceful = {graceful})"),
            Duration::from_secs(2),
            || relay_threads() == 0,
        );
    }
}

#[test]
fn threads_are_joined_on_shutdown_and_drop() {
    if !std::path::Path::new("/proc/self/task").exists() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tests::thread_census_child",
            "--ignored",
            "--test-threads=1",
        ])
        .env("FERRODL_RELAY_THREAD_CENSUS", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
}

// --- flood resistance: every stranger comes from 127.0.0.1 like the workers ------------------

/// A stranger that never authenticates: idle, garbage (then staying open), or a slow-loris
/// that sends a valid-looking AUTH prefix and nothing more.
fn stranger(addr: &str, i: usize) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    match i % 3 {
        0 => {}
        1 => {
            let junk: Vec<u8> = (0..64u32).map(|j| (j * 31 + i as u32) as u8).collect();
            let _ = s.write_all(&junk);
        }
        _ => {
            let _ = s.write_all(&proto::AUTH_MAGIC[..3]);
        }
    }
    s
}

/// Keeps `open` strangers connected, opening 10 new ones every 20 ms (about 500 per second) and
/// closing the oldest, until `stop`; returns the ones still open and how many were opened.
fn flood(addr: &str, open: usize, stop: &AtomicBool) -> (Vec<TcpStream>, usize) {
    let mut live = std::collections::VecDeque::new();
    let mut opened = 0;
    while !stop.load(Ordering::SeqCst) {
        for _ in 0..10 {
            live.push_back(stranger(addr, opened));
            opened += 1;
            if live.len() > open {
                live.pop_front();
            }
        }
        thread::sleep(Duration::from_millis(20));
    }
    (live.into_iter().collect(), opened)
}

#[test]
fn a_flood_of_strangers_cannot_starve_workers() {
    const N: u32 = 100;
    let (mut cfg, lines) = relay_cfg(SECRET);
    // "At once" is half of it: a worker that waited for the strangers to time out would take all
    // of it. Valgrind (tests/valgrind/run-valgrind.sh sets FERRODL_VALGRIND) runs one thread at a
    // time, many times slower, and the accept loop then trails the flood: a worker's connect took
    // 2.9 s there beside another test, so the same property is checked on a longer scale.
    let handshake = match std::env::var_os("FERRODL_VALGRIND") {
        Some(_) => Duration::from_secs(12),
        None => Duration::from_secs(4),
    };
    cfg.handshake_timeout = handshake;
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let addr = relay.local_addr().to_string();
    let stop = AtomicBool::new(false);
    let inboxes: Vec<Arc<Inbox>> = (0..3).map(|_| Arc::new(Inbox::default())).collect();
    /// Stops the flood however the scope ends (a failed assertion must not hang the test).
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let (mut strangers, opened) = thread::scope(|s| {
        // The flood starts before any worker and goes on during the whole fit.
        let flooder = s.spawn(|| flood(&addr, 300, &stop));
        let _stop = StopOnDrop(&stop);
        wait_until("the flood to build up", WAIT, || {
            relay.stats().connections_rejected >= 300
        });
        let mut clients = Vec::new();
        for p in 0..2u32 {
            let t0 = Instant::now();
            let c = connect(&relay, client_cfg(SECRET, p, 0), &inboxes[p as usize], Duration::ZERO);
            // At once, not after the strangers time out (bound well above a loaded machine's RTT).
            assert!(t0.elapsed() < handshake / 2, "{:?}", t0.elapsed());
            clients.push(c.0);
        }
        // No thread per stranger: accept loop + a reader and a writer per worker.
        wait_stable("threads under flood", || relay.stats().live_threads as usize, 1 + 2 * 2);
        let c2 = thread::scope(|s2| {
            for (p, c) in clients.iter().enumerate() {
                s2.spawn(move || send_all(c, p as u32, N, |_| 200, Some((10, Duration::from_millis(2)))));
            }
            // A third worker joins in the middle of the fit and of the flood.
            let t0 = Instant::now();
            let (c2, _) = connect(&relay, client_cfg(SECRET, 2, 0), &inboxes[2], Duration::ZERO);
            assert!(t0.elapsed() < handshake / 2, "{:?}", t0.elapsed());
            send_all(&c2, 2, N, |_| 200, None);
            c2
        });
        clients.push(c2);
        let all = [(0, N), (1, N), (2, N)];
        for (p, ib) in inboxes.iter().enumerate() {
            // Worker 2 joined late: what was applied before it connected came in its snapshot.
            wait_until("deliveries", WAIT, || {
                ib.set().is_superset(&expected_from(&[(2, N)], p as u32))
            });
            assert!(ib.set().is_subset(&expected_from(&all, p as u32)));
        }
        for c in clients {
            c.finish().unwrap();
        }
        stop.store(true, Ordering::SeqCst);
        flooder.join().unwrap()
    });
    assert_eq!(state_of(&relay).0, 3 * N as u64);
    // Every stranger is closed: garbage at once, the rest at the handshake deadline.
    for s in &mut strangers {
        let (_, took) = read_to_close_within(s, handshake + Duration::from_secs(5));
        assert!(took < handshake + Duration::from_millis(900), "{took:?}");
    }
    let st = relay.shutdown().1;
    assert_eq!(st.connections_accepted, 3);
    assert_eq!(st.connections_rejected, opened as u64);
    assert_eq!(st.connections_aborted, 0);
    assert!(opened >= 300, "{opened}");
    let lines = lines.lock().unwrap();
    // The log names the first strangers and then sums the rest up (not one line each).
    assert!(lines.len() <= 30, "{} log lines: {:?}", lines.len(), &lines[..30]);
    assert!(
        lines.iter().any(|l| l.contains("bad authentication magic")),
        "{lines:?}"
    );
}

#[test]
fn past_the_pending_cap_the_oldest_stranger_is_evicted_not_the_newcomer() {
    let (mut cfg, lines) = relay_cfg(SECRET);
    cfg.max_pending_handshakes = 8;
    cfg.handshake_timeout = Duration::from_secs(30);
    let relay = Relay::start(cfg, SumState::boxed()).unwrap();
    let addr = relay.local_addr().to_string();
    let mut idle: Vec<TcpStream> = (0..20).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    wait_until("12 evictions", WAIT, || relay.stats().connections_rejected == 12);
    // The 12 oldest were closed, the 8 newest still wait for their AUTH.
    for (i, s) in idle.iter_mut().enumerate() {
        s.set_read_timeout(Some(Duration::from_millis(if i < 12 { 2000 } else { 50 })))
            .unwrap();
        let mut b = vec![0u8; 256];
        let mut got = 0;
        let closed = loop {
            match s.read(&mut b[got..]) {
                Ok(0) => break true,
                Ok(n) => got += n,
                Err(_) => break false,
            }
        };
        assert_eq!(got, proto::HELLO_LEN, "connection {i}");
        assert_eq!(closed, i < 12, "connection {i}");
    }
    // A worker arriving at the cap gets in (evicting the oldest pending stranger).
    let inbox = Arc::new(Inbox::default());
    let (c, _) = connect(&relay, client_cfg(SECRET, 0, 0), &inbox, Duration::ZERO);
    c.send(payload(0, 0, 16)).unwrap();
    c.finish().unwrap();
    let st = relay.shutdown().1;
    assert_eq!((st.connections_accepted, st.connections_rejected), (1, 13));
    let lines = lines.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("evicted: 8 handshakes were pending and this one was the oldest")),
        "{lines:?}"
    );
}

// --- sealed frames (RelayConfig::encrypt): an attacker on the path ------------------------------

/// A TCP proxy between one client and the relay that records what the client sends and lets a
/// hook rewrite that stream (offsets count from the client's first byte).
struct Proxy {
    addr: String,
    seen: Arc<Mutex<Vec<u8>>>,
}

fn proxy(relay: &str, hook: impl FnMut(&mut Vec<u8>, usize) + Send + 'static) -> Proxy {
    proxy_hooked(relay, true, hook)
}

/// The same for what the relay sends (offsets count from the relay's first byte).
fn proxy_down(relay: &str, hook: impl FnMut(&mut Vec<u8>, usize) + Send + 'static) -> String {
    proxy_hooked(relay, false, hook).addr
}

/// A proxy whose client → relay stream (`upstream`) or relay → client stream goes through
/// `hook` and is recorded; the other direction is copied as it is.
fn proxy_hooked(
    relay: &str,
    upstream: bool,
    mut hook: impl FnMut(&mut Vec<u8>, usize) + Send + 'static,
) -> Proxy {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let relay = relay.to_string();
    thread::spawn(move || {
        let (c, _) = l.accept().unwrap();
        let r = TcpStream::connect(relay).unwrap();
        let (mut from, mut to) = if upstream { (c, r) } else { (r, c) };
        let (mut back_from, mut back_to) = (to.try_clone().unwrap(), from.try_clone().unwrap());
        thread::spawn(move || {
            let _ = std::io::copy(&mut back_from, &mut back_to);
            let _ = back_to.shutdown(std::net::Shutdown::Write);
        });
        let mut b = vec![0u8; 65536];
        let mut off = 0;
        loop {
            let n = match from.read(&mut b) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut chunk = b[..n].to_vec();
            seen2.lock().unwrap().extend_from_slice(&chunk);
            hook(&mut chunk, off);
            off += n;
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
    Proxy { addr, seen }
}

const MARKER: &[u8] = b"plaintext-update-marker";

fn marked(seq: u8) -> Vec<u8> {
    let mut v = MARKER.to_vec();
    v.extend_from_slice(&[seq; 40]);
    v
}

fn sealed_relay() -> (Relay, Arc<Mutex<Vec<String>>>) {
    let (mut cfg, lines) = relay_cfg(SECRET);
    cfg.encrypt = true;
    (Relay::start(cfg, SumState::boxed()).unwrap(), lines)
}

fn sealed_client(p: u32) -> ClientConfig {
    ClientConfig {
        encrypt: true,
        ..client_cfg(SECRET, p, 0)
    }
}

#[test]
fn sealed_frames_are_unreadable_on_the_path_and_cost_16_bytes_each() {
    const N: u32 = 200;
    let (relay, lines) = sealed_relay();
    let addr = relay.local_addr().to_string();
    let px = proxy(&addr, |_, _| {});
    let inboxes: Vec<Arc<Inbox>> = (0..3).map(|_| Arc::new(Inbox::default())).collect();
    let (c0, snap) =
        RelayClient::connect(&px.addr, sealed_client(0), inboxes[0].handler(Duration::ZERO))
            .unwrap();
    assert_eq!(parse_snap(&snap).0, 0, "the sealed snapshot opens");
    let c1 = connect(&relay, sealed_client(1), &inboxes[1], Duration::ZERO).0;
    let c2 = connect(&relay, sealed_client(2), &inboxes[2], Duration::ZERO).0;
    c0.send(marked(1)).unwrap();
    thread::scope(|s| {
        for (p, c) in [&c0, &c1, &c2].into_iter().enumerate() {
            s.spawn(move || send_all(c, p as u32, N, |q| 8 + (q as usize * 37) % 300, None));
        }
    });
    let all = [(1, N), (2, N)];
    wait_until("deliveries", WAIT, || inboxes[0].count() >= 2 * N as usize);
    for (p, c) in [c0, c1, c2].into_iter().enumerate() {
        let st = c.finish().unwrap();
        // 87-byte AUTH; per frame a type byte, a varint length (1 byte under 128, else 2) and
        // a 16-byte tag; FINISH; heartbeats (18 bytes each).
        let headers: u64 = (0..N)
            .map(|q| if 8 + (q as usize * 37) % 300 < 128 { 18 } else { 19 })
            .sum::<u64>()
            + if p == 0 { 18 } else { 0 };
        let framed = 87 + st.bytes_sent + headers + 18;
        assert!(
            st.wire_bytes_sent >= framed && (st.wire_bytes_sent - framed).is_multiple_of(18),
            "{} wire bytes, {framed} without heartbeats",
            st.wire_bytes_sent
        );
    }
    assert_eq!(inboxes[0].set(), expected_from(&all, 0));
    assert_eq!(inboxes[1].bad.load(Ordering::SeqCst), 1, "the marked message");
    let seen = px.seen.lock().unwrap();
    assert!(seen.len() > 87 + 200 * 8);
    assert!(
        !seen.windows(MARKER.len()).any(|w| w == MARKER),
        "the update travelled in the clear"
    );
    let st = relay.shutdown().1;
    assert_eq!((st.connections_accepted, st.connections_aborted), (3, 0));
    assert!(lines.lock().unwrap().is_empty(), "{:?}", lines.lock().unwrap());
}

#[test]
fn altered_or_replayed_sealed_frames_end_the_connection_and_are_not_applied() {
    // The first frame after the 87-byte AUTH is a 63-byte marked update: header 2 (type, varint
    // length), body 63, tag 16.
    const FRAME: usize = 2 + 63 + 16;
    for attack in ["flip", "replay", "drop"] {
        let (relay, lines) = sealed_relay();
        let addr = relay.local_addr().to_string();
        let mut kept: Vec<u8> = Vec::new();
        let px = proxy(&addr, move |chunk, off| {
            // Rewrite the stream byte by byte relative to its absolute offset.
            let mut out = Vec::with_capacity(chunk.len() + FRAME);
            for (i, &b) in chunk.iter().enumerate() {
                let at = off + i;
                let in_first = (87..87 + FRAME).contains(&at);
                match attack {
                    "flip" if at == 87 + 2 + 30 => out.push(b ^ 0x20),
                    "drop" if in_first => {}
                    _ => out.push(b),
                }
                if attack == "replay" && in_first {
                    kept.push(b);
                    if kept.len() == FRAME {
                        out.extend_from_slice(&kept);
                    }
                }
            }
            *chunk = out;
        });
        let (c, _) = RelayClient::connect(&px.addr, sealed_client(0), Box::new(|_: &[u8]| {}))
            .unwrap();
        c.send(marked(1)).unwrap();
        c.send(marked(2)).unwrap();
        let e = c.finish().unwrap_err();
        assert!(matches!(e, RelayError::Closed { .. } | RelayError::Io { .. }), "{attack}: {e}");
        // The relay's reader logs (and counts) the drop once its writer is done: wait for it.
        wait_until("the drop to be logged", WAIT, || {
            lines.lock().unwrap().iter().any(|l| l.contains("connection dropped"))
        });
        let st = relay.shutdown().1;
        let applied = st.per_worker[&0].messages_applied;
        // Replay: the original is applied once, its copy refused; otherwise nothing is applied.
        assert_eq!(applied, u64::from(attack == "replay"), "{attack}");
        assert_eq!((st.protocol_errors, st.connections_aborted), (1, 1), "{attack}");
        let lines = lines.lock().unwrap().join("\n");
        assert!(lines.contains("failed authentication (altered, replayed, reordered or injected)"), "{attack}: {lines}");
    }
}

#[test]
fn a_client_without_the_relays_encryption_setting_is_refused() {
    let (relay, lines) = sealed_relay();
    let addr = relay.local_addr().to_string();
    let e = RelayClient::connect(&addr, client_cfg(SECRET, 0, 0), Box::new(|_: &[u8]| {}))
        .err()
        .unwrap();
    assert!(
        matches!(&e, RelayError::Protocol { detail, .. } if detail.contains("frame encryption off")),
        "{e}"
    );
    let st = relay.shutdown().1;
    assert_eq!((st.connections_accepted, st.connections_rejected), (0, 1));
    let lines = lines.lock().unwrap().join("\n");
    assert!(lines.contains("does not use frame encryption but this relay requires it"), "{lines}");
}

#[test]
fn a_stall_report_reaches_the_relay_with_its_sender_and_the_connection_stays() {
    let (relay, lines) = sealed_relay();
    let (c, _) = RelayClient::connect(
        &relay.local_addr().to_string(),
        sealed_client(3),
        Box::new(|_: &[u8]| {}),
    )
    .unwrap();
    let long = format!("executor 7 on host h: waiting for minibatch 12 {}", "é".repeat(3000));
    c.report_stall(&long).unwrap();
    wait_until("the report", WAIT, || !relay.stats().stalls.is_empty());
    c.send(payload(3, 0, 16)).unwrap();
    c.finish().unwrap();
    let st = relay.shutdown().1;
    assert_eq!(st.stalls.len(), 1);
    let r = &st.stalls[0];
    assert_eq!((r.partition, r.attempt), (3, 0));
    assert!(r.peer.starts_with("127.0.0.1:"), "{}", r.peer);
    // Cut to 4096 bytes at a character boundary.
    assert!(r.report.starts_with("executor 7 on host h: waiting for minibatch 12 é"));
    assert!(r.report.len() <= MAX_STALL_REPORT_BYTES && r.report.len() > 4000, "{}", r.report.len());
    assert_eq!(st.per_worker[&3].messages_applied, 1);
    assert!(lines.lock().unwrap()[0].contains("partition 3 attempt 0"));
}

/// A master state that forwards nothing and answers instead: a receipt of every update (the
/// sender's partition and the payload's length) and, after every second update, the running total
/// of the bytes applied.
#[derive(Default)]
struct Answers {
    applied: u64,
    bytes: u64,
    out: Vec<Arc<Vec<u8>>>,
}

impl MasterState for Answers {
    fn apply(&mut self, worker: WorkerId, payload: &[u8]) -> Result<(), String> {
        self.applied += 1;
        self.bytes += payload.len() as u64;
        self.out.push(Arc::new(format!("receipt {} {}", worker.partition, payload.len()).into_bytes()));
        if self.applied.is_multiple_of(2) {
            self.out.push(Arc::new(format!("total {}", self.bytes).into_bytes()));
        }
        Ok(())
    }
    fn snapshot(&self) -> SnapshotBytes {
        self.bytes.to_le_bytes().to_vec().into()
    }
    fn forwards_updates(&self) -> bool {
        false
    }
    fn take_broadcasts(&mut self) -> Vec<Arc<Vec<u8>>> {
        std::mem::take(&mut self.out)
    }
}

/// A master state that turns forwarding off and answers with messages of its own: every worker,
/// the sender included, receives exactly those messages, in the order the updates were applied,
/// and no worker's update.
#[test]
fn a_master_state_can_answer_every_worker_instead_of_forwarding() {
    for encrypt in [false, true] {
        let (mut cfg, lines) = relay_cfg(SECRET);
        cfg.encrypt = encrypt;
        let relay = Relay::start(cfg, Box::new(Answers::default())).unwrap();
        let got: Vec<Arc<Mutex<Vec<String>>>> = (0..3).map(|_| Arc::default()).collect();
        let clients: Vec<RelayClient> = (0..3)
            .map(|p| {
                let g = got[p].clone();
                RelayClient::connect(
                    &relay.local_addr().to_string(),
                    ClientConfig { encrypt, ..client_cfg(SECRET, p as u32, 0) },
                    Box::new(move |m: &[u8]| g.lock().unwrap().push(String::from_utf8_lossy(m).into())),
                )
                .unwrap()
                .0
            })
            .collect();
        // one sender at a time, so the order of the answers is known
        for (i, len) in [10usize, 20, 30, 40, 50, 60].into_iter().enumerate() {
            clients[i % 3].send(vec![7u8; len]).unwrap();
            let applied = i + 1;
            let want = applied + applied / 2; // receipts, totals
            wait_until("the answers", WAIT, || got.iter().all(|g| g.lock().unwrap().len() == want));
        }
        let expected = [
            "receipt 0 10", "receipt 1 20", "total 30", "receipt 2 30", "receipt 0 40", "total 100",
            "receipt 1 50", "receipt 2 60", "total 210",
        ];
        for c in clients {
            c.finish().unwrap();
        }
        for g in &got {
            assert_eq!(*g.lock().unwrap(), expected, "sealed {encrypt}");
        }
        let st = relay.shutdown().1;
        assert_eq!(st.per_worker.values().map(|w| w.messages_applied).sum::<u64>(), 6);
        assert_eq!(st.per_worker.values().map(|w| w.messages_relayed_out).sum::<u64>(), 27);
        assert!(lines.lock().unwrap().is_empty(), "{:?}", lines.lock().unwrap());
    }
}

/// A master state whose snapshot is larger than two sealing chunks, in two shared parts.
struct BigSnapshot(Arc<Vec<u8>>, Arc<Vec<u8>>);

impl BigSnapshot {
    fn new() -> Self {
        let bytes = |len: usize, seed: u64| -> Vec<u8> {
            (0..len as u64).map(|i| (i.wrapping_mul(2654435761) >> 7 ^ seed) as u8).collect()
        };
        BigSnapshot(
            Arc::new(bytes(proto::SNAPSHOT_CHUNK + 1000, 1)),
            Arc::new(bytes(proto::SNAPSHOT_CHUNK + 17, 2)),
        )
    }
    fn bytes(&self) -> Vec<u8> {
        [self.0.as_slice(), self.1.as_slice()].concat()
    }
}

impl MasterState for BigSnapshot {
    fn apply(&mut self, _worker: WorkerId, _payload: &[u8]) -> Result<(), String> {
        Ok(())
    }
    fn snapshot(&self) -> SnapshotBytes {
        let mut s = SnapshotBytes::new();
        s.push(self.0.clone()).push(self.1.clone());
        s
    }
}

/// A snapshot of 2 MiB + 1017 bytes in two shared parts reaches sealed and unsealed clients
/// whole; sealed, it travels as three chunks of at most 1 MiB, each with its own tag and sequence
/// number (frames after it still open: the numbering continues). A chunk altered or cut short on
/// the path is refused, naming the chunk.
#[test]
fn a_large_snapshot_travels_in_sealed_chunks_and_an_altered_chunk_is_refused() {
    let want = BigSnapshot::new().bytes();
    for encrypt in [true, false] {
        let (mut cfg, lines) = relay_cfg(SECRET);
        cfg.encrypt = encrypt;
        let relay = Relay::start(cfg, Box::new(BigSnapshot::new())).unwrap();
        let ccfg = |p| ClientConfig {
            encrypt,
            ..client_cfg(SECRET, p, 0)
        };
        let ib: Vec<Arc<Inbox>> = (0..2).map(|_| Arc::new(Inbox::default())).collect();
        let (c0, snap0) = connect(&relay, ccfg(0), &ib[0], Duration::ZERO);
        let (c1, snap1) = connect(&relay, ccfg(1), &ib[1], Duration::ZERO);
        assert!(snap0 == want && snap1 == want, "sealed {encrypt}: the snapshot arrives whole");
        c0.send(payload(0, 0, 64)).unwrap();
        c1.send(payload(1, 0, 300)).unwrap();
        wait_until("the relayed updates", WAIT, || ib[0].count() == 1 && ib[1].count() == 1);
        c0.finish().unwrap();
        c1.finish().unwrap();
        assert_eq!(ib[0].set(), expected_from(&[(1, 1)], 0));
        let st = relay.shutdown().1;
        assert_eq!((st.connections_accepted, st.connections_aborted), (2, 0));
        assert!(lines.lock().unwrap().is_empty(), "{:?}", lines.lock().unwrap());
    }
    // The relay's stream: HELLO, ACCEPT, then chunk 0 (1 MiB + tag), chunk 1, chunk 2.
    let chunk1 = proto::HELLO_LEN + proto::ACCEPT_LEN + proto::SNAPSHOT_CHUNK + seal::TAG_LEN;
    for attack in ["flip", "cut"] {
        let (mut cfg, _lines) = relay_cfg(SECRET);
        cfg.encrypt = true;
        let relay = Relay::start(cfg, Box::new(BigSnapshot::new())).unwrap();
        let addr = proxy_down(&relay.local_addr().to_string(), move |piece, off| {
            let end = off + piece.len();
            match attack {
                "flip" if (off..end).contains(&(chunk1 + 100)) => piece[chunk1 + 100 - off] ^= 1,
                "cut" if end > chunk1 + 100 => piece.truncate((chunk1 + 100).saturating_sub(off)),
                _ => {}
            }
        });
        let mut c = ClientConfig {
            encrypt: true,
            ..client_cfg(SECRET, 0, 0)
        };
        c.io_timeout = Duration::from_secs(3);
        let e = RelayClient::connect(&addr, c, Box::new(|_: &[u8]| {}))
            .err()
            .expect("refused");
        let text = e.to_string();
        match attack {
            "flip" => assert!(
                text.contains("snapshot: frame 1 failed authentication"),
                "{attack}: {text}"
            ),
            _ => assert!(
                text.contains("snapshot truncated") || text.contains("reading the snapshot"),
                "{attack}: {text}"
            ),
        }
        relay.shutdown();
    }
}

/// A peer's announced sizes are checked against the native memory budget before anything is
/// allocated or read: a relay announcing a 2^40-byte snapshot is refused at once (the client does
/// not wait for, or reserve, a byte of it), and an update frame larger than the budget is refused
/// by the relay with a message naming the bytes while the worker is told why.
#[test]
fn announced_sizes_past_the_native_memory_budget_are_refused_before_allocating() {
    // A fake relay that knows the secret and announces a snapshot of 2^40 bytes, then sends
    // nothing more (the connection stays open: a client reading it would wait for its timeout).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let fake = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let rn = [3u8; proto::NONCE_LEN];
        s.write_all(&proto::encode_hello(&rn)).unwrap();
        let mut auth = [0u8; proto::AUTH_LEN];
        s.read_exact(&mut auth).unwrap();
        let a = proto::parse_auth(&auth).unwrap();
        let tag = proto::auth_tag(SECRET, Side::Relay, &rn, &a.client_nonce, a.worker, a.flags);
        let mut accept = vec![proto::VERDICT_ACCEPT];
        accept.extend_from_slice(&tag);
        accept.extend_from_slice(&1000u32.to_be_bytes());
        accept.extend_from_slice(&(1u64 << 40).to_be_bytes());
        s.write_all(&accept).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest); // until the client hangs up
    });
    let mut cfg = client_cfg(SECRET, 0, 0);
    cfg.io_timeout = Duration::from_secs(20);
    let t0 = Instant::now();
    let e = RelayClient::connect(&addr, cfg, Box::new(|_: &[u8]| {}))
        .err()
        .expect("the snapshot is refused");
    assert!(matches!(e, RelayError::Memory { .. }), "{e:?}");
    assert!(
        e.to_string().starts_with(&format!(
            "relay {addr}: the relay's parameter snapshot of 1099511627776 bytes needs \
             1,099,511,627,776 bytes of native memory, but the native memory budget is"
        )),
        "{e}"
    );
    assert!(t0.elapsed() < Duration::from_secs(5), "refused before reading: {:?}", t0.elapsed());
    fake.join().unwrap();

    // An update frame of 4 GiB - 1 (the largest a frame header can announce) against a relay
    // that allows frames that large but has a 1 GiB budget. The budget is process-wide: 1 GiB is
    // far more than the other tests of this binary hold at once.
    ferrodl_memory::set_budget(1 << 30);
    let (mut rcfg, _) = relay_cfg(SECRET);
    rcfg.max_message_bytes = u32::MAX as usize;
    let relay = Relay::start(rcfg, SumState::boxed()).unwrap();
    let w = WorkerId {
        partition: 0,
        attempt: 0,
    };
    let (mut s, _) = raw_handshake(&relay.local_addr().to_string(), SECRET, w);
    s.write_all(&frame_header(proto::T_UPDATE, u32::MAX as usize)).unwrap();
    let (answer, took) = read_to_close(&mut s);
    ferrodl_memory::set_budget(0);
    let text = String::from_utf8_lossy(&answer);
    assert!(
        text.contains("update refused: an update frame of 4294967295 bytes needs 4,294,967,295 bytes of native memory, but the native memory budget is 1,073,741,824 bytes"),
        "{text}"
    );
    assert!(took < Duration::from_secs(3), "refused at the header: {took:?}");
    let st = relay.shutdown().1;
    assert_eq!(
        (st.per_worker[&0].messages_dropped, st.connections_aborted),
        (1, 1)
    );
}

/// Relay trees (tree.rs).
mod tree_tests;
