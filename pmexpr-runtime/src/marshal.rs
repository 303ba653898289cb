//! Marshaling between Rust values and the representation generated code works on.
//!
//! A free Rust variable of an accelerated expression is *captured*: borrowed, and viewed as the
//! PMExpr type that type inference gave it. The generated code names that type by its canonical
//! Rust form `C` (`i64`, `f64`, `bool`, `()`, `Vec<C>`, tuples, `Tensor<T>`) and asks for
//! `Capture<'a, C>`; rustc then reports a variable of the wrong Rust type at the variable itself.
//! Flat sequences of scalars, and of tuples of scalars, are borrowed without copying; nested
//! sequences copy only their outer levels (pointers to the inner slices).
//!
//! The result of an accelerated expression goes back with [`IntoRust`], to its canonical Rust type,
//! or, when it contains a derived struct (`#[derive(pmexpr::Record)]`, whose name PMExpr's
//! structural records do not carry), with [`FromAccel`] to the type the caller expects.
//!
//! A derived struct is captured as [`Named`]`<(Field<K, C>, …)>`: its fields in name order, each
//! named by the key of its name, so that a struct whose field names differ from the site's is
//! rejected at the variable. The derive implements [`Capture`], [`CaptureElem`] and [`FromAccel`].

use std::borrow::Cow;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use crate::seq::Seq;
use crate::site::Site;
use crate::tensor::{Element, Tensor, TensorRef};

/// A Rust value that `accelerate!` can capture as the PMExpr type whose canonical Rust form is `C`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be captured by `accelerate!` as a `{C}`",
    label = "`accelerate!` uses this variable as a `{C}`",
    note = "captured variables are borrowed and may be numbers (i8 i16 i32 i64 isize u8 u16 u32 u64 usize \
            f32 f64), bool, (), tuples of these, `#[derive(pmexpr::Record)]` structs, Vec<T>, [T] or \
            [T; N] of these, and pmexpr::Tensor<T> of a number or bool, held directly or through &, \
            &mut, Box, Rc, Arc or Cow"
)]
pub trait Capture<'a, C> {
    /// The representation in generated code.
    type Repr: 'a;
    /// Views the value for one call; `name` is the variable's name, for error messages.
    fn capture(&'a self, site: &Site, name: &str) -> Self::Repr;
    /// `Some` when the representation is the value's own type (the scalars): a slice of tuples
    /// of such values is then borrowed as it is, not copied. Only this crate can make a
    /// [`SameType`], so no other implementation can claim it.
    #[doc(hidden)]
    const VERBATIM: Option<SameType<Self, Self::Repr>> = None;
}

/// A proof that `A` and `B` are one type: only [`SameType::of`] makes one, as `SameType<T, T>`.
#[doc(hidden)]
#[derive(Debug)]
pub struct SameType<A: ?Sized, B: ?Sized>(PhantomData<(*const A, *const B)>);

impl<T: ?Sized> SameType<T, T> {
    const fn of() -> Self {
        SameType(PhantomData)
    }
}

/// An element of a captured sequence (the element-level half of [`Capture`], which lets flat
/// sequences be borrowed while nested ones are converted).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be captured by `accelerate!` as an element of type `{C}`",
    note = "captured variables are borrowed and may be numbers (i8 i16 i32 i64 isize u8 u16 u32 u64 usize \
            f32 f64), bool, (), tuples of these, `#[derive(pmexpr::Record)]` structs, Vec<T>, [T] or \
            [T; N] of these, and pmexpr::Tensor<T> of a number or bool, held directly or through &, \
            &mut, Box, Rc, Arc or Cow"
)]
pub trait CaptureElem<'a, C>: Sized {
    /// The representation of one element in generated code.
    type Repr: 'a;
    /// Views a slice of elements as a sequence.
    fn capture_seq(s: &'a [Self], site: &Site, name: &str) -> Seq<'a, Self::Repr>;
}

/// Captures `value` as the PMExpr type whose canonical Rust form is `C` (called by generated code
/// with the span of the user's variable). The representation `R` is a parameter rather than
/// `T::Repr`, so that a value of the wrong type is reported once, at the variable.
#[inline]
pub fn capture<'a, C, R, T>(value: &'a T, site: &Site, name: &str) -> R
where
    T: ?Sized + Capture<'a, C, Repr = R>,
{
    value.capture(site, name)
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl<'a> Capture<'a, $t> for $t {
            type Repr = $t;
            #[inline]
            fn capture(&'a self, _: &Site, _: &str) -> $t { *self }
            const VERBATIM: Option<SameType<$t, $t>> = Some(SameType::of());
        }
        impl<'a> CaptureElem<'a, $t> for $t {
            type Repr = $t;
            #[inline]
            fn capture_seq(s: &'a [$t], _: &Site, _: &str) -> Seq<'a, $t> { Seq::borrowed(s) }
        }
        impl IntoRust for $t {
            type Out = $t;
            #[inline]
            fn into_rust(self) -> $t { self }
        }
        impl FromAccel<$t, $t> for $t {
            #[inline]
            fn from_accel(r: $t) -> $t { r }
        }
    )*};
}
#[rustfmt::skip]
scalar!(i64, f64, i32, f32, bool, i8, i16, isize, u8, u16, u32, u64, usize, ());

/// What a Rust program holds its data in — references, `Box`, `Rc`, `Arc`, `Cow` — is captured as
/// what it points to, borrowed through the pointer (a `Arc<Vec<f64>>` is not copied).
macro_rules! through_pointer {
    ($($(#[$doc:meta])* $ptr:ty;)*) => {$(
        $(#[$doc])*
        impl<'a, 'b: 'a, C, T: ?Sized + Capture<'a, C>> Capture<'a, C> for $ptr {
            type Repr = T::Repr;
            #[inline]
            fn capture(&'a self, site: &Site, name: &str) -> T::Repr {
                (**self).capture(site, name)
            }
        }
        $(#[$doc])*
        impl<'a, 'b: 'a, C, T: ?Sized + Capture<'a, C>> CaptureElem<'a, C> for $ptr {
            type Repr = T::Repr;
            fn capture_seq(s: &'a [Self], site: &Site, name: &str) -> Seq<'a, Self::Repr> {
                Seq::from_vec(s.iter().map(|x| (**x).capture(site, name)).collect())
            }
        }
        $(#[$doc])*
        impl<'b, T: ?Sized + ResultRust> ResultRust for $ptr {
            type Out = T::Out;
        }
    )*};
}
through_pointer! {
    &'b T;
    /// A `&mut` is only read.
    &'b mut T;
    Box<T>;
    Rc<T>;
    Arc<T>;
}

/// What `.len()` inside `accelerate!` applies to: a sequence (`Vec`, slice, array), held directly
/// or through a pointer. PMExpr reads `x.len()` as the length of a sequence whatever methods
/// `x`'s own type has, so the generated code asks this of a captured variable whose `.len()` it
/// takes: a struct with a `len` method of its own is then reported in those words, at the
/// variable.
#[diagnostic::on_unimplemented(
    message = "`.len()` inside `accelerate!` is the length of a sequence, and this is a `{Self}`",
    label = "`.len()` is called on this: `accelerate!` reads it as the length of a sequence",
    note = "`.len()` applies to sequences (`Vec`s, slices, arrays); for a struct, call it on the \
            sequence field it means (`self.cells.len()`), or compute the length outside \
            `accelerate!`"
)]
pub trait LenReceiver {}

impl<T> LenReceiver for [T] {}
impl<T> LenReceiver for Vec<T> {}
impl<T, const N: usize> LenReceiver for [T; N] {}
impl<T: ?Sized + LenReceiver> LenReceiver for &T {}
impl<T: ?Sized + LenReceiver> LenReceiver for &mut T {}
impl<T: ?Sized + LenReceiver> LenReceiver for Box<T> {}
impl<T: ?Sized + LenReceiver> LenReceiver for Rc<T> {}
impl<T: ?Sized + LenReceiver> LenReceiver for Arc<T> {}
impl<T: ?Sized + ToOwned + LenReceiver> LenReceiver for Cow<'_, T> {}

/// A `Cow` is captured as what it derefs to, borrowed or owned alike.
impl<'a, 'b: 'a, C, T: ?Sized + ToOwned + Capture<'a, C>> Capture<'a, C> for Cow<'b, T> {
    type Repr = T::Repr;
    #[inline]
    fn capture(&'a self, site: &Site, name: &str) -> T::Repr {
        (**self).capture(site, name)
    }
}

impl<'a, 'b: 'a, C, T: ?Sized + ToOwned + Capture<'a, C>> CaptureElem<'a, C> for Cow<'b, T> {
    type Repr = T::Repr;
    fn capture_seq(s: &'a [Self], site: &Site, name: &str) -> Seq<'a, Self::Repr> {
        Seq::from_vec(s.iter().map(|x| (**x).capture(site, name)).collect())
    }
}

impl<T: ?Sized + ToOwned + ResultRust> ResultRust for Cow<'_, T> {
    type Out = T::Out;
}

impl<'a, C, T: CaptureElem<'a, C>> Capture<'a, Vec<C>> for [T] {
    type Repr = Seq<'a, T::Repr>;
    #[inline]
    fn capture(&'a self, site: &Site, name: &str) -> Self::Repr {
        T::capture_seq(self, site, name)
    }
}

impl<'a, C, T: CaptureElem<'a, C>> Capture<'a, Vec<C>> for Vec<T> {
    type Repr = Seq<'a, T::Repr>;
    #[inline]
    fn capture(&'a self, site: &Site, name: &str) -> Self::Repr {
        T::capture_seq(self, site, name)
    }
}

impl<'a, C, T: CaptureElem<'a, C>, const N: usize> Capture<'a, Vec<C>> for [T; N] {
    type Repr = Seq<'a, T::Repr>;
    #[inline]
    fn capture(&'a self, site: &Site, name: &str) -> Self::Repr {
        T::capture_seq(self, site, name)
    }
}

/// Nested sequences: the inner level is borrowed or converted, the outer level is rebuilt.
fn nested<'a, C, T: ?Sized + Capture<'a, C> + 'a>(
    s: impl Iterator<Item = &'a T>,
    site: &Site,
    name: &str,
) -> Seq<'a, T::Repr> {
    Seq::from_vec(s.map(|x| x.capture(site, name)).collect())
}

impl<'a, C, T: CaptureElem<'a, C>> CaptureElem<'a, Vec<C>> for Vec<T> {
    type Repr = Seq<'a, T::Repr>;
    fn capture_seq(s: &'a [Self], site: &Site, name: &str) -> Seq<'a, Self::Repr> {
        nested(s.iter(), site, name)
    }
}

impl<'a, C, T: CaptureElem<'a, C>, const N: usize> CaptureElem<'a, Vec<C>> for [T; N] {
    type Repr = Seq<'a, T::Repr>;
    fn capture_seq(s: &'a [Self], site: &Site, name: &str) -> Seq<'a, Self::Repr> {
        nested(s.iter(), site, name)
    }
}

impl<'a, T: Element> Capture<'a, Tensor<T>> for Tensor<T> {
    type Repr = TensorRef<'a, T>;
    #[inline]
    fn capture(&'a self, site: &Site, name: &str) -> TensorRef<'a, T> {
        TensorRef::new(self, site, name)
    }
}

impl<'a, T: Element> CaptureElem<'a, Tensor<T>> for Tensor<T> {
    type Repr = TensorRef<'a, T>;
    fn capture_seq(s: &'a [Self], site: &Site, name: &str) -> Seq<'a, TensorRef<'a, T>> {
        nested(s.iter(), site, name)
    }
}

macro_rules! tuples {
    ($(($($t:ident $n:tt $c:ident $r:ident),+))*) => {$(
        impl<'a, $($c, $t: Capture<'a, $c>),+> Capture<'a, ($($c,)+)> for ($($t,)+) {
            type Repr = ($($t::Repr,)+);
            #[inline]
            fn capture(&'a self, site: &Site, name: &str) -> Self::Repr {
                ($(self.$n.capture(site, name),)+)
            }
            // A tuple of values captured as themselves is captured as itself.
            const VERBATIM: Option<SameType<Self, Self::Repr>> =
                if let ($(Some(SameType::<$t, $t::Repr>(_)),)+) = ($($t::VERBATIM,)+) {
                    Some(SameType(PhantomData))
                } else {
                    None
                };
        }
        impl<'a, $($c, $t: Capture<'a, $c> + 'a),+> CaptureElem<'a, ($($c,)+)> for ($($t,)+) {
            type Repr = ($($t::Repr,)+);
            // Not yet behind `raw`: a reinterpretation that this module's invariants make sound.
            #[allow(unsafe_code)]
            fn capture_seq(s: &'a [Self], site: &Site, name: &str) -> Seq<'a, Self::Repr> {
                if let Some(SameType::<Self, Self::Repr>(_)) =
                    <Self as Capture<'a, ($($c,)+)>>::VERBATIM
                {
                    // SAFETY: the representation is `Self` itself (a `SameType` proves it): the
                    // slice is viewed as the type it has.
                    return Seq::borrowed(unsafe { &*(s as *const [Self] as *const [Self::Repr]) });
                }
                Seq::from_vec(s.iter().map(|x| x.capture(site, name)).collect())
            }
        }
        impl<$($t: IntoRust),+> IntoRust for ($($t,)+) {
            type Out = ($($t::Out,)+);
            #[inline]
            fn into_rust(self) -> Self::Out { ($(self.$n.into_rust(),)+) }
        }
        impl<$($c, $r, $t: FromAccel<$c, $r>),+> FromAccel<($($c,)+), ($($r,)+)> for ($($t,)+) {
            #[inline]
            fn from_accel(r: ($($r,)+)) -> Self { ($($t::from_accel(r.$n),)+) }
        }
    )*};
}
for_tuples!(tuples);

/// The conversion of an accelerated expression's result back to its canonical Rust type.
#[diagnostic::on_unimplemented(message = "`{Self}` cannot be returned from `accelerate!`")]
pub trait IntoRust {
    /// The Rust type the caller receives.
    type Out;
    /// Converts the value.
    fn into_rust(self) -> Self::Out;
}

impl<T: IntoRust + Clone> IntoRust for Seq<'_, T> {
    type Out = Vec<T::Out>;
    fn into_rust(self) -> Vec<T::Out> {
        // For scalar elements the map is the identity and the buffer is reused in place.
        self.into_vec()
            .into_iter()
            .map(IntoRust::into_rust)
            .collect()
    }
}

impl<T: Element> IntoRust for TensorRef<'_, T> {
    type Out = Tensor<T>;
    fn into_rust(self) -> Tensor<T> {
        self.to_tensor()
    }
}

/// The canonical Rust form of a derived struct as `accelerate!` captures it: `F` is the tuple of
/// its [`Field`]s in name order. Never constructed.
pub struct Named<F>(PhantomData<F>);

/// A field of a [`Named`] record: `KEY` is the key of its name (FNV-1a, as `pmexpr-core`'s
/// `record::field_key` computes it) and `C` the canonical form of its type. Never constructed.
pub struct Field<const KEY: u64, C>(PhantomData<C>);

/// The conversion of an accelerated expression's result, of representation `R` and canonical form
/// `C` (as for [`Capture`]: derived structs as [`Named`] records), to the Rust type the caller
/// expects; used for results that contain derived structs (`let p: Particle = accelerate!(…)`),
/// whose names PMExpr's structural records do not carry. Implemented for the types of
/// [`IntoRust`]'s results and, by `#[derive(pmexpr::Record)]`, for the struct.
#[diagnostic::on_unimplemented(
    message = "`accelerate!` cannot return its result as `{Self}`",
    label = "the result is a record, which converts to the Rust type expected here",
    note = "a result that contains a `#[derive(pmexpr::Record)]` struct needs its type named, \
            e.g. `let p: Particle = accelerate!(…);`, and that type must have the result's fields"
)]
pub trait FromAccel<C, R>: Sized {
    /// Converts the result.
    fn from_accel(r: R) -> Self;
}

/// Converts a result whose canonical form is `C` to the type the context expects (called by
/// generated code, which names `C`).
#[inline]
pub fn from_accel<C, R, T: FromAccel<C, R>>(r: R) -> T {
    T::from_accel(r)
}

impl<C, R: Clone, T: FromAccel<C, R>> FromAccel<Vec<C>, Seq<'_, R>> for Vec<T> {
    fn from_accel(r: Seq<'_, R>) -> Vec<T> {
        r.into_vec().into_iter().map(T::from_accel).collect()
    }
}

impl<T: Element> FromAccel<Tensor<T>, TensorRef<'_, T>> for Tensor<T> {
    fn from_accel(r: TensorRef<'_, T>) -> Tensor<T> {
        r.to_tensor()
    }
}

/// The Rust type a value of a captured Rust type comes back as when an `accelerate!` only moves
/// it (an element type the expression leaves open): sequences as `Vec`, tuples field by field,
/// derived structs as themselves (the derive implements it). Generated code names the result's
/// Rust type through it, projecting with [`VecElem`] and [`TupleField`].
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot come back from `accelerate!`",
    label = "the result holds values this site only moves, which come back as the Rust type they were captured as",
    note = "captured variables may be numbers (i8 i16 i32 i64 isize u8 u16 u32 u64 usize f32 f64), \
            bool, (), tuples of these, `#[derive(pmexpr::Record)]` structs, Vec<T>, [T] or [T; N] of \
            these, and pmexpr::Tensor<T> of a number or bool, held directly or through &, &mut, Box, \
            Rc, Arc or Cow"
)]
pub trait ResultRust {
    /// The owned Rust type.
    type Out;
}

macro_rules! result_scalar {
    ($($t:ty),*) => {$( impl ResultRust for $t { type Out = $t; } )*};
}
#[rustfmt::skip]
result_scalar!(i64, f64, i32, f32, bool, i8, i16, isize, u8, u16, u32, u64, usize, ());

impl<T: ResultRust> ResultRust for Vec<T> {
    type Out = Vec<T::Out>;
}
impl<T: ResultRust> ResultRust for [T] {
    type Out = Vec<T::Out>;
}
impl<T: ResultRust, const N: usize> ResultRust for [T; N] {
    type Out = Vec<T::Out>;
}
impl<T: Element> ResultRust for Tensor<T> {
    type Out = Tensor<T>;
}

/// The element type of a `Vec` (a step of the projections [`ResultRust`] describes).
#[doc(hidden)]
pub trait VecElem {
    /// The element type.
    type Elem;
}
impl<T> VecElem for Vec<T> {
    type Elem = T;
}

/// The type of field `K` of a tuple (a step of the projections [`ResultRust`] describes).
#[doc(hidden)]
pub trait TupleField<const K: usize> {
    /// The field's type.
    type Field;
}

macro_rules! result_tuples {
    ($(($($t:ident $i:tt $_c:ident $_r:ident),+))*) => {$(
        impl<$($t: ResultRust),+> ResultRust for ($($t,)+) {
            type Out = ($($t::Out,)+);
        }
        result_tuples!(@fields ($($t),+) $($i $t)+);
    )*};
    (@fields ($($all:ident),+) $k:tt $f:ident $($rest:tt)*) => {
        impl<$($all),+> TupleField<{ $k }> for ($($all,)+) {
            type Field = $f;
        }
        result_tuples!(@fields ($($all),+) $($rest)*);
    };
    (@fields ($($all:ident),+)) => {};
}
for_tuples!(result_tuples);

/// Converts a result whose canonical form is `C` to `T`, both named by the marker that the
/// site's capture function returns (where the captured values' Rust types are known).
#[doc(hidden)]
#[inline]
pub fn from_accel_as<C, R, T: FromAccel<C, R>>(_: PhantomData<fn() -> (T, C)>, r: R) -> T {
    T::from_accel(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: Site = Site::new("m.rs", 1, 1);

    #[test]
    fn flat_sequences_are_borrowed() {
        let v = vec![1.5_f64, 2.5];
        let s = capture::<Vec<f64>, _, _>(&v, &SITE, "v");
        assert!(std::ptr::eq(s.as_ptr(), v.as_ptr()));
        let a = [1_i64, 2, 3];
        assert_eq!(&*capture::<Vec<i64>, _, _>(&a, &SITE, "a"), &[1, 2, 3]);
        let r: &[i64] = &a;
        assert_eq!(capture::<Vec<i64>, _, _>(&r, &SITE, "r").len(), 3);
    }

    #[test]
    fn sequences_of_tuples_of_scalars_are_borrowed() {
        let v = vec![(1.5_f64, 2_i32, true), (3.5, 4, false)];
        let s = capture::<Vec<(f64, i32, bool)>, _, _>(&v, &SITE, "v");
        assert!(std::ptr::eq(s.as_ptr(), v.as_ptr()));
        assert_eq!(s.to_vec(), v);
        let a = [((), 1_i64)];
        let s = capture::<Vec<((), i64)>, _, _>(&a, &SITE, "a");
        assert!(std::ptr::eq(s.as_ptr(), a.as_ptr()));
        // A tuple holding a sequence or a reference is converted.
        let w = vec![(1_i64, vec![2_i64]), (3, vec![])];
        let s = capture::<Vec<(i64, Vec<i64>)>, _, _>(&w, &SITE, "w");
        assert_eq!((s[0].0, s[0].1.to_vec(), s[1].1.len()), (1, vec![2], 0));
        let n = vec![(1_i64, (2.0_f64, 3_i64))];
        let s = capture::<Vec<(i64, (f64, i64))>, _, _>(&n, &SITE, "n");
        assert!(
            std::ptr::eq(s.as_ptr(), n.as_ptr()),
            "tuples of tuples of scalars too"
        );
        let (x, y) = (1_i64, 2.0_f64);
        let r = vec![(&x, &y)];
        let s = capture::<Vec<(i64, f64)>, _, _>(&r, &SITE, "r");
        assert_eq!(s.to_vec(), vec![(1, 2.0)]);
    }

    #[test]
    fn nested_sequences_borrow_their_rows() {
        let m = vec![vec![1_i64, 2], vec![3, 4]];
        let s = capture::<Vec<Vec<i64>>, _, _>(&m, &SITE, "m");
        assert!(std::ptr::eq(s[1].as_ptr(), m[1].as_ptr()));
        assert_eq!(s.clone().into_rust(), m);
    }

    #[test]
    fn pointers_are_captured_as_what_they_point_to_without_a_copy() {
        let v = vec![1_i64, 2, 3];
        let a = Arc::new(v.clone());
        let s = capture::<Vec<i64>, _, _>(&a, &SITE, "a");
        assert!(std::ptr::eq(s.as_ptr(), a.as_ptr()));
        let r = Rc::new(v.clone());
        assert!(std::ptr::eq(
            capture::<Vec<i64>, _, _>(&r, &SITE, "r").as_ptr(),
            r.as_ptr()
        ));
        let b: Box<[i64]> = v.clone().into_boxed_slice();
        assert!(std::ptr::eq(
            capture::<Vec<i64>, _, _>(&b, &SITE, "b").as_ptr(),
            b.as_ptr()
        ));
        let bx = Box::new(7_i64);
        assert_eq!(capture::<i64, _, _>(&bx, &SITE, "bx"), 7);
        let mut m = v.clone();
        let mr = &mut m;
        let p = mr.as_ptr();
        assert!(std::ptr::eq(
            capture::<Vec<i64>, _, _>(&mr, &SITE, "mr").as_ptr(),
            p
        ));
        let borrowed: Cow<[i64]> = Cow::Borrowed(&v);
        assert!(std::ptr::eq(
            capture::<Vec<i64>, _, _>(&borrowed, &SITE, "c").as_ptr(),
            v.as_ptr()
        ));
        let owned: Cow<[i64]> = Cow::Owned(vec![4, 5]);
        assert_eq!(&*capture::<Vec<i64>, _, _>(&owned, &SITE, "o"), &[4, 5]);
        let rr = &&v;
        assert_eq!(capture::<Vec<i64>, _, _>(&rr, &SITE, "rr").len(), 3);
        // Through several pointers, and as elements of sequences and tuples.
        let deep = Arc::new(Box::new(v.clone()));
        assert!(std::ptr::eq(
            capture::<Vec<i64>, _, _>(&deep, &SITE, "d").as_ptr(),
            deep.as_ptr()
        ));
        let rows: Vec<Arc<[f64]>> = vec![Arc::from(vec![1.0, 2.0]), Arc::from(vec![3.0])];
        let s = capture::<Vec<Vec<f64>>, _, _>(&rows, &SITE, "rows");
        assert!(std::ptr::eq(s[0].as_ptr(), rows[0].as_ptr()));
        let t = (Rc::new(2.5_f64), Box::new(vec![true]));
        let (x, bs) = capture::<(f64, Vec<bool>), _, _>(&t, &SITE, "t");
        assert_eq!((x, bs.to_vec()), (2.5, vec![true]));
        let shared = Arc::new(Tensor::<f64>::from_vec(vec![1.0, 2.0], &[2]));
        capture::<Tensor<f64>, _, _>(&shared, &SITE, "shared").set(&SITE, &[1], 9.0);
        assert_eq!(shared.to_vec(), vec![1.0, 9.0]);
    }

    #[test]
    fn records_and_tensors() {
        let x = (3_i64, vec![true, false]);
        let (n, b) = capture::<(i64, Vec<bool>), _, _>(&x, &SITE, "x");
        assert_eq!((n, b.to_vec()), (3, vec![true, false]));
        let t = Tensor::<i64>::from_vec(vec![1, 2], &[2]);
        let r = capture::<Tensor<i64>, _, _>(&t, &SITE, "t");
        r.set(&SITE, &[0], 5);
        assert_eq!(t.to_vec(), vec![5, 2]);
        let ts = vec![t.clone(), t];
        let rs = capture::<Vec<Tensor<i64>>, _, _>(&ts, &SITE, "ts");
        assert_eq!(rs[1].get(&SITE, &[0]), 5);
        let pairs = vec![(1_i64, 2.0_f64)];
        assert_eq!(
            capture::<Vec<(i64, f64)>, _, _>(&pairs, &SITE, "p").into_rust(),
            pairs
        );
    }
}
