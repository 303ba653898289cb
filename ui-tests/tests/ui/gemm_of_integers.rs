// `tensor_gemm` multiplies float tensors only.
use pmexpr::{Tensor, accelerate};

fn main() {
    let c = Tensor::<i64>::zeros(&[2, 2]);
    let a = Tensor::<i64>::zeros(&[2, 2]);
    accelerate!(backend = cpu, tensor_gemm(c, a, false, a, false, 1.0, 0.0));
}
