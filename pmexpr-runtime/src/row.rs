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
    #[inline(always)]
    pub fn fill(&mut self, values: impl ExactSizeIterator<Item = U>) {
        let n = values.len().min(self.slots.len());
        for (slot, v) in self.slots.iter_mut().zip(values) {
            slot.write(v);
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
