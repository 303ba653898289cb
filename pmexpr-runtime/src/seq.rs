//! `Seq`: the representation of a PMExpr sequence `[T]` inside generated code.
//!
//! Sequences are immutable values. A captured Rust `Vec` or slice is *borrowed* (no copy); a
//! sequence built inside the accelerated expression is *owned* and shared by reference counting,
//! so passing it around never copies its elements. `tail` and `subsequence` are views (O(1)), and
//! `set` updates in place when nothing else holds the sequence, as Futhark's in-place updates do.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// An immutable PMExpr sequence: borrowed from the caller, or owned and shared.
pub struct Seq<'a, T> {
    repr: Repr<'a, T>,
}

enum Repr<'a, T> {
    Borrowed(&'a [T]),
    Owned {
        data: Arc<Vec<T>>,
        range: Range<usize>,
    },
}

impl<'a, T> Seq<'a, T> {
    /// A sequence that borrows the caller's elements (used when capturing free variables).
    pub const fn borrowed(slice: &'a [T]) -> Self {
        Seq {
            repr: Repr::Borrowed(slice),
        }
    }

    /// A sequence that owns its elements.
    pub fn from_vec(v: Vec<T>) -> Self {
        let range = 0..v.len();
        Seq {
            repr: Repr::Owned {
                data: Arc::new(v),
                range,
            },
        }
    }

    /// The empty sequence.
    pub const fn empty() -> Self {
        Seq {
            repr: Repr::Borrowed(&[]),
        }
    }

    /// The elements as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match &self.repr {
            Repr::Borrowed(s) => s,
            Repr::Owned { data, range } => &data[range.clone()],
        }
    }

    /// The view of the elements at `range` (which must lie within the sequence); O(1).
    pub fn view(&self, range: Range<usize>) -> Self {
        debug_assert!(range.start <= range.end && range.end <= self.len());
        match &self.repr {
            Repr::Borrowed(s) => Seq {
                repr: Repr::Borrowed(&s[range]),
            },
            Repr::Owned { data, range: own } => Seq {
                repr: Repr::Owned {
                    data: Arc::clone(data),
                    range: own.start + range.start..own.start + range.end,
                },
            },
        }
    }
}

impl<T: Clone> Seq<'_, T> {
    /// The elements as a `Vec`, without copying when this is the only owner of the whole buffer.
    pub fn into_vec(self) -> Vec<T> {
        match self.repr {
            Repr::Borrowed(s) => s.to_vec(),
            Repr::Owned { data, range } => {
                if range.start == 0 && range.end == data.len() {
                    Arc::try_unwrap(data).unwrap_or_else(|shared| shared.as_ref().clone())
                } else {
                    data[range].to_vec()
                }
            }
        }
    }

    /// Mutable access to the elements, copying them first unless this sequence is their only owner.
    pub fn make_mut(&mut self) -> &mut [T] {
        let unique_whole = matches!(&self.repr, Repr::Owned { data, range }
            if Arc::strong_count(data) == 1 && range.start == 0 && range.end == data.len());
        if !unique_whole {
            *self = Seq::from_vec(self.as_slice().to_vec());
        }
        match &mut self.repr {
            Repr::Owned { data, .. } => Arc::get_mut(data).expect("uniquely owned").as_mut_slice(),
            Repr::Borrowed(_) => unreachable!("made owned above"),
        }
    }
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
        match &self.repr {
            Repr::Borrowed(s) => Seq {
                repr: Repr::Borrowed(s),
            },
            Repr::Owned { data, range } => Seq {
                repr: Repr::Owned {
                    data: Arc::clone(data),
                    range: range.clone(),
                },
            },
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
    }
}
