//! f64 central finite-difference gradient checks of every activation, loss (with and without
//! labels masks), layer stack and regularizer.
//!
//! Criterion (ferrodl_testutil::check_gradient): for each parameter, relative error
//! `|a - n| / max(|a|, |n|)` between the analytic gradient `a` and the numeric gradient
//! `n = (S(p+h) - S(p-h)) / 2h` with `h = 1e-6` must be <= 1e-6, unless `|a - n| <= 1e-8` (the guard
//! for gradients so small that f64 rounding of the score, ~1e-16/h, dominates).
//! Parameters are randomised (uniform in [-1, 1)) so no weight or bias sits at an L1 kink, and
//! inputs are standard normal so ReLU kinks are hit with negligible probability.

mod common;

use common::*;
use ferrodl_nn::MultiLayerNetwork;
use ferrodl_testutil::{
    binary_mask, check_gradient, normal_matrix, one_hot, uniform_matrix, GradCheckConfig, Rng,
};
use serde_json::{json, Value};

const ACTIVATIONS: [&str; 6] = [
    "IDENTITY",
    "RELU",
    "LEAKYRELU",
    "TANH",
    "SIGMOID",
    "SOFTMAX",
];

#[derive(Clone, Copy, Debug)]
enum Mask {
    None,
    PerExample,
    PerOutput,
}

/// Builds an f64 network, randomises its parameters and checks its gradient on random data.
fn run_check(layers: Vec<Value>, mini_batch: bool, mask: Mask, seed: u64) {
    let mut cv = conf_value(seed as i64, layers);
    cv["miniBatch"] = json!(mini_batch);
    let conf = ferrodl_nn::MultiLayerConfiguration::from_json(&cv.to_string()).unwrap();
    let loss = match conf.layers.last().unwrap() {
        ferrodl_nn::LayerConfig::OutputLayer(o) => o.loss_function,
        _ => unreachable!(),
    };
    let act = conf.layers.last().unwrap().activation().unwrap();
    let mut net = MultiLayerNetwork::<f64>::from_configuration(conf).unwrap();
    let (n_in, n_out, rows) = (net.n_in(), net.n_out(), 5);
    let mut rng = Rng::new(seed);
    let mut p = uniform_matrix(&mut rng, 1, net.num_params(), -1.0, 1.0);
    net.set_params(&p).unwrap();
    let x = normal_matrix(&mut rng, rows, n_in);
    let y = match (loss, act) {
        (ferrodl_nn::LossFunction::Mse, _) => normal_matrix(&mut rng, rows, n_out),
        (_, ferrodl_nn::Activation::Softmax) => one_hot(&mut rng, rows, n_out),
        // Cross entropy on non-softmax outputs: independent 0/1 targets.
        _ => binary_mask(&mut rng, rows, n_out, 0.5),
    };
    let m = match mask {
        Mask::None => None,
        // Every other example masked out entirely.
        Mask::PerExample => Some((
            (0..rows)
                .map(|r| if r % 2 == 0 { 1.0 } else { 0.0 })
                .collect(),
            1,
        )),
        Mask::PerOutput => Some((binary_mask(&mut rng, rows, n_out, 0.6), n_out)),
    };
    let mref = m.as_ref().map(|(d, c)| (d.as_slice(), *c));
    let score = net.compute_gradient_and_score(&x, &y, rows, mref).unwrap();
    assert!(score.is_finite());
    let analytic = net.gradient().to_vec();
    assert!(
        analytic.iter().any(|g| g.abs() > 1e-6),
        "gradient is all zero"
    );
    let report = check_gradient(
        &mut p,
        &analytic,
        |q| {
            net.set_params(q).unwrap();
            net.score(&x, &y, rows, mref).unwrap()
        },
        GradCheckConfig::default(),
    );
    assert!(report.passed(), "mask {mask:?}: {report}");
    assert!(report.max_rel_error <= 1e-6);

    // Negative control: a 1e-4 relative error in one entry must be caught.
    let mut wrong = analytic.clone();
    let k = wrong
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap()
        .0;
    wrong[k] *= 1.0 + 1e-4;
    let report = check_gradient(
        &mut p,
        &wrong,
        |q| {
            net.set_params(q).unwrap();
            net.score(&x, &y, rows, mref).unwrap()
        },
        GradCheckConfig::default(),
    );
    assert_eq!(
        report.failures.len(),
        1,
        "negative control not detected: {report}"
    );
}

#[test]
fn every_activation_in_a_hidden_layer() {
    for (i, a) in ACTIVATIONS.iter().enumerate() {
        run_check(
            vec![dense(4, 3, a), output(3, 2, "IDENTITY", "MSE")],
            true,
            Mask::None,
            10 + i as u64,
        );
    }
}

#[test]
fn every_activation_in_the_output_layer_with_mse() {
    for (i, a) in ACTIVATIONS.iter().enumerate() {
        run_check(
            vec![dense(3, 4, "TANH"), output(4, 3, a, "MSE")],
            true,
            Mask::None,
            20 + i as u64,
        );
    }
}

#[test]
fn every_loss_with_and_without_masks() {
    let cases = [
        ("SOFTMAX", "MCXENT"),
        ("SOFTMAX", "NEGATIVELOGLIKELIHOOD"),
        ("SIGMOID", "MCXENT"),
        ("SIGMOID", "NEGATIVELOGLIKELIHOOD"),
        ("IDENTITY", "MSE"),
        ("TANH", "MSE"),
    ];
    for (i, (act, loss)) in cases.iter().enumerate() {
        for (j, mask) in [Mask::None, Mask::PerExample, Mask::PerOutput]
            .into_iter()
            .enumerate()
        {
            run_check(
                vec![dense(3, 4, "SIGMOID"), output(4, 3, act, loss)],
                true,
                mask,
                100 + 10 * i as u64 + j as u64,
            );
        }
    }
}

#[test]
fn deep_stack_with_l1_l2_and_bias_variants() {
    let mut layers = vec![
        dense(4, 5, "RELU"),
        dense(5, 4, "LEAKYRELU"),
        dense(4, 3, "TANH"),
        output(3, 3, "SOFTMAX", "MCXENT"),
    ];
    for (i, l) in layers.iter_mut().enumerate() {
        l["l1"] = json!(0.01 * (i + 1) as f64);
        l["l2"] = json!(0.02 * (i + 1) as f64);
        l["l1Bias"] = json!(0.005);
        l["l2Bias"] = json!(0.03);
    }
    run_check(layers.clone(), true, Mask::None, 7);
    run_check(layers.clone(), true, Mask::PerOutput, 8);
    // Only L2, only L1.
    let mut l2_only = layers.clone();
    for l in &mut l2_only {
        l["l1"] = json!(0.0);
        l["l1Bias"] = json!(0.0);
    }
    run_check(l2_only, true, Mask::None, 9);
    let mut l1_only = layers;
    for l in &mut l1_only {
        l["l2"] = json!(0.0);
        l["l2Bias"] = json!(0.0);
    }
    run_check(l1_only, true, Mask::None, 10);
}

#[test]
fn layers_without_bias_and_sum_scores() {
    let mut layers = vec![dense(3, 4, "SIGMOID"), output(4, 2, "SOFTMAX", "MCXENT")];
    layers[0]["hasBias"] = json!(false);
    run_check(layers.clone(), true, Mask::None, 31);
    // miniBatch=false: score and gradient are sums over examples.
    run_check(layers, false, Mask::PerExample, 32);
}
