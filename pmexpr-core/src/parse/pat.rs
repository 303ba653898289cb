//! Patterns: names, `_`, literals, tuples and struct patterns; and number patterns in a `match`
//! (`0`, `1 | 2`, `lo..=hi`), which become the comparisons they mean so that every backend takes
//! them.

use syn::{Expr as SynExpr, Pat as SynPat, UnOp};

use super::Parser;
use super::span::span;
use crate::ast::{Expr, ExprKind, Ident, Lit, NeverKind, Pat, PatKind};
use crate::error::{Error, SpanRange};
use crate::intrinsics::BinOp;
use crate::node::{app, if_then_else, lit, mk, var};
use crate::record::field_name;
use crate::types::{Label, Type};

impl Parser<'_> {
    pub(super) fn pat(&mut self, p: &SynPat) -> Pat {
        if !self.enter(|| span(p)) {
            return Pat {
                kind: PatKind::Wild,
                span: SpanRange::call_site(),
                ty: Type::unit(),
            };
        }
        let out = self.pat_here(p);
        self.depth -= 1;
        out
    }

    fn pat_here(&mut self, p: &SynPat) -> Pat {
        let sp = span(p);
        let kind = match p {
            SynPat::Ident(i) => {
                if i.by_ref.is_some()
                    || (i.mutability.is_some() && !self.allow_mut)
                    || i.subpat.is_some()
                {
                    self.errors.push(
                        Error::new(sp, "patterns inside `accelerate!` bind plain names")
                            .help("PMExpr values are immutable: remove `ref`, `mut` or `@`"),
                    );
                }
                PatKind::Bind(Ident::new(field_name(&i.ident), span(&i.ident)))
            }
            SynPat::Wild(_) => PatKind::Wild,
            SynPat::Paren(p) => return self.pat(&p.pat),
            // Values are immutable, so `&x` matches what `x` does (`for &x in s.iter()`).
            SynPat::Reference(r) if r.mutability.is_none() => return self.pat(&r.pat),
            SynPat::Tuple(t) => PatKind::Record(
                t.elems
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (Label::Index(i as u32), self.pat(p)))
                    .collect(),
            ),
            SynPat::Struct(s) => self.struct_pattern(s),
            SynPat::Lit(l) => match self.literal(&l.lit, false, sp).kind {
                ExprKind::Lit(v) => PatKind::Lit(v),
                _ => PatKind::Wild,
            },
            _ => {
                self.errors.push(
                    Error::new(sp, "this pattern is not supported inside `accelerate!`").help(
                        "patterns may be names, `_`, literals, and tuples and records of these",
                    ),
                );
                PatKind::Wild
            }
        };
        Pat {
            kind,
            span: sp,
            ty: Type::unit(),
        }
    }

    /// The test of a number pattern on the scrutinee `x`: a literal is `x == lit`, `a | b` is
    /// either test, `lo..=hi` and `lo..hi` are the comparisons with their bounds. `None` for any
    /// other pattern (one that binds, a tuple, `_`, a `bool`).
    pub(super) fn number_test(&mut self, p: &SynPat, x: &Ident) -> Option<Expr> {
        if !self.enter(|| span(p)) {
            return Some(mk(ExprKind::Never(NeverKind::User), SpanRange::call_site()));
        }
        let out = self.number_test_here(p, x);
        self.depth -= 1;
        out
    }

    fn number_test_here(&mut self, p: &SynPat, x: &Ident) -> Option<Expr> {
        let sp = span(p);
        let op = |op: BinOp, rhs: Expr| {
            let f = mk(
                ExprKind::Intrinsic(crate::intrinsics::operator(op).generic),
                sp,
            );
            app(f, vec![var(&x.name, x.span), rhs], sp)
        };
        let number = |l: &syn::Lit| matches!(l, syn::Lit::Int(_) | syn::Lit::Float(_));
        let bound = |e: &SynExpr| match e {
            SynExpr::Lit(l) => number(&l.lit),
            SynExpr::Unary(u) => {
                matches!(u.op, UnOp::Neg(_))
                    && matches!(&*u.expr, SynExpr::Lit(l) if number(&l.lit))
            }
            _ => false,
        };
        match p {
            SynPat::Lit(l) if number(&l.lit) => {
                let v = self.literal(&l.lit, false, sp);
                Some(op(BinOp::Eq, v))
            }
            SynPat::Paren(q) => self.number_test(&q.pat, x),
            SynPat::Or(o) => {
                // Every case must be a number pattern; the tests are tried in order, as a
                // balanced tree of `||`s: as deep as the logarithm of the number of cases (a
                // pattern of any length is flat input).
                let tests: Option<Vec<Expr>> =
                    o.cases.iter().map(|c| self.number_test(c, x)).collect();
                let mut level = tests?;
                while level.len() > 1 {
                    let mut next = Vec::with_capacity(level.len().div_ceil(2));
                    let mut it = level.into_iter();
                    while let Some(a) = it.next() {
                        next.push(match it.next() {
                            Some(b) => if_then_else(a, lit(Lit::Bool(true), sp), b, sp),
                            None => a,
                        });
                    }
                    level = next;
                }
                level.pop()
            }
            SynPat::Range(r)
                if r.start.as_deref().is_none_or(bound) && r.end.as_deref().is_none_or(bound) =>
            {
                let lo = r.start.as_deref().map(|e| op(BinOp::Ge, self.expr(e)));
                let hi = r.end.as_deref().map(|e| {
                    let e = self.expr(e);
                    match r.limits {
                        syn::RangeLimits::Closed(_) => op(BinOp::Le, e),
                        syn::RangeLimits::HalfOpen(_) => op(BinOp::Lt, e),
                    }
                });
                match (lo, hi) {
                    (Some(a), Some(b)) => Some(if_then_else(a, b, lit(Lit::Bool(false), sp), sp)),
                    (Some(t), None) | (None, Some(t)) => Some(t),
                    (None, None) => None,
                }
            }
            _ => None,
        }
    }
}
