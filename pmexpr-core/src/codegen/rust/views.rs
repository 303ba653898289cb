//! Views: a loop's own sequence held unshared for the whole loop.
//!
//! A loop that carries a sequence and only reads its elements, takes its length and writes its
//! elements in place (`a[i] = v`, `a.swap(i, j)`, `counts[k] += 1`) checks that it holds the
//! sequence alone once, when it starts (`rt::View::of`, which copies a shared one), and then
//! reads and writes a `&mut [T]`: no uniqueness test per write, and no reload of the sequence's
//! pointer after each one (LLVM cannot tell a write of an element from a write of the `Seq`
//! that owns it). This is what Futhark's uniqueness types give statically; here it is found by
//! reading the loop's body: every use of the sequence, and of each version a write in place
//! names (`let b = set(a, i, v)`, `bind.rs`'s `write_in_place`), is one of
//! - the sequence of `get`, `length`, `len` or `is_empty`;
//! - the sequence a chain of `set`s writes in place (its last use, the optimizer's `moves`);
//! - the loop's own argument in the tail calls (left in place, `tail_call`);
//! - a last use in the value the loop ends with (moved out as the loop stops).
//!
//! Any other use (passed to a function or another loop, read by a closure or a keyword, bound
//! to another name) keeps the plain `Seq` and its check per write. A wrong answer here would be a
//! compile error of the generated code (a use of the sequence while its view borrows it), never
//! a wrong result.

use crate::ast::{Expr, ExprKind, FnDef, IdSet, Param, VarId};
use crate::intrinsics::Intrinsic;
use crate::tailrec::TailLoop;
use crate::types::Type;

use super::Gen;

impl Gen<'_> {
    /// The parameters of the loop `f` that its body may use through a view (see the module).
    pub(super) fn viewed(&self, f: &FnDef, l: &TailLoop) -> Vec<VarId> {
        (f.params.iter().enumerate())
            .filter(|(i, p)| {
                l.varying[*i]
                    && matches!(&p.ty, Type::Seq(t) if self.is_copy(t))
                    && !p.ty.has_nested_seq()
                    && Uses {
                        g: self,
                        f: f.ident.id,
                        at: *i,
                        aliases: IdSet::from_iter([p.ident.id]),
                    }
                    .exit(&f.body)
            })
            .map(|(_, p)| p.ident.id)
            .collect()
    }
}

/// The walk over a loop's body that decides whether its parameter number `at` may be viewed.
struct Uses<'g, 'm> {
    g: &'g Gen<'m>,
    /// The loop's function.
    f: VarId,
    at: usize,
    /// The parameter and the versions that writes in place name.
    aliases: IdSet,
}

impl Uses<'_, '_> {
    fn alias(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Var { ident, .. } if self.aliases.contains(&ident.id))
    }

    /// `e` in a position whose value ends the loop (or continues it, for a tail call).
    fn exit(&mut self, e: &Expr) -> bool {
        self.ends(e, true)
    }

    /// Whether every branch of `e` ends with an alias, moved (`loop_exit`: or with a tail call
    /// that hands an alias back, or a value without aliases, as the loop's end may), reading and
    /// writing aliases only as a loop body may.
    fn ends(&mut self, e: &Expr, loop_exit: bool) -> bool {
        let mut e = e;
        loop {
            match &e.kind {
                ExprKind::Var { .. } if self.alias(e) => {
                    return self.g.facts.moves.contains(&e.id);
                }
                ExprKind::App { func, args }
                    if loop_exit
                        && matches!(&func.kind, ExprKind::Var { ident, .. } if ident.id == self.f) =>
                {
                    return args.iter().enumerate().all(|(k, a)| {
                        if k == self.at {
                            self.alias(a)
                        } else {
                            self.inner(a)
                        }
                    });
                }
                ExprKind::Let {
                    binder,
                    value,
                    body,
                    ..
                } => {
                    if !self.binding(binder, value) {
                        return false;
                    }
                    e = body;
                }
                ExprKind::Match {
                    scrutinee,
                    then,
                    otherwise,
                    ..
                } => {
                    if !self.inner(scrutinee) || !self.ends(then, loop_exit) {
                        return false;
                    }
                    e = otherwise;
                }
                ExprKind::RecLet { fns, body, .. } => {
                    if fns.iter().any(|f| self.mentions(&f.body)) {
                        return false;
                    }
                    e = body;
                }
                ExprKind::Record(fs) if loop_exit => {
                    return fs.iter().all(|(_, x)| self.ends(x, true));
                }
                _ => return loop_exit && self.inner(e),
            }
        }
    }

    /// `let binder = value`, the `let`s of a block value first (as `block_chain` prints them):
    /// a chain of `set`s written in place over an alias makes `binder` one.
    fn binding(&mut self, binder: &Param, value: &Expr) -> bool {
        let mut value = value;
        while let ExprKind::Let {
            binder: x,
            value: v,
            body,
            ..
        } = &value.kind
        {
            if !self.one(x, v) {
                return false;
            }
            value = body;
        }
        self.one(binder, value)
    }

    /// `let binder = value` printed as it is (`let_stmt`, the `let`s of its value not floated).
    fn one(&mut self, binder: &Param, value: &Expr) -> bool {
        if binder.ident.name != "_"
            && !value.ty.has_nested_seq()
            && let Some(sets) = self.written(value)
        {
            if sets.iter().all(|[i, v]| self.inner(i) && self.inner(v)) {
                self.aliases.insert(binder.ident.id);
                return true;
            }
            return false;
        }
        if binder.ident.name != "_"
            && !value.ty.has_nested_seq()
            && matches!(value.kind, ExprKind::Match { .. })
            && self.mentions(value)
        {
            // A conditional write: every branch ends with an alias (`bind.rs`,
            // `written_in_branches`).
            if self.ends(value, false) {
                self.aliases.insert(binder.ident.id);
                return true;
            }
            return false;
        }
        self.inner(value)
    }

    /// The indices and values of a chain of `set`s over a last use of an alias, outermost first
    /// (as `bind.rs`'s `written_local` finds them).
    fn written<'e>(&self, e: &'e Expr) -> Option<Vec<[&'e Expr; 2]>> {
        let (base, sets) = super::bind::set_chain(e)?;
        (self.alias(base) && self.g.facts.moves.contains(&base.id)).then_some(sets)
    }

    /// `e` in a position that neither ends nor continues the loop: an alias may only be read
    /// there, as the sequence of `get`, `length`, `len` or `is_empty`.
    fn inner(&mut self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var { .. } => !self.alias(e),
            ExprKind::Lit(_) | ExprKind::Intrinsic(_) | ExprKind::Never(_) => true,
            ExprKind::App { func, args } => {
                let reads = matches!(
                    func.kind,
                    ExprKind::Intrinsic(
                        Intrinsic::Get | Intrinsic::Length | Intrinsic::Len | Intrinsic::Null
                    )
                );
                match args.split_first() {
                    Some((s, rest)) if reads && self.alias(s) => rest.iter().all(|a| self.inner(a)),
                    _ => self.inner(func) && args.iter().all(|a| self.inner(a)),
                }
            }
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                // Inside an operand, a version written in place would be a value of the
                // operand's block: kept out (its alias could outlive the block).
                let before = self.aliases.len();
                let ok = self.binding(binder, value) && self.aliases.len() == before;
                ok && self.inner(body)
            }
            ExprKind::Match {
                scrutinee,
                then,
                otherwise,
                ..
            } => self.inner(scrutinee) && self.inner(then) && self.inner(otherwise),
            ExprKind::Record(fs) => fs.iter().all(|(_, x)| self.inner(x)),
            // A closure, a `fn` item, a keyword, a projection: not through a view.
            _ => !self.mentions(e),
        }
    }

    /// Whether `e` mentions an alias anywhere.
    fn mentions(&self, e: &Expr) -> bool {
        let mut found = false;
        e.walk(&mut |x| found |= self.alias(x));
        found
    }
}
