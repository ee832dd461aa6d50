//! Unit tests: every updater's first steps against values computed by hand, the state layout,
//! every schedule's values, the JSON form and the validation messages.

mod json;
mod optimizer;
mod schedules;
mod updaters;

/// One of every updater, each with its defaults.
pub(crate) fn every_updater() -> [crate::AnyUpdater; 10] {
    use crate::*;
    [
        AnyUpdater::Sgd(Sgd::default()),
        AnyUpdater::Adam(Adam::default()),
        AnyUpdater::AdaMax(AdaMax::default()),
        AnyUpdater::Nadam(Nadam::default()),
        AnyUpdater::AMSGrad(AMSGrad::default()),
        AnyUpdater::RmsProp(RmsProp::default()),
        AnyUpdater::Nesterovs(Nesterovs::default()),
        AnyUpdater::AdaGrad(AdaGrad::default()),
        AnyUpdater::AdaDelta(AdaDelta::default()),
        AnyUpdater::NoOp(NoOp {}),
    ]
}

/// Relative closeness for f64 results computed in the same order of operations up to rounding.
pub(crate) fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
}

pub(crate) fn close_all(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        close(*x, *y);
    }
}
