//! The compiler, stage by stage: the one driver that the macros ([`crate::expand_accelerate`],
//! [`crate::expand_pmexpr_fn`]), the build hook ([`crate::program`]) and the tests call.
//!
//! | # | stage | module | from | to |
//! |---|---|---|---|---|
//! | 1 | parse | [`crate::parse`] | the site's tokens | [`Expr`], Rust's imperative forms as [`ExprKind::Imp`](crate::ast::ExprKind::Imp) nodes |
//! | 2 | lower | [`crate::lower`] | [`Expr`] with `Imp` nodes | [`Expr`] in PMExpr (loops as recursion, `let mut` as new bindings) |
//! | | prelude | [`crate::site`] | [`Expr`] | [`Expr`] inside the `#[pmexpr]` functions it uses |
//! | 3 | resolve | [`crate::resolve`] | [`Expr`] | [`Resolved`](crate::resolve::Resolved): unique ids, intrinsics, keywords, free variables |
//! | 4 | infer | [`crate::infer`] | `Resolved` | [`Typed`](crate::infer::Typed): Hindley–Milner with records and number types |
//! | 5 | mono | [`crate::mono`] | `Typed` | [`Mono`]: one copy per instantiation, node ids; operators on `i64`, `f64`, `bool` as the paper's intrinsics, the others generic (`__num_*`) for the generators to print in the number's type |
//! | 6 | lift | [`crate::lift`] | [`Mono`] | [`Lifted`](crate::lift::Lifted): accelerated bindings, lambda lifting |
//! | 7 | extract | [`crate::extract`] | `Lifted` | the bindings the accelerated one reaches (Algorithm 1) |
//! | 8 | classify | [`crate::classify`] | `Lifted` | [`Classification`](crate::classify::Classification): P_F / P_C, so the backend |
//! | 9 | wellformed | [`crate::wellformed`] | the extracted bindings and the backend | the appendix's rules hold, or errors |
//! | 10 | optimize | [`crate::opt`] | [`Mono`] | [`Optimized`]: fused compositions in the tree and [`Facts`](crate::opt::Facts) beside it |
//! | 11 | kernels | [`crate::kernels`] | the checked program and [`Optimized`] | [`Split`](crate::kernels::Split): host code's launches and the kernels they launch, or why the site has none ([`NoKernels`](crate::kernels::NoKernels)) |
//! | 12 | print | [`crate::codegen`] | [`Optimized`] and the split | the Rust expansion (with the hook's files, [`crate::glue`]); CUDA modules and the Futhark program in the hook |
//!
//! Stages 1–9 are [`check`]: what the macro and the hook both run over a site, with the same
//! result. A site that names `backend = cpu` stops after stage 5: it has no GPU backend, so the
//! paper's passes have nothing to decide. Stages 10 and 11 ([`optimize`], [`kernels`]) the
//! macro and the hook run too: the hook prints the kernels of the split, the macro their
//! launches, and the two agree on the kernels by computing the same split, not by sharing it.
//! Every stage is a function of its input alone; errors are data ([`crate::error`]) reported at
//! the user's tokens.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;

use quote::quote;

use crate::ast::Expr;
use crate::codegen::cuda::CudaModule;
use crate::error::{Error, Errors, SpanRange};
use crate::glue::manifest::SiteModules;
use crate::kernels::{NoKernels, Split};
use crate::mono::Mono;
use crate::opt::Optimized;
use crate::record::Records;
use crate::site::{CompiledSite, Context, Failure, Forced, PreludeItem, Report, SiteProgram};
use crate::{
    classify, codegen, extract, glue, infer, lift, lower, mangle, mono, opt, parse, resolve, site,
};

/// Stages 1 and 2: the site's tokens parsed and lowered.
pub fn parse(tokens: TokenStream, records: Option<&Records>) -> Result<Expr, Errors> {
    let written = parse::syntax(tokens, records)?;
    lower::lower_expr(written)
}

/// Stages 1–9 over one site: the front end, then the paper's compile-time passes.
pub fn check(tokens: TokenStream, cx: Context<'_>) -> Result<CompiledSite, Failure> {
    let no_fv = |e| (e, Vec::new());
    let (forced, tokens) = site::split_directive(tokens).map_err(no_fv)?;
    let site_span = SpanRange::of(&tokens);
    let user = parse(tokens, cx.records).map_err(no_fv)?;
    let (prelude, expr) = site::with_prelude(user, cx).map_err(no_fv)?;
    let resolved = resolve::resolve(expr).map_err(|e| (site::unresolved(e, cx), Vec::new()))?;
    let free_vars = resolved.free_vars.clone();
    let typed = infer::infer_in(resolved, cx.records)
        .map_err(|e| (site::untyped(e, &free_vars, cx), free_vars.clone()))?;
    let mono = mono::monomorphize(typed);
    if forced == Some(Forced::Cpu) {
        return Ok(CompiledSite {
            mono,
            forced,
            program: None,
        });
    }
    let lifted = lift::lift(&mono, site_span);
    let (extracted_ids, extracted) =
        extract::extract(&BTreeSet::from([lifted.accelerated]), &lifted.bindings);
    let classification = classify::classify(&lifted);
    let report = Report {
        lifted: &lifted,
        prelude: &prelude,
        site: site_span,
    };
    let backend = site::backend_of(forced, &classification, &extracted, &report)
        .map_err(|e| (e, free_vars.clone()))?;
    let numeric = mono.numeric.clone();
    Ok(CompiledSite {
        mono,
        forced,
        program: Some(SiteProgram {
            lifted,
            extracted_ids,
            extracted,
            classification,
            backend,
            numeric,
        }),
    })
}

/// Stages 1–5 alone, for the tests of the passes that start from a [`Mono`] program.
pub fn mono(tokens: TokenStream) -> Result<Mono, Failure> {
    let expr = parse(tokens, None).map_err(|e| (e, Vec::new()))?;
    let resolved = resolve::resolve(expr).map_err(|e| (e, Vec::new()))?;
    let free_vars = resolved.free_vars.clone();
    let typed = infer::infer(resolved).map_err(|e| (e, free_vars))?;
    Ok(mono::monomorphize(typed))
}

/// Stage 10: the optimizer over a checked site's program, for the CPU targets.
pub fn optimize(site: &CompiledSite) -> Optimized {
    opt::optimize(&site.mono)
}

/// Stage 11: the kernel split of a checked site's program ([`crate::kernels`]), from its
/// optimized host code; what the macro and the hook both compute, with the same result.
pub fn kernels(program: &SiteProgram, optimized: &Optimized) -> Result<Split, NoKernels> {
    crate::kernels::split(program, optimized)
}

/// Stages 10–12 of a CUDA-class site for the build hook: its kernel split, its modules
/// (one per instantiation of its number types, the default first) and the manifest's record of
/// them. `Err`: the site runs on the CPU targets, and the text says why (the hook's warning,
/// after `accelerate! at <site> `).
pub fn cuda_modules(
    site: &CompiledSite,
    program: &SiteProgram,
    site_name: &str,
) -> Result<(SiteModules, Vec<CudaModule>), String> {
    let split = kernels(program, &optimize(site)).map_err(|e| e.to_string())?;
    let modules = codegen::cuda::site_modules(program, &split, site_name).map_err(|e| {
        format!("cannot run on the CUDA backend and will run on the CPU targets: {e}")
    })?;
    Ok((
        glue::cuda::record(&split, &modules, &program.numeric),
        modules,
    ))
}

/// Stages 1–12 for the macro: the expansion of `accelerate!(input)`, the generated code or the
/// errors at the user's tokens (see [`crate::expand_accelerate`]).
pub fn expand(
    input: TokenStream,
    rt: &TokenStream,
    cx: Context<'_>,
    cuda: Option<&codegen::rust::CudaBuild>,
) -> TokenStream {
    // How the hook's manifest names the site's tokens (before they are consumed).
    let key = mangle::site_key(&input);
    match check(input, cx) {
        Ok(site) => {
            let optimized = optimize(&site);
            let (host, futhark) = match (cuda, &site.program) {
                (Some(build), Some(program)) => (
                    glue::cuda::cuda_site(&kernels(program, &optimized), build, key, rt),
                    glue::futhark::futhark_host(program, build),
                ),
                _ => (None, None),
            };
            codegen::rust::generate_site(&optimized, rt, false, host.as_ref(), futhark.as_ref())
        }
        Err((errors, free_vars)) => codegen::rust::error_expansion(&errors, &free_vars),
    }
}

/// Stages 1–12 for `#[pmexpr] fn …`: the function, its body compiled for the sequential target
/// (see [`crate::expand_pmexpr_fn`]).
pub fn expand_fn(
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
    let sig = &f.sig;
    let checked = parse::pmexpr_fn_params(&attr, &f);
    let attrs = &f.attrs;
    let vis = &f.vis;
    let name = &sig.ident;
    let fail = |errors: &[Error], free_vars: &[resolve::FreeVar]| {
        let body = codegen::rust::error_expansion(errors, free_vars);
        quote!(#(#attrs)* #vis #sig { #body })
    };
    let args = match checked {
        Ok(args) => args,
        Err(errors) => return fail(&errors, &[]),
    };
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
    let calls_back = |errors: &Errors| errors.iter().any(|e| e.kind.names(&name_str));
    let compiled = match check(site.clone(), alone) {
        Err((errors, _)) if cx.prelude.is_some() && calls_back(&errors) => check(site, cx),
        other => other,
    };
    match compiled {
        Ok(site) => {
            let body = codegen::rust::generate_site(&optimize(&site), rt, true, None, None);
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

/// Stages 1 and 2 for the passes' tests, with no derived structs.
#[cfg(test)]
pub(crate) fn parse_tokens(tokens: TokenStream) -> Result<Expr, Errors> {
    parse(tokens, None)
}

/// `#[pmexpr]` functions given as `(name, source)`, as the hook would record them.
#[cfg(test)]
fn test_prelude(items: &[(&str, &str)]) -> Vec<PreludeItem> {
    items
        .iter()
        .map(|(name, source)| PreludeItem {
            name: name.to_string(),
            location: format!("src/lib.rs ({name})"),
            source: source.to_string(),
        })
        .collect()
}

/// Compiles a site for tests, with `#[pmexpr]` functions given as `(name, source)`.
#[cfg(test)]
pub(crate) fn compile_for_test(
    tokens: TokenStream,
    items: &[(&str, &str)],
) -> Result<CompiledSite, Errors> {
    let prelude = test_prelude(items);
    check(
        tokens,
        Context {
            prelude: Some(&prelude),
            find_item: None,
            records: None,
        },
    )
    .map_err(|(e, _)| e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use quote::quote;

    const EVEN: (&str, &str) = (
        "is_even",
        "fn is_even(n: i64) -> bool { if n == 0 { true } else { is_odd(n - 1) } }",
    );
    const ODD: (&str, &str) = (
        "is_odd",
        "fn is_odd(n: i64) -> bool { if n == 0 { false } else { is_even(n - 1) } }",
    );

    #[test]
    fn mutually_recursive_pmexpr_functions_on_cuda_and_cpu_sites() {
        let cuda = compile_for_test(
            quote!(par_loop(n, |i| tensor_set(
                t,
                [i],
                if is_even(i) { 1 } else { 0 }
            ))),
            &[EVEN, ODD],
        );
        assert!(cuda.is_ok(), "{:?}", cuda.err().map(|e| e[0].text()));
        let cpu = compile_for_test(quote!(backend = cpu, is_odd(k)), &[EVEN, ODD]);
        assert!(cpu.is_ok(), "{:?}", cpu.err().map(|e| e[0].text()));
    }

    #[test]
    fn pmexpr_functions_use_path_constants_that_mean_the_same_everywhere() {
        let items = [
            (
                "lo",
                "fn lo(x: f64) -> f64 { x.max(f64::NEG_INFINITY) + std::f64::consts::PI }",
            ),
            (
                "top",
                "fn top(x: i32) -> i32 { if x > i32::MAX - 1 { ::core::i32::MIN } else { x } }",
            ),
        ];
        for site in [
            quote!(map(|x| lo(x), s)),
            quote!(backend = cpu, (lo(f64::NEG_INFINITY), top(k))),
            quote!(par_loop(n, |i| tensor_set(t, [i], top(tensor_get(t, [i]))))),
        ] {
            let got = compile_for_test(site.clone(), &items);
            assert!(got.is_ok(), "{site}: {:?}", got.err().map(|e| e[0].text()));
        }
        // A path that may name another item where the site is written is refused, at the site's
        // use of the function, saying why.
        let items = [("g", "fn g(x: i64) -> i64 { x + Limits::TOP }")];
        let Err(e) = compile_for_test(quote!(map(|x| g(x), s)), &items) else {
            panic!("`Limits::TOP` depends on the scope: the site must be refused");
        };
        let text = e[0].text();
        assert!(
            text.contains("the `#[pmexpr]` function `g` uses the path `Limits::TOP`, which may mean something else where `accelerate!` is written"),
            "{text}"
        );
        assert!(
            text.contains("pass any other value as a parameter"),
            "{text}"
        );
    }

    #[test]
    fn mutually_recursive_pmexpr_functions_on_a_futhark_site_are_refused() {
        let Err(e) = compile_for_test(quote!(map(|x| is_even(x), s)), &[EVEN, ODD]) else {
            panic!("Futhark has no recursion: the site must be refused");
        };
        assert_eq!(e[0].kind, ErrorKind::WellFormedness);
        assert_eq!(e[0].notes.len(), 1, "{:?}", e[0].notes);
        assert!(
            e[0].text().contains(
                "Well-formedness check failed for Futhark backend: Recursive let-expressions are not supported"
            ),
            "{}",
            e[0].text()
        );
    }

    #[test]
    fn a_pmexpr_function_expands_with_its_mutually_recursive_partner() {
        let prelude = test_prelude(&[EVEN, ODD]);
        let item: TokenStream = EVEN.1.parse().unwrap();
        let out = crate::expand_pmexpr_fn(
            TokenStream::new(),
            item,
            &quote!(::pmexpr::__private),
            Context {
                prelude: Some(&prelude),
                ..Context::default()
            },
        )
        .to_string();
        assert!(!out.contains("compile_error"), "{out}");
        // Without its partner in the crate, the call back is an unknown function.
        let alone = &prelude[..1];
        let item: TokenStream = EVEN.1.parse().unwrap();
        let out = crate::expand_pmexpr_fn(
            TokenStream::new(),
            item,
            &quote!(::pmexpr::__private),
            Context {
                prelude: Some(alone),
                ..Context::default()
            },
        )
        .to_string();
        assert!(
            out.contains("cannot find the PMExpr function `is_odd`"),
            "{out}"
        );
    }
}
