// Futhark: create building functions.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!(map(|x| get(create(2, |i| |y: i64| y + i), 1)(x), s));
    let _ = (&t, n);
}
