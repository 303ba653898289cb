//! stencil: a seven-point 3-D stencil in `f32`, run for a number of iterations with the edges kept
//! fixed (futhark-benchmarks `parboil/stencil.fut`; `c0 = 1/6`, `c1 = 1/36`). As in the original,
//! the input is one `ny × nz` slice replicated `nx` times, and the result is the first slice.

use pmexpr::accelerate;
use rayon::prelude::*;

/// The dataset's `(nx, ny, nz, iterations)` (Parboil's stencil small and default).
pub fn dims(dataset: &str) -> Option<(usize, usize, usize, usize)> {
    match dataset {
        "small" => Some((128, 128, 32, 100)),
        "default" => Some((512, 512, 64, 100)),
        _ => None,
    }
}

/// A deterministic `ny × nz` slice, values in `[0, 1)`.
pub fn input(ny: usize, nz: usize) -> Vec<Vec<f32>> {
    let mut rng = crate::Rng::new(0x57e);
    (0..ny)
        .map(|_| (0..nz).map(|_| rng.float() as f32).collect())
        .collect()
}

/// The accelerated port: `iterations` times a `map` over the three dimensions.
pub fn accelerated(iterations: i64, nx: i64, a0_slice: &[Vec<f32>]) -> Vec<Vec<f32>> {
    accelerate!({
        let c0 = 1.0 / 6.0;
        let c1 = 1.0 / 6.0 / 6.0;
        let ny = length(a0_slice);
        let nz = length(head(a0_slice));
        let is = create(nx, |i| i);
        let js = create(ny, |j| j);
        let ks = create(nz, |k| k);
        let a0 = create(nx, |_| a0_slice);
        // The original's `next` for every point; the rows a point reads are looked up once per
        // row (as Futhark hoists them), then the innermost map reads them by `k`.
        let a = foldl(
            |a, _| {
                map(
                    |i| {
                        let ai = a[i];
                        let below = a[if i == 0 { i } else { i - 1 }];
                        let above = a[if i == nx - 1 { i } else { i + 1 }];
                        map(
                            |j| {
                                let r = ai[j];
                                let left = ai[if j == 0 { j } else { j - 1 }];
                                let right = ai[if j == ny - 1 { j } else { j + 1 }];
                                let (rb, ra) = (below[j], above[j]);
                                let edge_row = i == 0 || i == nx - 1 || j == 0 || j == ny - 1;
                                map(
                                    |k| {
                                        if edge_row || k == 0 || k == nz - 1 {
                                            r[k]
                                        } else {
                                            (r[k + 1]
                                                + r[k - 1]
                                                + left[k]
                                                + right[k]
                                                + rb[k]
                                                + ra[k])
                                                * c1
                                                + r[k] * c0
                                        }
                                    },
                                    ks,
                                )
                            },
                            js,
                        )
                    },
                    is,
                )
            },
            a0,
            create(iterations, |t| t),
        );
        head(a)
    })
}

/// One step, flat arrays (`i` outermost): what both hand-written versions run per plane.
#[inline]
fn plane(src: &[f32], dst: &mut [f32], i: usize, nx: usize, ny: usize, nz: usize) {
    let (c0, c1) = (1.0_f32 / 6.0, 1.0_f32 / 6.0 / 6.0);
    let at = |i: usize, j: usize, k: usize| src[(i * ny + j) * nz + k];
    for j in 0..ny {
        for k in 0..nz {
            let o = j * nz + k;
            dst[o] = if i == 0 || i == nx - 1 || j == 0 || j == ny - 1 || k == 0 || k == nz - 1 {
                at(i, j, k)
            } else {
                (at(i, j, k + 1)
                    + at(i, j, k - 1)
                    + at(i, j - 1, k)
                    + at(i, j + 1, k)
                    + at(i - 1, j, k)
                    + at(i + 1, j, k))
                    * c1
                    + at(i, j, k) * c0
            };
        }
    }
}

fn run(iterations: usize, nx: usize, slice: &[Vec<f32>], parallel: bool) -> Vec<Vec<f32>> {
    let (ny, nz) = (slice.len(), slice[0].len());
    let flat: Vec<f32> = slice.iter().flatten().copied().collect();
    let mut a: Vec<f32> = (0..nx).flat_map(|_| flat.iter().copied()).collect();
    let mut b = vec![0.0_f32; a.len()];
    for _ in 0..iterations {
        if parallel {
            b.par_chunks_mut(ny * nz)
                .enumerate()
                .for_each(|(i, d)| plane(&a, d, i, nx, ny, nz));
        } else {
            b.chunks_mut(ny * nz)
                .enumerate()
                .for_each(|(i, d)| plane(&a, d, i, nx, ny, nz));
        }
        std::mem::swap(&mut a, &mut b);
    }
    a[..ny * nz].chunks(nz).map(<[f32]>::to_vec).collect()
}

/// Hand-written sequential Rust over flat arrays: the reference.
pub fn sequential(iterations: usize, nx: usize, slice: &[Vec<f32>]) -> Vec<Vec<f32>> {
    run(iterations, nx, slice, false)
}

/// Hand-written rayon over flat arrays: the `i` planes in parallel, two buffers swapped.
pub fn rayon(iterations: usize, nx: usize, slice: &[Vec<f32>]) -> Vec<Vec<f32>> {
    run(iterations, nx, slice, true)
}
