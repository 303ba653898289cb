//! Integer arithmetic that wraps like Rust's wrapping operations, and checked `/` and `%`
//! (division by zero at `i == 3`).
fn main() {
    accelerate!(par_loop(n, |i| {
        let a = tensor_get(t, [i]);
        let big = 9223372036854775807 * a + a - 1;
        let q = a / (i - 3);
        let r = a % 7;
        tensor_set(t, [i], -(big + q + r))
    }));
}
