//! What the [`crate::pipeline`] knows of one `accelerate!` site beyond its passes: the backend a
//! user names (`backend = …`), the `#[pmexpr]` functions it uses (its prelude, selected and
//! checked), where a problem found in a binding is reported, the backend it gets, and the site's
//! typed outputs ([`CompiledSite`], [`SiteProgram`]).

use std::collections::{BTreeSet, HashMap};

use proc_macro2::{TokenStream, TokenTree};

use crate::ast::{Expr, ExprKind, FnDef, ItemRef, Lit, VarId};
use crate::classify::{Backend, Class, Classification, KeywordUse};
use crate::error::{Error, ErrorKind, Errors, SpanRange};
use crate::infer::Numeric;
use crate::lift::{Binding, Lifted, Origin};
use crate::mono::Mono;
use crate::record::Records;
use crate::resolve::FreeVar;
use crate::types::TyVar;
use crate::{infer, parse, resolve, wellformed};

/// A backend named by the user: `accelerate!(backend = cuda, …)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forced {
    /// `backend = futhark`.
    Futhark,
    /// `backend = cuda`.
    Cuda,
    /// `backend = cpu`: the CPU targets only; no classification, no GPU well-formedness rules.
    Cpu,
}

/// A `#[pmexpr]` function of the crate, as the build hook recorded it.
#[derive(Debug, Clone)]
pub struct PreludeItem {
    /// Its name.
    pub name: String,
    /// Where it is defined (`file:line:column`).
    pub location: String,
    /// The item as Rust source (`fn g(x: i64) -> i64 { … }`).
    pub source: String,
}

/// Looks a `#[pmexpr]` function up in the crate's sources by name: its location.
pub type FindItem<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What a site can see beyond its own tokens.
#[derive(Clone, Copy, Default)]
pub struct Context<'a> {
    /// The crate's `#[pmexpr]` functions; `None` when the crate has no build hook.
    pub prelude: Option<&'a [PreludeItem]>,
    /// Without the hook: finds a `#[pmexpr]` function the site names, to say that the hook is
    /// missing rather than that the name is unknown.
    pub find_item: Option<FindItem<'a>>,
    /// The crate's `#[derive(pmexpr::Record)]` structs; `None` when the crate has no build hook.
    pub records: Option<&'a Records>,
}

/// The paper's view of a site: its lifted program, what extraction keeps, and its backend.
#[derive(Debug, Clone)]
pub struct SiteProgram {
    /// After accelerated bindings and lambda lifting.
    pub lifted: Lifted,
    /// `I'` of `Extract({a}, e)`.
    pub extracted_ids: BTreeSet<VarId>,
    /// The extracted program.
    pub extracted: Vec<Binding>,
    /// `C(a)` with the keywords behind it.
    pub classification: Classification,
    /// The backend that compiles it.
    pub backend: Backend,
    /// The numeric type variables that the captured values fix (the only type variables left in
    /// the program): a backend that cannot be generic emits one entry per choice of types.
    pub numeric: Vec<(TyVar, Numeric)>,
}

/// A site that passed every static check.
#[derive(Debug, Clone)]
pub struct CompiledSite {
    /// The monomorphic program, for the CPU code generator.
    pub mono: Mono,
    /// The backend the user named, if any.
    pub forced: Option<Forced>,
    /// The paper's passes; `None` for `backend = cpu`.
    pub program: Option<SiteProgram>,
}

/// A failed site: the errors, and the captured variables found (to keep them used).
pub type Failure = (Errors, Vec<FreeVar>);

/// Splits `backend = name,` off the front of a site's tokens.
pub fn split_directive(tokens: TokenStream) -> Result<(Option<Forced>, TokenStream), Errors> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let is_directive = matches!(
        (trees.first(), trees.get(1)),
        (Some(TokenTree::Ident(k)), Some(TokenTree::Punct(eq)))
            if k == "backend" && eq.as_char() == '=' && eq.spacing() == proc_macro2::Spacing::Alone
    );
    if !is_directive {
        return Ok((None, tokens));
    }
    let name = match trees.get(2) {
        Some(TokenTree::Ident(name)) => name,
        other => {
            let span = other.map_or(trees[1].span(), |t| t.span());
            return Err(vec![
                Error::new(
                    SpanRange::single(span),
                    "expected a backend name after `backend =`",
                )
                .help("write `backend = futhark`, `backend = cuda` or `backend = cpu`"),
            ]);
        }
    };
    let forced = match name.to_string().as_str() {
        "futhark" => Forced::Futhark,
        "cuda" => Forced::Cuda,
        "cpu" => Forced::Cpu,
        other => {
            return Err(vec![
                Error::new(
                    SpanRange::single(name.span()),
                    format!("unknown backend `{other}`"),
                )
                .help("the backends are `futhark`, `cuda` and `cpu`"),
            ]);
        }
    };
    match trees.get(3) {
        Some(TokenTree::Punct(p)) if p.as_char() == ',' => {}
        other => {
            let span = other.map_or(name.span(), |t| t.span());
            return Err(vec![
                Error::new(
                    SpanRange::single(span),
                    "expected `,` and the expression after the backend",
                )
                .help("write `accelerate!(backend = cuda, expression)`"),
            ]);
        }
    }
    let rest: TokenStream = trees[4..].iter().cloned().collect();
    Ok((Some(forced), rest))
}

/// The `#[pmexpr]` functions the site uses, selected and checked ([`select_prelude`]), around the
/// user's expression as one recursive group.
pub(crate) fn with_prelude(user: Expr, cx: Context<'_>) -> Result<(Prelude, Expr), Errors> {
    let prelude = match cx.prelude {
        Some(items) => select_prelude(&user, items, cx.records)?,
        None => Prelude::default(),
    };
    if prelude.fns.is_empty() {
        return Ok((prelude, user));
    }
    let span = user.span;
    let expr = Expr::new(
        ExprKind::RecLet {
            fns: prelude.fns.clone(),
            body: Box::new(user),
            scheme: Vec::new(),
        },
        span,
    );
    Ok((prelude, expr))
}

/// Resolution's errors, or, without the hook, that a `#[pmexpr]` function the site calls is
/// unknown because the hook is missing.
pub(crate) fn unresolved(errors: Errors, cx: Context<'_>) -> Errors {
    if let (None, Some(find)) = (cx.prelude, cx.find_item) {
        let hook: Errors = errors
            .iter()
            .filter_map(|e| {
                let ErrorKind::UnknownFunction { name } = &e.kind else {
                    return None;
                };
                let location = find(name)?;
                Some(missing_hook_error(name, &location, e.span))
            })
            .collect();
        if !hook.is_empty() {
            return hook;
        }
    }
    errors
}

/// Inference's errors, or, without the hook, that a `#[pmexpr]` function looks like a captured
/// Rust function because the hook is missing.
pub(crate) fn untyped(errors: Errors, free_vars: &[FreeVar], cx: Context<'_>) -> Errors {
    if cx.prelude.is_none()
        && let Some(find) = cx.find_item
    {
        let hook = missing_hook(free_vars, find);
        if !hook.is_empty() {
            return hook;
        }
    }
    errors
}

/// The backend of a lifted site ([`choose_backend`] from its classification), and the errors of
/// the well-formedness rules of that backend over what extraction kept, each reported where
/// [`Report::place`] says.
pub(crate) fn backend_of(
    forced: Option<Forced>,
    classification: &Classification,
    extracted: &[Binding],
    report: &Report<'_>,
) -> Result<Backend, Errors> {
    let backend = choose_backend(forced, classification, report)?;
    let errors: Errors = wellformed::check(extracted, backend)
        .iter()
        .map(|w| {
            let (span, suffix) = report.place(w.binding, w.span);
            Error::new(span, format!("{}{suffix}", w.message(backend)))
                .kind(ErrorKind::WellFormedness)
                .help(w.help(backend))
                .note(report.why(forced, classification, backend))
        })
        .collect();
    if errors.is_empty() {
        Ok(backend)
    } else {
        Err(errors)
    }
}

/// Where to report a problem found in a binding, and what to add to the message: problems inside a
/// `#[pmexpr]` function are reported at the site's use of it (its own tokens are in another file).
pub(crate) struct Report<'a> {
    pub(crate) lifted: &'a Lifted,
    pub(crate) prelude: &'a Prelude,
    pub(crate) site: SpanRange,
}

impl Report<'_> {
    fn place(&self, binding: VarId, span: SpanRange) -> (SpanRange, String) {
        let origin = self
            .lifted
            .bindings
            .iter()
            .flat_map(|b| b.defs())
            .find(|d| d.ident.id == binding)
            .map(|d| &d.origin);
        match origin {
            Some(Origin::Item(item)) => {
                let at = self.prelude.use_span.get(&item.name).copied();
                (
                    at.unwrap_or(self.site),
                    format!(" (in `#[pmexpr] fn {}` at {})", item.name, item.location),
                )
            }
            _ => (span, String::new()),
        }
    }

    fn keyword(&self, k: &KeywordUse) -> (SpanRange, String) {
        self.place(k.binding, k.span)
    }

    fn why(&self, forced: Option<Forced>, c: &Classification, backend: Backend) -> String {
        if forced.is_some() {
            return format!("this `accelerate!` asks for the {backend} backend");
        }
        let first = match backend {
            Backend::Futhark => &c.futhark[0],
            Backend::Cuda => &c.cuda[0],
        };
        format!(
            "this `accelerate!` runs on the {backend} backend because it uses `{}`",
            first.keyword
        )
    }
}

fn choose_backend(
    forced: Option<Forced>,
    c: &Classification,
    report: &Report<'_>,
) -> Result<Backend, Errors> {
    // A keyword of the other backend in a site that names its backend is reported by the
    // well-formedness check ("Expression is not supported").
    match forced {
        Some(Forced::Futhark) => Ok(Backend::Futhark),
        Some(Forced::Cuda) => Ok(Backend::Cuda),
        Some(Forced::Cpu) | None => match c.class {
            Class::Futhark => Ok(Backend::Futhark),
            Class::Cuda => Ok(Backend::Cuda),
            Class::Any => Err(vec![
                Error::new(
                    report.site,
                    "The accelerate expression does not use any parallel keywords. This is not allowed.",
                )
                .help(format!(
                    "use {} (Futhark) or `par_loop` (CUDA), or name the backend: \
                     `accelerate!(backend = futhark, …)`, `backend = cuda`, or `backend = cpu` for \
                     the CPU targets only",
                    crate::classify::futhark_keywords(&[], "or")
                )),
            ]),
            Class::Invalid => {
                let (f, k) = (&c.futhark[0], &c.cuda[0]);
                let (span, suffix) = report.keyword(k);
                Err(vec![
                    Error::new(
                        span,
                        format!(
                            "Accelerate expression uses parallel keywords of multiple backends{suffix}"
                        ),
                    )
                    .help(format!(
                        "`{}` belongs to the CUDA backend and `{}` to the Futhark backend: split the \
                         expression into one `accelerate!` per backend",
                        k.keyword, f.keyword
                    )),
                ])
            }
        },
    }
}

/// The `#[pmexpr]` functions a site uses, transitively, and where the site names each.
#[derive(Debug, Default)]
pub(crate) struct Prelude {
    fns: Vec<FnDef>,
    /// Function name → the site's tokens that lead to it.
    use_span: HashMap<String, SpanRange>,
}

/// The names a piece of PMExpr mentions as variables (bound or not), with their first span.
fn mentioned(e: &Expr, out: &mut Vec<(String, SpanRange)>) {
    e.walk(&mut |x| {
        if let ExprKind::Var { ident, .. } = &x.kind {
            out.push((ident.name.clone(), ident.span));
        }
    });
}

/// Picks the `#[pmexpr]` functions the site names, then those they name, and checks that each
/// compiles on its own (its own errors are reported at its definition by `#[pmexpr]`).
fn select_prelude(
    user: &Expr,
    items: &[PreludeItem],
    records: Option<&Records>,
) -> Result<Prelude, Errors> {
    let mut by_name: HashMap<&str, Vec<&PreludeItem>> = HashMap::new();
    for item in items {
        by_name.entry(&item.name).or_default().push(item);
    }
    let mut todo = Vec::new();
    mentioned(user, &mut todo);
    let mut prelude = Prelude::default();
    let mut errors = Vec::new();
    let mut parsed: Vec<FnDef> = Vec::new();
    while let Some((name, span)) = todo.pop() {
        let Some(found) = by_name.get(name.as_str()) else {
            continue;
        };
        if prelude.use_span.contains_key(&name) {
            continue;
        }
        prelude.use_span.insert(name.clone(), span);
        if found.len() > 1 {
            let places: Vec<&str> = found.iter().map(|i| i.location.as_str()).collect();
            errors.push(
                Error::new(
                    span,
                    format!(
                        "two `#[pmexpr]` functions are named `{name}` ({})",
                        places.join(", ")
                    ),
                )
                .help("`#[pmexpr]` functions share one namespace per crate: rename one of them"),
            );
            continue;
        }
        let item = found[0];
        let broken = |why: String| {
            Error::new(
                span,
                format!(
                    "the `#[pmexpr]` function `{name}` (at {}) cannot be used: {why}",
                    item.location
                ),
            )
        };
        let def = parse::parse_fn_source(&item.source, records);
        match def {
            Ok(mut def) => {
                def.item = Some(ItemRef {
                    name: name.clone(),
                    location: item.location.clone(),
                });
                let mut inner = Vec::new();
                mentioned(&def.body, &mut inner);
                todo.extend(inner.into_iter().map(|(n, _)| (n, span)));
                parsed.push(def);
            }
            Err(why) => errors.push(broken(why)),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // Each function must stand on its own with the others: no captured variables, well-typed.
    let alone = Expr::new(
        ExprKind::RecLet {
            fns: parsed.clone(),
            body: Box::new(Expr::new(ExprKind::Lit(Lit::Unit), SpanRange::call_site())),
            scheme: Vec::new(),
        },
        SpanRange::call_site(),
    );
    // Where the site names a function (every parsed function has an entry; the site's own
    // span is never wrong).
    let site_span = user.span;
    let use_span = |name: &str| prelude.use_span.get(name).copied().unwrap_or(site_span);
    let resolved = resolve::resolve(alone);
    // A path constant that means the same wherever it is written (`f64::INFINITY`,
    // `std::f64::consts::PI`) is captured by the site like one of its own; any other name the
    // functions do not bind is an error.
    if let Ok(r) = &resolved
        && let Some(fv) = r.free_vars.iter().find(|fv| !anywhere_constant(&fv.name))
    {
        // A captured place `c.n` is the variable `c` in the function's body.
        let root = fv.name.split('.').next().unwrap_or(&fv.name);
        let user = parsed
            .iter()
            .find(|d| {
                let mut names = Vec::new();
                mentioned(&d.body, &mut names);
                names.iter().any(|(n, _)| n == root || *n == fv.name)
            })
            .or(parsed.first())
            .map(|d| d.ident.name.clone())
            .unwrap_or_default();
        let error = if fv.name.contains("::") {
            Error::new(
                use_span(&user),
                format!(
                    "the `#[pmexpr]` function `{user}` uses the path `{}`, which may mean something else where `accelerate!` is written",
                    fv.name
                ),
            )
            .help(
                "a `#[pmexpr]` function may use the constants of the number types (`f64::INFINITY`, \
                 `i32::MAX`) and of `std` or `core` (`std::f64::consts::PI`); pass any other value \
                 as a parameter",
            )
        } else {
            Error::new(
                use_span(&user),
                format!(
                    "the `#[pmexpr]` function `{user}` uses `{}`, which is neither one of its parameters nor a `#[pmexpr]` function",
                    fv.name
                ),
            )
        };
        return Err(vec![error.kind(ErrorKind::ItemUsesUnknown {
            function: user.clone(),
            name: fv.name.clone(),
        })]);
    }
    if let Err(es) = resolved.and_then(|r| infer::infer_in(r, records).map(|_| ())) {
        // Reported once, at the site's use of the functions.
        let names: Vec<&str> = parsed.iter().map(|d| d.ident.name.as_str()).collect();
        let cause = es.first().map_or(ErrorKind::Other, |e| e.kind.clone());
        return Err(vec![
            Error::new(
                names.first().map_or(site_span, |n| use_span(n)),
                format!(
                    "the `#[pmexpr]` functions used here do not compile ({}): {}",
                    names.join(", "),
                    first_message(&es)
                ),
            )
            .kind(ErrorKind::ItemsDoNotCompile {
                cause: Box::new(cause),
            })
            .help("see the errors reported at their definitions"),
        ]);
    }
    prelude.fns = parsed;
    Ok(prelude)
}

/// Whether a captured name is a path constant that resolves to the same item in every module of
/// every crate: a constant of a number type (`i32::MAX`, `f64::NEG_INFINITY`) or an item of `std`
/// or `core` (`std::f64::consts::PI`, `::core::f32::EPSILON`). A `#[pmexpr]` function's body is
/// compiled into each site that uses it, where its paths are resolved again.
fn anywhere_constant(name: &str) -> bool {
    let path = name.trim_start_matches("::");
    let Some((first, _)) = path.split_once("::") else {
        return false;
    };
    matches!(first, "std" | "core")
        || pmexpr_abi::Number::ALL
            .iter()
            .any(|n| n.rust_name() == first)
}

fn first_message(errors: &[Error]) -> String {
    errors
        .first()
        .map_or_else(|| "unknown error".into(), |e| e.message.clone())
}

/// Captured variables that are `#[pmexpr]` functions of the crate (looked up only when inference
/// failed): the crate has no build hook, so the site cannot see them.
fn missing_hook(free_vars: &[FreeVar], find: FindItem<'_>) -> Errors {
    free_vars
        .iter()
        .filter_map(|fv| {
            let location = find(&fv.name)?;
            Some(missing_hook_error(&fv.name, &location, fv.uses[0]))
        })
        .collect()
}

fn missing_hook_error(name: &str, location: &str, span: SpanRange) -> Error {
    Error::new(
        span,
        format!(
            "`{name}` is a `#[pmexpr]` function (at {location}), but `accelerate!` cannot see it: this crate has no pmexpr build hook"
        ),
    )
    .help(crate::error::ADD_HOOK_HELP)
}
