//! The 784-500-100-10 MLP trained through the public engine API (`MultiLayerNetwork::fit`).

use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork};
use ferrodl_tensor::Rng;
use std::time::Instant;

/// The benchmark network: ReLU hidden layers, softmax + MCXENT output, Adam lr 1e-3.
pub const MLP_JSON: &str = r#"{"formatVersion":1,"seed":42,"layers":[{"type":"DenseLayer","nIn":784,"nOut":500,"activation":"RELU","weightInit":"RELU","updater":{"type":"Adam","learningRate":0.001}},{"type":"DenseLayer","nIn":500,"nOut":100,"activation":"RELU","weightInit":"RELU","updater":{"type":"Adam","learningRate":0.001}},{"type":"OutputLayer","nIn":100,"nOut":10,"activation":"SOFTMAX","lossFunction":"MCXENT","updater":{"type":"Adam","learningRate":0.001}}]}"#;

pub const N_IN: usize = 784;
pub const N_OUT: usize = 10;
/// Examples in the random training set cycled through. Large enough that the network cannot
/// memorise it during a run: on a few memorised batches the gradients vanish, Adam's state
/// decays into subnormal floats and every step slows down several times (measured by
/// `subnormal`, see docs/BENCHMARKS.md), which would measure that pathology, not throughput.
pub const POOL_EXAMPLES: usize = 32 * 1024;

/// Random features in [0, 1) and random one-hot labels, `POOL_EXAMPLES / batch` minibatches of
/// `batch` rows.
pub fn random_batches(batch: usize, seed: u64) -> Vec<(Vec<f32>, Vec<f32>)> {
    batches(batch, (POOL_EXAMPLES / batch).max(1), seed)
}

/// `count` minibatches of random features in [0, 1) and random one-hot labels.
pub fn batches(batch: usize, count: usize, seed: u64) -> Vec<(Vec<f32>, Vec<f32>)> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|_| {
            let mut x = vec![0.0f32; batch * N_IN];
            rng.fill_uniform(&mut x, 0.0, 1.0);
            let mut y = vec![0.0f32; batch * N_OUT];
            for r in 0..batch {
                y[r * N_OUT + rng.below(N_OUT as u64) as usize] = 1.0;
            }
            (x, y)
        })
        .collect()
}

pub fn new_network() -> MultiLayerNetwork<f32> {
    let conf = MultiLayerConfiguration::from_json(MLP_JSON).expect("benchmark configuration");
    MultiLayerNetwork::<f32>::from_configuration(conf).expect("benchmark network")
}

/// Total parameters of the benchmark network (784·500+500 + 500·100+100 + 100·10+10).
pub const PARAMS: usize = 784 * 500 + 500 + 500 * 100 + 100 + 100 * 10 + 10;

/// A network trained step by step on a pool of random minibatches (the MLP or the LeNet CNN:
/// both take 784 input columns and 10 one-hot label columns).
pub struct Trainer {
    batch: usize,
    net: MultiLayerNetwork<f32>,
    data: Vec<(Vec<f32>, Vec<f32>)>,
    next: usize,
}

impl Trainer {
    pub fn new(batch: usize) -> Self {
        let net = new_network();
        assert_eq!(net.num_params(), PARAMS);
        Self::with_network(batch, net)
    }

    pub fn with_network(batch: usize, net: MultiLayerNetwork<f32>) -> Self {
        let mut t = Trainer {
            batch,
            net,
            data: random_batches(batch, 7),
            next: 0,
        };
        for _ in 0..10 {
            t.step(); // warm-up: buffers sized, helper threads started
        }
        t
    }

    pub fn step(&mut self) -> f64 {
        let (x, y) = &self.data[self.next % self.data.len()];
        self.next += 1;
        self.net.fit(x, y, self.batch, None).expect("fit")
    }

    /// Trains for at least `secs` seconds (whole steps); examples per second.
    pub fn examples_per_sec(&mut self, secs: f64) -> f64 {
        let start = Instant::now();
        let mut steps = 0usize;
        let mut score = 0.0;
        while steps < 3 || start.elapsed().as_secs_f64() < secs {
            score = self.step();
            steps += 1;
        }
        let t = start.elapsed().as_secs_f64();
        assert!(score.is_finite(), "training diverged");
        (steps * self.batch) as f64 / t
    }
}

impl Trainer {
    /// Share of the updater state that is subnormal (see `subnormal.rs`).
    pub fn subnormal_share(&self) -> f64 {
        let st = self.net.updater_state();
        st.iter().filter(|v| v.is_subnormal()).count() as f64 / st.len().max(1) as f64
    }

    pub fn steps(&self) -> usize {
        self.next
    }
}

/// One trainer per batch size, built on first use (by `build`: `Trainer::new` for the MLP).
pub struct Trainers(Vec<Trainer>, fn(usize) -> Trainer);

impl Default for Trainers {
    fn default() -> Self {
        Trainers(Vec::new(), Trainer::new)
    }
}

impl Trainers {
    /// Trainers of another network: `build(batch)` makes one.
    pub fn with_builder(build: fn(usize) -> Trainer) -> Self {
        Trainers(Vec::new(), build)
    }

    pub fn get(&mut self, batch: usize) -> &mut Trainer {
        match self.0.iter().position(|t| t.batch == batch) {
            Some(i) => &mut self.0[i],
            None => {
                self.0.push((self.1)(batch));
                self.0.last_mut().unwrap()
            }
        }
    }
}
