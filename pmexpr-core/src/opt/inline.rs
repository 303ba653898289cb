//! Calls of `let`-bound closures inside loop bodies, inlined: `let step = |i| …; par_loop(n, |i|
//! step(i))` (the paper's Listing 1 writes its loop so) becomes a loop whose body is `step`'s,
//! so that what the later passes look for in a loop body — tensor rows by the loop variable
//! ([`super::loops`]), grids — they also find through a helper closure.
//!
//! Semantics are those of the call: the arguments are evaluated first, in order, and bound to
//! the parameters by `let`s (a literal, or a variable of a plain type — a number, a tensor — is
//! substituted instead, so that `step(i)` indexes by the loop variable itself); the body's own
//! binders get new identifiers and its nodes new ids ([`Ids`]), so that two inlined calls are
//! two sets of accesses. Closures whose body runs a keyword or a `tensor_gemm`, or defines
//! functions, are not inlined, and a loop body stops growing at [`BUDGET`] nodes.

use crate::ast::{Expr, ExprKind, IdMap, Ident, Lit, Param, VarId};
use crate::infer::Numeric;
use crate::intrinsics::Intrinsic;
use crate::types::TyVar;

use super::Ids;
use super::is_copy;

/// The largest loop body (in nodes) that still gets calls inlined into it.
pub const BUDGET: usize = 4000;

/// Inlines the calls of `let`-bound closures in the functions of the loops of `e`.
pub fn inline(e: &mut Expr, ids: &mut Ids, numeric: &[(TyVar, Numeric)]) {
    Inliner {
        ids,
        numeric,
        closures: IdMap::default(),
    }
    .walk(e);
}

struct Inliner<'a> {
    ids: &'a mut Ids,
    numeric: &'a [(TyVar, Numeric)],
    /// The closures bound by `let` (identifier → the lambda as written). Identifiers are unique,
    /// so a call of one is always in its scope.
    closures: IdMap<Expr>,
}

impl Inliner<'_> {
    fn walk(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Let { binder, value, .. } => self.remember(binder.ident.id, value),
            ExprKind::Keyword { kw, args } => {
                if let Some(body) = kw.loop_body() {
                    self.inline_calls(&mut args[body.index]);
                }
            }
            _ => {}
        }
        e.children_mut(&mut |c| self.walk(c));
    }

    /// Remembers `value` as the closure bound to `x` (a lambda, or another closure's name).
    fn remember(&mut self, x: VarId, value: &Expr) {
        match &value.kind {
            ExprKind::Lam { body, .. } if !runs_keyword(body) => {
                self.closures.insert(x, value.clone());
            }
            ExprKind::Var { ident, .. } => {
                if let Some(lam) = self.closures.get(&ident.id).cloned() {
                    self.closures.insert(x, lam);
                }
            }
            _ => {}
        }
    }

    /// Inlines the calls in the loop function `f` until there are none, or it has grown past the
    /// budget.
    fn inline_calls(&mut self, f: &mut Expr) {
        if self.closures.is_empty() {
            return;
        }
        while within_budget(f) && self.inline_pass(f) {}
    }

    /// Inlines the calls in `e` (not those in the copies it makes); whether it made any.
    fn inline_pass(&mut self, e: &mut Expr) -> bool {
        let mut changed = false;
        e.children_mut(&mut |c| changed |= self.inline_pass(c));
        let ExprKind::App { func, args } = &e.kind else {
            return changed;
        };
        let ExprKind::Var { ident, .. } = &func.kind else {
            return changed;
        };
        let Some(lam) = self.closures.get(&ident.id) else {
            return changed;
        };
        let ExprKind::Lam { params, body } = &lam.kind else {
            return changed;
        };
        if params.len() != args.len() {
            return changed;
        }
        let (params, mut copy) = (params.clone(), (**body).clone());
        // The body's own binders, renamed; the parameters, substituted or bound afresh.
        let mut rename: IdMap<VarId> = IdMap::default();
        for (id, name) in binders(&copy) {
            rename.insert(id, self.ids.var(&name));
        }
        let mut substitute: IdMap<Expr> = IdMap::default();
        let mut lets = Vec::new();
        for (p, a) in params.iter().zip(args) {
            // A variable of a type that is not plain (a sequence) is bound as the parameter was,
            // by reference, rather than substituted: generated code moves such values into
            // closures.
            let atomic = match a.kind {
                ExprKind::Lit(_) => true,
                ExprKind::Var { .. } => is_copy(&a.ty, self.numeric),
                _ => false,
            };
            if atomic {
                substitute.insert(p.ident.id, a.clone());
            } else {
                let fresh = self.ids.var(&p.ident.name);
                rename.insert(p.ident.id, fresh);
                lets.push((p.clone(), fresh, a.clone()));
            }
        }
        copy.rename(&mut |id| rename.get(&id).copied().unwrap_or(id));
        let mut copy = substituted(copy, &substitute);
        self.ids.renumber(&mut copy);
        let (ty, span) = (e.ty.clone(), e.span);
        for (p, fresh, a) in lets.into_iter().rev() {
            let binder = Param {
                ident: Ident {
                    name: p.ident.name.clone(),
                    id: fresh,
                    span: p.ident.span,
                },
                ann: None,
                ty: p.ty.clone(),
            };
            let mut node = Expr::typed(
                ExprKind::Let {
                    binder,
                    value: Box::new(a),
                    body: Box::new(copy),
                    scheme: Vec::new(),
                },
                span,
                ty.clone(),
            );
            node.id = self.ids.node();
            copy = node;
        }
        *e = copy;
        true
    }
}

/// Whether `e` runs a parallel keyword or a `tensor_gemm`, or defines a recursive function. (In
/// the host code of the CUDA targets a keyword or a product is a launch, which its kernel names by
/// its node: a copy would have another.)
fn runs_keyword(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        found |= matches!(
            x.kind,
            ExprKind::Keyword { .. }
                | ExprKind::Soac(_)
                | ExprKind::RecLet { .. }
                | ExprKind::Intrinsic(Intrinsic::TensorGemm)
        )
    });
    found
}

/// Whether `e` has at most [`BUDGET`] nodes (counting stops there).
fn within_budget(e: &Expr) -> bool {
    fn count(e: &Expr, n: &mut usize) {
        *n += 1;
        if *n <= BUDGET {
            e.children(&mut |c| count(c, n));
        }
    }
    let mut n = 0;
    count(e, &mut n);
    n <= BUDGET
}

/// The identifiers that `e` binds (lambda parameters, `let`s, patterns), with their names.
fn binders(e: &Expr) -> Vec<(VarId, String)> {
    let mut out = Vec::new();
    let mut add = |i: &Ident| out.push((i.id, i.name.clone()));
    e.walk(&mut |x| match &x.kind {
        ExprKind::Lam { params, .. } => params.iter().for_each(|p| add(&p.ident)),
        ExprKind::Let { binder, .. } => add(&binder.ident),
        ExprKind::Match { pat, .. } => pat.binders().into_iter().for_each(&mut add),
        _ => {}
    });
    out
}

/// `e` with each variable in `with` replaced by its expression.
fn substituted(mut e: Expr, with: &IdMap<Expr>) -> Expr {
    if let ExprKind::Var { ident, .. } = &e.kind
        && let Some(x) = with.get(&ident.id)
    {
        return x.clone();
    }
    e.children_mut(&mut |c| {
        let hole = Expr::new(ExprKind::Lit(Lit::Unit), c.span);
        *c = substituted(std::mem::replace(c, hole), with);
    });
    e
}
