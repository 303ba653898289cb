//! The site's boundary: a captured variable and the result must have types that a Rust value can
//! have (no functions, nothing left unknown that no captured value fixes, tensors of numbers).

use super::Infer;
use crate::ast::Expr;
use crate::error::Error;
use crate::resolve::FreeVar;
use crate::types::{TyVar, Type};

impl Infer<'_> {
    /// A captured variable must have a type that marshaling knows: ground, with no functions, and
    /// tensors of `i64` or `f64`.
    pub(super) fn check_captured(&mut self, fv: &FreeVar, t: &Type, numeric: &[TyVar]) {
        let span = fv.uses[0];
        let name = &fv.name;
        if t.has_arrow() {
            self.errors.push(
                Error::new(span, format!("`{name}` is used as a function, but `accelerate!` cannot capture Rust functions or closures"))
                    .help(format!("define `{name}` inside the accelerated expression, with `let {name} = |…| …;` or a `fn` item")),
            );
        } else if self.unknown(t, numeric) {
            let mut err = Error::new(
                span,
                format!(
                    "cannot infer the type of `{name}`, which is captured from the enclosing Rust code"
                ),
            );
            err = if matches!(t, Type::Var(_)) {
                err.help(format!(
                    "nothing in the expression fixes its type; annotate it at the start of the `accelerate!` body, e.g. `let {name}: i64 = {name};`"
                ))
            } else {
                err.help(format!(
                    "it is a `{t}`; annotate it at the start of the `accelerate!` body, e.g. `let {name}: {} = {name};`",
                    t.to_string().replace('_', "i64")
                ))
            };
            self.errors.push(err);
        } else if let Some(bad) = bad_tensor(t) {
            self.errors.push(Error::new(
                span,
                format!("`{name}` is used as a `{bad}`, but tensors hold numbers or bool"),
            ));
        }
    }

    /// Whether `t` has a type variable that no captured value fixes.
    fn unknown(&self, t: &Type, numeric: &[TyVar]) -> bool {
        let mut vs = Vec::new();
        self.vars_of(t, &mut vs);
        vs.iter().any(|v| !numeric.contains(v))
    }

    pub(super) fn check_result(&mut self, e: &Expr, numeric: &[TyVar]) {
        let t = &e.ty;
        if t.has_arrow() {
            self.errors.push(
                Error::new(
                    e.span,
                    format!("`accelerate!` cannot return a function (this expression is a `{t}`)"),
                )
                .help("apply the function inside the accelerated expression"),
            );
        } else if self.unknown(t, numeric) {
            self.errors.push(
                Error::new(
                    e.span,
                    format!(
                        "cannot infer the type of the result, `{t}`: no captured value fixes the `_`, so no Rust type exists for it (the value is made inside the expression)"
                    ),
                )
                .help("annotate it inside the expression, e.g. `{ let r: Vec<i64> = …; r }`"),
            );
        } else if let Some(bad) = bad_tensor(t) {
            self.errors.push(Error::new(
                e.span,
                format!("the result is a `{bad}`, but tensors hold numbers or bool"),
            ));
        }
    }
}

fn bad_tensor(t: &Type) -> Option<Type> {
    match t {
        Type::Tensor(e) if !matches!(**e, Type::Num(_) | Type::Var(_)) => Some(t.clone()),
        Type::Seq(a) | Type::Tensor(a) => bad_tensor(a),
        Type::Record(fs) => fs.iter().find_map(|(_, t)| bad_tensor(t)),
        Type::Arrow(a, b) => bad_tensor(a).or_else(|| bad_tensor(b)),
        _ => None,
    }
}
