//! Weight initialisation (ARCHITECTURE.md §2.2): every scheme draws from the network's one seeded
//! [`Rng`] in row-major order of the weight tensor, so one seed gives the same parameters in f32
//! and f64 (to f32 rounding) and on every machine.

use crate::config::{Distribution, WeightInit};
use ferrodl_tensor::{Rng, Scalar};

/// Fills a weight tensor of shape `shape` (row-major) with the scheme's values.
///
/// `fan_in`/`fan_out` follow the reference (dense: nIn/nOut; convolution: nIn·kH·kW and
/// nOut·kH·kW/(sH·sW)). `IDENTITY` needs `shape` to be `[n, n]` (dense) or `[n, n, k...]` with odd
/// kernel sizes (a centred delta per channel); the configuration validation guarantees that.
pub fn init_weights<T: Scalar>(
    scheme: WeightInit,
    distribution: Option<Distribution>,
    fan_in: f64,
    fan_out: f64,
    shape: &[usize],
    out: &mut [T],
    rng: &mut Rng,
) {
    let uniform = |rng: &mut Rng, out: &mut [T], a: f64| rng.fill_uniform(out, -a, a);
    match scheme {
        WeightInit::Xavier => rng.fill_normal(out, (2.0 / (fan_in + fan_out)).sqrt()),
        WeightInit::XavierUniform => uniform(rng, out, (6.0 / (fan_in + fan_out)).sqrt()),
        WeightInit::XavierFanIn => rng.fill_normal(out, (1.0 / fan_in).sqrt()),
        WeightInit::Relu => rng.fill_normal(out, (2.0 / fan_in).sqrt()),
        WeightInit::ReluUniform => uniform(rng, out, (6.0 / fan_in).sqrt()),
        WeightInit::LecunNormal => truncated_normal(rng, out, 0.0, (1.0 / fan_in).sqrt()),
        WeightInit::LecunUniform => uniform(rng, out, (3.0 / fan_in).sqrt()),
        WeightInit::Normal => rng.fill_normal(out, 1.0 / fan_in.sqrt()),
        WeightInit::Uniform => uniform(rng, out, 1.0 / fan_in.sqrt()),
        WeightInit::Zero => out.fill(T::zero()),
        WeightInit::Ones => out.fill(T::one()),
        WeightInit::Identity => identity(shape, out),
        WeightInit::Distribution => match distribution {
            Some(Distribution::Normal { mean, std }) => {
                for v in out.iter_mut() {
                    *v = T::of(mean + std * rng.next_gaussian());
                }
            }
            Some(Distribution::Uniform { lower, upper }) => rng.fill_uniform(out, lower, upper),
            Some(Distribution::TruncatedNormal { mean, std }) => {
                truncated_normal(rng, out, mean, std)
            }
            // Validation refuses DISTRIBUTION without a distribution; zeros keep this total.
            None => out.fill(T::zero()),
        },
    }
}

/// Normal draws redrawn until within two standard deviations of the mean.
fn truncated_normal<T: Scalar>(rng: &mut Rng, out: &mut [T], mean: f64, std: f64) {
    for v in out.iter_mut() {
        let mut g = rng.next_gaussian();
        while g.abs() > 2.0 {
            g = rng.next_gaussian();
        }
        *v = T::of(mean + std * g);
    }
}

/// Identity matrix, or a centred delta per channel for convolution kernels `[o, i, k...]`.
fn identity<T: Scalar>(shape: &[usize], out: &mut [T]) {
    out.fill(T::zero());
    let n = shape[0].min(shape.get(1).copied().unwrap_or(0));
    let kernel: usize = shape[2..].iter().product();
    // Offset of the kernel centre in row-major order of the kernel dims.
    let mut centre = 0;
    for &k in &shape[2..] {
        centre = centre * k + k / 2;
    }
    let per_out = shape.get(1).copied().unwrap_or(0) * kernel;
    for i in 0..n {
        out[i * per_out + i * kernel + centre] = T::one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(v: &[f64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        (mean, var.sqrt())
    }

    /// Each scheme's spread: std within 3% of the formula on 200k draws (uniform ±a has std a/√3).
    #[test]
    fn schemes_have_the_documented_spread() {
        let (fi, fo) = (300.0f64, 100.0f64);
        let cases = [
            (WeightInit::Xavier, (2.0 / (fi + fo)).sqrt()),
            (
                WeightInit::XavierUniform,
                (6.0 / (fi + fo)).sqrt() / 3f64.sqrt(),
            ),
            (WeightInit::XavierFanIn, (1.0 / fi).sqrt()),
            (WeightInit::Relu, (2.0 / fi).sqrt()),
            (WeightInit::ReluUniform, (6.0 / fi).sqrt() / 3f64.sqrt()),
            (WeightInit::LecunUniform, (3.0 / fi).sqrt() / 3f64.sqrt()),
            (WeightInit::Normal, 1.0 / fi.sqrt()),
            (WeightInit::Uniform, 1.0 / fi.sqrt() / 3f64.sqrt()),
            // Normal truncated at ±2σ keeps 0.7737 of the variance.
            (
                WeightInit::LecunNormal,
                (1.0 / fi).sqrt() * 0.773_7f64.sqrt(),
            ),
        ];
        for (scheme, want) in cases {
            let mut v = vec![0.0f64; 200_000];
            init_weights(scheme, None, fi, fo, &[200_000], &mut v, &mut Rng::new(7));
            let (mean, std) = stats(&v);
            assert!(mean.abs() < 0.01 * want * 10.0, "{scheme:?} mean {mean}");
            assert!(
                (std / want - 1.0).abs() < 0.03,
                "{scheme:?} std {std} want {want}"
            );
        }
        let mut v = vec![0.0f64; 100_000];
        let d = Distribution::Uniform {
            lower: 2.0,
            upper: 4.0,
        };
        init_weights(
            WeightInit::Distribution,
            Some(d),
            1.0,
            1.0,
            &[100_000],
            &mut v,
            &mut Rng::new(1),
        );
        assert!(v.iter().all(|&x| (2.0..4.0).contains(&x)));
        assert!((stats(&v).0 - 3.0).abs() < 0.01);
        let d = Distribution::TruncatedNormal {
            mean: 1.0,
            std: 0.5,
        };
        init_weights(
            WeightInit::Distribution,
            Some(d),
            1.0,
            1.0,
            &[100_000],
            &mut v,
            &mut Rng::new(1),
        );
        assert!(v.iter().all(|&x| (0.0..=2.0).contains(&x)));
    }

    #[test]
    fn identity_dense_and_convolution() {
        let mut w = vec![9.0f64; 9];
        init_weights(
            WeightInit::Identity,
            None,
            3.0,
            3.0,
            &[3, 3],
            &mut w,
            &mut Rng::new(0),
        );
        assert_eq!(w, vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        // [2, 2, 3, 3]: channel o has a 1 at the centre (1,1) of kernel [o][o].
        let mut w = vec![0.0f64; 36];
        init_weights(
            WeightInit::Identity,
            None,
            1.0,
            1.0,
            &[2, 2, 3, 3],
            &mut w,
            &mut Rng::new(0),
        );
        let ones: Vec<usize> = (0..36).filter(|&i| w[i] == 1.0).collect();
        assert_eq!(ones, vec![4, 3 * 9 + 4]);
    }
}
