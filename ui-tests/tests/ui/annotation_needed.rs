// The element type of a sequence made inside the expression is fixed by nothing: no captured
// value has it, so no Rust type exists for it, and the error asks for an annotation. (A captured
// value's element type, which rustc knows, needs none: see tests/open_types.rs.)
use pmexpr::accelerate;

fn main() {
    let s: Vec<bool> = vec![true, false];
    let _n: i64 = accelerate!(backend = cpu, length(s));
    let _r: Vec<i64> = accelerate!(map(|x| x, []));
}
