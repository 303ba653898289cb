//! The Rust types of PMExpr types: in generated code (`Seq<'pm, T>`, `TensorRef`, `Func`, generic
//! numbers), as the user's Rust types that captured values and results convert from and to
//! (`canonical`), and what decides how values are passed (`is_copy`).

use std::collections::HashMap;

use proc_macro2::{Literal, TokenStream};
use quote::{ToTokens, format_ident, quote};

use super::Gen;
use crate::infer::Numeric;
use crate::mono::Mono;
use crate::types::{Label, TyVar, Type};

pub(super) use crate::opt::is_copy;

/// For a result that holds values of a type the captured values fix (`Numeric::Open`): its Rust
/// type and its canonical form, as the capture function names them — an open type is the Rust
/// type of the captured value it occurs in, projected along its path there (`T0`'s elements,
/// a tuple's field), so that a derived struct that is only moved comes back as itself. `None`
/// when the result has no open type, holds a derived struct of its own, or an open type occurs
/// only inside a derived struct's fields (then the canonical conversion applies).
pub(super) fn open_result_type(
    mono: &Mono,
    rt: &TokenStream,
) -> Option<(TokenStream, TokenStream, Vec<TokenStream>)> {
    let ty = &mono.expr.ty;
    let mut vars = Vec::new();
    vars_in(ty, &mut vars);
    if !vars.iter().any(|v| is_open(*v, &mono.numeric)) || has_named_record(ty) {
        return None;
    }
    fn path_to(t: &Type, v: TyVar, path: &mut Vec<Option<usize>>) -> bool {
        match t {
            Type::Var(w) => *w == v,
            Type::Seq(a) => {
                path.push(None);
                if path_to(a, v, path) {
                    return true;
                }
                path.pop();
                false
            }
            Type::Record(fs) if matches!(fs.first(), Some((Label::Index(_), _))) => {
                for (k, (_, f)) in fs.iter().enumerate() {
                    path.push(Some(k));
                    if path_to(f, v, path) {
                        return true;
                    }
                    path.pop();
                }
                false
            }
            _ => false,
        }
    }
    fn rust(
        t: &Type,
        mono: &Mono,
        rt: &TokenStream,
        found: &HashMap<TyVar, TokenStream>,
    ) -> Option<TokenStream> {
        Some(match t {
            Type::Num(n) => {
                let n = format_ident!("{}", n.rust_name());
                quote!(#n)
            }
            Type::Seq(a) => {
                let a = rust(a, mono, rt, found)?;
                quote!(::std::vec::Vec<#a>)
            }
            Type::Tensor(a) => {
                let a = rust(a, mono, rt, found)?;
                quote!(#rt::Tensor<#a>)
            }
            Type::Record(fs) => {
                let fs = fs
                    .iter()
                    .map(|(_, t)| rust(t, mono, rt, found))
                    .collect::<Option<Vec<_>>>()?;
                quote!((#(#fs,)*))
            }
            Type::Var(v) if is_open(*v, &mono.numeric) => found.get(v)?.clone(),
            Type::Var(v) => Gen::numeric_param(*v).into_token_stream(),
            Type::Arrow(..) => return None,
        })
    }
    let mut found = HashMap::new();
    // The capture function's bounds that make the projections well-formed.
    let mut bounds = Vec::new();
    for v in vars.iter().filter(|v| is_open(**v, &mono.numeric)) {
        let (i, path) = mono.free_var_types.iter().enumerate().find_map(|(i, t)| {
            let mut path = Vec::new();
            path_to(t, *v, &mut path).then_some((i, path))
        })?;
        let t = format_ident!("T{}", i);
        bounds.push(quote!(#t: #rt::ResultRust));
        let mut proj = quote!(<#t as #rt::ResultRust>::Out);
        for step in path {
            proj = match step {
                None => {
                    bounds.push(quote!(#proj: #rt::VecElem));
                    quote!(<#proj as #rt::VecElem>::Elem)
                }
                Some(k) => {
                    let k = Literal::usize_unsuffixed(k);
                    bounds.push(quote!(#proj: #rt::TupleField<#k>));
                    quote!(<#proj as #rt::TupleField<#k>>::Field)
                }
            };
        }
        found.insert(*v, proj);
    }
    let r = rust(ty, mono, rt, &found)?;
    Some((r, canonical(ty, rt, false), bounds))
}

/// The type variables of a type.
pub(super) fn vars_in(t: &Type, out: &mut Vec<TyVar>) {
    match t {
        Type::Var(v) => out.push(*v),
        Type::Seq(a) | Type::Tensor(a) => vars_in(a, out),
        Type::Arrow(a, b) => {
            vars_in(a, out);
            vars_in(b, out);
        }
        Type::Record(fs) => fs.iter().for_each(|(_, t)| vars_in(t, out)),
        Type::Num(_) => {}
    }
}

/// Whether `v` stands for a value of any type that the captured values fix.
fn is_open(v: TyVar, numeric: &[(TyVar, Numeric)]) -> bool {
    numeric.iter().any(|(w, k)| *w == v && *k == Numeric::Open)
}

/// Whether a value of type `t` may be a nested sequence because it has a sequence of a value of
/// any type the captured values fix (which may itself be a sequence): debug mode checks it.
pub(super) fn may_nest(t: &Type, numeric: &[(TyVar, Numeric)]) -> bool {
    match t {
        Type::Seq(a) => matches!(**a, Type::Var(v) if is_open(v, numeric)) || may_nest(a, numeric),
        Type::Tensor(a) => may_nest(a, numeric),
        Type::Record(fs) => fs.iter().any(|(_, t)| may_nest(t, numeric)),
        Type::Num(_) | Type::Var(_) | Type::Arrow(..) => false,
    }
}

/// The canonical Rust type of a captured or returned PMExpr type. A number the captured values fix
/// is the capture function's generic parameter, or, in a result (`infer`), left to inference.
pub(super) fn canonical(t: &Type, rt: &TokenStream, infer: bool) -> TokenStream {
    match t {
        Type::Num(n) => {
            let n = format_ident!("{}", n.rust_name());
            quote!(#n)
        }
        Type::Seq(a) => {
            let a = canonical(a, rt, infer);
            quote!(::std::vec::Vec<#a>)
        }
        Type::Tensor(a) => {
            let a = canonical(a, rt, infer);
            quote!(#rt::Tensor<#a>)
        }
        Type::Record(fs) if matches!(fs.first(), Some((Label::Name(_), _))) => {
            // A derived struct: its fields named by key, in label order.
            let fs = fs.iter().map(|(l, t)| {
                let key = Literal::u64_suffixed(crate::record::field_key(&l.to_string()));
                let c = canonical(t, rt, infer);
                quote!(#rt::Field<#key, #c>)
            });
            quote!(#rt::Named<(#(#fs,)*)>)
        }
        Type::Record(fs) => {
            let fs = fs.iter().map(|(_, t)| canonical(t, rt, infer));
            quote!((#(#fs,)*))
        }
        // A number fixed by the Rust value: a generic parameter of the capture function.
        Type::Var(_) if infer => quote!(_),
        Type::Var(v) => {
            let n = format_ident!("N{}", v.0);
            quote!(#n)
        }
        Type::Arrow(..) => quote!(()),
    }
}

/// Whether a record with named fields (a derived struct) occurs in the type: such a result
/// converts to the Rust type the context expects (`FromAccel`), since its name is not part of it.
pub(super) fn has_named_record(t: &Type) -> bool {
    match t {
        Type::Record(fs) => fs
            .iter()
            .any(|(l, t)| matches!(l, Label::Name(_)) || has_named_record(t)),
        Type::Seq(a) | Type::Tensor(a) => has_named_record(a),
        Type::Arrow(..) | Type::Num(_) | Type::Var(_) => false,
    }
}

/// The result of applying a function of type `t` to `n` arguments.
pub(super) fn result_type(t: &Type, n: usize) -> Type {
    t.split_arrows(n).1.clone()
}

impl Gen<'_> {
    pub(super) fn numeric_param(v: TyVar) -> proc_macro2::Ident {
        format_ident!("N{}", v.0)
    }

    /// The generic parameters of the generated functions: the lifetime of the captured data, the
    /// backend, and the numbers whose type the captured values fix.
    pub(super) fn generics(&self) -> TokenStream {
        let rt = &self.rt;
        let nums = self.numeric_bounds();
        quote!(<'pm, B: #rt::Backend #(, #nums)*>)
    }

    /// [`Gen::generics`] with the bounds `extra` added to those of each open type
    /// (`Numeric::Open`): what the GPU functions need of a type they marshal.
    pub(super) fn generics_with(&self, extra: TokenStream) -> TokenStream {
        let rt = &self.rt;
        let nums = self
            .numeric_bounds()
            .into_iter()
            .zip(&self.numeric)
            .map(|(b, (_, k))| {
                if *k == Numeric::Open {
                    quote!(#b + #extra)
                } else {
                    b
                }
            });
        quote!(<'pm, B: #rt::Backend #(, #nums)*>)
    }

    /// The bounds of the numbers whose type the captured values fix (`N3: Num`).
    pub(super) fn numeric_bounds(&self) -> Vec<TokenStream> {
        let rt = &self.rt;
        self.numeric
            .iter()
            .map(|(v, k)| {
                let n = Self::numeric_param(*v);
                match k {
                    Numeric::Num => quote!(#n: #rt::Num),
                    // Numbers and `bool` only compared may be tensor elements (`Tensor<bool>`),
                    // which every scalar is.
                    Numeric::Scalar => quote!(#n: #rt::Scalar + #rt::Element),
                    Numeric::Int | Numeric::Unsigned(_) | Numeric::OfUnsigned(_) => {
                        // Its `abs_diff`'s result: `Int::Unsigned` names it.
                        match self.unsigned_of(*v) {
                            Some(u) => quote!(#n: #rt::Int<Unsigned = #u>),
                            None => quote!(#n: #rt::Int),
                        }
                    }
                    Numeric::Bits => quote!(#n: #rt::Bits + #rt::Element),
                    Numeric::Float => quote!(#n: #rt::Float),
                    // Every other bound implies `'static`; an open type may be a borrowed
                    // sequence (`Seq<'pm, i64>`), and the code names `Seq<'pm, N>` of it
                    // (`vec![c, c]`), which needs `N: 'pm`.
                    Numeric::Open => quote!(#n: #rt::Value + 'pm),
                }
            })
            .collect()
    }

    /// The Rust type of the unsigned integer of the width of number variable `v`, where the
    /// program takes an `abs_diff` of it: a variable that follows it, itself (an unsigned
    /// integer), or a known type.
    fn unsigned_of(&self, v: TyVar) -> Option<TokenStream> {
        let follower = self.numeric.iter().find_map(|(u, k)| match k {
            Numeric::Unsigned(w) if *w == v => Some(Self::numeric_param(*u).into_token_stream()),
            _ => None,
        });
        let own = self.numeric.iter().find_map(|(w, k)| match k {
            Numeric::OfUnsigned(m) if *w == v => {
                Some(format_ident!("{}", m.rust_name()).into_token_stream())
            }
            _ => None,
        });
        follower.or(own)
    }

    /// The generic arguments for calling a generated `fn` item from generated code.
    pub(super) fn generic_args(&self) -> TokenStream {
        let nums = self.numeric.iter().map(|(v, _)| Self::numeric_param(*v));
        quote!(::<B #(, #nums)*>)
    }

    /// The Rust type of values of `t`.
    pub(super) fn rty(&self, t: &Type) -> TokenStream {
        let mut out = TokenStream::new();
        self.rty_into(t, &mut out);
        out
    }

    /// Appends the Rust type of `t` to `out`: one stream for the whole type, since interpolating
    /// each level's tokens into the next copied them once per level (nested `Vec`s cost depth²).
    fn rty_into(&self, t: &Type, out: &mut TokenStream) {
        let rt = &self.rt;
        match t {
            Type::Num(n) => {
                let n = format_ident!("{}", n.rust_name());
                out.extend(quote!(#n))
            }
            Type::Seq(a) => {
                out.extend(quote!(#rt::Seq<'pm,));
                self.rty_into(a, out);
                out.extend(quote!(>));
            }
            Type::Tensor(a) => {
                out.extend(quote!(#rt::TensorRef<'pm,));
                self.rty_into(a, out);
                out.extend(quote!(>));
            }
            Type::Arrow(a, b) => {
                out.extend(quote!(#rt::Func<'pm,));
                self.rty_into(a, out);
                out.extend(quote!(,));
                self.rty_into(b, out);
                out.extend(quote!(>));
            }
            Type::Record(fs) => {
                let mut inner = TokenStream::new();
                for (_, t) in fs {
                    self.rty_into(t, &mut inner);
                    inner.extend(quote!(,));
                }
                out.extend(std::iter::once(proc_macro2::TokenTree::Group(
                    proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, inner),
                )));
            }
            Type::Var(v) => {
                let n = Self::numeric_param(*v);
                out.extend(quote!(#n));
            }
        }
    }

    /// Whether values of the type are `Copy` in generated code (and so passed by value).
    pub(super) fn is_copy(&self, t: &Type) -> bool {
        is_copy(t, &self.numeric)
    }

    /// The Rust type of a parameter of type `t`: by value or by reference.
    pub(super) fn pty(&self, t: &Type) -> TokenStream {
        let r = self.rty(t);
        if self.is_copy(t) { r } else { quote!(&#r) }
    }
}
