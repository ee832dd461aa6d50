//! Residual post-processors: what happens to the residual after each encode.
//!
//! The residual holds everything not yet sent. An entry can grow far beyond the threshold (a
//! large step, a threshold that rose), and would then be sent as `±t` for many steps in a row,
//! each a stale contribution. Clipping bounds that backlog; it deliberately drops the excess mass,
//! so it is the one place where `decoded + residual == previous residual + update` does not hold.
//!
//! * [`ResidualClippingPostProcessor`] (the default): after the encode of iteration `i`, when
//!   `i % frequency == 0` (with the default 5: iterations 0, 5, 10, …), every residual entry is
//!   clamped to `[-c, c]` with `c = thresholdMultipleClipValue × t`, `t` being the threshold that
//!   encode used. `c` is computed in `f64` and rounded to `f32` once.
//! * [`NoOpResidualPostProcessor`]: leaves the residual alone.
//!
//! JSON: `{"type":"clipping","thresholdMultipleClipValue":5.0,"frequency":5}` (missing or `null`
//! fields take these defaults; `null` as a whole is the default clipping) and `{"type":"noop"}`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ConfigError;
use crate::json::Tagged;

const CONTEXT: &str = "residual post-processor";

/// Runs on the residual after every encode.
pub trait ResidualPostProcessor: Send + fmt::Debug {
    /// The JSON `"type"`: "clipping" or "noop".
    fn name(&self) -> &'static str;
    /// Processes the residual after the encode of `iteration`, which used `threshold`; returns
    /// how many entries it changed.
    fn process(&mut self, iteration: u64, epoch: u64, threshold: f32, residual: &mut [f32]) -> u64;
    /// [`Self::process`] right after an encode that sent exactly the entries of `sent` (blocks of
    /// 64 entries and a mask of the sent ones in each, as the encoder found them): `Some` when
    /// the processor can work on those entries alone and gives the residual `process` would,
    /// `None` when the caller must run `process` on the whole residual.
    fn process_sent(
        &mut self,
        _iteration: u64,
        _epoch: u64,
        _threshold: f32,
        _residual: &mut [f32],
        _sent: &[(u32, u64)],
    ) -> Option<u64> {
        None
    }
}

/// Clamps the residual to `±thresholdMultipleClipValue × t` every `frequency` iterations.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ResidualClippingPostProcessor {
    #[serde(rename = "thresholdMultipleClipValue")]
    pub threshold_multiple: f64,
    pub frequency: u64,
}

impl Default for ResidualClippingPostProcessor {
    fn default() -> Self {
        ResidualClippingPostProcessor {
            threshold_multiple: 5.0,
            frequency: 5,
        }
    }
}

impl ResidualClippingPostProcessor {
    /// The multiple is finite and > 0; the frequency is at least 1.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.threshold_multiple.is_finite() && self.threshold_multiple > 0.0) {
            return Err(ConfigError::new(
                CONTEXT,
                format!(
                    "thresholdMultipleClipValue must be a finite number > 0, got {}",
                    self.threshold_multiple
                ),
            ));
        }
        if self.frequency == 0 {
            return Err(ConfigError::new(
                CONTEXT,
                "frequency must be at least 1, got 0",
            ));
        }
        Ok(())
    }

    /// The clip bound for threshold `t`, saturating at `f32::MAX`.
    pub fn clip_value(&self, threshold: f32) -> f32 {
        (self.threshold_multiple * f64::from(threshold)).min(f64::from(f32::MAX)) as f32
    }
}

impl ResidualPostProcessor for ResidualClippingPostProcessor {
    fn name(&self) -> &'static str {
        "clipping"
    }

    fn process(
        &mut self,
        iteration: u64,
        _epoch: u64,
        threshold: f32,
        residual: &mut [f32],
    ) -> u64 {
        // checked_rem: a frequency of 0 (refused by validate) never clips instead of panicking.
        if iteration.checked_rem(self.frequency) != Some(0) {
            return 0;
        }
        let c = self.clip_value(threshold);
        residual.iter_mut().map(|r| u64::from(clamp_entry(r, c))).sum()
    }

    fn process_sent(
        &mut self,
        iteration: u64,
        _epoch: u64,
        threshold: f32,
        residual: &mut [f32],
        sent: &[(u32, u64)],
    ) -> Option<u64> {
        if iteration.checked_rem(self.frequency) != Some(0) {
            return Some(0);
        }
        let c = self.clip_value(threshold);
        // An entry that was not sent is below t; with c >= t the clamp leaves it (bits and
        // all), so only the sent ones can change.
        if c < threshold {
            return None;
        }
        let mut clipped = 0u64;
        for &(b, mut mask) in sent {
            while mask != 0 {
                let j = b as usize * 64 + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                clipped += u64::from(clamp_entry(&mut residual[j], c));
            }
        }
        Some(clipped)
    }
}

/// Clamps one residual entry to `±c`; whether it changed.
#[inline]
fn clamp_entry(r: &mut f32, c: f32) -> bool {
    let x = *r;
    let y = x.clamp(-c, c);
    *r = y;
    y != x
}

/// Leaves the residual as it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoOpResidualPostProcessor;

impl ResidualPostProcessor for NoOpResidualPostProcessor {
    fn name(&self) -> &'static str {
        "noop"
    }

    fn process(
        &mut self,
        _iteration: u64,
        _epoch: u64,
        _threshold: f32,
        _residual: &mut [f32],
    ) -> u64 {
        0
    }
}

/// A post-processor's configuration, as the Java side writes it (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", try_from = "Value")]
pub enum ResidualPostProcessorConfig {
    Clipping(ResidualClippingPostProcessor),
    #[serde(rename = "noop")]
    NoOp,
}

impl Default for ResidualPostProcessorConfig {
    fn default() -> Self {
        ResidualPostProcessorConfig::Clipping(ResidualClippingPostProcessor::default())
    }
}

impl TryFrom<Value> for ResidualPostProcessorConfig {
    type Error = ConfigError;
    fn try_from(value: Value) -> Result<Self, ConfigError> {
        ResidualPostProcessorConfig::from_json_value(&value)
    }
}

impl ResidualPostProcessorConfig {
    /// Reads and validates a configuration; `null` is the default clipping.
    pub fn from_json_value(value: &Value) -> Result<Self, ConfigError> {
        if value.is_null() {
            return Ok(Self::default());
        }
        let f = Tagged::parse(CONTEXT, value, &["clipping", "noop"])?;
        let config = if f.kind == "noop" {
            f.only(&[])?;
            ResidualPostProcessorConfig::NoOp
        } else {
            f.only(&["thresholdMultipleClipValue", "frequency"])?;
            let d = ResidualClippingPostProcessor::default();
            ResidualPostProcessorConfig::Clipping(ResidualClippingPostProcessor {
                threshold_multiple: f.f64("thresholdMultipleClipValue", d.threshold_multiple)?,
                frequency: f.u64("frequency", d.frequency)?,
            })
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
            ResidualPostProcessorConfig::Clipping(c) => c.validate(),
            ResidualPostProcessorConfig::NoOp => Ok(()),
        }
    }

    pub fn build(&self) -> Result<Box<dyn ResidualPostProcessor>, ConfigError> {
        self.validate()?;
        Ok(match *self {
            ResidualPostProcessorConfig::Clipping(c) => Box::new(c),
            ResidualPostProcessorConfig::NoOp => Box::new(NoOpResidualPostProcessor),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clipping_clamps_on_multiples_of_the_frequency_only() {
        let mut p = ResidualClippingPostProcessor::default();
        let original = vec![3.0f32, -3.0, 2.5, -2.5, 0.1, 100.0, -0.0];
        // t = 0.5, c = 2.5.
        for iteration in [1u64, 2, 3, 4, 6, 9, 11] {
            let mut r = original.clone();
            assert_eq!(p.process(iteration, 0, 0.5, &mut r), 0);
            assert_eq!(r, original);
        }
        for iteration in [0u64, 5, 10, 500] {
            let mut r = original.clone();
            assert_eq!(p.process(iteration, 3, 0.5, &mut r), 3);
            assert_eq!(r, vec![2.5, -2.5, 2.5, -2.5, 0.1, 2.5, -0.0]);
        }
        let mut every = ResidualClippingPostProcessor {
            threshold_multiple: 2.0,
            frequency: 1,
        };
        let mut r = vec![1.0f32, -0.75, 0.25];
        assert_eq!(every.process(7, 0, 0.25, &mut r), 2);
        assert_eq!(r, vec![0.5, -0.5, 0.25]);
        assert_eq!(every.clip_value(f32::MAX), f32::MAX);
    }

    #[test]
    fn noop_does_nothing() {
        let mut r = vec![1e30f32, -1e30];
        assert_eq!(NoOpResidualPostProcessor.process(0, 0, 1e-6, &mut r), 0);
        assert_eq!(r, vec![1e30, -1e30]);
    }

    #[test]
    fn json_shapes_defaults_and_errors() {
        let parse =
            |v: Value| ResidualPostProcessorConfig::from_json_value(&v).map_err(|e| e.to_string());
        let d = ResidualPostProcessorConfig::default();
        assert_eq!(
            parse(json!({"type": "clipping", "thresholdMultipleClipValue": 5.0, "frequency": 5}))
                .unwrap(),
            d
        );
        assert_eq!(parse(json!({"type": "clipping"})).unwrap(), d);
        assert_eq!(parse(Value::Null).unwrap(), d);
        assert_eq!(
            serde_json::to_value(d).unwrap(),
            json!({"type": "clipping", "thresholdMultipleClipValue": 5.0, "frequency": 5})
        );
        assert_eq!(
            parse(json!({"type": "noop"})).unwrap(),
            ResidualPostProcessorConfig::NoOp
        );
        assert_eq!(
            serde_json::to_string(&ResidualPostProcessorConfig::NoOp).unwrap(),
            r#"{"type":"noop"}"#
        );
        let back: ResidualPostProcessorConfig = serde_json::from_str(
            r#"{"type":"clipping","thresholdMultipleClipValue":2.5,"frequency":3.0}"#,
        )
        .unwrap();
        assert_eq!(
            back,
            ResidualPostProcessorConfig::Clipping(ResidualClippingPostProcessor {
                threshold_multiple: 2.5,
                frequency: 3
            })
        );
        for (v, message) in [
            (json!({"type": "clip"}), "residual post-processor: unknown type \"clip\" (expected one of \"clipping\", \"noop\")"),
            (json!({"type": "clipping", "frequency": 0}), "residual post-processor: frequency must be at least 1, got 0"),
            (json!({"type": "clipping", "frequency": 2.5}), "residual post-processor: frequency must be a non-negative integer, got 2.5"),
            (json!({"type": "clipping", "frequency": -1}), "residual post-processor: frequency must be a non-negative integer, got -1"),
            (json!({"type": "clipping", "thresholdMultipleClipValue": 0}), "residual post-processor: thresholdMultipleClipValue must be a finite number > 0, got 0"),
            (json!({"type": "clipping", "thresholdMultipleClipValue": -2}), "residual post-processor: thresholdMultipleClipValue must be a finite number > 0, got -2"),
            (json!({"type": "noop", "frequency": 1}), "residual post-processor: unknown field \"frequency\" for type \"noop\" (it takes no fields)"),
        ] {
            assert_eq!(parse(v).unwrap_err(), message);
        }
        let bad = ResidualPostProcessorConfig::Clipping(ResidualClippingPostProcessor {
            threshold_multiple: f64::INFINITY,
            frequency: 1,
        });
        assert!(bad.build().is_err());
    }
}
