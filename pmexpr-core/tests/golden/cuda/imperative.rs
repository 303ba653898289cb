//! Imperative Rust inside a `par_loop`: mutable locals, `while` and `for` loops with `break` and
//! `continue`, lowered to tail-recursive functions, which run as C loops (no device stack per
//! step).
#[pmexpr]
fn collatz(n: i64) -> i64 {
    let mut x = n;
    let mut steps = 0;
    while x != 1 {
        if x % 2 == 0 {
            x /= 2;
        } else {
            x = 3 * x + 1;
        }
        steps += 1;
    }
    steps
}

fn main() {
    accelerate!(par_loop(n, |i| {
        let mut acc = 0.0;
        for k in 0..i {
            if k % 3 == 0 {
                continue;
            }
            if k > 100 {
                break;
            }
            acc += tensor_get(w, [k]);
        }
        tensor_set(t, [i], acc + int2float(collatz(i + 1)))
    }));
}
