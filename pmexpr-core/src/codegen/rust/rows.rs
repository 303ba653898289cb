//! Maps of rows (found by the optimizer: [`crate::opt::rows`]) build their rows in one buffer
//! (`Backend::map_rows`): the function's body is generated as written, except that its fill —
//! the inner `map(g, ks)` — fills the row it is given, `row[k] = g(ks[k])`, over the sequences
//! `g` only indexes taken as slices once, and peeled in three parts where the optimizer found
//! reads at `k + c` ([`Gen::peeled_fill`]).

use proc_macro2::TokenStream;
use quote::quote;

use super::{Binding, Gen};
use crate::ast::{Expr, ExprKind, NodeId};
use crate::types::Type;

impl Gen<'_> {
    /// `map(f, s)` (node `id`) as a map of rows, when the optimizer found it one.
    pub(super) fn map_of_rows(&mut self, id: NodeId, f: &Expr, s: &Expr) -> Option<TokenStream> {
        let facts = self.facts.rows.get(&id)?.clone();
        let ExprKind::Lam { params, body } = &f.kind else {
            return None;
        };
        let [p] = &params[..] else {
            return None;
        };
        let (Type::Seq(t_ty), Type::Seq(u)) = (&s.ty, &result_of(f)) else {
            return None;
        };
        let ks = fill_source(body, facts.fill)?;
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
        let ks_tokens = self.arg(ks);
        let src = self.arg(s);
        let outer = self.filling.replace((facts.fill, row.clone()));
        let b = self.with_scope(scope, |g| g.value(body));
        self.filling = outer;
        let (t_rty, u_rty) = (self.rty(t_ty), self.rty(u));
        let w = self.fresh("w");
        let rt = self.rt.clone();
        let cheap = facts.cheap;
        Some(quote!({
            let #w: usize = (#ks_tokens).as_slice().len();
            #(#refs)*
            B::map_rows((#src).as_slice(), #w, #cheap, move |#t: &#t_rty, #row: &mut #rt::RowOut<'_, #u_rty>| {
                #bind
                #b;
            })
        }))
    }

    /// The fill `map(g, ks)` (node `id`) of the map of rows being generated, filling its row
    /// instead of making a sequence; `None` for any other `map`.
    pub(super) fn row_fill(&mut self, id: NodeId, args: &[Expr]) -> Option<TokenStream> {
        let (node, row) = self.filling.clone()?;
        if node != id {
            return None;
        }
        let facts = self.facts.rows.values().find(|r| r.fill == id)?.clone();
        // `g`'s own body is generated as any function (a `map` in it makes its sequence).
        self.filling = None;
        let ks = self.arg(&args[1]);
        let elem = match &args[1].ty {
            Type::Seq(a) => (**a).clone(),
            other => other.clone(),
        };
        let slices: Vec<_> = facts.sliced.iter().map(|id| self.local(*id)).collect();
        let rt = self.rt.clone();
        let fill = if facts.peel.is_empty() {
            let (pre, g) = self.adaptor(&args[0], &[(elem, true, false)]);
            let gv = self.fresh("g");
            quote!(#pre let #gv = #g; #row.fill((#ks).as_slice().iter().map(#gv));)
        } else {
            self.peeled_fill(&args[1], &args[0], &facts.peel, &row)
        };
        self.filling = Some((node, row.clone()));
        Some(quote!({
            #(let #slices = #rt::SliceSeq((#slices).as_slice());)*
            #fill
        }))
    }
}

/// The result type of the function `f`.
fn result_of(f: &Expr) -> Type {
    super::types::result_type(&f.ty, 1)
}

/// The `ks` of the fill (node `fill`) at the end of the function body `body`.
fn fill_source(body: &Expr, fill: NodeId) -> Option<&Expr> {
    let mut found = None;
    body.walk(&mut |e| {
        if e.id == fill
            && let ExprKind::Keyword { args, .. } = &e.kind
        {
            found = args.get(1);
        }
    });
    found
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
