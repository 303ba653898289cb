// A site with no parallel keyword has no backend (classification: Any).
use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    let _r: i64 = accelerate!(get(s, 0) + n);
    let _ = &t;
}
