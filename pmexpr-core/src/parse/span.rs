//! Spans: where a `syn` node is, as the [`SpanRange`] its errors point at. An expression's span
//! comes from its first and last tokens, found without printing its subtree.

use syn::Expr as SynExpr;

use crate::error::SpanRange;

pub(super) fn span(node: &impl quote::ToTokens) -> SpanRange {
    SpanRange::of(node)
}

/// The span of an expression from its first and last tokens, found without printing the whole
/// subtree (which made every node cost its size, and nesting quadratic); rare forms fall back to
/// printing.
pub(super) fn expr_span(e: &SynExpr) -> SpanRange {
    SpanRange {
        start: first_token(e),
        end: last_token(e),
    }
}

pub(super) fn first_token(e: &SynExpr) -> proc_macro2::Span {
    let mut e = e;
    loop {
        e = match e {
            SynExpr::Binary(b) if b.attrs.is_empty() => &b.left,
            SynExpr::Call(c) if c.attrs.is_empty() => &c.func,
            SynExpr::MethodCall(m) if m.attrs.is_empty() => &m.receiver,
            SynExpr::Field(f) if f.attrs.is_empty() => &f.base,
            SynExpr::Index(i) if i.attrs.is_empty() => &i.expr,
            SynExpr::Cast(c) if c.attrs.is_empty() => &c.expr,
            SynExpr::Paren(p) if p.attrs.is_empty() => return p.paren_token.span.open(),
            SynExpr::Tuple(t) if t.attrs.is_empty() => return t.paren_token.span.open(),
            SynExpr::Array(a) if a.attrs.is_empty() => return a.bracket_token.span.open(),
            SynExpr::Block(b) if b.attrs.is_empty() && b.label.is_none() => {
                return b.block.brace_token.span.open();
            }
            SynExpr::If(i) if i.attrs.is_empty() => return i.if_token.span,
            SynExpr::Match(m) if m.attrs.is_empty() => return m.match_token.span,
            SynExpr::Lit(l) if l.attrs.is_empty() => return l.lit.span(),
            SynExpr::Unary(u) if u.attrs.is_empty() => return span(&u.op).start,
            _ => return SpanRange::of(e).start,
        };
    }
}

pub(super) fn last_token(e: &SynExpr) -> proc_macro2::Span {
    let mut e = e;
    loop {
        e = match e {
            SynExpr::Binary(b) => &b.right,
            SynExpr::Unary(u) => &u.expr,
            SynExpr::Closure(c) => &c.body,
            SynExpr::If(i) => match &i.else_branch {
                Some((_, e)) => e,
                None => return i.then_branch.brace_token.span.close(),
            },
            SynExpr::Call(c) => return c.paren_token.span.close(),
            SynExpr::MethodCall(m) => return m.paren_token.span.close(),
            SynExpr::Index(i) => return i.bracket_token.span.close(),
            SynExpr::Paren(p) => return p.paren_token.span.close(),
            SynExpr::Tuple(t) => return t.paren_token.span.close(),
            SynExpr::Array(a) => return a.bracket_token.span.close(),
            SynExpr::Block(b) => return b.block.brace_token.span.close(),
            SynExpr::Match(m) => return m.brace_token.span.close(),
            SynExpr::Lit(l) => return l.lit.span(),
            SynExpr::Field(f) => return span(&f.member).end,
            SynExpr::Cast(c) => return span(&c.ty).end,
            SynExpr::Reference(r) => &r.expr,
            SynExpr::Range(r) => match &r.end {
                Some(end) => end,
                None => return span(&r.limits).end,
            },
            SynExpr::Assign(a) => &a.right,
            SynExpr::Return(r) => match &r.expr {
                Some(e) => e,
                None => return r.return_token.span,
            },
            _ => return SpanRange::of(e).end,
        };
    }
}
