//! The parallel keywords of one definition, function values, and `create`.

use super::code::{Code, apply_text, with_lets};
use super::expr::{Gen, R, cannot_fail, is_rows, same_var};
use super::{GenError, Helper};
use crate::ast::{Expr, ExprKind, Lit, Param};
use crate::codegen::numbers::Number;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::Def;
use crate::types::Type;

impl<'a, 'b> Gen<'a, 'b> {
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
                // Rows: the neutral element and the operator's result take the size of the rows
                // (an operator that picks one of two rows has a result of unknown size).
                let mut lines = Vec::new();
                let sc = self.share(sc, "s", &mut lines);
                self.helpers.insert(Helper::RowSize);
                self.helpers.insert(Helper::RowOp);
                let nc = apply_text(Helper::RowSize.name(), &[sc.clone(), nc]);
                let fc = apply_text(Helper::RowOp.name(), &[sc.clone(), fc]);
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
                // Rows: the neutral element and the operator's result take the size of the rows,
                // as for `reduce`.
                let mut lines = Vec::new();
                let sc = self.share(sc, "s", &mut lines);
                self.helpers.insert(Helper::RowSize);
                self.helpers.insert(Helper::RowOp);
                let nc = apply_text(Helper::RowSize.name(), &[sc.clone(), nc]);
                let fc = apply_text(Helper::RowOp.name(), &[sc.clone(), fc]);
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
                // The number of bins is a count, Rust's `0..k` (`replicate` fails on a
                // negative one).
                let kc = match &k.kind {
                    ExprKind::Lit(Lit::Int(c)) if *c >= 0 => kc,
                    _ => apply_text("i64.max", &[Code::atom("0i64"), kc]),
                };
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

    /// `create n f`: `iota`/`indices` for the identity, `replicate` for a body that does not use
    /// the index and cannot fail (it is then evaluated once even when `n` is 0), else `tabulate`.
    pub(super) fn create(&mut self, n: &Expr, f: &Expr) -> R<Code> {
        let nc = self.expr(n)?;
        let p = self.prim(&n.ty)?;
        // A count is Rust's `0..n`: a negative one makes no elements, where Futhark's `iota`,
        // `replicate` and `tabulate` fail. A length or a literal needs no clamp (and keeps the
        // size Futhark knows), nor does a narrow unsigned count.
        let known = (p.is_unsigned() && p.size() < 8)
            || matches!(&n.kind, ExprKind::Lit(Lit::Int(c)) if *c >= 0)
            || matches!(&n.kind, ExprKind::App { func, .. }
                if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Length)));
        let clamp = |count: Code| {
            if known {
                count
            } else {
                apply_text("i64.max", &[Code::atom("0i64"), count])
            }
        };
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
                clamp(apply_text(&format!("i64.{pn}"), &[nc])).arg(),
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
                return Ok(apply_text("iota", &[clamp(nc)]));
            }
            if !body.free_vars().contains(&index) && cannot_fail(body) {
                let value = self.apply(f, vec![Code::atom("0i64")], &[Type::INT])?;
                return Ok(apply_text("replicate", &[clamp(nc), value]));
            }
        }
        let fc = self.fn_value(f)?;
        Ok(apply_text("tabulate", &[clamp(nc), fc]))
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
}
