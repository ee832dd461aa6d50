//! Where the MLP training step spends its time.
//!
//! The step of `MultiLayerNetwork::fit` for the benchmark MLP is re-assembled here with a clock
//! around each phase: the GEMMs and row helpers are the engine's own (`ferrodl_tensor`); the
//! elementwise parts of ferrodl-nn and ferrodl-optim (ReLU/softmax, MCXENT score and delta,
//! Adam fused with `params -= update`, branch-free ReLU backward) are mirrored from their code
//! (as of 2026-11-23), because their internals are not public and change. The same step through the real
//! `fit` is timed alongside (interleaved), so the sum of the phases can be checked against it:
//! a gap means the engine does work the mirror does not.
//!
//! A prototype of a change to ferrodl-nn/ferrodl-optim is timed on the same state (see
//! `docs/BENCHMARKS.md`): the fused Adam pass split over the GEMM threads with
//! `ferrodl_tensor::parallel_for_each`, alone and as a whole step.

use crate::mlp::{random_batches, Trainer, N_IN, N_OUT};
use ferrodl_tensor::{add_row_vector, column_sums, first_non_finite, gemm, softmax_rows, Op, Rng};
use std::time::Instant;

pub const PHASES: [&str; 10] = [
    "input checks (NaN/inf scan)",
    "forward GEMMs",
    "forward bias + activation",
    "softmax + score (MCXENT)",
    "loss delta",
    "backward activation",
    "backward GEMMs dW = xᵀ·dz",
    "backward GEMMs dX = dz·Wᵀ",
    "bias gradients (column sums)",
    "Adam fused with params -= update",
];

pub struct Profile {
    pub batch: usize,
    pub threads: usize,
    /// seconds per step of each phase
    pub phases: Vec<f64>,
    /// seconds per step of `MultiLayerNetwork::fit`, same batch and data
    pub fit: f64,
    /// prototype: the fused pass split over `parallel_for_each` blocks
    pub fused_adam_nt: f64,
    /// the whole proposed step (see `Step::proposed`), seconds per step
    pub proposed_step: f64,
}

impl Profile {
    pub fn total(&self) -> f64 {
        self.phases.iter().sum()
    }

    pub fn to_json(&self) -> String {
        let phases: Vec<String> = PHASES
            .iter()
            .zip(&self.phases)
            .map(|(n, t)| format!("[\"{n}\",{t}]"))
            .collect();
        format!(
            "{{\"batch\":{},\"threads\":{},\"phases\":[{}],\"fit\":{},\"fused_adam_nt\":{},\"proposed_step\":{}}}",
            self.batch,
            self.threads,
            phases.join(","),
            self.fit,
            self.fused_adam_nt,
            self.proposed_step
        )
    }

    pub fn table(&self) -> String {
        let total = self.total();
        let mut s = format!(
            "batch {} threads {}: phases sum {:.1} µs/step, fit {:.1} µs/step\n",
            self.batch,
            self.threads,
            total * 1e6,
            self.fit * 1e6
        );
        for (n, t) in PHASES.iter().zip(&self.phases) {
            s += &format!(
                "  {n:<32} {:>8.1} µs {:>5.1} %\n",
                t * 1e6,
                100.0 * t / total
            );
        }
        s += &format!(
            "  prototype fused Adam+apply over {} threads: {:.1} µs (now {:.1} µs)\n",
            self.threads,
            self.fused_adam_nt * 1e6,
            self.phases[9] * 1e6
        );
        s += &format!(
            "  proposed step (fused Adam over parallel_for_each): {:.1} µs\n",
            self.proposed_step * 1e6
        );
        s
    }
}

const SIZES: [usize; 4] = [N_IN, 500, 100, N_OUT];
const LR: f64 = 1e-3;
const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPSILON: f64 = 1e-8;
/// Lower clip of probabilities inside `ln` (ferrodl-nn's LOG_CLIP_MIN).
const LOG_CLIP_MIN: f64 = 1e-10;

/// ferrodl-optim's Adam fused with `params -= update` (mirror of `Adam::apply_and_subtract`).
fn adam_apply_fused(p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], iteration: u64) {
    let t = iteration.saturating_add(1).min(i32::MAX as u64) as i32;
    let alpha = LR * (1.0 - BETA2.powi(t)).sqrt() / (1.0 - BETA1.powi(t));
    let (b1, b2, eps, a) = (BETA1 as f32, BETA2 as f32, EPSILON as f32, alpha as f32);
    let (one_b1, one_b2) = (1.0 - b1, 1.0 - b2);
    for (((pi, &gi), mi), vi) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        *mi = b1 * *mi + one_b1 * gi;
        *vi = b2 * *vi + one_b2 * gi * gi;
        *pi -= a * *mi / (vi.sqrt() + eps);
    }
}

struct Step {
    batch: usize,
    /// the proposed step: the fused Adam pass run over `parallel_for_each` (everything else as
    /// the engine does it)
    proposed: bool,
    params: Vec<f32>,
    grads: Vec<f32>,
    /// parameter blocks (W1, b1, W2, b2, W3, b3), each with its own Adam state like the engine's
    blocks: Vec<std::ops::Range<usize>>,
    m: Vec<f32>,
    v: Vec<f32>,
    acts: Vec<Vec<f32>>,
    delta: Vec<f32>,
    delta_next: Vec<f32>,
    /// the prototypes' copies (same starting state)
    proto_params: Vec<f32>,
    proto_grads: Vec<f32>,
    proto_m: Vec<f32>,
    proto_v: Vec<f32>,
    iteration: u64,
}

impl Step {
    fn new(batch: usize, proposed: bool) -> Self {
        let mut blocks = Vec::new();
        let mut off = 0;
        for l in 0..3 {
            let (ni, no) = (SIZES[l], SIZES[l + 1]);
            blocks.push(off..off + ni * no);
            blocks.push(off + ni * no..off + ni * no + no);
            off += ni * no + no;
        }
        let mut params = vec![0.0f32; off];
        let mut rng = Rng::new(42);
        for l in 0..3 {
            let std = (2.0 / SIZES[l] as f64).sqrt();
            rng.fill_normal(&mut params[blocks[2 * l].clone()], std);
        }
        Step {
            batch,
            proposed,
            grads: vec![0.0; off],
            m: vec![0.0; off],
            v: vec![0.0; off],
            proto_m: vec![0.0; off],
            proto_v: vec![0.0; off],
            proto_params: params.clone(),
            proto_grads: vec![0.0; off],
            params,
            blocks,
            acts: (1..4).map(|l| vec![0.0; batch * SIZES[l]]).collect(),
            delta: vec![0.0; batch * N_IN],
            delta_next: vec![0.0; batch * N_IN],
            iteration: 0,
        }
    }

    /// One step; `t[i]` accumulates the seconds of phase i.
    fn run(&mut self, x: &[f32], y: &[f32], t: &mut [f64]) {
        let rows = self.batch;
        let mut clock = Instant::now();
        let mut lap = |i: usize, clock: &mut Instant| {
            let now = Instant::now();
            t[i] += (now - *clock).as_secs_f64();
            *clock = now;
        };
        assert!(first_non_finite(x).is_none() && first_non_finite(y).is_none());
        lap(0, &mut clock);

        // forward: z = x·W, then bias + activation in one pass (softmax: add_row_vector then
        // softmax_rows), as ferrodl-nn's dense layers do
        for l in 0..3 {
            let (ni, no) = (SIZES[l], SIZES[l + 1]);
            let (w, b) = (self.blocks[2 * l].clone(), self.blocks[2 * l + 1].clone());
            let (before, rest) = self.acts.split_at_mut(l);
            let input: &[f32] = if l == 0 { x } else { &before[l - 1] };
            let out = &mut rest[0];
            gemm(
                Op::N,
                Op::N,
                rows,
                no,
                ni,
                1.0,
                input,
                &self.params[w],
                0.0,
                out,
            );
            lap(1, &mut clock);
            let bias = &self.params[b];
            if l < 2 {
                for row in out.chunks_exact_mut(no) {
                    for (v, &bi) in row.iter_mut().zip(bias) {
                        *v = (*v + bi).max(0.0);
                    }
                }
                lap(2, &mut clock);
            } else {
                add_row_vector(out, no, bias);
                softmax_rows(out, no);
                lap(3, &mut clock);
            }
        }
        // score: mean over examples of -Σ y ln(clip(p)), in f64
        let mut total = 0.0f64;
        for (o, yv) in self.acts[2].iter().zip(y) {
            let (o, yv) = (*o as f64, *yv as f64);
            total += -yv * o.clamp(LOG_CLIP_MIN, 1.0).ln();
        }
        std::hint::black_box(total / rows as f64);
        lap(3, &mut clock);
        // fused softmax + cross-entropy delta: dz = scale·(a·Σy − y)
        let scale = 1.0 / rows as f32;
        for ((arow, yrow), drow) in self.acts[2]
            .chunks_exact(N_OUT)
            .zip(y.chunks_exact(N_OUT))
            .zip(self.delta.chunks_exact_mut(N_OUT))
        {
            let ysum: f32 = yrow.iter().sum();
            for ((&a, &yv), d) in arow.iter().zip(yrow).zip(drow.iter_mut()) {
                *d = scale * (a * ysum - yv);
            }
        }
        lap(4, &mut clock);

        // backward
        for l in (0..3).rev() {
            let (ni, no) = (SIZES[l], SIZES[l + 1]);
            let (w, b) = (self.blocks[2 * l].clone(), self.blocks[2 * l + 1].clone());
            let input: &[f32] = if l == 0 { x } else { &self.acts[l - 1] };
            let dz = &mut self.delta[..rows * no];
            if l < 2 {
                for (d, &a) in dz.iter_mut().zip(&self.acts[l]) {
                    *d = if a > 0.0 { *d } else { 0.0 };
                }
                lap(5, &mut clock);
            }
            gemm(
                Op::T,
                Op::N,
                ni,
                no,
                rows,
                1.0,
                input,
                dz,
                0.0,
                &mut self.grads[w.clone()],
            );
            lap(6, &mut clock);
            column_sums(dz, no, 0.0, &mut self.grads[b]);
            lap(8, &mut clock);
            if l > 0 {
                gemm(
                    Op::N,
                    Op::T,
                    rows,
                    ni,
                    no,
                    1.0,
                    dz,
                    &self.params[w],
                    0.0,
                    &mut self.delta_next[..rows * ni],
                );
                lap(7, &mut clock);
            }
            std::mem::swap(&mut self.delta, &mut self.delta_next);
        }
        if self.proposed {
            let it = self.iteration;
            let c = ferrodl_tensor::chunk_len(self.params.len(), 16 * 1024);
            let items: Vec<_> = self
                .params
                .chunks_mut(c)
                .zip(self.grads.chunks(c))
                .zip(self.m.chunks_mut(c))
                .zip(self.v.chunks_mut(c))
                .collect();
            ferrodl_tensor::parallel_for_each(items, |(((p, g), m), v)| {
                adam_apply_fused(p, g, m, v, it)
            });
            lap(9, &mut clock);
            self.iteration += 1;
            return;
        }
        // keep the raw gradient for the prototype (not timed)
        self.proto_grads.copy_from_slice(&self.grads);
        clock = Instant::now();
        // the engine's fit: the updater and the subtraction in one pass, block by block
        for r in &self.blocks {
            adam_apply_fused(
                &mut self.params[r.clone()],
                &self.grads[r.clone()],
                &mut self.m[r.clone()],
                &mut self.v[r.clone()],
                self.iteration,
            );
        }
        lap(9, &mut clock);
        self.iteration += 1;
    }

    /// Prototype: the fused Adam pass over `parallel_for_each` blocks.
    fn fused_adam_parallel(&mut self) {
        let it = self.iteration;
        let n = self.proto_params.len();
        let c = ferrodl_tensor::chunk_len(n, 16 * 1024);
        let items: Vec<_> = self
            .proto_params
            .chunks_mut(c)
            .zip(self.proto_grads.chunks(c))
            .zip(self.proto_m.chunks_mut(c))
            .zip(self.proto_v.chunks_mut(c))
            .collect();
        ferrodl_tensor::parallel_for_each(items, |(((p, g), m), v)| {
            adam_apply_fused(p, g, m, v, it)
        });
    }
}

/// Profiles `steps` steps at `batch` (after warm-up), interleaving the decomposed step, `fit`,
/// and the prototypes in blocks of 10 steps.
pub fn run(batch: usize, steps: usize) -> Profile {
    let threads = ferrodl_tensor::num_threads();
    let data = random_batches(batch, 7);
    let mut step = Step::new(batch, false);
    let mut proposed = Step::new(batch, true);
    let mut trainer = Trainer::new(batch);
    let mut t = vec![0.0; PHASES.len()];
    let mut warm = vec![0.0; PHASES.len()];
    for (x, y) in data.iter().take(8) {
        step.run(x, y, &mut warm); // warm-up
        proposed.run(x, y, &mut warm);
    }
    let (mut fit, mut fn_, mut prop) = (0.0, 0.0, 0.0);
    let block = 10;
    let mut done = 0;
    while done < steps {
        for i in 0..block {
            let (x, y) = &data[(done + i) % data.len()];
            step.run(x, y, &mut t);
        }
        let c = Instant::now();
        for _ in 0..block {
            trainer.step();
        }
        fit += c.elapsed().as_secs_f64();
        let c = Instant::now();
        for i in 0..block {
            let (x, y) = &data[(done + i) % data.len()];
            proposed.run(x, y, &mut warm);
        }
        prop += c.elapsed().as_secs_f64();
        let c = Instant::now();
        for _ in 0..block {
            step.fused_adam_parallel();
        }
        fn_ += c.elapsed().as_secs_f64();
        done += block;
    }
    let n = done as f64;
    Profile {
        batch,
        threads,
        phases: t.iter().map(|v| v / n).collect(),
        fit: fit / n,
        fused_adam_nt: fn_ / n,
        proposed_step: prop / n,
    }
}
