// A name bound neither inside the expression nor in the enclosing Rust code: rustc reports it at
// the name, where accelerate! captures it.
use pmexpr::accelerate;

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let _r: i64 = accelerate!(reduce(addi, offset, s));
}
