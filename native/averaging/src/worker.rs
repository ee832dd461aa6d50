//! A worker task's side: one relay connection for the whole fit; after each round it sends its
//! message, waits for every other worker's message of that round and takes the average.

use crate::message::{average, Average, RoundMessage, RoundReport};
use ferrodl_relay::{ClientConfig, RelayClient, WorkerId};
use ferrodl_sharing::worker::parse_hex;
use ferrodl_sharing::SharingError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Written by the Java side (camelCase JSON).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AveragingWorkerConfig {
    pub relay_address: String,
    pub secret_hex: String,
    /// This worker (the Spark partition of the fit's one job).
    pub partition: u32,
    /// Spark's task attempt, unique within the fit (a newer one supersedes an older connection).
    pub attempt: u32,
    /// Spark's stage attempt: messages of other stage attempts are ignored.
    pub stage: u32,
    pub workers: u32,
    pub connect_timeout_ms: u64,
    pub io_timeout_ms: u64,
    pub queue_limit: usize,
    pub max_message_bytes: usize,
    #[serde(default)]
    pub encrypt: bool,
}

#[derive(Default)]
struct Inbox {
    /// round -> partition -> message (this worker's own included).
    rounds: BTreeMap<u32, BTreeMap<u32, RoundMessage>>,
    error: Option<String>,
}

struct Shared {
    inbox: Mutex<Inbox>,
    arrived: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inbox> {
        self.inbox.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One worker's connection of an averaging fit.
pub struct AveragingWorker {
    client: Option<RelayClient>,
    shared: Arc<Shared>,
    config: AveragingWorkerConfig,
    last: Option<Average>,
}

impl AveragingWorker {
    pub fn connect(config_json: &str) -> Result<Self, SharingError> {
        let config: AveragingWorkerConfig = serde_json::from_str(config_json)
            .map_err(|e| SharingError::Config(format!("averaging worker settings: {e}")))?;
        if config.partition >= config.workers {
            return Err(SharingError::Config(format!(
                "partition {} of an averaging fit with {} workers",
                config.partition, config.workers
            )));
        }
        let shared = Arc::new(Shared { inbox: Mutex::new(Inbox::default()), arrived: Condvar::new() });
        let reader = Arc::clone(&shared);
        let stage = config.stage;
        let on_message = Box::new(move |payload: &[u8]| {
            let mut inbox = reader.lock();
            match RoundMessage::decode(payload) {
                Ok(m) if m.stage == stage => {
                    inbox.rounds.entry(m.round).or_default().insert(m.partition, m);
                }
                Ok(_) => {} // another stage attempt's straggler
                Err(e) => {
                    inbox.error.get_or_insert(e.to_string());
                }
            }
            drop(inbox);
            reader.arrived.notify_all();
        });
        let client_config = ClientConfig {
            secret: parse_hex(&config.secret_hex)?,
            worker: WorkerId { partition: config.partition, attempt: config.attempt },
            connect_timeout: Duration::from_millis(config.connect_timeout_ms),
            io_timeout: Duration::from_millis(config.io_timeout_ms),
            max_message_bytes: config.max_message_bytes,
            queue_limit_messages: config.queue_limit,
            encrypt: config.encrypt,
        };
        let (client, _snapshot) = RelayClient::connect(&config.relay_address, client_config, on_message)?;
        Ok(AveragingWorker { client: Some(client), shared, config, last: None })
    }

    /// Sends this worker's message of `round` (`params == None`: nothing fitted this round).
    #[allow(clippy::too_many_arguments)]
    pub fn send_round(
        &mut self,
        round: u32,
        iterations: u32,
        minibatches: u32,
        examples: u64,
        score: f64,
        params: Option<Vec<f32>>,
        updater: Option<Vec<f32>>,
    ) -> Result<(), SharingError> {
        let report = RoundReport {
            stage: self.config.stage,
            round,
            partition: self.config.partition,
            iterations,
            minibatches,
            examples,
            score,
        };
        let bytes = RoundMessage::encode(&report, params.as_deref(), updater.as_deref());
        // this worker's own message, built from its arrays rather than decoded from the bytes
        let mut own = RoundMessage::decode_header(&bytes)?;
        if own.n_params > 0 {
            own.params = params.unwrap_or_default();
            if own.n_updater > 0 {
                own.updater = updater.unwrap_or_default();
            }
        }
        self.shared.lock().rounds.entry(round).or_default().insert(own.partition, own);
        // sent with one worker too: the driver computes the final state from the messages
        self.client().send(bytes)?;
        Ok(())
    }

    /// Waits up to `timeout` for every worker's message of `round`. `Ok(true)`: the round is
    /// complete and [`AveragingWorker::average`] holds its average (None when nobody fitted);
    /// `Ok(false)`: not yet (the caller checks for cancellation and calls again).
    pub fn await_round(&mut self, round: u32, timeout: Duration) -> Result<bool, SharingError> {
        let deadline = Instant::now() + timeout;
        let mut inbox = self.shared.lock();
        loop {
            if let Some(e) = inbox.error.take() {
                return Err(SharingError::Message(e));
            }
            let have = inbox.rounds.get(&round).map_or(0, BTreeMap::len);
            if have as u32 >= self.config.workers {
                let msgs = inbox.rounds.remove(&round).expect("present");
                drop(inbox);
                let refs: Vec<&RoundMessage> = msgs.values().collect();
                self.last = average(&refs)?;
                return Ok(true);
            }
            if let Some(e) = self.client.as_ref().and_then(RelayClient::failure) {
                return Err(SharingError::Relay(e));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            // woken by every arriving message; a short slice also notices a failed connection
            let slice = (deadline - now).min(Duration::from_millis(50));
            inbox = self.shared.arrived.wait_timeout(inbox, slice).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Partitions whose message of `round` has not arrived (for an error message).
    pub fn missing(&self, round: u32) -> Vec<u32> {
        let inbox = self.shared.lock();
        let have = inbox.rounds.get(&round);
        (0..self.config.workers).filter(|p| !have.is_some_and(|h| h.contains_key(p))).collect()
    }

    /// The average of the last completed round (None: no worker fitted in it).
    pub fn average(&self) -> Option<&Average> {
        self.last.as_ref()
    }

    /// Waits until the relay applied every message of this worker, then closes; returns
    /// `[messages sent, wire bytes sent, messages received, bytes received]`.
    pub fn finish(&mut self) -> Result<[u64; 4], SharingError> {
        let client = self
            .client
            .take()
            .ok_or_else(|| SharingError::Message("the averaging connection is already closed".into()))?;
        let s = client.finish()?;
        Ok([s.messages_sent, s.wire_bytes_sent, s.messages_received, s.bytes_received])
    }

    fn client(&self) -> &RelayClient {
        self.client.as_ref().expect("connected until finish")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::master::AveragingDriver;
    use std::thread;

    const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    fn driver(workers: u32) -> AveragingDriver {
        let settings = format!(
            r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{SECRET}","maxMessageBytes":1048576,"queueLimit":8,"ioTimeoutMs":10000,"handshakeTimeoutMs":5000,"encrypt":true}}"#
        );
        AveragingDriver::start(&settings, workers, 4).unwrap()
    }

    fn worker_json(port: u16, partition: u32, workers: u32) -> String {
        format!(
            r#"{{"relayAddress":"127.0.0.1:{port}","secretHex":"{SECRET}","partition":{partition},"attempt":0,"stage":0,"workers":{workers},"connectTimeoutMs":5000,"ioTimeoutMs":10000,"queueLimit":8,"maxMessageBytes":1048576,"encrypt":true}}"#
        )
    }

    /// Three workers, four rounds (worker 2 idle in round 1): every worker and the driver end
    /// with the same bits, equal to the partition-ordered mean computed here.
    #[test]
    fn workers_and_driver_hold_the_same_average_after_every_round() {
        let workers = 3;
        let mut d = driver(workers);
        let port = d.port();
        // As the Spark barrier job does: every worker is connected before any sends (the relay does
        // not replay earlier messages to a late connection; without this the test hung ~1 in 10 runs).
        let connected = std::sync::Arc::new(std::sync::Barrier::new(workers as usize));
        let handles: Vec<_> = (0..workers)
            .map(|p| {
                let connected = std::sync::Arc::clone(&connected);
                thread::spawn(move || {
                    let mut w = AveragingWorker::connect(&worker_json(port, p, workers)).unwrap();
                    connected.wait();
                    let mut params = vec![p as f32 + 0.5; 1000];
                    let mut seen = Vec::new();
                    for round in 0..4u32 {
                        let idle = p == 2 && round == 1;
                        for (i, v) in params.iter_mut().enumerate() {
                            *v += 0.001 * (i as f32) * (p + 1) as f32;
                        }
                        let upd: Vec<f32> = params.iter().map(|v| v * 0.5).collect();
                        w.send_round(round, 2, 2, 8, f64::from(p), (!idle).then(|| params.clone()), Some(upd))
                            .unwrap();
                        while !w.await_round(round, Duration::from_millis(100)).unwrap() {}
                        let avg = w.average().unwrap().clone();
                        assert_eq!(avg.contributors, if round == 1 { 2 } else { 3 });
                        params = avg.params.clone();
                        seen.push(avg);
                    }
                    w.finish().unwrap();
                    seen
                })
            })
            .collect();
        let results: Vec<Vec<Average>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(results[0], results[1]);
        assert_eq!(results[1], results[2]);
        // round 0 by hand: the mean of the three workers' first arrays
        let expect: Vec<f32> = (0..1000)
            .map(|i| {
                let s: f64 = (0..3).map(|p| f64::from(p as f32 + 0.5 + 0.001 * (i as f32) * (p + 1) as f32)).sum();
                (s / 3.0) as f32
            })
            .collect();
        assert_eq!(results[0][0].params, expect);
        d.shutdown().unwrap();
        let f = d.final_state().unwrap();
        assert_eq!((f.rounds_done, f.iterations), (4, 8));
        assert_eq!(f.average.as_ref().unwrap(), &results[0][3]);
        assert!(d.stats_json().contains("\"sealed\":true"));
    }

    #[test]
    fn a_worker_waiting_for_a_silent_peer_times_out_and_names_it() {
        let mut d = driver(2);
        let mut w = AveragingWorker::connect(&worker_json(d.port(), 0, 2)).unwrap();
        w.send_round(0, 1, 1, 4, 0.0, Some(vec![1.0]), None).unwrap();
        assert!(!w.await_round(0, Duration::from_millis(100)).unwrap());
        assert_eq!(w.missing(0), vec![1]);
        drop(w);
        d.shutdown().unwrap();
    }

    #[test]
    fn bad_settings_are_refused() {
        let e = AveragingWorker::connect(&worker_json(1, 2, 2)).err().unwrap().to_string();
        assert!(e.contains("partition 2 of an averaging fit with 2 workers"), "{e}");
        assert!(AveragingWorker::connect("{}").is_err());
    }
}
