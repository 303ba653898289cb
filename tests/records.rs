//! `#[derive(pmexpr::Record)]` structs: captured (alone, in sequences, nested, in tuples), built
//! with struct literals, taken apart with struct patterns, passed to and returned from `#[pmexpr]`
//! functions, and returned to Rust; every site agrees on the sequential, multicore and debug
//! targets.

use pmexpr::{Record, accelerate, pmexpr};
use pmexpr_suite::{Point, norm2};

mod common;
use common::on_every_target;

#[derive(Record, Debug, Clone, PartialEq)]
struct Particle {
    pos: Point,
    vel: Point,
    mass: f64,
}

/// A record whose fields are sequences and a flag.
#[derive(Record, Debug, Clone, PartialEq)]
struct Histogram {
    counts: Vec<i64>,
    total: i64,
    exact: bool,
}

/// Moves a particle for `dt` (a `#[pmexpr]` function taking and returning a record).
#[pmexpr]
fn step(dt: f64, p: Particle) -> Particle {
    let Particle { pos, vel, .. } = p;
    Particle {
        pos: Point {
            x: pos.x + dt * vel.x,
            y: pos.y + dt * vel.y,
        },
        vel,
        mass: p.mass,
    }
}

fn particles(n: usize) -> Vec<Particle> {
    (0..n)
        .map(|i| {
            let f = i as f64;
            Particle {
                pos: Point { x: f, y: -f },
                vel: Point { x: 0.5, y: f / 4.0 },
                mass: 1.0 + f,
            }
        })
        .collect()
}

#[test]
fn captured_records_are_read_by_field() {
    let p = Point { x: 3.0, y: 4.0 };
    let n: f64 = on_every_target(|| accelerate!(backend = cpu, p.x * p.x + p.y * p.y));
    assert_eq!(n, 25.0);
    // Through a `#[pmexpr]` function of the library, from a site and from Rust.
    assert_eq!(
        on_every_target(|| accelerate!(backend = cpu, norm2(p))),
        25.0
    );
    assert_eq!(norm2(p), 25.0);
}

#[test]
fn sequences_of_records_are_mapped_and_reduced() {
    let ps = particles(1000);
    let mass: f64 =
        on_every_target(|| accelerate!(reduce(addf, 0.0, map(|p: Particle| p.mass, ps))));
    assert_eq!(mass, ps.iter().map(|p| p.mass).sum::<f64>());
    // A record used only through its fields: its struct is the one with those fields.
    let far: Vec<bool> = on_every_target(|| accelerate!(map(|p| norm2(p.pos) > 100.0, ps)));
    assert_eq!(
        far,
        ps.iter().map(|p| norm2(p.pos) > 100.0).collect::<Vec<_>>()
    );
}

#[test]
fn records_are_built_and_returned() {
    let ps = particles(257);
    let dt: f64 = 0.25;
    let moved: Vec<Particle> = on_every_target(|| accelerate!(map(|p| step(dt, p), ps)));
    let want: Vec<Particle> = ps.iter().map(|p| step(dt, p.clone())).collect();
    assert_eq!(moved, want);
    assert_eq!(moved[8].pos, Point { x: 8.125, y: -7.5 });
    // A struct literal at the top, fields computed in parallel.
    let xs: Vec<f64> = ps.iter().map(|p| p.pos.x).collect();
    let centre: Point = on_every_target(|| {
        accelerate!({
            let n = int2float(length(xs));
            Point {
                y: 0.0,
                x: reduce(addf, 0.0, xs) / n,
            }
        })
    });
    assert_eq!(centre, Point { x: 128.0, y: 0.0 });
}

#[test]
fn records_with_sequence_fields_and_in_tuples() {
    let h = Histogram {
        counts: vec![3, 0, 5],
        total: 8,
        exact: true,
    };
    let scaled: (Histogram, i64) = on_every_target(|| {
        accelerate!({
            let counts = map(|c| c * 2, h.counts);
            (
                Histogram {
                    counts,
                    total: h.total * 2,
                    exact: h.exact,
                },
                length(h.counts),
            )
        })
    });
    assert_eq!(scaled.0.counts, vec![6, 0, 10]);
    assert_eq!((scaled.0.total, scaled.0.exact, scaled.1), (16, true, 3));
    let pairs = vec![(1_i64, h.clone()), (2, h.clone())];
    let sums: Vec<i64> = on_every_target(|| {
        accelerate!(map(
            |(k, g): (i64, Histogram)| k * reduce(addi, 0, g.counts),
            pairs
        ))
    });
    assert_eq!(sums, vec![8, 16]);
}

#[test]
fn struct_patterns_in_match_and_closures() {
    let ps = particles(10);
    let heavy: Vec<i64> = on_every_target(|| {
        accelerate!(map(
            |Particle {
                 mass,
                 pos: Point { x, .. },
                 ..
             }| match mass > 5.0 {
                true => 1,
                false => floorfi(x),
            },
            ps
        ))
    });
    assert_eq!(heavy, vec![0, 1, 2, 3, 4, 1, 1, 1, 1, 1]);
}
