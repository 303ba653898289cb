//! The one source of new identities in the optimizer: node ids past the monomorphic program's,
//! and identifiers past its names (each with its name, so generated code stays readable).

use crate::ast::{Expr, ExprKind, IdSet, NodeId, VarId};
use crate::mono::Mono;

/// Hands out [`NodeId`]s and [`VarId`]s that no node or binder of the program has.
#[derive(Debug, Clone)]
pub struct Ids {
    next_node: u32,
    names: Vec<String>,
}

impl Ids {
    /// Ids past those of `mono` (its nodes are `0..mono.nodes`, its identifiers index its names).
    pub fn new(mono: &Mono) -> Self {
        Ids {
            next_node: mono.nodes,
            names: mono.names.clone(),
        }
    }

    /// A node id no node has.
    pub fn node(&mut self) -> NodeId {
        let id = NodeId(self.next_node);
        self.next_node += 1;
        id
    }

    /// An identifier no binder has, called `name` in generated code.
    pub fn var(&mut self, name: &str) -> VarId {
        self.names.push(name.to_string());
        VarId(self.names.len() as u32 - 1)
    }

    /// Gives every node of `e` a new id.
    pub fn renumber(&mut self, e: &mut Expr) {
        e.id = self.node();
        e.children_mut(&mut |c| self.renumber(c));
    }

    /// The name of every identifier, the new ones included.
    pub fn into_names(self) -> Vec<String> {
        self.names
    }

    /// How many node ids exist: every node's id is below this.
    pub fn nodes(&self) -> u32 {
        self.next_node
    }
}

/// The first node id or binder that `exprs` hold twice (or a node without an id), if any: after
/// every optimizer pass there is none, so that facts keyed by node apply to one node, and two
/// copies of a function's body are two sets of binders.
pub fn first_duplicate<'a>(exprs: impl IntoIterator<Item = &'a Expr>) -> Option<String> {
    let mut nodes = std::collections::HashSet::new();
    let mut binders = IdSet::default();
    let mut dup = None;
    for e in exprs {
        e.walk(&mut |x| {
            if dup.is_some() {
                return;
            }
            if x.id == NodeId::UNSET || !nodes.insert(x.id) {
                dup = Some(format!("node {:?}", x.id));
                return;
            }
            let bound: Vec<VarId> = match &x.kind {
                ExprKind::Lam { params, .. } => params.iter().map(|p| p.ident.id).collect(),
                ExprKind::Let { binder, .. } => vec![binder.ident.id],
                ExprKind::RecLet { fns, .. } => fns
                    .iter()
                    .flat_map(|f| {
                        std::iter::once(f.ident.id).chain(f.params.iter().map(|p| p.ident.id))
                    })
                    .collect(),
                ExprKind::Match { pat, .. } => pat.binders().iter().map(|i| i.id).collect(),
                _ => Vec::new(),
            };
            for b in bound {
                if !binders.insert(b) {
                    dup = Some(format!("binder {b:?}"));
                }
            }
        });
    }
    dup
}
