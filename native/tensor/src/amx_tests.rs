//! Accuracy and behaviour of the AMX bf16x6 f32 GEMM against the FMA path and an f64
//! reference (see `docs/GEMM.md`). Every test is skipped, saying why, when AMX is not usable.

use crate::{amx_support, gemm_with_threads, GemmKernel, Op, Rng};

/// `true` (after printing the reason) when the test must be skipped.
fn skip(test: &str) -> bool {
    match amx_support() {
        Ok(()) => false,
        Err(why) => {
            println!("{test}: skipped, AMX not usable: {why}");
            true
        }
    }
}

/// Element `(r, c)` of `op(X)` where `X` is stored row-major with `cols_stored` columns.
fn at(x: &[f32], op: Op, r: usize, c: usize, rows_op: usize, cols_op: usize) -> f64 {
    match op {
        Op::N => x[r * cols_op + c] as f64,
        Op::T => x[c * rows_op + r] as f64,
    }
}

/// The f64 reference `alpha·op(A)·op(B) + beta·C0` and, per element, the error scale
/// `|alpha|·Σ_k |a_ik||b_kj| + |beta|·|c0_ij|` (the size of what is summed).
#[allow(clippy::too_many_arguments)]
fn reference(
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c0: &[f32],
) -> (Vec<f64>, Vec<f64>) {
    let (mut want, mut scale) = (vec![0.0; m * n], vec![0.0; m * n]);
    for i in 0..m {
        for j in 0..n {
            let (mut s, mut sa) = (0.0, 0.0);
            for p in 0..k {
                let v = at(a, op_a, i, p, m, k) * at(b, op_b, p, j, k, n);
                s += v;
                sa += v.abs();
            }
            let old = if beta == 0.0 {
                0.0
            } else {
                c0[i * n + j] as f64
            };
            want[i * n + j] = alpha as f64 * s + beta as f64 * old;
            scale[i * n + j] = (alpha as f64).abs() * sa + (beta as f64 * old).abs();
        }
    }
    (want, scale)
}

/// Max over elements of `|c - want| / scale` (elements with zero scale must be exact).
fn max_err(c: &[f32], want: &[f64], scale: &[f64]) -> f64 {
    c.iter()
        .zip(want.iter().zip(scale))
        .map(|(&x, (&w, &s))| {
            let d = (x as f64 - w).abs();
            if s == 0.0 {
                assert_eq!(d, 0.0);
                0.0
            } else {
                d / s
            }
        })
        .fold(0.0, f64::max)
}

/// Runs one product on the given kernel and thread count, starting from a copy of `c0`.
#[allow(clippy::too_many_arguments)]
fn run(
    kernel: GemmKernel,
    threads: usize,
    op_a: Op,
    op_b: Op,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c0: &[f32],
) -> Vec<f32> {
    let mut c = c0.to_vec();
    gemm_with_threads(
        threads, kernel, false, op_a, op_b, m, n, k, alpha, a, b, beta, &mut c,
    );
    c
}

/// Magnitudes spread over 1e-3..1e3 (log-uniform), random signs.
fn spread(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len)
        .map(|_| {
            let mag = 10f64.powf(rng.uniform(-3.0, 3.0));
            (if rng.below(2) == 0 { mag } else { -mag }) as f32
        })
        .collect()
}

const U: f64 = 1.0 / (1u64 << 24) as f64; // 2^-24, the unit roundoff of f32

/// AMX against the f64 reference over shapes with odd edges, every transpose combination,
/// alpha/beta, normal and 1e-3..1e3-spread values: the normalised error is at most twice the
/// FMA path's on the same product (plus 2^-24 for products so short that both are nearly
/// exact) and below `4·k·2^-24`; and 1, 2 and 3 threads give the same bits.
#[test]
fn amx_error_is_within_twice_the_fma_error() {
    if skip("amx_error_is_within_twice_the_fma_error") {
        return;
    }
    let shapes = [
        (1, 1, 1),
        (3, 5, 7),
        (16, 16, 32),
        (33, 17, 31),
        (64, 500, 100),
        (100, 37, 784),
        (129, 65, 513),
        (31, 200, 1100), // three K blocks
    ];
    let mut rng = Rng::new(17);
    let (mut worst_ratio, mut worst_amx) = (0f64, 0f64);
    for (si, &(m, n, k)) in shapes.iter().enumerate() {
        for dist in 0..2 {
            let gen = |rng: &mut Rng, len| -> Vec<f32> {
                if dist == 0 {
                    (0..len).map(|_| rng.next_gaussian() as f32).collect()
                } else {
                    spread(rng, len)
                }
            };
            let a = gen(&mut rng, m * k);
            let b = gen(&mut rng, k * n);
            let c0 = gen(&mut rng, m * n);
            for (oi, (op_a, op_b)) in [
                (Op::N, Op::N),
                (Op::T, Op::N),
                (Op::N, Op::T),
                (Op::T, Op::T),
            ]
            .into_iter()
            .enumerate()
            {
                let (alpha, beta) = [(1.0, 0.0), (-0.75, 1.0), (2.0, 0.5)][(si + oi + dist) % 3];
                let (want, scale) = reference(op_a, op_b, m, n, k, alpha, &a, &b, beta, &c0);
                let fma = run(
                    GemmKernel::Fma,
                    1,
                    op_a,
                    op_b,
                    m,
                    n,
                    k,
                    alpha,
                    &a,
                    &b,
                    beta,
                    &c0,
                );
                let amx1 = run(
                    GemmKernel::Amx,
                    1,
                    op_a,
                    op_b,
                    m,
                    n,
                    k,
                    alpha,
                    &a,
                    &b,
                    beta,
                    &c0,
                );
                for threads in [2, 3] {
                    let amx = run(
                        GemmKernel::Amx,
                        threads,
                        op_a,
                        op_b,
                        m,
                        n,
                        k,
                        alpha,
                        &a,
                        &b,
                        beta,
                        &c0,
                    );
                    assert!(
                        amx.iter()
                            .zip(&amx1)
                            .all(|(x, y)| x.to_bits() == y.to_bits()),
                        "{m}x{n}x{k} {op_a:?}{op_b:?}: {threads} threads differ from 1"
                    );
                }
                let (e_fma, e_amx) = (max_err(&fma, &want, &scale), max_err(&amx1, &want, &scale));
                let what = format!("{m}x{n}x{k} {op_a:?}{op_b:?} dist {dist} a={alpha} b={beta}");
                assert!(
                    e_amx <= 2.0 * e_fma + U,
                    "{what}: AMX {e_amx:e} vs FMA {e_fma:e}"
                );
                assert!(e_amx <= 4.0 * k as f64 * U, "{what}: AMX {e_amx:e}");
                worst_amx = worst_amx.max(e_amx / U);
                if e_fma > 0.0 {
                    worst_ratio = worst_ratio.max(e_amx / e_fma);
                }
            }
        }
    }
    println!(
        "worst AMX error {worst_amx:.2}·2^-24 (normalised), worst AMX/FMA ratio {worst_ratio:.2}"
    );
}

/// Large cancellation: `C = [X, X + D]·[Y; -Y] = -D·Y` with `|D| ~ 1e-4 |X|`, so the result is
/// four orders of magnitude below the terms summed. Both paths stay within the bound relative
/// to `Σ|a||b|`, AMX within twice the FMA error; and relative to the result itself AMX is as
/// good as FMA (within 2× + 2^-24·Σ|a||b|/|c|).
#[test]
fn amx_error_under_cancellation() {
    if skip("amx_error_under_cancellation") {
        return;
    }
    let (m, n, half) = (48, 40, 300);
    let k = 2 * half;
    let mut rng = Rng::new(23);
    let x: Vec<f32> = (0..m * half).map(|_| rng.next_gaussian() as f32).collect();
    let y: Vec<f32> = (0..half * n).map(|_| rng.next_gaussian() as f32).collect();
    let mut a = vec![0f32; m * k];
    for i in 0..m {
        for p in 0..half {
            let v = x[i * half + p];
            a[i * k + p] = v;
            a[i * k + half + p] = v + (rng.next_gaussian() * 1e-4) as f32 * v;
        }
    }
    let mut b = vec![0f32; k * n];
    for p in 0..half {
        for j in 0..n {
            b[p * n + j] = y[p * n + j];
            b[(half + p) * n + j] = -y[p * n + j];
        }
    }
    let c0 = vec![0f32; m * n];
    let (want, scale) = reference(Op::N, Op::N, m, n, k, 1.0, &a, &b, 0.0, &c0);
    let fma = run(
        GemmKernel::Fma,
        1,
        Op::N,
        Op::N,
        m,
        n,
        k,
        1.0,
        &a,
        &b,
        0.0,
        &c0,
    );
    let amx = run(
        GemmKernel::Amx,
        2,
        Op::N,
        Op::N,
        m,
        n,
        k,
        1.0,
        &a,
        &b,
        0.0,
        &c0,
    );
    let (e_fma, e_amx) = (max_err(&fma, &want, &scale), max_err(&amx, &want, &scale));
    let ratio: f64 = want
        .iter()
        .zip(&scale)
        .map(|(w, s)| s / w.abs())
        .sum::<f64>()
        / want.len() as f64;
    println!(
        "cancellation: mean Σ|ab|/|c| = {ratio:.0}; error AMX {:.2}, FMA {:.2} (·2^-24·Σ|ab|)",
        e_amx / U,
        e_fma / U
    );
    assert!(ratio > 1000.0, "the case must cancel heavily");
    assert!(e_amx <= 2.0 * e_fma + U, "AMX {e_amx:e} vs FMA {e_fma:e}");
    assert!(e_amx <= 4.0 * k as f64 * U);
}

/// Small integers (products and sums below 2^24) are exact on both paths.
#[test]
fn amx_is_exact_on_small_integers() {
    if skip("amx_is_exact_on_small_integers") {
        return;
    }
    let (m, n, k) = (70, 45, 333);
    let mut rng = Rng::new(5);
    let a: Vec<f32> = (0..m * k).map(|_| rng.below(201) as f32 - 100.0).collect();
    let b: Vec<f32> = (0..k * n).map(|_| rng.below(129) as f32 - 64.0).collect();
    let c0: Vec<f32> = (0..m * n).map(|_| rng.below(1000) as f32).collect();
    for (op_a, op_b) in [(Op::N, Op::N), (Op::T, Op::T)] {
        let (want, _) = reference(op_a, op_b, m, n, k, 1.0, &a, &b, 1.0, &c0);
        let amx = run(
            GemmKernel::Amx,
            2,
            op_a,
            op_b,
            m,
            n,
            k,
            1.0,
            &a,
            &b,
            1.0,
            &c0,
        );
        for (x, w) in amx.iter().zip(&want) {
            assert_eq!(*x as f64, *w);
        }
    }
    // Values needing all 24 bits (h, m and l all non-zero) times powers of two: exact too.
    let a: Vec<f32> = (0..m * k)
        .map(|i| {
            if i % k == i / k % k {
                16_777_215.0
            } else {
                0.0
            }
        })
        .collect();
    let b: Vec<f32> = (0..k * n).map(|i| [0.5f32, -0.25, 2.0][i % 3]).collect();
    let (want, _) = reference(Op::N, Op::N, m, n, k, 1.0, &a, &b, 0.0, &c0);
    let amx = run(
        GemmKernel::Amx,
        1,
        Op::N,
        Op::N,
        m,
        n,
        k,
        1.0,
        &a,
        &b,
        0.0,
        &c0,
    );
    assert!(amx.iter().zip(&want).all(|(x, w)| *x as f64 == *w));
}

/// NaN and infinities: the AMX driver computes 32-row strips of A holding them, and whole
/// products whose B holds them, on the FMA path, so C is bit-identical to the FMA path where
/// either is non-finite and the finite strips match it to rounding; no finite garbage.
#[test]
fn amx_propagates_nan_and_infinity_like_fma() {
    if skip("amx_propagates_nan_and_infinity_like_fma") {
        return;
    }
    let (m, n) = (80, 50);
    let mut rng = Rng::new(8);
    // k = 70: one K block (packing finds the bad strips before C is written); k = 1100: three
    // blocks, the bad value in the last one (beta != 0: rows scanned first; beta == 0: the
    // strip is recomputed on the FMA path after the fact).
    for (k, beta) in [(70, 0.5f32), (1100, 0.5), (1100, 0.0)] {
        let base_a: Vec<f32> = (0..m * k).map(|_| rng.next_gaussian() as f32).collect();
        let base_b: Vec<f32> = (0..k * n).map(|_| rng.next_gaussian() as f32).collect();
        let c0 = vec![1.0f32; m * n];
        type Poison = Option<(usize, f32)>; // (index, value) put into A or B
        let cases: [(&str, Poison, Poison); 5] = [
            ("inf in A", Some((40 * k + k - 3, f32::INFINITY)), None),
            ("-inf in A", Some((5 * k + k / 2, f32::NEG_INFINITY)), None),
            ("nan in A", Some((79 * k + k - 1, f32::NAN)), None),
            ("inf in B", None, Some(((k - 7) * n + 11, f32::INFINITY))),
            ("nan in B", None, Some((0, f32::NAN))),
        ];
        for (what, in_a, in_b) in cases {
            let (mut a, mut b) = (base_a.clone(), base_b.clone());
            if let Some((i, v)) = in_a {
                a[i] = v;
            }
            if let Some((i, v)) = in_b {
                b[i] = v;
            }
            let fma = run(
                GemmKernel::Fma,
                1,
                Op::N,
                Op::N,
                m,
                n,
                k,
                1.0,
                &a,
                &b,
                beta,
                &c0,
            );
            let amx = run(
                GemmKernel::Amx,
                2,
                Op::N,
                Op::N,
                m,
                n,
                k,
                1.0,
                &a,
                &b,
                beta,
                &c0,
            );
            let non_finite = fma.iter().filter(|v| !v.is_finite()).count();
            assert!(
                non_finite > 0,
                "{what}: the case must produce non-finite results"
            );
            let tol = 1e-5 * (k as f32).sqrt();
            for (i, (x, y)) in amx.iter().zip(&fma).enumerate() {
                if !y.is_finite() || !x.is_finite() {
                    assert!(
                        x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                        "{what} k={k} beta={beta} [{i}]: AMX {x} vs FMA {y}"
                    );
                } else {
                    assert!(
                        (x - y).abs() <= tol * (1.0 + y.abs()),
                        "{what} [{i}]: {x} vs {y}"
                    );
                }
            }
        }
    }
}

/// Subnormals: the tile unit treats bf16 subnormal inputs as zero and flushes subnormal results,
/// whatever MXCSR says. A product of subnormal-sized terms therefore comes back as zero on the
/// AMX path (absolute error below `k·2^-126·max|b|`), where the FMA path without FTZ/DAZ keeps
/// them; normal-sized results are unaffected.
#[test]
fn amx_flushes_subnormal_products() {
    if skip("amx_flushes_subnormal_products") {
        return;
    }
    let (m, n, k) = (32, 32, 64);
    let mut rng = Rng::new(4);
    let tiny: Vec<f32> = (0..m * k)
        .map(|_| (rng.uniform(1.0, 2.0) * 1e-39) as f32)
        .collect();
    assert!(tiny.iter().all(|v| *v != 0.0 && !v.is_normal()));
    let b: Vec<f32> = (0..k * n).map(|_| rng.uniform(0.5, 1.0) as f32).collect();
    let c0 = vec![0f32; m * n];
    let amx = run(
        GemmKernel::Amx,
        1,
        Op::N,
        Op::N,
        m,
        n,
        k,
        1.0,
        &tiny,
        &b,
        0.0,
        &c0,
    );
    assert!(
        amx.iter().all(|&v| v == 0.0),
        "subnormal inputs are read as zero"
    );
    let bound = k as f64 * 2f64.powi(-126);
    let (want, _) = reference(Op::N, Op::N, m, n, k, 1.0, &tiny, &b, 0.0, &c0);
    assert!(amx
        .iter()
        .zip(&want)
        .all(|(x, w)| (*x as f64 - w).abs() <= bound));
    // Normal values whose low parts fall below 2^-126 lose only those parts.
    let small: Vec<f32> = (0..m * k)
        .map(|_| (rng.uniform(1.0, 2.0) * 1e-35) as f32)
        .collect();
    let amx = run(
        GemmKernel::Amx,
        1,
        Op::N,
        Op::N,
        m,
        n,
        k,
        1.0,
        &small,
        &b,
        0.0,
        &c0,
    );
    let (want, _) = reference(Op::N, Op::N, m, n, k, 1.0, &small, &b, 0.0, &c0);
    for (x, w) in amx.iter().zip(&want) {
        assert!(
            (*x as f64 - w).abs() <= bound + 1e-6 * w.abs(),
            "{x:e} vs {w:e}"
        );
    }
}

/// The forced kernel takes effect through the public entry point, and `active_gemm_kernel`
/// reports it. (The only test that changes the process-wide kernel setting.)
#[test]
fn kernel_setting_is_observed_and_reported() {
    let _g = crate::parallel::SETTING_LOCK
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let before = crate::gemm_kernel();
    crate::set_gemm_kernel(GemmKernel::Fma);
    let info = crate::active_gemm_kernel();
    assert_eq!(
        (info.requested, info.kernel),
        (GemmKernel::Fma, GemmKernel::Fma)
    );
    crate::set_gemm_kernel(GemmKernel::Amx);
    let info = crate::active_gemm_kernel();
    let usable = amx_support().is_ok();
    assert_eq!(info.requested, GemmKernel::Amx);
    assert_eq!(
        info.kernel,
        if usable {
            GemmKernel::Amx
        } else {
            GemmKernel::Fma
        }
    );
    assert!(usable || info.reason.contains("not usable"), "{info}");
    // Through `gemm`: a product whose exact result is not representable shows which path ran
    // only by its bits, so compare with the explicit-kernel entry point.
    let (m, n, k) = (40, 40, 40);
    let mut rng = Rng::new(1);
    let a: Vec<f32> = (0..m * k).map(|_| rng.next_gaussian() as f32).collect();
    let b: Vec<f32> = (0..k * n).map(|_| rng.next_gaussian() as f32).collect();
    for kern in [GemmKernel::Fma, GemmKernel::Amx] {
        crate::set_gemm_kernel(kern);
        let mut c = vec![0f32; m * n];
        crate::gemm(Op::N, Op::N, m, n, k, 1.0, &a, &b, 0.0, &mut c);
        let want = run(
            kern,
            crate::num_threads(),
            Op::N,
            Op::N,
            m,
            n,
            k,
            1.0,
            &a,
            &b,
            0.0,
            &c,
        );
        assert_eq!(c, want, "{kern}");
    }
    crate::set_gemm_kernel(before);
    assert_eq!(GemmKernel::parse(" AMX "), Some(GemmKernel::Amx));
    assert_eq!(GemmKernel::parse("avx"), None);
}

/// Prints the normalised errors (max and mean, in units of 2^-24) of both paths for the shapes
/// quoted in `docs/GEMM.md`: `cargo test --release -p ferrodl-tensor accuracy_report --
/// --ignored --nocapture`. (The assertions on the same errors are in the tests above.)
#[test]
#[ignore = "report for docs/GEMM.md; the accuracy assertions are the non-ignored tests"]
fn accuracy_report() {
    if skip("accuracy_report") {
        return;
    }
    let mut rng = Rng::new(99);
    for &(m, n, k) in &[
        (256, 256, 256),
        (512, 512, 1024),
        (64, 500, 784),
        (500, 300, 4096),
    ] {
        for dist in ["normal", "1e-3..1e3"] {
            let gen = |rng: &mut Rng, len: usize| -> Vec<f32> {
                if dist == "normal" {
                    (0..len).map(|_| rng.next_gaussian() as f32).collect()
                } else {
                    spread(rng, len)
                }
            };
            let (a, b) = (gen(&mut rng, m * k), gen(&mut rng, k * n));
            let c0 = vec![0f32; m * n];
            let (want, scale) = reference(Op::N, Op::N, m, n, k, 1.0, &a, &b, 0.0, &c0);
            let mut line = format!("{m}x{n}x{k} {dist:>9}:");
            for kern in [GemmKernel::Fma, GemmKernel::Amx] {
                let c = run(kern, 2, Op::N, Op::N, m, n, k, 1.0, &a, &b, 0.0, &c0);
                let errs: Vec<f64> = c
                    .iter()
                    .zip(want.iter().zip(&scale))
                    .map(|(&x, (&w, &s))| (x as f64 - w).abs() / s / U)
                    .collect();
                let rel: Vec<f64> = c
                    .iter()
                    .zip(&want)
                    .filter(|(_, w)| w.abs() > 0.0)
                    .map(|(&x, &w)| ((x as f64 - w) / w).abs() / U)
                    .collect();
                let mean = errs.iter().sum::<f64>() / errs.len() as f64;
                let max = errs.iter().cloned().fold(0.0, f64::max);
                let mut sorted = rel.clone();
                sorted.sort_by(|x, y| x.partial_cmp(y).unwrap());
                line += &format!(
                    "  {kern}: max {max:.2} mean {mean:.3} (median rel {:.2})",
                    sorted[sorted.len() / 2]
                );
            }
            println!("{line}");
        }
    }
}

/// A product forced onto AMX inside a `parallel_for_each` item (a helper thread, where nested
/// parallel calls run sequentially) loads its own tile configuration there and gives the same
/// bits as on the calling thread.
#[test]
fn amx_runs_inside_parallel_items() {
    if skip("amx_runs_inside_parallel_items") {
        return;
    }
    let (m, n, k) = (96, 80, 300);
    let mut rng = Rng::new(12);
    let a: Vec<f32> = (0..m * k).map(|_| rng.next_gaussian() as f32).collect();
    let b: Vec<f32> = (0..k * n).map(|_| rng.next_gaussian() as f32).collect();
    let c0 = vec![0f32; m * n];
    let want = run(
        GemmKernel::Amx,
        2,
        Op::N,
        Op::N,
        m,
        n,
        k,
        1.0,
        &a,
        &b,
        0.0,
        &c0,
    );
    let mut outs = vec![vec![0f32; m * n]; 4];
    let items: Vec<&mut Vec<f32>> = outs.iter_mut().collect();
    crate::parallel_for_each(items, |c| {
        gemm_with_threads(
            2,
            GemmKernel::Amx,
            false,
            Op::N,
            Op::N,
            m,
            n,
            k,
            1.0,
            &a,
            &b,
            0.0,
            c,
        );
    });
    for c in &outs {
        assert!(c.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
