//! Folds whose accumulator settles: a `foldl` (fused or not) and a `seq_loop_acc` may stop early
//! once the step function can only return the accumulator unchanged. This is how PMExpr writes a
//! bounded `while` (Mandelbrot's escape test, a convergence test):
//!
//! ```text
//! foldl(|st, _i| { let (zr, zi, n) = st; if zr * zr + zi * zi > 4.0 { st } else { … } },
//!       (0.0, 0.0, 0), create(maxit, |i| i))
//! ```
//!
//! Once the test holds for the accumulator, every later step returns it unchanged, so the loop
//! may stop: the result is the same. The step function must have the shape of [`settled_test`]:
//! its test and the `let`s before it do not read the element, so it is a function of the
//! accumulator alone (PMExpr is pure, so it gives the same answer every time). The elements the
//! loop no longer takes must not be able to fail either (made by functions that are
//! [`infallible`], or a sequence that already exists), so that no runtime error is lost. Which
//! failure is reported when a program fails twice (in the test and in an element) is the fused
//! order's caveat (see [`super::fuse`]).

use std::collections::HashMap;

use crate::ast::{Expr, ExprKind, Form, IdMap, Lit, NodeId, Pat, PatKind, Source, VarId};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::types::{Label, Type};

use super::Ids;

/// The folds of `e` that may stop early, each with its test (`|acc| …`, a lambda of new nodes and
/// binders).
pub fn settled(e: &Expr, ids: &mut Ids) -> HashMap<NodeId, Expr> {
    let mut out = HashMap::new();
    e.walk(&mut |x| {
        let f = match &x.kind {
            ExprKind::Soac(s) => match (&s.form, &s.inputs[..]) {
                (Form::Foldl { f, .. }, [input]) => {
                    let made = match &input.source {
                        Source::Range { g, .. } => infallible(g),
                        Source::Seq(_) | Source::Flat(_) => true,
                    };
                    (made && input.stages.iter().all(|s| infallible(s.func()))).then_some(f)
                }
                _ => None,
            },
            ExprKind::Keyword {
                kw: Keyword::SeqLoopAcc,
                args,
            } => Some(&args[2]),
            _ => None,
        };
        if let Some(mut test) = f.and_then(settled_test) {
            fresh(&mut test, ids);
            out.insert(x.id, test);
        }
    });
    out
}

/// Gives the copy `e` new binders and node ids.
fn fresh(e: &mut Expr, ids: &mut Ids) {
    let mut rename: IdMap<VarId> = IdMap::default();
    e.walk(&mut |x| {
        let mut add = |i: &crate::ast::Ident| {
            rename.insert(i.id, ids.var(&i.name));
        };
        match &x.kind {
            ExprKind::Lam { params, .. } => params.iter().for_each(|p| add(&p.ident)),
            ExprKind::Let { binder, .. } => add(&binder.ident),
            ExprKind::Match { pat, .. } => pat.binders().into_iter().for_each(add),
            ExprKind::RecLet { fns, .. } => {
                for f in fns {
                    add(&f.ident);
                    f.params.iter().for_each(|p| add(&p.ident));
                }
            }
            _ => {}
        }
    });
    e.rename(&mut |id| rename.get(&id).copied().unwrap_or(id));
    ids.renumber(e);
}

/// For a step function `|acc, x| body` whose body is `let`s (or irrefutable destructurings) not
/// reading `x`, then `if c { acc } else { e }` (or `if c { e } else { acc }`) with `c` not
/// reading `x`: the function `|acc| lets; c` (`!c`) that tells whether `acc` has settled. `acc`
/// may also be rebuilt from the fields of a destructuring of it, in order (`(zr, zi, n)` after
/// `let (zr, zi, n) = st`). `None` for any other function. (The copy keeps the nodes' ids.)
pub fn settled_test(f: &Expr) -> Option<Expr> {
    let ExprKind::Lam { params, body } = &f.kind else {
        return None;
    };
    let [acc, x] = params.as_slice() else {
        return None;
    };
    let mut shape = Shape {
        acc: acc.ident.id,
        x: x.ident.id,
        fields: Vec::new(),
    };
    let test = shape.test(body)?;
    let ty = Type::arrow(acc.ty.clone(), Type::BOOL);
    Some(Expr {
        id: f.id,
        kind: ExprKind::Lam {
            params: vec![acc.clone()],
            body: Box::new(test),
        },
        span: f.span,
        ty,
    })
}

/// What the walk of the step function's body knows.
struct Shape {
    /// The accumulator parameter.
    acc: VarId,
    /// The element parameter.
    x: VarId,
    /// The fields of destructurings of the accumulator: each label's variable.
    fields: Vec<Vec<(Label, VarId)>>,
}

impl Shape {
    /// The test of the body `e` (type `Bool`, the same prefix), or `None`.
    fn test(&mut self, e: &Expr) -> Option<Expr> {
        let reads_x = |e: &Expr| e.free_vars().contains(&self.x);
        let with = |kind: ExprKind| {
            Some(Expr {
                id: e.id,
                kind,
                span: e.span,
                ty: Type::BOOL,
            })
        };
        match &e.kind {
            ExprKind::Let {
                binder,
                value,
                body,
                scheme,
            } if !reads_x(value) => with(ExprKind::Let {
                binder: binder.clone(),
                value: value.clone(),
                body: Box::new(self.test(body)?),
                scheme: scheme.clone(),
            }),
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } if pat.irrefutable() && !reads_x(scrutinee) => {
                if matches!(&scrutinee.kind, ExprKind::Var { ident, .. } if ident.id == self.acc)
                    && let PatKind::Record(fs) = &pat.kind
                {
                    let fields = fs
                        .iter()
                        .filter_map(|(l, p)| match &p.kind {
                            PatKind::Bind(i) => Some((l.clone(), i.id)),
                            _ => None,
                        })
                        .collect();
                    self.fields.push(fields);
                }
                with(ExprKind::Match {
                    scrutinee: scrutinee.clone(),
                    pat: pat.clone(),
                    then: Box::new(self.test(then)?),
                    otherwise: otherwise.clone(),
                })
            }
            ExprKind::Match {
                scrutinee,
                pat:
                    Pat {
                        kind: PatKind::Lit(Lit::Bool(true)),
                        ..
                    },
                then,
                otherwise,
            } if !reads_x(scrutinee) => {
                if self.is_acc(then) {
                    Some((**scrutinee).clone())
                } else if self.is_acc(otherwise) {
                    let not = Expr {
                        id: e.id,
                        kind: ExprKind::Intrinsic(Intrinsic::Not),
                        span: e.span,
                        ty: Type::arrow(Type::BOOL, Type::BOOL),
                    };
                    with(ExprKind::App {
                        func: Box::new(not),
                        args: vec![(**scrutinee).clone()],
                    })
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Whether `e` is the accumulator: its variable, or a tuple of the fields of a
    /// destructuring of it, every field in order.
    fn is_acc(&self, e: &Expr) -> bool {
        let var = |e: &Expr| match &e.kind {
            ExprKind::Var { ident, .. } => Some(ident.id),
            _ => None,
        };
        match &e.kind {
            ExprKind::Var { ident, .. } => ident.id == self.acc,
            ExprKind::Record(es) if !es.is_empty() => self.fields.iter().any(|fs| {
                fs.len() == es.len()
                    && matches!(&e.ty, Type::Record(ts) if ts.len() == es.len())
                    && fs
                        .iter()
                        .zip(es)
                        .all(|((l, v), (el, ex))| l == el && var(ex) == Some(*v))
            }),
            _ => false,
        }
    }
}

/// Whether evaluating `e` cannot fail or loop: variables, literals, tuples, fields, and the
/// arithmetic, comparisons and float math that have no error (not division or remainder of
/// integers, `floorfi`, `get` or a call of a function).
pub fn infallible(e: &Expr) -> bool {
    use Intrinsic::*;
    match &e.kind {
        ExprKind::Var { .. } | ExprKind::Lit(_) => true,
        ExprKind::Record(fs) => fs.iter().all(|(_, e)| infallible(e)),
        ExprKind::Proj { expr, .. } => infallible(expr),
        ExprKind::Lam { body, .. } => infallible(body),
        ExprKind::Let { value, body, .. } => infallible(value) && infallible(body),
        ExprKind::Match {
            scrutinee,
            pat,
            then,
            otherwise,
        } => {
            infallible(scrutinee)
                && infallible(then)
                && (pat.irrefutable() || infallible(otherwise))
        }
        ExprKind::App { func, args } => {
            matches!(
                &func.kind,
                ExprKind::Intrinsic(
                    AddI | SubI
                        | MulI
                        | NegI
                        | AddF
                        | SubF
                        | MulF
                        | DivF
                        | NegF
                        | AbsI
                        | AbsF
                        | EqI
                        | NeqI
                        | LtI
                        | GtI
                        | LeqI
                        | GeqI
                        | EqF
                        | NeqF
                        | LtF
                        | GtF
                        | LeqF
                        | GeqF
                        | EqB
                        | NeqB
                        | Not
                        | Int2Float
                        | Sqrt
                        | Exp
                        | Log
                        | Pow
                        | Sin
                        | Cos
                        | Length
                        | Null
                        | NumAdd
                        | NumSub
                        | NumMul
                        | NumNeg
                        | NumAbs
                        | NumEq
                        | NumNe
                        | NumLt
                        | NumLe
                        | NumGt
                        | NumGe
                )
            ) && args.iter().all(infallible)
        }
        _ => false,
    }
}
