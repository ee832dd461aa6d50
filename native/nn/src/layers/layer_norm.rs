//! Layer normalization of rows, as the reference's `LayerNorm` op used by `SimpleRnn` with
//! `hasLayerNorm`: each row of `cols` values is standardized, `(u − mean) / std` with the
//! population standard deviation and no epsilon; a row of equal values (std 0) gives 0, the
//! reference's NaN replaced by 0. The gain is applied by the caller.

use ferrodl_tensor::Scalar;

/// `xhat` = each row of `u` standardized; `sigma` = each row's standard deviation.
pub fn standardize_rows<T: Scalar>(u: &[T], cols: usize, xhat: &mut [T], sigma: &mut [T]) {
    let inv = T::one() / T::of(cols as f64);
    for ((row, out), s) in u.chunks_exact(cols).zip(xhat.chunks_exact_mut(cols)).zip(sigma) {
        let mean = row.iter().fold(T::zero(), |a, &v| a + v) * inv;
        let var = row.iter().fold(T::zero(), |a, &v| a + (v - mean) * (v - mean)) * inv;
        let sd = var.sqrt();
        *s = sd;
        for (o, &v) in out.iter_mut().zip(row) {
            *o = if sd > T::zero() { (v - mean) / sd } else { T::zero() };
        }
    }
}

/// The gradient with respect to `u` of rows standardized to `xhat` (deviations `sigma`), given
/// the gradient `dxhat` with respect to `xhat`: `(dxhat − mean(dxhat) − xhat·mean(dxhat·xhat)) / σ`.
pub fn standardize_rows_backward<T: Scalar>(
    xhat: &[T],
    sigma: &[T],
    dxhat: &[T],
    cols: usize,
    du: &mut [T],
) {
    let inv = T::one() / T::of(cols as f64);
    let rows = xhat.chunks_exact(cols).zip(dxhat.chunks_exact(cols));
    for (((y, dy), &s), out) in rows.zip(sigma).zip(du.chunks_exact_mut(cols)) {
        if s <= T::zero() {
            out.fill(T::zero());
            continue;
        }
        let m1 = dy.iter().fold(T::zero(), |a, &v| a + v) * inv;
        let m2 = dy.iter().zip(y).fold(T::zero(), |a, (&d, &v)| a + d * v) * inv;
        for ((o, &d), &v) in out.iter_mut().zip(dy).zip(y) {
            *o = (d - m1 - v * m2) / s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standardizes_and_differentiates_rows() {
        let u = [1.0f64, 2.0, 4.0, 3.0, 3.0, 3.0];
        let (mut y, mut s) = ([0.0; 6], [0.0; 2]);
        standardize_rows(&u, 3, &mut y, &mut s);
        let sd = (14.0f64 / 9.0).sqrt();
        assert!((s[0] - sd).abs() < 1e-15 && s[1] == 0.0);
        assert!((y[0] + 4.0 / 3.0 / sd).abs() < 1e-15 && y[3..] == [0.0; 3]);
        // finite differences of L = Σ c·y
        let c = [0.3, -1.2, 0.7];
        let mut du = [0.0; 6];
        standardize_rows_backward(&y, &s, &[0.3, -1.2, 0.7, 1.0, 1.0, 1.0], 3, &mut du);
        for k in 0..3 {
            let f = |d: f64| {
                let mut v = u;
                v[k] += d;
                let (mut yy, mut ss) = ([0.0; 6], [0.0; 2]);
                standardize_rows(&v, 3, &mut yy, &mut ss);
                yy[..3].iter().zip(&c).map(|(a, b)| a * b).sum::<f64>()
            };
            let num = (f(1e-6) - f(-1e-6)) / 2e-6;
            assert!((num - du[k]).abs() < 1e-8, "{k}: {num} vs {}", du[k]);
        }
        assert_eq!(du[3..], [0.0; 3]);
    }
}
