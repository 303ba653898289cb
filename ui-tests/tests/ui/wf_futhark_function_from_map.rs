// Futhark: map producing functions.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!({
        let fs = map(|x| |y: i64| x + y, s);
        map(|f| f(1), fs)
    });
    let _ = (&t, n);
}
