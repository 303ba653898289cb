//! `RowOut`: a row of a `map` of rows ([`Backend::map_rows`](crate::backend::Backend::map_rows)),
//! which generated code fills in place. The rows' buffer is not zeroed first: every slot of a row
//! is written once, by [`RowOut::fill`] or, for a row that the function did not fill, by the
//! backend (with zeros), so the buffer is whole when it becomes a sequence.

use std::mem::MaybeUninit;

use crate::numeric::Scalar;

/// The slots of one row, to be filled once.
#[derive(Debug)]
pub struct RowOut<'r, U> {
    slots: &'r mut [MaybeUninit<U>],
    filled: bool,
}

impl<'r, U: Scalar> RowOut<'r, U> {
    /// Runs `f` on the row of `slots` and returns once every slot is written: the slots that
    /// `f` did not fill hold `U::default()`.
    #[inline(always)]
    pub(crate) fn run(slots: &'r mut [MaybeUninit<U>], f: impl FnOnce(&mut Self)) {
        let mut row = RowOut {
            slots,
            filled: false,
        };
        f(&mut row);
        if !row.filled {
            row.slots.fill(MaybeUninit::new(U::default()));
        }
    }

    /// Writes `values` into the row in order; slots past the last value hold `U::default()`.
    /// The loop is the one over a plain slice (`zip` of two exact-size iterators), so it
    /// vectorizes as that one would.
    ///
    /// # Panics
    /// When `values` yields another number of values than its `len()` said (within the row):
    /// `ExactSizeIterator` is a safe trait, so its length is checked, not trusted. The row is
    /// whole even then.
    #[inline(always)]
    pub fn fill(&mut self, values: impl ExactSizeIterator<Item = U>) {
        let said = values.len();
        let n = said.min(self.slots.len());
        // Counted rather than taken from `len()`: what decides which slots are written.
        let mut written = 0;
        for (slot, v) in self.slots.iter_mut().zip(values) {
            slot.write(v);
            written += 1;
        }
        if written != n {
            wrong_length(self.slots, written, said);
        }
        self.slots[n..].fill(MaybeUninit::new(U::default()));
        self.filled = true;
    }

    /// Writes `f(k)` for every `k` of the row in order, calling `inner` for `k` in `lo..hi` and
    /// `outer` elsewhere: the generated code passes the same function twice, `inner` over the
    /// rows it reads cut to what it reads there, so that its reads need no bounds check
    /// (`codegen/rust/peel.rs` in `pmexpr-core`).
    // Counted loops over `k` itself: the range `lo..hi` is what lets LLVM see `inner`'s reads
    // in range.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    pub fn fill_peeled(
        &mut self,
        lo: usize,
        hi: usize,
        mut outer: impl FnMut(&i64) -> U,
        mut inner: impl FnMut(&i64) -> U,
    ) {
        let slots = &mut *self.slots;
        let hi = hi.min(slots.len());
        let lo = lo.min(hi);
        for k in 0..lo {
            slots[k].write(outer(&(k as i64)));
        }
        for k in lo..hi {
            slots[k].write(inner(&(k as i64)));
        }
        for k in hi..slots.len() {
            slots[k].write(outer(&(k as i64)));
        }
        self.filled = true;
    }
}

/// `RowOut::fill`'s iterator yielded `written` values where its `len()` said `said`: writes the
/// slots it left (so that no slot of the row is uninitialized, whoever catches the panic) and
/// panics.
#[cold]
#[inline(never)]
fn wrong_length<U: Scalar>(slots: &mut [MaybeUninit<U>], written: usize, said: usize) -> ! {
    slots[written..].fill(MaybeUninit::new(U::default()));
    panic!(
        "RowOut::fill: the iterator's len() was {said} but it yielded {written} values \
         (into a row of {})",
        slots.len()
    );
}

/// A buffer of `n` elements, every one of which `init` writes: `init` gets the uninitialized
/// slots and must pass each part of them through [`RowOut::run`] exactly once; it is given them
/// in one piece so that a backend may split them as it likes.
pub(crate) fn buffer<U: Scalar>(n: usize, init: impl FnOnce(&mut [MaybeUninit<U>])) -> Vec<U> {
    let mut buf = Vec::with_capacity(n);
    init(&mut buf.spare_capacity_mut()[..n]);
    // SAFETY: `init` wrote every one of the first `n` slots (through `RowOut::run`, which
    // returns only once its row is written; every caller in this crate covers the slots with
    // rows); if it panicked, this line is not reached.
    unsafe { buf.set_len(n) };
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_whole_however_it_was_filled() {
        let rows = buffer::<i32>(9, |slots| {
            let mut chunks = slots.chunks_mut(3);
            RowOut::run(chunks.next().unwrap(), |r| r.fill([1, 2, 3].into_iter()));
            RowOut::run(chunks.next().unwrap(), |r| r.fill([4].into_iter()));
            RowOut::run(chunks.next().unwrap(), |_| {});
        });
        assert_eq!(rows, [1, 2, 3, 4, 0, 0, 0, 0, 0]);
        let more = buffer::<f32>(2, |slots| {
            RowOut::run(slots, |r| r.fill([1.0, 2.0, 3.0].into_iter()));
        });
        assert_eq!(more, [1.0, 2.0]);
    }

    /// An iterator whose `len()` is `said` whatever it yields: `1, 2, …` up to `gives` values.
    struct Liar {
        said: usize,
        gives: i64,
        at: i64,
    }

    impl Liar {
        fn new(said: usize, gives: i64) -> Self {
            Liar { said, gives, at: 0 }
        }
    }

    impl Iterator for Liar {
        type Item = i64;
        fn next(&mut self) -> Option<i64> {
            (self.at < self.gives).then(|| {
                self.at += 1;
                self.at
            })
        }
    }

    impl ExactSizeIterator for Liar {
        fn len(&self) -> usize {
            self.said
        }
    }

    fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
        p.downcast::<String>().map(|s| *s).unwrap_or_default()
    }

    #[test]
    fn a_fill_whose_iterator_lies_about_its_length_panics_and_leaves_the_row_whole() {
        // (said, gives): too long, too short, past the row and short of it, nothing said.
        for (said, gives, want) in [
            (6, 3, vec![1, 2, 3, 0, 0, 0]),
            (2, 5, vec![1, 2, 3, 4, 5, 0]),
            (9, 4, vec![1, 2, 3, 4, 0, 0]),
            (0, 2, vec![1, 2, 0, 0, 0, 0]),
        ] {
            // Fresh heap memory, so that valgrind sees a slot that nothing wrote.
            let mut v = Vec::<i64>::with_capacity(6);
            let slots = &mut v.spare_capacity_mut()[..6];
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                RowOut::run(slots, |row| row.fill(Liar::new(said, gives)))
            }));
            let msg = panic_message(r.expect_err("a wrong length panics"));
            assert_eq!(
                msg,
                format!(
                    "RowOut::fill: the iterator's len() was {said} but it yielded {gives} values \
                     (into a row of 6)"
                )
            );
            // SAFETY: the row is whole even after the panic: `fill` wrote what the iterator
            // gave and `wrong_length` the rest; this reads all six, as the test's point.
            unsafe { v.set_len(6) };
            assert_eq!(v, want, "{said} {gives}");
        }
        // A lie past the row's end is not seen (the row takes its six values), and harms nothing.
        let row = buffer::<i64>(6, |slots| RowOut::run(slots, |r| r.fill(Liar::new(9, 8))));
        assert_eq!(row, [1, 2, 3, 4, 5, 6]);
        // Honest iterators, shorter and longer than the row.
        let row = buffer::<i64>(6, |slots| RowOut::run(slots, |r| r.fill(Liar::new(2, 2))));
        assert_eq!(row, [1, 2, 0, 0, 0, 0]);
        let row = buffer::<i64>(6, |slots| RowOut::run(slots, |r| r.fill(Liar::new(7, 7))));
        assert_eq!(row, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_lying_iterator_fails_a_map_of_rows_on_every_backend() {
        use crate::backend::{Backend, CpuBackend, DebugBackend, SeqBackend};
        fn run<B: Backend>(n: usize, bad: i64) -> Result<Vec<Vec<i64>>, String> {
            let s: Vec<i64> = (0..n as i64).collect();
            std::panic::catch_unwind(|| {
                let rows = B::map_rows(&s, 64, false, |&x, row: &mut RowOut<'_, i64>| {
                    // Row `bad` yields 3 values where it says 64.
                    row.fill(Liar::new(64, if x == bad { 3 } else { 64 }))
                });
                rows.iter().map(|r| r.to_vec()).collect()
            })
            .map_err(panic_message)
        }
        let want = "RowOut::fill: the iterator's len() was 64 but it yielded 3 values \
                    (into a row of 64)";
        // Rows enough for `cpu` to split the map among threads.
        let n = 4096;
        let ok: Vec<Vec<i64>> = vec![(1..=64).collect(); n];
        assert_eq!(run::<SeqBackend>(n, -1).as_ref(), Ok(&ok));
        assert_eq!(run::<CpuBackend>(n, -1).as_ref(), Ok(&ok));
        assert_eq!(run::<SeqBackend>(n, 5).unwrap_err(), want);
        assert_eq!(run::<DebugBackend>(n, 5).unwrap_err(), want);
        assert_eq!(run::<CpuBackend>(n, 3000).unwrap_err(), want);
    }

    #[test]
    fn a_peeled_row_calls_each_part_in_order() {
        // (lo, hi) as given, clamped to the row: `inner` for `k` in `lo..hi`, `outer` elsewhere.
        for (lo, hi, inner_ks) in [(1, 4, 1..4), (0, 6, 0..6), (3, 2, 2..2), (2, 9, 2..6)] {
            let calls = std::cell::RefCell::new(Vec::new());
            let row = buffer::<i64>(6, |slots| {
                RowOut::run(slots, |r| {
                    r.fill_peeled(
                        lo,
                        hi,
                        |k| {
                            calls.borrow_mut().push(*k);
                            -*k
                        },
                        |k| {
                            calls.borrow_mut().push(*k);
                            *k
                        },
                    )
                });
            });
            let want: Vec<i64> = (0..6)
                .map(|k| if inner_ks.contains(&k) { k } else { -k })
                .collect();
            assert_eq!(row, want, "{lo} {hi}");
            assert_eq!(calls.into_inner(), (0..6).collect::<Vec<_>>(), "{lo} {hi}");
        }
    }
}
