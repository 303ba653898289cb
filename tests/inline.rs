//! Loops whose bodies call let-bound closures — the paper's Listing 1 writes its loop as
//! `par_loop(n, |i| axpy(2, i))` — are generated with the calls inlined, so that the loop
//! modules (windows, grids, plain loops) see the tensor accesses inside the closures. These
//! tests check that such loops agree with `seq` on every target, fail as written, and take the
//! fast paths.

mod common;

use common::{on_every_target, same_failure};
use pmexpr::__private::plain_loops;
use pmexpr::{Target, Tensor, accelerate, with_target};

/// Listing 1's first expression: `t1[i] += c * t2[i]` through a closure.
fn listing1(t1: &Tensor<i64>, t2: &Tensor<i64>, n: i64) {
    accelerate!({
        let axpy = |c, i| {
            let x = tensor_get(t1, [i]);
            let y = tensor_get(t2, [i]);
            tensor_set(t1, [i], addi(x, muli(c, y)))
        };
        par_loop(n, |i| axpy(2, i))
    })
}

#[test]
fn listing_1s_loop_through_a_closure_agrees_and_runs_plain_on_cpu() {
    for n in [0_usize, 1, 1000, 100_003] {
        let t2 = Tensor::from_fn(&[n], |ix| (ix[0] % 91) as i64 - 40);
        let start = |ix: &[usize]| (ix[0] % 17) as i64;
        let y = t2.to_vec();
        let want: Vec<i64> = (0..n).map(|i| start(&[i]) + 2 * y[i]).collect();
        let got = on_every_target(|| {
            let t1 = Tensor::from_fn(&[n], start);
            listing1(&t1, &t2, n as i64);
            t1.to_vec()
        });
        assert_eq!(got, want, "n = {n}");
        let t1 = Tensor::from_fn(&[n], start);
        let before = plain_loops();
        with_target(Target::Cpu, || listing1(&t1, &t2, n as i64));
        assert!(
            plain_loops() > before,
            "n = {n}: the loop did not run plain"
        );
    }
}

#[test]
fn calls_with_expressions_and_nested_calls_agree() {
    let n = 5_003_usize;
    let src = Tensor::from_fn(&[n], |ix| ix[0] as f64 * 0.25 - 100.0);
    let counts = Tensor::from_fn(&[n], |ix| (ix[0] % 7) as i64);
    let want_dst: Vec<f64> = (0..n)
        .map(|i| {
            let s = |j: usize| j as f64 * 0.25 - 100.0;
            (s(i) + s(n - 1 - i)) * 2.0 + s(i) * 0.5
        })
        .collect();
    let got = on_every_target(|| {
        let dst = Tensor::<f64>::zeros(&[n]);
        let out = Tensor::<i64>::zeros(&[n]);
        let m = n as i64;
        accelerate!({
            let get = |t, j| tensor_get(t, [j]);
            // A closure calling a closure, with an argument that is an expression.
            let both = |i| get(src, i) + get(src, m - 1 - i);
            let scale = |v, c| v * c;
            let twice = |x| x + x;
            par_loop(m, |i| {
                tensor_set(dst, [i], scale(both(i), 2.0) + scale(get(src, i), 0.5));
                tensor_set(out, [i], twice(tensor_get(counts, [i])))
            })
        });
        (dst.to_vec(), out.to_vec())
    });
    assert_eq!(got.0, want_dst);
    let want_out: Vec<i64> = (0..n).map(|i| 2 * (i % 7) as i64).collect();
    assert_eq!(got.1, want_out);
}

#[test]
fn a_grid_loop_through_a_closure_agrees() {
    let (h, w) = (37_usize, 64_usize);
    let src = Tensor::from_fn(&[h, w], |ix| (ix[0] * w + ix[1]) as f64);
    let s = src.to_vec();
    let want: Vec<f64> = (0..h * w)
        .map(|k| {
            let (i, j) = (k / w, k % w);
            if i == 0 || j == 0 || i == h - 1 || j == w - 1 {
                s[k]
            } else {
                (s[k - w] + s[k + w] + s[k - 1] + s[k + 1]) * 0.25
            }
        })
        .collect();
    let got = on_every_target(|| {
        let dst = Tensor::<f64>::zeros(&[h, w]);
        accelerate!({
            let ny = tensor_shape(src)[0];
            let nx = tensor_shape(src)[1];
            let cell = |k| {
                let i = k / nx;
                let j = k % nx;
                if i == 0 || j == 0 || i == ny - 1 || j == nx - 1 {
                    tensor_set(dst, [i, j], tensor_get(src, [i, j]))
                } else {
                    tensor_set(
                        dst,
                        [i, j],
                        (tensor_get(src, [i - 1, j])
                            + tensor_get(src, [i + 1, j])
                            + tensor_get(src, [i, j - 1])
                            + tensor_get(src, [i, j + 1]))
                            * 0.25,
                    )
                }
            };
            par_loop(ny * nx, |k| cell(k))
        });
        dst.to_vec()
    });
    assert_eq!(got, want);
}

#[test]
fn a_failure_inside_a_closure_is_the_failure_as_written() {
    let n = 1000_usize;
    let src = Tensor::from_fn(&[n], |ix| ix[0] as i64);
    same_failure(
        "tests/inline.rs",
        "Invalid indices used to access tensor",
        || {
            let dst = Tensor::<i64>::zeros(&[n]);
            let m = n as i64;
            accelerate!({
                let next = |i| tensor_get(src, [i + 1]);
                par_loop(m, |i| tensor_set(dst, [i], next(i)))
            })
        },
    );
}

#[test]
fn sequences_passed_to_a_closure_and_closures_inside_it_agree() {
    let n = 3_001_usize;
    let weights: Vec<f64> = (0..17).map(|j| j as f64 * 1.5 - 4.0).collect();
    let want: Vec<f64> = (0..n).map(|i| weights[i % 17] + weights[0]).collect();
    let got = on_every_target(|| {
        let dst = Tensor::<f64>::zeros(&[n]);
        let m = n as i64;
        accelerate!({
            // A sequence argument, read by a closure made inside the called one.
            let pick = |s, j| {
                let at = |x| s[x];
                at(j)
            };
            let k = length(weights);
            par_loop(m, |i| {
                tensor_set(dst, [i], pick(weights, i % k) + pick(weights, 0))
            })
        });
        dst.to_vec()
    });
    assert_eq!(got, want);
}

#[test]
fn a_closure_whose_loop_calls_a_closure_holds_what_that_one_uses() {
    // `sweep`'s loop inlines `cell`, which reads the sequence `ws`: `sweep` holds `ws` too, and
    // `ws` is still there after it.
    let got = on_every_target(|| {
        let d = Tensor::<f64>::zeros(&[100]);
        let last: f64 = accelerate!({
            let ws = [1.0, 2.0, 3.0, 4.0];
            let cell = |k| tensor_set(d, [k], tensor_get(d, [k]) + ws[k % 4]);
            let sweep = |_| par_loop(100, |k| cell(k));
            seq_loop(3, sweep);
            ws[3]
        });
        (d.to_vec(), last)
    });
    let want: Vec<f64> = (0..100).map(|k| 3.0 * (k % 4 + 1) as f64).collect();
    assert_eq!(got, (want, 4.0));
}
