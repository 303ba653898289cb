//! The numbers generated code can be generic over.
//!
//! When nothing inside an accelerated expression fixes whether a number is an `i64` or an `f64`
//! (`map2(|x, y| x + y, a, b)` over captured `a` and `b`), the generated function is generic over
//! it and the captured Rust values decide — beyond the paper also `i32` and `f32`, so that a
//! `Vec<f32>` is computed with as `f32`, not widened. A literal is an [`Int`] or a [`Float`] of the
//! type around it. Integer arithmetic wraps, as it does everywhere in PMExpr.

use std::fmt::Debug;

use pmexpr_abi::Number;

use crate::checks::Regular;
use crate::laws::Law;
use crate::marshal::IntoRust;
use crate::prim::{Same, Which};
use crate::site::Site;
use crate::tensor::Element;

/// A value of any type that the captured values fix: an element type the expression only moves,
/// stores or counts (`flatten(m)`, `reverse(s)`, `map(|p| p, ps)` over any captured `Vec`), which
/// may be a number, a tuple, a nested sequence or a record. Generated CPU code is generic over it;
/// implemented for every such representation. The GPU targets run a site with the code generated
/// for the number type it turns out to be ([`OpenType::instantiation`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element of a value captured by `accelerate!`",
    note = "captured variables may be i64, f64, i32, f32, bool, (), tuples of these, \
            `#[derive(pmexpr::Record)]` structs, Vec<T>, [T] or [T; N] of these, and \
            pmexpr::Tensor<i64, f64, i32 or f32>, held directly or through &, &mut, Box, Rc, Arc or Cow"
)]
pub trait Value: Clone + Send + Sync + Debug + Regular + Law + IntoRust + OpenType {}

impl<T: Clone + Send + Sync + Debug + Regular + Law + IntoRust + OpenType> Value for T {}

/// Which instantiation of a site's GPU code a [`Value`] type selects. The build generates the CUDA
/// modules and Futhark entry points of a site before rustc has typed the captured values, for each
/// number or `bool` an open type may be; at run time the generated code asks the captured values'
/// types which one applies. Implemented for every representation generated code works on.
#[doc(hidden)]
pub trait OpenType {
    /// `Ok(number)` for a number or `bool` (its [`Scalar::NUMBER`], which picks the module or
    /// entry point), else `Err` with the Rust type it stands for, for the message that says why
    /// the site runs on the CPU.
    fn instantiation() -> Result<Number, String>;

    /// Which primitive type it is, for a number or `bool` ([`Scalar::WHICH`]): how `cpu` stores
    /// the elements of a `scatter` atomically whatever the type the captured values fixed.
    /// `None` for every other type (the default).
    fn which() -> Option<Which<Self>>
    where
        Self: Sized,
    {
        None
    }

    /// The Rust type, as a user would write it (`Vec<(i64, f64)>`; a derived struct shows as the
    /// tuple of its fields in name order).
    fn rust_name() -> String {
        match Self::instantiation() {
            Ok(number) => number.rust_name().to_string(),
            Err(name) => name,
        }
    }
}

/// The number `T` is, the type an open type variable of the site stands for (a
/// type the captured values fix, which the expression only moves, compares or counts), for the
/// GPU code of `target` (`cuda`, `cuda-emulator`, `futhark` or `auto`): [`OpenType::instantiation`].
/// `None` when `T` is not a number or `bool`: the build generated that code for those only, so the
/// site runs on the CPU, said once on stderr (under `auto` only where a GPU would have run it).
/// `var` is a captured variable that holds such values and `captured` its Rust type (called only
/// then), for the message. Used by generated code.
#[doc(hidden)]
pub fn open_instantiation<T: OpenType>(
    site: &'static crate::site::Site,
    target: crate::Target,
    var: &str,
    captured: fn() -> String,
) -> Option<Number> {
    let ty = match T::instantiation() {
        Ok(number) => return Some(number),
        Err(ty) => ty,
    };
    // Under `auto` a site runs on the CPU anyway without a GPU: nothing to say then.
    if target == crate::Target::Auto && crate::gpu::probe().is_err() {
        return None;
    }
    let code = match target {
        crate::Target::Futhark => "Futhark entry points",
        _ => "CUDA kernels",
    };
    let captured = captured();
    // A type named in the expression is concrete, and the build generates code for it; a
    // tensor, though, cannot be an element of a Futhark array or of a CUDA sequence.
    let advice = if captured.contains("Tensor<") {
        String::new()
    } else {
        format!(
            "; to run it there, name the type in the expression: `let {var}: {captured} = {var};` at the start of the body (for a `#[derive(pmexpr::Record)]` struct, its name)"
        )
    };
    crate::site::say_once(
        format!("{site} open {target} {ty}"),
        &format!(
            "pmexpr: accelerate! at {site} runs on the CPU under the {target} target: captured `{var}` (a `{captured}` here) holds values of type `{ty}` that the expression only moves or counts, so their type comes from Rust, and the build, which runs before rustc, generates {code} for such values as i64, f64, i32, f32 or bool only{advice}"
        ),
    );
    None
}

macro_rules! open_scalar {
    ($($t:ty),*) => {$(
        impl OpenType for $t {
            fn instantiation() -> Result<Number, String> {
                Ok(<$t as Scalar>::NUMBER)
            }
            fn which() -> Option<Which<Self>> {
                Some(<$t as Scalar>::WHICH)
            }
        }
    )*};
}
open_scalar!(i64, f64, i32, f32, bool);

impl OpenType for () {
    fn instantiation() -> Result<Number, String> {
        Err("()".to_string())
    }
}

impl<T: OpenType> OpenType for crate::seq::Seq<'_, T> {
    fn instantiation() -> Result<Number, String> {
        Err(format!("Vec<{}>", T::rust_name()))
    }
}

impl<T: Element> OpenType for crate::tensor::TensorRef<'_, T> {
    fn instantiation() -> Result<Number, String> {
        Err(format!("pmexpr::Tensor<{}>", T::NUMBER))
    }
}

macro_rules! open_tuples {
    ($(($($t:ident $i:tt $_c:ident $_r:ident),+))*) => {$(
        impl<$($t: OpenType),+> OpenType for ($($t,)+) {
            fn instantiation() -> Result<Number, String> {
                let fields: Vec<String> = vec![$($t::rust_name()),+];
                // A 1-tuple keeps its comma, as Rust writes it.
                let comma = if fields.len() == 1 { "," } else { "" };
                Err(format!("({}{comma})", fields.join(", ")))
            }
        }
    )*};
}
for_tuples!(open_tuples);

/// A value that `==` and `!=` compare: a number or `bool`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be compared with `==` inside `accelerate!`",
    label = "`accelerate!` compares values of this type with `==`",
    note = "`==` and `!=` work on i64, f64, i32, f32 and bool"
)]
pub trait Scalar:
    Copy
    + Send
    + Sync
    + PartialEq
    + PartialOrd
    + Debug
    + Regular
    + Law
    + IntoRust<Out = Self>
    + OpenType
    + Default
    + 'static
{
    /// Which number it is: how the GPU targets pick the module or entry point generated for it.
    #[doc(hidden)]
    const NUMBER: Number;
    /// Which primitive type it is: how each backend implements its own traits for every scalar.
    #[doc(hidden)]
    const WHICH: Which<Self>;
    /// `self as i64`, as Rust means it: sign extension, a float truncated toward zero and
    /// saturated (NaN is 0), `true` is 1.
    fn as_i64(self) -> i64;
    /// `self as f64`, as Rust means it: an integer rounded to the nearest, an `f32` exactly,
    /// `true` is 1.0.
    fn as_f64(self) -> f64;
}

impl Scalar for i64 {
    const NUMBER: Number = Number::I64;
    #[inline]
    fn as_i64(self) -> i64 {
        self
    }
    #[inline]
    fn as_f64(self) -> f64 {
        self as f64
    }
    const WHICH: Which<Self> = Which::I64(Same::REFL);
}
impl Scalar for f64 {
    const NUMBER: Number = Number::F64;
    #[inline]
    fn as_i64(self) -> i64 {
        self as i64
    }
    #[inline]
    fn as_f64(self) -> f64 {
        self
    }
    const WHICH: Which<Self> = Which::F64(Same::REFL);
}
impl Scalar for i32 {
    const NUMBER: Number = Number::I32;
    #[inline]
    fn as_i64(self) -> i64 {
        self as i64
    }
    #[inline]
    fn as_f64(self) -> f64 {
        self as f64
    }
    const WHICH: Which<Self> = Which::I32(Same::REFL);
}
impl Scalar for f32 {
    const NUMBER: Number = Number::F32;
    #[inline]
    fn as_i64(self) -> i64 {
        self as i64
    }
    #[inline]
    fn as_f64(self) -> f64 {
        self as f64
    }
    const WHICH: Which<Self> = Which::F32(Same::REFL);
}
impl Scalar for bool {
    const NUMBER: Number = Number::Bool;
    #[inline]
    fn as_i64(self) -> i64 {
        self as i64
    }
    #[inline]
    fn as_f64(self) -> f64 {
        if self { 1.0 } else { 0.0 }
    }
    const WHICH: Which<Self> = Which::Bool(Same::REFL);
}

/// A number: `i64`, `f64`, `i32` or `f32`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number that `accelerate!` computes with",
    label = "`accelerate!` uses values of this type in arithmetic or as tensor elements",
    note = "numbers inside `accelerate!` are i64, f64, i32 or f32"
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
    /// `abs` (wrapping for integers: `MIN` stays `MIN`, as `wrapping_abs`).
    fn abs(self) -> Self;
    /// Rust's `signum`: of an integer -1, 0 or 1; of a float 1.0 for `+0.0` and positive
    /// numbers, -1.0 for `-0.0` and negative ones, NaN for NaN.
    fn signum(self) -> Self;
    /// Rust's `x.clamp(lo, hi)`: `lo` below it, `hi` above it, else `x` (a NaN `x` stays NaN).
    /// Where Rust panics — `lo > hi`, or a NaN bound — it fails at `site` with Rust's message.
    fn clamp(site: &Site, x: Self, lo: Self, hi: Self) -> Self;
}

/// An integer: `i64` or `i32` (what an integer literal may be; `Into<i64>` is how `hist` reads an
/// `i32` bin index).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer that `accelerate!` computes with",
    label = "`accelerate!` uses values of this type as integers",
    note = "integers inside `accelerate!` are i64 or i32; an integer literal like `2` makes the \
            values it is used with integers: write `2.0` for a float"
)]
pub trait Int: Num + Into<i64> + Bits {
    /// The literal `v`, which must fit (checked at `site`).
    fn from_lit(site: &Site, v: i64) -> Self;
    /// `a << n` as a Rust release build computes it: the amount masked to the width
    /// (`wrapping_shl`); with `checks` (debug mode) an amount outside `0..BITS` fails at `site`
    /// as a Rust debug build panics.
    fn shl<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self;
    /// `a >> n` (arithmetic: the sign is shifted in), masked and checked as [`Int::shl`].
    fn shr<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self;
    /// `count_ones`, as the receiver's type (Rust's is a `u32`, always in range).
    fn count_ones(self) -> Self;
    /// `leading_zeros`, as the receiver's type.
    fn leading_zeros(self) -> Self;
    /// `trailing_zeros`, as the receiver's type.
    fn trailing_zeros(self) -> Self;
    /// `reverse_bits`.
    fn reverse_bits(self) -> Self;
    /// `swap_bytes`.
    fn swap_bytes(self) -> Self;
    /// `rotate_left(n as u32)` (an amount of any integer type; its low bits count).
    fn rotate_left<N: Int>(self, n: N) -> Self;
    /// `rotate_right(n as u32)`.
    fn rotate_right<N: Int>(self, n: N) -> Self;
    /// `wrapping_add`.
    fn wrapping_add(self, o: Self) -> Self;
    /// `wrapping_sub`.
    fn wrapping_sub(self, o: Self) -> Self;
    /// `wrapping_mul`.
    fn wrapping_mul(self, o: Self) -> Self;
    /// `wrapping_neg`.
    fn wrapping_neg(self) -> Self;
    /// `saturating_add`.
    fn saturating_add(self, o: Self) -> Self;
    /// `saturating_sub`.
    fn saturating_sub(self, o: Self) -> Self;
    /// `saturating_mul`.
    fn saturating_mul(self, o: Self) -> Self;
    /// `pow(n as u32)` as a Rust release build computes it (`wrapping_pow`); the exponent an
    /// integer of any type, taken as `n as u32` as rotate amounts are (a negative `i64` is a
    /// large exponent).
    fn pow<N: Int>(self, n: N) -> Self;
    /// `isqrt`: the largest integer whose square is at most `x`; a negative `x` fails at `site`,
    /// where Rust panics.
    fn isqrt(site: &Site, x: Self) -> Self;
    /// `abs_diff`, as the receiver's type: Rust's result is the unsigned type of the same width,
    /// which PMExpr does not have yet, so its bits are read as the receiver's type, as `as`
    /// converts (`i64::MIN.abs_diff(i64::MAX)` is `u64::MAX`, here -1). Once the unsigned types
    /// exist, the result becomes that unsigned type.
    fn abs_diff(self, o: Self) -> Self;
    /// `div_ceil`: the quotient rounded toward +∞ (Rust's, stable on unsigned integers; on signed
    /// ones the `int_roundings` definition: `a / b`, plus 1 when the remainder is not zero and
    /// `a` and `b` have the same sign). Division by zero fails at `site`; `MIN / -1` wraps.
    fn div_ceil(site: &Site, a: Self, b: Self) -> Self;
    /// `rem_euclid`: the remainder that is never negative (`wrapping_rem_euclid`: `MIN % -1` is
    /// 0). Division by zero fails at `site`.
    fn rem_euclid(site: &Site, a: Self, b: Self) -> Self;
    /// `div_euclid`: the quotient of [`Int::rem_euclid`] (`wrapping_div_euclid`: `MIN / -1` is
    /// `MIN`). Division by zero fails at `site`.
    fn div_euclid(site: &Site, a: Self, b: Self) -> Self;
    /// `is_power_of_two`. Rust has it on unsigned integers; on a signed one it is
    /// `x > 0 && x & (x - 1) == 0` (`MIN`, whose bits are a power of two's, is not one).
    fn is_power_of_two(self) -> bool;
    /// `next_power_of_two`: the smallest power of two at least `x` (1 for every `x <= 1`), and
    /// 0 when that is not representable — what a Rust release build gives on an unsigned
    /// integer's overflow (on a signed one, above `2^(BITS-2)`).
    fn next_power_of_two(self) -> Self;
    /// The value as an index or a count of the runtime, which counts in `i64`: exact for every
    /// value of a type that fits in `i64`, [`i64::MAX`] for a larger one (out of range of every
    /// sequence and tensor all the same), so that an index of any integer type is checked, and
    /// fails, as an `i64` one.
    fn to_index(self) -> i64;
    /// A position `i` of a loop or `create` whose count is of this type (`0 <= i < count`, so it
    /// fits): the loop variable, of the count's type as in Rust's `for i in 0..n`.
    fn from_index(i: i64) -> Self;
}

/// An integer or a `bool`: what `&`, `|`, `^` and `!` apply to (bitwise on integers, logical
/// on `bool`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no bit operators inside `accelerate!`",
    label = "`accelerate!` applies `&`, `|`, `^` or `!` to values of this type",
    note = "`&`, `|`, `^` and `!` apply to i64, i32 and bool"
)]
pub trait Bits:
    Scalar
    + core::ops::BitAnd<Output = Self>
    + core::ops::BitOr<Output = Self>
    + core::ops::BitXor<Output = Self>
    + core::ops::Not<Output = Self>
{
}

impl Bits for i64 {}
impl Bits for i32 {}
impl Bits for bool {}

/// A floating-point number: `f64` or `f32` (what a float literal may be).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a floating-point number that `accelerate!` computes with",
    label = "`accelerate!` uses values of this type as floats",
    note = "floats inside `accelerate!` are f64 or f32; a float literal like `1.5` makes the values \
            it is used with floats: convert an integer with `int2float(x)`"
)]
pub trait Float: Num {
    /// The literal `v` (rounded to the nearest value of the type).
    fn from_lit(v: f64) -> Self;
    /// `sqrt`, in the type's own precision.
    fn sqrt(self) -> Self;
    /// `exp`.
    fn exp(self) -> Self;
    /// `log` (the natural logarithm).
    fn ln(self) -> Self;
    /// `sin`.
    fn sin(self) -> Self;
    /// `cos`.
    fn cos(self) -> Self;
    /// `pow`.
    fn powf(self, e: Self) -> Self;
    /// `int2float`: the nearest value of the type.
    fn from_i64(i: i64) -> Self;
    /// `floorfi`: the largest integer not above the value (saturating; NaN gives 0).
    fn floorfi(self) -> i64;
    /// `floor`.
    fn floor(self) -> Self;
    /// `ceil`.
    fn ceil(self) -> Self;
    /// `round`: half way cases away from zero.
    fn round(self) -> Self;
    /// `trunc`.
    fn trunc(self) -> Self;
    /// `fract`: `self - self.trunc()`.
    fn fract(self) -> Self;
    /// `cbrt`.
    fn cbrt(self) -> Self;
    /// `exp2`.
    fn exp2(self) -> Self;
    /// `log2`.
    fn log2(self) -> Self;
    /// `log10`.
    fn log10(self) -> Self;
    /// `tan`.
    fn tan(self) -> Self;
    /// `asin`.
    fn asin(self) -> Self;
    /// `acos`.
    fn acos(self) -> Self;
    /// `atan`.
    fn atan(self) -> Self;
    /// `atan2`.
    fn atan2(self, x: Self) -> Self;
    /// `sinh`.
    fn sinh(self) -> Self;
    /// `cosh`.
    fn cosh(self) -> Self;
    /// `tanh`.
    fn tanh(self) -> Self;
    /// `hypot`.
    fn hypot(self, o: Self) -> Self;
    /// `is_nan`.
    fn is_nan(self) -> bool;
    /// `is_finite`.
    fn is_finite(self) -> bool;
    /// `to_radians`.
    fn to_radians(self) -> Self;
    /// `to_degrees`.
    fn to_degrees(self) -> Self;
    /// `mul_add`: `self * a + b` with one rounding (fused).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// `powi(n as i32)`: the exponent an integer of any type, taken as `n as i32`. Rust's
    /// (compiler-builtins' `__powidf2`: square-and-multiply, then the reciprocal for a negative
    /// exponent), which the CUDA and Futhark targets compute the same way.
    fn powi<N: Int>(self, n: N) -> Self;
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline]
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline]
            fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline]
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline]
            fn div(site: &Site, a: Self, b: Self) -> Self {
                if b == 0 {
                    site.fail("Division by zero");
                }
                // `wrapping_div` tests `a == MIN && b == -1`, which changes with `a`; a test of
                // `b` alone is the same for every element of a loop over `a`, and it is the test
                // `modi` makes, so that `k / n` and `k % n` are one division (in Parboil tpacf's
                // loop they were two).
                if b == -1 { a.wrapping_neg() } else { a / b }
            }
            #[inline]
            fn neg(self) -> Self { self.wrapping_neg() }
            #[inline]
            fn abs(self) -> Self { self.wrapping_abs() }
            #[inline]
            fn signum(self) -> Self { <$t>::signum(self) }
            #[inline]
            fn clamp(site: &Site, x: Self, lo: Self, hi: Self) -> Self {
                if lo > hi {
                    // Rust's `Ord::clamp` message.
                    site.fail(format!("min > max. min = {lo:?}, max = {hi:?}"));
                }
                if x < lo { lo } else if x > hi { hi } else { x }
            }
        }
        impl Int for $t {
            #[inline]
            fn shl<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self {
                let n: i64 = n.into();
                if checks && !(0..i64::from(<$t>::BITS)).contains(&n) {
                    site.fail("attempt to shift left with overflow");
                }
                a.wrapping_shl(n as u32)
            }
            #[inline]
            fn shr<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self {
                let n: i64 = n.into();
                if checks && !(0..i64::from(<$t>::BITS)).contains(&n) {
                    site.fail("attempt to shift right with overflow");
                }
                a.wrapping_shr(n as u32)
            }
            #[inline]
            fn count_ones(self) -> Self { <$t>::count_ones(self) as $t }
            #[inline]
            fn leading_zeros(self) -> Self { <$t>::leading_zeros(self) as $t }
            #[inline]
            fn trailing_zeros(self) -> Self { <$t>::trailing_zeros(self) as $t }
            #[inline]
            fn reverse_bits(self) -> Self { <$t>::reverse_bits(self) }
            #[inline]
            fn swap_bytes(self) -> Self { <$t>::swap_bytes(self) }
            #[inline]
            fn rotate_left<N: Int>(self, n: N) -> Self { <$t>::rotate_left(self, n.into() as u32) }
            #[inline]
            fn rotate_right<N: Int>(self, n: N) -> Self { <$t>::rotate_right(self, n.into() as u32) }
            #[inline]
            fn wrapping_add(self, o: Self) -> Self { <$t>::wrapping_add(self, o) }
            #[inline]
            fn wrapping_sub(self, o: Self) -> Self { <$t>::wrapping_sub(self, o) }
            #[inline]
            fn wrapping_mul(self, o: Self) -> Self { <$t>::wrapping_mul(self, o) }
            #[inline]
            fn wrapping_neg(self) -> Self { <$t>::wrapping_neg(self) }
            #[inline]
            fn saturating_add(self, o: Self) -> Self { <$t>::saturating_add(self, o) }
            #[inline]
            fn saturating_sub(self, o: Self) -> Self { <$t>::saturating_sub(self, o) }
            #[inline]
            fn saturating_mul(self, o: Self) -> Self { <$t>::saturating_mul(self, o) }
            #[inline]
            fn pow<N: Int>(self, n: N) -> Self { <$t>::wrapping_pow(self, n.into() as u32) }
            #[inline]
            fn isqrt(site: &Site, x: Self) -> Self {
                if x < 0 {
                    site.fail("argument of integer square root cannot be negative");
                }
                <$t>::isqrt(x)
            }
            #[inline]
            fn abs_diff(self, o: Self) -> Self {
                // Rust's result is the unsigned type of this width; the bits of it, until the
                // unsigned types exist here (then this is `<$t>::abs_diff` itself).
                <$t>::abs_diff(self, o) as $t
            }
            #[inline]
            fn div_ceil(site: &Site, a: Self, b: Self) -> Self {
                if b == 0 {
                    site.fail("Division by zero");
                }
                let (d, r) = (a.wrapping_div(b), a.wrapping_rem(b));
                // Unstable `int_roundings` on signed integers; an unsigned type would add 1
                // whenever `r != 0` (its stable `div_ceil`).
                if r != 0 && (a < 0) == (b < 0) { d.wrapping_add(1) } else { d }
            }
            #[inline]
            fn rem_euclid(site: &Site, a: Self, b: Self) -> Self {
                if b == 0 {
                    site.fail("Division by zero");
                }
                a.wrapping_rem_euclid(b)
            }
            #[inline]
            fn div_euclid(site: &Site, a: Self, b: Self) -> Self {
                if b == 0 {
                    site.fail("Division by zero");
                }
                a.wrapping_div_euclid(b)
            }
            #[inline]
            fn is_power_of_two(self) -> bool { self > 0 && self & (self - 1) == 0 }
            #[inline]
            fn next_power_of_two(self) -> Self {
                if self <= 1 {
                    return 1;
                }
                // The exponent of the power; `BITS - 1` is the sign bit's (an unsigned type's
                // limit would be `BITS`).
                let e = <$t>::BITS - (self - 1).leading_zeros();
                if e >= <$t>::BITS - 1 { 0 } else { 1 << e }
            }
            fn to_index(self) -> i64 { i64::try_from(self).unwrap_or(i64::MAX) }
            #[inline]
            fn from_index(i: i64) -> Self { i as $t }
            #[inline]
            fn from_lit(site: &Site, v: i64) -> Self {
                match <$t>::try_from(v) {
                    Ok(x) => x,
                    Err(_) => site.fail(format!(
                        "the integer literal {v} does not fit in {}", stringify!($t)
                    )),
                }
            }
        }
    )*};
}
ints!(i64, i32);

macro_rules! floats {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline]
            fn add(self, o: Self) -> Self { self + o }
            #[inline]
            fn sub(self, o: Self) -> Self { self - o }
            #[inline]
            fn mul(self, o: Self) -> Self { self * o }
            #[inline]
            fn div(_: &Site, a: Self, b: Self) -> Self { a / b }
            #[inline]
            fn neg(self) -> Self { -self }
            #[inline]
            fn abs(self) -> Self { <$t>::abs(self) }
            #[inline]
            fn signum(self) -> Self { <$t>::signum(self) }
            #[inline]
            fn clamp(site: &Site, x: Self, lo: Self, hi: Self) -> Self {
                // A NaN bound fails too, as Rust's `assert!(min <= max)`.
                if lo.is_nan() || hi.is_nan() || lo > hi {
                    site.fail(format!(
                        "min > max, or either was NaN. min = {lo:?}, max = {hi:?}"
                    ));
                }
                <$t>::clamp(x, lo, hi)
            }
        }
        impl Float for $t {
            #[inline]
            fn from_lit(v: f64) -> Self { v as $t }
            #[inline]
            fn sqrt(self) -> Self { <$t>::sqrt(self) }
            #[inline]
            fn exp(self) -> Self { <$t>::exp(self) }
            #[inline]
            fn ln(self) -> Self { <$t>::ln(self) }
            #[inline]
            fn sin(self) -> Self { <$t>::sin(self) }
            #[inline]
            fn cos(self) -> Self { <$t>::cos(self) }
            #[inline]
            fn powf(self, e: Self) -> Self { <$t>::powf(self, e) }
            #[inline]
            fn from_i64(i: i64) -> Self { i as $t }
            #[inline]
            fn floorfi(self) -> i64 { <$t>::floor(self) as i64 }
            #[inline]
            fn floor(self) -> Self { <$t>::floor(self) }
            #[inline]
            fn ceil(self) -> Self { <$t>::ceil(self) }
            #[inline]
            fn round(self) -> Self { <$t>::round(self) }
            #[inline]
            fn trunc(self) -> Self { <$t>::trunc(self) }
            #[inline]
            fn fract(self) -> Self { <$t>::fract(self) }
            #[inline]
            fn cbrt(self) -> Self { <$t>::cbrt(self) }
            #[inline]
            fn exp2(self) -> Self { <$t>::exp2(self) }
            #[inline]
            fn log2(self) -> Self { <$t>::log2(self) }
            #[inline]
            fn log10(self) -> Self { <$t>::log10(self) }
            #[inline]
            fn tan(self) -> Self { <$t>::tan(self) }
            #[inline]
            fn asin(self) -> Self { <$t>::asin(self) }
            #[inline]
            fn acos(self) -> Self { <$t>::acos(self) }
            #[inline]
            fn atan(self) -> Self { <$t>::atan(self) }
            #[inline]
            fn sinh(self) -> Self { <$t>::sinh(self) }
            #[inline]
            fn cosh(self) -> Self { <$t>::cosh(self) }
            #[inline]
            fn tanh(self) -> Self { <$t>::tanh(self) }
            #[inline]
            fn to_radians(self) -> Self { <$t>::to_radians(self) }
            #[inline]
            fn to_degrees(self) -> Self { <$t>::to_degrees(self) }
            #[inline]
            fn atan2(self, x: Self) -> Self { <$t>::atan2(self, x) }
            #[inline]
            fn hypot(self, o: Self) -> Self { <$t>::hypot(self, o) }
            #[inline]
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            #[inline]
            fn is_finite(self) -> bool { <$t>::is_finite(self) }
            #[inline]
            fn mul_add(self, a: Self, b: Self) -> Self { <$t>::mul_add(self, a, b) }
            #[inline]
            fn powi<N: Int>(self, n: N) -> Self { <$t>::powi(self, n.into() as i32) }
        }
    )*};
}
floats!(f64, f32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_type_picks_a_number_s_code_or_names_its_rust_type() {
        use crate::seq::Seq;
        use crate::site::Site;
        use crate::tensor::TensorRef;
        static SITE: Site = Site::new("src/open.rs", 1, 1);
        let unused = || unreachable!("asked only for the message");
        for t in [crate::Target::CudaEmulator, crate::Target::Futhark] {
            assert_eq!(
                open_instantiation::<i64>(&SITE, t, "s", unused),
                Some(Number::I64)
            );
            assert_eq!(
                open_instantiation::<f32>(&SITE, t, "s", unused),
                Some(Number::F32)
            );
            assert_eq!(
                open_instantiation::<bool>(&SITE, t, "s", unused),
                Some(Number::Bool)
            );
            let name = <Seq<'static, (i64, f64)> as OpenType>::rust_name;
            assert_eq!(open_instantiation::<(i64, f64)>(&SITE, t, "s", name), None);
        }
        assert_eq!(<(i64, f64)>::instantiation(), Err("(i64, f64)".to_string()));
        assert_eq!(<(bool,)>::rust_name(), "(bool,)");
        assert_eq!(
            <Seq<'static, Seq<'static, (i32, ())>>>::rust_name(),
            "Vec<Vec<(i32, ())>>"
        );
        assert_eq!(
            <TensorRef<'static, f32>>::rust_name(),
            "pmexpr::Tensor<f32>"
        );
    }

    #[test]
    fn each_scalar_and_element_is_its_number() {
        fn check<T: Scalar>() {
            let n = <T as Scalar>::NUMBER;
            assert_eq!(n.rust_name(), std::any::type_name::<T>());
            assert_eq!(n.size(), size_of::<T>());
        }
        fn element<T: Element>() {
            let n = <T as Element>::NUMBER;
            assert_eq!(n.rust_name(), std::any::type_name::<T>());
            assert!(n.is_arithmetic(), "{n}");
        }
        check::<i64>();
        check::<f64>();
        check::<i32>();
        check::<f32>();
        check::<bool>();
        element::<i64>();
        element::<f64>();
        element::<i32>();
        element::<f32>();
        assert_eq!(
            [
                <i64 as Scalar>::NUMBER,
                <f64 as Scalar>::NUMBER,
                <i32 as Scalar>::NUMBER,
                <f32 as Scalar>::NUMBER,
                <bool as Scalar>::NUMBER,
            ],
            Number::ALL,
            "every number has its scalar"
        );
    }

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
