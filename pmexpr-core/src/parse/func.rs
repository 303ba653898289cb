//! Functions: `fn` items (a `#[pmexpr]` function, or one inside a block) and closures, with their
//! annotations; a parameter that is a pattern becomes a fresh variable matched against it.

use syn::Pat as SynPat;

use super::Parser;
use super::span::span;
use crate::ast::{Expr, ExprKind, FnDef, Ident, NeverKind, Param, Pat, PatKind};
use crate::error::SpanRange;
use crate::node::{let_in, mk, param, var};
use crate::record::field_name;
use crate::types::{Annotation, Type, TypeAnn};

impl Parser<'_> {
    pub(super) fn fn_item(&mut self, f: &syn::ItemFn) -> FnDef {
        // A `fn` inside a `fn` nests like a block inside a block.
        if !self.enter(|| span(&f.sig.ident)) {
            let sp = span(&f.sig.ident);
            return FnDef {
                ident: Ident::new(field_name(&f.sig.ident), sp),
                params: vec![param(Ident::new("_", sp), None)],
                ret: None,
                body: mk(ExprKind::Never(NeverKind::User), sp),
                span: sp,
                ty: Type::unit(),
                item: None,
            };
        }
        let out = self.fn_item_here(f);
        self.depth -= 1;
        out
    }

    fn fn_item_here(&mut self, f: &syn::ItemFn) -> FnDef {
        let sp = span(f);
        let sig = &f.sig;
        if !sig.generics.params.is_empty() {
            self.error_help(
                span(&sig.generics),
                "generic parameters are not needed inside `accelerate!`",
                "PMExpr functions are polymorphic by type inference: remove the generics",
            );
        }
        let mut params = Vec::new();
        let mut body = self.block(&f.block);
        let mut matches = Vec::new();
        let mut muts = Vec::new();
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(r) => {
                    self.error(
                        span(r),
                        "`self` parameters are not supported inside `accelerate!`",
                    );
                }
                syn::FnArg::Typed(t) => {
                    let ann = self.annotation(&t.ty);
                    muts.extend(self.mut_param(&t.pat));
                    let (p, m) = self.param_pat(&t.pat, Some(ann));
                    params.push(p);
                    matches.extend(m);
                }
            }
        }
        if params.is_empty() {
            params.push(param(
                Ident::new("_", span(&sig.ident)),
                Some(Annotation {
                    ann: TypeAnn::Tuple(vec![]),
                    span: span(&sig.ident),
                }),
            ));
        }
        body = self.mut_params(muts, body);
        for (x, pat) in matches.into_iter().rev() {
            let bsp = body.span;
            body = mk(
                ExprKind::Match {
                    scrutinee: Box::new(var(&x.name, x.span)),
                    pat,
                    then: Box::new(body),
                    otherwise: Box::new(mk(ExprKind::Never(NeverKind::NoArm), bsp)),
                },
                bsp,
            );
        }
        // As in Rust, no return type means `()`; `-> _` asks inference for it.
        let ret = match &sig.output {
            syn::ReturnType::Default => Some(Annotation {
                ann: TypeAnn::Tuple(vec![]),
                span: span(&sig.ident),
            }),
            syn::ReturnType::Type(_, t) => Some(self.annotation(t)),
        };
        let ident = Ident::new(field_name(&sig.ident), span(&sig.ident));
        FnDef {
            ident,
            params,
            ret,
            body,
            span: sp,
            ty: Type::unit(),
            item: None,
        }
    }

    /// A parameter pattern: a variable, or a fresh variable plus a pattern to match it against.
    fn param_pat(&mut self, p: &SynPat, ann: Option<Annotation>) -> (Param, Option<(Ident, Pat)>) {
        // `mut x` makes `x` a mutable local of the body (see `mut_params`).
        let pat = self.pat_mut(p).0;
        match pat.kind {
            PatKind::Bind(ident) => (param(ident, ann), None),
            PatKind::Wild => (param(Ident::new("_", pat.span), ann), None),
            _ => {
                let x = self.fresh_ident("arg", pat.span);
                (param(x.clone(), ann), Some((x, pat)))
            }
        }
    }

    pub(super) fn closure(&mut self, c: &syn::ExprClosure, sp: SpanRange) -> Expr {
        if let Some(a) = &c.asyncness {
            return self.error(span(a), "`async` closures are not PMExpr");
        }
        let mut params = Vec::new();
        let mut matches = Vec::new();
        let mut muts = Vec::new();
        for input in &c.inputs {
            let (pat, ann) = match input {
                SynPat::Type(t) => (&*t.pat, Some(self.annotation(&t.ty))),
                p => (p, None),
            };
            muts.extend(self.mut_param(pat));
            let (p, m) = self.param_pat(pat, ann);
            params.push(p);
            matches.extend(m);
        }
        if params.is_empty() {
            // `|| e` takes `()`, and `f()` passes it.
            params.push(param(
                Ident::new("_", sp),
                Some(Annotation {
                    ann: TypeAnn::Tuple(vec![]),
                    span: sp,
                }),
            ));
        }
        let mut body = self.expr(&c.body);
        body = self.mut_params(muts, body);
        for (x, pat) in matches.into_iter().rev() {
            let bsp = body.span;
            body = mk(
                ExprKind::Match {
                    scrutinee: Box::new(var(&x.name, x.span)),
                    pat,
                    then: Box::new(body),
                    otherwise: Box::new(mk(ExprKind::Never(NeverKind::NoArm), bsp)),
                },
                bsp,
            );
        }
        if let syn::ReturnType::Type(_, t) = &c.output {
            let ann = self.annotation(t);
            let r = self.fresh_ident("ret", ann.span);
            let bsp = body.span;
            body = let_in(param(r.clone(), Some(ann)), body, var(&r.name, bsp), bsp);
        }
        mk(
            ExprKind::Lam {
                params,
                body: Box::new(body),
            },
            sp,
        )
    }
}
