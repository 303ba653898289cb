//! Inputs made from positions whose element function reads sequences at the position plus
//! constants (the optimizer's [`Facts::peeled`](crate::opt::Facts::peeled)): besides the element
//! function as written, a second reader of a range of positions `lo..hi` that takes each
//! sequence's slice `&s[lo + c..hi + c]` once and reads it at the chunk's own index, so that the
//! compiler sees every read in range and drops its check. The runtime's `Peeled` calls it for the
//! positions `a..b` where every read is in range — `a` the greatest `-c`, `b` the least
//! `length(s) - c`, `n`, and, for a count of a narrower type than `i64`, the positions whose
//! `k + c` fits that type (the program computes the index there, wrapping) — and the element
//! function as written for the others: a stencil's ends fail, or not, where they did.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::Gen;
use crate::ast::{ExprKind, Input, VarId};
use crate::opt::loops::element_fn;
use crate::types::Type;

/// The second reader of an input made from positions.
pub(super) struct Fast {
    /// The statements that compute its parts before the consumer runs: each sequence's slice,
    /// the bound `b`, the reader.
    pub pre: TokenStream,
    /// The first position it reads (a constant: the greatest `-c`, at least 0).
    pub a: i64,
    /// The variable holding the end of the positions it reads (`i64`).
    pub b: Ident,
    /// The variable holding the reader: `move |lo: usize, hi: usize|` to an iterator over the
    /// elements of `lo..hi`.
    pub read: Ident,
    /// How many of the input's stages it stands for (the map over the positions it is).
    pub absorbed: usize,
}

impl Gen<'_> {
    /// The second reader of `input` (made from positions, `n: i64` of them in the variable `n`),
    /// when the optimizer found reads for slices to serve.
    pub(super) fn fast_reader(&mut self, input: &Input, n: &Ident) -> Option<Fast> {
        let (f, absorbed) = element_fn(input)?;
        let reads = self.facts.peeled.get(&f.id)?.clone();
        let ExprKind::Lam { params, body } = &f.kind else {
            return None;
        };
        let k = params.first()?;
        let rt = self.rt.clone();
        // Each sequence: its slice, and the least and greatest `c` it is read at; each
        // (sequence, `c`): the chunk's slice of it.
        let mut seqs: Vec<(VarId, Ident, i64, i64)> = Vec::new();
        let mut parts: Vec<(VarId, i64, Ident)> = Vec::new();
        let j = self.fresh("j");
        for r in &reads {
            match seqs.iter_mut().find(|s| s.0 == r.seq) {
                Some(s) => {
                    s.2 = s.2.min(r.offset);
                    s.3 = s.3.max(r.offset);
                }
                None => {
                    let full = self.fresh("full");
                    seqs.push((r.seq, full, r.offset, r.offset));
                }
            }
            let part = match parts.iter().find(|p| p.0 == r.seq && p.1 == r.offset) {
                Some(p) => p.2.clone(),
                None => {
                    let p = self.fresh("part");
                    parts.push((r.seq, r.offset, p.clone()));
                    p
                }
            };
            self.slices.insert(r.key, (part, j.clone()));
        }
        let (lo, hi) = (self.fresh("lo"), self.fresh("hi"));
        let (refs, mut scope) = self.move_captures(f);
        let kx = self.local(k.ident.id);
        // The position, of the count's type.
        let k_of = if k.ty == Type::Int {
            quote!(let #kx: i64 = (#lo + #j) as i64;)
        } else {
            let t = self.rty(&k.ty);
            quote!(let #kx: #t = <#t as #rt::Int>::from_index((#lo + #j) as i64);)
        };
        scope.push((
            k.ident.id,
            super::Binding::Value {
                by_ref: false,
                ty: k.ty.clone(),
            },
        ));
        let value = self.with_scope(scope, |g| g.value(body));
        for r in &reads {
            self.slices.remove(&r.key);
        }

        let a = (reads.iter())
            .map(|r| r.offset.checked_neg().unwrap_or(i64::MAX))
            .fold(0, i64::max);
        let b = self.fresh("b");
        // Where `k + c` leaves the count's type (the program computes it in that type, wrapping):
        // the second reader reads the sum itself, so only below.
        let max_index = if k.ty == Type::Int {
            quote!(i64::MAX)
        } else {
            let t = self.rty(&k.ty);
            quote!(<#t as #rt::Int>::MAX_INDEX)
        };
        let greatest = reads.iter().map(|r| r.offset).max().unwrap_or(0);
        let in_type = quote!(.min((#max_index).saturating_sub(#greatest).saturating_add(1)));
        let full_of = |v: VarId| seqs.iter().find(|s| s.0 == v).map(|s| s.1.clone());
        let fulls: Vec<TokenStream> = (seqs.iter())
            .map(|(v, full, _, _)| {
                let x = self.local(*v);
                quote!(let #full = (#x).as_slice();)
            })
            .collect();
        // Where the reads at the greatest `c` leave each sequence.
        let ends = seqs.iter().map(|(_, full, _, c)| {
            quote!(.min((#full.len() as i64).saturating_sub(#c)))
        });
        // A chunk's slice: in range where the chunk is inside `a..b` (the runtime calls the
        // reader there, or with an empty range, for which the start is clamped to the slice).
        let cuts = parts.iter().map(|(v, c, part)| {
            let full = full_of(*v);
            quote!(let #part = &#full[((#lo as i64).saturating_add(#c).max(0) as usize).min(#full.len())..][..#hi - #lo];)
        });
        let read = self.fresh("fast");
        let pre = quote!(
            #(#fulls)*
            let #b: i64 = #n #(#ends)* #in_type;
            let #read = {
                #(#refs)*
                move |#lo: usize, #hi: usize| {
                    #(#cuts)*
                    (0..#hi - #lo).map(move |#j: usize| { #k_of #value })
                }
            };
        );
        Some(Fast {
            pre,
            a,
            b,
            read,
            absorbed,
        })
    }
}
