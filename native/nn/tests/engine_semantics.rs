//! Exact behaviour of the engine against numbers computed by hand in the test (f64 networks):
//! batch normalization (inference formula, running statistics), dropout, gradient normalization,
//! weight decay, L1/L2 scores, weight initialisation, `score_examples`, `param_table`, and the
//! messages of invalid configurations and inputs.
//!
//! Tolerances: `assert_close(.., tol)` accepts `|got − want| <= tol · max(1, |want|)`. Hand
//! computations use the same formula in a different order of operations, so f64 results agree
//! to a few ulps; 1e-12 is used throughout unless a test states otherwise (the statistical
//! dropout and weight-initialisation checks state their own bounds).

#[path = "common/builders.rs"]
mod builders;

use builders::*;
use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork, NnError};
use ferrodl_testutil::Rng;
use serde_json::{json, Value};
use std::ops::Range;

const TOL: f64 = 1e-12;

fn tanh(z: f64) -> f64 {
    z.tanh()
}

fn identity(z: f64) -> f64 {
    z
}

// ---- batch normalization ------------------------------------------------------------------

/// BN (first layer, `c` channels of `s` positions) followed by an identity output layer with
/// `W = I`, `b = 0`, so the network output is the batch-norm output itself.
struct BnNet {
    net: MultiLayerNetwork<f64>,
    c: usize,
    s: usize,
}

fn bn_identity_net(bn: Value, c: usize, s: usize, input_type: Option<Value>) -> BnNet {
    let width = c * s;
    let layers = vec![bn, output(width, width, "IDENTITY", "MSE")];
    let net = net64(&conf_json(1, true, input_type, layers));
    BnNet { net, c, s }
}

/// `act(gamma·(x−mean)/sqrt(var+eps)+beta)` per channel, written out.
#[allow(clippy::too_many_arguments)]
fn bn_by_hand(
    x: &[f64],
    rows: usize,
    c: usize,
    s: usize,
    gamma: &[f64],
    beta: &[f64],
    mean: &[f64],
    var: &[f64],
    eps: f64,
    act: fn(f64) -> f64,
) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    for r in 0..rows {
        for ch in 0..c {
            for p in 0..s {
                let i = r * c * s + ch * s + p;
                out[i] = act(gamma[ch] * (x[i] - mean[ch]) / (var[ch] + eps).sqrt() + beta[ch]);
            }
        }
    }
    out
}

fn check_bn_inference(c: usize, s: usize, input_type: Option<Value>, seed: u64) {
    let mut rng = Rng::new(seed);
    let eps = 1e-3;
    for lock in [false, true] {
        for (act_name, act) in [("IDENTITY", identity as fn(f64) -> f64), ("TANH", tanh)] {
            let mut bn = batch_norm(c, lock);
            bn["eps"] = json!(eps);
            bn["activation"] = json!(act_name);
            bn["gamma"] = json!(1.5);
            bn["beta"] = json!(-0.25);
            let BnNet { mut net, c, s } = bn_identity_net(bn, c, s, input_type.clone());
            let width = c * s;
            let mean = uniform(&mut rng, c, -1.0, 1.0);
            let var = uniform(&mut rng, c, 0.2, 3.0);
            let (gamma, beta) = if lock {
                (vec![1.5; c], vec![-0.25; c])
            } else {
                (
                    uniform(&mut rng, c, 0.5, 2.0),
                    uniform(&mut rng, c, -1.0, 1.0),
                )
            };
            let mut p = net.params().to_vec();
            if !lock {
                p[block(&net, "0_gamma")].copy_from_slice(&gamma);
                p[block(&net, "0_beta")].copy_from_slice(&beta);
            }
            p[block(&net, "0_mean")].copy_from_slice(&mean);
            p[block(&net, "0_var")].copy_from_slice(&var);
            p[block(&net, "1_W")].copy_from_slice(&eye(width));
            p[block(&net, "1_b")].fill(0.0);
            net.set_params(&p).unwrap();

            let rows = 5;
            let x: Vec<f64> = normal(&mut rng, rows * width)
                .iter()
                .map(|v| 2.0 * v + 0.5)
                .collect();
            let got = net.output(&x, rows, false).unwrap();
            let want = bn_by_hand(&x, rows, c, s, &gamma, &beta, &mean, &var, eps, act);
            assert_close(
                &format!("BN inference c={c} s={s} lock={lock} {act_name}"),
                &got,
                &want,
                TOL,
            );
            // Inference uses no batch statistics: one row alone gives the same output.
            let one = net.output(&x[width..2 * width], 1, false).unwrap();
            assert_eq!(&one[..], &got[width..2 * width]);
            // Nothing above moved the running statistics.
            assert_eq!(net.params(), &p[..]);
        }
    }
}

#[test]
fn batch_norm_inference_output_matches_the_formula_on_dense_input() {
    check_bn_inference(4, 1, None, 11);
}

#[test]
fn batch_norm_inference_output_matches_the_formula_on_convolutional_input() {
    let it = json!({"type": "convolutional", "height": 3, "width": 2, "channels": 2});
    check_bn_inference(2, 6, Some(it), 12);
}

/// Per-channel batch mean and biased variance over examples and positions.
fn batch_stats(x: &[f64], rows: usize, c: usize, s: usize) -> (Vec<f64>, Vec<f64>) {
    let count = (rows * s) as f64;
    let mut mean = vec![0.0; c];
    let mut var = vec![0.0; c];
    for ch in 0..c {
        let vals: Vec<f64> = (0..rows)
            .flat_map(|r| (0..s).map(move |p| r * c * s + ch * s + p))
            .map(|i| x[i])
            .collect();
        mean[ch] = vals.iter().sum::<f64>() / count;
        var[ch] = vals.iter().map(|v| (v - mean[ch]).powi(2)).sum::<f64>() / count;
    }
    (mean, var)
}

/// k fits with decay `d` and a non-moving updater: the running statistics are the exponential
/// averages of the batch statistics, every other parameter stays bit-identical.
fn check_running_stats(
    decay: f64,
    c: usize,
    s: usize,
    input_type: Option<Value>,
    dense_in: Option<usize>,
    updater: Value,
    seed: u64,
) {
    let width = c * s;
    let mut bn = batch_norm(c, false);
    bn["decay"] = json!(decay);
    let mut layers = Vec::new();
    if let Some(n_in) = dense_in {
        layers.push(dense(n_in, width, "TANH"));
    }
    layers.push(bn);
    layers.push(output(width, 3, "SOFTMAX", "MCXENT"));
    let bn_index = layers.len() - 2;
    set_all(&mut layers, "updater", updater.clone());
    set_all(&mut layers, "biasUpdater", updater.clone());
    let mut net = net64(&conf_json(seed as i64, true, input_type, layers));
    let mut rng = Rng::new(seed);
    let p0 = randomize_params(&mut net, &mut rng);
    let (mean_r, var_r) = (
        block(&net, &format!("{bn_index}_mean")),
        block(&net, &format!("{bn_index}_var")),
    );
    let mut mean = p0[mean_r.clone()].to_vec();
    let mut var = p0[var_r.clone()].to_vec();
    let n_in = net.n_in();
    for k in 0..4 {
        let rows = 4 + k;
        let x: Vec<f64> = normal(&mut rng, rows * n_in)
            .iter()
            .map(|v| 1.5 * v + 0.3 * k as f64)
            .collect();
        let y = ferrodl_testutil::one_hot(&mut rng, rows, 3);
        // The batch-norm layer's input, by hand.
        let bn_in = match dense_in {
            Some(n_in) => dense_forward(
                &x,
                rows,
                &p0[block(&net, "0_W")],
                Some(&p0[block(&net, "0_b")]),
                n_in,
                width,
                tanh,
            ),
            None => x.clone(),
        };
        let (bm, bv) = batch_stats(&bn_in, rows, c, s);
        // None of these move the statistics.
        let before = net.params().to_vec();
        net.output(&x, rows, true).unwrap();
        net.output(&x, rows, false).unwrap();
        net.score(&x, &y, rows, None).unwrap();
        net.compute_gradient_and_score(&x, &y, rows, None).unwrap();
        assert_eq!(net.params(), &before[..]);

        net.fit(&x, &y, rows, None).unwrap();
        for ch in 0..c {
            mean[ch] = decay * mean[ch] + (1.0 - decay) * bm[ch];
            var[ch] = decay * var[ch] + (1.0 - decay) * bv[ch];
        }
        let what = format!("decay {decay} c={c} s={s} dense {dense_in:?} {updater} fit {k}");
        assert_close(
            &format!("{what}: mean"),
            &net.params()[mean_r.clone()],
            &mean,
            TOL,
        );
        assert_close(
            &format!("{what}: var"),
            &net.params()[var_r.clone()],
            &var,
            TOL,
        );
        for (i, (a, b)) in net.params().iter().zip(&p0).enumerate() {
            if !mean_r.contains(&i) && !var_r.contains(&i) {
                assert_eq!(a.to_bits(), b.to_bits(), "{what}: parameter {i} moved");
            }
        }
    }
}

#[test]
fn batch_norm_running_statistics_are_exponential_averages() {
    // Sgd with learning rate 0 is a valid configuration.
    assert!(MultiLayerConfiguration::from_json(
        &conf_json(1, true, None, {
            let mut l = vec![output(2, 2, "SOFTMAX", "MCXENT")];
            set_all(&mut l, "updater", sgd(0.0));
            l
        })
        .to_string()
    )
    .is_ok());
    for (decay, seed) in [(0.9, 1u64), (0.5, 2), (0.0, 3), (1.0, 4)] {
        check_running_stats(decay, 3, 1, None, None, sgd(0.0), seed);
    }
    check_running_stats(0.7, 4, 1, None, Some(3), sgd(0.0), 5);
    check_running_stats(0.9, 3, 1, None, Some(2), json!({"type": "NoOp"}), 6);
    let it = json!({"type": "convolutional", "height": 2, "width": 3, "channels": 2});
    check_running_stats(0.8, 2, 6, Some(it), None, sgd(0.0), 7);
}

// ---- dropout ------------------------------------------------------------------------------

#[test]
fn dropout_inference_is_deterministic_and_equals_no_dropout() {
    let make = |p: f64| {
        let mut layers = vec![
            dense(6, 8, "RELU"),
            dense(8, 5, "TANH"),
            output(5, 3, "SOFTMAX", "MCXENT"),
        ];
        for l in layers.iter_mut().skip(1) {
            l["dropOut"] = json!(p);
        }
        net64(&conf_json(21, true, None, layers))
    };
    let mut with = make(0.5);
    let mut without = make(0.0);
    assert_eq!(
        with.params(),
        without.params(),
        "dropout draws nothing at init"
    );
    let mut rng = Rng::new(3);
    let x = normal(&mut rng, 10 * 6);
    let a = with.output(&x, 10, false).unwrap();
    let b = with.output(&x, 10, false).unwrap();
    let c = without.output(&x, 10, false).unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
    // A training pass in between does not change inference.
    let t1 = with.output(&x, 10, true).unwrap();
    let t2 = with.output(&x, 10, true).unwrap();
    assert_ne!(t1, a, "training mode applies dropout");
    assert_ne!(t1, t2, "each training pass draws a new mask");
    assert_eq!(with.output(&x, 10, false).unwrap(), a);
    // Training mode without dropout is inference mode.
    assert_eq!(without.output(&x, 10, true).unwrap(), c);
    // Masks come from the seeded training RNG: a twin network draws the same masks.
    let mut twin = make(0.5);
    assert_eq!(twin.output(&x, 10, true).unwrap(), t1);
    assert_eq!(twin.output(&x, 10, true).unwrap(), t2);
}

/// `x → Dense(W = I, b = 0, IDENTITY, dropOut p or a DropoutLayer) → Output(W = I, IDENTITY)`:
/// the training output is the dropped-out input itself.
fn identity_dropout_net(n: usize, p: f64, as_layer: bool) -> MultiLayerNetwork<f64> {
    let mut layers = vec![dense(n, n, "IDENTITY")];
    if as_layer {
        layers.push(json!({"type": "DropoutLayer", "name": null, "dropOut": p}));
    }
    let mut out = output(n, n, "IDENTITY", "MSE");
    if !as_layer {
        out["dropOut"] = json!(p);
    }
    layers.push(out);
    let mut net = net64(&conf_json(5, true, None, layers));
    let mut q = vec![0.0; net.num_params()];
    let last = net.num_layers() - 1;
    q[block(&net, "0_W")].copy_from_slice(&eye(n));
    q[block(&net, &format!("{last}_W"))].copy_from_slice(&eye(n));
    net.set_params(&q).unwrap();
    net
}

/// Statistical check, 200 × 50 = 10 000 values, retain probability 0.5: the dropped fraction
/// has standard deviation 0.005 (bound 0.02 = 4σ); the mean of out/x has standard deviation
/// 0.01 (bound 0.04 = 4σ). Kept values are exactly x/0.5.
#[test]
fn dropout_training_zeroes_about_half_and_preserves_the_expectation() {
    for as_layer in [false, true] {
        let (rows, n) = (200, 50);
        let mut net = identity_dropout_net(n, 0.5, as_layer);
        let mut rng = Rng::new(8);
        let x = uniform(&mut rng, rows * n, 1.0, 2.0);
        assert_eq!(net.output(&x, rows, false).unwrap(), x);
        let out = net.output(&x, rows, true).unwrap();
        let zeros = out.iter().filter(|&&v| v == 0.0).count();
        let frac = zeros as f64 / out.len() as f64;
        assert!(
            (frac - 0.5).abs() < 0.02,
            "layer {as_layer}: dropped {frac}"
        );
        for (o, xi) in out.iter().zip(&x) {
            assert!(
                *o == 0.0 || (o - 2.0 * xi).abs() <= 1e-15 * xi,
                "{o} vs {xi}"
            );
        }
        let ratio = out.iter().zip(&x).map(|(o, xi)| o / xi).sum::<f64>() / out.len() as f64;
        assert!(
            (ratio - 1.0).abs() < 0.04,
            "layer {as_layer}: E[out/x] = {ratio}"
        );
    }
}

/// The backward pass uses the forward pass's mask. One example, `OutputLayer(W = I, b = 0,
/// IDENTITY, MSE, dropOut 0.5)`: `z = x̃` (the dropped-out input), `db = 2(z − y)/n`,
/// `dW_ij = x̃_i·db_j`, so the gradient reveals x̃, which must be 0 or 2x everywhere.
#[test]
fn dropout_backward_uses_the_forward_mask() {
    for as_layer in [false, true] {
        let n = 20;
        let mut net = identity_dropout_net(n, 0.5, as_layer);
        let last = net.num_layers() - 1;
        let (w_r, b_r) = (
            block(&net, &format!("{last}_W")),
            block(&net, &format!("{last}_b")),
        );
        let mut rng = Rng::new(9);
        let (mut dropped, mut kept) = (0, 0);
        for _ in 0..5 {
            let x = uniform(&mut rng, n, 1.0, 2.0);
            let y = normal(&mut rng, n);
            let score = net.compute_gradient_and_score(&x, &y, 1, None).unwrap();
            let g = net.gradient().to_vec();
            let db = &g[b_r.clone()];
            let xt: Vec<f64> = (0..n).map(|j| y[j] + n as f64 * db[j] / 2.0).collect();
            for j in 0..n {
                if xt[j].abs() < 1e-12 {
                    dropped += 1;
                } else {
                    kept += 1;
                    assert!((xt[j] - 2.0 * x[j]).abs() < 1e-12, "{} vs {}", xt[j], x[j]);
                }
            }
            let want_score = (0..n).map(|j| (xt[j] - y[j]).powi(2)).sum::<f64>() / n as f64;
            assert!((score - want_score).abs() < 1e-12 * want_score.max(1.0));
            let gw = &g[w_r.clone()];
            for i in 0..n {
                for j in 0..n {
                    let want = xt[i] * db[j];
                    assert!((gw[i * n + j] - want).abs() < 1e-12, "dW[{i}][{j}]");
                }
            }
            // Through the mask into the first layer (W = I, IDENTITY): dL/dh_i = db_i·m_i with
            // m_i = x̃_i/x_i (0 or 2), so d(0_b)_i = db_i·m_i and d(0_W)_ki = x_k·db_i·m_i.
            let (g0w, g0b) = (&g[block(&net, "0_W")], &g[block(&net, "0_b")]);
            for i in 0..n {
                let dh = db[i] * xt[i] / x[i];
                assert!((g0b[i] - dh).abs() < 1e-12, "d(0_b)[{i}]");
                for k in 0..n {
                    assert!(
                        (g0w[k * n + i] - x[k] * dh).abs() < 1e-12,
                        "d(0_W)[{k}][{i}]"
                    );
                }
            }
        }
        assert!(dropped > 10 && kept > 10, "dropped {dropped}, kept {kept}");
    }
}

/// `dropOut` on an EmbeddingLayer would scale its INPUT, the indices (0 or idx/p); the
/// reference applies no input dropout to an embedding lookup. Either the configuration is
/// refused or the training-mode lookup reads the rows of the real indices.
#[test]
fn embedding_dropout_does_not_scramble_indices() {
    let mut emb = embedding(6, 4, "IDENTITY", false);
    emb["dropOut"] = json!(0.5);
    let it = json!({"type": "feedForward", "size": 1});
    let v = conf_json(
        3,
        true,
        Some(it),
        vec![emb, output(4, 4, "IDENTITY", "MSE")],
    );
    let conf = match MultiLayerConfiguration::from_json(&v.to_string()) {
        Err(NnError::InvalidConfig(m)) => {
            assert!(
                m.contains("layer 0 (EmbeddingLayer)") && m.contains("dropOut"),
                "{m}"
            );
            return;
        }
        Err(e) => panic!("unexpected error {e:?}"),
        Ok(c) => c,
    };
    let mut net = MultiLayerNetwork::<f64>::from_configuration(conf).unwrap();
    let mut q = net.params().to_vec();
    let w = uniform(&mut Rng::new(1), 24, -1.0, 1.0);
    q[block(&net, "0_W")].copy_from_slice(&w);
    q[block(&net, "1_W")].copy_from_slice(&eye(4));
    q[block(&net, "1_b")].fill(0.0);
    net.set_params(&q).unwrap();
    let x: Vec<f64> = (0..30).map(|i| (i % 6) as f64).collect();
    let out = net.output(&x, 30, true).unwrap();
    for r in 0..30 {
        let idx = r % 6;
        assert_eq!(&out[r * 4..r * 4 + 4], &w[idx * 4..idx * 4 + 4], "row {r}");
    }
}

// ---- gradient normalization ----------------------------------------------------------------

const NORM_MODES: [&str; 5] = [
    "RenormalizeL2PerLayer",
    "RenormalizeL2PerParamType",
    "ClipElementWiseAbsoluteValue",
    "ClipL2PerLayer",
    "ClipL2PerParamType",
];

/// Dense → BN → Output, Sgd(lr) everywhere, optional gradient normalization, L2, weight decay.
fn gn_layers(mode: &str, threshold: f64, lr: f64, l2: f64, wd: f64) -> Vec<Value> {
    let mut layers = vec![
        dense(4, 5, "TANH"),
        batch_norm(5, false),
        output(5, 3, "SOFTMAX", "MCXENT"),
    ];
    set_all(&mut layers, "gradientNormalization", json!(mode));
    set_all(
        &mut layers,
        "gradientNormalizationThreshold",
        json!(threshold),
    );
    set_all(&mut layers, "updater", sgd(lr));
    set_all(&mut layers, "biasUpdater", sgd(lr));
    set_all(&mut layers, "l2", json!(l2));
    set_all(&mut layers, "weightDecay", json!(wd));
    layers
}

fn l2(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Trainable blocks per layer of the Dense → BN → Output network.
fn gn_groups(net: &MultiLayerNetwork<f64>) -> Vec<Vec<Range<usize>>> {
    [["0_W", "0_b"], ["1_gamma", "1_beta"], ["2_W", "2_b"]]
        .iter()
        .map(|names| names.iter().map(|n| block(net, n)).collect())
        .collect()
}

/// The documented rule applied to the raw gradient `g` (state blocks untouched).
fn apply_rule(mode: &str, t: f64, g: &[f64], groups: &[Vec<Range<usize>>]) -> Vec<f64> {
    let mut out = g.to_vec();
    for group in groups {
        let layer_norm = l2(&group
            .iter()
            .flat_map(|r| g[r.clone()].iter().cloned())
            .collect::<Vec<_>>());
        for r in group {
            let block_norm = l2(&g[r.clone()]);
            for i in r.clone() {
                out[i] = match mode {
                    "RenormalizeL2PerLayer" => g[i] / layer_norm,
                    "RenormalizeL2PerParamType" => g[i] / block_norm,
                    "ClipElementWiseAbsoluteValue" => g[i].clamp(-t, t),
                    "ClipL2PerLayer" if layer_norm > t => g[i] * t / layer_norm,
                    "ClipL2PerParamType" if block_norm > t => g[i] * t / block_norm,
                    _ => g[i],
                };
            }
        }
    }
    out
}

#[test]
fn gradient_normalization_modes_match_the_rules() {
    let mut rng = Rng::new(31);
    let rows = 6;
    let x = normal(&mut rng, rows * 4);
    let y = ferrodl_testutil::one_hot(&mut rng, rows, 3);
    // The raw gradient: no normalization, Sgd lr = 1, so the update is the gradient.
    let mut raw = net64(&conf_json(
        1,
        true,
        None,
        gn_layers("None", 1.0, 1.0, 0.0, 0.0),
    ));
    let p = randomize_params(&mut raw, &mut rng);
    raw.compute_update(&x, &y, rows, None).unwrap();
    let g = raw.update().to_vec();
    raw.set_params(&p).unwrap();
    raw.compute_gradient_and_score(&x, &y, rows, None).unwrap();
    let groups = gn_groups(&raw);
    // Outside the state blocks the update is exactly the gradient.
    for group in &groups {
        for r in group {
            assert_eq!(&g[r.clone()], &raw.gradient()[r.clone()]);
        }
    }
    let layer_norms: Vec<f64> = groups
        .iter()
        .map(|gr| {
            l2(&gr
                .iter()
                .flat_map(|r| g[r.clone()].to_vec())
                .collect::<Vec<_>>())
        })
        .collect();
    let block_norms: Vec<f64> = groups.iter().flatten().map(|r| l2(&g[r.clone()])).collect();
    let mut abs: Vec<f64> = groups
        .iter()
        .flatten()
        .flat_map(|r| g[r.clone()].iter().map(|v| v.abs()))
        .collect();
    abs.sort_by(f64::total_cmp);
    let between = |v: &[f64]| {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(0.0, f64::max);
        assert!(hi > 1.5 * lo, "norms too close to split: {v:?}");
        (lo * hi).sqrt()
    };
    for mode in NORM_MODES {
        let t = match mode {
            "ClipElementWiseAbsoluteValue" => abs[abs.len() / 2],
            "ClipL2PerLayer" => between(&layer_norms),
            "ClipL2PerParamType" => between(&block_norms),
            _ => 1.0,
        };
        let mut net = net64(&conf_json(1, true, None, gn_layers(mode, t, 1.0, 0.0, 0.0)));
        net.set_params(&p).unwrap();
        net.compute_update(&x, &y, rows, None).unwrap();
        let want = apply_rule(mode, t, &g, &groups);
        assert_close(mode, net.update(), &want, TOL);
        // The rule changed something, and for the clip modes left something alone.
        assert!(
            want.iter().zip(&g).any(|(a, b)| a != b),
            "{mode}: nothing normalized"
        );
        if mode.starts_with("Clip") {
            assert!(
                groups
                    .iter()
                    .flatten()
                    .flat_map(|r| r.clone())
                    .any(|i| want[i] == g[i]),
                "{mode}: everything clipped"
            );
        }

        // Order: normalization of the raw gradient, then + L2, updater (Sgd lr), then
        // + lr·weightDecay·w.
        let (lr, l2c, wd) = (0.5, 0.1, 0.2);
        let mut net = net64(&conf_json(1, true, None, gn_layers(mode, t, lr, l2c, wd)));
        net.set_params(&p).unwrap();
        net.compute_update(&x, &y, rows, None).unwrap();
        let mut want = apply_rule(mode, t, &g, &groups);
        for group in &groups {
            for r in group {
                // gamma (`1_gamma`) has no L2 and no weight decay; beta is a bias (l2Bias = 0,
                // weightDecayBias = 0); only W blocks get both.
                let is_w = r == &block(&net, "0_W") || r == &block(&net, "2_W");
                for i in r.clone() {
                    want[i] *= lr;
                    if is_w {
                        want[i] += lr * l2c * p[i] + lr * wd * p[i];
                    }
                }
            }
        }
        assert_close(
            &format!("{mode} + L2 + weight decay"),
            net.update(),
            &want,
            TOL,
        );
    }
}

// ---- weight decay ---------------------------------------------------------------------------

#[test]
fn weight_decay_adds_lr_lambda_w_after_the_updater() {
    let mut rng = Rng::new(41);
    let rows = 5;
    let x = normal(&mut rng, rows * 4);
    let y = ferrodl_testutil::one_hot(&mut rng, rows, 3);
    let adam = |lr: f64| json!({"type": "Adam", "learningRate": lr, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8});
    // (updater of weights, of biases, learning rates) per case.
    let cases = [
        (sgd(0.1), sgd(0.05), 0.1, 0.05),
        (adam(0.01), adam(0.02), 0.01, 0.02),
    ];
    let decays = [(0.3, 0.05), (0.2, 0.0)];
    for (k, (upd, bias_upd, lr, lr_b)) in cases.iter().enumerate() {
        let build = |with_decay: bool| {
            let mut layers = vec![dense(4, 5, "TANH"), output(5, 3, "SOFTMAX", "MCXENT")];
            set_all(&mut layers, "updater", upd.clone());
            set_all(&mut layers, "biasUpdater", bias_upd.clone());
            if with_decay {
                for (l, (wd, wdb)) in layers.iter_mut().zip(decays) {
                    l["weightDecay"] = json!(wd);
                    l["weightDecayBias"] = json!(wdb);
                }
            }
            net64(&conf_json(1, true, None, layers))
        };
        let mut plain = build(false);
        let mut decayed = build(true);
        let p = randomize_params(&mut plain, &mut rng);
        decayed.set_params(&p).unwrap();
        // Weight decay is not part of the score (ARCHITECTURE §3: loss + L1/L2 only).
        assert_eq!(
            plain.score(&x, &y, rows, None).unwrap(),
            decayed.score(&x, &y, rows, None).unwrap()
        );
        plain.compute_update(&x, &y, rows, None).unwrap();
        decayed.fit(&x, &y, rows, None).unwrap();
        let base = plain.update().to_vec();
        let mut want = base.clone();
        for (layer, (wd, wdb)) in decays.iter().enumerate() {
            for i in block(&plain, &format!("{layer}_W")) {
                want[i] += lr * wd * p[i];
            }
            for i in block(&plain, &format!("{layer}_b")) {
                want[i] += lr_b * wdb * p[i];
            }
        }
        assert_close(&format!("case {k}: update"), decayed.update(), &want, TOL);
        let moved: Vec<f64> = p.iter().zip(&want).map(|(a, u)| a - u).collect();
        assert_close(&format!("case {k}: params"), decayed.params(), &moved, TOL);
        if k == 0 {
            // Sgd: the whole update by hand, lr·g + lr·λ·w with g the raw gradient.
            plain.set_params(&p).unwrap();
            plain
                .compute_gradient_and_score(&x, &y, rows, None)
                .unwrap();
            let g = plain.gradient().to_vec();
            let mut by_hand = vec![0.0; g.len()];
            for (layer, (wd, wdb)) in decays.iter().enumerate() {
                for i in block(&plain, &format!("{layer}_W")) {
                    by_hand[i] = lr * g[i] + lr * wd * p[i];
                }
                for i in block(&plain, &format!("{layer}_b")) {
                    by_hand[i] = lr_b * g[i] + lr_b * wdb * p[i];
                }
            }
            assert_close("Sgd weight decay by hand", decayed.update(), &by_hand, TOL);
        }
    }
}

/// Updaters without a learning rate: AdaDelta takes the decay unscaled (`update += λ·w`), NoOp
/// never moves its parameters, weight decay or not.
#[test]
fn weight_decay_with_updaters_without_a_learning_rate() {
    let mut rng = Rng::new(43);
    let rows = 5;
    let x = normal(&mut rng, rows * 4);
    let y = ferrodl_testutil::one_hot(&mut rng, rows, 3);
    let (wd, wdb) = (0.3, 0.1);
    for upd in [json!({"type": "AdaDelta"}), json!({"type": "NoOp"})] {
        let build = |decay: bool| {
            let mut layers = vec![dense(4, 5, "TANH"), output(5, 3, "SOFTMAX", "MCXENT")];
            set_all(&mut layers, "updater", upd.clone());
            set_all(&mut layers, "biasUpdater", upd.clone());
            if decay {
                set_all(&mut layers, "weightDecay", json!(wd));
                set_all(&mut layers, "weightDecayBias", json!(wdb));
            }
            net64(&conf_json(1, true, None, layers))
        };
        let (mut plain, mut decayed) = (build(false), build(true));
        let p = randomize_params(&mut plain, &mut rng);
        decayed.set_params(&p).unwrap();
        plain.compute_update(&x, &y, rows, None).unwrap();
        decayed.fit(&x, &y, rows, None).unwrap();
        let mut want = plain.update().to_vec();
        if upd["type"] == "NoOp" {
            assert!(want.iter().all(|&u| u == 0.0), "NoOp moved without decay");
            assert_eq!(decayed.params(), &p[..], "NoOp moved with weight decay");
        } else {
            for layer in 0..2 {
                for i in block(&plain, &format!("{layer}_W")) {
                    want[i] += wd * p[i];
                }
                for i in block(&plain, &format!("{layer}_b")) {
                    want[i] += wdb * p[i];
                }
            }
        }
        assert_close(&format!("{upd}"), decayed.update(), &want, TOL);
        assert!(decayed.params().iter().all(|v| v.is_finite()));
    }
}

// ---- scores -------------------------------------------------------------------------------

/// Dense(3→4, TANH) → Output(4→2, SOFTMAX, MCXENT) with L1/L2 on weights and biases, by hand.
#[test]
fn l1_l2_score_matches_hand_computation() {
    let mut rng = Rng::new(51);
    let regs = [(0.01, 0.02, 0.03, 0.04), (0.05, 0.0, 0.0, 0.07)];
    for mini_batch in [true, false] {
        let mut layers = vec![dense(3, 4, "TANH"), output(4, 2, "SOFTMAX", "MCXENT")];
        for (l, (l1, l2c, l1b, l2b)) in layers.iter_mut().zip(regs) {
            l["l1"] = json!(l1);
            l["l2"] = json!(l2c);
            l["l1Bias"] = json!(l1b);
            l["l2Bias"] = json!(l2b);
        }
        let mut net = net64(&conf_json(1, mini_batch, None, layers));
        let p = randomize_params(&mut net, &mut rng);
        let rows = 6;
        let x = normal(&mut rng, rows * 3);
        let y = probabilities(&mut rng, rows, 2);
        let h = dense_forward(&x, rows, &p[0..12], Some(&p[12..16]), 3, 4, tanh);
        let z = dense_forward(&h, rows, &p[16..24], Some(&p[24..26]), 4, 2, identity);
        let a = softmax_rows(&z, 2);
        let total: f64 = (0..rows * 2).map(|i| -y[i] * a[i].ln()).sum();
        let loss = if mini_batch {
            total / rows as f64
        } else {
            total
        };
        let mut reg = 0.0;
        for (layer, (l1, l2c, l1b, l2b)) in regs.iter().enumerate() {
            let (w, b) = (
                &p[block(&net, &format!("{layer}_W"))],
                &p[block(&net, &format!("{layer}_b"))],
            );
            reg += w
                .iter()
                .map(|v| l1 * v.abs() + 0.5 * l2c * v * v)
                .sum::<f64>();
            reg += b
                .iter()
                .map(|v| l1b * v.abs() + 0.5 * l2b * v * v)
                .sum::<f64>();
        }
        let s = net.score(&x, &y, rows, None).unwrap();
        assert_close(&format!("miniBatch {mini_batch}"), &[s], &[loss + reg], TOL);
        // Training mode gives the same score for this network.
        let st = net.compute_gradient_and_score(&x, &y, rows, None).unwrap();
        assert_close("training score", &[st], &[loss + reg], TOL);
    }
}

#[test]
fn score_examples_matches_hand_computation() {
    let mut rng = Rng::new(61);
    let rows = 4;
    // Softmax + MCXENT with L2 on W and L1 on b; per-example mask.
    let mut out = output(3, 2, "SOFTMAX", "MCXENT");
    out["l2"] = json!(0.1);
    out["l1Bias"] = json!(0.05);
    let mut net = net64(&conf_json(1, true, None, vec![out]));
    let p = randomize_params(&mut net, &mut rng);
    let x = normal(&mut rng, rows * 3);
    let y = ferrodl_testutil::one_hot(&mut rng, rows, 2);
    let a = softmax_rows(
        &dense_forward(&x, rows, &p[..6], Some(&p[6..8]), 3, 2, identity),
        2,
    );
    let per: Vec<f64> = (0..rows)
        .map(|r| {
            -(0..2)
                .map(|c| y[r * 2 + c] * a[r * 2 + c].ln())
                .sum::<f64>()
        })
        .collect();
    let reg = 0.5 * 0.1 * p[..6].iter().map(|v| v * v).sum::<f64>()
        + 0.05 * p[6..8].iter().map(|v| v.abs()).sum::<f64>();
    let got = net.score_examples(&x, &y, rows, None, false).unwrap();
    assert_close("MCXENT per example", &got, &per, TOL);
    let got = net.score_examples(&x, &y, rows, None, true).unwrap();
    let with_reg: Vec<f64> = per.iter().map(|v| v + reg).collect();
    assert_close("MCXENT per example + reg", &got, &with_reg, TOL);
    let mask = [1.0, 0.0, 1.0, 1.0];
    let got = net
        .score_examples(&x, &y, rows, Some((&mask, 1)), false)
        .unwrap();
    let masked: Vec<f64> = per.iter().zip(mask).map(|(v, m)| v * m).collect();
    assert_close("masked per example", &got, &masked, TOL);
    // score() is the mean of the unregularized per-example scores plus the regularization.
    let s = net.score(&x, &y, rows, Some((&mask, 1))).unwrap();
    let want = masked.iter().sum::<f64>() / rows as f64 + reg;
    assert_close("score vs score_examples", &[s], &[want], TOL);

    // MSE with loss weights and a per-output mask: Σ_c w_c m_c (y − a)² / nOut.
    let mut out = output(3, 3, "IDENTITY", "MSE");
    out["lossWeights"] = json!([0.5, 2.0, 1.0]);
    let mut net = net64(&conf_json(2, true, None, vec![out]));
    let p = randomize_params(&mut net, &mut rng);
    let x = normal(&mut rng, rows * 3);
    let y = normal(&mut rng, rows * 3);
    let a = dense_forward(&x, rows, &p[..9], Some(&p[9..12]), 3, 3, identity);
    let m = make_mask(MaskKind::PerOutput, &mut rng, rows, 3).unwrap();
    let w = [0.5, 2.0, 1.0];
    let per: Vec<f64> = (0..rows)
        .map(|r| {
            (0..3)
                .map(|c| w[c] * m.data[r * 3 + c] * (y[r * 3 + c] - a[r * 3 + c]).powi(2))
                .sum::<f64>()
                / 3.0
        })
        .collect();
    let got = net
        .score_examples(&x, &y, rows, Some(m.as_arg()), true)
        .unwrap();
    assert_close("MSE weighted, per-output mask", &got, &per, TOL);
}

// ---- weight initialisation ----------------------------------------------------------------

/// A 400×300 dense layer (fan-in 400, fan-out 300) with `scheme`, plus an output layer.
fn init_net(
    scheme: &str,
    dist: Option<Value>,
    n_in: usize,
    n_out: usize,
) -> MultiLayerNetwork<f64> {
    let mut l = dense(n_in, n_out, "RELU");
    l["weightInit"] = json!(scheme);
    l["weightInitDistribution"] = dist.unwrap_or(Value::Null);
    l["biasInit"] = json!(0.1);
    net64(&conf_json(
        77,
        true,
        None,
        vec![l, output(n_out, 2, "SOFTMAX", "MCXENT")],
    ))
}

/// Spread of each scheme within 3% of the formula of `init.rs`/`WeightInit` (120 000 draws:
/// the sample std has a relative standard error of ~0.2% for normals, so 3% is > 10σ); means
/// within 3% of the std of the expected mean; uniform draws inside their bounds.
#[test]
fn every_weight_init_scheme_has_the_documented_spread() {
    let (fi, fo) = (400.0f64, 300.0f64);
    let sqrt3 = 3f64.sqrt();
    // Variance kept by a standard normal truncated at ±2: 1 − 4φ(2)/(Φ(2) − Φ(−2)).
    let trunc = 0.773_741f64;
    // (scheme, distribution, expected mean, expected std, uniform bound or truncation bound)
    type Case = (&'static str, Option<Value>, f64, f64, Option<(f64, f64)>);
    let cases: Vec<Case> = vec![
        ("XAVIER", None, 0.0, (2.0 / (fi + fo)).sqrt(), None),
        {
            let a = (6.0 / (fi + fo)).sqrt();
            ("XAVIER_UNIFORM", None, 0.0, a / sqrt3, Some((-a, a)))
        },
        ("XAVIER_FAN_IN", None, 0.0, (1.0 / fi).sqrt(), None),
        ("RELU", None, 0.0, (2.0 / fi).sqrt(), None),
        {
            let a = (6.0 / fi).sqrt();
            ("RELU_UNIFORM", None, 0.0, a / sqrt3, Some((-a, a)))
        },
        {
            let s = (1.0 / fi).sqrt();
            (
                "LECUN_NORMAL",
                None,
                0.0,
                s * trunc.sqrt(),
                Some((-2.0 * s, 2.0 * s)),
            )
        },
        {
            let a = (3.0 / fi).sqrt();
            ("LECUN_UNIFORM", None, 0.0, a / sqrt3, Some((-a, a)))
        },
        ("NORMAL", None, 0.0, 1.0 / fi.sqrt(), None),
        {
            let a = 1.0 / fi.sqrt();
            ("UNIFORM", None, 0.0, a / sqrt3, Some((-a, a)))
        },
        (
            "DISTRIBUTION",
            Some(json!({"type": "normal", "mean": 0.5, "std": 2.0})),
            0.5,
            2.0,
            None,
        ),
        (
            "DISTRIBUTION",
            Some(json!({"type": "uniform", "lower": -1.0, "upper": 3.0})),
            1.0,
            4.0 / 12f64.sqrt(),
            Some((-1.0, 3.0)),
        ),
        (
            "DISTRIBUTION",
            Some(json!({"type": "truncatedNormal", "mean": -1.0, "std": 0.5})),
            -1.0,
            0.5 * trunc.sqrt(),
            Some((-2.0, 0.0)),
        ),
    ];
    for (scheme, dist, mean, std, bounds) in cases {
        let what = format!("{scheme} {dist:?}");
        let net = init_net(scheme, dist, 400, 300);
        let w = &net.params()[block(&net, "0_W")];
        assert_eq!(w.len(), 120_000);
        let (m, s) = mean_std(w);
        assert!((s / std - 1.0).abs() < 0.03, "{what}: std {s}, want {std}");
        assert!(
            (m - mean).abs() < 0.03 * std,
            "{what}: mean {m}, want {mean}"
        );
        if let Some((lo, hi)) = bounds {
            assert!(
                w.iter().all(|v| (lo..=hi).contains(v)),
                "{what}: values outside [{lo}, {hi}]"
            );
        }
        assert!(
            net.params()[block(&net, "0_b")].iter().all(|&b| b == 0.1),
            "{what}: biasInit"
        );
    }
    for (scheme, value) in [("ZERO", 0.0), ("ONES", 1.0)] {
        let net = init_net(scheme, None, 400, 300);
        assert!(
            net.params()[block(&net, "0_W")].iter().all(|&v| v == value),
            "{scheme}"
        );
        assert!(net.params()[block(&net, "0_b")].iter().all(|&b| b == 0.1));
    }
    let net = init_net("IDENTITY", None, 300, 300);
    assert_eq!(&net.params()[block(&net, "0_W")], &eye(300)[..]);
    assert!(net.params()[block(&net, "0_b")].iter().all(|&b| b == 0.1));
}

/// `init.rs` documents that IDENTITY needs a square dense weight and that validation guarantees
/// it; the reference refuses non-square identity initialisation.
#[test]
fn identity_init_on_a_non_square_dense_layer_is_refused() {
    let mut l = dense(400, 300, "RELU");
    l["weightInit"] = json!("IDENTITY");
    let v = conf_json(1, true, None, vec![l, output(300, 2, "SOFTMAX", "MCXENT")]);
    let r = MultiLayerConfiguration::from_json(&v.to_string())
        .and_then(MultiLayerNetwork::<f64>::from_configuration);
    match r {
        Err(NnError::InvalidConfig(m)) => {
            assert!(
                m.contains("layer 0 (DenseLayer)") && m.contains("IDENTITY"),
                "{m}"
            )
        }
        other => panic!(
            "expected InvalidConfig, got {:?}",
            other.map(|_| "a network")
        ),
    }
}

// ---- parameter table ----------------------------------------------------------------------

#[test]
fn param_table_of_dense_batchnorm_output() {
    let layers = vec![
        dense(3, 4, "RELU"),
        batch_norm(4, false),
        output(4, 2, "SOFTMAX", "MCXENT"),
    ];
    let net = net64(&conf_json(1, true, None, layers));
    let table = net.param_table();
    let want: Vec<(String, Range<usize>, Vec<usize>)> = vec![
        ("0_W".into(), 0..12, vec![3, 4]),
        ("0_b".into(), 12..16, vec![4]),
        ("1_gamma".into(), 16..20, vec![4]),
        ("1_beta".into(), 20..24, vec![4]),
        ("1_mean".into(), 24..28, vec![4]),
        ("1_var".into(), 28..32, vec![4]),
        ("2_W".into(), 32..40, vec![4, 2]),
        ("2_b".into(), 40..42, vec![2]),
    ];
    assert_eq!(table, want);
    assert_eq!(net.num_params(), 42);
    assert_eq!(net.param_range(1), Some(16..32));
    // Initial values: gamma 1, beta 0, mean 0, var 1.
    let p = net.params();
    assert!(p[16..20].iter().all(|&v| v == 1.0) && p[20..28].iter().all(|&v| v == 0.0));
    assert!(p[28..32].iter().all(|&v| v == 1.0));

    // lockGammaBeta: only the running statistics.
    let layers = vec![
        dense(3, 4, "RELU"),
        batch_norm(4, true),
        output(4, 2, "SOFTMAX", "MCXENT"),
    ];
    let net = net64(&conf_json(1, true, None, layers));
    let names: Vec<String> = net.param_table().into_iter().map(|t| t.0).collect();
    assert_eq!(names, ["0_W", "0_b", "1_mean", "1_var", "2_W", "2_b"]);
    assert_eq!(net.param_table()[2].1, 16..20);
    assert_eq!(net.num_params(), 34);
}

// ---- validation messages ------------------------------------------------------------------

fn config_error(v: &Value) -> String {
    let r = MultiLayerConfiguration::from_json(&v.to_string())
        .and_then(MultiLayerNetwork::<f64>::from_configuration);
    match r {
        Err(NnError::InvalidConfig(m)) => m,
        Err(e) => panic!("expected InvalidConfig, got {e:?}"),
        Ok(_) => panic!("expected InvalidConfig, the configuration was accepted:\n{v}"),
    }
}

fn assert_names(m: &str, layer: &str, field: &str) {
    assert!(
        m.contains(layer) && m.contains(field),
        "message should name {layer} and {field}: {m}"
    );
}

#[test]
fn invalid_configurations_name_the_layer_and_the_field() {
    let c = |layers: Vec<Value>| conf_json(1, true, None, layers);

    // BatchNormalization nIn that does not match its input.
    let m = config_error(&c(vec![
        dense(4, 5, "RELU"),
        batch_norm(6, false),
        output(6, 2, "SOFTMAX", "MCXENT"),
    ]));
    assert_names(&m, "layer 1 (BatchNormalization)", "nIn=6");
    assert!(m.contains('5'), "{m}");
    // nOut != nIn.
    let mut bn = batch_norm(5, false);
    bn["nOut"] = json!(4);
    let m = config_error(&c(vec![
        dense(4, 5, "RELU"),
        bn,
        output(4, 2, "SOFTMAX", "MCXENT"),
    ]));
    assert_names(&m, "layer 1 (BatchNormalization)", "nOut=4");

    // lossWeights of the wrong length (OutputLayer and LossLayer).
    let mut out = output(5, 3, "SOFTMAX", "MCXENT");
    out["lossWeights"] = json!([1.0, 2.0]);
    let m = config_error(&c(vec![dense(4, 5, "RELU"), out]));
    assert_names(&m, "layer 1 (OutputLayer)", "lossWeights");
    assert!(m.contains("2 values") && m.contains('3'), "{m}");
    let mut ll = loss_layer("SOFTMAX", "MCXENT");
    ll["lossWeights"] = json!([1.0, 2.0, 3.0, 4.0]);
    let m = config_error(&c(vec![dense(4, 5, "RELU"), ll]));
    assert_names(&m, "layer 1 (LossLayer)", "lossWeights");

    // dropOut outside [0, 1].
    let mut d = dense(4, 5, "RELU");
    d["dropOut"] = json!(1.5);
    let m = config_error(&c(vec![
        dense(3, 4, "RELU"),
        d,
        output(5, 2, "SOFTMAX", "MCXENT"),
    ]));
    assert_names(&m, "layer 1 (DenseLayer)", "dropOut=1.5");
    let m = config_error(&c(vec![
        dense(3, 4, "RELU"),
        json!({"type": "DropoutLayer", "name": "drop", "dropOut": -0.5}),
        output(4, 2, "SOFTMAX", "MCXENT"),
    ]));
    assert_names(&m, "layer 1 (DropoutLayer \"drop\")", "dropOut=-0.5");

    // DISTRIBUTION without a distribution.
    let mut d = dense(3, 4, "RELU");
    d["weightInit"] = json!("DISTRIBUTION");
    let m = config_error(&c(vec![
        dense(2, 3, "RELU"),
        d,
        output(4, 2, "SOFTMAX", "MCXENT"),
    ]));
    assert_names(&m, "layer 1 (DenseLayer)", "weightInitDistribution");
    // ... or with an invalid one.
    let mut d = dense(3, 4, "RELU");
    d["weightInit"] = json!("DISTRIBUTION");
    d["weightInitDistribution"] = json!({"type": "uniform", "lower": 1.0, "upper": 1.0});
    let m = config_error(&c(vec![
        dense(2, 3, "RELU"),
        d,
        output(4, 2, "SOFTMAX", "MCXENT"),
    ]));
    assert_names(&m, "layer 1 (DenseLayer)", "weightInitDistribution");

    // An EmbeddingLayer that is not fed a single index column.
    let m = config_error(&c(vec![
        dense(4, 3, "RELU"),
        embedding(10, 5, "IDENTITY", false),
        output(5, 2, "SOFTMAX", "MCXENT"),
    ]));
    assert_names(&m, "layer 1 (EmbeddingLayer)", "one column of indices");
    let m = config_error(&conf_json(
        1,
        true,
        Some(json!({"type": "feedForward", "size": 3})),
        vec![
            embedding(10, 5, "IDENTITY", false),
            output(5, 2, "SOFTMAX", "MCXENT"),
        ],
    ));
    assert_names(&m, "layer 0 (EmbeddingLayer)", "one column of indices");

    // gradientNormalizationThreshold 0 with every clip mode (and negative).
    for mode in [
        "ClipElementWiseAbsoluteValue",
        "ClipL2PerLayer",
        "ClipL2PerParamType",
    ] {
        for t in [0.0, -1.0] {
            let mut out = output(5, 2, "SOFTMAX", "MCXENT");
            out["gradientNormalization"] = json!(mode);
            out["gradientNormalizationThreshold"] = json!(t);
            let m = config_error(&c(vec![dense(4, 5, "RELU"), out]));
            assert_names(
                &m,
                "layer 1 (OutputLayer)",
                "gradientNormalizationThreshold",
            );
        }
    }
    // A BatchNormalization layer with a bad decay.
    let mut bn = batch_norm(5, false);
    bn["decay"] = json!(1.5);
    let m = config_error(&c(vec![
        dense(4, 5, "RELU"),
        bn,
        output(5, 2, "SOFTMAX", "MCXENT"),
    ]));
    assert_names(&m, "layer 1 (BatchNormalization)", "decay=1.5");
}

// ---- embedding input ----------------------------------------------------------------------

fn embedding_net(first: bool) -> MultiLayerNetwork<f64> {
    let layers = if first {
        vec![
            embedding(5, 3, "TANH", true),
            output(3, 2, "SOFTMAX", "MCXENT"),
        ]
    } else {
        vec![
            dense(2, 1, "IDENTITY"),
            embedding(5, 3, "TANH", true),
            output(3, 2, "SOFTMAX", "MCXENT"),
        ]
    };
    let it = first.then(|| json!({"type": "feedForward", "size": 1}));
    net64(&conf_json(1, true, it, layers))
}

#[test]
fn embedding_rejects_bad_indices_naming_the_row() {
    let mut net = embedding_net(true);
    let y = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
    for (bad, what) in [(7.0, "7"), (5.0, "5"), (-1.0, "-1"), (1.5, "1.5")] {
        let x = [0.0, 4.0, bad, 1.0];
        let before = net.params().to_vec();
        for e in [
            net.output(&x, 4, false).unwrap_err(),
            net.score(&x, &y, 4, None).unwrap_err(),
            net.fit(&x, &y, 4, None).unwrap_err(),
            net.compute_gradient_and_score(&x, &y, 4, None).unwrap_err(),
        ] {
            match e {
                NnError::InvalidInput(m) => {
                    assert!(
                        m.contains("layer 0 (EmbeddingLayer)")
                            && m.contains("row 2")
                            && m.contains(what),
                        "{m}"
                    );
                }
                other => panic!("expected InvalidInput, got {other:?}"),
            }
        }
        assert_eq!(net.params(), &before[..]);
        assert_eq!(net.iteration_count(), 0);
    }
    // Valid indices work.
    assert!(net.fit(&[0.0, 4.0, 2.0, 1.0], &y, 4, None).is_ok());

    // Behind another layer, the index column is that layer's output.
    let mut net = embedding_net(false);
    let mut q = vec![0.0; net.num_params()];
    // Dense(2→1): index = x0 + x1.
    q[block(&net, "0_W")].copy_from_slice(&[1.0, 1.0]);
    net.set_params(&q).unwrap();
    let ok = net.output(&[1.0, 2.0, 0.0, 4.0], 2, false);
    assert!(ok.is_ok(), "{ok:?}");
    let e = net
        .output(&[1.0, 2.0, 0.0, 4.0, 0.25, 0.5], 3, false)
        .unwrap_err();
    match e {
        NnError::InvalidInput(m) => assert!(
            m.contains("layer 1 (EmbeddingLayer)") && m.contains("row 2") && m.contains("0.75"),
            "{m}"
        ),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

/// Without `inputType` an EmbeddingLayer in first position reads one index column (its nIn is the
/// vocabulary size, not the input width). Found refused by validation; fixed in 1b23dfb.
#[test]
fn embedding_first_layer_without_input_type_reads_one_column() {
    let v = conf_json(
        1,
        true,
        None,
        vec![
            embedding(5, 3, "TANH", true),
            output(3, 2, "SOFTMAX", "MCXENT"),
        ],
    );
    let mut net = net64(&v);
    assert_eq!(net.n_in(), 1);
    assert!(net.output(&[0.0, 4.0, 2.0], 3, false).is_ok());
}
