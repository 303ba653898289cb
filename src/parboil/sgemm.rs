//! sgemm: `C' = beta·C + alpha·(A·B)` in `f32` (futhark-benchmarks `parboil/sgemm.fut`: `mult`,
//! `scale`, `add` over row-major nested arrays).

use pmexpr::accelerate;
use rayon::prelude::*;

/// The inputs of one run.
#[derive(Debug, Clone)]
pub struct Input {
    /// `n × m`.
    pub a: Vec<Vec<f32>>,
    /// `m × p`.
    pub b: Vec<Vec<f32>>,
    /// `n × p`.
    pub c: Vec<Vec<f32>>,
    /// The factor of `A·B`.
    pub alpha: f32,
    /// The factor of `C`.
    pub beta: f32,
}

/// The dataset's `(n, m, p)`: Parboil's small and medium; tiny is our own (as futhark-benchmarks'
/// tiny is theirs).
pub fn dims(dataset: &str) -> Option<(usize, usize, usize)> {
    match dataset {
        "tiny" => Some((32, 32, 32)),
        "small" => Some((128, 96, 160)),
        "medium" => Some((1024, 992, 1056)),
        _ => None,
    }
}

/// Deterministic inputs of the given dimensions, entries in `[-1, 1)`.
pub fn input(n: usize, m: usize, p: usize) -> Input {
    let mut rng = crate::Rng::new(0x5e);
    let mut mat = |r: usize, c: usize| -> Vec<Vec<f32>> {
        (0..r)
            .map(|_| (0..c).map(|_| (2.0 * rng.float() - 1.0) as f32).collect())
            .collect()
    };
    let (a, b, c) = (mat(n, m), mat(m, p), mat(n, p));
    Input {
        a,
        b,
        c,
        alpha: 1.5,
        beta: 0.5,
    }
}

/// The accelerated port: the transposition of `B`, then one dot product per element.
pub fn accelerated(input: &Input) -> Vec<Vec<f32>> {
    let Input {
        a,
        b,
        c,
        alpha,
        beta,
    } = input;
    let (alpha, beta) = (*alpha, *beta);
    accelerate!({
        let p = length(head(b));
        let bt = map(|j| map(|row| row[j], b), create(p, |j| j));
        map2(
            |arow, crow| {
                map2(
                    |bcol, cij| {
                        cij * beta
                            + reduce(|x, y| x + y, 0.0, map2(|x, y| x * y, arow, bcol)) * alpha
                    },
                    bt,
                    crow,
                )
            },
            a,
            c,
        )
    })
}

/// `Bᵀ`, flat and row-major (`p × m`).
fn transpose(b: &[Vec<f32>]) -> Vec<f32> {
    let (m, p) = (b.len(), b[0].len());
    let mut t = vec![0.0; m * p];
    for (k, row) in b.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            t[j * m + k] = x;
        }
    }
    t
}

fn dot(x: &[f32], y: &[f32]) -> f32 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// Hand-written sequential Rust: the reference.
pub fn sequential(input: &Input) -> Vec<Vec<f32>> {
    let m = input.b.len();
    let bt = transpose(&input.b);
    input
        .a
        .iter()
        .zip(&input.c)
        .map(|(arow, crow)| {
            crow.iter()
                .zip(bt.chunks(m))
                .map(|(&cij, bcol)| cij * input.beta + dot(arow, bcol) * input.alpha)
                .collect()
        })
        .collect()
}

/// Hand-written rayon: rows of the result in parallel, each dot product a sequential loop.
pub fn rayon(input: &Input) -> Vec<Vec<f32>> {
    let m = input.b.len();
    let bt = transpose(&input.b);
    input
        .a
        .par_iter()
        .zip(&input.c)
        .map(|(arow, crow)| {
            crow.iter()
                .zip(bt.chunks(m))
                .map(|(&cij, bcol)| cij * input.beta + dot(arow, bcol) * input.alpha)
                .collect()
        })
        .collect()
}
