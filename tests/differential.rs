//! Differential tests: every expression runs on `seq` (the semantics), `cpu` (rayon) and debug
//! mode, and all three must agree — integers exactly, floats within a relative 1e-9 (a parallel
//! `reduce` adds in a different order). Many also check the value against plain Rust.

mod common;

use pmexpr::{Target, Tensor, accelerate, with_target};
use pmexpr_suite::Rng;

/// Approximate equality for results (floats within a relative 1e-9).
trait Close {
    fn close(&self, other: &Self) -> bool;
}

impl Close for i64 {
    fn close(&self, o: &Self) -> bool {
        self == o
    }
}
impl Close for bool {
    fn close(&self, o: &Self) -> bool {
        self == o
    }
}
impl Close for () {
    fn close(&self, _: &Self) -> bool {
        true
    }
}
impl Close for f64 {
    fn close(&self, o: &Self) -> bool {
        self == o || (self - o).abs() <= 1e-9 * self.abs().max(o.abs()).max(1.0)
    }
}
impl<T: Close> Close for Vec<T> {
    fn close(&self, o: &Self) -> bool {
        self.len() == o.len() && self.iter().zip(o).all(|(a, b)| a.close(b))
    }
}
impl<T: pmexpr::Element + Close> Close for Tensor<T> {
    fn close(&self, o: &Self) -> bool {
        self.shape() == o.shape() && self.to_vec().close(&o.to_vec())
    }
}
macro_rules! tuple_close {
    ($($n:tt $t:ident),+) => {
        impl<$($t: Close),+> Close for ($($t,)+) {
            fn close(&self, o: &Self) -> bool { true $(&& self.$n.close(&o.$n))+ }
        }
    };
}
tuple_close!(0 A);
tuple_close!(0 A, 1 B);
tuple_close!(0 A, 1 B, 2 C);
tuple_close!(0 A, 1 B, 2 C, 3 D);
tuple_close!(0 A, 1 B, 2 C, 3 D, 4 E);

/// Runs `f` on every CPU target and checks that they agree; returns the sequential result.
fn on_all_targets<R: Close + std::fmt::Debug>(f: impl Fn() -> R) -> R {
    let seq = with_target(Target::Seq, &f);
    let cpu = with_target(Target::Cpu, &f);
    let dbg = with_target(Target::Debug, &f);
    assert!(
        seq.close(&cpu),
        "seq and cpu differ:\n seq: {seq:?}\n cpu: {cpu:?}"
    );
    assert!(
        seq.close(&dbg),
        "seq and debug differ:\n seq: {seq:?}\n debug: {dbg:?}"
    );
    // CUDA-class sites run their kernels there, Futhark-class sites their Futhark library; the
    // others run on the CPU.
    for t in common::accelerated_targets() {
        let r = with_target(t, &f);
        assert!(
            seq.close(&r),
            "seq and {t} differ:\n seq: {seq:?}\n {t}: {r:?}"
        );
    }
    seq
}

fn ints(n: usize, seed: u64) -> Vec<i64> {
    Rng::new(seed).ints(n, -1000, 1000)
}

fn floats(n: usize, seed: u64) -> Vec<f64> {
    Rng::new(seed).floats(n)
}

#[test]
fn map_reduce_of_listing_2() {
    let s = ints(10_000, 1);
    let c = 7_i64;
    let r = on_all_targets(|| {
        accelerate!({
            let g = |x| addi(x, 1);
            let f = |x| muli(c, g(x));
            let s2 = map(f, s);
            reduce(addi, 0, s2)
        })
    });
    assert_eq!(r, s.iter().map(|x| c * (x + 1)).sum::<i64>());
}

#[test]
fn fused_map_reduce() {
    let s = ints(100_000, 2);
    let r = on_all_targets(|| accelerate!(reduce(addi, 0, map(|x| x * x % 7, s))));
    assert_eq!(r, s.iter().map(|x| x * x % 7).sum::<i64>());
}

#[test]
fn map2_on_floats() {
    let (a, b) = (floats(5000, 3), floats(5000, 4));
    let r = on_all_targets(|| accelerate!(map2(addf, a, b)));
    assert_eq!(r, a.iter().zip(&b).map(|(x, y)| x + y).collect::<Vec<_>>());
}

#[test]
fn reduce_of_floats_with_a_lambda() {
    let a = floats(20_000, 5);
    let r = on_all_targets(|| accelerate!(reduce(|x, y| x + y, 0.0, map(|x| sqrt(x) * 2.0, a))));
    assert!(r.close(&a.iter().map(|x| x.sqrt() * 2.0).sum::<f64>()));
}

#[test]
fn reduce_max_with_if() {
    let s = ints(3000, 6);
    let r = on_all_targets(|| accelerate!(reduce(|a, b| if a > b { a } else { b }, -1_000_000, s)));
    assert_eq!(r, *s.iter().max().unwrap());
}

#[test]
fn flatten_and_nested_sequences() {
    let m: Vec<Vec<i64>> = (0..50).map(|i| ints(20, i)).collect();
    let r = on_all_targets(|| accelerate!(flatten(map(|row| map(|x| x + 1, row), m))));
    assert_eq!(r, m.iter().flatten().map(|x| x + 1).collect::<Vec<_>>());
}

#[test]
fn row_sums_of_a_matrix() {
    let m: Vec<Vec<f64>> = (0..64).map(|i| floats(32, i)).collect();
    let r = on_all_targets(|| accelerate!(map(|row| reduce(addf, 0.0, row), m)));
    let want: Vec<f64> = m.iter().map(|r| r.iter().sum()).collect();
    assert!(r.close(&want));
}

#[test]
fn matrix_multiplication() {
    let n = 12;
    let a: Vec<Vec<i64>> = (0..n).map(|i| ints(n, 100 + i as u64)).collect();
    let b: Vec<Vec<i64>> = (0..n).map(|i| ints(n, 200 + i as u64)).collect();
    let r = on_all_targets(|| {
        accelerate!({
            let n = length(b);
            let col = |j| map(|row| get(row, j), b);
            map(
                |row| create(n, |j| reduce(addi, 0, map2(muli, row, col(j)))),
                a,
            )
        })
    });
    let want: Vec<Vec<i64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| (0..n).map(|k| a[i][k] * b[k][j]).sum())
                .collect()
        })
        .collect();
    assert_eq!(r, want);
}

#[test]
fn sequence_intrinsics() {
    let s = ints(40, 7);
    let r = on_all_targets(|| {
        accelerate!(
            backend = cpu,
            (
                length(s),
                concat(reverse(s), [head(s), get(s, 3)]),
                subsequence(tail(s), 2, 5),
                (null(s), null(subsequence(s, 100, 3)), set(s, 0, 42)),
            )
        )
    });
    let mut rev: Vec<i64> = s.iter().rev().copied().collect();
    rev.extend([s[0], s[3]]);
    let mut set = s.clone();
    set[0] = 42;
    assert_eq!(r, (40, rev, s[3..8].to_vec(), (false, true, set)));
}

#[test]
fn create_and_foldl() {
    let n = 200_i64;
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let sq = create(n, |i| i * i);
            (
                foldl(|acc, x| acc * 3 % 1_000_003 + x, 1, sq),
                foldl(subi, 0, sq),
                sq,
            )
        })
    });
    let sq: Vec<i64> = (0..n).map(|i| i * i).collect();
    let f1 = sq.iter().fold(1, |acc, x| acc * 3 % 1_000_003 + x);
    let f2 = sq.iter().fold(0, |acc, x| acc - x);
    assert_eq!(r, (f1, f2, sq));
}

#[test]
fn every_arithmetic_intrinsic() {
    let x = 17_i64;
    let y = -5_i64;
    let r = on_all_targets(|| {
        accelerate!(
            backend = cpu,
            (
                (addi(x, y), subi(x, y), muli(x, y), divi(x, y)),
                (modi(x, y), negi(x), x / y, x % y),
                (eqi(x, y), neqi(x, y), lti(x, y), gti(x, y)),
                (leqi(x, x), geqi(y, x), x != y, -x),
            )
        )
    });
    assert_eq!(
        r,
        (
            (12, 22, -85, -3),
            (2, -17, -3, 2),
            (false, true, false, true),
            (true, false, true, -17)
        )
    );
}

#[test]
fn every_float_intrinsic() {
    let a = 2.25_f64;
    let b = -0.5_f64;
    let r = on_all_targets(|| {
        accelerate!(
            backend = cpu,
            (
                (addf(a, b), subf(a, b), mulf(a, b), divf(a, b)),
                (negf(a), sqrt(a), exp(b), log(a)),
                (pow(a, b), sin(b), cos(b), int2float(floorfi(a))),
                (
                    eqf(a, a),
                    neqf(a, b),
                    ltf(a, b),
                    (gtf(a, b), leqf(b, a), geqf(b, a), floorfi(b))
                ),
            )
        )
    });
    let want = (
        (a + b, a - b, a * b, a / b),
        (-a, a.sqrt(), b.exp(), a.ln()),
        (a.powf(b), b.sin(), b.cos(), 2.0),
        (true, true, false, (true, true, false, -1)),
    );
    assert!(r.close(&want), "{r:?}");
}

#[test]
fn booleans_and_short_circuit() {
    let s = ints(100, 8);
    let r = on_all_targets(|| accelerate!(map(|x| (x > 0 && x % 2 == 0) || !(x > -10) == true, s)));
    assert_eq!(
        r,
        s.iter()
            .map(|&x| (x > 0 && x % 2 == 0) || (x <= -10))
            .collect::<Vec<_>>()
    );
}

#[test]
fn records_as_tuples() {
    let pairs: Vec<(i64, f64)> = (0..100).map(|i| (i, i as f64 * 0.5)).collect();
    let r = on_all_targets(|| {
        accelerate!({
            let swapped = map(|p| (p.1, p.0), pairs);
            let (ints, sum) = (
                map(|p| p.1 * 2, swapped),
                reduce(addf, 0.0, map(|p| p.0, swapped)),
            );
            (reduce(addi, 0, ints), sum)
        })
    });
    assert_eq!(
        r,
        (
            (0..100).map(|i| 2 * i).sum(),
            (0..100).map(|i| i as f64 * 0.5).sum()
        )
    );
}

#[test]
fn reduce_over_records() {
    let s = floats(1000, 9);
    let r = on_all_targets(|| {
        accelerate!(reduce(
            |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, if a.1 > b.1 { a.1 } else { b.1 }),
            (0.0, -1.0),
            map(|x| (x, x), s)
        ))
    });
    let max = s.iter().cloned().fold(-1.0, f64::max);
    assert!(r.close(&(s.iter().sum(), max)));
}

#[test]
fn match_with_literal_and_tuple_patterns() {
    let s = ints(200, 10);
    let r = on_all_targets(|| {
        accelerate!(
            backend = cpu,
            map(
                |x| match (x % 3, x > 0) {
                    (0, true) => 1,
                    (0, false) => 2,
                    (1, _) => 3,
                    _ => 4,
                },
                s
            )
        )
    });
    let want: Vec<i64> = s
        .iter()
        .map(|&x| match (x % 3, x > 0) {
            (0, true) => 1,
            (0, false) => 2,
            (1, _) => 3,
            _ => 4,
        })
        .collect();
    assert_eq!(r, want);
}

#[test]
fn if_let_and_let_tuple_patterns() {
    let p = (3_i64, (true, 2.5_f64));
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let (a, (b, c)) = p;
            if let (3, (true, _)) = p {
                (a, c)
            } else {
                (0, 0.0)
            }
        })
    });
    assert_eq!(r, (3, 2.5));
}

#[test]
fn recursive_functions() {
    let s: Vec<i64> = (0..15).collect();
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            fn fib(n: i64) -> i64 {
                if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
            }
            map(fib, s)
        })
    });
    assert_eq!(
        r,
        vec![0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377]
    );
}

#[test]
fn mutual_recursion_and_captured_values() {
    let s: Vec<i64> = (0..30).collect();
    let k = 10_i64;
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            fn even(n: i64) -> bool {
                if n == 0 { true } else { odd(n - 1) }
            }
            fn odd(n: i64) -> bool {
                if n == 0 { false } else { even(n - 1) }
            }
            fn above(n: i64) -> bool {
                n > k
            }
            map(|x| (even(x), above(x)), s)
        })
    });
    assert_eq!(
        r,
        s.iter().map(|&x| (x % 2 == 0, x > k)).collect::<Vec<_>>()
    );
}

#[test]
fn recursion_over_sequences_with_head_and_tail() {
    let s = ints(300, 11);
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            fn sum(s: Vec<i64>) -> i64 {
                if null(s) { 0 } else { head(s) + sum(tail(s)) }
            }
            sum(s)
        })
    });
    assert_eq!(r, s.iter().sum::<i64>());
}

#[test]
fn polymorphic_functions_used_at_two_types() {
    let a = ints(10, 12);
    let b = floats(10, 13);
    let r = on_all_targets(|| {
        accelerate!({
            let twice = |f, x| f(f(x));
            let first = |s| get(s, 0);
            (
                twice(|x| x * 2, first(a)),
                twice(|x| x * 2.0, first(b)),
                map(first, [a, a]),
            )
        })
    });
    assert!(r.close(&(a[0] * 4, b[0] * 4.0, vec![a[0], a[0]])));
}

#[test]
fn higher_order_and_partial_application() {
    let s = ints(500, 14);
    let c = 4_i64;
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let scale = |k, x| k * x;
            let compose = |f, g, x| f(g(x));
            let h = compose(scale(c), |x| x + 1);
            let fs = [scale(2), h, negi];
            (
                map(scale(c), s),
                map(h, s),
                map(|f| f(10), fs),
                map(addi(c), s),
            )
        })
    });
    let want = (
        s.iter().map(|x| c * x).collect::<Vec<_>>(),
        s.iter().map(|x| c * (x + 1)).collect::<Vec<_>>(),
        vec![20, c * 11, -10],
        s.iter().map(|x| c + x).collect::<Vec<_>>(),
    );
    assert_eq!(r, want);
}

#[test]
fn functions_returned_by_conditionals() {
    let s = ints(100, 15);
    let flag = true;
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let f = if flag { |x| x + 1 } else { |x| x - 1 };
            let pick = |b| if b { muli(2) } else { muli(3) };
            (map(f, s), map(pick(false), s))
        })
    });
    assert_eq!(
        r,
        (
            s.iter().map(|x| x + 1).collect::<Vec<_>>(),
            s.iter().map(|x| x * 3).collect::<Vec<_>>()
        )
    );
}

#[test]
fn curried_lambdas_and_closures_returning_closures() {
    let r = on_all_targets(|| {
        accelerate!({
            let adder = |x| |y| x + y;
            let add5 = adder(5);
            let k = |x| {
                let y = x * 10;
                |z| y + z
            };
            (add5(1), adder(2)(3), k(4)(2), map(adder(1), [1, 2]))
        })
    });
    assert_eq!(r, (6, 5, 42, vec![2, 3]));
}

#[test]
fn par_loop_axpy_over_tensors() {
    let n = 10_000_usize;
    let x = Tensor::<f64>::from_vec(floats(n, 16), &[n]);
    let a = 2.5_f64;
    let y0 = floats(n, 17);
    let n = n as i64;
    let r = on_all_targets(|| {
        let y = Tensor::<f64>::from_vec(y0.clone(), &[y0.len()]);
        accelerate!(par_loop(n, |i| tensor_set(
            y,
            [i],
            a * tensor_get(x, [i]) + tensor_get(y, [i])
        )));
        y
    });
    let want: Vec<f64> = x.to_vec().iter().zip(&y0).map(|(x, y)| a * x + y).collect();
    assert_eq!(r.to_vec(), want);
}

#[test]
fn tensors_of_rank_three_and_linear_access() {
    let t = Tensor::<i64>::from_fn(&[4, 5, 6], |ix| (ix[0] * 100 + ix[1] * 10 + ix[2]) as i64);
    let r = on_all_targets(|| {
        let out = Tensor::<i64>::zeros(&[4, 5, 6]);
        accelerate!(par_loop(120, |i| {
            let (x, y, z) = (i / 30, i / 6 % 5, i % 6);
            tensor_set(
                out,
                [x, y, z],
                tensor_get(t, [x, y, z]) + tensor_linear_get(t, i),
            );
            tensor_linear_set(out, i, tensor_linear_get(out, i) * 2)
        }));
        out
    });
    assert_eq!(
        r.to_vec(),
        t.to_vec().iter().map(|v| 4 * v).collect::<Vec<_>>()
    );
}

#[test]
fn tensor_views_share_memory() {
    let t = Tensor::<f64>::from_fn(&[3, 4], |ix| (ix[0] * 4 + ix[1]) as f64);
    let r = on_all_targets(|| {
        let u = t.clone();
        let info = accelerate!({
            let row = tensor_slice(u, [1]);
            let rows = tensor_sub(u, 1, 2);
            par_loop(4, |j| tensor_set(row, [j], -1.0));
            (
                tensor_rank(u),
                tensor_shape(rows),
                tensor_rank(row),
                tensor_get(rows, [0, 2]),
            )
        });
        (info, u)
    });
    assert_eq!(r.0, (2, vec![2, 4], 1, -1.0));
    assert_eq!(r.1.to_vec()[4..8], [-1.0; 4]);
}

#[test]
fn seq_loop_and_seq_loop_acc() {
    let n = 20_i64;
    let r = on_all_targets(|| {
        let t = Tensor::<i64>::zeros(&[20]);
        let total = accelerate!(backend = cpu, {
            seq_loop(n, |i| {
                tensor_set(
                    t,
                    [i],
                    if i == 0 {
                        1
                    } else {
                        tensor_get(t, [i - 1]) * 2 % 1000
                    },
                )
            });
            seq_loop_acc(0, n, |acc, i| acc + tensor_get(t, [i]))
        });
        (total, t)
    });
    let mut v = vec![1_i64];
    for i in 1..20 {
        v.push(v[i - 1] * 2 % 1000);
    }
    assert_eq!(r.0, v.iter().sum::<i64>());
    assert_eq!(r.1.to_vec(), v);
}

#[test]
fn nested_parallelism_with_seq_loop_acc_inside_par_loop() {
    let (rows, cols) = (50_usize, 40_usize);
    let w = Tensor::<f64>::from_vec(floats(rows * cols, 18), &[rows, cols]);
    let x: Vec<f64> = floats(cols, 19);
    let (m, k) = (rows as i64, cols as i64);
    let r = on_all_targets(|| {
        let z = Tensor::<f64>::zeros(&[rows]);
        accelerate!(par_loop(m, |i| tensor_set(
            z,
            [i],
            seq_loop_acc(0.0, k, |acc, j| acc + tensor_get(w, [i, j]) * get(x, j))
        )));
        z
    });
    let wv = w.to_vec();
    let want: Vec<f64> = (0..rows)
        .map(|i| (0..cols).map(|j| wv[i * cols + j] * x[j]).sum())
        .collect();
    assert!(r.to_vec().close(&want));
}

#[test]
fn sequences_of_tensors() {
    let ts: Vec<Tensor<i64>> = (0..4).map(|i| Tensor::from_vec(vec![i; 3], &[3])).collect();
    let r = on_all_targets(|| {
        accelerate!(
            backend = cpu,
            map(|t| tensor_get(t, [1]) + tensor_rank(t), ts)
        )
    });
    assert_eq!(r, vec![1, 2, 3, 4]);
}

#[test]
fn unit_results_and_statements() {
    let t = Tensor::<i64>::zeros(&[3]);
    on_all_targets(|| {
        accelerate!(backend = cpu, {
            tensor_set(t, [0], 5);
            tensor_set(t, [2], 7);
        })
    });
    assert_eq!(t.to_vec(), vec![5, 0, 7]);
}

#[test]
fn sequence_literals_indexing_and_repeat() {
    let i = 2_i64;
    let r = on_all_targets(|| {
        accelerate!(
            backend = cpu,
            ([[1, 2], [3, 4], [5, 6]][i][1], [0.5; 3], vec![true, false])
        )
    });
    assert_eq!(r, (6, vec![0.5; 3], vec![true, false]));
}

#[test]
fn captured_values_of_every_shape() {
    let arr = [1_i64, 2, 3];
    let slice: &[f64] = &[0.5, 1.5];
    let nested: Vec<Vec<bool>> = vec![vec![true], vec![false]];
    let boxed: Box<[i64]> = vec![4, 5].into_boxed_slice();
    let pair = (1_i64, vec![2.0_f64]);
    let r = on_all_targets(|| {
        accelerate!((
            reduce(addi, 0, arr),
            reduce(addf, 0.0, slice),
            map(|r| !head(r), nested),
            reduce(addi, 0, boxed) + pair.0,
            map(|x| x * 2.0, pair.1),
        ))
    });
    assert_eq!(r, (6, 2.0, vec![false, true], 10, vec![4.0]));
}

#[test]
fn annotations_fix_otherwise_unknown_captured_types() {
    let s: Vec<bool> = vec![true, true, false];
    let e: Vec<f64> = vec![];
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let s: Vec<bool> = s;
            let e: Vec<f64> = e;
            (length(s), length(e), reverse(s))
        })
    });
    assert_eq!(r, (3, 0, vec![false, true, true]));
}

#[test]
fn large_inputs_agree() {
    let s = ints(1_000_000, 20);
    let r = on_all_targets(|| {
        accelerate!({
            let sq = map(|x| x * x, s);
            (
                reduce(addi, 0, sq),
                reduce(|a, b| if a < b { a } else { b }, 1_000_000_000, s),
                length(sq),
            )
        })
    });
    assert_eq!(r.0, s.iter().map(|x| x * x).sum::<i64>());
    assert_eq!(r.1, *s.iter().min().unwrap());
}

// ----- regressions found by adversarial testing -----

#[test]
fn functions_called_straight_out_of_sequences_and_folds() {
    let s: Vec<i64> = vec![1, 2, 3];
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let fs = [addi(1), addi(2)];
            let gs = [|x| x * 3, |x| x + 1];
            (
                get(fs, 1)(10),
                head(gs)(10),
                gs[1](10),
                foldl(|f, x| |y| f(y) + x, |y| y, s)(10),
            )
        })
    });
    assert_eq!(r, (12, 30, 11, 16));
}

#[test]
fn lambdas_reading_tuple_fields_are_typed_soundly() {
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let first = |p| p.0;
            fn second(p: _) -> _ {
                p.1
            }
            (first((1, 2)), second((true, 2.5)))
        })
    });
    assert_eq!(r, (1, 2.5));
}

#[test]
fn arguments_are_evaluated_in_the_order_written() {
    let r = on_all_targets(|| {
        let t = Tensor::<i64>::zeros(&[1]);
        accelerate!(backend = cpu, {
            let a = foldl(addi, tensor_get(t, [0]), {
                tensor_set(t, [0], 5);
                [1, 2]
            });
            // An operator with 5 as its neutral element (debug mode checks it is one): the
            // neutral element is read before the sequence's block sets 7.
            let plus5 = |x, y| {
                if x == 5 {
                    y
                } else if y == 5 {
                    x
                } else {
                    x + y
                }
            };
            let b = reduce(plus5, tensor_get(t, [0]), {
                tensor_set(t, [0], 7);
                [1]
            });
            let g = |k, i| i + k;
            let c = length(create(
                tensor_get(t, [0]) - 5,
                g({
                    tensor_set(t, [0], 100);
                    0
                }),
            ));
            let d = seq_loop_acc(tensor_get(t, [0]), 1, |acc, i| acc + i);
            (a, b, c, d)
        })
    });
    assert_eq!(r, (3, 1, 2, 100));
}

#[test]
fn fn_items_see_the_lets_above_them() {
    let k = 1_i64;
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let k = 10;
            let g = |x| x + 1;
            let s = [5, 6];
            fn f(x: i64) -> i64 {
                g(x) + k + get(s, 1)
            }
            f(0)
        })
    });
    assert_eq!(r, 1 + 10 + 6);
    assert_eq!(k, 1);
}

#[test]
fn sibling_fn_items_are_polymorphic() {
    let s: Vec<i64> = vec![1, 2, 3];
    let r = on_all_targets(|| {
        accelerate!(backend = cpu, {
            let s: Vec<i64> = s;
            fn len(s: _) -> i64 {
                if null(s) { 0 } else { 1 + len(tail(s)) }
            }
            fn both(x: i64) -> i64 {
                len(s) + len([true]) + x
            }
            both(10)
        })
    });
    assert_eq!(r, 14);
}

#[test]
fn never_in_operand_position_and_empty_sequences() {
    let x = 3_i64;
    let r = on_all_targets(|| {
        accelerate!(
            backend = cpu,
            (
                if x > 0 { 1 } else { never!() + 1 },
                if x > 0 { 2.0 } else { -never!() },
                length([]),
                {
                    let f: fn() -> i64 = || 3;
                    f()
                },
            )
        )
    });
    assert_eq!(r, (1, 2.0, 0, 3));
}

#[test]
fn tuple_lets_of_rows() {
    // `let (a, b) = (m[i], m[j])` binds each row on its own (borrowed, not copied into a tuple);
    // the fields are still evaluated in the order written.
    let m: Vec<Vec<i64>> = (0..40).map(|i| ints(16, i)).collect();
    let n = m.len() as i64;
    let r = on_all_targets(|| {
        accelerate!(map(
            |i| {
                let (row, next, k) = (m[i], m[if i + 1 == n { i } else { i + 1 }], i % 3);
                let (_, (a, b)) = (k, (row[k], next[k + 1]));
                a * b + length(row)
            },
            create(n, |i| i)
        ))
    });
    let want: Vec<i64> = (0..m.len())
        .map(|i| {
            let next = &m[(i + 1).min(m.len() - 1)];
            let k = i % 3;
            m[i][k] * next[k + 1] + 16
        })
        .collect();
    assert_eq!(r, want);
    // The first field's failure is the one reported.
    let s: Vec<i64> = vec![1, 2];
    let msg = common::failure(Target::Seq, || {
        accelerate!(backend = cpu, {
            let (a, b) = (s[5], s[-1]);
            a + b
        })
    });
    assert!(msg.contains("index 5"), "{msg}");
}
