//! mri-q: the Q matrix of MRI reconstruction (futhark-benchmarks `parboil/mri-q.fut`): for every
//! point `x`, `Qr = Σ_k |φ_k|² cos(2π k·x)` and `Qi = Σ_k |φ_k|² sin(2π k·x)`.
//!
//! Computed in `f32`, as the original: `sin` and `cos` follow the float type of the captured values.

use pmexpr::accelerate;
use rayon::prelude::*;

const TWO_PI: f32 = 2.0 * std::f32::consts::PI;

/// The inputs: `numK` k-space samples and `numX` points.
#[derive(Debug, Clone)]
pub struct Input {
    /// Sample coordinates (`numK` each).
    pub kx: Vec<f32>,
    /// See `kx`.
    pub ky: Vec<f32>,
    /// See `kx`.
    pub kz: Vec<f32>,
    /// Point coordinates (`numX` each).
    pub x: Vec<f32>,
    /// See `x`.
    pub y: Vec<f32>,
    /// See `x`.
    pub z: Vec<f32>,
    /// Real part of φ (`numK`).
    pub phi_r: Vec<f32>,
    /// Imaginary part of φ (`numK`).
    pub phi_i: Vec<f32>,
}

/// The dataset's `(numK, numX)` (Parboil's mri-q small: 32³ points, 3072 samples; large: 64³
/// points, 2048 samples).
pub fn dims(dataset: &str) -> Option<(usize, usize)> {
    match dataset {
        "small" => Some((3072, 32 * 32 * 32)),
        "large" => Some((2048, 64 * 64 * 64)),
        _ => None,
    }
}

/// Deterministic inputs: coordinates in `[-0.5, 0.5)`, φ in `[-1, 1)`.
pub fn input(num_k: usize, num_x: usize) -> Input {
    let mut rng = crate::Rng::new(0x3a1);
    let mut v = |n: usize, s: f64| -> Vec<f32> {
        (0..n).map(|_| (s * (rng.float() - 0.5)) as f32).collect()
    };
    Input {
        kx: v(num_k, 1.0),
        ky: v(num_k, 1.0),
        kz: v(num_k, 1.0),
        x: v(num_x, 1.0),
        y: v(num_x, 1.0),
        z: v(num_x, 1.0),
        phi_r: v(num_k, 2.0),
        phi_i: v(num_k, 2.0),
    }
}

/// The accelerated port: one map over the points, a sum over the samples inside (both sums in one
/// pass, as Futhark fuses the original's two).
pub fn accelerated(input: &Input) -> (Vec<f32>, Vec<f32>) {
    let Input {
        kx,
        ky,
        kz,
        x,
        y,
        z,
        phi_r,
        phi_i,
    } = input;
    accelerate!({
        let phi_mag = map2(|r, i| r * r + i * i, phi_r, phi_i);
        let kxy = map2(|a, b| (a, b), kx, ky);
        let kzm = map2(|c, m| (c, m), kz, phi_mag);
        let ks = map2(|ab, cm| (ab.0, ab.1, cm.0, cm.1), kxy, kzm);
        let xy = map2(|a, b| (a, b), x, y);
        let q = map2(
            |p, ze| {
                reduce(
                    |s, t| (s.0 + t.0, s.1 + t.1),
                    (0.0, 0.0),
                    map(
                        |k| {
                            let e = 2.0 * 3.141592653589793 * (k.0 * p.0 + k.1 * p.1 + k.2 * ze);
                            (k.3 * cos(e), k.3 * sin(e))
                        },
                        ks,
                    ),
                )
            },
            xy,
            z,
        );
        (map(|r| r.0, q), map(|r| r.1, q))
    })
}

fn point(input: &Input, mag: &[f32], i: usize) -> (f32, f32) {
    let (xe, ye, ze) = (input.x[i], input.y[i], input.z[i]);
    let mut qr = 0.0;
    let mut qi = 0.0;
    for (k, &m) in mag.iter().enumerate() {
        let e = TWO_PI * (input.kx[k] * xe + input.ky[k] * ye + input.kz[k] * ze);
        qr += m * e.cos();
        qi += m * e.sin();
    }
    (qr, qi)
}

fn magnitudes(input: &Input) -> Vec<f32> {
    input
        .phi_r
        .iter()
        .zip(&input.phi_i)
        .map(|(r, i)| r * r + i * i)
        .collect()
}

/// Hand-written sequential Rust: the reference.
pub fn sequential(input: &Input) -> (Vec<f32>, Vec<f32>) {
    let mag = magnitudes(input);
    (0..input.x.len()).map(|i| point(input, &mag, i)).unzip()
}

/// Hand-written rayon: the points in parallel.
pub fn rayon(input: &Input) -> (Vec<f32>, Vec<f32>) {
    let mag = magnitudes(input);
    (0..input.x.len())
        .into_par_iter()
        .map(|i| point(input, &mag, i))
        .unzip()
}
