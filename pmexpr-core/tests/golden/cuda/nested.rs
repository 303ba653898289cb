//! A `par_loop` inside the function of another: the inner one runs sequentially on the device.
fn main() {
    accelerate!(par_loop(n, |i| par_loop(m, |j| tensor_set(t, [i, j], i * j))));
}
