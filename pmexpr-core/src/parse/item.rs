//! What a `#[pmexpr]` item may be: a plain `fn` whose parameters have names.

use proc_macro2::TokenStream;

use crate::error::{Error, Errors, SpanRange};

/// The names of the parameters of `#[pmexpr] fn …`, or why it cannot be one (`attr`: the
/// attribute's arguments, which it takes none of).
pub fn pmexpr_fn_params(attr: &TokenStream, f: &syn::ItemFn) -> Result<Vec<syn::Ident>, Errors> {
    let sig = &f.sig;
    let mut errors: Errors = Vec::new();
    if !attr.is_empty() {
        errors.push(Error::new(
            SpanRange::of(attr),
            "`#[pmexpr]` takes no arguments",
        ));
    }
    let qualifiers = [
        (sig.constness.as_ref().map(SpanRange::of), "be `const`"),
        (sig.asyncness.as_ref().map(SpanRange::of), "be `async`"),
        (sig.unsafety.as_ref().map(SpanRange::of), "be `unsafe`"),
        (sig.abi.as_ref().map(SpanRange::of), "have an ABI"),
    ];
    for (span, what) in qualifiers {
        if let Some(span) = span {
            errors.push(Error::new(
                span,
                format!("a `#[pmexpr]` function cannot {what}"),
            ));
        }
    }
    let mut args = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Typed(t) => match &*t.pat {
                syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    args.push(p.ident.clone())
                }
                other => errors.push(
                    Error::new(
                        SpanRange::of(other),
                        "each parameter of a `#[pmexpr]` function needs a name",
                    )
                    .help("write `x: (i64, i64)` and take it apart in the body with `let (a, b) = x;`"),
                ),
            },
            syn::FnArg::Receiver(r) => errors.push(Error::new(
                SpanRange::of(r),
                "a `#[pmexpr]` function cannot take `self`",
            )),
        }
    }
    if errors.is_empty() {
        Ok(args)
    } else {
        Err(errors)
    }
}
