// A Rust method that PMExpr reads as one of its own functions, called on a value that is not
// what it needs: the error says what the call was taken for, at the receiver.
use pmexpr::accelerate;

fn main() {
    let cells: Vec<i64> = vec![1, 2, 3];
    // A tuple, so `.len()` (the length of a sequence) does not apply.
    let _n: i64 = accelerate!(backend = cpu, {
        let board = (cells, 3);
        board.len()
    });
    // An integer method on a float, and a float method on an integer.
    let xs: Vec<f64> = vec![1.5];
    let _c: Vec<f64> = accelerate!(map(|x: f64| x.count_ones(), xs));
    let ks: Vec<i64> = vec![3];
    let _f: Vec<i64> = accelerate!(map(|k: i64| k.floor(), ks));
}
