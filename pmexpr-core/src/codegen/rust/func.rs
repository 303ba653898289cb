//! Functions: calls of known functions (direct), of lambdas (inlined) and of function values
//! (boxed `Func`s, curried), and the clones a closure captures.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use super::{Arg, Binding, Callee, Gen};
use crate::ast::{Expr, ExprKind, Param, VarId};
use crate::types::Type;

impl Gen<'_> {
    /// Applies `func` to `args`; the result is an owned value of type `ty`.
    pub(super) fn call(&mut self, func: &Expr, args: Vec<Arg>, ty: &Type) -> TokenStream {
        match &func.kind {
            // Intrinsics are only ever applied, fully, to expressions of the program (see `mono`).
            ExprKind::Intrinsic(i) => {
                let exprs: Option<Vec<&Expr>> = args
                    .iter()
                    .map(|a| match a {
                        Arg::Expr(e) => Some(*e),
                        Arg::Src { .. } => None,
                    })
                    .collect();
                match exprs {
                    Some(es) if es.len() == i.arity() => self.intrinsic(*i, &es, ty),
                    _ => quote!(::core::compile_error!(
                        "internal error: an intrinsic applied to generated values"
                    )),
                }
            }
            ExprKind::Var { ident, .. }
                if self.tail_loop.as_ref().is_some_and(|(f, _)| *f == ident.id) =>
            {
                self.tail_call(&args)
            }
            ExprKind::Var { ident, .. } => match self.bindings.get(&ident.id).cloned() {
                Some(Binding::Closure { rust, params, .. }) => {
                    self.call_known(Callee::Closure(rust), &params, args)
                }
                Some(Binding::Item {
                    rust,
                    params,
                    extras,
                    owns,
                    ..
                }) => self.call_known(Callee::Item(rust, extras, owns), &params, args),
                _ => {
                    let f = self.arg(func);
                    self.call_func(f, args)
                }
            },
            ExprKind::Lam { params, body } if params.len() == args.len() => {
                let mut stmts = Vec::new();
                let mut scope = Vec::new();
                for (p, a) in params.iter().zip(&args) {
                    let x = self.local(p.ident.id);
                    let v = self.owned(a);
                    stmts.push(quote!(let #x = #v;));
                    scope.push((
                        p.ident.id,
                        Binding::Value {
                            by_ref: false,
                            ty: p.ty.clone(),
                        },
                    ));
                }
                let body = self.with_scope(scope, |g| g.value(body));
                quote!({ #(#stmts)* #body })
            }
            _ => {
                let f = self.value(func);
                let t = self.fresh("f");
                let call = self.call_func(quote!(#t), args);
                quote!({ let #t = #f; #call })
            }
        }
    }

    /// Calls a boxed function value (`Func`), one argument at a time.
    pub(super) fn call_func(&mut self, f: TokenStream, args: Vec<Arg>) -> TokenStream {
        let mut out = f;
        for a in &args {
            let v = self.owned(a);
            out = quote!((#out).call(#v));
        }
        out
    }

    /// Calls a known function of the given parameter types.
    fn call_known(&mut self, callee: Callee, params: &[Type], args: Vec<Arg>) -> TokenStream {
        let k = params.len();
        if args.len() < k {
            return self.func_from_known(callee, params, args);
        }
        let (now, later) = args.split_at(k);
        let passed: Vec<TokenStream> = now.iter().map(|a| self.hand(&callee, a)).collect();
        let direct = self.invoke(&callee, passed);
        self.call_func(direct, later.to_vec())
    }

    /// The argument in the form the callee's parameter takes: owned where it owns them.
    fn hand(&mut self, callee: &Callee, a: &Arg) -> TokenStream {
        match callee {
            Callee::Item(_, _, true) => self.owned(a),
            _ => self.pass(a),
        }
    }

    fn invoke(&mut self, callee: &Callee, mut passed: Vec<TokenStream>) -> TokenStream {
        match callee {
            Callee::Closure(f) => quote!(#f(#(#passed),*)),
            Callee::Item(f, extras, _) => {
                for (id, ty) in extras.clone() {
                    passed.push(self.var_arg(id, &ty));
                }
                if self.host.launchers.contains(&f.to_string()) {
                    passed.push(quote!(__pm_call));
                }
                let generics = self.generic_args();
                quote!(#f #generics (#(#passed),*))
            }
        }
    }

    /// A variable passed to a parameter of its type (lifted variables of `fn` items).
    fn var_arg(&mut self, id: VarId, ty: &Type) -> TokenStream {
        let x = self.local(id);
        match self.bindings.get(&id).cloned() {
            Some(Binding::Value { by_ref, .. }) => {
                if self.is_copy(ty) || by_ref {
                    quote!(#x)
                } else {
                    quote!(&#x)
                }
            }
            _ => {
                let v = self.var_value(id, ty);
                quote!(&(#v))
            }
        }
    }

    /// Boxes a known function, applied to `bound`, as a curried `Func` of its other parameters.
    pub(super) fn func_from_known(
        &mut self,
        callee: Callee,
        params: &[Type],
        bound: Vec<Arg>,
    ) -> TokenStream {
        let mut setup = Vec::new();
        let mut captured: Vec<proc_macro2::Ident> = Vec::new();
        let callee = match callee {
            Callee::Closure(f) => {
                let c = self.fresh("callee");
                setup.push(quote!(let #c = #f.clone();));
                captured.push(c.clone());
                Callee::Closure(c)
            }
            Callee::Item(f, extras, owns) => {
                for (id, ty) in &extras {
                    let x = self.local(*id);
                    let v = self.var_value(*id, ty);
                    setup.push(quote!(let #x = #v;));
                    captured.push(x);
                }
                Callee::Item(f, extras, owns)
            }
        };
        let mut args = Vec::new();
        for a in &bound {
            let t = self.fresh("bound");
            let v = self.owned(a);
            setup.push(quote!(let #t = #v;));
            captured.push(t.clone());
            args.push((t, a.ty().clone()));
        }
        let rest: Vec<Type> = params[bound.len()..].to_vec();
        // Inside the boxed closures the lifted variables are owned clones.
        let item_scope: Vec<(VarId, Binding)> = match &callee {
            Callee::Item(_, extras, _) => extras
                .iter()
                .map(|(id, ty)| {
                    (
                        *id,
                        Binding::Value {
                            by_ref: false,
                            ty: ty.clone(),
                        },
                    )
                })
                .collect(),
            Callee::Closure(_) => Vec::new(),
        };
        let body = self.with_scope(item_scope, |g| {
            g.curried(&callee, &rest, &mut args, &mut captured)
        });
        quote!({ #(#setup)* #body })
    }

    fn curried(
        &mut self,
        callee: &Callee,
        rest: &[Type],
        args: &mut Vec<(proc_macro2::Ident, Type)>,
        captured: &mut Vec<proc_macro2::Ident>,
    ) -> TokenStream {
        let Some((p, more)) = rest.split_first() else {
            let passed: Vec<TokenStream> = args
                .iter()
                .map(|(t, ty)| {
                    let a = Arg::Src {
                        tokens: quote!(#t),
                        ty: ty.clone(),
                        by_ref: false,
                        once: false,
                    };
                    self.hand(callee, &a)
                })
                .collect();
            return self.invoke(callee, passed);
        };
        let rt = self.rt.clone();
        let x = self.fresh("p");
        let pt = self.rty(p);
        let clones: Vec<TokenStream> = captured
            .iter()
            .map(|c| quote!(let #c = #c.clone();))
            .collect();
        args.push((x.clone(), p.clone()));
        captured.push(x.clone());
        let inner = self.curried(callee, more, args, captured);
        quote!({ #(#clones)* #rt::Func::new(move |#x: #pt| #inner) })
    }

    /// The variables a closure over `free` must capture: its free variables that are bound here,
    /// with each `fn` item replaced by the variables it was lifted over.
    pub(super) fn captures(&self, free: BTreeSet<VarId>) -> Vec<VarId> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<VarId> = free.into_iter().collect();
        let mut seen = BTreeSet::new();
        while let Some(id) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            match self.bindings.get(&id) {
                Some(Binding::Item { extras, .. }) => out.extend(extras.iter().map(|(x, _)| *x)),
                Some(_) => {
                    out.insert(id);
                }
                None => {}
            }
        }
        out.into_iter().collect()
    }

    /// Clones of captured variables before a `move` closure, and their bindings inside it.
    pub(super) fn capture_clones(
        &mut self,
        ids: &[VarId],
    ) -> (Vec<TokenStream>, Vec<(VarId, Binding)>) {
        let mut stmts = Vec::new();
        let mut scope = Vec::new();
        for &id in ids {
            let x = self.local(id);
            match self.bindings.get(&id).cloned() {
                Some(Binding::Value { ty, .. }) => {
                    if self.is_copy(&ty) {
                        stmts.push(quote!(let #x = #x;));
                    } else {
                        stmts.push(quote!(let #x = #x.clone();));
                    }
                    scope.push((id, Binding::Value { by_ref: false, ty }));
                }
                Some(b @ Binding::Closure { .. }) => {
                    stmts.push(quote!(let #x = #x.clone();));
                    scope.push((id, b));
                }
                _ => {}
            }
        }
        (stmts, scope)
    }

    /// A lambda as a boxed, curried `Func`.
    pub(super) fn func_from_lambda(&mut self, params: &[Param], body: &Expr) -> TokenStream {
        let lam = Expr::typed(
            ExprKind::Lam {
                params: params.to_vec(),
                body: Box::new(body.clone()),
            },
            body.span,
            Type::unit(),
        );
        let caps = self.captures(lam.free_vars());
        let (clones, scope) = self.capture_clones(&caps);
        let inner = self.with_scope(scope, |g| g.func_levels(params, body, &caps));
        quote!({ #(#clones)* #inner })
    }

    fn func_levels(&mut self, params: &[Param], body: &Expr, caps: &[VarId]) -> TokenStream {
        let rt = self.rt.clone();
        let Some((p, more)) = params.split_first() else {
            return self.value(body);
        };
        let x = self.local(p.ident.id);
        let pt = self.rty(&p.ty);
        let scope = vec![(
            p.ident.id,
            Binding::Value {
                by_ref: false,
                ty: p.ty.clone(),
            },
        )];
        let inner = self.with_scope(scope, |g| {
            if more.is_empty() {
                g.value(body)
            } else {
                // The next closure is created on every call: it gets its own clones.
                let mut ids: Vec<VarId> = caps.to_vec();
                ids.push(p.ident.id);
                let (clones, scope) = g.capture_clones(&ids);
                let next = g.with_scope(scope, |g| g.func_levels(more, body, &ids));
                quote!({ #(#clones)* #next })
            }
        });
        quote!(#rt::Func::new(move |#x: #pt| #inner))
    }
}
