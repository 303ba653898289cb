//! `#[derive(pmexpr::Record)]` structs: a struct item's record definition, and the struct names,
//! literals and patterns of a site, checked against the crate's derived structs (which only the
//! build hook tells `accelerate!`).

use super::Parser;
use super::span::span;
use crate::ast::{Expr, ExprKind, Pat, PatKind};
use crate::error::{Error, Errors, SpanRange};
use crate::node::{let_in, mk, param, var};
use crate::record::{RecordDef, field_name};
use crate::types::{Annotation, Label, MAX_TUPLE, TypeAnn};

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

impl Parser<'_> {
    /// A type named by a path: a `#[derive(pmexpr::Record)]` struct, expanded to its record type.
    pub(super) fn named_type(&mut self, name: &str, t: &syn::Type) -> TypeAnn {
        if self.field_types {
            return TypeAnn::Named(name.to_string());
        }
        match self.records {
            Some(records) => match records.expand(name) {
                Ok(ann) => ann,
                Err(e) => {
                    self.errors
                        .push(Error::new(span(t), e.message()).help(e.help()));
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
                    .push(Error::new(span(path), e.message()).help(e.help()));
                StructFields::Failed
            }
        }
    }

    /// `Particle { x: e1, v: e2 }`: the record of its fields, ascribed the struct's record type
    /// when the struct is known (without the hook, the literal itself says every field).
    pub(super) fn struct_literal(&mut self, s: &syn::ExprStruct, sp: SpanRange) -> Expr {
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
    pub(super) fn struct_pattern(&mut self, s: &syn::PatStruct) -> PatKind {
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

/// A struct name in a site of a crate without the build hook, which alone tells `accelerate!` the
/// crate's derived structs.
fn no_hook_record(name: &str, at: SpanRange) -> Error {
    Error::new(
        at,
        format!(
            "`{name}` is not a PMExpr type, and `accelerate!` cannot see `#[derive(pmexpr::Record)]` structs or type aliases: this crate has no pmexpr build hook"
        ),
    )
    .help(crate::error::ADD_HOOK_HELP)
}
