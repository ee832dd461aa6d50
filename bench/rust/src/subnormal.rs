//! Regression check for the subnormal-state slowdown: a network that has memorised its few
//! training batches gets vanishing gradients and Adam's `m`/`v` decay geometrically into
//! subnormal floats, on which every x86 operation takes a microcode assist (~100 cycles). Before
//! ferrodl-nn flushed subnormals during its calls (`ferrodl_tensor::flush_denormals`), late steps
//! here were 6× slower than early ones (docs/BENCHMARKS.md). Measured through the real `fit` on
//! 8 cycled batches of 64: examples/s over the first and the last `window` steps, and the share of
//! the updater state that is subnormal at the end (0 when the engine flushes).

use crate::mlp::{batches, new_network};
use std::time::Instant;

pub struct Report {
    pub steps: usize,
    pub early: f64,
    pub late: f64,
    pub subnormal: f64,
}

pub fn run(steps: usize, window: usize) -> Report {
    const BATCH: usize = 64;
    let window = window.min(steps / 2).max(1);
    let data = batches(BATCH, 8, 11);
    let mut net = new_network();
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
    let st = net.updater_state();
    let subnormal = st.iter().filter(|v| v.is_subnormal()).count() as f64 / st.len().max(1) as f64;
    let eps = |t: f64| (window * BATCH) as f64 / t;
    Report {
        steps,
        early: eps(early),
        late: eps(late),
        subnormal,
    }
}

impl Report {
    pub fn to_json(&self) -> String {
        format!(
            "{{\"steps\":{},\"early\":{},\"late\":{},\"subnormal\":{}}}",
            self.steps, self.early, self.late, self.subnormal
        )
    }
}
