// What an assignment inside `accelerate!` cannot write: a variable captured from outside (its
// value does not change), an immutable local, an element of a captured sequence (assign a `let mut` copy instead).
// Each error is at the user's tokens and says what to write instead.
use pmexpr::accelerate;

fn main() {
    let total: i64 = 0;
    let s: Vec<i64> = vec![1, 2, 3];
    let _a: i64 = accelerate!(backend = cpu, {
        total += 1;
        total
    });
    let _b: i64 = accelerate!(backend = cpu, {
        let x = 1;
        x = 2;
        x
    });
    let _c: Vec<i64> = accelerate!(backend = cpu, {
        s[0] = 5;
        s
    });
}
