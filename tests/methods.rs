//! The numeric methods added after `tests/bits.rs`'s: `pow isqrt abs_diff div_ceil
//! rem_euclid div_euclid is_power_of_two next_power_of_two` on integers, `powi` and `abs` on
//! floats, `clamp` on both, against Rust outside `accelerate!` on edge values (MIN, MAX, 0, ±1;
//! NaN, ±0, ±inf) on every target: the sites are `par_loop`s, so the CUDA targets run them as
//! kernels (the emulator where there is no GPU). And the failures where Rust panics — `isqrt`
//! of a negative number, division by zero, `clamp` with `min > max` — at the site, with Rust's
//! words, on every target.

mod common;

use common::{failure, on_every_target, same_failure, wraps_on_every_target};
use pmexpr::{Target, Tensor, accelerate, with_target};

const I64S: [i64; 14] = [
    i64::MIN,
    i64::MIN + 1,
    -65,
    -7,
    -2,
    -1,
    0,
    1,
    2,
    3,
    7,
    64,
    (1 << 62) + 1,
    i64::MAX,
];
const I32S: [i32; 13] = [
    i32::MIN,
    i32::MIN + 1,
    -33,
    -7,
    -1,
    0,
    1,
    2,
    3,
    7,
    32,
    (1 << 30) + 1,
    i32::MAX,
];

/// Every pair of `vals`.
fn pairs<T: Copy>(vals: &[T]) -> (Vec<T>, Vec<T>) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in vals {
        for &y in vals {
            a.push(x);
            b.push(y);
        }
    }
    (a, b)
}

/// `x` as a divisor: 0 replaced by 1 (division by zero is tested apart).
/// `y` as the divisor of `x`: 1 where it is 0 or where `x / y` overflows (`MIN / -1`, tested
/// apart: both fail at the site, as Rust panics).
fn divisors<T: Copy + PartialEq + From<bool> + std::ops::Neg<Output = T>>(
    a: &[T],
    b: &[T],
    min: T,
) -> Vec<T> {
    let one = T::from(true);
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            if y == T::from(false) || (x == min && y == -one) {
                one
            } else {
                y
            }
        })
        .collect()
}

fn nonzero<T: Copy + PartialEq + From<bool>>(v: &[T]) -> Vec<T> {
    v.iter()
        .map(|&y| {
            if y == T::from(false) {
                T::from(true)
            } else {
                y
            }
        })
        .collect()
}

/// The rows of [`i64_methods`], with `x`, `y`, `d` (`y`, never 0) and `k` (`y as i32`).
const I64_ROWS: usize = 10;

fn i64_methods(a: &[i64], b: &[i64]) -> Vec<i64> {
    let n = a.len();
    let ta = Tensor::<i64>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<i64>::from_vec(b.to_vec(), &[n]);
    let td = Tensor::<i64>::from_vec(divisors(a, b, i64::MIN), &[n]);
    let tk = Tensor::<i32>::from_vec(b.iter().map(|&y| y as i32).collect(), &[n]);
    let out = Tensor::<i64>::zeros(&[I64_ROWS, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        let d = tensor_get(td, [i]);
        let k = tensor_get(tk, [i]);
        tensor_set(out, [0, i], x.pow(y));
        tensor_set(out, [1, i], x.pow(k));
        tensor_set(out, [2, i], (if x < 0 { !x } else { x }).isqrt());
        tensor_set(out, [3, i], x.abs_diff(y) as i64);
        tensor_set(out, [4, i], x.div_ceil(d));
        tensor_set(out, [5, i], x.rem_euclid(d));
        tensor_set(out, [6, i], x.div_euclid(d));
        tensor_set(out, [7, i], if x.is_power_of_two() { 1 } else { 0 });
        tensor_set(out, [8, i], x.next_power_of_two());
        tensor_set(out, [9, i], x.wrapping_mul(3).clamp(x.min(y), x.max(y)))
    }));
    out.to_vec()
}

/// `a.div_ceil(b)` by another route than the runtime's: `-floor(-a / b)` in `i128`, wrapped to
/// `i64` (`MIN / -1`).
fn ceil_div(a: i64, b: i64) -> i64 {
    let (a, b) = (a as i128, b as i128);
    let floor = |n: i128, d: i128| {
        if d > 0 {
            n.div_euclid(d)
        } else {
            (-n).div_euclid(-d)
        }
    };
    (-floor(-a, b)) as i64
}

fn i64_want(a: &[i64], b: &[i64]) -> Vec<i64> {
    let ops: [fn(i64, i64) -> i64; I64_ROWS] = [
        |x, y| x.wrapping_pow(y as u32),
        |x, y| x.wrapping_pow(y as i32 as u32),
        |x, _| (if x < 0 { !x } else { x }).isqrt(),
        |x, y| x.abs_diff(y) as i64,
        |x, y| {
            ceil_div(
                x,
                if y == 0 || (x == i64::MIN && y == -1) {
                    1
                } else {
                    y
                },
            )
        },
        |x, y| {
            x.wrapping_rem_euclid(if y == 0 || (x == i64::MIN && y == -1) {
                1
            } else {
                y
            })
        },
        |x, y| {
            x.wrapping_div_euclid(if y == 0 || (x == i64::MIN && y == -1) {
                1
            } else {
                y
            })
        },
        |x, _| (x > 0 && (x as u64).is_power_of_two()) as i64,
        // The smallest power of two at least `x` where it is an `i64`, else 0 (release
        // overflow).
        |x, _| match (x.max(1) as u64).checked_next_power_of_two() {
            Some(p) if p <= i64::MAX as u64 => p as i64,
            _ => 0,
        },
        |x, y| x.wrapping_mul(3).clamp(x.min(y), x.max(y)),
    ];
    ops.iter()
        .flat_map(|f| a.iter().zip(b).map(move |(&x, &y)| f(x, y)))
        .collect()
}

#[test]
fn i64_methods_are_rust_s() {
    let (a, b) = pairs(&I64S);
    let got = wraps_on_every_target(|| i64_methods(&a, &b));
    let want = i64_want(&a, &b);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let (row, e) = (k / a.len(), k % a.len());
        assert_eq!(g, w, "row {row}: x = {}, y = {}", a[e], b[e]);
    }
}

const I32_ROWS: usize = 9;

fn i32_methods(a: &[i32], b: &[i32]) -> Vec<i32> {
    let n = a.len();
    let ta = Tensor::<i32>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<i32>::from_vec(b.to_vec(), &[n]);
    let td = Tensor::<i32>::from_vec(divisors(a, b, i32::MIN), &[n]);
    let out = Tensor::<i32>::zeros(&[I32_ROWS, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        let d = tensor_get(td, [i]);
        tensor_set(out, [0, i], x.pow(y));
        tensor_set(out, [1, i], (if x < 0 { !x } else { x }).isqrt());
        tensor_set(out, [2, i], x.abs_diff(y) as i32);
        tensor_set(out, [3, i], x.div_ceil(d));
        tensor_set(out, [4, i], x.rem_euclid(d));
        tensor_set(out, [5, i], x.div_euclid(d));
        tensor_set(out, [6, i], if x.is_power_of_two() { 1 } else { 0 });
        tensor_set(out, [7, i], x.next_power_of_two());
        tensor_set(out, [8, i], x.wrapping_mul(3).clamp(x.min(y), x.max(y)))
    }));
    out.to_vec()
}

fn i32_want(a: &[i32], b: &[i32]) -> Vec<i32> {
    let ops: [fn(i32, i32) -> i32; I32_ROWS] = [
        |x, y| x.wrapping_pow(y as u32),
        |x, _| (if x < 0 { !x } else { x }).isqrt(),
        |x, y| x.abs_diff(y) as i32,
        |x, y| {
            ceil_div(
                x.into(),
                if y == 0 || (x == i32::MIN && y == -1) {
                    1
                } else {
                    y.into()
                },
            ) as i32
        },
        |x, y| {
            x.wrapping_rem_euclid(if y == 0 || (x == i32::MIN && y == -1) {
                1
            } else {
                y
            })
        },
        |x, y| {
            x.wrapping_div_euclid(if y == 0 || (x == i32::MIN && y == -1) {
                1
            } else {
                y
            })
        },
        |x, _| (x > 0 && (x as u32).is_power_of_two()) as i32,
        |x, _| match (x.max(1) as u32).checked_next_power_of_two() {
            Some(p) if p <= i32::MAX as u32 => p as i32,
            _ => 0,
        },
        |x, y| x.wrapping_mul(3).clamp(x.min(y), x.max(y)),
    ];
    ops.iter()
        .flat_map(|f| a.iter().zip(b).map(move |(&x, &y)| f(x, y)))
        .collect()
}

#[test]
fn i32_methods_are_rust_s() {
    let (a, b) = pairs(&I32S);
    let got = wraps_on_every_target(|| i32_methods(&a, &b));
    let want = i32_want(&a, &b);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let (row, e) = (k / a.len(), k % a.len());
        assert_eq!(g, w, "row {row}: x = {}, y = {}", a[e], b[e]);
    }
}

const F64S: [f64; 13] = [
    f64::NAN,
    f64::NEG_INFINITY,
    -1e300,
    -2.5,
    -1.0,
    -0.5,
    -0.0,
    0.0,
    1e-300,
    0.7,
    1.5,
    3.0,
    f64::INFINITY,
];

/// Exponents for `powi`: small ones both ways, and `i32`'s limits (an `i64` exponent is taken
/// `as i32`, so `2^32 + 3` is 3).
const EXPONENTS: [i64; 12] = [
    0,
    1,
    2,
    3,
    -1,
    -2,
    7,
    -7,
    31,
    i32::MIN as i64,
    i32::MAX as i64,
    (1 << 32) + 3,
];

/// Valid `clamp` bounds (`min <= max`; `0.0 <= -0.0` holds).
const BOUNDS: [(f64, f64); 6] = [
    (f64::NEG_INFINITY, f64::INFINITY),
    (-0.0, 0.0),
    (0.0, -0.0),
    (-1.5, 2.5),
    (1.0, 1.0),
    (f64::NEG_INFINITY, f64::NEG_INFINITY),
];

fn f64_methods(xs: &[f64], ks: &[i64], bounds: &[(f64, f64)]) -> Vec<f64> {
    let n = xs.len();
    let tx = Tensor::<f64>::from_vec(xs.to_vec(), &[n]);
    let tk = Tensor::<i64>::from_vec(ks.to_vec(), &[n]);
    let tk32 = Tensor::<i32>::from_vec(ks.iter().map(|&k| k as i32).collect(), &[n]);
    let tlo = Tensor::<f64>::from_vec(bounds.iter().map(|b| b.0).collect(), &[n]);
    let thi = Tensor::<f64>::from_vec(bounds.iter().map(|b| b.1).collect(), &[n]);
    let out = Tensor::<f64>::zeros(&[4, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(tx, [i]);
        tensor_set(out, [0, i], x.powi(tensor_get(tk, [i])));
        tensor_set(out, [1, i], x.powi(tensor_get(tk32, [i])));
        tensor_set(
            out,
            [2, i],
            x.clamp(tensor_get(tlo, [i]), tensor_get(thi, [i])),
        );
        tensor_set(out, [3, i], x.abs())
    }));
    out.to_vec()
}

/// Bits, with every NaN the same (a NaN's payload is not part of Rust's promise).
fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter()
        .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
        .collect()
}

/// Every value with every exponent and every pair of bounds: `powi` computed as Rust computes
/// it (square and multiply, then the reciprocal), so exactly equal, as `clamp` and `abs` are.
#[test]
fn f64_methods_are_rust_s_bit_for_bit() {
    let mut xs = Vec::new();
    let mut ks = Vec::new();
    let mut bs = Vec::new();
    for &x in &F64S {
        for (j, &k) in EXPONENTS.iter().enumerate() {
            xs.push(x);
            ks.push(k);
            bs.push(BOUNDS[j % BOUNDS.len()]);
        }
    }
    let n = xs.len();
    let got = on_every_target(|| bits64(&f64_methods(&xs, &ks, &bs)));
    let mut want: Vec<f64> = xs
        .iter()
        .zip(&ks)
        .map(|(&x, &k)| x.powi(k as i32))
        .collect();
    want.extend(xs.iter().zip(&ks).map(|(&x, &k)| x.powi(k as i32)));
    want.extend(xs.iter().zip(&bs).map(|(&x, &(lo, hi))| x.clamp(lo, hi)));
    want.extend(xs.iter().map(|x| x.abs()));
    for (k, (g, w)) in got.iter().zip(bits64(&want)).enumerate() {
        let e = k % n;
        assert_eq!(
            *g,
            w,
            "row {}: x = {}, k = {}, bounds {:?}: {} vs {}",
            k / n,
            xs[e],
            ks[e],
            bs[e],
            f64::from_bits(*g),
            f64::from_bits(w)
        );
    }
}

fn f32_methods(xs: &[f32], ks: &[i32], lo: f32, hi: f32) -> Vec<f32> {
    let n = xs.len();
    let tx = Tensor::<f32>::from_vec(xs.to_vec(), &[n]);
    let tk = Tensor::<i32>::from_vec(ks.to_vec(), &[n]);
    let out = Tensor::<f32>::zeros(&[3, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(tx, [i]);
        tensor_set(out, [0, i], x.powi(tensor_get(tk, [i])));
        tensor_set(out, [1, i], x.clamp(lo, hi));
        tensor_set(out, [2, i], x.abs())
    }));
    out.to_vec()
}

#[test]
fn f32_methods_are_rust_s_bit_for_bit() {
    let mut xs = Vec::new();
    let mut ks = Vec::new();
    for &x in F64S.iter().chain(&[0.1, 1.1, 1e-30]) {
        for &k in &EXPONENTS {
            xs.push(x as f32);
            ks.push(k as i32);
        }
    }
    let got = on_every_target(|| {
        f32_methods(&xs, &ks, -0.25, 0.75)
            .iter()
            .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
            .collect::<Vec<u32>>()
    });
    let mut want: Vec<f32> = xs.iter().zip(&ks).map(|(&x, &k)| x.powi(k)).collect();
    want.extend(xs.iter().map(|&x| x.clamp(-0.25, 0.75)));
    want.extend(xs.iter().map(|x| x.abs()));
    let want: Vec<u32> = want
        .iter()
        .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
        .collect();
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let e = k % xs.len();
        assert_eq!(g, w, "row {}: x = {}, k = {}", k / xs.len(), xs[e], ks[e]);
    }
}

/// What Rust panics on fails at the site on the CPU targets (the same message on each), and
/// on the CUDA targets (a kernel's failed check, reported at the site in the same words).
fn fails_everywhere(what: &str, run: impl Fn()) {
    same_failure("tests/methods.rs", what, &run);
    for t in common::accelerated_targets() {
        let m = failure(t, &run);
        assert!(
            m.starts_with("pmexpr: accelerate! at tests/methods.rs:"),
            "on {t}: {m}"
        );
        if t != Target::Futhark {
            // Futhark's own words: "division by zero", its assertion's.
            assert!(m.contains(what), "on {t}: {m}");
        }
    }
}

/// Each failing method in a kernel over one element.
fn isqrt_of(x: i64) -> i64 {
    let out = Tensor::<i64>::zeros(&[1]);
    accelerate!(par_loop(1, |i| tensor_set(out, [i], x.isqrt())));
    out.to_vec()[0]
}

fn euclid(x: i32, y: i32) -> Vec<i32> {
    let out = Tensor::<i32>::zeros(&[3]);
    let t = Tensor::<i32>::from_vec(vec![x, y], &[2]);
    accelerate!(par_loop(1, |i| {
        let (a, b) = (tensor_get(t, [0]), tensor_get(t, [1]));
        tensor_set(out, [0], a.rem_euclid(b));
        tensor_set(out, [1], a.div_euclid(b));
        tensor_set(out, [2 + i], a.div_ceil(b))
    }));
    out.to_vec()
}

fn clamp_i64(x: i64, lo: i64, hi: i64) -> i64 {
    let out = Tensor::<i64>::zeros(&[1]);
    accelerate!(par_loop(1, |i| tensor_set(out, [i], x.clamp(lo, hi))));
    out.to_vec()[0]
}

fn clamp_f64(x: f64, lo: f64, hi: f64) -> f64 {
    let out = Tensor::<f64>::zeros(&[1]);
    accelerate!(par_loop(1, |i| tensor_set(out, [i], x.clamp(lo, hi))));
    out.to_vec()[0]
}

fn clamp_f32(x: f32, lo: f32, hi: f32) -> f32 {
    let out = Tensor::<f32>::zeros(&[1]);
    accelerate!(par_loop(1, |i| tensor_set(out, [i], x.clamp(lo, hi))));
    out.to_vec()[0]
}

#[test]
fn isqrt_of_a_negative_number_fails_at_the_site() {
    assert_eq!(on_every_target(|| isqrt_of(i64::MAX)), i64::MAX.isqrt());
    assert_eq!(on_every_target(|| isqrt_of(0)), 0);
    for x in [-1, i64::MIN] {
        fails_everywhere("argument of integer square root cannot be negative", || {
            isqrt_of(x);
        });
    }
}

#[test]
fn euclid_and_ceiling_division_by_zero_fail_at_the_site() {
    assert_eq!(
        on_every_target(|| euclid(-7, 2)),
        [(-7_i32).rem_euclid(2), (-7_i32).div_euclid(2), -3]
    );
    assert_eq!(
        on_every_target(|| euclid(i32::MIN + 1, -1)),
        [0, i32::MAX, i32::MAX]
    );
    fails_everywhere("Division by zero", || {
        euclid(5, 0);
    });
}

/// `MIN / -1` and `MIN % -1` (and the Euclidean ones): Rust panics on them in every build, and
/// they fail at the site on the CPU and CUDA targets in Rust's words (Futhark's wrap).
fn overflows(what: &str, run: impl Fn()) {
    same_failure("tests/methods.rs", what, &run);
    for t in common::cuda_targets() {
        let m = failure(t, &run);
        assert!(
            m.starts_with("pmexpr: accelerate! at tests/methods.rs:") && m.contains(what),
            "on {t}: {m}"
        );
    }
}

fn quotient_i64(x: i64, y: i64) -> Vec<i64> {
    let out = Tensor::<i64>::zeros(&[2]);
    let t = Tensor::<i64>::from_vec(vec![x, y], &[2]);
    accelerate!(par_loop(1, |i| {
        let (a, b) = (tensor_get(t, [0]), tensor_get(t, [1]));
        tensor_set(out, [i], a / b);
        tensor_set(out, [1], a % b)
    }));
    out.to_vec()
}

fn quotient_i8(x: i8, y: i8) -> Vec<i8> {
    let out = Tensor::<i8>::zeros(&[2]);
    let t = Tensor::<i8>::from_vec(vec![x, y], &[2]);
    accelerate!(par_loop(1, |i| {
        let (a, b) = (tensor_get(t, [0]), tensor_get(t, [1]));
        tensor_set(out, [i], a / b);
        tensor_set(out, [1], a % b)
    }));
    out.to_vec()
}

fn quotient_i32(x: i32, y: i32) -> Vec<i32> {
    let out = Tensor::<i32>::zeros(&[2]);
    let t = Tensor::<i32>::from_vec(vec![x, y], &[2]);
    accelerate!(par_loop(1, |i| {
        let (a, b) = (tensor_get(t, [0]), tensor_get(t, [1]));
        tensor_set(out, [i], a / b);
        tensor_set(out, [1], a % b)
    }));
    out.to_vec()
}

fn quotient_u64(x: u64, y: u64) -> Vec<u64> {
    let out = Tensor::<u64>::zeros(&[2]);
    let t = Tensor::<u64>::from_vec(vec![x, y], &[2]);
    accelerate!(par_loop(1, |i| {
        let (a, b) = (tensor_get(t, [0]), tensor_get(t, [1]));
        tensor_set(out, [i], a / b);
        tensor_set(out, [1], a % b)
    }));
    out.to_vec()
}

fn remainder_i16(x: i16, y: i16) -> i16 {
    let out = Tensor::<i16>::zeros(&[1]);
    let t = Tensor::<i16>::from_vec(vec![x, y], &[2]);
    accelerate!(par_loop(1, |i| tensor_set(
        out,
        [i],
        tensor_get(t, [0]) % tensor_get(t, [1])
    )));
    out.to_vec()[0]
}

fn remainder_i64(x: i64, y: i64) -> i64 {
    let out = Tensor::<i64>::zeros(&[1]);
    let t = Tensor::<i64>::from_vec(vec![x, y], &[2]);
    accelerate!(par_loop(1, |i| tensor_set(
        out,
        [i],
        tensor_get(t, [0]) % tensor_get(t, [1])
    )));
    out.to_vec()[0]
}

#[test]
fn min_divided_by_minus_one_fails_as_rust_panics() {
    // Next to it, everything divides as Rust's does.
    assert_eq!(
        on_every_target(|| quotient_i64(i64::MIN + 1, -1)),
        [i64::MAX, 0]
    );
    assert_eq!(on_every_target(|| quotient_i64(i64::MIN, 1)), [i64::MIN, 0]);
    assert_eq!(on_every_target(|| quotient_i8(i8::MIN, 2)), [-64, 0]);
    assert_eq!(on_every_target(|| quotient_u64(u64::MAX, u64::MAX)), [1, 0]);
    overflows("attempt to divide with overflow", || {
        quotient_i64(i64::MIN, -1);
    });
    overflows("attempt to divide with overflow", || {
        quotient_i8(i8::MIN, -1);
    });
    overflows("attempt to divide with overflow", || {
        quotient_i32(i32::MIN, -1);
    });
    overflows("attempt to calculate the remainder with overflow", || {
        remainder_i16(i16::MIN, -1);
    });
    overflows("attempt to calculate the remainder with overflow", || {
        remainder_i64(i64::MIN, -1);
    });
    overflows("attempt to calculate the remainder with overflow", || {
        euclid(i32::MIN, -1);
    });
}

/// Sites of the Futhark class dividing captured sequences: `MIN / -1` fails there too (Futhark's
/// own `//` and `%%` wrap; the generated code asserts).
fn quotients(x: &[i32], y: &[i32]) -> (Vec<i32>, Vec<i32>) {
    let q: Vec<i32> = accelerate!(map2(|a, b| a / b, x, y));
    let r: Vec<i32> = accelerate!(map2(|a, b| a % b, x, y));
    (q, r)
}

#[test]
fn min_divided_by_minus_one_fails_in_every_class_of_site() {
    let (x, y) = ([i32::MIN, 7, -7, i32::MIN], [1, -1, 2, i32::MAX]);
    assert_eq!(
        on_every_target(|| quotients(&x, &y)),
        (vec![i32::MIN, -7, -3, -1], vec![0, 0, -1, -1])
    );
    fails_everywhere("attempt to divide with overflow", || {
        quotients(&[3, i32::MIN], &[1, -1]);
    });
    fails_everywhere("attempt to calculate the remainder with overflow", || {
        let r: Vec<i32> = accelerate!(map2(|a, b| a % b, [i32::MIN], [-1]));
        assert_eq!(r, [0]);
    });
}

/// `clamp` with `min > max` (or, on floats, a NaN bound): Rust's panic message, at the site.
#[test]
fn clamp_with_min_above_max_fails_with_rust_s_message() {
    assert_eq!(on_every_target(|| clamp_i64(9, 3, 3)), 3);
    fails_everywhere("min > max. min = 1, max = 0", || {
        clamp_i64(5, 1, 0);
    });
    fails_everywhere("min > max. min = 3, max = -9223372036854775808", || {
        clamp_i64(5, 3, i64::MIN);
    });
    fails_everywhere("min > max, or either was NaN. min = 2.0, max = 1.0", || {
        clamp_f64(5.0, 2.0, 1.0);
    });
    fails_everywhere("min > max, or either was NaN. min = NaN, max = 1.0", || {
        clamp_f64(0.5, f64::NAN, 1.0);
    });
    fails_everywhere("min > max, or either was NaN. min = 0.1, max = NaN", || {
        clamp_f32(0.5, 0.1, f32::NAN);
    });
    // A NaN receiver within valid bounds stays NaN, as in Rust.
    assert!(on_every_target(|| clamp_f64(f64::NAN, 0.0, 1.0).is_nan()));
    assert!(with_target(Target::Debug, || clamp_f32(f32::NAN, 0.0, 1.0)).is_nan());
}

/// Each of the unsigned sites written out: the build hook sees no site a `macro_rules!` writes.
fn u64_methods(a: &[u64], b: &[u64]) -> Vec<u64> {
    let n = a.len();
    let ta = Tensor::<u64>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<u64>::from_vec(b.to_vec(), &[n]);
    let td = Tensor::<u64>::from_vec(nonzero(b), &[n]);
    let out = Tensor::<u64>::zeros(&[11, n]);
    accelerate!(par_loop(n, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        let d = tensor_get(td, [i]);
        tensor_set(out, [0, i], x.pow(y));
        tensor_set(out, [1, i], x.isqrt());
        tensor_set(out, [2, i], x.abs_diff(y));
        tensor_set(out, [3, i], x.div_ceil(d));
        tensor_set(out, [4, i], x.rem_euclid(d));
        tensor_set(out, [5, i], x.div_euclid(d));
        tensor_set(out, [6, i], if x.is_power_of_two() { 1 } else { 0 });
        tensor_set(out, [7, i], x.next_power_of_two());
        tensor_set(out, [8, i], x.wrapping_mul(3).clamp(x.min(y), x.max(y)));
        let c: u32 = x.count_ones() + x.leading_zeros() * 100 + x.trailing_zeros();
        tensor_set(out, [9, i], c as u64);
        tensor_set(out, [10, i], (x >> 1) + y % d)
    }));
    out.to_vec()
}

fn u8_methods(a: &[u8], b: &[u8]) -> Vec<u8> {
    let n = a.len();
    let ta = Tensor::<u8>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<u8>::from_vec(b.to_vec(), &[n]);
    let td = Tensor::<u8>::from_vec(nonzero(b), &[n]);
    let out = Tensor::<u8>::zeros(&[11, n]);
    accelerate!(par_loop(n, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        let d = tensor_get(td, [i]);
        tensor_set(out, [0, i], x.pow(y));
        tensor_set(out, [1, i], x.isqrt());
        tensor_set(out, [2, i], x.abs_diff(y));
        tensor_set(out, [3, i], x.div_ceil(d));
        tensor_set(out, [4, i], x.rem_euclid(d));
        tensor_set(out, [5, i], x.div_euclid(d));
        tensor_set(out, [6, i], if x.is_power_of_two() { 1 } else { 0 });
        tensor_set(out, [7, i], x.next_power_of_two());
        tensor_set(out, [8, i], x.wrapping_mul(3).clamp(x.min(y), x.max(y)));
        let c: u32 = x.count_ones() + x.leading_zeros() * 100 + x.trailing_zeros();
        tensor_set(out, [9, i], c as u8);
        tensor_set(out, [10, i], (x >> 1) + y % d)
    }));
    out.to_vec()
}

/// The methods on Rust's unsigned and narrow integers (after every Rust number type): each
/// computed in the receiver's type with Rust's result, counts as Rust's `u32`, and `s.len()` a
/// `usize`, on every target (the CUDA targets' `pm_m_*` instantiated per C type).
macro_rules! unsigned_methods {
    ($name:ident, $want:ident, $test:ident, $t:ty, $vals:expr) => {
        fn $want(a: &[$t], b: &[$t]) -> Vec<$t> {
            let ops: [fn($t, $t) -> $t; 11] = [
                |x, y| x.wrapping_pow(y as u32),
                |x, _| x.isqrt(),
                |x, y| x.abs_diff(y),
                |x, y| x.div_ceil(if y == 0 { 1 } else { y }),
                |x, y| x.rem_euclid(if y == 0 { 1 } else { y }),
                |x, y| x.div_euclid(if y == 0 { 1 } else { y }),
                |x, _| x.is_power_of_two() as $t,
                // A release build's overflow: 0.
                |x, _| x.checked_next_power_of_two().unwrap_or(0),
                |x, y| x.wrapping_mul(3).clamp(x.min(y), x.max(y)),
                |x, _| (x.count_ones() + x.leading_zeros() * 100 + x.trailing_zeros()) as $t,
                |x, y| (x >> 1).wrapping_add(y % if y == 0 { 1 } else { y }),
            ];
            ops.iter()
                .flat_map(|f| a.iter().zip(b).map(move |(&x, &y)| f(x, y)))
                .collect()
        }

        #[test]
        fn $test() {
            let (a, b) = pairs(&$vals);
            let got = wraps_on_every_target(|| $name(&a, &b));
            let want = $want(&a, &b);
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                let (row, e) = (k / a.len(), k % a.len());
                assert_eq!(g, w, "row {row}: x = {}, y = {}", a[e], b[e]);
            }
        }
    };
}

unsigned_methods!(
    u64_methods,
    u64_want,
    u64_methods_are_rust_s,
    u64,
    [
        0,
        1,
        2,
        3,
        7,
        64,
        65,
        (1 << 63) - 1,
        1 << 63,
        (1 << 63) + 1,
        u64::MAX - 1,
        u64::MAX
    ]
);
unsigned_methods!(
    u8_methods,
    u8_want,
    u8_methods_are_rust_s,
    u8,
    [0, 1, 2, 3, 7, 64, 127, 128, 129, 200, 254, 255]
);

#[test]
fn len_is_a_usize() {
    let s: Vec<i32> = vec![3, 1, 4, 1, 5];
    let got = on_every_target(|| {
        accelerate!({
            let n = s.len();
            let m: usize = n * 2 + 1;
            map(|i| i + m + s.len(), create(n, |i| i))
        })
    });
    let want: Vec<usize> = (0..s.len()).map(|i| i + 11 + 5).collect();
    assert_eq!(got, want);
}

/// `abs_diff` gives Rust's unsigned integer of the receiver's width, whether the receiver's type
/// is written (`i32` literals) or fixed by the captured values (`i64`, `i8` sequences), and one
/// result may feed another (`u64` on `u64`); the values at the edges are Rust's.
#[test]
fn abs_diff_is_unsigned() {
    let (a, b) = pairs(&I64S);
    let (c, d) = pairs(&[i8::MIN, -1, 0, 1, i8::MAX]);
    let got = on_every_target(|| {
        let wide: Vec<u64> = accelerate!(map2(|x, y| x.abs_diff(y), a, b));
        let narrow: Vec<u8> = accelerate!(map2(|x, y| x.abs_diff(y), c, d));
        let twice: Vec<u64> = accelerate!(map2(|x, y| x.abs_diff(y).abs_diff(7), a, b));
        let known: Vec<u32> = accelerate!(map(
            |x| (x - 2147483647i32 - 1).abs_diff(2147483647),
            create(2, |k| k)
        ));
        // A kernel on the CUDA targets: the distances' type follows the receivers'.
        let (ta, tb) = (
            Tensor::from_vec(c.clone(), &[c.len()]),
            Tensor::from_vec(d.clone(), &[c.len()]),
        );
        let out = Tensor::<u8>::zeros(&[c.len()]);
        accelerate!(par_loop(c.len(), |i| tensor_set(
            out,
            [i],
            tensor_get(ta, [i]).abs_diff(tensor_get(tb, [i]))
        )));
        (wide, narrow, twice, known, out.to_vec())
    });
    let wide: Vec<u64> = a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y)).collect();
    let narrow: Vec<u8> = c.iter().zip(&d).map(|(x, y)| x.abs_diff(*y)).collect();
    let twice: Vec<u64> = (a.iter().zip(&b))
        .map(|(x, y)| x.abs_diff(*y).abs_diff(7))
        .collect();
    let known = vec![
        i32::MIN.abs_diff(i32::MAX),
        (i32::MIN + 1).abs_diff(i32::MAX),
    ];
    assert_eq!(got, (wide, narrow.clone(), twice, known, narrow));
}

/// `ilog2` and `ilog10` in a kernel, of one element.
fn ilogs_of(x: i32) -> Vec<u32> {
    let out = Tensor::<u32>::zeros(&[2]);
    accelerate!(par_loop(1, |i| {
        tensor_set(out, [0], x.ilog2());
        tensor_set(out, [1 + i], x.ilog10())
    }));
    out.to_vec()
}

/// `wrapping_div` and `wrapping_rem` in a kernel.
fn wrapping_quotient(x: i64, y: i64) -> Vec<i64> {
    let out = Tensor::<i64>::zeros(&[2]);
    accelerate!(par_loop(1, |i| {
        tensor_set(out, [0], x.wrapping_div(y));
        tensor_set(out, [1 + i], x.wrapping_rem(y))
    }));
    out.to_vec()
}

#[test]
fn ilog_of_a_number_that_is_not_positive_fails_at_the_site() {
    assert_eq!(on_every_target(|| ilogs_of(i32::MAX)), [30, 9]);
    assert_eq!(on_every_target(|| ilogs_of(1)), [0, 0]);
    assert_eq!(on_every_target(|| ilogs_of(1000)), [9, 3]);
    for x in [0, -1, i32::MIN] {
        fails_everywhere("argument of integer logarithm must be positive", || {
            ilogs_of(x);
        });
    }
    // Of a narrow unsigned integer that the captured values fix.
    let v: Vec<u8> = vec![1, 9, 10, 255];
    let r: Vec<(u32, u32)> = on_every_target(|| accelerate!(map(|x| (x.ilog2(), x.ilog10()), v)));
    assert_eq!(r, [(0, 0), (3, 0), (3, 1), (7, 2)]);
    let z: Vec<u8> = vec![3, 0];
    same_failure(
        "tests/methods.rs",
        "argument of integer logarithm must be positive",
        || {
            let _: Vec<u32> = accelerate!(map(|x| x.ilog10(), z));
        },
    );
}

#[test]
fn wrapping_division_wraps_at_min_and_fails_by_zero() {
    assert_eq!(
        on_every_target(|| wrapping_quotient(i64::MIN, -1)),
        [i64::MIN, 0]
    );
    assert_eq!(on_every_target(|| wrapping_quotient(-7, 2)), [-3, -1]);
    fails_everywhere("Division by zero", || {
        wrapping_quotient(5, 0);
    });
}

/// The `wrapping_*` and `saturating_*` methods never fail, debug mode included, where `pow`,
/// `abs`, unary `-` and shifts by the width or more do; the results are Rust's on every target.
#[test]
fn wrapping_and_saturating_methods_never_fail_in_debug_mode() {
    let v: Vec<i32> = vec![i32::MIN, i32::MIN + 1, -3, -1, 0, 1, 7, i32::MAX];
    type Wrapped = (i32, i32, i32, i32, i32, i32, i32, i32, i32, u32);
    let want: Vec<Wrapped> = v
        .iter()
        .map(|&x| {
            (
                x.wrapping_pow(31),
                x.saturating_pow(31),
                x.wrapping_abs(),
                x.saturating_abs(),
                x.saturating_neg(),
                x.wrapping_shl(40),
                x.wrapping_shr(40),
                x.wrapping_div(-1),
                x.wrapping_rem(-1),
                x.unsigned_abs(),
            )
        })
        .collect();
    let got = on_every_target(|| {
        accelerate!(map(
            |x: i32| (
                x.wrapping_pow(31),
                x.saturating_pow(31),
                x.wrapping_abs(),
                x.saturating_abs(),
                x.saturating_neg(),
                x.wrapping_shl(40),
                x.wrapping_shr(40),
                x.wrapping_div(-1),
                x.wrapping_rem(-1),
                x.unsigned_abs()
            ),
            v
        ))
    });
    assert_eq!(got, want);
    // The operators they stand beside do fail in debug mode on these values.
    wraps_on_every_target(|| accelerate!(map(|x: i32| x.pow(31), v)));
    wraps_on_every_target(|| accelerate!(map(|x: i32| x.abs(), v)));
    let b: Vec<u8> = vec![0, 1, 2, 3, 16, 128, 255];
    let want: Vec<(u8, u8, u8, u8)> = b
        .iter()
        .map(|&x| {
            (
                x.wrapping_pow(9),
                x.saturating_pow(9),
                x.wrapping_shl(12),
                x.wrapping_shr(12),
            )
        })
        .collect();
    let got = on_every_target(|| {
        accelerate!(map(
            |x| (
                x.wrapping_pow(9),
                x.saturating_pow(9),
                x.wrapping_shl(12),
                x.wrapping_shr(12)
            ),
            b
        ))
    });
    assert_eq!(got, want);
}

/// `%` of floats is Rust's (C's `fmod`): the sign of the dividend, exact, NaN for a zero
/// divisor or an infinite dividend; `rem_euclid` and `div_euclid` of floats Rust's too.
#[test]
fn float_remainders_are_rust_s() {
    let xs: Vec<f64> = vec![
        7.5,
        -7.5,
        0.1,
        -0.0,
        1e300,
        f64::INFINITY,
        f64::NAN,
        5.0,
        -5.0,
    ];
    let ys: Vec<f64> = vec![2.0, 2.0, 0.03, 1.0, 3.0, 1.0, 1.0, 0.0, -f64::INFINITY];
    let want: Vec<(f64, f64, f64)> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| (x % y, x.rem_euclid(y), x.div_euclid(y)))
        .collect();
    let same = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
    let mut targets = vec![Target::Seq, Target::Cpu, Target::Debug];
    targets.extend(common::accelerated_targets());
    for t in targets {
        let got: Vec<(f64, f64, f64)> = with_target(t, || {
            accelerate!(map2(
                |x, y| (x % y, x.rem_euclid(y), x.div_euclid(y)),
                xs,
                ys
            ))
        });
        for (g, w) in got.iter().zip(&want) {
            assert!(
                same(g.0, w.0) && same(g.1, w.1) && same(g.2, w.2),
                "on {t}: {g:?} {w:?}"
            );
        }
    }
    let fs: Vec<f32> = vec![7.5, -7.5, 0.1];
    let got: Vec<f32> = on_every_target(|| accelerate!(map(|x| x % 2.0, fs)));
    assert_eq!(got, fs.iter().map(|x| x % 2.0).collect::<Vec<_>>());
}
