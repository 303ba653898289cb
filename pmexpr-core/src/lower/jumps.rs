//! `break`, `continue` and `return`: each ends the code around it where it stands, so nothing
//! after it in its block is lowered there; what it continues with is the loop's next iteration
//! (`continue`), the loop's exit (`break`: its state, or the rest of the function when a `return`
//! leaves the loop), or the value of the function (`return`).
//!
//! A `break 'outer` or `continue 'outer` from inside an inner loop ends the inner loop with a
//! tag that says which jump it took (`loops::escape_to`); the code after the inner loop's call,
//! in the outer loop, takes the jump there, so each loop stays its own tail-recursive function.
//! A `return` from inside nested loops, and `break 'outer value`, are errors that say how to
//! write them.

use super::info::Jump;
use super::{FrameKind, Ident, Lower, mk, unit};
use crate::ast::{Expr, ExprKind, NeverKind};

impl<'a> Lower<'a> {
    /// The open loop a jump goes to, or the error that says why there is none; with `outer`, a
    /// labelled jump may go to a loop around the innermost (see `loops::escape_to`).
    fn jump_target(
        &mut self,
        e: &Expr,
        label: Option<&Ident>,
        what: &str,
        outer: bool,
    ) -> Option<usize> {
        let found = match label {
            None => self.loops.len().checked_sub(1),
            Some(l) => self
                .loops
                .iter()
                .rposition(|c| c.label.as_deref() == Some(l.name.as_str())),
        };
        match found {
            Some(li) if li + 1 == self.loops.len() => Some(li),
            Some(li) if outer => Some(li),
            Some(_) => {
                let l = label.map(|l| l.name.clone()).unwrap_or_default();
                self.error(
                    e.span,
                    format!("`{what} '{l}` with a value out of an inner loop is not supported inside `accelerate!`"),
                    format!("assign the value to a mutable local declared before `'{l}`, then `{what} '{l};`"),
                );
                None
            }
            None => {
                let in_closure = self.frames[self.frame()].kind == FrameKind::Closure;
                match label {
                    Some(l) => self.error(
                        l.span,
                        format!("use of undeclared label `'{}`", l.name),
                        "label the loop it leaves: `'name: for … { … }`",
                    ),
                    None if in_closure => self.error(
                        e.span,
                        format!("`{what}` inside a closure cannot leave a loop outside it"),
                        "return a value from the closure and test it in the loop",
                    ),
                    None => self.error(
                        e.span,
                        format!("`{what}` outside of a loop"),
                        format!("`{what}` belongs inside a `for`, `while` or `loop`; a block's value is its last expression"),
                    ),
                }
                None
            }
        }
    }

    /// `break`, `break value`.
    pub(super) fn break_(
        &mut self,
        e: &'a Expr,
        label: Option<&Ident>,
        value: Option<&'a Expr>,
        _k: &super::K<'a>,
    ) -> Expr {
        let Some(li) = self.jump_target(e, label, "break", value.is_none()) else {
            return failed(e);
        };
        if li + 1 < self.loops.len() {
            let l = label
                .map(|l| l.name.clone())
                .expect("only a labelled jump goes further");
            return self.escape_to(&Jump::Break(Some(l)), e.span);
        }
        let kind = self.loops[li].kind;
        match value {
            Some(v) if kind != "loop" => {
                self.error(
                    v.span,
                    format!("`break` with a value inside a `{kind}` loop"),
                    "only `loop` has a value: write `break;`, or the loop as `loop { … }`",
                );
                failed(e)
            }
            Some(v) => {
                let kk = self.kont(move |s, v| s.exit(li, v));
                self.lower(v, &kk)
            }
            None => self.exit(li, unit(e.span)),
        }
    }

    /// `continue`.
    pub(super) fn continue_(&mut self, e: &'a Expr, label: Option<&Ident>) -> Expr {
        match self.jump_target(e, label, "continue", true) {
            Some(li) if li + 1 < self.loops.len() => {
                let l = label
                    .map(|l| l.name.clone())
                    .expect("only a labelled jump goes further");
                self.escape_to(&Jump::Continue(Some(l)), e.span)
            }
            Some(li) => self.next(li, e.span),
            None => failed(e),
        }
    }

    /// `return`, `return value`.
    pub(super) fn return_(&mut self, e: &'a Expr, value: Option<&'a Expr>) -> Expr {
        if self.frames[self.frame()].kind == FrameKind::Site {
            self.error(
                e.span,
                "`return` inside `accelerate!` has no function to return from",
                "the expression's value is its last expression: write `if c { a } else { b }`",
            );
            return failed(e);
        }
        let carried = self
            .loops
            .last()
            .is_some_and(|l| l.escapes.contains(&Jump::Return));
        if (self.loops.len() > 1 && !carried)
            || self.loops.first().is_some_and(|l| l.exit.is_none())
        {
            let (message, help) = if self.frames[self.frame()].kind == FrameKind::Fn {
                (
                    "`return` from inside nested loops needs the `fn`'s result type to be numbers, `bool`, tuples, sequences or records",
                    "`break` out of the inner loop with a flag that says to return, then `return` from the outer one",
                )
            } else {
                (
                    "`return` from inside nested loops of a closure is not supported inside `accelerate!`",
                    "write the closure as a `fn` item with its result type, or `break` out of the inner loop with a flag and `return` from the outer one",
                )
            };
            self.error(e.span, message, help);
            return failed(e);
        }
        if self.loops.len() > 1 {
            let sp = e.span;
            return match value {
                Some(v) => {
                    let k = self.kont(move |s, v| {
                        if super::is_atom(&v) {
                            return s.escape_return(v, sp);
                        }
                        let r = s.fresh("r");
                        let out = s.escape_return(super::var(&r, sp), sp);
                        super::let_in(super::param(&r, sp, None), v, out, sp)
                    });
                    self.lower(v, &k)
                }
                None => self.escape_return(unit(sp), sp),
            };
        }
        match value {
            Some(v) => {
                let done = self.done();
                self.lower(v, &done)
            }
            None => unit(e.span),
        }
    }
}

/// What a jump that cannot be lowered leaves (the error is reported).
fn failed(e: &Expr) -> Expr {
    mk(ExprKind::Never(NeverKind::User), e.span)
}
