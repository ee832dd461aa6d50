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

#[cfg(test)]
mod carry_tests {
    use ferrodl_comm::ThresholdEncoder;
    use serde_json::json;

    #[test]
    fn a_carried_average_state_starts_the_next_encoder() {
        let alg = json!({"type":"adaptive","initialThreshold":0.1});
        let post = json!({"type":"clipping","thresholdMultipleClipValue":5.0,"frequency":5});
        // Started from a carried 0.1 (a fresh encoder would calibrate its first threshold).
        let start = json!({"type":"adaptive","threshold":0.1});
        let mut enc = ThresholdEncoder::from_json(10, &alg, &post, Some(&start)).unwrap();
        let mut out = Vec::new();
        for i in 0..16 {
            enc.encode_update(&[0.001; 10], i, 0, &mut out).unwrap();
        }
        let state = serde_json::to_value(enc.threshold_state()).unwrap();
        let avg = super::average_threshold_states(&format!("[{state},{state}]")).unwrap();
        let avg: serde_json::Value = serde_json::from_str(&avg).unwrap();
        let mut next = ThresholdEncoder::from_json(10, &alg, &post, Some(&avg)).unwrap();
        let stats = next.encode_update(&[0.001; 10], 0, 1, &mut out).unwrap();
        // Nothing is ever sent: the first FILLING_STEPS encodes wait for the (fresh) residual to
        // fill, each later one lowers the threshold.
        let lowered = 16 - ferrodl_comm::encoder::FILLING_STEPS as i32;
        let expected = 0.1 * ferrodl_comm::DEFAULT_DECAY_RATE.powi(lowered);
        assert!(
            (f64::from(stats.threshold) - expected).abs() < 1e-6,
            "{state} {avg} {}",
            stats.threshold
        );
    }
}
