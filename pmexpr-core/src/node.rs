//! The PMExpr nodes the parser (`crate::parse`) builds from Rust syntax: variables, literals, applications, `let`,
//! and `if` as the `match` on `true` it means. Each takes the span of the syntax it stands for.
//! The lowering of imperative code (`crate::lower`) builds its nodes with them too.

use crate::ast::{Expr, ExprKind, Ident, Lit, Param, Pat, PatKind};
use crate::error::SpanRange;
use crate::types::{Annotation, Type};

pub(crate) fn mk(kind: ExprKind, span: SpanRange) -> Expr {
    Expr::new(kind, span)
}

pub(crate) fn var(name: &str, span: SpanRange) -> Expr {
    mk(
        ExprKind::Var {
            ident: Ident::new(name, span),
            inst: Vec::new(),
        },
        span,
    )
}

pub(crate) fn lit(l: Lit, span: SpanRange) -> Expr {
    mk(ExprKind::Lit(l), span)
}

pub(crate) fn app(func: Expr, args: Vec<Expr>, span: SpanRange) -> Expr {
    mk(
        ExprKind::App {
            func: Box::new(func),
            args,
        },
        span,
    )
}

pub(crate) fn if_then_else(cond: Expr, then: Expr, otherwise: Expr, span: SpanRange) -> Expr {
    let pat = Pat {
        kind: PatKind::Lit(Lit::Bool(true)),
        span: cond.span,
        ty: Type::BOOL,
    };
    mk(
        ExprKind::Match {
            scrutinee: Box::new(cond),
            pat,
            then: Box::new(then),
            otherwise: Box::new(otherwise),
        },
        span,
    )
}

pub(crate) fn param(ident: Ident, ann: Option<Annotation>) -> Param {
    Param {
        ident,
        ann,
        ty: Type::unit(),
    }
}

pub(crate) fn let_in(binder: Param, value: Expr, body: Expr, span: SpanRange) -> Expr {
    mk(
        ExprKind::Let {
            binder,
            value: Box::new(value),
            body: Box::new(body),
            scheme: Vec::new(),
        },
        span,
    )
}
