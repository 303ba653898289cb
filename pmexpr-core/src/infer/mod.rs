//! Type inference: Hindley–Milner with let-polymorphism, records (tuples), sequences, tensors and
//! arrows; the operators `+ - * / % == != < <= > >=` are resolved later by the type of their
//! operands (`+` on `i64` is `addi`).
//!
//! Operand types of the numeric operators carry a constraint (`Num`: `i64` or `f64`; `Eq`: also
//! `bool`); a constrained variable is never generalized, and one still unknown at the end defaults
//! to `i64`, as in Standard ML. Only `let`-bound lambdas and `fn` items are generalized (the
//! value restriction). A type variable in a captured variable's type is left open for the Rust
//! value to fix ([`Numeric`]); a type no captured value fixes (a value made and consumed inside
//! the expression, or a result that no captured value determines) gets an error that asks for an
//! annotation and shows where to put it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::ast::{Expr, ExprKind, IdMap, Lit, Param, Pat, PatKind};
use crate::error::{Error, Errors, SpanRange};
use crate::intrinsics::{Intrinsic, Keyword, Operands};
use crate::record::Records;
use crate::resolve::{FreeVar, Resolved};
use crate::types::{Annotation, Label, MAX_TUPLE, TyVar, Type, TypeAnn};

/// What a numeric type variable of a site may become: its type comes from the Rust values the
/// site captures (generated code is generic over it, and rustc fixes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numeric {
    /// Any number (`i64`, `f64`, `i32`, `f32`): used in arithmetic or as a tensor element.
    Num,
    /// A number or `bool`: only compared with `==` or `!=`.
    Scalar,
    /// An integer (`i64`, `i32`): an integer literal is one.
    Int,
    /// A floating-point number (`f64`, `f32`): a float literal is one.
    Float,
    /// Any value (an element type the expression only moves, stores or counts, as in
    /// `flatten(m)` or `reverse(s)`): the captured value's Rust type fixes it, whatever it is —
    /// a number, a tuple, a nested sequence. The CPU code is generic over it; the GPU paths have
    /// code for each number and `bool` it may be (`codegen::numbers`), picked at run time from
    /// the captured values' Rust types, and leave the site to the CPU for any other type.
    Open,
}

/// A typed expression: every node's type known, quantified variables left as variables in the
/// bodies of polymorphic bindings (monomorphization instantiates them), and the numeric variables
/// that the captured values fix left as variables too.
#[derive(Debug, Clone)]
pub struct Typed {
    /// The expression.
    pub expr: Expr,
    /// The captured variables, in order of first use.
    pub free_vars: Vec<FreeVar>,
    /// Their types (function-free; ground but for the variables in `numeric`), in the same order.
    pub free_var_types: Vec<Type>,
    /// The numeric type variables fixed by the Rust types of captured values.
    pub numeric: Vec<(TyVar, Numeric)>,
    /// The name of every identifier.
    pub names: Vec<String>,
}

/// Infers the types of a resolved expression that names no derived struct.
pub fn infer(resolved: Resolved) -> Result<Typed, Errors> {
    infer_in(resolved, None)
}

/// Infers the types of a resolved expression; `records` are the derived structs that a value used
/// only through named fields may be (`None` when the crate has no build hook).
pub fn infer_in(resolved: Resolved, records: Option<&Records>) -> Result<Typed, Errors> {
    let Resolved {
        mut expr,
        free_vars,
        names,
    } = resolved;
    let mut cx = Infer {
        vars: Vec::new(),
        level: 1,
        env: IdMap::default(),
        errors: Vec::new(),
        names: &names,
        record_spans: HashMap::new(),
        oversized_tuple: false,
        records,
    };
    let fv_types: Vec<Type> = free_vars
        .iter()
        .map(|fv| {
            let t = cx.fresh_at(0, Kind::Any);
            cx.env.insert(
                fv.id,
                Scheme {
                    vars: Vec::new(),
                    ty: t.clone(),
                },
            );
            t
        })
        .collect();
    cx.expr(&mut expr);
    let numeric = cx.finish(&mut expr, &fv_types);
    if !cx.errors.is_empty() {
        return Err(cx.errors);
    }
    let free_var_types: Vec<Type> = fv_types.iter().map(|t| cx.zonk(t)).collect();
    // Unknown types after another error are usually its consequence: report them only alone.
    if cx.errors.is_empty() {
        let kept: Vec<TyVar> = numeric.iter().map(|(v, _)| *v).collect();
        // A captured function makes the other captured types unknowable: report it alone.
        for (fv, t) in free_vars.iter().zip(&free_var_types) {
            if t.has_arrow() {
                cx.check_captured(fv, t, &kept);
            }
        }
        if cx.errors.is_empty() {
            for (fv, t) in free_vars.iter().zip(&free_var_types) {
                cx.check_captured(fv, t, &kept);
            }
        }
        if cx.errors.is_empty() {
            cx.check_result(&expr, &kept);
        }
    }
    if cx.errors.is_empty() {
        Ok(Typed {
            expr,
            free_vars,
            free_var_types,
            numeric,
            names,
        })
    } else {
        Err(cx.errors)
    }
}

#[derive(Debug, Clone)]
enum Kind {
    Any,
    /// A number: `i64`, `f64`, `i32` or `f32`.
    Num,
    /// An integer: `i64` or `i32` (an integer literal).
    IntNum,
    /// A floating-point number: `f64` or `f32` (a float literal).
    FloatNum,
    /// `i64`, `f64` or `bool`.
    Eq,
    /// A record with at least these fields.
    Record(BTreeMap<Label, Type>),
}

#[derive(Debug, Clone)]
struct VarInfo {
    binding: Option<Type>,
    level: u32,
    kind: Kind,
}

#[derive(Debug, Clone)]
struct Scheme {
    vars: Vec<TyVar>,
    ty: Type,
}

struct Infer<'n> {
    vars: Vec<VarInfo>,
    level: u32,
    env: IdMap<Scheme>,
    errors: Errors,
    names: &'n [String],
    record_spans: HashMap<TyVar, SpanRange>,
    oversized_tuple: bool,
    records: Option<&'n Records>,
}

/// The largest type, in parts (`Vec<(i64, f64)>` has 4), that inference writes out; a bigger one
/// is an error rather than exponential time and memory. Rust's own limit on type length is
/// 1,048,576 by default; the generated code spells out each type several times.
pub const MAX_TYPE_SIZE: usize = 10_000;

/// The deepest type inference accepts: the generated code spells each type for rustc, whose trait
/// solver and drop check stop at 128 nested obligations: a sequence literal nested 32 deep
/// compiles, 60 deep does not.
pub const MAX_TYPE_DEPTH: usize = 32;

/// Why two types do not unify.
enum Mismatch {
    Types,
    Infinite,
    Kind(&'static str),
    MissingField(Label),
}

/// `1st`, `2nd`, `3rd`, `4th`, …, `11th`, `12th`, `13th`, `21st`, `22nd`, … of a 0-based index.
fn ordinal(i: usize) -> String {
    let n = i + 1;
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn kind_name(k: &Kind) -> &'static str {
    match k {
        Kind::Any => "any type",
        Kind::Num => "a number (i64 or f64)",
        Kind::IntNum => "an integer",
        Kind::FloatNum => "a floating-point number",
        Kind::Eq => "i64, f64 or bool",
        Kind::Record(fs) if matches!(fs.keys().next(), Some(Label::Name(_))) => "a record",
        Kind::Record(_) => "a tuple",
    }
}

impl Infer<'_> {
    fn fresh_at(&mut self, level: u32, kind: Kind) -> Type {
        let v = TyVar(self.vars.len() as u32);
        self.vars.push(VarInfo {
            binding: None,
            level,
            kind,
        });
        Type::Var(v)
    }

    fn fresh(&mut self) -> Type {
        self.fresh_at(self.level, Kind::Any)
    }

    fn fresh_kind(&mut self, kind: Kind) -> Type {
        self.fresh_at(self.level, kind)
    }

    /// Follows bindings at the top of a type.
    fn find(&self, t: &Type) -> Type {
        let mut t = t.clone();
        while let Type::Var(v) = t {
            match &self.vars[v.0 as usize].binding {
                Some(b) => t = b.clone(),
                None => return t,
            }
        }
        t
    }

    /// Applies the substitution everywhere in a type.
    fn zonk(&self, t: &Type) -> Type {
        self.resolve(t, false)
    }

    /// A type as an error message shows it: a number literal whose type is still open shows as
    /// its default (`i64`, `f64`), the type it would get.
    fn shown(&self, t: &Type) -> Type {
        self.resolve(t, true)
    }

    /// Applies the substitution everywhere in a type; with `literals`, open literal types as
    /// their defaults.
    fn resolve(&self, t: &Type, literals: bool) -> Type {
        match self.find(t) {
            Type::Var(v) if literals => match self.vars[v.0 as usize].kind {
                Kind::IntNum => Type::Int,
                Kind::FloatNum => Type::Float,
                _ => Type::Var(v),
            },
            Type::Seq(a) => Type::seq(self.resolve(&a, literals)),
            Type::Tensor(a) => Type::tensor(self.resolve(&a, literals)),
            Type::Arrow(a, b) => {
                Type::arrow(self.resolve(&a, literals), self.resolve(&b, literals))
            }
            Type::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(l, t)| (l.clone(), self.resolve(t, literals)))
                    .collect(),
            ),
            t => t,
        }
    }

    fn occurs_adjust(&mut self, v: TyVar, t: &Type, level: u32) -> bool {
        match self.find(t) {
            Type::Var(w) => {
                if w == v {
                    return true;
                }
                let info = &mut self.vars[w.0 as usize];
                info.level = info.level.min(level);
                if let Kind::Record(fs) = info.kind.clone() {
                    return fs.values().any(|t| self.occurs_adjust(v, t, level));
                }
                false
            }
            Type::Seq(a) | Type::Tensor(a) => self.occurs_adjust(v, &a, level),
            Type::Arrow(a, b) => {
                self.occurs_adjust(v, &a, level) || self.occurs_adjust(v, &b, level)
            }
            Type::Record(fs) => fs.iter().any(|(_, t)| self.occurs_adjust(v, t, level)),
            Type::Int | Type::Float | Type::Bool => false,
        }
    }

    /// Points every variable on the chain of bindings from `t` at the chain's last variable:
    /// path compression, which keeps [`Infer::find`] short (a sequence literal of n elements
    /// otherwise chains n variables). The variable every one stands for does not change.
    fn compress(&mut self, t: &Type) {
        let Type::Var(mut v) = *t else { return };
        let mut chain = Vec::new();
        while let Some(Type::Var(w)) = &self.vars[v.0 as usize].binding {
            chain.push(v);
            v = *w;
        }
        chain.pop();
        for u in chain {
            self.vars[u.0 as usize].binding = Some(Type::Var(v));
        }
    }

    /// The size and the depth of `t` with every binding applied, counted on the shared bindings
    /// (`memo`, indexed by variable like `vars`), so in time linear in what inference built even
    /// where the written-out type would be exponential; the size saturates at `usize::MAX`.
    fn resolved_measure(&self, t: &Type, memo: &mut [Option<(usize, usize)>]) -> (usize, usize) {
        let mut measure = |t: &Type| self.resolved_measure(t, memo);
        match t {
            Type::Var(v) => {
                if let Some(m) = memo[v.0 as usize] {
                    return m;
                }
                let m = match &self.vars[v.0 as usize].binding {
                    Some(b) => self.resolved_measure(b, memo),
                    None => (1, 0),
                };
                memo[v.0 as usize] = Some(m);
                m
            }
            Type::Int | Type::Float | Type::Bool => (1, 0),
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

    /// Reports the first expression whose type, written out, would exceed [`MAX_TYPE_SIZE`]
    /// (applying identities to identities doubles it per argument): the generated Rust would be as
    /// large. Returns whether all are within.
    fn check_type_sizes(&mut self, e: &Expr) -> bool {
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
        if let (None, Some(span)) = (too_big, too_deep) {
            self.errors.push(
                Error::new(
                    span,
                    format!("the type of this expression nests more than {MAX_TYPE_DEPTH} levels deep (sequences of sequences, tuples or functions)"),
                )
                .help("rustc's trait solver stops at 128 levels, and the generated code needs several per level: split the value into flatter ones"),
            );
            return false;
        }
        match too_big {
            None => true,
            Some(span) => {
                self.errors.push(
                    Error::new(
                        span,
                        format!("the type of this expression is too large: written out, it has more than {MAX_TYPE_SIZE} parts"),
                    )
                    .help("annotate the functions and values involved, or split the expression with `let`"),
                );
                false
            }
        }
    }

    fn unify(&mut self, a: &Type, b: &Type) -> Result<(), Mismatch> {
        self.compress(a);
        self.compress(b);
        let (a, b) = (self.find(a), self.find(b));
        match (&a, &b) {
            (Type::Var(v), Type::Var(w)) if v == w => Ok(()),
            (Type::Var(v), _) => self.bind(*v, &b),
            (_, Type::Var(w)) => self.bind(*w, &a),
            (Type::Int, Type::Int) | (Type::Float, Type::Float) | (Type::Bool, Type::Bool) => {
                Ok(())
            }
            (Type::Seq(x), Type::Seq(y)) | (Type::Tensor(x), Type::Tensor(y)) => self.unify(x, y),
            (Type::Arrow(a1, b1), Type::Arrow(a2, b2)) => {
                self.unify(a1, a2)?;
                self.unify(b1, b2)
            }
            (Type::Record(f1), Type::Record(f2)) => {
                if f1.len() != f2.len() || f1.iter().zip(f2).any(|((l1, _), (l2, _))| l1 != l2) {
                    return Err(Mismatch::Types);
                }
                for ((_, t1), (_, t2)) in f1.iter().zip(f2) {
                    self.unify(t1, t2)?;
                }
                Ok(())
            }
            _ => Err(Mismatch::Types),
        }
    }

    fn bind(&mut self, v: TyVar, t: &Type) -> Result<(), Mismatch> {
        // A number literal meeting another type is a plain type mismatch (`i64` vs `f64`).
        let other = match t {
            Type::Var(w) => Some(&self.vars[w.0 as usize].kind),
            _ => None,
        };
        let literal_clash = match (&self.vars[v.0 as usize].kind, t, other) {
            (Kind::IntNum, _, Some(Kind::FloatNum)) | (Kind::FloatNum, _, Some(Kind::IntNum)) => {
                true
            }
            (Kind::IntNum, Type::Var(_) | Type::Int, _)
            | (Kind::FloatNum, Type::Var(_) | Type::Float, _) => false,
            (Kind::IntNum | Kind::FloatNum, _, _) => true,
            _ => false,
        };
        if literal_clash {
            return Err(Mismatch::Types);
        }
        let level = self.vars[v.0 as usize].level;
        if self.occurs_adjust(v, t, level) {
            return Err(Mismatch::Infinite);
        }
        let kind = self.vars[v.0 as usize].kind.clone();
        self.vars[v.0 as usize].binding = Some(t.clone());
        self.constrain(t, kind)
    }

    /// Requires `t` to be of kind `k`.
    fn constrain(&mut self, t: &Type, k: Kind) -> Result<(), Mismatch> {
        let t = self.find(t);
        match (k, &t) {
            (Kind::Any, _) => Ok(()),
            (k, Type::Var(w)) => {
                // A tuple whose field would be the tuple itself (`x + x.0`) has an infinite type.
                if let Kind::Record(fields) = &k {
                    let level = self.vars[w.0 as usize].level;
                    if fields.values().any(|t| self.occurs_adjust(*w, t, level)) {
                        return Err(Mismatch::Infinite);
                    }
                }
                let old = self.vars[w.0 as usize].kind.clone();
                let merged = match (old, k) {
                    (Kind::Any, k) | (k, Kind::Any) => k,
                    (Kind::Num, Kind::Num | Kind::Eq) | (Kind::Eq, Kind::Num) => Kind::Num,
                    (Kind::Eq, Kind::Eq) => Kind::Eq,
                    (Kind::IntNum, Kind::Num | Kind::Eq | Kind::IntNum)
                    | (Kind::Num | Kind::Eq, Kind::IntNum) => Kind::IntNum,
                    (Kind::FloatNum, Kind::Num | Kind::Eq | Kind::FloatNum)
                    | (Kind::Num | Kind::Eq, Kind::FloatNum) => Kind::FloatNum,
                    (Kind::IntNum, Kind::FloatNum) | (Kind::FloatNum, Kind::IntNum) => {
                        return Err(Mismatch::Types);
                    }
                    (Kind::Record(mut a), Kind::Record(b)) => {
                        for (l, tb) in b {
                            match a.get(&l).cloned() {
                                Some(ta) => self.unify(&ta, &tb)?,
                                None => {
                                    a.insert(l, tb);
                                }
                            }
                        }
                        Kind::Record(a)
                    }
                    (Kind::Record(_), k) | (k, Kind::Record(_)) => {
                        return Err(Mismatch::Kind(kind_name(&k)));
                    }
                };
                self.vars[w.0 as usize].kind = merged;
                Ok(())
            }
            (Kind::Num, Type::Int | Type::Float) => Ok(()),
            (Kind::IntNum, Type::Int) | (Kind::FloatNum, Type::Float) => Ok(()),
            (Kind::Eq, Type::Int | Type::Float | Type::Bool) => Ok(()),
            (Kind::Record(req), Type::Record(fs)) => {
                for (l, tr) in req {
                    match fs.iter().find(|(fl, _)| *fl == l) {
                        Some((_, tf)) => {
                            let tf = tf.clone();
                            self.unify(&tr, &tf)?
                        }
                        None => return Err(Mismatch::MissingField(l)),
                    }
                }
                Ok(())
            }
            (k, _) => Err(Mismatch::Kind(kind_name(&k))),
        }
    }

    /// Reports a failed unification of `found` (the type of the user's expression at `span`)
    /// against `expected`.
    fn mismatch(
        &mut self,
        why: Mismatch,
        span: SpanRange,
        expected: &Type,
        found: &Type,
        context: &str,
    ) -> Error {
        let (e, f) = (self.shown(expected), self.shown(found));
        let message = match why {
            Mismatch::Types => format!("mismatched types: expected `{e}`, found `{f}`{context}"),
            Mismatch::Infinite => {
                format!(
                    "this expression would need an infinite type: a value that contains itself{context}"
                )
            }
            Mismatch::Kind(k) => format!("expected {k}, found `{f}`{context}"),
            Mismatch::MissingField(l) => format!("`{f}` has no field `{l}`{context}"),
        };
        Error::new(span, message)
    }

    fn expect(&mut self, found: &Type, expected: &Type, span: SpanRange, context: &str) -> bool {
        match self.unify(expected, found) {
            Ok(()) => true,
            Err(why) => {
                let err = self.mismatch(why, span, expected, found, context);
                self.errors.push(err);
                false
            }
        }
    }

    /// Tensors hold `i64` or `f64`.
    fn tensor_elements_numeric(&mut self, t: &Type) {
        match self.find(t) {
            Type::Tensor(a) => {
                let _ = self.constrain(&a, Kind::Num);
            }
            Type::Seq(a) => self.tensor_elements_numeric(&a),
            Type::Arrow(a, b) => {
                self.tensor_elements_numeric(&a);
                self.tensor_elements_numeric(&b);
            }
            Type::Record(fs) => fs.iter().for_each(|(_, t)| self.tensor_elements_numeric(t)),
            _ => {}
        }
    }

    fn ann_type(&mut self, a: &Annotation) -> Type {
        let t = self.ann_type_raw(&a.ann);
        if std::mem::take(&mut self.oversized_tuple) {
            self.check_tuple_size(MAX_TUPLE + 1, a.span);
        }
        if let Some(bad) = self.non_numeric_tensor(&t) {
            self.errors.push(Error::new(
                a.span,
                format!("tensors hold i64 or f64, not `{bad}`"),
            ));
            // Reported here: the rest of the expression sees an unknown type, not a second error.
            return self.fresh();
        }
        self.tensor_elements_numeric(&t);
        t
    }

    /// The element type of a tensor in `t` that cannot be a tensor element, if any.
    fn non_numeric_tensor(&self, t: &Type) -> Option<Type> {
        match self.find(t) {
            Type::Tensor(a) => match self.find(&a) {
                Type::Int | Type::Float | Type::Var(_) => None,
                other => Some(self.shown(&other)),
            },
            Type::Seq(a) => self.non_numeric_tensor(&a),
            Type::Arrow(a, b) => self
                .non_numeric_tensor(&a)
                .or_else(|| self.non_numeric_tensor(&b)),
            Type::Record(fs) => fs.iter().find_map(|(_, t)| self.non_numeric_tensor(t)),
            _ => None,
        }
    }

    fn ann_type_raw(&mut self, a: &TypeAnn) -> Type {
        match a {
            TypeAnn::Int => Type::Int,
            TypeAnn::Float => Type::Float,
            TypeAnn::Bool => Type::Bool,
            TypeAnn::Seq(t) => Type::seq(self.ann_type_raw(t)),
            TypeAnn::Tensor(t) => Type::tensor(self.ann_type_raw(t)),
            TypeAnn::Arrow(ps, r) => {
                let mut ps: Vec<Type> = ps.iter().map(|p| self.ann_type_raw(p)).collect();
                if ps.is_empty() {
                    // `fn() -> T` takes `()`, as `|| e` and `f()` do.
                    ps.push(Type::unit());
                }
                let r = self.ann_type_raw(r);
                Type::arrows(ps, r)
            }
            TypeAnn::Tuple(ts) => {
                let ts: Vec<Type> = ts.iter().map(|t| self.ann_type_raw(t)).collect();
                if ts.len() > MAX_TUPLE {
                    self.oversized_tuple = true;
                }
                Type::tuple(ts)
            }
            TypeAnn::Record(fs) => {
                if fs.len() > MAX_TUPLE {
                    self.oversized_tuple = true;
                }
                let mut fs: Vec<(Label, Type)> = fs
                    .iter()
                    .map(|(l, t)| (Label::Name(l.clone()), self.ann_type_raw(t)))
                    .collect();
                fs.sort_by(|a, b| a.0.cmp(&b.0));
                Type::Record(fs)
            }
            // The parser expands struct names; one left here is already reported.
            TypeAnn::Named(_) | TypeAnn::Infer => self.fresh(),
        }
    }

    fn check_tuple_size(&mut self, n: usize, span: SpanRange) {
        if n > MAX_TUPLE {
            self.errors.push(
                Error::new(
                    span,
                    format!("tuples inside `accelerate!` have at most {MAX_TUPLE} fields, this one has {n}"),
                )
                .help("nest tuples to hold more values"),
            );
        }
    }

    fn param_type(&mut self, p: &mut Param) -> Type {
        let t = match &p.ann {
            Some(a) => self.ann_type(&a.clone()),
            None => self.fresh(),
        };
        p.ty = t.clone();
        t
    }

    /// The variables of `types` to quantify: those created inside the binding, unconstrained, and
    /// not reachable from a constrained variable (a tuple known only by its fields stays
    /// monomorphic, and so do the types of those fields).
    fn generalize(&self, types: &[Type]) -> Vec<TyVar> {
        let (mut candidates, mut pinned) = (Vec::new(), Vec::new());
        for t in types {
            self.collect_generalizable(t, false, &mut candidates, &mut pinned);
        }
        let mut out = Vec::new();
        for v in candidates {
            if !pinned.contains(&v) && !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }

    fn collect_generalizable(
        &self,
        t: &Type,
        pinned_here: bool,
        cands: &mut Vec<TyVar>,
        pinned: &mut Vec<TyVar>,
    ) {
        match self.find(t) {
            Type::Var(v) => {
                let info = &self.vars[v.0 as usize];
                match &info.kind {
                    Kind::Any if pinned_here => pinned.push(v),
                    Kind::Any if info.level > self.level => cands.push(v),
                    Kind::Any | Kind::Num | Kind::Eq | Kind::IntNum | Kind::FloatNum => {}
                    Kind::Record(fs) => {
                        if !pinned.contains(&v) {
                            pinned.push(v);
                            for t in fs.values() {
                                self.collect_generalizable(t, true, cands, pinned);
                            }
                        }
                    }
                }
            }
            Type::Seq(a) | Type::Tensor(a) => {
                self.collect_generalizable(&a, pinned_here, cands, pinned)
            }
            Type::Arrow(a, b) => {
                self.collect_generalizable(&a, pinned_here, cands, pinned);
                self.collect_generalizable(&b, pinned_here, cands, pinned);
            }
            Type::Record(fs) => fs
                .iter()
                .for_each(|(_, t)| self.collect_generalizable(t, pinned_here, cands, pinned)),
            Type::Int | Type::Float | Type::Bool => {}
        }
    }

    fn instantiate(&mut self, s: &Scheme) -> (Type, Vec<Type>) {
        if s.vars.is_empty() {
            return (s.ty.clone(), Vec::new());
        }
        let inst: Vec<Type> = s.vars.iter().map(|_| self.fresh()).collect();
        let map: HashMap<TyVar, Type> = s.vars.iter().copied().zip(inst.iter().cloned()).collect();
        (self.subst(&s.ty, &map), inst)
    }

    fn subst(&self, t: &Type, map: &HashMap<TyVar, Type>) -> Type {
        match self.find(t) {
            Type::Var(v) => map.get(&v).cloned().unwrap_or(Type::Var(v)),
            Type::Seq(a) => Type::seq(self.subst(&a, map)),
            Type::Tensor(a) => Type::tensor(self.subst(&a, map)),
            Type::Arrow(a, b) => Type::arrow(self.subst(&a, map), self.subst(&b, map)),
            Type::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(l, t)| (l.clone(), self.subst(t, map)))
                    .collect(),
            ),
            t => t,
        }
    }

    /// Checks an operator written in the source (`a op b`, `-a`: its generic intrinsic applied
    /// to its operands) and returns the operands' type and the result's.
    fn operator(&mut self, i: Intrinsic, args: &mut [Expr], span: SpanRange) -> (Type, Type) {
        let Some(row) = i.operator() else {
            // `-a`, the one unary operator on numbers.
            let tx = match args {
                [x] => self.expr(x),
                _ => self.fresh(),
            };
            if self.constrain(&tx, Kind::Num).is_err() {
                let f = self.shown(&tx);
                self.errors.push(Error::new(
                    span,
                    format!("`-` cannot be applied to `{f}`: it needs a number (i64 or f64)"),
                ));
            }
            return (tx.clone(), tx);
        };
        let [lhs, rhs] = args else {
            return (self.fresh(), self.fresh());
        };
        let tl = self.expr(lhs);
        let tr = self.expr(rhs);
        let sym = row.symbol;
        if let Err(why) = self.unify(&tl, &tr) {
            let (l, r) = (self.shown(&tl), self.shown(&tr));
            let mut err = match why {
                Mismatch::Types => Error::new(
                    span,
                    format!("`{sym}` needs operands of the same type, found `{l}` and `{r}`"),
                ),
                why => self.mismatch(why, rhs.span, &tl, &tr, ""),
            };
            if matches!(
                (&l, &r),
                (Type::Int, Type::Float) | (Type::Float, Type::Int)
            ) {
                err = err.help("convert the i64 operand with `int2float(x)`");
            }
            self.errors.push(err);
        } else {
            let kind = match row.operands {
                Operands::Equality => Kind::Eq,
                Operands::Int => Kind::Any,
                Operands::Numbers => Kind::Num,
            };
            let ok = if row.operands == Operands::Int {
                self.unify(&tl, &Type::Int).is_ok()
            } else {
                self.constrain(&tl, kind.clone()).is_ok()
            };
            if !ok {
                let l = self.shown(&tl);
                let wants = if row.operands == Operands::Int {
                    "i64"
                } else {
                    kind_name(&kind)
                };
                self.errors.push(Error::new(
                    span,
                    format!("`{sym}` cannot be applied to `{l}`: it needs {wants}"),
                ));
            }
        }
        let result = if row.comparison {
            Type::Bool
        } else {
            tl.clone()
        };
        (tl, result)
    }

    fn callee_name(&self, f: &Expr) -> String {
        match &f.kind {
            ExprKind::Intrinsic(i) => format!("`{}`", i.name()),
            ExprKind::Var { ident, .. } => format!("`{}`", ident.name),
            _ => "this function".into(),
        }
    }

    /// Applies a function of type `tf` to arguments, checking each.
    fn apply(
        &mut self,
        callee: &str,
        callee_span: SpanRange,
        mut tf: Type,
        args: &mut [Expr],
        twin: Option<Intrinsic>,
    ) -> Type {
        let total = args.len();
        for (i, arg) in args.iter_mut().enumerate() {
            let ta = self.expr(arg);
            let (param, result) = match self.find(&tf) {
                Type::Arrow(a, b) => (*a, *b),
                Type::Var(v) if matches!(self.vars[v.0 as usize].kind, Kind::Any) => {
                    let (a, b) = (self.fresh(), self.fresh());
                    let _ = self.unify(&tf, &Type::arrow(a.clone(), b.clone()));
                    (a, b)
                }
                other => {
                    let message = if i == 0 {
                        format!(
                            "{callee} is not a function: its type is `{}`",
                            self.shown(&other)
                        )
                    } else {
                        format!(
                            "{callee} takes {i} argument{} but {total} were supplied",
                            if i == 1 { "" } else { "s" }
                        )
                    };
                    let span = if i == 0 { callee_span } else { arg.span };
                    self.errors.push(Error::new(span, message));
                    for a in args.iter_mut().skip(i + 1) {
                        self.expr(a);
                    }
                    return self.fresh();
                }
            };
            if let Err(why) = self.unify(&param, &ta) {
                let mut err = self.mismatch(
                    why,
                    arg.span,
                    &param,
                    &ta,
                    &format!(" as the {} argument of {callee}", ordinal(i)),
                );
                if let Some(t) = twin {
                    let (p, a) = (self.shown(&param), self.shown(&ta));
                    if matches!(
                        (&p, &a),
                        (Type::Int, Type::Float) | (Type::Float, Type::Int)
                    ) {
                        err = err.help(format!("use `{}` for `{a}` values", t.name()));
                    }
                }
                self.errors.push(err);
            }
            tf = result;
        }
        tf
    }

    fn expr(&mut self, e: &mut Expr) -> Type {
        let span = e.span;
        let t = match &mut e.kind {
            ExprKind::Var { ident, inst } => match self.env.get(&ident.id).cloned() {
                Some(s) => {
                    let (t, i) = self.instantiate(&s);
                    *inst = i;
                    t
                }
                None => {
                    let name = self
                        .names
                        .get(ident.id.0 as usize)
                        .cloned()
                        .unwrap_or_default();
                    self.errors.push(Error::new(
                        span,
                        format!("internal error: `{name}` has no type"),
                    ));
                    self.fresh()
                }
            },
            // A number literal has the number type around it: `i64` or `i32`, `f64` or `f32`
            // (defaulting to `i64`, `f64`), so that captured `f32` values are not widened.
            ExprKind::Lit(l) => match l {
                Lit::Int(_) => self.fresh_kind(Kind::IntNum),
                Lit::Float(_) => self.fresh_kind(Kind::FloatNum),
                Lit::Bool(_) => Type::Bool,
                Lit::Unit => Type::unit(),
            },
            ExprKind::Intrinsic(i) => {
                let i = *i;
                let (mut ps, mut r) = i.signature(&mut || self.fresh());
                if i.is_float_math() {
                    // `sqrt(x)` on captured `f32` values computes in `f32`; `f64` by default.
                    let a = self.fresh_kind(Kind::FloatNum);
                    ps.iter_mut().for_each(|p| *p = a.clone());
                    r = a;
                } else if i == Intrinsic::Int2Float {
                    // `int2float(i)` of any integer (`i64` by default, `i32` for captured `i32`
                    // values) is the float type its context wants (`f64` by default).
                    ps[0] = self.fresh_kind(Kind::IntNum);
                    r = self.fresh_kind(Kind::FloatNum);
                } else if i == Intrinsic::FloorFI {
                    ps[0] = self.fresh_kind(Kind::FloatNum);
                } else if i == Intrinsic::TensorGemm {
                    // A dense product of float tensors: `f64` by default, `f32` when the
                    // captured tensors say so.
                    let a = self.fresh_kind(Kind::FloatNum);
                    let t = Type::tensor(a.clone());
                    ps = vec![
                        t.clone(),
                        t.clone(),
                        Type::Bool,
                        t,
                        Type::Bool,
                        a.clone(),
                        a,
                    ];
                }
                let t = Type::arrows(ps, r);
                self.tensor_elements_numeric(&t);
                t
            }
            ExprKind::Lam { params, body } => {
                let ps: Vec<Type> = params.iter_mut().map(|p| self.param_type(p)).collect();
                for p in params.iter() {
                    self.env.insert(
                        p.ident.id,
                        Scheme {
                            vars: Vec::new(),
                            ty: p.ty.clone(),
                        },
                    );
                }
                let r = self.expr(body);
                Type::arrows(ps, r)
            }
            // `a + b`, `-a` as written: the operator's generic intrinsic, checked here with the
            // operator's own messages (users cannot name these intrinsics).
            ExprKind::App { func, args } if matches!(func.kind, ExprKind::Intrinsic(i) if i.is_generic_numeric()) =>
            {
                let ExprKind::Intrinsic(i) = func.kind else {
                    unreachable!("matched above")
                };
                let (operands, result) = self.operator(i, args, span);
                func.ty = Type::arrows(vec![operands; args.len()], result.clone());
                result
            }
            ExprKind::App { func, args } => {
                let tf = self.expr(func);
                let name = self.callee_name(func);
                let twin = match &func.kind {
                    ExprKind::Intrinsic(i) => i.numeric_twin(),
                    _ => None,
                };
                self.apply(&name, func.span, tf, args, twin)
            }
            ExprKind::Let {
                binder,
                value,
                body,
                scheme,
            } => {
                self.level += 1;
                let tv = self.expr(value);
                if let Some(a) = binder.ann.clone() {
                    let ta = self.ann_type(&a);
                    self.expect(&tv, &ta, value.span, " (the type annotated on this `let`)");
                }
                self.level -= 1;
                let vars = if matches!(value.kind, ExprKind::Lam { .. }) {
                    self.generalize(std::slice::from_ref(&tv))
                } else {
                    Vec::new()
                };
                binder.ty = tv.clone();
                *scheme = vars.clone();
                self.env.insert(binder.ident.id, Scheme { vars, ty: tv });
                self.expr(body)
            }
            ExprKind::RecLet { fns, body, scheme } => {
                self.level += 1;
                let mut sigs = Vec::new();
                for f in fns.iter_mut() {
                    let ps: Vec<Type> = f.params.iter_mut().map(|p| self.param_type(p)).collect();
                    let r = match f.ret.clone() {
                        Some(a) => self.ann_type(&a),
                        None => self.fresh(),
                    };
                    f.ty = Type::arrows(ps, r.clone());
                    self.env.insert(
                        f.ident.id,
                        Scheme {
                            vars: Vec::new(),
                            ty: f.ty.clone(),
                        },
                    );
                    sigs.push(r);
                }
                for (f, r) in fns.iter_mut().zip(&sigs) {
                    for p in &f.params {
                        self.env.insert(
                            p.ident.id,
                            Scheme {
                                vars: Vec::new(),
                                ty: p.ty.clone(),
                            },
                        );
                    }
                    let tb = self.expr(&mut f.body);
                    let name = f.ident.name.clone();
                    self.expect(
                        &tb,
                        r,
                        f.body.span,
                        &format!(" (the return type of `{name}`)"),
                    );
                }
                self.level -= 1;
                let types: Vec<Type> = fns.iter().map(|f| f.ty.clone()).collect();
                let vars = self.generalize(&types);
                for f in fns.iter() {
                    self.env.insert(
                        f.ident.id,
                        Scheme {
                            vars: vars.clone(),
                            ty: f.ty.clone(),
                        },
                    );
                }
                *scheme = vars;
                self.expr(body)
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => {
                let ts = self.expr(scrutinee);
                let is_condition = matches!(pat.kind, PatKind::Lit(Lit::Bool(true)));
                if is_condition
                    && matches!(
                        self.shown(&ts),
                        Type::Int
                            | Type::Float
                            | Type::Seq(_)
                            | Type::Tensor(_)
                            | Type::Arrow(..)
                            | Type::Record(_)
                    )
                {
                    let f = self.shown(&ts);
                    self.errors.push(Error::new(
                        scrutinee.span,
                        format!("this condition must be a `bool`, but it is `{f}`"),
                    ));
                } else {
                    self.pat(pat, &ts);
                }
                let tt = self.expr(then);
                let to = self.expr(otherwise);
                if let Err(why) = self.unify(&tt, &to) {
                    let err = self.mismatch(
                        why,
                        otherwise.span,
                        &tt,
                        &to,
                        " (both branches must have the same type)",
                    );
                    self.errors.push(err);
                }
                tt
            }
            ExprKind::Never(_) => self.fresh(),
            ExprKind::Record(fs) => {
                self.check_tuple_size(fs.len(), span);
                fs.sort_by(|a, b| a.0.cmp(&b.0));
                let ts: Vec<(Label, Type)> = fs
                    .iter_mut()
                    .map(|(l, e)| (l.clone(), self.expr(e)))
                    .collect();
                Type::Record(ts)
            }
            ExprKind::Proj { expr, label } => {
                let tr = self.expr(expr);
                let tf = self.fresh();
                let req: BTreeMap<Label, Type> = [(label.clone(), tf.clone())].into();
                if let Type::Var(v) = self.find(&tr) {
                    self.record_spans.entry(v).or_insert(span);
                }
                if let Err(why) = self.constrain(&tr, Kind::Record(req)) {
                    let f = self.shown(&tr);
                    let message = match why {
                        Mismatch::MissingField(l) => format!("`{f}` has no field `{l}`"),
                        _ => {
                            let what = match label {
                                Label::Name(_) => "a record",
                                Label::Index(_) => "a tuple",
                            };
                            format!("`.{label}` needs {what}, but this is `{f}`")
                        }
                    };
                    self.errors.push(Error::new(expr.span, message));
                }
                tf
            }
            ExprKind::Seq(es) => {
                let te = self.fresh();
                for x in es.iter_mut() {
                    let tx = self.expr(x);
                    self.expect(
                        &tx,
                        &te,
                        x.span,
                        " (all elements of a sequence have the same type)",
                    );
                }
                Type::seq(te)
            }
            ExprKind::Keyword { kw, args } => {
                let kw = *kw;
                let (ps, r) = kw.signature(&mut || self.fresh());
                if let (Keyword::Hist, Some(Type::Seq(ix))) = (kw, ps.get(3)) {
                    // `hist`'s bin indices are `i64` or `i32` (the signature's fresh variable).
                    let _ = self.constrain(ix, Kind::IntNum);
                }
                let name = format!("`{}`", kw.name());
                self.apply(&name, span, Type::arrows(ps, r), args, None)
            }
        };
        e.ty = t.clone();
        t
    }

    fn pat(&mut self, p: &mut Pat, t: &Type) {
        p.ty = t.clone();
        match &mut p.kind {
            PatKind::Wild => {}
            PatKind::Bind(i) => {
                self.env.insert(
                    i.id,
                    Scheme {
                        vars: Vec::new(),
                        ty: t.clone(),
                    },
                );
            }
            PatKind::Lit(l) => {
                let tl = match l {
                    Lit::Int(_) => self.fresh_kind(Kind::IntNum),
                    Lit::Float(_) => self.fresh_kind(Kind::FloatNum),
                    Lit::Bool(_) => Type::Bool,
                    Lit::Unit => Type::unit(),
                };
                self.expect(t, &tl, p.span, " (the type of the value matched)");
            }
            PatKind::Record(fs) if matches!(fs.first(), Some((Label::Name(_), _))) => {
                // A struct pattern names the fields it binds: the struct is found like the one of
                // a value used through its fields.
                let ts: Vec<(Label, Type)> =
                    fs.iter().map(|(l, _)| (l.clone(), self.fresh())).collect();
                if let Type::Var(v) = self.find(t) {
                    self.record_spans.entry(v).or_insert(p.span);
                }
                let req: BTreeMap<Label, Type> = ts.iter().cloned().collect();
                if let Err(why) = self.constrain(t, Kind::Record(req)) {
                    let f = self.shown(t);
                    let message = match why {
                        Mismatch::MissingField(l) => format!("`{f}` has no field `{l}`"),
                        _ => format!("this pattern matches a record, but the value is `{f}`"),
                    };
                    self.errors.push(Error::new(p.span, message));
                }
                for ((_, sub), (_, ts)) in fs.iter_mut().zip(ts) {
                    self.pat(sub, &ts);
                }
            }
            PatKind::Record(fs) => {
                self.check_tuple_size(fs.len(), p.span);
                let ts: Vec<(Label, Type)> =
                    fs.iter().map(|(l, _)| (l.clone(), self.fresh())).collect();
                let mut sorted = ts.clone();
                sorted.sort_by(|a, b| a.0.cmp(&b.0));
                let tr = Type::Record(sorted);
                // On a mismatch the variables still get (unknown) types, so that their uses do not
                // produce follow-on errors.
                self.expect(t, &tr, p.span, " (the type of the value matched)");
                for ((_, sub), (_, ts)) in fs.iter_mut().zip(ts) {
                    self.pat(sub, &ts);
                }
            }
        }
    }

    /// Defaults what is still unknown and writes the final types into the tree: a tuple known only
    /// by its projections becomes the smallest tuple with those fields; a numeric variable that a
    /// captured value's type contains is kept (the Rust value fixes it); any other numeric variable
    /// becomes `i64`. Returns the kept numeric variables.
    fn finish(&mut self, e: &mut Expr, captured: &[Type]) -> Vec<(TyVar, Numeric)> {
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
        let mut reachable = Vec::new();
        for t in captured {
            self.vars_of(&self.zonk(t), &mut reachable);
        }
        let mut kept = Vec::new();
        for i in 0..self.vars.len() {
            if self.vars[i].binding.is_some() {
                continue;
            }
            let v = TyVar(i as u32);
            let (numeric, default) = match self.vars[i].kind {
                Kind::Num => (Numeric::Num, Type::Int),
                Kind::Eq => (Numeric::Scalar, Type::Int),
                Kind::IntNum => (Numeric::Int, Type::Int),
                Kind::FloatNum => (Numeric::Float, Type::Float),
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
        for i in 0..self.vars.len() {
            self.compress(&Type::Var(TyVar(i as u32)));
        }
        if self.check_type_sizes(e) {
            self.zonk_expr(e);
        }
        kept
    }

    fn vars_of(&self, t: &Type, out: &mut Vec<TyVar>) {
        match t {
            Type::Var(v) => out.push(*v),
            Type::Seq(a) | Type::Tensor(a) => self.vars_of(a, out),
            Type::Arrow(a, b) => {
                self.vars_of(a, out);
                self.vars_of(b, out);
            }
            Type::Record(fs) => fs.iter().for_each(|(_, t)| self.vars_of(t, out)),
            Type::Int | Type::Float | Type::Bool => {}
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

    /// A captured variable must have a type that marshaling knows: ground, with no functions, and
    /// tensors of `i64` or `f64`.
    fn check_captured(&mut self, fv: &FreeVar, t: &Type, numeric: &[TyVar]) {
        let span = fv.uses[0];
        let name = &fv.name;
        if t.has_arrow() {
            self.errors.push(
                Error::new(span, format!("`{name}` is used as a function, but `accelerate!` cannot capture Rust functions or closures"))
                    .help(format!("define `{name}` inside the accelerated expression, with `let {name} = |…| …;` or a `fn` item")),
            );
        } else if self.unknown(t, numeric) {
            let mut err = Error::new(
                span,
                format!(
                    "cannot infer the type of `{name}`, which is captured from the enclosing Rust code"
                ),
            );
            err = if matches!(t, Type::Var(_)) {
                err.help(format!(
                    "nothing in the expression fixes its type; annotate it at the start of the `accelerate!` body, e.g. `let {name}: i64 = {name};`"
                ))
            } else {
                err.help(format!(
                    "it is a `{t}`; annotate it at the start of the `accelerate!` body, e.g. `let {name}: {} = {name};`",
                    t.to_string().replace('_', "i64")
                ))
            };
            self.errors.push(err);
        } else if let Some(bad) = bad_tensor(t) {
            self.errors.push(Error::new(
                span,
                format!("`{name}` is used as a `{bad}`, but tensors hold i64 or f64"),
            ));
        }
    }

    /// Whether `t` has a type variable that no captured value fixes.
    fn unknown(&self, t: &Type, numeric: &[TyVar]) -> bool {
        let mut vs = Vec::new();
        self.vars_of(t, &mut vs);
        vs.iter().any(|v| !numeric.contains(v))
    }

    fn check_result(&mut self, e: &Expr, numeric: &[TyVar]) {
        let t = &e.ty;
        if t.has_arrow() {
            self.errors.push(
                Error::new(
                    e.span,
                    format!("`accelerate!` cannot return a function (this expression is a `{t}`)"),
                )
                .help("apply the function inside the accelerated expression"),
            );
        } else if self.unknown(t, numeric) {
            self.errors.push(
                Error::new(
                    e.span,
                    format!(
                        "cannot infer the type of the result, `{t}`: no captured value fixes the `_`, so no Rust type exists for it (the value is made inside the expression)"
                    ),
                )
                .help("annotate it inside the expression, e.g. `{ let r: Vec<i64> = …; r }`"),
            );
        } else if let Some(bad) = bad_tensor(t) {
            self.errors.push(Error::new(
                e.span,
                format!("the result is a `{bad}`, but tensors hold i64 or f64"),
            ));
        }
    }
}

fn bad_tensor(t: &Type) -> Option<Type> {
    match t {
        Type::Tensor(e) if !matches!(**e, Type::Int | Type::Float | Type::Var(_)) => {
            Some(t.clone())
        }
        Type::Seq(a) | Type::Tensor(a) => bad_tensor(a),
        Type::Record(fs) => fs.iter().find_map(|(_, t)| bad_tensor(t)),
        Type::Arrow(a, b) => bad_tensor(a).or_else(|| bad_tensor(b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ordinals() {
        let shown: Vec<String> = [0, 1, 2, 3, 10, 11, 12, 20, 21, 22, 100, 110, 111, 112]
            .into_iter()
            .map(super::ordinal)
            .collect();
        assert_eq!(
            shown,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd",
                "101st", "111th", "112th", "113th"
            ]
        );
    }

    use super::*;
    use crate::parse::parse_tokens;
    use crate::resolve::resolve;
    use quote::quote;

    fn typed(tokens: proc_macro2::TokenStream) -> Typed {
        infer(resolve(parse_tokens(tokens).unwrap()).unwrap())
            .unwrap_or_else(|e| panic!("{}", e[0].text()))
    }

    fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
        infer(resolve(parse_tokens(tokens).unwrap()).unwrap())
            .expect_err("should fail")
            .iter()
            .map(|e| e.text())
            .collect()
    }

    fn captured(tokens: proc_macro2::TokenStream) -> Vec<String> {
        typed(tokens)
            .free_var_types
            .iter()
            .map(|t| t.to_string())
            .collect()
    }

    #[test]
    fn captured_types_come_from_use() {
        assert_eq!(
            captured(quote!({
                let f = |x| muli(c, x);
                reduce(addi, 0, map(f, s))
            })),
            ["i64", "Vec<i64>"]
        );
        assert_eq!(captured(quote!(map2(addf, a, b))), ["Vec<f64>", "Vec<f64>"]);
        assert_eq!(
            captured(quote!(par_loop(n, |i| tensor_set(
                t,
                [i],
                tensor_get(t, [i]) * 2.0
            )))),
            // A float tensor: `Tensor<f64>` or `Tensor<f32>`, as the captured tensor says.
            ["i64", "Tensor<_>"]
        );
        let typed =
            infer(resolve(parse_tokens(quote!(map(|x| x * 2.0, s))).unwrap()).unwrap()).unwrap();
        assert_eq!(typed.free_var_types[0].to_string(), "Vec<_>");
        assert!(matches!(typed.numeric.as_slice(), [(_, Numeric::Float)]));
        // Not captured: the literal's default.
        assert_eq!(
            infer(resolve(parse_tokens(quote!(2.5 * 2.0)).unwrap()).unwrap())
                .unwrap()
                .expr
                .ty,
            Type::Float
        );
        assert_eq!(
            captured(quote!(reduce(addf, 0.0, flatten(m)))),
            ["Vec<Vec<f64>>"]
        );
    }

    #[test]
    fn let_polymorphism() {
        let t = typed(quote!({
            let id = |x| x;
            (id(1), id(true), id([1.5]))
        }));
        assert_eq!(t.expr.ty.to_string(), "(i64, bool, Vec<f64>)");
    }

    #[test]
    fn recursive_functions() {
        let t = typed(quote!({
            fn fact(n: i64) -> i64 {
                if n <= 1 { 1 } else { n * fact(n - 1) }
            }
            fact(5)
        }));
        assert_eq!(t.expr.ty, Type::Int);
        let t = typed(quote!({
            fn len(s: _) -> i64 {
                if null(s) { 0 } else { 1 + len(tail(s)) }
            }
            (len([1]), len([true]))
        }));
        assert_eq!(t.expr.ty.to_string(), "(i64, i64)");
    }

    #[test]
    fn operators_default_to_i64_and_follow_use() {
        assert_eq!(
            typed(quote!({
                let add = |x, y| x + y;
                add(1.5, 2.0)
            }))
            .expr
            .ty,
            Type::Float
        );
        assert_eq!(
            typed(quote!({
                let sq = |x| x * x;
                3
            }))
            .expr
            .ty,
            Type::Int
        );
        assert_eq!(typed(quote!(1.0 < 2.0)).expr.ty, Type::Bool);
    }

    #[test]
    fn tuples_and_projection() {
        assert_eq!(
            typed(quote!({
                let p = (1, 2.5);
                p.1
            }))
            .expr
            .ty,
            Type::Float
        );
        assert_eq!(
            typed(quote!({
                let (a, b) = (1, true);
                if b { a } else { 0 }
            }))
            .expr
            .ty,
            Type::Int
        );
        assert_eq!(
            captured(quote!({
                let q: (i64, f64) = p;
                q.0
            })),
            ["(i64, f64)"]
        );
    }

    #[test]
    fn intrinsic_argument_mismatch() {
        let e = errors(quote!(addi(1, 2.0)));
        assert_eq!(
            e,
            [
                "mismatched types: expected `i64`, found `f64` as the 2nd argument of `addi`\nhelp: use `addf` for `f64` values"
            ]
        );
    }

    #[test]
    fn not_a_function_and_arity() {
        assert_eq!(
            errors(quote!({
                let x = 1;
                x(2)
            })),
            ["`x` is not a function: its type is `i64`"]
        );
        assert_eq!(
            errors(quote!(addi(1, 2, 3))),
            ["`addi` takes 2 arguments but 3 were supplied"]
        );
    }

    #[test]
    fn open_element_types_of_captures_are_kept() {
        // rustc knows the element type: it stays open, for the captured value to fix.
        let t = typed(quote!(length(s)));
        assert_eq!(t.free_var_types[0].to_string(), "Vec<_>");
        assert!(matches!(t.numeric[..], [(_, Numeric::Open)]));
        let t = typed(quote!(map(|p| (p.1, p.0), reverse(s))));
        assert_eq!(t.numeric.len(), 2, "{:?}", t.numeric);
        assert!(t.numeric.iter().all(|(_, k)| *k == Numeric::Open));
        // A number used in arithmetic stays a number beside an open type.
        let t = typed(quote!(map2(|x, y| (y, x + x), a, b)));
        let kinds: Vec<Numeric> = t.numeric.iter().map(|(_, k)| *k).collect();
        assert!(
            kinds.contains(&Numeric::Num) && kinds.contains(&Numeric::Open),
            "{kinds:?}"
        );
        assert_eq!(
            captured(quote!({
                let s: Vec<bool> = s;
                length(s)
            })),
            ["Vec<bool>"]
        );
    }

    #[test]
    fn a_type_no_rust_value_fixes_asks_for_annotation() {
        // The result is made inside the expression: no Rust type exists for its elements.
        let e = errors(quote!(map(|x| x, [])));
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with("cannot infer the type of the result"),
            "{}",
            e[0]
        );
        assert!(e[0].contains("no captured value fixes"), "{}", e[0]);
        assert!(e[0].contains("let r: Vec<i64>"), "{}", e[0]);
        // Made and consumed inside: nothing depends on it, so nothing is asked.
        typed(quote!(length([])));
    }

    #[test]
    fn functions_cannot_be_captured_or_returned() {
        assert!(errors(quote!(map(f, s)))[0].contains("cannot capture Rust functions"));
        assert!(errors(quote!(|x| x + 1))[0].contains("cannot return a function"));
    }

    #[test]
    fn operator_mismatch() {
        let e = errors(quote!(1 + 2.0));
        assert_eq!(
            e,
            [
                "`+` needs operands of the same type, found `i64` and `f64`\nhelp: convert the i64 operand with `int2float(x)`"
            ]
        );
        assert!(errors(quote!([1] + [2]))[0].contains("`+` cannot be applied to `Vec<i64>`"));
        assert!(
            errors(quote!(if 1 { 2 } else { 3 }))[0]
                .contains("this condition must be a `bool`, but it is `i64`")
        );
    }
}
