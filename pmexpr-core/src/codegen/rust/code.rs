//! The names generated code uses (the site, locals, temporaries, user variables), literals, and
//! the tests and field indices of patterns.

use std::str::FromStr;

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};

use super::Gen;
use crate::ast::{Lit, Pat, PatKind, VarId};
use crate::types::{Label, Type};

const SITE: &str = "__PM_SITE";

impl Gen<'_> {
    pub(super) fn site(&self) -> TokenStream {
        let s = format_ident!("{}", SITE);
        quote!(&#s)
    }

    pub(super) fn local(&self, id: VarId) -> proc_macro2::Ident {
        if let Some(x) = self.in_place.get(&id) {
            return x.clone();
        }
        let name = self
            .names
            .get(id.0 as usize)
            .map(String::as_str)
            .unwrap_or("v");
        let name = name.trim_start_matches("r#");
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format_ident!("{}_{}", clean, id.0)
    }

    pub(super) fn fresh(&mut self, what: &str) -> proc_macro2::Ident {
        self.tmp += 1;
        format_ident!("__{}{}", what, self.tmp)
    }
}

/// The tuple index of field `l` of a record of type `t`: records are tuples in label order.
pub(super) fn field_index(t: &Type, l: &Label) -> TokenStream {
    let position = match t {
        Type::Record(fs) => fs.iter().position(|(f, _)| f == l),
        _ => None,
    };
    let i = position.unwrap_or(match l {
        Label::Index(i) => *i as usize,
        Label::Name(_) => 0,
    });
    let i = syn::Index::from(i);
    quote!(#i)
}

/// A captured variable as the user wrote it: an identifier, or a place `x.f.0` (see `resolve`),
/// its fields at the end of `at` (so that rustc reports a missing field at the field).
pub fn user_place(name: &str, at: crate::error::SpanRange) -> proc_macro2::TokenStream {
    // A path constant (`f64::INFINITY`, `::std::f64::consts::PI`; see `parse`).
    if name.contains("::") {
        let lead = name
            .starts_with("::")
            .then(|| quote::quote_spanned!(at.start=> ::));
        let segments = name
            .trim_start_matches("::")
            .split("::")
            .map(|s| user_ident(s, at.start));
        return quote::quote!(#lead #(#segments)::*);
    }
    let mut parts = name.split('.');
    let base = user_ident(parts.next().unwrap_or(name), at.start);
    let span = at.end;
    let fields = parts.map(|f| match f.parse::<u32>() {
        Ok(index) => syn::Member::Unnamed(syn::Index { index, span }),
        Err(_) => syn::Member::Named(user_ident(f, span)),
    });
    quote::quote!(#base #(. #fields)*)
}

/// The Rust identifier of a user's variable: names are kept without `r#` (`r#x` and `x` are the
/// same variable in Rust), so a keyword is written raw again.
pub fn user_ident(name: &str, span: Span) -> proc_macro2::Ident {
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do",
        "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in",
        "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
        "return", "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe",
        "unsized", "use", "virtual", "where", "while", "yield",
    ];
    // `r#MAX` (a path segment, which the parser keeps as written) is `MAX`.
    let name = name.strip_prefix("r#").unwrap_or(name);
    let any = <syn::Ident as syn::ext::IdentExt>::parse_any;
    match syn::parse::Parser::parse_str(any, name) {
        _ if KEYWORDS.contains(&name) => proc_macro2::Ident::new_raw(name, span),
        // `parse_any` takes a raw identifier too (`r#r#x` stripped once): only a plain one here.
        Ok(_) if !name.starts_with("r#") => proc_macro2::Ident::new(name, span),
        // Not an identifier at all (never from the parser): a name that cannot clash.
        _ => format_ident!("__pm_invalid_name", span = span),
    }
}

/// A literal of type `t`: a number whose type the captured values fix converts at run time.
pub(super) fn lit(l: &Lit, t: &Type, rt: &TokenStream) -> TokenStream {
    match (l, t) {
        (Lit::Int(i), Type::Var(v)) => {
            let (n, site) = (Gen::numeric_param(*v), format_ident!("{}", SITE));
            return quote!(<#n as #rt::Int>::from_lit(&#site, #i));
        }
        // Both readings: the number type picks its own when the captured values fix it.
        (Lit::Float(f, g), Type::Var(v)) => {
            let n = Gen::numeric_param(*v);
            let (f, g) = (Literal::f64_suffixed(*f), f32_tokens(*g));
            return quote!(<#n as #rt::Float>::from_lit(#f, #g));
        }
        // Another of Rust's numbers than `i64` and `f64`, named in the expression: a literal of
        // its type (inference checked that an integer fits).
        (Lit::Int(i), Type::Num(n)) if !t.is_paper_ground() => {
            let digits = Literal::from_str(&format!("{}{n}", i.unsigned_abs()))
                .unwrap_or_else(|_| Literal::i128_suffixed(*i));
            return if *i < 0 {
                quote!((- #digits))
            } else {
                quote!((#digits))
            };
        }
        (Lit::Float(_, g), Type::Num(_)) if !t.is_paper_ground() => {
            let l = f32_tokens(*g);
            return quote!((#l));
        }
        _ => {}
    }
    match l {
        // Inference checked that an `i64` literal fits; otherwise rustc reports the `i128`.
        Lit::Int(i) => {
            let l = i64::try_from(*i)
                .map(Literal::i64_suffixed)
                .unwrap_or_else(|_| Literal::i128_suffixed(*i));
            quote!((#l))
        }
        Lit::Float(f, _) => {
            let l = Literal::f64_suffixed(*f);
            quote!((#l))
        }
        Lit::Bool(true) => quote!(true),
        Lit::Bool(false) => quote!(false),
        Lit::Unit => quote!(()),
    }
}

/// An `f32` as Rust tokens: a literal, or the infinity that a literal beyond `f32::MAX` reads as
/// (no literal token writes one).
fn f32_tokens(g: f32) -> TokenStream {
    if g.is_finite() {
        let l = Literal::f32_suffixed(g);
        quote!(#l)
    } else if g > 0.0 {
        quote!(::core::primitive::f32::INFINITY)
    } else if g < 0.0 {
        quote!(::core::primitive::f32::NEG_INFINITY)
    } else {
        quote!(::core::primitive::f32::NAN)
    }
}

pub(super) fn pat_test(p: &Pat, path: TokenStream, rt: &TokenStream) -> TokenStream {
    match &p.kind {
        PatKind::Wild | PatKind::Bind(_) | PatKind::Lit(Lit::Unit) => quote!(true),
        PatKind::Lit(l) => {
            let l = lit(l, &p.ty, rt);
            quote!((#path == #l))
        }
        PatKind::Record(fs) => {
            let tests: Vec<TokenStream> = fs
                .iter()
                .filter(|(_, p)| !p.irrefutable())
                .map(|(l, sub)| {
                    let idx = field_index(&p.ty, l);
                    pat_test(sub, quote!(#path.#idx), rt)
                })
                .collect();
            if tests.is_empty() {
                quote!(true)
            } else {
                quote!((#(#tests)&&*))
            }
        }
    }
}
