// CUDA: a function taking a function.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!({
        let apply = |f, x: i64| f(x);
        par_loop(n, |i| tensor_set(t, [i], apply(|y| y * 2, i)))
    });
    let _ = &s;
}
