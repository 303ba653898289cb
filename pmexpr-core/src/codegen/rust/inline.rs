//! Calls of let-bound closures inside loop bodies, inlined: `let step = |i| …; par_loop(n, |i|
//! step(i))` (the paper's Listing 1 writes its loop so) generates the loop as if its body were
//! `step`'s, so that what the later modules see in a loop body — tensor rows by the loop variable
//! (`windows.rs`), grids (`grid.rs`), plain loops — they also see through a helper closure.
//! Semantics are those of the call: the arguments are evaluated first, in order, and bound to
//! the parameters (a literal, or a variable of a `Copy` type — a number, a tensor — is
//! substituted instead, so that `step(i)` indexes by the loop variable itself); the body's own
//! bindings get fresh identifiers and its nodes fresh [`NodeId`]s, so that two inlined calls are
//! two sets of accesses. Closures whose body runs a keyword (which no loop module looks into)
//! are not inlined, and a loop body stops growing at [`BUDGET`] nodes. Because a loop may inline
//! a closure it names, a closure that names another captures what that one uses (`captures`).

use crate::ast::{Expr, ExprKind, IdMap, Ident, NodeId, Param, VarId};

use super::Gen;

/// The largest loop body (in nodes) that still gets calls inlined into it.
const BUDGET: usize = 4000;

impl Gen<'_> {
    /// Remembers `value` as the closure bound to `x` (a lambda, or another closure's name).
    pub(super) fn remember_closure(&mut self, x: VarId, value: &Expr) {
        match &value.kind {
            ExprKind::Lam { body, .. } if !runs_keyword(body) => {
                self.closures.insert(x, (value.clone(), value.free_vars()));
            }
            ExprKind::Var { ident, .. } => {
                if let Some(lam) = self.closures.get(&ident.id).cloned() {
                    self.closures.insert(x, lam);
                }
            }
            _ => {}
        }
    }

    /// The loop function `f` with the calls of remembered closures in its body inlined, or
    /// `None` when it makes none (or is too large already).
    pub(super) fn inline_calls(&mut self, f: &Expr) -> Option<Expr> {
        if self.closures.is_empty() || size(f) > BUDGET {
            return None;
        }
        let mut out = f.clone();
        let mut changed = false;
        while size(&out) <= BUDGET && self.inline_pass(&mut out) {
            changed = true;
        }
        changed.then_some(out)
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
        let Some((lam, _)) = self.closures.get(&ident.id) else {
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
        for id in binders(&copy) {
            let fresh = self.fresh_var();
            rename.insert(id, fresh);
        }
        let mut substitute: IdMap<Expr> = IdMap::default();
        let mut lets = Vec::new();
        for (p, a) in params.iter().zip(args) {
            // A variable of a type that is not `Copy` (a sequence) is bound as the parameter
            // was, by reference, rather than substituted: the generated code moves such values
            // into closures.
            let atomic = match a.kind {
                ExprKind::Lit(_) => true,
                ExprKind::Var { .. } => self.is_copy(&a.ty),
                _ => false,
            };
            if atomic {
                substitute.insert(p.ident.id, a.clone());
            } else {
                let fresh = self.fresh_var();
                rename.insert(p.ident.id, fresh);
                lets.push((p.clone(), fresh, a.clone()));
            }
        }
        copy.rename(&mut |id| rename.get(&id).copied().unwrap_or(id));
        let mut copy = substituted(copy, &substitute);
        self.renumber(&mut copy);
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
            node.id = self.fresh_node();
            copy = node;
        }
        *e = copy;
        true
    }

    /// An identifier no program has: counted down from the top.
    fn fresh_var(&mut self) -> VarId {
        self.inlined += 1;
        VarId(VarId::UNRESOLVED.0 - self.inlined)
    }

    fn fresh_node(&mut self) -> NodeId {
        self.inlined += 1;
        NodeId(NodeId::UNSET.0 - self.inlined)
    }

    fn renumber(&mut self, e: &mut Expr) {
        e.id = self.fresh_node();
        e.children_mut(&mut |c| self.renumber(c));
    }
}

/// Whether `e` runs a parallel keyword or defines a recursive function.
fn runs_keyword(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x.kind, ExprKind::Keyword { .. } | ExprKind::RecLet { .. }));
    found
}

/// The number of nodes of `e`.
fn size(e: &Expr) -> usize {
    let mut n = 0;
    e.walk(&mut |_| n += 1);
    n
}

/// The identifiers that `e` binds (lambda parameters, `let`s, patterns).
fn binders(e: &Expr) -> Vec<VarId> {
    let mut out = Vec::new();
    e.walk(&mut |x| match &x.kind {
        ExprKind::Lam { params, .. } => out.extend(params.iter().map(|p| p.ident.id)),
        ExprKind::Let { binder, .. } => out.push(binder.ident.id),
        ExprKind::Match { pat, .. } => out.extend(pat.binders().iter().map(|i| i.id)),
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
        let hole = Expr::new(ExprKind::Lit(crate::ast::Lit::Unit), c.span);
        *c = substituted(std::mem::replace(c, hole), with);
    });
    e
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::codegen::rust::tests::generated as code;

    #[test]
    fn a_loop_through_a_closure_is_generated_as_its_body() {
        // Listing 1: the rows of `t1` and `t2` by the loop variable, through `axpy`, are windows,
        // and the loop may run plain.
        let c = code(quote!({
            let axpy = |c, i| {
                let x = tensor_get(t1, [i]);
                let y = tensor_get(t2, [i]);
                tensor_set(t1, [i], addi(x, muli(c, y)))
            };
            par_loop(n, |i| axpy(2, i))
        }));
        assert_eq!(c.matches(". window (& [] ,").count(), 2, "{c}");
        assert!(c.contains("Plain :: begin"), "{c}");
        // Two calls are two sets of accesses (a window each), an argument that is not a
        // variable is bound first, and a closure that runs a keyword is called as written.
        let c = code(quote!({
            let at = |t, j| tensor_get(t, [j]);
            let sum = |s| reduce(addi, 0, s);
            par_loop(n, |i| {
                tensor_set(d, [i], at(a, i) + at(b, i) + at(a, i + 1) + sum(s))
            })
        }));
        assert_eq!(c.matches(". window (& [] ,").count(), 3, "{c}");
        assert!(c.contains("sum_"), "{c}");
        // The loop variable passed on is the loop variable: a grid through a closure is a grid.
        let c = code(quote!({
            let cell = |k| {
                let i = k / w;
                let j = k % w;
                tensor_set(d, [i, j], tensor_get(s, [i, j]))
            };
            par_loop(h * w, |k| cell(k))
        }));
        assert!(c.contains("B :: par_rows"), "{c}");
    }
}
