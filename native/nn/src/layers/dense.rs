//! Dense (fully connected) layers.

use super::Layer;
use crate::config::{Activation, DenseLayerConfig, LossFunction, OutputLayerConfig, WeightInit};
use crate::loss::LabelsMask;
use ferrodl_optim::AnyUpdater;
use ferrodl_tensor::{column_sums, gemm, sum_abs, sum_squares, Op, Rng, Scalar};
use std::ops::Range;

/// `a = act(x·W + b)` with `W` (`nIn × nOut`, row-major) followed by `b` (`nOut`, when `hasBias`)
/// in its parameter block.
///
/// Initialisation consumes the RNG for the weights only, in row-major order (`W[0][0]`,
/// `W[0][1]`, ..., one standard normal per weight, scaled by the scheme's std); biases are set to
/// `biasInit` and draw nothing.
#[derive(Clone, Debug)]
pub struct DenseLayer {
    conf: DenseLayerConfig,
}

impl DenseLayer {
    pub fn new(conf: DenseLayerConfig) -> Self {
        DenseLayer { conf }
    }

    pub fn config(&self) -> &DenseLayerConfig {
        &self.conf
    }

    pub fn activation(&self) -> Activation {
        self.conf.activation
    }

    fn n_weights(&self) -> usize {
        self.conf.n_in * self.conf.n_out
    }

    fn split<'p, T>(&self, params: &'p [T]) -> (&'p [T], Option<&'p [T]>) {
        let (w, b) = params.split_at(self.n_weights());
        (w, self.conf.has_bias.then_some(b))
    }

    /// Standard deviation of the initial weights.
    pub fn init_std(&self) -> f64 {
        let (n_in, n_out) = (self.conf.n_in as f64, self.conf.n_out as f64);
        match self.conf.weight_init {
            WeightInit::Xavier => (2.0 / (n_in + n_out)).sqrt(),
            WeightInit::Relu => (2.0 / n_in).sqrt(),
        }
    }

    /// Backpropagation from `dz = dL/dz` (already through the activation): parameter gradients
    /// into `grads`, and `dL/dx = dz·Wᵀ` into `grad_input` when requested.
    pub fn backward_from_preactivation<T: Scalar>(
        &self,
        params: &[T],
        input: &[T],
        rows: usize,
        dz: &[T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let (n_in, n_out) = (self.conf.n_in, self.conf.n_out);
        let (w, _) = self.split(params);
        let (gw, gb) = grads.split_at_mut(self.n_weights());
        // dW = xᵀ·dz without materialising xᵀ.
        gemm(
            Op::T,
            Op::N,
            n_in,
            n_out,
            rows,
            T::one(),
            input,
            dz,
            T::zero(),
            gw,
        );
        if self.conf.has_bias {
            column_sums(dz, n_out, T::zero(), gb);
        }
        if let Some(gx) = grad_input {
            gemm(
                Op::N,
                Op::T,
                rows,
                n_in,
                n_out,
                T::one(),
                dz,
                w,
                T::zero(),
                gx,
            );
        }
    }
}

fn penalty<T: Scalar>(x: &[T], l1: f64, l2: f64) -> f64 {
    let mut s = 0.0;
    if l2 != 0.0 {
        s += 0.5 * l2 * sum_squares(x);
    }
    if l1 != 0.0 {
        s += l1 * sum_abs(x);
    }
    s
}

fn penalty_grad<T: Scalar>(x: &[T], g: &mut [T], l1: f64, l2: f64) {
    if l1 == 0.0 && l2 == 0.0 {
        return;
    }
    let (l1, l2) = (T::of(l1), T::of(l2));
    for (gi, &xi) in g.iter_mut().zip(x) {
        // signum(0) would be 1 for +0.0; the subgradient at 0 is taken as 0.
        let sign = if xi > T::zero() {
            T::one()
        } else if xi < T::zero() {
            -T::one()
        } else {
            T::zero()
        };
        *gi = *gi + l2 * xi + l1 * sign;
    }
}

impl<T: Scalar> Layer<T> for DenseLayer {
    fn type_name(&self) -> &'static str {
        "DenseLayer"
    }

    fn n_in(&self) -> usize {
        self.conf.n_in
    }

    fn n_out(&self) -> usize {
        self.conf.n_out
    }

    fn num_params(&self) -> usize {
        self.n_weights()
            + if self.conf.has_bias {
                self.conf.n_out
            } else {
                0
            }
    }

    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        let (w, b) = params.split_at_mut(self.n_weights());
        rng.fill_normal(w, self.init_std());
        b.fill(T::of(self.conf.bias_init));
    }

    fn forward(&self, params: &[T], input: &[T], rows: usize, output: &mut [T]) {
        let (n_in, n_out) = (self.conf.n_in, self.conf.n_out);
        let (w, b) = self.split(params);
        gemm(
            Op::N,
            Op::N,
            rows,
            n_out,
            n_in,
            T::one(),
            input,
            w,
            T::zero(),
            output,
        );
        self.conf.activation.bias_forward_in_place(output, n_out, b);
    }

    fn backward(
        &self,
        params: &[T],
        input: &[T],
        output: &[T],
        rows: usize,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        self.conf
            .activation
            .backward_in_place(output, delta, self.conf.n_out);
        self.backward_from_preactivation(params, input, rows, delta, grads, grad_input);
    }

    fn regularization_score(&self, params: &[T]) -> f64 {
        let (w, b) = self.split(params);
        let c = &self.conf;
        penalty(w, c.l1, c.l2) + b.map_or(0.0, |b| penalty(b, c.l1_bias, c.l2_bias))
    }

    fn add_regularization_gradient(&self, params: &[T], grads: &mut [T]) {
        let nw = self.n_weights();
        let c = &self.conf;
        penalty_grad(&params[..nw], &mut grads[..nw], c.l1, c.l2);
        if c.has_bias {
            penalty_grad(&params[nw..], &mut grads[nw..], c.l1_bias, c.l2_bias);
        }
    }

    fn updater_blocks(&self) -> Vec<(Range<usize>, AnyUpdater)> {
        let nw = self.n_weights();
        let mut v = vec![(0..nw, self.conf.updater.to_updater())];
        if self.conf.has_bias {
            v.push((
                nw..nw + self.conf.n_out,
                self.conf.bias_updater.to_updater(),
            ));
        }
        v
    }
}

/// A dense layer that ends the network and defines the loss.
#[derive(Clone, Debug)]
pub struct OutputLayer {
    dense: DenseLayer,
    loss: LossFunction,
}

impl OutputLayer {
    pub fn new(conf: OutputLayerConfig) -> Self {
        OutputLayer {
            loss: conf.loss_function,
            dense: DenseLayer::new(conf.dense()),
        }
    }

    pub fn loss_function(&self) -> LossFunction {
        self.loss
    }

    pub fn dense(&self) -> &DenseLayer {
        &self.dense
    }

    /// Sum over examples of the masked loss of `output` (this layer's activations).
    pub fn score_sum<T: Scalar>(
        &self,
        output: &[T],
        labels: &[T],
        mask: Option<&LabelsMask<'_, T>>,
    ) -> f64 {
        self.loss
            .score_sum(output, labels, mask, self.dense.conf.n_out)
    }

    /// Writes `scale · dL/dz` for this layer's pre-activations into `delta`.
    pub fn loss_delta<T: Scalar>(
        &self,
        output: &[T],
        labels: &[T],
        mask: Option<&LabelsMask<'_, T>>,
        scale: T,
        delta: &mut [T],
    ) {
        self.loss.delta(
            self.dense.activation(),
            output,
            labels,
            mask,
            self.dense.conf.n_out,
            scale,
            delta,
        )
    }
}

impl<T: Scalar> Layer<T> for OutputLayer {
    fn type_name(&self) -> &'static str {
        "OutputLayer"
    }
    fn n_in(&self) -> usize {
        Layer::<T>::n_in(&self.dense)
    }
    fn n_out(&self) -> usize {
        Layer::<T>::n_out(&self.dense)
    }
    fn num_params(&self) -> usize {
        Layer::<T>::num_params(&self.dense)
    }
    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        self.dense.init_params(params, rng)
    }
    fn forward(&self, params: &[T], input: &[T], rows: usize, output: &mut [T]) {
        self.dense.forward(params, input, rows, output)
    }
    fn backward(
        &self,
        params: &[T],
        input: &[T],
        output: &[T],
        rows: usize,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        self.dense
            .backward(params, input, output, rows, delta, grads, grad_input)
    }
    fn regularization_score(&self, params: &[T]) -> f64 {
        self.dense.regularization_score(params)
    }
    fn add_regularization_gradient(&self, params: &[T], grads: &mut [T]) {
        self.dense.add_regularization_gradient(params, grads)
    }
    fn updater_blocks(&self) -> Vec<(Range<usize>, AnyUpdater)> {
        Layer::<T>::updater_blocks(&self.dense)
    }
}
