//! The consumers of sequences — `map`, `map2`, `reduce`, `foldl`, `hist`, `scan`, `filter`,
//! `scatter` — as the optimizer left them ([`Soac`]: fused with the producers of their inputs or
//! not), printed as one call of the backend or the runtime. Which call depends only on the form
//! and on how each input is read (a slice, positions `0..n`, or flattened rows read by ranges;
//! by ranges too where a stage drops elements); the stages of the absorbed producers are applied
//! to each element where it is read.
//!
//! Everything is evaluated in the order [`Soac`] gives (the unfused program's): the form's own
//! arguments, then each input's stages (outermost first, their bound arguments evaluated once)
//! and its source (`create`'s count checked before its function).

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::Gen;
use super::positions::{Fast, Loop};
use super::types::result_type;
use super::windows::Run;
use crate::ast::{Expr, ExprKind, Form, Input, NodeId, Soac, Source, Stage};
use crate::types::Type;

/// An input, ready to be read: the statements that evaluate its parts, and how its elements are
/// reached.
struct Ready {
    /// Its maps' bound arguments and its source, evaluated in order; then its closures bound.
    pre: TokenStream,
    /// The variables holding its stages' closures, innermost first (all maps unless the input
    /// is `filtered`).
    maps: Vec<Ident>,
    /// Which of them filter (a predicate), as [`Stage::Filter`].
    filters: Vec<bool>,
    /// Whether some stage drops elements (read by ranges then).
    filtered: bool,
    /// Whether the elements are cheap to read twice ([`Input::cheap`]).
    cheap: bool,
    /// Where the elements come from.
    from: Elems,
    /// For positions whose element function reads sequences at the position plus constants: a
    /// second reader, for the positions where those reads are in range (`positions.rs`).
    fast: Option<Fast>,
}

enum Elems {
    /// A slice (`&[T]`) in this variable.
    Slice(Ident),
    /// Positions `0..n` (`n: i64` in the first variable), each made by the closure in the second.
    Range(Ident, Ident),
    /// Flattened rows (`&[Seq<T>]`) in this variable.
    Flat(Ident),
}

impl Gen<'_> {
    /// The length of the sequence `e`, a `usize`: counted without building it when `e` is a
    /// fused `filter` (`count`).
    pub(super) fn length_of(&mut self, e: &Expr) -> TokenStream {
        match self.count(e) {
            Some(n) => n,
            None => {
                let s = self.arg(e);
                quote!((#s).len())
            }
        }
    }

    /// How many elements `e` has, as a `usize`, counted without building it, when it is a fused
    /// `filter` (and the maps around it): `filter(p, s).len()` reads each element once and
    /// keeps none, as `iter().filter(p).count()` does.
    fn count(&mut self, e: &Expr) -> Option<TokenStream> {
        let ExprKind::Soac(s) = &e.kind else {
            return None;
        };
        let (Form::Map { f: None }, [input]) = (&s.form, &s.inputs[..]) else {
            return None;
        };
        if !input.filtered() {
            return None;
        }
        let site = self.site();
        let ready = self.ready(input);
        let pre = &ready.pre;
        let (n, read) = self.ranges(&ready, false);
        let r = self.fresh("read");
        Some(quote!({
            #pre
            let #r = #read;
            B::read_reduce(
                #site,
                "`+`",
                #n,
                0usize,
                move |__pm_lo: usize, __pm_hi: usize| #r(__pm_lo, __pm_hi).map(|_| 1usize),
                |__pm_a: usize, __pm_b: usize| __pm_a + __pm_b,
            )
        }))
    }

    /// The sequence a `map` or `map2` writes its results over (`map_owned`): the optimizer's
    /// candidate (`opt::moves::overwritten`) when this use is its last (so the generator moves
    /// it), it is an owned local, and its elements are `Copy`.
    fn overwrite<'s>(&self, s: &'s Soac, ty: &Type) -> Option<&'s Expr> {
        let x = crate::opt::moves::overwritten(s, ty)?;
        let ExprKind::Var { ident, .. } = &x.kind else {
            return None;
        };
        let owned = matches!(
            self.bindings.get(&ident.id),
            Some(super::Binding::Value { by_ref: false, .. })
        );
        let elem = match ty {
            Type::Seq(t) => &**t,
            _ => return None,
        };
        (owned && self.facts.moves.contains(&x.id) && self.is_copy(elem)).then_some(x)
    }

    /// The spare buffer a `create` (node `id`) may write into: its loop's replaced version of
    /// the state it replaces (`Facts::spares`, `loop_body`).
    fn spare(&self, id: NodeId) -> Option<Ident> {
        let x = self.facts.spares.get(&id)?;
        self.spares.get(x).map(|(_, s)| s.clone())
    }

    /// A consumer of sequences (node `id`, of type `ty`).
    pub(super) fn soac(&mut self, id: NodeId, s: &Soac, ty: &Type) -> TokenStream {
        let rt = self.rt.clone();
        let site = self.site();
        match (&s.form, &s.inputs[..]) {
            (Form::Map { f: None }, [input]) if input.filtered() => {
                // A compaction: `filter` and the maps around it.
                let ready = self.ready(input);
                let pre = &ready.pre;
                let (n, read) = self.ranges(&ready, false);
                let out = quote!({ #pre B::filter(#n, #read) });
                self.checked(out, ty, "the result of `filter`")
            }
            (Form::Map { f: None }, [input]) => {
                let over = self.overwrite(s, ty);
                let ready = self.ready(input);
                let pre = &ready.pre;
                let out = match &ready.from {
                    Elems::Slice(src) => {
                        let body = apply(&ready.maps, quote!(__pm_x), true);
                        let call = match over {
                            // The borrow of `x` in `pre` ends before `x` moves.
                            Some(x) => {
                                let x = self.value(x);
                                quote!(let _ = #src; #rt::map_owned::<B, _, _>(#x, move |__pm_x| #body))
                            }
                            None => quote!(B::map(#src, move |__pm_x| #body)),
                        };
                        quote!({ #pre #call })
                    }
                    Elems::Range(..) if ready.fast.is_some() => {
                        let peeled = self.peeled(&ready, false);
                        match self.spare(id) {
                            Some(spare) => {
                                quote!({ #pre #rt::tabulate_peeled_over::<B, _, _, _, _, _>(#site, ::core::mem::take(&mut #spare), #peeled) })
                            }
                            None => quote!({ #pre B::tabulate_peeled(#site, #peeled) }),
                        }
                    }
                    Elems::Range(n, g) => {
                        let body = apply(&ready.maps, quote!(#g(__pm_j)), false);
                        match self.spare(id) {
                            Some(spare) => {
                                quote!({ #pre #rt::tabulate_over::<B, _, _>(::core::mem::take(&mut #spare), #n, move |__pm_j| #body) })
                            }
                            None => quote!({ #pre B::tabulate(#n, move |__pm_j| #body) }),
                        }
                    }
                    Elems::Flat(_) => unsupported("a `map` of flattened rows"),
                };
                self.checked(out, ty, "the result of `map`")
            }
            (Form::Map { f: Some(f) }, [a, b]) => {
                let (pre_f, fa) = self.adaptor(
                    f,
                    &[(elem_type(a), true, false), (elem_type(b), true, false)],
                );
                let fv = self.fresh("f");
                let (ra, rb) = (self.ready(a), self.ready(b));
                let (Some((sa, xa)), Some((sb, xb))) = (side(&ra, "__pm_x"), side(&rb, "__pm_y"))
                else {
                    return unsupported("a `map2` of inputs that are not sequences");
                };
                let (pa, pb) = (&ra.pre, &rb.pre);
                let call = match self.overwrite(s, ty) {
                    Some(x) => {
                        let x = self.value(x);
                        quote!(let _ = #sa; #rt::map2_owned::<B, _, _, _>(#site, #x, #sb, move |__pm_x, __pm_y| #fv(#xa, #xb)))
                    }
                    None => quote!(B::map2(#site, #sa, #sb, move |__pm_x, __pm_y| #fv(#xa, #xb))),
                };
                let out = quote!({
                    #pre_f
                    #pa
                    #pb
                    let #fv = #fa;
                    #call
                });
                self.checked(out, ty, "the result of `map2`")
            }
            (Form::Reduce { op, ne, f }, inputs) => {
                let name = self.operator_name(op);
                let acc = ne.ty.clone();
                let (pre_op, opa) =
                    self.adaptor(op, &[(acc.clone(), false, true), (acc, false, true)]);
                let ne = self.value(ne);
                let nev = self.fresh("ne");
                let head = quote!(#pre_op let #nev = #ne;);
                match (f, inputs) {
                    (None, [input]) if input.filtered() => {
                        let ready = self.ready(input);
                        let pre = &ready.pre;
                        let (n, read) = self.ranges(&ready, false);
                        quote!({
                            #head #pre
                            B::read_reduce(#site, #name, #n, #nev, #read, #opa)
                        })
                    }
                    (None, [input]) => {
                        let ready = self.ready(input);
                        let pre = &ready.pre;
                        match &ready.from {
                            Elems::Slice(src) if ready.maps.is_empty() => quote!({
                                #head #pre
                                B::reduce(#site, #name, #src, #nev, #opa)
                            }),
                            Elems::Slice(src) => {
                                let body = apply(&ready.maps, quote!(__pm_x), true);
                                quote!({
                                    #head #pre
                                    B::map_reduce(#site, #name, #src, #nev, move |__pm_x| #body, #opa)
                                })
                            }
                            Elems::Range(..) if ready.fast.is_some() => {
                                let (n, read) = self.ranges(&ready, false);
                                quote!({
                                    #head #pre
                                    B::read_reduce(#site, #name, #n, #nev, #read, #opa)
                                })
                            }
                            Elems::Range(n, g) => {
                                let body = apply(&ready.maps, quote!(#g(__pm_j)), false);
                                quote!({
                                    #head #pre
                                    B::tabulate_reduce(#site, #name, #n, #nev, move |__pm_j| #body, #opa)
                                })
                            }
                            Elems::Flat(_) => unsupported("a `reduce` of flattened rows"),
                        }
                    }
                    (Some(g), [a, b]) => {
                        let (pre_g, ga) = self.adaptor(
                            g,
                            &[(elem_type(a), true, false), (elem_type(b), true, false)],
                        );
                        let gv = self.fresh("g");
                        let (ra, rb) = (self.ready(a), self.ready(b));
                        let (Some((sa, xa)), Some((sb, xb))) =
                            (side(&ra, "__pm_x"), side(&rb, "__pm_y"))
                        else {
                            return unsupported(
                                "a `reduce` of a `map2` of inputs that are not sequences",
                            );
                        };
                        let (pa, pb) = (&ra.pre, &rb.pre);
                        quote!({
                            #head
                            #pre_g
                            #pa
                            #pb
                            let #gv = #ga;
                            B::map2_reduce(#site, #name, #sa, #sb, #nev, move |__pm_x, __pm_y| #gv(#xa, #xb), #opa)
                        })
                    }
                    _ => unsupported("a `reduce` of this shape"),
                }
            }
            (Form::Foldl { f, acc }, [input]) if crate::opt::counted_fold(s).is_some() => {
                let facts = self.facts.loops.get(&id).cloned().unwrap_or_default();
                // A fold over the positions themselves is a counted loop with the optimizer's
                // facts: printed as `seq_loop_acc`, versioned for its lines and reads.
                let a0 = self.value(acc);
                let accv = self.fresh("acc");
                let ready = self.ready(input);
                let pre = &ready.pre;
                let Elems::Range(n, _) = &ready.from else {
                    return unsupported("a counted `foldl` that is not over positions");
                };
                // The positions' type: the count's.
                let k_ty = elem_type(input);
                let settled = self.facts.settled.get(&id).cloned();
                let acc_ty = acc.ty.clone();
                let lines = (&facts.accesses[..], &facts.reads[..]);
                let run = self.windowed_loop(f, lines, false, n, Run::Sequential, |g| {
                    let (pre_f, fa) =
                        g.index_adaptor(f, &[(acc_ty.clone(), false, true)], &k_ty);
                    match &settled {
                        Some(t) => {
                            let (pre_t, t) = g.adaptor(t, &[(acc_ty.clone(), true, false)]);
                            quote!({ #pre_f #pre_t #rt::rt::seq_loop_acc_until(#accv, #n, #t, #fa) })
                        }
                        None => {
                            let a0 = quote!(#accv);
                            match g.peeled_loop(f, Loop::Acc(&a0, &acc_ty), n, &fa) {
                                Some(run) => quote!({ #pre_f #run }),
                                None => quote!({ #pre_f #rt::rt::seq_loop_acc(#accv, #n, #fa) }),
                            }
                        }
                    }
                });
                quote!({
                    let #accv = #a0;
                    #pre
                    #run
                })
            }
            (Form::Foldl { f, acc }, [input]) => {
                let acc_ty = acc.ty.clone();
                let (pre_f, fa) = self.adaptor(
                    f,
                    &[
                        (acc_ty.clone(), false, true),
                        (elem_type(input), true, false),
                    ],
                );
                let a0 = self.value(acc);
                let (accv, fv) = (self.fresh("acc"), self.fresh("f"));
                let ready = self.ready(input);
                let pre = &ready.pre;
                let settled = self.facts.settled.get(&id).cloned();
                let until = settled.map(|t| self.adaptor(&t, &[(acc_ty, true, false)]));
                let run = match (&ready.from, until) {
                    (Elems::Slice(src), None) => {
                        let x = reference(&ready.maps, quote!(__pm_x), true);
                        quote!(#rt::rt::foldl(#src, #accv, move |__pm_a, __pm_x| #fv(__pm_a, #x)))
                    }
                    (Elems::Slice(src), Some((pre_t, t))) => {
                        let x = reference(&ready.maps, quote!(__pm_x), true);
                        quote!({ #pre_t #rt::rt::foldl_until(#src, #accv, #t, move |__pm_a, __pm_x| #fv(__pm_a, #x)) })
                    }
                    (Elems::Range(n, _), None) if ready.fast.is_some() => {
                        // In order: the positions before the peeled ones, those through slices,
                        // then the rest.
                        let peeled = self.peeled(&ready, false);
                        quote!(#peeled.fold(0, (#n as usize), #accv, move |__pm_a, __pm_x| #fv(__pm_a, &__pm_x)))
                    }
                    (Elems::Range(n, g), None) => {
                        let x = reference(&ready.maps, quote!(#g(__pm_j)), false);
                        quote!(#rt::rt::seq_loop_acc(#accv, #n, move |__pm_a, __pm_j| #fv(__pm_a, #x)))
                    }
                    (Elems::Range(n, g), Some((pre_t, t))) => {
                        let x = reference(&ready.maps, quote!(#g(__pm_j)), false);
                        quote!({ #pre_t #rt::rt::seq_loop_acc_until(#accv, #n, #t, move |__pm_a, __pm_j| #fv(__pm_a, #x)) })
                    }
                    (Elems::Flat(_), _) => unsupported("a `foldl` of flattened rows"),
                };
                quote!({
                    #pre_f
                    let #accv = #a0;
                    #pre
                    let #fv = #fa;
                    #run
                })
            }
            (Form::Hist { op, ne, k }, [is, vs]) => {
                let name = self.operator_name(op);
                let acc = ne.ty.clone();
                let (pre_op, opa) =
                    self.adaptor(op, &[(acc.clone(), false, true), (acc, false, true)]);
                let ne = self.value(ne);
                let k = self.value(k);
                let (nev, kv) = (self.fresh("ne"), self.fresh("k"));
                let (ri, rv) = (self.ready(is), self.ready(vs));
                let (pi, pv) = (&ri.pre, &rv.pre);
                let (ni, index) = self.ranges(&ri, true);
                let (nv, value) = self.ranges(&rv, false);
                quote!({
                    #pre_op
                    let #nev = #ne;
                    let #kv: i64 = #k;
                    #pi
                    #pv
                    B::hist(#site, #name, #kv, #nev, #ni, #nv, #index, #value, #opa)
                })
            }
            (Form::Scan { op, ne, post }, [input]) => {
                let name = self.operator_name(op);
                let acc = ne.ty.clone();
                // The consuming maps, outermost first, as they were written; bound last.
                let mut posts = Vec::new();
                let mut elem = acc.clone();
                for m in post {
                    let (pre, f) = self.adaptor(m, &[(elem.clone(), true, false)]);
                    posts.push((pre, f, self.fresh("post")));
                    elem = result_type(&m.ty, 1);
                }
                let pre_post = posts.iter().rev().map(|(p, _, _)| p);
                let bind_post = posts
                    .iter()
                    .map(|(_, f, v)| quote!(let #v = #f; let #v = &#v;));
                let post_maps: Vec<Ident> = posts.iter().map(|(_, _, v)| v.clone()).collect();
                let post = apply(&post_maps, quote!(__pm_x), true);
                let call = if post_maps.is_empty() {
                    quote!(scan)
                } else {
                    quote!(scan_map)
                };
                let post = if post_maps.is_empty() {
                    quote!()
                } else {
                    quote!(, move |__pm_x| #post)
                };
                let (pre_op, opa) =
                    self.adaptor(op, &[(acc.clone(), false, true), (acc, false, true)]);
                let ne = self.value(ne);
                let nev = self.fresh("ne");
                let ready = self.ready(input);
                let pre = &ready.pre;
                let (exact, cheap) = (!ready.filtered, ready.cheap);
                let (n, read) = self.ranges(&ready, false);
                let out = quote!({
                    #(#pre_post)*
                    #pre_op
                    let #nev = #ne;
                    #pre
                    #(#bind_post)*
                    B::#call(#site, #name, #n, #exact, #cheap, #nev, #read, #opa #post)
                });
                self.checked(out, ty, "the result of `scan`")
            }
            (Form::Scatter { dest }, [is, vs]) => {
                let d = self.value(dest);
                let dv = self.fresh("dest");
                let (ri, rv) = (self.ready(is), self.ready(vs));
                let (pi, pv) = (&ri.pre, &rv.pre);
                let (ni, index) = self.ranges(&ri, true);
                let (nv, value) = self.ranges(&rv, false);
                let out = quote!({
                    let #dv = #d;
                    #pi
                    #pv
                    B::scatter(#site, #dv, #ni, #nv, #index, #value)
                });
                self.checked(out, ty, "the result of `scatter`")
            }
            _ => unsupported("a composition of this shape"),
        }
    }

    /// Evaluates an input's parts in order and binds what reads its elements.
    fn ready(&mut self, input: &Input) -> Ready {
        // The element type each stage takes, innermost first.
        let mut elem = source_elem(&input.source);
        let mut closures = Vec::new();
        for st in &input.stages {
            let m = st.func();
            let (pre, f) = self.adaptor(m, &[(elem.clone(), true, false)]);
            let filter = matches!(st, Stage::Filter(_));
            closures.push((pre, f, self.fresh(if filter { "p" } else { "m" }), filter));
            if !filter {
                elem = result_type(&m.ty, 1);
            }
        }
        let mut pre: Vec<TokenStream> = (closures.iter().rev())
            .map(|(p, _, _, _)| p.clone())
            .collect();
        let from = match &input.source {
            Source::Seq(s) => {
                let v = self.arg(s);
                let src = self.fresh("src");
                pre.push(quote!(let #src = #v; let #src = (#src).as_slice();));
                Elems::Slice(src)
            }
            Source::Flat(rows) => {
                let v = self.arg(rows);
                let src = self.fresh("src");
                pre.push(quote!(let #src = #v; let #src = (#src).as_slice();));
                Elems::Flat(src)
            }
            Source::Range { n, g } => {
                let nx = self.index_value(n);
                let (nv, gv) = (self.fresh("n"), self.fresh("g"));
                let (pre_g, ga) = self.index_adaptor(g, &[], &n.ty);
                pre.push(quote!(
                    // A count is Rust's `0..n`: a negative one makes no elements.
                    let #nv: i64 = ::core::cmp::max(#nx, 0);
                    #pre_g
                    let #gv = #ga;
                    let #gv = &#gv;
                ));
                Elems::Range(nv, gv)
            }
        };
        let fast = match &from {
            Elems::Range(n, _) => self.fast_reader(input, n),
            _ => None,
        };
        if let Some(f) = &fast {
            pre.push(f.pre.clone());
        }
        let binds = closures
            .iter()
            .map(|(_, f, v, _)| quote!(let #v = #f; let #v = &#v;));
        Ready {
            pre: quote!(#(#pre)* #(#binds)*),
            filters: closures.iter().map(|c| c.3).collect(),
            maps: closures.into_iter().map(|(_, _, v, _)| v).collect(),
            filtered: input.filtered(),
            cheap: input.cheap,
            from,
            fast,
        }
    }

    /// An input read by ranges (`hist`, `scatter`, a filtered input) as the runtime takes it: its
    /// number of positions (`usize`) and a closure from a range `lo..hi` of positions to an
    /// iterator over the elements they give (`i64`s for the indices), each through the stages.
    fn ranges(&mut self, ready: &Ready, index: bool) -> (TokenStream, TokenStream) {
        let rt = self.rt.clone();
        let (lo, hi) = (format_ident!("__pm_lo"), format_ident!("__pm_hi"));
        let to_index = |iter: TokenStream| as_indices(&rt, iter, index);
        if ready.fast.is_some() {
            let Elems::Range(n, _) = &ready.from else {
                return (quote!(0usize), unsupported("a second reader of a sequence"));
            };
            let peeled = self.peeled(ready, index);
            let p = format_ident!("__pm_peeled");
            // (`peeled` converts the indices.)
            let read =
                quote!({ let #p = #peeled; move |#lo: usize, #hi: usize| #p.iter(#lo, #hi) });
            return (quote!((#n as usize)), read);
        }
        let (len, read, by_ref) = match &ready.from {
            Elems::Slice(src) => (quote!(#src.len()), quote!(#src[#lo..#hi].iter()), true),
            Elems::Flat(src) => (
                quote!(#rt::rt::flat_len(#src)),
                quote!(#rt::rt::flat_range(#src, #lo, #hi)),
                true,
            ),
            Elems::Range(n, g) => (
                quote!((#n as usize)),
                quote!((#lo..#hi).map(move |__pm_j: usize| #g(__pm_j as i64))),
                false,
            ),
        };
        let iter = to_index(staged(read, by_ref, &ready.maps, &ready.filters));
        (len, quote!(move |#lo: usize, #hi: usize| #iter))
    }

    /// The runtime's `Peeled` over an input made from positions that has a second reader: the
    /// element function as written for the positions outside `a..b`, the second reader inside,
    /// each through the stages it does not stand for.
    fn peeled(&mut self, ready: &Ready, index: bool) -> TokenStream {
        let rt = self.rt.clone();
        let (Elems::Range(n, g), Some(fast)) = (&ready.from, &ready.fast) else {
            return unsupported("a second reader of a sequence");
        };
        let (lo, hi) = (format_ident!("__pm_lo"), format_ident!("__pm_hi"));
        let to_index = |iter: TokenStream| as_indices(&rt, iter, index);
        let slow = quote!((#lo..#hi).map(move |__pm_j: usize| #g(__pm_j as i64)));
        let slow = to_index(staged(slow, false, &ready.maps, &ready.filters));
        let (read, a, b, k) = (&fast.read, &fast.a, &fast.b, fast.absorbed);
        let quick = quote!(#read(#lo, #hi));
        let quick = to_index(staged(quick, false, &ready.maps[k..], &ready.filters[k..]));
        quote!(#rt::Peeled::new(
            #n as usize,
            #a,
            #b,
            move |#lo: usize, #hi: usize| #slow,
            move |#lo: usize, #hi: usize| #quick,
        ))
    }
}

/// `iter`'s elements as the runtime's indices (`i64`) where `index` says so.
fn as_indices(rt: &TokenStream, iter: TokenStream, index: bool) -> TokenStream {
    if index {
        quote!(#iter.map(#rt::Int::to_index))
    } else {
        iter
    }
}

/// The iterator `iter` (of references when `by_ref`) through the stages `maps` (a predicate where
/// `filters` says so), innermost first: consecutive maps are applied in one closure, a filter
/// takes the element by reference.
fn staged(iter: TokenStream, by_ref: bool, maps: &[Ident], filters: &[bool]) -> TokenStream {
    let (mut iter, mut by_ref) = (iter, by_ref);
    let mut run: Vec<Ident> = Vec::new();
    let flush = |iter: TokenStream, run: &mut Vec<Ident>, by_ref: &mut bool| {
        if run.is_empty() {
            return iter;
        }
        let body = apply(run, quote!(__pm_x), *by_ref);
        run.clear();
        *by_ref = false;
        quote!(#iter.map(move |__pm_x| #body))
    };
    for (m, &filter) in maps.iter().zip(filters) {
        if filter {
            iter = flush(iter, &mut run, &mut by_ref);
            let x = if by_ref {
                quote!(*__pm_x)
            } else {
                quote!(__pm_x)
            };
            iter = quote!(#iter.filter(move |__pm_x| #m(#x)));
        } else {
            run.push(m.clone());
        }
    }
    if run.is_empty() && by_ref {
        quote!(#iter.map(::core::clone::Clone::clone))
    } else {
        flush(iter, &mut run, &mut by_ref)
    }
}

/// `x` (a reference when `by_ref`, else a value) through the maps, innermost first: a value (or
/// `x` itself when there are none).
fn apply(maps: &[Ident], x: TokenStream, by_ref: bool) -> TokenStream {
    let mut it = maps.iter();
    let Some(first) = it.next() else {
        return if by_ref {
            quote!(::core::clone::Clone::clone(#x))
        } else {
            x
        };
    };
    let mut v = if by_ref {
        quote!(#first(#x))
    } else {
        quote!(#first(&#x))
    };
    for m in it {
        v = quote!(#m(&#v));
    }
    v
}

/// For a slice input: the slice, and the element as `map2`'s function takes it (a reference) from
/// the closure parameter `x`.
fn side(ready: &Ready, x: &str) -> Option<(Ident, TokenStream)> {
    let Elems::Slice(src) = &ready.from else {
        return None;
    };
    let x = format_ident!("{}", x);
    Some((src.clone(), reference(&ready.maps, quote!(#x), true)))
}

/// A reference to `x` (a reference when `by_ref`, else a value) through the maps.
fn reference(maps: &[Ident], x: TokenStream, by_ref: bool) -> TokenStream {
    if maps.is_empty() && by_ref {
        x
    } else if maps.is_empty() {
        quote!(&#x)
    } else {
        let v = apply(maps, x, by_ref);
        quote!(&#v)
    }
}

/// The type of the elements an input gives (after its stages).
fn elem_type(input: &Input) -> Type {
    (input.stages.iter().rev())
        .find_map(|s| match s {
            Stage::Map(m) => Some(result_type(&m.ty, 1)),
            Stage::Filter(_) => None,
        })
        .unwrap_or_else(|| source_elem(&input.source))
}

/// The type of the elements a source gives.
fn source_elem(s: &Source) -> Type {
    let elem = |t: &Type| match t {
        Type::Seq(a) => (**a).clone(),
        t => t.clone(),
    };
    match s {
        Source::Seq(s) => elem(&s.ty),
        Source::Flat(rows) => elem(&elem(&rows.ty)),
        Source::Range { g, .. } => result_type(&g.ty, 1),
    }
}

/// The expansion of a composition the optimizer does not make: an internal error, not a panic.
fn unsupported(what: &str) -> TokenStream {
    let msg = format!("internal error: {what}, which the optimizer does not make");
    quote!(::core::compile_error!(#msg))
}
