//! Lowering: imperative Rust inside `accelerate!` (the parser's [`Imp`] nodes) to the paper's
//! PMExpr, before resolution, so that every later pass — the well-formedness rules, the
//! classification, every generator — sees ordinary PMExpr, and the site dump shows the result.
//!
//! The meaning is Rust's, by these rules:
//!
//! - **Mutable locals are versions** (`mutable`): `let mut x = e` binds a first version of `x`,
//!   each assignment binds the next one (`x += 1` is `let x'2 = x'1 + 1`), and every read of `x`
//!   names the version current there. A compound assignment evaluates its right-hand side first,
//!   as Rust does; assigning a field of a tuple or record local makes the record again with that
//!   field changed (`__set_field`, expanded by `mono` once the record's fields are known). An
//!   `if` or `match` whose arms assign returns the new versions with its value (a join), so
//!   that what follows it is written once.
//! - **Loops are tail-recursive local functions** (`loops`): the loop's state — the mutable
//!   locals its body assigns, and the counter of a `for` — are the function's parameters; the end
//!   of the body and `continue` call it again with the current versions, the test (`i < n`,
//!   `while`'s condition) or `break` return the state (with `break`'s value), and the loop is a
//!   call whose result binds the state's next versions. [`crate::tailrec`] makes such a function
//!   a Rust `loop` on the CPU targets, Futhark's `loop … while` and a C loop in CUDA code; it
//!   stops where Rust's loop would.
//! - **Jumps are continuations** (`jumps`): the rest of a block is lowered at each place control
//!   reaches it, so that `if c { continue; } rest` is `if c { next } else { rest }` and `return v`
//!   inside a loop of a `fn` makes the loop's exits run the rest of the function. A jump out
//!   of an inner loop to one around it (`continue 'outer`, `break 'outer`, `return` from
//!   nested loops) ends the inner loop with a tag that the code after its call takes on.
//!
//! The lowering is in continuation-passing style: `Lower::lower` lowers an expression and hands
//! its value to a continuation, which builds what follows. User binders inside imperative code
//! get unique names (`y'3`), so that code a continuation places inside their scope cannot be
//! captured by them. Expressions without imperative syntax are copied with their reads renamed.
//!
//! What cannot be given Rust's meaning is a compile error at the user's tokens with a `help:`
//! line: assigning a variable captured from outside `accelerate!`, an immutable one, or one
//! declared outside the closure or `fn` that assigns it (the function of a parallel keyword
//! included); a closure holding a mutable local that outlives the local's block; a jump with no
//! loop to go to, or one this lowering does not support (`break 'outer value` out of an inner loop,
//! `return` from inside nested loops of a closure, or of a `fn` whose result type has no
//! literal to stand in for it).

mod info;
mod jumps;
mod loops;
mod mutable;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::rc::Rc;

use crate::ast::{Expr, ExprKind, FnDef, Ident, Imp, Lit, Param, Pat, PatKind};
use crate::error::{Error, Errors, SpanRange};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::types::{Annotation, Label, Type, TypeAnn};

use crate::node::{app, if_then_else, let_in, lit, mk, var};
use info::Facts;

/// Lowers the imperative syntax of an expression (the body of an `accelerate!`).
pub fn lower_expr(e: Expr) -> Result<Expr, Errors> {
    if !has_imp(&e) {
        return Ok(e);
    }
    let facts = Facts::of(&e);
    let mut l = Lower::new(&facts, FrameKind::Site);
    let done = l.done();
    let out = l.lower(&e, &done);
    l.finish(out)
}

/// Lowers the imperative syntax of a `fn` item's body (a `#[pmexpr]` function).
pub fn lower_fn(f: FnDef) -> Result<FnDef, Errors> {
    if !has_imp(&f.body) {
        return Ok(f);
    }
    let facts = Facts::of(&f.body);
    let mut l = Lower::new(&facts, FrameKind::Fn);
    l.frames[0].ret = f.ret.as_ref().map(|a| a.ann.clone());
    for p in &f.params {
        l.bind_as(&p.ident.name, &p.ident.name);
    }
    let done = l.done();
    let body = l.lower(&f.body, &done);
    let body = l.finish(body)?;
    Ok(FnDef { body, ..f.clone() })
}

/// Whether `e` holds imperative syntax.
fn has_imp(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x.kind, ExprKind::Imp(_)));
    found
}

/// What is done with the value of an expression once it is lowered: builds the rest of the
/// program from it (the value as an expression, the mutable locals' versions as they are at that
/// point). Called once per place control reaches the end of the expression, through
/// [`Lower::resume`], in the scope where it was made: the names bound since are hidden (they
/// are unique in the output, so the code it builds inside their scope cannot be captured by
/// them), the versions made since are kept.
struct Kont<'a> {
    /// The environment's undo position when it was made.
    mark: usize,
    /// How many loops were open when it was made.
    loops: usize,
    /// Whether it drops the value (the rest of a block after a statement): then a join need
    /// not return it.
    discards: bool,
    f: Build<'a>,
}

type K<'a> = Rc<Kont<'a>>;

/// What a continuation runs.
type Build<'a> = Box<dyn Fn(&mut Lower<'a>, Expr) -> Expr + 'a>;

/// A binding in scope, by the name the user wrote.
#[derive(Debug, Clone)]
enum Bind {
    /// An immutable binding, under the name it has in the output.
    Imm(String),
    /// A mutable local: its index in [`Lower::muts`].
    Mut(usize),
}

/// A mutable local.
#[derive(Debug, Clone)]
struct MutVar {
    /// The name the user wrote.
    name: String,
    /// The name of its current version.
    version: String,
    /// The frame that declares it.
    frame: usize,
    /// The type written at its declaration, given to every version.
    ann: Option<Annotation>,
}

/// What undoes a change of the environment.
enum Undo {
    Push(String),
    Version(usize, String),
}

/// A closure, a `fn` item or the site itself: what may assign which variables, and what `return`
/// leaves.
#[derive(Debug, Clone)]
struct Frame {
    kind: FrameKind,
    /// The parallel keyword whose function this closure is, for messages.
    keyword: Option<String>,
    /// A `fn`'s declared result type: what a `return` from inside nested loops carries out of
    /// the inner ones (see `loops::placeholder`).
    ret: Option<TypeAnn>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    /// The body of the `accelerate!` itself: `return` has nowhere to go.
    Site,
    /// A closure.
    Closure,
    /// A `fn` item: it sees no mutable local of the blocks around it, as in Rust.
    Fn,
}

/// The lowering's state.
struct Lower<'a> {
    facts: &'a Facts,
    errors: Errors,
    fresh: u32,
    scope: HashMap<String, Vec<Bind>>,
    undo: Vec<Undo>,
    /// How many bindings in scope rename what they bind (every mutable one, every immutable one
    /// made unique): none, and an expression without imperative syntax is copied as it is.
    renaming: usize,
    muts: Vec<MutVar>,
    frames: Vec<Frame>,
    loops: Vec<loops::LoopCx<'a>>,
}

impl<'a> Lower<'a> {
    fn new(facts: &'a Facts, kind: FrameKind) -> Self {
        Lower {
            facts,
            errors: Vec::new(),
            fresh: 0,
            scope: HashMap::new(),
            undo: Vec::new(),
            renaming: 0,
            muts: Vec::new(),
            frames: vec![Frame {
                kind,
                keyword: None,
                ret: None,
            }],
            loops: Vec::new(),
        }
    }

    fn finish(self, out: Expr) -> Result<Expr, Errors> {
        if self.errors.is_empty() {
            Ok(out)
        } else {
            Err(self.errors)
        }
    }

    fn error(&mut self, span: SpanRange, message: impl Into<String>, help: impl Into<String>) {
        self.errors.push(Error::new(span, message).help(help));
    }

    /// A fresh name: `stem'n`, which no user can write.
    fn fresh(&mut self, stem: &str) -> String {
        self.fresh += 1;
        format!("{stem}'{}", self.fresh)
    }

    fn frame(&self) -> usize {
        self.frames.len() - 1
    }

    /// A continuation made here (see [`Kont`]).
    fn kont(&self, f: impl Fn(&mut Lower<'a>, Expr) -> Expr + 'a) -> K<'a> {
        Rc::new(Kont {
            mark: self.mark(),
            loops: self.loops.len(),
            discards: false,
            f: Box::new(f),
        })
    }

    /// A continuation that drops the value it is given (see [`Kont::discards`]).
    fn kont_discarding(&self, f: impl Fn(&mut Lower<'a>, Expr) -> Expr + 'a) -> K<'a> {
        Rc::new(Kont {
            mark: self.mark(),
            loops: self.loops.len(),
            discards: true,
            f: Box::new(f),
        })
    }

    /// The continuation that is the value itself.
    fn done(&self) -> K<'a> {
        self.kont(|_, v| v)
    }

    /// Runs `k` on `v` in the scope where `k` was made: the bindings made since are hidden while
    /// it runs, the loops opened since closed; the versions of mutable locals stay as they are.
    fn resume(&mut self, k: &K<'a>, v: Expr) -> Expr {
        let mut hidden = Vec::new();
        for i in (k.mark.min(self.undo.len())..self.undo.len()).rev() {
            if let Undo::Push(name) = &self.undo[i] {
                let name = name.clone();
                if let Some(b) = self.scope.get_mut(&name).and_then(|s| s.pop()) {
                    if renames(&name, &b) {
                        self.renaming -= 1;
                    }
                    hidden.push((name, b));
                }
            }
        }
        let inner = self.loops.split_off(k.loops.min(self.loops.len()));
        let out = (k.f)(self, v);
        self.loops.extend(inner);
        for (name, b) in hidden.into_iter().rev() {
            if renames(&name, &b) {
                self.renaming += 1;
            }
            self.scope.entry(name).or_default().push(b);
        }
        out
    }

    // ----- the environment -----

    fn mark(&self) -> usize {
        self.undo.len()
    }

    fn rollback(&mut self, mark: usize) {
        while self.undo.len() > mark {
            match self.undo.pop() {
                Some(Undo::Push(name)) => {
                    let stack = self.scope.get_mut(&name).expect("pushed");
                    if let Some(b) = stack.pop()
                        && renames(&name, &b)
                    {
                        self.renaming -= 1;
                    }
                }
                Some(Undo::Version(m, old)) => self.muts[m].version = old,
                None => {}
            }
        }
    }

    fn push(&mut self, name: &str, b: Bind) {
        if renames(name, &b) {
            self.renaming += 1;
        }
        self.scope.entry(name.to_string()).or_default().push(b);
        self.undo.push(Undo::Push(name.to_string()));
    }

    /// Binds the user's `name` as the output's `out`.
    fn bind_as(&mut self, name: &str, out: &str) {
        if name != "_" {
            self.push(name, Bind::Imm(out.to_string()));
        }
    }

    /// Binds the user's `name` under a unique name, returned.
    fn bind_unique(&mut self, name: &str) -> String {
        if name == "_" {
            return name.to_string();
        }
        let out = self.fresh(name);
        self.bind_as(name, &out);
        out
    }

    /// Declares a mutable local; the name of its first version.
    fn declare_mut(&mut self, name: &str, ann: Option<Annotation>) -> String {
        let version = self.fresh(name);
        self.muts.push(MutVar {
            name: name.to_string(),
            version: version.clone(),
            frame: self.frame(),
            ann,
        });
        self.push(name, Bind::Mut(self.muts.len() - 1));
        version
    }

    /// Makes `version` the current version of the mutable local `m`.
    fn set_version(&mut self, m: usize, version: String) {
        let old = std::mem::replace(&mut self.muts[m].version, version);
        self.undo.push(Undo::Version(m, old));
    }

    fn lookup(&self, name: &str) -> Option<&Bind> {
        self.scope.get(name).and_then(|s| s.last())
    }

    /// The current version of the mutable local `m`, as an expression.
    fn current(&self, m: usize, span: SpanRange) -> Expr {
        var(&self.muts[m].version, span)
    }

    // ----- lowering -----

    /// Lowers `e` and hands its value to `k`; the environment is as it was afterwards.
    fn lower(&mut self, e: &'a Expr, k: &K<'a>) -> Expr {
        let mark = self.mark();
        let out = self.lower_here(e, k);
        self.rollback(mark);
        out
    }

    fn lower_here(&mut self, e: &'a Expr, k: &K<'a>) -> Expr {
        if !self.facts.get(e).imp {
            let r = self.rename(e);
            return self.resume(k, r);
        }
        match &e.kind {
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                let k = k.clone();
                let statement = binder.ident.name == "_" && binder.ann.is_none();
                let f = move |s: &mut Lower<'a>, v: Expr| {
                    let name = s.bind_unique(&binder.ident.name);
                    let b = s.lower(body, &k);
                    // A statement whose value is nothing (`x += 1;` left `()`) binds nothing.
                    if statement && matches!(v.kind, ExprKind::Lit(_)) {
                        return b;
                    }
                    let_in(
                        param(&name, binder.ident.span, binder.ann.clone()),
                        v,
                        b,
                        e.span,
                    )
                };
                let kv = if statement {
                    self.kont_discarding(f)
                } else {
                    self.kont(f)
                };
                self.lower(value, &kv)
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => {
                let k = k.clone();
                let ks = self.kont(move |s, sv| s.branches(e, sv, pat, then, otherwise, &k));
                self.lower(scrutinee, &ks)
            }
            ExprKind::Lam { params, body } => {
                let keyword = None;
                let lam = self.closure(e, params, body, keyword);
                self.resume(k, lam)
            }
            ExprKind::RecLet { fns, body, .. } => {
                let mut seen = std::collections::HashSet::new();
                let mut names = Vec::new();
                for f in fns {
                    if !seen.insert(f.ident.name.clone()) {
                        self.errors.push(Error::new(
                            f.ident.span,
                            format!(
                                "the function `{}` is defined twice in this block",
                                f.ident.name
                            ),
                        ));
                    }
                    names.push(self.bind_unique(&f.ident.name));
                }
                let fns: Vec<FnDef> = fns
                    .iter()
                    .zip(names)
                    .map(|(f, name)| {
                        let mut d = self.fn_item(f);
                        d.ident.name = name;
                        d
                    })
                    .collect();
                let body = self.lower(body, k);
                mk(
                    ExprKind::RecLet {
                        fns,
                        body: Box::new(body),
                        scheme: Vec::new(),
                    },
                    e.span,
                )
            }
            ExprKind::App { func, args } if keyword_name(func).is_some() => {
                // The function of a parallel keyword: its closures are told which keyword they
                // serve, for the message when they assign what they cannot.
                let kw = keyword_name(func).map(str::to_string);
                let mut kids: Vec<&'a Expr> = vec![&**func];
                kids.extend(args.iter());
                self.sequence(e, Rc::new(kids), 0, Vec::new(), kw, k)
            }
            ExprKind::Imp(i) => self.imp(e, i, k),
            _ => {
                let mut kids: Vec<&'a Expr> = Vec::new();
                e.children(&mut |c| kids.push(c));
                self.sequence(e, Rc::new(kids), 0, Vec::new(), None, k)
            }
        }
    }

    fn imp(&mut self, e: &'a Expr, i: &'a Imp, k: &K<'a>) -> Expr {
        match i {
            Imp::LetMut {
                pat,
                muts,
                ann,
                value,
                body,
            } => self.let_mut(e, pat, muts, ann, value, body, k),
            Imp::Assign { place, op, value } => self.assign(e, place, *op, value, k),
            Imp::For { .. } | Imp::While { .. } | Imp::Loop { .. } => self.lower_loop(e, i, k),
            Imp::Break { label, value } => self.break_(e, label.as_ref(), value.as_ref(), k),
            Imp::Continue { label } => self.continue_(e, label.as_ref()),
            Imp::Return { value } => self.return_(e, value.as_ref()),
        }
    }

    /// The children `kids[i..]` of `e`, lowered in order, then `e` rebuilt from them and handed to
    /// `k`. A child's value that a later child's assignments or jumps could overtake is bound
    /// first, so that effects keep their order. `keyword` names the parallel keyword `e` applies.
    fn sequence(
        &mut self,
        e: &'a Expr,
        kids: Rc<Vec<&'a Expr>>,
        i: usize,
        mut done: Vec<Expr>,
        keyword: Option<String>,
        k: &K<'a>,
    ) -> Expr {
        if kids[i..].iter().all(|c| !self.facts.get(c).imp) {
            for c in &kids[i..] {
                let r = match (&c.kind, &keyword) {
                    (ExprKind::Lam { params, body }, Some(_)) => {
                        self.closure(c, params, body, keyword.clone())
                    }
                    _ => self.rename(c),
                };
                done.push(r);
            }
            let r = rebuild(e, done);
            return self.resume(k, r);
        }
        let later = kids[i + 1..].iter().any(|c| {
            let f = self.facts.get(c);
            !f.assigned.is_empty() || !f.jumps.is_empty()
        });
        if let (ExprKind::Lam { params, body }, Some(_)) = (&kids[i].kind, &keyword) {
            let lam = self.closure(kids[i], params, body, keyword.clone());
            done.push(lam);
            return self.sequence(e, kids, i + 1, done, keyword, k);
        }
        let k = k.clone();
        let kids2 = kids.clone();
        let kw = keyword.clone();
        let next = self.kont(move |s, v| {
            let mut done = done.clone();
            if later && !is_atom(&v) {
                let t = s.fresh("t");
                let sp = v.span;
                done.push(var(&t, sp));
                let rest = s.sequence(e, kids2.clone(), i + 1, done, kw.clone(), &k);
                return let_in(param(&t, sp, None), v, rest, sp);
            }
            done.push(v);
            s.sequence(e, kids2.clone(), i + 1, done, kw.clone(), &k)
        });
        self.lower(kids[i], &next)
    }

    /// A closure: its own frame; its body's value is its result (`return` included).
    fn closure(
        &mut self,
        e: &'a Expr,
        params: &'a [Param],
        body: &'a Expr,
        keyword: Option<String>,
    ) -> Expr {
        let mark = self.mark();
        self.frames.push(Frame {
            kind: FrameKind::Closure,
            keyword,
            ret: None,
        });
        let loops = std::mem::take(&mut self.loops);
        for p in params {
            self.bind_as(&p.ident.name, &p.ident.name);
        }
        let done = self.done();
        let b = self.lower(body, &done);
        self.loops = loops;
        self.frames.pop();
        self.rollback(mark);
        mk(
            ExprKind::Lam {
                params: params.to_vec(),
                body: Box::new(b),
            },
            e.span,
        )
    }

    /// A `fn` item of a block: its own frame, which sees no mutable local around it.
    fn fn_item(&mut self, f: &'a FnDef) -> FnDef {
        let mark = self.mark();
        self.frames.push(Frame {
            kind: FrameKind::Fn,
            keyword: None,
            ret: f.ret.as_ref().map(|a| a.ann.clone()),
        });
        let loops = std::mem::take(&mut self.loops);
        for p in &f.params {
            self.bind_as(&p.ident.name, &p.ident.name);
        }
        let done = self.done();
        let body = self.lower(&f.body, &done);
        self.loops = loops;
        self.frames.pop();
        self.rollback(mark);
        FnDef { body, ..f.clone() }
    }

    // ----- expressions without imperative syntax -----

    /// A copy of `e`, which holds no imperative syntax, with its reads of renamed variables
    /// renamed (a mutable local's read names its current version).
    fn rename(&mut self, e: &Expr) -> Expr {
        if self.renaming == 0 {
            return e.clone();
        }
        let mark = self.mark();
        let out = self.rename_here(e);
        self.rollback(mark);
        out
    }

    fn rename_here(&mut self, e: &Expr) -> Expr {
        let mut out = e.clone();
        match &mut out.kind {
            ExprKind::Var { ident, .. } => {
                if let Some(name) = self.read(ident) {
                    ident.name = name;
                }
                return out;
            }
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                **value = self.rename(value);
                self.bind_as(&binder.ident.name, &binder.ident.name);
                **body = self.rename(body);
            }
            ExprKind::Lam { params, body } => {
                self.frames.push(Frame {
                    kind: FrameKind::Closure,
                    keyword: None,
                    ret: None,
                });
                for p in params.iter() {
                    self.bind_as(&p.ident.name, &p.ident.name);
                }
                **body = self.rename(body);
                self.frames.pop();
            }
            ExprKind::RecLet { fns, body, .. } => {
                for f in fns.iter() {
                    self.bind_as(&f.ident.name, &f.ident.name);
                }
                for f in fns.iter_mut() {
                    let mark = self.mark();
                    self.frames.push(Frame {
                        kind: FrameKind::Fn,
                        keyword: None,
                        ret: None,
                    });
                    for p in &f.params {
                        self.bind_as(&p.ident.name, &p.ident.name);
                    }
                    f.body = self.rename(&f.body);
                    self.frames.pop();
                    self.rollback(mark);
                }
                **body = self.rename(body);
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => {
                **scrutinee = self.rename(scrutinee);
                **otherwise = self.rename(otherwise);
                for b in pat.binders() {
                    self.bind_as(&b.name, &b.name);
                }
                **then = self.rename(then);
            }
            _ => out.children_mut(&mut |c| *c = self.rename(c)),
        }
        out
    }

    /// The output's name for a read of the user's `ident`, when it differs.
    fn read(&mut self, ident: &Ident) -> Option<String> {
        match self.lookup(&ident.name)?.clone() {
            Bind::Imm(out) => (out != ident.name).then_some(out),
            Bind::Mut(m) => {
                let v = &self.muts[m];
                let through_fn = self.frames[v.frame + 1..]
                    .iter()
                    .any(|f| f.kind == FrameKind::Fn);
                if through_fn {
                    let name = v.name.clone();
                    self.error(
                        ident.span,
                        format!("a `fn` item cannot use the mutable local `{name}` of the block around it"),
                        format!("pass `{name}` to the function as an argument, or write the function as a closure: `let f = |…| …;`"),
                    );
                }
                Some(self.muts[m].version.clone())
            }
        }
    }
}

/// Whether a binding of `name` renames it in the output.
fn renames(name: &str, b: &Bind) -> bool {
    match b {
        Bind::Imm(out) => out != name,
        Bind::Mut(_) => true,
    }
}

/// The parallel keyword that `func` names, if it does (`map(|x| …, s)`): by name, since the
/// lowering runs before resolution.
fn keyword_name(func: &Expr) -> Option<&str> {
    match &func.kind {
        ExprKind::Var { ident, .. } => Keyword::from_name(&ident.name).map(|_| ident.name.as_str()),
        _ => None,
    }
}

/// `e` with its children replaced by `kids` (lowered, in the order of [`Expr::children`]).
fn rebuild(e: &Expr, kids: Vec<Expr>) -> Expr {
    let mut out = e.clone();
    let mut it = kids.into_iter();
    out.children_mut(&mut |c| {
        if let Some(k) = it.next() {
            *c = k;
        }
    });
    out
}

/// Whether `e` is evaluated without effects and in no time: a name, a literal or an intrinsic.
fn is_atom(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Var { .. } | ExprKind::Lit(_) | ExprKind::Intrinsic(_)
    )
}

// ----- the nodes the lowering builds (beside those of `crate::node`) -----

fn unit(span: SpanRange) -> Expr {
    lit(Lit::Unit, span)
}

fn intrinsic(i: Intrinsic, span: SpanRange) -> Expr {
    mk(ExprKind::Intrinsic(i), span)
}

/// The operator `op` (its generic intrinsic, resolved by type after inference) applied.
fn op(op: crate::intrinsics::BinOp, l: Expr, r: Expr, op_span: SpanRange, span: SpanRange) -> Expr {
    let f = intrinsic(crate::intrinsics::operator(op).generic, op_span);
    app(f, vec![l, r], span)
}

fn param(name: &str, span: SpanRange, ann: Option<Annotation>) -> Param {
    Param {
        ident: Ident::new(name, span),
        ann,
        ty: Type::unit(),
    }
}

/// `match value { pat => body }` for an irrefutable `pat`.
fn destructure(pat: Pat, value: Expr, body: Expr, span: SpanRange) -> Expr {
    mk(
        ExprKind::Match {
            scrutinee: Box::new(value),
            pat,
            then: Box::new(body),
            otherwise: Box::new(mk(ExprKind::Never(crate::ast::NeverKind::NoArm), span)),
        },
        span,
    )
}

/// `items` as one value: `()` for none, the item for one, else a tuple.
fn pack(mut items: Vec<Expr>, span: SpanRange) -> Expr {
    match items.len() {
        0 => unit(span),
        1 => items.pop().expect("one"),
        _ => mk(
            ExprKind::Record(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| (Label::Index(i as u32), x))
                    .collect(),
            ),
            span,
        ),
    }
}

/// `let <names packed> = value; body`: the pattern that [`pack`] of values of these names builds
/// (`_` names bind nothing).
fn unpack(names: &[String], value: Expr, body: Expr, span: SpanRange) -> Expr {
    match names {
        [] => let_in(param("_", span, None), value, body, span),
        [one] => let_in(param(one, span, None), value, body, span),
        _ => {
            let fields = names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let kind = if n == "_" {
                        PatKind::Wild
                    } else {
                        PatKind::Bind(Ident::new(n, span))
                    };
                    (
                        Label::Index(i as u32),
                        Pat {
                            kind,
                            span,
                            ty: Type::unit(),
                        },
                    )
                })
                .collect();
            let pat = Pat {
                kind: PatKind::Record(fields),
                span,
                ty: Type::unit(),
            };
            destructure(pat, value, body, span)
        }
    }
}
