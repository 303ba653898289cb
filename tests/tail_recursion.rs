//! Tail recursion: a function inside an `accelerate!` that calls itself only as its last step is
//! a loop. Futhark-class sites accept it (Futhark runs it as a `loop … while`); the CPU targets
//! run it as a Rust `loop`, so a long loop does not grow the stack, in debug builds too. These
//! tests check that every target agrees with `seq`, that the Futhark library ran the sites
//! when the build made it, and that a failure inside the loop is the same on every CPU target.

mod common;

use common::{on_every_target, ran_on_futhark, same_failure};
use pmexpr::{accelerate, pmexpr};

/// The index of the last bound `<= x` (0 below the first): a binary search over captured bounds,
/// as Parboil tpacf finds the bin of a pair.
fn bins(bounds: &[i64], s: &[i64]) -> Vec<i64> {
    accelerate!({
        fn search(x: i64, lo: i64, hi: i64) -> i64 {
            if lo + 1 < hi {
                let k = (lo + hi) / 2;
                if x >= bounds[k] {
                    search(x, k, hi)
                } else {
                    search(x, lo, k)
                }
            } else {
                lo
            }
        }
        map(|x| search(x, 0, length(bounds)), s)
    })
}

#[test]
fn a_binary_search_agrees_everywhere_and_runs_on_futhark() {
    let bounds: Vec<i64> = (0..40).map(|k| k * k * 3).collect();
    let s: Vec<i64> = (-50..5000).step_by(7).collect();
    let got = on_every_target(|| bins(&bounds, &s));
    let want: Vec<i64> = s
        .iter()
        .map(|&x| (bounds.partition_point(|&b| b <= x) as i64 - 1).max(0))
        .collect();
    assert_eq!(got, want);
    ran_on_futhark(1, || bins(&bounds, &s));
}

/// Collatz steps: two tail calls in an `if` chain, both parameters changing, an unbounded count.
fn collatz(s: &[i64]) -> Vec<i64> {
    accelerate!({
        fn steps(n: i64, count: i64) -> i64 {
            if n <= 1 {
                count
            } else if n % 2 == 0 {
                steps(n / 2, count + 1)
            } else {
                steps(3 * n + 1, count + 1)
            }
        }
        map(|n| steps(n, 0), s)
    })
}

#[test]
fn collatz_steps_agree_everywhere() {
    let s: Vec<i64> = (1..3000).collect();
    let got = on_every_target(|| collatz(&s));
    let steps = |mut n: i64| {
        let mut c = 0;
        while n > 1 {
            n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
            c += 1;
        }
        c
    };
    assert_eq!(got, s.iter().map(|&n| steps(n)).collect::<Vec<_>>());
    assert_eq!(got[26], 111);
    ran_on_futhark(1, || collatz(&s));
}

/// A million iterations of one call: as recursion, each would take a stack frame (this test
/// binary is built without optimizations, which would remove them).
fn count_down(n: i64) -> Vec<(i64, f64)> {
    accelerate!({
        fn go(k: i64, acc: (i64, f64)) -> (i64, f64) {
            if k == 0 {
                acc
            } else {
                go(k - 1, (acc.0 + k % 3, acc.1 + 0.5))
            }
        }
        map(|m| go(m, (0, 0.0)), [n, n / 2])
    })
}

#[test]
fn a_long_loop_does_not_grow_the_stack() {
    let n = 1_000_000;
    let got = on_every_target(|| count_down(n));
    let want = |m: i64| ((1..=m).map(|k| k % 3).sum::<i64>(), m as f64 * 0.5);
    assert_eq!(got, [want(n), want(n / 2)]);
    ran_on_futhark(1, || count_down(n));
}

/// A sequence that the loop changes: `1..=n` built from the back, then summed. (On the CPU
/// targets a sequence parameter is a borrow, so this one stays a recursive function.)
fn upto_sums(s: &[i64]) -> Vec<i64> {
    accelerate!({
        fn upto(n: i64, acc: Vec<i64>) -> Vec<i64> {
            if n == 0 {
                acc
            } else {
                upto(n - 1, concat([n], acc))
            }
        }
        map(|n| reduce(addi, 0, upto(n, [])), s)
    })
}

#[test]
fn a_sequence_in_the_loop_agrees_everywhere() {
    let s: Vec<i64> = vec![0, 1, 2, 10, 57];
    let got = on_every_target(|| upto_sums(&s));
    assert_eq!(got, s.iter().map(|n| n * (n + 1) / 2).collect::<Vec<_>>());
    ran_on_futhark(1, || upto_sums(&s));
}

/// `n + 10 / d` for `d` from `n` down: the step with `d == 0` divides by zero.
fn tenths(s: &[i64]) -> Vec<i64> {
    accelerate!({
        fn add(n: i64, d: i64) -> i64 {
            if d < 0 { n } else { add(n + 10 / d, d - 1) }
        }
        map(|n| add(0, n), s)
    })
}

#[test]
fn a_failure_inside_the_loop_is_the_same_on_every_cpu_target() {
    same_failure("tests/tail_recursion.rs", "Division by zero", || {
        tenths(&[3, 5]);
    });
}

/// Euclid's algorithm as a `#[pmexpr]` function: an ordinary Rust function too.
#[pmexpr]
fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn gcds(xs: &[i64], ys: &[i64]) -> Vec<i64> {
    accelerate!(map2(gcd, xs, ys))
}

#[test]
fn a_tail_recursive_pmexpr_function_runs_on_futhark_sites() {
    let xs: Vec<i64> = (1..500).map(|i| i * 84).collect();
    let ys: Vec<i64> = (1..500).map(|i| (i * 35) % 997 + 1).collect();
    let got = on_every_target(|| gcds(&xs, &ys));
    let want: Vec<i64> = xs.iter().zip(&ys).map(|(&a, &b)| gcd(a, b)).collect();
    assert_eq!(got, want);
    assert_eq!(gcd(84, 35), 7);
    ran_on_futhark(1, || gcds(&xs, &ys));
}
