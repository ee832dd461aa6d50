//! A small fork-join pool for the GEMM blocks: one owner thread posts a job cut in `parts`
//! pieces, runs piece 0 itself, and helpers run pieces 1.. in parallel.
//!
//! Why not a general-purpose pool: a training step issues GEMMs every few to few hundred
//! microseconds, and on the virtual machines this runs on, waking a sleeping thread (futex +
//! an idle vCPU's wake-up) costs 50–100 µs, which is as long as a whole medium-sized product.
//! So helpers spin for a while ([`SPIN`]) after each piece before they sleep, and the owner
//! spins while it waits for them. A pool is owned by one thread (see `parallel.rs`), which is
//! the only one posting jobs, so posting needs no lock.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long an idle helper keeps polling for the next job before it sleeps (see
/// `docs/BENCHMARKS.md`, "GEMM threading threshold", for the measurement behind it).
pub(crate) const SPIN: Duration = Duration::from_micros(200);

/// The low bits of `Shared::epoch` carry the number of parts of the posted job.
const PARTS_BITS: u32 = 16;
const PARTS_MASK: usize = (1 << PARTS_BITS) - 1;

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
}

struct Shared {
    /// `(job counter << PARTS_BITS) | parts`, bumped by the owner to post a job.
    epoch: AtomicUsize,
    /// Written by the owner before it bumps `epoch`, read by the helpers that take part.
    job: UnsafeCell<Job>,
    /// Pieces not yet finished by helpers.
    remaining: AtomicUsize,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
    panicked: AtomicBool,
}

// SAFETY: `job` is written only by the owner while no helper may read it (before the epoch that
// publishes it, and after every helper taking part in the previous job has finished), and read
// by helpers only after they have observed that epoch (acquire).
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

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
        if helpers == 0 || helpers > PARTS_MASK {
            return None;
        }
        let shared = Arc::new(Shared {
            epoch: AtomicUsize::new(0),
            job: UnsafeCell::new(Job {
                run: noop,
                ctx: std::ptr::null(),
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
                .spawn(move || helper(&s, index))
                .ok()?; // on failure `pool` is dropped, which stops the helpers already started
        }
        Some(pool)
    }

    pub(crate) fn helpers(&self) -> usize {
        self.helpers
    }

    /// Runs `f(0)`, ..., `f(parts - 1)` in parallel (piece 0 on the calling thread) and returns
    /// when all have finished. `parts` is capped at `helpers + 1`; returns the count used.
    /// A panic in any piece is re-raised here, after every piece has finished.
    pub(crate) fn run<F: Fn(usize) + Sync>(&self, parts: usize, f: &F) -> usize {
        let parts = parts.min(self.helpers + 1);
        if parts <= 1 {
            f(0);
            return 1;
        }
        let s = &*self.shared;
        // SAFETY: no helper reads `job` now: the previous job's helpers have all finished (we
        // waited for `remaining == 0`), and helpers not taking part never read it.
        unsafe {
            *s.job.get() = Job {
                run: trampoline::<F>,
                ctx: f as *const F as *const (),
            };
        }
        s.remaining.store(parts - 1, Ordering::Relaxed);
        let counter = (s.epoch.load(Ordering::Relaxed) >> PARTS_BITS).wrapping_add(1);
        s.epoch
            .store((counter << PARTS_BITS) | parts, Ordering::SeqCst);
        if s.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = s.lock.lock().unwrap_or_else(|e| e.into_inner());
            s.wake.notify_all();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| f(0)));
        // Wait for the helpers even if piece 0 panicked: their pieces borrow the caller's data.
        let start = Instant::now();
        while s.remaining.load(Ordering::Acquire) != 0 {
            if start.elapsed() < SPIN {
                for _ in 0..32 {
                    std::hint::spin_loop();
                }
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

/// Waits until `epoch` differs from `seen` (or shutdown): spins for [`SPIN`], then sleeps.
fn wait_for_job(s: &Shared, seen: usize) -> Option<usize> {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            let e = s.epoch.load(Ordering::Acquire);
            if e != seen {
                return Some(e);
            }
            std::hint::spin_loop();
        }
        if s.shutdown.load(Ordering::Relaxed) {
            return None;
        }
        if start.elapsed() >= SPIN {
            break;
        }
    }
    let mut g = s.lock.lock().unwrap_or_else(|e| e.into_inner());
    s.sleepers.fetch_add(1, Ordering::SeqCst);
    let out = loop {
        // SeqCst pairs with the owner's store of `epoch` then load of `sleepers`: either the
        // owner sees this sleeper (and notifies under the lock), or this load sees the job.
        let e = s.epoch.load(Ordering::SeqCst);
        if s.shutdown.load(Ordering::SeqCst) {
            break None;
        }
        if e != seen {
            break Some(e);
        }
        g = s.wake.wait(g).unwrap_or_else(|e| e.into_inner());
    };
    s.sleepers.fetch_sub(1, Ordering::SeqCst);
    out
}

fn helper(s: &Shared, index: usize) {
    IN_HELPER.with(|h| h.set(true));
    let mut seen = 0;
    while let Some(e) = wait_for_job(s, seen) {
        seen = e;
        if index < (e & PARTS_MASK) {
            // SAFETY: published by the owner before `epoch` (acquired in `wait_for_job`); the
            // owner does not touch it again before this piece decrements `remaining`.
            let job = unsafe { *s.job.get() };
            // SAFETY: `job.ctx` matches `job.run` (both set together by `Pool::run`).
            if catch_unwind(AssertUnwindSafe(|| unsafe { (job.run)(job.ctx, index) })).is_err() {
                s.panicked.store(true, Ordering::Relaxed);
            }
            s.remaining.fetch_sub(1, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn runs_every_part_once_on_distinct_threads() {
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
            ids.sort_by_key(|t| format!("{t:?}"));
            ids.dedup();
            assert_eq!(ids.len(), parts, "each part on its own thread");
            if round % 50 == 49 {
                // let the helpers fall asleep: the next job must wake them
                std::thread::sleep(SPIN * 3);
            }
        }
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
