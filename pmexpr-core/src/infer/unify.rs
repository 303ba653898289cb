//! Unification: the substitution (each type variable's binding, level and kind), unification of
//! two types with the occurs check, the kinds that constrain a variable (a number, an equality
//! type, a record with some fields), and the error a failed unification gives.

use std::collections::HashSet;

use super::{Infer, Kind, VarInfo};
use crate::error::{Error, SpanRange};
use crate::types::{Label, Number, TyVar, Type};

/// Why two types do not unify.
pub(super) enum Mismatch {
    Types,
    Infinite,
    Kind(&'static str),
    MissingField(Label),
}

pub(super) fn kind_name(k: &Kind) -> &'static str {
    match k {
        Kind::Any => "any type",
        Kind::Num => "a number (an integer or a float)",
        Kind::IntNum => "an integer",
        Kind::FloatNum => "a floating-point number",
        Kind::Eq => "a number or bool",
        Kind::Bits => "an integer or bool",
        Kind::Record(fs) if matches!(fs.keys().next(), Some(Label::Name(_))) => "a record",
        Kind::Record(_) => "a tuple",
    }
}

impl Infer<'_> {
    pub(super) fn fresh_at(&mut self, level: u32, kind: Kind) -> Type {
        let v = TyVar(self.vars.len() as u32);
        self.vars.push(VarInfo {
            binding: None,
            level,
            kind,
        });
        Type::Var(v)
    }

    pub(super) fn fresh(&mut self) -> Type {
        self.fresh_at(self.level, Kind::Any)
    }

    pub(super) fn fresh_kind(&mut self, kind: Kind) -> Type {
        self.fresh_at(self.level, kind)
    }

    /// Follows bindings at the top of a type.
    pub(super) fn find(&self, t: &Type) -> Type {
        self.find_owned(t.clone())
    }

    /// [`Self::find`] of a type the caller gives up: it is copied only where a variable's
    /// binding replaces it (peeling k parameters off a function's type copied the rest of its
    /// type k times).
    pub(super) fn find_owned(&self, mut t: Type) -> Type {
        while let Type::Var(v) = t {
            match &self.vars[v.0 as usize].binding {
                Some(b) => t = b.clone(),
                None => return t,
            }
        }
        t
    }

    /// Applies the substitution everywhere in a type.
    pub(super) fn zonk(&self, t: &Type) -> Type {
        let mut budget = usize::MAX;
        self.resolve(t, false, &mut budget)
    }

    /// A type as an error message shows it: a number literal whose type is still open shows as
    /// its default (`i64`, `f64`), the type it would get. A type too large to show is cut where
    /// its parts are shared (they show as `_`).
    pub(super) fn shown(&self, t: &Type) -> Type {
        let mut budget = 1_000;
        self.resolve(t, true, &mut budget)
    }

    /// Applies the substitution everywhere in a type; with `literals`, open literal types as
    /// their defaults. Once `budget` parts are written, shared parts stay variables.
    fn resolve(&self, t: &Type, literals: bool, budget: &mut usize) -> Type {
        *budget = budget.saturating_sub(1);
        let t = match t {
            Type::Var(v) if *budget == 0 => return Type::Var(*v),
            t => self.find(t),
        };
        match t {
            Type::Var(v) if literals => match self.vars[v.0 as usize].kind {
                Kind::IntNum => Type::INT,
                Kind::FloatNum => Type::FLOAT,
                _ => Type::Var(v),
            },
            Type::Seq(a) => Type::seq(self.resolve(&a, literals, budget)),
            Type::Tensor(a) => Type::tensor(self.resolve(&a, literals, budget)),
            Type::Arrow(a, b) => Type::arrow(
                self.resolve(&a, literals, budget),
                self.resolve(&b, literals, budget),
            ),
            Type::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(l, t)| (l.clone(), self.resolve(t, literals, budget)))
                    .collect(),
            ),
            t => t,
        }
    }

    /// Whether `v` occurs in `t`; lowers the level of every unbound variable of `t` to `level`.
    /// Each shared part is visited once.
    fn occurs_adjust(&mut self, v: TyVar, t: &Type, level: u32) -> bool {
        self.occurs_in(v, t, level, &mut HashSet::new())
    }

    fn occurs_in(&mut self, v: TyVar, t: &Type, level: u32, seen: &mut HashSet<TyVar>) -> bool {
        match t {
            Type::Var(w) => {
                if *w == v {
                    return true;
                }
                if !seen.insert(*w) {
                    return false;
                }
                let info = &mut self.vars[w.0 as usize];
                if let Some(b) = info.binding.clone() {
                    return self.occurs_in(v, &b, level, seen);
                }
                info.level = info.level.min(level);
                if let Kind::Record(fs) = info.kind.clone() {
                    return fs.values().any(|t| self.occurs_in(v, t, level, seen));
                }
                false
            }
            Type::Seq(a) | Type::Tensor(a) => self.occurs_in(v, a, level, seen),
            Type::Arrow(a, b) => {
                self.occurs_in(v, a, level, seen) || self.occurs_in(v, b, level, seen)
            }
            Type::Record(fs) => fs.iter().any(|(_, t)| self.occurs_in(v, t, level, seen)),
            Type::Num(_) => false,
        }
    }

    /// The last variable on the chain of bindings from `t` that is bound to a type (a shared
    /// part), if any.
    fn shared(&self, t: &Type) -> Option<TyVar> {
        let mut t = t;
        let mut last = None;
        while let Type::Var(v) = t {
            match &self.vars[v.0 as usize].binding {
                Some(b) => {
                    last = Some(*v);
                    t = b;
                }
                None => return None,
            }
        }
        last
    }

    /// Points every variable on the chain of bindings from `t` at the chain's last variable:
    /// path compression, which keeps [`Infer::find`] short (a sequence literal of n elements
    /// otherwise chains n variables). The variable every one stands for does not change.
    pub(super) fn compress(&mut self, t: &Type) {
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

    pub(super) fn unify(&mut self, a: &Type, b: &Type) -> Result<(), Mismatch> {
        if self.unifying == 0 {
            self.unify_memo.clear();
        }
        self.unifying += 1;
        let r = self.unify_parts(a, b);
        self.unifying -= 1;
        r
    }

    fn unify_parts(&mut self, a: &Type, b: &Type) -> Result<(), Mismatch> {
        self.compress(a);
        self.compress(b);
        // Two shared parts are unified once (types are finite: a pair met again was unified).
        if let (Some(x), Some(y)) = (self.shared(a), self.shared(b))
            && (x == y || !self.unify_memo.insert((x, y)))
        {
            return Ok(());
        }
        let (a, b) = (self.find(a), self.find(b));
        match (&a, &b) {
            (Type::Var(v), Type::Var(w)) if v == w => Ok(()),
            (Type::Var(v), _) => self.bind(*v, &b),
            (_, Type::Var(w)) => self.bind(*w, &a),
            (Type::Num(x), Type::Num(y)) if x == y => Ok(()),
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
            (Kind::IntNum | Kind::FloatNum, Type::Var(_), _) => false,
            (Kind::IntNum, Type::Num(n), _) => !n.is_int(),
            (Kind::FloatNum, Type::Num(n), _) => !n.is_float(),
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
    pub(super) fn constrain(&mut self, t: &Type, k: Kind) -> Result<(), Mismatch> {
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
                    (Kind::Bits, Kind::Bits | Kind::Eq) | (Kind::Eq, Kind::Bits) => Kind::Bits,
                    (Kind::Bits, Kind::IntNum | Kind::Num)
                    | (Kind::IntNum | Kind::Num, Kind::Bits) => Kind::IntNum,
                    (Kind::Bits, Kind::FloatNum) | (Kind::FloatNum, Kind::Bits) => {
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
            (Kind::Eq, Type::Num(_)) => Ok(()),
            (Kind::Num, Type::Num(n)) if n.is_arithmetic() => Ok(()),
            (Kind::IntNum, Type::Num(n)) if n.is_int() => Ok(()),
            (Kind::FloatNum, Type::Num(n)) if n.is_float() => Ok(()),
            (Kind::Bits, Type::Num(n)) if n.is_int() || *n == Number::Bool => Ok(()),
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
    pub(super) fn mismatch(
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

    pub(super) fn expect(
        &mut self,
        found: &Type,
        expected: &Type,
        span: SpanRange,
        context: &str,
    ) -> bool {
        match self.unify(expected, found) {
            Ok(()) => true,
            Err(why) => {
                let err = self.mismatch(why, span, expected, found, context);
                self.errors.push(err);
                false
            }
        }
    }
}
