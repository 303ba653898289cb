//! The CPU benchmark: each of its three workloads as `accelerate!` on the `cpu` target
//! (and the Futhark-class ones on the `futhark` target when the build compiled the Futhark
//! library), as the same computation hand-written with rayon, and as idiomatic sequential Rust.
//!
//! ```text
//! cargo bench --bench cpu
//! ```
//!
//! Report ratios from one run (accelerate / rayon, sequential / accelerate): the machines are
//! shared and absolute times drift.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pmexpr::{Target, Tensor, accelerate, with_target};
use pmexpr_suite::Rng;
use rayon::prelude::*;
use std::hint::black_box;

const N: usize = 10_000_000;

/// The targets of the Futhark-class workloads: `cpu`, and `futhark` when the build compiled the
/// Futhark library (with the `futhark` compiler on `PATH` or in `PMEXPR_FUTHARK`).
fn cpu_and_futhark() -> Vec<Target> {
    match option_env!("PMEXPR_FUTHARK_LIBRARY") {
        Some(_) => vec![Target::Cpu, Target::Futhark],
        None => vec![Target::Cpu],
    }
}

/// `reduce(addi, 0, map(f, s))` over 10^7 i64, with the paper's Listing 2 function `f`.
fn reduce_map(c: &mut Criterion) {
    let s: Vec<i64> = Rng::new(1).ints(N, -1_000_000, 1_000_000);
    let k: i64 = 12;
    let mut g = c.benchmark_group("reduce_map_i64_1e7");
    for target in cpu_and_futhark() {
        g.bench_function(BenchmarkId::new("accelerate", target), |b| {
            b.iter(|| {
                with_target(target, || {
                    let s = black_box(&s);
                    let r: i64 = accelerate!({
                        let f = |x| muli(k, addi(x, 1));
                        reduce(addi, 0, map(f, s))
                    });
                    r
                })
            })
        });
    }
    g.bench_function(BenchmarkId::new("rayon", "hand-written"), |b| {
        b.iter(|| {
            black_box(&s)
                .par_iter()
                .map(|&x| k.wrapping_mul(x.wrapping_add(1)))
                .reduce(|| 0, i64::wrapping_add)
        })
    });
    g.bench_function(BenchmarkId::new("sequential", "iterator"), |b| {
        b.iter(|| {
            black_box(&s)
                .iter()
                .map(|&x| k.wrapping_mul(x.wrapping_add(1)))
                .fold(0, i64::wrapping_add)
        })
    });
    g.finish();
}

/// `map2(addf, a, b)` over 10^7 f64, returning a `Vec<f64>`.
fn map2_addf(c: &mut Criterion) {
    let mut rng = Rng::new(2);
    let (a, b) = (rng.floats(N), rng.floats(N));
    let mut g = c.benchmark_group("map2_addf_f64_1e7");
    for target in cpu_and_futhark() {
        g.bench_function(BenchmarkId::new("accelerate", target), |bn| {
            bn.iter(|| {
                with_target(target, || {
                    let (a, b) = (black_box(&a), black_box(&b));
                    let v: Vec<f64> = accelerate!(map2(addf, a, b));
                    v
                })
            })
        });
    }
    g.bench_function(BenchmarkId::new("rayon", "hand-written"), |bn| {
        bn.iter(|| {
            let (a, b) = (black_box(&a), black_box(&b));
            a.par_iter()
                .zip(b.par_iter())
                .map(|(x, y)| x + y)
                .collect::<Vec<f64>>()
        })
    });
    g.bench_function(BenchmarkId::new("sequential", "iterator"), |bn| {
        bn.iter(|| {
            let (a, b) = (black_box(&a), black_box(&b));
            a.iter().zip(b).map(|(x, y)| x + y).collect::<Vec<f64>>()
        })
    });
    g.finish();
}

/// `par_loop` axpy, `y[i] = a * x[i] + y[i]`, over tensors of 10^7 f64 (in place).
fn axpy(c: &mut Criterion) {
    let mut rng = Rng::new(3);
    let (xs, ys) = (rng.floats(N), rng.floats(N));
    let a = 2.5_f64;
    let n = N as i64;
    let mut g = c.benchmark_group("axpy_par_loop_f64_1e7");
    let x = Tensor::from_vec(xs.clone(), &[N]);
    let y = Tensor::from_vec(ys.clone(), &[N]);
    g.bench_function(BenchmarkId::new("accelerate", "cpu"), |b| {
        b.iter(|| {
            with_target(Target::Cpu, || {
                let (x, y) = (black_box(&x), black_box(&y));
                accelerate!(par_loop(n, |i| tensor_set(
                    y,
                    [i],
                    a * tensor_get(x, [i]) + tensor_get(y, [i])
                )))
            })
        })
    });
    let mut yv = ys.clone();
    g.bench_function(BenchmarkId::new("rayon", "hand-written"), |b| {
        b.iter(|| {
            let x = black_box(&xs);
            yv.par_iter_mut()
                .zip(x.par_iter())
                .for_each(|(y, x)| *y += a * x);
        })
    });
    let mut yv = ys.clone();
    g.bench_function(BenchmarkId::new("sequential", "loop"), |b| {
        b.iter(|| {
            let x = black_box(&xs);
            for (y, x) in yv.iter_mut().zip(x) {
                *y += a * x;
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = reduce_map, map2_addf, axpy
}
criterion_main!(benches);
