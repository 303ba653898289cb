// Nothing in the expression fixes the element type of `s`: the error asks for an annotation and
// shows where it goes.
use pmexpr::accelerate;

fn main() {
    let s: Vec<bool> = vec![true, false];
    let _n: i64 = accelerate!(length(s));
}
