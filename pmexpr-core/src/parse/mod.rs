//! The parser: the body of `accelerate!`, a Rust expression parsed by `syn`, to the PMExpr AST
//! (DESIGN.md §1 gives the correspondence).
//!
//! Rust syntax that has no PMExpr meaning is reported at its own tokens with the PMExpr way to say
//! it (`s.len()` → `length(s)`, `for` → `seq_loop`/`par_loop`). Errors are collected, so that one
//! compilation shows all of them.

use syn::{BinOp as SynBinOp, Expr as SynExpr, Pat as SynPat, Stmt, UnOp};

use crate::ast::{Expr, ExprKind, FnDef, Ident, Lit, NeverKind, Param, Pat, PatKind};
use crate::error::{Error, Errors, SpanRange};
use crate::intrinsics::{BinOp, Intrinsic};
use crate::record::{RecordDef, Records, field_name};
use crate::types::{Annotation, Label, MAX_TUPLE, Type, TypeAnn};

/// Parses a PMExpr expression; `records` are the derived structs it can name (`None` when the
/// crate has no build hook).
pub fn parse_expr(e: &SynExpr, records: Option<&Records>) -> Result<Expr, Errors> {
    let mut p = Parser {
        records,
        ..Parser::default()
    };
    let out = p.expr(e);
    if p.errors.is_empty() {
        Ok(out)
    } else {
        Err(p.errors)
    }
}

/// Parses the token stream given to `accelerate!`, which names no derived struct.
pub fn parse_tokens(tokens: proc_macro2::TokenStream) -> Result<Expr, Errors> {
    parse_tokens_in(tokens, None)
}

/// Parses the token stream given to `accelerate!`; `records` are the derived structs it can name
/// (`None` when the crate has no build hook).
pub fn parse_tokens_in(
    tokens: proc_macro2::TokenStream,
    records: Option<&Records>,
) -> Result<Expr, Errors> {
    if tokens.is_empty() {
        return Err(vec![
            Error::new(
                SpanRange::call_site(),
                "`accelerate!` needs an expression to accelerate",
            )
            .help("for example `accelerate!(reduce(addi, 0, s))`"),
        ]);
    }
    let e: SynExpr = syn::parse2(tokens).map_err(|e| {
        vec![Error::new(
            SpanRange::single(e.span()),
            format!("this is not a Rust expression: {e}"),
        )]
    })?;
    parse_expr(&e, records)
}

/// Parses a `fn` item whose body is PMExpr (a `#[pmexpr]` function).
pub fn parse_fn_item(f: &syn::ItemFn, records: Option<&Records>) -> Result<FnDef, Errors> {
    let mut p = Parser {
        records,
        ..Parser::default()
    };
    let out = p.fn_item(f);
    if p.errors.is_empty() {
        Ok(out)
    } else {
        Err(p.errors)
    }
}

/// Parses the type of a field of a `#[derive(pmexpr::Record)]` struct, where other records are
/// named ([`TypeAnn::Named`]) rather than expanded.
pub fn parse_field_type(t: &syn::Type) -> Result<TypeAnn, Errors> {
    let mut p = Parser {
        field_types: true,
        ..Parser::default()
    };
    let out = p.type_ann(t);
    if p.errors.is_empty() {
        Ok(out)
    } else {
        Err(p.errors)
    }
}

/// The definition a struct item gives, or errors at its tokens when it cannot be a record: it must
/// have named fields of PMExpr types and no generic parameters.
pub fn record_def(item: &syn::ItemStruct, location: &str) -> Result<RecordDef, Errors> {
    let mut errors = Vec::new();
    if !item.generics.params.is_empty() {
        errors.push(
            Error::new(
                SpanRange::of(&item.generics),
                "a `#[derive(pmexpr::Record)]` struct cannot have generic parameters",
            )
            .help(
                "name the field types: i64, f64, bool, tuples, Vec<T>, Tensor<T> or other records",
            ),
        );
    }
    let syn::Fields::Named(named) = &item.fields else {
        errors.push(
            Error::new(
                SpanRange::of(&item.ident),
                "a `#[derive(pmexpr::Record)]` struct has named fields",
            )
            .help("for positional fields use a tuple, which is a PMExpr record already"),
        );
        return Err(errors);
    };
    if named.named.is_empty() {
        errors.push(
            Error::new(
                SpanRange::of(&item.ident),
                "a `#[derive(pmexpr::Record)]` struct needs at least one field",
            )
            .help("the record without fields is `()`"),
        );
    }
    if let Some(extra) = named.named.iter().nth(MAX_TUPLE) {
        errors.push(
            Error::new(
                SpanRange::of(extra),
                format!("a `#[derive(pmexpr::Record)]` struct has at most {MAX_TUPLE} fields"),
            )
            .help("group some fields into a record of their own"),
        );
    }
    let mut fields = Vec::new();
    for f in &named.named {
        let Some(ident) = &f.ident else { continue };
        match parse_field_type(&f.ty) {
            Ok(t) => fields.push((field_name(ident), t)),
            Err(es) => errors.extend(es),
        }
    }
    if errors.is_empty() {
        Ok(RecordDef {
            name: item.ident.to_string(),
            fields,
            location: location.to_string(),
        })
    } else {
        Err(errors)
    }
}

/// The deepest nesting of expressions, patterns or types the parser accepts: a clear error
/// instead of a stack overflow, in our passes or in rustc compiling the generated code. A chain
/// of `let` statements, `fn` items or `match` arms is not nesting and may be any length.
pub const MAX_DEPTH: usize = 256;

#[derive(Default)]
struct Parser<'r> {
    errors: Errors,
    /// How deep the node being parsed is nested.
    depth: usize,
    /// Whether the nesting error was reported (once is enough).
    too_deep: bool,
    fresh: u32,
    /// The derived structs the code can name; `None` without the build hook.
    records: Option<&'r Records>,
    /// Parsing a struct's field types: struct names stay names.
    field_types: bool,
}

fn span(node: &impl quote::ToTokens) -> SpanRange {
    SpanRange::of(node)
}

/// The span of an expression from its first and last tokens, found without printing the whole
/// subtree (which made every node cost its size, and nesting quadratic); rare forms fall back to
/// printing.
fn expr_span(e: &SynExpr) -> SpanRange {
    SpanRange {
        start: first_token(e),
        end: last_token(e),
    }
}

fn first_token(e: &SynExpr) -> proc_macro2::Span {
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

fn last_token(e: &SynExpr) -> proc_macro2::Span {
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
            _ => return SpanRange::of(e).end,
        };
    }
}

fn mk(kind: ExprKind, span: SpanRange) -> Expr {
    Expr::new(kind, span)
}

fn var(name: &str, span: SpanRange) -> Expr {
    mk(
        ExprKind::Var {
            ident: Ident::new(name, span),
            inst: Vec::new(),
        },
        span,
    )
}

fn lit(l: Lit, span: SpanRange) -> Expr {
    mk(ExprKind::Lit(l), span)
}

fn app(func: Expr, args: Vec<Expr>, span: SpanRange) -> Expr {
    mk(
        ExprKind::App {
            func: Box::new(func),
            args,
        },
        span,
    )
}

fn if_then_else(cond: Expr, then: Expr, otherwise: Expr, span: SpanRange) -> Expr {
    let pat = Pat {
        kind: PatKind::Lit(Lit::Bool(true)),
        span: cond.span,
        ty: Type::Bool,
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

fn param(ident: Ident, ann: Option<Annotation>) -> Param {
    Param {
        ident,
        ann,
        ty: Type::unit(),
    }
}

fn let_in(binder: Param, value: Expr, body: Expr, span: SpanRange) -> Expr {
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

impl Parser<'_> {
    fn error(&mut self, span: SpanRange, message: impl Into<String>) -> Expr {
        self.errors.push(Error::new(span, message));
        mk(ExprKind::Never(NeverKind::User), span)
    }

    fn error_help(
        &mut self,
        span: SpanRange,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Expr {
        self.errors.push(Error::new(span, message).help(help));
        mk(ExprKind::Never(NeverKind::User), span)
    }

    fn fresh_ident(&mut self, what: &str, span: SpanRange) -> Ident {
        self.fresh += 1;
        Ident::new(format!("__{what}{}", self.fresh), span)
    }

    /// Enters one level of nesting, or reports (once) that the input nests too deeply.
    fn enter(&mut self, what: impl FnOnce() -> SpanRange) -> bool {
        if self.depth >= MAX_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.errors.push(
                    Error::new(
                        what(),
                        format!("this nests more than {MAX_DEPTH} levels deep, more than `accelerate!` accepts"),
                    )
                    .help("bind the inner parts to variables with `let` (a block may hold any number of `let`s)"),
                );
            }
            return false;
        }
        self.depth += 1;
        true
    }

    fn expr(&mut self, e: &SynExpr) -> Expr {
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
                    let inner = self.expr(&u.expr);
                    app(mk(ExprKind::Intrinsic(Intrinsic::Not), span(&u.op)), vec![inner], sp)
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
            SynExpr::Repeat(r) => {
                // `[x; n]` is `create(n, |_| x)`.
                let value = self.expr(&r.expr);
                let len = self.expr(&r.len);
                let i = Ident::new("_", span(&r.len));
                let f = mk(ExprKind::Lam { params: vec![param(i, None)], body: Box::new(value) }, sp);
                app(mk(ExprKind::Intrinsic(Intrinsic::Create), sp), vec![len, f], sp)
            }
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
            SynExpr::ForLoop(f) => self.error_help(
                span(&f.for_token),
                "`for` loops are not PMExpr",
                "use `seq_loop(n, |i| …)` for a sequential loop or `par_loop(n, |i| …)` for a parallel one",
            ),
            SynExpr::While(w) => self.error_help(
                span(&w.while_token),
                "`while` loops are not PMExpr",
                "use `seq_loop`, `seq_loop_acc` or a recursive `fn`",
            ),
            SynExpr::Loop(l) => self.error_help(
                span(&l.loop_token),
                "`loop` is not PMExpr",
                "the paper's parallel `loop` is written `par_loop(n, |i| …)`",
            ),
            SynExpr::Assign(a) => self.error_help(
                span(&a.eq_token),
                "PMExpr values are immutable",
                "bind a new value with `let`, or write a tensor with `tensor_set(t, [i], v)`",
            ),
            SynExpr::Return(r) => self.error_help(
                span(&r.return_token),
                "`return` is not supported inside `accelerate!`",
                "a block's value is its last expression: write `if c { a } else { b }` for an early result",
            ),
            SynExpr::Break(b) => self.error_help(
                span(&b.break_token),
                "`break` is not supported inside `accelerate!`",
                "a loop that stops early is a function that calls itself as its last step, or a `foldl` that carries a flag",
            ),
            SynExpr::Continue(c) => self.error_help(
                span(&c.continue_token),
                "`continue` is not supported inside `accelerate!`",
                "skip the rest of a step with `if … { … } else { … }`",
            ),
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

    fn literal(&mut self, l: &syn::Lit, negative: bool, sp: SpanRange) -> Expr {
        match l {
            syn::Lit::Int(i) => {
                if !matches!(i.suffix(), "" | "i64") {
                    return self.error_help(
                        sp,
                        format!("`{}` literals are not supported yet", i.suffix()),
                        "integers inside `accelerate!` are i64: drop the suffix",
                    );
                }
                let digits = i.base10_digits();
                let text = if negative {
                    format!("-{digits}")
                } else {
                    digits.to_string()
                };
                match text.parse::<i64>() {
                    Ok(v) => lit(Lit::Int(v), sp),
                    Err(_) => {
                        self.error(sp, format!("the literal `{text}` does not fit in an i64"))
                    }
                }
            }
            syn::Lit::Float(f) => {
                if !matches!(f.suffix(), "" | "f64") {
                    return self.error_help(
                        sp,
                        format!("`{}` literals are not supported yet", f.suffix()),
                        "floats inside `accelerate!` are f64: drop the suffix",
                    );
                }
                match f.base10_parse::<f64>() {
                    // Rust refuses `1e400` too ("could not evaluate float literal").
                    Ok(v) if !v.is_finite() => self.error(
                        sp,
                        format!("the literal `{}` does not fit in an f64", f.base10_digits()),
                    ),
                    Ok(v) => lit(Lit::Float(if negative { -v } else { v }), sp),
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

    fn block(&mut self, b: &syn::Block) -> Expr {
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

    fn fn_item(&mut self, f: &syn::ItemFn) -> FnDef {
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
        let pat = self.pat(p);
        match pat.kind {
            PatKind::Bind(ident) => (param(ident, ann), None),
            PatKind::Wild => (param(Ident::new("_", pat.span), ann), None),
            _ => {
                let x = self.fresh_ident("arg", pat.span);
                (param(x.clone(), ann), Some((x, pat)))
            }
        }
    }

    fn closure(&mut self, c: &syn::ExprClosure, sp: SpanRange) -> Expr {
        if let Some(a) = &c.asyncness {
            return self.error(span(a), "`async` closures are not PMExpr");
        }
        let mut params = Vec::new();
        let mut matches = Vec::new();
        for input in &c.inputs {
            let (pat, ann) = match input {
                SynPat::Type(t) => (&*t.pat, Some(self.annotation(&t.ty))),
                p => (p, None),
            };
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

    fn binary(&mut self, b: &syn::ExprBinary, sp: SpanRange) -> Expr {
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
                    format!("the operator `{}` is not supported inside `accelerate!`", b.op.to_token_stream_string()),
                    "PMExpr has + - * / % == != < <= > >= && || ! on i64, f64 and bool; values are immutable",
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

    /// The test of a number pattern on the scrutinee `x`: a literal is `x == lit`, `a | b` is
    /// either test, `lo..=hi` and `lo..hi` are the comparisons with their bounds. `None` for any
    /// other pattern (one that binds, a tuple, `_`, a `bool`).
    fn number_test(&mut self, p: &SynPat, x: &Ident) -> Option<Expr> {
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
                // Every case must be a number pattern; the tests are tried in order.
                let tests: Option<Vec<Expr>> =
                    o.cases.iter().map(|c| self.number_test(c, x)).collect();
                tests?
                    .into_iter()
                    .rev()
                    .reduce(|rest, t| if_then_else(t, lit(Lit::Bool(true), sp), rest, sp))
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

    fn macro_expr(&mut self, m: &syn::Macro, sp: SpanRange) -> Expr {
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
                let parser = syn::punctuated::Punctuated::<SynExpr, syn::Token![,]>::parse_terminated;
                match syn::parse::Parser::parse2(parser, m.tokens.clone()) {
                    Ok(elems) => mk(ExprKind::Seq(elems.iter().map(|e| self.expr(e)).collect()), sp),
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

    /// `x.sqrt()`, `s.len()` and the other methods whose PMExpr function means the same: the
    /// call of that function with the receiver first; `x.abs()`, `x.min(y)` and `x.max(y)` on
    /// numbers. Other methods are errors that name what to write instead.
    fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
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
    fn cast(&mut self, c: &syn::ExprCast, sp: SpanRange) -> Expr {
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

    fn pat(&mut self, p: &SynPat) -> Pat {
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
                if i.by_ref.is_some() || i.mutability.is_some() || i.subpat.is_some() {
                    self.errors.push(
                        Error::new(sp, "patterns inside `accelerate!` bind plain names")
                            .help("PMExpr values are immutable: remove `ref`, `mut` or `@`"),
                    );
                }
                PatKind::Bind(Ident::new(field_name(&i.ident), span(&i.ident)))
            }
            SynPat::Wild(_) => PatKind::Wild,
            SynPat::Paren(p) => return self.pat(&p.pat),
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

    fn annotation(&mut self, t: &syn::Type) -> Annotation {
        let ann = self.type_ann(t);
        Annotation { ann, span: span(t) }
    }

    fn type_ann(&mut self, t: &syn::Type) -> TypeAnn {
        if !self.enter(|| span(t)) {
            return TypeAnn::Infer;
        }
        let out = self.type_ann_here(t);
        self.depth -= 1;
        out
    }

    fn type_ann_here(&mut self, t: &syn::Type) -> TypeAnn {
        match t {
            syn::Type::Infer(_) => TypeAnn::Infer,
            syn::Type::Paren(p) => self.type_ann(&p.elem),
            syn::Type::Group(g) => self.type_ann(&g.elem),
            syn::Type::Reference(r) => self.type_ann(&r.elem),
            syn::Type::Slice(s) => TypeAnn::Seq(Box::new(self.type_ann(&s.elem))),
            syn::Type::Array(a) => TypeAnn::Seq(Box::new(self.type_ann(&a.elem))),
            syn::Type::Tuple(t) => {
                TypeAnn::Tuple(t.elems.iter().map(|e| self.type_ann(e)).collect())
            }
            syn::Type::BareFn(f) => {
                let params = f.inputs.iter().map(|a| self.type_ann(&a.ty)).collect();
                let ret = self.return_ann(&f.output);
                TypeAnn::Arrow(params, Box::new(ret))
            }
            syn::Type::ImplTrait(i) => {
                for bound in &i.bounds {
                    if let syn::TypeParamBound::Trait(tb) = bound
                        && let Some(seg) = tb.path.segments.last()
                        && let syn::PathArguments::Parenthesized(args) = &seg.arguments
                    {
                        let params = args.inputs.iter().map(|a| self.type_ann(a)).collect();
                        let ret = self.return_ann(&args.output);
                        return TypeAnn::Arrow(params, Box::new(ret));
                    }
                }
                self.type_error(t)
            }
            syn::Type::Path(p) if p.qself.is_none() => {
                let Some(seg) = p.path.segments.last() else {
                    return self.type_error(t);
                };
                let name = seg.ident.to_string();
                let arg = |this: &mut Self| -> Option<TypeAnn> {
                    if let syn::PathArguments::AngleBracketed(a) = &seg.arguments
                        && a.args.len() == 1
                        && let Some(syn::GenericArgument::Type(t)) = a.args.first()
                    {
                        return Some(this.type_ann(t));
                    }
                    None
                };
                match name.as_str() {
                    "i64" if seg.arguments.is_none() => TypeAnn::Int,
                    "f64" if seg.arguments.is_none() => TypeAnn::Float,
                    "bool" if seg.arguments.is_none() => TypeAnn::Bool,
                    "Vec" => match arg(self) {
                        Some(a) => TypeAnn::Seq(Box::new(a)),
                        None => self.type_error(t),
                    },
                    "Tensor" => match arg(self) {
                        Some(a) => TypeAnn::Tensor(Box::new(a)),
                        None => self.type_error(t),
                    },
                    "i8" | "i16" | "i32" | "u8" | "u16" | "u32" | "u64" | "usize" | "isize"
                    | "f32" | "i128" | "u128" => {
                        self.errors.push(
                            Error::new(
                                span(t),
                                format!("`{name}` is not supported inside `accelerate!` yet"),
                            )
                            .help(
                                "annotations inside `accelerate!` name `i64` or `f64`; captured `i32` and `f32` values are computed as `i32` and `f32` without one: leave the type out",
                            ),
                        );
                        TypeAnn::Infer
                    }
                    // Common Rust types that are not PMExpr types (nor derived structs).
                    "String" | "str" | "char" | "Option" | "Result" | "Box" | "Rc" | "Arc"
                    | "Cell" | "RefCell" | "HashMap" | "BTreeMap" | "HashSet" | "BTreeSet"
                    | "VecDeque" => self.type_error(t),
                    _ if seg.arguments.is_none() => self.named_type(&name, t),
                    _ => self.type_error(t),
                }
            }
            _ => self.type_error(t),
        }
    }

    /// A type named by a path: a `#[derive(pmexpr::Record)]` struct, expanded to its record type.
    fn named_type(&mut self, name: &str, t: &syn::Type) -> TypeAnn {
        if self.field_types {
            return TypeAnn::Named(name.to_string());
        }
        match self.records {
            Some(records) => match records.expand(name) {
                Ok(ann) => ann,
                Err(e) => {
                    self.errors
                        .push(Error::new(span(t), e.message()).help(DERIVE_HELP));
                    TypeAnn::Infer
                }
            },
            None => {
                self.errors.push(no_hook_record(name, span(t)));
                TypeAnn::Infer
            }
        }
    }

    /// The fields of the struct `path` names.
    fn struct_fields(&mut self, path: &syn::Path) -> StructFields {
        let Some(last) = path.segments.last() else {
            return StructFields::Failed;
        };
        let name = last.ident.to_string();
        let Some(records) = self.records else {
            return StructFields::NoHook;
        };
        match records.expand(&name) {
            Ok(TypeAnn::Record(fields)) => StructFields::Known(name, fields),
            Ok(_) => StructFields::Failed,
            Err(e) => {
                self.errors
                    .push(Error::new(span(path), e.message()).help(DERIVE_HELP));
                StructFields::Failed
            }
        }
    }

    /// `Particle { x: e1, v: e2 }`: the record of its fields, ascribed the struct's record type
    /// when the struct is known (without the hook, the literal itself says every field).
    fn struct_literal(&mut self, s: &syn::ExprStruct, sp: SpanRange) -> Expr {
        if let Some(q) = &s.qself {
            return self.error(
                span(&q.ty),
                "qualified paths are not supported inside `accelerate!`",
            );
        }
        if let Some(dots) = &s.dot2_token {
            return self.error_help(
                span(dots),
                "`..` in a struct literal is not supported inside `accelerate!`",
                "name every field: PMExpr records are built whole",
            );
        }
        let mut fields: Vec<(Label, Expr)> = Vec::new();
        let mut members = Vec::new();
        for f in &s.fields {
            let syn::Member::Named(member) = &f.member else {
                return self.error_help(
                    span(&f.member),
                    "fields of a struct literal are named",
                    "use a tuple for positional fields",
                );
            };
            let name = field_name(member);
            if fields.iter().any(|(l, _)| *l == Label::Name(name.clone())) {
                return self.error(span(&f.member), format!("field `{name}` is given twice"));
            }
            let value = self.expr(&f.expr);
            fields.push((Label::Name(name), value));
            members.push(member);
        }
        let record = mk(ExprKind::Record(fields), sp);
        let StructFields::Known(name, def) = self.struct_fields(&s.path) else {
            return record;
        };
        self.check_fields(&name, &def, &members, false, span(&s.path));
        let x = self.fresh_ident("record", sp);
        let ann = Annotation {
            ann: TypeAnn::Record(def),
            span: span(&s.path),
        };
        let_in(param(x.clone(), Some(ann)), record, var(&x.name, sp), sp)
    }

    /// Checks the fields a literal or pattern names against the struct's: each exists, and all
    /// are named unless `rest` (`..` in a pattern).
    fn check_fields(
        &mut self,
        name: &str,
        def: &[(String, TypeAnn)],
        members: &[&proc_macro2::Ident],
        rest: bool,
        at: SpanRange,
    ) {
        let mut seen = Vec::new();
        for n in members {
            let field = field_name(n);
            if !def.iter().any(|(f, _)| *f == field) {
                self.errors.push(Error::new(
                    span(n),
                    format!("`{name}` has no field `{field}`"),
                ));
            }
            seen.push(field);
        }
        if rest {
            return;
        }
        let missing: Vec<String> = def
            .iter()
            .filter(|(f, _)| !seen.contains(f))
            .map(|(f, _)| format!("`{f}`"))
            .collect();
        if !missing.is_empty() {
            self.errors.push(Error::new(
                at,
                format!(
                    "missing field{} {} of `{name}`",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", ")
                ),
            ));
        }
    }

    /// `Particle { x, v: w, .. }`: a record pattern. `..` needs the struct's definition (the fields
    /// left out match anything).
    fn struct_pattern(&mut self, s: &syn::PatStruct) -> PatKind {
        let mut fields: Vec<(Label, Pat)> = Vec::new();
        let mut members = Vec::new();
        for f in &s.fields {
            let syn::Member::Named(member) = &f.member else {
                self.errors.push(
                    Error::new(span(&f.member), "fields of a struct pattern are named")
                        .help("use a tuple pattern for positional fields"),
                );
                return PatKind::Wild;
            };
            fields.push((Label::Name(field_name(member)), self.pat(&f.pat)));
            members.push(member);
        }
        match self.struct_fields(&s.path) {
            StructFields::Failed => {}
            StructFields::Known(name, def) => {
                self.check_fields(&name, &def, &members, s.rest.is_some(), span(&s.path));
            }
            StructFields::NoHook if s.rest.is_some() => {
                let name = s
                    .path
                    .segments
                    .last()
                    .map(|g| g.ident.to_string())
                    .unwrap_or_default();
                self.errors.push(no_hook_record(&name, span(&s.path)));
            }
            StructFields::NoHook => {}
        }
        PatKind::Record(fields)
    }

    fn return_ann(&mut self, r: &syn::ReturnType) -> TypeAnn {
        match r {
            syn::ReturnType::Default => TypeAnn::Tuple(vec![]),
            syn::ReturnType::Type(_, t) => self.type_ann(t),
        }
    }

    fn type_error(&mut self, t: &syn::Type) -> TypeAnn {
        self.errors
            .push(Error::new(span(t), "this type is not a PMExpr type").help(
                "use i64, f64, bool, (), tuples, Vec<T>, Tensor<i64>, Tensor<f64>, fn(A) -> B, `#[derive(pmexpr::Record)]` structs or _",
            ));
        TypeAnn::Infer
    }
}

/// What the parser knows of the struct a literal or pattern names.
enum StructFields {
    /// Its name and its fields (other records expanded).
    Known(String, Vec<(String, TypeAnn)>),
    /// Nothing: the crate has no build hook.
    NoHook,
    /// Nothing: the error is reported.
    Failed,
}

/// How to make a struct a PMExpr record.
const DERIVE_HELP: &str =
    "add `#[derive(pmexpr::Record)]` to a struct with named fields to use it inside `accelerate!`";

/// A struct name in a site of a crate without the build hook, which alone tells `accelerate!` the
/// crate's derived structs.
fn no_hook_record(name: &str, at: SpanRange) -> Error {
    Error::new(
        at,
        format!(
            "`{name}` is not a PMExpr type, and `accelerate!` cannot see `#[derive(pmexpr::Record)]` structs: this crate has no pmexpr build hook"
        ),
    )
    .help(crate::error::ADD_HOOK_HELP)
}

trait TokenString {
    fn to_token_stream_string(&self) -> String;
}

impl<T: quote::ToTokens> TokenString for T {
    fn to_token_stream_string(&self) -> String {
        self.to_token_stream().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse(tokens: proc_macro2::TokenStream) -> Expr {
        parse_tokens(tokens).unwrap_or_else(|e| panic!("{}", e[0].text()))
    }

    fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
        parse_tokens(tokens)
            .expect_err("should fail")
            .iter()
            .map(|e| e.message.clone())
            .collect()
    }

    #[test]
    fn blocks_become_lets() {
        let e = parse(quote!({
            let x = 1;
            let y: i64 = x;
            y
        }));
        let ExprKind::Let { binder, body, .. } = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(binder.ident.name, "x");
        let ExprKind::Let { binder, .. } = &body.kind else {
            panic!()
        };
        assert!(matches!(binder.ann.as_ref().unwrap().ann, TypeAnn::Int));
    }

    #[test]
    fn fn_items_form_a_recursive_group() {
        let e = parse(quote!({
            fn f(x: i64) -> i64 {
                g(x)
            }
            fn g(x: _) -> i64 {
                x
            }
            f(1)
        }));
        let ExprKind::RecLet { fns, .. } = &e.kind else {
            panic!()
        };
        assert_eq!(
            fns.iter()
                .map(|f| f.ident.name.as_str())
                .collect::<Vec<_>>(),
            ["f", "g"]
        );
    }

    #[test]
    fn negative_literals() {
        assert!(matches!(
            parse(quote!(-9223372036854775808)).kind,
            ExprKind::Lit(Lit::Int(i64::MIN))
        ));
        assert!(matches!(parse(quote!(-1.5)).kind, ExprKind::Lit(Lit::Float(f)) if f == -1.5));
    }

    #[test]
    fn match_arms_nest() {
        let e = parse(quote!(match x {
            0 => 1,
            _ => 2,
        }));
        let ExprKind::Match { otherwise, .. } = &e.kind else {
            panic!()
        };
        assert!(matches!(otherwise.kind, ExprKind::Match { .. }));
    }

    #[test]
    fn rust_spellings_are_the_pmexpr_functions() {
        let call = |e: &Expr| match &e.kind {
            ExprKind::App { func, args } => match func.kind {
                ExprKind::Intrinsic(i) => (i, args.len()),
                _ => panic!("not an intrinsic"),
            },
            _ => panic!("not a call"),
        };
        assert_eq!(call(&parse(quote!(s.len()))), (Intrinsic::Length, 1));
        assert_eq!(call(&parse(quote!(s.is_empty()))), (Intrinsic::Null, 1));
        assert_eq!(call(&parse(quote!(x.ln()))), (Intrinsic::Log, 1));
        assert_eq!(call(&parse(quote!(x.powf(2.0)))), (Intrinsic::Pow, 2));
        assert_eq!(call(&parse(quote!(x.abs()))), (Intrinsic::NumAbs, 1));
        // `min` and `max`: the operands bound in order, then the comparison with its NaN test.
        let ExprKind::Let { value, body, .. } = parse(quote!(a.max(b))).kind else {
            panic!("not a let")
        };
        assert!(matches!(value.kind, ExprKind::Var { ref ident, .. } if ident.name == "a"));
        assert!(matches!(body.kind, ExprKind::Let { .. }));
        assert!(matches!(parse(quote!(&s)).kind, ExprKind::Var { .. }));
        // `as f64`: `int2float` bound to a name annotated `f64`.
        let ExprKind::Let { binder, value, .. } = parse(quote!(k as f64)).kind else {
            panic!("not a let")
        };
        assert_eq!(call(&value), (Intrinsic::Int2Float, 1));
        assert!(binder.ann.is_some());
    }

    #[test]
    fn path_constants_are_captured_and_path_calls_explained() {
        let ExprKind::Var { ident, .. } = parse(quote!(std::f64::consts::PI)).kind else {
            panic!("not a variable")
        };
        assert_eq!(ident.name, "std::f64::consts::PI");
        assert_eq!(
            errors(quote!(f64::max(x, 1.0))),
            ["Rust functions cannot be called inside `accelerate!`"]
        );
    }

    #[test]
    fn number_patterns_are_comparisons() {
        // `match x { 1 | 2 => 10, 3..=5 => 20, _ => 30 }`: ifs on comparisons, then the `_` arm.
        let e = parse(quote!(match x {
            1 | 2 => 10,
            3..=5 => 20,
            _ => 30,
        }));
        let mut lits = 0;
        let mut e = &e;
        while let ExprKind::Match { pat, otherwise, .. } = &e.kind {
            if let PatKind::Lit(Lit::Int(_)) = pat.kind {
                lits += 1;
            }
            e = otherwise;
        }
        assert_eq!(lits, 0, "no number pattern is left");
        // One inside a tuple stays a pattern (the Futhark and CUDA checks reject it).
        let e = parse(quote!(match p {
            (1, _) => 10,
            _ => 30,
        }));
        let ExprKind::Match { pat, .. } = &e.kind else {
            panic!("not a match")
        };
        assert!(matches!(pat.kind, PatKind::Record(_)));
    }

    #[test]
    fn rust_only_syntax_is_explained() {
        assert_eq!(
            errors(quote!(s.signum())),
            ["method calls are not PMExpr: `.signum(…)`"]
        );
        // A method PMExpr has, called with the wrong number of arguments.
        assert_eq!(
            errors(quote!(s.len(1))),
            ["method calls are not PMExpr: `.len(…)`"]
        );
        assert_eq!(
            errors(quote!(x as i64)),
            ["only `as f64` casts (of integers) are supported inside `accelerate!`"]
        );
        assert_eq!(
            errors(quote!(&mut x)),
            ["PMExpr values are immutable: `&mut` cannot be taken"]
        );
        assert_eq!(
            errors(quote!({ for i in s {} })),
            ["`for` loops are not PMExpr"]
        );
        assert_eq!(errors(quote!(1u8)), ["`u8` literals are not supported yet"]);
        assert_eq!(
            errors(quote!((s.iter(), x as i64))).len(),
            2,
            "errors are collected"
        );
        // Early exits say what to write instead.
        for tokens in [
            quote!(|x| return x),
            quote!(|x| break),
            quote!(|x| continue),
        ] {
            let e = parse_tokens(tokens).expect_err("should fail");
            assert!(
                e[0].help.as_deref().is_some_and(|h| !h.is_empty()),
                "{}",
                e[0].message
            );
        }
    }

    #[test]
    fn types() {
        let e = parse(quote!(|a: Vec<Vec<f64>>,
                              t: &pmexpr::Tensor<i64>,
                              f: impl Fn(i64) -> bool,
                              u: ()| 0));
        let ExprKind::Lam { params, .. } = &e.kind else {
            panic!()
        };
        let anns: Vec<String> = params
            .iter()
            .map(|p| format!("{:?}", p.ann.as_ref().unwrap().ann))
            .collect();
        assert_eq!(
            anns,
            [
                "Seq(Seq(Float))",
                "Tensor(Int)",
                "Arrow([Int], Bool)",
                "Tuple([])"
            ]
        );
    }
}
