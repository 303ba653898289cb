//! `#[pmexpr]` functions: defined in the package's library and in this file, used from
//! `accelerate!` sites (seen through the build hook) and called as ordinary Rust functions; every
//! site agrees on the sequential, multicore and debug targets.

use pmexpr::{Tensor, accelerate, pmexpr};
use pmexpr_suite::{inc, sum_of_squares};
#[allow(unused_imports)]
use pmexpr_suite::{parity::steps_down, steps_up};

mod common;
use common::on_every_target;

/// Recursion is allowed in `#[pmexpr]` functions (the CUDA backend runs it sequentially).
#[pmexpr]
fn fib(n: i64) -> i64 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

#[pmexpr]
fn scale(c: f64, x: f64) -> f64 {
    c * x
}

/// A `#[pmexpr]` function that uses another one from a different file.
#[pmexpr]
fn twice_inc(x: i64) -> i64 {
    inc(inc(x))
}

#[test]
fn pmexpr_functions_are_ordinary_rust_functions() {
    assert_eq!(inc(41), 42);
    assert_eq!(twice_inc(1), 3);
    assert_eq!(fib(10), 55);
    assert_eq!(scale(2.0, 1.5), 3.0);
    assert_eq!(sum_of_squares(vec![1, 2, 3]), 14);
}

#[test]
fn sites_use_pmexpr_functions_of_the_crate() {
    let s: Vec<i64> = (0..100).collect();
    let got: Vec<i64> = on_every_target(|| accelerate!(map(|x| twice_inc(x) + inc(x), s)));
    let want: Vec<i64> = s.iter().map(|x| (x + 2) + (x + 1)).collect();
    assert_eq!(got, want);
    let total: i64 = on_every_target(|| accelerate!(reduce(addi, 0, map(inc, s))));
    assert_eq!(total, s.iter().map(|x| x + 1).sum::<i64>());
    let m: Vec<Vec<i64>> = vec![vec![1, 2], vec![3, 4]];
    let sums: Vec<i64> = on_every_target(|| accelerate!(map(sum_of_squares, m)));
    assert_eq!(sums, [5, 25]);
}

#[test]
fn cuda_class_site_with_a_recursive_pmexpr_function() {
    let n: i64 = 15;
    let got = on_every_target(|| {
        let t = Tensor::<i64>::zeros(&[n as usize]);
        accelerate!(par_loop(n, |i| tensor_set(t, [i], fib(i))));
        t.to_vec()
    });
    let want: Vec<i64> = (0..15)
        .map(|k| {
            let (mut a, mut b) = (0i64, 1i64);
            for _ in 0..k {
                (a, b) = (b, a + b);
            }
            a
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn floats_and_forced_backend() {
    let xs = vec![1.0, 2.0, 4.0];
    let c = 0.5;
    let got: Vec<f64> = on_every_target(|| accelerate!(map(|x| scale(c, x), xs)));
    assert_eq!(got, [0.5, 1.0, 2.0]);
    // No parallel keyword: the backend is named.
    let y: f64 = on_every_target(|| accelerate!(backend = futhark, scale(c, get(xs, 2))));
    assert_eq!(y, 2.0);
}

/// Slices and unit results: a `#[pmexpr]` function takes what a Rust function would.
#[pmexpr]
fn weighted(s: &[f64], w: f64) -> f64 {
    reduce(addf, 0.0, map(|x| x * w, s))
}

#[pmexpr]
fn fill(t: &Tensor<i64>, v: i64) {
    par_loop(tensor_shape(t)[0], |i| tensor_set(t, [i], v + i))
}

#[test]
fn slices_tensors_and_unit_results() {
    let xs = [1.0, 2.0, 3.0];
    assert_eq!(weighted(&xs, 2.0), 12.0);
    let t = Tensor::<i64>::zeros(&[4]);
    fill(&t, 10);
    assert_eq!(t.to_vec(), [10, 11, 12, 13]);
    let m = vec![vec![1.0, 1.0], vec![2.0, 2.0]];
    let got: Vec<f64> = on_every_target(|| accelerate!(map(|row| weighted(row, 0.5), m)));
    assert_eq!(got, [1.0, 2.0]);
    let u = Tensor::<i64>::zeros(&[3]);
    on_every_target(|| accelerate!(backend = cuda, fill(u, 7)));
    assert_eq!(u.to_vec(), [7, 8, 9]);
}

/// Mutually recursive `#[pmexpr]` functions in one file.
#[pmexpr]
fn is_even(n: i64) -> bool {
    if n == 0 { true } else { is_odd(n - 1) }
}

#[pmexpr]
fn is_odd(n: i64) -> bool {
    if n == 0 { false } else { is_even(n - 1) }
}

#[test]
fn mutually_recursive_pmexpr_functions() {
    // As Rust functions.
    assert!(is_even(10) && !is_even(7) && is_odd(7) && !is_odd(0));
    // Across modules (src/lib.rs and src/parity.rs).
    assert_eq!(pmexpr_suite::parity::steps_down(9), 9);
    assert!(pmexpr_suite::even_len(vec![1, 2, 3, 4]));
    // From a CPU site and from a CUDA-class site (the recursion runs on the host and in kernels).
    let k: i64 = 13;
    let odd: bool = on_every_target(|| accelerate!(backend = cpu, is_odd(k) && !is_even(k)));
    assert!(odd);
    let n: i64 = 12;
    let got = on_every_target(|| {
        let t = Tensor::<i64>::zeros(&[n as usize]);
        accelerate!(par_loop(n, |i| tensor_set(
            t,
            [i],
            if is_even(i) { 1 } else { 0 }
        )));
        t.to_vec()
    });
    assert_eq!(
        got,
        (0..12).map(|i| (i % 2 == 0) as i64).collect::<Vec<_>>()
    );
    let d: i64 = on_every_target(|| accelerate!(backend = cpu, steps_down(k) + steps_up(0, 0)));
    assert_eq!(d, 13);
}

/// `#[pmexpr]` functions that use path constants (those of the number types and of `std` or
/// `core`): each site that uses them captures the constants as it captures its own.
#[pmexpr]
fn clampneg(x: f64) -> f64 {
    x.max(f64::NEG_INFINITY)
}

#[pmexpr]
fn saturating_inc(x: i32) -> i32 {
    if x > i32::MAX - 1 { i32::MIN } else { x + 1 }
}

#[pmexpr]
fn wrap_down(x: u8) -> u8 {
    if x == u8::MIN { u8::MAX } else { x - 1 }
}

#[pmexpr]
fn near(a: f32, b: f32) -> bool {
    (a - b).abs() <= f32::EPSILON * 4.0
}

#[pmexpr]
fn disc(r: f64) -> f64 {
    clampneg(std::f64::consts::PI * r * r) + ::core::f64::consts::E * 0.0
}

#[test]
fn path_constants_in_pmexpr_functions() {
    let v: Vec<f64> = vec![1.0, -2.0, f64::MIN, 0.5];
    let got: Vec<f64> = on_every_target(|| accelerate!(map(|x| clampneg(x) + disc(x), v)));
    let want: Vec<f64> = v.iter().map(|&x| clampneg(x) + disc(x)).collect();
    assert_eq!(got, want);
    let ints: Vec<i32> = vec![i32::MAX, -5, i32::MIN];
    let bytes: Vec<u8> = vec![0, 1, 255];
    let floats: Vec<f32> = vec![0.1, 0.3, 1.0];
    let got = on_every_target(|| {
        accelerate!(
            backend = cpu,
            (
                map(|x| saturating_inc(x), ints),
                map(|x| wrap_down(x), bytes),
                map(|x| near(x + 0.2, 0.3), floats),
                disc(2.0) + f64::NEG_INFINITY,
            )
        )
    });
    let want = (
        ints.iter().map(|&x| saturating_inc(x)).collect::<Vec<_>>(),
        bytes.iter().map(|&x| wrap_down(x)).collect::<Vec<_>>(),
        floats
            .iter()
            .map(|&x| near(x + 0.2, 0.3))
            .collect::<Vec<_>>(),
        disc(2.0) + f64::NEG_INFINITY,
    );
    assert_eq!(got, want);
    // In a CUDA-class site: the kernel takes the constants as arguments.
    let got = on_every_target(|| {
        let t = Tensor::<i32>::from_vec(ints.clone(), &[3]);
        let u = Tensor::<u8>::from_vec(bytes.clone(), &[3]);
        let f = Tensor::<f64>::from_vec(vec![1.0, -1.0, 3.0], &[3]);
        accelerate!(par_loop(3, |i| {
            tensor_set(t, [i], saturating_inc(tensor_get(t, [i])));
            tensor_set(u, [i], wrap_down(tensor_get(u, [i])));
            tensor_set(f, [i], disc(tensor_get(f, [i])))
        }));
        (t.to_vec(), u.to_vec(), f.to_vec())
    });
    assert_eq!(got.0, want.0);
    assert_eq!(got.1, want.1);
    assert_eq!(got.2, [disc(1.0), disc(-1.0), disc(3.0)]);
}
