//! The optimizer: tree-to-tree passes over the typed monomorphic program, between the paper's
//! passes (which end with `wellformed`) and the Rust generator, as Futhark's compiler has its
//! simplifier and fusion passes. What they decide is data — new nodes in the tree
//! ([`crate::ast::Soac`]) and [`Facts`] keyed by node — which the generator prints; it decides
//! nothing itself.
//!
//! The passes, in the order they run ([`optimize`]):
//!
//! 1. [`inline`]: calls of `let`-bound closures inside loop bodies are inlined;
//! 2. [`rows`]: maps whose function makes a row of a fixed length (built in one buffer), and how
//!    each row is filled;
//! 3. [`fuse`]: producers fused into their consumers ([`crate::ast::Soac`]);
//! 4. [`settle`]: folds whose accumulator settles, which may stop early;
//! 5. [`loops`]: counted loops' facts — the tensor lines a loop's accesses read through
//!    (bounds checks hoisted), plain loops, grids, the reads one check proves in range, and the
//!    reads of `create`s served by slices where they are in range;
//! 6. [`moves`]: the last uses of sequences, which move their value (writes in place).
//!
//! The host code of the CUDA targets gets only the passes that serve it (inlining, fusion,
//! settled folds, moves: [`Optimized::host`]): its `par_loop`s launch kernels made from the unoptimized program, and
//! its tensors may live on the device, so loops keep their bodies and their accesses as written.
//! Every new node and identifier comes from one allocator ([`Ids`]): node ids and binders stay
//! unique after every pass ([`ids::first_duplicate`]), so a fact applies to one node.

pub mod fuse;
pub mod ids;
pub mod inline;
pub mod loops;
pub mod moves;
pub mod rows;
pub mod settle;

use std::collections::{HashMap, HashSet};

use crate::ast::{Expr, NodeId, VarId};
use crate::infer::Numeric;
use crate::mono::Mono;
use crate::types::{TyVar, Type};

pub use self::ids::Ids;
pub use self::loops::{Access, Grid, LoopFacts, SeqRead, Shift, counted_fold};
pub use self::rows::Rows;

/// A site's program, optimized.
#[derive(Debug, Clone)]
pub struct Optimized {
    /// The program as the paper's passes left it (its captured variables and types).
    pub mono: Mono,
    /// The name of every identifier, those the passes made included.
    pub names: Vec<String>,
    /// The expression for the CPU targets, after every pass.
    pub cpu: Program,
    /// The expression for the host code of the CUDA targets, after the passes that serve it
    /// ([`inline`], [`fuse`], [`settle`], [`moves`]): its `par_loop`s launch the kernels generated from the
    /// unoptimized program, and its tensors may live on the device, so loops keep their accesses
    /// as written.
    pub host: Program,
}

/// An optimized expression and what the passes found about it.
#[derive(Debug, Clone)]
pub struct Program {
    /// The expression.
    pub expr: Expr,
    /// What the passes found.
    pub facts: Facts,
}

/// What the optimizer decided about nodes of [`Program::expr`], for the generator.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Maps of rows (the outer `map`'s node), see [`rows`].
    pub rows: HashMap<NodeId, Rows>,
    /// Folds (`foldl`, a fused `foldl`, `seq_loop_acc`) whose accumulator settles: the fold's node
    /// → the test `|acc| …` that tells when it has, see [`settle`].
    pub settled: HashMap<NodeId, Expr>,
    /// Counted loops (`par_loop`, `seq_loop`, `seq_loop_acc`), see [`loops`].
    pub loops: HashMap<NodeId, LoopFacts>,
    /// Element functions of positions (a `create`'s, or a map's over the positions themselves,
    /// [`loops::element_fn`]) → their reads at the position plus a constant or a variable fixed
    /// for the loop ([`loops::position_reads`]): the positions where every one is in range read the sequences
    /// through slices of each chunk, the others (a stencil's ends) run as written.
    pub peeled: HashMap<NodeId, Vec<SeqRead>>,
    /// Uses of locals holding sequences that are their last, where the value moves (so that a
    /// write to it happens in place), see [`moves`].
    pub moves: HashSet<NodeId>,
    /// Sequences a loop makes to replace its state (`cur = create(n, …)`) → the state variable
    /// whose version the loop no longer reads, whose storage they may take, see [`moves`].
    pub spares: HashMap<NodeId, VarId>,
}

/// Runs the optimizer's passes over a site's program.
pub fn optimize(mono: &Mono) -> Optimized {
    let mut ids = Ids::new(mono);
    let cpu = cpu(mono, &mut ids);
    let host = host(mono, &mut ids);
    Optimized {
        mono: mono.clone(),
        names: ids.into_names(),
        cpu,
        host,
    }
}

/// The passes for the CPU targets, in order.
fn cpu(mono: &Mono, ids: &mut Ids) -> Program {
    let mut expr = mono.expr.clone();
    let mut facts = Facts::default();
    inline::inline(&mut expr, ids, &mono.numeric);
    facts.rows = rows::rows(&expr, &mono.numeric);
    fuse::fuse(&mut expr, ids, &facts);
    facts.settled = settle::settled(&expr, ids);
    (facts.loops, facts.peeled) = loops::loops(&expr, &facts.settled, &mono.numeric);
    (facts.moves, facts.spares) = moves::moves(&expr, &mono.numeric);
    Program { expr, facts }
}

/// The passes for the host code of the CUDA targets. Inlining copies no keyword (a closure that
/// runs one is not inlined), so every `par_loop` keeps its node, which its kernel names; it makes
/// a closure whose loop calls another capture what that one uses, which the loop's kernel takes
/// as arguments.
fn host(mono: &Mono, ids: &mut Ids) -> Program {
    let mut expr = mono.expr.clone();
    let mut facts = Facts::default();
    inline::inline(&mut expr, ids, &mono.numeric);
    fuse::fuse(&mut expr, ids, &facts);
    facts.settled = settle::settled(&expr, ids);
    (facts.moves, facts.spares) = moves::moves(&expr, &mono.numeric);
    Program { expr, facts }
}

/// Whether values of the type are plain data (Rust `Copy`) in the code generated for the CPU
/// targets, and so passed by value: numbers, `bool`, tensor views and records of them. A type the
/// captured values fix as any type (`Numeric::Open`) may be a sequence: not plain.
pub fn is_copy(t: &Type, numeric: &[(TyVar, Numeric)]) -> bool {
    match t {
        Type::Var(v) => !numeric.iter().any(|(w, k)| w == v && *k == Numeric::Open),
        Type::Num(_) | Type::Tensor(_) => true,
        Type::Record(fs) => fs.iter().all(|(_, t)| is_copy(t, numeric)),
        Type::Seq(_) | Type::Arrow(..) => false,
    }
}

#[cfg(test)]
mod tests;
