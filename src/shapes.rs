//! The program shapes of the `cpu` target's contract: small real programs written as a new user
//! writes them in the README's style, each as an `accelerate!` site beside the same algorithm
//! hand-written with rayon and as a sequential Rust loop, on the same inputs. `benches/shapes.rs`
//! times them with criterion, `examples/shapes.rs` prints a table of medians and ratios, and
//! `tests/shapes.rs` checks that every version agrees.
//!
//! Every shape is a [`Shape`]: it owns its inputs and one set of outputs per [`Variant`] (the
//! tensor shapes write in place, so each variant has its own tensors). [`SHAPES`] lists them with a
//! constructor per [`Size`].

use pmexpr::{Target, Tensor, accelerate, with_target};
use rayon::prelude::*;

mod imperative;
mod streams;
pub use imperative::{
    BlockCountingSort, Fannkuch, LifeNeighbours, NbodySteps, Pathfinder, StencilSteps,
};
pub use streams::{Filter, RadixPass, ScanAdd, ScanHeavy, heavy, rayon_scan, rayon_scan_once};

/// One version of a shape's algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The `accelerate!` site on the given target.
    Accelerated(Target),
    /// The same algorithm hand-written with rayon.
    Rayon,
    /// The same algorithm hand-written as sequential Rust.
    Sequential,
}

/// The input sizes: `Small` for the tests (quick in an unoptimized build), `Bench` for the
/// benchmarks (1–50 ms per run on a 2-core machine in a release build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Test size.
    Small,
    /// Benchmark size.
    Bench,
}

/// A shape with its inputs and outputs.
pub trait Shape {
    /// Runs one version once, keeping (or writing in place) its result.
    fn run(&mut self, v: Variant);
    /// The result of the last run of `v` (every accelerated target shares one), as floats.
    fn output(&self, v: Variant) -> Vec<f64>;
}

/// A named shape and how to make it.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The short name (the criterion group).
    pub name: &'static str,
    /// What it computes, in words, with its benchmark size.
    pub what: &'static str,
    /// Makes it with deterministic inputs of the given size.
    pub make: fn(Size) -> Box<dyn Shape>,
}

/// Every shape: the six real programs (`argmin_foldl_create` to `matvec_dense`), the three of
/// `benches/cpu.rs`, two `create`s and a `par_loop` that read sequences at their positions plus
/// offsets, two loops of plain stores, the `scan`, `filter` and `scatter` shapes, then three of
/// imperative code (element writes in loops, small arrays, keywords over five elements).
pub const SHAPES: &[Entry] = &[
    Entry {
        name: "argmin_foldl_create",
        what: "argmin over k = 32 candidates per element, foldl over create(k), 2*10^5 elements",
        make: |s| Box::new(Argmin::new(s)),
    },
    Entry {
        name: "stencil2d",
        what: "2-D 5-point Jacobi, seq_loop of two par_loops, 512x512, 10 x 2 sweeps",
        make: |s| Box::new(Stencil2d::new(s)),
    },
    Entry {
        name: "stencil3d",
        what: "3-D 7-point Jacobi, seq_loop of two par_loops, 64^3, 5 x 2 sweeps",
        make: |s| Box::new(Stencil3d::new(s)),
    },
    Entry {
        name: "mandelbrot_foldl_tuple",
        what: "escape count, foldl over create(64) with (zr, zi, n) state, 256x256 points",
        make: |s| Box::new(Mandelbrot::new(s)),
    },
    Entry {
        name: "float_math_tuples",
        what: "sqrt/exp/sin/cos in a map over (f64, f64, f64), 10^6 elements",
        make: |s| Box::new(FloatTuples::new(s)),
    },
    Entry {
        name: "matvec_dense",
        what: "dense layer y = b + W x, par_loop over 2048 outputs of seq_loop_acc over 4096",
        make: |s| Box::new(MatVec::new(s)),
    },
    Entry {
        name: "matmul_par_loop",
        what: "C = A B, par_loop over 256x256 outputs of seq_loop_acc over 256",
        make: |s| Box::new(MatMul::new(s)),
    },
    Entry {
        name: "reduce_map",
        what: "reduce(addi, 0, map(f, s)), 4*10^6 i64",
        make: |s| Box::new(ReduceMap::new(s)),
    },
    Entry {
        name: "map2_addf",
        what: "map2(addf, a, b), 4*10^6 f64",
        make: |s| Box::new(Map2::new(s)),
    },
    Entry {
        name: "smooth_create",
        what: "create(n, |i| three-point average, the ends copied), n: usize as Rust counts, 4*10^6 f64",
        make: |s| Box::new(Smooth::new(s)),
    },
    Entry {
        name: "dot_create",
        what: "reduce(|a, b| a + b, 0, create(n, |i| x[i] * y[i])), 4*10^6 i64",
        make: |s| Box::new(DotCreate::new(s)),
    },
    Entry {
        name: "smooth_par_loop",
        what: "y[i] = (x[i - 1] + x[i + 1]) / 2 in a par_loop, the ends copied, x a Vec, 4*10^6 f64",
        make: |s| Box::new(SmoothInto::new(s)),
    },
    Entry {
        name: "axpy_par_loop",
        what: "y[i] = a x[i] + y[i] in a par_loop over tensors, 4*10^6 f64",
        make: |s| Box::new(Axpy::new(s)),
    },
    Entry {
        name: "poly_par_loop_f32",
        what: "y[i] = p(x[i]) + y[i] / 2, p a cubic, a par_loop over 2^18 f32 (in cache), 64 times",
        make: |s| Box::new(Poly::new(s)),
    },
    Entry {
        name: "poly_vec_par_loop_f32",
        what: "the same cubic reading x[i] of a captured Vec<f32>, its reads proven in range once per loop, 64 times",
        make: |s| Box::new(PolyVec::new(s)),
    },
    Entry {
        name: "listing1_closure",
        what: "Listing 1: par_loop(n, |i| axpy(2, i)) through a closure, 2^16 i64 (in cache), 64 times",
        make: |s| Box::new(Listing1::new(s)),
    },
    Entry {
        name: "scan_addi",
        what: "scan(addi, 0, s), 10^7 i64",
        make: |s| Box::new(ScanAdd::new(s)),
    },
    Entry {
        name: "scan_map_heavy",
        what: "scan(addi, 0, map(h, s)), h eight rounds of an LCG step (foldl over create(8)), 10^7 i64",
        make: |s| Box::new(ScanHeavy::new(s)),
    },
    Entry {
        name: "filter",
        what: "filter(|x| x % 3 == 0, s), 10^7 i64",
        make: |s| Box::new(Filter::new(s)),
    },
    Entry {
        name: "radix_pass",
        what: "one radix sort pass by a bit: map, scan, create of the places, scatter, 4*10^6 i64",
        make: |s| Box::new(RadixPass::new(s)),
    },
    Entry {
        name: "life_neighbours",
        what: "game of life, 1000x1000: 8 neighbours in an array literal, filter(..).len()",
        make: |s| Box::new(LifeNeighbours::new(s)),
    },
    Entry {
        name: "nbody_steps",
        what: "10^5 steps of 5 bodies: a create and four map2s of 5 elements per step",
        make: |s| Box::new(NbodySteps::new(s)),
    },
    Entry {
        name: "block_counting_sort",
        what: "counting sort of 2^20 keys in blocks of 4096: counts[k] += 1, out[start[k]] = k",
        make: |s| Box::new(BlockCountingSort::new(s)),
    },
    Entry {
        name: "fannkuch",
        what: "fannkuch-redux of 10 in 64 parts: flips by swap, rotations by element copies",
        make: |s| Box::new(Fannkuch::new(s)),
    },
    Entry {
        name: "stencil_steps",
        what: "100 steps of a 3-point stencil over 2^17 f64: cur = create(n, ..cur..)",
        make: |s| Box::new(StencilSteps::new(s)),
    },
    Entry {
        name: "pathfinder",
        what: "pathfinder, 100 rows of 10^5: row = create(cols, ..row..) per row",
        make: |s| Box::new(Pathfinder::new(s)),
    },
];

/// The largest difference between `got` and `want` relative to the largest magnitude of `want`
/// (at least 1), or infinity when the lengths differ.
pub fn rel_diff(got: &[f64], want: &[f64]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    let scale = want.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
    got.iter()
        .zip(want)
        .map(|(a, b)| if a == b { 0.0 } else { (a - b).abs() / scale })
        .fold(0.0, f64::max)
}

/// Runs every variant once on fresh inputs and checks each against the hand-written sequential
/// version: equal up to a relative 1e-9 (integers exactly; every shape adds in the same order
/// on every side).
pub fn check(entry: &Entry, size: Size, targets: &[Target]) -> Result<(), String> {
    let result = |v: Variant| {
        let mut s = (entry.make)(size);
        s.run(v);
        s.output(v)
    };
    let want = result(Variant::Sequential);
    let mut variants = vec![Variant::Rayon];
    variants.extend(targets.iter().map(|&t| Variant::Accelerated(t)));
    for v in variants {
        let d = rel_diff(&result(v), &want);
        if d > 1e-9 {
            return Err(format!(
                "{}: {v:?} differs from the sequential loop by {d}",
                entry.name
            ));
        }
    }
    Ok(())
}

fn ints(v: &[i64]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

fn pick(size: Size, small: usize, bench: usize) -> usize {
    match size {
        Size::Small => small,
        Size::Bench => bench,
    }
}

/// Results of the functional shapes, one per variant.
#[derive(Debug, Default)]
struct Outputs<T> {
    accelerated: Vec<T>,
    rayon: Vec<T>,
    sequential: Vec<T>,
}

impl<T: Copy> Outputs<T> {
    fn set(&mut self, v: Variant, r: Vec<T>) {
        match v {
            Variant::Accelerated(_) => self.accelerated = r,
            Variant::Rayon => self.rayon = r,
            Variant::Sequential => self.sequential = r,
        }
    }
    fn get(&self, v: Variant) -> &[T] {
        match v {
            Variant::Accelerated(_) => &self.accelerated,
            Variant::Rayon => &self.rayon,
            Variant::Sequential => &self.sequential,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// argmin by foldl over create

/// For every point, the index of the nearest of `k` centres (the first one on ties): a `foldl`
/// over `create(k, |c| c)` inside a `map`.
pub struct Argmin {
    xs: Vec<f64>,
    cs: Vec<f64>,
    out: Outputs<i64>,
}

impl Argmin {
    fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(15);
        let xs = rng.floats(pick(size, 1000, 200_000));
        let cs = rng.floats(pick(size, 7, 32));
        Argmin {
            xs,
            cs,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(xs: &[f64], cs: &[f64]) -> Vec<i64> {
        let k = cs.len() as i64;
        accelerate!(map(
            |x| foldl(
                |best, c| {
                    let d = x - cs[c];
                    let e = x - cs[best];
                    if d * d < e * e { c } else { best }
                },
                0,
                create(k, |c| c)
            ),
            xs
        ))
    }

    fn nearest(x: f64, cs: &[f64]) -> i64 {
        let mut best = 0;
        for c in 0..cs.len() {
            let (d, e) = (x - cs[c], x - cs[best]);
            if d * d < e * e {
                best = c;
            }
        }
        best as i64
    }
}

impl Shape for Argmin {
    fn run(&mut self, v: Variant) {
        let (xs, cs) = (&self.xs, &self.cs);
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(xs, cs)),
            Variant::Rayon => xs.par_iter().map(|&x| Self::nearest(x, cs)).collect(),
            Variant::Sequential => xs.iter().map(|&x| Self::nearest(x, cs)).collect(),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

// ---------------------------------------------------------------------------------------------
// 2-D and 3-D stencils

/// Two grids per variant, swept back and forth; the result is in the first.
struct Grids {
    acc: (Tensor<f64>, Tensor<f64>),
    rayon: (Vec<f64>, Vec<f64>),
    seq: (Vec<f64>, Vec<f64>),
}

impl Grids {
    fn new(shape: &[usize], seed: u64) -> Self {
        let n = shape.iter().product();
        let a = crate::Rng::new(seed).floats(n);
        Grids {
            acc: (
                Tensor::from_vec(a.clone(), shape),
                Tensor::from_vec(a.clone(), shape),
            ),
            rayon: (a.clone(), a.clone()),
            seq: (a.clone(), a),
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        match v {
            Variant::Accelerated(_) => self.acc.0.to_vec(),
            Variant::Rayon => self.rayon.0.clone(),
            Variant::Sequential => self.seq.0.clone(),
        }
    }
}

/// A 2-D 5-point Jacobi stencil over `ny × nx` with fixed boundary: `iters` times a `par_loop`
/// from `a` into `b` and one back, inside a `seq_loop`, with a boundary test per point.
pub struct Stencil2d {
    ny: usize,
    nx: usize,
    iters: usize,
    grids: Grids,
}

impl Stencil2d {
    fn new(size: Size) -> Self {
        let (ny, nx) = (pick(size, 20, 512), pick(size, 30, 512));
        Stencil2d {
            ny,
            nx,
            iters: pick(size, 3, 10),
            grids: Grids::new(&[ny, nx], 16),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(a: &Tensor<f64>, b: &Tensor<f64>, iters: i64) {
        accelerate!({
            let ny = tensor_shape(a)[0];
            let nx = tensor_shape(a)[1];
            let sweep = |src, dst| {
                par_loop(ny * nx, |k| {
                    let i = k / nx;
                    let j = k % nx;
                    if i == 0 || j == 0 || i == ny - 1 || j == nx - 1 {
                        tensor_set(dst, [i, j], tensor_get(src, [i, j]))
                    } else {
                        tensor_set(
                            dst,
                            [i, j],
                            0.2 * (tensor_get(src, [i, j])
                                + tensor_get(src, [i - 1, j])
                                + tensor_get(src, [i + 1, j])
                                + tensor_get(src, [i, j - 1])
                                + tensor_get(src, [i, j + 1])),
                        )
                    }
                })
            };
            seq_loop(iters, |_it| {
                sweep(a, b);
                sweep(b, a)
            })
        })
    }

    fn row(src: &[f64], dst: &mut [f64], i: usize, ny: usize, nx: usize) {
        for j in 0..nx {
            dst[j] = if i == 0 || j == 0 || i == ny - 1 || j == nx - 1 {
                src[i * nx + j]
            } else {
                0.2 * (src[i * nx + j]
                    + src[(i - 1) * nx + j]
                    + src[(i + 1) * nx + j]
                    + src[i * nx + j - 1]
                    + src[i * nx + j + 1])
            };
        }
    }
}

impl Shape for Stencil2d {
    fn run(&mut self, v: Variant) {
        let (ny, nx) = (self.ny, self.nx);
        match v {
            Variant::Accelerated(t) => {
                let (a, b) = &self.grids.acc;
                with_target(t, || Self::accelerated(a, b, self.iters as i64))
            }
            Variant::Rayon => {
                let (a, b) = &mut self.grids.rayon;
                // Each sweep writes `b` from `a`, then the swap makes the new grid `a`.
                for _ in 0..2 * self.iters {
                    b.par_chunks_mut(nx)
                        .enumerate()
                        .for_each(|(i, row)| Self::row(a, row, i, ny, nx));
                    std::mem::swap(a, b);
                }
            }
            Variant::Sequential => {
                let (a, b) = &mut self.grids.seq;
                for _ in 0..2 * self.iters {
                    for (i, row) in b.chunks_mut(nx).enumerate() {
                        Self::row(a, row, i, ny, nx);
                    }
                    std::mem::swap(a, b);
                }
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        self.grids.output(v)
    }
}

/// A 3-D 7-point Jacobi stencil over `n × n × n`, like [`Stencil2d`].
pub struct Stencil3d {
    n: usize,
    iters: usize,
    grids: Grids,
}

impl Stencil3d {
    fn new(size: Size) -> Self {
        let n = pick(size, 10, 64);
        Stencil3d {
            n,
            iters: pick(size, 2, 5),
            grids: Grids::new(&[n, n, n], 17),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(a: &Tensor<f64>, b: &Tensor<f64>, iters: i64) {
        accelerate!({
            let n = tensor_shape(a)[0];
            let sweep = |src, dst| {
                par_loop(n * n * n, |k| {
                    let i = k / (n * n);
                    let j = k / n % n;
                    let l = k % n;
                    if i == 0 || j == 0 || l == 0 || i == n - 1 || j == n - 1 || l == n - 1 {
                        tensor_set(dst, [i, j, l], tensor_get(src, [i, j, l]))
                    } else {
                        tensor_set(
                            dst,
                            [i, j, l],
                            (tensor_get(src, [i, j, l])
                                + tensor_get(src, [i - 1, j, l])
                                + tensor_get(src, [i + 1, j, l])
                                + tensor_get(src, [i, j - 1, l])
                                + tensor_get(src, [i, j + 1, l])
                                + tensor_get(src, [i, j, l - 1])
                                + tensor_get(src, [i, j, l + 1]))
                                / 7.0,
                        )
                    }
                })
            };
            seq_loop(iters, |_it| {
                sweep(a, b);
                sweep(b, a)
            })
        })
    }

    /// The plane `i` of `dst`.
    fn plane(src: &[f64], dst: &mut [f64], i: usize, n: usize) {
        let at = |i: usize, j: usize, l: usize| src[(i * n + j) * n + l];
        for j in 0..n {
            for l in 0..n {
                dst[j * n + l] =
                    if i == 0 || j == 0 || l == 0 || i == n - 1 || j == n - 1 || l == n - 1 {
                        at(i, j, l)
                    } else {
                        (at(i, j, l)
                            + at(i - 1, j, l)
                            + at(i + 1, j, l)
                            + at(i, j - 1, l)
                            + at(i, j + 1, l)
                            + at(i, j, l - 1)
                            + at(i, j, l + 1))
                            / 7.0
                    };
            }
        }
    }
}

impl Shape for Stencil3d {
    fn run(&mut self, v: Variant) {
        let n = self.n;
        match v {
            Variant::Accelerated(t) => {
                let (a, b) = &self.grids.acc;
                with_target(t, || Self::accelerated(a, b, self.iters as i64))
            }
            Variant::Rayon => {
                let (a, b) = &mut self.grids.rayon;
                for _ in 0..2 * self.iters {
                    b.par_chunks_mut(n * n)
                        .enumerate()
                        .for_each(|(i, p)| Self::plane(a, p, i, n));
                    std::mem::swap(a, b);
                }
            }
            Variant::Sequential => {
                let (a, b) = &mut self.grids.seq;
                for _ in 0..2 * self.iters {
                    for (i, p) in b.chunks_mut(n * n).enumerate() {
                        Self::plane(a, p, i, n);
                    }
                    std::mem::swap(a, b);
                }
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        self.grids.output(v)
    }
}

// ---------------------------------------------------------------------------------------------
// bounded iteration with tuple state

/// The Mandelbrot escape count of every point of a grid over `[-2, 1) × [-1.5, 1.5)`: a `foldl`
/// over `create(maxit, |i| i)` carrying `(zr, zi, n)`, which stops changing once `|z| > 2`.
pub struct Mandelbrot {
    ps: Vec<(f64, f64)>,
    maxit: i64,
    out: Outputs<i64>,
}

impl Mandelbrot {
    fn new(size: Size) -> Self {
        let side = pick(size, 24, 256);
        let ps = (0..side * side)
            .map(|k| {
                let (y, x) = ((k / side) as f64, (k % side) as f64);
                (-2.0 + 3.0 * x / side as f64, -1.5 + 3.0 * y / side as f64)
            })
            .collect();
        Mandelbrot {
            ps,
            maxit: pick(size, 20, 64) as i64,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(ps: &[(f64, f64)], maxit: i64) -> Vec<i64> {
        accelerate!(map(
            |p| {
                let r = foldl(
                    |st, _i| {
                        let (zr, zi, n) = st;
                        if zr * zr + zi * zi > 4.0 {
                            st
                        } else {
                            (zr * zr - zi * zi + p.0, 2.0 * zr * zi + p.1, n + 1)
                        }
                    },
                    (0.0, 0.0, 0),
                    create(maxit, |i| i),
                );
                r.2
            },
            ps
        ))
    }

    fn count(&(cr, ci): &(f64, f64), maxit: i64) -> i64 {
        let (mut zr, mut zi, mut n) = (0.0_f64, 0.0_f64, 0_i64);
        for _ in 0..maxit {
            if zr * zr + zi * zi <= 4.0 {
                (zr, zi, n) = (zr * zr - zi * zi + cr, 2.0 * zr * zi + ci, n + 1);
            }
        }
        n
    }
}

impl Shape for Mandelbrot {
    fn run(&mut self, v: Variant) {
        let (ps, maxit) = (&self.ps, self.maxit);
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(ps, maxit)),
            Variant::Rayon => ps.par_iter().map(|p| Self::count(p, maxit)).collect(),
            Variant::Sequential => ps.iter().map(|p| Self::count(p, maxit)).collect(),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

// ---------------------------------------------------------------------------------------------
// float math over tuples

/// `sqrt(x² + y²) · exp(−z) + sin(x) · cos(y)` over a sequence of `(x, y, z)`.
pub struct FloatTuples {
    ps: Vec<(f64, f64, f64)>,
    out: Outputs<f64>,
}

impl FloatTuples {
    fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(18);
        let ps = (0..pick(size, 1000, 1_000_000))
            .map(|_| (rng.float(), rng.float(), rng.float()))
            .collect();
        FloatTuples {
            ps,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(ps: &[(f64, f64, f64)]) -> Vec<f64> {
        accelerate!(map(
            |p| sqrt(p.0 * p.0 + p.1 * p.1) * exp(-p.2) + sin(p.0) * cos(p.1),
            ps
        ))
    }

    fn f(&(x, y, z): &(f64, f64, f64)) -> f64 {
        (x * x + y * y).sqrt() * (-z).exp() + x.sin() * y.cos()
    }
}

impl Shape for FloatTuples {
    fn run(&mut self, v: Variant) {
        let ps = &self.ps;
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(ps)),
            Variant::Rayon => ps.par_iter().map(Self::f).collect(),
            Variant::Sequential => ps.iter().map(Self::f).collect(),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        self.out.get(v).to_vec()
    }
}

// ---------------------------------------------------------------------------------------------
// matrix-vector and matrix-matrix products

/// A dense layer `y = b + W x` (`W` is `outs × ins`, row-major): a `par_loop` over the outputs,
/// each a `seq_loop_acc` dot product over tensors.
pub struct MatVec {
    ins: usize,
    w: Vec<f64>,
    x: Vec<f64>,
    b: Vec<f64>,
    tw: Tensor<f64>,
    tx: Tensor<f64>,
    tb: Tensor<f64>,
    ty: Tensor<f64>,
    out: Outputs<f64>,
}

impl MatVec {
    fn new(size: Size) -> Self {
        let (outs, ins) = (pick(size, 30, 2048), pick(size, 50, 4096));
        let mut rng = crate::Rng::new(19);
        let (w, x, b) = (rng.floats(outs * ins), rng.floats(ins), rng.floats(outs));
        MatVec {
            tw: Tensor::from_vec(w.clone(), &[outs, ins]),
            tx: Tensor::from_vec(x.clone(), &[ins]),
            tb: Tensor::from_vec(b.clone(), &[outs]),
            ty: Tensor::zeros(&[outs]),
            ins,
            w,
            x,
            b,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(w: &Tensor<f64>, x: &Tensor<f64>, b: &Tensor<f64>, y: &Tensor<f64>) {
        accelerate!({
            let outs = tensor_shape(w)[0];
            let ins = tensor_shape(w)[1];
            par_loop(outs, |o| {
                tensor_set(
                    y,
                    [o],
                    seq_loop_acc(tensor_get(b, [o]), ins, |acc, i| {
                        acc + tensor_get(w, [o, i]) * tensor_get(x, [i])
                    }),
                )
            })
        })
    }

    fn dot(b: f64, row: &[f64], x: &[f64]) -> f64 {
        row.iter().zip(x).fold(b, |acc, (w, x)| acc + w * x)
    }
}

impl Shape for MatVec {
    fn run(&mut self, v: Variant) {
        let (w, x, ins) = (&self.w, &self.x, self.ins);
        match v {
            Variant::Accelerated(t) => with_target(t, || {
                Self::accelerated(&self.tw, &self.tx, &self.tb, &self.ty)
            }),
            Variant::Rayon => {
                let y = w
                    .par_chunks(ins)
                    .zip(&self.b)
                    .map(|(row, &b)| Self::dot(b, row, x))
                    .collect();
                self.out.set(v, y);
            }
            Variant::Sequential => {
                let y = w
                    .chunks(ins)
                    .zip(&self.b)
                    .map(|(row, &b)| Self::dot(b, row, x))
                    .collect();
                self.out.set(v, y);
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        match v {
            Variant::Accelerated(_) => self.ty.to_vec(),
            _ => self.out.get(v).to_vec(),
        }
    }
}

/// `C = A B` for `n × n` matrices: a `par_loop` over the elements of `C` (`k / n`, `k % n`), each
/// a `seq_loop_acc` dot product of a row of `A` and a column of `B`.
pub struct MatMul {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    ta: Tensor<f64>,
    tb: Tensor<f64>,
    tc: Tensor<f64>,
    out: Outputs<f64>,
}

impl MatMul {
    fn new(size: Size) -> Self {
        let n = pick(size, 24, 256);
        let mut rng = crate::Rng::new(20);
        let (a, b) = (rng.floats(n * n), rng.floats(n * n));
        MatMul {
            ta: Tensor::from_vec(a.clone(), &[n, n]),
            tb: Tensor::from_vec(b.clone(), &[n, n]),
            tc: Tensor::zeros(&[n, n]),
            n,
            a,
            b,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(a: &Tensor<f64>, b: &Tensor<f64>, c: &Tensor<f64>) {
        accelerate!({
            let n = tensor_shape(a)[0];
            let m = tensor_shape(a)[1];
            let p = tensor_shape(b)[1];
            par_loop(n * p, |k| {
                let i = k / p;
                let j = k % p;
                tensor_set(
                    c,
                    [i, j],
                    seq_loop_acc(0.0, m, |acc, l| {
                        acc + tensor_get(a, [i, l]) * tensor_get(b, [l, j])
                    }),
                )
            })
        })
    }

    fn row(a: &[f64], b: &[f64], i: usize, n: usize, row: &mut [f64]) {
        for (j, c) in row.iter_mut().enumerate() {
            let mut acc = 0.0;
            for l in 0..n {
                acc += a[i * n + l] * b[l * n + j];
            }
            *c = acc;
        }
    }
}

impl Shape for MatMul {
    fn run(&mut self, v: Variant) {
        let (a, b, n) = (&self.a, &self.b, self.n);
        match v {
            Variant::Accelerated(t) => {
                with_target(t, || Self::accelerated(&self.ta, &self.tb, &self.tc))
            }
            Variant::Rayon => {
                let mut c = vec![0.0; n * n];
                c.par_chunks_mut(n)
                    .enumerate()
                    .for_each(|(i, row)| Self::row(a, b, i, n, row));
                self.out.set(v, c);
            }
            Variant::Sequential => {
                let mut c = vec![0.0; n * n];
                for (i, row) in c.chunks_mut(n).enumerate() {
                    Self::row(a, b, i, n, row);
                }
                self.out.set(v, c);
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        match v {
            Variant::Accelerated(_) => self.tc.to_vec(),
            _ => self.out.get(v).to_vec(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the three shapes of benches/cpu.rs

/// `reduce(addi, 0, map(f, s))` with the paper's Listing 2 function `f`.
pub struct ReduceMap {
    s: Vec<i64>,
    out: Outputs<i64>,
}

impl ReduceMap {
    fn new(size: Size) -> Self {
        let s = crate::Rng::new(1).ints(pick(size, 1000, 4_000_000), -1_000_000, 1_000_000);
        ReduceMap {
            s,
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(s: &[i64], k: i64) -> i64 {
        accelerate!({
            let f = |x| muli(k, addi(x, 1));
            reduce(addi, 0, map(f, s))
        })
    }
}

impl Shape for ReduceMap {
    fn run(&mut self, v: Variant) {
        let (s, k) = (&self.s, 12_i64);
        let f = |&x: &i64| k.wrapping_mul(x.wrapping_add(1));
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(s, k)),
            Variant::Rayon => s.par_iter().map(f).reduce(|| 0, i64::wrapping_add),
            Variant::Sequential => s.iter().map(f).fold(0, i64::wrapping_add),
        };
        self.out.set(v, vec![r]);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

/// `map2(addf, a, b)`, returning a `Vec<f64>`.
pub struct Map2 {
    a: Vec<f64>,
    b: Vec<f64>,
    out: Outputs<f64>,
}

impl Map2 {
    fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(2);
        let n = pick(size, 1000, 4_000_000);
        Map2 {
            a: rng.floats(n),
            b: rng.floats(n),
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(a: &[f64], b: &[f64]) -> Vec<f64> {
        accelerate!(map2(addf, a, b))
    }
}

impl Shape for Map2 {
    fn run(&mut self, v: Variant) {
        let (a, b) = (&self.a, &self.b);
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(a, b)),
            Variant::Rayon => a.par_iter().zip(b).map(|(x, y)| x + y).collect(),
            Variant::Sequential => a.iter().zip(b).map(|(x, y)| x + y).collect(),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        self.out.get(v).to_vec()
    }
}

/// A three-point average over a `Vec<f64>` as a Rust user ports
/// `(0..n).into_par_iter().map(|i| …).collect()`: a `create` whose interior reads `s[i - 1]`,
/// `s[i]`, `s[i + 1]`, its ends copied.
pub struct Smooth {
    s: Vec<f64>,
    out: Outputs<f64>,
}

impl Smooth {
    fn new(size: Size) -> Self {
        Smooth {
            s: crate::Rng::new(4).floats(pick(size, 1000, 4_000_000)),
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(s: &[f64]) -> Vec<f64> {
        let n = s.len();
        accelerate!(create(n, |i| if i == 0 || i == n - 1 {
            s[i]
        } else {
            (s[i - 1] + s[i] + s[i + 1]) * 0.25
        }))
    }

    fn at(s: &[f64], i: usize) -> f64 {
        if i == 0 || i == s.len() - 1 {
            s[i]
        } else {
            (s[i - 1] + s[i] + s[i + 1]) * 0.25
        }
    }
}

impl Shape for Smooth {
    fn run(&mut self, v: Variant) {
        let s = &self.s;
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(s)),
            Variant::Rayon => (0..s.len())
                .into_par_iter()
                .map(|i| Self::at(s, i))
                .collect(),
            Variant::Sequential => (0..s.len()).map(|i| Self::at(s, i)).collect(),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        self.out.get(v).to_vec()
    }
}

/// A dot product over positions, `Σ x[i] · y[i]`, as a Rust user ports
/// `(0..n).into_par_iter().map(|i| x[i] * y[i]).sum()`.
pub struct DotCreate {
    x: Vec<i64>,
    y: Vec<i64>,
    out: Outputs<i64>,
}

impl DotCreate {
    fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(5);
        let n = pick(size, 1000, 4_000_000);
        DotCreate {
            x: rng.ints(n, -1000, 1000),
            y: rng.ints(n, -1000, 1000),
            out: Outputs::default(),
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(x: &[i64], y: &[i64]) -> i64 {
        let n = x.len();
        accelerate!(reduce(|a, b| a + b, 0, create(n, |i| x[i] * y[i])))
    }
}

impl Shape for DotCreate {
    fn run(&mut self, v: Variant) {
        let (x, y) = (&self.x, &self.y);
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(x, y)),
            Variant::Rayon => (0..x.len()).into_par_iter().map(|i| x[i] * y[i]).sum(),
            Variant::Sequential => (0..x.len()).map(|i| x[i] * y[i]).sum(),
        };
        self.out.set(v, vec![r]);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

/// The three-point average written in place as a Rust user ports
/// `y.par_iter_mut().enumerate()`: a `par_loop` writing `y[i]` from `x[i - 1]` and `x[i + 1]` of
/// a `Vec`, its ends copied.
pub struct SmoothInto {
    x: Vec<f64>,
    acc: Tensor<f64>,
    rayon: Vec<f64>,
    seq: Vec<f64>,
}

impl SmoothInto {
    fn new(size: Size) -> Self {
        let n = pick(size, 1000, 4_000_000);
        SmoothInto {
            x: crate::Rng::new(6).floats(n),
            acc: Tensor::zeros(&[n]),
            rayon: vec![0.0; n],
            seq: vec![0.0; n],
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(x: &[f64], y: &Tensor<f64>) {
        let n = x.len();
        accelerate!(par_loop(n, |i| tensor_set(
            y,
            [i],
            if i == 0 || i == n - 1 {
                x[i]
            } else {
                0.5 * (x[i - 1] + x[i + 1])
            }
        )))
    }

    fn at(x: &[f64], i: usize) -> f64 {
        if i == 0 || i == x.len() - 1 {
            x[i]
        } else {
            0.5 * (x[i - 1] + x[i + 1])
        }
    }
}

impl Shape for SmoothInto {
    fn run(&mut self, v: Variant) {
        let x = &self.x;
        match v {
            Variant::Accelerated(t) => with_target(t, || Self::accelerated(x, &self.acc)),
            Variant::Rayon => {
                (self.rayon.par_iter_mut().enumerate()).for_each(|(i, y)| *y = Self::at(x, i))
            }
            Variant::Sequential => {
                for (i, y) in self.seq.iter_mut().enumerate() {
                    *y = Self::at(x, i);
                }
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        match v {
            Variant::Accelerated(_) => self.acc.to_vec(),
            Variant::Rayon => self.rayon.clone(),
            Variant::Sequential => self.seq.clone(),
        }
    }
}

/// `y[i] = a · x[i] + y[i]` in a `par_loop` over tensors (in place).
pub struct Axpy {
    x: Vec<f64>,
    acc: (Tensor<f64>, Tensor<f64>),
    rayon: Vec<f64>,
    seq: Vec<f64>,
}

const AXPY_A: f64 = 2.5;

impl Axpy {
    fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(3);
        let n = pick(size, 1000, 4_000_000);
        let (x, y) = (rng.floats(n), rng.floats(n));
        Axpy {
            acc: (
                Tensor::from_vec(x.clone(), &[n]),
                Tensor::from_vec(y.clone(), &[n]),
            ),
            x,
            rayon: y.clone(),
            seq: y,
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(x: &Tensor<f64>, y: &Tensor<f64>, a: f64) {
        accelerate!(par_loop(tensor_shape(x)[0], |i| tensor_set(
            y,
            [i],
            a * tensor_get(x, [i]) + tensor_get(y, [i])
        )))
    }
}

impl Shape for Axpy {
    fn run(&mut self, v: Variant) {
        let (x, a) = (&self.x, AXPY_A);
        match v {
            Variant::Accelerated(t) => {
                let (tx, ty) = &self.acc;
                with_target(t, || Self::accelerated(tx, ty, a))
            }
            Variant::Rayon => self
                .rayon
                .par_iter_mut()
                .zip(x)
                .for_each(|(y, x)| *y += a * x),
            Variant::Sequential => {
                for (y, x) in self.seq.iter_mut().zip(x) {
                    *y += a * x;
                }
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        match v {
            Variant::Accelerated(_) => self.acc.1.to_vec(),
            Variant::Rayon => self.rayon.clone(),
            Variant::Sequential => self.seq.clone(),
        }
    }
}

/// A par_loop whose body is arithmetic on rows of `f32` tensors that stay in cache: what plain
/// loops (vectorized stores, see the runtime's `access` module) are for.
pub struct Poly {
    x: Vec<f32>,
    acc: (Tensor<f32>, Tensor<f32>),
    rayon: Vec<f32>,
    seq: Vec<f32>,
    times: i64,
}

const POLY: [f32; 4] = [1.5, -0.5, 0.25, 2.0];

impl Poly {
    fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(11);
        let n = pick(size, 1000, 1 << 18);
        let x: Vec<f32> = rng.floats(n).into_iter().map(|v| v as f32).collect();
        Poly {
            acc: (Tensor::from_vec(x.clone(), &[n]), Tensor::zeros(&[n])),
            x,
            rayon: vec![0.0; n],
            seq: vec![0.0; n],
            times: pick(size, 3, 64) as i64,
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(x: &Tensor<f32>, y: &Tensor<f32>, [a, b, c, d]: [f32; 4], times: i64) {
        accelerate!(seq_loop(times, |_| par_loop(tensor_shape(x)[0], |i| {
            let v = tensor_get(x, [i]);
            tensor_set(
                y,
                [i],
                ((a * v + b) * v + c) * v + d + tensor_get(y, [i]) * 0.5,
            )
        })))
    }

    #[inline(always)]
    fn step(y: &mut f32, v: f32) {
        let [a, b, c, d] = POLY;
        *y = ((a * v + b) * v + c) * v + d + *y * 0.5;
    }
}

impl Shape for Poly {
    fn run(&mut self, v: Variant) {
        let x = &self.x;
        match v {
            Variant::Accelerated(t) => {
                let (tx, ty) = &self.acc;
                with_target(t, || Self::accelerated(tx, ty, POLY, self.times))
            }
            Variant::Rayon => {
                for _ in 0..self.times {
                    (self.rayon.par_chunks_mut(4096).zip(x.par_chunks(4096))).for_each(
                        |(ys, xs)| ys.iter_mut().zip(xs).for_each(|(y, &v)| Self::step(y, v)),
                    );
                }
            }
            Variant::Sequential => {
                for _ in 0..self.times {
                    self.seq
                        .iter_mut()
                        .zip(x)
                        .for_each(|(y, &v)| Self::step(y, v));
                }
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        let y = match v {
            Variant::Accelerated(_) => self.acc.1.to_vec(),
            Variant::Rayon => self.rayon.clone(),
            Variant::Sequential => self.seq.clone(),
        };
        y.into_iter().map(f64::from).collect()
    }
}

/// [`Poly`] with `x` a captured `Vec<f32>` read as `x[i]`: the loop's reads of `x` are proven in
/// range by one check before it, and the plain loop reads `x` through a slice of each chunk.
pub struct PolyVec {
    x: Vec<f32>,
    acc: Tensor<f32>,
    rayon: Vec<f32>,
    seq: Vec<f32>,
    times: i64,
}

impl PolyVec {
    fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(11);
        let n = pick(size, 1000, 1 << 18);
        let x: Vec<f32> = rng.floats(n).into_iter().map(|v| v as f32).collect();
        PolyVec {
            acc: Tensor::zeros(&[n]),
            x,
            rayon: vec![0.0; n],
            seq: vec![0.0; n],
            times: pick(size, 3, 64) as i64,
        }
    }

    /// The `accelerate!` site.
    pub fn accelerated(x: &[f32], y: &Tensor<f32>, [a, b, c, d]: [f32; 4], times: i64) {
        accelerate!(seq_loop(times, |_| par_loop(length(x), |i| {
            let v = x[i];
            tensor_set(
                y,
                [i],
                ((a * v + b) * v + c) * v + d + tensor_get(y, [i]) * 0.5,
            )
        })))
    }
}

impl Shape for PolyVec {
    fn run(&mut self, v: Variant) {
        let x = &self.x;
        match v {
            Variant::Accelerated(t) => {
                with_target(t, || Self::accelerated(x, &self.acc, POLY, self.times))
            }
            Variant::Rayon => {
                for _ in 0..self.times {
                    (self.rayon.par_chunks_mut(4096).zip(x.par_chunks(4096))).for_each(
                        |(ys, xs)| ys.iter_mut().zip(xs).for_each(|(y, &v)| Poly::step(y, v)),
                    );
                }
            }
            Variant::Sequential => {
                for _ in 0..self.times {
                    self.seq
                        .iter_mut()
                        .zip(x)
                        .for_each(|(y, &v)| Poly::step(y, v));
                }
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        let y = match v {
            Variant::Accelerated(_) => self.acc.to_vec(),
            Variant::Rayon => self.rayon.clone(),
            Variant::Sequential => self.seq.clone(),
        };
        y.into_iter().map(f64::from).collect()
    }
}

/// The paper's Listing 1, first expression: `t1[i] += c · t2[i]`, the loop body a call of a
/// closure (`axpy`), on `i64` tensors that stay in cache, repeated.
pub struct Listing1 {
    t2: Vec<i64>,
    acc: (Tensor<i64>, Tensor<i64>),
    rayon: Vec<i64>,
    seq: Vec<i64>,
    times: i64,
}

impl Listing1 {
    fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(2024);
        let n = pick(size, 1000, 1 << 16);
        let (t1, t2) = (rng.ints(n, 0, 100), rng.ints(n, 0, 100));
        Listing1 {
            acc: (
                Tensor::from_vec(t1.clone(), &[n]),
                Tensor::from_vec(t2.clone(), &[n]),
            ),
            t2,
            rayon: t1.clone(),
            seq: t1,
            times: pick(size, 3, 64) as i64,
        }
    }

    /// The `accelerate!` site, as `examples/listing1.rs` writes it.
    pub fn accelerated(t1: &Tensor<i64>, t2: &Tensor<i64>, times: i64) {
        accelerate!({
            let n = tensor_shape(t1)[0];
            let axpy = |c, i| {
                let x = tensor_get(t1, [i]);
                let y = tensor_get(t2, [i]);
                tensor_set(t1, [i], addi(x, muli(c, y)))
            };
            seq_loop(times, |_| par_loop(n, |i| axpy(2, i)))
        })
    }
}

impl Shape for Listing1 {
    fn run(&mut self, v: Variant) {
        let t2 = &self.t2;
        match v {
            Variant::Accelerated(t) => {
                let (a, b) = &self.acc;
                with_target(t, || Self::accelerated(a, b, self.times))
            }
            Variant::Rayon => {
                for _ in 0..self.times {
                    (self.rayon.par_chunks_mut(4096).zip(t2.par_chunks(4096)))
                        .for_each(|(xs, ys)| xs.iter_mut().zip(ys).for_each(|(x, y)| *x += 2 * y));
                }
            }
            Variant::Sequential => {
                for _ in 0..self.times {
                    self.seq.iter_mut().zip(t2).for_each(|(x, y)| *x += 2 * y);
                }
            }
        }
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(&match v {
            Variant::Accelerated(_) => self.acc.0.to_vec(),
            Variant::Rayon => self.rayon.clone(),
            Variant::Sequential => self.seq.clone(),
        })
    }
}
