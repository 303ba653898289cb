//! Expressions: the generator's state, function bodies under construction, and the translation
//! of expressions, calls and loops into statements.

use std::collections::HashMap;
use std::fmt::Write;

use super::abi::Check;
use super::code::{
    Literal, UNIT, c_ident, field_name, float_lit, float32_lit, int_lit, int32_lit, is_atom,
};
use super::peephole::{is_temp, strip_parens};
use super::scrut::Scrut;
use super::{Gen, Result, unsupported};
use crate::ast::{Expr, ExprKind, Lit, NeverKind, Param, VarId};
use crate::codegen::numbers::Number;
use crate::error::SpanRange;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::{Def, Origin};
use crate::types::{Label, Type};

/// The statements of one function body under construction.
pub(super) struct Block {
    pub(super) lines: Vec<(usize, String)>,
    pub(super) depth: usize,
    /// Variables in scope → the C expression for their value.
    pub(super) env: HashMap<VarId, String>,
    /// Variables bound to a record literal → its fields (each a name or a literal): such a
    /// record is never stored, its projections and patterns read the fields.
    pub(super) records: HashMap<VarId, Scrut>,
    pub(super) fresh: usize,
}

impl Block {
    pub(super) fn emit(&mut self, line: impl Into<String>) {
        self.lines.push((self.depth, line.into()));
    }

    pub(super) fn fresh(&mut self, stem: &str) -> String {
        self.fresh += 1;
        format!("{stem}{}", self.fresh)
    }
}

/// Where the value of an expression goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Dest {
    /// A new `const` local of this name (a `let`).
    Decl(String),
    /// An existing variable (the result of a branch or the accumulator of a loop).
    Assign(String),
    /// `return` from the function.
    Return,
}

/// A function argument of a loop or fold: a function and its bound arguments, or an intrinsic.
pub(super) enum Callee {
    Fn {
        name: String,
        args: Vec<String>,
        arity: usize,
    },
    Intrinsic(Intrinsic),
}

/// The parameters and body of a definition (`lam x. lam y. e`, nested or merged).
pub(super) fn lambda_of(def: &Def) -> (Vec<&Param>, &Expr) {
    let mut params = Vec::new();
    let mut e = &def.value;
    while let ExprKind::Lam { params: ps, body } = &e.kind {
        params.extend(ps.iter());
        e = body;
    }
    (params, e)
}

pub(super) fn body_of(def: &Def) -> &Expr {
    lambda_of(def).1
}

impl<'a> Gen<'a> {
    // ----- device functions -----

    /// A device function: its prototype and its definition.
    pub(super) fn device_fn(&mut self, def: &Def) -> Result<(String, String)> {
        let (params, body) = lambda_of(def);
        if !matches!(def.value.kind, ExprKind::Lam { .. }) {
            return unsupported(
                def.ident.span,
                format!(
                    "`{}` is used on the device but is not a function",
                    def.ident.name
                ),
            );
        }
        let name = c_ident(&def.ident.name, def.ident.id);
        self.current = name.clone();
        let mut b = Block {
            lines: Vec::new(),
            depth: 1,
            env: HashMap::new(),
            records: HashMap::new(),
            fresh: 0,
        };
        let mut decl = Vec::new();
        for p in &params {
            let c = c_ident(&p.ident.name, p.ident.id);
            decl.push(format!("{} {c}", self.c_type(&p.ty, p.ident.span)?));
            b.env.insert(p.ident.id, c);
        }
        let ret = self.ret_type(&body.ty, body.span)?;
        let proto = format!("__device__ {ret} {name}({})", decl.join(", "));
        // A function that calls itself only in tail position is a loop over its parameters, as
        // on the CPU targets and in Futhark: no call per step, so no device stack per step.
        let looped = crate::tailrec::def_loop(def).is_ok_and(|l| l.calls > 0);
        if looped {
            let mut ps = Vec::new();
            for p in &params {
                ps.push((
                    c_ident(&p.ident.name, p.ident.id),
                    self.ity(&p.ty, p.ident.span)?,
                ));
            }
            self.tail = Some((def.ident.id, ps));
            b.emit("for (;;) {");
            b.depth += 1;
        }
        let body_result = self.value(&mut b, body, Some(Dest::Return));
        self.tail = None;
        body_result?;
        if looped {
            if self.is_unit(&self.ity(&body.ty, body.span)?) {
                b.emit("return;");
            }
            b.depth -= 1;
            b.emit("}");
        }
        let mut text = String::new();
        let ty = self.ity(&def.value.ty, def.ident.span)?;
        let origin = match &def.origin {
            Origin::Item(i) => format!(" (#[pmexpr] fn at {})", i.location),
            Origin::Local | Origin::Site => String::new(),
        };
        let _ = writeln!(text, "// `{}`: {}{origin}", def.ident.name, self.shown(&ty));
        let _ = writeln!(text, "{proto} {{");
        for (depth, line) in &b.lines {
            let _ = writeln!(text, "{}{line}", "    ".repeat(*depth));
        }
        let _ = writeln!(text, "}}");
        Ok((proto, text))
    }

    /// A tail call of the function whose loop is being generated: every new value computed
    /// into a local first (one may read a parameter another changes), then the parameters that
    /// change assigned, then the next iteration.
    fn tail_call(&mut self, b: &mut Block, args: &[Expr]) -> Result<String> {
        let params = self.tail.clone().map(|(_, ps)| ps).unwrap_or_default();
        let mut assigns = Vec::new();
        for (a, (p, ty)) in args.iter().zip(&params) {
            let v = self.value(b, a, None)?;
            if v == *p || self.is_unit(ty) {
                continue;
            }
            let next = b.fresh("next");
            let v = self.bind(b, ty, v, Some(Dest::Decl(next)), a.span)?;
            assigns.push(format!("{p} = {v};"));
        }
        for line in assigns {
            b.emit(line);
        }
        b.emit("continue;");
        Ok(String::new())
    }

    /// A literal of the instantiated type `ty`. An integer literal that does not fit its type
    /// (an `i32`, a `u8`, …) fails when it is evaluated, as on the CPU targets (where the Rust
    /// type is known only at run time, so the check is a run-time one there too).
    pub(super) fn lit(&mut self, l: &Lit, ty: &Type, span: SpanRange) -> Literal {
        Literal::Value(match (l, self.num(ty)) {
            (Lit::Int(i), Some(Number::I32)) => match i32::try_from(*i) {
                Ok(x) => int32_lit(x),
                Err(_) => return self.literal_too_big("int", *i, span),
            },
            // Another integer type: the value converted to its C type, if it fits (an `i64` that
            // fits is written as one; a `u64` above `i64::MAX` as an unsigned C literal).
            (Lit::Int(i), Some(n)) if n.is_int() => {
                if !n.int_range().is_some_and(|(lo, hi)| (lo..=hi).contains(i)) {
                    return self.literal_too_big(n.c_type(), *i, span);
                }
                match i64::try_from(*i) {
                    Ok(x) if matches!(n, Number::I64 | Number::Isize) => int_lit(x),
                    Ok(x) => format!("(({}){})", n.c_type(), int_lit(x)),
                    Err(_) => format!("(({}){i}ULL)", n.c_type()),
                }
            }
            // The literal read as an `f32` (rounded once from its digits, as Rust reads it); the
            // shortest text that reads back as that `f32` is a C++ `float` literal with `f`
            // appended.
            (Lit::Float(_, x), Some(Number::F32)) => float32_lit(*x),
            (Lit::Int(i), _) => match i64::try_from(*i) {
                Ok(x) => int_lit(x),
                Err(_) => return self.literal_too_big("long long", *i, span),
            },
            (Lit::Float(x, _), _) => float_lit(*x),
            (Lit::Bool(v), _) => v.to_string(),
            (Lit::Unit, _) => UNIT.into(),
        })
    }

    /// A literal `i` that does not fit its C type `c_type`: the failure the CPU targets report
    /// when it is evaluated (the value shown saturated to `long long`, the prelude's argument).
    fn literal_too_big(&mut self, c_type: &str, i: i128, span: SpanRange) -> Literal {
        let chk = self.check("integer literal", span);
        let shown = i64::try_from(i).unwrap_or(if i < 0 { i64::MIN } else { i64::MAX });
        Literal::Fails(format!(
            "pm_literal_too_big<{c_type}>({chk}, {})",
            int_lit(shown)
        ))
    }

    /// Registers a runtime check; its number.
    pub(super) fn check(&mut self, construct: &str, span: SpanRange) -> u32 {
        let id = self.checks.len() as u32 + 1;
        self.checks.push(Check {
            id,
            construct: construct.to_string(),
            function: self.current.clone(),
            span,
        });
        id
    }

    /// Delivers a C expression without effects to `dest`: a `const` local (a `let`), an
    /// assignment to a result variable, or a `return`; without `dest`, the expression itself.
    pub(super) fn finish(
        &mut self,
        b: &mut Block,
        ty: &Type,
        c: String,
        dest: Option<Dest>,
        span: SpanRange,
    ) -> Result<String> {
        if self.is_unit(ty) {
            return Ok(UNIT.into());
        }
        // A temporary declared by the line before, delivered now, is that line's expression
        // (temporaries are used once, so the declaration can go).
        let c = match (&dest, b.lines.last()) {
            (Some(_), Some((depth, line))) if *depth == b.depth && is_temp(&c) => {
                let init = line
                    .strip_prefix("const ")
                    .and_then(|l| l.split_once(&format!(" {c} = ")))
                    .and_then(|(_, e)| e.strip_suffix(';'))
                    .map(str::to_string);
                match init {
                    Some(e) => {
                        b.lines.pop();
                        e
                    }
                    None => c,
                }
            }
            _ => c,
        };
        match dest {
            None => Ok(c),
            Some(Dest::Decl(h)) => {
                let t = self.c_type_of(ty, span)?;
                b.emit(format!("const {t} {h} = {};", strip_parens(&c)));
                Ok(h)
            }
            Some(Dest::Assign(r)) => {
                if r != c {
                    b.emit(format!("{r} = {};", strip_parens(&c)));
                }
                Ok(r)
            }
            Some(Dest::Return) => {
                b.emit(format!("return {};", strip_parens(&c)));
                Ok(String::new())
            }
        }
    }

    /// A C expression with effects (a call, a checked access): evaluated now, as a statement, so
    /// that effects happen in PMExpr's order (C++ leaves the order of arguments unspecified).
    pub(super) fn bind(
        &mut self,
        b: &mut Block,
        ty: &Type,
        c: String,
        dest: Option<Dest>,
        span: SpanRange,
    ) -> Result<String> {
        if self.is_unit(ty) {
            b.emit(format!("{c};"));
            return Ok(UNIT.into());
        }
        let dest = dest.unwrap_or_else(|| Dest::Decl(b.fresh("tmp")));
        self.finish(b, ty, c, Some(dest), span)
    }

    /// Translates `e`, emitting statements into `b`; returns a C expression for its value that
    /// has no effects and reads only locals that never change afterwards.
    pub(super) fn value(&mut self, b: &mut Block, e: &Expr, dest: Option<Dest>) -> Result<String> {
        let ty = self.ity(&e.ty, e.span)?;
        match &e.kind {
            ExprKind::Var { ident, .. } => match b.env.get(&ident.id) {
                Some(c) => {
                    let c = c.clone();
                    self.finish(b, &ty, c, dest, e.span)
                }
                None if self.defs.contains_key(&ident.id) => unsupported(
                    e.span,
                    format!(
                        "the function `{}` used as a value (CUDA code calls functions, or passes \
                         them to loops and folds)",
                        ident.name
                    ),
                ),
                None => unsupported(e.span, format!("`{}` is not in scope", ident.name)),
            },
            ExprKind::Lit(l) => match self.lit(l, &ty, e.span) {
                // Failing is an effect: it happens in PMExpr's order.
                Literal::Fails(c) => self.bind(b, &ty, c, dest, e.span),
                Literal::Value(c) => self.finish(b, &ty, c, dest, e.span),
            },
            ExprKind::Intrinsic(i) => {
                unsupported(e.span, format!("the intrinsic `{i}` used as a value"))
            }
            ExprKind::Lam { .. } => unsupported(e.span, "a lambda inside CUDA code (not lifted)"),
            ExprKind::RecLet { .. } => {
                unsupported(e.span, "`fn` items inside CUDA code (not lifted)")
            }
            ExprKind::App { func, args } => match &func.kind {
                ExprKind::Intrinsic(i) => self.intrinsic(b, *i, args, &ty, dest, e.span),
                ExprKind::Var { ident, .. }
                    if dest == Some(Dest::Return)
                        && self
                            .tail
                            .as_ref()
                            .is_some_and(|(f, ps)| *f == ident.id && ps.len() == args.len()) =>
                {
                    self.tail_call(b, args)
                }
                ExprKind::Var { ident, .. } if self.defs.contains_key(&ident.id) => {
                    let def = self.defs[&ident.id];
                    let arity = lambda_of(def).0.len();
                    if args.len() != arity {
                        return unsupported(
                            e.span,
                            format!(
                                "`{}` applied to {} of its {arity} arguments outside the function \
                                 argument of a loop or fold",
                                ident.name,
                                args.len()
                            ),
                        );
                    }
                    let mut cargs = Vec::new();
                    for a in args {
                        cargs.push(self.value(b, a, None)?);
                    }
                    let call = format!(
                        "{}({})",
                        c_ident(&def.ident.name, def.ident.id),
                        cargs.join(", ")
                    );
                    self.bind(b, &ty, call, dest, e.span)
                }
                _ => unsupported(
                    func.span,
                    "a call of a function value (CUDA code calls named functions only)",
                ),
            },
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                let bty = self.ity(&binder.ty, binder.ident.span)?;
                let wildcard = binder.ident.name == "_";
                if !wildcard
                    && let ExprKind::Record(fs) = &value.kind
                    && !fs.is_empty()
                {
                    let scrut = self.record_fields(b, value, fs)?;
                    b.env.insert(binder.ident.id, scrut.c());
                    b.records.insert(binder.ident.id, scrut);
                    return self.value(b, body, dest);
                }
                let name = (!wildcard && !self.is_unit(&bty))
                    .then(|| c_ident(&binder.ident.name, binder.ident.id));
                let v = self.value(b, value, name.map(Dest::Decl))?;
                if !wildcard {
                    b.env.insert(binder.ident.id, v);
                }
                self.value(b, body, dest)
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => self.match_(b, e, scrutinee, pat, then, otherwise, dest),
            ExprKind::Never(kind) => {
                let (code, construct) = match kind {
                    NeverKind::User => ("PM_NEVER", "never!()"),
                    NeverKind::NoArm => ("PM_NO_MATCH", "match"),
                };
                let chk = self.check(construct, e.span);
                if self.is_unit(&ty) {
                    b.emit(format!("pm_fail({code}, {chk}, 0, 0);"));
                    Ok(UNIT.into())
                } else {
                    let t = self.c_type_of(&ty, e.span)?;
                    self.bind(
                        b,
                        &ty,
                        format!("pm_fail_value<{t}>({code}, {chk})"),
                        dest,
                        e.span,
                    )
                }
            }
            ExprKind::Record(fs) => {
                if fs.is_empty() {
                    return Ok(UNIT.into());
                }
                // Fields are evaluated in the order written, and stored in label order.
                let mut vals: HashMap<&Label, String> = HashMap::new();
                for (l, x) in fs {
                    let v = self.value(b, x, None)?;
                    vals.insert(l, v);
                }
                let Type::Record(tfs) = &ty else {
                    return unsupported(e.span, format!("a record of type `{ty}`"));
                };
                let name = self.c_type_of(&ty, e.span)?;
                let mut items = Vec::new();
                for (l, _) in tfs {
                    match vals.get(l) {
                        Some(v) => items.push(v.clone()),
                        None => {
                            return unsupported(e.span, format!("a record without field `{l}`"));
                        }
                    }
                }
                self.finish(
                    b,
                    &ty,
                    format!("{name}{{{}}}", items.join(", ")),
                    dest,
                    e.span,
                )
            }
            ExprKind::Proj { expr, label } => {
                if let ExprKind::Var { ident, .. } = &expr.kind
                    && let Some(Scrut::Fields(..)) = b.records.get(&ident.id)
                {
                    let c = b.records[&ident.id].field(label).c();
                    return self.finish(b, &ty, c, dest, e.span);
                }
                let r = self.value(b, expr, None)?;
                if self.is_unit(&ty) {
                    return Ok(UNIT.into());
                }
                let c = format!("{r}.{}", field_name(label));
                self.finish(b, &ty, c, dest, e.span)
            }
            ExprKind::Seq(_) => unsupported(
                e.span,
                "a sequence literal outside a tensor index (CUDA code cannot build sequences)",
            ),
            ExprKind::Keyword { kw, args } => self.keyword(b, e, *kw, args, &ty, dest),
            ExprKind::Soac(_) => unsupported(
                e.span,
                "a fused composition (the optimizer makes them for the CPU targets only)",
            ),
            ExprKind::Imp(_) => unsupported(e.span, "imperative syntax that was not lowered"),
        }
    }

    pub(super) fn keyword(
        &mut self,
        b: &mut Block,
        e: &Expr,
        kw: Keyword,
        args: &[Expr],
        ty: &Type,
        dest: Option<Dest>,
    ) -> Result<String> {
        match kw {
            // Inside device code a `par_loop` runs sequentially: its iterations are independent
            // by the language's contract, so any order is a correct one.
            // The loop variable has the count's type, as in Rust's `for i in 0..n`.
            Keyword::ParLoop | Keyword::SeqLoop => {
                let ix = self.ity(&args[0].ty, args[0].span)?;
                let cty = self.c_type(&ix, args[0].span)?;
                let n = self.value(b, &args[0], None)?;
                let n = self.atom(b, &ix, n, "n", args[0].span)?;
                let callee = self.callee(b, &args[1])?;
                let i = b.fresh("i");
                b.emit(format!("for ({cty} {i} = 0; {i} < {n}; ++{i}) {{"));
                b.depth += 1;
                let call = self.apply(b, &callee, vec![i], &[ix], &Type::unit(), e.span)?;
                if call != UNIT {
                    b.emit(format!("{call};"));
                }
                b.depth -= 1;
                b.emit("}");
                Ok(UNIT.into())
            }
            Keyword::SeqLoopAcc => {
                let acc0 = self.value(b, &args[0], None)?;
                let ix = self.ity(&args[1].ty, args[1].span)?;
                let cty = self.c_type(&ix, args[1].span)?;
                let n = self.value(b, &args[1], None)?;
                let n = self.atom(b, &ix, n, "n", args[1].span)?;
                let callee = self.callee(b, &args[2])?;
                self.accumulate(
                    b,
                    e.span,
                    ty,
                    acc0,
                    dest,
                    |i| {
                        (
                            format!("for ({cty} {i} = 0; {i} < {n}; ++{i}) {{"),
                            i.to_string(),
                            ix.clone(),
                        )
                    },
                    &callee,
                )
            }
            Keyword::Map
            | Keyword::Map2
            | Keyword::Reduce
            | Keyword::Flatten
            | Keyword::Scan
            | Keyword::Filter
            | Keyword::Scatter
            | Keyword::Hist => unsupported(
                e.span,
                format!(
                    "`{}` in CUDA code (a Futhark-class keyword: use a separate `accelerate!`)",
                    kw.name()
                ),
            ),
        }
    }

    /// The loop of `seq_loop_acc` or `foldl`: `header(i)` gives the `for` line, the element
    /// passed to the function, and its type.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn accumulate(
        &mut self,
        b: &mut Block,
        span: SpanRange,
        ty: &Type,
        acc0: String,
        dest: Option<Dest>,
        header: impl FnOnce(&str) -> (String, String, Type),
        callee: &Callee,
    ) -> Result<String> {
        let i = b.fresh("i");
        let (for_line, elem, elem_ty) = header(&i);
        let tys = [ty.clone(), elem_ty];
        if self.is_unit(ty) {
            b.emit(for_line);
            b.depth += 1;
            let call = self.apply(b, callee, vec![UNIT.into(), elem], &tys, ty, span)?;
            if call != UNIT {
                b.emit(format!("{call};"));
            }
            b.depth -= 1;
            b.emit("}");
            return Ok(UNIT.into());
        }
        // The accumulator is the `let`'s variable or the caller's result variable when there is
        // one, else a local of its own.
        let acc = match &dest {
            Some(Dest::Assign(r)) => {
                if *r != acc0 {
                    b.emit(format!("{r} = {};", strip_parens(&acc0)));
                }
                r.clone()
            }
            Some(Dest::Decl(h)) => h.clone(),
            None | Some(Dest::Return) => b.fresh("acc"),
        };
        if !matches!(dest, Some(Dest::Assign(_))) {
            let t = self.c_type_of(ty, span)?;
            b.emit(format!("{t} {acc} = {};", strip_parens(&acc0)));
        }
        b.emit(for_line);
        b.depth += 1;
        let next = self.apply(b, callee, vec![acc.clone(), elem], &tys, ty, span)?;
        b.emit(format!("{acc} = {};", strip_parens(&next)));
        b.depth -= 1;
        b.emit("}");
        match dest {
            Some(Dest::Return) => self.finish(b, ty, acc, dest, span),
            _ => Ok(acc),
        }
    }

    /// A value used more than once: a local unless it is a name or a literal.
    pub(super) fn atom(
        &mut self,
        b: &mut Block,
        ty: &Type,
        c: String,
        stem: &str,
        span: SpanRange,
    ) -> Result<String> {
        if is_atom(&c) {
            return Ok(c);
        }
        let name = b.fresh(stem);
        self.bind(b, ty, c, Some(Dest::Decl(name)), span)
    }

    /// The function argument of a loop or fold; its bound arguments are evaluated now, once.
    pub(super) fn callee(&mut self, b: &mut Block, f: &Expr) -> Result<Callee> {
        let (head, bound): (&Expr, &[Expr]) = match &f.kind {
            ExprKind::App { func, args } => (func, args),
            _ => (f, &[]),
        };
        match &head.kind {
            ExprKind::Intrinsic(i) if bound.is_empty() => Ok(Callee::Intrinsic(*i)),
            ExprKind::Var { ident, .. } if self.defs.contains_key(&ident.id) => {
                let def = self.defs[&ident.id];
                let mut args = Vec::new();
                for a in bound {
                    args.push(self.value(b, a, None)?);
                }
                Ok(Callee::Fn {
                    name: c_ident(&def.ident.name, def.ident.id),
                    args,
                    arity: lambda_of(def).0.len(),
                })
            }
            _ => unsupported(
                f.span,
                "the function argument of a loop or fold must name a function or an intrinsic",
            ),
        }
    }

    /// The C expression of a call of `callee` with `extra` last arguments (a user function's
    /// call is returned as is, for the caller to place as a statement or an assignment).
    pub(super) fn apply(
        &mut self,
        b: &mut Block,
        callee: &Callee,
        extra: Vec<String>,
        extra_tys: &[Type],
        ty: &Type,
        span: SpanRange,
    ) -> Result<String> {
        match callee {
            Callee::Fn { name, args, arity } => {
                if args.len() + extra.len() != *arity {
                    return unsupported(
                        span,
                        format!(
                            "`{name}` takes {arity} arguments but the loop gives it {}",
                            args.len() + extra.len()
                        ),
                    );
                }
                let all: Vec<String> = args.iter().cloned().chain(extra).collect();
                Ok(format!("{name}({})", all.join(", ")))
            }
            Callee::Intrinsic(i) => self.simple(b, *i, extra, extra_tys, ty, None, span),
        }
    }
}
