//! Maps of rows: `map(|j| { …; map(g, ks) }, s)` — every element of `s` makes a row of
//! `length(ks)` numbers or `bool`s, `ks` bound outside the function, the inner `map` the
//! function's result (after `let`s) — builds its rows in one buffer (`Backend::map_rows`) instead
//! of one allocation per row: the nested sequence's rows are views of that buffer. The function's
//! body is generated as written, except that the inner `map` fills the row it is given
//! (`RowOut::fill`), `row[k] = g(ks[k])`. Same elements, same failures (the function's `let`s
//! run per row, `g` per element, in the same order within a row); on `cpu` the rows are filled
//! in parallel, as the outer `map` ran its function.

use proc_macro2::TokenStream;
use quote::quote;

use super::types::is_number_var;
use super::{Binding, Gen};
use crate::ast::{Expr, ExprKind, NeverKind};
use crate::intrinsics::Keyword;
use crate::types::Type;

/// Whether the function of a map of rows (`body`, whose inner `map` is node `fill`) is a few
/// operations per row element: no loop, no call of a function, no keyword but the row's `map`,
/// and no intrinsic that builds a sequence. (`cpu` runs a small map of such rows on the calling
/// thread: `Backend::map_rows`.)
fn cheap(body: &Expr, fill: crate::ast::NodeId) -> bool {
    use crate::intrinsics::Intrinsic::*;
    let mut ok = true;
    body.walk(&mut |e| match &e.kind {
        ExprKind::Keyword { .. } if e.id == fill => {}
        ExprKind::Keyword { .. } | ExprKind::RecLet { .. } => ok = false,
        ExprKind::App { func, .. } => match &func.kind {
            ExprKind::Intrinsic(
                Create | Set | Foldl | Tail | Concat | Reverse | Subsequence | TensorSet
                | TensorLinearSet | TensorSub | TensorSlice | TensorGemm,
            ) => ok = false,
            ExprKind::Intrinsic(_) => {}
            // The row's function `g` is applied by the fill; other lambdas are not called here.
            ExprKind::Lam { .. } => {}
            _ => ok = false,
        },
        _ => {}
    });
    ok
}

impl Gen<'_> {
    /// `map(f, s)` as a map of rows, when `f` has that shape.
    pub(super) fn map_of_rows(&mut self, f: &Expr, s: &Expr) -> Option<TokenStream> {
        if self.row_sink.is_some() || self.cuda.is_some() {
            return None;
        }
        let ExprKind::Lam { params, body } = &f.kind else {
            return None;
        };
        let [p] = &params[..] else {
            return None;
        };
        // The function's result, after its `let`s (and irrefutable destructurings).
        let mut tail: &Expr = body;
        loop {
            match &tail.kind {
                ExprKind::Let { body, .. } => tail = body,
                ExprKind::Match {
                    then, otherwise, ..
                } if matches!(otherwise.kind, ExprKind::Never(NeverKind::NoArm)) => tail = then,
                _ => break,
            }
        }
        let ExprKind::Keyword {
            kw: Keyword::Map,
            args: inner,
        } = &tail.kind
        else {
            return None;
        };
        let ExprKind::Var { ident: ks, .. } = &inner[1].kind else {
            return None;
        };
        if !f.free_vars().contains(&ks.id) {
            return None;
        }
        let Type::Seq(u) = &tail.ty else {
            return None;
        };
        let scalar = match &**u {
            Type::Int | Type::Float | Type::Bool => true,
            Type::Var(v) => is_number_var(*v, &self.numeric),
            _ => false,
        };
        let Type::Seq(t_ty) = &s.ty else {
            return None;
        };
        if !scalar {
            return None;
        }
        let (refs, mut scope) = self.move_captures(f);
        let (t, row) = (self.fresh("t"), self.fresh("row"));
        let x = self.local(p.ident.id);
        let bind = if self.is_copy(&p.ty) {
            scope.push((
                p.ident.id,
                Binding::Value {
                    by_ref: false,
                    ty: p.ty.clone(),
                },
            ));
            quote!(let #x = *#t;)
        } else {
            scope.push((
                p.ident.id,
                Binding::Value {
                    by_ref: true,
                    ty: p.ty.clone(),
                },
            ));
            quote!(let #x = #t;)
        };
        let ks_tokens = self.arg(&inner[1]);
        let src = self.arg(s);
        self.row_sink = Some((tail.id, row.clone()));
        let b = self.with_scope(scope, |g| g.value(body));
        self.row_sink = None;
        let (t_rty, u_rty) = (self.rty(t_ty), self.rty(u));
        let w = self.fresh("w");
        let rt = self.rt.clone();
        let cheap = cheap(body, tail.id);
        Some(quote!({
            let #w: usize = (#ks_tokens).as_slice().len();
            #(#refs)*
            B::map_rows((#src).as_slice(), #w, #cheap, move |#t: &#t_rty, #row: &mut #rt::RowOut<'_, #u_rty>| {
                #bind
                #b;
            })
        }))
    }

    /// The inner `map(g, ks)` of a map of rows (node `id`), filling the row instead of making a
    /// sequence; `None` for any other `map`.
    /// The sequences bound outside `f` that `f` only indexes (`s[i]`): the row loop takes
    /// them as slices once (`SliceSeq`), instead of reading each one's pointer and length again
    /// after every store into the row.
    fn indexed_only(&mut self, f: &Expr) -> Vec<crate::ast::VarId> {
        let free = f.free_vars();
        let mut total: std::collections::BTreeMap<crate::ast::VarId, usize> = Default::default();
        let mut indexed: std::collections::BTreeMap<crate::ast::VarId, usize> = Default::default();
        f.walk(&mut |e| match &e.kind {
            ExprKind::Var { ident, .. } if free.contains(&ident.id) => {
                *total.entry(ident.id).or_default() += 1;
            }
            ExprKind::App { func, args }
                if matches!(
                    func.kind,
                    ExprKind::Intrinsic(crate::intrinsics::Intrinsic::Get)
                ) && args.len() == 2 =>
            {
                if let ExprKind::Var { ident, .. } = &args[0].kind {
                    *indexed.entry(ident.id).or_default() += 1;
                }
            }
            _ => {}
        });
        total
            .into_iter()
            .filter(|(id, n)| {
                indexed.get(id) == Some(n)
                    && matches!(
                        self.bindings.get(id),
                        Some(Binding::Value {
                            ty: Type::Seq(_),
                            ..
                        })
                    )
            })
            .map(|(id, _)| id)
            .collect()
    }

    pub(super) fn row_fill(
        &mut self,
        id: crate::ast::NodeId,
        args: &[Expr],
    ) -> Option<TokenStream> {
        let (node, row) = self.row_sink.clone()?;
        if node != id {
            return None;
        }
        // `g`'s own body is generated as any function (a `map` in it makes its sequence).
        self.row_sink = None;
        let ks = self.arg(&args[1]);
        let elem = match &args[1].ty {
            Type::Seq(a) => (**a).clone(),
            other => other.clone(),
        };
        let sliced = self.indexed_only(&args[0]);
        let slices: Vec<_> = sliced.iter().map(|id| self.local(*id)).collect();
        let rt = self.rt.clone();
        let fill = match self.peeled_fill(&args[1], &args[0], &sliced, &row) {
            Some(peeled) => peeled,
            None => {
                let (pre, g) = self.adaptor(&args[0], &[(elem, true, false)]);
                let gv = self.fresh("g");
                quote!(#pre let #gv = #g; #row.fill((#ks).as_slice().iter().map(#gv));)
            }
        };
        self.row_sink = Some((node, row.clone()));
        Some(quote!({
            #(let #slices = #rt::SliceSeq((#slices).as_slice());)*
            #fill
        }))
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::codegen::rust::tests::generated as code;

    #[test]
    fn rows_of_a_fixed_length_share_one_buffer() {
        let c = code(quote!(map(
            |j| {
                let r = a[j];
                map(|k| r[k] + 1, ks)
            },
            js
        )));
        assert!(c.contains("B :: map_rows"), "{c}");
        assert_eq!(c.matches("B :: map (").count(), 0, "{c}");
        // Rows whose length depends on the element, rows of sequences, and an inner `map`
        // that is not the result are built as written.
        for tokens in [
            quote!(map(|j| map(|k| k + j, a[j]), js)),
            quote!(map(|j| map(|k| [k, j], ks), js)),
            quote!(map(|j| length(map(|k| k + j, ks)), js)),
        ] {
            let c = code(tokens);
            assert!(!c.contains("map_rows"), "{c}");
        }
    }

    #[test]
    fn rows_of_a_few_operations_each_are_cheap() {
        // `cheap` is the argument after the width: `B :: map_rows (src, w, cheap, f)`.
        let cheap = |tokens: proc_macro2::TokenStream| {
            let c = code(tokens);
            let at = c
                .find("B :: map_rows")
                .unwrap_or_else(|| panic!("a map of rows: {c}"));
            let args: Vec<&str> = c[at..].splitn(4, ',').collect();
            args[2].trim() == "true"
        };
        assert!(cheap(quote!(map(|j| map(|row| row[j] + 1, b), js))));
        assert!(cheap(quote!(map(
            |j| {
                let r = a[j];
                map(|k| if r[k] > 0 { r[k] * 2 } else { 0 - r[k] }, ks)
            },
            js
        ))));
        // A loop, a sequence built per element, a call of a closure: any cost per element.
        for tokens in [
            quote!(map(|j| map(|k| foldl(addi, k, a[j]), ks), js)),
            quote!(map(|j| map(|k| length(create(k, |i| i)), ks), js)),
            quote!({
                let g = |k| k + 1;
                map(|j| map(|k| g(k) + j, ks), js)
            }),
            quote!(map(|j| map(|k| reduce(addi, 0, a[k]), ks), js)),
        ] {
            assert!(!cheap(tokens));
        }
    }

    #[test]
    fn sequences_the_row_only_indexes_are_taken_as_slices_once() {
        // `r` and `a` are only indexed in the row's function; `b` is also measured, so it
        // stays a sequence.
        let c = code(quote!(map(
            |j| {
                let r = a[j];
                map(|k| r[k] + r[k + 1] + b[k] + length(b), ks)
            },
            js
        )));
        assert_eq!(c.matches("SliceSeq ((r_").count(), 1, "{c}");
        assert_eq!(c.matches("SliceSeq ((b_").count(), 0, "{c}");
    }

    #[test]
    fn rows_over_create_k_k_read_at_k_plus_c_are_peeled() {
        let c = code(quote!({
            let ks = create(n, |k| k);
            map(
                |j| {
                    let r = a[j];
                    let up = a[j + 1];
                    map(|k| r[k - 1] + r[k + 2] + up[k] + b[2 * k], ks)
                },
                js,
            )
        }));
        assert!(c.contains("fill_peeled"), "{c}");
        // `k` from 1 on; `r` cut 2 past the middle's end, `up` at it, `b` (read at `2 k`) not.
        assert!(c.contains("= 1usize ;"), "{c}");
        assert_eq!(c.matches("as_slice () [.. __hi").count(), 2, "{c}");
        assert!(c.contains("+ 2usize]"), "{c}");
        assert!(c.contains("+ 0usize]"), "{c}");
        // `ks` not known to be `create(n, |k| k)`, or no row read at `k + c`: a plain fill.
        for tokens in [
            quote!(map(
                |j| {
                    let r = a[j];
                    map(|k| r[k + 1] + 1, ks)
                },
                js
            )),
            quote!({
                let ks = create(n, |k| k + 0);
                map(
                    |j| {
                        let r = a[j];
                        map(|k| r[k + 1] + 1, ks)
                    },
                    js,
                )
            }),
            quote!({
                let ks = create(n, |k| k);
                map(
                    |j| {
                        let r = a[j];
                        map(|k| r[k * 2] + k, ks)
                    },
                    js,
                )
            }),
        ] {
            let c = code(tokens);
            assert!(c.contains("map_rows") && !c.contains("fill_peeled"), "{c}");
        }
    }
}
