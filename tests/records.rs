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

/// A derived struct of `pmexpr::MAX_TUPLE` fields, the most the compiler accepts.
#[derive(Record, Debug, Clone, PartialEq)]
struct Twelve {
    a: i64,
    b: f64,
    c: bool,
    d: i64,
    e: i64,
    f: i64,
    g: i64,
    h: i64,
    i: i64,
    j: i64,
    k: i64,
    l: f64,
}

/// Tuples and derived structs of as many fields as the compiler accepts are captured, alone and
/// in sequences, and returned, on every target: the runtime's traits reach the same limit.
#[test]
fn tuples_and_records_at_the_field_limit_cross_both_ways() {
    assert_eq!(pmexpr::MAX_TUPLE, 12);
    let t = (
        1_i64, 2.5_f64, 3_i32, 4.5_f32, true, 6_i64, 7_i64, 8_i64, 9_i64, 10_i64, 11_i64, 12_i64,
    );
    let ts = vec![t; 3];
    let sums: Vec<i64> = on_every_target(|| accelerate!(map(|u| u.0 + u.11, ts)));
    assert_eq!(sums, vec![13; 3]);
    type Reversed = (i64, i64, i64, i64, i64, i64, i64, bool, f32, i32, f64, i64);
    let back: Vec<Reversed> = on_every_target(|| {
        accelerate!(map(
            |u| (u.11, u.10, u.9, u.8, u.7, u.6, u.5, u.4, u.3, u.2, u.1, u.0),
            ts
        ))
    });
    assert_eq!(
        back,
        vec![(12, 11, 10, 9, 8, 7, 6, true, 4.5, 3, 2.5, 1); 3]
    );
    let one: Reversed = on_every_target(|| {
        accelerate!(backend = cpu, {
            let u = t;
            (u.11, u.10, u.9, u.8, u.7, u.6, u.5, u.4, u.3, u.2, u.1, u.0)
        })
    });
    assert_eq!(one, back[0]);
    let w = Twelve {
        a: 1,
        b: 2.0,
        c: false,
        d: 4,
        e: 5,
        f: 6,
        g: 7,
        h: 8,
        i: 9,
        j: 10,
        k: 11,
        l: 12.0,
    };
    let ws = vec![w.clone(); 2];
    let total: f64 =
        on_every_target(|| accelerate!(reduce(addf, 0.0, map(|v: Twelve| v.b + v.l, ws))));
    assert_eq!(total, 28.0);
    let flipped: Vec<Twelve> = on_every_target(|| {
        accelerate!(map(
            |v: Twelve| Twelve {
                a: v.k,
                b: v.l,
                c: !v.c,
                d: v.d,
                e: v.e,
                f: v.f,
                g: v.g,
                h: v.h,
                i: v.i,
                j: v.j,
                k: v.a,
                l: v.b,
            },
            ws
        ))
    });
    let want = Twelve {
        a: 11,
        b: 12.0,
        c: true,
        k: 1,
        l: 2.0,
        ..w
    };
    assert_eq!(flipped, vec![want; 2]);
}

/// The float type of a program, named once, as Rust programs do.
type Real = f64;
/// A sequence of points, by an alias.
type Trail = Vec<(Real, Real)>;

/// A derived struct whose fields are written with type aliases.
#[derive(Record, Debug, Clone, PartialEq)]
struct Body {
    mass: Real,
    trail: Trail,
}

#[test]
fn type_aliases_name_their_types_in_fields_and_annotations() {
    let bodies = vec![
        Body {
            mass: 2.0,
            trail: vec![(1.0, 2.0), (3.0, 4.0)],
        },
        Body {
            mass: 0.5,
            trail: vec![(-1.0, 1.0), (0.0, 0.0)],
        },
    ];
    let moments: Vec<Real> = on_every_target(|| {
        accelerate!(map(
            |b: Body| b.mass * reduce(addf, 0.0, map(|p: (Real, Real)| p.0 + p.1, b.trail)),
            bodies
        ))
    });
    assert_eq!(moments, vec![20.0, 0.0]);
    let lighter: Vec<Body> = on_every_target(|| {
        accelerate!(map(
            |b: Body| Body {
                mass: b.mass / 2.0,
                trail: b.trail
            },
            bodies
        ))
    });
    assert_eq!(lighter[0].mass, 1.0);
    assert_eq!(lighter[0].trail, bodies[0].trail);
}
