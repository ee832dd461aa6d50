//! The one-pass encode (`ThresholdEncoder::encode_update`) against the two-pass encode it
//! replaced (`encode_update_two_pass`): on seeded random update sequences two encoders, one per
//! path, must give the same message bytes, stats, residual (bit for bit, signed zeros included),
//! threshold state and errors at every step, and a refused update (NaN, an infinity, an overflow
//! of residual + update) must leave the one-pass encoder exactly as it was, its next encodes
//! included (the update is checked before the residual changes, and a sum that could overflow
//! is formed in a copy of the residual).

use ferrodl_comm::{
    AdaptiveConfig, CodecError, FixedConfig, ResidualClippingPostProcessor,
    ResidualPostProcessorConfig, TargetSparsityConfig, ThresholdAlgorithmConfig, ThresholdEncoder,
};
use ferrodl_testutil::Rng;

fn below(rng: &mut Rng, n: u64) -> u64 {
    rng.next_u64() % n
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// One update for threshold scale `t`: mostly small entries, some exact zeros of either sign,
/// some exactly at ±t and ±2t, some far above; now and then a dense step (bitmap messages) or an
/// all-zero one.
fn update(rng: &mut Rng, n: usize, t: f32) -> Vec<f32> {
    let kind = below(rng, 10);
    (0..n)
        .map(|_| {
            let sign = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
            let m = match (kind, below(rng, 40)) {
                (0, _) => 0.0,
                (1, _) => t * rng.uniform(0.5, 4.0) as f32,
                (_, 0) => 0.0,
                (_, 1) => t,
                (_, 2) => 2.0 * t,
                (_, 3) => t * rng.uniform(1.0, 20.0) as f32,
                _ => t * rng.uniform(0.0, 0.4) as f32,
            };
            sign * m
        })
        .collect()
}

fn algorithms(rng: &mut Rng) -> Vec<(ThresholdAlgorithmConfig, f32)> {
    let t = 10f64.powf(rng.uniform(-5.0, -2.0));
    vec![
        (
            ThresholdAlgorithmConfig::Fixed(FixedConfig { threshold: t }),
            t as f32,
        ),
        (
            ThresholdAlgorithmConfig::Adaptive(AdaptiveConfig {
                initial_threshold: t,
                ..AdaptiveConfig::default()
            }),
            t as f32,
        ),
        (
            ThresholdAlgorithmConfig::TargetSparsity(TargetSparsityConfig {
                initial_threshold: t,
                ..TargetSparsityConfig::default()
            }),
            t as f32,
        ),
    ]
}

fn post_processors() -> Vec<ResidualPostProcessorConfig> {
    let clip = |threshold_multiple, frequency| {
        ResidualPostProcessorConfig::Clipping(ResidualClippingPostProcessor {
            threshold_multiple,
            frequency,
        })
    };
    // The default; the clip bound equal to t; below t (the whole residual is clipped, not only
    // the sent entries); none.
    vec![
        clip(5.0, 5),
        clip(1.0, 2),
        clip(0.5, 1),
        ResidualPostProcessorConfig::NoOp,
    ]
}

fn assert_same(a: &ThresholdEncoder, b: &ThresholdEncoder, what: &str) {
    assert_eq!(
        bits(a.residual()),
        bits(b.residual()),
        "{what}: residuals differ"
    );
    assert_eq!(
        a.threshold_state(),
        b.threshold_state(),
        "{what}: threshold states differ"
    );
    assert_eq!(a.last_stats(), b.last_stats(), "{what}: last stats differ");
    assert_eq!(
        a.debug_stats(),
        b.debug_stats(),
        "{what}: debug stats differ"
    );
}

#[test]
fn one_pass_encodes_as_the_two_pass_encode_did() {
    let mut rng = Rng::new(0x0E1C_0DE5);
    let mut steps = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for n in [1usize, 63, 64, 65, 130, 1000, 4097, 20_000] {
        for (algorithm, t) in algorithms(&mut rng) {
            for post in post_processors() {
                let make = || ThresholdEncoder::new(n, algorithm, post, None).unwrap();
                let (mut one, mut two) = (make(), make());
                let (mut out1, mut out2) = (vec![7u8], vec![7u8]);
                for it in 0..24u64 {
                    let u = update(&mut rng, n, t);
                    let what = format!("n {n}, {algorithm:?}, {post:?}, iteration {it}");
                    let a = one.encode_update(&u, it, 0, &mut out1).unwrap();
                    let b = two.encode_update_two_pass(&u, it, 0, &mut out2).unwrap();
                    assert_eq!(a, b, "{what}: stats differ");
                    assert_eq!(out1, out2, "{what}: messages differ");
                    assert_same(&one, &two, &what);
                    kinds.insert(format!("{:?}{}", a.encoding, a.entries.min(1)));
                    steps += 1;
                }
            }
        }
    }
    // Every path was taken: Rice with and without entries, and the bitmap.
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["Bitmap1", "Rice0", "Rice1"],
        "after {steps} steps"
    );
}

#[test]
fn a_refused_update_changes_nothing_in_either_encode() {
    let mut rng = Rng::new(0xBAD_0B0E);
    for n in [1usize, 64, 65, 5000] {
        for post in post_processors() {
            let t = 1e-3f32;
            let algorithm = ThresholdAlgorithmConfig::Adaptive(AdaptiveConfig {
                initial_threshold: 1e-3,
                ..AdaptiveConfig::default()
            });
            let make = || ThresholdEncoder::new(n, algorithm, post, None).unwrap();
            let (mut one, mut two) = (make(), make());
            let (mut out1, mut out2) = (Vec::new(), Vec::new());
            for it in 0..30u64 {
                let mut u = update(&mut rng, n, t);
                let bad = it % 3 == 2;
                if bad {
                    // One bad entry (or two: the first is named) anywhere, the rest as usual.
                    let i = below(&mut rng, n as u64) as usize;
                    u[i] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][it as usize % 3];
                    if n > 1 && it % 2 == 0 {
                        let j = below(&mut rng, n as u64) as usize;
                        u[j] = f32::NAN;
                    }
                }
                let before = (
                    bits(one.residual()),
                    one.threshold_state(),
                    one.last_stats().copied(),
                );
                let what = format!("n {n}, {post:?}, iteration {it}");
                out1.push(1);
                let a = one.encode_update(&u, it, 0, &mut out1);
                let b = two.encode_update_two_pass(&u, it, 0, &mut out2);
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        assert!(!bad, "{what}: a bad update was accepted");
                        assert_eq!(a, b, "{what}");
                        assert_eq!(out1, out2, "{what}");
                    }
                    (Err(a), Err(b)) => {
                        assert!(bad, "{what}: {a}");
                        assert_eq!(a.to_string(), b.to_string(), "{what}");
                        assert!(out1.is_empty(), "{what}: a refused update left bytes");
                        let after = (
                            bits(one.residual()),
                            one.threshold_state(),
                            one.last_stats().copied(),
                        );
                        assert_eq!(
                            before, after,
                            "{what}: a refused update changed the encoder"
                        );
                    }
                    (a, b) => panic!("{what}: {a:?} against {b:?}"),
                }
                assert_same(&one, &two, &what);
            }
        }
    }
}

#[test]
fn an_overflowing_sum_is_refused_and_changes_nothing() {
    // Residual entries near f32::MAX (a huge fixed threshold, nothing sent): adding more overflows.
    for n in [3usize, 64, 200] {
        let make = || {
            ThresholdEncoder::new(
                n,
                ThresholdAlgorithmConfig::Fixed(FixedConfig { threshold: 1e30 }),
                ResidualPostProcessorConfig::NoOp,
                None,
            )
            .unwrap()
        };
        let (mut one, mut two) = (make(), make());
        let mut out = Vec::new();
        let mut u: Vec<f32> = (0..n).map(|i| i as f32 * 1e-3).collect();
        u[n - 1] = 3e38;
        u[n / 2] = -3e38;
        one.encode_update(&u, 0, 0, &mut out).unwrap();
        two.encode_update_two_pass(&u, 0, 0, &mut out).unwrap();
        let before = bits(one.residual());
        // Entry n/2 overflows downwards first (entry n-1 too, later).
        let mut v = vec![1.0f32; n];
        v[n / 2] = -3e38;
        v[n - 1] = 3e38;
        let a = one.encode_update(&v, 1, 0, &mut out).unwrap_err();
        let b = two.encode_update_two_pass(&v, 1, 0, &mut out).unwrap_err();
        assert!(
            matches!(a, CodecError::Overflow { index, .. } if index == n / 2),
            "{a}"
        );
        assert_eq!(a.to_string(), b.to_string());
        assert_eq!(bits(one.residual()), before);
        // And the next good update is encoded from the unchanged residual by both.
        let (mut o1, mut o2) = (Vec::new(), Vec::new());
        let w = vec![2e30f32; n];
        assert_eq!(
            one.encode_update(&w, 2, 0, &mut o1).unwrap(),
            two.encode_update_two_pass(&w, 2, 0, &mut o2).unwrap()
        );
        assert_eq!(o1, o2);
        assert_same(&one, &two, "after the overflow");
    }
}

/// The encoder adds an update into its residual in place when no sum can overflow (its bound of
/// `|r|` plus the update's largest `|u|` stays below `f32::MAX`), else on a copy. Sums that could
/// overflow but do not, and the bound falling back to "unknown" after a two-pass encode or a
/// whole-residual clip, must give the two-pass results exactly, on either path.
#[test]
fn the_copy_and_in_place_paths_agree_with_the_two_pass_encode() {
    for post in [ResidualPostProcessorConfig::NoOp, ResidualPostProcessorConfig::default()] {
        for n in [3usize, 64, 200] {
            let make = || {
                ThresholdEncoder::new(
                    n,
                    ThresholdAlgorithmConfig::Fixed(FixedConfig { threshold: 1e30 }),
                    post,
                    None,
                )
                .unwrap()
            };
            let (mut one, mut two) = (make(), make());
            let (mut o1, mut o2) = (Vec::new(), Vec::new());
            fn step(u: &[f32], i: u64, what: &str, one: &mut ThresholdEncoder, two: &mut ThresholdEncoder) {
                let (mut o1, mut o2) = (Vec::new(), Vec::new());
                let a = one.encode_update(u, i, 0, &mut o1).unwrap();
                let b = two.encode_update_two_pass(u, i, 0, &mut o2).unwrap();
                assert_eq!(a, b, "{what}: stats");
                assert_eq!(o1, o2, "{what}: bytes");
                assert_same(one, two, what);
            }
            // residual entries of ±2e38 (bound 2e38), then updates of ∓1.5e38: 3.5e38 > f32::MAX,
            // so the copy path, though every sum is finite
            let big: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { 2e38 } else { -2e38 }).collect();
            step(&big, 1, "residual near f32::MAX", &mut one, &mut two);
            let back: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { -1.5e38 } else { 1.5e38 }).collect();
            step(&back, 2, "a sum that could overflow (copy path)", &mut one, &mut two);
            // small updates: in place again
            let small: Vec<f32> = (0..n).map(|i| (i as f32 - 7.0) * 3e29).collect();
            step(&small, 3, "small update (in place)", &mut one, &mut two);
            // iteration 5: the clipping processor clips every entry; later encodes still agree
            step(&small, 5, "clipping iteration", &mut one, &mut two);
            step(&back, 6, "after clipping", &mut one, &mut two);
            // a two-pass encode on `one` too makes its bound unknown: the next one-pass encode
            // takes the copy path and gives the same results
            let a = one.encode_update_two_pass(&small, 7, 0, &mut o1).unwrap();
            let b = two.encode_update_two_pass(&small, 7, 0, &mut o2).unwrap();
            assert_eq!((a, &o1), (b, &o2));
            step(&small, 8, "after a two-pass encode", &mut one, &mut two);
        }
    }
}

#[test]
fn subtract_last_sent_applies_the_message_exactly_as_decode_add_does() {
    let mut rng = Rng::new(0x5E17_0BAD);
    let (mut noted, mut not_noted) = (0, 0);
    for n in [1usize, 64, 65, 1000, 4097, 20_000] {
        for (algorithm, t) in algorithms(&mut rng) {
            let post = post_processors()[below(&mut rng, 4) as usize];
            let mut enc = ThresholdEncoder::new(n, algorithm, post, None).unwrap();
            // parameters of every kind of sign and size, signed zeros included (a decode must not
            // touch what the message does not name)
            let mut params: Vec<f32> = (0..n)
                .map(|i| match i % 7 {
                    0 => -0.0,
                    1 => 0.0,
                    _ => rng.uniform(-1.0, 1.0) as f32,
                })
                .collect();
            let mut out = Vec::new();
            for it in 0..20u64 {
                let u = update(&mut rng, n, t);
                let stats = enc.encode_update(&u, it, 0, &mut out).unwrap();
                let mut decoded = params.clone();
                ferrodl_comm::decode_add(&out, -1.0, &mut decoded).unwrap();
                let applied = enc.subtract_last_sent(&mut params).unwrap();
                let what = format!("n {n}, {algorithm:?}, iteration {it}, {:?}", stats.encoding);
                assert_eq!(applied, stats.encoding == ferrodl_comm::Encoding::Rice, "{what}");
                if applied {
                    noted += 1;
                } else {
                    not_noted += 1;
                    ferrodl_comm::decode_add(&out, -1.0, &mut params).unwrap();
                }
                assert_eq!(bits(&params), bits(&decoded), "{what}: parameters differ");
            }
            // nothing is noted by the two-pass encode, nor kept from before a refused update
            enc.encode_update(&update(&mut rng, n, t), 20, 0, &mut out).unwrap();
            let mut bad = update(&mut rng, n, t);
            bad[n / 2] = f32::NAN;
            assert!(enc.encode_update(&bad, 21, 0, &mut out).is_err());
            let before = bits(&params);
            assert!(!enc.subtract_last_sent(&mut params).unwrap());
            enc.encode_update_two_pass(&update(&mut rng, n, t), 22, 0, &mut out).unwrap();
            assert!(!enc.subtract_last_sent(&mut params).unwrap());
            assert_eq!(bits(&params), before, "nothing applied");
            // another length is refused, as decode_add refuses it
            let err = enc.subtract_last_sent(&mut vec![0.0; n + 1]).unwrap_err();
            assert!(matches!(err, CodecError::ParamCountMismatch { .. }), "{err}");
        }
    }
    assert!(noted > 100 && not_noted > 5, "both paths taken: {noted} noted, {not_noted} bitmap");
}
