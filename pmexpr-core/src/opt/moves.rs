//! Last uses: the uses of a sequence-holding local after which nothing reads it, where generated
//! code moves the value instead of sharing it. A sequence is shared by counting (`Seq` clones are
//! O(1)), and a write (`set`, a loop's state replaced by a new version) happens in place exactly
//! when the written sequence has no other holder, so moving the last use of the old version is
//! what makes `a = set(a, i, v)` an O(1) write instead of a copy of `a`. This is the analysis
//! Futhark's in-place updates rest on (a value consumed where it is last used), without its
//! uniqueness types: where an older version is still read later, the count keeps it alive and the
//! write copies once, so no program's meaning depends on this pass, only its cost.
//!
//! A use is a last use when no later step of the same evaluation reads the variable, in the
//! order generated code evaluates (a `let`'s value before its scope, a `match`'s scrutinee before
//! its arms, a record's fields in order, a tail call's arguments before the next iteration, and
//! `set`'s index and value before the sequence it writes). Only uses whose consumer takes an owned
//! value move: the sequence `set` writes, a field of a record or an element of a sequence literal,
//! the result of a `let`, a branch, a function or a closure, and an argument of a tail call that
//! continues a loop. Every other position reads its operands in an order the generator may choose
//! (a keyword, an intrinsic), so no use inside one moves. Closures and `fn` items are called any
//! number of times: the variables they capture are never moved inside them, and stay live for
//! the whole scope of a `let`-bound closure or a recursive group; so do the variables of a value
//! that a `let` or a `match` only borrows (a place: `let b = a;`, `match st { (x, y) => … }`).

use std::collections::{HashMap, HashSet};

use crate::ast::{Expr, ExprKind, IdSet, NodeId, VarId};
use crate::infer::Numeric;
use crate::intrinsics::Intrinsic;
use crate::tailrec::group_loop;
use crate::types::{TyVar, Type};

use super::is_copy;

/// The `Var` nodes of `e` that are last uses of a local holding sequences, in a position whose
/// consumer takes the value: generated code moves the value there. And the spares: each `create`
/// a loop's body makes as an owned value, outside any closure, of the type of a sequence its
/// loop carries (`cur = create(n, |i| … cur …)`), with that state variable. The version of the
/// state a tail call replaces is no longer read; the generator keeps it aside instead of freeing
/// it, and the next such `create` writes into its storage when nothing else holds it, so a loop
/// that replaces its sequence each iteration alternates between two buffers, as hand-written
/// code swaps two.
pub fn moves(e: &Expr, numeric: &[(TyVar, Numeric)]) -> (HashSet<NodeId>, HashMap<NodeId, VarId>) {
    let mut w = Walk {
        numeric,
        moves: HashSet::new(),
        spares: HashMap::new(),
        loops: Vec::new(),
        carried: Vec::new(),
        owning: IdSet::default(),
        frozen: 0,
    };
    let mut live = IdSet::default();
    w.expr(e, &mut live, true);
    (w.moves, w.spares)
}

struct Walk<'a> {
    numeric: &'a [(TyVar, Numeric)],
    moves: HashSet<NodeId>,
    spares: HashMap<NodeId, VarId>,
    /// The sequences the innermost enclosing loop carries (its parameters that vary, of a
    /// sequence type), when the walk is in its body outside any closure.
    carried: Vec<(VarId, Type)>,
    /// The tail-recursive functions whose bodies (loops) enclose the walk: a call of one
    /// continues its loop.
    loops: Vec<VarId>,
    /// The `fn` items in scope that run as loops ([`group_loop`]): their parameters own what
    /// they are passed, so an argument of a call of one is consumed.
    owning: IdSet,
    /// Above zero inside the operands of a node whose generator picks their order: no use
    /// there moves (nested closures start afresh).
    frozen: u32,
}

impl Walk<'_> {
    /// Walks `e` backwards: on entry `live` holds the variables read after `e`, on exit those read
    /// from `e` on. `consumed`: the parent takes `e`'s value as an owned value.
    fn expr(&mut self, e: &Expr, live: &mut IdSet, consumed: bool) {
        match &e.kind {
            ExprKind::Var { ident, .. } => {
                if consumed
                    && self.frozen == 0
                    && !live.contains(&ident.id)
                    && !is_copy(&e.ty, self.numeric)
                {
                    self.moves.insert(e.id);
                }
                live.insert(ident.id);
            }
            ExprKind::Lit(_) | ExprKind::Intrinsic(_) | ExprKind::Never(_) => {}
            ExprKind::Lam { body, .. } => {
                let captured = e.free_vars();
                let mut inner: IdSet = captured.iter().copied().collect();
                let saved = (
                    std::mem::take(&mut self.loops),
                    std::mem::take(&mut self.frozen),
                    std::mem::take(&mut self.carried),
                );
                self.expr(body, &mut inner, true);
                (self.loops, self.frozen, self.carried) = saved;
                live.extend(captured);
            }
            ExprKind::App { func, args } => {
                let continues = matches!(&func.kind, ExprKind::Var { ident, .. }
                    if self.loops.contains(&ident.id));
                // A loop's state is handed over at the call that starts it: its arguments are
                // evaluated in order, as any call's, into parameters that own them.
                let starts = matches!(&func.kind, ExprKind::Var { ident, .. }
                    if self.owning.contains(&ident.id));
                if let (ExprKind::Intrinsic(Intrinsic::Set), [s, i, v]) = (&func.kind, &args[..]) {
                    // Evaluated as the index, the value, then the sequence (see the generator).
                    self.expr(s, live, true);
                    self.expr(v, live, true);
                    self.expr(i, live, false);
                } else if continues || starts {
                    for a in args.iter().rev() {
                        self.expr(a, live, true);
                    }
                } else {
                    self.frozen += 1;
                    for a in args.iter().rev() {
                        self.expr(a, live, false);
                    }
                    self.expr(func, live, false);
                    self.frozen -= 1;
                }
            }
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                let borrowed = self.borrowed(value);
                if borrowed {
                    live.extend(value.free_vars());
                }
                self.expr(body, live, consumed);
                live.remove(&binder.ident.id);
                self.expr(value, live, !borrowed);
            }
            ExprKind::RecLet { fns, body, .. } => {
                let members: IdSet = fns.iter().map(|f| f.ident.id).collect();
                let looped = group_loop(fns);
                if looped.is_some() {
                    self.owning.insert(fns[0].ident.id);
                }
                for f in fns {
                    let lam = Expr::typed(
                        ExprKind::Lam {
                            params: f.params.clone(),
                            body: Box::new(f.body.clone()),
                        },
                        f.span,
                        f.ty.clone(),
                    );
                    let captured = lam.free_vars();
                    live.extend(captured.iter().filter(|v| !members.contains(v)));
                    let mut inner: IdSet = captured.into_iter().collect();
                    let (own, carried) = match &looped {
                        Some(l) => (
                            vec![f.ident.id],
                            (f.params.iter().zip(&l.varying))
                                .filter(|(p, v)| **v && matches!(p.ty, Type::Seq(_)))
                                .map(|(p, _)| (p.ident.id, p.ty.clone()))
                                .collect(),
                        ),
                        None => (Vec::new(), Vec::new()),
                    };
                    let saved = (
                        std::mem::replace(&mut self.loops, own),
                        std::mem::take(&mut self.frozen),
                        std::mem::replace(&mut self.carried, carried),
                    );
                    self.expr(&f.body, &mut inner, true);
                    (self.loops, self.frozen, self.carried) = saved;
                }
                self.expr(body, live, consumed);
                for m in &members {
                    live.remove(m);
                }
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => {
                let borrowed = self.borrowed(scrutinee);
                if borrowed {
                    live.extend(scrutinee.free_vars());
                }
                let mut other = live.clone();
                self.expr(then, live, consumed);
                for b in pat.binders() {
                    live.remove(&b.id);
                }
                self.expr(otherwise, &mut other, consumed);
                live.extend(other);
                self.expr(scrutinee, live, false);
            }
            ExprKind::Record(fs) => {
                for (_, f) in fs.iter().rev() {
                    self.expr(f, live, true);
                }
            }
            ExprKind::Seq(es) => {
                for x in es.iter().rev() {
                    self.expr(x, live, true);
                }
            }
            ExprKind::Soac(soac) if let Some(src) = overwritten(soac, &e.ty) => {
                // The sequence an elementwise map may write over: consumed, the rest frozen.
                let mut parts = Vec::new();
                e.children(&mut |c| parts.push(c));
                for c in parts.into_iter().rev() {
                    if std::ptr::eq(c, src) {
                        self.expr(c, live, true);
                    } else {
                        self.frozen += 1;
                        self.expr(c, live, false);
                        self.frozen -= 1;
                    }
                }
            }
            ExprKind::Proj { .. }
            | ExprKind::Keyword { .. }
            | ExprKind::Soac(_)
            | ExprKind::Imp(_) => {
                if let ExprKind::Soac(s) = &e.kind
                    && consumed
                    && self.frozen == 0
                    && creates(s)
                    && let Some((x, _)) = self.carried.iter().find(|(_, t)| *t == e.ty)
                {
                    self.spares.insert(e.id, *x);
                }
                let mut parts = Vec::new();
                e.children(&mut |c| parts.push(c));
                self.frozen += 1;
                for c in parts.into_iter().rev() {
                    self.expr(c, live, false);
                }
                self.frozen -= 1;
            }
        }
    }

    /// Whether generated code may bind `value` by reference (a place that holds sequences: a
    /// variable, a field of one, an element of one): what is bound to it then borrows the
    /// variables it reads.
    fn borrowed(&self, value: &Expr) -> bool {
        fn place(e: &Expr) -> bool {
            match &e.kind {
                ExprKind::Var { .. } => true,
                ExprKind::Proj { expr, .. } => place(expr),
                ExprKind::App { func, args } => {
                    matches!(
                        func.kind,
                        ExprKind::Intrinsic(Intrinsic::Get | Intrinsic::Head)
                    ) && args.first().is_some_and(place)
                }
                _ => false,
            }
        }
        !is_copy(&value.ty, self.numeric) && place(value)
    }
}

/// Whether `s` makes a sequence of positions, `create(n, g)` and the maps absorbed into it: what
/// may be written into a spare buffer of its length (`moves`' spares).
pub fn creates(s: &crate::ast::Soac) -> bool {
    use crate::ast::{Form, Source, Stage};
    matches!(
        (&s.form, &s.inputs[..]),
        (Form::Map { f: None }, [input])
            if matches!(input.source, Source::Range { .. })
                && input.stages.iter().all(|st| matches!(st, Stage::Map(_)))
    )
}

/// The sequence a fused map (`map(f, x)`, `map2(f, x, y)`, of type `ty`) may write its results
/// over: its first input when that is a variable with no stage in between (a `map` may have maps
/// as stages) whose elements have the result's type, and that none of the map's functions and
/// none of its other inputs read (a function that reads `x` while it is overwritten would see new
/// elements). Whether it does is the generator's and the runtime's: it writes over `x` when this
/// use of it is a last one and nothing else holds its elements.
pub fn overwritten<'a>(s: &'a crate::ast::Soac, ty: &crate::types::Type) -> Option<&'a Expr> {
    use crate::ast::{Form, Source, Stage};
    use crate::types::Type;
    let Type::Seq(out) = ty else {
        return None;
    };
    let (first, rest) = s.inputs.split_first()?;
    match (&s.form, rest.len()) {
        (Form::Map { f: None }, 0)
            if !first.stages.is_empty()
                && first.stages.iter().all(|st| matches!(st, Stage::Map(_))) => {}
        (Form::Map { f: Some(_) }, 1) if first.stages.is_empty() && rest[0].stages.is_empty() => {}
        _ => return None,
    }
    let Source::Seq(src) = &first.source else {
        return None;
    };
    let ExprKind::Var { ident, .. } = &src.kind else {
        return None;
    };
    if src.ty != Type::Seq(out.clone()) {
        return None;
    }
    let mut others = Vec::new();
    s.parts(&mut |c| {
        if !std::ptr::eq(c, src) {
            others.push(c);
        }
    });
    let read = others.iter().any(|c| c.free_vars().contains(&ident.id));
    (!read).then_some(src)
}

/// How each `set` of `e` writes, each map that may write over its sequence and each `create`
/// that may take a loop's spare, for a site's dump: in place when the sequence is a local's last use (or a value nothing else holds), else
/// a copy or a new sequence, and why.
pub fn writes(e: &Expr, facts: &super::Facts, names: &[String]) -> Vec<String> {
    let moves = &facts.moves;
    let mut out = Vec::new();
    e.walk(&mut |x| {
        if let Some(v) = facts.spares.get(&x.id) {
            let name = names.get(v.0 as usize).map_or("?", String::as_str);
            out.push(format!(
                "`create` replacing `{name}`: written into the version of `{name}` the loop \
                 replaced (when nothing else holds it and its length is the same)"
            ));
        }
        if let ExprKind::Soac(s) = &x.kind
            && let Some(src) = overwritten(s, &x.ty)
            && let ExprKind::Var { ident, .. } = &src.kind
        {
            let name = names.get(ident.id.0 as usize).map_or("?", String::as_str);
            out.push(if moves.contains(&src.id) {
                format!(
                    "`map` over `{name}`: written over it (its last use; a new sequence if \
                     something else holds it)"
                )
            } else {
                format!("`map` over `{name}`: a new sequence (`{name}` is read again later)")
            });
        }
        let ExprKind::App { func, args } = &x.kind else {
            return;
        };
        let (ExprKind::Intrinsic(Intrinsic::Set), Some(s)) = (&func.kind, args.first()) else {
            return;
        };
        out.push(match &s.kind {
            ExprKind::Var { ident, .. } => {
                let name = names.get(ident.id.0 as usize).map_or("?", String::as_str);
                if moves.contains(&s.id) {
                    format!("`set` of `{name}`: in place (its last use; copied once if borrowed)")
                } else {
                    format!("`set` of `{name}`: a copy (`{name}` is read again later)")
                }
            }
            _ => "`set` of a value made there: in place when nothing else holds it".to_string(),
        });
    });
    out
}
