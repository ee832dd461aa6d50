//! Flushing subnormal floats to zero on the current thread, for the duration of a guard.
//!
//! Arithmetic on subnormal floats (below `f32::MIN_POSITIVE`, about 1.2e-38) takes a microcode
//! assist on x86 — on the order of a hundred cycles per operation instead of one. Training
//! produces them steadily: Adam's moment estimates of parameters whose gradient has become zero
//! (dead ReLU units, memorised examples) decay geometrically through the subnormal range. In
//! the benchmark MLP a quarter of the updater state was subnormal after ~1000 steps and a step
//! took 5–8 times longer (docs/BENCHMARKS.md). XLA and most deep-learning runtimes run with
//! flush-to-zero for this reason.
//!
//! [`flush_denormals`] sets FTZ (results that would be subnormal become ±0) and DAZ (subnormal
//! inputs read as ±0) in this thread's MXCSR and restores the previous value when the guard is
//! dropped, so a JNI entry point can flush for the duration of one engine call and hand the JVM
//! its thread back unchanged. Results differ from strict IEEE arithmetic only where a value is
//! subnormal. On targets other than x86_64 the guard does nothing.

use std::marker::PhantomData;

/// Restores the thread's floating-point control word when dropped (see [`flush_denormals`]).
/// Not `Send`: it belongs to the thread whose control word it changed.
#[must_use = "denormals are flushed only while the guard lives"]
pub struct DenormalsFlushed {
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    previous: u32,
    _not_send: PhantomData<*const ()>,
}

#[cfg(target_arch = "x86_64")]
mod csr {
    /// MXCSR bits: flush-to-zero (15) and denormals-are-zero (6).
    pub const FTZ_DAZ: u32 = (1 << 15) | (1 << 6);

    pub fn get() -> u32 {
        let mut v: u32 = 0;
        // SAFETY: stores this thread's MXCSR into a local.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack, preserves_flags));
        }
        v
    }

    pub fn set(v: u32) {
        // SAFETY: loads a value that was read from MXCSR with only the FTZ/DAZ bits changed
        // (both valid on every SSE2 CPU), affecting this thread's floating-point mode only.
        unsafe {
            std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack, preserves_flags));
        }
    }
}

/// Flushes subnormal results and inputs to zero on this thread until the returned guard is
/// dropped (which restores the previous mode; guards may nest).
pub fn flush_denormals() -> DenormalsFlushed {
    #[cfg(target_arch = "x86_64")]
    {
        let previous = csr::get();
        csr::set(previous | csr::FTZ_DAZ);
        DenormalsFlushed {
            previous,
            _not_send: PhantomData,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    DenormalsFlushed {
        previous: 0,
        _not_send: PhantomData,
    }
}

/// Puts this thread's FTZ/DAZ mode to `flushed` (both bits set, or both cleared) until the guard
/// is dropped, which restores the previous MXCSR. Helper threads run each piece of a parallel job
/// in the mode of the thread that posted it: they are long-lived and were started under whatever
/// mode their creator had (threads inherit it), so without this a piece could compute subnormals
/// slowly, or give other bits than the same piece on the caller.
pub(crate) fn match_denormal_mode(flushed: bool) -> DenormalsFlushed {
    #[cfg(target_arch = "x86_64")]
    {
        let previous = csr::get();
        let wanted = if flushed {
            previous | csr::FTZ_DAZ
        } else {
            previous & !csr::FTZ_DAZ
        };
        if wanted != previous {
            csr::set(wanted);
        }
        DenormalsFlushed {
            previous,
            _not_send: PhantomData,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = flushed;
        DenormalsFlushed {
            previous: 0,
            _not_send: PhantomData,
        }
    }
}

/// Whether subnormals are flushed on this thread now.
pub fn denormals_flushed() -> bool {
    #[cfg(target_arch = "x86_64")]
    return csr::get() & csr::FTZ_DAZ == csr::FTZ_DAZ;
    #[cfg(not(target_arch = "x86_64"))]
    false
}

impl Drop for DenormalsFlushed {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        csr::set(self.previous);
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use std::hint::black_box;

    #[test]
    fn guard_flushes_then_restores() {
        let tiny = black_box(2e-38f32); // normal; half of it is subnormal
        let sub = black_box(1e-40f32);
        assert!(!denormals_flushed());
        assert!((tiny * black_box(0.5)).is_subnormal());
        {
            let _outer = flush_denormals();
            assert!(denormals_flushed());
            assert_eq!(tiny * black_box(0.5), 0.0); // FTZ
            assert_eq!(sub + black_box(0.0f32), 0.0); // DAZ
            {
                let _inner = flush_denormals();
                assert!(denormals_flushed());
            }
            assert!(
                denormals_flushed(),
                "the inner guard restores the outer mode"
            );
            assert_eq!(black_box(1e-300f64) * black_box(1e-10), 0.0); // f64 too
        }
        assert!(!denormals_flushed());
        assert!((tiny * black_box(0.5)).is_subnormal());
        assert_eq!(sub + black_box(0.0f32), sub);
    }
}
