//! The flat state layout of [`Optimizer`] and the `set_state` round trip.

use super::close;
use crate::*;

#[test]
fn layout_initial_state_and_round_trip() {
    let adam = AnyUpdater::Adam(Adam::default());
    let sgd = AnyUpdater::Sgd(Sgd {
        learning_rate: 0.5,
        learning_rate_schedule: None,
    });
    let nest = AnyUpdater::Nesterovs(Nesterovs::default());
    let ams = AnyUpdater::AMSGrad(AMSGrad::default());
    let rms = AnyUpdater::RmsProp(RmsProp::default());
    let delta = AnyUpdater::AdaDelta(AdaDelta::default());
    let noop = AnyUpdater::NoOp(NoOp {});
    let ada = AnyUpdater::AdaGrad(AdaGrad::default());
    let max = AnyUpdater::AdaMax(AdaMax::default());
    let nadam = AnyUpdater::Nadam(Nadam::default());
    let blocks = vec![
        (0..3, adam),    // state 0..6   (m 0..3, v 3..6)
        (3..5, sgd),     // none
        (5..6, nest),    // state 6      (v)
        (6..8, ams),     // state 7..13  (m 7..9, v 9..11, vhat 11..13)
        (8..9, rms),     // state 13     (s, starts at 1e-8)
        (9..10, delta),  // state 14..16 (msg 14, msdx 15)
        (10..11, noop),  // none
        (11..12, ada),   // state 16     (h, starts at 1e-6)
        (12..13, max),   // state 17..19 (m 17, u 18)
        (13..14, nadam), // state 19..21 (m 19, v 20)
    ];
    let mut opt = Optimizer::<f32>::new(blocks.clone());
    assert_eq!(opt.state_len(), 6 + 1 + 6 + 1 + 2 + 1 + 2 + 2);
    let mut init = [0.0f32; 21];
    init[13] = 1e-8;
    init[16] = 1e-6;
    assert_eq!(opt.state(), &init[..]);
    assert_eq!(opt.blocks().count(), 10);

    let mut g = vec![1.0f32; 14];
    opt.step(&mut g, 0, 0);
    let s = opt.state();
    // Adam m = 0.1, v = 0.001; Nesterovs v = -0.1; AMSGrad m, v, vhat = 0.1, 0.001, 0.001.
    assert!(s[..3].iter().all(|m| (m - 0.1).abs() < 1e-7));
    assert!(s[3..6].iter().all(|v| (v - 0.001).abs() < 1e-7));
    assert!((s[6] + 0.1).abs() < 1e-7);
    assert!(s[7..9].iter().all(|m| (m - 0.1).abs() < 1e-7));
    assert!(s[9..13].iter().all(|v| (v - 0.001).abs() < 1e-7));
    // RmsProp s = 0.95e-8 + 0.05; AdaDelta msg = 0.05; AdaGrad h = 1 + 1e-6; AdaMax u = 1.
    assert!((s[13] - 0.05).abs() < 1e-7);
    assert!((s[14] - 0.05).abs() < 1e-7);
    assert!((s[16] - 1.000001).abs() < 1e-6);
    assert!((s[17] - 0.1).abs() < 1e-7 && (s[18] - 1.0).abs() < 1e-7);
    assert!((s[19] - 0.1).abs() < 1e-7 && (s[20] - 0.001).abs() < 1e-7);
    assert_eq!(&g[3..5], &[0.5, 0.5]); // Sgd
    assert_eq!(g[10], 0.0); // NoOp

    let mut other = Optimizer::<f32>::new(blocks.clone());
    other.set_state(opt.state()).unwrap();
    let (mut g1, mut g2) = (vec![0.3f32; 14], vec![0.3f32; 14]);
    opt.step(&mut g1, 1, 0);
    other.step(&mut g2, 1, 0);
    assert_eq!(g1, g2);
    assert_eq!(opt.state(), other.state());
    assert_eq!(opt, other);
    let err = other.set_state(&[0.0; 3]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "updater state has 3 values but this network needs 21"
    );
    other.reset_state();
    assert_eq!(other.state(), &init[..]);
}

#[test]
fn gaps_between_blocks_are_left_alone() {
    let sgd = AnyUpdater::Sgd(Sgd {
        learning_rate: 0.5,
        learning_rate_schedule: None,
    });
    let mut opt = Optimizer::<f64>::new([(1..2, sgd)]);
    let mut g = [4.0, 4.0, 4.0];
    opt.step(&mut g, 0, 0);
    assert_eq!(g, [4.0, 2.0, 4.0]);
    close(opt.blocks().next().unwrap().1.learning_rate_at(0, 0), 0.5);
}

#[test]
fn defaults_match_reference() {
    let sgd = Sgd::default();
    assert_eq!(
        (sgd.learning_rate, sgd.learning_rate_schedule),
        (1e-3, None)
    );
    for (lr, b1, b2, eps) in [
        {
            let a = Adam::default();
            (a.learning_rate, a.beta1, a.beta2, a.epsilon)
        },
        {
            let a = AdaMax::default();
            (a.learning_rate, a.beta1, a.beta2, a.epsilon)
        },
        {
            let a = Nadam::default();
            (a.learning_rate, a.beta1, a.beta2, a.epsilon)
        },
        {
            let a = AMSGrad::default();
            (a.learning_rate, a.beta1, a.beta2, a.epsilon)
        },
    ] {
        assert_eq!((lr, b1, b2, eps), (1e-3, 0.9, 0.999, 1e-8));
    }
    let r = RmsProp::default();
    assert_eq!((r.learning_rate, r.rms_decay, r.epsilon), (0.1, 0.95, 1e-8));
    let n = Nesterovs::default();
    assert_eq!((n.learning_rate, n.momentum), (0.1, 0.9));
    assert!(n.learning_rate_schedule.is_none() && n.momentum_schedule.is_none());
    let a = AdaGrad::default();
    assert_eq!((a.learning_rate, a.epsilon), (0.1, 1e-6));
    let d = AdaDelta::default();
    assert_eq!((d.rho, d.epsilon), (0.95, 1e-6));
    assert_eq!(UpdaterConfig::default(), UpdaterConfig::Sgd(Sgd::default()));
    assert_eq!(AnyUpdater::default(), AnyUpdater::Sgd(Sgd::default()));
}

/// `step_and_apply` (Adam's fused single pass, the others' two-step default) is bit-identical to
/// `step` followed by `params -= update`, over several steps of every updater.
#[test]
fn step_and_apply_equals_step_then_subtract() {
    let updaters = super::every_updater();
    let n = 7;
    let blocks: Vec<_> = updaters
        .iter()
        .enumerate()
        .map(|(i, u)| (i * n..(i + 1) * n, u.clone()))
        .collect();
    let total = n * updaters.len();
    let mut a = Optimizer::<f32>::new(blocks.clone());
    let mut b = Optimizer::<f32>::new(blocks);
    let mut pa: Vec<f32> = (0..total).map(|i| (i as f32 * 0.37).sin()).collect();
    let mut pb = pa.clone();
    for it in 0..5u64 {
        let g: Vec<f32> = (0..total)
            .map(|i| ((i as f32 + it as f32) * 1.3).cos() * 0.1)
            .collect();
        let mut ga = g.clone();
        a.step(&mut ga, it, 0);
        for (p, u) in pa.iter_mut().zip(&ga) {
            *p -= u;
        }
        let mut gb = g.clone();
        b.step_and_apply(&mut pb, &mut gb, it, 0);
        assert_eq!(ga, gb, "update at iteration {it}");
        assert_eq!(pa, pb, "params at iteration {it}");
        assert_eq!(a.state(), b.state(), "state at iteration {it}");
    }
}

/// Large blocks are cut into pieces run on several threads: for every updater, `step_and_apply`
/// at 1, 2 and 3 threads gives exactly (bit for bit) what `step` followed by `params -= update`
/// gives on one thread, over several iterations and with blocks of uneven length.
#[test]
fn pieces_on_threads_are_bit_identical_to_one_pass() {
    let all = super::every_updater();
    // 100,003 + 7 + 40,961 parameters: the first and last blocks span several pieces of uneven size.
    let (a, b, c) = (100_003, 7, 40_961);
    let n = a + b + c;
    let mut rng = ferrodl_tensor::Rng::new(11);
    let mut p0 = vec![0f32; n];
    rng.fill_normal(&mut p0, 0.1);
    let grads: Vec<Vec<f32>> = (0..3)
        .map(|_| {
            let mut g = vec![0f32; n];
            rng.fill_normal(&mut g, 0.01);
            g
        })
        .collect();
    for u in &all {
        let blocks = vec![
            (0..a, u.clone()),
            (a..a + b, u.clone()),
            (a + b..n, u.clone()),
        ];
        // Reference: one thread, update first, subtraction after.
        ferrodl_tensor::set_num_threads(1);
        let mut reference = Optimizer::<f32>::new(blocks.clone());
        let mut p_ref = p0.clone();
        for (it, g) in grads.iter().enumerate() {
            let mut g = g.clone();
            reference.step(&mut g, it as u64, 0);
            for (p, u) in p_ref.iter_mut().zip(&g) {
                *p -= u;
            }
        }
        for threads in [1, 2, 3] {
            ferrodl_tensor::set_num_threads(threads);
            let mut opt = Optimizer::<f32>::new(blocks.clone());
            let mut p = p0.clone();
            for (it, g) in grads.iter().enumerate() {
                opt.step_and_apply(&mut p, &mut g.clone(), it as u64, 0);
            }
            let same =
                |x: &[f32], y: &[f32]| x.iter().zip(y).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(
                same(&p, &p_ref),
                "{u:?} at {threads} threads: parameters differ"
            );
            assert!(
                same(opt.state(), reference.state()),
                "{u:?} at {threads} threads: state differs"
            );
        }
    }
    ferrodl_tensor::set_num_threads(ferrodl_tensor::default_num_threads());
}

/// Weight decay in the updater's pass: `step_with_decay` gives exactly (bit for bit) what
/// `step`, then `axpy(k, params, update)` on each block with `k != 0`, then (with `apply`)
/// `params -= update` on each block give — for every updater, at 1, 2 and 3 threads, with blocks
/// longer than the pass's cache-sized chunk, a block without decay, and a gap between blocks
/// (left alone in both vectors).
#[test]
fn step_with_decay_equals_the_three_passes() {
    let all = super::every_updater();
    // 40,000 + 7 + (a gap of 5) + 20,001 parameters; the decay pass works in chunks of 16,384
    let ranges = [0..40_000, 40_000..40_007, 40_012..60_013];
    let decay = [1e-3f32, 0.0, 2e-2];
    let n = 60_013;
    let mut rng = ferrodl_tensor::Rng::new(12);
    let mut p0 = vec![0f32; n];
    rng.fill_normal(&mut p0, 0.1);
    p0[3] = -0.0;
    p0[40_013] = 1e30;
    let grads: Vec<Vec<f32>> = (0..3)
        .map(|_| {
            let mut g = vec![0f32; n];
            rng.fill_normal(&mut g, 0.01);
            g
        })
        .collect();
    let same = |x: &[f32], y: &[f32]| x.iter().zip(y).all(|(x, y)| x.to_bits() == y.to_bits());
    for u in &all {
        let blocks: Vec<_> = ranges.iter().map(|r| (r.clone(), u.clone())).collect();
        for apply in [true, false] {
            ferrodl_tensor::set_num_threads(1);
            let mut reference = Optimizer::<f32>::new(blocks.clone());
            let (mut p_ref, mut g_ref) = (p0.clone(), Vec::new());
            for (it, g) in grads.iter().enumerate() {
                g_ref = g.clone();
                reference.step(&mut g_ref, it as u64, 0);
                for (r, &k) in ranges.iter().zip(&decay) {
                    if k != 0.0 {
                        ferrodl_tensor::axpy(k, &p_ref[r.clone()], &mut g_ref[r.clone()]);
                    }
                    if apply {
                        ferrodl_tensor::sub_assign(&mut p_ref[r.clone()], &g_ref[r.clone()]);
                    }
                }
            }
            for threads in [1, 2, 3] {
                ferrodl_tensor::set_num_threads(threads);
                let mut opt = Optimizer::<f32>::new(blocks.clone());
                let (mut p, mut g_last) = (p0.clone(), Vec::new());
                for (it, g) in grads.iter().enumerate() {
                    g_last = g.clone();
                    opt.step_with_decay(&mut p, &mut g_last, &decay, apply, it as u64, 0);
                }
                let what = format!("{u:?}, apply {apply}, {threads} threads");
                assert!(same(&p, &p_ref), "{what}: parameters differ");
                assert!(same(&g_last, &g_ref), "{what}: updates differ");
                assert!(
                    same(opt.state(), reference.state()),
                    "{what}: state differs"
                );
                if !apply {
                    assert!(same(&p, &p0), "{what}: parameters moved");
                }
            }
        }
    }
    ferrodl_tensor::set_num_threads(ferrodl_tensor::default_num_threads());
}

/// The element kernels run compiled for the CPU's vector width (`ferrodl_tensor::vectorized`):
/// every width this CPU supports gives exactly the bits of the baseline build, for every updater,
/// in f32 and f64, with and without the fused subtraction, over lengths with vector tails and
/// gradients holding zeros, negative zeros, subnormals, huge values, infinities and NaN.
#[test]
fn every_vector_width_is_bit_identical_to_the_baseline() {
    fn check<T: ferrodl_tensor::Scalar>(bits: impl Fn(T) -> u64) {
        let all = super::every_updater();
        let widths = ferrodl_tensor::supported_vector_isas();
        let mut rng = ferrodl_tensor::Rng::new(5);
        for n in [1usize, 15, 17, 33, 1000, 40_961] {
            let mut p0 = vec![T::zero(); n];
            rng.fill_normal(&mut p0, 0.1);
            let grads: Vec<Vec<T>> = (0..3)
                .map(|_| {
                    let mut g = vec![T::zero(); n];
                    rng.fill_normal(&mut g, 0.01);
                    let special = [
                        T::zero(),
                        -T::zero(),
                        T::min_positive_value() / T::of(4.0),
                        T::of(1e30),
                        T::infinity(),
                        T::nan(),
                    ];
                    for (i, s) in special.into_iter().enumerate() {
                        if 3 * i + 1 < n {
                            g[3 * i + 1] = s;
                        }
                    }
                    g
                })
                .collect();
            for u in &all {
                let mut results = Vec::new();
                for &isa in &widths {
                    let mut p = p0.clone();
                    let mut state = vec![T::zero(); u.state_len(n)];
                    u.init_state(&mut state);
                    let mut updates = Vec::new();
                    for (it, g) in grads.iter().enumerate() {
                        let mut g = g.clone();
                        // odd iterations: the update alone; even: fused with the subtraction
                        let params = (it % 2 == 0).then_some(&mut p[..]);
                        crate::run_block_with(isa, u, params, &mut g, &mut state, it as u64, 0);
                        updates.extend(g);
                    }
                    let b = |v: &[T]| v.iter().map(|&x| bits(x)).collect::<Vec<u64>>();
                    results.push((isa, b(&p), b(&state), b(&updates)));
                }
                let base = &results[0];
                for r in &results[1..] {
                    assert!(
                        r.1 == base.1 && r.2 == base.2 && r.3 == base.3,
                        "{u:?}, {} values, {} differs from {}",
                        n,
                        r.0.name(),
                        base.0.name()
                    );
                }
            }
        }
    }
    check::<f32>(|x| x.to_bits() as u64);
    check::<f64>(|x| x.to_bits());
}

#[test]
#[should_panic(expected = "in parameter order")]
fn blocks_out_of_order_are_refused() {
    let adam = AnyUpdater::Adam(Adam::default());
    let _ = Optimizer::<f32>::new(vec![(5..9, adam.clone()), (0..5, adam)]);
}
