//! `ScaleVertex` (`y = s·x`) and `ShiftVertex` (`y = x + s`).

use super::Vertex;
use crate::config::Shape;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScaleVertexConfig {
    pub scale_factor: f64,
}

impl ScaleVertexConfig {
    pub fn output_shape(&self, input: Shape) -> Result<Shape, String> {
        finite("scaleFactor", self.scale_factor)?;
        Ok(input)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShiftVertexConfig {
    pub shift_factor: f64,
}

impl ShiftVertexConfig {
    pub fn output_shape(&self, input: Shape) -> Result<Shape, String> {
        finite("shiftFactor", self.shift_factor)?;
        Ok(input)
    }
}

fn finite(field: &str, v: f64) -> Result<(), String> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(format!("{field}={v} is invalid (must be finite)"))
    }
}

/// `y = scale·x + shift`.
#[derive(Debug)]
pub(super) struct Affine {
    scale: f64,
    shift: f64,
}

impl Affine {
    pub fn scale(s: f64) -> Self {
        Affine {
            scale: s,
            shift: 0.0,
        }
    }

    pub fn shift(s: f64) -> Self {
        Affine {
            scale: 1.0,
            shift: s,
        }
    }
}

impl<T: Scalar> Vertex<T> for Affine {
    fn any_length(&self) -> bool {
        true
    }

    fn forward(&mut self, inputs: &[&[T]], _rows: usize, output: &mut [T]) {
        let (a, b) = (T::of(self.scale), T::of(self.shift));
        for (o, &x) in output.iter_mut().zip(inputs[0].iter()) {
            *o = if self.shift == 0.0 { x * a } else { x + b };
        }
    }

    fn backward(
        &mut self,
        _inputs: &[&[T]],
        _output: &[T],
        _rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        if let Some(g) = &mut grads[0] {
            let a = T::of(self.scale);
            for (o, &d) in g.iter_mut().zip(delta) {
                *o = d * a;
            }
        }
    }
}
