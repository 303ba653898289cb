// accelerate! inside accelerate! is rejected.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!(map(|x| accelerate!(x + 1), s));
    let _ = (&t, n);
}
