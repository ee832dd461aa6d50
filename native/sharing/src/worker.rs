//! A worker node of gradient sharing: one relay connection shared by `replicas` network copies.
//!
//! Each replica trains on its own minibatches. After each step its update (the optimizer's output)
//! goes through the replica's threshold encoder; only the encoded part is applied, to this replica
//! at once, to the node's other replicas through their inboxes, and to every other node through
//! the relay. What was not sent stays in the replica's residual. Messages from other nodes arrive on
//! the relay client's reader thread and are decoded into every replica's inbox; a replica drains
//! its inbox before each step. Thread safety: a `ReplicaTrainer` is used by one thread at a time;
//! `WorkerNode` and the inboxes are shared by all of them and by the reader thread.

use crate::error::SharingError;
use crate::payload::{write_update, Snapshot, SnapshotView};
use ferrodl_comm::ThresholdEncoder;
use crate::replica_network::{ReplicaBatch, ReplicaNetwork};
use ferrodl_nn::computation_graph::MaskArg;
use ferrodl_relay::{ClientConfig, ClientStats, RelayClient, WorkerId};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What the driver tells each worker (JSON written by the Java side).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerConfig {
    /// The network configuration JSON (docs/ARCHITECTURE.md §2).
    pub network: String,
    /// Whether `network` is a `ComputationGraphConfiguration` (else a `MultiLayerConfiguration`).
    #[serde(default)]
    pub graph: bool,
    /// `host:port` of the driver's relay.
    pub relay_address: String,
    /// The per-fit secret, hex.
    pub secret_hex: String,
    pub partition: u32,
    pub attempt: u32,
    /// Network replicas trained by this node (workersPerNode).
    pub replicas: usize,
    pub threshold_algorithm: serde_json::Value,
    pub residual_post_processor: serde_json::Value,
    /// Threshold state carried over from the previous fit of this network (averaged over workers).
    #[serde(default)]
    pub threshold_state: Option<serde_json::Value>,
    pub connect_timeout_ms: u64,
    pub io_timeout_ms: u64,
    pub queue_limit: usize,
    pub max_message_bytes: usize,
    /// Record threshold, sparsity and bytes of every step for the training statistics.
    #[serde(default)]
    pub collect_stats: bool,
    /// Sleep this long after every step (the reference's debugLongerIterations).
    #[serde(default)]
    pub debug_longer_iterations_ms: u64,
    /// Seal relay frames (the driver sets it from `spark.network.crypto.enabled`).
    #[serde(default)]
    pub encrypt: bool,
}

/// Decodes a hex string (the secret).
pub fn parse_hex(hex: &str) -> Result<Vec<u8>, SharingError> {
    if hex.len() & 1 != 0 {
        return Err(SharingError::Config(
            "secretHex has an odd number of digits".into(),
        ));
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&hex[i..i + 2], 16)
                .map_err(|_| SharingError::Config(format!("secretHex is not hex at position {i}")))
        })
        .collect()
}

/// Updates received but not yet applied to one replica. Kept encoded, in arrival order, and
/// applied entry by entry (a step costs what was sent, not a pass over every parameter); once the
/// queued bytes pass `dense_after` they are decoded into a dense sum instead (a worker that fell
/// far behind, or bitmap messages), which bounds the queue.
struct Inbox {
    /// Queued messages, back to back; `ends[i]` is where message `i` ends.
    queued: Vec<u8>,
    ends: Vec<usize>,
    /// Decoded sum of the messages folded in (zeros when `summed` is false).
    sum: Vec<f32>,
    summed: bool,
    pending: u64,
    dense_after: usize,
}

impl Inbox {
    /// `sum`: zeros, one per parameter.
    fn new(sum: Vec<f32>) -> Inbox {
        Inbox {
            queued: Vec::new(),
            ends: Vec::new(),
            // A queue of about one byte per parameter decodes in roughly the time of a dense pass.
            dense_after: sum.len().max(4096),
            sum,
            summed: false,
            pending: 0,
        }
    }

    fn push(&mut self, encoded: &[u8], param_count: usize) -> Result<(), ferrodl_comm::CodecError> {
        if self.queued.len() + encoded.len() > self.dense_after {
            self.fold()?;
            ferrodl_comm::decode_add(encoded, 1.0, &mut self.sum)?;
            self.summed = true;
        } else {
            // The header is checked here; the payload was validated by the relay before it
            // forwarded the message (MasterCopy::apply), or comes from this node's own encoder.
            let header = ferrodl_comm::read_header(encoded)?;
            if header.param_count != param_count as u64 {
                return Err(ferrodl_comm::CodecError::ParamCountMismatch {
                    message: header.param_count,
                    target: param_count,
                });
            }
            self.queued.extend_from_slice(encoded);
            self.ends.push(self.queued.len());
        }
        self.pending += 1;
        Ok(())
    }

    /// Decodes the queued messages into the dense sum.
    fn fold(&mut self) -> Result<(), ferrodl_comm::CodecError> {
        let mut start = 0;
        for &end in &self.ends {
            ferrodl_comm::decode_add(&self.queued[start..end], 1.0, &mut self.sum)?;
            start = end;
        }
        self.queued.clear();
        self.ends.clear();
        self.summed |= start > 0;
        Ok(())
    }
}

/// State shared by a node's replicas and its relay reader thread.
struct NodeShared {
    inboxes: Vec<Mutex<Inbox>>,
    param_count: usize,
    /// The connection; taken out by `finish` (later sends fail with a clear error).
    client: Mutex<Option<RelayClient>>,
    /// The first malformed relayed message, reported by the next training step.
    relayed_error: Mutex<Option<String>>,
    received: AtomicU64,
    /// Time the reader thread spent decoding relayed messages into the inboxes (nanoseconds).
    decode_nanos: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Everything behind these locks stays consistent if a holder panics (plain additions, an
    // Option that is only taken), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl NodeShared {
    /// Adds a decoded message to every inbox except `skip`'s.
    fn deliver(&self, encoded: &[u8], skip: Option<usize>) -> Result<(), ferrodl_comm::CodecError> {
        for (i, inbox) in self.inboxes.iter().enumerate() {
            if Some(i) == skip {
                continue;
            }
            lock(inbox).push(encoded, self.param_count)?;
        }
        Ok(())
    }

    fn on_relayed(&self, payload: &[u8]) {
        let started = Instant::now();
        self.received.fetch_add(1, Ordering::Relaxed);
        let result = crate::payload::read_update(payload)
            .and_then(|(_, _, encoded)| self.deliver(encoded, None).map_err(SharingError::from));
        if let Err(e) = result {
            lock(&self.relayed_error).get_or_insert_with(|| format!("relayed update: {e}"));
        }
        self.decode_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// The node: the relay connection and the state its replicas share.
pub struct WorkerNode {
    shared: Arc<NodeShared>,
    partition: u32,
    attempt: u32,
    started_from: Snapshot,
}

/// One step as recorded for the training statistics.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    pub iteration: u64,
    pub threshold: f32,
    pub sparsity: f64,
    pub bytes: usize,
}

/// Where a replica's training steps spent their time, summed over its steps (nanoseconds). The
/// phases follow each other on the replica's thread, in this order.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StepTimes {
    /// Subtracting what other replicas and nodes sent since the last step (the inbox).
    pub apply_received_nanos: u64,
    /// Forward, backward and the updater (`compute_update`).
    pub compute_nanos: u64,
    /// Threshold encoding of residual + update (and the residual post-processing).
    pub encode_nanos: u64,
    /// Applying the encoded update to this replica and queueing it for the node's other replicas.
    pub apply_own_nanos: u64,
    /// Framing the payload and handing it to the connection's writer (blocks while its queue is
    /// full: back-pressure from the relay).
    pub send_nanos: u64,
}

/// What one replica reports at the end of its partition.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaReport {
    pub replica: usize,
    pub minibatches: u64,
    pub examples: u64,
    /// Score of the last minibatch (null when none was fitted).
    pub last_score: Option<f64>,
    pub iteration: u64,
    pub epoch: u64,
    pub threshold_state: serde_json::Value,
    pub messages_sent: u64,
    pub bytes_sent: u64,
    pub entries_sent: u64,
    pub messages_applied_from_others: u64,
    pub fit_millis: u64,
    /// Per-phase time of the steps (sums; divide by `minibatches`).
    pub step_times: StepTimes,
    pub steps: Vec<StepRecord>,
}

/// What the node reports when it finishes.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeReport {
    pub partition: u32,
    pub attempt: u32,
    /// Counters the node started from (downloaded from the driver).
    pub start_iteration: u64,
    pub start_epoch: u64,
    pub messages_sent: u64,
    /// Payload bytes of the updates sent (counters and encoded message).
    pub bytes_sent: u64,
    /// Everything the node's relay connection wrote to its socket: handshake, frame headers,
    /// update payloads, heartbeats and FINISH, but not the final updater states.
    pub wire_bytes_sent: u64,
    /// The FINISH frame with the replicas' final updater states (sent once per fit; before,
    /// they were Spark task results).
    pub final_state_bytes: u64,
    pub messages_received: u64,
    pub bytes_received: u64,
    /// Time the connection's reader thread spent decoding relayed updates into the replicas'
    /// inboxes (milliseconds; concurrent with training, so it costs a core, not step latency).
    pub decode_received_millis: f64,
    /// Native bytes of this process (the executor JVM) in use when the node finished, and the
    /// most it held at once since it started (`ferrodl_memory`; 0 without the counting allocator).
    pub native_bytes_in_use: u64,
    pub native_bytes_peak: u64,
}

/// A replica: its network, encoder and reusable buffers. Used by one thread at a time.
pub struct ReplicaTrainer {
    index: usize,
    shared: Arc<NodeShared>,
    net: ReplicaNetwork,
    encoder: ThresholdEncoder,
    encoded: Vec<u8>,
    /// The inbox's queue buffers while this replica applies them (swapped, so neither side
    /// allocates per step).
    spare_queued: Vec<u8>,
    spare_ends: Vec<usize>,
    report: ReplicaReport,
    collect_stats: bool,
    sleep: Duration,
}

impl WorkerNode {
    /// Builds `config.replicas` replicas of the configured network, connects to the relay and
    /// takes parameters, counters and the fit's start updater state from the driver's snapshot: a
    /// task that Spark re-runs resumes where the fit is, not where it started.
    pub fn connect(config: &WorkerConfig) -> Result<(WorkerNode, Vec<ReplicaTrainer>), SharingError> {
        if config.replicas == 0 || config.replicas > 1024 {
            return Err(SharingError::Config(format!(
                "replicas (workersPerNode) must be in 1..=1024, got {}",
                config.replicas
            )));
        }
        let mut nets = Vec::with_capacity(config.replicas);
        for _ in 0..config.replicas {
            nets.push(ReplicaNetwork::from_json(&config.network, config.graph)?);
        }
        let n = nets[0].num_params();
        // One dense sum of relayed updates per replica (used when its queue overflows), sized by
        // the network: budgeted.
        let inboxes = (0..config.replicas)
            .map(|r| {
                Ok(Mutex::new(Inbox::new(ferrodl_memory::try_filled(n, 0.0, || {
                    format!("the relayed-update sum of replica {r} ({n} parameters)")
                })?)))
            })
            .collect::<Result<Vec<_>, ferrodl_memory::MemoryError>>()?;
        let shared = Arc::new(NodeShared {
            inboxes,
            param_count: n,
            client: Mutex::new(None),
            relayed_error: Mutex::new(None),
            received: AtomicU64::new(0),
            decode_nanos: AtomicU64::new(0),
        });
        let client_config = ClientConfig {
            secret: parse_hex(&config.secret_hex)?,
            worker: WorkerId {
                partition: config.partition,
                attempt: config.attempt,
            },
            connect_timeout: Duration::from_millis(config.connect_timeout_ms),
            io_timeout: Duration::from_millis(config.io_timeout_ms),
            max_message_bytes: config.max_message_bytes,
            queue_limit_messages: config.queue_limit,
            encrypt: config.encrypt,
        };
        let reader_shared = Arc::clone(&shared);
        let (client, snapshot) = RelayClient::connect(
            &config.relay_address,
            client_config,
            Box::new(move |payload: &[u8]| reader_shared.on_relayed(payload)),
        )?;
        *lock(&shared.client) = Some(client);
        // read where the bytes lie: no parsed copy of the arrays beside them
        let snapshot_bytes = snapshot;
        let snapshot = SnapshotView::parse(&snapshot_bytes)?;
        if snapshot.param_count() != n {
            return Err(SharingError::Message(format!(
                "the driver's snapshot has {} parameters but the network has {n}",
                snapshot.param_count()
            )));
        }
        let updater_len = nets[0].updater_state().len();
        if snapshot.updater_state_len() != 0 && snapshot.updater_state_len() != updater_len {
            return Err(SharingError::Message(format!(
                "the driver's snapshot has {} updater-state values but the network's updater has {updater_len}",
                snapshot.updater_state_len()
            )));
        }
        let (params, updater_state) = (snapshot.params()?, snapshot.updater_state()?);
        let carried = match &config.threshold_state {
            Some(v) if !v.is_null() => Some(v),
            _ => None,
        };
        // Each replica's encoder keeps a residual of one value per parameter, and a copy of it
        // for an update that could overflow (ferrodl-comm allocates them): the whole request is
        // checked against the native memory budget first.
        ferrodl_memory::check(
            || format!("the encoders' residuals ({} replicas x 2 x {n} parameters)", config.replicas),
            n.checked_mul(config.replicas)
                .and_then(|v| v.checked_mul(2))
                .and_then(|v| ferrodl_memory::bytes_of(v, std::mem::size_of::<f32>())),
        )?;
        let mut replicas = Vec::with_capacity(config.replicas);
        let (start_iteration, start_epoch) = (nets[0].iteration_count(), nets[0].epoch_count());
        let (start_iteration, start_epoch) = if config.attempt > 0 {
            (snapshot.iteration, snapshot.epoch)
        } else {
            (start_iteration, start_epoch)
        };
        for (index, mut net) in nets.into_iter().enumerate() {
            net.set_params(&params)?;
            if !updater_state.is_empty() {
                net.set_updater_state(&updater_state)?;
            }
            // A re-run attempt resumes the driver's counters; a first attempt that merely starts
            // late keeps the fit's starting counters, so the iteration counter grows by the
            // minibatches of each worker, not by those of the workers that started earlier.
            if config.attempt > 0 {
                net.set_counters(snapshot.iteration, snapshot.epoch);
            }
            let encoder = ThresholdEncoder::from_json(
                n,
                &config.threshold_algorithm,
                &config.residual_post_processor,
                carried,
            )?;
            replicas.push(ReplicaTrainer {
                index,
                shared: Arc::clone(&shared),
                net,
                encoder,
                encoded: Vec::new(),
                spare_queued: Vec::new(),
                spare_ends: Vec::new(),
                report: ReplicaReport {
                    replica: index,
                    minibatches: 0,
                    examples: 0,
                    last_score: None,
                    iteration: start_iteration,
                    epoch: start_epoch,
                    threshold_state: serde_json::Value::Null,
                    messages_sent: 0,
                    bytes_sent: 0,
                    entries_sent: 0,
                    messages_applied_from_others: 0,
                    fit_millis: 0,
                    step_times: StepTimes::default(),
                    steps: Vec::new(),
                },
                collect_stats: config.collect_stats,
                sleep: Duration::from_millis(config.debug_longer_iterations_ms),
            });
        }
        let node = WorkerNode {
            shared,
            partition: config.partition,
            attempt: config.attempt,
            started_from: Snapshot {
                params: Vec::new(),
                updater_state: Vec::new(),
                iteration: start_iteration,
                epoch: start_epoch,
            },
        };
        Ok((node, replicas))
    }

    /// Tells the driver that this worker made no progress (the stall watchdog of the Java task),
    /// in the task's words; the driver fails the fit with it.
    pub fn report_stall(&self, report: &str) -> Result<(), SharingError> {
        match lock(&self.shared.client).as_ref() {
            Some(client) => Ok(client.report_stall(report)?),
            None => Err(SharingError::Message(
                "this worker node has already finished".into(),
            )),
        }
    }

    /// Flushes everything sent and waits until the driver has applied all of it, then closes the
    /// connection. Replicas can no longer send afterwards.
    pub fn finish(&mut self) -> Result<NodeReport, SharingError> {
        self.finish_with_updater_states(&[])
    }

    /// [`WorkerNode::finish`], handing the driver each replica's updater state with the FINISH
    /// (it averages them into the network; [`crate::payload::write_final_states`]).
    pub fn finish_with_updater_states(&mut self, states: &[&[f32]]) -> Result<NodeReport, SharingError> {
        let state = crate::payload::write_final_states(states)?;
        let client = lock(&self.shared.client)
            .take()
            .ok_or_else(|| SharingError::Message("this worker node has already finished".into()))?;
        let stats: ClientStats = client.finish_with(state)?;
        if let Some(e) = lock(&self.shared.relayed_error).clone() {
            return Err(SharingError::Message(e));
        }
        Ok(NodeReport {
            partition: self.partition,
            attempt: self.attempt,
            start_iteration: self.started_from.iteration,
            start_epoch: self.started_from.epoch,
            messages_sent: stats.messages_sent,
            bytes_sent: stats.bytes_sent,
            wire_bytes_sent: stats.wire_bytes_sent,
            final_state_bytes: stats.final_state_bytes,
            messages_received: stats.messages_received,
            bytes_received: stats.bytes_received,
            decode_received_millis: self.shared.decode_nanos.load(Ordering::Relaxed) as f64 / 1e6,
            native_bytes_in_use: ferrodl_memory::in_use(),
            native_bytes_peak: ferrodl_memory::peak(),
        })
    }
}

impl Drop for WorkerNode {
    fn drop(&mut self) {
        // Closing without finish (an error path): drop the client, which closes the socket and
        // joins its threads, and break the Arc cycle through the reader callback.
        let client = lock(&self.shared.client).take();
        drop(client);
    }
}

impl ReplicaTrainer {
    pub fn network(&self) -> &ReplicaNetwork {
        &self.net
    }

    /// One training step of a layer-chain replica on one minibatch; returns its score (before
    /// the update).
    pub fn fit(
        &mut self,
        features: &[f32],
        labels: &[f32],
        rows: usize,
        labels_mask: Option<(&[f32], usize)>,
    ) -> Result<f64, SharingError> {
        self.fit_masked(features, labels, rows, None, labels_mask)
    }

    /// [`fit`](Self::fit) with a features mask too (`[rows, T]` for sequences: padded steps count
    /// nowhere).
    pub fn fit_masked(
        &mut self,
        features: &[f32],
        labels: &[f32],
        rows: usize,
        features_mask: Option<(&[f32], usize)>,
        labels_mask: Option<(&[f32], usize)>,
    ) -> Result<f64, SharingError> {
        self.step(&ReplicaBatch::Chain {
            features,
            labels,
            rows,
            features_mask,
            labels_mask,
        })
    }

    /// One training step of a graph replica: one array per network input and output, masks per
    /// input/output (empty slices: none). Returns the score before the update.
    pub fn fit_graph(
        &mut self,
        inputs: &[&[f32]],
        labels: &[&[f32]],
        rows: usize,
        feature_masks: &[MaskArg<'_, f32>],
        label_masks: &[MaskArg<'_, f32>],
    ) -> Result<f64, SharingError> {
        self.step(&ReplicaBatch::Graph {
            inputs,
            labels,
            rows,
            feature_masks,
            label_masks,
        })
    }

    fn step(&mut self, batch: &ReplicaBatch<'_>) -> Result<f64, SharingError> {
        let started = Instant::now();
        if let Some(e) = lock(&self.shared.relayed_error).clone() {
            return Err(SharingError::Message(e));
        }
        self.apply_inbox()?;
        let t_inbox = Instant::now();
        let rows = batch.rows();
        let score = self.net.compute_update(batch)?;
        let t_compute = Instant::now();
        let (iteration, epoch) = (self.net.iteration_count(), self.net.epoch_count());
        let stats =
            self.encoder
                .encode_update(self.net.update(), iteration, epoch, &mut self.encoded)?;
        let t_encode = Instant::now();
        // Only the encoded part is applied here, exactly as every other replica applies it:
        // from the entries the encoder noted (a Rice message), else decoded.
        if !self.encoder.subtract_last_sent(self.net.params_mut())? {
            ferrodl_comm::decode_add(&self.encoded, -1.0, self.net.params_mut())?;
        }
        self.shared.deliver(&self.encoded, Some(self.index))?;
        let t_own = Instant::now();
        let mut payload = Vec::new();
        write_update(iteration, epoch, &self.encoded, &mut payload);
        let bytes = payload.len();
        {
            let client = lock(&self.shared.client);
            let client = client.as_ref().ok_or_else(|| {
                SharingError::Message("the worker node has finished; no more training steps".into())
            })?;
            client.send(payload)?;
        }
        let t_sent = Instant::now();
        let r = &mut self.report;
        let nanos = |a: Instant, b: Instant| b.duration_since(a).as_nanos() as u64;
        let times = &mut r.step_times;
        times.apply_received_nanos += nanos(started, t_inbox);
        times.compute_nanos += nanos(t_inbox, t_compute);
        times.encode_nanos += nanos(t_compute, t_encode);
        times.apply_own_nanos += nanos(t_encode, t_own);
        times.send_nanos += nanos(t_own, t_sent);
        r.minibatches += 1;
        r.examples += rows as u64;
        r.last_score = Some(score);
        r.iteration = iteration;
        r.epoch = epoch;
        r.messages_sent += 1;
        r.bytes_sent += bytes as u64;
        r.entries_sent += stats.entries;
        if self.collect_stats {
            r.steps.push(StepRecord {
                iteration,
                threshold: stats.threshold,
                sparsity: stats.sparsity,
                bytes,
            });
        }
        if !self.sleep.is_zero() {
            std::thread::sleep(self.sleep);
        }
        r.fit_millis += started.elapsed().as_millis() as u64;
        Ok(score)
    }

    /// Subtracts everything other replicas and nodes sent since the last step: the queued
    /// messages one by one (entries only), a dense sum when the queue overflowed into one.
    fn apply_inbox(&mut self) -> Result<(), SharingError> {
        let pending = {
            let mut inbox = lock(&self.shared.inboxes[self.index]);
            if inbox.pending == 0 {
                return Ok(());
            }
            // Take the queue (leaving the spare buffers behind), so the reader thread is not held
            // while this replica decodes.
            std::mem::swap(&mut inbox.queued, &mut self.spare_queued);
            std::mem::swap(&mut inbox.ends, &mut self.spare_ends);
            if inbox.summed {
                let params = self.net.params_mut();
                for (p, s) in params.iter_mut().zip(inbox.sum.iter_mut()) {
                    *p -= *s;
                    *s = 0.0;
                }
                inbox.summed = false;
            }
            std::mem::take(&mut inbox.pending)
        };
        let params = self.net.params_mut();
        let mut start = 0;
        let mut result = Ok(());
        for &end in &self.spare_ends {
            if let Err(e) = ferrodl_comm::decode_add(&self.spare_queued[start..end], -1.0, params) {
                result = Err(SharingError::from(e));
                break;
            }
            start = end;
        }
        self.spare_queued.clear();
        self.spare_ends.clear();
        self.report.messages_applied_from_others += pending;
        result
    }

    /// The replica's report; also applies what is still in its inbox, so the parameters are
    /// the most recent ones.
    pub fn report(&mut self) -> ReplicaReport {
        // A message that fails to decode here was refused by the relay already (it validates every
        // update before forwarding it); the error is kept for the next step, as a relayed one is.
        if let Err(e) = self.apply_inbox() {
            lock(&self.shared.relayed_error).get_or_insert_with(|| format!("relayed update: {e}"));
        }
        let mut r = self.report.clone();
        r.threshold_state =
            serde_json::to_value(self.encoder.threshold_state()).unwrap_or(serde_json::Value::Null);
        r
    }

    /// What this replica has not sent yet (dropped when the task ends; see docs/UPDATE_FORMAT.md).
    pub fn residual(&self) -> &[f32] {
        self.encoder.residual()
    }

    /// Continues from a residual left by an earlier encoder of the same network (measurements of
    /// carrying residuals between fits; the Spark path does not carry them).
    pub fn set_residual(&mut self, residual: &[f32]) -> Result<(), SharingError> {
        Ok(self.encoder.set_residual(residual)?)
    }

    /// Threshold, sparsity and residual statistics for encodingDebugMode, as JSON.
    pub fn debug_stats_json(&self) -> String {
        serde_json::to_string(&self.encoder.debug_stats()).unwrap_or_else(|e| format!("\"{e}\""))
    }
}
