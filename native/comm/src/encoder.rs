//! The worker-side encoder: residual, threshold algorithm and residual post-processor together.
//!
//! Each step: `residual += update`; `t = algorithm.threshold(iteration, epoch)`; encode the
//! entries with `|r| >= t` (see [`crate::codec`]) and subtract them; `algorithm.observe(stats)`;
//! then the post-processor runs on the residual with the `t` just used.
//!
//! A bad update (NaN, an infinity, or a sum that overflows) is refused before anything changes:
//! the residual, the algorithm and the post-processor are as they were, and `out` is empty.
//! Buffers are reused: after the first call nothing is allocated unless `out` must grow (or, once,
//! the residual's copy for an update that could overflow).
//!
//! One pass over residual and update, in place: the update is added into the residual, the few
//! qualifying blocks are noted on the way, and the message is written from those. A refused
//! update must leave the residual as it was, so the update is first scanned (read-only) for a
//! non-finite entry and its largest `|u|`; the encoder keeps an upper bound of `|r|`, and when
//! bound + largest `|u|` could reach `f32::MAX` (an overflow is possible, in practice never) the
//! pass runs on a copy of the residual that replaces it only once accepted. The two-pass encode
//! it replaced ([`ThresholdEncoder::encode_update_two_pass`], a read-only
//! count, then add-and-encode) gives the same bytes and residual; tests hold the two equal.

use serde::Serialize;
use serde_json::Value;

use crate::codec::{
    add_and_find, check_threshold, finite_max_abs, write_message_adding, write_message_found,
    EncodeStats, Encoding,
};
use crate::error::{CodecError, VectorKind};
use crate::residual::{ResidualPostProcessor, ResidualPostProcessorConfig};
use crate::threshold::{ThresholdAlgorithm, ThresholdAlgorithmConfig, ThresholdState};

/// A threshold carried from the previous fit was right for a full residual, but a new fit starts
/// from an empty one: its first messages are nearly empty however well the threshold fits the
/// updates, and an adapting algorithm would lower the threshold for each of them. For at most
/// this many encodes after such a start, until one message reaches the algorithm's band, those
/// messages are not observed (for the algorithms that ask for it: Adaptive).
pub const FILLING_STEPS: u32 = 10;

/// Residual and threshold diagnostics for encodingDebugMode.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EncoderDebugStats {
    /// The threshold algorithm's JSON type.
    pub algorithm: &'static str,
    pub param_count: usize,
    /// Encodes done so far.
    pub encodes: u64,
    /// The threshold the next encode will use; the residual fractions below refer to it.
    pub threshold: f32,
    /// The threshold, sparsity, encoding and size of the last encode (null before the first).
    pub last_threshold: Option<f32>,
    pub last_sparsity: Option<f64>,
    pub last_encoding: Option<Encoding>,
    pub last_bytes: Option<usize>,
    /// Mean of `|r|` over the residual (0 for an empty one).
    pub residual_mean_abs: f64,
    pub residual_max_abs: f32,
    /// Fraction of residual entries with `|r| >= threshold / 2`.
    pub fraction_at_least_half_threshold: f64,
    /// Residual entries with `|r| >= threshold`: what the next encode would send with no new update.
    pub count_at_least_threshold: u64,
}

/// Threshold-encodes one worker's successive updates.
#[derive(Debug)]
pub struct ThresholdEncoder {
    residual: Vec<f32>,
    /// An upper bound of `|r|` over the residual (`f32::INFINITY`: unknown).
    residual_bound: f32,
    /// `residual + update` of an encode that could overflow; swapped with `residual` once accepted
    /// (empty until one needs it).
    scratch: Vec<f32>,
    /// Blocks of 64 entries holding qualifying entries, with their masks (see `add_and_find`).
    hot: Vec<(u32, u64)>,
    /// Per block of `hot`: the mask of its entries sent as `-t`.
    hot_negative: Vec<u64>,
    /// `hot` and `hot_negative` are the entries of the last message, a Rice message (see
    /// [`Self::subtract_last_sent`]).
    sent_noted: bool,
    algorithm: Box<dyn ThresholdAlgorithm>,
    post_processor: Box<dyn ResidualPostProcessor>,
    last: Option<EncodeStats>,
    encodes: u64,
    /// Encodes left in which a message below the algorithm's band does not lower the threshold.
    filling: u32,
    carried_state_used: bool,
}

impl ThresholdEncoder {
    /// An encoder for `param_count` parameters with a zero residual. `carried_state` (from the
    /// previous fit) sets the algorithm's threshold when it is of the same type; see
    /// [`ThresholdAlgorithm::set_state`].
    pub fn new(
        param_count: usize,
        algorithm: ThresholdAlgorithmConfig,
        post_processor: ResidualPostProcessorConfig,
        carried_state: Option<ThresholdState>,
    ) -> Result<Self, CodecError> {
        let mut algorithm = algorithm.build()?;
        let carried_state_used = match &carried_state {
            Some(state) => algorithm.set_state(state)?,
            None => false,
        };
        let mut encoder = Self::from_parts(param_count, algorithm, post_processor.build()?);
        encoder.carried_state_used = carried_state_used;
        if carried_state_used && encoder.algorithm.waits_while_the_residual_fills() {
            encoder.filling = FILLING_STEPS;
        }
        Ok(encoder)
    }

    /// [`Self::new`] from the JSON the Java side writes: the algorithm and post-processor
    /// configurations (`null` for the defaults) and an optional carried state (`null` or `None`
    /// for none).
    pub fn from_json(
        param_count: usize,
        algorithm: &Value,
        post_processor: &Value,
        carried_state: Option<&Value>,
    ) -> Result<Self, CodecError> {
        let algorithm = ThresholdAlgorithmConfig::from_json_value(algorithm)?;
        let post_processor = ResidualPostProcessorConfig::from_json_value(post_processor)?;
        let carried = match carried_state {
            Some(v) if !v.is_null() => Some(ThresholdState::from_json_value(v)?),
            _ => None,
        };
        Self::new(param_count, algorithm, post_processor, carried)
    }

    /// An encoder over any algorithm and post-processor.
    pub fn from_parts(
        param_count: usize,
        algorithm: Box<dyn ThresholdAlgorithm>,
        post_processor: Box<dyn ResidualPostProcessor>,
    ) -> Self {
        ThresholdEncoder {
            residual: vec![0.0; param_count],
            residual_bound: 0.0,
            scratch: Vec::new(),
            hot: Vec::new(),
            hot_negative: Vec::new(),
            sent_noted: false,
            algorithm,
            post_processor,
            last: None,
            encodes: 0,
            filling: 0,
            carried_state_used: false,
        }
    }

    /// `residual += update`; `t = algorithm.threshold(iteration, epoch)`; encode into `out`
    /// (cleared first); `algorithm.observe`; post-process. Returns the stats, including `t`.
    pub fn encode_update(
        &mut self,
        update: &[f32],
        iteration: u64,
        epoch: u64,
        out: &mut Vec<u8>,
    ) -> Result<EncodeStats, CodecError> {
        let t = self.begin_encode(update, iteration, epoch, out)?;
        let refuse = |residual: &[f32]| {
            // Names the first bad entry; the residual was only read.
            Err(count_sum(residual, update, t).expect_err("a non-finite sum"))
        };
        let Some(update_max) = finite_max_abs(update) else {
            return refuse(&self.residual);
        };
        let found = if f64::from(self.residual_bound) + f64::from(update_max) < f64::from(f32::MAX) {
            // Every sum is finite (|r + u| <= bound + max |u| < f32::MAX): in place.
            add_and_find(&mut self.residual, update, t, &mut self.hot, &mut self.hot_negative)
        } else {
            // A sum could overflow: on a copy, which replaces the residual once accepted.
            self.scratch.clear();
            self.scratch.extend_from_slice(&self.residual);
            let found = add_and_find(&mut self.scratch, update, t, &mut self.hot, &mut self.hot_negative);
            if found.is_none() {
                return refuse(&self.residual);
            }
            std::mem::swap(&mut self.residual, &mut self.scratch);
            found
        };
        let Some((count, sum_max)) = found else {
            // Unreachable: the in-place pass runs only when no sum can overflow, on finite values.
            self.residual_bound = f32::INFINITY;
            return Err(CodecError::Internal(
                "the in-place encode met a non-finite sum below its overflow bound",
            ));
        };
        // The sent entries only shrank; the post-processor runs next (see finish_encode).
        self.residual_bound = sum_max;
        let stats = write_message_found(self.residual.len(), t, count, &self.hot, &self.hot_negative, out);
        self.finish_encode(iteration, epoch, t, stats, true);
        self.sent_noted = stats.encoding == Encoding::Rice;
        Ok(stats)
    }

    /// [`Self::encode_update`] as it was done before the one-pass encode: a read-only pass that
    /// refuses a bad update and counts, then a pass that adds the update and encodes. Same
    /// results; kept as the reference the one-pass encode is tested and measured against.
    #[doc(hidden)]
    pub fn encode_update_two_pass(
        &mut self,
        update: &[f32],
        iteration: u64,
        epoch: u64,
        out: &mut Vec<u8>,
    ) -> Result<EncodeStats, CodecError> {
        let t = self.begin_encode(update, iteration, epoch, out)?;
        let count = count_sum(&self.residual, update, t)?;
        let stats = write_message_adding(&mut self.residual, update, t, count, out);
        self.residual_bound = f32::INFINITY;
        self.finish_encode(iteration, epoch, t, stats, false);
        Ok(stats)
    }

    /// The algorithm learns from an accepted encode, except from a too-sparse message while the
    /// residual is still filling (see [`FILLING_STEPS`]).
    fn observe(&mut self, stats: &EncodeStats) {
        if self.filling > 0 {
            self.filling -= 1;
            let low = self
                .algorithm
                .target_band(stats.param_count)
                .map_or(0.0, |b| b.0);
            if stats.sparsity < low {
                return;
            }
            self.filling = 0;
        }
        self.algorithm.observe(stats);
    }

    /// What every encode does first: clears `out`, checks the update's length, calibrates a fresh
    /// algorithm on the first update, and returns this step's threshold.
    fn begin_encode(
        &mut self,
        update: &[f32],
        iteration: u64,
        epoch: u64,
        out: &mut Vec<u8>,
    ) -> Result<f32, CodecError> {
        out.clear();
        self.sent_noted = false;
        if update.len() != self.residual.len() {
            return Err(CodecError::UpdateLength {
                expected: self.residual.len(),
                actual: update.len(),
            });
        }
        if self.encodes == 0 && !self.carried_state_used {
            self.calibrate(update)?;
        }
        let t = self.algorithm.threshold(iteration, epoch);
        check_threshold(t)?;
        Ok(t)
    }

    /// After an accepted encode: the algorithm learns from it, the post-processor runs — on the
    /// sent entries alone when `sent_in_hot` (the one-pass encode left them in `hot`; a bitmap
    /// sends the same ones) and the processor can, else on the whole residual.
    fn finish_encode(&mut self, iteration: u64, epoch: u64, t: f32, stats: EncodeStats, sent_in_hot: bool) {
        self.observe(&stats);
        let sent = if sent_in_hot {
            self.post_processor
                .process_sent(iteration, epoch, t, &mut self.residual, &self.hot)
        } else {
            None
        };
        match sent {
            Some(0) => {}
            // A processor may change the sent entries: the bound covers what it left there.
            Some(_) => {
                for &(block, mask) in &self.hot {
                    let mut left = mask;
                    while left != 0 {
                        let i = block as usize * 64 + left.trailing_zeros() as usize;
                        left &= left - 1;
                        self.residual_bound = self.residual_bound.max(self.residual[i].abs());
                    }
                }
            }
            None => {
                // The bound holds while the processor changed nothing; else it is unknown until
                // the next encode measures it (on a copy).
                let changed = self
                    .post_processor
                    .process(iteration, epoch, t, &mut self.residual);
                if changed > 0 {
                    self.residual_bound = f32::INFINITY;
                }
            }
        }
        self.last = Some(stats);
        self.encodes += 1;
    }

    /// A fresh adapting algorithm's first threshold, fitted to what `residual + update` would
    /// send ([`crate::threshold::calibrate`]): the first message already has about the size the
    /// algorithm aims at, instead of walking there from `initialThreshold` in 3.5% steps.
    fn calibrate(&mut self, update: &[f32]) -> Result<(), CodecError> {
        let p = self.residual.len() as u64;
        let Some(band) = self.algorithm.target_band(p) else {
            return Ok(());
        };
        if update.iter().chain(&self.residual).all(|&x| x == 0.0) {
            return Ok(());
        }
        let start = f64::from(self.algorithm.current_threshold());
        let mut refused = None;
        let residual = &self.residual;
        let t = crate::threshold::calibrate(start, band, p, |t| {
            count_sum(residual, update, t).unwrap_or_else(|e| {
                refused.get_or_insert(e);
                0
            })
        });
        // A bad update is refused by the encode that follows, with nothing changed.
        if refused.is_none() && t != start {
            let state = ThresholdState {
                algorithm: self.algorithm.name().into(),
                threshold: t,
            };
            self.algorithm.set_state(&state)?;
        }
        Ok(())
    }

    /// Applies the last message to `params` as `decode_add(message, -1.0, params)` does, bit for
    /// bit (each sent entry `+= -t`, or `+= t` when sent negative; nothing else is touched), from
    /// the entries noted while it was written instead of decoding it: a worker applying its own
    /// message walked its Rice code twice (validating, then applying), 0.04–0.07 ms per MNIST
    /// step. Only after an accepted [`Self::encode_update`] that wrote a Rice message; otherwise
    /// (a bitmap message, whose decode also turns `-0.0` into `+0.0` in its dense words, the
    /// two-pass encode, or a refused update) returns `Ok(false)` and leaves `params` alone: decode
    /// the message then. Refuses a `params` of another length, as `decode_add` does.
    pub fn subtract_last_sent(&self, params: &mut [f32]) -> Result<bool, CodecError> {
        if params.len() != self.residual.len() {
            return Err(CodecError::ParamCountMismatch {
                message: self.residual.len() as u64,
                target: params.len(),
            });
        }
        let Some(last) = self.last.filter(|_| self.sent_noted) else {
            return Ok(false);
        };
        // decode_add's arithmetic: value = -1.0 * t (= -t exactly), a negative entry adds -value
        let value = -last.threshold;
        for (&(b, mut mask), &neg) in self.hot.iter().zip(&self.hot_negative) {
            let base = b as usize * 64;
            while mask != 0 {
                let i = mask.trailing_zeros();
                mask &= mask - 1;
                params[base + i as usize] += if neg >> i & 1 == 1 { -value } else { value };
            }
        }
        Ok(true)
    }

    /// The algorithm's state, to carry into the next fit.
    pub fn threshold_state(&self) -> ThresholdState {
        self.algorithm.state()
    }

    /// What has not been sent yet.
    pub fn residual(&self) -> &[f32] {
        &self.residual
    }

    /// Replaces the residual (to continue from another encoder's, e.g. a previous fit's).
    /// Refuses a different length or a non-finite entry, naming it; on error nothing changes.
    pub fn set_residual(&mut self, residual: &[f32]) -> Result<(), CodecError> {
        if residual.len() != self.residual.len() {
            return Err(CodecError::UpdateLength {
                expected: self.residual.len(),
                actual: residual.len(),
            });
        }
        if let Some((index, &value)) = residual.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(CodecError::NonFinite {
                vector: VectorKind::Residual,
                index,
                value,
            });
        }
        self.residual.copy_from_slice(residual);
        self.residual_bound = residual.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        Ok(())
    }

    pub fn param_count(&self) -> usize {
        self.residual.len()
    }

    /// The threshold the next encode will use.
    pub fn current_threshold(&self) -> f32 {
        self.algorithm.current_threshold()
    }

    /// Stats of the last successful encode.
    pub fn last_stats(&self) -> Option<&EncodeStats> {
        self.last.as_ref()
    }

    /// Whether the carried state given at construction set the threshold.
    pub fn carried_state_used(&self) -> bool {
        self.carried_state_used
    }

    /// Threshold, last sparsity and residual statistics (one pass over the residual).
    pub fn debug_stats(&self) -> EncoderDebugStats {
        let t = self.algorithm.current_threshold();
        let half = t / 2.0;
        let (mut sum, mut max, mut half_count, mut full_count) = (0.0f64, 0.0f32, 0u64, 0u64);
        for &r in &self.residual {
            let a = r.abs();
            sum += f64::from(a);
            max = max.max(a);
            half_count += u64::from(a >= half);
            full_count += u64::from(a >= t);
        }
        let n = self.residual.len();
        let per = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
        EncoderDebugStats {
            algorithm: self.algorithm.name(),
            param_count: n,
            encodes: self.encodes,
            threshold: t,
            last_threshold: self.last.map(|s| s.threshold),
            last_sparsity: self.last.map(|s| s.sparsity),
            last_encoding: self.last.map(|s| s.encoding),
            last_bytes: self.last.map(|s| s.bytes),
            residual_mean_abs: per(sum),
            residual_max_abs: max,
            fraction_at_least_half_threshold: per(half_count as f64),
            count_at_least_threshold: full_count,
        }
    }
}

/// Counts the entries with `|r + u| >= t`; refuses an update with a non-finite entry, or whose sum
/// with the residual overflows, naming the first offending index. Read-only, so a refused update
/// changes nothing.
fn count_sum(residual: &[f32], update: &[f32], t: f32) -> Result<u64, CodecError> {
    // The residual itself is always finite, so `r + u` is finite iff `u` is and nothing overflows.
    // Branch-free, so the loop vectorises.
    let mut bad = false;
    let mut count = 0u64;
    for (&r, &u) in residual.iter().zip(update) {
        let x = r + u;
        bad |= !x.is_finite();
        count += u64::from(x.abs() >= t);
    }
    if !bad {
        return Ok(count);
    }
    for (index, (&r, &u)) in residual.iter().zip(update).enumerate() {
        if !u.is_finite() {
            return Err(CodecError::NonFinite {
                vector: VectorKind::Update,
                index,
                value: u,
            });
        }
        if !(r + u).is_finite() {
            return Err(CodecError::Overflow {
                index,
                residual: r,
                update: u,
            });
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::decode_add;
    use serde_json::json;

    fn fixed(t: f64) -> ThresholdAlgorithmConfig {
        ThresholdAlgorithmConfig::Fixed(crate::threshold::FixedConfig { threshold: t })
    }

    #[test]
    fn a_step_by_hand() {
        let mut e =
            ThresholdEncoder::new(4, fixed(0.5), ResidualPostProcessorConfig::NoOp, None).unwrap();
        let mut out = Vec::new();
        let s = e
            .encode_update(&[0.25, -0.75, 1.25, 0.0], 1, 0, &mut out)
            .unwrap();
        // 2 entries of 4: Rice, k 0 (bound 2 * 2 + 2 = 6 bits), an 8-byte header, one payload byte.
        assert_eq!(
            (s.entries, s.encoding, s.threshold, s.sparsity, s.bytes),
            (2, Encoding::Rice, 0.5, 0.5, 9)
        );
        assert_eq!(e.residual(), &[0.25, -0.25, 0.75, 0.0]);
        let mut decoded = vec![0.0f32; 4];
        decode_add(&out, 1.0, &mut decoded).unwrap();
        assert_eq!(decoded, vec![0.0, -0.5, 0.5, 0.0]);
        // The residual carries over: 0.25 + 0.25 reaches t.
        let s = e
            .encode_update(&[0.25, 0.0, 0.0, 0.0], 2, 0, &mut out)
            .unwrap();
        assert_eq!(s.entries, 2);
        assert_eq!(e.residual(), &[0.0, -0.25, 0.25, 0.0]);
        assert_eq!(e.last_stats(), Some(&s));
    }

    #[test]
    fn a_set_residual_is_sent_with_the_next_update() {
        let mut e =
            ThresholdEncoder::new(3, fixed(1.0), ResidualPostProcessorConfig::NoOp, None).unwrap();
        e.set_residual(&[0.75, -0.5, 0.0]).unwrap();
        let mut out = Vec::new();
        let s = e
            .encode_update(&[0.25, -0.25, 0.5], 0, 0, &mut out)
            .unwrap();
        assert_eq!(s.entries, 1);
        assert_eq!(e.residual(), &[0.0, -0.75, 0.5]);
        assert_eq!(
            e.set_residual(&[0.0; 2]).unwrap_err().to_string(),
            "update has 2 entries but the encoder has 3 parameters"
        );
        assert_eq!(
            e.set_residual(&[0.0, f32::NAN, 0.0])
                .unwrap_err()
                .to_string(),
            "residual entry 1 is NaN; nothing was encoded and the residual is unchanged"
        );
        assert_eq!(e.residual(), &[0.0, -0.75, 0.5]);
    }

    #[test]
    fn bad_updates_change_nothing() {
        let mut e = ThresholdEncoder::new(
            3,
            ThresholdAlgorithmConfig::default(),
            ResidualPostProcessorConfig::default(),
            None,
        )
        .unwrap();
        let mut out = Vec::new();
        e.encode_update(&[1e-3, -2e-5, 0.0], 0, 0, &mut out)
            .unwrap();
        let residual = e.residual().to_vec();
        let state = e.threshold_state();
        for (update, message) in [
            (
                vec![0.0, f32::NAN, 1.0],
                "update entry 1 is NaN; nothing was encoded and the residual is unchanged",
            ),
            (
                vec![f32::NEG_INFINITY, 0.0, 0.0],
                "update entry 0 is -inf; nothing was encoded and the residual is unchanged",
            ),
            (
                vec![0.0, 0.0, 0.0, 0.0],
                "update has 4 entries but the encoder has 3 parameters",
            ),
        ] {
            out.push(1);
            let err = e.encode_update(&update, 1, 0, &mut out).unwrap_err();
            assert_eq!(err.to_string(), message);
            assert_eq!(e.residual(), residual.as_slice());
            assert_eq!(e.threshold_state(), state);
            assert!(out.is_empty());
        }
        // Overflow of residual + update.
        let mut e =
            ThresholdEncoder::new(2, fixed(1e30), ResidualPostProcessorConfig::NoOp, None).unwrap();
        e.encode_update(&[0.0, 3e38], 0, 0, &mut out).unwrap();
        let before = e.residual().to_vec();
        let err = e.encode_update(&[1.0, 3e38], 1, 0, &mut out).unwrap_err();
        assert!(
            matches!(err, CodecError::Overflow { index: 1, .. }),
            "{err}"
        );
        assert!(
            err.to_string().starts_with("residual entry 1 overflows"),
            "{err}"
        );
        assert_eq!(e.residual(), before.as_slice());
    }

    #[test]
    fn clipping_runs_after_the_encode_with_the_threshold_used() {
        let mut e =
            ThresholdEncoder::new(2, fixed(0.5), ResidualPostProcessorConfig::default(), None)
                .unwrap();
        let mut out = Vec::new();
        // Iteration 1: no clipping; 10 - 0.5 = 9.5 stays.
        e.encode_update(&[10.0, -0.25], 1, 0, &mut out).unwrap();
        assert_eq!(e.residual(), &[9.5, -0.25]);
        // Iteration 5: 9.5 - 0.5 = 9 is clipped to 5 * 0.5.
        e.encode_update(&[0.0, 0.0], 5, 0, &mut out).unwrap();
        assert_eq!(e.residual(), &[2.5, -0.25]);
    }

    #[test]
    fn json_construction_and_carried_state() {
        let alg = json!({"type": "adaptive", "initialThreshold": 1e-3});
        let carried = json!({"type": "adaptive", "threshold": 0.25});
        let e =
            ThresholdEncoder::from_json(3, &alg, &json!({"type": "noop"}), Some(&carried)).unwrap();
        assert!(e.carried_state_used());
        assert_eq!(e.current_threshold(), 0.25);
        let e = ThresholdEncoder::from_json(3, &alg, &Value::Null, Some(&Value::Null)).unwrap();
        assert!(!e.carried_state_used());
        assert_eq!(e.current_threshold(), 1e-3);
        let err =
            ThresholdEncoder::from_json(3, &json!({"type": "x"}), &Value::Null, None).unwrap_err();
        assert_eq!(err.to_string(), "threshold algorithm: unknown type \"x\" (expected one of \"adaptive\", \"targetSparsity\", \"fixed\")");
        let err = ThresholdEncoder::from_json(
            3,
            &alg,
            &json!({"type": "clipping", "frequency": 0}),
            None,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "residual post-processor: frequency must be at least 1, got 0"
        );
        let err = ThresholdEncoder::from_json(
            3,
            &alg,
            &Value::Null,
            Some(&json!({"type": "adaptive", "threshold": -1})),
        )
        .unwrap_err();
        assert!(matches!(err, CodecError::Config(_)));
    }

    #[test]
    fn threshold_adapts_across_steps_and_state_is_reported() {
        // Adaptive with nothing ever reaching t: five steps lower t five times.
        let mut e = ThresholdEncoder::new(
            1000,
            ThresholdAlgorithmConfig::default(),
            ResidualPostProcessorConfig::NoOp,
            None,
        )
        .unwrap();
        let mut out = Vec::new();
        let mut expected = 1e-4f64;
        for i in 0..5 {
            let s = e.encode_update(&[0.0; 1000], i, 0, &mut out).unwrap();
            assert_eq!(s.threshold, expected as f32);
            assert_eq!(
                s.bytes, 9,
                "a 9-byte header (1000 = a 2-byte varint), no payload"
            );
            expected *= crate::threshold::DEFAULT_DECAY_RATE;
        }
        assert_eq!(
            e.threshold_state(),
            ThresholdState {
                algorithm: "adaptive".into(),
                threshold: expected
            }
        );
    }

    #[test]
    fn debug_stats_by_hand() {
        let mut e =
            ThresholdEncoder::new(4, fixed(1.0), ResidualPostProcessorConfig::NoOp, None).unwrap();
        let d = e.debug_stats();
        assert_eq!(
            (
                d.encodes,
                d.last_sparsity,
                d.residual_max_abs,
                d.residual_mean_abs
            ),
            (0, None, 0.0, 0.0)
        );
        let mut out = Vec::new();
        e.encode_update(&[0.5, -0.75, 2.5, 0.25], 3, 0, &mut out)
            .unwrap();
        // Residual: 0.5, -0.75, 1.5, 0.25.
        let d = e.debug_stats();
        assert_eq!(d.algorithm, "fixed");
        assert_eq!(d.threshold, 1.0);
        assert_eq!(d.last_threshold, Some(1.0));
        assert_eq!(d.last_sparsity, Some(0.25));
        assert_eq!(d.last_encoding, Some(Encoding::Rice));
        // Header and one payload byte (k 1: gap 2 = unary 01, remainder 0, sign 0).
        assert_eq!(d.last_bytes, Some(9), "8-byte header");
        assert_eq!(d.residual_mean_abs, 3.0 / 4.0);
        assert_eq!(d.residual_max_abs, 1.5);
        assert_eq!(d.fraction_at_least_half_threshold, 0.75);
        assert_eq!(d.count_at_least_threshold, 1);
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["fractionAtLeastHalfThreshold"], 0.75);
        assert_eq!(v["lastEncoding"], "rice");
    }

    #[test]
    fn a_carried_threshold_waits_while_the_residual_fills() {
        let carried = ThresholdState {
            algorithm: "adaptive".into(),
            threshold: 1.0,
        };
        let adaptive = || ThresholdAlgorithmConfig::default();
        let d = crate::threshold::DEFAULT_DECAY_RATE;
        let mut out = Vec::new();
        // 1,000 parameters, steps of 0.3: nothing reaches t = 1 for three steps (a fit's start
        // with an empty residual); the fourth sends everything (above the band: t rises).
        let mut e = ThresholdEncoder::new(
            1000,
            adaptive(),
            ResidualPostProcessorConfig::NoOp,
            Some(carried.clone()),
        )
        .unwrap();
        for it in 0..3 {
            let s = e.encode_update(&[0.3; 1000], it, 0, &mut out).unwrap();
            assert_eq!(
                (s.entries, s.threshold),
                (0, 1.0),
                "step {it}: a filling residual keeps t"
            );
        }
        let s = e.encode_update(&[0.3; 1000], 3, 0, &mut out).unwrap();
        assert_eq!(s.entries, 1000);
        assert_eq!(e.current_threshold(), (1.0 / d) as f32);
        // The filling is over: an empty message lowers t again at once.
        e.encode_update(&[0.0; 1000], 4, 0, &mut out).unwrap();
        assert_eq!(e.current_threshold(), ((1.0 / d) * d) as f32);
        // At most FILLING_STEPS encodes wait: a threshold that is simply too high comes down after.
        let mut e = ThresholdEncoder::new(
            1000,
            adaptive(),
            ResidualPostProcessorConfig::NoOp,
            Some(carried),
        )
        .unwrap();
        for it in 0..u64::from(FILLING_STEPS) + 5 {
            e.encode_update(&[1e-3; 1000], it, 0, &mut out).unwrap();
        }
        assert_eq!(e.current_threshold(), d.powi(5) as f32);
        // TargetSparsity does not wait (yet): its first empty message lowers t.
        let target = ThresholdState {
            algorithm: "targetSparsity".into(),
            threshold: 1.0,
        };
        let mut e = ThresholdEncoder::from_json(
            1000,
            &json!({"type": "targetSparsity"}),
            &json!({"type": "noop"}),
            Some(&serde_json::to_value(&target).unwrap()),
        )
        .unwrap();
        e.encode_update(&[0.0; 1000], 0, 0, &mut out).unwrap();
        assert_eq!(e.current_threshold(), d as f32);
        // A fresh encoder (calibrated, nothing carried) observes from its first encode.
        let mut e =
            ThresholdEncoder::new(1000, adaptive(), ResidualPostProcessorConfig::NoOp, None)
                .unwrap();
        e.encode_update(&[0.0; 1000], 0, 0, &mut out).unwrap();
        assert_eq!(e.current_threshold(), (1e-4 * d) as f32);
    }

    #[test]
    fn a_fresh_encoder_calibrates_its_first_threshold() {
        // 192 parameters (the RecurrentSparkTest LSTM), updates of about 0.05 (Adam, lr 0.05):
        // from 1e-4 all 192 entries would go; the floor band is 16 entries, so the first
        // threshold doubles until at most 16 go (and halves back to at least 16).
        let update: Vec<f32> = (0..192)
            .map(|i| 0.05 * (1.0 + (i % 7) as f32 / 7.0))
            .collect();
        let mut e = ThresholdEncoder::new(
            192,
            ThresholdAlgorithmConfig::default(),
            ResidualPostProcessorConfig::NoOp,
            None,
        )
        .unwrap();
        let mut out = Vec::new();
        let s = e.encode_update(&update, 0, 0, &mut out).unwrap();
        assert!(
            s.threshold > 0.05 && s.entries >= 16 && s.entries < 192,
            "{s:?}"
        );
        // Carried state: no calibration.
        let carried = ThresholdState {
            algorithm: "adaptive".into(),
            threshold: 1e-4,
        };
        let mut e = ThresholdEncoder::new(
            192,
            ThresholdAlgorithmConfig::default(),
            ResidualPostProcessorConfig::NoOp,
            Some(carried),
        )
        .unwrap();
        assert_eq!(
            e.encode_update(&update, 0, 0, &mut out).unwrap().threshold,
            1e-4
        );
        // 200,000 parameters (the floor, 8e-5, below Adaptive's 1e-4): the band is [1e-4, 1e-2],
        // at most 2,000 entries; t doubles from 1e-4 until it sends no more than that.
        let big: Vec<f32> = (0..200_000).map(|i| 1e-3 * (i % 1000) as f32).collect();
        let mut e = ThresholdEncoder::new(
            200_000,
            ThresholdAlgorithmConfig::default(),
            ResidualPostProcessorConfig::NoOp,
            None,
        )
        .unwrap();
        let s = e.encode_update(&big, 0, 0, &mut out).unwrap();
        assert!(s.entries >= 20 && s.entries <= 2_000, "{s:?}");
        // A fixed threshold is never calibrated.
        let mut e =
            ThresholdEncoder::new(192, fixed(0.01), ResidualPostProcessorConfig::NoOp, None)
                .unwrap();
        assert_eq!(
            e.encode_update(&update, 0, 0, &mut out).unwrap().threshold,
            0.01
        );
    }
}
