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
//! launch take it as their last parameter. A `tensor_gemm` of host code launches the kernel the
//! CUDA generator made for it, after checking its operands on the host. Tensors stay on the
//! device for the whole call unless host code reads or writes tensor elements itself: then each
//! launch copies them back.
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
use crate::ast::{Expr, ExprKind, NodeId, VarId};
use crate::classify::Backend;
use crate::codegen::cuda::{CudaModule, CudaOptions, generate, instantiations, is_launch};
use crate::codegen::numbers::{self, Number};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::Def;
use crate::mono::Mono;
use crate::site::SiteProgram;

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

/// Which `par_loop` node of the monomorphic program launches which kernel, and the kernels'
/// arguments as expressions of the monomorphic program.
///
/// Each kernel records the [`NodeId`] of the `par_loop` it replaces; lifting and extraction keep
/// the identities of the nodes they move, so that node is in the host code of the monomorphic
/// program. A kernel's arguments name the lifted function's extra parameters, which are renamed
/// back to the variables they copy ([`crate::lift::Lifted::origins`]).
#[allow(clippy::type_complexity)]
fn host_launches(
    mono: &Mono,
    program: &SiteProgram,
    module: &CudaModule,
) -> Result<(HashMap<NodeId, usize>, Vec<Vec<Expr>>), String> {
    let lifted = &program.lifted;
    let mut loops = HashSet::new();
    mono.expr.walk(&mut |x| {
        if is_launch(x) {
            loops.insert(x.id);
        }
    });
    let mut launches = HashMap::new();
    for (k, kernel) in module.kernels.iter().enumerate() {
        if !loops.contains(&kernel.node) || launches.insert(kernel.node, k).is_some() {
            return Err(format!(
                "the `par_loop` of kernel `{}` is not one node of its host code (a bug in pmexpr: please report it)",
                kernel.name
            ));
        }
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
    let mut modules: Vec<(Vec<Number>, CudaModule)> = Vec::new();
    for inst in instantiations(&mono.numeric) {
        let module = generate(program, &inst, &options).map_err(|e| e.to_string())?;
        let numbers = mono.numeric.iter().map(|(v, _)| inst[v]).collect();
        modules.push((numbers, module));
    }
    let (launches, kernel_args) = host_launches(mono, program, &modules[0].1)?;
    let resident = !host_touches_tensors(program);
    let datas = modules
        .iter()
        .map(|(numbers, m)| module_data(numbers, m, build.out_dir.as_deref(), rt));
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
    numbers: &[Number],
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
    let numbers = numbers.iter().map(|n| numbers::rust_value(*n, rt));
    quote! {
        #rt::ModuleData {
            instantiation: &[#(#numbers),*],
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
    fn copies_of_a_polymorphic_function_launch_their_own_kernels() {
        // `bump` is used at two types (of its unused `x`): monomorphization copies it, and each
        // copy's `par_loop` gets its own node, kernel and launch.
        let (mono, program, module) = site(
            quote!({
                bump(t, true);
                bump(t, (true, false));
                bump(t, false)
            }),
            &[(
                "bump",
                "fn bump(t: &Tensor<i64>, x: _) -> _ { par_loop(length(tensor_shape(t)), |i| tensor_set(t, [i], tensor_get(t, [i]) + 1)); x }",
            )],
        );
        assert_eq!(module.kernels.len(), 2, "one kernel per copy");
        let (launches, _) = host_launches(&mono, &program, &module).unwrap();
        assert_eq!(launches.len(), 2);
        // Each copy's `par_loop` launches the kernel generated for that copy (the kernel's host
        // binding is the copy's lifted function).
        let mut seen = HashSet::new();
        mono.expr.walk(&mut |x| {
            if let ExprKind::RecLet { fns, .. } = &x.kind {
                for f in fns {
                    f.body.walk(&mut |y| {
                        if let ExprKind::Keyword {
                            kw: Keyword::ParLoop,
                            ..
                        } = y.kind
                        {
                            let k = launches[&y.id];
                            assert_eq!(module.kernels[k].binding, f.ident.id);
                            seen.insert(k);
                        }
                    });
                }
            }
        });
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn node_identities_are_unique_in_the_monomorphic_and_lifted_programs() {
        // Copies of polymorphic functions, lambdas lifted with extra parameters, and the uses
        // of lifted functions (applications that lifting makes).
        let site = compile_for_test(
            quote!({
                let twice = |f, x| f(f(x));
                let inc = |y| y + c;
                map(|k| twice(inc, k) + twice(|z| z * c, k), s)
            }),
            &[],
        )
        .expect("the site compiles");
        let (mono, program) = (site.mono, site.program.expect("a Futhark site"));
        let mut ids = HashSet::new();
        mono.expr.walk(&mut |x| {
            assert_ne!(x.id, crate::ast::NodeId::UNSET);
            assert!(
                ids.insert(x.id),
                "{:?} twice in the monomorphic program",
                x.id
            );
        });
        let mut ids = HashSet::new();
        for d in program.lifted.bindings.iter().flat_map(|b| b.defs()) {
            d.value.walk(&mut |x| {
                assert_ne!(x.id, crate::ast::NodeId::UNSET);
                assert!(ids.insert(x.id), "{:?} twice in the lifted program", x.id);
            });
        }
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

    /// A `tensor_gemm` of host code launches a kernel of its own, with its seven arguments, and
    /// keeps the tensors on the device.
    #[test]
    fn products_launch_their_own_kernel() {
        let tokens = quote!(seq_loop(steps, |_s| {
            tensor_gemm(y, x, false, w, true, 1.0, 0.0);
            par_loop(2, |i| tensor_set(y, [i, 0], 0.0))
        }));
        let h = host(tokens.clone(), &[]).unwrap();
        assert_eq!(h.launches.len(), 2);
        assert_eq!(
            h.kernel_args.iter().map(Vec::len).collect::<Vec<_>>(),
            [7, 1]
        );
        assert!(resident(&h));
        let (mono, _, _) = site(tokens, &[]);
        let rt = quote!(::pmexpr::__private);
        let code = crate::codegen::rust::generate_site(
            &crate::opt::optimize(&mono),
            &rt,
            false,
            Some(&h),
            None,
        )
        .to_string();
        assert!(code.contains(":: gemm_elements ("), "{code}");
        assert!(code.contains("__pm_c . launch (0 , __pm_n"), "{code}");
    }

    #[test]
    fn launching_functions_take_the_call() {
        let item = "fn bump(t: &Tensor<i64>, c: i64) { par_loop(length(tensor_shape(t)), |i| tensor_set(t, [i], c)) }";
        let tokens = quote!(seq_loop(3, |k| bump(t, k)));
        let (mono, program, _) = site(tokens, &[("bump", item)]);
        let rt = quote!(::pmexpr::__private);
        let h = cuda_host(&mono, &program, &CudaBuild::default(), &rt).unwrap();
        let code = crate::codegen::rust::generate_site(
            &crate::opt::optimize(&mono),
            &rt,
            false,
            Some(&h),
            None,
        )
        .to_string();
        assert!(
            code.contains("__pm_call : & :: core :: cell :: RefCell < :: pmexpr :: __private :: CudaCall < 'pm >>"),
            "{code}"
        );
        assert!(code.contains("__pm_c . launch (0"), "{code}");
    }

    /// An open type picks its module at run time where a kernel sees its values, and fits any
    /// module (`None`) where only host code counts them.
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
            crate::codegen::rust::generate_site(
                &crate::opt::optimize(&mono),
                &rt,
                false,
                Some(&h),
                None,
            )
            .to_string()
        };
        let read = code(quote!(par_loop(length(m), |i| tensor_set(
            t,
            [i],
            length(get(m, i))
        ))));
        assert!(
            read.contains("let __pm_names = [:: core :: option :: Option :: Some (:: pmexpr :: __private :: open_instantiation :: < N"),
            "{read}"
        );
        assert!(
            read.contains(
                ":: pmexpr :: __private :: Value + :: pmexpr :: __private :: CudaArg < 'pm >"
            ),
            "{read}"
        );
        let counted = code(quote!(par_loop(length(s), |i| tensor_set(t, [i], i))));
        assert!(
            counted.contains("let __pm_names = [:: core :: option :: Option :: None]"),
            "{counted}"
        );
    }
}
