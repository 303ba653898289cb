//! Sequences read with `get` and `length`, nested ones included.
fn main() {
    accelerate!(par_loop(length(rows), |i| {
        let row = get(rows, i);
        let n = length(row);
        tensor_set(sums, [i], seq_loop_acc(0, n, |acc, j| acc + get(row, j)))
    }));
}
