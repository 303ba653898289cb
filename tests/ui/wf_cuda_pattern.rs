// CUDA: integer patterns.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!(par_loop(n, |i| tensor_set(
        t,
        [i],
        match i {
            0 => 1,
            _ => 2,
        }
    )));
    let _ = &s;
}
