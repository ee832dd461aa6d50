//! Gradient sharing end to end in one process: a real relay on 127.0.0.1 and worker nodes
//! training real networks.

use ferrodl_sharing::{DriverRelay, WorkerConfig, WorkerNode};
use ferrodl_testutil::{to_f32, uniform_matrix, Rng};

const NET: &str = r#"{"formatVersion":1,"seed":7,"layers":[
    {"type":"DenseLayer","nIn":4,"nOut":16,"activation":"RELU",
     "updater":{"type":"Adam","learningRate":0.01},"biasUpdater":{"type":"Adam","learningRate":0.01}},
    {"type":"OutputLayer","nIn":16,"nOut":2,"activation":"SOFTMAX","lossFunction":"MCXENT",
     "updater":{"type":"Adam","learningRate":0.01},"biasUpdater":{"type":"Adam","learningRate":0.01}}]}"#;
const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn initial_params() -> Vec<f32> {
    let conf = ferrodl_nn::MultiLayerConfiguration::from_json(NET).unwrap();
    ferrodl_nn::MultiLayerNetwork::<f32>::new(conf)
        .unwrap()
        .params()
        .to_vec()
}

/// The relay settings of these tests (no bound on a FINISH's updater states).
fn relay_settings() -> String {
    format!(
        r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{SECRET}",
            "maxMessageBytes":1048576,"queueLimit":16,"ioTimeoutMs":20000,"handshakeTimeoutMs":5000}}"#
    )
}

fn start_relay(params: Vec<f32>) -> DriverRelay {
    DriverRelay::start(&relay_settings(), params, Vec::new(), 0, 0).unwrap()
}

fn worker_config(
    port: u16,
    partition: u32,
    attempt: u32,
    replicas: usize,
    threshold: &str,
) -> WorkerConfig {
    let json = serde_json::json!({
        "network": NET,
        "relayAddress": format!("127.0.0.1:{port}"),
        "secretHex": SECRET,
        "partition": partition,
        "attempt": attempt,
        "replicas": replicas,
        "thresholdAlgorithm": serde_json::from_str::<serde_json::Value>(threshold).unwrap(),
        "residualPostProcessor": {"type": "clipping", "thresholdMultipleClipValue": 5.0, "frequency": 5},
        "connectTimeoutMs": 5000,
        "ioTimeoutMs": 20000,
        "queueLimit": 16,
        "maxMessageBytes": 1048576,
        "collectStats": true
    });
    serde_json::from_value(json).unwrap()
}

/// A linearly separable two-class problem: class = [x0 + x1 - x2 > 0].
fn batch(rng: &mut Rng, rows: usize) -> (Vec<f32>, Vec<f32>) {
    let x = to_f32(&uniform_matrix(rng, rows, 4, -1.0, 1.0));
    let mut y = vec![0.0f32; rows * 2];
    for r in 0..rows {
        let class = usize::from(x[r * 4] + x[r * 4 + 1] - x[r * 4 + 2] > 0.0);
        y[r * 2 + class] = 1.0;
    }
    (x, y)
}

#[test]
fn one_worker_master_copy_equals_the_worker_exactly() {
    let params = initial_params();
    let mut relay = start_relay(params.clone());
    let cfg = worker_config(
        relay.port(),
        0,
        0,
        1,
        r#"{"type":"fixed","threshold":0.001}"#,
    );
    let (mut node, mut replicas) = WorkerNode::connect(&cfg).unwrap();
    let mut rng = Rng::new(1);
    for _ in 0..20 {
        let (x, y) = batch(&mut rng, 8);
        replicas[0].fit(&x, &y, 8, None).unwrap();
    }
    let report = node.finish().unwrap();
    assert_eq!(report.messages_sent, 20);
    relay.shutdown().unwrap();
    let master = relay.snapshot().unwrap();
    // The worker applies exactly the encoded updates it sends, in the same order as the driver.
    assert_eq!(master.params, replicas[0].network().params());
    assert_eq!(master.iteration, 20);
    assert_ne!(
        master.params, params,
        "training must have moved the parameters"
    );
    let stats: serde_json::Value = serde_json::from_str(&relay.stats_json()).unwrap();
    assert_eq!(stats["messagesApplied"], 20);
    assert_eq!(stats["messagesDropped"], 0);
}

#[test]
fn two_nodes_learn_together_and_send_far_less_than_dense() {
    let params = initial_params();
    let n = params.len();
    let mut relay = start_relay(params.clone());
    let port = relay.port();
    let handles: Vec<_> = (0..2u32)
        .map(|p| {
            std::thread::spawn(move || {
                let cfg = worker_config(port, p, 0, 1, r#"{"type":"adaptive"}"#);
                let (mut node, mut replicas) = WorkerNode::connect(&cfg).unwrap();
                let mut rng = Rng::new(100 + u64::from(p));
                for _ in 0..150 {
                    let (x, y) = batch(&mut rng, 16);
                    replicas[0].fit(&x, &y, 16, None).unwrap();
                }
                let node_report = node.finish().unwrap();
                (node_report, replicas[0].report())
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    relay.shutdown().unwrap();
    let master = relay.snapshot().unwrap();

    // The master copy classifies held-out data well.
    let conf = ferrodl_nn::MultiLayerConfiguration::from_json(NET).unwrap();
    let mut net = ferrodl_nn::MultiLayerNetwork::<f32>::new(conf).unwrap();
    let mut rng = Rng::new(999);
    let (x, y) = batch(&mut rng, 400);
    let before = net.score(&x, &y, 400, None).unwrap();
    net.set_params(&master.params).unwrap();
    let after = net.score(&x, &y, 400, None).unwrap();
    let out = net.output(&x, 400, false).unwrap();
    let correct = (0..400)
        .filter(|&r| (out[r * 2 + 1] > out[r * 2]) == (y[r * 2 + 1] == 1.0))
        .count();
    assert!(after < before * 0.5, "score {before} -> {after}");
    assert!(correct >= 360, "accuracy {correct}/400");

    let stats: serde_json::Value = serde_json::from_str(&relay.stats_json()).unwrap();
    assert_eq!(stats["messagesApplied"], 300);
    assert!(stats["messagesRelayedOut"].as_u64().unwrap() <= 300);
    for (node, replica) in &results {
        assert_eq!(node.messages_sent, 150);
        assert_eq!(replica.minibatches, 150);
        let per_iteration = node.bytes_sent as f64 / 150.0;
        // Adaptive thresholds keep the sparsity at most 1e-2 after warm-up: far below dense fp32.
        assert!(
            per_iteration < 0.5 * (4 * n) as f64,
            "{per_iteration} bytes/iteration for {n} params"
        );
        assert_eq!(replica.steps.len(), 150);
    }
    assert_eq!(master.iteration, 150);
}

#[test]
fn a_rerun_worker_starts_from_the_driver_state() {
    let params = initial_params();
    let relay = start_relay(params.clone());
    let cfg = worker_config(
        relay.port(),
        3,
        0,
        1,
        r#"{"type":"fixed","threshold":0.0005}"#,
    );
    let (mut node, mut replicas) = WorkerNode::connect(&cfg).unwrap();
    let mut rng = Rng::new(5);
    for _ in 0..7 {
        let (x, y) = batch(&mut rng, 8);
        replicas[0].fit(&x, &y, 8, None).unwrap();
    }
    node.finish().unwrap();
    let trained = replicas[0].network().params().to_vec();

    // The same partition again (Spark's second attempt), given the stale broadcast parameters.
    let retry = worker_config(
        relay.port(),
        3,
        1,
        1,
        r#"{"type":"fixed","threshold":0.0005}"#,
    );
    let (mut node2, replicas2) = WorkerNode::connect(&retry).unwrap();
    assert_eq!(replicas2[0].network().params(), &trained[..]);
    assert_eq!(replicas2[0].network().iteration_count(), 7);
    let report = node2.finish().unwrap();
    assert_eq!((report.start_iteration, report.attempt), (7, 1));
    let stats: serde_json::Value = serde_json::from_str(&relay.stats_json()).unwrap();
    assert_eq!(stats["reconnects"], 1);
    assert_eq!(stats["perWorker"]["3"]["attemptsSeen"], 2);
}

#[test]
fn replicas_of_one_node_share_updates_locally() {
    let params = initial_params();
    let mut relay = start_relay(params.clone());
    let cfg = worker_config(
        relay.port(),
        0,
        0,
        2,
        r#"{"type":"fixed","threshold":0.001}"#,
    );
    let (mut node, mut replicas) = WorkerNode::connect(&cfg).unwrap();
    let mut rng = Rng::new(9);
    let (x, y) = batch(&mut rng, 8);
    replicas[0].fit(&x, &y, 8, None).unwrap();
    let (x, y) = batch(&mut rng, 8);
    replicas[1].fit(&x, &y, 8, None).unwrap();
    // Replica 0 still has replica 1's update in its inbox; report() applies it.
    let r0 = replicas[0].report();
    assert_eq!(r0.messages_applied_from_others, 1);
    node.finish().unwrap();
    relay.shutdown().unwrap();
    let master = relay.snapshot().unwrap();
    for r in &replicas {
        for (a, b) in r.network().params().iter().zip(&master.params) {
            assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
        }
    }
    // Both messages reached the driver once each, through one connection.
    let stats: serde_json::Value = serde_json::from_str(&relay.stats_json()).unwrap();
    assert_eq!(stats["messagesApplied"], 2);
    assert_eq!(stats["connectionsAccepted"], 1);
}

#[test]
fn bad_configuration_and_wrong_secret_are_clear_errors() {
    let params = initial_params();
    let relay = start_relay(params.clone());
    let mut cfg = worker_config(
        relay.port(),
        0,
        0,
        1,
        r#"{"type":"fixed","threshold":0.001}"#,
    );
    cfg.secret_hex = "ff".repeat(32);
    let err = WorkerNode::connect(&cfg)
        .err()
        .expect("wrong secret must fail");
    let text = err.to_string();
    assert!(
        text.contains(&format!("127.0.0.1:{}", relay.port())),
        "{text}"
    );

    let bad = worker_config(relay.port(), 0, 0, 1, r#"{"type":"fixed","threshold":-1}"#);
    let err = WorkerNode::connect(&bad)
        .err()
        .expect("negative threshold must fail");
    assert!(err.to_string().contains("threshold"), "{err}");

    let zero = worker_config(
        relay.port(),
        0,
        0,
        0,
        r#"{"type":"fixed","threshold":0.001}"#,
    );
    assert!(WorkerNode::connect(&zero).is_err());
}

/// The relay hands every connecting worker the fit's parameters and its start updater state (no
/// Spark broadcast carries them): each replica starts from exactly those arrays. A state of the
/// wrong length is refused naming both lengths.
#[test]
fn workers_start_from_the_relays_parameters_and_updater_state() {
    let params: Vec<f32> = initial_params().iter().map(|p| p * 0.5 + 0.125).collect();
    let n = params.len();
    let settings = relay_settings();
    // Adam: two values per parameter
    let state: Vec<f32> = (0..2 * n).map(|i| (i % 17) as f32 * 1e-3).collect();
    let mut relay = DriverRelay::start(&settings, params.clone(), state.clone(), 40, 3).unwrap();
    let cfg = worker_config(relay.port(), 0, 0, 2, r#"{"type":"fixed","threshold":0.001}"#);
    let (mut node, replicas) = WorkerNode::connect(&cfg).unwrap();
    for r in &replicas {
        assert_eq!(r.network().params(), &params[..]);
        assert_eq!(r.network().updater_state(), &state[..]);
    }
    node.finish().unwrap();
    relay.shutdown().unwrap();

    let short = DriverRelay::start(&settings, params, state[..n].to_vec(), 0, 0).unwrap();
    let cfg = worker_config(short.port(), 0, 0, 1, r#"{"type":"fixed","threshold":0.001}"#);
    let err = WorkerNode::connect(&cfg).err().expect("a short updater state must fail").to_string();
    assert!(
        err.contains(&format!("{n} updater-state values but the network's updater has {}", 2 * n)),
        "{err}"
    );
}

/// `start_for_nodes` sizes the largest FINISH the relay admits from the updater state and the
/// replicas per node (the Spark driver passes workersPerNode): a node's states are accepted, one
/// state more is refused, naming the bound.
#[test]
fn the_relay_admits_the_final_states_of_a_node_and_no_more() {
    let params = initial_params();
    let n = params.len();
    let mut relay = DriverRelay::start_for_nodes(&relay_settings(), params, vec![0.0; 2 * n], 2, 0, 0).unwrap();
    let state = vec![0.25f32; 2 * n];
    let cfg = worker_config(relay.port(), 0, 0, 2, r#"{"type":"fixed","threshold":0.001}"#);
    let (mut node, _trainers) = WorkerNode::connect(&cfg).unwrap();
    node.finish_with_updater_states(&[&state, &state]).unwrap();
    let cfg = worker_config(relay.port(), 1, 0, 2, r#"{"type":"fixed","threshold":0.001}"#);
    let (mut node, _trainers) = WorkerNode::connect(&cfg).unwrap();
    let e = node
        .finish_with_updater_states(&[&state, &state, &state])
        .err()
        .expect("three states from a node of two replicas must be refused")
        .to_string();
    let bound = ferrodl_sharing::payload::final_states_bytes(2, 2 * n);
    assert!(e.contains(&bound.to_string()), "{e}");
    relay.shutdown().unwrap();
    let (mean, count) = relay.final_updater_state().expect("states were sent");
    assert_eq!((count, mean[0]), (2, 0.25));
}

/// Each worker node hands its replicas' updater states to the driver with its FINISH (no Spark
/// task result carries them): the driver's relay holds their mean. A state of the wrong length
/// fails that worker's finish, naming both lengths.
#[test]
fn final_updater_states_reach_the_driver_with_finish() {
    let params = initial_params();
    let n = params.len();
    let settings = format!(
        r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{SECRET}",
            "maxMessageBytes":1048576,"maxFinalStateBytes":4194304,"queueLimit":16,"ioTimeoutMs":20000,"handshakeTimeoutMs":5000}}"#
    );
    let mut relay = DriverRelay::start(&settings, params, vec![0.0; 2 * n], 0, 0).unwrap();
    let mut out = vec![0.0; 2 * n];
    assert!(relay.final_updater_into(&mut out).unwrap_err().to_string().contains("still running"));
    let mut rng = Rng::new(3);
    let mut states = Vec::new();
    for (partition, replicas) in [(0u32, 2usize), (1, 1)] {
        let cfg = worker_config(relay.port(), partition, 0, replicas, r#"{"type":"fixed","threshold":0.001}"#);
        let (mut node, mut trainers) = WorkerNode::connect(&cfg).unwrap();
        for t in trainers.iter_mut() {
            let (x, y) = batch(&mut rng, 8);
            t.fit(&x, &y, 8, None).unwrap();
        }
        let mine: Vec<Vec<f32>> = trainers.iter().map(|t| t.network().updater_state().to_vec()).collect();
        let refs: Vec<&[f32]> = mine.iter().map(Vec::as_slice).collect();
        node.finish_with_updater_states(&refs).unwrap();
        states.extend(mine);
    }
    let cfg = worker_config(relay.port(), 2, 0, 1, r#"{"type":"fixed","threshold":0.001}"#);
    let (mut node, _trainers) = WorkerNode::connect(&cfg).unwrap();
    let e = node.finish_with_updater_states(&[&[0.5; 7]]).err().expect("a short state must fail").to_string();
    assert!(e.contains(&format!("states of 7 values, but the network's updater state has {}", 2 * n)), "{e}");
    relay.shutdown().unwrap();
    let (mean, count) = relay.final_updater_state().expect("states were sent");
    assert_eq!(count, 3);
    for (i, m) in mean.iter().enumerate() {
        let expect = states.iter().map(|s| f64::from(s[i])).sum::<f64>() / 3.0;
        assert_eq!(*m, expect as f32, "value {i}");
    }
    assert!(mean.iter().any(|v| *v != 0.0));
    // written into the driver network's arrays: the same values, the master copy's parameters
    assert!(relay.final_updater_into(&mut out).unwrap());
    assert_eq!(out, mean);
    let mut master = vec![0.0; n];
    relay.final_params_into(&mut master).unwrap();
    assert_eq!(master, relay.snapshot().unwrap().params);
    assert_eq!(relay.counters().unwrap(), (relay.snapshot().unwrap().iteration, relay.snapshot().unwrap().epoch));
    let e = relay.final_params_into(&mut [0.0; 3]).unwrap_err().to_string();
    assert!(e.contains(&format!("has {n} parameters but the driver's network has 3")), "{e}");
}
