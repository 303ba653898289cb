//! Counted loops' facts: `par_loop(n, f)`, `seq_loop(n, f)` and `seq_loop_acc(acc, n, f)`, and a
//! `foldl` over the positions themselves, `foldl(f, acc, create(n, |k| k))` ([`counted_fold`]),
//! which is `seq_loop_acc(acc, n, f)` after `create`'s check of `n`.
//!
//! **Windows** (bounds checks hoisted out of loops): a loop whose body reads or writes
//! `t[e1, …, k, …]` — `t` and the other indices fixed for the loop (variables bound outside it,
//! literals, wrapping `+ - *` of those; `t` may be a field of such a variable), `k` its loop
//! variable — is versioned. Before the loop the runtime takes the line `t[e1, …, 0..n, …]` once:
//! a row when `k` is the last index (`TensorRef::window`, a contiguous slice), a strided line
//! otherwise (`TensorRef::strided`). Both fail softly: `None` when the rank differs, another index
//! is out of range or `n` exceeds the dimension. When every line exists, and not in debug mode
//! (which records each access), the loop runs with `line.get(k)` / `line.set(k, v)`: a slice
//! index that the loop bound keeps in range, instead of the rank and per-dimension checks and
//! offset arithmetic of each access. A read may also index the line at `k ± c` (a stencil's
//! neighbours) or at `k` plus any value fixed for the loop: it reads the line where that falls
//! inside it and is the checked access otherwise.
//! Otherwise the loop runs as written, so that every failure is the same failure at the same
//! access. Only loops whose body runs no further parallel keyword or loop are versioned, so that
//! the code is at most doubled per loop.
//!
//! **Reads proven in range**: a read `s[k + c]` (`c ≥ 0` a constant) of a sequence fixed for the
//! loop and read only so in its body is in range for every iteration when `length(s) ≥ n + c`:
//! one check before the loop ([`SeqRead`]). Where it holds, a sequential loop reads `s` cut to
//! what it reads, so that the compiler drops each read's check, and a plain loop reads it through
//! a slice of each chunk; where it does not, the loop runs as written and fails where it did.
//! The reads are found by one analysis ([`reads`]: every read of a sequence bound outside the
//! loop, with its offset from the loop variable), which also decides how a map of rows is peeled
//! ([`crate::opt::rows`]).
//!
//! **Peeled reads**: where one check cannot cover every read of a counted loop at an offset (one
//! at `k - 1`, at `k + w`, of a sequence also read otherwise), every such read is peeled instead
//! (`loop_reads`, [`Facts::peeled`](super::Facts::peeled)): before the loop the iterations `a..b` where all of them are in
//! range are computed, and those run through slices of each chunk; the others run as written
//! (`Backend::par_loop_peeled`, `seq_loop_peeled`, `seq_loop_acc_peeled`; debug mode runs every
//! iteration as written).
//!
//! **Reads of positions**: a `create(n, g)` (or a map over the positions themselves), whatever
//! consumes it, whose element function reads sequences bound outside it at the position plus a
//! constant of either sign or plus or minus a variable bound outside it ([`position_reads`]:
//! `s[k - 1]`, `s[k + w]`), gets those reads served by slices of each chunk
//! for the positions where every one is in range; the others run as written
//! ([`Facts::peeled`](super::Facts::peeled), printed by the generator's `positions.rs`).
//!
//! **Plain loops**: a `par_loop` whose windowed accesses are all rows at the loop variable itself
//! (each iteration touches its own element of each row), at least one of them a write, whose
//! body touches tensors in no other way and calls nothing but intrinsics, may run over plain
//! slices of the rows (the runtime's `access` module hands them out when no one else holds the
//! storage).
//!
//! **Grids**: `par_loop(n, |k| { let i = k / w; let j = k % w; … })` — the usual way to walk a
//! matrix with one flat index, `w` fixed for the loop — runs as rows of `w`. The function's
//! leading `let`s must hold `j = k % w` (the column) and may hold others that are the same for
//! every index of a row: `k` only as `k / m` with `m` fixed for the loop and a multiple of `w`
//! when the loop runs (checked then), with fixed variables, literals, earlier such `let`s and
//! integer arithmetic. Per row segment those `let`s are computed once, then the row is a loop over
//! `j` whose accesses by `j` are windowed ([`Grid::row`]). The same iterations run with the same
//! values, in any order; a `let` moved out that fails would have failed in every iteration of the
//! row, and fails the same way once. The rows run only where `w > 0` and every `m` is a multiple
//! of `w`; debug mode runs the loop as written.

use std::collections::HashMap;

use crate::ast::{Expr, ExprKind, Form, Input, Lit, NodeId, Param, Soac, Source, Stage, VarId};
use crate::infer::Numeric;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::types::{TyVar, Type};

/// What the optimizer knows of a counted loop.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoopFacts {
    /// The accesses that lines serve (with `reads` empty too: the loop is not versioned).
    pub accesses: Vec<Access>,
    /// The reads of sequences that one check before the loop proves in range.
    pub reads: Vec<SeqRead>,
    /// A `par_loop` that may also run as a plain loop over slices.
    pub plain: bool,
    /// A `par_loop` of the grid shape.
    pub grid: Option<Grid>,
}

/// A tensor access that a line serves.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    /// The index expression `[e1, …, k]`'s node: how the access is found in the loop body.
    pub key: NodeId,
    /// Where the loop variable is in the index: the last dimension gives a row, another a
    /// strided line.
    pub pos: usize,
    /// The index there is the loop variable plus this constant (a read of `t[i, k ± c]`), or, when
    /// `None`, plus a value fixed for the loop (`t[i, k + d]`, `d` bound outside it).
    pub offset: Option<i64>,
    /// Whether it is a `tensor_set`.
    pub write: bool,
    /// The line it goes through: accesses of the same tensor with the same fixed indices (a
    /// stencil reads `src[i, j, ·]` at three offsets) share one, taken once, numbered in order of
    /// first access from 0.
    pub line: usize,
}

/// A read `s[k + c]` in a loop's body of a sequence `s` fixed for the loop, `c` a constant. In
/// [`LoopFacts::reads`], `c ≥ 0` and `s` is only indexed so: one check before the loop,
/// `length(s) ≥ n + c`, proves it in range for every iteration `k < n` (where the check fails,
/// the loop runs as written and fails where it did). In [`Facts::peeled`](super::Facts::peeled),
/// `c` has either sign: the positions where every such read is in range are computed before the
/// loop.
#[derive(Debug, Clone, PartialEq)]
pub struct SeqRead {
    /// The index expression's node: how the read is found in the loop body.
    pub key: NodeId,
    /// The sequence.
    pub seq: VarId,
    /// The constant `c`.
    pub offset: i64,
    /// Beyond `c`, a variable fixed for the loop added or subtracted (`s[k + w]`, `s[k - w]`);
    /// only in [`Facts::peeled`](super::Facts::peeled).
    pub shift: Option<Shift>,
}

/// A read's offset from the loop variable that is a variable bound outside the loop function
/// (`k + w`, `w + k`, `k - w`): fixed for the loop, known when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shift {
    /// The variable.
    pub var: VarId,
    /// Whether it is subtracted.
    pub minus: bool,
}

/// The grid shape of a `par_loop`'s function `|k| body`, by the positions of `body`'s leading
/// `let`s.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// How many leading `let`s run once per row (the column's among them).
    pub moved: usize,
    /// Which of them is the column `j = k % w`.
    pub col: usize,
    /// The `m` of each `k / m` among them (nodes of the loop body): the rows run only where each
    /// is a multiple of the width.
    pub divisors: Vec<NodeId>,
    /// The accesses of the loop over a row (the column its variable) that lines serve.
    pub row: Vec<Access>,
}

/// A grid loop's parts, as [`Grid`] finds them in the loop's function.
pub struct GridParts<'e> {
    /// The flat index `k`.
    pub k: &'e Param,
    /// The `let`s before the body that are the same for every index of a row, in order.
    pub prefix: Vec<(&'e Param, &'e Expr)>,
    /// `j = k % w`: the column, the loop variable of a row.
    pub col: &'e Param,
    /// The width `w`.
    pub width: &'e Expr,
    /// The divisors `m`.
    pub divisors: Vec<&'e Expr>,
    /// The body after the moved `let`s.
    pub rest: &'e Expr,
}

impl Grid {
    /// The parts of the loop function `f` this grid was found in.
    pub fn parts<'e>(&self, f: &'e Expr) -> Option<GridParts<'e>> {
        let ExprKind::Lam { params, body } = &f.kind else {
            return None;
        };
        let lets = top_lets(body);
        let (col, value, _) = lets.get(self.col)?;
        let ExprKind::App { args, .. } = &value.kind else {
            return None;
        };
        let mut divisors = Vec::new();
        for (_, v, _) in lets.iter().take(self.moved) {
            v.walk(&mut |x| {
                if self.divisors.contains(&x.id) {
                    divisors.push(x)
                }
            });
        }
        Some(GridParts {
            k: params.first()?,
            prefix: (lets.iter().take(self.moved).enumerate())
                .filter(|(i, _)| *i != self.col)
                .map(|(_, (p, v, _))| (*p, *v))
                .collect(),
            col,
            width: args.get(1)?,
            divisors,
            rest: lets.get(self.moved.checked_sub(1)?)?.2,
        })
    }
}

/// The facts of every counted loop of `e` and of the settled tests (`settled`: the folds whose
/// accumulator settles, which stop early and are not peeled; their tests copy parts of loops'
/// bodies), by the loop's node; and the functions whose reads are peeled
/// ([`Facts::peeled`](super::Facts::peeled)), by the function's node: the element functions of
/// the inputs made from positions of every consumer (a `foldl`'s read in order), and the
/// functions of counted loops whose reads one check does not cover ([`LoopFacts::reads`]).
pub fn loops(
    e: &Expr,
    settled: &HashMap<NodeId, Expr>,
    numeric: &[(TyVar, Numeric)],
) -> (HashMap<NodeId, LoopFacts>, HashMap<NodeId, Vec<SeqRead>>) {
    let (mut out, mut peeled) = (HashMap::new(), HashMap::new());
    for e in std::iter::once(e).chain(settled.values()) {
        e.walk(&mut |x| {
            let Some((f, arity)) = counted_loop(x) else {
                if let ExprKind::Soac(s) = &x.kind {
                    for (f, _) in s.inputs.iter().filter_map(element_fn) {
                        let reads = position_reads(f, 1);
                        if !reads.is_empty() {
                            peeled.insert(f.id, reads);
                        }
                    }
                }
                return;
            };
            let par = matches!(
                x.kind,
                ExprKind::Keyword {
                    kw: Keyword::ParLoop,
                    ..
                }
            );
            let accesses = windowed_accesses(f, arity);
            let (reads, peel) = loop_reads(f, arity, settled.contains_key(&x.id));
            if !peel.is_empty() {
                peeled.insert(f.id, peel);
            }
            let facts = LoopFacts {
                plain: par && plain_eligible(f, &accesses, numeric),
                grid: if par { grid(f, numeric) } else { None },
                reads,
                accesses,
            };
            if facts != LoopFacts::default() {
                out.insert(x.id, facts);
            }
        });
    }
    (out, peeled)
}

/// The function of a `foldl` over the positions `0..n` themselves (`foldl(f, acc, create(n, |k| k))`,
/// no map between): a counted loop like `seq_loop_acc(acc, n, f)`, whose facts it gets.
pub fn counted_fold(s: &Soac) -> Option<&Expr> {
    let (Form::Foldl { f, .. }, [input]) = (&s.form, &s.inputs[..]) else {
        return None;
    };
    let Source::Range { g, .. } = &input.source else {
        return None;
    };
    (identity(g) && input.stages.is_empty()).then_some(f)
}

/// Whether `g` is `|k| k`.
fn identity(g: &Expr) -> bool {
    let ExprKind::Lam { params, body } = &g.kind else {
        return false;
    };
    matches!((&params[..], &body.kind), ([k], ExprKind::Var { ident, .. }) if ident.id == k.ident.id)
}

/// The element function of an input made from positions, a lambda: `create(n, g)`'s `g`, or, for
/// a map over the positions themselves (`map(f, create(n, |k| k))`, `f` the input's first
/// stage), `f`; with the number of the input's stages it stands for (0 or 1).
pub fn element_fn(input: &Input) -> Option<(&Expr, usize)> {
    let Source::Range { g, .. } = &input.source else {
        return None;
    };
    let (f, absorbed) = match input.stages.first() {
        Some(Stage::Map(f)) if identity(g) => (f, 1),
        _ => (&**g, 0),
    };
    loop_parts(f, 1).map(|_| (f, absorbed))
}

/// The reads of an element function of positions `f` ([`element_fn`]) that a chunk's slices can
/// serve: at the position plus a constant of either sign, `s[k - 1]`, `s[k + 2]`, or plus or
/// minus a variable bound outside `f` ([`Shift`]: `s[k + w]`, `s[k - w]`), of sequences bound
/// outside `f`; none when `f` runs a keyword or a loop (each version of the element
/// function is then printed once). The positions where every one is in range are read through
/// slices, the others as written ([`Facts::peeled`](super::Facts::peeled)).
pub fn position_reads(f: &Expr, arity: usize) -> Vec<SeqRead> {
    at_offsets(f, arity, &reads(f, arity))
}

/// [`position_reads`] from what [`reads`] found in `f`.
fn at_offsets(f: &Expr, arity: usize, found: &Reads) -> Vec<SeqRead> {
    if found.nested || loop_parts(f, arity).is_none() {
        return Vec::new();
    }
    (found.reads.iter())
        .filter_map(|r| {
            let (offset, shift) = match (r.offset, r.shift) {
                (Some(c), _) => (c, None),
                (None, Some(sh)) => (0, Some(sh)),
                (None, None) => return None,
            };
            Some(SeqRead {
                key: r.key,
                seq: r.seq,
                offset,
                shift,
            })
        })
        .collect()
}

/// The loop function of a counted loop (`par_loop`, `seq_loop`, `seq_loop_acc`, a counted `foldl`)
/// and its number of parameters.
fn counted_loop(x: &Expr) -> Option<(&Expr, usize)> {
    match &x.kind {
        ExprKind::Keyword { kw, args } => kw.loop_body().map(|f| (&args[f.index], f.params)),
        ExprKind::Soac(s) => counted_fold(s).map(|f| (f, 2)),
        _ => None,
    }
}

/// A counted loop's reads of sequences (one [`reads`] analysis), served one way or the other:
/// those one check proves in range ([`one_check`]) when they are all the reads slices could serve
/// or the loop is a fold that may stop early (`settled`), or else every such read peeled
/// ([`position_reads`]: at any constant offset, or a variable's).
fn loop_reads(f: &Expr, arity: usize, settled: bool) -> (Vec<SeqRead>, Vec<SeqRead>) {
    let found = reads(f, arity);
    let one = one_check(f, arity, &found);
    let all = at_offsets(f, arity, &found);
    if settled || one.len() == all.len() {
        (one, Vec::new())
    } else {
        (Vec::new(), all)
    }
}

/// The loop variable (the last of `arity` parameters) and the body of the loop function `f`, a
/// lambda; `None` for anything else. The loop variable is an `i64` or of an integer type the
/// captured values fix (the count's): the runtime counts in `i64` either way, and the generated
/// code makes the variable from the position.
fn loop_parts(f: &Expr, arity: usize) -> Option<(VarId, &Expr)> {
    let ExprKind::Lam { params, body } = &f.kind else {
        return None;
    };
    let k = params.get(arity.checked_sub(1)?)?;
    (params.len() == arity && matches!(k.ty, Type::INT | Type::Var(_)))
        .then_some((k.ident.id, &**body))
}

/// Whether `t` may be an index's type: `i64`, or an integer type the captured values fix (only
/// integers index, by inference).
fn index_type(t: &Type) -> bool {
    matches!(t, &Type::INT | Type::Var(_))
}

/// The accesses of the loop function `f` (a lambda whose last parameter is the loop variable;
/// `arity` parameters in all) that lines can serve; empty when the loop is not versioned.
pub fn windowed_accesses(f: &Expr, arity: usize) -> Vec<Access> {
    let Some((k, body)) = loop_parts(f, arity) else {
        return Vec::new();
    };
    let free = f.free_vars();
    // Identifiers are unique: a variable free in `f` is bound outside the loop wherever it occurs
    // in the body, so it is fixed for the whole loop.
    let outside = |e: &Expr, ty: fn(&Type) -> bool| {
        matches!(&e.kind, ExprKind::Var { ident, .. } if free.contains(&ident.id)) && ty(&e.ty)
    };
    let mut nested = false;
    let mut out = Vec::new();
    // Each line: the tensor, the index and where the loop variable is in it.
    let mut lines: Vec<(&Expr, &[Expr], usize)> = Vec::new();
    // A recursive function (a loop of the body) is printed as a `fn` item, which cannot see the
    // lines taken before the loop: a loop in the body keeps the loop unversioned, like a keyword.
    body.walk(&mut |e| match &e.kind {
        ExprKind::Keyword { .. } | ExprKind::Soac(_) | ExprKind::RecLet { .. } => nested = true,
        ExprKind::App { func, args }
            if matches!(
                func.kind,
                ExprKind::Intrinsic(Intrinsic::TensorGet | Intrinsic::TensorSet)
            ) && args.len() >= 2 =>
        {
            let ExprKind::Seq(idx) = &args[1].kind else {
                return;
            };
            let int_outside = |x: &Expr| outside(x, index_type);
            let fixed = |x: &Expr| pure_fixed(x, &int_outside);
            let Some((pos, offset)) = idx
                .iter()
                .enumerate()
                .find_map(|(j, x)| offset_of(x, k, &fixed).map(|o| (j, o)))
            else {
                return;
            };
            let read = matches!(func.kind, ExprKind::Intrinsic(Intrinsic::TensorGet));
            if offset != Some(0) && !read {
                return;
            }
            // The tensor may be a field of a record bound outside (`l.w`): projections are
            // free and cannot fail.
            let mut base = &args[0];
            while let ExprKind::Proj { expr, .. } = &base.kind {
                base = expr;
            }
            let base_outside =
                matches!(&base.kind, ExprKind::Var { ident, .. } if free.contains(&ident.id));
            let others_fixed = idx.iter().enumerate().all(|(j, x)| j == pos || fixed(x));
            if matches!(args[0].ty, Type::Tensor(_)) && base_outside && others_fixed {
                // The line of an earlier access of the same tensor and fixed indices, or a new one.
                let same = |(t, ix, p): &(&Expr, &[Expr], usize)| {
                    *p == pos
                        && ix.len() == idx.len()
                        && same_value(t, &args[0])
                        && (ix.iter().zip(idx.iter()).enumerate())
                            .all(|(j, (a, b))| j == pos || same_value(a, b))
                };
                let line = lines.iter().position(same).unwrap_or_else(|| {
                    lines.push((&args[0], &idx[..], pos));
                    lines.len() - 1
                });
                out.push(Access {
                    key: args[1].id,
                    pos,
                    offset,
                    write: !read,
                    line,
                });
            }
        }
        _ => {}
    });
    if nested { Vec::new() } else { out }
}

/// Whether two expressions fixed for a loop (variables, fields of them, literals and wrapping
/// arithmetic of those: see [`pure_fixed`]) are the same value.
fn same_value(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Var { ident: x, .. }, ExprKind::Var { ident: y, .. }) => x.id == y.id,
        (ExprKind::Lit(x), ExprKind::Lit(y)) => x == y,
        (ExprKind::Proj { expr: x, label: l }, ExprKind::Proj { expr: y, label: m }) => {
            l == m && same_value(x, y)
        }
        (ExprKind::Intrinsic(x), ExprKind::Intrinsic(y)) => x == y,
        (ExprKind::App { func: f, args: xs }, ExprKind::App { func: g, args: ys }) => {
            same_value(f, g)
                && xs.len() == ys.len()
                && xs.iter().zip(ys).all(|(x, y)| same_value(x, y))
        }
        _ => false,
    }
}

/// A read `s[i]` in a loop function's body of a sequence `s` bound outside the function.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    /// The index expression's node.
    pub key: NodeId,
    /// The sequence.
    pub seq: VarId,
    /// The index is the loop variable plus this constant (`k`, `k + c`, `c + k`, `k - c`), or
    /// `None` for any other index.
    pub offset: Option<i64>,
    /// The index is the loop variable plus or minus a variable bound outside the function, of
    /// its integer type (`k + w`, `w + k`, `k - w`).
    pub shift: Option<Shift>,
}

/// What [`reads`] finds in a loop function's body.
#[derive(Debug, Default)]
pub struct Reads {
    /// The reads of sequences bound outside the function, in order.
    pub reads: Vec<Read>,
    /// How often each variable bound outside the function occurs in its body, reads included.
    pub uses: std::collections::BTreeMap<VarId, usize>,
    /// Whether the body runs a keyword, a loop or a recursive function.
    pub nested: bool,
}

/// The one analysis of a counted loop's reads: every read of a sequence bound outside the loop
/// function `f` (`arity` parameters, the loop variable last), each with its offset from the loop
/// variable where it is one. What one check before the loop proves in range (`one_check`) and
/// how a map of rows is peeled ([`crate::opt::rows`]) both come from it.
pub fn reads(f: &Expr, arity: usize) -> Reads {
    // The loop variable of any integer type: each user says which it takes.
    let ExprKind::Lam { params, body } = &f.kind else {
        return Reads::default();
    };
    let Some(k) = params.last().filter(|_| params.len() == arity) else {
        return Reads::default();
    };
    let k = k.ident.id;
    let free = f.free_vars();
    let mut out = Reads::default();
    body.walk(&mut |e| match &e.kind {
        ExprKind::Keyword { .. } | ExprKind::Soac(_) | ExprKind::RecLet { .. } => out.nested = true,
        ExprKind::Var { ident, .. } if free.contains(&ident.id) => {
            *out.uses.entry(ident.id).or_default() += 1;
        }
        ExprKind::App { func, args }
            if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Get)) && args.len() == 2 =>
        {
            if let ExprKind::Var { ident, .. } = &args[0].kind
                && free.contains(&ident.id)
            {
                out.reads.push(Read {
                    key: args[1].id,
                    seq: ident.id,
                    offset: offset_of(&args[1], k, &|_| false).flatten(),
                    shift: shift_of(&args[1], k, &free),
                });
            }
        }
        _ => {}
    });
    out
}

/// The reads of the loop function `f` (`arity` parameters, the loop variable last) that one check
/// before the loop proves in range ([`SeqRead`]): at `k + c`, `c >= 0`, of a sequence the body
/// reads in no other way; none when the body runs a keyword or a loop.
fn one_check(f: &Expr, arity: usize, found: &Reads) -> Vec<SeqRead> {
    if found.nested || loop_parts(f, arity).is_none() {
        return Vec::new();
    }
    // Only sequences the body reads through these reads alone (their local is cut to what the
    // loop reads).
    let at_offset = |r: &Read| r.offset.is_some_and(|c| c >= 0);
    let mut counted: std::collections::BTreeMap<VarId, usize> = Default::default();
    for r in found.reads.iter().filter(|r| at_offset(r)) {
        *counted.entry(r.seq).or_default() += 1;
    }
    let only = |s: VarId| found.uses.get(&s) == counted.get(&s);
    (found.reads.iter())
        .filter(|r| at_offset(r) && only(r.seq))
        .map(|r| SeqRead {
            key: r.key,
            seq: r.seq,
            offset: r.offset.unwrap_or(0),
            shift: None,
        })
        .collect()
}

/// `k`, `k + x`, `x + k` or `k - x` (`+` and `-` on `i64`, or on the integer type of the loop
/// variable `k`): `x`, if any, and whether it is subtracted.
fn beside_k(e: &Expr, k: VarId) -> Option<(Option<&Expr>, bool)> {
    let is_k = |x: &Expr| matches!(&x.kind, ExprKind::Var { ident, .. } if ident.id == k);
    if is_k(e) {
        return Some((None, false));
    }
    let ExprKind::App { func, args } = &e.kind else {
        return None;
    };
    use Intrinsic::{AddI, NumAdd, NumSub, SubI};
    match (&func.kind, &args[..]) {
        (ExprKind::Intrinsic(AddI | NumAdd), [a, b]) if is_k(a) => Some((Some(b), false)),
        (ExprKind::Intrinsic(AddI | NumAdd), [a, b]) if is_k(b) => Some((Some(a), false)),
        (ExprKind::Intrinsic(SubI | NumSub), [a, b]) if is_k(a) => Some((Some(b), true)),
        _ => None,
    }
}

/// `k`, `k + c`, `c + k` or `k - c`: the offset from the loop variable `k`, a constant when `c` is
/// a literal, `None` inside when it is another value `fixed` for the loop.
fn offset_of(x: &Expr, k: VarId, fixed: &dyn Fn(&Expr) -> bool) -> Option<Option<i64>> {
    let (c, minus) = match beside_k(x, k)? {
        (None, _) => return Some(Some(0)),
        (Some(c), minus) => (c, minus),
    };
    let c = match c.kind {
        ExprKind::Lit(Lit::Int(c)) => Some(i64::try_from(c).ok()?),
        _ if fixed(c) => None,
        _ => return None,
    };
    Some(if minus {
        c.and_then(i64::checked_neg)
    } else {
        c
    })
}

/// `k + w`, `w + k` or `k - w`, `w` a variable bound outside the loop function (free in it), of
/// `k`'s type by inference.
fn shift_of(x: &Expr, k: VarId, free: &std::collections::BTreeSet<VarId>) -> Option<Shift> {
    let (Some(w), minus) = beside_k(x, k)? else {
        return None;
    };
    match &w.kind {
        ExprKind::Var { ident, .. } if free.contains(&ident.id) && index_type_or_num(&w.ty) => {
            Some(Shift {
                var: ident.id,
                minus,
            })
        }
        _ => None,
    }
}

/// Whether `t` is an integer type an index may have: `i64`, one of Rust's, or one the captured
/// values fix.
fn index_type_or_num(t: &Type) -> bool {
    match t {
        Type::Num(n) => n.is_int(),
        t => index_type(t),
    }
}

/// Fixed for a loop and computed without failing, so that it may be evaluated once before the
/// loop: an integer literal, a variable `outside` accepts (bound outside the loop), or wrapping
/// `+ - *` of those (`i - 1` in a stencil).
pub fn pure_fixed(x: &Expr, outside: &dyn Fn(&Expr) -> bool) -> bool {
    match &x.kind {
        ExprKind::Lit(Lit::Int(_)) => true,
        ExprKind::App { func, args } => {
            matches!(
                func.kind,
                ExprKind::Intrinsic(
                    Intrinsic::AddI
                        | Intrinsic::SubI
                        | Intrinsic::MulI
                        | Intrinsic::NumAdd
                        | Intrinsic::NumSub
                        | Intrinsic::NumMul
                )
            ) && args.iter().all(|a| pure_fixed(a, outside))
        }
        _ => outside(x),
    }
}

/// Whether a `par_loop` whose windowed accesses are `accesses` may run as a plain loop: every
/// access is a row at the loop variable itself, at least one writes, and the body touches
/// tensors in no other way and calls nothing but intrinsics (a closure could touch a tensor it
/// captured).
fn plain_eligible(f: &Expr, accesses: &[Access], numeric: &[(TyVar, Numeric)]) -> bool {
    let ExprKind::Lam { body, .. } = &f.kind else {
        return false;
    };
    if accesses.is_empty() || !accesses.iter().all(|a| a.offset == Some(0)) {
        return false;
    }
    let mut writes = false;
    let mut ok = true;
    body.walk(&mut |e| {
        let ExprKind::App { func, args } = &e.kind else {
            return;
        };
        let ExprKind::Intrinsic(op) = &func.kind else {
            ok = false;
            return;
        };
        let windowed = match args.get(1) {
            Some(ix) => accesses.iter().find(|a| a.key == ix.id),
            None => None,
        };
        match windowed {
            Some(a) => {
                // A row: the loop variable is the last index.
                let ExprKind::Seq(idx) = &args[1].kind else {
                    ok = false;
                    return;
                };
                ok &= a.pos + 1 == idx.len();
                writes |= *op == Intrinsic::TensorSet;
            }
            None if args.iter().any(|x| mentions_tensor(&x.ty, numeric)) => ok = false,
            None => {}
        }
    });
    ok && writes
}

/// Whether values of type `t` may hold a tensor: a tensor, or a type variable that is not a
/// number.
pub fn mentions_tensor(t: &Type, numeric: &[(TyVar, Numeric)]) -> bool {
    match t {
        Type::Num(_) => false,
        Type::Tensor(_) => true,
        Type::Var(v) => !numeric.iter().any(|(w, k)| w == v && *k != Numeric::Open),
        Type::Seq(t) => mentions_tensor(t, numeric),
        Type::Arrow(a, b) => mentions_tensor(a, numeric) || mentions_tensor(b, numeric),
        Type::Record(fs) => fs.iter().any(|(_, t)| mentions_tensor(t, numeric)),
    }
}

/// The `let`s at the top of `e` (of monomorphic values): each binder, value and scope.
fn top_lets(mut e: &Expr) -> Vec<(&Param, &Expr, &Expr)> {
    let mut lets = Vec::new();
    while let ExprKind::Let {
        binder,
        value,
        body,
        scheme,
    } = &e.kind
    {
        if !scheme.is_empty() {
            break;
        }
        lets.push((binder, &**value, &**body));
        e = body;
    }
    lets
}

/// The grid shape of a `par_loop`'s function `f`, if it has it: its loop variable an integer of
/// any type (`i64`, another of Rust's, or one the captured values fix), the row's arithmetic in
/// that type.
fn grid(f: &Expr, numeric: &[(TyVar, Numeric)]) -> Option<Grid> {
    let ExprKind::Lam { params, body } = &f.kind else {
        return None;
    };
    let [k] = &params[..] else {
        return None;
    };
    let int = &k.ty;
    let integer = match int {
        Type::Num(n) => n.is_int(),
        Type::Var(v) => numeric.iter().any(|(w, n)| w == v && *n == Numeric::Int),
        _ => false,
    };
    if !integer {
        return None;
    }
    let free = f.free_vars();
    let is_k = |x: &Expr| matches!(&x.kind, ExprKind::Var { ident, .. } if ident.id == k.ident.id);
    // Fixed for the whole loop: a literal or an integer variable bound outside it.
    let fixed = |x: &Expr| match &x.kind {
        ExprKind::Lit(Lit::Int(_)) => true,
        ExprKind::Var { ident, .. } => free.contains(&ident.id) && x.ty == *int,
        _ => false,
    };
    // `k % w`, `w` fixed.
    let column = |v: &Expr| -> bool {
        let ExprKind::App { func, args } = &v.kind else {
            return false;
        };
        let ExprKind::Intrinsic(Intrinsic::ModI | Intrinsic::NumRem) = func.kind else {
            return false;
        };
        matches!(&args[..], [x, w] if is_k(x) && fixed(w))
    };
    let lets = top_lets(body);
    let c = lets.iter().position(|(_, v, _)| column(v))?;
    // The same for every index of a row: `k` only as `k / m` with `m` fixed for the loop (a
    // multiple of the width at run time: `divisors`), fixed variables, literals, earlier such
    // `let`s, and integer arithmetic of those.
    fn invariant(
        e: &Expr,
        is_k: &dyn Fn(&Expr) -> bool,
        fixed: &dyn Fn(&Expr) -> bool,
        vars: &[VarId],
        divisors: &mut Vec<NodeId>,
    ) -> bool {
        match &e.kind {
            ExprKind::Lit(Lit::Int(_)) => true,
            ExprKind::Var { ident, .. } => fixed(e) || vars.contains(&ident.id),
            ExprKind::App { func, args } => {
                let ExprKind::Intrinsic(op) = func.kind else {
                    return false;
                };
                if matches!(op, Intrinsic::DivI | Intrinsic::NumDiv)
                    && let [x, m] = &args[..]
                    && is_k(x)
                {
                    divisors.push(m.id);
                    return pure_fixed(m, fixed);
                }
                matches!(
                    op,
                    Intrinsic::AddI
                        | Intrinsic::SubI
                        | Intrinsic::MulI
                        | Intrinsic::DivI
                        | Intrinsic::ModI
                        | Intrinsic::NegI
                        | Intrinsic::NumAdd
                        | Intrinsic::NumSub
                        | Intrinsic::NumMul
                        | Intrinsic::NumDiv
                        | Intrinsic::NumRem
                        | Intrinsic::NumNeg
                ) && args
                    .iter()
                    .all(|a| invariant(a, is_k, fixed, vars, divisors))
            }
            _ => false,
        }
    }
    let mut invariant_vars: Vec<VarId> = Vec::new();
    let mut divisors = Vec::new();
    let mut moved = 0;
    for (n, (binder, value, _)) in lets.iter().enumerate() {
        if n == c {
            moved = n + 1;
            continue;
        }
        let mut found = Vec::new();
        if value.ty != *int || !invariant(value, &is_k, &fixed, &invariant_vars, &mut found) {
            break;
        }
        divisors.extend(found);
        invariant_vars.push(binder.ident.id);
        moved = n + 1;
    }
    // The column's `let` must be among those moved out of the loop body.
    if moved <= c {
        return None;
    }
    // The loop over a row, as a function of `k` and the column (its loop variable), the moved
    // `let`s bound outside it: what the lines of a row are taken for.
    let rest = lets[moved - 1].2;
    let row_fn = Expr::typed(
        ExprKind::Lam {
            params: vec![k.clone(), lets[c].0.clone()],
            body: Box::new(rest.clone()),
        },
        f.span,
        f.ty.clone(),
    );
    Some(Grid {
        moved,
        col: c,
        divisors,
        row: windowed_accesses(&row_fn, 2),
    })
}
