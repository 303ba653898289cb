// `create` counts as a Futhark keyword (Futhark's `tabulate`): with `par_loop`, a site mixes
// backends.
use pmexpr::{Tensor, accelerate};

fn main() {
    let t = Tensor::<i64>::zeros(&[3]);
    let n: i64 = 3;
    accelerate!(par_loop(n, |i| tensor_set(t, [i], get(create(n, |j| j * j), i))));
}
