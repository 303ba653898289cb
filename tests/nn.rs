//! draft
use pmexpr::{Target, with_target};
use pmexpr_suite::nn::{Hyper, Mlp, batches, train, accuracy};
mod common;

#[test]
fn tiny() {
    let mut rng = pmexpr_suite::Rng::new(3);
    let n = 40; let f = 12;
    let y: Vec<i64> = (0..n).map(|i| (i % 10) as i64).collect();
    let x: Vec<f64> = (0..n*f).map(|k| { let c = y[k / f] as usize; if (k % f) == c || (k%f) == c+1 { 1.0 } else { 0.1 * rng.float() } }).collect();
    let tb = batches(&x, &y, f, 8);
    let hyper = Hyper { epochs: 3, rate: 0.5, decay: 0.1 };
    let run = |t: Target| {
        let net = Mlp::new([f, 16, 8, 10], 8, 1);
        let p = with_target(t, || train(&net, &tb, &tb, hyper));
        (p.to_vec(), net.weights())
    };
    let seq = run(Target::Seq);
    println!("{:?}", seq.0);
    for t in [Target::Cpu, Target::Debug].into_iter().chain(common::cuda_targets()) {
        let r = run(t);
        assert_eq!(r.0, seq.0, "{t}");
        assert_eq!(r.1, seq.1, "{t}");
    }
    let _ = accuracy(&seq.0, &tb);
}
