//! The pmexpr compiler: from the body of an `accelerate!` to the code that runs it.
//!
//! This crate never depends on `proc_macro`, so every pass is unit-tested directly; the macros
//! (`pmexpr-macros`) and the build hook (`pmexpr-build`) both call it. The passes, one module each,
//! follow the paper ("Expression Acceleration: Seamless Parallelization of Typed High-Level
//! Languages", appendix):
//!
//! 1. [`parse`]: the Rust tokens, parsed by `syn`, to the PMExpr [`ast`];
//! 2. [`resolve`]: unique identifiers, intrinsics and keywords, free variables;
//! 3. [`infer`]: Hindley–Milner type inference, operators resolved by type;
//! 4. [`mono`]: monomorphization and normalization;
//! 5. [`codegen`]: Rust code for the CPU backends.

pub mod ast;
pub mod codegen;
pub mod error;
pub mod infer;
pub mod intrinsics;
pub mod mono;
pub mod parse;
pub mod program;
pub mod registry;
pub mod resolve;
pub mod types;

use proc_macro2::TokenStream;
use quote::quote;

use crate::error::Errors;
use crate::mono::Mono;

/// Runs the front end and the middle passes over the body of one `accelerate!`.
///
/// On failure, returns the errors and the captured variables found so far.
pub fn compile_site(input: TokenStream) -> Result<Mono, (Errors, Vec<resolve::FreeVar>)> {
    let expr = parse::parse_tokens(input).map_err(|e| (e, Vec::new()))?;
    let resolved = resolve::resolve(expr).map_err(|e| (e, Vec::new()))?;
    let free_vars = resolved.free_vars.clone();
    let typed = infer::infer(resolved).map_err(|e| (e, free_vars))?;
    Ok(mono::monomorphize(typed))
}

/// The expansion of `accelerate!(input)`: the generated code, or `compile_error!`s at the user's
/// tokens followed by a value of type `!`, so that no follow-on type error hides the real ones.
/// `rt` is the path of the runtime's private module as the user's crate sees it.
pub fn expand_accelerate(input: TokenStream, rt: &TokenStream) -> TokenStream {
    match compile_site(input) {
        Ok(mono) => codegen::rust::generate_site(&mono, rt),
        Err((errors, free_vars)) => {
            let errors = error::to_compile_errors(&errors);
            // Keep the captured variables used, so that no "unused variable" warning joins the
            // errors; a variable that does not exist is reported at its own name.
            let uses = free_vars.iter().map(|fv| {
                let n = proc_macro2::Ident::new(&fv.name, fv.uses[0].start);
                quote!(let _ = &#n;)
            });
            quote!({ #errors #(#uses)* #[allow(unreachable_code)] loop {} })
        }
    }
}
