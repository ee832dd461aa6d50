//! ferrodl-testutil: helpers shared by the engine crates' tests (a dev-dependency only).
//!
//! * [`check_gradient`]: central finite differences against an analytic gradient, in `f64`.
//! * Small random-data generators built on the engine's own seeded [`Rng`], so test data is the
//!   same on every machine.

pub use ferrodl_tensor::Rng;
use std::fmt;

/// Settings of a finite-difference gradient check.
#[derive(Clone, Copy, Debug)]
pub struct GradCheckConfig {
    /// Step `h` of the central difference `(f(x+h) - f(x-h)) / 2h`.
    pub eps: f64,
    /// Largest accepted relative error (see [`relative_error`]).
    pub max_rel_error: f64,
    /// Guard for tiny gradients: an entry whose absolute difference is at most this passes even
    /// when its relative error is large. In `f64` with `h = 1e-6` and scores of order 1, rounding
    /// alone makes the numeric estimate uncertain by about `1e-16 / 1e-6 = 1e-10`, so for
    /// gradients near zero the relative error is meaningless below that scale.
    pub min_abs_error: f64,
}

impl Default for GradCheckConfig {
    fn default() -> Self {
        GradCheckConfig {
            eps: 1e-6,
            max_rel_error: 1e-6,
            min_abs_error: 1e-8,
        }
    }
}

/// Relative error `|a - n| / max(|a|, |n|)`, defined as 0 when both are exactly 0.
pub fn relative_error(analytic: f64, numeric: f64) -> f64 {
    let denom = analytic.abs().max(numeric.abs());
    if denom == 0.0 {
        0.0
    } else {
        (analytic - numeric).abs() / denom
    }
}

/// One parameter whose analytic and numeric gradients disagree.
#[derive(Clone, Debug)]
pub struct GradMismatch {
    pub index: usize,
    pub analytic: f64,
    pub numeric: f64,
    pub rel_error: f64,
}

/// Outcome of a gradient check.
#[derive(Clone, Debug, Default)]
pub struct GradCheckReport {
    /// Number of parameters compared.
    pub checked: usize,
    /// Largest relative error among entries not excused by the absolute guard.
    pub max_rel_error: f64,
    /// Entries that failed both criteria.
    pub failures: Vec<GradMismatch>,
}

impl GradCheckReport {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

impl fmt::Display for GradCheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} parameters checked, max relative error {:.3e}, {} failures",
            self.checked,
            self.max_rel_error,
            self.failures.len()
        )?;
        for m in self.failures.iter().take(10) {
            write!(
                f,
                "\n  param {}: analytic {:.12e} numeric {:.12e} rel {:.3e}",
                m.index, m.analytic, m.numeric, m.rel_error
            )?;
        }
        Ok(())
    }
}

/// Compares `analytic` (the gradient of `score` at `params`) with central finite differences.
///
/// `score` is evaluated at `params` with one entry shifted by `±eps`; `params` is restored
/// afterwards. An entry passes when its relative error is at most `max_rel_error` or its absolute
/// difference is at most `min_abs_error`.
pub fn check_gradient(
    params: &mut [f64],
    analytic: &[f64],
    mut score: impl FnMut(&[f64]) -> f64,
    cfg: GradCheckConfig,
) -> GradCheckReport {
    assert_eq!(
        params.len(),
        analytic.len(),
        "gradient length differs from parameter length"
    );
    let mut report = GradCheckReport {
        checked: params.len(),
        ..Default::default()
    };
    for i in 0..params.len() {
        let orig = params[i];
        params[i] = orig + cfg.eps;
        let plus = score(params);
        params[i] = orig - cfg.eps;
        let minus = score(params);
        params[i] = orig;
        let numeric = (plus - minus) / (2.0 * cfg.eps);
        let a = analytic[i];
        let abs = (a - numeric).abs();
        let rel = relative_error(a, numeric);
        if abs <= cfg.min_abs_error {
            continue;
        }
        report.max_rel_error = report.max_rel_error.max(rel);
        if rel > cfg.max_rel_error || !rel.is_finite() {
            report.failures.push(GradMismatch {
                index: i,
                analytic: a,
                numeric,
                rel_error: rel,
            });
        }
    }
    report
}

/// [`check_gradient`] with the default configuration, then its negative control: a 1e-4 relative
/// error planted in the largest analytic entry must be the one failure. Panics naming `what`;
/// `params` is left as given.
pub fn assert_gradient_with_negative_control(
    what: &str,
    params: &mut [f64],
    analytic: &[f64],
    mut score: impl FnMut(&[f64]) -> f64,
) {
    let cfg = GradCheckConfig::default();
    let report = check_gradient(params, analytic, &mut score, cfg);
    assert!(report.passed(), "{what}: {report}");
    let k = (0..analytic.len())
        .max_by(|&a, &b| analytic[a].abs().total_cmp(&analytic[b].abs()))
        .unwrap();
    let mut wrong = analytic.to_vec();
    wrong[k] *= 1.0 + 1e-4;
    let bad = check_gradient(params, &wrong, &mut score, cfg);
    assert_eq!(bad.failures.len(), 1, "{what}: negative control: {bad}");
}

/// `rows × cols` matrix of uniform values in `[lo, hi)`, row-major.
pub fn uniform_matrix(rng: &mut Rng, rows: usize, cols: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..rows * cols).map(|_| rng.uniform(lo, hi)).collect()
}

/// `rows × cols` matrix of standard normal values, row-major.
pub fn normal_matrix(rng: &mut Rng, rows: usize, cols: usize) -> Vec<f64> {
    (0..rows * cols).map(|_| rng.next_gaussian()).collect()
}

/// One-hot labels: `rows × classes`, one random class per row.
pub fn one_hot(rng: &mut Rng, rows: usize, classes: usize) -> Vec<f64> {
    let mut out = vec![0.0; rows * classes];
    for r in 0..rows {
        out[r * classes + rng.below(classes as u64) as usize] = 1.0;
    }
    out
}

/// One-hot sequence labels `[rows, classes, steps]` (NCW), one random class per example and step.
pub fn one_hot_sequences(rng: &mut Rng, rows: usize, classes: usize, steps: usize) -> Vec<f64> {
    let mut y = vec![0.0; rows * classes * steps];
    for i in 0..rows {
        for s in 0..steps {
            let k = (uniform_matrix(rng, 1, 1, 0.0, classes as f64)[0] as usize).min(classes - 1);
            y[i * classes * steps + k * steps + s] = 1.0;
        }
    }
    y
}

/// `[rows, steps]` masks: example `i` keeps its first `lengths[i % lengths.len()]` steps (1), the
/// rest is padding (0).
pub fn tail_mask(rows: usize, steps: usize, lengths: &[usize]) -> Vec<f64> {
    let mut m = vec![0.0; rows * steps];
    for i in 0..rows {
        for s in 0..lengths[i % lengths.len()].min(steps) {
            m[i * steps + s] = 1.0;
        }
    }
    m
}

/// 0/1 mask of `rows × cols` where each entry is 1 with probability `p_one`; the first entry of
/// every row is forced to 1 so no example is entirely masked out.
pub fn binary_mask(rng: &mut Rng, rows: usize, cols: usize, p_one: f64) -> Vec<f64> {
    let mut out: Vec<f64> = (0..rows * cols)
        .map(|_| if rng.next_f64() < p_one { 1.0 } else { 0.0 })
        .collect();
    for r in 0..rows {
        out[r * cols] = 1.0;
    }
    out
}

/// Converts a slice to `f32` (for feeding the f32 API from f64 test data).
pub fn to_f32(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_gradient_accepts_correct_and_rejects_wrong() {
        // f(x) = sum x_i^3, gradient 3 x_i^2.
        let mut x = vec![0.5, -1.5, 2.0];
        let good: Vec<f64> = x.iter().map(|v| 3.0 * v * v).collect();
        let f = |p: &[f64]| p.iter().map(|v| v * v * v).sum::<f64>();
        let rep = check_gradient(&mut x, &good, f, GradCheckConfig::default());
        assert!(rep.passed(), "{rep}");
        assert_eq!(x, vec![0.5, -1.5, 2.0]);
        let mut bad = good.clone();
        bad[1] *= 1.001;
        let rep = check_gradient(&mut x, &bad, f, GradCheckConfig::default());
        assert_eq!(rep.failures.len(), 1);
        assert_eq!(rep.failures[0].index, 1);
    }

    #[test]
    fn relative_error_definition() {
        assert_eq!(relative_error(0.0, 0.0), 0.0);
        assert!((relative_error(1.0, 1.1) - 0.1 / 1.1).abs() < 1e-15);
        assert_eq!(relative_error(-1.0, 1.0), 2.0);
    }

    #[test]
    fn generators_shape() {
        let mut r = Rng::new(3);
        let y = one_hot(&mut r, 10, 4);
        assert!(y.chunks(4).all(|row| row.iter().sum::<f64>() == 1.0));
        let m = binary_mask(&mut r, 5, 3, 0.5);
        assert!(m.chunks(3).all(|row| row[0] == 1.0));
        assert_eq!(uniform_matrix(&mut r, 2, 3, -1.0, 1.0).len(), 6);
        assert_eq!(normal_matrix(&mut r, 2, 3).len(), 6);
    }
}
