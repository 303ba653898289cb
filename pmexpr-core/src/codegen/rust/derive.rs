//! The expansion of `#[derive(pmexpr::Record)]`: the marshaling impls of a struct (see
//! [`crate::record`]), or errors at its tokens when it cannot be a PMExpr record.

use proc_macro2::TokenStream;
use quote::quote;

use crate::error::{self, Error, SpanRange};
use crate::{parse, record};

/// The impls of `#[derive(pmexpr::Record)]` on `item`; `rt` is the path of the runtime's private
/// module as the user's crate sees it.
pub fn derive_record(item: TokenStream, rt: &TokenStream) -> TokenStream {
    let s: syn::ItemStruct = match syn::parse2(item) {
        Ok(s) => s,
        Err(e) => {
            return Error::new(
                SpanRange::single(e.span()),
                "`#[derive(pmexpr::Record)]` goes on a struct with named fields",
            )
            .to_compile_error();
        }
    };
    if let Err(errors) = parse::record_def(&s, "") {
        return error::to_compile_errors(&errors);
    }
    let name = &s.ident;
    let mut fields: Vec<&syn::Field> = s.fields.iter().collect();
    fields.sort_by_key(|f| field_name(f));
    let n = fields.len();
    let cs: Vec<proc_macro2::Ident> = (0..n).map(|i| quote::format_ident!("C{}", i)).collect();
    let rs: Vec<proc_macro2::Ident> = (0..n).map(|i| quote::format_ident!("R{}", i)).collect();
    let tys: Vec<&syn::Type> = fields.iter().map(|f| &f.ty).collect();
    let idents: Vec<&syn::Ident> = fields.iter().filter_map(|f| f.ident.as_ref()).collect();
    let keys = fields
        .iter()
        .map(|f| proc_macro2::Literal::u64_suffixed(record::field_key(&field_name(f))));
    let index = (0..n).map(syn::Index::from);
    let canon = quote!(#rt::Named<(#(#rt::Field<#keys, #cs>,)*)>);
    quote! {
        const _: () = {
            #[automatically_derived]
            impl<'a #(, #cs)*> #rt::Capture<'a, #canon> for #name
            where #(#tys: #rt::Capture<'a, #cs>,)*
            {
                type Repr = (#(<#tys as #rt::Capture<'a, #cs>>::Repr,)*);
                #[inline]
                fn capture(&'a self, site: &#rt::Site, name: &str) -> Self::Repr {
                    (#(<#tys as #rt::Capture<'a, #cs>>::capture(&self.#idents, site, name),)*)
                }
            }
            #[automatically_derived]
            impl<'a #(, #cs)*> #rt::CaptureElem<'a, #canon> for #name
            where #(#tys: #rt::Capture<'a, #cs>,)*
            {
                type Repr = (#(<#tys as #rt::Capture<'a, #cs>>::Repr,)*);
                fn capture_seq(s: &'a [Self], site: &#rt::Site, name: &str) -> #rt::Seq<'a, Self::Repr> {
                    #rt::Seq::from_vec(
                        s.iter()
                            .map(|x| <Self as #rt::Capture<'a, #canon>>::capture(x, site, name))
                            .collect(),
                    )
                }
            }
            #[automatically_derived]
            impl<#(#cs, #rs),*> #rt::FromAccel<#canon, (#(#rs,)*)> for #name
            where #(#tys: #rt::FromAccel<#cs, #rs>,)*
            {
                #[inline]
                fn from_accel(r: (#(#rs,)*)) -> Self {
                    #name { #(#idents: <#tys as #rt::FromAccel<#cs, #rs>>::from_accel(r.#index),)* }
                }
            }
            // A struct that a site only moves comes back as itself.
            #[automatically_derived]
            impl #rt::ResultRust for #name {
                type Out = #name;
            }
        };
    }
}

/// A struct field's name as PMExpr sees it.
fn field_name(f: &syn::Field) -> String {
    f.ident.as_ref().map(record::field_name).unwrap_or_default()
}
