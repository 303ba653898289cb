//! Let-polymorphism: the variables a binding generalizes (the value restriction, and no variable
//! that a constraint pins), and the instantiation of a scheme at each use.

use std::collections::HashMap;

use super::{Infer, Kind, Scheme};
use crate::types::{TyVar, Type};

impl Infer<'_> {
    /// The variables of `types` to quantify: those created inside the binding, unconstrained, and
    /// not reachable from a constrained variable (a tuple known only by its fields stays
    /// monomorphic, and so do the types of those fields).
    pub(super) fn generalize(&self, types: &[Type]) -> Vec<TyVar> {
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

    pub(super) fn instantiate(&mut self, s: &Scheme) -> (Type, Vec<Type>) {
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
}
