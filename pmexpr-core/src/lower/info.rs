//! What the lowering needs to know of a subexpression before lowering it: whether it holds
//! imperative syntax at all, which variables declared outside it it assigns, and which jumps
//! (`break`, `continue`, `return`) leave it. Computed once, bottom-up, for the nodes that hold
//! imperative syntax (the others hold none of the three).

use std::collections::HashMap;

use crate::ast::{Expr, ExprKind, Imp, Iter, Pat, Step};

/// A jump out of a subexpression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Jump {
    /// `break` (with a value or not) to the loop of this label, the innermost when `None`.
    Break(Option<String>),
    /// `continue` to the loop of this label, the innermost when `None`.
    Continue(Option<String>),
    /// `return` from the enclosing `fn` or closure.
    Return,
}

/// What a subexpression holds.
#[derive(Debug, Clone, Default)]
pub(super) struct Info {
    /// Some imperative syntax, at any depth (closures and `fn` items included).
    pub imp: bool,
    /// The names it assigns that it does not declare, in order of first assignment (not counting
    /// closures and `fn` items, where such an assignment is an error).
    pub assigned: Vec<String>,
    /// The jumps that leave it (not counting closures and `fn` items, which they cannot leave).
    pub jumps: Vec<Jump>,
    /// For a loop: whether a `break` to it carries a value.
    pub break_value: bool,
}

impl Info {
    fn add(&mut self, other: &Info) {
        self.imp |= other.imp;
        for a in &other.assigned {
            if !self.assigned.contains(a) {
                self.assigned.push(a.clone());
            }
        }
        for j in &other.jumps {
            if !self.jumps.contains(j) {
                self.jumps.push(j.clone());
            }
        }
    }

    fn unbind(&mut self, names: &[String]) {
        self.assigned.retain(|a| !names.contains(a));
    }
}

/// The facts of every node holding imperative syntax, by address.
#[derive(Default)]
pub(super) struct Facts {
    map: HashMap<*const Expr, Info>,
    none: Info,
}

impl Facts {
    /// The facts of the tree `e`, which must not move while they are used.
    pub(super) fn of(e: &Expr) -> Facts {
        let mut f = Facts::default();
        f.expr(e);
        f
    }

    /// What `e` holds (nothing when it holds no imperative syntax).
    pub(super) fn get(&self, e: &Expr) -> &Info {
        self.map.get(&(e as *const Expr)).unwrap_or(&self.none)
    }

    fn expr(&mut self, e: &Expr) -> Info {
        let info = self.here(e);
        if info.imp {
            self.map.insert(e as *const Expr, info.clone());
        }
        info
    }

    fn here(&mut self, e: &Expr) -> Info {
        let mut out = Info::default();
        match &e.kind {
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                out.add(&self.expr(value));
                let mut b = self.expr(body);
                b.unbind(std::slice::from_ref(&binder.ident.name));
                out.add(&b);
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => {
                out.add(&self.expr(scrutinee));
                let mut t = self.expr(then);
                t.unbind(&names(pat));
                out.add(&t);
                out.add(&self.expr(otherwise));
            }
            ExprKind::Lam { body, .. } => {
                out.imp = self.expr(body).imp;
            }
            ExprKind::RecLet { fns, body, .. } => {
                for f in fns {
                    out.imp |= self.expr(&f.body).imp;
                }
                let mut b = self.expr(body);
                let fs: Vec<String> = fns.iter().map(|f| f.ident.name.clone()).collect();
                b.unbind(&fs);
                out.add(&b);
            }
            ExprKind::Imp(i) => {
                out.imp = true;
                self.imp(i, &mut out);
            }
            _ => e.children(&mut |c| {
                let i = self.expr(c);
                out.add(&i);
            }),
        }
        out
    }

    fn imp(&mut self, i: &Imp, out: &mut Info) {
        match i {
            Imp::LetMut {
                pat, value, body, ..
            } => {
                out.add(&self.expr(value));
                let mut b = self.expr(body);
                b.unbind(&names(pat));
                out.add(&b);
            }
            Imp::Assign { place, value, .. } => {
                out.add(&self.expr(value));
                for st in &place.path {
                    if let Step::Index(i) = st {
                        out.add(&self.expr(i));
                    }
                }
                if !out.assigned.contains(&place.root.name) {
                    out.assigned.push(place.root.name.clone());
                }
            }
            Imp::For {
                label,
                pat,
                iter,
                body,
            } => {
                match iter {
                    Iter::Range {
                        start, end, step, ..
                    } => {
                        out.add(&self.expr(start));
                        out.add(&self.expr(end));
                        if let Some(s) = step {
                            out.add(&self.expr(s));
                        }
                    }
                    Iter::Seq { seq, .. } => out.add(&self.expr(seq)),
                }
                let mut b = self.expr(body);
                b.unbind(&names(pat));
                self.leave_loop(label.as_ref().map(|l| l.name.as_str()), b, out, body);
            }
            Imp::While { label, cond, body } => {
                let mut b = self.expr(cond);
                b.add(&self.expr(body));
                self.leave_loop(label.as_ref().map(|l| l.name.as_str()), b, out, body);
            }
            Imp::Loop { label, body } => {
                let b = self.expr(body);
                self.leave_loop(label.as_ref().map(|l| l.name.as_str()), b, out, body);
            }
            Imp::Break { label, value } => {
                if let Some(v) = value {
                    out.add(&self.expr(v));
                }
                out.jumps
                    .push(Jump::Break(label.as_ref().map(|l| l.name.clone())));
            }
            Imp::Continue { label } => {
                out.jumps
                    .push(Jump::Continue(label.as_ref().map(|l| l.name.clone())));
            }
            Imp::Return { value } => {
                if let Some(v) = value {
                    out.add(&self.expr(v));
                }
                out.jumps.push(Jump::Return);
            }
        }
    }

    /// A loop's facts from its body's: the jumps to the loop itself stay inside.
    fn leave_loop(&self, label: Option<&str>, mut body: Info, out: &mut Info, b: &Expr) {
        let mine = |l: &Option<String>| l.is_none() || l.as_deref() == label;
        body.jumps.retain(|j| match j {
            Jump::Break(l) | Jump::Continue(l) => !mine(l),
            Jump::Return => true,
        });
        out.break_value = breaks_with_value(b, label, true);
        out.add(&body);
    }
}

/// Whether a `break` to the loop whose body is `e` (labelled `label`) carries a value; `inner`
/// while no loop in between has been entered.
fn breaks_with_value(e: &Expr, label: Option<&str>, inner: bool) -> bool {
    let mut found = false;
    match &e.kind {
        ExprKind::Lam { .. } => {}
        ExprKind::RecLet { body, .. } => found = breaks_with_value(body, label, inner),
        ExprKind::Imp(i) => match &**i {
            Imp::Break { label: l, value } => {
                let mine = match l {
                    None => inner,
                    Some(l) => Some(l.name.as_str()) == label,
                };
                found = value
                    .as_ref()
                    .is_some_and(|v| mine || breaks_with_value(v, label, inner));
            }
            Imp::For { body, .. } | Imp::While { body, .. } | Imp::Loop { body, .. } => {
                let cond = match &**i {
                    Imp::While { cond, .. } => Some(cond),
                    _ => None,
                };
                i.parts(&mut |c| {
                    let inside = std::ptr::eq(c, body) || cond.is_some_and(|x| std::ptr::eq(c, x));
                    found |= breaks_with_value(c, label, inner && !inside);
                });
            }
            _ => i.parts(&mut |c| found |= breaks_with_value(c, label, inner)),
        },
        _ => e.children(&mut |c| found |= breaks_with_value(c, label, inner)),
    }
    found
}

/// The names a pattern binds.
pub(super) fn names(p: &Pat) -> Vec<String> {
    p.binders().into_iter().map(|i| i.name.clone()).collect()
}
