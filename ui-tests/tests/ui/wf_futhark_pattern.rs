// Futhark: an integer pattern inside a tuple pattern (one on its own is a comparison).
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!(map(
        |x| match (x, x) {
            (3, _) => 1,
            _ => 0,
        },
        s
    ));
    let _ = (&t, n);
}
