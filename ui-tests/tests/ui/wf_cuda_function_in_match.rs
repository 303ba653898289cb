// CUDA: a conditional returning a function.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!(par_loop(n, |i| tensor_set(t, [i], (if i > 0 { addi } else { subi })(i, 1))));
    let _ = &s;
}
