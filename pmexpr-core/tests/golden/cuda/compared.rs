//! A value only compared (`y` and the elements of `s`), which may also be a `bool`: one module
//! per instantiation (i64, f64, i32, f32, then bool), concatenated here as one program; `t`'s
//! elements are a float (`f64`, `f32`).
fn main() {
    accelerate!(par_loop(n, |i| tensor_set(
        t,
        [i],
        if get(s, i) == y { 1.0 } else { 0.0 }
    )));
}
