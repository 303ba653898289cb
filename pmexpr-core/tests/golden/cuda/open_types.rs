//! Element types only moved or counted (the rows of `m`, moved through a branch, and their
//! elements): the captured values' Rust types fix them, so there is one module per number and
//! `bool` they may be (i64, f64, i32, f32, then bool), concatenated here as one program; the
//! runtime picks the one the Rust type names.
fn main() {
    accelerate!(par_loop(length(m), |i| {
        let row = if i % 2 == 0 { get(m, i) } else { get(m, 0) };
        tensor_set(t, [i], length(row))
    }));
}
