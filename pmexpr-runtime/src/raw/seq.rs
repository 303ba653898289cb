//! The representation of [`Seq`] (see [`crate::seq`]): the raw pointer and length of its elements
//! beside their owner.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, Range};
use std::ptr::NonNull;
use std::sync::Arc;

/// An immutable PMExpr sequence: borrowed from the caller, or owned and shared.
///
/// Reading an element is the hot path of generated loops, so a sequence keeps the pointer and
/// length of its elements beside their owner: `as_slice` is two loads, with no branch and no
/// range check (measured on the Parboil stencil, whose innermost loop reads six sequences).
pub struct Seq<'a, T> {
    /// The first element of this sequence (dangling when it is empty).
    ptr: NonNull<T>,
    len: usize,
    /// The buffer `ptr` points into, or `None` when the elements are borrowed for `'a`.
    owner: Option<Owner<T>>,
    borrowed: PhantomData<&'a [T]>,
}

/// Who owns the elements of an owned sequence: a `Vec` made elsewhere (a parallel `collect`,
/// a captured value's copy), or one allocation made for the elements (`Seq::from_exact_iter`),
/// which saves a short sequence (a row made in an inner loop) one allocation and one free.
///
/// The rows that a `map` of rows fills ([`Seq::rows`]) are views of one flat buffer, and holding
/// that buffer once per row would cost two atomic operations per row, which the Parboil stencil's
/// short rows (32 elements) measured at a quarter of its time. So their sequence owns the buffer
/// once (`Rows`), and the rows inside it borrow it from there (`InRows`); a row copied out of
/// the sequence (`clone`, `view`) takes a count of its own.
enum Owner<T> {
    Vec(Arc<Vec<T>>),
    Slice(Arc<[T]>),
    Rows(Arc<Rows<T>>),
    /// A row stored in a `Rows` buffer: the `Arc<Vec<T>>` (as `Arc::into_raw` gives it) that the
    /// buffer holds, not counted for this row.
    InRows(NonNull<Vec<T>>),
}

/// The rows of a `map` of rows, each a view of one flat buffer, which this holds once.
///
/// Invariant: every element is an `InRows` view of `flat`, stored here and nowhere else: the
/// elements are never handed out mutably (`Seq::unique_data` refuses `Rows`) nor moved out
/// (`into_vec` moves only out of `Owner::Vec`), so an element lives exactly as long as this
/// buffer and whatever copies it gets an owning `Owner` from `Owner::clone`.
struct Rows<T> {
    rows: Vec<T>,
    /// The flat buffer: an `Arc<Vec<U>>` from `Arc::into_raw`, released by `release`.
    flat: NonNull<()>,
    release: unsafe fn(NonNull<()>),
}

impl<T> Drop for Rows<T> {
    fn drop(&mut self) {
        // The rows are `InRows` views, which own nothing, so they are forgotten rather than
        // dropped one by one (the Parboil stencil's drops of its rows, on one thread, measured 3%
        // of its time).
        // SAFETY: forgetting elements is always sound; `flat` came from `Arc::into_raw` with the
        // type `release` was made for, and is released once, here.
        unsafe {
            self.rows.set_len(0);
            (self.release)(self.flat);
        }
    }
}

impl<T> Clone for Owner<T> {
    fn clone(&self) -> Self {
        match self {
            Owner::Vec(v) => Owner::Vec(Arc::clone(v)),
            Owner::Slice(s) => Owner::Slice(Arc::clone(s)),
            Owner::Rows(r) => Owner::Rows(Arc::clone(r)),
            // SAFETY: `p` is the pointer `Arc::into_raw` returned (see `Seq::rows`), so it may
            // reach the counts; the row lives inside its `Rows` buffer (see `Rows`), which holds
            // that `Arc` alive meanwhile; the copy takes a count of its own, which the new `Arc`
            // owns.
            Owner::InRows(p) => unsafe {
                Arc::increment_strong_count(p.as_ptr());
                Owner::Vec(Arc::from_raw(p.as_ptr()))
            },
        }
    }
}

impl<T> Owner<T> {
    fn as_slice(&self) -> &[T] {
        match self {
            Owner::Vec(v) => v.as_slice(),
            Owner::Slice(s) => s,
            Owner::Rows(r) => &r.rows,
            // SAFETY: as in `clone`, the buffer outlives the row.
            Owner::InRows(p) => unsafe { p.as_ref() },
        }
    }
}

// SAFETY: a `Seq` is a shared `&'a [T]` or an `Arc<Vec<T>>`/`Arc<[T]>` (with a view into it), or
// the rows of such a buffer (of elements that are `Send` and `Sync`, by `Seq::rows`' bounds) that
// one `Arc<Rows>` holds; it is `Send` and `Sync` exactly when those are, which `T: Send + Sync`
// guarantees.
unsafe impl<T: Send + Sync> Send for Seq<'_, T> {}
// SAFETY: as above; a `Seq` only hands out shared access through `&self`.
unsafe impl<T: Send + Sync> Sync for Seq<'_, T> {}

// Invariant: `ptr .. ptr + len` are initialized elements that stay valid and unchanged while this
// `Seq` exists: borrowed for `'a` (`owner` is `None`), or inside the buffer of `owner`, which is
// never reallocated and only written through `make_mut` when this `Seq` is its only holder.

impl<'a, T> Seq<'a, T> {
    /// A sequence that borrows the caller's elements (used when capturing free variables).
    pub const fn borrowed(slice: &'a [T]) -> Self {
        Seq {
            // A slice's pointer is never null.
            ptr: NonNull::from_ref(slice).cast(),
            len: slice.len(),
            owner: None,
            borrowed: PhantomData,
        }
    }

    /// A sequence that owns its elements.
    pub fn from_vec(v: Vec<T>) -> Self {
        Seq::owning(Owner::Vec(Arc::new(v)))
    }

    /// A sequence of the elements of an iterator, made in one allocation when the iterator
    /// knows its exact length (std's `TrustedLen`: `(0..n).map(f)`, `s.iter().map(f)`, a `zip`
    /// of slices; otherwise the elements are collected first and moved once).
    pub fn from_exact_iter<I: Iterator<Item = T>>(iter: I) -> Self {
        Seq::owning(Owner::Slice(iter.collect()))
    }

    fn owning(owner: Owner<T>) -> Self {
        let elements = owner.as_slice();
        Seq {
            // A slice's pointer is never null (dangling when it holds nothing).
            ptr: NonNull::from_ref(elements).cast(),
            len: elements.len(),
            owner: Some(owner),
            borrowed: PhantomData,
        }
    }

    /// The `rows` rows of `w` elements each of `flat` (`rows * w` elements), as one sequence that
    /// holds `flat` once (see `Owner`).
    pub fn rows(flat: Vec<T>, rows: usize, w: usize) -> Seq<'a, Seq<'a, T>>
    where
        T: Send + Sync,
    {
        assert_eq!(
            Some(flat.len()),
            rows.checked_mul(w),
            "Seq::rows: {rows} rows of {w}"
        );
        let flat = Arc::new(flat);
        let base = NonNull::from_ref(flat.as_slice()).cast::<T>();
        // The rows keep the pointer that `into_raw` returns, not one taken from a reference to
        // the `Vec`: only `into_raw`'s may reach the counts in front of the `Vec` (its provenance
        // covers the `Arc`'s whole allocation), which `Owner::clone` and `release` update.
        let held = NonNull::new(Arc::into_raw(flat).cast_mut()).expect("Arc::into_raw is not null");
        let views = (0..rows)
            .map(|r| Seq {
                // SAFETY: `r * w + w <= rows * w`, the buffer's length.
                ptr: unsafe { base.add(r * w) },
                len: w,
                owner: Some(Owner::InRows(held)),
                borrowed: PhantomData,
            })
            .collect();
        /// Drops the `Arc<Vec<T>>` that `Arc::into_raw` made `p` from.
        ///
        /// # Safety
        /// `p` is the very pointer `Arc::into_raw` returned for an `Arc<Vec<T>>`, and the count it
        /// stands for is released once.
        unsafe fn release<T>(p: NonNull<()>) {
            // SAFETY: the caller's contract: `p` is `into_raw`'s pointer (the provenance that
            // `from_raw` needs) to a `Vec<T>`, and its count is dropped only here.
            drop(unsafe { Arc::from_raw(p.cast::<Vec<T>>().as_ptr()) });
        }
        Seq::owning(Owner::Rows(Arc::new(Rows {
            rows: views,
            flat: held.cast(),
            release: release::<T>,
        })))
    }

    /// The empty sequence.
    pub const fn empty() -> Self {
        Seq::borrowed(&[])
    }

    /// The elements as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the invariant above; the slice lives no longer than `self`, which keeps the
        // owner (or the borrow) alive.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The view of the elements at `range` (which must lie within the sequence); O(1).
    pub fn view(&self, range: Range<usize>) -> Self {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "Seq::view out of range"
        );
        Seq {
            // SAFETY: `range.start <= len`, so the pointer stays within (or one past) the
            // elements.
            ptr: unsafe { self.ptr.add(range.start) },
            len: range.end - range.start,
            owner: self.owner.clone(),
            borrowed: PhantomData,
        }
    }

    /// Whether this sequence owns all of its buffer alone: [`Seq::make_mut`] would not copy.
    #[inline]
    pub fn is_unique(&self) -> bool {
        self.unique_data().is_some()
    }

    /// The elements' buffer, to write, when this sequence owns all of it alone: its `Arc` is the
    /// only one and no `Weak` of it exists (what `Arc::get_mut` checks, without its atomic
    /// read-modify-write), and this sequence views the whole buffer.
    #[inline(always)]
    fn unique_data(&self) -> Option<*mut T> {
        let (data, len) = match &self.owner {
            Some(Owner::Vec(v)) if Arc::strong_count(v) == 1 && Arc::weak_count(v) == 0 => {
                let vec = Arc::as_ptr(v).cast_mut();
                // SAFETY: nothing else holds the `Vec` (the counts above; `&self` keeps anyone
                // from cloning this `Arc` meanwhile), so it may be borrowed mutably here.
                let vec = unsafe { &mut *vec };
                (vec.as_mut_ptr(), vec.len())
            }
            Some(Owner::Slice(s)) if Arc::strong_count(s) == 1 && Arc::weak_count(s) == 0 => {
                (Arc::as_ptr(s).cast_mut().cast::<T>(), s.len())
            }
            _ => return None,
        };
        (len == self.len && std::ptr::eq(data, self.ptr.as_ptr())).then_some(data)
    }
}

impl<T: Clone> Seq<'_, T> {
    /// The elements as a `Vec`, without copying when this is the only owner of the whole buffer.
    pub fn into_vec(self) -> Vec<T> {
        self.into_vec_with(<[T]>::to_vec)
    }

    /// The elements as a `Vec`, without copying when this is the only owner of the whole buffer,
    /// else the copy that `copy` makes of them (`cpu` copies in parallel).
    pub fn into_vec_with(mut self, copy: impl FnOnce(&[T]) -> Vec<T>) -> Vec<T> {
        if matches!(self.owner, Some(Owner::Vec(_)))
            && self.is_unique()
            && let Some(Owner::Vec(data)) = self.owner.take()
        {
            return Arc::try_unwrap(data).unwrap_or_else(|shared| copy(&shared));
        }
        // The elements stay owned by `self` (and its owner) while they are copied.
        copy(self.as_slice())
    }

    /// Mutable access to the elements, copying them first unless this sequence is their only owner.
    #[inline(always)]
    pub fn make_mut(&mut self) -> &mut [T] {
        let data = match self.unique_data() {
            Some(data) => data,
            None => self.unshare(),
        };
        // Reads after this go through the pointer taken here.
        self.ptr = NonNull::new(data).unwrap_or(NonNull::dangling());
        // SAFETY: `unique_data`: `data` is the whole buffer of `len` elements, which nothing but
        // this sequence holds; the slice borrows `self` mutably, so no read through `self`
        // overlaps it, and no one can clone `self` meanwhile.
        unsafe { std::slice::from_raw_parts_mut(data, self.len) }
    }

    /// Makes this sequence the only owner of a copy of its elements; their buffer. Out of line:
    /// the write of a loop that owns its sequence only checks (`make_mut`).
    #[cold]
    #[inline(never)]
    fn unshare(&mut self) -> *mut T {
        *self = Seq::from_vec(self.as_slice().to_vec());
        self.unique_data().unwrap_or_else(|| not_unique())
    }
}

#[cold]
#[inline(never)]
fn not_unique() -> ! {
    unreachable!("internal error: a sequence just copied is not its buffer's only owner")
}

impl<T> Deref for Seq<'_, T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> Clone for Seq<'_, T> {
    fn clone(&self) -> Self {
        Seq {
            ptr: self.ptr,
            len: self.len,
            owner: self.owner.clone(),
            borrowed: PhantomData,
        }
    }
}

impl<T> Default for Seq<'_, T> {
    fn default() -> Self {
        Seq::empty()
    }
}

impl<T: fmt::Debug> fmt::Debug for Seq<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<T: PartialEq> PartialEq for Seq<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T> FromIterator<T> for Seq<'_, T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Seq::from_vec(iter.into_iter().collect())
    }
}

/// A sequence that generated code only indexes, taken as a slice once for a loop (a row that a
/// `map` of rows fills: see the code generator's `rows` module), so that the loop keeps its
/// pointer and length in registers.
#[doc(hidden)]
#[derive(Debug)]
pub struct SliceSeq<'a, T>(pub &'a [T]);

impl<T> Clone for SliceSeq<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SliceSeq<'_, T> {}

impl<'a, T> SliceSeq<'a, T> {
    /// The elements.
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [T] {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_sequences_do_not_copy() {
        let v = vec![1_i64, 2, 3];
        let s = Seq::borrowed(&v);
        assert!(std::ptr::eq(s.as_slice().as_ptr(), v.as_ptr()));
        assert_eq!(s.clone().into_vec(), v);
    }

    #[test]
    fn views_share_the_buffer() {
        let s = Seq::from_vec(vec![1_i64, 2, 3, 4]);
        let t = s.view(1..3);
        assert_eq!(&*t, &[2, 3]);
        assert!(std::ptr::eq(&t[0], &s[1]));
        assert_eq!(t.view(1..2).as_slice(), &[3]);
    }

    #[test]
    fn into_vec_moves_a_unique_owned_buffer() {
        let v = vec![5_i64; 8];
        let p = v.as_ptr();
        let s = Seq::from_vec(v);
        let back = s.into_vec();
        assert_eq!(back.as_ptr(), p);
    }

    #[test]
    fn make_mut_copies_only_when_shared() {
        let mut s = Seq::from_vec(vec![1_i64, 2]);
        let p = s.as_ptr();
        s.make_mut()[0] = 7;
        assert_eq!(s.as_ptr(), p, "unique: updated in place");
        let keep = s.clone();
        s.make_mut()[1] = 9;
        assert_eq!(&*keep, &[7, 2], "shared: the other holder is unaffected");
        assert_eq!(&*s, &[7, 9]);
        let v = [1_i64, 2];
        let mut b = Seq::borrowed(&v);
        b.make_mut()[0] = 3;
        assert_eq!(v, [1, 2]);
        assert_eq!(&*b, &[3, 2]);
        // A view is copied before it is written, and the buffer it shares is unchanged.
        let whole = Seq::from_vec(vec![1_i64, 2, 3]);
        let mut part = whole.view(1..3);
        part.make_mut()[0] = 8;
        assert_eq!(&*part, &[8, 3]);
        assert_eq!(&*whole, &[1, 2, 3]);
        // An empty sequence, borrowed or owned.
        let mut e: Seq<'_, i64> = Seq::empty();
        assert!(e.make_mut().is_empty());
        assert!(Seq::<i64>::from_vec(Vec::new()).into_vec().is_empty());
    }

    #[test]
    fn into_vec_copies_a_shared_or_partial_buffer() {
        let s = Seq::from_vec(vec![1_i64, 2, 3]);
        let keep = s.clone();
        assert_eq!(s.into_vec(), vec![1, 2, 3]);
        assert_eq!(keep.view(1..2).into_vec(), vec![2]);
        assert_eq!(&*keep, &[1, 2, 3]);
    }

    #[test]
    #[should_panic(expected = "Seq::view out of range")]
    fn a_view_past_the_end_is_refused() {
        let s = Seq::from_vec(vec![1_i64, 2]);
        let _ = s.view(1..3);
    }

    #[test]
    fn sequences_made_in_one_allocation() {
        let mut s = Seq::from_exact_iter((0..5_i64).map(|i| i * i));
        assert_eq!(&*s, &[0, 1, 4, 9, 16]);
        let p = s.as_ptr();
        s.make_mut()[1] = 7;
        assert_eq!(s.as_ptr(), p, "unique: updated in place");
        let keep = s.clone();
        s.make_mut()[0] = 3;
        assert_eq!(&*keep, &[0, 7, 4, 9, 16]);
        assert_eq!(keep.view(2..4).into_vec(), vec![4, 9]);
        assert_eq!(s.into_vec(), vec![3, 7, 4, 9, 16]);
        assert!(Seq::<i64>::from_exact_iter(std::iter::empty()).is_empty());
    }

    #[test]
    fn rows_share_one_buffer_and_copies_outlive_it() {
        let flat: Vec<i64> = (0..12).collect();
        let p = flat.as_ptr();
        let rows = Seq::rows(flat, 4, 3);
        assert_eq!(rows.len(), 4);
        assert!(std::ptr::eq(rows[0].as_ptr(), p), "no copy");
        assert_eq!(&*rows[2], &[6, 7, 8]);
        // Copies of a row, of a part of one, and of the whole, made and used after the rows
        // are gone (Miri would see a use after free here if a row did not hold its buffer).
        let row = rows[1].clone();
        let part = rows[3].view(1..3);
        let all = rows.clone();
        let mut copy = rows.clone();
        drop(rows);
        assert_eq!(&*row, &[3, 4, 5]);
        assert_eq!(&*part, &[10, 11]);
        assert_eq!(&*all[3], &[9, 10, 11]);
        // Writing rows copies them; the other holder sees no change.
        copy.make_mut()[0] = Seq::from_vec(vec![-1]);
        assert_eq!(&*copy[0], &[-1]);
        assert_eq!(&*all[0], &[0, 1, 2]);
        let back = all.into_vec();
        drop(row);
        assert_eq!(
            back.iter().map(|r| r.to_vec()).collect::<Vec<_>>()[3],
            vec![9, 10, 11]
        );
        // No rows, and rows of nothing.
        assert!(Seq::<i64>::rows(Vec::new(), 0, 5).is_empty());
        assert!(
            Seq::<i64>::rows(Vec::new(), 3, 0)
                .iter()
                .all(|r| r.is_empty())
        );
    }

    #[test]
    fn rows_free_their_buffer_once_after_the_last_copy() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        // Elements that count their drops (each test's own counter: tests run in parallel).
        struct Counted<'c>(i64, &'c AtomicUsize);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.1.fetch_add(1, Ordering::Relaxed);
            }
        }
        let drops = AtomicUsize::new(0);
        let flat: Vec<Counted<'_>> = (0..12).map(|i| Counted(i, &drops)).collect();
        let rows = Seq::rows(flat, 4, 3);
        // Copies of rows (each takes a count through the pointer `into_raw` gave), copies of
        // those, and a copy of the whole; dropped in another order than made.
        let a = rows[0].clone();
        let b = rows[3].view(1..3);
        let c = a.clone();
        let all = rows.clone();
        drop(rows);
        drop(a);
        assert_eq!(
            drops.load(Ordering::Relaxed),
            0,
            "copies still hold the buffer"
        );
        assert_eq!(c.iter().map(|e| e.0).collect::<Vec<_>>(), [0, 1, 2]);
        drop(all);
        drop(c);
        assert_eq!(b.iter().map(|e| e.0).collect::<Vec<_>>(), [10, 11]);
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        drop(b);
        assert_eq!(
            drops.load(Ordering::Relaxed),
            12,
            "each element dropped once"
        );
        // No copy at all: the rows' own count frees it.
        let drops = AtomicUsize::new(0);
        drop(Seq::rows(
            (0..6).map(|i| Counted(i, &drops)).collect(),
            2,
            3,
        ));
        assert_eq!(drops.load(Ordering::Relaxed), 6);
    }

    #[test]
    fn rows_cross_threads() {
        let rows = Seq::rows((0..1000_i64).collect(), 10, 100);
        let handles: Vec<_> = (0..4)
            .map(|t| {
                // One thread gets a row's copy, the other all rows' copy; the rows themselves are
                // dropped here while the threads run.
                let (row, all) = (rows[t].clone(), rows.clone());
                std::thread::spawn(move || row.iter().sum::<i64>() + all[t + 4].iter().sum::<i64>())
            })
            .collect();
        drop(rows);
        let sums: Vec<i64> = handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect();
        let want: Vec<i64> = (0..4_i64)
            .map(|t| {
                (t * 100..t * 100 + 100).sum::<i64>()
                    + ((t + 4) * 100..(t + 4) * 100 + 100).sum::<i64>()
            })
            .collect();
        assert_eq!(sums, want);
    }

    #[test]
    fn sequences_cross_threads() {
        let s = Seq::from_vec((0..1000_i64).collect());
        let v = s.view(10..20);
        let sum: i64 = std::thread::scope(|sc| {
            let h = sc.spawn(|| v.iter().sum::<i64>());
            h.join().expect("no panic")
        });
        assert_eq!(sum, (10..20).sum());
    }
}
