// A value used as its own field has an infinite type.
use pmexpr::accelerate;

fn main() {
    let x: i64 = 1;
    let _r: i64 = accelerate!(x + x.0);
}
