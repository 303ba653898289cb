//! Applications: a function applied to its arguments, each checked against its parameter (errors
//! name the argument, `the 2nd argument of `map``), and the operators written in the source
//! (`a + b`, `-a`), checked with the operator's own messages.

use super::unify::{Mismatch, kind_name};
use super::{Infer, Kind};
use crate::ast::{Expr, ExprKind};
use crate::error::{Error, ErrorKind, SpanRange};
use crate::intrinsics::{Intrinsic, Operands};
use crate::types::Type;

/// `1st`, `2nd`, `3rd`, `4th`, …, `11th`, `12th`, `13th`, `21st`, `22nd`, … of a 0-based index.
fn ordinal(i: usize) -> String {
    let n = i + 1;
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl Infer<'_> {
    /// Checks an operator written in the source (`a op b`, `-a`: its generic intrinsic applied
    /// to its operands) and returns the operands' type and the result's.
    pub(super) fn operator(
        &mut self,
        i: Intrinsic,
        args: &mut [Expr],
        span: SpanRange,
    ) -> (Vec<Type>, Type) {
        let Some(row) = i.operator() else {
            // `-a` on numbers; `!a` on `bool` (logical) or an integer (bitwise).
            let tx = match args {
                [x] => self.expr(x),
                _ => self.fresh(),
            };
            if i == Intrinsic::NumNot {
                if self.constrain(&tx, Kind::Bits).is_err() {
                    let f = self.shown(&tx);
                    self.errors.push(
                        Error::new(
                            span,
                            format!("`!` cannot be applied to `{f}`: it needs bool or an integer"),
                        )
                        .help("`!` is logical on bool and bitwise on integers"),
                    );
                }
                return (vec![tx.clone()], tx);
            }
            if self.constrain(&tx, Kind::Num).is_err() {
                let f = self.shown(&tx);
                self.errors.push(Error::new(
                    span,
                    format!(
                        "`-` cannot be applied to `{f}`: it needs a number (an integer or a float)"
                    ),
                ));
            }
            return (vec![tx.clone()], tx);
        };
        let [lhs, rhs] = args else {
            return (vec![self.fresh(), self.fresh()], self.fresh());
        };
        let tl = self.expr(lhs);
        let tr = self.expr(rhs);
        let sym = row.symbol;
        if row.operands == Operands::Shift {
            // As in Rust, the amount may be of another integer type than the shifted value.
            for (t, what) in [(&tl, "the shifted value"), (&tr, "the shift amount")] {
                if self.constrain(t, Kind::IntNum).is_err() {
                    let shown = self.shown(t);
                    self.errors.push(
                        Error::new(
                            span,
                            format!("`{sym}` cannot be applied to `{shown}`: {what} must be an integer"),
                        )
                        .help("`<<` and `>>` shift integers (i8 … i64, isize, u8 … u64, usize) by an integer of any of these types; convert a float first with `x as i64`"),
                    );
                }
            }
            return (vec![tl.clone(), tr], tl);
        }
        if let Err(why) = self.unify(&tl, &tr) {
            let (l, r) = (self.shown(&tl), self.shown(&tr));
            let mut err = match why {
                Mismatch::Types => Error::new(
                    span,
                    format!("`{sym}` needs operands of the same type, found `{l}` and `{r}`"),
                ),
                why => self.mismatch(why, rhs.span, &tl, &tr, ""),
            };
            if matches!(
                (&l, &r),
                (&Type::INT, &Type::FLOAT) | (&Type::FLOAT, &Type::INT)
            ) {
                err = err.help("convert the i64 operand with `x as f64`");
            }
            self.errors.push(err);
        } else if row.operands == Operands::Bits {
            if self.constrain(&tl, Kind::Bits).is_err() {
                let l = self.shown(&tl);
                self.errors.push(
                    Error::new(
                        span,
                        format!("`{sym}` cannot be applied to `{l}`: it needs integers or bool"),
                    )
                    .help("`&`, `|` and `^` are bitwise on integers (i8 … i64, isize, u8 … u64, usize) and logical on bool; floats have no bit operators"),
                );
            }
        } else {
            let kind = match row.operands {
                Operands::Equality => Kind::Eq,
                Operands::Numbers => Kind::Num,
                _ => Kind::Any,
            };
            if self.constrain(&tl, kind.clone()).is_err() {
                let l = self.shown(&tl);
                let wants = kind_name(&kind);
                self.errors.push(Error::new(
                    span,
                    format!("`{sym}` cannot be applied to `{l}`: it needs {wants}"),
                ));
            }
        }
        let result = if row.comparison {
            Type::BOOL
        } else {
            tl.clone()
        };
        (vec![tl.clone(), tl], result)
    }

    pub(super) fn callee_name(&self, f: &Expr) -> String {
        match &f.kind {
            ExprKind::Intrinsic(i) => match (i.method(), i) {
                (Some((name, _)), _) => format!("`.{name}()`"),
                (None, Intrinsic::Len) => "`.len()`".into(),
                (None, Intrinsic::NumAbs) => "`.abs()`".into(),
                (None, Intrinsic::As(n)) => format!("`as {n}`"),
                _ => format!("`{}`", i.name()),
            },
            ExprKind::Var { ident, .. } => format!("`{}`", ident.name),
            _ => "this function".into(),
        }
    }

    /// Applies a function of type `tf` to arguments, checking each.
    pub(super) fn apply(
        &mut self,
        callee: &str,
        callee_span: SpanRange,
        mut tf: Type,
        args: &mut [Expr],
        intrinsic: Option<Intrinsic>,
    ) -> Type {
        let twin = intrinsic.and_then(Intrinsic::numeric_twin);
        let total = args.len();
        for (i, arg) in args.iter_mut().enumerate() {
            let ta = self.expr(arg);
            let (param, result) = match self.find_owned(tf) {
                Type::Arrow(a, b) => (*a, *b),
                Type::Var(v) if matches!(self.vars[v.0 as usize].kind, Kind::Any) => {
                    let (a, b) = (self.fresh(), self.fresh());
                    let _ = self.unify(&Type::Var(v), &Type::arrow(a.clone(), b.clone()));
                    (a, b)
                }
                other => {
                    let message = if i == 0 {
                        format!(
                            "{callee} is not a function: its type is `{}`",
                            self.shown(&other)
                        )
                    } else {
                        format!(
                            "{callee} takes {i} argument{} but {total} were supplied",
                            if i == 1 { "" } else { "s" }
                        )
                    };
                    let span = if i == 0 { callee_span } else { arg.span };
                    self.errors.push(Error::new(span, message));
                    for a in args.iter_mut().skip(i + 1) {
                        self.expr(a);
                    }
                    return self.fresh();
                }
            };
            if let Err(why) = self.unify(&param, &ta) {
                if i == 0
                    && let Some((what, help)) = intrinsic.and_then(reinterpreted)
                {
                    // A Rust method PMExpr reads as its own function: say what it took the
                    // call for, at the receiver.
                    let receiver = match &arg.kind {
                        ExprKind::Var { ident, .. } => format!("`{}`", ident.name),
                        _ => "the receiver".to_string(),
                    };
                    let found = self.described(&ta);
                    self.errors.push(
                        Error::new(
                            arg.span,
                            format!(
                                "{callee} inside `accelerate!` is {what}, and {receiver} is {found}"
                            ),
                        )
                        .help(help),
                    );
                    tf = result;
                    continue;
                }
                let mut err = self
                    .mismatch(
                        why,
                        arg.span,
                        &param,
                        &ta,
                        &format!(" as the {} argument of {callee}", ordinal(i)),
                    )
                    .kind(ErrorKind::ArgumentMismatch {
                        callee: callee.to_string(),
                    });
                if let Some(t) = twin {
                    let (p, a) = (self.shown(&param), self.shown(&ta));
                    if matches!(
                        (&p, &a),
                        (&Type::INT, &Type::FLOAT) | (&Type::FLOAT, &Type::INT)
                    ) {
                        err = err.help(format!("use `{}` for `{a}` values", t.name()));
                    }
                }
                if let Some(help) = intrinsic.and_then(method_help) {
                    err = err.help(help);
                }
                self.errors.push(err);
            }
            tf = result;
        }
        tf
    }
}

impl Infer<'_> {
    /// A type as the reinterpretation message names it: a record known only by its fields as
    /// such, others as shown.
    fn described(&self, t: &Type) -> String {
        let t = self.find(t);
        if let Type::Var(v) = t
            && let Kind::Record(fs) = &self.vars[v.0 as usize].kind
        {
            let names: Vec<String> = fs.keys().map(|l| format!("`{l}`")).collect();
            return match fs.keys().next() {
                Some(crate::types::Label::Index(_)) => "a tuple".to_string(),
                _ => format!(
                    "a record (it has the field{} {})",
                    if names.len() == 1 { "" } else { "s" },
                    names.join(", ")
                ),
            };
        }
        format!("`{}`", self.shown(&t))
    }
}

/// For a Rust method that PMExpr reads as one of its own functions (`s.len()` is the length of
/// a sequence, `x.count_ones()` Rust's method of integers): what the call was taken for, and the
/// help of a receiver that is not what it needs.
fn reinterpreted(i: Intrinsic) -> Option<(String, String)> {
    use crate::intrinsics::MethodType as M;
    if i == Intrinsic::Len {
        return Some((
            "the length of a sequence".into(),
            "`.len()` applies to sequences (`Vec`s, slices, arrays); for a struct, call it on the \
             sequence field it means (`b.cells.len()`), or compute the length outside \
             `accelerate!`"
                .into(),
        ));
    }
    if i == Intrinsic::NumAbs {
        return Some((
            "Rust's method of numbers".into(),
            "`.abs()` is a method of numbers (integers and floats), as in Rust".into(),
        ));
    }
    let (_, t) = i.method()?;
    let what = match t {
        M::Int { .. } | M::IntAmount | M::IntTest | M::IntCount => "Rust's method of integers",
        M::Float { .. } | M::FloatTest | M::FloatAmount => "Rust's method of floats",
        M::Num | M::NumWith { .. } => "Rust's method of numbers",
    };
    Some((what.into(), method_help(i)?))
}

/// What a numeric method or a cast applies to, for the help of a mismatch.
fn method_help(i: Intrinsic) -> Option<String> {
    use crate::intrinsics::MethodType as M;
    if let Intrinsic::As(_) = i {
        return Some("`as` converts numbers and bool to a number".into());
    }
    let (name, t) = i.method()?;
    let of = match t {
        M::Int { .. } | M::IntAmount | M::IntTest | M::IntCount => {
            "integers (i8 … i64, isize, u8 … u64, usize)"
        }
        M::Float { .. } | M::FloatTest | M::FloatAmount => "floats (f64, f32)",
        M::Num | M::NumWith { .. } => "numbers (integers and floats)",
    };
    Some(match t {
        M::IntAmount | M::FloatAmount => {
            format!("`.{name}(n)` is a method of {of}, `n` an integer of any type")
        }
        M::IntTest => format!("`.{name}()` is a method of {of}, as in Rust, giving a `bool`"),
        M::IntCount => format!("`.{name}()` is a method of {of}, as in Rust, giving a `u32`"),
        _ => format!(
            "`.{name}()` is a method of {of}, as in Rust; its arguments are of the receiver's type"
        ),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ordinals() {
        let shown: Vec<String> = [0, 1, 2, 3, 10, 11, 12, 20, 21, 22, 100, 110, 111, 112]
            .into_iter()
            .map(super::ordinal)
            .collect();
        assert_eq!(
            shown,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd",
                "101st", "111th", "112th", "113th"
            ]
        );
    }
}
