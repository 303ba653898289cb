//! Rust's bit operators (`& | ^ ! << >>`), `as i64` / `as f64` and numeric methods inside
//! `accelerate!`, against the same Rust outside it, on edge values (MIN, MAX, 0, ±1, shifts at
//! and beyond the width; NaN, ±0, ±inf), on every target: the sites are `par_loop`s, so the CUDA
//! targets run them as kernels (the emulator where there is no GPU).

mod common;

use common::{failure, on_every_target, wraps_on_every_target};
use pmexpr::{Target, Tensor, accelerate, with_target};

const I64S: [i64; 12] = [
    i64::MIN,
    i64::MIN + 1,
    -65,
    -64,
    -1,
    0,
    1,
    2,
    31,
    63,
    0x0123_4567_89ab_cdef,
    i64::MAX,
];
const I32S: [i32; 11] = [
    i32::MIN,
    i32::MIN + 1,
    -33,
    -1,
    0,
    1,
    2,
    31,
    32,
    0x0123_4567,
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

fn i64_ops(a: &[i64], b: &[i64]) -> Vec<i64> {
    let n = a.len();
    let ta = Tensor::<i64>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<i64>::from_vec(b.to_vec(), &[n]);
    let out = Tensor::<i64>::zeros(&[18, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        tensor_set(out, [0, i], x & y);
        tensor_set(out, [1, i], x | y);
        tensor_set(out, [2, i], x ^ y);
        tensor_set(out, [3, i], !x);
        tensor_set(out, [4, i], x.count_ones() as i64);
        tensor_set(out, [5, i], x.leading_zeros() as i64);
        tensor_set(out, [6, i], x.trailing_zeros() as i64);
        tensor_set(out, [7, i], x.reverse_bits());
        tensor_set(out, [8, i], x.swap_bytes());
        tensor_set(out, [9, i], x.rotate_left(y));
        tensor_set(out, [10, i], x.rotate_right(y));
        tensor_set(out, [11, i], x.wrapping_add(y) ^ x.wrapping_sub(y));
        tensor_set(out, [12, i], x.wrapping_mul(y) + x.wrapping_neg());
        tensor_set(out, [13, i], x.saturating_add(y));
        tensor_set(out, [14, i], x.saturating_sub(y));
        tensor_set(out, [15, i], x.saturating_mul(y));
        tensor_set(out, [16, i], x.signum() + x.abs());
        tensor_set(out, [17, i], x.clamp(-64, 63))
    }));
    out.to_vec()
}

fn i64_want(a: &[i64], b: &[i64]) -> Vec<i64> {
    let ops: [fn(i64, i64) -> i64; 18] = [
        |x, y| x & y,
        |x, y| x | y,
        |x, y| x ^ y,
        |x, _| !x,
        |x, _| x.count_ones() as i64,
        |x, _| x.leading_zeros() as i64,
        |x, _| x.trailing_zeros() as i64,
        |x, _| x.reverse_bits(),
        |x, _| x.swap_bytes(),
        |x, y| x.rotate_left(y as u32),
        |x, y| x.rotate_right(y as u32),
        |x, y| x.wrapping_add(y) ^ x.wrapping_sub(y),
        |x, y| x.wrapping_mul(y).wrapping_add(x.wrapping_neg()),
        |x, y| x.saturating_add(y),
        |x, y| x.saturating_sub(y),
        |x, y| x.saturating_mul(y),
        |x, _| x.signum().wrapping_add(x.wrapping_abs()),
        |x, _| x.clamp(-64, 63),
    ];
    ops.iter()
        .flat_map(|f| a.iter().zip(b).map(move |(&x, &y)| f(x, y)))
        .collect()
}

#[test]
fn i64_bit_operators_and_methods() {
    let (a, b) = pairs(&I64S);
    assert_eq!(wraps_on_every_target(|| i64_ops(&a, &b)), i64_want(&a, &b));
}

fn i32_ops(a: &[i32], b: &[i32]) -> Vec<i32> {
    let n = a.len();
    let ta = Tensor::<i32>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<i32>::from_vec(b.to_vec(), &[n]);
    let out = Tensor::<i32>::zeros(&[12, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        tensor_set(out, [0, i], (x & y) ^ (x | y));
        tensor_set(out, [1, i], !x);
        tensor_set(
            out,
            [2, i],
            (x.count_ones() + x.leading_zeros() * 64 + x.trailing_zeros() * 4096) as i32,
        );
        tensor_set(out, [3, i], x.reverse_bits());
        tensor_set(out, [4, i], x.swap_bytes());
        tensor_set(out, [5, i], x.rotate_left(y));
        tensor_set(out, [6, i], x.rotate_right(y));
        tensor_set(out, [7, i], x.saturating_add(y));
        tensor_set(out, [8, i], x.saturating_sub(y));
        tensor_set(out, [9, i], x.saturating_mul(y));
        tensor_set(out, [10, i], x.signum());
        tensor_set(out, [11, i], x.wrapping_mul(y))
    }));
    out.to_vec()
}

fn i32_want(a: &[i32], b: &[i32]) -> Vec<i32> {
    let ops: [fn(i32, i32) -> i32; 12] = [
        |x, y| (x & y) ^ (x | y),
        |x, _| !x,
        |x, _| {
            (x.count_ones() as i32)
                .wrapping_add((x.leading_zeros() as i32).wrapping_mul(64))
                .wrapping_add((x.trailing_zeros() as i32).wrapping_mul(4096))
        },
        |x, _| x.reverse_bits(),
        |x, _| x.swap_bytes(),
        |x, y| x.rotate_left(y as u32),
        |x, y| x.rotate_right(y as u32),
        |x, y| x.saturating_add(y),
        |x, y| x.saturating_sub(y),
        |x, y| x.saturating_mul(y),
        |x, _| x.signum(),
        |x, y| x.wrapping_mul(y),
    ];
    ops.iter()
        .flat_map(|f| a.iter().zip(b).map(move |(&x, &y)| f(x, y)))
        .collect()
}

#[test]
fn i32_bit_operators_and_methods() {
    let (a, b) = pairs(&I32S);
    assert_eq!(on_every_target(|| i32_ops(&a, &b)), i32_want(&a, &b));
}

fn shifts(a: &[i64], b: &[i64]) -> Vec<i64> {
    let n = a.len();
    let ta = Tensor::<i64>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<i64>::from_vec(b.to_vec(), &[n]);
    let out = Tensor::<i64>::zeros(&[2, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        tensor_set(out, [0, i], x << y);
        tensor_set(out, [1, i], x >> y)
    }));
    out.to_vec()
}

fn shifts_i32(a: &[i32], b: &[i32]) -> Vec<i32> {
    let n = a.len();
    let ta = Tensor::<i32>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<i32>::from_vec(b.to_vec(), &[n]);
    let out = Tensor::<i32>::zeros(&[2, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        tensor_set(out, [0, i], x << y);
        tensor_set(out, [1, i], x >> y)
    }));
    out.to_vec()
}

/// The release targets (all but debug mode): a shift by the width or more is masked, as a Rust
/// release build computes it (`wrapping_shl`); `>>` on a signed integer is arithmetic.
fn release_targets() -> Vec<Target> {
    let mut t = vec![Target::Seq, Target::Cpu];
    t.extend(common::accelerated_targets());
    t
}

#[test]
fn shifts_are_masked_in_release_and_arithmetic() {
    let (a, b) = pairs(&I64S);
    let mut want: Vec<i64> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| x.wrapping_shl(y as u32))
        .collect();
    want.extend(a.iter().zip(&b).map(|(&x, &y)| x.wrapping_shr(y as u32)));
    let (a32, b32) = pairs(&I32S);
    let mut want32: Vec<i32> = a32
        .iter()
        .zip(&b32)
        .map(|(&x, &y)| x.wrapping_shl(y as u32))
        .collect();
    want32.extend(
        a32.iter()
            .zip(&b32)
            .map(|(&x, &y)| x.wrapping_shr(y as u32)),
    );
    for t in release_targets() {
        assert_eq!(with_target(t, || shifts(&a, &b)), want, "on {t}");
        assert_eq!(with_target(t, || shifts_i32(&a32, &b32)), want32, "on {t}");
    }
    // In range, debug mode agrees.
    let (a, b): (Vec<i64>, Vec<i64>) = a
        .iter()
        .zip(&b)
        .filter(|(_, y)| (0..64).contains(*y))
        .unzip();
    assert_eq!(
        with_target(Target::Debug, || shifts(&a, &b)),
        with_target(Target::Seq, || shifts(&a, &b))
    );
}

#[test]
fn debug_mode_reports_a_shift_by_the_width_or_more() {
    for (x, y) in [(1_i64, 64_i64), (1, -1), (-8, 100)] {
        let m = failure(Target::Debug, || shifts(&[x], &[y]));
        assert!(
            m.starts_with("pmexpr: accelerate! at tests/bits.rs:"),
            "{m}"
        );
        assert!(m.contains("attempt to shift left with overflow"), "{m}");
    }
    let m = failure(Target::Debug, || shifts_i32(&[1], &[32]));
    assert!(m.contains("attempt to shift left with overflow"), "{m}");
}

#[test]
fn bool_bit_operators_evaluate_both_sides() {
    let a = vec![false, false, true, true];
    let b = vec![false, true, false, true];
    let got = on_every_target(|| -> Vec<(bool, bool, bool, bool)> {
        accelerate!(map2(|x, y| (x & y, x | y, x ^ y, !(x ^ y)), a, b))
    });
    let want: Vec<_> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| (x & y, x | y, x ^ y, !(x ^ y)))
        .collect();
    assert_eq!(got, want);
}

const F64S: [f64; 14] = [
    f64::NAN,
    f64::NEG_INFINITY,
    -1e300,
    -2.5,
    -1.5,
    -0.5,
    -0.0,
    0.0,
    0.49999999999999994,
    0.5,
    1.5,
    2.5,
    1e19,
    f64::INFINITY,
];

fn f64_ops(a: &[f64], b: &[f64]) -> Vec<f64> {
    let n = a.len();
    let ta = Tensor::<f64>::from_vec(a.to_vec(), &[n]);
    let tb = Tensor::<f64>::from_vec(b.to_vec(), &[n]);
    let out = Tensor::<f64>::zeros(&[27, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(ta, [i]);
        let y = tensor_get(tb, [i]);
        tensor_set(out, [0, i], x.floor());
        tensor_set(out, [1, i], x.ceil());
        tensor_set(out, [2, i], x.round());
        tensor_set(out, [3, i], x.trunc());
        tensor_set(out, [4, i], x.fract());
        tensor_set(out, [5, i], x.signum());
        tensor_set(out, [6, i], x.cbrt());
        tensor_set(out, [7, i], x.exp2());
        tensor_set(out, [8, i], x.log2());
        tensor_set(out, [9, i], x.log10());
        tensor_set(out, [10, i], x.tan());
        tensor_set(out, [11, i], x.asin());
        tensor_set(out, [12, i], x.acos());
        tensor_set(out, [13, i], x.atan());
        tensor_set(out, [14, i], x.atan2(y));
        tensor_set(out, [15, i], x.sinh());
        tensor_set(out, [16, i], x.cosh());
        tensor_set(out, [17, i], x.tanh());
        tensor_set(out, [18, i], x.hypot(y));
        tensor_set(out, [19, i], x.mul_add(y, 0.1));
        tensor_set(out, [20, i], if x.is_nan() { 1.0 } else { 0.0 });
        tensor_set(out, [21, i], if x.is_finite() { 1.0 } else { 0.0 });
        tensor_set(out, [22, i], x.to_radians());
        tensor_set(out, [23, i], x.to_degrees());
        tensor_set(out, [24, i], x.min(y));
        tensor_set(out, [25, i], x.max(y));
        tensor_set(out, [26, i], x.clamp(-1.0, 1.0))
    }));
    out.to_vec()
}

fn f64_want(a: &[f64], b: &[f64]) -> Vec<f64> {
    let ops: [fn(f64, f64) -> f64; 27] = [
        |x, _| x.floor(),
        |x, _| x.ceil(),
        |x, _| x.round(),
        |x, _| x.trunc(),
        |x, _| x.fract(),
        |x, _| x.signum(),
        |x, _| x.cbrt(),
        |x, _| x.exp2(),
        |x, _| x.log2(),
        |x, _| x.log10(),
        |x, _| x.tan(),
        |x, _| x.asin(),
        |x, _| x.acos(),
        |x, _| x.atan(),
        |x, y| x.atan2(y),
        |x, _| x.sinh(),
        |x, _| x.cosh(),
        |x, _| x.tanh(),
        |x, y| x.hypot(y),
        |x, y| x.mul_add(y, 0.1),
        |x, _| if x.is_nan() { 1.0 } else { 0.0 },
        |x, _| if x.is_finite() { 1.0 } else { 0.0 },
        |x, _| x.to_radians(),
        |x, _| x.to_degrees(),
        |x, y| x.min(y),
        |x, y| x.max(y),
        |x, _| x.clamp(-1.0, 1.0),
    ];
    ops.iter()
        .flat_map(|f| a.iter().zip(b).map(move |(&x, &y)| f(x, y)))
        .collect()
}

/// The rows of `min` and `max` in [`f64_ops`].
const MIN_MAX: [usize; 2] = [24, 25];

/// Bits, with every NaN the same (a NaN's payload is not part of Rust's promise).
fn bits(v: &[f64]) -> Vec<u64> {
    v.iter()
        .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
        .collect()
}

/// The math library functions (`cbrt tan asin …`) may differ in the last place between Rust's
/// library and the C one the CUDA targets use; the others must agree bit for bit.
fn close(got: &[f64], want: &[f64], exact_rows: &[usize], n: usize, on: Target) {
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let row = k / n;
        if MIN_MAX.contains(&row) && *g == 0.0 && *w == 0.0 {
            // Rust does not promise the sign of a zero that `min` or `max` of ±0.0 gives.
            continue;
        }
        if exact_rows.contains(&row)
            || g.is_nan()
            || w.is_nan()
            || g.is_infinite()
            || w.is_infinite()
        {
            assert_eq!(
                bits(&[*g]),
                bits(&[*w]),
                "row {row}, element {}, on {on}: {g} vs {w}",
                k % n
            );
        } else {
            let tol = 4.0 * f64::EPSILON * w.abs().max(f64::MIN_POSITIVE);
            assert!(
                (g - w).abs() <= tol,
                "row {row}, element {}, on {on}: {g} vs {w}",
                k % n
            );
        }
    }
}

#[test]
fn f64_methods() {
    let (a, b) = pairs(&F64S);
    let want = f64_want(&a, &b);
    let exact = [0, 1, 2, 3, 4, 5, 19, 20, 21, 22, 23, 24, 25, 26];
    for t in [Target::Seq, Target::Cpu, Target::Debug] {
        close(
            &with_target(t, || f64_ops(&a, &b)),
            &want,
            &[0; 0],
            a.len(),
            t,
        );
        let all: Vec<usize> = (0..27).collect();
        close(&with_target(t, || f64_ops(&a, &b)), &want, &all, a.len(), t);
    }
    for t in common::accelerated_targets() {
        close(
            &with_target(t, || f64_ops(&a, &b)),
            &want,
            &exact,
            a.len(),
            t,
        );
    }
}

fn f32_ops(a: &[f32]) -> Vec<f32> {
    let n = a.len();
    let ta = Tensor::<f32>::from_vec(a.to_vec(), &[n]);
    let out = Tensor::<f32>::zeros(&[8, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |i| {
        let x = tensor_get(ta, [i]);
        tensor_set(out, [0, i], x.floor());
        tensor_set(out, [1, i], x.round());
        tensor_set(out, [2, i], x.trunc() + x.fract());
        tensor_set(out, [3, i], x.signum());
        tensor_set(out, [4, i], x.to_radians());
        tensor_set(out, [5, i], x.to_degrees());
        tensor_set(out, [6, i], x.mul_add(x, 0.5));
        tensor_set(out, [7, i], x.ceil())
    }));
    out.to_vec()
}

#[test]
fn f32_methods() {
    let a: Vec<f32> = F64S
        .iter()
        .map(|&x| x as f32)
        .chain([0.3, 1e-8, 123.456])
        .collect();
    let ops: [fn(f32) -> f32; 8] = [
        |x| x.floor(),
        |x| x.round(),
        |x| x.trunc() + x.fract(),
        |x| x.signum(),
        |x| x.to_radians(),
        |x| x.to_degrees(),
        |x| x.mul_add(x, 0.5),
        |x| x.ceil(),
    ];
    let want: Vec<f32> = ops
        .iter()
        .flat_map(|f| a.iter().map(move |&x| f(x)))
        .collect();
    let b32 = |v: &[f32]| -> Vec<u32> {
        v.iter()
            .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
            .collect()
    };
    let mut targets = vec![Target::Seq, Target::Cpu, Target::Debug];
    targets.extend(common::accelerated_targets());
    for t in targets {
        let got = with_target(t, || f32_ops(&a));
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                b32(&[*g]),
                b32(&[*w]),
                "row {}, element {}, on {t}: {g} vs {w}",
                k / a.len(),
                k % a.len()
            );
        }
    }
}

fn casts(i: &[i64], j: &[i32], f: &[f64], g: &[f32], b: &[bool]) -> (Vec<i64>, Vec<f64>) {
    let n = i.len();
    let (ti, tj) = (
        Tensor::<i64>::from_vec(i.to_vec(), &[n]),
        Tensor::<i32>::from_vec(j.to_vec(), &[n]),
    );
    let (tf, tg) = (
        Tensor::<f64>::from_vec(f.to_vec(), &[n]),
        Tensor::<f32>::from_vec(g.to_vec(), &[n]),
    );
    let tb: Vec<bool> = b.to_vec();
    let ints = Tensor::<i64>::zeros(&[5, n]);
    let floats = Tensor::<f64>::zeros(&[5, n]);
    let m = n as i64;
    accelerate!(par_loop(m, |k| {
        let (x, y, z, w, c) = (
            tensor_get(ti, [k]),
            tensor_get(tj, [k]),
            tensor_get(tf, [k]),
            tensor_get(tg, [k]),
            get(tb, k),
        );
        tensor_set(ints, [0, k], x as i64);
        tensor_set(ints, [1, k], y as i64);
        tensor_set(ints, [2, k], z as i64);
        tensor_set(ints, [3, k], w as i64);
        tensor_set(ints, [4, k], c as i64);
        tensor_set(floats, [0, k], x as f64);
        tensor_set(floats, [1, k], y as f64);
        tensor_set(floats, [2, k], z as f64);
        tensor_set(floats, [3, k], w as f64);
        tensor_set(floats, [4, k], c as f64)
    }));
    (ints.to_vec(), floats.to_vec())
}

#[test]
fn as_casts_are_rust_s() {
    let i: Vec<i64> = vec![
        i64::MIN,
        -1,
        0,
        1,
        (1 << 53) + 1,
        i64::MAX,
        7,
        9,
        -3,
        12,
        5,
        0,
        1,
        2,
    ];
    let j: Vec<i32> = vec![
        i32::MIN,
        -1,
        0,
        1,
        i32::MAX,
        3,
        -7,
        8,
        9,
        10,
        11,
        12,
        13,
        14,
    ];
    let f: Vec<f64> = F64S.to_vec();
    let g: Vec<f32> = vec![
        f32::NAN,
        f32::NEG_INFINITY,
        -3e9,
        -2.7,
        -0.5,
        -0.0,
        0.0,
        0.9,
        1.5,
        2.5,
        9.3e18,
        1e19,
        3e38,
        f32::INFINITY,
    ];
    let b: Vec<bool> = (0..14).map(|k| k % 3 == 0).collect();
    let mut wi: Vec<i64> = i.clone();
    wi.extend(j.iter().map(|&x| x as i64));
    wi.extend(f.iter().map(|&x| x as i64));
    wi.extend(g.iter().map(|&x| x as i64));
    wi.extend(b.iter().map(|&x| x as i64));
    let mut wf: Vec<f64> = i.iter().map(|&x| x as f64).collect();
    wf.extend(j.iter().map(|&x| x as f64));
    wf.extend(f.iter().copied());
    wf.extend(g.iter().map(|&x| x as f64));
    wf.extend(b.iter().map(|&x| x as u8 as f64));
    let (gi, gf) = on_every_target(|| {
        let (a, b) = casts(&i, &j, &f, &g, &b);
        (a, bits(&b))
    });
    assert_eq!(gi, wi);
    assert_eq!(gf, bits(&wf));
}

/// `clamp` with a minimum above the maximum: Rust panics (`assert!(min <= max)`); here a
/// failure at the site on every target, in Rust's words (`tests/methods.rs` checks the kernels).
#[test]
fn clamp_with_min_above_max_fails_at_the_site() {
    let x = 5_i64;
    common::same_failure("tests/bits.rs", "min > max. min = 1, max = 0", || {
        let _: i64 = accelerate!(backend = cpu, x.clamp(1, 0));
    });
    let f = 0.5_f64;
    common::same_failure(
        "tests/bits.rs",
        "min > max, or either was NaN. min = NaN, max = 1.0",
        || {
            let _: f64 = accelerate!(backend = cpu, f.clamp(f64::NAN, 1.0));
        },
    );
}

/// 8- and 16-bit `& | ^ !` keep their type: a kernel computes them in C's `int` and converts
/// back, so `!10u16` is 65525 and a shift or method of the result sees the narrow number.
#[test]
// The plain Rust twins spell the operations as the sites do, masks with no effect included.
#[allow(clippy::identity_op, clippy::erasing_op)]
fn narrow_bit_operators_keep_their_width() {
    let b8: Vec<u8> = vec![0, 1, 20, 200, 255];
    let b16: Vec<u16> = vec![0, 10, 300, 65535];
    let n8 = b8.len() as i64;
    let n16 = b16.len() as i64;
    let out8 = Tensor::<i64>::zeros(&[5, 5]);
    let out16 = Tensor::<i64>::zeros(&[3, 4]);
    let got = on_every_target(|| {
        accelerate!(par_loop(n8, |i| {
            let b = b8[i as usize];
            tensor_set(out8, [0, i], ((b & 255u8) << 1u8) as i64);
            tensor_set(out8, [1, i], (b & 0u8).trailing_zeros() as i64);
            tensor_set(out8, [2, i], (!b).isqrt() as i64);
            tensor_set(out8, [3, i], ((b | 128u8) >> 1u8) as i64);
            tensor_set(out8, [4, i], (b ^ 255u8).leading_zeros() as i64)
        }));
        accelerate!(par_loop(n16, |i| {
            let h = b16[i as usize];
            tensor_set(out16, [0, i], (!h) as i64);
            tensor_set(out16, [1, i], ((h & 65535u16) << 3u16) as i64);
            tensor_set(out16, [2, i], (h ^ 1u16).count_ones() as i64)
        }));
        (out8.to_vec(), out16.to_vec())
    });
    let mut want8 = Vec::new();
    let rows8: [fn(u8) -> i64; 5] = [
        |b| ((b & 255u8) << 1u8) as i64,
        |b| (b & 0u8).trailing_zeros() as i64,
        |b| (!b).isqrt() as i64,
        |b| ((b | 128u8) >> 1u8) as i64,
        |b| (b ^ 255u8).leading_zeros() as i64,
    ];
    for f in rows8 {
        want8.extend(b8.iter().map(|&b| f(b)));
    }
    let mut want16 = Vec::new();
    let rows16: [fn(u16) -> i64; 3] = [
        |h| (!h) as i64,
        |h| ((h & 65535u16) << 3u16) as i64,
        |h| (h ^ 1u16).count_ones() as i64,
    ];
    for f in rows16 {
        want16.extend(b16.iter().map(|&h| f(h)));
    }
    assert_eq!(got, (want8, want16));
}

/// `abs_diff` of a narrow signed integer is the unsigned integer of its width (a `u8` for an
/// `i8`): its result, shifted or negated, keeps that width on every target (the CUDA code had
/// returned C's promoted `unsigned int`, so `103i8.abs_diff(0) << 7` was shifted in 32 bits).
#[test]
fn narrow_abs_diff_keeps_its_width() {
    let a: Vec<i8> = vec![0, -5, 100, -128, 127];
    let b: Vec<i16> = vec![0, -300, 32767, -32768];
    let (na, nb) = (a.len() as i64, b.len() as i64);
    let out_a = Tensor::<i64>::zeros(&[3, 5]);
    let out_b = Tensor::<i64>::zeros(&[2, 4]);
    // A release build's meaning (debug mode reports the shift by -1, as a debug build).
    let run = || {
        accelerate!(par_loop(na, |i| {
            let x = a[i as usize];
            tensor_set(out_a, [0, i], (x.abs_diff(103i8) << (-1i8)) as i64);
            tensor_set(out_a, [1, i], (!x.abs_diff(-3i8)) as i64);
            tensor_set(out_a, [2, i], x.abs_diff(-128i8).wrapping_mul(3u8) as i64)
        }));
        accelerate!(par_loop(nb, |i| {
            let x = b[i as usize];
            tensor_set(out_b, [0, i], (x.abs_diff(7i16) << 15u8) as i64);
            tensor_set(
                out_b,
                [1, i],
                x.abs_diff(-32768i16).wrapping_add(1u16) as i64,
            )
        }));
        (out_a.to_vec(), out_b.to_vec())
    };
    let rows_a: [fn(i8) -> i64; 3] = [
        |x| x.abs_diff(103i8).wrapping_shl((-1i8) as u32) as i64,
        |x| (!x.abs_diff(-3i8)) as i64,
        |x| x.abs_diff(-128i8).wrapping_mul(3u8) as i64,
    ];
    let rows_b: [fn(i16) -> i64; 2] = [
        |x| x.abs_diff(7i16).wrapping_shl(15) as i64,
        |x| x.abs_diff(-32768i16).wrapping_add(1u16) as i64,
    ];
    let want_a: Vec<i64> = rows_a
        .iter()
        .flat_map(|f| a.iter().map(|&x| f(x)))
        .collect();
    let want_b: Vec<i64> = rows_b
        .iter()
        .flat_map(|f| b.iter().map(|&x| f(x)))
        .collect();
    for t in release_targets() {
        assert_eq!(
            with_target(t, run),
            (want_a.clone(), want_b.clone()),
            "on {t}"
        );
    }
}
