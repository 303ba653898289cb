//! Maps of rows: `map(|j| { …; map(g, ks) }, s)` — every element of `s` makes a row of
//! `length(ks)` numbers or `bool`s, `ks` bound outside the function, the inner `map` the
//! function's result (after `let`s) — build their rows in one buffer (`Backend::map_rows`)
//! instead of one allocation per row: the nested sequence's rows are views of that buffer. The
//! function's body runs as written, except that the inner `map` (the *fill*) fills the row it is
//! given, `row[k] = g(ks[k])`. Same elements, same failures (the function's `let`s run per row,
//! `g` per element, in the same order within a row); on `cpu` the rows are filled in parallel, as
//! the outer `map` ran its function.
//!
//! How a row is filled is decided here too:
//!
//! - the sequences bound outside `g` that `g` only indexes are taken as slices once, before the
//!   row's loop ([`Rows::sliced`]), instead of reading each one's pointer and length again after
//!   every store into the row;
//! - when `ks` is `create(n, |k| k)` (its element `k` is `k`) and `g` reads such slices at
//!   `k + c` (`c` a constant: Parboil stencil's `r[k + 1] + r[k - 1]`), the row is filled in three
//!   parts ([`Rows::peel`]): `k` below `lo` and from `hi` on as written, and `k` in `lo..hi`,
//!   where every such read is in range (`lo ≥ −c`, `hi ≤ length(r) − c`), over each slice cut to
//!   `hi + max c`, so that LLVM sees the reads in range and drops their checks. Each `k` is
//!   computed once and in order, and a read out of range fails as it did (it lies outside
//!   `lo..hi`, where nothing is cut).

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::{Expr, ExprKind, IdSet, NeverKind, NodeId, VarId};
use crate::infer::Numeric;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::types::{TyVar, Type};

/// The largest offset `c` of a read `r[k + c]` that peeling takes into account.
const MAX_OFFSET: i64 = 1 << 20;

/// A map of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// The inner `map(g, ks)` that fills each row.
    pub fill: NodeId,
    /// The function makes each row element with a few operations: no loop, no call of a
    /// function, no keyword but the fill, and no intrinsic that builds a sequence (`cpu` runs a
    /// small map of such rows on the calling thread).
    pub cheap: bool,
    /// The sequences bound outside `g` that `g` only indexes (`r[k]`).
    pub sliced: Vec<VarId>,
    /// When the fill is peeled: each sliced sequence that `g` reads at `k + c` with its least and
    /// greatest `c`.
    pub peel: Vec<(VarId, i64, i64)>,
}

/// The maps of rows of `e`, by the outer `map`'s node.
pub fn rows(e: &Expr, numeric: &[(TyVar, Numeric)]) -> std::collections::HashMap<NodeId, Rows> {
    let mut iotas = IdSet::default();
    e.walk(&mut |x| {
        if let ExprKind::Let { binder, value, .. } = &x.kind
            && is_iota(value)
        {
            iotas.insert(binder.ident.id);
        }
    });
    let mut out = std::collections::HashMap::new();
    find(e, numeric, &iotas, &mut out);
    out
}

/// Records the maps of rows of `e`. Inside the function of one, only `g` may hold another (the
/// rest of the function is the row's own code).
fn find(
    e: &Expr,
    numeric: &[(TyVar, Numeric)],
    iotas: &IdSet,
    out: &mut std::collections::HashMap<NodeId, Rows>,
) {
    if let ExprKind::Keyword {
        kw: Keyword::Map,
        args,
    } = &e.kind
        && let Some((g, rows)) = map_of_rows(&args[0], &args[1], numeric, iotas)
    {
        out.insert(e.id, rows);
        find(g, numeric, iotas, out);
        find(&args[1], numeric, iotas, out);
        return;
    }
    e.children(&mut |c| find(c, numeric, iotas, out));
}

/// `map(f, s)` as a map of rows, when `f` has that shape: the fill's function `g`, and the facts.
fn map_of_rows<'e>(
    f: &'e Expr,
    s: &Expr,
    numeric: &[(TyVar, Numeric)],
    iotas: &IdSet,
) -> Option<(&'e Expr, Rows)> {
    let ExprKind::Lam { params, body } = &f.kind else {
        return None;
    };
    let [_] = &params[..] else {
        return None;
    };
    // The function's result, after its `let`s (and irrefutable destructurings).
    let mut tail: &Expr = body;
    loop {
        match &tail.kind {
            ExprKind::Let { body, .. } => tail = body,
            ExprKind::Match {
                then, otherwise, ..
            } if matches!(otherwise.kind, ExprKind::Never(NeverKind::NoArm)) => tail = then,
            _ => break,
        }
    }
    let ExprKind::Keyword {
        kw: Keyword::Map,
        args: inner,
    } = &tail.kind
    else {
        return None;
    };
    let ExprKind::Var { ident: ks, .. } = &inner[1].kind else {
        return None;
    };
    if !f.free_vars().contains(&ks.id) {
        return None;
    }
    let Type::Seq(u) = &tail.ty else {
        return None;
    };
    let scalar = match &**u {
        Type::Num(_) => true,
        Type::Var(v) => numeric.iter().any(|(w, k)| w == v && *k != Numeric::Open),
        _ => false,
    };
    if !scalar || !matches!(s.ty, Type::Seq(_)) {
        return None;
    }
    let g = &inner[0];
    let sliced = indexed_only(g);
    let peel = if iotas.contains(&ks.id) {
        offsets(g, &sliced)
    } else {
        Vec::new()
    };
    let rows = Rows {
        fill: tail.id,
        cheap: cheap(body, tail.id),
        sliced,
        peel,
    };
    Some((g, rows))
}

/// Whether the function of a map of rows (`body`, whose fill is node `fill`) is a few operations
/// per row element: no loop, no call of a function, no keyword but the fill, and no intrinsic
/// that builds a sequence.
pub(super) fn cheap(body: &Expr, fill: NodeId) -> bool {
    use crate::intrinsics::Intrinsic::*;
    let mut ok = true;
    body.walk(&mut |e| match &e.kind {
        ExprKind::Keyword { .. } if e.id == fill => {}
        ExprKind::Keyword { .. } | ExprKind::Soac(_) | ExprKind::RecLet { .. } => ok = false,
        ExprKind::App { func, .. } => match &func.kind {
            ExprKind::Intrinsic(
                Create | Set | Foldl | Tail | Concat | Reverse | Subsequence | TensorSet
                | TensorLinearSet | TensorSub | TensorSlice | TensorGemm,
            ) => ok = false,
            ExprKind::Intrinsic(_) => {}
            // The row's function `g` is applied by the fill; other lambdas are not called here.
            ExprKind::Lam { .. } => {}
            _ => ok = false,
        },
        _ => {}
    });
    ok
}

/// The sequences bound outside `g` that `g` only indexes (`s[i]`).
fn indexed_only(g: &Expr) -> Vec<VarId> {
    let free = g.free_vars();
    let mut total: BTreeMap<VarId, usize> = BTreeMap::new();
    let mut indexed: BTreeMap<VarId, usize> = BTreeMap::new();
    let mut seqs: BTreeSet<VarId> = BTreeSet::new();
    g.walk(&mut |e| match &e.kind {
        ExprKind::Var { ident, .. } if free.contains(&ident.id) => {
            *total.entry(ident.id).or_default() += 1;
            if matches!(e.ty, Type::Seq(_)) {
                seqs.insert(ident.id);
            }
        }
        ExprKind::App { func, args }
            if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Get)) && args.len() == 2 =>
        {
            if let ExprKind::Var { ident, .. } = &args[0].kind {
                *indexed.entry(ident.id).or_default() += 1;
            }
        }
        _ => {}
    });
    total
        .into_iter()
        .filter(|(id, n)| indexed.get(id) == Some(n) && seqs.contains(id))
        .map(|(id, _)| id)
        .collect()
}

/// Whether `value` is `create(n, |k| k)`: a sequence whose element `k` is `k` (of the count's
/// integer type).
pub fn is_iota(value: &Expr) -> bool {
    let ExprKind::App { func, args } = &value.kind else {
        return false;
    };
    if !matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Create)) || args.len() != 2 {
        return false;
    }
    match &args[1].kind {
        ExprKind::Lam { params, body } => {
            matches!((&params[..], &body.kind), ([p], ExprKind::Var { ident, .. }) if ident.id == p.ident.id)
        }
        _ => false,
    }
}

/// The offsets `c` of `g = |k| …`'s reads `r[k + c]` of each sequence `r` of `rows`, as
/// `(r, least c, greatest c)`, by the loops' one analysis of reads ([`super::loops::reads`]); a
/// sequence read at any other index, or at an offset past [`MAX_OFFSET`], is left out.
fn offsets(g: &Expr, rows: &[VarId]) -> Vec<(VarId, i64, i64)> {
    let mut found: BTreeMap<VarId, Option<(i64, i64)>> = BTreeMap::new();
    for r in super::loops::reads(g, 1).reads {
        if !rows.contains(&r.seq) {
            continue;
        }
        let entry = found.entry(r.seq).or_insert(Some((i64::MAX, i64::MIN)));
        let c = r.offset.filter(|c| (-MAX_OFFSET..=MAX_OFFSET).contains(c));
        *entry = match (*entry, c) {
            (Some((lo, hi)), Some(c)) => Some((lo.min(c), hi.max(c))),
            _ => None,
        };
    }
    found
        .into_iter()
        .filter_map(|(r, span)| span.map(|(lo, hi)| (r, lo, hi)))
        .collect()
}
