//! Loops: `for` over a range or a sequence, `while` and `loop`, each a tail-recursive local
//! function of its state.
//!
//! ```text
//! let mut s = 0;                        let s'1 = 0;
//! for i in a..b { s += f(i); }    =>    let end'2 = b;
//! s                                     fn for'3(i'4, s'5) {
//!                                           if i'4 < end'2 { let s'6 = s'5 + f(i'4); for'3(i'4 + 1, s'6) }
//!                                           else { s'5 }
//!                                       }
//!                                       let s'7 = for'3(a, s'1); s'7
//! ```
//!
//! The state is the mutable locals of the enclosing frame that the loop assigns, plus the
//! counter of a `for`. The bounds, the step and the sequence are evaluated once, before the loop,
//! in Rust's order. The function returns the state (and `break`'s value, for a `loop` that has
//! one), and the loop's value binds the state's next versions — unless a `return` leaves the
//! loop: then its exits run the rest of the function themselves (see `jumps`).

use std::rc::Rc;

use super::info::{Jump, names};
use super::{
    K, Lower, app, if_then_else, intrinsic, is_atom, let_in, lit, mk, op, pack, param, unit,
    unpack, var,
};
use crate::ast::{Expr, ExprKind, FnDef, Ident, Imp, Iter, Lit, NeverKind, Pat, PatKind};
use crate::error::SpanRange;
use crate::intrinsics::{BinOp, Intrinsic};
use crate::types::{Number, Type};

/// An open loop: what its jumps need.
pub(super) struct LoopCx<'a> {
    /// Its label.
    pub(super) label: Option<String>,
    /// `for`, `while` or `loop`.
    pub(super) kind: &'static str,
    /// The loop's function.
    f: String,
    /// A `for`'s counter.
    counter: Option<Counter>,
    /// The mutable locals it carries.
    state: Vec<usize>,
    /// Whether its exits carry `break`'s value.
    pub(super) value: bool,
    /// When a `return` leaves it: the rest of the function, which its exits run.
    pub(super) exit: Option<K<'a>>,
    /// Inside the arms of a tagged join (see `mutable`): its jumps do not call the loop's
    /// function or return its state but end the arm with a tag (`1` for `continue`, `2` for
    /// `break`) and the versions of these mutable locals, which the join dispatches on.
    pub(super) tagged: Option<Rc<Vec<usize>>>,
    /// The jumps out of it to loops around it (`continue 'outer`, `break 'outer`): its exits
    /// return a tag first, `0` for its own exit and `k + 1` for `escapes[k]`, which the code
    /// after its call dispatches on, in the loop around it.
    pub(super) escapes: Vec<Jump>,
    /// When a `return` is among the escapes: the value its other exits carry in the returned
    /// value's place (never read), made from the `fn`'s declared result type.
    placeholder: Option<Expr>,
}

/// A `for`'s counter: its parameter, and how the next iteration's value is made.
struct Counter {
    name: String,
    step: Step,
}

/// How a counter moves (`by` and the bounds are atoms evaluated before the loop).
enum Step {
    /// Up by `by`; the function tests the bound first.
    Up(Expr),
    /// Down by `by`; the function tests the bound first.
    Down(Expr),
    /// Up by `by` while the next value is at most `end` (`a..=b`: the test is before the step,
    /// so that `..=i64::MAX` does not overflow).
    UpTo { by: Expr, end: Expr },
    /// Down by `by` while the next value is at least `start`.
    DownTo { by: Expr, start: Expr },
}

/// What a loop runs over, once its bounds are atoms (one per loop being lowered).
#[allow(clippy::large_enum_variant)]
enum Over<'a> {
    /// A counter from `init`, tested by `test` (`None`: an inclusive range, tested before the
    /// call and at each step); the element is `elem` of the counter.
    Count {
        init: Expr,
        test: Option<Expr>,
        pre: Option<Expr>,
        step: Step,
        elem: Elem,
        pat: &'a Pat,
    },
    /// `while cond`.
    While(&'a Expr),
    /// `loop`.
    Forever,
}

/// The element of a `for` from its counter `c` (one per loop being lowered).
#[allow(clippy::large_enum_variant)]
enum Elem {
    /// `c` itself.
    Counter,
    /// `c - 1` (a reversed half-open range counts from `b` down to `a + 1`).
    Below,
    /// `get(s, c)`, or `(c, get(s, c))` with `.enumerate()`.
    Get { seq: Expr, enumerate: bool },
}

impl<'a> Lower<'a> {
    /// A `for`, `while` or `loop`.
    pub(super) fn lower_loop(&mut self, e: &'a Expr, i: &'a Imp, k: &K<'a>) -> Expr {
        match i {
            Imp::For {
                iter:
                    Iter::Range {
                        start,
                        end,
                        inclusive,
                        rev,
                        step,
                    },
                pat,
                ..
            } => {
                let mut parts = vec![start, end];
                parts.extend(step.iter());
                let (inclusive, rev) = (*inclusive, *rev);
                let k = k.clone();
                self.atoms(
                    Rc::new(parts),
                    0,
                    Vec::new(),
                    Rc::new(move |s, v| {
                        let sp = e.span;
                        let (a, b) = (v[0].clone(), v[1].clone());
                        let by = v.get(2).cloned().unwrap_or_else(|| lit(Lit::Int(1), sp));
                        let over = match (inclusive, rev) {
                            (false, false) => Over::Count {
                                init: a,
                                test: Some(lt(var_of(&pat.span), b.clone(), sp)),
                                pre: None,
                                step: Step::Up(by.clone()),
                                elem: Elem::Counter,
                                pat,
                            },
                            (false, true) => Over::Count {
                                init: b,
                                test: Some(op(BinOp::Gt, var_of(&pat.span), a, sp, sp)),
                                pre: None,
                                step: Step::Down(by.clone()),
                                elem: Elem::Below,
                                pat,
                            },
                            (true, false) => Over::Count {
                                init: a.clone(),
                                test: None,
                                pre: Some(op(BinOp::Le, a, b.clone(), sp, sp)),
                                step: Step::UpTo {
                                    by: by.clone(),
                                    end: b,
                                },
                                elem: Elem::Counter,
                                pat,
                            },
                            (true, true) => Over::Count {
                                init: b.clone(),
                                test: None,
                                pre: Some(op(BinOp::Le, a.clone(), b, sp, sp)),
                                step: Step::DownTo {
                                    by: by.clone(),
                                    start: a,
                                },
                                elem: Elem::Counter,
                                pat,
                            },
                        };
                        let lp = s.build_loop(e, i, over, &k);
                        if v.len() > 2 && !is_positive_literal(&by) {
                            // `step_by(0)` panics in Rust: here it fails.
                            let never = mk(ExprKind::Never(NeverKind::User), by.span);
                            let positive = op(BinOp::Gt, by, lit(Lit::Int(0), sp), sp, sp);
                            return if_then_else(positive, lp, never, sp);
                        }
                        lp
                    }),
                )
            }
            Imp::For {
                iter: Iter::Seq { seq, enumerate },
                pat,
                ..
            } => {
                let enumerate = *enumerate;
                let k = k.clone();
                self.atoms(
                    Rc::new(vec![seq]),
                    0,
                    Vec::new(),
                    Rc::new(move |s, v| {
                        let sp = e.span;
                        let seq = v[0].clone();
                        let n = s.fresh("n");
                        let len = app(intrinsic(Intrinsic::Length, sp), vec![seq.clone()], sp);
                        let over = Over::Count {
                            init: lit(Lit::Int(0), sp),
                            test: Some(lt(var_of(&sp), var(&n, sp), sp)),
                            pre: None,
                            step: Step::Up(lit(Lit::Int(1), sp)),
                            elem: Elem::Get { seq, enumerate },
                            pat,
                        };
                        let lp = s.build_loop(e, i, over, &k);
                        let_in(param(&n, sp, None), len, lp, sp)
                    }),
                )
            }
            Imp::While { cond, .. } => self.build_loop(e, i, Over::While(cond), k),
            _ => self.build_loop(e, i, Over::Forever, k),
        }
    }

    /// Lowers `es[i..]` in order, each value bound to a fresh name unless it is an atom, then
    /// calls `then` with the atoms.
    #[allow(clippy::type_complexity)]
    fn atoms(
        &mut self,
        es: Rc<Vec<&'a Expr>>,
        i: usize,
        done: Vec<Expr>,
        then: Rc<dyn Fn(&mut Lower<'a>, Vec<Expr>) -> Expr + 'a>,
    ) -> Expr {
        if i == es.len() {
            return then(self, done);
        }
        let es2 = es.clone();
        let next = self.kont(move |s, v| {
            let mut done = done.clone();
            if is_atom(&v) {
                done.push(v);
                return s.atoms(es2.clone(), i + 1, done, then.clone());
            }
            let sp = v.span;
            let t = s.fresh("b");
            done.push(var(&t, sp));
            let rest = s.atoms(es2.clone(), i + 1, done, then.clone());
            let_in(param(&t, sp, None), v, rest, sp)
        });
        self.lower(es[i], &next)
    }

    /// The loop's function, and its call.
    fn build_loop(&mut self, e: &'a Expr, i: &'a Imp, over: Over<'a>, k: &K<'a>) -> Expr {
        let sp = e.span;
        let (label, kind, body, pat_names) = match i {
            Imp::For {
                label, body, pat, ..
            } => (label, "for", body, names(pat)),
            Imp::While { label, body, .. } => (label, "while", body, Vec::new()),
            Imp::Loop { label, body } => (label, "loop", body, Vec::new()),
            _ => unreachable!("build_loop is called on loops"),
        };
        // The state: the mutable locals of this frame the loop assigns.
        let mut assigned: Vec<String> = self.facts.get(body).assigned.clone();
        assigned.retain(|n| !pat_names.contains(n));
        if let Over::While(cond) = over {
            for n in &self.facts.get(cond).assigned {
                if !assigned.contains(n) {
                    assigned.push(n.clone());
                }
            }
        }
        let mut state: Vec<usize> = Vec::new();
        for n in &assigned {
            if let Some(super::Bind::Mut(m)) = self.lookup(n)
                && self.muts[*m].frame == self.frame()
                && !state.contains(m)
            {
                state.push(*m);
            }
        }
        // A `return` out of the loop, with no loop around it: the exits run the rest.
        let jumps = &self.facts.get(e).jumps;
        let exit = (jumps.contains(&Jump::Return) && self.loops.is_empty()).then(|| k.clone());
        let value = self.facts.get(e).break_value;
        let label_name = label.as_ref().map(|l| l.name.clone());
        let mut escapes: Vec<Jump> = Vec::new();
        for j in jumps {
            let out = match j {
                // To a loop around this one (a label of no open loop is reported at the jump).
                Jump::Break(Some(l)) | Jump::Continue(Some(l)) => {
                    Some(l) != label_name.as_ref()
                        && self.loops.iter().any(|c| c.label.as_ref() == Some(l))
                }
                _ => false,
            };
            if out && !escapes.contains(j) {
                escapes.push(j.clone());
            }
        }
        // A `return` from inside this loop and one around it: carried out as an escape too.
        let placeholder = match jumps.contains(&Jump::Return) && !self.loops.is_empty() {
            true => self.return_placeholder(sp),
            false => None,
        };
        if placeholder.is_some() {
            escapes.push(Jump::Return);
        }
        if value && !escapes.is_empty() {
            self.error(
                sp,
                "a `loop` that `break`s with a value and also jumps to a loop around it is not supported inside `accelerate!`",
                "set a flag and `break` with the value, then test the flag after the loop",
            );
            return mk(ExprKind::Never(NeverKind::User), sp);
        }
        let f = self.fresh(kind);
        // A counter that is the element takes the element's name.
        let counter = match &over {
            Over::Count {
                pat,
                elem: Elem::Counter,
                ..
            } => Some(match &pat.kind {
                PatKind::Bind(x) => self.fresh(&x.name),
                _ => self.fresh("i"),
            }),
            Over::Count { .. } => Some(self.fresh("i")),
            _ => None,
        };
        let outside: Vec<Expr> = state.iter().map(|m| self.current(*m, sp)).collect();
        // The function's body, with the state's parameters as the current versions.
        let mark = self.mark();
        let mut params = Vec::new();
        if let Some(c) = &counter {
            params.push(param(c, sp, None));
        }
        for m in &state {
            let p = self.fresh(&self.muts[*m].name.clone());
            params.push(param(&p, sp, self.muts[*m].ann.clone()));
            self.set_version(*m, p);
        }
        let (init, pre, step) = match &over {
            Over::Count {
                init, pre, step, ..
            } => (Some(init.clone()), pre.clone(), Some(step)),
            _ => (None, None, None),
        };
        self.loops.push(LoopCx {
            label: label.as_ref().map(|l| l.name.clone()),
            kind,
            f: f.clone(),
            counter: counter.clone().zip(step).map(|(name, step)| Counter {
                name,
                step: step.clone(),
            }),
            state: state.clone(),
            value,
            exit,
            tagged: None,
            escapes: escapes.clone(),
            placeholder: placeholder.clone(),
        });
        let li = self.loops.len() - 1;
        // The end of the body: its value is dropped, the next iteration runs.
        let next = self.kont_discarding(move |s, v| {
            let call = s.next(li, sp);
            if is_atom(&v) {
                call
            } else {
                let_in(param("_", v.span, None), v, call, sp)
            }
        });
        let fbody = match &over {
            Over::Count {
                test, elem, pat, ..
            } => {
                let c = var(counter.as_deref().expect("a counter"), sp);
                let element = match elem {
                    Elem::Counter => c.clone(),
                    Elem::Below => op(BinOp::Sub, c.clone(), lit(Lit::Int(1), sp), sp, sp),
                    Elem::Get { seq, enumerate } => {
                        let get = app(
                            intrinsic(Intrinsic::Get, sp),
                            vec![seq.clone(), c.clone()],
                            sp,
                        );
                        if *enumerate {
                            // Rust's `enumerate` counts in `usize`, whatever the counter's type.
                            let index = app(
                                intrinsic(Intrinsic::As(Number::Usize), sp),
                                vec![c.clone()],
                                sp,
                            );
                            pack(vec![index, get], sp)
                        } else {
                            get
                        }
                    }
                };
                let run = self.element(
                    pat,
                    element,
                    matches!(elem, Elem::Counter),
                    counter.as_deref(),
                    body,
                    &next,
                );
                match test {
                    Some(t) => {
                        let t = rename_counter(t, counter.as_deref().expect("a counter"));
                        let out = self.exit(li, unit(sp));
                        if_then_else(t, run, out, sp)
                    }
                    None => run,
                }
            }
            Over::While(cond) => {
                let kc = self.kont(move |s, c| {
                    let run = s.lower(body, &next);
                    let out = s.exit(li, unit(sp));
                    if_then_else(c, run, out, sp)
                });
                self.lower(cond, &kc)
            }
            Over::Forever => self.lower(body, &next),
        };
        let cx = self.loops.pop().expect("pushed");
        self.rollback(mark);
        let def = FnDef {
            ident: Ident::new(&f, sp),
            params,
            ret: None,
            body: fbody,
            span: sp,
            ty: Type::unit(),
            item: None,
        };
        // The call, and what follows it.
        let mut args: Vec<Expr> = init.into_iter().collect();
        args.extend(outside.iter().cloned());
        let call = app(var(&f, sp), args, sp);
        let after = match cx.exit {
            Some(k) => {
                let call = match pre {
                    Some(p) => {
                        let none = self.resume(&k, unit(sp));
                        if_then_else(p, call, none, sp)
                    }
                    None => call,
                };
                return rec_let(def, call, sp);
            }
            None => {
                let call = match pre {
                    Some(p) => {
                        let mut none = outside;
                        if let Some(p) = &placeholder {
                            none.insert(0, p.clone());
                        }
                        if !escapes.is_empty() {
                            none.insert(0, lit(Lit::Int(0), sp));
                        }
                        if_then_else(p, call, pack(none, sp), sp)
                    }
                    None => call,
                };
                let mut names = Vec::new();
                let tag = (!escapes.is_empty()).then(|| self.fresh("tag"));
                let returned = placeholder.as_ref().map(|_| self.fresh("r"));
                names.extend(tag.iter().chain(&returned).cloned());
                let r = self.fresh("v");
                if value {
                    names.push(r.clone());
                }
                for m in &state {
                    let v = self.fresh(&self.muts[*m].name.clone());
                    self.set_version(*m, v.clone());
                    names.push(v);
                }
                let result = if value { var(&r, sp) } else { unit(sp) };
                let mut rest = self.resume(k, result);
                // The jumps out of the loop, taken here, in the loop around it: the last first.
                for (n, j) in escapes.iter().enumerate().rev() {
                    let tag = tag.as_deref().expect("a loop with escapes has a tag");
                    let is = op(
                        BinOp::Eq,
                        var(tag, sp),
                        lit(Lit::Int(n as i128 + 1), sp),
                        sp,
                        sp,
                    );
                    let jump = match j {
                        Jump::Return => {
                            let r = returned
                                .as_deref()
                                .expect("a `return` escape has a payload");
                            self.escape_return(var(r, sp), sp)
                        }
                        _ => self.escape_to(j, sp),
                    };
                    rest = if_then_else(is, jump, rest, sp);
                }
                unpack(&names, call, rest, sp)
            }
        };
        rec_let(def, after, sp)
    }

    /// `let pat = element; body` inside a `for`'s function (a counter that is the element and a
    /// plain name needs no binding: the name is the counter).
    fn element(
        &mut self,
        pat: &'a Pat,
        element: Expr,
        is_counter: bool,
        counter: Option<&str>,
        body: &'a Expr,
        next: &K<'a>,
    ) -> Expr {
        let sp = pat.span;
        let mark = self.mark();
        let out = match (&pat.kind, is_counter, counter) {
            (PatKind::Bind(x), true, Some(c)) => {
                self.bind_as(&x.name, c);
                self.lower(body, next)
            }
            (PatKind::Wild, ..) => self.lower(body, next),
            (PatKind::Bind(x), ..) => {
                let name = self.bind_unique(&x.name);
                let b = self.lower(body, next);
                let_in(param(&name, x.span, None), element, b, sp)
            }
            _ => {
                let (p, b) = {
                    let p = self.unique_pattern(pat);
                    (p, self.lower(body, next))
                };
                super::destructure(p, element, b, sp)
            }
        };
        self.rollback(mark);
        out
    }

    /// `pat` with its names made unique (and bound).
    fn unique_pattern(&mut self, pat: &Pat) -> Pat {
        let mut p = pat.clone();
        fn go(l: &mut Lower<'_>, p: &mut Pat) {
            match &mut p.kind {
                PatKind::Bind(i) => i.name = l.bind_unique(&i.name.clone()),
                PatKind::Record(fs) => fs.iter_mut().for_each(|(_, p)| go(l, p)),
                PatKind::Wild | PatKind::Lit(_) => {}
            }
        }
        go(self, &mut p);
        p
    }

    /// The next iteration of loop `li`: its function called with the current state.
    pub(super) fn next(&mut self, li: usize, sp: SpanRange) -> Expr {
        if let Some(t) = self.loops[li].tagged.clone() {
            return self.tag(1, &t, sp);
        }
        let cx = &self.loops[li];
        let f = cx.f.clone();
        let state: Vec<Expr> = cx.state.iter().map(|m| self.current(*m, sp)).collect();
        let call = |c: Option<Expr>| {
            let mut args: Vec<Expr> = c.into_iter().collect();
            args.extend(state.iter().cloned());
            app(var(&f, sp), args, sp)
        };
        let Some(Counter { name, step }) = &cx.counter else {
            return call(None);
        };
        let c = var(name, sp);
        match step {
            Step::Up(by) => call(Some(op(BinOp::Add, c, by.clone(), sp, sp))),
            Step::Down(by) => call(Some(op(BinOp::Sub, c, by.clone(), sp, sp))),
            Step::UpTo { by, end } => {
                let (by, end) = (by.clone(), end.clone());
                let more = room(end, c.clone(), &by, sp);
                let go = call(Some(op(BinOp::Add, c, by, sp, sp)));
                let out = self.exit(li, unit(sp));
                if_then_else(more, go, out, sp)
            }
            Step::DownTo { by, start } => {
                let (by, start) = (by.clone(), start.clone());
                let more = room(c.clone(), start, &by, sp);
                let go = call(Some(op(BinOp::Sub, c, by, sp, sp)));
                let out = self.exit(li, unit(sp));
                if_then_else(more, go, out, sp)
            }
        }
    }

    /// Leaving loop `li` with the value `v`: its state (and `v`, when its exits carry a value),
    /// or the rest of the function when a `return` leaves the loop.
    pub(super) fn exit(&mut self, li: usize, v: Expr) -> Expr {
        let sp = v.span;
        if let Some(t) = self.loops[li].tagged.clone() {
            // A tagged join's loop has no value: `v` is `()` or evaluated for its effect.
            let out = self.tag(2, &t, sp);
            return if is_atom(&v) {
                out
            } else {
                let_in(param("_", v.span, None), v, out, sp)
            };
        }
        if let Some(k) = self.loops[li].exit.clone() {
            return self.resume(&k, v);
        }
        let cx = &self.loops[li];
        let mut items = Vec::new();
        if !cx.escapes.is_empty() {
            items.push(lit(Lit::Int(0), sp));
        }
        items.extend(cx.placeholder.clone());
        let dropped = if cx.value {
            items.push(v);
            None
        } else if is_atom(&v) {
            None
        } else {
            Some(v)
        };
        items.extend(cx.state.iter().map(|m| self.current(*m, sp)));
        let out = pack(items, sp);
        match dropped {
            Some(v) => let_in(param("_", v.span, None), v, out, sp),
            None => out,
        }
    }
}

impl Lower<'_> {
    /// A `continue 'l` or `break 'l` (`j`) to loop `'l` around the innermost open one: taken
    /// directly when `'l` is the innermost, else the innermost's exit with the jump's tag,
    /// which the code after that loop takes on (see `build_loop`).
    pub(super) fn escape_to(&mut self, j: &Jump, sp: SpanRange) -> Expr {
        let (Jump::Break(Some(l)) | Jump::Continue(Some(l))) = j else {
            unreachable!("only labelled jumps escape a loop")
        };
        let target = self
            .loops
            .iter()
            .rposition(|c| c.label.as_deref() == Some(l.as_str()))
            .expect("the label was found when the jump was lowered");
        let li = self.loops.len() - 1;
        if target == li {
            return match j {
                Jump::Continue(_) => self.next(li, sp),
                _ => self.exit(li, unit(sp)),
            };
        }
        let payload = self.loops[li].placeholder.clone();
        self.escape(j, payload, sp)
    }

    /// The innermost loop's exit by its escape `j`: `(tag, payload, state)`, the payload being
    /// the returned value or its placeholder (none when no `return` escapes the loop).
    fn escape(&self, j: &Jump, payload: Option<Expr>, sp: SpanRange) -> Expr {
        let cx = self.loops.last().expect("an open loop");
        let n = cx
            .escapes
            .iter()
            .position(|e| e == j)
            .expect("every jump out of a loop is among its escapes");
        let mut items = vec![lit(Lit::Int(n as i128 + 1), sp)];
        items.extend(payload);
        items.extend(cx.state.iter().map(|m| self.current(*m, sp)));
        pack(items, sp)
    }

    /// `return v` (`v` an atom or evaluated once): the function's value where no loop is left
    /// around, else the innermost loop's exit with the tag of its `return` escape.
    pub(super) fn escape_return(&mut self, v: Expr, sp: SpanRange) -> Expr {
        if self.loops.len() <= 1 {
            // The only loop's exits run the rest of the function: `v` is its value.
            return v;
        }
        self.escape(&Jump::Return, Some(v), sp)
    }

    /// A value of the current `fn`'s declared result type, if it has one that can be written as
    /// a literal (numbers, `bool`, tuples, sequences, records of those).
    fn return_placeholder(&self, sp: SpanRange) -> Option<Expr> {
        let frame = &self.frames[self.frame()];
        if frame.kind != super::FrameKind::Fn {
            return None;
        }
        match &frame.ret {
            None => Some(unit(sp)),
            Some(t) => placeholder(t, sp),
        }
    }

    /// The end of an arm of a tagged join: `(tag, versions of the locals)`.
    pub(super) fn tag(&self, tag: i64, muts: &[usize], sp: SpanRange) -> Expr {
        let mut items = vec![lit(Lit::Int(tag.into()), sp)];
        items.extend(muts.iter().map(|m| self.current(*m, sp)));
        pack(items, sp)
    }
}

impl Clone for Step {
    fn clone(&self) -> Self {
        match self {
            Step::Up(b) => Step::Up(b.clone()),
            Step::Down(b) => Step::Down(b.clone()),
            Step::UpTo { by, end } => Step::UpTo {
                by: by.clone(),
                end: end.clone(),
            },
            Step::DownTo { by, start } => Step::DownTo {
                by: by.clone(),
                start: start.clone(),
            },
        }
    }
}

/// Whether `hi - lo >= by`, the room for one more step (`lo < hi` for a step of 1).
fn room(hi: Expr, lo: Expr, by: &Expr, sp: SpanRange) -> Expr {
    if matches!(by.kind, ExprKind::Lit(Lit::Int(1))) {
        return lt(lo, hi, sp);
    }
    let diff = op(BinOp::Sub, hi, lo, sp, sp);
    op(BinOp::Ge, diff, by.clone(), sp, sp)
}

fn lt(a: Expr, b: Expr, sp: SpanRange) -> Expr {
    op(BinOp::Lt, a, b, sp, sp)
}

/// The placeholder for the counter in a test written before the counter's name is known.
const COUNTER: &str = "counter'";

fn var_of(sp: &SpanRange) -> Expr {
    var(COUNTER, *sp)
}

/// `test` with the placeholder counter named `c`.
fn rename_counter(test: &Expr, c: &str) -> Expr {
    let mut t = test.clone();
    fn go(e: &mut Expr, c: &str) {
        if let ExprKind::Var { ident, .. } = &mut e.kind
            && ident.name == COUNTER
        {
            ident.name = c.to_string();
        }
        e.children_mut(&mut |x| go(x, c));
    }
    go(&mut t, c);
    t
}

fn is_positive_literal(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Lit(Lit::Int(n)) if n > 0)
}

/// A literal of type `t`, if there is one to write.
fn placeholder(t: &crate::types::TypeAnn, sp: SpanRange) -> Option<Expr> {
    use crate::types::{Label, TypeAnn as T};
    let e = match t {
        T::Num(Number::I64) => lit(Lit::Int(0), sp),
        T::Num(Number::F64) => lit(Lit::Float(0.0, 0.0), sp),
        T::Num(Number::Bool) => lit(Lit::Bool(false), sp),
        T::Seq(_) => mk(ExprKind::Seq(Vec::new()), sp),
        T::Tuple(ts) => pack(
            ts.iter()
                .map(|t| placeholder(t, sp))
                .collect::<Option<Vec<_>>>()?,
            sp,
        ),
        T::Record(fs) => mk(
            ExprKind::Record(
                fs.iter()
                    .map(|(n, t)| Some((Label::Name(n.clone()), placeholder(t, sp)?)))
                    .collect::<Option<Vec<_>>>()?,
            ),
            sp,
        ),
        _ => return None,
    };
    Some(e)
}

/// `fn def … ; body`.
fn rec_let(def: FnDef, body: Expr, sp: SpanRange) -> Expr {
    mk(
        ExprKind::RecLet {
            fns: vec![def],
            body: Box::new(body),
            scheme: Vec::new(),
        },
        sp,
    )
}
