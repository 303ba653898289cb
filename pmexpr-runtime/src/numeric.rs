//! The numbers generated code can be generic over.
//!
//! When nothing inside an accelerated expression fixes whether a number is an `i64` or an `f64`
//! (`map2(|x, y| x + y, a, b)` over captured `a` and `b`), the generated function is generic over
//! it and the captured Rust values decide — every one of Rust's numbers, so that a `Vec<f32>` is
//! computed with as `f32`, not widened. A literal is an [`Int`] or a [`Float`] of the type around
//! it. Integer arithmetic wraps, as a Rust release build's; in debug mode `+ - *`, unary `-`,
//! `abs`, `pow` and `next_power_of_two` fail at the site where a debug build panics
//! ([`Num::add_at`]).

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
    note = "captured variables may be numbers (i8 i16 i32 i64 isize u8 u16 u32 u64 usize f32 f64), bool, (), \
            tuples of these, `#[derive(pmexpr::Record)]` structs, Vec<T>, [T] or [T; N] of these, and \
            pmexpr::Tensor<T> of a number or bool, held directly or through &, &mut, Box, Rc, Arc or Cow"
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
            "pmexpr: accelerate! at {site} runs on the CPU under the {target} target: captured `{var}` (a `{captured}` here) holds values of type `{ty}` that the expression only moves or counts, so their type comes from Rust, and the build, which runs before rustc, generates {code} for such values as numbers or bool only{advice}"
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
open_scalar!(
    i64, f64, i32, f32, bool, i8, i16, isize, u8, u16, u32, u64, usize
);

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
    note = "`==` and `!=` work on numbers (i8 i16 i32 i64 isize u8 u16 u32 u64 usize f32 f64) and bool"
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
    /// `self as U`, Rust's own `as` between primitives: an integer truncated or sign- or
    /// zero-extended, a float to an integer toward zero and saturating (NaN is 0), an integer to
    /// a float rounded to the nearest, `bool` 0 or 1. `U` is a number: Rust has no `as bool`.
    fn cast<U: Num>(self) -> U;
}

/// `Scalar` for each primitive; `$e` is the value as a type that Rust's `as` converts to every
/// number (`bool` goes through `u8`: `true as u8` is 1, and Rust has no `bool as f64`).
macro_rules! scalars {
    ($($t:ident $variant:ident |$v:ident| $e:expr;)*) => {$(
        impl Scalar for $t {
            const NUMBER: Number = Number::$variant;
            const WHICH: Which<Self> = Which::$variant(Same::REFL);
            #[inline]
            fn as_i64($v) -> i64 {
                $e as i64
            }
            #[inline]
            fn as_f64($v) -> f64 {
                $e as f64
            }
            #[inline]
            fn cast<U: Num>($v) -> U {
                // After monomorphization one arm is left: Rust's `as` of the two types.
                match <U as Scalar>::WHICH {
                    Which::I64(w) => w.from($e as i64),
                    Which::F64(w) => w.from($e as f64),
                    Which::I32(w) => w.from($e as i32),
                    Which::F32(w) => w.from($e as f32),
                    Which::I8(w) => w.from($e as i8),
                    Which::I16(w) => w.from($e as i16),
                    Which::Isize(w) => w.from($e as isize),
                    Which::U8(w) => w.from($e as u8),
                    Which::U16(w) => w.from($e as u16),
                    Which::U32(w) => w.from($e as u32),
                    Which::U64(w) => w.from($e as u64),
                    Which::Usize(w) => w.from($e as usize),
                    Which::Bool(_) => unreachable!("`Num` is not implemented for `bool`"),
                }
            }
        }
    )*};
}
scalars! {
    i64 I64 |self| self;
    f64 F64 |self| self;
    i32 I32 |self| self;
    f32 F32 |self| self;
    bool Bool |self| (self as u8);
    i8 I8 |self| self;
    i16 I16 |self| self;
    isize Isize |self| self;
    u8 U8 |self| self;
    u16 U16 |self| self;
    u32 U32 |self| self;
    u64 U64 |self| self;
    usize Usize |self| self;
}

/// A number: an integer (`i8 i16 i32 i64 isize u8 u16 u32 u64 usize`) or a float (`f32 f64`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number that `accelerate!` computes with",
    label = "`accelerate!` uses values of this type in arithmetic or as tensor elements",
    note = "numbers inside `accelerate!` are i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32 and f64"
)]
pub trait Num: Scalar + Element {
    /// `+` (wrapping for integers).
    fn add(self, other: Self) -> Self;
    /// `-` (wrapping for integers).
    fn sub(self, other: Self) -> Self;
    /// `*` (wrapping for integers).
    fn mul(self, other: Self) -> Self;
    /// `/`; integer division by zero fails at `site`, and so does `MIN / -1`, as Rust panics.
    fn div(site: &Site, a: Self, b: Self) -> Self;
    /// `%`: the remainder of `/` (the sign of the dividend); integer remainder by zero, and
    /// `MIN % -1`, fail at `site`; of floats, Rust's `%` (C's `fmod`).
    fn rem(site: &Site, a: Self, b: Self) -> Self;
    /// Unary `-` (wrapping for integers).
    fn neg(self) -> Self;
    /// `a op b` (`-a` for [`Arith::Neg`], `b` unused) as a Rust debug build computes it: `None`
    /// where an integer operation overflows; floats never do.
    fn checked(op: Arith, a: Self, b: Self) -> Option<Self>;
    /// `+` in the site's mode: wrapping, or with `checks` (debug mode) a failure at `site` where
    /// a Rust debug build panics ("attempt to add with overflow").
    #[inline]
    fn add_at(checks: bool, site: &Site, a: Self, b: Self) -> Self {
        in_mode(checks, site, Arith::Add, a, b, || a.add(b))
    }
    /// `-` in the site's mode (see [`Num::add_at`]).
    #[inline]
    fn sub_at(checks: bool, site: &Site, a: Self, b: Self) -> Self {
        in_mode(checks, site, Arith::Sub, a, b, || a.sub(b))
    }
    /// `*` in the site's mode (see [`Num::add_at`]).
    #[inline]
    fn mul_at(checks: bool, site: &Site, a: Self, b: Self) -> Self {
        in_mode(checks, site, Arith::Mul, a, b, || a.mul(b))
    }
    /// Unary `-` in the site's mode (see [`Num::add_at`]).
    #[inline]
    fn neg_at(checks: bool, site: &Site, a: Self) -> Self {
        in_mode(checks, site, Arith::Neg, a, a, || a.neg())
    }
    /// `abs` (wrapping for integers: `MIN` stays `MIN`, as `wrapping_abs`).
    fn abs(self) -> Self;
    /// `abs` in the site's mode: wrapping, or with `checks` (debug mode) a failure at `site`
    /// where a Rust debug build panics (`MIN.abs()`: "attempt to negate with overflow").
    #[inline]
    fn abs_at(checks: bool, site: &Site, a: Self) -> Self {
        in_mode(checks, site, Arith::Abs, a, a, || a.abs())
    }
    /// Rust's `signum`: of an integer -1, 0 or 1; of a float 1.0 for `+0.0` and positive
    /// numbers, -1.0 for `-0.0` and negative ones, NaN for NaN.
    fn signum(self) -> Self;
    /// Rust's `x.clamp(lo, hi)`: `lo` below it, `hi` above it, else `x` (a NaN `x` stays NaN).
    /// Where Rust panics — `lo > hi`, or a NaN bound — it fails at `site` with Rust's message.
    fn clamp(site: &Site, x: Self, lo: Self, hi: Self) -> Self;
    /// `rem_euclid`: the remainder that is never negative (of floats Rust's definition on `%`).
    /// Integer division by zero and `MIN % -1` fail at `site`, as Rust panics.
    fn rem_euclid(site: &Site, a: Self, b: Self) -> Self;
    /// `div_euclid`: the quotient of [`Num::rem_euclid`]. Integer division by zero and
    /// `MIN / -1` fail at `site`, as Rust panics.
    fn div_euclid(site: &Site, a: Self, b: Self) -> Self;
}

/// An integer: `i8 i16 i32 i64 isize u8 u16 u32 u64 usize` (what an integer literal may be;
/// [`Scalar::as_i64`] is how `hist` reads a bin index and a shift reads its amount).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer that `accelerate!` computes with",
    label = "`accelerate!` uses values of this type as integers",
    note = "integers inside `accelerate!` are i8, i16, i32, i64, isize, u8, u16, u32, u64 and usize; \
            an integer literal like `2` makes the values it is used with integers: write `2.0` for a float"
)]
pub trait Int: Num + Bits {
    /// The literal `v`, which must fit (checked at `site`).
    fn from_lit(site: &Site, v: i128) -> Self;
    /// `a << n` as a Rust release build computes it: the amount masked to the width
    /// (`wrapping_shl`); with `checks` (debug mode) an amount outside `0..BITS` fails at `site`
    /// as a Rust debug build panics.
    fn shl<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self;
    /// `a >> n` (arithmetic on signed types: the sign is shifted in; logical on unsigned
    /// ones), masked and checked as [`Int::shl`].
    fn shr<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self;
    /// `count_ones`, a `u32` as Rust's.
    fn count_ones(self) -> u32;
    /// `leading_zeros`, a `u32` as Rust's.
    fn leading_zeros(self) -> u32;
    /// `trailing_zeros`, a `u32` as Rust's.
    fn trailing_zeros(self) -> u32;
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
    /// `pow` as a Rust debug build computes it: `None` where it overflows.
    fn checked_pow<N: Int>(self, n: N) -> Option<Self>;
    /// `pow` in the site's mode: wrapping, or with `checks` (debug mode) a failure at `site`
    /// where a Rust debug build panics ("attempt to multiply with overflow").
    #[inline]
    fn pow_at<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self {
        if checks {
            a.checked_pow(n)
                .unwrap_or_else(|| site.fail("attempt to multiply with overflow"))
        } else {
            a.pow(n)
        }
    }
    /// `isqrt`: the largest integer whose square is at most `x`; a negative `x` fails at `site`,
    /// where Rust panics.
    fn isqrt(site: &Site, x: Self) -> Self;
    /// The unsigned integer type of the same width (`u32` for `i32` and `u32`): the type of
    /// [`Int::abs_diff`]'s result, as Rust's.
    type Unsigned: Int;
    /// `abs_diff`: the distance, of the unsigned type of the width as Rust's
    /// (`i64::MIN.abs_diff(i64::MAX)` is `u64::MAX`).
    fn abs_diff(self, o: Self) -> Self::Unsigned;
    /// `div_ceil`: the quotient rounded toward +∞ (Rust's, stable on unsigned integers; on signed
    /// ones the `int_roundings` definition: `a / b`, plus 1 when the remainder is not zero and
    /// `a` and `b` have the same sign). Division by zero and `MIN / -1` fail at `site`.
    fn div_ceil(site: &Site, a: Self, b: Self) -> Self;
    /// `count_zeros`, a `u32` as Rust's.
    fn count_zeros(self) -> u32;
    /// `leading_ones`, a `u32` as Rust's.
    fn leading_ones(self) -> u32;
    /// `trailing_ones`, a `u32` as Rust's.
    fn trailing_ones(self) -> u32;
    /// `unsigned_abs`, of the unsigned type of the width as Rust's (Rust has it on signed
    /// integers; of an unsigned one, the value).
    fn unsigned_abs(self) -> Self::Unsigned;
    /// `is_positive` (Rust's of signed integers; of an unsigned one, `x > 0`).
    fn is_positive(self) -> bool;
    /// `is_negative` (Rust's of signed integers; of an unsigned one, `false`).
    fn is_negative(self) -> bool;
    /// `wrapping_shl(n as u32)`: the amount an integer of any type, masked to the width.
    fn wrapping_shl<N: Int>(self, n: N) -> Self;
    /// `wrapping_shr(n as u32)`.
    fn wrapping_shr<N: Int>(self, n: N) -> Self;
    /// `wrapping_pow(n as u32)`, in every mode (debug mode too: it never fails).
    fn wrapping_pow<N: Int>(self, n: N) -> Self;
    /// `saturating_pow(n as u32)`.
    fn saturating_pow<N: Int>(self, n: N) -> Self;
    /// `wrapping_abs` (of an unsigned integer, the value).
    fn wrapping_abs(self) -> Self;
    /// `saturating_abs` (of an unsigned integer, the value).
    fn saturating_abs(self) -> Self;
    /// `saturating_neg` (of an unsigned integer, 0, as `0.saturating_sub(x)`).
    fn saturating_neg(self) -> Self;
    /// `wrapping_div`: `MIN / -1` is `MIN`; division by zero fails at `site`, as `/`.
    fn wrapping_div(site: &Site, a: Self, b: Self) -> Self;
    /// `wrapping_rem`: `MIN % -1` is 0; division by zero fails at `site`, as `%`.
    fn wrapping_rem(site: &Site, a: Self, b: Self) -> Self;
    /// `ilog2`, a `u32`; a number that is not positive fails at `site`, where Rust panics.
    fn ilog2(site: &Site, x: Self) -> u32;
    /// `ilog10`, a `u32`; a number that is not positive fails at `site`, where Rust panics.
    fn ilog10(site: &Site, x: Self) -> u32;
    /// `is_power_of_two`. Rust has it on unsigned integers; on a signed one it is
    /// `x > 0 && x & (x - 1) == 0` (`MIN`, whose bits are a power of two's, is not one).
    fn is_power_of_two(self) -> bool;
    /// `next_power_of_two`: the smallest power of two at least `x` (1 for every `x <= 1`), and
    /// 0 when that is not representable — what a Rust release build gives on an unsigned
    /// integer's overflow (on a signed one, above `2^(BITS-2)`).
    fn next_power_of_two(self) -> Self;
    /// `next_power_of_two` in the site's mode: 0 where the power is not representable, or with
    /// `checks` (debug mode) a failure at `site` there, as a Rust debug build panics ("attempt
    /// to add with overflow").
    #[inline]
    fn next_power_of_two_at(checks: bool, site: &Site, a: Self) -> Self {
        let p = a.next_power_of_two();
        if checks && p == Self::from_index(0) {
            site.fail("attempt to add with overflow");
        }
        p
    }
    /// The value as an index or a count of the runtime, which counts in `i64`: exact for every
    /// value of a type that fits in `i64`, [`i64::MAX`] for a larger one (out of range of every
    /// sequence and tensor all the same), so that an index of any integer type is checked, and
    /// fails, as an `i64` one.
    fn to_index(self) -> i64;
    /// A position `i` of a loop or `create` whose count is of this type (`0 <= i < count`, so it
    /// fits): the loop variable, of the count's type as in Rust's `for i in 0..n`.
    fn from_index(i: i64) -> Self;
    /// The type's greatest value as an index: `MAX`, or [`i64::MAX`] for a type whose `MAX` is
    /// larger. A read at `k + c` of a loop over `0..n` counted in this type reads the sum the
    /// program computes, not a wrapped one, only where `k + c <= MAX_INDEX`.
    const MAX_INDEX: i64;
}

/// An integer or a `bool`: what `&`, `|`, `^` and `!` apply to (bitwise on integers, logical
/// on `bool`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no bit operators inside `accelerate!`",
    label = "`accelerate!` applies `&`, `|`, `^` or `!` to values of this type",
    note = "`&`, `|`, `^` and `!` apply to integers (i8 i16 i32 i64 isize u8 u16 u32 u64 usize) and bool"
)]
pub trait Bits:
    Scalar
    + core::ops::BitAnd<Output = Self>
    + core::ops::BitOr<Output = Self>
    + core::ops::BitXor<Output = Self>
    + core::ops::Not<Output = Self>
{
}

macro_rules! bits {
    ($($t:ty),*) => {$(impl Bits for $t {})*};
}
bits!(i64, i32, bool, i8, i16, isize, u8, u16, u32, u64, usize);

/// A floating-point number: `f64` or `f32` (what a float literal may be).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a floating-point number that `accelerate!` computes with",
    label = "`accelerate!` uses values of this type as floats",
    note = "floats inside `accelerate!` are f64 or f32; a float literal like `1.5` makes the values \
            it is used with floats: convert an integer with `int2float(x)`"
)]
pub trait Float: Num {
    /// A float literal: its digits read as an `f64` (`wide`) and as an `f32` (`narrow`), each
    /// rounded once; the type's own reading, as Rust reads a literal of that type.
    fn from_lit(wide: f64, narrow: f32) -> Self;
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
    /// `recip`: `1 / x`.
    fn recip(self) -> Self;
    /// `is_infinite`.
    fn is_infinite(self) -> bool;
    /// `is_sign_negative`: the sign bit (of a NaN too).
    fn is_sign_negative(self) -> bool;
    /// `is_sign_positive`: the sign bit clear (of a NaN too).
    fn is_sign_positive(self) -> bool;
    /// `is_normal`: neither zero, subnormal, infinite nor NaN.
    fn is_normal(self) -> bool;
    /// `copysign`: the magnitude of `self`, the sign of `s`.
    fn copysign(self, s: Self) -> Self;
    /// `exp_m1`: `e^x - 1`, accurate near 0.
    fn exp_m1(self) -> Self;
    /// `ln_1p`: `ln(1 + x)`, accurate near 0.
    fn ln_1p(self) -> Self;
    /// `log(base)`: Rust's `self.ln() / base.ln()`.
    fn log(self, base: Self) -> Self;
    /// `asinh`.
    fn asinh(self) -> Self;
    /// `acosh`.
    fn acosh(self) -> Self;
    /// `atanh`.
    fn atanh(self) -> Self;
    /// `round_ties_even`: half way cases to the even integer.
    fn round_ties_even(self) -> Self;
}

/// An arithmetic operation that a Rust debug build checks for overflow ([`Num::checked`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `-a`.
    Neg,
    /// `a.abs()` (`b` unused).
    Abs,
}

impl Arith {
    /// What a Rust debug build panics with where the operation overflows.
    fn overflow(self) -> &'static str {
        match self {
            Arith::Add => "attempt to add with overflow",
            Arith::Sub => "attempt to subtract with overflow",
            Arith::Mul => "attempt to multiply with overflow",
            // `MIN.abs()` negates.
            Arith::Neg | Arith::Abs => "attempt to negate with overflow",
        }
    }
}

/// `op` of `a` and `b` in a site's mode: `wrapped()` (a release build's result), or with
/// `checks` (debug mode) the checked result, failing at `site` in Rust's words where it
/// overflows.
#[inline]
fn in_mode<T: Num>(
    checks: bool,
    site: &Site,
    op: Arith,
    a: T,
    b: T,
    wrapped: impl FnOnce() -> T,
) -> T {
    if checks {
        T::checked(op, a, b).unwrap_or_else(|| site.fail(op.overflow()))
    } else {
        wrapped()
    }
}

/// `Num` and `Int` for the integers; `$signed` says whether `MIN / -1` (the one quotient that
/// overflows) can occur, `$u` is the unsigned type of the width.
macro_rules! ints {
    ($($t:ty: $signed:tt $u:ty),*) => {$(
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
                // A test of `b` alone first: the same for every element of a loop over `a`, and
                // the test `rem` makes, so that `k / n` and `k % n` stay one division (in Parboil
                // tpacf's loop they were two). `MIN / -1` panics in every Rust build.
                if $signed && b == (0 as $t).wrapping_sub(1) {
                    if a == <$t>::MIN {
                        site.fail("attempt to divide with overflow");
                    }
                    a.wrapping_neg()
                } else {
                    a / b
                }
            }
            #[inline]
            fn rem(site: &Site, a: Self, b: Self) -> Self {
                if b == 0 {
                    site.fail("Division by zero");
                }
                // Any `x % -1` is 0, but `MIN % -1` panics in every Rust build.
                if $signed && b == (0 as $t).wrapping_sub(1) {
                    if a == <$t>::MIN {
                        site.fail("attempt to calculate the remainder with overflow");
                    }
                    0
                } else {
                    a % b
                }
            }
            #[inline]
            fn neg(self) -> Self { self.wrapping_neg() }
            #[inline]
            fn checked(op: Arith, a: Self, b: Self) -> Option<Self> {
                match op {
                    Arith::Add => a.checked_add(b),
                    Arith::Sub => a.checked_sub(b),
                    Arith::Mul => a.checked_mul(b),
                    Arith::Neg => a.checked_neg(),
                    Arith::Abs => ints!(@checked_abs $signed a),
                }
            }
            #[inline]
            fn abs(self) -> Self { ints!(@abs $signed self) }
            #[inline]
            fn signum(self) -> Self { ints!(@signum $signed self) }
            #[inline]
            fn clamp(site: &Site, x: Self, lo: Self, hi: Self) -> Self {
                if lo > hi {
                    // Rust's `Ord::clamp` message.
                    site.fail(format!("min > max. min = {lo:?}, max = {hi:?}"));
                }
                if x < lo { lo } else if x > hi { hi } else { x }
            }
            // Rust's definitions on `%` and `/`, which fail where Rust's `rem_euclid` and
            // `div_euclid` panic; a remainder is negative only on a signed type.
            #[inline]
            #[allow(unused_comparisons)]
            fn rem_euclid(site: &Site, a: Self, b: Self) -> Self {
                let r = Num::rem(site, a, b);
                if r < 0 { r.wrapping_add(ints!(@abs $signed b)) } else { r }
            }
            #[inline]
            #[allow(unused_comparisons)]
            fn div_euclid(site: &Site, a: Self, b: Self) -> Self {
                let q = Num::div(site, a, b);
                if a % b < 0 {
                    if b > 0 { q.wrapping_sub(1) } else { q.wrapping_add(1) }
                } else {
                    q
                }
            }
        }
        impl Int for $t {
            #[inline]
            fn shl<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self {
                let n = n.as_i64();
                if checks && !(0..i64::from(<$t>::BITS)).contains(&n) {
                    site.fail("attempt to shift left with overflow");
                }
                a.wrapping_shl(n as u32)
            }
            #[inline]
            fn shr<N: Int>(checks: bool, site: &Site, a: Self, n: N) -> Self {
                let n = n.as_i64();
                if checks && !(0..i64::from(<$t>::BITS)).contains(&n) {
                    site.fail("attempt to shift right with overflow");
                }
                a.wrapping_shr(n as u32)
            }
            #[inline]
            fn count_ones(self) -> u32 { <$t>::count_ones(self) }
            #[inline]
            fn leading_zeros(self) -> u32 { <$t>::leading_zeros(self) }
            #[inline]
            fn trailing_zeros(self) -> u32 { <$t>::trailing_zeros(self) }
            #[inline]
            fn reverse_bits(self) -> Self { <$t>::reverse_bits(self) }
            #[inline]
            fn swap_bytes(self) -> Self { <$t>::swap_bytes(self) }
            #[inline]
            fn rotate_left<N: Int>(self, n: N) -> Self { <$t>::rotate_left(self, n.as_i64() as u32) }
            #[inline]
            fn rotate_right<N: Int>(self, n: N) -> Self { <$t>::rotate_right(self, n.as_i64() as u32) }
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
            fn pow<N: Int>(self, n: N) -> Self { <$t>::wrapping_pow(self, n.as_i64() as u32) }
            #[inline]
            fn checked_pow<N: Int>(self, n: N) -> Option<Self> {
                <$t>::checked_pow(self, n.as_i64() as u32)
            }
            #[inline]
            #[allow(unused_comparisons)] // `x < 0` is false on an unsigned type, as meant.
            fn isqrt(site: &Site, x: Self) -> Self {
                if x < 0 {
                    site.fail("argument of integer square root cannot be negative");
                }
                <$t>::isqrt(x)
            }
            type Unsigned = $u;
            #[inline]
            fn abs_diff(self, o: Self) -> $u {
                <$t>::abs_diff(self, o)
            }
            #[inline]
            #[allow(unused_comparisons)] // On an unsigned type the signs always agree.
            fn div_ceil(site: &Site, a: Self, b: Self) -> Self {
                // `MIN / -1` fails as `/` does (`int_roundings` divides first).
                let (d, r) = (Num::div(site, a, b), a.wrapping_rem(b));
                // Unstable `int_roundings` on signed integers; on an unsigned type, 1 more
                // whenever `r != 0` (its stable `div_ceil`).
                if r != 0 && (a < 0) == (b < 0) { d.wrapping_add(1) } else { d }
            }
            #[inline]
            fn count_zeros(self) -> u32 { <$t>::count_zeros(self) }
            #[inline]
            fn leading_ones(self) -> u32 { <$t>::leading_ones(self) }
            #[inline]
            fn trailing_ones(self) -> u32 { <$t>::trailing_ones(self) }
            #[inline]
            fn unsigned_abs(self) -> $u { ints!(@unsigned_abs $signed self) }
            #[inline]
            fn is_positive(self) -> bool { self > 0 }
            #[inline]
            #[allow(unused_comparisons)] // `false` on an unsigned type, as meant.
            fn is_negative(self) -> bool { self < 0 }
            #[inline]
            fn wrapping_shl<N: Int>(self, n: N) -> Self { <$t>::wrapping_shl(self, n.as_i64() as u32) }
            #[inline]
            fn wrapping_shr<N: Int>(self, n: N) -> Self { <$t>::wrapping_shr(self, n.as_i64() as u32) }
            #[inline]
            fn wrapping_pow<N: Int>(self, n: N) -> Self { <$t>::wrapping_pow(self, n.as_i64() as u32) }
            #[inline]
            fn saturating_pow<N: Int>(self, n: N) -> Self {
                <$t>::saturating_pow(self, n.as_i64() as u32)
            }
            #[inline]
            fn wrapping_abs(self) -> Self { ints!(@abs $signed self) }
            #[inline]
            fn saturating_abs(self) -> Self { ints!(@saturating_abs $signed self) }
            #[inline]
            fn saturating_neg(self) -> Self { (0 as $t).saturating_sub(self) }
            #[inline]
            fn wrapping_div(site: &Site, a: Self, b: Self) -> Self {
                if b == 0 {
                    site.fail("Division by zero");
                }
                a.wrapping_div(b)
            }
            #[inline]
            fn wrapping_rem(site: &Site, a: Self, b: Self) -> Self {
                if b == 0 {
                    site.fail("Division by zero");
                }
                a.wrapping_rem(b)
            }
            #[inline]
            fn ilog2(site: &Site, x: Self) -> u32 {
                if x <= 0 {
                    site.fail("argument of integer logarithm must be positive");
                }
                <$t>::ilog2(x)
            }
            #[inline]
            fn ilog10(site: &Site, x: Self) -> u32 {
                if x <= 0 {
                    site.fail("argument of integer logarithm must be positive");
                }
                <$t>::ilog10(x)
            }
            #[inline]
            fn is_power_of_two(self) -> bool { self > 0 && self & (self - 1) == 0 }
            #[inline]
            fn next_power_of_two(self) -> Self {
                if self <= 1 {
                    return 1;
                }
                // The exponent of the power; on a signed type `BITS - 1` is the sign bit's.
                let e = <$t>::BITS - (self - 1).leading_zeros();
                if e >= <$t>::BITS - ($signed as u32) { 0 } else { 1 << e }
            }
            fn to_index(self) -> i64 { i64::try_from(self).unwrap_or(i64::MAX) }
            const MAX_INDEX: i64 = if (<$t>::MAX as u128) > (i64::MAX as u128) {
                i64::MAX
            } else {
                <$t>::MAX as i64
            };
            #[inline]
            fn from_index(i: i64) -> Self { i as $t }
            #[inline]
            fn from_lit(site: &Site, v: i128) -> Self {
                match <$t>::try_from(v) {
                    Ok(x) => x,
                    Err(_) => site.fail(format!(
                        "the integer literal {v} does not fit in {}", stringify!($t)
                    )),
                }
            }
        }
    )*};
    // Rust has no `abs` or `signum` of an unsigned integer (the compiler does not offer them
    // there); of one that reaches these generically, the value itself and 0 or 1.
    (@abs true $x:ident) => { $x.wrapping_abs() };
    (@abs false $x:ident) => { $x };
    (@unsigned_abs true $x:ident) => { $x.unsigned_abs() };
    (@unsigned_abs false $x:ident) => { $x };
    (@saturating_abs true $x:ident) => { $x.saturating_abs() };
    (@saturating_abs false $x:ident) => { $x };
    (@checked_abs true $x:ident) => { $x.checked_abs() };
    (@checked_abs false $x:ident) => { Some($x) };
    (@signum true $x:ident) => { $x.signum() };
    (@signum false $x:ident) => { (($x != 0) as u8).into() };
}
ints!(
    i64: true u64, i32: true u32, i8: true u8, i16: true u16, isize: true usize,
    u8: false u8, u16: false u16, u32: false u32, u64: false u64, usize: false usize
);

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
            fn rem(_: &Site, a: Self, b: Self) -> Self { a % b }
            #[inline]
            fn neg(self) -> Self { -self }
            #[inline]
            fn checked(op: Arith, a: Self, b: Self) -> Option<Self> {
                Some(match op {
                    Arith::Add => a + b,
                    Arith::Sub => a - b,
                    Arith::Mul => a * b,
                    Arith::Neg => -a,
                    Arith::Abs => <$t>::abs(a),
                })
            }
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
            #[inline]
            fn rem_euclid(_: &Site, a: Self, b: Self) -> Self { <$t>::rem_euclid(a, b) }
            #[inline]
            fn div_euclid(_: &Site, a: Self, b: Self) -> Self { <$t>::div_euclid(a, b) }
        }
        impl Float for $t {
            #[inline]
            fn from_lit(wide: f64, narrow: f32) -> Self {
                if <$t>::MANTISSA_DIGITS == f32::MANTISSA_DIGITS { narrow as $t } else { wide as $t }
            }
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
            fn powi<N: Int>(self, n: N) -> Self { <$t>::powi(self, n.as_i64() as i32) }
            #[inline]
            fn recip(self) -> Self { <$t>::recip(self) }
            #[inline]
            fn is_infinite(self) -> bool { <$t>::is_infinite(self) }
            #[inline]
            fn is_sign_negative(self) -> bool { <$t>::is_sign_negative(self) }
            #[inline]
            fn is_sign_positive(self) -> bool { <$t>::is_sign_positive(self) }
            #[inline]
            fn is_normal(self) -> bool { <$t>::is_normal(self) }
            #[inline]
            fn copysign(self, s: Self) -> Self { <$t>::copysign(self, s) }
            #[inline]
            fn exp_m1(self) -> Self { <$t>::exp_m1(self) }
            #[inline]
            fn ln_1p(self) -> Self { <$t>::ln_1p(self) }
            #[inline]
            fn log(self, base: Self) -> Self { <$t>::log(self, base) }
            #[inline]
            fn asinh(self) -> Self { <$t>::asinh(self) }
            #[inline]
            fn acosh(self) -> Self { <$t>::acosh(self) }
            #[inline]
            fn atanh(self) -> Self { <$t>::atanh(self) }
            #[inline]
            fn round_ties_even(self) -> Self { <$t>::round_ties_even(self) }
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
        }
        macro_rules! each {
            ($($t:ty),*) => {{
                $(check::<$t>(); element::<$t>();)*
                [$(<$t as Scalar>::NUMBER),*]
            }};
        }
        assert_eq!(
            each!(
                i64, f64, i32, f32, bool, i8, i16, isize, u8, u16, u32, u64, usize
            ),
            Number::ALL,
            "every number has its scalar and element"
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
    fn casts_are_rust_s_as() {
        assert_eq!(300_i64.cast::<u8>(), 44);
        assert_eq!(<u8 as Int>::MAX_INDEX, 255);
        assert_eq!(<i32 as Int>::MAX_INDEX, i32::MAX as i64);
        assert_eq!(<u64 as Int>::MAX_INDEX, i64::MAX);
        assert_eq!(<usize as Int>::MAX_INDEX, i64::MAX);
        assert_eq!(<i64 as Int>::MAX_INDEX, i64::MAX);
        assert_eq!((-1_i8).cast::<u64>(), u64::MAX);
        assert_eq!(200_u8.cast::<i8>(), -56);
        assert_eq!(f64::NAN.cast::<i32>(), 0);
        assert_eq!((-1e300_f64).cast::<i16>(), i16::MIN);
        assert_eq!(1e300_f64.cast::<usize>(), usize::MAX);
        assert_eq!((-3.9_f32).cast::<u32>(), 0);
        assert_eq!(true.cast::<f32>(), 1.0);
        assert_eq!(u64::MAX.cast::<f32>(), u64::MAX as f32);
        assert_eq!(i64::MAX.cast::<f64>(), 9.223_372_036_854_776e18);
    }

    #[test]
    fn unsigned_arithmetic_wraps_and_divides_as_rust() {
        let site = Site::new("n.rs", 1, 1);
        assert_eq!(250_u8.add(10), 4);
        assert_eq!(0_u16.sub(1), u16::MAX);
        assert_eq!(u32::MAX.mul(u32::MAX), 1);
        assert_eq!(u8::div(&site, 255, 2), 127);
        assert_eq!(u64::rem(&site, u64::MAX, 10), 5);
        assert_eq!(i8::div(&site, i8::MIN + 1, -1), i8::MAX);
        assert_eq!(i8::rem(&site, i8::MIN + 1, -1), 0);
        let fails = |f: fn(&Site)| {
            let site = Site::new("n.rs", 1, 1);
            let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&site)))
                .expect_err("fails");
            e.downcast_ref::<String>().cloned().unwrap_or_default()
        };
        assert!(
            fails(|s| {
                i8::div(s, i8::MIN, -1);
            })
            .ends_with("attempt to divide with overflow")
        );
        assert!(
            fails(|s| {
                i8::rem(s, i8::MIN, -1);
            })
            .ends_with("attempt to calculate the remainder with overflow")
        );
        assert!(
            fails(|s| {
                <i32 as Num>::rem_euclid(s, i32::MIN, -1);
            })
            .ends_with("attempt to calculate the remainder with overflow")
        );
        assert!(
            fails(|s| {
                <i16 as Num>::div_euclid(s, i16::MIN, -1);
            })
            .ends_with("attempt to divide with overflow")
        );
        assert!(
            fails(|s| {
                <i64 as Int>::div_ceil(s, i64::MIN, -1);
            })
            .ends_with("attempt to divide with overflow")
        );
        assert_eq!(<u8 as Int>::div_ceil(&site, 255, 255), 1);
        assert_eq!(i16::rem(&site, -7, 2), -1);
        assert_eq!(<u8 as Int>::shr(false, &site, 0x80, 7_u64), 1, "logical");
        assert_eq!(
            <i8 as Int>::shr(false, &site, -128, 7_usize),
            -1,
            "arithmetic"
        );
        assert_eq!(7_usize.signum(), 1);
        assert_eq!(0_u8.signum(), 0);
        assert_eq!(5_u16.abs(), 5);
        assert_eq!(<u8 as Int>::from_lit(&site, 255), 255);
        assert_eq!(f64::rem(&site, 7.5, 2.0), 1.5);
    }

    #[test]
    fn the_other_methods_are_rust_s_and_unsigned_ones_have_no_sign() {
        let site = Site::new("n.rs", 1, 1);
        assert_eq!(<i8 as Int>::unsigned_abs(i8::MIN), 128_u8);
        assert_eq!(<i16 as Int>::saturating_neg(i16::MIN), i16::MAX);
        assert_eq!(<i32 as Int>::saturating_abs(i32::MIN), i32::MAX);
        assert_eq!(<i64 as Int>::wrapping_div(&site, i64::MIN, -1), i64::MIN);
        assert_eq!(<i64 as Int>::wrapping_rem(&site, i64::MIN, -1), 0);
        assert_eq!(<u8 as Int>::wrapping_shl(1, 9_i64), 2);
        assert_eq!(<i8 as Int>::saturating_pow(-2, 7_u8), i8::MIN);
        assert_eq!(<i8 as Int>::saturating_pow(-2, 8_u8), i8::MAX);
        assert_eq!(<u16 as Int>::ilog10(&site, 9999), 3);
        // Methods Rust has on signed integers only, of an unsigned type the captured values fix.
        assert!(!<u8 as Int>::is_negative(200));
        assert!(<u8 as Int>::is_positive(200));
        assert_eq!(<u32 as Int>::unsigned_abs(7), 7);
        assert_eq!(<u64 as Int>::saturating_neg(7), 0);
        assert_eq!(<u16 as Int>::wrapping_abs(7), 7);
        assert_eq!(<f64 as Num>::rem_euclid(&site, -7.5, 2.0), 0.5);
        assert_eq!(<f32 as Num>::div_euclid(&site, -7.5, 2.0), -4.0);
        assert!(<f64 as Float>::is_sign_negative(-f64::NAN));
    }

    #[test]
    fn same_code_for_both_numbers() {
        assert_eq!(poly(7_i64, 2), (9, 12, -3, false));
        assert_eq!(poly(1.0_f64, 2.0), (3.0, 0.0, -0.5, true));
        assert_eq!(i64::MAX.add(1), i64::MIN, "integers wrap");
    }
}
