//! Reading the small `{"type": ..., field: value}` JSON objects the Java side writes.
//!
//! Hand-written rather than derived so that every error names the field it is about (serde's
//! messages for a wrong value type do not), and so that `null` reads as "use the default", which
//! is what Jackson writes for an unset boxed field.

use serde_json::{Map, Value};

use crate::error::ConfigError;

/// A JSON object with a known `"type"`.
pub(crate) struct Tagged<'a> {
    context: &'static str,
    pub(crate) kind: &'static str,
    map: &'a Map<String, Value>,
}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Short rendering of a JSON value for error messages.
fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

impl<'a> Tagged<'a> {
    /// Reads the object and its `"type"`, which must be one of `types`.
    pub(crate) fn parse(
        context: &'static str,
        value: &'a Value,
        types: &[&'static str],
    ) -> Result<Self, ConfigError> {
        let map = value.as_object().ok_or_else(|| {
            ConfigError::new(
                context,
                format!(
                    "expected a JSON object with a \"type\", got {}",
                    show(value)
                ),
            )
        })?;
        let ty = match map.get("type") {
            None | Some(Value::Null) => {
                return Err(ConfigError::new(
                    context,
                    format!("missing \"type\" (one of {})", quoted_list(types)),
                ))
            }
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(ConfigError::new(
                    context,
                    format!("\"type\" must be a string, got {}", show(other)),
                ))
            }
        };
        let kind = types.iter().copied().find(|t| *t == ty).ok_or_else(|| {
            ConfigError::new(
                context,
                format!(
                    "unknown type \"{ty}\" (expected one of {})",
                    quoted_list(types)
                ),
            )
        })?;
        Ok(Tagged { context, kind, map })
    }

    /// Refuses fields other than `"type"` and `allowed` (catches misspelt options).
    pub(crate) fn only(&self, allowed: &[&str]) -> Result<(), ConfigError> {
        for key in self.map.keys() {
            if key != "type" && !allowed.contains(&key.as_str()) {
                let expected = if allowed.is_empty() {
                    "it takes no fields".to_string()
                } else {
                    format!("expected {}", quoted_list(allowed))
                };
                return Err(self.error(format!(
                    "unknown field \"{key}\" for type \"{}\" ({expected})",
                    self.kind
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn error(&self, message: String) -> ConfigError {
        ConfigError::new(self.context, message)
    }

    /// A number field; missing or `null` gives `default`.
    pub(crate) fn f64(&self, key: &str, default: f64) -> Result<f64, ConfigError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Number(n)) => n
                .as_f64()
                .ok_or_else(|| self.error(format!("{key} is not representable: {n}"))),
            Some(other) => Err(self.error(format!("{key} must be a number, got {}", show(other)))),
        }
    }

    /// A number field that must be present.
    pub(crate) fn required_f64(&self, key: &str) -> Result<f64, ConfigError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Err(self.error(format!("{key} is missing"))),
            Some(_) => self.f64(key, f64::NAN),
        }
    }

    /// A non-negative integer field; missing or `null` gives `default`. `5.0` is accepted as 5.
    pub(crate) fn u64(&self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Number(n)) => {
                if let Some(u) = n.as_u64() {
                    return Ok(u);
                }
                match n.as_f64() {
                    Some(f) if f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64 => Ok(f as u64),
                    _ => Err(self.error(format!("{key} must be a non-negative integer, got {n}"))),
                }
            }
            Some(other) => Err(self.error(format!(
                "{key} must be a non-negative integer, got {}",
                show(other)
            ))),
        }
    }
}
