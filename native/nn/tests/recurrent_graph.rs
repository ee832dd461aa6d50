//! Per-time-step regions in a `ComputationGraph`: a layer vertex whose preprocessor is an
//! `RnnToCnnPreProcessor` (or a `PreprocessorVertex` of one) opens a region whose layers see one
//! time step's image, the reference's `[N·T, C, H, W]`; a `CnnToRnnPreProcessor` or a recurrent
//! layer closes it. The rule is the one a `MultiLayerNetwork` follows
//! (`config::validate::region_layer`), so the same layers give the same numbers in both.
//!
//! Criterion: `ferrodl_testutil::check_gradient` with `GradCheckConfig::default()` (h = 1e-6,
//! relative error <= 1e-6 unless the absolute difference <= 1e-8) over every parameter against
//! `score()` (inference mode), parameters uniform in [-0.5, 0.5), inputs standard normal; graph
//! and network agree to 1e-12 (f64).

use ferrodl_nn::config::MultiLayerConfiguration;
use ferrodl_nn::{ComputationGraph, ComputationGraphConfiguration, MultiLayerNetwork};
use ferrodl_testutil::{
    assert_gradient_with_negative_control, normal_matrix, one_hot_sequences, tail_mask, uniform_matrix,
    Rng,
};
use serde_json::{json, Value};

fn sgd() -> Value {
    json!({"type": "Sgd", "learningRate": 0.1})
}

fn rnn(kind: &str, n_in: usize, n_out: usize) -> Value {
    json!({"type": kind, "nIn": n_in, "nOut": n_out, "activation": "TANH",
           "updater": sgd(), "biasUpdater": sgd()})
}

fn rnn_output(n_in: usize, n_out: usize) -> Value {
    json!({"type": "RnnOutputLayer", "nIn": n_in, "nOut": n_out, "activation": "SOFTMAX",
           "lossFunction": "MCXENT", "updater": sgd(), "biasUpdater": sgd()})
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

fn cnn_to_rnn(h: usize, w: usize, c: usize) -> Value {
    json!({"type": "CnnToRnnPreProcessor", "inputHeight": h, "inputWidth": w, "numChannels": c})
}

fn lv(layer: Value, pre: Option<Value>) -> Value {
    json!({"type": "LayerVertex", "layer": layer, "preProcessor": pre})
}

fn vertex(name: &str, inputs: &[&str], v: Value) -> Value {
    json!({"name": name, "inputs": inputs, "vertex": v})
}

fn graph_conf(vertices: Vec<Value>, input_size: usize) -> Value {
    json!({"formatVersion": 1, "seed": 3, "networkInputs": ["seq"], "networkOutputs": ["out"],
           "inputTypes": [{"type": "recurrent", "size": input_size}], "vertices": vertices})
}

fn build_graph(v: &Value) -> ComputationGraph<f64> {
    let c = ComputationGraphConfiguration::from_json(&v.to_string()).unwrap();
    ComputationGraph::<f64>::from_configuration(c).unwrap()
}

fn graph_err(v: &Value) -> String {
    match ComputationGraphConfiguration::from_json(&v.to_string()) {
        Ok(c) => match ComputationGraph::<f64>::from_configuration(c) {
            Ok(_) => panic!("accepted: {v}"),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    }
}

fn normal(rng: &mut Rng, n: usize) -> Vec<f64> {
    normal_matrix(rng, 1, n)
}

type Mask<'a> = Option<(&'a [f64], usize)>;

/// An f64 gradient check of the whole graph, with a negative control (a 1e-4 relative error
/// planted in the largest analytic entry is exactly one failure).
fn graph_check(what: &str, g: &mut ComputationGraph<f64>, x: &[f64], y: &[f64], rows: usize, m: Mask<'_>) {
    let p = g.params().to_vec();
    let score = g.compute_gradient_and_score(&[x], &[y], rows, &[m], &[m]).unwrap();
    assert!(score.is_finite(), "{what}: score {score}");
    let analytic = g.gradient().to_vec();
    assert!(analytic.iter().any(|v| v.abs() > 1e-6), "{what}: the gradient is all zero");
    let mut q = p.clone();
    let mut f = |q: &[f64]| {
        g.set_params(q).unwrap();
        g.score(&[x], &[y], rows, &[m], &[m]).unwrap()
    };
    assert_gradient_with_negative_control(what, &mut q, &analytic, &mut f);
    g.set_params(&p).unwrap();
}

fn assert_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= 1e-12, "{what}: entry {i}: {x} vs {y}");
    }
}

/// `[N, 1·4·4, T]` -> (RnnToCnn) conv 3x3, 2 maps -> max pool 2x2 -> (CnnToRnn implied) ->
/// LSTM(3) -> RnnOutputLayer(2): the reference's per-frame CNN feeding an RNN.
fn cnn_lstm_graph(pre_vertex: bool) -> Value {
    let mut vs = Vec::new();
    let conv_in = if pre_vertex {
        vs.push(vertex("frames", &["seq"], json!({"type": "PreprocessorVertex",
            "preProcessor": rnn_to_cnn(4, 4, 1)})));
        vs.push(vertex("conv", &["frames"], lv(conv(1, 2), None)));
        "conv"
    } else {
        vs.push(vertex("conv", &["seq"], lv(conv(1, 2), Some(rnn_to_cnn(4, 4, 1)))));
        "conv"
    };
    vs.push(vertex("pool", &[conv_in], lv(max_pool(), None)));
    vs.push(vertex("lstm", &["pool"], lv(rnn("LSTM", 2, 3), None)));
    vs.push(vertex("out", &["lstm"], lv(rnn_output(3, 2), None)));
    graph_conf(vs, 16)
}

#[test]
fn a_graph_runs_convolutions_at_every_time_step_exactly_as_the_multi_layer_network() {
    let (rows, t) = (3, 5);
    let mln = json!({"formatVersion": 1, "seed": 3, "inputType": {"type": "recurrent", "size": 16},
        "inputPreProcessors": {"0": rnn_to_cnn(4, 4, 1)},
        "layers": [conv(1, 2), max_pool(), rnn("LSTM", 2, 3), rnn_output(3, 2)]});
    let mut n = MultiLayerNetwork::<f64>::from_configuration(
        MultiLayerConfiguration::from_json(&mln.to_string()).unwrap(),
    )
    .unwrap();
    let mut rng = Rng::new(21);
    let p = uniform_matrix(&mut rng, 1, n.num_params(), -0.5, 0.5);
    n.set_params(&p).unwrap();
    let x = normal(&mut rng, rows * 16 * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let m = tail_mask(rows, t, &[5, 3, 4]);
    for pre_vertex in [false, true] {
        let what = if pre_vertex { "PreprocessorVertex" } else { "LayerVertex preProcessor" };
        let mut g = build_graph(&cnn_lstm_graph(pre_vertex));
        // Same parameter blocks in the same order: the MLN's parameters fit the graph as they are.
        let shapes = |t: Vec<(String, std::ops::Range<usize>, Vec<usize>)>| {
            t.into_iter().map(|(_, r, s)| (r, s)).collect::<Vec<_>>()
        };
        assert_eq!(shapes(g.param_table()), shapes(n.param_table()), "{what}");
        g.set_params(&p).unwrap();
        let conv_v = g.vertex_index("conv").unwrap();
        let (ins, out) = g.vertex_shapes(conv_v).unwrap();
        assert_eq!(format!("{} -> {out}", ins[0]), "convolutional [C=1, H=4, W=4] -> convolutional [C=2, H=2, W=2]",
            "{what}: a region layer's shapes are one step's");
        for mask in [None, Some((&m[..], t))] {
            let go = g.output(&[&x], rows, false, &[mask]).unwrap().remove(0);
            let no = n.output_masked(&x, rows, mask, false).unwrap();
            assert_close(&go, &no, &format!("{what}: output, masked={}", mask.is_some()));
            let gs = g.compute_gradient_and_score(&[&x], &[&y], rows, &[mask], &[mask]).unwrap();
            let ns = n.compute_gradient_and_score_masked(&x, &y, rows, mask, mask).unwrap();
            assert!((gs - ns).abs() <= 1e-12, "{what}: score {gs} vs {ns}");
            assert_close(g.gradient(), n.gradient(), &format!("{what}: gradient, masked={}", mask.is_some()));
            graph_check(&format!("graph {what}, masked={}", mask.is_some()), &mut g, &x, &y, rows, mask);
        }
        // rnnTimeStep one step at a time equals the full output (the region runs on 1 step too).
        let full = g.output(&[&x], rows, false, &[]).unwrap().remove(0);
        g.rnn_clear_previous_state();
        for s in 0..t {
            let xs: Vec<f64> = (0..rows * 16).map(|r| x[r * t + s]).collect();
            let o = g.rnn_time_step(&[&xs], rows).unwrap().remove(0);
            for r in 0..rows * 2 {
                assert!((o[r] - full[r * t + s]).abs() < 1e-12, "{what}: step {s}");
            }
        }
        // One training iteration moves both the same way.
        let mut n2 = MultiLayerNetwork::<f64>::from_configuration(
            MultiLayerConfiguration::from_json(&mln.to_string()).unwrap(),
        )
        .unwrap();
        n2.set_params(&p).unwrap();
        g.fit(&[&x], &[&y], rows, &[Some((&m, t))], &[Some((&m, t))]).unwrap();
        n2.fit_masked(&x, &y, rows, Some((&m, t)), Some((&m, t))).unwrap();
        assert_close(g.params(), n2.params(), &format!("{what}: after fit"));
    }
}

#[test]
fn a_merge_inside_the_region_concatenates_each_steps_channels() {
    // Two 2-map convolutions merged per step = one 4-map convolution with the stacked weights.
    let (rows, t) = (2, 4);
    let split = graph_conf(vec![
        vertex("frames", &["seq"], json!({"type": "PreprocessorVertex", "preProcessor": rnn_to_cnn(4, 4, 1)})),
        vertex("a", &["frames"], lv(conv(1, 2), None)),
        vertex("b", &["frames"], lv(conv(1, 2), None)),
        vertex("m", &["a", "b"], json!({"type": "MergeVertex"})),
        vertex("pool", &["m"], lv(max_pool(), None)),
        vertex("back", &["pool"], json!({"type": "PreprocessorVertex", "preProcessor": cnn_to_rnn(1, 1, 4)})),
        vertex("lstm", &["back"], lv(rnn("LSTM", 4, 3), None)),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16);
    let whole = graph_conf(vec![
        vertex("conv", &["seq"], lv(conv(1, 4), Some(rnn_to_cnn(4, 4, 1)))),
        vertex("pool", &["conv"], lv(max_pool(), None)),
        vertex("lstm", &["pool"], lv(rnn("LSTM", 4, 3), Some(cnn_to_rnn(1, 1, 4)))),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16);
    let (mut g, mut h) = (build_graph(&split), build_graph(&whole));
    let mut rng = Rng::new(8);
    let p = uniform_matrix(&mut rng, 1, g.num_params(), -0.5, 0.5);
    g.set_params(&p).unwrap();
    // split: a_W [2,1,3,3] (18), a_b (2), b_W (18), b_b (2), rest; whole: W [4,1,3,3], b (4), rest.
    let mut q = Vec::new();
    q.extend_from_slice(&p[0..18]);
    q.extend_from_slice(&p[20..38]);
    q.extend_from_slice(&p[18..20]);
    q.extend_from_slice(&p[38..40]);
    q.extend_from_slice(&p[40..]);
    h.set_params(&q).unwrap();
    let x = normal(&mut rng, rows * 16 * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let m = tail_mask(rows, t, &[4, 2]);
    let go = g.output(&[&x], rows, false, &[]).unwrap().remove(0);
    let ho = h.output(&[&x], rows, false, &[]).unwrap().remove(0);
    assert_close(&go, &ho, "merged halves == one convolution");
    graph_check("merge in the region", &mut g, &x, &y, rows, None);
    graph_check("merge in the region, masked", &mut g, &x, &y, rows, Some((&m, t)));
}

/// `[N, C, T]` -> `N·T` rows of `C` (row `n·T + t` is step `t` of example `n`): the reference's
/// `[N·T, ...]` minibatch inside a per-step region.
fn steps_as_rows(x: &[f64], n: usize, c: usize, t: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * c * t];
    for i in 0..n {
        for k in 0..c {
            for s in 0..t {
                out[(i * t + s) * c + k] = x[(i * c + k) * t + s];
            }
        }
    }
    out
}

/// Vertex `v` on the 2x2x2 per-step outputs of two 3x3 convolutions ("a", "b") of each step's
/// 4x4 image, read by an RnnOutputLayer(2) (`out_len` values per step): as a per-step region of
/// a recurrent graph, and as the reference runs it, a plain CNN graph on `N·T` images.
fn vertex_both_ways(v: &Value, inputs: &[&str], out_len: usize) -> (Value, Value) {
    vertices_both_ways(v, inputs, &[], out_len)
}

/// As [`vertex_both_ways`], with `after` (vertices "u0", "u1", ..., each reading the one
/// before) between the vertex and the output layer.
fn vertices_both_ways(v: &Value, inputs: &[&str], after: &[Value], out_len: usize) -> (Value, Value) {
    let out = |kind: &str| json!({"type": kind, "nIn": out_len, "nOut": 2, "activation": "SOFTMAX",
        "lossFunction": "MCXENT", "updater": sgd(), "biasUpdater": sgd()});
    let convs = |from: &str| {
        let mut vs = vec![vertex("a", &[from], lv(conv(1, 2), None))];
        if inputs.contains(&"b") {
            vs.push(vertex("b", &[from], lv(conv(1, 2), None)));
        }
        vs
    };
    let mut vs = vec![vertex("frames", &["seq"],
        json!({"type": "PreprocessorVertex", "preProcessor": rnn_to_cnn(4, 4, 1)}))];
    vs.extend(convs("frames"));
    let chain = |vs: &mut Vec<Value>, last_layer: &str| {
        vs.push(vertex("v", inputs, v.clone()));
        let names: Vec<String> = (0..after.len()).map(|k| format!("u{k}")).collect();
        let mut last = "v".to_string();
        for (name, u) in names.iter().zip(after) {
            vs.push(vertex(name, &[&last], u.clone()));
            last = name.clone();
        }
        vs.push(vertex("out", &[&last], lv(out(last_layer), None)));
    };
    chain(&mut vs, "RnnOutputLayer");
    let region = graph_conf(vs, 16);
    let mut vs = convs("seq");
    chain(&mut vs, "OutputLayer");
    let mut images = graph_conf(vs, 16);
    images["inputTypes"] = json!([{"type": "convolutional", "height": 4, "width": 4, "channels": 1}]);
    (region, images)
}

#[test]
fn every_vertex_inside_the_region_runs_on_each_step_as_the_reference_runs_it_on_n_times_t_images() {
    // A dense layer on both halves of a stacked minibatch, then the second half: rows stack
    // and unstack as whole examples, each step a row of the layer's [N·T] minibatch.
    let dense = lv(json!({"type": "DenseLayer", "nIn": 8, "nOut": 8, "activation": "TANH",
        "updater": sgd(), "biasUpdater": sgd()}), None);
    let unstack = json!({"type": "UnstackVertex", "from": 1, "stackSize": 2});
    // (vertex, its inputs, vertices after it, values per step the output layer reads)
    let cases: Vec<(Value, Vec<&str>, Vec<Value>, usize)> = vec![
        (json!({"type": "SubsetVertex", "from": 1, "to": 1}), vec!["a"], vec![], 4),
        (json!({"type": "L2NormalizeVertex"}), vec!["a"], vec![], 8),
        (json!({"type": "L2NormalizeVertex", "dimension": [1]}), vec!["a"], vec![], 8),
        (json!({"type": "L2Vertex"}), vec!["a", "b"], vec![], 1),
        (json!({"type": "ElementWiseVertex", "op": "Product"}), vec!["a", "b"], vec![], 8),
        (json!({"type": "ElementWiseVertex", "op": "Max"}), vec!["a", "b"], vec![], 8),
        (json!({"type": "ScaleVertex", "scaleFactor": 0.5}), vec!["a"], vec![], 8),
        (json!({"type": "ShiftVertex", "shiftFactor": 0.3}), vec!["a"], vec![], 8),
        (json!({"type": "MergeVertex"}), vec!["a", "b"], vec![], 16),
        (json!({"type": "ReshapeVertex", "newShape": [-1, 8]}), vec!["a"], vec![], 8),
        (json!({"type": "ReshapeVertex", "newShape": [-1, 2, 1, 4]}), vec!["a"], vec![], 8),
        (json!({"type": "StackVertex"}), vec!["a", "b"], vec![dense.clone(), unstack.clone()], 8),
        (json!({"type": "StackVertex"}), vec!["a", "b"], vec![unstack.clone()], 8),
    ];
    let (rows, t) = (4, 3);
    for (v, inputs, after, out_len) in &cases {
        let what = format!("{v} then {after:?}");
        let (region, images) = vertices_both_ways(v, inputs, after, *out_len);
        let (mut g, mut f) = (build_graph(&region), build_graph(&images));
        let mut rng = Rng::new(21);
        let p = uniform_matrix(&mut rng, 1, g.num_params(), -0.5, 0.5);
        g.set_params(&p).unwrap();
        f.set_params(&p).unwrap();
        let x = normal(&mut rng, rows * 16 * t);
        let go = g.output(&[&x], rows, false, &[]).unwrap().remove(0);
        let fo = f.output(&[&steps_as_rows(&x, rows, 16, t)], rows * t, false, &[]).unwrap().remove(0);
        assert_eq!(go.len(), rows * 2 * t, "{what}: output size");
        assert_close(&steps_as_rows(&go, rows, 2, t), &fo, &what);
        // Gradients through it, with and without a feature/labels mask (kept by the vertex).
        let y = one_hot_sequences(&mut rng, rows, 2, t);
        graph_check(&what, &mut g, &x, &y, rows, None);
        let m = tail_mask(rows, t, &[3, 1, 2]);
        graph_check(&format!("{what}, masked"), &mut g, &x, &y, rows, Some((&m, t)));
    }
}

#[test]
fn graph_regions_that_are_wrong_are_named() {
    let out_layer = json!({"type": "OutputLayer", "nIn": 2, "nOut": 2, "activation": "SOFTMAX",
        "lossFunction": "MCXENT"});
    // A region never closed: the output layer would run per image.
    let e = graph_err(&graph_conf(vec![
        vertex("conv", &["seq"], lv(conv(1, 2), Some(rnn_to_cnn(4, 4, 1)))),
        vertex("pool", &["conv"], lv(max_pool(), None)),
        vertex("out", &["pool"], lv(out_layer, None)),
    ], 16));
    assert!(e.contains("vertex \"out\" (OutputLayer)") && e.contains("cannot run at every time step")
        && e.contains("RnnOutputLayer"), "{e}");
    // The step image does not match the sequence's size.
    let e = graph_err(&cnn_lstm_graph(false).to_string().replace("\"size\":16", "\"size\":15").parse().unwrap());
    assert!(e.contains("vertex \"conv\" (ConvolutionLayer)")
        && e.contains("RnnToCnnPreProcessor(4x4x1) needs a recurrent input of") && e.contains("16"), "{e}");
    let e = graph_err(&cnn_lstm_graph(true).to_string().replace("\"size\":16", "\"size\":15").parse().unwrap());
    assert!(e.contains("vertex \"frames\" (PreprocessorVertex)") && e.contains("needs a recurrent input"), "{e}");
    // CnnToRnn outside a region, and one whose image is not the step's.
    let e = graph_err(&graph_conf(vec![
        vertex("lstm", &["seq"], lv(rnn("LSTM", 16, 3), Some(cnn_to_rnn(4, 4, 1)))),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16));
    assert!(e.contains("vertex \"lstm\" (LSTM)") && e.contains("must follow an RnnToCnnPreProcessor"), "{e}");
    let e = graph_err(&graph_conf(vec![
        vertex("conv", &["seq"], lv(conv(1, 2), Some(rnn_to_cnn(4, 4, 1)))),
        vertex("lstm", &["conv"], lv(rnn("LSTM", 8, 3), Some(cnn_to_rnn(2, 2, 3)))),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16));
    assert!(e.contains("vertex \"lstm\" (LSTM)") && e.contains("CnnToRnnPreProcessor expects"), "{e}");
    // A step image merged with a whole sequence.
    let e = graph_err(&graph_conf(vec![
        vertex("frames", &["seq"], json!({"type": "PreprocessorVertex", "preProcessor": rnn_to_cnn(4, 4, 1)})),
        vertex("m", &["frames", "seq"], json!({"type": "MergeVertex"})),
        vertex("lstm", &["m"], lv(rnn("LSTM", 32, 3), None)),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16));
    assert!(e.contains("vertex \"m\" (MergeVertex)") && e.contains("input 0 (\"frames\") is one time step")
        && e.contains("input 1 (\"seq\") is not"), "{e}");
    // A vertex that needs whole sequences (or the [N·T, ...] layout) inside the region.
    let e = graph_err(&graph_conf(vec![
        vertex("conv", &["seq"], lv(conv(1, 2), Some(rnn_to_cnn(4, 4, 1)))),
        vertex("last", &["conv"], json!({"type": "LastTimeStepVertex"})),
        vertex("out", &["last"], lv(json!({"type": "OutputLayer", "nIn": 8, "nOut": 2,
            "activation": "SOFTMAX", "lossFunction": "MCXENT"}), None)),
    ], 16));
    assert!(e.contains("vertex \"last\" (LastTimeStepVertex)")
        && e.contains("cannot run inside the per-step region"), "{e}");
    // A preprocessor's rnnDataFormat against the layout of its sequence side.
    let mut nwc_frames = rnn_to_cnn(4, 4, 1);
    nwc_frames["rnnDataFormat"] = json!("NWC");
    let e = graph_err(&graph_conf(vec![
        vertex("lstm0", &["seq"], lv(rnn("LSTM", 16, 16), None)),
        vertex("frames", &["lstm0"], json!({"type": "PreprocessorVertex", "preProcessor": nwc_frames})),
        vertex("conv", &["frames"], lv(conv(1, 2), None)),
        vertex("pool", &["conv"], lv(max_pool(), None)),
        vertex("lstm", &["pool"], lv(rnn("LSTM", 2, 3), None)),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16));
    assert!(e.contains("vertex \"frames\" (PreprocessorVertex)") && e.contains("rnnDataFormat NWC")
        && e.contains("vertex \"lstm0\" (LSTM), which is NCW"), "{e}");
    let mut back = cnn_to_rnn(1, 1, 2);
    back["rnnDataFormat"] = json!("NWC");
    let e = graph_err(&graph_conf(vec![
        vertex("conv", &["seq"], lv(conv(1, 2), Some(rnn_to_cnn(4, 4, 1)))),
        vertex("pool", &["conv"], lv(max_pool(), None)),
        vertex("back", &["pool"], json!({"type": "PreprocessorVertex", "preProcessor": back})),
        vertex("lstm", &["back"], lv(rnn("LSTM", 2, 3), None)),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16));
    assert!(e.contains("vertex \"back\" (PreprocessorVertex)") && e.contains("CnnToRnnPreProcessor has rnnDataFormat NWC")
        && e.contains("read by vertex \"lstm\" (LSTM), which is NCW"), "{e}");
    // A step reshaped into a sequence would be a sequence per step.
    let (region, _) = vertex_both_ways(&json!({"type": "ReshapeVertex", "newShape": [-1, 2, 4]}), &["a"], 8);
    let e = graph_err(&region);
    assert!(e.contains("vertex \"v\" (ReshapeVertex)") && e.contains("would be a sequence"), "{e}");
}

#[test]
fn a_graph_truncated_bptt_refuses_bad_labels_and_masks_before_any_segment() {
    let mut v = graph_conf(vec![
        vertex("lstm", &["seq"], lv(rnn("LSTM", 3, 4), None)),
        vertex("out", &["lstm"], lv(rnn_output(4, 2), None)),
    ], 3);
    v["backpropType"] = json!("TruncatedBPTT");
    v["tbpttFwdLength"] = json!(3);
    v["tbpttBackLength"] = json!(3);
    let mut g = build_graph(&v);
    let (rows, t) = (2, 8);
    let mut rng = Rng::new(6);
    let x = normal(&mut rng, rows * 3 * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let before = g.params().to_vec();
    let e = g.fit(&[&x], &[&y[..rows * 2 * (t - 1)]], rows, &[], &[]).unwrap_err().to_string();
    assert!(e.contains("labels for output \"out\" have 28 values") && e.contains("8 time steps"), "{e}");
    let m = vec![1.0; rows * (t - 1)];
    let e = g.fit(&[&x], &[&y], rows, &[Some((&m, t - 1))], &[]).unwrap_err().to_string();
    assert!(e.contains("feature mask of network input \"seq\""), "{e}");
    let e = g.fit(&[&x], &[&y], rows, &[], &[Some((&m, t - 1))]).unwrap_err().to_string();
    assert!(e.contains("labels mask of output \"out\""), "{e}");
    let mut bad = x.clone();
    bad[5] = f64::NAN;
    assert!(g.fit(&[&bad], &[&y], rows, &[], &[]).unwrap_err().to_string().contains("NaN"));
    assert_eq!(g.params(), &before[..], "nothing trained");
    assert_eq!(g.iteration_count(), 0);
    g.fit(&[&x], &[&y], rows, &[], &[]).unwrap();
    assert_eq!(g.iteration_count(), 3);
    // Through a per-step region too: one segment of the whole length = standard BPTT.
    let (rows, t) = (2, 4);
    let x = normal(&mut rng, rows * 16 * t);
    let y = one_hot_sequences(&mut rng, rows, 2, t);
    let mut a = build_graph(&cnn_lstm_graph(false));
    let mut tb = cnn_lstm_graph(false);
    tb["backpropType"] = json!("TruncatedBPTT");
    tb["tbpttFwdLength"] = json!(t);
    tb["tbpttBackLength"] = json!(t);
    let mut b = build_graph(&tb);
    assert_eq!(a.fit(&[&x], &[&y], rows, &[], &[]).unwrap(), b.fit(&[&x], &[&y], rows, &[], &[]).unwrap());
    assert_eq!(a.params(), b.params());
}

#[test]
fn a_convolution_on_a_sequence_without_rnn_to_cnn_is_refused_naming_the_layer() {
    // The reference infers no RNN -> CNN preprocessor (the image shape cannot be known) and its
    // ConvolutionLayer refuses a recurrent input type: so do both network kinds, saying what to add.
    let mln = json!({"formatVersion": 1, "seed": 3, "inputType": {"type": "recurrent", "size": 16},
        "layers": [conv(1, 2), rnn("LSTM", 2, 3), rnn_output(3, 2)]});
    let e = MultiLayerConfiguration::from_json(&mln.to_string()).unwrap_err().to_string();
    assert!(e.contains("layer 0 (ConvolutionLayer)") && e.contains("recurrent [C=16, any length]")
        && e.contains("add an RnnToCnnPreProcessor(height, width, channels)") && e.contains("= 16"), "{e}");
    let e = graph_err(&graph_conf(vec![
        vertex("conv", &["seq"], lv(conv(1, 2), None)),
        vertex("pool", &["conv"], lv(max_pool(), None)),
        vertex("lstm", &["pool"], lv(rnn("LSTM", 2, 3), None)),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16));
    assert!(e.contains("vertex \"conv\" (ConvolutionLayer)") && e.contains("RnnToCnnPreProcessor"), "{e}");
    let e = graph_err(&graph_conf(vec![
        vertex("pool", &["seq"], lv(max_pool(), None)),
        vertex("lstm", &["pool"], lv(rnn("LSTM", 16, 3), None)),
        vertex("out", &["lstm"], lv(rnn_output(3, 2), None)),
    ], 16));
    assert!(e.contains("vertex \"pool\" (SubsamplingLayer)") && e.contains("RnnToCnnPreProcessor"), "{e}");
}
