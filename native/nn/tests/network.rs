//! Behaviour of MultiLayerNetwork: scores, training, counters, parameter and updater-state
//! round trips, seeding, configuration JSON and every validation error.

mod common;

use common::*;
use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork, NnError, ParamInit};
use ferrodl_testutil::{normal_matrix, to_f32, Rng};
use serde_json::json;

fn single_output_net(act: &str, loss: &str, l2: f64) -> MultiLayerNetwork {
    let mut out = output(2, 2, act, loss);
    out["l2"] = json!(l2);
    let mut net = MultiLayerNetwork::new(conf(1, vec![out])).unwrap();
    // W = [[1, 2], [3, 4]] (nIn × nOut, row-major), b = [0.5, -0.5].
    net.set_params(&[1.0, 2.0, 3.0, 4.0, 0.5, -0.5]).unwrap();
    net
}

#[test]
fn score_matches_hand_computation_softmax_mcxent_with_l2() {
    let mut net = single_output_net("SOFTMAX", "MCXENT", 0.1);
    // Row 0: z = [1, 2] + b = [1.5, 1.5] -> p = [0.5, 0.5], label class 0 -> ln 2.
    // Row 1: z = [3, 4] + b = [3.5, 3.5] -> p = [0.5, 0.5], label class 1 -> ln 2.
    // Mean ln 2, plus 0.5 * 0.1 * (1 + 4 + 9 + 16) = 1.5 (biases have l2Bias = 0).
    let s = net
        .score(&[1.0, 0.0, 0.0, 1.0], &[1.0, 0.0, 0.0, 1.0], 2, None)
        .unwrap();
    assert!((s - (std::f64::consts::LN_2 + 1.5)).abs() < 1e-6, "{s}");
    // An unbalanced row: x = [2, 0] -> z = [2.5, 3.5], label class 0: -ln(e^2.5/(e^2.5+e^3.5)).
    let s = net.score(&[2.0, 0.0], &[1.0, 0.0], 1, None).unwrap();
    let want = (1.0f64 + 1.0f64.exp()).ln() + 1.5;
    assert!((s - want).abs() < 1e-6, "{s} vs {want}");
}

#[test]
fn score_matches_hand_computation_mse_with_masks() {
    let mut net = single_output_net("IDENTITY", "MSE", 0.0);
    // x = [1, 2]: z = [1 + 6 + 0.5, 2 + 8 - 0.5] = [7.5, 9.5]; labels [0.5, 0.5] -> errors 7, 9.
    let x = [1.0, 2.0, 1.0, 2.0];
    let y = [0.5, 0.5, 0.5, 0.5];
    // Per example (49 + 81) / 2 = 65; mean over 2 rows = 65.
    assert!((net.score(&x, &y, 2, None).unwrap() - 65.0).abs() < 1e-4);
    // Per-example mask [1, 0]: (65 + 0) / 2 — the mean still divides by N.
    assert!((net.score(&x, &y, 2, Some((&[1.0, 0.0], 1))).unwrap() - 32.5).abs() < 1e-4);
    // Per-output mask [[1, 0], [0, 1]]: (49/2 + 81/2) / 2 = 32.5.
    assert!(
        (net.score(&x, &y, 2, Some((&[1.0, 0.0, 0.0, 1.0], 2)))
            .unwrap()
            - 32.5)
            .abs()
            < 1e-4
    );
    // Per-output mask [[1, 0], [1, 0]]: (49/2 + 49/2) / 2 = 24.5.
    assert!(
        (net.score(&x, &y, 2, Some((&[1.0, 0.0, 1.0, 0.0], 2)))
            .unwrap()
            - 24.5)
            .abs()
            < 1e-4
    );
}

#[test]
fn output_is_rows_by_n_out_and_softmax_rows_sum_to_one() {
    let mut net = MultiLayerNetwork::new(conf(
        5,
        vec![dense(3, 6, "RELU"), output(6, 4, "SOFTMAX", "MCXENT")],
    ))
    .unwrap();
    let x = to_f32(&normal_matrix(&mut Rng::new(2), 7, 3));
    let out = net.output(&x, 7, false).unwrap();
    assert_eq!(out.len(), 7 * 4);
    for row in out.chunks(4) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    assert_eq!(net.output(&x, 7, true).unwrap(), out);
}

/// Two Gaussian blobs in 4-D with well separated means, labels one-hot.
fn blobs(rows: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng::new(seed);
    let mut x = Vec::with_capacity(rows * 4);
    let mut y = Vec::with_capacity(rows * 2);
    for r in 0..rows {
        let class = r % 2;
        let centre = if class == 0 { -1.5 } else { 1.5 };
        for _ in 0..4 {
            x.push((centre + 0.5 * rng.next_gaussian()) as f32);
        }
        y.extend_from_slice(if class == 0 { &[1.0, 0.0] } else { &[0.0, 1.0] });
    }
    (x, y)
}

#[test]
fn training_on_separable_data_reduces_score_tenfold() {
    for updater in [
        json!({"type": "Adam", "learningRate": 0.05, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}),
        json!({"type": "Nesterovs", "learningRate": 0.1, "momentum": 0.9}),
        json!({"type": "Sgd", "learningRate": 0.5}),
    ] {
        let layers = with_updater(
            vec![dense(4, 8, "RELU"), output(8, 2, "SOFTMAX", "MCXENT")],
            updater.clone(),
        );
        let mut net = MultiLayerNetwork::new(conf(42, layers)).unwrap();
        let (x, y) = blobs(64, 3);
        let first = net.fit(&x, &y, 64, None).unwrap();
        let mut last = first;
        for _ in 0..99 {
            last = net.fit(&x, &y, 64, None).unwrap();
        }
        let after = net.score(&x, &y, 64, None).unwrap();
        assert!(after <= last + 1e-6 || after < 0.01);
        assert!(after * 10.0 < first, "{updater}: score {first} -> {after}");
        // Every training example classified correctly.
        let out = net.output(&x, 64, false).unwrap();
        for (o, t) in out.chunks(2).zip(y.chunks(2)) {
            assert_eq!(o[1] > o[0], t[1] > t[0]);
        }
    }
}

#[test]
fn counters_increment_per_fit_and_can_be_set() {
    let mut net = MultiLayerNetwork::new(conf(
        1,
        vec![dense(4, 3, "TANH"), output(3, 2, "SOFTMAX", "MCXENT")],
    ))
    .unwrap();
    let (x, y) = blobs(4, 1);
    assert_eq!((net.iteration_count(), net.epoch_count()), (0, 0));
    for i in 1..=3 {
        net.fit(&x, &y, 4, None).unwrap();
        assert_eq!(net.iteration_count(), i);
    }
    // Scoring and output do not count as iterations; a failed fit does not either.
    net.score(&x, &y, 4, None).unwrap();
    net.output(&x, 4, false).unwrap();
    assert!(net.fit(&x, &y, 3, None).is_err());
    assert_eq!(net.iteration_count(), 3);
    net.set_counters(100, 7);
    assert_eq!((net.iteration_count(), net.epoch_count()), (100, 7));
    net.increment_epoch_count();
    assert_eq!(net.configuration().epoch_count, 8);
    assert_eq!(net.configuration().iteration_count, 100);
    let json = net.configuration().to_json();
    assert!(
        json.contains("\"iterationCount\":100") && json.contains("\"epochCount\":8"),
        "{json}"
    );
}

#[test]
fn params_round_trip_and_layout() {
    let mut net = MultiLayerNetwork::new(conf(
        9,
        vec![dense(3, 4, "RELU"), output(4, 2, "SOFTMAX", "MCXENT")],
    ))
    .unwrap();
    assert_eq!(net.num_params(), 3 * 4 + 4 + 4 * 2 + 2);
    assert_eq!(net.param_range(0), Some(0..16));
    assert_eq!(net.param_range(1), Some(16..26));
    assert_eq!((net.n_in(), net.n_out()), (3, 2));
    let p: Vec<f32> = (0..net.num_params()).map(|i| i as f32 * 0.01).collect();
    net.set_params(&p).unwrap();
    assert_eq!(net.params(), &p[..]);
    let e = net.set_params(&p[1..]).unwrap_err();
    assert_eq!(
        e,
        NnError::InvalidInput("params have 25 values but this network has 26 parameters".into())
    );
    // The layout is W then b: with W = 0 and b = [1, 2, 3, 4] the hidden layer outputs relu(b).
    let mut q = vec![0.0f32; 26];
    q[12..16].copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    q[16..24].copy_from_slice(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    net.set_params(&q).unwrap();
    // Output z = h · W2 = [1·1, 0] -> softmax([1, 0]).
    let out = net.output(&[5.0, -3.0, 2.0], 1, false).unwrap();
    let e1 = 1.0f32.exp();
    assert!((out[0] - e1 / (e1 + 1.0)).abs() < 1e-6);
}

#[test]
fn seeded_initialisation_is_deterministic() {
    let layers = || vec![dense(20, 30, "RELU"), output(30, 5, "SOFTMAX", "MCXENT")];
    let a = MultiLayerNetwork::new(conf(1234, layers())).unwrap();
    let b = MultiLayerNetwork::new(conf(1234, layers())).unwrap();
    let c = MultiLayerNetwork::new(conf(1235, layers())).unwrap();
    assert_eq!(a.params(), b.params());
    assert_ne!(a.params(), c.params());
    // f64 network from the same seed: same draws, rounded.
    let d = MultiLayerNetwork::<f64>::from_configuration(conf(1234, layers())).unwrap();
    for (x, y) in a.params().iter().zip(d.params()) {
        assert_eq!(*x, *y as f32);
    }
    // Xavier std sqrt(2/(nIn+nOut)) = 0.2 for the 20x30 block; biases are biasInit (0).
    let w = &a.params()[..600];
    let var = w.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / 600.0;
    assert!((var.sqrt() - 0.2).abs() < 0.02, "std {}", var.sqrt());
    assert!(a.params()[600..630].iter().all(|&b| b == 0.0));
    // Negative seeds are fine (Java longs).
    assert!(MultiLayerNetwork::new(conf(-5, layers())).is_ok());
}

/// Given parameters build the same network as a seeded one followed by `set_params` (the dropout
/// RNG included: both train to the same bits), without drawing the weights; zeros leave them at 0;
/// a wrong count is refused naming both.
#[test]
fn given_parameters_skip_the_draw_and_build_the_same_network() {
    let mut first = dense(20, 30, "RELU");
    first["dropOut"] = json!(0.8);
    let layers = || vec![first.clone(), output(30, 5, "SOFTMAX", "MCXENT")];
    let donor = MultiLayerNetwork::new(conf(77, layers())).unwrap();
    let p: Vec<f32> = donor.params().iter().map(|v| v * 0.5 + 0.01).collect();
    let mut a = MultiLayerNetwork::new(conf(1234, layers())).unwrap();
    a.set_params(&p).unwrap();
    let mut b = MultiLayerNetwork::with_init(conf(1234, layers()), ParamInit::Given(&p)).unwrap();
    assert_eq!(a.params(), b.params());
    let mut rng = Rng::new(4);
    let x = to_f32(&normal_matrix(&mut rng, 8, 20));
    let mut y = vec![0.0f32; 8 * 5];
    for r in 0..8 {
        y[r * 5 + r % 5] = 1.0;
    }
    for _ in 0..3 {
        a.fit(&x, &y, 8, None).unwrap();
        b.fit(&x, &y, 8, None).unwrap();
    }
    assert_eq!(a.params(), b.params());
    let z = MultiLayerNetwork::<f32>::with_init(conf(1234, layers()), ParamInit::Zeros).unwrap();
    assert!(z.params().iter().all(|&v| v == 0.0));
    let e = MultiLayerNetwork::with_init(conf(1234, layers()), ParamInit::Given(&p[1..])).err().unwrap();
    assert!(e.to_string().contains(&format!("params have {} values but this network has {} parameters", p.len() - 1, p.len())), "{e}");
}

#[test]
fn relu_weight_init_and_bias_init() {
    let mut l = dense(50, 40, "RELU");
    l["weightInit"] = json!("RELU");
    l["biasInit"] = json!(0.25);
    let net = MultiLayerNetwork::new(conf(3, vec![l, output(40, 2, "SOFTMAX", "MCXENT")])).unwrap();
    let w = &net.params()[..2000];
    let std = (w.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / 2000.0).sqrt();
    assert!((std - 0.2).abs() < 0.01, "std {std}"); // sqrt(2/50) = 0.2
    assert!(net.params()[2000..2040].iter().all(|&b| b == 0.25));
}

#[test]
fn updater_state_export_import_continues_identically() {
    for updater in [
        json!({"type": "Adam", "learningRate": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}),
        json!({"type": "Nesterovs", "learningRate": 0.05, "momentum": 0.9}),
    ] {
        let layers = with_updater(
            vec![dense(4, 5, "TANH"), output(5, 2, "SOFTMAX", "MCXENT")],
            updater.clone(),
        );
        let mut a = MultiLayerNetwork::new(conf(11, layers.clone())).unwrap();
        let (x, y) = blobs(8, 4);
        for _ in 0..5 {
            a.fit(&x, &y, 8, None).unwrap();
        }
        let n = a.num_params();
        let expected_state = if updater["type"] == "Adam" { 2 * n } else { n };
        assert_eq!(a.updater_state().len(), expected_state);

        let mut b = MultiLayerNetwork::new(conf(99, layers.clone())).unwrap();
        b.set_params(a.params()).unwrap();
        b.set_updater_state(a.updater_state()).unwrap();
        b.set_counters(a.iteration_count(), a.epoch_count());
        // A third copy without the state diverges (shows the state matters).
        let mut c = MultiLayerNetwork::new(conf(99, layers)).unwrap();
        c.set_params(a.params()).unwrap();
        c.set_counters(a.iteration_count(), a.epoch_count());
        for _ in 0..3 {
            let sa = a.fit(&x, &y, 8, None).unwrap();
            let sb = b.fit(&x, &y, 8, None).unwrap();
            assert_eq!(sa, sb);
            c.fit(&x, &y, 8, None).unwrap();
        }
        assert_eq!(a.params(), b.params());
        assert_eq!(a.updater_state(), b.updater_state());
        assert_ne!(a.params(), c.params());
        let e = b.set_updater_state(&[0.0; 3]).unwrap_err();
        assert!(matches!(e, NnError::InvalidInput(_)));
        assert!(e.to_string().contains("updater state has 3 values"), "{e}");
    }
    // Sgd keeps no state.
    let net = MultiLayerNetwork::new(conf(1, vec![output(3, 2, "SOFTMAX", "MCXENT")])).unwrap();
    assert!(net.updater_state().is_empty());
}

const ARCH_EXAMPLE: &str = r#"{
  "formatVersion": 1,
  "seed": 12345,
  "miniBatch": true,
  "iterationCount": 0,
  "epochCount": 0,
  "inputType": null,
  "layers": [
    { "type": "DenseLayer", "name": null, "nIn": 784, "nOut": 100,
      "activation": "RELU", "weightInit": "XAVIER", "biasInit": 0.0, "hasBias": true,
      "l1": 0.0, "l2": 1e-4, "l1Bias": 0.0, "l2Bias": 0.0, "weightDecay": 0.0, "weightDecayBias": 0.0,
      "dropOut": 0.0, "weightInitDistribution": null,
      "gradientNormalization": "None", "gradientNormalizationThreshold": 1.0,
      "updater": {"type": "Adam", "learningRate": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8},
      "biasUpdater": {"type": "Adam", "learningRate": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8} },
    { "type": "OutputLayer", "name": null, "nIn": 100, "nOut": 10,
      "activation": "SOFTMAX", "weightInit": "XAVIER", "biasInit": 0.0, "hasBias": true,
      "l1": 0.0, "l2": 1e-4, "l1Bias": 0.0, "l2Bias": 0.0, "weightDecay": 0.0, "weightDecayBias": 0.0,
      "dropOut": 0.0, "weightInitDistribution": null,
      "gradientNormalization": "None", "gradientNormalizationThreshold": 1.0,
      "updater": {"type": "Sgd", "learningRate": 0.1},
      "biasUpdater": {"type": "Sgd", "learningRate": 0.1},
      "lossFunction": "MCXENT", "lossWeights": null }
  ]
}"#;

#[test]
fn json_round_trip_and_architecture_example() {
    let c = MultiLayerConfiguration::from_json(ARCH_EXAMPLE).unwrap();
    assert_eq!(c.layers.len(), 2);
    assert_eq!(c.num_params(), 784 * 100 + 100 + 100 * 10 + 10);
    let again = MultiLayerConfiguration::from_json(&c.to_json()).unwrap();
    assert_eq!(c, again);
    // The written JSON has exactly the fields of the example (same keys, same nesting).
    let written: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    let original: serde_json::Value = serde_json::from_str(ARCH_EXAMPLE).unwrap();
    assert_eq!(written, original);
    // Names survive.
    let mut l = dense(3, 2, "RELU");
    l["name"] = json!("hidden");
    let c = conf(1, vec![l, output(2, 2, "SOFTMAX", "MSE")]);
    assert_eq!(MultiLayerConfiguration::from_json(&c.to_json()).unwrap(), c);
}

#[test]
fn omitted_optional_fields_take_reference_defaults() {
    let c = MultiLayerConfiguration::from_json(
        r#"{"formatVersion":1,"seed":1,"layers":[
            {"type":"DenseLayer","nIn":3,"nOut":2},
            {"type":"OutputLayer","nIn":2,"nOut":2,"updater":{"type":"Adam"}}]}"#,
    )
    .unwrap();
    let ferrodl_nn::LayerConfig::DenseLayer(d) = &c.layers[0] else {
        panic!("expected a dense layer")
    };
    assert_eq!(d.activation, ferrodl_nn::Activation::Sigmoid);
    assert_eq!(d.weight_init, ferrodl_nn::WeightInit::Xavier);
    assert!(d.has_bias && c.mini_batch);
    assert_eq!(d.updater.to_updater(), ferrodl_optim_sgd(1e-3));
    match &c.layers[1] {
        ferrodl_nn::LayerConfig::OutputLayer(o) => {
            assert_eq!(o.loss_function, ferrodl_nn::LossFunction::Mcxent);
            assert_eq!(
                o.updater,
                ferrodl_nn::UpdaterConfig::Adam(ferrodl_optim::Adam {
                    learning_rate: 1e-3,
                    beta1: 0.9,
                    beta2: 0.999,
                    epsilon: 1e-8,
                    ..Default::default()
                })
            );
        }
        _ => panic!("expected an output layer"),
    }
}

fn ferrodl_optim_sgd(lr: f64) -> ferrodl_optim::AnyUpdater {
    ferrodl_optim::AnyUpdater::Sgd(ferrodl_optim::Sgd {
        learning_rate: lr,
        ..Default::default()
    })
}

fn config_error(v: serde_json::Value) -> String {
    match MultiLayerConfiguration::from_json(&v.to_string()) {
        Err(NnError::InvalidConfig(m)) => m,
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

#[test]
fn configuration_validation_errors() {
    let m = config_error(conf_value(
        1,
        vec![dense(4, 3, "RELU"), output(5, 2, "SOFTMAX", "MCXENT")],
    ));
    assert_eq!(
        m,
        "layer 1 (OutputLayer): nIn=5 does not match nOut=3 of layer 0 (DenseLayer)"
    );

    let mut named = dense(4, 0, "RELU");
    named["name"] = json!("h1");
    let m = config_error(conf_value(
        1,
        vec![named, output(0, 2, "SOFTMAX", "MCXENT")],
    ));
    assert_eq!(
        m,
        "layer 0 (DenseLayer \"h1\"): nOut=0 is invalid (must be at least 1)"
    );

    let m = config_error(conf_value(
        1,
        vec![dense(4, 3, "RELU"), output(3, 1, "SOFTMAX", "MCXENT")],
    ));
    assert!(
        m.starts_with("layer 1 (OutputLayer): activation SOFTMAX with nOut=1"),
        "{m}"
    );

    let m = config_error(conf_value(
        1,
        vec![dense(4, 3, "RELU"), dense(3, 2, "RELU")],
    ));
    assert_eq!(m, "layer 1 (DenseLayer): the last layer must be an OutputLayer (it defines the loss function)");

    let m = config_error(conf_value(
        1,
        vec![
            output(4, 3, "SOFTMAX", "MCXENT"),
            output(3, 2, "SOFTMAX", "MCXENT"),
        ],
    ));
    assert!(
        m.starts_with("layer 0 (OutputLayer): an OutputLayer must be the last layer"),
        "{m}"
    );

    let mut l = dense(4, 3, "RELU");
    l["updater"] = json!({"type": "Sgd", "learningRate": -0.1});
    let m = config_error(conf_value(1, vec![l, output(3, 2, "SOFTMAX", "MCXENT")]));
    assert_eq!(
        m,
        "layer 0 (DenseLayer) updater: learningRate=-0.1 is invalid (must be a finite number >= 0)"
    );

    let mut l = output(4, 2, "SOFTMAX", "MCXENT");
    l["biasUpdater"] = json!({"type": "Adam", "learningRate": 0.1, "beta1": 1.5});
    let m = config_error(conf_value(1, vec![l]));
    assert_eq!(
        m,
        "layer 0 (OutputLayer) biasUpdater: beta1=1.5 is invalid (must be in [0, 1))"
    );

    let mut l = dense(4, 3, "RELU");
    l["l2"] = json!(-1e-4);
    let m = config_error(conf_value(1, vec![l, output(3, 2, "SOFTMAX", "MCXENT")]));
    assert_eq!(
        m,
        "layer 0 (DenseLayer): l2=-0.0001 is invalid (must be a finite number >= 0)"
    );

    let mut l = dense(4, 3, "RELU");
    l["l1Bias"] = json!(-2.0);
    let m = config_error(conf_value(1, vec![l, output(3, 2, "SOFTMAX", "MCXENT")]));
    assert!(m.contains("l1Bias=-2 is invalid"), "{m}");

    let m = config_error(conf_value(
        1,
        vec![dense(4, 3, "RELU7"), output(3, 2, "SOFTMAX", "MCXENT")],
    ));
    assert!(
        m.contains("layer 0") && m.contains("unknown variant `RELU7`"),
        "{m}"
    );
    for name in ferrodl_nn::Activation::NAMES {
        assert!(m.contains(name), "{m} should list {name}");
    }

    let m = config_error(conf_value(1, vec![output(3, 2, "SOFTMAX", "XENTROPY")]));
    assert!(
        m.contains("unknown variant `XENTROPY`") && m.contains("NEGATIVELOGLIKELIHOOD"),
        "{m}"
    );

    let mut l = output(3, 2, "SOFTMAX", "MCXENT");
    l["updater"] = json!({"type": "RmsPropX", "learningRate": 0.1});
    let m = config_error(conf_value(1, vec![l]));
    assert!(
        m.contains("unknown variant `RmsPropX`") && m.contains("Nesterovs"),
        "{m}"
    );

    let mut l = output(3, 2, "SOFTMAX", "MCXENT");
    l["weightInit"] = json!("GAUSSIAN");
    let m = config_error(conf_value(1, vec![l]));
    assert!(
        m.contains("unknown variant `GAUSSIAN`") && m.contains("XAVIER"),
        "{m}"
    );

    let mut l = output(3, 2, "SOFTMAX", "MCXENT");
    l["type"] = json!("Convolution3D");
    let m = config_error(conf_value(1, vec![l]));
    assert!(
        m.contains("unknown variant `Convolution3D`") && m.contains("DenseLayer"),
        "{m}"
    );

    // Unknown fields are errors at every level.
    let mut l = output(3, 2, "SOFTMAX", "MCXENT");
    l["dropout"] = json!(0.5);
    let m = config_error(conf_value(1, vec![l]));
    assert!(
        m.contains("layer 0") && m.contains("unknown field `dropout`"),
        "{m}"
    );
    let mut l = output(3, 2, "SOFTMAX", "MCXENT");
    l["updater"]["momentum"] = json!(0.9);
    let m = config_error(conf_value(1, vec![l]));
    assert!(m.contains("unknown field `momentum`"), "{m}");
    let mut v = conf_value(1, vec![output(3, 2, "SOFTMAX", "MCXENT")]);
    v["backprop"] = json!(true);
    assert!(config_error(v).contains("unknown field `backprop`"));

    let mut v = conf_value(1, vec![output(3, 2, "SOFTMAX", "MCXENT")]);
    v["formatVersion"] = json!(2);
    assert_eq!(
        config_error(v),
        "unsupported configuration formatVersion 2 (this build reads 1)"
    );

    assert!(config_error(conf_value(1, vec![])).contains("no layers"));
    let e = MultiLayerConfiguration::from_json("{not json").unwrap_err();
    assert!(
        e.to_string().starts_with("invalid configuration JSON"),
        "{e}"
    );
    let m = config_error(json!({"formatVersion": 1, "layers": []}));
    assert!(m.contains("missing field `seed`"), "{m}");

    // A configuration built in Rust is validated by the network too.
    let mut c = conf(
        1,
        vec![dense(4, 3, "RELU"), output(3, 2, "SOFTMAX", "MCXENT")],
    );
    if let ferrodl_nn::LayerConfig::OutputLayer(o) = &mut c.layers[1] {
        o.n_in = 7;
    }
    assert!(matches!(
        MultiLayerNetwork::new(c),
        Err(NnError::InvalidConfig(_))
    ));
}

#[test]
fn input_validation_errors() {
    let mut net = MultiLayerNetwork::new(conf(
        1,
        vec![dense(784, 10, "RELU"), output(10, 3, "SOFTMAX", "MCXENT")],
    ))
    .unwrap();
    let x = vec![0.1f32; 2 * 784];
    let y = vec![1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0];

    let e = net.output(&vec![0.0; 2 * 780], 2, false).unwrap_err();
    assert_eq!(
        e,
        NnError::Shape("features have 780 columns but layer 0 (DenseLayer) expects nIn=784".into())
    );
    assert_eq!(net.check_features_shape(2, 780).unwrap_err(), e);
    let e = net.output(&vec![0.0; 100], 3, false).unwrap_err();
    assert_eq!(
        e,
        NnError::Shape(
            "features have 100 values, which is not 3 rows of 784 columns (2352 values)".into()
        )
    );
    let e = net.output(&[], 0, false).unwrap_err();
    assert_eq!(
        e,
        NnError::InvalidInput("rows must be at least 1 (the minibatch is empty)".into())
    );

    let e = net.fit(&x, &y[..4], 2, None).unwrap_err();
    assert_eq!(
        e,
        NnError::Shape(
            "labels have 2 columns but the output layer, layer 1 (OutputLayer), has nOut=3".into()
        )
    );
    assert_eq!(net.check_labels_shape(2, 2).unwrap_err(), e);

    let mut bad = x.clone();
    bad[784 + 17] = f32::NAN;
    let e = net.fit(&bad, &y, 2, None).unwrap_err();
    assert_eq!(
        e,
        NnError::InvalidInput("features contain NaN at row 1, column 17".into())
    );
    bad[784 + 17] = f32::NEG_INFINITY;
    let e = net.output(&bad, 2, false).unwrap_err();
    assert_eq!(
        e,
        NnError::InvalidInput("features contain -infinity at row 1, column 17".into())
    );
    let mut bad_y = y.clone();
    bad_y[2] = f32::INFINITY;
    let e = net.score(&x, &bad_y, 2, None).unwrap_err();
    assert_eq!(
        e,
        NnError::InvalidInput("labels contain +infinity at row 0, column 2".into())
    );

    let e = net.fit(&x, &y, 2, Some((&[1.0; 4], 2))).unwrap_err();
    assert_eq!(
        e,
        NnError::Shape("labels mask has 2 columns; it must have 1 (one value per example) or nOut=3 (one value per output)".into())
    );
    let e = net.fit(&x, &y, 2, Some((&[1.0; 5], 3))).unwrap_err();
    assert_eq!(
        e,
        NnError::Shape("labels mask has 5 values but 2 rows × 3 columns need 6".into())
    );
    let e = net.fit(&x, &y, 2, Some((&[1.0, f32::NAN], 1))).unwrap_err();
    assert_eq!(
        e,
        NnError::InvalidInput("labels mask contains NaN at row 1, column 0".into())
    );

    // Nothing above changed the network; valid calls still work, masks of both widths accepted.
    assert_eq!(net.iteration_count(), 0);
    net.fit(&x, &y, 2, Some((&[1.0, 0.0], 1))).unwrap();
    net.fit(&x, &y, 2, Some((&[1.0; 6], 3))).unwrap();
    // NnError is a std error with the message as Display.
    let boxed: Box<dyn std::error::Error> = Box::new(NnError::Shape("x".into()));
    assert_eq!(boxed.to_string(), "x");
}

#[test]
fn changing_batch_size_between_calls_works() {
    let mut net = MultiLayerNetwork::new(conf(
        2,
        vec![dense(4, 6, "SIGMOID"), output(6, 2, "SOFTMAX", "MCXENT")],
    ))
    .unwrap();
    let (x, y) = blobs(16, 5);
    let s16 = net.score(&x, &y, 16, None).unwrap();
    let s4 = net.score(&x[..16], &y[..8], 4, None).unwrap();
    let s16b = net.score(&x, &y, 16, None).unwrap();
    assert_eq!(s16, s16b);
    assert!(s4.is_finite());
    // Output of a single row equals the corresponding row of a batch.
    let all = net.output(&x, 16, false).unwrap();
    let one = net.output(&x[4..8], 1, false).unwrap();
    for (a, b) in all[2..4].iter().zip(&one) {
        assert!((a - b).abs() < 1e-6);
    }
}
