//! Expressions and patterns: the type of every node, bindings added to the environment (`let`
//! and `fn` groups generalized), literals typed by the number kind around them.

use std::collections::BTreeMap;

use super::unify::Mismatch;
use super::{Infer, Kind, Scheme};
use crate::ast::{Expr, ExprKind, Lit, Pat, PatKind};
use crate::error::{Error, ErrorKind};
use crate::intrinsics::Intrinsic;
use crate::types::{Label, Type};

impl Infer<'_> {
    pub(super) fn expr(&mut self, e: &mut Expr) -> Type {
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
                Lit::Float(..) => self.fresh_kind(Kind::FloatNum),
                Lit::Bool(_) => Type::BOOL,
                Lit::Unit => Type::unit(),
            },
            ExprKind::Intrinsic(i) => {
                let i = *i;
                let (mut ps, mut r) = i.signature(&mut || self.fresh());
                if let Some(ix) = i.index_type(&ps) {
                    // An index or count of any integer type (`i64` when nothing fixes it).
                    let _ = self.constrain(&ix, Kind::IntNum);
                }
                if i == Intrinsic::Len {
                    r = self.len_type();
                } else if i.is_float_math() {
                    // `sqrt(x)` on captured `f32` values computes in `f32`; `f64` by default.
                    let a = self.fresh_kind(Kind::FloatNum);
                    ps.iter_mut().for_each(|p| *p = a.clone());
                    r = a;
                } else if i == Intrinsic::Int2Float {
                    // `int2float(i)` of any integer (`i64` by default, `i32` for captured `i32`
                    // values) is the float type its context wants (`f64` by default).
                    ps[0] = self.fresh_kind(Kind::IntNum);
                    r = self.fresh_kind(Kind::FloatNum);
                } else if let Some((_, t)) = i.method() {
                    // A numeric method (`x.count_ones()`): the receiver's kind; an amount
                    // (`x.rotate_left(n)`) of any integer type.
                    use crate::intrinsics::MethodType as M;
                    let kind = match t {
                        M::Int { .. } | M::IntAmount | M::IntTest | M::IntCount => Kind::IntNum,
                        M::Num | M::NumWith { .. } => Kind::Num,
                        _ => Kind::FloatNum,
                    };
                    let a = self.fresh_kind(kind);
                    for (k, p) in ps.iter_mut().enumerate() {
                        *p = if k == 1 && matches!(t, M::IntAmount | M::FloatAmount) {
                            self.fresh_kind(Kind::IntNum)
                        } else {
                            a.clone()
                        };
                    }
                    let name = i.method().map_or("", |(n, _)| n);
                    if i.signed_only() {
                        self.signed_only.push((a.clone(), span, name));
                    }
                    if matches!(i, Intrinsic::MAbsDiff | Intrinsic::MUnsignedAbs) {
                        // Rust's unsigned type of the receiver's width, once that is known
                        // (`finish`).
                        r = self.fresh_kind(Kind::IntNum);
                        self.unsigned.push((a, r.clone(), span, name));
                    } else if !matches!(t, M::FloatTest | M::IntTest | M::IntCount) {
                        r = a;
                    }
                } else if let Intrinsic::As(_) = i {
                    // `x as u8`, `x as f64`, … of a number or a `bool`.
                    ps[0] = self.fresh_kind(Kind::Eq);
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
                        Type::BOOL,
                        t,
                        Type::BOOL,
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
                func.ty = Type::arrows(operands, result.clone());
                result
            }
            ExprKind::App { func, args } => {
                let tf = self.expr(func);
                let name = self.callee_name(func);
                let callee = match &func.kind {
                    ExprKind::Intrinsic(i) => Some(*i),
                    _ => None,
                };
                self.apply(&name, func.span, tf, args, callee)
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
                let mut vars = if matches!(value.kind, ExprKind::Lam { .. }) {
                    self.generalize(std::slice::from_ref(&tv))
                } else {
                    Vec::new()
                };
                // A function whose type is past the limits is not copied at its uses (an error
                // says why); its uses see an unknown type.
                let mut ts = tv.clone();
                if !vars.is_empty() && !self.check_type_early(&tv, value.span) {
                    vars.clear();
                    ts = self.fresh();
                }
                binder.ty = tv.clone();
                *scheme = vars.clone();
                self.env.insert(binder.ident.id, Scheme { vars, ty: ts });
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
                let mut vars = self.generalize(&types);
                let mut within = true;
                if !vars.is_empty() {
                    for f in fns.iter() {
                        within = within && self.check_type_early(&f.ty, f.span);
                    }
                }
                if !within {
                    vars.clear();
                }
                for f in fns.iter() {
                    let ty = if within { f.ty.clone() } else { self.fresh() };
                    self.env.insert(
                        f.ident.id,
                        Scheme {
                            vars: vars.clone(),
                            ty,
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
                        Type::INT
                            | Type::FLOAT
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
                if let Some(ix) = kw.index_type(&ps) {
                    // A count or indices of any integer type (`i64` when nothing fixes it):
                    // `hist`'s bins, the loops' counts and so their loop variables.
                    let _ = self.constrain(&ix, Kind::IntNum);
                }
                let name = format!("`{}`", kw.name());
                let before = self.errors.len();
                let t = self.apply(&name, span, Type::arrows(ps, r), args, None);
                // A mismatched argument: what the keyword takes.
                for err in &mut self.errors[before..] {
                    let mismatched = matches!(
                        &err.kind,
                        ErrorKind::ArgumentMismatch { callee } if *callee == name
                    );
                    if err.help.is_none() && mismatched {
                        err.help = Some(kw.parameters().into());
                    }
                }
                t
            }
            // Made by the optimizer, after inference: it keeps its type.
            ExprKind::Soac(_) => e.ty.clone(),
            // Lowered before resolution, which reports one that was not.
            ExprKind::Imp(_) => e.ty.clone(),
        };
        // Each use of a variable copies its type: a large one is shared instead.
        let t = self.share(t);
        e.ty = t.clone();
        t
    }

    /// The type of `s.len()` written as a Rust method: Rust's, a `usize` (PMExpr's `length(s)`
    /// is an `i64`).
    fn len_type(&mut self) -> Type {
        Type::number(crate::types::Number::Usize)
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
                    Lit::Float(..) => self.fresh_kind(Kind::FloatNum),
                    Lit::Bool(_) => Type::BOOL,
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
}
