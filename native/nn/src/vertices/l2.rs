//! `L2Vertex` (Euclidean distance between two inputs, one column out) and `L2NormalizeVertex`
//! (`x / max(‖x‖, eps)` over chosen axes).
//!
//! Near zero both divide by `max(norm, eps)` instead of the norm, as the reference does for
//! stability; the gradients below are exact wherever the norm exceeds `eps`.

use super::Vertex;
use crate::config::Shape;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

fn default_eps() -> f64 {
    1e-8
}

fn check_eps(eps: f64) -> Result<(), String> {
    if eps.is_finite() && eps > 0.0 {
        Ok(())
    } else {
        Err(format!(
            "eps={eps} is invalid (must be a finite number > 0)"
        ))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct L2VertexConfig {
    #[serde(default = "default_eps")]
    pub eps: f64,
}

impl L2VertexConfig {
    pub fn output_shape(&self, inputs: &[Shape]) -> Result<Shape, String> {
        check_eps(self.eps)?;
        if inputs[1] != inputs[0] {
            return Err(format!(
                "input 1 is {} but input 0 is {}; the distance needs inputs of one shape",
                inputs[1], inputs[0]
            ));
        }
        Ok(Shape::Flat(1))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct L2NormalizeVertexConfig {
    /// Axes of the `[minibatch, ...]` array to normalise over (1-based, the minibatch axis is 0);
    /// empty: every axis but the minibatch.
    #[serde(default)]
    pub dimension: Vec<usize>,
    #[serde(default = "default_eps")]
    pub eps: f64,
}

/// The per-example axes of a shape (`[n]`, `[C,H,W]`, `[C,L]`).
fn dims(s: Shape) -> Vec<usize> {
    match s {
        Shape::Flat(n) => vec![n],
        Shape::Image { c, h, w } => vec![c, h, w],
        Shape::Seq { c, len } => vec![c, len],
    }
}

impl L2NormalizeVertexConfig {
    pub fn output_shape(&self, input: Shape) -> Result<Shape, String> {
        check_eps(self.eps)?;
        let rank = dims(input).len();
        for (k, &d) in self.dimension.iter().enumerate() {
            if d == 0 || d > rank || self.dimension[..k].contains(&d) {
                return Err(format!(
                    "dimension {:?} is invalid for its input, {input}: axes must be distinct and \
                     in 1..={rank} (axis 0 is the minibatch)",
                    self.dimension
                ));
            }
        }
        Ok(input)
    }
}

#[derive(Debug)]
pub(super) struct L2Distance {
    eps: f64,
    width: usize,
}

impl L2Distance {
    pub fn new(eps: f64, width: usize) -> Self {
        L2Distance { eps, width }
    }
}

impl<T: Scalar> Vertex<T> for L2Distance {
    fn forward(&mut self, inputs: &[&[T]], rows: usize, output: &mut [T]) {
        let w = self.width;
        for (r, o) in output.iter_mut().enumerate().take(rows) {
            let (a, b) = (
                &inputs[0][r * w..(r + 1) * w],
                &inputs[1][r * w..(r + 1) * w],
            );
            let s: f64 = a.iter().zip(b).map(|(&x, &y)| (x - y).f64().powi(2)).sum();
            *o = T::of(s.sqrt());
        }
    }

    fn backward(
        &mut self,
        inputs: &[&[T]],
        output: &[T],
        rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        let w = self.width;
        for (j, g) in grads.iter_mut().enumerate() {
            let Some(g) = g else { continue };
            let sign = if j == 0 { 1.0 } else { -1.0 };
            for r in 0..rows {
                let k = T::of(sign * delta[r].f64() / output[r].f64().max(self.eps));
                for i in r * w..(r + 1) * w {
                    g[i] = (inputs[0][i] - inputs[1][i]) * k;
                }
            }
        }
    }
}

#[derive(Debug)]
pub(super) struct L2Normalize<T> {
    eps: f64,
    width: usize,
    /// Which norm group each value of a row belongs to, and how many groups a row has.
    group_of: Vec<usize>,
    groups: usize,
    /// `‖x‖` per row and group of the last forward pass.
    norms: Vec<T>,
}

impl<T: Scalar> L2Normalize<T> {
    pub fn new(c: &L2NormalizeVertexConfig, input: Shape) -> Self {
        let d = dims(input);
        let reduced: Vec<bool> = (1..=d.len())
            .map(|axis| c.dimension.is_empty() || c.dimension.contains(&axis))
            .collect();
        // A value's group is its index over the axes that are not reduced (row-major).
        let width = input.len();
        let mut group_of = Vec::with_capacity(width);
        for flat in 0..width {
            let (mut rem, mut g) = (flat, 0);
            let mut coords = vec![0; d.len()];
            for k in (0..d.len()).rev() {
                coords[k] = rem % d[k];
                rem /= d[k];
            }
            for k in 0..d.len() {
                if !reduced[k] {
                    g = g * d[k] + coords[k];
                }
            }
            group_of.push(g);
        }
        let groups = (0..d.len())
            .filter(|&k| !reduced[k])
            .map(|k| d[k])
            .product();
        L2Normalize {
            eps: c.eps,
            width,
            group_of,
            groups,
            norms: Vec::new(),
        }
    }
}

impl<T: Scalar> Vertex<T> for L2Normalize<T> {
    fn forward(&mut self, inputs: &[&[T]], rows: usize, output: &mut [T]) {
        let (w, g) = (self.width, self.groups);
        self.norms.resize(rows * g, T::zero());
        let mut sums = vec![0.0f64; g];
        for r in 0..rows {
            sums.iter_mut().for_each(|s| *s = 0.0);
            let x = &inputs[0][r * w..(r + 1) * w];
            for (&v, &k) in x.iter().zip(&self.group_of) {
                sums[k] += v.f64() * v.f64();
            }
            for (n, s) in self.norms[r * g..(r + 1) * g].iter_mut().zip(&sums) {
                *n = T::of(s.sqrt());
            }
            for ((o, &v), &k) in output[r * w..(r + 1) * w]
                .iter_mut()
                .zip(x)
                .zip(&self.group_of)
            {
                *o = T::of(v.f64() / self.norms[r * g + k].f64().max(self.eps));
            }
        }
    }

    fn backward(
        &mut self,
        _inputs: &[&[T]],
        output: &[T],
        rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        let Some(grad) = &mut grads[0] else { return };
        let (w, g) = (self.width, self.groups);
        let mut dots = vec![0.0f64; g];
        for r in 0..rows {
            let (y, d) = (&output[r * w..(r + 1) * w], &delta[r * w..(r + 1) * w]);
            dots.iter_mut().for_each(|s| *s = 0.0);
            for ((&yv, &dv), &k) in y.iter().zip(d).zip(&self.group_of) {
                dots[k] += yv.f64() * dv.f64();
            }
            for (i, &k) in self.group_of.iter().enumerate() {
                let n = self.norms[r * g + k].f64();
                grad[r * w + i] = T::of(if n > self.eps {
                    // d(x/‖x‖) = (I − y yᵀ)/‖x‖
                    (d[i].f64() - y[i].f64() * dots[k]) / n
                } else {
                    d[i].f64() / self.eps
                });
            }
        }
    }
}
