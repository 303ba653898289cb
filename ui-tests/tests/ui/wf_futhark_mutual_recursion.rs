// Futhark: mutual recursion (a function that calls only itself, as its last step, is a loop;
// two that call each other are not).
use pmexpr::accelerate;

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let _r: Vec<bool> = accelerate!({
        fn is_even(k: i64) -> bool {
            if k == 0 { true } else { is_odd(k - 1) }
        }
        fn is_odd(k: i64) -> bool {
            if k == 0 { false } else { is_even(k - 1) }
        }
        map(is_even, s)
    });
}
