//! The items of a source file that the registry records: `#[pmexpr]` functions,
//! `#[derive(pmexpr::Record)]` structs and type aliases without generic parameters, found in a file's syntax tree (nested inline modules
//! included) and kept as Rust text without attributes or visibility.

use proc_macro2::Span;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::{Attribute, FnArg, Item, ItemFn, ItemStruct, ItemType, Token, Visibility};

use super::{ItemKind, RegistryItem};

/// Parses one source file into its token stream and its syntax tree, from the same tokens so
/// that their spans agree, and gives both to `f`. Like `syn::parse_file`, a byte order mark and
/// a shebang line are ignored (the shebang's newline stays, so that lines keep their numbers).
///
/// `syn` recurses over the file's nesting, and so do `f` and the drop of the tree: all of it runs
/// on a stack sized for the file's nesting (measured on its tokens first), whatever it is, since
/// rustc accepts a file that nests deeply.
pub fn parse_source<R>(
    text: &str,
    f: impl FnOnce(&proc_macro2::TokenStream, &syn::File) -> R,
) -> syn::Result<R> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // `#![attr]` is an inner attribute, not a shebang.
    let text = match text.strip_prefix("#!") {
        Some(rest) if !rest.trim_start().starts_with('[') => {
            text.find('\n').map_or("", |newline| &text[newline..])
        }
        _ => text,
    };
    // Lexed without `syn`, whose token buffer recurses over the groups.
    let tokens: proc_macro2::TokenStream = text.parse()?;
    let (nesting, _) = crate::parse::nesting::measure(&tokens, usize::MAX);
    crate::parse::nesting::on_stack_for(nesting, || {
        let file = syn::parse2(tokens.clone())?;
        Ok(f(&tokens, &file))
    })
}

/// Collects the `#[pmexpr]` functions, `Record` structs and non-generic type aliases of a parsed
/// file, in nested inline modules too (not inside function bodies or impl blocks). `file` is the path that the items
/// record; `locate` turns the span of an item's name into its 1-based (line, column), which
/// only the caller can do (it depends on where the tokens were parsed).
pub fn collect_items(
    ast: &syn::File,
    file: &str,
    locate: &dyn Fn(Span) -> (usize, usize),
) -> Vec<RegistryItem> {
    let mut out = Vec::new();
    collect_in(&ast.items, file, locate, &mut out);
    out
}

fn collect_in(
    items: &[Item],
    file: &str,
    locate: &dyn Fn(Span) -> (usize, usize),
    out: &mut Vec<RegistryItem>,
) {
    for item in items {
        let (kind, ident, source) = match item {
            Item::Fn(f) if f.attrs.iter().any(is_pmexpr_attr) => {
                (ItemKind::Fn, &f.sig.ident, fn_source(f))
            }
            Item::Struct(s) if s.attrs.iter().any(derives_record) => {
                (ItemKind::Record, &s.ident, struct_source(s))
            }
            Item::Type(t) if t.generics.params.is_empty() => {
                (ItemKind::Alias, &t.ident, alias_source(t))
            }
            Item::Mod(m) => {
                if let Some((_, content)) = &m.content {
                    collect_in(content, file, locate, out);
                }
                continue;
            }
            _ => continue,
        };
        let (line, column) = locate(ident.span());
        out.push(RegistryItem {
            kind,
            name: ident.to_string(),
            file: file.to_owned(),
            line,
            column,
            source,
        });
    }
}

/// Whether a path is `name`, `pmexpr::name` or `::pmexpr::name`.
fn is_pmexpr_path(path: &syn::Path, name: &str) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [last] => path.leading_colon.is_none() && last == name,
        [krate, last] => krate == "pmexpr" && last == name,
        _ => false,
    }
}

/// `#[pmexpr]`, `#[pmexpr::pmexpr]` or `#[::pmexpr::pmexpr]` (with or without arguments).
fn is_pmexpr_attr(attr: &Attribute) -> bool {
    is_pmexpr_path(attr.path(), "pmexpr")
}

/// A `#[derive(…)]` whose list contains `Record`, `pmexpr::Record` or `::pmexpr::Record`.
fn derives_record(attr: &Attribute) -> bool {
    if !attr.path().is_ident("derive") {
        return false;
    }
    attr.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)
        .is_ok_and(|paths| paths.iter().any(|p| is_pmexpr_path(p, "Record")))
}

/// A function as text: signature and body, without visibility or attributes.
fn fn_source(f: &ItemFn) -> String {
    let mut f = f.clone();
    f.attrs.clear();
    f.vis = Visibility::Inherited;
    for input in &mut f.sig.inputs {
        match input {
            FnArg::Receiver(r) => r.attrs.clear(),
            FnArg::Typed(t) => t.attrs.clear(),
        }
    }
    f.to_token_stream().to_string()
}

/// A type alias as text, without visibility or attributes.
fn alias_source(t: &ItemType) -> String {
    let mut t = t.clone();
    t.attrs.clear();
    t.vis = Visibility::Inherited;
    t.to_token_stream().to_string()
}

/// A struct as text, without visibility or attributes (on the struct and its fields).
fn struct_source(s: &ItemStruct) -> String {
    let mut s = s.clone();
    s.attrs.clear();
    s.vis = Visibility::Inherited;
    for field in s.fields.iter_mut() {
        field.attrs.clear();
        field.vis = Visibility::Inherited;
    }
    s.to_token_stream().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_marked_items_and_strips_attributes() {
        let text = "
            /// Doc.
            #[inline] #[pmexpr] pub(crate) fn g(#[allow(unused)] x: i64) -> i64 { addi(x, 1) }
            fn plain() {}
            #[derive(Debug, pmexpr::Record)]
            pub struct P { /// x.
                pub x: i64, y: f64 }
            #[derive(Debug)] struct NotARecord;
            #[derive(other::Record)] struct AlsoNot;
            #[derive(Record)] struct T(pub i64);
            mod m { mod n { #[::pmexpr::pmexpr] fn deep() {} } }
            #[cfg(test)] fn f() { #[pmexpr] fn inside_body_skipped() {} }
            #[x::pmexpr] fn not_ours() {}
            /// An alias.
            pub type Real = f64;
            type Generic<T> = Vec<T>;
        ";
        let items =
            parse_source(text, |_, ast| collect_items(ast, "src/lib.rs", &|_| (1, 1))).unwrap();
        let summary: Vec<_> = items.iter().map(|i| (i.kind, i.name.as_str())).collect();
        assert_eq!(
            summary,
            [
                (ItemKind::Fn, "g"),
                (ItemKind::Record, "P"),
                (ItemKind::Record, "T"),
                (ItemKind::Fn, "deep"),
                (ItemKind::Alias, "Real")
            ]
        );
        assert_eq!(items[4].source, "type Real = f64 ;");
        assert_eq!(items[0].source, "fn g (x : i64) -> i64 { addi (x , 1) }");
        assert_eq!(items[1].source, "struct P { x : i64 , y : f64 }");
        assert_eq!(items[2].source, "struct T (i64) ;");
        assert_eq!(items[3].file, "src/lib.rs");
    }

    #[test]
    fn parse_source_skips_bom_and_shebang_but_not_inner_attributes() {
        let items = parse_source(
            "\u{feff}#!/usr/bin/env run\n#[pmexpr] fn g() {}",
            |_, ast| ast.items.len(),
        );
        assert_eq!(items.unwrap(), 1);
        let attrs = parse_source("#![allow(unused)]\nfn g() {}", |_, ast| ast.attrs.len());
        assert_eq!(attrs.unwrap(), 1);
        assert!(parse_source("fn g( {}", |_, _| ()).is_err());
        // Nesting that rustc accepts is parsed, on a stack sized for it.
        let deep = format!("fn g() {{ {}1{} }}", "(".repeat(20_000), ")".repeat(20_000));
        assert_eq!(parse_source(&deep, |_, ast| ast.items.len()).unwrap(), 1);
    }
}
