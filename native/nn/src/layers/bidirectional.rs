//! `Bidirectional`: a recurrent layer (`fwd`: LSTM, GravesLSTM, SimpleRnn, or a MaskZeroLayer
//! around one — the backward copy then derives its mask from the reversed input) run over the sequence
//! as given, and a second copy of it, with its own parameters, run over the sequence reversed in
//! time; the two outputs are combined per step (`mode`: CONCAT along channels, fwd first; ADD; MUL;
//! AVERAGE).
//!
//! Reversal is the reference's: the whole time axis of every example (`t → T−1−t`), the feature
//! mask reversed with it, and the backward copy's output reversed back. With padding at the end of
//! an example (the usual masked batch) the backward copy first meets the masked steps, which output
//! 0 and keep its state at zero, and then the real steps from the last to the first: exactly a run
//! over the example's own steps reversed. A mask with holes in the middle is reversed as a whole,
//! as the reference does.
//!
//! Parameters: the forward copy's blocks, then the backward copy's, keyed `f<key>` / `b<key>`
//! (`fW, fRW, fb, bW, bRW, bb`). Neither `rnnTimeStep` nor truncated BPTT can carry the state of a
//! direction that reads the sequence from its end, so both are refused, as in the reference. Input
//! dropout (the wrapper's `dropOut`, else the wrapped layer's) is one mask shared by both copies.

use super::recurrent::ensure;
use super::{Batch, Ctx, Layer, LayerKind, Mask, ParamSpec, StateMode};
use crate::config::{
    Activation, BaseConfig, LayerConfig, LayerFields, LayerShapes, Shape, ShapeCx,
};
use crate::NnError;
use ferrodl_tensor::memory::MemoryError;
use ferrodl_tensor::{Rng, Scalar};
use serde::{Deserialize, Serialize};

/// How the two directions' outputs are combined (the reference's `Bidirectional.Mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum BidirectionalMode {
    /// `[fwd; bwd]` along channels: `2·nOut` channels.
    #[default]
    Concat,
    Add,
    Mul,
    Average,
}

/// The wrapped layer's parameter keys and their forward/backward names (ParamSpec names are
/// static).
const KEYS: &[(&str, &str, &str)] = &[
    ("W", "fW", "bW"),
    ("RW", "fRW", "bRW"),
    ("b", "fb", "bb"),
    ("gx", "fgx", "bgx"),
    ("gh", "fgh", "bgh"),
];

fn prefixed(name: &str, forward: bool) -> Option<&'static str> {
    KEYS.iter()
        .find(|k| k.0 == name)
        .map(|k| if forward { k.1 } else { k.2 })
}

/// Reverses each line of `t` values of `x` into `out` (NCW rows: one line per example and
/// channel; a `[N, T]` mask: one line per example).
fn reverse_steps<T: Copy>(x: &[T], t: usize, out: &mut [T]) {
    for (src, dst) in x.chunks_exact(t).zip(out.chunks_exact_mut(t)) {
        for (s, v) in dst.iter_mut().enumerate() {
            *v = src[t - 1 - s];
        }
    }
}

#[derive(Debug)]
pub struct BidirectionalLayer<T: Scalar> {
    fwd: Box<dyn Layer<T>>,
    bwd: Box<dyn Layer<T>>,
    mode: BidirectionalMode,
    c_in: usize,
    h: usize,
    /// Parameters of one copy (the forward block; the backward block has as many).
    n_copy: usize,
    /// Scratch: reversed input and mask, the forward copy's output, the backward copy's output
    /// (reversed time, and back in order), their deltas and the backward copy's input gradient.
    xr: Vec<T>,
    mr: Vec<T>,
    out_f: Vec<T>,
    out_br: Vec<T>,
    out_b: Vec<T>,
    d_f: Vec<T>,
    d_br: Vec<T>,
    gx_br: Vec<T>,
}

impl<T: Scalar> BidirectionalLayer<T> {
    fn c_out(&self) -> usize {
        match self.mode {
            BidirectionalMode::Concat => 2 * self.h,
            _ => self.h,
        }
    }

    /// The backward copy's view of `batch`: the mask reversed in time (into `mr`).
    fn reversed_batch<'b>(mr: &'b mut Vec<T>, batch: &Batch<'_, T>) -> Batch<'b, T> {
        let (n, t) = (batch.rows, batch.time_steps);
        let mask = batch.mask.map(|m| {
            if m.cols == 1 {
                ensure(mr, n);
                mr[..n].copy_from_slice(&m.data[..n]);
                1
            } else {
                ensure(mr, n * t);
                reverse_steps(&m.data[..n * t], t, &mut mr[..n * t]);
                t
            }
        });
        Batch {
            rows: n,
            time_steps: t,
            mask: mask.map(|cols| Mask {
                data: &mr[..n * cols],
                cols,
            }),
            backprop_steps: batch.backprop_steps,
        }
    }
}

impl<T: Scalar> Layer<T> for BidirectionalLayer<T> {
    fn type_name(&self) -> &'static str {
        "Bidirectional"
    }

    fn input_shape(&self) -> Shape {
        Shape::Seq {
            c: self.c_in,
            len: 0,
        }
    }

    fn output_shape(&self) -> Shape {
        Shape::Seq {
            c: self.c_out(),
            len: 0,
        }
    }

    fn output_steps(&self, steps: usize) -> Result<usize, String> {
        Ok(steps)
    }

    fn param_specs(&self) -> Vec<ParamSpec> {
        let inner = self.fwd.param_specs();
        let copy = |forward: bool| {
            inner.iter().map(move |s| ParamSpec {
                // build() checked that every key has a prefixed name.
                name: prefixed(s.name, forward).unwrap_or(s.name),
                kind: s.kind,
                shape: s.shape.clone(),
            })
        };
        copy(true).chain(copy(false)).collect()
    }

    /// The forward copy's block, then the backward copy's, each as the wrapped layer draws it.
    fn init_params(&self, params: &mut [T], rng: &mut Rng) {
        let (pf, pb) = params.split_at_mut(self.n_copy);
        self.fwd.init_params(pf, rng);
        self.bwd.init_params(pb, rng);
    }

    fn reserve_workspace(&mut self, rows: usize, steps: usize, who: &str) -> Result<(), MemoryError> {
        self.fwd.reserve_workspace(rows, steps, who)?;
        self.bwd.reserve_workspace(rows, steps, who)
    }

    fn check_state_mode(&self, mode: StateMode) -> Result<(), String> {
        match mode {
            StateMode::Stateless => Ok(()),
            StateMode::TimeStep => Err("rnnTimeStep is not possible with a Bidirectional layer: its \
                 backward direction reads each sequence from its last step, so it cannot be fed \
                 one step at a time (use output() on whole sequences)"
                .into()),
            StateMode::Tbptt => Err("truncated BPTT is not possible with a Bidirectional layer: \
                 its backward direction needs the whole sequence (use BackpropType.Standard)"
                .into()),
        }
    }

    fn set_state(&mut self, _key: &str, _values: &[T], _rows: usize) -> Result<(), String> {
        Err("a Bidirectional layer keeps no rnnTimeStep state (it cannot be stepped through time)"
            .into())
    }

    fn forward(
        &mut self,
        params: &[T],
        input: &[T],
        batch: &Batch<'_, T>,
        output: &mut [T],
        ctx: &mut Ctx,
    ) {
        let (n, t, h) = (batch.rows, batch.time_steps, self.h);
        let (len_in, len_h) = (n * self.c_in * t, n * h * t);
        let (pf, pb) = params.split_at(self.n_copy);
        ensure(&mut self.xr, len_in);
        ensure(&mut self.out_f, len_h);
        ensure(&mut self.out_br, len_h);
        ensure(&mut self.out_b, len_h);
        reverse_steps(&input[..len_in], t, &mut self.xr[..len_in]);
        // check_state_mode refused anything but a stateless pass.
        let mut inner = Ctx {
            train: ctx.train,
            rng: &mut *ctx.rng,
            state: StateMode::Stateless,
        };
        self.fwd
            .forward(pf, input, batch, &mut self.out_f[..len_h], &mut inner);
        let rb = Self::reversed_batch(&mut self.mr, batch);
        self.bwd
            .forward(pb, &self.xr[..len_in], &rb, &mut self.out_br[..len_h], &mut inner);
        reverse_steps(&self.out_br[..len_h], t, &mut self.out_b[..len_h]);
        let (f, b) = (&self.out_f[..len_h], &self.out_b[..len_h]);
        let half = T::of(0.5);
        match self.mode {
            BidirectionalMode::Concat => {
                let row = h * t;
                for i in 0..n {
                    let o = &mut output[i * 2 * row..(i + 1) * 2 * row];
                    o[..row].copy_from_slice(&f[i * row..(i + 1) * row]);
                    o[row..].copy_from_slice(&b[i * row..(i + 1) * row]);
                }
            }
            BidirectionalMode::Add => {
                for ((o, &x), &y) in output[..len_h].iter_mut().zip(f).zip(b) {
                    *o = x + y;
                }
            }
            BidirectionalMode::Mul => {
                for ((o, &x), &y) in output[..len_h].iter_mut().zip(f).zip(b) {
                    *o = x * y;
                }
            }
            BidirectionalMode::Average => {
                for ((o, &x), &y) in output[..len_h].iter_mut().zip(f).zip(b) {
                    *o = (x + y) * half;
                }
            }
        }
    }

    fn backward(
        &mut self,
        params: &[T],
        input: &[T],
        _output: &[T],
        batch: &Batch<'_, T>,
        delta: &mut [T],
        grads: &mut [T],
        grad_input: Option<&mut [T]>,
    ) {
        let (n, t, h) = (batch.rows, batch.time_steps, self.h);
        let (len_in, len_h) = (n * self.c_in * t, n * h * t);
        let (pf, pb) = params.split_at(self.n_copy);
        let (gf, gb) = grads.split_at_mut(self.n_copy);
        ensure(&mut self.d_f, len_h);
        ensure(&mut self.d_br, len_h);
        // dL/d(fwd output) into d_f; dL/d(bwd output), in order, into gx_br (free until the
        // backward copy's input gradient), then reversed in time into d_br.
        ensure(&mut self.gx_br, len_h.max(len_in));
        let (d_f, d_b) = (&mut self.d_f[..len_h], &mut self.gx_br[..len_h]);
        let (f, b) = (&self.out_f[..len_h], &self.out_b[..len_h]);
        let half = T::of(0.5);
        match self.mode {
            BidirectionalMode::Concat => {
                let row = h * t;
                for i in 0..n {
                    let d = &delta[i * 2 * row..(i + 1) * 2 * row];
                    d_f[i * row..(i + 1) * row].copy_from_slice(&d[..row]);
                    d_b[i * row..(i + 1) * row].copy_from_slice(&d[row..]);
                }
            }
            BidirectionalMode::Add => {
                d_f.copy_from_slice(&delta[..len_h]);
                d_b.copy_from_slice(&delta[..len_h]);
            }
            BidirectionalMode::Mul => {
                for k in 0..len_h {
                    d_f[k] = delta[k] * b[k];
                    d_b[k] = delta[k] * f[k];
                }
            }
            BidirectionalMode::Average => {
                for k in 0..len_h {
                    d_f[k] = delta[k] * half;
                    d_b[k] = d_f[k];
                }
            }
        }
        reverse_steps(&self.gx_br[..len_h], t, &mut self.d_br[..len_h]);
        let rb = Self::reversed_batch(&mut self.mr, batch);
        match grad_input {
            Some(gx) => {
                self.fwd.backward(
                    pf,
                    input,
                    &self.out_f[..len_h],
                    batch,
                    &mut self.d_f[..len_h],
                    gf,
                    Some(&mut gx[..len_in]),
                );
                self.bwd.backward(
                    pb,
                    &self.xr[..len_in],
                    &self.out_br[..len_h],
                    &rb,
                    &mut self.d_br[..len_h],
                    gb,
                    Some(&mut self.gx_br[..len_in]),
                );
                // The backward copy's input gradient is in reversed time.
                for (dst, src) in gx[..len_in]
                    .chunks_exact_mut(t)
                    .zip(self.gx_br[..len_in].chunks_exact(t))
                {
                    for (s, v) in dst.iter_mut().enumerate() {
                        *v = *v + src[t - 1 - s];
                    }
                }
            }
            None => {
                self.fwd.backward(
                    pf,
                    input,
                    &self.out_f[..len_h],
                    batch,
                    &mut self.d_f[..len_h],
                    gf,
                    None,
                );
                self.bwd.backward(
                    pb,
                    &self.xr[..len_in],
                    &self.out_br[..len_h],
                    &rb,
                    &mut self.d_br[..len_h],
                    gb,
                    None,
                );
            }
        }
    }
}

/// `Bidirectional` in the configuration JSON: `mode` and the wrapped layer `fwd`; no base fields
/// of its own (the wrapped layer's updater, regularization and initialisation apply to both
/// copies).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BidirectionalConfig {
    #[serde(default)]
    pub name: Option<String>,
    /// Retain probability of the input; 0 (unset) leaves the wrapped layer's.
    #[serde(default)]
    pub drop_out: f64,
    #[serde(default)]
    pub mode: BidirectionalMode,
    pub fwd: Box<LayerConfig>,
}

impl LayerFields for BidirectionalConfig {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn drop_out(&self) -> f64 {
        if self.drop_out != 0.0 {
            self.drop_out
        } else {
            self.fwd.input_drop_out()
        }
    }
    fn base(&self) -> Option<BaseConfig<'_>> {
        self.fwd.base()
    }
    fn n_in(&self) -> Option<usize> {
        self.fwd.n_in()
    }
    fn n_out(&self) -> Option<usize> {
        self.fwd.n_out()
    }
    fn activation(&self) -> Option<Activation> {
        self.fwd.activation()
    }
}

impl BidirectionalConfig {
    fn check_wrapped(&self, cx: &ShapeCx<'_>) -> Result<(), NnError> {
        match &*self.fwd {
            LayerConfig::LSTM(_)
            | LayerConfig::GravesLSTM(_)
            | LayerConfig::SimpleRnn(_)
            | LayerConfig::MaskZeroLayer(_) => Ok(()),
            other => Err(cx.err(format!(
                "Bidirectional wraps a recurrent layer (LSTM, GravesLSTM, SimpleRnn or a \
                 MaskZeroLayer around one), not a {}",
                other.type_name()
            ))),
        }
    }
}

impl LayerKind for BidirectionalConfig {
    fn rnn_format(&self) -> Option<crate::config::RnnFormat> {
        self.fwd.rnn_format()
    }

    /// The wrapped layer's rule on the same input (its errors name it as `… fwd (LSTM)`); CONCAT
    /// doubles the channels.
    fn output_shape(&self, cx: &ShapeCx<'_>) -> Result<Shape, NnError> {
        self.check_wrapped(cx)?;
        let who = format!("{} fwd ({})", cx.who, self.fwd.type_name());
        let inner = ShapeCx {
            who: &who,
            input: cx.input,
            prev: cx.prev,
            from: cx.from,
        };
        match self.fwd.output_shape(&inner)? {
            Shape::Seq { c, len } => Ok(Shape::Seq {
                c: if self.mode == BidirectionalMode::Concat { 2 * c } else { c },
                len,
            }),
            other => Err(cx.err(format!("the wrapped layer outputs {other}, not a sequence"))),
        }
    }

    fn infer_n_in(&mut self, input: Shape) {
        self.fwd.infer_n_in(input);
    }

    fn build<T: Scalar>(&self, shapes: LayerShapes) -> Result<Box<dyn Layer<T>>, NnError> {
        // Only the input is read: a wrapper around this one (LastTimeStep) passes its own output.
        let Shape::Seq { c: c_in, len } = shapes.input else {
            return Err(NnError::InvalidConfig(
                "Bidirectional needs a recurrent input".into(),
            ));
        };
        let h = self.fwd.n_out().unwrap_or(0);
        let inner = LayerShapes::new(shapes.input, Shape::Seq { c: h, len });
        let fwd = self.fwd.build::<T>(inner)?;
        let bwd = self.fwd.build::<T>(inner)?;
        if let Some(s) = fwd.param_specs().iter().find(|s| prefixed(s.name, true).is_none()) {
            return Err(NnError::InvalidConfig(format!(
                "Bidirectional cannot name the {} parameter {:?} of its wrapped layer",
                self.fwd.type_name(),
                s.name
            )));
        }
        Ok(Box::new(BidirectionalLayer {
            n_copy: fwd.num_params(),
            fwd,
            bwd,
            mode: self.mode,
            c_in,
            h,
            xr: Vec::new(),
            mr: Vec::new(),
            out_f: Vec::new(),
            out_br: Vec::new(),
            out_b: Vec::new(),
            d_f: Vec::new(),
            d_br: Vec::new(),
            gx_br: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverses_each_line() {
        let x = [1, 2, 3, 4, 5, 6];
        let mut out = [0; 6];
        reverse_steps(&x, 3, &mut out);
        assert_eq!(out, [3, 2, 1, 6, 5, 4]);
    }
}
