//! Learning-rate (and momentum) schedules: the reference's `ISchedule` implementations.
//!
//! A schedule maps a position `i` (the iteration or the epoch, both 0-based, chosen by
//! [`ScheduleType`]) to a value. Every schedule is a plain value: evaluating it allocates nothing
//! and costs a few floating-point operations, so the optimizer evaluates it once per parameter
//! block and step.
//!
//! JSON (what the Java classes of `org.ferrodl.linalg.schedule` write), for example
//! `{"type":"StepSchedule","scheduleType":"ITERATION","initialValue":0.1,"decayRate":0.5,"step":100}`
//! or `{"type":"MapSchedule","scheduleType":"EPOCH","values":{"0":0.1,"10":0.01}}`.
//! All fields are required; unknown fields are an error.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Whether a schedule is indexed by the iteration count or by the epoch count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScheduleType {
    /// `i` = the iteration (one per minibatch `fit`), 0-based.
    #[serde(rename = "ITERATION")]
    Iteration,
    /// `i` = the epoch, 0-based.
    #[serde(rename = "EPOCH")]
    Epoch,
}

impl ScheduleType {
    /// The position this schedule type reads: `iteration` or `epoch`.
    #[inline]
    pub fn position(self, iteration: u64, epoch: u64) -> u64 {
        match self {
            ScheduleType::Iteration => iteration,
            ScheduleType::Epoch => epoch,
        }
    }
}

/// `value(i) = initialValue · decayRate^floor(i / step)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepSchedule {
    pub schedule_type: ScheduleType,
    pub initial_value: f64,
    pub decay_rate: f64,
    /// Length of one step in iterations or epochs (a real number, as in the reference; > 0).
    pub step: f64,
}

/// `value(i) = initialValue · gamma^i`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExponentialSchedule {
    pub schedule_type: ScheduleType,
    pub initial_value: f64,
    pub gamma: f64,
}

/// `value(i) = initialValue / (1 + gamma·i)^power`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InverseSchedule {
    pub schedule_type: ScheduleType,
    pub initial_value: f64,
    pub gamma: f64,
    pub power: f64,
}

/// `value(i) = initialValue · (1 + i/maxIter)^(-power)` for `i < maxIter`, and `0` from `maxIter` on.
///
/// This is the formula the reference documents for `PolySchedule`. (The reference's code raises
/// to `+power`, which makes a "decay" schedule grow until it drops to 0; we follow the documented,
/// decaying form. See docs/UPDATERS.md.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolySchedule {
    pub schedule_type: ScheduleType,
    pub initial_value: f64,
    pub power: f64,
    /// > 0 (a Java `int`).
    pub max_iter: i64,
}

/// `value(i) = initialValue / (1 + exp(-gamma·(i - stepSize)))`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SigmoidSchedule {
    pub schedule_type: ScheduleType,
    pub initial_value: f64,
    pub gamma: f64,
    /// Position of the sigmoid's midpoint (a Java `int`).
    pub step_size: i64,
}

/// Piecewise constant: the value of the largest key `<= i`; a value holds until the next key.
/// Key 0 is required (it is the initial value); keys are positions (`>= 0`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MapSchedule {
    pub schedule_type: ScheduleType,
    /// Position → value. In JSON an object with the positions as (string) keys.
    #[serde(with = "int_keys")]
    pub values: BTreeMap<i64, f64>,
}

/// A map with integer keys written as JSON object keys (strings). Inside a `"type"`-tagged enum
/// serde buffers the object and no longer converts string keys to integers, so the keys are read
/// as strings and parsed here.
mod int_keys {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<S: Serializer>(m: &BTreeMap<i64, f64>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(m.iter().map(|(k, v)| (k.to_string(), *v)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<i64, f64>, D::Error> {
        let raw = BTreeMap::<String, f64>::deserialize(d)?;
        raw.into_iter()
            .map(|(k, v)| {
                k.parse::<i64>().map(|k| (k, v)).map_err(|_| {
                    D::Error::custom(format!("MapSchedule key {k:?} is not an integer position"))
                })
            })
            .collect()
    }
}

/// Any schedule; in JSON tagged by `"type"` with the reference's class name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Schedule {
    #[serde(rename = "StepSchedule")]
    Step(StepSchedule),
    #[serde(rename = "ExponentialSchedule")]
    Exponential(ExponentialSchedule),
    #[serde(rename = "InverseSchedule")]
    Inverse(InverseSchedule),
    #[serde(rename = "PolySchedule")]
    Poly(PolySchedule),
    #[serde(rename = "SigmoidSchedule")]
    Sigmoid(SigmoidSchedule),
    #[serde(rename = "MapSchedule")]
    Map(MapSchedule),
}

/// A rejected value: (field, value, rule), turned into a message by the caller.
pub(crate) type Problem = (String, f64, &'static str);

fn check(field: &str, v: f64, ok: bool, rule: &'static str) -> Result<(), Problem> {
    if ok {
        Ok(())
    } else {
        Err((field.to_string(), v, rule))
    }
}

const FINITE: &str = "must be a finite number";
const NON_NEG: &str = "must be a finite number >= 0";
const POSITIVE: &str = "must be a finite number > 0";

impl Schedule {
    /// The schedule's value at the given 0-based iteration and epoch.
    pub fn value_at(&self, iteration: u64, epoch: u64) -> f64 {
        match self {
            Schedule::Step(s) => {
                let i = s.schedule_type.position(iteration, epoch) as f64;
                s.initial_value * s.decay_rate.powf((i / s.step).floor())
            }
            Schedule::Exponential(s) => {
                let i = s.schedule_type.position(iteration, epoch) as f64;
                s.initial_value * s.gamma.powf(i)
            }
            Schedule::Inverse(s) => {
                let i = s.schedule_type.position(iteration, epoch) as f64;
                s.initial_value / (1.0 + s.gamma * i).powf(s.power)
            }
            Schedule::Poly(s) => {
                let i = s.schedule_type.position(iteration, epoch);
                if s.max_iter <= 0 || i >= s.max_iter as u64 {
                    0.0
                } else {
                    s.initial_value * (1.0 + i as f64 / s.max_iter as f64).powf(-s.power)
                }
            }
            Schedule::Sigmoid(s) => {
                let i = s.schedule_type.position(iteration, epoch) as f64;
                s.initial_value / (1.0 + (-s.gamma * (i - s.step_size as f64)).exp())
            }
            Schedule::Map(s) => {
                let i = s.schedule_type.position(iteration, epoch);
                let i = i64::try_from(i).unwrap_or(i64::MAX);
                // Key 0 is required by validation; without it positions before the first key take
                // the first key's value rather than panicking.
                s.values
                    .range(..=i)
                    .next_back()
                    .or_else(|| s.values.iter().next())
                    .map_or(f64::NAN, |(_, v)| *v)
            }
        }
    }

    /// Iteration or epoch.
    pub fn schedule_type(&self) -> ScheduleType {
        match self {
            Schedule::Step(s) => s.schedule_type,
            Schedule::Exponential(s) => s.schedule_type,
            Schedule::Inverse(s) => s.schedule_type,
            Schedule::Poly(s) => s.schedule_type,
            Schedule::Sigmoid(s) => s.schedule_type,
            Schedule::Map(s) => s.schedule_type,
        }
    }

    /// Checks the schedule's parameters; `field` prefixes the reported field name
    /// (e.g. `learningRateSchedule` gives `learningRateSchedule.step`). A schedule may only produce
    /// finite values >= 0 (`initialValue >= 0` and non-negative factors), because it stands for a
    /// learning rate or a momentum.
    pub(crate) fn check(&self, field: &str) -> Result<(), Problem> {
        let f = |name: &str| format!("{field}.{name}");
        match self {
            Schedule::Step(s) => {
                check(
                    &f("initialValue"),
                    s.initial_value,
                    non_neg(s.initial_value),
                    NON_NEG,
                )?;
                check(
                    &f("decayRate"),
                    s.decay_rate,
                    non_neg(s.decay_rate),
                    NON_NEG,
                )?;
                check(&f("step"), s.step, positive(s.step), POSITIVE)
            }
            Schedule::Exponential(s) => {
                check(
                    &f("initialValue"),
                    s.initial_value,
                    non_neg(s.initial_value),
                    NON_NEG,
                )?;
                check(&f("gamma"), s.gamma, non_neg(s.gamma), NON_NEG)
            }
            Schedule::Inverse(s) => {
                check(
                    &f("initialValue"),
                    s.initial_value,
                    non_neg(s.initial_value),
                    NON_NEG,
                )?;
                check(&f("gamma"), s.gamma, non_neg(s.gamma), NON_NEG)?;
                check(&f("power"), s.power, s.power.is_finite(), FINITE)
            }
            Schedule::Poly(s) => {
                check(
                    &f("initialValue"),
                    s.initial_value,
                    non_neg(s.initial_value),
                    NON_NEG,
                )?;
                check(&f("power"), s.power, s.power.is_finite(), FINITE)?;
                check(
                    &f("maxIter"),
                    s.max_iter as f64,
                    s.max_iter > 0,
                    "must be an integer > 0",
                )
            }
            Schedule::Sigmoid(s) => {
                check(
                    &f("initialValue"),
                    s.initial_value,
                    non_neg(s.initial_value),
                    NON_NEG,
                )?;
                check(&f("gamma"), s.gamma, s.gamma.is_finite(), FINITE)
            }
            Schedule::Map(s) => {
                if !s.values.contains_key(&0) {
                    let first = s.values.keys().next().map_or(f64::NAN, |k| *k as f64);
                    return check(
                        &f("values"),
                        first,
                        false,
                        "must contain the initial value at position 0 (the value shown is the smallest key)",
                    );
                }
                for (k, v) in &s.values {
                    check(
                        &f("values key"),
                        *k as f64,
                        *k >= 0,
                        "positions must be >= 0",
                    )?;
                    check(&format!("{field}.values[{k}]"), *v, non_neg(*v), NON_NEG)?;
                }
                Ok(())
            }
        }
    }
}

fn non_neg(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}
