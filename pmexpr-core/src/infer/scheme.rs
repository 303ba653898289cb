//! Let-polymorphism: the variables a binding generalizes (the value restriction, and no variable
//! that a constraint pins), and the instantiation of a scheme at each use.

use std::collections::{HashMap, HashSet};

use super::{Infer, Kind, Scheme, VarInfo};
use crate::types::{TyVar, Type};

/// A type of at most this many parts is copied where it is used; a larger one is shared through a
/// variable bound to it.
const SHARED_PARTS: usize = 64;

impl Infer<'_> {
    /// The variables of `types` to quantify: those created inside the binding, unconstrained, and
    /// not reachable from a constrained variable (a tuple known only by its fields stays
    /// monomorphic, and so do the types of those fields). Each shared part is visited once.
    pub(super) fn generalize(&mut self, types: &[Type]) -> Vec<TyVar> {
        let mut walk = Generalizable::default();
        for t in types {
            self.collect_generalizable(t, false, &mut walk);
        }
        let mut out = Vec::new();
        let mut taken = HashSet::new();
        for v in walk.candidates {
            if !walk.pinned.contains(&v) && taken.insert(v) {
                out.push(v);
            }
        }
        out
    }

    /// The walk of [`Self::generalize`]. Chains of bindings are compressed as they are followed:
    /// `f_i = |y| f_(i-1)(y)` binds each parameter to the next, and walking the chain again at
    /// each of k bindings cost k².
    fn collect_generalizable(&mut self, t: &Type, pinned_here: bool, walk: &mut Generalizable) {
        match t {
            Type::Var(v) => {
                if !walk.seen.insert((*v, pinned_here)) {
                    return;
                }
                self.compress(t);
                let i = v.0 as usize;
                match &self.vars[i].binding {
                    Some(Type::Var(w)) => {
                        let w = Type::Var(*w);
                        return self.collect_generalizable(&w, pinned_here, walk);
                    }
                    Some(_) => {
                        // Taken out while its parts are walked (the occurs check keeps `v` out
                        // of them), so that the walk can compress the chains inside.
                        let b = self.vars[i].binding.take();
                        if let Some(b) = &b {
                            self.collect_generalizable(b, pinned_here, walk);
                        }
                        self.vars[i].binding = b;
                        return;
                    }
                    None => {}
                }
                let info = &self.vars[i];
                match &info.kind {
                    Kind::Any if pinned_here => {
                        walk.pinned.insert(*v);
                    }
                    Kind::Any if info.level > self.level => walk.candidates.push(*v),
                    Kind::Any
                    | Kind::Num
                    | Kind::Eq
                    | Kind::Bits
                    | Kind::IntNum
                    | Kind::FloatNum => {}
                    Kind::Record(_) => {
                        if walk.pinned.insert(*v) {
                            // Taken out likewise (a field cannot hold the record itself).
                            let kind = std::mem::replace(&mut self.vars[i].kind, Kind::Any);
                            if let Kind::Record(fs) = &kind {
                                for t in fs.values() {
                                    self.collect_generalizable(t, true, walk);
                                }
                            }
                            self.vars[i].kind = kind;
                        }
                    }
                }
            }
            Type::Seq(a) | Type::Tensor(a) => self.collect_generalizable(a, pinned_here, walk),
            Type::Arrow(a, b) => {
                self.collect_generalizable(a, pinned_here, walk);
                self.collect_generalizable(b, pinned_here, walk);
            }
            Type::Record(fs) => fs
                .iter()
                .for_each(|(_, t)| self.collect_generalizable(t, pinned_here, walk)),
            Type::Num(_) => {}
        }
    }

    pub(super) fn instantiate(&mut self, s: &Scheme) -> (Type, Vec<Type>) {
        if s.vars.is_empty() {
            return (s.ty.clone(), Vec::new());
        }
        let inst: Vec<Type> = s.vars.iter().map(|_| self.fresh()).collect();
        let map: HashMap<TyVar, Type> = s.vars.iter().copied().zip(inst.iter().cloned()).collect();
        let t = self.subst(&s.ty, &map, &mut HashMap::new());
        (t.unwrap_or_else(|| s.ty.clone()), inst)
    }

    /// `t` with the variables of `map` replaced, or `None` where it has none of them. A shared
    /// part is copied once, into a variable of its own (so that the copy is shared as the
    /// original was): `memo` holds the copies made.
    fn subst(
        &mut self,
        t: &Type,
        map: &HashMap<TyVar, Type>,
        memo: &mut HashMap<TyVar, Option<Type>>,
    ) -> Option<Type> {
        match t {
            Type::Var(v) => {
                if let Some(r) = map.get(v) {
                    return Some(r.clone());
                }
                if let Some(r) = memo.get(v) {
                    return r.clone();
                }
                let copy = match self.vars[v.0 as usize].binding.clone() {
                    None => None,
                    Some(b) => self.subst(&b, map, memo).map(|c| self.share(c)),
                };
                memo.insert(*v, copy.clone());
                copy
            }
            Type::Seq(a) => self.subst(a, map, memo).map(Type::seq),
            Type::Tensor(a) => self.subst(a, map, memo).map(Type::tensor),
            Type::Arrow(a, b) => {
                let (sa, sb) = (self.subst(a, map, memo), self.subst(b, map, memo));
                if sa.is_none() && sb.is_none() {
                    return None;
                }
                Some(Type::arrow(
                    sa.unwrap_or_else(|| (**a).clone()),
                    sb.unwrap_or_else(|| (**b).clone()),
                ))
            }
            Type::Record(fs) => {
                let subs: Vec<Option<Type>> =
                    fs.iter().map(|(_, t)| self.subst(t, map, memo)).collect();
                if subs.iter().all(Option::is_none) {
                    return None;
                }
                Some(Type::Record(
                    fs.iter()
                        .zip(subs)
                        .map(|((l, t), s)| (l.clone(), s.unwrap_or_else(|| t.clone())))
                        .collect(),
                ))
            }
            Type::Num(_) => None,
        }
    }

    /// `t`, or a variable bound to it when it is large: copies of it are then shared.
    pub(super) fn share(&mut self, t: Type) -> Type {
        if parts_within(&t, &mut SHARED_PARTS.clone()) {
            return t;
        }
        let v = TyVar(self.vars.len() as u32);
        self.vars.push(VarInfo {
            binding: Some(t),
            level: self.level,
            kind: Kind::Any,
        });
        Type::Var(v)
    }
}

/// What [`Infer::generalize`] found so far.
#[derive(Default)]
struct Generalizable {
    candidates: Vec<TyVar>,
    pinned: HashSet<TyVar>,
    /// The variables visited, and whether under a constraint.
    seen: HashSet<(TyVar, bool)>,
}

/// Whether `t` has at most `budget` parts (variables count one, whatever they are bound to).
fn parts_within(t: &Type, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    match t {
        Type::Var(_) | Type::Num(_) => true,
        Type::Seq(a) | Type::Tensor(a) => parts_within(a, budget),
        Type::Arrow(a, b) => parts_within(a, budget) && parts_within(b, budget),
        Type::Record(fs) => fs.iter().all(|(_, t)| parts_within(t, budget)),
    }
}
