//! The host side of a CUDA-class site: what `accelerate!` embeds so that the runtime can run the
//! site's kernels (the modules of [`super::cuda`] as `static` data), and which `par_loop`s of the
//! accelerated expression become launches in the Rust host code that [`super::rust`] generates.
//!
//! The host code is the accelerated expression itself, compiled to Rust like for the CPU targets,
//! except that each `par_loop` of the expression's own code (not inside a function) launches the
//! kernel generated for it, with the kernel's parameters — the bound arguments of the loop's
//! lifted function, then `n` — marshaled by the runtime. Supported: host code that launches its
//! kernels one after the other, each once ([`HostPlan::straight_line`]); a site whose host code
//! launches kernels inside loops, branches or functions runs on the CPU, and the build hook says
//! so.

use std::collections::HashMap;
use std::path::Path;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::ast::{Expr, ExprKind};
use crate::classify::Backend;
use crate::codegen::cuda::{CudaModule, CudaOptions, HostPlan, generate, instantiations};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::mono::Mono;
use crate::site::SiteProgram;

/// Where the build hook wrote a site's modules, and what the site is called there.
#[derive(Debug, Clone, Default)]
pub struct CudaBuild {
    /// `file:line:column` of the site as the hook names it (modules are named after it).
    pub site_name: String,
    /// `OUT_DIR`, where the hook wrote `pmexpr/cuda/<module>.cu` and `.ptx`.
    pub out_dir: Option<std::path::PathBuf>,
}

/// What the Rust generator needs for a CUDA-class site.
#[derive(Debug, Clone)]
pub struct CudaHost {
    /// The `par_loop` nodes of the host code that launch (by the address of their arguments,
    /// which identifies the node in the monomorphic program), and the kernel each launches.
    pub launches: HashMap<usize, usize>,
    /// The host expressions of each kernel's parameters but `n`, in order.
    pub kernel_args: Vec<Vec<Expr>>,
    /// The `SiteKernels` value (an expression of the runtime's type).
    pub kernels: TokenStream,
}

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
/// device between launches).
fn host_touches_tensors(mono: &Mono) -> bool {
    let mut touches = false;
    walk_host(&mono.expr, &mut |x| {
        touches |= matches!(
            x.kind,
            ExprKind::Intrinsic(
                Intrinsic::TensorGet
                    | Intrinsic::TensorSet
                    | Intrinsic::TensorLinearGet
                    | Intrinsic::TensorLinearSet
            )
        );
    });
    touches
}

/// Why a CUDA-class site's host code is not supported, or `None` when it is.
pub fn unsupported_host(plan: &HostPlan) -> Option<&'static str> {
    (!plan.straight_line).then_some(
        "its host code launches kernels inside loops, branches or functions, which the CUDA target does not run yet",
    )
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
    let first = &modules[0].1;
    if let Some(why) = unsupported_host(&first.host) {
        return Err(why.to_string());
    }
    let mut nodes: Vec<&Expr> = Vec::new();
    walk_host(&mono.expr, &mut |x| {
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
    if nodes.len() != first.kernels.len() {
        return Err(format!(
            "its host code has {} `par_loop`s but {} kernels were generated (a bug in pmexpr: please report it)",
            nodes.len(),
            first.kernels.len()
        ));
    }
    let launches = nodes
        .iter()
        .enumerate()
        .map(|(k, node)| {
            let ExprKind::Keyword { args, .. } = &node.kind else {
                unreachable!("collected as par_loop")
            };
            (args.as_ptr() as usize, k)
        })
        .collect();
    let kernel_args = first
        .kernels
        .iter()
        .map(|k| {
            k.params[..k.params.len() - 1]
                .iter()
                .map(|p| p.value.clone())
                .collect()
        })
        .collect();
    let resident = !host_touches_tensors(mono);
    let datas = modules
        .iter()
        .map(|(tags, m)| module_data(tags, m, build.out_dir.as_deref(), rt));
    let kernels = quote! {
        #rt::SiteKernels { modules: &[#(#datas),*], resident: #resident }
    };
    Ok(CudaHost {
        launches,
        kernel_args,
        kernels,
    })
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
