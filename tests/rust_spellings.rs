//! Rust spellings that mean what a PMExpr function means are accepted inside `accelerate!`:
//! `&x` (values are immutable, so a borrow is the value), `s.len()`, `s.is_empty()`, the float
//! methods `sqrt exp ln sin cos powf`, `abs min max` on numbers, and `as f64` of an integer. Each
//! agrees with the same
//! Rust outside the macro, on every target.

mod common;

use common::{on_every_target, wraps_on_every_target};
use pmexpr::{Tensor, accelerate};

struct Samples {
    values: Vec<f64>,
    counts: Vec<i64>,
}

impl Samples {
    /// Fields borrowed as a Rust user passes them to a function that reads them.
    fn mean(&self) -> f64 {
        accelerate!(reduce(addf, 0.0, &self.values) / self.values.len() as f64)
    }

    fn total(&self) -> i64 {
        accelerate!(if (&self.counts).is_empty() {
            0
        } else {
            reduce(|a, b| a + b, 0, &self.counts)
        })
    }
}

#[test]
fn borrows_and_lengths() {
    let s = Samples {
        values: vec![1.0, 2.5, 4.0, 0.5],
        counts: vec![3, 4, 5],
    };
    assert_eq!(on_every_target(|| s.mean()), 2.0);
    assert_eq!(on_every_target(|| s.total()), 12);
    let empty = Samples {
        values: vec![],
        counts: vec![],
    };
    assert_eq!(on_every_target(|| empty.total()), 0);
    let v: Vec<i64> = (0..100).collect();
    // `v.len()` is a `usize`, as in Rust.
    let got = on_every_target(|| -> Vec<i64> { accelerate!(map(|x| x * v.len() as i64, &v)) });
    assert_eq!(
        got,
        v.iter().map(|x| x * v.len() as i64).collect::<Vec<_>>()
    );
}

#[test]
fn float_methods_are_the_math_functions() {
    let xs: Vec<f64> = (1..200).map(|i| i as f64 / 7.0).collect();
    let got = on_every_target(|| -> Vec<f64> {
        accelerate!(map(
            |x| x.sqrt() + x.exp().ln() + x.sin() * x.cos() + x.powf(1.5),
            xs
        ))
    });
    let want: Vec<f64> = xs
        .iter()
        .map(|x| x.sqrt() + x.exp().ln() + x.sin() * x.cos() + x.powf(1.5))
        .collect();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{g} {w}");
    }
    // On `f32` values the methods are `f32`'s.
    let ys: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let got = on_every_target(|| -> Vec<f32> { accelerate!(map(|y| y.sqrt() * y, ys)) });
    let want: Vec<f32> = ys.iter().map(|y| y.sqrt() * y).collect();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} {w}");
    }
}

#[test]
fn as_f64_of_an_integer() {
    let n: i64 = 1 << 53;
    let big = [n + 1, -n - 3, 7, -7];
    let got = on_every_target(|| -> Vec<f64> { accelerate!(map(|k| k as f64 / 2.0, big)) });
    assert_eq!(got, big.iter().map(|&k| k as f64 / 2.0).collect::<Vec<_>>());
    // In a `par_loop` over a tensor (the CUDA class).
    let t = Tensor::<f64>::from_vec(vec![0.0; 8], &[8]);
    on_every_target(|| {
        accelerate!(par_loop(8, |i| tensor_set(t, [i], i as f64 * 0.25)));
    });
    assert_eq!(
        t.to_vec(),
        (0..8).map(|i| i as f64 * 0.25).collect::<Vec<_>>()
    );
}

#[test]
fn int2float_and_as_f64_of_i32() {
    let xs: Vec<i32> = vec![i32::MIN, -7, 0, 5, 16_777_217, i32::MAX];
    let got = on_every_target(|| -> Vec<f64> { accelerate!(map(|k| k as f64 * 0.5, xs)) });
    assert_eq!(got, xs.iter().map(|&k| k as f64 * 0.5).collect::<Vec<_>>());
    // `int2float` gives the float type its use needs: `f32` beside a captured `f32`.
    let h: f32 = 0.5;
    let got = on_every_target(|| -> Vec<f32> { accelerate!(map(|k| int2float(k) * h, xs)) });
    assert_eq!(got, xs.iter().map(|&k| k as f32 * h).collect::<Vec<_>>());
    // In a `par_loop` over `i32` and `f32` tensors (the CUDA class).
    let u = Tensor::<i32>::from_vec(xs.clone(), &[6]);
    let t = Tensor::<f32>::from_vec(vec![0.0; 6], &[6]);
    on_every_target(|| {
        accelerate!(par_loop(6, |i| tensor_set(
            t,
            [i],
            int2float(tensor_get(u, [i])) * 0.25
        )));
    });
    assert_eq!(
        t.to_vec(),
        xs.iter().map(|&k| k as f32 * 0.25).collect::<Vec<_>>()
    );
}

/// What Rust's `match` gives for the same arms.
fn grade(x: i64) -> i64 {
    match x {
        0 => 100,
        1 | 2 => 200,
        3..=9 => 300,
        -5..0 => 400,
        ..-5 => 500,
        _ => 600,
    }
}

#[test]
fn number_patterns_are_comparisons_on_every_backend() {
    let xs: Vec<i64> = (-8..14).collect();
    // A `map`: the Futhark class.
    let got = on_every_target(|| -> Vec<i64> {
        accelerate!(map(
            |x| match x {
                0 => 100,
                1 | 2 => 200,
                3..=9 => 300,
                -5..0 => 400,
                ..-5 => 500,
                _ => 600,
            },
            xs
        ))
    });
    assert_eq!(got, xs.iter().map(|&x| grade(x)).collect::<Vec<_>>());
    // A `par_loop`: the CUDA class; a scrutinee that is not a variable, float literals.
    let t = Tensor::<f64>::from_vec(vec![0.0; 22], &[22]);
    on_every_target(|| {
        accelerate!(par_loop(22, |i| tensor_set(
            t,
            [i],
            match int2float(i) * 0.5 {
                0.5 => 1.0,
                1.0..3.0 => 2.0,
                _ => 3.0,
            }
        )));
    });
    let want: Vec<f64> = (0..22)
        .map(|i| match i as f64 * 0.5 {
            0.5 => 1.0,
            1.0..3.0 => 2.0,
            _ => 3.0,
        })
        .collect();
    assert_eq!(t.to_vec(), want);
}

#[test]
fn path_constants_are_captured() {
    let xs: Vec<f64> = vec![3.0, -1.0, 7.5, 0.25];
    // `f64::INFINITY` and friends as a Rust user writes them: captured like variables.
    let got = on_every_target(|| -> (f64, f64) {
        accelerate!(reduce(
            |a: (f64, f64), b: (f64, f64)| (
                if a.0 < b.0 { a.0 } else { b.0 },
                if a.1 > b.1 { a.1 } else { b.1 }
            ),
            (f64::INFINITY, f64::NEG_INFINITY),
            map(|x| (x, x), xs)
        ))
    });
    assert_eq!(got, (-1.0, 7.5));
    let got = on_every_target(|| -> Vec<f64> {
        accelerate!(map(
            |x| x * std::f64::consts::PI + (i64::MAX - i64::MAX) as f64,
            xs
        ))
    });
    assert_eq!(
        got,
        xs.iter()
            .map(|x| x * std::f64::consts::PI)
            .collect::<Vec<_>>()
    );
    // Raw identifiers name the same constants.
    let got = on_every_target(|| -> Vec<f64> {
        accelerate!(map(
            |x| x * std::f64::consts::r#PI + (i64::r#MAX - r#i64::MAX) as f64,
            xs
        ))
    });
    assert_eq!(
        got,
        xs.iter()
            .map(|x| x * std::f64::consts::PI)
            .collect::<Vec<_>>()
    );
}

#[test]
fn abs_min_and_max_are_rusts() {
    let xs: Vec<f64> = vec![-2.5, 4.0, 0.0, 1.5, f64::NAN, -7.0, f64::INFINITY, -1.0];
    let ys: Vec<f64> = vec![1.0, f64::NAN, -3.0, 1.5, 2.0, -7.5, 0.5, f64::NEG_INFINITY];
    // A NaN on one side gives the other side, as Rust's `f64::min` and `f64::max`.
    let mins = on_every_target(|| -> Vec<f64> { accelerate!(map2(|x, y| x.min(y), xs, ys)) });
    let maxs = on_every_target(|| -> Vec<f64> { accelerate!(map2(|x, y| x.max(y), xs, ys)) });
    let pairs = || xs.iter().zip(&ys);
    assert_eq!(mins, pairs().map(|(x, y)| x.min(*y)).collect::<Vec<_>>());
    assert_eq!(maxs, pairs().map(|(x, y)| x.max(*y)).collect::<Vec<_>>());
    // `abs` clears the sign of a zero too: `1 / |x|` shows it.
    let zs: Vec<f64> = vec![-2.5, -0.0, 0.0, 4.0, f64::NEG_INFINITY];
    let got = on_every_target(|| -> Vec<f64> { accelerate!(map(|x| 1.0 / x.abs(), zs)) });
    assert_eq!(got, zs.iter().map(|x| 1.0 / x.abs()).collect::<Vec<_>>());
    // Integers: `abs` wraps at MIN, as `wrapping_abs` (debug mode fails there, as a Rust debug
    // build panics); `i32` and `f32` keep their types.
    let ks: Vec<i64> = vec![i64::MIN, -5, 0, 7, i64::MAX];
    let got =
        wraps_on_every_target(|| -> Vec<i64> { accelerate!(map(|k| k.abs() + k.min(0), ks)) });
    let want: Vec<i64> = ks
        .iter()
        .map(|k| k.wrapping_abs().wrapping_add(*k.min(&0)))
        .collect();
    assert_eq!(got, want);
    let small: Vec<i32> = vec![i32::MIN, -3, 9];
    let got = wraps_on_every_target(|| -> Vec<i32> { accelerate!(map(|k| k.abs().max(4), small)) });
    assert_eq!(
        got,
        small
            .iter()
            .map(|k| k.wrapping_abs().max(4))
            .collect::<Vec<_>>()
    );
    let fs: Vec<f32> = vec![-1.5, 0.25, -8.0];
    let got = on_every_target(|| -> Vec<f32> { accelerate!(map(|x| x.abs().min(2.0), fs)) });
    assert_eq!(got, fs.iter().map(|x| x.abs().min(2.0)).collect::<Vec<_>>());
    // In a `par_loop` over tensors (the CUDA class), on `f64` and `i64`.
    let a = Tensor::<f64>::from_vec(vec![-3.0, 0.5, -0.25, 9.0], &[4]);
    let b = Tensor::<i64>::from_vec(vec![-4, 2, i64::MIN, 0], &[4]);
    let out = Tensor::<f64>::from_vec(vec![0.0; 4], &[4]);
    let ints = Tensor::<i64>::from_vec(vec![0; 4], &[4]);
    wraps_on_every_target(|| {
        accelerate!(par_loop(4, |i| {
            tensor_set(out, [i], tensor_get(a, [i]).abs().max(0.5).min(5.0));
            tensor_set(ints, [i], tensor_get(b, [i]).abs().max(1))
        }));
    });
    assert_eq!(out.to_vec(), vec![3.0, 0.5, 0.5, 5.0]);
    assert_eq!(ints.to_vec(), vec![4, 2, i64::MIN.wrapping_abs().max(1), 1]);
}

/// `x != x` is how Rust code tests for a NaN; Futhark's simplifier folds it (and `x == x`,
/// `x <= x`, `x >= x`) as if no NaN existed, so the Futhark target makes the NaN test itself.
#[test]
fn a_nan_compares_as_ieee_says_on_every_target() {
    let xs: Vec<f64> = vec![1.5, f64::NAN, -0.0, f64::INFINITY];
    let got = on_every_target(|| -> Vec<i64> {
        accelerate!(map(
            |x| {
                let y = x;
                (if x != x { 1 } else { 0 })
                    + (if x == y { 2 } else { 0 })
                    + (if x <= y { 4 } else { 0 })
                    + (if x >= y { 8 } else { 0 })
            },
            xs
        ))
    });
    assert_eq!(got, vec![14, 1, 14, 14]);
}
