//! The shapes of Futhark's keywords beyond the paper: `scan`, `filter`, and a radix sort pass built
//! from `map`, `scan` and `scatter`, each beside the best hand-written rayon version of the same
//! algorithm (a two-pass scan over chunks, rayon's own `filter().collect()`, the same pass with a
//! parallel scatter) and a sequential loop.

use pmexpr::{accelerate, with_target};
use rayon::prelude::*;

use super::{Outputs, Shape, Size, Variant, ints, pick};

/// The chunk of a hand-written two-pass algorithm: about eight per thread, as a careful rayon
/// program (and the `cpu` target) cut them.
fn chunk_len(n: usize) -> usize {
    (n / (8 * rayon::current_num_threads())).max(1)
}

/// The hand-written reduce-then-scan of `g(x)` over `xs` (the best for cheap elements: two reads
/// of the input, one write of the output), on rayon: each chunk's sum, the carries in order, then
/// each chunk scanned from its carry into its part of the result, not zeroed first.
pub fn rayon_scan(xs: &[i64], g: impl Fn(i64) -> i64 + Sync) -> Vec<i64> {
    let n = xs.len();
    let len = chunk_len(n);
    let sums: Vec<i64> = (xs.par_chunks(len))
        .map(|c| c.iter().fold(0_i64, |a, &x| a.wrapping_add(g(x))))
        .collect();
    let mut carries = Vec::with_capacity(sums.len());
    let mut acc = 0_i64;
    for s in sums {
        carries.push(acc);
        acc = acc.wrapping_add(s);
    }
    let mut out: Vec<i64> = Vec::with_capacity(n);
    (out.spare_capacity_mut().par_chunks_mut(len))
        .zip(xs.par_chunks(len))
        .zip(carries)
        .for_each(|((o, c), mut acc)| {
            for (slot, &x) in o.iter_mut().zip(c) {
                acc = acc.wrapping_add(g(x));
                slot.write(acc);
            }
        });
    // SAFETY: the chunks of the capacity and of `xs` have the same lengths, and each slot of
    // the first `n` was written above.
    unsafe { out.set_len(n) };
    out
}

/// The hand-written scan-then-propagate of `g(x)` over `xs` (the best for costly elements: each
/// made once): each chunk scanned from zero into its part of the result, the carries in order,
/// then the carry added in place to every chunk but the first.
pub fn rayon_scan_once(xs: &[i64], g: impl Fn(i64) -> i64 + Sync) -> Vec<i64> {
    let n = xs.len();
    let len = chunk_len(n);
    let mut out: Vec<i64> = Vec::with_capacity(n);
    let lasts: Vec<i64> = (out.spare_capacity_mut().par_chunks_mut(len))
        .zip(xs.par_chunks(len))
        .map(|(o, c)| {
            let mut acc = 0_i64;
            for (slot, &x) in o.iter_mut().zip(c) {
                acc = acc.wrapping_add(g(x));
                slot.write(acc);
            }
            acc
        })
        .collect();
    // SAFETY: every slot of the first `n` was written above (the chunks have equal lengths).
    unsafe { out.set_len(n) };
    let mut carries = Vec::with_capacity(lasts.len());
    let mut acc = 0_i64;
    for l in lasts {
        carries.push(acc);
        acc = acc.wrapping_add(l);
    }
    (out.par_chunks_mut(len))
        .zip(carries)
        .skip(1)
        .for_each(|(o, c)| o.iter_mut().for_each(|y| *y = y.wrapping_add(c)));
    out
}

/// The sequential scan of `g(x)` over `xs`.
fn sequential_scan(xs: &[i64], g: impl Fn(i64) -> i64) -> Vec<i64> {
    let mut acc = 0_i64;
    xs.iter()
        .map(|&x| {
            acc = acc.wrapping_add(g(x));
            acc
        })
        .collect()
}

/// `scan(addi, 0, s)`: the running sums of 10^7 i64.
pub struct ScanAdd {
    s: Vec<i64>,
    out: Outputs<i64>,
}

impl ScanAdd {
    pub(super) fn new(size: Size) -> Self {
        let s = crate::Rng::new(31).ints(pick(size, 5000, 10_000_000), -1_000_000, 1_000_000);
        ScanAdd {
            s,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(s: &[i64]) -> Vec<i64> {
        accelerate!(scan(addi, 0, s))
    }
}

impl Shape for ScanAdd {
    fn run(&mut self, v: Variant) {
        let s = &self.s;
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(s)),
            Variant::Rayon => rayon_scan(s, |x| x),
            Variant::Sequential => sequential_scan(s, |x| x),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

/// The compute-heavy function of [`ScanHeavy`]: eight rounds of a linear congruential step,
/// reduced modulo 2^31 (a constant divisor: multiplications and shifts).
#[inline]
pub fn heavy(x: i64) -> i64 {
    (0..8).fold(x, |a, j| {
        a.wrapping_mul(1103515245).wrapping_add(12345 + j) % 2147483648
    })
}

/// `scan(addi, 0, map(h, s))` with a compute-heavy `h` (eight rounds of a linear congruential
/// step: a loop per element, which the optimizer does not read twice), 10^7 i64.
pub struct ScanHeavy {
    s: Vec<i64>,
    out: Outputs<i64>,
}

impl ScanHeavy {
    pub(super) fn new(size: Size) -> Self {
        let s = crate::Rng::new(32).ints(pick(size, 5000, 10_000_000), 0, 1_000_000);
        ScanHeavy {
            s,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(s: &[i64]) -> Vec<i64> {
        accelerate!(scan(
            addi,
            0,
            map(
                |x| foldl(
                    |a, j| (a * 1103515245 + 12345 + j) % 2147483648,
                    x,
                    create(8, |j| j)
                ),
                s
            )
        ))
    }
}

impl Shape for ScanHeavy {
    fn run(&mut self, v: Variant) {
        let s = &self.s;
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(s)),
            Variant::Rayon => rayon_scan_once(s, heavy),
            Variant::Sequential => sequential_scan(s, heavy),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

/// `filter(|x| x % 3 == 0, s)`, 10^7 i64.
pub struct Filter {
    s: Vec<i64>,
    out: Outputs<i64>,
}

impl Filter {
    pub(super) fn new(size: Size) -> Self {
        let s = crate::Rng::new(33).ints(pick(size, 5000, 10_000_000), -1_000_000, 1_000_000);
        Filter {
            s,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(s: &[i64]) -> Vec<i64> {
        accelerate!(filter(|x| x % 3 == 0, s))
    }
}

impl Shape for Filter {
    fn run(&mut self, v: Variant) {
        let s = &self.s;
        let keep = |x: &i64| x % 3 == 0;
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(s)),
            Variant::Rayon => s.par_iter().copied().filter(keep).collect(),
            Variant::Sequential => s.iter().copied().filter(keep).collect(),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

/// One pass of a radix sort by bit 4 of non-negative numbers (a stable partition: the elements
/// whose bit is 0, then those whose bit is 1): the bits by `map`, their running count by `scan`,
/// each element's place computed from them and the elements written there by `scatter`;
/// 4·10^6 i64.
pub struct RadixPass {
    xs: Vec<i64>,
    out: Outputs<i64>,
}

impl RadixPass {
    pub(super) fn new(size: Size) -> Self {
        let xs = crate::Rng::new(34).ints(pick(size, 5000, 4_000_000), 0, 1 << 40);
        RadixPass {
            xs,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site (PMExpr has no bit operators: bit 4 is `x / 16 % 2`).
    pub fn accelerated(xs: &[i64]) -> Vec<i64> {
        let n = xs.len() as i64;
        accelerate!({
            let bits = map(|x| x / 16 % 2, xs);
            let ones = scan(addi, 0, bits);
            let zeros = n - (if n > 0 { ones[n - 1] } else { 0 });
            let is = create(n, |i| {
                let (b, o) = (bits[i], ones[i]);
                if b == 0 { i - o } else { zeros + o - 1 }
            });
            scatter([0; n], is, xs)
        })
    }

    /// The same pass hand-written with rayon: the bits collected, their two-pass scan, then each
    /// element written at its place by chunks in parallel.
    fn rayon(xs: &[i64]) -> Vec<i64> {
        let n = xs.len();
        let bits: Vec<i64> = xs.par_iter().map(|&x| (x >> 4) & 1).collect();
        let ones = rayon_scan(&bits, |b| b);
        let zeros = n as i64 - ones.last().copied().unwrap_or(0);
        let mut out = vec![0_i64; n];
        let dest = Dest(out.as_mut_ptr());
        let len = chunk_len(n);
        (xs.par_chunks(len))
            .zip(bits.par_chunks(len))
            .zip(ones.par_chunks(len))
            .enumerate()
            .for_each(|(c, ((xs, bits), ones))| {
                let dest = &dest;
                for (k, ((&x, &b), &o)) in xs.iter().zip(bits).zip(ones).enumerate() {
                    let i = (c * len + k) as i64;
                    let at = if b == 0 { i - o } else { zeros + o - 1 };
                    // SAFETY: `at` is the element's place in a stable partition of `0..n`:
                    // in range, and distinct for distinct elements, so no two writes overlap;
                    // `out` outlives the loop and nothing else touches it meanwhile.
                    unsafe { dest.0.add(at as usize).write(x) };
                }
            });
        out
    }

    fn sequential(xs: &[i64]) -> Vec<i64> {
        let bits: Vec<i64> = xs.iter().map(|&x| (x >> 4) & 1).collect();
        let ones = sequential_scan(&bits, |b| b);
        let zeros = xs.len() as i64 - ones.last().copied().unwrap_or(0);
        let mut out = vec![0_i64; xs.len()];
        for (i, ((&x, &b), &o)) in xs.iter().zip(&bits).zip(&ones).enumerate() {
            let at = if b == 0 { i as i64 - o } else { zeros + o - 1 };
            out[at as usize] = x;
        }
        out
    }
}

/// The destination of the hand-written parallel scatter, shared by its tasks.
struct Dest(*mut i64);
// SAFETY: the tasks write disjoint elements (see `RadixPass::rayon`).
unsafe impl Sync for Dest {}

impl Shape for RadixPass {
    fn run(&mut self, v: Variant) {
        let xs = &self.xs;
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(xs)),
            Variant::Rayon => Self::rayon(xs),
            Variant::Sequential => Self::sequential(xs),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}
