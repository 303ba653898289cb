//! Records in and out of device functions: a derived struct read from a sequence, updated by a
//! `#[pmexpr]` function and returned; a tuple returned and destructured; a tuple bound, projected
//! and passed whole.
#[derive(pmexpr::Record)]
struct Particle {
    x: f64,
    v: f64,
}

#[pmexpr]
fn step(p: Particle, dt: f64) -> Particle {
    Particle { x: p.x + p.v * dt, v: p.v }
}

#[pmexpr]
fn sum_pair(p: (i64, i64)) -> i64 {
    p.0 + p.1
}

#[pmexpr]
fn min_max(a: i64, b: i64) -> (i64, i64) {
    if a < b { (a, b) } else { (b, a) }
}

fn main() {
    accelerate!(par_loop(n, |i| {
        let p = step(get(ps, i), dt);
        tensor_set(xs, [i], p.x);
        let (lo, hi) = min_max(get(a, i), get(b, i));
        let pair = (hi * 2, lo);
        let first = pair.0;
        tensor_set(spread, [i], first - sum_pair(pair))
    }));
}
