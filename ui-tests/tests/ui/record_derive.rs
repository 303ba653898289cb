// Structs that cannot be PMExpr records, reported at the offending tokens.
use pmexpr::Record;

#[derive(Record)]
struct Generic<T> {
    x: T,
}

#[derive(Record)]
struct Positional(i64, f64);

#[derive(Record)]
struct Empty {}

#[derive(Record)]
struct NotPmexpr {
    name: String,
    ok: f64,
    small: i32,
}

#[derive(Record)]
struct Wide {
    a: i64,
    b: i64,
    c: i64,
    d: i64,
    e: i64,
    f: i64,
    g: i64,
    h: i64,
    i: i64,
    j: i64,
    k: i64,
    l: i64,
    m: i64,
}

fn main() {}
