//! Well-formedness (paper appendix, "Static rules", and what the reference compiler accepted per
//! backend): the extracted program of a site must be expressible in its backend.
//!
//! The checks run on the lifted, extracted program (no nested lambdas, every type ground). The
//! rules and their messages follow the reference implementation
//! (`spec/reference-implementation.md` §2.2, §3.1):
//!
//! - common (WF-EX, WF-TX, WF-PX): no function in a sequence or a record, no conditional that
//!   returns a function, patterns are variables, records and `bool`/unit constants;
//! - CUDA (WF-EC, WF-BC, WF-HC): functions are defined with one lambda per parameter and take no
//!   function; an application does not return a function unless it is the function argument of
//!   `par_loop`, `seq_loop`, `seq_loop_acc` or `foldl`, which must be a variable or a partial
//!   application; no `map`, `map2`, `reduce`, `flatten`, nor (beyond the paper) `scan`, `filter`,
//!   `scatter`, `hist`; no sequence construction (`create`, `concat`, …: sequences are read-only,
//!   tensors are allocated by the caller); beyond the paper,
//!   no `tensor_gemm` in device code (a `par_loop`'s function and the functions it reaches);
//! - Futhark (WF-EF): no recursion, no `par_loop`, `seq_loop`, `seq_loop_acc`, no tensors;
//!   `map`/`create` do not produce functions and folds (`reduce`, `scan`, `hist`, `foldl`) do
//!   not accumulate them. Beyond the paper,
//!   a function that calls only itself, and only in tail position, is a loop and is accepted
//!   ([`crate::tailrec`]).

use std::fmt;

use crate::ast::{Expr, ExprKind, Lit, Pat, PatKind, VarId};
use crate::classify::Backend;
use crate::error::SpanRange;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::{Binding, Def};
use crate::types::Type;

/// The kinds of well-formedness error, as the reference compiler named them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WfKind {
    /// FutharkFunctionInArray.
    FunctionInArray,
    /// FutharkFunctionInRecord.
    FunctionInRecord,
    /// FutharkFunctionFromCreate.
    FunctionFromCreate,
    /// FutharkFunctionFromMap.
    FunctionFromMap,
    /// FutharkFunctionFromIf.
    FunctionFromIf,
    /// FutharkFunctionFromFold.
    FunctionFromFold,
    /// FutharkRecLet: mutual recursion.
    RecLet,
    /// FutharkRecLet, for a function that calls itself: the named function's use that is not a
    /// tail call (only tail recursion is a loop).
    NotTailCall(String),
    /// {Futhark,Cuda}ExprError: the construct named.
    Expr(&'static str),
    /// {Futhark,Cuda}TypeError: the type.
    Type(Type),
    /// {Futhark,Cuda}PatternError.
    Pattern,
    /// {Futhark,Cuda}ConstantError: the intrinsic.
    Constant(&'static str),
    /// CudaAppResultTypeError.
    AppResultType,
    /// CudaFunctionDefError.
    FunctionDef,
    /// CudaFunctionInMatch.
    FunctionInMatch,
    /// CudaHigherOrderArgument.
    HigherOrderArgument,
    /// `tensor_gemm` in device code (the function of a `par_loop`, or a function it calls): the
    /// product is itself parallel, and nested parallelism is not run.
    GemmInDevice,
}

impl fmt::Display for WfKind {
    /// The reference compiler's message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WfKind::FunctionInArray => "Sequences of function-type elements are not supported",
            WfKind::FunctionInRecord => "Records containing function-type fields are not supported",
            WfKind::FunctionFromCreate => "Creating sequences of functions is not supported",
            WfKind::FunctionFromMap => "Map functions producing functions is not supported",
            WfKind::FunctionFromIf => "Conditionals returning functions are not supported",
            WfKind::FunctionFromFold => "Folds with accumulator of function type are not supported",
            WfKind::RecLet | WfKind::NotTailCall(_) => {
                "Recursive let-expressions are not supported"
            }
            WfKind::Expr(_) => "Expression is not supported",
            WfKind::Type(_) => "Type is not supported",
            WfKind::Pattern => "Pattern is not supported",
            WfKind::Constant(_) => "Constant is not supported",
            WfKind::AppResultType => "Return values of function type are not supported",
            WfKind::FunctionDef => {
                "Functions must be defined using explicit lambdas, using one lambda per parameter"
            }
            WfKind::FunctionInMatch => "Result of conditional expression cannot be a function",
            WfKind::HigherOrderArgument => "Unsupported higher-order argument",
            WfKind::GemmInDevice => {
                "`tensor_gemm` is not supported inside the function of a `par_loop`"
            }
        })
    }
}

/// One well-formedness error.
#[derive(Debug, Clone)]
pub struct WfError {
    /// What is wrong.
    pub kind: WfKind,
    /// The offending tokens.
    pub span: SpanRange,
    /// The top-level binding that contains them.
    pub binding: VarId,
}

impl WfError {
    /// The message: the reference's header and text, with the construct named.
    pub fn message(&self, backend: Backend) -> String {
        let what = match &self.kind {
            WfKind::Expr(name) | WfKind::Constant(name) => format!(": `{name}`"),
            WfKind::Type(t) => format!(": `{t}`"),
            _ => String::new(),
        };
        format!(
            "Well-formedness check failed for {backend} backend: {}{what}",
            self.kind
        )
    }

    /// A concrete way out, for the `help:` line.
    pub fn help(&self, backend: Backend) -> String {
        match (&self.kind, backend) {
            (WfKind::Constant(name), Backend::Cuda) if name.starts_with("tensor") => {
                format!("`{name}` is not available in CUDA code")
            }
            (WfKind::Constant(_), Backend::Cuda) => "CUDA code cannot build sequences: sequences \
                are read-only there (`get`, `length`); allocate a `Tensor` in Rust, capture it and \
                write it with `tensor_set`"
                .into(),
            (WfKind::Constant(_), Backend::Futhark) | (WfKind::Type(_), Backend::Futhark) => {
                "the Futhark backend works on sequences, not tensors: capture a `Vec`, or use \
                 `par_loop` (CUDA) for tensors"
                    .into()
            }
            (WfKind::Type(_), Backend::Cuda) => {
                "CUDA code cannot hold functions in sequences or records".into()
            }
            (WfKind::Expr(_), Backend::Futhark) => format!(
                "the Futhark backend runs {}; loops over tensors belong in \
                 a separate `accelerate!` with `par_loop` (CUDA)",
                crate::classify::futhark_keywords(&["sequential `foldl`"], "and")
            ),
            (WfKind::Expr(_), Backend::Cuda) => format!(
                "the CUDA backend runs `par_loop`, `seq_loop` and `seq_loop_acc`; {} belong in a \
                 separate `accelerate!` (Futhark)",
                crate::classify::futhark_keywords(&[], "and")
            ),
            (WfKind::RecLet, _) => "Futhark runs recursion only as a loop, where a function \
                calls only itself, as its last step; functions that call each other are not one: \
                write the loop with `foldl`, `map` or `reduce`, or run this code with `par_loop` \
                (CUDA)"
                .into(),
            (WfKind::NotTailCall(f), _) => format!(
                "Futhark runs recursion only as a loop, where a function calls itself as its last \
                 step (`if done {{ r }} else {{ {f}(next) }}`), and this use of `{f}` is not such a \
                 call: write it that way, or with `foldl`, `map` or `reduce`, or run this code \
                 with `par_loop` (CUDA)"
            ),
            (WfKind::Pattern, _) => {
                "a number pattern is taken as a whole arm (`3 => …`, `1 | 2 => …`, `0..=9 => …`), not inside a tuple: match the number on its own, or compare it (`if p.0 == 3 { … } else { … }`)".into()
            }
            (WfKind::FunctionDef, _) => "write the function with all its parameters \
                (`|x, y| …` or a `fn` item), none of them a function"
                .into(),
            (WfKind::AppResultType, _) => "apply the function to all its arguments".into(),
            (WfKind::FunctionInMatch | WfKind::FunctionFromIf, _) => {
                "apply the functions inside the branches, so that the conditional returns a value"
                    .into()
            }
            (WfKind::HigherOrderArgument, _) => {
                "pass a function name, a partial application or a closure directly".into()
            }
            (WfKind::FunctionFromMap | WfKind::FunctionFromCreate, _) => {
                "apply the functions inside the mapped function, so that it returns values".into()
            }
            (WfKind::FunctionInArray | WfKind::FunctionInRecord, _) => {
                "keep functions out of sequences and records: call them where they are used".into()
            }
            (WfKind::FunctionFromFold, _) => "fold over values, not functions".into(),
            (WfKind::GemmInDevice, _) => "`tensor_gemm` is a parallel product of its own: call \
                it where a `par_loop` could be called (the expression's sequential code, a \
                `seq_loop`, a function called from there), not from inside a `par_loop`"
                .into(),
        }
    }
}

/// Checks the extracted program of a site for `backend`.
pub fn check(bindings: &[Binding], backend: Backend) -> Vec<WfError> {
    let mut c = Checker {
        backend,
        errors: Vec::new(),
        binding: VarId::UNRESOLVED,
    };
    for b in bindings {
        match b {
            Binding::Let(d) => c.def(d),
            Binding::Rec(ds) => {
                if backend == Backend::Futhark {
                    c.recursion(ds);
                }
                ds.iter().for_each(|d| c.def(d));
            }
        }
    }
    if backend == Backend::Cuda {
        c.errors.extend(gemm_in_device_code(bindings));
    }
    c.errors
}

/// `tensor_gemm` in device code: in a function that the function argument of a `par_loop` names,
/// or one that such a function reaches. Host code (the accelerated binding and what it calls
/// outside `par_loop`s) runs the product as one parallel operation; inside a `par_loop`
/// iteration it would be nested parallelism, which no target runs.
fn gemm_in_device_code(bindings: &[Binding]) -> Vec<WfError> {
    use std::collections::{HashMap, HashSet};
    let defs: HashMap<VarId, &Def> = bindings
        .iter()
        .flat_map(|b| b.defs())
        .map(|d| (d.ident.id, d))
        .collect();
    // The functions that `par_loop`s run, then everything they reach.
    let mut todo: Vec<VarId> = Vec::new();
    for d in defs.values() {
        d.value.walk(&mut |e| {
            if let ExprKind::Keyword {
                kw: Keyword::ParLoop,
                args,
            } = &e.kind
                && let Some(f) = args.get(1)
            {
                let head = match &f.kind {
                    ExprKind::App { func, .. } => &**func,
                    _ => f,
                };
                if let ExprKind::Var { ident, .. } = &head.kind {
                    todo.push(ident.id);
                }
            }
        });
    }
    let mut device: HashSet<VarId> = HashSet::new();
    while let Some(id) = todo.pop() {
        if let Some(d) = defs.get(&id)
            && device.insert(id)
        {
            todo.extend(
                d.value
                    .free_vars()
                    .into_iter()
                    .filter(|v| defs.contains_key(v)),
            );
        }
    }
    let mut ids: Vec<VarId> = device.into_iter().collect();
    ids.sort();
    let mut errors = Vec::new();
    for id in ids {
        defs[&id].value.walk(&mut |e| {
            if let ExprKind::Intrinsic(Intrinsic::TensorGemm) = e.kind {
                errors.push(WfError {
                    kind: WfKind::GemmInDevice,
                    span: e.span,
                    binding: id,
                });
            }
        });
    }
    errors
}

struct Checker {
    backend: Backend,
    errors: Vec<WfError>,
    binding: VarId,
}

/// Whether `intrinsic` is a constant the backend supports (`isFutharkSupportedConstant`,
/// `isCudaSupportedConstant`, plus the math functions both targets have).
fn supported(intrinsic: Intrinsic, backend: Backend) -> bool {
    use Intrinsic::*;
    match intrinsic {
        Create | Set | Head | Tail | Null | Concat | Reverse | Subsequence => {
            backend == Backend::Futhark
        }
        TensorGet | TensorSet | TensorLinearGet | TensorLinearSet | TensorRank | TensorShape
        | TensorSub | TensorSlice | TensorGemm => backend == Backend::Cuda,
        _ => true,
    }
}

impl Checker {
    fn error(&mut self, kind: WfKind, span: SpanRange) {
        self.errors.push(WfError {
            kind,
            span,
            binding: self.binding,
        });
    }

    /// FutharkRecLet: a recursive group is accepted only as one tail-recursive function.
    fn recursion(&mut self, ds: &[Def]) {
        for d in ds {
            self.binding = d.ident.id;
            if ds.len() > 1 {
                self.error(WfKind::RecLet, d.ident.span);
                continue;
            }
            if let Err(span) = crate::tailrec::def_loop(d) {
                self.error(WfKind::NotTailCall(d.ident.name.clone()), span);
            }
        }
    }

    fn def(&mut self, d: &Def) {
        self.binding = d.ident.id;
        if self.backend == Backend::Cuda {
            self.function_def(&d.value, d.ident.span);
        }
        self.expr(&d.value, false);
    }

    /// WF-BC: a value of function type is written as lambdas, one per parameter, none of them a
    /// function.
    fn function_def(&mut self, value: &Expr, span: SpanRange) {
        let mut e = value;
        while let ExprKind::Lam { params, body } = &e.kind {
            if params.iter().any(|p| p.ty.is_arrow()) {
                self.error(WfKind::FunctionDef, span);
                return;
            }
            e = body;
        }
        if e.ty.is_arrow() {
            self.error(WfKind::FunctionDef, span);
        }
    }

    /// WF-TX: the type of a bound variable.
    fn binder_type(&mut self, t: &Type, span: SpanRange) {
        if let Some(kind) = self.bad_type(t) {
            self.error(kind, span);
        }
    }

    fn bad_type(&self, t: &Type) -> Option<WfKind> {
        let futhark = self.backend == Backend::Futhark;
        match t {
            Type::Tensor(_) if futhark => Some(WfKind::Type(t.clone())),
            Type::Seq(e) if e.is_arrow() => Some(if futhark {
                WfKind::FunctionInArray
            } else {
                WfKind::Type(t.clone())
            }),
            Type::Record(fs) if fs.iter().any(|(_, f)| f.is_arrow()) => Some(if futhark {
                WfKind::FunctionInRecord
            } else {
                WfKind::Type(t.clone())
            }),
            Type::Seq(e) | Type::Tensor(e) => self.bad_type(e),
            Type::Arrow(a, b) => self.bad_type(a).or_else(|| self.bad_type(b)),
            Type::Record(fs) => fs.iter().find_map(|(_, f)| self.bad_type(f)),
            Type::Num(_) | Type::Var(_) => None,
        }
    }

    fn pat(&mut self, p: &Pat) {
        match &p.kind {
            PatKind::Lit(Lit::Int(_) | Lit::Float(..)) => self.error(WfKind::Pattern, p.span),
            PatKind::Record(fs) => fs.iter().for_each(|(_, p)| self.pat(p)),
            PatKind::Bind(i) => self.binder_type(&p.ty, i.span),
            PatKind::Wild | PatKind::Lit(_) => {}
        }
    }

    /// WF-HC: the function argument of a loop or fold is a variable or a partial application.
    fn higher_order(&mut self, arg: &Expr) {
        let ok = match &arg.kind {
            ExprKind::Var { .. } | ExprKind::Intrinsic(_) => true,
            ExprKind::App { func, .. } => matches!(func.kind, ExprKind::Var { .. }),
            _ => false,
        };
        if !ok {
            self.error(WfKind::HigherOrderArgument, arg.span);
        }
    }

    /// Checks `e`; `ho` when it is the function argument of a loop or fold (WF-HC).
    fn expr(&mut self, e: &Expr, ho: bool) {
        let futhark = self.backend == Backend::Futhark;
        let cuda = !futhark;
        match &e.kind {
            ExprKind::Var { .. } | ExprKind::Lit(_) | ExprKind::Never(_) => {}
            ExprKind::Intrinsic(i) => {
                if !supported(*i, self.backend) {
                    self.error(WfKind::Constant(i.name()), e.span);
                }
            }
            ExprKind::Lam { params, body } => {
                for p in params {
                    self.binder_type(&p.ty, p.ident.span);
                }
                self.expr(body, false);
            }
            ExprKind::App { func, args } => {
                if cuda && e.ty.is_arrow() && !ho {
                    self.error(WfKind::AppResultType, e.span);
                }
                if let ExprKind::Intrinsic(i) = &func.kind {
                    match i {
                        Intrinsic::Foldl if cuda => {
                            if let Some(f) = args.first() {
                                self.higher_order(f);
                            }
                        }
                        Intrinsic::Foldl if e.ty.is_arrow() => {
                            self.error(WfKind::FunctionFromFold, e.span)
                        }
                        Intrinsic::Create if futhark && elem_is_arrow(&e.ty) => {
                            self.error(WfKind::FunctionFromCreate, e.span)
                        }
                        _ => {}
                    }
                    let first_ho = *i == Intrinsic::Foldl;
                    self.expr(func, false);
                    for (k, a) in args.iter().enumerate() {
                        self.expr(a, first_ho && k == 0);
                    }
                } else {
                    self.expr(func, false);
                    args.iter().for_each(|a| self.expr(a, false));
                }
            }
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                self.binder_type(&binder.ty, binder.ident.span);
                if cuda {
                    self.function_def(value, binder.ident.span);
                }
                self.expr(value, false);
                self.expr(body, false);
            }
            ExprKind::RecLet { fns, body, .. } => {
                // Lifting leaves none; checked as top-level bindings otherwise.
                for f in fns {
                    if futhark {
                        self.error(WfKind::RecLet, f.ident.span);
                    }
                    self.expr(&f.body, false);
                }
                self.expr(body, false);
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => {
                if e.ty.is_arrow() {
                    let kind = if futhark {
                        WfKind::FunctionFromIf
                    } else {
                        WfKind::FunctionInMatch
                    };
                    self.error(kind, e.span);
                }
                self.pat(pat);
                self.expr(scrutinee, false);
                self.expr(then, false);
                self.expr(otherwise, false);
            }
            ExprKind::Record(fs) => {
                if fs.iter().any(|(_, f)| f.ty.is_arrow()) {
                    let kind = if futhark {
                        WfKind::FunctionInRecord
                    } else {
                        WfKind::Type(e.ty.clone())
                    };
                    self.error(kind, e.span);
                }
                fs.iter().for_each(|(_, f)| self.expr(f, false));
            }
            ExprKind::Seq(es) => {
                if elem_is_arrow(&e.ty) {
                    let kind = if futhark {
                        WfKind::FunctionInArray
                    } else {
                        WfKind::Type(e.ty.clone())
                    };
                    self.error(kind, e.span);
                }
                es.iter().for_each(|x| self.expr(x, false));
            }
            ExprKind::Proj { expr, .. } => self.expr(expr, false),
            // Made by the optimizer, after these rules: its parts are checked as expressions.
            ExprKind::Soac(soac) => soac.parts(&mut |x| self.expr(x, false)),
            ExprKind::Imp(i) => i.parts(&mut |x| self.expr(x, false)),
            ExprKind::Keyword { kw, args } => {
                let ho_arg = kw.loop_body().map(|f| f.index);
                let allowed = if kw.is_functional() { futhark } else { cuda };
                if !allowed {
                    self.error(WfKind::Expr(kw.name()), e.span);
                } else if futhark {
                    match kw {
                        Keyword::Map | Keyword::Map2 if elem_is_arrow(&e.ty) => {
                            self.error(WfKind::FunctionFromMap, e.span)
                        }
                        Keyword::Hist | Keyword::Scan if elem_is_arrow(&e.ty) => {
                            self.error(WfKind::FunctionFromFold, e.span)
                        }
                        Keyword::Filter | Keyword::Scatter if elem_is_arrow(&e.ty) => {
                            self.error(WfKind::FunctionInArray, e.span)
                        }
                        Keyword::Reduce if e.ty.is_arrow() => {
                            self.error(WfKind::FunctionFromFold, e.span)
                        }
                        _ => {}
                    }
                }
                for (k, a) in args.iter().enumerate() {
                    let is_ho = cuda && allowed && ho_arg == Some(k);
                    if is_ho {
                        self.higher_order(a);
                    }
                    self.expr(a, is_ho);
                }
            }
        }
    }
}

fn elem_is_arrow(t: &Type) -> bool {
    matches!(t, Type::Seq(e) if e.is_arrow())
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::pipeline::compile_for_test;

    /// The errors of a site that must be rejected.
    fn errors(tokens: proc_macro2::TokenStream) -> Vec<crate::error::Error> {
        let Err(e) = compile_for_test(tokens, &[]) else {
            panic!("accepted")
        };
        e
    }

    /// The error messages of a site that must be rejected.
    fn rejected(tokens: proc_macro2::TokenStream) -> String {
        let messages: Vec<String> = errors(tokens).into_iter().map(|e| e.message).collect();
        messages.join("\n")
    }

    /// The help lines of a site that must be rejected.
    fn helps(tokens: proc_macro2::TokenStream) -> String {
        let helps: Vec<String> = errors(tokens).into_iter().flat_map(|e| e.help).collect();
        helps.join("\n")
    }

    /// `scan`, `filter` and `scatter` are Futhark keywords: not in CUDA code, and (like
    /// `reduce` and `hist`) folds of functions are not well-formed for Futhark.
    #[test]
    fn scan_filter_scatter_are_futhark_keywords() {
        for (tokens, name) in [
            (
                quote!(
                    backend = cuda,
                    seq_loop(2, |i| tensor_set(t, [i], get(scan(addi, 0, s), i)))
                ),
                "scan",
            ),
            (
                quote!(
                    backend = cuda,
                    seq_loop(2, |i| tensor_set(t, [i], get(filter(|x| x > 0, s), i)))
                ),
                "filter",
            ),
            (
                quote!(
                    backend = cuda,
                    seq_loop(2, |i| tensor_set(t, [i], get(scatter(s, s, s), i)))
                ),
                "scatter",
            ),
        ] {
            let msg = rejected(tokens.clone());
            assert!(
                msg.contains(&format!(
                    "CUDA backend: Expression is not supported: `{name}`"
                )),
                "{msg}"
            );
            assert!(
                helps(tokens).contains("`scan`, `filter`, `scatter`, `hist` and `create` belong")
            );
        }
        let msg = rejected(quote!(get(
            scan(
                |f, g| |x: i64| f(g(x)),
                |x: i64| x,
                map(|k| |x: i64| x + k, s)
            ),
            0
        )(1)));
        assert!(
            msg.contains("Folds with accumulator of function type are not supported"),
            "{msg}"
        );
    }

    #[test]
    fn futhark_rules() {
        // Recursion whose result is used, or that is not a call, is refused; tail recursion is a
        // loop (below).
        for tokens in [
            quote!({
                fn f(n: i64) -> i64 {
                    if n == 0 { 0 } else { 1 + f(n - 1) }
                }
                map(f, s)
            }),
            quote!({
                fn f(n: i64) -> i64 {
                    if n == 0 {
                        0
                    } else {
                        reduce(addi, 0, map(f, [n - 1]))
                    }
                }
                map(f, s)
            }),
        ] {
            assert!(
                rejected(tokens.clone()).ends_with("Recursive let-expressions are not supported")
            );
            assert!(helps(tokens).contains("this use of `f` is not such a call"));
        }
        assert!(
            compile_for_test(
                quote!({
                    fn f(n: i64, acc: i64) -> i64 {
                        if n == 0 { acc } else { f(n - 1, acc + n) }
                    }
                    map(|n| f(n, 0), s)
                }),
                &[]
            )
            .is_ok()
        );
        assert!(
            rejected(quote!(map(|i| tensor_get(t, [i]), s)))
                .contains("Constant is not supported: `tensor_get`")
        );
        assert!(
            rejected(quote!(map(|x| seq_loop(x, |i| ()), s)))
                .contains("Expression is not supported: `seq_loop`")
        );
        assert!(
            rejected(quote!(map(
                |x| match (x, x) {
                    (3, _) => 1,
                    _ => 0,
                },
                s
            )))
            .contains("Pattern is not supported")
        );
        assert!(
            rejected(quote!({
                let fs = [|x: i64| x];
                map(get(fs, 0), s)
            }))
            .contains("Sequences of function-type elements")
        );
        assert!(
            rejected(quote!({
                let fs = map(|x| |y| x + y, s);
                map(|f| f(1), fs)
            }))
            .contains("Map functions producing functions")
        );
        assert!(
            rejected(quote!(map(|x| (if x > 0 { addi } else { subi })(x, 1), s)))
                .contains("Conditionals returning functions")
        );
    }

    #[test]
    fn cuda_rules() {
        let loop_over = |body: proc_macro2::TokenStream| quote!(par_loop(n, |i| #body));
        assert!(
            rejected(loop_over(quote!(tensor_set(t, [i], head(s)))))
                .contains("Constant is not supported: `head`")
        );
        assert!(
            rejected(quote!(par_loop(n, {
                let k = 2;
                |i| tensor_set(t, [i], k)
            })))
            .contains("Unsupported higher-order argument")
        );
        assert!(
            rejected(quote!({
                let add = |a: i64, b: i64| a + b;
                let inc = add(1);
                par_loop(n, |i| tensor_set(t, [i], inc(i)))
            }))
            .contains("Functions must be defined using explicit lambdas")
        );
        assert!(
            rejected(quote!({
                let apply = |f, x: i64| f(x);
                par_loop(n, |i| tensor_set(t, [i], apply(|y| y, i)))
            }))
            .contains("Functions must be defined using explicit lambdas")
        );
        // `tensor_gemm` in device code: in the loop's function, or in a function it calls.
        let gemm = quote!(tensor_gemm(
            tensor_slice(c, [i]),
            a,
            false,
            a,
            true,
            1.0,
            0.0
        ));
        assert!(
            rejected(loop_over(gemm.clone()))
                .contains("`tensor_gemm` is not supported inside the function of a `par_loop`")
        );
        assert!(
            rejected(quote!({
                fn product(i: i64) {
                    #gemm
                }
                par_loop(n, |i| product(i))
            }))
            .contains("`tensor_gemm` is not supported inside")
        );
        // Accepted in host code: the expression, a sequential loop, a function called there.
        compile_for_test(
            quote!({
                fn product(i: i64) {
                    #gemm
                }
                tensor_gemm(b, a, false, a, false, 1.0, 0.0);
                seq_loop(n, |i| product(i));
                par_loop(n, |i| tensor_set(t, [i], 0.0))
            }),
            &[],
        )
        .unwrap();
        // Accepted: recursion, sequential loops, folds over constants, tensors.
        compile_for_test(
            quote!({
                fn fact(n: i64) -> i64 {
                    if n == 0 { 1 } else { n * fact(n - 1) }
                }
                par_loop(n, |i| {
                    tensor_set(
                        t,
                        [i],
                        seq_loop_acc(fact(i), 3, |acc, j| acc + foldl(addi, j, s)),
                    )
                })
            }),
            &[],
        )
        .unwrap();
    }
}
