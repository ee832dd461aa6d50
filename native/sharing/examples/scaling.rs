//! How one gradient-sharing relay (the driver's hub) scales with the number of workers: N workers
//! on 127.0.0.1, each a thread with its own relay connection, the real codec, relay and master
//! copy (docs/SCALING.md).
//!
//! ```text
//! cargo run --release -p ferrodl-sharing --example scaling -- [--mode train|comm] \
//!     [--workers 2,4,8,16,32] [--seconds 10] [--params 443610] [--sparsity 2.5e-3] [--batch 16]
//! ```
//!
//! - `train`: every worker is a `WorkerNode` with one replica training the MNIST MLP
//!   (784-500-100-10, Adam 1e-3) on random minibatches of `--batch`, one engine thread each: the
//!   whole worker step (compute, encode, send, apply what others sent) as in a Spark task.
//! - `comm`: no engine; every worker sends real encoded updates of `--params` parameters at
//!   `--sparsity` (Rice-coded by `ferrodl_comm`, a fresh random one per message from a pool) as
//!   fast as the relay takes them, and decodes everything relayed to it into its own parameter
//!   vector, as a worker's inbox does. This is the hub's capacity: messages in/out per second.
//!
//! One line per worker count: `SCALING {json}` with the relay's messages and bytes per second in
//! and out, each worker's iterations (messages sent) per second (mean, min), and the wall time.

use ferrodl_relay::{ClientConfig, RelayClient, WorkerId};
use ferrodl_sharing::{DriverRelay, WorkerConfig, WorkerNode};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn mlp_json() -> String {
    let updater = r#"{"type":"Adam","learningRate":0.001,"beta1":0.9,"beta2":0.999,"epsilon":1e-8}"#;
    let layer = |kind: &str, n_in: usize, n_out: usize, act: &str, extra: &str| {
        format!(
            r#"{{"type":"{kind}","nIn":{n_in},"nOut":{n_out},"activation":"{act}","weightInit":"RELU",
               "updater":{updater},"biasUpdater":{updater}{extra}}}"#
        )
    };
    format!(
        r#"{{"formatVersion":1,"seed":12345,"layers":[{},{},{}]}}"#,
        layer("DenseLayer", 784, 500, "RELU", ""),
        layer("DenseLayer", 500, 100, "RELU", ""),
        layer("OutputLayer", 100, 10, "SOFTMAX", r#","lossFunction":"MCXENT""#)
    )
}

fn settings() -> String {
    format!(
        r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{SECRET}",
            "maxMessageBytes":268435456,"queueLimit":64,"ioTimeoutMs":120000,"handshakeTimeoutMs":30000,
            "encrypt":false}}"#
    )
}

/// Rice-coded updates of `n` parameters with about `sparsity · n` entries each, framed as a
/// worker sends them (counters + encoded update).
fn update_pool(n: usize, sparsity: f64, count: usize, seed: u64) -> Vec<Vec<u8>> {
    let t = 1e-3f32;
    let mut rng = Rng(seed);
    (0..count)
        .map(|i| {
            let mut residual: Vec<f32> = (0..n)
                .map(|_| {
                    let sign = if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
                    let m = if (rng.unit() as f64) < sparsity { t * 1.5 } else { t * 0.5 * rng.unit() };
                    sign * m
                })
                .collect();
            let mut encoded = Vec::new();
            ferrodl_comm::encode(&mut residual, t, &mut encoded).expect("encode");
            let mut payload = Vec::with_capacity(16 + encoded.len());
            payload.extend_from_slice(&(i as u64).to_le_bytes());
            payload.extend_from_slice(&0u64.to_le_bytes());
            payload.extend_from_slice(&encoded);
            payload
        })
        .collect()
}

/// What a point measured over its window (from the moment the last worker connected to stop).
struct Point {
    iterations: Vec<u64>,
    wall: f64,
    stats: ferrodl_relay::RelayStats,
}

/// Waits until all workers connected, lets them run `seconds`, then snapshots their counters and
/// the relay's, and tells them to stop. Returns (per-worker iterations, window, relay stats in the
/// window).
fn window(
    relay: &DriverRelay,
    connected: &AtomicU64,
    counters: &[AtomicU64],
    stop: &AtomicBool,
    seconds: f64,
) -> Point {
    while connected.load(Ordering::SeqCst) < counters.len() as u64 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let before: Vec<u64> = counters.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    let s0 = relay.stats();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let after: Vec<u64> = counters.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    let s1 = relay.stats();
    let wall = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    let mut stats = s1.clone();
    for (p, w) in stats.per_worker.iter_mut() {
        if let Some(b) = s0.per_worker.get(p) {
            w.messages_received -= b.messages_received;
            w.bytes_received -= b.bytes_received;
            w.messages_relayed_out -= b.messages_relayed_out;
            w.bytes_relayed_out -= b.bytes_relayed_out;
        }
    }
    stats.outbound_waits -= s0.outbound_waits;
    Point { iterations: after.iter().zip(&before).map(|(a, b)| a - b).collect(), wall, stats }
}

fn run_train(workers: usize, seconds: f64, batch: usize, params: &[f32], relay: &DriverRelay) -> Point {
    let port = relay.port();
    let stop = AtomicBool::new(false);
    let connected = AtomicU64::new(0);
    let counters: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    let net = mlp_json();
    std::thread::scope(|s| {
        for w in 0..workers {
            let (stop, net, connected, counter) = (&stop, &net, &connected, &counters[w]);
            s.spawn(move || {
                    let cfg: WorkerConfig = serde_json::from_value(serde_json::json!({
                        "network": net, "relayAddress": format!("127.0.0.1:{port}"), "secretHex": SECRET,
                        "partition": w, "attempt": 0, "replicas": 1,
                        "thresholdAlgorithm": {"type": "adaptive"},
                        "residualPostProcessor": {"type": "clipping", "thresholdMultipleClipValue": 5.0, "frequency": 5},
                        "connectTimeoutMs": 30000, "ioTimeoutMs": 120000, "queueLimit": 64,
                        "maxMessageBytes": 268435456, "collectStats": false, "encrypt": false
                    }))
                    .expect("config");
                    let (mut node, mut replicas) = WorkerNode::connect(&cfg, params, None).expect("connect");
                    connected.fetch_add(1, Ordering::SeqCst);
                    let mut rng = Rng(w as u64 + 1);
                    let x: Vec<f32> = (0..batch * 784).map(|_| rng.unit()).collect();
                    let mut y = vec![0.0f32; batch * 10];
                    for r in 0..batch {
                        y[r * 10 + (rng.next() % 10) as usize] = 1.0;
                    }
                    while !stop.load(Ordering::Relaxed) {
                        replicas[0].fit(&x, &y, batch, None).expect("fit");
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                    node.finish().expect("finish");
            });
        }
        window(relay, &connected, &counters, &stop, seconds)
    })
}

fn run_comm(workers: usize, seconds: f64, n: usize, pool: &[Vec<u8>], relay: &DriverRelay) -> Point {
    let port = relay.port();
    let stop = AtomicBool::new(false);
    let connected = AtomicU64::new(0);
    let counters: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|s| {
        for w in 0..workers {
            let (stop, connected, counter) = (&stop, &connected, &counters[w]);
            s.spawn(move || {
                    let config = ClientConfig {
                        secret: (0..SECRET.len())
                            .step_by(2)
                            .map(|i| u8::from_str_radix(&SECRET[i..i + 2], 16).expect("hex"))
                            .collect(),
                        worker: WorkerId { partition: w as u32, attempt: 0 },
                        connect_timeout: Duration::from_secs(30),
                        io_timeout: Duration::from_secs(120),
                        max_message_bytes: 268_435_456,
                        queue_limit_messages: 64,
                        encrypt: false,
                    };
                    // what a worker's reader thread does with a relayed update: decode it into
                    // a dense vector
                    let inbox = Arc::new(Mutex::new(vec![0.0f32; n]));
                    let received = Arc::new(AtomicU64::new(0));
                    let (inbox2, received2) = (Arc::clone(&inbox), Arc::clone(&received));
                    let (client, _snapshot) = RelayClient::connect(
                        &format!("127.0.0.1:{port}"),
                        config,
                        Box::new(move |payload: &[u8]| {
                            let mut v = inbox2.lock().unwrap();
                            ferrodl_comm::decode_add(&payload[16..], 1.0, &mut v).expect("decode");
                            received2.fetch_add(1, Ordering::Relaxed);
                        }),
                    )
                    .expect("connect");
                    connected.fetch_add(1, Ordering::SeqCst);
                    let mut sent = 0usize;
                    while !stop.load(Ordering::Relaxed) {
                        client.send(pool[(sent + w) % pool.len()].clone()).expect("send");
                        sent += 1;
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                    client.finish().expect("finish");
                    let _ = received.load(Ordering::Relaxed);
            });
        }
        window(relay, &connected, &counters, &stop, seconds)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .map(|i| args[i + 1].clone())
            .unwrap_or_else(|| default.to_string())
    };
    let mode = get("--mode", "train");
    let counts: Vec<usize> = get("--workers", "2,4,8,16,32")
        .split(',')
        .map(|s| s.parse().expect("--workers"))
        .collect();
    let seconds: f64 = get("--seconds", "10").parse().expect("--seconds");
    let batch: usize = get("--batch", "16").parse().expect("--batch");
    let sparsity: f64 = get("--sparsity", "2.5e-3").parse().expect("--sparsity");
    // one engine thread per worker, as a one-core Spark task runs
    ferrodl_tensor::set_num_threads(1);
    let n = if mode == "train" {
        ferrodl_nn::MultiLayerNetwork::<f32>::new(
            ferrodl_nn::MultiLayerConfiguration::from_json(&mlp_json()).expect("mlp"),
        )
        .expect("mlp")
        .num_params()
    } else {
        get("--params", "443610").parse().expect("--params")
    };
    let pool = if mode == "comm" { update_pool(n, sparsity, 16, 7) } else { Vec::new() };
    let message_bytes = pool.iter().map(Vec::len).sum::<usize>() as f64 / pool.len().max(1) as f64;
    let cores = std::thread::available_parallelism().map_or(0, |c| c.get());
    for &workers in &counts {
        let params = vec![0.01f32; n];
        let mut relay = DriverRelay::start(&settings(), params.clone(), 0, 0).expect("relay");
        let p = match mode.as_str() {
            "train" => run_train(workers, seconds, batch, &params, &relay),
            "comm" => run_comm(workers, seconds, n, &pool, &relay),
            other => panic!("--mode train|comm, got {other}"),
        };
        relay.shutdown().expect("shutdown");
        let stats = &p.stats;
        let sum = |f: fn(&ferrodl_relay::WorkerCounters) -> u64| -> u64 { stats.per_worker.values().map(f).sum() };
        let (msgs_in, bytes_in) = (sum(|w| w.messages_received), sum(|w| w.bytes_received));
        let (msgs_out, bytes_out) = (sum(|w| w.messages_relayed_out), sum(|w| w.bytes_relayed_out));
        let rates: Vec<f64> = p.iterations.iter().map(|&i| i as f64 / p.wall).collect();
        let mean = rates.iter().sum::<f64>() / rates.len() as f64;
        let min = rates.iter().cloned().fold(f64::INFINITY, f64::min);
        println!(
            "SCALING {}",
            serde_json::json!({
                "mode": mode, "workers": workers, "cores": cores, "params": n, "batch": batch,
                "sparsity_target": if mode == "comm" { Some(sparsity) } else { None },
                "pool_message_bytes": if mode == "comm" { Some(message_bytes) } else { None },
                "wall_s": p.wall,
                "worker_iterations_per_s_mean": mean, "worker_iterations_per_s_min": min,
                "relay_messages_in_per_s": msgs_in as f64 / p.wall,
                "relay_messages_out_per_s": msgs_out as f64 / p.wall,
                "relay_bytes_in_per_s": bytes_in as f64 / p.wall,
                "relay_bytes_out_per_s": bytes_out as f64 / p.wall,
                "bytes_per_message": if msgs_in > 0 { bytes_in as f64 / msgs_in as f64 } else { 0.0 },
                "outbound_waits": stats.outbound_waits,
                "messages_dropped": sum(|w| w.messages_dropped + w.messages_dropped_outbound),
            })
        );
    }
}
