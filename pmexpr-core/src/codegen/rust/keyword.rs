//! The parallel keywords (`map`, `reduce`, `hist`, loops …) as calls of the backend or the runtime,
//! with fusion of `reduce` over `map`, and the adaptor closures that pass functions to them.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::result_type;
use super::windows::Run;
use super::{Arg, Binding, Gen};
use crate::ast::{Expr, ExprKind, NodeId, VarId};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::types::Type;

impl Gen<'_> {
    pub(super) fn keyword(
        &mut self,
        id: NodeId,
        kw: Keyword,
        args: &[Expr],
        ty: &Type,
    ) -> TokenStream {
        // A loop whose body calls let-bound closures is generated with the calls inlined.
        let body = match kw {
            Keyword::ParLoop | Keyword::SeqLoop => Some(1),
            Keyword::SeqLoopAcc => Some(2),
            _ => None,
        };
        if let Some(b) = body
            && self.cuda.is_none()
            && self.launched(kw, id).is_none()
            && let Some(f) = self.inline_calls(&args[b])
        {
            let mut args = args.to_vec();
            args[b] = f;
            return self.keyword(id, kw, &args, ty);
        }
        let rt = self.rt.clone();
        let site = self.site();
        let elem = |t: &Type| match t {
            Type::Seq(a) => (**a).clone(),
            other => other.clone(),
        };
        // The runtime may run these functions on several threads: they cannot launch.
        let parallel_fn = match kw {
            Keyword::Map | Keyword::Map2 | Keyword::Reduce | Keyword::Hist => Some(&args[0]),
            Keyword::ParLoop => Some(&args[1]),
            _ => None,
        };
        if let Some(f) = parallel_fn
            && self.launched(kw, id).is_none()
            && self.launches_in(f)
        {
            self.host_problem(|| {
                format!(
                    "its host code launches kernels inside the function of a `{}`, which the CUDA target does not run",
                    kw.name()
                )
            });
        }
        match kw {
            Keyword::Map => {
                if let Some(fill) = self.row_fill(id, args) {
                    return fill;
                }
                if let Some(rows) = self.map_of_rows(&args[0], &args[1]) {
                    return self.checked(rows, ty, "the result of `map`");
                }
                if let Some(fused) = self.map_over_create(&args[0], &args[1]) {
                    return self.checked(fused, ty, "the result of `map`");
                }
                if let Some(fused) = self.map_over_map(&args[0], &args[1]) {
                    return self.checked(fused, ty, "the result of `map`");
                }
                let s = self.arg(&args[1]);
                let (pre, f) = self.adaptor(&args[0], &[(elem(&args[1].ty), true, false)]);
                let out = quote!({ #pre B::map((#s).as_slice(), #f) });
                self.checked(out, ty, "the result of `map`")
            }
            Keyword::Map2 => {
                if let Some(fused) = self.map2_over_map(&args[0], &args[1], &args[2]) {
                    return self.checked(fused, ty, "the result of `map2`");
                }
                let a = self.arg(&args[1]);
                let b = self.arg(&args[2]);
                let (pre, f) = self.adaptor(
                    &args[0],
                    &[
                        (elem(&args[1].ty), true, false),
                        (elem(&args[2].ty), true, false),
                    ],
                );
                let out = quote!({ #pre B::map2(#site, (#a).as_slice(), (#b).as_slice(), #f) });
                self.checked(out, ty, "the result of `map2`")
            }
            Keyword::Reduce => {
                let name = self.operator_name(&args[0]);
                let ne = self.value(&args[1]);
                let acc = args[1].ty.clone();
                let (pre_op, op) =
                    self.adaptor(&args[0], &[(acc.clone(), false, true), (acc, false, true)]);
                // reduce(f, ne, map(g, s)) runs without building the mapped sequence.
                // Arguments are evaluated in the order they are written: f, ne, s.
                let nev = self.fresh("ne");
                if let Some(fused) =
                    self.reduce_over_create(&pre_op, &name, (&nev, ne.clone()), &op, &args[2])
                {
                    fused
                } else if let ExprKind::Keyword {
                    kw: Keyword::Map,
                    args: margs,
                } = &args[2].kind
                {
                    let s = self.arg(&margs[1]);
                    let (pre_g, g) = self.adaptor(&margs[0], &[(elem(&margs[1].ty), true, false)]);
                    // Debug mode checks the operator's laws on the mapped elements.
                    quote!({ #pre_op let #nev = #ne; #pre_g #rt::map_reduce::<B, _, _, _, _>(#site, #name, (#s).as_slice(), #nev, #g, #op) })
                } else if let ExprKind::Keyword {
                    kw: Keyword::Map2,
                    args: margs,
                } = &args[2].kind
                {
                    // reduce(f, ne, map2(g, a, b)) (a dot product) neither.
                    let a = self.arg(&margs[1]);
                    let b = self.arg(&margs[2]);
                    let (pre_g, g) = self.adaptor(
                        &margs[0],
                        &[
                            (elem(&margs[1].ty), true, false),
                            (elem(&margs[2].ty), true, false),
                        ],
                    );
                    quote!({ #pre_op let #nev = #ne; #pre_g #rt::map2_reduce::<B, _, _, _, _, _>(#site, #name, (#a).as_slice(), (#b).as_slice(), #nev, #g, #op) })
                } else {
                    let s = self.arg(&args[2]);
                    quote!({ #pre_op let #nev = #ne; #rt::reduce::<B, _, _>(#site, #name, (#s).as_slice(), #nev, #op) })
                }
            }
            Keyword::Flatten => {
                let s = self.arg(&args[0]);
                quote!(B::flatten((#s).as_slice()))
            }
            Keyword::Hist => {
                // Arguments are evaluated in the order they are written: f, ne, k, is, vs.
                let name = self.operator_name(&args[0]);
                let acc = args[1].ty.clone();
                let (pre_op, op) =
                    self.adaptor(&args[0], &[(acc.clone(), false, true), (acc, false, true)]);
                let ne = self.value(&args[1]);
                let k = self.value(&args[2]);
                let (nev, kv) = (self.fresh("ne"), self.fresh("k"));
                let (pre_i, n_i, index) = self.hist_producer(&args[3], true);
                let (pre_v, n_v, value) = self.hist_producer(&args[4], false);
                quote!({
                    #pre_op
                    let #nev = #ne;
                    let #kv: i64 = #k;
                    #pre_i
                    #pre_v
                    #rt::hist::<B, _, _, _, _, _, _>(#site, #name, #kv, #nev, #n_i, #n_v, #index, #value, #op)
                })
            }
            Keyword::ParLoop if let Some(k) = self.launched(kw, id) => self.launch(k, args),
            Keyword::ParLoop if let Some(grid) = self.grid_loop(&args[1]) => {
                let n = self.value(&args[0]);
                let (nv, wv) = (self.fresh("n"), self.fresh("w"));
                let w = self.value(grid.width);
                let rows = self.grid_par_loop(&grid, &nv, &wv);
                // Each `k / m` of a row's `let`s is the same along the row where `w` divides `m`.
                let divides: Vec<TokenStream> = (grid.divisors.iter())
                    .map(|m| {
                        let m = self.value(m);
                        quote!(&& (#m).wrapping_rem(#wv) == 0)
                    })
                    .collect();
                let run =
                    self.windowed_loop(&args[1], 1, &nv, Run::Parallel { plain: false }, |g| {
                        let (pre, f) = g.adaptor(&args[1], &[(Type::Int, false, true)]);
                        quote!({ #pre B::par_loop(#nv, #f) })
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
                let n = self.value(&args[0]);
                let nv = self.fresh("n");
                let run = if kw == Keyword::ParLoop {
                    quote!(B::par_loop)
                } else {
                    quote!(#rt::rt::seq_loop)
                };
                let how = if kw == Keyword::ParLoop {
                    Run::Parallel { plain: true }
                } else {
                    Run::Sequential
                };
                let run = self.windowed_loop(&args[1], 1, &nv, how, |g| {
                    let (pre, f) = g.adaptor(&args[1], &[(Type::Int, false, true)]);
                    quote!({ #pre #run(#nv, #f) })
                });
                quote!({ let #nv = #n; #run })
            }
            Keyword::SeqLoopAcc => {
                let acc = self.value(&args[0]);
                let n = self.value(&args[1]);
                let (accv, nv) = (self.fresh("acc"), self.fresh("n"));
                let run = self.windowed_loop(&args[2], 2, &nv, Run::Sequential, |g| {
                    let (pre, f) = g.adaptor(
                        &args[2],
                        &[(args[0].ty.clone(), false, true), (Type::Int, false, true)],
                    );
                    match g.settled_closure(&args[2], &args[0].ty) {
                        Some((pre_t, t)) => {
                            quote!({ #pre #pre_t #rt::rt::seq_loop_acc_until(#accv, #nv, #t, #f) })
                        }
                        None => quote!({ #pre #rt::rt::seq_loop_acc(#accv, #nv, #f) }),
                    }
                });
                quote!({ let #accv = #acc; let #nv = #n; #run })
            }
        }
    }

    /// A sequence argument of `hist` as the runtime takes it: statements to run first, its
    /// length (`usize`) and a closure from a range `lo..hi` of positions to an iterator over
    /// those elements (`i64`s for the indices). `map(g, s)` and `create(n, g)` are not built: the
    /// iterator applies `g` where it reads; neither is `flatten(rows)` (or a variable of
    /// `flat_rows`), whose rows are read in place.
    fn hist_producer(&mut self, e: &Expr, index: bool) -> (TokenStream, TokenStream, TokenStream) {
        let rt = self.rt.clone();
        let site = self.site();
        let (src, len) = (self.fresh("src"), self.fresh("len"));
        let g = self.fresh("g");
        let (lo, hi) = (format_ident!("__pm_lo"), format_ident!("__pm_hi"));
        let (pre, len_expr, iter) = match &e.kind {
            ExprKind::App { func, args: cargs }
                if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Create))
                    && cargs.len() == 2 =>
            {
                let n = self.value(&cargs[0]);
                let (pre_g, gf) = self.adaptor(&cargs[1], &[(Type::Int, false, true)]);
                (
                    quote!(
                        let #src: i64 = #n;
                        if #src < 0 {
                            #rt::Site::fail(#site, ::core::format_args!("create with negative length: {}", #src));
                        }
                        #pre_g
                        let #g = #gf;
                        let #g = &#g;
                    ),
                    quote!(#src as usize),
                    quote!((#lo..#hi).map(move |__pm_j: usize| #g(__pm_j as i64))),
                )
            }
            _ => {
                // The sequence read, and the function a `map` applies to its elements.
                let (s, mapped) = match &e.kind {
                    ExprKind::Keyword {
                        kw: Keyword::Map,
                        args: margs,
                    } => (&margs[1], Some(&margs[0])),
                    _ => (e, None),
                };
                let (pre_s, len_expr, read) = match self.flattened(s) {
                    Some(rows) => {
                        let r = self.arg(rows);
                        (
                            quote!(let #src = #r; let #src = (#src).as_slice();),
                            quote!(#rt::rt::flat_len(#src)),
                            quote!(#rt::rt::flat_range(#src, #lo, #hi)),
                        )
                    }
                    None => {
                        let a = self.arg(s);
                        (
                            quote!(let #src = #a; let #src = (#src).as_slice();),
                            quote!(#src.len()),
                            quote!(#src[#lo..#hi].iter()),
                        )
                    }
                };
                match mapped {
                    Some(f) => {
                        let elem = match &s.ty {
                            Type::Seq(a) => (**a).clone(),
                            t => t.clone(),
                        };
                        let (pre_g, gf) = self.adaptor(f, &[(elem, true, false)]);
                        (
                            quote!(#pre_g let #g = #gf; let #g = &#g; #pre_s),
                            len_expr,
                            quote!(#read.map(move |__pm_x| #g(__pm_x))),
                        )
                    }
                    None => (
                        pre_s,
                        len_expr,
                        quote!(#read.map(::core::clone::Clone::clone)),
                    ),
                }
            }
        };
        let iter = if index {
            quote!(#iter.map(::core::convert::Into::<i64>::into))
        } else {
            iter
        };
        (
            quote!(#pre let #len: usize = #len_expr;),
            quote!(#len),
            quote!(move |#lo: usize, #hi: usize| #iter),
        )
    }

    /// The rows of `e` when it is `flatten(rows)`, or a variable that holds the rows of one
    /// (`flat_rows`): what a `hist` reads in place.
    fn flattened<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        match &e.kind {
            ExprKind::Keyword {
                kw: Keyword::Flatten,
                args,
            } => Some(&args[0]),
            ExprKind::Var { ident, .. } if self.flat_rows.contains(&ident.id) => Some(e),
            _ => None,
        }
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
                            self.read_element(p, body, tokens)
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

    /// How debug mode's failures name `reduce`'s operator: the intrinsic or function it applies
    /// (`subi` is eta-expanded to `|a, b| subi(a, b)` by then), or `the closure`.
    fn operator_name(&self, f: &Expr) -> String {
        let named = |e: &Expr| match &e.kind {
            ExprKind::Intrinsic(i) => Some(format!("`{}`", i.name())),
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
