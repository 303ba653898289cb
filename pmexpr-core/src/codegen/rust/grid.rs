//! Row-structured `par_loop`s ("grids"): `par_loop(n, |k| { let i = k / w; let j = k % w; … })`
//! — the usual way to walk a matrix with one flat index, `w` fixed for the loop (a variable
//! bound outside it, or a literal) — runs as rows of `w`. The function's leading `let`s must
//! hold `j = k % w` (the column) and may hold others that are the same for every index of a row:
//! `k` only as `k / m` with `m` fixed for the loop and a multiple of `w` when the loop runs
//! (checked then), with fixed variables, literals, earlier such `let`s and integer arithmetic
//! (`k / (n * n)`, `k / n % n` for a 3-D grid). The runtime (`Backend::par_rows`) splits `0..n` into segments of rows,
//! `(k0, j0, j1)`; per segment the generated code computes those `let`s once, from `k0`, then
//! loops over `j` in `j0..j1` itself: no division per index, the body inlined into that loop, and
//! the rows of tensors that the body indexes by `j` taken once per row ([`super::windows`]:
//! `t[i, j]`, `t[i - 1, j]`, `t[i, j, l]`).
//!
//! Semantics are unchanged: the same iterations with the same `k` and the same values of the
//! `let`s, in any order; a `let` moved out of the loop that fails would have failed in every
//! iteration of the row, and fails the same way once. The rows run only where `k % w` cannot
//! fail and numbers the columns: `w > 0` (otherwise the loop runs as written, and fails as
//! written), nor where some `m` is not a multiple of `w`. Debug mode, which records the elements
//! each iteration touches, runs the loop as written too.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::windows::Run;
use super::windows::pure_fixed;
use super::{Binding, Gen};
use crate::ast::{Expr, ExprKind, Lit, NodeId, Param, VarId};
use crate::intrinsics::Intrinsic;
use crate::types::Type;

/// A `par_loop` function of the grid shape.
pub(super) struct GridLoop<'e> {
    /// The function itself (`|k| …`).
    f: &'e Expr,
    /// The flat index `k`.
    k: &'e Param,
    /// The `let`s before the body that are the same for every index of a row (`i = k / w`,
    /// `i = k / (w * w)`, `j = k / w % w`, …), in order: computed once per row.
    prefix: Vec<(&'e Param, &'e Expr)>,
    /// `j = k % w`: the column, the loop variable of a row.
    col: &'e Param,
    /// The width `w`.
    pub(super) width: &'e Expr,
    /// The `m` of each `k / m` in the prefix (fixed for the loop): the rows run only where each
    /// is a multiple of `w` at run time, which makes `k / m` the same along a row.
    pub(super) divisors: Vec<&'e Expr>,
    /// The body after the `let`s.
    rest: &'e Expr,
}

/// The `let`s at the top of `e` (of monomorphic values): each binder, value and scope.
fn top_lets(mut e: &Expr) -> Vec<(&Param, &Expr, &Expr)> {
    let mut lets = Vec::new();
    while let ExprKind::Let {
        binder,
        value,
        body,
        scheme,
    } = &e.kind
    {
        if !scheme.is_empty() {
            break;
        }
        lets.push((binder, &**value, &**body));
        e = body;
    }
    lets
}

impl Gen<'_> {
    /// The grid shape of `par_loop`'s function `f`, if it has it (and the target is a CPU one:
    /// the CUDA host generator makes kernels of the loops instead).
    pub(super) fn grid_loop<'e>(&self, f: &'e Expr) -> Option<GridLoop<'e>> {
        if self.cuda.is_some() {
            return None;
        }
        let ExprKind::Lam { params, body } = &f.kind else {
            return None;
        };
        let [k] = &params[..] else {
            return None;
        };
        let free = f.free_vars();
        let is_k =
            |x: &Expr| matches!(&x.kind, ExprKind::Var { ident, .. } if ident.id == k.ident.id);
        // Fixed for the whole loop: a literal or an integer variable bound outside it.
        let fixed = |x: &Expr| match &x.kind {
            ExprKind::Lit(Lit::Int(_)) => true,
            ExprKind::Var { ident, .. } => free.contains(&ident.id) && x.ty == Type::Int,
            _ => false,
        };
        // `k % w`, `w` fixed.
        let column = |v: &'e Expr| -> Option<&'e Expr> {
            let ExprKind::App { func, args } = &v.kind else {
                return None;
            };
            let ExprKind::Intrinsic(Intrinsic::ModI) = func.kind else {
                return None;
            };
            let [x, w] = &args[..] else { return None };
            (is_k(x) && fixed(w)).then_some(w)
        };
        let lets = top_lets(body);
        let (c, width) = lets
            .iter()
            .enumerate()
            .find_map(|(c, (_, v, _))| column(v).map(|w| (c, w)))?;
        // The same for every index of a row: `k` only as `k / m` with `m` fixed for the loop (a
        // multiple of the width at run time: `divisors`), fixed variables, literals, earlier such
        // `let`s, and integer arithmetic of those.
        let mut invariant_vars: Vec<VarId> = Vec::new();
        let mut divisors = Vec::new();
        fn invariant<'e>(
            e: &'e Expr,
            is_k: &dyn Fn(&Expr) -> bool,
            fixed: &dyn Fn(&Expr) -> bool,
            vars: &[VarId],
            divisors: &mut Vec<&'e Expr>,
        ) -> bool {
            match &e.kind {
                ExprKind::Lit(Lit::Int(_)) => true,
                ExprKind::Var { ident, .. } => fixed(e) || vars.contains(&ident.id),
                ExprKind::App { func, args } => {
                    let ExprKind::Intrinsic(op) = func.kind else {
                        return false;
                    };
                    if op == Intrinsic::DivI
                        && let [x, m] = &args[..]
                        && is_k(x)
                    {
                        divisors.push(m);
                        return pure_fixed(m, fixed);
                    }
                    matches!(
                        op,
                        Intrinsic::AddI
                            | Intrinsic::SubI
                            | Intrinsic::MulI
                            | Intrinsic::DivI
                            | Intrinsic::ModI
                            | Intrinsic::NegI
                    ) && args
                        .iter()
                        .all(|a| invariant(a, is_k, fixed, vars, divisors))
                }
                _ => false,
            }
        }
        let mut prefix = Vec::new();
        let mut used = 0;
        for (n, (binder, value, _)) in lets.iter().enumerate() {
            if n == c {
                used = n + 1;
                continue;
            }
            let mut found = Vec::new();
            if value.ty != Type::Int
                || !invariant(value, &is_k, &fixed, &invariant_vars, &mut found)
            {
                break;
            }
            divisors.extend(found);
            invariant_vars.push(binder.ident.id);
            prefix.push((*binder, *value));
            used = n + 1;
        }
        // The column's `let` must be among those moved out of the loop body.
        if used <= c {
            return None;
        }
        // The rest starts at the first `let` that stays in the loop: the scope of the last one
        // moved out (`used > c >= 0`).
        let rest = lets[used - 1].2;
        Some(GridLoop {
            f,
            k,
            prefix,
            col: lets[c].0,
            width,
            divisors,
            rest,
        })
    }

    /// `B::par_rows(n, w, |k0, j0, j1| …)` for a grid loop of `n` (a variable) iterations and
    /// width `w` (a variable, positive where this runs): per row segment, the prefix `let`s with
    /// `k` at the segment's start, then the loop over the columns, through windows where the
    /// body indexes rows of tensors by the column.
    pub(super) fn grid_par_loop(&mut self, g: &GridLoop<'_>, n: &Ident, w: &Ident) -> TokenStream {
        let (refs, mut scope) = self.move_captures(g.f);
        let int = || Binding::Value {
            by_ref: false,
            ty: Type::Int,
        };
        let (k0, j0, j1, j) = (
            self.fresh("k0"),
            self.fresh("j0"),
            self.fresh("j1"),
            self.fresh("j"),
        );
        let (kx, jx) = (self.local(g.k.ident.id), self.local(g.col.ident.id));
        scope.push((g.k.ident.id, int()));
        // The loop over a row, as a function of `k` and `j` (the loop variable), the prefix bound
        // outside it: what the windows of the row are taken for.
        let row_fn = Expr {
            id: NodeId::UNSET,
            kind: ExprKind::Lam {
                params: vec![g.k.clone(), g.col.clone()],
                body: Box::new(g.rest.clone()),
            },
            span: g.f.span,
            ty: g.f.ty.clone(),
        };
        let rest = g.rest;
        let body = self.with_scope(scope, |gn| {
            let mut stmts = Vec::new();
            let mut bound = Vec::new();
            for (p, v) in &g.prefix {
                let x = gn.local(p.ident.id);
                // Each `let` sees those before it.
                let v = gn.with_scope(bound.clone(), |gn| gn.value(v));
                stmts.push(quote!(let #x: i64 = #v;));
                bound.push((p.ident.id, int()));
            }
            let inner = gn.with_scope(bound, |gn| {
                gn.windowed_loop(&row_fn, 2, w, Run::Segment { end: &j1 }, |gn| {
                    let here = vec![(g.k.ident.id, int()), (g.col.ident.id, int())];
                    let r = gn.with_scope(here, |gn| gn.value(rest));
                    quote! {
                        for #j in #j0..#j1 {
                            let #jx: i64 = #j;
                            let #kx: i64 = #k0 + (#j - #j0);
                            #r;
                        }
                    }
                })
            });
            quote!({ #(#stmts)* #inner })
        });
        quote!({
            #(#refs)*
            B::par_rows(#n, #w, move |#k0: i64, #j0: i64, #j1: i64| {
                // The prefix sees `k` at the start of the segment (the same row).
                let #kx: i64 = #k0;
                #body
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::codegen::rust::tests::generated as code;

    #[test]
    fn flat_indices_split_by_a_width_run_as_rows() {
        // 2-D, with the neighbours' rows and the column's neighbours through windows (one
        // window per distinct row).
        let c = code(quote!(par_loop(ny * nx, |k| {
            let i = k / nx;
            let j = k % nx;
            tensor_set(
                d,
                [i, j],
                tensor_get(s, [i - 1, j]) + tensor_get(s, [i, j + 1]),
            )
        })));
        assert!(c.contains("B :: par_rows"), "{c}");
        assert_eq!(c.matches(". window (& [").count(), 3, "{c}");
        assert!(c.contains(". get_or ("), "{c}");
        // Each row cut at the segment's end, once, before the column loop.
        assert_eq!(c.matches(". upto (").count(), 3, "{c}");
        // The loop as written stays, for debug mode and widths that are not positive.
        assert!(c.contains("B :: par_loop"), "{c}");
        // 3-D, the column last.
        let c = code(quote!(par_loop(n * n * n, |k| {
            let i = k / (n * n);
            let j = k / n % n;
            let l = k % n;
            tensor_set(d, [i, j, l], tensor_get(s, [i, j, l]))
        })));
        assert!(c.contains("B :: par_rows"), "{c}");
        assert_eq!(c.matches(". window (& [").count(), 2, "{c}");
        assert!(
            c.contains("(n_0) . wrapping_mul (n_0)) . wrapping_rem (__w"),
            "{c}"
        );
        // Another divisor: rows where the width divides it at run time.
        let c = code(quote!(par_loop(n, |k| {
            let i = k / a;
            let j = k % b;
            tensor_set(d, [i, j], 0)
        })));
        assert!(c.contains("&& (a_2) . wrapping_rem (__w2) == 0"), "{c}");
    }

    #[test]
    fn other_splits_run_as_written() {
        for tokens in [
            // `k / m` with `m` computed in a way that may fail.
            quote!(par_loop(n, |k| {
                let i = k / (a / 2);
                let j = k % a;
                tensor_set(d, [i, j], 0)
            })),
            // A width bound inside the loop.
            quote!(par_loop(n, |k| {
                let w = a;
                let j = k % w;
                tensor_set(d, [0, j], 0)
            })),
            // No column.
            quote!(par_loop(n, |k| {
                let i = k / a;
                tensor_set(d, [i, 0], 0)
            })),
        ] {
            let c = code(tokens);
            assert!(!c.contains("par_rows"), "{c}");
        }
    }
}
