//! Accelerated bindings and lambda lifting (paper §4.1, first step of the extraction).
//!
//! The body of an `accelerate!` becomes the *accelerated binding* `a = lam s. lam c. body`, whose
//! parameters are the captured Rust variables. Every function inside it — `let`-bound lambdas, `fn`
//! items, anonymous lambdas, and the `#[pmexpr]` functions the site uses — is lifted to a top-level
//! binding; the variables of non-function type it uses from its surroundings become extra leading
//! parameters, and each use passes them (Listing 2 of the paper: `let f = lam c. lam x. muli c (g x)`
//! and `map (f c) s`). After lifting, the only lambdas left are the outermost ones of top-level
//! bindings, so every function argument of a parallel keyword is a variable or a partial
//! application, as the CUDA well-formedness rules expect.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::ast::{Expr, ExprKind, FnDef, IdMap, IdSet, Ident, ItemRef, Lit, NodeId, Param, VarId};
use crate::error::SpanRange;
use crate::mono::Mono;
use crate::types::Type;

/// Where a top-level binding comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The accelerated binding of the site.
    Site,
    /// A function written inside the site.
    Local,
    /// A `#[pmexpr]` function of the crate (or a function lifted out of one).
    Item(ItemRef),
}

/// One definition of a top-level binding.
#[derive(Debug, Clone)]
pub struct Def {
    /// The bound identifier.
    pub ident: Ident,
    /// The bound value: a lambda for a function.
    pub value: Expr,
    /// Where it comes from.
    pub origin: Origin,
}

impl Def {
    /// The parameters and body of the bound function (none, and the value itself, for a value).
    pub fn lambda(&self) -> (&[Param], &Expr) {
        match &self.value.kind {
            ExprKind::Lam { params, body } => (params, body),
            _ => (&[], &self.value),
        }
    }
}

/// A top-level binding of the lifted program.
// A program has a handful of bindings: boxing the common case would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Binding {
    /// `let x = e in …`
    Let(Def),
    /// `recursive let x1 = e1 … xn = en in …`
    Rec(Vec<Def>),
}

impl Binding {
    /// The definitions of the binding.
    pub fn defs(&self) -> &[Def] {
        match self {
            Binding::Let(d) => std::slice::from_ref(d),
            Binding::Rec(ds) => ds,
        }
    }
}

/// A lambda-lifted program: top-level bindings in dependency order, the last one the accelerated
/// binding. Its in-expression (the sequential Rust code) is not part of it.
#[derive(Debug, Clone)]
pub struct Lifted {
    /// The bindings, each using only the ones before it (or its own group).
    pub bindings: Vec<Binding>,
    /// The identifier of the accelerated binding.
    pub accelerated: VarId,
    /// The captured variables: the parameters of the accelerated binding.
    pub params: Vec<Param>,
    /// The name of every identifier.
    pub names: Vec<String>,
    /// The span of the whole site.
    pub span: SpanRange,
    /// Each extra parameter of a lifted function → the variable of the monomorphic program it
    /// stands for: how host code generated from [`Mono::expr`] evaluates an expression of the
    /// lifted program (a kernel's arguments).
    pub origins: IdMap<VarId>,
}

impl Lifted {
    /// Every definition, by identifier.
    pub fn defs(&self) -> HashMap<VarId, &Def> {
        self.bindings
            .iter()
            .flat_map(|b| b.defs())
            .map(|d| (d.ident.id, d))
            .collect()
    }
}

/// Rewrites a monomorphic site into its accelerated binding and lifted functions.
pub fn lift(mono: &Mono, span: SpanRange) -> Lifted {
    let mut l = Lifter {
        names: mono.names.clone(),
        out: Vec::new(),
        env: IdMap::default(),
        globals: IdSet::default(),
        origin: Origin::Local,
        origins: IdMap::default(),
    };
    let body = l.expr(mono.expr.clone());
    let params: Vec<Param> = mono
        .free_vars
        .iter()
        .zip(&mono.free_var_types)
        .map(|(fv, ty)| Param {
            ident: Ident {
                name: fv.name.clone(),
                id: fv.id,
                span: fv.uses[0],
            },
            ann: None,
            ty: ty.clone(),
        })
        .collect();
    let accelerated = l.fresh("accelerate");
    let value = if params.is_empty() {
        body
    } else {
        let ty = Type::arrows(params.iter().map(|p| p.ty.clone()), body.ty.clone());
        Expr::typed(
            ExprKind::Lam {
                params: params.clone(),
                body: Box::new(body),
            },
            span,
            ty,
        )
    };
    l.out.push(Binding::Let(Def {
        ident: Ident {
            name: "accelerate".into(),
            id: accelerated,
            span,
        },
        value,
        origin: Origin::Site,
    }));
    // The nodes made here get identities past the monomorphic program's.
    let mut next = mono.nodes;
    for b in &mut l.out {
        match b {
            Binding::Let(d) => d.value.number_nodes(&mut next),
            Binding::Rec(ds) => ds.iter_mut().for_each(|d| d.value.number_nodes(&mut next)),
        }
    }
    Lifted {
        bindings: l.out,
        accelerated,
        params,
        names: l.names,
        span,
        origins: l.origins,
    }
}

struct Lifter {
    names: Vec<String>,
    out: Vec<Binding>,
    /// Lifted functions → the variables each use must pass (the extra leading parameters).
    env: IdMap<Vec<Expr>>,
    /// Identifiers of top-level bindings: never extra parameters.
    globals: IdSet,
    /// The origin given to functions lifted now.
    origin: Origin,
    /// Extra parameters → the variables they copy.
    origins: IdMap<VarId>,
}

fn placeholder() -> Expr {
    Expr::typed(
        ExprKind::Lit(Lit::Unit),
        SpanRange::call_site(),
        Type::unit(),
    )
}

impl Lifter {
    fn fresh(&mut self, name: &str) -> VarId {
        self.names.push(name.to_string());
        VarId(self.names.len() as u32 - 1)
    }

    fn expr(&mut self, mut e: Expr) -> Expr {
        if let Some(i) = eta_reduced(&e) {
            return Expr::typed(ExprKind::Intrinsic(i), e.span, e.ty);
        }
        match e.kind {
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } if matches!(value.kind, ExprKind::Lam { .. }) => {
                self.group(vec![(binder.ident, *value)], false, None);
                self.expr(*body)
            }
            ExprKind::RecLet { fns, body, .. } => {
                let item = fns.iter().find_map(|f| f.item.clone());
                let defs = fns.into_iter().map(fn_to_lam).collect();
                self.group(defs, true, item);
                self.expr(*body)
            }
            ExprKind::Lam { .. } => {
                let id = self.fresh("lambda");
                let ident = Ident {
                    name: format!("lambda{}", id.0),
                    id,
                    span: e.span,
                };
                self.names[id.0 as usize] = ident.name.clone();
                let ty = e.ty.clone();
                let span = e.span;
                self.group(vec![(ident.clone(), e)], false, None);
                self.reference(&ident, ty, span)
            }
            ExprKind::Var { ref ident, .. } if self.env.contains_key(&ident.id) => {
                let ident = ident.clone();
                self.reference(&ident, e.ty, e.span)
            }
            ExprKind::App { func, args } => {
                let func = self.expr(*func);
                let args: Vec<Expr> = args.into_iter().map(|a| self.expr(a)).collect();
                // Keep spines flat: `(f c) x` is `f c x`.
                match func.kind {
                    ExprKind::App {
                        func: inner,
                        args: mut first,
                    } => {
                        first.extend(args);
                        e.kind = ExprKind::App {
                            func: inner,
                            args: first,
                        };
                    }
                    kind => {
                        e.kind = ExprKind::App {
                            func: Box::new(Expr {
                                id: func.id,
                                kind,
                                span: func.span,
                                ty: func.ty,
                            }),
                            args,
                        }
                    }
                }
                e
            }
            _ => {
                e.children_mut(&mut |c| {
                    let taken = std::mem::replace(c, placeholder());
                    *c = self.expr(taken);
                });
                e
            }
        }
    }

    /// A use of the lifted function `f`: `f` applied to the variables it needs.
    fn reference(&mut self, f: &Ident, ty: Type, span: SpanRange) -> Expr {
        let extras = self.env[&f.id].clone();
        let full = Type::arrows(extras.iter().map(|x| x.ty.clone()), ty.clone());
        let var = var(f.id, &f.name, full, span);
        if extras.is_empty() {
            var
        } else {
            Expr::typed(
                ExprKind::App {
                    func: Box::new(var),
                    args: extras,
                },
                span,
                ty,
            )
        }
    }

    /// Lifts a group of functions (one `let`-bound lambda, or a recursive group) to the top level.
    fn group(&mut self, defs: Vec<(Ident, Expr)>, recursive: bool, item: Option<ItemRef>) {
        let saved = self.origin.clone();
        if let Some(item) = item {
            self.origin = Origin::Item(item);
        }
        let origin = self.origin.clone();
        // Inner functions first: they are lifted before this group, and uses of them inside become
        // applications to their own extra variables.
        let members: HashSet<VarId> = defs.iter().map(|(i, _)| i.id).collect();
        let mut lams: Vec<(Ident, Expr)> = defs
            .into_iter()
            .map(|(i, lam)| (i, self.lambda_body(lam)))
            .collect();
        // A `fn` item that does not call itself is an ordinary `let`, as the paper writes it:
        // only real recursion is a recursive let (which Futhark rejects).
        let recursive =
            recursive && (lams.len() > 1 || lams[0].1.free_vars().contains(&lams[0].0.id));
        // The extra parameters: every free variable that is neither top-level nor in the group,
        // in identifier order, with the type of its uses.
        let mut extras: BTreeMap<VarId, (String, Type)> = BTreeMap::new();
        for (_, lam) in &lams {
            let free = lam.free_vars();
            lam.walk(&mut |x| {
                if let ExprKind::Var { ident, .. } = &x.kind
                    && free.contains(&ident.id)
                    && !members.contains(&ident.id)
                    && !self.globals.contains(&ident.id)
                {
                    extras
                        .entry(ident.id)
                        .or_insert_with(|| (ident.name.clone(), x.ty.clone()));
                }
            });
        }
        let extra_vars: Vec<Expr> = extras
            .iter()
            .map(|(id, (name, ty))| var(*id, name, ty.clone(), SpanRange::call_site()))
            .collect();
        for (ident, _) in &lams {
            self.env.insert(ident.id, extra_vars.clone());
            self.globals.insert(ident.id);
        }
        let mut out = Vec::new();
        for (ident, lam) in lams.iter_mut() {
            // Fresh copies of the extra parameters for this function (identifiers stay unique).
            let mut rename = HashMap::new();
            let mut params = Vec::new();
            for (id, (name, ty)) in &extras {
                let fresh = self.fresh(name);
                rename.insert(*id, fresh);
                self.origins.insert(fresh, *id);
                params.push(Param {
                    ident: Ident {
                        name: name.clone(),
                        id: fresh,
                        span: SpanRange::call_site(),
                    },
                    ann: None,
                    ty: ty.clone(),
                });
            }
            let mut lam = std::mem::replace(lam, placeholder());
            if !params.is_empty() {
                lam.rename(&mut |id| rename.get(&id).copied().unwrap_or(id));
                // Recursive uses inside the group pass this function's copies.
                let local: HashMap<VarId, Vec<Expr>> = members
                    .iter()
                    .map(|m| {
                        let args = extras
                            .iter()
                            .map(|(id, (name, ty))| {
                                var(rename[id], name, ty.clone(), SpanRange::call_site())
                            })
                            .collect();
                        (*m, args)
                    })
                    .collect();
                apply_members(&mut lam, &local);
                let ExprKind::Lam { params: own, body } = lam.kind else {
                    unreachable!("lifted functions are lambdas")
                };
                params.extend(own);
                let ty = Type::arrows(extras.values().map(|(_, t)| t.clone()), lam.ty);
                lam = Expr::typed(ExprKind::Lam { params, body }, lam.span, ty);
            }
            out.push(Def {
                ident: ident.clone(),
                value: lam,
                origin: origin.clone(),
            });
        }
        self.out.push(if recursive {
            Binding::Rec(out)
        } else {
            Binding::Let(out.pop().expect("one definition"))
        });
        self.origin = saved;
    }

    /// Lifts what is inside a lambda's body, keeping the lambda itself.
    fn lambda_body(&mut self, mut lam: Expr) -> Expr {
        if let ExprKind::Lam { body, .. } = &mut lam.kind {
            let taken = std::mem::replace(&mut **body, placeholder());
            **body = self.expr(taken);
        }
        lam
    }
}

fn var(id: VarId, name: &str, ty: Type, span: SpanRange) -> Expr {
    Expr::typed(
        ExprKind::Var {
            ident: Ident {
                name: name.to_string(),
                id,
                span,
            },
            inst: Vec::new(),
        },
        span,
        ty,
    )
}

/// A `fn` item as the lambda it binds.
fn fn_to_lam(f: FnDef) -> (Ident, Expr) {
    let lam = Expr::typed(
        ExprKind::Lam {
            params: f.params,
            body: Box::new(f.body),
        },
        f.span,
        f.ty,
    );
    (f.ident, lam)
}

/// Replaces the uses of group members `m` by `m extras`, keeping application spines flat.
fn apply_members(e: &mut Expr, members: &HashMap<VarId, Vec<Expr>>) {
    let member = |x: &Expr| match &x.kind {
        ExprKind::Var { ident, .. } => members.get(&ident.id).cloned(),
        _ => None,
    };
    if let ExprKind::App { func, args } = &mut e.kind
        && let Some(extras) = member(func)
    {
        args.iter_mut().for_each(|a| apply_members(a, members));
        func.ty = Type::arrows(extras.iter().map(|x| x.ty.clone()), func.ty.clone());
        args.splice(0..0, extras);
        return;
    }
    e.children_mut(&mut |c| apply_members(c, members));
    if let Some(extras) = member(e) {
        let inner = Expr {
            ty: Type::arrows(extras.iter().map(|x| x.ty.clone()), e.ty.clone()),
            ..e.clone()
        };
        // The use keeps its node; the application around it is a new one.
        e.id = NodeId::UNSET;
        e.kind = ExprKind::App {
            func: Box::new(inner),
            args: extras,
        };
    }
}

/// `|a, b| addi(a, b)` (how monomorphization passes an intrinsic as a value) is the constant
/// `addi` itself, as the paper writes it (`reduce addi 0 s`).
fn eta_reduced(e: &Expr) -> Option<crate::intrinsics::Intrinsic> {
    let ExprKind::Lam { params, body } = &e.kind else {
        return None;
    };
    let ExprKind::App { func, args } = &body.kind else {
        return None;
    };
    let ExprKind::Intrinsic(i) = func.kind else {
        return None;
    };
    let same = args.len() == params.len()
        && args
            .iter()
            .zip(params)
            .all(|(a, p)| matches!(&a.kind, ExprKind::Var { ident, .. } if ident.id == p.ident.id));
    same.then_some(i)
}
