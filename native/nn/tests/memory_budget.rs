//! Native memory: networks and minibatches that need more memory than the budget are refused
//! before anything is allocated, with a message naming what, how many bytes and the budget; the
//! same work passes under a larger budget. One test (the budget is process-wide), with the
//! counting allocator the JNI library installs.

use ferrodl_nn::config::ComputationGraphConfiguration;
use ferrodl_nn::{ComputationGraph, MultiLayerConfiguration, MultiLayerNetwork, NnError};
use ferrodl_tensor::memory::{self, CountingAllocator};
use serde_json::json;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

fn mlp(n_in: u64, n_hidden: u64, updater: &str) -> Result<MultiLayerNetwork, NnError> {
    let conf = json!({"formatVersion": 1, "seed": 1, "layers": [
        {"type": "DenseLayer", "nIn": n_in, "nOut": n_hidden, "updater": {"type": updater}},
        {"type": "OutputLayer", "nIn": n_hidden, "nOut": 2, "activation": "SOFTMAX"}]});
    MultiLayerNetwork::new(MultiLayerConfiguration::from_json(&conf.to_string())?)
}

fn memory_error(r: Result<impl std::fmt::Debug, NnError>) -> String {
    match r {
        Err(NnError::Memory(e)) => e.to_string(),
        other => panic!("expected a memory error, got {other:?}"),
    }
}

#[test]
fn oversized_networks_and_minibatches_are_refused_and_fit_under_a_larger_budget() {
    memory::set_budget(8 << 30);
    // 2^20 x 2^20 weights: 2^40 parameters, 8 TiB with gradients.
    let m = memory_error(mlp(1 << 20, 1 << 20, "Sgd"));
    assert!(
        m.starts_with("the network's 1,099,514,773,506 parameters (the largest block: layer 0 (DenseLayer), 1,099,512,676,352 parameters), their gradients and updater state needs 8,796,118,188,048 bytes of native memory, but the native memory budget is 8,589,934,592 bytes"),
        "{m}"
    );
    // 2^16 x 2^16 with Adam on the weights (two state vectors; biases keep the default Sgd):
    // parameters and gradients plus 2 x 2^32 state values, 64 GiB of f32.
    let m = memory_error(mlp(1 << 16, 1 << 16, "Adam"));
    let params: u64 = (1 << 32) + (1 << 16) + (1 << 17) + 2;
    let bytes = 4 * (2 * params + 2 * (1 << 32));
    assert!(
        m.contains(&format!("needs {} bytes", memory::grouped(bytes))),
        "{m}"
    );
    // Sizes that overflow 64 bits are refused as such (no wrap-around).
    let m = memory_error(mlp(1 << 40, 1 << 40, "Sgd"));
    assert!(m.contains("needs more than 2^64 bytes"), "{m}");

    // A minibatch whose activations exceed the budget: refused, then fits under a larger one.
    let before = memory::in_use();
    let mut net = mlp(1, 1000, "Sgd").unwrap();
    assert!(
        memory::in_use() > before,
        "the counting allocator sees the network"
    );
    let rows = 20_000;
    let x = vec![0.5f32; rows];
    let mut y = vec![0f32; rows * 2];
    y.iter_mut().step_by(2).for_each(|v| *v = 1.0);
    memory::set_budget(memory::in_use() + (16 << 20));
    let m = memory_error(net.fit(&x, &y, rows, None));
    assert!(
        m.starts_with("the activations of layer 0 (DenseLayer) for a minibatch of 20000 examples needs 80,000,000 bytes"),
        "{m}"
    );
    // Nothing changed: the same network trains once the budget allows it.
    memory::set_budget(memory::in_use() + (512 << 20));
    let score = net.fit(&x, &y, rows, None).unwrap();
    assert!(score.is_finite());
    assert!(memory::peak() >= memory::in_use());

    // Graphs go through the same executor.
    memory::set_budget(1 << 30);
    let g = json!({"formatVersion": 1, "seed": 1, "networkInputs": ["in"], "networkOutputs": ["out"],
        "vertices": [
            {"name": "wide", "inputs": ["in"], "vertex": {"type": "LayerVertex", "layer":
                {"type": "DenseLayer", "nIn": 100_000, "nOut": 10_000}}},
            {"name": "out", "inputs": ["wide"], "vertex": {"type": "LayerVertex", "layer":
                {"type": "OutputLayer", "nIn": 10_000, "nOut": 2}}}]});
    let conf = ComputationGraphConfiguration::from_json(&g.to_string()).unwrap();
    let m = memory_error(ComputationGraph::new(conf));
    assert!(
        m.contains("(the largest block: vertex \"wide\" (DenseLayer), 1,000,010,000 parameters)"),
        "{m}"
    );
    memory::set_budget(0);
}
