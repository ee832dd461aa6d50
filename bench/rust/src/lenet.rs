//! The LeNet-style CNN of `spark-example/.../LeNetMnistExample.java` (and of `bench/jvm`), trained
//! through the public engine API (`MultiLayerNetwork::fit`): conv 5×5×20 (identity) → max-pool
//! 2×2/2 → conv 5×5×50 (identity) → max-pool 2×2/2 → dense 500 ReLU → softmax 10 + MCXENT, Xavier
//! initialisation, Adam lr 1e-3, no regularisation, input `convolutionalFlat(28, 28, 1)`.
//! `bench/python/peers.py::JaxLeNet` is the same network in JAX.

use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork};

/// Every nIn is written out (the Java builder infers them from `setInputType`).
pub const LENET_JSON: &str = r#"{"formatVersion":1,"seed":42,
"inputType":{"type":"convolutionalFlat","height":28,"width":28,"depth":1},
"layers":[
{"type":"ConvolutionLayer","nIn":1,"nOut":20,"kernelSize":[5,5],"stride":[1,1],"activation":"IDENTITY","weightInit":"XAVIER","updater":{"type":"Adam","learningRate":0.001}},
{"type":"SubsamplingLayer","poolingType":"MAX","kernelSize":[2,2],"stride":[2,2]},
{"type":"ConvolutionLayer","nIn":20,"nOut":50,"kernelSize":[5,5],"stride":[1,1],"activation":"IDENTITY","weightInit":"XAVIER","updater":{"type":"Adam","learningRate":0.001}},
{"type":"SubsamplingLayer","poolingType":"MAX","kernelSize":[2,2],"stride":[2,2]},
{"type":"DenseLayer","nIn":800,"nOut":500,"activation":"RELU","weightInit":"XAVIER","updater":{"type":"Adam","learningRate":0.001}},
{"type":"OutputLayer","nIn":500,"nOut":10,"activation":"SOFTMAX","lossFunction":"MCXENT","weightInit":"XAVIER","updater":{"type":"Adam","learningRate":0.001}}]}"#;

/// Parameters: conv1 20·25+20, conv2 50·20·25+50, dense 800·500+500, output 500·10+10.
pub const PARAMS: usize = 20 * 25 + 20 + 50 * 20 * 25 + 50 + 800 * 500 + 500 + 500 * 10 + 10;

/// Forward multiply-adds per example of the layers with weights: conv1 24·24 positions × 20
/// filters × 25 taps, conv2 8·8 × 50 × (20·25), dense 800·500, output 500·10. Training FLOPs per
/// example are counted as 6 × this (forward 2 per multiply-add; backward 4: the weight gradient
/// and the input gradient), the convention of the MLP's 6 × parameters. Pooling, bias,
/// activations, loss and the updater are not counted; conv1's input gradient (which an engine
/// need not compute) is counted, as the MLP's first-layer input gradient is.
pub const FORWARD_MULADDS: usize = 24 * 24 * 20 * 25 + 8 * 8 * 50 * 20 * 25 + 800 * 500 + 500 * 10;

pub fn new_network() -> MultiLayerNetwork<f32> {
    let conf = MultiLayerConfiguration::from_json(LENET_JSON).expect("LeNet configuration");
    MultiLayerNetwork::<f32>::from_configuration(conf).expect("LeNet network")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenet_has_the_expected_parameter_count_and_trains() {
        let mut net = new_network();
        assert_eq!(net.num_params(), PARAMS);
        assert_eq!(PARAMS, 431_080);
        assert_eq!(FORWARD_MULADDS, 2_293_000);
        let data = crate::mlp::batches(16, 1, 3);
        let (x, y) = &data[0];
        let first = net.fit(x, y, 16, None).unwrap();
        let mut last = first;
        for _ in 0..30 {
            last = net.fit(x, y, 16, None).unwrap();
        }
        // 30 Adam steps on one memorised batch of 16: the score must fall clearly
        assert!(last < 0.5 * first, "score {first} -> {last}");
    }
}
