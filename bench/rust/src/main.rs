//! ferrodl single-node benchmark driver.
//!
//! `serve` reads one command per line on stdin and answers one JSON object per line on stdout;
//! `bench/python/run_bench.py` drives it so that ferrodl and the Python peers are measured
//! interleaved in one run. The other subcommands are for development (threshold choice, the
//! matrixmultiply-threading comparison, the engine pool against rayon, the step profile) and print
//! human-readable tables.
//!
//! Commands of `serve`:
//! * `threads N` — `ferrodl_tensor::set_num_threads(N)` (0: default); answers the count in force.
//! * `gemm N SECS` — FP32 `N³` products through `ferrodl_tensor::gemm` for at least SECS
//!   seconds (after one warm-up product); answers GFLOP/s of that batch.
//! * `mlp BATCH SECS` — `MultiLayerNetwork::fit` steps on the 784-500-100-10 MLP for at least
//!   SECS seconds (the network is built and warmed up on first use of a batch size); answers
//!   examples/s, the steps taken so far and the subnormal share of the updater state.
//! * `cnn BATCH SECS` — the same for the LeNet-style CNN of `lenet.rs`.
//! * `kernel` — which GEMM kernel `ferrodl_tensor::gemm` runs (`active_gemm_kernel()`, detected
//!   by this process at run time, `FERRODL_GEMM=fma|amx|auto`) and the vector width of the
//!   elementwise loops (`vector_isa()`, `FERRODL_SIMD`).
//! * `profile BATCH STEPS FTZ` — the step decomposed into phases (see `profile.rs`), with FTZ/DAZ
//!   if FTZ is 1 (as the engine's `fit` does); answers seconds per step for each phase, and the
//!   same step through `fit`.
//! * `subnormal STEPS WINDOW` — regression check for the subnormal-state slowdown
//!   (see `subnormal.rs`).

mod lenet;
mod lstm;
mod mlp;
mod pool_vs_rayon;
mod profile;
mod subnormal;

use std::io::{BufRead, Write};
use std::time::Instant;

use ferrodl_tensor::{gemm, Op, Rng};

/// FP32 `n³` operands (uniform in [-1, 1)).
pub struct GemmCase {
    n: usize,
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

impl GemmCase {
    pub fn new(n: usize) -> Self {
        let mut rng = Rng::new(n as u64);
        let mut a = vec![0.0f32; n * n];
        let mut b = vec![0.0f32; n * n];
        rng.fill_uniform(&mut a, -1.0, 1.0);
        rng.fill_uniform(&mut b, -1.0, 1.0);
        GemmCase {
            n,
            a,
            b,
            c: vec![0.0; n * n],
        }
    }

    fn once(&mut self) {
        let n = self.n;
        gemm(
            Op::N,
            Op::N,
            n,
            n,
            n,
            1.0,
            &self.a,
            &self.b,
            0.0,
            &mut self.c,
        );
    }

    /// GFLOP/s over a batch of products lasting at least `secs` (at least 2 products).
    pub fn gflops(&mut self, secs: f64) -> f64 {
        self.once(); // warm-up: pool threads, packing buffers, caches
        let start = Instant::now();
        let mut reps = 0u64;
        while reps < 2 || start.elapsed().as_secs_f64() < secs {
            self.once();
            reps += 1;
        }
        let t = start.elapsed().as_secs_f64();
        2.0 * (self.n as f64).powi(3) * reps as f64 / t / 1e9
    }
}

/// A JSON string literal of `s`.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The GEMM kernel in use, as the engine reports it: detected at run time by this process (the
/// CPU's AMX/AVX-512 support, `FERRODL_GEMM`), never decided when the bench was built.
fn gemm_kernel() -> String {
    ferrodl_tensor::active_gemm_kernel().to_string()
}

fn serve() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut gemms: Vec<GemmCase> = Vec::new();
    let mut mlps = mlp::Trainers::default();
    let mut cnns =
        mlp::Trainers::with_builder(|b| mlp::Trainer::with_network(b, lenet::new_network()));
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let w: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| -> f64 {
            w.get(i)
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("bad command: {line}"))
        };
        let reply = match w.first().copied() {
            None => continue,
            Some("quit") => break,
            Some("threads") => {
                ferrodl_tensor::set_num_threads(num(1) as usize);
                format!("{{\"threads\":{}}}", ferrodl_tensor::num_threads())
            }
            Some("gemm") => {
                let n = num(1) as usize;
                let case = match gemms.iter().position(|g| g.n == n) {
                    Some(i) => &mut gemms[i],
                    None => {
                        gemms.push(GemmCase::new(n));
                        gemms.last_mut().unwrap()
                    }
                };
                format!("{{\"gflops\":{}}}", case.gflops(num(2)))
            }
            Some("mlp") => {
                let t = mlps.get(num(1) as usize);
                let eps = t.examples_per_sec(num(2));
                format!(
                    "{{\"examples_per_sec\":{eps},\"steps\":{},\"subnormal\":{}}}",
                    t.steps(),
                    t.subnormal_share()
                )
            }
            Some("cnn") => {
                let t = cnns.get(num(1) as usize);
                let eps = t.examples_per_sec(num(2));
                format!(
                    "{{\"examples_per_sec\":{eps},\"steps\":{},\"subnormal\":{},\"params\":{},\"forward_muladds\":{}}}",
                    t.steps(),
                    t.subnormal_share(),
                    lenet::PARAMS,
                    lenet::FORWARD_MULADDS
                )
            }
            Some("kernel") => format!(
                "{{\"kernel\":{},\"simd\":{}}}",
                json_string(&gemm_kernel()),
                json_string(ferrodl_tensor::vector_isa().name())
            ),
            Some("profile") => {
                // PROFILE BATCH STEPS FTZ: FTZ=1 profiles with flush-to-zero on this thread, so
                // the breakdown does not depend on how far Adam's state has decayed
                let guard = (num(3) != 0.0).then(ferrodl_tensor::flush_denormals);
                let p = profile::run(num(1) as usize, num(2) as usize, profile::wall_clock);
                drop(guard);
                p.to_json()
            }
            Some("subnormal") => subnormal::run(num(1) as usize, num(2) as usize).to_json(),
            Some(other) => panic!("unknown command {other}"),
        };
        writeln!(out, "{reply}").expect("stdout");
        out.flush().expect("stdout");
    }
}

/// Development table: seconds per product on 1 and 2 threads for the MLP's shapes and a range
/// of squares, to choose `MIN_MULADDS_PER_THREAD`.
fn gemm_threshold() {
    let mut shapes: Vec<(&str, Op, Op, usize, usize, usize)> = Vec::new();
    for &b in &[16usize, 32, 64, 128, 256] {
        shapes.push(("fwd x·W1", Op::N, Op::N, b, 500, 784));
        shapes.push(("bwd xᵀ·dz1", Op::T, Op::N, 784, 500, b));
        shapes.push(("fwd a1·W2", Op::N, Op::N, b, 100, 500));
        shapes.push(("bwd a1ᵀ·dz2", Op::T, Op::N, 500, 100, b));
        shapes.push(("bwd dz2·W2ᵀ", Op::N, Op::T, b, 500, 100));
        shapes.push(("fwd a2·W3", Op::N, Op::N, b, 10, 100));
    }
    for &s in &[32usize, 48, 64, 96, 128, 192, 256, 512] {
        shapes.push(("square", Op::N, Op::N, s, s, s));
    }
    println!(
        "{:<14} {:>5} {:>5} {:>5} {:>10} {:>10} {:>10} {:>7}",
        "shape", "m", "n", "k", "m·n·k", "1 thr µs", "2 thr µs", "speedup"
    );
    let mut rng = Rng::new(3);
    for (name, oa, ob, m, n, k) in shapes {
        let mut a = vec![0.0f32; m * k];
        let mut b = vec![0.0f32; k * n];
        rng.fill_uniform(&mut a, -1.0, 1.0);
        rng.fill_uniform(&mut b, -1.0, 1.0);
        let mut c = vec![0.0f32; m * n];
        let mut time = |threads: usize| {
            ferrodl_tensor::set_num_threads(threads);
            let mut best = f64::INFINITY;
            for _ in 0..7 {
                let reps = (2e8 / (m * n * k) as f64).clamp(3.0, 5000.0) as usize;
                let t = Instant::now();
                for _ in 0..reps {
                    gemm(oa, ob, m, n, k, 1.0, &a, &b, 0.0, &mut c);
                }
                best = best.min(t.elapsed().as_secs_f64() / reps as f64);
            }
            best * 1e6
        };
        // interleaved: 1, 2, 1, 2 — keep the better of each
        let (t1a, t2a, t1b, t2b) = (time(1), time(2), time(1), time(2));
        let (t1, t2) = (t1a.min(t1b), t2a.min(t2b));
        println!(
            "{name:<14} {m:>5} {n:>5} {k:>5} {:>10} {t1:>10.1} {t2:>10.1} {:>7.2}",
            m * n * k,
            t1 / t2
        );
    }
    ferrodl_tensor::set_num_threads(0);
}

/// Development table: on-CPU time per product on this thread (`thread_cpu_ns`, so usable on a
/// loaded machine; run with `FERRODL_THREADS=1`) of the MLP's products with B as stored, through
/// `ferrodl_tensor::gemm` (which reads a row-major B in place for short A, `unpacked_b`) and
/// through `matrixmultiply::sgemm` alone (packs both operands); best of 15 blocks.
fn gemm_batch() {
    let mut shapes: Vec<(&str, Op, usize, usize, usize)> = Vec::new();
    for &b in &[16usize, 32, 64, 96, 128, 192, 256] {
        shapes.push(("fwd x·W1", Op::N, b, 500, 784));
        shapes.push(("fwd a1·W2", Op::N, b, 100, 500));
        shapes.push(("fwd a2·W3", Op::N, b, 10, 100));
        shapes.push(("bwd xᵀ·dz1", Op::T, 784, 500, b));
    }
    println!(
        "{:<12} {:>5} {:>5} {:>5} {:>12} {:>12} {:>7}",
        "shape", "m", "n", "k", "engine µs", "packed µs", "ratio"
    );
    let mut rng = Rng::new(5);
    for (name, op_a, m, n, k) in shapes {
        let mut a = vec![0.0f32; m * k];
        let mut b = vec![0.0f32; k * n];
        rng.fill_uniform(&mut a, -1.0, 1.0);
        rng.fill_uniform(&mut b, -1.0, 1.0);
        let mut c = vec![0.0f32; m * n];
        let (rsa, csa) = match op_a {
            Op::N => (k as isize, 1),
            Op::T => (1, m as isize),
        };
        let reps = (2e7 / (m * n * k) as f64).clamp(2.0, 2000.0) as usize;
        let engine = |c: &mut [f32]| gemm(op_a, Op::N, m, n, k, 1.0, &a, &b, 0.0, c);
        let packed = |c: &mut [f32]| unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                rsa,
                csa,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        };
        let (mut te, mut tp) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..15 {
            let t = thread_cpu_ns();
            for _ in 0..reps {
                engine(&mut c);
            }
            te = te.min((thread_cpu_ns() - t) as f64 / reps as f64 / 1e3);
            let t = thread_cpu_ns();
            for _ in 0..reps {
                packed(&mut c);
            }
            tp = tp.min((thread_cpu_ns() - t) as f64 / reps as f64 / 1e3);
        }
        println!(
            "{name:<12} {m:>5} {n:>5} {k:>5} {te:>12.1} {tp:>12.1} {:>7.2}",
            tp / te
        );
    }
}

/// Development check: the engine's input scan (`first_non_finite`) against the plain
/// `position` search it replaced, on a batch-256 feature matrix.
fn helpers() {
    let mut x = vec![0.0f32; 256 * 784];
    Rng::new(1).fill_uniform(&mut x, 0.0, 1.0);
    let time = |f: &dyn Fn() -> Option<usize>| {
        let mut best = f64::INFINITY;
        for _ in 0..50 {
            let t = Instant::now();
            std::hint::black_box(f());
            best = best.min(t.elapsed().as_secs_f64());
        }
        best * 1e6
    };
    for _ in 0..3 {
        let old = time(&|| std::hint::black_box(&x).iter().position(|v| !v.is_finite()));
        let new = time(&|| ferrodl_tensor::first_non_finite(std::hint::black_box(&x)));
        println!("first_non_finite 256x784: position {old:.1} µs, blocked {new:.1} µs");
    }
}

/// Nanoseconds this thread has spent on a CPU (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, Linux):
/// with `FERRODL_THREADS=1` the work of a step or product, unaffected by time spent waiting for
/// a core, so builds can be compared on a loaded machine (caches shared with other processes
/// still add noise).
fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, t: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid timespec to write; the clock id is Linux's.
    let r = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "clock_gettime");
    t.sec as u64 * 1_000_000_000 + t.nsec as u64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // experiment: flush-to-zero + denormals-are-zero on the main thread for the whole run
    let _ftz = std::env::var_os("FERRODL_FTZ").map(|_| ferrodl_tensor::flush_denormals());
    if let Ok(t) = std::env::var("FERRODL_THREADS") {
        ferrodl_tensor::set_num_threads(t.parse().expect("FERRODL_THREADS"));
    }
    match args.get(1).map(String::as_str) {
        Some("serve") => serve(),
        Some("gemm-threshold") => gemm_threshold(),
        Some("helpers") => helpers(),
        Some("gemm-batch") => gemm_batch(),
        Some("pool-vs-rayon") => pool_vs_rayon::run(),
        Some("gemm") => {
            // gemm N [SECS] [ROUNDS]: quick look from the shell
            let n: usize = args.get(2).map_or(1024, |s| s.parse().unwrap());
            let secs: f64 = args.get(3).map_or(0.5, |s| s.parse().unwrap());
            let rounds: usize = args.get(4).map_or(5, |s| s.parse().unwrap());
            let mut case = GemmCase::new(n);
            let v: Vec<String> = (0..rounds)
                .map(|_| format!("{:.1}", case.gflops(secs)))
                .collect();
            println!(
                "gemm {n}³ threads={} GFLOP/s: {}",
                ferrodl_tensor::num_threads(),
                v.join(" ")
            );
        }
        Some("profile") => {
            let batch: usize = args.get(2).map_or(64, |s| s.parse().unwrap());
            let steps: usize = args.get(3).map_or(200, |s| s.parse().unwrap());
            // `cpu`: phases in this thread's on-CPU time (meaningful with FERRODL_THREADS=1)
            let clock: fn() -> f64 = if args.get(4).map(String::as_str) == Some("cpu") {
                || thread_cpu_ns() as f64 * 1e-9
            } else {
                profile::wall_clock
            };
            // flush-to-zero as the engine's `fit` and `serve`'s `profile B S 1` do: without it a
            // long profile measures Adam on subnormal state (2.7 ms instead of 0.24 at 2,000
            // steps), a slowdown the engine never has
            let _ftz = ferrodl_tensor::flush_denormals();
            for _ in 0..3 {
                println!("{}", profile::run(batch, steps, clock).table());
            }
        }
        Some("subnormal") => {
            let steps: usize = args.get(2).map_or(1200, |s| s.parse().unwrap());
            println!("{}", subnormal::run(steps, 200).to_json());
        }
        Some("cnn") => {
            let batch: usize = args.get(2).map_or(64, |s| s.parse().unwrap());
            let secs: f64 = args.get(3).map_or(2.0, |s| s.parse().unwrap());
            let mut t = mlp::Trainer::with_network(batch, lenet::new_network());
            for _ in 0..3 {
                println!(
                    "lenet batch {batch} threads={}: {:.0} examples/s",
                    ferrodl_tensor::num_threads(),
                    t.examples_per_sec(secs)
                );
            }
        }
        Some("cpu") => {
            // cpu BATCH [STEPS]: on-CPU time of this thread per MLP step (see `thread_cpu_ns`)
            let batch: usize = args.get(2).map_or(64, |s| s.parse().unwrap());
            let steps: usize = args.get(3).map_or(400, |s| s.parse().unwrap());
            let mut t = mlp::Trainer::new(batch);
            for _ in 0..3 {
                let mut blocks: Vec<f64> = (0..steps / 20)
                    .map(|_| {
                        let c = thread_cpu_ns();
                        for _ in 0..20 {
                            t.step();
                        }
                        (thread_cpu_ns() - c) as f64 / 20e3
                    })
                    .collect();
                blocks.sort_by(f64::total_cmp);
                println!(
                    "mlp batch {batch} threads={}: on-CPU µs per step of this thread: min {:.1}, median {:.1} (blocks of 20 steps)",
                    ferrodl_tensor::num_threads(),
                    blocks[0],
                    blocks[blocks.len() / 2]
                );
            }
        }
        Some("lstm") => {
            // lstm graves|lstm [SEQ] [FITS]: the JVM bench's character model (see lstm.rs)
            let kind = args.get(2).map_or("graves", String::as_str);
            let seq: usize = args.get(3).map_or(1000, |s| s.parse().unwrap());
            let fits: usize = args.get(4).map_or(5, |s| s.parse().unwrap());
            lstm::run(kind, seq, fits, thread_cpu_ns);
        }
        Some("lstm-gemms") => lstm::gemms(args.get(2).map_or(20, |s| s.parse().unwrap()), thread_cpu_ns),
        Some("mlp") => {
            let batch: usize = args.get(2).map_or(64, |s| s.parse().unwrap());
            let secs: f64 = args.get(3).map_or(2.0, |s| s.parse().unwrap());
            let mut t = mlp::Trainers::default();
            for _ in 0..3 {
                println!(
                    "mlp batch {batch} threads={}: {:.0} examples/s",
                    ferrodl_tensor::num_threads(),
                    t.get(batch).examples_per_sec(secs)
                );
            }
        }
        _ => {
            eprintln!("usage: ferrodl-bench serve | gemm-threshold | gemm-batch | pool-vs-rayon | gemm N [SECS] [ROUNDS] | profile BATCH [STEPS] [cpu] (flush-to-zero, as fit does) | mlp BATCH [SECS] | cpu BATCH [STEPS] | cnn BATCH [SECS] | lstm graves|lstm [SEQ] [FITS] | lstm-gemms [REPS] | subnormal [STEPS]\nenvironment: FERRODL_THREADS=N, FERRODL_FTZ=1 (flush-to-zero on the main thread)");
            std::process::exit(2);
        }
    }
}
