//! The numbers generated code can be generic over.
//!
//! When nothing inside an accelerated expression fixes whether a number is an `i64` or an `f64`
//! (`map2(|x, y| x + y, a, b)` over captured `a` and `b`), the generated function is generic over
//! it and the captured Rust values decide. Integer arithmetic wraps, as it does everywhere in
//! PMExpr.

use std::fmt::Debug;

use crate::checks::Regular;
use crate::marshal::IntoRust;
use crate::site::Site;
use crate::tensor::Element;

/// A value that `==` and `!=` compare: `i64`, `f64` or `bool`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be compared with `==` inside `accelerate!`",
    label = "`accelerate!` compares values of this type with `==`",
    note = "`==` and `!=` work on i64, f64 and bool"
)]
pub trait Scalar:
    Copy + Send + Sync + PartialEq + PartialOrd + Debug + Regular + IntoRust<Out = Self> + 'static
{
}

impl Scalar for i64 {}
impl Scalar for f64 {}
impl Scalar for bool {}

/// A number: `i64` or `f64`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number that `accelerate!` computes with",
    label = "`accelerate!` uses values of this type in arithmetic or as tensor elements",
    note = "numbers inside `accelerate!` are i64 or f64"
)]
pub trait Num: Scalar + Element {
    /// `+` (wrapping for integers).
    fn add(self, other: Self) -> Self;
    /// `-` (wrapping for integers).
    fn sub(self, other: Self) -> Self;
    /// `*` (wrapping for integers).
    fn mul(self, other: Self) -> Self;
    /// `/`; integer division by zero fails at `site`.
    fn div(site: &Site, a: Self, b: Self) -> Self;
    /// Unary `-` (wrapping for integers).
    fn neg(self) -> Self;
}

impl Num for i64 {
    #[inline]
    fn add(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline]
    fn sub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    #[inline]
    fn mul(self, o: Self) -> Self {
        self.wrapping_mul(o)
    }
    #[inline]
    fn div(site: &Site, a: Self, b: Self) -> Self {
        crate::intrinsics::divi(site, a, b)
    }
    #[inline]
    fn neg(self) -> Self {
        self.wrapping_neg()
    }
}

impl Num for f64 {
    #[inline]
    fn add(self, o: Self) -> Self {
        self + o
    }
    #[inline]
    fn sub(self, o: Self) -> Self {
        self - o
    }
    #[inline]
    fn mul(self, o: Self) -> Self {
        self * o
    }
    #[inline]
    fn div(_: &Site, a: Self, b: Self) -> Self {
        a / b
    }
    #[inline]
    fn neg(self) -> Self {
        -self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poly<N: Num>(a: N, b: N) -> (N, N, N, bool) {
        (
            a.add(b),
            a.mul(b).sub(b),
            N::div(&Site::new("n.rs", 1, 1), a, b).neg(),
            a < b,
        )
    }

    #[test]
    fn same_code_for_both_numbers() {
        assert_eq!(poly(7_i64, 2), (9, 12, -3, false));
        assert_eq!(poly(1.0_f64, 2.0), (3.0, 0.0, -0.5, true));
        assert_eq!(i64::MAX.add(1), i64::MIN, "integers wrap");
    }
}
