//! Configuration builders shared by the nn integration tests.
#![allow(dead_code)]

use ferrodl_nn::MultiLayerConfiguration;
use serde_json::{json, Value};

/// A layer object with every field of ARCHITECTURE.md §2 set.
pub fn layer(kind: &str, n_in: usize, n_out: usize, activation: &str) -> Value {
    let mut v = json!({
        "type": kind, "name": null, "nIn": n_in, "nOut": n_out,
        "activation": activation, "weightInit": "XAVIER", "biasInit": 0.0, "hasBias": true,
        "l1": 0.0, "l2": 0.0, "l1Bias": 0.0, "l2Bias": 0.0,
        "updater": {"type": "Sgd", "learningRate": 0.1},
        "biasUpdater": {"type": "Sgd", "learningRate": 0.1}
    });
    if kind == "OutputLayer" {
        v["lossFunction"] = json!("MCXENT");
    }
    v
}

pub fn dense(n_in: usize, n_out: usize, activation: &str) -> Value {
    layer("DenseLayer", n_in, n_out, activation)
}

pub fn output(n_in: usize, n_out: usize, activation: &str, loss: &str) -> Value {
    let mut v = layer("OutputLayer", n_in, n_out, activation);
    v["lossFunction"] = json!(loss);
    v
}

pub fn conf_value(seed: i64, layers: Vec<Value>) -> Value {
    json!({
        "formatVersion": 1, "seed": seed, "miniBatch": true,
        "iterationCount": 0, "epochCount": 0, "layers": layers
    })
}

pub fn conf(seed: i64, layers: Vec<Value>) -> MultiLayerConfiguration {
    MultiLayerConfiguration::from_json(&conf_value(seed, layers).to_string())
        .expect("valid test configuration")
}

/// Sets the same updater on weights and biases of every layer.
pub fn with_updater(mut layers: Vec<Value>, updater: Value) -> Vec<Value> {
    for l in &mut layers {
        l["updater"] = updater.clone();
        l["biasUpdater"] = updater.clone();
    }
    layers
}
