// Futhark: a fold whose accumulator is a function.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!({
        let h = foldl(|f, x| |y: i64| f(y) + x, |y: i64| y, s);
        map(h, s)
    });
    let _ = (&t, n);
}
