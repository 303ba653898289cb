//! Fusion: a sequence produced only to be consumed is not built. Every consumer — `map`, `map2`,
//! `reduce`, `foldl`, `hist`, `scan`, `filter`, `scatter` — becomes one [`Soac`] (so the generator
//! has one printer for them) that absorbs the producers of its inputs, however deep: `map(g, x)`
//! adds `g` to the stages each element goes through as it is read ([`Stage::Map`]), `filter(p, x)`
//! drops the elements `p` rejects as they are read ([`Stage::Filter`]), `create(n, g)` makes the
//! elements from their positions ([`Source::Range`]), and `flatten(rows)` reads the rows in place
//! ([`Source::Flat`]). One rule per producer and one per consumer, not one per pair.
//!
//! Which producer an input can absorb depends only on how the consumer reads it:
//!
//! - a `map` of a sequence, anywhere: its function is applied as the element is read;
//! - a `filter` where the consumer reads one input as a stream whose length it does not need
//!   beforehand (`map`, `filter`, `reduce`, `scan`): the predicate is applied where the element is
//!   read. Not where positions must line up: `map2` and `hist`/`scatter` (their two inputs are read
//!   side by side), nor `foldl` (its loops count positions);
//! - `create(n, g)` where the consumer reads one input by position (`map`, `filter`, `reduce`,
//!   `scan`, `foldl`) or reads each input by ranges (`hist`, `scatter`); `map2` reads its two
//!   inputs as slices side by side;
//! - `flatten(rows)` where the consumer reads by ranges (`hist`, `scatter`): a
//!   `let x = flatten(rows)` that only `hist`s read is rewritten so that they read `rows`
//!   (`flat_lets`);
//! - a `scan` where a `map` consumes it (through `map`s only): the maps are applied to each result
//!   of the scan as it is written ([`Form::Scan`]'s `post`);
//! - and `reduce(op, ne, map2(g, a, b))` reads `a` and `b`, combined by `g` (a dot product).
//!
//! A `create(n, g)` that nothing consumes is a `map` of one input, its positions (of elements
//! that are not sequences). `filter(p, s)` itself is a `map` of one input whose last stage is the filter: a map whose
//! input drops elements is a compaction (`map(g, filter(p, map(f, s)))` reads `s` once and builds
//! one sequence). Never absorbed: a producer whose elements are sequences (debug mode checks that
//! the nested sequence it builds is regular). A map of rows and the map that fills its rows
//! ([`super::rows`]) stay as they are: they build their rows in one buffer instead.
//!
//! Each input also says whether its elements are [`Input::cheap`] to read (a few operations each),
//! so that the runtime's two-pass `scan` may read them twice instead of storing them.
//!
//! The meaning is the unfused one: every part is evaluated in the order it was written (see
//! [`Soac`]), a negative count makes no elements (Rust's empty `0..n`), and
//! then the elements are made and consumed in order. One difference can show only in a program
//! that fails twice: unfused, every element of a producer is made before the consumer takes the
//! first, so when `g` fails at element 5 and the consumer's function at element 3, `g`'s failure
//! is reported; fused, the consumer's (a parallel consumer on `cpu` reports whichever comes
//! first, fused or not); likewise `map2` compares its inputs' lengths before any element is made.

use std::collections::HashSet;

use crate::ast::{Expr, ExprKind, Form, Input, Lit, NodeId, Soac, Source, Stage, VarId};
use crate::intrinsics::{Intrinsic, Keyword};

use super::{Facts, Ids};

/// Fuses the producers of `e`'s consumers into them.
pub fn fuse(e: &mut Expr, ids: &mut Ids, facts: &Facts) {
    flat_lets(e, ids);
    let rows: HashSet<NodeId> = (facts.rows.iter())
        .flat_map(|(map, r)| [*map, r.fill])
        .collect();
    walk(e, &rows);
}

fn walk(e: &mut Expr, rows: &HashSet<NodeId>) {
    absorb(e, rows);
    e.children_mut(&mut |c| walk(c, rows));
}

/// What a consumer's input may absorb: `create` (read by position, or by ranges), `flatten`
/// (read by ranges) and `filter` (read as a stream of unknown length).
#[derive(Clone, Copy)]
struct Reads {
    range: bool,
    flat: bool,
    filter: bool,
}

const SLICE: Reads = Reads {
    range: false,
    flat: false,
    filter: false,
};
/// By position, counted (`foldl`).
const POSITION: Reads = Reads {
    range: true,
    flat: false,
    filter: false,
};
/// By position, as a stream (`map`, `filter`, `reduce`, `scan`).
const STREAM: Reads = Reads {
    range: true,
    flat: false,
    filter: true,
};
const RANGES: Reads = Reads {
    range: true,
    flat: true,
    filter: false,
};

/// Makes `e` a [`Soac`] when it is a consumer of sequences (not one of `rows`: a map of rows or
/// its fill), absorbing the producers of its inputs.
fn absorb(e: &mut Expr, rows: &HashSet<NodeId>) {
    if rows.contains(&e.id) {
        return;
    }
    let kind = std::mem::replace(&mut e.kind, ExprKind::Lit(Lit::Unit));
    e.kind = match kind {
        ExprKind::Keyword {
            kw: Keyword::Map,
            args,
        } => {
            let [f, s] = <[Expr; 2]>::try_from(args).expect("map has two arguments");
            let mut input = chain(s, STREAM);
            input.stages.push(Stage::Map(f));
            match scan_source(&mut input, rows) {
                Some(scan) => scan,
                None => soac(vec![input], Form::Map { f: None }),
            }
        }
        ExprKind::Keyword {
            kw: Keyword::Filter,
            args,
        } => {
            let [p, s] = <[Expr; 2]>::try_from(args).expect("filter has two arguments");
            let mut input = chain(s, STREAM);
            input.stages.push(Stage::Filter(p));
            soac(vec![input], Form::Map { f: None })
        }
        ExprKind::Keyword {
            kw: Keyword::Map2,
            args,
        } => {
            let [f, a, b] = <[Expr; 3]>::try_from(args).expect("map2 has three arguments");
            soac(
                vec![chain(a, SLICE), chain(b, SLICE)],
                Form::Map { f: Some(f) },
            )
        }
        ExprKind::Keyword {
            kw: Keyword::Reduce,
            args,
        } => {
            let [op, ne, s] = <[Expr; 3]>::try_from(args).expect("reduce has three arguments");
            match s.kind {
                ExprKind::Keyword {
                    kw: Keyword::Map2,
                    args,
                } if !s.ty.has_nested_seq() => {
                    let [g, a, b] = <[Expr; 3]>::try_from(args).expect("map2 has three arguments");
                    let inputs = vec![chain(a, SLICE), chain(b, SLICE)];
                    soac(inputs, Form::Reduce { op, ne, f: Some(g) })
                }
                kind => {
                    let s = Expr { kind, ..s };
                    soac(vec![chain(s, STREAM)], Form::Reduce { op, ne, f: None })
                }
            }
        }
        ExprKind::Keyword {
            kw: Keyword::Scan,
            args,
        } => {
            let [op, ne, s] = <[Expr; 3]>::try_from(args).expect("scan has three arguments");
            let post = Vec::new();
            soac(vec![chain(s, STREAM)], Form::Scan { op, ne, post })
        }
        ExprKind::Keyword {
            kw: Keyword::Hist,
            args,
        } => {
            let [op, ne, k, is, vs] = <[Expr; 5]>::try_from(args).expect("hist has five arguments");
            soac(
                vec![chain(is, RANGES), chain(vs, RANGES)],
                Form::Hist { op, ne, k },
            )
        }
        ExprKind::Keyword {
            kw: Keyword::Scatter,
            args,
        } => {
            let [dest, is, vs] = <[Expr; 3]>::try_from(args).expect("scatter has three arguments");
            soac(
                vec![chain(is, RANGES), chain(vs, RANGES)],
                Form::Scatter { dest },
            )
        }
        ExprKind::App { func, args }
            if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Foldl)) && args.len() == 3 =>
        {
            let [f, acc, s] = <[Expr; 3]>::try_from(args).expect("foldl has three arguments");
            soac(vec![chain(s, POSITION)], Form::Foldl { f, acc })
        }
        // A `create` that nothing consumes is the map of its positions (one printer for every
        // read of positions); of sequences, it stays (debug mode checks the nested ones).
        ExprKind::App { func, args }
            if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Create))
                && args.len() == 2
                && !e.ty.has_nested_seq() =>
        {
            let create = Expr {
                kind: ExprKind::App { func, args },
                ..e.clone()
            };
            soac(vec![chain(create, STREAM)], Form::Map { f: None })
        }
        other => other,
    };
}

/// The `scan` producer: a `map`'s input that only maps the results of a `scan` (of elements that
/// are not sequences) becomes that scan, its maps applied to each result as it is written (the
/// input is left empty then, for the caller to drop).
fn scan_source(input: &mut Input, rows: &HashSet<NodeId>) -> Option<ExprKind> {
    let Source::Seq(scan) = &input.source else {
        return None;
    };
    let is_scan = matches!(
        scan.kind,
        ExprKind::Keyword {
            kw: Keyword::Scan,
            ..
        }
    ) && !scan.ty.has_nested_seq();
    let only_maps = input.stages.iter().all(|s| matches!(s, Stage::Map(_)));
    if !is_scan || !only_maps || rows.contains(&scan.id) {
        return None;
    }
    let empty = Source::Seq(Expr::new(ExprKind::Lit(Lit::Unit), scan.span));
    let Source::Seq(mut scan) = std::mem::replace(&mut input.source, empty) else {
        unreachable!("the source is a sequence")
    };
    absorb(&mut scan, rows);
    let ExprKind::Soac(mut s) = scan.kind else {
        unreachable!("a scan is a consumer")
    };
    let Form::Scan { post, .. } = &mut s.form else {
        unreachable!("a scan's form")
    };
    post.extend(
        std::mem::take(&mut input.stages)
            .into_iter()
            .map(|s| match s {
                Stage::Map(f) | Stage::Filter(f) => f,
            }),
    );
    Some(ExprKind::Soac(s))
}

/// The consumer `e` as the pass makes it (a [`Soac`], its producers absorbed), or `e` as it is
/// when it is no consumer: for a generator that meets one the pass did not see.
pub fn consumer(mut e: Expr) -> Expr {
    absorb(&mut e, &HashSet::new());
    e
}

fn soac(inputs: Vec<Input>, form: Form) -> ExprKind {
    ExprKind::Soac(Box::new(Soac { inputs, form }))
}

/// The producer `e` is, if an input read as `reads` says may absorb it.
fn producer(e: &Expr, reads: Reads) -> Option<Producer> {
    match &e.kind {
        // Flattened rows are read in place, whatever their elements.
        ExprKind::Keyword {
            kw: Keyword::Flatten,
            ..
        } if reads.flat => Some(Producer::Flatten),
        _ if e.ty.has_nested_seq() => None,
        ExprKind::Keyword {
            kw: Keyword::Map, ..
        } => Some(Producer::Map),
        ExprKind::Keyword {
            kw: Keyword::Filter,
            ..
        } if reads.filter => Some(Producer::Filter),
        ExprKind::App { func, args } if args.len() == 2 && reads.range => {
            matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Create)).then_some(Producer::Create)
        }
        _ => None,
    }
}

enum Producer {
    Map,
    Filter,
    Create,
    Flatten,
}

/// The input that reads `e`, with the producers it absorbs.
fn chain(mut e: Expr, reads: Reads) -> Input {
    let mut stages = Vec::new();
    let source = loop {
        match producer(&e, reads) {
            Some(p @ (Producer::Map | Producer::Filter)) => {
                let ExprKind::Keyword { args, .. } = e.kind else {
                    unreachable!("a map or filter producer is a keyword")
                };
                let [g, s] = <[Expr; 2]>::try_from(args).expect("two arguments");
                stages.push(match p {
                    Producer::Map => Stage::Map(g),
                    _ => Stage::Filter(g),
                });
                e = s;
            }
            Some(Producer::Create) => {
                let ExprKind::App { args, .. } = e.kind else {
                    unreachable!("a create producer is an application")
                };
                let [n, g] = <[Expr; 2]>::try_from(args).expect("create has two arguments");
                break Source::Range {
                    n: Box::new(n),
                    g: Box::new(g),
                };
            }
            Some(Producer::Flatten) => {
                let ExprKind::Keyword { mut args, .. } = e.kind else {
                    unreachable!("a flatten producer is a keyword")
                };
                break Source::Flat(args.pop().expect("flatten has one argument"));
            }
            None => break Source::Seq(e),
        }
    };
    // Collected outermost first; applied innermost first.
    stages.reverse();
    let cheap = match &source {
        Source::Range { g, .. } => cheap_fn(g),
        Source::Seq(_) | Source::Flat(_) => true,
    } && stages.iter().all(|s| cheap_fn(s.func()));
    Input {
        source,
        stages,
        cheap,
    }
}

/// The most nodes a function applied to each element may have and still be cheap.
const CHEAP_NODES: usize = 40;

/// Whether applying `f` to an element is a few operations: an intrinsic that is not
/// transcendental, or a closure whose body is at most [`CHEAP_NODES`] nodes with no loop, call
/// (but of such intrinsics) or keyword ([`super::rows`]'s test).
fn cheap_fn(f: &Expr) -> bool {
    use Intrinsic::*;
    let costly = |i: &Intrinsic| matches!(i, Exp | Log | Pow | Sin | Cos);
    match &f.kind {
        ExprKind::Intrinsic(i) => !costly(i),
        ExprKind::Lam { body, .. } => {
            let (mut nodes, mut ok) = (0, true);
            body.walk(&mut |e| {
                nodes += 1;
                ok &= !matches!(&e.kind, ExprKind::Intrinsic(i) if costly(i));
            });
            ok && nodes <= CHEAP_NODES && super::rows::cheap(body, NodeId::UNSET)
        }
        _ => false,
    }
}

/// Rewrites each `let x = flatten(rows); body` whose `body` reads `x` only as a `hist` input
/// (directly or through `map`s, which read it once, in order) into `let x' = rows; body` with
/// each use of `x` now `flatten(x')`, which that `hist` absorbs: the flattened sequence is never
/// built.
fn flat_lets(e: &mut Expr, ids: &mut Ids) {
    if let ExprKind::Let {
        binder,
        value,
        body,
        ..
    } = &mut e.kind
        && let ExprKind::Keyword {
            kw: Keyword::Flatten,
            args,
        } = &mut value.kind
        && binder.ident.name != "_"
        && reads_flat_only(body, binder.ident.id)
    {
        let rows = args.pop().expect("flatten has one argument");
        let (x, flat_ty) = (binder.ident.id, binder.ty.clone());
        let rows_var = ids.var(&binder.ident.name);
        binder.ident.id = rows_var;
        binder.ty = rows.ty.clone();
        let mut var = Expr::typed(
            ExprKind::Var {
                ident: binder.ident.clone(),
                inst: Vec::new(),
            },
            binder.ident.span,
            rows.ty.clone(),
        );
        **value = rows;
        replace_var(
            body,
            x,
            &mut |ids: &mut Ids| {
                var.id = ids.node();
                let mut flat = Expr::typed(
                    ExprKind::Keyword {
                        kw: Keyword::Flatten,
                        args: vec![var.clone()],
                    },
                    var.span,
                    flat_ty.clone(),
                );
                flat.id = ids.node();
                flat
            },
            ids,
        );
    }
    e.children_mut(&mut |c| flat_lets(c, ids));
}

/// Replaces every use of `x` in `e` by what `make` makes.
fn replace_var(e: &mut Expr, x: VarId, make: &mut impl FnMut(&mut Ids) -> Expr, ids: &mut Ids) {
    if matches!(&e.kind, ExprKind::Var { ident, .. } if ident.id == x) {
        let span = e.span;
        *e = make(ids);
        e.span = span;
        return;
    }
    e.children_mut(&mut |c| replace_var(c, x, make, ids));
}

/// Whether every use of `x` in `e` is an index or value sequence of a `hist`, or the sequence a
/// `map` there maps: each reads the sequence once, in order, so a flattened `x` can be read
/// from its rows.
fn reads_flat_only(e: &Expr, x: VarId) -> bool {
    let is_x = |e: &Expr| matches!(&e.kind, ExprKind::Var { ident, .. } if ident.id == x);
    match &e.kind {
        ExprKind::Var { ident, .. } => ident.id != x,
        ExprKind::Keyword {
            kw: Keyword::Hist,
            args,
        } => args.iter().enumerate().all(|(i, a)| match &a.kind {
            _ if i >= 3 && is_x(a) => true,
            ExprKind::Keyword {
                kw: Keyword::Map,
                args: m,
            } if i >= 3 && is_x(&m[1]) => reads_flat_only(&m[0], x),
            _ => reads_flat_only(a, x),
        }),
        _ => {
            let mut only = true;
            e.children(&mut |c| only &= reads_flat_only(c, x));
            only
        }
    }
}
