//! The results of a parallel `map`, `map2` or `create` on `cpu`, written in place by chunks: each
//! chunk is a plain loop over its elements, into which the compiler inlines the element
//! function, as it does for the sequential backend's loop. Through rayon's `map(…).collect()`
//! the element function stayed a call per element behind rayon's own closures (`perf`: the
//! shapes' argmin spent 86% of its samples in one `<&F as Fn>::call`, 11.7 ms where the
//! sequential backend took 8.7 ms). Called from outside the pool, the calling thread runs chunks
//! too (`caller_runs`).

use std::mem::MaybeUninit;

use crate::caller_runs::{self, Pool};
use crate::policy;

/// The elements of a chunk: [`policy::CHUNKS_PER_THREAD`] chunks per thread, so that
/// work-stealing can even out chunks of different costs.
pub(crate) fn grain(n: usize) -> usize {
    (n / (policy::CHUNKS_PER_THREAD * rayon::current_num_threads())).max(1)
}

/// `n` results: chunk by chunk of `grain` slots, in parallel, `fill(lo, slots)` writes the
/// results `lo..lo + slots.len()`, each task holding what `task()` returns (the nested
/// parallelism guard, or nothing) while it runs. `fill` must write every slot it is given.
pub(crate) fn par_fill<U, T, G, F>(n: usize, grain: usize, task: G, fill: F) -> Vec<U>
where
    U: Send,
    G: Fn() -> T + Sync + Send,
    F: Fn(usize, &mut [MaybeUninit<U>]) + Sync + Send,
{
    let mut out = Vec::with_capacity(n);
    let slots = &mut out.spare_capacity_mut()[..n];
    caller_runs::run(Pool::Global, n, grain, slots, &|lo, _, slots| {
        let _task = task();
        fill(lo as usize, slots)
    });
    // SAFETY: every chunk's `fill` wrote each of its slots (the callers in this crate zip the
    // slots with inputs or indices of the same length), and the chunks cover `0..n`. If a
    // `fill` panicked, this line is not reached: the results written so far are leaked, never
    // read or dropped twice.
    unsafe { out.set_len(n) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_is_in_its_place_whatever_the_grain() {
        for n in [0, 1, 7, 100, 1001] {
            for g in [1, 3, grain(n), n.max(1)] {
                let v = par_fill(
                    n,
                    g,
                    || (),
                    |lo, slots| {
                        for (k, s) in slots.iter_mut().enumerate() {
                            s.write(format!("{}", lo + k));
                        }
                    },
                );
                assert_eq!(v, (0..n).map(|i| i.to_string()).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn a_panicking_chunk_panics_the_call_and_drops_nothing_twice() {
        let r = std::panic::catch_unwind(|| {
            par_fill(
                64,
                4,
                || (),
                |lo, slots| {
                    for (k, s) in slots.iter_mut().enumerate() {
                        assert!(lo + k != 37, "element 37");
                        s.write(vec![lo + k]);
                    }
                },
            )
        });
        assert!(r.is_err());
    }
}
