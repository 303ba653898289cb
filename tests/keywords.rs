//! `scan`, `filter`, `scatter`, and `create` on its own: every target agrees with `seq`, and
//! `seq` with plain Rust — empty sequences, one element, and lengths that are not a multiple of
//! the thread count, below and above the length from which `cpu` runs them in parallel — fused
//! with the maps that produce and consume them or not; the runtime checks name the site.

mod common;

use common::{failure, on_every_target, same_failure};
use pmexpr::{Target, Tensor, accelerate};
use pmexpr_suite::Rng;

/// Lengths: empty, one, a few, and on both sides of `cpu`'s parallel threshold (4096), none a
/// multiple of a usual thread count.
const LENGTHS: [usize; 6] = [0, 1, 7, 4097, 10_007, 100_003];

fn data(n: usize) -> Vec<i64> {
    let mut rng = Rng::new(n as u64 + 3);
    (0..n).map(|_| rng.int(-1000, 1000)).collect()
}

/// The inclusive scan by plain Rust: what `scan` means.
fn scanned<T: Clone>(ne: T, xs: impl IntoIterator<Item = T>, f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = ne;
    xs.into_iter()
        .map(|x| {
            acc = f(acc.clone(), x);
            acc.clone()
        })
        .collect()
}

#[test]
fn scan_agrees_with_plain_rust() {
    for n in LENGTHS {
        let s = data(n);
        let sum = |a: i64, b: i64| a.wrapping_add(b);
        let got = on_every_target(|| -> Vec<i64> { accelerate!(scan(addi, 0, s)) });
        assert_eq!(got, scanned(0, s.iter().copied(), sum), "n={n}");
        // An operator that is associative but not commutative (the first non-zero element):
        // the chunks' carries must be combined in order.
        let first = on_every_target(|| -> Vec<i64> {
            accelerate!(scan(
                |a, b| if a == 0 { b } else { a },
                0,
                map(|x| x % 3, s)
            ))
        });
        let want = scanned(
            0,
            s.iter().map(|x| x % 3),
            |a, b| if a == 0 { b } else { a },
        );
        assert_eq!(first, want, "n={n}");
        // Floats that sum exactly in any order, and a tuple accumulator.
        let fs: Vec<f64> = s.iter().map(|&x| x as f64).collect();
        let got = on_every_target(|| -> Vec<f64> { accelerate!(scan(addf, 0.0, fs)) });
        assert_eq!(got, scanned(0.0, fs.iter().copied(), |a, b| a + b));
        let got = on_every_target(|| -> Vec<(i64, i64)> {
            accelerate!(scan(
                |p, q| (p.0 + q.0, if p.1 > q.1 { p.1 } else { q.1 }),
                (0, i64::MIN),
                map(|x| (x, x), s)
            ))
        });
        let want = scanned((0, i64::MIN), s.iter().map(|&x| (x, x)), |p, q| {
            (p.0 + q.0, p.1.max(q.1))
        });
        assert_eq!(got, want);
    }
}

#[test]
fn scan_fuses_the_maps_that_produce_and_consume_it() {
    for n in LENGTHS {
        let s = data(n);
        let k = n as i64;
        let sq = |x: i64| x * x + 1;
        // A map producing the elements (cheap: read twice), and one consuming the results.
        let got = on_every_target(|| -> Vec<i64> {
            accelerate!(map(|y| y * 2 - 1, scan(addi, 0, map(|x| x * x + 1, s))))
        });
        let want: Vec<i64> = scanned(0, s.iter().map(|&x| sq(x)), |a, b| a + b)
            .into_iter()
            .map(|y| y * 2 - 1)
            .collect();
        assert_eq!(got, want, "n={n}");
        // A costly map (a loop per element: made once, stored), and `create` as the source.
        let got = on_every_target(|| -> Vec<i64> {
            accelerate!(scan(
                addi,
                0,
                map(
                    |x| foldl(|a, j| (a * 31 + j) % 1000003, x, create(20, |j| j)),
                    s
                )
            ))
        });
        let heavy = |x: i64| (0..20).fold(x, |a, j| (a * 31 + j) % 1000003);
        assert_eq!(got, scanned(0, s.iter().map(|&x| heavy(x)), |a, b| a + b));
        let got = on_every_target(|| -> Vec<i64> {
            accelerate!(scan(addi, 0, create(k, |i| i % 7 - 3)))
        });
        assert_eq!(got, scanned(0, (0..k).map(|i| i % 7 - 3), |a, b| a + b));
        // Consumed by a map into another type.
        let got =
            on_every_target(|| -> Vec<bool> { accelerate!(map(|y| y > 0, scan(addi, 0, s))) });
        let want: Vec<bool> = scanned(0, s.iter().copied(), |a, b| a + b)
            .into_iter()
            .map(|y| y > 0)
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn filter_agrees_with_plain_rust_and_fuses() {
    for n in LENGTHS {
        let s = data(n);
        let got = on_every_target(|| -> Vec<i64> { accelerate!(filter(|x| x % 3 == 0, s)) });
        let want: Vec<i64> = s.iter().copied().filter(|x| x % 3 == 0).collect();
        assert_eq!(got, want, "n={n}");
        // Maps before and after, and a reduction of the filtered elements: no sequence built.
        let got = on_every_target(|| -> Vec<i64> {
            accelerate!(map(|y| y + 1, filter(|y| y > 100, map(|x| x * 2, s))))
        });
        let want: Vec<i64> = (s.iter().map(|x| x * 2))
            .filter(|&y| y > 100)
            .map(|y| y + 1)
            .collect();
        assert_eq!(got, want);
        let got = on_every_target(|| -> i64 {
            accelerate!(reduce(addi, 0, filter(|y| y < 0, map(|x| x * 3, s))))
        });
        assert_eq!(got, s.iter().map(|x| x * 3).filter(|&y| y < 0).sum::<i64>());
        // A costly predicate (collected per chunk), tuples, `create`, and `bool`s.
        let got = on_every_target(|| -> Vec<(i64, f64)> {
            accelerate!(filter(
                |p| foldl(|a, j| a + p.0 * j, 0, create(5, |j| j)) % 2 == 0,
                map(|x| (x, int2float(x) * 0.5), s)
            ))
        });
        let want: Vec<(i64, f64)> = (s.iter().map(|&x| (x, x as f64 * 0.5)))
            .filter(|p| (0..5).map(|j| p.0 * j).sum::<i64>() % 2 == 0)
            .collect();
        assert_eq!(got, want);
        let k = n as i64;
        let got = on_every_target(|| -> Vec<i64> {
            accelerate!(filter(|i| i % 5 == 1, create(k, |i| i * i)))
        });
        let want: Vec<i64> = (0..k).map(|i| i * i).filter(|i| i % 5 == 1).collect();
        assert_eq!(got, want);
        let got =
            on_every_target(|| -> Vec<bool> { accelerate!(filter(|b| b, map(|x| x > 0, s))) });
        assert_eq!(got.len(), s.iter().filter(|&&x| x > 0).count());
        // A scan of the filtered elements.
        let got = on_every_target(|| -> Vec<i64> {
            accelerate!(scan(addi, 0, filter(|x| x % 2 != 0, s)))
        });
        let want = scanned(0, s.iter().copied().filter(|x| x % 2 != 0), |a, b| a + b);
        assert_eq!(got, want);
    }
}

/// `scatter` by plain Rust: what it means (a later equal index wins, as on `seq`).
fn scattered<T: Clone>(dest: &[T], is: &[i64], vs: &[T]) -> Vec<T> {
    let mut out = dest.to_vec();
    for (&i, v) in is.iter().zip(vs) {
        if (0..out.len() as i64).contains(&i) {
            out[i as usize] = v.clone();
        }
    }
    out
}

/// Distinct indices into `0..k` (for `k >= n`), with some outside it on both sides.
fn indices(n: usize, k: i64) -> Vec<i64> {
    let mut rng = Rng::new(n as u64 + 11);
    let mut perm: Vec<i64> = (0..k).collect();
    for i in (1..perm.len()).rev() {
        perm.swap(i, rng.int(0, i as i64 + 1) as usize);
    }
    (0..n)
        .map(|j| match j % 4 {
            3 => -1 - j as i64,
            2 => k + j as i64,
            _ => perm[j],
        })
        .collect()
}

#[test]
fn scatter_agrees_with_plain_rust() {
    for n in LENGTHS {
        // Each destination element at most once.
        let k = n as i64;
        let dest: Vec<i64> = (0..k).map(|i| -i).collect();
        let is = indices(n, k);
        let vs = data(n);
        let got = on_every_target(|| -> Vec<i64> { accelerate!(scatter(dest, is, vs)) });
        assert_eq!(got, scattered(&dest, &is, &vs), "n={n}");
        // Indices and values made by `map` and `create` (read in place), into a fresh
        // destination, of floats and of tuples (written in order on `cpu`).
        let got = on_every_target(|| -> Vec<f64> {
            accelerate!(scatter(
                create(k, |_| 0.5),
                map(|i| i, is),
                create(k, |j| int2float(j) * 2.0)
            ))
        });
        let twice: Vec<f64> = (0..k).map(|j| j as f64 * 2.0).collect();
        assert_eq!(got, scattered(&vec![0.5; n], &is, &twice));
        let pairs: Vec<(i64, bool)> = vs.iter().map(|&v| (v, v > 0)).collect();
        let got = on_every_target(|| -> Vec<(i64, bool)> {
            accelerate!(scatter(
                map(|d| (d, false), dest),
                is,
                map(|v| (v, v > 0), vs)
            ))
        });
        let base: Vec<(i64, bool)> = dest.iter().map(|&d| (d, false)).collect();
        assert_eq!(got, scattered(&base, &is, &pairs));
    }
}

/// One pass of a radix sort by the bit `b` (PMExpr has no bit operators: `x / 2^b % 2` of
/// non-negative numbers): the elements whose bit is 0, then those whose bit is 1, each in order —
/// `map`, `scan` and `scatter`.
#[test]
fn a_radix_sort_pass_is_stable_partition_by_a_bit() {
    for n in LENGTHS {
        let xs: Vec<i64> = data(n).into_iter().map(|x| x + 1000).collect();
        for b in [0_i64, 3] {
            let (k, w) = (n as i64, 1_i64 << b);
            let got = on_every_target(|| -> Vec<i64> {
                accelerate!({
                    let bits = map(|x| x / w % 2, xs);
                    let ones = scan(addi, 0, bits);
                    let zeros = k - (if k > 0 { ones[k - 1] } else { 0 });
                    let is = create(k, |i| {
                        if bits[i] == 0 {
                            i - ones[i]
                        } else {
                            zeros + ones[i] - 1
                        }
                    });
                    scatter(xs, is, xs)
                })
            });
            let mut want: Vec<i64> = xs.iter().copied().filter(|x| (x >> b) & 1 == 0).collect();
            want.extend(xs.iter().copied().filter(|x| (x >> b) & 1 == 1));
            assert_eq!(got, want, "n={n} b={b}");
        }
    }
}

#[test]
fn create_alone_is_a_futhark_class_keyword() {
    for n in [0_i64, 1, 5, 10_001] {
        let got = on_every_target(|| -> Vec<i64> { accelerate!(create(n, |i| i * i - 3)) });
        assert_eq!(got, (0..n).map(|i| i * i - 3).collect::<Vec<_>>());
        let got = on_every_target(|| -> Vec<f64> { accelerate!([0.25; n]) });
        assert_eq!(got, vec![0.25; n as usize]);
    }
}

#[test]
fn scatter_checks_the_lengths_at_the_site() {
    let (dest, is, vs) = (vec![0_i64; 4], vec![0_i64, 1, 2], vec![5_i64, 6]);
    same_failure(
        "tests/keywords.rs",
        "scatter with 3 indices but 2 values (the sequences must have the same length)",
        || {
            let _: Vec<i64> = accelerate!(scatter(dest, is, vs));
        },
    );
    // Also when `cpu` would write them in parallel.
    let big: Vec<i64> = (0..10_000).collect();
    let fewer = vec![1_i64; 9_999];
    same_failure(
        "tests/keywords.rs",
        "scatter with 10000 indices but 9999 values",
        || {
            let _: Vec<i64> = accelerate!(scatter(big, big, fewer));
        },
    );
}

#[test]
fn debug_mode_reports_what_the_parallel_targets_assume_at_the_site() {
    let s: Vec<i64> = (1..=10).collect();
    // A non-associative operator (`subi` has no neutral element either: the neutral check
    // comes first on the elements, so a lawful neutral element shows the associativity check).
    let sub = || -> Vec<i64> { accelerate!(scan(subi, 0, s)) };
    let msg = failure(Target::Debug, sub);
    assert!(
        msg.starts_with("pmexpr: accelerate! at tests/keywords.rs:")
            && msg.contains("`scan` assumes that 0 is a neutral element of `subi`"),
        "{msg}"
    );
    let ne_ok = || -> Vec<i64> {
        accelerate!(scan(
            |a, b| if a == 0 {
                b
            } else if b == 0 {
                a
            } else {
                a + 2 * b
            },
            0,
            s
        ))
    };
    let msg = failure(Target::Debug, ne_ok);
    assert!(
        msg.contains("`scan` assumes that the closure is associative, but it is not"),
        "{msg}"
    );
    // A wrong neutral element.
    let one = || -> Vec<i64> { accelerate!(scan(addi, 1, s)) };
    let msg = failure(Target::Debug, one);
    assert!(
        msg.contains(
            "`scan` assumes that 1 is a neutral element of `addi`, but it is not for element 0"
        ),
        "{msg}"
    );
    // The other targets run them as written (the sequential result on `seq`).
    assert_eq!(pmexpr::with_target(Target::Seq, one)[0], 2);
    // Two equal indices in a `scatter` (outside the destination, they are skipped: no conflict).
    let (dest, is, vs) = (vec![0_i64; 5], vec![4_i64, 1, 9, 4], vec![1_i64, 2, 3, 4]);
    let dup = || -> Vec<i64> { accelerate!(scatter(dest, is, vs)) };
    let msg = failure(Target::Debug, dup);
    assert!(
        msg.starts_with("pmexpr: accelerate! at tests/keywords.rs:")
            && msg.contains(
                "write conflict in `scatter`: positions 0 and 3 of the indices both write element 4 of the destination"
            ),
        "{msg}"
    );
    assert_eq!(pmexpr::with_target(Target::Seq, dup), vec![0, 2, 0, 0, 4]);
    let skipped = vec![9_i64, 1, 9, 4];
    let fine = || -> Vec<i64> { accelerate!(scatter(dest, skipped, vs)) };
    assert_eq!(
        pmexpr::with_target(Target::Debug, fine),
        vec![0, 2, 0, 0, 4]
    );
}

/// Every count means Rust's `0..n`: a negative one is an empty range, so the sequences that
/// `create` and `[x; n]` make are empty and `par_loop`, `seq_loop` and `seq_loop_acc` run zero
/// times, on every target, as plain Rust's `(0..n).map(f).collect()` and `for i in 0..n`.
#[test]
fn a_negative_count_is_an_empty_range_on_every_target() {
    for n in [i64::MIN, -3, -1, 0, 4] {
        let got = on_every_target(|| -> Vec<i64> { accelerate!(create(n, |i| 10 / (i + 1))) });
        assert_eq!(
            got,
            (0..n).map(|i| 10 / (i + 1)).collect::<Vec<_>>(),
            "n = {n}"
        );
        let (a, b, len) = on_every_target(|| -> (Vec<f64>, Vec<i64>, i64) {
            accelerate!(([0.25; n], vec![7; n], length(create(n, |i| i))))
        });
        let want = (0..n).count();
        assert_eq!(
            (a.len(), b.len(), len as usize),
            (want, want, want),
            "n = {n}"
        );
        assert!(a.iter().all(|&x| x == 0.25) && b.iter().all(|&x| x == 7));
        // Consumers of a `create` (fused or not) see no element.
        let folded = on_every_target(|| -> (i64, i64, Vec<i64>) {
            accelerate!((
                reduce(|x, y| x + y, 0, map(|x| x * 2, create(n, |i| i))),
                foldl(|acc, x| acc * 3 + x, 1, create(n, |i| i)),
                filter(|x| x % 2 == 0, create(n, |i| i)),
            ))
        });
        assert_eq!(
            folded,
            (
                (0..n).map(|x| x * 2).sum(),
                (0..n).fold(1, |acc, x| acc * 3 + x),
                (0..n).filter(|x| x % 2 == 0).collect()
            ),
            "n = {n}"
        );
        let acc = on_every_target(|| -> i64 {
            accelerate!(backend = cpu, seq_loop_acc(5, n, |a, i| a + i))
        });
        assert_eq!(acc, (0..n).fold(5, |a, i| a + i), "n = {n}");
    }
    // Another integer type of count: the same rule.
    for m in [i32::MIN, -2_i32, 3] {
        let got = on_every_target(|| -> Vec<i32> { accelerate!(create(m, |k| k * 3)) });
        assert_eq!(got, (0..m).map(|k| k * 3).collect::<Vec<_>>(), "m = {m}");
    }
    // Loops over tensors run zero times (a CUDA-class site: its kernel and its host code).
    for n in [-5_i64, 0, 3] {
        let written = on_every_target(|| {
            let t = Tensor::<i64>::zeros(&[3]);
            let u = Tensor::<i64>::zeros(&[3]);
            accelerate!({
                par_loop(n, |i| tensor_set(t, [i], i + 1));
                seq_loop(n, |i| tensor_set(u, [i], n - i));
            });
            (t.to_vec(), u.to_vec())
        });
        let mut want = (vec![0_i64; 3], vec![0_i64; 3]);
        for i in 0..n {
            want.0[i as usize] = i + 1;
        }
        for i in 0..n {
            want.1[i as usize] = n - i;
        }
        assert_eq!(written, want, "n = {n}");
    }
}
