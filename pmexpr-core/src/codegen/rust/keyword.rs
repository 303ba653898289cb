//! The parallel keywords as calls of the backend or the runtime: the loops (`par_loop`,
//! `seq_loop`, `seq_loop_acc`, with the facts the optimizer found about them), `flatten`, a map of
//! rows and its fill; the consumers of sequences go through [`super::soac`]. And the adaptor
//! closures that pass functions to them.

use proc_macro2::TokenStream;
use quote::quote;

use super::positions::Loop;
use super::types::result_type;
use super::windows::Run;
use super::{Arg, Binding, Gen};
use crate::ast::{Expr, ExprKind, NodeId, VarId};
use crate::intrinsics::Keyword;
use crate::opt::fuse;
use crate::types::Type;

impl Gen<'_> {
    pub(super) fn keyword(
        &mut self,
        id: NodeId,
        kw: Keyword,
        args: &[Expr],
        ty: &Type,
    ) -> TokenStream {
        let rt = self.rt.clone();
        match kw {
            Keyword::Map if let Some(fill) = self.row_fill(id, args) => fill,
            Keyword::Map if let Some(rows) = self.map_of_rows(id, &args[0], &args[1]) => {
                self.checked(rows, ty, "the result of `map`")
            }
            // The optimizer makes every other consumer a `Soac`; one that reaches here as a
            // keyword is printed as one all the same.
            Keyword::Map
            | Keyword::Map2
            | Keyword::Reduce
            | Keyword::Hist
            | Keyword::Scan
            | Keyword::Filter
            | Keyword::Scatter => {
                let mut e = Expr::typed(
                    ExprKind::Keyword {
                        kw,
                        args: args.to_vec(),
                    },
                    crate::error::SpanRange::call_site(),
                    ty.clone(),
                );
                e.id = id;
                match fuse::consumer(e) {
                    Expr {
                        kind: ExprKind::Soac(s),
                        ..
                    } => self.soac(id, &s, ty),
                    _ => quote!(::core::compile_error!(
                        "internal error: a consumer of sequences the optimizer does not make"
                    )),
                }
            }
            Keyword::Flatten => {
                let s = self.arg(&args[0]);
                quote!(B::flatten((#s).as_slice()))
            }
            Keyword::ParLoop if let Some(k) = self.launched(kw, id) => self.launch(k, args),
            Keyword::ParLoop
                if let Some(grid) = self.loop_facts(id).grid
                    && let Some(parts) = grid.parts(&args[1]) =>
            {
                // The count, the width and the divisors as `i64`, of whatever integer type they
                // are (the loop variable is positive and below the count: each converts exactly).
                let n = self.index_value(&args[0]);
                let ix = args[0].ty.clone();
                let (nv, wv) = (self.fresh("n"), self.fresh("w"));
                let w = self.index_value(parts.width);
                let rows = self.grid_par_loop(&args[1], &parts, &grid.row, &nv, &wv);
                // Each `k / m` of a row's `let`s is the same along the row where `w` divides `m`.
                let divides: Vec<TokenStream> = (parts.divisors.iter())
                    .map(|m| {
                        let m = self.index_value(m);
                        quote!(&& (#m).wrapping_rem(#wv) == 0)
                    })
                    .collect();
                let facts = self.loop_facts(id);
                let lines = (&facts.accesses[..], &facts.reads[..]);
                let run = self.windowed_loop(&args[1], lines, false, &nv, Run::Parallel, |g| {
                    let (pre, f) = g.index_adaptor(&args[1], &[], &ix);
                    match g.peeled_loop(&args[1], Loop::Par, &nv, &f) {
                        Some(run) => quote!({ #pre #run }),
                        None => quote!({ #pre B::par_loop(#nv, #f) }),
                    }
                });
                // Debug mode records the elements each iteration touches: it runs the loop as
                // written, as does a width that `k % w` would fail on or that gives negative
                // columns, and a divisor that is not a multiple of the width.
                quote!({
                    let #nv = #n;
                    let #wv: i64 = #w;
                    if !B::CHECKS && #wv > 0 #(#divides)* { #rows } else { #run }
                })
            }
            Keyword::ParLoop | Keyword::SeqLoop => {
                let n = self.index_value(&args[0]);
                let ix = args[0].ty.clone();
                let nv = self.fresh("n");
                let facts = self.loop_facts(id);
                let (run, how, kind) = if kw == Keyword::ParLoop {
                    (quote!(B::par_loop), Run::Parallel, Loop::Par)
                } else {
                    (quote!(#rt::rt::seq_loop), Run::Sequential, Loop::Seq)
                };
                let lines = (&facts.accesses[..], &facts.reads[..]);
                let run = self.windowed_loop(&args[1], lines, facts.plain, &nv, how, |g| {
                    let (pre, f) = g.index_adaptor(&args[1], &[], &ix);
                    match g.peeled_loop(&args[1], kind, &nv, &f) {
                        Some(run) => quote!({ #pre #run }),
                        None => quote!({ #pre #run(#nv, #f) }),
                    }
                });
                quote!({ let #nv = #n; #run })
            }
            Keyword::SeqLoopAcc => {
                let acc = self.value(&args[0]);
                let n = self.index_value(&args[1]);
                let ix = args[1].ty.clone();
                let (accv, nv) = (self.fresh("acc"), self.fresh("n"));
                let facts = self.loop_facts(id);
                let lines = (&facts.accesses[..], &facts.reads[..]);
                let settled = self.facts.settled.get(&id).cloned();
                let run = self.windowed_loop(&args[2], lines, false, &nv, Run::Sequential, |g| {
                    let (pre, f) =
                        g.index_adaptor(&args[2], &[(args[0].ty.clone(), false, true)], &ix);
                    match &settled {
                        Some(test) => {
                            let (pre_t, t) = g.adaptor(test, &[(args[0].ty.clone(), true, false)]);
                            quote!({ #pre #pre_t #rt::rt::seq_loop_acc_until(#accv, #nv, #t, #f) })
                        }
                        None => {
                            let acc = quote!(#accv);
                            match g.peeled_loop(&args[2], Loop::Acc(&acc, &args[0].ty), &nv, &f) {
                                Some(run) => quote!({ #pre #run }),
                                None => quote!({ #pre #rt::rt::seq_loop_acc(#accv, #nv, #f) }),
                            }
                        }
                    }
                });
                quote!({ let #accv = #acc; let #nv = #n; #run })
            }
        }
    }

    /// What the optimizer found about the loop `id` (nothing for host code of the GPU targets).
    fn loop_facts(&self, id: NodeId) -> crate::opt::LoopFacts {
        self.facts.loops.get(&id).cloned().unwrap_or_default()
    }

    /// What a `move` closure running `f`'s body needs before it (`let x = &x;` for what it must
    /// borrow) and the bindings inside it. `Copy` values (numbers, tensor views) are copied into
    /// the closure, so the compiler sees them as constant across iterations; everything else is
    /// moved in as a reference, made here.
    pub(super) fn move_captures(&mut self, f: &Expr) -> (Vec<TokenStream>, Vec<(VarId, Binding)>) {
        let mut refs = Vec::new();
        let mut scope = Vec::new();
        for id in self.captures(f.free_vars()) {
            match self.bindings.get(&id).cloned() {
                Some(Binding::Value { by_ref: false, ty }) if !self.is_copy(&ty) => {
                    let x = self.local(id);
                    refs.push(quote!(let #x = &#x;));
                    scope.push((id, Binding::Value { by_ref: true, ty }));
                }
                Some(Binding::Closure { rust, .. }) => refs.push(quote!(let #rust = &#rust;)),
                _ => {}
            }
        }
        (refs, scope)
    }

    /// The closure passed to the runtime for a function argument `f` that receives `incoming`
    /// arguments (type, whether by reference, whether used once). Returns the statements that
    /// must run before (partial arguments evaluated once) and the closure.
    pub(super) fn adaptor(
        &mut self,
        f: &Expr,
        incoming: &[(Type, bool, bool)],
    ) -> (TokenStream, TokenStream) {
        let mut params = Vec::new();
        let mut srcs = Vec::new();
        for (ty, by_ref, once) in incoming {
            let a = self.fresh("a");
            let t = self.rty(ty);
            params.push(if *by_ref {
                quote!(#a: &#t)
            } else {
                quote!(#a: #t)
            });
            srcs.push(Arg::Src {
                tokens: quote!(#a),
                ty: ty.clone(),
                by_ref: *by_ref,
                once: *once,
            });
        }
        let mut pre = Vec::new();
        let (mut refs, mut scope) = self.move_captures(f);
        let body = match &f.kind {
            ExprKind::Lam { params: lps, body } if lps.len() == srcs.len() => {
                let mut stmts = Vec::new();
                for (p, src) in lps.iter().zip(&srcs) {
                    let Arg::Src { tokens, by_ref, .. } = src else {
                        unreachable!()
                    };
                    let x = self.local(p.ident.id);
                    if self.is_copy(&p.ty) {
                        let v = if *by_ref {
                            quote!(*#tokens)
                        } else {
                            quote!(#tokens)
                        };
                        stmts.push(quote!(let #x = #v;));
                        scope.push((
                            p.ident.id,
                            Binding::Value {
                                by_ref: false,
                                ty: p.ty.clone(),
                            },
                        ));
                    } else {
                        stmts.push(quote!(let #x = #tokens;));
                        scope.push((
                            p.ident.id,
                            Binding::Value {
                                by_ref: *by_ref,
                                ty: p.ty.clone(),
                            },
                        ));
                    }
                }
                let b = self.with_scope(scope, |g| g.value(body));
                quote!({ #(#stmts)* #b })
            }
            ExprKind::App { func, args }
                if matches!(&func.kind, ExprKind::Var { ident, .. }
                if matches!(self.bindings.get(&ident.id), Some(Binding::Closure { .. } | Binding::Item { .. }))) =>
            {
                // A known function partially applied: its arguments are evaluated once, before.
                let mut all = Vec::new();
                for a in args {
                    if matches!(a.kind, ExprKind::Lit(_))
                        || (matches!(a.kind, ExprKind::Var { .. }) && self.is_copy(&a.ty))
                    {
                        all.push(Arg::Expr(a));
                    } else {
                        let h = self.fresh("hoisted");
                        let v = self.value(a);
                        pre.push(quote!(let #h = #v;));
                        let by_ref = !self.is_copy(&a.ty);
                        if by_ref {
                            refs.push(quote!(let #h = &#h;));
                        }
                        all.push(Arg::Src {
                            tokens: quote!(#h),
                            ty: a.ty.clone(),
                            by_ref,
                            once: false,
                        });
                    }
                }
                all.extend(srcs);
                let ret = result_type(&f.ty, incoming.len());
                self.with_scope(scope, |g| g.call(func, all, &ret))
            }
            ExprKind::Var { .. } => {
                let ret = result_type(&f.ty, incoming.len());
                self.with_scope(scope, |g| g.call(f, srcs, &ret))
            }
            _ => {
                let h = self.fresh("fun");
                let v = self.value(f);
                pre.push(quote!(let #h = #v;));
                refs.push(quote!(let #h = &#h;));
                self.call_func(quote!(#h), srcs)
            }
        };
        (
            quote!(#(#pre)*),
            quote!({ #(#refs)* move |#(#params),*| #body }),
        )
    }

    /// An index or a count `e` of any integer type as the runtime's `i64` (`rt::Int::to_index`:
    /// exact, or past every length), so that it is checked, and fails, as an `i64` one.
    pub(super) fn index_value(&mut self, e: &Expr) -> TokenStream {
        let v = self.value(e);
        if e.ty == Type::INT {
            v
        } else {
            let rt = &self.rt;
            quote!(#rt::Int::to_index(#v))
        }
    }

    /// [`Gen::adaptor`] for the function of a loop or of `create`, which takes `before` and then
    /// an index of type `ix` (the count's): a closure the runtime calls with `i64` positions, each
    /// converted to `ix` (`rt::Int::from_index`) where it is not `i64`.
    pub(super) fn index_adaptor(
        &mut self,
        f: &Expr,
        before: &[(Type, bool, bool)],
        ix: &Type,
    ) -> (TokenStream, TokenStream) {
        let mut incoming = before.to_vec();
        incoming.push((ix.clone(), false, true));
        let (pre, g) = self.adaptor(f, &incoming);
        if *ix == Type::INT {
            return (pre, g);
        }
        let rt = self.rt.clone();
        let t = self.rty(ix);
        let mut params = Vec::new();
        let mut passed = Vec::new();
        for (ty, by_ref, _) in before {
            let a = self.fresh("a");
            let ty = self.rty(ty);
            params.push(if *by_ref {
                quote!(#a: &#ty)
            } else {
                quote!(#a: #ty)
            });
            passed.push(quote!(#a));
        }
        let g = quote!({
            let __pm_g = #g;
            move |#(#params,)* __pm_i: i64| __pm_g(#(#passed,)* <#t as #rt::Int>::from_index(__pm_i))
        });
        (pre, g)
    }

    /// How debug mode's failures name `reduce`'s operator: the intrinsic or function it applies
    /// (`subi` is eta-expanded to `|a, b| subi(a, b)` by then), or `the closure` (also for the
    /// compiler's own intrinsics, such as the generic `-` of `|a: i8, b: i8| a - b`, which no
    /// user wrote by that name).
    pub(super) fn operator_name(&self, f: &Expr) -> String {
        let named = |e: &Expr| match &e.kind {
            ExprKind::Intrinsic(i) if !i.is_internal() => Some(format!("`{}`", i.name())),
            ExprKind::Var { ident, .. } => Some(format!("`{}`", ident.name)),
            _ => None,
        };
        if let Some(n) = named(f) {
            return n;
        }
        if let ExprKind::Lam { params, body } = &f.kind
            && let ExprKind::App { func, args } = &body.kind
            && args.len() == params.len()
            && args.iter().zip(params).all(
                |(a, p)| matches!(&a.kind, ExprKind::Var { ident, .. } if ident.id == p.ident.id),
            )
            && let Some(n) = named(func)
        {
            return n;
        }
        "the closure".into()
    }
}
