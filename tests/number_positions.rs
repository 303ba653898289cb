//! Every number type with its type written in each position the language has for one — an
//! annotation (`let x: f32`, `|x: f32|`), a literal's suffix (`x * 1f32`), a cast (`x as f32`),
//! a `fn` item's signature, a `#[pmexpr]` function's signature, a derived record's field —
//! through every float method and math intrinsic on `f32` and `f64`, and every integer method and
//! operator on narrow and wide integers, against plain Rust, bit for bit.
//!
//! One table of rows per family (`float_table!`, `int_table!`): each row is a closure that is
//! both PMExpr (inside the sites) and plain Rust (the expected values; the intrinsics `sqrt pow
//! int2float floorfi …` are given their Rust meaning below). The macros write one site per type
//! and position, run on `seq`, `cpu` and debug mode. The build hook sees no site that a
//! `macro_rules!` writes, so the CUDA targets run the sites written out at the end of the file
//! (the rows once, applied at each type with the type written); the device generators see the
//! program after inference, where every position has become the same type.
//!
//! Left out, as the language refuses them: Rust's methods that exist only for signed or only for unsigned integers on the others (`abs`,
//! `signum` and unary `-` on unsigned integers; `div_ceil`, `is_power_of_two` and
//! `next_power_of_two` on signed ones, which Rust has only unstable or not at all).

#![allow(unused_variables, clippy::excessive_precision)]

mod common;

use pmexpr::{Record, Target, Tensor, accelerate, pmexpr, with_target};

/// Plain Rust's meaning of the float intrinsics (`sqrt(x)` is `x.sqrt()` of `x`'s type), so that
/// a row reads the same as PMExpr and as Rust.
trait Float: Copy {
    fn sqrt_(self) -> Self;
    fn exp_(self) -> Self;
    fn ln_(self) -> Self;
    fn sin_(self) -> Self;
    fn cos_(self) -> Self;
    fn powf_(self, e: Self) -> Self;
    fn from_i64(i: i64) -> Self;
    fn floor_i64(self) -> i64;
}

macro_rules! float_impls {
    ($($t:ident),*) => {$(
        impl Float for $t {
            fn sqrt_(self) -> Self { self.sqrt() }
            fn exp_(self) -> Self { self.exp() }
            fn ln_(self) -> Self { self.ln() }
            fn sin_(self) -> Self { self.sin() }
            fn cos_(self) -> Self { self.cos() }
            fn powf_(self, e: Self) -> Self { self.powf(e) }
            fn from_i64(i: i64) -> Self { i as $t }
            fn floor_i64(self) -> i64 { self.floor() as i64 }
        }
    )*};
}
float_impls!(f32, f64);

fn sqrt<F: Float>(x: F) -> F {
    x.sqrt_()
}
fn exp<F: Float>(x: F) -> F {
    x.exp_()
}
fn log<F: Float>(x: F) -> F {
    x.ln_()
}
fn sin<F: Float>(x: F) -> F {
    x.sin_()
}
fn cos<F: Float>(x: F) -> F {
    x.cos_()
}
fn pow<F: Float>(x: F, e: F) -> F {
    x.powf_(e)
}
/// `int2float(i)`: `i as F`, of any integer.
fn int2float<I: Into<i64>, F: Float>(i: I) -> F {
    F::from_i64(i.into())
}
/// `floorfi(x)`: `x.floor() as i64` (saturating; NaN gives 0).
fn floorfi<F: Float>(x: F) -> i64 {
    x.floor_i64()
}

/// Results compared bit for bit (every NaN the same), or within `ulps` units in the last place.
trait Exact: Copy + std::fmt::Debug {
    /// The value's bits, ordered as the values are (floats), every NaN one value.
    fn ordered(self) -> i128;
    fn is_nan_(self) -> bool {
        false
    }
}

macro_rules! exact_ints {
    ($($t:ident),*) => {$(impl Exact for $t { fn ordered(self) -> i128 { self as i128 } })*};
}
exact_ints!(i8, u16, i32, i64, u64);

macro_rules! exact_floats {
    ($($t:ident $bits:ident),*) => {$(
        impl Exact for $t {
            fn ordered(self) -> i128 {
                let b = self.to_bits();
                // Sign and magnitude to one line: -0.0 just below +0.0.
                if b >> ($bits::BITS - 1) == 1 { -((b & !(1 << ($bits::BITS - 1))) as i128) - 1 } else { b as i128 }
            }
            fn is_nan_(self) -> bool { self.is_nan() }
        }
    )*};
}
exact_floats!(f32 u32, f64 u64);

/// Whether `got` is `want`: the same bits (any NaN for a NaN), or within `ulps` of it.
fn agrees<T: Exact>(got: T, want: T, ulps: i128) -> bool {
    if got.is_nan_() || want.is_nan_() {
        return got.is_nan_() && want.is_nan_();
    }
    (got.ordered() - want.ordered()).abs() <= ulps
}

/// Checks the rows `got` (row-major, `n` values each) against `want`; `ulps(r)` is row `r`'s
/// tolerance. The message names the row as written, the case and the operands.
fn check<T: Exact, X: std::fmt::Debug>(
    case: &str,
    got: &[T],
    want: &[T],
    rows: &[&str],
    operands: &[X],
    ulps: impl Fn(usize) -> i128,
) {
    let n = operands.len();
    assert_eq!(got.len(), want.len(), "{case}: the number of results");
    assert_eq!(want.len(), rows.len() * n, "{case}: the table's rows");
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (r, j) = (k / n, k % n);
        assert!(
            agrees(g, w, ulps(r)),
            "{case}: row {r} `{}` of {:?}: got {g:?}, Rust gives {w:?}",
            rows[r],
            operands[j]
        );
    }
}

/// The CPU targets: the sequential one (the semantics), the multicore one, debug mode.
const CPU: [Target; 3] = [Target::Seq, Target::Cpu, Target::Debug];

/// Every pair of `vals`, as two columns.
fn pairs<T: Copy>(vals: &[T]) -> (Vec<T>, Vec<T>) {
    let a = vals
        .iter()
        .flat_map(|&x| vals.iter().map(move |_| x))
        .collect();
    let b = vals.iter().flat_map(|_| vals.iter().copied()).collect();
    (a, b)
}

// ----- the types written in `#[pmexpr]` signatures and record fields (the hook reads these from
// the file, so they are written out, not made by a macro) -----

#[pmexpr]
fn np_f32(v: f32) -> f32 {
    v
}
#[pmexpr]
fn np_f64(v: f64) -> f64 {
    v
}
#[pmexpr]
fn np_i8(v: i8) -> i8 {
    v
}
#[pmexpr]
fn np_u16(v: u16) -> u16 {
    v
}
#[pmexpr]
fn np_i32(v: i32) -> i32 {
    v
}
#[pmexpr]
fn np_i64(v: i64) -> i64 {
    v
}
#[pmexpr]
fn np_u64(v: u64) -> u64 {
    v
}

/// Float methods in a `#[pmexpr]` function's body, on its parameters' written types.
#[pmexpr]
fn np_f32_body(x: f32, y: f32) -> f32 {
    x.sqrt() + x.hypot(y) * y.abs().cbrt() + x.ln() * pow(y, 0.5) + x.mul_add(y, 1.0f32)
}
#[pmexpr]
fn np_f64_body(x: f64, y: f64) -> f64 {
    x.sqrt() + x.hypot(y) * y.abs().cbrt() + x.ln() * pow(y, 0.5) + x.mul_add(y, 1.0f64)
}

#[allow(dead_code)] // built inside the sites only
#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct NpF32 {
    v: f32,
    w: f32,
}
#[allow(dead_code)] // built inside the sites only
#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct NpF64 {
    v: f64,
    w: f64,
}
#[allow(dead_code)] // built inside the sites only
#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct NpI8 {
    v: i8,
    w: i8,
}
#[allow(dead_code)] // built inside the sites only
#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct NpU16 {
    v: u16,
    w: u16,
}
#[allow(dead_code)] // built inside the sites only
#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct NpI32 {
    v: i32,
    w: i32,
}
#[allow(dead_code)] // built inside the sites only
#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct NpI64 {
    v: i64,
    w: i64,
}
#[allow(dead_code)] // built inside the sites only
#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct NpU64 {
    v: u64,
    w: u64,
}

// ----- floats -----

/// The float rows: `(|x, y, k| …)` of two floats of one type and an `i32`, each marked `exact`
/// (correctly rounded, or computed as Rust computes it, on every target) or `libm` (C's math
/// library on the CUDA targets, which may differ from Rust's in the last places).
macro_rules! float_table {
    ($cb:ident!($($args:tt)*)) => {
        $cb!($($args)* [
            0 exact (|x, y, k| x.sqrt())
            1 libm (|x, y, k| x.exp())
            2 libm (|x, y, k| x.ln())
            3 libm (|x, y, k| x.sin())
            4 libm (|x, y, k| x.cos())
            5 libm (|x, y, k| x.powf(y))
            6 exact (|x, y, k| sqrt(x))
            7 libm (|x, y, k| exp(x))
            8 libm (|x, y, k| log(x))
            9 libm (|x, y, k| pow(x, y))
            10 libm (|x, y, k| sin(x))
            11 libm (|x, y, k| cos(x))
            12 exact (|x, y, k| x.floor())
            13 exact (|x, y, k| x.ceil())
            14 exact (|x, y, k| x.round())
            15 exact (|x, y, k| x.trunc())
            16 exact (|x, y, k| x.fract())
            17 exact (|x, y, k| x.abs())
            18 exact (|x, y, k| x.signum())
            19 libm (|x, y, k| x.cbrt())
            20 libm (|x, y, k| x.exp2())
            21 libm (|x, y, k| x.log2())
            22 libm (|x, y, k| x.log10())
            23 libm (|x, y, k| x.tan())
            24 libm (|x, y, k| x.asin())
            25 libm (|x, y, k| x.acos())
            26 libm (|x, y, k| x.atan())
            27 libm (|x, y, k| x.atan2(y))
            28 libm (|x, y, k| x.sinh())
            29 libm (|x, y, k| x.cosh())
            30 libm (|x, y, k| x.tanh())
            31 libm (|x, y, k| x.hypot(y))
            32 exact (|x, y, k| if x.is_nan() { 1.0 } else { 0.0 })
            33 exact (|x, y, k| if x.is_finite() { 1.0 } else { 0.0 })
            34 exact (|x, y, k| x.to_radians())
            35 exact (|x, y, k| x.to_degrees())
            36 exact (|x, y, k| x.mul_add(y, 0.5))
            37 exact (|x, y, k| x.clamp(-1.5, 2.0))
            38 exact (|x, y, k| x.powi(k))
            // Rust leaves which zero `min` and `max` give of -0.0 and 0.0 open: `+ 0.0` makes
            // both 0.0, and changes nothing else.
            39 exact (|x, y, k| x.min(y) + 0.0)
            40 exact (|x, y, k| x.max(y) + 0.0)
            41 exact (|x, y, k| x + y)
            42 exact (|x, y, k| x - y)
            43 exact (|x, y, k| x * y)
            44 exact (|x, y, k| x / y)
            45 exact (|x, y, k| -x)
            46 exact (|x, y, k| (if x < y { 1.0 } else { 0.0 }) + (if x <= y { 2.0 } else { 0.0 }) + (if x == y { 4.0 } else { 0.0 }) + (if x != y { 8.0 } else { 0.0 }) + (if x > y { 16.0 } else { 0.0 }) + (if x >= y { 32.0 } else { 0.0 }))
            47 exact (|x, y, k| int2float(floorfi(x)))
            48 exact (|x, y, k| x.mul_add(int2float(k), 1.0))
            49 exact (|x, y, k| x * 0.1 + 2.5)
            // Read at the row's type from its digits: at `f32` one rounding, not two through
            // the nearest `f64` (the middle of two `f32`s, rounded to the even one).
            50 exact (|x, y, k| x * 1.0000001788139343)
            51 exact (|x, y, k| x.recip())
            52 exact (|x, y, k| if x.is_infinite() { 1.0 } else { 0.0 })
            53 exact (|x, y, k| if x.is_sign_negative() { 1.0 } else { 0.0 })
            54 exact (|x, y, k| if x.is_sign_positive() { 1.0 } else { 0.0 })
            55 exact (|x, y, k| if x.is_normal() { 1.0 } else { 0.0 })
            56 exact (|x, y, k| x.copysign(y))
            57 libm (|x, y, k| x.exp_m1())
            58 libm (|x, y, k| x.ln_1p())
            59 libm (|x, y, k| x.log(y))
            60 libm (|x, y, k| x.asinh())
            61 libm (|x, y, k| x.acosh())
            62 libm (|x, y, k| x.atanh())
            63 exact (|x, y, k| x.round_ties_even())
            64 exact (|x, y, k| x % y)
            65 exact (|x, y, k| x.rem_euclid(y))
            66 exact (|x, y, k| x.div_euclid(y))
        ]);
    };
}

/// The float sites of type `$t` in each position (a module of tests), with `$one` the literal 1
/// suffixed, `$id` the `#[pmexpr]` identity and `$rec` the record of that type.
macro_rules! float_sites {
    ($t:ident, $one:tt, $id:ident, $rec:ident, [$($r:literal $tol:ident $f:tt)*]) => {
        pub const ROWS: usize = [$($r),*].len();
        pub const NAMES: [&str; ROWS] = [$(stringify!($f)),*];

        /// Row `r`'s tolerance on the CUDA targets, in units in the last place.
        pub fn device_ulps(r: usize) -> i128 {
            [$(if stringify!($tol) == "libm" { 4 } else { 0 }),*][r]
        }

        /// The operands: every pair of edge values, and an `i32` beside each.
        pub fn inputs() -> (Tensor<$t>, Tensor<$t>, Tensor<i32>, i64) {
            let vals: [$t; 23] = [
                0.0, -0.0, 0.1, 0.5, -0.5, 1.0, -1.0, 1.5, 2.5, -2.75, 3.0, 10.0, 100.5, -1e-3,
                1e30, <$t>::MIN_POSITIVE, <$t>::MAX, <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::NAN,
                -<$t>::NAN, <$t>::MIN_POSITIVE / 4.0, -3.5,
            ];
            let ks = [-3, -1, 0, 1, 2, 3, 7, 31, -31, 100, 0];
            let (a, b) = pairs(&vals);
            let n = a.len();
            let k: Vec<i32> = (0..n).map(|j| ks[j % ks.len()]).collect();
            (
                Tensor::from_vec(a, &[n]),
                Tensor::from_vec(b, &[n]),
                Tensor::from_vec(k, &[n]),
                n as i64,
            )
        }

        /// Plain Rust's rows.
        pub fn want() -> Vec<$t> {
            assert_eq!([$($r),*], std::array::from_fn::<usize, ROWS, _>(|r| r), "rows in order");
            let (a, b, k, _) = inputs();
            let rows: [fn($t, $t, i32) -> $t; ROWS] = [$($f),*];
            let (a, b, k) = (a.to_vec(), b.to_vec(), k.to_vec());
            rows.iter()
                .flat_map(|f| (0..a.len()).map(|j| f(a[j], b[j], k[j])).collect::<Vec<_>>())
                .collect()
        }

        /// The operands of each column, for messages.
        pub fn operands() -> Vec<($t, $t, i32)> {
            let (a, b, k, _) = inputs();
            let (a, b, k) = (a.to_vec(), b.to_vec(), k.to_vec());
            (0..a.len()).map(|j| (a[j], b[j], k[j])).collect()
        }

        fn on_cpu_targets(position: &str, run: impl Fn() -> Vec<$t>) {
            let want = want();
            for t in CPU {
                let got = with_target(t, &run);
                let case = format!("{} in {position} on {t}", stringify!($t));
                check(&case, &got, &want, &NAMES, &operands(), |_| 0);
            }
        }

        #[test]
        fn annotation() {
            on_cpu_targets("a `let` annotation", || {
                let (ta, tb, tk, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let x: $t = tensor_get(ta, [i]);
                    let y: $t = tensor_get(tb, [i]);
                    let k = tensor_get(tk, [i]);
                    $(tensor_set(out, [$r, i], $f(x, y, k));)*
                }));
                out.to_vec()
            });
        }

        #[test]
        fn closure_parameter() {
            on_cpu_targets("a closure's parameter", || {
                let (ta, tb, tk, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let rows = |x: $t, y: $t, k| {
                        $(tensor_set(out, [$r, i], $f(x, y, k));)*
                    };
                    rows(tensor_get(ta, [i]), tensor_get(tb, [i]), tensor_get(tk, [i]))
                }));
                out.to_vec()
            });
        }

        #[test]
        fn literal_suffix() {
            on_cpu_targets("a literal's suffix", || {
                let (ta, tb, tk, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let x = tensor_get(ta, [i]) * $one;
                    let y = tensor_get(tb, [i]) * $one;
                    let k = tensor_get(tk, [i]);
                    $(tensor_set(out, [$r, i], $f(x, y, k));)*
                }));
                out.to_vec()
            });
        }

        #[test]
        fn cast() {
            on_cpu_targets("a cast", || {
                let (ta, tb, tk, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let x = tensor_get(ta, [i]) as $t;
                    let y = tensor_get(tb, [i]) as $t;
                    let k = tensor_get(tk, [i]);
                    $(tensor_set(out, [$r, i], $f(x, y, k));)*
                }));
                out.to_vec()
            });
        }

        #[test]
        fn fn_item_signature() {
            on_cpu_targets("a `fn` item's signature", || {
                let (ta, tb, tk, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    fn rows(x: $t, y: $t, k: i32, i: i64) {
                        $(tensor_set(out, [$r, i], $f(x, y, k));)*
                    }
                    rows(tensor_get(ta, [i]), tensor_get(tb, [i]), tensor_get(tk, [i]), i)
                }));
                out.to_vec()
            });
        }

        #[test]
        fn pmexpr_fn_signature() {
            on_cpu_targets("a `#[pmexpr]` function's signature", || {
                let (ta, tb, tk, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let x = $id(tensor_get(ta, [i]));
                    let y = $id(tensor_get(tb, [i]));
                    let k = tensor_get(tk, [i]);
                    $(tensor_set(out, [$r, i], $f(x, y, k));)*
                }));
                out.to_vec()
            });
        }

        #[test]
        fn record_field() {
            on_cpu_targets("a record's field", || {
                let (ta, tb, tk, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let p = $rec { v: tensor_get(ta, [i]), w: tensor_get(tb, [i]) };
                    let k = tensor_get(tk, [i]);
                    $(tensor_set(out, [$r, i], $f(p.v, p.w, k));)*
                }));
                out.to_vec()
            });
        }
    };
}

mod f32_positions {
    use super::*;
    float_table!(float_sites!(f32, 1f32, np_f32, NpF32,));
}

mod f64_positions {
    use super::*;
    float_table!(float_sites!(f64, 1f64, np_f64, NpF64,));
}

// ----- integers -----

/// The integer rows: `(|x, y, d, s, h| …)` of three integers of one type (`d` never 0, nor -1
/// where `x` is `MIN`), a shift amount `s: u32` below the width and half the width `h`; the
/// operands kept where no row overflows (debug mode fails there, as a debug build panics).
/// `$extra` are the rows of signed or of unsigned integers only, `$cextra` their counts. The
/// counts (`u64` rows) are apart.
macro_rules! int_table {
    ($cb:ident!($($args:tt)*), signed) => {
        int_table!(@rows $cb!($($args)*), [
            37 (|x, y, d, s, h| (x >> 1).abs())
            38 (|x, y, d, s, h| x.signum())
            39 (|x, y, d, s, h| -(x >> 1))
            40 (|x, y, d, s, h| (if x.is_positive() { 1 } else { 0 }) + (if x.is_negative() { 2 } else { 0 }))
            41 (|x, y, d, s, h| x.wrapping_abs())
            42 (|x, y, d, s, h| x.saturating_abs())
            43 (|x, y, d, s, h| x.saturating_neg())
        ] [
            9 (|x, y| x.unsigned_abs() as u64)
        ]);
    };
    ($cb:ident!($($args:tt)*), unsigned) => {
        int_table!(@rows $cb!($($args)*), [
            37 (|x, y, d, s, h| x.div_ceil(d))
            38 (|x, y, d, s, h| if x.is_power_of_two() { 1 } else { 0 })
            39 (|x, y, d, s, h| (x >> 1).next_power_of_two())
        ] []);
    };
    (@rows $cb:ident!($($args:tt)*), [$($extra:tt)*] [$($cextra:tt)*]) => {
        $cb!($($args)* [
            0 (|x, y, d, s, h| x.min(y))
            1 (|x, y, d, s, h| x.max(y))
            2 (|x, y, d, s, h| x.clamp(y.min(d), y.max(d)))
            3 (|x, y, d, s, h| x.reverse_bits())
            4 (|x, y, d, s, h| x.swap_bytes())
            5 (|x, y, d, s, h| x.rotate_left(s))
            6 (|x, y, d, s, h| x.rotate_right(s))
            7 (|x, y, d, s, h| x.wrapping_add(y))
            8 (|x, y, d, s, h| x.wrapping_sub(y))
            9 (|x, y, d, s, h| x.wrapping_mul(y))
            10 (|x, y, d, s, h| x.wrapping_neg())
            11 (|x, y, d, s, h| x.saturating_add(y))
            12 (|x, y, d, s, h| x.saturating_sub(y))
            13 (|x, y, d, s, h| x.saturating_mul(y))
            14 (|x, y, d, s, h| (x >> h).pow(2))
            15 (|x, y, d, s, h| x.max(0).isqrt())
            16 (|x, y, d, s, h| x.rem_euclid(d))
            17 (|x, y, d, s, h| x.div_euclid(d))
            18 (|x, y, d, s, h| (x >> 1) + (y >> 1))
            19 (|x, y, d, s, h| (x >> 1).max(y >> 1) - (x >> 1).min(y >> 1))
            20 (|x, y, d, s, h| (x >> h) * (y >> h))
            21 (|x, y, d, s, h| x / d)
            22 (|x, y, d, s, h| x % d)
            23 (|x, y, d, s, h| x & y)
            24 (|x, y, d, s, h| x | y)
            25 (|x, y, d, s, h| x ^ y)
            26 (|x, y, d, s, h| !x)
            27 (|x, y, d, s, h| x << s)
            28 (|x, y, d, s, h| x >> s)
            29 (|x, y, d, s, h| (if x < y { 1 } else { 0 }) + (if x <= y { 2 } else { 0 }) + (if x == y { 4 } else { 0 }) + (if x != y { 8 } else { 0 }) + (if x > y { 16 } else { 0 }) + (if x >= y { 32 } else { 0 }))
            30 (|x, y, d, s, h| x / 3 + 5)
            31 (|x, y, d, s, h| x.wrapping_shl(s + 64))
            32 (|x, y, d, s, h| x.wrapping_shr(s + 64))
            33 (|x, y, d, s, h| x.wrapping_pow(s))
            34 (|x, y, d, s, h| x.saturating_pow(s))
            35 (|x, y, d, s, h| x.wrapping_div(if y == 0 { 1 } else { y }))
            36 (|x, y, d, s, h| x.wrapping_rem(if y == 0 { 1 } else { y }))
            $($extra)*
        ] [
            0 (|x, y| x.count_ones() as u64)
            1 (|x, y| x.leading_zeros() as u64)
            2 (|x, y| x.trailing_zeros() as u64)
            3 (|x, y| x.abs_diff(y) as u64)
            4 (|x, y| x.count_zeros() as u64)
            5 (|x, y| x.leading_ones() as u64)
            6 (|x, y| x.trailing_ones() as u64)
            7 (|x, y| x.max(1).ilog2() as u64)
            8 (|x, y| x.max(1).ilog10() as u64)
            $($cextra)*
        ]);
    };
}

/// The integer sites of type `$t` in each position (see [`float_sites`]).
macro_rules! int_sites {
    ($t:ident, $one:tt, $id:ident, $rec:ident, [$($r:literal $f:tt)*] [$($c:literal $g:tt)*]) => {
        pub const ROWS: usize = [$($r),*].len();
        pub const NAMES: [&str; ROWS] = [$(stringify!($f)),*];
        pub const COUNTS: usize = [$($c),*].len();
        pub const COUNT_NAMES: [&str; COUNTS] = [$(stringify!($g)),*];

        /// The operands: every pair of edge values of the type; the divisors, the shift amounts
        /// and half the width beside them.
        pub fn inputs() -> (Tensor<$t>, Tensor<$t>, Tensor<$t>, Tensor<u32>, u32, i64) {
            let (min, max) = (<$t>::MIN as i128, <$t>::MAX as i128);
            let vals: Vec<$t> = [
                min, min + 1, min / 2, -100, -65, -7, -2, -1, 0, 1, 2, 3, 7, 64, 100, max / 2,
                max - 1, max,
            ]
            .into_iter()
            .filter_map(|v| <$t>::try_from(v).ok())
            .collect();
            let (a, b) = pairs(&vals);
            let d: Vec<$t> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| if y == 0 || (x as i128 == min && y as i128 == -1) { 1 } else { y })
                .collect();
            let s: Vec<u32> = b.iter().map(|&y| (y as u32) % <$t>::BITS).collect();
            let n = a.len();
            (
                Tensor::from_vec(a, &[n]),
                Tensor::from_vec(b, &[n]),
                Tensor::from_vec(d, &[n]),
                Tensor::from_vec(s, &[n]),
                <$t>::BITS / 2,
                n as i64,
            )
        }

        /// Plain Rust's rows, and its counts.
        pub fn want() -> (Vec<$t>, Vec<u64>) {
            assert_eq!([$($r),*], std::array::from_fn::<usize, ROWS, _>(|r| r), "rows in order");
            assert_eq!([$($c),*], std::array::from_fn::<usize, COUNTS, _>(|r| r), "in order");
            let (a, b, d, s, h, _) = inputs();
            let (a, b, d, s) = (a.to_vec(), b.to_vec(), d.to_vec(), s.to_vec());
            let rows: [fn($t, $t, $t, u32, u32) -> $t; ROWS] = [$($f),*];
            let counts: [fn($t, $t) -> u64; COUNTS] = [$($g),*];
            (
                rows.iter()
                    .flat_map(|f| (0..a.len()).map(|j| f(a[j], b[j], d[j], s[j], h)).collect::<Vec<_>>())
                    .collect(),
                counts.iter()
                    .flat_map(|f| (0..a.len()).map(|j| f(a[j], b[j])).collect::<Vec<_>>())
                    .collect(),
            )
        }

        /// The operands of each column, for messages.
        pub fn operands() -> Vec<($t, $t, $t, u32)> {
            let (a, b, d, s, _, _) = inputs();
            let (a, b, d, s) = (a.to_vec(), b.to_vec(), d.to_vec(), s.to_vec());
            (0..a.len()).map(|j| (a[j], b[j], d[j], s[j])).collect()
        }

        /// Checks the rows and counts of one run.
        pub fn check_run(case: &str, got: &(Vec<$t>, Vec<u64>)) {
            let want = want();
            let ops = operands();
            check(case, &got.0, &want.0, &NAMES, &ops, |_| 0);
            check(case, &got.1, &want.1, &COUNT_NAMES, &ops, |_| 0);
        }

        fn on_cpu_targets(position: &str, run: impl Fn() -> (Vec<$t>, Vec<u64>)) {
            for t in CPU {
                let case = format!("{} in {position} on {t}", stringify!($t));
                check_run(&case, &with_target(t, &run));
            }
        }

        #[test]
        fn annotation() {
            on_cpu_targets("a `let` annotation", || {
                let (ta, tb, td, ts, h, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                let cnt = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let x: $t = tensor_get(ta, [i]);
                    let y: $t = tensor_get(tb, [i]);
                    let d = tensor_get(td, [i]);
                    let s = tensor_get(ts, [i]);
                    $(tensor_set(out, [$r, i], $f(x, y, d, s, h));)*
                    $(tensor_set(cnt, [$c, i], $g(x, y));)*
                }));
                (out.to_vec(), cnt.to_vec())
            });
        }

        #[test]
        fn closure_parameter() {
            on_cpu_targets("a closure's parameter", || {
                let (ta, tb, td, ts, h, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                let cnt = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let rows = |x: $t, y: $t, d, s| {
                        $(tensor_set(out, [$r, i], $f(x, y, d, s, h));)*
                        $(tensor_set(cnt, [$c, i], $g(x, y));)*
                    };
                    rows(tensor_get(ta, [i]), tensor_get(tb, [i]), tensor_get(td, [i]), tensor_get(ts, [i]))
                }));
                (out.to_vec(), cnt.to_vec())
            });
        }

        #[test]
        fn literal_suffix() {
            on_cpu_targets("a literal's suffix", || {
                let (ta, tb, td, ts, h, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                let cnt = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let x = tensor_get(ta, [i]) * $one;
                    let y = tensor_get(tb, [i]) * $one;
                    let d = tensor_get(td, [i]);
                    let s = tensor_get(ts, [i]);
                    $(tensor_set(out, [$r, i], $f(x, y, d, s, h));)*
                    $(tensor_set(cnt, [$c, i], $g(x, y));)*
                }));
                (out.to_vec(), cnt.to_vec())
            });
        }

        #[test]
        fn cast() {
            on_cpu_targets("a cast", || {
                let (ta, tb, td, ts, h, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                let cnt = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let x = tensor_get(ta, [i]) as $t;
                    let y = tensor_get(tb, [i]) as $t;
                    let d = tensor_get(td, [i]);
                    let s = tensor_get(ts, [i]);
                    $(tensor_set(out, [$r, i], $f(x, y, d, s, h));)*
                    $(tensor_set(cnt, [$c, i], $g(x, y));)*
                }));
                (out.to_vec(), cnt.to_vec())
            });
        }

        #[test]
        fn fn_item_signature() {
            on_cpu_targets("a `fn` item's signature", || {
                let (ta, tb, td, ts, h, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                let cnt = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    fn rows(x: $t, y: $t, d: $t, s: u32, i: i64) {
                        $(tensor_set(out, [$r, i], $f(x, y, d, s, h));)*
                        $(tensor_set(cnt, [$c, i], $g(x, y));)*
                    }
                    rows(tensor_get(ta, [i]), tensor_get(tb, [i]), tensor_get(td, [i]), tensor_get(ts, [i]), i)
                }));
                (out.to_vec(), cnt.to_vec())
            });
        }

        #[test]
        fn pmexpr_fn_signature() {
            on_cpu_targets("a `#[pmexpr]` function's signature", || {
                let (ta, tb, td, ts, h, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                let cnt = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let x = $id(tensor_get(ta, [i]));
                    let y = $id(tensor_get(tb, [i]));
                    let d = tensor_get(td, [i]);
                    let s = tensor_get(ts, [i]);
                    $(tensor_set(out, [$r, i], $f(x, y, d, s, h));)*
                    $(tensor_set(cnt, [$c, i], $g(x, y));)*
                }));
                (out.to_vec(), cnt.to_vec())
            });
        }

        #[test]
        fn record_field() {
            on_cpu_targets("a record's field", || {
                let (ta, tb, td, ts, h, n) = inputs();
                let out = Tensor::<$t>::zeros(&[ROWS, n as usize]);
                let cnt = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
                accelerate!(par_loop(n, |i| {
                    let p = $rec { v: tensor_get(ta, [i]), w: tensor_get(tb, [i]) };
                    let d = tensor_get(td, [i]);
                    let s = tensor_get(ts, [i]);
                    $(tensor_set(out, [$r, i], $f(p.v, p.w, d, s, h));)*
                    $(tensor_set(cnt, [$c, i], $g(p.v, p.w));)*
                }));
                (out.to_vec(), cnt.to_vec())
            });
        }
    };
}

mod i8_positions {
    use super::*;
    int_table!(int_sites!(i8, 1i8, np_i8, NpI8,), signed);
}

mod u16_positions {
    use super::*;
    int_table!(int_sites!(u16, 1u16, np_u16, NpU16,), unsigned);
}

mod i32_positions {
    use super::*;
    int_table!(int_sites!(i32, 1i32, np_i32, NpI32,), signed);
}

mod i64_positions {
    use super::*;
    int_table!(int_sites!(i64, 1i64, np_i64, NpI64,), signed);
}

mod u64_positions {
    use super::*;
    int_table!(int_sites!(u64, 1u64, np_u64, NpU64,), unsigned);
}

// ----- the rows on every target, the CUDA ones included -----

/// Whether `t` is one of the CUDA targets.
fn is_cuda(t: Target) -> bool {
    matches!(t, Target::Cuda | Target::CudaEmulator)
}

/// Runs `run` (its results and the kernels it launched) on the CPU targets and the CUDA ones
/// this machine has, each checked by `check` (given whether the target is a CUDA one).
fn on_every_target<R>(run: impl Fn() -> (R, u64), check: impl Fn(&str, bool, &R)) {
    let mut targets = CPU.to_vec();
    targets.extend(common::cuda_targets());
    for t in targets {
        let (got, launches) = with_target(t, &run);
        assert_eq!(launches, u64::from(is_cuda(t)), "kernels launched on {t}");
        check(&format!("on {t}"), is_cuda(t), &got);
    }
}

fn launches() -> u64 {
    pmexpr::cuda::launches_on_this_thread()
}

// The sites below are [`float_table!`]'s and [`int_table!`]'s rows written out (the hook sees
// only those), one site per type with the type written in an annotation; the results are
// checked against the tables' plain Rust, so a row written here otherwise than there fails.
// On the CUDA targets the `libm` rows may differ from Rust's in the last places.

#[test]
fn f32_rows_on_every_target() {
    use f32_positions::*;
    let run = || {
        let (ta, tb, tk, n) = inputs();
        let o = Tensor::<f32>::zeros(&[ROWS, n as usize]);
        let before = launches();
        accelerate!(par_loop(n, |i| {
            let x: f32 = tensor_get(ta, [i]);
            let y: f32 = tensor_get(tb, [i]);
            let k = tensor_get(tk, [i]);
            tensor_set(o, [0, i], x.sqrt());
            tensor_set(o, [1, i], x.exp());
            tensor_set(o, [2, i], x.ln());
            tensor_set(o, [3, i], x.sin());
            tensor_set(o, [4, i], x.cos());
            tensor_set(o, [5, i], x.powf(y));
            tensor_set(o, [6, i], sqrt(x));
            tensor_set(o, [7, i], exp(x));
            tensor_set(o, [8, i], log(x));
            tensor_set(o, [9, i], pow(x, y));
            tensor_set(o, [10, i], sin(x));
            tensor_set(o, [11, i], cos(x));
            tensor_set(o, [12, i], x.floor());
            tensor_set(o, [13, i], x.ceil());
            tensor_set(o, [14, i], x.round());
            tensor_set(o, [15, i], x.trunc());
            tensor_set(o, [16, i], x.fract());
            tensor_set(o, [17, i], x.abs());
            tensor_set(o, [18, i], x.signum());
            tensor_set(o, [19, i], x.cbrt());
            tensor_set(o, [20, i], x.exp2());
            tensor_set(o, [21, i], x.log2());
            tensor_set(o, [22, i], x.log10());
            tensor_set(o, [23, i], x.tan());
            tensor_set(o, [24, i], x.asin());
            tensor_set(o, [25, i], x.acos());
            tensor_set(o, [26, i], x.atan());
            tensor_set(o, [27, i], x.atan2(y));
            tensor_set(o, [28, i], x.sinh());
            tensor_set(o, [29, i], x.cosh());
            tensor_set(o, [30, i], x.tanh());
            tensor_set(o, [31, i], x.hypot(y));
            tensor_set(o, [32, i], if x.is_nan() { 1.0 } else { 0.0 });
            tensor_set(o, [33, i], if x.is_finite() { 1.0 } else { 0.0 });
            tensor_set(o, [34, i], x.to_radians());
            tensor_set(o, [35, i], x.to_degrees());
            tensor_set(o, [36, i], x.mul_add(y, 0.5));
            tensor_set(o, [37, i], x.clamp(-1.5, 2.0));
            tensor_set(o, [38, i], x.powi(k));
            tensor_set(o, [39, i], x.min(y) + 0.0);
            tensor_set(o, [40, i], x.max(y) + 0.0);
            tensor_set(o, [41, i], x + y);
            tensor_set(o, [42, i], x - y);
            tensor_set(o, [43, i], x * y);
            tensor_set(o, [44, i], x / y);
            tensor_set(o, [45, i], -x);
            tensor_set(
                o,
                [46, i],
                (if x < y { 1.0 } else { 0.0 })
                    + (if x <= y { 2.0 } else { 0.0 })
                    + (if x == y { 4.0 } else { 0.0 })
                    + (if x != y { 8.0 } else { 0.0 })
                    + (if x > y { 16.0 } else { 0.0 })
                    + (if x >= y { 32.0 } else { 0.0 }),
            );
            tensor_set(o, [47, i], int2float(floorfi(x)));
            tensor_set(o, [48, i], x.mul_add(int2float(k), 1.0));
            tensor_set(o, [49, i], x * 0.1 + 2.5);
            tensor_set(o, [50, i], x * 1.0000001788139343);
            tensor_set(o, [51, i], x.recip());
            tensor_set(o, [52, i], if x.is_infinite() { 1.0 } else { 0.0 });
            tensor_set(o, [53, i], if x.is_sign_negative() { 1.0 } else { 0.0 });
            tensor_set(o, [54, i], if x.is_sign_positive() { 1.0 } else { 0.0 });
            tensor_set(o, [55, i], if x.is_normal() { 1.0 } else { 0.0 });
            tensor_set(o, [56, i], x.copysign(y));
            tensor_set(o, [57, i], x.exp_m1());
            tensor_set(o, [58, i], x.ln_1p());
            tensor_set(o, [59, i], x.log(y));
            tensor_set(o, [60, i], x.asinh());
            tensor_set(o, [61, i], x.acosh());
            tensor_set(o, [62, i], x.atanh());
            tensor_set(o, [63, i], x.round_ties_even());
            tensor_set(o, [64, i], x % y);
            tensor_set(o, [65, i], x.rem_euclid(y));
            tensor_set(o, [66, i], x.div_euclid(y));
        }));
        (o.to_vec(), launches() - before)
    };
    on_every_target(run, |on, cuda, got| {
        let ulps = |r| if cuda { device_ulps(r) } else { 0 };
        check(
            &format!("f32 rows {on}"),
            got,
            &want(),
            &NAMES,
            &operands(),
            ulps,
        );
    });
}

#[test]
fn f64_rows_on_every_target() {
    use f64_positions::*;
    let run = || {
        let (ta, tb, tk, n) = inputs();
        let o = Tensor::<f64>::zeros(&[ROWS, n as usize]);
        let before = launches();
        accelerate!(par_loop(n, |i| {
            let x: f64 = tensor_get(ta, [i]);
            let y: f64 = tensor_get(tb, [i]);
            let k = tensor_get(tk, [i]);
            tensor_set(o, [0, i], x.sqrt());
            tensor_set(o, [1, i], x.exp());
            tensor_set(o, [2, i], x.ln());
            tensor_set(o, [3, i], x.sin());
            tensor_set(o, [4, i], x.cos());
            tensor_set(o, [5, i], x.powf(y));
            tensor_set(o, [6, i], sqrt(x));
            tensor_set(o, [7, i], exp(x));
            tensor_set(o, [8, i], log(x));
            tensor_set(o, [9, i], pow(x, y));
            tensor_set(o, [10, i], sin(x));
            tensor_set(o, [11, i], cos(x));
            tensor_set(o, [12, i], x.floor());
            tensor_set(o, [13, i], x.ceil());
            tensor_set(o, [14, i], x.round());
            tensor_set(o, [15, i], x.trunc());
            tensor_set(o, [16, i], x.fract());
            tensor_set(o, [17, i], x.abs());
            tensor_set(o, [18, i], x.signum());
            tensor_set(o, [19, i], x.cbrt());
            tensor_set(o, [20, i], x.exp2());
            tensor_set(o, [21, i], x.log2());
            tensor_set(o, [22, i], x.log10());
            tensor_set(o, [23, i], x.tan());
            tensor_set(o, [24, i], x.asin());
            tensor_set(o, [25, i], x.acos());
            tensor_set(o, [26, i], x.atan());
            tensor_set(o, [27, i], x.atan2(y));
            tensor_set(o, [28, i], x.sinh());
            tensor_set(o, [29, i], x.cosh());
            tensor_set(o, [30, i], x.tanh());
            tensor_set(o, [31, i], x.hypot(y));
            tensor_set(o, [32, i], if x.is_nan() { 1.0 } else { 0.0 });
            tensor_set(o, [33, i], if x.is_finite() { 1.0 } else { 0.0 });
            tensor_set(o, [34, i], x.to_radians());
            tensor_set(o, [35, i], x.to_degrees());
            tensor_set(o, [36, i], x.mul_add(y, 0.5));
            tensor_set(o, [37, i], x.clamp(-1.5, 2.0));
            tensor_set(o, [38, i], x.powi(k));
            tensor_set(o, [39, i], x.min(y) + 0.0);
            tensor_set(o, [40, i], x.max(y) + 0.0);
            tensor_set(o, [41, i], x + y);
            tensor_set(o, [42, i], x - y);
            tensor_set(o, [43, i], x * y);
            tensor_set(o, [44, i], x / y);
            tensor_set(o, [45, i], -x);
            tensor_set(
                o,
                [46, i],
                (if x < y { 1.0 } else { 0.0 })
                    + (if x <= y { 2.0 } else { 0.0 })
                    + (if x == y { 4.0 } else { 0.0 })
                    + (if x != y { 8.0 } else { 0.0 })
                    + (if x > y { 16.0 } else { 0.0 })
                    + (if x >= y { 32.0 } else { 0.0 }),
            );
            tensor_set(o, [47, i], int2float(floorfi(x)));
            tensor_set(o, [48, i], x.mul_add(int2float(k), 1.0));
            tensor_set(o, [49, i], x * 0.1 + 2.5);
            tensor_set(o, [50, i], x * 1.0000001788139343);
            tensor_set(o, [51, i], x.recip());
            tensor_set(o, [52, i], if x.is_infinite() { 1.0 } else { 0.0 });
            tensor_set(o, [53, i], if x.is_sign_negative() { 1.0 } else { 0.0 });
            tensor_set(o, [54, i], if x.is_sign_positive() { 1.0 } else { 0.0 });
            tensor_set(o, [55, i], if x.is_normal() { 1.0 } else { 0.0 });
            tensor_set(o, [56, i], x.copysign(y));
            tensor_set(o, [57, i], x.exp_m1());
            tensor_set(o, [58, i], x.ln_1p());
            tensor_set(o, [59, i], x.log(y));
            tensor_set(o, [60, i], x.asinh());
            tensor_set(o, [61, i], x.acosh());
            tensor_set(o, [62, i], x.atanh());
            tensor_set(o, [63, i], x.round_ties_even());
            tensor_set(o, [64, i], x % y);
            tensor_set(o, [65, i], x.rem_euclid(y));
            tensor_set(o, [66, i], x.div_euclid(y));
        }));
        (o.to_vec(), launches() - before)
    };
    on_every_target(run, |on, cuda, got| {
        let ulps = |r| if cuda { device_ulps(r) } else { 0 };
        check(
            &format!("f64 rows {on}"),
            got,
            &want(),
            &NAMES,
            &operands(),
            ulps,
        );
    });
}

#[test]
fn i8_rows_on_every_target() {
    use i8_positions::*;
    let run = || {
        let (ta, tb, td, ts, h, n) = inputs();
        let o = Tensor::<i8>::zeros(&[ROWS, n as usize]);
        let c = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
        let before = launches();
        accelerate!(par_loop(n, |i| {
            let x: i8 = tensor_get(ta, [i]);
            let y: i8 = tensor_get(tb, [i]);
            let d = tensor_get(td, [i]);
            // Written, as the kernels are generated for the mixes of a few open number types.
            let s: u32 = tensor_get(ts, [i]);
            let h: u32 = h;
            tensor_set(o, [0, i], x.min(y));
            tensor_set(o, [1, i], x.max(y));
            tensor_set(o, [2, i], x.clamp(y.min(d), y.max(d)));
            tensor_set(o, [3, i], x.reverse_bits());
            tensor_set(o, [4, i], x.swap_bytes());
            tensor_set(o, [5, i], x.rotate_left(s));
            tensor_set(o, [6, i], x.rotate_right(s));
            tensor_set(o, [7, i], x.wrapping_add(y));
            tensor_set(o, [8, i], x.wrapping_sub(y));
            tensor_set(o, [9, i], x.wrapping_mul(y));
            tensor_set(o, [10, i], x.wrapping_neg());
            tensor_set(o, [11, i], x.saturating_add(y));
            tensor_set(o, [12, i], x.saturating_sub(y));
            tensor_set(o, [13, i], x.saturating_mul(y));
            tensor_set(o, [14, i], (x >> h).pow(2));
            tensor_set(o, [15, i], x.max(0).isqrt());
            tensor_set(o, [16, i], x.rem_euclid(d));
            tensor_set(o, [17, i], x.div_euclid(d));
            tensor_set(o, [18, i], (x >> 1) + (y >> 1));
            tensor_set(o, [19, i], (x >> 1).max(y >> 1) - (x >> 1).min(y >> 1));
            tensor_set(o, [20, i], (x >> h) * (y >> h));
            tensor_set(o, [21, i], x / d);
            tensor_set(o, [22, i], x % d);
            tensor_set(o, [23, i], x & y);
            tensor_set(o, [24, i], x | y);
            tensor_set(o, [25, i], x ^ y);
            tensor_set(o, [26, i], !x);
            tensor_set(o, [27, i], x << s);
            tensor_set(o, [28, i], x >> s);
            tensor_set(
                o,
                [29, i],
                (if x < y { 1 } else { 0 })
                    + (if x <= y { 2 } else { 0 })
                    + (if x == y { 4 } else { 0 })
                    + (if x != y { 8 } else { 0 })
                    + (if x > y { 16 } else { 0 })
                    + (if x >= y { 32 } else { 0 }),
            );
            tensor_set(o, [30, i], x / 3 + 5);
            tensor_set(o, [31, i], x.wrapping_shl(s + 64));
            tensor_set(o, [32, i], x.wrapping_shr(s + 64));
            tensor_set(o, [33, i], x.wrapping_pow(s));
            tensor_set(o, [34, i], x.saturating_pow(s));
            tensor_set(o, [35, i], x.wrapping_div(if y == 0 { 1 } else { y }));
            tensor_set(o, [36, i], x.wrapping_rem(if y == 0 { 1 } else { y }));
            tensor_set(o, [37, i], (x >> 1).abs());
            tensor_set(o, [38, i], x.signum());
            tensor_set(o, [39, i], -(x >> 1));
            tensor_set(
                o,
                [40, i],
                (if x.is_positive() { 1 } else { 0 }) + (if x.is_negative() { 2 } else { 0 }),
            );
            tensor_set(o, [41, i], x.wrapping_abs());
            tensor_set(o, [42, i], x.saturating_abs());
            tensor_set(o, [43, i], x.saturating_neg());
            tensor_set(c, [0, i], x.count_ones() as u64);
            tensor_set(c, [1, i], x.leading_zeros() as u64);
            tensor_set(c, [2, i], x.trailing_zeros() as u64);
            tensor_set(c, [3, i], x.abs_diff(y) as u64);
            tensor_set(c, [4, i], x.count_zeros() as u64);
            tensor_set(c, [5, i], x.leading_ones() as u64);
            tensor_set(c, [6, i], x.trailing_ones() as u64);
            tensor_set(c, [7, i], x.max(1).ilog2() as u64);
            tensor_set(c, [8, i], x.max(1).ilog10() as u64);
            tensor_set(c, [9, i], x.unsigned_abs() as u64);
        }));
        ((o.to_vec(), c.to_vec()), launches() - before)
    };
    on_every_target(run, |on, _, got| check_run(&format!("i8 rows {on}"), got));
}

#[test]
fn u16_rows_on_every_target() {
    use u16_positions::*;
    let run = || {
        let (ta, tb, td, ts, h, n) = inputs();
        let o = Tensor::<u16>::zeros(&[ROWS, n as usize]);
        let c = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
        let before = launches();
        accelerate!(par_loop(n, |i| {
            let x: u16 = tensor_get(ta, [i]);
            let y: u16 = tensor_get(tb, [i]);
            let d = tensor_get(td, [i]);
            // Written, as the kernels are generated for the mixes of a few open number types.
            let s: u32 = tensor_get(ts, [i]);
            let h: u32 = h;
            tensor_set(o, [0, i], x.min(y));
            tensor_set(o, [1, i], x.max(y));
            tensor_set(o, [2, i], x.clamp(y.min(d), y.max(d)));
            tensor_set(o, [3, i], x.reverse_bits());
            tensor_set(o, [4, i], x.swap_bytes());
            tensor_set(o, [5, i], x.rotate_left(s));
            tensor_set(o, [6, i], x.rotate_right(s));
            tensor_set(o, [7, i], x.wrapping_add(y));
            tensor_set(o, [8, i], x.wrapping_sub(y));
            tensor_set(o, [9, i], x.wrapping_mul(y));
            tensor_set(o, [10, i], x.wrapping_neg());
            tensor_set(o, [11, i], x.saturating_add(y));
            tensor_set(o, [12, i], x.saturating_sub(y));
            tensor_set(o, [13, i], x.saturating_mul(y));
            tensor_set(o, [14, i], (x >> h).pow(2));
            tensor_set(o, [15, i], x.max(0).isqrt());
            tensor_set(o, [16, i], x.rem_euclid(d));
            tensor_set(o, [17, i], x.div_euclid(d));
            tensor_set(o, [18, i], (x >> 1) + (y >> 1));
            tensor_set(o, [19, i], (x >> 1).max(y >> 1) - (x >> 1).min(y >> 1));
            tensor_set(o, [20, i], (x >> h) * (y >> h));
            tensor_set(o, [21, i], x / d);
            tensor_set(o, [22, i], x % d);
            tensor_set(o, [23, i], x & y);
            tensor_set(o, [24, i], x | y);
            tensor_set(o, [25, i], x ^ y);
            tensor_set(o, [26, i], !x);
            tensor_set(o, [27, i], x << s);
            tensor_set(o, [28, i], x >> s);
            tensor_set(
                o,
                [29, i],
                (if x < y { 1 } else { 0 })
                    + (if x <= y { 2 } else { 0 })
                    + (if x == y { 4 } else { 0 })
                    + (if x != y { 8 } else { 0 })
                    + (if x > y { 16 } else { 0 })
                    + (if x >= y { 32 } else { 0 }),
            );
            tensor_set(o, [30, i], x / 3 + 5);
            tensor_set(o, [31, i], x.wrapping_shl(s + 64));
            tensor_set(o, [32, i], x.wrapping_shr(s + 64));
            tensor_set(o, [33, i], x.wrapping_pow(s));
            tensor_set(o, [34, i], x.saturating_pow(s));
            tensor_set(o, [35, i], x.wrapping_div(if y == 0 { 1 } else { y }));
            tensor_set(o, [36, i], x.wrapping_rem(if y == 0 { 1 } else { y }));
            tensor_set(o, [37, i], x.div_ceil(d));
            tensor_set(o, [38, i], if x.is_power_of_two() { 1 } else { 0 });
            tensor_set(o, [39, i], (x >> 1).next_power_of_two());
            tensor_set(c, [0, i], x.count_ones() as u64);
            tensor_set(c, [1, i], x.leading_zeros() as u64);
            tensor_set(c, [2, i], x.trailing_zeros() as u64);
            tensor_set(c, [3, i], x.abs_diff(y) as u64);
            tensor_set(c, [4, i], x.count_zeros() as u64);
            tensor_set(c, [5, i], x.leading_ones() as u64);
            tensor_set(c, [6, i], x.trailing_ones() as u64);
            tensor_set(c, [7, i], x.max(1).ilog2() as u64);
            tensor_set(c, [8, i], x.max(1).ilog10() as u64);
        }));
        ((o.to_vec(), c.to_vec()), launches() - before)
    };
    on_every_target(run, |on, _, got| check_run(&format!("u16 rows {on}"), got));
}

#[test]
fn i32_rows_on_every_target() {
    use i32_positions::*;
    let run = || {
        let (ta, tb, td, ts, h, n) = inputs();
        let o = Tensor::<i32>::zeros(&[ROWS, n as usize]);
        let c = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
        let before = launches();
        accelerate!(par_loop(n, |i| {
            let x: i32 = tensor_get(ta, [i]);
            let y: i32 = tensor_get(tb, [i]);
            let d = tensor_get(td, [i]);
            // Written, as the kernels are generated for the mixes of a few open number types.
            let s: u32 = tensor_get(ts, [i]);
            let h: u32 = h;
            tensor_set(o, [0, i], x.min(y));
            tensor_set(o, [1, i], x.max(y));
            tensor_set(o, [2, i], x.clamp(y.min(d), y.max(d)));
            tensor_set(o, [3, i], x.reverse_bits());
            tensor_set(o, [4, i], x.swap_bytes());
            tensor_set(o, [5, i], x.rotate_left(s));
            tensor_set(o, [6, i], x.rotate_right(s));
            tensor_set(o, [7, i], x.wrapping_add(y));
            tensor_set(o, [8, i], x.wrapping_sub(y));
            tensor_set(o, [9, i], x.wrapping_mul(y));
            tensor_set(o, [10, i], x.wrapping_neg());
            tensor_set(o, [11, i], x.saturating_add(y));
            tensor_set(o, [12, i], x.saturating_sub(y));
            tensor_set(o, [13, i], x.saturating_mul(y));
            tensor_set(o, [14, i], (x >> h).pow(2));
            tensor_set(o, [15, i], x.max(0).isqrt());
            tensor_set(o, [16, i], x.rem_euclid(d));
            tensor_set(o, [17, i], x.div_euclid(d));
            tensor_set(o, [18, i], (x >> 1) + (y >> 1));
            tensor_set(o, [19, i], (x >> 1).max(y >> 1) - (x >> 1).min(y >> 1));
            tensor_set(o, [20, i], (x >> h) * (y >> h));
            tensor_set(o, [21, i], x / d);
            tensor_set(o, [22, i], x % d);
            tensor_set(o, [23, i], x & y);
            tensor_set(o, [24, i], x | y);
            tensor_set(o, [25, i], x ^ y);
            tensor_set(o, [26, i], !x);
            tensor_set(o, [27, i], x << s);
            tensor_set(o, [28, i], x >> s);
            tensor_set(
                o,
                [29, i],
                (if x < y { 1 } else { 0 })
                    + (if x <= y { 2 } else { 0 })
                    + (if x == y { 4 } else { 0 })
                    + (if x != y { 8 } else { 0 })
                    + (if x > y { 16 } else { 0 })
                    + (if x >= y { 32 } else { 0 }),
            );
            tensor_set(o, [30, i], x / 3 + 5);
            tensor_set(o, [31, i], x.wrapping_shl(s + 64));
            tensor_set(o, [32, i], x.wrapping_shr(s + 64));
            tensor_set(o, [33, i], x.wrapping_pow(s));
            tensor_set(o, [34, i], x.saturating_pow(s));
            tensor_set(o, [35, i], x.wrapping_div(if y == 0 { 1 } else { y }));
            tensor_set(o, [36, i], x.wrapping_rem(if y == 0 { 1 } else { y }));
            tensor_set(o, [37, i], (x >> 1).abs());
            tensor_set(o, [38, i], x.signum());
            tensor_set(o, [39, i], -(x >> 1));
            tensor_set(
                o,
                [40, i],
                (if x.is_positive() { 1 } else { 0 }) + (if x.is_negative() { 2 } else { 0 }),
            );
            tensor_set(o, [41, i], x.wrapping_abs());
            tensor_set(o, [42, i], x.saturating_abs());
            tensor_set(o, [43, i], x.saturating_neg());
            tensor_set(c, [0, i], x.count_ones() as u64);
            tensor_set(c, [1, i], x.leading_zeros() as u64);
            tensor_set(c, [2, i], x.trailing_zeros() as u64);
            tensor_set(c, [3, i], x.abs_diff(y) as u64);
            tensor_set(c, [4, i], x.count_zeros() as u64);
            tensor_set(c, [5, i], x.leading_ones() as u64);
            tensor_set(c, [6, i], x.trailing_ones() as u64);
            tensor_set(c, [7, i], x.max(1).ilog2() as u64);
            tensor_set(c, [8, i], x.max(1).ilog10() as u64);
            tensor_set(c, [9, i], x.unsigned_abs() as u64);
        }));
        ((o.to_vec(), c.to_vec()), launches() - before)
    };
    on_every_target(run, |on, _, got| check_run(&format!("i32 rows {on}"), got));
}

#[test]
fn i64_rows_on_every_target() {
    use i64_positions::*;
    let run = || {
        let (ta, tb, td, ts, h, n) = inputs();
        let o = Tensor::<i64>::zeros(&[ROWS, n as usize]);
        let c = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
        let before = launches();
        accelerate!(par_loop(n, |i| {
            let x: i64 = tensor_get(ta, [i]);
            let y: i64 = tensor_get(tb, [i]);
            let d = tensor_get(td, [i]);
            // Written, as the kernels are generated for the mixes of a few open number types.
            let s: u32 = tensor_get(ts, [i]);
            let h: u32 = h;
            tensor_set(o, [0, i], x.min(y));
            tensor_set(o, [1, i], x.max(y));
            tensor_set(o, [2, i], x.clamp(y.min(d), y.max(d)));
            tensor_set(o, [3, i], x.reverse_bits());
            tensor_set(o, [4, i], x.swap_bytes());
            tensor_set(o, [5, i], x.rotate_left(s));
            tensor_set(o, [6, i], x.rotate_right(s));
            tensor_set(o, [7, i], x.wrapping_add(y));
            tensor_set(o, [8, i], x.wrapping_sub(y));
            tensor_set(o, [9, i], x.wrapping_mul(y));
            tensor_set(o, [10, i], x.wrapping_neg());
            tensor_set(o, [11, i], x.saturating_add(y));
            tensor_set(o, [12, i], x.saturating_sub(y));
            tensor_set(o, [13, i], x.saturating_mul(y));
            tensor_set(o, [14, i], (x >> h).pow(2));
            tensor_set(o, [15, i], x.max(0).isqrt());
            tensor_set(o, [16, i], x.rem_euclid(d));
            tensor_set(o, [17, i], x.div_euclid(d));
            tensor_set(o, [18, i], (x >> 1) + (y >> 1));
            tensor_set(o, [19, i], (x >> 1).max(y >> 1) - (x >> 1).min(y >> 1));
            tensor_set(o, [20, i], (x >> h) * (y >> h));
            tensor_set(o, [21, i], x / d);
            tensor_set(o, [22, i], x % d);
            tensor_set(o, [23, i], x & y);
            tensor_set(o, [24, i], x | y);
            tensor_set(o, [25, i], x ^ y);
            tensor_set(o, [26, i], !x);
            tensor_set(o, [27, i], x << s);
            tensor_set(o, [28, i], x >> s);
            tensor_set(
                o,
                [29, i],
                (if x < y { 1 } else { 0 })
                    + (if x <= y { 2 } else { 0 })
                    + (if x == y { 4 } else { 0 })
                    + (if x != y { 8 } else { 0 })
                    + (if x > y { 16 } else { 0 })
                    + (if x >= y { 32 } else { 0 }),
            );
            tensor_set(o, [30, i], x / 3 + 5);
            tensor_set(o, [31, i], x.wrapping_shl(s + 64));
            tensor_set(o, [32, i], x.wrapping_shr(s + 64));
            tensor_set(o, [33, i], x.wrapping_pow(s));
            tensor_set(o, [34, i], x.saturating_pow(s));
            tensor_set(o, [35, i], x.wrapping_div(if y == 0 { 1 } else { y }));
            tensor_set(o, [36, i], x.wrapping_rem(if y == 0 { 1 } else { y }));
            tensor_set(o, [37, i], (x >> 1).abs());
            tensor_set(o, [38, i], x.signum());
            tensor_set(o, [39, i], -(x >> 1));
            tensor_set(
                o,
                [40, i],
                (if x.is_positive() { 1 } else { 0 }) + (if x.is_negative() { 2 } else { 0 }),
            );
            tensor_set(o, [41, i], x.wrapping_abs());
            tensor_set(o, [42, i], x.saturating_abs());
            tensor_set(o, [43, i], x.saturating_neg());
            tensor_set(c, [0, i], x.count_ones() as u64);
            tensor_set(c, [1, i], x.leading_zeros() as u64);
            tensor_set(c, [2, i], x.trailing_zeros() as u64);
            tensor_set(c, [3, i], x.abs_diff(y) as u64);
            tensor_set(c, [4, i], x.count_zeros() as u64);
            tensor_set(c, [5, i], x.leading_ones() as u64);
            tensor_set(c, [6, i], x.trailing_ones() as u64);
            tensor_set(c, [7, i], x.max(1).ilog2() as u64);
            tensor_set(c, [8, i], x.max(1).ilog10() as u64);
            tensor_set(c, [9, i], x.unsigned_abs() as u64);
        }));
        ((o.to_vec(), c.to_vec()), launches() - before)
    };
    on_every_target(run, |on, _, got| check_run(&format!("i64 rows {on}"), got));
}

#[test]
fn u64_rows_on_every_target() {
    use u64_positions::*;
    let run = || {
        let (ta, tb, td, ts, h, n) = inputs();
        let o = Tensor::<u64>::zeros(&[ROWS, n as usize]);
        let c = Tensor::<u64>::zeros(&[COUNTS, n as usize]);
        let before = launches();
        accelerate!(par_loop(n, |i| {
            let x: u64 = tensor_get(ta, [i]);
            let y: u64 = tensor_get(tb, [i]);
            let d = tensor_get(td, [i]);
            // Written, as the kernels are generated for the mixes of a few open number types.
            let s: u32 = tensor_get(ts, [i]);
            let h: u32 = h;
            tensor_set(o, [0, i], x.min(y));
            tensor_set(o, [1, i], x.max(y));
            tensor_set(o, [2, i], x.clamp(y.min(d), y.max(d)));
            tensor_set(o, [3, i], x.reverse_bits());
            tensor_set(o, [4, i], x.swap_bytes());
            tensor_set(o, [5, i], x.rotate_left(s));
            tensor_set(o, [6, i], x.rotate_right(s));
            tensor_set(o, [7, i], x.wrapping_add(y));
            tensor_set(o, [8, i], x.wrapping_sub(y));
            tensor_set(o, [9, i], x.wrapping_mul(y));
            tensor_set(o, [10, i], x.wrapping_neg());
            tensor_set(o, [11, i], x.saturating_add(y));
            tensor_set(o, [12, i], x.saturating_sub(y));
            tensor_set(o, [13, i], x.saturating_mul(y));
            tensor_set(o, [14, i], (x >> h).pow(2));
            tensor_set(o, [15, i], x.max(0).isqrt());
            tensor_set(o, [16, i], x.rem_euclid(d));
            tensor_set(o, [17, i], x.div_euclid(d));
            tensor_set(o, [18, i], (x >> 1) + (y >> 1));
            tensor_set(o, [19, i], (x >> 1).max(y >> 1) - (x >> 1).min(y >> 1));
            tensor_set(o, [20, i], (x >> h) * (y >> h));
            tensor_set(o, [21, i], x / d);
            tensor_set(o, [22, i], x % d);
            tensor_set(o, [23, i], x & y);
            tensor_set(o, [24, i], x | y);
            tensor_set(o, [25, i], x ^ y);
            tensor_set(o, [26, i], !x);
            tensor_set(o, [27, i], x << s);
            tensor_set(o, [28, i], x >> s);
            tensor_set(
                o,
                [29, i],
                (if x < y { 1 } else { 0 })
                    + (if x <= y { 2 } else { 0 })
                    + (if x == y { 4 } else { 0 })
                    + (if x != y { 8 } else { 0 })
                    + (if x > y { 16 } else { 0 })
                    + (if x >= y { 32 } else { 0 }),
            );
            tensor_set(o, [30, i], x / 3 + 5);
            tensor_set(o, [31, i], x.wrapping_shl(s + 64));
            tensor_set(o, [32, i], x.wrapping_shr(s + 64));
            tensor_set(o, [33, i], x.wrapping_pow(s));
            tensor_set(o, [34, i], x.saturating_pow(s));
            tensor_set(o, [35, i], x.wrapping_div(if y == 0 { 1 } else { y }));
            tensor_set(o, [36, i], x.wrapping_rem(if y == 0 { 1 } else { y }));
            tensor_set(o, [37, i], x.div_ceil(d));
            tensor_set(o, [38, i], if x.is_power_of_two() { 1 } else { 0 });
            tensor_set(o, [39, i], (x >> 1).next_power_of_two());
            tensor_set(c, [0, i], x.count_ones() as u64);
            tensor_set(c, [1, i], x.leading_zeros() as u64);
            tensor_set(c, [2, i], x.trailing_zeros() as u64);
            tensor_set(c, [3, i], x.abs_diff(y) as u64);
            tensor_set(c, [4, i], x.count_zeros() as u64);
            tensor_set(c, [5, i], x.leading_ones() as u64);
            tensor_set(c, [6, i], x.trailing_ones() as u64);
            tensor_set(c, [7, i], x.max(1).ilog2() as u64);
            tensor_set(c, [8, i], x.max(1).ilog10() as u64);
        }));
        ((o.to_vec(), c.to_vec()), launches() - before)
    };
    on_every_target(run, |on, _, got| check_run(&format!("u64 rows {on}"), got));
}

/// The shapes first reported: `f32` through float methods with the type written in the
/// closure's annotation or a literal's suffix, and a captured `f32`; Rust's `f32` results, bit
/// for bit.
#[test]
fn f32_through_methods_as_first_reported() {
    let v: Vec<f32> = vec![1.0, 4.0, 9.0, 2.0, 0.1];
    let x: f32 = 2.0;
    for t in CPU {
        let r: Vec<f32> = with_target(t, || accelerate!(map(|x: f32| x.sqrt(), v)));
        assert_eq!(r, v.iter().map(|x| x.sqrt()).collect::<Vec<_>>(), "on {t}");
        let s: f32 = with_target(t, || accelerate!(backend = cpu, (3.0f32).sqrt()));
        assert_eq!(s.to_bits(), 3.0f32.sqrt().to_bits(), "on {t}");
        let (a, b, c): (f32, f32, f32) = with_target(t, || {
            accelerate!(
                backend = cpu,
                (1.0f32 + x.sin(), x.powf(2.0f32), pow(x, 2.0f32))
            )
        });
        assert_eq!(a.to_bits(), (1.0f32 + x.sin()).to_bits(), "on {t}");
        assert_eq!(b.to_bits(), x.powf(2.0).to_bits(), "on {t}");
        assert_eq!(c.to_bits(), x.powf(2.0).to_bits(), "on {t}");
    }
}

/// Float methods in the body of a `#[pmexpr]` function, on its parameters' written types, from a
/// kernel: the function called from Rust is the reference (within a relative 1e-5 for `f32`,
/// 1e-12 for `f64` on the CUDA targets, whose `hypot`, `cbrt` and `pow` are C's).
#[test]
fn pmexpr_fn_bodies_compute_in_their_signature_s_type() {
    let vals = [0.5, 1.0, 2.0, 3.25, 7.5, 10.0];
    let (a, b) = pairs(&vals);
    let n = a.len();
    let run = || {
        let (ta, tb) = (
            Tensor::<f32>::from_vec(a.iter().map(|&v| v as f32).collect(), &[n]),
            Tensor::<f32>::from_vec(b.iter().map(|&v| v as f32).collect(), &[n]),
        );
        let (ua, ub) = (
            Tensor::<f64>::from_vec(a.clone(), &[n]),
            Tensor::<f64>::from_vec(b.clone(), &[n]),
        );
        let before = launches();
        accelerate!(par_loop(n, |i| {
            tensor_set(
                ta,
                [i],
                np_f32_body(tensor_get(ta, [i]), tensor_get(tb, [i])),
            );
            tensor_set(
                ua,
                [i],
                np_f64_body(tensor_get(ua, [i]), tensor_get(ub, [i])),
            )
        }));
        ((ta.to_vec(), ua.to_vec()), launches() - before)
    };
    let want32: Vec<f32> = (0..n)
        .map(|j| np_f32_body(a[j] as f32, b[j] as f32))
        .collect();
    let want64: Vec<f64> = (0..n).map(|j| np_f64_body(a[j], b[j])).collect();
    on_every_target(run, |on, cuda, (g32, g64)| {
        for j in 0..n {
            let (g, w) = (g32[j], want32[j]);
            let ok = if cuda {
                (g - w).abs() <= 1e-5 * w.abs().max(1.0)
            } else {
                g.to_bits() == w.to_bits()
            };
            assert!(
                ok,
                "f32 {on} of {} {}: got {g:?}, Rust gives {w:?}",
                a[j], b[j]
            );
            let (g, w) = (g64[j], want64[j]);
            let ok = if cuda {
                (g - w).abs() <= 1e-12 * w.abs().max(1.0)
            } else {
                g.to_bits() == w.to_bits()
            };
            assert!(
                ok,
                "f64 {on} of {} {}: got {g:?}, Rust gives {w:?}",
                a[j], b[j]
            );
        }
    });
}
