//! GFLOP/s of the f32 GEMM kernels, interleaved: `cargo run --release --example gemm_bench
//! [-- reps M,N,K ...]` (default shapes: 256³, 1024³, 2048³ and the MLP products). Prints one
//! line per shape, kernel and thread count, with the best and median of `reps` timings, and the
//! max normalised error of each kernel against an f64 reference on the first shape run.
use ferrodl_tensor::{
    active_gemm_kernel, gemm, set_gemm_kernel, set_num_threads, GemmKernel, Op, Rng,
};
use std::time::Instant;

/// CPU time in seconds of this thread (`process == false`) or of the whole process
/// (clock_gettime with CLOCK_THREAD_CPUTIME_ID / CLOCK_PROCESS_CPUTIME_ID, by raw system call to
/// avoid a libc dependency). With GEMM_BENCH_CPU=1 the timings use it, so that time slices lost
/// to other processes on a shared machine do not count: one-thread rows use the thread's CPU
/// time, T-thread rows the process's CPU time divided by T (which still counts the time the
/// threads spend waiting for each other, and their memory contention, but not preemption).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn cpu_s(process: bool) -> f64 {
    let mut ts = [0i64; 2];
    let clock: i64 = if process { 2 } else { 3 };
    // SAFETY: clock_gettime (228) writes one timespec into `ts`.
    unsafe {
        std::arch::asm!("syscall", inlateout("rax") 228i64 => _, in("rdi") clock,
            in("rsi") ts.as_mut_ptr(), lateout("rcx") _, lateout("r11") _, options(nostack));
    }
    ts[0] as f64 + ts[1] as f64 * 1e-9
}
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn cpu_s(_process: bool) -> f64 {
    0.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(7);
    // Each shape is M,N,K or M,N,K,OPA,OPB with OPA/OPB = N or T (op(A) is M×K, op(B) K×N).
    let op = |s: &str| match s {
        "N" => Op::N,
        "T" => Op::T,
        _ => panic!("operand op must be N or T, got {s}"),
    };
    let mut shapes: Vec<(usize, usize, usize, Op, Op)> = args
        .iter()
        .skip(1)
        .map(|s| {
            let v: Vec<&str> = s.split(',').collect();
            let d = |i: usize| -> usize { v[i].parse().expect("M,N,K[,OPA,OPB]") };
            let (oa, ob) = if v.len() == 5 {
                (op(v[3]), op(v[4]))
            } else {
                (Op::N, Op::N)
            };
            (d(0), d(1), d(2), oa, ob)
        })
        .collect();
    if shapes.is_empty() {
        shapes = [256, 1024, 2048].map(|s| (s, s, s, Op::N, Op::N)).to_vec();
    }
    println!("kernel: {}", active_gemm_kernel());
    let mut rng = Rng::new(1);
    for &(m, n, k, oa, ob) in &shapes {
        let a: Vec<f32> = (0..m * k).map(|_| rng.next_gaussian() as f32).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.next_gaussian() as f32).collect();
        let mut c = vec![0f32; m * n];
        let flops = 2.0 * (m * n * k) as f64;
        // Enough calls for ~20 ms per timing at 100 GFLOP/s.
        let calls = ((1e11 * 0.02 / flops) as usize).clamp(1, 10_000);
        // GEMM_BENCH_ONLY=amx|fma restricts the kernels timed (for profiling one of them).
        let only = std::env::var("GEMM_BENCH_ONLY")
            .ok()
            .and_then(|s| GemmKernel::parse(&s));
        let configs: Vec<(GemmKernel, usize)> = [
            (GemmKernel::Fma, 1),
            (GemmKernel::Amx, 1),
            (GemmKernel::Fma, 2),
            (GemmKernel::Amx, 2),
        ]
        .into_iter()
        .filter(|(k, _)| only.is_none_or(|o| o == *k))
        .collect();
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
        for _ in 0..reps {
            for (ci, &(kern, th)) in configs.iter().enumerate() {
                set_gemm_kernel(kern);
                set_num_threads(th);
                gemm(oa, ob, m, n, k, 1.0, &a, &b, 0.0, &mut c);
                let use_cpu = std::env::var("GEMM_BENCH_CPU").is_ok_and(|v| v == "1");
                let (t, cpu) = (Instant::now(), cpu_s(th > 1));
                for _ in 0..calls {
                    gemm(oa, ob, m, n, k, 1.0, &a, &b, 0.0, &mut c);
                }
                let dt = if use_cpu {
                    (cpu_s(th > 1) - cpu) / th as f64
                } else {
                    t.elapsed().as_secs_f64()
                };
                times[ci].push(dt / calls as f64);
            }
        }
        for (ci, &(kern, th)) in configs.iter().enumerate() {
            let mut t = times[ci].clone();
            t.sort_by(|x, y| x.partial_cmp(y).unwrap());
            println!(
                "{m}x{n}x{k} {oa:?}{ob:?} {:>3} {th}T: best {:8.1} median {:8.1} GFLOP/s ({:.3} ms median)",
                kern.name(),
                flops / t[0] / 1e9,
                flops / t[t.len() / 2] / 1e9,
                t[t.len() / 2] * 1e3
            );
        }
    }
    set_gemm_kernel(GemmKernel::Auto);
    set_num_threads(0);
}
