//! Every schedule's value at several positions, computed by hand.

use super::close;
use crate::*;

const IT: ScheduleType = ScheduleType::Iteration;
const EP: ScheduleType = ScheduleType::Epoch;

#[test]
fn step_schedule() {
    // 0.1 * 0.5^floor(i/100), by iteration; the epoch is ignored.
    let s = Schedule::Step(StepSchedule {
        schedule_type: IT,
        initial_value: 0.1,
        decay_rate: 0.5,
        step: 100.0,
    });
    close(s.value_at(0, 7), 0.1);
    close(s.value_at(99, 7), 0.1);
    close(s.value_at(100, 0), 0.05);
    close(s.value_at(250, 0), 0.025);
    // A fractional step, by epoch: 1.0 * 0.1^floor(e/2.5).
    let s = Schedule::Step(StepSchedule {
        schedule_type: EP,
        initial_value: 1.0,
        decay_rate: 0.1,
        step: 2.5,
    });
    close(s.value_at(1000, 0), 1.0);
    close(s.value_at(0, 2), 1.0); // floor(0.8) = 0
    close(s.value_at(0, 3), 0.1); // floor(1.2) = 1
    close(s.value_at(0, 5), 0.01); // floor(2.0) = 2
}

#[test]
fn exponential_schedule() {
    // 0.2 * 0.9^i
    let s = Schedule::Exponential(ExponentialSchedule {
        schedule_type: IT,
        initial_value: 0.2,
        gamma: 0.9,
    });
    close(s.value_at(0, 0), 0.2);
    close(s.value_at(1, 0), 0.18);
    close(s.value_at(3, 9), 0.1458); // 0.2 * 0.729
}

#[test]
fn inverse_schedule() {
    // 0.1 / (1 + 0.5*e)^2, by epoch
    let s = Schedule::Inverse(InverseSchedule {
        schedule_type: EP,
        initial_value: 0.1,
        gamma: 0.5,
        power: 2.0,
    });
    close(s.value_at(50, 0), 0.1);
    close(s.value_at(50, 1), 0.1 / 2.25); // 1.5^2
    close(s.value_at(50, 4), 0.1 / 9.0); // 3^2
}

#[test]
fn poly_schedule() {
    // 0.1 * (1 + i/100)^-2 below maxIter=100, then 0.
    let s = Schedule::Poly(PolySchedule {
        schedule_type: IT,
        initial_value: 0.1,
        power: 2.0,
        max_iter: 100,
    });
    close(s.value_at(0, 0), 0.1);
    close(s.value_at(50, 0), 0.1 / 2.25); // 1.5^2
    close(s.value_at(99, 0), 0.1 / 3.9601); // 1.99^2
    assert_eq!(s.value_at(100, 0), 0.0);
    assert_eq!(s.value_at(1000, 0), 0.0);
}

#[test]
fn sigmoid_schedule() {
    // 0.1 / (1 + exp(-0.5*(i - 10)))
    let s = Schedule::Sigmoid(SigmoidSchedule {
        schedule_type: IT,
        initial_value: 0.1,
        gamma: 0.5,
        step_size: 10,
    });
    close(s.value_at(10, 0), 0.05);
    close(s.value_at(0, 0), 0.1 / (1.0 + 5.0f64.exp()));
    close(s.value_at(20, 0), 0.1 / (1.0 + (-5.0f64).exp()));
}

#[test]
fn map_schedule() {
    // {0: 0.1, 10: 0.01, 20: 0.001} by epoch; a value holds until the next key.
    let s = Schedule::Map(MapSchedule {
        schedule_type: EP,
        values: [(0, 0.1), (10, 0.01), (20, 0.001)].into_iter().collect(),
    });
    for (e, v) in [
        (0, 0.1),
        (9, 0.1),
        (10, 0.01),
        (15, 0.01),
        (20, 0.001),
        (1000, 0.001),
    ] {
        close(s.value_at(12345, e), v);
    }
    assert_eq!(s.schedule_type(), EP);
}

#[test]
fn map_schedule_without_key_zero_does_not_panic() {
    // Refused by validation; evaluated anyway, positions before the first key take its value.
    let s = Schedule::Map(MapSchedule {
        schedule_type: IT,
        values: [(5, 0.2)].into_iter().collect(),
    });
    close(s.value_at(0, 0), 0.2);
    let empty = Schedule::Map(MapSchedule {
        schedule_type: IT,
        values: Default::default(),
    });
    assert!(empty.value_at(0, 0).is_nan());
}
