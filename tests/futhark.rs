//! The Futhark target: Futhark-class sites run by the library the `futhark` compiler built for this
//! package (`build.rs` → `pmexpr-build`). Each test checks the result against `seq` **and** that
//! the site called its Futhark entry point (so a silent CPU fallback fails the test).
//!
//! Where the build did not find `futhark` (it is in no package registry these machines reach),
//! each test says that it skipped and why, and checks instead that the `futhark` target still
//! gives the `seq` result, on the CPU. The differential suite (`tests/differential.rs`) also runs
//! every site on the `futhark` target when the library was built.

use pmexpr::futhark::calls_on_this_thread;
use pmexpr::{Record, Target, accelerate, with_target};

mod common;

/// Runs `f` on `seq` and on `futhark`, checks that they agree and that `f` called `calls` entry
/// points on `futhark` (when the library was built), and returns the result.
fn on_futhark<T: PartialEq + std::fmt::Debug>(calls: u64, f: impl Fn() -> T) -> T {
    let seq = with_target(Target::Seq, &f);
    let run = || {
        let before = calls_on_this_thread();
        let got = with_target(Target::Futhark, &f);
        assert_eq!(got, seq, "futhark and seq differ");
        calls_on_this_thread() - before
    };
    match (
        common::futhark_target(),
        option_env!("PMEXPR_FUTHARK_LIBRARY"),
    ) {
        (Some(_), _) if common::futhark_older_than_target() => {
            let ran = run();
            println!(
                "skipped: counting entry points ({ran} of {calls} called): Futhark {} is older \
                 than 0.25 and rejects some of the generated entries",
                option_env!("PMEXPR_FUTHARK_VERSION").unwrap_or("?")
            );
        }
        (Some(_), _) => assert_eq!(run(), calls, "entry points called on the futhark target"),
        // A `cuda` library without a GPU: the futhark target refuses (tested by the runtime).
        (None, Some(_)) => println!("skipped: the futhark target (a CUDA library and no GPU)"),
        (None, None) => {
            println!(
                "skipped: checking that the Futhark library ran (the build did not find `futhark`)"
            );
            assert_eq!(run(), 0);
        }
    }
    seq
}

#[test]
fn map_and_reduce_of_i64_and_f64() {
    let s: Vec<i64> = (0..10_000).map(|i| (i * 7919) % 1000 - 500).collect();
    let c = 3_i64;
    let r = on_futhark(1, || accelerate!(reduce(addi, 0, map(|x| x * c + 1, s))));
    assert_eq!(r, s.iter().map(|x| x * c + 1).sum::<i64>());
    let a: Vec<f64> = (0..5000).map(|i| i as f64 * 0.25).collect();
    let b: Vec<f64> = (0..5000).map(|i| 1.0 / (1.0 + i as f64)).collect();
    let r = on_futhark(1, || accelerate!(map2(|x, y| x * y + 1.0, a, b)));
    assert_eq!(r.len(), 5000);
}

#[test]
fn i32_and_f32_are_not_widened() {
    let s: Vec<i32> = vec![i32::MAX, 1, 2];
    let w: Vec<i32> = on_futhark(1, || accelerate!(map(|x| x + 1, s)));
    assert_eq!(w, [i32::MIN, 2, 3]);
    let f: Vec<f32> = vec![0.1, 0.2, 0.3];
    let g: Vec<f32> = on_futhark(1, || accelerate!(map(|x| x + 0.2, f)));
    assert_eq!(g[0], 0.1_f32 + 0.2_f32);
}

#[test]
fn nested_sequences_flatten_and_empty_inputs() {
    let m: Vec<Vec<i64>> = (0..30).map(|i| (0..7).map(|j| i * j).collect()).collect();
    let flat = on_futhark(1, || {
        accelerate!(flatten(map(|row| map(|x| x + 1, row), m)))
    });
    assert_eq!(flat, m.iter().flatten().map(|x| x + 1).collect::<Vec<_>>());
    let sums: Vec<i64> = on_futhark(1, || accelerate!(map(|row| reduce(addi, 0, row), m)));
    assert_eq!(sums[2], (0..7).map(|j| 2 * j).sum::<i64>());
    let empty: Vec<f64> = Vec::new();
    let e = on_futhark(1, || accelerate!(reduce(addf, 0.0, empty)));
    assert_eq!(e, 0.0);
}

/// A product of matrices given as rows: the entry point checks that the rows of `a` are as long
/// as `b` has rows.
fn product(a: &[Vec<f64>], b: &[Vec<f64>]) -> Vec<Vec<f64>> {
    accelerate!({
        let bt = map(|j| map(|row| row[j], b), create(length(head(b)), |j| j));
        map(
            |r| map(|c| reduce(addf, 0.0, map2(|x, y| x * y, r, c)), bt),
            a,
        )
    })
}

#[test]
fn an_empty_sequence_of_sequences_runs_on_the_cpu() {
    let b = vec![vec![1.0, 2.0], vec![3.0, 4.0]];
    let r = on_futhark(1, || product(&[vec![1.0, 1.0]], &b));
    assert_eq!(r, vec![vec![4.0, 6.0]]);
    // No rows: nothing tells Futhark how long they would be (it made them 0, and the entry
    // point refused `b`'s 2 rows), so the site runs on the CPU, with the same result.
    let r = on_futhark(0, || product(&[], &b));
    assert!(r.is_empty());
}

#[test]
fn booleans_cross_both_ways() {
    let s: Vec<i64> = (0..100).collect();
    let even: Vec<bool> = on_futhark(1, || accelerate!(map(|x| x % 2 == 0, s)));
    assert_eq!(even.iter().filter(|b| **b).count(), 50);
    let flags = even.clone();
    let n = on_futhark(1, || {
        accelerate!(reduce(addi, 0, map(|b| if b { 1 } else { 0 }, flags)))
    });
    assert_eq!(n, 50);
}

#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct Body {
    x: f64,
    v: f64,
}

#[test]
fn records_as_parameters_and_results() {
    // Beyond the reference compiler, which refused records at the boundary.
    let ps: Vec<Body> = (0..64)
        .map(|i| Body {
            x: i as f64,
            v: 0.5 * i as f64,
        })
        .collect();
    let dt = 0.1;
    let moved: Vec<Body> = on_futhark(1, || {
        accelerate!(map(
            |p: Body| Body {
                x: p.x + p.v * dt,
                v: p.v
            },
            ps
        ))
    });
    assert_eq!(moved[10].x, 10.0 + 5.0 * 0.1);
    let pairs: Vec<(i64, Vec<f64>)> = (0..10).map(|i| (i, vec![i as f64; 3])).collect();
    let r = on_futhark(1, || {
        accelerate!((
            reduce(addi, 0, map(|p| p.0, pairs)),
            map(|p| reduce(addf, 0.0, p.1), pairs)
        ))
    });
    assert_eq!(r.0, 45);
    assert_eq!(r.1[4], 12.0);
}

#[test]
fn irregular_sequences_fail_at_the_site() {
    if common::futhark_target().is_none() {
        println!(
            "skipped: irregular input on the futhark target (the build did not find `futhark`)"
        );
        return;
    }
    let m: Vec<Vec<i64>> = vec![vec![1, 2], vec![3]];
    let msg = common::failure(Target::Futhark, || {
        accelerate!(map(|row| reduce(addi, 0, row), m))
    });
    assert!(
        msg.contains("tests/futhark.rs:")
            && msg.contains("captured variable `m`")
            && msg.contains("not regular"),
        "{msg}"
    );
}

/// Sites whose element types the expression leaves open (`tests/open_types.rs`): with the number or
/// `bool` the captured `Vec`s hold, the entry point generated for it runs; with a tuple (no entry
/// point: the build cannot know the type) the site runs on the CPU, said once, with the same
/// result.
#[test]
fn open_element_types_call_the_entry_of_their_rust_type() {
    let m: Vec<Vec<i64>> = vec![vec![1, 2], vec![3, 4]];
    let r: Vec<i64> = on_futhark(1, || accelerate!(flatten(m)));
    assert_eq!(r, vec![1, 2, 3, 4]);
    let s: Vec<f32> = vec![0.5, 1.5, 2.5, 3.5, 4.5, 5.5];
    let r = on_futhark(1, || accelerate!(map(|i| get(s, i), create(5, |i| i))));
    assert_eq!(r, vec![0.5, 1.5, 2.5, 3.5, 4.5]);
    let flags: Vec<bool> = vec![true; 3];
    let r = on_futhark(1, || {
        accelerate!(map(|i| i * 2, create(length(flags), |i| i)))
    });
    assert_eq!(r, vec![0, 2, 4]);
    let small: Vec<i32> = vec![1, 2, 3];
    let r = on_futhark(1, || accelerate!(map(|p| p, reverse(small))));
    assert_eq!(r, vec![3, 2, 1]);
    let xs: Vec<f64> = vec![2.5, 1.0];
    let r = on_futhark(1, || accelerate!(reduce(|a, b| a, head(xs), xs)));
    assert_eq!(r, 2.5);
    let (a, b): (Vec<i64>, Vec<i64>) = (vec![1], vec![2, 3]);
    let r = on_futhark(1, || accelerate!(map(|p| p, concat(a, b))));
    assert_eq!(r, vec![1, 2, 3]);
    // Tuples: no entry point for them, so the CPU runs the site.
    let pairs: Vec<(i64, f64)> = vec![(1, 0.5), (2, 1.5)];
    let r = on_futhark(0, || accelerate!(map(|p| p, pairs)));
    assert_eq!(r, pairs);
    let tagged: Vec<(bool, f64)> = vec![(true, 1.0); 2];
    let r = on_futhark(0, || {
        accelerate!(map(|i| i * 2, create(length(tagged), |i| i)))
    });
    assert_eq!(r, vec![0, 2]);
}

/// Casts and float methods on the values where Futhark's own functions differ from Rust's: a
/// signed integer sign-extended before it becomes a wider unsigned one, `trunc`, `round` and
/// `fract` of NaN, ±0.0, the infinities and floats beyond 2^63 (Futhark's `trunc` goes through
/// an `i64`).
#[test]
fn casts_and_float_methods_on_edge_values_are_rust_s() {
    let bytes: Vec<i8> = vec![-128, -1, 0, 1, 127];
    let r = on_futhark(1, || {
        accelerate!(map(
            |x: i8| ((x as u32) as u64, x as u64, (x as u16) as u64),
            bytes
        ))
    });
    let want: Vec<(u64, u64, u64)> = bytes
        .iter()
        .map(|&x| ((x as u32) as u64, x as u64, (x as u16) as u64))
        .collect();
    assert_eq!(r, want);
    let edges: Vec<f64> = vec![
        f64::NAN,
        -0.0,
        0.0,
        -0.4,
        -0.5,
        2.5,
        1e300,
        -1e301,
        f64::INFINITY,
        f64::NEG_INFINITY,
        4503599627370495.5,
        9.3e18,
    ];
    let bits = |v: Vec<(f64, f64, f64)>| -> Vec<(u64, u64, u64)> {
        let canon = |x: f64| if x.is_nan() { u64::MAX } else { x.to_bits() };
        v.into_iter()
            .map(|(a, b, c)| (canon(a), canon(b), canon(c)))
            .collect()
    };
    let r = on_futhark(1, || {
        bits(accelerate!(map(
            |x: f64| (x.trunc(), x.round(), x.fract()),
            edges
        )))
    });
    let want = bits(
        edges
            .iter()
            .map(|x| (x.trunc(), x.round(), x.fract()))
            .collect(),
    );
    assert_eq!(r, want);
    let edges32: Vec<f32> = edges.iter().map(|&x| x as f32).collect();
    let r = on_futhark(1, || {
        let v: Vec<(f32, f32, f32)> =
            accelerate!(map(|x: f32| (x.trunc(), x.round(), x.fract()), edges32));
        bits(
            v.into_iter()
                .map(|(a, b, c)| (a as f64, b as f64, c as f64))
                .collect(),
        )
    });
    let want = bits(
        edges32
            .iter()
            .map(|x| (x.trunc() as f64, x.round() as f64, x.fract() as f64))
            .collect(),
    );
    assert_eq!(r, want);
}
