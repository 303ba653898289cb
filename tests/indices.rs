//! Counts and indices of any integer type: `s[i]`, `get`, `set`, `subsequence`,
//! `tensor_get` and `tensor_set` take an index of any integer type, as Rust's indexing takes a
//! `usize`; `create`, `par_loop`, `seq_loop` and `seq_loop_acc` take a count of any integer type,
//! and their loop variable has the count's type, as in Rust's `for i in 0..n`. An index that
//! nothing fixes is an `i64`. `s.len()` is Rust's length, an integer of the type its context
//! needs (`i64` when nothing fixes it). Each against plain Rust, on every target (the `par_loop`
//! sites run as CUDA kernels, on the emulator where there is no GPU); out-of-range and negative
//! indices fail at the site.

mod common;

use common::{on_every_target, same_failure, wraps_on_every_target};
use pmexpr::{Tensor, accelerate};

#[test]
fn sequences_are_indexed_by_i32_and_i64() {
    let s: Vec<i64> = (0..50).map(|x| x * x - 7).collect();
    let is32: Vec<i32> = vec![0, 3, 49, 17, 3];
    let is64: Vec<i64> = is32.iter().map(|&i| i as i64).collect();
    let want: Vec<i64> = is32.iter().map(|&i| s[i as usize]).collect();
    let by32: Vec<i64> = on_every_target(|| accelerate!(map(|i| s[i], is32)));
    assert_eq!(by32, want);
    let by32: Vec<i64> = on_every_target(|| accelerate!(map(|i| get(s, i) + 1, is32)));
    assert_eq!(by32, want.iter().map(|x| x + 1).collect::<Vec<_>>());
    let by64: Vec<i64> = on_every_target(|| accelerate!(map(|i| s[i], is64)));
    assert_eq!(by64, want);
}

#[test]
fn create_gives_indices_of_the_counts_type() {
    let n: i32 = 6;
    let ks: Vec<i32> = on_every_target(|| accelerate!(create(n, |k| k)));
    assert_eq!(ks, (0..n).collect::<Vec<i32>>());
    // The index computes in `i32` (wrapping as `i32` does) and indexes in any position.
    let s: Vec<f64> = vec![0.5, 1.5, 2.5, 3.5, 4.5, 5.5];
    let r: Vec<f64> = on_every_target(|| accelerate!(create(n, |k| s[n - 1 - k] * 2.0)));
    assert_eq!(r, (0..6).map(|k| s[5 - k] * 2.0).collect::<Vec<_>>());
    let big: Vec<i32> = wraps_on_every_target(|| accelerate!(create(n, |k| k + 2147483645)));
    assert_eq!(
        big,
        (0..n)
            .map(|k| k.wrapping_add(2147483645))
            .collect::<Vec<_>>()
    );
    // A negative count is Rust's empty `0..m`, as an `i64` one is.
    let m: i32 = -2;
    let empty: Vec<i32> = on_every_target(|| accelerate!(create(m, |k| k * 3)));
    assert_eq!(empty, (0..m).map(|k| k * 3).collect::<Vec<_>>());
}

#[test]
fn par_loop_over_an_i32_count_with_i32_tensor_indices() {
    let n: i32 = 5;
    let w: i32 = 3;
    let s: Vec<i64> = vec![10, 20, 30, 40, 50];
    let out = on_every_target(|| {
        let t = Tensor::<i64>::zeros(&[5, 3]);
        accelerate!(par_loop(n, |i| {
            let j = i - i / w * w;
            tensor_set(t, [i, j], s[i] + (i as i64));
            tensor_set(t, [i, w - 1 - j], -s[n - 1 - i])
        }));
        t.to_vec()
    });
    let mut want = vec![0_i64; 15];
    for i in 0..5_i32 {
        let j = i % 3;
        want[(i * 3 + j) as usize] = s[i as usize] + i as i64;
        want[(i * 3 + 2 - j) as usize] = -s[(4 - i) as usize];
    }
    assert_eq!(out, want);
}

#[test]
fn sequential_loops_over_i32_counts() {
    let n: i32 = 4;
    let k: i32 = 7;
    let src = Tensor::<i64>::from_vec((0..28).collect(), &[4, 7]);
    let out = on_every_target(|| {
        let t = Tensor::<i64>::zeros(&[4]);
        let u = Tensor::<i32>::zeros(&[4, 7]);
        accelerate!(par_loop(n, |r| {
            // The loop variables are `i32`s: `j * j` wraps as `i32`, and `u` holds `i32`s.
            tensor_set(
                t,
                [r],
                seq_loop_acc(0, k, |a, j| a + tensor_get(src, [r, j]) * (j as i64)),
            );
            seq_loop(k, |j| tensor_set(u, [r, j], j * j + r))
        }));
        (t.to_vec(), u.to_vec())
    });
    let sums: Vec<i64> = (0..4)
        .map(|r| (0..7).map(|j| (r * 7 + j) * j).sum())
        .collect();
    let squares: Vec<i32> = (0..4)
        .flat_map(|r| (0..7).map(move |j| j * j + r))
        .collect();
    assert_eq!(out, (sums, squares));
}

#[test]
fn set_and_subsequence_take_i32_indices() {
    let s: Vec<i64> = vec![1, 2, 3, 4, 5, 6];
    let i: i32 = 2;
    let len: i32 = 3;
    let r: Vec<i64> = on_every_target(|| accelerate!(map(|x| x * 10, set(s, i, 0))));
    assert_eq!(r, vec![10, 20, 0, 40, 50, 60]);
    let r: Vec<i64> = on_every_target(|| accelerate!(map(|x| x + 1, subsequence(s, i, len))));
    assert_eq!(r, vec![4, 5, 6]);
}

#[test]
fn out_of_range_and_negative_i32_indices_fail_at_the_site() {
    let s: Vec<i64> = vec![1, 2, 3];
    let past: Vec<i32> = vec![0, 3];
    same_failure(
        "tests/indices.rs",
        "Out of bounds access in sequence: index 3 for a sequence of length 3",
        || {
            let _: Vec<i64> = accelerate!(map(|i| s[i], past));
        },
    );
    let negative: Vec<i32> = vec![-1];
    same_failure(
        "tests/indices.rs",
        "Negative index used to access sequence: -1",
        || {
            let _: Vec<i64> = accelerate!(map(|i| s[i], negative));
        },
    );
    let t = Tensor::<i64>::zeros(&[2, 2]);
    let n: i32 = 3;
    same_failure("tests/indices.rs", "index [2, 0]", || {
        accelerate!(par_loop(n, |i| tensor_set(t, [i, 0], 1)));
    });
    let at: i32 = -1;
    same_failure("tests/indices.rs", "-1", || {
        let _: Vec<i64> = accelerate!(map(|x| x, set(s, at, 0)));
    });
}

#[test]
fn len_is_rusts_usize() {
    let rows: Vec<Vec<f64>> = vec![vec![1.0, 2.0]; 3];
    let lens: Vec<usize> = on_every_target(|| accelerate!(map(|r| r.len() * 10, rows)));
    assert_eq!(lens, vec![20; 3]);
    // Compared with a `usize`, converted where it is compared with another type, as in Rust.
    let s: Vec<i64> = vec![5, 6, 7];
    let is: Vec<i32> = vec![0, 2, 3, 9];
    let inside: Vec<bool> = on_every_target(|| accelerate!(map(|i| (i as usize) < s.len(), is)));
    assert_eq!(inside, vec![true, true, false, false]);
    let wide: Vec<bool> = on_every_target(|| accelerate!(map(|i| i < s.len() as i32, is)));
    assert_eq!(wide, inside);
    // A count: the last element, and the positions of a sequence.
    let last: Vec<i64> = on_every_target(|| accelerate!(map(|r| s[s.len() - 1] + r, s)));
    assert_eq!(last, vec![12, 13, 14]);
    let rev: Vec<i64> = on_every_target(|| accelerate!(create(s.len(), |k| s[s.len() - 1 - k])));
    assert_eq!(rev, vec![7, 6, 5]);
    // PMExpr's `length` stays an `i64`.
    let l: Vec<i64> = on_every_target(|| accelerate!(map(|x| x - length(s), s)));
    assert_eq!(l, vec![2, 3, 4]);
}

#[test]
fn a_for_loop_counts_in_its_bounds_type() {
    let s: Vec<i64> = vec![3, 1, 4, 1, 5, 9, 2, 6];
    let n: i32 = 8;
    let ks: Vec<i64> = vec![1, 2, 3];
    let r: Vec<i64> = on_every_target(|| {
        accelerate!(map(
            |k| {
                let mut acc = 0;
                for i in 0..n {
                    acc += s[i] * k;
                }
                acc
            },
            ks
        ))
    });
    let total: i64 = s.iter().sum();
    assert_eq!(r, vec![total, 2 * total, 3 * total]);
}
