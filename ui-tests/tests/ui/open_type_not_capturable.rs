// An element type the expression leaves open comes from the captured value's Rust type, which
// must still be one `accelerate!` can capture: a `Vec<String>` is refused at the variable.
use pmexpr::accelerate;

fn main() {
    let names: Vec<String> = vec!["a".into(), "b".into()];
    let _r: Vec<String> = accelerate!(backend = cpu, reverse(names));
}
