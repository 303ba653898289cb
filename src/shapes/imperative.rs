//! The shapes of imperative code ported as Rust programmers write it (`crate::imperative`): a
//! neighbour count through an 8-element array per cell, a step loop over five bodies, a block's
//! counting sort with its arrays written in loops, the permutation-flipping benchmark, a stencil
//! that replaces its sequence each step and a row-by-row dynamic program, each beside the same
//! algorithm written with rayon and as a sequential loop.

use pmexpr::with_target;

use super::{Outputs, Shape, Size, Variant, ints, pick};
use crate::imperative::{block_sort, fannkuch, hand, life_step, nbody_steps, pathfinder, stencil};

/// One step of the game of life on a torus, per cell its 8 neighbours in an array literal
/// counted by `filter(…).len()`.
pub struct LifeNeighbours {
    cells: Vec<bool>,
    side: usize,
    out: Outputs<bool>,
}

impl LifeNeighbours {
    pub(super) fn new(size: Size) -> Self {
        let side = pick(size, 61, 1000);
        let cells = crate::Rng::new(41).ints(side * side, 0, 3);
        LifeNeighbours {
            cells: cells.iter().map(|&c| c == 0).collect(),
            side,
            out: Outputs::default(),
        }
    }
}

impl Shape for LifeNeighbours {
    fn run(&mut self, v: Variant) {
        let (c, n) = (&self.cells, self.side);
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || life_step(c, n as i64, n as i64)),
            Variant::Rayon => hand::life_step_rayon(c, n, n),
            Variant::Sequential => hand::life_step_seq(c, n, n),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        self.out
            .get(v)
            .iter()
            .map(|&b| f64::from(u8::from(b)))
            .collect()
    }
}

/// Steps of five bodies: per step a `create` of the accelerations and four `map2`s, every
/// keyword over five elements.
pub struct NbodySteps {
    x: Vec<f64>,
    y: Vec<f64>,
    steps: i64,
    out: Outputs<f64>,
}

impl NbodySteps {
    pub(super) fn new(size: Size) -> Self {
        let mut rng = crate::Rng::new(42);
        NbodySteps {
            x: rng.floats(5),
            y: rng.floats(5),
            steps: pick(size, 300, 100_000) as i64,
            out: Outputs::default(),
        }
    }
}

impl Shape for NbodySteps {
    fn run(&mut self, v: Variant) {
        let (x, y, k) = (&self.x, &self.y, self.steps);
        let (px, py) = match v {
            Variant::Accelerated(t) => with_target(t, || nbody_steps(x, y, k)),
            Variant::Rayon => hand::nbody_steps_rayon(x, y, k),
            Variant::Sequential => hand::nbody_steps_seq(x, y, k),
        };
        self.out.set(v, px.into_iter().chain(py).collect());
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        self.out.get(v).to_vec()
    }
}

/// Each block of keys sorted by counting: `counts[k] += 1`, a prefix written in a loop, and
/// `out[start[k]] = k`.
pub struct BlockCountingSort {
    keys: Vec<i64>,
    block: usize,
    out: Outputs<i64>,
}

impl BlockCountingSort {
    pub(super) fn new(size: Size) -> Self {
        BlockCountingSort {
            keys: crate::Rng::new(43).ints(pick(size, 1 << 12, 1 << 20), 0, 256),
            block: pick(size, 512, 4096),
            out: Outputs::default(),
        }
    }
}

impl Shape for BlockCountingSort {
    fn run(&mut self, v: Variant) {
        let (keys, b) = (&self.keys, self.block);
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || block_sort(keys, b as i64)),
            Variant::Rayon => hand::block_sort_rayon(keys, b),
            Variant::Sequential => hand::block_sort_seq(keys, b),
        };
        self.out.set(v, r.concat());
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

/// fannkuch-redux over the permutations of `0..n` in 64 parts: per permutation a copy, flips by
/// `swap` in a `while`, and the next permutation by rotations written element by element.
pub struct Fannkuch {
    n: usize,
    out: Outputs<i64>,
}

impl Fannkuch {
    pub(super) fn new(size: Size) -> Self {
        Fannkuch {
            n: pick(size, 7, 10),
            out: Outputs::default(),
        }
    }
}

impl Shape for Fannkuch {
    fn run(&mut self, v: Variant) {
        let n = self.n;
        let (checksum, flips) = match v {
            Variant::Accelerated(t) => with_target(t, || fannkuch(n as i64, 64)),
            Variant::Rayon => hand::fannkuch_rayon(n, 64),
            Variant::Sequential => hand::fannkuch_seq(n, 64),
        };
        self.out.set(v, vec![checksum, flips]);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}

/// 100 steps of a three-point stencil, each a `create` from the sequence it replaces.
pub struct StencilSteps {
    s: Vec<f64>,
    out: Outputs<f64>,
}

impl StencilSteps {
    pub(super) fn new(size: Size) -> Self {
        StencilSteps {
            s: crate::Rng::new(44).floats(pick(size, 1000, 1 << 17)),
            out: Outputs::default(),
        }
    }
}

impl Shape for StencilSteps {
    fn run(&mut self, v: Variant) {
        let s = &self.s;
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || stencil(s, 100)),
            Variant::Rayon => hand::stencil_rayon(s, 100),
            Variant::Sequential => hand::stencil_seq(s, 100),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        self.out.get(v).to_vec()
    }
}

/// Rodinia's pathfinder: 100 rows, each a `create` of the cheapest of the three cells above.
pub struct Pathfinder {
    wall: Vec<i64>,
    cols: usize,
    out: Outputs<i64>,
}

impl Pathfinder {
    pub(super) fn new(size: Size) -> Self {
        let cols = pick(size, 300, 100_000);
        Pathfinder {
            wall: crate::Rng::new(45).ints(100 * cols, 0, 10),
            cols,
            out: Outputs::default(),
        }
    }
}

impl Shape for Pathfinder {
    fn run(&mut self, v: Variant) {
        let (w, c) = (&self.wall, self.cols);
        let r = match v {
            Variant::Accelerated(t) => with_target(t, || pathfinder(w, 100, c as i64)),
            Variant::Rayon => hand::pathfinder_rayon(w, 100, c),
            Variant::Sequential => hand::pathfinder_seq(w, 100, c),
        };
        self.out.set(v, r);
    }
    fn output(&self, v: Variant) -> Vec<f64> {
        ints(self.out.get(v))
    }
}
