//! Float arithmetic and the math functions, `int2float` and `floorfi`.
fn main() {
    accelerate!(par_loop(n, |i| {
        let x = tensor_get(xs, [i]);
        let y = sqrt(x * x + 1.0) + exp(-x) + log(x + 2.0) + pow(x, 0.5) + sin(x) * cos(x);
        tensor_set(ys, [i], y / int2float(i + 1));
        tensor_set(fl, [i], floorfi(y))
    }));
}
