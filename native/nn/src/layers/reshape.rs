//! Layers that move values without parameters: nearest-neighbour upsampling
//! ([`Upsampling2dLayer`]) and zero padding ([`ZeroPaddingLayer`]) of NCHW images.

use super::{Batch, Ctx, Layer};
use crate::config::defaults::*;
use crate::config::layers::plain_layer_fields;
use crate::config::Shape;
use crate::config::{LayerShapes, ShapeCx};
use crate::layers::LayerKind;
use crate::NnError;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

/// `(C, H, W)` of an activation shape; a sequence is a one-row image, a flat shape one pixel.
fn chw(s: Shape) -> (usize, usize, usize) {
    match s {
        Shape::Image { c, h, w } => (c, h, w),
        Shape::Seq { c, len } => (c, 1, len),
        Shape::Flat(n) => (n, 1, 1),
    }
}

/// Repeats every pixel `size[0] × size[1]` times: `out[c][h·sH + i][w·sW + j] = in[c][h][w]`.
/// Backward sums the gradient of the repeated cells.
#[derive(Debug)]
pub struct Upsampling2dLayer {
    c: usize,
    h: usize,
    w: usize,
    sh: usize,
    sw: usize,
    input: Shape,
    output: Shape,
}

impl Upsampling2dLayer {
    pub fn new(conf: &Upsampling2DConfig, input: Shape, output: Shape) -> Self {
        let (c, h, w) = chw(input);
        Upsampling2dLayer {
            c,
            h,
            w,
            // Validation refuses 0; 1 keeps a bypassed check from dividing by zero.
            sh: conf.size[0].max(1),
            sw: conf.size[1].max(1),
            input,
            output,
        }
    }
}

impl<T: Scalar> Layer<T> for Upsampling2dLayer {
    fn type_name(&self) -> &'static str {
        "Upsampling2D"
    }
    fn input_shape(&self) -> Shape {
        self.input
    }
    fn output_shape(&self) -> Shape {
        self.output
    }

    fn forward(
        &mut self,
        _: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        _: &mut Ctx,
    ) {
        let rows = batch.rows;
        let (w, sh, sw) = (self.w, self.sh, self.sw);
        let ow = w * sw;
        let planes = rows * self.c;
        assert_eq!(
            input.len(),
            planes * self.h * w,
            "Upsampling2D: input length"
        );
        assert_eq!(
            output.len(),
            planes * self.h * sh * ow,
            "Upsampling2D: output length"
        );
        // One input row -> sH identical output rows.
        for (src, dst) in input.chunks_exact(w).zip(output.chunks_exact_mut(sh * ow)) {
            let (first, rest) = dst.split_at_mut(ow);
            for (&v, cell) in src.iter().zip(first.chunks_exact_mut(sw)) {
                cell.fill(v);
            }
            for copy in rest.chunks_exact_mut(ow) {
                copy.copy_from_slice(first);
            }
        }
    }

    fn backward(
        &mut self,
        _: &[T],
        _input: &[T],
        _output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        _: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let rows = batch.rows;
        let Some(gx) = grad_input else {
            return;
        };
        let (w, sh, sw) = (self.w, self.sh, self.sw);
        let ow = w * sw;
        let planes = rows * self.c;
        assert_eq!(
            gx.len(),
            planes * self.h * w,
            "Upsampling2D: grad_input length"
        );
        assert_eq!(
            delta.len(),
            planes * self.h * sh * ow,
            "Upsampling2D: delta length"
        );
        for (g, d) in gx.chunks_exact_mut(w).zip(delta.chunks_exact(sh * ow)) {
            g.fill(T::zero());
            for drow in d.chunks_exact(ow) {
                for (gv, cell) in g.iter_mut().zip(drow.chunks_exact(sw)) {
                    *gv = *gv + cell.iter().copied().sum::<T>();
                }
            }
        }
    }
}

/// Adds zero rows/columns around each image: `padding = [top, bottom, left, right]`.
/// Backward crops the gradient back to the input.
#[derive(Debug)]
pub struct ZeroPaddingLayer {
    c: usize,
    h: usize,
    w: usize,
    top: usize,
    bottom: usize,
    left: usize,
    right: usize,
    input: Shape,
    output: Shape,
}

impl ZeroPaddingLayer {
    pub fn new(conf: &ZeroPaddingLayerConfig, input: Shape, output: Shape) -> Self {
        let (c, h, w) = chw(input);
        let [top, bottom, left, right] = conf.padding;
        ZeroPaddingLayer {
            c,
            h,
            w,
            top,
            bottom,
            left,
            right,
            input,
            output,
        }
    }

    fn out_w(&self) -> usize {
        self.w + self.left + self.right
    }

    fn out_plane(&self) -> usize {
        (self.h + self.top + self.bottom) * self.out_w()
    }
}

impl<T: Scalar> Layer<T> for ZeroPaddingLayer {
    fn type_name(&self) -> &'static str {
        "ZeroPaddingLayer"
    }
    fn input_shape(&self) -> Shape {
        self.input
    }
    fn output_shape(&self) -> Shape {
        self.output
    }

    fn forward(
        &mut self,
        _: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        _: &mut Ctx,
    ) {
        let rows = batch.rows;
        let (w, ow, plane_out) = (self.w, self.out_w(), self.out_plane());
        let planes = rows * self.c;
        assert_eq!(
            input.len(),
            planes * self.h * w,
            "ZeroPaddingLayer: input length"
        );
        assert_eq!(
            output.len(),
            planes * plane_out,
            "ZeroPaddingLayer: output length"
        );
        let zero = T::zero();
        for (x, y) in input
            .chunks_exact(self.h * w)
            .zip(output.chunks_exact_mut(plane_out))
        {
            let (top, rest) = y.split_at_mut(self.top * ow);
            top.fill(zero);
            let (body, bottom) = rest.split_at_mut(self.h * ow);
            bottom.fill(zero);
            for (src, dst) in x.chunks_exact(w).zip(body.chunks_exact_mut(ow)) {
                dst[..self.left].fill(zero);
                dst[self.left..self.left + w].copy_from_slice(src);
                dst[self.left + w..].fill(zero);
            }
        }
    }

    fn backward(
        &mut self,
        _: &[T],
        _input: &[T],
        _output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        _: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let rows = batch.rows;
        let Some(gx) = grad_input else {
            return;
        };
        let (w, ow, plane_out) = (self.w, self.out_w(), self.out_plane());
        let planes = rows * self.c;
        assert_eq!(
            gx.len(),
            planes * self.h * w,
            "ZeroPaddingLayer: grad_input length"
        );
        assert_eq!(
            delta.len(),
            planes * plane_out,
            "ZeroPaddingLayer: delta length"
        );
        for (g, d) in gx
            .chunks_exact_mut(self.h * w)
            .zip(delta.chunks_exact(plane_out))
        {
            let body = &d[self.top * ow..][..self.h * ow];
            for (dst, src) in g.chunks_exact_mut(w).zip(body.chunks_exact(ow)) {
                dst.copy_from_slice(&src[self.left..self.left + w]);
            }
        }
    }
}

/// Nearest-neighbour upsampling: each pixel repeated `size[0] × size[1]` times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Upsampling2DConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default = "ones_2d")]
    pub size: [usize; 2],
}

plain_layer_fields!(Upsampling2DConfig);

impl LayerKind for Upsampling2DConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (c, h, w) = cx.image("Upsampling2D")?;
        cx.positive("size[0]", self.size[0])?;
        cx.positive("size[1]", self.size[1])?;
        Ok(Shape::Image {
            c,
            h: h * self.size[0],
            w: w * self.size[1],
        })
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(Upsampling2dLayer::new(
            self,
            shapes.input,
            shapes.output,
        )))
    }
}

/// Zeros around the image: `[top, bottom, left, right]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZeroPaddingLayerConfig {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub padding: [usize; 4],
}

plain_layer_fields!(ZeroPaddingLayerConfig);

impl LayerKind for ZeroPaddingLayerConfig {
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        let (c, h, w) = cx.image("ZeroPaddingLayer")?;
        let [t, b, l, r] = self.padding;
        Ok(Shape::Image {
            c,
            h: h + t + b,
            w: w + l + r,
        })
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        Ok(Box::new(ZeroPaddingLayer::new(
            self,
            shapes.input,
            shapes.output,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodl_tensor::Rng;
    use serde_json::json;

    fn fwd<L: Layer<f64>>(l: &mut L, x: &[f64], rows: usize) -> Vec<f64> {
        let mut out = vec![f64::NAN; rows * l.n_out()];
        let mut rng = Rng::new(0);
        l.forward(
            &[],
            x,
            &Batch::rows(rows),
            &mut out,
            &mut Ctx {
                train: false,
                rng: &mut rng,
                state: crate::layers::StateMode::Stateless,
            },
        );
        out
    }

    fn bwd<L: Layer<f64>>(l: &mut L, x: &[f64], y: &[f64], rows: usize, d: &[f64]) -> Vec<f64> {
        let mut gx = vec![f64::NAN; x.len()];
        let mut delta = d.to_vec();
        l.backward(
            &[],
            x,
            y,
            &Batch::rows(rows),
            &mut delta,
            &mut [],
            Some(&mut gx),
        );
        gx
    }

    #[test]
    fn upsampling_repeats_and_sums() {
        let conf: Upsampling2DConfig = serde_json::from_value(json!({"size": [2, 3]})).unwrap();
        let mut l = Upsampling2dLayer::new(
            &conf,
            Shape::Image { c: 1, h: 2, w: 2 },
            Shape::Image { c: 1, h: 4, w: 6 },
        );
        let x = [1.0, 2.0, 3.0, 4.0, /* example 2 */ 5.0, 6.0, 7.0, 8.0];
        let y = fwd(&mut l, &x, 2);
        #[rustfmt::skip]
        let first = [
            1.0, 1.0, 1.0, 2.0, 2.0, 2.0,
            1.0, 1.0, 1.0, 2.0, 2.0, 2.0,
            3.0, 3.0, 3.0, 4.0, 4.0, 4.0,
            3.0, 3.0, 3.0, 4.0, 4.0, 4.0,
        ];
        assert_eq!(&y[..24], &first);
        assert_eq!(y[24], 5.0);
        assert_eq!(y[47], 8.0);
        let d: Vec<f64> = (0..48).map(f64::from).collect();
        let g = bwd(&mut l, &x, &y, 2, &d);
        // Cell (0,0) of example 1 receives d[0,1,2,6,7,8].
        assert_eq!(g[0], 0.0 + 1.0 + 2.0 + 6.0 + 7.0 + 8.0);
        assert_eq!(g[3], 15.0 + 16.0 + 17.0 + 21.0 + 22.0 + 23.0);
        assert_eq!(g[4], 24.0 + 25.0 + 26.0 + 30.0 + 31.0 + 32.0);
        let total: f64 = d.iter().sum();
        assert_eq!(g.iter().sum::<f64>(), total);
    }

    #[test]
    fn zero_padding_pads_and_crops() {
        let conf: ZeroPaddingLayerConfig =
            serde_json::from_value(json!({"padding": [1, 0, 2, 1]})).unwrap();
        let mut l = ZeroPaddingLayer::new(
            &conf,
            Shape::Image { c: 2, h: 2, w: 2 },
            Shape::Image { c: 2, h: 3, w: 5 },
        );
        let x: Vec<f64> = (1..=16).map(f64::from).collect();
        let y = fwd(&mut l, &x, 2);
        #[rustfmt::skip]
        let plane0 = [
            0.0, 0.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 1.0, 2.0, 0.0,
            0.0, 0.0, 3.0, 4.0, 0.0,
        ];
        assert_eq!(&y[..15], &plane0);
        assert_eq!(y.len(), 60);
        assert_eq!(y.iter().sum::<f64>(), x.iter().sum::<f64>());
        assert_eq!(y[59 - 1], 16.0);
        let d: Vec<f64> = (0..60).map(f64::from).collect();
        let g = bwd(&mut l, &x, &y, 2, &d);
        assert_eq!(&g[..4], &[7.0, 8.0, 12.0, 13.0]);
        assert_eq!(&g[12..], &[52.0, 53.0, 57.0, 58.0]);
    }
}
