//! Results written in place into a buffer's uninitialized capacity, and the one `set_len` that
//! makes them a `Vec`.
//!
//! The writers get [`Slots`], never the bare `&mut [MaybeUninit<U>]`: `Slots` writes only at its
//! cursor, so the cursor is a count of initialized slots that no caller can get wrong, and the
//! buffer becomes a `Vec` only when the cursors of all its parts reached their ends. A writer that
//! leaves slots unwritten gets a panic (an internal error of the runtime), never a `Vec` that
//! holds uninitialized elements. The checks are one comparison per part (per chunk of a parallel
//! level, per row), none per element: the element loops are the `zip`s over plain slices they
//! were, which the compiler vectorizes.

use std::mem::MaybeUninit;

use super::caller_runs::{self, Pool, Rows};
use crate::granularity::Level;

/// Slots of a buffer to write in order, from a cursor (see the module docs).
#[derive(Debug)]
pub(crate) struct Slots<'a, U> {
    slots: &'a mut [MaybeUninit<U>],
    /// Invariant: `slots[..written]` are initialized.
    written: usize,
}

impl<'a, U> Slots<'a, U> {
    #[inline(always)]
    fn new(slots: &'a mut [MaybeUninit<U>]) -> Self {
        Slots { slots, written: 0 }
    }

    /// How many slots there are, written or not.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// How many slots are written (the cursor).
    #[inline(always)]
    pub(crate) fn written(&self) -> usize {
        self.written
    }

    /// Writes the values of `xs` from the cursor on, as many as both have room and values for;
    /// returns how many it wrote.
    #[inline(always)]
    pub(crate) fn extend(&mut self, xs: impl IntoIterator<Item = U>) -> usize {
        self.extend_n(self.slots.len() - self.written, xs)
    }

    /// [`Slots::extend`] into the next `n` slots at most.
    #[inline(always)]
    pub(crate) fn extend_n(&mut self, n: usize, xs: impl IntoIterator<Item = U>) -> usize {
        let end = self.written.saturating_add(n).min(self.slots.len());
        let mut k = 0;
        for (slot, x) in self.slots[self.written..end].iter_mut().zip(xs) {
            slot.write(x);
            k += 1;
        }
        self.written += k;
        k
    }

    /// Writes `f(k)` into every slot `k` from the cursor to the end, in order.
    #[inline(always)]
    pub(crate) fn fill_with(&mut self, mut f: impl FnMut(usize) -> U) {
        let start = self.written;
        for (k, slot) in self.slots[start..].iter_mut().enumerate() {
            slot.write(f(start + k));
        }
        self.written = self.slots.len();
    }

    /// Writes `f(k)` into every slot `k` from the cursor up to `end` (at most the end), in order:
    /// a counted loop over `k` itself, so that the compiler sees a range the caller proved
    /// something about (`RowOut::fill_peeled`).
    // Counted over `k` itself: see above.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    pub(crate) fn fill_upto(&mut self, end: usize, mut f: impl FnMut(usize) -> U) {
        let slots = &mut *self.slots;
        let end = end.min(slots.len());
        let start = self.written;
        for k in start..end {
            slots[k].write(f(k));
        }
        self.written = end.max(start);
    }

    /// Writes `v` into every slot from the cursor to the end.
    #[inline(always)]
    pub(crate) fn pad(&mut self, v: U)
    where
        U: Copy,
    {
        self.slots[self.written..].fill(MaybeUninit::new(v));
        self.written = self.slots.len();
    }

    /// What this writer wrote, to give back to [`Slots::part`].
    #[inline(always)]
    pub(crate) fn done(self) -> Done {
        Done {
            at: self.slots.as_ptr() as usize,
            len: self.slots.len(),
            written: self.written,
        }
    }

    /// The next `len` slots (at most those left), as a writer of their own that `f` must write
    /// every one of and give back ([`Slots::done`]): the cursor then moves past them.
    ///
    /// # Panics
    /// When `f` left some of them unwritten, or gave back another writer (an internal error).
    #[inline(always)]
    pub(crate) fn part(&mut self, len: usize, f: impl FnOnce(Slots<'_, U>) -> Done) {
        let end = (self.written + len).min(self.slots.len());
        let part = &mut self.slots[self.written..end];
        let (at, n) = (part.as_ptr() as usize, part.len());
        let done = f(Slots::new(part));
        if done.at != at || done.len != n || done.written != n {
            unwritten(done.written, n);
        }
        self.written = end;
    }

    /// Panics unless every slot is written.
    #[inline(always)]
    fn check(&self) {
        if self.written != self.slots.len() {
            unwritten(self.written, self.slots.len());
        }
    }
}

/// What a writer given by [`Slots::part`] wrote: which slots, and how many of them.
#[derive(Debug)]
#[must_use]
pub(crate) struct Done {
    at: usize,
    len: usize,
    written: usize,
}

#[cold]
#[inline(never)]
fn unwritten(written: usize, len: usize) -> ! {
    panic!("internal error: a part of {len} results got {written}")
}

/// A `Vec` of `n` elements that `f` writes through [`Slots`], and what `f` returns.
///
/// # Panics
/// When `f` panics, or leaves some of the slots unwritten (what it wrote is leaked, never read).
#[inline(always)]
pub(crate) fn filled<U, R>(n: usize, f: impl FnOnce(&mut Slots<'_, U>) -> R) -> (Vec<U>, R) {
    let mut out = Vec::with_capacity(n);
    let mut slots = Slots::new(&mut out.spare_capacity_mut()[..n]);
    let r = f(&mut slots);
    slots.check();
    // SAFETY: the first `n` slots of the capacity are written (`check`: the cursor is at `n`,
    // and `Slots` writes only below its cursor and moves it only past written slots).
    unsafe { out.set_len(n) };
    (out, r)
}

/// A `Vec` of `n` rows of `w` elements each, written in parallel by chunks of `grain` rows
/// (`caller_runs::run_adaptive` on `pool`, as `level` plans: on the calling thread alone when the
/// level is small): `fill(lo, len, slots)` writes rows `lo..lo + len` into their `len * w`
/// slots, each chunk holding what `task()` returns (the nested parallelism guard, or nothing)
/// while it runs. `w` is 1 for a sequence of results.
///
/// # Panics
/// When a `fill` panics or leaves some of its slots unwritten (what was written is leaked).
#[inline]
pub(crate) fn par_filled<U, T, G, F>(
    pool: Pool<'_>,
    level: Level,
    n: usize,
    w: usize,
    grain: usize,
    task: G,
    fill: F,
) -> Vec<U>
where
    U: Send,
    G: Fn() -> T + Sync + Send,
    F: Fn(usize, usize, &mut Slots<'_, U>) + Sync + Send,
{
    let total = n
        .checked_mul(w)
        .expect("a buffer of rows that fits in memory");
    let mut out = Vec::with_capacity(total);
    let rows = Rows(&mut out.spare_capacity_mut()[..total], w);
    caller_runs::run_adaptive(pool, level, n, grain, rows, &|lo, len, rows| {
        let _task = task();
        let mut slots = Slots::new(rows.0);
        fill(lo as usize, len, &mut slots);
        slots.check();
    });
    // SAFETY: `caller_runs::run_adaptive` returned, so it ran every chunk of `0..n` once (some on
    // the calling thread, the rest through `run`) and none panicked
    // (it returns only then); the chunks' rows cover the first `total` slots exactly once, and
    // each chunk's `check` found all of its slots written.
    unsafe { out.set_len(total) };
    out
}

/// The results of the parts `lens` (in order, one allocation): part `c` is written by
/// `fill(c, data[c], slots)` into its `lens[c]` slots, the parts in parallel by chunks of `grain`
/// parts (`caller_runs::run` on rayon's pool), each chunk holding what `task()` returns; the
/// results, and the values `fill` returned in part order.
///
/// # Panics
/// When a `fill` panics or leaves some of its slots unwritten (what was written is leaked).
pub(crate) fn par_filled_parts<U, D, Q, T, G, F>(
    lens: &[usize],
    data: Vec<D>,
    grain: usize,
    task: G,
    fill: F,
) -> (Vec<U>, Vec<Q>)
where
    U: Send,
    D: Send,
    Q: Send,
    G: Fn() -> T + Sync + Send,
    F: Fn(usize, D, &mut Slots<'_, U>) -> Q + Sync,
{
    type Part<'p, D, U, Q> = (Option<D>, Option<Slots<'p, U>>, Option<Q>);
    assert_eq!(lens.len(), data.len(), "one datum per part");
    let total: usize = lens.iter().sum();
    let mut out: Vec<U> = Vec::with_capacity(total);
    let mut parts: Vec<Part<'_, D, U, Q>> = Vec::with_capacity(lens.len());
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for (&len, d) in lens.iter().zip(data) {
        let (part, tail) = rest.split_at_mut(len);
        parts.push((Some(d), Some(Slots::new(part)), None));
        rest = tail;
    }
    caller_runs::run(
        Pool::Global,
        parts.len(),
        grain,
        &mut parts[..],
        &|lo, _, ps: &mut [Part<'_, D, U, Q>]| {
            let _task = task();
            for (k, (d, slots, q)) in ps.iter_mut().enumerate() {
                let d = d.take().expect("each part is filled once");
                let slots = slots.as_mut().expect("each part has its slots");
                let value = fill(lo as usize + k, d, slots);
                slots.check();
                *q = Some(value);
            }
        },
    );
    let values = (parts.into_iter())
        .map(|(_, _, q)| q.expect("every part was filled"))
        .collect();
    // SAFETY: `caller_runs::run` returned, so every part's chunk ran once and none panicked; the
    // parts cover the first `total` slots exactly once, and each part's `check` found all of its
    // slots written.
    unsafe { out.set_len(total) };
    (out, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_is_in_its_place_whatever_the_grain() {
        for n in [0, 1, 7, 100, 1001] {
            for w in [1, 3] {
                for g in [1, 3, n.max(1)] {
                    let v = par_filled(
                        Pool::Global,
                        Level::parallel(),
                        n,
                        w,
                        g,
                        || (),
                        |lo, _, s| {
                            s.fill_with(|k| format!("{}", lo * w + k));
                        },
                    );
                    assert_eq!(v, (0..n * w).map(|i| i.to_string()).collect::<Vec<_>>());
                }
            }
        }
    }

    #[test]
    fn a_panicking_chunk_panics_the_call_and_drops_nothing_twice() {
        let r = std::panic::catch_unwind(|| {
            par_filled(
                Pool::Global,
                Level::parallel(),
                64,
                1,
                4,
                || (),
                |lo, _, s| {
                    s.fill_with(|k| {
                        assert!(lo + k != 37, "element 37");
                        vec![lo + k]
                    })
                },
            )
        });
        assert!(r.is_err());
    }

    #[test]
    fn slots_left_unwritten_are_an_error_not_a_vec() {
        let r = std::panic::catch_unwind(|| filled::<String, _>(3, |s| s.extend(["a".into()])));
        assert!(r.is_err());
        let r = std::panic::catch_unwind(|| {
            par_filled(
                Pool::Global,
                Level::parallel(),
                8,
                1,
                2,
                || (),
                |lo, len, s| {
                    // The chunk that holds position 4 writes nothing (wherever chunks start).
                    if !(lo..lo + len).contains(&4) {
                        s.fill_with(|k| k.to_string())
                    }
                },
            )
        });
        assert!(r.is_err());
        let r = std::panic::catch_unwind(|| {
            filled::<i64, _>(6, |s| {
                s.part(3, |mut p| {
                    p.extend([1, 2]);
                    p.done()
                });
                s.pad(0)
            })
        });
        let msg = r.expect_err("a part left unwritten");
        assert_eq!(
            msg.downcast_ref::<String>().map(String::as_str),
            Some("internal error: a part of 3 results got 2")
        );
    }

    #[test]
    fn writers_move_the_cursor_past_what_they_wrote() {
        let (v, ()) = filled::<i64, _>(10, |s| {
            assert_eq!(s.extend([1, 2]), 2);
            s.fill_upto(4, |k| 10 * k as i64);
            s.fill_upto(3, |_| unreachable!("behind the cursor"));
            s.part(3, |mut p| {
                p.fill_with(|k| -(k as i64));
                p.done()
            });
            assert_eq!(s.written(), 7);
            assert_eq!(s.len(), 10);
            s.pad(9);
        });
        assert_eq!(v, [1, 2, 20, 30, 0, -1, -2, 9, 9, 9]);
        let (parts, sums) = par_filled_parts::<i64, i64, i64, _, _, _>(
            &[2, 0, 3],
            vec![1, 2, 3],
            1,
            || (),
            |_, d, s| {
                s.fill_with(|k| d * 10 + k as i64);
                d
            },
        );
        assert_eq!(parts, [10, 11, 30, 31, 32]);
        assert_eq!(sums, [1, 2, 3]);
    }
}
