//! Parallel work that the calling thread runs itself, with the pool's workers joining as they
//! wake: the chunks are claimed one at a time from a counter, by the caller and by one helper job
//! per worker spawned on the pool, and the caller returns once every chunk is done.
//!
//! Why not `pool.install`: it blocks the caller until a worker has woken, run the loop and woken
//! the caller again. On the 2-core build machine each of those wake-ups can cost more than a
//! short loop (Listing 1: 64 loops of 11 µs of work took 0.72 ms in some processes and 1.5 ms in
//! others, with the same CPU time: the rest was waiting for threads to wake). Here the caller
//! starts at once, a worker that wakes late finds fewer chunks left, and with one thread the
//! caller runs the loop alone, with no handoff at all.
//!
//! Soundness: the chunks' slices and the body are borrowed from the caller's frame. A helper
//! touches them only for a chunk it claimed (`next` below `chunks`), and the caller does not
//! return, normally or by a panic, before every claimed chunk is finished (`done`). A helper that
//! starts after that claims nothing and touches nothing but the shared counters, which it owns
//! a reference to.

use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::granularity::{self, Level, Plan};

/// The counters that the caller and its helpers share; a helper may outlive the loop.
struct Shared {
    /// The next chunk to claim (it may count past `chunks`: nothing is left then).
    next: AtomicUsize,
    /// How many chunks are finished, run or skipped.
    done: AtomicUsize,
    chunks: usize,
    /// A chunk panicked: the chunks not yet claimed are skipped.
    failed: AtomicBool,
    /// The first panic of a helper's chunk, raised again by the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// The loop in the caller's frame, and how to run its chunk `k`. Used only for a claimed
    /// chunk (see the module docs).
    work: *const (),
    run: unsafe fn(*const (), usize),
}

// SAFETY: `work` points to a `Work` whose parts are `Send` and whose body is `Sync`; each part is
// taken by the one thread that claimed its chunk (see `Work`).
unsafe impl Send for Shared {}
// SAFETY: through `&Shared`, threads touch the atomics and the `Mutex`, which are `Sync`, and
// `work` only as `run` does: the body by shared reference (it is `Sync`), and each part by the one
// thread that claimed its chunk.
unsafe impl Sync for Shared {}

/// The loop: each chunk's position, length and slices, and the body.
struct Work<'a, S, F> {
    parts: Vec<UnsafeCell<Option<(usize, usize, S)>>>,
    body: &'a F,
}

impl Shared {
    /// Claims and runs chunks until none is left. The first panic of a chunk is kept for the
    /// caller, before the chunk counts as done.
    fn work(&self) {
        loop {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k >= self.chunks {
                return;
            }
            if !self.failed.load(Ordering::Relaxed) {
                // SAFETY: `k` was claimed by this thread alone, and the caller waits for it.
                let r = catch_unwind(AssertUnwindSafe(|| unsafe { (self.run)(self.work, k) }));
                if let Err(p) = r {
                    self.failed.store(true, Ordering::Relaxed);
                    let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                    slot.get_or_insert(p);
                }
            }
            // Release: the chunk's writes (and its panic) happen before the caller sees it done.
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// Runs chunk `k` of the `Work<S, F>` at `work`.
///
/// # Safety
/// `work` points to a live `Work<S, F>`, and chunk `k` was claimed by the calling thread alone.
unsafe fn run_chunk<S: Split, F: Fn(i64, usize, S) + Sync>(work: *const (), k: usize) {
    // SAFETY: the caller's contract.
    let work = unsafe { &*(work as *const Work<'_, S, F>) };
    // SAFETY: only the claimant of `k` touches `parts[k]`.
    let part = unsafe { (*work.parts[k].get()).take() };
    if let Some((lo, len, s)) = part {
        (work.body)(lo as i64, len, s);
    }
}

/// The pool whose workers help: the plain loops' own, or rayon's global one.
#[derive(Clone, Copy)]
pub(crate) enum Pool<'p> {
    Own(&'p rayon::ThreadPool),
    Global,
}

impl Pool<'_> {
    fn threads(self) -> usize {
        match self {
            Pool::Own(p) => p.current_num_threads(),
            Pool::Global => granularity::threads(),
        }
    }

    fn spawn(self, job: impl FnOnce() + Send + 'static) {
        match self {
            Pool::Own(p) => p.spawn(job),
            Pool::Global => rayon::spawn(job),
        }
    }
}

/// Runs `body(lo, len, parts)` over chunks of `grain` positions that cover `0..n`, on the calling
/// thread and on the pool's workers (none when the pool has one thread). On a rayon worker (nested
/// parallel work), the chunks go through rayon's own `join`, which steals.
pub(crate) fn run<S: Split, F: Fn(i64, usize, S) + Sync>(
    pool: Pool<'_>,
    n: usize,
    grain: usize,
    slices: S,
    body: &F,
) {
    run_from(pool, 0, n, grain, slices, body)
}

/// [`run`], unless the level is too small for threads to pay: then `body` runs on the calling
/// thread, whole or after a timed prefix (`level`'s plan, see `granularity`). Which thread runs a
/// chunk never changes what it computes.
pub(crate) fn run_adaptive<S: Split, F: Fn(i64, usize, S) + Sync>(
    pool: Pool<'_>,
    level: Level,
    n: usize,
    grain: usize,
    slices: S,
    body: &F,
) {
    if n <= grain.max(1) || pool.threads() <= 1 {
        return run(pool, n, grain, slices, body);
    }
    match level.plan() {
        Plan::Sequential => body(0, n, slices),
        Plan::Parallel => run(pool, n, grain, slices, body),
        Plan::Probe => {
            let mut rest = Some(slices);
            let done = level.probe(n, |lo, len| {
                if let Some((part, tail)) = rest.take().map(|s| s.split_at(len)) {
                    rest = Some(tail);
                    body(lo as i64, len, part);
                }
            });
            if let Some(rest) = rest.filter(|_| done < n) {
                run_from(pool, done, n, grain, rest, body);
            }
        }
    }
}

/// [`run`] over the positions `from..n`, which `slices` cover.
///
/// Only the split into chunks and the chunk's call are generic: the threads, the helpers and
/// rayon's `join` run chunks through a function pointer ([`Chunks`]), so that each loop of a
/// crate does not instantiate the pool's machinery for its own closure types (a crate of 100
/// `accelerate!` sites held 45,000 mono items, 32 of rayon's `StackJob`s per site, and rustc
/// spent most of its time generating code for them).
fn run_from<S: Split, F: Fn(i64, usize, S) + Sync>(
    pool: Pool<'_>,
    from: usize,
    n: usize,
    grain: usize,
    slices: S,
    body: &F,
) {
    let grain = grain.max(1);
    let nested = rayon::current_thread_index().is_some();
    let alone = pool.threads() <= 1 && !nested;
    let one = n - from <= grain && !(nested && matches!(pool, Pool::Own(_)));
    if alone || one {
        // Alone, or one chunk (which runs on the pool it names): the chunks in order, with
        // nothing shared or spawned.
        for (lo, len, part) in split(from, n, grain, slices) {
            body(lo as i64, len, part);
        }
        return;
    }
    let parts = split(from, n, grain, slices)
        .map(|c| UnsafeCell::new(Some(c)))
        .collect();
    let work = Work { parts, body };
    let chunks = Chunks {
        count: work.parts.len(),
        work: &work as *const Work<'_, S, F> as *const (),
        run: run_chunk::<S, F>,
    };
    if nested {
        nested_run(pool, chunks);
    } else {
        shared_run(pool, chunks);
    }
    // `work` (and the borrows in it) may end only now: every chunk is done, and no helper can
    // touch it any more.
    drop(work);
}

/// The chunks of a loop, without their types: `run(work, k)` runs chunk `k` of the `Work` at
/// `work`, for `k` below `count`.
#[derive(Clone, Copy)]
struct Chunks {
    count: usize,
    work: *const (),
    run: unsafe fn(*const (), usize),
}

// SAFETY: as for `Shared`: `work` points to a `Work` whose parts are `Send` and whose body is
// `Sync`, and each chunk is run by the one thread that claimed it (`joined` hands out each index
// once; `Shared::work` claims them from a counter).
unsafe impl Send for Chunks {}
// SAFETY: see `Send`.
unsafe impl Sync for Chunks {}

/// Runs every chunk from a rayon worker (nested parallel work): through rayon's own `join`,
/// which steals, on `pool`.
fn nested_run(pool: Pool<'_>, chunks: Chunks) {
    let all = || joined(chunks, 0, chunks.count);
    match pool {
        Pool::Own(p) => p.install(all),
        Pool::Global => all(),
    }
}

/// Runs every chunk on the calling thread and on one helper per worker of `pool`, and returns
/// once all are done; a chunk's panic is raised again here, after the chunks still running.
fn shared_run(pool: Pool<'_>, chunks: Chunks) {
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        chunks: chunks.count,
        failed: AtomicBool::new(false),
        panic: Mutex::new(None),
        work: chunks.work,
        run: chunks.run,
    });
    // One helper per worker, not one fewer: a woken worker may wait on the caller's CPU while
    // another CPU idles (reduce_map after matmul in one process of the shapes table: one
    // helper, 0.66–1.20 ms, the caller alone taking 1.20; one per worker, 0.64–0.66).
    let helpers = pool.threads().min(shared.chunks - 1);
    for _ in 0..helpers {
        let shared = Arc::clone(&shared);
        pool.spawn(move || shared.work());
    }
    shared.work();
    // Every chunk is claimed; wait for those still running on helpers.
    let mut waited = 0_u32;
    while shared.done.load(Ordering::Acquire) < shared.chunks {
        waited += 1;
        if waited < crate::policy::CALLER_WAIT_SPINS {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    let panic = (shared.panic.lock().unwrap_or_else(|e| e.into_inner())).take();
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// Slices that a plain loop splits among its tasks, all at the same positions: `&mut [T]`,
/// `&[T]`, and pairs of them nested as `(a, (b, (c, ())))`.
#[doc(hidden)]
pub trait Split: Sized + Send {
    /// The parts before and after position `mid`.
    fn split_at(self, mid: usize) -> (Self, Self);
}

impl Split for () {
    fn split_at(self, _: usize) -> ((), ()) {
        ((), ())
    }
}

impl<T: Send> Split for &mut [T] {
    fn split_at(self, mid: usize) -> (Self, Self) {
        self.split_at_mut(mid.min(self.len()))
    }
}

impl<T: Sync> Split for &[T] {
    fn split_at(self, mid: usize) -> (Self, Self) {
        <[T]>::split_at(self, mid.min(self.len()))
    }
}

/// The chunks `lo..hi`, halved by `rayon::join` down to one chunk each.
fn joined(chunks: Chunks, lo: usize, hi: usize) {
    if hi - lo <= 1 {
        if lo < hi {
            // SAFETY: `work` is live until `run_from` returns, which is after this `join` tree,
            // and chunk `lo` is handed to this call alone.
            unsafe { (chunks.run)(chunks.work, lo) };
        }
        return;
    }
    let mid = lo + (hi - lo) / 2;
    rayon::join(|| joined(chunks, lo, mid), || joined(chunks, mid, hi));
}

/// The chunks of `grain` positions that cover `from..n` (which `slices` cover): each one's
/// start, length and slices.
fn split<S: Split>(
    from: usize,
    n: usize,
    grain: usize,
    slices: S,
) -> impl Iterator<Item = (usize, usize, S)> {
    let (mut lo, mut rest) = (from, Some(slices));
    std::iter::from_fn(move || {
        if lo >= n {
            return None;
        }
        let len = grain.min(n - lo);
        let (part, tail) = rest.take()?.split_at(len);
        rest = Some(tail);
        lo += len;
        Some((lo - len, len, part))
    })
}

/// A buffer of rows of `w` slots, split between rows: position `mid` is row `mid`.
pub(crate) struct Rows<'a, T>(pub(crate) &'a mut [T], pub(crate) usize);

impl<T: Send> Split for Rows<'_, T> {
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (a, b) = self.0.split_at(mid.saturating_mul(self.1));
        (Rows(a, self.1), Rows(b, self.1))
    }
}

impl<A: Split, B: Split> Split for (A, B) {
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (a0, a1) = self.0.split_at(mid);
        let (b0, b1) = self.1.split_at(mid);
        ((a0, b0), (a1, b1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    fn pools() -> Vec<rayon::ThreadPool> {
        [1, 2, 3]
            .map(|t| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .expect("a pool")
            })
            .into()
    }

    #[test]
    fn every_position_is_run_once_in_its_own_slot() {
        let own = pools();
        let mut all: Vec<Pool<'_>> = own.iter().map(Pool::Own).collect();
        all.push(Pool::Global);
        for pool in all {
            for n in [0, 1, 7, 100, 1001] {
                for grain in [0, 1, 3, 64, 5000] {
                    let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
                    let mut out = vec![0_usize; n];
                    run(
                        pool,
                        n,
                        grain,
                        &mut out[..],
                        &|lo, len, part: &mut [usize]| {
                            assert_eq!(part.len(), len);
                            for (k, slot) in part.iter_mut().enumerate() {
                                *slot = lo as usize + k;
                                hits[lo as usize + k].fetch_add(1, Ordering::Relaxed);
                            }
                        },
                    );
                    assert_eq!(out, (0..n).collect::<Vec<_>>());
                    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
                }
            }
        }
    }

    #[test]
    fn a_panicking_chunk_panics_the_caller_after_the_running_chunks() {
        let own = pools();
        for pool in own.iter().map(Pool::Own).chain([Pool::Global]) {
            for bad in [0, 5, 63] {
                let running = AtomicU32::new(0);
                let r = catch_unwind(AssertUnwindSafe(|| {
                    run(pool, 64, 1, (), &|lo, _, ()| {
                        running.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        assert!(lo != bad, "chunk {bad}");
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                }));
                let msg = r.expect_err("the panic reaches the caller");
                let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
                assert_eq!(msg, format!("chunk {bad}"));
                // Only the panicking chunk is left counted: every other one that started ended
                // before the caller went on.
                assert_eq!(running.load(Ordering::SeqCst), 1);
            }
        }
    }
}
