//! A `Tensor` is a shared handle: another thread may read it while an `accelerate!` writes it
//! (through `par_loop`, or as the `c` of `tensor_gemm`). Every element it sees is a value that
//! was written, never a mix of two (the elements are atomics; `tensor_gemm` on `cpu` computes on
//! copies and stores through them), and nothing fails.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use pmexpr::{Target, Tensor, accelerate, with_target};

/// Runs `write` on this thread while another reads `t` until it is done; returns what the
/// reader saw that is not in `allowed`.
fn read_while(t: &Tensor<f64>, allowed: &[f64], write: impl FnOnce()) -> Vec<f64> {
    let allowed: HashSet<u64> = allowed.iter().map(|a| a.to_bits()).collect();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut odd = Vec::new();
            let mut rounds = 0;
            while !done.load(Ordering::Acquire) || rounds < 3 {
                for v in t.to_vec() {
                    if !allowed.contains(&v.to_bits()) {
                        odd.push(v);
                    }
                }
                let mid = vec![0; t.rank()];
                if let Some(v) = t.get(&mid)
                    && !allowed.contains(&v.to_bits())
                {
                    odd.push(v);
                }
                rounds += 1;
            }
            odd
        });
        write();
        done.store(true, Ordering::Release);
        reader.join().expect("the reader does not panic")
    })
}

#[test]
fn a_reader_sees_whole_values_while_par_loop_writes() {
    // Two values whose bit patterns share no 32-bit half, so a torn read would show.
    let (a, b) = (1.0_f64, -2.5e-300_f64);
    for target in [Target::Cpu, Target::Seq] {
        let t = Tensor::from_vec(vec![a; 1 << 16], &[1 << 16]);
        let odd = read_while(&t, &[a, b], || {
            with_target(target, || {
                let n = t.len() as i64;
                accelerate!(seq_loop(20, |r| par_loop(n, |i| {
                    tensor_set(t, [i], if (r + i) % 2 == 0 { a } else { b })
                })))
            })
        });
        assert!(
            odd.is_empty(),
            "{target}: torn values {:?}",
            &odd[..odd.len().min(4)]
        );
    }
}

#[test]
fn a_reader_of_the_operands_and_the_product_is_safe_during_tensor_gemm() {
    // `a` is read by the product and by the other thread at once; `c` is written by the
    // product while the other thread reads it: old or final values only, each whole (a GEMM
    // that accumulated into `c` block by block over `k` would show partial sums: `n` exceeds
    // `matrixmultiply`'s depth blocks). Small integers keep every sum exact.
    let n = 260;
    let a = Tensor::from_fn(&[n, n], |ix| ((ix[0] + 2 * ix[1]) % 7) as f64);
    let c = Tensor::<f64>::zeros(&[n, n]);
    let want: Vec<f64> = {
        let av = a.to_vec();
        (0..n * n)
            .map(|p| {
                (0..n)
                    .map(|l| av[(p / n) * n + l] * av[l * n + p % n])
                    .sum()
            })
            .collect()
    };
    let mut allowed = want.clone();
    allowed.push(0.0);
    let odd = read_while(&c, &allowed, || {
        with_target(Target::Cpu, || {
            accelerate!(
                backend = cpu,
                seq_loop(2, |_r| tensor_gemm(c, a, false, a, false, 1.0, 0.0))
            )
        })
    });
    assert!(
        odd.is_empty(),
        "values never written: {:?}",
        &odd[..odd.len().min(4)]
    );
    for (x, y) in c.to_vec().iter().zip(&want) {
        assert!((x - y).abs() <= 1e-9, "{x} vs {y}");
    }
    let odd = read_while(&a, &(0..7).map(f64::from).collect::<Vec<_>>(), || {
        with_target(Target::Cpu, || {
            accelerate!(backend = cpu, tensor_gemm(c, a, true, a, false, 0.5, 1.0))
        })
    });
    assert!(odd.is_empty(), "{odd:?}");
}
