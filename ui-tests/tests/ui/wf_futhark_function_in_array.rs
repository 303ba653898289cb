// Futhark: a sequence of functions.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!({
        let fs = [|x: i64| x + 1];
        map(get(fs, 0), s)
    });
    let _ = (&t, n);
}
