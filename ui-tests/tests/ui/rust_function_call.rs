// A Rust function called inside `accelerate!`: the error says the three ways to have it there
// (a closure, a local `fn`, or `#[pmexpr]` with the build hook).
use pmexpr::accelerate;

fn double(x: i64) -> i64 {
    2 * x
}

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let _ = double(1);
    let _r: Vec<i64> = accelerate!(map(|x| double(x), s));
}
