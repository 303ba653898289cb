//! Tail recursion: the one recursion that is a loop.
//!
//! A function that calls only itself, and only as the last thing it does (`if done { r } else {
//! f(next) }`), is a loop over its parameters: Futhark, which has no recursion, runs it as a
//! `loop … while`, and the Rust targets as a `loop` that reassigns the parameters (no stack
//! growth, also in unoptimized builds). The reference compiler rewrote some recursion into
//! patterns (a head/tail recursion into `map2`) and refused the rest on its Futhark backend; this
//! is one more rewrite of the same kind. Mutual recursion and calls whose result is used
//! (`k * fact(k - 1)`) stay refused there.

use crate::ast::{Expr, ExprKind, FnDef, Param, VarId};
use crate::error::SpanRange;
use crate::lift::Def;

/// A function whose every use of itself is a tail call: how its loop runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailLoop {
    /// Per parameter: whether some tail call passes another value than the parameter itself.
    /// The others (a lifted function's captured variables, a searched value) stay out of the
    /// loop's state.
    pub varying: Vec<bool>,
    /// How many tail calls the body makes (none: the function is not recursive at all).
    pub calls: usize,
}

/// Whether `f(params) = body` is a loop: `Err` holds the span of the first use of `f` that is
/// not a call with all its arguments in tail position (a call whose result is used, `f` passed
/// as a value, a call inside a closure).
pub fn tail_loop(f: VarId, params: &[Param], body: &Expr) -> Result<TailLoop, SpanRange> {
    let mut w = Walk {
        f,
        params,
        found: TailLoop {
            varying: vec![false; params.len()],
            calls: 0,
        },
    };
    w.expr(body, true)?;
    Ok(w.found)
}

/// The loop a recursive group runs as, if it does: a single function that calls itself, only in
/// tail position. The Rust generator prints it as a `loop` that owns its state, and the
/// optimizer's last uses ([`crate::opt::moves`]) hand that state over at the call that starts
/// it; both ask here, so they agree.
pub fn group_loop(fns: &[FnDef]) -> Option<TailLoop> {
    let [f] = fns else {
        return None;
    };
    tail_loop(f.ident.id, &f.params, &f.body)
        .ok()
        .filter(|l| l.calls > 0)
}

/// [`tail_loop`] of a lifted definition (the well-formedness check and the Futhark generator
/// ask the same question of it).
pub fn def_loop(d: &Def) -> Result<TailLoop, SpanRange> {
    let (params, body) = d.lambda();
    tail_loop(d.ident.id, params, body)
}

struct Walk<'a> {
    f: VarId,
    params: &'a [Param],
    found: TailLoop,
}

impl Walk<'_> {
    fn expr(&mut self, e: &Expr, tail: bool) -> Result<(), SpanRange> {
        match &e.kind {
            ExprKind::App { func, args } if self.is_f(func) => {
                if !tail || args.len() != self.params.len() {
                    return Err(e.span);
                }
                self.found.calls += 1;
                for ((a, p), v) in args.iter().zip(self.params).zip(&mut self.found.varying) {
                    let same =
                        matches!(&a.kind, ExprKind::Var { ident, .. } if ident.id == p.ident.id);
                    *v |= !same;
                }
                args.iter().try_for_each(|a| self.expr(a, false))
            }
            ExprKind::Var { ident, .. } if ident.id == self.f => Err(e.span),
            ExprKind::Let { value, body, .. } => {
                self.expr(value, false)?;
                self.expr(body, tail)
            }
            ExprKind::RecLet { fns, body, .. } => {
                fns.iter().try_for_each(|d| self.expr(&d.body, false))?;
                self.expr(body, tail)
            }
            ExprKind::Match {
                scrutinee,
                then,
                otherwise,
                ..
            } => {
                self.expr(scrutinee, false)?;
                self.expr(then, tail)?;
                self.expr(otherwise, tail)
            }
            _ => {
                let mut r = Ok(());
                e.children(&mut |c| {
                    if r.is_ok() {
                        r = self.expr(c, false);
                    }
                });
                r
            }
        }
    }

    fn is_f(&self, func: &Expr) -> bool {
        matches!(&func.kind, ExprKind::Var { ident, .. } if ident.id == self.f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::parse_tokens;
    use crate::resolve::resolve;
    use quote::quote;

    /// The analysis of the first `fn` item of a block.
    fn analyse(tokens: proc_macro2::TokenStream) -> Result<TailLoop, SpanRange> {
        let e = resolve(parse_tokens(tokens).expect("parses"))
            .expect("resolves")
            .expr;
        let mut found: Option<FnDef> = None;
        e.walk(&mut |x| {
            if let ExprKind::RecLet { fns, .. } = &x.kind
                && found.is_none()
            {
                found = Some(fns[0].clone());
            }
        });
        let d = found.expect("a fn item");
        tail_loop(d.ident.id, &d.params, &d.body)
    }

    #[test]
    fn a_search_is_a_loop_whose_searched_value_does_not_vary() {
        let l = analyse(quote!({
            fn search(x: i64, lo: i64, hi: i64) -> i64 {
                if lo + 1 < hi {
                    let k = (lo + hi) / 2;
                    if x >= k {
                        search(x, k, hi)
                    } else {
                        search(x, lo, k)
                    }
                } else {
                    lo
                }
            }
            search(3, 0, 10)
        }))
        .expect("a loop");
        assert_eq!(l.varying, vec![false, true, true]);
        assert_eq!(l.calls, 2);
    }

    #[test]
    fn a_used_result_a_value_use_and_a_call_in_a_closure_are_not_loops() {
        for tokens in [
            quote!({
                fn fact(k: i64) -> i64 {
                    if k == 0 { 1 } else { k * fact(k - 1) }
                }
                fact(3)
            }),
            quote!({
                fn f(k: i64) -> i64 {
                    if k == 0 {
                        1
                    } else {
                        foldl(|a, b| f(b), 0, [k])
                    }
                }
                f(3)
            }),
            quote!({
                fn f(k: i64) -> i64 {
                    let g = f;
                    g(k)
                }
                f(3)
            }),
            quote!({
                fn f(k: i64) -> i64 {
                    f(f(k))
                }
                f(3)
            }),
        ] {
            assert!(analyse(tokens).is_err());
        }
    }

    #[test]
    fn a_function_that_does_not_call_itself_makes_no_calls() {
        let l = analyse(quote!({
            fn f(k: i64) -> i64 {
                k + 1
            }
            f(3)
        }))
        .expect("a loop");
        assert_eq!(l.calls, 0);
        assert_eq!(l.varying, vec![false]);
    }
}
