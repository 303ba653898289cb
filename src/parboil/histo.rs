//! histo: a saturating histogram (futhark-benchmarks `parboil/histo.fut`): every pixel of an
//! `i32` image is a bin index, each bin counts up to 255. One iteration, as in the Futhark port.

use pmexpr::accelerate;
use rayon::prelude::*;

/// The inputs: the histogram's shape and the image.
#[derive(Debug, Clone)]
pub struct Input {
    /// Bins per histogram row.
    pub histo_width: i64,
    /// Histogram rows.
    pub histo_height: i64,
    /// `img_width × img_height` bin indices in `0..histo_width * histo_height`.
    pub img: Vec<Vec<i32>>,
}

/// The dataset's `(img_width, img_height, histo_width, histo_height)`. Parboil's default image
/// is 996 × 1040 pixels into 256 × 4096 bins; we found no size for large, and use four times the
/// pixels into the same bins.
pub fn dims(dataset: &str) -> Option<(usize, usize, usize, usize)> {
    match dataset {
        "default" => Some((996, 1040, 4096, 256)),
        "large" => Some((1992, 2080, 4096, 256)),
        _ => None,
    }
}

/// A deterministic image: most pixels spread over a hump of bins, one in ten in 64 hot bins (so
/// that those saturate, as in Parboil's data).
pub fn input(w: usize, h: usize, hw: usize, hh: usize) -> Input {
    let mut rng = crate::Rng::new(0x415);
    let bins = (hw * hh) as f64;
    let img = (0..w)
        .map(|_| {
            (0..h)
                .map(|_| {
                    if rng.int(0, 10) == 0 {
                        (rng.int(0, 64) * 997) as i32
                    } else {
                        let u = (rng.float() + rng.float() + rng.float()) / 3.0;
                        ((u * bins) as i64).min(hw as i64 * hh as i64 - 1) as i32
                    }
                })
                .collect()
        })
        .collect();
    Input {
        histo_width: hw as i64,
        histo_height: hh as i64,
        img,
    }
}

/// The accelerated port: `hist` with a saturating add over the flattened image.
pub fn accelerated(input: &Input) -> Vec<i32> {
    let Input {
        histo_width,
        histo_height,
        img,
    } = input;
    let (histo_width, histo_height) = (*histo_width, *histo_height);
    // The original's `u8.highest`; captured, it also makes the counts `i32` (the literals alone
    // would be `i64`).
    let highest: i32 = u8::MAX as i32;
    accelerate!({
        let pixels = flatten(img);
        hist(
            |x, y| if x + y > highest { highest } else { x + y },
            0,
            histo_height * histo_width,
            pixels,
            map(|_| 1, pixels),
        )
    })
}

#[inline]
fn sat_add(x: i32, y: i32) -> i32 {
    if x + y > 255 { 255 } else { x + y }
}

/// Hand-written sequential Rust: the reference.
pub fn sequential(input: &Input) -> Vec<i32> {
    let mut bins = vec![0; (input.histo_width * input.histo_height) as usize];
    for row in &input.img {
        for &p in row {
            bins[p as usize] = sat_add(bins[p as usize], 1);
        }
    }
    bins
}

/// Hand-written rayon: one private histogram per task over a block of rows, merged with the
/// saturating add.
pub fn rayon(input: &Input) -> Vec<i32> {
    let k = (input.histo_width * input.histo_height) as usize;
    let rows_per_task = input.img.len().div_ceil(rayon::current_num_threads());
    input
        .img
        .par_chunks(rows_per_task.max(1))
        .map(|rows| {
            let mut bins = vec![0; k];
            for row in rows {
                for &p in row {
                    bins[p as usize] = sat_add(bins[p as usize], 1);
                }
            }
            bins
        })
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(x, &y)| *x = sat_add(*x, y));
            a
        })
        .unwrap_or_else(|| vec![0; k])
}
