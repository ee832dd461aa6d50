//! Relay trees over real sockets: exactly-once delivery through three levels, FINISH meaning
//! "applied at the root", and what a killed interior node does to its subtree.

use super::*;

/// A node's state, started from its parent's snapshot (the sums and count of `SumState`).
fn sum_state_from(snapshot: &[u8]) -> Result<Box<dyn MasterState>, String> {
    if snapshot.len() != 8 * 17 {
        return Err(format!("{} bytes", snapshot.len()));
    }
    let (applied, sums) = parse_snap(snapshot);
    Ok(Box::new(SumState {
        sums,
        applied,
        delay: Duration::ZERO,
    }))
}

fn node(parent: &str, index: u32, sealed: bool) -> TreeNode {
    let (mut cfg, _) = relay_cfg(SECRET);
    cfg.encrypt = sealed;
    let client = ClientConfig {
        encrypt: sealed,
        ..client_cfg(SECRET, TREE_NODE_PARTITION_BASE + index, 0)
    };
    TreeNode::start(cfg, parent, client, sum_state_from).unwrap()
}

fn worker(addr: &str, p: u32, attempt: u32, sealed: bool, inbox: &Arc<Inbox>) -> (RelayClient, Vec<u8>) {
    let cfg = ClientConfig {
        encrypt: sealed,
        ..client_cfg(SECRET, p, attempt)
    };
    RelayClient::connect(addr, cfg, inbox.handler(Duration::ZERO)).unwrap()
}

fn node_state(n: &TreeNode) -> (u64, [u64; 16]) {
    parse_snap(&n.with_state(|s| s.snapshot()).to_vec())
}

fn every_worker_gets_every_update_once(sealed: bool) {
    const N: u32 = 150;
    let (mut cfg, _) = relay_cfg(SECRET);
    cfg.encrypt = sealed;
    let root = Relay::start(cfg, SumState::boxed()).unwrap();
    let root_addr = root.local_addr().to_string();
    // root ── a ── c
    //   └──── b
    let a = node(&root_addr, 0, sealed);
    let b = node(&root_addr, 1, sealed);
    let c = node(&a.local_addr().to_string(), 2, sealed);
    let at = |p: u32| match p {
        0 => root_addr.clone(),
        1 | 2 => a.local_addr().to_string(),
        3 => b.local_addr().to_string(),
        _ => c.local_addr().to_string(),
    };
    let inboxes: Vec<Arc<Inbox>> = (0..6).map(|_| Arc::new(Inbox::default())).collect();
    let clients: Vec<RelayClient> = (0..6u32)
        .map(|p| {
            let (cl, snap) = worker(&at(p), p, 0, sealed, &inboxes[p as usize]);
            assert_eq!(parse_snap(&snap).0, 0);
            cl
        })
        .collect();
    let len = |seq: u32| 20 + (seq as usize * 13) % 200;
    thread::scope(|s| {
        for (p, c) in clients.iter().enumerate() {
            s.spawn(move || send_all(c, p as u32, N, len, None));
        }
    });
    // FINISH returns once the worker's updates are applied at the root, through the tree.
    let mut expected_sums = [0u64; 16];
    for p in 0..6 {
        for seq in 0..N {
            add_sums(&mut expected_sums, &payload(p, seq, len(seq)));
        }
    }
    for ib in &inboxes {
        wait_until("every worker to receive 5N", WAIT, || ib.count() >= 5 * N as usize);
    }
    for c in clients {
        c.finish().unwrap();
    }
    assert_eq!(state_of(&root), (6 * N as u64, expected_sums), "the root applied all, once");
    let all: Vec<(u32, u32)> = (0..6).map(|p| (p, N)).collect();
    for (p, ib) in inboxes.iter().enumerate() {
        assert_eq!(ib.set(), expected_from(&all, p as u32), "worker {p}");
        assert_eq!(ib.bad.load(Ordering::SeqCst), 0);
    }
    // Every node saw every update once too: its copy equals the root's.
    for (name, n) in [("a", &a), ("b", &b), ("c", &c)] {
        assert_eq!(node_state(n), (6 * N as u64, expected_sums), "node {name}");
    }
    // Who sent what up: c carries workers 4 and 5, a carries 1, 2 and c's, b carries 3.
    let (sa, sb, sc) = (a.stats(), b.stats(), c.stats());
    assert_eq!((sc.upstream_sent, sc.upstream_received), (2 * N as u64, 4 * N as u64));
    assert_eq!((sa.upstream_sent, sa.upstream_received), (4 * N as u64, 2 * N as u64));
    assert_eq!((sb.upstream_sent, sb.upstream_received), (N as u64, 5 * N as u64));
    let rs = root.stats();
    let from = |i: u32| rs.per_worker[&(TREE_NODE_PARTITION_BASE + i)].messages_applied;
    assert_eq!((from(0), from(1), rs.per_worker[&0].messages_applied), (4 * N as u64, N as u64, N as u64));
    for n in [c, a, b] {
        n.shutdown().unwrap();
    }
    let st = root.shutdown().1;
    assert_eq!((st.connections_aborted, st.protocol_errors), (0, 0));
}

#[test]
fn a_tree_delivers_every_update_exactly_once_and_finish_means_applied_at_the_root() {
    every_worker_gets_every_update_once(false);
}

#[test]
fn a_sealed_tree_delivers_every_update_exactly_once() {
    every_worker_gets_every_update_once(true);
}

#[test]
fn a_killed_interior_node_ends_its_subtree_and_reruns_start_from_the_root_state() {
    const N: u32 = 100;
    const M: u32 = 50;
    let (cfg, _) = relay_cfg(SECRET);
    let root = Relay::start(cfg, SumState::boxed()).unwrap();
    let root_addr = root.local_addr().to_string();
    let a = node(&root_addr, 0, false);
    let (i0, i1, i1b) = (
        Arc::new(Inbox::default()),
        Arc::new(Inbox::default()),
        Arc::new(Inbox::default()),
    );
    let (w0, _) = worker(&root_addr, 0, 0, false, &i0);
    let (w1, _) = worker(&a.local_addr().to_string(), 1, 0, false, &i1);
    send_all(&w0, 0, N, |_| 40, None);
    send_all(&w1, 1, N, |_| 40, None);
    wait_until("deliveries both ways", WAIT, || i0.count() == N as usize && i1.count() == N as usize);
    // The node crashes: its worker's connection ends, the root counts the node as aborted.
    drop(a);
    wait_until("the worker below the node to fail", WAIT, || w1.is_closed());
    assert!(w1.finish().is_err());
    wait_until("the root to count the node aborted", WAIT, || root.stats().connections_aborted == 1);
    // Spark re-runs the task: attempt 1 connects to the root and starts from its state, which
    // holds everything both workers sent (all of it reached the root before the crash).
    let (w1b, snap) = worker(&root_addr, 1, 1, false, &i1b);
    assert_eq!(parse_snap(&snap).0, 2 * N as u64);
    for seq in N..N + M {
        w0.send(payload(0, seq, 40)).unwrap();
        w1b.send(payload(1, seq, 40)).unwrap();
    }
    wait_until("deliveries after the re-run", WAIT, || {
        i0.count() == (N + M) as usize && i1b.count() == M as usize
    });
    w1b.finish().unwrap();
    w0.finish().unwrap();
    assert_eq!(state_of(&root).0, 2 * (N + M) as u64);
    let range = |p: u32, from: u32, to: u32| (from..to).map(move |s| (p, s));
    assert_eq!(i0.set(), range(1, 0, N + M).collect());
    assert_eq!(i1b.set(), range(0, N, N + M).collect(), "the re-run sees only what came after its snapshot");
    let st = root.shutdown().1;
    assert_eq!(st.per_worker[&TREE_NODE_PARTITION_BASE].messages_applied, N as u64);
    assert_eq!(st.connections_aborted, 1);
}

#[test]
fn a_node_whose_parent_is_gone_closes_its_workers_at_once() {
    let (cfg, _) = relay_cfg(SECRET);
    let root = Relay::start(cfg, SumState::boxed()).unwrap();
    let a = node(&root.local_addr().to_string(), 0, false);
    let inbox = Arc::new(Inbox::default());
    let (w, _) = worker(&a.local_addr().to_string(), 1, 0, false, &inbox);
    let t0 = Instant::now();
    drop(root.shutdown());
    // Well before the 3 s heartbeat timeout: the node's watcher closes its connections.
    wait_until("the worker to be closed", WAIT, || w.is_closed());
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    assert!(w.finish().is_err());
    // A node that lost its parent accepts nobody.
    let cfg = client_cfg(SECRET, 2, 0);
    let e = RelayClient::connect(&a.local_addr().to_string(), cfg, Box::new(|_: &[u8]| {}))
        .err()
        .unwrap();
    assert!(matches!(e, RelayError::Unavailable { .. }), "{e}");
}
