//! Carrying encoding thresholds from one fit to the next: the workers' states are averaged.

use crate::error::SharingError;
use ferrodl_comm::ThresholdState;

/// Averages a JSON array of per-worker threshold states; returns `"null"` for an empty array.
/// States of mixed algorithm types (the configuration changed) or invalid states are an error.
pub fn average_threshold_states(json: &str) -> Result<String, SharingError> {
    let values: Vec<serde_json::Value> = serde_json::from_str(json)
        .map_err(|e| SharingError::Config(format!("threshold states are not a JSON array: {e}")))?;
    let states = values
        .iter()
        .map(ThresholdState::from_json_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SharingError::Config(format!("threshold state: {e}")))?;
    let averaged = ferrodl_comm::try_average_states(&states)
        .map_err(|e| SharingError::Config(format!("threshold states: {e}")))?;
    serde_json::to_string(&averaged)
        .map_err(|e| SharingError::Message(format!("threshold state: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_thresholds_of_one_type() {
        let out = average_threshold_states(
            r#"[{"type":"adaptive","threshold":1e-4},{"type":"adaptive","threshold":3e-4}]"#,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["type"], "adaptive");
        assert!((v["threshold"].as_f64().unwrap() - 2e-4).abs() < 1e-18);
        assert_eq!(average_threshold_states("[]").unwrap(), "null");
    }

    #[test]
    fn refuses_mixed_types_and_garbage() {
        let mixed = r#"[{"type":"adaptive","threshold":1e-4},{"type":"fixed","threshold":3e-4}]"#;
        assert!(average_threshold_states(mixed).is_err());
        assert!(average_threshold_states("{").is_err());
        assert!(average_threshold_states(r#"[{"type":"adaptive","threshold":-1}]"#).is_err());
    }
}
