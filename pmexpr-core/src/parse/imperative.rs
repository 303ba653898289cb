//! Imperative Rust: `let mut`, assignment and compound assignment, `for`, `while` and `loop`,
//! `break`, `continue` and `return`. The parser reads each into an [`Imp`] node as written;
//! [`crate::lower`] gives it its PMExpr meaning. Assigning where PMExpr cannot (an element of a
//! sequence, through a reference) is an error that says what to write instead.

use syn::{BinOp as SynBinOp, Expr as SynExpr, Pat as SynPat};

use super::Parser;
use super::span::{expr_span, span};
use crate::ast::{AssignOp, Expr, ExprKind, Ident, Imp, Iter, Lit, Pat, Place, Step};
use crate::error::SpanRange;
use crate::intrinsics::BinOp;
use crate::node::{lit, mk, var};
use crate::record::field_name;
use crate::types::{Label, MAX_TUPLE};

fn imp(i: Imp, sp: SpanRange) -> Expr {
    mk(ExprKind::Imp(Box::new(i)), sp)
}

fn label(l: Option<&syn::Label>) -> Option<Ident> {
    l.map(|l| Ident::new(l.name.ident.to_string(), span(&l.name)))
}

fn lifetime(l: Option<&syn::Lifetime>) -> Option<Ident> {
    l.map(|l| Ident::new(l.ident.to_string(), span(l)))
}

/// The names a pattern writes `mut`, in order.
pub(super) fn mut_names(p: &SynPat, out: &mut Vec<String>) {
    match p {
        SynPat::Ident(i) if i.mutability.is_some() => out.push(field_name(&i.ident)),
        SynPat::Ident(_) => {}
        SynPat::Type(t) => mut_names(&t.pat, out),
        SynPat::Paren(p) => mut_names(&p.pat, out),
        SynPat::Reference(r) => mut_names(&r.pat, out),
        SynPat::Tuple(t) => t.elems.iter().for_each(|p| mut_names(p, out)),
        SynPat::Struct(s) => s.fields.iter().for_each(|f| mut_names(&f.pat, out)),
        _ => {}
    }
}

impl Parser<'_> {
    /// A pattern whose names may be written `mut`: the pattern, and those names.
    pub(super) fn pat_mut(&mut self, p: &SynPat) -> (Pat, Vec<String>) {
        let mut muts = Vec::new();
        mut_names(p, &mut muts);
        let saved = std::mem::replace(&mut self.allow_mut, true);
        let pat = self.pat(p);
        self.allow_mut = saved;
        (pat, muts)
    }

    /// `let mut x = value; rest` (any pattern with a `mut` name).
    pub(super) fn let_mut(&mut self, pat: &SynPat, value: Expr, rest: Expr, sp: SpanRange) -> Expr {
        let (pat, ann) = match pat {
            SynPat::Type(t) => (&*t.pat, Some(self.annotation(&t.ty))),
            p => (p, None),
        };
        let (pat, muts) = self.pat_mut(pat);
        imp(
            Imp::LetMut {
                pat,
                muts,
                ann,
                value,
                body: rest,
            },
            sp,
        )
    }

    /// `body` preceded by `let mut x = x;` for each parameter written `mut x` (a `fn` item's or a
    /// closure's).
    pub(super) fn mut_params(&mut self, muts: Vec<(String, SpanRange)>, mut body: Expr) -> Expr {
        for (name, sp) in muts.into_iter().rev() {
            let bsp = body.span;
            let pat = Pat {
                kind: crate::ast::PatKind::Bind(Ident::new(name.clone(), sp)),
                span: sp,
                ty: crate::types::Type::unit(),
            };
            body = imp(
                Imp::LetMut {
                    pat,
                    muts: vec![name.clone()],
                    ann: None,
                    value: var(&name, sp),
                    body,
                },
                bsp,
            );
        }
        body
    }

    /// `place = value`.
    pub(super) fn assign(&mut self, a: &syn::ExprAssign, sp: SpanRange) -> Expr {
        let Some(place) = self.place(&a.left) else {
            return mk(ExprKind::Never(crate::ast::NeverKind::User), sp);
        };
        let value = self.expr(&a.right);
        imp(
            Imp::Assign {
                place,
                op: None,
                value,
            },
            sp,
        )
    }

    /// `place op= value`, if `b` is a compound assignment.
    pub(super) fn compound_assign(&mut self, b: &syn::ExprBinary, sp: SpanRange) -> Option<Expr> {
        let op = match b.op {
            SynBinOp::AddAssign(_) => AssignOp::Num(BinOp::Add),
            SynBinOp::SubAssign(_) => AssignOp::Num(BinOp::Sub),
            SynBinOp::MulAssign(_) => AssignOp::Num(BinOp::Mul),
            SynBinOp::DivAssign(_) => AssignOp::Num(BinOp::Div),
            SynBinOp::RemAssign(_) => AssignOp::Num(BinOp::Rem),
            SynBinOp::BitAndAssign(_) => AssignOp::Num(BinOp::BitAnd),
            SynBinOp::BitOrAssign(_) => AssignOp::Num(BinOp::BitOr),
            SynBinOp::BitXorAssign(_) => AssignOp::Num(BinOp::BitXor),
            SynBinOp::ShlAssign(_) => AssignOp::Num(BinOp::Shl),
            SynBinOp::ShrAssign(_) => AssignOp::Num(BinOp::Shr),
            _ => return None,
        };
        let Some(place) = self.place(&b.left) else {
            return Some(mk(ExprKind::Never(crate::ast::NeverKind::User), sp));
        };
        let value = self.expr(&b.right);
        Some(imp(
            Imp::Assign {
                place,
                op: Some((op, span(&b.op))),
                value,
            },
            sp,
        ))
    }

    /// `place = value`, made by a method that writes its receiver (`a.swap(i, j)`).
    pub(super) fn assign_to(&mut self, place: Place, value: Expr, sp: SpanRange) -> Expr {
        imp(
            Imp::Assign {
                place,
                op: None,
                value,
            },
            sp,
        )
    }

    /// What an assignment writes: a variable or a part of one (a field, an element); anything
    /// else is reported.
    pub(super) fn place(&mut self, e: &SynExpr) -> Option<Place> {
        let sp = expr_span(e);
        match e {
            SynExpr::Paren(p) => self.place(&p.expr),
            SynExpr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let id = p.path.get_ident()?;
                Some(Place {
                    root: Ident::new(field_name(id), sp),
                    path: Vec::new(),
                    span: sp,
                })
            }
            SynExpr::Field(f) => {
                let mut place = self.place(&f.base)?;
                let label = match &f.member {
                    syn::Member::Unnamed(i) if i.index as usize >= MAX_TUPLE => {
                        self.error(
                            span(&f.member),
                            format!(
                                "tuple field `{}` does not exist: PMExpr tuples have at most {MAX_TUPLE} fields",
                                i.index
                            ),
                        );
                        return None;
                    }
                    syn::Member::Unnamed(i) => Label::Index(i.index),
                    syn::Member::Named(n) => Label::Name(field_name(n)),
                };
                place.path.push(Step::Field(label, span(&f.member)));
                place.span = sp;
                Some(place)
            }
            SynExpr::Index(i) => {
                let mut place = self.place(&i.expr)?;
                let index = self.expr(&i.index);
                place.path.push(Step::Index(index));
                place.span = sp;
                Some(place)
            }
            SynExpr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                self.error_help(
                    span(&u.op),
                    "PMExpr has no references to assign through",
                    "assign the variable itself: `x = …` on a `let mut x`",
                );
                None
            }
            _ => {
                self.error_help(
                    sp,
                    "this cannot be assigned inside `accelerate!`",
                    "assign a `let mut` variable (`x = …`) or a field of one (`p.0 = …`, `b.x += …`)",
                );
                None
            }
        }
    }

    /// `for pat in iter { body }`.
    pub(super) fn for_loop(&mut self, f: &syn::ExprForLoop, sp: SpanRange) -> Expr {
        let iter = self.iter(&f.expr);
        let (pat, muts) = self.pat_mut(&f.pat);
        let body = self.block(&f.body);
        // `for mut x in …`: the element is a fresh mutable local of each iteration.
        let body = if muts.is_empty() {
            body
        } else {
            self.mut_params(muts.into_iter().map(|m| (m, pat.span)).collect(), body)
        };
        imp(
            Imp::For {
                label: label(f.label.as_ref()),
                pat,
                iter,
                body,
            },
            sp,
        )
    }

    /// What a `for` loop runs over: a range (`a..b`, `a..=b`, with `.rev()` and
    /// `.step_by(k)`) or a sequence (`s`, `&s`, `s.iter()`, with `.enumerate()`).
    fn iter(&mut self, e: &SynExpr) -> Iter {
        match e {
            SynExpr::Paren(p) => self.iter(&p.expr),
            SynExpr::Group(g) => self.iter(&g.expr),
            SynExpr::Reference(r) if r.mutability.is_none() => self.iter(&r.expr),
            SynExpr::Range(r) => {
                let (Some(start), Some(end)) = (&r.start, &r.end) else {
                    self.error_help(
                        expr_span(e),
                        "a `for` loop inside `accelerate!` runs over a range with both bounds",
                        "write `a..b` or `a..=b`; a loop with no end is `loop { … }` with a `break`",
                    );
                    return self.no_iter(e);
                };
                let start = self.expr(start);
                let end = self.expr(end);
                Iter::Range {
                    start,
                    end,
                    inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
                    rev: false,
                    step: None,
                }
            }
            SynExpr::MethodCall(m) if m.turbofish.is_none() => {
                let method = m.method.to_string();
                match (method.as_str(), m.args.len()) {
                    ("iter" | "into_iter" | "copied" | "cloned", 0) => self.iter(&m.receiver),
                    ("enumerate", 0) => match self.iter(&m.receiver) {
                        Iter::Seq {
                            seq,
                            enumerate: false,
                        } => Iter::Seq {
                            seq,
                            enumerate: true,
                        },
                        other => {
                            self.unsupported_iter(e);
                            other
                        }
                    },
                    ("rev", 0) => match self.iter(&m.receiver) {
                        Iter::Range {
                            start,
                            end,
                            inclusive,
                            rev: false,
                            step: None,
                        } => Iter::Range {
                            start,
                            end,
                            inclusive,
                            rev: true,
                            step: None,
                        },
                        other => {
                            self.unsupported_iter(e);
                            other
                        }
                    },
                    ("step_by", 1) => match self.iter(&m.receiver) {
                        Iter::Range {
                            start,
                            end,
                            inclusive,
                            rev,
                            step: None,
                        } => {
                            let step = self.expr(&m.args[0]);
                            Iter::Range {
                                start,
                                end,
                                inclusive,
                                rev,
                                step: Some(step),
                            }
                        }
                        other => {
                            self.unsupported_iter(e);
                            other
                        }
                    },
                    _ => {
                        self.unsupported_iter(e);
                        self.no_iter(e)
                    }
                }
            }
            other => Iter::Seq {
                seq: self.expr(other),
                enumerate: false,
            },
        }
    }

    fn unsupported_iter(&mut self, e: &SynExpr) {
        self.error_help(
            expr_span(e),
            "this iterator is not supported by a `for` loop inside `accelerate!`",
            "a `for` loop runs over `a..b`, `a..=b`, `(a..b).rev()`, `(a..b).step_by(k)`, a \
             sequence `s` (`&s`, `s.iter()`) or `s.iter().enumerate()`",
        );
    }

    fn no_iter(&mut self, e: &SynExpr) -> Iter {
        Iter::Seq {
            seq: lit(Lit::Unit, expr_span(e)),
            enumerate: false,
        }
    }

    /// `while cond { body }`; `while let pat = e { body }` is Rust's
    /// `loop { match e { pat => body, _ => break } }`.
    pub(super) fn while_loop(&mut self, w: &syn::ExprWhile, sp: SpanRange) -> Expr {
        if let SynExpr::Let(l) = &*w.cond {
            let scrutinee = self.expr(&l.expr);
            let pat = self.pat(&l.pat);
            let body = self.block(&w.body);
            let stop = imp(
                Imp::Break {
                    label: None,
                    value: None,
                },
                span(&l.let_token),
            );
            let step = mk(
                ExprKind::Match {
                    scrutinee: Box::new(scrutinee),
                    pat,
                    then: Box::new(body),
                    otherwise: Box::new(stop),
                },
                sp,
            );
            return imp(
                Imp::Loop {
                    label: label(w.label.as_ref()),
                    body: step,
                },
                sp,
            );
        }
        let cond = self.expr(&w.cond);
        let body = self.block(&w.body);
        imp(
            Imp::While {
                label: label(w.label.as_ref()),
                cond,
                body,
            },
            sp,
        )
    }

    /// `loop { body }`.
    pub(super) fn loop_expr(&mut self, l: &syn::ExprLoop, sp: SpanRange) -> Expr {
        let body = self.block(&l.body);
        imp(
            Imp::Loop {
                label: label(l.label.as_ref()),
                body,
            },
            sp,
        )
    }

    /// `break`, `break 'a`, `break value`.
    pub(super) fn break_expr(&mut self, b: &syn::ExprBreak, sp: SpanRange) -> Expr {
        let value = b.expr.as_ref().map(|v| self.expr(v));
        imp(
            Imp::Break {
                label: lifetime(b.label.as_ref()),
                value,
            },
            sp,
        )
    }

    /// `continue`, `continue 'a`.
    pub(super) fn continue_expr(&mut self, c: &syn::ExprContinue, sp: SpanRange) -> Expr {
        imp(
            Imp::Continue {
                label: lifetime(c.label.as_ref()),
            },
            sp,
        )
    }

    /// `return`, `return value`.
    pub(super) fn return_expr(&mut self, r: &syn::ExprReturn, sp: SpanRange) -> Expr {
        let value = r.expr.as_ref().map(|v| self.expr(v));
        imp(Imp::Return { value }, sp)
    }

    /// A parameter written `mut x`: its name, for [`Parser::mut_params`].
    pub(super) fn mut_param(&mut self, p: &SynPat) -> Vec<(String, SpanRange)> {
        let mut muts = Vec::new();
        mut_names(p, &mut muts);
        muts.into_iter().map(|m| (m, span(p))).collect()
    }
}
