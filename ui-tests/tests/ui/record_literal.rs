// Struct literals and patterns that PMExpr does not take.
use pmexpr::{Record, accelerate};

#[derive(Record, Debug, Clone, Copy)]
struct Point {
    x: f64,
    y: f64,
}

fn main() {
    let p = Point { x: 1.0, y: 2.0 };
    let _a: Point = accelerate!(backend = cpu, Point { x: 2.0, ..p });
    let _b: Point = accelerate!(backend = cpu, Point { x: 2.0, x: 3.0, y: 1.0 });
    let _c: f64 = accelerate!(backend = cpu, {
        let Point { x, .. } = p;
        x
    });
}
