//! `RowOut`: a row of a `map` of rows ([`Backend::map_rows`](crate::backend::Backend::map_rows)),
//! which generated code fills in place. The rows' buffer is not zeroed first: every slot of a row
//! is written once, by [`RowOut::fill`] or, for a row that the function did not fill, by the
//! backend (with zeros), so the buffer is whole when it becomes a sequence.

use crate::numeric::Scalar;
use crate::raw::slots::{Done, Slots};

/// The slots of one row, to be filled once.
#[derive(Debug)]
pub struct RowOut<'r, U> {
    slots: Slots<'r, U>,
    filled: bool,
}

impl<'r, U: Scalar> RowOut<'r, U> {
    /// Runs `f` on the row of `slots` and gives them back written: the slots that `f` did not
    /// fill hold `U::default()`.
    #[inline(always)]
    pub(crate) fn run(slots: Slots<'r, U>, f: impl FnOnce(&mut Self)) -> Done {
        let mut row = RowOut {
            slots,
            filled: false,
        };
        f(&mut row);
        if !row.filled {
            row.slots.pad(U::default());
        }
        row.slots.done()
    }

    /// Writes `values` into the row in order; slots past the last value hold `U::default()`.
    /// The loop is the one over a plain slice (`zip` of two exact-size iterators), so it
    /// vectorizes as that one would.
    ///
    /// # Panics
    /// When `values` yields another number of values than its `len()` said (within the row):
    /// `ExactSizeIterator` is a safe trait, so its length is checked, not trusted.
    #[inline(always)]
    pub fn fill(&mut self, values: impl ExactSizeIterator<Item = U>) {
        let said = values.len();
        let n = said.min(self.slots.len() - self.slots.written());
        // Counted rather than taken from `len()`: what decides which slots are written.
        let written = self.slots.extend(values);
        if written != n {
            wrong_length(self.slots.len(), written, said);
        }
        self.slots.pad(U::default());
        self.filled = true;
    }

    /// Writes `f(k)` for every `k` of the row in order, calling `inner` for `k` in `lo..hi` and
    /// `outer` elsewhere: the generated code passes the same function twice, `inner` over the
    /// rows it reads cut to what it reads there, so that its reads need no bounds check
    /// (`codegen/rust/peel.rs` in `pmexpr-core`).
    #[inline(always)]
    pub fn fill_peeled(
        &mut self,
        lo: usize,
        hi: usize,
        mut outer: impl FnMut(&i64) -> U,
        mut inner: impl FnMut(&i64) -> U,
    ) {
        let len = self.slots.len();
        let hi = hi.min(len);
        let lo = lo.min(hi);
        // Counted loops over `k` itself: the range `lo..hi` is what lets LLVM see `inner`'s
        // reads in range.
        self.slots.fill_upto(lo, |k| outer(&(k as i64)));
        self.slots.fill_upto(hi, |k| inner(&(k as i64)));
        self.slots.fill_upto(len, |k| outer(&(k as i64)));
        self.filled = true;
    }
}

/// `RowOut::fill`'s iterator yielded `written` values where its `len()` said `said`.
#[cold]
#[inline(never)]
fn wrong_length(row: usize, written: usize, said: usize) -> ! {
    panic!(
        "RowOut::fill: the iterator's len() was {said} but it yielded {written} values \
         (into a row of {row})"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::slots::filled;

    /// One row of `n` slots, written by `f`.
    fn buffer<U: Scalar>(n: usize, f: impl FnOnce(&mut RowOut<'_, U>)) -> Vec<U> {
        filled(n, |slots| slots.part(n, |row| RowOut::run(row, f))).0
    }

    #[test]
    fn a_row_is_whole_however_it_was_filled() {
        let (rows, ()) = filled::<i32, _>(9, |slots| {
            slots.part(3, |row| RowOut::run(row, |r| r.fill([1, 2, 3].into_iter())));
            slots.part(3, |row| RowOut::run(row, |r| r.fill([4].into_iter())));
            slots.part(3, |row| RowOut::run(row, |_| {}));
        });
        assert_eq!(rows, [1, 2, 3, 4, 0, 0, 0, 0, 0]);
        let more = buffer::<f32>(2, |r| r.fill([1.0, 2.0, 3.0].into_iter()));
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
        for (said, gives) in [(6, 3), (2, 5), (9, 4), (0, 2)] {
            let r =
                std::panic::catch_unwind(|| buffer::<i64>(6, |r| r.fill(Liar::new(said, gives))));
            let msg = panic_message(r.expect_err("a wrong length panics"));
            assert_eq!(
                msg,
                format!(
                    "RowOut::fill: the iterator's len() was {said} but it yielded {gives} values \
                     (into a row of 6)"
                )
            );
        }
        // A lie past the row's end is not seen (the row takes its six values), and harms nothing.
        let row = buffer::<i64>(6, |r| r.fill(Liar::new(9, 8)));
        assert_eq!(row, [1, 2, 3, 4, 5, 6]);
        // Honest iterators, shorter and longer than the row.
        let row = buffer::<i64>(6, |r| r.fill(Liar::new(2, 2)));
        assert_eq!(row, [1, 2, 0, 0, 0, 0]);
        let row = buffer::<i64>(6, |r| r.fill(Liar::new(7, 7)));
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
            let row = buffer::<i64>(6, |r| {
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
            let want: Vec<i64> = (0..6)
                .map(|k| if inner_ks.contains(&k) { k } else { -k })
                .collect();
            assert_eq!(row, want, "{lo} {hi}");
            assert_eq!(calls.into_inner(), (0..6).collect::<Vec<_>>(), "{lo} {hi}");
        }
    }
}
