//! The subnormal-state pathology: a network that has memorised its few training batches gets
//! vanishing gradients, Adam's `m`/`v` decay geometrically into subnormal floats, and x86
//! arithmetic on subnormals takes microcode assists (~100 cycles each), so steps slow down
//! several times. Measured through the real `fit` on 8 cycled batches of 64, early steps vs
//! late steps, without and with flush-to-zero/denormals-are-zero set on this thread (the
//! effect an explicit flush in the updater would have; the engine must not change MXCSR on a
//! JVM thread, see docs/BENCHMARKS.md).

use crate::mlp::{batches, new_network};
use std::time::Instant;

pub struct Report {
    pub steps: usize,
    /// examples/s over the first and the last `window` steps: plain, then with FTZ/DAZ
    pub plain: (f64, f64),
    pub ftz: (f64, f64),
    /// fraction of the updater state that is subnormal at the end
    pub plain_subnormal: f64,
    pub ftz_subnormal: f64,
}

#[cfg(target_arch = "x86_64")]
pub fn set_ftz(on: bool) -> u32 {
    #[allow(deprecated)] // _mm_getcsr/_mm_setcsr: the only stable way to reach MXCSR
    // SAFETY: changes only this thread's floating-point control (FTZ bit 15, DAZ bit 6).
    unsafe {
        use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
        let old = _mm_getcsr();
        _mm_setcsr(if on { old | 0x8040 } else { old & !0x8040 });
        old
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn set_ftz(_on: bool) -> u32 {
    0
}

fn one(ftz: bool, steps: usize, window: usize) -> ((f64, f64), f64) {
    const BATCH: usize = 64;
    let data = batches(BATCH, 8, 11);
    let mut net = new_network();
    let old = set_ftz(ftz);
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
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(deprecated)]
        // SAFETY: restores this thread's previous MXCSR.
        unsafe {
            std::arch::x86_64::_mm_setcsr(old)
        };
    }
    let _ = old;
    let st = net.updater_state();
    let sub = st.iter().filter(|v| v.is_subnormal()).count() as f64 / st.len().max(1) as f64;
    let eps = |t: f64| (window * BATCH) as f64 / t;
    ((eps(early), eps(late)), sub)
}

pub fn run(steps: usize, window: usize) -> Report {
    let (plain, plain_subnormal) = one(false, steps, window);
    let (ftz, ftz_subnormal) = one(true, steps, window);
    Report {
        steps,
        plain,
        ftz,
        plain_subnormal,
        ftz_subnormal,
    }
}

impl Report {
    pub fn to_json(&self) -> String {
        format!(
            "{{\"steps\":{},\"plain_early\":{},\"plain_late\":{},\"ftz_early\":{},\"ftz_late\":{},\"plain_subnormal\":{},\"ftz_subnormal\":{}}}",
            self.steps,
            self.plain.0,
            self.plain.1,
            self.ftz.0,
            self.ftz.1,
            self.plain_subnormal,
            self.ftz_subnormal
        )
    }
}
