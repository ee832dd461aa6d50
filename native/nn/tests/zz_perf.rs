// Temporary timing (not committed): MLP 784-500-100-10, Adam, batch 64, fit loop.
use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork};
use std::time::Instant;

#[test]
fn perf() {
    let json = r#"{"formatVersion":1,"seed":1,"layers":[
      {"type":"DenseLayer","nIn":784,"nOut":500,"activation":"RELU","updater":{"type":"Adam"}},
      {"type":"DenseLayer","nIn":500,"nOut":100,"activation":"RELU","updater":{"type":"Adam"}},
      {"type":"OutputLayer","nIn":100,"nOut":10,"activation":"SOFTMAX","updater":{"type":"Adam"}}]}"#;
    let mut net =
        MultiLayerNetwork::new(MultiLayerConfiguration::from_json(json).unwrap()).unwrap();
    let rows = 64;
    let x: Vec<f32> = (0..rows * 784)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect();
    let mut y = vec![0f32; rows * 10];
    for r in 0..rows {
        y[r * 10 + r % 10] = 1.0;
    }
    for _ in 0..200 {
        net.fit(&x, &y, rows, None).unwrap();
    }
    let mut best = f64::MAX;
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..300 {
            net.fit(&x, &y, rows, None).unwrap();
        }
        best = best.min(t.elapsed().as_secs_f64() / 300.0);
    }
    println!(
        "PERF us/step {:.1}  ex/s {:.0}",
        best * 1e6,
        rows as f64 / best
    );
}
