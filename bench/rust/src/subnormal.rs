//! The subnormal-state pathology: a network that has memorised its few training batches gets
//! vanishing gradients, Adam's `m`/`v` decay geometrically into subnormal floats, and x86
//! arithmetic on subnormals takes microcode assists (~100 cycles each), so steps slow down
//! several times. Measured through the real `fit` on 8 cycled batches of 64, early steps vs
//! late steps, without and with `ferrodl_tensor::flush_denormals` (flush-to-zero and
//! denormals-are-zero on this thread for the duration of the run).

use crate::mlp::{batches, new_network};
use std::time::Instant;

/// ferrodl-optim's Adam inner loop (mirror of `Adam::apply`), optionally flushing the new `m`
/// and `v` to zero when they fall below the smallest normal float (the proposed fix).
fn adam(grad: &mut [f32], m: &mut [f32], v: &mut [f32], iteration: u64, flush: bool) {
    let t = iteration.saturating_add(1).min(i32::MAX as u64) as i32;
    let alpha = 1e-3 * (1.0 - 0.999f64.powi(t)).sqrt() / (1.0 - 0.9f64.powi(t));
    let (b1, b2, eps, a) = (0.9f32, 0.999f32, 1e-8f32, alpha as f32);
    let (one_b1, one_b2) = (1.0 - b1, 1.0 - b2);
    if flush {
        for ((g, mi), vi) in grad.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()) {
            let mn = b1 * *mi + one_b1 * *g;
            let vn = b2 * *vi + one_b2 * *g * *g;
            let mn = if mn.abs() < f32::MIN_POSITIVE {
                0.0
            } else {
                mn
            };
            let vn = if vn < f32::MIN_POSITIVE { 0.0 } else { vn };
            *mi = mn;
            *vi = vn;
            *g = a * mn / (vn.sqrt() + eps);
        }
    } else {
        for ((g, mi), vi) in grad.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()) {
            *mi = b1 * *mi + one_b1 * *g;
            *vi = b2 * *vi + one_b2 * *g * *g;
            *g = a * *mi / (vi.sqrt() + eps);
        }
    }
}

/// Seconds per Adam step over the whole network in the state reached from the snapshot
/// `(grad, m, v)` after one untimed step with the same variant (so the flush variant is timed in
/// its steady state, where it has already zeroed what was subnormal); the state is restored
/// before each repetition (untimed); best of 15.
fn time_adam(snap: &(Vec<f32>, Vec<f32>, Vec<f32>), iteration: u64, flush: bool, ftz: bool) -> f64 {
    let (mut g, mut m, mut v) = snap.clone();
    let mut best = f64::INFINITY;
    for _ in 0..15 {
        g.copy_from_slice(&snap.0);
        m.copy_from_slice(&snap.1);
        v.copy_from_slice(&snap.2);
        let guard = ftz.then(ferrodl_tensor::flush_denormals);
        adam(&mut g, &mut m, &mut v, iteration, flush);
        g.copy_from_slice(&snap.0);
        let t = Instant::now();
        adam(&mut g, &mut m, &mut v, iteration + 1, flush);
        let dt = t.elapsed().as_secs_f64();
        drop(guard);
        std::hint::black_box(&g);
        best = best.min(dt);
    }
    best
}

pub struct Report {
    pub steps: usize,
    /// examples/s over the first and the last `window` steps: plain, then with FTZ/DAZ
    pub plain: (f64, f64),
    pub ftz: (f64, f64),
    /// fraction of the updater state that is subnormal at the end
    pub plain_subnormal: f64,
    pub ftz_subnormal: f64,
    /// seconds per Adam step on the subnormal-laden state at the end of the plain run:
    /// as is, with the flush, under FTZ/DAZ
    pub adam_plain: f64,
    pub adam_flush: f64,
    pub adam_ftz: f64,
    /// the same on a state without subnormals (the FTZ run's end), as is and with the flush
    pub adam_clean_plain: f64,
    pub adam_clean_flush: f64,
}

/// Trains `steps` steps; returns (early, late) examples/s, the subnormal share of the updater
/// state at the end, and a snapshot `(gradient, m, v)` of the last step as a flat Adam problem.
#[allow(clippy::type_complexity)]
fn one(
    ftz: bool,
    steps: usize,
    window: usize,
) -> ((f64, f64), f64, (Vec<f32>, Vec<f32>, Vec<f32>)) {
    const BATCH: usize = 64;
    let data = batches(BATCH, 8, 11);
    let mut net = new_network();
    let guard = ftz.then(ferrodl_tensor::flush_denormals);
    let (mut early, mut late) = (0.0, 0.0);
    for s in 0..steps {
        let (x, y) = &data[s % data.len()];
        let t = Instant::now();
        net.fit(x, y, BATCH, None).expect("fit");
        let dt = t.elapsed().as_secs_f64();
        if s < window {
            early += dt;
        } else if s >= steps - window {
            late += dt;
        }
    }
    let (x, y) = &data[steps % data.len()];
    net.compute_gradient_and_score(x, y, BATCH, None)
        .expect("gradient");
    drop(guard);
    let st = net.updater_state();
    let sub = st.iter().filter(|v| v.is_subnormal()).count() as f64 / st.len().max(1) as f64;
    // The engine keeps each parameter block's (W, b of each layer) state as m then v; gather
    // them per element, in parameter order.
    let n = net.num_params();
    let (mut m, mut v) = (Vec::with_capacity(n), Vec::with_capacity(n));
    if st.len() == 2 * n {
        let mut off = 0;
        for len in [784 * 500, 500, 500 * 100, 100, 100 * 10, 10] {
            m.extend_from_slice(&st[off..off + len]);
            v.extend_from_slice(&st[off + len..off + 2 * len]);
            off += 2 * len;
        }
    }
    if m.len() != n {
        // unexpected layout: fall back to the halves (same value distribution)
        let h = st.len() / 2;
        m = st[..h.min(n)].to_vec();
        v = st[h..h + m.len()].to_vec();
        m.resize(n, 0.0);
        v.resize(n, 0.0);
    }
    let g = net.gradient().to_vec();
    let eps = |t: f64| (window * BATCH) as f64 / t;
    ((eps(early), eps(late)), sub, (g, m, v))
}

pub fn run(steps: usize, window: usize) -> Report {
    let (plain, plain_subnormal, snap) = one(false, steps, window);
    let (ftz, ftz_subnormal, clean) = one(true, steps, window);
    let it = steps as u64;
    Report {
        steps,
        plain,
        ftz,
        plain_subnormal,
        ftz_subnormal,
        adam_plain: time_adam(&snap, it, false, false),
        adam_flush: time_adam(&snap, it, true, false),
        adam_ftz: time_adam(&snap, it, false, true),
        adam_clean_plain: time_adam(&clean, it, false, false),
        adam_clean_flush: time_adam(&clean, it, true, false),
    }
}

impl Report {
    pub fn to_json(&self) -> String {
        format!(
            "{{\"steps\":{},\"plain_early\":{},\"plain_late\":{},\"ftz_early\":{},\"ftz_late\":{},\"plain_subnormal\":{},\"ftz_subnormal\":{},\"adam_plain\":{},\"adam_flush\":{},\"adam_ftz\":{},\"adam_clean_plain\":{},\"adam_clean_flush\":{}}}",
            self.steps,
            self.plain.0,
            self.plain.1,
            self.ftz.0,
            self.ftz.1,
            self.plain_subnormal,
            self.ftz_subnormal,
            self.adam_plain,
            self.adam_flush,
            self.adam_ftz,
            self.adam_clean_plain,
            self.adam_clean_flush
        )
    }
}
