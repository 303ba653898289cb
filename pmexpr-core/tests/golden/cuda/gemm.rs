//! A dense layer trained in a host `seq_loop`: `tensor_gemm` in host code is a kernel of its
//! own (the prelude's `pm_gemm`), launched beside the `par_loop` kernel; the float type is open,
//! so there is a module for `f64` and one for `f32`.
fn main() {
    accelerate!(seq_loop(steps, |_s| {
        tensor_gemm(y, x, false, w, true, 1.0, 0.0);
        par_loop(length(tensor_shape(y)), |i| {
            let v = tensor_linear_get(y, i);
            tensor_linear_set(y, i, if v < 0.0 { 0.0 } else { v })
        });
        tensor_gemm(g, y, true, x, false, 0.5, 1.0)
    }));
}
