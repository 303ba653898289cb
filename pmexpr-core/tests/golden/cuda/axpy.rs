//! Listing 1 of the paper, first site: an axpy over tensors with `par_loop` (`t1[i] += 2 * t2[i]`).
fn main() {
    accelerate!({
        let axpy = |c, i| {
            let x = tensor_get(t1, [i]);
            let y = tensor_get(t2, [i]);
            tensor_set(t1, [i], addi(x, muli(c, y)))
        };
        par_loop(n, |i| axpy(2, i))
    });
}
