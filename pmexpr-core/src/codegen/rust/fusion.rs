//! Fusion of a sequence that is produced only to be consumed: `foldl(f, acc, create(n, g))` is a
//! counted loop that computes each element where the fold takes it, `map(f, create(n, g))`
//! applies `f` to each `g(j)` as it is made (`Backend::tabulate`, in parallel on `cpu`),
//! `reduce(f, ne, create(n, g))` reduces the `g(j)` as they are made
//! (`Backend::tabulate_reduce`), `map(f, map(g, s))` is one `map` of `f` after `g`, and a `map2`
//! whose arguments are `map`s is one `map2` over their sources: no intermediate sequence is
//! built. (`reduce` over `map` and `map2`, and `hist` over `map`, `create` and `flatten`, are
//! fused in `keyword.rs`; a `let` of a `flatten` that only `hist`s read keeps its rows, in
//! `bind.rs`.)
//!
//! The meaning is the unfused one: the arguments are evaluated in the order they are written
//! (`f`'s bound arguments, `acc`, `n`), a negative `n` fails with `create`'s message before any
//! element is computed, and then each element `g(j)` is folded (mapped) in order. One difference
//! can show only in a program that fails twice: unfused, every element is computed before the
//! first step of the fold, so when `g` fails at element 5 and `f` at element 3, `g`'s failure is
//! reported; fused, the loop runs element by element and reports `f`'s (a parallel `map` on `cpu`
//! reports whichever failure comes first, fused or not); likewise a fused `map2` compares the
//! lengths before it computes any mapped element. Debug mode checks that a created or mapped
//! sequence of sequences is regular, so such a producer is not fused.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::Gen;
use super::settled::infallible;
use crate::ast::{Expr, ExprKind};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::types::Type;

impl Gen<'_> {
    /// `foldl(f, acc, create(n, g))` as a counted loop, or `None` when `args` (of a `foldl`)
    /// fold something else.
    pub(super) fn foldl_over_create(&mut self, args: &[&Expr]) -> Option<TokenStream> {
        let [f, acc0, s] = args else {
            return None;
        };
        let (n_expr, g, elem) = created(s)?;
        let (acc, fv, gv) = (self.fresh("acc"), self.fresh("f"), self.fresh("g"));
        let (pre_f, fa) = self.adaptor(f, &[(acc0.ty.clone(), false, true), (elem, true, false)]);
        let a0 = self.value(acc0);
        let (n, checked_n, pre_g, ga) = self.create_parts(n_expr, g);
        let rt = self.rt.clone();
        let step = quote!(move |__pm_a, __pm_j| #fv(__pm_a, &#gv(__pm_j)));
        // Stopping early skips elements: only where computing them cannot fail.
        let settled = if infallible(g) {
            self.settled_closure(f, &acc0.ty)
        } else {
            None
        };
        let run = match settled {
            Some((pre_t, ta)) => {
                quote!({ #pre_t #rt::rt::seq_loop_acc_until(#acc, #n, #ta, #step) })
            }
            None => quote!(#rt::rt::seq_loop_acc(#acc, #n, #step)),
        };
        Some(quote!({
            #pre_f
            let #acc = #a0;
            #checked_n
            #pre_g
            let #fv = #fa;
            let #gv = #ga;
            #run
        }))
    }

    /// `map(f, create(n, g))` as `Backend::tabulate`, or `None` when `s` is not such a `create`.
    pub(super) fn map_over_create(&mut self, f: &Expr, s: &Expr) -> Option<TokenStream> {
        let (n_expr, g, elem) = created(s)?;
        let (fv, gv) = (self.fresh("f"), self.fresh("g"));
        let (pre_f, fa) = self.adaptor(f, &[(elem, true, false)]);
        let (n, checked_n, pre_g, ga) = self.create_parts(n_expr, g);
        Some(quote!({
            #pre_f
            #checked_n
            #pre_g
            let #fv = #fa;
            let #gv = #ga;
            B::tabulate(#n, move |__pm_j| #fv(&#gv(__pm_j)))
        }))
    }

    /// `map(f, map(g, s))` as one `map` of `f` after `g`, or `None` when `s` (of the outer map)
    /// is not such a `map`. A mapped sequence of sequences is built: debug mode checks that it is
    /// regular.
    pub(super) fn map_over_map(&mut self, f: &Expr, s: &Expr) -> Option<TokenStream> {
        let ExprKind::Keyword {
            kw: Keyword::Map,
            args: inner,
        } = &s.kind
        else {
            return None;
        };
        if s.ty.has_nested_seq() {
            return None;
        }
        let (Type::Seq(mid), Type::Seq(from)) = (&s.ty, &inner[1].ty) else {
            return None;
        };
        let (mid, from) = ((**mid).clone(), (**from).clone());
        let (fv, gv) = (self.fresh("f"), self.fresh("g"));
        // Evaluated as unfused: `f`'s bound arguments, then `g`'s, then the sequence.
        let (pre_f, fa) = self.adaptor(f, &[(mid, true, false)]);
        let (pre_g, ga) = self.adaptor(&inner[0], &[(from, true, false)]);
        let src = self.arg(&inner[1]);
        Some(quote!({
            #pre_f
            #pre_g
            let #fv = #fa;
            let #gv = #ga;
            B::map((#src).as_slice(), move |__pm_x| #fv(&#gv(__pm_x)))
        }))
    }

    /// `reduce(f, ne, create(n, g))` as `Backend::tabulate_reduce` (in parallel on `cpu`), or
    /// `None` when `s` is not such a `create`. `pre_op` evaluates `f`'s bound arguments and `ne`
    /// is the variable holding the neutral element, both evaluated before `s`, as written.
    pub(super) fn reduce_over_create(
        &mut self,
        pre_op: &TokenStream,
        name: &str,
        ne: (&Ident, TokenStream),
        op: &TokenStream,
        s: &Expr,
    ) -> Option<TokenStream> {
        let (n_expr, g, _) = created(s)?;
        let (n, checked_n, pre_g, ga) = self.create_parts(n_expr, g);
        let (rt, site) = (&self.rt, self.site());
        let (nev, ne) = ne;
        Some(quote!({
            #pre_op
            let #nev = #ne;
            #checked_n
            #pre_g
            #rt::tabulate_reduce::<B, _, _, _>(#site, #name, #n, #nev, #ga, #op)
        }))
    }

    /// `map2(f, a, b)` where `a` or `b` (or both) is `map(g, s)`: one `map2` of `f` after the
    /// `g`s over the sources, or `None` when neither is a `map`. Evaluated as unfused: `f`'s
    /// bound arguments, then each argument's (`g`'s, then `s`), in order; the lengths are then
    /// compared before any element is computed (unfused, the mapped elements come first).
    pub(super) fn map2_over_map(&mut self, f: &Expr, a: &Expr, b: &Expr) -> Option<TokenStream> {
        let mapped = |e: &Expr| match &e.kind {
            ExprKind::Keyword {
                kw: Keyword::Map,
                args,
            } if !e.ty.has_nested_seq() => Some((args[0].clone(), args[1].clone())),
            _ => None,
        };
        let (ma, mb) = (mapped(a), mapped(b));
        if ma.is_none() && mb.is_none() {
            return None;
        }
        let (pre_f, fa) =
            self.adaptor(f, &[(elem(&a.ty), true, false), (elem(&b.ty), true, false)]);
        let fv = self.fresh("f");
        let mut pre = Vec::new();
        let mut sides = Vec::new();
        for (side, m) in [(a, ma), (b, mb)] {
            match m {
                Some((g, src)) => {
                    let (pre_g, ga) = self.adaptor(&g, &[(elem(&src.ty), true, false)]);
                    let gv = self.fresh("g");
                    let sv = self.arg(&src);
                    let slice = self.fresh("s");
                    pre.push(quote!(#pre_g let #gv = #ga; let #slice = (#sv).as_slice();));
                    sides.push((slice, Some(gv)));
                }
                None => {
                    let sv = self.arg(side);
                    let slice = self.fresh("s");
                    pre.push(quote!(let #slice = (#sv).as_slice();));
                    sides.push((slice, None));
                }
            }
        }
        let site = self.site();
        let apply = |(slice, g): &(Ident, Option<Ident>), x: Ident| match g {
            Some(g) => (quote!(#slice), quote!(&#g(#x))),
            None => (quote!(#slice), quote!(#x)),
        };
        let (sa, xa) = apply(&sides[0], format_ident!("__pm_x"));
        let (sb, xb) = apply(&sides[1], format_ident!("__pm_y"));
        Some(quote!({
            #pre_f
            let #fv = #fa;
            #(#pre)*
            B::map2(#site, #sa, #sb, move |__pm_x, __pm_y| #fv(#xa, #xb))
        }))
    }

    /// The parts of `create(n, g)` in the order they run: the variable holding `n`, its
    /// evaluation and `create`'s check, `g`'s bound arguments and `g` as a closure.
    fn create_parts(
        &mut self,
        n_expr: &Expr,
        g: &Expr,
    ) -> (Ident, TokenStream, TokenStream, TokenStream) {
        let rt = self.rt.clone();
        let site = self.site();
        let n = self.fresh("n");
        let nx = self.value(n_expr);
        let checked_n = quote!(
            let #n: i64 = #nx;
            if #n < 0 {
                #rt::Site::fail(#site, ::core::format_args!("create with negative length: {}", #n));
            }
        );
        let (pre_g, ga) = self.adaptor(g, &[(Type::Int, false, true)]);
        (n, checked_n, pre_g, ga)
    }
}

/// The element type of a sequence type.
fn elem(t: &Type) -> Type {
    match t {
        Type::Seq(a) => (**a).clone(),
        t => t.clone(),
    }
}

/// `create(n, g)`'s `n`, `g` and element type, when `s` is a `create` that may be fused (its
/// elements are not sequences).
fn created(s: &Expr) -> Option<(&Expr, &Expr, Type)> {
    let ExprKind::App { func, args } = &s.kind else {
        return None;
    };
    if !matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Create))
        || args.len() != 2
        || s.ty.has_nested_seq()
    {
        return None;
    }
    let Type::Seq(elem) = &s.ty else {
        return None;
    };
    Some((&args[0], &args[1], (**elem).clone()))
}
