//! A row over `ks = create(n, |k| k)` whose function reads rows bound outside it at `k + c`
//! (`c` a constant): Parboil stencil's innermost `map(|k| … r[k + 1] + r[k - 1] + left[k] …,
//! ks)`. Each read is bounds-checked, and LLVM keeps the checks in the loop: it does not know
//! that `ks[k] == k`, and where it does, a check that fails in the middle of the loop must
//! fail there. So the row is filled in three parts (`RowOut::fill_peeled`): `k` below `lo` and
//! from `hi` on as written, and `k` in `lo..hi`, where every read `r[k + c]` is in range
//! (`lo ≥ −c`, `hi ≤ length(r) − c`), over each `r` cut to `hi + max c`, so that LLVM sees the
//! reads in range and drops their checks. The function is the same in all three, each `k` is
//! computed once and in order, and a read out of range fails as it did (it lies outside
//! `lo..hi`, where nothing is cut).

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use super::Gen;
use crate::ast::{Expr, ExprKind, Lit, VarId};
use crate::intrinsics::Intrinsic;

/// The largest offset `c` of a read `r[k + c]` taken into account.
const MAX_OFFSET: i64 = 1 << 20;

/// Whether `value` is `create(n, |k| k)`: a sequence whose element `k` is `k`.
pub(super) fn is_iota(value: &Expr) -> bool {
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

/// The offsets `c` of `g = |k| …`'s reads `r[k + c]` of each row `r` of `rows`, as
/// `(row, least c, greatest c)`; a row read at any other index is left out.
fn offsets(g: &Expr, rows: &[VarId]) -> Vec<(VarId, i64, i64)> {
    let ExprKind::Lam { params, body } = &g.kind else {
        return Vec::new();
    };
    let [k] = &params[..] else {
        return Vec::new();
    };
    let k = k.ident.id;
    let is_k = |e: &Expr| matches!(&e.kind, ExprKind::Var { ident, .. } if ident.id == k);
    let lit = |e: &Expr| match e.kind {
        ExprKind::Lit(Lit::Int(c)) if c.abs() <= MAX_OFFSET => Some(c),
        _ => None,
    };
    let offset = |e: &Expr| -> Option<i64> {
        if is_k(e) {
            return Some(0);
        }
        let ExprKind::App { func, args } = &e.kind else {
            return None;
        };
        match (&func.kind, &args[..]) {
            (ExprKind::Intrinsic(Intrinsic::AddI), [a, b]) if is_k(a) => lit(b),
            (ExprKind::Intrinsic(Intrinsic::AddI), [a, b]) if is_k(b) => lit(a),
            (ExprKind::Intrinsic(Intrinsic::SubI), [a, b]) if is_k(a) => lit(b).map(|c| -c),
            _ => None,
        }
    };
    let mut found: BTreeMap<VarId, Option<(i64, i64)>> = BTreeMap::new();
    body.walk(&mut |e| {
        let ExprKind::App { func, args } = &e.kind else {
            return;
        };
        if !matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Get)) || args.len() != 2 {
            return;
        }
        let ExprKind::Var { ident, .. } = &args[0].kind else {
            return;
        };
        if !rows.contains(&ident.id) {
            return;
        }
        let entry = found.entry(ident.id).or_insert(Some((i64::MAX, i64::MIN)));
        *entry = match (*entry, offset(&args[1])) {
            (Some((lo, hi)), Some(c)) => Some((lo.min(c), hi.max(c))),
            _ => None,
        };
    });
    found
        .into_iter()
        .filter_map(|(r, span)| span.map(|(lo, hi)| (r, lo, hi)))
        .collect()
}

impl Gen<'_> {
    /// The fill of a row by `g` over the sequence `ks`, peeled as the module says, when `ks` is
    /// a `create(n, |k| k)` and `g` reads rows of `rows` (taken as slices already) at `k + c`.
    pub(super) fn peeled_fill(
        &mut self,
        ks: &Expr,
        g: &Expr,
        rows: &[VarId],
        row: &proc_macro2::Ident,
    ) -> Option<TokenStream> {
        match &ks.kind {
            ExprKind::Var { ident, .. } if self.iotas.contains(&ident.id) => {}
            _ => return None,
        }
        let reads = offsets(g, rows);
        if reads.is_empty() {
            return None;
        }
        let lo_min = reads.iter().map(|(_, c, _)| (-c).max(0)).max().unwrap_or(0) as usize;
        let (lo, hi) = (self.fresh("lo"), self.fresh("hi"));
        let mut limits = Vec::new();
        let mut cuts = Vec::new();
        let rt = self.rt.clone();
        for (r, _, c) in &reads {
            let x = self.local(*r);
            let above = c.max(&0).unsigned_abs() as usize;
            limits.push(quote!(.min((#x).as_slice().len().saturating_sub(#above))));
            cuts.push(quote!(let #x = #rt::SliceSeq(&(#x).as_slice()[..#hi + #above]);));
        }
        let ks = self.arg(ks);
        let elem = crate::types::Type::Int;
        let (pre, outer) = self.adaptor(g, &[(elem.clone(), true, false)]);
        let (pre2, inner) = self.adaptor(g, &[(elem, true, false)]);
        Some(quote!({
            let #lo: usize = #lo_min;
            let #hi: usize = (#ks).as_slice().len() #(#limits)*;
            let #lo: usize = #lo.min(#hi);
            #pre
            let __pm_outer = #outer;
            let __pm_inner = { #pre2 #(#cuts)* #inner };
            #row.fill_peeled(#lo, #hi, __pm_outer, __pm_inner);
        }))
    }
}
