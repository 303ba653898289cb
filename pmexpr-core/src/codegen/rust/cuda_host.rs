//! The host side of a CUDA-class site: what the build hook records of the site's CUDA modules
//! ([`site_modules`], written to the manifest of [`crate::cuda_manifest`]), and what `accelerate!`
//! makes of that record ([`cuda_host`]): the modules as `static` data, their files embedded with
//! `include_str!`, and which `par_loop`s of the accelerated expression become launches in the
//! Rust host code that [`super`] generates. The CUDA code is generated once, by the hook; the
//! macro never generates it.
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
//! Not run on the CUDA targets (the site runs on the CPU ones, and the build hook says why, from
//! [`site_modules`]): a launching function used as a value (boxed, it would outlive the call it
//! borrows) or inside the function of a parallel keyword; the CUDA well-formedness rules already
//! reject both in valid sites.
//!
//! Without the hook's record of a site (no build script, or a site the hook did not see: written
//! by a macro, or in a file it does not scan) the site has no kernels ([`CudaSite::Missing`]): it
//! runs on the CPU targets, and the `cuda` and `cuda-emulator` targets fail at the site saying why.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use proc_macro2::TokenStream;
use quote::quote;

use super::{CudaBuild, CudaHost, CudaSite, cuda_host_problem};
use crate::ast::{Expr, ExprKind, NodeId, VarId};
use crate::classify::Backend;
use crate::codegen::cuda::{CudaModule, CudaOptions, generate, instantiations, is_launch};
use crate::codegen::numbers::{self, Number};
use crate::cuda_manifest::{
    CudaManifest, KernelAbi, ManifestSite, ModuleFiles, ParamAbi, SiteModules,
};
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

/// The arguments a launching node hands its kernel, before `n`: the bound arguments of a
/// `par_loop`'s lifted function (none when the function is a plain name), or the seven arguments
/// of a `tensor_gemm` — what the CUDA generator makes the kernel's parameters of
/// ([`crate::codegen::cuda::KernelParam::value`]).
fn launch_args(node: &Expr) -> &[Expr] {
    match &node.kind {
        ExprKind::Keyword { args, .. } => match &args[1].kind {
            ExprKind::App { args, .. } => args,
            _ => &[],
        },
        ExprKind::App { args, .. } => args,
        _ => &[],
    }
}

/// Which node of the monomorphic program launches which kernel, and the kernels' arguments as
/// expressions of the monomorphic program, for the kernels launched by `nodes` (in kernel order).
///
/// Each kernel records the [`NodeId`] of the `par_loop` (or `tensor_gemm`) it replaces; lifting
/// and extraction keep the identities of the nodes they move, so that node is both in the
/// extracted program, where its arguments are, and in the host code of the monomorphic program.
/// A kernel's arguments name the lifted function's extra parameters, which are renamed back to
/// the variables they copy ([`crate::lift::Lifted::origins`]). Nothing here generates CUDA code:
/// the macro finds the launches of the manifest's kernels this way.
#[allow(clippy::type_complexity)]
fn host_launches(
    mono: &Mono,
    program: &SiteProgram,
    nodes: &[NodeId],
) -> Result<(HashMap<NodeId, usize>, Vec<Vec<Expr>>), String> {
    let lifted = &program.lifted;
    let mut loops = HashSet::new();
    mono.expr.walk(&mut |x| {
        if is_launch(x) {
            loops.insert(x.id);
        }
    });
    let mut extracted: HashMap<NodeId, &Expr> = HashMap::new();
    for d in program.extracted.iter().flat_map(|b| b.defs()) {
        d.value.walk(&mut |x| {
            if is_launch(x) {
                extracted.insert(x.id, x);
            }
        });
    }
    let mut launches = HashMap::new();
    let mut kernel_args = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        let found = extracted.get(node).filter(|_| loops.contains(node));
        let Some(e) = found.filter(|_| launches.insert(*node, k).is_none()) else {
            return Err(format!(
                "the `par_loop` of kernel {k} is not one node of its host code"
            ));
        };
        let args = launch_args(e).iter().map(|a| {
            let mut v = a.clone();
            v.rename(&mut |id| lifted.origins.get(&id).copied().unwrap_or(id));
            v
        });
        kernel_args.push(args.collect());
    }
    Ok((launches, kernel_args))
}

/// What the build hook makes of a CUDA-class site: its modules, one per instantiation of its
/// number types (the default first), and the manifest's record of them — their files
/// (`pmexpr/cuda/<namespace>.cu`; no PTX yet, the hook records it once NVRTC made it), the
/// kernels' layouts, the launching nodes. `Err`: the site runs on the CPU targets, and the text
/// says why (the hook's warning, after `accelerate! at <site> `).
///
/// The host code is generated here once to see whether it can be ([`cuda_host_problem`]), with
/// the launches found as [`cuda_host`] finds them, so that the macro need not check again.
pub fn site_modules(
    mono: &Mono,
    program: &SiteProgram,
    site_name: &str,
) -> Result<(SiteModules, Vec<CudaModule>), String> {
    if program.backend != Backend::Cuda {
        return Err(format!("is a {} site", program.backend));
    }
    let options = CudaOptions::for_site(site_name);
    let mut modules = Vec::new();
    let mut files = Vec::new();
    for inst in instantiations(&mono.numeric) {
        let m = generate(program, &inst, &options).map_err(|e| {
            format!("cannot run on the CUDA backend and will run on the CPU targets: {e}")
        })?;
        files.push(module_files(
            mono.numeric
                .iter()
                .map(|(v, _)| inst[v].rust_name())
                .collect(),
            &m,
        ));
        modules.push(m);
    }
    let bug = |why: &str| {
        format!("will run on the CPU targets: {why} (a bug in pmexpr: please report it)")
    };
    let nodes: Vec<NodeId> = modules[0].kernels.iter().map(|k| k.node).collect();
    if modules
        .iter()
        .any(|m| !m.kernels.iter().map(|k| k.node).eq(nodes.iter().copied()))
    {
        return Err(bug("its modules launch their kernels from different nodes"));
    }
    let (launches, kernel_args) = host_launches(mono, program, &nodes).map_err(|why| bug(&why))?;
    // The macro finds the kernels' arguments from their nodes: they are those of the generator.
    let generated = modules[0].kernels.iter().map(|k| {
        let before_n = &k.params[..k.params.len() - 1];
        before_n.iter().map(|p| p.value.id).collect::<Vec<_>>()
    });
    if !generated.eq(kernel_args
        .iter()
        .map(|a| a.iter().map(|e| e.id).collect::<Vec<_>>()))
    {
        return Err(bug(
            "its kernels' arguments are not those of their launching nodes",
        ));
    }
    let host = CudaHost {
        launches,
        kernel_args,
        kernels: TokenStream::new(),
    };
    if let Some(why) = cuda_host_problem(mono, &quote!(::pmexpr::__private), &host) {
        return Err(format!("will run on the CPU targets: {why}"));
    }
    let record = SiteModules {
        resident: !host_touches_tensors(program),
        launches: nodes,
        modules: files,
    };
    Ok((record, modules))
}

/// The manifest's record of a module (its PTX not compiled yet).
fn module_files(instantiation: Vec<&str>, m: &CudaModule) -> ModuleFiles {
    let kernels = m.kernels.iter().map(|k| KernelAbi {
        name: k.name.clone(),
        params: k
            .params
            .iter()
            .map(|p| {
                let (size, align) = p.layout.size_align(m.max_rank);
                let (name, c_type) = (p.name.clone(), p.c_type.clone());
                ParamAbi {
                    name,
                    c_type,
                    size,
                    align,
                }
            })
            .collect(),
    });
    let checks = m
        .checks
        .iter()
        .map(|c| format!("`{}` in device function `{}`", c.construct, c.function));
    ModuleFiles {
        instantiation: instantiation.into_iter().map(str::to_owned).collect(),
        namespace: m.namespace.clone(),
        source: format!("{}/{}.cu", CudaManifest::DIR, m.namespace),
        ptx: None,
        kernels: kernels.collect(),
        checks: checks.collect(),
        max_rank: m.max_rank,
    }
}

/// Why a CUDA-class site has no kernels when the build hook did not run.
pub const NO_HOOK: &str = "its CUDA kernels are generated by the build hook, which did not run for this package (call `pmexpr_build::Build::new().compile()` from build.rs)";

/// Why a CUDA-class site has no kernels when the hook ran but did not record it.
pub const NOT_SEEN: &str = "the build hook did not see this `accelerate!` (written by a macro, or in a file the hook does not scan), so it has no CUDA kernels";

/// The host side of a CUDA-class site as `accelerate!` generates it, from the build hook's
/// manifest in `build.out_dir` (the site found by name and by `key`, its tokens'
/// [`crate::mangle::site_key`]; the other sites' entries are not read). `None`: not a CUDA-class
/// site, or one that the hook found runs on the CPU targets only (it said why). No CUDA code is
/// generated here: see [`host_from_manifest`].
pub fn cuda_host(
    mono: &Mono,
    program: &SiteProgram,
    build: &CudaBuild,
    key: u64,
    rt: &TokenStream,
) -> Option<CudaSite> {
    if program.backend != Backend::Cuda {
        return None;
    }
    let unreadable = |e: String| format!("the build hook's CUDA manifest cannot be read ({e})");
    let Some(out_dir) = build.out_dir.as_deref() else {
        return Some(CudaSite::Missing(NO_HOOK.to_string()));
    };
    let entry = match CudaManifest::read(out_dir) {
        None => Err(NO_HOOK.to_string()),
        Some(Err(e)) => Err(unreadable(e)),
        Some(Ok(text)) => match CudaManifest::site_in(&text, &build.site_name, key) {
            Err(e) => Err(unreadable(e)),
            Ok(None) => Err(NOT_SEEN.to_string()),
            Ok(Some(entry)) => Ok(entry),
        },
    };
    match entry {
        Ok(entry) => host_from_manifest(mono, program, &entry, out_dir, rt),
        Err(why) => Some(CudaSite::Missing(why)),
    }
}

/// [`cuda_host`] given the site's entry of the manifest and `OUT_DIR`, which the manifest's paths
/// are relative to. The kernels' launches come from the entry's nodes, found in the site's
/// programs, and the modules' files are embedded by absolute path; the host code is not checked
/// again (the hook did: [`site_modules`]).
pub fn host_from_manifest(
    mono: &Mono,
    program: &SiteProgram,
    entry: &ManifestSite,
    out_dir: &Path,
    rt: &TokenStream,
) -> Option<CudaSite> {
    let record = entry.cuda.as_ref().ok()?;
    let (launches, kernel_args) = match host_launches(mono, program, &record.launches) {
        Ok(l) => l,
        Err(why) => {
            return Some(CudaSite::Missing(format!(
                "the build hook's CUDA kernels do not fit this site ({why}; a bug in pmexpr: please report it)"
            )));
        }
    };
    let datas = match record
        .modules
        .iter()
        .map(|m| module_data(m, out_dir, rt))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(d) => d,
        Err(why) => return Some(CudaSite::Missing(why)),
    };
    let resident = record.resident;
    let kernels = quote! {
        #rt::SiteKernels { modules: &[#(#datas),*], resident: #resident }
    };
    Some(CudaSite::Kernels(CudaHost {
        launches,
        kernel_args,
        kernels,
    }))
}

/// A module as a `ModuleData` expression, its source (and PTX, when the hook compiled it)
/// embedded from the files the hook wrote; `Err` (why the site has no kernels) when their paths
/// cannot be written in `include_str!`.
fn module_data(m: &ModuleFiles, out_dir: &Path, rt: &TokenStream) -> Result<TokenStream, String> {
    let path = |relative: &str| {
        let p = out_dir.join(relative);
        p.to_str()
            .map(str::to_owned)
            .ok_or_else(|| {
                format!(
                    "the build hook's CUDA modules are at a path that is not UTF-8 ({}), which `include_str!` cannot name",
                    p.display()
                )
            })
    };
    let source = path(&m.source)?;
    let ptx = match &m.ptx {
        Some(p) => {
            let p = path(p)?;
            quote!(::core::option::Option::Some(::core::include_str!(#p)))
        }
        None => quote!(::core::option::Option::None),
    };
    let kernels = m.kernels.iter().map(|k| {
        let name = &k.name;
        let params = k.params.iter().map(|p| {
            let (pname, c_type, size, align) = (&p.name, &p.c_type, p.size, p.align);
            quote!(#rt::ParamData { name: #pname, c_type: #c_type, size: #size, align: #align })
        });
        quote!(#rt::KernelData { name: #name, params: &[#(#params),*] })
    });
    // The manifest names each number by its Rust type: the one place that text becomes a number.
    let numbers = (m.instantiation.iter())
        .map(|tag| {
            let n = Number::ALL.iter().find(|n| n.rust_name() == tag);
            n.map(|n| numbers::rust_value(*n, rt)).ok_or_else(|| {
                format!("the build hook's CUDA manifest names a number type `{tag}` that this pmexpr does not know")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (ns, checks, max_rank) = (&m.namespace, &m.checks, m.max_rank);
    Ok(quote! {
        #rt::ModuleData {
            instantiation: &[#(#numbers),*],
            namespace: #ns,
            source: ::core::include_str!(#source),
            ptx: #ptx,
            kernels: &[#(#kernels),*],
            checks: &[#(#checks),*],
            max_rank: #max_rank,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::codegen::cuda::{GENERATED, default_instantiation};
    use crate::cuda_manifest::ManifestSite;
    use crate::pipeline::compile_for_test;

    const NAME: &str = "src/lib.rs:1:1";

    fn rt() -> TokenStream {
        quote!(::pmexpr::__private)
    }

    /// A site's monomorphic program, its lifted program and its module (default instantiation).
    fn site(tokens: TokenStream, items: &[(&str, &str)]) -> (Mono, SiteProgram, CudaModule) {
        let site = compile_for_test(tokens, items).expect("the site compiles");
        let program = site.program.expect("not backend = cpu");
        let module = generate(
            &program,
            &default_instantiation(&site.mono.numeric),
            &CudaOptions::for_site(NAME),
        )
        .expect("CUDA code");
        (site.mono, program, module)
    }

    /// The launching node of each kernel of a module.
    fn nodes(m: &CudaModule) -> Vec<NodeId> {
        m.kernels.iter().map(|k| k.node).collect()
    }

    /// What the hook records of a site (`Err`: its warning), and the host the macro makes of that
    /// record (`OUT_DIR` is `/out`) without generating CUDA code.
    fn hook_and_macro(mono: &Mono, program: &SiteProgram) -> Result<CudaHost, String> {
        let (record, _) = site_modules(mono, program, NAME)?;
        let entry = ManifestSite {
            name: NAME.into(),
            key: 7,
            cuda: Ok(record),
        };
        let before = GENERATED.with(Cell::get);
        let site = host_from_manifest(mono, program, &entry, Path::new("/out"), &rt());
        assert_eq!(
            GENERATED.with(Cell::get),
            before,
            "the macro generates no CUDA"
        );
        match site {
            Some(CudaSite::Kernels(h)) => Ok(h),
            other => panic!("{other:?}"),
        }
    }

    fn host(tokens: TokenStream, items: &[(&str, &str)]) -> Result<CudaHost, String> {
        let (mono, program, _) = site(tokens, items);
        hook_and_macro(&mono, &program)
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
        assert!(site_modules(&mono, &program, NAME).is_ok());
        // Four `par_loop`s, one kernel each, however often host code runs them.
        assert_eq!(module.kernels.len(), 4, "bump is one function");
        let (launches, args) = host_launches(&mono, &program, &nodes(&module)).unwrap();
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
        let (launches, _) = host_launches(&mono, &program, &nodes(&module)).unwrap();
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
        let h = CudaSite::Kernels(h);
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
        let h = CudaSite::Kernels(hook_and_macro(&mono, &program).unwrap());
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
            let h = CudaSite::Kernels(hook_and_macro(&mono, &program).unwrap());
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

    /// A fresh directory for one test's `OUT_DIR`, removed when dropped.
    struct OutDir(std::path::PathBuf);

    impl OutDir {
        fn new(test: &str) -> OutDir {
            let dir = std::env::temp_dir().join(format!(
                "pmexpr-core-cuda-host-{}-{test}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join(CudaManifest::DIR)).unwrap();
            OutDir(dir)
        }

        fn write_manifest(&self, text: &str) {
            std::fs::write(self.0.join(CudaManifest::FILE), text).unwrap();
        }
    }

    impl Drop for OutDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// `accelerate!(tokens)` named `NAME`, with `OUT_DIR` at `out_dir`.
    fn expand(tokens: &TokenStream, out_dir: Option<&Path>) -> String {
        let build = CudaBuild {
            site_name: NAME.into(),
            out_dir: out_dir.map(Path::to_path_buf),
        };
        crate::expand_accelerate(
            tokens.clone(),
            &rt(),
            crate::Context::default(),
            Some(&build),
        )
        .to_string()
    }

    /// The paths the expansion embeds with `include_str!`.
    fn embedded(code: &str) -> Vec<String> {
        code.split("include_str ! (\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
            .collect()
    }

    /// The expansion of a CUDA-class site embeds exactly the files the hook's manifest names —
    /// each module's source, and its PTX where the hook compiled one — and generates no CUDA code
    /// (nor reads the files: they need not exist until rustc includes them).
    #[test]
    fn the_expansion_embeds_the_manifests_files_and_generates_no_cuda() {
        // A float the captured tensors fix: two modules, `f64` and `f32` (the literal count is an
        // `i64`; a captured one would be a number type variable too).
        let tokens = quote!(par_loop(8, |i| tensor_set(
            y,
            [i],
            tensor_get(x, [i]) * 2.0
        )));
        let (mono, program, _) = site(tokens.clone(), &[]);
        let (mut record, modules) = site_modules(&mono, &program, NAME).unwrap();
        assert_eq!(modules.len(), 2);
        record.modules[0].ptx = Some(format!(
            "{}/{}.ptx",
            CudaManifest::DIR,
            modules[0].namespace
        ));
        let out = OutDir::new("embeds");
        out.write_manifest(
            &CudaManifest {
                sites: vec![ManifestSite {
                    name: NAME.into(),
                    key: crate::mangle::site_key(&tokens),
                    cuda: Ok(record.clone()),
                }],
            }
            .to_text(),
        );
        let before = GENERATED.with(Cell::get);
        let code = expand(&tokens, Some(&out.0));
        assert_eq!(
            GENERATED.with(Cell::get),
            before,
            "the macro generated CUDA code"
        );
        let at = |relative: &str| out.0.join(relative).to_str().unwrap().to_owned();
        let m = &record.modules;
        assert_eq!(
            embedded(&code),
            [
                at(&m[0].source),
                at(m[0].ptx.as_ref().unwrap()),
                at(&m[1].source)
            ]
        );
        assert!(code.contains("__pm_accel_cuda"), "{code}");
        assert!(
            !code.contains("__global__"),
            "no CUDA source in the expansion"
        );
        for (files, module) in m.iter().zip(&modules) {
            assert_eq!(files.source, format!("pmexpr/cuda/{}.cu", module.namespace));
            assert!(code.contains(&format!("namespace : \"{}\"", module.namespace)));
        }
    }

    /// A CUDA-class site that the manifest does not record (no hook, a site it did not see, a
    /// stale or broken manifest) runs on the CPU targets and fails at the site under the CUDA
    /// targets, saying why; one the hook found runs on the CPU only has no CUDA arm at all (the
    /// hook warned). Nothing panics.
    #[test]
    fn sites_without_kernels_say_why_under_the_cuda_targets() {
        let tokens = quote!(par_loop(n, |i| tensor_set(t, [i], i)));
        let key = crate::mangle::site_key(&tokens);
        let (mono, program, _) = site(tokens.clone(), &[]);
        let (record, _) = site_modules(&mono, &program, NAME).unwrap();
        let missing = |code: &str, why: &str| {
            assert!(code.contains(":: cuda_missing (& __PM_SITE"), "{code}");
            assert!(code.contains(why), "{why}: {code}");
            assert!(!code.contains("__pm_accel_cuda"), "{code}");
        };
        missing(&expand(&tokens, None), NO_HOOK);
        let out = OutDir::new("missing");
        missing(&expand(&tokens, Some(&out.0)), NO_HOOK);
        let with = |sites: Vec<ManifestSite>| {
            out.write_manifest(&CudaManifest { sites }.to_text());
            expand(&tokens, Some(&out.0))
        };
        let entry = |name: &str, key: u64, cuda: Result<SiteModules, String>| ManifestSite {
            name: name.into(),
            key,
            cuda,
        };
        missing(&with(vec![]), NOT_SEEN);
        missing(
            &with(vec![entry("src/lib.rs:9:9", key, Ok(record.clone()))]),
            NOT_SEEN,
        );
        // A stale entry: another site's tokens at this place.
        missing(
            &with(vec![entry(NAME, key ^ 1, Ok(record.clone()))]),
            NOT_SEEN,
        );
        let mut misfit = record.clone();
        misfit.launches = vec![NodeId(999_999)];
        missing(
            &with(vec![entry(NAME, key, Ok(misfit))]),
            "the build hook's CUDA kernels do not fit this site",
        );
        out.write_manifest("pmexpr-cuda-manifest 1\nsite 1\n");
        missing(
            &expand(&tokens, Some(&out.0)),
            "the build hook's CUDA manifest cannot be read",
        );
        let cpu = with(vec![entry(
            NAME,
            key,
            Err("will run on the CPU targets".into()),
        )]);
        assert!(
            !cpu.contains("cuda_missing") && !cpu.contains("__pm_accel_cuda"),
            "{cpu}"
        );
        let ok = with(vec![entry(NAME, key, Ok(record))]);
        assert!(
            !ok.contains("cuda_missing") && ok.contains("__pm_accel_cuda"),
            "{ok}"
        );
    }

    /// The hook finds each kernel's arguments from its launching node, as the macro will: they
    /// are the values the CUDA generator gave the kernel's parameters, in every module.
    #[test]
    fn kernel_arguments_come_from_the_launching_nodes() {
        let item = "fn bump(t: &Tensor<i64>, c: i64) { par_loop(length(tensor_shape(t)), |i| tensor_set(t, [i], c)) }";
        let (mono, program, _) = site(
            quote!(seq_loop(steps, |k| {
                tensor_gemm(y, x, false, w, true, 1.0, 0.0);
                let s = 2.0 * int2float(k);
                par_loop(n, |i| tensor_set(y, [i, 0], tensor_get(x, [i, 0]) * s));
                bump(u, k)
            })),
            &[("bump", item)],
        );
        let (record, modules) = site_modules(&mono, &program, NAME).unwrap();
        let (_, args) = host_launches(&mono, &program, &record.launches).unwrap();
        assert_eq!(args.iter().map(Vec::len).collect::<Vec<_>>(), [7, 3, 2]);
        for m in &modules {
            assert_eq!(nodes(m), record.launches);
            for (k, a) in m.kernels.iter().zip(&args) {
                let ids = k.params[..k.params.len() - 1].iter().map(|p| p.value.id);
                assert!(ids.eq(a.iter().map(|e| e.id)), "{}", k.name);
            }
        }
    }
}
