//! Every layer type of ARCHITECTURE.md §2.2 with every field set to a non-default value: parsed,
//! written back and parsed again without loss, and the written JSON has exactly the input's keys
//! (so Rust writes what Java writes, field for field).

use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork};
use serde_json::{json, Value};

/// The base-layer fields, all away from their defaults.
fn base(mut v: Value) -> Value {
    let extra = json!({
        "name": "named", "dropOut": 0.8, "activation": "ELU", "weightInit": "DISTRIBUTION",
        "weightInitDistribution": {"type": "truncatedNormal", "mean": 0.1, "std": 0.2},
        "biasInit": 0.3, "l1": 0.01, "l2": 0.02, "l1Bias": 0.03, "l2Bias": 0.04,
        "weightDecay": 0.05, "weightDecayBias": 0.06,
        "updater": {"type": "Nadam", "learningRate": 0.01, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-7,
                    "learningRateSchedule": {"type": "StepSchedule", "scheduleType": "EPOCH",
                                             "initialValue": 0.01, "decayRate": 0.5, "step": 2.0}},
        "biasUpdater": {"type": "RmsProp", "learningRate": 0.02, "rmsDecay": 0.9, "epsilon": 1e-6},
        "gradientNormalization": "ClipL2PerParamType", "gradientNormalizationThreshold": 2.5
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

fn top(input_type: Value, layers: Vec<Value>) -> Value {
    json!({
        "formatVersion": 1, "seed": -7, "miniBatch": false, "iterationCount": 11, "epochCount": 3,
        "inputType": input_type, "layers": layers
    })
}

fn configurations() -> Vec<(&'static str, Value)> {
    let mse_loss = json!({"type": "LossLayer", "name": "loss", "dropOut": 0.9, "activation": "SOFTPLUS",
                          "lossFunction": "POISSON", "lossWeights": null});
    vec![
        (
            "dense chain",
            top(
                json!({"type": "feedForward", "size": 4}),
                vec![
                    base(json!({"type": "DenseLayer", "nIn": 4, "nOut": 6, "hasBias": false})),
                    json!({"type": "ActivationLayer", "name": "a", "dropOut": 0.7, "activation": "SWISH"}),
                    json!({"type": "DropoutLayer", "name": "d", "dropOut": 0.6}),
                    base(
                        json!({"type": "BatchNormalization", "nIn": 6, "nOut": 6, "decay": 0.8,
                                "eps": 1e-3, "lockGammaBeta": true, "gamma": 2.0, "beta": 0.5}),
                    ),
                    json!({"type": "FrozenLayer", "name": "frozen", "dropOut": 0.0,
                           "layer": base(json!({"type": "DenseLayer", "nIn": 6, "nOut": 5, "hasBias": true}))}),
                    base(
                        json!({"type": "OutputLayer", "nIn": 5, "nOut": 3, "hasBias": false,
                                "lossFunction": "MEAN_SQUARED_LOGARITHMIC_ERROR",
                                "lossWeights": [1.0, 2.0, 0.5]}),
                    ),
                ],
            ),
        ),
        (
            "convolutional chain",
            top(
                json!({"type": "convolutional", "height": 9, "width": 8, "channels": 2}),
                vec![
                    base(
                        json!({"type": "ConvolutionLayer", "nIn": 2, "nOut": 3, "kernelSize": [3, 2],
                                "stride": [2, 1], "padding": [1, 0], "dilation": [1, 2],
                                "convolutionMode": "Same", "hasBias": false}),
                    ),
                    json!({"type": "SubsamplingLayer", "name": "pool", "dropOut": 0.0,
                           "poolingType": "PNORM", "kernelSize": [2, 2], "stride": [1, 1],
                           "padding": [1, 1], "dilation": [1, 1], "convolutionMode": "Truncate",
                           "pnorm": 3, "eps": 1e-6}),
                    json!({"type": "Upsampling2D", "name": "up", "dropOut": 0.0, "size": [2, 3]}),
                    json!({"type": "ZeroPaddingLayer", "name": "pad", "dropOut": 0.0, "padding": [1, 2, 0, 1]}),
                    json!({"type": "GlobalPoolingLayer", "name": "gp", "dropOut": 0.0, "poolingType": "AVG",
                           "pnorm": 4, "collapseDimensions": true}),
                    mse_loss.clone(),
                ],
            ),
        ),
        (
            "recurrent chain",
            top(
                json!({"type": "recurrent", "size": 3, "timeSeriesLength": 13}),
                vec![
                    base(
                        json!({"type": "Convolution1DLayer", "nIn": 3, "nOut": 4, "kernelSize": 3,
                                "stride": 2, "padding": 1, "dilation": 1, "convolutionMode": "Strict",
                                "hasBias": true}),
                    ),
                    json!({"type": "Subsampling1DLayer", "name": "p1", "dropOut": 0.0, "poolingType": "SUM",
                           "kernelSize": 2, "stride": 1, "padding": 0, "dilation": 2,
                           "convolutionMode": "Truncate", "pnorm": 2, "eps": 1e-8}),
                    json!({"type": "GlobalPoolingLayer", "name": "gp", "dropOut": 0.0, "poolingType": "MAX",
                           "pnorm": 2, "collapseDimensions": true}),
                    mse_loss.clone(),
                ],
            ),
        ),
        (
            "embedding",
            top(
                json!({"type": "feedForward", "size": 1}),
                vec![
                    base(json!({"type": "EmbeddingLayer", "nIn": 10, "nOut": 4, "hasBias": true})),
                    mse_loss,
                ],
            ),
        ),
    ]
}

fn keys(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}.{k}");
                out.push(p.clone());
                keys(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                keys(x, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_layer_type_round_trips_with_every_field() {
    for (what, v) in configurations() {
        let text = v.to_string();
        let c = MultiLayerConfiguration::from_json(&text).unwrap_or_else(|e| panic!("{what}: {e}"));
        let written = c.to_json();
        let again = MultiLayerConfiguration::from_json(&written).unwrap();
        assert_eq!(c, again, "{what}");
        let written_v: Value = serde_json::from_str(&written).unwrap();
        // Same values, same keys, recursively (numbers compare as f64: 2 and 2.0 are equal).
        let (mut a, mut b) = (Vec::new(), Vec::new());
        keys(&v, "", &mut a);
        keys(&written_v, "", &mut b);
        a.sort();
        b.sort();
        assert_eq!(a, b, "{what}: written keys differ from the input's");
        assert_eq!(c.iteration_count, 11);
        assert_eq!(c.epoch_count, 3);
        assert!(!c.mini_batch);
        // And the configuration builds a network whose parameter count matches the config's.
        let net = MultiLayerNetwork::<f64>::from_configuration(c.clone())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(net.num_params(), c.num_params(), "{what}");
        assert!(net.num_params() > 0, "{what}");
    }
}

#[test]
fn shapes_of_the_convolutional_chain() {
    let (_, v) = &configurations()[1];
    let c = MultiLayerConfiguration::from_json(&v.to_string()).unwrap();
    let s = c.layer_shapes().unwrap();
    use ferrodl_nn::Shape::*;
    // Same, stride (2,1): H ceil(9/2)=5, W 8.
    assert_eq!(s[0].output, Image { c: 3, h: 5, w: 8 });
    // PNORM 2x2 stride 1 padding 1: (5+2-2)/1+1 = 6, (8+2-2)+1 = 9.
    assert_eq!(s[1].output, Image { c: 3, h: 6, w: 9 });
    assert_eq!(s[2].output, Image { c: 3, h: 12, w: 27 });
    assert_eq!(s[3].output, Image { c: 3, h: 15, w: 28 });
    assert_eq!(s[4].output, Flat(3));
    assert_eq!(s[5].output, Flat(3));
    // Conv weights [3, 2, 3, 2] without bias.
    assert_eq!(c.num_params(), 3 * 2 * 3 * 2);
}
