//! Runtime checks: a sequence index that may be out of bounds, a sequence used as a tensor index
//! (its length checked against the rank), and `never!()`.
fn main() {
    accelerate!(par_loop(n, |i| {
        let v = get(s, i + 1);
        let idx = get(indices, i);
        let w = tensor_get(t, idx);
        let x = if v < 0 { never!() } else { v };
        tensor_set(t2, idx, x + w)
    }));
}
