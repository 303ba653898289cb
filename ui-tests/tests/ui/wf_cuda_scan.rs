// CUDA: `scan` (a Futhark-class keyword) in a site that asks for the CUDA backend.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    accelerate!(backend = cuda, seq_loop(3, |i| tensor_set(t, [i], get(scan(addi, 0, s), i))));
}
