// `hist`'s bin indices are integers: a sequence of floats is refused at the argument.
use pmexpr::accelerate;

fn main() {
    let xs: Vec<f64> = vec![0.5, 1.5];
    let r: Vec<i64> = accelerate!(hist(addi, 0, 2, map(|x| x * 2.0, xs), [1, 1]));
    println!("{r:?}");
}
