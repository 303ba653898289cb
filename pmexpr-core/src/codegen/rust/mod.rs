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
//!
//! The generator prints the program the optimizer made ([`crate::opt::Optimized`]): it reads the
//! optimizer's decisions (fused compositions in the tree, [`Facts`] beside it) and makes none.
//!
//! # Files
//!
//! - `site`: the expansion of a site ([`generate_site`]): captures, the choice of target, the
//!   result's conversion back to Rust.
//! - `types`: the Rust types of PMExpr types, in generated code and as the user's Rust types.
//! - `expr`: values and arguments of expressions.
//! - `func`: calls, known functions, closures and boxed `Func`s.
//! - `bind`: `let` chains, recursive groups (lifted `fn` items, tail-recursive ones as loops,
//!   which own their state) and `match` patterns; writes in place.
//! - `views`: the sequences a loop reads and writes through a slice, checked unshared once.
//! - `keyword`: the loops and `flatten`, and the adaptor closures passed to the runtime.
//! - `soac`: the consumers of sequences (`map`, `map2`, `reduce`, `foldl`, `hist`), fused or not.
//! - `windows`: loops whose tensor accesses lines serve, and their plain version.
//! - `positions`: `create`s whose reads slices of each chunk serve where they are in range.
//! - `grid`: `par_loop`s over a flat index run as rows.
//! - `rows`: maps of rows, built in one buffer; `peel`: a row fill in three parts.
//! - `intrinsic`: the intrinsics.
//! - `code`: the names used in generated code, literals and pattern tests.
//! - `host`: host code for the CUDA targets: the launches of the site's kernel split
//!   ([`crate::kernels`]), as [`CudaSite`] gives them ([`crate::glue::cuda`] makes it from the
//!   build hook's manifest; [`crate::glue::futhark`] makes [`FutharkHost`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::opt::Facts;

use proc_macro2::TokenStream;

use crate::ast::{Expr, ExprKind, IdMap, NodeId, VarId};
use crate::infer::Numeric;
use crate::intrinsics::Intrinsic;
use crate::types::{TyVar, Type};

mod bind;
mod code;
pub mod derive;
mod expr;
mod func;
mod grid;
mod host;
mod intrinsic;
mod keyword;
mod peel;
mod positions;
mod rows;
mod site;
mod soac;
#[cfg(test)]
mod tests;
mod types;
mod views;
mod windows;

pub use self::code::{user_ident, user_place};
pub use self::site::{error_expansion, generate_site};

/// Where the build hook wrote a site's CUDA modules and Futhark glue, and what the site is called
/// there.
#[derive(Debug, Clone, Default)]
pub struct CudaBuild {
    /// `file:line:column` of the site as the hook names it (modules are named after it).
    pub site_name: String,
    /// `OUT_DIR`, where the hook wrote its CUDA manifest and modules
    /// ([`crate::glue::manifest`]) and the Futhark glue.
    pub out_dir: Option<std::path::PathBuf>,
}

/// What the Rust generator needs for a CUDA-class site.
#[derive(Debug, Clone)]
pub struct CudaHost {
    /// The `par_loop` nodes of the host code that launch, and the kernel each launches.
    pub launches: HashMap<NodeId, usize>,
    /// The host expressions of each kernel's parameters but `n`, in order.
    pub kernel_args: Vec<Vec<Expr>>,
    /// The `SiteKernels` value (an expression of the runtime's type).
    pub kernels: TokenStream,
}

/// How a CUDA-class site reaches its kernels ([`crate::glue::cuda::cuda_site`]).
#[derive(Debug, Clone)]
pub enum CudaSite {
    /// The kernels the build hook generated, and their launches.
    Kernels(CudaHost),
    /// The hook did not generate them (the text says why): the site runs on the CPU targets, and
    /// the `cuda` and `cuda-emulator` targets fail at the site.
    Missing(String),
}

/// How a Futhark-class site reaches its library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FutharkHost {
    /// The glue file (an absolute path) that the hook wrote for the site.
    Glue(String),
    /// The site has no library: it runs on the CPU targets.
    Missing,
}

/// How a variable of the program is held in generated code.
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
    /// A `fn` item of a recursive group, lifted over `extras`. `owns`: it runs as a loop
    /// ([`crate::tailrec::group_loop`]) and takes its parameters by value, so that the state a
    /// caller hands over (its last use, `opt::moves`) is written in place, not copied.
    Item {
        rust: proc_macro2::Ident,
        params: Vec<Type>,
        ret: Type,
        extras: Vec<(VarId, Type)>,
        owns: bool,
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

/// The generator of one site's code: the scope of its variables, what it is printing, and the
/// host code state for the CUDA targets. It decides nothing about optimizations: those are the
/// optimizer's [`Facts`], which it reads.
struct Gen<'m> {
    names: &'m [String],
    rt: TokenStream,
    numeric: Vec<(TyVar, Numeric)>,
    /// What the optimizer found about the program being printed.
    facts: &'m Facts,
    bindings: IdMap<Binding>,
    tmp: u32,
    /// Host code for the CUDA targets: the `par_loop`s that launch kernels.
    cuda: Option<&'m CudaHost>,
    /// What generating host code for the CUDA targets found.
    host: HostState,
    /// While a loop's version with lines is printed: the tensor accesses they serve (index
    /// expression's node → the line that serves it); see `windows.rs`.
    windows: HashMap<NodeId, windows::Served>,
    /// While a plain loop's body is printed: the reads of sequences it makes through a slice of
    /// each chunk (index expression's node → the slice, and the chunk's position variable); see
    /// `windows.rs`.
    slices: HashMap<NodeId, (proc_macro2::Ident, proc_macro2::Ident)>,
    /// While the function of a map of rows is printed (`rows.rs`): its fill's node, and the row
    /// it fills instead of making a sequence.
    filling: Option<(NodeId, proc_macro2::Ident)>,
    /// While the body of a tail-recursive `fn` item that runs as a loop is printed: the
    /// function, and its parameters that the loop reassigns (index, Rust local); see `bind.rs`.
    tail_loop: Option<(VarId, Vec<(usize, proc_macro2::Ident)>)>,
    /// The owned `let mut` sequences of the loops being printed (their parameters' owned state),
    /// and the variables that name one of them after a write in place (`let b = set(a, i, v)`
    /// with `a` not read again prints as a write into `a`, and `b` then names `a`'s local): the
    /// variable → the Rust local. See `bind.rs`.
    in_place: HashMap<VarId, proc_macro2::Ident>,
    /// The spare buffers of the loops being printed (`Facts::spares`): a parameter of the loop
    /// → its Rust local, and the one that keeps the version of it a tail call replaced.
    spares: HashMap<VarId, (proc_macro2::Ident, proc_macro2::Ident)>,
    /// The views of the loops being printed (`views.rs`): a loop's Rust local holding its
    /// sequence → the local of its view.
    views: HashMap<String, proc_macro2::Ident>,
    /// While a conditional write in place is printed (`bind.rs`, `written_in_branches`): the
    /// loop's local that its branches write, whose moves at their ends print as `()`.
    branch_local: Option<proc_macro2::Ident>,
}

impl<'m> Gen<'m> {
    /// A generator over a program whose identifiers are named by `names`, whose numbers the
    /// captured values fix as `numeric`, optimized as `facts` say; `cuda` for the host code of
    /// the CUDA targets.
    fn new(
        names: &'m [String],
        rt: &TokenStream,
        numeric: &[(TyVar, Numeric)],
        facts: &'m Facts,
        cuda: Option<&'m CudaHost>,
    ) -> Self {
        Gen {
            names,
            rt: rt.clone(),
            numeric: numeric.to_vec(),
            facts,
            bindings: IdMap::default(),
            tmp: 0,
            cuda,
            host: HostState::default(),
            windows: HashMap::new(),
            slices: HashMap::new(),
            filling: None,
            tail_loop: None,
            in_place: HashMap::new(),
            spares: HashMap::new(),
            views: HashMap::new(),
            branch_local: None,
        }
    }
}

/// What generating host code for the CUDA targets found so far.
#[derive(Default)]
struct HostState {
    /// The kernels whose launch was generated.
    launched: BTreeSet<usize>,
    /// The Rust names of the closures and `fn` items that launch kernels (the items take the
    /// call as their last parameter).
    launchers: HashSet<String>,
}

/// How a known function is called.
#[derive(Clone)]
enum Callee {
    Closure(proc_macro2::Ident),
    /// A `fn` item, its lifted variables, and whether it owns its parameters (`Binding::Item`).
    Item(proc_macro2::Ident, Vec<(VarId, Type)>, bool),
}

impl Gen<'_> {
    /// Runs `f` with `binds` added to the scope, which is restored afterwards.
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
}

/// Whether the expression denotes a value already held somewhere (so it can be borrowed for as
/// long as that holder lives).
fn is_place(e: &Expr, bindings: &IdMap<Binding>) -> bool {
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
