//! Which of the primitive types (`i8` … `u64`, `isize`, `usize`, `f32`, `f64`, `bool`) a generic number is, as a
//! value a backend can match on.
//!
//! The base number traits ([`crate::numeric::Scalar`], [`crate::tensor::Element`]) know no
//! backend. Each backend implements its own traits for every number through this one witness
//! (`impl<T: Scalar> DeviceArg for T` matches on [`Which`] and marshals the concrete type), so a
//! new backend adds its traits in its own module and the number traits stay as they are.

/// A proof that `A` and `B` are the same type, as the conversions between them (identities, so
/// after monomorphization a match on [`Which`] compiles to the one arm that applies).
pub struct Same<A, B> {
    to: fn(A) -> B,
    from: fn(B) -> A,
    slice: for<'a> fn(&'a [A]) -> &'a [B],
    slice_mut: for<'a> fn(&'a mut [A]) -> &'a mut [B],
    from_slice_mut: for<'a> fn(&'a mut [B]) -> &'a mut [A],
    vec_to: fn(Vec<A>) -> Vec<B>,
    vec_from: fn(Vec<B>) -> Vec<A>,
}

impl<T> Same<T, T> {
    /// The proof that a type is itself.
    pub const REFL: Same<T, T> = Same {
        to: id,
        from: id,
        slice: id_slice,
        slice_mut: id_slice_mut,
        from_slice_mut: id_slice_mut,
        vec_to: id,
        vec_from: id,
    };
}

fn id<T>(x: T) -> T {
    x
}

fn id_slice<T>(x: &[T]) -> &[T] {
    x
}

fn id_slice_mut<T>(x: &mut [T]) -> &mut [T] {
    x
}

impl<A, B> Same<A, B> {
    /// `a` as a `B`.
    #[inline(always)]
    pub fn to(&self, a: A) -> B {
        (self.to)(a)
    }
    /// `b` as an `A`.
    #[inline(always)]
    pub fn from(&self, b: B) -> A {
        (self.from)(b)
    }
    /// Elements of `A` as elements of `B`.
    #[inline(always)]
    pub fn slice<'a>(&self, a: &'a [A]) -> &'a [B] {
        (self.slice)(a)
    }
    /// Elements of `A` as elements of `B`, mutably.
    #[inline(always)]
    pub fn slice_mut<'a>(&self, a: &'a mut [A]) -> &'a mut [B] {
        (self.slice_mut)(a)
    }
    /// Elements of `B` as elements of `A`, mutably.
    #[inline(always)]
    pub fn from_slice_mut<'a>(&self, b: &'a mut [B]) -> &'a mut [A] {
        (self.from_slice_mut)(b)
    }
    /// Elements of `A` as elements of `B`.
    #[inline(always)]
    pub fn vec_to(&self, a: Vec<A>) -> Vec<B> {
        (self.vec_to)(a)
    }
    /// Elements of `B` as elements of `A`.
    #[inline(always)]
    pub fn vec_from(&self, b: Vec<B>) -> Vec<A> {
        (self.vec_from)(b)
    }
}

/// Which primitive type `T` is.
pub enum Which<T> {
    /// `i64`.
    I64(Same<T, i64>),
    /// `f64`.
    F64(Same<T, f64>),
    /// `i32`.
    I32(Same<T, i32>),
    /// `f32`.
    F32(Same<T, f32>),
    /// `bool`.
    Bool(Same<T, bool>),
    /// `i8`.
    I8(Same<T, i8>),
    /// `i16`.
    I16(Same<T, i16>),
    /// `isize`.
    Isize(Same<T, isize>),
    /// `u8`.
    U8(Same<T, u8>),
    /// `u16`.
    U16(Same<T, u16>),
    /// `u32`.
    U32(Same<T, u32>),
    /// `u64`.
    U64(Same<T, u64>),
    /// `usize`.
    Usize(Same<T, usize>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_witness_converts_both_ways() {
        let w: Same<i32, i32> = Same::REFL;
        assert_eq!(w.to(7), 7);
        assert_eq!(w.from(-3), -3);
        assert_eq!(w.slice(&[1, 2, 3]), &[1, 2, 3]);
        assert_eq!(w.slice_mut(&mut [4]), &[4]);
        assert_eq!(w.vec_to(vec![6]), vec![6]);
        assert_eq!(w.vec_from(vec![4, 5]), vec![4, 5]);
    }
}
