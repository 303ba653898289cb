//! The host side of a module: what its header says of the host code ([`HostPlan`], from the
//! kernel split, [`crate::kernels`]), the device functions the kernels reach, and the kernels
//! themselves.

use std::collections::HashSet;
use std::fmt::Write;

use super::Gen;
use super::abi::{CLayout, Kernel, KernelKind, KernelParam};
use super::code::c_ident;
use super::expr::lambda_of;
use super::{Result, unsupported};
use crate::ast::{Expr, ExprKind, VarId};
use crate::codegen::numbers::Number;
use crate::intrinsics::Intrinsic;
use crate::kernels::{HostNote, Launch, LaunchKind};
use crate::types::Type;

/// What the host must do beyond launching the kernels: nothing here is generated, since host
/// code is sequential Rust.
#[derive(Debug, Clone)]
pub struct HostPlan {
    /// The bindings that run on the host and launch kernels, the accelerated binding first, then
    /// the functions that host code calls (or passes to a sequential loop) which launch kernels,
    /// directly or not. Every other function host code uses is plain sequential code.
    pub functions: Vec<(VarId, String)>,
    /// The host code around launches that is more than a sequence of `let`s: loops, branches
    /// and calls that contain launches.
    pub notes: Vec<HostNote>,
    /// Whether the accelerated binding launches its kernels one after the other, each once, with
    /// only sequential code (no kernels) around them: no notes, no host function but the
    /// accelerated binding. Host code that is not straight-line runs on the CUDA targets too
    /// (see [`crate::kernels`]); this only tells which description fits.
    pub straight_line: bool,
    /// The result type of the accelerated expression (an `i32` or `f32` in it is still its type
    /// variable: PMExpr's types have no 32-bit numbers).
    pub result: Type,
}

/// The lines of the source's header comment that describe the host side.
pub(super) fn host_summary(kernels: &[Kernel], plan: &HostPlan, result: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for k in kernels {
        let params: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
        let what = match k.kind {
            KernelKind::ParLoop => format!(
                "`par_loop` #{} of `{}`, calls `{}` for each index in 0..n",
                k.ordinal, k.binding_name, k.function
            ),
            KernelKind::Gemm => format!(
                "`tensor_gemm` #{} of `{}`, one element of the product per index in 0..n",
                k.ordinal, k.binding_name
            ),
        };
        lines.push(format!("{}({}): {what}", k.name, params.join(", ")));
    }
    if plan.straight_line {
        lines.push(format!(
            "the accelerated expression launches these in order, each once; the rest of it is \
             sequential code (result: {result})"
        ));
    } else {
        let fns: Vec<&str> = plan.functions.iter().map(|(_, n)| n.as_str()).collect();
        lines.push(format!(
            "host functions that launch kernels: {}",
            fns.join(", ")
        ));
        for n in &plan.notes {
            let ks: Vec<String> = n.kernels.iter().map(|k| format!("k{k}")).collect();
            lines.push(format!("{} (launches {})", n.construct, ks.join(", ")));
        }
    }
    lines
}

impl<'a> Gen<'a> {
    // ----- device functions -----

    /// The functions (extracted definitions) whose value refers to a definition.
    pub(super) fn refs(&self, e: &Expr) -> Vec<VarId> {
        crate::kernels::refs(&self.defs, e)
    }

    /// The definitions reachable from `roots` through references, roots included.
    pub(super) fn reachable(&self, roots: &[VarId]) -> HashSet<VarId> {
        let mut seen: HashSet<VarId> = HashSet::new();
        let mut todo: Vec<VarId> = roots.to_vec();
        while let Some(id) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            if let Some(d) = self.defs.get(&id) {
                todo.extend(self.refs(&d.value));
            }
        }
        seen
    }

    // ----- kernels -----

    pub(super) fn kernel(&mut self, name: String, l: &Launch) -> Result<(Kernel, String)> {
        let LaunchKind::ParLoop { callee } = l.kind else {
            return self.gemm_kernel(name, l);
        };
        let ExprKind::Keyword { args, .. } = &l.node.kind else {
            unreachable!("a par_loop node")
        };
        let (n, f) = (&args[0], &args[1]);
        let bound: &[Expr] = match &f.kind {
            ExprKind::App { args, .. } => args,
            _ => &[],
        };
        let def = self.defs[&callee];
        let (params, body) = lambda_of(def);
        if params.len() != bound.len() + 1 {
            return unsupported(
                f.span,
                format!(
                    "`par_loop` needs a function of one index; `{}` takes {} parameters and is given {}",
                    def.ident.name,
                    params.len(),
                    bound.len()
                ),
            );
        }
        let function = c_ident(&def.ident.name, def.ident.id);
        let mut kparams = Vec::new();
        for (p, value) in params.iter().zip(bound) {
            kparams.push(self.kernel_param(c_ident(&p.ident.name, p.ident.id), &p.ty, value)?);
        }
        kparams.push(n_param(n.clone()));
        let index_ty = self.ity(&params[params.len() - 1].ty, f.span)?;
        // The index is of the count's integer type: each thread's `long long` index, below
        // `n`, converts to it exactly.
        let integer = self.num(&index_ty).is_some_and(Number::is_int);
        if !integer || !self.ity(&body.ty, f.span)?.is_unit() {
            return unsupported(
                f.span,
                format!(
                    "`par_loop` needs a function from the index (an integer) to `()`; `{}` is `{}`",
                    def.ident.name, def.value.ty
                ),
            );
        }
        let mut call_args: Vec<&str> = kparams[..kparams.len() - 1]
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        call_args.push("i");
        let body = [
            "    const long long stride = (long long)gridDim.x * blockDim.x;".to_string(),
            "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {"
                .to_string(),
            format!("        {function}({});", call_args.join(", ")),
            "    }".to_string(),
        ];
        let comment = format!(
            "`par_loop` #{} of `{}`: `{}` for every index in 0..n.",
            l.ordinal, self.defs[&l.binding].ident.name, def.ident.name
        );
        Ok(self.assemble_kernel(
            KernelKind::ParLoop,
            name,
            l,
            function,
            kparams,
            &comment,
            &body,
        ))
    }

    /// The kernel of a `tensor_gemm` of host code: its seven arguments, then `n`, handed to the
    /// prelude's `pm_gemm` (the host checks the operands and computes `n` before the launch).
    fn gemm_kernel(&mut self, name: String, l: &Launch) -> Result<(Kernel, String)> {
        let ExprKind::App { args, .. } = &l.node.kind else {
            unreachable!("a tensor_gemm application")
        };
        const NAMES: [&str; 7] = ["c", "a", "ta", "b", "tb", "alpha", "beta"];
        let mut kparams = Vec::new();
        for (pname, value) in NAMES.iter().zip(args) {
            kparams.push(self.kernel_param((*pname).into(), &value.ty, value)?);
        }
        // `n` has no expression of its own: the host computes it from the shapes.
        kparams.push(n_param(l.node.clone()));
        let comment = format!(
            "`tensor_gemm` #{} of `{}`: c := alpha * op(a) * op(b) + beta * c, one element of c per index in 0..n.",
            l.ordinal, self.defs[&l.binding].ident.name
        );
        let body = ["    pm_gemm(c, a, ta, b, tb, alpha, beta, n);".to_string()];
        Ok(self.assemble_kernel(
            KernelKind::Gemm,
            name,
            l,
            "pm_gemm".into(),
            kparams,
            &comment,
            &body,
        ))
    }

    /// A kernel parameter of PMExpr type `ty` computed by the host expression `value`.
    fn kernel_param(&mut self, name: String, ty: &Type, value: &Expr) -> Result<KernelParam> {
        Ok(KernelParam {
            name,
            ty: self.ity(ty, value.span)?,
            c_type: self.c_type(ty, value.span)?,
            layout: self.layout(ty, value.span)?,
            value: value.clone(),
        })
    }

    /// A kernel and its text: the comment, the signature of `params`, the body's lines.
    #[allow(clippy::too_many_arguments)]
    fn assemble_kernel(
        &self,
        kind: KernelKind,
        name: String,
        l: &Launch,
        function: String,
        params: Vec<KernelParam>,
        comment: &str,
        body: &[String],
    ) -> (Kernel, String) {
        let decl: Vec<String> = params
            .iter()
            .map(|p| format!("{} {}", p.c_type, p.name))
            .collect();
        let mut text = String::new();
        let _ = writeln!(text, "// {comment}");
        let _ = writeln!(
            text,
            "extern \"C\" __global__ void {name}({}) {{",
            decl.join(", ")
        );
        for line in body {
            let _ = writeln!(text, "{line}");
        }
        let _ = writeln!(text, "}}");
        let kernel = Kernel {
            kind,
            name,
            binding: l.binding,
            binding_name: self.defs[&l.binding].ident.name.clone(),
            node: l.id(),
            ordinal: l.ordinal,
            span: l.node.span,
            function,
            params,
        };
        (kernel, text)
    }
}

/// The last parameter of every kernel: `n`, computed by the host as `value`.
fn n_param(value: Expr) -> KernelParam {
    KernelParam {
        name: "n".into(),
        ty: Type::INT,
        c_type: "long long".into(),
        layout: CLayout::Number(Number::I64),
        value,
    }
}

pub(super) fn is_tensor_shape(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::App { func, .. }
        if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::TensorShape)))
}
