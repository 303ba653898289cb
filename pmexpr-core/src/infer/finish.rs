//! The end of inference: what is still unknown is defaulted (a tuple known by its projections, a
//! record by its named fields, a number not fixed by a captured value), the size of every type is
//! bounded, and the final types are written into the tree.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::{Infer, Kind, MAX_TYPE_DEPTH, MAX_TYPE_SIZE, Numeric};
use crate::ast::{Expr, ExprKind, Lit, Pat, PatKind};
use crate::error::{Error, SpanRange};
use crate::types::{Label, TyVar, Type};

impl Infer<'_> {
    /// Defaults what is still unknown and writes the final types into the tree: a tuple known only
    /// by its projections becomes the smallest tuple with those fields; a numeric variable that a
    /// captured value's type contains is kept (the Rust value fixes it); any other numeric variable
    /// becomes `i64`. Returns the kept numeric variables.
    pub(super) fn finish(&mut self, e: &mut Expr, captured: &[Type]) -> Vec<(TyVar, Numeric)> {
        for i in 0..self.vars.len() {
            if self.vars[i].binding.is_some() {
                continue;
            }
            if let Kind::Record(fields) = self.vars[i].kind.clone() {
                let size = fields.keys().map(|l| match l {
                    Label::Index(n) => Some(*n as usize + 1),
                    Label::Name(_) => None,
                });
                match size
                    .collect::<Option<Vec<usize>>>()
                    .and_then(|v| v.into_iter().max())
                {
                    Some(n) => {
                        let ts: Vec<Type> = (0..n)
                            .map(|k| {
                                fields
                                    .get(&Label::Index(k as u32))
                                    .cloned()
                                    .unwrap_or_else(|| self.fresh_at(0, Kind::Any))
                            })
                            .collect();
                        self.vars[i].binding = Some(Type::tuple(ts));
                    }
                    None => self.close_named(TyVar(i as u32), &fields),
                }
            }
        }
        self.settle_unsigned();
        // The variables the captured values' types reach (each shared part visited once: the
        // types are not written out before their sizes are checked).
        let mut reachable = HashSet::new();
        let mut seen = HashSet::new();
        for t in captured {
            self.unbound_vars(t, &mut reachable, &mut seen);
        }
        // The results of `abs_diff`s whose receivers are not known yet: their types follow the
        // receivers' (below), they are not defaulted.
        let waiting: HashSet<TyVar> = (self.unsigned.iter())
            .filter_map(|(_, u, _, _)| match self.find(u) {
                Type::Var(v) => Some(v),
                _ => None,
            })
            .collect();
        let mut kept = Vec::new();
        for i in 0..self.vars.len() {
            if self.vars[i].binding.is_some() {
                continue;
            }
            let v = TyVar(i as u32);
            if waiting.contains(&v) {
                continue;
            }
            let (numeric, default) = match self.vars[i].kind {
                Kind::Num => (Numeric::Num, Type::INT),
                Kind::Eq => (Numeric::Scalar, Type::INT),
                Kind::IntNum => (Numeric::Int, Type::INT),
                // Only `&`, `|`, `^` or `!` applied: `bool`, as `!` always was, unless an
                // integer (a literal, a captured value) says otherwise.
                Kind::Bits => (Numeric::Bits, Type::BOOL),
                Kind::FloatNum => (Numeric::Float, Type::FLOAT),
                // A value of any type that a captured value fixes: kept open, for rustc to fix.
                Kind::Any if reachable.contains(&v) => (Numeric::Open, Type::unit()),
                _ => continue,
            };
            if reachable.contains(&v) {
                kept.push((v, numeric));
            } else {
                self.vars[i].binding = Some(default);
            }
        }
        // Receivers defaulted to `i64` give `u64`s; those the captured values fix, results of
        // the unsigned type of their width.
        self.settle_unsigned();
        self.keep_unsigned(&mut kept);
        self.refuse_unsigned_receivers();
        for i in 0..self.vars.len() {
            self.compress(&Type::Var(TyVar(i as u32)));
        }
        if self.check_type_sizes(e) {
            self.zonk_expr(e);
            self.check_int_literals(e);
        }
        kept
    }

    /// The methods Rust has on signed integers only (`is_negative`, `wrapping_abs` …) whose
    /// receiver is an unsigned type: an error at the method, as rustc's. (A receiver that the
    /// captured values fix is left to them: the runtime gives it the obvious meaning.)
    fn refuse_unsigned_receivers(&mut self) {
        for (a, span, name) in std::mem::take(&mut self.signed_only) {
            let t = self.find(&a);
            if t.as_number().is_some_and(|n| n.is_unsigned()) {
                let shown = self.shown(&t);
                self.errors.push(
                    Error::new(
                        span,
                        format!("`.{name}()` is not a method of `{shown}`: Rust has it on signed integers only"),
                    )
                    .help("signed integers are i8, i16, i32, i64 and isize"),
                );
            }
        }
    }

    /// Rust's `abs_diff` gives the unsigned type of its receiver's width: each whose receiver's
    /// type is known gets that result type (an error at the method where the result is used as
    /// another type). Those whose receiver is still a variable stay in `self.unsigned`.
    fn settle_unsigned(&mut self) {
        // A result may be another's receiver (`x.abs_diff(y).abs_diff(z)`): again while one
        // settles (written inside out, they settle in one round).
        loop {
            let mut settled = false;
            for (a, u, span, name) in std::mem::take(&mut self.unsigned) {
                let Some(w) = self.find(&a).as_number().and_then(|n| n.unsigned()) else {
                    self.unsigned.push((a, u, span, name));
                    continue;
                };
                settled = true;
                let want = Type::number(w);
                if self.unify(&u, &want).is_err() {
                    let got = self.shown(&u);
                    let of = self.shown(&a);
                    self.errors.push(
                        Error::new(
                            span,
                            format!("`{name}` of {of} gives a {w}, as in Rust, used here as {got}"),
                        )
                        .help(format!(
                            "convert it where a {got} is needed: `{} as {got}`",
                            unsigned_call(name)
                        )),
                    );
                }
            }
            if !settled {
                break;
            }
        }
    }

    /// The results of the `abs_diff`s whose receivers' types the captured values fix
    /// ([`Numeric::Unsigned`], [`Numeric::OfUnsigned`]).
    fn keep_unsigned(&mut self, kept: &mut Vec<(TyVar, Numeric)>) {
        // One result type per receiver type (every `abs_diff` of an `i32` is a `u32`).
        // In order of first appearance, each receiver's place kept in `first` (linear in the
        // number of `abs_diff`s).
        let mut target: Vec<(TyVar, Type, SpanRange, &'static str)> = Vec::new();
        let mut first: std::collections::HashMap<TyVar, usize> = Default::default();
        for (a, u, span, name) in std::mem::take(&mut self.unsigned) {
            let Type::Var(av) = self.find(&a) else {
                continue;
            };
            match first.get(&av) {
                Some(&i) => {
                    let t = target[i].1.clone();
                    if self.unify(&u, &t).is_err() {
                        let (got, want) = (self.shown(&u), self.shown(&t));
                        self.errors.push(
                            Error::new(span, format!("`{name}` of the same type gives {want} elsewhere, used here as {got}"))
                                .help(format!("Rust's `{name}` gives the unsigned integer of its receiver's width")),
                        );
                    }
                }
                None => {
                    first.insert(av, target.len());
                    target.push((av, u, span, name));
                }
            }
        }
        let mut at: std::collections::HashMap<TyVar, usize> =
            kept.iter().enumerate().map(|(i, (v, _))| (*v, i)).collect();
        let mut set = |v: TyVar, k: Numeric| match at.get(&v) {
            Some(&i) => kept[i].1 = k,
            None => {
                at.insert(v, kept.len());
                kept.push((v, k));
            }
        };
        for (av, u, span, name) in target {
            match self.find(&u) {
                Type::Var(uv) => set(uv, Numeric::Unsigned(av)),
                t => match t.as_number() {
                    Some(m) if m.is_unsigned() => set(av, Numeric::OfUnsigned(m)),
                    _ => {
                        let got = self.shown(&t);
                        self.errors.push(
                            Error::new(
                                span,
                                format!("`{name}` gives an unsigned integer, as in Rust, used here as {got}"),
                            )
                            .help(format!("convert it where a {got} is needed: `{} as {got}`", unsigned_call(name))),
                        );
                    }
                },
            }
        }
        // A result unified with another is no variable of its own any more.
        kept.retain(|(v, _)| self.vars[v.0 as usize].binding.is_none());
    }

    /// An integer literal whose type is known here and that does not fit it (`x + 300` with
    /// `x: u8`) is an error at the literal, as rustc's "literal out of range"; one whose type the
    /// captured values fix is checked when it is evaluated (`Int::from_lit`).
    fn check_int_literals(&mut self, e: &Expr) {
        let mut bad = Vec::new();
        e.walk(&mut |x| {
            if let (ExprKind::Lit(Lit::Int(i)), Type::Num(n)) = (&x.kind, &x.ty)
                && let Some((lo, hi)) = n.int_range()
                && !(lo..=hi).contains(i)
            {
                bad.push(
                    Error::new(x.span, format!("the literal `{i}` does not fit in {n}"))
                        .help(format!("the {n} values are {lo}..={hi}")),
                );
            }
        });
        self.errors.extend(bad);
    }

    /// The unbound variables of `t`, through the substitution, each bound one visited once.
    fn unbound_vars(&self, t: &Type, out: &mut HashSet<TyVar>, seen: &mut HashSet<TyVar>) {
        match t {
            Type::Var(v) => {
                if !seen.insert(*v) {
                    return;
                }
                match &self.vars[v.0 as usize].binding {
                    Some(b) => self.unbound_vars(b, out, seen),
                    None => {
                        out.insert(*v);
                    }
                }
            }
            Type::Seq(a) | Type::Tensor(a) => self.unbound_vars(a, out, seen),
            Type::Arrow(a, b) => {
                self.unbound_vars(a, out, seen);
                self.unbound_vars(b, out, seen);
            }
            Type::Record(fs) => fs.iter().for_each(|(_, t)| self.unbound_vars(t, out, seen)),
            Type::Num(_) => {}
        }
    }

    pub(super) fn vars_of(&self, t: &Type, out: &mut Vec<TyVar>) {
        match t {
            Type::Var(v) => out.push(*v),
            Type::Seq(a) | Type::Tensor(a) => self.vars_of(a, out),
            Type::Arrow(a, b) => {
                self.vars_of(a, out);
                self.vars_of(b, out);
            }
            Type::Record(fs) => fs.iter().for_each(|(_, t)| self.vars_of(t, out)),
            Type::Num(_) => {}
        }
    }

    fn zonk_expr(&self, e: &mut Expr) {
        e.ty = self.zonk(&e.ty);
        // The types that are not on subexpressions: instantiations, binders, patterns.
        match &mut e.kind {
            ExprKind::Var { inst, .. } => inst.iter_mut().for_each(|t| *t = self.zonk(t)),
            ExprKind::Lam { params, .. } => params.iter_mut().for_each(|p| p.ty = self.zonk(&p.ty)),
            ExprKind::Let { binder, .. } => binder.ty = self.zonk(&binder.ty),
            ExprKind::RecLet { fns, .. } => {
                for f in fns.iter_mut() {
                    f.ty = self.zonk(&f.ty);
                    f.params.iter_mut().for_each(|p| p.ty = self.zonk(&p.ty));
                }
            }
            ExprKind::Match { pat, .. } => self.zonk_pat(pat),
            _ => {}
        }
        e.children_mut(&mut |c| self.zonk_expr(c));
    }

    fn zonk_pat(&self, p: &mut Pat) {
        p.ty = self.zonk(&p.ty);
        if let PatKind::Record(fs) = &mut p.kind {
            fs.iter_mut().for_each(|(_, p)| self.zonk_pat(p));
        }
    }

    /// Closes a record known only by some named fields with the one derived struct that has them.
    fn close_named(&mut self, v: TyVar, fields: &BTreeMap<Label, Type>) {
        let span = self
            .record_spans
            .get(&v)
            .copied()
            .unwrap_or_else(SpanRange::call_site);
        let names: BTreeSet<String> = fields.keys().map(|l| l.to_string()).collect();
        let listed = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let candidates = self.records.map(|r| r.with_fields(&names));
        let error = match candidates.as_deref() {
            None => Some(
                Error::new(
                    span,
                    format!(
                        "this value is used as a record with field{} {listed}, but `accelerate!` cannot see `#[derive(pmexpr::Record)]` structs: this crate has no pmexpr build hook",
                        if names.len() == 1 { "" } else { "s" }
                    ),
                )
                .help(crate::error::ADD_HOOK_HELP),
            ),
            Some([(_, ann)]) => {
                let t = self.ann_type_raw(ann);
                self.unify(&Type::Var(v), &t).err().map(|_| {
                    let t = self.shown(&t);
                    let fs: Vec<String> = fields
                        .iter()
                        .map(|(l, ft)| format!("{l}: {}", self.shown(ft)))
                        .collect();
                    Error::new(
                        span,
                        format!(
                            "this value is used as `{{ {} }}`, which does not fit `{t}`",
                            fs.join(", ")
                        ),
                    )
                })
            }
            Some([]) => Some(
                Error::new(
                    span,
                    format!("no `#[derive(pmexpr::Record)]` struct has the fields {listed}"),
                )
                .help("derive `pmexpr::Record` on the struct of this value"),
            ),
            Some(several) => {
                let names: Vec<String> = several.iter().map(|(n, _)| format!("`{n}`")).collect();
                Some(
                    Error::new(
                        span,
                        format!(
                            "this value may be any of the records {} (they all have {listed})",
                            names.join(", ")
                        ),
                    )
                    .help(format!(
                        "say which with a type annotation, e.g. `|p: {}| …` or `let p: {} = p;`",
                        several[0].0, several[0].0
                    )),
                )
            }
        };
        if let Some(error) = error {
            self.errors.push(error);
            self.vars[v.0 as usize].binding = Some(Type::unit());
        }
    }

    /// The size and the depth of `t` with every binding applied, counted on the shared bindings
    /// (`memo`, indexed by variable like `vars`), so in time linear in what inference built even
    /// where the written-out type would be exponential; the size saturates at `usize::MAX`.
    fn resolved_measure(&self, t: &Type, memo: &mut [Option<(usize, usize)>]) -> (usize, usize) {
        let mut measure = |t: &Type| self.resolved_measure(t, memo);
        match t {
            Type::Var(v) => {
                if let Some(Some(m)) = memo.get(v.0 as usize) {
                    return *m;
                }
                // Only bound variables are remembered: an unbound one may be bound later.
                let Some(b) = &self.vars[v.0 as usize].binding else {
                    return (1, 0);
                };
                let m = self.resolved_measure(b, memo);
                if let Some(slot) = memo.get_mut(v.0 as usize) {
                    *slot = Some(m);
                }
                m
            }
            Type::Num(_) => (1, 0),
            Type::Seq(a) | Type::Tensor(a) => {
                let (size, depth) = measure(a);
                (size.saturating_add(1), depth + 1)
            }
            Type::Arrow(a, b) => {
                let ((sa, da), (sb, db)) = (measure(a), measure(b));
                (sa.saturating_add(sb).saturating_add(1), da.max(db) + 1)
            }
            Type::Record(fs) => fs.iter().fold((1, 1), |(size, depth), (_, t)| {
                let (s, d) = measure(t);
                (size.saturating_add(s), depth.max(d + 1))
            }),
        }
    }

    /// Checks, as soon as a `let` or `fn` is generalized, that its type is within the limits
    /// (reported at `span` otherwise): what would be built on it (each use copies it) is not
    /// built. Each shared part is measured once per inference (a part measured while it held
    /// unbound variables may have grown since: the check at the end measures everything again).
    /// Returns whether it is within.
    pub(super) fn check_type_early(&mut self, t: &Type, span: SpanRange) -> bool {
        let mut memo = std::mem::take(&mut self.measures);
        memo.resize(self.vars.len(), None);
        let (size, depth) = self.resolved_measure(t, &mut memo);
        self.measures = memo;
        match limit_error(size, depth, span) {
            None => true,
            Some(e) => {
                if !self.size_reported {
                    self.size_reported = true;
                    self.errors.push(e);
                }
                false
            }
        }
    }

    /// Reports the first expression whose type, written out, would exceed [`MAX_TYPE_SIZE`]
    /// (applying identities to identities doubles it per argument): the generated Rust would be as
    /// large. Returns whether all are within.
    fn check_type_sizes(&mut self, e: &Expr) -> bool {
        if self.size_reported {
            return false;
        }
        // A vector, not a hash map: a map keyed by variable scatters its entries, and with one
        // variable per node of a long input every lookup missed the cache.
        let mut memo = vec![None; self.vars.len()];
        let mut too_big = None;
        let mut too_deep = None;
        e.walk(&mut |x| {
            let (size, depth) = self.resolved_measure(&x.ty, &mut memo);
            if too_big.is_none() && size > MAX_TYPE_SIZE {
                too_big = Some(x.span);
            }
            if too_deep.is_none() && depth > MAX_TYPE_DEPTH {
                too_deep = Some(x.span);
            }
        });
        let error = match (too_big, too_deep) {
            (Some(span), _) => limit_error(MAX_TYPE_SIZE + 1, 0, span),
            (None, Some(span)) => limit_error(0, MAX_TYPE_DEPTH + 1, span),
            (None, None) => None,
        };
        match error {
            None => true,
            Some(e) => {
                self.errors.push(e);
                false
            }
        }
    }
}

/// The error for a type of this size and depth, if it is past a limit (the size first).
fn limit_error(size: usize, depth: usize, span: SpanRange) -> Option<Error> {
    if size > MAX_TYPE_SIZE {
        return Some(
            Error::new(
                span,
                format!("the type of this expression is too large: written out, it has more than {MAX_TYPE_SIZE} parts"),
            )
            .help("annotate the functions and values involved, or split the expression with `let`"),
        );
    }
    if depth > MAX_TYPE_DEPTH {
        return Some(
            Error::new(
                span,
                format!("the type of this expression nests more than {MAX_TYPE_DEPTH} levels deep (sequences of sequences, tuples or functions)"),
            )
            .help("rustc's trait solver stops at 128 levels, and the generated code needs several per level: split the value into flatter ones"),
        );
    }
    None
}

/// How a call of `name` (`abs_diff` or `unsigned_abs`) is written, for a help.
fn unsigned_call(name: &str) -> &'static str {
    if name == "unsigned_abs" {
        "x.unsigned_abs()"
    } else {
        "x.abs_diff(y)"
    }
}
