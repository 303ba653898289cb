//! The generator of one definition: expressions and patterns; the keywords are in `keyword`, the
//! intrinsics in `intrinsic`.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::code::{
    Code, apply_text, field_name, if_chain, indent, is_one_tuple, let_line, lit, literal_suffixes,
    record_code, var_name, with_lets,
};
use super::{Context, FutType, GenError, Helper, Instantiation};
use crate::ast::{Expr, ExprKind, Lit, Param, Pat, PatKind, VarId};
use crate::codegen::numbers::Number;
use crate::intrinsics::{Intrinsic, Keyword};
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
                    Lit::Float(x, y) if x.is_finite() && float == "f32" => format!("{y:?}{float}"),
                    Lit::Float(x, _) if x.is_finite() => format!("{x:?}{float}"),
                    Lit::Float(..) => {
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
