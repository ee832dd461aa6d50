// Temporary: fingerprints of MultiLayerNetwork training, to prove the executor refactor is
// bit-identical. Not committed.
use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork};

fn h(v: &[f32]) -> u64 {
    let mut x: u64 = 1469598103934665603;
    for f in v {
        x ^= f.to_bits() as u64;
        x = x.wrapping_mul(1099511628211);
    }
    x
}

fn run(name: &str, json: &str, n_in: usize, n_out: usize, rows: usize) {
    let conf = MultiLayerConfiguration::from_json(json).unwrap();
    let mut net = MultiLayerNetwork::new(conf).unwrap();
    let mut s: u64 = 7;
    let mut rnd = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 33) as f64 / (1u64 << 31) as f64) as f32 - 0.5
    };
    let x: Vec<f32> = if name == "emb" {
        (0..rows).map(|r| (r % 3) as f32).collect()
    } else {
        (0..rows * n_in).map(|_| rnd()).collect()
    };
    let mut y = vec![0f32; rows * n_out];
    for r in 0..rows {
        y[r * n_out + (r % n_out)] = 1.0;
    }
    let p0 = h(net.params());
    let mut scores = vec![];
    for _ in 0..5 {
        scores.push(net.fit(&x, &y, rows, None).unwrap());
    }
    let out = net.output(&x, rows, false).unwrap();
    let outt = net.output(&x, rows, true).unwrap();
    let sc = net.score(&x, &y, rows, None).unwrap();
    let ex = net.score_examples(&x, &y, rows, None, true).unwrap();
    let mut g = net.compute_gradient_and_score(&x, &y, rows, None).unwrap();
    let gh = h(net.gradient());
    g += net.compute_update(&x, &y, rows, None).unwrap();
    println!(
        "GOLDEN {name} p0={p0:x} p={:x} u={:x} st={:x} out={:x} outt={:x} s={:?} sc={sc:?} ex={:?} g={g:?} gh={gh:x} upd={:x}",
        h(net.params()), h(net.updater_state()), h(net.updater_state()), h(&out), h(&outt), scores, ex.iter().map(|v| v.to_bits()).fold(0u64, |a, b| a.wrapping_mul(31).wrapping_add(b)), h(net.update())
    );
}

#[test]
fn golden() {
    let dense = |n_in: usize, n_out: usize, act: &str, extra: &str| {
        format!(
            r#"{{"type":"DenseLayer","nIn":{n_in},"nOut":{n_out},"activation":"{act}","updater":{{"type":"Adam"}}{extra}}}"#
        )
    };
    let out = |n_in: usize, n_out: usize| {
        format!(
            r#"{{"type":"OutputLayer","nIn":{n_in},"nOut":{n_out},"activation":"SOFTMAX","lossFunction":"MCXENT","updater":{{"type":"Nesterovs","learningRate":0.05}},"l2":1e-3}}"#
        )
    };
    let c = |layers: Vec<String>, extra: &str| {
        format!(
            r#"{{"formatVersion":1,"seed":42{extra},"layers":[{}]}}"#,
            layers.join(",")
        )
    };
    run(
        "mlp",
        &c(
            vec![
                dense(6, 8, "RELU", ""),
                dense(8, 5, "TANH", r#","dropOut":0.7"#),
                out(5, 3),
            ],
            "",
        ),
        6,
        3,
        7,
    );
    run(
        "frozen_bn",
        &c(
            vec![
                format!(
                    r#"{{"type":"FrozenLayer","layer":{}}}"#,
                    dense(6, 8, "RELU", "")
                ),
                dense(8, 5, "TANH", ""),
                r#"{"type":"BatchNormalization","nIn":5,"nOut":5,"updater":{"type":"Adam"}}"#
                    .to_string(),
                out(5, 3),
            ],
            "",
        ),
        6,
        3,
        7,
    );
    run(
        "wd",
        &c(
            vec![
                dense(
                    6,
                    8,
                    "RELU",
                    r#","weightDecay":0.01,"gradientNormalization":"ClipL2PerLayer"}"#
                        .trim_end_matches('}'),
                ),
                out(8, 3),
            ],
            "",
        ),
        6,
        3,
        7,
    );
    let conv = r#"{"type":"ConvolutionLayer","nIn":1,"nOut":3,"kernelSize":[3,3],"activation":"RELU","updater":{"type":"Adam"}},
      {"type":"SubsamplingLayer","kernelSize":[2,2],"stride":[2,2]},
      {"type":"BatchNormalization","nIn":3,"nOut":3},
      {"type":"DenseLayer","nIn":12,"nOut":6,"activation":"RELU","dropOut":0.8}"#;
    run(
        "cnn",
        &format!(
            r#"{{"formatVersion":1,"seed":5,"inputType":{{"type":"convolutionalFlat","height":6,"width":6,"depth":1}},"layers":[{conv},{}]}}"#,
            out(6, 4)
        ),
        36,
        4,
        5,
    );
    run(
        "loss",
        &c(
            vec![
                dense(6, 3, "IDENTITY", ""),
                r#"{"type":"LossLayer","activation":"SOFTMAX","lossFunction":"MCXENT"}"#
                    .to_string(),
            ],
            r#","miniBatch":false"#,
        ),
        6,
        3,
        7,
    );
    run(
        "emb",
        &c(
            vec![
                r#"{"type":"EmbeddingLayer","nIn":3,"nOut":4,"activation":"RELU"}"#.to_string(),
                out(4, 2),
            ],
            "",
        ),
        1,
        2,
        5,
    );
}
