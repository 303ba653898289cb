// `scatter`'s indices are `i64`, as Futhark's: a sequence of floats is refused at the argument.
use pmexpr::accelerate;

fn main() {
    let dest: Vec<f64> = vec![0.0; 4];
    let vs: Vec<f64> = vec![0.5, 1.5];
    let r: Vec<f64> = accelerate!(scatter(dest, map(|v| v * 2.0, vs), vs));
    println!("{r:?}");
}
