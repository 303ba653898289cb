// CUDA: `hist` (a Futhark-class keyword) in a site that asks for the CUDA backend.
use pmexpr::{Tensor, accelerate};

fn main() {
    let is: Vec<i64> = vec![0, 1, 1];
    let t = Tensor::<i64>::zeros(&[2]);
    accelerate!(backend = cuda, seq_loop(2, |i| tensor_set(t, [i], get(hist(addi, 0, 2, is, is), i))));
}
