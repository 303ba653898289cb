// As in Rust, a `fn` item without a return type returns `()`; a named field is not a tuple field
// (rustc's own error: a field of a captured value is captured alone, with the field's type).
use pmexpr::accelerate;

fn no_return_type(x: i64) -> i64 {
    accelerate!({
        fn f(y: i64) {
            y + 1
        }
        f(x)
    })
}

fn named_field(p: (i64, i64)) -> i64 {
    accelerate!(backend = cpu, p.x)
}

fn main() {
    no_return_type(1);
    named_field((1, 2));
}
