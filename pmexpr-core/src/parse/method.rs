//! The Rust spellings of PMExpr functions: a method call whose function means the same
//! (`x.sqrt()` is `sqrt(x)`, `s.is_empty()` is `null(s)`; `s.len()` is Rust's `usize` length),
//! `x.abs()`, `x.min(y)` and `x.max(y)` as Rust means them on numbers, Rust's other numeric
//! methods (`x.clamp(a, b)`, `x.pow(n)` …: an intrinsic each), and `e as T` of a number or
//! `bool`. Other methods and casts are errors that name the PMExpr function to call instead.

use super::Parser;
use super::span::span;
use crate::ast::{Expr, ExprKind, Ident, Lit};
use crate::error::SpanRange;
use crate::intrinsics::{BinOp, Intrinsic};
use crate::node::{app, if_then_else, let_in, lit, mk, param, var};
use crate::types::Number;
use quote::ToTokens;

impl Parser<'_> {
    /// `x.sqrt()`, `s.len()` and the other methods whose PMExpr function means the same: the
    /// call of that function with the receiver first; `x.abs()`, `x.min(y)` and `x.max(y)` on
    /// numbers. Other methods are errors that name what to write instead.
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        let method = m.method.to_string();
        // The method's name to the closing parenthesis, without printing the receiver (a chain
        // of 10,000 calls printed itself once per call).
        let sp = SpanRange {
            start: m.method.span(),
            end: m.paren_token.span.close(),
        };
        let same = match method.as_str() {
            // Rust's length (a `usize` in Rust), not PMExpr's `length` (an `i64`).
            "len" => Some((Intrinsic::Len, 0)),
            "is_empty" => Some((Intrinsic::Null, 0)),
            "sqrt" => Some((Intrinsic::Sqrt, 0)),
            "exp" => Some((Intrinsic::Exp, 0)),
            "ln" => Some((Intrinsic::Log, 0)),
            "sin" => Some((Intrinsic::Sin, 0)),
            "cos" => Some((Intrinsic::Cos, 0)),
            "powf" => Some((Intrinsic::Pow, 1)),
            _ => None,
        };
        if let Some((f, arity)) = same
            && m.args.len() == arity
            && m.turbofish.is_none()
        {
            let mut args = vec![self.expr(&m.receiver)];
            args.extend(m.args.iter().map(|a| self.expr(a)));
            return app(mk(ExprKind::Intrinsic(f), span(&m.method)), args, sp);
        }
        if m.turbofish.is_none() {
            match (method.as_str(), m.args.len()) {
                // Of an integer or a float: the number type decides which, after inference.
                ("abs", 0) => {
                    let x = self.expr(&m.receiver);
                    let f = mk(ExprKind::Intrinsic(Intrinsic::NumAbs), span(&m.method));
                    return app(f, vec![x], sp);
                }
                ("min" | "max", 1) => return self.min_max(m, method == "min", sp),
                // Values do not change, so a copy of one is the value itself.
                ("clone" | "to_vec" | "to_owned", 0) => return self.expr(&m.receiver),
                ("swap", 2) => return self.swap(m, sp),
                ("fill", 1) => return self.fill(m, sp),
                _ => {}
            }
            // The other numeric methods (`x.count_ones()`, `x.floor()` …): an intrinsic each,
            // typed by `infer` (an integer or a float receiver) and printed by each generator
            // with Rust's result.
            if let Some(f) = Intrinsic::method_named(&method) {
                let arity = f.arity() - 1;
                if m.args.len() != arity {
                    return self.error_help(
                        sp,
                        format!(
                            "`.{method}()` takes {arity} argument{} besides its receiver, but {} {} supplied",
                            if arity == 1 { "" } else { "s" },
                            m.args.len(),
                            if m.args.len() == 1 { "was" } else { "were" }
                        ),
                        "as Rust's method of the same name",
                    );
                }
                let mut args = vec![self.expr(&m.receiver)];
                args.extend(m.args.iter().map(|a| self.expr(a)));
                return app(mk(ExprKind::Intrinsic(f), span(&m.method)), args, sp);
            }
        }
        let suggestion = match method.as_str() {
            "iter" | "into_iter" | "par_iter" | "map" => Some("map(f, s)"),
            "sum" | "fold" | "reduce" => Some("reduce(addi, 0, s)"),
            "concat" | "flatten" => Some("flatten(s)"),
            "rev" => Some("reverse(s)"),
            _ => None,
        };
        let message = format!("method calls are not PMExpr: `.{method}(…)`");
        match suggestion {
            Some(s) => self.error_help(sp, message, format!("write `{s}`")),
            None => self.error_help(
                sp,
                message,
                "call a PMExpr function instead, e.g. `length(s)`; `len` and `is_empty` on sequences, and Rust's numeric methods (`abs min max clamp signum pow isqrt rem_euclid ilog2 count_ones wrapping_add saturating_pow is_negative floor round powi sqrt atan2 mul_add copysign is_sign_negative` …, listed in the language reference, `pmexpr::language`) may be called as methods",
            ),
        }
    }

    /// `a.swap(i, j)` on a mutable local (or a part of one, `g[r].swap(i, j)`): the assignment
    /// `a = { let x = a[i]; let y = a[j]; set(set(a, i, y), j, x) }`, the indices evaluated
    /// once, first; both writes happen in place where `a`'s old version is not read again.
    fn swap(&mut self, m: &syn::ExprMethodCall, sp: SpanRange) -> Expr {
        let Some(place) = self.place(&m.receiver) else {
            return mk(ExprKind::Never(crate::ast::NeverKind::User), sp);
        };
        let (ie, je) = (self.expr(&m.args[0]), self.expr(&m.args[1]));
        let (i, j) = (
            self.fresh_ident("i", ie.span),
            self.fresh_ident("j", je.span),
        );
        let (x, y) = (self.fresh_ident("x", sp), self.fresh_ident("y", sp));
        let get = |p: &mut Self, k: &Ident| {
            let s = p.expr(&m.receiver);
            app(
                mk(ExprKind::Intrinsic(Intrinsic::Get), sp),
                vec![s, var(&k.name, sp)],
                sp,
            )
        };
        let (xe, ye) = (get(self, &i), get(self, &j));
        let s = self.expr(&m.receiver);
        let set = |s: Expr, k: &Ident, v: &Ident| {
            let f = mk(ExprKind::Intrinsic(Intrinsic::Set), sp);
            app(f, vec![s, var(&k.name, sp), var(&v.name, sp)], sp)
        };
        let swapped = set(set(s, &i, &y), &j, &x);
        let value = let_in(
            param(i, None),
            ie,
            let_in(
                param(j, None),
                je,
                let_in(
                    param(x, None),
                    xe,
                    let_in(param(y, None), ye, swapped, sp),
                    sp,
                ),
                sp,
            ),
            sp,
        );
        self.assign_to(place, value, sp)
    }

    /// `a.fill(v)` on a mutable local (or a part of one): `a = [v'; a.len()]`, `v` evaluated once.
    fn fill(&mut self, m: &syn::ExprMethodCall, sp: SpanRange) -> Expr {
        let Some(place) = self.place(&m.receiver) else {
            return mk(ExprKind::Never(crate::ast::NeverKind::User), sp);
        };
        let ve = self.expr(&m.args[0]);
        let v = self.fresh_ident("value", ve.span);
        let s = self.expr(&m.receiver);
        let len = app(mk(ExprKind::Intrinsic(Intrinsic::Length), sp), vec![s], sp);
        let each = mk(
            ExprKind::Lam {
                params: vec![param(Ident::new("_", sp), None)],
                body: Box::new(var(&v.name, sp)),
            },
            sp,
        );
        let filled = app(
            mk(ExprKind::Intrinsic(Intrinsic::Create), sp),
            vec![len, each],
            sp,
        );
        let value = let_in(param(v, None), ve, filled, sp);
        self.assign_to(place, value, sp)
    }

    /// `x.min(y)` and `x.max(y)` as Rust means them on integers and floats, including NaN (a
    /// NaN operand gives the other one): `{ let a = x; let b = y; if b != b || a < b { a }
    /// else { b } }` (`>` for `max`). `b != b` holds only for a NaN.
    fn min_max(&mut self, m: &syn::ExprMethodCall, min: bool, sp: SpanRange) -> Expr {
        let (x, y) = (self.expr(&m.receiver), self.expr(&m.args[0]));
        let (a, b) = (
            self.fresh_ident("lhs", x.span),
            self.fresh_ident("rhs", y.span),
        );
        let op = |op: BinOp, l: &Ident, r: &Ident| {
            let f = mk(
                ExprKind::Intrinsic(crate::intrinsics::operator(op).generic),
                sp,
            );
            app(f, vec![var(&l.name, sp), var(&r.name, sp)], sp)
        };
        let nan = op(BinOp::Ne, &b, &b);
        let better = op(if min { BinOp::Lt } else { BinOp::Gt }, &a, &b);
        let test = if_then_else(nan, lit(Lit::Bool(true), sp), better, sp);
        let pick = if_then_else(test, var(&a.name, sp), var(&b.name, sp), sp);
        let inner = let_in(param(b, None), y, pick, sp);
        let_in(param(a, None), x, inner, sp)
    }

    /// `e as T` of a number or a `bool` to a number `T`, with Rust's meaning on every target
    /// (`Intrinsic::As(T)`, printed `__as_u8` in the dumps): an integer truncates, sign- or
    /// zero-extends, a float to an integer truncates toward zero and saturates (NaN is 0), an
    /// integer to a float rounds to the nearest, `true` is 1. Rust casts nothing to `bool`.
    pub(super) fn cast(&mut self, c: &syn::ExprCast, sp: SpanRange) -> Expr {
        // A type from a `macro_rules!` fragment (`as $t`) arrives wrapped in a group.
        let mut ty = &*c.ty;
        while let syn::Type::Group(syn::TypeGroup { elem, .. })
        | syn::Type::Paren(syn::TypeParen { elem, .. }) = ty
        {
            ty = elem;
        }
        let target = match ty {
            syn::Type::Path(p) if p.qself.is_none() => p
                .path
                .get_ident()
                .and_then(|i| Number::from_rust_name(&i.to_string()))
                .and_then(Intrinsic::cast_to),
            _ => None,
        };
        let at = span(&c.as_token).to(span(&c.ty));
        let Some(f) = target else {
            return self.error_help(
                at,
                format!(
                    "`as {}` is not supported inside `accelerate!`",
                    c.ty.to_token_stream()
                ),
                format!(
                    "`as` converts numbers and bool to a number: {}",
                    Number::arithmetic_names("or")
                ),
            );
        };
        let x = self.expr(&c.expr);
        app(mk(ExprKind::Intrinsic(f), span(&c.as_token)), vec![x], sp)
    }
}
