//! Property tests of the codec and the encoder over many seeded random cases.
//!
//! Tolerances. The codec's only arithmetic on a sent entry is one `f32` subtraction `r - t` (or
//! `r + t`), so `decoded + new residual` equals the old residual:
//! * exactly when `|r| <= 2t`: then `t <= |r| <= 2t` and Sterbenz's lemma makes `|r| - t` exact;
//! * within half an ulp otherwise, bounded by `ε/2 · |r|` (ε = `f32::EPSILON`), since the exact
//!   difference has magnitude below `|r|`.
//!
//! Unsent entries are untouched, bit for bit. The encoder adds one more rounding, `r + u`, of at
//! most `ε/2 · |r + u| <= ε/2 · (|r| + |u|)`, so there the bound is `ε · (|r| + |u|)`. The sums in
//! the checks are done in `f64`, where the sum of two `f32` values of these magnitudes is exact
//! or off by far less than the bounds.

use ferrodl_comm::{
    choose_encoding, decode_add, encode, encode_as, read_header, rice, varint, CodecError, EncodeStats,
    Encoding, NoOpResidualPostProcessor, ResidualPostProcessorConfig, ThresholdAlgorithm,
    ThresholdAlgorithmConfig, ThresholdEncoder, ThresholdState, VectorKind,
};
use ferrodl_testutil::Rng;

const EPS: f64 = f32::EPSILON as f64;

fn below(rng: &mut Rng, n: u64) -> u64 {
    rng.next_u64() % n
}

/// Threshold log-uniform in [1e-6, 1e-1].
fn random_threshold(rng: &mut Rng) -> f32 {
    10f64.powf(rng.uniform(-6.0, -1.0)) as f32
}

/// A magnitude that qualifies for threshold `t`: exactly `t`, exactly `2t`, just above `2t`,
/// in `(t, 2t)`, or far above.
fn qualifying(rng: &mut Rng, t: f32) -> f32 {
    match below(rng, 6) {
        0 => t,
        1 => 2.0 * t,
        2 => f32::from_bits((2.0 * t).to_bits() + 1),
        3 => (f64::from(t) * rng.uniform(1.0, 2.0)) as f32,
        4 => (f64::from(t) * rng.uniform(2.0, 8.0)) as f32,
        _ => (f64::from(t) * 10f64.powf(rng.uniform(1.0, 6.0))) as f32,
    }
    .max(t)
}

/// A magnitude below `t`: 0, just below `t`, or uniform in `[0, t)`.
fn non_qualifying(rng: &mut Rng, t: f32) -> f32 {
    match below(rng, 5) {
        0 => 0.0,
        1 => f32::from_bits(t.to_bits() - 1),
        2 => (f64::from(t) * rng.uniform(0.5, 1.0)) as f32,
        _ => (f64::from(t) * rng.next_f64()) as f32,
    }
    .min(f32::from_bits(t.to_bits() - 1))
}

fn signed(rng: &mut Rng, magnitude: f32) -> f32 {
    if rng.next_u64() & 1 == 0 {
        magnitude
    } else {
        -magnitude
    }
}

/// A residual of `n` entries where each qualifies with probability `p`.
fn random_residual(rng: &mut Rng, n: usize, t: f32, p: f64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let m = if rng.next_f64() < p {
                qualifying(rng, t)
            } else {
                non_qualifying(rng, t)
            };
            signed(rng, m)
        })
        .collect()
}

/// A residual of `n` entries with exactly `k` qualifying ones at random positions.
fn residual_with_count(rng: &mut Rng, n: usize, t: f32, k: usize) -> Vec<f32> {
    let mut r: Vec<f32> = (0..n)
        .map(|_| {
            let m = non_qualifying(rng, t);
            signed(rng, m)
        })
        .collect();
    // Partial Fisher-Yates picks k distinct positions.
    let mut positions: Vec<usize> = (0..n).collect();
    for i in 0..k {
        let j = i + below(rng, (n - i) as u64) as usize;
        positions.swap(i, j);
        let m = qualifying(rng, t);
        r[positions[i]] = signed(rng, m);
    }
    r
}

/// The writer's rule, computed independently: the Rice parameter with the smallest size bound
/// `k (n + 2) + ((P - n) >> k)`, and Rice iff that bound in bytes is at most 3/4 of the bitmap.
fn expected_encoding(p: u64, n: u64) -> (Encoding, u8) {
    if n == 0 {
        return (Encoding::Rice, 0);
    }
    let bound = |k: u8| n * (u64::from(k) + 2) + ((p - n) >> k);
    let k = (0..=63u8).min_by_key(|&k| bound(k)).unwrap();
    if 4 * bound(k).div_ceil(8) <= 3 * 4 * p.div_ceil(16) {
        (Encoding::Rice, k)
    } else {
        (Encoding::Bitmap, 0)
    }
}

/// The exact Rice payload size of the entries of `residual` with `|r| >= t`: per entry its gap's
/// quotient in unary (`q + 1` bits), `k` remainder bits and a sign bit, in whole bytes.
fn rice_payload_len(residual: &[f32], t: f32, k: u8) -> usize {
    let mut bits = 0u64;
    let mut next = 0u64;
    for (j, x) in residual.iter().enumerate() {
        if x.abs() >= t {
            let gap = j as u64 - next;
            bits += (gap >> k) + 1 + u64::from(k) + 1;
            next = j as u64 + 1;
        }
    }
    bits.div_ceil(8) as usize
}

/// Encodes `residual` with `t` (in the chosen kind, or in `force`) and checks everything the
/// format and the semantics promise.
fn check_encode_as(
    residual: &[f32],
    t: f32,
    force: Option<Encoding>,
    out: &mut Vec<u8>,
) -> EncodeStats {
    let n = residual.len();
    let old = residual.to_vec();
    let mut r = residual.to_vec();
    let stats = match force {
        None => encode(&mut r, t, out).unwrap(),
        Some(kind) => encode_as(&mut r, t, kind, out).unwrap(),
    };
    let k = old.iter().filter(|x| x.abs() >= t).count() as u64;

    assert_eq!(stats.entries, k);
    assert_eq!(stats.threshold, t);
    assert_eq!(stats.param_count, n as u64);
    let (chosen, chosen_k) = expected_encoding(n as u64, k);
    assert_eq!((chosen, chosen_k), choose_encoding(n as u64, k));
    let kind = force.unwrap_or(chosen);
    assert_eq!(stats.encoding, kind);
    let h = read_header(out).unwrap();
    let rice_k = if kind == Encoding::Rice {
        rice::parameter(n as u64, k)
    } else {
        0
    };
    assert_eq!(
        (h.kind, h.param_count, h.entry_count, h.threshold, h.rice_k),
        (kind, n as u64, k, t, rice_k)
    );
    let payload = match kind {
        Encoding::Rice => {
            let len = rice_payload_len(&old, t, rice_k);
            assert!(len as u64 <= rice::max_bits(n as u64, k, rice_k).div_ceil(8));
            len
        }
        Encoding::Bitmap => 4 * n.div_ceil(16),
        Encoding::Sparse => unreachable!("not written"),
    };
    let (_, header_len) = ferrodl_comm::parse_header(out).unwrap();
    assert_eq!(header_len, 2 + varint::len(n as u64) + varint::len(k) + 4);
    assert_eq!(stats.bytes, header_len + payload);
    assert_eq!(out.len(), stats.bytes);
    assert_eq!(
        stats.sparsity,
        if n == 0 { 0.0 } else { k as f64 / n as f64 }
    );

    let mut decoded = vec![0.0f32; n];
    decode_add(out, 1.0, &mut decoded).unwrap();
    for j in 0..n {
        let (o, d, nr) = (old[j], decoded[j], r[j]);
        if o.abs() >= t {
            assert_eq!(d, t.copysign(o), "entry {j}: old {o}, t {t}");
            let diff = (f64::from(d) + f64::from(nr) - f64::from(o)).abs();
            if o.abs() <= 2.0 * t {
                assert_eq!(
                    diff, 0.0,
                    "entry {j}: old {o}, t {t}, new {nr} (Sterbenz case must be exact)"
                );
            } else {
                assert!(
                    diff <= EPS / 2.0 * f64::from(o.abs()),
                    "entry {j}: old {o}, t {t}, new {nr}, diff {diff}"
                );
            }
            // What stays is smaller than what was there.
            assert!(nr.abs() < o.abs() || o.abs() == 0.0);
        } else {
            assert_eq!(d.to_bits(), 0.0f32.to_bits(), "entry {j} must decode to +0");
            assert_eq!(
                nr.to_bits(),
                o.to_bits(),
                "unsent entry {j} must be untouched"
            );
        }
    }
    stats
}

fn check_encode(residual: &[f32], t: f32, out: &mut Vec<u8>) -> EncodeStats {
    check_encode_as(residual, t, None, out)
}

#[test]
fn random_cases_hold_the_invariant_on_every_path() {
    let mut rng = Rng::new(0x5EED_C0DE);
    let mut out = Vec::new();
    let (mut empty, mut rice, mut bitmap) = (0, 0, 0);
    for case in 0..1500 {
        let n = 1 + below(&mut rng, 5000) as usize;
        let t = random_threshold(&mut rng);
        // Fractions of qualifying entries from none to all, across the switch point (~1/2).
        let p = match case % 6 {
            0 => 0.0,
            1 => rng.uniform(0.0, 1.0 / 64.0),
            2 => rng.uniform(1.0 / 32.0, 1.0 / 8.0),
            3 => rng.uniform(0.4, 0.6),
            4 => rng.uniform(0.0, 1.0),
            _ => 1.0,
        };
        let residual = random_residual(&mut rng, n, t, p);
        let stats = check_encode(&residual, t, &mut out);
        match (stats.encoding, stats.entries) {
            (Encoding::Rice, 0) => empty += 1,
            (Encoding::Rice, _) => rice += 1,
            (Encoding::Bitmap, _) => bitmap += 1,
            (Encoding::Sparse, _) => panic!("the version 1 sparse kind is not written"),
        }
        // The same residual forced through the other kind holds the same invariant.
        let other = match stats.encoding {
            Encoding::Rice => Encoding::Bitmap,
            _ => Encoding::Rice,
        };
        check_encode_as(&residual, t, Some(other), &mut out);
    }
    assert!(
        empty >= 250 && rice >= 500 && bitmap >= 250,
        "coverage: {empty} empty, {rice} rice, {bitmap} bitmap"
    );
}

#[test]
fn the_exact_switch_point_and_small_sizes() {
    let mut rng = Rng::new(16);
    let mut out = Vec::new();
    let mut sizes: Vec<usize> = (1..=70).collect();
    sizes.extend([255, 256, 257, 1023, 1024, 1025, 4999, 5000]);
    for _ in 0..100 {
        sizes.push(1 + below(&mut rng, 5000) as usize);
    }
    let mut switches = 0;
    for &n in &sizes {
        let t = random_threshold(&mut rng);
        // The largest count still written as Rice (the bound grows with the count).
        let last_rice = (0..=n as u64)
            .rev()
            .find(|&k| expected_encoding(n as u64, k).0 == Encoding::Rice)
            .unwrap() as usize;
        for k in [
            0,
            1,
            2,
            last_rice.saturating_sub(1),
            last_rice,
            last_rice + 1,
            n,
        ] {
            if k > n {
                continue;
            }
            let residual = residual_with_count(&mut rng, n, t, k);
            let stats = check_encode(&residual, t, &mut out);
            let want = if k <= last_rice {
                Encoding::Rice
            } else {
                Encoding::Bitmap
            };
            assert_eq!(stats.encoding, want, "n {n}, k {k}");
            if k == last_rice + 1 {
                switches += 1;
            }
        }
    }
    assert!(switches > 100, "{switches} sizes crossed the switch");
}

#[test]
fn signs_are_treated_symmetrically() {
    let mut rng = Rng::new(7);
    let mut out_a = Vec::new();
    let mut out_b = Vec::new();
    for case in 0..300 {
        let n = 1 + below(&mut rng, 3000) as usize;
        let t = random_threshold(&mut rng);
        let p = if case % 2 == 0 { 0.02 } else { 0.5 };
        let mut a = random_residual(&mut rng, n, t, p);
        let mut b: Vec<f32> = a.iter().map(|x| -x).collect();
        let sa = encode(&mut a, t, &mut out_a).unwrap();
        let sb = encode(&mut b, t, &mut out_b).unwrap();
        assert_eq!(
            (sa.entries, sa.encoding, sa.bytes),
            (sb.entries, sb.encoding, sb.bytes)
        );
        for j in 0..n {
            // Equal as numbers: t - t and -t + t are both +0, so only zeros may differ in sign.
            assert_eq!(a[j], -b[j], "residual {j}");
        }
        let mut da = vec![0.0f32; n];
        let mut db = vec![0.0f32; n];
        decode_add(&out_a, 1.0, &mut da).unwrap();
        decode_add(&out_b, -1.0, &mut db).unwrap();
        assert_eq!(da, db);
    }
}

#[test]
fn decode_add_scales_and_accumulates() {
    let mut rng = Rng::new(99);
    let mut out = Vec::new();
    for case in 0..200 {
        let n = 1 + below(&mut rng, 2000) as usize;
        let t = random_threshold(&mut rng);
        let mut r = random_residual(&mut rng, n, t, if case % 2 == 0 { 0.01 } else { 0.3 });
        let sent: Vec<f32> = r
            .iter()
            .map(|x| if x.abs() >= t { t.copysign(*x) } else { 0.0 })
            .collect();
        encode(&mut r, t, &mut out).unwrap();
        let base: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0) as f32).collect();
        let mut target = base.clone();
        decode_add(&out, -1.0, &mut target).unwrap();
        for j in 0..n {
            // One f32 operation per entry, as the same expression here.
            assert_eq!(
                target[j],
                if sent[j] == 0.0 {
                    base[j]
                } else {
                    base[j] - sent[j]
                }
            );
        }
    }
}

/// Hands out a scripted sequence of thresholds (repeated encodes with changing `t`).
#[derive(Debug)]
struct Scripted {
    thresholds: Vec<f32>,
    next: usize,
}

impl ThresholdAlgorithm for Scripted {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn threshold(&mut self, _iteration: u64, _epoch: u64) -> f32 {
        self.current_threshold()
    }
    fn current_threshold(&self) -> f32 {
        self.thresholds[self.next % self.thresholds.len()]
    }
    fn observe(&mut self, _stats: &EncodeStats) {
        self.next += 1;
    }
    fn state(&self) -> ThresholdState {
        ThresholdState {
            algorithm: "fixed".into(),
            threshold: f64::from(self.current_threshold()),
        }
    }
    fn set_state(&mut self, _state: &ThresholdState) -> Result<bool, ferrodl_comm::ConfigError> {
        Ok(false)
    }
}

/// Runs `steps` encodes and checks the per-step invariant and the telescoped sum over all steps.
fn run_encoder(
    rng: &mut Rng,
    encoder: &mut ThresholdEncoder,
    steps: u64,
    scale_of_step: impl Fn(u64) -> f64,
) {
    let n = encoder.param_count();
    let mut out = Vec::new();
    let mut total_sent = vec![0.0f64; n];
    let mut total_update = vec![0.0f64; n];
    let mut total_tolerance = vec![0.0f64; n];
    for step in 0..steps {
        let scale = scale_of_step(step);
        let update: Vec<f32> = (0..n)
            .map(|_| {
                if rng.next_f64() < 0.3 {
                    0.0
                } else {
                    (rng.next_gaussian() * scale) as f32
                }
            })
            .collect();
        let old = encoder.residual().to_vec();
        let before = encoder.current_threshold();
        let stats = encoder.encode_update(&update, step, 0, &mut out).unwrap();
        let t = stats.threshold;
        // The first encode of a fresh adapting encoder may calibrate its threshold.
        if step > 0 {
            assert_eq!(t, before);
        }
        let mut decoded = vec![0.0f32; n];
        decode_add(&out, 1.0, &mut decoded).unwrap();
        let new = encoder.residual();
        let mut entries = 0;
        for j in 0..n {
            let sum = old[j] + update[j]; // the encoder's own f32 addition
            if sum.abs() >= t {
                entries += 1;
                assert_eq!(decoded[j], t.copysign(sum), "step {step} entry {j}");
            } else {
                assert_eq!(decoded[j], 0.0);
                assert_eq!(
                    new[j].to_bits(),
                    sum.to_bits(),
                    "step {step} entry {j}: unsent entries keep r + u"
                );
            }
            let expect = f64::from(old[j]) + f64::from(update[j]);
            let got = f64::from(decoded[j]) + f64::from(new[j]);
            let tol = EPS * (f64::from(old[j].abs()) + f64::from(update[j].abs()));
            assert!(
                (got - expect).abs() <= tol,
                "step {step} entry {j}: {got} vs {expect} (tol {tol})"
            );
            total_sent[j] += f64::from(decoded[j]);
            total_update[j] += f64::from(update[j]);
            total_tolerance[j] += tol;
        }
        assert_eq!(stats.entries, entries);
    }
    let r = encoder.residual();
    for j in 0..n {
        // Nothing lost, only delayed: everything sent plus what remains is everything added.
        let diff = (total_sent[j] + f64::from(r[j]) - total_update[j]).abs();
        assert!(
            diff <= total_tolerance[j] + 1e-12 * total_update[j].abs(),
            "entry {j}: diff {diff}"
        );
    }
}

#[test]
fn repeated_encodes_with_changing_thresholds_lose_nothing() {
    let mut rng = Rng::new(2015);
    for case in 0..40 {
        let n = 1 + below(&mut rng, 3000) as usize;
        let thresholds: Vec<f32> = (0..7).map(|_| random_threshold(&mut rng)).collect();
        let algorithm = Box::new(Scripted {
            thresholds,
            next: case,
        });
        let mut encoder =
            ThresholdEncoder::from_parts(n, algorithm, Box::new(NoOpResidualPostProcessor));
        let base = 10f64.powf(rng.uniform(-6.0, -1.0));
        run_encoder(&mut rng, &mut encoder, 12, |step| {
            base * if step % 3 == 0 { 10.0 } else { 0.5 }
        });
    }
}

#[test]
fn adaptive_and_target_sparsity_encoders_lose_nothing() {
    let mut rng = Rng::new(4242);
    let configs = [
        r#"{"type":"adaptive","decayRate":0.5}"#,
        r#"{"type":"adaptive"}"#,
        r#"{"type":"targetSparsity","sparsityTarget":0.1,"decayRate":0.7}"#,
    ];
    for (case, config) in configs.iter().cycle().take(24).enumerate() {
        let n = 1 + below(&mut rng, 4000) as usize;
        let config = ThresholdAlgorithmConfig::from_json_str(config).unwrap();
        let mut encoder =
            ThresholdEncoder::new(n, config, ResidualPostProcessorConfig::NoOp, None).unwrap();
        let base = 10f64.powf(-1.0 - (case % 5) as f64);
        run_encoder(&mut rng, &mut encoder, 15, |step| base / (1 + step) as f64);
    }
}

#[test]
fn non_finite_updates_are_refused_naming_the_index_before_anything_changes() {
    let mut rng = Rng::new(0xBAD);
    let mut out = Vec::new();
    for case in 0..200 {
        let n = 1 + below(&mut rng, 5000) as usize;
        let mut encoder = ThresholdEncoder::new(
            n,
            ThresholdAlgorithmConfig::default(),
            ResidualPostProcessorConfig::default(),
            None,
        )
        .unwrap();
        let warm: Vec<f32> = (0..n)
            .map(|_| (rng.next_gaussian() * 1e-3) as f32)
            .collect();
        encoder.encode_update(&warm, 0, 0, &mut out).unwrap();
        let residual = encoder.residual().to_vec();
        let state = encoder.threshold_state();
        let debug = encoder.debug_stats();

        let mut update: Vec<f32> = (0..n)
            .map(|_| (rng.next_gaussian() * 1e-3) as f32)
            .collect();
        let bad = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][case % 3];
        let first = below(&mut rng, n as u64) as usize;
        update[first] = bad;
        if first + 1 < n && case % 2 == 0 {
            update[n - 1] = f32::NAN; // a later one too: the first is named
        }
        let err = encoder.encode_update(&update, 1, 0, &mut out).unwrap_err();
        match err {
            CodecError::NonFinite {
                vector: VectorKind::Update,
                index,
                value,
            } => {
                assert_eq!(index, first);
                assert_eq!(value.to_bits(), bad.to_bits());
            }
            other => panic!("unexpected error {other}"),
        }
        assert!(
            err.to_string()
                .starts_with(&format!("update entry {first} is ")),
            "{err}"
        );
        assert!(out.is_empty());
        let after = encoder.residual();
        assert!(residual
            .iter()
            .zip(after)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(encoder.threshold_state(), state);
        assert_eq!(encoder.debug_stats(), debug);
    }
}

#[test]
fn corrupted_messages_are_refused_or_applied_whole_never_half() {
    let mut rng = Rng::new(31337);
    let mut out = Vec::new();
    let (mut refused, mut accepted) = (0, 0);
    for case in 0..2000 {
        let n = 1 + below(&mut rng, 300) as usize;
        let t = random_threshold(&mut rng);
        let mut r = random_residual(&mut rng, n, t, if case % 2 == 0 { 0.03 } else { 0.4 });
        encode(&mut r, t, &mut out).unwrap();
        let mut msg = out.clone();
        match case % 4 {
            0 => {
                let at = below(&mut rng, msg.len() as u64) as usize;
                msg[at] ^= 1 << below(&mut rng, 8);
            }
            1 => {
                let at = below(&mut rng, msg.len() as u64) as usize;
                msg[at] = rng.next_u64() as u8;
            }
            2 => msg.truncate(below(&mut rng, msg.len() as u64) as usize),
            _ => msg.push(0),
        }
        let base: Vec<f32> = (0..n).map(|j| j as f32).collect();
        let mut target = base.clone();
        match decode_add(&msg, 1.0, &mut target) {
            Err(_) => {
                refused += 1;
                assert_eq!(target, base, "a refused message must not touch the target");
            }
            Ok(h) => {
                accepted += 1;
                // Whatever was accepted is a whole valid message: each entry moved by 0 or ±t.
                let moved = target.iter().zip(&base).filter(|(a, b)| a != b).count() as u64;
                assert!(moved <= h.entry_count);
            }
        }
    }
    assert!(refused > 1000, "{refused} refused, {accepted} accepted");
}

#[test]
fn a_million_parameters_on_both_paths() {
    let n = 1usize << 20;
    let mut rng = Rng::new(1 << 20);
    let mut out = Vec::new();
    let t = 1e-3f32;
    for p in [0.001, 0.9] {
        let residual = random_residual(&mut rng, n, t, p);
        let started = std::time::Instant::now();
        let mut r = residual.clone();
        let stats = encode(&mut r, t, &mut out).unwrap();
        let took = started.elapsed();
        assert_eq!(
            stats.encoding,
            if p < 0.01 {
                Encoding::Rice
            } else {
                Encoding::Bitmap
            }
        );
        let k = residual.iter().filter(|x| x.abs() >= t).count() as u64;
        assert_eq!(stats.entries, k);
        let mut decoded = vec![0.0f32; n];
        decode_add(&out, 1.0, &mut decoded).unwrap();
        for j in 0..n {
            if residual[j].abs() >= t {
                assert_eq!(decoded[j], t.copysign(residual[j]));
            } else {
                assert_eq!(decoded[j], 0.0);
                assert_eq!(r[j].to_bits(), residual[j].to_bits());
            }
        }
        eprintln!(
            "2^20 parameters, {k} entries, {:?}: encode {took:?}, {} bytes",
            stats.encoding, stats.bytes
        );
    }
    // The encoder reuses its buffers across steps.
    let mut encoder = ThresholdEncoder::new(
        n,
        ThresholdAlgorithmConfig::default(),
        ResidualPostProcessorConfig::default(),
        None,
    )
    .unwrap();
    let update: Vec<f32> = (0..n)
        .map(|_| (rng.next_gaussian() * 1e-3) as f32)
        .collect();
    for step in 0..3 {
        let stats = encoder.encode_update(&update, step, 0, &mut out).unwrap();
        assert_eq!(stats.bytes, out.len());
    }
}

/// A Rice message header with the given fields (version 2, kind 2).
fn rice_header(p: u64, n: u64, k: u8, t: f32) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(b"FRDU");
    m.extend_from_slice(&2u16.to_le_bytes());
    m.push(2);
    m.push(k);
    m.extend_from_slice(&p.to_le_bytes());
    m.extend_from_slice(&n.to_le_bytes());
    m.extend_from_slice(&t.to_le_bytes());
    m.extend_from_slice(&0u32.to_le_bytes());
    m
}

#[test]
fn random_rice_payloads_never_panic_and_apply_whole_or_not_at_all() {
    let mut rng = Rng::new(0xF0220);
    let (mut refused, mut accepted) = (0u32, 0u32);
    let mut reasons = std::collections::BTreeSet::new();
    for case in 0..20_000 {
        let p = 1 + below(&mut rng, 2000);
        let n = match case % 4 {
            0 => below(&mut rng, 4),
            1 => below(&mut rng, p + 1),
            _ => below(&mut rng, 1 + p / 50),
        };
        let k = match case % 5 {
            0 => below(&mut rng, 64) as u8,
            _ => rice::parameter(p, n),
        };
        let min = rice::min_bits(n, k).div_ceil(8);
        let max = rice::max_bits(p, n, k).div_ceil(8);
        // Lengths around the allowed range, biased to the inside.
        let len = if case % 3 == 0 {
            below(&mut rng, max + 3)
        } else {
            min + below(&mut rng, max - min + 1)
        };
        let mut msg = rice_header(p, n, k, 0.5);
        for _ in 0..len {
            // Mostly-zero bytes make long unary runs; random ones make everything else.
            let byte = if case % 2 == 0 {
                rng.next_u64() as u8
            } else {
                (rng.next_u64() as u8) & (rng.next_u64() as u8) & (rng.next_u64() as u8)
            };
            msg.push(byte);
        }
        let base: Vec<f32> = (0..p).map(|j| j as f32).collect();
        let mut target = base.clone();
        match decode_add(&msg, 2.0, &mut target) {
            Err(e) => {
                refused += 1;
                assert_eq!(target, base, "a refused message must not touch the target");
                let text = e.to_string();
                assert!(text.starts_with("update message: "), "{text}");
                reasons.insert(
                    text.split(|c: char| c.is_ascii_digit())
                        .next()
                        .unwrap()
                        .to_string(),
                );
            }
            Ok(h) => {
                accepted += 1;
                // Exactly n distinct entries moved, each by ±2 * 0.5.
                let moved: Vec<f32> = target.iter().zip(&base).map(|(a, b)| a - b).collect();
                assert_eq!(
                    moved.iter().filter(|d| **d != 0.0).count() as u64,
                    h.entry_count
                );
                assert!(moved.iter().all(|d| *d == 0.0 || d.abs() == 1.0));
            }
        }
    }
    assert!(
        refused > 5000 && accepted > 300,
        "{refused} refused, {accepted} accepted"
    );
    // Every kind of Rice error turned up.
    for reason in [
        "update message: Rice payload ends inside entry ",
        "update message: Rice entry ",
        "update message: the Rice entries end after ",
        "update message: non-zero padding bits after the last Rice entry",
        "update message: truncated: ",
        "update message: bad Rice parameter ",
    ] {
        assert!(
            reasons.iter().any(|r| r.starts_with(reason)),
            "no '{reason}' among {reasons:?}"
        );
    }
}

#[test]
fn every_truncation_of_a_rice_message_is_refused() {
    let mut rng = Rng::new(77);
    let mut out = Vec::new();
    for _ in 0..30 {
        let n = 100 + below(&mut rng, 3000) as usize;
        let t = random_threshold(&mut rng);
        let mut r = random_residual(&mut rng, n, t, 0.01);
        let stats = encode(&mut r, t, &mut out).unwrap();
        assert_eq!(stats.encoding, Encoding::Rice);
        for cut in 0..out.len() {
            let mut target = vec![1.0f32; n];
            assert!(
                decode_add(&out[..cut], 1.0, &mut target).is_err(),
                "cut {cut}"
            );
            assert!(target.iter().all(|&x| x == 1.0));
        }
    }
}

#[test]
fn rice_costs_about_log2_of_inverse_sparsity_plus_two_and_a_half_bits() {
    // Scattered entries at the sparsities gradient sharing uses; the expected cost of a Rice
    // code of geometric gaps with the best k is within [log2(1/s) + 1.5, log2(1/s) + 3] bits.
    let mut rng = Rng::new(2024);
    let mut out = Vec::new();
    let n = 443_610;
    let t = 1e-3f32;
    for s in [1e-4, 1e-3, 2e-3, 1e-2, 5e-2] {
        let mut r = random_residual(&mut rng, n, t, s);
        let stats = encode(&mut r, t, &mut out).unwrap();
        let header_len = ferrodl_comm::parse_header(&out).unwrap().1;
        let bits = 8.0 * (stats.bytes - header_len) as f64 / stats.entries as f64;
        let ideal = (1.0 / stats.sparsity).log2();
        eprintln!(
            "s {s}: {} entries, {bits:.2} bits/entry, log2(1/s) {ideal:.2}",
            stats.entries
        );
        assert!(
            bits >= ideal + 1.5 && bits <= ideal + 3.0,
            "s {s}: {bits} bits per entry, log2(1/s) = {ideal}"
        );
    }
}

/// Every Rice message is decoded in one validating walk that notes its entries in a buffer kept
/// per thread, then applied from the notes: messages of every size, and a short one after a long
/// one (the buffer then holds stale notes past the new message's), decode every entry
/// (`check_encode` checks each one and that nothing else moved), and a bad message changes
/// nothing.
#[test]
fn rice_decodes_every_size_in_one_walk() {
    let mut rng = Rng::new(0x2048);
    let mut out = Vec::new();
    for count in [1usize, 2047, 2048, 2049, 6000, 30_000, 100, 5999] {
        let t = random_threshold(&mut rng);
        let residual = residual_with_count(&mut rng, 200_000, t, count);
        let stats = check_encode(&residual, t, &mut out);
        assert_eq!((stats.encoding, stats.entries), (Encoding::Rice, count as u64));
        // a flipped padding bit or a cut last byte: refused, the target untouched
        let base: Vec<f32> = (0..200_000).map(|j| j as f32 * 0.5).collect();
        for bad in [out[..out.len() - 1].to_vec(), {
            let mut m = out.clone();
            *m.last_mut().unwrap() ^= 0x80;
            m
        }] {
            let mut target = base.clone();
            if decode_add(&bad, 1.0, &mut target).is_err() {
                assert_eq!(target, base, "{count} entries: a refused message changed the target");
            }
        }
    }
}
