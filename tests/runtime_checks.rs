//! Runtime failures name the `accelerate!` site (file:line:column) and the assumption broken.
//!
//! Checks that safe Rust needs anyway (indices, division by zero) run on every backend; debug mode
//! (`PMEXPR_DEBUG=1`, or `with_target(Target::Debug, …)`) adds the checks of the assumptions
//! accelerated backends make: regular nested sequences, independent `par_loop` iterations, and
//! `reduce` operators that are associative with a neutral element on the data at hand. A tensor above the maximum rank is refused
//! when it is captured, on every backend.

mod common;

use std::process::Command;

use common::{failure, panic_message as failure_no_override};
use pmexpr::{Target, Tensor, accelerate, current_target, with_target};

/// Asserts the message names this file, at the `accelerate!` that follows `line` (within a few
/// lines, so that formatting may wrap the call), and says `what`.
fn names_site(msg: &str, line: u32, what: &str) {
    let prefix = "pmexpr: accelerate! at tests/runtime_checks.rs:";
    let rest = msg
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("message does not name this file: {msg}"));
    let at: u32 = rest
        .split(':')
        .next()
        .and_then(|l| l.parse().ok())
        .expect("a line number");
    assert!(
        (line..=line + 6).contains(&at),
        "message names line {at}, expected just after {line}: {msg}"
    );
    assert!(msg.contains(what), "message does not say {what:?}: {msg}");
}

#[test]
fn irregular_captured_sequence_is_reported_in_debug_mode() {
    let m = vec![vec![1_i64, 2, 3], vec![4, 5]];
    let line = line!();
    let run = || accelerate!(map(|row| reduce(addi, 0, row), m));
    let msg = failure(Target::Debug, run);
    names_site(
        &msg,
        line,
        "Irregular sequence found in captured variable `m`",
    );
    assert!(
        msg.contains("element 1 has shape [2] but element 0 has shape [3]"),
        "{msg}"
    );
    // The CPU backends can run irregular sequences; only accelerated backends cannot.
    assert_eq!(with_target(Target::Seq, run), vec![6, 9]);
    assert_eq!(with_target(Target::Cpu, run), vec![6, 9]);
}

#[test]
fn irregular_results_are_reported_in_debug_mode() {
    let s = vec![1_i64, 2, 3];
    let line = line!();
    let run = || accelerate!(map(|n| create(n, |i| i), s));
    names_site(
        &failure(Target::Debug, run),
        line,
        "Irregular sequence found in the result of `map`",
    );
    assert_eq!(with_target(Target::Cpu, run).len(), 3);
    let line = line!();
    let lit = || accelerate!(backend = cpu, length([[1, 2], [3]]));
    names_site(
        &failure(Target::Debug, lit),
        line,
        "Irregular sequence found in a sequence literal",
    );
}

#[test]
fn tensor_rank_above_the_maximum_is_refused_on_every_backend() {
    let t = Tensor::<f64>::zeros(&[1, 1, 1, 1]);
    for target in [Target::Seq, Target::Cpu, Target::Debug] {
        let line = line!();
        let msg = failure(target, || accelerate!(backend = cpu, tensor_rank(t)));
        names_site(
            &msg,
            line,
            "Found tensor with rank exceeding maximum: `t` has rank 4, the maximum is 3",
        );
    }
}

#[test]
fn sequence_index_out_of_bounds() {
    let s = vec![1_i64, 2, 3];
    let i = 3_i64;
    for target in [Target::Seq, Target::Cpu, Target::Debug] {
        let line = line!();
        let msg = failure(target, || accelerate!(map(|x| x + get(s, i), s)));
        names_site(
            &msg,
            line,
            "Out of bounds access in sequence: index 3 for a sequence of length 3",
        );
    }
    let line = line!();
    let msg = failure(Target::Debug, || accelerate!(backend = cpu, get(s, -1) + 1));
    names_site(&msg, line, "Negative index used to access sequence");
}

#[test]
fn tensor_index_out_of_bounds_inside_par_loop() {
    let t = Tensor::<i64>::zeros(&[4, 2]);
    for target in [Target::Seq, Target::Cpu, Target::Debug] {
        let line = line!();
        let msg = failure(target, || {
            accelerate!(par_loop(5, |i| tensor_set(t, [i, 0], i)))
        });
        names_site(
            &msg,
            line,
            "Invalid indices used to access tensor: index [4, 0] for a tensor of shape [4, 2]",
        );
        let line = line!();
        let msg = failure(target, || accelerate!(backend = cpu, tensor_get(t, [1])));
        names_site(
            &msg,
            line,
            "Wrong number of dimensions used to access tensor",
        );
    }
}

#[test]
fn division_by_zero() {
    let s = vec![1_i64, 0, 2];
    for target in [Target::Seq, Target::Cpu, Target::Debug] {
        let line = line!();
        let msg = failure(target, || accelerate!(map(|x| 10 / x, s)));
        names_site(&msg, line, "Division by zero");
        let line = line!();
        let msg = failure(target, || {
            accelerate!(reduce(addi, 0, map(|x| modi(10, x), s)))
        });
        names_site(&msg, line, "Division by zero");
    }
}

#[test]
fn other_failures() {
    let s: Vec<i64> = vec![];
    let line = line!();
    names_site(
        &failure(Target::Cpu, || accelerate!(backend = cpu, head(s) + 1)),
        line,
        "Head on empty sequence",
    );
    let line = line!();
    names_site(
        &failure(Target::Cpu, || accelerate!(map2(addi, s, [1]))),
        line,
        "map2 on sequences of different lengths (0 and 1)",
    );
    let line = line!();
    names_site(
        &failure(Target::Seq, || {
            accelerate!(
                backend = cpu,
                if length(s) == 0 {
                    never!()
                } else {
                    head(s) + 1
                }
            )
        }),
        line,
        "reached `never!()`",
    );
    let line = line!();
    names_site(
        &failure(Target::Seq, || {
            accelerate!(
                backend = cpu,
                match length(s) {
                    1 => head(s) + 1,
                }
            )
        }),
        line,
        "no pattern matched",
    );
}

/// The environment chooses the target; this test runs itself in child processes.
#[test]
fn environment_selects_the_target() {
    if let Ok(want) = std::env::var("PMEXPR_TEST_EXPECT") {
        let got = match current_target() {
            Ok(t) => t.to_string(),
            Err(e) => format!("error: {e}"),
        };
        assert!(got.starts_with(&want), "expected {want}, got {got}");
        if want == "debug" {
            // Debug mode really runs the checks.
            let m = vec![vec![1_i64], vec![]];
            let msg = failure_no_override(|| accelerate!(map(|r| reduce(addi, 0, r), m)));
            assert!(msg.contains("Irregular sequence"), "{msg}");
        }
        if want.starts_with("error") {
            let s = vec![1_i64];
            let msg = failure_no_override(|| accelerate!(reduce(addi, 0, s)));
            assert!(
                msg.starts_with("pmexpr: accelerate! at tests/runtime_checks.rs:"),
                "{msg}"
            );
            assert!(msg.contains("PMEXPR_BACKEND"), "{msg}");
        }
        return;
    }
    let me = std::env::current_exe().unwrap();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[], "auto"),
        (&[("PMEXPR_BACKEND", "auto")], "auto"),
        (&[("PMEXPR_BACKEND", "cuda")], "cuda"),
        (&[("PMEXPR_BACKEND", "cuda-emulator")], "cuda-emulator"),
        (&[("PMEXPR_BACKEND", "seq")], "seq"),
        (&[("PMEXPR_BACKEND", "cpu")], "cpu"),
        (&[("PMEXPR_DEBUG", "1")], "debug"),
        (&[("PMEXPR_DEBUG", "1"), ("PMEXPR_BACKEND", "cpu")], "debug"),
        (&[("PMEXPR_DEBUG", "0"), ("PMEXPR_BACKEND", "seq")], "seq"),
        (
            &[("PMEXPR_BACKEND", "gpu")],
            "error: PMEXPR_BACKEND=\"gpu\" is not a backend",
        ),
    ];
    for (vars, want) in cases {
        let mut cmd = Command::new(&me);
        cmd.args(["environment_selects_the_target", "--exact", "--quiet"]);
        cmd.env_remove("PMEXPR_BACKEND")
            .env_remove("PMEXPR_DEBUG")
            .env("PMEXPR_TEST_EXPECT", want);
        for (k, v) in vars.iter() {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{vars:?} should select {want}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

// ----- debug mode: `par_loop` iterations independent, `reduce` laws -----

#[test]
fn par_loop_write_conflict_is_reported_in_debug_mode() {
    let t = Tensor::<i64>::zeros(&[4]);
    let line = line!();
    // Every iteration writes element 0.
    let run = || accelerate!(par_loop(4, |i| tensor_set(t, [0], i)));
    let msg = failure(Target::Debug, run);
    names_site(&msg, line, "write conflict in `par_loop`");
    assert!(
        msg.contains("iterations 0 and 1 both write element [0] of tensor `t`"),
        "{msg}"
    );
    // The linear accessors are tracked too.
    let u = Tensor::<f64>::zeros(&[2, 2]);
    let line = line!();
    let run = || accelerate!(par_loop(2, |i| tensor_linear_set(u, 3, int2float(i))));
    let msg = failure(Target::Debug, run);
    names_site(
        &msg,
        line,
        "both write element linear position 3 of tensor `u`",
    );
}

#[test]
fn par_loop_read_of_another_iterations_write_is_reported() {
    let t = Tensor::<i64>::from_vec(vec![1, 2, 3, 4], &[4]);
    let line = line!();
    // A prefix sum written as a par_loop: iteration i reads what iteration i - 1 writes.
    let run = || {
        accelerate!(par_loop(3, |i| tensor_set(
            t,
            [i + 1],
            tensor_get(t, [i]) + tensor_get(t, [i + 1])
        )))
    };
    let msg = failure(Target::Debug, run);
    names_site(&msg, line, "write conflict in `par_loop`");
    assert!(
        msg.contains("iteration 0 writes, and iteration 1 reads, element [1] of tensor `t`"),
        "{msg}"
    );
    // Through views: `tensor_sub` rows share the tensor's elements.
    let m = Tensor::<i64>::zeros(&[2, 2]);
    let line = line!();
    let run = || {
        accelerate!(par_loop(2, |i| {
            let row = tensor_sub(m, 0, 1);
            tensor_set(row, [0, 0], i)
        }))
    };
    let msg = failure(Target::Debug, run);
    names_site(&msg, line, "both write element [0, 0] of tensor `row`");
}

#[test]
fn independent_par_loops_are_not_flagged() {
    // Each iteration reads and writes its own elements, and reads shared ones nobody writes.
    let run = || {
        let a = Tensor::<i64>::from_vec((0..8).collect(), &[8]);
        let b = Tensor::<i64>::from_vec(vec![10; 8], &[8]);
        let c = Tensor::<i64>::zeros(&[2, 4]);
        accelerate!(par_loop(8, |i| tensor_set(
            a,
            [i],
            tensor_get(a, [i]) + tensor_get(b, [0]) + tensor_get(b, [7 - i])
        )));
        // Nested: each (i, j) writes its own element.
        accelerate!(par_loop(2, |i| par_loop(4, |j| tensor_set(
            c,
            [i, j],
            i * 4 + j
        ))));
        (a.to_vec(), c.to_vec())
    };
    let dbg = with_target(Target::Debug, run);
    assert_eq!(dbg, with_target(Target::Seq, run));
    assert_eq!(dbg.0, (0..8).map(|i| i + 20).collect::<Vec<i64>>());
    assert_eq!(dbg.1, (0..8).collect::<Vec<i64>>());
}

#[test]
fn nested_par_loop_conflict_between_outer_iterations() {
    // Inner iterations are independent, but outer iterations 0 and 1 write the same elements.
    let c = Tensor::<i64>::zeros(&[4]);
    let line = line!();
    let run = || accelerate!(par_loop(2, |i| par_loop(4, |j| tensor_set(c, [j], i))));
    let msg = failure(Target::Debug, run);
    names_site(
        &msg,
        line,
        "iterations 0 and 1 both write element [0] of tensor `c`",
    );
}

#[test]
fn reduce_with_a_non_neutral_element_or_a_non_associative_operator() {
    let s: Vec<i64> = (1..=1000).collect();
    let line = line!();
    let run = || accelerate!(reduce(subi, 0, s));
    let msg = failure(Target::Debug, run);
    names_site(
        &msg,
        line,
        "`reduce` assumes that 0 is a neutral element of `subi`",
    );
    assert!(
        msg.contains("element 0: with f = `subi`, f(0, 1) is -1, not 1"),
        "{msg}"
    );
    // A neutral element that is neutral, but an operator that is not associative.
    let line = line!();
    let run = || accelerate!(reduce(|a, b| a * 2 + b, 0, map(|x| x, s)));
    let msg = failure(Target::Debug, run);
    names_site(
        &msg,
        line,
        "`reduce` assumes that 0 is a neutral element of the closure",
    );
    let ones: Vec<i64> = vec![1; 10];
    let line = line!();
    let run = || {
        accelerate!(reduce(
            |a, b| if a == 0 {
                b
            } else if b == 0 {
                a
            } else {
                a + 2 * b
            },
            0,
            ones
        ))
    };
    let msg = failure(Target::Debug, run);
    names_site(
        &msg,
        line,
        "`reduce` assumes that the closure is associative",
    );
    assert!(
        msg.contains("on elements 0, 1 and 2 (a, b, c = 1, 1, 1): with f = the closure, f(f(a, b), c) is 5 but f(a, f(b, c)) is 7"),
        "{msg}"
    );
    // A neutral element that is not neutral for `addf`.
    let xs: Vec<f64> = vec![0.5, 1.5];
    let line = line!();
    let run = || accelerate!(reduce(addf, 1.0, xs));
    let msg = failure(Target::Debug, run);
    names_site(&msg, line, "1.0 is a neutral element of `addf`");
}

#[test]
fn hist_with_a_non_neutral_element_or_a_non_associative_operator() {
    let is: Vec<i64> = vec![0, 1, 0, 5, 1, 0];
    let vs: Vec<i64> = vec![1, 2, 3, 4, 5, 6];
    let line = line!();
    let run = || -> Vec<i64> { accelerate!(hist(subi, 0, 2, is, vs)) };
    let msg = failure(Target::Debug, run);
    names_site(
        &msg,
        line,
        "`hist` assumes that 0 is a neutral element of `subi`",
    );
    assert!(msg.contains("f(0, 1) is -1, not 1"), "{msg}");
    // Neutral, not associative; the value in no bin (index 5) is not among those checked.
    let line = line!();
    let run = || -> Vec<i64> {
        accelerate!(hist(
            |a, b| if a == 0 {
                b
            } else if b == 0 {
                a
            } else {
                a + 2 * b
            },
            0,
            2,
            is,
            vs
        ))
    };
    let msg = failure(Target::Debug, run);
    names_site(&msg, line, "`hist` assumes that the closure is associative");
    // Lawful operators pass, on the values of every bin.
    let sums = with_target(Target::Debug, || -> Vec<i64> {
        accelerate!(hist(addi, 0, 2, is, vs))
    });
    assert_eq!(sums, [10, 7]);
}

#[test]
fn lawful_reductions_are_not_flagged() {
    let s: Vec<i64> = (1..=1000).collect();
    let xs: Vec<f64> = (0..1000).map(|i| 1.0 / (i as f64 + 1.0)).collect();
    let rows: Vec<Vec<i64>> = vec![vec![1, 2], vec![3, 4], vec![5, 6]];
    let run = || {
        let a: i64 = accelerate!(reduce(addi, 0, s));
        let b: i64 = accelerate!(reduce(|x, y| if x > y { x } else { y }, 0, s));
        // Float sums round differently when regrouped: within tolerance, not flagged.
        let c: f64 = accelerate!(reduce(addf, 0.0, map(|x| x * 3.0, xs)));
        let d: (i64, i64) = accelerate!(reduce(
            |p, q| (p.0 + q.0, p.1 * q.1),
            (0, 1),
            map(|x| (x, 1), s)
        ));
        let e: Vec<i64> = accelerate!(reduce(|p, q| map2(addi, p, q), [0, 0], rows));
        (a, b, c, d, e)
    };
    let dbg = with_target(Target::Debug, run);
    let seq = with_target(Target::Seq, run);
    assert_eq!(dbg, seq);
    assert_eq!(dbg.0, 500500);
    assert_eq!(dbg.1, 1000);
    assert_eq!(dbg.3, (500500, 1));
    assert_eq!(dbg.4, vec![9, 12]);
}

/// Loops over tensors with an empty dimension run zero iterations and write nothing, on every
/// target, whichever dimension the loop indexes and whatever the fixed indices are: a line (a
/// row, a column) of an empty dimension is empty. An access that would run still fails naming the
/// site, on an empty tensor as on a non-empty one.
#[test]
fn empty_tensors_run_zero_iterations() {
    let mut targets = vec![Target::Seq, Target::Cpu, Target::Debug];
    targets.extend(common::cuda_targets());
    // Rank 2: an empty loop over either dimension with the other index fixed (a captured value or
    // a literal), reading and writing, and over both (a grid of width `w`).
    let col = |t: &Tensor<i32>, n: i64, c: i64| {
        accelerate!(par_loop(n, |i| tensor_set(
            t,
            [i, c],
            tensor_get(t, [i, c]) + 2i32
        )))
    };
    let row = |t: &Tensor<i32>, n: i64, r: i64| {
        accelerate!(par_loop(n, |j| tensor_set(
            t,
            [r, j],
            tensor_get(t, [r, j]) + 2i32
        )))
    };
    let grid = |t: &Tensor<i32>, h: i64, w: i64| {
        accelerate!(par_loop(h * w, |k| {
            let i = k / w;
            let j = k % w;
            tensor_set(t, [i, j], 5i32)
        }))
    };
    for target in targets.iter().copied() {
        with_target(target, || {
            for shape in [[0, 2], [2, 0], [0, 0]] {
                let t = Tensor::<i32>::from_vec(vec![], &shape);
                // The reproducer: a column at a fixed index, of a tensor with no rows.
                accelerate!(par_loop(0i64, |i| tensor_set(t, [i, 1], 2i32)));
                for fixed in [0, 1, 5] {
                    col(&t, 0, fixed);
                    row(&t, 0, fixed);
                }
                grid(&t, shape[0] as i64, shape[1] as i64);
                // Read through a column into a row, both empty.
                let out = Tensor::<i32>::zeros(&[shape[0] * shape[1]]);
                accelerate!(par_loop((shape[0] * shape[1]) as i64, |i| tensor_set(
                    out,
                    [i],
                    tensor_get(t, [i, 1])
                )));
                accelerate!(par_loop(0i64, |i| tensor_linear_set(
                    t,
                    i,
                    tensor_linear_get(t, i)
                )));
                let (rank, dims, sub, sliced): (i64, Vec<i64>, Vec<i64>, Vec<i64>) = accelerate!(
                    backend = cpu,
                    (
                        tensor_rank(t),
                        tensor_shape(t),
                        tensor_shape(tensor_sub(t, 0, 0)),
                        tensor_shape(tensor_sub(t, 0, tensor_shape(t)[0])),
                    )
                );
                assert_eq!(
                    (rank, dims, sub),
                    (
                        2,
                        vec![shape[0] as i64, shape[1] as i64],
                        vec![0, shape[1] as i64]
                    ),
                    "{target} {shape:?}"
                );
                assert_eq!(
                    sliced,
                    [shape[0] as i64, shape[1] as i64],
                    "{target} {shape:?}"
                );
                assert!(
                    t.to_vec().is_empty() && out.to_vec().is_empty(),
                    "{target} {shape:?}"
                );
            }
            // Rank 1 and 3: the loop at each position, the others fixed.
            let t = Tensor::<i32>::from_vec(vec![], &[0]);
            accelerate!(par_loop(0i64, |i| tensor_set(
                t,
                [i],
                tensor_get(t, [i]) * 3i32
            )));
            let t = Tensor::<i32>::from_vec(vec![], &[0, 0, 3]);
            let (a, b) = (0_i64, 2_i64);
            accelerate!(par_loop(0i64, |i| {
                tensor_set(t, [i, a, b], 1i32);
                tensor_set(t, [a, i, b], 2i32);
                tensor_set(t, [a, b, i], tensor_get(t, [a, b, i]) + 3i32)
            }));
            // A row of a matrix with empty rows.
            let m = Tensor::<i32>::from_vec(vec![], &[3, 0]);
            let sliced: Vec<i64> = accelerate!(backend = cpu, tensor_shape(tensor_slice(m, [2])));
            assert_eq!(sliced, [0], "{target}");
        });
    }
    // An access that runs fails naming the site: into an empty dimension, and out of range of a
    // non-empty tensor, through each line.
    let empty = Tensor::<i32>::from_vec(vec![], &[2, 0]);
    let full = Tensor::<i32>::zeros(&[2, 3]);
    for target in targets.iter().copied() {
        let cases: [(&Tensor<i32>, bool, i64, i64, &str); 4] = [
            (
                &empty,
                true,
                1,
                0,
                "index [0, 0] for a tensor of shape [2, 0]",
            ),
            (
                &full,
                true,
                2,
                3,
                "index [0, 3] for a tensor of shape [2, 3]",
            ),
            (
                &full,
                false,
                4,
                1,
                "index [1, 3] for a tensor of shape [2, 3]",
            ),
            (
                &full,
                false,
                1,
                2,
                "index [2, 0] for a tensor of shape [2, 3]",
            ),
        ];
        for (t, by_col, n, fixed, what) in cases {
            let msg = failure(target, || {
                if by_col {
                    col(t, n, fixed)
                } else {
                    row(t, n, fixed)
                }
            });
            assert!(
                msg.starts_with("pmexpr: accelerate! at tests/runtime_checks.rs:"),
                "{target}: {msg}"
            );
            if matches!(target, Target::Seq | Target::Cpu | Target::Debug) {
                assert!(msg.contains(what), "{target}: expected {what:?}: {msg}");
            }
        }
        // An empty loop runs no access, whatever its fixed index.
        let fresh = Tensor::<i32>::zeros(&[2, 3]);
        with_target(target, || {
            col(&fresh, 0, 7);
            row(&fresh, 0, -1);
        });
        assert_eq!(fresh.to_vec(), [0; 6], "{target}");
    }
}

/// Marshaling empty values: sequences with an empty dimension, captured and returned, and a
/// tensor with one, on every target.
#[test]
fn empty_values_marshal_on_every_target() {
    for m in [Vec::<Vec<i64>>::new(), vec![vec![]; 3]] {
        let sums: Vec<i64> =
            common::on_every_target(|| accelerate!(map(|r| reduce(addi, 0, r), m)));
        assert_eq!(sums, vec![0; m.len()]);
        let back: Vec<Vec<i64>> =
            common::on_every_target(|| accelerate!(map(|r| map(|x| x + 1, r), m)));
        assert_eq!(back, m);
        let flat: Vec<i64> =
            common::on_every_target(|| accelerate!(flatten(map(|r| map(|x| x * 2, r), m))));
        assert!(flat.is_empty());
    }
    let w = 0_i64;
    let s: Vec<i64> = vec![1, 2, 3];
    let rows: Vec<Vec<i64>> =
        common::on_every_target(|| accelerate!(map(|x| create(w, |j| x + j), s)));
    assert_eq!(rows, vec![Vec::<i64>::new(); 3]);
    for shape in [[0, 2], [2, 0]] {
        let got = common::on_every_target(|| {
            let t = Tensor::<i64>::from_vec(vec![], &shape);
            let n = Tensor::<i64>::zeros(&[1]);
            accelerate!({
                let d = tensor_shape(t);
                par_loop(1, |i| tensor_set(n, [i], d[0] * 10 + d[1]))
            });
            (t.to_vec(), n.to_vec())
        });
        assert_eq!(got, (vec![], vec![shape[0] as i64 * 10 + shape[1] as i64]));
    }
}

/// Debug mode's law checks apply the operator to pairs that the program never combines
/// (`f(f(a, b), c)` of repeated elements); an overflow there is not the program's, so debug mode
/// gives the result of the other targets, while an overflow of the reduction itself still fails
/// at the site, as a Rust debug build does.
#[test]
fn law_checks_report_no_overflow_the_program_does_not_compute() {
    let run = || -> i8 { accelerate!(reduce(|a: i8, b: i8| a + b, 0i8, vec![100])) };
    let seq = with_target(Target::Seq, run);
    assert_eq!(seq, [100_i8].iter().sum::<i8>());
    assert_eq!(with_target(Target::Debug, run), seq);
    assert_eq!(with_target(Target::Cpu, run), seq);
    // Products of `u16`: 300 · 300 overflows, 300 · 2 · 50 does not.
    let us: Vec<u16> = vec![300, 2, 50];
    let product = || -> u16 { accelerate!(reduce(|a, b| a * b, 1, us)) };
    let want = us.iter().product::<u16>();
    for t in [Target::Seq, Target::Cpu, Target::Debug] {
        assert_eq!(with_target(t, product), want, "{t:?}");
    }
    // `hist`: each bin's values, and the bins' laws, checked without failing on 100 + 100.
    let is: Vec<i64> = vec![0, 1, 1];
    let vs: Vec<i8> = vec![100, 60, 60];
    let bins = || -> Vec<i8> { accelerate!(hist(|a, b| a + b, 0, 2, is, vs)) };
    for t in [Target::Seq, Target::Cpu, Target::Debug] {
        assert_eq!(with_target(t, bins), vec![100_i8, 120], "{t:?}");
    }
    // The program's own overflow is reported (and wraps elsewhere, as in a release build).
    let big: Vec<i8> = vec![100, 27, 1];
    let line = line!();
    let over = || -> i8 { accelerate!(reduce(|a, b| a + b, 0, big)) };
    names_site(
        &failure(Target::Debug, over),
        line,
        "attempt to add with overflow",
    );
    assert_eq!(
        with_target(Target::Seq, over),
        100_i8.wrapping_add(27).wrapping_add(1)
    );
    let over_bins = || -> Vec<i8> { accelerate!(hist(|a, b| a + b, 0, 1, [0, 0], [100i8, 100])) };
    let line = line!() - 1;
    names_site(
        &failure(Target::Debug, over_bins),
        line,
        "attempt to add with overflow",
    );
    // A broken law is still reported where its check computes without failing.
    let small: Vec<i8> = vec![1, 2, 3];
    let line = line!();
    let broken = || -> i8 { accelerate!(reduce(|a, b| a - b, 0, small)) };
    names_site(
        &failure(Target::Debug, broken),
        line,
        "`reduce` assumes that 0 is a neutral element of the closure",
    );
}
