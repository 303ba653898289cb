use pmexpr::{Target, Tensor, accelerate, with_target};
use rayon::prelude::*;
fn main() {
    let n = 10_000_000usize;
    let x = Tensor::<f64>::from_vec(vec![1.0; n], &[n]);
    let y = Tensor::<f64>::from_vec(vec![2.0; n], &[n]);
    let xs = vec![1.0f64; n];
    let mut ys = vec![2.0f64; n];
    let s: Vec<i64> = (0..n as i64).collect();
    let k = 12i64;
    let a = 2.5f64;
    let nn = n as i64;
    for round in 0..3 {
        let t = std::time::Instant::now();
        for _ in 0..10 {
            with_target(Target::Cpu, || {
                accelerate!(par_loop(nn, |i| tensor_set(
                    y,
                    [i],
                    a * tensor_get(x, [i]) + tensor_get(y, [i])
                )))
            });
        }
        let acc = t.elapsed() / 10;
        let t = std::time::Instant::now();
        for _ in 0..10 {
            ys.par_iter_mut()
                .zip(std::hint::black_box(&xs).par_iter())
                .for_each(|(y, x)| *y += a * x);
        }
        let hand = t.elapsed() / 10;
        let t = std::time::Instant::now();
        let mut r1 = 0;
        for _ in 0..10 {
            r1 += with_target(Target::Cpu, || {
                accelerate!(reduce(addi, 0, map(|x| muli(k, addi(x, 1)), s)))
            });
        }
        let acc2 = t.elapsed() / 10;
        let t = std::time::Instant::now();
        let mut r2 = 0;
        for _ in 0..10 {
            r2 += std::hint::black_box(&s)
                .par_iter()
                .map(|&x| k.wrapping_mul(x.wrapping_add(1)))
                .reduce(|| 0, i64::wrapping_add);
        }
        let hand2 = t.elapsed() / 10;
        assert_eq!(r1, r2);
        println!(
            "round {round}: axpy {acc:?} vs rayon {hand:?} = {:.2}; reduce-map {acc2:?} vs {hand2:?} = {:.2}",
            acc.as_secs_f64() / hand.as_secs_f64(),
            acc2.as_secs_f64() / hand2.as_secs_f64()
        );
    }
}
