//! Expressions as owned values or as arguments (by value or by reference), and the debug-mode
//! check of nested sequences.

use proc_macro2::TokenStream;
use quote::quote;

use super::code::{field_index, lit};
use super::{Arg, Binding, Callee, Gen, is_place};
use crate::ast::{Expr, ExprKind, NeverKind, VarId};
use crate::intrinsics::Intrinsic;
use crate::types::Type;

impl Gen<'_> {
    /// An owned value of the expression's type.
    pub(super) fn value(&mut self, e: &Expr) -> TokenStream {
        let rt = self.rt.clone();
        let site = self.site();
        match &e.kind {
            ExprKind::Var { ident, .. }
                if self.facts.moves.contains(&e.id)
                    && matches!(
                        self.bindings.get(&ident.id),
                        Some(Binding::Value { by_ref: false, .. })
                    ) =>
            {
                // Its last use: the value moves, so a write to it happens in place. A branch
                // that ends with a sequence written in place leaves it where it is
                // (`written_in_branches`).
                let x = self.local(ident.id);
                if self.branch_local.as_ref() == Some(&x) {
                    return quote!(());
                }
                quote!(#x)
            }
            ExprKind::Var { ident, .. } => self.var_value(ident.id, &e.ty),
            ExprKind::Lit(l) => lit(l, &e.ty, &rt),
            ExprKind::Lam { params, body } => self.func_from_lambda(params, body),
            ExprKind::App { func, args } => {
                if let Some(k) = self.launched_gemm(e) {
                    return self.launch_gemm(k, args);
                }
                let args: Vec<Arg> = args.iter().map(Arg::Expr).collect();
                self.call(func, args, &e.ty)
            }
            ExprKind::Let { .. } | ExprKind::RecLet { .. } => self.block_chain(e),
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => self.match_(e, scrutinee, pat, then, otherwise),
            // Typed, so that a `never!()` in any position (an operand, a receiver) type-checks.
            ExprKind::Never(NeverKind::User) => {
                let t = self.rty(&e.ty);
                quote!(#rt::rt::never::<#t>(#site))
            }
            ExprKind::Never(NeverKind::NoArm) => {
                let t = self.rty(&e.ty);
                quote!(#rt::rt::no_match::<#t>(#site))
            }
            ExprKind::Record(fs) => {
                let vs: Vec<TokenStream> = fs.iter().map(|(_, e)| self.value(e)).collect();
                quote!((#(#vs,)*))
            }
            ExprKind::Proj { expr, label } => {
                let idx = field_index(&expr.ty, label);
                if is_place(expr, &self.bindings) {
                    let base = self.arg(expr);
                    if self.is_copy(&e.ty) {
                        quote!((#base).#idx)
                    } else {
                        quote!((#base).#idx.clone())
                    }
                } else {
                    let base = self.value(expr);
                    quote!((#base).#idx)
                }
            }
            ExprKind::Seq(es) => {
                let elem = match &e.ty {
                    Type::Seq(a) => &**a,
                    _ => &e.ty,
                };
                let out = if es.is_empty() {
                    let et = self.rty(elem);
                    quote!(#rt::Seq::<'pm, #et>::empty())
                } else {
                    let vs: Vec<TokenStream> = es.iter().map(|e| self.value(e)).collect();
                    let et = self.rty(elem);
                    // What `vec!` expands to, without the macro: nested literals would count
                    // against rustc's macro recursion limit (128).
                    quote!(#rt::Seq::<'pm, #et>::from_vec(<[#et]>::into_vec(
                        ::std::boxed::Box::new([#(#vs),*])
                    )))
                };
                self.checked(out, &e.ty, "a sequence literal")
            }
            ExprKind::Keyword { kw, args } => self.keyword(e.id, *kw, args, &e.ty),
            ExprKind::Soac(s) => self.soac(e.id, s, &e.ty),
            ExprKind::Imp(_) => quote!(::core::compile_error!(
                "internal error: imperative syntax that was not lowered"
            )),
            ExprKind::Intrinsic(i) => {
                let name = i.name();
                quote!(::core::compile_error!(
                    concat!("internal error: unapplied intrinsic ", #name)
                ))
            }
        }
    }

    /// The expression as an argument: a value for `Copy` types, a reference otherwise.
    pub(super) fn arg(&mut self, e: &Expr) -> TokenStream {
        if self.is_copy(&e.ty) {
            return self.value(e);
        }
        let rt = self.rt.clone();
        let site = self.site();
        match &e.kind {
            ExprKind::Var { ident, .. } => match self.bindings.get(&ident.id).cloned() {
                Some(Binding::Value { by_ref: true, .. }) => {
                    let x = self.local(ident.id);
                    quote!(#x)
                }
                Some(Binding::Value { by_ref: false, .. }) => {
                    let x = self.local(ident.id);
                    match self.views.get(&x.to_string()) {
                        Some(view) => quote!(&#view),
                        None => quote!(&#x),
                    }
                }
                _ => {
                    let v = self.var_value(ident.id, &e.ty);
                    quote!(&(#v))
                }
            },
            ExprKind::Proj { expr, label } => {
                let idx = field_index(&expr.ty, label);
                let base = if is_place(expr, &self.bindings) {
                    self.arg(expr)
                } else {
                    self.value(expr)
                };
                quote!(&(#base).#idx)
            }
            ExprKind::App { func, args } if args.len() == 2 || args.len() == 1 => match func.kind {
                ExprKind::Intrinsic(Intrinsic::Get)
                    if let Some((part, j)) = self.slices.get(&args[1].id).cloned() =>
                {
                    quote!(&#part[#j])
                }
                ExprKind::Intrinsic(Intrinsic::Get) => {
                    let s = self.arg(&args[0]);
                    let i = self.index_value(&args[1]);
                    quote!(#rt::rt::get(#site, (#s).as_slice(), #i))
                }
                ExprKind::Intrinsic(Intrinsic::Head) => {
                    let s = self.arg(&args[0]);
                    quote!(#rt::rt::head(#site, (#s).as_slice()))
                }
                _ => {
                    let v = self.value(e);
                    quote!(&(#v))
                }
            },
            _ => {
                let v = self.value(e);
                quote!(&(#v))
            }
        }
    }

    pub(super) fn var_value(&mut self, id: VarId, ty: &Type) -> TokenStream {
        match self.bindings.get(&id).cloned() {
            Some(Binding::Value { .. }) => {
                let x = self.local(id);
                if self.is_copy(ty) {
                    quote!(#x)
                } else {
                    quote!(#x.clone())
                }
            }
            Some(Binding::Closure { rust, params, .. }) => {
                self.func_from_known(Callee::Closure(rust), &params, Vec::new())
            }
            Some(Binding::Item {
                rust,
                params,
                extras,
                owns,
                ..
            }) => self.func_from_known(Callee::Item(rust, extras, owns), &params, Vec::new()),
            None => {
                let name = self.names.get(id.0 as usize).cloned().unwrap_or_default();
                let msg = format!("internal error: `{name}` is not bound in generated code");
                quote!(::core::compile_error!(#msg))
            }
        }
    }

    /// The argument in the form a known function's parameter takes.
    pub(super) fn pass(&mut self, a: &Arg) -> TokenStream {
        match a {
            Arg::Expr(e) => self.arg(e),
            Arg::Src {
                tokens, ty, by_ref, ..
            } => match (self.is_copy(ty), by_ref) {
                (true, true) => quote!(*#tokens),
                (true, false) | (false, true) => quote!(#tokens),
                (false, false) => quote!(&#tokens),
            },
        }
    }

    /// The argument as an owned value.
    pub(super) fn owned(&mut self, a: &Arg) -> TokenStream {
        match a {
            Arg::Expr(e) => self.value(e),
            Arg::Src {
                tokens,
                ty,
                by_ref,
                once,
            } => match (self.is_copy(ty), by_ref, once) {
                (true, true, _) => quote!(*#tokens),
                (true, false, _) | (false, false, true) => quote!(#tokens),
                (false, _, _) => quote!(#tokens.clone()),
            },
        }
    }

    pub(super) fn checked(&mut self, tokens: TokenStream, ty: &Type, what: &str) -> TokenStream {
        if !ty.has_nested_seq() {
            return tokens;
        }
        let v = self.fresh("checked");
        let rt = &self.rt;
        let site = self.site();
        quote!({ let #v = #tokens; if B::CHECKS { #rt::check_regular(#site, #what, &#v); } #v })
    }
}
