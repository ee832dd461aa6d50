//! The driver's side: the relay's state hands every connecting worker the fit's start state (the
//! network's parameters and updater state, instead of a Spark broadcast that each task would read)
//! and collects every round's messages. From three workers on ([`hub_averages`]) it also answers
//! every worker with a receipt of each message and, once the round is complete, its average, and
//! the relay forwards no worker's message: a round moves N messages of the network's size out of
//! the hub instead of N·(N − 1). The last round's average is the fit's result on the driver (no
//! task returns its parameters).

use crate::local::Hub;
use crate::message::{average, hub_averages, Average, RoundMessage, RoundReport};
use ferrodl_relay::{MasterState, Relay, RelayStats, SnapshotBytes, WorkerId};
use ferrodl_sharing::{relay_stats_json, RelaySettings, SharingError};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The relay's state of one averaging fit.
pub struct AveragingMaster {
    workers: u32,
    /// Rounds of the fit: when the workers average (two of them), only the last round's arrays are
    /// kept (earlier ones count by their headers).
    rounds: u32,
    /// Stage attempt whose rounds are being collected; messages of older attempts are ignored.
    stage: u32,
    /// Rounds not yet complete: round -> partition -> message.
    pending: BTreeMap<u32, BTreeMap<u32, RoundMessage>>,
    /// The last complete round that had a contributor.
    last: Option<LastRound>,
    rounds_done: u32,
    /// Sum over complete rounds of the most iterations one worker made.
    iterations: u64,
    /// The fit's start state, a [`RoundMessage`] carrying the driver's parameters (and updater
    /// state): the snapshot every connecting worker receives (a retried stage starts from it too).
    start: Arc<Vec<u8>>,
    /// Messages for every worker, taken by the relay (or the in-process hub) after each apply.
    out: Vec<Arc<Vec<u8>>>,
}

/// The last round with a contributor: its messages (the workers average; the driver does once, at
/// the end), or the average this state computed and sent.
enum LastRound {
    Messages(Vec<RoundMessage>),
    Average(Average),
}

/// What the driver takes from the fit.
#[derive(Clone, Debug)]
pub struct FinalState {
    /// The last round's average with contributors (None: no round completed with one).
    pub average: Option<Average>,
    pub rounds_done: u32,
    /// Iterations to add to the network's counter.
    pub iterations: u64,
}

impl AveragingMaster {
    /// `start`: the fit's start state ([`encode_start`]).
    pub fn new(workers: u32, rounds: u32, start: Arc<Vec<u8>>) -> Self {
        AveragingMaster {
            workers,
            rounds,
            stage: 0,
            pending: BTreeMap::new(),
            last: None,
            rounds_done: 0,
            iterations: 0,
            start,
            out: Vec::new(),
        }
    }

    pub fn final_state(&self) -> Result<FinalState, SharingError> {
        let average = match &self.last {
            Some(LastRound::Messages(msgs)) => average(&msgs.iter().collect::<Vec<_>>())?,
            Some(LastRound::Average(a)) => Some(a.clone()),
            None => None,
        };
        Ok(FinalState { average, rounds_done: self.rounds_done, iterations: self.iterations })
    }
}

impl MasterState for AveragingMaster {
    fn apply(&mut self, worker: WorkerId, payload: &[u8]) -> Result<(), String> {
        let header = RoundMessage::decode_header(payload).map_err(|e| e.to_string())?;
        if header.is_receipt() || header.is_average() {
            return Err(format!(
                "partition {}: a worker sent a message only the driver sends (flags {:#04x})",
                worker.partition, header.flags
            ));
        }
        let answers = hub_averages(self.workers);
        // averaging here, every round's arrays are read; otherwise the final state needs the last
        // round's only, and earlier rounds cost no copy (a hello has none)
        let m = if header.is_hello() || (!answers && header.round + 1 < self.rounds) {
            header
        } else {
            RoundMessage::decode(payload).map_err(|e| e.to_string())?
        };
        if m.partition != worker.partition || m.partition >= self.workers {
            return Err(format!(
                "averaging message of partition {} on the connection of partition {} ({} workers)",
                m.partition, worker.partition, self.workers
            ));
        }
        if m.stage < self.stage {
            return Ok(()); // a straggler of a stage attempt Spark has given up on
        }
        if m.stage > self.stage {
            // Spark retried the whole (barrier) stage: every worker starts the fit again.
            *self = AveragingMaster::new(self.workers, self.rounds, Arc::clone(&self.start));
            self.stage = m.stage;
        }
        if m.is_hello() {
            if answers {
                self.out.push(Arc::new(payload.to_vec())); // for every worker: who is connected
            }
            return Ok(());
        }
        if answers {
            self.out.push(Arc::new(RoundMessage::receipt(payload)));
        }
        let round = m.round;
        let entry = self.pending.entry(round).or_default();
        entry.insert(m.partition, m);
        if entry.len() as u32 == self.workers {
            let msgs: Vec<RoundMessage> = self.pending.remove(&round).expect("present").into_values().collect();
            self.rounds_done += 1;
            self.iterations += u64::from(msgs.iter().filter(|m| m.contributes()).map(|m| m.iterations).max().unwrap_or(0));
            if !answers {
                if msgs.iter().any(RoundMessage::contributes) {
                    self.last = Some(LastRound::Messages(msgs));
                }
            } else if let Some(avg) = average(&msgs.iter().collect::<Vec<_>>()).map_err(|e| e.to_string())? {
                // the workers' arithmetic (partition order, f64 sums): every worker gets the same bits
                self.out.push(Arc::new(RoundMessage::encode_average(self.stage, round, &avg)));
                self.last = Some(LastRound::Average(avg));
            }
        }
        Ok(())
    }

    fn forwards_updates(&self) -> bool {
        // answering, every worker gets the receipts and the average instead
        !hub_averages(self.workers)
    }

    fn take_broadcasts(&mut self) -> Vec<Arc<Vec<u8>>> {
        std::mem::take(&mut self.out)
    }

    /// The fit's start state: every worker restores its network from it (one copy shared by
    /// every connect).
    fn snapshot(&self) -> SnapshotBytes {
        let mut s = SnapshotBytes::new();
        s.push(self.start.clone());
        s
    }
}

/// The start state of a fit as the relay hands it out: a [`RoundMessage`] with the driver's
/// parameters and, when given (`saveUpdater`), its updater state.
pub fn encode_start(params: &[f32], updater: Option<&[f32]>) -> Vec<u8> {
    RoundMessage::encode(&RoundReport::default(), Some(params), updater)
}

/// Whether a message goes on to the other workers, and what the master sends every worker.
pub(crate) type Answer = (bool, Vec<Arc<Vec<u8>>>);

/// The relay's state, shared with the driver that reads the result.
#[derive(Clone)]
pub(crate) struct SharedMaster(Arc<Mutex<AveragingMaster>>);

impl SharedMaster {
    fn lock(&self) -> MutexGuard<'_, AveragingMaster> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies a message; returns whether it goes on to the other workers and what the master
    /// sends every worker, under one lock (the in-process hub's path; the relay holds its own lock
    /// around the same calls).
    pub(crate) fn apply_and_take(&self, worker: WorkerId, payload: &[u8]) -> Result<Answer, String> {
        let mut m = self.lock();
        m.apply(worker, payload)?;
        Ok((m.forwards_updates(), m.take_broadcasts()))
    }
}

impl MasterState for SharedMaster {
    fn apply(&mut self, worker: WorkerId, payload: &[u8]) -> Result<(), String> {
        self.lock().apply(worker, payload)
    }
    fn snapshot(&self) -> SnapshotBytes {
        self.lock().snapshot()
    }
    fn forwards_updates(&self) -> bool {
        self.lock().forwards_updates()
    }
    fn take_broadcasts(&mut self) -> Vec<Arc<Vec<u8>>> {
        self.lock().take_broadcasts()
    }
}

/// A running (or stopped) relay of one averaging fit.
pub struct AveragingDriver {
    master: SharedMaster,
    relay: Option<Relay>,
    port: u16,
    sealed: bool,
    stopped: Option<(FinalState, RelayStats)>,
    /// The in-process exchange for workers in this process (settings `inProcess`), by secret.
    hub: Option<(String, Arc<Hub>)>,
}

impl AveragingDriver {
    /// Starts the relay of a fit of `workers` worker tasks and `rounds` averaging rounds, whose
    /// workers start from `params` and, when given, `updater` (the driver's network).
    pub fn start(
        settings_json: &str,
        workers: u32,
        rounds: u32,
        params: &[f32],
        updater: Option<&[f32]>,
    ) -> Result<Self, SharingError> {
        if workers == 0 || rounds == 0 {
            return Err(SharingError::Config(format!(
                "averaging needs at least one worker and one round, got {workers} and {rounds}"
            )));
        }
        let mut json: serde_json::Value = serde_json::from_str(settings_json)
            .map_err(|e| SharingError::Config(format!("relay settings: {e}")))?;
        // workers in this process (local[N]) exchange through the hub; others still need the relay
        let in_process = match json.as_object_mut().and_then(|o| o.remove("inProcess")) {
            None => false,
            Some(serde_json::Value::Bool(b)) => b,
            Some(v) => return Err(SharingError::Config(format!("relay settings: inProcess must be a boolean, got {v}"))),
        };
        let settings: RelaySettings = serde_json::from_value(json)
            .map_err(|e| SharingError::Config(format!("relay settings: {e}")))?;
        let start = Arc::new(encode_start(params, updater));
        let master = SharedMaster(Arc::new(Mutex::new(AveragingMaster::new(workers, rounds, start))));
        let relay = Relay::start(settings.to_config()?, Box::new(master.clone()))?;
        let port = relay.local_addr().port();
        let hub = in_process.then(|| (settings.secret_hex.clone(), Hub::register(&settings.secret_hex, master.clone())));
        Ok(AveragingDriver { master, relay: Some(relay), port, sealed: settings.encrypt, stopped: None, hub })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the relay (idempotent) and keeps the final state and counters.
    pub fn shutdown(&mut self) -> Result<(), SharingError> {
        if let Some((secret, hub)) = &self.hub {
            Hub::unregister(secret, hub);
        }
        if let Some(relay) = self.relay.take() {
            let (_, stats) = relay.shutdown();
            let state = self.master.lock().final_state()?;
            self.stopped = Some((state, stats));
        }
        Ok(())
    }

    /// The final state; only after [`AveragingDriver::shutdown`].
    pub fn final_state(&self) -> Result<&FinalState, SharingError> {
        self.stopped
            .as_ref()
            .map(|(f, _)| f)
            .ok_or_else(|| SharingError::Message("the averaging relay is still running".into()))
    }

    /// Writes the final average's parameters into `out` (the driver network's array): false when
    /// no round had a contributor (`out` is left alone). Only after [`AveragingDriver::shutdown`].
    pub fn final_params_into(&self, out: &mut [f32]) -> Result<bool, SharingError> {
        let avg = self.final_state()?.average.as_ref();
        copy_final(avg.map(|a| &a.params[..]), out, "parameters")
    }

    /// The same for the updater state: false when it was not averaged (no contributor, or one of
    /// the last round's contributors sent none).
    pub fn final_updater_into(&self, out: &mut [f32]) -> Result<bool, SharingError> {
        let avg = self.final_state()?.average.as_ref();
        copy_final(avg.and_then(|a| a.updater.as_deref()), out, "updater values")
    }

    pub fn stats_json(&self) -> String {
        let stats = match (&self.relay, &self.stopped) {
            (Some(r), _) => r.stats(),
            (None, Some((_, s))) => s.clone(),
            (None, None) => RelayStats::default(),
        };
        let mut v = relay_stats_json(&stats);
        v["sealed"] = serde_json::Value::Bool(self.sealed);
        if let Some((_, hub)) = &self.hub {
            use std::sync::atomic::Ordering::Relaxed;
            v["inProcess"] = serde_json::json!({
                "messages": hub.messages.load(Relaxed),
                "bytes": hub.bytes.load(Relaxed),
                "deliveries": hub.deliveries.load(Relaxed),
            });
        }
        v.to_string()
    }
}

fn copy_final(values: Option<&[f32]>, out: &mut [f32], what: &str) -> Result<bool, SharingError> {
    let Some(values) = values else {
        return Ok(false);
    };
    if values.len() != out.len() {
        return Err(SharingError::Message(format!(
            "the final average has {} {what} but the driver's network has {}",
            values.len(),
            out.len()
        )));
    }
    out.copy_from_slice(values);
    Ok(true)
}

impl Drop for AveragingDriver {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::RoundReport;

    fn send(m: &mut AveragingMaster, stage: u32, round: u32, partition: u32, p: Option<&[f32]>, its: u32) {
        let r = RoundReport { stage, round, partition, iterations: its, minibatches: its, examples: 4, score: 1.0 };
        m.apply(WorkerId { partition, attempt: 0 }, &RoundMessage::encode(&r, p, None)).unwrap();
    }

    #[test]
    fn keeps_the_last_round_with_contributors_and_sums_iterations() {
        let mut m = AveragingMaster::new(2, 2, Arc::default());
        send(&mut m, 0, 0, 1, Some(&[1.0]), 2);
        send(&mut m, 0, 1, 1, Some(&[5.0]), 3); // round 1 arrives before round 0 is complete
        send(&mut m, 0, 0, 0, Some(&[3.0]), 2);
        send(&mut m, 0, 1, 0, None, 0);
        let f = m.final_state().unwrap();
        assert_eq!((f.rounds_done, f.iterations), (2, 5));
        assert_eq!(f.average.unwrap().params, vec![5.0]);
    }

    #[test]
    fn hellos_count_for_nothing() {
        let mut m = AveragingMaster::new(2, 1, Arc::default());
        for p in 0..2 {
            let r = RoundReport { partition: p, ..RoundReport::default() };
            m.apply(WorkerId { partition: p, attempt: 0 }, &RoundMessage::encode_hello(&r)).unwrap();
        }
        let f = m.final_state().unwrap();
        assert_eq!((f.rounds_done, f.iterations), (0, 0));
        assert!(f.average.is_none());
        send(&mut m, 0, 0, 0, Some(&[1.0]), 1);
        send(&mut m, 0, 0, 1, Some(&[3.0]), 1);
        assert_eq!(m.final_state().unwrap().average.unwrap().params, vec![2.0]);
    }

    #[test]
    fn a_retried_stage_starts_over_and_stragglers_are_ignored() {
        let mut m = AveragingMaster::new(2, 1, Arc::default());
        send(&mut m, 0, 0, 0, Some(&[1.0]), 1);
        send(&mut m, 0, 0, 1, Some(&[1.0]), 1);
        send(&mut m, 1, 0, 0, Some(&[7.0]), 4);
        send(&mut m, 0, 1, 1, Some(&[9.0]), 1);
        send(&mut m, 1, 0, 1, Some(&[9.0]), 4);
        let f = m.final_state().unwrap();
        assert_eq!((f.rounds_done, f.iterations), (1, 4));
        assert_eq!(f.average.unwrap().params, vec![8.0]);
    }

    #[test]
    fn refuses_a_message_for_another_partition() {
        let mut m = AveragingMaster::new(2, 1, Arc::default());
        let r = RoundReport { partition: 1, ..RoundReport::default() };
        let e = m.apply(WorkerId { partition: 0, attempt: 0 }, &RoundMessage::encode(&r, None, None)).unwrap_err();
        assert!(e.contains("partition 1 on the connection of partition 0"), "{e}");
        assert!(m.apply(WorkerId::default(), b"xx").unwrap_err().contains("malformed"));
    }

    /// From three workers on, every worker gets each hello, a receipt of each round message and,
    /// once the round is complete, its average (the bits of `message::average`); nothing is
    /// forwarded, and a worker may not send what only the driver sends. With two, the relay
    /// forwards and the state answers nothing.
    #[test]
    fn from_three_workers_it_answers_every_worker_with_receipts_and_the_average() {
        let mut two = AveragingMaster::new(2, 1, Arc::default());
        assert!(two.forwards_updates());
        send(&mut two, 0, 0, 0, Some(&[1.0]), 1);
        send(&mut two, 0, 0, 1, Some(&[2.0]), 1);
        assert!(two.take_broadcasts().is_empty());

        let mut m = AveragingMaster::new(3, 1, Arc::default());
        assert!(!m.forwards_updates());
        let hello = RoundMessage::encode_hello(&RoundReport { partition: 1, ..RoundReport::default() });
        m.apply(WorkerId { partition: 1, attempt: 0 }, &hello).unwrap();
        assert_eq!(m.take_broadcasts(), vec![Arc::new(hello)]);
        send(&mut m, 0, 0, 0, Some(&[1.0, 4.0]), 2);
        let out = m.take_broadcasts();
        assert_eq!(out.len(), 1);
        let receipt = RoundMessage::decode(&out[0]).unwrap();
        assert!(receipt.is_receipt() && receipt.partition == 0 && receipt.n_params == 2);
        send(&mut m, 0, 0, 2, None, 0);
        send(&mut m, 0, 0, 1, Some(&[2.0, 5.0]), 3);
        let out = m.take_broadcasts();
        assert_eq!(out.len(), 3, "two receipts, then the average");
        assert!(RoundMessage::decode(&out[1]).unwrap().is_receipt());
        let avg = RoundMessage::decode(&out[2]).unwrap();
        assert!(avg.is_average());
        assert_eq!((avg.params().to_vec(), avg.partition, avg.iterations), (vec![1.5, 4.5], 2, 3));
        assert!(m.take_broadcasts().is_empty());
        assert_eq!(m.final_state().unwrap().average.unwrap().params, vec![1.5, 4.5]);
        let e = m.apply(WorkerId { partition: 0, attempt: 0 }, &out[2]).unwrap_err();
        assert!(e.contains("a worker sent a message only the driver sends"), "{e}");
    }
}
