// Without the build hook a site cannot see the crate's derived structs: naming one, or reading
// one by field inside the expression, asks for the hook. A struct literal names every field, so it
// works, and so does a field of a captured value (`p.x`: rustc knows its type).
use pmexpr::{Record, accelerate};

#[derive(Record, Debug)]
struct Point {
    x: f64,
    y: f64,
}

fn main() {
    let p = Point { x: 1.0, y: 2.0 };
    let ps = vec![Point { x: 1.0, y: 2.0 }];
    let _a: f64 = accelerate!(backend = cpu, { let q = p; q.x + q.y });
    let _d: f64 = accelerate!(backend = cpu, p.x + p.y);
    let _b: Vec<f64> = accelerate!(map(|q: Point| q.x, ps));
    let _c: Point = accelerate!(backend = cpu, Point { x: 1.0, y: 2.0 });
}
