//! Configuration builders, random data and an f64 gradient-check harness shared by
//! `gradient_checks_all.rs` and `engine_semantics.rs` (declared there with `#[path]`).
#![allow(dead_code)]

use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork};
use ferrodl_testutil::{check_gradient, GradCheckConfig, GradCheckReport, Rng};
use serde_json::{json, Value};
use std::ops::Range;

// ---- configuration JSON ---------------------------------------------------------------------

/// Sgd with learning rate `lr` as an updater object.
pub fn sgd(lr: f64) -> Value {
    json!({"type": "Sgd", "learningRate": lr})
}

/// The fields every parameterised layer has (ARCHITECTURE.md §2.2), all written out.
fn base_fields(kind: &str, activation: &str) -> Value {
    json!({
        "type": kind, "name": null, "dropOut": 0.0,
        "activation": activation, "weightInit": "XAVIER", "weightInitDistribution": null,
        "biasInit": 0.0,
        "l1": 0.0, "l2": 0.0, "l1Bias": 0.0, "l2Bias": 0.0,
        "weightDecay": 0.0, "weightDecayBias": 0.0,
        "updater": sgd(0.1), "biasUpdater": sgd(0.1),
        "gradientNormalization": "None", "gradientNormalizationThreshold": 1.0
    })
}

pub fn dense(n_in: usize, n_out: usize, activation: &str) -> Value {
    let mut v = base_fields("DenseLayer", activation);
    v["nIn"] = json!(n_in);
    v["nOut"] = json!(n_out);
    v["hasBias"] = json!(true);
    v
}

pub fn output(n_in: usize, n_out: usize, activation: &str, loss: &str) -> Value {
    let mut v = base_fields("OutputLayer", activation);
    v["nIn"] = json!(n_in);
    v["nOut"] = json!(n_out);
    v["hasBias"] = json!(true);
    v["lossFunction"] = json!(loss);
    v["lossWeights"] = Value::Null;
    v
}

pub fn loss_layer(activation: &str, loss: &str) -> Value {
    json!({"type": "LossLayer", "name": null, "dropOut": 0.0, "activation": activation,
           "lossFunction": loss, "lossWeights": null})
}

pub fn activation_layer(activation: &str) -> Value {
    json!({"type": "ActivationLayer", "name": null, "dropOut": 0.0, "activation": activation})
}

/// BatchNormalization over `n` features/channels (identity activation, decay 0.9, eps 1e-5).
pub fn batch_norm(n: usize, lock_gamma_beta: bool) -> Value {
    let mut v = base_fields("BatchNormalization", "IDENTITY");
    v["nIn"] = json!(n);
    v["nOut"] = json!(n);
    v["decay"] = json!(0.9);
    v["eps"] = json!(1e-5);
    v["lockGammaBeta"] = json!(lock_gamma_beta);
    v["gamma"] = json!(1.0);
    v["beta"] = json!(0.0);
    v
}

pub fn embedding(n_in: usize, n_out: usize, activation: &str, has_bias: bool) -> Value {
    let mut v = base_fields("EmbeddingLayer", activation);
    v["nIn"] = json!(n_in);
    v["nOut"] = json!(n_out);
    v["hasBias"] = json!(has_bias);
    v
}

pub fn frozen(inner: Value) -> Value {
    json!({"type": "FrozenLayer", "name": null, "dropOut": 0.0, "layer": inner})
}

/// The whole configuration object.
pub fn conf_json(
    seed: i64,
    mini_batch: bool,
    input_type: Option<Value>,
    layers: Vec<Value>,
) -> Value {
    json!({
        "formatVersion": 1, "seed": seed, "miniBatch": mini_batch,
        "iterationCount": 0, "epochCount": 0,
        "inputType": input_type.unwrap_or(Value::Null),
        "layers": layers
    })
}

/// Parses and validates `v`, panicking with the message when it is invalid.
pub fn parse(v: &Value) -> MultiLayerConfiguration {
    MultiLayerConfiguration::from_json(&v.to_string())
        .unwrap_or_else(|e| panic!("invalid test configuration: {e}\n{v}"))
}

pub fn net64(v: &Value) -> MultiLayerNetwork<f64> {
    MultiLayerNetwork::<f64>::from_configuration(parse(v)).expect("network builds")
}

/// Sets `key` to `value` on every layer object of `layers` that has parameters (or on all).
pub fn set_all(layers: &mut [Value], key: &str, value: Value) {
    for l in layers {
        l[key] = value.clone();
    }
}

// ---- parameters -----------------------------------------------------------------------------

/// Ranges of the parameter blocks whose table name ends with `_<suffix>` (e.g. `mean`, `var`).
pub fn blocks_named(net: &MultiLayerNetwork<f64>, suffix: &str) -> Vec<Range<usize>> {
    let tail = format!("_{suffix}");
    net.param_table()
        .into_iter()
        .filter(|(name, _, _)| name.ends_with(&tail))
        .map(|(_, r, _)| r)
        .collect()
}

/// The running-statistics blocks (`<i>_mean`, `<i>_var`) of every batch-norm layer.
pub fn state_blocks(net: &MultiLayerNetwork<f64>) -> Vec<Range<usize>> {
    let mut v = blocks_named(net, "mean");
    v.extend(blocks_named(net, "var"));
    v
}

/// Uniform parameters in [-1, 1), batch-norm variances in [0.5, 1.5) (they must stay positive).
pub fn randomize_params(net: &mut MultiLayerNetwork<f64>, rng: &mut Rng) -> Vec<f64> {
    let mut p: Vec<f64> = (0..net.num_params())
        .map(|_| rng.uniform(-1.0, 1.0))
        .collect();
    for r in blocks_named(net, "var") {
        for v in &mut p[r] {
            *v = rng.uniform(0.5, 1.5);
        }
    }
    net.set_params(&p).unwrap();
    p
}

// ---- random data ----------------------------------------------------------------------------

pub fn normal(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.next_gaussian()).collect()
}

pub fn uniform(rng: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..n).map(|_| rng.uniform(lo, hi)).collect()
}

/// Rows of random probability distributions (every entry > 0, rows sum to 1).
pub fn probabilities(rng: &mut Rng, rows: usize, cols: usize) -> Vec<f64> {
    let mut v = uniform(rng, rows * cols, 0.05, 1.0);
    for row in v.chunks_mut(cols) {
        let s: f64 = row.iter().sum();
        row.iter_mut().for_each(|x| *x /= s);
    }
    v
}

/// Random ±1 values.
pub fn plus_minus_one(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| if rng.next_f64() < 0.5 { -1.0 } else { 1.0 })
        .collect()
}

/// Random 0/1 values.
pub fn zero_one(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| if rng.next_f64() < 0.5 { 0.0 } else { 1.0 })
        .collect()
}

/// Random integer-valued indices in `[0, n)` as floats.
pub fn indices(rng: &mut Rng, rows: usize, n: usize) -> Vec<f64> {
    (0..rows).map(|_| rng.below(n as u64) as f64).collect()
}

/// A labels mask, owned.
#[derive(Clone, Debug)]
pub struct OwnedMask {
    pub data: Vec<f64>,
    pub cols: usize,
}

impl OwnedMask {
    pub fn as_arg(&self) -> (&[f64], usize) {
        (&self.data, self.cols)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskKind {
    None,
    /// `rows × 1`: every other example masked out (example 0 kept).
    PerExample,
    /// `rows × nOut` of random 0/1 with the first entry of each row 1.
    PerOutput,
}

pub fn make_mask(kind: MaskKind, rng: &mut Rng, rows: usize, n_out: usize) -> Option<OwnedMask> {
    match kind {
        MaskKind::None => None,
        MaskKind::PerExample => Some(OwnedMask {
            data: (0..rows)
                .map(|r| if r % 2 == 0 { 1.0 } else { 0.0 })
                .collect(),
            cols: 1,
        }),
        MaskKind::PerOutput => {
            let mut data = zero_one(rng, rows * n_out);
            for r in 0..rows {
                data[r * n_out] = 1.0;
            }
            Some(OwnedMask { data, cols: n_out })
        }
    }
}

// ---- gradient checks ------------------------------------------------------------------------

/// Which score the numeric gradient differentiates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreMode {
    /// `score()` (inference mode): for networks whose training and inference forward passes agree.
    Inference,
    /// The training-mode score `compute_gradient_and_score` returns (batch normalization).
    Training,
}

/// One gradient check: the network with its current parameters and a minibatch.
pub struct GradCase<'a> {
    pub net: &'a mut MultiLayerNetwork<f64>,
    pub x: &'a [f64],
    pub y: &'a [f64],
    pub rows: usize,
    pub mask: Option<&'a OwnedMask>,
    pub mode: ScoreMode,
    /// Parameter ranges left out of the comparison (running statistics, frozen blocks).
    pub skip: Vec<Range<usize>>,
    /// Also run a negative control: a 1e-4 relative error in the largest analytic entry must be
    /// reported as exactly one failure.
    pub negative_control: bool,
}

fn score_of(
    net: &mut MultiLayerNetwork<f64>,
    mode: ScoreMode,
    x: &[f64],
    y: &[f64],
    rows: usize,
    mask: Option<(&[f64], usize)>,
) -> f64 {
    match mode {
        ScoreMode::Inference => net.score(x, y, rows, mask).unwrap(),
        ScoreMode::Training => net.compute_gradient_and_score(x, y, rows, mask).unwrap(),
    }
}

impl GradCase<'_> {
    /// Runs the check with the default criterion (rel. error <= 1e-6, abs guard 1e-8, h = 1e-6);
    /// panics with `what` and the report when it fails. Returns the report.
    pub fn run(self, what: &str) -> GradCheckReport {
        self.run_with(what, GradCheckConfig::default())
    }

    pub fn run_with(self, what: &str, cfg: GradCheckConfig) -> GradCheckReport {
        let GradCase {
            net,
            x,
            y,
            rows,
            mask,
            mode,
            skip,
            negative_control,
        } = self;
        let m = mask.map(OwnedMask::as_arg);
        let base = net.params().to_vec();
        let score = net.compute_gradient_and_score(x, y, rows, m).unwrap();
        assert!(score.is_finite(), "{what}: score {score}");
        let analytic_full = net.gradient().to_vec();
        let idx: Vec<usize> = (0..base.len())
            .filter(|i| !skip.iter().any(|r| r.contains(i)))
            .collect();
        let mut p: Vec<f64> = idx.iter().map(|&i| base[i]).collect();
        let analytic: Vec<f64> = idx.iter().map(|&i| analytic_full[i]).collect();
        assert!(
            analytic.iter().any(|g| g.abs() > 1e-6),
            "{what}: the checked gradient is all zero"
        );
        let mut full = base.clone();
        let mut numeric_score = |q: &[f64]| {
            for (k, &i) in idx.iter().enumerate() {
                full[i] = q[k];
            }
            net.set_params(&full).unwrap();
            score_of(net, mode, x, y, rows, m)
        };
        let report = check_gradient(&mut p, &analytic, &mut numeric_score, cfg);
        assert!(report.passed(), "{what}: {report}");
        if negative_control {
            let k = (0..analytic.len())
                .max_by(|&a, &b| analytic[a].abs().total_cmp(&analytic[b].abs()))
                .unwrap();
            let mut wrong = analytic.clone();
            wrong[k] *= 1.0 + 1e-4;
            let bad = check_gradient(&mut p, &wrong, &mut numeric_score, cfg);
            assert_eq!(
                bad.failures.len(),
                1,
                "{what}: negative control not detected: {bad}"
            );
        }
        net.set_params(&base).unwrap();
        report
    }
}

// ---- hand computations ----------------------------------------------------------------------

/// `x (rows × n_in) · w (n_in × n_out) + b`, then `act` elementwise, in plain loops.
pub fn dense_forward(
    x: &[f64],
    rows: usize,
    w: &[f64],
    b: Option<&[f64]>,
    n_in: usize,
    n_out: usize,
    act: impl Fn(f64) -> f64,
) -> Vec<f64> {
    let mut out = vec![0.0; rows * n_out];
    for r in 0..rows {
        for j in 0..n_out {
            let mut z = b.map_or(0.0, |b| b[j]);
            for i in 0..n_in {
                z += x[r * n_in + i] * w[i * n_out + j];
            }
            out[r * n_out + j] = act(z);
        }
    }
    out
}

/// Softmax of each row.
pub fn softmax_rows(z: &[f64], cols: usize) -> Vec<f64> {
    let mut out = z.to_vec();
    for row in out.chunks_mut(cols) {
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = row.iter().map(|v| (v - m).exp()).sum();
        row.iter_mut().for_each(|v| *v = (*v - m).exp() / s);
    }
    out
}

/// `|a − b| <= tol · max(1, |b|)` elementwise, with the first offending index in the message.
pub fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}: index {i}: got {g:.17e}, want {w:.17e} (diff {:.3e})",
            (g - w).abs()
        );
    }
}

/// Mean and (population) standard deviation.
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The range of the parameter block named `name` (`"<layer>_<param>"`) in `params()`.
pub fn block(net: &MultiLayerNetwork<f64>, name: &str) -> Range<usize> {
    net.param_table()
        .into_iter()
        .find(|(n, _, _)| n == name)
        .map(|(_, r, _)| r)
        .unwrap_or_else(|| panic!("no parameter block {name}"))
}

/// An `n × n` identity matrix, row-major.
pub fn eye(n: usize) -> Vec<f64> {
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        w[i * n + i] = 1.0;
    }
    w
}
