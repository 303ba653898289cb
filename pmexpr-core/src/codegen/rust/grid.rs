//! Row-structured `par_loop`s ("grids", found by the optimizer: [`crate::opt::loops`]) run as
//! rows: the runtime (`Backend::par_rows`) splits `0..n` into segments of rows, `(k0, j0, j1)`;
//! per segment the generated code computes the moved `let`s once, from `k0`, then loops over `j`
//! in `j0..j1` itself: no division per index, the body inlined into that loop, and the rows of
//! tensors that the body indexes by `j` taken once per row ([`super::windows`]: `t[i, j]`,
//! `t[i - 1, j]`, `t[i, j, l]`).

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::windows::Run;
use super::{Binding, Gen};
use crate::ast::{Expr, ExprKind, NodeId};
use crate::opt::Access;
use crate::opt::loops::GridParts;
use crate::types::Type;

impl Gen<'_> {
    /// `B::par_rows(n, w, |k0, j0, j1| …)` for a grid loop of `n` (a variable) iterations and
    /// width `w` (a variable, positive where this runs): per row segment, the prefix `let`s with
    /// `k` at the segment's start, then the loop over the columns, through windows where the
    /// body indexes rows of tensors by the column.
    pub(super) fn grid_par_loop(
        &mut self,
        f: &Expr,
        g: &GridParts<'_>,
        row: &[Access],
        n: &Ident,
        w: &Ident,
    ) -> TokenStream {
        let (refs, mut scope) = self.move_captures(f);
        // The loop variable and the column are of the count's type; the runtime's positions
        // are `i64`s, converted where they are not.
        let ix = g.k.ty.clone();
        let int = || Binding::Value {
            by_ref: false,
            ty: ix.clone(),
        };
        let t = self.rty(&ix);
        let rt = self.rt.clone();
        let of_index = |e: TokenStream| {
            if ix == Type::INT {
                e
            } else {
                quote!(<#t as #rt::Int>::from_index(#e))
            }
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
            span: f.span,
            ty: f.ty.clone(),
        };
        let rest = g.rest;
        let body = self.with_scope(scope, |gn| {
            let mut stmts = Vec::new();
            let mut bound = Vec::new();
            for (p, v) in &g.prefix {
                let x = gn.local(p.ident.id);
                // Each `let` sees those before it.
                let v = gn.with_scope(bound.clone(), |gn| gn.value(v));
                stmts.push(quote!(let #x: #t = #v;));
                bound.push((p.ident.id, int()));
            }
            let inner = gn.with_scope(bound, |gn| {
                gn.windowed_loop(
                    &row_fn,
                    (row, &[]),
                    false,
                    w,
                    Run::Segment { end: &j1 },
                    |gn| {
                        let here = vec![(g.k.ident.id, int()), (g.col.ident.id, int())];
                        let r = gn.with_scope(here, |gn| gn.value(rest));
                        let (jv, kv) = (of_index(quote!(#j)), of_index(quote!(#k0 + (#j - #j0))));
                        quote! {
                            for #j in #j0..#j1 {
                                let #jx: #t = #jv;
                                let #kx: #t = #kv;
                                #r;
                            }
                        }
                    },
                )
            });
            quote!({ #(#stmts)* #inner })
        });
        let k0v = of_index(quote!(#k0));
        quote!({
            #(#refs)*
            B::par_rows(#n, #w, move |#k0: i64, #j0: i64, #j1: i64| {
                // The prefix sees `k` at the start of the segment (the same row).
                let #kx: #t = #k0v;
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
        assert!(c.contains("n_0 , n_0))) . wrapping_rem (__w"), "{c}");
        // Another divisor: rows where the width divides it at run time.
        let c = code(quote!(par_loop(n, |k| {
            let i = k / a;
            let j = k % b;
            tensor_set(d, [i, j], 0)
        })));
        assert!(
            c.contains("to_index (a_2)) . wrapping_rem (__w2) == 0"),
            "{c}"
        );
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
