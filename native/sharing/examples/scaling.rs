//! How one gradient-sharing relay (the driver's hub) scales with the number of workers: N workers
//! on 127.0.0.1, each a thread with its own relay connection, the real codec, relay and master
//! copy (docs/SCALING.md).
//!
//! ```text
//! cargo run --release -p ferrodl-sharing --example scaling -- [--mode train|comm] \
//!     [--workers 2,4,8,16,32] [--seconds 10] [--params 443610] [--sparsity 2.5e-3] [--batch 16] \
//!     [--fanout 0]
//! ```
//!
//! `--fanout k` (k >= 2) spreads the workers over a relay tree (`ferrodl_relay::TreeNode`): k
//! workers per leaf node, k children per interior node, the driver's relay at the root; `0` (the
//! default) connects every worker to the root.
//!
//! - `train`: every worker is a `WorkerNode` with one replica training the MNIST MLP
//!   (784-500-100-10, Adam 1e-3) on random minibatches of `--batch`, one engine thread each: the
//!   whole worker step (compute, encode, send, apply what others sent) as in a Spark task.
//! - `comm`: no engine; every worker sends real encoded updates of `--params` parameters at
//!   `--sparsity` (Rice-coded by `ferrodl_comm`, a fresh random one per message from a pool) as
//!   fast as the relay takes them, and decodes everything relayed to it into its own parameter
//!   vector, as a worker's inbox does. This is the hub's capacity: messages in/out per second.
//!
//! One line per worker count: `SCALING {json}` with the root relay's messages and bytes per second
//! in and out, each worker's iterations (messages sent) per second (mean, min), the wall time,
//! and what separates the hub's capacity from the machine's: the CPU seconds the root relay's own
//! threads used per message in (`root_cpu_us_per_message_in`), the time it held its core lock
//! per message (`root_locked_us_per_message_in`, the serial part), the same CPU for all tree
//! nodes together, and the whole process's CPU use against the cores it has.

use ferrodl_relay::{ClientConfig, RelayClient, TreeNode, WorkerId};
use ferrodl_sharing::payload::{read_update, write_update};
use ferrodl_sharing::{start_tree_node, DriverRelay, WorkerConfig, WorkerNode};
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
            let mut payload = Vec::new();
            write_update(1000 + i as u64, 0, &encoded, &mut payload);
            payload
        })
        .collect()
}

/// What a point measured over its window (from the moment the last worker connected to stop).
struct Point {
    iterations: Vec<u64>,
    wall: f64,
    stats: ferrodl_relay::RelayStats,
    /// CPU seconds in the window: the root relay's threads, the tree nodes' threads, the process.
    root_cpu: f64,
    nodes_cpu: f64,
    process_cpu: f64,
}

/// CPU seconds (user + system) of this process so far (`/proc/self/stat`).
fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let Some(end) = stat.rfind(')') else { return 0.0 };
    let f: Vec<&str> = stat[end + 2..].split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// The relays of one run: the driver's relay at the root and the tree nodes under it.
struct Tree {
    root: DriverRelay,
    nodes: Vec<TreeNode>,
    /// Where each worker connects.
    worker_addr: Vec<String>,
}

impl Tree {
    /// `fanout` 0 (or no more workers than `fanout`): every worker at the root. Otherwise
    /// `fanout` workers per leaf and `fanout` children per interior node, levels added until
    /// the root has at most `fanout` children.
    fn build(workers: usize, fanout: usize, params: &[f32]) -> Tree {
        let root = DriverRelay::start(&settings(), params.to_vec(), Vec::new(), 0, 0).expect("relay");
        let root_addr = format!("127.0.0.1:{}", root.port());
        if fanout < 2 || workers <= fanout {
            return Tree { root, nodes: Vec::new(), worker_addr: vec![root_addr; workers] };
        }
        // Level sizes from the leaves up.
        let mut sizes = vec![workers.div_ceil(fanout)];
        while *sizes.last().expect("one level") > fanout {
            let next = sizes.last().expect("one level").div_ceil(fanout);
            sizes.push(next);
        }
        let mut nodes = Vec::new();
        let mut parents: Vec<String> = Vec::new();
        for (level, &size) in sizes.iter().enumerate().rev() {
            let mut addrs = Vec::with_capacity(size);
            for i in 0..size {
                let parent = if level + 1 == sizes.len() { root_addr.clone() } else { parents[i / fanout].clone() };
                let node = start_tree_node(&settings(), &parent, nodes.len() as u32).expect("tree node");
                addrs.push(node.local_addr().to_string());
                nodes.push(node);
            }
            parents = addrs;
        }
        let worker_addr = (0..workers).map(|w| parents[w / fanout].clone()).collect();
        Tree { root, nodes, worker_addr }
    }

    fn nodes_cpu(&self) -> f64 {
        self.nodes.iter().map(TreeNode::cpu_seconds).sum()
    }

    fn shutdown(self) {
        // Leaves first: every node's parent is still there when it finishes.
        for node in self.nodes.into_iter().rev() {
            node.shutdown().expect("tree node shutdown");
        }
        let mut root = self.root;
        root.shutdown().expect("shutdown");
    }
}

/// Waits until all workers connected, lets them run `seconds`, then snapshots their counters and
/// the relay's, and tells them to stop. Returns (per-worker iterations, window, relay stats in the
/// window).
fn window(
    tree: &Tree,
    connected: &AtomicU64,
    counters: &[AtomicU64],
    stop: &AtomicBool,
    seconds: f64,
) -> Point {
    let relay = &tree.root;
    while connected.load(Ordering::SeqCst) < counters.len() as u64 {
        std::thread::sleep(Duration::from_millis(5));
    }
    // Socket buffers on 127.0.0.1 hold megabytes: until they are full a worker's sends run ahead
    // of what the relay reads. Measure from the steady state.
    std::thread::sleep(Duration::from_secs(2));
    let before: Vec<u64> = counters.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    let s0 = relay.stats();
    let cpu0 = (relay.cpu_seconds(), tree.nodes_cpu(), process_cpu_seconds());
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let after: Vec<u64> = counters.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    let s1 = relay.stats();
    let cpu1 = (relay.cpu_seconds(), tree.nodes_cpu(), process_cpu_seconds());
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
    stats.locked_nanos -= s0.locked_nanos;
    stats.locked_cpu_nanos -= s0.locked_cpu_nanos;
    Point {
        iterations: after.iter().zip(&before).map(|(a, b)| a - b).collect(),
        wall,
        stats,
        root_cpu: cpu1.0 - cpu0.0,
        nodes_cpu: cpu1.1 - cpu0.1,
        process_cpu: cpu1.2 - cpu0.2,
    }
}

fn run_train(workers: usize, seconds: f64, batch: usize, tree: &Tree) -> Point {
    let stop = AtomicBool::new(false);
    let connected = AtomicU64::new(0);
    let counters: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    let net = mlp_json();
    std::thread::scope(|s| {
        for w in 0..workers {
            let (stop, net, connected, counter) = (&stop, &net, &connected, &counters[w]);
            let addr = &tree.worker_addr[w];
            s.spawn(move || {
                    let cfg: WorkerConfig = serde_json::from_value(serde_json::json!({
                        "network": net, "relayAddress": addr, "secretHex": SECRET,
                        "partition": w, "attempt": 0, "replicas": 1,
                        "thresholdAlgorithm": {"type": "adaptive"},
                        "residualPostProcessor": {"type": "clipping", "thresholdMultipleClipValue": 5.0, "frequency": 5},
                        "connectTimeoutMs": 30000, "ioTimeoutMs": 120000, "queueLimit": 64,
                        "maxMessageBytes": 268435456, "collectStats": false, "encrypt": false
                    }))
                    .expect("config");
                    let (mut node, mut replicas) = WorkerNode::connect(&cfg).expect("connect");
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
        window(tree, &connected, &counters, &stop, seconds)
    })
}

fn run_comm(workers: usize, seconds: f64, n: usize, pool: &[Vec<u8>], tree: &Tree) -> Point {
    let stop = AtomicBool::new(false);
    let connected = AtomicU64::new(0);
    let counters: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|s| {
        for w in 0..workers {
            let (stop, connected, counter) = (&stop, &connected, &counters[w]);
            let addr = &tree.worker_addr[w];
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
                        addr,
                        config,
                        Box::new(move |payload: &[u8]| {
                            let mut v = inbox2.lock().unwrap();
                            let (_, _, encoded) = read_update(payload).expect("payload");
                            ferrodl_comm::decode_add(encoded, 1.0, &mut v).expect("decode");
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
        window(tree, &connected, &counters, &stop, seconds)
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
    let fanout: usize = get("--fanout", "0").parse().expect("--fanout");
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
        let tree = Tree::build(workers, fanout, &params);
        let tree_nodes = tree.nodes.len();
        let p = match mode.as_str() {
            "train" => run_train(workers, seconds, batch, &tree),
            "comm" => run_comm(workers, seconds, n, &pool, &tree),
            other => panic!("--mode train|comm, got {other}"),
        };
        tree.shutdown();
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
                "fanout": fanout, "tree_nodes": tree_nodes,
                "root_cpu_s_per_s": p.root_cpu / p.wall,
                "root_cpu_us_per_message_in": if msgs_in > 0 { 1e6 * p.root_cpu / msgs_in as f64 } else { 0.0 },
                "root_locked_us_per_message_in": if msgs_in > 0 { stats.locked_nanos as f64 / 1e3 / msgs_in as f64 } else { 0.0 },
                "root_locked_cpu_us_per_message_in": if msgs_in > 0 { stats.locked_cpu_nanos as f64 / 1e3 / msgs_in as f64 } else { 0.0 },
                "nodes_cpu_s_per_s": p.nodes_cpu / p.wall,
                "process_cpu_s_per_s": p.process_cpu / p.wall,
                "outbound_waits": stats.outbound_waits,
                "messages_dropped": sum(|w| w.messages_dropped + w.messages_dropped_outbound),
            })
        );
    }
}
