//! The recommended gradient-sharing settings (README, "Recommended settings") reach a small
//! network's local accuracy, as they do the 443,610-parameter MNIST MLP's: a 784-12-10 MLP (9,550
//! parameters) on the mnist10k digits of spark-example's resources, 2 workers in one process with
//! the real relay, one fit per epoch as Spark runs them (fresh relay from the master copy, updater
//! and threshold states averaged into the next fit, residuals dropped), against the same network
//! trained locally on the same minibatches. About 25 s (five shared runs of 20 epochs of 250 steps per
//! worker).

use std::io::Read;

use ferrodl_sharing::{average_threshold_states, DriverRelay, WorkerConfig, WorkerNode};

const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const EPOCHS: u64 = 20;
const BATCH: usize = 16;
/// Shared runs; the median is asserted.
const RUNS: usize = 5;

struct Digits {
    x: Vec<f32>,
    y: Vec<f32>,
    labels: Vec<u8>,
    n: usize,
}

fn gunzip(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../spark-example/src/main/resources/mnist10k/{name}.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(file).read_to_end(&mut out).unwrap();
    out
}

fn digits(split: &str) -> Digits {
    let images = gunzip(&format!("{split}-images-idx3-ubyte"));
    let labels = gunzip(&format!("{split}-labels-idx1-ubyte"));
    let be = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let n = be(&images, 4);
    let x = images[16..16 + n * 784].iter().map(|&p| f32::from(p) / 255.0).collect();
    let labels = labels[8..8 + n].to_vec();
    let mut y = vec![0.0f32; n * 10];
    for (i, &l) in labels.iter().enumerate() {
        y[i * 10 + l as usize] = 1.0;
    }
    Digits { x, y, labels, n }
}

/// 784-12-10, Nesterovs 0.03 (momentum 0.9) with the learning rate × 0.9 per epoch.
fn network(iteration: u64, epoch: u64) -> String {
    let updater = r#"{"type":"Nesterovs","learningRate":0.03,"momentum":0.9,"learningRateSchedule":{"type":"ExponentialSchedule","scheduleType":"EPOCH","initialValue":0.03,"gamma":0.9}}"#;
    format!(
        r#"{{"formatVersion":1,"seed":12345,"iterationCount":{iteration},"epochCount":{epoch},"layers":[
        {{"type":"DenseLayer","nIn":784,"nOut":12,"activation":"RELU","weightInit":"RELU","updater":{updater},"biasUpdater":{updater}}},
        {{"type":"OutputLayer","nIn":12,"nOut":10,"activation":"SOFTMAX","weightInit":"RELU","lossFunction":"MCXENT","updater":{updater},"biasUpdater":{updater}}}]}}"#
    )
}

fn accuracy(params: &[f32], d: &Digits) -> f64 {
    let conf = ferrodl_nn::MultiLayerConfiguration::from_json(&network(0, 0)).unwrap();
    let mut net = ferrodl_nn::MultiLayerNetwork::<f32>::new(conf).unwrap();
    net.set_params(params).unwrap();
    let out = net.output(&d.x, d.n, false).unwrap();
    let correct = (0..d.n)
        .filter(|&r| {
            let row = &out[r * 10..r * 10 + 10];
            let best = (0..10).max_by(|&a, &b| row[a].partial_cmp(&row[b]).unwrap()).unwrap();
            best == d.labels[r] as usize
        })
        .count();
    correct as f64 / d.n as f64
}

/// The epoch's minibatches: a fixed shuffle per epoch (the same for both runs).
fn minibatches(n: usize, epoch: u64) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = ferrodl_testutil::Rng::new(100 + epoch);
    for i in (1..n).rev() {
        order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    order.chunks(BATCH).map(<[usize]>::to_vec).collect()
}

fn gather(d: &Digits, rows: &[usize], x: &mut Vec<f32>, y: &mut Vec<f32>) {
    x.clear();
    y.clear();
    for &i in rows {
        x.extend_from_slice(&d.x[i * 784..(i + 1) * 784]);
        y.extend_from_slice(&d.y[i * 10..(i + 1) * 10]);
    }
}

#[test]
fn a_10k_parameter_mlp_reaches_its_local_accuracy_with_the_recommended_settings() {
    let (train, test) = (digits("train"), digits("test"));
    // Local: one network, every minibatch in order.
    let conf = ferrodl_nn::MultiLayerConfiguration::from_json(&network(0, 0)).unwrap();
    let mut local = ferrodl_nn::MultiLayerNetwork::<f32>::new(conf).unwrap();
    assert_eq!(local.num_params(), 9_550);
    let initial = local.params().to_vec();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for epoch in 0..EPOCHS {
        for b in minibatches(train.n, epoch) {
            gather(&train, &b, &mut x, &mut y);
            local.fit(&x, &y, b.len(), None).unwrap();
        }
        local.increment_epoch_count();
    }
    let local_accuracy = accuracy(local.params(), &test);

    // Five shared runs: updates arrive asynchronously, so one run is one draw (see below).
    let mut runs: Vec<(f64, f64)> = (0..RUNS)
        .map(|_| {
            let (params, wire_bytes, steps) = shared_fit(&train, initial.clone());
            (accuracy(&params, &test), wire_bytes as f64 / steps as f64)
        })
        .collect();
    runs.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    let accuracies: Vec<String> = runs.iter().map(|r| format!("{:.4}", r.0)).collect();
    let per_step = runs.iter().map(|r| r.1).fold(0.0, f64::max);
    let median = runs[RUNS / 2].0;
    eprintln!(
        "784-12-10: local {local_accuracy:.4}, shared {} (median {median:.4}), at most {per_step:.1} wire \
         bytes per worker iteration (dense {})",
        accuracies.join(" "),
        4 * 9_550
    );
    // Measured 2026-11-27 on an idle 2-vCPU Intel Xeon, one run at a time: local 0.9122, shared
    // 0.788, 0.874, 0.886, 0.886, 0.895, 0.900, 0.901, 0.902 at 50.3-50.7 bytes per worker
    // iteration, 1/755 of the dense 38,200 (at load 15-25 on 2026-11-25: 0.9042-0.9067, the two
    // workers then mostly take turns). So the median run trails local by ~0.02 and about one run
    // in eight falls far behind: the median of five against local - 0.05 and a floor far above
    // chance (0.1) that a diverging run would break. Before the small-network changes the same
    // settings sent 136 bytes per iteration (53 bytes of fixed framing and a 3.5%-per-step
    // threshold walk from 1e-4): the bound below (dense / 400 = 95.5) fails there.
    assert!(local_accuracy > 0.88, "local {local_accuracy}");
    assert!(
        median >= local_accuracy - 0.05,
        "median shared {median} vs local {local_accuracy} ({accuracies:?})"
    );
    assert!(runs[0].0 > 0.7, "a shared run diverged: {accuracies:?}");
    assert!(per_step < 4.0 * 9_550.0 / 400.0, "{per_step} bytes per worker iteration");
}

/// One shared training of EPOCHS fits from `initial`: 2 workers, one fit per epoch. Returns the
/// driver's final parameters, the wire bytes of all workers and their minibatch count.
fn shared_fit(train: &Digits, initial: Vec<f32>) -> (Vec<f32>, u64, u64) {
    let settings = format!(
        r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{SECRET}",
            "maxMessageBytes":1048576,"queueLimit":64,"ioTimeoutMs":20000,"handshakeTimeoutMs":5000}}"#
    );
    let threshold = serde_json::json!({"type": "targetSparsity", "sparsityTarget": 2.5e-3});
    let (mut params, mut updater, mut carried) = (initial, None::<Vec<f32>>, None::<String>);
    let (mut iteration, mut wire_bytes, mut steps) = (0u64, 0u64, 0u64);
    for epoch in 0..EPOCHS {
        let mut relay = DriverRelay::start(&settings, params.clone(), updater.clone().unwrap_or_default(), iteration, epoch).unwrap();
        let batches = minibatches(train.n, epoch);
        let share = batches.len().div_ceil(2);
        let net = network(iteration, epoch);
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = batches
                .chunks(share)
                .enumerate()
                .map(|(w, mine)| {
                    let (net, carried, threshold, train) = (&net, &carried, &threshold, &train);
                    let port = relay.port();
                    s.spawn(move || {
                        let cfg: WorkerConfig = serde_json::from_value(serde_json::json!({
                            "network": net, "relayAddress": format!("127.0.0.1:{port}"),
                            "secretHex": SECRET, "partition": w, "attempt": 0, "replicas": 1,
                            "thresholdAlgorithm": threshold,
                            "residualPostProcessor": {"type": "clipping", "thresholdMultipleClipValue": 5.0, "frequency": 5},
                            "thresholdState": carried.as_ref().map(|s| serde_json::from_str::<serde_json::Value>(s).unwrap()),
                            "connectTimeoutMs": 5000, "ioTimeoutMs": 20000, "queueLimit": 64,
                            "maxMessageBytes": 1048576, "collectStats": false
                        }))
                        .unwrap();
                        let (mut node, mut replicas) =
                            WorkerNode::connect(&cfg).unwrap();
                        let (mut x, mut y) = (Vec::new(), Vec::new());
                        for b in mine {
                            gather(train, b, &mut x, &mut y);
                            replicas[0].fit(&x, &y, b.len(), None).unwrap();
                        }
                        let sent = node.finish().unwrap();
                        let report = replicas[0].report();
                        (sent, report, replicas[0].network().updater_state().to_vec())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        relay.shutdown().unwrap();
        params = relay.snapshot().unwrap().params;
        let mut sum = vec![0.0f32; results[0].2.len()];
        let mut states = Vec::new();
        for (sent, report, state) in &results {
            wire_bytes += sent.wire_bytes_sent;
            steps += report.minibatches;
            iteration = iteration.max(report.iteration + 1);
            for (a, b) in sum.iter_mut().zip(state) {
                *a += b / results.len() as f32;
            }
            states.push(report.threshold_state.clone());
        }
        updater = Some(sum);
        let averaged = average_threshold_states(&serde_json::to_string(&states).unwrap()).unwrap();
        carried = (averaged != "null").then_some(averaged);
    }
    (params, wire_bytes, steps)
}
