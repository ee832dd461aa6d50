//! f64 central finite-difference checks of `compute_gradient_and_score` for every activation,
//! every loss (with/without loss weights, labels masks of both kinds, miniBatch true/false),
//! L1/L2 on weights and biases, LossLayer, ActivationLayer, EmbeddingLayer, BatchNormalization
//! (dense and convolutional input, lockGammaBeta true/false) and FrozenLayer.
//!
//! Criterion: `ferrodl_testutil::check_gradient` with `GradCheckConfig::default()` — step
//! h = 1e-6, relative error `|a − n| / max(|a|, |n|)` <= 1e-6 unless `|a − n|` <= 1e-8. No test in
//! this file needs an exception to that criterion. Largest relative errors measured (502 checks):
//! 8.8e-7 for a hidden CUBE layer (seed 2; the score is O(100), so the numeric gradient's rounding
//! error ~1e-16·|S|/h dominates: the same case gives 1.7e-7 with h = 1e-5 and 2.7e-6 with
//! h = 1e-7 — it is the FD estimate, not the engine, that is off); every other check <= 1.2e-7
//! (MAPE, whose per-output terms are scaled by 100/|y|).
//!
//! Data: parameters uniform in [-1, 1) (batch-norm variances in [0.5, 1.5)), inputs standard
//! normal, shapes and batch sizes (>= 3) drawn from a seeded RNG, several seeds per case. The
//! piecewise-linear activations (RELU, RELU6, LEAKYRELU, HARDTANH, HARDSIGMOID) and losses (L1,
//! MAE, MAPE, HINGE, SQUARED_HINGE) have kinks on sets of measure zero: with continuous random data
//! a pre-activation lands within h of a kink with probability ~1e-6 per value, and all seeds here
//! are fixed, so no exception is needed.
//!
//! Score used for the numeric gradient: `score()` (inference mode) wherever training and inference
//! forward passes agree; for batch normalization the training-mode score returned by
//! `compute_gradient_and_score` at the perturbed parameters, and its running-statistics blocks
//! (`<i>_mean`, `<i>_var`, which hold `old − new`, not a gradient) are left out. Dropout is not
//! gradient-checked here (its training pass draws a new mask per call); `engine_semantics.rs`
//! checks that the backward pass uses the forward pass's mask.

#[path = "common/builders.rs"]
mod builders;

use builders::*;
use ferrodl_nn::{Activation, LossFunction};
use ferrodl_testutil::Rng;
use serde_json::{json, Value};

/// Random sizes of a small network and its minibatch.
#[derive(Clone, Copy, Debug)]
struct Dims {
    n_in: usize,
    hidden: usize,
    n_out: usize,
    rows: usize,
}

fn dims(rng: &mut Rng) -> Dims {
    Dims {
        n_in: 2 + rng.below(4) as usize,
        hidden: 2 + rng.below(4) as usize,
        n_out: 2 + rng.below(3) as usize,
        rows: 3 + rng.below(4) as usize,
    }
}

/// Builds the network of `layers`, randomises its parameters and checks the gradient on `x`/`y`.
#[allow(clippy::too_many_arguments)]
fn check_layers(
    what: &str,
    layers: Vec<Value>,
    mini_batch: bool,
    input_type: Option<Value>,
    x: &[f64],
    y: &[f64],
    rows: usize,
    mask: Option<&OwnedMask>,
    mode: ScoreMode,
    seed: u64,
) {
    let mut net = net64(&conf_json(seed as i64, mini_batch, input_type, layers));
    let mut rng = Rng::new(seed ^ 0x5eed);
    randomize_params(&mut net, &mut rng);
    let skip = state_blocks(&net);
    GradCase {
        net: &mut net,
        x,
        y,
        rows,
        mask,
        mode,
        skip,
        negative_control: seed & 3 == 0,
    }
    .run(what);
}

#[test]
fn name_lists_are_complete() {
    assert_eq!(Activation::NAMES.len(), 17);
    assert_eq!(LossFunction::NAMES.len(), 14);
}

#[test]
fn every_activation_in_a_hidden_dense_layer() {
    for act in Activation::NAMES {
        for seed in 0..3u64 {
            let mut rng = Rng::new(1000 + seed);
            let d = dims(&mut rng);
            // SOFTMAX needs nOut >= 2 (validation); every hidden width here is >= 2.
            let layers = vec![
                dense(d.n_in, d.hidden, act),
                output(d.hidden, d.n_out, "IDENTITY", "MSE"),
            ];
            let x = normal(&mut rng, d.rows * d.n_in);
            let y = normal(&mut rng, d.rows * d.n_out);
            check_layers(
                &format!("hidden {act} seed {seed} {d:?}"),
                layers,
                true,
                None,
                &x,
                &y,
                d.rows,
                None,
                ScoreMode::Inference,
                seed,
            );
        }
    }
}

#[test]
fn every_activation_in_the_output_layer_with_mse() {
    for act in Activation::NAMES {
        for seed in 0..3u64 {
            let mut rng = Rng::new(2000 + seed);
            let d = dims(&mut rng);
            let layers = vec![
                dense(d.n_in, d.hidden, "TANH"),
                output(d.hidden, d.n_out, act, "MSE"),
            ];
            let x = normal(&mut rng, d.rows * d.n_in);
            let y = normal(&mut rng, d.rows * d.n_out);
            check_layers(
                &format!("output {act} seed {seed} {d:?}"),
                layers,
                seed == 1,
                None,
                &x,
                &y,
                d.rows,
                None,
                ScoreMode::Inference,
                seed,
            );
        }
    }
}

/// Labels a loss accepts.
#[derive(Clone, Copy, Debug)]
enum Labels {
    /// One 1 per row.
    OneHot,
    /// Rows of a probability distribution, all entries > 0.
    Probabilities,
    /// Independent 0/1.
    Binary,
    /// ±1.
    Signs,
    /// Standard normal.
    Real,
    /// Uniform in [0.5, 2) (MAPE divides by |y|).
    Positive,
    /// Integers 0..=4 (Poisson counts).
    Counts,
}

fn labels(kind: Labels, rng: &mut Rng, rows: usize, cols: usize) -> Vec<f64> {
    let n = rows * cols;
    match kind {
        Labels::OneHot => ferrodl_testutil::one_hot(rng, rows, cols),
        Labels::Probabilities => probabilities(rng, rows, cols),
        Labels::Binary => zero_one(rng, n),
        Labels::Signs => plus_minus_one(rng, n),
        Labels::Real => normal(rng, n),
        Labels::Positive => uniform(rng, n, 0.5, 2.0),
        Labels::Counts => (0..n).map(|_| rng.below(5) as f64).collect(),
    }
}

/// Every loss with output activations whose range the loss accepts.
const LOSS_CASES: [(&str, &str, Labels); 24] = [
    ("MCXENT", "SOFTMAX", Labels::OneHot),
    ("MCXENT", "SOFTMAX", Labels::Probabilities),
    ("MCXENT", "SIGMOID", Labels::Probabilities),
    ("NEGATIVELOGLIKELIHOOD", "SOFTMAX", Labels::Probabilities),
    ("NEGATIVELOGLIKELIHOOD", "SIGMOID", Labels::OneHot),
    ("MSE", "IDENTITY", Labels::Real),
    ("MSE", "TANH", Labels::Real),
    ("L1", "IDENTITY", Labels::Real),
    ("L2", "IDENTITY", Labels::Real),
    ("L2", "SOFTSIGN", Labels::Real),
    ("XENT", "SIGMOID", Labels::Binary),
    ("XENT", "SIGMOID", Labels::Probabilities),
    ("XENT", "SOFTMAX", Labels::Binary),
    ("MEAN_ABSOLUTE_ERROR", "IDENTITY", Labels::Real),
    (
        "MEAN_ABSOLUTE_PERCENTAGE_ERROR",
        "IDENTITY",
        Labels::Positive,
    ),
    (
        "MEAN_ABSOLUTE_PERCENTAGE_ERROR",
        "SOFTPLUS",
        Labels::Positive,
    ),
    (
        "MEAN_SQUARED_LOGARITHMIC_ERROR",
        "SOFTPLUS",
        Labels::Positive,
    ),
    ("MEAN_SQUARED_LOGARITHMIC_ERROR", "SIGMOID", Labels::Binary),
    ("HINGE", "IDENTITY", Labels::Signs),
    ("SQUARED_HINGE", "TANH", Labels::Signs),
    ("KL_DIVERGENCE", "SOFTMAX", Labels::Probabilities),
    ("COSINE_PROXIMITY", "IDENTITY", Labels::Real),
    ("POISSON", "SOFTPLUS", Labels::Counts),
    ("POISSON", "SIGMOID", Labels::Probabilities),
];

#[test]
fn every_loss_with_weights_masks_and_minibatch_modes() {
    let covered: std::collections::HashSet<&str> = LOSS_CASES.iter().map(|c| c.0).collect();
    for name in LossFunction::NAMES {
        assert!(covered.contains(name), "loss {name} has no gradient check");
    }
    let mut seed = 0u64;
    for (loss, act, kind) in LOSS_CASES {
        for weighted in [false, true] {
            for mask_kind in [MaskKind::None, MaskKind::PerExample, MaskKind::PerOutput] {
                for mini_batch in [true, false] {
                    seed += 1;
                    let mut rng = Rng::new(3000 + seed);
                    let d = dims(&mut rng);
                    let mut out = output(d.hidden, d.n_out, act, loss);
                    if weighted {
                        out["lossWeights"] = json!(uniform(&mut rng, d.n_out, 0.5, 2.0));
                    }
                    let layers = vec![dense(d.n_in, d.hidden, "TANH"), out];
                    let x = normal(&mut rng, d.rows * d.n_in);
                    let y = labels(kind, &mut rng, d.rows, d.n_out);
                    let mask = make_mask(mask_kind, &mut rng, d.rows, d.n_out);
                    check_layers(
                        &format!(
                            "{loss}/{act} {kind:?} weighted {weighted} mask {mask_kind:?} \
                             miniBatch {mini_batch} {d:?}"
                        ),
                        layers,
                        mini_batch,
                        None,
                        &x,
                        &y,
                        d.rows,
                        mask.as_ref(),
                        ScoreMode::Inference,
                        seed,
                    );
                }
            }
        }
    }
}

#[test]
fn l1_l2_on_weights_and_biases_across_several_layers() {
    // (l1, l2, l1Bias, l2Bias) per variant; each layer gets its own multiple.
    let variants = [
        (0.01, 0.02, 0.005, 0.03),
        (0.0, 0.05, 0.0, 0.0),
        (0.03, 0.0, 0.0, 0.0),
        (0.0, 0.0, 0.02, 0.0),
        (0.0, 0.0, 0.0, 0.04),
    ];
    for (v, &(l1, l2, l1b, l2b)) in variants.iter().enumerate() {
        for seed in 0..2u64 {
            let mut rng = Rng::new(4000 + 10 * v as u64 + seed);
            let d = dims(&mut rng);
            let mut layers = vec![
                dense(d.n_in, d.hidden, "RELU"),
                dense(d.hidden, 4, "SIGMOID"),
                dense(4, 3, "ELU"),
                output(3, d.n_out, "SOFTMAX", "MCXENT"),
            ];
            for (i, l) in layers.iter_mut().enumerate() {
                let k = (i + 1) as f64;
                l["l1"] = json!(l1 * k);
                l["l2"] = json!(l2 * k);
                l["l1Bias"] = json!(l1b * k);
                l["l2Bias"] = json!(l2b * k);
            }
            let x = normal(&mut rng, d.rows * d.n_in);
            let y = ferrodl_testutil::one_hot(&mut rng, d.rows, d.n_out);
            check_layers(
                &format!("regularization {:?} seed {seed}", variants[v]),
                layers,
                seed == 0,
                None,
                &x,
                &y,
                d.rows,
                None,
                ScoreMode::Inference,
                seed,
            );
        }
    }
}

#[test]
fn loss_layer_after_a_dense_layer() {
    let cases: [(&str, &str, Labels); 6] = [
        ("SOFTMAX", "MCXENT", Labels::OneHot),
        ("IDENTITY", "MSE", Labels::Real),
        ("SIGMOID", "XENT", Labels::Binary),
        ("TANH", "L2", Labels::Real),
        ("SOFTPLUS", "POISSON", Labels::Counts),
        ("IDENTITY", "COSINE_PROXIMITY", Labels::Real),
    ];
    let mut seed = 0u64;
    for (act, loss, kind) in cases {
        for weighted in [false, true] {
            for mask_kind in [MaskKind::None, MaskKind::PerOutput] {
                seed += 1;
                let mut rng = Rng::new(5000 + seed);
                let d = dims(&mut rng);
                let mut ll = loss_layer(act, loss);
                if weighted {
                    ll["lossWeights"] = json!(uniform(&mut rng, d.n_out, 0.5, 2.0));
                }
                let mut hidden = dense(d.hidden, d.n_out, "IDENTITY");
                hidden["l2"] = json!(0.01);
                let layers = vec![dense(d.n_in, d.hidden, "TANH"), hidden, ll];
                let x = normal(&mut rng, d.rows * d.n_in);
                let y = labels(kind, &mut rng, d.rows, d.n_out);
                let mask = make_mask(mask_kind, &mut rng, d.rows, d.n_out);
                check_layers(
                    &format!("LossLayer {act}/{loss} weighted {weighted} mask {mask_kind:?}"),
                    layers,
                    true,
                    None,
                    &x,
                    &y,
                    d.rows,
                    mask.as_ref(),
                    ScoreMode::Inference,
                    seed,
                );
            }
        }
    }
}

#[test]
fn activation_layer_between_dense_layers() {
    for (k, act) in Activation::NAMES.iter().enumerate() {
        for seed in 0..2u64 {
            let mut rng = Rng::new(6000 + 10 * k as u64 + seed);
            let d = dims(&mut rng);
            let layers = vec![
                dense(d.n_in, d.hidden, "IDENTITY"),
                activation_layer(act),
                dense(d.hidden, 3, "TANH"),
                output(3, d.n_out, "SOFTMAX", "MCXENT"),
            ];
            let x = normal(&mut rng, d.rows * d.n_in);
            let y = ferrodl_testutil::one_hot(&mut rng, d.rows, d.n_out);
            check_layers(
                &format!("ActivationLayer {act} seed {seed}"),
                layers,
                true,
                None,
                &x,
                &y,
                d.rows,
                None,
                ScoreMode::Inference,
                seed,
            );
        }
    }
}

#[test]
fn embedding_as_the_first_layer() {
    let mut seed = 0u64;
    for act in ["IDENTITY", "TANH", "GELU", "SOFTMAX"] {
        for has_bias in [false, true] {
            for direct_output in [false, true] {
                seed += 1;
                let mut rng = Rng::new(7000 + seed);
                let d = dims(&mut rng);
                let vocab = 5;
                // 8 rows over 5 indices: some rows share an index (accumulated gradient).
                let rows = 8;
                let mut emb = embedding(vocab, d.hidden, act, has_bias);
                emb["l2"] = json!(0.02);
                emb["l1Bias"] = json!(0.01);
                let layers = if direct_output {
                    vec![emb, output(d.hidden, d.n_out, "SOFTMAX", "MCXENT")]
                } else {
                    vec![
                        emb,
                        dense(d.hidden, 3, "SIGMOID"),
                        output(3, d.n_out, "SOFTMAX", "MCXENT"),
                    ]
                };
                let x = indices(&mut rng, rows, vocab);
                let y = ferrodl_testutil::one_hot(&mut rng, rows, d.n_out);
                // The index column with and without an explicit input type.
                let it = (seed % 4 < 2).then(|| json!({"type": "feedForward", "size": 1}));
                check_layers(
                    &format!("Embedding {act} bias {has_bias} direct {direct_output}"),
                    layers,
                    seed & 1 == 0,
                    it,
                    &x,
                    &y,
                    rows,
                    None,
                    ScoreMode::Inference,
                    seed,
                );
            }
        }
    }
}

#[test]
fn batch_normalization_on_dense_input() {
    let mut seed = 0u64;
    for lock in [false, true] {
        for bn_act in ["IDENTITY", "TANH", "SOFTPLUS"] {
            for first in [false, true] {
                seed += 1;
                let mut rng = Rng::new(8000 + seed);
                let d = dims(&mut rng);
                let mut bn = batch_norm(d.hidden, lock);
                bn["activation"] = json!(bn_act);
                if lock {
                    // Fixed gamma/beta other than the defaults.
                    bn["gamma"] = json!(1.7);
                    bn["beta"] = json!(-0.3);
                }
                let (layers, x) = if first {
                    let layers = vec![
                        bn,
                        dense(d.hidden, 4, "TANH"),
                        output(4, d.n_out, "SOFTMAX", "MCXENT"),
                    ];
                    (layers, normal(&mut rng, d.rows * d.hidden))
                } else {
                    let layers = vec![
                        dense(d.n_in, d.hidden, "TANH"),
                        bn,
                        output(d.hidden, d.n_out, "SOFTMAX", "MCXENT"),
                    ];
                    (layers, normal(&mut rng, d.rows * d.n_in))
                };
                let y = ferrodl_testutil::one_hot(&mut rng, d.rows, d.n_out);
                check_layers(
                    &format!("BN lock {lock} act {bn_act} first {first} {d:?}"),
                    layers,
                    ![3, 6, 9, 12].contains(&seed),
                    None,
                    &x,
                    &y,
                    d.rows,
                    None,
                    ScoreMode::Training,
                    seed,
                );
            }
        }
    }
}

#[test]
fn batch_normalization_stacked_with_regularization_and_masks() {
    for seed in 0..4u64 {
        let mut rng = Rng::new(8100 + seed);
        let d = dims(&mut rng);
        let mut layers = vec![
            dense(d.n_in, d.hidden, "IDENTITY"),
            batch_norm(d.hidden, false),
            dense(d.hidden, 4, "RELU"),
            batch_norm(4, seed % 2 == 1),
            output(4, d.n_out, "IDENTITY", "MSE"),
        ];
        for l in layers.iter_mut() {
            l["l1"] = json!(0.01);
            l["l2"] = json!(0.02);
            l["l1Bias"] = json!(0.015);
            l["l2Bias"] = json!(0.025);
        }
        let x = normal(&mut rng, d.rows * d.n_in);
        let y = normal(&mut rng, d.rows * d.n_out);
        let mask = make_mask(MaskKind::PerOutput, &mut rng, d.rows, d.n_out);
        check_layers(
            &format!("BN stack seed {seed}"),
            layers,
            true,
            None,
            &x,
            &y,
            d.rows,
            mask.as_ref(),
            ScoreMode::Training,
            seed,
        );
    }
}

#[test]
fn batch_normalization_on_convolutional_input() {
    let mut seed = 0u64;
    for lock in [false, true] {
        for (c, h, w) in [(2, 3, 2), (3, 2, 2), (1, 4, 3)] {
            seed += 1;
            let mut rng = Rng::new(8200 + seed);
            let rows = 3 + rng.below(3) as usize;
            let n_out = 3;
            let mut bn = batch_norm(c, lock);
            bn["activation"] = json!("TANH");
            let layers = vec![bn, output(c * h * w, n_out, "SOFTMAX", "MCXENT")];
            let it = json!({"type": "convolutional", "height": h, "width": w, "channels": c});
            let x = normal(&mut rng, rows * c * h * w);
            let y = ferrodl_testutil::one_hot(&mut rng, rows, n_out);
            check_layers(
                &format!("BN conv lock {lock} [{c},{h},{w}] rows {rows}"),
                layers,
                true,
                Some(it),
                &x,
                &y,
                rows,
                None,
                ScoreMode::Training,
                seed,
            );
        }
    }
}

/// Frozen dense layer(s) in front of / between trainable layers: the trainable part's gradient
/// is checked (frozen blocks left out); 5 Adam fits leave the frozen parameters bit-identical.
#[test]
fn frozen_layers_gradients_and_parameters() {
    let adam = json!({"type": "Adam", "learningRate": 0.05, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8});
    for (case, seed) in [(0, 1u64), (1, 2), (2, 3), (0, 4), (3, 5), (4, 6)] {
        let mut rng = Rng::new(9000 + seed);
        let d = dims(&mut rng);
        let mut fz = dense(d.n_in, d.hidden, "TANH");
        fz["l2"] = json!(0.1);
        let layers = match case {
            // Frozen first.
            0 => vec![
                frozen(fz),
                dense(d.hidden, 4, "SIGMOID"),
                output(4, d.n_out, "SOFTMAX", "MCXENT"),
            ],
            // Frozen between trainable layers: the gradient flows through it.
            1 => vec![
                dense(d.n_in, d.n_in, "TANH"),
                frozen(fz),
                output(d.hidden, d.n_out, "SOFTMAX", "MCXENT"),
            ],
            // Frozen output layer: the gradient flows through it into the trainable layers.
            3 => vec![
                dense(d.n_in, d.hidden, "SOFTPLUS"),
                frozen(output(d.hidden, d.n_out, "SOFTMAX", "MCXENT")),
            ],
            // Frozen embedding in front (index column input).
            4 => vec![
                frozen(embedding(6, d.hidden, "TANH", true)),
                dense(d.hidden, 3, "SIGMOID"),
                output(3, d.n_out, "SOFTMAX", "MCXENT"),
            ],
            // Frozen batch norm between trainable layers (inference mode, fixed statistics).
            _ => vec![
                frozen(dense(d.n_in, d.hidden, "ELU")),
                dense(d.hidden, d.hidden, "TANH"),
                frozen(batch_norm(d.hidden, false)),
                output(d.hidden, d.n_out, "SOFTMAX", "MCXENT"),
            ],
        };
        let mut layers = layers;
        for l in layers.iter_mut() {
            if l["type"] == "FrozenLayer" {
                l["layer"]["updater"] = adam.clone();
                l["layer"]["biasUpdater"] = adam.clone();
            } else {
                l["updater"] = adam.clone();
                l["biasUpdater"] = adam.clone();
            }
        }
        let frozen_idx: Vec<usize> = layers
            .iter()
            .enumerate()
            .filter(|(_, l)| l["type"] == "FrozenLayer")
            .map(|(i, _)| i)
            .collect();
        let it = (case == 4).then(|| json!({"type": "feedForward", "size": 1}));
        let mut net = net64(&conf_json(seed as i64, true, it, layers));
        randomize_params(&mut net, &mut rng);
        let skip: Vec<_> = frozen_idx
            .iter()
            .map(|&i| net.param_range(i).unwrap())
            .collect();
        let x = if case == 4 {
            indices(&mut rng, d.rows, 6)
        } else {
            normal(&mut rng, d.rows * d.n_in)
        };
        let y = ferrodl_testutil::one_hot(&mut rng, d.rows, d.n_out);
        // A frozen network trains nothing in front of the first trainable layer, and every
        // frozen layer runs in inference mode, so score() is the training score here.
        GradCase {
            net: &mut net,
            x: &x,
            y: &y,
            rows: d.rows,
            mask: None,
            mode: ScoreMode::Inference,
            skip: skip.clone(),
            negative_control: true,
        }
        .run(&format!("frozen case {case} seed {seed}"));

        let before = net.params().to_vec();
        for _ in 0..5 {
            net.fit(&x, &y, d.rows, None).unwrap();
        }
        let after = net.params();
        for r in &skip {
            let same = before[r.clone()]
                .iter()
                .zip(&after[r.clone()])
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "case {case}: frozen block {r:?} changed");
        }
        let trainable_moved = (0..before.len())
            .filter(|i| !skip.iter().any(|r| r.contains(i)))
            .any(|i| before[i] != after[i]);
        assert!(trainable_moved, "case {case}: nothing trained");
    }
}
