// CUDA: `tensor_gemm` is host code's, not a `par_loop` iteration's (nested parallelism).
use pmexpr::{Tensor, accelerate};

fn main() {
    let c = Tensor::<f64>::zeros(&[4, 2, 2]);
    let a = Tensor::<f64>::zeros(&[2, 2]);
    let n: i64 = 4;
    accelerate!(par_loop(n, |i| tensor_gemm(
        tensor_slice(c, [i]),
        a,
        false,
        a,
        false,
        1.0,
        0.0
    )));
}
