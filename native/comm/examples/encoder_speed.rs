//! One worker's encode step (`ThresholdEncoder::encode_update`: residual + update, threshold,
//! message, clipping) on the MNIST MLP's 443,610 parameters: the one-pass encode against the
//! two-pass one it replaced, interleaved, on the same updates; also checks their bytes agree.
//!
//! `cargo run --release -p ferrodl-comm --example encoder_speed [param_count] [steps]`
//!
//! The updates are Adam-like (most entries well below the threshold, scales spread over two
//! decades); before each encode the update is written into the buffer the encoder reads, as the
//! updater does just before the encode. Default Adaptive threshold and clipping (every 5 steps).

use ferrodl_comm::{ResidualPostProcessorConfig, ThresholdAlgorithmConfig, ThresholdEncoder};
use std::time::Instant;

mod common;
use common::{median, XorShift};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .map_or(443_610, |a| a.parse().expect("param_count"));
    let steps: usize = args.get(2).map_or(400, |a| a.parse().expect("steps"));
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    // Per-entry scale (fixed, as Adam's per-parameter step sizes are) and 8 update patterns.
    let scale: Vec<f32> = (0..n).map(|_| 1e-5 * 100f32.powf(rng.unit_f32())).collect();
    let updates: Vec<Vec<f32>> = (0..8)
        .map(|_| {
            scale
                .iter()
                .map(|&s| s * (2.0 * rng.unit_f32() - 1.0) + 0.3 * s)
                .collect()
        })
        .collect();
    let make = || {
        ThresholdEncoder::new(
            n,
            ThresholdAlgorithmConfig::default(),
            ResidualPostProcessorConfig::default(),
            None,
        )
        .unwrap()
    };
    let (mut one, mut two) = (make(), make());
    let (mut out1, mut out2) = (Vec::new(), Vec::new());
    let mut update = vec![0.0f32; n];
    let (mut t1, mut t2) = (Vec::new(), Vec::new());
    let mut bytes = 0usize;
    let mut entries = 0u64;
    for step in 0..steps {
        let it = step as u64;
        for first in [step % 2 == 0, step % 2 != 0] {
            update.copy_from_slice(&updates[step % updates.len()]);
            let t0 = Instant::now();
            if first {
                one.encode_update(&update, it, 0, &mut out1).unwrap();
                t1.push(t0.elapsed().as_secs_f64() * 1e6);
            } else {
                let s = two
                    .encode_update_two_pass(&update, it, 0, &mut out2)
                    .unwrap();
                t2.push(t0.elapsed().as_secs_f64() * 1e6);
                bytes = s.bytes;
                entries = s.entries;
            }
        }
        assert_eq!(out1, out2, "step {step}: the two encodes differ");
    }
    assert_eq!(one.residual(), two.residual());
    // The first steps calibrate and settle; time the rest.
    let skip = steps / 4;
    println!(
        "param_count {n}, {} timed steps, last message {bytes} bytes ({entries} entries), threshold {:e}",
        steps - skip,
        one.current_threshold()
    );
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (m1, m2) = (mean(&t1[skip..]), mean(&t2[skip..]));
    println!(
        "encode_update µs: one pass median {:.0} mean {m1:.0}; two passes median {:.0} mean {m2:.0}",
        median(&mut t1[skip..]),
        median(&mut t2[skip..])
    );
    // Clipping steps (every 5th iteration) alone.
    let clip = |v: &[f64]| {
        let mut c: Vec<f64> = v
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 5 == 0)
            .map(|(_, &x)| x)
            .collect();
        median(&mut c)
    };
    println!(
        "clipping steps µs, median: one pass {:.0}, two passes {:.0}",
        clip(&t1),
        clip(&t2)
    );
    // For scale: one plain pass s = r + u over the same buffers.
    let (r, mut s) = (one.residual().to_vec(), vec![0.0f32; n]);
    let mut tp = Vec::new();
    for step in 0..50 {
        update.copy_from_slice(&updates[step % updates.len()]);
        let t0 = Instant::now();
        for ((s, &r), &u) in s.iter_mut().zip(&r).zip(&update) {
            *s = r + u;
        }
        tp.push(t0.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(&s);
    }
    println!("plain s = r + u pass µs, median {:.0}", median(&mut tp));
}
