// CUDA: an integer pattern inside a tuple pattern (one on its own is a comparison).
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!(par_loop(n, |i| tensor_set(
        t,
        [i],
        match (i, i) {
            (0, _) => 1,
            _ => 2,
        }
    )));
    let _ = &s;
}
