// Rust syntax with no PMExpr meaning is reported at its own tokens with the PMExpr way to say it.
use pmexpr::accelerate;

fn method(s: &[i64]) -> i64 {
    accelerate!(s.len())
}

fn cast(s: &[i64]) -> f64 {
    accelerate!(int2float(get(s, 0)) + (s[1] as f64))
}

fn for_loop(s: &[i64]) {
    accelerate!({
        for i in s {}
    })
}

fn nested(s: &[i64]) -> i64 {
    accelerate!(accelerate!(length(s)))
}

fn main() {
    let s = vec![1, 2, 3];
    method(&s);
    cast(&s);
    for_loop(&s);
    nested(&s);
}
