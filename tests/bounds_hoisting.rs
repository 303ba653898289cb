//! Loops whose accesses index a tensor row by the loop variable run with the checks hoisted out
//! of the loop (a "window" per row, see pmexpr-core's `codegen/rust/windows.rs`) when every row is
//! in range: the results agree with the sequential semantics, and every out-of-range case still
//! fails with the same message at the same site, on every backend.

mod common;

use pmexpr::{Target, Tensor, accelerate, current_target, with_target};

const TARGETS: [Target; 3] = [Target::Seq, Target::Cpu, Target::Debug];

/// The dense layer of the nn example: y[i] = Σ_k w[i, k] · x[k].
fn dense(target: Target, w: &Tensor<f64>, x: &Tensor<f64>, m: i64, n: i64) -> Vec<f64> {
    let y = Tensor::<f64>::zeros(&[m.max(0) as usize]);
    with_target(target, || {
        accelerate!(par_loop(m, |i| tensor_set(
            y,
            [i],
            seq_loop_acc(0.0, n, |acc, k| acc
                + tensor_get(w, [i, k]) * tensor_get(x, [k]))
        )))
    });
    y.to_vec()
}

#[test]
fn windowed_loops_agree_with_seq() {
    let (m, n) = (37_usize, 53_usize);
    let w = Tensor::<f64>::from_fn(&[m, n], |ix| (ix[0] * 7 + ix[1] * 3) as f64 * 0.25 - 5.0);
    let x = Tensor::<f64>::from_fn(&[n], |ix| ix[0] as f64 * 0.5 - 3.0);
    let want = dense(Target::Seq, &w, &x, m as i64, n as i64);
    let by_hand: Vec<f64> = (0..m)
        .map(|i| {
            (0..n).fold(0.0, |acc, k| {
                acc + w.get(&[i, k]).unwrap() * x.get(&[k]).unwrap()
            })
        })
        .collect();
    assert_eq!(want, by_hand);
    for target in TARGETS {
        assert_eq!(
            dense(target, &w, &x, m as i64, n as i64),
            want,
            "{target:?}"
        );
        // A shorter inner loop: the window is a prefix of the row.
        let part = dense(target, &w, &x, m as i64, 5);
        assert_eq!(part, dense(Target::Seq, &w, &x, m as i64, 5), "{target:?}");
    }
    // axpy, reading and writing y[i]; and a row at a literal and a captured leading index.
    for target in TARGETS {
        let y = Tensor::<i64>::from_vec((0..100).collect(), &[100]);
        let x = Tensor::<i64>::from_vec((0..100).map(|v| v * 3).collect(), &[100]);
        let t = Tensor::<i64>::zeros(&[3, 4]);
        let (a, r) = (2_i64, 2_i64);
        with_target(target, || {
            accelerate!({
                par_loop(100, |i| {
                    tensor_set(y, [i], a * tensor_get(x, [i]) + tensor_get(y, [i]))
                });
                seq_loop(4, |k| tensor_set(t, [0, k], k + 1));
                seq_loop(3, |k| tensor_set(t, [r, k], tensor_get(t, [0, k]) * 10))
            })
        });
        let want: Vec<i64> = (0..100).map(|v| 7 * v).collect();
        assert_eq!(y.to_vec(), want, "{target:?}");
        assert_eq!(
            t.to_vec(),
            vec![1, 2, 3, 4, 0, 0, 0, 0, 10, 20, 30, 0],
            "{target:?}"
        );
    }
}

#[test]
fn negative_and_empty_counts_run_no_iteration() {
    let w = Tensor::<f64>::from_fn(&[2, 3], |ix| (ix[0] + ix[1]) as f64);
    let x = Tensor::<f64>::from_fn(&[3], |_| 1.0);
    for target in TARGETS {
        assert_eq!(dense(target, &w, &x, 2, -4), vec![0.0, 0.0], "{target:?}");
        assert_eq!(dense(target, &w, &x, 2, 0), vec![0.0, 0.0], "{target:?}");
        assert_eq!(
            dense(target, &w, &x, -1, 3),
            Vec::<f64>::new(),
            "{target:?}"
        );
    }
}

/// The failure of `run` on every backend: the same message everywhere, which says `what`.
fn same_failure(what: &str, run: impl Fn()) {
    common::same_failure("tests/bounds_hoisting.rs", what, run)
}

#[test]
fn out_of_range_rows_fail_as_before() {
    let w = Tensor::<f64>::zeros(&[2, 3]);
    let x = Tensor::<f64>::zeros(&[3]);
    // n larger than the last dimension (in one row: with two, either row's failure may come
    // first on `cpu`).
    same_failure(
        "Invalid indices used to access tensor: index [0, 3] for a tensor of shape [2, 3]",
        || {
            dense(current_target().unwrap(), &w, &x, 1, 4);
        },
    );
    // A leading index out of range (the outer loop runs past the rows).
    let x4 = Tensor::<f64>::zeros(&[3]);
    same_failure(
        "Invalid indices used to access tensor: index [2, 0] for a tensor of shape [2, 3]",
        || {
            let y = Tensor::<f64>::zeros(&[3]);
            accelerate!(par_loop(3, |i| tensor_set(
                y,
                [i],
                seq_loop_acc(0.0, 3, |acc, k| acc
                    + tensor_get(w, [i, k]) * tensor_get(x4, [k]))
            )));
        },
    );
    // A negative leading index.
    same_failure("Invalid indices used to access tensor", || {
        let c = -1_i64;
        accelerate!(backend = cpu, seq_loop(3, |k| tensor_set(w, [c, k], 1.0)));
    });
    // The wrong rank.
    same_failure("Wrong number of dimensions used to access tensor", || {
        accelerate!(backend = cpu, seq_loop(3, |k| tensor_set(w, [k], 1.0)));
    });
    same_failure("Wrong number of dimensions used to access tensor", || {
        accelerate!(backend = cpu, seq_loop(2, |k| tensor_set(x, [0, k], 1.0)));
    });
}

#[test]
fn views_are_windowed_within_their_own_shape() {
    let t = Tensor::<i64>::from_vec((0..12).collect(), &[3, 4]);
    // A `tensor_sub` view of rows 1..3: its row 0 is row 1 of t.
    for target in TARGETS {
        let out = Tensor::<i64>::zeros(&[4]);
        with_target(target, || {
            accelerate!(backend = cpu, {
                let v = tensor_sub(t, 1, 2);
                seq_loop(4, |k| tensor_set(out, [k], tensor_get(v, [1, k])))
            })
        });
        assert_eq!(out.to_vec(), vec![8, 9, 10, 11], "{target:?}");
    }
    same_failure(
        "Invalid indices used to access tensor: index [2, 0] for a tensor of shape [2, 4]",
        || {
            accelerate!(backend = cpu, {
                let v = tensor_sub(t, 1, 2);
                seq_loop(4, |k| tensor_set(v, [2, k], 0))
            });
        },
    );
    same_failure("Invalid indices used to access tensor", || {
        accelerate!(backend = cpu, {
            let v = tensor_sub(t, 0, 1);
            seq_loop(5, |k| tensor_set(v, [0, k], 0))
        });
    });
    // `tensor_slice`: the row at a fixed first index, a rank-1 view.
    for target in TARGETS {
        let out = Tensor::<i64>::zeros(&[4]);
        with_target(target, || {
            accelerate!(backend = cpu, {
                let r = tensor_slice(t, [2]);
                seq_loop(4, |k| tensor_set(out, [k], tensor_get(r, [k])))
            })
        });
        assert_eq!(out.to_vec(), vec![8, 9, 10, 11], "{target:?}");
    }
    same_failure("Invalid indices used to access tensor", || {
        accelerate!(backend = cpu, {
            let r = tensor_slice(t, [2]);
            seq_loop(5, |k| tensor_set(r, [k], 0))
        });
    });
}

/// The gradient of the nn example's dense layer: g[o, i] = Σ_s delta[s, o] · x[s, i], whose
/// inner loop walks columns (strided lines).
fn column_dot(target: Target, delta: &Tensor<f64>, x: &Tensor<f64>, n: i64) -> Vec<f64> {
    let (outs, ins) = (delta.shape()[1], x.shape()[1]);
    let g = Tensor::<f64>::zeros(&[outs, ins]);
    let (o_n, i_n) = (outs as i64, ins as i64);
    with_target(target, || {
        accelerate!(par_loop(o_n * i_n, |k| {
            let o = k / i_n;
            let i = k % i_n;
            tensor_set(
                g,
                [o, i],
                seq_loop_acc(0.0, n, |acc, s| {
                    acc + tensor_get(delta, [s, o]) * tensor_get(x, [s, i])
                }),
            )
        }))
    });
    g.to_vec()
}

#[test]
fn strided_lines_agree_and_fail_as_before() {
    let delta = Tensor::<f64>::from_fn(&[6, 4], |ix| (ix[0] * 5 + ix[1]) as f64 - 7.5);
    let x = Tensor::<f64>::from_fn(&[6, 3], |ix| (ix[0] + 2 * ix[1]) as f64 * 0.5);
    let want = column_dot(Target::Seq, &delta, &x, 6);
    let by_hand: Vec<f64> = (0..4)
        .flat_map(|o| (0..3).map(move |i| (o, i)))
        .map(|(o, i)| {
            (0..6).fold(0.0, |acc, s| {
                acc + delta.get(&[s, o]).unwrap() * x.get(&[s, i]).unwrap()
            })
        })
        .collect();
    assert_eq!(want, by_hand);
    for target in TARGETS {
        assert_eq!(column_dot(target, &delta, &x, 6), want, "{target:?}");
        assert_eq!(
            column_dot(target, &delta, &x, 2),
            column_dot(Target::Seq, &delta, &x, 2),
            "{target:?}"
        );
        assert_eq!(
            column_dot(target, &delta, &x, -1),
            vec![0.0; 12],
            "{target:?}"
        );
    }
    // More samples than rows.
    same_failure(
        "Invalid indices used to access tensor: index [6, 0] for a tensor of shape [6, 4]",
        || {
            column_dot(current_target().unwrap(), &delta, &x, 7);
        },
    );
    // A fixed index out of range in a column walk.
    same_failure("Invalid indices used to access tensor", || {
        let c = 4_i64;
        accelerate!(
            backend = cpu,
            seq_loop(2, |s| tensor_set(delta, [s, c], 0.0))
        );
    });
}

/// `y[k] = x[k + d]`, `d` fixed for the loop: the read goes through the row where it falls inside
/// it, and is the checked access otherwise.
fn shifted(target: Target, x: &Tensor<i64>, d: i64, n: i64) -> Vec<i64> {
    let y = Tensor::<i64>::zeros(&[n.max(0) as usize]);
    with_target(target, || {
        accelerate!(
            backend = cpu,
            seq_loop(n, |k| tensor_set(y, [k], tensor_get(x, [k + d]) * 2))
        )
    });
    y.to_vec()
}

#[test]
fn reads_at_a_fixed_distance_agree_and_fail_as_before() {
    let x = Tensor::<i64>::from_vec((0..10).collect(), &[10]);
    for target in TARGETS {
        for (d, n) in [(0, 10), (3, 7), (-2, 0), (9, 1)] {
            let want: Vec<i64> = (0..n).map(|k| (k + d) * 2).collect();
            assert_eq!(shifted(target, &x, d, n), want, "{target:?} d = {d}");
        }
    }
    // Out of the row (and the tensor): the checked access's failure, at the first such `k`.
    same_failure(
        "Invalid indices used to access tensor: index [10] for a tensor of shape [10]",
        || {
            shifted(current_target().unwrap(), &x, 4, 7);
        },
    );
    same_failure(
        "Invalid indices used to access tensor: index [-1] for a tensor of shape [10]",
        || {
            shifted(current_target().unwrap(), &x, -1, 3);
        },
    );
}

/// `Σ_k s[k] · s[k + 1]` over `k < n` in a `seq_loop_acc`: its reads are proven in range by one
/// check before the loop, which cuts `s` to what the loop reads.
fn pairs(target: Target, s: &[i64], n: i64) -> i64 {
    with_target(target, || {
        accelerate!(
            backend = cpu,
            seq_loop_acc(0, n, |acc, k| acc + s[k] * s[k + 1])
        )
    })
}

/// The same sum as a `foldl` over the positions (`create(n, |k| k)`), with a row of a tensor read
/// at `k` beside: the optimizer gives it a counted loop's facts (a line for the row, the reads
/// proven in range).
fn pairs_fold(target: Target, s: &[i64], t: &Tensor<i64>, n: i64) -> i64 {
    with_target(target, || {
        accelerate!(
            backend = cpu,
            foldl(
                |acc, k| acc + s[k] * s[k + 1] + tensor_get(t, [1, k]),
                0,
                create(n, |k| k)
            )
        )
    })
}

/// `y[i] = a · x[i] + y[i]` with `x` a `Vec`: the plain loop reads `x` through a slice of each
/// chunk, in range by the check before the loop.
fn axpy_vec(target: Target, x: &[f64], n: i64) -> Vec<f64> {
    let y = Tensor::<f64>::from_fn(&[n.max(0) as usize], |ix| ix[0] as f64);
    let a = 2.5;
    with_target(target, || {
        accelerate!(par_loop(n, |i| tensor_set(
            y,
            [i],
            a * x[i] + tensor_get(y, [i])
        )))
    });
    y.to_vec()
}

#[test]
fn sequence_reads_proven_in_range_agree_and_fail_as_before() {
    let s: Vec<i64> = (0..1000).map(|k| (k * 7) % 13 - 6).collect();
    let x: Vec<f64> = (0..5000).map(|k| k as f64 * 0.5 - 3.0).collect();
    for target in TARGETS {
        for n in [0, 1, 7, 999] {
            let want: i64 = (0..n as usize).map(|k| s[k] * s[k + 1]).sum();
            assert_eq!(pairs(target, &s, n), want, "{target:?} n = {n}");
        }
        for n in [0, 1, 1000, 5000] {
            let want: Vec<f64> = (0..n as usize).map(|i| 2.5 * x[i] + i as f64).collect();
            assert_eq!(axpy_vec(target, &x, n), want, "{target:?} n = {n}");
        }
    }
    let t = Tensor::<i64>::from_fn(&[2, 1000], |ix| (ix[0] * 1000 + ix[1]) as i64 % 17);
    for target in TARGETS {
        // A negative count is Rust's empty `0..n`: the fold runs zero times.
        for n in [-1, 0, 1, 7, 999] {
            let want: i64 = (0..n.max(0) as usize)
                .map(|k| s[k] * s[k + 1] + ((1000 + k) % 17) as i64)
                .sum();
            assert_eq!(pairs_fold(target, &s, &t, n), want, "{target:?} n = {n}");
        }
    }
    // One read too many: the loop runs as written, and fails where it did.
    same_failure(
        "Out of bounds access in sequence: index 1000 for a sequence of length 1000",
        || {
            pairs(current_target().unwrap(), &s, 1000);
        },
    );
    same_failure(
        "Out of bounds access in sequence: index 1000 for a sequence of length 1000",
        || {
            pairs_fold(current_target().unwrap(), &s, &t, 1000);
        },
    );
    same_failure(
        "Out of bounds access in sequence: index 5000 for a sequence of length 5000",
        || {
            axpy_vec(current_target().unwrap(), &x, 5001);
        },
    );
}

/// A three-point stencil over a `Vec` as a `create`: the interior positions read `s` through a
/// slice of each chunk, the two ends run as written.
fn smooth(target: Target, s: &[i64], n: i64) -> Vec<i64> {
    with_target(target, || {
        accelerate!(create(n, |i| if i == 0 || i == n - 1 {
            s[i]
        } else {
            (s[i - 1] + s[i] + s[i + 1]) / 3
        }))
    })
}

/// Differences of neighbours, counted in `usize` as a Rust user writes them.
fn differences(target: Target, s: &[i64], n: usize) -> Vec<i64> {
    with_target(target, || accelerate!(create(n, |i| s[i + 1] - s[i])))
}

/// A map over the positions themselves, two sequences read at different offsets.
fn mapped(target: Target, s: &[i64], t: &[i64], n: i64) -> Vec<i64> {
    with_target(target, || {
        accelerate!(map(|i| s[i] * 2 + t[i + 2], create(n, |i| i)))
    })
}

/// A reduction and a filter of created elements that read neighbours.
fn pair_sum(target: Target, s: &[i64], n: i64) -> i64 {
    with_target(target, || {
        accelerate!(reduce(|a, b| a + b, 0, create(n, |i| s[i] * s[i + 1])))
    })
}

fn rises(target: Target, s: &[i64], n: i64) -> Vec<i64> {
    with_target(target, || {
        accelerate!(filter(
            |d| d > 0,
            create(n, |i| if i == 0 { 0 } else { s[i] - s[i - 1] })
        ))
    })
}

/// Every read at a negative offset: position 0 fails.
fn previous(target: Target, s: &[i64], n: i64) -> Vec<i64> {
    with_target(target, || accelerate!(create(n, |i| s[i - 2] + 1)))
}

#[test]
fn reads_of_positions_agree_where_they_are_in_range_and_fail_as_before() {
    let s: Vec<i64> = (0..3000).map(|k| (k * 7) % 13 - 6).collect();
    let t: Vec<i64> = (0..2000).map(|k| (k * 5) % 11 - 4).collect();
    for target in TARGETS {
        for n in [0_i64, 1, 2, 3, 17, 2999, 3000] {
            let u = n as usize;
            let want: Vec<i64> = (0..u)
                .map(|i| {
                    if i == 0 || i == u - 1 {
                        s[i]
                    } else {
                        (s[i - 1] + s[i] + s[i + 1]) / 3
                    }
                })
                .collect();
            assert_eq!(smooth(target, &s, n), want, "{target:?} n = {n}");
            let want: Vec<i64> = (0..u)
                .map(|i| if i == 0 { 0 } else { s[i] - s[i - 1] })
                .filter(|d| *d > 0)
                .collect();
            assert_eq!(rises(target, &s, n), want, "{target:?} n = {n}");
        }
        for n in [0_usize, 1, 1000, 2999] {
            let want: Vec<i64> = (0..n).map(|i| s[i + 1] - s[i]).collect();
            assert_eq!(differences(target, &s, n), want, "{target:?} n = {n}");
        }
        for n in [0_i64, 5, 1998] {
            let u = n as usize;
            let want: Vec<i64> = (0..u).map(|i| s[i] * 2 + t[i + 2]).collect();
            assert_eq!(mapped(target, &s, &t, n), want, "{target:?} n = {n}");
            let want: i64 = (0..u).map(|i| s[i] * s[i + 1]).sum();
            assert_eq!(pair_sum(target, &s, n), want, "{target:?} n = {n}");
        }
    }
    // Past the end of the shorter sequence (one position: on `cpu` another failing position
    // could come first), before the start, and a read one too many.
    same_failure(
        "Out of bounds access in sequence: index 2000 for a sequence of length 2000",
        || {
            mapped(current_target().unwrap(), &s, &t, 1999);
        },
    );
    same_failure("Negative index used to access sequence: -2", || {
        previous(current_target().unwrap(), &s, 1);
    });
    same_failure(
        "Out of bounds access in sequence: index 3000 for a sequence of length 3000",
        || {
            differences(current_target().unwrap(), &s, 3000);
        },
    );
    // A negative count is Rust's empty `0..n`: no element, no read.
    for target in TARGETS {
        assert_eq!(smooth(target, &s, -1), Vec::<i64>::new(), "{target:?}");
    }
}

/// Reads at `k + 2` counted in `u8`: at `k = 254` the program's index wraps to 0 (as a Rust
/// release build computes `254u8 + 2`), so the reads that slices serve stop before it.
fn shifted_u8(s: &[i64], n: u8) -> Vec<i64> {
    accelerate!(create(n, |i| s[i + 2]))
}

fn shifted_u8_loop(x: &[i64], n: u8) -> Vec<i64> {
    let y = Tensor::<i64>::zeros(&[n as usize]);
    accelerate!(par_loop(n, |i| tensor_set(
        y,
        [i],
        x[i + 2] + tensor_get(y, [i])
    )));
    y.to_vec()
}

#[test]
fn reads_past_the_count_type_read_the_wrapped_index() {
    let s: Vec<i64> = (0..300).map(|k| k * 3 + 1).collect();
    let got = common::wraps_on_every_target(|| shifted_u8(&s, 255));
    let want: Vec<i64> = (0..255_u8).map(|i| s[i.wrapping_add(2) as usize]).collect();
    assert_eq!(got, want);
    let got = common::wraps_on_every_target(|| shifted_u8_loop(&s, 255));
    assert_eq!(got, want);
    // Below the type's end: every target agrees, debug mode included.
    let got = common::on_every_target(|| shifted_u8(&s, 200));
    assert_eq!(got, (0..200).map(|i| s[i + 2]).collect::<Vec<_>>());
}

/// A column stencil over a matrix stored by rows, `m` wide: reads at `k - m` and `k + m`, a
/// distance fixed for the loop but known only when it runs.
fn columns(target: Target, s: &[i64], m: i64) -> Vec<i64> {
    with_target(target, || {
        accelerate!({
            let n = length(s);
            create(n, |k| {
                if k < m || k >= n - m {
                    s[k]
                } else {
                    s[k - m] + s[k + m] - s[m + k]
                }
            })
        })
    })
}

/// Reads at `k + w`, `w` of either sign, counted in `i32`.
fn shifted_by(target: Target, s: &[i64], n: i32, w: i32) -> Vec<i64> {
    with_target(target, || accelerate!(create(n, |k| s[k + w] * 2)))
}

#[test]
fn reads_at_a_distance_fixed_for_the_loop_agree_and_fail_as_before() {
    let s: Vec<i64> = (0..3000).map(|k| (k * 7) % 13 - 6).collect();
    for target in TARGETS {
        for m in [1_i64, 30, 1500, 2999, 3000, 4000] {
            let n = s.len() as i64;
            let want: Vec<i64> = (0..n)
                .map(|k| {
                    if k < m || k >= n - m {
                        s[k as usize]
                    } else {
                        s[(k - m) as usize] + s[(k + m) as usize] - s[(m + k) as usize]
                    }
                })
                .collect();
            assert_eq!(columns(target, &s, m), want, "{target:?} m = {m}");
        }
        for (n, w) in [(0, 0), (2990, 10), (1000, 2000), (3000, 0)] {
            let want: Vec<i64> = (0..n).map(|k| s[(k + w) as usize] * 2).collect();
            assert_eq!(
                shifted_by(target, &s, n, w),
                want,
                "{target:?} n = {n} w = {w}"
            );
        }
    }
    // A read past the end (one position), and before the start.
    same_failure(
        "Out of bounds access in sequence: index 3000 for a sequence of length 3000",
        || {
            shifted_by(current_target().unwrap(), &s, 2992, 9);
        },
    );
    same_failure("Negative index used to access sequence: -1", || {
        shifted_by(current_target().unwrap(), &s, 1, -1);
    });
    // `k + w` past `u8::MAX`: the program's index wraps (debug mode: the overflow).
    let got = common::wraps_on_every_target(|| {
        let (n, w) = (10_u8, 250_u8);
        accelerate!(create(n, |k| s[k + w]))
    });
    let want: Vec<i64> = (0..10_u8)
        .map(|k| s[k.wrapping_add(250) as usize])
        .collect();
    assert_eq!(got, want);
}

/// The counted loops with reads at negative offsets and at a distance fixed for the loop: the
/// iterations where every read is in range read through slices of a chunk, the others as
/// written.
fn loop_diffs(target: Target, s: &[i64], n: i64, w: i64) -> (Vec<i64>, i64, i64, i64) {
    let y = Tensor::<i64>::zeros(&[n.max(0) as usize]);
    with_target(target, || {
        let folded = accelerate!(
            backend = cpu,
            seq_loop_acc(0, n, |acc, k| if k == 0 {
                acc
            } else {
                acc + s[k] - s[k - 1] + s[k + w]
            })
        );
        let counted = accelerate!(foldl(
            |acc, k| (acc * 3 + s[k - 1 + 1] + s[w + k]) % 1000003,
            0,
            create(n, |k| k)
        ));
        accelerate!(par_loop(n, |k| tensor_set(
            y,
            [k],
            if k < 2 { 0 } else { s[k - 2] * s[k + w] }
        )));
        let z = Tensor::<i64>::zeros(&[1]);
        accelerate!(
            backend = cpu,
            seq_loop(n, |k| tensor_set(
                z,
                [0],
                tensor_get(z, [0]) + if k == 0 { 1 } else { s[k - 1] }
            ))
        );
        (y.to_vec(), folded, counted, z.to_vec()[0])
    })
}

#[test]
fn loops_read_at_negative_and_variable_offsets_agree_and_fail_as_before() {
    let s: Vec<i64> = (0..3000).map(|k| (k * 7) % 13 - 6).collect();
    for target in TARGETS {
        for (n, w) in [(0, 0), (1, 3), (5, 2), (2000, 1000), (2990, 10), (3000, 0)] {
            let u = n as usize;
            let wu = w as usize;
            let par: Vec<i64> = (0..u)
                .map(|k| if k < 2 { 0 } else { s[k - 2] * s[k + wu] })
                .collect();
            let folded = (1..u).fold(0, |acc, k| acc + s[k] - s[k - 1] + s[k + wu]);
            let counted = (0..u).fold(0_i64, |acc, k| (acc * 3 + s[k] + s[wu + k]) % 1000003);
            let seq = (0..u).map(|k| if k == 0 { 1 } else { s[k - 1] }).sum();
            let got = loop_diffs(target, &s, n, w);
            assert_eq!(
                got,
                (par, folded, counted, seq),
                "{target:?} n = {n} w = {w}"
            );
        }
    }
    same_failure(
        "Out of bounds access in sequence: index 3000 for a sequence of length 3000",
        || {
            loop_diffs(current_target().unwrap(), &s, 2991, 10);
        },
    );
}

/// The consumers that read positions by ranges: `hist`, `scatter`, `scan`, each over `create`s
/// that read neighbours.
fn by_ranges(target: Target, s: &[i64], n: i64) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    with_target(target, || {
        let h = accelerate!(hist(
            |a, b| a + b,
            0,
            7,
            create(n, |i| (s[i + 1] - s[i]) % 7),
            create(n, |i| if i == 0 { 1 } else { s[i - 1] })
        ));
        let d = vec![0_i64; 50];
        let sc = accelerate!(scatter(
            d,
            create(n, |i| s[i + 2] + 6),
            create(n, |i| s[i] * 10 + s[i + 1])
        ));
        let p = accelerate!(scan(
            |a, b| a + b,
            0,
            create(n, |i| if i < 2 { 0 } else { s[i - 2] * s[i] })
        ));
        (h, sc, p)
    })
}

#[test]
fn consumers_by_ranges_read_positions_through_slices_too() {
    let s: Vec<i64> = (0..3000).map(|k| (k * 7) % 13 - 6).collect();
    for n in [0_i64, 1, 3, 100, 2998] {
        let want = by_ranges(Target::Seq, &s, n);
        let u = n as usize;
        let mut h = vec![0_i64; 7];
        for i in 0..u {
            let b = (s[i + 1] - s[i]) % 7;
            if (0..7).contains(&b) {
                h[b as usize] += if i == 0 { 1 } else { s[i - 1] };
            }
        }
        assert_eq!(want.0, h, "n = {n}");
        let p: Vec<i64> = (0..u)
            .scan(0, |acc, i| {
                *acc += if i < 2 { 0 } else { s[i - 2] * s[i] };
                Some(*acc)
            })
            .collect();
        assert_eq!(want.2, p, "n = {n}");
        // Scatter writes of equal indices may come in any order on `cpu`: only where they are
        // distinct does it agree exactly; debug mode reports them.
        assert_eq!(by_ranges(Target::Cpu, &s, n).0, want.0, "n = {n}");
        assert_eq!(by_ranges(Target::Cpu, &s, n).2, want.2, "n = {n}");
        if n <= 1 {
            assert_eq!(by_ranges(Target::Cpu, &s, n), want, "n = {n}");
            assert_eq!(by_ranges(Target::Debug, &s, n), want, "n = {n}");
        }
    }
}

/// `y[i] = x[i - 1] + x[i + 1]` inside, the ends copied: a plain loop (each iteration writes its
/// own element of `y`) whose reads of `x` are peeled, and which still runs as a plain loop.
fn smooth_into(target: Target, x: &[f64], n: i64) -> Vec<f64> {
    let y = Tensor::<f64>::zeros(&[n.max(0) as usize]);
    with_target(target, || {
        accelerate!(par_loop(n, |i| tensor_set(
            y,
            [i],
            if i == 0 || i == n - 1 {
                x[i]
            } else {
                0.5 * (x[i - 1] + x[i + 1])
            }
        )))
    });
    y.to_vec()
}

#[test]
fn a_plain_loop_peels_its_reads() {
    let x: Vec<f64> = (0..5000).map(|k| (k % 17) as f64 - 8.0).collect();
    for n in [0_i64, 1, 2, 3, 4999, 5000] {
        let u = n as usize;
        let want: Vec<f64> = (0..u)
            .map(|i| {
                if i == 0 || i == u - 1 {
                    x[i]
                } else {
                    0.5 * (x[i - 1] + x[i + 1])
                }
            })
            .collect();
        for target in TARGETS {
            assert_eq!(smooth_into(target, &x, n), want, "{target:?} n = {n}");
        }
    }
    let before = pmexpr::__private::plain_loops();
    smooth_into(Target::Cpu, &x, 5000);
    assert!(
        pmexpr::__private::plain_loops() > before,
        "the plain loop ran"
    );
    same_failure(
        "Out of bounds access in sequence: index 5000 for a sequence of length 5000",
        || {
            smooth_into(current_target().unwrap(), &x, 5001);
        },
    );
}

/// A `foldl` over created elements that read neighbours (not over the positions themselves): in
/// order, the peeled positions through slices.
fn fold_of_created(target: Target, s: &[i64], n: i64) -> i64 {
    with_target(target, || {
        accelerate!(foldl(
            |acc, d| (acc * 31 + d) % 1000003,
            0,
            create(n, |i| if i == 0 { s[i] } else { s[i] - s[i - 1] })
        ))
    })
}

#[test]
fn a_fold_of_created_elements_reads_them_in_order() {
    let s: Vec<i64> = (0..3000).map(|k| (k * 7) % 13 - 6).collect();
    for n in [0_i64, 1, 2, 3000] {
        let u = n as usize;
        let want = (0..u)
            .map(|i| if i == 0 { s[i] } else { s[i] - s[i - 1] })
            .fold(0, |acc, d| (acc * 31 + d) % 1000003);
        for target in TARGETS {
            assert_eq!(fold_of_created(target, &s, n), want, "{target:?} n = {n}");
        }
    }
    same_failure(
        "Out of bounds access in sequence: index 3000 for a sequence of length 3000",
        || {
            fold_of_created(current_target().unwrap(), &s, 3001);
        },
    );
}
