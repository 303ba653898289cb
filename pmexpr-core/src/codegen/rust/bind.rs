//! Bindings: chains of `let`s, recursive groups as lifted `fn` items, and `match` with the
//! variables its pattern binds.

use std::collections::{BTreeSet, HashMap};

use proc_macro2::{Delimiter, Group, Ident, TokenStream, TokenTree};
use quote::quote;

use super::code::{field_index, pat_test};
use super::{Arg, Binding, Gen, is_place};
use crate::ast::{Expr, ExprKind, FnDef, Lit, Param, Pat, PatKind, VarId};
use crate::tailrec::{TailLoop, group_loop};
use crate::types::{Label, Type};

impl Gen<'_> {
    /// A chain of `let`s and recursive groups (a block's statements) as one Rust block: a flat
    /// list of statements, not one nested block per statement, which rustc's parser cannot take
    /// 10,000 deep (and this loop needs no stack per statement either).
    pub(super) fn block_chain(&mut self, e: &Expr) -> TokenStream {
        // Statements are moved into one stream as they come: interpolating a `Vec` of them with
        // `quote!` would copy every token of the block (and keep them all twice).
        let mut stmts = TokenStream::new();
        let mut saved: Vec<(VarId, Option<Binding>)> = Vec::new();
        let mut cur = e;
        // The block's label, once a test leaves it early (below).
        let mut label: Option<syn::Lifetime> = None;
        loop {
            let binds = match &cur.kind {
                // A test whose other branch goes on with statements (a loop body's `if c {
                // continue; }`, a `match` arm before more code): `if test { break 'b then; }`
                // and the statements in this block, not one block deeper per test.
                ExprKind::Match {
                    scrutinee,
                    pat,
                    then,
                    otherwise,
                } if matches!(
                    otherwise.kind,
                    ExprKind::Let { .. } | ExprKind::RecLet { .. }
                ) && chain_arm(cur).is_some() =>
                {
                    let l = label.get_or_insert_with(|| self.fresh_label()).clone();
                    let exit = self.early_exit(scrutinee, pat, then, &l);
                    stmts.extend([exit]);
                    cur = otherwise;
                    Vec::new()
                }
                ExprKind::Let {
                    binder,
                    value,
                    body,
                    ..
                } => {
                    // `let b = { let x = v; e }` as `let x = v; let b = e`: every variable has
                    // its own name, so `x` may outlive its block, and `e` is then a value that
                    // `let_stmt` may write in place (a `swap` is a block of `let`s around two
                    // `set`s).
                    let mut value = &**value;
                    while let ExprKind::Let {
                        binder: x,
                        value: v,
                        body: e,
                        ..
                    } = &value.kind
                    {
                        let (stmt, bind) = match self.stack_array(x, v, e) {
                            Some(array) => array,
                            None => self.let_stmt(x, v),
                        };
                        stmts.extend([stmt]);
                        if let Some((id, b)) = bind {
                            saved.push((id, self.bindings.insert(id, b)));
                        }
                        value = e;
                    }
                    let (stmt, bind) = match self.stack_array(binder, value, body) {
                        Some(array) => array,
                        None => self.let_stmt(binder, value),
                    };
                    stmts.extend([stmt]);
                    cur = body;
                    bind.into_iter().collect()
                }
                ExprKind::RecLet { fns, body, .. } => {
                    let (items, binds) = self.rec_let_items(fns, false);
                    stmts.extend(items);
                    cur = body;
                    binds
                }
                _ => break,
            };
            for (id, b) in binds {
                saved.push((id, self.bindings.insert(id, b)));
            }
        }
        let tail = self.value(cur);
        for (id, old) in saved.into_iter().rev() {
            match old {
                Some(b) => self.bindings.insert(id, b),
                None => self.bindings.remove(&id),
            };
        }
        stmts.extend([tail]);
        let block = TokenTree::Group(Group::new(Delimiter::Brace, stmts));
        match label {
            None => TokenStream::from(block),
            Some(l) => quote!({ #l: #block }),
        }
    }

    /// A fresh block label.
    pub(super) fn fresh_label(&mut self) -> syn::Lifetime {
        let name = self.fresh("block");
        syn::Lifetime::new(&format!("'{name}"), proc_macro2::Span::call_site())
    }

    /// The test of a `match` of one arm ([`chain_arm`]) as a statement that leaves the block
    /// labelled `label` with the arm's value when it holds.
    fn early_exit(
        &mut self,
        scrutinee: &Expr,
        pat: &Pat,
        then: &Expr,
        label: &syn::Lifetime,
    ) -> TokenStream {
        if let PatKind::Lit(Lit::Bool(b)) = pat.kind {
            let c = self.value(scrutinee);
            let t = self.value(then);
            let test = if b { quote!(#c) } else { quote!(!(#c)) };
            return quote!(if #test { break #label { #t }; });
        }
        let (setup, test, t) = self.arm(scrutinee, pat, then);
        quote!(#setup if #test { break #label { #t }; })
    }

    /// One arm `pat => then` over `scrutinee`: the statements that hold the scrutinee, the
    /// pattern's test of it, and the arm's value after the statements that bind the pattern's
    /// variables (for a block to hold).
    fn arm(
        &mut self,
        scrutinee: &Expr,
        pat: &Pat,
        then: &Expr,
    ) -> (TokenStream, TokenStream, TokenStream) {
        let (s, setup) = self.scrutinee(scrutinee);
        let test = pat_test(pat, quote!(#s), &self.rt);
        let mut stmts = Vec::new();
        let mut scope = Vec::new();
        self.pat_binds(pat, quote!(#s), true, false, &mut stmts, &mut scope);
        let t = self.with_scope(scope, |g| g.value(then));
        (setup, test, quote!(#(#stmts)* #t))
    }

    /// The statement of `let binder = value;` and the binding it adds to the scope after it.
    fn let_stmt(
        &mut self,
        binder: &Param,
        value: &Expr,
    ) -> (TokenStream, Option<(VarId, Binding)>) {
        if let Some(write) = self.write_in_place(binder, value) {
            return write;
        }
        let x = self.local(binder.ident.id);
        if binder.ident.name == "_" {
            let v = self.value(value);
            return (quote!(let _ = #v;), None);
        }
        match &value.kind {
            ExprKind::Lam {
                params,
                body: lam_body,
            } if self.lambda_as_item(value) => {
                // A `fn` item lifted over what it uses, as a recursive group's members are: a
                // closure that calls the closure before it has a type that nests the other's,
                // and rustc's check that it is `Sync` (a keyword's function must be) recursed
                // once per level, past its limit at 70 `let`s (E0275).
                let def = FnDef {
                    ident: binder.ident.clone(),
                    params: params.clone(),
                    ret: None,
                    body: (**lam_body).clone(),
                    span: value.span,
                    ty: value.ty.clone(),
                    item: None,
                };
                let (items, mut binds) = self.rec_let_items(std::slice::from_ref(&def), true);
                (quote!(#(#items)*), binds.pop())
            }
            ExprKind::Lam {
                params,
                body: lam_body,
            } => {
                if self.launches_in(value) {
                    self.host.launchers.insert(x.to_string());
                }
                let lam_free = value.free_vars();
                let caps = self.captures(lam_free);
                let (clones, mut scope) = self.capture_clones(&caps);
                let mut ps = Vec::new();
                for p in params {
                    let px = self.local(p.ident.id);
                    let pt = self.pty(&p.ty);
                    ps.push(quote!(#px: #pt));
                    scope.push((
                        p.ident.id,
                        Binding::Value {
                            by_ref: !self.is_copy(&p.ty),
                            ty: p.ty.clone(),
                        },
                    ));
                }
                let ret = self.rty(&lam_body.ty);
                let lb = self.with_scope(scope, |g| g.value(lam_body));
                let binding = Binding::Closure {
                    rust: x.clone(),
                    params: params.iter().map(|p| p.ty.clone()).collect(),
                    ret: lam_body.ty.clone(),
                };
                (
                    quote!(let #x = { #(#clones)* move |#(#ps),*| -> #ret { #lb } };),
                    Some((binder.ident.id, binding)),
                )
            }
            ExprKind::Var { ident, .. }
                if matches!(
                    self.bindings.get(&ident.id),
                    Some(Binding::Item { .. } | Binding::Closure { .. })
                ) =>
            {
                // An alias of a known function stays known.
                let b0 = self.bindings[&ident.id].clone();
                let (stmt, binding) = match b0 {
                    Binding::Closure { rust, params, ret } => {
                        if self.host.launchers.contains(&rust.to_string()) {
                            self.host.launchers.insert(x.to_string());
                        }
                        (
                            quote!(let #x = #rust.clone();),
                            Binding::Closure {
                                rust: x.clone(),
                                params,
                                ret,
                            },
                        )
                    }
                    item => (quote!(), item),
                };
                (stmt, Some((binder.ident.id, binding)))
            }
            _ if !self.is_copy(&value.ty) && is_place(value, &self.bindings) => {
                let v = self.arg(value);
                let binding = Binding::Value {
                    by_ref: true,
                    ty: value.ty.clone(),
                };
                (quote!(let #x = #v;), Some((binder.ident.id, binding)))
            }
            _ => {
                let v = self.value(value);
                let t = self.rty(&value.ty);
                let binding = Binding::Value {
                    by_ref: false,
                    ty: value.ty.clone(),
                };
                (quote!(let #x: #t = #v;), Some((binder.ident.id, binding)))
            }
        }
    }

    /// Whether a `let`-bound lambda prints as a `fn` item: it launches no kernel, uses no
    /// closure, and nothing being printed around it lends it locals that an item cannot see (the
    /// lines, slices, views and in-place state of the loops and grids being printed).
    fn lambda_as_item(&self, value: &Expr) -> bool {
        let quiet = self.windows.is_empty()
            && self.slices.is_empty()
            && self.filling.is_none()
            && self.tail_loop.is_none()
            && self.in_place.is_empty()
            && self.spares.is_empty()
            && self.views.is_empty()
            && self.branch_local.is_none();
        quiet
            && !self.launches_in(value)
            && (self.captures(value.free_vars()).iter())
                .all(|id| matches!(self.bindings.get(id), Some(Binding::Value { .. })))
    }

    /// A recursive group (or a `let`-bound `lambda`): nested `fn` items lifted over the variables
    /// their bodies use.
    /// Returns the items and the bindings of the members, for the scope after the group.
    fn rec_let_items(
        &mut self,
        fns: &[FnDef],
        lambda: bool,
    ) -> (Vec<TokenStream>, Vec<(VarId, Binding)>) {
        let members: BTreeSet<VarId> = fns.iter().map(|f| f.ident.id).collect();
        let mut free = BTreeSet::new();
        for f in fns {
            let lam = Expr::typed(
                ExprKind::Lam {
                    params: f.params.clone(),
                    body: Box::new(f.body.clone()),
                },
                f.span,
                Type::unit(),
            );
            free.extend(lam.free_vars().into_iter().filter(|v| !members.contains(v)));
        }
        let extras: Vec<(VarId, Type)> = self
            .captures(free)
            .into_iter()
            .map(|id| {
                let ty = match &self.bindings[&id] {
                    Binding::Value { ty, .. } => ty.clone(),
                    Binding::Closure { params, ret, .. } | Binding::Item { params, ret, .. } => {
                        Type::arrows(params.clone(), ret.clone())
                    }
                };
                (id, ty)
            })
            .collect();
        // Every member takes the call when one of them launches (they may call each other).
        let launches = fns.iter().any(|f| self.launches_in(&f.body));
        if launches {
            for f in fns {
                let name = self.local(f.ident.id).to_string();
                self.host.launchers.insert(name);
            }
        }
        let looped = group_loop(fns);
        let owns = looped.is_some();
        let member_bindings: Vec<(VarId, Binding)> = fns
            .iter()
            .map(|f| {
                let (params, ret) = f.ty.split_arrows(f.params.len());
                (
                    f.ident.id,
                    Binding::Item {
                        rust: self.local(f.ident.id),
                        params: params.into_iter().cloned().collect(),
                        ret: ret.clone(),
                        extras: extras.clone(),
                        owns,
                    },
                )
            })
            .collect();
        // A `fn` item sees only items, its parameters and its lifted variables: every variable its
        // body uses that is not an item is among the lifted ones (`captures`), rebound in its own
        // scope, so the outer scope need not be filtered (a filtered copy per group made a chain
        // of n groups cost n²).
        let items = self.with_scope(member_bindings.clone(), |g| {
            let mut items = Vec::new();
            for f in fns {
                let mut own = Vec::new();
                let mut sig = Vec::new();
                for p in &f.params {
                    let x = g.local(p.ident.id);
                    let t = if owns { g.rty(&p.ty) } else { g.pty(&p.ty) };
                    sig.push(quote!(#x: #t));
                    own.push((
                        p.ident.id,
                        Binding::Value {
                            by_ref: !owns && !g.is_copy(&p.ty),
                            ty: p.ty.clone(),
                        },
                    ));
                }
                for (id, ty) in &extras {
                    let x = g.local(*id);
                    let t = g.pty(ty);
                    sig.push(quote!(#x: #t));
                    own.push((
                        *id,
                        Binding::Value {
                            by_ref: !g.is_copy(ty),
                            ty: ty.clone(),
                        },
                    ));
                }
                if launches {
                    let rt = &g.rt;
                    sig.push(quote!(__pm_call: &::core::cell::RefCell<#rt::CudaCall<'pm>>));
                }
                let ret = g.rty(&f.body.ty);
                let name = g.local(f.ident.id);
                let varying = looped.as_ref().map(|l| (g.varying(f, l), g.viewed(f, l)));
                let b = g.with_scope(own, |g| match varying {
                    Some((varying, viewed)) => g.loop_body(f, varying, &viewed),
                    None => g.value(&f.body),
                });
                let generics = g.generics();
                // A lambda's item is as open to inlining as the closure it replaces.
                let inline = lambda.then(|| quote!(#[inline]));
                items.push(quote! {
                    #inline
                    #[allow(unused_variables, unused_braces, unused_parens, non_snake_case, unreachable_code, clippy::all)]
                    fn #name #generics (#(#sig),*) -> #ret { #b }
                });
            }
            items
        });
        (items, member_bindings)
    }

    /// `let a = [x, y, …]` of numbers or `bool`s whose body only reads `a` (`get`, its length,
    /// the source of a fused keyword): a Rust array on the stack, as the same Rust code has it,
    /// not a sequence on the heap (an eight-neighbour count per cell allocated twice per cell).
    fn stack_array(
        &mut self,
        binder: &Param,
        value: &Expr,
        body: &Expr,
    ) -> Option<(TokenStream, Option<(VarId, Binding)>)> {
        let (ExprKind::Seq(es), Type::Seq(elem)) = (&value.kind, &value.ty) else {
            return None;
        };
        let x = binder.ident.id;
        if es.is_empty() || !self.is_copy(elem) || binder.ident.name == "_" || !reads_only(body, x)
        {
            return None;
        }
        let vs: Vec<TokenStream> = es.iter().map(|e| self.value(e)).collect();
        let (a, t, n) = (self.local(x), self.rty(elem), es.len());
        let binding = Binding::Value {
            by_ref: false,
            ty: binder.ty.clone(),
        };
        Some((quote!(let #a: [#t; #n] = [#(#vs),*];), Some((x, binding))))
    }

    /// `let b = set(a, i, v)` where `a` is a loop's owned sequence that nothing reads after this
    /// (the optimizer's `moves`): a write into `a`'s local, after which `b` names that local
    /// (`in_place`), so that the loop's next iteration needs no assignment (`tail_call`). The
    /// sequence stays where it is: moved into the write and back, it went through memory on
    /// every iteration. Sequences of sequences keep `set`, whose result debug mode checks.
    fn write_in_place(
        &mut self,
        binder: &Param,
        value: &Expr,
    ) -> Option<(TokenStream, Option<(VarId, Binding)>)> {
        if value.ty.has_nested_seq() || binder.ident.name == "_" {
            return None;
        }
        if let Some(a) = self.written_in_branches(value) {
            // `let b = if c { a[i] = v; a } else { a }`: the `if` as a statement, `b` naming `a`.
            let saved = self.branch_local.replace(a.clone());
            let v = self.value(value);
            self.branch_local = saved;
            self.in_place.insert(binder.ident.id, a);
            let binding = Binding::Value {
                by_ref: false,
                ty: binder.ty.clone(),
            };
            return Some((quote!(let () = #v;), Some((binder.ident.id, binding))));
        }
        let (a, sets) = self.written_local(value)?;
        let writes = self.writes_into(&sets, &a);
        self.in_place.insert(binder.ident.id, a);
        let binding = Binding::Value {
            by_ref: false,
            ty: binder.ty.clone(),
        };
        Some((quote!({ #writes }), Some((binder.ident.id, binding))))
    }

    /// The loop's local that a chain of `set`s (`set(set(a, i, x), j, y)`, a `swap`) writes,
    /// when the chain starts from the last use of `a` (the optimizer's `moves`), and the chain's
    /// `set`s, outermost first.
    fn written_local<'e>(&self, e: &'e Expr) -> Option<(Ident, Vec<[&'e Expr; 2]>)> {
        let (base, sets) = set_chain(e)?;
        let ExprKind::Var { ident, .. } = &base.kind else {
            return None;
        };
        let a = self.in_place.get(&ident.id)?;
        self.facts
            .moves
            .contains(&base.id)
            .then(|| (a.clone(), sets))
    }

    /// The loop's local that every branch of the `match` `e` ends with, moved, after writing it
    /// in place or not (the lowering of `if c { a[i] = v; }`): the branches then print as
    /// statements. `views.rs`'s `tails` answers the same question.
    fn written_in_branches(&self, e: &Expr) -> Option<Ident> {
        if !matches!(e.kind, ExprKind::Match { .. }) {
            return None;
        }
        let mut names = HashMap::new();
        let mut local = None;
        self.branch_tails(e, &mut names, &mut local)
            .then_some(local?)
    }

    /// Whether every branch of `e` ends with a moved use of the same loop's local (`local`,
    /// found at the first), through the versions that writes in place name in the branches
    /// (`names`: their variables → the local).
    fn branch_tails(
        &self,
        e: &Expr,
        names: &mut HashMap<VarId, Ident>,
        local: &mut Option<Ident>,
    ) -> bool {
        let mut e = e;
        loop {
            match &e.kind {
                ExprKind::Var { ident, .. } => {
                    let Some(x) = self.in_place.get(&ident.id).or(names.get(&ident.id)) else {
                        return false;
                    };
                    let same = local.get_or_insert_with(|| x.clone()) == x;
                    return same && self.facts.moves.contains(&e.id);
                }
                ExprKind::Let {
                    binder,
                    value,
                    body,
                    ..
                } => {
                    // As `block_chain` prints them: the `let`s of a block value first.
                    let mut lets = vec![(binder, &**value)];
                    let mut v = &**value;
                    while let ExprKind::Let {
                        binder: x,
                        value: xv,
                        body: xb,
                        ..
                    } = &v.kind
                    {
                        lets.push((x, &**xv));
                        v = xb;
                    }
                    lets[0].1 = v;
                    lets.rotate_left(1);
                    for (b, v) in lets {
                        if b.ident.name == "_" || v.ty.has_nested_seq() {
                            continue;
                        }
                        let base = set_chain(v).and_then(|(base, _)| {
                            let ExprKind::Var { ident, .. } = &base.kind else {
                                return None;
                            };
                            let x = self.in_place.get(&ident.id).or(names.get(&ident.id))?;
                            self.facts.moves.contains(&base.id).then(|| x.clone())
                        });
                        let written = match base {
                            Some(x) => Some(x),
                            None if matches!(v.kind, ExprKind::Match { .. }) => {
                                let mut inner = names.clone();
                                let mut l = None;
                                if self.branch_tails(v, &mut inner, &mut l) {
                                    *names = inner;
                                    l
                                } else {
                                    None
                                }
                            }
                            None => None,
                        };
                        if let Some(x) = written {
                            names.insert(b.ident.id, x);
                        }
                    }
                    e = body;
                }
                ExprKind::Match {
                    then, otherwise, ..
                } => {
                    if !self.branch_tails(then, names, local) {
                        return false;
                    }
                    e = otherwise;
                }
                ExprKind::RecLet { body, .. } => e = body,
                _ => return false,
            }
        }
    }

    /// The writes of a chain of `set`s into the local `a` ([`Gen::written_local`]) in `set`'s
    /// order: the indices and values from the outermost `set` in, then the writes from the
    /// innermost out.
    fn writes_into(&mut self, sets: &[[&Expr; 2]], a: &Ident) -> TokenStream {
        let rt = self.rt.clone();
        let site = self.site();
        let mut out = TokenStream::new();
        let mut writes = Vec::new();
        for [i, v] in sets {
            let ix = self.index_value(i);
            let x = self.value(v);
            let (i, y) = (self.fresh("index"), self.fresh("value"));
            out.extend(quote!(let #i = #ix; let #y = #x;));
            writes.push(match self.views.get(&a.to_string()) {
                Some(view) => quote!(#rt::rt::set_view(#site, &mut #view, #i, #y);),
                None => quote!(#rt::rt::set_mut(#site, &mut #a, #i, #y);),
            });
        }
        out.extend(writes.into_iter().rev());
        out
    }

    /// The parameters that the loop of a tail-recursive function reassigns ([`group_loop`]).
    fn varying(&mut self, f: &FnDef, l: &TailLoop) -> Vec<(usize, Ident)> {
        f.params
            .iter()
            .enumerate()
            .filter(|(i, _)| l.varying[*i])
            .map(|(i, p)| (i, self.local(p.ident.id)))
            .collect()
    }

    /// The body of a tail-recursive `fn` item as a loop: the parameters that change are
    /// rebound `mut`, and each tail call assigns them and continues (see `tail_call`).
    ///
    /// Its parameters are owned (`Binding::Item::owns`): a caller hands over the state, moved
    /// where it was the caller's last use, so the loop's first write to a sequence finds it
    /// unshared and writes in place (a loop inside a loop copied the outer one's sequence).
    ///
    /// A sequence the body replaces by a `create` (`Facts::spares`) keeps its replaced version in
    /// a spare local, whose storage the next `create` takes (`soac.rs`, `tabulate_over`).
    ///
    /// A sequence that the body only reads and writes in place (`viewed`, `views.rs`) is checked
    /// unshared once, here, and read and written through its view.
    fn loop_body(
        &mut self,
        f: &FnDef,
        varying: Vec<(usize, Ident)>,
        viewed: &[VarId],
    ) -> TokenStream {
        let rt = self.rt.clone();
        let mut rebind = Vec::new();
        for (i, x) in &varying {
            let p = &f.params[*i];
            if matches!(p.ty, Type::Seq(_)) {
                self.in_place.insert(p.ident.id, x.clone());
            }
            rebind.push(quote!(let mut #x = #x;));
            if viewed.contains(&p.ident.id) {
                let view = self.fresh("view");
                rebind.push(quote!(let mut #view = #rt::rt::View::of(&mut #x);));
                self.views.insert(x.to_string(), view);
            }
            if self.facts.spares.values().any(|v| *v == p.ident.id) {
                let spare = self.fresh("spare");
                let t = self.rty(&p.ty);
                rebind.push(quote!(let mut #spare: #t = #rt::Seq::default();));
                self.spares.insert(p.ident.id, (x.clone(), spare));
            }
        }
        let names: Vec<String> = varying.iter().map(|(_, x)| x.to_string()).collect();
        let saved = self.tail_loop.replace((f.ident.id, varying));
        let body = self.value(&f.body);
        self.tail_loop = saved;
        for x in &names {
            self.views.remove(x);
        }
        for p in &f.params {
            self.in_place.remove(&p.ident.id);
            self.spares.remove(&p.ident.id);
        }
        // Labelled: a tail call's `continue` may leave a labelled block (`block_chain`).
        quote!({ #(#rebind)* '__pm_tail: loop { break '__pm_tail #body; } })
    }

    /// A tail call of the function whose loop is being generated: the new values of the
    /// parameters, all computed before any is assigned, then the next iteration.
    pub(super) fn tail_call(&mut self, args: &[Arg]) -> TokenStream {
        let Some((_, varying)) = self.tail_loop.clone() else {
            return quote!(::core::compile_error!(
                "internal error: a tail call outside its loop"
            ));
        };
        // A parameter whose new value is its own local (written in place, `write_in_place`)
        // keeps it.
        let varying: Vec<_> = varying
            .into_iter()
            .filter(|(i, x)| match &args[*i] {
                Arg::Expr(Expr {
                    kind: ExprKind::Var { ident, .. },
                    ..
                }) => self.in_place.get(&ident.id) != Some(x),
                _ => true,
            })
            .collect();
        let values: Vec<TokenStream> = varying.iter().map(|(i, _)| self.owned(&args[*i])).collect();
        let next = self.fresh("next");
        // The replaced version of a sequence with a spare goes there (`loop_body`).
        let assigns = varying.iter().enumerate().map(|(k, (_, x))| {
            let k = syn::Index::from(k);
            match self.spares.values().find(|(y, _)| y == x).map(|(_, s)| s) {
                Some(s) => quote!(#s = ::core::mem::replace(&mut #x, #next.#k);),
                None => quote!(#x = #next.#k;),
            }
        });
        quote!({ let #next = (#(#values,)*); #(#assigns)* continue '__pm_tail; })
    }

    pub(super) fn match_(
        &mut self,
        e: &Expr,
        scrutinee: &Expr,
        pat: &Pat,
        then: &Expr,
        otherwise: &Expr,
    ) -> TokenStream {
        if chain_len(e) >= FLAT_CHAIN {
            return self.flat_chain(e);
        }
        if let PatKind::Lit(Lit::Bool(b)) = pat.kind {
            let c = self.value(scrutinee);
            let (t, o) = (self.value(then), self.value(otherwise));
            return if b {
                quote!(if #c { #t } else { #o })
            } else {
                quote!(if #c { #o } else { #t })
            };
        }
        if let (ExprKind::Record(fields), PatKind::Record(pats)) = (&scrutinee.kind, &pat.kind)
            && pat.irrefutable()
        {
            return self.destructure(fields, pats, then);
        }
        if pat.irrefutable() && !self.is_copy(&scrutinee.ty) && !is_place(scrutinee, &self.bindings)
        {
            // A value made here (a loop's state, `let (a, n) = loop_fn(…)`) is taken apart by
            // moving its fields out, so that they are owned and the next write to one of them
            // finds it unshared; borrowed, every later use cloned it.
            let owned = self.fresh("owned");
            let v = self.value(scrutinee);
            let mut stmts = vec![quote!(let #owned = #v;)];
            let mut scope = Vec::new();
            self.pat_binds(pat, quote!(#owned), true, true, &mut stmts, &mut scope);
            let t = self.with_scope(scope, |g| g.value(then));
            return quote!({ #(#stmts)* #t });
        }
        let (setup, test, t) = self.arm(scrutinee, pat, then);
        if pat.irrefutable() {
            quote!({ #setup #t })
        } else {
            let o = self.value(otherwise);
            quote!({ #setup if #test { #t } else { #o } })
        }
    }

    /// A chain of tests — the arms of a `match`, `else if`s — as one flat Rust `match ()` of
    /// guarded arms, in order: each arm's test is its guard, the last `otherwise` the final arm.
    /// The tests of patterns read variables (a `match`'s scrutinee is named once), which are
    /// taken before the `match`. Nested, such a chain of 700 arms crashes rustc's parser.
    fn flat_chain(&mut self, e: &Expr) -> TokenStream {
        let mut setups = Vec::new();
        let mut arms = Vec::new();
        let mut e = e;
        while let Some((scrutinee, pat, then, otherwise)) = chain_arm(e) {
            if let PatKind::Lit(Lit::Bool(b)) = pat.kind {
                let c = self.value(scrutinee);
                let t = self.value(then);
                let guard = if b { quote!(#c) } else { quote!(!(#c)) };
                arms.push(quote!(_ if #guard => { #t }));
            } else {
                let (setup, test, t) = self.arm(scrutinee, pat, then);
                setups.push(setup);
                arms.push(quote!(_ if #test => { #t }));
            }
            e = otherwise;
        }
        let last = self.value(e);
        quote!({ #(#setups)* match () { #(#arms)* _ => { #last } } })
    }

    /// A variable holding `e` for a pattern to take apart, and the statements that set it: the
    /// value of a `Copy` type, a borrow of a place, or a borrow of the value made here.
    fn scrutinee(&mut self, e: &Expr) -> (Ident, TokenStream) {
        let s = self.fresh("scrutinee");
        let setup = if self.is_copy(&e.ty) {
            let v = self.value(e);
            quote!(let #s = #v;)
        } else if is_place(e, &self.bindings) {
            let v = self.arg(e);
            quote!(let #s = #v;)
        } else {
            let owned = self.fresh("owned");
            let v = self.value(e);
            quote!(let #owned = #v; let #s = &#owned;)
        };
        (s, setup)
    }

    /// `let (a, b) = (e1, e2); body` with an irrefutable pattern: each field is bound on its own
    /// (evaluated in the literal's order), so that a field that is a place (`below[j]`) is
    /// borrowed, not copied into a tuple first.
    fn destructure(
        &mut self,
        fields: &[(Label, Expr)],
        pats: &[(Label, Pat)],
        then: &Expr,
    ) -> TokenStream {
        let mut setup = Vec::new();
        let mut stmts = Vec::new();
        let mut scope = Vec::new();
        for (label, field) in fields {
            let (s, set) = self.scrutinee(field);
            setup.push(set);
            for (_, sub) in pats.iter().filter(|(l, _)| l == label) {
                self.pat_binds(sub, quote!(#s), true, false, &mut stmts, &mut scope);
            }
        }
        let t = self.with_scope(scope, |g| g.value(then));
        quote!({ #(#setup)* #(#stmts)* #t })
    }

    /// The statements that bind the variables of `p` to the parts of the value at `path`, and
    /// their bindings: copies of `Copy` parts, borrows of the others, or (`owned`: `path` is a
    /// value made here, which the pattern takes apart) the parts moved out.
    fn pat_binds(
        &mut self,
        p: &Pat,
        path: TokenStream,
        whole: bool,
        owned: bool,
        stmts: &mut Vec<TokenStream>,
        scope: &mut Vec<(VarId, Binding)>,
    ) {
        match &p.kind {
            PatKind::Bind(ident) => {
                if ident.name == "_" {
                    return;
                }
                let x = self.local(ident.id);
                if owned || self.is_copy(&p.ty) {
                    stmts.push(quote!(let #x = #path;));
                    scope.push((
                        ident.id,
                        Binding::Value {
                            by_ref: false,
                            ty: p.ty.clone(),
                        },
                    ));
                } else {
                    if whole {
                        stmts.push(quote!(let #x = #path;));
                    } else {
                        stmts.push(quote!(let #x = &#path;));
                    }
                    scope.push((
                        ident.id,
                        Binding::Value {
                            by_ref: true,
                            ty: p.ty.clone(),
                        },
                    ));
                }
            }
            PatKind::Record(fs) => {
                for (l, sub) in fs {
                    let idx = field_index(&p.ty, l);
                    self.pat_binds(sub, quote!(#path.#idx), false, owned, stmts, scope);
                }
            }
            PatKind::Wild | PatKind::Lit(_) => {}
        }
    }
}

/// A chain of `set`s (`set(set(a, i, x), j, y)`, a `swap`): the variable it starts from, and
/// the index and value of each `set`, outermost first. Walked, not recursed (a user's chain may
/// be long).
pub(super) fn set_chain(e: &Expr) -> Option<(&Expr, Vec<[&Expr; 2]>)> {
    let mut sets = Vec::new();
    let mut cur = e;
    loop {
        let ExprKind::App { func, args } = &cur.kind else {
            return None;
        };
        let (ExprKind::Intrinsic(crate::intrinsics::Intrinsic::Set), [s, i, v]) =
            (&func.kind, args.as_slice())
        else {
            return None;
        };
        sets.push([i, v]);
        match &s.kind {
            ExprKind::Var { .. } => return Some((s, sets)),
            _ => cur = s,
        }
    }
}

/// How long a chain of tests is printed as one flat `match` ([`Gen::flat_chain`]); shorter ones
/// are nested `if`s.
const FLAT_CHAIN: usize = 4;

/// A `Match` that can be an arm of a flat chain: a test of a condition (a `bool` pattern), or a
/// refutable pattern over a variable (which reading twice costs nothing), with its parts.
fn chain_arm(e: &Expr) -> Option<(&Expr, &Pat, &Expr, &Expr)> {
    let ExprKind::Match {
        scrutinee,
        pat,
        then,
        otherwise,
    } = &e.kind
    else {
        return None;
    };
    let test = matches!(pat.kind, PatKind::Lit(Lit::Bool(_)));
    let var = matches!(scrutinee.kind, ExprKind::Var { .. });
    (test || (var && !pat.irrefutable())).then_some((&**scrutinee, pat, &**then, &**otherwise))
}

/// The number of arms of the chain of tests that starts at `e` ([`chain_arm`]), counted up to
/// [`FLAT_CHAIN`].
fn chain_len(e: &Expr) -> usize {
    let mut n = 0;
    let mut e = e;
    while n < FLAT_CHAIN
        && let Some((_, _, _, otherwise)) = chain_arm(e)
    {
        n += 1;
        e = otherwise;
    }
    n
}

/// Whether `e` uses the variable `x` only as a sequence it reads: `get(x, i)`, its length, or
/// the source of a fused keyword, and never inside a function (which would capture it as a
/// sequence). See `stack_array`.
fn reads_only(e: &Expr, x: VarId) -> bool {
    use crate::ast::Source;
    use crate::intrinsics::Intrinsic;
    let is_x = |e: &Expr| matches!(&e.kind, ExprKind::Var { ident, .. } if ident.id == x);
    match &e.kind {
        ExprKind::Var { ident, .. } => ident.id != x,
        ExprKind::App { func, args }
            if matches!(
                func.kind,
                ExprKind::Intrinsic(
                    Intrinsic::Get
                        | Intrinsic::Head
                        | Intrinsic::Length
                        | Intrinsic::Len
                        | Intrinsic::Null
                )
            ) && args.first().is_some_and(is_x) =>
        {
            args[1..].iter().all(|a| reads_only(a, x))
        }
        ExprKind::Soac(s) => {
            s.form_args().into_iter().all(|a| reads_only(a, x))
                && s.inputs.iter().all(|i| {
                    i.stages.iter().all(|st| reads_only(st.func(), x))
                        && match &i.source {
                            Source::Seq(src) => is_x(src) || reads_only(src, x),
                            Source::Flat(src) => reads_only(src, x),
                            Source::Range { n, g } => reads_only(n, x) && reads_only(g, x),
                        }
                })
        }
        // A function may not name it at all.
        ExprKind::Lam { .. } => !mentions(e, x),
        ExprKind::RecLet { fns, body, .. } => {
            !fns.iter().any(|f| mentions(&f.body, x)) && reads_only(body, x)
        }
        _ => {
            let mut ok = true;
            e.children(&mut |c| ok = ok && reads_only(c, x));
            ok
        }
    }
}

/// Whether `x` occurs in `e`.
fn mentions(e: &Expr, x: VarId) -> bool {
    let mut found = false;
    e.walk(&mut |c| {
        found |= matches!(&c.kind, ExprKind::Var { ident, .. } if ident.id == x);
    });
    found
}
