// Applying a value that is not a function.
use pmexpr::accelerate;

fn main() {
    let n: i64 = 3;
    let _r: i64 = accelerate!({
        let k = addi(n, 1);
        k(2)
    });
}
