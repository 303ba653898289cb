//! tpacf: the two-point angular correlation function (futhark-benchmarks `parboil/tpacf.fut`):
//! histograms of the angular distances between observed points (DD), observed and random points
//! (DR) and random points (RR), over 20 logarithmic bins from 1 to 10000 arcminutes, each pair's
//! bin found by a binary search. Coordinates are `f64`, counts `i32`, as in the original.

use pmexpr::accelerate;
use rayon::prelude::*;

/// The number of bins reported; the search uses two more (below and above the range).
pub const NUM_BINS: usize = 20;

/// The inputs: `numD` observed points and `numRs` sets of `numD` random points, as right
/// ascension and declination in degrees.
#[derive(Debug, Clone)]
pub struct Input {
    /// Right ascension of the observed points.
    pub datapoints_x: Vec<f64>,
    /// Declination of the observed points.
    pub datapoints_y: Vec<f64>,
    /// Right ascension of the random points, one row per set.
    pub random_x: Vec<Vec<f64>>,
    /// Declination of the random points.
    pub random_y: Vec<Vec<f64>>,
}

/// The dataset's `(numD, numRs)` (Parboil's tpacf: `-n 100 -p 487` small, `-p 4096` medium,
/// `-p 10391` large).
pub fn dims(dataset: &str) -> Option<(usize, usize)> {
    match dataset {
        "small" => Some((487, 100)),
        "medium" => Some((4096, 100)),
        "large" => Some((10391, 100)),
        _ => None,
    }
}

/// Deterministic points: right ascension in `[0, 360)`, declination in `[-90, 90)` degrees,
/// the observed ones clustered in a quarter of the sky (so that the small bins fill).
pub fn input(num_d: usize, num_rs: usize) -> Input {
    let mut rng = crate::Rng::new(0x7ac);
    let mut pts = |n: usize, spread: f64| -> (Vec<f64>, Vec<f64>) {
        (0..n)
            .map(|_| {
                (
                    360.0 * spread * rng.float(),
                    180.0 * spread * rng.float() - 90.0 * spread,
                )
            })
            .unzip()
    };
    let (datapoints_x, datapoints_y) = pts(num_d, 0.25);
    let (random_x, random_y) = (0..num_rs).map(|_| pts(num_d, 1.0)).unzip();
    Input {
        datapoints_x,
        datapoints_y,
        random_x,
        random_y,
    }
}

/// The accelerated port: `hist` over all pairs (`create(l, f)` for the bin of pair `k`, as the
/// original's `tabulate`), the binary search a tail-recursive function (the original's `loop …
/// while`; Futhark runs it as that loop). The result is the original's: for each bin 1..=20,
/// `[dd, dr, rr]`.
pub fn accelerated(input: &Input) -> Vec<i32> {
    let Input {
        datapoints_x,
        datapoints_y,
        random_x,
        random_y,
    } = input;
    // One pair counted: captured, it makes the counts `i32` as in the original (the literal
    // alone would be `i64`).
    let one: i32 = 1;
    accelerate!({
        let pi = 3.141592653589793;
        let dec2rad = |dec: f64| pi / 180.0 * dec;
        let log10 = |x: f64| log(x) / log(10.0);
        let binb = map(
            |k| cos(pow(10.0, log10(1.0) + int2float(k) * 1.0 / 5.0) / 60.0 * dec2rad(1.0)),
            create(21, |k| k),
        );
        let fix_points = |ra: f64, dec: f64| {
            let rarad = dec2rad(ra);
            let decrad = dec2rad(dec);
            let cd = cos(decrad);
            (cos(rarad) * cd, sin(rarad) * cd, sin(decrad))
        };
        // The binary search for `dot`: the original's `loop … while`, written as a function
        // that calls itself only as its last step (Futhark runs it as that loop, the CPU targets
        // as a Rust `loop`).
        fn search(dot: f64, lo: i64, hi: i64) -> (i64, i64) {
            if lo + 1 < hi {
                let k = (lo + hi) / 2;
                if dot >= binb[k] {
                    search(dot, lo, k)
                } else {
                    search(dot, k, hi)
                }
            } else {
                (lo, hi)
            }
        }
        let bin_of = |dot: f64| {
            let (lo, hi) = search(dot, 0, 20);
            if dot >= binb[lo] {
                lo
            } else if dot < binb[hi] {
                hi + 1
            } else {
                hi
            }
        };
        let do_compute = |dps: Vec<(f64, f64, f64)>, rnd: Vec<(f64, f64, f64)>| {
            let nd = length(dps);
            let l = nd * nd;
            hist(
                |a, b| a + b,
                0,
                22,
                create(l, |k| {
                    let p = dps[k / nd];
                    let q = rnd[k % nd];
                    bin_of(p.0 * q.0 + p.1 * q.1 + p.2 * q.2)
                }),
                create(l, |_| one),
            )
        };
        let do_compute_self = |dps: Vec<(f64, f64, f64)>| {
            let nd = length(dps);
            let l = nd * nd;
            hist(
                |a, b| a + b,
                0,
                22,
                create(l, |k| {
                    let i = k / nd;
                    let j = k % nd;
                    if j > i {
                        -1
                    } else {
                        let p = dps[i];
                        let q = dps[j];
                        bin_of(p.0 * q.0 + p.1 * q.1 + p.2 * q.2)
                    }
                }),
                create(l, |_| one),
            )
        };
        let sum_bins = |h| reduce(|a, b| map2(|x, y| x + y, a, b), create(22, |_| 0), h);
        let datapoints = map2(fix_points, datapoints_x, datapoints_y);
        let randompoints = map2(|xs, ys| map2(fix_points, xs, ys), random_x, random_y);
        let drs = map(|r| do_compute(datapoints, r), randompoints);
        let rrs = map(|r| do_compute_self(r), randompoints);
        let dd = do_compute_self(datapoints);
        let dr = sum_bins(drs);
        let rr = sum_bins(rrs);
        flatten(map(|b| [dd[b], dr[b], rr[b]], create(20, |b| b + 1)))
    })
}

/// The upper bin boundaries (as cosines, decreasing), as the original computes them.
fn boundaries() -> Vec<f64> {
    let dec2rad = |d: f64| std::f64::consts::PI / 180.0 * d;
    (0..=NUM_BINS)
        .map(|k| {
            let e = 1.0_f64.ln() / 10.0_f64.ln() + k as f64 * 1.0 / 5.0;
            (10.0_f64.powf(e) / 60.0 * dec2rad(1.0)).cos()
        })
        .collect()
}

fn fix_points(ra: f64, dec: f64) -> [f64; 3] {
    let dec2rad = |d: f64| std::f64::consts::PI / 180.0 * d;
    let (rarad, decrad) = (dec2rad(ra), dec2rad(dec));
    let cd = decrad.cos();
    [rarad.cos() * cd, rarad.sin() * cd, decrad.sin()]
}

#[inline]
fn bin_of(binb: &[f64], dot: f64) -> usize {
    let (mut lo, mut hi) = (0, NUM_BINS);
    while lo + 1 < hi {
        let k = (lo + hi) / 2;
        if dot >= binb[k] {
            hi = k;
        } else {
            lo = k;
        }
    }
    if dot >= binb[lo] {
        lo
    } else if dot < binb[hi] {
        hi + 1
    } else {
        hi
    }
}

/// The histogram of the pairs `k` in `range` of `0..n²`: `p = dps[k / n]`, `q = rnd[k % n]`
/// (skipped when `same` and `q` comes after `p`) — the original's formulation: one flat index
/// space over the pairs, as its `tabulate` gives it.
fn pairs(
    binb: &[f64],
    dps: &[[f64; 3]],
    rnd: &[[f64; 3]],
    same: bool,
    range: std::ops::Range<usize>,
) -> [i32; NUM_BINS + 2] {
    let n = dps.len();
    let mut h = [0; NUM_BINS + 2];
    for k in range {
        let (i, j) = (k / n, k % n);
        if same && j > i {
            continue;
        }
        let (p, q) = (dps[i], rnd[j]);
        h[bin_of(binb, p[0] * q[0] + p[1] * q[1] + p[2] * q[2])] += 1;
    }
    h
}

fn points(xs: &[f64], ys: &[f64]) -> Vec<[f64; 3]> {
    xs.iter().zip(ys).map(|(&x, &y)| fix_points(x, y)).collect()
}

fn result(dd: &[i32], dr: &[i32], rr: &[i32]) -> Vec<i32> {
    (1..=NUM_BINS).flat_map(|b| [dd[b], dr[b], rr[b]]).collect()
}

fn add(mut a: [i32; NUM_BINS + 2], b: [i32; NUM_BINS + 2]) -> [i32; NUM_BINS + 2] {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
    a
}

/// Hand-written sequential Rust: the reference.
pub fn sequential(input: &Input) -> Vec<i32> {
    let binb = boundaries();
    let dps = points(&input.datapoints_x, &input.datapoints_y);
    let rnds: Vec<Vec<[f64; 3]>> = input
        .random_x
        .iter()
        .zip(&input.random_y)
        .map(|(x, y)| points(x, y))
        .collect();
    let zero = [0; NUM_BINS + 2];
    let all = 0..dps.len() * dps.len();
    let dr = rnds
        .iter()
        .map(|r| pairs(&binb, &dps, r, false, all.clone()))
        .fold(zero, add);
    let rr = rnds
        .iter()
        .map(|r| pairs(&binb, r, r, true, all.clone()))
        .fold(zero, add);
    let dd = pairs(&binb, &dps, &dps, true, all);
    result(&dd, &dr, &rr)
}

/// Hand-written rayon: the random sets in parallel, and blocks of each histogram's pairs in
/// parallel (private histograms summed; enough blocks for DD, which runs alone).
pub fn rayon(input: &Input) -> Vec<i32> {
    let binb = boundaries();
    let dps = points(&input.datapoints_x, &input.datapoints_y);
    let rnds: Vec<Vec<[f64; 3]>> = input
        .random_x
        .par_iter()
        .zip(&input.random_y)
        .map(|(x, y)| points(x, y))
        .collect();
    let zero = [0; NUM_BINS + 2];
    let par_pairs = |a: &[[f64; 3]], b: &[[f64; 3]], same: bool| {
        let l = a.len() * a.len();
        let block = l.div_ceil(8 * rayon::current_num_threads()).max(1);
        (0..l.div_ceil(block))
            .into_par_iter()
            .map(|c| pairs(&binb, a, b, same, c * block..((c + 1) * block).min(l)))
            .reduce(|| zero, add)
    };
    let dr = rnds
        .par_iter()
        .map(|r| par_pairs(&dps, r, false))
        .reduce(|| zero, add);
    let rr = rnds
        .par_iter()
        .map(|r| par_pairs(r, r, true))
        .reduce(|| zero, add);
    let dd = par_pairs(&dps, &dps, true);
    result(&dd, &dr, &rr)
}
