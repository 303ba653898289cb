//! Who may touch a tensor's memory, and how: the per-storage lock that lets a `par_loop` write
//! with plain (vectorizable) stores while staying sound against every other user of the tensor.
//!
//! Tensor elements are relaxed atomics (see [`crate::tensor`]), so any number of threads may read
//! and write them at once. Plain loads and stores are faster — LLVM vectorizes no loop with an
//! atomic access — but a plain store racing with any other access is undefined behaviour. So each
//! storage (a tensor and all its views) has a [`Lock`]:
//!
//! - **Shared** holders access elements atomically: every [`crate::Tensor`] method that reads or
//!   writes elements holds the lock shared for that access, and an `accelerate!` call holds it
//!   shared for every tensor it captures, from its start to its end (its [`CallScope`]).
//! - **Exclusive**: a [`Plain`] guard upgrades the calling call's own shared hold when that hold
//!   is the only one (never waiting: when another holder exists, the loop takes the atomic path
//!   instead). While it is exclusive, other users wait; the guard hands out `&mut [T]` / `&[T]`
//!   slices of disjoint element ranges, and [`plain_loop`] splits them among threads.
//!
//! Why this cannot deadlock: an exclusive hold is taken only by the thread that runs a call's top
//! level, only when that thread is not a rayon worker (so nothing else of the call runs at the same
//! time: every parallel construct blocks it until done), and the loop runs on that thread and on
//! a pool of its own whose workers run nothing but such loops (see `caller_runs`), which touch
//! nothing but their slices. So the holder never waits for anyone who could be waiting for it.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::caller_runs::Pool;
pub use crate::caller_runs::Split;
use crate::policy;

/// The state of one storage: the number of shared holders, or [`EXCLUSIVE`].
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Lock(AtomicUsize);

const EXCLUSIVE: usize = usize::MAX;

impl Lock {
    /// Holds the lock shared, waiting while it is exclusive.
    pub(crate) fn share(&self) {
        let mut waited = 0_u32;
        loop {
            let s = self.0.load(Ordering::Relaxed);
            if s < EXCLUSIVE - 1 {
                if self
                    .0
                    .compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            if PLAIN_HERE.with(Cell::get) > 0 {
                // Only code written by hand against the hidden API gets here: generated code
                // touches no tensor from the thread that holds a plain loop's guard.
                panic!(
                    "pmexpr: a tensor was accessed from the thread that holds it for a plain \
                     loop; this would wait forever"
                );
            }
            backoff(&mut waited);
        }
    }

    /// Gives a shared hold back.
    pub(crate) fn unshare(&self) {
        self.0.fetch_sub(1, Ordering::Release);
    }

    /// Turns the caller's shared hold into the exclusive one, when it is the only holder.
    fn upgrade(&self) -> bool {
        self.0
            .compare_exchange(1, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Turns the exclusive hold back into the caller's shared one.
    fn downgrade(&self) {
        self.0.store(1, Ordering::Release)
    }
}

/// Spins briefly, then yields, then sleeps: an exclusive hold lasts one loop.
fn backoff(waited: &mut u32) {
    *waited += 1;
    if *waited < policy::LOCK_SPINS {
        std::hint::spin_loop();
    } else if *waited < policy::LOCK_SLEEP_AFTER {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_micros(policy::LOCK_SLEEP_MICROS));
    }
}

/// A shared hold for the duration of one `Tensor` method.
pub(crate) struct Shared<'a>(&'a Lock);

impl<'a> Shared<'a> {
    pub(crate) fn new(lock: &'a Lock) -> Self {
        lock.share();
        Shared(lock)
    }
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        self.0.unshare()
    }
}

/// Something that owns a [`Lock`]: a tensor's storage, whatever its element type.
pub(crate) trait Locked: Send + Sync {
    fn lock(&self) -> &Lock;
}

/// A storage an `accelerate!` call holds shared, and whether a [`Plain`] guard has it exclusive.
struct Entry {
    store: Arc<dyn Locked>,
    exclusive: Cell<bool>,
}

thread_local! {
    /// The calls running on this thread, innermost last; each with the storages it holds.
    static FRAMES: RefCell<Vec<Vec<Entry>>> = const { RefCell::new(Vec::new()) };
    /// Whether this thread holds a [`Plain`] guard (0 or 1).
    static PLAIN_HERE: Cell<usize> = const { Cell::new(0) };
    /// How many plain loops this thread has started.
    static PLAIN_LOOPS: Cell<usize> = const { Cell::new(0) };
}

/// The extent of one `accelerate!` call: every tensor it captures ([`crate::tensor::TensorRef::new`])
/// is held shared until the scope ends, so that no plain loop elsewhere writes it meanwhile.
#[doc(hidden)]
pub struct CallScope {
    depth: usize,
    _not_send: PhantomData<*const ()>,
}

impl CallScope {
    /// Begins a call on this thread.
    pub fn enter() -> CallScope {
        let depth = FRAMES.with(|f| {
            let mut f = f.borrow_mut();
            f.push(Vec::new());
            f.len()
        });
        CallScope {
            depth,
            _not_send: PhantomData,
        }
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        let frames = FRAMES.with(|f| {
            let mut f = f.borrow_mut();
            let at = self.depth.min(f.len()).saturating_sub(1);
            f.split_off(at)
        });
        for entry in frames.into_iter().flatten() {
            if entry.exclusive.get() {
                // A `Plain` guard outlives its call: only hand-written use of the hidden API can
                // do this, and releasing the storage now would let others in while its slices
                // are live.
                std::process::abort();
            }
            entry.store.lock().unshare();
        }
    }
}

/// Holds `store` shared for the innermost call on this thread (once per call), or for ever when
/// no call is running (a view made by hand: its storage then never runs plain loops).
pub(crate) fn register(store: &Arc<impl Locked + 'static>) {
    let lock = store.lock();
    let held = FRAMES.with(|f| {
        let f = f.borrow();
        let top = f.last()?;
        Some(
            match top.iter().find(|e| std::ptr::eq(e.store.lock(), lock)) {
                Some(e) if e.exclusive.get() => {
                    panic!(
                        "pmexpr: a tensor was viewed while a plain loop of the same call holds it"
                    )
                }
                Some(_) => true,
                None => false,
            },
        )
    });
    match held {
        Some(true) => {}
        Some(false) => {
            lock.share();
            let store: Arc<dyn Locked> = store.clone();
            FRAMES.with(|f| {
                if let Some(top) = f.borrow_mut().last_mut() {
                    top.push(Entry {
                        store,
                        exclusive: Cell::new(false),
                    })
                }
            });
        }
        None => lock.share(),
    }
}

/// Whether plain loops run: `PMEXPR_PLAIN_LOOPS=0` turns them off (every loop takes the atomic
/// path), to compare the two.
fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os("PMEXPR_PLAIN_LOOPS").is_none_or(|v| v != "0"))
}

/// A plain loop's hold on the storages it accesses: they are exclusive until it is dropped, and
/// it hands out plain slices of disjoint element ranges of them (`Window::plain_mut`,
/// `Window::plain`). A thread holds one at a time, so the entries of its call that are exclusive
/// are this guard's.
#[doc(hidden)]
pub struct Plain {
    depth: usize,
    /// The element ranges handed out, as addresses, and whether each is written.
    ranges: RefCell<Vec<(usize, usize, bool)>>,
    _not_send: PhantomData<*const ()>,
}

impl Plain {
    /// A guard for a loop at the top level of the innermost call on this thread, or `None`
    /// where the loop must take the atomic path: `parallel` is false (the sequential
    /// backends), this thread is a rayon worker (the call may be nested in parallel work), no
    /// call is running, or this thread holds a guard already.
    pub fn begin(parallel: bool) -> Option<Plain> {
        if !parallel || rayon::current_thread_index().is_some() || !enabled() {
            return None;
        }
        let depth = FRAMES.with(|f| f.borrow().len());
        if depth == 0 || PLAIN_HERE.with(Cell::get) > 0 {
            return None;
        }
        PLAIN_HERE.with(|c| c.set(1));
        Some(Plain {
            depth,
            ranges: RefCell::new(Vec::new()),
            _not_send: PhantomData,
        })
    }

    /// Makes `lock` exclusive for this guard: it must be held by the innermost call, and by
    /// nobody else.
    pub(crate) fn hold(&self, lock: &Lock) -> bool {
        FRAMES.with(|f| {
            let f = f.borrow();
            if f.len() != self.depth {
                return false;
            }
            let Some(e) = f[self.depth - 1]
                .iter()
                .find(|e| std::ptr::eq(e.store.lock(), lock))
            else {
                return false;
            };
            if e.exclusive.get() {
                return true;
            }
            let upgraded = lock.upgrade();
            e.exclusive.set(upgraded);
            upgraded
        })
    }

    /// Records the cells' address range; `None` when it overlaps a range handed out before
    /// (either of them written).
    pub(crate) fn claim<C>(&self, cells: &[C], write: bool) -> Option<()> {
        let lo = cells.as_ptr() as usize;
        let hi = lo + std::mem::size_of_val(cells);
        let mut ranges = self.ranges.borrow_mut();
        let overlaps = |&&(a, b, w): &&(usize, usize, bool)| (w || write) && a < hi && lo < b;
        if lo < hi && ranges.iter().any(|r| overlaps(&r)) {
            return None;
        }
        ranges.push((lo, hi, write));
        Some(())
    }
}

impl Drop for Plain {
    fn drop(&mut self) {
        PLAIN_HERE.with(|c| c.set(0));
        FRAMES.with(|f| {
            for e in f.borrow().get(self.depth - 1).into_iter().flatten() {
                if e.exclusive.replace(false) {
                    e.store.lock().downgrade();
                }
            }
        });
    }
}

/// How many plain loops this thread has started: how tests tell that a loop took the plain path.
#[doc(hidden)]
pub fn plain_loops() -> usize {
    PLAIN_LOOPS.with(Cell::get)
}

/// The pool plain loops run on: its workers run nothing else, so none of them can be waiting for
/// a lock that a plain loop holds (see the module docs). `None` when it cannot be built.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|i| format!("pmexpr-plain-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `body(lo, len, parts)` over chunks `lo..lo + len` that cover `0..n` (`n <= 0`: none),
/// `parts` being the slices split at the chunk's positions, on the calling thread helped by the
/// plain loops' pool (`caller_runs`).
#[doc(hidden)]
pub fn plain_loop<S: Split, F: Fn(i64, usize, S) + Sync>(n: i64, slices: S, body: F) {
    PLAIN_LOOPS.with(|c| c.set(c.get() + 1));
    let n = n.max(0) as usize;
    let pool = if n < policy::SEQUENTIAL_BELOW {
        None
    } else {
        pool()
    };
    let Some(pool) = pool else {
        return body(0, n, slices);
    };
    let grain = (n / (pool.current_num_threads() * policy::CHUNKS_PER_THREAD)).max(1);
    crate::caller_runs::run(Pool::Own(pool), n, grain, slices, &body)
}
