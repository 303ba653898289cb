//! Resolution: unique identifiers for every binding (the paper's renaming, which extraction
//! assumes), intrinsics and keywords recognised, and the free variables — the Rust variables the
//! accelerated expression captures — collected in order of first use.

use std::collections::HashMap;

use crate::ast::{Expr, ExprKind, FnDef, Ident, Pat, PatKind, VarId};
use crate::error::{Error, ErrorKind, Errors, SpanRange};
use crate::intrinsics::{Intrinsic, Keyword, all_names};

/// A variable of the enclosing Rust code used by the accelerated expression.
#[derive(Debug, Clone)]
pub struct FreeVar {
    /// Its identifier inside the expression.
    pub id: VarId,
    /// Its Rust name.
    pub name: String,
    /// Where it is used, in order.
    pub uses: Vec<SpanRange>,
}

/// A resolved expression.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The expression, every name resolved.
    pub expr: Expr,
    /// The captured variables, in order of first use.
    pub free_vars: Vec<FreeVar>,
    /// The name of every identifier (`names[id.0]`).
    pub names: Vec<String>,
}

/// Resolves the names of an expression.
pub fn resolve(mut expr: Expr) -> Result<Resolved, Errors> {
    let mut r = Resolver::default();
    r.expr(&mut expr);
    if r.errors.is_empty() {
        Ok(Resolved {
            expr,
            free_vars: r.free_vars,
            names: r.names,
        })
    } else {
        Err(r.errors)
    }
}

#[derive(Default)]
struct Resolver {
    scope: Scope,
    names: Vec<String>,
    free_vars: Vec<FreeVar>,
    /// `free_vars`' index by name.
    free_index: HashMap<String, usize>,
    errors: Errors,
}

/// The names in scope, innermost last: a stack of bindings, and for each name the stack of its
/// bindings, so a lookup does not scan the thousands of `let`s a block may hold.
#[derive(Default)]
struct Scope {
    order: Vec<String>,
    by_name: HashMap<String, Vec<VarId>>,
}

impl Scope {
    fn push(&mut self, name: &str, id: VarId) {
        self.order.push(name.to_string());
        self.by_name.entry(name.to_string()).or_default().push(id);
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    /// Drops the bindings made since the scope had `n`.
    fn truncate(&mut self, n: usize) {
        while self.order.len() > n {
            let Some(name) = self.order.pop() else { break };
            if let Some(ids) = self.by_name.get_mut(&name) {
                ids.pop();
                if ids.is_empty() {
                    self.by_name.remove(&name);
                }
            }
        }
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.by_name.get(name).and_then(|ids| ids.last()).copied()
    }
}

/// The names closest to `name` among the intrinsics and keywords, for "did you mean".
fn suggest(name: &str) -> Option<&'static str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                cur.push(
                    (prev[j] + usize::from(ca != *cb))
                        .min(prev[j + 1] + 1)
                        .min(cur[j] + 1),
                );
            }
            prev = cur;
        }
        prev[b.len()]
    }
    all_names()
        .map(|n| (distance(name, n), n))
        .filter(|&(d, n)| d <= 2 && d < n.len())
        .min()
        .map(|(_, n)| n)
}

impl Resolver {
    fn bind(&mut self, ident: &mut Ident) {
        let id = VarId(self.names.len() as u32);
        self.names.push(ident.name.clone());
        ident.id = id;
        self.scope.push(&ident.name, id);
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scope.lookup(name)
    }

    fn free(&mut self, ident: &mut Ident) {
        if let Some(&i) = self.free_index.get(&ident.name) {
            let fv = &mut self.free_vars[i];
            fv.uses.push(ident.span);
            ident.id = fv.id;
            return;
        }
        let id = VarId(self.names.len() as u32);
        self.names.push(ident.name.clone());
        ident.id = id;
        self.free_index
            .insert(ident.name.clone(), self.free_vars.len());
        self.free_vars.push(FreeVar {
            id,
            name: ident.name.clone(),
            uses: vec![ident.span],
        });
    }

    /// `x.f.g` where `x` names no PMExpr variable, intrinsic or keyword: the Rust place
    /// `"x.f.g"`, captured like a variable of that name.
    fn captured_place(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Proj { expr, label } => {
                let base = match &expr.kind {
                    ExprKind::Var { ident, .. }
                        if self.lookup(&ident.name).is_none()
                            && Intrinsic::from_name(&ident.name).is_none()
                            && Keyword::from_name(&ident.name).is_none() =>
                    {
                        ident.name.clone()
                    }
                    _ => self.captured_place(expr)?,
                };
                Some(format!("{base}.{label}"))
            }
            _ => None,
        }
    }

    fn pat(&mut self, p: &mut Pat) {
        match &mut p.kind {
            PatKind::Bind(i) => self.bind(i),
            PatKind::Record(fs) => fs.iter_mut().for_each(|(_, p)| self.pat(p)),
            PatKind::Wild | PatKind::Lit(_) => {}
        }
    }

    fn expr(&mut self, e: &mut Expr) {
        let span = e.span;
        // `self.data`, `cfg.n`, `t.0` on a Rust variable: the field is captured on its own,
        // whatever the struct is (rustc knows its type; it need not be a record).
        if let Some(path) = self.captured_place(e) {
            let mut ident = Ident::new(path, span);
            self.free(&mut ident);
            e.kind = ExprKind::Var {
                ident,
                inst: Vec::new(),
            };
            return;
        }
        match &mut e.kind {
            ExprKind::Var { ident, .. } => {
                if let Some(id) = self.lookup(&ident.name) {
                    ident.id = id;
                } else if let Some(i) = Intrinsic::from_name(&ident.name) {
                    e.kind = ExprKind::Intrinsic(i);
                } else if let Some(k) = Keyword::from_name(&ident.name) {
                    self.errors.push(
                        Error::new(
                            ident.span,
                            format!(
                                "`{}` is a parallel keyword and must be applied to its arguments",
                                k.name()
                            ),
                        )
                        .help(format!("write `{}`", k.usage())),
                    );
                } else {
                    self.free(ident);
                }
            }
            ExprKind::App { func, args } => {
                args.iter_mut().for_each(|a| self.expr(a));
                if let ExprKind::Var { ident, .. } = &func.kind
                    && self.lookup(&ident.name).is_none()
                {
                    if let Some(k) = Keyword::from_name(&ident.name) {
                        let n = args.len();
                        if n != k.arity() {
                            self.errors.push(
                                Error::new(
                                    span,
                                    format!(
                                        "`{}` takes {} arguments but {n} {} supplied",
                                        k.name(),
                                        k.arity(),
                                        if n == 1 { "was" } else { "were" }
                                    ),
                                )
                                .help(format!("write `{}`", k.usage())),
                            );
                        }
                        e.kind = ExprKind::Keyword {
                            kw: k,
                            args: std::mem::take(args),
                        };
                        return;
                    }
                    if Intrinsic::from_name(&ident.name).is_none() {
                        let mut err = Error::new(
                            ident.span,
                            format!("cannot find the PMExpr function `{}`", ident.name),
                        )
                        .kind(ErrorKind::UnknownFunction {
                            name: ident.name.clone(),
                        });
                        err = match suggest(&ident.name) {
                                Some(s) => err.help(format!("did you mean `{s}`?")),
                                None => err.help(format!(
                                    "`accelerate!` cannot call Rust functions or closures; define `{0}` inside the accelerated expression with `let {0} = |…| …;` or a `fn` item, or mark a function of this crate `#[pmexpr] fn {0}(…)` (every site can call it when the crate has the pmexpr build hook: `pmexpr_build::Build::new().compile()` in build.rs)",
                                    ident.name
                                )),
                            };
                        self.errors.push(err);
                        return;
                    }
                }
                self.expr(func);
            }
            ExprKind::Lam { params, body } => {
                let n = self.scope.len();
                params.iter_mut().for_each(|p| self.bind(&mut p.ident));
                self.expr(body);
                self.scope.truncate(n);
            }
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                self.expr(value);
                let n = self.scope.len();
                self.bind(&mut binder.ident);
                self.expr(body);
                self.scope.truncate(n);
            }
            ExprKind::RecLet { fns, body, .. } => {
                let n = self.scope.len();
                // A set, not a scan of the group: a block may hold thousands of `fn`s.
                let mut seen = std::collections::HashSet::new();
                for f in fns.iter_mut() {
                    if !seen.insert(f.ident.name.clone()) {
                        self.errors.push(Error::new(
                            f.ident.span,
                            format!(
                                "the function `{}` is defined twice in this block",
                                f.ident.name
                            ),
                        ));
                    }
                    self.bind(&mut f.ident);
                }
                for f in fns.iter_mut() {
                    let m = self.scope.len();
                    f.params.iter_mut().for_each(|p| self.bind(&mut p.ident));
                    self.expr(&mut f.body);
                    self.scope.truncate(m);
                }
                self.expr(body);
                self.scope.truncate(n);
                if fns.len() > 1 {
                    let placeholder = ExprKind::Lit(crate::ast::Lit::Unit);
                    let ExprKind::RecLet { fns, body, .. } =
                        std::mem::replace(&mut e.kind, placeholder)
                    else {
                        unreachable!("matched above")
                    };
                    *e = dependency_groups(fns, *body, span);
                }
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => {
                self.expr(scrutinee);
                let n = self.scope.len();
                self.pat(pat);
                self.expr(then);
                self.scope.truncate(n);
                self.expr(otherwise);
            }
            ExprKind::Lit(_) | ExprKind::Intrinsic(_) | ExprKind::Never(_) => {}
            ExprKind::Record(fs) => fs.iter_mut().for_each(|(_, e)| self.expr(e)),
            ExprKind::Proj { expr, .. } => self.expr(expr),
            ExprKind::Seq(es) | ExprKind::Keyword { args: es, .. } => {
                es.iter_mut().for_each(|e| self.expr(e))
            }
            ExprKind::Soac(s) => s.parts_mut(&mut |e| self.expr(e)),
            ExprKind::Imp(_) => self.errors.push(Error::new(
                span,
                "internal error: imperative syntax that was not lowered",
            )),
        }
    }
}

/// Splits a group of `fn` items into the strongly connected components of their call graph,
/// nested so that each component sees the ones it calls (dependency analysis, as in Haskell): a
/// function that does not call another is generalized before that other uses it, so a helper can
/// be used at two types by its siblings.
fn dependency_groups(fns: Vec<FnDef>, body: Expr, span: SpanRange) -> Expr {
    let index: HashMap<VarId, usize> = fns
        .iter()
        .enumerate()
        .map(|(j, f)| (f.ident.id, j))
        .collect();
    let calls: Vec<Vec<usize>> = fns
        .iter()
        .map(|f| {
            let lam = Expr::new(
                ExprKind::Lam {
                    params: f.params.clone(),
                    body: Box::new(f.body.clone()),
                },
                f.span,
            );
            // The group's functions it calls, found from its free variables (not a scan of the
            // group per function: a block may hold thousands of `fn`s).
            let mut callees: Vec<usize> = lam
                .free_vars()
                .iter()
                .filter_map(|id| index.get(id).copied())
                .collect();
            callees.sort_unstable();
            callees
        })
        .collect();
    // Tarjan's algorithm: components come out callees first.
    struct Tarjan<'c> {
        calls: &'c [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.calls[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                component.sort_unstable();
                self.out.push(component);
            }
        }
    }
    let n = fns.len();
    let mut t = Tarjan {
        calls: &calls,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    let components = t.out;
    let mut fns: Vec<Option<FnDef>> = fns.into_iter().map(Some).collect();
    let mut result = body;
    for component in components.into_iter().rev() {
        let group: Vec<FnDef> = component.iter().filter_map(|&i| fns[i].take()).collect();
        result = Expr::new(
            ExprKind::RecLet {
                fns: group,
                body: Box::new(result),
                scheme: Vec::new(),
            },
            span,
        );
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::parse_tokens;
    use quote::quote;

    fn resolved(tokens: proc_macro2::TokenStream) -> Resolved {
        resolve(parse_tokens(tokens).unwrap()).unwrap_or_else(|e| panic!("{}", e[0].text()))
    }

    fn error(tokens: proc_macro2::TokenStream) -> String {
        resolve(parse_tokens(tokens).unwrap()).expect_err("fails")[0].text()
    }

    #[test]
    fn free_variables_in_order_of_first_use() {
        let r = resolved(quote!({
            let f = |x| muli(c, x);
            reduce(addi, 0, map(f, s))
        }));
        let names: Vec<&str> = r.free_vars.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["c", "s"]);
    }

    #[test]
    fn fields_of_rust_values_are_captured_alone() {
        let r = resolved(quote!({
            let q = (1, 2);
            map(|x| x * self.cfg.scale + q.0 + t.1, self.data)
        }));
        let names: Vec<&str> = r.free_vars.iter().map(|f| f.name.as_str()).collect();
        // `q.0` reads the expression's own tuple; the others are Rust places, `self.cfg.scale`
        // once however often it is used.
        assert_eq!(names, ["self.cfg.scale", "t.1", "self.data"]);
    }

    #[test]
    fn shadowing_gives_distinct_identifiers() {
        let r = resolved(quote!({
            let x = 1;
            let x = addi(x, 1);
            x
        }));
        assert_eq!(r.names.iter().filter(|n| *n == "x").count(), 2);
        assert!(r.free_vars.is_empty());
    }

    #[test]
    fn locals_shadow_intrinsics() {
        let r = resolved(quote!({
            let length = 3;
            addi(length, 1)
        }));
        assert!(r.free_vars.is_empty());
    }

    #[test]
    fn keywords_need_their_arguments() {
        assert!(error(quote!(map(f))).starts_with("`map` takes 2 arguments but 1 was supplied"));
        assert!(
            error(quote!({
                let g = reduce;
                g
            }))
            .contains("must be applied")
        );
    }

    #[test]
    fn unknown_functions_get_suggestions() {
        assert_eq!(
            error(quote!(lenght(s))),
            "cannot find the PMExpr function `lenght`\nhelp: did you mean `length`?"
        );
        let e = error(quote!(frobnicate(s)));
        assert!(e.contains("cannot call Rust functions"), "{e}");
        assert!(e.contains("`#[pmexpr] fn frobnicate(…)`"), "{e}");
        assert!(e.contains("build hook"), "{e}");
    }
}
