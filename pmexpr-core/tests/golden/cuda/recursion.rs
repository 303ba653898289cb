//! A `par_loop` calling a recursive `#[pmexpr]` function and mutually recursive local functions.
#[pmexpr]
fn fib(n: i64) -> i64 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

fn main() {
    accelerate!({
        fn is_even(k: i64) -> bool {
            if k == 0 { true } else { is_odd(k - 1) }
        }
        fn is_odd(k: i64) -> bool {
            if k == 0 { false } else { is_even(k - 1) }
        }
        par_loop(n, |i| {
            tensor_set(t, [i], if is_even(i) { fib(i) } else { 0 })
        })
    });
}
