//! Host analysis: which `par_loop`s of host code become kernels, which host functions launch
//! them, the host code around the launches, and the kernels themselves.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use super::Gen;
use super::abi::{CLayout, Kernel, KernelKind, KernelParam};
use super::code::c_ident;
use super::expr::lambda_of;
use super::{Result, unsupported};
use crate::ast::{Expr, ExprKind, NodeId, VarId};
use crate::codegen::numbers::Number;
use crate::error::SpanRange;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::Def;
use crate::types::Type;

/// Host code that launches kernels in a way other than one after the other.
#[derive(Debug, Clone)]
pub struct HostNote {
    /// The host binding where it is.
    pub binding: VarId,
    /// What it is, in words.
    pub construct: String,
    /// Its tokens.
    pub span: SpanRange,
    /// The kernels launched inside it (indices into [`CudaModule::kernels`](super::CudaModule::kernels)).
    pub kernels: Vec<usize>,
}

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
    /// (see `codegen::rust::cuda_host`); this only tells which description fits.
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

/// A `par_loop` or `tensor_gemm` of host code, before its kernel is generated.
pub(super) struct HostLoop<'a> {
    pub(super) binding: VarId,
    pub(super) ordinal: usize,
    pub(super) node: &'a Expr,
    /// The loop's function; `None` for a product.
    pub(super) callee: Option<VarId>,
}

pub(super) struct HostAnalysis<'a> {
    pub(super) functions: Vec<VarId>,
    pub(super) loops: Vec<HostLoop<'a>>,
    pub(super) notes: Vec<HostNote>,
}

impl<'a> Gen<'a> {
    // ----- host analysis -----

    /// The functions (extracted definitions) whose value refers to a definition.
    pub(super) fn refs(&self, e: &Expr) -> Vec<VarId> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        e.walk(&mut |x| {
            if let ExprKind::Var { ident, .. } = &x.kind
                && self.defs.contains_key(&ident.id)
                && seen.insert(ident.id)
            {
                out.push(ident.id);
            }
        });
        out
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

    /// Finds the host code: the accelerated binding and the functions it calls (or passes to a
    /// sequential loop) that launch kernels; the `par_loop`s in them become kernels.
    pub(super) fn host_analysis(&mut self, accelerated: &'a Def) -> Result<HostAnalysis<'a>> {
        // The definitions that contain a `par_loop`, directly or through what they reference:
        // a worklist over the references reversed (each definition walked once; repeating the
        // walk of every definition until nothing changed cost k² on a chain of k).
        let mut referrers: HashMap<VarId, Vec<VarId>> = HashMap::new();
        for id in &self.order {
            for r in self.refs(&self.defs[id].value) {
                referrers.entry(r).or_default().push(*id);
            }
        }
        let mut todo: Vec<VarId> = self
            .order
            .iter()
            .copied()
            .filter(|id| has_launch(&self.defs[id].value))
            .collect();
        let mut launching: HashSet<VarId> = todo.iter().copied().collect();
        while let Some(id) = todo.pop() {
            for r in referrers.get(&id).into_iter().flatten() {
                if launching.insert(*r) {
                    todo.push(*r);
                }
            }
        }
        let mut functions = vec![accelerated.ident.id];
        let mut listed: HashSet<VarId> = functions.iter().copied().collect();
        let mut loops = Vec::new();
        let mut host_refs: HashMap<VarId, Vec<VarId>> = HashMap::new();
        let mut k = 0;
        while k < functions.len() {
            let id = functions[k];
            k += 1;
            let def: &'a Def = self.defs[&id];
            let mut nodes: Vec<&'a Expr> = Vec::new();
            def.value.walk(&mut |x| {
                if is_launch(x) {
                    nodes.push(x);
                }
            });
            // The function argument of each loop runs on the device; its head is not a host use.
            let mut heads: HashSet<NodeId> = HashSet::new();
            for (ordinal, node) in nodes.iter().enumerate() {
                let ExprKind::Keyword { args, .. } = &node.kind else {
                    // A product: its arguments are host code.
                    loops.push(HostLoop {
                        binding: id,
                        ordinal,
                        node,
                        callee: None,
                    });
                    continue;
                };
                let f = &args[1];
                let head = match &f.kind {
                    ExprKind::App { func, .. } => &**func,
                    _ => f,
                };
                let callee = match &head.kind {
                    ExprKind::Var { ident, .. } if self.defs.contains_key(&ident.id) => ident.id,
                    _ => {
                        return unsupported(
                            f.span,
                            "the function argument of `par_loop` must name a function (or \
                             partially apply one)",
                        );
                    }
                };
                heads.insert(head.id);
                loops.push(HostLoop {
                    binding: id,
                    ordinal,
                    node,
                    callee: Some(callee),
                });
            }
            let mut uses = Vec::new();
            let mut seen = HashSet::new();
            def.value.walk(&mut |x| {
                if let ExprKind::Var { ident, .. } = &x.kind
                    && launching.contains(&ident.id)
                    && ident.id != id
                    && !heads.contains(&x.id)
                    && seen.insert(ident.id)
                {
                    uses.push(ident.id);
                }
            });
            for u in &uses {
                if listed.insert(*u) {
                    functions.push(*u);
                }
            }
            host_refs.insert(id, uses);
        }
        // The kernels each host function launches, through the host functions it uses too.
        let mut launches: HashMap<VarId, BTreeSet<usize>> = HashMap::new();
        for (i, l) in loops.iter().enumerate() {
            launches.entry(l.binding).or_default().insert(i);
        }
        loop {
            let mut changed = false;
            for f in &functions {
                let extra: BTreeSet<usize> = host_refs[f]
                    .iter()
                    .flat_map(|u| launches.get(u).cloned().unwrap_or_default())
                    .collect();
                let entry = launches.entry(*f).or_default();
                let before = entry.len();
                entry.extend(extra);
                changed |= entry.len() != before;
            }
            if !changed {
                break;
            }
        }
        let kernel_of: HashMap<NodeId, usize> = loops
            .iter()
            .enumerate()
            .map(|(i, l)| (l.node.id, i))
            .collect();
        let mut notes = Vec::new();
        for f in &functions {
            let def = self.defs[f];
            let cx = NoteCx {
                binding: *f,
                kernel_of: &kernel_of,
                launches: &launches,
                host_fns: &listed,
                names: &self.defs,
            };
            cx.walk(&def.value, &mut notes);
        }
        Ok(HostAnalysis {
            functions,
            loops,
            notes,
        })
    }

    // ----- kernels -----

    pub(super) fn kernel(&mut self, name: String, l: &HostLoop<'_>) -> Result<(Kernel, String)> {
        let Some(callee) = l.callee else {
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
    fn gemm_kernel(&mut self, name: String, l: &HostLoop<'_>) -> Result<(Kernel, String)> {
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
        l: &HostLoop<'_>,
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
            node: l.node.id,
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

/// Whether `e` is a `par_loop` or a `tensor_gemm` application: what becomes a kernel in host
/// code. (The well-formedness check keeps `tensor_gemm` out of device code.)
pub fn is_launch(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Keyword { kw, .. } => *kw == Keyword::ParLoop,
        ExprKind::App { func, .. } => {
            matches!(func.kind, ExprKind::Intrinsic(Intrinsic::TensorGemm))
        }
        _ => false,
    }
}

pub(super) fn has_launch(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= is_launch(x));
    found
}

/// The walk that finds host code around launches.
pub(super) struct NoteCx<'a, 'b> {
    pub(super) binding: VarId,
    pub(super) kernel_of: &'b HashMap<NodeId, usize>,
    pub(super) launches: &'b HashMap<VarId, BTreeSet<usize>>,
    pub(super) host_fns: &'b HashSet<VarId>,
    pub(super) names: &'b HashMap<VarId, &'a Def>,
}

impl NoteCx<'_, '_> {
    /// The kernels launched while `e` runs; records a note for each construct that launches some
    /// in a way other than once, in order.
    pub(super) fn walk(&self, e: &Expr, notes: &mut Vec<HostNote>) -> BTreeSet<usize> {
        // The children's sets merged smaller into larger: a chain of k `let`s that launch
        // would otherwise copy its sets k times.
        let mut out = BTreeSet::new();
        e.children(&mut |c| {
            let mut s = self.walk(c, notes);
            if s.len() > out.len() {
                std::mem::swap(&mut s, &mut out);
            }
            out.extend(s);
        });
        if let Some(k) = self.kernel_of.get(&e.id) {
            out.insert(*k);
        }
        if let ExprKind::Var { ident, .. } = &e.kind
            && self.host_fns.contains(&ident.id)
            && ident.id != self.binding
            && let Some(ks) = self.launches.get(&ident.id)
        {
            out.extend(ks.iter().copied());
        }
        if out.is_empty() {
            return out;
        }
        let construct = match &e.kind {
            ExprKind::Keyword {
                kw: kw @ (Keyword::SeqLoop | Keyword::SeqLoopAcc),
                ..
            } => Some(format!(
                "`{}` on the host (in `{}`): its function launches kernels in every iteration",
                kw.name(),
                self.name()
            )),
            ExprKind::Keyword {
                kw: Keyword::ParLoop,
                args,
            } if !self.walk_quiet(&args[0]).is_empty() || !self.walk_quiet(&args[1]).is_empty() => {
                Some(format!(
                    "a `par_loop` in `{}` whose arguments launch kernels",
                    self.name()
                ))
            }
            ExprKind::Match { .. } => Some(format!(
                "a `match`/`if` on the host (in `{}`) that launches kernels in a branch",
                self.name()
            )),
            ExprKind::App { func, args } => match &func.kind {
                ExprKind::Intrinsic(Intrinsic::Foldl) => Some(format!(
                    "`foldl` on the host (in `{}`): its function launches kernels for every element",
                    self.name()
                )),
                // A call; a partial application is the function argument of a loop, noted there.
                ExprKind::Var { ident, .. }
                    if self.host_fns.contains(&ident.id)
                        && self
                            .names
                            .get(&ident.id)
                            .is_some_and(|d| lambda_of(d).0.len() == args.len()) =>
                {
                    Some(format!(
                        "a call of `{}` on the host (in `{}`), which launches kernels",
                        ident.name,
                        self.name()
                    ))
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(construct) = construct {
            notes.push(HostNote {
                binding: self.binding,
                construct,
                span: e.span,
                kernels: out.iter().copied().collect(),
            });
        }
        out
    }

    pub(super) fn walk_quiet(&self, e: &Expr) -> BTreeSet<usize> {
        self.walk(e, &mut Vec::new())
    }

    pub(super) fn name(&self) -> &str {
        self.names
            .get(&self.binding)
            .map_or("?", |d| d.ident.name.as_str())
    }
}
