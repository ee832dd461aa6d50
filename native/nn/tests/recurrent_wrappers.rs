//! The recurrent wrappers and the sequence embedding: `Bidirectional` (CONCAT, ADD, MUL, AVERAGE),
//! `TimeDistributed`, `MaskZeroLayer` and `EmbeddingSequenceLayer` — f64 finite-difference
//! gradient checks with and without feature masks, outputs against hand computation or against
//! the layers they are made of, the reference's refusals, JSON round trips and bad
//! configurations.
//!
//! Gradient-check criterion as tests/recurrent.rs: `ferrodl_testutil::check_gradient` with
//! `GradCheckConfig::default()` (h = 1e-6, relative error <= 1e-6 unless the absolute difference
//! <= 1e-8) over every parameter against `score_masked()` (inference mode), parameters uniform in
//! [-0.5, 0.5), inputs standard normal; each check runs a negative control (a 1e-4 relative error
//! planted in the largest analytic entry must be reported as exactly one failure).

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

fn bidi(kind: &str, n_in: usize, h: usize, mode: &str) -> Value {
    json!({"type": "Bidirectional", "mode": mode, "fwd": rnn(kind, n_in, h, "TANH")})
}

fn dense(n_in: usize, n_out: usize, act: &str) -> Value {
    json!({"type": "DenseLayer", "nIn": n_in, "nOut": n_out, "activation": act,
           "updater": sgd(), "biasUpdater": sgd()})
}

fn rnn_output(n_in: usize, n_out: usize, act: &str, loss: &str) -> Value {
    json!({"type": "RnnOutputLayer", "nIn": n_in, "nOut": n_out, "activation": act,
           "lossFunction": loss, "updater": sgd(), "biasUpdater": sgd()})
}

/// An identity loss layer: the network's output is the previous layer's activation.
fn identity_out() -> Value {
    json!({"type": "RnnLossLayer", "activation": "IDENTITY", "lossFunction": "MSE"})
}

fn conf(layers: &[Value], input: Option<Value>, extra: Value) -> Value {
    let mut v = json!({"formatVersion": 1, "seed": 7, "miniBatch": true, "layers": layers});
    if let Some(t) = input {
        v["inputType"] = t;
    }
    if let Value::Object(m) = extra {
        for (k, x) in m {
            v[k] = x;
        }
    }
    v
}

fn recurrent(size: usize) -> Option<Value> {
    Some(json!({"type": "recurrent", "size": size, "timeSeriesLength": 0}))
}

fn build(v: &Value) -> MultiLayerNetwork<f64> {
    let conf = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
    MultiLayerNetwork::<f64>::from_configuration(conf).unwrap()
}

fn net(layers: &[Value], input: usize) -> MultiLayerNetwork<f64> {
    build(&conf(layers, recurrent(input), json!({})))
}

fn config_error(v: &Value) -> String {
    match MultiLayerConfiguration::from_json(&v.to_string()) {
        Ok(_) => panic!("accepted: {v}"),
        Err(e) => e.to_string(),
    }
}

fn randomize(n: &mut MultiLayerNetwork<f64>, rng: &mut Rng) {
    let p = uniform_matrix(rng, 1, n.num_params(), -0.5, 0.5);
    n.set_params(&p).unwrap();
}

fn normal(rng: &mut Rng, n: usize) -> Vec<f64> {
    normal_matrix(rng, 1, n)
}

/// Steps `0..len` of example `i` of an NCW array of `c` channels and `t` steps.
fn cut(a: &[f64], i: usize, c: usize, t: usize, len: usize) -> Vec<f64> {
    let mut v = Vec::new();
    for ch in 0..c {
        v.extend_from_slice(&a[i * c * t + ch * t..i * c * t + ch * t + len]);
    }
    v
}

/// Each line of `t` values reversed (one example's NCW row: one line per channel).
fn reversed(a: &[f64], t: usize) -> Vec<f64> {
    a.chunks(t).flat_map(|l| l.iter().rev().copied()).collect()
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

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

// ---- Bidirectional -------------------------------------------------------------------------

#[test]
fn bidirectional_passes_gradient_checks_in_every_mode_with_and_without_masks() {
    let (rows, c_in, h, c_out, t) = (3, 3, 3, 2, 5);
    // Two stacked wrappers, so the first one's input gradient (both directions) is checked too.
    for (mode, a, b) in [
        ("CONCAT", "LSTM", "SimpleRnn"),
        ("ADD", "GravesLSTM", "LSTM"),
        ("MUL", "SimpleRnn", "GravesLSTM"),
        ("AVERAGE", "LSTM", "GravesLSTM"),
    ] {
        let mut rng = Rng::new(13);
        let w = if mode == "CONCAT" { 2 * h } else { h };
        let layers = [
            bidi(a, c_in, h, mode),
            bidi(b, w, h, mode),
            rnn_output(w, c_out, "SOFTMAX", "MCXENT"),
        ];
        let mut n = net(&layers, c_in);
        randomize(&mut n, &mut rng);
        let x = normal(&mut rng, rows * c_in * t);
        let y = one_hot_sequences(&mut rng, rows, c_out, t);
        grad_check(
            &format!("Bidirectional {mode} ({a}, {b}), no mask"),
            &mut n,
            &Case { x: &x, y: &y, rows, fmask: None, lmask: None },
        );
        let m = tail_mask(rows, t, &[5, 3, 1]);
        grad_check(
            &format!("Bidirectional {mode} ({a}, {b}), padded ends"),
            &mut n,
            &Case { x: &x, y: &y, rows, fmask: Some((&m, t)), lmask: Some((&m, t)) },
        );
        // A hole in the middle: the whole mask is reversed for the backward direction.
        let holes = [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        grad_check(
            &format!("Bidirectional {mode} ({a}, {b}), masked steps inside"),
            &mut n,
            &Case { x: &x, y: &y, rows, fmask: Some((&holes, t)), lmask: None },
        );
    }
}

#[test]
fn bidirectional_equals_its_two_directions_with_each_example_reversed_in_its_own_steps() {
    let (c_in, h, t) = (3, 4, 5);
    let lengths = [5usize, 3, 1];
    let rows = lengths.len();
    for kind in ["LSTM", "GravesLSTM", "SimpleRnn"] {
        let mut rng = Rng::new(17);
        let x = normal(&mut rng, rows * c_in * t);
        let m = tail_mask(rows, t, &lengths);
        let mut single = net(&[rnn(kind, c_in, h, "TANH"), identity_out()], c_in);
        let p = uniform_matrix(&mut rng, 1, 2 * single.num_params(), -0.5, 0.5);
        let n_copy = single.num_params();
        // One direction run by hand on example i's own steps (reversed for the backward copy).
        let mut direction = |params: &[f64], xi: &[f64], len: usize, backward: bool| {
            single.set_params(params).unwrap();
            if backward {
                reversed(&single.output(&reversed(xi, len), 1, false).unwrap(), len)
            } else {
                single.output(xi, 1, false).unwrap()
            }
        };
        let mut by_hand = Vec::new();
        for (i, &len) in lengths.iter().enumerate() {
            let xi = cut(&x, i, c_in, t, len);
            by_hand.push((
                direction(&p[..n_copy], &xi, len, false),
                direction(&p[n_copy..], &xi, len, true),
            ));
        }
        for mode in ["CONCAT", "ADD", "MUL", "AVERAGE"] {
            let mut n = net(&[bidi(kind, c_in, h, mode), identity_out()], c_in);
            n.set_params(&p).unwrap();
            let out = n.output_masked(&x, rows, Some((&m, t)), false).unwrap();
            let c_out = if mode == "CONCAT" { 2 * h } else { h };
            assert_eq!(out.len(), rows * c_out * t);
            for (i, &len) in lengths.iter().enumerate() {
                let (f, b) = &by_hand[i];
                for s in 0..t {
                    for j in 0..h {
                        let (fv, bv) = if s < len { (f[j * len + s], b[j * len + s]) } else { (0.0, 0.0) };
                        let at = |ch: usize| out[i * c_out * t + ch * t + s];
                        let (got, want) = match mode {
                            "CONCAT" => ((at(j), at(h + j)), (fv, bv)),
                            "ADD" => ((at(j), 0.0), (fv + bv, 0.0)),
                            "MUL" => ((at(j), 0.0), (fv * bv, 0.0)),
                            _ => ((at(j), 0.0), ((fv + bv) / 2.0, 0.0)),
                        };
                        assert!(
                            (got.0 - want.0).abs() < 1e-12 && (got.1 - want.1).abs() < 1e-12,
                            "{kind} {mode}: example {i} step {s} unit {j}: {got:?} vs {want:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bidirectional_concat_of_one_step_by_hand_and_its_parameter_keys() {
    // SimpleRnn over one step from a zero state: tanh(x·W + b) per direction.
    let (c_in, h) = (2, 3);
    let mut n = net(&[bidi("SimpleRnn", c_in, h, "CONCAT"), identity_out()], c_in);
    let keys: Vec<(String, Vec<usize>)> =
        n.param_table().into_iter().map(|(k, _, s)| (k, s)).collect();
    let want: Vec<(String, Vec<usize>)> = [
        ("0_fW", vec![c_in, h]),
        ("0_fRW", vec![h, h]),
        ("0_fb", vec![h]),
        ("0_bW", vec![c_in, h]),
        ("0_bRW", vec![h, h]),
        ("0_bb", vec![h]),
    ]
    .into_iter()
    .map(|(k, s)| (k.to_string(), s))
    .collect();
    assert_eq!(keys, want);
    let p: Vec<f64> = (0..n.num_params()).map(|k| ((k * 7 % 11) as f64 - 5.0) / 10.0).collect();
    n.set_params(&p).unwrap();
    let x = [0.3, -0.8];
    let out = n.output(&x, 1, false).unwrap();
    let copy = c_in * h + h * h + h;
    for (d, base) in [(0usize, 0usize), (1, copy)] {
        for j in 0..h {
            let z = x[0] * p[base + j] + x[1] * p[base + h + j] + p[base + c_in * h + h * h + j];
            assert!((out[d * h + j] - z.tanh()).abs() < 1e-14, "direction {d} unit {j}");
        }
    }
    // The initialisation draws each copy separately: the two copies differ.
    let fresh = net(&[bidi("LSTM", c_in, h, "ADD"), identity_out()], c_in);
    let half = fresh.num_params() / 2;
    assert_ne!(&fresh.params()[..half], &fresh.params()[half..]);
    // The forget-gate bias (1.0) is set in both copies: b = [a | f | o | g] blocks of h.
    let b_f = &fresh.params()[half - 4 * h + h..half - 4 * h + 2 * h];
    let b_b = &fresh.params()[2 * half - 4 * h + h..2 * half - 4 * h + 2 * h];
    assert!(b_f.iter().chain(b_b).all(|&v| v == 1.0));
}

#[test]
fn bidirectional_cannot_step_or_train_with_truncated_bptt() {
    let (rows, c_in, t) = (2, 3, 4);
    let layers = [bidi("LSTM", c_in, 2, "CONCAT"), rnn_output(4, 2, "SOFTMAX", "MCXENT")];
    let mut n = net(&layers, c_in);
    let mut rng = Rng::new(2);
    let x = normal(&mut rng, rows * c_in * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let e = n.rnn_time_step(&x, rows).unwrap_err().to_string();
    assert!(
        e.contains("layer 0 (Bidirectional)") && e.contains("rnnTimeStep is not possible"),
        "{e}"
    );
    assert!(n.rnn_state_keys(0).is_empty());
    let e = n
        .rnn_set_previous_state(0, "prevAct", &[0.0; 4], rows)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Bidirectional") && e.contains("no rnnTimeStep state"), "{e}");
    // Whole-sequence inference and training still work after the refusal.
    let before = n.params().to_vec();
    n.fit(&x, &y, rows, None).unwrap();
    assert_ne!(n.params(), &before[..]);
    let mut tb = build(&conf(
        &layers,
        recurrent(c_in),
        json!({"backpropType": "TruncatedBPTT", "tbpttFwdLength": 2, "tbpttBackLength": 2}),
    ));
    let e = tb.fit(&x, &y, rows, None).unwrap_err().to_string();
    assert!(e.contains("truncated BPTT is not possible with a Bidirectional"), "{e}");
    // Refused through another wrapper too.
    let mut out = rnn_output(4, 2, "SOFTMAX", "MCXENT");
    out["type"] = json!("OutputLayer");
    let mut last = net(
        &[json!({"type": "LastTimeStep", "underlying": bidi("LSTM", c_in, 2, "CONCAT")}), out],
        c_in,
    );
    let e = last.rnn_time_step(&x, rows).unwrap_err().to_string();
    assert!(e.contains("layer 0 (LastTimeStep)") && e.contains("rnnTimeStep is not possible"), "{e}");
}

#[test]
fn bidirectional_configuration_round_trips_and_bad_ones_are_named() {
    // mode absent: CONCAT; no inputType: the wrapped layer's nIn gives a sequence input.
    let mut fwd = rnn("GravesLSTM", 3, 4, "TANH");
    fwd["l2"] = json!(0.01);
    let v = conf(
        &[json!({"type": "Bidirectional", "fwd": fwd}), rnn_output(8, 2, "SOFTMAX", "MCXENT")],
        None,
        json!({}),
    );
    let c = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
    let text = c.to_json();
    assert!(text.contains("\"mode\":\"CONCAT\""), "{text}");
    assert_eq!(MultiLayerConfiguration::from_json(&text).unwrap(), c);
    let n = MultiLayerNetwork::<f64>::from_configuration(c).unwrap();
    // 2 × (W 3×16, RW 4×19, b 16) + output 8×2 + 2.
    assert_eq!(n.num_params(), 2 * (48 + 76 + 16) + 18);
    let mut ok = build(&v);
    let x = vec![0.5; 2 * 3 * 6];
    assert_eq!(ok.output(&x, 2, false).unwrap().len(), 2 * 2 * 6);
    // The wrapped layer's l2 applies to the weights of both copies (fW, fRW, bW, bRW).
    let y = vec![0.5; 2 * 2 * 6];
    let with_l2 = ok.score(&x, &y, 2, None).unwrap();
    let mut plain_v = v.clone();
    plain_v["layers"][0]["fwd"]["l2"] = json!(0.0);
    let mut plain = build(&plain_v);
    plain.set_params(ok.params()).unwrap();
    let mut l2 = 0.0;
    for (key, range, _) in ok.param_table() {
        if ["0_fW", "0_fRW", "0_bW", "0_bRW"].contains(&key.as_str()) {
            l2 += 0.5 * 0.01 * ok.params()[range].iter().map(|w| w * w).sum::<f64>();
        }
    }
    let without = plain.score(&x, &y, 2, None).unwrap();
    assert!((with_l2 - without - l2).abs() < 1e-12, "{with_l2} - {without} vs {l2}");

    let bad = |layer: Value| config_error(&conf(&[layer, identity_out()], recurrent(3), json!({})));
    let e = bad(json!({"type": "Bidirectional", "fwd": dense(3, 2, "TANH")}));
    assert!(
        e.contains("layer 0 (Bidirectional)") && e.contains("not a DenseLayer"),
        "{e}"
    );
    let e = bad(json!({"type": "Bidirectional", "mode": "SUM", "fwd": rnn("LSTM", 3, 2, "TANH")}));
    assert!(e.contains("SUM"), "{e}");
    let e = bad(json!({"type": "Bidirectional", "nOut": 4, "fwd": rnn("LSTM", 3, 2, "TANH")}));
    assert!(e.contains("nOut"), "{e}");
    let e = bad(bidi("LSTM", 5, 2, "ADD"));
    assert!(
        e.contains("layer 0 (Bidirectional) fwd (LSTM): nIn=5 does not match the 3 channels"),
        "{e}"
    );
    let e = bad(json!({"type": "Bidirectional", "fwd": rnn("SimpleRnn", 3, 2, "SOFTMAX")}));
    assert!(e.contains("fwd (SimpleRnn)") && e.contains("element-wise"), "{e}");
    // nIn inferred into the wrapped layer.
    let mut c = MultiLayerConfiguration::parse_json(
        &conf(
            &[json!({"type": "Bidirectional", "mode": "ADD",
                     "fwd": {"type": "LSTM", "nOut": 2}}), identity_out()],
            recurrent(3),
            json!({}),
        )
        .to_string(),
    )
    .unwrap();
    c.resolve().unwrap();
    assert_eq!(c.layers[0].n_in(), Some(3));
}

// ---- TimeDistributed -----------------------------------------------------------------------

fn time_distributed(inner: Value) -> Value {
    json!({"type": "TimeDistributed", "underlying": inner, "rnnDataFormat": "NCW"})
}

#[test]
fn time_distributed_applies_its_layer_at_every_step() {
    let (rows, c_in, o, t) = (2, 3, 2, 4);
    let mut n = net(&[time_distributed(dense(c_in, o, "SIGMOID")), identity_out()], c_in);
    let mut rng = Rng::new(4);
    randomize(&mut n, &mut rng);
    let p = n.params().to_vec();
    let x = normal(&mut rng, rows * c_in * t);
    let out = n.output(&x, rows, false).unwrap();
    for i in 0..rows {
        for s in 0..t {
            for j in 0..o {
                let mut z = p[c_in * o + j];
                for c in 0..c_in {
                    z += x[i * c_in * t + c * t + s] * p[c * o + j];
                }
                let got = out[i * o * t + j * t + s];
                assert!((got - sigmoid(z)).abs() < 1e-14, "example {i} step {s} unit {j}");
            }
        }
    }
    assert_eq!(
        n.param_table().iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["0_W", "0_b"]
    );
    // Any length per call.
    assert_eq!(n.output(&x[..rows * c_in * 2], rows, false).unwrap().len(), rows * o * 2);
}

#[test]
fn time_distributed_passes_gradient_checks_with_and_without_masks() {
    let (rows, c_in, h, t) = (3, 3, 4, 5);
    let mut rng = Rng::new(6);
    let layers = [
        rnn("LSTM", c_in, h, "TANH"),
        time_distributed(dense(h, 3, "SOFTSIGN")),
        rnn("SimpleRnn", 3, 3, "TANH"),
        rnn_output(3, 2, "SOFTMAX", "MCXENT"),
    ];
    let mut n = net(&layers, c_in);
    randomize(&mut n, &mut rng);
    let x = normal(&mut rng, rows * c_in * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    grad_check("TimeDistributed, no mask", &mut n, &Case { x: &x, y: &y, rows, fmask: None, lmask: None });
    let m = tail_mask(rows, t, &[5, 2, 4]);
    grad_check(
        "TimeDistributed, feature and label masks",
        &mut n,
        &Case { x: &x, y: &y, rows, fmask: Some((&m, t)), lmask: Some((&m, t)) },
    );
}

#[test]
fn time_distributed_configuration_round_trips_and_bad_ones_are_named() {
    let v = conf(&[time_distributed(dense(3, 2, "TANH")), identity_out()], None, json!({}));
    let c = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
    assert_eq!(MultiLayerConfiguration::from_json(&c.to_json()).unwrap(), c);
    // No inputType: the wrapped layer's nIn channels of any length.
    let mut n = build(&v);
    assert_eq!(n.output(&[0.1; 2 * 3 * 5], 2, false).unwrap().len(), 2 * 2 * 5);
    // nIn inferred into the wrapped layer from the channels.
    let mut c = MultiLayerConfiguration::parse_json(
        &conf(
            &[time_distributed(json!({"type": "DenseLayer", "nOut": 2})), identity_out()],
            recurrent(3),
            json!({}),
        )
        .to_string(),
    )
    .unwrap();
    c.resolve().unwrap();
    assert_eq!(c.layers[0].n_in(), Some(3));

    let bad = |layer: Value, input: Option<Value>| {
        config_error(&conf(&[layer, identity_out()], input, json!({})))
    };
    let e = bad(time_distributed(rnn("LSTM", 3, 2, "TANH")), recurrent(3));
    assert!(e.contains("layer 0 (TimeDistributed)") && e.contains("not a LSTM"), "{e}");
    let mut out = rnn_output(3, 2, "SOFTMAX", "MCXENT");
    out["type"] = json!("OutputLayer");
    let e = bad(time_distributed(out), recurrent(3));
    assert!(e.contains("cannot wrap an output layer (OutputLayer)"), "{e}");
    let e = bad(
        time_distributed(dense(3, 2, "TANH")),
        Some(json!({"type": "feedForward", "size": 3})),
    );
    assert!(e.contains("TimeDistributed needs a recurrent input"), "{e}");
    let e = bad(time_distributed(dense(4, 2, "TANH")), recurrent(3));
    assert!(
        e.contains("layer 0 (TimeDistributed) underlying (DenseLayer): nIn=4 does not match"),
        "{e}"
    );
    let mut nwc = time_distributed(dense(3, 2, "TANH"));
    nwc["rnnDataFormat"] = json!("NWC");
    // NWC is a layout of the network's own arrays (crate::layout); a layer inside takes it.
    build(&conf(&[nwc, identity_out()], recurrent(3), json!({})));
}

// ---- MaskZeroLayer -------------------------------------------------------------------------

fn mask_zero(inner: Value, value: f64) -> Value {
    json!({"type": "MaskZeroLayer", "underlying": inner, "maskingValue": value})
}

/// `x` with the steps outside each example's length set to `value` in every channel.
fn padded(x: &[f64], c: usize, t: usize, lengths: &[usize], value: f64) -> Vec<f64> {
    let mut v = x.to_vec();
    for (i, &len) in lengths.iter().enumerate() {
        for ch in 0..c {
            for s in len..t {
                v[i * c * t + ch * t + s] = value;
            }
        }
    }
    v
}

#[test]
fn mask_zero_equals_the_explicit_mask_of_its_padding() {
    let (c_in, h, t) = (3, 4, 6);
    let lengths = [6usize, 4, 2];
    let rows = lengths.len();
    for (kind, value) in [("LSTM", 0.0), ("GravesLSTM", -1.0), ("SimpleRnn", 0.0)] {
        let mut rng = Rng::new(31);
        let mut plain = net(&[rnn(kind, c_in, h, "TANH"), identity_out()], c_in);
        randomize(&mut plain, &mut rng);
        let mut mz = net(&[mask_zero(rnn(kind, c_in, h, "TANH"), value), identity_out()], c_in);
        mz.set_params(plain.params()).unwrap();
        let mut x = padded(&normal(&mut rng, rows * c_in * t), c_in, t, &lengths, value);
        // A real step with only some features equal to the masking value stays real.
        x[c_in * t + 1] = value;
        let m = tail_mask(rows, t, &lengths);
        let want = plain.output_masked(&x, rows, Some((&m, t)), false).unwrap();
        let got = mz.output(&x, rows, false).unwrap();
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() < 1e-14, "{kind}: {a} vs {b}");
        }
        assert_ne!(
            want,
            plain.output(&x, rows, false).unwrap(),
            "{kind}: the padding changes the unmasked output"
        );
        // The derived mask replaces a feature mask given with the input (the reference's
        // setMaskArray): masking a real step changes nothing.
        let mut holes = m.clone();
        holes[1] = 0.0;
        assert_eq!(mz.output_masked(&x, rows, Some((&holes, t)), false).unwrap(), got);
        // Step by step equals the whole sequence (the derived mask applies to every call).
        mz.rnn_clear_previous_state();
        let mut stepped = vec![0.0; got.len()];
        for s in 0..t {
            let xs: Vec<f64> = (0..rows * c_in).map(|k| x[k * t + s]).collect();
            let o = mz.rnn_time_step(&xs, rows).unwrap();
            for k in 0..rows * h {
                stepped[k * t + s] = o[k];
            }
        }
        for (a, b) in stepped.iter().zip(&got) {
            assert!((a - b).abs() < 1e-12, "{kind} stepped: {a} vs {b}");
        }
        assert_eq!(mz.rnn_state_keys(0), plain.rnn_state_keys(0));
        assert!(mz.rnn_previous_state(0, "prevAct").is_some());
        // Inside a Bidirectional (allowed, as the reference): the backward copy derives its mask
        // from the reversed input, i.e. the explicit mask reversed.
        let mut bi_plain = net(&[bidi(kind, c_in, h, "CONCAT"), identity_out()], c_in);
        let mut bi_mz = net(
            &[json!({"type": "Bidirectional", "fwd": mask_zero(rnn(kind, c_in, h, "TANH"), value)}),
              identity_out()],
            c_in,
        );
        let q = uniform_matrix(&mut rng, 1, bi_plain.num_params(), -0.5, 0.5);
        bi_plain.set_params(&q).unwrap();
        bi_mz.set_params(&q).unwrap();
        let want = bi_plain.output_masked(&x, rows, Some((&m, t)), false).unwrap();
        let got = bi_mz.output(&x, rows, false).unwrap();
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() < 1e-14, "Bidirectional(MaskZeroLayer({kind})): {a} vs {b}");
        }
    }
}

#[test]
fn mask_zero_passes_gradient_checks() {
    let (rows, c_in, t) = (3, 3, 5);
    let lengths = [5usize, 3, 2];
    for (what, inner, w) in [
        ("MaskZeroLayer(GravesLSTM)", rnn("GravesLSTM", c_in, 3, "TANH"), 3),
        ("MaskZeroLayer(Bidirectional CONCAT SimpleRnn)", bidi("SimpleRnn", c_in, 3, "CONCAT"), 6),
    ] {
        let mut rng = Rng::new(41);
        let layers = [
            // A trainable layer before it, so its input gradient is checked too.
            time_distributed(dense(c_in, c_in, "IDENTITY")),
            mask_zero(inner, 0.0),
            rnn_output(w, 2, "SOFTMAX", "MCXENT"),
        ];
        let mut n = net(&layers, c_in);
        randomize(&mut n, &mut rng);
        // Unpadded input: after the dense layer no step is all zeros, the derived mask is all
        // ones (the zero-padded case follows).
        let x = normal(&mut rng, rows * c_in * t);
        let y = one_hot_sequences(&mut rng, rows, 2, t);
        let m = tail_mask(rows, t, &lengths);
        grad_check(what, &mut n, &Case { x: &x, y: &y, rows, fmask: None, lmask: Some((&m, t)) });
    }
    // Zero padding straight from the input: the derived mask is what the gradient sees.
    let mut rng = Rng::new(43);
    let mut n = net(
        &[mask_zero(rnn("LSTM", c_in, 3, "TANH"), 0.0), rnn_output(3, 2, "SOFTMAX", "MCXENT")],
        c_in,
    );
    randomize(&mut n, &mut rng);
    let x = padded(&normal(&mut rng, rows * c_in * t), c_in, t, &lengths, 0.0);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let m = tail_mask(rows, t, &lengths);
    grad_check(
        "MaskZeroLayer(LSTM), zero-padded input",
        &mut n,
        &Case { x: &x, y: &y, rows, fmask: None, lmask: Some((&m, t)) },
    );
}

#[test]
fn mask_zero_configuration_round_trips_and_bad_ones_are_named() {
    let v = conf(
        &[json!({"type": "MaskZeroLayer", "underlying": rnn("LSTM", 3, 2, "TANH")}), identity_out()],
        None,
        json!({}),
    );
    let c = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
    let text = c.to_json();
    assert!(text.contains("\"maskingValue\":0.0"), "{text}");
    assert_eq!(MultiLayerConfiguration::from_json(&text).unwrap(), c);
    let bad = |layer: Value| config_error(&conf(&[layer, identity_out()], recurrent(3), json!({})));
    let e = bad(mask_zero(dense(3, 2, "TANH"), 0.0));
    assert!(e.contains("layer 0 (MaskZeroLayer)") && e.contains("not a DenseLayer"), "{e}");
    let e = bad(mask_zero(rnn("LSTM", 4, 2, "TANH"), 0.0));
    assert!(e.contains("layer 0 (MaskZeroLayer) underlying (LSTM): nIn=4"), "{e}");
    let e = bad(json!({"type": "MaskZeroLayer", "underlying": rnn("LSTM", 3, 2, "TANH"),
                       "maskValue": 0.0}));
    assert!(e.contains("maskValue"), "{e}");
}

// ---- EmbeddingSequenceLayer ----------------------------------------------------------------

fn esl(n_in: usize, n_out: usize, act: &str, has_bias: bool) -> Value {
    json!({"type": "EmbeddingSequenceLayer", "nIn": n_in, "nOut": n_out, "activation": act,
           "hasBias": has_bias, "updater": sgd(), "biasUpdater": sgd()})
}

#[test]
fn embedding_sequence_output_by_hand_with_and_without_a_mask() {
    let (vocab, o, rows, t) = (5, 3, 2, 4);
    // No inputType: [N, T] indices, any length.
    let mut n = build(&conf(&[esl(vocab, o, "TANH", true), identity_out()], None, json!({})));
    let mut rng = Rng::new(5);
    randomize(&mut n, &mut rng);
    let p = n.params().to_vec();
    let x = [0.0, 4.0, 2.0, 2.0, 1.0, 3.0, 0.0, 4.0];
    let m = [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0];
    let plain = n.output(&x, rows, false).unwrap();
    let masked = n.output_masked(&x, rows, Some((&m, t)), false).unwrap();
    for i in 0..rows {
        for s in 0..t {
            let idx = x[i * t + s] as usize;
            for j in 0..o {
                let want = (p[idx * o + j] + p[vocab * o + j]).tanh();
                let k = i * o * t + j * t + s;
                assert!((plain[k] - want).abs() < 1e-14, "example {i} step {s} unit {j}");
                assert!((masked[k] - want * m[i * t + s]).abs() < 1e-14);
            }
        }
    }
    assert_eq!(n.output(&x[..rows * 3], rows, false).unwrap().len(), rows * o * 3);
    // Feed-forward input of T columns: the same layer on a fixed length.
    let mut ff = build(&conf(
        &[esl(vocab, o, "TANH", true), identity_out()],
        Some(json!({"type": "feedForward", "size": t})),
        json!({}),
    ));
    ff.set_params(&p).unwrap();
    assert_eq!(ff.output(&x, rows, false).unwrap(), plain);
}

#[test]
fn embedding_sequence_passes_gradient_checks_with_and_without_masks() {
    let (vocab, rows, t) = (6, 3, 5);
    let mut rng = Rng::new(9);
    let x: Vec<f64> = (0..rows * t).map(|k| ((k * 7 + 3) % vocab) as f64).collect();
    for (what, layers, c_out) in [
        (
            "EmbeddingSequenceLayer + RnnOutputLayer",
            vec![esl(vocab, 4, "SOFTSIGN", true), rnn_output(4, 3, "SOFTMAX", "MCXENT")],
            3,
        ),
        (
            "EmbeddingSequenceLayer + LSTM",
            vec![esl(vocab, 4, "IDENTITY", false), rnn("LSTM", 4, 3, "TANH"), rnn_output(3, 2, "SIGMOID", "XENT")],
            2,
        ),
    ] {
        let mut n = build(&conf(&layers, None, json!({})));
        randomize(&mut n, &mut rng);
        let y = one_hot_sequences(&mut rng, rows, c_out, t);
        grad_check(&format!("{what}, no mask"), &mut n, &Case { x: &x, y: &y, rows, fmask: None, lmask: None });
        // Masked steps output 0 and take no gradient; labels unmasked, so the zeros are scored.
        let holes = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0];
        grad_check(
            &format!("{what}, feature mask"),
            &mut n,
            &Case { x: &x, y: &y, rows, fmask: Some((&holes, t)), lmask: None },
        );
    }
}

#[test]
fn embedding_sequence_bad_indices_and_configurations_are_named() {
    let layers = [esl(5, 2, "IDENTITY", false), identity_out()];
    let mut n = build(&conf(&layers, None, json!({})));
    let msg = |e: NnError| e.to_string();
    for (bad, at) in [(2.5, "example 1, step 2"), (-1.0, "example 1, step 2"), (5.0, "example 1, step 2")] {
        let mut x = [0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 2.0];
        x[6] = bad;
        let e = msg(n.output(&x, 2, false).unwrap_err());
        assert!(
            e.contains("layer 0 (EmbeddingSequenceLayer)") && e.contains(at)
                && e.contains("not an index in [0, nIn=5)"),
            "{bad}: {e}"
        );
    }
    // inferInputLength false: only inputLength steps.
    let mut fixed = esl(5, 2, "IDENTITY", false);
    fixed["inferInputLength"] = json!(false);
    fixed["inputLength"] = json!(4);
    let mut f = build(&conf(&[fixed.clone(), identity_out()], None, json!({})));
    assert_eq!(f.output(&[1.0; 8], 2, false).unwrap().len(), 2 * 2 * 4);
    let e = msg(f.output(&[1.0; 6], 2, false).unwrap_err());
    assert!(e.contains("inputLength=4") && e.contains("not 3 steps"), "{e}");
    let e = config_error(&conf(&[fixed, identity_out()], Some(json!({"type": "recurrent", "size": 1, "timeSeriesLength": 3})), json!({})));
    assert!(e.contains("inputLength=4 does not match the 3 time steps"), "{e}");
    // Defaults and a round trip.
    let c = MultiLayerConfiguration::from_json(
        &conf(&[json!({"type": "EmbeddingSequenceLayer", "nIn": 5, "nOut": 2}), identity_out()], None, json!({}))
            .to_string(),
    )
    .unwrap();
    let text = c.to_json();
    for field in ["\"hasBias\":false", "\"inputLength\":1", "\"inferInputLength\":true", "\"outputFormat\":\"NCW\""] {
        assert!(text.contains(field), "{field}: {text}");
    }
    assert_eq!(MultiLayerConfiguration::from_json(&text).unwrap(), c);
    let e = config_error(&conf(&[esl(5, 2, "IDENTITY", false), identity_out()], recurrent(2), json!({})));
    assert!(e.contains("layer 0 (EmbeddingSequenceLayer)") && e.contains("must be indices"), "{e}");
    let mut nwc = esl(5, 2, "IDENTITY", false);
    nwc["outputFormat"] = json!("NWC");
    build(&conf(&[nwc, identity_out()], None, json!({})));
    let e = config_error(&conf(&[esl(0, 2, "IDENTITY", false), identity_out()], None, json!({})));
    assert!(e.contains("nIn"), "{e}");
}

// ---- in a ComputationGraph -----------------------------------------------------------------

#[test]
fn the_wrappers_work_as_graph_vertices() {
    let lv = |l: Value| json!({"type": "LayerVertex", "layer": l, "preProcessor": null});
    // No inputTypes: the embedding implies [N, T] indices of any length.
    let v = json!({"formatVersion": 1, "seed": 5, "miniBatch": true,
        "networkInputs": ["tok"], "networkOutputs": ["out"],
        "vertices": [
            {"name": "emb", "inputs": ["tok"], "vertex": lv(esl(6, 4, "IDENTITY", true))},
            {"name": "bi", "inputs": ["emb"], "vertex": lv(bidi("LSTM", 4, 3, "CONCAT"))},
            {"name": "td", "inputs": ["bi"], "vertex": lv(time_distributed(dense(6, 3, "TANH")))},
            {"name": "mz", "inputs": ["td"], "vertex": lv(mask_zero(rnn("SimpleRnn", 3, 3, "TANH"), 0.0))},
            {"name": "out", "inputs": ["mz"], "vertex": lv(rnn_output(3, 2, "SOFTMAX", "MCXENT"))}
        ]});
    let conf = ferrodl_nn::ComputationGraphConfiguration::from_json(&v.to_string()).unwrap();
    let mut g = ferrodl_nn::ComputationGraph::<f64>::from_configuration(conf).unwrap();
    let keys: Vec<String> = g.param_table().into_iter().map(|r| r.0).collect();
    for k in ["emb_W", "emb_b", "bi_fW", "bi_bRW", "td_W", "mz_RW", "out_W"] {
        assert!(keys.iter().any(|x| x == k), "{k} in {keys:?}");
    }
    let (rows, t) = (3, 4);
    let mut rng = Rng::new(19);
    let p = uniform_matrix(&mut rng, 1, g.params().len(), -0.5, 0.5);
    g.set_params(&p).unwrap();
    let x: Vec<f64> = (0..rows * t).map(|k| ((k * 5 + 1) % 6) as f64).collect();
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let m = tail_mask(rows, t, &[4, 2, 3]);
    for (what, fm) in [("no mask", None), ("feature mask", Some((&m[..], t)))] {
        let fms = [fm];
        g.compute_gradient_and_score(&[&x], &[&y], rows, &fms, &[]).unwrap();
        let analytic = g.gradient().to_vec();
        let mut q = p.clone();
        let mut f = |q: &[f64]| {
            g.set_params(q).unwrap();
            g.score(&[&x], &[&y], rows, &fms, &[]).unwrap()
        };
        let report = check_gradient(&mut q, &analytic, &mut f, GradCheckConfig::default());
        assert!(report.passed(), "graph, {what}: {report}");
        g.set_params(&p).unwrap();
    }
    let e = g.rnn_time_step(&[&x], rows).unwrap_err().to_string();
    assert!(e.contains("vertex \"bi\"") && e.contains("rnnTimeStep is not possible"), "{e}");
}

#[test]
fn embedding_sequence_passes_its_mask_on_padded_equals_alone() {
    // ESL -> Bidirectional(LSTM) -> RnnOutputLayer: the features mask must reach the
    // Bidirectional layer, so a padded example's real steps equal the example run alone.
    let (vocab, t) = (10, 5);
    for mode in ["CONCAT", "ADD"] {
        let h_out = if mode == "CONCAT" { 6 } else { 3 };
        let layers = [esl(vocab, 4, "IDENTITY", true), bidi("LSTM", 4, 3, mode), rnn_output(h_out, 2, "SOFTMAX", "MCXENT")];
        let mut n = build(&conf(&layers, None, json!({})));
        let mut rng = Rng::new(21);
        randomize(&mut n, &mut rng);
        let x = [1.0, 4.0, 9.0, 0.0, 2.0, 7.0, 3.0, 3.0, 0.0, 0.0];
        let m = tail_mask(2, t, &[5, 3]);
        let out = n.output_masked(&x, 2, Some((&m, t)), false).unwrap();
        let alone = n.output(&[7.0, 3.0, 3.0], 1, false).unwrap();
        let got = cut(&out, 1, 2, t, 3);
        for (k, (a, b)) in got.iter().zip(&alone).enumerate() {
            assert!((a - b).abs() < 1e-12, "{mode} value {k}: padded {a} vs alone {b}");
        }
    }
}
