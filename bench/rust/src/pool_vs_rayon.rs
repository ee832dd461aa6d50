//! `ferrodl-bench pool-vs-rayon`: why the engine has its own fork-join pool (`native/tensor/src/
//! pool.rs`) instead of rayon. Two measurements, both with 2 threads (the calling thread + one
//! helper), each after the calling thread has been busy for GAP µs on its own (the time a training
//! step spends between two products: activations, bias, the updater):
//!
//! * dispatch: a job of two 10 µs pieces, i.e. the cost of waking the helper and joining it;
//! * the batch-64 MLP's GEMM shapes, split in two blocks exactly as the engine splits them (rows,
//!   or columns when C is wider than tall), each block a single-threaded matrixmultiply call —
//!   through the engine's `gemm` on its pool, and through `rayon::join` on a 2-thread rayon pool.
//!
//! Medians over many calls (µs). The engine's helpers poll for 100 µs after a piece before they
//! sleep; rayon's sleep after a few rounds of spinning, so the gap decides who pays a wake-up.

use std::time::{Duration, Instant};

use ferrodl_tensor::{gemm, Op, Rng};

/// Spins the calling thread for `d` (work between two products, without letting the core idle).
fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median µs of `f` over `reps` calls, each after `gap` of busy work on this thread.
fn timed(reps: usize, gap: Duration, mut f: impl FnMut()) -> f64 {
    f(); // warm-up: threads started, caches
    let mut v = Vec::with_capacity(reps);
    for _ in 0..reps {
        busy(gap);
        let t = Instant::now();
        f();
        v.push(t.elapsed().as_secs_f64() * 1e6);
    }
    median(v)
}

/// Element strides (rows, columns) of `op(X)` for a row-major `X` with `cols_stored` columns.
fn strides(op: Op, cols_stored: usize) -> (isize, isize) {
    match op {
        Op::N => (cols_stored as isize, 1),
        Op::T => (1, cols_stored as isize),
    }
}

struct Shape {
    name: &'static str,
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
}

/// One single-threaded matrixmultiply call on the block of C rows `r0..r1`, columns `c0..c1`.
///
/// # Safety
/// The pointers must describe the full operands of `s`; blocks given to concurrent calls must not
/// overlap in C.
#[allow(clippy::too_many_arguments)]
unsafe fn block(s: &Shape, a: usize, b: usize, c: usize, r0: usize, r1: usize, c0: usize, c1: usize) {
    let (a, b, c) = (a as *const f32, b as *const f32, c as *mut f32);
    // A is stored m×k (N) or k×m (T); B k×n (N) or n×k (T); C m×n
    let (rsa, csa) = strides(s.op_a, if s.op_a == Op::N { s.k } else { s.m });
    let (rsb, csb) = strides(s.op_b, if s.op_b == Op::N { s.n } else { s.k });
    let a0 = a.offset(r0 as isize * rsa);
    let b0 = b.offset(c0 as isize * csb);
    let c00 = c.add(r0 * s.n + c0);
    matrixmultiply::sgemm(
        r1 - r0,
        s.k,
        c1 - c0,
        1.0,
        a0,
        rsa,
        csa,
        b0,
        rsb,
        csb,
        0.0,
        c00,
        s.n as isize,
        1,
    );
}

pub fn run() {
    let rayon2 = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("rayon pool");
    ferrodl_tensor::set_num_threads(2);
    let gaps = [0u64, 20, 200, 2000];

    // Two pieces of PIECE µs each: 2·PIECE on one thread, PIECE + the cost of handing the second
    // piece to the helper (waking it, joining it) on two. An empty job would say nothing: both
    // rayon and the engine run every piece on the caller when no helper claims one in time.
    const PIECE: Duration = Duration::from_micros(10);
    println!(
        "a job of two {} µs pieces, median µs (one thread: {}; after GAP µs of work on the caller)",
        PIECE.as_micros(),
        2 * PIECE.as_micros()
    );
    println!("{:>8} {:>10} {:>10}", "GAP µs", "engine", "rayon");
    for &g in &gaps {
        let gap = Duration::from_micros(g);
        let reps = if g >= 2000 { 500 } else { 2000 };
        let e = timed(reps, gap, || {
            ferrodl_tensor::parallel_for_each(vec![0u8, 1u8], |_| busy(PIECE))
        });
        let r = rayon2.install(|| {
            timed(reps, gap, || {
                rayon::join(|| busy(PIECE), || busy(PIECE));
            })
        });
        println!("{g:>8} {e:>10.2} {r:>10.2}");
    }

    let shapes = [
        Shape { name: "fwd x·W1", op_a: Op::N, op_b: Op::N, m: 64, n: 500, k: 784 },
        Shape { name: "bwd xᵀ·dz1", op_a: Op::T, op_b: Op::N, m: 784, n: 500, k: 64 },
        Shape { name: "fwd a1·W2", op_a: Op::N, op_b: Op::N, m: 64, n: 100, k: 500 },
        Shape { name: "bwd a1ᵀ·dz2", op_a: Op::T, op_b: Op::N, m: 500, n: 100, k: 64 },
        Shape { name: "bwd dz2·W2ᵀ", op_a: Op::N, op_b: Op::T, m: 64, n: 500, k: 100 },
    ];
    let mut rng = Rng::new(7);
    println!("\nbatch-64 MLP GEMM shapes on 2 threads, median µs per product");
    println!(
        "{:<13} {:>4} {:>4} {:>4} {:>7} {:>9} {:>9} {:>9}",
        "shape", "m", "n", "k", "GAP µs", "1 thread", "engine", "rayon"
    );
    for s in &shapes {
        let mut a = vec![0.0f32; s.m * s.k];
        let mut b = vec![0.0f32; s.k * s.n];
        rng.fill_uniform(&mut a, -1.0, 1.0);
        rng.fill_uniform(&mut b, -1.0, 1.0);
        let mut c = vec![0.0f32; s.m * s.n];
        let mut c2 = vec![0.0f32; s.m * s.n];
        for &g in &[0u64, 200, 2000] {
            let gap = Duration::from_micros(g);
            let reps = if g >= 2000 { 300 } else { 1000 };
            let one = timed(reps, gap, || {
                ferrodl_tensor::set_num_threads(1);
                gemm(s.op_a, s.op_b, s.m, s.n, s.k, 1.0, &a, &b, 0.0, &mut c);
                ferrodl_tensor::set_num_threads(2);
            });
            let eng = timed(reps, gap, || {
                gemm(s.op_a, s.op_b, s.m, s.n, s.k, 1.0, &a, &b, 0.0, &mut c)
            });
            let (pa, pb, pc) = (a.as_ptr() as usize, b.as_ptr() as usize, c2.as_mut_ptr() as usize);
            let ray = rayon2.install(|| {
                timed(reps, gap, || {
                    // the engine's split: columns when C is wider than tall, else rows; both halves
                    // a multiple of 16 (matrixmultiply's widest kernel)
                    if s.n > s.m {
                        let h = (s.n / 2).div_ceil(16) * 16;
                        rayon::join(
                            || unsafe { block(s, pa, pb, pc, 0, s.m, 0, h) },
                            || unsafe { block(s, pa, pb, pc, 0, s.m, h, s.n) },
                        );
                    } else {
                        let h = (s.m / 2).div_ceil(16) * 16;
                        rayon::join(
                            || unsafe { block(s, pa, pb, pc, 0, h, 0, s.n) },
                            || unsafe { block(s, pa, pb, pc, h, s.m, 0, s.n) },
                        );
                    }
                })
            });
            // same products: the rayon split must compute what the engine computed
            let diff = c
                .iter()
                .zip(&c2)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0f32, f32::max);
            assert!(diff <= 1e-3, "{}: rayon result differs by {diff}", s.name);
            println!(
                "{:<13} {:>4} {:>4} {:>4} {:>7} {:>9.1} {:>9.1} {:>9.1}",
                s.name, s.m, s.n, s.k, g, one, eng, ray
            );
        }
    }
    ferrodl_tensor::set_num_threads(0);
}
