// CUDA: the loop body is neither a function name nor a partial application.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!(par_loop(n, {
        let k = 2;
        |i| tensor_set(t, [i], k)
    }));
    let _ = &s;
}
