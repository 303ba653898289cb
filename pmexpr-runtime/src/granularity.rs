//! Granularity on `cpu`: whether a parallel level is worth the threads, decided from its measured
//! cost.
//!
//! Handing work to the pool costs 10–17 µs on the 2-core build machine; a keyword over five
//! elements takes well under one. So each parallel level of `cpu` (a `map`, `map2`, `create`, a
//! reduction, a map of rows: everything that goes through `raw::caller_runs`) first asks [`plan`]
//! how it ran the last times:
//!
//! - **Probe** (the first call of a level, then again after [`policy::GRAIN_REMEASURE_FIRST`]
//!   calls, twice as many each time the measure confirms the plan, up to
//!   [`policy::GRAIN_REMEASURE_EVERY`], and whenever the estimate is near the threshold): the calling thread runs the level's first
//!   positions itself, 1, then 2, 4, … at a time, timing them ([`probe`]); while the whole level
//!   is estimated to take under [`policy::SEQUENTIAL_UNDER_NANOS`], it goes on, so a small level
//!   ends on the calling thread, and a large one hands the rest to the pool after a prefix that
//!   took about one position's time.
//! - **Sequential**: the estimate (time per position, times the positions) is well under the
//!   threshold: the level runs on the calling thread, with no clock read at all.
//! - **Parallel**: the estimate is well over it: the level goes to the pool at once, as it did
//!   before there was a rule.
//!
//! The estimates are per level (keyed by the type of its element function: a closure's type is
//! its own, so each keyword of the generated code has one) and per thread, in a small table that
//! forgets on collisions. A level whose cost per
//! position changes from call to call is measured again at least every
//! [`policy::GRAIN_REMEASURE_EVERY`] calls, so a wrong estimate lasts that long at most. Which
//! thread runs which position never changes a result: the sequential plan and the parallel one
//! write the same positions with the same values.

use std::any::TypeId;
use std::cell::Cell;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;
use std::time::Instant;

use crate::policy::{GRAIN_REMEASURE_EVERY, GRAIN_REMEASURE_FIRST, SEQUENTIAL_UNDER_NANOS};

/// How many threads rayon's pool has for work started here: `rayon::current_num_threads()`,
/// kept once outside the pool. (Asked from outside the pool, rayon looks its global registry up
/// anew each time, building and dropping an error value: 9% of five-body steps' time.)
#[inline]
pub(crate) fn threads() -> usize {
    static GLOBAL: OnceLock<usize> = OnceLock::new();
    if rayon::current_thread_index().is_some() {
        rayon::current_num_threads()
    } else {
        *GLOBAL.get_or_init(rayon::current_num_threads)
    }
}

/// How a parallel level runs this time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// On the calling thread, all of it, without measuring.
    Sequential,
    /// On the pool at once.
    Parallel,
    /// A timed prefix on the calling thread first ([`probe`]).
    Probe,
}

/// One call of a parallel level: which level (its key) and how it runs ([`Level::of`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Level {
    key: u64,
    plan: Plan,
}

impl Level {
    /// The call of the level whose element function has type `F`, over `n` positions.
    #[inline]
    pub(crate) fn of<F: ?Sized>(n: usize) -> Level {
        let key = key::<F>();
        Level {
            key,
            plan: plan(key, n),
        }
    }

    /// A level that goes to the pool whatever it costs (its caller decided).
    pub(crate) const fn parallel() -> Level {
        Level {
            key: 0,
            plan: Plan::Parallel,
        }
    }

    /// Whether it runs on the calling thread without measuring.
    #[inline]
    pub(crate) fn sequential(self) -> bool {
        self.plan == Plan::Sequential
    }

    /// How it runs.
    #[inline]
    pub(crate) fn plan(self) -> Plan {
        self.plan
    }

    /// [`probe`] for this level.
    pub(crate) fn probe(self, n: usize, run: impl FnMut(usize, usize)) -> usize {
        probe(self.key, n, run)
    }
}

/// A `Hasher` that keeps the last number it was given: a `TypeId` hashes as its own bits.
#[derive(Default)]
struct Bits(u64);

impl Hasher for Bits {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// The key of the level whose element function has type `F` (never 0).
#[inline]
fn key<F: ?Sized>() -> u64 {
    let id: TypeId = typeid::of::<F>();
    let mut h = Bits::default();
    id.hash(&mut h);
    h.finish() | 1
}

/// What a thread remembers of one level: which (`key`), its time per position in picoseconds,
/// how many calls ago it was measured, and after how many calls it is measured again.
#[derive(Clone, Copy)]
struct Entry {
    key: u64,
    picos: u64,
    since: u32,
    every: u32,
}

const SLOTS: usize = 64;

const EMPTY: Entry = Entry {
    key: 0,
    picos: 0,
    since: 0,
    every: 0,
};

thread_local! {
    static TABLE: [Cell<Entry>; SLOTS] = const { [const { Cell::new(EMPTY) }; SLOTS] };
}

fn slot(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SLOTS
}

/// The threshold in picoseconds.
const LIMIT_PICOS: u64 = SEQUENTIAL_UNDER_NANOS * 1000;

/// The plan for `picos` per position over `n` positions.
fn judge(picos: u64, n: usize) -> Plan {
    let estimate = picos.saturating_mul(n as u64);
    if estimate < LIMIT_PICOS / 2 {
        Plan::Sequential
    } else if estimate > LIMIT_PICOS.saturating_mul(2) {
        Plan::Parallel
    } else {
        Plan::Probe
    }
}

/// The plan for the level `key` of `n` positions.
#[inline]
fn plan(key: u64, n: usize) -> Plan {
    TABLE.with(|t| {
        let cell = &t[slot(key)];
        let e = cell.get();
        if e.key != key || e.since >= e.every {
            return Plan::Probe;
        }
        cell.set(Entry {
            since: e.since + 1,
            ..e
        });
        judge(e.picos, n)
    })
}

/// Keeps the measure `picos` of the level `key` over `n` positions. A level measured again with
/// the same outcome is measured half as often (down to once per
/// [`policy::GRAIN_REMEASURE_EVERY`] calls); one whose outcome changed, often again.
fn record(key: u64, picos: u64, n: usize) {
    TABLE.with(|t| {
        let cell = &t[slot(key)];
        let e = cell.get();
        let every = if e.key == key && judge(e.picos, n) == judge(picos, n) {
            (e.every.saturating_mul(2)).clamp(GRAIN_REMEASURE_FIRST, GRAIN_REMEASURE_EVERY)
        } else {
            GRAIN_REMEASURE_FIRST
        };
        cell.set(Entry {
            key,
            picos,
            since: 0,
            every,
        })
    });
}

/// Runs `run(lo, len)` over a prefix of the level `key`'s `0..n` on the calling thread, 1, 2, 4,
/// … positions at a time, while the time so far, per position, times `n` stays under
/// [`policy::SEQUENTIAL_UNDER_NANOS`]; records the time per position it measured. Returns how
/// many positions it ran: `n` when the level was small enough to finish here.
fn probe(key: u64, n: usize, mut run: impl FnMut(usize, usize)) -> usize {
    let start = Instant::now();
    let (mut done, mut step) = (0_usize, 1_usize);
    while done < n {
        let len = step.min(n - done);
        run(done, len);
        done += len;
        let spent = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let picos = spent.saturating_mul(1000) / done as u64;
        if done == n || picos.saturating_mul(n as u64) >= LIMIT_PICOS {
            record(key, picos, n);
            return done;
        }
        step = step.saturating_mul(2);
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_runs_a_prefix_in_growing_steps() {
        let key = 11;
        assert_eq!(plan(key, 5), Plan::Probe);
        let mut seen = Vec::new();
        let done = probe(key, 5, |lo, len| seen.push((lo, len)));
        // 1, 2, then the 2 left, in order (fewer only if this thread was descheduled for
        // microseconds inside the probe).
        assert!((1..=5).contains(&done));
        let want = [(0, 1), (1, 2), (3, 2)];
        assert_eq!(seen, want[..seen.len()]);
        assert_eq!(seen.iter().map(|p| p.1).sum::<usize>(), done);
    }

    #[test]
    fn each_closure_is_a_level_of_its_own() {
        let (a, b) = (|x: i64| x + 1, |x: i64| x + 1);
        fn key_of<F>(_: &F) -> u64 {
            key::<F>()
        }
        assert_ne!(key_of(&a), key_of(&b));
        assert_eq!(key_of(&a), key_of(&a));
        let v = [1];
        let borrows = |i: usize| v[i];
        assert_ne!(key_of(&borrows), key_of(&a));
    }

    #[test]
    fn a_level_is_planned_from_its_measure() {
        let key = 41;
        record(key, 1000, 5); // 1 ns per position
        assert_eq!(plan(key, 5), Plan::Sequential);
        assert_eq!(plan(key, 1 << 30), Plan::Parallel);
        assert_eq!(plan(key, SEQUENTIAL_UNDER_NANOS as usize), Plan::Probe);
    }

    #[test]
    fn a_costly_level_stops_its_probe_after_a_prefix() {
        let key = 21;
        let ran = probe(key, 100, |_, _| {
            std::thread::sleep(std::time::Duration::from_micros(
                SEQUENTIAL_UNDER_NANOS / 500,
            ))
        });
        assert_eq!(ran, 1, "one position was estimated to be enough");
        assert_eq!(plan(key, 100), Plan::Parallel);
    }

    #[test]
    fn estimates_are_measured_again() {
        let key = 31;
        record(key, 1, 10);
        for _ in 0..GRAIN_REMEASURE_FIRST {
            assert_eq!(plan(key, 10), Plan::Sequential);
        }
        assert_eq!(plan(key, 10), Plan::Probe);
        // Confirmed: measured half as often.
        record(key, 1, 10);
        for _ in 0..2 * GRAIN_REMEASURE_FIRST {
            assert_eq!(plan(key, 10), Plan::Sequential);
        }
        assert_eq!(plan(key, 10), Plan::Probe);
        // Changed (now a costly level): measured again soon.
        record(key, 1 << 40, 10);
        for _ in 0..GRAIN_REMEASURE_FIRST {
            assert_eq!(plan(key, 10), Plan::Parallel);
        }
        assert_eq!(plan(key, 10), Plan::Probe);
    }
}
