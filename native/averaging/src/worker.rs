//! A worker task's side: one relay connection for the whole fit; after each round it sends its
//! message and waits for the round to complete. With two workers it receives the other's message
//! and averages the two itself; from three on ([`hub_averages`]) it receives the driver's receipts
//! of every worker's message and the round's average, computed once by the driver's relay.

use crate::local::{Deliver, Hub};
use crate::message::{hub_averages, mean_into, LeF32s, RoundMessage, RoundReport};
use ferrodl_relay::{ClientConfig, RelayClient, SpareBuffers, WorkerId};
use ferrodl_sharing::worker::parse_hex;
use ferrodl_sharing::SharingError;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
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
    /// round -> partition -> its message: the others' in full and this worker's header (two
    /// workers), or the driver's receipts, headers only (three or more).
    rounds: BTreeMap<u32, BTreeMap<u32, RoundMessage>>,
    /// round -> the driver's average of it.
    averages: BTreeMap<u32, RoundMessage>,
    /// The partitions whose hello arrived (their connection is up).
    hellos: BTreeSet<u32>,
    error: Option<String>,
}

struct Shared {
    inbox: Mutex<Inbox>,
    arrived: Condvar,
    /// Buffers of messages already averaged: the reader receives the next ones into them (over
    /// the relay), or this worker encodes its next message into them (in process).
    spare: SpareBuffers,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inbox> {
        self.inbox.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a worker knows of its last completed round: every worker's message (its own and, from three
/// workers on, all as headers only) and the driver's average (three or more, when somebody fitted).
struct Done {
    /// partition -> message, ascending (the order of the f64 sum).
    messages: BTreeMap<u32, RoundMessage>,
    summary: Option<Summary>,
    average: Option<RoundMessage>,
}

/// The counters of a round's average (its arrays are written by [`AveragingWorker::average_params_into`]
/// and [`AveragingWorker::average_updater_into`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub contributors: u32,
    /// The most iterations one worker made this round (the iteration counter grows by it).
    pub max_iterations: u32,
    /// Mean of the contributors' last minibatch scores.
    pub score: f64,
    /// Every contributor sent updater state of the same length: it is averaged too.
    pub with_updater: bool,
}

/// One worker's connection of an averaging fit.
/// How a worker's messages travel: the driver's relay, or its in-process hub (same process).
enum Link {
    Relay(RelayClient),
    Local { hub: Arc<Hub>, me: WorkerId, sent: u64, bytes_sent: u64, received: Arc<[std::sync::atomic::AtomicU64; 2]> },
}

impl Link {
    fn send(&mut self, bytes: Vec<u8>) -> Result<(), SharingError> {
        match self {
            Link::Relay(c) => Ok(c.send(bytes)?),
            Link::Local { hub, me, sent, bytes_sent, .. } => {
                *sent += 1;
                *bytes_sent += bytes.len() as u64;
                hub.send(*me, bytes)
            }
        }
    }

    fn failure(&self) -> Option<SharingError> {
        match self {
            Link::Relay(c) => c.failure().map(SharingError::Relay),
            Link::Local { .. } => None,
        }
    }

    /// [messages sent, bytes sent (wire bytes over the relay), messages received, bytes received]
    fn finish(self) -> Result<[u64; 4], SharingError> {
        match self {
            Link::Relay(c) => {
                let s = c.finish()?;
                Ok([s.messages_sent, s.wire_bytes_sent, s.messages_received, s.bytes_received])
            }
            Link::Local { hub, me, sent, bytes_sent, received } => {
                hub.leave(me);
                use std::sync::atomic::Ordering::Relaxed;
                Ok([sent, bytes_sent, received[0].load(Relaxed), received[1].load(Relaxed)])
            }
        }
    }
}

pub struct AveragingWorker {
    client: Option<Link>,
    /// The fit's start state as received at connect, until [`AveragingWorker::take_start`].
    start: Option<Vec<u8>>,
    shared: Arc<Shared>,
    config: AveragingWorkerConfig,
    done: Option<Done>,
    hello_sent: bool,
    /// Peers' hellos heard when this worker last said hello.
    hellos_answered: usize,
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
        let shared = Arc::new(Shared { inbox: Mutex::new(Inbox::default()), arrived: Condvar::new(), spare: SpareBuffers::default() });
        let reader = Arc::clone(&shared);
        let stage = config.stage;
        // decoded here, on the connection's reader thread, beside the task's own work
        let file = move |decoded: Result<RoundMessage, SharingError>| {
            let mut inbox = reader.lock();
            match decoded {
                Ok(m) if m.stage == stage && m.is_hello() => {
                    inbox.hellos.insert(m.partition);
                }
                Ok(m) if m.stage == stage && m.is_average() => {
                    inbox.averages.insert(m.round, m);
                }
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
        };
        // a message with arrays keeps the buffer it arrived in (no copy): over the relay the reader's,
        // which gets a spare one for the next (`refill`); in process the sender's
        let file = Arc::new(file);
        let receiver = |refill: bool| -> Deliver {
            let (file, reader) = (Arc::clone(&file), Arc::clone(&shared));
            Arc::new(move |buf: &mut Vec<u8>| {
                let keep = RoundMessage::decode_header(buf).is_ok_and(|m| m.carries_arrays());
                file(if keep {
                    let spare = if refill { reader.spare.take() } else { Vec::new() };
                    RoundMessage::decode_owned(std::mem::replace(buf, spare))
                } else {
                    RoundMessage::decode(buf)
                });
            })
        };
        let client_config = ClientConfig {
            secret: parse_hex(&config.secret_hex)?,
            worker: WorkerId { partition: config.partition, attempt: config.attempt },
            connect_timeout: Duration::from_millis(config.connect_timeout_ms),
            io_timeout: Duration::from_millis(config.io_timeout_ms),
            max_message_bytes: config.max_message_bytes,
            queue_limit_messages: config.queue_limit,
            encrypt: config.encrypt,
        };
        let me = WorkerId { partition: config.partition, attempt: config.attempt };
        let link = match Hub::find(&config.secret_hex) {
            Some(hub) => {
                // the driver's process: its hub, no sockets (counts what this worker receives)
                let received: Arc<[std::sync::atomic::AtomicU64; 2]> = Arc::new(Default::default());
                let counts = Arc::clone(&received);
                let deliver = receiver(false);
                hub.join(me, Arc::new(move |payload: &mut Vec<u8>| {
                    use std::sync::atomic::Ordering::Relaxed;
                    counts[0].fetch_add(1, Relaxed);
                    counts[1].fetch_add(payload.len() as u64, Relaxed);
                    deliver(payload)
                }))?;
                (Link::Local { hub: Arc::clone(&hub), me, sent: 0, bytes_sent: 0, received }, hub.start_state())
            }
            None => {
                let deliver = receiver(true);
                let (client, snapshot) = RelayClient::connect_taking(
                    &config.relay_address,
                    client_config,
                    Box::new(move |buf: &mut Vec<u8>| deliver(buf)),
                )?;
                (Link::Relay(client), snapshot)
            }
        };
        let (link, start) = link;
        Ok(AveragingWorker {
            client: Some(link),
            start: Some(start),
            shared,
            config,
            done: None,
            hello_sent: false,
            hellos_answered: 0,
        })
    }

    /// The fit's start state the driver handed this worker at connect: the network's parameters
    /// and, when the driver sent it, its updater state (`updater` empty otherwise). Once per worker.
    pub fn take_start(&mut self) -> Result<RoundMessage, SharingError> {
        let bytes = self
            .start
            .take()
            .ok_or_else(|| SharingError::Message("the fit's start state was already taken".into()))?;
        let m = RoundMessage::decode(&bytes)
            .map_err(|e| SharingError::Message(format!("the driver's start state: {e}")))?;
        if !m.contributes() {
            return Err(SharingError::Message(format!(
                "the driver's start state ({} bytes) carries no parameters",
                bytes.len()
            )));
        }
        Ok(m)
    }

    /// Waits up to `timeout` until every other worker's connection is up: `Ok(true)` then, and this
    /// worker's round messages will reach all of them (the relay forwards a message only to the
    /// connections it has when the message arrives, and replays nothing); `Ok(false)`: not yet
    /// (the caller checks for cancellation and calls again). Each worker says hello when it
    /// connects and again whenever it hears a new peer's hello, so the first to connect also hears
    /// of the last, which in turn hears the first's second hello. This replaces Spark's
    /// `BarrierTaskContext.barrier()`, which polls its result once a second (up to 1 s per fit).
    pub fn await_peers(&mut self, timeout: Duration) -> Result<bool, SharingError> {
        let deadline = Instant::now() + timeout;
        let hello = RoundMessage::encode_hello(&RoundReport {
            stage: self.config.stage,
            partition: self.config.partition,
            ..RoundReport::default()
        });
        let others = self.config.workers as usize - 1;
        loop {
            let heard = {
                let mut inbox = self.shared.lock();
                if let Some(e) = inbox.error.take() {
                    return Err(SharingError::Message(e));
                }
                inbox.hellos.remove(&self.config.partition);
                inbox.hellos.len()
            };
            if heard > self.hellos_answered || !self.hello_sent {
                // a new peer is up (or this is the first hello): (re)say hello so that it hears of us
                self.client_mut().send(hello.clone())?;
                self.hello_sent = true;
                self.hellos_answered = heard;
            }
            if heard >= others {
                return Ok(true);
            }
            if let Some(e) = self.client.as_ref().and_then(Link::failure) {
                return Err(e);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            let inbox = self.shared.lock();
            if inbox.hellos.len() == heard {
                let slice = (deadline - now).min(Duration::from_millis(50));
                drop(self.shared.arrived.wait_timeout(inbox, slice).unwrap_or_else(|e| e.into_inner()));
            }
        }
    }

    /// Sends this worker's message of `round` (`params == None`: nothing fitted this round),
    /// encoded straight from the caller's arrays (the engine's own: no copy is kept). With two
    /// workers the caller must leave those arrays as they were sent until the round is averaged:
    /// the average reads this worker's share from them.
    #[allow(clippy::too_many_arguments)]
    pub fn send_round(
        &mut self,
        round: u32,
        iterations: u32,
        minibatches: u32,
        examples: u64,
        score: f64,
        params: Option<&[f32]>,
        updater: Option<&[f32]>,
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
        // a buffer of a written message (relay), or of a received one this worker has averaged
        // (in process: the sender's buffer travels to the receiver)
        let spare = match self.client_mut() {
            Link::Relay(c) => c.spare_buffer(),
            Link::Local { .. } => self.shared.spare.take(),
        };
        let bytes = RoundMessage::encode_into(spare, &report, params, updater);
        if !hub_averages(self.config.workers) {
            // this worker's own message: its header (the arrays stay with the caller); from three
            // workers on the driver's receipt says it
            let own = RoundMessage::decode_header(&bytes)?;
            self.shared.lock().rounds.entry(round).or_default().insert(own.partition, own);
        }
        // sent with one worker too: the driver computes the final state from the messages
        self.client_mut().send(bytes)?;
        Ok(())
    }

    /// Waits up to `timeout` for the receipts of every worker's message of `round` and, when
    /// somebody fitted, the round's average. `Ok(true)`: the round is complete and
    /// [`AveragingWorker::summary`] describes its average (None when nobody fitted); `Ok(false)`:
    /// not yet (the caller checks for cancellation and calls again).
    pub fn await_round(&mut self, round: u32, timeout: Duration) -> Result<bool, SharingError> {
        let deadline = Instant::now() + timeout;
        let mut inbox = self.shared.lock();
        loop {
            if let Some(e) = inbox.error.take() {
                return Err(SharingError::Message(e));
            }
            if let Some(messages) = inbox.rounds.get(&round).filter(|h| h.len() as u32 >= self.config.workers) {
                let summary = summarize(messages)?;
                if !hub_averages(self.config.workers) || summary.is_none() || inbox.averages.contains_key(&round) {
                    let messages = inbox.rounds.remove(&round).expect("present");
                    let average = inbox.averages.remove(&round);
                    if let Some(old) = self.done.replace(Done { messages, summary, average }) {
                        // the previous round's buffers receive the next rounds' messages
                        for m in old.messages.into_values().chain(old.average) {
                            self.shared.spare.give(m.into_wire());
                        }
                    }
                    return Ok(true);
                }
            }
            if let Some(e) = self.client.as_ref().and_then(Link::failure) {
                return Err(e);
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

    /// The counters of the last completed round's average (None: no worker fitted in it).
    pub fn summary(&self) -> Option<Summary> {
        self.done.as_ref().and_then(|d| d.summary)
    }

    /// Writes the last completed round's average of the parameters into `params`, which holds
    /// this worker's parameters as sent (with two workers its share is read from it before it is
    /// overwritten). `Ok(false)`: nobody fitted in that round (`params` is left alone).
    pub fn average_params_into(&self, params: &mut [f32]) -> Result<bool, SharingError> {
        self.average_into(params, false)
    }

    /// The same for the updater state, averaged in place in `state` (this worker's state as sent).
    /// `Ok(false)`: no average of the updater state this round (`state` is left alone).
    pub fn average_updater_into(&self, state: &mut [f32]) -> Result<bool, SharingError> {
        self.average_into(state, true)
    }

    /// `out` holds this worker's array as sent: its share is read from there (a `None` source of
    /// [`mean_into`]) before the average overwrites it.
    fn average_into(&self, out: &mut [f32], updater: bool) -> Result<bool, SharingError> {
        let Some(done) = &self.done else {
            return Err(SharingError::Message("no averaging round is complete yet".into()));
        };
        let Some(summary) = done.summary else {
            return Ok(false);
        };
        if updater && !summary.with_updater {
            return Ok(false);
        }
        let what = if updater { "updater values" } else { "parameters" };
        if let Some(avg) = &done.average {
            // computed by the driver's relay
            let values = if updater { avg.updater() } else { avg.params() };
            if values.len() != out.len() {
                return Err(SharingError::Message(format!(
                    "round {}: the driver's average has {} {what} but this worker has {}",
                    avg.round,
                    values.len(),
                    out.len()
                )));
            }
            values.copy_to(out);
            return Ok(true);
        }
        let me = self.config.partition;
        let mut sources: Vec<Option<LeF32s<'_>>> = Vec::with_capacity(done.messages.len());
        for m in done.messages.values().filter(|m| m.contributes()) {
            let (n, arrays) = if updater { (m.n_updater, m.updater()) } else { (m.n_params, m.params()) };
            if n != out.len() {
                return Err(SharingError::Message(format!(
                    "round {}: partition {} sent {n} {what} but this worker has {}",
                    m.round,
                    m.partition,
                    out.len()
                )));
            }
            if m.partition != me && arrays.len() != n {
                return Err(SharingError::Message(format!(
                    "round {}: the message of partition {} has only its header",
                    m.round, m.partition
                )));
            }
            sources.push(if m.partition == me { None } else { Some(arrays) });
        }
        mean_into(out, &sources);
        Ok(true)
    }

    /// Partitions whose message of `round` has not arrived (for an error message).
    pub fn missing(&self, round: u32) -> Vec<u32> {
        let inbox = self.shared.lock();
        let have = inbox.rounds.get(&round);
        (0..self.config.workers).filter(|p| !have.is_some_and(|h| h.contains_key(p))).collect()
    }

    /// Waits until the relay applied every message of this worker, then closes; returns
    /// `[messages sent, wire bytes sent, messages received, bytes received]`.
    pub fn finish(&mut self) -> Result<[u64; 4], SharingError> {
        let client = self
            .client
            .take()
            .ok_or_else(|| SharingError::Message("the averaging connection is already closed".into()))?;
        client.finish()
    }

    fn client_mut(&mut self) -> &mut Link {
        self.client.as_mut().expect("connected until finish")
    }
}

/// The counters of a complete round (None: nobody fitted), checking that the contributors agree on
/// their lengths (as [`crate::message::average`] does on the driver).
impl Drop for AveragingWorker {
    fn drop(&mut self) {
        // a worker dropped without finish (its task failed) leaves the hub as a closed socket leaves the relay
        if let Some(Link::Local { hub, me, .. }) = &self.client {
            hub.leave(*me);
        }
    }
}

fn summarize(messages: &BTreeMap<u32, RoundMessage>) -> Result<Option<Summary>, SharingError> {
    let contributors: Vec<&RoundMessage> = messages.values().filter(|m| m.contributes()).collect();
    let Some(first) = contributors.first() else {
        return Ok(None);
    };
    if let Some(m) = contributors.iter().find(|m| m.n_params != first.n_params) {
        return Err(SharingError::Message(format!(
            "workers sent parameters of different lengths in round {}: partition {} has {}, partition {} has {}",
            first.round, first.partition, first.n_params, m.partition, m.n_params
        )));
    }
    let count = contributors.len();
    Ok(Some(Summary {
        contributors: count as u32,
        max_iterations: contributors.iter().map(|m| m.iterations).max().unwrap_or(0),
        score: contributors.iter().map(|m| m.score).sum::<f64>() / count as f64,
        with_updater: contributors.iter().all(|m| m.n_updater > 0 && m.n_updater == first.n_updater),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::master::AveragingDriver;
    use std::thread;

    const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    fn driver(workers: u32) -> AveragingDriver {
        driver_with(workers, SECRET, false)
    }

    fn driver_with(workers: u32, secret: &str, in_process: bool) -> AveragingDriver {
        let settings = format!(
            r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{secret}","maxMessageBytes":1048576,"queueLimit":8,"ioTimeoutMs":10000,"handshakeTimeoutMs":5000,"encrypt":true,"inProcess":{in_process}}}"#
        );
        AveragingDriver::start(&settings, workers, 4, &start_params(), Some(&start_updater())).unwrap()
    }

    /// The driver's network at the start of the test fits.
    fn start_params() -> Vec<f32> {
        (0..1000).map(|i| i as f32 * 0.25 - 7.0).collect()
    }

    fn start_updater() -> Vec<f32> {
        (0..2000).map(|i| (i % 13) as f32 * 1e-3).collect()
    }

    fn worker_json(port: u16, partition: u32, workers: u32) -> String {
        worker_json_with(port, partition, workers, SECRET)
    }

    fn worker_json_with(port: u16, partition: u32, workers: u32, secret: &str) -> String {
        format!(
            r#"{{"relayAddress":"127.0.0.1:{port}","secretHex":"{secret}","partition":{partition},"attempt":0,"stage":0,"workers":{workers},"connectTimeoutMs":5000,"ioTimeoutMs":10000,"queueLimit":8,"maxMessageBytes":1048576,"encrypt":true}}"#
        )
    }

    /// Three workers, four rounds (worker 2 idle in round 1): every worker and the driver end
    /// with the same bits, equal to the partition-ordered mean computed here. The relay sends each
    /// worker one average per round (plus 46-byte receipts and hellos), not the others' messages.
    #[test]
    fn workers_and_driver_hold_the_same_average_after_every_round() {
        let stats = same_average_everywhere(SECRET, false, 3);
        assert!(!stats.contains("inProcess"), "{stats}");
        let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
        let (into, out) = (v["bytesReceived"].as_u64().unwrap(), v["bytesRelayedOut"].as_u64().unwrap());
        // in: 11 messages with arrays (worker 2 idle in round 1), 8,046 bytes each, and hellos; out:
        // 4 averages to each of 3 workers, 12 receipts and the hellos to each (46 bytes each: a
        // worker says hello up to 3 times) — where forwarding sent the 11 messages to 2 workers each
        let full = 46 + 4 * (1000 + 1000);
        let (n_in, n_out) = (v["messagesReceived"].as_u64().unwrap(), v["messagesRelayedOut"].as_u64().unwrap());
        assert_eq!(into, 11 * full + (n_in - 11) * 46, "{stats}");
        assert_eq!(out, 12 * full + (n_out - 12) * 46, "{stats}");
        assert!(n_out - 12 <= 3 * (12 + 9) && out < 11 * 2 * full * 6 / 10, "{stats}");
    }

    /// Two workers average each round themselves: the relay forwards each message to the other
    /// (the same bytes out as one average each would be) and answers nothing; the same bits.
    #[test]
    fn two_workers_average_themselves_from_the_forwarded_messages() {
        for in_process in [false, true] {
            let stats = same_average_everywhere(&(if in_process { "b2" } else { "c3" }).repeat(32), in_process, 2);
            let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
            let full = 46 + 4 * (1000 + 1000);
            if in_process {
                // each message delivered to the other worker only (an early hello to nobody)
                let (d, m) = (v["inProcess"]["deliveries"].as_u64().unwrap(), v["inProcess"]["messages"].as_u64().unwrap());
                assert!(d <= m && d + 3 >= m, "{stats}");
            } else {
                // each of the 8 messages with arrays went to the other worker once, and so did each
                // hello but those sent before the other had connected
                let (into, out) = (v["bytesReceived"].as_u64().unwrap(), v["bytesRelayedOut"].as_u64().unwrap());
                assert!(out >= 8 * full && out < 9 * full && into - out <= 3 * 46, "{stats}");
            }
        }
    }

    /// The same through the driver's in-process hub (workers in the driver's process): the same
    /// bits, and nothing through the relay.
    #[test]
    fn the_in_process_hub_gives_the_same_average() {
        let stats = same_average_everywhere("a1".repeat(32).as_str(), true, 3);
        let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
        // 3 hellos at least and 4 rounds x 3 workers in; out to all 3 workers: each hello, each
        // message's receipt and 4 averages
        assert!(v["inProcess"]["messages"].as_u64().unwrap() >= 15, "{stats}");
        assert!(v["inProcess"]["deliveries"].as_u64().unwrap() >= 3 * (3 + 12 + 4), "{stats}");
        assert_eq!(v["messagesRelayedOut"].as_u64().unwrap(), 0, "{stats}");
    }

    /// Two workers with messages of 240 KB (their buffers are reused: over the relay the readers
    /// receive into the buffers of averaged rounds and the senders encode into those of sent ones;
    /// in process a message's buffer travels to the receiver, which encodes its next message into
    /// it), sealed and not, one round without worker 1's updater state: every round's average is
    /// the f64 mean of what the two sent, the same bits on both.
    #[test]
    fn big_rounds_in_reused_buffers_average_exactly() {
        const N: usize = 20_000;
        const ROUNDS: u32 = 6;
        for (encrypt, in_process) in [(false, false), (true, false), (false, true)] {
            // a hub is found by its secret: this test's own
            let secret = if in_process { "d4".repeat(32) } else { SECRET.to_string() };
            let settings = format!(
                r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{secret}","maxMessageBytes":1048576,"queueLimit":8,"ioTimeoutMs":10000,"handshakeTimeoutMs":5000,"encrypt":{encrypt},"inProcess":{in_process}}}"#
            );
            let mut d = AveragingDriver::start(&settings, 2, ROUNDS, &vec![0.0; N], Some(&vec![0.0; 2 * N])).unwrap();
            let port = d.port();
            let handles: Vec<_> = (0..2u32)
                .map(|p| {
                    let secret = secret.clone();
                    thread::spawn(move || {
                        let json = worker_json_with(port, p, 2, &secret)
                            .replace("\"encrypt\":true", &format!("\"encrypt\":{encrypt}"));
                        let mut w = AveragingWorker::connect(&json).unwrap();
                        w.take_start().unwrap();
                        while !w.await_peers(Duration::from_millis(20)).unwrap() {}
                        let mut params: Vec<f32> = (0..N).map(|i| (i as f32).sin() * (p + 1) as f32).collect();
                        let mut upd: Vec<f32> = (0..2 * N).map(|i| (i % 97) as f32 * 1e-3 + p as f32).collect();
                        let mut sent_and_got = Vec::new();
                        for round in 0..ROUNDS {
                            for (i, v) in params.iter_mut().enumerate() {
                                *v += 1e-3 * ((i * 7 + round as usize) % 13) as f32 * (p as f32 - 0.5);
                            }
                            let no_updater = p == 1 && round == 3;
                            let sent = (params.clone(), upd.clone());
                            w.send_round(round, 1, 1, 4, 0.0, Some(&params), (!no_updater).then_some(&upd[..])).unwrap();
                            while !w.await_round(round, Duration::from_millis(100)).unwrap() {}
                            assert!(w.average_params_into(&mut params).unwrap());
                            assert_eq!(w.average_updater_into(&mut upd).unwrap(), round != 3);
                            sent_and_got.push((sent, (params.clone(), upd.clone())));
                        }
                        w.finish().unwrap();
                        sent_and_got
                    })
                })
                .collect();
            let r: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let mean = |a: &[f32], b: &[f32]| -> Vec<u32> {
                a.iter().zip(b).map(|(x, y)| (((f64::from(*x) + f64::from(*y)) / 2.0) as f32).to_bits()).collect()
            };
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            for (round, (((p0, u0), got0), ((p1, u1), got1))) in r[0].iter().zip(&r[1]).enumerate() {
                assert_eq!(bits(&got0.0), mean(p0, p1), "round {round}: parameters");
                assert_eq!(bits(&got1.0), bits(&got0.0), "round {round}: both workers");
                if round == 3 {
                    // not averaged: each keeps its own
                    assert_eq!((bits(&got0.1), bits(&got1.1)), (bits(u0), bits(u1)));
                } else {
                    assert_eq!(bits(&got0.1), mean(u0, u1), "round {round}: updater state");
                    assert_eq!(bits(&got1.1), bits(&got0.1));
                }
            }
            d.shutdown().unwrap();
            let stats: serde_json::Value = serde_json::from_str(&d.stats_json()).unwrap();
            if in_process {
                // every round message went through the hub to the other worker, none through sockets
                assert!(stats["inProcess"]["deliveries"].as_u64().unwrap() >= 2 * u64::from(ROUNDS), "{stats}");
                assert_eq!(stats["messagesRelayedOut"].as_u64().unwrap(), 0, "{stats}");
            } else {
                assert!(stats.get("inProcess").is_none_or(|v| v.is_null()), "{stats}");
            }
            let f = d.final_state().unwrap();
            assert_eq!(bits(&f.average.as_ref().unwrap().params), bits(&r[0][ROUNDS as usize - 1].1 .0));
        }
    }

    /// Runs the exchange with 2 or 3 workers (the third is idle in round 1); returns the driver's
    /// stats JSON.
    fn same_average_everywhere(secret: &str, in_process: bool, workers: u32) -> String {
        let mut d = driver_with(workers, secret, in_process);
        let port = d.port();
        let secret = secret.to_string();
        // Every worker waits for the others' hellos before it sends (the relay does not replay earlier
        // messages to a late connection); they connect out of order and far apart, and worker 0
        // sends its round 0 at once, so a worker that missed a message would hang here.
        let handles: Vec<_> = (0..workers)
            .map(|p| {
                let secret = secret.clone();
                thread::spawn(move || {
                    thread::sleep(Duration::from_millis([0, 150, 60][p as usize]));
                    let mut w = AveragingWorker::connect(&worker_json_with(port, p, workers, &secret)).unwrap();
                    // every worker starts from the driver's arrays, handed over at connect
                    let start = w.take_start().unwrap();
                    assert_eq!((start.params().to_vec(), start.updater().to_vec()), (start_params(), start_updater()));
                    assert!(w.take_start().unwrap_err().to_string().contains("already taken"));
                    while !w.await_peers(Duration::from_millis(20)).unwrap() {}
                    let mut params = vec![p as f32 + 0.5; 1000];
                    let mut seen = Vec::new();
                    for round in 0..4u32 {
                        let idle = p == 2 && round == 1;
                        for (i, v) in params.iter_mut().enumerate() {
                            *v += 0.001 * (i as f32) * (p + 1) as f32;
                        }
                        let mut upd: Vec<f32> = params.iter().map(|v| v * 0.5).collect();
                        w.send_round(round, 2, 2, 8, f64::from(p), (!idle).then_some(&params[..]), Some(&upd))
                            .unwrap();
                        while !w.await_round(round, Duration::from_millis(100)).unwrap() {}
                        let summary = w.summary().unwrap();
                        assert_eq!(summary.contributors, if round == 1 { 2 } else { workers });
                        assert!(summary.with_updater);
                        // an idle worker adopts the average as well: it starts from its own (stale) arrays
                        assert!(w.average_params_into(&mut params).unwrap());
                        assert!(w.average_updater_into(&mut upd).unwrap());
                        seen.push((summary, params.clone(), upd));
                    }
                    w.finish().unwrap();
                    seen
                })
            })
            .collect();
        type Seen = (Summary, Vec<f32>, Vec<f32>);
        let results: Vec<Vec<Seen>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(results.iter().all(|r| *r == results[0]));
        // round 0 by hand: the mean of the workers' first arrays
        let expect: Vec<f32> = (0..1000)
            .map(|i| {
                let s: f64 = (0..workers).map(|p| f64::from(p as f32 + 0.5 + 0.001 * (i as f32) * (p + 1) as f32)).sum();
                (s / f64::from(workers)) as f32
            })
            .collect();
        assert_eq!(results[0][0].1, expect);
        d.shutdown().unwrap();
        let f = d.final_state().unwrap();
        assert_eq!((f.rounds_done, f.iterations), (4, 8));
        // the driver's average of the last round (message::average on decoded copies) has the same bits
        let last = f.average.as_ref().unwrap();
        assert_eq!(last.params, results[0][3].1);
        assert_eq!(last.updater.as_ref().unwrap(), &results[0][3].2);
        assert_eq!((last.contributors, last.max_iterations, last.score), (workers, 2, results[0][3].0.score));
        // written into the driver network's arrays: the same bits; a network of another size is refused
        let (mut params, mut updater) = (vec![0f32; 1000], vec![0f32; 1000]);
        assert!(d.final_params_into(&mut params).unwrap() && d.final_updater_into(&mut updater).unwrap());
        assert_eq!((params, updater), (results[0][3].1.clone(), results[0][3].2.clone()));
        let e = d.final_updater_into(&mut [0f32; 3]).unwrap_err().to_string();
        assert!(e.contains("1000 updater values") && e.contains("network has 3"), "{e}");
        let stats = d.stats_json();
        assert!(stats.contains("\"sealed\":true"));
        stats
    }

    #[test]
    fn a_worker_waiting_for_a_silent_peer_times_out_and_names_it() {
        let mut d = driver(2);
        let mut w = AveragingWorker::connect(&worker_json(d.port(), 0, 2)).unwrap();
        // its peer never connects: no hello
        assert!(!w.await_peers(Duration::from_millis(100)).unwrap());
        w.send_round(0, 1, 1, 4, 0.0, Some(&[1.0]), None).unwrap();
        assert!(!w.await_round(0, Duration::from_millis(100)).unwrap());
        assert_eq!(w.missing(0), vec![1]);
        drop(w);
        let mut params = vec![9f32; 1000];
        assert!(d.final_params_into(&mut params).unwrap_err().to_string().contains("still running"));
        d.shutdown().unwrap();
        // no round completed: the driver's network keeps its arrays
        assert!(!d.final_params_into(&mut params).unwrap() && !d.final_updater_into(&mut params).unwrap());
        assert_eq!(params, vec![9f32; 1000]);
    }

    #[test]
    fn bad_settings_are_refused() {
        let e = AveragingWorker::connect(&worker_json(1, 2, 2)).err().unwrap().to_string();
        assert!(e.contains("partition 2 of an averaging fit with 2 workers"), "{e}");
        assert!(AveragingWorker::connect("{}").is_err());
        let e = AveragingDriver::start(r#"{"inProcess":1}"#, 2, 1, &[1.0], None).err().unwrap().to_string();
        assert!(e.contains("inProcess must be a boolean"), "{e}");
    }
}
