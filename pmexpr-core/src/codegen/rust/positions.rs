//! Inputs made from positions, and counted loops, whose function reads sequences at its variable
//! plus constants or plus or minus variables fixed for the loop, `s[k - 1]`, `s[k + w]` (the
//! optimizer's [`Facts::peeled`](crate::opt::Facts::peeled)): besides the function as written, a
//! second body over a chunk of positions `lo..hi` that takes each sequence's slice
//! `&s[lo + c..hi + c]` once and reads it at the chunk's own index, so that the compiler sees
//! every read in range and drops its check. The runtime (`Peeled`, `par_loop_peeled`,
//! `seq_loop_peeled`, `seq_loop_acc_peeled`, `peel_parts` in a plain loop) runs it for the
//! positions `a..b` where every read is in range — each offset `c` (a variable's value included)
//! computed once before the loop, in `i128` so that no bound overflows; `a` the greatest `-c`, `b`
//! the least `length(s) - c`, `n`, and, for a count of a narrower type than `i64`, the positions
//! whose `k + c` fits that type (the program computes the index there, wrapping) — and the
//! function as written for the others: a stencil's ends fail, or not, where they did.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::Gen;
use crate::ast::{Expr, ExprKind, Input, Param, VarId};
use crate::opt::loops::element_fn;
use crate::opt::{SeqRead, Shift};
use crate::types::Type;

/// The second reader of an input made from positions.
pub(super) struct Fast {
    /// The statements that compute its parts before the consumer runs: each sequence's slice,
    /// the bound `b`, the reader.
    pub pre: TokenStream,
    /// The variable holding the first position it reads (`i64`).
    pub a: Ident,
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
        let c = self.chunk(f, &reads, n, None, None)?;
        let (lo, hi, j, k_of, value) = (&c.lo, &c.hi, &c.j, &c.k_of, &c.value);
        let elements = quote!((0..#hi - #lo).map(move |#j: usize| { #k_of #value }));
        let reader = c.closure(quote!(), quote!(), elements);
        let (pre, a, b) = (&c.pre, c.a.clone(), c.b.clone());
        let read = self.fresh("fast");
        let pre = quote!(#pre let #read = #reader;);
        Some(Fast {
            pre,
            a,
            b,
            read,
            absorbed,
        })
    }

    /// A counted loop over `f` (`n: i64` iterations in the variable `n`) whose reads the
    /// optimizer peeled: the statements before it and the runtime's peeled loop — `par_loop`
    /// (`kind` [`Loop::Par`]), `seq_loop`, or `seq_loop_acc` from the accumulator in `acc` —
    /// the iterations where every read is in range through a chunk's slices, `slow` (the loop
    /// function as the runtime takes it) for the others. `None` when nothing was peeled.
    pub(super) fn peeled_loop(
        &mut self,
        f: &Expr,
        kind: Loop<'_>,
        n: &Ident,
        slow: &TokenStream,
    ) -> Option<TokenStream> {
        let reads = self.facts.peeled.get(&f.id)?.clone();
        let rt = self.rt.clone();
        let acc_param = match (&f.kind, &kind) {
            (ExprKind::Lam { params, .. }, Loop::Acc(..)) => Some(params.first()?),
            _ => None,
        };
        let accv = self.fresh("acc");
        let c = self.chunk(f, &reads, n, acc_param, None)?;
        let (pre, a, b, lo, hi, j) = (&c.pre, &c.a, &c.b, &c.lo, &c.hi, &c.j);
        let (k_of, value) = (&c.k_of, &c.value);
        let run = match kind {
            Loop::Par | Loop::Seq => {
                let call = match kind {
                    Loop::Par => quote!(B::par_loop_peeled),
                    _ => quote!(#rt::seq_loop_peeled),
                };
                let body = quote!(for #j in 0..#hi - #lo { #k_of #value; });
                let fast = c.closure(quote!(), quote!(), body);
                quote!({ #pre #call(#n, #a, #b, #slow, #fast) })
            }
            Loop::Acc(acc, ty) => {
                let px = self.local(acc_param?.ident.id);
                let t = self.rty(ty);
                let body = quote!(
                    let mut #accv = #accv;
                    for #j in 0..#hi - #lo {
                        #k_of
                        let #px: #t = #accv;
                        #accv = #value;
                    }
                    #accv
                );
                let fast = c.closure(quote!(#accv: #t,), quote!(-> #t), body);
                quote!({ #pre #rt::seq_loop_acc_peeled(#acc, #n, #a, #b, #slow, #fast) })
            }
        };
        Some(run)
    }

    /// `let k = …;`: the loop variable `k` of a chunk, of the count's type, from its position
    /// `pos` (an `i64` below the count, so that it converts exactly).
    pub(super) fn position(&mut self, k: &Param, pos: TokenStream) -> TokenStream {
        let kx = self.local(k.ident.id);
        if k.ty == Type::INT {
            quote!(let #kx: i64 = #pos;)
        } else {
            let (rt, t) = (&self.rt, self.rty(&k.ty));
            quote!(let #kx: #t = <#t as #rt::Int>::from_index(#pos);)
        }
    }

    /// The parts of a chunk of `f`'s iterations whose `reads` slices serve: `f`'s last parameter
    /// the position, `acc` (its first, of a loop with an accumulator) bound by value.
    pub(super) fn chunk(
        &mut self,
        f: &Expr,
        reads: &[SeqRead],
        n: &Ident,
        acc: Option<&Param>,
        j: Option<&Ident>,
    ) -> Option<Chunk> {
        let ExprKind::Lam { params, body } = &f.kind else {
            return None;
        };
        let k = params.last()?;
        let rt = self.rt.clone();
        // Each sequence: its slice; each distinct offset of a sequence (`c`, or `c ± w`): the
        // chunk's slice of it, and the variable holding the offset (`i128`, exact).
        // (In order of first read, found through maps: linear in the reads.)
        let mut seqs: Vec<(VarId, Ident)> = Vec::new();
        let mut parts: Vec<(VarId, i64, Option<Shift>, Ident, Ident)> = Vec::new();
        let mut seen: HashSet<VarId> = HashSet::new();
        let mut part_of: HashMap<(VarId, i64, Option<Shift>), Ident> = HashMap::new();
        let j = j.cloned().unwrap_or_else(|| self.fresh("j"));
        for r in reads {
            if seen.insert(r.seq) {
                seqs.push((r.seq, self.fresh("full")));
            }
            let part = match part_of.get(&(r.seq, r.offset, r.shift)) {
                Some(p) => p.clone(),
                None => {
                    let (p, off) = (self.fresh("part"), self.fresh("off"));
                    parts.push((r.seq, r.offset, r.shift, p.clone(), off));
                    part_of.insert((r.seq, r.offset, r.shift), p.clone());
                    p
                }
            };
            self.slices.insert(r.key, (part, j.clone()));
        }
        let (lo, hi) = (self.fresh("lo"), self.fresh("hi"));
        let (refs, mut scope) = self.move_captures(f);
        let k_of = self.position(k, quote!((#lo + #j) as i64));
        for p in acc.into_iter().chain([k]) {
            scope.push((
                p.ident.id,
                super::Binding::Value {
                    by_ref: false,
                    ty: p.ty.clone(),
                },
            ));
        }
        let value = self.with_scope(scope, |g| g.value(body));
        for r in reads {
            self.slices.remove(&r.key);
        }

        // Each offset, computed once before the loop: `w` as the runtime's index (`i64`), from
        // an occurrence of it in the body (found in one walk).
        let shifted: std::collections::HashSet<VarId> =
            parts.iter().filter_map(|p| p.2.map(|sh| sh.var)).collect();
        let mut occurs: std::collections::HashMap<VarId, &Expr> = Default::default();
        if !shifted.is_empty() {
            body.walk(&mut |x| {
                if let ExprKind::Var { ident, .. } = &x.kind
                    && shifted.contains(&ident.id)
                {
                    occurs.entry(ident.id).or_insert(x);
                }
            });
        }
        let offsets: Option<Vec<TokenStream>> = (parts.iter())
            .map(|(_, c, shift, _, off)| {
                let w = match shift {
                    None => quote!(),
                    Some(sh) => {
                        let w = self.index_value(occurs.get(&sh.var)?);
                        let sign = if sh.minus { quote!(-) } else { quote!(+) };
                        quote!(#sign ((#w) as i128))
                    }
                };
                Some(quote!(let #off: i128 = (#c as i128) #w;))
            })
            .collect();
        let offsets = offsets?;
        // Where `k + c` leaves the count's type (the program computes it in that type, wrapping):
        // the second reader reads the sum itself, so only below.
        let max_index = if k.ty == Type::INT {
            quote!(i64::MAX)
        } else {
            let t = self.rty(&k.ty);
            quote!(<#t as #rt::Int>::MAX_INDEX)
        };
        let fulls_by: HashMap<VarId, &Ident> = seqs.iter().map(|(v, f)| (*v, f)).collect();
        let full_of = |v: VarId| fulls_by.get(&v).copied();
        let fulls: Vec<TokenStream> = (seqs.iter())
            .map(|(v, full)| {
                let x = self.local(*v);
                quote!(let #full = (#x).as_slice();)
            })
            .collect();
        // The positions `a..b` where every read is in range and its index fits the count's type:
        // `k + off >= 0`, `k + off < length(s)`, `k + off <= MAX`.
        let starts = parts.iter().map(|(_, _, _, _, off)| quote!(.max(-#off)));
        let ends = parts.iter().map(|(v, _, _, _, off)| {
            let full = full_of(*v);
            quote!(.min(#full.len() as i128 - #off).min((#max_index) as i128 - #off + 1))
        });
        // A chunk's slice: in range where the chunk is inside `a..b` (the runtime calls the
        // reader there, or with an empty range, for which the start is clamped to the slice).
        let cuts: Vec<TokenStream> = (parts.iter())
            .map(|(v, _, _, part, off)| {
                let full = full_of(*v);
                quote!(let #part = &#full[((#lo as i128) + #off).clamp(0, #full.len() as i128) as usize..][..#hi - #lo];)
            })
            .collect();
        let (a, b) = (self.fresh("a"), self.fresh("b"));
        let bounds = quote!(
            let #a: i64 = 0_i128 #(#starts)* .min(#n as i128) as i64;
            let #b: i64 = (#n as i128) #(#ends)* .max(0) as i64;
        );
        Some(Chunk {
            pre: quote!(#(#fulls)* #(#offsets)* #bounds),
            a,
            b,
            refs,
            lo,
            hi,
            j,
            cuts,
            k_of,
            value,
        })
    }
}

impl Chunk {
    /// The `move` closure over a chunk `lo..hi`: `lead` parameters before the chunk's, `ret` its
    /// return type (or nothing), and `body` after the chunk's slices are taken.
    fn closure(&self, lead: TokenStream, ret: TokenStream, body: TokenStream) -> TokenStream {
        let (refs, lo, hi, cuts) = (&self.refs, &self.lo, &self.hi, &self.cuts);
        quote!({
            #(#refs)*
            move |#lead #lo: usize, #hi: usize| #ret { #(#cuts)* #body }
        })
    }
}

/// Which counted loop [`Gen::peeled_loop`] prints.
#[derive(Clone, Copy)]
pub(super) enum Loop<'a> {
    /// `par_loop`.
    Par,
    /// `seq_loop`.
    Seq,
    /// `seq_loop_acc` (a counted `foldl` too): the accumulator's start (an expression of
    /// generated code) and type.
    Acc(&'a TokenStream, &'a Type),
}

/// A chunk of a loop's iterations whose reads slices serve.
pub(super) struct Chunk {
    /// The statements before the loop: each sequence's slice, each offset, `a` and `b`.
    pub(super) pre: TokenStream,
    /// The variables holding the first iteration whose reads are all in range, and the end.
    pub(super) a: Ident,
    pub(super) b: Ident,
    /// What a `move` closure over the chunk needs first (references to what it borrows).
    pub(super) refs: Vec<TokenStream>,
    /// The chunk's range and its own index variables.
    pub(super) lo: Ident,
    pub(super) hi: Ident,
    pub(super) j: Ident,
    /// Each (sequence, offset)'s slice of the chunk.
    pub(super) cuts: Vec<TokenStream>,
    /// The loop variable, of the count's type, from the chunk's index.
    pub(super) k_of: TokenStream,
    /// The loop function's body, its reads through the slices.
    pub(super) value: TokenStream,
}
