//! Stage 11, kernels: a CUDA-class site split into host code and the kernels it launches
//! (Futhark's `extractKernels` is the model), or why it cannot run on the GPU, as data.
//!
//! The host code is the accelerated binding and the functions it calls (or passes to a
//! sequential loop) that launch kernels, directly or not ([`Split::functions`]); every
//! `par_loop` in them, and every `tensor_gemm`, is a [`Launch`] of one kernel. The function
//! argument of a `par_loop` is device code: the functions it reaches become `__device__`
//! functions. What the host does around the launches — loops, branches and calls that launch,
//! in words — is [`Split::notes`].
//!
//! The build hook generates each kernel's CUDA code from the split ([`crate::codegen::cuda`]);
//! the macro generates the launches ([`crate::codegen::rust`]). Each computes the split in its
//! own process from the same site, so they agree on the kernels' order by construction; the
//! hook's manifest records each kernel's ABI in that order ([`crate::glue`]), and no node
//! identity crosses from one process to the other.
//!
//! A launch may sit inside `seq_loop`, `seq_loop_acc`, `foldl`, a branch, a closure, a local
//! `fn` (recursion included) or a `#[pmexpr]` function, and runs each time the host code reaches
//! it. Not run on the CUDA targets ([`NoKernels`]): host code that launches inside the function
//! of a parallel keyword (the runtime may run that function on several threads), or that uses a
//! launching function as a value (boxed, it would outlive the call it borrows). The CUDA
//! well-formedness rules reject both in the sites users write; the split says so all the same,
//! since the Rust generator could not print such host code.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

use crate::ast::{Expr, ExprKind, NodeId, VarId};
use crate::classify::Backend;
use crate::error::SpanRange;
use crate::intrinsics::{Intrinsic, Keyword, KeywordClass};
use crate::lift::Def;
use crate::opt::Optimized;
use crate::site::SiteProgram;

/// A CUDA-class site's host code and the kernels it launches.
#[derive(Debug, Clone)]
pub struct Split {
    /// The kernels, in launch-index order: those of the accelerated binding, then those of each
    /// other host function ([`Split::functions`], in order), each binding's in
    /// [`Expr::walk`] order.
    pub launches: Vec<Launch>,
    /// The bindings of the extracted program that run on the host and launch kernels, the
    /// accelerated binding first. Every other function host code uses is plain sequential code.
    pub functions: Vec<VarId>,
    /// The host code around launches that is more than a sequence of `let`s: loops, branches and
    /// calls that contain launches.
    pub notes: Vec<HostNote>,
    /// Whether tensors may stay on the device between launches: host code reads and writes no
    /// tensor element itself.
    pub resident: bool,
}

impl Split {
    /// Whether the accelerated binding launches its kernels one after the other, each once, with
    /// only sequential code around them: no notes, no host function but the accelerated binding.
    pub fn straight_line(&self) -> bool {
        self.notes.is_empty() && self.functions.len() == 1
    }
}

/// One kernel: the node of host code that launches it, and what host code hands it.
#[derive(Debug, Clone)]
pub struct Launch {
    /// What the kernel replaces.
    pub kind: LaunchKind,
    /// The host binding whose value holds the launching node.
    pub binding: VarId,
    /// Which launch of that binding's value it is, counting from 0 in [`Expr::walk`] order.
    pub ordinal: usize,
    /// The launching node (a `par_loop`, or a `tensor_gemm` application) in the extracted
    /// program, where its arguments name the lifted functions' parameters. Lifting and extraction
    /// keep the identities of the nodes they move: the host code the macro prints reaches the
    /// same node ([`Launch::id`]).
    pub node: Expr,
    /// The kernel's arguments before `n` as host code computes them: the bound arguments of the
    /// `par_loop`'s function (none when it is a plain name), or the seven arguments of a
    /// `tensor_gemm`, renamed from the lifted functions' extra parameters back to the variables
    /// they copy ([`crate::lift::Lifted::origins`]).
    pub host_args: Vec<Expr>,
}

impl Launch {
    /// The launching node's identity, in the extracted program and in the host code.
    pub fn id(&self) -> NodeId {
        self.node.id
    }

    /// The kernel's arguments before `n`, as the extracted program writes them.
    pub fn device_args(&self) -> &[Expr] {
        launch_args(&self.node)
    }
}

/// What a kernel replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchKind {
    /// A `par_loop` whose function is the extracted definition `callee` (partially applied to
    /// the launch's arguments).
    ParLoop {
        /// The loop's function.
        callee: VarId,
    },
    /// A `tensor_gemm` of host code.
    Gemm,
}

/// Host code that launches kernels in a way other than one after the other.
#[derive(Debug, Clone)]
pub struct HostNote {
    /// The host binding where it is.
    pub binding: VarId,
    /// What it is, in words.
    pub construct: String,
    /// Its tokens.
    pub span: SpanRange,
    /// The kernels launched inside it (indices into [`Split::launches`]).
    pub kernels: Vec<usize>,
}

/// Why a site has no kernels: it runs on the CPU targets. [`fmt::Display`] words it as the build
/// hook's warning does, after `accelerate! at <site> `.
#[derive(Debug, Clone)]
pub enum NoKernels {
    /// The site is of another backend.
    Backend(Backend),
    /// The function argument of a `par_loop` of host code is not a name, nor a partial
    /// application of one.
    UnnamedFunction {
        /// The function argument's tokens.
        span: SpanRange,
    },
    /// Host code launches kernels inside the function of a parallel keyword (`None`: a fused
    /// consumer of sequences).
    InParallelFunction {
        /// The keyword.
        keyword: Option<Keyword>,
        /// The keyword's tokens.
        span: SpanRange,
    },
    /// Host code uses a function that launches kernels as a value (not called, nor passed to a
    /// sequential loop).
    LauncherAsValue {
        /// The use's tokens.
        span: SpanRange,
    },
    /// A kernel's launching node is not one node of the host code (a bug in pmexpr).
    NotInHostCode {
        /// The kernel.
        kernel: usize,
    },
}

impl fmt::Display for NoKernels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const CPU: &str = "will run on the CPU targets";
        match self {
            NoKernels::Backend(b) => write!(f, "is a {b} site"),
            NoKernels::UnnamedFunction { .. } => write!(
                f,
                "cannot run on the CUDA backend and {CPU}: the function argument of `par_loop` \
                 must name a function (or partially apply one)"
            ),
            NoKernels::InParallelFunction { keyword, .. } => {
                let what = keyword.map_or("a parallel keyword".to_string(), |k| {
                    format!("a `{}`", k.name())
                });
                write!(
                    f,
                    "{CPU}: its host code launches kernels inside the function of {what}, which \
                     the CUDA target does not run"
                )
            }
            NoKernels::LauncherAsValue { .. } => write!(
                f,
                "{CPU}: its host code uses a function that launches kernels as a value (not \
                 called, nor passed to a sequential loop), which the CUDA target does not run"
            ),
            NoKernels::NotInHostCode { kernel } => write!(
                f,
                "{CPU}: the `par_loop` of kernel {kernel} is not one node of its host code (a bug \
                 in pmexpr: please report it)"
            ),
        }
    }
}

/// Stage 11 over a checked site's program and its optimized host code ([`Optimized::host`],
/// what the macro prints).
pub fn split(program: &SiteProgram, optimized: &Optimized) -> Result<Split, NoKernels> {
    if program.backend != Backend::Cuda {
        return Err(NoKernels::Backend(program.backend));
    }
    let defs = program.lifted.defs();
    let order: Vec<VarId> = (program.extracted.iter())
        .flat_map(|b| b.defs())
        .map(|d| d.ident.id)
        .collect();
    let extracted: HashMap<VarId, &Def> = (program.extracted.iter())
        .flat_map(|b| b.defs())
        .map(|d| (d.ident.id, d))
        .collect();
    let host = Host {
        defs: &extracted,
        order: &order,
    };
    let Some(accelerated) = extracted.get(&program.lifted.accelerated) else {
        // Extraction keeps the accelerated binding; a site without it has nothing to launch.
        return Err(NoKernels::NotInHostCode { kernel: 0 });
    };
    let (functions, loops, notes) = host.analysis(accelerated)?;
    let launches: Vec<Launch> = loops
        .into_iter()
        .map(|l| {
            let host_args = launch_args(l.node)
                .iter()
                .map(|a| {
                    let mut v = a.clone();
                    v.rename(&mut |id| program.lifted.origins.get(&id).copied().unwrap_or(id));
                    v
                })
                .collect();
            Launch {
                kind: l.kind,
                binding: l.binding,
                ordinal: l.ordinal,
                node: l.node.clone(),
                host_args,
            }
        })
        .collect();
    // Each launch must be one node of the host code the macro prints.
    let mut in_host: HashMap<NodeId, usize> = HashMap::new();
    optimized.host.expr.walk(&mut |x| {
        if is_launch(x) {
            *in_host.entry(x.id).or_default() += 1;
        }
    });
    let mut seen = HashSet::new();
    for (k, l) in launches.iter().enumerate() {
        if in_host.get(&l.id()) != Some(&1) || !seen.insert(l.id()) {
            return Err(NoKernels::NotInHostCode { kernel: k });
        }
    }
    let mut uses = HostUses {
        launches: launches.iter().map(Launch::id).collect(),
        launchers: HashMap::new(),
        problem: None,
    };
    uses.visit(&optimized.host.expr, Position::Value);
    if let Some(p) = uses.problem {
        return Err(p);
    }
    Ok(Split {
        launches,
        functions,
        notes,
        resident: !host_touches_tensors(program, &defs),
    })
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

/// The arguments a launching node hands its kernel, before `n`: the bound arguments of a
/// `par_loop`'s lifted function (none when the function is a plain name), or the seven arguments
/// of a `tensor_gemm`.
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

fn has_launch(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= is_launch(x));
    found
}

/// The definitions of `defs` that `e` refers to, each once, in walk order.
pub(crate) fn refs(defs: &HashMap<VarId, &Def>, e: &Expr) -> Vec<VarId> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    e.walk(&mut |x| {
        if let ExprKind::Var { ident, .. } = &x.kind
            && defs.contains_key(&ident.id)
            && seen.insert(ident.id)
        {
            out.push(ident.id);
        }
    });
    out
}

/// A launching node of host code, found by [`Host::analysis`].
struct HostLoop<'a> {
    kind: LaunchKind,
    binding: VarId,
    ordinal: usize,
    node: &'a Expr,
}

/// The extracted program, as the host analysis reads it.
struct Host<'a> {
    defs: &'a HashMap<VarId, &'a Def>,
    /// The extracted definitions, in dependency order.
    order: &'a [VarId],
}

type Analysis<'a> = (Vec<VarId>, Vec<HostLoop<'a>>, Vec<HostNote>);

impl<'a> Host<'a> {
    fn refs(&self, e: &Expr) -> Vec<VarId> {
        refs(self.defs, e)
    }

    /// The host functions (the accelerated binding and the functions it calls, or passes to a
    /// sequential loop, that launch kernels), their launching nodes, and the notes.
    fn analysis(&self, accelerated: &'a Def) -> Result<Analysis<'a>, NoKernels> {
        // The definitions that contain a launch, directly or through what they reference: a
        // worklist over the references reversed (each definition walked once; repeating the walk
        // of every definition until nothing changed cost k² on a chain of k).
        let mut referrers: HashMap<VarId, Vec<VarId>> = HashMap::new();
        for id in self.order {
            for r in self.refs(&self.defs[id].value) {
                referrers.entry(r).or_default().push(*id);
            }
        }
        let mut todo: Vec<VarId> = (self.order.iter().copied())
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
                        kind: LaunchKind::Gemm,
                        binding: id,
                        ordinal,
                        node,
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
                    _ => return Err(NoKernels::UnnamedFunction { span: f.span }),
                };
                heads.insert(head.id);
                loops.push(HostLoop {
                    kind: LaunchKind::ParLoop { callee },
                    binding: id,
                    ordinal,
                    node,
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
        let kernel_of: HashMap<NodeId, usize> = (loops.iter().enumerate())
            .map(|(i, l)| (l.node.id, i))
            .collect();
        let mut notes = Vec::new();
        for f in &functions {
            let cx = NoteCx {
                binding: *f,
                kernel_of: &kernel_of,
                launches: &launches,
                host_fns: &listed,
                names: self.defs,
            };
            cx.walk(&self.defs[f].value, &mut notes);
        }
        Ok((functions, loops, notes))
    }
}

/// The parameters of a definition's lambda (none when its value is not one).
fn arity(d: &Def) -> usize {
    match &d.value.kind {
        ExprKind::Lam { params, .. } => params.len(),
        _ => 0,
    }
}

/// The walk that finds host code around launches.
struct NoteCx<'a, 'b> {
    binding: VarId,
    kernel_of: &'b HashMap<NodeId, usize>,
    launches: &'b HashMap<VarId, BTreeSet<usize>>,
    host_fns: &'b HashSet<VarId>,
    names: &'b HashMap<VarId, &'a Def>,
}

impl NoteCx<'_, '_> {
    /// The kernels launched while `e` runs; records a note for each construct that launches some
    /// in a way other than once, in order.
    fn walk(&self, e: &Expr, notes: &mut Vec<HostNote>) -> BTreeSet<usize> {
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
                            .is_some_and(|d| arity(d) == args.len()) =>
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

    fn walk_quiet(&self, e: &Expr) -> BTreeSet<usize> {
        self.walk(e, &mut Vec::new())
    }

    fn name(&self) -> &str {
        self.names
            .get(&self.binding)
            .map_or("?", |d| d.ident.name.as_str())
    }
}

/// Whether the host code reads or writes tensor elements itself (then tensors cannot stay on the
/// device between launches). Host code is the accelerated binding and every function it reaches
/// other than through the function argument of a `par_loop` (device code): a function that host
/// code only calls may read a tensor that a kernel wrote.
fn host_touches_tensors(program: &SiteProgram, defs: &HashMap<VarId, &Def>) -> bool {
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
    let mut seen: HashSet<VarId> = HashSet::new();
    let mut todo = vec![program.lifted.accelerated];
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Some(d) = defs.get(&id)
            && visit(&d.value, defs, &mut todo)
        {
            return true;
        }
    }
    false
}

/// Where a function is used in host code, as the Rust generator prints it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Position {
    /// A value: a function here is boxed.
    Value,
    /// The function argument of a loop or fold (`par_loop`, `seq_loop`, `seq_loop_acc`,
    /// `foldl`): a name or a partial application becomes a closure that calls it.
    LoopFunction,
    /// The function of an application to `args` arguments (in a loop's function position when
    /// `in_loop`).
    Callee { args: usize, in_loop: bool },
}

/// Which functions of the host code launch kernels, and whether host code uses one in a way the
/// Rust generator cannot print: the first problem found.
struct HostUses {
    /// The launching nodes.
    launches: HashSet<NodeId>,
    /// The functions whose bodies launch, with their number of parameters.
    launchers: HashMap<VarId, usize>,
    problem: Option<NoKernels>,
}

impl HostUses {
    fn problem(&mut self, p: NoKernels) {
        self.problem.get_or_insert(p);
    }

    /// Whether `e` holds a launch or uses a function that launches; records problems.
    fn visit(&mut self, e: &Expr, pos: Position) -> bool {
        let mut found = false;
        match &e.kind {
            ExprKind::Var { ident, .. } => {
                if let Some(&arity) = self.launchers.get(&ident.id) {
                    found = true;
                    let boxed = match pos {
                        Position::Value => true,
                        Position::LoopFunction => false,
                        Position::Callee { args, in_loop } => args < arity && !in_loop,
                    };
                    if boxed {
                        self.problem(NoKernels::LauncherAsValue { span: e.span });
                    }
                }
            }
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                // A lambda bound by `let` is a closure the generator calls directly; an alias of
                // a launching function launches too.
                let value_pos = match &value.kind {
                    ExprKind::Lam { .. } | ExprKind::Var { .. } => Position::LoopFunction,
                    _ => Position::Value,
                };
                let launches = self.visit(value, value_pos);
                match &value.kind {
                    ExprKind::Lam { params, .. } if launches => {
                        self.launchers.insert(binder.ident.id, params.len());
                    }
                    ExprKind::Var { ident, .. } => {
                        if let Some(&a) = self.launchers.get(&ident.id) {
                            self.launchers.insert(binder.ident.id, a);
                        }
                    }
                    _ => {}
                }
                found = launches | self.visit(body, Position::Value);
            }
            ExprKind::RecLet { fns, body, .. } => {
                // Every member launches when one does (they may call each other).
                let mut any = false;
                for f in fns {
                    any |= self.visit(&f.body, Position::Value);
                }
                if any {
                    for f in fns {
                        self.launchers.insert(f.ident.id, f.params.len());
                    }
                }
                found = any | self.visit(body, Position::Value);
            }
            ExprKind::Lam { body, .. } => {
                found = self.visit(body, Position::Value);
                if found && pos == Position::Value {
                    self.problem(NoKernels::LauncherAsValue { span: e.span });
                }
            }
            ExprKind::App { func, args } => {
                let in_loop = pos == Position::LoopFunction;
                found = self.visit(
                    func,
                    Position::Callee {
                        args: args.len(),
                        in_loop,
                    },
                );
                let fold = matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Foldl));
                for (i, a) in args.iter().enumerate() {
                    let p = if fold && i == 0 {
                        Position::LoopFunction
                    } else {
                        Position::Value
                    };
                    found |= self.visit(a, p);
                }
            }
            ExprKind::Keyword { kw, args } => {
                let function = kw_function(*kw);
                let launch = *kw == Keyword::ParLoop && self.launches.contains(&e.id);
                for (i, a) in args.iter().enumerate() {
                    let is_fn = function == Some(i);
                    let p = if is_fn && !parallel(*kw) {
                        Position::LoopFunction
                    } else if is_fn && *kw == Keyword::ParLoop {
                        // A launch's function is device code; another `par_loop`'s runs on the
                        // CPU threads.
                        Position::LoopFunction
                    } else {
                        Position::Value
                    };
                    let launches = self.visit(a, p);
                    if is_fn && parallel(*kw) && launches && !launch {
                        self.problem(NoKernels::InParallelFunction {
                            keyword: Some(*kw),
                            span: e.span,
                        });
                    }
                    found |= launches;
                }
            }
            ExprKind::Soac(s) => {
                let parallel: HashSet<NodeId> = s.parallel_functions().map(|f| f.id).collect();
                e.children(&mut |c| {
                    let launches = self.visit(c, Position::LoopFunction);
                    if launches && parallel.contains(&c.id) {
                        self.problem(NoKernels::InParallelFunction {
                            keyword: None,
                            span: e.span,
                        });
                    }
                    found |= launches;
                });
            }
            _ => e.children(&mut |c| found |= self.visit(c, Position::Value)),
        }
        found || self.launches.contains(&e.id)
    }
}

/// The argument of a keyword that is its function, if one is ([`Keyword::function`]).
fn kw_function(kw: Keyword) -> Option<usize> {
    kw.function().map(|f| f.index)
}

/// Whether the runtime may run the keyword's function on several threads.
fn parallel(kw: Keyword) -> bool {
    kw.row().class != KeywordClass::Sequential
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::compile_for_test;
    use proc_macro2::TokenStream;
    use quote::quote;

    /// What the host-code check finds in `tokens` (no well-formedness check: stages 1–5, then
    /// the optimizer), every `par_loop` taken for a launch.
    fn host_problem(tokens: TokenStream) -> Option<NoKernels> {
        let mono = crate::pipeline::mono(tokens).unwrap_or_else(|(e, _)| panic!("{:?}", e[0]));
        let host = crate::opt::optimize(&mono).host.expr;
        let mut launches = HashSet::new();
        host.walk(&mut |x| {
            if is_launch(x) {
                launches.insert(x.id);
            }
        });
        let mut uses = HostUses {
            launches,
            launchers: HashMap::new(),
            problem: None,
        };
        uses.visit(&host, Position::Value);
        uses.problem
    }

    #[test]
    fn launches_in_loops_calls_and_partial_applications_are_host_code() {
        for tokens in [
            quote!(seq_loop(3, |k| par_loop(n, |i| tensor_set(t, [i], k)))),
            quote!({
                let f = |k| par_loop(n, |i| tensor_set(t, [i], k));
                seq_loop(3, f);
                let g = f;
                g(2)
            }),
            quote!({
                let f = |a, k| par_loop(n, |i| tensor_set(t, [i], a + k));
                seq_loop(3, f(1));
                seq_loop_acc(0, 3, |acc, k| {
                    f(acc, k);
                    acc + 1
                })
            }),
            quote!({
                fn go(k: i64) {
                    if k > 0 {
                        par_loop(n, |i| tensor_set(t, [i], k));
                        go(k - 1)
                    } else {
                        ()
                    }
                }
                go(3)
            }),
        ] {
            assert!(host_problem(tokens.clone()).is_none(), "{tokens}");
        }
    }

    #[test]
    fn launches_inside_parallel_functions_are_refused() {
        let p = host_problem(quote!(map(
            |x| {
                par_loop(n, |i| tensor_set(t, [i], x));
                x
            },
            s
        )));
        assert!(
            matches!(p, Some(NoKernels::InParallelFunction { .. })),
            "{p:?}"
        );
        let p = host_problem(quote!({
            let f = |k| par_loop(n, |i| tensor_set(t, [i], k));
            reduce(
                |a, b| {
                    f(a);
                    a + b
                },
                0,
                s,
            )
        }));
        let text = p.expect("refused").to_string();
        assert!(
            text.contains("launches kernels inside the function of"),
            "{text}"
        );
    }

    #[test]
    fn launching_functions_used_as_values_are_refused() {
        for tokens in [
            quote!({
                let f = |k| par_loop(n, |i| tensor_set(t, [i], k));
                let g = if c { f } else { f };
                g(1)
            }),
            quote!({
                let f = |a, k| par_loop(n, |i| tensor_set(t, [i], a + k));
                let h = f(1);
                h(2)
            }),
        ] {
            let p = host_problem(tokens.clone());
            assert!(
                matches!(p, Some(NoKernels::LauncherAsValue { .. })),
                "{tokens}: {p:?}"
            );
        }
    }

    #[test]
    fn the_split_lists_launches_in_host_function_order() {
        let bump = "fn bump(t: &Tensor<i64>, c: i64) { par_loop(length(tensor_shape(t)), |i| tensor_set(t, [i], c)) }";
        let site = compile_for_test(
            quote!(seq_loop(steps, |k| {
                tensor_gemm(y, x, false, w, true, 1.0, 0.0);
                par_loop(n, |i| tensor_set(y, [i, 0], tensor_get(x, [i, 0]) * 2.0));
                bump(u, k)
            })),
            &[("bump", bump)],
        )
        .expect("the site compiles");
        let program = site.program.as_ref().unwrap();
        let split = split(program, &crate::opt::optimize(&site.mono)).expect("kernels");
        let kinds: Vec<bool> = (split.launches.iter())
            .map(|l| l.kind == LaunchKind::Gemm)
            .collect();
        assert_eq!(kinds, [true, false, false]);
        assert_eq!(
            split.functions.len(),
            3,
            "the site, its loop's function, bump"
        );
        assert!(!split.straight_line());
        assert!(split.resident);
        let names: Vec<&str> = (split.functions.iter())
            .map(|id| program.lifted.names[id.0 as usize].as_str())
            .collect();
        assert_eq!(names.last(), Some(&"bump"), "{names:?}");
        // A Futhark-class site has no kernels, and says so.
        let site = compile_for_test(quote!(map(|x| x + 1, s)), &[]).unwrap();
        let e = super::split(
            site.program.as_ref().unwrap(),
            &crate::opt::optimize(&site.mono),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "is a Futhark site");
    }
}
