//! Fusion of a sequence that is produced only to be consumed: `foldl(f, acc, create(n, g))` is a
//! counted loop that computes each element where the fold takes it, with no sequence built.
//!
//! The meaning is the unfused one: the arguments are evaluated in the order they are written
//! (`f`'s bound arguments, `acc`, `n`), a negative `n` fails with `create`'s message before any
//! element is computed, and then each element `g(j)` is folded in order. One difference can show
//! only in a program that fails twice: unfused, every element is computed before the first step
//! of the fold, so when `g` fails at element 5 and `f` at element 3, `g`'s failure is reported;
//! fused, the loop runs element by element and reports `f`'s. Debug mode checks that a created
//! sequence of sequences is regular, so such a `create` is not fused.

use proc_macro2::TokenStream;
use quote::quote;

use super::Gen;
use crate::ast::{Expr, ExprKind};
use crate::intrinsics::Intrinsic;
use crate::types::Type;

impl Gen<'_> {
    /// `foldl(f, acc, create(n, g))` as a counted loop, or `None` when `args` (of a `foldl`)
    /// fold something else.
    pub(super) fn foldl_over_create(&mut self, args: &[&Expr]) -> Option<TokenStream> {
        let [f, acc0, s] = args else {
            return None;
        };
        let ExprKind::App { func, args: cargs } = &s.kind else {
            return None;
        };
        if !matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Create))
            || cargs.len() != 2
            || s.ty.has_nested_seq()
        {
            return None;
        }
        let Type::Seq(elem) = &s.ty else {
            return None;
        };
        let elem = (**elem).clone();
        let rt = self.rt.clone();
        let site = self.site();
        let (acc, n, fv, gv) = (
            self.fresh("acc"),
            self.fresh("n"),
            self.fresh("f"),
            self.fresh("g"),
        );
        let (pre_f, fa) = self.adaptor(f, &[(acc0.ty.clone(), false, true), (elem, true, false)]);
        let a0 = self.value(acc0);
        let nx = self.value(&cargs[0]);
        let (pre_g, ga) = self.adaptor(&cargs[1], &[(Type::Int, false, true)]);
        Some(quote!({
            #pre_f
            let #acc = #a0;
            let #n: i64 = #nx;
            if #n < 0 {
                #rt::Site::fail(#site, ::core::format_args!("create with negative length: {}", #n));
            }
            #pre_g
            let #fv = #fa;
            let #gv = #ga;
            #rt::rt::seq_loop_acc(#acc, #n, move |__pm_a, __pm_j| #fv(__pm_a, &#gv(__pm_j)))
        }))
    }
}
