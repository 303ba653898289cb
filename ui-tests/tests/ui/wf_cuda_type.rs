// CUDA: a sequence of functions.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!(par_loop(n, |i| {
        let fs = [|x: i64| x + 1];
        tensor_set(t, [i], get(fs, 0)(i))
    }));
    let _ = &s;
}
