//! `if` and `match` on booleans and tuples, `&&`, a `match` whose last arm is a wildcard.
fn main() {
    accelerate!(par_loop(n, |i| {
        let even = i % 2 == 0;
        let big = i > 10 && even;
        let label = match (even, big) {
            (true, true) => 3,
            (true, false) => 2,
            (false, _) => 1,
        };
        let sign = if tensor_get(t, [i]) < 0 { -1 } else { 1 };
        tensor_set(t, [i], label * sign)
    }));
}
