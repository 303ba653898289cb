//! Imperative loops against their functional spelling: each workload written twice as
//! an `accelerate!` site — once with `let mut`, `+=` and `for`/`while`, once as a PMExpr user
//! writes it without them (`foldl`, a tail-recursive `fn`) — and a search that stops at its first
//! hit (`break`) against the same loop without the `break`. `examples/imperative.rs` times them
//! in turn, beside the same algorithm written by hand in Rust ([`hand`]: rayon, and a
//! sequential loop); `tests/imperative.rs` checks that they all agree.

use pmexpr::accelerate;

/// The accelerations of `n` bodies in the plane (softened inverse-square attraction), each the
/// sum over all bodies: a `for` over `0..n` with two `+=` accumulators.
pub fn nbody_imperative(xs: &[f64], ys: &[f64]) -> Vec<(f64, f64)> {
    let n = xs.len() as i64;
    accelerate!(map(
        |i: i64| {
            let (xi, yi) = (xs[i], ys[i]);
            let mut ax = 0.0;
            let mut ay = 0.0;
            for j in 0..n {
                let dx = xs[j] - xi;
                let dy = ys[j] - yi;
                let d2 = dx * dx + dy * dy + 0.01;
                let inv = 1.0 / (d2 * d2.sqrt());
                ax += dx * inv;
                ay += dy * inv;
            }
            (ax, ay)
        },
        create(n, |i| i)
    ))
}

/// [`nbody_imperative`] as a `foldl` over `create(n, |j| j)` with a tuple accumulator.
pub fn nbody_functional(xs: &[f64], ys: &[f64]) -> Vec<(f64, f64)> {
    let n = xs.len() as i64;
    accelerate!(map(
        |i: i64| {
            let (xi, yi) = (xs[i], ys[i]);
            foldl(
                |a: (f64, f64), j: i64| {
                    let dx = xs[j] - xi;
                    let dy = ys[j] - yi;
                    let d2 = dx * dx + dy * dy + 0.01;
                    let inv = 1.0 / (d2 * d2.sqrt());
                    (a.0 + dx * inv, a.1 + dy * inv)
                },
                (0.0, 0.0),
                create(n, |j| j),
            )
        },
        create(n, |i| i)
    ))
}

/// A polynomial with coefficients `cs` (highest degree first) at every `x` by Horner's rule: a
/// `for` over the sequence.
pub fn horner_imperative(cs: &[f64], xs: &[f64]) -> Vec<f64> {
    accelerate!(map(
        |x: f64| {
            let mut y = 0.0;
            for &c in cs.iter() {
                y = y * x + c;
            }
            y
        },
        xs
    ))
}

/// [`horner_imperative`] as a `foldl` over the coefficients.
pub fn horner_functional(cs: &[f64], xs: &[f64]) -> Vec<f64> {
    accelerate!(map(|x: f64| foldl(|y, c| y * x + c, 0.0, cs), xs))
}

/// The number of Collatz steps from each `n` to 1: a `while` loop.
pub fn collatz_imperative(s: &[i64]) -> Vec<i64> {
    accelerate!(map(
        |n: i64| {
            let mut x = n;
            let mut steps = 0;
            while x != 1 {
                x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
                steps += 1;
            }
            steps
        },
        s
    ))
}

/// [`collatz_imperative`] as a function that calls itself as its last step.
pub fn collatz_functional(s: &[i64]) -> Vec<i64> {
    accelerate!({
        fn steps(x: i64, count: i64) -> i64 {
            if x == 1 {
                count
            } else if x % 2 == 0 {
                steps(x / 2, count + 1)
            } else {
                steps(3 * x + 1, count + 1)
            }
        }
        map(|n| steps(n, 0), s)
    })
}

/// For every query, the first position of the sorted `s` whose value is at least the query (or
/// `-1`): a `for` that stops at its first hit.
pub fn search_with_break(s: &[i64], queries: &[i64]) -> Vec<i64> {
    let m = s.len() as i64;
    accelerate!(map(
        |q: i64| {
            let mut found = -1;
            for i in 0..m {
                if s[i] >= q {
                    found = i;
                    break;
                }
            }
            found
        },
        queries
    ))
}

/// [`search_with_break`] without the `break`: every query scans all of `s`.
pub fn search_without_break(s: &[i64], queries: &[i64]) -> Vec<i64> {
    let m = s.len() as i64;
    accelerate!(map(
        |q: i64| {
            let mut found = -1;
            for i in 0..m {
                if found < 0 && s[i] >= q {
                    found = i;
                }
            }
            found
        },
        queries
    ))
}

/// Each block of `block` keys (each in `0..256`) sorted by counting, as a radix sort's pass does
/// per block: a count array written with `counts[k] += 1`, its prefix written with `start[k] =
/// …`, and the keys placed with `out[start[k]] = k` — element writes in loops, in place.
pub fn block_sort(keys: &[i64], block: i64) -> Vec<Vec<i64>> {
    let blocks = keys.len() as i64 / block;
    accelerate!(create(blocks, |b: i64| {
        let mut counts = [0i64; 256];
        for j in 0..block {
            counts[keys[b * block + j] as usize] += 1;
        }
        let mut start = [0i64; 256];
        for k in 1..256 {
            start[k] = start[k - 1] + counts[k - 1];
        }
        let mut out = vec![0i64; block as usize];
        for j in 0..block {
            let k = keys[b * block + j] as usize;
            out[start[k] as usize] = k as i64;
            start[k] += 1;
        }
        out
    }))
}

/// The loop: a 4-element array whose elements a `while` loop counts into, `n` times.
pub fn count_into(n: i64) -> Vec<i64> {
    accelerate!(backend = cpu, {
        let mut a = vec![0i64; 4];
        let mut i = 0;
        while i < n {
            a[(i % 4) as usize] += 1;
            i += 1;
        }
        a
    })
}

/// `steps` steps of `n` bodies in the plane moving under their mutual attraction ([`hand`]'s
/// `nbody_steps_*`): each step a `create` of the accelerations (a `for` over the bodies per
/// element) and `map2`s of the velocities and positions, every keyword over `n` elements. With
/// five bodies each keyword is far too small for threads: the `cpu` target must run them on the
/// calling thread.
pub fn nbody_steps(px: &[f64], py: &[f64], steps: i64) -> (Vec<f64>, Vec<f64>) {
    let n = px.len() as i64;
    accelerate!({
        let mut x = px.to_vec();
        let mut y = py.to_vec();
        let mut vx = vec![0.0; n as usize];
        let mut vy = vec![0.0; n as usize];
        for _ in 0..steps {
            let a = create(n, |i: i64| {
                let mut ax = 0.0;
                let mut ay = 0.0;
                for j in 0..n {
                    let dx = x[j] - x[i];
                    let dy = y[j] - y[i];
                    let d2 = dx * dx + dy * dy + 0.01;
                    let inv = 1.0 / (d2 * d2.sqrt());
                    ax += dx * inv;
                    ay += dy * inv;
                }
                (ax, ay)
            });
            vx = map2(|v: f64, a: (f64, f64)| v + 0.001 * a.0, vx, a);
            vy = map2(|v: f64, a: (f64, f64)| v + 0.001 * a.1, vy, a);
            x = map2(|p: f64, v: f64| p + 0.001 * v, x, vx);
            y = map2(|p: f64, v: f64| p + 0.001 * v, y, vy);
        }
        (x, y)
    })
}

/// One step of Conway's game of life on a `w` × `h` torus, as a port writes it: per cell, its
/// eight neighbours in an array literal, counted by `filter(…).len()`.
pub fn life_step(cells: &[bool], w: i64, h: i64) -> Vec<bool> {
    accelerate!(create(w * h, |p: i64| {
        let x = p % w;
        let y = p / w;
        let live = |dx: i64, dy: i64| cells[((y + dy + h) % h) * w + (x + dx + w) % w];
        let neighbors = [
            live(-1, -1),
            live(0, -1),
            live(1, -1),
            live(-1, 0),
            live(1, 0),
            live(-1, 1),
            live(0, 1),
            live(1, 1),
        ];
        let n = filter(|c: bool| c, neighbors).len();
        if cells[p] { n == 2 || n == 3 } else { n == 3 }
    }))
}

/// The permutation-flipping benchmark (fannkuch-redux) over the `n!` permutations of `0..n`,
/// in `blocks` parts of consecutive permutations: each part starts from its first permutation
/// (its index in the factorial number system), then for each permutation copies it, reverses
/// the copy's first `p[0] + 1` elements until `p[0]` is 0, counting the flips, and steps to the
/// next permutation by rotations. The checksum (flips added at even indices, subtracted at odd)
/// and the most flips: a loop over arrays written in place, `swap`s and element copies.
pub fn fannkuch(n: i64, blocks: i64) -> (i64, i64) {
    accelerate!({
        let mut total = 1i64;
        for k in 1..n + 1 {
            total *= k;
        }
        let per = (total + blocks - 1) / blocks;
        let parts = create(blocks, |b: i64| {
            let mut perm1 = vec![0i64; n as usize];
            let mut perm = vec![0i64; n as usize];
            let mut count = vec![0i64; n as usize];
            for j in 0..n {
                perm1[j] = j;
            }
            let lo = b * per;
            let hi = if lo + per < total { lo + per } else { total };
            // The first permutation of the part: digit i of `lo` in the factorial base rotates
            // `perm1[0..=i]` left by that digit.
            let mut idx = lo;
            let mut fact = total;
            let mut i = n - 1;
            while i > 0 {
                fact /= i + 1;
                let d = idx / fact;
                idx %= fact;
                count[i] = d;
                for _ in 0..d {
                    let t = perm1[0];
                    for j in 0..i {
                        perm1[j] = perm1[j + 1];
                    }
                    perm1[i] = t;
                }
                i -= 1;
            }
            let mut checksum = 0i64;
            let mut most = 0i64;
            let mut at = lo;
            while at < hi {
                if perm1[0] != 0 {
                    for j in 0..n {
                        perm[j] = perm1[j];
                    }
                    let mut flips = 0i64;
                    let mut k = perm[0];
                    while k != 0 {
                        let mut a = 0i64;
                        let mut z = k;
                        while a < z {
                            perm.swap(a as usize, z as usize);
                            a += 1;
                            z -= 1;
                        }
                        flips += 1;
                        k = perm[0];
                    }
                    most = most.max(flips);
                    checksum += if at % 2 == 0 { flips } else { -flips };
                }
                // The next permutation: rotate `perm1[0..=i]` left by one while `count[i]`
                // wraps.
                let mut i = 1i64;
                while i < n {
                    let t = perm1[0];
                    for j in 0..i {
                        perm1[j] = perm1[j + 1];
                    }
                    perm1[i] = t;
                    if count[i] < i {
                        count[i] += 1;
                        break;
                    }
                    count[i] = 0;
                    i += 1;
                }
                at += 1;
            }
            (checksum, most)
        });
        let checksum = reduce(|a: i64, b: i64| a + b, 0, map(|p: (i64, i64)| p.0, parts));
        let most = reduce(
            |a: i64, b: i64| a.max(b),
            0,
            map(|p: (i64, i64)| p.1, parts),
        );
        (checksum, most)
    })
}

/// `steps` steps of a three-point stencil over `s` (each interior element the mean of itself and
/// its neighbours, the two ends kept): each step a `create` from the previous version, which it
/// replaces; hand-written code keeps two buffers and swaps them.
pub fn stencil(s: &[f64], steps: i64) -> Vec<f64> {
    let n = s.len() as i64;
    accelerate!({
        let mut cur = map(|x: f64| x, s);
        for _ in 0..steps {
            let next = create(n, |i: i64| {
                if i == 0 || i == n - 1 {
                    cur[i]
                } else {
                    (cur[i - 1] + cur[i] + cur[i + 1]) / 3.0
                }
            });
            cur = next;
        }
        cur
    })
}

/// The cheapest path from the top row of a `rows` × `cols` grid of costs to each cell of its
/// bottom row, moving down, down-left or down-right (Rodinia's `pathfinder`): row by row, each a
/// `create` of the minimum of the three cells above plus the cell's cost.
pub fn pathfinder(wall: &[i64], rows: i64, cols: i64) -> Vec<i64> {
    accelerate!({
        let mut row = create(cols, |j: i64| wall[j]);
        for t in 1..rows {
            row = create(cols, |j: i64| {
                let mut m = row[j];
                if j > 0 {
                    m = m.min(row[j - 1]);
                }
                if j + 1 < cols {
                    m = m.min(row[j + 1]);
                }
                wall[t * cols + j] + m
            });
        }
        row
    })
}

/// The workloads written by hand in plain Rust, the baselines of the `imperative` example:
/// `*_rayon` with rayon's `par_iter`, `*_seq` with a sequential loop, each the same algorithm as
/// the `accelerate!` sites above.
pub mod hand {
    use rayon::prelude::*;

    fn accel(xs: &[f64], ys: &[f64], i: usize) -> (f64, f64) {
        let (xi, yi) = (xs[i], ys[i]);
        let (mut ax, mut ay) = (0.0, 0.0);
        for j in 0..xs.len() {
            let dx = xs[j] - xi;
            let dy = ys[j] - yi;
            let d2 = dx * dx + dy * dy + 0.01;
            let inv = 1.0 / (d2 * d2.sqrt());
            ax += dx * inv;
            ay += dy * inv;
        }
        (ax, ay)
    }

    /// [`super::nbody_imperative`] with rayon.
    pub fn nbody_rayon(xs: &[f64], ys: &[f64]) -> Vec<(f64, f64)> {
        (0..xs.len())
            .into_par_iter()
            .map(|i| accel(xs, ys, i))
            .collect()
    }

    /// [`super::nbody_imperative`], sequentially.
    pub fn nbody_seq(xs: &[f64], ys: &[f64]) -> Vec<(f64, f64)> {
        (0..xs.len()).map(|i| accel(xs, ys, i)).collect()
    }

    fn horner(cs: &[f64], x: f64) -> f64 {
        let mut y = 0.0;
        for &c in cs {
            y = y * x + c;
        }
        y
    }

    /// [`super::horner_imperative`] with rayon.
    pub fn horner_rayon(cs: &[f64], xs: &[f64]) -> Vec<f64> {
        xs.par_iter().map(|&x| horner(cs, x)).collect()
    }

    /// [`super::horner_imperative`], sequentially.
    pub fn horner_seq(cs: &[f64], xs: &[f64]) -> Vec<f64> {
        xs.iter().map(|&x| horner(cs, x)).collect()
    }

    fn collatz(n: i64) -> i64 {
        let (mut x, mut steps) = (n, 0);
        while x != 1 {
            x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
            steps += 1;
        }
        steps
    }

    /// [`super::collatz_imperative`] with rayon.
    pub fn collatz_rayon(s: &[i64]) -> Vec<i64> {
        s.par_iter().map(|&n| collatz(n)).collect()
    }

    /// [`super::collatz_imperative`], sequentially.
    pub fn collatz_seq(s: &[i64]) -> Vec<i64> {
        s.iter().map(|&n| collatz(n)).collect()
    }

    fn first_at_least(s: &[i64], q: i64) -> i64 {
        for (i, &v) in s.iter().enumerate() {
            if v >= q {
                return i as i64;
            }
        }
        -1
    }

    /// [`super::search_with_break`] with rayon.
    pub fn search_rayon(s: &[i64], queries: &[i64]) -> Vec<i64> {
        queries.par_iter().map(|&q| first_at_least(s, q)).collect()
    }

    /// [`super::search_with_break`], sequentially.
    pub fn search_seq(s: &[i64], queries: &[i64]) -> Vec<i64> {
        queries.iter().map(|&q| first_at_least(s, q)).collect()
    }

    fn block_sort_one(keys: &[i64]) -> Vec<i64> {
        let mut counts = [0usize; 256];
        for &k in keys {
            counts[k as usize] += 1;
        }
        let mut start = [0usize; 256];
        for k in 1..256 {
            start[k] = start[k - 1] + counts[k - 1];
        }
        let mut out = vec![0i64; keys.len()];
        for &k in keys {
            out[start[k as usize]] = k;
            start[k as usize] += 1;
        }
        out
    }

    /// [`super::block_sort`] with rayon.
    pub fn block_sort_rayon(keys: &[i64], block: usize) -> Vec<Vec<i64>> {
        keys.par_chunks_exact(block).map(block_sort_one).collect()
    }

    /// [`super::block_sort`], sequentially.
    pub fn block_sort_seq(keys: &[i64], block: usize) -> Vec<Vec<i64>> {
        keys.chunks_exact(block).map(block_sort_one).collect()
    }

    /// [`super::count_into`], sequentially (a loop has nothing to run in parallel).
    pub fn count_into_seq(n: i64) -> Vec<i64> {
        let mut a = vec![0i64; 4];
        for i in 0..n {
            a[(i % 4) as usize] += 1;
        }
        a
    }

    /// [`super::nbody_steps`], sequentially (one step has nothing worth running in parallel
    /// over five bodies; rayon's version of it is the same loop with `par_iter`).
    pub fn nbody_steps_seq(px: &[f64], py: &[f64], steps: i64) -> (Vec<f64>, Vec<f64>) {
        let n = px.len();
        let (mut x, mut y) = (px.to_vec(), py.to_vec());
        let (mut vx, mut vy) = (vec![0.0; n], vec![0.0; n]);
        let mut a = vec![(0.0, 0.0); n];
        for _ in 0..steps {
            for (i, a) in a.iter_mut().enumerate() {
                *a = accel(&x, &y, i);
            }
            advance(&a, (&mut x, &mut y), (&mut vx, &mut vy));
        }
        (x, y)
    }

    /// One step's update of the velocities and then the positions by the accelerations `a`.
    fn advance(
        a: &[(f64, f64)],
        (x, y): (&mut [f64], &mut [f64]),
        (vx, vy): (&mut [f64], &mut [f64]),
    ) {
        for i in 0..a.len() {
            vx[i] += 0.001 * a[i].0;
            vy[i] += 0.001 * a[i].1;
            x[i] += 0.001 * vx[i];
            y[i] += 0.001 * vy[i];
        }
    }

    /// [`super::nbody_steps`] with rayon: each step's accelerations by `par_iter`.
    pub fn nbody_steps_rayon(px: &[f64], py: &[f64], steps: i64) -> (Vec<f64>, Vec<f64>) {
        let n = px.len();
        let (mut x, mut y) = (px.to_vec(), py.to_vec());
        let (mut vx, mut vy) = (vec![0.0; n], vec![0.0; n]);
        for _ in 0..steps {
            let a: Vec<(f64, f64)> = (0..n).into_par_iter().map(|i| accel(&x, &y, i)).collect();
            advance(&a, (&mut x, &mut y), (&mut vx, &mut vy));
        }
        (x, y)
    }

    fn life_cell(cells: &[bool], w: usize, h: usize, p: usize) -> bool {
        let (x, y) = (p % w, p / w);
        let live = |dx: usize, dy: usize| cells[((y + dy + h - 1) % h) * w + (x + dx + w - 1) % w];
        let neighbors = [
            live(0, 0),
            live(1, 0),
            live(2, 0),
            live(0, 1),
            live(2, 1),
            live(0, 2),
            live(1, 2),
            live(2, 2),
        ];
        let n = neighbors.iter().filter(|&&c| c).count();
        if cells[p] { n == 2 || n == 3 } else { n == 3 }
    }

    /// [`super::life_step`] with rayon.
    pub fn life_step_rayon(cells: &[bool], w: usize, h: usize) -> Vec<bool> {
        (0..w * h)
            .into_par_iter()
            .map(|p| life_cell(cells, w, h, p))
            .collect()
    }

    /// [`super::life_step`], sequentially.
    pub fn life_step_seq(cells: &[bool], w: usize, h: usize) -> Vec<bool> {
        (0..w * h).map(|p| life_cell(cells, w, h, p)).collect()
    }

    /// One part of [`super::fannkuch`]: the permutations `lo..hi` of `0..n`.
    fn fannkuch_part(n: usize, lo: usize, hi: usize) -> (i64, i64) {
        let mut perm1: Vec<usize> = (0..n).collect();
        let mut perm = vec![0usize; n];
        let mut count = vec![0usize; n];
        let mut fact: usize = (1..=n).product();
        let mut idx = lo;
        for i in (1..n).rev() {
            fact /= i + 1;
            let d = idx / fact;
            idx %= fact;
            count[i] = d;
            perm1[..=i].rotate_left(d);
        }
        let (mut checksum, mut most) = (0i64, 0i64);
        for at in lo..hi {
            if perm1[0] != 0 {
                perm.copy_from_slice(&perm1);
                let mut flips = 0i64;
                let mut k = perm[0];
                while k != 0 {
                    perm[..=k].reverse();
                    flips += 1;
                    k = perm[0];
                }
                most = most.max(flips);
                checksum += if at % 2 == 0 { flips } else { -flips };
            }
            for i in 1..n {
                perm1[..=i].rotate_left(1);
                if count[i] < i {
                    count[i] += 1;
                    break;
                }
                count[i] = 0;
            }
        }
        (checksum, most)
    }

    fn fannkuch_parts(n: usize, blocks: usize) -> (usize, impl Fn(usize) -> (i64, i64)) {
        let total: usize = (1..=n).product();
        let per = total.div_ceil(blocks);
        (blocks, move |b: usize| {
            fannkuch_part(n, b * per, ((b + 1) * per).min(total))
        })
    }

    /// [`super::fannkuch`] with rayon: the parts by `par_iter`.
    pub fn fannkuch_rayon(n: usize, blocks: usize) -> (i64, i64) {
        let (blocks, part) = fannkuch_parts(n, blocks);
        (0..blocks)
            .into_par_iter()
            .map(part)
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.max(b.1)))
    }

    /// [`super::fannkuch`], sequentially.
    pub fn fannkuch_seq(n: usize, blocks: usize) -> (i64, i64) {
        let (blocks, part) = fannkuch_parts(n, blocks);
        (0..blocks)
            .map(part)
            .fold((0, 0), |a, b| (a.0 + b.0, a.1.max(b.1)))
    }

    fn stencil_at(cur: &[f64], i: usize) -> f64 {
        if i == 0 || i == cur.len() - 1 {
            cur[i]
        } else {
            (cur[i - 1] + cur[i] + cur[i + 1]) / 3.0
        }
    }

    /// [`super::stencil`] with rayon: two buffers, swapped after each step.
    pub fn stencil_rayon(s: &[f64], steps: usize) -> Vec<f64> {
        let (mut cur, mut next) = (s.to_vec(), s.to_vec());
        for _ in 0..steps {
            next.par_iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = stencil_at(&cur, i));
            std::mem::swap(&mut cur, &mut next);
        }
        cur
    }

    /// [`super::stencil`], sequentially: two buffers.
    pub fn stencil_seq(s: &[f64], steps: usize) -> Vec<f64> {
        let (mut cur, mut next) = (s.to_vec(), s.to_vec());
        for _ in 0..steps {
            for (i, x) in next.iter_mut().enumerate() {
                *x = stencil_at(&cur, i);
            }
            std::mem::swap(&mut cur, &mut next);
        }
        cur
    }

    fn pathfinder_at(row: &[i64], wall: &[i64], j: usize) -> i64 {
        let mut m = row[j];
        if j > 0 {
            m = m.min(row[j - 1]);
        }
        if j + 1 < row.len() {
            m = m.min(row[j + 1]);
        }
        wall[j] + m
    }

    /// [`super::pathfinder`] with rayon: two rows, swapped after each.
    pub fn pathfinder_rayon(wall: &[i64], rows: usize, cols: usize) -> Vec<i64> {
        let (mut row, mut next) = (wall[..cols].to_vec(), vec![0; cols]);
        for t in 1..rows {
            let costs = &wall[t * cols..(t + 1) * cols];
            next.par_iter_mut()
                .enumerate()
                .for_each(|(j, x)| *x = pathfinder_at(&row, costs, j));
            std::mem::swap(&mut row, &mut next);
        }
        row
    }

    /// [`super::pathfinder`], sequentially: two rows.
    pub fn pathfinder_seq(wall: &[i64], rows: usize, cols: usize) -> Vec<i64> {
        let (mut row, mut next) = (wall[..cols].to_vec(), vec![0; cols]);
        for t in 1..rows {
            let costs = &wall[t * cols..(t + 1) * cols];
            for (j, x) in next.iter_mut().enumerate() {
                *x = pathfinder_at(&row, costs, j);
            }
            std::mem::swap(&mut row, &mut next);
        }
        row
    }
}
