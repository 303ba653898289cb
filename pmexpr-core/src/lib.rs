//! The pmexpr compiler: from the body of an `accelerate!` to the code that runs it.
//!
//! This crate never depends on `proc_macro`, so every pass is unit-tested directly; the macros
//! (`pmexpr-macros`) and the build hook (`pmexpr-build`) both call it. The passes, one module each,
//! follow the paper ("Expression Acceleration: Seamless Parallelization of Typed High-Level
//! Languages", appendix):
//!
//! 1. [`parse`]: the Rust tokens, parsed by `syn`, to the PMExpr [`ast`];
//! 2. [`resolve`]: unique identifiers, intrinsics and keywords, free variables;
//! 3. [`infer`]: Hindley–Milner type inference; an operator (`a + b`, `-a`), which the parser
//!    writes as its generic intrinsic (`__num_add` …), is checked with the operator's messages;
//! 4. [`mono`]: monomorphization and normalization; an operator on `i64`, `f64` or `bool`
//!    becomes the intrinsic of its operands' type (`addi`, `addf` …), while the bit operators and
//!    operators on other numbers stay generic (`__num_*`), which the generators print in the
//!    number's type;
//! 5. [`lift`]: accelerated bindings and lambda lifting (free non-function variables become
//!    parameters);
//! 6. [`extract`]: Algorithm 1, only what each accelerated binding reaches (shared between sites);
//! 7. [`classify`]: the backend class, `P_F` (Futhark) or `P_C` (CUDA);
//! 8. [`wellformed`]: the common, CUDA and Futhark well-formedness rules;
//! 9. [`opt`]: the optimizer, tree-to-tree passes over the monomorphic program for the CPU
//!    targets (inlining, maps of rows, fusion, folds that stop early, loops' bounds checks): what
//!    they decide is data in the tree and beside it, which the Rust generator prints;
//! 10. [`codegen`]: Rust for the CPU targets and the host side of the GPU targets, CUDA C++ for
//!     the CUDA-class sites, Futhark for the Futhark-class sites.
//!
//! [`site::compile`] runs the whole pipeline over one site; [`program`] is what the build hook
//! makes of a crate (every site compiled, their programs merged by [`merge`], the CUDA and
//! Futhark sources); [`registry`] is what the hook tells the macros (the crate's `#[pmexpr]`
//! functions, derived structs and sites), and [`cuda_manifest`] which CUDA modules it generated
//! for each site: the macro embeds those and never generates CUDA code itself.
//!
//! Beside the passes: [`ast`] and [`types`], the program and its types; [`error`], errors with
//! the user's spans; [`intrinsics`], the intrinsic and operator tables; [`tailrec`], which
//! recursion is a loop (for `wellformed` and the generators); [`mangle`], the site's identity and
//! every name derived from it; [`pretty`], the readable printouts of the site dumps; [`record`],
//! named records (`#[derive(pmexpr::Record)]` structs).

pub mod ast;
pub mod classify;
pub mod codegen;
pub mod cuda_manifest;
pub mod error;
pub mod extract;
pub mod infer;
pub mod intrinsics;
pub mod lift;
pub mod lower;
pub mod mangle;
pub mod merge;
pub mod mono;
mod node;
pub mod opt;
pub mod parse;
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
use quote::quote;

use crate::error::{Error, Errors, SpanRange};
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

/// Runs the front end and the middle passes over the body of one `accelerate!` (no
/// classification: see [`site::compile`] for the whole pipeline).
///
/// On failure, returns the errors and the captured variables found so far.
pub fn compile_site(input: TokenStream) -> Result<Mono, (Errors, Vec<resolve::FreeVar>)> {
    with_stack(stack_levels(&input), || compile_site_here(input))
}

fn compile_site_here(input: TokenStream) -> Result<Mono, (Errors, Vec<resolve::FreeVar>)> {
    let expr = parse::parse_tokens(input).map_err(|e| (e, Vec::new()))?;
    let resolved = resolve::resolve(expr).map_err(|e| (e, Vec::new()))?;
    let free_vars = resolved.free_vars.clone();
    let typed = infer::infer(resolved).map_err(|e| (e, free_vars))?;
    Ok(mono::monomorphize(typed))
}

/// The expansion of errors: `compile_error!`s at the user's tokens followed by a value of type `!`,
/// so that no follow-on type error hides the real ones.
fn error_expansion(errors: &[Error], free_vars: &[resolve::FreeVar]) -> TokenStream {
    let errors = error::to_compile_errors(errors);
    // Keep the captured variables used, so that no "unused variable" warning joins the errors; a
    // variable that does not exist is reported at its own name.
    let uses = free_vars.iter().map(|fv| {
        let n = codegen::rust::user_place(&fv.name, fv.uses[0]);
        quote!(let _ = &#n;)
    });
    // A closure that never returns, called: its result type is inferred from the context, so the
    // expansion fits wherever the value was expected, and, unlike a bare `loop {}`, the code after
    // it is not reported as unreachable.
    quote!({ #errors #(#uses)* #[allow(unreachable_code)] (|| loop {})() })
}

/// The expansion of `accelerate!(input)`: the generated code, or the errors. `rt` is the path of
/// the runtime's private module as the user's crate sees it.
///
/// `cuda` names the site as the build hook does and says where the hook wrote its output: the
/// CUDA manifest ([`cuda_manifest`]), whose module files a CUDA-class site embeds — the macro
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
    with_stack(levels, || expand_accelerate_here(input, rt, cx, cuda))
}

fn expand_accelerate_here(
    input: TokenStream,
    rt: &TokenStream,
    cx: Context<'_>,
    cuda: Option<&codegen::rust::CudaBuild>,
) -> TokenStream {
    // How the hook's manifest names the site's tokens (before they are consumed).
    let key = mangle::site_key(&input);
    match site::compile(input, cx) {
        Ok(site) => {
            let host = match (cuda, &site.program) {
                (Some(build), Some(program)) => {
                    codegen::rust::cuda_host::cuda_host(&site.mono, program, build, key, rt)
                }
                _ => None,
            };
            let futhark = match (cuda, &site.program) {
                (Some(build), Some(program)) => {
                    codegen::rust::futhark_host::futhark_host(program, build)
                }
                _ => None,
            };
            let optimized = opt::optimize(&site.mono);
            codegen::rust::generate_site(&optimized, rt, false, host.as_ref(), futhark.as_ref())
        }
        Err((errors, free_vars)) => error_expansion(&errors, &free_vars),
    }
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
            expand_pmexpr_fn_here(attr, item, rt, cx)
        });
        guarded.unwrap_or_else(|errors| error::to_compile_errors(&errors))
    })
}

fn expand_pmexpr_fn_here(
    attr: TokenStream,
    item: TokenStream,
    rt: &TokenStream,
    cx: Context<'_>,
) -> TokenStream {
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let err = Error::new(
                SpanRange::single(e.span()),
                "`#[pmexpr]` goes on a `fn` item whose body is PMExpr",
            )
            .to_compile_error();
            return quote!(#err #item);
        }
    };
    let mut errors: Errors = Vec::new();
    if !attr.is_empty() {
        errors.push(Error::new(
            SpanRange::of(&attr),
            "`#[pmexpr]` takes no arguments",
        ));
    }
    let sig = &f.sig;
    let qualifiers = [
        (sig.constness.as_ref().map(SpanRange::of), "be `const`"),
        (sig.asyncness.as_ref().map(SpanRange::of), "be `async`"),
        (sig.unsafety.as_ref().map(SpanRange::of), "be `unsafe`"),
        (sig.abi.as_ref().map(SpanRange::of), "have an ABI"),
    ];
    for (span, what) in qualifiers {
        if let Some(span) = span {
            errors.push(Error::new(
                span,
                format!("a `#[pmexpr]` function cannot {what}"),
            ));
        }
    }
    let mut args = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Typed(t) => match &*t.pat {
                syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    args.push(p.ident.clone())
                }
                other => errors.push(
                    Error::new(
                        SpanRange::of(other),
                        "each parameter of a `#[pmexpr]` function needs a name",
                    )
                    .help("write `x: (i64, i64)` and take it apart in the body with `let (a, b) = x;`"),
                ),
            },
            syn::FnArg::Receiver(r) => errors.push(Error::new(
                SpanRange::of(r),
                "a `#[pmexpr]` function cannot take `self`",
            )),
        }
    }
    let attrs = &f.attrs;
    let vis = &f.vis;
    let name = &sig.ident;
    let fail = |errors: &[Error], free_vars: &[resolve::FreeVar]| {
        let body = error_expansion(errors, free_vars);
        quote!(#(#attrs)* #vis #sig { #body })
    };
    if !errors.is_empty() {
        return fail(&errors, &[]);
    }
    // The body as a PMExpr `fn` item applied to the Rust parameters, which the site captures.
    let block = &f.block;
    let site = quote!(backend = cpu, { #sig #block #name(#(#args),*) });
    let name_str = name.to_string();
    let others: Option<Vec<PreludeItem>> = cx
        .prelude
        .map(|p| p.iter().filter(|i| i.name != name_str).cloned().collect());
    let alone = Context {
        prelude: others.as_deref(),
        ..cx
    };
    // The function is compiled from its own tokens (errors at them), with the other `#[pmexpr]`
    // functions as the prelude. When one of those calls this one back (mutual recursion), the
    // prelude must hold this one too, so that the group is one recursive binding: then the
    // hook's copy of it joins the prelude (the local item shadows it for the body).
    let calls_back = |errors: &Errors| {
        let missing = format!("the PMExpr function `{name_str}`");
        let uses = format!("uses `{name_str}`, which is neither");
        errors
            .iter()
            .any(|e| e.message.contains(&missing) || e.message.contains(&uses))
    };
    let compiled = match site::compile(site.clone(), alone) {
        Err((errors, _)) if cx.prelude.is_some() && calls_back(&errors) => site::compile(site, cx),
        other => other,
    };
    match compiled {
        Ok(site) => {
            let body =
                codegen::rust::generate_site(&opt::optimize(&site.mono), rt, true, None, None);
            // A parameter written `mut x` is a mutable local of the PMExpr body, which the
            // generated code gives a new name per assignment: the Rust parameter is not `mut`.
            let mut sig = sig.clone();
            for input in &mut sig.inputs {
                if let syn::FnArg::Typed(t) = input
                    && let syn::Pat::Ident(p) = &mut *t.pat
                {
                    p.mutability = None;
                }
            }
            quote!(#(#attrs)* #vis #sig { #body })
        }
        Err((errors, free_vars)) => fail(&errors, &free_vars),
    }
}

/// The expansion of `#[derive(pmexpr::Record)]`: the marshaling impls of the struct (see
/// [`record`]), or errors at its tokens when it cannot be a PMExpr record.
pub fn expand_derive_record(item: TokenStream, rt: &TokenStream) -> TokenStream {
    with_stack(stack_levels(&item), || {
        let guarded =
            parse::nesting::with_parse_stack(&item.clone(), || expand_derive_record_here(item, rt));
        guarded.unwrap_or_else(|errors| error::to_compile_errors(&errors))
    })
}

fn expand_derive_record_here(item: TokenStream, rt: &TokenStream) -> TokenStream {
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
