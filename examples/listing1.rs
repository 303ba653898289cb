//! The paper's motivating example (Listing 1 of "Expression Acceleration: Seamless
//! Parallelization of Typed High-Level Languages"), in Rust.
//!
//! Two accelerated expressions with sequential code between them: the first updates the tensor
//! `t1` in place with `par_loop` (an axpy: `t1[i] += 2 * t2[i]`), the second sums the result with
//! `reduce` (or, for short inputs, with a sequential `foldl`).
//!
//! ```text
//! cargo run --release --example listing1 [n]          # n elements (default 1000000)
//! PMEXPR_BACKEND=seq cargo run --release --example listing1
//! PMEXPR_DEBUG=1 cargo run --release --example listing1
//! ```

use pmexpr::{Tensor, accelerate, current_target};
use pmexpr_suite::Rng;

/// The paper's `readInput`: two tensors of `n` integers and `n`.
fn read_input(n: usize) -> (Tensor<i64>, Tensor<i64>, i64) {
    let mut rng = Rng::new(2024);
    let t1 = Tensor::from_vec(rng.ints(n, 0, 100), &[n]);
    let t2 = Tensor::from_vec(rng.ints(n, 0, 100), &[n]);
    (t1, t2, n as i64)
}

fn main() {
    let n: usize = match std::env::args().nth(1) {
        None => 1_000_000,
        Some(a) => match a.parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("usage: listing1 [n]   (n: the number of elements, default 1000000)");
                std::process::exit(2);
            }
        },
    };
    let (t1, t2, n) = read_input(n);
    let expected: i64 = t1
        .to_vec()
        .iter()
        .zip(t2.to_vec())
        .map(|(x, y)| x + 2 * y)
        .sum();

    // Lines 2-7 of Listing 1: a CUDA-class expression (par_loop over tensors).
    accelerate!({
        let axpy = |c, i| {
            let x = tensor_get(t1, [i]);
            let y = tensor_get(t2, [i]);
            tensor_set(t1, [i], addi(x, muli(c, y)))
        };
        par_loop(n, |i| axpy(2, i))
    });

    // Line 8: sequential code between the two accelerated expressions.
    let t3: Vec<i64> = t1.to_vec();

    // Lines 9-12: a Futhark-class expression (reduce over a sequence).
    let sum: i64 = accelerate!({
        let compute_sum = |s, n| {
            if geqi(n, 100) {
                reduce(addi, 0, s)
            } else {
                foldl(addi, 0, s)
            }
        };
        compute_sum(t3, n)
    });

    let target = current_target().map_or_else(|e| e, |t| t.to_string());
    println!("n = {n}, target = {target}");
    println!("sum = {sum}");
    assert_eq!(
        sum, expected,
        "the accelerated result differs from sequential Rust"
    );
    println!("checked against sequential Rust: ok");
}
