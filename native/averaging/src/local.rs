//! The in-process exchange: when every worker task runs in the driver's process (Spark's local[N]),
//! a round message goes from the sending worker's thread straight to the driver's
//! [`AveragingMaster`] and to the other workers' inboxes — or, from three workers on, what the
//! master answers (receipts, a round's average) to every worker's — instead of through the relay's
//! sockets (writer thread, relay reader, relay writer,
//! worker reader: four copies of ~5 MB and four thread hand-offs per message for the MNIST MLP with
//! Adam). Same messages, same delivery rule (an answer reaches the workers registered when it is
//! made, so the hello handshake is unchanged), same state on the driver: every worker and the
//! driver hold the same bits as over the relay. The workers of one fit are all in the driver's
//! process (local[N]) or none is: a hub reaches only the workers that joined it.
//!
//! The driver registers a hub under the fit's secret when its settings ask for it (`inProcess`);
//! a worker whose secret names a registered hub uses it, any other (another process) the relay.

use crate::master::SharedMaster;
use ferrodl_relay::{MasterState, WorkerId};
use ferrodl_sharing::SharingError;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// What a worker does with a delivered message (its relay `on_message`): it may take the buffer, as
/// over the relay ([`ferrodl_relay::OnPayload`]).
pub(crate) type Deliver = Arc<dyn Fn(&mut Vec<u8>) + Send + Sync>;

pub(crate) struct Hub {
    master: SharedMaster,
    peers: Mutex<BTreeMap<u32, (u32, Deliver)>>,
    /// Messages and payload bytes handed to the hub, and deliveries to workers.
    pub(crate) messages: AtomicU64,
    pub(crate) bytes: AtomicU64,
    pub(crate) deliveries: AtomicU64,
}

fn hubs() -> MutexGuard<'static, HashMap<String, Arc<Hub>>> {
    static HUBS: OnceLock<Mutex<HashMap<String, Arc<Hub>>>> = OnceLock::new();
    HUBS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

impl Hub {
    /// Registers a hub for the fit whose secret is `secret_hex` (random per fit).
    pub(crate) fn register(secret_hex: &str, master: SharedMaster) -> Arc<Hub> {
        let hub = Arc::new(Hub {
            master,
            peers: Mutex::new(BTreeMap::new()),
            messages: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            deliveries: AtomicU64::new(0),
        });
        hubs().insert(secret_hex.to_ascii_lowercase(), Arc::clone(&hub));
        hub
    }

    pub(crate) fn unregister(secret_hex: &str, hub: &Arc<Hub>) {
        let mut all = hubs();
        let key = secret_hex.to_ascii_lowercase();
        if all.get(&key).is_some_and(|h| Arc::ptr_eq(h, hub)) {
            all.remove(&key);
        }
    }

    /// The fit's start state (what the relay hands a connecting worker).
    pub(crate) fn start_state(&self) -> Vec<u8> {
        self.master.snapshot().to_vec()
    }

    pub(crate) fn find(secret_hex: &str) -> Option<Arc<Hub>> {
        hubs().get(&secret_hex.to_ascii_lowercase()).cloned()
    }

    fn peers(&self) -> MutexGuard<'_, BTreeMap<u32, (u32, Deliver)>> {
        self.peers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a worker; a later attempt of a partition supersedes an earlier one (a retried stage), as
    /// on the relay.
    pub(crate) fn join(&self, worker: WorkerId, deliver: Deliver) -> Result<(), SharingError> {
        let mut peers = self.peers();
        if let Some((attempt, _)) = peers.get(&worker.partition) {
            if *attempt > worker.attempt {
                return Err(SharingError::Message(format!(
                    "partition {} attempt {} is superseded by attempt {attempt}",
                    worker.partition, worker.attempt
                )));
            }
        }
        peers.insert(worker.partition, (worker.attempt, deliver));
        Ok(())
    }

    pub(crate) fn leave(&self, worker: WorkerId) {
        let mut peers = self.peers();
        if peers.get(&worker.partition).is_some_and(|(a, _)| *a == worker.attempt) {
            peers.remove(&worker.partition);
        }
    }

    /// The relay's work for one message: the driver's state applies it, then every other worker
    /// registered now receives it when the state forwards (two workers), and every worker (the
    /// sender included) what the state answers (receipts, a round's average; from three).
    /// The message is handed over: its last recipient gets the sender's buffer itself (with two
    /// workers the only one), the others a copy.
    pub(crate) fn send(&self, from: WorkerId, mut payload: Vec<u8>) -> Result<(), SharingError> {
        let peers: Vec<(u32, Deliver)> = {
            let peers = self.peers();
            match peers.get(&from.partition) {
                Some((attempt, _)) if *attempt == from.attempt => {}
                _ => {
                    return Err(SharingError::Message(format!(
                        "partition {} attempt {} is no longer connected (superseded or finished)",
                        from.partition, from.attempt
                    )))
                }
            }
            peers.iter().map(|(p, (_, d))| (*p, Arc::clone(d))).collect()
        };
        let (forwards, answers) = self.master.apply_and_take(from, &payload).map_err(SharingError::Message)?;
        self.messages.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(payload.len() as u64, Ordering::Relaxed);
        let mut deliveries = 0;
        // the last worker the message is forwarded to takes the sender's buffer
        let last_forward = peers.iter().rev().map(|(p, _)| *p).find(|&p| forwards && p != from.partition);
        for (p, d) in &peers {
            if forwards && *p != from.partition {
                if Some(*p) == last_forward {
                    d(&mut payload);
                } else {
                    d(&mut payload.clone());
                }
                deliveries += 1;
            }
            for m in &answers {
                d(&mut m.as_ref().clone());
                deliveries += 1;
            }
        }
        self.deliveries.fetch_add(deliveries, Ordering::Relaxed);
        Ok(())
    }
}
