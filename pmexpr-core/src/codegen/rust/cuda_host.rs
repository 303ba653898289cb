//! The host side of a CUDA-class site: what `accelerate!` embeds so that the runtime can run the
//! site's kernels (the modules of [`crate::codegen::cuda`] as `static` data), and which
//! `par_loop`s of the accelerated expression become launches in the Rust host code that [`super`]
//! generates.
//!
//! The host code is the accelerated expression itself, compiled to Rust like for the CPU targets
//! (sequentially), except that each `par_loop` of host code launches the kernel generated for it,
//! with the kernel's parameters — the bound arguments of the loop's lifted function, then `n` —
//! marshaled by the runtime. Host code is the expression's own code and the functions it calls or
//! passes to a sequential loop ([`crate::codegen::cuda::HostPlan::functions`]): a launch may sit
//! inside `seq_loop`, `seq_loop_acc`, `foldl`, a branch, a closure, a local `fn` (recursion
//! included) or a `#[pmexpr]` function, and runs each time the host code reaches it. Closures use
//! the call (a shared `RefCell` of the runtime's `Call`) from their environment; `fn` items that
//! launch take it as their last parameter. Tensors stay on the device for the whole call unless
//! host code reads or writes tensor elements itself (then each launch copies them back).
//!
//! Not run on the CUDA targets (the site runs on the CPU ones, and the build hook says why, with
//! [`unsupported_host`]): a launching function used as a value (boxed, it would outlive the call
//! it borrows) or inside the function of a parallel keyword; the CUDA well-formedness rules
//! already reject both in valid sites.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{CudaBuild, CudaHost, cuda_host_problem};
use crate::ast::{Expr, ExprKind, VarId};
use crate::classify::Backend;
use crate::codegen::cuda::{CudaModule, CudaOptions, generate, instantiations};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::Def;
use crate::mono::Mono;
use crate::site::SiteProgram;

/// Calls `f` on `e` and every subexpression of the host code around it: not inside lambdas or
/// `fn` items, which lifting moves out of the accelerated binding.
pub(crate) fn walk_host<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Lam { .. } => {}
        ExprKind::RecLet { body, .. } => walk_host(body, f),
        _ => e.children(&mut |c| walk_host(c, f)),
    }
}

/// Whether the host code reads or writes tensor elements itself (then tensors cannot stay on the
/// device between launches). Host code is the accelerated binding and every function it reaches
/// other than through the function argument of a `par_loop` (device code): a function that host
/// code only calls may read a tensor that a kernel wrote.
fn host_touches_tensors(program: &SiteProgram) -> bool {
    fn visit(e: &Expr, defs: &HashMap<VarId, &Def>, todo: &mut Vec<VarId>) -> bool {
        match &e.kind {
            ExprKind::Intrinsic(
                Intrinsic::TensorGet
                | Intrinsic::TensorSet
                | Intrinsic::TensorLinearGet
                | Intrinsic::TensorLinearSet,
            ) => true,
            ExprKind::Var { ident, .. } => {
                if defs.contains_key(&ident.id) {
                    todo.push(ident.id);
                }
                false
            }
            ExprKind::Keyword {
                kw: Keyword::ParLoop,
                args,
            } => {
                // The loop's function runs on the device; its bound arguments on the host.
                let bound: &[Expr] = match &args[1].kind {
                    ExprKind::App { args, .. } => args,
                    _ => &[],
                };
                visit(&args[0], defs, todo) | bound.iter().any(|a| visit(a, defs, todo))
            }
            _ => {
                let mut touches = false;
                e.children(&mut |c| touches |= visit(c, defs, todo));
                touches
            }
        }
    }
    let defs = program.lifted.defs();
    let mut seen: HashSet<VarId> = HashSet::new();
    let mut todo = vec![program.lifted.accelerated];
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Some(d) = defs.get(&id)
            && visit(&d.value, &defs, &mut todo)
        {
            return true;
        }
    }
    false
}

/// Why a CUDA-class site's host code cannot run on the CUDA targets, or `None` when it can: the
/// build hook's warning, and the same test [`cuda_host`] makes. `module` is the site's module for
/// its first instantiation.
pub fn unsupported_host(mono: &Mono, program: &SiteProgram, module: &CudaModule) -> Option<String> {
    let (launches, kernel_args) = match host_launches(mono, program, module) {
        Ok(l) => l,
        Err(why) => return Some(why),
    };
    let host = CudaHost {
        launches,
        kernel_args,
        kernels: TokenStream::new(),
    };
    cuda_host_problem(mono, &quote!(::pmexpr::__private), &host)
}

/// The body in the monomorphic program of each function of the lifted program: a lifted
/// function keeps the identifier of its `let` binder or `fn` item, and the parameters of its
/// own lambda (it only gains leading extra parameters), which identifies an anonymous lambda.
fn mono_bodies(e: &Expr) -> HashMap<VarId, &Expr> {
    let mut out: HashMap<VarId, &Expr> = HashMap::new();
    e.walk(&mut |x| match &x.kind {
        ExprKind::Lam { params, body } => {
            for p in params {
                out.insert(p.ident.id, body);
            }
        }
        ExprKind::Let { binder, value, .. } => {
            if let ExprKind::Lam { body, .. } = &value.kind {
                out.insert(binder.ident.id, body);
            }
        }
        ExprKind::RecLet { fns, .. } => {
            for f in fns {
                out.insert(f.ident.id, &f.body);
                for p in &f.params {
                    out.insert(p.ident.id, &f.body);
                }
            }
        }
        _ => {}
    });
    out
}

/// Which `par_loop` node of the monomorphic program launches which kernel (by the address of the
/// node's arguments), and the kernels' arguments as expressions of the monomorphic program.
///
/// Each kernel belongs to a host function of the lifted program ([`HostPlan::functions`]) and is
/// its `ordinal`-th `par_loop`; the same function's body in the monomorphic program has its
/// `par_loop`s in the same order once nested functions are skipped ([`walk_host`]), since lifting
/// only moves those out. A kernel's arguments name the lifted function's extra parameters, which
/// are renamed back to the variables they copy ([`crate::lift::Lifted::origins`]).
#[allow(clippy::type_complexity)]
fn host_launches(
    mono: &Mono,
    program: &SiteProgram,
    module: &CudaModule,
) -> Result<(HashMap<usize, usize>, Vec<Vec<Expr>>), String> {
    let bug = |what: String| format!("{what} (a bug in pmexpr: please report it)");
    let lifted = &program.lifted;
    let defs = lifted.defs();
    let bodies = mono_bodies(&mono.expr);
    let mut launches = HashMap::new();
    for (f, name) in &module.host.functions {
        let body: &Expr = if *f == lifted.accelerated {
            &mono.expr
        } else {
            let def = defs
                .get(f)
                .ok_or_else(|| bug(format!("the host function `{name}` was not lifted")))?;
            let mut ids = vec![*f];
            if let ExprKind::Lam { params, .. } = &def.value.kind {
                ids.extend(params.iter().rev().map(|p| p.ident.id));
            }
            ids.iter()
                .find_map(|id| bodies.get(id).copied())
                .ok_or_else(|| bug(format!("the host function `{name}` has no source")))?
        };
        let mut nodes: Vec<&Expr> = Vec::new();
        walk_host(body, &mut |x| {
            if matches!(
                x.kind,
                ExprKind::Keyword {
                    kw: Keyword::ParLoop,
                    ..
                }
            ) {
                nodes.push(x);
            }
        });
        let mine: Vec<(usize, usize)> = module
            .kernels
            .iter()
            .enumerate()
            .filter(|(_, k)| k.binding == *f)
            .map(|(i, k)| (i, k.ordinal))
            .collect();
        if nodes.len() != mine.len() {
            return Err(bug(format!(
                "`{name}` has {} `par_loop`s on the host but {} kernels were generated for it",
                nodes.len(),
                mine.len()
            )));
        }
        for (k, ordinal) in mine {
            let ExprKind::Keyword { args, .. } = &nodes[ordinal].kind else {
                unreachable!("collected as par_loop")
            };
            launches.insert(args.as_ptr() as usize, k);
        }
    }
    if launches.len() != module.kernels.len() {
        return Err(bug(format!(
            "{} kernels were generated but {} `par_loop`s launch them",
            module.kernels.len(),
            launches.len()
        )));
    }
    let kernel_args = module
        .kernels
        .iter()
        .map(|k| {
            k.params[..k.params.len() - 1]
                .iter()
                .map(|p| {
                    let mut v = p.value.clone();
                    v.rename(&mut |id| lifted.origins.get(&id).copied().unwrap_or(id));
                    v
                })
                .collect()
        })
        .collect();
    Ok((launches, kernel_args))
}

/// The host side of a CUDA-class site, or why it has none (then it runs on the CPU targets).
pub fn cuda_host(
    mono: &Mono,
    program: &SiteProgram,
    build: &CudaBuild,
    rt: &TokenStream,
) -> Result<CudaHost, String> {
    if program.backend != Backend::Cuda {
        return Err(format!("a {} site", program.backend));
    }
    let options = CudaOptions::for_site(&build.site_name);
    let mut modules: Vec<(Vec<&'static str>, CudaModule)> = Vec::new();
    for inst in instantiations(&mono.numeric) {
        let module = generate(program, &inst, &options).map_err(|e| e.to_string())?;
        let tags = mono.numeric.iter().map(|(v, _)| inst[v].tag()).collect();
        modules.push((tags, module));
    }
    let (launches, kernel_args) = host_launches(mono, program, &modules[0].1)?;
    let resident = !host_touches_tensors(program);
    let datas = modules
        .iter()
        .map(|(tags, m)| module_data(tags, m, build.out_dir.as_deref(), rt));
    let kernels = quote! {
        #rt::SiteKernels { modules: &[#(#datas),*], resident: #resident }
    };
    let host = CudaHost {
        launches,
        kernel_args,
        kernels,
    };
    match cuda_host_problem(mono, rt, &host) {
        Some(why) => Err(why),
        None => Ok(host),
    }
}

/// A module as a `ModuleData` expression; the PTX the hook compiled is included when its source
/// is the one generated here.
fn module_data(
    tags: &[&str],
    m: &CudaModule,
    out_dir: Option<&Path>,
    rt: &TokenStream,
) -> TokenStream {
    let ptx = out_dir
        .map(|d| d.join("pmexpr").join("cuda"))
        .filter(|d| {
            std::fs::read_to_string(d.join(format!("{}.cu", m.namespace)))
                .ok()
                .as_deref()
                == Some(m.source.as_str())
        })
        .map(|d| d.join(format!("{}.ptx", m.namespace)))
        .filter(|p| p.is_file())
        .and_then(|p| p.to_str().map(str::to_owned));
    let ptx = match ptx {
        Some(path) => quote!(::core::option::Option::Some(::core::include_str!(#path))),
        None => quote!(::core::option::Option::None),
    };
    let (ns, source) = (&m.namespace, Literal::string(&m.source));
    let kernels = m.kernels.iter().map(|k| {
        let name = &k.name;
        let params = k.params.iter().map(|p| {
            let (size, align) = p.layout.size_align(m.max_rank);
            let (pname, c_type) = (&p.name, &p.c_type);
            quote!(#rt::ParamData { name: #pname, c_type: #c_type, size: #size, align: #align })
        });
        quote!(#rt::KernelData { name: #name, params: &[#(#params),*] })
    });
    let checks = m
        .checks
        .iter()
        .map(|c| format!("`{}` in device function `{}`", c.construct, c.function));
    let max_rank = m.max_rank;
    quote! {
        #rt::ModuleData {
            instantiation: &[#(#tags),*],
            namespace: #ns,
            source: #source,
            ptx: #ptx,
            kernels: &[#(#kernels),*],
            checks: &[#(#checks),*],
            max_rank: #max_rank,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::cuda::default_instantiation;
    use crate::site::compile_for_test;

    /// A site's monomorphic program, its lifted program and its module (default instantiation).
    fn site(tokens: TokenStream, items: &[(&str, &str)]) -> (Mono, SiteProgram, CudaModule) {
        let site = compile_for_test(tokens, items).expect("the site compiles");
        let program = site.program.expect("not backend = cpu");
        let module = generate(
            &program,
            &default_instantiation(&site.mono.numeric),
            &CudaOptions::for_site("src/lib.rs:1:1"),
        )
        .expect("CUDA code");
        (site.mono, program, module)
    }

    fn host(tokens: TokenStream, items: &[(&str, &str)]) -> Result<CudaHost, String> {
        let (mono, program, module) = site(tokens, items);
        let why = unsupported_host(&mono, &program, &module);
        let host = cuda_host(
            &mono,
            &program,
            &CudaBuild::default(),
            &quote!(::pmexpr::__private),
        );
        // The hook's warning and the macro's fallback agree.
        assert_eq!(why, host.as_ref().err().cloned());
        host
    }

    /// Whether a generated `SiteKernels` keeps tensors on the device between launches.
    fn resident(h: &CudaHost) -> bool {
        let k = h.kernels.to_string();
        assert!(k.contains("resident"), "{k}");
        k.contains("resident : true")
    }

    #[test]
    fn loops_branches_and_functions_launch_from_host_code() {
        let item = "fn bump(t: &Tensor<i64>, c: i64) { par_loop(length(tensor_shape(t)), |i| tensor_set(t, [i], c)) }";
        let (mono, program, module) = site(
            quote!({
                let scale = |c| par_loop(n, |i| tensor_set(t, [i], tensor_get(t, [i]) * c));
                fn shift(k: i64) {
                    if k > 0 {
                        par_loop(n, |i| tensor_set(t, [i], tensor_get(t, [i]) + k));
                        shift(k - 1)
                    } else {
                        ()
                    }
                }
                seq_loop(steps, |k| {
                    scale(k);
                    if flag {
                        par_loop(n, |i| tensor_set(u, [i], k))
                    } else {
                        bump(u, k)
                    }
                });
                let total = seq_loop_acc(0, steps, |acc, k| {
                    shift(k);
                    acc + k
                });
                bump(t, total)
            }),
            &[("bump", item)],
        );
        assert_eq!(unsupported_host(&mono, &program, &module), None);
        // Four `par_loop`s, one kernel each, however often host code runs them.
        assert_eq!(module.kernels.len(), 4, "bump is one function");
        let (launches, args) = host_launches(&mono, &program, &module).unwrap();
        assert_eq!(launches.len(), 4);
        assert_eq!(launches.values().copied().collect::<HashSet<_>>().len(), 4);
        // The arguments name the site's variables, not the lifted functions' copies of them.
        for a in args.iter().flatten() {
            a.walk(&mut |x| {
                if let ExprKind::Var { ident, .. } = &x.kind {
                    assert!(
                        !program.lifted.origins.contains_key(&ident.id),
                        "{}",
                        ident.name
                    );
                }
            });
        }
        let h = host(
            quote!(seq_loop(steps, |_k| {
                par_loop(n, |i| tensor_set(b, [i], tensor_get(a, [i]) * 2.0));
                par_loop(n, |i| tensor_set(a, [i], tensor_get(b, [i])))
            })),
            &[],
        )
        .unwrap();
        assert_eq!(h.launches.len(), 2);
        assert!(resident(&h));
    }

    #[test]
    fn host_code_that_reads_tensors_keeps_them_on_the_host() {
        // In a loop's function.
        let h = host(
            quote!(seq_loop_acc(0, steps, |acc, k| {
                par_loop(n, |i| tensor_set(t, [i], k));
                acc + tensor_get(t, [0])
            })),
            &[],
        )
        .unwrap();
        assert!(!resident(&h));
        // In a function that host code only calls.
        let h = host(
            quote!({
                par_loop(n, |i| tensor_set(t, [i], i));
                let first = |x| tensor_get(t, [x]);
                first(0)
            }),
            &[],
        )
        .unwrap();
        assert!(!resident(&h));
    }

    #[test]
    fn launching_functions_take_the_call() {
        let item = "fn bump(t: &Tensor<i64>, c: i64) { par_loop(length(tensor_shape(t)), |i| tensor_set(t, [i], c)) }";
        let tokens = quote!(seq_loop(3, |k| bump(t, k)));
        let (mono, program, _) = site(tokens, &[("bump", item)]);
        let rt = quote!(::pmexpr::__private);
        let h = cuda_host(&mono, &program, &CudaBuild::default(), &rt).unwrap();
        let code =
            crate::codegen::rust::generate_site(&mono, &rt, false, Some(&h), None).to_string();
        assert!(
            code.contains("__pm_call : & :: core :: cell :: RefCell < :: pmexpr :: __private :: CudaCall < 'pm >>"),
            "{code}"
        );
        assert!(code.contains("__pm_c . launch (0"), "{code}");
    }

    /// An open type picks its module at run time where a kernel sees its values, and fits any
    /// module (`"*"`) where only host code counts them.
    #[test]
    fn open_types_name_their_module_where_kernels_see_them() {
        let rt = quote!(::pmexpr::__private);
        let code = |tokens: TokenStream| {
            let (mono, program, _) = site(tokens, &[]);
            assert!(
                mono.numeric
                    .iter()
                    .any(|(_, k)| *k == crate::infer::Numeric::Open),
                "{:?}",
                mono.numeric
            );
            let h = cuda_host(&mono, &program, &CudaBuild::default(), &rt).unwrap();
            crate::codegen::rust::generate_site(&mono, &rt, false, Some(&h), None).to_string()
        };
        let read = code(quote!(par_loop(length(m), |i| tensor_set(
            t,
            [i],
            length(get(m, i))
        ))));
        assert!(
            read.contains("let __pm_names = [:: pmexpr :: __private :: open_instantiation :: < N"),
            "{read}"
        );
        assert!(
            read.contains(
                ":: pmexpr :: __private :: Value + :: pmexpr :: __private :: CudaArg < 'pm >"
            ),
            "{read}"
        );
        let counted = code(quote!(par_loop(length(s), |i| tensor_set(t, [i], i))));
        assert!(counted.contains("let __pm_names = [\"*\"]"), "{counted}");
    }
}
