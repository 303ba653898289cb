//! Monomorphization and normalization: the typed program with every type ground, ready for code
//! generation.
//!
//! - A polymorphic `let`-bound lambda or `fn` group is copied once per distinct instantiation used
//!   (unused ones disappear); every type variable left is one no value depends on and becomes `()`.
//! - Operators on `i64`, `f64` and `bool` become the intrinsics of their operand type (`+` on
//!   `f64` is `addf`); the bit operators, and operators on other numbers, stay generic.
//! - Application spines are flattened (`f(a)(b)` is `f(a, b)`), directly nested lambdas merged
//!   (`|x| |y| e` is `|x, y| e`), and an intrinsic that is not applied to all its arguments is
//!   eta-expanded into a lambda, so that code generation sees intrinsics only fully applied.

use std::collections::HashMap;

use crate::ast::{Expr, ExprKind, FnDef, IdMap, Ident, Param, Pat, PatKind, VarId};
use crate::infer::{Numeric, Typed};
use crate::intrinsics::Intrinsic;
use crate::resolve::FreeVar;
use crate::types::{TyVar, Type};

/// A monomorphic, normalized program.
#[derive(Debug, Clone)]
pub struct Mono {
    /// The expression: ground types only (but the number type variables in `numeric`); no
    /// operators but the generic ones (`__num_*`: on Rust's numbers other than `i64`, `f64` and
    /// `bool`, on numbers the captured values fix, and the bit operators); intrinsics only fully
    /// applied.
    pub expr: Expr,
    /// The captured variables, in order of first use.
    pub free_vars: Vec<FreeVar>,
    /// Their types.
    pub free_var_types: Vec<Type>,
    /// The numeric type variables fixed by the captured values: the only variables left.
    pub numeric: Vec<(TyVar, Numeric)>,
    /// The name of every identifier, copies included.
    pub names: Vec<String>,
    /// How many nodes `expr` has: they are numbered `0..nodes` ([`crate::ast::NodeId`]), each
    /// copy of a polymorphic function with its own.
    pub nodes: u32,
}

/// Monomorphizes and normalizes a typed program.
pub fn monomorphize(typed: Typed) -> Mono {
    let Typed {
        expr,
        free_vars,
        free_var_types,
        numeric,
        names,
    } = typed;
    let mut base = Subst::new();
    for (v, _) in &numeric {
        base.insert(*v, Type::Var(*v));
    }
    let mut m = Monomorphizer {
        names,
        groups: Vec::new(),
        poly: IdMap::default(),
        current: IdMap::default(),
    };
    let mut expr = m.expr(&expr, &base);
    let mut nodes = 0;
    expr.number_nodes(&mut nodes);
    Mono {
        expr,
        nodes,
        free_vars,
        free_var_types,
        numeric,
        names: m.names,
    }
}

type Subst = HashMap<TyVar, Type>;

struct Group {
    scheme: Vec<TyVar>,
    members: Vec<VarId>,
    /// Requested instantiations, in order of first request, with the copies' identifiers.
    instances: Vec<(Vec<Type>, Vec<VarId>)>,
}

struct Monomorphizer {
    names: Vec<String>,
    groups: Vec<Group>,
    /// Polymorphic binding → (group, position in the group).
    poly: IdMap<(usize, usize)>,
    /// Inside a copy of a group: the original identifiers → the copy's.
    current: IdMap<VarId>,
}

fn ground(t: &Type, s: &Subst) -> Type {
    match t {
        Type::Var(v) => s.get(v).cloned().unwrap_or_else(Type::unit),
        Type::Num(_) => t.clone(),
        Type::Seq(a) => Type::seq(ground(a, s)),
        Type::Tensor(a) => Type::tensor(ground(a, s)),
        Type::Arrow(a, b) => Type::arrow(ground(a, s), ground(b, s)),
        Type::Record(fs) => {
            Type::Record(fs.iter().map(|(l, t)| (l.clone(), ground(t, s))).collect())
        }
    }
}

impl Monomorphizer {
    fn fresh(&mut self, name: &str) -> VarId {
        let id = VarId(self.names.len() as u32);
        self.names.push(name.to_string());
        id
    }

    fn var(&self, id: VarId, name: &str, e: &Expr, ty: Type) -> Expr {
        Expr::typed(
            ExprKind::Var {
                ident: Ident {
                    name: name.to_string(),
                    id,
                    span: e.span,
                },
                inst: Vec::new(),
            },
            e.span,
            ty,
        )
    }

    fn param(&self, p: &Param, s: &Subst) -> Param {
        Param {
            ident: p.ident.clone(),
            ann: None,
            ty: ground(&p.ty, s),
        }
    }

    fn pat(&self, p: &Pat, s: &Subst) -> Pat {
        let kind = match &p.kind {
            PatKind::Record(fs) => PatKind::Record(
                fs.iter()
                    .map(|(l, p)| (l.clone(), self.pat(p, s)))
                    .collect(),
            ),
            k => k.clone(),
        };
        Pat {
            kind,
            span: p.span,
            ty: ground(&p.ty, s),
        }
    }

    /// The copy of polymorphic binding `x` for the instantiation `inst` (already ground).
    fn instance(&mut self, x: VarId, inst: Vec<Type>) -> VarId {
        let (g, pos) = self.poly[&x];
        if let Some((_, ids)) = self.groups[g].instances.iter().find(|(i, _)| *i == inst) {
            return ids[pos];
        }
        let members = self.groups[g].members.clone();
        let ids: Vec<VarId> = members
            .iter()
            .map(|m| {
                let name = self.names[m.0 as usize].clone();
                self.fresh(&name)
            })
            .collect();
        self.groups[g].instances.push((inst, ids.clone()));
        ids[pos]
    }

    fn expr(&mut self, e: &Expr, s: &Subst) -> Expr {
        let ty = ground(&e.ty, s);
        let kind = match &e.kind {
            ExprKind::Var { ident, inst } => {
                let id = if let Some(&copy) = self.current.get(&ident.id) {
                    copy
                } else if self.poly.contains_key(&ident.id) {
                    let inst = inst.iter().map(|t| ground(t, s)).collect();
                    self.instance(ident.id, inst)
                } else {
                    ident.id
                };
                ExprKind::Var {
                    ident: Ident {
                        id,
                        ..ident.clone()
                    },
                    inst: Vec::new(),
                }
            }
            ExprKind::Intrinsic(_) => return self.saturate(e, ty, Vec::new(), s),
            ExprKind::Lit(l) => ExprKind::Lit(*l),
            ExprKind::Never(k) => ExprKind::Never(*k),
            ExprKind::Lam { params, body } => {
                let mut params: Vec<Param> = params.iter().map(|p| self.param(p, s)).collect();
                let mut body = self.expr(body, s);
                if let ExprKind::Lam {
                    params: inner,
                    body: inner_body,
                } = body.kind
                {
                    params.extend(inner);
                    body = *inner_body;
                }
                ExprKind::Lam {
                    params,
                    body: Box::new(body),
                }
            }
            ExprKind::App { func, args } => {
                let mut args: Vec<Expr> = args.iter().map(|a| self.expr(a, s)).collect();
                let mut func = &**func;
                // Flatten the spine: f(a)(b) is f(a, b).
                let mut prefix = Vec::new();
                while let ExprKind::App { func: f, args: a } = &func.kind {
                    prefix.push(a);
                    func = f;
                }
                let mut all = Vec::new();
                for a in prefix.into_iter().rev() {
                    all.extend(a.iter().map(|a| self.expr(a, s)));
                }
                all.append(&mut args);
                if let ExprKind::Intrinsic(_) = func.kind {
                    return self
                        .saturate(func, ground(&func.ty, s), all, s)
                        .with_span(e.span);
                }
                let func = self.expr(func, s);
                ExprKind::App {
                    func: Box::new(func),
                    args: all,
                }
            }
            ExprKind::Let {
                binder,
                value,
                body,
                scheme,
            } if !scheme.is_empty() => {
                let g = self.groups.len();
                self.groups.push(Group {
                    scheme: scheme.clone(),
                    members: vec![binder.ident.id],
                    instances: Vec::new(),
                });
                self.poly.insert(binder.ident.id, (g, 0));
                let mut result = self.expr(body, s);
                let instances = std::mem::take(&mut self.groups[g].instances);
                for (inst, ids) in instances.into_iter().rev() {
                    let mut s2 = s.clone();
                    s2.extend(self.groups[g].scheme.iter().copied().zip(inst));
                    let value = self.expr(value, &s2);
                    let mut b = self.param(binder, &s2);
                    b.ident.id = ids[0];
                    let span = e.span;
                    result = Expr::typed(
                        ExprKind::Let {
                            binder: b,
                            value: Box::new(value),
                            body: Box::new(result),
                            scheme: Vec::new(),
                        },
                        span,
                        ty.clone(),
                    );
                }
                return result;
            }
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => ExprKind::Let {
                binder: self.param(binder, s),
                value: Box::new(self.expr(value, s)),
                body: Box::new(self.expr(body, s)),
                scheme: Vec::new(),
            },
            ExprKind::RecLet { fns, body, scheme } if !scheme.is_empty() => {
                let g = self.groups.len();
                let members: Vec<VarId> = fns.iter().map(|f| f.ident.id).collect();
                for (i, m) in members.iter().enumerate() {
                    self.poly.insert(*m, (g, i));
                }
                self.groups.push(Group {
                    scheme: scheme.clone(),
                    members: members.clone(),
                    instances: Vec::new(),
                });
                let body = self.expr(body, s);
                let instances = std::mem::take(&mut self.groups[g].instances);
                if instances.is_empty() {
                    return body;
                }
                let mut out = Vec::new();
                for (inst, ids) in instances {
                    let mut s2 = s.clone();
                    s2.extend(self.groups[g].scheme.iter().copied().zip(inst));
                    let saved: Vec<(VarId, Option<VarId>)> = members
                        .iter()
                        .zip(&ids)
                        .map(|(m, c)| (*m, self.current.insert(*m, *c)))
                        .collect();
                    for (f, id) in fns.iter().zip(&ids) {
                        let mut d = self.fn_def(f, &s2);
                        d.ident.id = *id;
                        out.push(d);
                    }
                    for (m, old) in saved {
                        match old {
                            Some(o) => self.current.insert(m, o),
                            None => self.current.remove(&m),
                        };
                    }
                }
                ExprKind::RecLet {
                    fns: out,
                    body: Box::new(body),
                    scheme: Vec::new(),
                }
            }
            ExprKind::RecLet { fns, body, .. } => ExprKind::RecLet {
                fns: fns.iter().map(|f| self.fn_def(f, s)).collect(),
                body: Box::new(self.expr(body, s)),
                scheme: Vec::new(),
            },
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => ExprKind::Match {
                scrutinee: Box::new(self.expr(scrutinee, s)),
                pat: self.pat(pat, s),
                then: Box::new(self.expr(then, s)),
                otherwise: Box::new(self.expr(otherwise, s)),
            },
            ExprKind::Record(fs) => ExprKind::Record(
                fs.iter()
                    .map(|(l, e)| (l.clone(), self.expr(e, s)))
                    .collect(),
            ),
            ExprKind::Proj { expr, label } => ExprKind::Proj {
                expr: Box::new(self.expr(expr, s)),
                label: label.clone(),
            },
            ExprKind::Seq(es) => ExprKind::Seq(es.iter().map(|e| self.expr(e, s)).collect()),
            ExprKind::Keyword { kw, args } => ExprKind::Keyword {
                kw: *kw,
                args: args.iter().map(|a| self.expr(a, s)).collect(),
            },
            // Made by the optimizer, after monomorphization; copied part by part all the same.
            ExprKind::Soac(soac) => {
                let mut copy = (**soac).clone();
                copy.parts_mut(&mut |x| *x = self.expr(x, s));
                ExprKind::Soac(Box::new(copy))
            }
            // Lowered before resolution, which reports one that was not.
            ExprKind::Imp(i) => {
                let mut copy = (**i).clone();
                copy.parts_mut(&mut |x| *x = self.expr(x, s));
                ExprKind::Imp(Box::new(copy))
            }
        };
        Expr::typed(kind, e.span, ty)
    }

    fn fn_def(&mut self, f: &FnDef, s: &Subst) -> FnDef {
        FnDef {
            ident: f.ident.clone(),
            params: f.params.iter().map(|p| self.param(p, s)).collect(),
            ret: None,
            body: self.expr(&f.body, s),
            span: f.span,
            ty: ground(&f.ty, s),
            item: f.item.clone(),
        }
    }

    /// An intrinsic applied to `args` (already monomorphic): fully applied as it is, otherwise
    /// wrapped in a lambda for the missing arguments, the given ones evaluated once, before.
    fn saturate(&mut self, f: &Expr, fty: Type, args: Vec<Expr>, _s: &Subst) -> Expr {
        let ExprKind::Intrinsic(i) = f.kind else {
            unreachable!("saturate is called on intrinsics")
        };
        let arity = i.arity();
        let (params, ret) = fty.split_arrows(arity);
        let (params, ret): (Vec<Type>, Type) = (params.into_iter().cloned().collect(), ret.clone());
        // An operator as written (`a + b`, `-a`) becomes the intrinsic of its operands' type
        // (`+` on `f64` is `addf`); on a number whose type the captured values fix, or another
        // of Rust's numbers (`u8`), it stays: the generators compute it in the number's type.
        let i = match params.first() {
            Some(t) if i.is_generic_numeric() && t.is_paper_ground() => {
                i.concrete(*t == Type::FLOAT, *t == Type::BOOL)
            }
            _ => i,
        };
        if i == Intrinsic::SetField
            && args.len() == arity
            && let Some(record) = set_field(&args, &ret, f.span)
        {
            return record;
        }
        let callee = Expr::typed(ExprKind::Intrinsic(i), f.span, fty.clone());
        if args.len() >= arity {
            // `get(fs, i)(x)`: the intrinsic takes its own arguments, its result takes the rest.
            let mut args = args;
            let rest = args.split_off(arity);
            let applied = Expr::typed(
                ExprKind::App {
                    func: Box::new(callee),
                    args,
                },
                f.span,
                ret,
            );
            if rest.is_empty() {
                return applied;
            }
            let result = fty.split_arrows(arity + rest.len()).1.clone();
            return Expr::typed(
                ExprKind::App {
                    func: Box::new(applied),
                    args: rest,
                },
                f.span,
                result,
            );
        }
        // Bind the given arguments, then abstract over the rest.
        let mut lets = Vec::new();
        let mut full = Vec::new();
        for a in args {
            if matches!(a.kind, ExprKind::Var { .. } | ExprKind::Lit(_)) {
                full.push(a);
            } else {
                let id = self.fresh("__arg");
                full.push(self.var(id, "__arg", &a, a.ty.clone()));
                lets.push((id, a));
            }
        }
        let mut lam_params = Vec::new();
        for t in &params[full.len()..] {
            let id = self.fresh("__x");
            let ident = Ident {
                name: "__x".into(),
                id,
                span: f.span,
            };
            full.push(self.var(id, "__x", f, t.clone()));
            lam_params.push(Param {
                ident,
                ann: None,
                ty: t.clone(),
            });
        }
        let body = Expr::typed(
            ExprKind::App {
                func: Box::new(callee),
                args: full,
            },
            f.span,
            ret,
        );
        let lam_ty = Type::arrows(
            lam_params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>(),
            body.ty.clone(),
        );
        let mut out = Expr::typed(
            ExprKind::Lam {
                params: lam_params,
                body: Box::new(body),
            },
            f.span,
            lam_ty,
        );
        for (id, value) in lets.into_iter().rev() {
            let binder = Param {
                ident: Ident {
                    name: "__arg".into(),
                    id,
                    span: value.span,
                },
                ann: None,
                ty: value.ty.clone(),
            };
            let ty = out.ty.clone();
            out = Expr::typed(
                ExprKind::Let {
                    binder,
                    value: Box::new(value),
                    body: Box::new(out),
                    scheme: Vec::new(),
                },
                f.span,
                ty,
            );
        }
        out
    }
}

trait WithSpan {
    fn with_span(self, span: crate::error::SpanRange) -> Self;
}

impl WithSpan for Expr {
    fn with_span(mut self, span: crate::error::SpanRange) -> Self {
        self.span = span;
        self
    }
}

/// `__set_field(r, r.l, v)` (the lowering of `r.l = v`, [`crate::lower`]) as the record it
/// means: every field of `r`'s type read from `r`, but `l`, which is `v`. `r` is a variable or
/// a field of one (the lowering makes it so), read without effects; `None` when the record's
/// fields are not known.
fn set_field(args: &[Expr], ty: &Type, span: crate::error::SpanRange) -> Option<Expr> {
    let [r, field, v] = args else {
        return None;
    };
    let ExprKind::Proj { label, .. } = &field.kind else {
        return None;
    };
    let Type::Record(fields) = ty else {
        return None;
    };
    let items = fields
        .iter()
        .map(|(l, t)| {
            let x = if l == label {
                v.clone()
            } else {
                Expr::typed(
                    ExprKind::Proj {
                        expr: Box::new(r.clone()),
                        label: l.clone(),
                    },
                    span,
                    t.clone(),
                )
            };
            (l.clone(), x)
        })
        .collect();
    Some(Expr::typed(ExprKind::Record(items), span, ty.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::infer;
    use crate::pipeline::parse_tokens;
    use crate::resolve::resolve;
    use quote::quote;

    fn mono(tokens: proc_macro2::TokenStream) -> Mono {
        monomorphize(infer(resolve(parse_tokens(tokens).unwrap()).unwrap()).unwrap())
    }

    fn count(e: &Expr, pred: &mut dyn FnMut(&Expr) -> bool) -> usize {
        let mut n = 0;
        e.walk(&mut |x| {
            if pred(x) {
                n += 1
            }
        });
        n
    }

    fn no_vars(e: &Expr) -> bool {
        count(e, &mut |x| x.ty.has_vars()) == 0
    }

    #[test]
    fn polymorphic_lets_are_copied_per_instance() {
        let m = mono(quote!({
            let id = |x| x;
            (id(1), id(true), id(2))
        }));
        let lets = count(&m.expr, &mut |x| matches!(x.kind, ExprKind::Let { .. }));
        assert_eq!(lets, 2, "one copy for i64, one for bool");
        assert!(no_vars(&m.expr));
    }

    #[test]
    fn unused_polymorphic_functions_disappear() {
        let m = mono(quote!({
            let id = |x| x;
            fn f(x: _) -> _ {
                x
            }
            3
        }));
        assert!(matches!(m.expr.kind, ExprKind::Lit(_)));
    }

    #[test]
    fn recursive_groups_are_copied() {
        let m = mono(quote!({
            fn len(s: _) -> i64 {
                if null(s) { 0 } else { 1 + len(tail(s)) }
            }
            (len([1]), len([true]))
        }));
        let ExprKind::RecLet { fns, .. } = &m.expr.kind else {
            panic!()
        };
        assert_eq!(fns.len(), 2);
        assert_ne!(fns[0].ident.id, fns[1].ident.id);
        assert!(no_vars(&m.expr));
    }

    #[test]
    fn operators_and_partial_intrinsics_are_normalized() {
        let m = mono(quote!((
            1.5 + 2.0,
            -(1 + 2),
            7 % 2,
            1.5 < 2.0,
            true == false,
            reduce(addi, 0, [1]),
            map(addi(1), [2])
        )));
        assert_eq!(
            count(&m.expr, &mut |x| matches!(
                x.kind,
                ExprKind::Intrinsic(i) if i.is_generic_numeric()
            )),
            0
        );
        let mut saturated = true;
        m.expr.walk(&mut |x| {
            if let ExprKind::App { func, args } = &x.kind
                && let ExprKind::Intrinsic(i) = func.kind
            {
                saturated &= args.len() == i.arity();
            }
        });
        assert!(saturated);
        // Every intrinsic is the callee of an application.
        let intrinsics = count(&m.expr, &mut |x| matches!(x.kind, ExprKind::Intrinsic(_)));
        let calls = count(
            &m.expr,
            &mut |x| matches!(&x.kind, ExprKind::App { func, .. } if matches!(func.kind, ExprKind::Intrinsic(_))),
        );
        assert_eq!(intrinsics, calls);
    }
}
