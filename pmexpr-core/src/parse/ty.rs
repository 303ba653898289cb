//! Type annotations: the Rust types that are PMExpr types (`i64`, `f64`, `bool`, tuples, `Vec<T>`,
//! `Tensor<T>`, `fn(A) -> B`, `impl Fn(A) -> B`, `_`, derived structs) to [`TypeAnn`]; other
//! types are errors that list the PMExpr ones.

use super::Parser;
use super::span::span;
use crate::error::Error;
use crate::types::{Annotation, Number, TypeAnn};

impl Parser<'_> {
    pub(super) fn annotation(&mut self, t: &syn::Type) -> Annotation {
        let ann = self.type_ann(t);
        Annotation { ann, span: span(t) }
    }

    pub(super) fn type_ann(&mut self, t: &syn::Type) -> TypeAnn {
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
                    "Vec" => match arg(self) {
                        Some(a) => TypeAnn::Seq(Box::new(a)),
                        None => self.type_error(t),
                    },
                    "Tensor" => match arg(self) {
                        Some(a) => TypeAnn::Tensor(Box::new(a)),
                        None => self.type_error(t),
                    },
                    // Every Rust number, and `bool`: its own type, computed in it.
                    _ if seg.arguments.is_none() && Number::from_rust_name(&name).is_some() => {
                        TypeAnn::Num(Number::from_rust_name(&name).unwrap_or(Number::I64))
                    }
                    "i128" | "u128" | "f16" | "f128" => {
                        self.errors.push(
                            Error::new(
                                span(t),
                                format!("`{name}` is not supported inside `accelerate!`"),
                            )
                            .help(format!(
                                "numbers inside `accelerate!` are {} (no GPU target has 128-bit or half-precision arithmetic in common)",
                                Number::arithmetic_names("and")
                            )),
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

    fn return_ann(&mut self, r: &syn::ReturnType) -> TypeAnn {
        match r {
            syn::ReturnType::Default => TypeAnn::Tuple(vec![]),
            syn::ReturnType::Type(_, t) => self.type_ann(t),
        }
    }

    fn type_error(&mut self, t: &syn::Type) -> TypeAnn {
        // The numbers from their rows, so that a new number type is named here too.
        let help = format!(
            "use a number type ({}), bool, (), tuples, Vec<T>, Tensor<T> of a number type or bool, fn(A) -> B, `#[derive(pmexpr::Record)]` structs or _",
            Number::arithmetic_names("or")
        );
        self.errors
            .push(Error::new(span(t), "this type is not a PMExpr type").help(help));
        TypeAnn::Infer
    }
}
