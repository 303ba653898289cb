// A projection on a tuple without that field, and a tensor of bool.
use pmexpr::accelerate;

fn field(p: (i64, f64)) -> i64 {
    accelerate!({
        let q: (i64, f64) = p;
        q.2
    })
}

fn tensor_of_pairs(t: pmexpr::Tensor<f64>) -> bool {
    accelerate!({
        let t: pmexpr::Tensor<(i64, i64)> = t;
        tensor_get(t, [0])
    })
}

fn main() {
    field((1, 2.0));
    tensor_of_pairs(pmexpr::Tensor::zeros(&[1]));
}
