// The expression uses `s` as a Vec<i64>, but the Rust variable is a Vec<f64>: rustc reports it at
// the variable.
use pmexpr::accelerate;

fn main() {
    let s: Vec<f64> = vec![1.0, 2.0];
    let n: usize = 3;
    let _r: i64 = accelerate!(reduce(addi, n, s));
}
