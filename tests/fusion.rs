//! Fusion in the Rust code generator: `foldl(f, acc, create(n, g))` runs as a counted loop with no
//! sequence built. The results and failures are those of the unfused program (the same fold over
//! a sequence built first), on every CPU target.

mod common;

use common::failure;
use pmexpr::{Target, Tensor, accelerate, with_target};

const TARGETS: [Target; 3] = [Target::Seq, Target::Cpu, Target::Debug];

#[test]
fn a_fold_over_create_is_the_fold_over_the_built_sequence() {
    let xs: Vec<f64> = (0..50).map(|i| (i as f64 * 0.37).sin() * 10.0).collect();
    let cs: Vec<f64> = (0..7).map(|i| i as f64 * 3.0 - 9.0).collect();
    let k = cs.len() as i64;
    // The argmin shape (`argmin_foldl_create`): fused (the `create` is foldl's argument) and
    // unfused (the sequence is a variable the fold reads twice, so it is built).
    let fused = || {
        accelerate!(map(
            |x| foldl(
                |best, c| {
                    let d = x - cs[c];
                    let e = x - cs[best];
                    if d * d < e * e { c } else { best }
                },
                0,
                create(k, |c| c)
            ),
            xs
        ))
    };
    let built = || {
        accelerate!(map(
            |x| {
                let idx = create(k, |c| c);
                foldl(
                    |best, c| {
                        let d = x - cs[c];
                        let e = x - cs[best];
                        if d * d < e * e { c } else { best }
                    },
                    length(idx) - length(idx),
                    idx,
                )
            },
            xs
        ))
    };
    let expected: Vec<i64> = xs
        .iter()
        .map(|&x| {
            (0..cs.len()).fold(0, |b, c| {
                if (x - cs[c]).powi(2) < (x - cs[b]).powi(2) {
                    c
                } else {
                    b
                }
            }) as i64
        })
        .collect();
    for t in TARGETS {
        assert_eq!(with_target(t, fused), expected, "{t:?}");
        assert_eq!(with_target(t, built), expected, "{t:?}");
    }
}

#[test]
fn the_fold_takes_elements_in_order_with_tuple_state() {
    // Not associative: the order of the elements shows. The state is a tuple, the elements
    // come from a closure over a captured value.
    let base = 3_i64;
    let run = || {
        accelerate!(
            backend = cpu,
            foldl(
                |(s, n), x| (s * 10 + x, n + 1),
                (0, 0),
                create(6, |i| (i + base) % 10)
            )
        )
    };
    for t in TARGETS {
        assert_eq!(with_target(t, run), (345678, 6), "{t:?}");
    }
    // An empty create folds nothing.
    let empty = || accelerate!(backend = cpu, foldl(|a, x| a + x, 42, create(0, |i| i)));
    for t in TARGETS {
        assert_eq!(with_target(t, empty), 42, "{t:?}");
    }
}

#[test]
fn a_negative_length_folds_nothing_as_rusts_empty_range() {
    let n = -3_i64;
    let run = || accelerate!(backend = cpu, foldl(|a, x| a + x, 7, create(n, |i| i)));
    let want = (0..n).fold(7, |a, x| a + x);
    for t in TARGETS {
        assert_eq!(with_target(t, run), want, "{t:?}");
    }
}

#[test]
fn an_element_that_fails_fails_the_fold() {
    let s = vec![1_i64, 2, 3];
    // Element 3 reads past the end of `s`: the fold fails there, as the built sequence would.
    let run = || accelerate!(backend = cpu, foldl(|a, x| a + x, 0, create(4, |i| s[i])));
    for t in TARGETS {
        let msg = failure(t, run);
        assert!(
            msg.starts_with("pmexpr: accelerate! at tests/fusion.rs:"),
            "{t:?}: {msg}"
        );
    }
    let fine = || accelerate!(backend = cpu, foldl(|a, x| a + x, 0, create(3, |i| s[i])));
    for t in TARGETS {
        assert_eq!(with_target(t, fine), 6, "{t:?}");
    }
}

#[test]
fn a_created_sequence_of_sequences_is_still_checked_in_debug_mode() {
    // Not fused: debug mode checks that the created rows are regular.
    let run = || {
        accelerate!(
            backend = cpu,
            foldl(|a, row| a + length(row), 0, create(3, |i| create(i, |j| j)))
        )
    };
    assert_eq!(with_target(Target::Seq, run), 3);
    assert_eq!(with_target(Target::Cpu, run), 3);
    let msg = failure(Target::Debug, run);
    assert!(msg.contains("Irregular sequence"), "{msg}");
}

#[test]
fn a_map_over_create_is_the_map_over_the_built_sequence() {
    let factor = 3_i64;
    let n = 1000_i64;
    let fused = || accelerate!(map(|x| x * factor + 1, create(n, |i| i * i % 17)));
    let expected: Vec<i64> = (0..n).map(|i| i * i % 17 * factor + 1).collect();
    for t in TARGETS {
        assert_eq!(with_target(t, fused), expected, "{t:?}");
    }
    // Tuples made by `create`, mapped to floats.
    let pairs = || {
        accelerate!(map(
            |(a, b)| a * 0.5 + b,
            create(4, |i| (int2float(i), 1.0))
        ))
    };
    for t in TARGETS {
        assert_eq!(with_target(t, pairs), vec![1.0, 1.5, 2.0, 2.5], "{t:?}");
    }
    // A negative count is Rust's empty `0..n`: nothing is made, nothing fails.
    let negative = -1_i64;
    let run = || accelerate!(map(|x| 10 / x, create(negative, |i| i)));
    let want: Vec<i64> = (0..negative).map(|x| 10 / x).collect();
    for t in TARGETS {
        assert_eq!(with_target(t, run), want, "{t:?}");
    }
}

#[test]
fn a_map_over_a_map_is_one_map() {
    let s: Vec<i64> = (0..500).collect();
    let pts: Vec<(f64, f64)> = (0..9).map(|i| (i as f64, 2.0 * i as f64)).collect();
    let run = || accelerate!(map(|x| x * 3, map(|y| y + 1, s)));
    let expected: Vec<i64> = s.iter().map(|y| (y + 1) * 3).collect();
    let norms = || accelerate!(map(|(a, b)| a + b, map(|(x, y)| (x * x, y * y), pts)));
    let expected_norms: Vec<f64> = pts.iter().map(|(x, y)| x * x + y * y).collect();
    for t in TARGETS {
        assert_eq!(with_target(t, run), expected, "{t:?}");
        assert_eq!(with_target(t, norms), expected_norms, "{t:?}");
    }
    // The inner function's failure is the map's failure.
    let d = vec![1_i64, 0, 2];
    let fails = || accelerate!(map(|x| x + 1, map(|y| 10 / y, d)));
    for t in TARGETS {
        let msg = failure(t, fails);
        assert!(msg.contains("Division by zero"), "{t:?}: {msg}");
    }
}

#[test]
fn a_reduce_over_create_is_the_reduce_over_the_built_sequence() {
    let w: Vec<i64> = (0..1000).map(|i| (i * 7919) % 101).collect();
    let n = w.len() as i64;
    let run = || accelerate!(reduce(|a, b| a + b, 0, create(n, |i| w[i] * i)));
    let want: i64 = w.iter().enumerate().map(|(i, x)| x * i as i64).sum();
    for t in TARGETS {
        assert_eq!(with_target(t, run), want, "{t:?}");
    }
    // An empty create reduces to the neutral element, and so does a negative one (Rust's
    // empty `0..n`).
    let zero = 0_i64;
    let empty = || accelerate!(reduce(|a, b| a + b, 5 - 5, create(zero, |i| i)));
    let neg = -2_i64;
    let negative = || accelerate!(reduce(|a, b| a + b, 0, create(neg, |i| i + 1)));
    for t in TARGETS {
        assert_eq!(with_target(t, empty), 0, "{t:?}");
        assert_eq!(
            with_target(t, negative),
            (0..neg).map(|i| i + 1).sum::<i64>(),
            "{t:?}"
        );
    }
    // Debug mode checks the operator's laws on the created elements.
    let broken = || accelerate!(reduce(|a, b| a - b, 0, create(n, |i| w[i])));
    let msg = failure(Target::Debug, broken);
    assert!(msg.contains("`reduce` assumes"), "{msg}");
}

#[test]
fn a_map2_over_maps_is_the_map2_over_the_built_sequences() {
    let a: Vec<f64> = (0..500).map(|i| i as f64 * 0.5).collect();
    let b: Vec<f64> = (0..500).map(|i| 100.0 - i as f64).collect();
    let left = || accelerate!(map2(|x, y| x * y, map(|p| p + 1.0, a), b));
    let right = || accelerate!(map2(|x, y| x - y, a, map(|q| q * 2.0, b)));
    let both = || accelerate!(map2(|x, y| x + y, map(|p| p * p, a), map(|q| -q, b)));
    let zip = |f: &dyn Fn(f64, f64) -> f64| -> Vec<f64> {
        a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()
    };
    for t in TARGETS {
        assert_eq!(with_target(t, left), zip(&|x, y| (x + 1.0) * y), "{t:?}");
        assert_eq!(with_target(t, right), zip(&|x, y| x - y * 2.0), "{t:?}");
        assert_eq!(with_target(t, both), zip(&|x, y| x * x - y), "{t:?}");
    }
    // Different lengths fail as map2 does.
    let short: Vec<f64> = vec![1.0, 2.0];
    let mismatch = || accelerate!(map2(|x, y| x + y, map(|p| p + 1.0, a), short));
    for t in TARGETS {
        let msg = failure(t, mismatch);
        assert!(
            msg.contains("map2 on sequences of different lengths (500 and 2)"),
            "{t:?}: {msg}"
        );
    }
}

/// A step function that returns the accumulator unchanged once a test of it holds (a bounded
/// `while`) lets the loop stop there: the results are those of the whole fold, and an element
/// that could fail is still computed.
#[test]
fn a_fold_whose_accumulator_settles_gives_the_whole_folds_result() {
    // Mandelbrot's escape count: the state is a tuple rebuilt from its fields.
    let ps: Vec<(f64, f64)> = (0..40)
        .map(|i| (i as f64 * 0.075 - 2.0, (i % 7) as f64 * 0.2 - 0.6))
        .collect();
    let maxit = 30_i64;
    let run = || {
        accelerate!(map(
            |p| foldl(
                |st, _i| {
                    let (zr, zi, n) = st;
                    if zr * zr + zi * zi > 4.0 {
                        (zr, zi, n)
                    } else {
                        (zr * zr - zi * zi + p.0, 2.0 * zr * zi + p.1, n + 1)
                    }
                },
                (0.0, 0.0, 0),
                create(maxit, |i| i)
            )
            .2,
            ps
        ))
    };
    let expected: Vec<i64> = ps
        .iter()
        .map(|&(cr, ci)| {
            let (mut zr, mut zi, mut n) = (0.0_f64, 0.0_f64, 0_i64);
            for _ in 0..maxit {
                if zr * zr + zi * zi <= 4.0 {
                    (zr, zi, n) = (zr * zr - zi * zi + cr, 2.0 * zr * zi + ci, n + 1);
                }
            }
            n
        })
        .collect();
    assert!(expected.iter().any(|&n| n < maxit) && expected.contains(&maxit));
    for t in TARGETS {
        assert_eq!(with_target(t, run), expected, "{t:?}");
    }
    // The accumulator in the `else` branch, over a sequence that exists.
    let xs: Vec<i64> = (1..=30).collect();
    let caps = vec![0_i64, 10, 100, 1000];
    let capped = || {
        accelerate!(map(
            |c| foldl(|a, x| if a < c { a + x } else { a }, 0, xs),
            caps
        ))
    };
    let want: Vec<i64> = (caps.iter())
        .map(|&c| xs.iter().fold(0, |a, &x| if a < c { a + x } else { a }))
        .collect();
    // `seq_loop_acc` with a test on a float.
    let n = 40_i64;
    let starts = vec![0.5, 1.0, 9.0];
    let grown = || {
        accelerate!(
            backend = cpu,
            map(
                |s| seq_loop_acc(s, n, |a, _i| if a > 8.0 { a } else { a * 1.5 }),
                starts
            )
        )
    };
    let g: Vec<f64> = (starts.iter())
        .map(|&s| (0..n).fold(s, |a: f64, _| if a > 8.0 { a } else { a * 1.5 }))
        .collect();
    for t in TARGETS {
        assert_eq!(with_target(t, capped), want, "{t:?}");
        assert_eq!(with_target(t, grown), g, "{t:?}");
    }
}

#[test]
fn a_fold_that_settles_still_fails_where_an_element_or_its_test_fails() {
    // Settled after four steps; element 7 divides by zero, and that failure is kept.
    let run = || {
        accelerate!(
            backend = cpu,
            foldl(
                |a, _x| if a > 3 { a } else { a + 1 },
                0,
                create(10, |i| 10 / (i - 7))
            )
        )
    };
    // The test reads past the end of `s` before the accumulator settles.
    let s = vec![0_i64, 0];
    let test_fails = || {
        accelerate!(
            backend = cpu,
            foldl(
                |a, _x| if s[a] > 0 { a } else { a + 1 },
                0,
                create(10, |i| i)
            )
        )
    };
    for t in TARGETS {
        let msg = failure(t, run);
        assert!(
            msg.starts_with("pmexpr: accelerate! at tests/fusion.rs:") && msg.contains("zero"),
            "{t:?}: {msg}"
        );
        let msg = failure(t, test_fails);
        assert!(
            msg.starts_with("pmexpr: accelerate! at tests/fusion.rs:") && msg.contains("index 2"),
            "{t:?}: {msg}"
        );
    }
}

/// The first marked position (`t[a] > 0.5`) at or after each start: `seq_loop_acc` stops once it
/// is found.
fn first_marked(t: &Tensor<f64>, starts: &[i64]) -> Vec<i64> {
    accelerate!(
        backend = cpu,
        map(
            |s| seq_loop_acc(s, 5, |a, _k| if tensor_get(t, [a]) > 0.5 {
                a
            } else {
                a + 1
            }),
            starts
        )
    )
}

#[test]
fn a_settled_test_may_read_a_tensor() {
    let t = Tensor::<f64>::from_vec(vec![0.0, 0.0, 1.0, 0.0, 1.0], &[5]);
    let starts = vec![0_i64, 3, 4];
    let first = || first_marked(&t, &starts);
    for target in TARGETS {
        assert_eq!(with_target(target, first), vec![2, 4, 4], "{target:?}");
    }
    // A start past the end: the test itself fails, at the site.
    let beyond = vec![5_i64];
    let fails = || first_marked(&t, &beyond);
    for target in TARGETS {
        let msg = failure(target, fails);
        assert!(
            msg.starts_with("pmexpr: accelerate! at tests/fusion.rs:"),
            "{target:?}: {msg}"
        );
    }
}
