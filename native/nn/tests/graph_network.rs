//! ComputationGraph on the shared executor: f64 finite-difference gradient checks of every
//! vertex, of fan-out (one activation feeding several consumers), two inputs and two outputs,
//! masks and loss weights; a MultiLayerNetwork and the equivalent chain graph train to identical
//! parameters; bad calls are clear errors.
//!
//! Criterion: `ferrodl_testutil::check_gradient` with `GradCheckConfig::default()` (h = 1e-6,
//! relative error <= 1e-6 unless the absolute difference <= 1e-8) over every parameter, against
//! `score()` (inference mode; no dropout or batch norm in the checked graphs). Parameters are
//! uniform in [-1, 1), inputs standard normal. Each vertex sits after trainable layers, so its
//! input gradient is what the layer gradients before it are checked through.

use ferrodl_nn::config::ComputationGraphConfiguration;
use ferrodl_nn::{ComputationGraph, MultiLayerConfiguration, MultiLayerNetwork, NnError};
use ferrodl_testutil::{assert_gradient_with_negative_control, Rng};
use serde_json::{json, Value};

fn sgd() -> Value {
    json!({"type": "Sgd", "learningRate": 0.1})
}

fn dense(n_in: usize, n_out: usize, act: &str) -> Value {
    json!({"type": "DenseLayer", "nIn": n_in, "nOut": n_out, "activation": act,
           "updater": sgd(), "biasUpdater": sgd()})
}

fn output(n_in: usize, n_out: usize, act: &str, loss: &str) -> Value {
    json!({"type": "OutputLayer", "nIn": n_in, "nOut": n_out, "activation": act,
           "lossFunction": loss, "updater": sgd(), "biasUpdater": sgd()})
}

fn lv(name: &str, inputs: &[&str], l: Value) -> Value {
    json!({"name": name, "inputs": inputs, "vertex": {"type": "LayerVertex", "layer": l}})
}

fn v(name: &str, inputs: &[&str], vertex: Value) -> Value {
    json!({"name": name, "inputs": inputs, "vertex": vertex})
}

fn graph(inputs: &[&str], types: Option<Value>, outputs: &[&str], vertices: Vec<Value>) -> Value {
    json!({"formatVersion": 1, "seed": 7, "networkInputs": inputs, "networkOutputs": outputs,
           "inputTypes": types, "vertices": vertices})
}

fn build64(g: &Value) -> ComputationGraph<f64> {
    let conf = ComputationGraphConfiguration::from_json(&g.to_string()).unwrap();
    ComputationGraph::<f64>::from_configuration(conf).unwrap()
}

fn normal(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.next_gaussian()).collect()
}

/// One-hot labels for a softmax output, standard normal ones otherwise.
fn labels(rng: &mut Rng, rows: usize, width: usize, one_hot: bool) -> Vec<f64> {
    if !one_hot {
        return normal(rng, rows * width);
    }
    let mut y = vec![0.0; rows * width];
    for r in 0..rows {
        y[r * width + (rng.next_u64() as usize) % width] = 1.0;
    }
    y
}

/// Gradient check of a whole graph; `softmax[k]`: output k is one-hot classification.
fn check(
    what: &str,
    g: &Value,
    rows: usize,
    softmax: &[bool],
    label_masks: &[Option<(Vec<f64>, usize)>],
) {
    let mut net = build64(g);
    let mut rng = Rng::new(11);
    let p: Vec<f64> = (0..net.num_params())
        .map(|_| rng.next_f64() * 2.0 - 1.0)
        .collect();
    net.set_params(&p).unwrap();
    let xs: Vec<Vec<f64>> = (0..net.num_inputs())
        .map(|k| normal(&mut rng, rows * net.input_width(k)))
        .collect();
    let ys: Vec<Vec<f64>> = (0..net.num_outputs())
        .map(|k| labels(&mut rng, rows, net.output_width(k), softmax[k]))
        .collect();
    let x: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
    let y: Vec<&[f64]> = ys.iter().map(Vec::as_slice).collect();
    let lm: Vec<Option<(&[f64], usize)>> = label_masks
        .iter()
        .map(|m| m.as_ref().map(|(d, c)| (d.as_slice(), *c)))
        .collect();
    let score = net
        .compute_gradient_and_score(&x, &y, rows, &[], &lm)
        .unwrap();
    assert!(score.is_finite(), "{what}: score {score}");
    let analytic = net.gradient().to_vec();
    assert!(
        analytic.iter().any(|g| g.abs() > 1e-6),
        "{what}: zero gradient"
    );
    let mut params = p.clone();
    let mut score_at = |q: &[f64]| {
        net.set_params(q).unwrap();
        net.score(&x, &y, rows, &[], &lm).unwrap()
    };
    assert_gradient_with_negative_control(what, &mut params, &analytic, &mut score_at);
}

#[test]
fn gradient_check_of_every_vertex() {
    let ff = |n: usize| json!({"type": "feedForward", "size": n});
    let cases: Vec<(&str, Value)> = vec![
        (
            "MergeVertex",
            graph(
                &["a", "b"],
                None,
                &["out"],
                vec![
                    lv("da", &["a"], dense(3, 4, "TANH")),
                    lv("db", &["b"], dense(2, 3, "TANH")),
                    v("m", &["da", "db"], json!({"type": "MergeVertex"})),
                    lv("out", &["m"], output(7, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "ElementWise Add (3 inputs)",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d1", &["a"], dense(3, 4, "TANH")),
                    lv("d2", &["a"], dense(3, 4, "SIGMOID")),
                    lv("d3", &["a"], dense(3, 4, "IDENTITY")),
                    v(
                        "e",
                        &["d1", "d2", "d3"],
                        json!({"type": "ElementWiseVertex", "op": "Add"}),
                    ),
                    lv("out", &["e"], output(4, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "ElementWise Subtract",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d1", &["a"], dense(3, 4, "TANH")),
                    lv("d2", &["a"], dense(3, 4, "SIGMOID")),
                    v(
                        "e",
                        &["d1", "d2"],
                        json!({"type": "ElementWiseVertex", "op": "Subtract"}),
                    ),
                    lv("out", &["e"], output(4, 2, "IDENTITY", "MSE")),
                ],
            ),
        ),
        (
            "ElementWise Product",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d1", &["a"], dense(3, 4, "TANH")),
                    lv("d2", &["a"], dense(3, 4, "SIGMOID")),
                    lv("d3", &["a"], dense(3, 4, "TANH")),
                    v(
                        "e",
                        &["d1", "d2", "d3"],
                        json!({"type": "ElementWiseVertex", "op": "Product"}),
                    ),
                    lv("out", &["e"], output(4, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "ElementWise Average",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d1", &["a"], dense(3, 4, "TANH")),
                    lv("d2", &["a"], dense(3, 4, "SIGMOID")),
                    v(
                        "e",
                        &["d1", "d2"],
                        json!({"type": "ElementWiseVertex", "op": "Average"}),
                    ),
                    lv("out", &["e"], output(4, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "ElementWise Max",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d1", &["a"], dense(3, 4, "TANH")),
                    lv("d2", &["a"], dense(3, 4, "IDENTITY")),
                    v(
                        "e",
                        &["d1", "d2"],
                        json!({"type": "ElementWiseVertex", "op": "Max"}),
                    ),
                    lv("out", &["e"], output(4, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "SubsetVertex",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d", &["a"], dense(3, 6, "TANH")),
                    v(
                        "s",
                        &["d"],
                        json!({"type": "SubsetVertex", "from": 1, "to": 3}),
                    ),
                    lv("out", &["s"], output(3, 2, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "Stack/Unstack (shared weights) + L2Vertex",
            graph(
                &["a", "b"],
                Some(json!([ff(3), ff(3)])),
                &["out"],
                vec![
                    v("st", &["a", "b"], json!({"type": "StackVertex"})),
                    lv("shared", &["st"], dense(3, 4, "TANH")),
                    v(
                        "u0",
                        &["shared"],
                        json!({"type": "UnstackVertex", "from": 0, "stackSize": 2}),
                    ),
                    v(
                        "u1",
                        &["shared"],
                        json!({"type": "UnstackVertex", "from": 1, "stackSize": 2}),
                    ),
                    v("dist", &["u0", "u1"], json!({"type": "L2Vertex"})),
                    lv("out", &["dist"], output(1, 2, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "Scale + Shift",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d", &["a"], dense(3, 4, "TANH")),
                    v(
                        "sc",
                        &["d"],
                        json!({"type": "ScaleVertex", "scaleFactor": -1.7}),
                    ),
                    v(
                        "sh",
                        &["sc"],
                        json!({"type": "ShiftVertex", "shiftFactor": 0.3}),
                    ),
                    lv("out", &["sh"], output(4, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "L2NormalizeVertex (all axes)",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d", &["a"], dense(3, 5, "TANH")),
                    v("n", &["d"], json!({"type": "L2NormalizeVertex"})),
                    lv("out", &["n"], output(5, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "L2NormalizeVertex over channels of an image, PreprocessorVertex, ReshapeVertex",
            graph(
                &["a"],
                Some(json!([ff(4)])),
                &["out"],
                vec![
                    lv("d", &["a"], dense(4, 12, "TANH")),
                    v(
                        "img",
                        &["d"],
                        json!({"type": "PreprocessorVertex", "preProcessor":
                {"type": "FeedForwardToCnnPreProcessor", "inputHeight": 2, "inputWidth": 2, "numChannels": 3}}),
                    ),
                    v(
                        "n",
                        &["img"],
                        json!({"type": "L2NormalizeVertex", "dimension": [1]}),
                    ),
                    lv(
                        "conv",
                        &["n"],
                        json!({"type": "ConvolutionLayer", "nIn": 3, "nOut": 2, "kernelSize": [2, 1],
                "activation": "TANH", "updater": sgd(), "biasUpdater": sgd()}),
                    ),
                    v(
                        "flat",
                        &["conv"],
                        json!({"type": "ReshapeVertex", "newShape": [-1, 4]}),
                    ),
                    lv("out", &["flat"], output(4, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
        (
            "FrozenVertex after a trainable layer",
            graph(
                &["a"],
                None,
                &["out"],
                vec![
                    lv("d", &["a"], dense(3, 4, "TANH")),
                    json!({"name": "f", "inputs": ["d"], "vertex": {"type": "FrozenVertex", "vertex":
                {"type": "LayerVertex", "layer": dense(4, 4, "SIGMOID")}}}),
                    lv("out", &["f"], output(4, 3, "SOFTMAX", "MCXENT")),
                ],
            ),
        ),
    ];
    for (what, g) in cases {
        check(what, &g, 5, &[true, true], &[]);
    }
}

#[test]
fn gradient_check_of_fan_out_two_inputs_and_two_outputs() {
    // d1 feeds three consumers; d3 feeds two outputs' paths; two inputs, two losses.
    let g = graph(
        &["a", "b"],
        None,
        &["cls", "reg"],
        vec![
            lv("d1", &["a"], dense(3, 4, "TANH")),
            lv("d2", &["d1"], dense(4, 4, "SIGMOID")),
            lv("db", &["b"], dense(2, 4, "TANH")),
            v(
                "add",
                &["d1", "d2", "db"],
                json!({"type": "ElementWiseVertex", "op": "Add"}),
            ),
            v("m", &["add", "d1"], json!({"type": "MergeVertex"})),
            lv("d3", &["m"], dense(8, 5, "TANH")),
            lv("cls", &["d3"], output(5, 3, "SOFTMAX", "MCXENT")),
            v("p", &["d3", "db"], json!({"type": "MergeVertex"})),
            lv("reg", &["p"], output(9, 2, "IDENTITY", "MSE")),
        ],
    );
    check("fan-out, 2 in, 2 out", &g, 6, &[true, false], &[]);
    // With a per-example labels mask on the first output and a per-value one on the second.
    let m1 = (vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0], 1);
    let mut m2 = vec![1.0; 12];
    m2[3] = 0.0;
    m2[8] = 0.0;
    check(
        "fan-out with label masks",
        &g,
        6,
        &[true, false],
        &[Some(m1), Some((m2, 2))],
    );
}

#[test]
fn two_outputs_score_is_the_sum_of_their_losses_plus_regularization_once() {
    let mut l2 = dense(3, 4, "TANH");
    l2["l2"] = json!(0.01);
    let g = graph(
        &["a"],
        None,
        &["o1", "o2"],
        vec![
            lv("d", &["a"], l2),
            lv("o1", &["d"], output(4, 2, "SOFTMAX", "MCXENT")),
            lv("o2", &["d"], output(4, 3, "IDENTITY", "MSE")),
        ],
    );
    let mut net = build64(&g);
    let mut rng = Rng::new(3);
    let x = normal(&mut rng, 4 * 3);
    let y1 = labels(&mut rng, 4, 2, true);
    let y2 = labels(&mut rng, 4, 3, false);
    let total = net.score(&[&x], &[&y1, &y2], 4, &[], &[]).unwrap();
    let per = net
        .score_examples(&[&x], &[&y1, &y2], 4, &[], &[], false)
        .unwrap();
    let outs = net.output(&[&x], 4, false, &[]).unwrap();
    // By hand: MCXENT on o1 + MSE on o2, mean over examples, plus 0.5·l2·Σw² once.
    let mut data = 0.0;
    for r in 0..4 {
        let ce: f64 = (0..2)
            .map(|c| -y1[r * 2 + c] * outs[0][r * 2 + c].max(1e-10).ln())
            .sum();
        let mse: f64 = (0..3)
            .map(|c| (y2[r * 3 + c] - outs[1][r * 3 + c]).powi(2))
            .sum::<f64>()
            / 3.0;
        assert!((per[r] - (ce + mse)).abs() < 1e-12, "example {r}");
        data += ce + mse;
    }
    let w = &net.params()[net.param_range(0).unwrap()][..12];
    let reg = 0.5 * 0.01 * w.iter().map(|v| v * v).sum::<f64>();
    assert!(
        (total - (data / 4.0 + reg)).abs() < 1e-12,
        "{total} vs {}",
        data / 4.0 + reg
    );
}

fn chain_confs() -> (String, String) {
    let mut d1 = dense(6, 8, "RELU");
    d1["updater"] = json!({"type": "Adam", "learningRate": 0.01});
    d1["dropOut"] = json!(0.8);
    let bn =
        json!({"type": "BatchNormalization", "nIn": 8, "nOut": 8, "updater": {"type": "Adam"}});
    let mut d2 = dense(8, 5, "TANH");
    d2["l2"] = json!(1e-3);
    // weight decay in the updater's pass (both network types' fit)
    d2["weightDecay"] = json!(1e-2);
    let out = json!({"type": "OutputLayer", "nIn": 5, "nOut": 3, "activation": "SOFTMAX",
                     "lossFunction": "MCXENT", "updater": {"type": "Nesterovs", "learningRate": 0.05}});
    let layers = vec![d1, bn, d2, out];
    let mln = json!({"formatVersion": 1, "seed": 99, "layers": layers.clone()});
    let names = ["0", "1", "2", "3"];
    let vertices: Vec<Value> = layers
        .iter()
        .enumerate()
        .map(|(i, l)| {
            lv(
                names[i],
                &[if i == 0 { "in" } else { names[i - 1] }],
                l.clone(),
            )
        })
        .collect();
    let cg = json!({"formatVersion": 1, "seed": 99, "networkInputs": ["in"], "networkOutputs": ["3"],
                    "vertices": vertices});
    (mln.to_string(), cg.to_string())
}

#[test]
fn a_multi_layer_network_and_its_chain_graph_train_to_identical_parameters() {
    let (mln, cg) = chain_confs();
    let mut a = MultiLayerNetwork::new(MultiLayerConfiguration::from_json(&mln).unwrap()).unwrap();
    let mut b =
        ComputationGraph::new(ComputationGraphConfiguration::from_json(&cg).unwrap()).unwrap();
    assert_eq!(a.params(), b.params(), "same seeded initialisation");
    let mut rng = Rng::new(5);
    for it in 0..25 {
        let rows = 4 + it % 5;
        let x: Vec<f32> = (0..rows * 6).map(|_| rng.next_gaussian() as f32).collect();
        let mut y = vec![0f32; rows * 3];
        for r in 0..rows {
            y[r * 3 + (r + it) % 3] = 1.0;
        }
        let sa = a.fit(&x, &y, rows, None).unwrap();
        let sb = b.fit(&[&x], &[&y], rows, &[], &[]).unwrap();
        assert_eq!(sa.to_bits(), sb.to_bits(), "score at iteration {it}");
    }
    assert_eq!(a.params(), b.params());
    assert_eq!(a.updater_state(), b.updater_state());
    assert_eq!(a.iteration_count(), b.iteration_count());
    let x: Vec<f32> = (0..12).map(|i| i as f32 / 7.0 - 0.5).collect();
    assert_eq!(
        a.output(&x, 2, false).unwrap(),
        b.output(&[&x], 2, false, &[]).unwrap()[0]
    );
    // Same blocks, keyed by vertex name.
    let ka: Vec<String> = a.param_table().into_iter().map(|t| t.0).collect();
    let kb: Vec<String> = b.param_table().into_iter().map(|t| t.0).collect();
    assert_eq!(ka, kb);
    assert_eq!(kb[0], "0_W");
}

#[test]
fn graph_param_table_is_keyed_by_vertex_name_in_execution_order() {
    let g = graph(
        &["a"],
        None,
        &["out"],
        vec![
            lv("late", &["early"], dense(4, 2, "TANH")),
            lv("early", &["a"], dense(3, 4, "TANH")),
            lv("out", &["late"], output(2, 2, "SOFTMAX", "MCXENT")),
        ],
    );
    let net = build64(&g);
    let keys: Vec<String> = net.param_table().into_iter().map(|t| t.0).collect();
    assert_eq!(
        keys,
        ["early_W", "early_b", "late_W", "late_b", "out_W", "out_b"]
    );
}

#[test]
fn bad_calls_are_clear_errors_naming_the_input_or_output() {
    let g = graph(
        &["a", "b"],
        None,
        &["out"],
        vec![
            lv("da", &["a"], dense(3, 2, "TANH")),
            lv(
                "db",
                &["b"],
                json!({"type": "EmbeddingLayer", "nIn": 4, "nOut": 2, "activation": "IDENTITY"}),
            ),
            v("m", &["da", "db"], json!({"type": "MergeVertex"})),
            lv("out", &["m"], output(4, 2, "SOFTMAX", "MCXENT")),
        ],
    );
    let mut net = build64(&g);
    let a = vec![0.1; 6];
    let b = vec![1.0, 3.0];
    let y = vec![1.0, 0.0, 0.0, 1.0];
    let err = |r: Result<f64, NnError>| r.unwrap_err().to_string();
    assert_eq!(
        err(net.fit(&[&a], &[&y], 2, &[], &[])),
        "the graph has 2 network inputs ([\"a\", \"b\"]) but 1 feature arrays were given"
    );
    assert_eq!(
        err(net.fit(&[&a[..4], &b], &[&y], 2, &[], &[])),
        "features for network input \"a\" have 2 columns but it takes 3 values per example (feed-forward [3])"
    );
    assert_eq!(
        err(net.fit(&[&a, &[1.0, 4.0]], &[&y], 2, &[], &[])),
        "vertex \"db\" (EmbeddingLayer): EmbeddingLayer input 4 is not an index in [0, nIn=4) (row 1)"
    );
    let mut nan = a.clone();
    nan[4] = f64::NAN;
    assert_eq!(
        err(net.fit(&[&nan, &b], &[&y], 2, &[], &[])),
        "features for network input \"a\" contain NaN at row 1, column 1"
    );
    assert_eq!(
        err(net.fit(&[&a, &b], &[&y[..3]], 2, &[], &[])),
        "labels for output \"out\" have 3 values, which is not 2 rows of 2 columns (4 values)"
    );
    assert_eq!(
        err(net.fit(&[&a, &b], &[&y], 2, &[], &[Some((&[1.0, 1.0, 1.0][..], 3))])),
        "the labels mask of output \"out\" has 3 columns; it must have 1 (one value per example) or nOut=2 (one value per output)"
    );
    assert_eq!(
        err(net.fit(&[&a[..0], &b[..0]], &[&y[..0]], 0, &[], &[])),
        "rows must be at least 1 (the minibatch is empty)"
    );
}
