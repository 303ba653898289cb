//! Bounds-check hoisting for loops ("windows"): a loop of `n` iterations whose body reads or
//! writes `t[e1, …, k, …]` — `t` and the other indices fixed for the loop (variables bound outside
//! it, literals; `t` may be a field of such a variable), `k` its loop variable — is versioned.
//! The other indices may also be wrapping `+ - *` of such variables and literals (`t[i - 1, k]`).
//! Before the loop the runtime takes the line `t[e1, …, 0..n, …]` once: a row when `k` is the
//! last index (`TensorRef::window`, a contiguous slice), a strided line otherwise
//! (`TensorRef::strided`). Both fail softly: `None` when the rank differs, another index is out
//! of range or `n` exceeds the dimension. When every line exists, and not in debug mode (which
//! records each access), the loop runs with `line.get(k)` / `line.set(k, v)`: a slice index
//! that the loop bound keeps in range, instead of the rank and per-dimension checks and offset
//! arithmetic of each access. A read may also index the line at `k ± c` (a stencil's
//! neighbours): `line.get_or(k ± c, …)` reads the line where that falls inside it and is the
//! checked access otherwise (an element beyond the line, or the failure as written). Otherwise
//! the loop runs as written, so that every failure is the same failure at the same access. Only
//! loops whose body contains no further parallel keyword or loop are versioned, so that the code
//! is at most doubled per loop.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use super::Gen;
use super::types::mentions_tensor;
use crate::ast::{Expr, ExprKind, Lit, NodeId};
use crate::infer::Numeric;
use crate::intrinsics::Intrinsic;
use crate::types::{TyVar, Type};

/// A tensor access that a window can serve.
pub(super) struct Access<'e> {
    /// The index expression `[e1, …, k]`'s node: how the access is recognized when the body is
    /// generated.
    pub(super) key: NodeId,
    /// The tensor, a variable bound outside the loop.
    pub(super) tensor: &'e Expr,
    /// The index; all but the loop variable are variables bound outside the loop, or literals.
    pub(super) index: &'e [Expr],
    /// Where the loop variable is in the index: the last dimension gives a row, another a
    /// strided line.
    pub(super) pos: usize,
    /// The index there is the loop variable plus this (a read of `t[i, k ± c]`): such a read goes
    /// through the line when it falls inside it, and is the checked access otherwise.
    pub(super) offset: i64,
    /// Whether it is a `tensor_set`.
    pub(super) write: bool,
}

/// The accesses of the loop function `f` (a lambda whose last parameter is the loop variable;
/// `arity` parameters in all) that windows can serve; empty when the loop is not versioned.
pub(super) fn windowed_accesses(f: &Expr, arity: usize) -> Vec<Access<'_>> {
    let ExprKind::Lam { params, body } = &f.kind else {
        return Vec::new();
    };
    if params.len() != arity {
        return Vec::new();
    }
    let k = params[arity - 1].ident.id;
    let free = f.free_vars();
    // Identifiers are unique after resolution: a variable free in `f` is bound outside the
    // loop wherever it occurs in the body, so it is fixed for the whole loop.
    let outside = |e: &Expr, ty: fn(&Type) -> bool| {
        matches!(&e.kind, ExprKind::Var { ident, .. } if free.contains(&ident.id)) && ty(&e.ty)
    };
    let mut nested = false;
    let mut out = Vec::new();
    body.walk(&mut |e| match &e.kind {
        ExprKind::Keyword { .. } => nested = true,
        ExprKind::App { func, args }
            if matches!(
                func.kind,
                ExprKind::Intrinsic(Intrinsic::TensorGet | Intrinsic::TensorSet)
            ) && args.len() >= 2 =>
        {
            let ExprKind::Seq(idx) = &args[1].kind else {
                return;
            };
            let is_k = |x: &Expr| matches!(&x.kind, ExprKind::Var { ident, .. } if ident.id == k);
            // `k`, `k + c`, `c + k`, `k - c` (a read only, unless `c` is 0).
            let offset = |x: &Expr| -> Option<i64> {
                if is_k(x) {
                    return Some(0);
                }
                let ExprKind::App { func, args } = &x.kind else {
                    return None;
                };
                let lit = |e: &Expr| match e.kind {
                    ExprKind::Lit(Lit::Int(c)) => Some(c),
                    _ => None,
                };
                match (&func.kind, &args[..]) {
                    (ExprKind::Intrinsic(Intrinsic::AddI), [a, b]) if is_k(a) => lit(b),
                    (ExprKind::Intrinsic(Intrinsic::AddI), [a, b]) if is_k(b) => lit(a),
                    (ExprKind::Intrinsic(Intrinsic::SubI), [a, b]) if is_k(a) => {
                        lit(b).and_then(i64::checked_neg)
                    }
                    _ => None,
                }
            };
            let read = matches!(func.kind, ExprKind::Intrinsic(Intrinsic::TensorGet));
            let int_outside = |x: &Expr| outside(x, |t| *t == Type::Int);
            let fixed = |x: &Expr| pure_fixed(x, &int_outside);
            let Some((pos, offset)) = idx
                .iter()
                .enumerate()
                .find_map(|(j, x)| offset(x).map(|o| (j, o)))
            else {
                return;
            };
            if offset != 0 && !read {
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
            if matches!(args[0].ty, Type::Tensor(_))
                && base_outside
                && others_fixed
                && args[1].id != NodeId::UNSET
            {
                out.push(Access {
                    key: args[1].id,
                    tensor: &args[0],
                    index: idx,
                    pos,
                    offset,
                    write: !read,
                });
            }
        }
        _ => {}
    });
    if nested { Vec::new() } else { out }
}

/// Fixed for a loop and computed without failing, so that it may be evaluated once before the
/// loop: an integer literal, a variable `outside` accepts (bound outside the loop), or wrapping
/// `+ - *` of those (`i - 1` in a stencil).
pub(super) fn pure_fixed(x: &Expr, outside: &dyn Fn(&Expr) -> bool) -> bool {
    match &x.kind {
        ExprKind::Lit(Lit::Int(_)) => true,
        ExprKind::App { func, args } => {
            matches!(
                func.kind,
                ExprKind::Intrinsic(Intrinsic::AddI | Intrinsic::SubI | Intrinsic::MulI)
            ) && args.iter().all(|a| pure_fixed(a, outside))
        }
        _ => outside(x),
    }
}

/// The line that serves a windowed access while a loop's fast version is generated.
#[derive(Clone)]
pub(super) struct Served {
    /// The variable holding the line.
    win: proc_macro2::Ident,
    /// Where the loop variable is in the index.
    pos: usize,
    /// The index there is the loop variable plus this.
    offset: i64,
    /// In a plain loop: the line is a slice of the chunk, indexed by this variable.
    plain: Option<proc_macro2::Ident>,
}

/// Whether a `par_loop` whose windowed accesses are `accesses` may run as a plain loop (see
/// `crate::access` in the runtime): every access is a row at the loop variable itself (each
/// iteration touches its own element of each row, so rows split by chunk), at least one writes,
/// and the body touches tensors in no other way and calls nothing but intrinsics (a closure
/// could touch a tensor it captured).
fn plain_eligible(f: &Expr, accesses: &[Access<'_>], numeric: &[(TyVar, Numeric)]) -> bool {
    let ExprKind::Lam { body, .. } = &f.kind else {
        return false;
    };
    if !accesses
        .iter()
        .all(|a| a.pos + 1 == a.index.len() && a.offset == 0)
    {
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
        let windowed = args.len() >= 2 && accesses.iter().any(|a| a.key == args[1].id);
        if windowed {
            writes |= *op == Intrinsic::TensorSet;
        } else if args.iter().any(|x| mentions_tensor(&x.ty, numeric)) {
            ok = false;
        }
    });
    ok && writes
}

/// How a windowed loop runs its iterations.
#[derive(Clone, Copy)]
pub(super) enum Run<'a> {
    /// In parallel, through the backend (`par_loop`); `plain`: it may get a plain version.
    Parallel { plain: bool },
    /// A grid's row segment, over columns from `0` or more up to `end` (`grid.rs`): the rows are
    /// cut at `end`.
    Segment { end: &'a proc_macro2::Ident },
    /// In order over `0..n` (`seq_loop`, `seq_loop_acc`): the rows are cut to `n`.
    Sequential,
}

impl Gen<'_> {
    /// A loop over `f` with `n` (a variable holding the count) iterations, versioned when `f`
    /// accesses tensors through windows; `generate` generates the loop (called once for the checked
    /// version and once with the windows in place), its rows cut where `run` knows the loop's
    /// end. A `par_loop` (`Run::Parallel { plain: true }`) whose accesses allow it gets a third
    /// version, tried first on the `cpu` target: the rows as plain slices (`plain_version`).
    pub(super) fn windowed_loop(
        &mut self,
        f: &Expr,
        arity: usize,
        n: &proc_macro2::Ident,
        run: Run<'_>,
        mut generate: impl FnMut(&mut Self) -> TokenStream,
    ) -> TokenStream {
        let plain = matches!(run, Run::Parallel { plain: true });
        // The CUDA host generator compiles loop bodies into kernels: they stay as written.
        let accesses = if self.cuda.is_none() {
            windowed_accesses(f, arity)
        } else {
            Vec::new()
        };
        if accesses.is_empty() {
            return generate(self);
        }
        let checked = generate(self);
        let mut wins = Vec::new();
        let mut makes = Vec::new();
        // Per line: whether an access writes it.
        let mut written = Vec::new();
        let mut keys = BTreeSet::new();
        // Lines by the text of the expression that takes them: the tensor and the fixed indices
        // are variables, literals and wrapping arithmetic, so the same text is the same line,
        // taken once (a stencil reads `src[i, j, ·]` at three offsets).
        let mut taken: Vec<(String, proc_macro2::Ident)> = Vec::new();
        let mut served = Vec::new();
        // The lines that are rows (`Window`s).
        let mut rows = Vec::new();
        for a in &accesses {
            let t = self.value(a.tensor);
            let make = if a.pos + 1 == a.index.len() {
                let lead: Vec<TokenStream> =
                    a.index[..a.pos].iter().map(|e| self.value(e)).collect();
                quote!((#t).window(&[#(#lead),*], #n))
            } else {
                let pos = a.pos;
                let index: Vec<TokenStream> = (a.index.iter().enumerate())
                    .map(|(j, e)| if j == pos { quote!(0) } else { self.value(e) })
                    .collect();
                quote!((#t).strided(&[#(#index),*], #pos, #n))
            };
            let text = make.to_string();
            let line = match taken.iter().position(|(m, _)| *m == text) {
                Some(i) => i,
                None => {
                    let w = self.fresh("win");
                    taken.push((text, w.clone()));
                    makes.push(make);
                    if a.pos + 1 == a.index.len() {
                        rows.push(w.clone());
                    }
                    wins.push(w);
                    written.push(false);
                    wins.len() - 1
                }
            };
            written[line] |= a.write;
            served.push((a.key, line, a.pos, a.offset));
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
        let fast = generate(self);
        // Before a loop over columns below a known end, each row cut there (it has at least that
        // many cells, but the compiler cannot see it through `window`): the compiler then sees
        // every access at the loop variable in range and drops its check (measured: the grid
        // stencil's six compares per element, the dense layer's dot product's two). A read at
        // `k + c` past the end takes the checked access.
        let end = match run {
            Run::Sequential => Some(quote!((#n).max(0))),
            Run::Segment { end } => Some(quote!(#end)),
            Run::Parallel { .. } => None,
        };
        let fast = match end {
            Some(end) => quote!({ #(let #rows = #rows.upto(#end);)* #fast }),
            None => fast,
        };
        let fast = if plain && plain_eligible(f, &accesses, &self.numeric) {
            let j = self.fresh("j");
            serve(self, Some(&j));
            let run = self.plain_version(f, n, &wins, &written, &j);
            quote!(if !(#run) { #fast })
        } else {
            fast
        };
        for key in keys {
            self.windows.remove(&key);
        }
        let all = self.fresh("wins");
        quote!({
            let #all = if B::CHECKS {
                ::core::option::Option::None
            } else {
                match (#(#makes,)*) {
                    (#(::core::option::Option::Some(#wins),)*) => ::core::option::Option::Some((#(#wins,)*)),
                    _ => ::core::option::Option::None,
                }
            };
            if let ::core::option::Option::Some((#(#wins,)*)) = #all { #fast } else { #checked }
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
        wins: &[proc_macro2::Ident],
        written: &[bool],
        j: &proc_macro2::Ident,
    ) -> TokenStream {
        let ExprKind::Lam { params, body } = &f.kind else {
            unreachable!("plain_eligible accepts lambdas only")
        };
        let rt = self.rt.clone();
        let (refs, mut scope) = self.move_captures(f);
        let k = &params[0].ident;
        let kx = self.local(k.id);
        scope.push((
            k.id,
            super::Binding::Value {
                by_ref: false,
                ty: Type::Int,
            },
        ));
        let b = self.with_scope(scope, |g| g.value(body));
        let (guard, lo, len) = (self.fresh("plain"), self.fresh("lo"), self.fresh("len"));
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
            match #rt::Plain::begin(B::PARALLEL) {
                ::core::option::Option::Some(#guard) => match unsafe { (#(#takes,)*) } {
                    (#(::core::option::Option::Some(#wins),)*) => {
                        #rt::plain_loop(#n, #nested, move |#lo: i64, #len: usize, #nested| {
                            #(#cuts)*
                            for #j in 0..#len {
                                let #kx: i64 = #lo + #j as i64;
                                #b;
                            }
                        });
                        true
                    }
                    _ => false,
                },
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
        let k = self.value(es.get(pos)?);
        if offset != 0 {
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

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    use super::windowed_accesses;
    use crate::ast::{Expr, ExprKind};
    use crate::intrinsics::Keyword;

    /// The number of windowed accesses of each loop of a site, outermost first.
    fn windowed(tokens: TokenStream) -> Vec<usize> {
        let mono = crate::compile_site(tokens).unwrap_or_else(|(e, _)| panic!("{}", e[0].text()));
        let mut out = Vec::new();
        mono.expr.walk(&mut |e: &Expr| {
            if let ExprKind::Keyword { kw, args } = &e.kind {
                let (f, arity) = match kw {
                    Keyword::ParLoop | Keyword::SeqLoop => (&args[1], 1),
                    Keyword::SeqLoopAcc => (&args[2], 2),
                    _ => return,
                };
                out.push(windowed_accesses(f, arity).len());
            }
        });
        out
    }

    #[test]
    fn rows_indexed_by_the_loop_variable_are_windowed() {
        // The dense layer: the inner loop reads w[i, k] and x[k]; the outer one is not
        // versioned (it contains a loop), so y[i] stays checked.
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
        // A literal leading index.
        let n = windowed(quote!(seq_loop(n, |k| tensor_set(t, [0, k], 1))));
        assert_eq!(n, vec![1]);
        // A tensor in a record (the nn example's layers), and a column (the loop variable
        // indexes the first dimension: a strided line).
        let n = windowed(quote!({
            let l = (t, u);
            seq_loop(n, |k| tensor_set(l.0, [0, k], tensor_get(l.1, [k, 0]) + 1))
        }));
        assert_eq!(n, vec![2]);
    }

    #[test]
    fn computed_rows_and_neighbours_are_windowed() {
        // Leading indices of wrapping arithmetic on fixed values, and reads at `k ± c`; a write
        // at `k + c` is not (it would need the same fallback for a store).
        let n = windowed(quote!(seq_loop(n, |k| {
            tensor_set(
                t,
                [c + 1, k],
                tensor_get(t, [c - 1, k + 1]) + tensor_get(t, [2 * c, k - 1]),
            );
            tensor_set(t, [c, k + 1], 0)
        })));
        assert_eq!(n, vec![3]);
    }

    #[test]
    fn other_accesses_are_not_windowed() {
        // An index computed from the loop variable, another index computed or bound in the
        // loop, the loop variable twice, a tensor bound in the loop, an index sequence that is
        // not written out.
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
        // A leading index that is a float variable does not type-check as an index at all, and
        // a captured integer does.
        let n = windowed(quote!(seq_loop(n, |k| tensor_set(t, [c, k], 0))));
        assert_eq!(n, vec![1]);
    }
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
        let code = generate_site(&mono, &quote!(::pmexpr::__private), false, None, None);
        syn::parse2::<syn::Expr>(code.clone()).expect("the expansion is a Rust expression");
        let code = code.to_string();
        // Two windows, taken unless in debug mode; the fast body reads through them and the
        // checked body is still there.
        assert_eq!(code.matches(". window (& [").count(), 2, "{code}");
        assert!(code.contains("if B :: CHECKS"), "{code}");
        assert_eq!(code.matches(". get (k_").count(), 2, "{code}");
        assert_eq!(code.matches("tensor_get (B :: CHECKS").count(), 2, "{code}");
        // The outer loop, which contains a loop, keeps its checked write.
        assert_eq!(code.matches("tensor_set (B :: CHECKS").count(), 1, "{code}");
        // The sequential loop's rows are cut to its count, once each.
        assert_eq!(code.matches(". upto (").count(), 2, "{code}");
    }
}
