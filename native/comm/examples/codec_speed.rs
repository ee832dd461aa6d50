//! Encode/decode speed of the update codec on a vector of the MNIST example's MLP
//! (443,610 parameters) at several sparsities, Rice against bitmap.
//!
//! `cargo run --release -p ferrodl-comm --example codec_speed [param_count] [repeats]`
//!
//! Each measurement is the median of `repeats` runs (default 200) of: copy the residual, encode
//! it (count + write + subtract, as the worker does), then decode-add it into a zero vector (as
//! the driver and every other worker do). Rice and bitmap runs are interleaved so that load from
//! other processes affects both alike.

use ferrodl_comm::{decode_add, encode_as, Encoding};
use std::time::Instant;

mod common;
use common::{median, XorShift};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .map_or(443_610, |a| a.parse().expect("param_count"));
    let repeats: usize = args.get(2).map_or(200, |a| a.parse().expect("repeats"));
    let t = 1e-3f32;
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    println!("param_count {n}, threshold {t}, median of {repeats} runs (µs)");
    println!("| sparsity | kind | bytes | bits/entry | encode µs | decode µs |");
    println!("|---|---|---|---|---|---|");
    for s in [1e-3, 2e-3, 1e-2, 0.1, 0.5] {
        // Entries qualify with probability s; the rest lie uniformly below t.
        let residual: Vec<f32> = (0..n)
            .map(|_| {
                let sign = if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
                let m = if rng.unit_f64() < s {
                    t * (1.0 + rng.unit_f64() as f32)
                } else {
                    t * 0.999 * rng.unit_f64() as f32
                };
                sign * m
            })
            .collect();
        let mut times = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
        let mut sizes = [(0usize, 0u64); 2];
        let mut out = Vec::new();
        let mut r = residual.clone();
        let mut target = vec![0.0f32; n];
        for _ in 0..repeats {
            for (i, kind) in [Encoding::Rice, Encoding::Bitmap].into_iter().enumerate() {
                r.copy_from_slice(&residual);
                let t0 = Instant::now();
                let stats = encode_as(&mut r, t, kind, &mut out).unwrap();
                let t1 = Instant::now();
                decode_add(&out, -1.0, &mut target).unwrap();
                let t2 = Instant::now();
                times[i].0.push((t1 - t0).as_secs_f64() * 1e6);
                times[i].1.push((t2 - t1).as_secs_f64() * 1e6);
                sizes[i] = (stats.bytes, stats.entries);
            }
        }
        for (i, kind) in ["rice", "bitmap"].into_iter().enumerate() {
            let (bytes, entries) = sizes[i];
            println!(
                "| {s} | {kind} | {bytes} | {:.2} | {:.0} | {:.0} |",
                8.0 * (bytes - 32) as f64 / entries as f64,
                median(&mut times[i].0),
                median(&mut times[i].1)
            );
        }
    }
    println!();
    println!("| encoder step (encode_update), target sparsity | bytes | µs |");
    println!("|---|---|---|");
    for s in [1e-3, 1e-2] {
        let (us, bytes) = encoder_step_micros(n, repeats, s);
        println!("| {s} | {bytes} | {us:.0} |");
    }
}

/// One worker step of the encoder as gradient sharing runs it (`ThresholdEncoder::encode_update`:
/// residual + update, count, encode, subtract; fixed threshold, no post-processing), µs, median.
/// Printed after the table by `main` (second line of output per sparsity target).
pub fn encoder_step_micros(n: usize, repeats: usize, sparsity: f64) -> (f64, usize) {
    use ferrodl_comm::ThresholdEncoder;
    let t = 1e-3f32;
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    // Updates of about t/8 with a `sparsity` share of larger ones, so that the residual sends
    // about that share per step.
    let updates: Vec<Vec<f32>> = (0..8)
        .map(|_| {
            (0..n)
                .map(|_| {
                    let sign = if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
                    let m = if rng.unit_f64() < sparsity { t * 1.5 } else { t * 0.125 * rng.unit_f64() as f32 };
                    sign * m
                })
                .collect()
        })
        .collect();
    let mut enc = ThresholdEncoder::from_json(
        n,
        &serde_json::json!({"type": "fixed", "threshold": t}),
        &serde_json::json!({"type": "noop"}),
        None,
    )
    .expect("encoder");
    let mut out = Vec::new();
    let mut times = Vec::with_capacity(repeats);
    let mut bytes = 0;
    for i in 0..repeats {
        let t0 = Instant::now();
        let s = enc.encode_update(&updates[i % 8], i as u64, 0, &mut out).expect("encode");
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        bytes = s.bytes;
    }
    (median(&mut times), bytes)
}
