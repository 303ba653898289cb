//! The procedural macros of [pmexpr](https://docs.rs/pmexpr). Depend on `pmexpr`, which
//! re-exports them with their documentation; this crate only glues the compiler in `pmexpr-core`
//! to rustc.

use proc_macro::TokenStream;
use quote::quote;

/// Accelerates an expression: checks it at compile time and runs it on the target selected at run
/// time. See the documentation of the `pmexpr` crate.
#[proc_macro]
pub fn accelerate(input: TokenStream) -> TokenStream {
    pmexpr_core::expand_accelerate(input.into(), &quote!(::pmexpr::__private)).into()
}
