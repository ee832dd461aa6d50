//! Gradient sharing on the MNIST digits in one process, with the real sharing code: a
//! `DriverRelay` on 127.0.0.1 and `workers` `WorkerNode`s (one thread each) training the MLP of
//! `MnistMlpExample` (784-500-100-10, ReLU, softmax + MCXENT, l2 1e-4). Each epoch is one fit, as
//! in Spark: a fresh relay started from the master copy, every worker connects (downloading it),
//! trains on its contiguous share of the shuffled minibatches and finishes; the driver keeps the
//! master copy, averages the updater states and threshold states into the next fit, and drops the
//! residuals (as `SharedTrainingMaster` does). Used to explore threshold algorithms, sparsity
//! targets, updaters and learning rates cheaply before a real-cluster run.
//!
//! ```text
//! cargo run --release -p ferrodl-sharing --example mnist_sharing -- \
//!     --data DIR [--epochs 20] [--batch 16] [--workers 2] [--updater adam|nesterovs|sgd]
//!     [--lr 1e-3] [--lr-gamma 1] [--carry-residual] [--threshold '{"type":"targetSparsity","sparsityTarget":2e-3}'] [--seed 12345] [--encrypt]
//!     [--hidden 500,100] [--local] [--threads N] [--replicas R]
//! ```
//!
//! `--replicas R` gives each worker node R replicas on R threads (a contiguous share of the node's
//! minibatches each), as `workersPerNode` does in Spark: replicas of one node take each other's
//! updates in-process, and only the node's connection goes through the relay.
//!
//! `--hidden` sets the hidden layers (`--hidden 12`: 784-12-10, 9,550 parameters, the small
//! network of docs/UPDATE_FORMAT.md's small-network section); `--local` trains the same network
//! in one network without sharing (same minibatches, epochs and schedule), on all cores (or
//! `--threads`), for the baseline. Each sharing replica's engine uses `--threads` threads, by
//! default cores ÷ (workers × replicas) (at least one), as each Spark task's does: `--workers 1`
//! alone therefore trains on all cores, so compare one-thread steps with `--threads 1`.
//!
//! DIR holds the four uncompressed IDX files (`train-images-idx3-ubyte`, …). Output: one line per
//! epoch, then `RESULT accuracy=… bytes_per_worker_iteration=… ratio=…`, where the bytes are what
//! each worker's relay connection wrote to its socket (frames, heartbeats, handshake included).

use ferrodl_sharing::{average_threshold_states, DriverRelay, WorkerConfig, WorkerNode};
use std::time::Instant;

const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

struct Data {
    x: Vec<f32>,
    y: Vec<f32>,
    labels: Vec<u8>,
    n: usize,
}

fn read_idx(dir: &str, split: &str) -> Data {
    let images = std::fs::read(format!("{dir}/{split}-images-idx3-ubyte")).expect("images file");
    let labels = std::fs::read(format!("{dir}/{split}-labels-idx1-ubyte")).expect("labels file");
    let be = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(be(&images, 0), 2051, "images magic");
    assert_eq!(be(&labels, 0), 2049, "labels magic");
    let n = be(&images, 4);
    assert_eq!(be(&images, 8) * be(&images, 12), 784);
    let x = images[16..16 + n * 784]
        .iter()
        .map(|&p| f32::from(p) / 255.0)
        .collect();
    let labels = labels[8..8 + n].to_vec();
    let mut y = vec![0.0f32; n * 10];
    for (i, &l) in labels.iter().enumerate() {
        y[i * 10 + l as usize] = 1.0;
    }
    Data { x, y, labels, n }
}

/// The MLP with the given updater; `gamma < 1` adds a per-epoch exponential learning-rate
/// schedule `lr · gamma^epoch`. The counters say where the fit starts (schedules read them).
fn network_json(
    hidden: &[usize],
    updater: &str,
    lr: f64,
    gamma: f64,
    seed: u64,
    iteration: u64,
    epoch: u64,
) -> String {
    let schedule = if gamma < 1.0 {
        format!(
            r#","learningRateSchedule":{{"type":"ExponentialSchedule","scheduleType":"EPOCH","initialValue":{lr},"gamma":{gamma}}}"#
        )
    } else {
        String::new()
    };
    let updater = match updater {
        "adam" => format!(
            r#"{{"type":"Adam","learningRate":{lr},"beta1":0.9,"beta2":0.999,"epsilon":1e-8{schedule}}}"#
        ),
        "nesterovs" => {
            format!(r#"{{"type":"Nesterovs","learningRate":{lr},"momentum":0.9{schedule}}}"#)
        }
        "sgd" => format!(r#"{{"type":"Sgd","learningRate":{lr}{schedule}}}"#),
        other => panic!("unknown updater {other}"),
    };
    let layer = |kind: &str, n_in: usize, n_out: usize, act: &str, extra: &str| {
        format!(
            r#"{{"type":"{kind}","nIn":{n_in},"nOut":{n_out},"activation":"{act}","weightInit":"RELU",
               "l2":1e-4,"updater":{updater},"biasUpdater":{updater}{extra}}}"#
        )
    };
    let mut layers = Vec::new();
    let mut n_in = 784;
    for &h in hidden {
        layers.push(layer("DenseLayer", n_in, h, "RELU", ""));
        n_in = h;
    }
    layers.push(layer(
        "OutputLayer",
        n_in,
        10,
        "SOFTMAX",
        r#","lossFunction":"MCXENT""#,
    ));
    format!(
        r#"{{"formatVersion":1,"seed":{seed},"iterationCount":{iteration},"epochCount":{epoch},"layers":[{}]}}"#,
        layers.join(",")
    )
}

/// splitmix64, for the shuffles.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn accuracy(net: &mut ferrodl_nn::MultiLayerNetwork<f32>, d: &Data) -> f64 {
    let out = net.output(&d.x, d.n, false).expect("output");
    let correct = (0..d.n)
        .filter(|&r| {
            let row = &out[r * 10..r * 10 + 10];
            let best = (0..10)
                .max_by(|&a, &b| row[a].partial_cmp(&row[b]).unwrap())
                .unwrap();
            best == d.labels[r] as usize
        })
        .count();
    correct as f64 / d.n as f64
}

/// The baseline: the same network, minibatches (the same shuffles) and epochs in one network, on all cores.
fn train_locally(
    net: &mut ferrodl_nn::MultiLayerNetwork<f32>,
    train: &Data,
    test: &Data,
    epochs: u64,
    batch: usize,
    seed: u64,
) {
    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut acc = 0.0;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for epoch in 1..=epochs {
        let mut order: Vec<usize> = (0..train.n).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
        }
        for b in order.chunks(batch) {
            x.clear();
            y.clear();
            for &i in b {
                x.extend_from_slice(&train.x[i * 784..(i + 1) * 784]);
                y.extend_from_slice(&train.y[i * 10..(i + 1) * 10]);
            }
            net.fit(&x, &y, b.len(), None).expect("fit");
        }
        net.increment_epoch_count();
        acc = accuracy(net, test);
        println!("epoch {epoch}: local test accuracy {acc:.4}, {:.1}s", started.elapsed().as_secs_f64());
    }
    println!("RESULT local accuracy={acc:.4} params={}", net.num_params());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .map(|i| args[i + 1].clone())
            .unwrap_or_else(|| default.to_string())
    };
    let dir = get("--data", "/tmp/wire-mnist");
    let epochs: u64 = get("--epochs", "20").parse().unwrap();
    let batch: usize = get("--batch", "16").parse().unwrap();
    let workers: usize = get("--workers", "2").parse().unwrap();
    let replicas: usize = get("--replicas", "1").parse().unwrap();
    let updater = get("--updater", "adam");
    let lr: f64 = get("--lr", "1e-3").parse().unwrap();
    let gamma: f64 = get("--lr-gamma", "1").parse().unwrap();
    let seed: u64 = get("--seed", "12345").parse().unwrap();
    let threshold = get("--threshold", r#"{"type":"adaptive"}"#);
    // Carry each worker's residual into its next fit instead of dropping it (as Spark does).
    let carry = args.iter().any(|a| a == "--carry-residual");
    // Seal relay frames (ChaCha20-Poly1305), as a fit with spark.network.crypto.enabled does.
    let encrypt = args.iter().any(|a| a == "--encrypt");
    let mut residuals: Vec<Option<Vec<f32>>> = vec![None; workers];
    let post = get(
        "--post",
        r#"{"type":"clipping","thresholdMultipleClipValue":5.0,"frequency":5}"#,
    );
    let train = read_idx(&dir, "train");
    let test = read_idx(&dir, "test");
    let hidden: Vec<usize> = get("--hidden", "500,100")
        .split(',')
        .map(|h| h.trim().parse().expect("--hidden: sizes separated by commas"))
        .collect();
    let local = args.iter().any(|a| a == "--local");
    let net_json = network_json(&hidden, &updater, lr, gamma, seed, 0, 0);
    let conf = ferrodl_nn::MultiLayerConfiguration::from_json(&net_json).expect("network");
    let mut net = ferrodl_nn::MultiLayerNetwork::<f32>::new(conf).expect("network");
    // Each worker's engine gets its share of the cores, as a Spark task's does (TaskThreads):
    // with the default, every worker would start a GEMM helper and oversubscribe the machine.
    // The local baseline takes all of them unless --threads says otherwise.
    let share = if local { 1 } else { workers * replicas };
    let threads = get("--threads", &(ferrodl_tensor::default_num_threads() / share).max(1).to_string());
    ferrodl_tensor::set_num_threads(threads.parse().expect("--threads: a count"));
    if local {
        return train_locally(&mut net, &train, &test, epochs, batch, seed);
    }
    let n_params = net.num_params();
    let mut params = net.params().to_vec();
    let mut updater_state: Option<Vec<f32>> = None;
    let mut threshold_state: Option<String> = None;
    let (mut iteration, mut epoch_count) = (0u64, 0u64);
    let (mut wire_bytes, mut payload_bytes, mut worker_iterations, mut entries) =
        (0u64, 0u64, 0u64, 0u64);
    // Nanoseconds per phase of a worker step, summed over workers and steps: inbox, compute,
    // encode, apply own, send.
    let mut phase_nanos = [0u64; 5];
    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut acc = 0.0;
    println!(
        "mnist_sharing: {n_params} params, updater {updater} lr {lr}, batch {batch}, {workers} workers, \
         threshold {threshold}"
    );
    for epoch in 1..=epochs {
        let mut order: Vec<usize> = (0..train.n).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
        }
        let batches: Vec<&[usize]> = order.chunks(batch).collect();
        let per_worker = batches.len().div_ceil(workers);
        let settings = format!(
            r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{SECRET}",
                "maxMessageBytes":67108864,"queueLimit":64,"ioTimeoutMs":60000,"handshakeTimeoutMs":10000,
                "encrypt":{encrypt}}}"#
        );
        let net_json = network_json(&hidden, &updater, lr, gamma, seed, iteration, epoch_count);
        let mut relay =
            DriverRelay::start(&settings, params.clone(), updater_state.clone().unwrap_or_default(), iteration, epoch_count).expect("relay");
        let port = relay.port();
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = batches
                .chunks(per_worker)
                .enumerate()
                .map(|(w, mine)| {
                    let net_json = &net_json;
                    let (threshold, post, threshold_state) = (&threshold, &post, &threshold_state);
                    let train = &train;
                    let carried = residuals[w].take();
                    s.spawn(move || {
                        let cfg: WorkerConfig = serde_json::from_value(serde_json::json!({
                            "network": net_json,
                            "relayAddress": format!("127.0.0.1:{port}"),
                            "secretHex": SECRET,
                            "partition": w,
                            "attempt": 0,
                            "replicas": replicas,
                            "thresholdAlgorithm": serde_json::from_str::<serde_json::Value>(threshold).unwrap(),
                            "residualPostProcessor": serde_json::from_str::<serde_json::Value>(post).unwrap(),
                            "thresholdState": threshold_state.as_ref().map(|s| serde_json::from_str::<serde_json::Value>(s).unwrap()),
                            "connectTimeoutMs": 10000,
                            "ioTimeoutMs": 60000,
                            "queueLimit": 64,
                            "maxMessageBytes": 67108864,
                            "collectStats": false,
                            "encrypt": encrypt
                        }))
                        .unwrap();
                        let (mut node, mut trainers) =
                            WorkerNode::connect(&cfg).expect("connect");
                        if let Some(r) = carried.filter(|_| carry) {
                            trainers[0].set_residual(&r).expect("residual");
                        }
                        // the node's minibatches, a contiguous share per replica (one thread each)
                        let share = mine.len().div_ceil(replicas).max(1);
                        let trained: Vec<_> = std::thread::scope(|rs| {
                            let hs: Vec<_> = trainers
                                .iter_mut()
                                .zip(mine.chunks(share))
                                .map(|(replica, part)| {
                                    rs.spawn(move || {
                                        let mut x = Vec::with_capacity(batch * 784);
                                        let mut y = Vec::with_capacity(batch * 10);
                                        for b in part {
                                            x.clear();
                                            y.clear();
                                            for &i in *b {
                                                x.extend_from_slice(&train.x[i * 784..(i + 1) * 784]);
                                                y.extend_from_slice(&train.y[i * 10..(i + 1) * 10]);
                                            }
                                            replica.fit(&x, &y, b.len(), None).expect("fit");
                                        }
                                        let state = replica.network().updater_state().to_vec();
                                        (replica.report(), state, replica.residual().to_vec())
                                    })
                                })
                                .collect();
                            hs.into_iter().map(|h| h.join().expect("replica")).collect()
                        });
                        let node_report = node.finish().expect("finish");
                        (node_report, trained)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("worker"))
                .collect()
        });
        relay.shutdown().expect("relay shutdown");
        let master = relay.snapshot().expect("snapshot");
        params = master.params;
        let mut sum = vec![0.0f32; results[0].1[0].1.len()];
        let mut states = Vec::new();
        let mut trained = 0usize;
        for (w, (node, per_replica)) in results.iter().enumerate() {
            residuals[w] = Some(per_replica[0].2.clone());
            wire_bytes += node.wire_bytes_sent;
            payload_bytes += node.bytes_sent;
          for (report, state, _) in per_replica {
            trained += 1;
            worker_iterations += report.minibatches;
            entries += report.entries_sent;
            let t = &report.step_times;
            for (sum, n) in phase_nanos.iter_mut().zip([
                t.apply_received_nanos,
                t.compute_nanos,
                t.encode_nanos,
                t.apply_own_nanos,
                t.send_nanos,
            ]) {
                *sum += n;
            }
            iteration = iteration.max(report.iteration + 1);
            for (a, b) in sum.iter_mut().zip(state) {
                *a += b;
            }
            states.push(report.threshold_state.clone());
          }
        }
        for a in &mut sum {
            *a /= trained as f32;
        }
        updater_state = Some(sum);
        let averaged =
            average_threshold_states(&serde_json::to_string(&states).unwrap()).expect("states");
        threshold_state = (averaged != "null").then_some(averaged);
        epoch_count += 1;
        net.set_params(&params).unwrap();
        acc = accuracy(&mut net, &test);
        println!(
            "epoch {epoch}: test accuracy {acc:.4}, wire bytes/worker-iteration {:.1}, sparsity {:.2e}, \
             threshold {}, {:.1}s",
            wire_bytes as f64 / worker_iterations as f64,
            entries as f64 / worker_iterations as f64 / n_params as f64,
            threshold_state.as_deref().unwrap_or("-"),
            started.elapsed().as_secs_f64()
        );
    }
    let per = wire_bytes as f64 / worker_iterations as f64;
    let ms = |i: usize| phase_nanos[i] as f64 / worker_iterations as f64 / 1e6;
    println!(
        "STEP ms per worker step: inbox {:.3} compute {:.3} encode {:.3} apply_own {:.3} send {:.3}",
        ms(0),
        ms(1),
        ms(2),
        ms(3),
        ms(4)
    );
    println!(
        "RESULT accuracy={acc:.4} bytes_per_worker_iteration={per:.1} payload_bytes_per_worker_iteration={:.1} \
         dense_fp32_bytes={} ratio={:.6} one_in={:.0} sparsity={:.3e} seconds={:.1}",
        payload_bytes as f64 / worker_iterations as f64,
        4 * n_params,
        per / (4 * n_params) as f64,
        (4 * n_params) as f64 / per,
        entries as f64 / worker_iterations as f64 / n_params as f64,
        started.elapsed().as_secs_f64()
    );
}
