//! The results of a parallel `map`, `map2` or `create` on `cpu`, written in place by chunks: each
//! chunk is a plain loop over its elements, into which the compiler inlines the element
//! function, as it does for the sequential backend's loop. Through rayon's `map(…).collect()`
//! the element function stayed a call per element behind rayon's own closures (`perf`: the
//! shapes' argmin spent 86% of its samples in one `<&F as Fn>::call`, 11.7 ms where the
//! sequential backend took 8.7 ms). Called from outside the pool, the calling thread runs chunks
//! too (`caller_runs`).

use crate::granularity::Level;
use crate::policy;
use crate::raw::caller_runs::Pool;
use crate::raw::slots::{self, Slots};

/// The elements of a chunk: [`policy::CHUNKS_PER_THREAD`] chunks per thread, so that
/// work-stealing can even out chunks of different costs.
pub(crate) fn grain(n: usize) -> usize {
    (n / (policy::CHUNKS_PER_THREAD * crate::granularity::threads())).max(1)
}

/// `n` results: chunk by chunk of `grain` slots, in parallel, `fill(lo, slots)` writes the
/// results `lo..lo + slots.len()`, each task holding what `task()` returns (the nested
/// parallelism guard, or nothing) while it runs.
///
/// # Panics
/// When a `fill` panics or leaves some of its slots unwritten.
#[inline]
pub(crate) fn par_fill<U, T, G, F>(level: Level, n: usize, grain: usize, task: G, fill: F) -> Vec<U>
where
    U: Send,
    G: Fn() -> T + Sync + Send,
    F: Fn(usize, &mut Slots<'_, U>) + Sync + Send,
{
    slots::par_filled(Pool::Global, level, n, 1, grain, task, |lo, _, s| {
        fill(lo, s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_is_in_its_place_whatever_the_grain() {
        for n in [0, 1, 7, 100, 1001] {
            for g in [1, 3, grain(n), n.max(1)] {
                let v = par_fill(
                    Level::parallel(),
                    n,
                    g,
                    || (),
                    |lo, slots| slots.fill_with(|k| format!("{}", lo + k)),
                );
                assert_eq!(v, (0..n).map(|i| i.to_string()).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn a_panicking_chunk_panics_the_call_and_drops_nothing_twice() {
        let r = std::panic::catch_unwind(|| {
            par_fill(
                Level::parallel(),
                64,
                4,
                || (),
                |lo, slots| {
                    slots.fill_with(|k| {
                        assert!(lo + k != 37, "element 37");
                        vec![lo + k]
                    })
                },
            )
        });
        assert!(r.is_err());
    }
}
