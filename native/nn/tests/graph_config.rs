//! ComputationGraphConfiguration: validation (every bad graph fails with a message naming the
//! vertex), execution order, shape inference of every vertex, and `nIn` resolution for graphs
//! and multi-layer configurations.

use ferrodl_nn::config::{ComputationGraphConfiguration, Shape};
use ferrodl_nn::{MultiLayerConfiguration, NnError};
use serde_json::{json, Value};

fn layer(kind: &str, n_in: usize, n_out: usize, act: &str) -> Value {
    json!({"type": kind, "nIn": n_in, "nOut": n_out, "activation": act})
}

fn out_layer(n_in: usize, n_out: usize) -> Value {
    json!({"type": "OutputLayer", "nIn": n_in, "nOut": n_out, "activation": "SOFTMAX",
           "lossFunction": "MCXENT"})
}

fn lv(name: &str, inputs: &[&str], l: Value) -> Value {
    json!({"name": name, "inputs": inputs, "vertex": {"type": "LayerVertex", "layer": l}})
}

fn v(name: &str, inputs: &[&str], vertex: Value) -> Value {
    json!({"name": name, "inputs": inputs, "vertex": vertex})
}

fn graph(inputs: &[&str], outputs: &[&str], vertices: Vec<Value>) -> Value {
    json!({"formatVersion": 1, "seed": 1, "networkInputs": inputs, "networkOutputs": outputs,
           "vertices": vertices})
}

fn parse(g: &Value) -> Result<ComputationGraphConfiguration, NnError> {
    ComputationGraphConfiguration::from_json(&g.to_string())
}

fn error_of(g: &Value) -> String {
    match parse(g) {
        Ok(_) => panic!("expected an error for {g}"),
        Err(NnError::InvalidConfig(m)) => m,
        Err(e) => panic!("expected InvalidConfig, got {e:?}"),
    }
}

/// in -> d1 -> d2 ; add(d1, d2) -> out
fn residual() -> Value {
    graph(
        &["in"],
        &["out"],
        vec![
            lv("d1", &["in"], layer("DenseLayer", 4, 5, "RELU")),
            lv("d2", &["d1"], layer("DenseLayer", 5, 5, "RELU")),
            v(
                "add",
                &["d1", "d2"],
                json!({"type": "ElementWiseVertex", "op": "Add"}),
            ),
            lv("out", &["add"], out_layer(5, 3)),
        ],
    )
}

#[test]
fn a_residual_graph_plans_in_topological_order_with_its_shapes() {
    let conf = parse(&residual()).unwrap();
    let plan = conf.plan().unwrap();
    let names: Vec<&str> = plan
        .order
        .iter()
        .map(|&i| conf.vertices[i].name.as_str())
        .collect();
    assert_eq!(names, ["d1", "d2", "add", "out"]);
    assert_eq!(plan.input_shapes, vec![Shape::Flat(4)]);
    assert_eq!(plan.out_shapes[2], Shape::Flat(5));
    assert_eq!(plan.outputs, vec![3]);
    // JSON round trip writes what it read.
    let again = ComputationGraphConfiguration::from_json(&conf.to_json()).unwrap();
    assert_eq!(again, conf);
}

#[test]
fn insertion_order_breaks_ties_and_dependencies_win_over_it() {
    // "late" is added first but depends on "early".
    let g = graph(
        &["in"],
        &["out"],
        vec![
            lv("late", &["early"], layer("DenseLayer", 3, 3, "RELU")),
            lv("early", &["in"], layer("DenseLayer", 2, 3, "RELU")),
            lv("side", &["in"], layer("DenseLayer", 2, 3, "RELU")),
            v("m", &["late", "side"], json!({"type": "MergeVertex"})),
            lv("out", &["m"], out_layer(6, 2)),
        ],
    );
    let conf = parse(&g).unwrap();
    let plan = conf.plan().unwrap();
    let names: Vec<&str> = plan
        .order
        .iter()
        .map(|&i| conf.vertices[i].name.as_str())
        .collect();
    assert_eq!(names, ["early", "late", "side", "m", "out"]);
}

#[test]
fn bad_graphs_fail_with_a_message_naming_the_vertex() {
    let cases: Vec<(Value, &str)> = vec![
        (
            graph(&["in"], &["out"], vec![
                lv("a", &["in", "c"], layer("DenseLayer", 2, 2, "RELU")),
                lv("b", &["a"], layer("DenseLayer", 2, 2, "RELU")),
                lv("c", &["b"], layer("DenseLayer", 2, 2, "RELU")),
                lv("out", &["c"], out_layer(2, 2)),
            ]),
            "vertex \"a\" (DenseLayer): has 2 input(s) but takes exactly 1; merge several inputs",
        ),
        (
            graph(&["in"], &["out"], vec![
                v("m", &["in", "c"], json!({"type": "MergeVertex"})),
                lv("b", &["m"], layer("DenseLayer", 4, 2, "RELU")),
                lv("c", &["b"], layer("DenseLayer", 2, 2, "RELU")),
                lv("out", &["c"], out_layer(2, 2)),
            ]),
            "the graph has a cycle: \"m\" -> \"b\" -> \"c\" -> \"m\"",
        ),
        (
            graph(&["in"], &["out"], vec![lv("out", &["nope"], out_layer(2, 2))]),
            "vertex \"out\" (OutputLayer): unknown input \"nope\"",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("d", &["in"], layer("DenseLayer", 2, 2, "RELU")),
                lv("d", &["d"], layer("DenseLayer", 2, 2, "RELU")),
                lv("out", &["d"], out_layer(2, 2)),
            ]),
            "duplicate name \"d\"",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("in", &["in"], layer("DenseLayer", 2, 2, "RELU")),
                lv("out", &["in"], out_layer(2, 2)),
            ]),
            "duplicate name \"in\": vertex \"in\" (DenseLayer) has the name of a network input",
        ),
        (
            graph(&["a", "b"], &["out"], vec![
                lv("da", &["a"], layer("DenseLayer", 2, 3, "RELU")),
                lv("db", &["b"], layer("DenseLayer", 2, 4, "RELU")),
                v("add", &["da", "db"], json!({"type": "ElementWiseVertex", "op": "Add"})),
                lv("out", &["add"], out_layer(3, 2)),
            ]),
            "vertex \"add\" (ElementWiseVertex): input 1 is feed-forward [4] but input 0 is feed-forward [3]",
        ),
        (
            json!({"formatVersion": 1, "seed": 1, "networkInputs": ["a", "b"], "networkOutputs": ["out"],
                   "inputTypes": [{"type": "convolutional", "height": 4, "width": 4, "channels": 1},
                                  {"type": "convolutional", "height": 5, "width": 4, "channels": 1}],
                   "vertices": [
                       v("m", &["a", "b"], json!({"type": "MergeVertex"})),
                       lv("out", &["m"], out_layer(32, 2))]}),
            "vertex \"m\" (MergeVertex): input 1 is convolutional [C=1, H=5, W=4] but input 0 is convolutional [C=1, H=4, W=4]",
        ),
        (
            graph(&["in"], &["d"], vec![
                lv("d", &["in"], layer("DenseLayer", 2, 2, "RELU")),
            ]),
            "vertex \"d\" (DenseLayer): a network output must be an OutputLayer or LossLayer",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("d", &["in"], layer("DenseLayer", 2, 2, "RELU")),
                lv("o2", &["d"], out_layer(2, 2)),
                lv("out", &["d"], out_layer(2, 2)),
            ]),
            "vertex \"o2\" (OutputLayer): an output layer must be a network output",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("d", &["in"], layer("DenseLayer", 2, 2, "RELU")),
                lv("lost", &["d"], layer("DenseLayer", 2, 2, "RELU")),
                lv("out", &["d"], out_layer(2, 2)),
            ]),
            "vertex \"lost\" (DenseLayer): is not connected to any network output",
        ),
        (
            graph(&["in", "unused"], &["out"], vec![lv("out", &["in"], out_layer(2, 2))]),
            "network input \"unused\" is not used by any vertex",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("d", &["in"], layer("DenseLayer", 2, 3, "RELU")),
                lv("out", &["d"], out_layer(4, 2)),
            ]),
            "vertex \"out\" (OutputLayer): nIn=4 does not match nOut=3 of vertex \"d\" (DenseLayer)",
        ),
        (
            graph(&["in"], &["out"], vec![
                v("s", &["in"], json!({"type": "SubsetVertex", "from": 1, "to": 5})),
                lv("out", &["s"], out_layer(2, 2)),
            ]),
            // The input's size comes from no layer: the subset reads it directly.
            "network input \"in\": its size is unknown (vertex \"s\" (SubsetVertex) reads it",
        ),
        (
            json!({"formatVersion": 1, "seed": 1, "networkInputs": ["in"], "networkOutputs": ["out"],
                   "inputTypes": [{"type": "feedForward", "size": 4}],
                   "vertices": [
                       v("s", &["in"], json!({"type": "SubsetVertex", "from": 1, "to": 5})),
                       lv("out", &["s"], out_layer(5, 2))]}),
            "vertex \"s\" (SubsetVertex): from=1 to=5 is not a range of the 4 features",
        ),
        (
            json!({"formatVersion": 1, "seed": 1, "networkInputs": ["a", "b"], "networkOutputs": ["out"],
                   "inputTypes": [{"type": "feedForward", "size": 4}],
                   "vertices": [v("m", &["a", "b"], json!({"type": "MergeVertex"})),
                                lv("out", &["m"], out_layer(8, 2))]}),
            "inputTypes has 1 entries but the graph has 2 network inputs",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("d", &["in"], layer("DenseLayer", 2, 2, "RELU")),
                v("st", &["d", "d"], json!({"type": "StackVertex"})),
                lv("out", &["st"], out_layer(2, 2)),
            ]),
            "vertex \"out\" (OutputLayer): a network output must have one row per example, but it has 2× the minibatch rows",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("d", &["in"], layer("DenseLayer", 2, 2, "RELU")),
                v("st", &["d", "d"], json!({"type": "StackVertex"})),
                v("m", &["st", "d"], json!({"type": "MergeVertex"})),
                lv("out", &["m"], out_layer(4, 2)),
            ]),
            "vertex \"m\" (MergeVertex): input 1 (\"d\") has 1× the minibatch rows but input 0 (\"st\") has 2× the minibatch",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("d", &["in"], layer("DenseLayer", 6, 6, "RELU")),
                v("r", &["d"], json!({"type": "ReshapeVertex", "newShape": [-1, 4, 2]})),
                lv("out", &["r"], out_layer(8, 2)),
            ]),
            "vertex \"r\" (ReshapeVertex): newShape [-1, 4, 2] is invalid",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("a", &["in"], layer("DenseLayer", 2, 3, "RELU")),
                lv("b", &["in"], layer("DenseLayer", 2, 4, "RELU")),
                v("l2", &["a", "b"], json!({"type": "L2Vertex"})),
                lv("out", &["l2"], json!({"type": "LossLayer", "lossFunction": "MSE"})),
            ]),
            "vertex \"l2\" (L2Vertex): input 1 is feed-forward [4] but input 0 is feed-forward [3]",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("a", &["in"], layer("DenseLayer", 2, 3, "RELU")),
                v("e", &["a", "a", "a"], json!({"type": "ElementWiseVertex", "op": "Subtract"})),
                lv("out", &["e"], out_layer(3, 2)),
            ]),
            "vertex \"e\" (ElementWiseVertex): has 3 input(s) but takes exactly 2",
        ),
        (
            graph(&["in"], &["out"], vec![
                lv("a", &["in"], layer("DenseLayer", 2, 3, "RELU")),
                v("u", &["a"], json!({"type": "UnstackVertex", "from": 2, "stackSize": 2})),
                lv("out", &["u"], out_layer(3, 2)),
            ]),
            "vertex \"u\" (UnstackVertex): from=2 stackSize=2 is invalid",
        ),
    ];
    for (g, want) in cases {
        let msg = error_of(&g);
        assert!(msg.contains(want), "\n got: {msg}\nwant: {want}");
    }
}

#[test]
fn every_vertex_has_its_shape_rule() {
    let g = json!({"formatVersion": 1, "seed": 1, "networkInputs": ["img", "vec"], "networkOutputs": ["out"],
    "inputTypes": [{"type": "convolutional", "height": 4, "width": 4, "channels": 2},
                   {"type": "feedForward", "size": 32}],
    "vertices": [
        v("sub", &["img"], json!({"type": "SubsetVertex", "from": 1, "to": 1})),
        v("pre", &["vec"], json!({"type": "PreprocessorVertex", "preProcessor":
            {"type": "FeedForwardToCnnPreProcessor", "inputHeight": 4, "inputWidth": 4, "numChannels": 2}})),
        v("merge", &["img", "pre", "sub"], json!({"type": "MergeVertex"})),
        v("scale", &["merge"], json!({"type": "ScaleVertex", "scaleFactor": 0.5})),
        v("shift", &["scale"], json!({"type": "ShiftVertex", "shiftFactor": 1.0})),
        v("norm", &["shift"], json!({"type": "L2NormalizeVertex", "dimension": [1], "eps": 1e-8})),
        v("flat", &["norm"], json!({"type": "ReshapeVertex", "order": "c", "newShape": [-1, 80]})),
        v("stack", &["flat", "flat"], json!({"type": "StackVertex"})),
        v("u0", &["stack"], json!({"type": "UnstackVertex", "from": 0, "stackSize": 2})),
        v("u1", &["stack"], json!({"type": "UnstackVertex", "from": 1, "stackSize": 2})),
        v("dist", &["u0", "u1"], json!({"type": "L2Vertex"})),
        v("max", &["u0", "u1"], json!({"type": "ElementWiseVertex", "op": "Max"})),
        v("both", &["dist", "max"], json!({"type": "MergeVertex"})),
        json!({"name": "out", "inputs": ["both"], "vertex": {"type": "FrozenVertex", "vertex":
            {"type": "LayerVertex", "layer": out_layer(81, 3), "preProcessor": null}}}),
    ]});
    let conf = parse(&g).unwrap();
    let plan = conf.plan().unwrap();
    let shape = |name: &str| plan.out_shapes[conf.vertex_index(name).unwrap()];
    assert_eq!(shape("sub"), Shape::Image { c: 1, h: 4, w: 4 });
    assert_eq!(shape("pre"), Shape::Image { c: 2, h: 4, w: 4 });
    assert_eq!(shape("merge"), Shape::Image { c: 5, h: 4, w: 4 });
    assert_eq!(shape("norm"), Shape::Image { c: 5, h: 4, w: 4 });
    assert_eq!(shape("flat"), Shape::Flat(80));
    assert_eq!(shape("stack"), Shape::Flat(80));
    assert_eq!(shape("dist"), Shape::Flat(1));
    assert_eq!(shape("both"), Shape::Flat(81));
    assert_eq!(shape("out"), Shape::Flat(3));
    assert!(conf.vertices[conf.vertex_index("out").unwrap()].is_frozen());
    // The type report Java's summary uses.
    let types: Value = serde_json::from_str(&conf.vertex_types_json().unwrap()).unwrap();
    assert_eq!(types["vertices"][13]["numParams"], json!(81 * 3 + 3));
    assert_eq!(
        types["vertices"][2]["outputType"],
        json!({"type": "convolutional", "height": 4, "width": 4, "channels": 5})
    );
}

#[test]
fn resolve_infers_n_in_through_vertices_and_names_the_vertex_on_error() {
    let g = json!({"formatVersion": 1, "seed": 1, "networkInputs": ["a", "b"], "networkOutputs": ["out"],
    "inputTypes": [{"type": "convolutionalFlat", "height": 6, "width": 6, "depth": 1},
                   {"type": "feedForward", "size": 3}],
    "vertices": [
        lv("conv", &["a"], json!({"type": "ConvolutionLayer", "nOut": 2, "kernelSize": [3, 3], "activation": "RELU"})),
        lv("bn", &["conv"], json!({"type": "BatchNormalization"})),
        lv("db", &["b"], json!({"type": "DenseLayer", "nIn": null, "nOut": 4, "activation": "RELU"})),
        lv("flat", &["bn"], json!({"type": "DenseLayer", "nOut": 4, "activation": "RELU"})),
        v("m", &["flat", "db"], json!({"type": "MergeVertex"})),
        lv("out", &["m"], json!({"type": "OutputLayer", "nOut": 2, "activation": "SOFTMAX"})),
    ]});
    let resolved = ComputationGraphConfiguration::resolve_json(&g.to_string()).unwrap();
    let r: Value = serde_json::from_str(&resolved).unwrap();
    let n_in = |i: usize| r["vertices"][i]["vertex"]["layer"]["nIn"].clone();
    assert_eq!(n_in(0), json!(1));
    assert_eq!(n_in(1), json!(2));
    assert_eq!(r["vertices"][1]["vertex"]["layer"]["nOut"], json!(2));
    assert_eq!(n_in(2), json!(3));
    assert_eq!(n_in(3), json!(2 * 4 * 4));
    assert_eq!(n_in(5), json!(8));
    // Unresolved, the same JSON is refused with the vertex named.
    let msg = error_of(&g);
    assert!(
        msg.starts_with("vertex \"conv\" (ConvolutionLayer): nIn is not set"),
        "{msg}"
    );
}

#[test]
fn multi_layer_resolve_infers_every_unset_n_in() {
    let json = json!({"formatVersion": 1, "seed": 1,
        "inputType": {"type": "convolutionalFlat", "height": 8, "width": 8, "depth": 3},
        "layers": [
            {"type": "ConvolutionLayer", "nOut": 4, "kernelSize": [3, 3]},
            {"type": "SubsamplingLayer", "kernelSize": [2, 2], "stride": [2, 2]},
            {"type": "BatchNormalization"},
            {"type": "DenseLayer", "nOut": 5},
            {"type": "OutputLayer", "nOut": 2, "activation": "SOFTMAX"}]});
    let resolved = MultiLayerConfiguration::resolve_json(&json.to_string()).unwrap();
    let conf = MultiLayerConfiguration::from_json(&resolved).unwrap();
    let n_ins: Vec<Option<usize>> = conf.layers.iter().map(|l| l.n_in()).collect();
    assert_eq!(
        n_ins,
        vec![Some(3), None, Some(4), Some(4 * 3 * 3), Some(5)]
    );
    // Without inputType the first nIn must be given.
    let bad = json!({"formatVersion": 1, "seed": 1, "layers": [
        {"type": "DenseLayer", "nOut": 5}, {"type": "OutputLayer", "nOut": 2}]});
    let err = MultiLayerConfiguration::resolve_json(&bad.to_string()).unwrap_err();
    assert_eq!(
        err.message(),
        "layer 0 (DenseLayer): nIn is not set (0): set nIn, or call setInputType(..) so that it is inferred"
    );
    // An IDENTITY init on a non-square weight is refused at resolve (Java's build()) time.
    let ident = json!({"formatVersion": 1, "seed": 1, "layers": [
        {"type": "DenseLayer", "nIn": 3, "nOut": 5, "weightInit": "IDENTITY"}, {"type": "OutputLayer", "nOut": 2}]});
    let err = MultiLayerConfiguration::resolve_json(&ident.to_string()).unwrap_err();
    assert!(
        err.message()
            .contains("weightInit IDENTITY needs a square weight matrix"),
        "{err}"
    );
}
