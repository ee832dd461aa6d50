//! Native memory: how many bytes the engine holds now and at most, and the budget every large
//! allocation is checked against before it is made.
//!
//! The JNI library installs [`CountingAllocator`] as its global allocator, so `in_use`/`peak` count
//! every native byte (networks, buffers, relay, codec). Every allocation whose size comes from
//! outside — parameters, gradients, updater state, activations and layer workspaces of a
//! minibatch, decode buffers, relay frames and snapshots — goes through [`check`] /
//! [`try_filled`] / [`try_grow`] / [`try_capacity`] first: sizes are computed with checked
//! arithmetic, a request that would take the process past the budget is refused with a
//! [`MemoryError`] naming what it was for, the bytes needed and the budget, and the reservation
//! itself is fallible. Nothing here aborts.
//!
//! The budget starts at the machine's physical memory (`/proc/meminfo`), or `FERRODL_NATIVE_MEMORY`
//! (bytes) when set; [`set_budget`] changes it (Java: `NativeInfo.setNativeMemoryBudget`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

static IN_USE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
/// 0: not set yet (the default is computed on first use).
static BUDGET: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting bytes in use and their peak.
pub struct CountingAllocator;

fn added(bytes: u64) {
    let now = IN_USE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn removed(bytes: u64) {
    IN_USE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` with the same layout; the counters are atomics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            added(layout.size() as u64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            added(layout.size() as u64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        removed(layout.size() as u64);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            removed(layout.size() as u64);
            added(new_size as u64);
        }
        p
    }
}

/// A refused allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryError {
    /// What the memory was for ("parameters, gradients and updater state of ...").
    pub what: String,
    /// Bytes requested; `None` when the size itself overflows 64 bits.
    pub bytes: Option<u64>,
    /// The budget and the bytes in use when it was refused.
    pub budget: u64,
    pub in_use: u64,
}

/// `12345678` -> `12,345,678`.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bytes {
            Some(b) => write!(
                f,
                "{} needs {} bytes of native memory, but the native memory budget is {} bytes \
                 with {} in use; raise it (NativeInfo.setNativeMemoryBudget, the \
                 FERRODL_NATIVE_MEMORY environment variable, or on Spark \
                 spark.ferrodl.nativeMemoryBudget or spark.executor.memoryOverhead) or make the \
                 network or minibatch smaller",
                self.what,
                grouped(b),
                grouped(self.budget),
                grouped(self.in_use)
            ),
            None => write!(
                f,
                "{} needs more than 2^64 bytes of native memory (the size overflows); the native \
                 memory budget is {} bytes",
                self.what,
                grouped(self.budget)
            ),
        }
    }
}

impl std::error::Error for MemoryError {}

impl MemoryError {
    /// A refusal of `bytes` (None: the size overflows 64 bits) for `what`, with the budget and the
    /// bytes in use now.
    pub fn refused(what: impl Into<String>, bytes: Option<u64>) -> MemoryError {
        MemoryError {
            what: what.into(),
            bytes,
            budget: budget(),
            in_use: in_use(),
        }
    }
}

/// Bytes the engine holds now (0 unless the process installed [`CountingAllocator`]).
pub fn in_use() -> u64 {
    IN_USE.load(Ordering::Relaxed)
}

/// The most bytes held at once since the process started.
pub fn peak() -> u64 {
    PEAK.load(Ordering::Relaxed)
}

fn default_budget() -> u64 {
    static DEFAULT: OnceLock<u64> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        if let Some(b) = std::env::var("FERRODL_NATIVE_MEMORY")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&b| b > 0)
        {
            return b;
        }
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<u64>().ok())
            })
            .map_or(u64::MAX, |kb| kb.saturating_mul(1024))
    })
}

/// The budget in force, in bytes.
pub fn budget() -> u64 {
    match BUDGET.load(Ordering::Relaxed) {
        0 => default_budget(),
        b => b,
    }
}

/// Sets the budget; 0 restores the default.
pub fn set_budget(bytes: u64) {
    BUDGET.store(bytes, Ordering::Relaxed);
}

/// `count` values of `size` bytes, with overflow checked.
pub fn bytes_of(count: usize, size: usize) -> Option<u64> {
    (count as u64).checked_mul(size as u64)
}

/// Refuses a request for `bytes` more (None: the size overflowed) that would take the process past
/// the budget.
pub fn check(what: impl FnOnce() -> String, bytes: Option<u64>) -> Result<(), MemoryError> {
    let (b, in_use) = (budget(), in_use());
    match bytes {
        Some(n) if in_use.saturating_add(n) <= b => Ok(()),
        _ => Err(MemoryError {
            what: what(),
            bytes,
            budget: b,
            in_use,
        }),
    }
}

/// An empty vector with room for `n` values, checked against the budget and reserved fallibly
/// (for buffers filled by pushing, such as decoded arrays).
pub fn try_with_capacity<T>(
    n: usize,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>, MemoryError> {
    let mut v = Vec::new();
    try_capacity(&mut v, n, what)?;
    Ok(v)
}

/// Makes room for at least `n` values in `v` (its length unchanged), checking the additional
/// bytes against the budget and reserving them fallibly.
pub fn try_capacity<T>(
    v: &mut Vec<T>,
    n: usize,
    what: impl FnOnce() -> String,
) -> Result<(), MemoryError> {
    if v.capacity() >= n {
        return Ok(());
    }
    let bytes = bytes_of(n - v.capacity(), std::mem::size_of::<T>());
    let mut what = Some(what);
    check(|| (what.take().expect("called once"))(), bytes)?;
    v.try_reserve_exact(n - v.len())
        .map_err(|_| MemoryError::refused(what.take().map_or_else(String::new, |w| w()), bytes))
}

/// A vector of `n` default values, checked against the budget and reserved fallibly.
pub fn try_filled<T: Clone>(
    n: usize,
    value: T,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>, MemoryError> {
    let mut v = Vec::new();
    try_grow(&mut v, n, value, what)?;
    Ok(v)
}

/// Grows `v` to at least `n` values (filled with `value`), checking the additional bytes against
/// the budget and reserving them fallibly; never shrinks.
pub fn try_grow<T: Clone>(
    v: &mut Vec<T>,
    n: usize,
    value: T,
    what: impl FnOnce() -> String,
) -> Result<(), MemoryError> {
    if v.len() >= n {
        return Ok(());
    }
    try_capacity(v, n, what)?;
    let extra = n - v.len();
    v.extend(std::iter::repeat_n(value, extra));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked_and_refusals_say_what_and_how_much() {
        let e = check(|| "the test buffer".into(), Some(u64::MAX)).unwrap_err();
        assert!(e.to_string().starts_with("the test buffer needs 18,446,744,073,709,551,615 bytes of native memory, but the native memory budget is"), "{e}");
        assert_eq!(bytes_of(usize::MAX, 8), None);
        let e = check(|| "an overflowing buffer".into(), None).unwrap_err();
        assert!(e.to_string().contains("needs more than 2^64 bytes"), "{e}");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(12), "12");
        // A request the budget allows goes through and really grows the vector.
        let v: Vec<f32> = try_filled(1000, 0.5, || unreachable!()).unwrap();
        assert_eq!(v.len(), 1000);
        let v: Vec<u8> = try_with_capacity(4096, || unreachable!()).unwrap();
        assert!(v.is_empty() && v.capacity() >= 4096);
    }

    /// A size past the budget is refused before anything is reserved (2^40 f32 would abort the
    /// process if it were attempted); the vector is left as it was.
    #[test]
    fn requests_past_the_budget_leave_the_vector_untouched() {
        let mut v = vec![1u32; 3];
        let e = try_grow(&mut v, 1 << 40, 0, || "a huge buffer".into()).unwrap_err();
        assert_eq!(e.bytes, Some(4 * ((1u64 << 40) - 3)));
        assert!(
            e.to_string()
                .starts_with("a huge buffer needs 4,398,046,511,092 bytes"),
            "{e}"
        );
        assert_eq!(v, [1, 1, 1]);
        let e =
            try_with_capacity::<u64>(usize::MAX, || "an overflowing buffer".into()).unwrap_err();
        assert_eq!(e.bytes, None);
    }
}
