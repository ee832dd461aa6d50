//! The driver's side of a gradient-sharing fit: the relay with the master copy as its state.

use crate::error::SharingError;
use crate::master::{lock_finals, MasterCopy, SharedFinalStates};
use crate::payload::{final_states_bytes, Snapshot, StoppedSnapshot};
use crate::worker::parse_hex;
use ferrodl_relay::{
    ClientConfig, Relay, RelayConfig, RelayStats, TreeNode, WorkerId, TREE_NODE_PARTITION_BASE,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// Relay settings as the Java side writes them.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RelaySettings {
    pub bind_host: String,
    pub port_from: Option<u16>,
    pub port_to: Option<u16>,
    pub secret_hex: String,
    pub max_message_bytes: usize,
    /// The largest final updater state a worker node may send with its FINISH (0: none).
    #[serde(default)]
    pub max_final_state_bytes: usize,
    pub queue_limit: usize,
    pub io_timeout_ms: u64,
    pub handshake_timeout_ms: u64,
    /// Seal frames (ChaCha20-Poly1305); the driver sets it from `spark.network.crypto.enabled`.
    #[serde(default)]
    pub encrypt: bool,
}

impl RelaySettings {
    /// The relay configuration these settings describe (also used by ferrodl-averaging).
    pub fn to_config(&self) -> Result<RelayConfig, SharingError> {
        let port_range = match (self.port_from, self.port_to) {
            (None, None) => None,
            (Some(a), Some(b)) if a <= b => Some((a, b)),
            (a, b) => {
                return Err(SharingError::Config(format!(
                    "relay port range must be from <= to with both set, got {a:?}..{b:?}"
                )))
            }
        };
        if self.queue_limit == 0 || self.io_timeout_ms == 0 || self.handshake_timeout_ms == 0 {
            return Err(SharingError::Config(format!(
                "relay queueLimit ({}), ioTimeoutMs ({}) and handshakeTimeoutMs ({}) must be positive",
                self.queue_limit, self.io_timeout_ms, self.handshake_timeout_ms
            )));
        }
        Ok(RelayConfig {
            bind_host: self.bind_host.clone(),
            port_range,
            secret: parse_hex(&self.secret_hex)?,
            max_message_bytes: self.max_message_bytes,
            max_final_state_bytes: self.max_final_state_bytes,
            queue_limit_messages: self.queue_limit,
            io_timeout: Duration::from_millis(self.io_timeout_ms),
            handshake_timeout: Duration::from_millis(self.handshake_timeout_ms),
            encrypt: self.encrypt,
            log: Some(Arc::new(|line: &str| eprintln!("ferrodl-relay: {line}"))),
            ..RelayConfig::default()
        })
    }
}

fn parse_settings(settings_json: &str) -> Result<RelaySettings, SharingError> {
    serde_json::from_str(settings_json).map_err(|e| SharingError::Config(format!("relay settings: {e}")))
}

/// A relay tree node under the relay at `parent_addr` (docs/SCALING.md): node `index` joins it
/// with the fit's secret and settings, keeps its own master copy started from the parent's
/// snapshot, and serves workers exactly as the driver's relay does.
pub fn start_tree_node(
    settings_json: &str,
    parent_addr: &str,
    index: u32,
) -> Result<TreeNode, SharingError> {
    let config = parse_settings(settings_json)?.to_config()?;
    let client = ClientConfig {
        secret: config.secret.clone(),
        worker: WorkerId {
            partition: TREE_NODE_PARTITION_BASE + index,
            attempt: 0,
        },
        connect_timeout: config.handshake_timeout,
        io_timeout: config.io_timeout,
        max_message_bytes: config.max_message_bytes,
        queue_limit_messages: config.queue_limit_messages,
        encrypt: config.encrypt,
    };
    Ok(TreeNode::start(config, parent_addr, client, |snapshot| {
        let s = Snapshot::from_bytes(snapshot).map_err(|e| e.to_string())?;
        Ok(Box::new(MasterCopy::new(s.params, s.updater_state, s.iteration, s.epoch)))
    })?)
}

/// A running (or stopped) relay whose state is the master copy of the parameters.
pub struct DriverRelay {
    relay: Option<Relay>,
    port: u16,
    /// Frames sealed (reported in the statistics).
    sealed: bool,
    /// Master state and counters once stopped.
    stopped: Option<(StoppedSnapshot, RelayStats)>,
    /// The workers' final updater states (summed as they finish).
    finals: SharedFinalStates,
}

impl DriverRelay {
    /// Starts the relay of a fit whose workers start from `params` and `updater_state` (empty:
    /// none) with the network's counters `iteration` and `epoch`.
    pub fn start(
        settings_json: &str,
        params: Vec<f32>,
        updater_state: Vec<f32>,
        iteration: u64,
        epoch: u64,
    ) -> Result<Self, SharingError> {
        Self::start_with(parse_settings(settings_json)?, params, updater_state, iteration, epoch)
    }

    /// [`Self::start`] for worker nodes that each send `states_per_node` final updater states
    /// (their replicas') with their FINISH: the largest FINISH the relay admits is what those
    /// take ([`final_states_bytes`]), whatever `maxFinalStateBytes` the settings give.
    pub fn start_for_nodes(
        settings_json: &str,
        params: Vec<f32>,
        updater_state: Vec<f32>,
        states_per_node: usize,
        iteration: u64,
        epoch: u64,
    ) -> Result<Self, SharingError> {
        let mut settings = parse_settings(settings_json)?;
        settings.max_final_state_bytes = final_states_bytes(states_per_node, updater_state.len());
        Self::start_with(settings, params, updater_state, iteration, epoch)
    }

    fn start_with(
        settings: RelaySettings,
        params: Vec<f32>,
        updater_state: Vec<f32>,
        iteration: u64,
        epoch: u64,
    ) -> Result<Self, SharingError> {
        let finals = SharedFinalStates::default();
        let relay = Relay::start(
            settings.to_config()?,
            Box::new(MasterCopy::new(params, updater_state, iteration, epoch).with_final_states(finals.clone())),
        )?;
        let port = relay.local_addr().port();
        Ok(DriverRelay {
            relay: Some(relay),
            port,
            sealed: settings.encrypt,
            stopped: None,
            finals,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The mean of the final updater states the workers sent with their FINISH, and how many
    /// there were (None: none was sent).
    pub fn final_updater_state(&self) -> Option<(Vec<f32>, u32)> {
        let f = lock_finals(&self.finals);
        f.mean().map(|m| (m, f.count()))
    }

    /// CPU seconds used so far by the relay's running threads ([`Relay::cpu_seconds`]).
    pub fn cpu_seconds(&self) -> f64 {
        self.relay.as_ref().map_or(0.0, Relay::cpu_seconds)
    }

    /// The master copy: current while running, final once stopped.
    pub fn snapshot(&self) -> Result<Snapshot, SharingError> {
        match (&self.relay, &self.stopped) {
            (Some(relay), _) => Snapshot::from_bytes(&relay.with_state(|s| s.snapshot()).to_vec()),
            (None, Some((snapshot, _))) => snapshot.to_snapshot(),
            (None, None) => Err(SharingError::Message("relay state is gone".into())),
        }
    }

    pub fn stats(&self) -> RelayStats {
        match (&self.relay, &self.stopped) {
            (Some(relay), _) => relay.stats(),
            (None, Some((_, stats))) => stats.clone(),
            (None, None) => RelayStats::default(),
        }
    }

    /// Writes the final master copy's parameters into `out` (the driver network's array, no
    /// vector of its own). Only once the relay has stopped; refuses another length.
    pub fn final_params_into(&self, out: &mut [f32]) -> Result<(), SharingError> {
        let (snapshot, _) = self.stopped()?;
        if out.len() != snapshot.param_count() {
            return Err(SharingError::Message(format!(
                "the master copy has {} parameters but the driver's network has {}",
                snapshot.param_count(),
                out.len()
            )));
        }
        snapshot.params_into(out);
        Ok(())
    }

    /// Writes the mean of the updater states the workers sent with their FINISH into `out`:
    /// false when none did (`out` is left alone). Only once the relay has stopped.
    pub fn final_updater_into(&self, out: &mut [f32]) -> Result<bool, SharingError> {
        self.stopped()?;
        lock_finals(&self.finals).mean_into(out).map_err(SharingError::Message)
    }

    /// `(iteration, epoch)` of the master copy, without copying its arrays once stopped.
    pub fn counters(&self) -> Result<(u64, u64), SharingError> {
        match &self.stopped {
            Some((s, _)) => Ok(s.counters()),
            None => self.snapshot().map(|s| (s.iteration, s.epoch)),
        }
    }

    fn stopped(&self) -> Result<&(StoppedSnapshot, RelayStats), SharingError> {
        self.stopped
            .as_ref()
            .ok_or_else(|| SharingError::Message("the relay is still running".into()))
    }

    /// Messages applied to the master copy so far.
    pub fn applied(&self) -> u64 {
        self.stats()
            .per_worker
            .values()
            .map(|w| w.messages_applied)
            .sum()
    }

    pub fn stats_json(&self) -> String {
        let mut v = relay_stats_json(&self.stats());
        v["sealed"] = Value::Bool(self.sealed);
        v.to_string()
    }

    /// Stops the relay and joins its threads; idempotent.
    pub fn shutdown(&mut self) -> Result<(), SharingError> {
        if let Some(relay) = self.relay.take() {
            let (state, stats) = relay.shutdown();
            let snapshot = StoppedSnapshot::new(state.snapshot())?;
            self.stopped = Some((snapshot, stats));
        }
        Ok(())
    }
}

impl Drop for DriverRelay {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// The relay's counters as JSON (camelCase; per-partition counters under `perWorker`).
pub fn relay_stats_json(s: &RelayStats) -> Value {
    let per_worker: serde_json::Map<String, Value> = s
        .per_worker
        .iter()
        .map(|(partition, w)| {
            (
                partition.to_string(),
                json!({
                    "messagesReceived": w.messages_received,
                    "bytesReceived": w.bytes_received,
                    "messagesApplied": w.messages_applied,
                    "messagesDropped": w.messages_dropped,
                    "messagesRelayedOut": w.messages_relayed_out,
                    "bytesRelayedOut": w.bytes_relayed_out,
                    "messagesDroppedOutbound": w.messages_dropped_outbound,
                    "attemptsSeen": w.attempts_seen,
                    "lastAttempt": w.last_attempt,
                    "finished": w.finished,
                }),
            )
        })
        .collect();
    let sum = |f: fn(&ferrodl_relay::WorkerCounters) -> u64| -> u64 {
        s.per_worker.values().map(f).sum()
    };
    json!({
        "connectionsAccepted": s.connections_accepted,
        "connectionsRejected": s.connections_rejected,
        "connectionsAborted": s.connections_aborted,
        "connectionsSuperseded": s.connections_superseded,
        "reconnects": s.reconnects,
        "protocolErrors": s.protocol_errors,
        "messagesReceived": sum(|w| w.messages_received),
        "bytesReceived": sum(|w| w.bytes_received),
        "messagesApplied": sum(|w| w.messages_applied),
        "messagesDropped": sum(|w| w.messages_dropped + w.messages_dropped_outbound),
        "messagesRelayedOut": sum(|w| w.messages_relayed_out),
        "bytesRelayedOut": sum(|w| w.bytes_relayed_out),
        "perWorker": per_worker,
        "stalls": s.stalls.iter().map(|r| json!({
            "partition": r.partition,
            "attempt": r.attempt,
            "peer": r.peer,
            "report": r.report,
        })).collect::<Vec<_>>(),
    })
}
