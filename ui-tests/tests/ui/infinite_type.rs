// A value used as its own field has an infinite type. (`x.0` on the captured `x` itself is a
// captured field, which rustc checks: an `i64` has no field `0`.)
use pmexpr::accelerate;

fn main() {
    let x: i64 = 1;
    let _r: i64 = accelerate!({ let y = x; y + y.0 });
}
