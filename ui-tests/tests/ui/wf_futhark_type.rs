// Futhark: tensors are not supported.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!({
        let u: Tensor<i64> = t;
        map(|x| x + 1, s)
    });
    let _ = n;
}
