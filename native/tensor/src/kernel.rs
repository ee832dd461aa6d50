//! Choice of the f32 GEMM kernel: the FMA path (`matrixmultiply`) or the AMX bf16x6 path
//! (`amx.rs`), see `docs/GEMM.md`.
//!
//! The choice is process-wide: [`set_gemm_kernel`] at run time, or the environment variable
//! `FERRODL_GEMM=auto|fma|amx` (read once, on first use, when `set_gemm_kernel` was not called
//! before). `Auto` (the default) uses AMX when it is usable and the product is large enough to
//! gain from it ([`AMX_MIN_MN`], [`AMX_MIN_K`], [`AMX_MIN_MULADDS`]); `Amx` uses it for every f32 product when it is
//! usable; `Fma` never. Operands holding NaN or infinities are computed on the FMA path either
//! way (the bf16 split cannot reproduce IEEE infinities). When AMX is not usable the FMA path
//! runs, and [`active_gemm_kernel`] says why. f64 products always run on the FMA path.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// An f32 GEMM kernel (or the automatic choice between them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GemmKernel {
    /// AMX when it is usable and the product is large enough to gain from it (`m, n >=`
    /// [`AMX_MIN_MN`], `k >=` [`AMX_MIN_K`], `m·n·k >=` [`AMX_MIN_MULADDS`]), otherwise FMA.
    Auto,
    /// `matrixmultiply`'s AVX-512/AVX2 FMA kernels (fp32 multiply-adds).
    Fma,
    /// The AMX tile unit with the bf16x6 split (fp32-accurate), whenever usable.
    Amx,
}

impl GemmKernel {
    /// The name used by `FERRODL_GEMM` and in reports: `auto`, `fma` or `amx`.
    pub fn name(self) -> &'static str {
        match self {
            GemmKernel::Auto => "auto",
            GemmKernel::Fma => "fma",
            GemmKernel::Amx => "amx",
        }
    }

    /// Parses `auto`, `fma` or `amx` (case-insensitive, surrounding blanks ignored).
    pub fn parse(s: &str) -> Option<GemmKernel> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(GemmKernel::Auto),
            "fma" => Some(GemmKernel::Fma),
            "amx" => Some(GemmKernel::Amx),
            _ => None,
        }
    }

    fn code(self) -> u8 {
        match self {
            GemmKernel::Auto => 1,
            GemmKernel::Fma => 2,
            GemmKernel::Amx => 3,
        }
    }
}

impl fmt::Display for GemmKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `Auto` sends an f32 product to AMX when `m` and `n` are both at least this...
///
/// Packing costs `k·(m + n)` element splits against `m·n·k` multiply-adds, so a product with a
/// thin side (a batch of rows, say) spends more on packing than the faster kernel gains. In a
/// loop of warm products 128-row products already gained (128×512×512, 784×500×64); inside the
/// MLP's two-thread training step, where the operands arrive cold, they lost: with `m, n, k >= 128`
/// / `k >= 64` the step ran 8 % slower at batch 128 (x·W1 128×500×784 and xᵀ·dz1 784×500×128 on
/// AMX) and 4 % slower at batch 64 (xᵀ·dz1 784×500×64) than with 256 / 256, and batch 256 the
/// same (see `docs/GEMM.md`, "Dispatch threshold").
pub const AMX_MIN_MN: usize = 256;
/// ...and `k` at least this (each K block's partial sums are added to C, so a short K gains
/// less; the weight gradient of a minibatch has the batch as `k`), with the depth padded to
/// multiples of 32 per block at most 1/8 longer than `k` (which every `k >= 256` is).
pub const AMX_MIN_K: usize = 256;

/// ...and `m·n·k` at least this. With two threads a smaller AMX product loses to FMA even where
/// one thread gains: packing B is a parallel section of its own, so the product pays two
/// fork-joins and the split of a little packing work (quiet machine, 2 threads: 128³ 122 vs 221
/// GFLOP/s, 192³ 185 vs 256; 256³ = 2^24: 272 vs 263). The threshold does not depend on the
/// thread count, so the choice of kernel — and the bits — are the same for any count.
pub const AMX_MIN_MULADDS: usize = 1 << 24;

/// Inner-dimension block of the AMX kernel (a multiple of 32, the bf16 depth of one tile);
/// chosen from 256/512/768/1024, see `docs/GEMM.md`.
pub(crate) const AMX_KC: usize = 512;

/// Depth the AMX kernel computes for inner dimension `k`: each block of [`AMX_KC`] rounded up
/// to a multiple of 32.
fn padded_k(k: usize) -> usize {
    let kc = AMX_KC;
    (k / kc) * kc + (k % kc).div_ceil(32) * 32
}

/// 0: never set, read the environment.
static SETTING: AtomicU8 = AtomicU8::new(0);

/// The environment's choice (`FERRODL_GEMM`), read once: the kernel and, when the variable
/// holds something else than the three names, a note saying so.
fn from_env() -> &'static (GemmKernel, Option<String>) {
    static ENV: OnceLock<(GemmKernel, Option<String>)> = OnceLock::new();
    ENV.get_or_init(|| match std::env::var("FERRODL_GEMM") {
        Err(std::env::VarError::NotPresent) => (GemmKernel::Auto, None),
        Err(e) => (
            GemmKernel::Auto,
            Some(format!(
                "FERRODL_GEMM ignored ({e}); expected auto, fma or amx"
            )),
        ),
        Ok(v) => match GemmKernel::parse(&v) {
            Some(k) => (k, None),
            None => (
                GemmKernel::Auto,
                Some(format!(
                    "FERRODL_GEMM={v:?} ignored; expected auto, fma or amx"
                )),
            ),
        },
    })
}

/// Sets the f32 GEMM kernel process-wide, from the next product on (overrides `FERRODL_GEMM`).
pub fn set_gemm_kernel(kernel: GemmKernel) {
    SETTING.store(kernel.code(), Ordering::Relaxed);
}

/// The kernel setting in force: the last [`set_gemm_kernel`], else `FERRODL_GEMM`, else `Auto`.
pub fn gemm_kernel() -> GemmKernel {
    match SETTING.load(Ordering::Relaxed) {
        1 => GemmKernel::Auto,
        2 => GemmKernel::Fma,
        3 => GemmKernel::Amx,
        _ => from_env().0,
    }
}

/// What [`active_gemm_kernel`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GemmKernelInfo {
    /// The setting ([`gemm_kernel`]).
    pub requested: GemmKernel,
    /// The kernel large f32 products run on: `Fma` or `Amx` (never `Auto`).
    pub kernel: GemmKernel,
    /// Why, in words (the AMX detection's failure when it is not usable).
    pub reason: String,
}

impl fmt::Display for GemmKernelInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (requested {}: {})",
            self.kernel, self.requested, self.reason
        )
    }
}

/// Which kernel large f32 products use now, and why; e.g. for a benchmark to print.
pub fn active_gemm_kernel() -> GemmKernelInfo {
    let requested = gemm_kernel();
    let note = match (SETTING.load(Ordering::Relaxed), &from_env().1) {
        (0, Some(n)) => format!("; {n}"),
        _ => String::new(),
    };
    let (kernel, reason) = match (requested, crate::cpu::amx_support()) {
        (GemmKernel::Fma, _) => (GemmKernel::Fma, "FMA requested".to_string()),
        (GemmKernel::Auto, Ok(())) => (
            GemmKernel::Amx,
            format!(
                "AMX usable; bf16x6 for f32 products with m, n >= {AMX_MIN_MN}, \
                 k >= {AMX_MIN_K} (depth padding <= 1/8) and m·n·k >= 2^24, FMA below"
            ),
        ),
        (GemmKernel::Amx, Ok(())) => (
            GemmKernel::Amx,
            "AMX usable; bf16x6 for every f32 product".to_string(),
        ),
        (_, Err(why)) => (GemmKernel::Fma, format!("AMX not usable: {why}")),
    };
    GemmKernelInfo {
        requested,
        kernel,
        reason: reason + &note,
    }
}

/// Whether an f32 product of this shape goes to AMX under `kernel` (inputs not yet checked).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn wants_amx(kernel: GemmKernel, m: usize, n: usize, k: usize) -> bool {
    let size_ok = match kernel {
        GemmKernel::Fma => return false,
        GemmKernel::Amx => true,
        GemmKernel::Auto => {
            m >= AMX_MIN_MN
                && n >= AMX_MIN_MN
                && k >= AMX_MIN_K
                && 8 * padded_k(k) <= 9 * k
                && m.saturating_mul(n).saturating_mul(k) >= AMX_MIN_MULADDS
        }
    };
    size_ok && crate::cpu::amx_support().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_rule() {
        let usable = crate::cpu::amx_support().is_ok();
        // The MLP's products up to batch 128 stay on FMA under Auto (forward and weight gradient).
        assert!(!wants_amx(GemmKernel::Auto, 64, 500, 784));
        assert!(!wants_amx(GemmKernel::Auto, 784, 500, 64));
        assert!(!wants_amx(GemmKernel::Auto, 128, 500, 784));
        assert!(!wants_amx(GemmKernel::Auto, 784, 500, 128));
        assert!(!wants_amx(GemmKernel::Auto, 500, 100, 63));
        assert!(!wants_amx(GemmKernel::Auto, 255, 4096, 4096));
        assert!(!wants_amx(GemmKernel::Auto, 4096, 4096, 255));
        assert!(!wants_amx(GemmKernel::Auto, 192, 192, 192));
        // batch 256 and up, and square products from 256³ (= 2^24 multiply-adds)
        assert_eq!(wants_amx(GemmKernel::Auto, 256, 500, 784), usable);
        assert_eq!(wants_amx(GemmKernel::Auto, 784, 500, 256), usable);
        assert_eq!(wants_amx(GemmKernel::Auto, 256, 256, 256), usable);
        assert_eq!(wants_amx(GemmKernel::Auto, 1024, 1024, 1024), usable);
        // 256 deep or more is never padded by more than 1/8.
        assert_eq!(wants_amx(GemmKernel::Auto, 512, 500, 257), usable);
        assert_eq!(padded_k(1100), 512 + 512 + 96);
        assert_eq!(padded_k(64), 64);
        assert_eq!(wants_amx(GemmKernel::Amx, 1, 1, 1), usable);
        assert!(!wants_amx(GemmKernel::Fma, 4096, 4096, 4096));
    }
}
