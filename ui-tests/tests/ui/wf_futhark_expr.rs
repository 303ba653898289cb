// Futhark: a sequential loop of the CUDA backend.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!(map(|x| seq_loop_acc(x, 3, |a, i| a + i), s));
    let _ = (&t, n);
}
