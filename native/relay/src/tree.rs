//! Relay trees: a [`TreeNode`] is a relay that is also a client of a parent relay, so a fit's
//! workers can be spread over several hubs instead of one (docs/RELAY_PROTOCOL.md §6,
//! docs/SCALING.md).
//!
//! A node accepts workers (or child nodes) exactly as the root does — the same handshake, the
//! same secret, the same frames: workers are unchanged — and joins its parent as a client whose
//! partition is [`TREE_NODE_PARTITION_BASE`] + its index. It keeps its own copy of the master
//! state, started from the parent's snapshot, so it can hand a snapshot to a worker that
//! connects to it. Every update is forwarded along the tree's edges, never back the edge it came
//! from:
//!
//! * an update from one of the node's connections is applied to the node's copy, forwarded to
//!   the node's other connections and sent to the parent;
//! * an update from the parent is applied and forwarded to every connection of the node.
//!
//! On a tree each node and worker therefore sees every update exactly once, and every update
//! reaches the root, whose master copy is the fit's result. A node's copy sums the same updates
//! in another order (equal to float rounding). A worker's FINISH at a node is acknowledged only
//! after the node's FLUSH to its parent is acknowledged (recursively up to the root), so when
//! every worker has finished the root's copy is final, as with one relay.
//!
//! **A node that dies** (its process killed, its parent connection lost) ends all of its
//! connections: the parent counts the node's connection as aborted, and the workers below it
//! fail exactly as workers fail when their relay is gone. Updates the node had received but not
//! yet sent up are lost to the rest of the tree — but only the node's own subtree had seen them,
//! and every worker of that subtree has lost its connection: when Spark re-runs those tasks they
//! connect (to another node or the root) and start from a fresh snapshot, so no participant keeps
//! a state the root does not have. This is the flat relay's rule for a killed worker (its
//! unsent updates are lost, its re-run starts from the snapshot) applied to a whole subtree.
//! A node whose parent goes away closes its own connections at once (it polls its parent
//! connection every 50 ms), so its workers do not wait for a heartbeat timeout.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::error::RelayError;
use crate::relay::{self, lock, Shared};
use crate::{ClientConfig, MasterState, Relay, RelayClient, RelayConfig, RelayStats};

/// Partitions at and above this are relay tree nodes in their parent's statistics (Spark
/// partitions are below 2^31).
pub const TREE_NODE_PARTITION_BASE: u32 = 1 << 31;

/// Updates from the parent that arrived before the node's relay existed (between the snapshot
/// and the start), then the relay they go to.
#[derive(Default)]
struct Inlet {
    relay: Option<Weak<Shared>>,
    pending: Vec<Vec<u8>>,
    failed: Option<String>,
}

/// A relay that forwards to and from a parent relay. See the module documentation.
pub struct TreeNode {
    relay: Option<Relay>,
    upstream: Option<Arc<RelayClient>>,
    watcher: Option<JoinHandle<()>>,
    stop_watch: Arc<AtomicBool>,
}

impl TreeNode {
    /// Joins the parent at `parent_addr` as `client` (its `worker.partition` should be
    /// [`TREE_NODE_PARTITION_BASE`] + the node's index; the secret and the encryption setting are
    /// the tree's), builds the node's master state from the parent's snapshot with `make_state`,
    /// and starts listening with `config`.
    pub fn start(
        config: RelayConfig,
        parent_addr: &str,
        client: ClientConfig,
        make_state: impl FnOnce(&[u8]) -> Result<Box<dyn MasterState>, String>,
    ) -> Result<TreeNode, RelayError> {
        let inlet = Arc::new(Mutex::new(Inlet::default()));
        let sink = inlet.clone();
        let on_message = Box::new(move |payload: &[u8]| {
            let mut g = lock(&sink);
            if g.failed.is_some() {
                return;
            }
            let Some(relay) = g.relay.clone() else {
                g.pending.push(payload.to_vec());
                return;
            };
            // Forwarding under the inlet's lock keeps the parent's order (it is only
            // contended while the node starts).
            if let Some(sh) = relay.upgrade() {
                if let Err(e) = relay::inject(&sh, payload.to_vec()) {
                    relay::abort_all(&sh, &e);
                    g.failed = Some(e);
                }
            }
        });
        let (upstream, snapshot) = RelayClient::connect(parent_addr, client, on_message)?;
        let upstream = Arc::new(upstream);
        let state = make_state(&snapshot).map_err(|detail| RelayError::Protocol {
            addr: parent_addr.into(),
            detail: format!("the parent's snapshot: {detail}"),
        })?;
        let relay = Relay::start_node(config, state, Arc::downgrade(&upstream))?;
        {
            let mut g = lock(&inlet);
            let sh = relay.shared().clone();
            for payload in std::mem::take(&mut g.pending) {
                if let Err(e) = relay::inject(&sh, payload) {
                    return Err(RelayError::Protocol {
                        addr: parent_addr.into(),
                        detail: e,
                    });
                }
            }
            g.relay = Some(Arc::downgrade(&sh));
        }
        let stop_watch = Arc::new(AtomicBool::new(false));
        let (stop, up, sh) = (
            stop_watch.clone(),
            Arc::downgrade(&upstream),
            Arc::downgrade(relay.shared()),
        );
        let watcher = thread::Builder::new()
            .name("ferrodl-relay-tree-watch".into())
            .spawn(move || watch(stop, up, sh))
            .map_err(|e| RelayError::Io {
                addr: parent_addr.into(),
                what: "starting the tree node's watcher".into(),
                detail: e.to_string(),
            })?;
        Ok(TreeNode {
            relay: Some(relay),
            upstream: Some(upstream),
            watcher: Some(watcher),
            stop_watch,
        })
    }

    /// Where workers (or child nodes) connect.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.relay.as_ref().expect("relay lives until shutdown").local_addr()
    }

    /// The node's own counters (its connections; `upstream_*` for the parent link).
    pub fn stats(&self) -> RelayStats {
        self.relay.as_ref().expect("relay lives until shutdown").stats()
    }

    /// CPU seconds used so far by the node's running relay threads ([`Relay::cpu_seconds`]).
    pub fn cpu_seconds(&self) -> f64 {
        self.relay.as_ref().map_or(0.0, Relay::cpu_seconds)
    }

    /// Runs `f` on the node's copy of the master state.
    pub fn with_state<R>(&self, f: impl FnOnce(&mut dyn MasterState) -> R) -> R {
        self.relay
            .as_ref()
            .expect("relay lives until shutdown")
            .with_state(f)
    }

    /// Stops the node (closing whatever is still connected), then finishes its parent
    /// connection: `Ok` once the parent confirmed that everything this node sent is applied
    /// at the root. Returns the node's state and statistics.
    pub fn shutdown(mut self) -> Result<(Box<dyn MasterState>, RelayStats), RelayError> {
        self.stop_watcher();
        let relay = self.relay.take().expect("relay lives until shutdown");
        let (state, stats) = relay.shutdown();
        let upstream = self.upstream.take().expect("upstream lives until shutdown");
        // The relay's threads are joined; the relay holds the client weakly: this is the owner.
        let client = Arc::try_unwrap(upstream).map_err(|_| RelayError::Closed {
            addr: "parent relay".into(),
            reason: "the parent connection is still in use".into(),
        })?;
        client.finish()?;
        Ok((state, stats))
    }

    fn stop_watcher(&mut self) {
        self.stop_watch.store(true, Ordering::SeqCst);
        if let Some(h) = self.watcher.take() {
            let _ = h.join();
        }
    }
}

impl Drop for TreeNode {
    /// Dropping a node without [`TreeNode::shutdown`] is a crash as far as the tree is
    /// concerned: its connections close and its parent counts it as aborted.
    fn drop(&mut self) {
        self.stop_watcher();
        self.relay.take();
        self.upstream.take();
    }
}

/// Closes every connection of the node as soon as its parent connection ends.
fn watch(stop: Arc<AtomicBool>, up: Weak<RelayClient>, sh: Weak<Shared>) {
    while !stop.load(Ordering::SeqCst) {
        let Some(client) = up.upgrade() else { return };
        if client.is_closed() {
            if let Some(sh) = sh.upgrade() {
                relay::abort_all(&sh, &format!("the parent relay is gone: {}", client.error()));
            }
            return;
        }
        drop(client);
        thread::sleep(Duration::from_millis(50));
    }
}
