//! The Rust spellings of PMExpr functions: a method call whose function means the same
//! (`x.sqrt()` is `sqrt(x)`, `s.len()` is `length(s)`), `x.abs()`, `x.min(y)` and `x.max(y)` as
//! Rust means them on numbers, and `e as f64` of an integer. Other methods and casts are errors
//! that name the PMExpr function to call instead.

use super::Parser;
use super::node::{app, if_then_else, let_in, lit, mk, param, var};
use super::span::span;
use crate::ast::{Expr, ExprKind, Ident, Lit};
use crate::error::SpanRange;
use crate::intrinsics::{BinOp, Intrinsic};

impl Parser<'_> {
    /// `x.sqrt()`, `s.len()` and the other methods whose PMExpr function means the same: the
    /// call of that function with the receiver first; `x.abs()`, `x.min(y)` and `x.max(y)` on
    /// numbers. Other methods are errors that name what to write instead.
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        let method = m.method.to_string();
        let sp = span(&m.method).to(span(m));
        let same = match method.as_str() {
            "len" => Some((Intrinsic::Length, 0)),
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
                _ => {}
            }
        }
        let suggestion = match method.as_str() {
            "floor" => Some("floorfi(x)"),
            "iter" | "into_iter" | "par_iter" | "map" => Some("map(f, s)"),
            "sum" | "fold" | "reduce" => Some("reduce(addi, 0, s)"),
            "concat" | "flatten" => Some("flatten(s)"),
            "rev" => Some("reverse(s)"),
            "clone" | "to_vec" | "to_owned" => Some("the value itself"),
            _ => None,
        };
        let message = format!("method calls are not PMExpr: `.{method}(…)`");
        match suggestion {
            Some(s) => self.error_help(sp, message, format!("write `{s}`")),
            None => self.error_help(
                sp,
                message,
                "call a PMExpr function instead, e.g. `length(s)`; `len`, `is_empty`, `sqrt`, `exp`, `ln`, `sin`, `cos`, `powf`, `abs`, `min` and `max` may be called as methods",
            ),
        }
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

    /// `e as f64` of an integer: `int2float(e)` as an `f64` (Rust's `as` rounds to the nearest
    /// float, as `int2float` does). Other casts are errors: PMExpr has no conversion between
    /// integer types, `as i64` truncates where `floorfi` rounds down, and an `f32` is a type
    /// that captured values give, not one an annotation names.
    pub(super) fn cast(&mut self, c: &syn::ExprCast, sp: SpanRange) -> Expr {
        let named = |name: &str| matches!(&*c.ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(name));
        let at = span(&c.as_token).to(span(&c.ty));
        if named("f32") {
            return self.error_help(
                at,
                "`as f32` is not supported inside `accelerate!`",
                "write `int2float(x)`: its result is the float type its use needs (`f32` beside captured `f32` values)",
            );
        }
        if !named("f64") {
            return self.error_help(
                at,
                "only `as f64` casts (of integers) are supported inside `accelerate!`",
                "a float to an integer is `floorfi(x)`, which rounds down (`as` rounds toward zero)",
            );
        }
        let ann = self.annotation(&c.ty);
        let x = self.expr(&c.expr);
        let conv = app(
            mk(ExprKind::Intrinsic(Intrinsic::Int2Float), span(&c.as_token)),
            vec![x],
            sp,
        );
        let r = self.fresh_ident("cast", sp);
        let_in(param(r.clone(), Some(ann)), conv, var(&r.name, sp), sp)
    }
}
