// Bit operators on floats, numeric methods on the wrong kind of number, and casts to types that
// cannot be named inside `accelerate!` are refused at the user's tokens, with a help.
use pmexpr::accelerate;

fn float_and() -> f64 {
    accelerate!(backend = cpu, 1.5 & 2.5)
}

fn float_shift(n: i64) -> f64 {
    accelerate!(backend = cpu, 1.5 << n)
}

fn float_not() -> f64 {
    accelerate!(backend = cpu, !1.5)
}

fn floor_of_an_integer() -> i64 {
    accelerate!(backend = cpu, 3.floor())
}

fn count_ones_of_a_float() -> f64 {
    accelerate!(backend = cpu, 2.5.count_ones())
}

fn rotate_by_a_float(x: i64) -> i64 {
    accelerate!(backend = cpu, x.rotate_left(1.5))
}

fn cast_to_bool(x: i64) -> bool {
    accelerate!(backend = cpu, x as bool)
}

fn cast_to_i128(x: i64) -> i64 {
    accelerate!(backend = cpu, x as i128)
}

fn main() {
    float_and();
    float_shift(1);
    float_not();
    floor_of_an_integer();
    count_ones_of_a_float();
    rotate_by_a_float(1);
    cast_to_bool(1);
    cast_to_i128(1);
}
