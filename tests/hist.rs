//! `hist(f, ne, k, is, vs)`: every target agrees with `seq`, and `seq` with a plain-Rust
//! histogram; indices out of range are skipped; the runtime checks name the site.

mod common;

use common::{failure, on_every_target};
use pmexpr::{Target, accelerate};
use pmexpr_suite::Rng;

/// The histogram by plain Rust: what `hist` means.
fn reference<T: Copy>(f: impl Fn(T, T) -> T, ne: T, k: i64, is: &[i64], vs: &[T]) -> Vec<T> {
    let mut out = vec![ne; k as usize];
    for (&i, &v) in is.iter().zip(vs) {
        if (0..k).contains(&i) {
            out[i as usize] = f(out[i as usize], v);
        }
    }
    out
}

fn data(n: usize, k: i64) -> (Vec<i64>, Vec<i64>) {
    let mut rng = Rng::new(7);
    // Some indices fall outside 0..k on both sides.
    let is = (0..n).map(|_| rng.int(-2, k + 2)).collect();
    let vs = (0..n).map(|_| rng.int(0, 100)).collect();
    (is, vs)
}

#[test]
fn hist_of_sequences_agrees_with_plain_rust() {
    for (n, k) in [(0, 3), (5, 0), (1000, 7), (100_000, 33)] {
        let (is, vs) = data(n, k);
        let got = on_every_target(|| -> Vec<i64> { accelerate!(hist(addi, 0, k, is, vs)) });
        assert_eq!(got, reference(|a, b| a + b, 0, k, &is, &vs), "n={n} k={k}");
        let max = on_every_target(|| -> Vec<i64> {
            accelerate!(hist(|a, b| if a > b { a } else { b }, -1, k, is, vs))
        });
        assert_eq!(max, reference(|a: i64, b| a.max(b), -1, k, &is, &vs));
    }
}

#[test]
fn hist_fuses_map_and_create_and_reads_i32_indices() {
    let (is, vs) = data(20_000, 50);
    let is32: Vec<i32> = is.iter().map(|&i| i as i32).collect();
    let vs32: Vec<i32> = vs.iter().map(|&v| v as i32).collect();
    let n = is.len() as i64;
    // Bins of an i32 image, counting i32 ones, saturating at 255 (Parboil's histo).
    let sat = on_every_target(|| -> Vec<i32> {
        accelerate!(hist(
            |a, b| if a + b > 255 { 255 } else { a + b },
            0,
            50,
            is32,
            map(|v| v - v + 1, vs32)
        ))
    });
    let want = reference(|a: i32, b| (a + b).min(255), 0, 50, &is, &vec![1; is.len()]);
    assert_eq!(sat, want);
    // Indices computed from positions (`create`), f32 values (small integers: sums are exact
    // in any order).
    let vsf: Vec<f32> = vs.iter().map(|&v| v as f32).collect();
    let fl = on_every_target(|| -> Vec<f32> {
        accelerate!(hist(|a, b| a + b, 0.0, 10, create(n, |j| j % 12 - 1), vsf))
    });
    let pos: Vec<i64> = (0..n).map(|j| j % 12 - 1).collect();
    assert_eq!(fl, reference(|a, b| a + b, 0.0, 10, &pos, &vsf));
}

#[test]
fn hist_checks_lengths_and_bins_at_the_site() {
    let (is, vs) = (vec![0_i64, 1, 2], vec![1_i64, 2]);
    for t in [Target::Seq, Target::Cpu, Target::Debug] {
        let msg = failure(t, || -> Vec<i64> { accelerate!(hist(addi, 0, 3, is, vs)) });
        assert!(
            msg.contains("tests/hist.rs") && msg.contains("hist with 3 indices but 2 values"),
            "{msg}"
        );
        let k = -2;
        let msg = failure(t, || -> Vec<i64> { accelerate!(hist(addi, 0, k, is, is)) });
        assert!(
            msg.contains("hist with a negative number of bins: -2"),
            "{msg}"
        );
    }
}
