//! Run-time detection of the Intel AMX tile unit (AMX-TILE + AMX-BF16) for the f32 GEMM.
//!
//! Three things must hold before a thread may execute a tile instruction:
//! 1. the CPU has it: CPUID leaf 7 reports AMX-TILE (EDX bit 24) and AMX-BF16 (EDX bit 22);
//!    the bf16 packing also uses AVX-512F/BW, which every AMX CPU has, but we check anyway;
//! 2. the OS saves the tile state: XCR0 has XTILECFG (bit 17) and XTILEDATA (bit 18) enabled;
//! 3. this process was granted the 8 KiB tile-data state: on Linux, tile data is off by default
//!    and must be requested with `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`. The
//!    permission is process-wide and covers threads started later. The kernel refuses it when a
//!    thread of the process has an alternate signal stack too small for the larger signal frame
//!    (a JVM thread, for instance) — then we fall back.
//!
//! Finally a one-tile self-test (`tdpbf16ps` of ones) must give the expected value. The whole
//! check runs once per process ([`amx_support`]) and its outcome, with the reason when AMX is not
//! used, is reported by [`crate::active_gemm_kernel`].
//!
//! No dependency is needed: CPUID is in `core::arch`, and XGETBV, the system call and the tile
//! instructions are issued with stable `asm!`.

use std::sync::OnceLock;

/// Outcome of the AMX check: `Ok(())` when tile instructions are usable on every thread of this
/// process, otherwise the reason they are not.
pub fn amx_support() -> Result<(), &'static str> {
    static SUPPORT: OnceLock<Result<(), &'static str>> = OnceLock::new();
    *SUPPORT.get_or_init(detect)
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn detect() -> Result<(), &'static str> {
    Err("AMX is only used on x86_64 Linux")
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn detect() -> Result<(), &'static str> {
    use std::arch::x86_64::__cpuid_count;
    let max_leaf = __cpuid_count(0, 0).eax;
    if max_leaf < 7 {
        return Err("CPUID has no leaf 7 (no AMX)");
    }
    let leaf7 = __cpuid_count(7, 0);
    let amx_bf16 = leaf7.edx & (1 << 22) != 0;
    let amx_tile = leaf7.edx & (1 << 24) != 0;
    if !amx_tile || !amx_bf16 {
        return Err("CPU lacks AMX-TILE/AMX-BF16 (CPUID.7.0:EDX bits 24/22)");
    }
    if !(std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw"))
    {
        return Err("CPU lacks AVX-512F/BW (used to pack the bf16 operands)");
    }
    let osxsave = __cpuid_count(1, 0).ecx & (1 << 27) != 0;
    if !osxsave {
        return Err("OS has not enabled XSAVE (CPUID.1:ECX.OSXSAVE = 0)");
    }
    let xcr0 = xgetbv0();
    if xcr0 & (3 << 17) != 3 << 17 {
        return Err("OS does not save AMX tile state (XCR0 bits 17/18 clear)");
    }
    // ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18.
    let r = arch_prctl(0x1023, 18);
    if r != 0 {
        return Err(match -r {
            22 => {
                "kernel refused AMX tile permission (arch_prctl: EINVAL, kernel older than 5.16?)"
            }
            28 => {
                "kernel refused AMX tile permission (arch_prctl: ENOSPC: a thread's \
                   sigaltstack is too small for the AMX signal frame)"
            }
            1 => "kernel refused AMX tile permission (arch_prctl: EPERM)",
            _ => "kernel refused AMX tile permission (arch_prctl failed)",
        });
    }
    if !crate::amx::self_test() {
        return Err("AMX self-test gave a wrong result");
    }
    Ok(())
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn xgetbv0() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: XGETBV with ECX = 0 is valid once CPUID reported OSXSAVE (checked by the caller);
    // it only reads XCR0.
    unsafe {
        std::arch::asm!("xgetbv", in("ecx") 0u32, out("eax") lo, out("edx") hi,
            options(nomem, nostack, preserves_flags));
    }
    (hi as u64) << 32 | lo as u64
}

/// Raw `arch_prctl(code, arg)` (system call 158 on x86_64 Linux); returns 0 or `-errno`.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn arch_prctl(code: u64, arg: u64) -> i64 {
    let ret: i64;
    // SAFETY: ARCH_REQ_XCOMP_PERM only changes this process's permitted xstate components; the
    // syscall instruction clobbers rcx and r11, declared below.
    unsafe {
        std::arch::asm!("syscall",
            inlateout("rax") 158i64 => ret,
            in("rdi") code,
            in("rsi") arg,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack));
    }
    ret
}
