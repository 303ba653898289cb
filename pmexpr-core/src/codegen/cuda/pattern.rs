//! Patterns: `match` as `if`/`?:`, the conditions and bindings of patterns, record literals
//! matched field by field.

use std::collections::HashMap;

use super::Gen;
use super::code::{Literal, UNIT, c_ident, is_atom};
use super::expr::{Block, Dest};
use super::peephole::{else_if, single_delivery, strip_parens, wrap};
use super::scrut::Scrut;
use super::{Result, unsupported};
use crate::ast::{Expr, ExprKind, Lit, Pat, PatKind};
use crate::types::{Label, Type};

impl<'a> Gen<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn match_(
        &mut self,
        b: &mut Block,
        e: &Expr,
        scrutinee: &Expr,
        pat: &Pat,
        then: &Expr,
        otherwise: &Expr,
        dest: Option<Dest>,
    ) -> Result<String> {
        let ty = self.ity(&e.ty, e.span)?;
        let sty = self.ity(&scrutinee.ty, scrutinee.span)?;
        let s = match (&scrutinee.kind, &pat.kind, &sty) {
            // `match (a, b) { (true, x) => … }`: the fields are matched one by one, and the
            // record is never built.
            (ExprKind::Record(fs), PatKind::Record(pfs), Type::Record(tfs)) if !fs.is_empty() => {
                let mut vals: HashMap<&Label, String> = HashMap::new();
                for (l, x) in fs {
                    let mut v = self.value(b, x, None)?;
                    let uses = pfs
                        .iter()
                        .find(|(pl, _)| pl == l)
                        .map_or(0, |(_, p)| pattern_uses(p));
                    if uses > 1 && !is_atom(&v) {
                        let xty = self.ity(&x.ty, x.span)?;
                        v = self.bind(b, &xty, v, None, x.span)?;
                    }
                    vals.insert(l, v);
                }
                let name = self.c_type_of(&sty, scrutinee.span)?;
                let fields = tfs
                    .iter()
                    .map(|(l, _)| (l.clone(), Scrut::Value(vals.remove(l).unwrap_or_default())))
                    .collect();
                Scrut::Fields(name, fields)
            }
            (ExprKind::Var { ident, .. }, PatKind::Record(_), _)
                if b.records.contains_key(&ident.id) =>
            {
                b.records[&ident.id].clone()
            }
            _ => {
                let mut s = self.value(b, scrutinee, None)?;
                if pattern_uses(pat) > 1 && !is_atom(&s) {
                    s = self.bind(b, &sty, s, None, scrutinee.span)?;
                }
                Scrut::Value(s)
            }
        };
        let Some(cond) = self.pattern_cond(pat, &s)? else {
            // Irrefutable (a `let` of a tuple): bind and go on; the other branch cannot run.
            self.bind_pattern(b, pat, &s)?;
            return self.value(b, then, dest);
        };
        let unit = self.is_unit(&ty);
        // Both branches deliver their value to one target: a result variable declared here
        // (`declare`), the caller's variable, or a `return`.
        let (target, declare) = match dest {
            // A tail position stays one (a tail call there continues a loop).
            _ if unit => (dest.filter(|d| *d == Dest::Return), None),
            Some(Dest::Assign(r)) => (Some(Dest::Assign(r)), None),
            Some(Dest::Return) => (Some(Dest::Return), None),
            Some(Dest::Decl(h)) => (Some(Dest::Assign(h.clone())), Some(h)),
            None => {
                let r = b.fresh("res");
                (Some(Dest::Assign(r.clone())), Some(r))
            }
        };
        let mark = b.lines.len();
        b.depth += 1;
        self.bind_pattern(b, pat, &s)?;
        self.value(b, then, target.clone())?;
        let then_lines = b.lines.split_off(mark);
        self.value(b, otherwise, target.clone())?;
        let else_lines = b.lines.split_off(mark);
        b.depth -= 1;
        // `c ? x : y` when each branch is one delivery and the target is ours (a nested
        // conditional assigning its parent's variable stays an `if`, to chain as `else if`).
        let prefix = match &target {
            Some(Dest::Assign(r)) if declare.is_some() => Some(format!("{r} = ")),
            Some(Dest::Return) => Some("return ".to_string()),
            _ => None,
        };
        if let Some(prefix) = &prefix
            && let (Some(x), Some(y)) = (
                single_delivery(&then_lines, prefix),
                single_delivery(&else_lines, prefix),
            )
        {
            let c = format!("{cond} ? {} : {}", wrap(x), wrap(y));
            return match (declare, target) {
                (Some(h), _) => self.finish(b, &ty, c, Some(Dest::Decl(h)), e.span),
                (None, target) => self.finish(b, &ty, c, target, e.span),
            };
        }
        if let Some(h) = &declare {
            let t = self.c_type_of(&ty, e.span)?;
            b.emit(format!("{t} {h};"));
        }
        b.emit(format!("if ({}) {{", strip_parens(&cond)));
        b.lines.extend(then_lines);
        if let Some(chain) = else_if(&else_lines, b.depth + 1) {
            // `} else { if (c) { … } else { … } }` is `} else if (c) { … } else { … }`.
            b.emit(format!("}} else {}", chain[0].1));
            b.lines.extend(chain.into_iter().skip(1));
        } else if !else_lines.is_empty() {
            b.emit("} else {");
            b.lines.extend(else_lines);
            b.emit("}");
        } else {
            b.emit("}");
        }
        Ok(match (declare, target) {
            (Some(h), _) => h,
            (None, Some(Dest::Assign(r))) => r,
            (None, Some(Dest::Return)) => String::new(),
            _ => UNIT.into(),
        })
    }

    /// The C condition under which a pattern matches `s`; `None` when it always does.
    pub(super) fn pattern_cond(&mut self, p: &Pat, s: &Scrut) -> Result<Option<String>> {
        Ok(match &p.kind {
            PatKind::Wild | PatKind::Bind(_) | PatKind::Lit(Lit::Unit) => None,
            PatKind::Lit(Lit::Bool(true)) => Some(s.c()),
            PatKind::Lit(Lit::Bool(false)) => Some(format!("!{}", s.c())),
            PatKind::Lit(l) => {
                let ty = self.ity(&p.ty, p.span)?;
                let (Literal::Value(c) | Literal::Fails(c)) = self.lit(l, &ty, p.span);
                Some(format!("({} == {c})", s.c()))
            }
            PatKind::Record(fs) => {
                let mut conds = Vec::new();
                for (l, sub) in fs {
                    conds.extend(self.pattern_cond(sub, &s.field(l))?);
                }
                match conds.len() {
                    0 => None,
                    1 => conds.into_iter().next(),
                    _ => Some(format!("({})", conds.join(" && "))),
                }
            }
        })
    }

    /// The fields of a record literal, evaluated in the order written, each a name or a literal.
    pub(super) fn record_fields(
        &mut self,
        b: &mut Block,
        e: &Expr,
        fs: &[(Label, Expr)],
    ) -> Result<Scrut> {
        let ty = self.ity(&e.ty, e.span)?;
        let Type::Record(tfs) = &ty else {
            return unsupported(e.span, format!("a record of type `{ty}`"));
        };
        let mut vals: HashMap<&Label, String> = HashMap::new();
        for (l, x) in fs {
            let mut v = self.value(b, x, None)?;
            if !is_atom(&v) {
                let xty = self.ity(&x.ty, x.span)?;
                if !self.is_unit(&xty) {
                    // Not a `tmp`: a field is read wherever the record is, so its declaration
                    // must stay (see `finish`).
                    let name = b.fresh("fld");
                    v = self.bind(b, &xty, v, Some(Dest::Decl(name)), x.span)?;
                }
            }
            vals.insert(l, v);
        }
        let name = self.c_type_of(&ty, e.span)?;
        let mut fields = Vec::new();
        for (l, _) in tfs {
            match vals.remove(l) {
                Some(v) => fields.push((l.clone(), Scrut::Value(v))),
                None => return unsupported(e.span, format!("a record without field `{l}`")),
            }
        }
        Ok(Scrut::Fields(name, fields))
    }

    /// Declares the variables a (matching) pattern binds.
    pub(super) fn bind_pattern(&mut self, b: &mut Block, p: &Pat, s: &Scrut) -> Result<()> {
        match &p.kind {
            PatKind::Bind(ident) => {
                let ty = self.ity(&p.ty, p.span)?;
                if self.is_unit(&ty) {
                    b.env.insert(ident.id, UNIT.into());
                } else {
                    let name = c_ident(&ident.name, ident.id);
                    let t = self.c_type_of(&ty, p.span)?;
                    b.emit(format!("const {t} {name} = {};", s.c()));
                    b.env.insert(ident.id, name);
                }
            }
            PatKind::Record(fs) => {
                for (l, sub) in fs {
                    self.bind_pattern(b, sub, &s.field(l))?;
                }
            }
            PatKind::Wild | PatKind::Lit(_) => {}
        }
        Ok(())
    }
}

/// How many times a pattern reads the matched value.
pub(super) fn pattern_uses(p: &Pat) -> usize {
    match &p.kind {
        PatKind::Wild | PatKind::Lit(Lit::Unit) => 0,
        PatKind::Bind(_) | PatKind::Lit(_) => 1,
        PatKind::Record(fs) => fs.iter().map(|(_, p)| pattern_uses(p)).sum(),
    }
}
