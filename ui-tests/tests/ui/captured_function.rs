// accelerate! cannot capture Rust closures, nor return functions.
use pmexpr::accelerate;

fn closure(s: &[i64]) -> Vec<i64> {
    let double = |x: i64| x * 2;
    accelerate!(map(double, s))
}

fn function_result() {
    let _f = accelerate!(|x| x + 1);
}

fn main() {
    closure(&[1, 2]);
    function_result();
}
