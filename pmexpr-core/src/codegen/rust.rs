//! Rust code generation for the CPU backends.
//!
//! The accelerated expression becomes one function, generic over the runtime's `Backend`
//! (sequential, rayon, or debug mode), whose parameters are the captured variables — the paper's
//! accelerated binding after lambda lifting. Values are represented as follows:
//!
//! | PMExpr | Rust | passed to functions |
//! |---|---|---|
//! | `Int`, `Float`, `Bool`, `()` | `i64`, `f64`, `bool`, `()` | by value |
//! | `Tensor[T]` | `TensorRef<'pm, T>` (a `Copy` view) | by value |
//! | `[T]` | `Seq<'pm, T>` (borrowed or shared) | by reference |
//! | records | tuples | by value when all fields are, else by reference |
//! | `A -> B` | a closure, or `Func<'pm, A, B>` where a nameable type is needed | by reference |
//!
//! Functions the generator knows — intrinsics, `let`-bound lambdas, `fn` items — are called
//! directly, so the compiler inlines them into the parallel loops; a `let`-bound lambda is a
//! `move` closure over clones of what it captures. The function argument of a parallel keyword
//! becomes an *adaptor* closure that borrows its environment. `fn` items become nested Rust `fn`
//! items, lifted over the variables they use (lambda lifting). Function values whose identity is
//! not static are boxed in `Func`.

use std::collections::{BTreeSet, HashMap, HashSet};

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};

use crate::ast::{Expr, ExprKind, FnDef, Lit, NeverKind, Param, Pat, PatKind, VarId};
use crate::codegen::cuda_host::CudaHost;
use crate::codegen::futhark_host::FutharkHost;
use crate::infer::Numeric;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::mono::Mono;
use crate::types::{Label, TyVar, Type};

/// Generates the expansion of one `accelerate!` site: an expression block that captures the free
/// variables, runs the accelerated function on the selected backend and converts the result.
/// `rt` is the path of the runtime's private module (`::pmexpr::__private`).
///
/// With `sequential`, the site runs on the sequential target (the debug target in debug mode)
/// whatever the environment selects: the body of a `#[pmexpr]` function called from Rust code.
///
/// With `cuda` (a CUDA-class site whose kernels the runtime can launch), the site also gets host
/// code for the CUDA targets: the same expression, run sequentially, where each `par_loop` of the
/// host code — loops, branches, closures and `fn` items included — launches its kernel
/// ([`super::cuda_host`]); it falls back to the CPU code when the runtime says so, or when
/// [`cuda_host_problem`] finds host code it cannot generate.
///
/// With `futhark` (a Futhark-class site), the `futhark` and `auto` targets call the site's entry
/// point in the Futhark library through the glue the build hook generated
/// ([`super::futhark_host`]), falling back to the CPU code when the runtime says so; without glue,
/// the site runs on the CPU (said once on stderr under the `futhark` target).
pub fn generate_site(
    mono: &Mono,
    rt: &TokenStream,
    sequential: bool,
    cuda: Option<&CudaHost>,
    futhark: Option<&FutharkHost>,
) -> TokenStream {
    let mut g = Gen {
        names: &mono.names,
        rt: rt.clone(),
        numeric: mono.numeric.clone(),
        bindings: HashMap::new(),
        tmp: 0,
        cuda: None,
        host: HostState::default(),
    };
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut checks = Vec::new();
    // The captures go through one generic function whose parameters name the numbers that the
    // captured values fix, so that two captured values that must have the same number type are
    // checked against each other, and a mismatch is reported at a variable.
    let (mut cap_params, mut cap_bounds, mut cap_args, mut cap_calls, mut cap_locals) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
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
        let user = user_ident(&fv.name, span);
        let name = &fv.name;
        let (t, r, v) = (
            format_ident!("T{}", i),
            format_ident!("R{}", i),
            format_ident!("v{}", i),
        );
        cap_params.push(quote!(#t: ?Sized + #rt::Capture<'a, #canon, Repr = #r>, #r));
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
    // The GPU paths need concrete types: a site whose captured values leave a type open runs on
    // the CPU there (said once, by `open_types_on_cpu`; under `auto` only where a GPU would have
    // run it).
    let open = mono.numeric.iter().any(|(_, k)| *k == Numeric::Open);
    let open_targets = match (cuda.is_some(), futhark.is_some()) {
        (true, _) => {
            Some(quote!(#rt::Target::Auto | #rt::Target::Cuda | #rt::Target::CudaEmulator))
        }
        (false, true) => Some(quote!(#rt::Target::Futhark)),
        (false, false) => None,
    };
    let open_arm = if let Some(targets) = open_targets.filter(|_| open && !sequential) {
        let infer_numeric = mono.numeric.iter().map(|_| quote!(_));
        quote! {
            __pm_t @ (#targets) => {
                #rt::open_types_on_cpu(&__PM_SITE, __pm_t);
                __pm_accel::<#rt::CpuBackend, #(#infer_numeric),*>(#(#args),*)
            }
        }
    } else {
        quote!()
    };
    let (cuda, futhark) = if open { (None, None) } else { (cuda, futhark) };
    let cuda_fn = match cuda {
        Some(host) if !sequential => g.cuda_body(mono, host).ok().map(|b| (b, &host.kernels)),
        _ => None,
    };
    let body = g.value(&mono.expr);
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
    // module or the Futhark entry point generated for them.
    let names: Vec<TokenStream> = g
        .numeric
        .iter()
        .map(|(v, _)| Gen::numeric_param(*v))
        .map(|n| quote!(<#n as #rt::Scalar>::NAME))
        .collect();
    let (cuda_item, cuda_arm) = match cuda_fn {
        None => (quote!(), quote!()),
        Some((cuda_body, kernels)) => {
            (
                quote! {
                    #[allow(unused_variables, unused_braces, unused_parens, unused_mut, non_snake_case, unreachable_code, clippy::all, clippy::pedantic)]
                    #[inline(never)]
                    fn __pm_accel_cuda #generics (__pm_target: #rt::Target, #(#params),*) -> ::core::option::Option<#ret> {
                        static __PM_CUDA: #rt::SiteKernels = #kernels;
                        // Shared by reference: closures and `fn` items of the host code launch too.
                        let __pm_cell = ::core::cell::RefCell::new(#rt::CudaCall::begin(&__PM_SITE, &__PM_CUDA, &[#(#names),*], __pm_target)?);
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
            let pushes = mono.free_vars.iter().map(|fv| {
                let local = g.local(fv.id);
                let name = &fv.name;
                quote!(__pm_call.param(#name, &#local);)
            });
            (
                quote! {
                    #[allow(unused_variables, non_snake_case, clippy::all, clippy::pedantic)]
                    #[inline(never)]
                    fn __pm_accel_futhark #generics (__pm_target: #rt::Target, #(#params),*) -> ::core::option::Option<#ret> {
                        #[allow(unsafe_code, unsafe_op_in_unsafe_fn, dead_code, clippy::all)]
                        mod __pm_glue {
                            ::core::include!(#path);
                        }
                        let mut __pm_call = #rt::FutharkCall::begin(&__PM_SITE, &__pm_glue::LIBRARY, &[#(#names),*], __pm_target)?;
                        #(#pushes)*
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
        #captures
        let __pm_result = match #select(&__PM_SITE) {
            #rt::Target::Seq => __pm_accel::<#rt::SeqBackend, #(#infer_numeric),*>(#(#args),*),
            #rt::Target::Debug => __pm_accel::<#rt::DebugBackend, #(#infer_numeric),*>(#(#args),*),
            #cuda_arm
            #futhark_arm
            #open_arm
            _ => __pm_accel::<#rt::CpuBackend, #(#infer_numeric),*>(#(#args),*),
        };
        #convert
    }}
}

/// Why the host code of a CUDA-class site cannot be generated for the CUDA targets, or `None`
/// when it can: the check [`generate_site`] makes, for [`super::cuda_host`] and the build hook.
pub fn cuda_host_problem(mono: &Mono, rt: &TokenStream, host: &CudaHost) -> Option<String> {
    // The captured variables bound as `generate_site` binds them.
    let bindings = mono
        .free_vars
        .iter()
        .zip(&mono.free_var_types)
        .map(|(fv, ty)| {
            let by_ref = !is_copy(ty, &mono.numeric);
            let ty = ty.clone();
            (fv.id, Binding::Value { by_ref, ty })
        })
        .collect();
    let g = Gen {
        names: &mono.names,
        rt: rt.clone(),
        numeric: mono.numeric.clone(),
        bindings,
        tmp: 0,
        cuda: None,
        host: HostState::default(),
    };
    g.cuda_body(mono, host).err()
}

/// Whether values of the type are `Copy` in generated code (and so passed by value).
fn is_copy(t: &Type, numeric: &[(TyVar, Numeric)]) -> bool {
    match t {
        // The variables left are numbers whose type the captured values fix, or values of any
        // type they fix (`Numeric::Open`), which may be sequences: those are cloned.
        Type::Var(v) => !is_open(*v, numeric),
        Type::Int | Type::Float | Type::Bool | Type::Tensor(_) => true,
        Type::Record(fs) => fs.iter().all(|(_, t)| is_copy(t, numeric)),
        Type::Seq(_) | Type::Arrow(..) => false,
    }
}

/// For a result that holds values of a type the captured values fix (`Numeric::Open`): its Rust
/// type and its canonical form, as the capture function names them — an open type is the Rust
/// type of the captured value it occurs in, projected along its path there (`T0`'s elements,
/// a tuple's field), so that a derived struct that is only moved comes back as itself. `None`
/// when the result has no open type, holds a derived struct of its own, or an open type occurs
/// only inside a derived struct's fields (then the canonical conversion applies).
fn open_result_type(
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
            Type::Int => quote!(i64),
            Type::Float => quote!(f64),
            Type::Bool => quote!(bool),
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
fn vars_in(t: &Type, out: &mut Vec<TyVar>) {
    match t {
        Type::Var(v) => out.push(*v),
        Type::Seq(a) | Type::Tensor(a) => vars_in(a, out),
        Type::Arrow(a, b) => {
            vars_in(a, out);
            vars_in(b, out);
        }
        Type::Record(fs) => fs.iter().for_each(|(_, t)| vars_in(t, out)),
        Type::Int | Type::Float | Type::Bool => {}
    }
}

/// Whether `v` stands for a value of any type that the captured values fix.
fn is_open(v: TyVar, numeric: &[(TyVar, Numeric)]) -> bool {
    numeric.iter().any(|(w, k)| *w == v && *k == Numeric::Open)
}

/// Whether a value of type `t` may be a nested sequence because it has a sequence of a value of
/// any type the captured values fix (which may itself be a sequence): debug mode checks it.
fn may_nest(t: &Type, numeric: &[(TyVar, Numeric)]) -> bool {
    match t {
        Type::Seq(a) => matches!(**a, Type::Var(v) if is_open(v, numeric)) || may_nest(a, numeric),
        Type::Tensor(a) => may_nest(a, numeric),
        Type::Record(fs) => fs.iter().any(|(_, t)| may_nest(t, numeric)),
        Type::Int | Type::Float | Type::Bool | Type::Var(_) | Type::Arrow(..) => false,
    }
}

/// The canonical Rust type of a captured or returned PMExpr type. A number the captured values fix
/// is the capture function's generic parameter, or, in a result (`infer`), left to inference.
fn canonical(t: &Type, rt: &TokenStream, infer: bool) -> TokenStream {
    match t {
        Type::Int => quote!(i64),
        Type::Float => quote!(f64),
        Type::Bool => quote!(bool),
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

#[derive(Clone)]
enum Binding {
    /// A value in a Rust local; `by_ref` when the local holds `&T`.
    Value { by_ref: bool, ty: Type },
    /// A `let`-bound lambda: a closure called directly.
    Closure {
        rust: proc_macro2::Ident,
        params: Vec<Type>,
        ret: Type,
    },
    /// A `fn` item of a recursive group, lifted over `extras`.
    Item {
        rust: proc_macro2::Ident,
        params: Vec<Type>,
        ret: Type,
        extras: Vec<(VarId, Type)>,
    },
}

/// An argument: an expression of the program, or a Rust local that already holds a value.
#[derive(Clone)]
enum Arg<'e> {
    Expr(&'e Expr),
    Src {
        tokens: TokenStream,
        ty: Type,
        by_ref: bool,
        once: bool,
    },
}

impl Arg<'_> {
    fn ty(&self) -> &Type {
        match self {
            Arg::Expr(e) => &e.ty,
            Arg::Src { ty, .. } => ty,
        }
    }
}

struct Gen<'m> {
    names: &'m [String],
    rt: TokenStream,
    numeric: Vec<(TyVar, Numeric)>,
    bindings: HashMap<VarId, Binding>,
    tmp: u32,
    /// Host code for the CUDA targets: the `par_loop`s that launch kernels.
    cuda: Option<&'m CudaHost>,
    /// What generating host code for the CUDA targets found.
    host: HostState,
}

/// What generating host code for the CUDA targets found so far.
#[derive(Default)]
struct HostState {
    /// The kernels whose launch was generated.
    launched: BTreeSet<usize>,
    /// The Rust names of the closures and `fn` items that launch kernels (the items take the
    /// call as their last parameter).
    launchers: HashSet<String>,
    /// Why the host code cannot run on the CUDA targets.
    problem: Option<String>,
}

const SITE: &str = "__PM_SITE";

impl Gen<'_> {
    fn site(&self) -> TokenStream {
        let s = format_ident!("{}", SITE);
        quote!(&#s)
    }

    /// The body of the host code for the CUDA targets (the variables of the site bound as
    /// `self`'s), or why there is none.
    fn cuda_body(&self, mono: &Mono, host: &CudaHost) -> Result<TokenStream, String> {
        let mut gc = Gen {
            names: self.names,
            rt: self.rt.clone(),
            numeric: self.numeric.clone(),
            bindings: self.bindings.clone(),
            tmp: self.tmp,
            cuda: Some(host),
            host: HostState::default(),
        };
        let body = gc.value(&mono.expr);
        if let Some(why) = gc.host.problem {
            return Err(why);
        }
        // Every kernel must have been launched from the node it was generated for.
        if gc.host.launched.len() != host.kernel_args.len() {
            return Err(format!(
                "{} of its {} kernels have no launch in the host code (a bug in pmexpr: please report it)",
                host.kernel_args.len() - gc.host.launched.len(),
                host.kernel_args.len()
            ));
        }
        Ok(body)
    }

    /// In host code for the CUDA targets: whether running `e` may launch a kernel (it holds a
    /// launching `par_loop`, or uses a function that launches).
    fn launches_in(&self, e: &Expr) -> bool {
        let Some(host) = self.cuda else {
            return false;
        };
        let mut found = false;
        e.walk(&mut |x| match &x.kind {
            ExprKind::Keyword {
                kw: Keyword::ParLoop,
                args,
            } => found |= host.launches.contains_key(&(args.as_ptr() as usize)),
            ExprKind::Var { ident, .. } => {
                found |= match self.bindings.get(&ident.id) {
                    Some(Binding::Closure { rust, .. } | Binding::Item { rust, .. }) => {
                        self.host.launchers.contains(&rust.to_string())
                    }
                    _ => false,
                }
            }
            _ => {}
        });
        found
    }

    /// Records why the host code cannot run on the CUDA targets (the first reason wins).
    fn host_problem(&mut self, why: impl FnOnce() -> String) {
        if self.cuda.is_some() && self.host.problem.is_none() {
            self.host.problem = Some(why());
        }
    }

    fn local(&self, id: VarId) -> proc_macro2::Ident {
        let name = self
            .names
            .get(id.0 as usize)
            .map(String::as_str)
            .unwrap_or("v");
        let name = name.trim_start_matches("r#");
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format_ident!("{}_{}", clean, id.0)
    }

    fn numeric_param(v: TyVar) -> proc_macro2::Ident {
        format_ident!("N{}", v.0)
    }

    /// The generic parameters of the generated functions: the lifetime of the captured data, the
    /// backend, and the numbers whose type the captured values fix.
    fn generics(&self) -> TokenStream {
        let rt = &self.rt;
        let nums = self.numeric_bounds();
        quote!(<'pm, B: #rt::Backend #(, #nums)*>)
    }

    /// The bounds of the numbers whose type the captured values fix (`N3: Num`).
    fn numeric_bounds(&self) -> Vec<TokenStream> {
        let rt = &self.rt;
        self.numeric
            .iter()
            .map(|(v, k)| {
                let n = Self::numeric_param(*v);
                match k {
                    Numeric::Num => quote!(#n: #rt::Num),
                    Numeric::Scalar => quote!(#n: #rt::Scalar),
                    Numeric::Int => quote!(#n: #rt::Int),
                    Numeric::Float => quote!(#n: #rt::Float),
                    Numeric::Open => quote!(#n: #rt::Value),
                }
            })
            .collect()
    }

    /// The generic arguments for calling a generated `fn` item from generated code.
    fn generic_args(&self) -> TokenStream {
        let nums = self.numeric.iter().map(|(v, _)| Self::numeric_param(*v));
        quote!(::<B #(, #nums)*>)
    }

    fn fresh(&mut self, what: &str) -> proc_macro2::Ident {
        self.tmp += 1;
        format_ident!("__{}{}", what, self.tmp)
    }

    /// The Rust type of values of `t`.
    fn rty(&self, t: &Type) -> TokenStream {
        let mut out = TokenStream::new();
        self.rty_into(t, &mut out);
        out
    }

    /// Appends the Rust type of `t` to `out`: one stream for the whole type, since interpolating
    /// each level's tokens into the next copied them once per level (nested `Vec`s cost depth²).
    fn rty_into(&self, t: &Type, out: &mut TokenStream) {
        let rt = &self.rt;
        match t {
            Type::Int => out.extend(quote!(i64)),
            Type::Float => out.extend(quote!(f64)),
            Type::Bool => out.extend(quote!(bool)),
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
    fn is_copy(&self, t: &Type) -> bool {
        is_copy(t, &self.numeric)
    }

    /// The Rust type of a parameter of type `t`: by value or by reference.
    fn pty(&self, t: &Type) -> TokenStream {
        let r = self.rty(t);
        if self.is_copy(t) { r } else { quote!(&#r) }
    }

    fn with_scope<R>(&mut self, binds: Vec<(VarId, Binding)>, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved: Vec<(VarId, Option<Binding>)> = binds
            .into_iter()
            .map(|(id, b)| (id, self.bindings.insert(id, b)))
            .collect();
        let r = f(self);
        for (id, old) in saved.into_iter().rev() {
            match old {
                Some(b) => self.bindings.insert(id, b),
                None => self.bindings.remove(&id),
            };
        }
        r
    }

    // ----- values and arguments -----

    /// An owned value of the expression's type.
    fn value(&mut self, e: &Expr) -> TokenStream {
        let rt = self.rt.clone();
        let site = self.site();
        match &e.kind {
            ExprKind::Var { ident, .. } => self.var_value(ident.id, &e.ty),
            ExprKind::Lit(l) => lit(l, &e.ty, &rt),
            ExprKind::Lam { params, body } => self.func_from_lambda(params, body),
            ExprKind::App { func, args } => {
                let args: Vec<Arg> = args.iter().map(Arg::Expr).collect();
                self.call(func, args, &e.ty)
            }
            ExprKind::Let { .. } | ExprKind::RecLet { .. } => self.block_chain(e),
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => self.match_(scrutinee, pat, then, otherwise),
            // Typed, so that a `never!()` in any position (an operand, a receiver) type-checks.
            ExprKind::Never(NeverKind::User) => {
                let t = self.rty(&e.ty);
                quote!(#rt::rt::never::<#t>(#site))
            }
            ExprKind::Never(NeverKind::NoArm) => {
                let t = self.rty(&e.ty);
                quote!(#rt::rt::no_match::<#t>(#site))
            }
            ExprKind::Record(fs) => {
                let vs: Vec<TokenStream> = fs.iter().map(|(_, e)| self.value(e)).collect();
                quote!((#(#vs,)*))
            }
            ExprKind::Proj { expr, label } => {
                let idx = field_index(&expr.ty, label);
                if is_place(expr, &self.bindings) {
                    let base = self.arg(expr);
                    if self.is_copy(&e.ty) {
                        quote!((#base).#idx)
                    } else {
                        quote!((#base).#idx.clone())
                    }
                } else {
                    let base = self.value(expr);
                    quote!((#base).#idx)
                }
            }
            ExprKind::Seq(es) => {
                let elem = match &e.ty {
                    Type::Seq(a) => &**a,
                    _ => &e.ty,
                };
                let out = if es.is_empty() {
                    let et = self.rty(elem);
                    quote!(#rt::Seq::<'pm, #et>::empty())
                } else {
                    let vs: Vec<TokenStream> = es.iter().map(|e| self.value(e)).collect();
                    let et = self.rty(elem);
                    // What `vec!` expands to, without the macro: nested literals would count
                    // against rustc's macro recursion limit (128).
                    quote!(#rt::Seq::<'pm, #et>::from_vec(<[#et]>::into_vec(
                        ::std::boxed::Box::new([#(#vs),*])
                    )))
                };
                self.checked(out, &e.ty, "a sequence literal")
            }
            ExprKind::Keyword { kw, args } => self.keyword(*kw, args, &e.ty),
            ExprKind::Intrinsic(i) => {
                let name = i.name();
                quote!(::core::compile_error!(
                    concat!("internal error: unapplied intrinsic ", #name)
                ))
            }
            ExprKind::BinOp { .. } | ExprKind::Neg(_) => {
                quote!(::core::compile_error!(
                    "internal error: operator left after monomorphization"
                ))
            }
        }
    }

    /// The expression as an argument: a value for `Copy` types, a reference otherwise.
    fn arg(&mut self, e: &Expr) -> TokenStream {
        if self.is_copy(&e.ty) {
            return self.value(e);
        }
        let rt = self.rt.clone();
        let site = self.site();
        match &e.kind {
            ExprKind::Var { ident, .. } => match self.bindings.get(&ident.id).cloned() {
                Some(Binding::Value { by_ref: true, .. }) => {
                    let x = self.local(ident.id);
                    quote!(#x)
                }
                Some(Binding::Value { by_ref: false, .. }) => {
                    let x = self.local(ident.id);
                    quote!(&#x)
                }
                _ => {
                    let v = self.var_value(ident.id, &e.ty);
                    quote!(&(#v))
                }
            },
            ExprKind::Proj { expr, label } => {
                let idx = field_index(&expr.ty, label);
                let base = if is_place(expr, &self.bindings) {
                    self.arg(expr)
                } else {
                    self.value(expr)
                };
                quote!(&(#base).#idx)
            }
            ExprKind::App { func, args } if args.len() == 2 || args.len() == 1 => match func.kind {
                ExprKind::Intrinsic(Intrinsic::Get) => {
                    let s = self.arg(&args[0]);
                    let i = self.value(&args[1]);
                    quote!(#rt::rt::get(#site, (#s).as_slice(), #i))
                }
                ExprKind::Intrinsic(Intrinsic::Head) => {
                    let s = self.arg(&args[0]);
                    quote!(#rt::rt::head(#site, (#s).as_slice()))
                }
                _ => {
                    let v = self.value(e);
                    quote!(&(#v))
                }
            },
            _ => {
                let v = self.value(e);
                quote!(&(#v))
            }
        }
    }

    fn var_value(&mut self, id: VarId, ty: &Type) -> TokenStream {
        match self.bindings.get(&id).cloned() {
            Some(Binding::Value { .. }) => {
                let x = self.local(id);
                if self.is_copy(ty) {
                    quote!(#x)
                } else {
                    quote!(#x.clone())
                }
            }
            Some(Binding::Closure { rust, params, .. }) => {
                self.func_from_known(Callee::Closure(rust), &params, Vec::new())
            }
            Some(Binding::Item {
                rust,
                params,
                extras,
                ..
            }) => self.func_from_known(Callee::Item(rust, extras), &params, Vec::new()),
            None => {
                let name = self.names.get(id.0 as usize).cloned().unwrap_or_default();
                let msg = format!("internal error: `{name}` is not bound in generated code");
                quote!(::core::compile_error!(#msg))
            }
        }
    }

    /// The argument in the form a known function's parameter takes.
    fn pass(&mut self, a: &Arg) -> TokenStream {
        match a {
            Arg::Expr(e) => self.arg(e),
            Arg::Src {
                tokens, ty, by_ref, ..
            } => match (self.is_copy(ty), by_ref) {
                (true, true) => quote!(*#tokens),
                (true, false) | (false, true) => quote!(#tokens),
                (false, false) => quote!(&#tokens),
            },
        }
    }

    /// The argument as an owned value.
    fn owned(&mut self, a: &Arg) -> TokenStream {
        match a {
            Arg::Expr(e) => self.value(e),
            Arg::Src {
                tokens,
                ty,
                by_ref,
                once,
            } => match (self.is_copy(ty), by_ref, once) {
                (true, true, _) => quote!(*#tokens),
                (true, false, _) | (false, false, true) => quote!(#tokens),
                (false, _, _) => quote!(#tokens.clone()),
            },
        }
    }

    fn checked(&mut self, tokens: TokenStream, ty: &Type, what: &str) -> TokenStream {
        if !ty.has_nested_seq() {
            return tokens;
        }
        let v = self.fresh("checked");
        let rt = &self.rt;
        let site = self.site();
        quote!({ let #v = #tokens; if B::CHECKS { #rt::check_regular(#site, #what, &#v); } #v })
    }

    // ----- functions -----

    /// Applies `func` to `args`; the result is an owned value of type `ty`.
    fn call(&mut self, func: &Expr, args: Vec<Arg>, ty: &Type) -> TokenStream {
        match &func.kind {
            // Intrinsics are only ever applied, fully, to expressions of the program (see `mono`).
            ExprKind::Intrinsic(i) => {
                let exprs: Option<Vec<&Expr>> = args
                    .iter()
                    .map(|a| match a {
                        Arg::Expr(e) => Some(*e),
                        Arg::Src { .. } => None,
                    })
                    .collect();
                match exprs {
                    Some(es) if es.len() == i.arity() => self.intrinsic(*i, &es, ty),
                    _ => quote!(::core::compile_error!(
                        "internal error: an intrinsic applied to generated values"
                    )),
                }
            }
            ExprKind::Var { ident, .. } => match self.bindings.get(&ident.id).cloned() {
                Some(Binding::Closure { rust, params, .. }) => {
                    self.call_known(Callee::Closure(rust), &params, args)
                }
                Some(Binding::Item {
                    rust,
                    params,
                    extras,
                    ..
                }) => self.call_known(Callee::Item(rust, extras), &params, args),
                _ => {
                    let f = self.arg(func);
                    self.call_func(f, args)
                }
            },
            ExprKind::Lam { params, body } if params.len() == args.len() => {
                let mut stmts = Vec::new();
                let mut scope = Vec::new();
                for (p, a) in params.iter().zip(&args) {
                    let x = self.local(p.ident.id);
                    let v = self.owned(a);
                    stmts.push(quote!(let #x = #v;));
                    scope.push((
                        p.ident.id,
                        Binding::Value {
                            by_ref: false,
                            ty: p.ty.clone(),
                        },
                    ));
                }
                let body = self.with_scope(scope, |g| g.value(body));
                quote!({ #(#stmts)* #body })
            }
            _ => {
                let f = self.value(func);
                let t = self.fresh("f");
                let call = self.call_func(quote!(#t), args);
                quote!({ let #t = #f; #call })
            }
        }
    }

    /// Calls a boxed function value (`Func`), one argument at a time.
    fn call_func(&mut self, f: TokenStream, args: Vec<Arg>) -> TokenStream {
        let mut out = f;
        for a in &args {
            let v = self.owned(a);
            out = quote!((#out).call(#v));
        }
        out
    }

    /// Calls a known function of the given parameter types.
    fn call_known(&mut self, callee: Callee, params: &[Type], args: Vec<Arg>) -> TokenStream {
        let k = params.len();
        if args.len() < k {
            return self.func_from_known(callee, params, args);
        }
        let (now, later) = args.split_at(k);
        let passed: Vec<TokenStream> = now.iter().map(|a| self.pass(a)).collect();
        let direct = self.invoke(&callee, passed);
        self.call_func(direct, later.to_vec())
    }

    fn invoke(&mut self, callee: &Callee, mut passed: Vec<TokenStream>) -> TokenStream {
        match callee {
            Callee::Closure(f) => quote!(#f(#(#passed),*)),
            Callee::Item(f, extras) => {
                for (id, ty) in extras.clone() {
                    passed.push(self.var_arg(id, &ty));
                }
                if self.host.launchers.contains(&f.to_string()) {
                    passed.push(quote!(__pm_call));
                }
                let generics = self.generic_args();
                quote!(#f #generics (#(#passed),*))
            }
        }
    }

    /// A variable passed to a parameter of its type (lifted variables of `fn` items).
    fn var_arg(&mut self, id: VarId, ty: &Type) -> TokenStream {
        let x = self.local(id);
        match self.bindings.get(&id).cloned() {
            Some(Binding::Value { by_ref, .. }) => {
                if self.is_copy(ty) || by_ref {
                    quote!(#x)
                } else {
                    quote!(&#x)
                }
            }
            _ => {
                let v = self.var_value(id, ty);
                quote!(&(#v))
            }
        }
    }

    /// Boxes a known function, applied to `bound`, as a curried `Func` of its other parameters.
    fn func_from_known(&mut self, callee: Callee, params: &[Type], bound: Vec<Arg>) -> TokenStream {
        let (Callee::Closure(f) | Callee::Item(f, _)) = &callee;
        if self.host.launchers.contains(&f.to_string()) {
            self.host_problem(boxed_launcher);
        }
        let mut setup = Vec::new();
        let mut captured: Vec<proc_macro2::Ident> = Vec::new();
        let callee = match callee {
            Callee::Closure(f) => {
                let c = self.fresh("callee");
                setup.push(quote!(let #c = #f.clone();));
                captured.push(c.clone());
                Callee::Closure(c)
            }
            Callee::Item(f, extras) => {
                for (id, ty) in &extras {
                    let x = self.local(*id);
                    let v = self.var_value(*id, ty);
                    setup.push(quote!(let #x = #v;));
                    captured.push(x);
                }
                Callee::Item(f, extras)
            }
        };
        let mut args = Vec::new();
        for a in &bound {
            let t = self.fresh("bound");
            let v = self.owned(a);
            setup.push(quote!(let #t = #v;));
            captured.push(t.clone());
            args.push((t, a.ty().clone()));
        }
        let rest: Vec<Type> = params[bound.len()..].to_vec();
        // Inside the boxed closures the lifted variables are owned clones.
        let item_scope: Vec<(VarId, Binding)> = match &callee {
            Callee::Item(_, extras) => extras
                .iter()
                .map(|(id, ty)| {
                    (
                        *id,
                        Binding::Value {
                            by_ref: false,
                            ty: ty.clone(),
                        },
                    )
                })
                .collect(),
            Callee::Closure(_) => Vec::new(),
        };
        let body = self.with_scope(item_scope, |g| {
            g.curried(&callee, &rest, &mut args, &mut captured)
        });
        quote!({ #(#setup)* #body })
    }

    fn curried(
        &mut self,
        callee: &Callee,
        rest: &[Type],
        args: &mut Vec<(proc_macro2::Ident, Type)>,
        captured: &mut Vec<proc_macro2::Ident>,
    ) -> TokenStream {
        let Some((p, more)) = rest.split_first() else {
            let passed: Vec<TokenStream> = args
                .iter()
                .map(|(t, ty)| {
                    let a = Arg::Src {
                        tokens: quote!(#t),
                        ty: ty.clone(),
                        by_ref: false,
                        once: false,
                    };
                    self.pass(&a)
                })
                .collect();
            return self.invoke(callee, passed);
        };
        let rt = self.rt.clone();
        let x = self.fresh("p");
        let pt = self.rty(p);
        let clones: Vec<TokenStream> = captured
            .iter()
            .map(|c| quote!(let #c = #c.clone();))
            .collect();
        args.push((x.clone(), p.clone()));
        captured.push(x.clone());
        let inner = self.curried(callee, more, args, captured);
        quote!({ #(#clones)* #rt::Func::new(move |#x: #pt| #inner) })
    }

    /// The variables a closure over `free` must capture: its free variables that are bound here,
    /// with each `fn` item replaced by the variables it was lifted over.
    fn captures(&self, free: BTreeSet<VarId>) -> Vec<VarId> {
        let mut out = BTreeSet::new();
        for id in free {
            match self.bindings.get(&id) {
                Some(Binding::Item { extras, .. }) => out.extend(extras.iter().map(|(x, _)| *x)),
                Some(_) => {
                    out.insert(id);
                }
                None => {}
            }
        }
        out.into_iter().collect()
    }

    /// Clones of captured variables before a `move` closure, and their bindings inside it.
    fn capture_clones(&mut self, ids: &[VarId]) -> (Vec<TokenStream>, Vec<(VarId, Binding)>) {
        let mut stmts = Vec::new();
        let mut scope = Vec::new();
        for &id in ids {
            let x = self.local(id);
            match self.bindings.get(&id).cloned() {
                Some(Binding::Value { ty, .. }) => {
                    if self.is_copy(&ty) {
                        stmts.push(quote!(let #x = #x;));
                    } else {
                        stmts.push(quote!(let #x = #x.clone();));
                    }
                    scope.push((id, Binding::Value { by_ref: false, ty }));
                }
                Some(b @ Binding::Closure { .. }) => {
                    stmts.push(quote!(let #x = #x.clone();));
                    scope.push((id, b));
                }
                _ => {}
            }
        }
        (stmts, scope)
    }

    /// A lambda as a boxed, curried `Func`.
    fn func_from_lambda(&mut self, params: &[Param], body: &Expr) -> TokenStream {
        if self.launches_in(body) {
            self.host_problem(boxed_launcher);
        }
        let lam = Expr::typed(
            ExprKind::Lam {
                params: params.to_vec(),
                body: Box::new(body.clone()),
            },
            body.span,
            Type::unit(),
        );
        let caps = self.captures(lam.free_vars());
        let (clones, scope) = self.capture_clones(&caps);
        let inner = self.with_scope(scope, |g| g.func_levels(params, body, &caps));
        quote!({ #(#clones)* #inner })
    }

    fn func_levels(&mut self, params: &[Param], body: &Expr, caps: &[VarId]) -> TokenStream {
        let rt = self.rt.clone();
        let Some((p, more)) = params.split_first() else {
            return self.value(body);
        };
        let x = self.local(p.ident.id);
        let pt = self.rty(&p.ty);
        let scope = vec![(
            p.ident.id,
            Binding::Value {
                by_ref: false,
                ty: p.ty.clone(),
            },
        )];
        let inner = self.with_scope(scope, |g| {
            if more.is_empty() {
                g.value(body)
            } else {
                // The next closure is created on every call: it gets its own clones.
                let mut ids: Vec<VarId> = caps.to_vec();
                ids.push(p.ident.id);
                let (clones, scope) = g.capture_clones(&ids);
                let next = g.with_scope(scope, |g| g.func_levels(more, body, &ids));
                quote!({ #(#clones)* #next })
            }
        });
        quote!(#rt::Func::new(move |#x: #pt| #inner))
    }

    // ----- bindings -----

    /// A chain of `let`s and recursive groups (a block's statements) as one Rust block: a flat
    /// list of statements, not one nested block per statement, which rustc's parser cannot take
    /// 10,000 deep (and this loop needs no stack per statement either).
    fn block_chain(&mut self, e: &Expr) -> TokenStream {
        let mut stmts = Vec::new();
        let mut saved: Vec<(VarId, Option<Binding>)> = Vec::new();
        let mut cur = e;
        loop {
            let binds = match &cur.kind {
                ExprKind::Let {
                    binder,
                    value,
                    body,
                    ..
                } => {
                    let (stmt, bind) = self.let_stmt(binder, value);
                    stmts.push(stmt);
                    cur = body;
                    bind.into_iter().collect()
                }
                ExprKind::RecLet { fns, body, .. } => {
                    let (items, binds) = self.rec_let_items(fns);
                    stmts.extend(items);
                    cur = body;
                    binds
                }
                _ => break,
            };
            for (id, b) in binds {
                saved.push((id, self.bindings.insert(id, b)));
            }
        }
        let tail = self.value(cur);
        for (id, old) in saved.into_iter().rev() {
            match old {
                Some(b) => self.bindings.insert(id, b),
                None => self.bindings.remove(&id),
            };
        }
        quote!({ #(#stmts)* #tail })
    }

    /// The statement of `let binder = value;` and the binding it adds to the scope after it.
    fn let_stmt(
        &mut self,
        binder: &Param,
        value: &Expr,
    ) -> (TokenStream, Option<(VarId, Binding)>) {
        let x = self.local(binder.ident.id);
        if binder.ident.name == "_" {
            let v = self.value(value);
            return (quote!(let _ = #v;), None);
        }
        match &value.kind {
            ExprKind::Lam {
                params,
                body: lam_body,
            } => {
                if self.launches_in(value) {
                    self.host.launchers.insert(x.to_string());
                }
                let lam_free = value.free_vars();
                let caps = self.captures(lam_free);
                let (clones, mut scope) = self.capture_clones(&caps);
                let mut ps = Vec::new();
                for p in params {
                    let px = self.local(p.ident.id);
                    let pt = self.pty(&p.ty);
                    ps.push(quote!(#px: #pt));
                    scope.push((
                        p.ident.id,
                        Binding::Value {
                            by_ref: !self.is_copy(&p.ty),
                            ty: p.ty.clone(),
                        },
                    ));
                }
                let ret = self.rty(&lam_body.ty);
                let lb = self.with_scope(scope, |g| g.value(lam_body));
                let binding = Binding::Closure {
                    rust: x.clone(),
                    params: params.iter().map(|p| p.ty.clone()).collect(),
                    ret: lam_body.ty.clone(),
                };
                (
                    quote!(let #x = { #(#clones)* move |#(#ps),*| -> #ret { #lb } };),
                    Some((binder.ident.id, binding)),
                )
            }
            ExprKind::Var { ident, .. }
                if matches!(
                    self.bindings.get(&ident.id),
                    Some(Binding::Item { .. } | Binding::Closure { .. })
                ) =>
            {
                // An alias of a known function stays known.
                let b0 = self.bindings[&ident.id].clone();
                let (stmt, binding) = match b0 {
                    Binding::Closure { rust, params, ret } => {
                        if self.host.launchers.contains(&rust.to_string()) {
                            self.host.launchers.insert(x.to_string());
                        }
                        (
                            quote!(let #x = #rust.clone();),
                            Binding::Closure {
                                rust: x.clone(),
                                params,
                                ret,
                            },
                        )
                    }
                    item => (quote!(), item),
                };
                (stmt, Some((binder.ident.id, binding)))
            }
            _ if !self.is_copy(&value.ty) && is_place(value, &self.bindings) => {
                let v = self.arg(value);
                let binding = Binding::Value {
                    by_ref: true,
                    ty: value.ty.clone(),
                };
                (quote!(let #x = #v;), Some((binder.ident.id, binding)))
            }
            _ => {
                let v = self.value(value);
                let t = self.rty(&value.ty);
                let binding = Binding::Value {
                    by_ref: false,
                    ty: value.ty.clone(),
                };
                (quote!(let #x: #t = #v;), Some((binder.ident.id, binding)))
            }
        }
    }

    /// A recursive group: nested `fn` items lifted over the variables their bodies use.
    /// Returns the items and the bindings of the members, for the scope after the group.
    fn rec_let_items(&mut self, fns: &[FnDef]) -> (Vec<TokenStream>, Vec<(VarId, Binding)>) {
        let members: BTreeSet<VarId> = fns.iter().map(|f| f.ident.id).collect();
        let mut free = BTreeSet::new();
        for f in fns {
            let lam = Expr::typed(
                ExprKind::Lam {
                    params: f.params.clone(),
                    body: Box::new(f.body.clone()),
                },
                f.span,
                Type::unit(),
            );
            free.extend(lam.free_vars().into_iter().filter(|v| !members.contains(v)));
        }
        let extras: Vec<(VarId, Type)> = self
            .captures(free)
            .into_iter()
            .map(|id| {
                let ty = match &self.bindings[&id] {
                    Binding::Value { ty, .. } => ty.clone(),
                    Binding::Closure { params, ret, .. } | Binding::Item { params, ret, .. } => {
                        Type::arrows(params.clone(), ret.clone())
                    }
                };
                (id, ty)
            })
            .collect();
        // Every member takes the call when one of them launches (they may call each other).
        let launches = fns.iter().any(|f| self.launches_in(&f.body));
        if launches {
            for f in fns {
                let name = self.local(f.ident.id).to_string();
                self.host.launchers.insert(name);
            }
        }
        let member_bindings: Vec<(VarId, Binding)> = fns
            .iter()
            .map(|f| {
                let (params, ret) = f.ty.split_arrows(f.params.len());
                (
                    f.ident.id,
                    Binding::Item {
                        rust: self.local(f.ident.id),
                        params: params.into_iter().cloned().collect(),
                        ret: ret.clone(),
                        extras: extras.clone(),
                    },
                )
            })
            .collect();
        // A `fn` item sees only items, its parameters and its lifted variables: every variable its
        // body uses that is not an item is among the lifted ones (`captures`), rebound in its own
        // scope, so the outer scope need not be filtered (a filtered copy per group made a chain
        // of n groups cost n²).
        let items = self.with_scope(member_bindings.clone(), |g| {
            let mut items = Vec::new();
            for f in fns {
                let mut own = Vec::new();
                let mut sig = Vec::new();
                for p in &f.params {
                    let x = g.local(p.ident.id);
                    let t = g.pty(&p.ty);
                    sig.push(quote!(#x: #t));
                    own.push((
                        p.ident.id,
                        Binding::Value {
                            by_ref: !g.is_copy(&p.ty),
                            ty: p.ty.clone(),
                        },
                    ));
                }
                for (id, ty) in &extras {
                    let x = g.local(*id);
                    let t = g.pty(ty);
                    sig.push(quote!(#x: #t));
                    own.push((
                        *id,
                        Binding::Value {
                            by_ref: !g.is_copy(ty),
                            ty: ty.clone(),
                        },
                    ));
                }
                if launches {
                    let rt = &g.rt;
                    sig.push(quote!(__pm_call: &::core::cell::RefCell<#rt::CudaCall<'pm>>));
                }
                let ret = g.rty(&f.body.ty);
                let name = g.local(f.ident.id);
                let b = g.with_scope(own, |g| g.value(&f.body));
                let generics = g.generics();
                items.push(quote! {
                    #[allow(unused_variables, unused_braces, unused_parens, non_snake_case, unreachable_code, clippy::all)]
                    fn #name #generics (#(#sig),*) -> #ret { #b }
                });
            }
            items
        });
        (items, member_bindings)
    }

    fn match_(
        &mut self,
        scrutinee: &Expr,
        pat: &Pat,
        then: &Expr,
        otherwise: &Expr,
    ) -> TokenStream {
        if let PatKind::Lit(Lit::Bool(b)) = pat.kind {
            let c = self.value(scrutinee);
            let (t, o) = (self.value(then), self.value(otherwise));
            return if b {
                quote!(if #c { #t } else { #o })
            } else {
                quote!(if #c { #o } else { #t })
            };
        }
        let s = self.fresh("scrutinee");
        let by_ref = !self.is_copy(&scrutinee.ty);
        let setup = if !by_ref {
            let v = self.value(scrutinee);
            quote!(let #s = #v;)
        } else if is_place(scrutinee, &self.bindings) {
            let v = self.arg(scrutinee);
            quote!(let #s = #v;)
        } else {
            let owned = self.fresh("owned");
            let v = self.value(scrutinee);
            quote!(let #owned = #v; let #s = &#owned;)
        };
        let test = pat_test(pat, quote!(#s), &self.rt);
        let mut stmts = Vec::new();
        let mut scope = Vec::new();
        self.pat_binds(pat, quote!(#s), true, &mut stmts, &mut scope);
        let t = self.with_scope(scope, |g| g.value(then));
        if pat.irrefutable() {
            quote!({ #setup #(#stmts)* #t })
        } else {
            let o = self.value(otherwise);
            quote!({ #setup if #test { #(#stmts)* #t } else { #o } })
        }
    }

    fn pat_binds(
        &mut self,
        p: &Pat,
        path: TokenStream,
        whole: bool,
        stmts: &mut Vec<TokenStream>,
        scope: &mut Vec<(VarId, Binding)>,
    ) {
        match &p.kind {
            PatKind::Bind(ident) => {
                if ident.name == "_" {
                    return;
                }
                let x = self.local(ident.id);
                if self.is_copy(&p.ty) {
                    stmts.push(quote!(let #x = #path;));
                    scope.push((
                        ident.id,
                        Binding::Value {
                            by_ref: false,
                            ty: p.ty.clone(),
                        },
                    ));
                } else {
                    if whole {
                        stmts.push(quote!(let #x = #path;));
                    } else {
                        stmts.push(quote!(let #x = &#path;));
                    }
                    scope.push((
                        ident.id,
                        Binding::Value {
                            by_ref: true,
                            ty: p.ty.clone(),
                        },
                    ));
                }
            }
            PatKind::Record(fs) => {
                for (l, sub) in fs {
                    let idx = field_index(&p.ty, l);
                    self.pat_binds(sub, quote!(#path.#idx), false, stmts, scope);
                }
            }
            PatKind::Wild | PatKind::Lit(_) => {}
        }
    }

    // ----- parallel keywords -----

    fn keyword(&mut self, kw: Keyword, args: &[Expr], ty: &Type) -> TokenStream {
        let rt = self.rt.clone();
        let site = self.site();
        let elem = |t: &Type| match t {
            Type::Seq(a) => (**a).clone(),
            other => other.clone(),
        };
        // The runtime may run these functions on several threads: they cannot launch.
        let parallel_fn = match kw {
            Keyword::Map | Keyword::Map2 | Keyword::Reduce | Keyword::Hist => Some(&args[0]),
            Keyword::ParLoop => Some(&args[1]),
            _ => None,
        };
        if let Some(f) = parallel_fn
            && !self.is_launch(kw, args)
            && self.launches_in(f)
        {
            self.host_problem(|| {
                format!(
                    "its host code launches kernels inside the function of a `{}`, which the CUDA target does not run",
                    kw.name()
                )
            });
        }
        match kw {
            Keyword::Map => {
                let s = self.arg(&args[1]);
                let (pre, f) = self.adaptor(&args[0], &[(elem(&args[1].ty), true, false)]);
                let out = quote!({ #pre B::map((#s).as_slice(), #f) });
                self.checked(out, ty, "the result of `map`")
            }
            Keyword::Map2 => {
                let a = self.arg(&args[1]);
                let b = self.arg(&args[2]);
                let (pre, f) = self.adaptor(
                    &args[0],
                    &[
                        (elem(&args[1].ty), true, false),
                        (elem(&args[2].ty), true, false),
                    ],
                );
                let out = quote!({ #pre B::map2(#site, (#a).as_slice(), (#b).as_slice(), #f) });
                self.checked(out, ty, "the result of `map2`")
            }
            Keyword::Reduce => {
                let name = self.operator_name(&args[0]);
                let ne = self.value(&args[1]);
                let acc = args[1].ty.clone();
                let (pre_op, op) =
                    self.adaptor(&args[0], &[(acc.clone(), false, true), (acc, false, true)]);
                // reduce(f, ne, map(g, s)) runs without building the mapped sequence.
                // Arguments are evaluated in the order they are written: f, ne, s.
                let nev = self.fresh("ne");
                if let ExprKind::Keyword {
                    kw: Keyword::Map,
                    args: margs,
                } = &args[2].kind
                {
                    let s = self.arg(&margs[1]);
                    let (pre_g, g) = self.adaptor(&margs[0], &[(elem(&margs[1].ty), true, false)]);
                    // Debug mode checks the operator's laws on the mapped elements.
                    quote!({ #pre_op let #nev = #ne; #pre_g #rt::map_reduce::<B, _, _, _, _>(#site, #name, (#s).as_slice(), #nev, #g, #op) })
                } else if let ExprKind::Keyword {
                    kw: Keyword::Map2,
                    args: margs,
                } = &args[2].kind
                {
                    // reduce(f, ne, map2(g, a, b)) (a dot product) neither.
                    let a = self.arg(&margs[1]);
                    let b = self.arg(&margs[2]);
                    let (pre_g, g) = self.adaptor(
                        &margs[0],
                        &[
                            (elem(&margs[1].ty), true, false),
                            (elem(&margs[2].ty), true, false),
                        ],
                    );
                    quote!({ #pre_op let #nev = #ne; #pre_g #rt::map2_reduce::<B, _, _, _, _, _>(#site, #name, (#a).as_slice(), (#b).as_slice(), #nev, #g, #op) })
                } else {
                    let s = self.arg(&args[2]);
                    quote!({ #pre_op let #nev = #ne; #rt::reduce::<B, _, _>(#site, #name, (#s).as_slice(), #nev, #op) })
                }
            }
            Keyword::Flatten => {
                let s = self.arg(&args[0]);
                quote!(B::flatten((#s).as_slice()))
            }
            Keyword::Hist => {
                // Arguments are evaluated in the order they are written: f, ne, k, is, vs.
                let name = self.operator_name(&args[0]);
                let acc = args[1].ty.clone();
                let (pre_op, op) =
                    self.adaptor(&args[0], &[(acc.clone(), false, true), (acc, false, true)]);
                let ne = self.value(&args[1]);
                let k = self.value(&args[2]);
                let (nev, kv) = (self.fresh("ne"), self.fresh("k"));
                let (pre_i, n_i, index) = self.hist_producer(&args[3], true);
                let (pre_v, n_v, value) = self.hist_producer(&args[4], false);
                quote!({
                    #pre_op
                    let #nev = #ne;
                    let #kv: i64 = #k;
                    #pre_i
                    #pre_v
                    #rt::hist::<B, _, _, _, _>(#site, #name, #kv, #nev, #n_i, #n_v, #index, #value, #op)
                })
            }
            Keyword::ParLoop
                if let Some(&k) = self
                    .cuda
                    .and_then(|h| h.launches.get(&(args.as_ptr() as usize))) =>
            {
                // A launch: the kernel's parameters marshaled in order, then `n`. Everything is
                // evaluated before the call is borrowed, since evaluating may launch too.
                let host = self.cuda.expect("matched above");
                let n = self.value(&args[0]);
                let nv = self.fresh("n");
                let mut stmts = Vec::new();
                let mut vals = Vec::new();
                for e in &host.kernel_args[k] {
                    let v = self.value(e);
                    let x = self.fresh("param");
                    stmts.push(quote!(let #x = &(#v);));
                    vals.push(x);
                }
                self.host.launched.insert(k);
                let k = Literal::usize_unsuffixed(k);
                quote!({
                    let #nv: i64 = #n;
                    #(#stmts)*
                    let mut __pm_c = __pm_call.borrow_mut();
                    let __pm_params = ::std::vec![#(__pm_c.param(#vals)),*];
                    __pm_c.launch(#k, #nv, __pm_params);
                })
            }
            Keyword::ParLoop | Keyword::SeqLoop => {
                let n = self.value(&args[0]);
                let nv = self.fresh("n");
                let (pre, f) = self.adaptor(&args[1], &[(Type::Int, false, true)]);
                let run = if kw == Keyword::ParLoop {
                    quote!(B::par_loop)
                } else {
                    quote!(#rt::rt::seq_loop)
                };
                quote!({ let #nv = #n; #pre #run(#nv, #f) })
            }
            Keyword::SeqLoopAcc => {
                let acc = self.value(&args[0]);
                let n = self.value(&args[1]);
                let (accv, nv) = (self.fresh("acc"), self.fresh("n"));
                let (pre, f) = self.adaptor(
                    &args[2],
                    &[(args[0].ty.clone(), false, true), (Type::Int, false, true)],
                );
                quote!({ let #accv = #acc; let #nv = #n; #pre #rt::rt::seq_loop_acc(#accv, #nv, #f) })
            }
        }
    }

    /// A sequence argument of `hist` as the runtime takes it: statements to run first, its
    /// length (`usize`) and a closure from a position to the element (an `i64` for the indices).
    /// `map(g, s)` and `create(n, g)` are not built: the closure applies `g` where it is read.
    fn hist_producer(&mut self, e: &Expr, index: bool) -> (TokenStream, TokenStream, TokenStream) {
        let rt = self.rt.clone();
        let site = self.site();
        let (src, len) = (self.fresh("src"), self.fresh("len"));
        let g = self.fresh("g");
        let j = format_ident!("__pm_j");
        let (pre, len_expr, read) = match &e.kind {
            ExprKind::Keyword {
                kw: Keyword::Map,
                args: margs,
            } => {
                let elem = match &margs[1].ty {
                    Type::Seq(a) => (**a).clone(),
                    t => t.clone(),
                };
                let (pre_g, gf) = self.adaptor(&margs[0], &[(elem, true, false)]);
                let s = self.arg(&margs[1]);
                (
                    quote!(#pre_g let #g = #gf; let #src = #s; let #src = (#src).as_slice();),
                    quote!(#src.len()),
                    quote!(#g(&#src[#j])),
                )
            }
            ExprKind::App { func, args: cargs }
                if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Create))
                    && cargs.len() == 2 =>
            {
                let n = self.value(&cargs[0]);
                let (pre_g, gf) = self.adaptor(&cargs[1], &[(Type::Int, false, true)]);
                (
                    quote!(
                        let #src: i64 = #n;
                        if #src < 0 {
                            #rt::Site::fail(#site, ::core::format_args!("create with negative length: {}", #src));
                        }
                        #pre_g
                        let #g = #gf;
                    ),
                    quote!(#src as usize),
                    quote!(#g(#j as i64)),
                )
            }
            _ => {
                let s = self.arg(e);
                (
                    quote!(let #src = #s; let #src = (#src).as_slice();),
                    quote!(#src.len()),
                    quote!(::core::clone::Clone::clone(&#src[#j])),
                )
            }
        };
        let read = if index {
            quote!(::core::convert::Into::<i64>::into(#read))
        } else {
            read
        };
        (
            quote!(#pre let #len: usize = #len_expr;),
            quote!(#len),
            quote!(|#j: usize| #read),
        )
    }

    /// Whether this keyword application is a kernel launch of host code for the CUDA targets.
    fn is_launch(&self, kw: Keyword, args: &[Expr]) -> bool {
        kw == Keyword::ParLoop
            && self
                .cuda
                .is_some_and(|h| h.launches.contains_key(&(args.as_ptr() as usize)))
    }

    /// The closure passed to the runtime for a function argument `f` that receives `incoming`
    /// arguments (type, whether by reference, whether used once). Returns the statements that
    /// must run before (partial arguments evaluated once) and the closure.
    fn adaptor(&mut self, f: &Expr, incoming: &[(Type, bool, bool)]) -> (TokenStream, TokenStream) {
        let mut params = Vec::new();
        let mut srcs = Vec::new();
        for (ty, by_ref, once) in incoming {
            let a = self.fresh("a");
            let t = self.rty(ty);
            params.push(if *by_ref {
                quote!(#a: &#t)
            } else {
                quote!(#a: #t)
            });
            srcs.push(Arg::Src {
                tokens: quote!(#a),
                ty: ty.clone(),
                by_ref: *by_ref,
                once: *once,
            });
        }
        // The adaptor is a `move` closure: `Copy` values (numbers, tensor views) are copied into
        // it, so the compiler sees them as constant across iterations; everything else is moved
        // in as a reference, made here.
        let mut pre = Vec::new();
        let mut refs = Vec::new();
        let mut scope = Vec::new();
        for id in self.captures(f.free_vars()) {
            match self.bindings.get(&id).cloned() {
                Some(Binding::Value { by_ref: false, ty }) if !self.is_copy(&ty) => {
                    let x = self.local(id);
                    refs.push(quote!(let #x = &#x;));
                    scope.push((id, Binding::Value { by_ref: true, ty }));
                }
                Some(Binding::Closure { rust, .. }) => refs.push(quote!(let #rust = &#rust;)),
                _ => {}
            }
        }
        let body = match &f.kind {
            ExprKind::Lam { params: lps, body } if lps.len() == srcs.len() => {
                let mut stmts = Vec::new();
                for (p, src) in lps.iter().zip(&srcs) {
                    let Arg::Src { tokens, by_ref, .. } = src else {
                        unreachable!()
                    };
                    let x = self.local(p.ident.id);
                    if self.is_copy(&p.ty) {
                        let v = if *by_ref {
                            quote!(*#tokens)
                        } else {
                            quote!(#tokens)
                        };
                        stmts.push(quote!(let #x = #v;));
                        scope.push((
                            p.ident.id,
                            Binding::Value {
                                by_ref: false,
                                ty: p.ty.clone(),
                            },
                        ));
                    } else {
                        stmts.push(quote!(let #x = #tokens;));
                        scope.push((
                            p.ident.id,
                            Binding::Value {
                                by_ref: *by_ref,
                                ty: p.ty.clone(),
                            },
                        ));
                    }
                }
                let b = self.with_scope(scope, |g| g.value(body));
                quote!({ #(#stmts)* #b })
            }
            ExprKind::App { func, args }
                if matches!(&func.kind, ExprKind::Var { ident, .. }
                if matches!(self.bindings.get(&ident.id), Some(Binding::Closure { .. } | Binding::Item { .. }))) =>
            {
                // A known function partially applied: its arguments are evaluated once, before.
                let mut all = Vec::new();
                for a in args {
                    if matches!(a.kind, ExprKind::Lit(_))
                        || (matches!(a.kind, ExprKind::Var { .. }) && self.is_copy(&a.ty))
                    {
                        all.push(Arg::Expr(a));
                    } else {
                        let h = self.fresh("hoisted");
                        let v = self.value(a);
                        pre.push(quote!(let #h = #v;));
                        let by_ref = !self.is_copy(&a.ty);
                        if by_ref {
                            refs.push(quote!(let #h = &#h;));
                        }
                        all.push(Arg::Src {
                            tokens: quote!(#h),
                            ty: a.ty.clone(),
                            by_ref,
                            once: false,
                        });
                    }
                }
                all.extend(srcs);
                let ret = result_type(&f.ty, incoming.len());
                self.with_scope(scope, |g| g.call(func, all, &ret))
            }
            ExprKind::Var { .. } => {
                let ret = result_type(&f.ty, incoming.len());
                self.with_scope(scope, |g| g.call(f, srcs, &ret))
            }
            _ => {
                let h = self.fresh("fun");
                let v = self.value(f);
                pre.push(quote!(let #h = #v;));
                refs.push(quote!(let #h = &#h;));
                self.call_func(quote!(#h), srcs)
            }
        };
        (
            quote!(#(#pre)*),
            quote!({ #(#refs)* move |#(#params),*| #body }),
        )
    }

    /// How debug mode's failures name a tensor: its variable, or what made it.
    fn tensor_name(&self, t: &Expr) -> String {
        match &t.kind {
            ExprKind::Var { ident, .. } => ident.name.clone(),
            ExprKind::App { func, .. } => match &func.kind {
                ExprKind::Intrinsic(i) => format!("{}(…)", i.name()),
                ExprKind::Var { ident, .. } => format!("{}(…)", ident.name),
                _ => "(a computed tensor)".into(),
            },
            _ => "(a computed tensor)".into(),
        }
    }

    /// How debug mode's failures name `reduce`'s operator: the intrinsic or function it applies
    /// (`subi` is eta-expanded to `|a, b| subi(a, b)` by then), or `the closure`.
    fn operator_name(&self, f: &Expr) -> String {
        let named = |e: &Expr| match &e.kind {
            ExprKind::Intrinsic(i) => Some(format!("`{}`", i.name())),
            ExprKind::Var { ident, .. } => Some(format!("`{}`", ident.name)),
            _ => None,
        };
        if let Some(n) = named(f) {
            return n;
        }
        if let ExprKind::Lam { params, body } = &f.kind
            && let ExprKind::App { func, args } = &body.kind
            && args.len() == params.len()
            && args.iter().zip(params).all(
                |(a, p)| matches!(&a.kind, ExprKind::Var { ident, .. } if ident.id == p.ident.id),
            )
            && let Some(n) = named(func)
        {
            return n;
        }
        "the closure".into()
    }

    // ----- intrinsics -----

    fn intrinsic(&mut self, i: Intrinsic, args: &[&Expr], ty: &Type) -> TokenStream {
        use Intrinsic::*;
        let rt = self.rt.clone();
        let site = self.site();
        let v = |g: &mut Self, k: usize| g.value(args[k]);
        let p = |g: &mut Self, k: usize| g.arg(args[k]);
        match i {
            AddI | SubI | MulI => {
                let m = format_ident!(
                    "{}",
                    match i {
                        AddI => "wrapping_add",
                        SubI => "wrapping_sub",
                        _ => "wrapping_mul",
                    }
                );
                let (a, b) = (v(self, 0), v(self, 1));
                quote!((#a).#m(#b))
            }
            DivI | ModI => {
                let f = format_ident!("{}", if i == DivI { "divi" } else { "modi" });
                let (a, b) = (v(self, 0), v(self, 1));
                quote!(#rt::rt::#f(#site, #a, #b))
            }
            NegI => {
                let a = v(self, 0);
                quote!((#a).wrapping_neg())
            }
            AddF | SubF | MulF | DivF | EqI | NeqI | LtI | GtI | LeqI | GeqI | EqF | NeqF | LtF
            | GtF | LeqF | GeqF | EqB | NeqB => {
                let op: TokenStream = match i {
                    AddF => quote!(+),
                    SubF => quote!(-),
                    MulF => quote!(*),
                    DivF => quote!(/),
                    EqI | EqF | EqB => quote!(==),
                    NeqI | NeqF | NeqB => quote!(!=),
                    LtI | LtF => quote!(<),
                    GtI | GtF => quote!(>),
                    LeqI | LeqF => quote!(<=),
                    _ => quote!(>=),
                };
                let (a, b) = (v(self, 0), v(self, 1));
                quote!((#a #op #b))
            }
            NegF => {
                let a = v(self, 0);
                quote!((-(#a)))
            }
            Not => {
                let a = v(self, 0);
                quote!((!(#a)))
            }
            Int2Float => {
                let a = v(self, 0);
                quote!(((#a) as f64))
            }
            FloorFI => {
                let a = v(self, 0);
                quote!(#rt::rt::floorfi(#a))
            }
            Sqrt | Exp | Log | Sin | Cos => {
                let m = format_ident!(
                    "{}",
                    match i {
                        Sqrt => "sqrt",
                        Exp => "exp",
                        Log => "ln",
                        Sin => "sin",
                        _ => "cos",
                    }
                );
                let a = v(self, 0);
                if matches!(args[0].ty, Type::Var(_)) {
                    quote!(#rt::Float::#m(#a))
                } else {
                    quote!(f64::#m(#a))
                }
            }
            Pow => {
                let (a, b) = (v(self, 0), v(self, 1));
                if matches!(args[0].ty, Type::Var(_)) {
                    quote!(#rt::Float::powf(#a, #b))
                } else {
                    quote!(f64::powf(#a, #b))
                }
            }
            Length => {
                let s = p(self, 0);
                quote!(((#s).len() as i64))
            }
            Null => {
                let s = p(self, 0);
                quote!((#s).is_empty())
            }
            Get | Head => {
                let s = p(self, 0);
                let r = if i == Get {
                    let ix = v(self, 1);
                    quote!(#rt::rt::get(#site, (#s).as_slice(), #ix))
                } else {
                    quote!(#rt::rt::head(#site, (#s).as_slice()))
                };
                if self.is_copy(ty) {
                    quote!((*#r))
                } else {
                    quote!(#r.clone())
                }
            }
            Set => {
                let s = v(self, 0);
                let ix = v(self, 1);
                let x = v(self, 2);
                self.checked(
                    quote!(#rt::rt::set(#site, #s, #ix, #x)),
                    ty,
                    "the result of `set`",
                )
            }
            Tail => {
                let s = p(self, 0);
                quote!(#rt::rt::tail(#site, #s))
            }
            Concat => {
                let (a, b) = (p(self, 0), p(self, 1));
                self.checked(
                    quote!(#rt::rt::concat((#a).as_slice(), (#b).as_slice())),
                    ty,
                    "the result of `concat`",
                )
            }
            Reverse => {
                let s = p(self, 0);
                quote!(#rt::rt::reverse((#s).as_slice()))
            }
            Subsequence => {
                let s = p(self, 0);
                let (o, l) = (v(self, 1), v(self, 2));
                quote!(#rt::rt::subsequence(#site, #s, #o, #l))
            }
            Create => {
                // Arguments are evaluated in the order they are written.
                let n = v(self, 0);
                let nv = self.fresh("n");
                let (pre, f) = self.adaptor(args[1], &[(Type::Int, false, true)]);
                let out = quote!({ let #nv = #n; #pre #rt::rt::create(#site, #nv, #f) });
                self.checked(out, ty, "the result of `create`")
            }
            Foldl => {
                // Arguments are evaluated in the order they are written: f, acc, s.
                let acc0 = v(self, 1);
                let acc = self.fresh("acc");
                let s = p(self, 2);
                let elem = match &args[2].ty {
                    Type::Seq(a) => (**a).clone(),
                    t => t.clone(),
                };
                let acc_ty = args[1].ty.clone();
                let (pre, f) = self.adaptor(args[0], &[(acc_ty, false, true), (elem, true, false)]);
                quote!({ #pre let #acc = #acc0; #rt::rt::foldl((#s).as_slice(), #acc, #f) })
            }
            TensorGet | TensorSet | TensorSlice => {
                let t = v(self, 0);
                // A literal index needs no sequence: it becomes an array on the stack.
                let idx = match &args[1].kind {
                    ExprKind::Seq(es) => {
                        let vs: Vec<TokenStream> = es.iter().map(|e| self.value(e)).collect();
                        quote!(&[#(#vs),*])
                    }
                    _ => {
                        let s = p(self, 1);
                        quote!((#s).as_slice())
                    }
                };
                let tensor = self.tensor_name(args[0]);
                match i {
                    TensorGet => quote!(#rt::tensor_get(B::CHECKS, #site, #tensor, #t, #idx)),
                    TensorSlice => quote!((#t).slice(#site, #idx)),
                    _ => {
                        let x = v(self, 2);
                        quote!(#rt::tensor_set(B::CHECKS, #site, #tensor, #t, #idx, #x))
                    }
                }
            }
            NumAdd | NumSub | NumMul => {
                let m = format_ident!(
                    "{}",
                    match i {
                        NumAdd => "add",
                        NumSub => "sub",
                        _ => "mul",
                    }
                );
                let (a, b) = (v(self, 0), v(self, 1));
                quote!(#rt::Num::#m(#a, #b))
            }
            NumDiv => {
                let (a, b) = (v(self, 0), v(self, 1));
                quote!(#rt::Num::div(#site, #a, #b))
            }
            NumNeg => {
                let a = v(self, 0);
                quote!(#rt::Num::neg(#a))
            }
            NumEq | NumNe | NumLt | NumLe | NumGt | NumGe => {
                let op: TokenStream = match i {
                    NumEq => quote!(==),
                    NumNe => quote!(!=),
                    NumLt => quote!(<),
                    NumLe => quote!(<=),
                    NumGt => quote!(>),
                    _ => quote!(>=),
                };
                let (a, b) = (v(self, 0), v(self, 1));
                quote!((#a #op #b))
            }
            TensorLinearGet => {
                let (t, ix) = (v(self, 0), v(self, 1));
                let tensor = self.tensor_name(args[0]);
                quote!(#rt::tensor_linear_get(B::CHECKS, #site, #tensor, #t, #ix))
            }
            TensorLinearSet => {
                let (t, ix, x) = (v(self, 0), v(self, 1), v(self, 2));
                let tensor = self.tensor_name(args[0]);
                quote!(#rt::tensor_linear_set(B::CHECKS, #site, #tensor, #t, #ix, #x))
            }
            TensorRank => {
                let t = v(self, 0);
                quote!((#t).rank())
            }
            TensorShape => {
                let t = v(self, 0);
                quote!((#t).shape_seq())
            }
            TensorSub => {
                let (t, o, l) = (v(self, 0), v(self, 1), v(self, 2));
                quote!((#t).sub(#site, #o, #l))
            }
        }
    }
}

/// How a known function is called.
#[derive(Clone)]
enum Callee {
    Closure(proc_macro2::Ident),
    Item(proc_macro2::Ident, Vec<(VarId, Type)>),
}

/// Why host code that makes a launching function a value cannot run on the CUDA targets: the
/// boxed `Func` must outlive the call, which it would borrow.
fn boxed_launcher() -> String {
    "its host code uses a function that launches kernels as a value (not called, nor passed to \
     a sequential loop), which the CUDA target does not run"
        .to_string()
}

/// The result of applying a function of type `t` to `n` arguments.
fn result_type(t: &Type, n: usize) -> Type {
    t.split_arrows(n).1.clone()
}

/// Whether the expression denotes a value already held somewhere (so it can be borrowed for as
/// long as that holder lives).
fn is_place(e: &Expr, bindings: &HashMap<VarId, Binding>) -> bool {
    match &e.kind {
        ExprKind::Var { ident, .. } => {
            matches!(bindings.get(&ident.id), Some(Binding::Value { .. }))
        }
        ExprKind::Proj { expr, .. } => is_place(expr, bindings),
        ExprKind::App { func, args } => {
            matches!(
                func.kind,
                ExprKind::Intrinsic(Intrinsic::Get | Intrinsic::Head)
            ) && is_place(&args[0], bindings)
        }
        _ => false,
    }
}

/// The tuple index of field `l` of a record of type `t`: records are tuples in label order.
fn field_index(t: &Type, l: &Label) -> TokenStream {
    let position = match t {
        Type::Record(fs) => fs.iter().position(|(f, _)| f == l),
        _ => None,
    };
    let i = position.unwrap_or(match l {
        Label::Index(i) => *i as usize,
        Label::Name(_) => 0,
    });
    let i = syn::Index::from(i);
    quote!(#i)
}

/// Whether a record with named fields (a derived struct) occurs in the type: such a result
/// converts to the Rust type the context expects (`FromAccel`), since its name is not part of it.
fn has_named_record(t: &Type) -> bool {
    match t {
        Type::Record(fs) => fs
            .iter()
            .any(|(l, t)| matches!(l, Label::Name(_)) || has_named_record(t)),
        Type::Seq(a) | Type::Tensor(a) => has_named_record(a),
        Type::Arrow(..) | Type::Int | Type::Float | Type::Bool | Type::Var(_) => false,
    }
}

/// The Rust identifier of a user's variable: names are kept without `r#` (`r#x` and `x` are the
/// same variable in Rust), so a keyword is written raw again.
pub fn user_ident(name: &str, span: Span) -> proc_macro2::Ident {
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do",
        "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in",
        "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
        "return", "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe",
        "unsized", "use", "virtual", "where", "while", "yield",
    ];
    let any = <syn::Ident as syn::ext::IdentExt>::parse_any;
    match syn::parse::Parser::parse_str(any, name) {
        _ if KEYWORDS.contains(&name) => proc_macro2::Ident::new_raw(name, span),
        Ok(_) => proc_macro2::Ident::new(name, span),
        // Not an identifier at all (never from the parser): a name that cannot clash.
        Err(_) => format_ident!("__pm_invalid_name", span = span),
    }
}

/// A literal of type `t`: a number whose type the captured values fix converts at run time.
fn lit(l: &Lit, t: &Type, rt: &TokenStream) -> TokenStream {
    match (l, t) {
        (Lit::Int(i), Type::Var(v)) => {
            let (n, site) = (Gen::numeric_param(*v), format_ident!("{}", SITE));
            return quote!(<#n as #rt::Int>::from_lit(&#site, #i));
        }
        (Lit::Float(f), Type::Var(v)) => {
            let n = Gen::numeric_param(*v);
            let f = Literal::f64_suffixed(*f);
            return quote!(<#n as #rt::Float>::from_lit(#f));
        }
        _ => {}
    }
    match l {
        Lit::Int(i) => {
            let l = Literal::i64_suffixed(*i);
            quote!((#l))
        }
        Lit::Float(f) => {
            let l = Literal::f64_suffixed(*f);
            quote!((#l))
        }
        Lit::Bool(true) => quote!(true),
        Lit::Bool(false) => quote!(false),
        Lit::Unit => quote!(()),
    }
}

fn pat_test(p: &Pat, path: TokenStream, rt: &TokenStream) -> TokenStream {
    match &p.kind {
        PatKind::Wild | PatKind::Bind(_) | PatKind::Lit(Lit::Unit) => quote!(true),
        PatKind::Lit(l) => {
            let l = lit(l, &p.ty, rt);
            quote!((#path == #l))
        }
        PatKind::Record(fs) => {
            let tests: Vec<TokenStream> = fs
                .iter()
                .filter(|(_, p)| !p.irrefutable())
                .map(|(l, sub)| {
                    let idx = field_index(&p.ty, l);
                    pat_test(sub, quote!(#path.#idx), rt)
                })
                .collect();
            if tests.is_empty() {
                quote!(true)
            } else {
                quote!((#(#tests)&&*))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    /// The generated code for `tokens`, checked to be a Rust expression.
    fn generated(tokens: TokenStream) -> String {
        let mono = crate::compile_site(tokens).unwrap_or_else(|(e, _)| panic!("{}", e[0].text()));
        let code = generate_site(&mono, &quote!(::pmexpr::__private), false, None, None);
        syn::parse2::<syn::Expr>(code.clone()).expect("the expansion is a Rust expression");
        code.to_string()
    }

    #[test]
    fn reduce_of_map_is_fused() {
        let code = generated(quote!(reduce(addi, 0, map(|x| x * 2, s))));
        // Through the runtime's helper, which checks the operator's laws in debug mode.
        assert!(code.contains("map_reduce :: < B"), "{code}");
        assert!(!code.contains("B :: map ("), "{code}");
        let code = generated(quote!(reduce(addi, 0, map2(|x, y| x * y, s, s))));
        assert!(code.contains("map2_reduce :: < B"), "{code}");
        assert!(!code.contains("B :: map2 ("), "{code}");
    }

    #[test]
    fn sequences_are_passed_by_reference_and_numbers_by_value() {
        let code = generated(quote!(reduce(addi, c, s)));
        assert!(code.contains("c_0 : i64"), "{code}");
        assert!(
            code.contains("s_1 : & :: pmexpr :: __private :: Seq < 'pm , i64 >"),
            "{code}"
        );
    }

    #[test]
    fn numbers_fixed_by_captured_values_are_generic() {
        let code = generated(quote!(map2(|x, y| x + y, a, b)));
        assert!(code.contains(": :: pmexpr :: __private :: Num"), "{code}");
        assert!(
            code.contains(":: pmexpr :: __private :: Num :: add"),
            "{code}"
        );
    }

    #[test]
    fn parallel_keyword_bodies_are_move_closures_over_references() {
        let code = generated(quote!({
            let s2 = map(|x| x + 1, s);
            par_loop(n, |i| tensor_set(t, [i], reduce(addi, i, s2)))
        }));
        // The owned local `s2` is lent to the loop body; the tensor view is copied into it.
        assert!(code.contains("let s2_2 = & s2_2 ; move | __a"), "{code}");
        assert!(code.contains("B :: par_loop"), "{code}");
    }

    #[test]
    fn recursive_functions_become_lifted_items() {
        let code = generated(quote!({
            fn f(x: i64) -> i64 {
                if x == 0 { k } else { f(x - 1) }
            }
            f(3)
        }));
        // `k` is captured: the item takes it as an extra parameter, and calls pass it.
        assert!(
            code.contains(
                "fn f_0 < 'pm , B : :: pmexpr :: __private :: Backend > (x_1 : i64 , k_2 : i64)"
            ),
            "{code}"
        );
        assert!(code.contains("f_0 :: < B > ("), "{code}");
    }

    #[test]
    fn expansions_of_a_corpus_are_rust_expressions() {
        let corpus = [
            quote!({
                let f = |x| muli(c, addi(x, 1));
                reduce(addi, 0, map(f, s))
            }),
            quote!(map(|row| create(length(row), |j| get(row, j) * 2.0), m)),
            quote!({
                let fs = [addi(1), negi];
                map(|f| f(3), fs)
            }),
            quote!(match (x, [1, 2]) {
                (0, s) => length(s),
                (n, _) => n,
            }),
            quote!(seq_loop_acc((0, 1.5), 3, |acc: (i64, f64), i| (
                acc.0 + i,
                acc.1 * 2.0
            ))),
            quote!(flatten([
                [tensor_rank(t)],
                tensor_shape(tensor_slice(t, [0]))
            ])),
        ];
        for tokens in corpus {
            generated(tokens);
        }
    }
}
