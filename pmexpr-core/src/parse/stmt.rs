//! Blocks and statements: a block is a chain of `let`s ending in its value; a run of `fn` items is
//! one recursive group, bound like a `let`; a `let` of a tuple or record pattern is a `match`.

use syn::{Pat as SynPat, Stmt};

use super::Parser;
use super::span::span;
use crate::ast::{Expr, ExprKind, Ident, Lit, NeverKind, PatKind};
use crate::error::SpanRange;
use crate::node::{let_in, lit, mk, param, var};

impl Parser<'_> {
    pub(super) fn block(&mut self, b: &syn::Block) -> Expr {
        // A run of consecutive `fn` items is one recursive group (mutual recursion allowed). Like a
        // `let`, the group sees what is bound above it and is visible below it.
        enum Step<'s> {
            Stmt(&'s Stmt),
            Fns(Vec<&'s syn::ItemFn>, SpanRange),
        }
        let mut steps: Vec<Step> = Vec::new();
        for s in &b.stmts {
            match s {
                Stmt::Item(syn::Item::Fn(f)) => match steps.last_mut() {
                    Some(Step::Fns(run, sp)) => {
                        run.push(f);
                        *sp = sp.to(span(f));
                    }
                    _ => steps.push(Step::Fns(vec![f], span(f))),
                },
                Stmt::Item(item) => {
                    self.error(
                        span(item),
                        "only `fn` items are supported inside `accelerate!`",
                    );
                }
                other => steps.push(Step::Stmt(other)),
            }
        }
        let (mut body, init) = match steps.last() {
            Some(Step::Stmt(Stmt::Expr(e, None))) => (self.expr(e), &steps[..steps.len() - 1]),
            Some(Step::Stmt(Stmt::Macro(m))) if m.semi_token.is_none() => {
                (self.macro_expr(&m.mac, span(m)), &steps[..steps.len() - 1])
            }
            _ => (
                lit(Lit::Unit, SpanRange::single(b.brace_token.span.close())),
                &steps[..],
            ),
        };
        for step in init.iter().rev() {
            body = match step {
                Step::Stmt(s) => self.stmt(s, body),
                Step::Fns(run, sp) => {
                    let fns = run.iter().map(|f| self.fn_item(f)).collect();
                    let whole = sp.to(body.span);
                    mk(
                        ExprKind::RecLet {
                            fns,
                            body: Box::new(body),
                            scheme: Vec::new(),
                        },
                        whole,
                    )
                }
            };
        }
        body
    }

    fn stmt(&mut self, s: &Stmt, rest: Expr) -> Expr {
        let sp = span(s).to(rest.span);
        match s {
            Stmt::Local(l) => {
                let Some(init) = &l.init else {
                    self.error_help(
                        span(l),
                        "a `let` needs a value inside `accelerate!`",
                        "write `let x = …;`",
                    );
                    return rest;
                };
                if let Some((else_token, _)) = &init.diverge {
                    self.error(
                        span(else_token),
                        "`let … else` is not supported inside `accelerate!`",
                    );
                    return rest;
                }
                let value = self.expr(&init.expr);
                let mut muts = Vec::new();
                super::imperative::mut_names(&l.pat, &mut muts);
                if !muts.is_empty() {
                    return self.let_mut(&l.pat, value, rest, sp);
                }
                self.bind_pattern(&l.pat, value, rest, sp)
            }
            Stmt::Expr(e, _) => {
                let value = self.expr(e);
                let_in(param(Ident::new("_", value.span), None), value, rest, sp)
            }
            Stmt::Macro(m) => {
                let value = self.macro_expr(&m.mac, span(m));
                let_in(param(Ident::new("_", value.span), None), value, rest, sp)
            }
            Stmt::Item(_) => rest,
        }
    }

    /// `let pat = value; rest`: a `let` for a variable, a `match` for a tuple pattern.
    fn bind_pattern(&mut self, pat: &SynPat, value: Expr, rest: Expr, sp: SpanRange) -> Expr {
        let (pat, ann) = match pat {
            SynPat::Type(t) => (&*t.pat, Some(self.annotation(&t.ty))),
            p => (p, None),
        };
        let pat = self.pat(pat);
        match pat.kind {
            PatKind::Bind(ident) => let_in(param(ident, ann), value, rest, sp),
            PatKind::Wild => let_in(param(Ident::new("_", pat.span), ann), value, rest, sp),
            _ => {
                let value = match ann {
                    Some(ann) => {
                        let x = self.fresh_ident("ascribed", value.span);
                        let vsp = value.span;
                        let_in(param(x.clone(), Some(ann)), value, var(&x.name, vsp), vsp)
                    }
                    None => value,
                };
                mk(
                    ExprKind::Match {
                        scrutinee: Box::new(value),
                        pat,
                        then: Box::new(rest),
                        otherwise: Box::new(mk(ExprKind::Never(NeverKind::NoArm), sp)),
                    },
                    sp,
                )
            }
        }
    }
}
