// CUDA: a partial application used as a value.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!({
        let add = |a: i64, b: i64| a + b;
        par_loop(n, |i| tensor_set(t, [i], foldl(|acc, f| acc, 0, [add(i)])))
    });
    let _ = &s;
}
