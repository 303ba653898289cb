//! Tests of the optimizer: for each pass, the program in and the program (or the facts) out; and
//! that node ids and binders stay unique after every pass.

use proc_macro2::TokenStream;
use quote::quote;

use super::ids::first_duplicate;
use super::{Facts, Ids, fuse, inline, loops, rows, settle};
use crate::ast::{Expr, ExprKind, Form, Soac, Source, Stage};
use crate::intrinsics::Keyword;
use crate::mono::Mono;

fn mono(tokens: TokenStream) -> Mono {
    crate::compile_site(tokens).unwrap_or_else(|(e, _)| panic!("{}", e[0].text()))
}

/// The CPU passes over `tokens`, in order, checking after each that ids are unique.
fn passes(tokens: TokenStream) -> (Expr, Facts, Vec<String>) {
    let m = mono(tokens);
    let mut ids = Ids::new(&m);
    let mut e = m.expr.clone();
    let mut facts = Facts::default();
    let unique = |what: &str, e: &Expr, facts: &Facts| {
        let all = std::iter::once(e).chain(facts.settled.values());
        assert_eq!(first_duplicate(all), None, "after {what}");
    };
    unique("monomorphization", &e, &facts);
    inline::inline(&mut e, &mut ids, &m.numeric);
    unique("inline", &e, &facts);
    facts.rows = rows::rows(&e, &m.numeric);
    fuse::fuse(&mut e, &mut ids, &facts);
    unique("fuse", &e, &facts);
    facts.settled = settle::settled(&e, &mut ids);
    unique("settle", &e, &facts);
    (facts.loops, facts.peeled) = loops::loops(&e, &facts.settled, &m.numeric);
    (e, facts, ids.into_names())
}

/// The optimized program, printed.
fn printed(tokens: TokenStream) -> String {
    let (e, _, names) = passes(tokens);
    crate::pretty::expr(&e, &names)
}

/// The compositions of `e`, outermost first.
fn soacs(e: &Expr) -> Vec<&Soac> {
    let mut out = Vec::new();
    e.walk(&mut |x| {
        if let ExprKind::Soac(s) = &x.kind {
            out.push(&**s);
        }
    });
    out
}

/// A summary of a composition: its form, then each input's source kind and number of maps.
fn shape(s: &Soac) -> String {
    let form = match &s.form {
        Form::Map { f: None } => "map",
        Form::Map { f: Some(_) } => "map2",
        Form::Reduce { f: None, .. } => "reduce",
        Form::Reduce { f: Some(_), .. } => "reduce2",
        Form::Foldl { .. } => "foldl",
        Form::Hist { .. } => "hist",
        Form::Scan { post, .. } if post.is_empty() => "scan",
        Form::Scan { .. } => "scan+post",
        Form::Scatter { .. } => "scatter",
    };
    let inputs: Vec<String> = s
        .inputs
        .iter()
        .map(|i| {
            let src = match &i.source {
                Source::Seq(_) => "seq",
                Source::Range { .. } => "range",
                Source::Flat(_) => "flat",
            };
            let stages: String = (i.stages.iter())
                .map(|s| match s {
                    Stage::Map(_) => 'm',
                    Stage::Filter(_) => 'f',
                })
                .collect();
            format!("{src}+{}", stages.len()) + if stages.contains('f') { &stages } else { "" }
        })
        .collect();
    format!("{form}({})", inputs.join(", "))
}

fn shapes(tokens: TokenStream) -> Vec<String> {
    let (e, _, _) = passes(tokens);
    soacs(&e).into_iter().map(shape).collect()
}

#[test]
fn ids_stay_unique_through_every_pass() {
    // Each program exercises a pass that makes nodes or binders: inlining the same closure
    // twice, a flattened `let` that a `hist` reads, a settled fold's test.
    for tokens in [
        quote!({
            let at = |t, j| {
                let v = tensor_get(t, [j]);
                v + 1
            };
            par_loop(n, |i| tensor_set(d, [i], at(a, i) + at(b, i)))
        }),
        quote!({
            let x = flatten(rows);
            hist(addi, 0, k, map(|v| v % k, x), x)
        }),
        quote!(map(
            |p| foldl(
                |st, _i| {
                    let (zr, n) = st;
                    if zr > 4.0 { st } else { (zr * zr + p, n + 1) }
                },
                (0.0, 0),
                create(m, |i| i)
            ),
            ps
        )),
    ] {
        passes(tokens.clone());
        // The host code of the CUDA targets, too.
        let o = super::optimize(&mono(tokens));
        let host = std::iter::once(&o.host.expr).chain(o.host.facts.settled.values());
        assert_eq!(first_duplicate(host), None);
    }
}

#[test]
fn inline_puts_a_closures_body_in_the_loop() {
    let out = printed(quote!({
        let axpy = |c, i| {
            let x = tensor_get(t1, [i]);
            tensor_set(t1, [i], addi(x, muli(c, tensor_get(t2, [i]))))
        };
        par_loop(n, |i| axpy(2, i))
    }));
    // The loop's body is `axpy`'s, with the literal and the loop variable substituted.
    let body = &out[out.find("par_loop").expect("the loop")..];
    assert!(!body.contains("axpy("), "{out}");
    assert!(body.contains("tensor_get(t1, [i])"), "{out}");
    assert!(body.contains("muli(2, "), "{out}");
    // An argument that is not a variable or literal is bound first; a closure that runs a
    // keyword is called as written.
    let out = printed(quote!({
        let at = |t, j| tensor_get(t, [j]);
        let sum = |s| reduce(addi, 0, s);
        par_loop(n, |i| tensor_set(d, [i], at(a, i + 1) + sum(s)))
    }));
    let body = &out[out.find("par_loop").expect("the loop")..];
    // (`i` has the type of the captured count `n`, which the Rust value fixes.)
    assert!(body.contains("let j: _ = (i + 1)"), "{out}");
    assert!(body.contains("sum(s)"), "{out}");
}

#[test]
fn fuse_absorbs_producers_into_consumers() {
    // Maps of maps, however deep, and `create` where the consumer reads by position.
    assert_eq!(
        shapes(quote!(reduce(addi, 0, map(|x| x * 2, map(|y| y + 1, s))))),
        ["reduce(seq+2)"]
    );
    assert_eq!(
        shapes(quote!(map(|x| x + 1, map(|y| y * 2, create(n, |i| i))))),
        ["map(range+2)"]
    );
    assert_eq!(
        shapes(quote!(foldl(addi, 0, create(n, |i| i * i)))),
        ["foldl(range+0)"]
    );
    assert_eq!(
        shapes(quote!(reduce(addf, 0.0, create(n, |i| int2float(i))))),
        ["reduce(range+0)"]
    );
    // `map2` reads slices: its maps are absorbed, a `create` is not (it is made, as the map of
    // its positions, then read).
    assert_eq!(
        shapes(quote!(map2(|x, y| x + y, map(|v| v * 2, a), b))),
        ["map2(seq+1, seq+0)"]
    );
    assert_eq!(
        shapes(quote!(map2(|x, y| x + y, create(n, |i| i), b))),
        ["map2(seq+0, seq+0)", "map(range+0)"]
    );
    // A dot product.
    assert_eq!(
        shapes(quote!(reduce(addf, 0.0, map2(|x, y| x * y, a, b)))),
        ["reduce2(seq+0, seq+0)"]
    );
    // `hist` reads its inputs by ranges: flattened rows in place, `create`, `map`.
    assert_eq!(
        shapes(quote!(hist(
            addi,
            0,
            k,
            map(|v| v % k, flatten(rows)),
            create(length(flatten(rows)), |_i| 1)
        ))),
        ["hist(flat+1, range+0)"]
    );
    // A producer of sequences is built (debug mode checks it is regular): the outer map reads
    // the inner one's result.
    assert_eq!(
        shapes(quote!(map(|r| length(r), map(|x| [x, x], s)))),
        ["map(seq+1)", "map(seq+1)"]
    );
}

/// `scan`, `filter` and `scatter`: one rule per producer and per consumer. A `filter` is a stage
/// of a stream (`map`, `filter`, `reduce`, `scan` read one), a `scan` absorbs the maps that
/// consume it, `scatter` reads by ranges as `hist` does.
#[test]
fn fuse_scan_filter_and_scatter() {
    assert_eq!(
        shapes(quote!(scan(addi, 0, map(|x| x * 2, s)))),
        ["scan(seq+1)"]
    );
    assert_eq!(
        shapes(quote!(map(
            |y| y + 1,
            map(|y| y * 3, scan(addi, 0, create(n, |i| i)))
        ))),
        ["scan+post(range+0)"]
    );
    // `reduce(op, ne, filter(p, map(f, s)))` builds no sequence.
    assert_eq!(
        shapes(quote!(reduce(
            addi,
            0,
            filter(|y| y > 0, map(|x| x - 5, s))
        ))),
        ["reduce(seq+2mf)"]
    );
    assert_eq!(
        shapes(quote!(map(|y| y + 1, filter(|y| y > 0, map(|x| x - 5, s))))),
        ["map(seq+3mfm)"]
    );
    assert_eq!(
        shapes(quote!(filter(|y| y > 0, create(n, |i| i - 5)))),
        ["map(range+1f)"]
    );
    assert_eq!(
        shapes(quote!(scan(addi, 0, filter(|y| y > 0, s)))),
        ["scan(seq+1f)"]
    );
    assert_eq!(
        shapes(quote!(scatter(
            d,
            create(n, |i| n - 1 - i),
            map(|v| v * 2, vs)
        ))),
        ["scatter(range+0, seq+1)"]
    );
    // Where positions must line up (`map2`, `hist`, `scatter`) or are counted (`foldl`), a filter
    // is built; so is a scan that a filter consumes.
    assert_eq!(
        shapes(quote!(map2(|x, y| x + y, filter(|x| x > 0, a), b))),
        ["map2(seq+0, seq+0)", "map(seq+1f)"]
    );
    assert_eq!(
        shapes(quote!(hist(addi, 0, k, is, filter(|v| v > 0, vs)))),
        ["hist(seq+0, seq+0)", "map(seq+1f)"]
    );
    assert_eq!(
        shapes(quote!(foldl(addi, 0, filter(|v| v > 0, vs)))),
        ["foldl(seq+0)", "map(seq+1f)"]
    );
    assert_eq!(
        shapes(quote!(map(|y| y + 1, filter(|y| y > 0, scan(addi, 0, s))))),
        ["map(seq+2fm)", "scan(seq+0)"]
    );
}

/// Which inputs are cheap to read twice: a sequence, a few operations, an intrinsic; not a loop,
/// a call, a transcendental function or a long function.
#[test]
fn fuse_says_which_inputs_are_cheap() {
    let cheap = |tokens: TokenStream| -> Vec<bool> {
        let (e, _, _) = passes(tokens);
        soacs(&e)
            .into_iter()
            .flat_map(|s| s.inputs.iter().map(|i| i.cheap))
            .collect()
    };
    assert_eq!(cheap(quote!(scan(addi, 0, s))), [true]);
    assert_eq!(cheap(quote!(scan(addi, 0, map(|x| x * x + 1, s)))), [true]);
    assert_eq!(cheap(quote!(filter(|x| x > 0, map(negi, s)))), [true]);
    assert_eq!(
        cheap(quote!(scan(addi, 0, create(n, |i| s[i] * 2)))),
        [true]
    );
    assert_eq!(cheap(quote!(scan(addf, 0.0, map(|x| sin(x), fs)))), [false]);
    assert_eq!(
        cheap(quote!(scan(
            addi,
            0,
            map(|x| foldl(addi, x, create(3, |j| j)), s)
        ))),
        [false, true]
    );
    assert_eq!(
        cheap(quote!({
            let f = |x| x + 1;
            filter(|x| x > 0, map(f, s))
        })),
        [false]
    );
    assert_eq!(
        cheap(quote!(scan(
            addi,
            0,
            map(
                |x| x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x + 1,
                s
            )
        ))),
        [false]
    );
}

#[test]
fn fuse_reads_a_flattened_let_from_its_rows() {
    let (e, _, names) = passes(quote!({
        let x = flatten(rows);
        hist(addi, 0, k, map(|v| v % k, x), x)
    }));
    let out = crate::pretty::expr(&e, &names);
    // The `let` binds the rows; the `hist` reads them, flattened in place.
    let ExprKind::Let { binder, value, .. } = &e.kind else {
        panic!("{out}")
    };
    assert!(binder.ty.has_nested_seq(), "{out}");
    assert!(matches!(value.kind, ExprKind::Var { .. }), "{out}");
    assert_eq!(
        soacs(&e).into_iter().map(shape).collect::<Vec<_>>(),
        ["hist(flat+1, flat+0)"]
    );
    // Used otherwise too, the flattened sequence is built.
    let (e, _, _) = passes(quote!({
        let x = flatten(rows);
        (hist(addi, 0, k, x, x), length(x))
    }));
    let ExprKind::Let { value, .. } = &e.kind else {
        panic!()
    };
    assert!(
        matches!(
            value.kind,
            ExprKind::Keyword {
                kw: Keyword::Flatten,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn settle_finds_folds_that_stop_early() {
    let mandelbrot = quote!(map(
        |p| foldl(
            |st, _i| {
                let (zr, n) = st;
                if zr > 4.0 { st } else { (zr * zr + p, n + 1) }
            },
            (0.0, 0),
            create(m, |i| i)
        ),
        ps
    ));
    let (e, facts, names) = passes(mandelbrot);
    assert_eq!(facts.settled.len(), 1);
    let (id, test) = facts.settled.iter().next().expect("one");
    let fold = soacs(&e)
        .into_iter()
        .find(|s| matches!(s.form, Form::Foldl { .. }))
        .expect("the fold");
    let mut fold_id = None;
    e.walk(&mut |x| {
        if let ExprKind::Soac(s) = &x.kind
            && std::ptr::eq(&**s, fold)
        {
            fold_id = Some(x.id);
        }
    });
    assert_eq!(Some(*id), fold_id);
    let test = crate::pretty::expr(test, &names);
    assert!(test.starts_with("|st: (_, i64)|"), "{test}");
    assert!(test.ends_with("=> (zr > 4.0), _ => never!() }"), "{test}");
    // Elements that may fail (a division) would be skipped: the fold runs to the end.
    let (_, facts, _) = passes(quote!(foldl(
        |acc, x| if acc > 10 { acc } else { acc + x },
        0,
        create(n, |i| 100 / i)
    )));
    assert!(facts.settled.is_empty());
    // A step that reads the element before its test does not settle.
    let (_, facts, _) = passes(quote!(foldl(
        |acc, x| {
            let y = x + 1;
            if acc > y { acc } else { acc + 1 }
        },
        0,
        s
    )));
    assert!(facts.settled.is_empty());
    // `seq_loop_acc` settles too.
    let (_, facts, _) = passes(quote!(seq_loop_acc(0, n, |acc, _i| if acc > 5 {
        acc
    } else {
        acc + 1
    })));
    assert_eq!(facts.settled.len(), 1);
}

#[test]
fn rows_are_found_with_how_they_fill() {
    let (_, facts, names) = passes(quote!({
        let ks = create(n, |k| k);
        map(
            |j| {
                let r = a[j];
                let up = a[j + 1];
                map(|k| r[k - 1] + r[k + 2] + up[k] + b[2 * k] + length(b), ks)
            },
            js,
        )
    }));
    let rows: Vec<_> = facts.rows.values().collect();
    assert_eq!(rows.len(), 1);
    let name = |v: crate::ast::VarId| names[v.0 as usize].clone();
    let sliced: Vec<String> = rows[0].sliced.iter().map(|v| name(*v)).collect();
    // `b` is measured, so it is not only indexed.
    assert_eq!(sliced, ["r", "up"]);
    let peel: Vec<(String, i64, i64)> = (rows[0].peel.iter())
        .map(|(v, lo, hi)| (name(*v), *lo, *hi))
        .collect();
    assert_eq!(peel, [("r".into(), -1, 2), ("up".into(), 0, 0)]);
    assert!(rows[0].cheap);
    // Not over `create(n, |k| k)`: no peeling; rows whose length depends on the element: no
    // map of rows at all.
    let (_, facts, _) = passes(quote!(map(
        |j| {
            let r = a[j];
            map(|k| r[k + 1], ks)
        },
        js
    )));
    assert!(facts.rows.values().all(|r| r.peel.is_empty()));
    let (_, facts, _) = passes(quote!(map(|j| map(|k| k + j, a[j]), js)));
    assert!(facts.rows.is_empty());
    // Peeling ignores offsets it cannot hold (the overflow of `-c` for the least `i64`).
    let (_, facts, _) = passes(quote!({
        let ks = create(n, |k| k);
        map(|r| map(|k| r[k] + r[k + -9223372036854775808], ks), a)
    }));
    assert!(facts.rows.values().all(|r| r.peel.len() <= 1));
}

/// The number of accesses that lines serve in each loop of `tokens`, outermost first.
fn windowed(tokens: TokenStream) -> Vec<usize> {
    let (e, facts, _) = passes(tokens);
    let mut out = Vec::new();
    e.walk(&mut |x| {
        if let ExprKind::Keyword {
            kw: Keyword::ParLoop | Keyword::SeqLoop | Keyword::SeqLoopAcc,
            ..
        } = &x.kind
        {
            out.push(facts.loops.get(&x.id).map_or(0, |l| l.accesses.len()));
        }
    });
    out
}

#[test]
fn loops_window_rows_indexed_by_the_loop_variable() {
    // The dense layer: the inner loop reads w[i, k] and x[k]; the outer one is not versioned
    // (it contains a loop), so y[i] stays checked.
    let n = windowed(quote!(par_loop(m, |i| tensor_set(
        y,
        [i],
        seq_loop_acc(0.0, n, |acc, k| acc
            + tensor_get(w, [i, k]) * tensor_get(x, [k]))
    ))));
    assert_eq!(n, vec![0, 2]);
    // axpy: both accesses of y and the read of x.
    let n = windowed(quote!(par_loop(n, |i| tensor_set(
        y,
        [i],
        a * tensor_get(x, [i]) + tensor_get(y, [i])
    ))));
    assert_eq!(n, vec![3]);
    // A tensor in a record, and a column (a strided line).
    let n = windowed(quote!({
        let l = (t, u);
        seq_loop(n, |k| tensor_set(l.0, [0, k], tensor_get(l.1, [k, 0]) + 1))
    }));
    assert_eq!(n, vec![2]);
    // Leading indices of wrapping arithmetic on fixed values, and reads at `k ± c`; a write at
    // `k + c` is not.
    let n = windowed(quote!(seq_loop(n, |k| {
        tensor_set(
            t,
            [c + 1, k],
            tensor_get(t, [c - 1, k + 1]) + tensor_get(t, [2 * c, k - 1]),
        );
        tensor_set(t, [c, k + 1], 0)
    })));
    assert_eq!(n, vec![3]);
    // A read at the loop variable plus a value fixed for the loop (`d`, `2 * d`) goes through
    // the line too; a write there does not.
    let n = windowed(quote!(seq_loop(n, |k| {
        tensor_set(
            t,
            [0, k],
            tensor_get(s, [0, k + d]) + tensor_get(s, [0, 2 * d + k]),
        );
        tensor_set(t, [0, k - d], 0)
    })));
    assert_eq!(n, vec![3]);
    // An index computed from the loop variable, another index computed or bound in the loop,
    // the loop variable twice, a tensor bound in the loop, an index sequence not written out.
    let n = windowed(quote!(seq_loop(n, |k| {
        let j = k + 1;
        let u = t;
        tensor_set(t, [k + 1], 0);
        tensor_set(t, [j], 0);
        tensor_set(t, [j, k], 0);
        tensor_set(t, [k, k], 0);
        tensor_set(t, [c / 2, k], 0);
        tensor_set(t, [c, k * 2], tensor_get(t, [c, k * 2]));
        tensor_set(u, [k], 0);
        tensor_set(t, ix, 0)
    })));
    assert_eq!(n, vec![0]);
    // A loop of the body (a function of its state, printed as a `fn` item that cannot see lines
    // taken outside it) keeps the loop unversioned, whether it reads, writes or neither; an
    // inner counted loop without one is versioned on its own.
    for body in [
        quote!({
            let mut m = 0;
            for j in 0..2 {
                m += tensor_get(u, [i]);
            }
            tensor_set(t, [i], m)
        }),
        quote!({
            let mut k = 0;
            while k < 3 {
                tensor_set(t, [i], k);
                k += 1;
            }
        }),
        quote!({
            let mut k = 0;
            while k < 3 {
                k += 1;
            }
            tensor_set(t, [i], tensor_get(u, [i]) + k)
        }),
    ] {
        assert_eq!(windowed(quote!(par_loop(n, |i| #body))), vec![0], "{body}");
    }
    let n = windowed(quote!(par_loop(n, |i| {
        let mut m = 0;
        for j in 0..2 {
            m += 1;
        }
        seq_loop(c, |k| tensor_set(t, [i, k], tensor_get(u, [k]) + m))
    })));
    assert_eq!(n, vec![0, 2]);
}

#[test]
fn loops_find_plain_loops_and_grids() {
    let (e, facts, _) = passes(quote!(par_loop(n, |i| tensor_set(
        y,
        [i],
        a * tensor_get(x, [i]) + tensor_get(y, [i])
    ))));
    assert!(facts.loops[&e.id].plain);
    // A read at a neighbour: lines, but not plain.
    let (e, facts, _) = passes(quote!(par_loop(n, |i| tensor_set(
        y,
        [i],
        tensor_get(x, [i + 1])
    ))));
    assert!(!facts.loops[&e.id].plain);
    // A grid: the column and the row moved out of the loop; the row's accesses by the column.
    let (e, facts, _) = passes(quote!(par_loop(ny * nx, |k| {
        let i = k / nx;
        let j = k % nx;
        tensor_set(
            d,
            [i, j],
            tensor_get(s, [i - 1, j]) + tensor_get(s, [i, j + 1]),
        )
    })));
    let grid = facts.loops[&e.id].grid.as_ref().expect("a grid");
    assert_eq!((grid.moved, grid.col), (2, 1));
    assert_eq!(grid.row.len(), 3);
    assert_eq!(grid.divisors.len(), 1);
    // No column, or a width bound inside the loop: no grid.
    for tokens in [
        quote!(par_loop(n, |k| {
            let i = k / a;
            tensor_set(d, [i, 0], 0)
        })),
        quote!(par_loop(n, |k| {
            let w = a;
            let j = k % w;
            tensor_set(d, [0, j], 0)
        })),
    ] {
        let (e, facts, _) = passes(tokens);
        assert!(facts.loops.get(&e.id).is_none_or(|l| l.grid.is_none()));
    }
}

#[test]
fn loops_share_a_line_between_accesses_of_one_row() {
    // A stencil reads `s[i, ·]` at three offsets: one line; the write to `d[i, ·]` another; a
    // read of `s[i + 1, ·]` a third.
    let (e, facts, _) = passes(quote!(seq_loop(n, |k| tensor_set(
        d,
        [i, k],
        tensor_get(s, [i, k - 1])
            + tensor_get(s, [i, k])
            + tensor_get(s, [i, k + 1])
            + tensor_get(s, [i + 1, k])
    ))));
    let lines: Vec<usize> = facts.loops[&e.id].accesses.iter().map(|a| a.line).collect();
    let mut sorted = lines.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, [0, 1, 2], "{lines:?}");
    // The three reads of `s[i, ·]` share one.
    let shared = lines
        .iter()
        .filter(|l| lines.iter().filter(|m| m == l).count() == 3)
        .count();
    assert_eq!(shared, 3, "{lines:?}");
}

#[test]
fn loops_find_the_reads_one_check_proves_in_range() {
    // `s[k]` and `s[k + 2]`: one check, `length(s) >= n + 2`; `w` at a computed index: none.
    let (e, facts, names) = passes(quote!(seq_loop_acc(0, n, |acc, k| acc
        + s[k]
        + s[k + 2]
        + w[2 * k])));
    let reads: Vec<(String, i64)> = (facts.loops[&e.id].reads.iter())
        .map(|r| (names[r.seq.0 as usize].clone(), r.offset))
        .collect();
    assert_eq!(reads, [("s".to_string(), 0), ("s".to_string(), 2)]);
    assert!(facts.peeled.is_empty());
    // `u` is also measured, `v` read at `k - 1` (the first iteration would fail): one check
    // cannot cover them, so every read at an offset is peeled instead.
    let (e, facts, names) = passes(quote!(seq_loop_acc(0, n, |acc, k| acc
        + s[k]
        + s[k + 2]
        + u[k]
        + length(u)
        + v[k - 1]
        + w[2 * k])));
    assert!(facts.loops.get(&e.id).is_none_or(|l| l.reads.is_empty()));
    let ExprKind::Keyword { args, .. } = &e.kind else {
        panic!("{e:?}");
    };
    let peeled: Vec<(String, i64)> = (facts.peeled[&args[2].id].iter())
        .map(|r| (names[r.seq.0 as usize].clone(), r.offset))
        .collect();
    let at = |x: &str, c: i64| (x.to_string(), c);
    assert_eq!(peeled, [at("s", 0), at("s", 2), at("u", 0), at("v", -1)]);
    // A body that runs a loop of its own: none.
    let (e, facts, _) = passes(quote!(seq_loop_acc(0, n, |acc, k| acc
        + s[k]
        + seq_loop_acc(0, m, |a, j| a + j))));
    assert!(facts.loops.get(&e.id).is_none_or(|l| l.reads.is_empty()));
    assert!(facts.peeled.is_empty());
}

#[test]
fn a_fold_over_positions_is_a_counted_loop() {
    // `foldl(f, acc, create(n, |k| k))` gets the facts of `seq_loop_acc(acc, n, f)`: the row
    // `t[1, ·]` and the reads of `s` at `k` and `k + 1`.
    let (e, facts, names) = passes(quote!(foldl(
        |acc, k| acc + s[k] * s[k + 1] + tensor_get(t, [1, k]),
        0,
        create(n, |k| k)
    )));
    let l = &facts.loops[&e.id];
    let reads: Vec<(String, i64)> = (l.reads.iter())
        .map(|r| (names[r.seq.0 as usize].clone(), r.offset))
        .collect();
    assert_eq!(reads, [("s".to_string(), 0), ("s".to_string(), 1)]);
    assert_eq!(l.accesses.len(), 1);
    // Positions through a function, or a map between: not a counted loop.
    for e in [
        quote!(foldl(|acc, k| acc + s[k], 0, create(n, |k| k + 1))),
        quote!(foldl(|acc, k| acc + s[k], 0, map(|k| k, create(n, |k| k)))),
    ] {
        let (e, facts, _) = passes(e);
        assert!(!facts.loops.contains_key(&e.id), "{e:?}");
    }
}

#[test]
fn one_analysis_finds_every_read_and_its_offset() {
    // The loop function's reads of sequences bound outside it, in order, each with its offset
    // from the loop variable where the index is `k ± c`; what the loops' checks and the rows'
    // peel are both read from.
    let (e, _, names) = passes(quote!(seq_loop_acc(0, n, |acc, k| acc
        + s[k + 1]
        + s[k - 2]
        + s[3 + k]
        + t[2 * k]
        + t[i]
        + length(t))));
    let ExprKind::Keyword { args, .. } = &e.kind else {
        panic!("{e:?}");
    };
    let found = loops::reads(&args[2], 2);
    let reads: Vec<(String, Option<i64>)> = (found.reads.iter())
        .map(|r| (names[r.seq.0 as usize].clone(), r.offset))
        .collect();
    let s = |c: Option<i64>| ("s".to_string(), c);
    let t = |c: Option<i64>| ("t".to_string(), c);
    assert_eq!(
        reads,
        [s(Some(1)), s(Some(-2)), s(Some(3)), t(None), t(None)]
    );
    assert!(!found.nested);
    // `t` is used once more than it is read (its length).
    let t_id = found.reads[3].seq;
    assert_eq!(found.uses[&t_id], 3);
}

#[test]
fn reads_of_positions_at_any_constant_offset_are_peeled() {
    // A stencil as a `create`: `s` at `i - 1`, `i` and `i + 1` (the ends guarded by the `if`),
    // `t` at a computed index (not served), and the count in `length(s)`.
    let (e, facts, names) = passes(quote!(create(n, |i| if i == 0 {
        s[i]
    } else {
        s[i - 1] + s[i] + s[i + 1] + t[2 * i] + length(s)
    })));
    let ExprKind::Soac(soac) = &e.kind else {
        panic!("a create that nothing consumes is a map of its positions: {e:?}");
    };
    let (f, absorbed) = loops::element_fn(&soac.inputs[0]).expect("an element function");
    assert_eq!(absorbed, 0);
    let reads: Vec<(String, i64)> = (facts.peeled[&f.id].iter())
        .map(|r| (names[r.seq.0 as usize].clone(), r.offset))
        .collect();
    let s = |c: i64| ("s".to_string(), c);
    assert_eq!(reads, [s(0), s(-1), s(0), s(1)]);
    // A map over the positions themselves: its function is the element function.
    let (e, facts, names) = passes(quote!(reduce(
        |a, b| a + b,
        0,
        map(|k| u[k + 2] * 2, create(n, |k| k))
    )));
    let ExprKind::Soac(soac) = &e.kind else {
        panic!("{e:?}");
    };
    let (f, absorbed) = loops::element_fn(&soac.inputs[0]).expect("an element function");
    assert_eq!(absorbed, 1);
    let reads: Vec<(String, i64)> = (facts.peeled[&f.id].iter())
        .map(|r| (names[r.seq.0 as usize].clone(), r.offset))
        .collect();
    assert_eq!(reads, [("u".to_string(), 2)]);
    // A body that runs a loop, and a fold over positions (a sequential counted loop): none.
    for e in [
        quote!(create(n, |i| s[i] + seq_loop_acc(0, m, |a, j| a + j))),
        quote!(foldl(|acc, k| acc + s[k], 0, create(n, |k| k))),
    ] {
        let (_, facts, _) = passes(e);
        assert!(facts.peeled.is_empty(), "{:?}", facts.peeled);
    }
}

#[test]
fn reads_of_positions_at_a_variable_distance_are_peeled() {
    // `k - m` and `m + k`, `m` bound outside: shifts; `k + 2 * m` is not one.
    let (e, facts, names) = passes(quote!(create(n, |k| s[k - m] + s[m + k] + s[k + 2 * m])));
    let ExprKind::Soac(soac) = &e.kind else {
        panic!("{e:?}");
    };
    let (f, _) = loops::element_fn(&soac.inputs[0]).expect("an element function");
    type Seen = (String, i64, Option<(String, bool)>);
    let reads: Vec<Seen> = (facts.peeled[&f.id].iter())
        .map(|r| {
            let shift = r
                .shift
                .map(|sh| (names[sh.var.0 as usize].clone(), sh.minus));
            (names[r.seq.0 as usize].clone(), r.offset, shift)
        })
        .collect();
    let m = |minus| Some(("m".to_string(), minus));
    assert_eq!(
        reads,
        [
            ("s".to_string(), 0, m(true)),
            ("s".to_string(), 0, m(false))
        ]
    );
}
