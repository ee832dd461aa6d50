//! Networks trained at once in threads of one process (Spark's local[N] executors, the
//! in-process gradient-sharing workers) compute exactly what each computes alone: the GEMM
//! pools, AMX tile buffers and updater passes are per calling thread.

mod common;

use common::*;
use ferrodl_nn::MultiLayerNetwork;
use ferrodl_testutil::{normal_matrix, to_f32, Rng};
use serde_json::json;

const STEPS: usize = 40;
const ROWS: usize = 64;

/// 784-256-64-10 with Adam: GEMMs large enough to run on the pool, an updater pass over 218k
/// parameters.
fn train(seed: u64) -> Vec<f32> {
    let layers = with_updater(
        vec![dense(784, 256, "RELU"), dense(256, 64, "TANH"), output(64, 10, "SOFTMAX", "MCXENT")],
        json!({"type": "Adam", "learningRate": 1e-3}),
    );
    let mut net = MultiLayerNetwork::new(conf(5, layers)).unwrap();
    let mut rng = Rng::new(seed);
    let x = to_f32(&normal_matrix(&mut rng, ROWS, 784));
    let mut y = vec![0.0f32; ROWS * 10];
    for r in 0..ROWS {
        y[r * 10 + (r * 7 + seed as usize) % 10] = 1.0;
    }
    for _ in 0..STEPS {
        net.fit(&x, &y, ROWS, None).unwrap();
    }
    net.params().to_vec()
}

#[test]
fn networks_trained_at_once_in_threads_equal_each_trained_alone() {
    let alone: Vec<Vec<f32>> = (0..3).map(train).collect();
    for round in 0..2 {
        let together: Vec<Vec<f32>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3u64).map(|k| s.spawn(move || train(k))).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (k, (a, b)) in alone.iter().zip(&together).enumerate() {
            let differ = a.iter().zip(b).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
            assert_eq!(differ, 0, "round {round}, network {k}: {differ} of {} parameters differ", a.len());
        }
    }
}
