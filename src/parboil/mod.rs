//! The Parboil benchmarks of the paper's Table 1 — `sgemm`, `mri-q`, `stencil`, `histo` and
//! `tpacf` — ported from the Futhark versions in the public futhark-benchmarks suite
//! (`parboil/*.fut`) to `accelerate!` sites, each beside the same algorithm hand-written as
//! sequential Rust (the reference the results are checked against) and with rayon (the speed
//! baseline of the `cpu` target). `lbm` is left out, as the paper left it out: its Futhark
//! version takes and returns unique arrays (`*[n][s]f32`, updated in place), which PMExpr has no
//! way to say.
//!
//! The Parboil data files are not public in that repository (only pointers), so every dataset
//! is generated deterministically with the sizes of the Parboil datasets ([`Dataset`] says which
//! and where the numbers come from). The sites are written as the paper's language allows: every
//! one is Futhark-class (`map`, `map2`, `reduce`, `hist`, `flatten`), so the Futhark program the
//! build generates for it is what `futhark bench` can time beside the original (see
//! `examples/parboil.rs` and `tests/golden/parboil/`).
//!
//! Number types follow the originals: `f32` for sgemm and stencil, `i32` for histo's image and
//! counts and tpacf's counts, `f64` for tpacf's coordinates, `f32` for mri-q (its `sin`/`cos`
//! follow the float type of the captured values).

pub mod futhark_data;
pub mod histo;
pub mod mriq;
pub mod sgemm;
pub mod stencil;
pub mod tpacf;

/// A named dataset of a benchmark: its Parboil name and a one-line description of its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dataset {
    /// The benchmark (`sgemm`, `mri-q`, `stencil`, `histo`, `tpacf`).
    pub bench: &'static str,
    /// The dataset's Parboil name (`small`, `default`, …).
    pub name: &'static str,
    /// Its size in words.
    pub size: &'static str,
}

/// Every dataset, smallest first within each benchmark.
pub const DATASETS: &[Dataset] = &[
    Dataset {
        bench: "sgemm",
        name: "tiny",
        size: "A 32x32, B 32x32 (made up, as futhark-benchmarks' tiny is)",
    },
    Dataset {
        bench: "sgemm",
        name: "small",
        size: "A 128x96, B 96x160",
    },
    Dataset {
        bench: "sgemm",
        name: "medium",
        size: "A 1024x992, B 992x1056",
    },
    Dataset {
        bench: "mri-q",
        name: "small",
        size: "numK 3072, numX 32768 (32^3)",
    },
    Dataset {
        bench: "mri-q",
        name: "large",
        size: "numK 2048, numX 262144 (64^3)",
    },
    Dataset {
        bench: "stencil",
        name: "small",
        size: "128x128x32, 100 iterations",
    },
    Dataset {
        bench: "stencil",
        name: "default",
        size: "512x512x64, 100 iterations",
    },
    Dataset {
        bench: "histo",
        name: "default",
        size: "image 996x1040, 256x4096 bins",
    },
    Dataset {
        bench: "histo",
        name: "large",
        size: "image 1992x2080, 256x4096 bins",
    },
    Dataset {
        bench: "tpacf",
        name: "small",
        size: "487 points, 100 random sets",
    },
    Dataset {
        bench: "tpacf",
        name: "medium",
        size: "4096 points, 100 random sets",
    },
    Dataset {
        bench: "tpacf",
        name: "large",
        size: "10391 points, 100 random sets",
    },
];

/// The largest absolute difference between two float sequences relative to the largest magnitude
/// (at least 1), and whether the lengths agree.
pub fn max_rel_diff<T: Copy + Into<f64>>(a: &[T], b: &[T]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let scale = a
        .iter()
        .chain(b)
        .map(|&x| x.into().abs())
        .fold(1.0_f64, f64::max);
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (x.into() - y.into()).abs())
        .fold(0.0, f64::max)
        / scale
}
