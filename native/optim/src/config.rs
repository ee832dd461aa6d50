//! The updater object of the configuration JSON, as written by the Java classes of
//! `org.ferrodl.linalg.learning.config`: tagged by `"type"` (the Java class name), camelCase
//! fields named like the Java getters, unknown fields refused, missing fields taking the
//! reference's defaults. `learningRateSchedule` (and Nesterovs' `momentumSchedule`) may be absent,
//! `null` or a schedule object (see [`crate::schedule`]); a schedule takes precedence over the
//! fixed value.

use crate::schedule::{Problem, Schedule};
use crate::updaters::{
    AMSGrad, AdaDelta, AdaGrad, AdaMax, Adam, Nadam, Nesterovs, NoOp, RmsProp, Sgd,
};
use crate::AnyUpdater;
use serde::{Deserialize, Serialize};

/// An updater object of the configuration, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum UpdaterConfig {
    Sgd(Sgd),
    Adam(Adam),
    AdaMax(AdaMax),
    Nadam(Nadam),
    AMSGrad(AMSGrad),
    RmsProp(RmsProp),
    Nesterovs(Nesterovs),
    AdaGrad(AdaGrad),
    AdaDelta(AdaDelta),
    NoOp(NoOp),
}

impl Default for UpdaterConfig {
    /// The reference's default updater: Sgd with learning rate 1e-3.
    fn default() -> Self {
        UpdaterConfig::Sgd(Sgd::default())
    }
}

const NON_NEG: &str = "must be a finite number >= 0";
const POSITIVE: &str = "must be a finite number > 0";
const UNIT: &str = "must be in [0, 1)";

fn non_neg(field: &str, v: f64) -> Result<(), Problem> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err((field.to_string(), v, NON_NEG))
    }
}

fn positive(field: &str, v: f64) -> Result<(), Problem> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err((field.to_string(), v, POSITIVE))
    }
}

fn unit(field: &str, v: f64) -> Result<(), Problem> {
    if (0.0..1.0).contains(&v) {
        Ok(())
    } else {
        Err((field.to_string(), v, UNIT))
    }
}

fn lr(v: f64, schedule: &Option<Schedule>) -> Result<(), Problem> {
    non_neg("learningRate", v)?;
    match schedule {
        Some(s) => s.check("learningRateSchedule"),
        None => Ok(()),
    }
}

fn adam_like(
    learning_rate: f64,
    schedule: &Option<Schedule>,
    beta1: f64,
    beta2: f64,
    epsilon: f64,
) -> Result<(), Problem> {
    lr(learning_rate, schedule)?;
    unit("beta1", beta1)?;
    unit("beta2", beta2)?;
    positive("epsilon", epsilon)
}

/// A momentum schedule must stay below 1: its starting value (every value of a MapSchedule) is
/// checked against [0, 1).
fn momentum_schedule(s: &Schedule) -> Result<(), Problem> {
    s.check("momentumSchedule")?;
    match s {
        Schedule::Map(m) => {
            for (k, v) in &m.values {
                unit(&format!("momentumSchedule.values[{k}]"), *v)?;
            }
            Ok(())
        }
        Schedule::Step(x) => unit("momentumSchedule.initialValue", x.initial_value),
        Schedule::Exponential(x) => unit("momentumSchedule.initialValue", x.initial_value),
        Schedule::Inverse(x) => unit("momentumSchedule.initialValue", x.initial_value),
        Schedule::Poly(x) => unit("momentumSchedule.initialValue", x.initial_value),
        Schedule::Sigmoid(x) => unit("momentumSchedule.initialValue", x.initial_value),
    }
}

impl UpdaterConfig {
    /// The Java class name (the JSON `type`).
    pub fn type_name(&self) -> &'static str {
        match self {
            UpdaterConfig::Sgd(_) => "Sgd",
            UpdaterConfig::Adam(_) => "Adam",
            UpdaterConfig::AdaMax(_) => "AdaMax",
            UpdaterConfig::Nadam(_) => "Nadam",
            UpdaterConfig::AMSGrad(_) => "AMSGrad",
            UpdaterConfig::RmsProp(_) => "RmsProp",
            UpdaterConfig::Nesterovs(_) => "Nesterovs",
            UpdaterConfig::AdaGrad(_) => "AdaGrad",
            UpdaterConfig::AdaDelta(_) => "AdaDelta",
            UpdaterConfig::NoOp(_) => "NoOp",
        }
    }

    /// Checks value ranges; `what` names the place for the message, e.g. with
    /// `what = "layer 1 (DenseLayer) updater"`:
    /// `layer 1 (DenseLayer) updater: beta1=1.5 is invalid (must be in [0, 1))`.
    ///
    /// Rules: `learningRate` finite and >= 0; `beta1`, `beta2`, `rmsDecay`, `rho`, `momentum` in
    /// [0, 1); `epsilon` finite and > 0; schedules: `initialValue`, `decayRate`, and the `gamma` of
    /// Exponential and Inverse finite and >= 0, `step` > 0, `power` and Sigmoid's `gamma` finite,
    /// `maxIter` > 0, MapSchedule with key 0, keys >= 0 and values finite and >= 0 (and a momentum
    /// schedule's starting value, or every MapSchedule value, in [0, 1)).
    pub fn validate(&self, what: &str) -> Result<(), String> {
        let r = match self {
            UpdaterConfig::Sgd(u) => lr(u.learning_rate, &u.learning_rate_schedule),
            UpdaterConfig::Adam(u) => adam_like(
                u.learning_rate,
                &u.learning_rate_schedule,
                u.beta1,
                u.beta2,
                u.epsilon,
            ),
            UpdaterConfig::AdaMax(u) => adam_like(
                u.learning_rate,
                &u.learning_rate_schedule,
                u.beta1,
                u.beta2,
                u.epsilon,
            ),
            UpdaterConfig::Nadam(u) => adam_like(
                u.learning_rate,
                &u.learning_rate_schedule,
                u.beta1,
                u.beta2,
                u.epsilon,
            ),
            UpdaterConfig::AMSGrad(u) => adam_like(
                u.learning_rate,
                &u.learning_rate_schedule,
                u.beta1,
                u.beta2,
                u.epsilon,
            ),
            UpdaterConfig::RmsProp(u) => lr(u.learning_rate, &u.learning_rate_schedule)
                .and_then(|_| unit("rmsDecay", u.rms_decay))
                .and_then(|_| positive("epsilon", u.epsilon)),
            UpdaterConfig::Nesterovs(u) => lr(u.learning_rate, &u.learning_rate_schedule)
                .and_then(|_| unit("momentum", u.momentum))
                .and_then(|_| match &u.momentum_schedule {
                    Some(s) => momentum_schedule(s),
                    None => Ok(()),
                }),
            UpdaterConfig::AdaGrad(u) => lr(u.learning_rate, &u.learning_rate_schedule)
                .and_then(|_| positive("epsilon", u.epsilon)),
            UpdaterConfig::AdaDelta(u) => {
                unit("rho", u.rho).and_then(|_| positive("epsilon", u.epsilon))
            }
            UpdaterConfig::NoOp(_) => Ok(()),
        };
        r.map_err(|(field, value, rule)| format!("{what}: {field}={value} is invalid ({rule})"))
    }

    /// The engine-side updater.
    pub fn to_updater(&self) -> AnyUpdater {
        match self {
            UpdaterConfig::Sgd(u) => AnyUpdater::Sgd(u.clone()),
            UpdaterConfig::Adam(u) => AnyUpdater::Adam(u.clone()),
            UpdaterConfig::AdaMax(u) => AnyUpdater::AdaMax(u.clone()),
            UpdaterConfig::Nadam(u) => AnyUpdater::Nadam(u.clone()),
            UpdaterConfig::AMSGrad(u) => AnyUpdater::AMSGrad(u.clone()),
            UpdaterConfig::RmsProp(u) => AnyUpdater::RmsProp(u.clone()),
            UpdaterConfig::Nesterovs(u) => AnyUpdater::Nesterovs(u.clone()),
            UpdaterConfig::AdaGrad(u) => AnyUpdater::AdaGrad(u.clone()),
            UpdaterConfig::AdaDelta(u) => AnyUpdater::AdaDelta(u.clone()),
            UpdaterConfig::NoOp(u) => AnyUpdater::NoOp(u.clone()),
        }
    }
}

impl From<AnyUpdater> for UpdaterConfig {
    fn from(u: AnyUpdater) -> Self {
        match u {
            AnyUpdater::Sgd(u) => UpdaterConfig::Sgd(u),
            AnyUpdater::Adam(u) => UpdaterConfig::Adam(u),
            AnyUpdater::AdaMax(u) => UpdaterConfig::AdaMax(u),
            AnyUpdater::Nadam(u) => UpdaterConfig::Nadam(u),
            AnyUpdater::AMSGrad(u) => UpdaterConfig::AMSGrad(u),
            AnyUpdater::RmsProp(u) => UpdaterConfig::RmsProp(u),
            AnyUpdater::Nesterovs(u) => UpdaterConfig::Nesterovs(u),
            AnyUpdater::AdaGrad(u) => UpdaterConfig::AdaGrad(u),
            AnyUpdater::AdaDelta(u) => UpdaterConfig::AdaDelta(u),
            AnyUpdater::NoOp(u) => UpdaterConfig::NoOp(u),
        }
    }
}
