//! A tuple element whose floats a sequential loop reads is read one field at a time, each
//! through `black_box`. Mandelbrot's `map(|p| foldl(|st, _i| … (zr * zr - zi * zi + p.0,
//! 2.0 * zr * zi + p.1, n + 1) …), ps)` reads `p.0` and `p.1`, two adjacent `f64`s. LLVM's SLP
//! vectorizer takes the adjacent loads as the seed of a pair and packs the loop state
//! `(zr, zi)` into one register with them; the escape test then shuffles the pair apart on every
//! iteration, on the loop-carried path. Through `black_box` the two fields are no longer adjacent
//! loads, and the loop stays scalar, as GCC leaves the Futhark library's: 1.77 ms against
//! 2.57 ms on one core for the Mandelbrot shape's loop written out in Rust. `black_box` costs a
//! store and a load per field, once per element, outside the loop.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Index;

use super::Gen;
use crate::ast::{Expr, ExprKind, Param};
use crate::infer::Numeric;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::types::{Label, Type};

impl Gen<'_> {
    /// How the element parameter `p` of a closure is read from `*src` (a reference into a
    /// sequence): field by field when it is a tuple with floats that a sequential loop of `body`
    /// reads, else as a copy.
    pub(super) fn read_element(&self, p: &Param, body: &Expr, src: &TokenStream) -> TokenStream {
        let Type::Record(fs) = &p.ty else {
            return quote!(*#src);
        };
        let floats = fs.iter().filter(|(_, t)| self.is_float(t)).count();
        let tuple = fs.iter().all(|(l, _)| matches!(l, Label::Index(_)));
        if !tuple || floats < 2 || !loop_reads(body, p) {
            return quote!(*#src);
        }
        let fields = fs.iter().enumerate().map(|(k, (_, t))| {
            let k = Index::from(k);
            if self.is_float(t) {
                quote!(::core::hint::black_box((*#src).#k))
            } else {
                quote!((*#src).#k)
            }
        });
        quote!((#(#fields,)*))
    }

    /// Whether values of type `t` are floats (`f64`, `f32`), or numbers that may be.
    fn is_float(&self, t: &Type) -> bool {
        match t {
            Type::Float => true,
            Type::Var(v) => self
                .numeric
                .iter()
                .any(|(w, k)| w == v && matches!(k, Numeric::Float | Numeric::Num)),
            _ => false,
        }
    }
}

/// Whether the function of a sequential loop in `e` (`foldl`, `seq_loop`, `seq_loop_acc`) reads
/// `p`.
fn loop_reads(e: &Expr, p: &Param) -> bool {
    let mut found = false;
    e.walk(&mut |e| {
        let f = match &e.kind {
            ExprKind::App { func, args }
                if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Foldl)) =>
            {
                args.first()
            }
            ExprKind::Keyword {
                kw: Keyword::SeqLoop | Keyword::SeqLoopAcc,
                args,
            } => args.last(),
            _ => None,
        };
        found |= f.is_some_and(|f| f.free_vars().contains(&p.ident.id));
    });
    found
}
