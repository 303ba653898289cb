//! The procedural macros of [pmexpr](https://docs.rs/pmexpr). Depend on `pmexpr`, which
//! re-exports them with their documentation; this crate only glues the compiler in `pmexpr-core`
//! to rustc.
//!
//! The `#[pmexpr]` functions of the crate reach the macros through the file that the build hook
//! (`pmexpr_build::Build::new().compile()` in build.rs) writes into `OUT_DIR`: a macro sees only
//! its own tokens, so without the hook an `accelerate!` can use only what it defines itself. The
//! CUDA kernels of a CUDA-class site come from the hook too: `accelerate!` embeds the modules its
//! manifest names (`OUT_DIR/pmexpr/cuda/manifest.txt`) and never generates CUDA code, so without
//! the hook such a site runs on the CPU targets, and the `cuda` target fails at it saying so.

use std::path::Path;

use pmexpr_core::Context;
use pmexpr_core::codegen::rust::CudaBuild;
use pmexpr_core::registry::Registry;
use proc_macro::TokenStream;
use quote::quote;

/// What the build hook found in the crate (`#[pmexpr]` functions, derived structs), when it ran.
fn registry() -> Option<Registry> {
    let out_dir = std::env::var_os("OUT_DIR")?;
    // Only the registry the hook wrote for this package (OUT_DIR may leak from another build).
    let owner =
        std::fs::read_to_string(Path::new(&out_dir).join(Registry::OWNER_FILE_NAME)).ok()?;
    let root = std::env::var_os("CARGO_MANIFEST_DIR")?;
    if Path::new(owner.trim()) != Path::new(&root) {
        return None;
    }
    // A registry that cannot be read is treated like no hook; the hook itself reports why.
    Registry::load(Path::new(&out_dir))?.ok()
}

/// Without the hook: the location of a `#[pmexpr]` function named `name` in the crate's sources,
/// or else in the file of the macro call.
fn find_item(name: &str) -> Option<String> {
    if let Some(root) = std::env::var_os("CARGO_MANIFEST_DIR")
        && let Some(item) = pmexpr_core::registry::find_pmexpr_fn_in_sources(Path::new(&root), name)
    {
        return Some(item.location());
    }
    let file = proc_macro::Span::call_site().local_file()?;
    let shown = file.display().to_string();
    let item = pmexpr_core::registry::find_pmexpr_fn_in_file(&file, &shown, name)?;
    Some(format!("{}:{}", item.file, item.line))
}

fn with_context<T>(f: impl FnOnce(Context<'_>, Option<&Registry>) -> T) -> T {
    let registry = registry();
    // The functions, structs and aliases of the crate being compiled: another test's or
    // example's are not visible.
    let file = proc_macro::Span::call_site().local_file();
    let prelude = registry.as_ref().map(|r| r.prelude_for(file.as_deref()));
    let records = registry.as_ref().map(|r| r.records_for(file.as_deref()));
    f(
        Context {
            prelude: prelude.as_deref(),
            find_item: Some(&find_item),
            records: records.as_ref(),
        },
        registry.as_ref(),
    )
}

/// The site as the build hook names it (`file:line:column` of the `accelerate` identifier, which
/// names the CUDA modules the hook compiled): found in the registry by file and by the key of its
/// tokens ([`pmexpr_core::mangle::site_key`], independent of layout and of the toolchain's token
/// printing), else the location of the macro call (then the hook's CUDA manifest has no entry
/// for the site, which has no CUDA kernels).
fn site_name(input: &TokenStream, registry: Option<&Registry>) -> String {
    let span = proc_macro::Span::call_site();
    let (line, column) = (span.line(), span.column());
    let file = span.local_file();
    if let (Some(reg), Some(file)) = (registry, file.as_ref()) {
        let key = pmexpr_core::mangle::site_key(&input.clone().into());
        let found: Vec<_> = reg
            .sites
            .iter()
            .filter(|s| s.key == key && file.ends_with(&s.file))
            .collect();
        let one = match found.as_slice() {
            [one] => Some(*one),
            many => many.iter().copied().find(|s| s.line == line),
        };
        if let Some(s) = one {
            return s.name();
        }
    }
    let file = file.map_or_else(|| span.file(), |f| f.display().to_string());
    pmexpr_core::mangle::site_name(&file, line, column)
}

/// Accelerates an expression: checks it at compile time and runs it on the target selected at run
/// time. See the documentation of the `pmexpr` crate.
#[proc_macro]
pub fn accelerate(input: TokenStream) -> TokenStream {
    with_context(|cx, registry| {
        let cuda = CudaBuild {
            site_name: site_name(&input, registry),
            out_dir: std::env::var_os("OUT_DIR").map(Into::into),
        };
        pmexpr_core::expand_accelerate(input.into(), &quote!(::pmexpr::__private), cx, Some(&cuda))
            .into()
    })
}

/// Marks a function whose body is PMExpr: usable from every `accelerate!` of the crate (with the
/// build hook), and an ordinary Rust function for sequential code. See the documentation of the
/// `pmexpr` crate.
#[proc_macro_attribute]
pub fn pmexpr(attr: TokenStream, item: TokenStream) -> TokenStream {
    with_context(|cx, _| {
        pmexpr_core::expand_pmexpr_fn(attr.into(), item.into(), &quote!(::pmexpr::__private), cx)
            .into()
    })
}

/// Makes a struct with named fields a PMExpr record: `accelerate!` can capture it, build it with
/// a struct literal and return it. See the documentation of the `pmexpr` crate.
#[proc_macro_derive(Record)]
pub fn derive_record(item: TokenStream) -> TokenStream {
    pmexpr_core::expand_derive_record(item.into(), &quote!(::pmexpr::__private)).into()
}
