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
    }
    // The number of bins is a count, Rust's `0..k`: a negative one is no bins.
    let k = -2;
    let none = on_every_target(|| -> Vec<i64> { accelerate!(hist(addi, 0, k, is, is)) });
    assert_eq!(none, Vec::<i64>::new());
}

/// Rows of `w` numbers each, some outside `0..k`.
fn image(rows: usize, w: usize, k: i64) -> Vec<Vec<i64>> {
    let mut rng = Rng::new(11);
    (0..rows)
        .map(|_| (0..w).map(|_| rng.int(-1, k + 1)).collect())
        .collect()
}

#[test]
fn hist_over_flatten_reads_the_rows_in_place() {
    for (rows, w, k) in [
        (0, 0, 4),
        (3, 0, 4),
        (1, 5, 3),
        (37, 29, 50),
        (400, 300, 1000),
    ] {
        let img = image(rows, w, k);
        let flat: Vec<i64> = img.concat();
        let ones = vec![1_i64; flat.len()];
        let want = reference(|a, b| a + b, 0, k, &flat, &ones);
        // Parboil histo's form: a `let` that only the `hist` reads, as indices and as the
        // sequence its values are mapped from.
        let got = on_every_target(|| -> Vec<i64> {
            accelerate!({
                let pixels = flatten(img);
                hist(addi, 0, k, pixels, map(|_| 1, pixels))
            })
        });
        assert_eq!(got, want, "rows={rows} w={w}");
        // `flatten` written in the arguments, values from the rows too.
        let got = on_every_target(|| -> Vec<i64> {
            accelerate!(hist(
                |a, b| a + b,
                0,
                k,
                flatten(img),
                map(|p| p * 2, flatten(img))
            ))
        });
        let twice: Vec<i64> = flat.iter().map(|p| p * 2).collect();
        assert_eq!(got, reference(|a, b| a + b, 0, k, &flat, &twice));
        // A flattened sequence that is also used elsewhere is built as before.
        let got = on_every_target(|| -> (Vec<i64>, i64) {
            accelerate!({
                let pixels = flatten(img);
                (
                    hist(addi, 0, k, pixels, create(length(pixels), |j| j)),
                    length(pixels),
                )
            })
        });
        let pos: Vec<i64> = (0..flat.len() as i64).collect();
        assert_eq!(
            got,
            (
                reference(|a, b| a + b, 0, k, &flat, &pos),
                flat.len() as i64
            )
        );
        // Rows made inside the expression, flattened inside a function that is mapped.
        let got = on_every_target(|| -> Vec<Vec<i64>> {
            accelerate!(map(
                |c| {
                    let shifted = flatten(map(|r| map(|p| p + c, r), img));
                    hist(addi, 0, k, shifted, shifted)
                },
                [0, 1]
            ))
        });
        let shifted: Vec<i64> = flat.iter().map(|p| p + 1).collect();
        assert_eq!(
            got,
            vec![
                reference(|a, b| a + b, 0, k, &flat, &flat),
                reference(|a, b| a + b, 0, k, &shifted, &shifted)
            ]
        );
    }
}

#[test]
fn hist_over_flatten_fails_as_the_built_sequence_would() {
    let img = image(4, 3, 5);
    let short = vec![1_i64; 11];
    let zero = 0;
    for t in [Target::Seq, Target::Cpu, Target::Debug] {
        let msg = failure(t, || -> Vec<i64> {
            accelerate!({
                let pixels = flatten(img);
                hist(addi, 0, 5, pixels, short)
            })
        });
        assert!(msg.contains("hist with 12 indices but 11 values"), "{msg}");
        let msg = failure(t, || -> Vec<i64> {
            accelerate!(hist(
                addi,
                0,
                5,
                flatten(img),
                map(|p| p / zero, flatten(img))
            ))
        });
        assert!(
            msg.contains("tests/hist.rs") && msg.contains("Division by zero"),
            "{msg}"
        );
    }
}
