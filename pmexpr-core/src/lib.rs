//! The pmexpr compiler: from the body of an `accelerate!` to the code that runs it.
//!
//! This crate never depends on `proc_macro`, so every pass is unit-tested directly; the macros
//! (`pmexpr-macros`) and the build hook (`pmexpr-build`) both call it, through one driver:
//! [`pipeline`], which lists every stage in order with its input and output. The passes follow
//! the paper ("Expression Acceleration: Seamless Parallelization of Typed High-Level Languages",
//! appendix), one module each: [`parse`], [`lower`], [`resolve`], [`infer`], [`mono`], [`lift`],
//! [`extract`], [`classify`], [`wellformed`]; then the optimizer [`opt`], the kernel split of
//! CUDA-class sites [`kernels`], and the code generators [`codegen`] (Rust for the CPU targets and
//! the host side of the GPU targets, CUDA C++, Futhark); [`glue`] is what the build hook and the
//! macro exchange (the CUDA manifest, the files a site embeds, the Futhark glue).
//!
//! The entry points of the macros are the functions below ([`expand_accelerate`],
//! [`expand_pmexpr_fn`], [`expand_derive_record`]): each runs the pipeline on a stack deep enough
//! for its input. [`program`] is what the build hook makes of a crate (every site checked, their
//! programs merged by [`merge`], the CUDA and Futhark sources); [`registry`] is what the hook tells
//! the macros (the crate's `#[pmexpr]` functions, derived structs and sites), and
//! [`glue::manifest`] which CUDA modules it generated for each site: the macro embeds those and
//! never generates CUDA code itself.
//!
//! Beside the passes: [`ast`] and [`types`], the program and its types; [`error`], errors as
//! data with the user's spans; [`intrinsics`], the intrinsic and operator tables; [`tailrec`],
//! which recursion is a loop (for `wellformed` and the generators); [`mangle`], the site's
//! identity and every name derived from it; [`pretty`], the readable printouts of the site dumps;
//! [`record`], named records (`#[derive(pmexpr::Record)]` structs); [`site`], what the pipeline
//! knows of a site beyond its passes.

pub mod ast;
pub mod classify;
pub mod codegen;
pub mod error;
pub mod extract;
pub mod glue;
pub mod infer;
pub mod intrinsics;
pub mod kernels;
pub mod lift;
pub mod lower;
pub mod mangle;
pub mod merge;
pub mod mono;
mod node;
pub mod opt;
pub mod parse;
pub mod pipeline;
pub mod pretty;
pub mod program;
pub mod record;
pub mod registry;
pub mod resolve;
pub mod site;
pub mod tailrec;
pub mod types;
pub mod wellformed;

use proc_macro2::TokenStream;

use crate::error::Errors;
use crate::mono::Mono;
pub use crate::site::{Context, PreludeItem};

/// The stack every entry point runs its passes on, besides what the depth of its tree needs.
const STACK_BASE: usize = 16 << 20;
/// The stack per level of the tree the passes recurse over, at opt-level 0 (the build cargo gives
/// proc macros and build scripts; an optimized build needs a fraction): measured between 8 and
/// 10 KiB for the deepest chains (`examples/compile_cost.rs` in the `robust` profile: statements,
/// `let`s, `fn` items, `match` arms, through the macro and through the hook), 24 KiB for a
/// margin. The stack is only reserved: untouched pages cost nothing.
const STACK_PER_LEVEL: usize = 24 << 10;
/// The levels of the tree per level of nesting the parser accepts (a binary operator is one
/// level of the parser's, and a few of the tree's once desugared and monomorphized).
const LEVELS_PER_NESTING: usize = 4;

/// Runs `f` on a stack deep enough for passes over trees of `levels` levels (see
/// [`stack_levels`]), so that no input overflows rustc's 8 MiB main-thread stack: nesting is
/// bounded by [`parse::MAX_DEPTH`], but a chain of `let`s, `match` arms or statements is as
/// deep as it is long. The stack is reserved, not touched: only the pages the passes use take
/// memory; the current one is used when enough of it is left.
pub fn with_stack<R>(levels: usize, f: impl FnOnce() -> R) -> R {
    let size = STACK_BASE.saturating_add(levels.saturating_mul(STACK_PER_LEVEL));
    stacker::maybe_grow(size, size, f)
}

/// The depth of the tree the passes may build from `input` (a bound, measured on the tokens
/// without recursion: see [`parse::nesting`]).
pub fn stack_levels(input: &TokenStream) -> usize {
    let (nesting, _) = parse::nesting::measure(input, usize::MAX);
    let nested = nesting.depth.min(parse::MAX_DEPTH);
    nesting
        .chains
        .saturating_add(nested.saturating_mul(LEVELS_PER_NESTING))
}

/// [`stack_levels`] of source text, without lexing it: every `;`, `,`, `=>` and `fn` may make a
/// level (a bound for the `#[pmexpr]` functions a site may include, and for the hook's sites).
pub fn stack_levels_of_text(text: &str) -> usize {
    let b = text.as_bytes();
    let chains = b.iter().filter(|c| matches!(c, b';' | b',')).count()
        + text.matches("=>").count()
        + text.matches("fn").count();
    chains.saturating_add(parse::MAX_DEPTH * LEVELS_PER_NESTING)
}

/// The levels the `#[pmexpr]` functions a site may include add to its tree (they are parsed with
/// it).
fn prelude_levels(cx: &Context<'_>) -> usize {
    cx.prelude.map_or(0, |p| {
        p.iter().map(|i| stack_levels_of_text(&i.source)).sum()
    })
}

/// Runs stages 1–5 of the [`pipeline`] over the body of one `accelerate!` (see
/// [`pipeline::check`] for stages 1–9).
///
/// On failure, returns the errors and the captured variables found so far.
pub fn compile_site(input: TokenStream) -> Result<Mono, (Errors, Vec<resolve::FreeVar>)> {
    with_stack(stack_levels(&input), || pipeline::mono(input))
}

/// The expansion of `accelerate!(input)`: the generated code, or the errors. `rt` is the path of
/// the runtime's private module as the user's crate sees it.
///
/// `cuda` names the site as the build hook does and says where the hook wrote its output: the
/// CUDA manifest ([`glue::manifest`]), whose module files a CUDA-class site embeds — the macro
/// never generates CUDA code — and the Futhark glue. Without it a site has no GPU targets; with
/// it, a CUDA-class site the manifest does not record runs on the CPU targets, and the `cuda` and
/// `cuda-emulator` targets fail at the site saying that the build hook is needed.
pub fn expand_accelerate(
    input: TokenStream,
    rt: &TokenStream,
    cx: Context<'_>,
    cuda: Option<&codegen::rust::CudaBuild>,
) -> TokenStream {
    let levels = stack_levels(&input).saturating_add(prelude_levels(&cx));
    with_stack(levels, || pipeline::expand(input, rt, cx, cuda))
}

/// The expansion of `#[pmexpr] fn …`: the same function, whose body is the PMExpr body compiled
/// for the sequential target (the debug target in debug mode), so that sequential Rust code calls
/// it like any function. Errors are reported at the function's own tokens.
pub fn expand_pmexpr_fn(
    attr: TokenStream,
    item: TokenStream,
    rt: &TokenStream,
    cx: Context<'_>,
) -> TokenStream {
    let levels = (stack_levels(&attr).saturating_add(stack_levels(&item)))
        .saturating_add(prelude_levels(&cx));
    with_stack(levels, || {
        // `syn` recurses over the item's nesting: measured first, refused past the limit (and
        // the item not given back to rustc, whose own passes recurse over it too).
        let guarded = parse::nesting::with_parse_stack(&item.clone(), || {
            pipeline::expand_fn(attr, item, rt, cx)
        });
        guarded.unwrap_or_else(|errors| error::to_compile_errors(&errors))
    })
}

/// The expansion of `#[derive(pmexpr::Record)]`: the marshaling impls of the struct (see
/// [`record`]), or errors at its tokens when it cannot be a PMExpr record.
pub fn expand_derive_record(item: TokenStream, rt: &TokenStream) -> TokenStream {
    with_stack(stack_levels(&item), || {
        let guarded = parse::nesting::with_parse_stack(&item.clone(), || {
            codegen::rust::derive::derive_record(item, rt)
        });
        guarded.unwrap_or_else(|errors| error::to_compile_errors(&errors))
    })
}
