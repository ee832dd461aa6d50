//! Recurrent networks: f64 finite-difference gradient checks of LSTM, GravesLSTM, SimpleRnn,
//! RnnOutputLayer, RnnLossLayer and a dense layer applied per time step, with and without feature
//! and label masks and from a carried state (what a truncated-BPTT segment starts from);
//! `rnnTimeStep` fed step by step equals the full-sequence output; a masked, padded minibatch
//! equals its sequences run one by one; truncated BPTT of one segment equals standard BPTT; bad
//! input is a clear error.
//!
//! Criterion: `ferrodl_testutil::check_gradient` with `GradCheckConfig::default()` (h = 1e-6,
//! relative error <= 1e-6 unless the absolute difference <= 1e-8) over every parameter against
//! `score_masked()` (inference mode), parameters uniform in [-0.5, 0.5), inputs standard normal.
//! Each check runs a negative control: a 1e-4 relative error planted in the largest analytic
//! entry must be reported as exactly one failure.

use ferrodl_nn::config::MultiLayerConfiguration;
use ferrodl_nn::{MultiLayerNetwork, NnError};
use ferrodl_testutil::{
    assert_gradient_with_negative_control, check_gradient, normal_matrix, one_hot_sequences, tail_mask,
    uniform_matrix, GradCheckConfig, Rng,
};
use serde_json::{json, Value};

fn sgd() -> Value {
    json!({"type": "Sgd", "learningRate": 0.1})
}

fn rnn(kind: &str, n_in: usize, n_out: usize, act: &str) -> Value {
    json!({"type": kind, "nIn": n_in, "nOut": n_out, "activation": act,
           "updater": sgd(), "biasUpdater": sgd()})
}

fn rnn_output(n_in: usize, n_out: usize, act: &str, loss: &str) -> Value {
    json!({"type": "RnnOutputLayer", "nIn": n_in, "nOut": n_out, "activation": act,
           "lossFunction": loss, "updater": sgd(), "biasUpdater": sgd()})
}

fn net(layers: Vec<Value>, input: usize, extra: Value) -> MultiLayerNetwork<f64> {
    let mut v = json!({"formatVersion": 1, "seed": 7, "miniBatch": true,
        "inputType": {"type": "recurrent", "size": input, "timeSeriesLength": 0},
        "layers": layers});
    if let Value::Object(m) = extra {
        for (k, x) in m {
            v[k] = x;
        }
    }
    let conf = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
    MultiLayerNetwork::<f64>::from_configuration(conf).unwrap()
}

fn randomize(n: &mut MultiLayerNetwork<f64>, rng: &mut Rng) {
    let p = uniform_matrix(rng, 1, n.num_params(), -0.5, 0.5);
    n.set_params(&p).unwrap();
}

fn normal(rng: &mut Rng, n: usize) -> Vec<f64> {
    normal_matrix(rng, 1, n)
}

struct Case<'a> {
    x: &'a [f64],
    y: &'a [f64],
    rows: usize,
    fmask: Option<(&'a [f64], usize)>,
    lmask: Option<(&'a [f64], usize)>,
}

fn grad_check(what: &str, n: &mut MultiLayerNetwork<f64>, c: &Case<'_>) {
    let base = n.params().to_vec();
    let score = n
        .compute_gradient_and_score_masked(c.x, c.y, c.rows, c.fmask, c.lmask)
        .unwrap();
    assert!(score.is_finite(), "{what}: score {score}");
    let analytic = n.gradient().to_vec();
    assert!(
        analytic.iter().any(|g| g.abs() > 1e-6),
        "{what}: the gradient is all zero"
    );
    let mut p = base.clone();
    let mut f = |q: &[f64]| {
        n.set_params(q).unwrap();
        n.score_masked(c.x, c.y, c.rows, c.fmask, c.lmask).unwrap()
    };
    assert_gradient_with_negative_control(what, &mut p, &analytic, &mut f);
    n.set_params(&base).unwrap();
}

#[test]
fn recurrent_layers_pass_gradient_checks_with_and_without_masks() {
    let (rows, c_in, h, c_out, t) = (3, 4, 5, 3, 6);
    for kind in ["LSTM", "GravesLSTM", "SimpleRnn"] {
        let mut rng = Rng::new(11);
        let layers = vec![
            rnn(kind, c_in, h, "TANH"),
            // A dense layer after a recurrent one applies at every step.
            json!({"type": "DenseLayer", "nIn": h, "nOut": 4, "activation": "SOFTSIGN",
                   "updater": sgd(), "biasUpdater": sgd()}),
            rnn(kind, 4, h, "TANH"),
            rnn_output(h, c_out, "SOFTMAX", "MCXENT"),
        ];
        let mut n = net(layers, c_in, json!({}));
        randomize(&mut n, &mut rng);
        let x = normal(&mut rng, rows * c_in * t);
        let y = one_hot_sequences(&mut rng, rows, c_out, t);
        grad_check(
            &format!("{kind}, no mask"),
            &mut n,
            &Case { x: &x, y: &y, rows, fmask: None, lmask: None },
        );
        let m = tail_mask(rows, t, &[6, 4, 2]);
        grad_check(
            &format!("{kind}, feature and label masks"),
            &mut n,
            &Case { x: &x, y: &y, rows, fmask: Some((&m, t)), lmask: Some((&m, t)) },
        );
        // Labels masked where features are not (only some steps have a target).
        let lm = tail_mask(rows, t, &[3, 5, 1]);
        grad_check(
            &format!("{kind}, label mask only"),
            &mut n,
            &Case { x: &x, y: &y, rows, fmask: None, lmask: Some((&lm, t)) },
        );
    }
}

#[test]
fn rnn_loss_layer_and_gate_activations_pass_gradient_checks() {
    let (rows, c_in, h, t) = (2, 3, 4, 5);
    let mut rng = Rng::new(5);
    let mut lstm = rnn("GravesLSTM", c_in, h, "SOFTSIGN");
    lstm["gateActivationFn"] = json!("HARDSIGMOID");
    lstm["forgetGateBiasInit"] = json!(0.5);
    let layers = vec![
        lstm,
        json!({"type": "RnnLossLayer", "activation": "IDENTITY", "lossFunction": "MSE"}),
    ];
    let mut n = net(layers, c_in, json!({}));
    randomize(&mut n, &mut rng);
    let x = normal(&mut rng, rows * c_in * t);
    let y = normal(&mut rng, rows * h * t);
    grad_check(
        "GravesLSTM (softsign, hard sigmoid gates) + RnnLossLayer MSE",
        &mut n,
        &Case { x: &x, y: &y, rows, fmask: None, lmask: None },
    );
}

#[test]
fn a_set_state_is_where_rnn_time_step_starts() {
    // rnnSetPreviousState / rnnGetPreviousState move a state between networks, and a stateful
    // output differs from the stateless one.
    for kind in ["LSTM", "GravesLSTM", "SimpleRnn"] {
        let (rows, c_in, h, t) = (2, 3, 4, 4);
        let mut rng = Rng::new(3);
        let layers = vec![rnn(kind, c_in, h, "TANH"), rnn_output(h, 2, "SOFTMAX", "MCXENT")];
        let mut n = net(layers, c_in, json!({}));
        randomize(&mut n, &mut rng);
        for key in n.rnn_state_keys(0) {
            let s = normal(&mut rng, rows * h);
            n.rnn_set_previous_state(0, key, &s, rows).unwrap();
        }
        let x = normal(&mut rng, rows * c_in * t);
        // A stateful output differs from a stateless one.
        let stateless = n.output(&x, rows, false).unwrap();
        let mut probe = net(
            vec![rnn(kind, c_in, h, "TANH"), rnn_output(h, 2, "SOFTMAX", "MCXENT")],
            c_in,
            json!({}),
        );
        probe.set_params(n.params()).unwrap();
        for key in n.rnn_state_keys(0) {
            let s = n.rnn_previous_state(0, key).unwrap().to_vec();
            probe.rnn_set_previous_state(0, key, &s, rows).unwrap();
        }
        let stateful = probe.rnn_time_step(&x, rows).unwrap();
        assert!(
            stateless
                .iter()
                .zip(&stateful)
                .any(|(a, b)| (a - b).abs() > 1e-6),
            "{kind}: the state changes the output"
        );
    }
}

#[test]
fn rnn_time_step_one_step_at_a_time_equals_the_full_sequence() {
    let (rows, c_in, t) = (3, 4, 7);
    for kind in ["LSTM", "GravesLSTM", "SimpleRnn"] {
        let mut rng = Rng::new(21);
        let layers = vec![
            rnn(kind, c_in, 6, "TANH"),
            rnn(kind, 6, 5, "TANH"),
            rnn_output(5, 3, "SOFTMAX", "MCXENT"),
        ];
        let mut n = net(layers, c_in, json!({}));
        randomize(&mut n, &mut rng);
        let x = normal(&mut rng, rows * c_in * t);
        let full = n.output(&x, rows, false).unwrap();
        for split in [vec![1; t], vec![3, 4], vec![t]] {
            n.rnn_clear_previous_state();
            let mut got = vec![0.0; rows * 3 * t];
            let mut t0 = 0;
            for len in split {
                let mut xs = Vec::new();
                for i in 0..rows {
                    for c in 0..c_in {
                        let line = &x[i * c_in * t + c * t..i * c_in * t + (c + 1) * t];
                        xs.extend_from_slice(&line[t0..t0 + len]);
                    }
                }
                let out = n.rnn_time_step(&xs, rows).unwrap();
                for i in 0..rows {
                    for c in 0..3 {
                        for s in 0..len {
                            got[i * 3 * t + c * t + t0 + s] = out[i * 3 * len + c * len + s];
                        }
                    }
                }
                t0 += len;
            }
            for (a, b) in got.iter().zip(&full) {
                assert!((a - b).abs() < 1e-12, "{kind}: step by step {a} vs full {b}");
            }
        }
        // output() neither reads nor changes the rnnTimeStep state.
        let again = n.output(&x, rows, false).unwrap();
        assert_eq!(again, full);
        assert!(n.rnn_previous_state(0, "prevAct").is_some());
        n.rnn_clear_previous_state();
        assert!(n.rnn_previous_state(0, "prevAct").is_none());
    }
}

#[test]
fn a_masked_padded_batch_equals_its_sequences_one_by_one() {
    let (c_in, c_out, t) = (3, 4, 6);
    let lengths = [6usize, 3, 1];
    let rows = lengths.len();
    for kind in ["LSTM", "GravesLSTM", "SimpleRnn"] {
        let mut rng = Rng::new(8);
        let layers = vec![rnn(kind, c_in, 5, "TANH"), rnn_output(5, c_out, "SOFTMAX", "MCXENT")];
        let mut n = net(layers, c_in, json!({}));
        randomize(&mut n, &mut rng);
        let x = normal(&mut rng, rows * c_in * t);
        let y = one_hot_sequences(&mut rng, rows, c_out, t);
        let m = tail_mask(rows, t, &lengths);
        let out = n.output_masked(&x, rows, Some((&m, t)), false).unwrap();
        let per = n
            .score_examples_masked(&x, &y, rows, Some((&m, t)), Some((&m, t)), false)
            .unwrap();
        let mut total = 0.0;
        for (i, &len) in lengths.iter().enumerate() {
            let cut = |a: &[f64], c: usize| -> Vec<f64> {
                let mut v = Vec::new();
                for ch in 0..c {
                    v.extend_from_slice(&a[i * c * t + ch * t..i * c * t + ch * t + len]);
                }
                v
            };
            let (xi, yi) = (cut(&x, c_in), cut(&y, c_out));
            let oi = n.output(&xi, 1, false).unwrap();
            for ch in 0..c_out {
                for s in 0..t {
                    let got = out[i * c_out * t + ch * t + s];
                    if s < len {
                        assert!((got - oi[ch * len + s]).abs() < 1e-12, "{kind}: example {i}");
                    }
                }
            }
            let si = n.score_examples(&xi, &yi, 1, None, false).unwrap()[0];
            assert!((per[i] - si).abs() < 1e-10, "{kind}: example {i}: {} vs {si}", per[i]);
            total += si;
        }
        // score = Σ over unmasked (example, step) losses / N (the reference's).
        let score = n.score_masked(&x, &y, rows, Some((&m, t)), Some((&m, t))).unwrap();
        assert!((score - total / rows as f64).abs() < 1e-10, "{kind}: {score}");
    }
}

#[test]
fn one_segment_of_truncated_bptt_is_standard_bptt_and_segments_count_as_iterations() {
    let (rows, c_in, t) = (2, 3, 8);
    let layers = || vec![rnn("LSTM", c_in, 4, "TANH"), rnn_output(4, 2, "SOFTMAX", "MCXENT")];
    let mut rng = Rng::new(4);
    let x = normal(&mut rng, rows * c_in * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let mut standard = net(layers(), c_in, json!({}));
    let mut long = net(
        layers(),
        c_in,
        json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 8, "tbpttBackLength": 8}),
    );
    let s1 = standard.fit(&x, &y, rows, None).unwrap();
    let s2 = long.fit(&x, &y, rows, None).unwrap();
    assert_eq!(s1, s2);
    assert_eq!(standard.params(), long.params());
    // Three segments of 3, 3 and 2 steps: three iterations; the result differs from one.
    let mut tb = net(
        layers(),
        c_in,
        json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 3, "tbpttBackLength": 3}),
    );
    tb.fit(&x, &y, rows, None).unwrap();
    assert_eq!(tb.iteration_count(), 3);
    assert_ne!(tb.params(), standard.params());
    // compute_update under TBPTT: the summed update, parameters untouched, same end point.
    let mut upd = net(
        layers(),
        c_in,
        json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 3, "tbpttBackLength": 3}),
    );
    let before = upd.params().to_vec();
    upd.compute_update(&x, &y, rows, None).unwrap();
    assert_eq!(upd.params(), &before[..]);
    let moved: Vec<f64> = before.iter().zip(upd.update()).map(|(p, u)| p - u).collect();
    for (a, b) in moved.iter().zip(tb.params()) {
        assert!((a - b).abs() < 1e-12);
    }
}

#[test]
fn truncated_bptt_learns_and_back_length_limits_the_gradient() {
    // Back length 1 vs 3 on the same segments: different updates (the gradient is truncated).
    let (rows, c_in, t) = (2, 2, 6);
    let layers = || vec![rnn("SimpleRnn", c_in, 3, "TANH"), rnn_output(3, 2, "SOFTMAX", "MCXENT")];
    let mut rng = Rng::new(9);
    let x = normal(&mut rng, rows * c_in * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let tb = |back: usize| {
        let mut n = net(
            layers(),
            c_in,
            json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 3, "tbpttBackLength": back}),
        );
        n.fit(&x, &y, rows, None).unwrap();
        n.params().to_vec()
    };
    assert_ne!(tb(1), tb(3));
    // Training with TBPTT lowers the score on a fixed batch.
    let mut n = net(
        layers(),
        c_in,
        json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 2, "tbpttBackLength": 2}),
    );
    let first = n.score(&x, &y, rows, None).unwrap();
    for _ in 0..60 {
        n.fit(&x, &y, rows, None).unwrap();
    }
    let last = n.score(&x, &y, rows, None).unwrap();
    assert!(last < 0.8 * first, "score {first} -> {last}");
}

/// LSTM and GravesLSTM run each block of rows on its own thread (`layers/lstm.rs`,
/// `on_row_blocks`): with 20 rows (blocks of 16 and 4 rows on 2 threads) the output, the masked
/// gradient and a truncated-BPTT fit with a back length shorter than the segment equal one
/// thread's bit for bit, and the gradient on 2 threads passes the f64 check.
#[test]
fn lstm_rows_split_across_threads_equal_one_thread_and_pass_gradient_checks() {
    let (rows, c_in, h, c_out, t) = (20, 3, 5, 3, 7);
    for kind in ["LSTM", "GravesLSTM"] {
        let layers = || {
            vec![rnn(kind, c_in, h, "TANH"), rnn(kind, h, h, "TANH"), rnn_output(h, c_out, "SOFTMAX", "MCXENT")]
        };
        let mut rng = Rng::new(21);
        let x = normal(&mut rng, rows * c_in * t);
        let y = one_hot_sequences(&mut rng, rows, c_out, t);
        let m = tail_mask(rows, t, &[7, 5, 2, 6, 7]);
        let mut n = net(layers(), c_in, json!({}));
        randomize(&mut n, &mut rng);
        let p0 = n.params().to_vec();
        let run = |threads: usize| {
            ferrodl_tensor::set_num_threads(threads);
            let mut n = net(layers(), c_in, json!({}));
            n.set_params(&p0).unwrap();
            let out = n.output_masked(&x, rows, Some((&m, t)), false).unwrap();
            let score = n.compute_gradient_and_score_masked(&x, &y, rows, Some((&m, t)), Some((&m, t))).unwrap();
            let grad = n.gradient().to_vec();
            let tbptt = json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 4, "tbpttBackLength": 2});
            let mut tb = net(layers(), c_in, tbptt);
            tb.set_params(&p0).unwrap();
            tb.fit_masked(&x, &y, rows, Some((&m, t)), Some((&m, t))).unwrap();
            (out, score, grad, tb.params().to_vec())
        };
        let (one, two) = (run(1), run(2));
        assert!(one.2.iter().any(|g| g.abs() > 1e-6), "{kind}: zero gradient");
        assert_eq!(one, two, "{kind}: 1 thread vs 2 threads");
        grad_check(
            &format!("{kind}, 20 rows on 2 threads, masks"),
            &mut n,
            &Case { x: &x, y: &y, rows, fmask: Some((&m, t)), lmask: Some((&m, t)) },
        );
        ferrodl_tensor::set_num_threads(0);
    }
}

#[test]
fn bad_recurrent_input_is_a_clear_error() {
    let layers = vec![rnn("LSTM", 4, 3, "TANH"), rnn_output(3, 2, "SOFTMAX", "MCXENT")];
    let mut n = net(layers, 4, json!({}));
    let msg = |e: NnError| e.to_string();
    // 10 values per example are not a whole number of steps of 4 channels.
    let e = msg(n.output(&[0.0; 20], 2, false).unwrap_err());
    assert!(e.contains("not a whole number of time steps"), "{e}");
    // A mask of the wrong shape.
    let x = vec![0.1; 2 * 4 * 5];
    let e = msg(n.output_masked(&x, 2, Some((&[1.0; 8], 4)), false).unwrap_err());
    assert!(e.contains("features mask") && e.contains("[N, T] = 2×5"), "{e}");
    // Labels of the wrong number of steps.
    let e = msg(n.score(&x, &[0.0; 2 * 2 * 4], 2, None).unwrap_err());
    assert!(e.contains("labels") && e.contains("5 time steps"), "{e}");
    // TBPTT lengths must be positive.
    let v = json!({"formatVersion": 1, "seed": 1, "backpropType": "TruncatedBPTT",
        "tbpttFwdLength": 0, "inputType": {"type": "recurrent", "size": 4},
        "layers": [rnn("LSTM", 4, 3, "TANH"), rnn_output(3, 2, "SOFTMAX", "MCXENT")]});
    let e = MultiLayerConfiguration::from_json(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("tBPTTForwardLength"), "{e}");
    // An OutputLayer cannot take a recurrent input; the message names the fixes.
    let v = json!({"formatVersion": 1, "seed": 1, "inputType": {"type": "recurrent", "size": 4},
        "layers": [rnn("LSTM", 4, 3, "TANH"),
                   {"type": "OutputLayer", "nIn": 3, "nOut": 2, "activation": "SOFTMAX"}]});
    let e = MultiLayerConfiguration::from_json(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("RnnOutputLayer") && e.contains("LastTimeStep"), "{e}");
    // A recurrent layer on a feed-forward input.
    let v = json!({"formatVersion": 1, "seed": 1,
        "layers": [{"type": "DenseLayer", "nIn": 4, "nOut": 3}, rnn("LSTM", 3, 3, "TANH"),
                   rnn_output(3, 2, "SOFTMAX", "MCXENT")]});
    let e = MultiLayerConfiguration::from_json(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("layer 1 (LSTM)") && e.contains("recurrent input"), "{e}");
    // SOFTMAX inside an LSTM.
    let v = json!({"formatVersion": 1, "seed": 1, "inputType": {"type": "recurrent", "size": 4},
        "layers": [rnn("LSTM", 4, 3, "SOFTMAX"), rnn_output(3, 2, "SOFTMAX", "MCXENT")]});
    let e = MultiLayerConfiguration::from_json(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("element-wise"), "{e}");
}

#[test]
fn parameter_layout_and_initialisation_follow_the_reference() {
    let n = net(
        vec![rnn("GravesLSTM", 3, 4, "TANH"), rnn_output(4, 2, "SOFTMAX", "MCXENT")],
        3,
        json!({}),
    );
    let table: Vec<(String, Vec<usize>)> =
        n.param_table().into_iter().map(|(k, _, s)| (k, s)).collect();
    assert_eq!(
        table,
        vec![
            ("0_W".into(), vec![3, 16]),
            ("0_RW".into(), vec![4, 19]),
            ("0_b".into(), vec![16]),
            ("1_W".into(), vec![4, 2]),
            ("1_b".into(), vec![2]),
        ]
    );
    // Forget-gate bias block (units 4..8) at forgetGateBiasInit 1.0, the rest 0.
    let b = &n.params()[3 * 16 + 4 * 19..3 * 16 + 4 * 19 + 16];
    assert_eq!(&b[..4], &[0.0; 4]);
    assert_eq!(&b[4..8], &[1.0; 4]);
    assert_eq!(&b[8..], &[0.0; 8]);
    assert_eq!(n.rnn_state_keys(0), &["prevAct", "prevMem"]);
    assert!(n.rnn_state_keys(1).is_empty());
}

// ---- ComputationGraph --------------------------------------------------------------------------

fn graph(extra: Value) -> ferrodl_nn::ComputationGraph<f64> {
    let lv = |l: Value| json!({"type": "LayerVertex", "layer": l, "preProcessor": null});
    let mut v = json!({"formatVersion": 1, "seed": 5, "miniBatch": true,
        "networkInputs": ["seq"], "networkOutputs": ["out"],
        "inputTypes": [{"type": "recurrent", "size": 3}],
        "vertices": [
            {"name": "a", "inputs": ["seq"], "vertex": lv(rnn("LSTM", 3, 4, "TANH"))},
            {"name": "b", "inputs": ["seq"], "vertex": lv(rnn("SimpleRnn", 3, 2, "TANH"))},
            {"name": "m", "inputs": ["a", "b"], "vertex": {"type": "MergeVertex"}},
            {"name": "out", "inputs": ["m"], "vertex": lv(rnn_output(6, 2, "SOFTMAX", "MCXENT"))}
        ]});
    if let Value::Object(m) = extra {
        for (k, x) in m {
            v[k] = x;
        }
    }
    let conf = ferrodl_nn::ComputationGraphConfiguration::from_json(&v.to_string()).unwrap();
    ferrodl_nn::ComputationGraph::<f64>::from_configuration(conf).unwrap()
}

#[test]
fn a_recurrent_graph_with_merged_branches_passes_gradient_checks_and_steps() {
    let (rows, t) = (3, 5);
    let mut rng = Rng::new(2);
    let mut g = graph(json!({}));
    let p = uniform_matrix(&mut rng, 1, g.num_params(), -0.5, 0.5);
    g.set_params(&p).unwrap();
    let x = normal(&mut rng, rows * 3 * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let m = tail_mask(rows, t, &[5, 3, 2]);
    for masked in [false, true] {
        let fm = [masked.then_some((&m[..], t))];
        let lm = [masked.then_some((&m[..], t))];
        g.compute_gradient_and_score(&[&x], &[&y], rows, &fm, &lm).unwrap();
        let analytic = g.gradient().to_vec();
        let mut q = p.clone();
        let mut f = |q: &[f64]| {
            g.set_params(q).unwrap();
            g.score(&[&x], &[&y], rows, &fm, &lm).unwrap()
        };
        let report = check_gradient(&mut q, &analytic, &mut f, GradCheckConfig::default());
        assert!(report.passed(), "graph, masked={masked}: {report}");
        g.set_params(&p).unwrap();
    }
    // rnnTimeStep one step at a time equals the full output.
    let full = g.output(&[&x], rows, false, &[]).unwrap().remove(0);
    g.rnn_clear_previous_state();
    for s in 0..t {
        let xs: Vec<f64> = (0..rows * 3).map(|r| x[r * t + s]).collect();
        let o = g.rnn_time_step(&[&xs], rows).unwrap().remove(0);
        for r in 0..rows * 2 {
            assert!((o[r] - full[r * t + s]).abs() < 1e-12, "step {s}");
        }
    }
    assert_eq!(g.rnn_state_keys("a").unwrap(), &["prevAct", "prevMem"]);
    assert!(g.rnn_previous_state("b", "prevAct").unwrap().is_some());
    assert!(g.rnn_state_keys("m").unwrap_err().to_string().contains("not a layer"));
    // One truncated-BPTT segment = standard BPTT; three segments = three iterations.
    let mut a = graph(json!({}));
    let mut b = graph(json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 5,
                             "tbpttBackLength": 5}));
    assert_eq!(
        a.fit(&[&x], &[&y], rows, &[], &[]).unwrap(),
        b.fit(&[&x], &[&y], rows, &[], &[]).unwrap()
    );
    assert_eq!(a.params(), b.params());
    let mut c = graph(json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 2,
                             "tbpttBackLength": 2}));
    c.fit(&[&x], &[&y], rows, &[Some((&m[..], t))], &[Some((&m[..], t))]).unwrap();
    assert_eq!(c.iteration_count(), 3);
}

#[test]
fn without_an_input_type_a_recurrent_first_layer_reads_sequences_of_its_n_in() {
    // The reference's character model never calls setInputType.
    let v = json!({"formatVersion": 1, "seed": 1,
        "layers": [rnn("GravesLSTM", 5, 4, "TANH"), rnn_output(4, 5, "SOFTMAX", "MCXENT")]});
    let conf = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
    let mut n = MultiLayerNetwork::<f64>::from_configuration(conf).unwrap();
    let out = n.output(&vec![0.1; 2 * 5 * 7], 2, false).unwrap();
    assert_eq!(out.len(), 2 * 5 * 7);
    let g = json!({"formatVersion": 1, "seed": 1, "networkInputs": ["in"], "networkOutputs": ["out"],
        "vertices": [
            {"name": "l", "inputs": ["in"], "vertex": {"type": "LayerVertex", "layer": rnn("LSTM", 5, 4, "TANH")}},
            {"name": "out", "inputs": ["l"], "vertex": {"type": "LayerVertex", "layer": rnn_output(4, 2, "SOFTMAX", "MCXENT")}}]});
    let conf = ferrodl_nn::ComputationGraphConfiguration::from_json(&g.to_string()).unwrap();
    let mut g = ferrodl_nn::ComputationGraph::<f64>::from_configuration(conf).unwrap();
    assert_eq!(g.output(&[&vec![0.1; 3 * 5 * 2]], 3, false, &[]).unwrap()[0].len(), 3 * 2 * 2);
}

fn output_layer(n_in: usize, n_out: usize) -> Value {
    json!({"type": "OutputLayer", "nIn": n_in, "nOut": n_out, "activation": "SOFTMAX",
           "lossFunction": "MCXENT", "updater": sgd(), "biasUpdater": sgd()})
}

/// One-hot labels `[N, C]`.
fn one_hot_flat(rng: &mut Rng, rows: usize, c: usize) -> Vec<f64> {
    let mut y = vec![0.0; rows * c];
    for i in 0..rows {
        let k = (uniform_matrix(rng, 1, 1, 0.0, c as f64)[0] as usize).min(c - 1);
        y[i * c + k] = 1.0;
    }
    y
}

#[test]
fn last_time_step_and_global_pooling_reduce_sequences_with_masks() {
    let (rows, c_in, t) = (3, 3, 5);
    let lengths = [5usize, 2, 4];
    let m = tail_mask(rows, t, &lengths);
    let reducers = vec![
        ("LastTimeStep", vec![json!({"type": "LastTimeStep", "underlying": rnn("GravesLSTM", c_in, 4, "TANH")})]),
        ("GlobalPooling AVG", vec![rnn("SimpleRnn", c_in, 4, "TANH"),
            json!({"type": "GlobalPoolingLayer", "poolingType": "AVG"})]),
        ("GlobalPooling MAX", vec![rnn("LSTM", c_in, 4, "TANH"),
            json!({"type": "GlobalPoolingLayer", "poolingType": "MAX"})]),
        ("GlobalPooling PNORM", vec![rnn("LSTM", c_in, 4, "TANH"),
            json!({"type": "GlobalPoolingLayer", "poolingType": "PNORM", "pnorm": 2})]),
    ];
    for (what, mut layers) in reducers {
        let mut rng = Rng::new(13);
        layers.push(output_layer(4, 3));
        let mut n = net(layers, c_in, json!({}));
        randomize(&mut n, &mut rng);
        let x = normal(&mut rng, rows * c_in * t);
        let y = one_hot_flat(&mut rng, rows, 3);
        grad_check(&format!("{what}, no mask"), &mut n,
            &Case { x: &x, y: &y, rows, fmask: None, lmask: None });
        grad_check(&format!("{what}, feature mask"), &mut n,
            &Case { x: &x, y: &y, rows, fmask: Some((&m, t)), lmask: None });
        // Padded and masked = each sequence alone at its own length.
        let out = n.output_masked(&x, rows, Some((&m, t)), false).unwrap();
        for (i, &len) in lengths.iter().enumerate() {
            let mut xi = Vec::new();
            for ch in 0..c_in {
                xi.extend_from_slice(&x[i * c_in * t + ch * t..i * c_in * t + ch * t + len]);
            }
            let oi = n.output(&xi, 1, false).unwrap();
            for k in 0..3 {
                assert!((out[i * 3 + k] - oi[k]).abs() < 1e-12, "{what}: example {i}");
            }
        }
    }
}

fn graph_check(what: &str, g: &mut ferrodl_nn::ComputationGraph<f64>, xs: &[&[f64]], ys: &[&[f64]],
               rows: usize, fm: &[Option<(&[f64], usize)>]) {
    let p = g.params().to_vec();
    g.compute_gradient_and_score(xs, ys, rows, fm, &[]).unwrap();
    let analytic = g.gradient().to_vec();
    let mut q = p.clone();
    let mut f = |q: &[f64]| {
        g.set_params(q).unwrap();
        g.score(xs, ys, rows, fm, &[]).unwrap()
    };
    let report = check_gradient(&mut q, &analytic, &mut f, GradCheckConfig::default());
    assert!(report.passed(), "{what}: {report}");
    g.set_params(&p).unwrap();
}

#[test]
fn time_series_vertices_reduce_and_repeat_by_a_named_input() {
    let lv = |l: Value| json!({"type": "LayerVertex", "layer": l, "preProcessor": null});
    let (rows, t) = (3, 4);
    let lengths = [4usize, 1, 3];
    let m = tail_mask(rows, t, &lengths);
    // seq -> LSTM -> LastTimeStepVertex(mask of "seq") -> output; plus a static vector repeated
    // over the sequence's steps and merged into the LSTM's input.
    let v = json!({"formatVersion": 1, "seed": 5, "networkInputs": ["seq", "static"],
        "networkOutputs": ["out"],
        "inputTypes": [{"type": "recurrent", "size": 3}, {"type": "feedForward", "size": 2}],
        "vertices": [
            {"name": "dup", "inputs": ["static"], "vertex": {"type": "DuplicateToTimeSeriesVertex", "inputName": "seq"}},
            {"name": "both", "inputs": ["seq", "dup"], "vertex": {"type": "MergeVertex"}},
            {"name": "lstm", "inputs": ["both"], "vertex": lv(rnn("LSTM", 5, 4, "TANH"))},
            {"name": "last", "inputs": ["lstm"], "vertex": {"type": "LastTimeStepVertex", "maskArrayInputName": "seq"}},
            {"name": "out", "inputs": ["last"], "vertex": lv(output_layer(4, 2))}]});
    let conf = ferrodl_nn::ComputationGraphConfiguration::from_json(&v.to_string()).unwrap();
    let mut g = ferrodl_nn::ComputationGraph::<f64>::from_configuration(conf).unwrap();
    let mut rng = Rng::new(6);
    let p = uniform_matrix(&mut rng, 1, g.num_params(), -0.5, 0.5);
    g.set_params(&p).unwrap();
    let x = normal(&mut rng, rows * 3 * t);
    let s = normal(&mut rng, rows * 2);
    let y = one_hot_flat(&mut rng, rows, 2);
    graph_check("time-series vertices", &mut g, &[&x, &s], &[&y], rows, &[None, None]);
    graph_check("time-series vertices, masked", &mut g, &[&x, &s], &[&y], rows,
        &[Some((&m, t)), None]);
    let out = g.output(&[&x, &s], rows, false, &[Some((&m, t)), None]).unwrap().remove(0);
    for (i, &len) in lengths.iter().enumerate() {
        let mut xi = Vec::new();
        for ch in 0..3 {
            xi.extend_from_slice(&x[i * 3 * t + ch * t..i * 3 * t + ch * t + len]);
        }
        let oi = g.output(&[&xi, &s[i * 2..i * 2 + 2]], 1, false, &[]).unwrap().remove(0);
        for k in 0..2 {
            assert!((out[i * 2 + k] - oi[k]).abs() < 1e-12, "example {i}");
        }
    }
    // An unknown input name is a configuration error naming the vertex.
    let bad = v.to_string().replace("\"inputName\":\"seq\"", "\"inputName\":\"nope\"");
    let e = ferrodl_nn::ComputationGraphConfiguration::from_json(&bad)
        .and_then(ferrodl_nn::ComputationGraph::<f64>::from_configuration)
        .unwrap_err()
        .to_string();
    assert!(e.contains("vertex \"dup\"") && e.contains("\"nope\" is not a network input"), "{e}");
}

#[test]
fn explicit_recurrent_preprocessors_frame_layers_applied_per_step() {
    let layers = vec![
        rnn("LSTM", 3, 4, "TANH"),
        json!({"type": "DenseLayer", "nIn": 4, "nOut": 5, "activation": "RELU"}),
        rnn_output(5, 2, "SOFTMAX", "MCXENT"),
    ];
    let with = net(layers.clone(), 3, json!({"inputPreProcessors": {
        "1": {"type": "RnnToFeedForwardPreProcessor"},
        "2": {"type": "FeedForwardToRnnPreProcessor"}}}));
    let mut without = net(layers.clone(), 3, json!({}));
    let mut with = with;
    let x = vec![0.3; 2 * 3 * 6];
    assert_eq!(with.output(&x, 2, false).unwrap(), without.output(&x, 2, false).unwrap());
    let bad = json!({"formatVersion": 1, "seed": 1, "inputType": {"type": "recurrent", "size": 3},
        "inputPreProcessors": {"0": {"type": "CnnToRnnPreProcessor", "inputHeight": 2,
                                      "inputWidth": 2, "numChannels": 1}},
        "layers": layers.clone()});
    let e = MultiLayerConfiguration::from_json(&bad.to_string()).unwrap_err().to_string();
    assert!(e.contains("layer 0 (LSTM)") && e.contains("must follow an RnnToCnnPreProcessor"), "{e}");
    let bad = json!({"formatVersion": 1, "seed": 1, "inputType": {"type": "recurrent", "size": 3},
        "inputPreProcessors": {"7": {"type": "RnnToFeedForwardPreProcessor"}}, "layers": layers});
    let e = MultiLayerConfiguration::from_json(&bad.to_string()).unwrap_err().to_string();
    assert!(e.contains("\"7\""), "{e}");
}

#[test]
fn truncated_bptt_with_last_time_step_is_refused_and_wrappers_imply_recurrent_input() {
    let last = json!({"type": "LastTimeStep", "underlying": rnn("LSTM", 2, 3, "TANH")});
    let v = json!({"formatVersion": 1, "seed": 1, "backpropType": "TruncatedBPTT",
        "tbpttFwdLength": 5, "tbpttBackLength": 5,
        "layers": [last.clone(), output_layer(3, 2)]});
    let e = MultiLayerConfiguration::from_json(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("layer 0 (LastTimeStep)") && e.contains("truncated BPTT"), "{e}");
    // Without inputType, LastTimeStep(LSTM nIn=2) reads sequences of 2 channels.
    let v = json!({"formatVersion": 1, "seed": 1, "layers": [last, output_layer(3, 2)]});
    let conf = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
    let mut n = MultiLayerNetwork::<f64>::from_configuration(conf).unwrap();
    assert_eq!(n.output(&[0.5; 2 * 2 * 6], 2, false).unwrap().len(), 4);
}

/// Steps `t0..t1` of every row of an NCW array of `c` channels and `t` steps.
fn steps_of(a: &[f64], rows: usize, c: usize, t: usize, t0: usize, t1: usize) -> Vec<f64> {
    let mut v = Vec::new();
    for i in 0..rows {
        for ch in 0..c {
            let line = i * c * t + ch * t;
            v.extend_from_slice(&a[line + t0..line + t1]);
        }
    }
    v
}

#[test]
fn truncated_bptt_gradient_across_a_segment_boundary_passes_a_gradient_check() {
    // The second segment of a TBPTT minibatch starts from the state the first left and does not
    // backpropagate into it: its gradient is that of the segment's loss with the carried state
    // held fixed. With Sgd(lr = 1) the update of the last segment is its gradient g2, taken at
    // θ1 = params after + g2, from the state the first segment reached at the initial θ0 (which
    // rnnTimeStep reproduces). Finite differences of the second segment's loss, started from that
    // state with rnnSetPreviousState, must match g2.
    let one = json!({"type": "Sgd", "learningRate": 1.0});
    let layer = |kind: &str, n_in: usize, n_out: usize| {
        json!({"type": kind, "nIn": n_in, "nOut": n_out, "activation": "TANH",
               "updater": one, "biasUpdater": one})
    };
    let (rows, c_in, c_out, t, seg) = (2, 3, 2, 7, 4);
    for (what, layers) in [
        ("LSTM + SimpleRnn", vec![layer("LSTM", c_in, 4), layer("SimpleRnn", 4, 3)]),
        ("GravesLSTM", vec![layer("GravesLSTM", c_in, 3)]),
    ] {
        let recurrent = layers.len();
        let mut all = layers.clone();
        all.push(json!({"type": "RnnOutputLayer", "nIn": 3, "nOut": c_out,
            "activation": "IDENTITY", "lossFunction": "MSE", "updater": one, "biasUpdater": one}));
        let tb = json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": seg,
                        "tbpttBackLength": seg});
        let mut n = net(all.clone(), c_in, tb);
        let mut probe = net(all, c_in, json!({}));
        let mut rng = Rng::new(17);
        randomize(&mut n, &mut rng);
        let theta0 = n.params().to_vec();
        let x = normal(&mut rng, rows * c_in * t);
        let y = normal(&mut rng, rows * c_out * t);
        let (x1, x2) = (steps_of(&x, rows, c_in, t, 0, seg), steps_of(&x, rows, c_in, t, seg, t));
        let y2 = steps_of(&y, rows, c_out, t, seg, t);
        // The state the first segment leaves, at θ0.
        probe.set_params(&theta0).unwrap();
        probe.rnn_clear_previous_state();
        probe.rnn_time_step(&x1, rows).unwrap();
        let carried: Vec<(usize, &str, Vec<f64>)> = (0..recurrent)
            .flat_map(|i| {
                let p = &probe;
                p.rnn_state_keys(i)
                    .iter()
                    .map(move |k| (i, *k, p.rnn_previous_state(i, k).unwrap().to_vec()))
            })
            .collect();
        assert!(carried.iter().all(|(_, _, s)| s.iter().any(|v| v.abs() > 1e-3)));
        // The reference's MSE: per step Σ (y − ŷ)² / nOut, summed over steps, / N.
        let mse = |out: &[f64], y: &[f64]| {
            out.iter().zip(y).map(|(o, l)| (o - l) * (o - l)).sum::<f64>() / (c_out * rows) as f64
        };
        probe.rnn_clear_previous_state();
        let from_zero = probe.rnn_time_step(&x1, rows).unwrap();
        let y1 = steps_of(&y, rows, c_out, t, 0, seg);
        let s1 = probe.score(&x1, &y1, rows, None).unwrap();
        assert!((mse(&from_zero, &y1) - s1).abs() < 1e-12, "{what}: the loss by hand is the score");
        // Segment 2's loss from the carried state, as a function of the parameters.
        let mut loss2 = |q: &[f64]| {
            probe.set_params(q).unwrap();
            for (i, k, s) in &carried {
                probe.rnn_set_previous_state(*i, k, s, rows).unwrap();
            }
            let out = probe.rnn_time_step(&x2, rows).unwrap();
            mse(&out, &y2)
        };
        n.fit(&x, &y, rows, None).unwrap();
        assert_eq!(n.iteration_count(), 2, "{what}: two segments");
        let g2 = n.gradient().to_vec();
        let mut theta1: Vec<f64> = n.params().iter().zip(&g2).map(|(p, g)| p + g).collect();
        assert!(theta1.iter().zip(&theta0).any(|(a, b)| (a - b).abs() > 1e-6));
        let cfg = GradCheckConfig::default();
        let report = check_gradient(&mut theta1, &g2, &mut loss2, cfg);
        assert!(report.passed(), "{what}: {report}");
        // Negative control: the gradient with the state treated as zero (no carry) fails.
        let mut zero_start = net(
            {
                let mut l = layers.clone();
                l.push(json!({"type": "RnnOutputLayer", "nIn": 3, "nOut": c_out,
                    "activation": "IDENTITY", "lossFunction": "MSE"}));
                l
            },
            c_in,
            json!({}),
        );
        zero_start.set_params(&theta1).unwrap();
        zero_start.compute_gradient_and_score(&x2, &y2, rows, None).unwrap();
        let wrong = zero_start.gradient().to_vec();
        let bad = check_gradient(&mut theta1, &wrong, &mut loss2, cfg);
        assert!(!bad.passed(), "{what}: the gradient without the carried state must fail");
    }
}

/// Each of `rows` rows `[C, T]` → `[T, C]` (NCW → NWC).
fn to_nwc(a: &[f64], rows: usize, c: usize) -> Vec<f64> {
    let t = a.len() / (rows * c);
    let mut v = Vec::with_capacity(a.len());
    for i in 0..rows {
        for s in 0..t {
            for ch in 0..c {
                v.push(a[i * c * t + ch * t + s]);
            }
        }
    }
    v
}

#[test]
fn the_nwc_layout_is_the_ncw_network_on_transposed_arrays() {
    // The same network with rnnDataFormat NWC on its layers takes [N, T, C] features and labels
    // and gives [N, T, C] outputs; the numbers are those of the NCW network on transposed arrays.
    let (rows, c_in, c_out, t) = (3, 3, 2, 6);
    let with = |fmt: &str, tb: bool| {
        let l = |kind: &str, n_in: usize, n_out: usize| {
            json!({"type": kind, "nIn": n_in, "nOut": n_out, "activation": "TANH",
                   "rnnDataFormat": fmt, "updater": {"type": "Adam", "learningRate": 0.01},
                   "biasUpdater": {"type": "Adam", "learningRate": 0.01}})
        };
        let mut out = l("RnnOutputLayer", 3, c_out);
        out["lossFunction"] = json!("MCXENT");
        out["activation"] = json!("SOFTMAX");
        let extra = if tb {
            json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 4, "tbpttBackLength": 4})
        } else {
            json!({})
        };
        net(vec![l("LSTM", c_in, 4), l("SimpleRnn", 4, 3), out], c_in, extra)
    };
    let mut rng = Rng::new(31);
    let x = normal(&mut rng, rows * c_in * t);
    let y = one_hot_sequences(&mut rng, rows, c_out, t);
    let fm = tail_mask(rows, t, &[6, 4, 5]);
    // a per-output labels mask ([N, C, T] like the labels)
    let lm: Vec<f64> = (0..rows * c_out * t).map(|k| if k % 5 == 0 { 0.0 } else { 1.0 }).collect();
    let (xw, yw, lmw) = (to_nwc(&x, rows, c_in), to_nwc(&y, rows, c_out), to_nwc(&lm, rows, c_out));
    for tb in [false, true] {
        let mut ncw = with("NCW", tb);
        let mut nwc = with("NWC", tb);
        randomize(&mut ncw, &mut rng);
        nwc.set_params(ncw.params()).unwrap();
        let o1 = ncw.output_masked(&x, rows, Some((&fm, t)), false).unwrap();
        let o2 = nwc.output_masked(&xw, rows, Some((&fm, t)), false).unwrap();
        assert_eq!(to_nwc(&o1, rows, c_out), o2, "output, tbptt {tb}");
        let s1 = ncw.score_masked(&x, &y, rows, Some((&fm, t)), Some((&lm, c_out * t))).unwrap();
        let s2 = nwc.score_masked(&xw, &yw, rows, Some((&fm, t)), Some((&lmw, c_out * t))).unwrap();
        assert_eq!(s1, s2, "score with a per-output labels mask");
        let e1 = ncw.score_examples_masked(&x, &y, rows, Some((&fm, t)), None, true).unwrap();
        let e2 = nwc.score_examples_masked(&xw, &yw, rows, Some((&fm, t)), None, true).unwrap();
        assert_eq!(e1, e2, "scoreExamples");
        for _ in 0..2 {
            ncw.fit_masked(&x, &y, rows, Some((&fm, t)), Some((&lm, c_out * t))).unwrap();
            nwc.fit_masked(&xw, &yw, rows, Some((&fm, t)), Some((&lmw, c_out * t))).unwrap();
        }
        assert_eq!(ncw.params(), nwc.params(), "fit, tbptt {tb}");
        assert_eq!(ncw.iteration_count(), if tb { 4 } else { 2 });
        // rnnTimeStep of the first two steps
        let first_nwc: Vec<f64> =
            (0..rows).flat_map(|i| xw[i * t * c_in..i * t * c_in + 2 * c_in].to_vec()).collect();
        let step1 = nwc.rnn_time_step(&first_nwc, rows).unwrap();
        ncw.rnn_clear_previous_state();
        let mut first_ncw = Vec::new();
        for i in 0..rows {
            for ch in 0..c_in {
                first_ncw.extend_from_slice(&x[i * c_in * t + ch * t..i * c_in * t + ch * t + 2]);
            }
        }
        let step1_ncw = ncw.rnn_time_step(&first_ncw, rows).unwrap();
        assert_eq!(to_nwc(&step1_ncw, rows, c_out), step1, "rnnTimeStep");
    }
}

#[test]
fn a_graph_takes_and_gives_nwc_arrays_where_its_input_type_and_output_layer_say_so() {
    let (rows, t) = (3, 5);
    let lv = |l: Value| json!({"type": "LayerVertex", "layer": l, "preProcessor": null});
    let mut out = rnn_output(6, 2, "SOFTMAX", "MCXENT");
    out["rnnDataFormat"] = json!("NWC");
    let nwc_vertices = json!([
        {"name": "a", "inputs": ["seq"], "vertex": lv(rnn("LSTM", 3, 4, "TANH"))},
        {"name": "b", "inputs": ["seq"], "vertex": lv(rnn("SimpleRnn", 3, 2, "TANH"))},
        {"name": "m", "inputs": ["a", "b"], "vertex": {"type": "MergeVertex"}},
        {"name": "out", "inputs": ["m"], "vertex": lv(out)}
    ]);
    let mut ncw = graph(json!({}));
    let mut nwc = graph(json!({"inputTypes": [{"type": "recurrent", "size": 3, "format": "NWC"}],
                               "vertices": nwc_vertices}));
    let mut rng = Rng::new(8);
    let p = uniform_matrix(&mut rng, 1, ncw.num_params(), -0.5, 0.5);
    ncw.set_params(&p).unwrap();
    nwc.set_params(&p).unwrap();
    let x = normal(&mut rng, rows * 3 * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let m = tail_mask(rows, t, &[5, 3, 2]);
    let (xw, yw) = (to_nwc(&x, rows, 3), to_nwc(&y, rows, 2));
    let fm = [Some((&m[..], t))];
    let o1 = ncw.output(&[&x], rows, false, &fm).unwrap().remove(0);
    let o2 = nwc.output(&[&xw], rows, false, &fm).unwrap().remove(0);
    assert_eq!(to_nwc(&o1, rows, 2), o2);
    assert_eq!(
        ncw.score(&[&x], &[&y], rows, &fm, &fm).unwrap(),
        nwc.score(&[&xw], &[&yw], rows, &fm, &fm).unwrap()
    );
    ncw.fit(&[&x], &[&y], rows, &fm, &fm).unwrap();
    nwc.fit(&[&xw], &[&yw], rows, &fm, &fm).unwrap();
    assert_eq!(ncw.params(), nwc.params());
}

fn conv(n_in: usize, n_out: usize) -> Value {
    json!({"type": "ConvolutionLayer", "nIn": n_in, "nOut": n_out, "kernelSize": [3, 3],
           "stride": [1, 1], "padding": [0, 0], "activation": "TANH",
           "updater": sgd(), "biasUpdater": sgd()})
}

fn max_pool() -> Value {
    json!({"type": "SubsamplingLayer", "poolingType": "MAX", "kernelSize": [2, 2], "stride": [2, 2]})
}

fn rnn_to_cnn(h: usize, w: usize, c: usize) -> Value {
    json!({"type": "RnnToCnnPreProcessor", "inputHeight": h, "inputWidth": w, "numChannels": c})
}

#[test]
fn convolutions_run_at_every_time_step_between_rnn_to_cnn_and_cnn_to_rnn() {
    // [N, 1·4·4, T] -> RnnToCnn -> conv 3x3 (2 maps, 2x2) -> max pool 2x2 (1x1) -> (CnnToRnn) ->
    // LSTM -> RnnOutputLayer: the reference's per-frame CNN feeding an RNN.
    let (rows, t) = (3, 5);
    let layers = vec![conv(1, 2), max_pool(), rnn("LSTM", 2, 3, "TANH"), rnn_output(3, 2, "SOFTMAX", "MCXENT")];
    let seq_in = json!({"type": "recurrent", "size": 16});
    let implied = json!({"formatVersion": 1, "seed": 3, "inputType": seq_in,
        "inputPreProcessors": {"0": rnn_to_cnn(4, 4, 1)}, "layers": layers});
    let explicit = json!({"formatVersion": 1, "seed": 3, "inputType": seq_in,
        "inputPreProcessors": {"0": rnn_to_cnn(4, 4, 1),
            "2": {"type": "CnnToRnnPreProcessor", "inputHeight": 1, "inputWidth": 1, "numChannels": 2}},
        "layers": layers});
    let build = |v: &Value| {
        let c = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
        MultiLayerNetwork::<f64>::from_configuration(c).unwrap()
    };
    let (mut a, mut b) = (build(&implied), build(&explicit));
    let mut rng = Rng::new(12);
    randomize(&mut a, &mut rng);
    b.set_params(a.params()).unwrap();
    let x = normal(&mut rng, rows * 16 * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let m = tail_mask(rows, t, &[5, 3, 4]);
    assert_eq!(a.output(&x, rows, false).unwrap(), b.output(&x, rows, false).unwrap(), "implied == explicit");
    for fm in [None, Some((&m[..], t))] {
        grad_check("RnnToCnn -> conv -> pool -> LSTM", &mut a, &Case { x: &x, y: &y, rows, fmask: fm, lmask: fm });
    }
    // The region alone equals the same CNN run on the N·T step images one by one.
    let region = json!({"formatVersion": 1, "seed": 3, "inputType": seq_in,
        "inputPreProcessors": {"0": rnn_to_cnn(4, 4, 1)},
        "layers": [conv(1, 2), max_pool(), {"type": "RnnLossLayer", "activation": "IDENTITY", "lossFunction": "MSE"}]});
    let cnn = json!({"formatVersion": 1, "seed": 3,
        "inputType": {"type": "convolutional", "height": 4, "width": 4, "channels": 1},
        "layers": [conv(1, 2), max_pool(), {"type": "LossLayer", "activation": "IDENTITY", "lossFunction": "MSE"}]});
    let (mut r, mut c) = (build(&region), build(&cnn));
    let conv_params = a.params()[..a.param_range(0).unwrap().end].to_vec();
    r.set_params(&conv_params).unwrap();
    c.set_params(&conv_params).unwrap();
    let per_step = r.output(&x, rows, false).unwrap(); // [N, 2, T]
    for i in 0..rows {
        for s in 0..t {
            let image: Vec<f64> = (0..16).map(|k| x[i * 16 * t + k * t + s]).collect();
            let o = c.output(&image, 1, false).unwrap();
            for ch in 0..2 {
                assert!((per_step[i * 2 * t + ch * t + s] - o[ch]).abs() < 1e-12, "example {i} step {s}");
            }
        }
    }
    // Refusals name the preprocessor and the shapes.
    let e = config_err(json!({"formatVersion": 1, "seed": 3, "inputType": {"type": "recurrent", "size": 15},
        "inputPreProcessors": {"0": rnn_to_cnn(4, 4, 1)}, "layers": [conv(1, 2), max_pool(),
        rnn("LSTM", 2, 3, "TANH"), rnn_output(3, 2, "SOFTMAX", "MCXENT")]}));
    assert!(e.contains("RnnToCnnPreProcessor(4x4x1) needs a recurrent input of") && e.contains("16"), "{e}");
    let e = config_err(json!({"formatVersion": 1, "seed": 3, "inputType": seq_in,
        "inputPreProcessors": {"0": rnn_to_cnn(4, 4, 1)},
        "layers": [conv(1, 2), max_pool(), {"type": "OutputLayer", "nIn": 2, "nOut": 2,
            "activation": "SOFTMAX", "lossFunction": "MCXENT"}]}));
    assert!(e.contains("layer 2 (OutputLayer)") && e.contains("RnnOutputLayer"), "{e}");
}

#[test]
fn a_preprocessors_rnn_data_format_is_the_layout_of_its_sequence_side() {
    // The same per-frame CNN + LSTM as above, its input declared NWC: an RnnToCnnPreProcessor
    // that says NWC reads [N, T, 16] and gives what the NCW network gives on [N, 16, T].
    let (rows, t) = (3, 4);
    let layers = json!([conv(1, 2), max_pool(), rnn("LSTM", 2, 3, "TANH"), rnn_output(3, 2, "SOFTMAX", "MCXENT")]);
    let mut nwc_pre = rnn_to_cnn(4, 4, 1);
    nwc_pre["rnnDataFormat"] = json!("NWC");
    let conf = |input: Value, pre: &Value, layers: &Value| json!({"formatVersion": 1, "seed": 3,
        "inputType": input, "inputPreProcessors": {"0": pre}, "layers": layers});
    let ncw_in = json!({"type": "recurrent", "size": 16});
    let nwc_in = json!({"type": "recurrent", "size": 16, "format": "NWC"});
    let build = |v: &Value| {
        let c = MultiLayerConfiguration::from_json(&v.to_string())?;
        MultiLayerNetwork::<f64>::from_configuration(c)
    };
    let mut a = build(&conf(ncw_in.clone(), &rnn_to_cnn(4, 4, 1), &layers)).unwrap();
    let mut b = build(&conf(nwc_in.clone(), &nwc_pre, &layers)).unwrap();
    let mut rng = Rng::new(31);
    randomize(&mut a, &mut rng);
    b.set_params(a.params()).unwrap();
    let x = normal(&mut rng, rows * 16 * t);
    let mut x_nwc = vec![0.0; x.len()];
    for i in 0..rows {
        for k in 0..16 {
            for s in 0..t {
                x_nwc[(i * t + s) * 16 + k] = x[(i * 16 + k) * t + s];
            }
        }
    }
    let (oa, ob) = (a.output(&x, rows, false).unwrap(), b.output(&x_nwc, rows, false).unwrap());
    assert_eq!(oa, ob, "NWC input read by an NWC RnnToCnn == NCW");
    let refused = |v: Value| match build(&v) {
        Ok(_) => panic!("accepted: {v}"),
        Err(e) => e.to_string(),
    };
    // An NCW preprocessor on an NWC input (the reference would swap steps and channels).
    let e = refused(conf(nwc_in, &rnn_to_cnn(4, 4, 1), &layers));
    assert!(e.contains("layer 0 (ConvolutionLayer)") && e.contains("RnnToCnnPreProcessor has rnnDataFormat NCW")
        && e.contains("the network input, which is NWC") && e.contains("give the preprocessor rnnDataFormat NWC"), "{e}");
    // ... on an NWC recurrent layer's output.
    let mut lstm_nwc = rnn("LSTM", 16, 16, "TANH");
    lstm_nwc["rnnDataFormat"] = json!("NWC");
    let after_lstm = |pre: &Value| json!({"formatVersion": 1, "seed": 3, "inputType": ncw_in,
        "inputPreProcessors": {"1": pre}, "layers": [lstm_nwc, conv(1, 2), max_pool(),
            rnn("LSTM", 2, 3, "TANH"), rnn_output(3, 2, "SOFTMAX", "MCXENT")]});
    let e = refused(after_lstm(&rnn_to_cnn(4, 4, 1)));
    assert!(e.contains("layer 1 (ConvolutionLayer)") && e.contains("layer 0 (LSTM), which is NWC"), "{e}");
    build(&after_lstm(&nwc_pre)).unwrap();
    // A CnnToRnnPreProcessor writing NWC for an LSTM that reads NCW.
    let back = json!({"type": "CnnToRnnPreProcessor", "inputHeight": 1, "inputWidth": 1, "numChannels": 2,
        "rnnDataFormat": "NWC"});
    let e = refused(json!({"formatVersion": 1, "seed": 3, "inputType": ncw_in,
        "inputPreProcessors": {"0": rnn_to_cnn(4, 4, 1), "2": back}, "layers": layers}));
    assert!(e.contains("layer 2 (LSTM)") && e.contains("CnnToRnnPreProcessor has rnnDataFormat NWC")
        && e.contains("its output is read by the layer itself, which is NCW"), "{e}");
}

fn config_err(v: Value) -> String {
    match MultiLayerConfiguration::from_json(&v.to_string()) {
        Ok(c) => match MultiLayerNetwork::<f64>::from_configuration(c) {
            Ok(_) => panic!("accepted: {v}"),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    }
}

#[test]
fn truncated_bptt_refuses_bad_labels_and_masks_before_any_segment() {
    let layers = vec![rnn("LSTM", 3, 4, "TANH"), rnn_output(4, 2, "SOFTMAX", "MCXENT")];
    let mut n = net(layers, 3, json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 3,
                                      "tbpttBackLength": 3}));
    let (rows, t) = (2, 8);
    let mut rng = Rng::new(6);
    let x = normal(&mut rng, rows * 3 * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let before = n.params().to_vec();
    let e = n.fit(&x, &y[..rows * 2 * (t - 1)], rows, None).unwrap_err().to_string();
    assert!(e.contains("labels have 28 values") && e.contains("8 time steps"), "{e}");
    let m = vec![1.0; rows * (t - 1)];
    let e = n.fit_masked(&x, &y, rows, Some((&m, t - 1)), None).unwrap_err().to_string();
    assert!(e.contains("features mask"), "{e}");
    let mut bad = x.clone();
    bad[5] = f64::NAN;
    assert!(n.fit(&bad, &y, rows, None).unwrap_err().to_string().contains("NaN"));
    assert_eq!(n.params(), &before[..], "nothing trained");
    assert_eq!(n.iteration_count(), 0);
    n.fit(&x, &y, rows, None).unwrap();
    assert_eq!(n.iteration_count(), 3);
}

#[test]
fn simple_rnn_with_layer_norm_by_hand_and_gradient_checks() {
    let (c_in, h) = (3, 4);
    let mut l = rnn("SimpleRnn", c_in, h, "TANH");
    l["hasLayerNorm"] = json!(true);
    let layers = vec![l, rnn_output(h, 2, "SOFTMAX", "MCXENT")];
    let mut n = net(layers, c_in, json!({}));
    let table = n.param_table();
    let keys: Vec<&str> = table.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(keys, ["0_W", "0_RW", "0_b", "0_g", "1_W", "1_b"]);
    let g = table[3].1.clone();
    assert_eq!(table[3].2, vec![2 * h]);
    assert!(n.params()[g.clone()].iter().all(|&v| v == 1.0), "gains start at 1");
    let mut rng = Rng::new(40);
    randomize(&mut n, &mut rng);
    // By hand: one example, two steps.
    let p = n.params().to_vec();
    let (w, rw) = (&p[..c_in * h], &p[c_in * h..c_in * h + h * h]);
    let (b, gg) = (&p[c_in * h + h * h..c_in * h + h * h + h], &p[g]);
    let ln = |u: &[f64]| -> Vec<f64> {
        let m = u.iter().sum::<f64>() / u.len() as f64;
        let sd = (u.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / u.len() as f64).sqrt();
        u.iter().map(|v| (v - m) / sd).collect()
    };
    let x = normal(&mut rng, c_in * 2); // NCW, one example: x[c*2 + s]
    let xw = |s: usize| -> Vec<f64> {
        (0..h).map(|j| (0..c_in).map(|c| x[c * 2 + s] * w[c * h + j]).sum()).collect()
    };
    let h1: Vec<f64> = ln(&xw(0)).iter().enumerate().map(|(j, v)| (gg[j] * v + b[j]).tanh()).collect();
    let r: Vec<f64> = (0..h).map(|j| (0..h).map(|k| h1[k] * rw[k * h + j]).sum()).collect();
    let (lx, lr) = (ln(&xw(1)), ln(&r));
    let h2: Vec<f64> = (0..h).map(|j| (gg[j] * lx[j] + b[j] + gg[h + j] * lr[j]).tanh()).collect();
    n.rnn_clear_previous_state();
    n.rnn_time_step(&x, 1).unwrap();
    let got = n.rnn_previous_state(0, "prevAct").unwrap().to_vec();
    for j in 0..h {
        assert!((got[j] - h2[j]).abs() < 1e-12, "unit {j}: {} vs {}", got[j], h2[j]);
    }
    // f64 gradient checks with and without masks (gains included).
    let (rows, t) = (3, 5);
    let x = normal(&mut rng, rows * c_in * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let m = tail_mask(rows, t, &[5, 3, 4]);
    grad_check("SimpleRnn hasLayerNorm", &mut n, &Case { x: &x, y: &y, rows, fmask: None, lmask: None });
    grad_check(
        "SimpleRnn hasLayerNorm, masked",
        &mut n,
        &Case { x: &x, y: &y, rows, fmask: Some((&m, t)), lmask: Some((&m, t)) },
    );
}
