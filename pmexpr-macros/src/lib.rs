//! The procedural macros of pmexpr. Use them through the `pmexpr` crate.

use proc_macro::TokenStream;
use quote::quote;

/// Accelerates an expression: see the `pmexpr` crate's documentation.
#[proc_macro]
pub fn accelerate(input: TokenStream) -> TokenStream {
    pmexpr_core::expand_accelerate(input.into(), &quote!(::pmexpr::__private)).into()
}
