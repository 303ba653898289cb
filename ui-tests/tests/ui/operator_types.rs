// Operators need operands of one numeric type; conditions must be bool.
use pmexpr::accelerate;

fn mixed(x: i64) -> f64 {
    accelerate!(backend = cpu, x + 1.5)
}

fn condition(x: i64) -> i64 {
    accelerate!(backend = cpu, if x { 1 } else { 2 })
}

fn sequences(x: i64) -> bool {
    accelerate!(backend = cpu, [x] < [x])
}

fn main() {
    mixed(2);
    condition(2);
    sequences(2);
}
