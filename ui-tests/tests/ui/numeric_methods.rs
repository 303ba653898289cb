// Rust's numeric methods used on the wrong kind of number, with an exponent that is not an
// integer, or with the wrong number of arguments, are refused at the user's tokens, with a help.
use pmexpr::accelerate;

fn pow_of_a_float() -> f64 {
    accelerate!(backend = cpu, 2.5.pow(2))
}

fn powi_by_a_float(x: f64) -> f64 {
    accelerate!(backend = cpu, x.powi(1.5))
}

fn isqrt_of_a_float() -> f64 {
    accelerate!(backend = cpu, 2.0.isqrt())
}

fn is_power_of_two_of_a_float() -> bool {
    accelerate!(backend = cpu, 4.0.is_power_of_two())
}

fn clamp_with_one_bound(x: i64) -> i64 {
    accelerate!(backend = cpu, x.clamp(1))
}

fn clamp_of_mixed_numbers(x: i64) -> i64 {
    accelerate!(backend = cpu, x.clamp(0, 1.5))
}

fn main() {
    pow_of_a_float();
    powi_by_a_float(1.0);
    isqrt_of_a_float();
    is_power_of_two_of_a_float();
    clamp_with_one_bound(1);
    clamp_of_mixed_numbers(1);
}
