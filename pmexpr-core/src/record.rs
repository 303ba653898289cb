//! Named records: structs with `#[derive(pmexpr::Record)]`.
//!
//! PMExpr records are structural (paper appendix: `{l1 = e1, …}`), so a derived struct is, inside
//! `accelerate!`, the record of its fields: `struct Particle { x: f64, v: f64 }` is the record
//! `{ v: f64, x: f64 }` (fields sorted by name, as every record's are). The struct's name appears
//! only at the boundaries:
//!
//! - in type annotations (`|p: Particle| …`) and struct literals (`Particle { x: 1.0, v: 0.0 }`),
//!   which the parser expands to the record with the struct's definition;
//! - when a captured value is used only through some of its fields (`p.x`), inference closes its
//!   type with the one derived struct that has those fields;
//! - in marshaling, where the derive implements the runtime's traits field by field. Captures name
//!   each field by [`field_key`] of its name, so a struct with other field names is rejected at the
//!   variable rather than read in the wrong order.
//!
//! The definitions reach a site through the build hook's registry (a macro sees only its own
//! tokens); without the hook a struct literal still works, since it names every field.

use std::collections::BTreeSet;

use crate::types::TypeAnn;

/// A struct with `#[derive(pmexpr::Record)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordDef {
    /// The struct's name.
    pub name: String,
    /// Its fields, in declaration order, with their types as written (other records by name).
    pub fields: Vec<(String, TypeAnn)>,
    /// Where it is defined (`file:line:column`), for messages.
    pub location: String,
}

/// A type alias of the crate (`type Real = f64;`), which a site may name wherever it writes a
/// type, derived structs' fields included.
#[derive(Debug, Clone, PartialEq)]
pub struct AliasDef {
    /// The alias's name.
    pub name: String,
    /// The type it names, as written (records by name); `Err` with the type's text when that is
    /// not a PMExpr type.
    pub ty: Result<TypeAnn, String>,
    /// Where it is defined (`file:line:column`), for messages.
    pub location: String,
}

/// The derived structs and type aliases a site can see.
#[derive(Debug, Clone, Default)]
pub struct Records {
    defs: Vec<RecordDef>,
    aliases: Vec<AliasDef>,
}

/// What a type name stands for.
enum Def<'r> {
    Struct(&'r RecordDef),
    Alias(&'r TypeAnn),
}

/// Why a struct name does not give a record type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpandError {
    /// No derived struct has this name.
    Unknown(String),
    /// The struct contains itself (through its fields).
    Recursive(String),
    /// Two derived structs of this name have different fields.
    Ambiguous(String, Vec<String>),
    /// Two type aliases of this name (or an alias and a derived struct) name different types.
    AmbiguousAlias(String, Vec<String>),
    /// A type alias of a type that is not a PMExpr type: the alias, the type's text, where.
    NotPmexprAlias(String, String, String),
    /// The struct's record type, written out, has more than [`crate::types::MAX_TYPE_SIZE`]
    /// parts (each level of structs with several fields of the one below multiplies it).
    TooLarge(String),
}

impl ExpandError {
    /// The message for a user.
    pub fn message(&self) -> String {
        match self {
            ExpandError::Unknown(n) => {
                format!(
                    "`{n}` is not a PMExpr type, a `#[derive(pmexpr::Record)]` struct nor a type alias"
                )
            }
            ExpandError::Recursive(n) => {
                format!("the record `{n}` contains itself, which PMExpr types cannot")
            }
            ExpandError::TooLarge(n) => format!(
                "the type of the record `{n}` is too large: written out, it has more than {} parts",
                crate::types::MAX_TYPE_SIZE
            ),
            ExpandError::Ambiguous(n, places) => format!(
                "two `#[derive(pmexpr::Record)]` structs are named `{n}` ({}), with different fields",
                places.join(", ")
            ),
            ExpandError::AmbiguousAlias(n, places) => format!(
                "`{n}` names different types in this crate ({})",
                places.join(", ")
            ),
            ExpandError::NotPmexprAlias(n, ty, at) => {
                format!("`{n}` is a type alias ({at}) of `{ty}`, which is not a PMExpr type")
            }
        }
    }

    /// The `help:` line for a user.
    pub fn help(&self) -> &'static str {
        match self {
            ExpandError::Unknown(_) => {
                "add `#[derive(pmexpr::Record)]` to a struct with named fields to use it inside `accelerate!`; a type alias (`type Real = f64;`) may name any PMExpr type"
            }
            ExpandError::Recursive(_) => {
                "a record cannot contain itself; use a sequence of indices"
            }
            ExpandError::TooLarge(_) => {
                "split the record into smaller ones, or pass its parts separately"
            }
            ExpandError::Ambiguous(..) | ExpandError::AmbiguousAlias(..) => {
                "give one of them another name: `accelerate!` finds types by name"
            }
            ExpandError::NotPmexprAlias(..) => {
                "PMExpr types are i64, f64, bool, (), tuples, Vec<T>, Tensor<T>, derived records and aliases of these"
            }
        }
    }
}

impl Records {
    /// The records of these definitions.
    pub fn new(defs: Vec<RecordDef>) -> Records {
        Records {
            defs,
            aliases: Vec::new(),
        }
    }

    /// These records with these type aliases.
    pub fn with_aliases(mut self, aliases: Vec<AliasDef>) -> Records {
        self.aliases = aliases;
        self
    }

    /// What `name` stands for: a derived struct, else a type alias.
    fn lookup(&self, name: &str) -> Result<Def<'_>, ExpandError> {
        let aliases: Vec<&AliasDef> = self.aliases.iter().filter(|a| a.name == name).collect();
        let Some(first) = aliases.first() else {
            return self.get(name).map(Def::Struct);
        };
        let places = || -> Vec<String> {
            let structs = self.defs.iter().filter(|d| d.name == name);
            (structs.map(|d| d.location.clone()))
                .chain(aliases.iter().map(|a| a.location.clone()))
                .collect()
        };
        if self.defs.iter().any(|d| d.name == name) || aliases.iter().any(|a| a.ty != first.ty) {
            return Err(ExpandError::AmbiguousAlias(name.to_string(), places()));
        }
        match &first.ty {
            Ok(t) => Ok(Def::Alias(t)),
            Err(text) => Err(ExpandError::NotPmexprAlias(
                name.to_string(),
                text.clone(),
                first.location.clone(),
            )),
        }
    }

    /// Every definition.
    pub fn defs(&self) -> &[RecordDef] {
        &self.defs
    }

    /// The definition of the struct `name`.
    pub fn get(&self, name: &str) -> Result<&RecordDef, ExpandError> {
        let found: Vec<&RecordDef> = self.defs.iter().filter(|d| d.name == name).collect();
        match found.as_slice() {
            [] => Err(ExpandError::Unknown(name.to_string())),
            [d] => Ok(d),
            [d, rest @ ..] if rest.iter().all(|r| r.fields == d.fields) => Ok(d),
            all => Err(ExpandError::Ambiguous(
                name.to_string(),
                all.iter().map(|d| d.location.clone()).collect(),
            )),
        }
    }

    /// The structural type of the struct `name` (its fields, with the records they name
    /// expanded), or of the type the alias `name` names.
    pub fn expand(&self, name: &str) -> Result<TypeAnn, ExpandError> {
        // Measured before it is written out: sizes multiply level by level.
        if self.size(name, &mut Vec::new(), &mut Vec::new())? > crate::types::MAX_TYPE_SIZE {
            return Err(ExpandError::TooLarge(name.to_string()));
        }
        self.expand_in(name, &mut Vec::new())
    }

    /// The number of parts of the struct `name`'s record type written out (saturating), each
    /// struct measured once (`memo`); `stack` finds a struct that contains itself.
    fn size(
        &self,
        name: &str,
        stack: &mut Vec<String>,
        memo: &mut Vec<(String, usize)>,
    ) -> Result<usize, ExpandError> {
        if let Some((_, n)) = memo.iter().find(|(m, _)| m == name) {
            return Ok(*n);
        }
        if stack.iter().any(|s| s == name) {
            return Err(ExpandError::Recursive(stack[0].clone()));
        }
        let def = self.lookup(name)?;
        stack.push(name.to_string());
        let mut n: usize = 1;
        match def {
            Def::Struct(def) => {
                for (_, t) in &def.fields {
                    n = n.saturating_add(self.ann_size(t, stack, memo)?);
                }
            }
            Def::Alias(t) => n = self.ann_size(t, stack, memo)?,
        }
        stack.pop();
        memo.push((name.to_string(), n));
        Ok(n)
    }

    fn ann_size(
        &self,
        t: &TypeAnn,
        stack: &mut Vec<String>,
        memo: &mut Vec<(String, usize)>,
    ) -> Result<usize, ExpandError> {
        let mut n: usize = 1;
        match t {
            TypeAnn::Named(name) => return self.size(name, stack, memo),
            TypeAnn::Seq(a) | TypeAnn::Tensor(a) => n += self.ann_size(a, stack, memo)?,
            TypeAnn::Arrow(ps, r) => {
                for p in ps.iter().chain([&**r]) {
                    n = n.saturating_add(self.ann_size(p, stack, memo)?);
                }
            }
            TypeAnn::Tuple(ts) => {
                for t in ts {
                    n = n.saturating_add(self.ann_size(t, stack, memo)?);
                }
            }
            TypeAnn::Record(fs) => {
                for (_, t) in fs {
                    n = n.saturating_add(self.ann_size(t, stack, memo)?);
                }
            }
            TypeAnn::Num(_) | TypeAnn::Infer => {}
        }
        Ok(n)
    }

    fn expand_in(&self, name: &str, stack: &mut Vec<String>) -> Result<TypeAnn, ExpandError> {
        if stack.iter().any(|s| s == name) {
            return Err(ExpandError::Recursive(stack[0].clone()));
        }
        let def = self.lookup(name)?;
        stack.push(name.to_string());
        let expanded = match def {
            Def::Struct(def) => (def.fields.iter())
                .map(|(f, t)| Ok((f.clone(), self.expand_ann(t, stack)?)))
                .collect::<Result<Vec<_>, ExpandError>>()
                .map(TypeAnn::Record),
            Def::Alias(t) => self.expand_ann(t, stack),
        };
        stack.pop();
        expanded
    }

    /// `t` with every struct name replaced by its record type.
    pub fn expand_ann(&self, t: &TypeAnn, stack: &mut Vec<String>) -> Result<TypeAnn, ExpandError> {
        let mut go = |t: &TypeAnn| self.expand_ann(t, stack);
        Ok(match t {
            TypeAnn::Named(n) => {
                return self.expand_in(n, stack);
            }
            TypeAnn::Seq(a) => TypeAnn::Seq(Box::new(go(a)?)),
            TypeAnn::Tensor(a) => TypeAnn::Tensor(Box::new(go(a)?)),
            TypeAnn::Arrow(ps, r) => {
                let ps = ps.iter().map(&mut go).collect::<Result<_, _>>()?;
                TypeAnn::Arrow(ps, Box::new(go(r)?))
            }
            TypeAnn::Tuple(ts) => TypeAnn::Tuple(ts.iter().map(&mut go).collect::<Result<_, _>>()?),
            TypeAnn::Record(fs) => TypeAnn::Record(
                fs.iter()
                    .map(|(f, t)| Ok((f.clone(), go(t)?)))
                    .collect::<Result<_, _>>()?,
            ),
            TypeAnn::Num(_) | TypeAnn::Infer => t.clone(),
        })
    }

    /// The derived structs whose fields include all of `fields`, as structural types, one per
    /// distinct field set (so that a struct defined twice alike is one candidate).
    pub fn with_fields(&self, fields: &BTreeSet<String>) -> Vec<(String, TypeAnn)> {
        let mut seen: Vec<BTreeSet<&str>> = Vec::new();
        let mut out = Vec::new();
        for d in &self.defs {
            let names: BTreeSet<&str> = d.fields.iter().map(|(f, _)| f.as_str()).collect();
            if fields.iter().all(|f| names.contains(f.as_str())) && !seen.contains(&names) {
                if let Ok(t) = self.expand(&d.name) {
                    out.push((d.name.clone(), t));
                }
                seen.push(names);
            }
        }
        out
    }
}

/// A field's name as PMExpr sees it (`r#type` is `type`).
pub fn field_name(ident: &syn::Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#")
        .map_or_else(|| name.clone(), str::to_string)
}

/// The key that names a field in marshaling: FNV-1a of its name. The derive and the code generator
/// compute it alike, so a captured struct must have the field names the site uses.
pub fn field_key(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::record_def;
    use crate::types::Number;

    fn def(src: &str) -> RecordDef {
        record_def(&syn::parse_str(src).unwrap(), "src/lib.rs:1:1").unwrap()
    }

    fn alias(src: &str, at: &str) -> AliasDef {
        let item: syn::ItemType = syn::parse_str(src).unwrap();
        AliasDef {
            name: item.ident.to_string(),
            ty: crate::parse::parse_field_type(&item.ty)
                .map_err(|_| quote::ToTokens::to_token_stream(&item.ty).to_string()),
            location: at.to_string(),
        }
    }

    #[test]
    fn type_aliases_name_their_types_in_fields_and_annotations() {
        let r = Records::new(vec![def("struct P { x: Real, ps: Pts }")]).with_aliases(vec![
            alias("type Real = f64;", "src/a.rs:1:6"),
            alias("type Pts = Vec<(Real, i64)>;", "src/a.rs:2:6"),
            alias("type Real = f64;", "src/b.rs:1:6"),
            alias("type Map = HashMap<String, usize>;", "src/a.rs:3:6"),
            alias("type Two = i64;", "src/a.rs:4:6"),
            alias("type Two = f64;", "src/b.rs:4:6"),
            alias("type Loop = Vec<Loop>;", "src/a.rs:5:6"),
            alias("type Ps = Vec<P>;", "src/a.rs:6:6"),
        ]);
        let want_p = TypeAnn::Record(vec![
            ("x".into(), TypeAnn::Num(Number::F64)),
            (
                "ps".into(),
                TypeAnn::Seq(Box::new(TypeAnn::Tuple(vec![
                    TypeAnn::Num(Number::F64),
                    TypeAnn::Num(Number::I64),
                ]))),
            ),
        ]);
        assert_eq!(r.expand("P").unwrap(), want_p);
        assert_eq!(
            r.expand("Real").unwrap(),
            TypeAnn::Num(Number::F64),
            "defined twice alike"
        );
        assert_eq!(r.expand("Ps").unwrap(), TypeAnn::Seq(Box::new(want_p)));
        let e = r.expand("Map").unwrap_err();
        assert_eq!(
            e.message(),
            "`Map` is a type alias (src/a.rs:3:6) of `HashMap < String , usize >`, which is not a PMExpr type"
        );
        assert!(matches!(
            r.expand("Two"),
            Err(ExpandError::AmbiguousAlias(..))
        ));
        assert!(matches!(r.expand("Loop"), Err(ExpandError::Recursive(..))));
        let with_struct = Records::new(vec![def("struct Real { a: i64 }")])
            .with_aliases(vec![alias("type Real = f64;", "src/a.rs:1:6")]);
        assert!(matches!(
            with_struct.expand("Real"),
            Err(ExpandError::AmbiguousAlias(..))
        ));
        // In a site: an annotation naming an alias, and a struct whose field is one.
        let out = site(
            quote::quote!(backend = cpu, {
                let f = |q: P, y: Real| q.x + y;
                f(p, 1.0)
            }),
            &r,
        );
        assert!(out.is_ok(), "{out:?}");
        let e = site(
            quote::quote!(backend = cpu, {
                let f = |m: Map| m;
                f(p)
            }),
            &r,
        )
        .unwrap_err();
        assert!(e.contains("`Map` is a type alias"), "{e}");
    }

    #[test]
    fn nested_records_expand() {
        let r = Records::new(vec![
            def("struct P { x: f64, v: Vec<f64> }"),
            def("struct Q { p: P, n: i64 }"),
        ]);
        let TypeAnn::Record(fs) = r.expand("Q").unwrap() else {
            panic!("a record")
        };
        assert_eq!(fs[0].0, "p");
        assert!(matches!(&fs[0].1, TypeAnn::Record(inner) if inner.len() == 2));
        assert_eq!(r.expand("Nope"), Err(ExpandError::Unknown("Nope".into())));
    }

    #[test]
    fn recursive_records_are_rejected() {
        let r = Records::new(vec![def("struct T { kids: Vec<T> }")]);
        assert_eq!(r.expand("T"), Err(ExpandError::Recursive("T".into())));
    }

    #[test]
    fn bad_structs_are_rejected_at_their_tokens() {
        for src in [
            "struct G<T> { x: T }",
            "struct T(i64);",
            "struct U { x: String }",
        ] {
            assert!(
                record_def(&syn::parse_str(src).unwrap(), "l").is_err(),
                "{src}"
            );
        }
    }

    fn site(tokens: proc_macro2::TokenStream, records: &Records) -> Result<String, String> {
        let cx = crate::site::Context {
            prelude: Some(&[]),
            find_item: None,
            records: Some(records),
        };
        match crate::pipeline::check(tokens, cx) {
            Ok(s) => Ok(s
                .mono
                .free_var_types
                .iter()
                .map(|t| t.to_string())
                .collect()),
            Err((es, _)) => Err(es.iter().map(|e| e.text()).collect::<Vec<_>>().join("\n")),
        }
    }

    fn particles() -> Records {
        Records::new(vec![
            def("struct Point { x: f64, y: f64 }"),
            def("struct Particle { pos: Point, vel: Point, mass: f64 }"),
            def("struct Point3 { x: f64, y: f64, z: f64 }"),
        ])
    }

    #[test]
    fn captured_structs_are_closed_by_their_fields() {
        let r = particles();
        // A field read inside the expression (a field of the captured `p` itself is captured alone).
        let t = site(
            quote::quote!(backend = cpu, {
                let q = p;
                q.mass
            }),
            &r,
        )
        .unwrap();
        assert_eq!(
            t,
            "{ mass: f64, pos: { x: f64, y: f64 }, vel: { x: f64, y: f64 } }"
        );
        let t = site(quote::quote!(map(|p| p.z, ps)), &r).unwrap();
        assert_eq!(t, "Vec<{ x: f64, y: f64, z: f64 }>");
        // Annotated: no guess needed.
        let t = site(quote::quote!(map(|p: Point| p.x, ps)), &r).unwrap();
        assert_eq!(t, "Vec<{ x: f64, y: f64 }>");
    }

    #[test]
    fn unclear_or_unknown_structs_are_errors() {
        let r = particles();
        let e = site(
            quote::quote!(backend = cpu, {
                let q = p;
                q.x
            }),
            &r,
        )
        .unwrap_err();
        assert!(e.contains("any of the records `Point`, `Point3`"), "{e}");
        assert!(e.contains("help: say which with a type annotation"), "{e}");
        let e = site(
            quote::quote!(backend = cpu, {
                let q = p;
                q.w
            }),
            &r,
        )
        .unwrap_err();
        assert!(
            e.contains("no `#[derive(pmexpr::Record)]` struct has the fields `w`"),
            "{e}"
        );
        let e = site(quote::quote!(backend = cpu, Point { x: 1.0 }), &r).unwrap_err();
        assert!(e.contains("missing field `y` of `Point`"), "{e}");
        let e = site(
            quote::quote!(
                backend = cpu,
                Point {
                    x: 1.0,
                    y: 2.0,
                    w: 3.0
                }
            ),
            &r,
        )
        .unwrap_err();
        assert!(e.contains("`Point` has no field `w`"), "{e}");
        let e = site(quote::quote!(backend = cpu, Point { x: 1.0, y: true }), &r).unwrap_err();
        assert!(e.contains("mismatched types"), "{e}");
        let e = site(
            quote::quote!(backend = cpu, {
                let Point { x } = p;
                x
            }),
            &r,
        )
        .unwrap_err();
        assert!(e.contains("missing field `y` of `Point`"), "{e}");
        let e = site(quote::quote!(backend = cpu, |q: Nope| q), &r).unwrap_err();
        assert!(
            e.contains("`Nope` is not a PMExpr type, a `#[derive(pmexpr::Record)]` struct nor"),
            "{e}"
        );
    }

    #[test]
    fn record_sites_are_classified_and_well_formed() {
        let r = particles();
        let cx = crate::site::Context {
            prelude: Some(&[]),
            find_item: None,
            records: Some(&r),
        };
        let tokens = quote::quote!(map(
            |p: Particle| Point {
                x: p.pos.x * p.mass,
                y: p.vel.y
            },
            ps
        ));
        let s = crate::pipeline::check(tokens, cx)
            .map_err(|(e, _)| e[0].text())
            .unwrap();
        assert_eq!(
            s.program.unwrap().backend,
            crate::classify::Backend::Futhark
        );
    }

    #[test]
    fn candidates_by_fields() {
        let r = Records::new(vec![
            def("struct P { x: f64, v: f64 }"),
            def("struct P3 { x: f64, y: f64, v: f64 }"),
        ]);
        let x: BTreeSet<String> = ["x".to_string()].into();
        assert_eq!(r.with_fields(&x).len(), 2);
        let y: BTreeSet<String> = ["y".to_string()].into();
        assert_eq!(r.with_fields(&y)[0].0, "P3");
        assert_eq!(field_key("x"), field_key("x"));
        assert_ne!(field_key("x"), field_key("v"));
    }
}
