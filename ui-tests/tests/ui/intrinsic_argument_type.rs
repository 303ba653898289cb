// An intrinsic applied to an argument of the wrong type: the error is at the argument.
use pmexpr::accelerate;

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let _r: Vec<i64> = accelerate!(map(|x| addi(x, 0.5), s));
}
