//! Plain loops: a guard that holds the storages a loop accesses exclusive and hands out plain
//! slices of disjoint element ranges of them, and the loop that splits those slices among the
//! calling thread and the plain loops' pool.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::OnceLock;

use super::lock::{Lock, PLAIN_HERE};
use super::pool::pool;
use super::scope;
use crate::policy;
use crate::raw::caller_runs::{Pool, Split};

thread_local! {
    /// How many plain loops this thread has started.
    static PLAIN_LOOPS: Cell<usize> = const { Cell::new(0) };
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
        let depth = scope::depth();
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
        scope::hold_exclusive(self.depth, lock)
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
        scope::release_exclusive(self.depth);
    }
}

/// How many plain loops this thread has started: how tests tell that a loop took the plain path.
#[doc(hidden)]
pub fn plain_loops() -> usize {
    PLAIN_LOOPS.with(Cell::get)
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
    crate::raw::caller_runs::run(Pool::Own(pool), n, grain, slices, &body)
}
