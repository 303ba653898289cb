//! The parser: the body of `accelerate!`, a Rust expression parsed by `syn`, to the PMExpr AST
//! (the correspondence is the language reference, `pmexpr/docs/language.md`).
//!
//! Rust syntax that has no PMExpr meaning is reported at its own tokens with the PMExpr way to say
//! it (`s.sum()` → `reduce(addi, 0, s)`, a range outside a `for` → `create`). Errors are
//! collected, so that one compilation shows all of them.
//!
//! This module holds the entry points and the parser's state (its errors and how deep it is);
//! the parser's methods are spread over one submodule per kind of syntax, as in `syn`:
//!
//! - `expr`: expressions, operators, `if` and `match`;
//! - `method`: the Rust spellings of PMExpr functions (`x.sqrt()`, `x.min(y)`, `k as f64`);
//! - `stmt`: blocks and their statements (`let`, runs of `fn` items);
//! - `func`: `fn` items and closures, and their parameter patterns;
//! - `pat`: patterns, and number patterns as the comparisons they mean;
//! - `ty`: type annotations;
//! - `structs`: `#[derive(pmexpr::Record)]` structs, their definitions, literals and patterns;
//! - `node`: the PMExpr nodes the parser builds;
//! - `span`: where a `syn` expression is, from its first and last tokens.

mod expr;
mod func;
mod imperative;
mod item;
mod method;
pub mod nesting;
mod pat;
mod span;
mod stmt;
mod structs;
mod ty;

pub use item::pmexpr_fn_params;
pub use structs::{parse_field_type, record_def};

use syn::Expr as SynExpr;

use crate::ast::{Expr, ExprKind, FnDef, Ident, NeverKind};
use crate::error::{Error, Errors, SpanRange};
use crate::node::mk;
use crate::record::Records;

/// Parses a PMExpr expression as written: its imperative forms (`let mut`, assignments, loops)
/// are [`ExprKind::Imp`] nodes, which [`crate::lower`] rewrites.
fn syntax_expr(e: &SynExpr, records: Option<&Records>) -> Result<Expr, Errors> {
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

/// The pipeline's `parse` stage ([`crate::pipeline::parse`] lowers what it gives): the token
/// stream given to `accelerate!` as written, its imperative forms as `Imp` nodes; `records` are
/// the derived structs it can name (`None` when the crate has no build hook).
pub fn syntax(tokens: proc_macro2::TokenStream, records: Option<&Records>) -> Result<Expr, Errors> {
    if tokens.is_empty() {
        return Err(vec![
            Error::new(
                SpanRange::call_site(),
                "`accelerate!` needs an expression to accelerate",
            )
            .help("for example `accelerate!(reduce(addi, 0, s))`"),
        ]);
    }
    // `syn` recurses over the tokens' nesting: measured first, refused past the limit.
    let parse = || {
        let e: SynExpr = syn::parse2(tokens.clone()).map_err(|e| {
            vec![Error::new(
                SpanRange::single(e.span()),
                format!("this is not a Rust expression: {e}"),
            )]
        })?;
        syntax_expr(&e, records)
    };
    nesting::with_parse_stack(&tokens, parse)?
}

/// Parses the source of a `#[pmexpr]` function, as the build hook recorded it.
pub fn parse_fn_source(source: &str, records: Option<&Records>) -> Result<FnDef, String> {
    let tokens: proc_macro2::TokenStream = source.parse().map_err(|e| format!("{e}"))?;
    let parse = || {
        let f: syn::ItemFn = syn::parse2(tokens.clone()).map_err(|e| e.to_string())?;
        parse_fn_item(&f, records).map_err(|e| {
            e.first()
                .map_or_else(|| "unknown error".into(), |e| e.message.clone())
        })
    };
    nesting::with_parse_stack(&tokens, parse).map_err(|e| e[0].message.clone())?
}

/// Parses a `fn` item whose body is PMExpr (a `#[pmexpr]` function).
pub fn parse_fn_item(f: &syn::ItemFn, records: Option<&Records>) -> Result<FnDef, Errors> {
    let mut p = Parser {
        records,
        ..Parser::default()
    };
    let out = p.fn_item(f);
    if p.errors.is_empty() {
        crate::lower::lower_fn(out)
    } else {
        Err(p.errors)
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
    /// Parsing a pattern whose names may be written `mut` (`let mut x`, `for mut x in`).
    allow_mut: bool,
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
}

#[cfg(test)]
mod tests;
