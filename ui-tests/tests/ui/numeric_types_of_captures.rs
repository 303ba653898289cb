// Two captured values used as the same number must have the same Rust type.
use pmexpr::accelerate;

fn main() {
    let a: i64 = 1;
    let b: f64 = 2.5;
    let _r = accelerate!(backend = cpu, a + b);
}
