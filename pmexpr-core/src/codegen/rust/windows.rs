//! Loops with their tensor accesses served by lines (the optimizer's [`crate::opt::loops`] says
//! which, and why that is sound): the loop is generated twice — as written, and with each
//! served access through the line that the runtime takes once before the loop — and the second
//! runs when every line exists and not in debug mode. A `par_loop` whose accesses allow it gets a
//! third version, tried first on the `cpu` target: the rows as plain slices.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use super::Gen;
use crate::ast::VarId;
use crate::ast::{Expr, ExprKind, NodeId};
use crate::intrinsics::Intrinsic;
use crate::opt::{Access, SeqRead};
use crate::types::Type;

/// The line that serves a windowed access while a loop's fast version is generated.
#[derive(Clone)]
pub(super) struct Served {
    /// The variable holding the line.
    win: proc_macro2::Ident,
    /// Where the loop variable is in the index.
    pos: usize,
    /// The index there is the loop variable plus this.
    offset: Option<i64>,
    /// In a plain loop: the line is a slice of the chunk, indexed by this variable.
    plain: Option<proc_macro2::Ident>,
}

/// How a windowed loop runs its iterations.
#[derive(Clone, Copy)]
pub(super) enum Run<'a> {
    /// In parallel, through the backend (`par_loop`).
    Parallel,
    /// A grid's row segment, over columns from `0` or more up to `end` (`grid.rs`): the rows are
    /// cut at `end`.
    Segment { end: &'a proc_macro2::Ident },
    /// In order over `0..n` (`seq_loop`, `seq_loop_acc`): the rows are cut to `n`.
    Sequential,
}

impl Gen<'_> {
    /// A loop over `f` with `n` (a variable holding the count) iterations, versioned when lines
    /// serve its `accesses` or one check proves its `reads` in range; `generate` generates the
    /// loop (called once for the checked version and once with the lines in place), its rows and
    /// read sequences cut where `run` knows the loop's end. With `plain` (a `par_loop` whose
    /// accesses allow it) it gets a third version, tried first on the `cpu` target: the rows and
    /// the read sequences as plain slices of each chunk (`plain_version`).
    pub(super) fn windowed_loop(
        &mut self,
        f: &Expr,
        (accesses, reads): (&[Access], &[SeqRead]),
        plain: bool,
        n: &proc_macro2::Ident,
        run: Run<'_>,
        mut generate: impl FnMut(&mut Self) -> TokenStream,
    ) -> TokenStream {
        // Reads alone gain only where the loop's end is in sight (a sequential loop, its sequences
        // cut to it) or in a plain loop (which needs lines).
        if accesses.is_empty() && (reads.is_empty() || !matches!(run, Run::Sequential)) {
            return generate(self);
        }
        let Some(parts) = access_parts(f, accesses) else {
            return generate(self);
        };
        let checked = generate(self);
        let mut wins = Vec::new();
        let mut makes = Vec::new();
        // Per line: whether an access writes it.
        let mut written = Vec::new();
        let mut keys = BTreeSet::new();
        let mut served = Vec::new();
        // The lines that are rows (`Window`s).
        let mut rows = Vec::new();
        for (a, (tensor, index)) in accesses.iter().zip(&parts) {
            if a.line == wins.len() {
                // The first access through this line: it is taken before the loop.
                let t = self.value(tensor);
                let make = if a.pos + 1 == index.len() {
                    let lead: Vec<TokenStream> =
                        index[..a.pos].iter().map(|e| self.index_value(e)).collect();
                    quote!((#t).window(&[#(#lead),*], #n))
                } else {
                    let pos = a.pos;
                    let index: Vec<TokenStream> = (index.iter().enumerate())
                        .map(|(j, e)| {
                            if j == pos {
                                quote!(0)
                            } else {
                                self.index_value(e)
                            }
                        })
                        .collect();
                    quote!((#t).strided(&[#(#index),*], #pos, #n))
                };
                let w = self.fresh("win");
                makes.push(make);
                if a.pos + 1 == index.len() {
                    rows.push(w.clone());
                }
                wins.push(w);
                written.push(false);
            }
            let Some(was) = written.get_mut(a.line) else {
                // Lines are numbered in order of first access (the optimizer's): never here.
                return checked;
            };
            *was |= a.write;
            served.push((a.key, a.line, a.pos, a.offset));
            keys.insert(a.key);
        }
        let serve = |gn: &mut Self, plain: Option<&proc_macro2::Ident>| {
            for &(key, line, pos, offset) in &served {
                let s = Served {
                    win: wins[line].clone(),
                    pos,
                    offset,
                    plain: plain.cloned(),
                };
                gn.windows.insert(key, s);
            }
        };
        serve(self, None);
        // Each read sequence, and the greatest `c` it is read at: one check before the loop.
        let mut seqs: Vec<(VarId, i64)> = Vec::new();
        for r in reads {
            match seqs.iter_mut().find(|(v, _)| *v == r.seq) {
                Some((_, c)) => *c = (*c).max(r.offset),
                None => seqs.push((r.seq, r.offset)),
            }
        }
        let rt = self.rt.clone();
        // A plain loop reads `s[k + c]` at the sum itself: where the count's type is narrower
        // than `i64`, only where `n - 1 + c` fits it (the program computes the index in that
        // type, wrapping). A sequential loop reads as written (its sequences cut).
        let k_ty = match &f.kind {
            ExprKind::Lam { params, .. } => params.last().map(|p| p.ty.clone()),
            _ => None,
        };
        let max_index = match k_ty {
            Some(t) if t != Type::INT && !seqs.is_empty() => {
                let t = self.rty(&t);
                Some(quote!(<#t as #rt::Int>::MAX_INDEX))
            }
            _ => None,
        };
        let in_range: Vec<TokenStream> = (seqs.iter())
            .map(|(v, c)| {
                let x = self.local(*v);
                let fits = max_index.as_ref().map(|m| {
                    quote!(&& (#n).saturating_sub(1).saturating_add(#c) <= #m)
                });
                let c = *c as u64;
                quote!(&& ((#x).as_slice().len() as u64) >= ((#n).max(0) as u64).saturating_add(#c) #fits)
            })
            .collect();
        let fast = generate(self);
        // A sequential loop's read sequences cut to what it reads: the compiler then sees every
        // read in range (`k + c < n + max c`) and drops its check.
        let fast = match run {
            Run::Sequential if !seqs.is_empty() => {
                let cuts = seqs.iter().map(|(v, c)| {
                    let x = self.local(*v);
                    let c = *c as usize;
                    quote!(let #x = #rt::SliceSeq(&(#x).as_slice()[..((#n).max(0) as usize) + #c]);)
                });
                quote!({ #(#cuts)* #fast })
            }
            _ => fast,
        };
        // Before a loop over columns below a known end, each row cut there (it has at least that
        // many cells, but the compiler cannot see it through `window`): the compiler then sees
        // every access at the loop variable in range and drops its check (measured: the grid
        // stencil's six compares per element, the dense layer's dot product's two). A read at
        // `k + c` past the end takes the checked access.
        let end = match run {
            Run::Sequential => Some(quote!((#n).max(0))),
            Run::Segment { end } => Some(quote!(#end)),
            Run::Parallel => None,
        };
        let fast = match end {
            Some(end) => quote!({ #(let #rows = #rows.upto(#end);)* #fast }),
            None => fast,
        };
        let fast = if plain && matches!(run, Run::Parallel) {
            let j = self.fresh("j");
            serve(self, Some(&j));
            let run = self.plain_version(f, n, (&wins, &written), reads, &j);
            quote!(if !(#run) { #fast })
        } else {
            fast
        };
        for key in keys {
            self.windows.remove(&key);
        }
        // One `let … else` per line, leaving a labelled block for the checked version: flat in
        // the number of lines (one tuple of a thousand windows, matched at once, took rustc's
        // borrow checker seconds).
        let all = self.fresh("wins");
        let label = self.fresh_label();
        let done = self.fresh("done");
        quote!({
            let #all = #label: {
                if B::CHECKS {
                    break #label (::core::option::Option::None);
                }
                #(let ::core::option::Option::Some(#wins) = #makes else {
                    break #label (::core::option::Option::None);
                };)*
                if !(true #(#in_range)*) {
                    break #label (::core::option::Option::None);
                }
                ::core::option::Option::Some(#fast)
            };
            match #all {
                ::core::option::Option::Some(#done) => #done,
                ::core::option::Option::None => #checked,
            }
        })
    }

    /// The plain version of a `par_loop` over `f` (a boolean expression: whether it ran): a
    /// guard on the lines' storages (`Plain::begin` is `None` but on the `cpu` target at a
    /// call's top level), the lines as slices (`None` where a storage is not this call's alone
    /// or two lines overlap), and `plain_loop` over chunks of them, the body indexing each
    /// chunk's slices by `j`. Nothing has run when it is `false`.
    fn plain_version(
        &mut self,
        f: &Expr,
        n: &proc_macro2::Ident,
        (wins, written): (&[proc_macro2::Ident], &[bool]),
        reads: &[SeqRead],
        j: &proc_macro2::Ident,
    ) -> TokenStream {
        let ExprKind::Lam { params, body } = &f.kind else {
            // The optimizer makes plain loops of lambdas only.
            return quote!(false);
        };
        // Each read sequence as one slice, and each (sequence, `c`) as a slice of each chunk
        // (`s[lo + c..][..len]`, in range by the check before the loop), read at `j`.
        let mut fulls: Vec<(VarId, proc_macro2::Ident)> = Vec::new();
        let mut parts: Vec<(VarId, i64, proc_macro2::Ident, proc_macro2::Ident)> = Vec::new();
        for r in reads {
            let full = match fulls.iter().find(|(v, _)| *v == r.seq) {
                Some((_, full)) => full.clone(),
                None => {
                    let full = self.fresh("full");
                    fulls.push((r.seq, full.clone()));
                    full
                }
            };
            let part = match parts
                .iter()
                .find(|(v, c, _, _)| *v == r.seq && *c == r.offset)
            {
                Some((_, _, p, _)) => p.clone(),
                None => {
                    let p = self.fresh("part");
                    parts.push((r.seq, r.offset, p.clone(), full));
                    p
                }
            };
            self.slices.insert(r.key, (part, j.clone()));
        }
        let rt = self.rt.clone();
        let (guard, lo, len) = (self.fresh("plain"), self.fresh("lo"), self.fresh("len"));
        let (refs, mut scope) = self.move_captures(f);
        let k = &params[0].ident;
        let kty = params[0].ty.clone();
        let k_of = self.position(&params[0], quote!(#lo + #j as i64));
        scope.push((
            k.id,
            super::Binding::Value {
                by_ref: false,
                ty: kty,
            },
        ));
        let b = self.with_scope(scope, |g| g.value(body));
        for r in reads {
            self.slices.remove(&r.key);
        }
        // Reads the optimizer peeled (one check does not cover them): in each chunk, the
        // iterations where every one is in range run a second body over slices of the chunk's
        // part (`positions.rs`), the rows cut to that part too; the others run `b`.
        let peel = self.facts.peeled.get(&f.id).cloned();
        let peeled = peel.and_then(|p| self.chunk(f, &p, n, None, Some(j)));
        let (peel_pre, run) = match peeled {
            None => (quote!(), quote!(for #j in 0..#len { #k_of #b; })),
            Some(c) => {
                let super::positions::Chunk {
                    pre,
                    a,
                    b: end,
                    lo: clo,
                    hi: chi,
                    cuts: parts_of,
                    k_of: fast_k,
                    value,
                    ..
                } = c;
                let rows: Vec<TokenStream> = (wins.iter().zip(written))
                    .map(|(w, &wr)| {
                        if wr {
                            quote!(let #w = &mut #w[__pm_pa..__pm_pb];)
                        } else {
                            quote!(let #w = &#w[__pm_pa..__pm_pb];)
                        }
                    })
                    .collect();
                let run = quote!(
                    let __pm_lo = #lo as usize;
                    let [__pm_x, __pm_y, __pm_z] = #rt::peel_parts(#n, #a, #end, __pm_lo, __pm_lo + #len);
                    for #j in __pm_x.start - __pm_lo..__pm_x.end - __pm_lo { #k_of #b; }
                    {
                        let (__pm_pa, __pm_pb) = (__pm_y.start - __pm_lo, __pm_y.end - __pm_lo);
                        #(#rows)*
                        let (#clo, #chi): (usize, usize) = (__pm_y.start, __pm_y.end);
                        #(#parts_of)*
                        for #j in 0..#chi - #clo { #fast_k #value; }
                    }
                    for #j in __pm_z.start - __pm_lo..__pm_z.end - __pm_lo { #k_of #b; }
                );
                (pre, run)
            }
        };

        let full_slices = fulls.iter().map(|(v, full)| {
            let x = self.local(*v);
            quote!(let #full = (#x).as_slice();)
        });
        let part_slices: Vec<TokenStream> = (parts.iter())
            .map(|(_, c, part, full)| {
                let c = *c as usize;
                quote!(let #part = &#full[(#lo as usize) + #c..][..#len];)
            })
            .collect();
        let takes: Vec<TokenStream> = (wins.iter().zip(written))
            .map(|(w, &wr)| {
                if wr {
                    quote!(#w.plain_mut(&#guard))
                } else {
                    quote!(#w.plain(&#guard))
                }
            })
            .collect();
        let cuts: Vec<TokenStream> = (wins.iter().zip(written))
            .map(|(w, &wr)| {
                // Slices of exactly the chunk's length: the compiler then knows every `w[j]` in
                // range and vectorizes the loop.
                if wr {
                    quote!(let #w = &mut #w[..#len];)
                } else {
                    quote!(let #w = &#w[..#len];)
                }
            })
            .collect();
        let nested = wins
            .iter()
            .rev()
            .fold(quote!(()), |acc, w| quote!((#w, #acc)));
        quote!({
            #(#refs)*
            #(#full_slices)*
            #peel_pre
            match #rt::Plain::begin(B::PARALLEL) {
                ::core::option::Option::Some(#guard) => {
                    // SAFETY: `Window::plain_mut`'s contract: the guard keeps every other call
                    // and `Tensor` method off these storages and the slices apart, and while the
                    // loop runs nothing of this call touches the rows but through the slices (the
                    // optimizer made the loop plain only where its body reaches tensors through
                    // these accesses alone).
                    #[allow(unsafe_code)]
                    let __pm_taken = unsafe { (#(#takes,)*) };
                    match __pm_taken {
                    (#(::core::option::Option::Some(#wins),)*) => {
                        #rt::plain_loop(#n, #nested, move |#lo: i64, #len: usize, #nested| {
                            #(#cuts)*
                            #(#part_slices)*
                            #run
                        });
                        true
                    }
                    _ => false,
                    }
                }
                ::core::option::Option::None => false,
            }
        })
    }

    /// `tensor_get` / `tensor_set` through a window, when the access at `idx` has one;
    /// `checked` generates the access as written (for a read at an offset that leaves the line).
    pub(super) fn window_access(
        &mut self,
        idx: &Expr,
        value: Option<&Expr>,
        checked: impl FnOnce(&mut Self) -> TokenStream,
    ) -> Option<TokenStream> {
        let Served {
            win: w,
            pos,
            offset,
            plain,
            ..
        } = self.windows.get(&idx.id)?.clone();
        let ExprKind::Seq(es) = &idx.kind else {
            return None;
        };
        if let Some(j) = plain {
            // A plain loop's slice of the chunk; the access is at the loop variable.
            return Some(match value {
                None => quote!(#w[#j]),
                Some(x) => {
                    let x = self.value(x);
                    quote!({
                        let v = #x;
                        #w[#j] = v;
                    })
                }
            });
        }
        let k = self.index_value(es.get(pos)?);
        if offset != Some(0) {
            // The index is pure (wrapping `k ± c`), so computing it twice changes nothing.
            let saved = self.windows.remove(&idx.id);
            let slow = checked(self);
            if let Some(saved) = saved {
                self.windows.insert(idx.id, saved);
            }
            return Some(quote!(#w.get_or(#k, || #slow)));
        }
        Some(match value {
            None => quote!(#w.get(#k)),
            Some(x) => {
                let x = self.value(x);
                quote!(#w.set(#k, #x))
            }
        })
    }
}

/// The tensor and the index of each access, found in the loop function `f` by its key; `None`
/// when one is not there.
fn access_parts<'e>(f: &'e Expr, accesses: &[Access]) -> Option<Vec<(&'e Expr, &'e [Expr])>> {
    let mut found: std::collections::HashMap<NodeId, (&'e Expr, &'e [Expr])> = Default::default();
    f.walk(&mut |e| {
        if let ExprKind::App { func, args } = &e.kind
            && matches!(
                func.kind,
                ExprKind::Intrinsic(Intrinsic::TensorGet | Intrinsic::TensorSet)
            )
            && args.len() >= 2
            && let ExprKind::Seq(idx) = &args[1].kind
        {
            found.insert(args[1].id, (&args[0], idx));
        }
    });
    accesses
        .iter()
        .map(|a| found.get(&a.key).copied())
        .collect()
}

#[cfg(test)]
mod generated {
    use quote::quote;

    use crate::codegen::rust::generate_site;

    #[test]
    fn windowed_loops_are_versioned() {
        let mono = crate::compile_site(quote!(par_loop(m, |i| tensor_set(
            y,
            [i],
            seq_loop_acc(0.0, n, |acc, k| acc
                + tensor_get(w, [i, k]) * tensor_get(x, [k]))
        ))))
        .unwrap_or_else(|(e, _)| panic!("{}", e[0].text()));
        let code = generate_site(
            &crate::opt::optimize(&mono),
            &quote!(::pmexpr::__private),
            false,
            None,
            None,
        );
        syn::parse2::<syn::Expr>(code.clone()).expect("the expansion is a Rust expression");
        let code = code.to_string();
        // Two windows, taken unless in debug mode; the fast body reads through them and the
        // checked body is still there.
        assert_eq!(code.matches(". window (& [").count(), 2, "{code}");
        assert!(code.contains("if B :: CHECKS"), "{code}");
        // (`k` has the type of the captured count `n`: the runtime's position is made from it.)
        assert_eq!(
            code.matches(". get (:: pmexpr :: __private :: Int :: to_index (k_")
                .count(),
            2,
            "{code}"
        );
        assert_eq!(code.matches("tensor_get (B :: CHECKS").count(), 2, "{code}");
        // The outer loop, which contains a loop, keeps its checked write.
        assert_eq!(code.matches("tensor_set (B :: CHECKS").count(), 1, "{code}");
        // The sequential loop's rows are cut to its count, once each.
        assert_eq!(code.matches(". upto (").count(), 2, "{code}");
    }
}
