//! Mutable locals: `let mut`, assignment (to a local or a field of one), compound assignment,
//! and the join after an `if` or `match` whose arms assign.

use std::rc::Rc;

use super::info::{Jump, names};
use super::{
    Bind, FrameKind, K, Lower, app, destructure, if_then_else, intrinsic, let_in, lit, op, pack,
    param, unit, unpack, var,
};
use crate::ast::{AssignOp, Expr, ExprKind, Imp, Lit, Pat, PatKind, Place, Step};
use crate::error::SpanRange;
use crate::intrinsics::{BinOp, Intrinsic};
use crate::types::Annotation;

impl<'a> Lower<'a> {
    /// `match sv { pat => then, _ => otherwise }`, then `k`. An arm that jumps gets `k` at its
    /// end (what follows is written once per arm that reaches it); otherwise the mutable locals
    /// the arms assign are returned with the value, and `k` is written once, after.
    pub(super) fn branches(
        &mut self,
        e: &'a Expr,
        sv: Expr,
        pat: &'a Pat,
        then: &'a Expr,
        otherwise: &'a Expr,
        k: &K<'a>,
    ) -> Expr {
        let (ft, fo) = (self.facts.get(then), self.facts.get(otherwise));
        let bound = names(pat);
        let mut assigned: Vec<usize> = Vec::new();
        let candidates = ft
            .assigned
            .iter()
            .filter(|n| !bound.contains(n))
            .chain(fo.assigned.iter());
        for n in candidates {
            if let Some(m) = self.assignable(n)
                && !assigned.contains(&m)
            {
                assigned.push(m);
            }
        }
        if !ft.jumps.is_empty() || !fo.jumps.is_empty() {
            // Both arms may reach what follows: written once, after a join on a tag, so that
            // a run of such statements stays linear in size.
            if k.discards
                && !diverges(then)
                && !diverges(otherwise)
                && let Some(li) = self.tag_target(ft.jumps.iter().chain(fo.jumps.iter()))
            {
                return self.tagged_join(e, sv, pat, then, otherwise, assigned, li, k);
            }
            // At most one arm reaches what follows (the others jump): `k` is written there.
            let (p, t) = self.arm(pat, then, k);
            let o = self.lower(otherwise, k);
            return matched(sv, p, t, o, e.span);
        }
        if assigned.is_empty() {
            let done = self.done();
            let (p, t) = self.arm(pat, then, &done);
            let o = self.lower(otherwise, &done);
            let m = matched(sv, p, t, o, e.span);
            return self.resume(k, m);
        }
        let sp = e.span;
        let state = assigned.clone();
        // The value too, unless what follows drops it (an `if` statement).
        let value = !k.discards;
        let ret = self.kont(move |s, v| {
            let mut items = Vec::new();
            if value {
                items.push(v);
            } else if !super::is_atom(&v) {
                // Dropped, but evaluated.
                let rest = {
                    let items: Vec<Expr> = state.iter().map(|m| s.current(*m, sp)).collect();
                    pack(items, sp)
                };
                return let_in(param("_", v.span, None), v, rest, sp);
            }
            items.extend(state.iter().map(|m| s.current(*m, sp)));
            pack(items, sp)
        });
        let (p, t) = self.arm(pat, then, &ret);
        let o = self.lower(otherwise, &ret);
        let joined = matched(sv, p, t, o, sp);
        let r = self.fresh("v");
        let mut names = if value { vec![r.clone()] } else { Vec::new() };
        for m in &assigned {
            let v = self.fresh(&self.muts[*m].name.clone());
            self.set_version(*m, v.clone());
            names.push(v);
        }
        let result = if value { var(&r, sp) } else { unit(sp) };
        let rest = self.resume(k, result);
        unpack(&names, joined, rest, sp)
    }

    /// The loop whose jumps a tagged join can dispatch: the innermost open one, when every jump
    /// in `jumps` is a `break` or a `continue` to it and its `break`s carry no value (its exit
    /// is then the state, or the rest of the function when a `return` leaves it elsewhere).
    fn tag_target<'j>(&self, mut jumps: impl Iterator<Item = &'j Jump>) -> Option<usize> {
        let li = self.loops.len().checked_sub(1)?;
        let cx = &self.loops[li];
        if cx.value {
            return None;
        }
        let to_it = |l: &Option<String>| l.is_none() || *l == cx.label;
        jumps
            .all(|j| match j {
                Jump::Break(l) | Jump::Continue(l) => to_it(l),
                Jump::Return => false,
            })
            .then_some(li)
    }

    /// `match sv { pat => then, _ => otherwise }` as a statement, both arms of which may reach
    /// what follows and may jump to loop `li`: each arm ends with a tag (`0` where it reaches
    /// the end, `1` at a `continue`, `2` at a `break`) and the versions of the mutable locals
    /// the arms assign; what follows, the next iteration and the loop's exit are each written
    /// once, after, chosen by the tag.
    #[allow(clippy::too_many_arguments)]
    fn tagged_join(
        &mut self,
        e: &'a Expr,
        sv: Expr,
        pat: &'a Pat,
        then: &'a Expr,
        otherwise: &'a Expr,
        assigned: Vec<usize>,
        li: usize,
        k: &K<'a>,
    ) -> Expr {
        let sp = e.span;
        let state = Rc::new(assigned);
        let st = state.clone();
        let ret = self.kont_discarding(move |s, v| {
            let out = s.tag(0, &st, sp);
            if super::is_atom(&v) {
                out
            } else {
                let_in(param("_", v.span, None), v, out, sp)
            }
        });
        let outer = self.loops[li].tagged.replace(state.clone());
        let (p, t) = self.arm(pat, then, &ret);
        let o = self.lower(otherwise, &ret);
        self.loops[li].tagged = outer;
        let joined = matched(sv, p, t, o, sp);
        let tag = self.fresh("tag");
        let mut names = vec![tag.clone()];
        for m in state.iter() {
            let v = self.fresh(&self.muts[*m].name.clone());
            self.set_version(*m, v.clone());
            names.push(v);
        }
        let jumps = {
            let (ft, fo) = (self.facts.get(then), self.facts.get(otherwise));
            let all: Vec<&Jump> = ft.jumps.iter().chain(fo.jumps.iter()).collect();
            (
                all.iter().any(|j| matches!(j, Jump::Continue(_))),
                all.iter().any(|j| matches!(j, Jump::Break(_))),
            )
        };
        let is = |n: i64| {
            op(
                BinOp::Eq,
                var(&tag, sp),
                lit(Lit::Int(n.into()), sp),
                sp,
                sp,
            )
        };
        let rest = self.resume(k, unit(sp));
        let dispatch = match jumps {
            (true, true) => {
                let next = self.next(li, sp);
                let exit = self.exit(li, unit(sp));
                if_then_else(is(0), rest, if_then_else(is(1), next, exit, sp), sp)
            }
            (true, false) => if_then_else(is(0), rest, self.next(li, sp), sp),
            (false, _) => if_then_else(is(0), rest, self.exit(li, unit(sp)), sp),
        };
        unpack(&names, joined, dispatch, sp)
    }

    /// The mutable local `name` names here, when this frame may assign it.
    fn assignable(&self, name: &str) -> Option<usize> {
        match self.lookup(name)? {
            Bind::Mut(m) if self.muts[*m].frame == self.frame() => Some(*m),
            _ => None,
        }
    }

    /// An arm: its pattern with its names made unique, and its body lowered with `k`.
    fn arm(&mut self, pat: &'a Pat, body: &'a Expr, k: &K<'a>) -> (Pat, Expr) {
        let mark = self.mark();
        let p = self.unique_pat(pat, &[]);
        let b = self.lower(body, k);
        self.rollback(mark);
        (p, b)
    }

    /// `pat` with its names bound: those in `muts` as mutable locals (their first version), the
    /// others under unique names.
    fn unique_pat(&mut self, pat: &Pat, muts: &[String]) -> Pat {
        let mut p = pat.clone();
        self.unique_pat_here(&mut p, muts);
        p
    }

    fn unique_pat_here(&mut self, p: &mut Pat, muts: &[String]) {
        match &mut p.kind {
            PatKind::Bind(i) => {
                i.name = if muts.contains(&i.name) {
                    self.declare_mut(&i.name.clone(), None)
                } else {
                    self.bind_unique(&i.name.clone())
                };
            }
            PatKind::Record(fs) => fs
                .iter_mut()
                .for_each(|(_, p)| self.unique_pat_here(p, muts)),
            PatKind::Wild | PatKind::Lit(_) => {}
        }
    }

    /// `let mut pat = value; body`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn let_mut(
        &mut self,
        e: &'a Expr,
        pat: &'a Pat,
        muts: &'a [String],
        ann: &'a Option<Annotation>,
        value: &'a Expr,
        body: &'a Expr,
        k: &K<'a>,
    ) -> Expr {
        for name in muts {
            self.escaping_closure(name, body);
        }
        let k = k.clone();
        let kv = self.kont(move |s, v| {
            let sp = e.span;
            match &pat.kind {
                PatKind::Bind(i) => {
                    let x = s.declare_mut(&i.name, ann.clone());
                    let b = s.lower(body, &k);
                    let_in(param(&x, i.span, ann.clone()), v, b, sp)
                }
                _ => {
                    let p = s.unique_pat(pat, muts);
                    let b = s.lower(body, &k);
                    match ann {
                        Some(a) => {
                            let t = s.fresh("v");
                            let inner = destructure(p, var(&t, v.span), b, sp);
                            let_in(param(&t, a.span, Some(a.clone())), v, inner, sp)
                        }
                        None => destructure(p, v, b, sp),
                    }
                }
            }
        });
        self.lower(value, &kv)
    }

    /// `place = value` or `place op= value`: the value first, then the indices of the place
    /// (Rust's order), then the next version of the variable.
    pub(super) fn assign(
        &mut self,
        e: &'a Expr,
        place: &'a Place,
        aop: Option<(AssignOp, SpanRange)>,
        value: &'a Expr,
        k: &K<'a>,
    ) -> Expr {
        let target = self.target(place);
        let k = k.clone();
        let kv = self.kont(move |s, v| {
            let Some(m) = target else {
                return s.resume(&k, unit(e.span));
            };
            s.assign_indices(e, place, aop, m, v, Vec::new(), 0, k.clone())
        });
        self.lower(value, &kv)
    }

    /// Lowers the indices of `place` from its step `from` on, each bound to a fresh local
    /// (an index is read twice: for the element's old value and for the write), then writes.
    #[allow(clippy::too_many_arguments)]
    fn assign_indices(
        &mut self,
        e: &'a Expr,
        place: &'a Place,
        aop: Option<(AssignOp, SpanRange)>,
        m: usize,
        v: Expr,
        indices: Vec<Expr>,
        from: usize,
        k: K<'a>,
    ) -> Expr {
        let next = place.path[from..]
            .iter()
            .position(|st| matches!(st, Step::Index(_)));
        let Some(at) = next.map(|n| from + n) else {
            return self.write(e, place, aop, m, v, &indices, &k);
        };
        let Step::Index(ix) = &place.path[at] else {
            unreachable!("found above")
        };
        let kv = self.kont(move |s, iv| {
            let name = s.fresh("index");
            let mut indices = indices.clone();
            indices.push(var(&name, ix.span));
            let rest = s.assign_indices(e, place, aop, m, v.clone(), indices, at + 1, k.clone());
            let_in(param(&name, ix.span, None), iv, rest, ix.span)
        });
        self.lower(ix, &kv)
    }

    /// The write itself: the place's old value read step by step (`a`, `a[i]`, `a[i].0`), the
    /// new value (`op`'d with the old one for a compound assignment), and the variable made
    /// again with it — `set` for an element (in place where the old version is not read again:
    /// [`crate::opt::moves`]), `__set_field` for a field.
    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        e: &'a Expr,
        place: &'a Place,
        aop: Option<(AssignOp, SpanRange)>,
        m: usize,
        v: Expr,
        indices: &[Expr],
        k: &K<'a>,
    ) -> Expr {
        let sp = e.span;
        let mut parts = vec![self.current(m, place.root.span)];
        let mut ix = indices.iter();
        for st in &place.path {
            let outer = parts.last().expect("the variable").clone();
            let part = match st {
                Step::Field(label, lsp) => super::mk(
                    ExprKind::Proj {
                        expr: Box::new(outer),
                        label: label.clone(),
                    },
                    place.root.span.to(*lsp),
                ),
                Step::Index(i) => app(
                    intrinsic(Intrinsic::Get, i.span),
                    vec![outer, ix.next().expect("an index per step").clone()],
                    place.root.span.to(i.span),
                ),
            };
            parts.push(part);
        }
        let mut new = match aop {
            None => v,
            Some((AssignOp::Num(o), osp)) => {
                op(o, parts.last().expect("place").clone(), v, osp, sp)
            }
        };
        let mut ix = indices.iter().rev();
        for depth in (0..place.path.len()).rev() {
            new = match &place.path[depth] {
                Step::Field(..) => app(
                    intrinsic(Intrinsic::SetField, place.span),
                    vec![parts[depth].clone(), parts[depth + 1].clone(), new],
                    place.span,
                ),
                Step::Index(_) => app(
                    intrinsic(Intrinsic::Set, place.span),
                    vec![
                        parts[depth].clone(),
                        ix.next().expect("an index per step").clone(),
                        new,
                    ],
                    place.span,
                ),
            };
        }
        let x = self.fresh(&self.muts[m].name.clone());
        let ann = self.muts[m].ann.clone();
        self.set_version(m, x.clone());
        let rest = self.resume(k, unit(sp));
        let_in(param(&x, place.root.span, ann), new, rest, sp)
    }

    /// The mutable local an assignment writes, or the error that says why it cannot.
    fn target(&mut self, place: &Place) -> Option<usize> {
        let name = &place.root.name;
        let sp = place.root.span;
        match self.lookup(name).cloned() {
            Some(Bind::Mut(m)) if self.muts[m].frame == self.frame() => Some(m),
            Some(Bind::Mut(m)) => {
                let inside_fn = self.frames[self.muts[m].frame + 1..]
                    .iter()
                    .any(|f| f.kind == FrameKind::Fn);
                let keyword = self.frames[self.frame()].keyword.clone();
                match (inside_fn, keyword) {
                    (true, _) => self.error(
                        sp,
                        format!("a `fn` item cannot assign `{name}`, a mutable local of the block around it"),
                        format!("pass `{name}` to the function and return its new value: `{name} = f({name}, …);`"),
                    ),
                    (false, Some(kw)) => self.error(
                        sp,
                        format!("`{name}` is declared outside the function of `{kw}`, whose calls may run in parallel: it cannot be assigned there"),
                        parallel_help(&kw, name),
                    ),
                    (false, None) => self.error(
                        sp,
                        format!("a closure cannot assign `{name}`, a mutable local declared outside it"),
                        format!("return the new value from the closure and assign it outside: `{name} = f({name});`, or fold with `foldl`"),
                    ),
                }
                None
            }
            Some(Bind::Imm(_)) => {
                self.error(
                    sp,
                    format!("cannot assign twice to the immutable variable `{name}`"),
                    format!("declare it mutable: `let mut {name} = …;`"),
                );
                None
            }
            None => {
                self.error(
                    sp,
                    format!("cannot assign `{name}`: it is captured from outside `accelerate!`, and captured values do not change"),
                    format!("assign a mutable copy inside the expression: `let mut {name} = {name};`, and return it"),
                );
                None
            }
        }
    }

    /// Reports a closure that holds the mutable local `name` and is the value of the block that
    /// declares it (`body`, the rest of that block): it would outlive `name`.
    fn escaping_closure(&mut self, name: &str, body: &'a Expr) {
        let mut closures: Vec<String> = Vec::new();
        let mut e = body;
        // The block's statements: remember the closures bound to names that hold `name`.
        loop {
            match &e.kind {
                ExprKind::Let {
                    binder,
                    value,
                    body,
                    ..
                } => {
                    if binder.ident.name == name {
                        return;
                    }
                    if holds(value, name, &closures) {
                        closures.push(binder.ident.name.clone());
                    } else {
                        closures.retain(|c| *c != binder.ident.name);
                    }
                    e = body;
                }
                ExprKind::RecLet { body, .. } => e = body,
                ExprKind::Imp(i) => match &**i {
                    crate::ast::Imp::LetMut { pat, body, .. } => {
                        if names(pat).iter().any(|n| n == name) {
                            return;
                        }
                        e = body;
                    }
                    _ => return,
                },
                _ => break,
            }
        }
        if let Some(sp) = escapes(e, name, &closures) {
            self.error(
                sp,
                format!("this closure holds the mutable local `{name}` and outlives the block that declares it"),
                format!("copy it into an immutable local before the closure: `let {name} = {name};`"),
            );
        }
    }
}

/// Whether control never reaches the end of `e`: it ends in a jump on every path (a
/// conservative test: `false` when unsure).
fn diverges(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Imp(i) => match &**i {
            Imp::Break { .. } | Imp::Continue { .. } | Imp::Return { .. } => true,
            Imp::LetMut { value, body, .. } => diverges(value) || diverges(body),
            _ => false,
        },
        ExprKind::Let { value, body, .. } => diverges(value) || diverges(body),
        ExprKind::Match {
            scrutinee,
            then,
            otherwise,
            ..
        } => diverges(scrutinee) || (diverges(then) && diverges(otherwise)),
        _ => false,
    }
}

/// `match s { p => t, _ => o }`.
fn matched(s: Expr, p: Pat, t: Expr, o: Expr, span: SpanRange) -> Expr {
    super::mk(
        ExprKind::Match {
            scrutinee: Box::new(s),
            pat: p,
            then: Box::new(t),
            otherwise: Box::new(o),
        },
        span,
    )
}

/// The `help:` for assigning a variable declared outside a parallel keyword's function.
fn parallel_help(kw: &str, name: &str) -> String {
    match kw {
        "map" | "map2" | "par_loop" | "hist" => format!(
            "compute what each call contributes and combine the contributions outside: `{name} = reduce(f, ne, map(…));`, or write a `Tensor` with `tensor_set`"
        ),
        _ => format!("return the new value from the function and assign it outside: `{name} = …;`"),
    }
}

/// Whether `e` is or makes a closure that holds `name` (directly, or through one of `closures`).
fn holds(e: &Expr, name: &str, closures: &[String]) -> bool {
    match &e.kind {
        ExprKind::Lam { params, body } => {
            !params.iter().any(|p| p.ident.name == name) && mentions(body, name, closures)
        }
        _ => false,
    }
}

/// Whether `e` reads `name` or one of `closures`.
fn mentions(e: &Expr, name: &str, closures: &[String]) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if let ExprKind::Var { ident, .. } = &x.kind {
            found |= ident.name == name || closures.contains(&ident.name);
        }
    });
    found
}

/// Where the value `e` of a block hands out a closure holding `name`, if it does.
fn escapes(e: &Expr, name: &str, closures: &[String]) -> Option<SpanRange> {
    match &e.kind {
        ExprKind::Lam { .. } if holds(e, name, closures) => Some(e.span),
        ExprKind::Var { ident, .. } if closures.contains(&ident.name) => Some(e.span),
        ExprKind::Record(fs) => fs.iter().find_map(|(_, x)| escapes(x, name, closures)),
        ExprKind::Seq(xs) => xs.iter().find_map(|x| escapes(x, name, closures)),
        ExprKind::Match {
            then, otherwise, ..
        } => escapes(then, name, closures).or_else(|| escapes(otherwise, name, closures)),
        _ => None,
    }
}
