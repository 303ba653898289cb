//! `map(|j| { …; map(g, ks) }, s)` with `ks` bound outside builds its rows in one buffer on the
//! CPU targets (pmexpr-core's `codegen/rust/rows.rs`): the same nested sequence as the maps as
//! written, the same failures, on every backend.

mod common;

use common::failure;
use pmexpr::{Target, accelerate, with_target};

const TARGETS: [Target; 3] = [Target::Seq, Target::Cpu, Target::Debug];

/// A 3-point stencil over the rows of `a`, with `let`s and a destructuring before the inner map.
fn smooth(target: Target, a: &Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    with_target(target, || {
        accelerate!({
            let ny = length(a);
            let nz = length(head(a));
            let js = create(ny, |j| j);
            let ks = create(nz, |k| k);
            map(
                |j| {
                    let r = a[j];
                    let (up, down) = (
                        a[if j == 0 { j } else { j - 1 }],
                        a[if j == ny - 1 { j } else { j + 1 }],
                    );
                    let scale = 1.0 / 3.0;
                    map(
                        |k| {
                            if k == 0 || k == nz - 1 {
                                r[k]
                            } else {
                                (r[k - 1] + r[k + 1] + up[k] + down[k] - r[k]) * scale
                            }
                        },
                        ks,
                    )
                },
                js,
            )
        })
    })
}

#[test]
fn rows_agree_with_the_maps_as_written() {
    // Below 16384 numbers `cpu` fills the rows of this cheap function on the calling thread;
    // 300 × 64 goes to rayon.
    for (ny, nz) in [(1, 1), (3, 5), (17, 33), (64, 2), (200, 64), (300, 64)] {
        let a: Vec<Vec<f64>> = (0..ny)
            .map(|j| {
                (0..nz)
                    .map(|k| ((j * 7 + k * 3) % 11) as f64 - 5.0)
                    .collect()
            })
            .collect();
        let mut want = vec![vec![0.0; nz]; ny];
        for j in 0..ny {
            let (up, down) = (&a[j.saturating_sub(1)], &a[(j + 1).min(ny - 1)]);
            for k in 0..nz {
                want[j][k] = if k == 0 || k == nz - 1 {
                    a[j][k]
                } else {
                    (a[j][k - 1] + a[j][k + 1] + up[k] + down[k] - a[j][k]) * (1.0 / 3.0)
                };
            }
        }
        for target in TARGETS {
            assert_eq!(smooth(target, &a), want, "{target} {ny}x{nz}");
        }
    }
}

#[test]
fn empty_rows_bools_and_results_used_again() {
    for target in TARGETS {
        let s: Vec<i64> = (0..50).collect();
        let none: Vec<i64> = Vec::new();
        let three: Vec<i64> = vec![1, 2, 3];
        let got: (Vec<Vec<i64>>, Vec<Vec<bool>>, i64) = with_target(target, || {
            accelerate!({
                let empty = map(|x| map(|y| x + y, none), s);
                let flags = map(
                    |x| {
                        let h = x / 2;
                        map(|y| (h + y) % 3 == 0, three)
                    },
                    s,
                );
                let grid = map(|x| map(|y| x * y, three), s);
                let total = reduce(addi, 0, map(|r| reduce(addi, 0, r), grid));
                (empty, flags, total)
            })
        });
        assert_eq!(got.0, vec![Vec::<i64>::new(); 50], "{target}");
        let flags: Vec<Vec<bool>> = (0..50_i64)
            .map(|x| three.iter().map(|y| (x / 2 + y) % 3 == 0).collect())
            .collect();
        assert_eq!(got.1, flags, "{target}");
        assert_eq!(got.2, (0..50).sum::<i64>() * 6, "{target}");
    }
}

#[test]
fn failures_in_a_row_are_the_maps_failures() {
    let s: Vec<i64> = (0..40).collect();
    let ks: Vec<i64> = vec![1, 0, 2];
    let want = failure(Target::Seq, || {
        let _: Vec<Vec<i64>> = accelerate!(map(|x| map(|k| x / k, ks), s));
    });
    assert!(
        want.starts_with("pmexpr: accelerate! at tests/rows.rs:"),
        "{want}"
    );
    assert!(want.contains("Division by zero"), "{want}");
    for target in [Target::Cpu, Target::Debug] {
        let got = failure(target, || {
            let _: Vec<Vec<i64>> = accelerate!(map(|x| map(|k| x / k, ks), s));
        });
        // The same message (the site is another `accelerate!`, written the same way).
        let what = |m: &str| {
            m.split_once("rs:")
                .and_then(|(_, r)| r.split_once(": "))
                .map(|(_, w)| w.to_string())
        };
        assert!(
            got.starts_with("pmexpr: accelerate! at tests/rows.rs:"),
            "{got}"
        );
        assert_eq!(what(&got), what(&want), "{target}: {got} vs {want}");
    }
}

#[test]
fn ragged_rows_read_in_range_or_fail_as_the_maps_do() {
    let rows = |lens: &[usize]| -> Vec<Vec<f64>> {
        lens.iter()
            .enumerate()
            .map(|(j, &n)| (0..n).map(|k| (j * 5 + k) as f64).collect())
            .collect()
    };
    // `debug` rejects a ragged captured sequence; `cpu` runs it as `seq` does.
    // Longer rows than the first: the elements past its length are never read.
    let a = rows(&[6, 9, 7, 6, 12]);
    assert_eq!(smooth(Target::Cpu, &a), smooth(Target::Seq, &a));
    let irregular = failure(Target::Debug, || {
        smooth(Target::Debug, &a);
    });
    assert!(irregular.contains("Irregular sequence"), "{irregular}");
    // A shorter row: a read past its end, at the same `k` on both targets (the first read out of
    // range in the maps' order).
    for lens in [
        [6, 6, 6, 4, 6],
        [6, 6, 6, 6, 5],
        [6, 1, 6, 6, 6],
        [6, 0, 6, 6, 6],
    ] {
        let a = rows(&lens);
        let want = failure(Target::Seq, || {
            smooth(Target::Seq, &a);
        });
        assert!(want.contains("index"), "{lens:?}: {want}");
        let got = failure(Target::Cpu, || {
            smooth(Target::Cpu, &a);
        });
        assert_eq!(got, want, "{lens:?}");
    }
}
