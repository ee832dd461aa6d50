//! Threshold algorithms: which threshold `t` the next update is encoded with.
//!
//! * **Adaptive** (the default): starts at `initialThreshold` (1e-4) and, after each encode with
//!   sparsity `s = entries / params`, multiplies `t` by `decayRate` (0.5^(1/20), so 20 steps halve
//!   it) when `s < minTargetSparsity` (1e-4: too little is sent, so lower `t`), divides it by
//!   `decayRate` when `s > maxTargetSparsity` (1e-2: too much is sent), and leaves it otherwise.
//!   An encode that sent nothing has `s = 0`.
//! * **TargetSparsity**: steers the *mean* sparsity to one target (1e-3): `t` moves by
//!   `(m / target)^0.25` per encode (at most one `decayRate` step), where `m` is the sparsity
//!   averaged over about 20 encodes. (The reference's rule, lower `t` when this encode's
//!   `s < target` and raise it when `s > target`, overshoots several times; see
//!   [`TargetSparsityThreshold`].)
//! * **Fixed**: a constant `t` (1e-3 when the field is missing).
//!
//! The adapting algorithms keep `t` within [`MIN_THRESHOLD`, `MAX_THRESHOLD`]: without that, a
//! long run of all-zero updates (frozen layers, a zero learning rate) would decay `t` to an `f32`
//! zero after about 2,600 steps, and a long run of dense ones would overflow it.
//!
//! JSON (the Java side writes these; missing or `null` fields take the defaults, unknown fields
//! are refused, a `null` configuration is the default Adaptive):
//!
//! ```json
//! {"type":"adaptive","initialThreshold":1e-4,"minTargetSparsity":1e-4,"maxTargetSparsity":1e-2,"decayRate":0.9659363289248456}
//! {"type":"targetSparsity","initialThreshold":1e-4,"sparsityTarget":1e-3,"decayRate":0.9659363289248456}
//! {"type":"fixed","threshold":1e-3}
//! ```
//!
//! The state that crosses processes is [`ThresholdState`], `{"type":"adaptive","threshold":1.2e-4}`:
//! the algorithm's type and its current threshold. At the end of a fit the workers' states are
//! averaged ([`average_states`]) and the next fit starts from the average.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::codec::EncodeStats;
use crate::error::ConfigError;
use crate::json::Tagged;

/// 0.5^(1/20): twenty steps in the same direction halve (or double) the threshold.
pub const DEFAULT_DECAY_RATE: f64 = 0.965_936_328_924_845_6;
/// Smallest threshold an adapting algorithm moves to (a normal `f32`, far below any useful `t`).
pub const MIN_THRESHOLD: f64 = 1e-30;
/// Largest threshold an adapting algorithm moves to (leaves room for `5 t` clipping in `f32`).
pub const MAX_THRESHOLD: f64 = 1e30;

const CONTEXT: &str = "threshold algorithm";
const STATE_CONTEXT: &str = "threshold state";
const TYPES: [&str; 3] = ["adaptive", "targetSparsity", "fixed"];

/// Chooses the threshold of each encode and learns from what the encode sent.
pub trait ThresholdAlgorithm: Send + fmt::Debug {
    /// The JSON `"type"`: "adaptive", "targetSparsity" or "fixed".
    fn name(&self) -> &'static str;
    /// Threshold for the encode of this iteration; always finite and > 0. (None of ours depends
    /// on the counters; they are passed for algorithms that might.)
    fn threshold(&mut self, iteration: u64, epoch: u64) -> f32;
    /// The threshold the next encode will use, without advancing anything.
    fn current_threshold(&self) -> f32;
    /// Adapts to the outcome of an encode.
    fn observe(&mut self, stats: &EncodeStats);
    /// What is carried to the next fit.
    fn state(&self) -> ThresholdState;
    /// Continues from a carried state. Returns whether it was used: a state of another type is
    /// ignored (the configuration changed between fits, and the new one wins), and Fixed ignores
    /// every state (its configured threshold wins). An invalid state is an error.
    fn set_state(&mut self, state: &ThresholdState) -> Result<bool, ConfigError>;
}

/// The current threshold of a worker's algorithm, as carried between fits (JSON
/// `{"type":"adaptive","threshold":1.2e-4}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct ThresholdState {
    /// The algorithm's JSON type.
    #[serde(rename = "type")]
    pub algorithm: String,
    pub threshold: f64,
}

impl ThresholdState {
    /// Reads and validates a state.
    pub fn from_json_value(value: &Value) -> Result<Self, ConfigError> {
        let fields = Tagged::parse(STATE_CONTEXT, value, &TYPES)?;
        fields.only(&["threshold"])?;
        let threshold = fields.required_f64("threshold")?;
        let state = ThresholdState {
            algorithm: fields.kind.to_string(),
            threshold,
        };
        state.validate()?;
        Ok(state)
    }

    /// The type is a known one and the threshold lies in [`MIN_THRESHOLD`, `MAX_THRESHOLD`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !TYPES.contains(&self.algorithm.as_str()) {
            return Err(ConfigError::new(
                STATE_CONTEXT,
                format!("unknown type \"{}\"", self.algorithm),
            ));
        }
        check_threshold(STATE_CONTEXT, "threshold", self.threshold)
    }
}

impl TryFrom<Value> for ThresholdState {
    type Error = ConfigError;
    fn try_from(value: Value) -> Result<Self, ConfigError> {
        ThresholdState::from_json_value(&value)
    }
}

/// Averages per-worker states into the state carried to the next fit: the arithmetic mean of
/// the current thresholds. `None` when there are no states, when they are of different types, or
/// when one is invalid; [`try_average_states`] says which.
pub fn average_states(states: &[ThresholdState]) -> Option<ThresholdState> {
    try_average_states(states).ok().flatten()
}

/// [`average_states`] with the reason for refusing: `Ok(None)` for no states, an error naming the
/// offending state otherwise.
pub fn try_average_states(
    states: &[ThresholdState],
) -> Result<Option<ThresholdState>, ConfigError> {
    let Some(first) = states.first() else {
        return Ok(None);
    };
    let mut sum = 0.0f64;
    for (i, s) in states.iter().enumerate() {
        s.validate().map_err(|e| {
            ConfigError::new(
                STATE_CONTEXT,
                format!("state {i} of {}: {}", states.len(), e.message),
            )
        })?;
        if s.algorithm != first.algorithm {
            return Err(ConfigError::new(
                STATE_CONTEXT,
                format!(
                    "cannot average states of different types: state 0 is \"{}\", state {i} is \"{}\"",
                    first.algorithm, s.algorithm
                ),
            ));
        }
        sum += s.threshold;
    }
    Ok(Some(ThresholdState {
        algorithm: first.algorithm.clone(),
        threshold: sum / states.len() as f64,
    }))
}

fn check_threshold(context: &'static str, field: &str, t: f64) -> Result<(), ConfigError> {
    if (MIN_THRESHOLD..=MAX_THRESHOLD).contains(&t) {
        Ok(())
    } else {
        Err(ConfigError::new(
            context,
            format!("{field} must be a number in [{MIN_THRESHOLD:e}, {MAX_THRESHOLD:e}], got {t}"),
        ))
    }
}

fn check_sparsity(field: &str, s: f64) -> Result<(), ConfigError> {
    if s > 0.0 && s <= 1.0 {
        Ok(())
    } else {
        Err(ConfigError::new(
            CONTEXT,
            format!("{field} must be in (0, 1], got {s}"),
        ))
    }
}

fn check_decay(d: f64) -> Result<(), ConfigError> {
    if d > 0.0 && d < 1.0 {
        Ok(())
    } else {
        Err(ConfigError::new(
            CONTEXT,
            format!("decayRate must be in (0, 1), got {d}"),
        ))
    }
}

/// Settings of [`AdaptiveThreshold`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveConfig {
    pub initial_threshold: f64,
    pub min_target_sparsity: f64,
    pub max_target_sparsity: f64,
    pub decay_rate: f64,
}

impl Default for AdaptiveConfig {
    fn default() -> Self {
        AdaptiveConfig {
            initial_threshold: 1e-4,
            min_target_sparsity: 1e-4,
            max_target_sparsity: 1e-2,
            decay_rate: DEFAULT_DECAY_RATE,
        }
    }
}

impl AdaptiveConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_threshold(CONTEXT, "initialThreshold", self.initial_threshold)?;
        check_sparsity("minTargetSparsity", self.min_target_sparsity)?;
        check_sparsity("maxTargetSparsity", self.max_target_sparsity)?;
        if self.min_target_sparsity > self.max_target_sparsity {
            return Err(ConfigError::new(
                CONTEXT,
                format!(
                    "minTargetSparsity {} is greater than maxTargetSparsity {}",
                    self.min_target_sparsity, self.max_target_sparsity
                ),
            ));
        }
        check_decay(self.decay_rate)
    }
}

/// Settings of [`TargetSparsityThreshold`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetSparsityConfig {
    pub initial_threshold: f64,
    pub sparsity_target: f64,
    pub decay_rate: f64,
}

impl Default for TargetSparsityConfig {
    fn default() -> Self {
        TargetSparsityConfig {
            initial_threshold: 1e-4,
            sparsity_target: 1e-3,
            decay_rate: DEFAULT_DECAY_RATE,
        }
    }
}

impl TargetSparsityConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_threshold(CONTEXT, "initialThreshold", self.initial_threshold)?;
        check_sparsity("sparsityTarget", self.sparsity_target)?;
        check_decay(self.decay_rate)
    }
}

/// Settings of [`FixedThreshold`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FixedConfig {
    pub threshold: f64,
}

impl Default for FixedConfig {
    fn default() -> Self {
        FixedConfig { threshold: 1e-3 }
    }
}

impl FixedConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_threshold(CONTEXT, "threshold", self.threshold)
    }
}

/// A threshold algorithm's configuration, as the Java side writes it (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", try_from = "Value")]
pub enum ThresholdAlgorithmConfig {
    Adaptive(AdaptiveConfig),
    TargetSparsity(TargetSparsityConfig),
    Fixed(FixedConfig),
}

impl Default for ThresholdAlgorithmConfig {
    fn default() -> Self {
        ThresholdAlgorithmConfig::Adaptive(AdaptiveConfig::default())
    }
}

impl TryFrom<Value> for ThresholdAlgorithmConfig {
    type Error = ConfigError;
    fn try_from(value: Value) -> Result<Self, ConfigError> {
        ThresholdAlgorithmConfig::from_json_value(&value)
    }
}

impl ThresholdAlgorithmConfig {
    /// Reads and validates a configuration; `null` is the default (Adaptive with its defaults).
    pub fn from_json_value(value: &Value) -> Result<Self, ConfigError> {
        if value.is_null() {
            return Ok(Self::default());
        }
        let f = Tagged::parse(CONTEXT, value, &TYPES)?;
        let config = match f.kind {
            "adaptive" => {
                f.only(&[
                    "initialThreshold",
                    "minTargetSparsity",
                    "maxTargetSparsity",
                    "decayRate",
                ])?;
                let d = AdaptiveConfig::default();
                ThresholdAlgorithmConfig::Adaptive(AdaptiveConfig {
                    initial_threshold: f.f64("initialThreshold", d.initial_threshold)?,
                    min_target_sparsity: f.f64("minTargetSparsity", d.min_target_sparsity)?,
                    max_target_sparsity: f.f64("maxTargetSparsity", d.max_target_sparsity)?,
                    decay_rate: f.f64("decayRate", d.decay_rate)?,
                })
            }
            "targetSparsity" => {
                f.only(&["initialThreshold", "sparsityTarget", "decayRate"])?;
                let d = TargetSparsityConfig::default();
                ThresholdAlgorithmConfig::TargetSparsity(TargetSparsityConfig {
                    initial_threshold: f.f64("initialThreshold", d.initial_threshold)?,
                    sparsity_target: f.f64("sparsityTarget", d.sparsity_target)?,
                    decay_rate: f.f64("decayRate", d.decay_rate)?,
                })
            }
            _ => {
                f.only(&["threshold"])?;
                ThresholdAlgorithmConfig::Fixed(FixedConfig {
                    threshold: f.f64("threshold", FixedConfig::default().threshold)?,
                })
            }
        };
        config.validate()?;
        Ok(config)
    }

    /// Parses JSON text (see [`Self::from_json_value`]).
    pub fn from_json_str(json: &str) -> Result<Self, ConfigError> {
        let value: Value = serde_json::from_str(json)
            .map_err(|e| ConfigError::new(CONTEXT, format!("not valid JSON: {e}")))?;
        Self::from_json_value(&value)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            ThresholdAlgorithmConfig::Adaptive(c) => c.validate(),
            ThresholdAlgorithmConfig::TargetSparsity(c) => c.validate(),
            ThresholdAlgorithmConfig::Fixed(c) => c.validate(),
        }
    }

    /// A fresh algorithm at its initial threshold.
    pub fn build(&self) -> Result<Box<dyn ThresholdAlgorithm>, ConfigError> {
        Ok(match *self {
            ThresholdAlgorithmConfig::Adaptive(c) => Box::new(AdaptiveThreshold::new(c)?),
            ThresholdAlgorithmConfig::TargetSparsity(c) => {
                Box::new(TargetSparsityThreshold::new(c)?)
            }
            ThresholdAlgorithmConfig::Fixed(c) => Box::new(FixedThreshold::new(c)?),
        })
    }

    /// An algorithm that continues from `carried` where [`ThresholdAlgorithm::set_state`] uses it.
    pub fn build_with_state(
        &self,
        carried: Option<&ThresholdState>,
    ) -> Result<Box<dyn ThresholdAlgorithm>, ConfigError> {
        let mut algorithm = self.build()?;
        if let Some(state) = carried {
            algorithm.set_state(state)?;
        }
        Ok(algorithm)
    }
}

/// One multiplicative step, kept within [`MIN_THRESHOLD`, `MAX_THRESHOLD`].
fn step(t: f64, decay: f64, lower: bool, raise: bool) -> f64 {
    let next = if lower {
        t * decay
    } else if raise {
        t / decay
    } else {
        t
    };
    next.clamp(MIN_THRESHOLD, MAX_THRESHOLD)
}

/// Applies a carried state of type `name` to `current`; see [`ThresholdAlgorithm::set_state`].
fn adopt(name: &str, current: &mut f64, state: &ThresholdState) -> Result<bool, ConfigError> {
    state.validate()?;
    if state.algorithm == name {
        *current = state.threshold;
        Ok(true)
    } else {
        Ok(false)
    }
}

/// The rule of a threshold that moves by one multiplicative step after every encode: lowered
/// (× decay) when too few entries were sent, raised (÷ decay) when too many, else kept.
pub trait StepRule: Copy + fmt::Debug + PartialEq + Send + 'static {
    /// The JSON `type` of the algorithm (also the name of its carried state).
    const NAME: &'static str;
    fn validate(&self) -> Result<(), ConfigError>;
    fn initial_threshold(&self) -> f64;
    fn decay_rate(&self) -> f64;
    /// `(lower, raise)` for the fraction of entries `sparsity` sent by the last encode.
    fn direction(&self, sparsity: f64) -> (bool, bool);
}

impl StepRule for AdaptiveConfig {
    const NAME: &'static str = "adaptive";
    fn validate(&self) -> Result<(), ConfigError> {
        AdaptiveConfig::validate(self)
    }
    fn initial_threshold(&self) -> f64 {
        self.initial_threshold
    }
    fn decay_rate(&self) -> f64 {
        self.decay_rate
    }
    /// Keeps the fraction of sent entries between two bounds.
    fn direction(&self, s: f64) -> (bool, bool) {
        (s < self.min_target_sparsity, s > self.max_target_sparsity)
    }
}

/// A threshold algorithm driven by a [`StepRule`].
#[derive(Clone, Debug, PartialEq)]
pub struct SteppedThreshold<R: StepRule> {
    config: R,
    current: f64,
}

/// Keeps the fraction of sent entries between two bounds (the default).
pub type AdaptiveThreshold = SteppedThreshold<AdaptiveConfig>;

impl<R: StepRule> SteppedThreshold<R> {
    pub fn new(config: R) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(SteppedThreshold {
            config,
            current: config.initial_threshold(),
        })
    }
}

impl<R: StepRule> ThresholdAlgorithm for SteppedThreshold<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }
    fn threshold(&mut self, _iteration: u64, _epoch: u64) -> f32 {
        self.current_threshold()
    }
    fn current_threshold(&self) -> f32 {
        self.current as f32
    }
    fn observe(&mut self, stats: &EncodeStats) {
        let (lower, raise) = self.config.direction(stats.sparsity);
        self.current = step(self.current, self.config.decay_rate(), lower, raise);
    }
    fn state(&self) -> ThresholdState {
        ThresholdState {
            algorithm: self.name().into(),
            threshold: self.current,
        }
    }
    fn set_state(&mut self, state: &ThresholdState) -> Result<bool, ConfigError> {
        adopt(self.name(), &mut self.current, state)
    }
}

/// Steps over which [`TargetSparsityThreshold`] averages the sparsity it steers by.
pub const TARGET_SPARSITY_WINDOW: f64 = 20.0;
/// Exponent of [`TargetSparsityThreshold`]'s step: `t *= (mean / target)^gain`.
pub const TARGET_SPARSITY_GAIN: f64 = 0.25;

/// Steers the **mean** fraction of sent entries to `sparsityTarget`.
///
/// After each encode it updates `m`, an exponential moving average of the sparsity over about
/// [`TARGET_SPARSITY_WINDOW`] steps (the first encode sets it), and moves the threshold by
/// `t *= (m / target)^`[`TARGET_SPARSITY_GAIN`], the factor kept within `[decayRate,
/// 1 / decayRate]` (so `decayRate` is the largest step, as for Adaptive).
///
/// Why not the plain rule "lower `t` when this step sent less than the target, raise it when it
/// sent more" (what this algorithm did before, and what the reference does)? Unsent residuals pile
/// up just below `t`, so every step down releases at once all of them in `[decay · t, t)` (with
/// `decay = 0.5^(1/20)`, a 3.4% band), far more than the target, while the steps up send almost
/// nothing. That rule balances the *number* of steps above and below the target, i.e. it steers
/// the median sparsity, and the bursts of the down steps make the mean several times the target
/// (≈3e-3 for a 1e-3 target on the MNIST MLP). Steering the averaged sparsity, which counts the
/// bursts, with steps that shrink as the average approaches the target (small steps release small
/// bands) makes the mean converge to the target: `t` keeps moving while `m` differs from it.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetSparsityThreshold {
    config: TargetSparsityConfig,
    current: f64,
    /// Moving average of the sparsity; `None` before the first encode.
    mean: Option<f64>,
}

impl TargetSparsityThreshold {
    pub fn new(config: TargetSparsityConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(TargetSparsityThreshold {
            config,
            current: config.initial_threshold,
            mean: None,
        })
    }

    /// The moving average of the sparsity the next step is steered by (`None` before any encode).
    pub fn mean_sparsity(&self) -> Option<f64> {
        self.mean
    }
}

impl ThresholdAlgorithm for TargetSparsityThreshold {
    fn name(&self) -> &'static str {
        "targetSparsity"
    }
    fn threshold(&mut self, _iteration: u64, _epoch: u64) -> f32 {
        self.current_threshold()
    }
    fn current_threshold(&self) -> f32 {
        self.current as f32
    }
    fn observe(&mut self, stats: &EncodeStats) {
        let s = stats.sparsity;
        let m = match self.mean {
            None => s,
            Some(m) => m + (s - m) / TARGET_SPARSITY_WINDOW,
        };
        self.mean = Some(m);
        let d = self.config.decay_rate;
        // m = 0 gives factor 0, clamped to the largest step down.
        let factor = (m / self.config.sparsity_target)
            .powf(TARGET_SPARSITY_GAIN)
            .clamp(d, 1.0 / d);
        self.current = (self.current * factor).clamp(MIN_THRESHOLD, MAX_THRESHOLD);
    }
    fn state(&self) -> ThresholdState {
        ThresholdState {
            algorithm: self.name().into(),
            threshold: self.current,
        }
    }
    fn set_state(&mut self, state: &ThresholdState) -> Result<bool, ConfigError> {
        adopt(self.name(), &mut self.current, state)
    }
}

/// A constant threshold.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedThreshold {
    config: FixedConfig,
}

impl FixedThreshold {
    pub fn new(config: FixedConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(FixedThreshold { config })
    }
}

impl ThresholdAlgorithm for FixedThreshold {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn threshold(&mut self, _iteration: u64, _epoch: u64) -> f32 {
        self.current_threshold()
    }
    fn current_threshold(&self) -> f32 {
        self.config.threshold as f32
    }
    fn observe(&mut self, _stats: &EncodeStats) {}
    fn state(&self) -> ThresholdState {
        ThresholdState {
            algorithm: self.name().into(),
            threshold: self.config.threshold,
        }
    }
    fn set_state(&mut self, state: &ThresholdState) -> Result<bool, ConfigError> {
        state.validate()?;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Encoding;
    use serde_json::json;

    fn stats(entries: u64, params: u64) -> EncodeStats {
        EncodeStats {
            encoding: Encoding::Sparse,
            entries,
            bytes: 0,
            sparsity: entries as f64 / params as f64,
            threshold: 0.0,
            param_count: params,
        }
    }

    fn parse(v: Value) -> Result<ThresholdAlgorithmConfig, String> {
        ThresholdAlgorithmConfig::from_json_value(&v).map_err(|e| e.to_string())
    }

    #[test]
    fn default_decay_rate_is_the_twentieth_root_of_a_half() {
        assert_eq!(DEFAULT_DECAY_RATE, 0.5f64.powf(1.0 / 20.0));
        let mut x = 1.0f64;
        for _ in 0..20 {
            x *= DEFAULT_DECAY_RATE;
        }
        assert!((x - 0.5).abs() < 1e-15, "{x}");
    }

    #[test]
    fn adaptive_lowers_raises_and_holds() {
        let mut a = ThresholdAlgorithmConfig::default().build().unwrap();
        assert_eq!(a.name(), "adaptive");
        assert_eq!(a.threshold(0, 0), 1e-4f32);
        // Five encodes with sparsity 1e-5 < 1e-4 (and one with nothing sent, s = 0).
        let mut expected = 1e-4f64;
        for i in 0..5 {
            a.observe(&stats(if i == 0 { 0 } else { 1 }, 100_000));
            expected *= DEFAULT_DECAY_RATE;
        }
        assert_eq!(a.state().threshold, expected);
        assert!((expected - 1e-4 * DEFAULT_DECAY_RATE.powi(5)).abs() < 1e-18);
        assert_eq!(a.threshold(5, 0), expected as f32);
        // Inside [1e-4, 1e-2] (bounds included): unchanged.
        for entries in [10, 500, 1000] {
            a.observe(&stats(entries, 100_000));
            assert_eq!(a.state().threshold, expected);
        }
        // Above 1e-2: divided by the decay rate, two steps.
        a.observe(&stats(2000, 100_000));
        a.observe(&stats(100_000, 100_000));
        expected = expected / DEFAULT_DECAY_RATE / DEFAULT_DECAY_RATE;
        assert_eq!(a.state().threshold, expected);
        // 20 steps down halve it (to 1e-15 relative).
        let before = a.state().threshold;
        for _ in 0..20 {
            a.observe(&stats(0, 10));
        }
        assert!((a.state().threshold / before - 0.5).abs() < 1e-14);
    }

    #[test]
    fn target_sparsity_steers_by_the_averaged_sparsity() {
        let mut a = TargetSparsityThreshold::new(TargetSparsityConfig {
            initial_threshold: 0.01,
            sparsity_target: 1e-3,
            decay_rate: 0.5,
        })
        .unwrap();
        assert_eq!(a.name(), "targetSparsity");
        assert_eq!(a.mean_sparsity(), None);
        // The first encode sets the average; exactly on target: no move.
        a.observe(&stats(10, 10_000));
        assert_eq!(a.mean_sparsity(), Some(1e-3));
        assert_eq!(a.state().threshold, 0.01);
        // Nothing sent: the average moves a twentieth of the way to 0, t by (0.95)^(1/4).
        a.observe(&stats(0, 10_000));
        let m = 1e-3 - 1e-3 / TARGET_SPARSITY_WINDOW;
        assert!((a.mean_sparsity().unwrap() - m).abs() < 1e-18);
        let t = 0.01 * (m / 1e-3).powf(TARGET_SPARSITY_GAIN);
        assert!(
            (a.state().threshold - t).abs() < 1e-15,
            "{}",
            a.state().threshold
        );
        // Everything sent: the average jumps to ~0.051, 51x the target; 51^(1/4) = 2.67 is
        // clamped to one step up (1 / decay = 2).
        a.observe(&stats(10_000, 10_000));
        assert!((a.state().threshold - 2.0 * t).abs() < 1e-15);
        assert_eq!(a.current_threshold(), (2.0 * t) as f32);
        // A fresh algorithm whose first encode sent nothing takes one step down (× decay).
        let mut b =
            parse(json!({"type": "targetSparsity", "initialThreshold": 0.01, "decayRate": 0.5}))
                .unwrap()
                .build()
                .unwrap();
        b.observe(&stats(0, 10_000));
        assert_eq!(b.state().threshold, 0.005);
        // A carried state sets the threshold; the average starts afresh with the next encode.
        assert!(b
            .set_state(&ThresholdState {
                algorithm: "targetSparsity".into(),
                threshold: 0.25
            })
            .unwrap());
        assert_eq!(b.current_threshold(), 0.25);
    }

    #[test]
    fn fixed_never_moves_and_ignores_carried_state() {
        let mut a = parse(json!({"type": "fixed", "threshold": 0.003}))
            .unwrap()
            .build()
            .unwrap();
        for s in [0, 5, 10] {
            a.observe(&stats(s, 10));
        }
        assert_eq!(a.threshold(7, 1), 0.003f32);
        let carried = ThresholdState {
            algorithm: "fixed".into(),
            threshold: 0.5,
        };
        assert!(!a.set_state(&carried).unwrap());
        assert_eq!(
            a.state(),
            ThresholdState {
                algorithm: "fixed".into(),
                threshold: 0.003
            }
        );
        assert_eq!(
            parse(json!({"type": "fixed"})).unwrap(),
            ThresholdAlgorithmConfig::Fixed(FixedConfig { threshold: 1e-3 })
        );
    }

    #[test]
    fn adapting_thresholds_stay_within_bounds() {
        let mut a = parse(json!({"type": "adaptive", "initialThreshold": 1e-29, "decayRate": 0.5}))
            .unwrap()
            .build()
            .unwrap();
        for _ in 0..10 {
            a.observe(&stats(0, 10));
        }
        assert_eq!(a.state().threshold, MIN_THRESHOLD);
        assert!(a.current_threshold() > 0.0);
        let mut a =
            parse(json!({"type": "targetSparsity", "initialThreshold": 1e29, "decayRate": 0.5}))
                .unwrap()
                .build()
                .unwrap();
        for _ in 0..10 {
            a.observe(&stats(10, 10));
        }
        assert_eq!(a.state().threshold, MAX_THRESHOLD);
        assert!(a.current_threshold().is_finite());
    }

    #[test]
    fn json_shapes_round_trip_with_defaults() {
        let full = json!({"type": "adaptive", "initialThreshold": 1e-4, "minTargetSparsity": 1e-4,
                          "maxTargetSparsity": 1e-2, "decayRate": DEFAULT_DECAY_RATE});
        let c = parse(full.clone()).unwrap();
        assert_eq!(c, ThresholdAlgorithmConfig::default());
        assert_eq!(serde_json::to_value(c).unwrap(), full);
        assert_eq!(parse(json!({"type": "adaptive"})).unwrap(), c);
        assert_eq!(parse(Value::Null).unwrap(), c);
        assert_eq!(
            parse(json!({"type": "adaptive", "decayRate": null})).unwrap(),
            c
        );
        let ts = parse(json!({"type": "targetSparsity"})).unwrap();
        assert_eq!(
            serde_json::to_value(ts).unwrap(),
            json!({"type": "targetSparsity", "initialThreshold": 1e-4, "sparsityTarget": 1e-3, "decayRate": DEFAULT_DECAY_RATE})
        );
        let fixed: ThresholdAlgorithmConfig =
            serde_json::from_str(r#"{"type":"fixed","threshold":1e-3}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&fixed).unwrap(),
            r#"{"type":"fixed","threshold":0.001}"#
        );
        // Jackson's number style and integers.
        let c = parse(json!({"type": "adaptive", "initialThreshold": 1, "maxTargetSparsity": 1}))
            .unwrap();
        assert_eq!(
            c,
            ThresholdAlgorithmConfig::Adaptive(AdaptiveConfig {
                initial_threshold: 1.0,
                max_target_sparsity: 1.0,
                ..Default::default()
            })
        );
        assert!(
            ThresholdAlgorithmConfig::from_json_str(r#"{"type":"fixed","threshold":1.0E-3}"#)
                .is_ok()
        );
    }

    #[test]
    fn bad_configurations_name_the_problem() {
        let cases = [
            (json!({"type": "bogus"}), "threshold algorithm: unknown type \"bogus\" (expected one of \"adaptive\", \"targetSparsity\", \"fixed\")"),
            (json!({"initialThreshold": 1}), "threshold algorithm: missing \"type\" (one of \"adaptive\", \"targetSparsity\", \"fixed\")"),
            (json!({"type": 3}), "threshold algorithm: \"type\" must be a string, got 3"),
            (json!([1]), "threshold algorithm: expected a JSON object with a \"type\", got [1]"),
            (json!({"type": "fixed", "threshold": 0}), "threshold algorithm: threshold must be a number in [1e-30, 1e30], got 0"),
            (json!({"type": "fixed", "threshold": -1e-3}), "threshold algorithm: threshold must be a number in [1e-30, 1e30], got -0.001"),
            (json!({"type": "fixed", "threshold": "1e-3"}), "threshold algorithm: threshold must be a number, got \"1e-3\""),
            (json!({"type": "adaptive", "initialThreshold": 0}), "threshold algorithm: initialThreshold must be a number in [1e-30, 1e30], got 0"),
            (json!({"type": "adaptive", "minTargetSparsity": 0}), "threshold algorithm: minTargetSparsity must be in (0, 1], got 0"),
            (json!({"type": "adaptive", "maxTargetSparsity": 1.5}), "threshold algorithm: maxTargetSparsity must be in (0, 1], got 1.5"),
            (json!({"type": "adaptive", "minTargetSparsity": 0.1, "maxTargetSparsity": 0.01}), "threshold algorithm: minTargetSparsity 0.1 is greater than maxTargetSparsity 0.01"),
            (json!({"type": "adaptive", "decayRate": 1.0}), "threshold algorithm: decayRate must be in (0, 1), got 1"),
            (json!({"type": "targetSparsity", "decayRate": 0}), "threshold algorithm: decayRate must be in (0, 1), got 0"),
            (json!({"type": "targetSparsity", "sparsityTarget": -1}), "threshold algorithm: sparsityTarget must be in (0, 1], got -1"),
            (json!({"type": "adaptive", "decay": 0.5}), "threshold algorithm: unknown field \"decay\" for type \"adaptive\" (expected \"initialThreshold\", \"minTargetSparsity\", \"maxTargetSparsity\", \"decayRate\")"),
        ];
        for (v, message) in cases {
            assert_eq!(parse(v).unwrap_err(), message);
        }
        assert!(ThresholdAlgorithmConfig::from_json_str("{")
            .unwrap_err()
            .to_string()
            .starts_with("threshold algorithm: not valid JSON"));
        let e = serde_json::from_str::<ThresholdAlgorithmConfig>(r#"{"type":"nope"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown type \"nope\""), "{e}");
    }

    #[test]
    fn states_carry_average_and_validate() {
        let cfg = ThresholdAlgorithmConfig::default();
        let carried = ThresholdState {
            algorithm: "adaptive".into(),
            threshold: 3e-3,
        };
        let a = cfg.build_with_state(Some(&carried)).unwrap();
        assert_eq!(a.current_threshold(), 3e-3f32);
        // A state of another algorithm is ignored: the new configuration wins.
        let other = ThresholdState {
            algorithm: "targetSparsity".into(),
            threshold: 3e-3,
        };
        let a = cfg.build_with_state(Some(&other)).unwrap();
        assert_eq!(a.current_threshold(), 1e-4f32);
        // An invalid state is refused.
        let bad = ThresholdState {
            algorithm: "adaptive".into(),
            threshold: f64::NAN,
        };
        assert_eq!(
            cfg.build_with_state(Some(&bad)).unwrap_err().to_string(),
            "threshold state: threshold must be a number in [1e-30, 1e30], got NaN"
        );

        let states: Vec<ThresholdState> = [1e-4, 2e-4, 6e-4]
            .iter()
            .map(|&t| ThresholdState {
                algorithm: "adaptive".into(),
                threshold: t,
            })
            .collect();
        let avg = average_states(&states).unwrap();
        assert_eq!(avg.algorithm, "adaptive");
        assert!((avg.threshold - 3e-4).abs() < 1e-19, "{}", avg.threshold);
        assert_eq!(average_states(&[]), None);
        let mut mixed = states.clone();
        mixed.push(other.clone());
        assert_eq!(average_states(&mixed), None);
        assert_eq!(
            try_average_states(&mixed).unwrap_err().to_string(),
            "threshold state: cannot average states of different types: state 0 is \"adaptive\", state 3 is \"targetSparsity\""
        );
        let mut invalid = states.clone();
        invalid[1].threshold = -1.0;
        assert_eq!(
            try_average_states(&invalid).unwrap_err().to_string(),
            "threshold state: state 1 of 3: threshold must be a number in [1e-30, 1e30], got -1"
        );

        // JSON shape.
        let v = serde_json::to_value(&avg).unwrap();
        assert_eq!(v["type"], "adaptive");
        let back: ThresholdState = serde_json::from_value(v).unwrap();
        assert_eq!(back, avg);
        assert_eq!(
            serde_json::to_string(&ThresholdState {
                algorithm: "fixed".into(),
                threshold: 0.5
            })
            .unwrap(),
            r#"{"type":"fixed","threshold":0.5}"#
        );
        for (v, message) in [
            (json!({"type": "adaptive"}), "threshold state: threshold is missing"),
            (json!({"type": "adaptive", "threshold": 1e-3, "x": 1}), "threshold state: unknown field \"x\" for type \"adaptive\" (expected \"threshold\")"),
            (json!({"type": "mystery", "threshold": 1e-3}), "threshold state: unknown type \"mystery\" (expected one of \"adaptive\", \"targetSparsity\", \"fixed\")"),
        ] {
            assert_eq!(ThresholdState::from_json_value(&v).unwrap_err().to_string(), message);
        }
    }
}
