// A record result converts to the Rust type named where it is bound, which must have its fields.
use pmexpr::{Record, accelerate};

#[derive(Record, Debug)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Record, Debug)]
struct Pair {
    x: f64,
    z: f64,
}

fn main() {
    let a: f64 = 1.0;
    let _p: Point = accelerate!(backend = cpu, Point { x: a + 0.0, y: a });
    let _q: Pair = accelerate!(backend = cpu, Point { x: a + 0.0, y: a });
}
