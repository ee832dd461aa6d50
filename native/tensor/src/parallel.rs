//! Thread-count control and the multi-threaded GEMM driver.
//!
//! `matrixmultiply` is used single-threaded: its own `threading` feature reads
//! `MATMUL_NUM_THREADS` once, on the first product of the process, caps the count at 4 and
//! keeps one process-wide pool, so a count chosen later (by the JVM, per Spark task) could not
//! take effect. Instead, a product large enough to pay for it is cut into independent blocks of
//! `C` (rows, or columns when `C` is wider than tall), each block computed by one
//! single-threaded `matrixmultiply` call: the calling thread takes the first block and its
//! helper threads (`pool.rs`) the others. The inner dimension is never split, so every element of `C`
//! is summed in the same order whatever the thread count: results are bit-identical for 1, 2 or
//! more threads.
//!
//! [`set_num_threads`] takes effect on the next product; the default is the number of cores this
//! process may use (`std::thread::available_parallelism`).

use crate::Scalar;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// 0 means "never set": use [`default_num_threads`].
static NUM_THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Each thread that multiplies has its own helpers (`num_threads() - 1` of them), so
    /// concurrent callers (Spark tasks in one executor) never wait for each other's blocks.
    static POOL: RefCell<Option<crate::pool::Pool>> = const { RefCell::new(None) };
}

/// Runs `work(parts)` on this thread's pool sized for `threads`, where `work` gets a pool that
/// can run `parts` pieces; `None` when the pool is unavailable: inside a piece (nested parallel
/// calls run sequentially, so helpers never start helpers of their own) or when no helper
/// thread could be started.
fn with_pool<R>(threads: usize, work: impl FnOnce(&crate::pool::Pool) -> R) -> Option<R> {
    if crate::pool::in_helper() {
        return None;
    }
    POOL.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?; // busy: called from inside piece 0
        let helpers = threads - 1;
        let stale = match slot.as_ref() {
            Some(p) => p.helpers() != helpers,
            None => true,
        };
        if stale {
            // The old helpers (if any) finish and exit when their pool is dropped.
            *slot = None;
            *slot = crate::pool::Pool::new(helpers);
        }
        slot.as_ref().map(work)
    })
}

/// Length of the blocks that cut `len` elements into at most [`num_threads`] blocks of at least
/// `min_len` elements (for [`parallel_for_each`] over `chunks_mut(chunk_len(..))`).
pub fn chunk_len(len: usize, min_len: usize) -> usize {
    let parts = num_threads().min(len / min_len.max(1)).max(1);
    len.div_ceil(parts).max(1)
}

/// Calls `f` on every item, spread over up to [`num_threads`] threads (the calling thread and
/// the same helpers the GEMM uses), and returns when all calls have finished. Threads claim
/// items one at a time, in order, so more items than threads balance the load (a thread that
/// other processes hold back delays one item, not a fixed share); which thread runs an item
/// must not matter. With one item, or one thread, or when called from inside another parallel
/// section, everything runs on the calling thread.
///
/// Items are typically disjoint mutable blocks of the same vectors, e.g. an optimizer step:
/// ```
/// let (mut p, g) = (vec![1.0f32; 100_000], vec![0.5f32; 100_000]);
/// let c = ferrodl_tensor::chunk_len(p.len(), 16_384);
/// let items: Vec<_> = p.chunks_mut(c).zip(g.chunks(c)).collect();
/// ferrodl_tensor::parallel_for_each(items, |(p, g)| {
///     p.iter_mut().zip(g).for_each(|(p, g)| *p -= 0.1 * g)
/// });
/// assert!(p.iter().all(|&v| v == 0.95));
/// ```
pub fn parallel_for_each<I: Send, F: Fn(I) + Sync>(items: Vec<I>, f: F) {
    let all = num_threads();
    if all.min(items.len()) <= 1 {
        items.into_iter().for_each(f);
        return;
    }
    let n = items.len();
    let slots: Vec<std::sync::Mutex<Option<I>>> = items
        .into_iter()
        .map(|i| std::sync::Mutex::new(Some(i)))
        .collect();
    let take = |i: usize| {
        slots[i]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .expect("each item is taken once")
    };
    let next = AtomicUsize::new(0);
    let ran = with_pool(all, |pool| {
        let parts = n.min(pool.helpers() + 1);
        pool.run(parts, &|_part| loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            f(take(i));
        })
    });
    if ran.is_none() {
        (0..n).for_each(|i| f(take(i)));
    }
}

/// Runs `f(0)`, ..., `f(pieces - 1)` on up to `threads` threads (this thread and its helpers)
/// and returns when all have finished. Pieces are claimed one at a time, so more pieces than
/// threads balance the load; a piece's result must not depend on which thread runs it. Inside
/// another parallel section, or without helpers, everything runs on this thread.
pub(crate) fn run_parts<F: Fn(usize) + Sync>(threads: usize, pieces: usize, f: &F) {
    let workers = threads.min(pieces);
    if workers <= 1 {
        (0..pieces).for_each(f);
        return;
    }
    let next = AtomicUsize::new(0);
    let work = |_worker: usize| loop {
        let p = next.fetch_add(1, Ordering::Relaxed);
        if p >= pieces {
            break;
        }
        f(p);
    };
    if with_pool(threads, |pool| pool.run(workers, &work)).is_none() {
        (0..pieces).for_each(f);
    }
}

/// Multiply-adds (`m·n·k`) below which a block is not worth a thread (see
/// `docs/BENCHMARKS.md`, "GEMM threading threshold").
pub const MIN_MULADDS_PER_THREAD: usize = 1 << 17;

/// Smallest extent of a block along the split dimension (the widest `matrixmultiply` kernel is
/// 16 wide; narrower blocks would run its edge paths).
const MIN_BLOCK: usize = 16;

/// Number of cores this process may use, the thread count when [`set_num_threads`] was never
/// called (or was called with 0).
pub fn default_num_threads() -> usize {
    static DEFAULT: OnceLock<usize> = OnceLock::new();
    *DEFAULT.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Sets how many threads the engine's numeric kernels (GEMM) use, process-wide, from the next
/// call on: a thread that multiplies uses itself and up to `n - 1` helper threads of its own.
/// `0` restores the default ([`default_num_threads`]).
pub fn set_num_threads(n: usize) {
    NUM_THREADS.store(n, Ordering::Relaxed);
}

/// The thread count in force (at least 1).
pub fn num_threads() -> usize {
    match NUM_THREADS.load(Ordering::Relaxed) {
        0 => default_num_threads(),
        n => n,
    }
}

/// How many blocks an `m × n` (inner `k`) product is cut into with `threads` threads.
pub(crate) fn plan_parts(m: usize, n: usize, k: usize, threads: usize) -> usize {
    if threads <= 1 {
        return 1;
    }
    let work = m.saturating_mul(n).saturating_mul(k);
    let by_work = work / MIN_MULADDS_PER_THREAD;
    let by_extent = m.max(n) / MIN_BLOCK;
    threads.min(by_work).min(by_extent).max(1)
}

/// Start of block `i` of `parts` over `0..len`, on a multiple of `MIN_BLOCK` (except `len`).
fn block_start(len: usize, parts: usize, i: usize) -> usize {
    if i >= parts {
        return len;
    }
    (len * i / parts / MIN_BLOCK * MIN_BLOCK).min(len)
}

/// Raw operands of one product, shareable across the threads that compute disjoint blocks of C.
#[derive(Clone, Copy)]
struct Operands<T> {
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: *const T,
    rsa: isize,
    csa: isize,
    b: *const T,
    rsb: isize,
    csb: isize,
    beta: T,
    c: *mut T,
    rsc: isize,
    /// f32 only: blocks run on `unpacked_b` (B read in place) instead of `matrixmultiply`.
    unpacked: bool,
}

// SAFETY: the pointers come from slices borrowed for the whole parallel section (which joins
// before returning); threads only read A and B and write disjoint blocks of C.
unsafe impl<T: Send> Send for Operands<T> {}
unsafe impl<T: Sync> Sync for Operands<T> {}

impl<T: Scalar> Operands<T> {
    /// Computes rows `r0..r1` (split_rows) or columns `r0..r1` of C.
    ///
    /// # Safety
    /// The operands must describe valid memory, and no other thread may write the same block.
    unsafe fn run_block(&self, split_rows: bool, r0: usize, r1: usize) {
        if r1 <= r0 {
            return;
        }
        let o = self;
        if o.unpacked {
            // SAFETY: `unpacked` is only set for f32 operands (see `gemm_threaded`), so the casts
            // restate the type; the block's extent is as for the packed path below.
            let (a, b, c, m, n) = if split_rows {
                (
                    o.a.offset(r0 as isize * o.rsa),
                    o.b,
                    o.c.offset(r0 as isize * o.rsc),
                    r1 - r0,
                    o.n,
                )
            } else {
                (
                    o.a,
                    o.b.offset(r0 as isize * o.csb),
                    o.c.add(r0),
                    o.m,
                    r1 - r0,
                )
            };
            crate::unpacked_b::gemm(
                m,
                o.k,
                n,
                a as *const f32,
                o.rsa,
                o.csa,
                b as *const f32,
                o.rsb,
                o.beta.f64() as f32,
                c as *mut f32,
                o.rsc,
            );
            return;
        }
        if split_rows {
            T::gemm_raw(
                r1 - r0,
                o.k,
                o.n,
                o.alpha,
                o.a.offset(r0 as isize * o.rsa),
                o.rsa,
                o.csa,
                o.b,
                o.rsb,
                o.csb,
                o.beta,
                o.c.offset(r0 as isize * o.rsc),
                o.rsc,
                1,
            )
        } else {
            T::gemm_raw(
                o.m,
                o.k,
                r1 - r0,
                o.alpha,
                o.a,
                o.rsa,
                o.csa,
                o.b.offset(r0 as isize * o.csb),
                o.rsb,
                o.csb,
                o.beta,
                o.c.add(r0),
                o.rsc,
                1,
            )
        }
    }
}

/// `C = alpha·A·B + beta·C` (row-major C of `m × n`, unit column stride) on up to `threads`
/// threads. Returns the number of blocks it was cut into. With `unpacked` (f32 operands for
/// which `unpacked_b::wanted` holds) the blocks are computed by `unpacked_b`, with the same bits.
///
/// # Safety
/// As [`Scalar::gemm_raw`]: the strides and dimensions must describe memory inside the operands,
/// `c` must not alias `a` or `b`, and `m, n, k > 0`; `unpacked` only for `T = f32` when
/// `unpacked_b::wanted(m, alpha, csb)`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm_threaded<T: Scalar>(
    m: usize,
    k: usize,
    n: usize,
    alpha: T,
    a: *const T,
    rsa: isize,
    csa: isize,
    b: *const T,
    rsb: isize,
    csb: isize,
    beta: T,
    c: *mut T,
    threads: usize,
    unpacked: bool,
) -> usize {
    let ops = Operands {
        m,
        n,
        k,
        alpha,
        a,
        rsa,
        csa,
        b,
        rsb,
        csb,
        beta,
        c,
        rsc: n as isize,
        unpacked,
    };
    let parts = plan_parts(m, n, k, threads);
    if parts <= 1 {
        ops.run_block(true, 0, m);
        return 1;
    }
    // Packed path: cut the longer side of C (each block then re-packs the smaller share of the
    // other operand) at multiples of the widest kernel. Unpacked path: its own plan.
    let (split_rows, granule) = if unpacked {
        crate::unpacked_b::plan(m, n, parts)
    } else {
        (m >= n, 0)
    };
    let len = if split_rows { m } else { n };
    let start = |i: usize| {
        if unpacked {
            crate::unpacked_b::block_start(len, parts, i, granule)
        } else {
            block_start(len, parts, i)
        }
    };
    let block = |i: usize| {
        // SAFETY: block i of C is written by part i only; see `Operands`.
        unsafe { ops.run_block(split_rows, start(i), start(i + 1)) }
    };
    match with_pool(threads, |pool| pool.run(parts, &block)) {
        Some(used) => used,
        None => {
            // No helpers here (nested call, or none could be started): every block on this
            // thread, in the same blocks, so the bits are the same.
            (0..parts).for_each(block);
            parts
        }
    }
}

/// Serialises the tests that change or depend on the process-wide thread count.
#[cfg(test)]
pub(crate) static SETTING_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_range_in_order() {
        for len in [16, 17, 100, 500, 784, 1000, 1025] {
            for parts in 1..=4 {
                let starts: Vec<usize> = (0..=parts).map(|i| block_start(len, parts, i)).collect();
                assert_eq!(starts[0], 0);
                assert_eq!(starts[parts], len);
                assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{len} {parts}");
                assert!(starts[..parts].iter().all(|s| s % MIN_BLOCK == 0));
            }
        }
    }

    #[test]
    fn parallel_for_each_visits_every_item_once_and_nests_sequentially() {
        for n in [0usize, 1, 2, 3, 7, 64] {
            let mut v = vec![0u32; n * 10];
            let items: Vec<(usize, &mut [u32])> = v.chunks_mut(10).enumerate().collect();
            parallel_for_each(items, |(i, block)| {
                // a nested parallel section (and a GEMM) inside an item runs sequentially
                let inner: Vec<&mut u32> = block.iter_mut().collect();
                parallel_for_each(inner, |x| *x += i as u32 + 1);
                let mut c = [0.0f32; 64 * 64];
                crate::gemm(
                    crate::Op::N,
                    crate::Op::N,
                    64,
                    64,
                    64,
                    1.0,
                    &[1.0; 64 * 64],
                    &[1.0; 64 * 64],
                    0.0,
                    &mut c,
                );
                assert!(c.iter().all(|&x| x == 64.0));
            });
            for (j, x) in v.iter().enumerate() {
                assert_eq!(*x, (j / 10) as u32 + 1);
            }
        }
    }

    /// Items are claimed one at a time: while one thread is held up in item 0, the other runs
    /// all the rest (with items dealt round-robin, item 2 would wait behind item 0).
    #[test]
    fn parallel_for_each_items_are_claimed_not_dealt() {
        let _g = SETTING_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        set_num_threads(2);
        let done = AtomicUsize::new(0);
        let waited = AtomicUsize::new(0);
        parallel_for_each((0..4).collect(), |i: usize| {
            if i == 0 {
                let start = std::time::Instant::now();
                while done.load(Ordering::Acquire) < 3 && start.elapsed().as_secs() < 10 {
                    std::thread::yield_now();
                }
                waited.store(done.load(Ordering::Acquire), Ordering::Release);
            } else {
                done.fetch_add(1, Ordering::AcqRel);
            }
        });
        set_num_threads(0);
        assert_eq!(
            waited.load(Ordering::Acquire),
            3,
            "items 1-3 ran while item 0 waited"
        );
    }

    #[test]
    fn chunk_len_respects_the_minimum() {
        let _g = SETTING_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let t = num_threads();
        assert_eq!(chunk_len(100, 1000), 100);
        assert_eq!(chunk_len(0, 10), 1);
        assert_eq!(chunk_len(10_000, 1), 10_000usize.div_ceil(t));
        assert!(chunk_len(443_610, 16_384) >= 16_384);
    }

    #[test]
    fn small_products_stay_on_one_thread() {
        assert_eq!(plan_parts(64, 500, 784, 1), 1);
        assert_eq!(plan_parts(8, 8, 8, 2), 1);
        assert_eq!(plan_parts(64, 10, 100, 2), 1);
        assert_eq!(plan_parts(48, 48, 48, 2), 1);
        assert_eq!(plan_parts(64, 64, 64, 2), 2);
        assert_eq!(plan_parts(64, 500, 784, 2), 2);
        assert_eq!(plan_parts(1024, 1024, 1024, 4), 4);
        // Too narrow to cut in 16-wide blocks.
        assert_eq!(plan_parts(16, 16, 1 << 20, 2), 1);
    }
}
