//! The expansion of one site: the captured variables, the accelerated function generic over the
//! CPU backend, the choice of target at run time (with the host functions of the GPU targets),
//! and the result converted back to Rust.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};

use super::code::user_place;
use super::types::{canonical, has_named_record, is_copy, may_nest, open_result_type, vars_in};
use super::{Binding, CudaSite, FutharkHost, Gen};
use crate::ast::ExprKind;
use crate::infer::Numeric;
use crate::intrinsics::Intrinsic;
use crate::mono::Mono;
use crate::opt::Optimized;

/// Generates the expansion of one `accelerate!` site, optimized ([`crate::opt`]): an expression
/// block that captures the free variables, runs the accelerated function on the selected backend
/// and converts the result.
/// `rt` is the path of the runtime's private module (`::pmexpr::__private`).
///
/// With `sequential`, the site runs on the sequential target (the debug target in debug mode)
/// whatever the environment selects: the body of a `#[pmexpr]` function called from Rust code.
///
/// With `cuda` (a CUDA-class site whose kernels the build hook generated), the site also gets host
/// code for the CUDA targets: the same expression, run sequentially, where each `par_loop` of the
/// host code — loops, branches, closures and `fn` items included — launches its kernel
/// (the site's kernel split, [`crate::kernels`]); it falls back to the CPU code when the runtime
/// says so. A CUDA-class site without kernels
/// ([`CudaSite::Missing`]) runs on the CPU targets, and fails at the site under the `cuda` and
/// `cuda-emulator` targets (said once under `auto`).
///
/// With `futhark` (a Futhark-class site), the `futhark` and `auto` targets call the site's entry
/// point in the Futhark library through the glue the build hook generated
/// ([`crate::glue::futhark`]), falling back to the CPU code when the runtime says so; without glue,
/// the site runs on the CPU (said once on stderr under the `futhark` target).
///
/// A type the captured values fix and the expression only moves or counts (`Numeric::Open`)
/// takes part in choosing the module or entry point like a number type variable: the GPU
/// functions ask the runtime (`open_instantiation`) for the name of the Rust type it is, and
/// return `None` (the CPU code runs, said once) where it is not a number or `bool`.
pub fn generate_site(
    program: &Optimized,
    rt: &TokenStream,
    sequential: bool,
    cuda: Option<&CudaSite>,
    futhark: Option<&FutharkHost>,
) -> TokenStream {
    let mono = &program.mono;
    let mut g = Gen::new(&program.names, rt, &mono.numeric, &program.cpu.facts, None);
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut checks = Vec::new();
    // The captures go through one generic function whose parameters name the numbers that the
    // captured values fix, so that two captured values that must have the same number type are
    // checked against each other, and a mismatch is reported at a variable.
    let (mut cap_params, mut cap_bounds, mut cap_args, mut cap_calls, mut cap_locals) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // The captured variables whose `.len()` the expression takes: each is asked to be a sequence
    // by a bound of its own, so that a struct with a `len` of its own (`self.len()`) is reported
    // as what the call was taken for.
    let mut len_receivers = crate::ast::IdSet::default();
    mono.expr.walk(&mut |e| {
        if let ExprKind::App { func, args } = &e.kind
            && matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Len))
            && let [arg] = &args[..]
            && let ExprKind::Var { ident, .. } = &arg.kind
        {
            len_receivers.insert(ident.id);
        }
    });
    for (i, (fv, ty)) in mono.free_vars.iter().zip(&mono.free_var_types).enumerate() {
        let local = g.local(fv.id);
        let pty = g.pty(ty);
        params.push(quote!(#local: #pty));
        let by_ref = !is_copy(ty, &mono.numeric);
        g.bindings.insert(
            fv.id,
            Binding::Value {
                by_ref,
                ty: ty.clone(),
            },
        );
        let cap = format_ident!("__pm_cap{}", i, span = Span::mixed_site());
        let canon = canonical(ty, rt, false);
        let span = fv.uses[0].start;
        let user = user_place(&fv.name, fv.uses[0]);
        let name = &fv.name;
        let (t, r, v) = (
            format_ident!("T{}", i),
            format_ident!("R{}", i),
            format_ident!("v{}", i),
        );
        // First, so that rustc reports it first.
        let len = if len_receivers.contains(&fv.id) {
            quote!(#rt::LenReceiver +)
        } else {
            quote!()
        };
        cap_params.push(quote!(#t: ?Sized + #len #rt::Capture<'a, #canon, Repr = #r>, #r));
        cap_bounds.push(quote!(#v: &'a #t));
        cap_calls.push(quote!(#rt::Capture::capture(#v, site, #name)));
        cap_args.push(quote_spanned!(span=> &#user));
        cap_locals.push(cap.clone());
        args.push(if by_ref { quote!(&#cap) } else { quote!(#cap) });
        if ty.has_nested_seq() || may_nest(ty, &mono.numeric) {
            let what = format!("captured variable `{name}`");
            checks.push(quote!(if B::CHECKS { #rt::check_regular(&__PM_SITE, #what, #local); }));
        }
    }
    let host = match cuda {
        Some(CudaSite::Kernels(host)) if !sequential => Some(host),
        _ => None,
    };
    // Host code the split accepted is printed; a kernel no launch reached is a bug, which the
    // CUDA targets report at the site like a missing module.
    let (cuda_fn, unprinted) = match host.map(|h| (g.cuda_body(&program.host, h), h)) {
        Some((Ok(body), h)) => (Some((body, &h.kernels)), None),
        Some((Err(why), _)) => (None, Some(why)),
        None => (None, None),
    };
    let body = g.value(&program.cpu.expr);
    let select = if sequential {
        quote!(#rt::select_sequential)
    } else {
        quote!(#rt::select)
    };
    let ret = g.rty(&mono.expr.ty);
    // A result holding values of a type the captured values fix (`Numeric::Open`) comes back as
    // the Rust type they were captured from: the capture function names it.
    let open_result = open_result_type(mono, rt);
    let convert = if open_result.is_some() {
        quote!(#rt::from_accel_as(__pm_marker, __pm_result))
    } else if has_named_record(&mono.expr.ty) {
        // Named by its canonical form, so that only a type with the result's field names fits.
        let canon = canonical(&mono.expr.ty, rt, true);
        quote!(#rt::from_accel::<#canon, _, _>(__pm_result))
    } else {
        quote!(#rt::IntoRust::into_rust(__pm_result))
    };
    let generics = g.generics();
    let infer_numeric: Vec<TokenStream> = mono.numeric.iter().map(|_| quote!(_)).collect();
    // In the capture function an open variable is the canonical Rust type (`Vec<i64>`), not the
    // generated code's representation of it (`Seq<i64>`): it has no bound there.
    let numeric_bounds: Vec<TokenStream> = g
        .numeric_bounds()
        .into_iter()
        .zip(&g.numeric)
        .map(|(b, (v, k))| match k {
            Numeric::Open => Gen::numeric_param(*v).into_token_stream(),
            _ => b,
        })
        .collect();
    let cap_locals_types: Vec<proc_macro2::Ident> = (0..cap_locals.len())
        .map(|i| format_ident!("R{}", i))
        .collect();
    let captures = if cap_locals.is_empty() {
        quote!()
    } else if let Some((rust, canon, bounds)) = &open_result {
        quote! {
            #[allow(non_snake_case, clippy::all, clippy::type_complexity)]
            #[inline(always)]
            fn __pm_capture<'a #(, #numeric_bounds)* #(, #cap_params)*>(#(#cap_bounds,)* site: &#rt::Site) -> (#(#cap_locals_types,)* ::core::marker::PhantomData<fn() -> (#rust, #canon)>)
            where #(#bounds,)*
            {
                (#(#cap_calls,)* ::core::marker::PhantomData)
            }
            #[allow(clippy::needless_borrow, clippy::needless_borrows_for_generic_args)]
            let (#(#cap_locals,)* __pm_marker) = __pm_capture(#(#cap_args,)* &__PM_SITE);
        }
    } else {
        quote! {
            #[allow(non_snake_case, clippy::all)]
            #[inline(always)]
            fn __pm_capture<'a #(, #numeric_bounds)* #(, #cap_params)*>(#(#cap_bounds,)* site: &#rt::Site) -> (#(#cap_locals_types,)*) {
                (#(#cap_calls,)*)
            }
            #[allow(clippy::needless_borrow, clippy::needless_borrows_for_generic_args)]
            let (#(#cap_locals,)*) = __pm_capture(#(#cap_args,)* &__PM_SITE);
        }
    };
    // The Rust types of the number type variables, in order: how the runtime picks the CUDA
    // module or the Futhark entry point generated for them. A type the captured values fix and
    // the expression only moves (`Numeric::Open`) picks one too where it is a number or `bool`;
    // otherwise the GPU function returns `None` (the site runs on the CPU, said once).
    let names: Vec<TokenStream> = g
        .numeric
        .iter()
        .map(|(v, k)| {
            let n = Gen::numeric_param(*v);
            if *k != Numeric::Open {
                return quote!(<#n as #rt::Scalar>::NUMBER);
            }
            // Inference leaves a type open only where a captured value fixes it, so a holder
            // exists; without one the message names the type alone.
            let (name, captured) = match open_holder(mono, *v) {
                Some((name, ty)) => (name, g.rty(ty)),
                None => ("", n.to_token_stream()),
            };
            quote!(#rt::open_instantiation::<#n>(&__PM_SITE, __pm_target, #name, <#captured as #rt::OpenType>::rust_name)?)
        })
        .collect();
    // The CUDA modules differ only in the types of the kernels' parameters: an open type none of
    // them holds (values only counted or moved on the host, `par_loop(length(s), …)`) may be any
    // Rust type, and any module fits (`None`).
    let cuda_names: Vec<TokenStream> = match host {
        Some(host) => {
            let mut seen = Vec::new();
            for e in host.kernel_args.iter().flatten() {
                vars_in(&e.ty, &mut seen);
            }
            g.numeric
                .iter()
                .zip(&names)
                .map(|((v, k), name)| {
                    if *k == Numeric::Open && !seen.contains(v) {
                        quote!(::core::option::Option::None)
                    } else {
                        quote!(::core::option::Option::Some(#name))
                    }
                })
                .collect()
        }
        None => Vec::new(),
    };
    // What the GPU functions marshal values of an open type with (every `Value` has both).
    let cuda_generics = g.generics_with(quote!(#rt::CudaArg<'pm>));
    let futhark_generics = g.generics_with(quote!(#rt::FutharkArg + #rt::FutharkResult));
    let (cuda_item, cuda_arm) = match cuda_fn {
        None => match unprinted.as_ref().or(match cuda {
            Some(CudaSite::Missing(why)) => Some(why),
            _ => None,
        }) {
            Some(why) if !sequential => (
                quote!(),
                quote! {
                    __pm_t @ (#rt::Target::Auto | #rt::Target::Cuda | #rt::Target::CudaEmulator) => {
                        #rt::cuda_missing(&__PM_SITE, __pm_t, #why);
                        __pm_accel::<#rt::CpuBackend, #(#infer_numeric),*>(#(#args),*)
                    }
                },
            ),
            _ => (quote!(), quote!()),
        },
        Some((cuda_body, kernels)) => {
            (
                quote! {
                    #[allow(unused_variables, unused_braces, unused_parens, unused_mut, non_snake_case, unreachable_code, clippy::all, clippy::pedantic)]
                    #[inline(never)]
                    fn __pm_accel_cuda #cuda_generics (__pm_target: #rt::Target, #(#params),*) -> ::core::option::Option<#ret> {
                        static __PM_CUDA: #rt::SiteKernels = #kernels;
                        let __pm_names = [#(#cuda_names),*];
                        // Shared by reference: closures and `fn` items of the host code launch too.
                        let __pm_cell = ::core::cell::RefCell::new(#rt::CudaCall::begin(&__PM_SITE, &__PM_CUDA, &__pm_names, __pm_target)?);
                        let __pm_call = &__pm_cell;
                        let __pm_r = #cuda_body;
                        __pm_cell.into_inner().finish();
                        ::core::option::Option::Some(__pm_r)
                    }
                },
                quote! {
                    __pm_t @ (#rt::Target::Auto | #rt::Target::Cuda | #rt::Target::CudaEmulator) => {
                        match __pm_accel_cuda::<#rt::SeqBackend, #(#infer_numeric),*>(__pm_t, #(#args),*) {
                            ::core::option::Option::Some(r) => r,
                            ::core::option::Option::None => __pm_accel::<#rt::CpuBackend, #(#infer_numeric),*>(#(#args),*),
                        }
                    }
                },
            )
        }
    };
    let (futhark_item, futhark_arm) = match futhark {
        _ if sequential => (quote!(), quote!()),
        None => (quote!(), quote!()),
        Some(FutharkHost::Missing) => (
            quote!(),
            quote! {
                #rt::Target::Futhark => {
                    #rt::futhark_missing(&__PM_SITE);
                    __pm_accel::<#rt::CpuBackend, #(#infer_numeric),*>(#(#args),*)
                }
            },
        ),
        Some(FutharkHost::Glue(path)) => {
            let pushes = mono
                .free_vars
                .iter()
                .zip(&mono.free_var_types)
                .map(|(fv, ty)| {
                    let local = g.local(fv.id);
                    let name = &fv.name;
                    // A value passed by reference is one already (`&Seq<…>`): borrowing it again
                    // would ask `FutharkArg` of the reference.
                    if is_copy(ty, &mono.numeric) {
                        quote!(__pm_call.param(#name, &#local);)
                    } else {
                        quote!(__pm_call.param(#name, #local);)
                    }
                });
            (
                quote! {
                    #[allow(unused_variables, non_snake_case, clippy::all, clippy::pedantic)]
                    #[inline(never)]
                    fn __pm_accel_futhark #futhark_generics (__pm_target: #rt::Target, #(#params),*) -> ::core::option::Option<#ret> {
                        #[allow(unsafe_code, unsafe_op_in_unsafe_fn, dead_code, clippy::all)]
                        mod __pm_glue {
                            ::core::include!(#path);
                        }
                        let __pm_names = [#(#names),*];
                        let mut __pm_call = #rt::FutharkCall::begin(&__PM_SITE, &__pm_glue::LIBRARY, &__pm_names, __pm_target)?;
                        #(#pushes)*
                        if !__pm_call.shapes_known() {
                            return ::core::option::Option::None;
                        }
                        ::core::option::Option::Some(__pm_call.run())
                    }
                },
                quote! {
                    __pm_t @ (#rt::Target::Auto | #rt::Target::Futhark) => {
                        match __pm_accel_futhark::<#rt::SeqBackend, #(#infer_numeric),*>(__pm_t, #(#args),*) {
                            ::core::option::Option::Some(r) => r,
                            ::core::option::Option::None => __pm_accel::<#rt::CpuBackend, #(#infer_numeric),*>(#(#args),*),
                        }
                    }
                },
            )
        }
    };
    quote! {{
        static __PM_SITE: #rt::Site = #rt::Site::new(::core::file!(), ::core::line!(), ::core::column!());
        #[allow(unused_variables, unused_braces, unused_parens, unused_mut, non_snake_case, unreachable_code, clippy::all, clippy::pedantic)]
        #[inline(never)]
        fn __pm_accel #generics (#(#params),*) -> #ret {
            #(#checks)*
            #body
        }
        #cuda_item
        #futhark_item
        // Holds every captured tensor shared until the call ends (dropped last).
        let __pm_scope = #rt::CallScope::enter();
        #captures
        let __pm_result = match #select(&__PM_SITE) {
            #rt::Target::Seq => __pm_accel::<#rt::SeqBackend, #(#infer_numeric),*>(#(#args),*),
            #rt::Target::Debug => __pm_accel::<#rt::DebugBackend, #(#infer_numeric),*>(#(#args),*),
            #cuda_arm
            #futhark_arm
            _ => __pm_accel::<#rt::CpuBackend, #(#infer_numeric),*>(#(#args),*),
        };
        #convert
    }}
}

/// The first captured variable whose type holds values of the open type `v`, and that type: what
/// the message names when the site runs on the CPU because `v` is not a number there.
fn open_holder(mono: &Mono, v: crate::types::TyVar) -> Option<(&str, &crate::types::Type)> {
    mono.free_vars
        .iter()
        .zip(&mono.free_var_types)
        .find(|(_, t)| {
            let mut vars = Vec::new();
            vars_in(t, &mut vars);
            vars.contains(&v)
        })
        .map(|(fv, t)| (fv.name.as_str(), t))
}

/// The expansion of errors: `compile_error!`s at the user's tokens followed by a value of type `!`,
/// so that no follow-on type error hides the real ones.
pub fn error_expansion(
    errors: &[crate::error::Error],
    free_vars: &[crate::resolve::FreeVar],
) -> TokenStream {
    let errors = crate::error::to_compile_errors(errors);
    // Keep the captured variables used, so that no "unused variable" warning joins the errors; a
    // variable that does not exist is reported at its own name.
    let uses = free_vars.iter().map(|fv| {
        let n = super::user_place(&fv.name, fv.uses[0]);
        quote!(let _ = &#n;)
    });
    // A closure that never returns, called: its result type is inferred from the context, so the
    // expansion fits wherever the value was expected, and, unlike a bare `loop {}`, the code after
    // it is not reported as unreachable.
    quote!({ #errors #(#uses)* #[allow(unreachable_code)] (|| loop {})() })
}
