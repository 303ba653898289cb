//! The PMExpr abstract syntax tree (paper appendix, "Source language", plus the parallel
//! keywords), with the span of the user's tokens on every node and a type slot that inference
//! fills in.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::error::SpanRange;
use crate::intrinsics::{BinOp, Intrinsic, Keyword};
use crate::types::{Annotation, Label, TyVar, Type};

/// A unique identifier, assigned by resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

impl VarId {
    /// The identifier of a name not yet resolved.
    pub const UNRESOLVED: VarId = VarId(u32::MAX);
}

/// A map keyed by identifier, for the scopes the passes keep (one entry per binding in scope).
pub type IdMap<V> = HashMap<VarId, V, BuildHasherDefault<IdHasher>>;
/// A set of identifiers, hashed like [`IdMap`].
pub type IdSet = HashSet<VarId, BuildHasherDefault<IdHasher>>;

/// Hashes an identifier as itself. Identifiers are numbered in order, so consecutive bindings
/// (a chain of `let`s) get adjacent slots; SipHash scattered them, and in a scope of tens of
/// thousands of bindings every lookup missed the cache, which made long chains superlinear.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write_u32(&mut self, n: u32) {
        // The table's slot comes from the low bits and its tag from the top 7: both from `n`.
        self.0 = u64::from(n) | (u64::from(n) << 57);
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `VarId`s (one `u32`) are hashed with this; anything else still hashes correctly.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A name in the source, with its unique identifier once resolved.
#[derive(Debug, Clone)]
pub struct Ident {
    /// The name as written.
    pub name: String,
    /// The unique identifier.
    pub id: VarId,
    /// Where it was written.
    pub span: SpanRange,
}

impl Ident {
    /// An unresolved name.
    pub fn new(name: impl Into<String>, span: SpanRange) -> Self {
        Ident {
            name: name.into(),
            id: VarId::UNRESOLVED,
            span,
        }
    }
}

/// A literal constant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lit {
    /// An integer: wide enough for every value of `i64` and of `u64`, so that a literal keeps
    /// its value until inference gives it a type.
    Int(i128),
    /// A float: the literal read as an `f64` and as an `f32`, each rounded once from its digits
    /// (as Rust reads it at either type), so that one in an `f32` context is not rounded twice.
    Float(f64, f32),
    /// A `bool`.
    Bool(bool),
    /// `()`.
    Unit,
}

/// Why a `never` is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeverKind {
    /// The user wrote `never!()`.
    User,
    /// The end of a `match` with no arm left.
    NoArm,
}

/// A parameter of a lambda or `fn`, or the binder of a `let`.
#[derive(Debug, Clone)]
pub struct Param {
    /// The bound name (`_` for a wildcard).
    pub ident: Ident,
    /// The type written by the user, if any.
    pub ann: Option<Annotation>,
    /// The type, once inferred.
    pub ty: Type,
}

/// One function of a recursive group (`fn` items in a block).
#[derive(Debug, Clone)]
pub struct FnDef {
    /// The function's name.
    pub ident: Ident,
    /// Its parameters.
    pub params: Vec<Param>,
    /// The return type written by the user, if any.
    pub ret: Option<Annotation>,
    /// Its body.
    pub body: Expr,
    /// The whole item.
    pub span: SpanRange,
    /// The function's type, once inferred.
    pub ty: Type,
    /// The `#[pmexpr]` item it comes from, when it is not written inside the site.
    pub item: Option<ItemRef>,
}

/// A `#[pmexpr]` function of the crate, included in a site that uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRef {
    /// The function's name.
    pub name: String,
    /// Where it is defined (`file:line:column`), for messages.
    pub location: String,
}

/// A pattern (paper: record, variable and constant patterns, plus `_`).
#[derive(Debug, Clone)]
pub struct Pat {
    /// The pattern.
    pub kind: PatKind,
    /// Where it was written.
    pub span: SpanRange,
    /// The type of the value it matches, once inferred.
    pub ty: Type,
}

/// The kinds of pattern.
#[derive(Debug, Clone)]
pub enum PatKind {
    /// `_`
    Wild,
    /// A variable.
    Bind(Ident),
    /// A constant.
    Lit(Lit),
    /// A record (tuple) pattern.
    Record(Vec<(Label, Pat)>),
}

impl Pat {
    /// Whether the pattern matches every value of its type.
    pub fn irrefutable(&self) -> bool {
        match &self.kind {
            PatKind::Wild | PatKind::Bind(_) => true,
            PatKind::Lit(Lit::Unit) => true,
            PatKind::Lit(_) => false,
            PatKind::Record(fs) => fs.iter().all(|(_, p)| p.irrefutable()),
        }
    }

    /// The variables the pattern binds (the paper's `B(p)`).
    pub fn binders(&self) -> Vec<&Ident> {
        let mut out = Vec::new();
        fn go<'a>(p: &'a Pat, out: &mut Vec<&'a Ident>) {
            match &p.kind {
                PatKind::Bind(i) => out.push(i),
                PatKind::Record(fs) => fs.iter().for_each(|(_, p)| go(p, out)),
                PatKind::Wild | PatKind::Lit(_) => {}
            }
        }
        go(self, &mut out);
        out
    }
}

/// The identity of an expression node in the program the code generators read: unique in the
/// monomorphic program ([`crate::mono::Mono`], which numbers its nodes, copies of polymorphic
/// functions included) and kept by lifting and extraction, which number the nodes they make past
/// those. How the generators of one site agree on a node (which `par_loop` a kernel replaces,
/// which tensor access a loop's bounds check covers) without pointer identity or walk order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// Not numbered yet (before monomorphization, or made after it and not numbered since).
    pub const UNSET: NodeId = NodeId(u32::MAX);
}

/// An expression.
#[derive(Debug, Clone)]
pub struct Expr {
    /// The node's identity, once numbered ([`NodeId`]).
    pub id: NodeId,
    /// The expression.
    pub kind: ExprKind,
    /// The user's tokens it came from.
    pub span: SpanRange,
    /// Its type, once inferred.
    pub ty: Type,
}

/// The kinds of expression.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// A variable; `inst` is the instantiation of its type scheme at this use (inference).
    Var {
        /// The variable.
        ident: Ident,
        /// The types that instantiate the quantified variables of its scheme, in order.
        inst: Vec<Type>,
    },
    /// A literal.
    Lit(Lit),
    /// An intrinsic function (`addi`, `length`, `tensor_get`, …).
    Intrinsic(Intrinsic),
    /// `|x, y| e`: curried, so `|x, y| e` is `lam x. lam y. e`.
    Lam {
        /// The parameters.
        params: Vec<Param>,
        /// The body.
        body: Box<Expr>,
    },
    /// `f(a, b)`: curried application.
    App {
        /// The function.
        func: Box<Expr>,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// `let x = e1 in e2`; `scheme` lists the variables generalized in the type of `x`.
    Let {
        /// The bound variable.
        binder: Param,
        /// The bound value.
        value: Box<Expr>,
        /// The scope of the binding.
        body: Box<Expr>,
        /// Quantified type variables of the binder's type.
        scheme: Vec<TyVar>,
    },
    /// `recursive let f1 = … and fn = … in e` (the `fn` items of a block).
    RecLet {
        /// The functions, mutually recursive.
        fns: Vec<FnDef>,
        /// The scope of the functions.
        body: Box<Expr>,
        /// Quantified type variables shared by the group.
        scheme: Vec<TyVar>,
    },
    /// `match e with p then a else b`.
    Match {
        /// The value matched.
        scrutinee: Box<Expr>,
        /// The pattern.
        pat: Pat,
        /// The result when the pattern matches.
        then: Box<Expr>,
        /// The result otherwise.
        otherwise: Box<Expr>,
    },
    /// `never`: a branch that must not be reached.
    Never(NeverKind),
    /// A record (a tuple; `()` is the empty record).
    Record(Vec<(Label, Expr)>),
    /// `e.l`.
    Proj {
        /// The record.
        expr: Box<Expr>,
        /// The field.
        label: Label,
    },
    /// `[e1, …, en]`.
    Seq(Vec<Expr>),
    /// A parallel keyword, always applied to all its arguments.
    Keyword {
        /// The keyword.
        kw: Keyword,
        /// Its arguments.
        args: Vec<Expr>,
    },
    /// A fused composition of parallel keywords: made by the optimizer ([`crate::opt`]) for the
    /// CPU generator only; no pass before it and no GPU generator sees one.
    Soac(Box<Soac>),
    /// Imperative Rust as the parser reads it: made by the parser and rewritten by
    /// [`crate::lower`] into the forms above, so no pass after the parser sees one.
    Imp(Box<Imp>),
}

/// Imperative Rust inside `accelerate!` (mutable locals, assignment, loops and the jumps out of
/// them), as written: [`crate::lower`] gives each its PMExpr meaning (shadowing, loops from tail
/// recursion) before resolution.
// Held boxed in `ExprKind::Imp`: the size of its largest variant costs nothing elsewhere.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Imp {
    /// `let mut x = value; body`, or a pattern with `mut` names (`let (mut a, b) = value;`).
    LetMut {
        /// The pattern, its names plain.
        pat: Pat,
        /// Which of its names were written `mut`.
        muts: Vec<String>,
        /// The type written, if any.
        ann: Option<Annotation>,
        /// The value.
        value: Expr,
        /// The rest of the block.
        body: Expr,
    },
    /// `place = value`, or `place op= value`.
    Assign {
        /// What is assigned.
        place: Place,
        /// The operator of a compound assignment, and where it is written.
        op: Option<(AssignOp, SpanRange)>,
        /// The value.
        value: Expr,
    },
    /// `for pat in iter { body }`.
    For {
        /// The loop's label (`'outer:`), if any.
        label: Option<Ident>,
        /// The pattern each element is bound to.
        pat: Pat,
        /// What the loop runs over.
        iter: Iter,
        /// The body.
        body: Expr,
    },
    /// `while cond { body }`.
    While {
        /// The loop's label, if any.
        label: Option<Ident>,
        /// The condition, tested before every iteration.
        cond: Expr,
        /// The body.
        body: Expr,
    },
    /// `loop { body }`.
    Loop {
        /// The loop's label, if any.
        label: Option<Ident>,
        /// The body.
        body: Expr,
    },
    /// `break`, `break 'label`, `break value`.
    Break {
        /// The loop it leaves (the innermost when `None`).
        label: Option<Ident>,
        /// The loop's value (`loop` only).
        value: Option<Expr>,
    },
    /// `continue`, `continue 'label`.
    Continue {
        /// The loop it continues (the innermost when `None`).
        label: Option<Ident>,
    },
    /// `return`, `return value`: the value of the enclosing `fn` or closure.
    Return {
        /// The value (`()` when `None`).
        value: Option<Expr>,
    },
}

/// The place an assignment writes: a mutable local, or a part of one — a field (`p.0`,
/// `b.pos.x`), an element (`a[i]`), and any path of them (`a[i][j]`, `a[i].pos.x`).
#[derive(Debug, Clone)]
pub struct Place {
    /// The variable.
    pub root: Ident,
    /// The steps from the variable to the place, outermost first.
    pub path: Vec<Step>,
    /// The whole place.
    pub span: SpanRange,
}

/// One step of a [`Place`].
#[derive(Debug, Clone)]
pub enum Step {
    /// A field of a tuple or a record, and where it is written.
    Field(Label, SpanRange),
    /// An element of a sequence: its index, evaluated after the assigned value (Rust's order).
    Index(Expr),
}

/// The operator of a compound assignment (`x op= e` is `x = x op e`, `e` evaluated first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    /// `+= -= *= /= %= &= |= ^= <<= >>=`: the binary operator.
    Num(BinOp),
}

/// What a `for` loop runs over.
// One per `for` loop, inside the boxed `Imp`.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Iter {
    /// `a..b`, `a..=b`, `(a..b).rev()`, `(a..b).step_by(k)`.
    Range {
        /// The first bound, evaluated first.
        start: Expr,
        /// The second bound.
        end: Expr,
        /// `..=`.
        inclusive: bool,
        /// `.rev()`: from the top down.
        rev: bool,
        /// `.step_by(k)`.
        step: Option<Expr>,
    },
    /// `s`, `&s`, `s.iter()`; with `.enumerate()` the elements are `(index, element)`.
    Seq {
        /// The sequence.
        seq: Expr,
        /// `.enumerate()`.
        enumerate: bool,
    },
}

impl Imp {
    /// Calls `f` on each subexpression, in evaluation order.
    pub fn parts<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        match self {
            Imp::LetMut { value, body, .. } => {
                f(value);
                f(body);
            }
            Imp::Assign { place, value, .. } => {
                f(value);
                for st in &place.path {
                    if let Step::Index(i) = st {
                        f(i);
                    }
                }
            }
            Imp::For { iter, body, .. } => {
                match iter {
                    Iter::Range {
                        start, end, step, ..
                    } => {
                        f(start);
                        f(end);
                        step.iter().for_each(&mut *f);
                    }
                    Iter::Seq { seq, .. } => f(seq),
                }
                f(body);
            }
            Imp::While { cond, body, .. } => {
                f(cond);
                f(body);
            }
            Imp::Loop { body, .. } => f(body),
            Imp::Break { value, .. } | Imp::Return { value } => value.iter().for_each(f),
            Imp::Continue { .. } => {}
        }
    }

    /// Calls `f` on each subexpression, mutably, in the order of [`Imp::parts`].
    pub fn parts_mut(&mut self, f: &mut impl FnMut(&mut Expr)) {
        match self {
            Imp::LetMut { value, body, .. } => {
                f(value);
                f(body);
            }
            Imp::Assign { place, value, .. } => {
                f(value);
                for st in &mut place.path {
                    if let Step::Index(i) = st {
                        f(i);
                    }
                }
            }
            Imp::For { iter, body, .. } => {
                match iter {
                    Iter::Range {
                        start, end, step, ..
                    } => {
                        f(start);
                        f(end);
                        step.iter_mut().for_each(&mut *f);
                    }
                    Iter::Seq { seq, .. } => f(seq),
                }
                f(body);
            }
            Imp::While { cond, body, .. } => {
                f(cond);
                f(body);
            }
            Imp::Loop { body, .. } => f(body),
            Imp::Break { value, .. } | Imp::Return { value } => value.iter_mut().for_each(f),
            Imp::Continue { .. } => {}
        }
    }
}

/// A fused composition (the optimizer's `fuse` pass; Futhark's *screma*): inputs read element
/// by element, the functions of the producers it absorbed applied to each element as it is read,
/// and what is done with the elements. No intermediate sequence is built.
///
/// Its parts are evaluated in the order the unfused program wrote them: the form's own arguments
/// ([`Form`]), then each input in order — its stages, outermost first, then its source.
#[derive(Debug, Clone)]
pub struct Soac {
    /// What is read, all of the same length (`map2`'s check).
    pub inputs: Vec<Input>,
    /// What is done with the elements.
    pub form: Form,
}

/// An input of a [`Soac`]: a source, and the stages each element it gives goes through.
#[derive(Debug, Clone)]
pub struct Input {
    /// Where the elements come from.
    pub source: Source,
    /// The absorbed `map`s and `filter`s, each from the previous element to the next:
    /// `stages[0]` applies first (it was the innermost producer).
    pub stages: Vec<Stage>,
    /// Whether reading the elements is a few operations each (a sequence, or functions with no
    /// loop, call, keyword or transcendental intrinsic, of a few dozen nodes at most), so that
    /// reading them twice costs less than storing them: the optimizer's decision, which the
    /// runtime's two-pass `scan` follows (reduce-then-scan when cheap, scan-then-propagate
    /// otherwise).
    pub cheap: bool,
}

/// What an [`Input`] does to each element on its way.
#[derive(Debug, Clone)]
pub enum Stage {
    /// `map(f, ·)`: the element becomes `f(x)`.
    Map(Expr),
    /// `filter(p, ·)`: the element is dropped unless `p(x)`.
    Filter(Expr),
}

impl Stage {
    /// The stage's function.
    pub fn func(&self) -> &Expr {
        match self {
            Stage::Map(f) | Stage::Filter(f) => f,
        }
    }

    /// The stage's function, mutably.
    pub fn func_mut(&mut self) -> &mut Expr {
        match self {
            Stage::Map(f) | Stage::Filter(f) => f,
        }
    }
}

impl Input {
    /// Whether some stage drops elements: the input gives fewer elements than its source, so it
    /// cannot be read by position.
    pub fn filtered(&self) -> bool {
        self.stages.iter().any(|s| matches!(s, Stage::Filter(_)))
    }
}

/// Where the elements of an [`Input`] come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The elements of a sequence.
    Seq(Expr),
    /// `create(n, g)`: `g(j)` for `j` in `0..n`, made as they are read (`n` is evaluated, and
    /// checked not to be negative, before `g`).
    Range {
        /// The count.
        n: Box<Expr>,
        /// The function of the position.
        g: Box<Expr>,
    },
    /// `flatten(rows)`: the elements of the rows, in order, read in place.
    Flat(Expr),
}

/// What a [`Soac`] does with the elements of its inputs (for `Map` and `Reduce` with several
/// inputs, `f` takes one element of each).
#[derive(Debug, Clone)]
pub enum Form {
    /// `map`/`map2`: the sequence of the elements (`f`, when there are several inputs, combines
    /// them; one input's elements are taken as they are).
    Map {
        /// The combining function of several inputs.
        f: Option<Expr>,
    },
    /// `reduce(op, ne, …)` of the elements (combined by `f` when there are several inputs).
    Reduce {
        /// The operator.
        op: Expr,
        /// Its neutral element.
        ne: Expr,
        /// The combining function of several inputs.
        f: Option<Expr>,
    },
    /// `foldl(f, acc, …)`: the elements folded in order.
    Foldl {
        /// The step function `|acc, x| …`.
        f: Expr,
        /// The initial accumulator.
        acc: Expr,
    },
    /// `map(post, scan(op, ne, …))`: the inclusive scan of the elements, each result through the
    /// maps `post` (`post[0]` first: it was the innermost map).
    Scan {
        /// The operator.
        op: Expr,
        /// Its neutral element.
        ne: Expr,
        /// The functions of the absorbed `map`s that consume the scan.
        post: Vec<Expr>,
    },
    /// `scatter(dest, is, vs)`: the first input gives the indices, the second the values.
    Scatter {
        /// The sequence written into (a copy of it is the result).
        dest: Expr,
    },
    /// `hist(op, ne, k, is, vs)`: the first input gives the indices, the second the values.
    Hist {
        /// The operator.
        op: Expr,
        /// Its neutral element.
        ne: Expr,
        /// The number of bins.
        k: Expr,
    },
}

impl Soac {
    /// The functions the runtime may run on several threads: the form's operator or combining
    /// function, and the stages of its inputs (a `foldl`'s step and a `scatter` run in order).
    pub fn parallel_functions(&self) -> impl Iterator<Item = &Expr> {
        let form: Vec<&Expr> = match &self.form {
            Form::Map { f } => f.iter().collect(),
            Form::Reduce { op, f, .. } => std::iter::once(op).chain(f).collect(),
            Form::Hist { op, .. } => vec![op],
            Form::Scan { op, post, .. } => std::iter::once(op).chain(post).collect(),
            Form::Foldl { .. } | Form::Scatter { .. } => Vec::new(),
        };
        let stages = (self.inputs.iter()).flat_map(|i| i.stages.iter().map(Stage::func));
        form.into_iter().chain(stages)
    }

    /// The form's own arguments, in evaluation order.
    pub fn form_args(&self) -> Vec<&Expr> {
        match &self.form {
            Form::Map { f } => f.iter().collect(),
            Form::Reduce { op, ne, f } => [op, ne].into_iter().chain(f).collect(),
            Form::Foldl { f, acc } => vec![f, acc],
            Form::Hist { op, ne, k } => vec![op, ne, k],
            // The consuming maps were written outside the scan: evaluated first, outermost first.
            Form::Scan { op, ne, post } => post.iter().rev().chain([op, ne]).collect(),
            Form::Scatter { dest } => vec![dest],
        }
    }

    /// Calls `f` on each subexpression, in evaluation order.
    pub fn parts<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        self.form_args().into_iter().for_each(&mut *f);
        for i in &self.inputs {
            i.stages.iter().rev().map(Stage::func).for_each(&mut *f);
            match &i.source {
                Source::Seq(s) | Source::Flat(s) => f(s),
                Source::Range { n, g } => {
                    f(n);
                    f(g);
                }
            }
        }
    }

    /// Calls `f` on each subexpression, mutably, in the order of [`Soac::parts`].
    pub fn parts_mut(&mut self, f: &mut impl FnMut(&mut Expr)) {
        match &mut self.form {
            Form::Map { f: c } => c.iter_mut().for_each(&mut *f),
            Form::Reduce { op, ne, f: c } => {
                f(op);
                f(ne);
                c.iter_mut().for_each(&mut *f);
            }
            Form::Foldl { f: step, acc } => {
                f(step);
                f(acc);
            }
            Form::Hist { op, ne, k } => {
                f(op);
                f(ne);
                f(k);
            }
            Form::Scan { op, ne, post } => {
                post.iter_mut().rev().for_each(&mut *f);
                f(op);
                f(ne);
            }
            Form::Scatter { dest } => f(dest),
        }
        for i in &mut self.inputs {
            i.stages
                .iter_mut()
                .rev()
                .map(Stage::func_mut)
                .for_each(&mut *f);
            match &mut i.source {
                Source::Seq(s) | Source::Flat(s) => f(s),
                Source::Range { n, g } => {
                    f(n);
                    f(g);
                }
            }
        }
    }
}

impl Expr {
    /// An expression whose type is not yet known.
    pub fn new(kind: ExprKind, span: SpanRange) -> Self {
        Expr {
            id: NodeId::UNSET,
            kind,
            span,
            ty: Type::Var(TyVar(u32::MAX)),
        }
    }

    /// An expression of a known type.
    pub fn typed(kind: ExprKind, span: SpanRange, ty: Type) -> Self {
        Expr {
            id: NodeId::UNSET,
            kind,
            span,
            ty,
        }
    }

    /// Numbers every node that has no [`NodeId`] yet, parents first, from `*next` on.
    pub fn number_nodes(&mut self, next: &mut u32) {
        if self.id == NodeId::UNSET {
            self.id = NodeId(*next);
            *next += 1;
        }
        self.children_mut(&mut |c| c.number_nodes(next));
    }

    /// The free variables of the expression (paper appendix, Figure "FV"), in identifier order.
    pub fn free_vars(&self) -> BTreeSet<VarId> {
        let mut out = BTreeSet::new();
        free_vars(self, &mut Bound::default(), &mut out);
        out
    }

    /// Calls `f` on this expression and every subexpression (the paper's `S(e)`), parents first.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        self.children(&mut |c| c.walk(f));
    }

    /// Calls `f` on each direct subexpression, in evaluation order (`fn` bodies before the scope
    /// of a recursive group).
    pub fn children<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Var { .. }
            | ExprKind::Lit(_)
            | ExprKind::Intrinsic(_)
            | ExprKind::Never(_) => {}
            ExprKind::Lam { body, .. } | ExprKind::Proj { expr: body, .. } => f(body),
            ExprKind::App { func, args } => {
                f(func);
                args.iter().for_each(f);
            }
            ExprKind::Let { value, body, .. } => {
                f(value);
                f(body);
            }
            ExprKind::RecLet { fns, body, .. } => {
                fns.iter().for_each(|d| f(&d.body));
                f(body);
            }
            ExprKind::Match {
                scrutinee,
                then,
                otherwise,
                ..
            } => {
                f(scrutinee);
                f(then);
                f(otherwise);
            }
            ExprKind::Record(fs) => fs.iter().for_each(|(_, e)| f(e)),
            ExprKind::Seq(es) | ExprKind::Keyword { args: es, .. } => es.iter().for_each(f),
            ExprKind::Soac(s) => s.parts(f),
            ExprKind::Imp(i) => i.parts(f),
        }
    }

    /// Calls `f` on each direct subexpression, mutably, in the order of [`Expr::children`].
    pub fn children_mut(&mut self, f: &mut impl FnMut(&mut Expr)) {
        match &mut self.kind {
            ExprKind::Var { .. }
            | ExprKind::Lit(_)
            | ExprKind::Intrinsic(_)
            | ExprKind::Never(_) => {}
            ExprKind::Lam { body, .. } | ExprKind::Proj { expr: body, .. } => f(body),
            ExprKind::App { func, args } => {
                f(func);
                args.iter_mut().for_each(f);
            }
            ExprKind::Let { value, body, .. } => {
                f(value);
                f(body);
            }
            ExprKind::RecLet { fns, body, .. } => {
                fns.iter_mut().for_each(|d| f(&mut d.body));
                f(body);
            }
            ExprKind::Match {
                scrutinee,
                then,
                otherwise,
                ..
            } => {
                f(scrutinee);
                f(then);
                f(otherwise);
            }
            ExprKind::Record(fs) => fs.iter_mut().for_each(|(_, e)| f(e)),
            ExprKind::Seq(es) | ExprKind::Keyword { args: es, .. } => es.iter_mut().for_each(f),
            ExprKind::Soac(s) => s.parts_mut(f),
            ExprKind::Imp(i) => i.parts_mut(f),
        }
    }
}

impl Expr {
    /// Renames every identifier, binders included, through `f` (identifiers are unique, so every
    /// occurrence of an identifier is the same variable).
    pub fn rename(&mut self, f: &mut impl FnMut(VarId) -> VarId) {
        match &mut self.kind {
            ExprKind::Var { ident, .. } => ident.id = f(ident.id),
            ExprKind::Lam { params, .. } => {
                params.iter_mut().for_each(|p| p.ident.id = f(p.ident.id))
            }
            ExprKind::Let { binder, .. } => binder.ident.id = f(binder.ident.id),
            ExprKind::RecLet { fns, .. } => {
                for d in fns {
                    d.ident.id = f(d.ident.id);
                    d.params.iter_mut().for_each(|p| p.ident.id = f(p.ident.id));
                }
            }
            ExprKind::Match { pat, .. } => pat.rename(f),
            _ => {}
        }
        self.children_mut(&mut |c| c.rename(f));
    }
}

impl Pat {
    /// Renames the variables the pattern binds through `f`.
    pub fn rename(&mut self, f: &mut impl FnMut(VarId) -> VarId) {
        match &mut self.kind {
            PatKind::Bind(i) => i.id = f(i.id),
            PatKind::Record(fs) => fs.iter_mut().for_each(|(_, p)| p.rename(f)),
            PatKind::Wild | PatKind::Lit(_) => {}
        }
    }
}

/// The variables bound around a subexpression: a stack (scopes end by truncation) with a count
/// per variable, so that a lookup does not scan the stack (a chain of n `let`s binds n).
#[derive(Default)]
struct Bound {
    stack: Vec<VarId>,
    count: IdMap<u32>,
}

impl Bound {
    fn len(&self) -> usize {
        self.stack.len()
    }

    fn push(&mut self, id: VarId) {
        self.stack.push(id);
        *self.count.entry(id).or_default() += 1;
    }

    fn extend(&mut self, ids: impl IntoIterator<Item = VarId>) {
        ids.into_iter().for_each(|id| self.push(id));
    }

    fn pop(&mut self) {
        let n = self.stack.len();
        self.truncate(n.saturating_sub(1));
    }

    fn truncate(&mut self, n: usize) {
        while self.stack.len() > n {
            let id = self.stack.pop().expect("longer than n");
            if let Some(c) = self.count.get_mut(&id) {
                *c -= 1;
                if *c == 0 {
                    self.count.remove(&id);
                }
            }
        }
    }

    fn contains(&self, id: &VarId) -> bool {
        self.count.contains_key(id)
    }
}

fn free_vars(e: &Expr, bound: &mut Bound, out: &mut BTreeSet<VarId>) {
    match &e.kind {
        ExprKind::Var { ident, .. } => {
            if !bound.contains(&ident.id) {
                out.insert(ident.id);
            }
        }
        ExprKind::Lit(_) | ExprKind::Intrinsic(_) | ExprKind::Never(_) => {}
        ExprKind::Lam { params, body } => {
            let n = bound.len();
            bound.extend(params.iter().map(|p| p.ident.id));
            free_vars(body, bound, out);
            bound.truncate(n);
        }
        ExprKind::App { func, args } => {
            free_vars(func, bound, out);
            args.iter().for_each(|a| free_vars(a, bound, out));
        }
        ExprKind::Let {
            binder,
            value,
            body,
            ..
        } => {
            free_vars(value, bound, out);
            bound.push(binder.ident.id);
            free_vars(body, bound, out);
            bound.pop();
        }
        ExprKind::RecLet { fns, body, .. } => {
            let n = bound.len();
            bound.extend(fns.iter().map(|d| d.ident.id));
            for d in fns {
                let m = bound.len();
                bound.extend(d.params.iter().map(|p| p.ident.id));
                free_vars(&d.body, bound, out);
                bound.truncate(m);
            }
            free_vars(body, bound, out);
            bound.truncate(n);
        }
        ExprKind::Match {
            scrutinee,
            pat,
            then,
            otherwise,
        } => {
            free_vars(scrutinee, bound, out);
            let n = bound.len();
            bound.extend(pat.binders().iter().map(|i| i.id));
            free_vars(then, bound, out);
            bound.truncate(n);
            free_vars(otherwise, bound, out);
        }
        ExprKind::Record(fs) => fs.iter().for_each(|(_, e)| free_vars(e, bound, out)),
        ExprKind::Proj { expr, .. } => free_vars(expr, bound, out),
        ExprKind::Seq(es) | ExprKind::Keyword { args: es, .. } => {
            es.iter().for_each(|e| free_vars(e, bound, out))
        }
        // A composition binds nothing of its own: its parts are functions and values.
        ExprKind::Soac(s) => s.parts(&mut |e| free_vars(e, bound, out)),
        // Lowered before resolution: never seen with identifiers.
        ExprKind::Imp(i) => i.parts(&mut |e| free_vars(e, bound, out)),
    }
}

#[cfg(test)]
mod tests {
    use crate::pipeline::parse_tokens;
    use crate::resolve::resolve;
    use quote::quote;

    /// The names of the free variables (paper, Figure "FV") of the body of the outermost binding
    /// of `tokens`, whose own captured variables are `f`, `g`, … .
    fn free(tokens: proc_macro2::TokenStream) -> Vec<String> {
        let r = resolve(parse_tokens(tokens).unwrap()).unwrap();
        let mut names: Vec<String> = r
            .expr
            .free_vars()
            .into_iter()
            .map(|id| r.names[id.0 as usize].clone())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn free_variables_follow_the_paper() {
        // Lambdas and lets bind; captured variables are free.
        assert_eq!(free(quote!(|x| addi(x, y))), ["y"]);
        assert_eq!(
            free(quote!({
                let x = y;
                addi(x, z)
            })),
            ["y", "z"]
        );
        // A `let` does not bind in its own value.
        assert_eq!(
            free(quote!({
                let x = addi(x, 1);
                x
            })),
            ["x"]
        );
        // Recursive lets bind in every body and in the scope.
        assert_eq!(
            free(quote!({
                fn f(n: i64) -> i64 {
                    g(n, k)
                }
                fn g(a: i64, b: i64) -> i64 {
                    f(a)
                }
                f(1)
            })),
            ["k"]
        );
        // Pattern variables bind in the `then` branch only.
        assert_eq!(
            free(quote!(match p {
                (a, 1) => addi(a, b),
                _ => a,
            })),
            ["a", "b", "p"]
        );
        // Keywords and intrinsics are not variables.
        assert_eq!(free(quote!(reduce(addi, 0, map(|x| x, s)))), ["s"]);
    }
}
