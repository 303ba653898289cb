//! Beyond the paper: `i32` and `f32` values are computed with as `i32` and `f32` (not widened),
//! because a number's type follows the captured Rust values and literals take the type around
//! them. Every target agrees.

use pmexpr::{Target, Tensor, accelerate, with_target};

mod common;
use common::{on_every_target, wraps_on_every_target};

#[test]
fn f32_sequences_stay_f32() {
    let s: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let scaled: Vec<f32> = on_every_target(|| accelerate!(map(|x| x * 2.0 + 0.25, s)));
    assert_eq!(scaled[3], 3.25_f32);
    let total: f32 = on_every_target(|| accelerate!(reduce(|a, b| a + b, 0.0, s)));
    assert_eq!(total, s.iter().sum::<f32>());
    // f32 arithmetic, not f64: 0.1 + 0.2 rounds as f32 does.
    let a: Vec<f32> = vec![0.1];
    let r: Vec<f32> = on_every_target(|| accelerate!(map(|x| x + 0.2, a)));
    assert_eq!(r[0], 0.1_f32 + 0.2_f32);
}

#[test]
fn i32_sequences_and_tensors() {
    let s: Vec<i32> = (1..=100).collect();
    let sum: i32 = on_every_target(|| accelerate!(reduce(|a, b| a + b, 0, map(|x| x * 3 - 1, s))));
    assert_eq!(sum, s.iter().map(|x| x * 3 - 1).sum::<i32>());
    // Wrapping, as i32 wraps.
    let big: Vec<i32> = vec![i32::MAX];
    let w: Vec<i32> = wraps_on_every_target(|| accelerate!(map(|x| x + 1, big)));
    assert_eq!(w, vec![i32::MIN]);
    let out = on_every_target(|| {
        let t = Tensor::<f32>::zeros(&[4]);
        let n: i64 = 4;
        accelerate!(par_loop(n, |i| tensor_set(t, [i], 1.5)));
        t.to_vec()
    });
    assert_eq!(out, vec![1.5_f32; 4]);
}

#[test]
fn an_integer_literal_that_does_not_fit_is_an_error_at_the_site() {
    let s: Vec<i32> = vec![1];
    let failure = std::panic::catch_unwind(|| {
        with_target(Target::Seq, || -> Vec<i32> {
            accelerate!(map(|x| x + 3000000000, s))
        })
    })
    .unwrap_err();
    let message = failure.downcast_ref::<String>().unwrap();
    assert!(message.contains("tests/numbers.rs:"), "{message}");
    assert!(
        message.contains("the integer literal 3000000000 does not fit in i32"),
        "{message}"
    );
}

#[test]
fn math_functions_follow_the_float_type() {
    let s: Vec<f32> = (1..200).map(|i| i as f32 * 0.37).collect();
    // `sqrt` is correctly rounded everywhere: every target gives Rust's `f32::sqrt`.
    let roots: Vec<f32> = on_every_target(|| accelerate!(map(|x| sqrt(x), s)));
    assert_eq!(roots, s.iter().map(|x| x.sqrt()).collect::<Vec<f32>>());
    // The sequential target is Rust's own `f32` functions; the others (a GPU's `sinf` among them)
    // within a few units in the last place.
    let f = || -> Vec<f32> {
        accelerate!(map(
            |x| sin(x) + cos(x) * exp(x / 100.0) - log(x) + pow(x, 0.5),
            s
        ))
    };
    let want: Vec<f32> = s
        .iter()
        .map(|&x| x.sin() + x.cos() * (x / 100.0).exp() - x.ln() + x.powf(0.5))
        .collect();
    assert_eq!(with_target(Target::Seq, f), want);
    let mut targets = vec![Target::Cpu, Target::Debug];
    targets.extend(common::accelerated_targets());
    for t in targets {
        for (got, want) in with_target(t, f).iter().zip(&want) {
            assert!(
                (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                "on {t}: {got} vs {want}"
            );
        }
    }
    // `int2float` makes the float type its context wants, `floorfi` takes any: in `f32` here.
    let g = || -> (Vec<f32>, Vec<i64>) {
        (
            accelerate!(map(|x| x * int2float(3) + int2float(floorfi(x)), s)),
            accelerate!(map(|x| floorfi(x * 2.0), s)),
        )
    };
    let want: (Vec<f32>, Vec<i64>) = (
        s.iter().map(|&x| x * 3.0 + x.floor()).collect(),
        s.iter().map(|&x| (x * 2.0).floor() as i64).collect(),
    );
    assert_eq!(on_every_target(g), want);
    // And in a CUDA-class site, on an `f32` tensor.
    let h = on_every_target(|| {
        let t = Tensor::<f32>::from_vec(vec![0.5, -1.5, 2.25], &[3]);
        let k = Tensor::<i64>::zeros(&[3]);
        accelerate!(par_loop(3, |i| {
            tensor_set(k, [i], floorfi(tensor_get(t, [i])));
            tensor_set(t, [i], tensor_get(t, [i]) + int2float(i))
        }));
        (t.to_vec(), k.to_vec())
    });
    assert_eq!(h, (vec![0.5, -0.5, 4.25], vec![0, -2, 2]));
    // On tensors in a CUDA-class site too, and an `f64` tensor beside it keeps `f64`.
    let out = on_every_target(|| {
        let t = Tensor::<f32>::from_vec(vec![2.0, 9.0, 0.25], &[3]);
        let u = Tensor::<f64>::from_vec(vec![2.0, 9.0, 0.25], &[3]);
        accelerate!(par_loop(3, |i| {
            tensor_set(t, [i], sqrt(tensor_get(t, [i])));
            tensor_set(u, [i], sqrt(tensor_get(u, [i])))
        }));
        (t.to_vec(), u.to_vec())
    });
    assert_eq!(out.0, vec![2.0_f32.sqrt(), 3.0, 0.5]);
    assert_eq!(out.1, vec![2.0_f64.sqrt(), 3.0, 0.5]);
}

/// Sequence and array literals of captured values of every number type (and `bool`), which the
/// expression only moves: the element type is the captured values' own, a generic parameter of
/// the generated code, on every target; in a CUDA-class site (a kernel reads the literals'
/// elements and lengths) and in a `map`'s element function too.
#[test]
fn literals_of_captured_values_of_every_number_type() {
    // The site runs as one kernel on each CUDA target.
    fn launches<T>(site: impl Fn() -> T) {
        for t in common::cuda_targets() {
            let before = pmexpr::cuda::launches_on_this_thread();
            with_target(t, &site);
            assert_eq!(
                pmexpr::cuda::launches_on_this_thread() - before,
                1,
                "on {t}"
            );
        }
    }
    macro_rules! each {
        ($($t:ident = $a:expr, $b:expr;)*) => {$({
            let (c, d): ($t, $t) = ($a, $b);
            let s: Vec<$t> = vec![d, c, d];
            let want = (
                vec![c, d][1],
                [c, c, d][0],
                vec![vec![c, d], vec![d, c]][1][0],
                vec![s.clone(), s.clone()][1][2],
            );
            let got: ($t, $t, $t, $t) = on_every_target(|| {
                accelerate!(backend = cpu, {
                    let q = vec![c, d];
                    let r = [c, c, d];
                    let m = vec![vec![c, d], vec![d, c]];
                    let ss = vec![s, s];
                    (q[1], r[0], m[1][0], ss[1][2])
                })
            });
            assert_eq!(got, want, stringify!($t));
            let moved: Vec<$t> = on_every_target(|| accelerate!(map(|x| { let q = vec![c, x]; q[1] }, s)));
            assert_eq!(moved, s, stringify!($t));
            // Built by the host code of a CUDA-class site, read (or only counted) by its kernel.
            let site = || {
                let t = Tensor::<$t>::from_vec(vec![c; 2], &[2]);
                accelerate!({
                    let q = vec![c, d];
                    par_loop(2, |i| tensor_set(t, [i], q[1 - i]))
                });
                t.to_vec()
            };
            assert_eq!(on_every_target(site), [d, c], stringify!($t));
            launches(site);
            let site = || {
                let lens = Tensor::<i64>::zeros(&[3]);
                accelerate!({
                    let r = [c, d, c];
                    par_loop(length(r), |i| tensor_set(lens, [i], i + 1))
                });
                lens.to_vec()
            };
            assert_eq!(on_every_target(site), [1, 2, 3], stringify!($t));
            launches(site);
        })*};
    }
    each! {
        i8 = -4, 7; i16 = -4, 7; i32 = -4, 7; i64 = -4, 7; isize = -4, 7;
        u8 = 4, 7; u16 = 4, 7; u32 = 4, 7; u64 = 4, 7; usize = 4, 7;
        f32 = -4.5, 0.25; f64 = -4.5, 0.25; bool = true, false;
    }
}

/// Integer literals, in expressions and as patterns (literals, ranges, alternatives), take
/// every value of their type: `u64` and `usize` above `i64::MAX`, signed types' negative
/// values; on every target, as plain Rust.
#[test]
fn literals_and_patterns_cover_every_value_of_their_type() {
    fn plain(x: u64) -> i64 {
        match x {
            9223372036854775808 => 1,
            18446744073709551615 | 0 => 2,
            9223372036854775809..=18446744073709551614 => 3,
            _ => 4,
        }
    }
    for x in [
        0_u64,
        1,
        9223372036854775807,
        9223372036854775808,
        9223372036854775809,
        18446744073709551614,
        18446744073709551615,
    ] {
        let r: i64 = on_every_target(|| {
            accelerate!(
                backend = cpu,
                match x {
                    9223372036854775808 => 1,
                    18446744073709551615 | 0 => 2,
                    9223372036854775809..=18446744073709551614 => 3,
                    _ => 4,
                }
            )
        });
        assert_eq!(r, plain(x), "x = {x}");
    }
    let us: Vec<usize> = vec![0, usize::MAX, 1 << 63, 5];
    let kinds: Vec<i64> = on_every_target(|| {
        accelerate!(map(
            |u| match u {
                18446744073709551615 => 1,
                9223372036854775808..=18446744073709551614 => 2,
                _ => 0,
            },
            us
        ))
    });
    assert_eq!(kinds, vec![0, 1, 2, 0]);
    let is: Vec<i64> = vec![i64::MIN, -2, 0, i64::MAX];
    let signs: Vec<i64> = on_every_target(|| {
        accelerate!(map(
            |i| match i {
                -9223372036854775808 => -2,
                -9223372036854775807..=-1 => -1,
                9223372036854775807 => 2,
                _ => 0,
            },
            is
        ))
    });
    assert_eq!(signs, vec![-2, -1, 0, 2]);
    // Literals in expressions: a `u64`'s greatest value, with and without a suffix.
    let top: (u64, usize, u64) = on_every_target(|| {
        accelerate!(backend = cpu, {
            let y: u64 = 18446744073709551615;
            let z: usize = 9223372036854775808;
            (y, z + 1, 18446744073709551615u64 - y)
        })
    });
    assert_eq!(top, (u64::MAX, (1 << 63) + 1, 0));
    // Where only the captured values fix the type, as the CPU targets check it at run time.
    let ws: Vec<u64> = vec![1, 2];
    let shifted: Vec<u64> = on_every_target(|| accelerate!(map(|w| w + 18446744073709551613, ws)));
    assert_eq!(shifted, vec![u64::MAX - 1, u64::MAX]);
    // A literal that the captured scrutinee's type cannot hold fails when it is compared, at
    // the site (where the expression names the type, it is a compile error at the literal).
    let five: u64 = 5;
    let m = common::failure(Target::Cpu, || -> i64 {
        accelerate!(
            backend = cpu,
            match five {
                -1 => 1,
                _ => 0,
            }
        )
    });
    assert!(
        m.starts_with("pmexpr: accelerate! at tests/numbers.rs:")
            && m.contains("the integer literal -1 does not fit in u64"),
        "{m}"
    );
    // In a kernel (a CUDA-class site): the C literals of `u64`s above `i64::MAX`.
    let src = Tensor::<u64>::from_vec(vec![0, u64::MAX, 1 << 63, 5], &[4]);
    let classes = on_every_target(|| {
        let out = Tensor::<u64>::zeros(&[4]);
        accelerate!(par_loop(4, |i| tensor_set(
            out,
            [i],
            match tensor_get(src, [i]) {
                18446744073709551615 => 1,
                9223372036854775808..=18446744073709551614 => 18446744073709551614,
                x => x + 9223372036854775808,
            }
        )));
        out.to_vec()
    });
    assert_eq!(classes, vec![1 << 63, 1, u64::MAX - 1, (1 << 63) + 5]);
}
