use pmexpr::{Tensor, accelerate};

fn main() {
    let s: Vec<i64> = (1..=10).collect();
    let c: i64 = 3;
    let sum: i64 = accelerate!({
        let f = |x| muli(c, addi(x, 1));
        reduce(addi, 0, map(f, s))
    });
    println!("sum = {sum}");
    let a = vec![1.0, 2.0, 3.0];
    let b = vec![0.5, 0.5, 0.5];
    let v = accelerate!(map2(addf, a, b));
    println!("map2 = {v:?}");
    let t1 = Tensor::<i64>::from_vec(vec![1, 2, 3], &[3]);
    let t2 = Tensor::<i64>::from_vec(vec![4, 5, 6], &[3]);
    accelerate!(par_loop(3, |i| tensor_set(
        t1,
        [i],
        addi(tensor_get(t1, [i]), muli(2, tensor_get(t2, [i])))
    )));
    println!("t1 = {:?}", t1.to_vec());
}
