//! Debug mode's checks that parallel writes do not conflict:
//!
//! - **`par_loop` iterations are independent.** While a `par_loop` runs under the debug backend,
//!   every tensor element an iteration reads or writes is recorded (by its address, so views made
//!   with `tensor_sub`/`tensor_slice` count as the tensor they view). Two iterations writing one
//!   element, or one iteration reading an element that another writes, fail at the site with the
//!   tensor, the element and the two iterations. Nested `par_loop`s are checked at every level.
//!   Cost: one hash-map entry per element touched, for the duration of the loop.
//! - **`scatter` writes each element once.** The indices that fall inside the destination are
//!   checked to be distinct before the values are written (one hash-map entry per index).
//!
//! The checks run only under the debug backend (`Backend::CHECKS`), which generated code tests
//! with a constant (in the debug backend's methods, [`crate::backend`], and the tensor accessors that record the elements
//! for [`track`]): the other backends carry no trace of them.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::site::Site;
use crate::tensor::{Element, TensorRef};

/// Checks that no two of `indices` (in order) are the same position of a destination of `len`
/// elements (indices outside it are skipped, as `scatter` skips them); fails at `site` naming the
/// two positions and the element.
#[doc(hidden)]
pub fn check_scatter(site: &Site, len: usize, indices: impl Iterator<Item = i64>) {
    let mut first: HashMap<i64, usize> = HashMap::new();
    for (j, i) in indices.enumerate() {
        if !(0..len as i64).contains(&i) {
            continue;
        }
        if let Some(&before) = first.get(&i) {
            site.fail(format_args!(
                "write conflict in `scatter`: positions {before} and {j} of the indices both write element {i} of the destination (a `scatter` may write its elements in any order, in parallel, so each element may be written by one position only)"
            ));
        }
        first.insert(i, j);
    }
}

/// No iteration (iterations are `0..n`, never negative).
const NONE: i64 = -1;

/// What iterations of one running `par_loop` did to one tensor element (24 bytes: debug mode
/// keeps one per element touched).
struct Touched {
    writer: i64,
    /// Up to two distinct reading iterations: enough to find one that differs from a writer.
    readers: [i64; 2],
}

impl Default for Touched {
    fn default() -> Self {
        Touched {
            writer: NONE,
            readers: [NONE; 2],
        }
    }
}

/// One running `par_loop` under the debug backend.
struct Loop {
    iteration: i64,
    elements: HashMap<usize, Touched>,
}

thread_local! {
    /// The `par_loop`s running on this thread under the debug backend, innermost last.
    static LOOPS: RefCell<Vec<Loop>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f(i)` for `i` in `0..n` in order, recording the tensor elements each iteration touches
/// (the debug backend's `par_loop`).
pub(crate) fn tracked_par_loop(n: i64, f: impl Fn(i64)) {
    /// Ends the loop's record also when an iteration fails, so that a caught failure does not
    /// leave it to the next loop on this thread.
    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            LOOPS.with(|l| l.borrow_mut().pop());
        }
    }
    LOOPS.with(|l| {
        l.borrow_mut().push(Loop {
            iteration: 0,
            elements: HashMap::new(),
        })
    });
    let _guard = Guard;
    for i in 0..n.max(0) {
        LOOPS.with(|l| {
            if let Some(top) = l.borrow_mut().last_mut() {
                top.iteration = i;
            }
        });
        f(i);
    }
}

/// Records a read (`write` false) or write of the element of `tensor` at `index` (a full index,
/// or a linear position with `linear`) by the running `par_loop` iterations, and fails at `site`
/// when another iteration of one of those loops wrote it, or (for a write) read it. Bounds are
/// checked as the access itself checks them.
#[doc(hidden)]
pub fn track<T: Element>(
    site: &Site,
    tensor: &str,
    t: &TensorRef<'_, T>,
    index: &[i64],
    linear: bool,
    write: bool,
) {
    if LOOPS.with(|l| l.borrow().is_empty()) {
        return;
    }
    let key = if linear {
        t.linear_address(site, index[0])
    } else {
        t.address(site, index)
    };
    let conflict = LOOPS.with(|l| {
        let mut loops = l.borrow_mut();
        // Innermost first: its iterations are the ones that differ by the least.
        for lp in loops.iter_mut().rev() {
            let me = lp.iteration;
            let e = lp.elements.entry(key).or_default();
            let w = e.writer;
            if write {
                if w != NONE && w != me {
                    return Some(format!("iterations {w} and {me} both write"));
                }
                if let Some(r) = e.readers.iter().find(|&&r| r != NONE && r != me) {
                    return Some(format!("iteration {r} reads, and iteration {me} writes,"));
                }
                e.writer = me;
            } else {
                if w != NONE && w != me {
                    return Some(format!("iteration {w} writes, and iteration {me} reads,"));
                }
                match e.readers {
                    [a, _] if a == me => {}
                    [NONE, _] => e.readers[0] = me,
                    [_, NONE] => e.readers[1] = me,
                    _ => {}
                }
            }
        }
        None
    });
    if let Some(what) = conflict {
        let element = if linear {
            format!("linear position {}", index[0])
        } else {
            format!("{index:?}")
        };
        site.fail(format_args!(
            "write conflict in `par_loop`: {what} element {element} of tensor `{tensor}` (the iterations of a `par_loop` may run in any order, in parallel, so each element may be written by one iteration and then read only by it)"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(f: impl FnOnce()) -> Option<String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .err()
            .map(|p| p.downcast_ref::<String>().cloned().unwrap_or_default())
    }

    #[test]
    fn loop_record_ends_when_an_iteration_fails() {
        let r = failure(|| tracked_par_loop(3, |i| assert!(i < 1, "iteration {i} fails")));
        assert!(r.is_some());
        assert!(LOOPS.with(|l| l.borrow().is_empty()));
    }
}
