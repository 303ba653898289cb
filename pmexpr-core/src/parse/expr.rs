//! Expressions: literals, variables and path constants, calls, operators (as their generic
//! intrinsics, `&&` and `||` as the `if` they mean), tuples, sequences, fields and indexing,
//! `if`, `match` and the macros `never!` and `vec!`. Loops, assignment and the jumps are read by
//! `imperative`; the Rust expressions that have no PMExpr meaning (ranges outside a `for`, `unsafe`,
//! …) are errors that say what to write instead.

use syn::{BinOp as SynBinOp, Expr as SynExpr, UnOp};

use super::Parser;
use super::span::{expr_span, span};
use crate::ast::{Expr, ExprKind, Ident, Lit, NeverKind};
use crate::error::SpanRange;
use crate::intrinsics::{BinOp, Intrinsic};
use crate::node::{app, if_then_else, let_in, lit, mk, param, var};
use crate::record::field_name;
use crate::types::{Label, MAX_TUPLE, Number};

impl Parser<'_> {
    pub(super) fn expr(&mut self, e: &SynExpr) -> Expr {
        if !self.enter(|| expr_span(e)) {
            return mk(ExprKind::Never(NeverKind::User), SpanRange::call_site());
        }
        let out = self.expr_here(e);
        self.depth -= 1;
        out
    }

    fn expr_here(&mut self, e: &SynExpr) -> Expr {
        let sp = expr_span(e);
        match e {
            SynExpr::Paren(p) => self.expr(&p.expr),
            SynExpr::Group(g) => self.expr(&g.expr),
            SynExpr::Lit(l) => self.literal(&l.lit, false, sp),
            SynExpr::Path(p) => self.path(p, sp),
            SynExpr::Block(b) => {
                if let Some(label) = &b.label {
                    return self.error(span(label), "labelled blocks are not supported inside `accelerate!`");
                }
                self.block(&b.block)
            }
            SynExpr::Unsafe(u) => self.error(span(&u.unsafe_token), "`unsafe` has no meaning inside `accelerate!`"),
            SynExpr::Call(c)
                if matches!(&*c.func, SynExpr::Path(p) if p.path.segments.len() > 1 || p.qself.is_some()) =>
            {
                self.error_help(
                    span(&c.func),
                    "Rust functions cannot be called inside `accelerate!`",
                    "call a PMExpr function (`sqrt(x)`, `x.sqrt()`, …), or compute the value outside `accelerate!` and use its name",
                )
            }
            SynExpr::Call(c) => {
                let func = self.expr(&c.func);
                let mut args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
                if args.is_empty() {
                    args.push(lit(Lit::Unit, sp));
                }
                app(func, args, sp)
            }
            SynExpr::Closure(c) => self.closure(c, sp),
            SynExpr::Unary(u) => match u.op {
                UnOp::Neg(_) => match &*u.expr {
                    SynExpr::Lit(l) => self.literal(&l.lit, true, sp),
                    inner => {
                        // Resolved by its operand's type in `mono` (`negi`, `negf`).
                        let inner = self.expr(inner);
                        let neg = mk(ExprKind::Intrinsic(Intrinsic::NumNeg), span(&u.op));
                        app(neg, vec![inner], sp)
                    }
                },
                UnOp::Not(_) => {
                    // Logical on `bool`, bitwise on integers: resolved by its operand's type in
                    // `mono` (`not` on `bool`).
                    let inner = self.expr(&u.expr);
                    app(mk(ExprKind::Intrinsic(Intrinsic::NumNot), span(&u.op)), vec![inner], sp)
                }
                _ => self.error_help(
                    span(&u.op),
                    "PMExpr has no references to dereference",
                    "values inside `accelerate!` are used directly: write `x` instead of `*x`",
                ),
            },
            SynExpr::Binary(b) => self.binary(b, sp),
            SynExpr::If(i) => self.if_expr(i, sp),
            SynExpr::Match(m) => self.match_expr(m, sp),
            SynExpr::Tuple(t) => {
                if t.elems.is_empty() {
                    return lit(Lit::Unit, sp);
                }
                let fields = t.elems.iter().enumerate().map(|(i, e)| (Label::Index(i as u32), self.expr(e))).collect();
                mk(ExprKind::Record(fields), sp)
            }
            SynExpr::Array(a) => mk(ExprKind::Seq(a.elems.iter().map(|e| self.expr(e)).collect()), sp),
            SynExpr::Repeat(r) => self.repeat(r, sp),
            SynExpr::Field(f) => {
                let base = self.expr(&f.base);
                let label = match &f.member {
                    syn::Member::Unnamed(i) if i.index as usize >= MAX_TUPLE => {
                        return self.error(
                            span(&f.member),
                            format!(
                                "tuple field `{}` does not exist: PMExpr tuples have at most {MAX_TUPLE} fields",
                                i.index
                            ),
                        );
                    }
                    syn::Member::Unnamed(i) => Label::Index(i.index),
                    syn::Member::Named(n) => Label::Name(field_name(n)),
                };
                mk(ExprKind::Proj { expr: Box::new(base), label }, sp)
            }
            SynExpr::Index(i) => {
                let s = self.expr(&i.expr);
                let ix = self.expr(&i.index);
                app(mk(ExprKind::Intrinsic(Intrinsic::Get), sp), vec![s, ix], sp)
            }
            SynExpr::Macro(m) => self.macro_expr(&m.mac, sp),
            SynExpr::MethodCall(m) => self.method_call(m),
            SynExpr::Cast(c) => self.cast(c, sp),
            // Values are immutable, so a shared borrow is the value itself (`map(f, &v)`, as
            // a Rust user passes a `Vec` to a function that reads it).
            SynExpr::Reference(r) if r.mutability.is_none() => self.expr(&r.expr),
            SynExpr::Reference(r) => self.error_help(
                span(&r.and_token).to(span(&r.mutability)),
                "PMExpr values are immutable: `&mut` cannot be taken",
                "write a tensor with `tensor_set(t, [i], v)`, or bind a new value with `let`",
            ),
            // Imperative Rust (`parse/imperative.rs`), lowered by `crate::lower`.
            SynExpr::ForLoop(f) => self.for_loop(f, sp),
            SynExpr::While(w) => self.while_loop(w, sp),
            SynExpr::Loop(l) => self.loop_expr(l, sp),
            SynExpr::Assign(a) => self.assign(a, sp),
            SynExpr::Return(r) => self.return_expr(r, sp),
            SynExpr::Break(b) => self.break_expr(b, sp),
            SynExpr::Continue(c) => self.continue_expr(c, sp),
            SynExpr::Struct(s) => self.struct_literal(s, sp),
            SynExpr::Range(_) => self.error_help(
                sp,
                "ranges are not PMExpr",
                "build the sequence with `create(n, |i| i)`",
            ),
            SynExpr::Let(l) => self.error(span(&l.let_token), "`let` is only allowed as a statement or in `if let`"),
            _ => self.error(sp, "this kind of expression is not supported inside `accelerate!`"),
        }
    }

    pub(super) fn literal(&mut self, l: &syn::Lit, negative: bool, sp: SpanRange) -> Expr {
        match l {
            syn::Lit::Int(i) => {
                // `3u8`, `7usize`, `2f32`: a literal of the suffix's type.
                let suffix = match i.suffix() {
                    "" => None,
                    s => match Number::from_rust_name(s) {
                        Some(n) if n.is_arithmetic() => Some(n),
                        _ => {
                            return self.error_help(
                                sp,
                                format!("`{s}` literals are not supported inside `accelerate!`"),
                                suffix_help(),
                            );
                        }
                    },
                };
                let digits = i.base10_digits();
                let text = if negative {
                    format!("-{digits}")
                } else {
                    digits.to_string()
                };
                // Without a suffix the literal takes the type it is used with, which inference
                // checks it fits (`u64` up to `u64::MAX`, an `i8` from -128): here only that
                // some integer type holds it.
                let Some(n) = suffix else {
                    return match text.parse::<i128>() {
                        Ok(v) if (i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&v) => {
                            lit(Lit::Int(v), sp)
                        }
                        _ => self.error_help(
                            sp,
                            format!("the literal `{text}` does not fit in any integer type"),
                            format!(
                                "the integers inside `accelerate!` are at least {} and at most {}",
                                i64::MIN,
                                u64::MAX
                            ),
                        ),
                    };
                };
                if n.is_float() {
                    // `2f32` is the float 2, read in the suffix's precision.
                    let v = if n == Number::F32 {
                        text.parse::<f32>().map(|v| Lit::Float(v.into(), v))
                    } else {
                        text.parse::<f64>().map(|v| Lit::Float(v, v as f32))
                    };
                    return match v {
                        Ok(l) => suffixed(l, n, sp),
                        Err(e) => self.error(sp, e.to_string()),
                    };
                }
                // Rust refuses a suffixed literal out of its type's range (`256u8`, `-1u8`:
                // "literal out of range"; `-1u8` is "cannot apply unary operator `-`"): so does
                // the compiler, at the literal. In range, `v as T` of the `i64` with the same
                // bits is the value (`u64::MAX` is `-1 as u64`).
                let value = text.parse::<i128>().ok().filter(|v| fits(*v, n));
                match value {
                    Some(v) => suffixed(Lit::Int(i128::from(v as i64)), n, sp),
                    None => self.error_help(
                        sp,
                        format!("the literal `{text}{}` does not fit in {}", i.suffix(), n),
                        format!("the {n} values are {}", range_text(n)),
                    ),
                }
            }
            syn::Lit::Float(f) => {
                let single = match f.suffix() {
                    "" | "f64" => false,
                    "f32" => true,
                    s => {
                        return self.error_help(
                            sp,
                            format!("`{s}` literals are not supported inside `accelerate!`"),
                            suffix_help(),
                        );
                    }
                };
                // A `f32` literal is read as an `f32` (rounded once from its digits) and kept
                // exactly in the `f64` of the tree. An unsuffixed one is read at both types, each
                // rounded once, as Rust reads it at the type its context gives it (through the
                // `f64`, a literal near the middle of two `f32`s would be rounded twice).
                let parsed = if single {
                    f.base10_parse::<f32>().map(f64::from)
                } else {
                    f.base10_parse::<f64>()
                };
                let narrow = if single {
                    parsed.as_ref().map(|&v| v as f32).unwrap_or_default()
                } else {
                    f.base10_parse::<f32>().unwrap_or_default()
                };
                match parsed {
                    // Rust refuses `1e400` too ("could not evaluate float literal").
                    Ok(v) if !v.is_finite() => self.error(
                        sp,
                        format!(
                            "the literal `{}` does not fit in an {}",
                            f.base10_digits(),
                            if single { "f32" } else { "f64" }
                        ),
                    ),
                    Ok(v) => {
                        let l = if negative {
                            Lit::Float(-v, -narrow)
                        } else {
                            Lit::Float(v, narrow)
                        };
                        match f.suffix() {
                            "" => lit(l, sp),
                            _ if single => suffixed(l, Number::F32, sp),
                            _ => suffixed(l, Number::F64, sp),
                        }
                    }
                    Err(e) => self.error(sp, e.to_string()),
                }
            }
            syn::Lit::Bool(b) if !negative => lit(Lit::Bool(b.value), sp),
            _ => self.error(
                sp,
                "only integer, float and bool literals are supported inside `accelerate!`",
            ),
        }
    }

    fn path(&mut self, p: &syn::ExprPath, sp: SpanRange) -> Expr {
        if p.qself.is_none()
            && let Some(id) = p.path.get_ident()
        {
            return var(&field_name(id), sp);
        }
        // A constant of a path (`f64::INFINITY`, `std::f64::consts::PI`, `i64::MAX`): captured
        // like a variable, its value and type from rustc (see `code::user_place`).
        if p.qself.is_none()
            && p.path.segments.len() > 1
            && p.path.segments.iter().all(|s| s.arguments.is_none())
        {
            let names: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let lead = if p.path.leading_colon.is_some() {
                "::"
            } else {
                ""
            };
            return var(&format!("{lead}{}", names.join("::")), sp);
        }
        self.error_help(
            sp,
            "paths are not supported inside `accelerate!`",
            "bind the value to a local variable outside `accelerate!` and use that name",
        )
    }

    fn binary(&mut self, b: &syn::ExprBinary, sp: SpanRange) -> Expr {
        if let Some(assign) = self.compound_assign(b, sp) {
            return assign;
        }
        let op = match b.op {
            SynBinOp::Add(_) => BinOp::Add,
            SynBinOp::Sub(_) => BinOp::Sub,
            SynBinOp::Mul(_) => BinOp::Mul,
            SynBinOp::Div(_) => BinOp::Div,
            SynBinOp::Rem(_) => BinOp::Rem,
            SynBinOp::Eq(_) => BinOp::Eq,
            SynBinOp::Ne(_) => BinOp::Ne,
            SynBinOp::Lt(_) => BinOp::Lt,
            SynBinOp::Le(_) => BinOp::Le,
            SynBinOp::Gt(_) => BinOp::Gt,
            SynBinOp::Ge(_) => BinOp::Ge,
            SynBinOp::BitAnd(_) => BinOp::BitAnd,
            SynBinOp::BitOr(_) => BinOp::BitOr,
            SynBinOp::BitXor(_) => BinOp::BitXor,
            SynBinOp::Shl(_) => BinOp::Shl,
            SynBinOp::Shr(_) => BinOp::Shr,
            SynBinOp::And(_) | SynBinOp::Or(_) => {
                // Short-circuit, as in Rust: `a && b` is `if a { b } else { false }`.
                let lhs = self.expr(&b.left);
                let rhs = self.expr(&b.right);
                let osp = span(&b.op);
                return if matches!(b.op, SynBinOp::And(_)) {
                    if_then_else(lhs, rhs, lit(Lit::Bool(false), osp), sp)
                } else {
                    if_then_else(lhs, lit(Lit::Bool(true), osp), rhs, sp)
                };
            }
            _ => {
                return self.error_help(
                    span(&b.op),
                    format!(
                        "the operator `{}` is not supported inside `accelerate!`",
                        b.op.to_token_stream_string()
                    ),
                    operator_help(),
                );
            }
        };
        // The operator's generic intrinsic (`__num_add` …), checked as an operator by `infer`
        // and resolved by its operands' type in `mono` (`addi`, `addf` …).
        let lhs = self.expr(&b.left);
        let rhs = self.expr(&b.right);
        let func = mk(
            ExprKind::Intrinsic(crate::intrinsics::operator(op).generic),
            span(&b.op),
        );
        app(func, vec![lhs, rhs], sp)
    }

    fn if_expr(&mut self, i: &syn::ExprIf, sp: SpanRange) -> Expr {
        let then = self.block(&i.then_branch);
        let otherwise = match &i.else_branch {
            Some((_, e)) => self.expr(e),
            None => lit(
                Lit::Unit,
                SpanRange::single(i.then_branch.brace_token.span.close()),
            ),
        };
        match &*i.cond {
            SynExpr::Let(l) => {
                let scrutinee = self.expr(&l.expr);
                let pat = self.pat(&l.pat);
                mk(
                    ExprKind::Match {
                        scrutinee: Box::new(scrutinee),
                        pat,
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                    },
                    sp,
                )
            }
            cond => {
                let cond = self.expr(cond);
                if_then_else(cond, then, otherwise, sp)
            }
        }
    }

    fn match_expr(&mut self, m: &syn::ExprMatch, sp: SpanRange) -> Expr {
        let scrutinee = self.expr(&m.expr);
        for arm in &m.arms {
            if let Some((if_token, _)) = &arm.guard {
                self.error_help(
                    span(if_token),
                    "match guards are not supported inside `accelerate!`",
                    "test the condition with `if` inside the arm",
                );
            }
        }
        if m.arms.is_empty() {
            return self.error(sp, "a `match` needs at least one arm");
        }
        // Each arm is `match x with p then e else <the next arms>`; `x` names the scrutinee once.
        let (x, bind) = match &scrutinee.kind {
            ExprKind::Var { ident, .. } => (ident.clone(), false),
            _ => (self.fresh_ident("scrutinee", scrutinee.span), true),
        };
        let mut result = mk(ExprKind::Never(NeverKind::NoArm), sp);
        for arm in m.arms.iter().rev() {
            let asp = span(arm);
            // A number pattern is the comparison it means, so that every backend takes it (the
            // paper's Futhark and CUDA backends had no number patterns).
            if let Some(test) = self.number_test(&arm.pat, &x) {
                let body = self.expr(&arm.body);
                result = if_then_else(test, body, result, asp);
                continue;
            }
            let pat = self.pat(&arm.pat);
            let body = self.expr(&arm.body);
            result = mk(
                ExprKind::Match {
                    scrutinee: Box::new(var(&x.name, x.span)),
                    pat,
                    then: Box::new(body),
                    otherwise: Box::new(result),
                },
                asp,
            );
        }
        if bind {
            let_in(param(x, None), scrutinee, result, sp)
        } else {
            result
        }
    }

    /// `[x; n]` (and `vec![x; n]`) is `create(n, |_| x)`.
    fn repeat(&mut self, r: &syn::ExprRepeat, sp: SpanRange) -> Expr {
        let value = self.expr(&r.expr);
        let len = self.expr(&r.len);
        let i = Ident::new("_", span(&r.len));
        let f = mk(
            ExprKind::Lam {
                params: vec![param(i, None)],
                body: Box::new(value),
            },
            sp,
        );
        app(
            mk(ExprKind::Intrinsic(Intrinsic::Create), sp),
            vec![len, f],
            sp,
        )
    }

    pub(super) fn macro_expr(&mut self, m: &syn::Macro, sp: SpanRange) -> Expr {
        let name = m
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        match name.as_str() {
            "never" if m.tokens.is_empty() => mk(ExprKind::Never(NeverKind::User), sp),
            "never" => self.error(span(&m.tokens), "`never!()` takes no arguments"),
            "vec" => {
                // `vec![x; n]` and `vec![a, b, …]`: the tokens of an array expression.
                let group = proc_macro2::Group::new(proc_macro2::Delimiter::Bracket, m.tokens.clone());
                match syn::parse2::<SynExpr>(proc_macro2::TokenTree::Group(group).into()) {
                    Ok(SynExpr::Repeat(r)) => self.repeat(&r, sp),
                    Ok(SynExpr::Array(a)) => mk(ExprKind::Seq(a.elems.iter().map(|e| self.expr(e)).collect()), sp),
                    Ok(_) => self.error_help(span(&m.tokens), "`vec!` takes elements or a value and a length", "write `vec![a, b, c]` or `vec![x; n]`"),
                    Err(e) => self.error(SpanRange::single(e.span()), e.to_string()),
                }
            }
            "accelerate" => self.error(
                span(&m.path),
                "The accelerated expression is used within another accelerated expression, which is not supported.",
            ),
            _ => self.error_help(
                span(&m.path),
                format!("the macro `{name}!` is not supported inside `accelerate!`"),
                "only `never!()` and `vec![…]` can be used here",
            ),
        }
    }
}

/// What a literal's suffix may be.
fn suffix_help() -> String {
    format!(
        "a literal's suffix names its type: {}; without one, the type comes from where the literal is used",
        Number::arithmetic_names("or")
    )
}

/// A literal written with a suffix (`3u8`, `2.5f32`): `l as n`, which is `l` itself (the
/// parser checked that it fits), of the suffix's type whatever the context.
fn suffixed(l: Lit, n: Number, sp: SpanRange) -> Expr {
    match Intrinsic::cast_to(n) {
        Some(cast) => app(mk(ExprKind::Intrinsic(cast), sp), vec![lit(l, sp)], sp),
        None => lit(l, sp),
    }
}

/// Whether the integer `v` is a value of the integer type `n`.
fn fits(v: i128, n: Number) -> bool {
    n.int_range().is_some_and(|(lo, hi)| (lo..=hi).contains(&v))
}

/// `MIN..=MAX` of the integer type `n`, for a message.
fn range_text(n: Number) -> String {
    let (lo, hi) = n.int_range().unwrap_or_default();
    format!("{lo}..={hi}")
}

/// The operators inside `accelerate!` and the types they take, for the help of an operator
/// error.
pub(crate) fn operator_help() -> String {
    let numbers: Vec<&str> = Number::arithmetic()
        .into_iter()
        .map(Number::rust_name)
        .collect();
    format!(
        "inside `accelerate!`: + - * / % on numbers ({}); == != on numbers and bool; < <= > >= on numbers; & | ^ on integers and bool; << >> and ! on integers (! also on bool); && || on bool; values are immutable",
        numbers.join(" ")
    )
}

trait TokenString {
    fn to_token_stream_string(&self) -> String;
}

impl<T: quote::ToTokens> TokenString for T {
    fn to_token_stream_string(&self) -> String {
        self.to_token_stream().to_string()
    }
}
