//! A row fill that the optimizer peeled ([`crate::opt::rows`]): `k` below `lo` and from `hi` on
//! as written, and `k` in `lo..hi` over the sequences read at `k + c` cut to `hi + max c`, so
//! that LLVM sees those reads in range and drops their checks (`RowOut::fill_peeled`).

use proc_macro2::TokenStream;
use quote::quote;

use super::Gen;
use crate::ast::{Expr, VarId};

impl Gen<'_> {
    /// The fill of a row by `g` over `ks` (`create(n, |k| k)`), peeled for `reads`: each
    /// sequence (taken as a slice already) that `g` reads at `k + c`, with its least and greatest
    /// `c`.
    pub(super) fn peeled_fill(
        &mut self,
        ks: &Expr,
        g: &Expr,
        reads: &[(VarId, i64, i64)],
        row: &proc_macro2::Ident,
    ) -> TokenStream {
        let lo_min = reads.iter().map(|(_, c, _)| (-c).max(0)).max().unwrap_or(0) as usize;
        let (lo, hi) = (self.fresh("lo"), self.fresh("hi"));
        let mut limits = Vec::new();
        let mut cuts = Vec::new();
        let rt = self.rt.clone();
        for (r, _, c) in reads {
            let x = self.local(*r);
            let above = c.max(&0).unsigned_abs() as usize;
            limits.push(quote!(.min((#x).as_slice().len().saturating_sub(#above))));
            cuts.push(quote!(let #x = #rt::SliceSeq(&(#x).as_slice()[..#hi + #above]);));
        }
        // The positions' type: the count's.
        let elem = match &ks.ty {
            crate::types::Type::Seq(e) => (**e).clone(),
            t => t.clone(),
        };
        let ks = self.arg(ks);
        let (pre, outer) = self.adaptor(g, &[(elem.clone(), true, false)]);
        let (pre2, inner) = self.adaptor(g, &[(elem, true, false)]);
        quote!({
            let #lo: usize = #lo_min;
            let #hi: usize = (#ks).as_slice().len() #(#limits)*;
            let #lo: usize = #lo.min(#hi);
            #pre
            let __pm_outer = #outer;
            let __pm_inner = { #pre2 #(#cuts)* #inner };
            #row.fill_peeled(#lo, #hi, __pm_outer, __pm_inner);
        })
    }
}
