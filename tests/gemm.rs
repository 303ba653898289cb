//! `tensor_gemm(c, a, trans_a, b, trans_b, alpha, beta)`: the triple loop of its meaning exactly
//! on `seq` and in debug mode, the `matrixmultiply` GEMM within rounding on `cpu`, in `f64` and
//! `f32`, for every transpose combination of non-square operands; on the CUDA targets as a kernel
//! of its own, which gives the triple loop's results exactly, beside the other kernels of a
//! CUDA-class site; bad operands fail naming the site.

mod common;

use pmexpr::cuda::launches_on_this_thread;
use pmexpr::{Target, Tensor, accelerate, with_target};

/// `c := alpha · op(a) · op(b) + beta · c` in `f64`.
#[allow(clippy::too_many_arguments)]
fn gemm64(
    c: &Tensor<f64>,
    a: &Tensor<f64>,
    ta: bool,
    b: &Tensor<f64>,
    tb: bool,
    alpha: f64,
    beta: f64,
) {
    accelerate!(backend = cuda, tensor_gemm(c, a, ta, b, tb, alpha, beta));
}

/// The same in `f32`.
#[allow(clippy::too_many_arguments)]
fn gemm32(
    c: &Tensor<f32>,
    a: &Tensor<f32>,
    ta: bool,
    b: &Tensor<f32>,
    tb: bool,
    alpha: f32,
    beta: f32,
) {
    accelerate!(backend = cuda, tensor_gemm(c, a, ta, b, tb, alpha, beta));
}

/// Deterministic entries in `[-1, 1]`, multiples of 1/1000.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x % 2001) as f64 - 1000.0) / 1000.0
        })
        .collect()
}

/// The meaning, over row-major vectors: `a` is `[m, k]` or (transposed) `[k, m]`, and so on.
#[allow(clippy::too_many_arguments)]
fn triple_loop<
    F: Copy + Default + PartialEq + std::ops::Add<Output = F> + std::ops::Mul<Output = F>,
>(
    c: &[F],
    (m, k, n): (usize, usize, usize),
    a: &[F],
    ta: bool,
    b: &[F],
    tb: bool,
    alpha: F,
    beta: F,
) -> Vec<F> {
    let mut out = c.to_vec();
    for i in 0..m {
        for j in 0..n {
            let mut acc = F::default();
            for l in 0..k {
                let x = if ta { a[l * m + i] } else { a[i * k + l] };
                let y = if tb { b[j * k + l] } else { b[l * n + j] };
                acc = acc + x * y;
            }
            out[i * n + j] = if beta == F::default() {
                alpha * acc
            } else {
                alpha * acc + beta * c[i * n + j]
            };
        }
    }
    out
}

const COMBINATIONS: [(bool, bool); 4] =
    [(false, false), (true, false), (false, true), (true, true)];

/// The shapes of `a` and `b` for `op(a)` `[m, k]` and `op(b)` `[k, n]`.
fn shapes((m, k, n): (usize, usize, usize), ta: bool, tb: bool) -> ([usize; 2], [usize; 2]) {
    (
        if ta { [k, m] } else { [m, k] },
        if tb { [n, k] } else { [k, n] },
    )
}

#[test]
fn f64_products_are_the_triple_loop_on_seq_and_debug_and_agree_on_cpu() {
    let dims = (7, 5, 3);
    for (ta, tb) in COMBINATIONS {
        for (alpha, beta) in [(1.0, 0.0), (-0.5, 1.0), (2.0, 0.25)] {
            let (sa, sb) = shapes(dims, ta, tb);
            let (av, bv, cv) = (values(35, 1), values(15, 2), values(21, 3));
            let want = triple_loop(&cv, dims, &av, ta, &bv, tb, alpha, beta);
            let a = Tensor::from_vec(av, &sa);
            let b = Tensor::from_vec(bv, &sb);
            let run = |t: Target| {
                let c = Tensor::from_vec(cv.clone(), &[7, 3]);
                with_target(t, || gemm64(&c, &a, ta, &b, tb, alpha, beta));
                c.to_vec()
            };
            let what = format!("ta={ta} tb={tb} alpha={alpha} beta={beta}");
            assert_eq!(run(Target::Seq), want, "seq {what}");
            assert_eq!(run(Target::Debug), want, "debug {what}");
            // The kernel sums in the meaning's order, uncontracted: the same bits.
            for t in common::cuda_targets() {
                assert_eq!(run(t), want, "{t} {what}");
            }
            for (x, y) in run(Target::Cpu).iter().zip(&want) {
                assert!((x - y).abs() <= 1e-13, "cpu {what}: {x} vs {y}");
            }
        }
    }
}

#[test]
fn f32_products_compute_in_f32() {
    let dims = (4, 6, 5);
    for (ta, tb) in COMBINATIONS {
        let (sa, sb) = shapes(dims, ta, tb);
        let f = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect::<Vec<f32>>();
        let (av, bv, cv) = (f(values(24, 4)), f(values(30, 5)), f(values(20, 6)));
        let want = triple_loop(&cv, dims, &av, ta, &bv, tb, 1.5, -1.0);
        let a = Tensor::from_vec(av, &sa);
        let b = Tensor::from_vec(bv, &sb);
        let run = |t: Target| {
            let c = Tensor::from_vec(cv.clone(), &[4, 5]);
            with_target(t, || gemm32(&c, &a, ta, &b, tb, 1.5, -1.0));
            c.to_vec()
        };
        assert_eq!(run(Target::Seq), want, "seq ta={ta} tb={tb}");
        assert_eq!(run(Target::Debug), want, "debug ta={ta} tb={tb}");
        for t in common::cuda_targets() {
            assert_eq!(run(t), want, "{t} ta={ta} tb={tb}");
        }
        for (x, y) in run(Target::Cpu).iter().zip(&want) {
            assert!((x - y).abs() <= 1e-5, "cpu ta={ta} tb={tb}: {x} vs {y}");
        }
    }
}

#[test]
fn rows_of_a_buffer_and_a_product_between_kernels() {
    // The first `n` rows of `[8, 3]` buffers, as the network example uses its batch buffers; a
    // kernel before and after the product (CUDA-class: on the CUDA targets the product is the
    // second of three launches).
    let x = Tensor::from_vec(values(24, 7), &[8, 3]);
    let w = Tensor::from_vec(values(6, 8), &[2, 3]);
    let n: i64 = 5;
    let (xv, wv) = (x.to_vec(), w.to_vec());
    let scaled: Vec<f64> = xv.iter().map(|v| 2.0 * v).collect();
    let want = triple_loop(
        &[0.0; 10],
        (5, 3, 2),
        &scaled[..15],
        false,
        &wv,
        true,
        1.0,
        0.0,
    );
    let run = |t: Target| {
        let (x2, y) = (x.clone(), Tensor::<f64>::zeros(&[8, 2]));
        let before = launches_on_this_thread();
        with_target(t, || {
            accelerate!({
                par_loop(n * 3, |k| {
                    tensor_set(x2, [k / 3, k % 3], 2.0 * tensor_get(x2, [k / 3, k % 3]))
                });
                tensor_gemm(
                    tensor_sub(y, 0, n),
                    tensor_sub(x2, 0, n),
                    false,
                    w,
                    true,
                    1.0,
                    0.0,
                );
                par_loop(n * 2, |k| {
                    tensor_set(y, [k / 2, k % 2], tensor_get(y, [k / 2, k % 2]) + 1.0)
                })
            })
        });
        (y.to_vec(), launches_on_this_thread() - before)
    };
    let expected: Vec<f64> = want.iter().map(|v| v + 1.0).chain([0.0; 6]).collect();
    assert_eq!(run(Target::Seq).0, expected);
    for t in [Target::Cpu, Target::Debug]
        .into_iter()
        .chain(common::cuda_targets())
    {
        let (got, launches) = run(t);
        for (p, q) in got.iter().zip(&expected) {
            assert!((p - q).abs() <= 1e-13, "{t}: {got:?}");
        }
        if matches!(t, Target::Cuda | Target::CudaEmulator) {
            assert_eq!(
                launches, 3,
                "{t} launched the product between the loops' kernels"
            );
        }
    }
}

/// Asserts `msg` names the site of this file just after `line` and says `what`.
fn names_site(msg: &str, line: u32, what: &str) {
    let rest = msg
        .strip_prefix("pmexpr: accelerate! at tests/gemm.rs:")
        .unwrap_or_else(|| panic!("message does not name this file: {msg}"));
    let at: u32 = rest.split(':').next().and_then(|l| l.parse().ok()).unwrap();
    assert!(
        (line..=line + 4).contains(&at),
        "line {at}, expected after {line}: {msg}"
    );
    assert!(msg.contains(what), "message does not say {what:?}: {msg}");
}

#[test]
fn bad_operands_fail_naming_the_site_on_every_target() {
    let m = |r: usize, c: usize| Tensor::<f64>::zeros(&[r, c]);
    let (c, a, b) = (m(3, 3), m(3, 2), m(3, 2));
    let v = Tensor::<f64>::zeros(&[6]);
    let mut targets = vec![Target::Seq, Target::Cpu, Target::Debug];
    targets.extend(common::cuda_targets());
    for t in targets {
        let line = line!();
        let msg = common::failure(t, || {
            accelerate!(backend = cuda, tensor_gemm(c, a, false, b, false, 1.0, 0.0))
        });
        names_site(
            &msg,
            line,
            "tensor_gemm with shapes that do not agree: `a` [3, 2] · `b` [3, 2] into `c` [3, 3]",
        );
        let line = line!();
        let msg = common::failure(t, || {
            accelerate!(backend = cuda, tensor_gemm(c, v, false, b, true, 1.0, 0.0))
        });
        names_site(
            &msg,
            line,
            "needs matrices (rank 2): its `a` argument `v` has shape [6]",
        );
        let line = line!();
        let msg = common::failure(t, || {
            accelerate!(backend = cuda, tensor_gemm(c, c, false, c, false, 1.0, 0.0))
        });
        names_site(
            &msg,
            line,
            "writes `c`, which shares memory with its operand `c`",
        );
    }
}

#[test]
fn beta_zero_and_empty_products_agree_on_every_target() {
    let mut targets = vec![Target::Seq, Target::Debug, Target::Cpu];
    targets.extend(common::cuda_targets());
    for t in targets {
        // `beta == 0` overwrites a NaN in `c`.
        let a = Tensor::from_vec(values(6, 9), &[2, 3]);
        let c = Tensor::from_vec(vec![f64::NAN; 4], &[2, 2]);
        with_target(t, || gemm64(&c, &a, false, &a, true, 1.0, 0.0));
        assert!(c.to_vec().iter().all(|v| v.is_finite()), "{t}: {c:?}");
        // k = 0: c := beta · c.
        let (a0, b0) = (Tensor::<f64>::zeros(&[2, 0]), Tensor::<f64>::zeros(&[0, 2]));
        let c = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
        with_target(t, || gemm64(&c, &a0, false, &b0, false, 1.0, 3.0));
        assert_eq!(c.to_vec(), [3.0, 6.0, 9.0, 12.0], "{t}");
        // m = 0: nothing to compute.
        let c = Tensor::<f64>::zeros(&[0, 2]);
        let (a, b) = (Tensor::<f64>::zeros(&[0, 2]), Tensor::<f64>::zeros(&[2, 2]));
        with_target(t, || gemm64(&c, &a, false, &b, false, 1.0, 3.0));
        assert!(c.to_vec().is_empty(), "{t}");
    }
}

/// Every product with a zero dimension (`m`, `k` or `n`, one or several), in every transpose
/// combination: `c := beta · c` when `k = 0`, nothing at all when `c` is empty, on every target.
#[test]
fn products_with_a_zero_dimension_agree_on_every_target() {
    let mut targets = vec![Target::Seq, Target::Debug, Target::Cpu];
    targets.extend(common::cuda_targets());
    for dims in [
        (0, 3, 2),
        (2, 0, 3),
        (2, 3, 0),
        (0, 0, 2),
        (0, 2, 0),
        (2, 0, 0),
        (0, 0, 0),
    ] {
        let (m, k, n) = dims;
        for (ta, tb) in COMBINATIONS {
            for (alpha, beta) in [(1.0, 0.0), (2.0, -2.0)] {
                let (sa, sb) = shapes(dims, ta, tb);
                let (av, bv, cv) = (values(m * k, 4), values(k * n, 5), values(m * n, 6));
                let want = triple_loop(&cv, dims, &av, ta, &bv, tb, alpha, beta);
                let (a, b) = (Tensor::from_vec(av, &sa), Tensor::from_vec(bv, &sb));
                for &t in &targets {
                    let c = Tensor::from_vec(cv.clone(), &[m, n]);
                    with_target(t, || gemm64(&c, &a, ta, &b, tb, alpha, beta));
                    assert_eq!(c.to_vec(), want, "{t} {dims:?} ta={ta} tb={tb} beta={beta}");
                    let c = Tensor::from_vec(cv.iter().map(|&x| x as f32).collect(), &[m, n]);
                    let a = Tensor::from_vec(a.to_vec().iter().map(|&x| x as f32).collect(), &sa);
                    let b = Tensor::from_vec(b.to_vec().iter().map(|&x| x as f32).collect(), &sb);
                    with_target(t, || gemm32(&c, &a, ta, &b, tb, alpha as f32, beta as f32));
                    let want32: Vec<f32> = want.iter().map(|&x| x as f32).collect();
                    assert_eq!(c.to_vec(), want32, "{t} f32 {dims:?} ta={ta} tb={tb}");
                }
            }
        }
    }
}

#[test]
fn products_in_closures_and_local_functions_launch_from_host_loops() {
    // `y := x · wᵀ` three times through a closure, then `z := y · w` in a local `fn`, between
    // element-wise kernels; the CUDA targets launch each product where host code reaches it.
    let x = Tensor::from_vec(values(12, 11), &[4, 3]);
    let w = Tensor::from_vec(values(6, 12), &[2, 3]);
    let run = |t: Target| {
        let (y, z) = (Tensor::<f64>::zeros(&[4, 2]), Tensor::<f64>::zeros(&[4, 3]));
        let before = launches_on_this_thread();
        with_target(t, || {
            accelerate!(backend = cuda, {
                let forward = |s| tensor_gemm(y, x, false, w, true, s, 1.0);
                fn back(z: Tensor<f64>, y: Tensor<f64>, w: Tensor<f64>) {
                    tensor_gemm(z, y, false, w, false, 1.0, 0.0)
                }
                seq_loop(3, |s| {
                    forward(int2float(s + 1));
                    par_loop(8, |k| {
                        tensor_set(y, [k / 2, k % 2], 0.5 * tensor_get(y, [k / 2, k % 2]))
                    })
                });
                back(z, y, w)
            })
        });
        (y.to_vec(), z.to_vec(), launches_on_this_thread() - before)
    };
    let (y, z, _) = run(Target::Seq);
    assert!(y.iter().any(|v| *v != 0.0), "{y:?}");
    for t in [Target::Debug].into_iter().chain(common::cuda_targets()) {
        let (y2, z2, launches) = run(t);
        assert_eq!((&y2, &z2), (&y, &z), "{t}");
        if matches!(t, Target::Cuda | Target::CudaEmulator) {
            assert_eq!(launches, 7, "{t}: three products, three loops, one product");
        }
    }
    let (y2, z2, _) = run(Target::Cpu);
    for (p, q) in y2.iter().chain(&z2).zip(y.iter().chain(&z)) {
        assert!((p - q).abs() <= 1e-12, "cpu: {p} vs {q}");
    }
}
