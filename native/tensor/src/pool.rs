//! A small fork-join pool for the GEMM blocks: one owner thread posts a job cut in `parts`
//! pieces, runs piece 0 itself, and helpers claim pieces 1.. in parallel (the owner takes any
//! piece still unclaimed when it is done with its own).
//!
//! Why not a general-purpose pool: a training step issues GEMMs every few to few hundred
//! microseconds, and on the virtual machines this runs on, waking a sleeping thread (futex +
//! an idle vCPU's wake-up) costs 50–100 µs, which is as long as a whole medium-sized product.
//! So helpers poll for a while ([`SPIN`]) after each piece before they sleep. On an
//! oversubscribed machine a helper may not be running at all: pieces are claimed, not assigned,
//! so the owner then computes them itself instead of waiting. A pool is owned by one thread (see `parallel.rs`), which is
//! the only one posting jobs, so posting needs no lock.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long an idle helper keeps polling for the next job before it sleeps (see
/// `docs/BENCHMARKS.md`, "GEMM threading", for the measurement behind it). While polling it
/// yields its core every [`YIELD_EVERY`], so on an oversubscribed machine other runnable threads
/// (the owner, other processes) are not held back by it.
pub(crate) const SPIN: Duration = Duration::from_micros(100);
const YIELD_EVERY: Duration = Duration::from_micros(10);

/// `Shared::state` = `counter << 32 | parts << 16 | next`: the job counter, the job's number
/// of pieces, and the next unclaimed piece. Pieces are claimed by compare-and-swap, by helpers
/// and by the owner alike, so a helper that is not running (descheduled, asleep) delays nothing:
/// the owner takes its piece.
const PIECE_BITS: u32 = 16;
const PIECE_MASK: u64 = (1 << PIECE_BITS) - 1;
const MAX_PIECES: usize = PIECE_MASK as usize;

thread_local! {
    static IN_HELPER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `true` on a helper thread (nested parallel calls run sequentially there).
pub(crate) fn in_helper() -> bool {
    IN_HELPER.with(|h| h.get())
}

#[derive(Clone, Copy)]
struct Job {
    run: unsafe fn(*const (), usize),
    ctx: *const (),
    /// The posting thread's FTZ/DAZ mode, in which every piece runs (see `match_denormal_mode`).
    flushed: bool,
}

struct Shared {
    state: AtomicU64,
    /// Written by the owner before it publishes a new `state`; read by whoever claims a piece.
    job: UnsafeCell<Job>,
    /// Pieces 1.. not yet finished.
    remaining: AtomicUsize,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
    panicked: AtomicBool,
}

// SAFETY: `job` is written only by the owner, when no piece of the previous job is unclaimed
// or running (it waited for `remaining == 0`), and read only by a thread that has just claimed
// a piece of the job it belongs to (the claim's acquire pairs with the publishing release).
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

impl Shared {
    /// Claims and runs pieces of job `counter` until none is left (or a newer job is posted).
    fn work(&self, counter: u64) {
        let mut cur = self.state.load(Ordering::Acquire);
        loop {
            let (c, parts, next) = (
                cur >> 32,
                (cur >> PIECE_BITS) & PIECE_MASK,
                cur & PIECE_MASK,
            );
            if c != counter & 0xFFFF_FFFF || next >= parts {
                return;
            }
            match self.state.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // SAFETY: piece `next` of the current job is ours; see `Shared`.
                    let job = unsafe { *self.job.get() };
                    let _mode = crate::denormals::match_denormal_mode(job.flushed);
                    // SAFETY: `job.ctx` matches `job.run` (both set together by `Pool::run`).
                    let r = catch_unwind(AssertUnwindSafe(|| unsafe {
                        (job.run)(job.ctx, next as usize)
                    }));
                    if r.is_err() {
                        self.panicked.store(true, Ordering::Relaxed);
                    }
                    self.remaining.fetch_sub(1, Ordering::Release);
                    cur = self.state.load(Ordering::Acquire);
                }
                Err(now) => cur = now,
            }
        }
    }
}

pub(crate) struct Pool {
    shared: Arc<Shared>,
    helpers: usize,
}

unsafe fn trampoline<F: Fn(usize) + Sync>(ctx: *const (), part: usize) {
    // SAFETY: `ctx` is the `&F` passed to `Pool::run`, alive until every part has finished.
    unsafe { (*(ctx as *const F))(part) }
}

fn noop(_: *const (), _: usize) {}

impl Pool {
    /// Starts `helpers` helper threads; `None` if `helpers == 0` or a thread cannot be started.
    pub(crate) fn new(helpers: usize) -> Option<Pool> {
        if helpers == 0 || helpers >= MAX_PIECES {
            return None;
        }
        let shared = Arc::new(Shared {
            state: AtomicU64::new(0),
            job: UnsafeCell::new(Job {
                run: noop,
                ctx: std::ptr::null(),
                flushed: false,
            }),
            remaining: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
        });
        let pool = Pool {
            shared: shared.clone(),
            helpers,
        };
        for index in 1..=helpers {
            let s = shared.clone();
            std::thread::Builder::new()
                .name(format!("ferrodl-gemm-{index}"))
                .spawn(move || helper(&s))
                .ok()?; // on failure `pool` is dropped, which stops the helpers already started
        }
        Some(pool)
    }

    pub(crate) fn helpers(&self) -> usize {
        self.helpers
    }

    /// Runs `f(0)`, ..., `f(parts - 1)` (piece 0 on the calling thread, the others on whichever
    /// of the helpers and the caller claims them first) and returns when all have finished.
    /// `parts` is capped at `helpers + 1`; returns the count used. A panic in any piece is
    /// re-raised here, after every piece has finished.
    pub(crate) fn run<F: Fn(usize) + Sync>(&self, parts: usize, f: &F) -> usize {
        let parts = parts.min(self.helpers + 1);
        if parts <= 1 {
            f(0);
            return 1;
        }
        let s = &*self.shared;
        // SAFETY: every piece of the previous job has finished (we waited for it), so nobody
        // reads `job` now.
        unsafe {
            *s.job.get() = Job {
                run: trampoline::<F>,
                ctx: f as *const F as *const (),
                flushed: crate::denormals::denormals_flushed(),
            };
        }
        s.remaining.store(parts - 1, Ordering::Relaxed);
        let counter = ((s.state.load(Ordering::Relaxed) >> 32) + 1) & 0xFFFF_FFFF;
        s.state.store(
            (counter << 32) | ((parts as u64) << PIECE_BITS) | 1,
            Ordering::SeqCst,
        );
        if s.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = s.lock.lock().unwrap_or_else(|e| e.into_inner());
            s.wake.notify_all();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| f(0)));
        // Pieces no helper has claimed yet are run here.
        s.work(counter);
        // Wait for the pieces helpers are running (they borrow the caller's data, so even if
        // piece 0 panicked).
        let start = Instant::now();
        while s.remaining.load(Ordering::Acquire) != 0 {
            if start.elapsed() < YIELD_EVERY {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        if let Err(p) = mine {
            resume_unwind(p);
        }
        if s.panicked.swap(false, Ordering::Relaxed) {
            panic!("a GEMM helper thread panicked");
        }
        parts
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let s = &*self.shared;
        s.shutdown.store(true, Ordering::SeqCst);
        let _g = s.lock.lock().unwrap_or_else(|e| e.into_inner());
        s.wake.notify_all();
    }
}

/// Waits until the job counter differs from `seen` (or shutdown): polls for [`SPIN`], then
/// sleeps. Returns the new counter.
fn wait_for_job(s: &Shared, seen: u64) -> Option<u64> {
    let start = Instant::now();
    let mut last_yield = start;
    loop {
        for _ in 0..64 {
            let c = s.state.load(Ordering::Acquire) >> 32;
            if c != seen {
                return Some(c);
            }
            std::hint::spin_loop();
        }
        if s.shutdown.load(Ordering::Relaxed) {
            return None;
        }
        let now = Instant::now();
        if now - start >= SPIN {
            break;
        }
        if now - last_yield >= YIELD_EVERY {
            std::thread::yield_now();
            last_yield = now;
        }
    }
    let mut g = s.lock.lock().unwrap_or_else(|e| e.into_inner());
    s.sleepers.fetch_add(1, Ordering::SeqCst);
    let out = loop {
        // SeqCst pairs with the owner's store of `state` then load of `sleepers`: either the
        // owner sees this sleeper (and notifies under the lock), or this load sees the job.
        let c = s.state.load(Ordering::SeqCst) >> 32;
        if s.shutdown.load(Ordering::SeqCst) {
            break None;
        }
        if c != seen {
            break Some(c);
        }
        g = s.wake.wait(g).unwrap_or_else(|e| e.into_inner());
    };
    s.sleepers.fetch_sub(1, Ordering::SeqCst);
    out
}

fn helper(s: &Shared) {
    IN_HELPER.with(|h| h.set(true));
    let mut seen = 0;
    while let Some(c) = wait_for_job(s, seen) {
        seen = c;
        s.work(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn runs_every_part_once() {
        let pool = Pool::new(3).unwrap();
        for round in 0..200u64 {
            let hits: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
            let ids = Mutex::new(Vec::new());
            let parts = 1 + (round as usize % 4);
            let used = pool.run(parts, &|i| {
                hits[i].fetch_add(round + 1, Ordering::Relaxed);
                ids.lock().unwrap().push(std::thread::current().id());
            });
            assert_eq!(used, parts);
            for (i, h) in hits.iter().enumerate() {
                let want = if i < parts { round + 1 } else { 0 };
                assert_eq!(h.load(Ordering::Relaxed), want);
            }
            let mut ids = ids.into_inner().unwrap();
            assert_eq!(ids.len(), parts);
            ids.sort_by_key(|t| format!("{t:?}"));
            ids.dedup();
            // usually one thread per part, but the owner takes parts no helper has claimed
            assert!(!ids.is_empty() && ids.len() <= parts);
            if round % 50 == 49 {
                // let the helpers fall asleep: the next job must wake them
                std::thread::sleep(SPIN * 3);
            }
        }
    }

    /// Piece 1's view of the FTZ/DAZ mode, run by the helper: piece 0 (on the caller) waits
    /// until piece 1 has finished, so only the helper can have run it.
    #[cfg(target_arch = "x86_64")]
    fn helper_sees_flushed(pool: &Pool) -> bool {
        let seen = AtomicU64::new(0); // 0: not run yet, 1: not flushed, 2: flushed
        pool.run(2, &|i| {
            if i == 1 {
                let tiny = std::hint::black_box(2e-38f32);
                let flushed = tiny * std::hint::black_box(0.5f32) == 0.0;
                assert_eq!(flushed, crate::denormals_flushed());
                seen.store(1 + flushed as u64, Ordering::Release);
            } else {
                let start = std::time::Instant::now();
                while seen.load(Ordering::Acquire) == 0 {
                    assert!(
                        start.elapsed().as_secs() < 10,
                        "the helper never ran piece 1"
                    );
                    std::thread::yield_now();
                }
            }
        });
        seen.load(Ordering::Acquire) == 2
    }

    /// Helpers inherit their creator's MXCSR; each piece must nevertheless run in the mode of the
    /// thread that posted the job (a helper started outside the engine's FTZ guard once ran the
    /// optimizer's pieces with slow subnormals, see docs/BENCHMARKS.md).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn pieces_run_in_the_posting_threads_denormal_mode() {
        assert!(!crate::denormals_flushed());
        let started_plain = Pool::new(1).unwrap();
        let started_flushed = {
            let _g = crate::flush_denormals();
            Pool::new(1).unwrap()
        };
        for pool in [&started_plain, &started_flushed] {
            assert!(!helper_sees_flushed(pool), "job posted without FTZ");
            {
                let _g = crate::flush_denormals();
                assert!(helper_sees_flushed(pool), "job posted under FTZ");
            }
            assert!(!helper_sees_flushed(pool), "job posted without FTZ again");
        }
        assert!(!crate::denormals_flushed());
    }

    #[test]
    fn a_panicking_part_is_reraised_after_all_parts_finish() {
        let pool = Pool::new(1).unwrap();
        let done = AtomicU64::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.run(2, &|i| {
                if i == 1 {
                    panic!("boom");
                }
                done.fetch_add(1, Ordering::Relaxed);
            })
        }));
        assert!(r.is_err());
        assert_eq!(done.load(Ordering::Relaxed), 1);
        // The pool still works afterwards.
        assert_eq!(pool.run(2, &|_| {}), 2);
    }
}
