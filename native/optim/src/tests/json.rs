//! The JSON form (what the Java classes write) and the validation messages.

use crate::*;

fn parse(json: &str) -> UpdaterConfig {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn parse_err(json: &str) -> String {
    match serde_json::from_str::<UpdaterConfig>(json) {
        Ok(c) => panic!("{json} parsed as {c:?}"),
        Err(e) => e.to_string(),
    }
}

fn step() -> Schedule {
    Schedule::Step(StepSchedule {
        schedule_type: ScheduleType::Iteration,
        initial_value: 0.1,
        decay_rate: 0.5,
        step: 100.0,
    })
}

const STEP: &str = r#"{"type":"StepSchedule","scheduleType":"ITERATION","initialValue":0.1,"decayRate":0.5,"step":100.0}"#;

fn map() -> Schedule {
    Schedule::Map(MapSchedule {
        schedule_type: ScheduleType::Epoch,
        values: [(0, 0.9), (10, 0.5)].into_iter().collect(),
    })
}

const MAP: &str = r#"{"type":"MapSchedule","scheduleType":"EPOCH","values":{"0":0.9,"10":0.5}}"#;

/// Every variant with every field set, written by hand as the Java side writes it, and the value
/// it must parse to.
fn every_variant() -> Vec<(String, UpdaterConfig)> {
    vec![
        (
            format!(r#"{{"type":"Sgd","learningRate":0.2,"learningRateSchedule":{STEP}}}"#),
            UpdaterConfig::Sgd(Sgd {
                learning_rate: 0.2,
                learning_rate_schedule: Some(step()),
            }),
        ),
        (
            format!(
                r#"{{"type":"Adam","learningRate":0.002,"learningRateSchedule":{STEP},"beta1":0.8,"beta2":0.99,"epsilon":1e-6}}"#
            ),
            UpdaterConfig::Adam(Adam {
                learning_rate: 0.002,
                learning_rate_schedule: Some(step()),
                beta1: 0.8,
                beta2: 0.99,
                epsilon: 1e-6,
            }),
        ),
        (
            format!(
                r#"{{"type":"AdaMax","learningRate":0.003,"learningRateSchedule":{STEP},"beta1":0.7,"beta2":0.98,"epsilon":1e-7}}"#
            ),
            UpdaterConfig::AdaMax(AdaMax {
                learning_rate: 0.003,
                learning_rate_schedule: Some(step()),
                beta1: 0.7,
                beta2: 0.98,
                epsilon: 1e-7,
            }),
        ),
        (
            format!(
                r#"{{"type":"Nadam","learningRate":0.004,"learningRateSchedule":{STEP},"beta1":0.6,"beta2":0.97,"epsilon":1e-5}}"#
            ),
            UpdaterConfig::Nadam(Nadam {
                learning_rate: 0.004,
                learning_rate_schedule: Some(step()),
                beta1: 0.6,
                beta2: 0.97,
                epsilon: 1e-5,
            }),
        ),
        (
            format!(
                r#"{{"type":"AMSGrad","learningRate":0.005,"learningRateSchedule":{STEP},"beta1":0.5,"beta2":0.96,"epsilon":1e-4}}"#
            ),
            UpdaterConfig::AMSGrad(AMSGrad {
                learning_rate: 0.005,
                learning_rate_schedule: Some(step()),
                beta1: 0.5,
                beta2: 0.96,
                epsilon: 1e-4,
            }),
        ),
        (
            format!(
                r#"{{"type":"RmsProp","learningRate":0.05,"learningRateSchedule":{STEP},"rmsDecay":0.9,"epsilon":1e-7}}"#
            ),
            UpdaterConfig::RmsProp(RmsProp {
                learning_rate: 0.05,
                learning_rate_schedule: Some(step()),
                rms_decay: 0.9,
                epsilon: 1e-7,
            }),
        ),
        (
            format!(
                r#"{{"type":"Nesterovs","learningRate":0.06,"learningRateSchedule":{STEP},"momentum":0.8,"momentumSchedule":{MAP}}}"#
            ),
            UpdaterConfig::Nesterovs(Nesterovs {
                learning_rate: 0.06,
                learning_rate_schedule: Some(step()),
                momentum: 0.8,
                momentum_schedule: Some(map()),
            }),
        ),
        (
            format!(
                r#"{{"type":"AdaGrad","learningRate":0.07,"learningRateSchedule":{MAP},"epsilon":1e-5}}"#
            ),
            UpdaterConfig::AdaGrad(AdaGrad {
                learning_rate: 0.07,
                learning_rate_schedule: Some(map()),
                epsilon: 1e-5,
            }),
        ),
        (
            r#"{"type":"AdaDelta","rho":0.9,"epsilon":1e-5}"#.to_string(),
            UpdaterConfig::AdaDelta(AdaDelta {
                rho: 0.9,
                epsilon: 1e-5,
            }),
        ),
        (
            r#"{"type":"NoOp"}"#.to_string(),
            UpdaterConfig::NoOp(NoOp {}),
        ),
    ]
}

#[test]
fn every_variant_parses_and_round_trips() {
    let all = every_variant();
    assert_eq!(all.len(), 10);
    for (json, expected) in all {
        let c = parse(&json);
        assert_eq!(c, expected, "{json}");
        c.validate("x").unwrap();
        // Rust writes the same fields back and reads them unchanged.
        let back = serde_json::to_string(&c).unwrap();
        assert_eq!(parse(&back), c, "{back}");
        let a: serde_json::Value = serde_json::from_str(&json).unwrap();
        let b: serde_json::Value = serde_json::from_str(&back).unwrap();
        assert_eq!(a, b, "same JSON object");
        assert_eq!(c.to_updater().to_config(), c);
        assert_eq!(
            a["type"].as_str().unwrap(),
            c.type_name(),
            "type tag is the Java class name"
        );
    }
}

#[test]
fn every_schedule_round_trips() {
    let all = [
        (STEP.to_string(), step()),
        (MAP.to_string(), map()),
        (
            r#"{"type":"ExponentialSchedule","scheduleType":"EPOCH","initialValue":0.2,"gamma":0.9}"#
                .to_string(),
            Schedule::Exponential(ExponentialSchedule {
                schedule_type: ScheduleType::Epoch,
                initial_value: 0.2,
                gamma: 0.9,
            }),
        ),
        (
            r#"{"type":"InverseSchedule","scheduleType":"ITERATION","initialValue":0.1,"gamma":0.5,"power":2.0}"#
                .to_string(),
            Schedule::Inverse(InverseSchedule {
                schedule_type: ScheduleType::Iteration,
                initial_value: 0.1,
                gamma: 0.5,
                power: 2.0,
            }),
        ),
        (
            r#"{"type":"PolySchedule","scheduleType":"ITERATION","initialValue":0.1,"power":2.0,"maxIter":100}"#
                .to_string(),
            Schedule::Poly(PolySchedule {
                schedule_type: ScheduleType::Iteration,
                initial_value: 0.1,
                power: 2.0,
                max_iter: 100,
            }),
        ),
        (
            r#"{"type":"SigmoidSchedule","scheduleType":"EPOCH","initialValue":0.1,"gamma":0.5,"stepSize":10}"#
                .to_string(),
            Schedule::Sigmoid(SigmoidSchedule {
                schedule_type: ScheduleType::Epoch,
                initial_value: 0.1,
                gamma: 0.5,
                step_size: 10,
            }),
        ),
    ];
    // An integral double may also come without a fraction.
    let s: Schedule = serde_json::from_str(&STEP.replace("100.0", "100")).unwrap();
    assert_eq!(s, step());
    for (json, expected) in all {
        let s: Schedule = serde_json::from_str(&json).unwrap();
        assert_eq!(s, expected);
        let back = serde_json::to_string(&s).unwrap();
        let again: Schedule = serde_json::from_str(&back).unwrap();
        assert_eq!(again, s);
        let a: serde_json::Value = serde_json::from_str(&json).unwrap();
        let b: serde_json::Value = serde_json::from_str(&back).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn existing_json_keeps_parsing() {
    assert_eq!(
        parse(r#"{"type":"Sgd","learningRate":0.1}"#),
        UpdaterConfig::Sgd(Sgd {
            learning_rate: 0.1,
            learning_rate_schedule: None
        })
    );
    assert_eq!(
        parse(r#"{"type":"Adam","learningRate":0.001,"beta1":0.9,"beta2":0.999,"epsilon":1e-8}"#),
        UpdaterConfig::Adam(Adam::default())
    );
    assert_eq!(
        parse(r#"{"type":"Nesterovs","learningRate":0.05,"momentum":0.95}"#),
        UpdaterConfig::Nesterovs(Nesterovs {
            learning_rate: 0.05,
            momentum: 0.95,
            ..Nesterovs::default()
        })
    );
    // Old JSON serializes back to the same object (no schedule fields appear).
    let old = r#"{"type":"Nesterovs","learningRate":0.05,"momentum":0.95}"#;
    let a: serde_json::Value = serde_json::from_str(old).unwrap();
    let b: serde_json::Value = serde_json::to_value(parse(old)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn missing_fields_take_the_reference_defaults_and_null_schedules_are_none() {
    assert_eq!(parse(r#"{"type":"Sgd"}"#), UpdaterConfig::default());
    assert_eq!(
        parse(r#"{"type":"Adam","learningRateSchedule":null}"#),
        UpdaterConfig::Adam(Adam::default())
    );
    assert_eq!(
        parse(r#"{"type":"AdaMax"}"#),
        UpdaterConfig::AdaMax(AdaMax::default())
    );
    assert_eq!(
        parse(r#"{"type":"Nadam"}"#),
        UpdaterConfig::Nadam(Nadam::default())
    );
    assert_eq!(
        parse(r#"{"type":"AMSGrad"}"#),
        UpdaterConfig::AMSGrad(AMSGrad::default())
    );
    assert_eq!(
        parse(r#"{"type":"RmsProp"}"#),
        UpdaterConfig::RmsProp(RmsProp::default())
    );
    assert_eq!(
        parse(r#"{"type":"Nesterovs","learningRateSchedule":null,"momentumSchedule":null}"#),
        UpdaterConfig::Nesterovs(Nesterovs::default())
    );
    assert_eq!(
        parse(r#"{"type":"AdaGrad"}"#),
        UpdaterConfig::AdaGrad(AdaGrad::default())
    );
    assert_eq!(
        parse(r#"{"type":"AdaDelta"}"#),
        UpdaterConfig::AdaDelta(AdaDelta::default())
    );
}

#[test]
fn unknown_or_malformed_json_is_refused() {
    let e = parse_err(r#"{"type":"Sgd","learningRate":0.1,"momentum":0.9}"#);
    assert!(e.contains("momentum"), "{e}");
    let e = parse_err(r#"{"type":"NoOp","learningRate":0.1}"#);
    assert!(e.contains("learningRate"), "{e}");
    let e = parse_err(r#"{"type":"AdaDelta","learningRate":0.1}"#);
    assert!(e.contains("learningRate"), "{e}");
    let e = parse_err(r#"{"type":"Adagrad"}"#);
    assert!(e.contains("Adagrad"), "{e}");
    let e = parse_err(r#"{"learningRate":0.1}"#);
    assert!(e.contains("type"), "{e}");
    // Schedules: unknown field, missing field, unknown schedule type, bad schedule type.
    let e = parse_err(
        r#"{"type":"Sgd","learningRateSchedule":{"type":"StepSchedule","scheduleType":"ITERATION","initialValue":0.1,"decayRate":0.5,"step":1,"gamma":2}}"#,
    );
    assert!(e.contains("gamma"), "{e}");
    let e = parse_err(
        r#"{"type":"Sgd","learningRateSchedule":{"type":"StepSchedule","scheduleType":"ITERATION","initialValue":0.1,"decayRate":0.5}}"#,
    );
    assert!(e.contains("step"), "{e}");
    let e = parse_err(
        r#"{"type":"Sgd","learningRateSchedule":{"type":"CycleSchedule","scheduleType":"ITERATION"}}"#,
    );
    assert!(e.contains("CycleSchedule"), "{e}");
    let e = parse_err(
        r#"{"type":"Sgd","learningRateSchedule":{"type":"ExponentialSchedule","scheduleType":"BATCH","initialValue":0.1,"gamma":0.5}}"#,
    );
    assert!(e.contains("BATCH"), "{e}");
    let e = parse_err(
        r#"{"type":"Sgd","learningRateSchedule":{"type":"MapSchedule","scheduleType":"EPOCH","values":{"0":0.1,"x":0.2}}}"#,
    );
    assert!(e.contains("\"x\" is not an integer position"), "{e}");
}

fn invalid(c: UpdaterConfig) -> String {
    c.validate("layer 1 (DenseLayer) updater")
        .expect_err("must be invalid")
}

#[test]
fn validation_messages_name_place_field_value_and_rule() {
    assert_eq!(
        invalid(UpdaterConfig::Adam(Adam {
            beta1: 1.5,
            ..Adam::default()
        })),
        "layer 1 (DenseLayer) updater: beta1=1.5 is invalid (must be in [0, 1))"
    );
    assert_eq!(
        invalid(UpdaterConfig::Nadam(Nadam {
            beta2: 1.0,
            ..Nadam::default()
        })),
        "layer 1 (DenseLayer) updater: beta2=1 is invalid (must be in [0, 1))"
    );
    assert_eq!(
        invalid(UpdaterConfig::Sgd(Sgd {
            learning_rate: -0.1,
            learning_rate_schedule: None
        })),
        "layer 1 (DenseLayer) updater: learningRate=-0.1 is invalid (must be a finite number >= 0)"
    );
    assert_eq!(
        invalid(UpdaterConfig::AdaMax(AdaMax {
            learning_rate: f64::INFINITY,
            ..AdaMax::default()
        })),
        "layer 1 (DenseLayer) updater: learningRate=inf is invalid (must be a finite number >= 0)"
    );
    assert_eq!(
        invalid(UpdaterConfig::AMSGrad(AMSGrad {
            epsilon: 0.0,
            ..AMSGrad::default()
        })),
        "layer 1 (DenseLayer) updater: epsilon=0 is invalid (must be a finite number > 0)"
    );
    assert_eq!(
        invalid(UpdaterConfig::RmsProp(RmsProp {
            rms_decay: -0.5,
            ..RmsProp::default()
        })),
        "layer 1 (DenseLayer) updater: rmsDecay=-0.5 is invalid (must be in [0, 1))"
    );
    assert_eq!(
        invalid(UpdaterConfig::Nesterovs(Nesterovs {
            momentum: 1.0,
            ..Nesterovs::default()
        })),
        "layer 1 (DenseLayer) updater: momentum=1 is invalid (must be in [0, 1))"
    );
    assert_eq!(
        invalid(UpdaterConfig::AdaGrad(AdaGrad {
            epsilon: -1e-6,
            ..AdaGrad::default()
        })),
        "layer 1 (DenseLayer) updater: epsilon=-0.000001 is invalid (must be a finite number > 0)"
    );
    assert_eq!(
        invalid(UpdaterConfig::AdaDelta(AdaDelta {
            rho: 1.2,
            ..AdaDelta::default()
        })),
        "layer 1 (DenseLayer) updater: rho=1.2 is invalid (must be in [0, 1))"
    );
}

#[test]
fn schedule_validation_messages() {
    let with = |s: Schedule| {
        invalid(UpdaterConfig::Sgd(Sgd {
            learning_rate: 0.1,
            learning_rate_schedule: Some(s),
        }))
    };
    let p = "layer 1 (DenseLayer) updater: ";
    assert_eq!(
        with(Schedule::Step(StepSchedule {
            schedule_type: ScheduleType::Iteration,
            initial_value: 0.1,
            decay_rate: 0.5,
            step: 0.0,
        })),
        format!("{p}learningRateSchedule.step=0 is invalid (must be a finite number > 0)")
    );
    assert_eq!(
        with(Schedule::Exponential(ExponentialSchedule {
            schedule_type: ScheduleType::Iteration,
            initial_value: -1.0,
            gamma: 0.5,
        })),
        format!(
            "{p}learningRateSchedule.initialValue=-1 is invalid (must be a finite number >= 0)"
        )
    );
    assert_eq!(
        with(Schedule::Inverse(InverseSchedule {
            schedule_type: ScheduleType::Iteration,
            initial_value: 0.1,
            gamma: -0.5,
            power: 1.0,
        })),
        format!("{p}learningRateSchedule.gamma=-0.5 is invalid (must be a finite number >= 0)")
    );
    assert_eq!(
        with(Schedule::Poly(PolySchedule {
            schedule_type: ScheduleType::Iteration,
            initial_value: 0.1,
            power: 1.0,
            max_iter: 0,
        })),
        format!("{p}learningRateSchedule.maxIter=0 is invalid (must be an integer > 0)")
    );
    assert_eq!(
        with(Schedule::Sigmoid(SigmoidSchedule {
            schedule_type: ScheduleType::Iteration,
            initial_value: 0.1,
            gamma: f64::NAN,
            step_size: 3,
        })),
        format!("{p}learningRateSchedule.gamma=NaN is invalid (must be a finite number)")
    );
    assert_eq!(
        with(Schedule::Map(MapSchedule {
            schedule_type: ScheduleType::Epoch,
            values: [(5, 0.1)].into_iter().collect(),
        })),
        format!(
            "{p}learningRateSchedule.values=5 is invalid (must contain the initial value at position 0 (the value shown is the smallest key))"
        )
    );
    assert_eq!(
        with(Schedule::Map(MapSchedule {
            schedule_type: ScheduleType::Epoch,
            values: [(0, 0.1), (3, -0.2)].into_iter().collect(),
        })),
        format!("{p}learningRateSchedule.values[3]=-0.2 is invalid (must be a finite number >= 0)")
    );
    // A momentum schedule must stay below 1.
    assert_eq!(
        invalid(UpdaterConfig::Nesterovs(Nesterovs {
            momentum_schedule: Some(Schedule::Map(MapSchedule {
                schedule_type: ScheduleType::Epoch,
                values: [(0, 0.5), (2, 1.5)].into_iter().collect(),
            })),
            ..Nesterovs::default()
        })),
        format!("{p}momentumSchedule.values[2]=1.5 is invalid (must be in [0, 1))")
    );
    assert_eq!(
        invalid(UpdaterConfig::Nesterovs(Nesterovs {
            momentum_schedule: Some(Schedule::Exponential(ExponentialSchedule {
                schedule_type: ScheduleType::Epoch,
                initial_value: 1.0,
                gamma: 0.5,
            })),
            ..Nesterovs::default()
        })),
        format!("{p}momentumSchedule.initialValue=1 is invalid (must be in [0, 1))")
    );
}
