//! A number whose type the captured values fix (`a`, the elements of `x` and `y`): one module per
//! instantiation (i64, f64, i32, then f32), concatenated here as one program.
fn main() {
    accelerate!(par_loop(n, |i| tensor_set(
        y,
        [i],
        a * tensor_get(x, [i]) + tensor_get(y, [i])
    )));
}
