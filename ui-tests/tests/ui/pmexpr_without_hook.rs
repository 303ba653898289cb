// A `#[pmexpr]` function is visible to `accelerate!` only through the build hook; this crate has
// none, and the error says so.
use pmexpr::{accelerate, pmexpr};

#[pmexpr]
fn inc(x: i64) -> i64 {
    x + 1
}

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let _r: Vec<i64> = accelerate!(map(|x| inc(x), s));
    // As an ordinary Rust function it works without the hook.
    assert_eq!(inc(1), 2);
}
