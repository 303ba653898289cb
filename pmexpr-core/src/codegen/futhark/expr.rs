//! The generator of one definition: expressions, patterns, parallel keywords and intrinsics.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::code::{
    Code, apply_text, binop, field_name, if_chain, indent, is_one_tuple, let_line, lit,
    literal_suffixes, nan_safe, record_code, var_name, with_lets,
};
use super::{Context, FutType, GenError, Helper, Instantiation};
use crate::ast::{Expr, ExprKind, Lit, Param, Pat, PatKind, VarId};
use crate::codegen::numbers::Number;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::Def;
use crate::types::{Label, Type};

/// Generates one definition under one instantiation.
pub(super) struct Gen<'a, 'b> {
    pub(super) cx: &'a Context<'a>,
    pub(super) inst: &'a Instantiation,
    pub(super) helpers: &'b mut BTreeSet<Helper>,
    /// Counter for the `pm_` temporaries of this definition.
    pub(super) tmp: u32,
    /// `let`-bound variables whose value is a fresh array used exactly once: a `set` on them
    /// updates in place.
    pub(super) once: HashSet<VarId>,
    /// Inside a place where Futhark forbids consuming (a partial application's arguments, the value
    /// of a function-typed `let`): `set` copies.
    pub(super) no_inplace: u32,
    /// Inside the loop of a tail-recursive function: what its tail positions return.
    pub(super) tail: Option<Tail>,
}

/// The state of the loop of a tail-recursive function `f` ([`crate::tailrec`]):
/// `(go, varying parameters…, result)`.
pub(super) struct Tail {
    /// The function.
    pub(super) f: VarId,
    /// The indices of the parameters in the state, and their names.
    pub(super) varying: Vec<(usize, String)>,
    /// The name of the result in the state.
    pub(super) result: String,
}

pub(super) type R<T> = Result<T, GenError>;

impl<'a, 'b> Gen<'a, 'b> {
    pub(super) fn new(
        cx: &'a Context<'a>,
        inst: &'a Instantiation,
        helpers: &'b mut BTreeSet<Helper>,
    ) -> Self {
        Gen {
            cx,
            inst,
            helpers,
            tmp: 0,
            once: HashSet::new(),
            no_inplace: 0,
            tail: None,
        }
    }

    pub(super) fn fresh(&mut self, hint: &str) -> String {
        self.tmp += 1;
        format!("pm_{hint}{}", self.tmp)
    }

    pub(super) fn ty(&self, t: &Type) -> R<FutType> {
        FutType::of(t, self.inst)
    }

    /// The primitive type of a number.
    pub(super) fn prim(&self, t: &Type) -> R<Number> {
        match self.ty(t)? {
            FutType::Prim(p) => Ok(p),
            other => Err(GenError::Unsupported(format!(
                "a number operation on a value of type `{other}`"
            ))),
        }
    }

    pub(super) fn var(&self, id: VarId) -> R<String> {
        if self.cx.defs.contains_key(&id) {
            self.cx.top_name(id, self.inst)
        } else {
            Ok(var_name(self.cx.names, id))
        }
    }

    /// A binder: `_` for the wildcard, else the variable's name.
    pub(super) fn binder(&self, p: &Param) -> String {
        if p.ident.name == "_" {
            "_".to_string()
        } else {
            var_name(self.cx.names, p.ident.id)
        }
    }

    // ----- expressions -----

    pub(super) fn expr(&mut self, e: &Expr) -> R<Code> {
        match &e.kind {
            ExprKind::Var { ident, .. } => Ok(Code::atom(self.var(ident.id)?)),
            ExprKind::Lit(l) => Ok(lit(l, self.prim(&e.ty).ok())),
            ExprKind::Intrinsic(i) => self.intrinsic_value(*i, &e.ty),
            ExprKind::Lam { params, body } => {
                let mut ps = Vec::new();
                for p in params {
                    ps.push(self.lambda_param(&self.binder(p), &p.ty)?);
                }
                let body = self.expr(body)?;
                Ok(Code::atom(format!(
                    "(\\{} -> {})",
                    ps.join(" "),
                    indent(&body.text, 2)
                )))
            }
            ExprKind::App { func, args } => self.app(func, args, &e.ty),
            ExprKind::Let { .. } => self.let_chain(e, false),
            ExprKind::RecLet { fns, .. } => Err(GenError::RecursiveLet(
                fns.first()
                    .map(|f| f.ident.name.clone())
                    .unwrap_or_default(),
            )),
            ExprKind::Match { pat, .. } if pat.irrefutable() => self.let_chain(e, false),
            ExprKind::Match { .. } => self.match_(e, false),
            ExprKind::Never(_) => self.never(&e.ty),
            ExprKind::Record(fs) => self.record(fs, &e.ty),
            ExprKind::Proj { expr, label } => {
                let inner = self.expr(expr)?;
                match &expr.ty {
                    Type::Record(fs) if is_one_tuple(fs) => Ok(inner),
                    _ => Ok(Code::closed(format!(
                        "{}.{}",
                        inner.arg(),
                        field_name(label)
                    ))),
                }
            }
            ExprKind::Seq(es) => self.seq(es, &e.ty),
            ExprKind::Keyword { kw, args } => self.keyword(*kw, args),
            ExprKind::Soac(_) => Err(GenError::Unsupported(
                "a fused composition (the optimizer makes them for the CPU targets only)".into(),
            )),
            ExprKind::Imp(_) => Err(GenError::Unsupported(
                "imperative syntax that was not lowered".into(),
            )),
        }
    }

    pub(super) fn app(&mut self, func: &Expr, args: &[Expr], ty: &Type) -> R<Code> {
        if let ExprKind::Intrinsic(i) = func.kind
            && args.len() == i.arity()
        {
            return self.intrinsic(i, args, ty);
        }
        // Futhark forbids consuming inside the arguments of a partial application.
        let partial = ty.is_arrow();
        if partial {
            self.no_inplace += 1;
        }
        let f = self.expr(func);
        let codes: R<Vec<Code>> = args.iter().map(|a| self.expr(a)).collect();
        if partial {
            self.no_inplace -= 1;
        }
        Ok(apply_text(&f?.arg(), &codes?))
    }

    /// A chain of `let`s (and irrefutable matches, which bind like `let`s).
    /// `e`, in tail position of a loop's body when `tail` (see [`Gen::tail_expr`]).
    fn at(&mut self, e: &Expr, tail: bool) -> R<Code> {
        if tail {
            self.tail_expr(e)
        } else {
            self.expr(e)
        }
    }

    /// An expression in tail position of the body of a tail-recursive function's loop: the next
    /// state, `(true, arguments…, result)` for the function's own call, else
    /// `(false, parameters…, value)`.
    pub(super) fn tail_expr(&mut self, e: &Expr) -> R<Code> {
        match &e.kind {
            ExprKind::Let { .. } => return self.let_chain(e, true),
            ExprKind::Match { pat, .. } if pat.irrefutable() => return self.let_chain(e, true),
            ExprKind::Match { .. } => return self.match_(e, true),
            _ => {}
        }
        let tail = self
            .tail
            .as_ref()
            .expect("tail_expr is called inside a loop");
        let call = match &e.kind {
            ExprKind::App { func, args } => match &func.kind {
                ExprKind::Var { ident, .. } if ident.id == tail.f => Some(args),
                _ => None,
            },
            _ => None,
        };
        let (go, varying, result) = match call {
            Some(args) => {
                let idx: Vec<usize> = tail.varying.iter().map(|(i, _)| *i).collect();
                let result = tail.result.clone();
                let mut next = Vec::new();
                for i in idx {
                    next.push(self.expr(&args[i])?.closed_text());
                }
                ("true", next, result)
            }
            None => {
                let names: Vec<String> = tail.varying.iter().map(|(_, n)| n.clone()).collect();
                ("false", names, self.expr(e)?.closed_text())
            }
        };
        let mut parts = vec![go.to_string()];
        parts.extend(varying);
        parts.push(result);
        Ok(Code::atom(format!("({})", parts.join(", "))))
    }

    pub(super) fn let_chain(&mut self, mut e: &Expr, tail: bool) -> R<Code> {
        let mut lines = Vec::new();
        // The uses of every variable in the rest of the chain: counted once, then the parts the
        // chain leaves behind subtracted (counting in each `let`'s body cost k² on k `let`s).
        let mut uses = use_counts(e);
        loop {
            match &e.kind {
                ExprKind::Let {
                    binder,
                    value,
                    body,
                    ..
                } => {
                    // Futhark: a value computed with an in-place update may not be a function.
                    let guard = binder.ty.has_arrow();
                    if guard {
                        self.no_inplace += 1;
                    }
                    let v = self.expr(value);
                    if guard {
                        self.no_inplace -= 1;
                    }
                    let v = v?;
                    forget_uses(value, &mut uses);
                    if !guard
                        && is_fresh(value)
                        && uses.get(&binder.ident.id).copied().unwrap_or(0) == 1
                    {
                        self.once.insert(binder.ident.id);
                    }
                    lines.push(let_line(&self.binder(binder), &v));
                    e = body;
                }
                ExprKind::Match {
                    scrutinee,
                    pat,
                    then,
                    otherwise,
                } if pat.irrefutable() => {
                    let s = self.expr(scrutinee)?;
                    lines.push(let_line(&self.pat(pat)?, &s));
                    forget_uses(scrutinee, &mut uses);
                    forget_uses(otherwise, &mut uses);
                    e = then;
                }
                _ => break,
            }
        }
        let body = self.at(e, tail)?;
        Ok(with_lets(lines, body))
    }

    /// A refutable match: `if` on a `bool` literal, else a Futhark `match` whose cases are the
    /// arms of the chain on the same variable (the parser writes `match x { … }` as nested
    /// matches on `x`), ending with `case _` unless an arm matches everything.
    pub(super) fn match_(&mut self, e: &Expr, tail: bool) -> R<Code> {
        let ExprKind::Match { scrutinee, pat, .. } = &e.kind else {
            unreachable!("match_ is called on matches")
        };
        if let PatKind::Lit(Lit::Bool(_)) = pat.kind {
            // `match b { true => x, false => y }`: the second arm is the else-branch. An
            // else-branch that is itself such a match continues the chain (`else if`), generated
            // in this loop: `match x { 0 => …, 1 => …, … }` on integers is a chain of k of them.
            let mut branches = Vec::new();
            let mut cur = e;
            loop {
                let ExprKind::Match {
                    scrutinee,
                    pat,
                    then,
                    otherwise,
                } = &cur.kind
                else {
                    unreachable!("the chain holds matches on bool literals")
                };
                let PatKind::Lit(Lit::Bool(b)) = pat.kind else {
                    unreachable!("the chain holds matches on bool literals")
                };
                let s = self.expr(scrutinee)?;
                let other = match &otherwise.kind {
                    ExprKind::Match {
                        scrutinee: s2,
                        pat: p2,
                        then: t2,
                        ..
                    } if same_var(scrutinee, s2)
                        && (matches!(p2.kind, PatKind::Wild)
                            || matches!(p2.kind, PatKind::Lit(Lit::Bool(c)) if c != b)) =>
                    {
                        t2
                    }
                    _ => otherwise,
                };
                let (yes, no) = if b { (then, other) } else { (other, then) };
                branches.push((s, self.at(yes, tail)?));
                match &no.kind {
                    ExprKind::Match { pat, .. }
                        if matches!(pat.kind, PatKind::Lit(Lit::Bool(_))) =>
                    {
                        cur = no;
                    }
                    _ => {
                        let last = self.at(no, tail)?;
                        return Ok(if_chain(branches, last));
                    }
                }
            }
        }
        let s = self.expr(scrutinee)?;
        let mut arms = Vec::new();
        let mut rest: &Expr = e;
        while let ExprKind::Match {
            scrutinee: s2,
            pat,
            then,
            otherwise,
        } = &rest.kind
        {
            if !arms.is_empty() && !same_var(scrutinee, s2) {
                break;
            }
            let body = self.at(then, tail)?;
            arms.push(format!(
                "case {} -> {}",
                self.pat(pat)?,
                indent(&body.closed_text(), 2)
            ));
            if pat.irrefutable() {
                return Ok(Code::open(format!(
                    "match {}\n{}",
                    s.closed_text(),
                    arms.join("\n")
                )));
            }
            rest = otherwise;
        }
        let last = self.at(rest, tail)?;
        arms.push(format!("case _ -> {}", indent(&last.closed_text(), 2)));
        Ok(Code::open(format!(
            "match {}\n{}",
            s.closed_text(),
            arms.join("\n")
        )))
    }

    pub(super) fn pat(&self, p: &Pat) -> R<String> {
        Ok(match &p.kind {
            PatKind::Wild => "_".to_string(),
            PatKind::Bind(i) if i.name == "_" => "_".to_string(),
            PatKind::Bind(i) => var_name(self.cx.names, i.id),
            PatKind::Lit(l) => {
                let (int, float) = literal_suffixes(self.prim(&p.ty).ok());
                match l {
                    Lit::Int(i) => format!("{i}{int}"),
                    Lit::Float(x) if x.is_finite() => format!("{x:?}{float}"),
                    Lit::Float(_) => {
                        return Err(GenError::Unsupported(
                            "a pattern that is an infinite or NaN float".into(),
                        ));
                    }
                    Lit::Bool(b) => b.to_string(),
                    Lit::Unit => "()".to_string(),
                }
            }
            PatKind::Record(fs) => {
                let Type::Record(tys) = &p.ty else {
                    return Err(GenError::Unsupported(
                        "a record pattern on a value that is not a record".into(),
                    ));
                };
                if is_one_tuple(tys) && fs.len() == 1 {
                    return self.pat(&fs[0].1);
                }
                // Futhark's record patterns name every field: a field the pattern leaves out
                // (`P { x, .. }`) is `_`.
                let parts: Vec<String> = tys
                    .iter()
                    .map(|(l, _)| match fs.iter().find(|(fl, _)| fl == l) {
                        Some((_, p)) => self.pat(p),
                        None => Ok("_".to_string()),
                    })
                    .collect::<R<_>>()?;
                if Type::is_tuple_record(tys) {
                    format!("({})", parts.join(", "))
                } else {
                    let named: Vec<String> = tys
                        .iter()
                        .zip(parts)
                        .map(|((l, _), p)| format!("{} = {p}", field_name(l)))
                        .collect();
                    format!("{{{}}}", named.join(", "))
                }
            }
        })
    }

    /// `never`: `assert false d`, where `d` is a value of the expected type. Reaching it stops
    /// the program with Futhark's "assertion failed" error, as reaching `never` is an error in
    /// PMExpr; the value only gives the expression its type. (Futhark has no bottom value, and
    /// its typed hole `???` fails only when evaluated but would leave the type ambiguous.)
    pub(super) fn never(&self, t: &Type) -> R<Code> {
        Ok(Code::closed(format!(
            "assert false {}",
            self.default_value(t)?.arg()
        )))
    }

    /// A value of type `t` (for `never`): zeros, `false`, empty arrays.
    pub(super) fn default_value(&self, t: &Type) -> R<Code> {
        Ok(match t {
            Type::Record(fs) if is_one_tuple(fs) => self.default_value(&fs[0].1)?,
            Type::Record(fs) => {
                let parts = fs
                    .iter()
                    .map(|(l, t)| Ok((field_name(l), self.default_value(t)?)))
                    .collect::<R<Vec<_>>>()?;
                record_code(fs, parts)
            }
            Type::Seq(_) => Code::atom(format!("([] : [0]{})", self.elem_type(t)?)),
            Type::Arrow(..) => {
                return Err(GenError::Unsupported("`never` of a function type".into()));
            }
            _ => Code::atom(match self.prim(t)? {
                p if p.is_float() => format!("0.0{}", p.futhark_name()),
                p if p.is_arithmetic() => format!("0{}", p.futhark_name()),
                _ => "false".to_string(),
            }),
        })
    }

    /// The element type of an array type, as written after `[n]`.
    pub(super) fn elem_type(&self, t: &Type) -> R<FutType> {
        match self.ty(t)? {
            FutType::Array(e) => Ok(*e),
            other => Err(GenError::Unsupported(format!(
                "a sequence operation on a value of type `{other}`"
            ))),
        }
    }

    pub(super) fn record(&mut self, fs: &[(Label, Expr)], ty: &Type) -> R<Code> {
        let Type::Record(tys) = ty else {
            return Err(GenError::Unsupported(
                "a record of a non-record type".into(),
            ));
        };
        if is_one_tuple(tys) && fs.len() == 1 {
            return self.expr(&fs[0].1);
        }
        let parts = fs
            .iter()
            .map(|(l, e)| Ok((field_name(l), self.expr(e)?)))
            .collect::<R<Vec<_>>>()?;
        Ok(record_code(tys, parts))
    }

    /// `[a, b, …]`; array elements take the size of the first (Futhark checks it statically).
    pub(super) fn seq(&mut self, es: &[Expr], ty: &Type) -> R<Code> {
        if es.is_empty() {
            return Ok(Code::atom(format!("([] : [0]{})", self.elem_type(ty)?)));
        }
        let codes: Vec<Code> = es.iter().map(|e| self.expr(e)).collect::<R<_>>()?;
        let rows = matches!(ty, Type::Seq(e) if matches!(**e, Type::Seq(_)));
        if !rows || codes.len() == 1 {
            let parts: Vec<String> = codes.iter().map(Code::closed_text).collect();
            return Ok(Code::atom(format!("[{}]", parts.join(", "))));
        }
        let mut lines = Vec::new();
        let first = self.share(codes[0].clone(), "first", &mut lines);
        self.helpers.insert(Helper::SameSize);
        let mut parts = vec![first.text.clone()];
        for c in &codes[1..] {
            parts.push(apply_text(Helper::SameSize.name(), &[first.clone(), c.clone()]).text);
        }
        Ok(with_lets(
            lines,
            Code::atom(format!("[{}]", parts.join(", "))),
        ))
    }

    /// `c` itself when it is a name, else a fresh name bound to it by a line added to `lines`.
    pub(super) fn share(&mut self, c: Code, hint: &str, lines: &mut Vec<String>) -> Code {
        if c.is_name() {
            c
        } else {
            let n = self.fresh(hint);
            lines.push(let_line(&n, &c));
            Code::atom(n)
        }
    }

    // ----- parallel keywords -----

    pub(super) fn keyword(&mut self, kw: Keyword, args: &[Expr]) -> R<Code> {
        match (kw, args) {
            (Keyword::Map, [f, s]) => {
                let f = self.fn_value(f)?;
                let s = self.expr(s)?;
                Ok(apply_text("map", &[f, s]))
            }
            (Keyword::Map2, [f, a, b]) => {
                let fc = self.fn_value(f)?;
                let ac = self.expr(a)?;
                let bc = self.expr(b)?;
                if same_var(a, b) {
                    return Ok(apply_text("map2", &[fc, ac, bc]));
                }
                // Futhark's map2 needs equal sizes: the second takes the first's (checked).
                let mut lines = Vec::new();
                let ac = self.share(ac, "a", &mut lines);
                self.helpers.insert(Helper::SameSize);
                let bc = apply_text(Helper::SameSize.name(), &[ac.clone(), bc]);
                Ok(with_lets(lines, apply_text("map2", &[fc, ac, bc])))
            }
            (Keyword::Reduce, [f, ne, s]) => {
                let fc = self.fn_value(f)?;
                let nc = self.expr(ne)?;
                let sc = self.expr(s)?;
                if !is_rows(&s.ty) {
                    return Ok(apply_text("reduce", &[fc, nc, sc]));
                }
                // Rows: the neutral element takes the size of the rows.
                let mut lines = Vec::new();
                let sc = self.share(sc, "s", &mut lines);
                self.helpers.insert(Helper::RowSize);
                let nc = apply_text(Helper::RowSize.name(), &[sc.clone(), nc]);
                Ok(with_lets(lines, apply_text("reduce", &[fc, nc, sc])))
            }
            (Keyword::Flatten, [s]) => {
                let s = self.expr(s)?;
                Ok(apply_text("flatten", &[s]))
            }
            (Keyword::Scan, [f, ne, s]) => {
                let fc = self.fn_value(f)?;
                let nc = self.expr(ne)?;
                let sc = self.expr(s)?;
                if !is_rows(&s.ty) {
                    return Ok(apply_text("scan", &[fc, nc, sc]));
                }
                // Rows: the neutral element takes the size of the rows, as for `reduce`.
                let mut lines = Vec::new();
                let sc = self.share(sc, "s", &mut lines);
                self.helpers.insert(Helper::RowSize);
                let nc = apply_text(Helper::RowSize.name(), &[sc.clone(), nc]);
                Ok(with_lets(lines, apply_text("scan", &[fc, nc, sc])))
            }
            (Keyword::Filter, [p, s]) => {
                let pc = self.fn_value(p)?;
                let sc = self.expr(s)?;
                Ok(apply_text("filter", &[pc, sc]))
            }
            (Keyword::Scatter, [dest, is, vs]) => {
                let mut dc = self.expr(dest)?;
                let ic = self.expr(is)?;
                let mut vc = self.expr(vs)?;
                let mut lines = Vec::new();
                if is_rows(&dest.ty) {
                    // Rows of values take the size of the destination's rows (the original's:
                    // the copy below is consumed).
                    dc = self.share(dc, "dest", &mut lines);
                    self.helpers.insert(Helper::RowsLike);
                    vc = apply_text(Helper::RowsLike.name(), &[dc.clone(), vc]);
                }
                // Futhark's `scatter` consumes its destination: it writes into a copy.
                let dc = apply_text("copy", &[dc]);
                // The values take the size of the indices (checked), as for `hist`.
                let ic = self.share(ic, "is", &mut lines);
                self.helpers.insert(Helper::SameSize);
                let vc = apply_text(Helper::SameSize.name(), &[ic.clone(), vc]);
                Ok(with_lets(lines, apply_text("scatter", &[dc, ic, vc])))
            }
            (Keyword::Hist, [f, ne, k, is, vs]) => {
                let fc = self.fn_value(f)?;
                let nc = self.expr(ne)?;
                let kc = self.expr(k)?;
                let mut ic = self.expr(is)?;
                let vc = self.expr(vs)?;
                // Futhark's bin indices are i64: another integer index sequence is converted.
                let ix = match &is.ty {
                    Type::Seq(e) => self.prim(e)?,
                    t => self.prim(t)?,
                };
                if ix.futhark_name() != Number::I64.futhark_name() {
                    ic = apply_text(
                        "map",
                        &[Code::atom(format!("i64.{}", ix.futhark_name())), ic],
                    );
                }
                // The values take the size of the indices (checked), as for `map2`.
                let mut lines = Vec::new();
                let ic = self.share(ic, "is", &mut lines);
                self.helpers.insert(Helper::SameSize);
                let vc = apply_text(Helper::SameSize.name(), &[ic.clone(), vc]);
                Ok(with_lets(lines, apply_text("hist", &[fc, nc, kc, ic, vc])))
            }
            _ => Err(GenError::Unsupported(format!("`{}`", kw.usage()))),
        }
    }

    // ----- functions as values -----

    /// A function argument (of `map`, `reduce`, …): a bare intrinsic becomes a Futhark function.
    pub(super) fn fn_value(&mut self, e: &Expr) -> R<Code> {
        match e.kind {
            ExprKind::Intrinsic(i) => self.intrinsic_value(i, &e.ty),
            _ => self.expr(e),
        }
    }

    /// `f a b` where `f` is a function argument: an intrinsic is applied directly.
    pub(super) fn apply(&mut self, f: &Expr, args: Vec<Code>, arg_tys: &[Type]) -> R<Code> {
        match &f.kind {
            ExprKind::Intrinsic(i) if i.arity() == args.len() => {
                let ret = f.ty.split_arrows(args.len()).1.clone();
                self.intrinsic_code(*i, args, arg_tys, &ret)
            }
            ExprKind::App { func, args: bound } => {
                let fc = self.expr(func)?;
                let mut all: Vec<Code> = bound.iter().map(|a| self.expr(a)).collect::<R<_>>()?;
                all.extend(args);
                Ok(apply_text(&fc.arg(), &all))
            }
            _ => {
                let fc = self.fn_value(f)?;
                Ok(apply_text(&fc.arg(), &args))
            }
        }
    }

    /// An intrinsic used as a function value of type `ty`.
    pub(super) fn intrinsic_value(&mut self, i: Intrinsic, ty: &Type) -> R<Code> {
        use Intrinsic::*;
        let (params, ret) = ty.split_arrows(i.arity());
        let ret = ret.clone();
        if params.len() != i.arity() {
            return Err(GenError::Unsupported(format!(
                "`{}` used with a type that is not its own",
                i.name()
            )));
        }
        let params: Vec<Type> = params.into_iter().cloned().collect();
        if let Some(op) = self.operator(i, params.first())? {
            if let Some(nan) = self.nan_test(op, params.first())? {
                let (x, y) = (Code::atom("pm_x"), Code::atom("pm_y"));
                let body = nan_safe(&nan, &x, op, &y).closed_text();
                return Ok(Code::atom(format!("(\\pm_x pm_y -> {body})")));
            }
            return Ok(Code::atom(format!("({op})")));
        }
        let named = match i {
            NegI => Some("i64.neg".to_string()),
            NegF => Some("f64.neg".to_string()),
            NumNeg => Some(format!("{}.neg", self.prim(&params[0])?.futhark_name())),
            AbsI => Some("i64.abs".to_string()),
            AbsF => Some("f64.abs".to_string()),
            NumAbs => Some(format!("{}.abs", self.prim(&params[0])?.futhark_name())),
            Not => Some("not".to_string()),
            Int2Float => Some(format!(
                "{}.{}",
                self.prim(&ret)?.futhark_name(),
                self.prim(&params[0])?.futhark_name()
            )),
            Sqrt | Exp | Log | Sin | Cos => Some(format!(
                "{}.{}",
                self.prim(&params[0])?.futhark_name(),
                i.name()
            )),
            Length | Null | Head | Tail | Reverse => Some(i.name().to_string()),
            _ => None,
        };
        if let Some(n) = named {
            return Ok(Code::atom(n));
        }
        // Any other: a lambda over fresh parameters.
        let mut ps = Vec::new();
        let mut args = Vec::new();
        for t in &params {
            let n = self.fresh("e");
            ps.push(self.lambda_param(&n, t)?);
            args.push(Code::atom(n));
        }
        let body = self.intrinsic_code(i, args, &params, &ret)?;
        Ok(Code::atom(format!(
            "(\\{} -> {})",
            ps.join(" "),
            indent(&body.text, 2)
        )))
    }

    /// The infix operator of a binary intrinsic whose first operand has type `t`.
    pub(super) fn operator(&self, i: Intrinsic, t: Option<&Type>) -> R<Option<&'static str>> {
        use Intrinsic::*;
        // Futhark spells the table's operators as Rust does, except integer division and
        // remainder, which are Futhark's truncating `//` and `%%` (as Rust's `/` `%` on integers).
        Ok(Some(match i {
            // Shifts are masked (`intrinsic_code`); `&` `|` `^` on `bool` evaluate both operands.
            NumShl | NumShr => return Ok(None),
            // (`bool` written, or a number variable that is `bool` in this instantiation.)
            NumAnd | NumOr | NumXor
                if t.is_some_and(|t| self.prim(t).is_ok_and(|p| p == Number::Bool)) =>
            {
                return Ok(None);
            }
            DivI => "//",
            ModI | NumRem => "%%",
            NumDiv => match t {
                Some(t) if self.prim(t)?.is_float() => "/",
                _ => "//",
            },
            Pow => "**",
            _ => match i.operator() {
                Some(o) => o.symbol,
                None => return Ok(None),
            },
        }))
    }

    /// `f64.isnan` (`f32.isnan`) for a comparison `op` of floats that holds for equal operands
    /// (`==`, `!=`, `<=`, `>=`). Futhark's simplifier folds `x == x`, `x <= x` and `x >= x` to
    /// `true` and `x != x` to `false`, which is wrong when `x` is a NaN (Futhark 0.24.3): such a
    /// comparison is generated with its own NaN test, which nothing folds away.
    fn nan_test(&self, op: &str, t: Option<&Type>) -> R<Option<String>> {
        match t {
            Some(t) if matches!(op, "==" | "!=" | "<=" | ">=") => {
                let p = self.prim(t)?;
                Ok(p.is_float().then(|| format!("{}.isnan", p.futhark_name())))
            }
            _ => Ok(None),
        }
    }

    // ----- intrinsics -----

    /// A fully applied intrinsic, with the special forms that look at the arguments: `set` (in
    /// place or not), `create` (`iota`, `replicate`, `tabulate`), `foldl` (the function applied
    /// in the loop body).
    pub(super) fn intrinsic(&mut self, i: Intrinsic, args: &[Expr], ty: &Type) -> R<Code> {
        match (i, args) {
            (Intrinsic::Set, [s, ix, v]) => {
                let in_place = self.no_inplace == 0
                    && (is_fresh(s)
                        || matches!(&s.kind, ExprKind::Var { ident, .. } if self.once.contains(&ident.id)));
                let sc = self.expr(s)?;
                let ic = self.expr(ix)?;
                let ic = self.index(ic, &ix.ty)?;
                let vc = self.expr(v)?;
                Ok(self.set(sc, ic, vc, &s.ty, in_place))
            }
            (Intrinsic::Create, [n, f]) => self.create(n, f),
            (Intrinsic::Foldl, [f, ne, s]) => {
                let nc = self.expr(ne)?;
                let sc = self.expr(s)?;
                let acc = self.fresh("acc");
                let x = self.fresh("x");
                let elem = match &s.ty {
                    Type::Seq(e) => (**e).clone(),
                    other => other.clone(),
                };
                let body = self.apply(
                    f,
                    vec![Code::atom(acc.clone()), Code::atom(x.clone())],
                    &[ne.ty.clone(), elem],
                )?;
                Ok(Code::open(format!(
                    "loop {acc} = {} for {x} in {} do {}",
                    nc.arg(),
                    sc.arg(),
                    body.text
                )))
            }
            _ => {
                let codes: Vec<Code> = args.iter().map(|a| self.expr(a)).collect::<R<_>>()?;
                let tys: Vec<Type> = args.iter().map(|a| a.ty.clone()).collect();
                self.intrinsic_code(i, codes, &tys, ty)
            }
        }
    }

    /// `s with [i] = v`, on a copy unless `in_place`; rows go through `pm_set_row`, which coerces
    /// the row to the array's row size.
    pub(super) fn set(&mut self, s: Code, i: Code, v: Code, sty: &Type, in_place: bool) -> Code {
        let target = if in_place {
            s
        } else {
            apply_text("copy", &[s])
        };
        if is_rows(sty) {
            self.helpers.insert(Helper::SetRow);
            apply_text(Helper::SetRow.name(), &[target, i, v])
        } else {
            Code::open(format!(
                "{} with [{}] = {}",
                target.arg(),
                i.closed_text(),
                v.arg()
            ))
        }
    }

    /// `create n f`: `iota`/`indices` for the identity, `replicate` for a body that does not use
    /// the index and cannot fail (it is then evaluated once even when `n` is 0), else `tabulate`.
    pub(super) fn create(&mut self, n: &Expr, f: &Expr) -> R<Code> {
        let nc = self.expr(n)?;
        let p = self.prim(&n.ty)?;
        if p != Number::I64 {
            // A count of another integer type: Futhark's sizes are `i64`, and each index is
            // converted back to the count's type for `f`.
            let k = self.fresh("k");
            let pn = p.futhark_name();
            let fc = self.apply(
                f,
                vec![Code::atom(format!("({pn}.i64 {k})"))],
                std::slice::from_ref(&n.ty),
            )?;
            return Ok(Code::open(format!(
                "tabulate {} (\\{k} -> {})",
                apply_text(&format!("i64.{pn}"), &[nc]).arg(),
                fc.text
            )));
        }
        if let Some((def_params, body, bound)) = self.lifted_fn(f)
            && def_params.len() == bound + 1
        {
            let index = def_params[bound].ident.id;
            if bound == 0 && matches!(&body.kind, ExprKind::Var { ident, .. } if ident.id == index)
            {
                // `indices s` keeps the size of `s` known to Futhark.
                if let ExprKind::App { func, args } = &n.kind
                    && matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Length))
                    && let [s] = args.as_slice()
                {
                    let sc = self.expr(s)?;
                    return Ok(apply_text("indices", &[sc]));
                }
                return Ok(apply_text("iota", &[nc]));
            }
            if !body.free_vars().contains(&index) && cannot_fail(body) {
                let value = self.apply(f, vec![Code::atom("0i64")], &[Type::Int])?;
                return Ok(apply_text("replicate", &[nc, value]));
            }
        }
        let fc = self.fn_value(f)?;
        Ok(apply_text("tabulate", &[nc, fc]))
    }

    /// When `f` is a lifted function, possibly partially applied: its parameters, its body and
    /// how many arguments `f` already gives it.
    pub(super) fn lifted_fn(&self, f: &Expr) -> Option<(&'a [Param], &'a Expr, usize)> {
        let (id, bound) = match &f.kind {
            ExprKind::Var { ident, .. } => (ident.id, 0),
            ExprKind::App { func, args } => match &func.kind {
                ExprKind::Var { ident, .. } => (ident.id, args.len()),
                _ => return None,
            },
            _ => return None,
        };
        let d: &'a Def = self.cx.defs.get(&id)?;
        match &d.value.kind {
            ExprKind::Lam { params, body } => Some((params.as_slice(), &**body, bound)),
            _ => None,
        }
    }

    /// An intrinsic applied to generated arguments of types `tys` (as many as its arity).
    /// `ret` is the type of the result (`int2float` makes the float type its context wants).
    pub(super) fn intrinsic_code(
        &mut self,
        i: Intrinsic,
        a: Vec<Code>,
        tys: &[Type],
        ret: &Type,
    ) -> R<Code> {
        use Intrinsic::*;
        if matches!(i, DivI | ModI | NumDiv | NumRem) && self.prim(&tys[0])?.is_signed_int() {
            return self.signed_division(i, a, &tys[0]);
        }
        if let Some(op) = self.operator(i, tys.first())? {
            return Ok(match self.nan_test(op, tys.first())? {
                Some(nan) => nan_safe(&nan, &a[0], op, &a[1]),
                None => binop(&a[0], op, &a[1]),
            });
        }
        let call = |f: &str, a: &[Code]| Ok(apply_text(f, a));
        match i {
            NegI => call("i64.neg", &a),
            NegF => call("f64.neg", &a),
            NumNeg => call(&format!("{}.neg", self.prim(&tys[0])?.futhark_name()), &a),
            AbsI => call("i64.abs", &a),
            AbsF => call("f64.abs", &a),
            NumAbs => call(&format!("{}.abs", self.prim(&tys[0])?.futhark_name()), &a),
            Not => Ok(Code::closed(format!("!{}", a[0].arg()))),
            Int2Float => call(
                &format!(
                    "{}.{}",
                    self.prim(ret)?.futhark_name(),
                    self.prim(&tys[0])?.futhark_name()
                ),
                &a,
            ),
            FloorFI => {
                let p = self.prim(&tys[0])?.futhark_name();
                Ok(apply_text(
                    &format!("i64.{p}"),
                    &[apply_text(&format!("{p}.floor"), &a)],
                ))
            }
            Sqrt | Exp | Log | Sin | Cos => call(
                &format!("{}.{}", self.prim(&tys[0])?.futhark_name(), i.name()),
                &a,
            ),
            Length | Null | Head | Tail | Reverse => call(i.name(), &a),
            NumAnd | NumOr | NumXor | NumShl | NumShr | NumNot => self.bits_code(i, a, tys, ret),
            _ if i.cast_target().is_some() => self.bits_code(i, a, tys, ret),
            _ if i.method().is_some() => self.method_code(i, a, tys),
            Get => {
                let mut a = a.into_iter();
                let (s, ix) = (a.next(), a.next());
                let (Some(s), Some(ix)) = (s, ix) else {
                    return Err(GenError::Unsupported("`get` with missing arguments".into()));
                };
                let ix = self.index(ix, &tys[1])?;
                Ok(Code::closed(format!("{}[{}]", s.arg(), ix.closed_text())))
            }
            // `s.len()`: the length as the integer type inference gave it.
            Len => {
                let p = self.prim(ret)?;
                let len = apply_text("length", &a);
                Ok(match p {
                    Number::I64 => len,
                    _ => apply_text(&format!("{}.i64", p.futhark_name()), &[len]),
                })
            }
            Concat => self.concat(a, &tys[0]),
            Subsequence => {
                let mut a = a.into_iter();
                let s = a.next().unwrap_or_else(|| Code::atom("()"));
                let mut rest = vec![s];
                for (c, t) in a.zip(&tys[1..]) {
                    rest.push(self.index(c, t)?);
                }
                Ok(self.subsequence(rest))
            }
            Set => {
                let mut a = a.into_iter();
                let (s, ix, v) = (a.next(), a.next(), a.next());
                match (s, ix, v) {
                    (Some(s), Some(ix), Some(v)) => {
                        let ix = self.index(ix, &tys[1])?;
                        Ok(self.set(s, ix, v, &tys[0], false))
                    }
                    _ => Err(GenError::Unsupported("`set` with missing arguments".into())),
                }
            }
            Create => match self.prim(&tys[0])? {
                Number::I64 => call("tabulate", &a),
                p => {
                    let pn = p.futhark_name();
                    let k = self.fresh("k");
                    let n = apply_text(&format!("i64.{pn}"), &a[..1]);
                    let f = apply_text(&a[1].arg(), &[Code::atom(format!("({pn}.i64 {k})"))]);
                    Ok(Code::open(format!(
                        "tabulate {} (\\{k} -> {})",
                        n.arg(),
                        f.text
                    )))
                }
            },
            Foldl => {
                let acc = self.fresh("acc");
                let x = self.fresh("x");
                let body = apply_text(
                    &a[0].arg(),
                    &[Code::atom(acc.clone()), Code::atom(x.clone())],
                );
                Ok(Code::open(format!(
                    "loop {acc} = {} for {x} in {} do {}",
                    a[1].arg(),
                    a[2].arg(),
                    body.text
                )))
            }
            TensorGet | TensorSet | TensorLinearGet | TensorLinearSet | TensorRank
            | TensorShape | TensorSub | TensorSlice | TensorGemm => Err(GenError::Tensor),
            _ => Err(GenError::Unsupported(format!("`{}`", i.name()))),
        }
    }

    /// Rust's bit operators and `as` casts: shifts masked to the width as a release build does
    /// (Futhark's shift by the width or more is C's, undefined), `>>` arithmetic on signed
    /// integers (Futhark's `>>`); `&` `|` `^` on `bool` with both operands evaluated; a float
    /// to an integer saturating with NaN giving 0 (`i64.f64` is C's conversion, undefined out of
    /// range).
    fn bits_code(&mut self, i: Intrinsic, a: Vec<Code>, tys: &[Type], ret: &Type) -> R<Code> {
        use Intrinsic::*;
        let p = self.prim(&tys[0])?;
        let pn = p.futhark_name();
        let mut lines = Vec::new();
        let mut it = a.into_iter();
        let x = it.next().unwrap_or_else(|| Code::atom("0"));
        let y = it.next();
        let code = match i {
            NumAnd | NumOr | NumXor => {
                let y = y.unwrap_or_else(|| Code::atom("0"));
                let x = self.share(x, "a", &mut lines);
                let y = self.share(y, "b", &mut lines);
                let op = match (i, p == Number::Bool) {
                    (NumAnd, true) => "&&",
                    (NumOr, true) => "||",
                    (NumXor, true) => "!=",
                    (NumAnd, false) => "&",
                    (NumOr, false) => "|",
                    _ => "^",
                };
                binop(&x, op, &y)
            }
            NumNot if p == Number::Bool => Code::closed(format!("!{}", x.arg())),
            NumNot => binop(&x, "^", &Code::atom(format!("(-1{pn})"))),
            NumShl | NumShr => {
                let y = y.unwrap_or_else(|| Code::atom("0"));
                let q = self.prim(&tys[1])?.futhark_name();
                let bits = p.bits() - 1;
                let amount = binop(
                    &apply_text(&format!("{pn}.{q}"), &[y]),
                    "&",
                    &Code::atom(format!("{bits}{pn}")),
                );
                let op = if i == NumShl { "<<" } else { ">>" };
                Code::closed(format!("{} {op} ({})", x.arg(), amount.closed_text()))
            }
            _ if i.cast_target().is_some() => {
                let target = self.prim(ret)?;
                let to = target.futhark_name();
                if target.is_int() && p.is_float() {
                    // The bounds are powers of two (or 0), so exactly floats of either width.
                    let v = self.share(x, "v", &mut lines);
                    let v = v.arg();
                    let bits = target.bits() - u32::from(!target.is_unsigned());
                    let above = 2_f64.powi(bits as i32);
                    let min = if target.is_unsigned() { 0.0 } else { -above };
                    Code::open(format!(
                        "if {pn}.isnan {v} then 0{to} else if {v} >= {above:?}{pn} then {to}.highest else if {v} <= ({min:?}{pn}) then {to}.lowest else {to}.{pn} {v}"
                    ))
                } else if pn == to {
                    x
                } else {
                    apply_text(&format!("{to}.{pn}"), &[x])
                }
            }
            _ => return Err(GenError::Unsupported(format!("`{}`", i.name()))),
        };
        Ok(with_lets(lines, code))
    }

    /// `x / y` or `x % y` (`i`) of a signed integer type `t`: Futhark's truncating `//` and `%%`,
    /// with an assertion where Rust panics in every build and Futhark's would wrap, `MIN / -1`
    /// and `MIN % -1` (Futhark fails on division by zero itself).
    fn signed_division(&mut self, i: Intrinsic, a: Vec<Code>, t: &Type) -> R<Code> {
        let pn = self.prim(t)?.futhark_name();
        let op = if matches!(i, Intrinsic::DivI | Intrinsic::NumDiv) {
            "//"
        } else {
            "%%"
        };
        let [x, y] = &a[..] else {
            return Err(GenError::Unsupported(format!(
                "`{}` of {} operands",
                i.name(),
                a.len()
            )));
        };
        // A literal divisor other than -1 cannot overflow.
        let literal = (y.text.trim_start_matches('(').trim_end_matches(')'))
            .strip_suffix(pn)
            .and_then(|v| v.parse::<i64>().ok());
        if literal.is_some_and(|v| v != -1) {
            return Ok(binop(x, op, y));
        }
        let mut lines = Vec::new();
        let x = self.share(x.clone(), "x", &mut lines).arg();
        let y = self.share(y.clone(), "y", &mut lines).arg();
        Ok(with_lets(
            lines,
            Code::closed(format!(
                "assert (!({y} == -1{pn} && {x} == {pn}.lowest)) ({x} {op} {y})"
            )),
        ))
    }

    /// Rust's numeric methods (`x.count_ones()`, `x.round()` …) with Rust's results: Futhark's
    /// function where it means the same, Rust's definition where Futhark's differs (`round` is
    /// half away from zero, Futhark's half to even; `signum` of a float is ±1.0 for ±0.0) or is
    /// missing (`reverse_bits`, `swap_bytes`, the saturating operations). The counts are of the
    /// receiver's type.
    fn method_code(&mut self, i: Intrinsic, a: Vec<Code>, tys: &[Type]) -> R<Code> {
        let Some((name, _)) = i.method() else {
            return Err(GenError::Unsupported(format!("`{}`", i.name())));
        };
        let p = self.prim(&tys[0])?;
        let pn = p.futhark_name();
        let bits = p.bits();
        let mut lines = Vec::new();
        let mut shared = Vec::new();
        for (k, c) in a.into_iter().enumerate() {
            shared.push(self.share(c, ["x", "y", "z"][k.min(2)], &mut lines).arg());
        }
        let x = shared.first().cloned().unwrap_or_default();
        let y = shared.get(1).cloned().unwrap_or_default();
        let z = shared.get(2).cloned().unwrap_or_default();
        let (lo, hi) = (format!("{pn}.lowest"), format!("{pn}.highest"));
        let text = match name {
            // On an unsigned type: no sign to test, no `-1` divisor.
            "saturating_add" if p.is_unsigned() => {
                format!("let r = {x} + {y} in if r < {x} then {hi} else r")
            }
            "saturating_sub" if p.is_unsigned() => {
                format!("if {x} < {y} then 0{pn} else {x} - {y}")
            }
            "saturating_mul" if p.is_unsigned() => format!(
                "if {x} == 0{pn} || {y} == 0{pn} then 0{pn} else let r = {x} * {y} in if r // {y} != {x} then {hi} else r"
            ),
            "div_ceil" if p.is_unsigned() => {
                let d = self.fresh("d");
                format!("let {d} = {x} // {y} in if {x} %% {y} != 0{pn} then {d} + 1{pn} else {d}")
            }
            "rem_euclid" if p.is_unsigned() => format!("{x} %% {y}"),
            "div_euclid" if p.is_unsigned() => format!("{x} // {y}"),
            "count_ones" => format!("u32.i32 ({pn}.popc {x})"),
            "leading_zeros" => format!("u32.i32 ({pn}.clz {x})"),
            "trailing_zeros" => format!("u32.i32 ({pn}.ctz {x})"),
            "reverse_bits" => format!(
                "(loop (r, v) = (0{pn}, {x}) for _k < {bits} do ((r << 1{pn}) | (v & 1{pn}), v >>> 1{pn})).0"
            ),
            "swap_bytes" => format!(
                "(loop (r, v) = (0{pn}, {x}) for _k < {} do ((r << 8{pn}) | (v & 255{pn}), v >>> 8{pn})).0",
                bits / 8
            ),
            "rotate_left" | "rotate_right" => {
                let q = self.prim(&tys[1])?.futhark_name();
                let (a, b) = if name == "rotate_left" {
                    ("<<", ">>>")
                } else {
                    (">>>", "<<")
                };
                format!(
                    "let k = {pn}.{q} {y} & {m}{pn} in if k == 0 then {x} else ({x} {a} k) | ({x} {b} ({bits}{pn} - k))",
                    m = bits - 1
                )
            }
            "wrapping_add" => format!("{x} + {y}"),
            "wrapping_sub" => format!("{x} - {y}"),
            "wrapping_mul" => format!("{x} * {y}"),
            "wrapping_neg" => format!("0{pn} - {x}"),
            "saturating_add" => format!(
                "let r = {x} + {y} in if (({x} ^ r) & ({y} ^ r)) < 0 then (if {x} < 0 then {lo} else {hi}) else r"
            ),
            "saturating_sub" => format!(
                "let r = {x} - {y} in if (({x} ^ {y}) & ({x} ^ r)) < 0 then (if {x} < 0 then {lo} else {hi}) else r"
            ),
            "saturating_mul" => format!(
                "if {x} == 0 || {y} == 0 then 0 else let sat = if ({x} < 0) != ({y} < 0) then {lo} else {hi} in if ({x} == -1 && {y} == {lo}) || ({y} == -1 && {x} == {lo}) then sat else let r = {x} * {y} in if r // {y} != {x} then sat else r"
            ),
            "signum" if p.is_float() => {
                format!("if {pn}.isnan {x} then {x} else {pn}.copysign 1 {x}")
            }
            "signum" => format!("{pn}.sgn {x}"),
            "floor" | "ceil" | "trunc" | "cbrt" | "log2" | "log10" | "tan" | "asin" | "acos"
            | "atan" | "sinh" | "cosh" | "tanh" => format!("{pn}.{name} {x}"),
            "atan2" | "hypot" => format!("{pn}.{name} {x} {y}"),
            "mul_add" => format!("{pn}.fma {x} {y} {z}"),
            "round" => format!(
                "let t = {pn}.trunc {x} in if {pn}.abs ({x} - t) >= 0.5 then t + {pn}.copysign 1 {x} else t"
            ),
            "fract" => format!("{x} - {pn}.trunc {x}"),
            "exp2" => format!("2{pn} ** {x}"),
            "is_nan" => format!("{pn}.isnan {x}"),
            "is_finite" => format!("!({pn}.isnan {x} || {pn}.isinf {x})"),
            // Square and multiply in `u32` steps (`wrapping_pow(n as u32)`): Futhark's `**`
            // loops forever on a negative exponent.
            "pow" => {
                let q = self.prim(&tys[1])?.futhark_name();
                let (r, b, e) = (self.fresh("r"), self.fresh("b"), self.fresh("e"));
                format!(
                    "(loop ({r}, {b}, {e}) = (1{pn}, {x}, u32.{q} {y}) while {e} != 0u32 do ((if ({e} & 1u32) == 1u32 then {r} * {b} else {r}), {b} * {b}, {e} >> 1u32)).0"
                )
            }
            // Digit by digit from the highest power of four: exact, without floats or overflow.
            "isqrt" => {
                let (v, c, d) = (self.fresh("v"), self.fresh("c"), self.fresh("d"));
                format!(
                    "assert ({x} >= 0{pn}) ((loop ({v}, {c}, {d}) = ({x}, 0{pn}, 1{pn} << {s}{pn}) while {d} != 0{pn} do if {v} >= {c} + {d} then ({v} - {c} - {d}, ({c} >> 1{pn}) + {d}, {d} >> 2{pn}) else ({v}, {c} >> 1{pn}, {d} >> 2{pn})).1)",
                    s = bits - 2
                )
            }
            // Rust's is the unsigned type of the width: the wrapping difference's bits as it.
            "abs_diff" => format!(
                "{}.{pn} (if {x} > {y} then {x} - {y} else {y} - {x})",
                p.unsigned().unwrap_or(p).futhark_name()
            ),
            // Division by zero is Futhark's error; `MIN / -1` an assertion, where Rust panics.
            "div_ceil" => {
                let (d, r) = (self.fresh("d"), self.fresh("r"));
                format!(
                    "if {y} == (-1{pn}) then assert ({x} != {pn}.lowest) (0{pn} - {x}) else let {d} = {x} // {y} in let {r} = {x} %% {y} in if {r} != 0{pn} && (({x} < 0{pn}) == ({y} < 0{pn})) then {d} + 1{pn} else {d}"
                )
            }
            "rem_euclid" => {
                let r = self.fresh("r");
                format!(
                    "if {y} == (-1{pn}) then assert ({x} != {pn}.lowest) 0{pn} else let {r} = {x} %% {y} in if {r} < 0{pn} then {r} + (if {y} < 0{pn} then 0{pn} - {y} else {y}) else {r}"
                )
            }
            "div_euclid" => {
                let q = self.fresh("q");
                format!(
                    "if {y} == (-1{pn}) then assert ({x} != {pn}.lowest) (0{pn} - {x}) else let {q} = {x} // {y} in if ({x} %% {y}) < 0{pn} then (if {y} > 0{pn} then {q} - 1{pn} else {q} + 1{pn}) else {q}"
                )
            }
            "is_power_of_two" => format!("{x} > 0{pn} && ({x} & ({x} - 1{pn})) == 0{pn}"),
            // 0 where the power is not representable, as Rust's release build on overflow.
            "next_power_of_two" => {
                let e = self.fresh("e");
                format!(
                    "if {x} <= 1{pn} then 1{pn} else let {e} = {bits}i32 - {pn}.clz ({x} - 1{pn}) in if {e} >= {s}i32 then 0{pn} else 1{pn} << {pn}.i32 {e}",
                    s = if p.is_unsigned() { bits } else { bits - 1 }
                )
            }
            // Rust's (compiler-builtins' `__powidf2`): square and multiply, then the reciprocal
            // for a negative exponent, so that the results agree bit for bit.
            "powi" => {
                let q = self.prim(&tys[1])?.futhark_name();
                let (e, m, a, k) = (
                    self.fresh("e"),
                    self.fresh("m"),
                    self.fresh("a"),
                    self.fresh("k"),
                );
                format!(
                    "let {e} = i32.{q} {y} in let ({m}, _, _) = loop ({m}, {a}, {k}) = (1{pn}, {x}, u32.i32 (if {e} < 0i32 then 0i32 - {e} else {e})) while {k} != 0u32 do ((if ({k} & 1u32) == 1u32 then {m} * {a} else {m}), {a} * {a}, {k} >> 1u32) in if {e} < 0i32 then 1{pn} / {m} else {m}"
                )
            }
            // Rust's `assert!(min <= max)`, which a NaN bound fails too (tested apart: Futhark
            // folds `y <= y` to true).
            "clamp" => {
                let ok = if p.is_float() {
                    format!("!({pn}.isnan {y} || {pn}.isnan {z}) && {y} <= {z}")
                } else {
                    format!("{y} <= {z}")
                };
                format!("assert ({ok}) (if {x} < {y} then {y} else if {x} > {z} then {z} else {x})")
            }
            "to_radians" | "to_degrees" => {
                let k = match (name, p) {
                    ("to_radians", Number::F32) => format!("{:?}", std::f32::consts::PI / 180.0),
                    ("to_radians", _) => format!("{:?}", std::f64::consts::PI / 180.0),
                    (_, Number::F32) => format!("{:?}", 57.295_78_f32),
                    _ => format!("{:?}", 180.0 / std::f64::consts::PI),
                };
                format!("{x} * {k}{pn}")
            }
            _ => return Err(GenError::Unsupported(format!("`.{name}()`"))),
        };
        Ok(with_lets(lines, Code::open(text)))
    }

    /// `a ++ b`; for rows, `b`'s rows take the size of `a`'s.
    pub(super) fn concat(&mut self, a: Vec<Code>, t: &Type) -> R<Code> {
        let mut it = a.into_iter();
        let (Some(x), Some(y)) = (it.next(), it.next()) else {
            return Err(GenError::Unsupported(
                "`concat` with missing arguments".into(),
            ));
        };
        if !is_rows(t) {
            return Ok(binop(&x, "++", &y));
        }
        let mut lines = Vec::new();
        let x = self.share(x, "a", &mut lines);
        self.helpers.insert(Helper::RowsLike);
        let y = apply_text(Helper::RowsLike.name(), &[x.clone(), y]);
        Ok(with_lets(lines, binop(&x, "++", &y)))
    }

    /// An index or a count `c` of integer type `t` as Futhark's `i64`.
    pub(super) fn index(&self, c: Code, t: &Type) -> R<Code> {
        Ok(match self.prim(t)? {
            Number::I64 => c,
            p => apply_text(&format!("i64.{}", p.futhark_name()), &[c]),
        })
    }

    /// `subsequence s o n`: at most `n` elements from `o`, clamped to the end of `s` as in PMExpr
    /// (a negative `o` or `n` is an invalid slice, an error, as in PMExpr).
    pub(super) fn subsequence(&mut self, a: Vec<Code>) -> Code {
        let mut lines = Vec::new();
        let mut it = a.into_iter();
        let s = it.next().unwrap_or_else(|| Code::atom("()"));
        let o = it.next().unwrap_or_else(|| Code::atom("0i64"));
        let n = it.next().unwrap_or_else(|| Code::atom("0i64"));
        let s = self.share(s, "s", &mut lines);
        let start = self.fresh("start");
        let end = self.fresh("end");
        let len = apply_text("length", std::slice::from_ref(&s));
        lines.push(let_line(&start, &apply_text("i64.min", &[o, len.clone()])));
        lines.push(let_line(
            &end,
            &apply_text(
                "i64.min",
                &[binop(&Code::atom(start.clone()), "+", &n), len],
            ),
        ));
        with_lets(lines, Code::closed(format!("{}[{start}:{end}]", s.text)))
    }
}

/// Whether two expressions are the same variable.
pub(super) fn same_var(a: &Expr, b: &Expr) -> bool {
    matches!((&a.kind, &b.kind), (ExprKind::Var { ident: x, .. }, ExprKind::Var { ident: y, .. }) if x.id == y.id)
}

/// Whether `t` is a sequence of sequences (rows, whose sizes Futhark checks).
pub(super) fn is_rows(t: &Type) -> bool {
    matches!(t, Type::Seq(e) if matches!(**e, Type::Seq(_)))
}

/// Whether the expression's value is an array nothing else refers to (Futhark gives these
/// constructs unique results), so that an in-place update on it is allowed.
pub(super) fn is_fresh(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Seq(_) => true,
        ExprKind::Keyword { kw, .. } => matches!(kw, Keyword::Map | Keyword::Map2 | Keyword::Hist),
        ExprKind::App { func, .. } => matches!(
            func.kind,
            ExprKind::Intrinsic(Intrinsic::Create | Intrinsic::Set | Intrinsic::Concat)
        ),
        _ => false,
    }
}

/// How many times each variable occurs in `e`.
pub(super) fn use_counts(e: &Expr) -> HashMap<VarId, usize> {
    let mut n = HashMap::new();
    e.walk(&mut |x| {
        if let ExprKind::Var { ident, .. } = &x.kind {
            *n.entry(ident.id).or_insert(0) += 1;
        }
    });
    n
}

/// Takes the uses in `e` off `counts`.
fn forget_uses(e: &Expr, counts: &mut HashMap<VarId, usize>) {
    e.walk(&mut |x| {
        if let ExprKind::Var { ident, .. } = &x.kind
            && let Some(c) = counts.get_mut(&ident.id)
        {
            *c = c.saturating_sub(1);
        }
    });
}

/// Whether evaluating `e` cannot fail (no indexing, no integer division, no allocation of a
/// negative size): such a value may be computed once for `replicate`, even when `n` is 0.
pub(super) fn cannot_fail(e: &Expr) -> bool {
    use Intrinsic::*;
    match &e.kind {
        ExprKind::Var { .. } | ExprKind::Lit(_) | ExprKind::Intrinsic(_) => true,
        ExprKind::Record(fs) => fs.iter().all(|(_, e)| cannot_fail(e)),
        ExprKind::Seq(es) => es.iter().all(cannot_fail),
        ExprKind::Proj { expr, .. } => cannot_fail(expr),
        ExprKind::Let { value, body, .. } => cannot_fail(value) && cannot_fail(body),
        ExprKind::App { func, args } => {
            let safe = match func.kind {
                // `isqrt` of a negative number, `rem_euclid` by zero, `clamp`'s bounds …
                ExprKind::Intrinsic(i) if i.method_may_fail() => false,
                ExprKind::Intrinsic(i) => !matches!(
                    i,
                    DivI | ModI
                        | NumRem
                        | NumDiv
                        | Get
                        | Head
                        | Tail
                        | Set
                        | Subsequence
                        | Create
                        | Foldl
                        | TensorGet
                        | TensorSet
                        | TensorLinearGet
                        | TensorLinearSet
                        | TensorRank
                        | TensorShape
                        | TensorSub
                        | TensorSlice
                        | TensorGemm
                ),
                _ => false,
            };
            safe && args.iter().all(cannot_fail)
        }
        _ => false,
    }
}
