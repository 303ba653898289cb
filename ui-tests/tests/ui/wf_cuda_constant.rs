// CUDA: sequences are read-only in CUDA code.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!(par_loop(n, |i| tensor_set(t, [i], head(s))));
}
