//! Where the MLP training step spends its time.
//!
//! The step of `MultiLayerNetwork::fit` for the benchmark MLP is re-assembled here with a clock
//! around each phase: the GEMMs and row helpers are the engine's own (`ferrodl_tensor`); the
//! elementwise parts of ferrodl-nn (ReLU/softmax, MCXENT score and delta, branch-free ReLU
//! backward) are mirrored from its code (as of 2026-11-23), because its internals are not public
//! and change. The updater is the engine's own: `ferrodl_optim::Optimizer::step_and_apply` with
//! one Adam block per parameter array, as `fit` runs it (AVX2 at run time, pieces on the GEMM
//! helpers). Until 2026-11-28 this phase was a one-thread mirror of the 2026-11-23 loop compiled
//! for the bench's SSE2 baseline, so it reported 320-583 µs for a pass the engine does in a third
//! of that. The same step through the real `fit` is timed alongside (interleaved), so the sum
//! of the phases can be checked against it: a gap means the engine does work the mirror does not.
//!
//! Each GEMM is also timed on its own and reported with its shape and the kernel the engine
//! picks for it (`ferrodl_tensor::f32_gemm_path`): AMX, FMA reading B in place, or FMA.
//!
//! The updater pass is also timed alone in a loop (helpers kept awake), at all threads and at
//! one, on a copy of the same state: the difference to the in-step phase is what waking the
//! helpers and a cold cache cost inside the step.

use crate::mlp::{random_batches, Trainer, N_IN, N_OUT};
use ferrodl_optim::{Adam, AnyUpdater, Optimizer};
use ferrodl_tensor::{add_row_vector, column_sums, first_non_finite, gemm, softmax_rows, Op, Rng};

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
    "Adam fused with params -= update (ferrodl-optim)",
];

pub struct Profile {
    pub batch: usize,
    /// each GEMM of the step: what it computes with its shape, the kernel it takes
    /// (`ferrodl_tensor::f32_gemm_path`) and seconds per step
    pub products: Vec<(String, &'static str, f64)>,
    pub threads: usize,
    /// seconds per step of each phase
    pub phases: Vec<f64>,
    /// seconds per step of `MultiLayerNetwork::fit`, same batch and data
    pub fit: f64,
    /// the engine's updater pass alone in a loop, all threads, seconds per pass
    pub adam_alone: f64,
    /// the same on one thread
    pub adam_alone_1t: f64,
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
        let products: Vec<String> = self
            .products
            .iter()
            .map(|(n, k, t)| format!("[\"{n}\",\"{k}\",{t}]"))
            .collect();
        format!(
            "{{\"batch\":{},\"threads\":{},\"phases\":[{}],\"products\":[{}],\"fit\":{},\"adam_alone\":{},\"adam_alone_1t\":{}}}",
            self.batch,
            self.threads,
            phases.join(","),
            products.join(","),
            self.fit,
            self.adam_alone,
            self.adam_alone_1t
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
        s += "  the GEMMs one by one (m×n×k, kernel):\n";
        for (n, k, t) in &self.products {
            s += &format!(
                "    {n:<34} {k:<16} {:>8.1} µs {:>5.1} %\n",
                t * 1e6,
                100.0 * t / total
            );
        }
        s += &format!(
            "  the updater pass alone in a loop: {:.1} µs on {} threads, {:.1} µs on 1 (in the step: {:.1} µs)\n",
            self.adam_alone * 1e6,
            self.threads,
            self.adam_alone_1t * 1e6,
            self.phases[9] * 1e6
        );
        s
    }
}

const SIZES: [usize; 4] = [N_IN, 500, 100, N_OUT];
/// Lower clip of probabilities inside `ln` (ferrodl-nn's LOG_CLIP_MIN).
const LOG_CLIP_MIN: f64 = 1e-10;

struct Step {
    batch: usize,
    params: Vec<f32>,
    grads: Vec<f32>,
    /// parameter blocks (W1, b1, W2, b2, W3, b3), each its own Adam block as in the engine
    blocks: Vec<std::ops::Range<usize>>,
    opt: Optimizer<f32>,
    acts: Vec<Vec<f32>>,
    delta: Vec<f32>,
    delta_next: Vec<f32>,
    /// copies for the updater pass timed alone (same starting state)
    alone_params: Vec<f32>,
    alone_grads: Vec<f32>,
    alone_scratch: Vec<f32>,
    alone_opt: Optimizer<f32>,
    alone_iteration: u64,
    iteration: u64,
    /// seconds on the clock the phases are read from (see [`run`])
    clock: fn() -> f64,
}

/// The benchmark network's updater: Adam, learning rate 1e-3, on each parameter array.
fn adam_blocks(blocks: &[std::ops::Range<usize>]) -> Optimizer<f32> {
    let adam = Adam {
        learning_rate: 1e-3,
        ..Adam::default()
    };
    Optimizer::new(
        blocks
            .iter()
            .map(|r| (r.clone(), AnyUpdater::Adam(adam.clone()))),
    )
}

impl Step {
    fn new(batch: usize, clock: fn() -> f64) -> Self {
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
            grads: vec![0.0; off],
            opt: adam_blocks(&blocks),
            alone_opt: adam_blocks(&blocks),
            alone_params: params.clone(),
            alone_grads: vec![0.0; off],
            alone_scratch: vec![0.0; off],
            alone_iteration: 0,
            params,
            blocks,
            acts: (1..4).map(|l| vec![0.0; batch * SIZES[l]]).collect(),
            delta: vec![0.0; batch * N_IN],
            delta_next: vec![0.0; batch * N_IN],
            iteration: 0,
            clock,
        }
    }

    /// One step; `t[i]` accumulates the seconds of phase i.
    fn run(&mut self, x: &[f32], y: &[f32], t: &mut [f64], prod: &mut [f64]) {
        let rows = self.batch;
        let now = self.clock;
        let mut clock = now();
        let mut lap = |i: usize, clock: &mut f64| {
            let t_now = now();
            let dt = t_now - *clock;
            t[i] += dt;
            *clock = t_now;
            dt
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
            prod[l] += lap(1, &mut clock);
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
            prod[3 + l] += lap(6, &mut clock);
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
                prod[5 + l] += lap(7, &mut clock);
            }
            std::mem::swap(&mut self.delta, &mut self.delta_next);
        }
        // keep the raw gradient for the pass timed alone (not timed)
        self.alone_grads.copy_from_slice(&self.grads);
        clock = now();
        // the engine's fit: the updater and the subtraction in one pass over all blocks
        self.opt
            .step_and_apply(&mut self.params, &mut self.grads, self.iteration, 0);
        lap(9, &mut clock);
        self.iteration += 1;
    }

    /// The engine's updater pass alone, on the copy, with the last step's gradient (the
    /// gradient is overwritten by the update, so it is copied first; the copy is not timed).
    fn adam_alone(&mut self) -> f64 {
        self.alone_scratch.copy_from_slice(&self.alone_grads);
        let c = (self.clock)();
        self.alone_opt.step_and_apply(
            &mut self.alone_params,
            &mut self.alone_scratch,
            self.alone_iteration,
            0,
        );
        self.alone_iteration += 1;
        (self.clock)() - c
    }
}

/// Profiles `steps` steps at `batch` (after warm-up), interleaving the decomposed step, `fit`,
/// and the updater pass alone in blocks of 10 steps. `clock` gives seconds: wall time
/// ([`wall_clock`]) or the calling thread's on-CPU time, which on a loaded machine measures the
/// work of a one-thread run (`FERRODL_THREADS=1`) without the time other processes held the core.
pub fn run(batch: usize, steps: usize, clock: fn() -> f64) -> Profile {
    let threads = ferrodl_tensor::num_threads();
    let data = random_batches(batch, 7);
    let mut step = Step::new(batch, clock);
    let mut trainer = Trainer::new(batch);
    let mut t = vec![0.0; PHASES.len()];
    let mut warm = vec![0.0; PHASES.len()];
    let mut prod = vec![0.0; 8];
    let mut warm_prod = vec![0.0; 8];
    for (x, y) in data.iter().take(8) {
        step.run(x, y, &mut warm, &mut warm_prod); // warm-up
    }
    let (mut fit, mut alone, mut alone_1t) = (0.0, 0.0, 0.0);
    let block = 10;
    let mut done = 0;
    while done < steps {
        for i in 0..block {
            let (x, y) = &data[(done + i) % data.len()];
            step.run(x, y, &mut t, &mut prod);
        }
        let c = clock();
        for _ in 0..block {
            trainer.step();
        }
        fit += clock() - c;
        for _ in 0..block {
            alone += step.adam_alone();
        }
        ferrodl_tensor::set_num_threads(1);
        for _ in 0..block {
            alone_1t += step.adam_alone();
        }
        ferrodl_tensor::set_num_threads(threads);
        done += block;
    }
    let n = done as f64;
    Profile {
        batch,
        products: products(batch)
            .into_iter()
            .zip(prod)
            .map(|((name, path), s)| (name, path, s / n))
            .collect(),
        threads,
        phases: t.iter().map(|v| v / n).collect(),
        fit: fit / n,
        adam_alone: alone / n,
        adam_alone_1t: alone_1t / n,
    }
}

/// The step's GEMMs in the order `Step::run` accumulates them (forward per layer, dW per layer,
/// dX of layers 2 and 3), named with m×n×k and the kernel each takes now.
fn products(b: usize) -> Vec<(String, &'static str)> {
    let s = SIZES;
    let mut v = Vec::new();
    for l in 0..3 {
        let name = ["x·W1", "a1·W2", "a2·W3"][l];
        v.push((
            format!("fwd {name} {b}×{}×{}", s[l + 1], s[l]),
            Op::N,
            b,
            s[l + 1],
            s[l],
        ));
    }
    for l in 0..3 {
        let name = ["xᵀ·dz1", "a1ᵀ·dz2", "a2ᵀ·dz3"][l];
        v.push((
            format!("dW {name} {}×{}×{b}", s[l], s[l + 1]),
            Op::N,
            s[l],
            s[l + 1],
            b,
        ));
    }
    for l in 1..3 {
        let name = ["", "dz2·W2ᵀ", "dz3·W3ᵀ"][l];
        v.push((
            format!("dX {name} {b}×{}×{}", s[l], s[l + 1]),
            Op::T,
            b,
            s[l],
            s[l + 1],
        ));
    }
    v.into_iter()
        .map(|(name, op_b, m, n, k)| (name, ferrodl_tensor::f32_gemm_path(op_b, m, n, k, false)))
        .collect()
}

/// Seconds since the first call (wall time).
pub fn wall_clock() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}
