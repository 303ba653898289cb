// Futhark: recursion.
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: Vec<i64> = accelerate!({
        fn fact(k: i64) -> i64 {
            if k == 0 { 1 } else { k * fact(k - 1) }
        }
        map(fact, s)
    });
    let _ = (&t, n);
}
