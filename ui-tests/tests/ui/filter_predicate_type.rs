// `filter`'s predicate returns a `bool`: a number is refused at the predicate.
use pmexpr::accelerate;

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let r: Vec<i64> = accelerate!(filter(|x| x % 2, s));
    println!("{r:?}");
}
