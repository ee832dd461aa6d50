//! Elementwise loops compiled for the widest vector unit of the CPU, chosen at run time.
//!
//! The engine is built for the x86-64 baseline (SSE2), so a plain loop such as Adam's update
//! vectorises 4 floats wide, and its square roots and divisions dominate the pass. [`vectorized`]
//! runs an [`Elementwise`] kernel inside a function compiled with AVX-512 (16 floats) or AVX2
//! (8 floats) enabled, when the CPU has them; everything the kernel's `run` inlines is compiled
//! for that width. `run` and what it calls must therefore be `#[inline(always)]` (a closure
//! would not do: LLVM declines to inline a large closure into the wider function, and it then
//! runs at baseline width).
//!
//! Results are bit-identical for every width: Rust never contracts `a * b + c` into a fused
//! multiply-add, and each lane of a vector add, multiply, divide, square root, minimum or maximum
//! is the IEEE operation on that element, rounded as the scalar instruction rounds it. (A loop
//! that *reduces* across elements is reordered by no compiler without fast-math flags, so it stays
//! sequential at any width.) `FERRODL_SIMD=baseline|avx2|avx512` (read once) picks the width,
//! e.g. to measure what the wider code gains; see [`vector_isa`] for the default.

use std::sync::OnceLock;

/// A vector width the elementwise kernels can be compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VectorIsa {
    /// The build's own target (SSE2 on x86-64; NEON on aarch64).
    Baseline,
    /// x86-64 with AVX2 and FMA (8 f32 lanes).
    Avx2,
    /// x86-64 with AVX-512F/VL (16 f32 lanes).
    Avx512,
}

impl VectorIsa {
    /// `baseline`, `avx2` or `avx512` (the names `FERRODL_SIMD` takes).
    pub fn name(self) -> &'static str {
        match self {
            VectorIsa::Baseline => "baseline",
            VectorIsa::Avx2 => "avx2",
            VectorIsa::Avx512 => "avx512",
        }
    }

    fn parse(s: &str) -> Option<VectorIsa> {
        match s.trim().to_ascii_lowercase().as_str() {
            "baseline" => Some(VectorIsa::Baseline),
            "avx2" => Some(VectorIsa::Avx2),
            "avx512" => Some(VectorIsa::Avx512),
            _ => None,
        }
    }
}

/// Every width this CPU can run, narrowest first (always starts with `Baseline`).
pub fn supported_vector_isas() -> Vec<VectorIsa> {
    let mut v = vec![VectorIsa::Baseline];
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            v.push(VectorIsa::Avx2);
        }
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            v.push(VectorIsa::Avx512);
        }
    }
    v
}

/// The width [`vectorized`] uses: AVX2 when the CPU has it, else the baseline; `FERRODL_SIMD`
/// may ask for another one the CPU supports (an unknown or unsupported value is ignored).
///
/// AVX-512 is not the default: the updaters' passes are bound by square roots, divisions and
/// memory, whose throughput per element is the same at 8 and 16 lanes on the CPUs measured
/// (Zen 4 splits a 512-bit operation in two; Intel's 512-bit divide and square root take twice the
/// 256-bit time), and 512-bit code may lower the clock of older Intel CPUs. Measured on the AMD
/// EPYC (Zen 4) development machine, Adam over 443,610 parameters on one thread: baseline 258 µs,
/// AVX2 130 µs, AVX-512 126 µs; AMSGrad 290 / 138 / 172 µs (`optimizer_step` example).
pub fn vector_isa() -> VectorIsa {
    static ISA: OnceLock<VectorIsa> = OnceLock::new();
    *ISA.get_or_init(|| {
        let supported = supported_vector_isas();
        let asked = std::env::var("FERRODL_SIMD")
            .ok()
            .and_then(|v| VectorIsa::parse(&v))
            .filter(|isa| supported.contains(isa));
        asked.unwrap_or(if supported.contains(&VectorIsa::Avx2) {
            VectorIsa::Avx2
        } else {
            VectorIsa::Baseline
        })
    })
}

/// An elementwise loop to be compiled for several vector widths (see the module documentation).
pub trait Elementwise {
    type Output;
    /// The loop. Implementations mark it `#[inline(always)]`, as everything it calls.
    fn run(self) -> Self::Output;
}

/// Runs `k` compiled for [`vector_isa`]'s width (see the module documentation).
#[inline]
pub fn vectorized<K: Elementwise>(k: K) -> K::Output {
    vectorized_with(vector_isa(), k)
}

/// [`vectorized`] with an explicit width; a width this CPU lacks runs the baseline code (tests
/// compare the widths with this).
#[inline]
pub fn vectorized_with<K: Elementwise>(isa: VectorIsa, f: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    {
        // The detection is cached by std; checking here keeps an unsupported request safe.
        match isa {
            VectorIsa::Avx512
                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl") =>
            {
                // SAFETY: the CPU has AVX-512F/VL (checked just above).
                return unsafe { x86::avx512(f) };
            }
            VectorIsa::Avx2
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma") =>
            {
                // SAFETY: the CPU has AVX2 and FMA (checked just above).
                return unsafe { x86::avx2(f) };
            }
            _ => {}
        }
    }
    let _ = isa;
    f.run()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Elementwise;

    /// # Safety
    /// The CPU must support AVX-512F and AVX-512VL.
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    pub(super) unsafe fn avx512<K: Elementwise>(k: K) -> K::Output {
        k.run()
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2<K: Elementwise>(k: K) -> K::Output {
        k.run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An elementwise kernel of the kind the updaters run (square root, division, maximum),
    /// inlined into each width: every width gives the same bits, on lengths that exercise the
    /// vector bodies and their scalar tails.
    struct Kernel<'a>(&'a mut [f32], &'a [f32]);

    impl Elementwise for Kernel<'_> {
        type Output = ();
        #[inline(always)]
        fn run(self) {
            for (a, &b) in self.0.iter_mut().zip(self.1) {
                *a = 0.9 * *a + 0.1 * b / ((b * b).sqrt() + 1e-8) - a.max(b * 0.5);
            }
        }
    }

    #[test]
    fn every_width_gives_the_same_bits() {
        let isas = supported_vector_isas();
        assert_eq!(isas[0], VectorIsa::Baseline);
        assert!(isas.contains(&vector_isa()));
        let mut rng = crate::Rng::new(11);
        for len in [0usize, 1, 7, 15, 16, 17, 33, 100, 1000, 4099] {
            let mut x0 = vec![0.0f32; len];
            let mut y = vec![0.0f32; len];
            rng.fill_uniform(&mut x0, -2.0, 2.0);
            rng.fill_uniform(&mut y, -3.0, 3.0);
            if len > 3 {
                y[3] = 0.0; // 0 / (0 + eps)
                x0[1] = f32::MIN_POSITIVE / 3.0; // subnormal input
            }
            let mut want = x0.clone();
            Kernel(&mut want, &y).run();
            for &isa in &[VectorIsa::Baseline, VectorIsa::Avx2, VectorIsa::Avx512] {
                let mut got = x0.clone();
                vectorized_with(isa, Kernel(&mut got, &y));
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{} differs at length {len}", isa.name());
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for isa in [VectorIsa::Baseline, VectorIsa::Avx2, VectorIsa::Avx512] {
            assert_eq!(VectorIsa::parse(isa.name()), Some(isa));
        }
        assert_eq!(VectorIsa::parse(" AVX2 "), Some(VectorIsa::Avx2));
        assert_eq!(VectorIsa::parse("sse"), None);
    }
}
