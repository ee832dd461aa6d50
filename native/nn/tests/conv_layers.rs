//! f64 finite-difference gradient checks through whole networks of every convolutional layer
//! type (ConvolutionLayer, Convolution1DLayer, SubsamplingLayer, Subsampling1DLayer, Upsampling2D,
//! ZeroPaddingLayer, GlobalPoolingLayer) in every pooling type and convolution mode, with
//! strides, paddings and dilations, plus an f32 training smoke test.
//!
//! Criterion: `ferrodl_testutil::check_gradient` with `GradCheckConfig::default()` — step
//! h = 1e-6, relative error `|a − n| / max(|a|, |n|)` <= 1e-6 unless `|a − n|` <= 1e-8 — over
//! every parameter, against `score()` (inference mode; these networks have no dropout or batch
//! norm, so training and inference agree). Parameters are uniform in [-1, 1), inputs standard
//! normal: max pooling sees no ties (except exact copies made by upsampling, whose gradient is
//! the same whichever copy wins) and a ReLU/max kink within h of a value has probability ~1e-6.

#[path = "common/builders.rs"]
mod builders;

use builders::*;
use ferrodl_nn::MultiLayerNetwork;
use ferrodl_testutil::Rng;
use serde_json::{json, Value};

/// The fields every parameterised layer has, all written out.
fn base(kind: &str, activation: &str) -> Value {
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

/// A ConvolutionLayer; `extra` overrides fields (kernelSize, stride, padding, dilation,
/// convolutionMode, hasBias, ...).
fn conv2d(n_in: usize, n_out: usize, activation: &str, extra: Value) -> Value {
    let mut v = base("ConvolutionLayer", activation);
    v["nIn"] = json!(n_in);
    v["nOut"] = json!(n_out);
    v["kernelSize"] = json!([3, 3]);
    v["stride"] = json!([1, 1]);
    v["padding"] = json!([0, 0]);
    v["dilation"] = json!([1, 1]);
    v["convolutionMode"] = json!("Truncate");
    v["hasBias"] = json!(true);
    merge(v, extra)
}

fn conv1d(n_in: usize, n_out: usize, activation: &str, extra: Value) -> Value {
    let mut v = base("Convolution1DLayer", activation);
    v["nIn"] = json!(n_in);
    v["nOut"] = json!(n_out);
    v["kernelSize"] = json!(3);
    v["stride"] = json!(1);
    v["padding"] = json!(0);
    v["dilation"] = json!(1);
    v["convolutionMode"] = json!("Truncate");
    v["hasBias"] = json!(true);
    merge(v, extra)
}

/// A SubsamplingLayer of `pooling` ("PNORM3" is PNORM with p = 3).
fn subsampling(pooling: &str, extra: Value) -> Value {
    let (kind, p) = pooling_kind(pooling);
    let v = json!({
        "type": "SubsamplingLayer", "name": null, "dropOut": 0.0, "poolingType": kind,
        "kernelSize": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1],
        "convolutionMode": "Truncate", "pnorm": p, "eps": 1e-8
    });
    merge(v, extra)
}

fn subsampling1d(pooling: &str, extra: Value) -> Value {
    let (kind, p) = pooling_kind(pooling);
    let v = json!({
        "type": "Subsampling1DLayer", "name": null, "dropOut": 0.0, "poolingType": kind,
        "kernelSize": 2, "stride": 2, "padding": 0, "dilation": 1,
        "convolutionMode": "Truncate", "pnorm": p, "eps": 1e-8
    });
    merge(v, extra)
}

fn upsampling(size: [usize; 2]) -> Value {
    json!({"type": "Upsampling2D", "name": null, "dropOut": 0.0, "size": size})
}

fn zero_padding(padding: [usize; 4]) -> Value {
    json!({"type": "ZeroPaddingLayer", "name": null, "dropOut": 0.0, "padding": padding})
}

fn global_pooling(pooling: &str, collapse: bool) -> Value {
    let (kind, p) = pooling_kind(pooling);
    json!({"type": "GlobalPoolingLayer", "name": null, "dropOut": 0.0, "poolingType": kind,
           "pnorm": p, "collapseDimensions": collapse})
}

fn pooling_kind(pooling: &str) -> (&str, u32) {
    match pooling {
        "PNORM3" => ("PNORM", 3),
        "PNORM1" => ("PNORM", 1),
        other => (other, 2),
    }
}

fn merge(mut v: Value, extra: Value) -> Value {
    if let Some(e) = extra.as_object() {
        for (k, val) in e {
            v[k] = val.clone();
        }
    }
    v
}

fn image(c: usize, h: usize, w: usize) -> Value {
    json!({"type": "convolutional", "height": h, "width": w, "channels": c})
}

fn sequence(c: usize, len: usize) -> Value {
    json!({"type": "recurrent", "size": c, "timeSeriesLength": len})
}

/// Builds the f64 network, randomises its parameters and checks its gradient on a random
/// minibatch of `rows` (softmax + MCXENT one-hot labels, or identity + MSE normal targets).
fn check(what: &str, input_type: Value, layers: Vec<Value>, rows: usize, seed: u64) {
    let mut net = net64(&conf_json(seed as i64, true, Some(input_type), layers));
    let mut rng = Rng::new(seed ^ 0xc0);
    randomize_params(&mut net, &mut rng);
    let (n_in, n_out) = (net.n_in(), net.n_out());
    let x = normal(&mut rng, rows * n_in);
    let y = match net.output_activation() {
        ferrodl_nn::Activation::Softmax => {
            let mut y = vec![0.0; rows * n_out];
            for r in 0..rows {
                y[r * n_out + rng.below(n_out as u64) as usize] = 1.0;
            }
            y
        }
        _ => normal(&mut rng, rows * n_out),
    };
    let report = GradCase {
        net: &mut net,
        x: &x,
        y: &y,
        rows,
        mask: None,
        mode: ScoreMode::Inference,
        skip: Vec::new(),
        negative_control: seed & 1 == 0,
    }
    .run(what);
    assert!(report.max_rel_error <= 1e-6, "{what}: {report}");
}

/// conv (Same, stride 2, dilation 2) → subsampling of every type → upsampling → zero padding →
/// global pooling of every type → softmax output.
#[test]
fn conv2d_same_stride_dilation_through_every_pooling_type() {
    let poolings = ["MAX", "AVG", "SUM", "PNORM", "PNORM3", "PNORM1"];
    let globals = ["AVG", "MAX", "PNORM", "SUM", "PNORM3", "MAX"];
    for (i, (pool, global)) in poolings.iter().zip(globals).enumerate() {
        let layers = vec![
            conv2d(
                2,
                3,
                "TANH",
                json!({"stride": [2, 2], "dilation": [2, 2], "convolutionMode": "Same"}),
            ),
            // 9×8 -> 5×4; 2×2 stride 1 with one padding row -> 6×3
            subsampling(pool, json!({"stride": [1, 1], "padding": [1, 0]})),
            upsampling([2, 1]),
            zero_padding([1, 0, 0, 2]),
            global_pooling(global, true),
            // Sums over many cells make large logits: MCXENT clips p at 1e-10, where its true
            // gradient is 0 but softmax − y is not, so those cases regress with MSE instead.
            if [*pool, global]
                .iter()
                .any(|p| p.starts_with("SUM") || *p == "PNORM1")
            {
                output(3, 4, "IDENTITY", "MSE")
            } else {
                output(3, 4, "SOFTMAX", "MCXENT")
            },
        ];
        check(
            &format!("conv Same → {pool} → upsampling → padding → global {global}"),
            image(2, 9, 8),
            layers,
            3,
            10 + i as u64,
        );
    }
}

/// Stacked convolutions in Truncate (padding, unequal strides, no bias) and Strict modes, then a
/// dense layer on the flattened image, across activations (GELU keeps pre-activations; SOFTMAX
/// normalises along the width).
#[test]
fn stacked_convolutions_into_dense() {
    for (i, act) in [
        "RELU",
        "SIGMOID",
        "GELU",
        "LEAKYRELU",
        "SOFTMAX",
        "IDENTITY",
    ]
    .iter()
    .enumerate()
    {
        let layers = vec![
            conv2d(
                2,
                4,
                act,
                json!({"kernelSize": [3, 2], "stride": [2, 1], "padding": [1, 1]}),
            ),
            // 7×6 -> (7+2-3)/2+1 = 4 × (6+2-2)+1 = 7; Strict 2×3 stride [2,2]: (4-2)/2+1 = 2,
            // (7-3)/2+1 = 3
            conv2d(
                4,
                3,
                "TANH",
                json!({"kernelSize": [2, 3], "stride": [2, 2], "convolutionMode": "Strict",
                       "hasBias": false}),
            ),
            dense(18, 5, "TANH"),
            output(5, 3, "SOFTMAX", "MCXENT"),
        ];
        check(
            &format!("conv {act} → conv Strict → dense"),
            image(2, 7, 6),
            layers,
            4,
            30 + i as u64,
        );
    }
}

/// Conv1D → Subsampling1D (every type, Same) → Conv1D (dilated, Same) → GlobalPooling → output.
#[test]
fn conv1d_pooling1d_global_pooling() {
    let poolings = ["MAX", "AVG", "PNORM", "SUM", "PNORM3"];
    let globals = ["MAX", "AVG", "SUM", "PNORM", "AVG"];
    for (i, (pool, global)) in poolings.iter().zip(globals).enumerate() {
        let layers = vec![
            conv1d(3, 4, "TANH", json!({"stride": 2, "padding": 1})),
            // 11 -> (11+2-3)/2+1 = 6; Same 3 stride 2 -> 3
            subsampling1d(
                pool,
                json!({"kernelSize": 3, "stride": 2, "convolutionMode": "Same"}),
            ),
            conv1d(
                4,
                2,
                "SIGMOID",
                json!({"kernelSize": 2, "dilation": 2, "convolutionMode": "Same"}),
            ),
            global_pooling(global, true),
            output(2, 3, "SOFTMAX", "MCXENT"),
        ];
        check(
            &format!("conv1d → {pool}1d → conv1d → global {global}"),
            sequence(3, 11),
            layers,
            3,
            50 + i as u64,
        );
    }
    // Truncate/Strict 1-D pooling with dilation and padding, convolution without bias.
    let layers = vec![
        conv1d(
            2,
            3,
            "IDENTITY",
            json!({"kernelSize": 2, "hasBias": false, "convolutionMode": "Strict"}),
        ),
        // 9 -> 8; kernel 2 dilation 2 stride 3 padding 1: (8+2-3)/3+1 = 3
        subsampling1d(
            "MAX",
            json!({"kernelSize": 2, "dilation": 2, "stride": 3, "padding": 1}),
        ),
        global_pooling("PNORM", true),
        output(3, 2, "IDENTITY", "MSE"),
    ];
    check(
        "conv1d Strict → dilated max pool → global PNORM",
        sequence(2, 9),
        layers,
        4,
        60,
    );
}

/// Global pooling without collapsing ([C,1,1]) feeds a dense layer; 2-D pooling with dilation.
#[test]
fn global_pooling_uncollapsed_and_dilated_pooling() {
    let layers = vec![
        conv2d(1, 3, "RELU", json!({"kernelSize": [2, 2]})),
        // 8×9 -> 7×8; dilated 2×2 (effective 3×3) stride 2 with padding 1: (7+2-3)/2+1 = 4,
        // (8+2-3)/2+1 = 4
        subsampling("AVG", json!({"dilation": [2, 2], "padding": [1, 1]})),
        global_pooling("MAX", false),
        dense(3, 4, "TANH"),
        output(4, 2, "SOFTMAX", "MCXENT"),
    ];
    check(
        "conv → dilated AVG pool → global MAX [C,1,1] → dense",
        image(1, 8, 9),
        layers,
        3,
        70,
    );
}

/// A flat `convolutionalFlat` input read as an image; conv → max pool → output on the flat image.
#[test]
fn convolutional_flat_input() {
    let layers = vec![
        conv2d(
            1,
            2,
            "TANH",
            json!({"kernelSize": [3, 3], "padding": [1, 1]}),
        ),
        subsampling("MAX", json!({})),
        output(18, 3, "IDENTITY", "MSE"),
    ];
    check(
        "convolutionalFlat → conv → max pool → output",
        json!({"type": "convolutionalFlat", "height": 6, "width": 6, "depth": 1}),
        layers,
        3,
        80,
    );
}

/// A batch large enough to be cut into several chunks spread over several slots (each keeping its
/// own share of dW), with L1/L2 on the convolution.
#[test]
fn large_batch_in_chunks_with_regularization() {
    let mut c = conv2d(2, 2, "TANH", json!({"convolutionMode": "Same"}));
    c["l2"] = json!(0.01);
    c["l1"] = json!(0.002);
    c["l2Bias"] = json!(0.03);
    // K·P = 18·1024 columns per example: about 7 examples per chunk, 3 chunks for 20 rows.
    let layers = vec![
        c,
        subsampling("MAX", json!({"kernelSize": [4, 4], "stride": [4, 4]})),
        global_pooling("AVG", true),
        output(2, 3, "SOFTMAX", "MCXENT"),
    ];
    check(
        "conv on 32×32, 20 examples in chunks",
        image(2, 32, 32),
        layers,
        20,
        90,
    );
}

/// The parameter table of a convolution: W [nOut, nIn, kH, kW] then b [nOut]; Conv1D W [nOut,
/// nIn, k]; weightInit IDENTITY refused with the sizes in the message.
#[test]
fn parameter_layout_and_identity_refusal() {
    let conf = conf_json(
        1,
        true,
        Some(image(3, 8, 8)),
        vec![
            conv2d(3, 5, "RELU", json!({"kernelSize": [3, 2]})),
            global_pooling("AVG", true),
            output(5, 2, "SOFTMAX", "MCXENT"),
        ],
    );
    let net = net64(&conf);
    let table = net.param_table();
    assert_eq!(table[0].2, vec![5, 3, 3, 2]);
    assert_eq!(table[0].1, 0..90);
    assert_eq!(table[1].2, vec![5]);
    assert_eq!(table[1].1, 90..95);

    let conf = conf_json(
        1,
        true,
        Some(sequence(2, 7)),
        vec![
            conv1d(2, 4, "RELU", json!({"kernelSize": 3, "hasBias": false})),
            global_pooling("MAX", true),
            output(4, 2, "SOFTMAX", "MCXENT"),
        ],
    );
    let net = net64(&conf);
    assert_eq!(net.param_table()[0].2, vec![4, 2, 3]);
    assert_eq!(net.num_params(), 24 + 4 * 2 + 2);

    let mut c = conv2d(3, 4, "RELU", json!({}));
    c["weightInit"] = json!("IDENTITY");
    let conf = conf_json(
        1,
        true,
        Some(image(3, 8, 8)),
        vec![
            c,
            global_pooling("AVG", true),
            output(4, 2, "SOFTMAX", "MCXENT"),
        ],
    );
    let err = MultiLayerNetwork::<f64>::from_configuration(parse(&conf)).unwrap_err();
    let m = err.to_string();
    assert!(
        m.contains("weightInit IDENTITY") && m.contains("nIn=3, nOut=4"),
        "{m}"
    );
}

/// f32 training smoke test: a small CNN learns which half of an 8×8 image holds a bright blob.
#[test]
fn small_cnn_learns_in_f32() {
    let mut layers = vec![
        conv2d(
            1,
            4,
            "RELU",
            json!({"kernelSize": [3, 3], "convolutionMode": "Same"}),
        ),
        subsampling("MAX", json!({})),
        conv2d(4, 4, "RELU", json!({"kernelSize": [2, 2]})),
        global_pooling("MAX", true),
        output(4, 2, "SOFTMAX", "MCXENT"),
    ];
    for l in layers.iter_mut().filter(|l| l.get("updater").is_some()) {
        l["updater"] = json!({"type": "Adam", "learningRate": 0.02});
        l["biasUpdater"] = json!({"type": "Adam", "learningRate": 0.02});
        l["weightInit"] = json!("RELU");
    }
    let conf = parse(&conf_json(7, true, Some(image(1, 8, 8)), layers));
    let mut net = MultiLayerNetwork::<f32>::from_configuration(conf).unwrap();
    let mut rng = Rng::new(3);
    let batch = |rng: &mut Rng| {
        let rows = 32;
        let mut x = vec![0f32; rows * 64];
        let mut y = vec![0f32; rows * 2];
        for r in 0..rows {
            let right = rng.below(2) as usize;
            let (cy, cx) = (1 + rng.below(6) as usize, right * 4 + rng.below(3) as usize);
            for v in &mut x[r * 64..(r + 1) * 64] {
                *v = 0.1 * rng.next_gaussian() as f32;
            }
            for dy in 0..2 {
                for dx in 0..2 {
                    x[r * 64 + (cy + dy - 1) * 8 + cx + dx] += 1.0;
                }
            }
            y[r * 2 + right] = 1.0;
        }
        (x, y, rows)
    };
    let (tx, ty, trows) = batch(&mut rng);
    let before = net.score(&tx, &ty, trows, None).unwrap();
    for _ in 0..150 {
        let (x, y, rows) = batch(&mut rng);
        net.fit(&x, &y, rows, None).unwrap();
    }
    let after = net.score(&tx, &ty, trows, None).unwrap();
    let out = net.output(&tx, trows, false).unwrap();
    let correct = (0..trows)
        .filter(|&r| (out[r * 2 + 1] > out[r * 2]) == (ty[r * 2 + 1] == 1.0))
        .count();
    assert!(
        after < 0.5 * before && correct >= 28,
        "score {before} -> {after}, {correct}/{trows} correct"
    );
}
