//! The README's quick start: free Rust variables in `accelerate!`, a map-reduce, a zip, and a
//! parallel loop that writes a tensor.
//!
//! ```text
//! cargo run --release --example quickstart
//! ```

use pmexpr::{Target, Tensor, accelerate, with_target};

fn main() {
    // Free variables are borrowed and marshaled automatically; their PMExpr types are inferred.
    let s: Vec<i64> = (1..=1_000).collect();
    let c: i64 = 12;
    let sum: i64 = accelerate!({
        let g = |x| addi(x, 1);
        let f = |x| muli(c, g(x));
        reduce(addi, 0, map(f, s))
    });
    println!("sum of c * (x + 1) over 1..=1000 = {sum}");

    // Operators are resolved by type: `+` on f64 is addf. The result comes back as a Vec<f64>.
    let a = vec![1.0, 2.0, 3.0];
    let b = vec![0.5, 0.25, 0.125];
    let v: Vec<f64> = accelerate!(map2(|x, y| x + y * 2.0, a, b));
    println!("map2 = {v:?}");

    // Tensors are mutable: writes inside the expression are visible afterwards.
    let t1 = Tensor::<i64>::from_vec(vec![1, 2, 3], &[3]);
    let t2 = Tensor::<i64>::from_vec(vec![4, 5, 6], &[3]);
    accelerate!(par_loop(3, |i| tensor_set(
        t1,
        [i],
        addi(tensor_get(t1, [i]), muli(2, tensor_get(t2, [i])))
    )));
    println!("t1 = {:?}", t1.to_vec());

    // The same expression on every CPU target (PMEXPR_BACKEND=seq|cpu and PMEXPR_DEBUG=1 do the
    // same for a whole run).
    for target in [Target::Seq, Target::Cpu, Target::Debug] {
        let m = vec![vec![1.5, 2.5], vec![3.5, 4.5]];
        let row_sums: Vec<f64> =
            with_target(target, || accelerate!(map(|row| reduce(addf, 0.0, row), m)));
        println!("{target:>5}: row sums = {row_sums:?}");
    }
}
