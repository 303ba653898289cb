// CUDA: map in a site that asks for the CUDA backend.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!(backend = cuda, seq_loop(n, |i| tensor_set(t, [i], get(map(|x| x + 1, s), i))));
}
