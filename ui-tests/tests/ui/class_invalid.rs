// Keywords of both backends in one site (classification: Invalid).
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: i64 = accelerate!({
        par_loop(n, |i| tensor_set(t, [i], i));
        reduce(addi, 0, s)
    });
}
