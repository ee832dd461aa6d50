//! Unit tests: every updater's first steps against values computed by hand, the state layout,
//! every schedule's values, the JSON form and the validation messages.

mod json;
mod optimizer;
mod schedules;
mod updaters;

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
