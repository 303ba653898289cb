//! `par_loop`s over a flat index split by `let i = k / w; let j = k % w;` (2-D) or
//! `k / (n * n)`, `k / n % n`, `k % n` (3-D) run as rows on the CPU targets (pmexpr-core's
//! `codegen/rust/grid.rs`), reading rows of tensors through windows, neighbours at `j ± 1`
//! included. The results are the sequential semantics' exactly, and every failure is the same
//! failure at the same site on every backend.

mod common;

use pmexpr::{Target, Tensor, accelerate, with_target};

const TARGETS: [Target; 3] = [Target::Seq, Target::Cpu, Target::Debug];

/// One 5-point Jacobi sweep over the first `n` points of a `[ny, nx]` grid (the rest of `dst`
/// untouched).
fn sweep(target: Target, src: &Tensor<f64>, n: i64) -> Vec<f64> {
    let dst = Tensor::<f64>::zeros(src.shape());
    with_target(target, || {
        accelerate!({
            let ny = tensor_shape(src)[0];
            let nx = tensor_shape(src)[1];
            par_loop(n, |k| {
                let i = k / nx;
                let j = k % nx;
                if i == 0 || j == 0 || i == ny - 1 || j == nx - 1 {
                    tensor_set(dst, [i, j], tensor_get(src, [i, j]))
                } else {
                    tensor_set(
                        dst,
                        [i, j],
                        0.2 * (tensor_get(src, [i, j])
                            + tensor_get(src, [i - 1, j])
                            + tensor_get(src, [i + 1, j])
                            + tensor_get(src, [i, j - 1])
                            + tensor_get(src, [i, j + 1])),
                    )
                }
            })
        })
    });
    dst.to_vec()
}

fn grid(ny: usize, nx: usize) -> Tensor<f64> {
    Tensor::from_fn(&[ny, nx], |ix| {
        ((ix[0] * 31 + ix[1] * 17) % 23) as f64 * 0.125 - 1.0
    })
}

#[test]
fn two_dimensional_sweeps_agree_with_the_loop_by_hand() {
    for (ny, nx) in [(1, 1), (1, 7), (7, 1), (2, 2), (5, 9), (33, 64), (64, 33)] {
        let src = grid(ny, nx);
        let s = src.to_vec();
        let mut want = vec![0.0; ny * nx];
        for i in 0..ny {
            for j in 0..nx {
                let at = |i: usize, j: usize| s[i * nx + j];
                want[i * nx + j] = if i == 0 || j == 0 || i == ny - 1 || j == nx - 1 {
                    at(i, j)
                } else {
                    0.2 * (at(i, j) + at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1))
                };
            }
        }
        let all = (ny * nx) as i64;
        for target in TARGETS {
            assert_eq!(sweep(target, &src, all), want, "{target} {ny}x{nx}");
            // A count that ends inside a row, and none at all.
            let part = (all - 3).max(0);
            assert_eq!(
                sweep(target, &src, part),
                sweep(Target::Seq, &src, part),
                "{target} {ny}x{nx}, {part} points"
            );
            assert_eq!(sweep(target, &src, -2), vec![0.0; ny * nx], "{target}");
        }
    }
}

#[test]
fn three_dimensional_sweeps_agree_with_seq() {
    for n in [1_usize, 3, 8, 17] {
        let src = Tensor::<f64>::from_fn(&[n, n, n], |ix| {
            ((ix[0] * 7 + ix[1] * 5 + ix[2] * 3) % 11) as f64 - 4.5
        });
        let run = |target: Target| {
            let dst = Tensor::<f64>::zeros(&[n, n, n]);
            with_target(target, || {
                accelerate!({
                    let n = tensor_shape(src)[0];
                    par_loop(n * n * n, |k| {
                        let i = k / (n * n);
                        let j = k / n % n;
                        let l = k % n;
                        if i == 0 || j == 0 || l == 0 || i == n - 1 || j == n - 1 || l == n - 1 {
                            tensor_set(dst, [i, j, l], tensor_get(src, [i, j, l]))
                        } else {
                            tensor_set(
                                dst,
                                [i, j, l],
                                (tensor_get(src, [i, j, l])
                                    + tensor_get(src, [i - 1, j, l])
                                    + tensor_get(src, [i + 1, j, l])
                                    + tensor_get(src, [i, j - 1, l])
                                    + tensor_get(src, [i, j + 1, l])
                                    + tensor_get(src, [i, j, l - 1])
                                    + tensor_get(src, [i, j, l + 1]))
                                    / 7.0,
                            )
                        }
                    })
                })
            });
            dst.to_vec()
        };
        let want = run(Target::Seq);
        for target in TARGETS {
            assert_eq!(run(target), want, "{target} n={n}");
        }
    }
}

#[test]
fn neighbours_beyond_the_row_and_lets_along_the_row_read_as_written() {
    // The loop's rows are 8 wide, the tensor's 10: `j + 2` leaves the window but not the tensor.
    // `m` depends on the column and stays in the loop; `q` is the same along a row.
    let t = Tensor::<i64>::from_fn(&[4, 10], |ix| (ix[0] * 10 + ix[1]) as i64);
    let run = |target: Target| {
        let out = Tensor::<i64>::zeros(&[4, 8]);
        with_target(target, || {
            accelerate!(par_loop(32, |k| {
                let i = k / 8;
                let j = k % 8;
                let q = 100 * i;
                let m = j * 2;
                tensor_set(out, [i, j], tensor_get(t, [i, j + 2]) + q + m + k)
            }))
        });
        out.to_vec()
    };
    let want: Vec<i64> = (0..32)
        .map(|k| {
            let (i, j) = (k / 8, k % 8);
            (i * 10 + j + 2) + 100 * i + j * 2 + k
        })
        .collect();
    for target in TARGETS {
        assert_eq!(run(target), want, "{target}");
    }
}

/// The failure of `run` on every backend: the same message everywhere, which says `what`.
fn same_failure(what: &str, run: impl Fn()) {
    common::same_failure("tests/grids.rs", what, run)
}

#[test]
fn failures_are_the_loops_as_written() {
    let t = Tensor::<f64>::zeros(&[3, 4]);
    // A zero width: `k / w` divides by zero.
    same_failure("Division by zero", || {
        let w = 0_i64;
        accelerate!(par_loop(12, |k| {
            let i = k / w;
            let j = k % w;
            tensor_set(t, [i, j], 1.0)
        }));
    });
    // A neighbour past the last column, with no boundary test.
    same_failure(
        "Invalid indices used to access tensor: index [0, 4] for a tensor of shape [3, 4]",
        || {
            let u = Tensor::<f64>::zeros(&[3, 4]);
            accelerate!(par_loop(4, |k| {
                let i = k / 4;
                let j = k % 4;
                tensor_set(u, [i, j], tensor_get(t, [i, j + 1]))
            }));
        },
    );
    // A `let` that is the same along a row and fails on one row.
    same_failure("Division by zero", || {
        accelerate!(par_loop(12, |k| {
            let i = k / 4;
            let j = k % 4;
            let q = 10 / (i - 2);
            tensor_set(t, [i, j], int2float(q))
        }));
    });
    // Rows past the tensor's.
    same_failure(
        "Invalid indices used to access tensor: index [3, 0] for a tensor of shape [3, 4]",
        || {
            accelerate!(par_loop(16, |k| {
                let i = k / 4;
                let j = k % 4;
                tensor_set(t, [i, j], 2.0)
            }));
        },
    );
}

#[test]
fn negative_widths_run_as_written() {
    // `k / -2` and `k % -2` truncate toward zero: the loop writes `[-(k / 2), k % 2]`.
    for target in TARGETS {
        let t = Tensor::<i64>::zeros(&[3, 2]);
        with_target(target, || {
            let w = -2_i64;
            accelerate!(par_loop(6, |k| {
                let i = k / w;
                let j = k % w;
                tensor_set(t, [0 - i, j], k)
            }))
        });
        assert_eq!(t.to_vec(), vec![0, 1, 2, 3, 4, 5], "{target}");
    }
}

#[test]
fn a_divisor_that_the_width_does_not_divide_runs_as_written() {
    // `k / a` is the same along a row of `b` only where `b` divides `a`: 8 and 4 run as rows,
    // 6 and 4 as written; both give the loop's results.
    for (a, b) in [(8_i64, 4_i64), (6, 4), (4, 4), (3, 1)] {
        let run = |target: Target| {
            let t = Tensor::<i64>::zeros(&[24]);
            with_target(target, || {
                accelerate!(par_loop(24, |k| {
                    let i = k / a;
                    let j = k % b;
                    tensor_set(t, [k], 100 * i + j)
                }))
            });
            t.to_vec()
        };
        let want: Vec<i64> = (0..24).map(|k| 100 * (k / a) + k % b).collect();
        for target in TARGETS {
            assert_eq!(run(target), want, "{target} a={a} b={b}");
        }
    }
}
