//! Classification (paper appendix, "Classification"): which backend compiles an accelerated
//! binding, from the parallel keywords it uses, directly or through the bindings it reaches.
//!
//! `P_F` counts `map`, `map2`, `reduce`, `flatten` and, beyond the paper, Futhark's `scan`,
//! `filter`, `scatter` and `hist`, and `create` (the intrinsic is Futhark's `tabulate`, a parallel
//! keyword there; `[x; n]` is `create(n, |_| x)`); `P_C` counts `loop` (`par_loop`). The
//! sequential loops `seq_loop` and `seq_loop_acc` count for neither: they are legal inside CUDA
//! kernels, and the well-formedness check rejects them for Futhark. Counting `create` changes no
//! site that compiled before: CUDA code cannot build sequences (a `create` on a CUDA-class site
//! was already a well-formedness error, now it is one of mixing backends), and a site whose only
//! parallel construct is `create` had no backend and now has Futhark's.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::ast::{Expr, ExprKind, VarId};
use crate::error::SpanRange;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::{Def, Lifted};

/// An accelerate backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backend {
    /// The functional backend: `map map2 reduce flatten scan filter scatter hist create`.
    Futhark,
    /// The imperative backend: `par_loop` over tensors.
    Cuda,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Futhark => "Futhark",
            Backend::Cuda => "CUDA",
        })
    }
}

/// The class `C(a)` of an accelerated binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// No parallel keyword.
    Any,
    /// Futhark keywords only.
    Futhark,
    /// CUDA keywords only.
    Cuda,
    /// Keywords of both backends.
    Invalid,
}

/// One use of a parallel keyword that counts for classification.
#[derive(Debug, Clone)]
pub struct KeywordUse {
    /// The keyword's name (`create` for the intrinsic that counts as one).
    pub keyword: &'static str,
    /// Where it is written.
    pub span: SpanRange,
    /// The binding whose body contains it.
    pub binding: VarId,
}

/// The result of classifying one accelerated binding.
#[derive(Debug, Clone)]
pub struct Classification {
    /// `C(a)`.
    pub class: Class,
    /// The Futhark keywords reached (`P_F` is their number), in the order they were found.
    pub futhark: Vec<KeywordUse>,
    /// The CUDA keywords reached (`P_C` is their number).
    pub cuda: Vec<KeywordUse>,
}

/// The backend a keyword counts for, if any.
pub fn keyword_backend(k: Keyword) -> Option<Backend> {
    if k.is_functional() {
        Some(Backend::Futhark)
    } else if k.is_imperative() {
        Some(Backend::Cuda)
    } else {
        None
    }
}

/// The functional parallel keywords as messages list them, each in backticks: the keywords,
/// then `create`, then `more` (with `conj` before the last).
pub fn futhark_keywords(more: &[&str], conj: &str) -> String {
    let names: Vec<String> = (Keyword::ALL.iter())
        .filter(|k| k.is_functional())
        .map(|k| format!("`{}`", k.name()))
        .chain([format!("`{}`", Intrinsic::Create.name())])
        .chain(more.iter().map(|m| m.to_string()))
        .collect();
    let (last, rest) = names.split_last().expect("keywords");
    format!("{} {conj} {last}", rest.join(", "))
}

/// Classifies the accelerated binding of `lifted` (`C(a)` with `P^∅_F` and `P^∅_C`).
pub fn classify(lifted: &Lifted) -> Classification {
    let defs = lifted.defs();
    let mut c = Classifier {
        defs: &defs,
        visited: HashSet::new(),
        futhark: Vec::new(),
        cuda: Vec::new(),
    };
    c.binding(lifted.accelerated);
    let class = match (c.futhark.is_empty(), c.cuda.is_empty()) {
        (true, true) => Class::Any,
        (false, true) => Class::Futhark,
        (true, false) => Class::Cuda,
        (false, false) => Class::Invalid,
    };
    Classification {
        class,
        futhark: c.futhark,
        cuda: c.cuda,
    }
}

struct Classifier<'a> {
    defs: &'a HashMap<VarId, &'a Def>,
    visited: HashSet<VarId>,
    futhark: Vec<KeywordUse>,
    cuda: Vec<KeywordUse>,
}

impl Classifier<'_> {
    /// `P^V(x)`: the keywords of the body of `x`, then of the bindings its free variables name,
    /// each binding counted once.
    fn binding(&mut self, x: VarId) {
        let Some(def) = self.defs.get(&x) else {
            // A parameter, not a binding.
            return;
        };
        if !self.visited.insert(x) {
            return;
        }
        self.expr(&def.value, x);
        for y in def.value.free_vars() {
            self.binding(y);
        }
    }

    /// `P(e)`: the keywords among the subexpressions `S(e)` (and `create`, Futhark's
    /// `tabulate`, wherever it is named: applied, or passed as a function).
    fn expr(&mut self, e: &Expr, binding: VarId) {
        e.walk(&mut |s| {
            let (keyword, backend) = match &s.kind {
                ExprKind::Keyword { kw, .. } => (kw.name(), keyword_backend(*kw)),
                ExprKind::Intrinsic(Intrinsic::Create) => {
                    (Intrinsic::Create.name(), Some(Backend::Futhark))
                }
                _ => return,
            };
            let found = KeywordUse {
                keyword,
                span: s.span,
                binding,
            };
            match backend {
                Some(Backend::Futhark) => self.futhark.push(found),
                Some(Backend::Cuda) => self.cuda.push(found),
                None => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::{Backend, Class};
    use crate::pipeline::compile_for_test;

    fn class_of(tokens: proc_macro2::TokenStream) -> (Class, Backend) {
        let p = compile_for_test(tokens, &[]).unwrap().program.unwrap();
        (p.classification.class, p.backend)
    }

    /// The paper's Listing 1: the axpy site is CUDA, the conditional sum Futhark.
    #[test]
    fn listing_1_sites() {
        let axpy = quote!({
            let axpy = |c, i| {
                let x = tensor_get(t1, [i]);
                let y = tensor_get(t2, [i]);
                tensor_set(t1, [i], addi(x, muli(c, y)))
            };
            par_loop(n, |i| axpy(2, i))
        });
        assert_eq!(class_of(axpy), (Class::Cuda, Backend::Cuda));
        let sum = quote!({
            let compute_sum = |s, n| {
                if geqi(n, 100) {
                    reduce(addi, 0, s)
                } else {
                    foldl(addi, 0, s)
                }
            };
            compute_sum(t3, n)
        });
        assert_eq!(class_of(sum), (Class::Futhark, Backend::Futhark));
    }

    /// Keywords count through the functions a site uses, `#[pmexpr]` ones included; sequential
    /// loops count for neither backend.
    #[test]
    fn keywords_count_through_bindings() {
        let p = compile_for_test(
            quote!(total(s)),
            &[
                (
                    "total",
                    "fn total(s: Vec<i64>) -> i64 { reduce(addi, 0, twice(s)) }",
                ),
                (
                    "twice",
                    "fn twice(s: Vec<i64>) -> Vec<i64> { map(|x| x * 2, s) }",
                ),
            ],
        )
        .unwrap()
        .program
        .unwrap();
        assert_eq!(p.classification.class, Class::Futhark);
        assert_eq!(p.classification.futhark.len(), 2);
        let err = compile_for_test(quote!(seq_loop(n, |i| tensor_set(t, [i], i))), &[])
            .err()
            .unwrap();
        assert!(
            err[0]
                .message
                .contains("does not use any parallel keywords")
        );
        let err = compile_for_test(
            quote!({
                par_loop(n, |i| tensor_set(t, [i], i));
                reduce(addi, 0, s)
            }),
            &[],
        )
        .err()
        .unwrap();
        assert!(
            err[0].message.contains("multiple backends"),
            "{}",
            err[0].message
        );
    }

    /// Beyond the paper: `scan`, `filter` and `scatter` are Futhark keywords, and so is `create`
    /// (Futhark's `tabulate`, `[x; n]` included), alone or passed as a function; with `par_loop`
    /// it mixes backends, as before it was a well-formedness error of the CUDA backend.
    #[test]
    fn scan_filter_scatter_and_create_count_for_futhark() {
        for tokens in [
            quote!(scan(addi, 0, s)),
            quote!(filter(|x| x > 0, s)),
            quote!(scatter(s, is, s)),
            quote!(create(n, |i| i)),
            quote!([0.5; n]),
            quote!({
                let make = create;
                make(n, |i| i * 2)
            }),
        ] {
            assert_eq!(
                class_of(tokens.clone()),
                (Class::Futhark, Backend::Futhark),
                "{tokens}"
            );
        }
        let p = compile_for_test(quote!(create(n, |i| i)), &[])
            .unwrap()
            .program
            .unwrap();
        assert_eq!(p.classification.futhark[0].keyword, "create");
        let err = compile_for_test(
            quote!(par_loop(n, |i| tensor_set(
                t,
                [i],
                get(create(n, |j| j), i)
            ))),
            &[],
        )
        .err()
        .unwrap();
        assert!(
            err[0].message.contains("multiple backends")
                && err[0]
                    .help
                    .iter()
                    .any(|h| h.contains("`create` to the Futhark backend")),
            "{err:?}"
        );
    }

    /// `backend = …` chooses the backend of a site without keywords; a keyword of the other backend
    /// is then not well-formed.
    #[test]
    fn forced_backend() {
        let p = compile_for_test(
            quote!(backend = cuda, seq_loop(n, |i| tensor_set(t, [i], i))),
            &[],
        )
        .unwrap()
        .program
        .unwrap();
        assert_eq!(
            (p.classification.class, p.backend),
            (Class::Any, Backend::Cuda)
        );
        let err = compile_for_test(
            quote!(backend = futhark, par_loop(n, |i| tensor_set(t, [i], i))),
            &[],
        )
        .err()
        .unwrap();
        assert!(
            err.iter().any(|e| e
                .message
                .contains("Futhark backend: Expression is not supported: `par_loop`")),
            "{err:?}"
        );
        let cpu = compile_for_test(quote!(backend = cpu, addi(x, 1)), &[]).unwrap();
        assert!(cpu.program.is_none());
    }
}
