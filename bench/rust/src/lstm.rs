//! The character model of the JVM bench's LSTM rows (issue 12 item 8) trained through the Rust
//! engine API, so that the recurrent layers can be timed and profiled without a JVM: 2 ×
//! `GravesLSTM` (or `LSTM`) of 200 units, `RnnOutputLayer` softmax + MCXENT over 77 one-hot
//! characters, RmsProp 0.1 / 0.95 / 1e-8, l2 0.001, Xavier, truncated BPTT 50, minibatch 32.
//! Same configuration as `FerrodlBench.charModel`; the text is synthetic (each character the
//! previous plus 1–3 modulo 77, like `CharData`, not bit for bit).

use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork};
use ferrodl_tensor::Rng;
use std::time::Instant;

pub const VOCAB: usize = 77;
pub const HIDDEN: usize = 200;
pub const BATCH: usize = 32;

fn config(kind: &str) -> String {
    let rec = |n_in: usize| {
        format!(r#"{{"type":"{kind}","nIn":{n_in},"nOut":{HIDDEN},"activation":"TANH","weightInit":"XAVIER","l2":0.001,"updater":{{"type":"RmsProp","learningRate":0.1,"rmsDecay":0.95,"epsilon":1e-8}},"biasUpdater":{{"type":"RmsProp","learningRate":0.1,"rmsDecay":0.95,"epsilon":1e-8}}}}"#)
    };
    format!(
        r#"{{"formatVersion":1,"seed":12345,"miniBatch":true,"backpropType":"TruncatedBPTT","tbpttFwdLength":50,"tbpttBackLength":50,"inputType":{{"type":"recurrent","size":{VOCAB},"timeSeriesLength":0}},"layers":[{},{},{{"type":"RnnOutputLayer","nIn":{HIDDEN},"nOut":{VOCAB},"activation":"SOFTMAX","lossFunction":"MCXENT","weightInit":"XAVIER","l2":0.001,"updater":{{"type":"RmsProp","learningRate":0.1,"rmsDecay":0.95,"epsilon":1e-8}},"biasUpdater":{{"type":"RmsProp","learningRate":0.1,"rmsDecay":0.95,"epsilon":1e-8}}}}]}}"#,
        rec(VOCAB),
        rec(HIDDEN)
    )
}

/// `count` minibatches `[BATCH, VOCAB, seq]` (NCW) of one-hot characters and their successors.
fn batches(seq: usize, count: usize) -> Vec<(Vec<f32>, Vec<f32>)> {
    let mut rng = Rng::new(12345);
    (0..count)
        .map(|_| {
            let mut x = vec![0.0f32; BATCH * VOCAB * seq];
            let mut y = vec![0.0f32; BATCH * VOCAB * seq];
            for i in 0..BATCH {
                let mut c = rng.below(VOCAB as u64) as usize;
                for s in 0..seq {
                    x[i * VOCAB * seq + c * seq + s] = 1.0;
                    c = (c + 1 + rng.below(3) as usize) % VOCAB;
                    y[i * VOCAB * seq + c * seq + s] = 1.0;
                }
            }
            (x, y)
        })
        .collect()
}

/// On-CPU nanoseconds of every thread of this process so far (`/proc/self/task/*/schedstat`):
/// with 2 threads, the work of both (the GEMM helpers' polling included).
fn process_cpu_ns() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| {
                let p = e.ok()?.path().join("schedstat");
                std::fs::read_to_string(p).ok()?.split_whitespace().next()?.parse::<u64>().ok()
            })
            .sum()
        })
        .unwrap_or(0)
}

/// `lstm KIND [SEQ] [FITS]`: one untimed fit, then `FITS` timed fits of `BATCH × SEQ`
/// characters; prints per fit the wall-clock characters/s, the main thread's on-CPU ms and all
/// threads' on-CPU ms, then the medians.
pub fn run(kind: &str, seq: usize, fits: usize, thread_cpu_ns: fn() -> u64) {
    let kind = match kind {
        "graves" => "GravesLSTM",
        "lstm" => "LSTM",
        other => panic!("lstm: KIND is graves or lstm, not {other}"),
    };
    let conf = MultiLayerConfiguration::from_json(&config(kind)).expect("char model configuration");
    let mut net = MultiLayerNetwork::<f32>::from_configuration(conf).expect("char model");
    let data = batches(seq, 4);
    let chars = (BATCH * seq) as f64;
    let (x, y) = &data[0];
    net.fit(x, y, BATCH, None).expect("fit");
    let mut rows = Vec::new();
    for i in 0..fits {
        let (x, y) = &data[(i + 1) % data.len()];
        let (w, c, p) = (Instant::now(), thread_cpu_ns(), process_cpu_ns());
        let score = net.fit(x, y, BATCH, None).expect("fit");
        let wall = w.elapsed().as_secs_f64();
        let (c, p) = ((thread_cpu_ns() - c) as f64 / 1e6, (process_cpu_ns() - p) as f64 / 1e6);
        println!(
            "{kind} seq {seq} threads={}: {:.0} chars/s, main thread {c:.1} ms on-CPU, all threads {p:.1} ms (score {score:.4})",
            ferrodl_tensor::num_threads(),
            chars / wall
        );
        rows.push((chars / wall, c, p));
    }
    let sorted = |f: fn(&(f64, f64, f64)) -> f64| {
        let mut v: Vec<f64> = rows.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let median = |f: fn(&(f64, f64, f64)) -> f64| sorted(f)[rows.len() / 2];
    // FNV-1a over the parameters' bits: equal hashes = the same training, bit for bit
    let hash = net.params().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, v| (h ^ v.to_bits() as u64).wrapping_mul(0x100_0000_01b3));
    println!(
        "median: {:.0} chars/s (best {:.0}), main thread {:.1} ms (least {:.1}), all threads {:.1} ms per fit ({} chars); params hash {hash:016x}",
        median(|r| r.0),
        sorted(|r| r.0)[rows.len() - 1],
        median(|r| r.1),
        sorted(|r| r.1)[0],
        median(|r| r.2),
        chars
    );
}

/// `lstm-gemms [REPS]`: on-CPU µs of each matrix product of one truncated-BPTT segment of the
/// character model (batch 32, 50 steps, GravesLSTM's shapes without the peephole columns), on
/// this thread, best of `REPS`, for the kernel in force (`FERRODL_GEMM`, `FERRODL_THREADS=1`
/// for one thread's work).
pub fn gemms(reps: usize, thread_cpu_ns: fn() -> u64) {
    use ferrodl_tensor::{gemm, Op};
    let (n, t, h, c) = (BATCH, 50, HIDDEN, VOCAB);
    let (g4, tn) = (4 * h, t * n);
    let cases: [(&str, Op, Op, usize, usize, usize, usize); 13] = [
        ("x·W layer 1", Op::N, Op::N, tn, g4, c, 1),
        ("x·W layer 2", Op::N, Op::N, tn, g4, h, 1),
        ("h·RW per step (x100)", Op::N, Op::N, n, g4, h, 100),
        ("h·RW 16 rows (x100)", Op::N, Op::N, n / 2, g4, h, 100),
        ("dz·RWᵀ per step, Op::T (x100)", Op::N, Op::T, n, h, g4, 100),
        ("dz·RWᵀ per step, RWᵀ stored (x100)", Op::N, Op::N, n, h, g4, 100),
        ("dRW = hᵀ·dz", Op::T, Op::N, h, g4, tn, 1),
        ("dW layer 1 = xᵀ·dz", Op::T, Op::N, c, g4, tn, 1),
        ("dW layer 2", Op::T, Op::N, h, g4, tn, 1),
        ("dx layer 2 = dz·Wᵀ", Op::N, Op::T, tn, h, g4, 1),
        ("output x·W", Op::N, Op::N, tn, c, h, 1),
        ("output dW", Op::T, Op::N, h, c, tn, 1),
        ("output dx", Op::N, Op::T, tn, h, c, 1),
    ];
    let mut rng = Rng::new(3);
    let mut total = 0.0;
    for (name, oa, ob, m, nn, k, count) in cases {
        let mut a = vec![0.0f32; m * k];
        let mut b = vec![0.0f32; k * nn];
        rng.fill_uniform(&mut a, -1.0, 1.0);
        rng.fill_uniform(&mut b, -1.0, 1.0);
        let mut cm = vec![0.0f32; m * nn];
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            let c0 = thread_cpu_ns();
            for _ in 0..count {
                gemm(oa, ob, m, nn, k, 1.0, &a, &b, 1.0, &mut cm);
            }
            best = best.min((thread_cpu_ns() - c0) as f64 / 1e3 / count as f64);
        }
        let gflops = 2.0 * (m * nn * k) as f64 / best / 1e3;
        println!("{name:38} {m:5}x{nn:4}x{k:5}: {best:8.1} µs ({gflops:5.1} GFLOP/s)");
        total += best;
    }
    println!("(sum of one each: {total:.0} µs)");
}
