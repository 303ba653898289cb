//! Tensor views and accesses: `tensor_slice`, `tensor_sub`, the shape and the rank, 2-D and
//! linear indices.
fn main() {
    accelerate!(par_loop(rows, |i| {
        let row = tensor_slice(m, [i]);
        let width = get(tensor_shape(row), 0);
        let block = tensor_sub(m, i, 1);
        seq_loop(width, |j| {
            let v = tensor_get(row, [j]) + tensor_get(block, [0, j]) + tensor_rank(m);
            tensor_linear_set(out, i * width + j, v + tensor_linear_get(m, i * width + j))
        })
    }));
}
