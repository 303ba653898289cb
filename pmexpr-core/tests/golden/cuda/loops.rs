//! Sequential loops inside device code: `seq_loop_acc` (a dot product), `foldl` with an
//! intrinsic and with a closure, `seq_loop` writing a row.
fn main() {
    accelerate!(par_loop(rows, |i| {
        let dot = seq_loop_acc(0.0, cols, |acc, j| acc + tensor_get(w, [i, j]) * get(x, j));
        tensor_set(z, [i], dot);
        let total = foldl(addi, 0, s);
        let weighted = foldl(|acc: i64, v: i64| acc + v * i, 0, s);
        seq_loop(3, |k| tensor_set(counts, [i, k], total + weighted + k))
    }));
}
