//! `i32` and `f32` values (one module per instantiation: the 64-bit one, then the 32-bit one):
//! 32-bit wrapping arithmetic and checked division, a literal that does not fit an `i32` (an
//! error when evaluated, as on the CPU), `float` arithmetic with `float` literals (`1e300` is
//! infinity as an `f32`), and numbers of the captured values' types beside `i64` indices and
//! counters (a record of an `i64` and a number).
fn main() {
    accelerate!(par_loop(n, |i| {
        let a = tensor_get(t, [i]);
        let w = 2147483647 * a + a - 1;
        tensor_set(t, [i], -(w / (a - 3)) + 3000000000)
    }));
    accelerate!(par_loop(length(s), |i| {
        let x = get(s, i);
        let y = if x < 0.5 { x * 1.1 + 1e300 } else { x / 3.0 - 0.1 };
        tensor_set(out, [i], y)
    }));
    accelerate!(par_loop(length(ps), |i| {
        let (k, w) = get(ps, i);
        let v = if w == 0.5 {
            0.0
        } else {
            seq_loop_acc(w, k, |acc, _j| acc * w)
        };
        tensor_set(out, [k], v + tensor_get(out, [k]))
    }));
}
