// A misspelt intrinsic: the error is at the name, with the closest intrinsic suggested.
use pmexpr::accelerate;

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let _r: i64 = accelerate!(lenght(s));
}
