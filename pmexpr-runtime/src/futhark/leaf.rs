//! Marshaling for the Futhark target: a captured value crosses into a Futhark entry point as its
//! *leaves* — its primitives and regular arrays of primitives — and the result comes back the same
//! way (the generator's `leaf_paths`, `pmexpr_core::codegen::futhark`).
//!
//! | PMExpr value (runtime type) | leaves |
//! |---|---|
//! | a number or `bool` | one scalar (`isize` and `usize` as Futhark's `i64` and `u64`) |
//! | `Seq<T>` | the leaves of `T`, one dimension added (all elements must have the same shape) |
//! | tuples (records, fields in label order) | the leaves of each field, in order |
//! | `()` | none |
//!
//! So `Vec<(i64, Vec<f64>)>` crosses as a `[]i64` and a `[][]f64`. A top-level sequence of numbers
//! is passed without a copy (the Futhark library copies it into its own memory).

use std::borrow::Cow;
use std::fmt;

use pmexpr_abi::Number;

use crate::numeric::Scalar;
use crate::prim::{Same, Which};
use crate::seq::Seq;
use crate::tensor::{Element, TensorRef};

/// The elements of a leaf.
#[derive(Debug, Clone, PartialEq)]
pub enum Data<'a> {
    /// `i64` elements.
    I64(Cow<'a, [i64]>),
    /// `f64` elements.
    F64(Cow<'a, [f64]>),
    /// `i32` elements.
    I32(Cow<'a, [i32]>),
    /// `f32` elements.
    F32(Cow<'a, [f32]>),
    /// `bool` elements.
    Bool(Cow<'a, [bool]>),
    /// `i8` elements.
    I8(Cow<'a, [i8]>),
    /// `i16` elements.
    I16(Cow<'a, [i16]>),
    /// `u8` elements.
    U8(Cow<'a, [u8]>),
    /// `u16` elements.
    U16(Cow<'a, [u16]>),
    /// `u32` elements.
    U32(Cow<'a, [u32]>),
    /// `u64` elements (also those of a `usize`, which Futhark has no type of its own for).
    U64(Cow<'a, [u64]>),
}

impl Data<'_> {
    /// The element type.
    pub fn number(&self) -> Number {
        match self {
            Data::I64(_) => Number::I64,
            Data::F64(_) => Number::F64,
            Data::I32(_) => Number::I32,
            Data::F32(_) => Number::F32,
            Data::Bool(_) => Number::Bool,
            Data::I8(_) => Number::I8,
            Data::I16(_) => Number::I16,
            Data::U8(_) => Number::U8,
            Data::U16(_) => Number::U16,
            Data::U32(_) => Number::U32,
            Data::U64(_) => Number::U64,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::I64(d) => d.len(),
            Data::F64(d) => d.len(),
            Data::I32(d) => d.len(),
            Data::F32(d) => d.len(),
            Data::Bool(d) => d.len(),
            Data::I8(d) => d.len(),
            Data::I16(d) => d.len(),
            Data::U8(d) => d.len(),
            Data::U16(d) => d.len(),
            Data::U32(d) => d.len(),
            Data::U64(d) => d.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One primitive or regular array of primitives: `shape` is empty for a scalar (one element).
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf<'a> {
    /// The dimensions, outermost first.
    pub shape: Vec<i64>,
    /// The elements in row-major order.
    pub data: Data<'a>,
}

impl Leaf<'_> {
    /// Its rank (0 for a scalar).
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

/// Why a value cannot cross into Futhark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarshalError {
    /// Sequences at one level have different lengths: Futhark arrays are regular.
    Irregular {
        /// One length.
        expected: usize,
        /// Another.
        found: usize,
    },
    /// The leaves that came back do not have the shape or type of the result (a bug).
    Mismatch(String),
    /// A value that has no Futhark form (a tensor).
    Unsupported(String),
}

impl fmt::Display for MarshalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MarshalError::Irregular { expected, found } => write!(
                f,
                "a sequence of sequences is not regular (lengths {expected} and {found}); Futhark arrays must be regular"
            ),
            MarshalError::Mismatch(what) => write!(
                f,
                "the Futhark library returned {what} (a bug in pmexpr: please report it)"
            ),
            MarshalError::Unsupported(what) => write!(f, "{what} cannot cross into Futhark"),
        }
    }
}

/// A number or `bool` as the Futhark C API passes it.
pub trait FutharkPrim: Copy + 'static {
    /// Its type.
    const NUMBER: Number;
    /// Wraps elements.
    fn data(elems: Cow<'_, [Self]>) -> Data<'_>;
    /// Unwraps elements of this type.
    fn elems(data: Data<'static>) -> Option<Vec<Self>>;
    /// The first element, if the elements have this type.
    fn first(data: &Data<'_>) -> Option<Self>;
}

/// `Cow` elements of `A` as `Cow` elements of `B`, the same type.
fn cow<'a, A: Clone, B: Clone>(w: &Same<A, B>, elems: Cow<'a, [A]>) -> Cow<'a, [B]> {
    match elems {
        Cow::Borrowed(s) => Cow::Borrowed(w.slice(s)),
        Cow::Owned(v) => Cow::Owned(w.vec_to(v)),
    }
}

/// `isize` or `usize` elements as the `i64` or `u64` elements Futhark takes: the same bytes
/// (pmexpr's targets are 64-bit), so a borrowed slice crosses without a copy.
fn same_bytes<'a, A: Copy, B: Copy>(elems: Cow<'a, [A]>, to: fn(A) -> B) -> Cow<'a, [B]> {
    const { assert!(size_of::<usize>() == 8, "pmexpr's targets are 64-bit") };
    assert!(size_of::<A>() == size_of::<B>() && align_of::<A>() == align_of::<B>());
    match elems {
        Cow::Borrowed(s) => {
            // SAFETY: `A` and `B` are `isize`/`i64` or `usize`/`u64` (the only callers): the
            // same size and alignment (checked above) and every bit pattern valid in both.
            let b = unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<B>(), s.len()) };
            Cow::Borrowed(b)
        }
        Cow::Owned(v) => Cow::Owned(v.into_iter().map(to).collect()),
    }
}

/// What Futhark calls the type of a number: `isize` and `usize` cross as `i64` and `u64`.
const fn futhark_number(n: Number) -> Number {
    match n {
        Number::Isize => Number::I64,
        Number::Usize => Number::U64,
        n => n,
    }
}

// Every scalar crosses as itself: the number traits know nothing of Futhark, so it is
// implemented here for all of them, from which primitive type each is.
impl<T: Scalar> FutharkPrim for T {
    const NUMBER: Number = futhark_number(<T as Scalar>::NUMBER);
    fn data(elems: Cow<'_, [Self]>) -> Data<'_> {
        match T::WHICH {
            Which::I64(w) => Data::I64(cow(&w, elems)),
            Which::F64(w) => Data::F64(cow(&w, elems)),
            Which::I32(w) => Data::I32(cow(&w, elems)),
            Which::F32(w) => Data::F32(cow(&w, elems)),
            Which::Bool(w) => Data::Bool(cow(&w, elems)),
            Which::I8(w) => Data::I8(cow(&w, elems)),
            Which::I16(w) => Data::I16(cow(&w, elems)),
            Which::U8(w) => Data::U8(cow(&w, elems)),
            Which::U16(w) => Data::U16(cow(&w, elems)),
            Which::U32(w) => Data::U32(cow(&w, elems)),
            Which::U64(w) => Data::U64(cow(&w, elems)),
            Which::Isize(w) => Data::I64(same_bytes(cow(&w, elems), |x| x as i64)),
            Which::Usize(w) => Data::U64(same_bytes(cow(&w, elems), |x| x as u64)),
        }
    }
    fn elems(data: Data<'static>) -> Option<Vec<Self>> {
        match (T::WHICH, data) {
            (Which::I64(w), Data::I64(d)) => Some(w.vec_from(d.into_owned())),
            (Which::F64(w), Data::F64(d)) => Some(w.vec_from(d.into_owned())),
            (Which::I32(w), Data::I32(d)) => Some(w.vec_from(d.into_owned())),
            (Which::F32(w), Data::F32(d)) => Some(w.vec_from(d.into_owned())),
            (Which::Bool(w), Data::Bool(d)) => Some(w.vec_from(d.into_owned())),
            (Which::I8(w), Data::I8(d)) => Some(w.vec_from(d.into_owned())),
            (Which::I16(w), Data::I16(d)) => Some(w.vec_from(d.into_owned())),
            (Which::U8(w), Data::U8(d)) => Some(w.vec_from(d.into_owned())),
            (Which::U16(w), Data::U16(d)) => Some(w.vec_from(d.into_owned())),
            (Which::U32(w), Data::U32(d)) => Some(w.vec_from(d.into_owned())),
            (Which::U64(w), Data::U64(d)) => Some(w.vec_from(d.into_owned())),
            (Which::Isize(w), Data::I64(d)) => {
                Some(w.vec_from(d.iter().map(|x| *x as isize).collect()))
            }
            (Which::Usize(w), Data::U64(d)) => {
                Some(w.vec_from(d.iter().map(|x| *x as usize).collect()))
            }
            _ => None,
        }
    }
    fn first(data: &Data<'_>) -> Option<Self> {
        match (T::WHICH, data) {
            (Which::I64(w), Data::I64(d)) => d.first().map(|x| w.from(*x)),
            (Which::F64(w), Data::F64(d)) => d.first().map(|x| w.from(*x)),
            (Which::I32(w), Data::I32(d)) => d.first().map(|x| w.from(*x)),
            (Which::F32(w), Data::F32(d)) => d.first().map(|x| w.from(*x)),
            (Which::Bool(w), Data::Bool(d)) => d.first().map(|x| w.from(*x)),
            (Which::I8(w), Data::I8(d)) => d.first().map(|x| w.from(*x)),
            (Which::I16(w), Data::I16(d)) => d.first().map(|x| w.from(*x)),
            (Which::U8(w), Data::U8(d)) => d.first().map(|x| w.from(*x)),
            (Which::U16(w), Data::U16(d)) => d.first().map(|x| w.from(*x)),
            (Which::U32(w), Data::U32(d)) => d.first().map(|x| w.from(*x)),
            (Which::U64(w), Data::U64(d)) => d.first().map(|x| w.from(*x)),
            (Which::Isize(w), Data::I64(d)) => d.first().map(|x| w.from(*x as isize)),
            (Which::Usize(w), Data::U64(d)) => d.first().map(|x| w.from(*x as usize)),
            _ => None,
        }
    }
}

impl<T: Scalar> FutharkArg for T {
    fn stack<'s>(
        items: &[&'s Self],
        outer: &[i64],
        out: &mut Vec<Leaf<'s>>,
    ) -> Result<(), MarshalError> {
        let elems: Vec<T> = items.iter().map(|x| **x).collect();
        out.push(Leaf {
            shape: outer.to_vec(),
            data: T::data(Cow::Owned(elems)),
        });
        Ok(())
    }
    fn stack_slices<'s>(
        slices: &[&'s [Self]],
        outer: &[i64],
        out: &mut Vec<Leaf<'s>>,
    ) -> Result<(), MarshalError> {
        let elems = match slices {
            // The common case, a captured `Vec` of numbers: no copy here.
            [one] => Cow::Borrowed(*one),
            many => Cow::Owned(many.concat()),
        };
        out.push(Leaf {
            shape: outer.to_vec(),
            data: T::data(elems),
        });
        Ok(())
    }
}

impl<T: Scalar> FutharkResult for T {
    fn unstack(leaves: &mut Leaves, outer: &[i64]) -> Result<Vec<Self>, MarshalError> {
        let leaf = leaves.next(<T as FutharkPrim>::NUMBER, outer.len())?;
        if leaf.shape != outer {
            return Err(MarshalError::Mismatch(format!(
                "an array of shape {:?} where {:?} was expected",
                leaf.shape, outer
            )));
        }
        T::elems(leaf.data).ok_or_else(|| MarshalError::Mismatch("elements of another type".into()))
    }
}

/// A value that crosses into a Futhark entry point as its leaves.
pub trait FutharkArg {
    /// Appends the leaves of `items`, all the values at one sequence level, whose shape is
    /// `outer` (its product is `items.len()`).
    fn stack<'s>(
        items: &[&'s Self],
        outer: &[i64],
        out: &mut Vec<Leaf<'s>>,
    ) -> Result<(), MarshalError>;

    /// [`FutharkArg::stack`] of the elements of `slices`, one after the other (numbers override it
    /// to copy whole slices).
    fn stack_slices<'s>(
        slices: &[&'s [Self]],
        outer: &[i64],
        out: &mut Vec<Leaf<'s>>,
    ) -> Result<(), MarshalError>
    where
        Self: Sized,
    {
        let items: Vec<&'s Self> = slices.iter().flat_map(|s| s.iter()).collect();
        Self::stack(&items, outer, out)
    }
}

/// The leaves of one value, in order.
pub fn leaves_of<T: FutharkArg + ?Sized>(value: &T) -> Result<Vec<Leaf<'_>>, MarshalError> {
    let mut out = Vec::new();
    T::stack(&[value], &[], &mut out)?;
    Ok(out)
}

/// The leaves an entry point returned, consumed in order by [`FutharkResult::unstack`].
pub struct Leaves {
    leaves: std::vec::IntoIter<Leaf<'static>>,
}

impl Leaves {
    /// The leaves, in the order of the entry point's outputs.
    pub fn new(leaves: Vec<Leaf<'static>>) -> Self {
        Leaves {
            leaves: leaves.into_iter(),
        }
    }

    /// The next leaf, which must have elements of type `number` and `rank` dimensions.
    fn next(&mut self, number: Number, rank: usize) -> Result<Leaf<'static>, MarshalError> {
        let leaf = self
            .leaves
            .next()
            .ok_or_else(|| MarshalError::Mismatch("fewer results than expected".into()))?;
        if leaf.data.number() != number || leaf.rank() != rank {
            return Err(MarshalError::Mismatch(format!(
                "a {}-dimensional array of {} where a {rank}-dimensional array of {} was expected",
                leaf.rank(),
                leaf.data.number().futhark_name(),
                number.futhark_name()
            )));
        }
        Ok(leaf)
    }

    /// The dimension `k` of the next leaf (how a sequence learns its length).
    fn peek_dim(&self, k: usize) -> Result<i64, MarshalError> {
        self.leaves
            .as_slice()
            .first()
            .and_then(|l| l.shape.get(k).copied())
            .ok_or_else(|| MarshalError::Mismatch("fewer results than expected".into()))
    }
}

/// A result rebuilt from the leaves an entry point returned.
pub trait FutharkResult: Sized {
    /// All the values at one sequence level whose shape is `outer`, in row-major order.
    fn unstack(leaves: &mut Leaves, outer: &[i64]) -> Result<Vec<Self>, MarshalError>;
}

/// The value of an accelerated expression from its leaves.
pub fn from_leaves<T: FutharkResult>(leaves: Vec<Leaf<'static>>) -> Result<T, MarshalError> {
    let mut it = Leaves::new(leaves);
    let value = T::unstack(&mut it, &[])?.pop();
    match (value, it.leaves.len()) {
        (Some(v), 0) => Ok(v),
        (None, _) => Err(MarshalError::Mismatch("no value".into())),
        (Some(_), _) => Err(MarshalError::Mismatch("more results than expected".into())),
    }
}

impl FutharkArg for () {
    fn stack<'s>(_: &[&'s Self], _: &[i64], _: &mut Vec<Leaf<'s>>) -> Result<(), MarshalError> {
        Ok(())
    }
}

impl FutharkResult for () {
    fn unstack(_: &mut Leaves, outer: &[i64]) -> Result<Vec<Self>, MarshalError> {
        Ok(vec![(); outer.iter().product::<i64>() as usize])
    }
}

impl<T: FutharkArg> FutharkArg for Seq<'_, T> {
    fn stack<'s>(
        items: &[&'s Self],
        outer: &[i64],
        out: &mut Vec<Leaf<'s>>,
    ) -> Result<(), MarshalError> {
        let len = items.first().map_or(0, |s| s.len());
        if let Some(other) = items.iter().find(|s| s.len() != len) {
            return Err(MarshalError::Irregular {
                expected: len,
                found: other.len(),
            });
        }
        let slices: Vec<&'s [T]> = items.iter().map(|s| s.as_slice()).collect();
        let mut shape = outer.to_vec();
        shape.push(len as i64);
        T::stack_slices(&slices, &shape, out)
    }
}

impl<T: FutharkResult> FutharkResult for Seq<'_, T> {
    fn unstack(leaves: &mut Leaves, outer: &[i64]) -> Result<Vec<Self>, MarshalError> {
        let len = leaves.peek_dim(outer.len())?;
        let mut shape = outer.to_vec();
        shape.push(len);
        let elems = T::unstack(leaves, &shape)?;
        let count: i64 = outer.iter().product();
        if count == 1 {
            // The common case, a sequence result: its buffer as it came back.
            return Ok(vec![Seq::from_vec(elems)]);
        }
        if len == 0 {
            return Ok((0..count).map(|_| Seq::empty()).collect());
        }
        let mut it = elems.into_iter();
        Ok((0..count)
            .map(|_| Seq::from_vec(it.by_ref().take(len as usize).collect()))
            .collect())
    }
}

// A tensor has no Futhark form. Generated code names these bounds for the type a site leaves open
// (which may be a tensor); the site then never gets this far, since no entry point exists for it
// (`crate::numeric::open_instantiation`).
impl<T: Element> FutharkArg for TensorRef<'_, T> {
    fn stack<'s>(_: &[&'s Self], _: &[i64], _: &mut Vec<Leaf<'s>>) -> Result<(), MarshalError> {
        Err(MarshalError::Unsupported(format!(
            "a pmexpr::Tensor<{}>",
            T::NUMBER
        )))
    }
}

impl<T: Element> FutharkResult for TensorRef<'_, T> {
    fn unstack(_: &mut Leaves, _: &[i64]) -> Result<Vec<Self>, MarshalError> {
        Err(MarshalError::Unsupported(format!(
            "a pmexpr::Tensor<{}>",
            T::NUMBER
        )))
    }
}

macro_rules! tuples {
    ($(($($t:ident $i:tt $_c:ident $_r:ident),+))*) => {$(
        impl<$($t: FutharkArg),+> FutharkArg for ($($t,)+) {
            fn stack<'s>(items: &[&'s Self], outer: &[i64], out: &mut Vec<Leaf<'s>>) -> Result<(), MarshalError> {
                $(
                    let field: Vec<&'s $t> = items.iter().map(|x| &x.$i).collect();
                    $t::stack(&field, outer, out)?;
                )+
                Ok(())
            }
        }

        impl<$($t: FutharkResult),+> FutharkResult for ($($t,)+) {
            #[allow(non_snake_case)]
            fn unstack(leaves: &mut Leaves, outer: &[i64]) -> Result<Vec<Self>, MarshalError> {
                $( let mut $t = $t::unstack(leaves, outer)?.into_iter(); )+
                let count: i64 = outer.iter().product();
                (0..count)
                    .map(|_| Ok(($($t.next().ok_or_else(|| MarshalError::Mismatch("too few elements".into()))?,)+)))
                    .collect()
            }
        }
    )*};
}
for_tuples!(tuples);

#[cfg(test)]
mod tests {
    use super::*;

    fn seq<T>(v: Vec<T>) -> Seq<'static, T> {
        Seq::from_vec(v)
    }

    #[test]
    fn numbers_and_a_vector_without_a_copy() {
        let v = vec![1.0, 2.0, 3.0];
        let s = Seq::borrowed(&v);
        let leaves = leaves_of(&s).unwrap();
        assert_eq!(leaves.len(), 1);
        assert_eq!(leaves[0].shape, [3]);
        match &leaves[0].data {
            Data::F64(Cow::Borrowed(d)) => assert_eq!(d.as_ptr(), v.as_ptr()),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            leaves_of(&7_i32).unwrap(),
            [Leaf {
                shape: vec![],
                data: Data::I32(Cow::Owned(vec![7]))
            }]
        );
    }

    #[test]
    fn records_in_sequences_cross_as_one_array_per_field() {
        // Vec<(i64, Vec<f64>)>: a []i64 of first fields and a [][]f64 of second fields.
        let v = seq(vec![
            (1_i64, seq(vec![1.0, 2.0])),
            (2, seq(vec![3.0, 4.0])),
            (3, seq(vec![5.0, 6.0])),
        ]);
        let leaves = leaves_of(&v).unwrap();
        assert_eq!(leaves.len(), 2);
        assert_eq!(leaves[0].shape, [3]);
        assert_eq!(leaves[0].data, Data::I64(Cow::Owned(vec![1, 2, 3])));
        assert_eq!(leaves[1].shape, [3, 2]);
        assert_eq!(
            leaves[1].data,
            Data::F64(Cow::Owned(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        );
        // And back.
        let owned: Vec<Leaf<'static>> = leaves
            .into_iter()
            .map(|l| Leaf {
                shape: l.shape,
                data: match l.data {
                    Data::I64(d) => Data::I64(Cow::Owned(d.into_owned())),
                    Data::F64(d) => Data::F64(Cow::Owned(d.into_owned())),
                    other => panic!("{other:?}"),
                },
            })
            .collect();
        let back: Seq<'static, (i64, Seq<'static, f64>)> = from_leaves(owned).unwrap();
        let back: Vec<(i64, Vec<f64>)> = back
            .as_slice()
            .iter()
            .map(|(a, s)| (*a, s.as_slice().to_vec()))
            .collect();
        assert_eq!(
            back,
            [
                (1, vec![1.0, 2.0]),
                (2, vec![3.0, 4.0]),
                (3, vec![5.0, 6.0])
            ]
        );
    }

    #[test]
    fn irregular_sequences_are_refused() {
        let v = seq(vec![seq(vec![1_i64]), seq(vec![2, 3])]);
        let e = leaves_of(&v).unwrap_err();
        assert_eq!(
            e,
            MarshalError::Irregular {
                expected: 1,
                found: 2
            }
        );
        assert!(e.to_string().contains("not regular"), "{e}");
    }

    #[test]
    fn empty_sequences_keep_their_inner_shape() {
        let v: Seq<'static, Seq<'static, f32>> = seq(vec![]);
        let leaves = leaves_of(&v).unwrap();
        assert_eq!(leaves[0].shape, [0, 0]);
        assert!(leaves[0].data.is_empty());
        let back: Seq<'static, Seq<'static, f32>> = from_leaves(
            leaves
                .into_iter()
                .map(|l| Leaf {
                    shape: l.shape,
                    data: Data::F32(Cow::Owned(vec![])),
                })
                .collect(),
        )
        .unwrap();
        assert!(back.is_empty());
    }

    #[test]
    fn results_of_the_wrong_shape_are_errors() {
        let leaves = vec![Leaf {
            shape: vec![2],
            data: Data::I64(Cow::Owned(vec![1, 2])),
        }];
        assert!(matches!(
            from_leaves::<f64>(leaves.clone()),
            Err(MarshalError::Mismatch(_))
        ));
        assert!(matches!(
            from_leaves::<(Seq<'static, i64>, i64)>(leaves.clone()),
            Err(MarshalError::Mismatch(_))
        ));
        let ok: Seq<'static, i64> = from_leaves(leaves).unwrap();
        assert_eq!(ok.as_slice(), [1, 2]);
    }
}
