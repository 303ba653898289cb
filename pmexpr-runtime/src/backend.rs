//! The CPU backends: how the parallel keywords run.
//!
//! Generated code for an accelerated expression is one function generic over [`Backend`]; it is
//! instantiated once per CPU backend and the target chosen at run time picks the instance. The
//! sequential backend is the semantics (the paper's `demote`: `reduce` is a left fold, `par_loop`
//! runs its iterations in order); the multicore backend runs the same closures on rayon's thread
//! pool; the debug backend is the sequential one with the runtime checks of debug mode switched on
//! (`B::CHECKS` is a constant, so the other backends carry no trace of them): it checks the laws
//! of the operators of the reductions, `scan` and `hist` ([`crate::laws`]; hence their `site`
//! and `op`, the operator's name for the message) and that a `scatter`'s indices are distinct
//! ([`crate::races`]) in its own methods, before computing.

use crate::fill;
use crate::granularity::Level;
use crate::laws::{Law, check_laws, check_reduce};
use crate::numeric::{OpenType, Scalar};
use crate::peeled::{self, Peeled};
use crate::policy::{self, CHEAP_ROWS_SEQUENTIAL_BELOW};
use crate::races::check_scatter;
use crate::raw::caller_runs::{self, Pool};
use crate::raw::slots::{self, Slots};
use crate::row::RowOut;
use crate::seq::Seq;
use crate::site::Site;

mod streams;

/// How the parallel keywords of PMExpr execute. Implemented by [`SeqBackend`], [`CpuBackend`] and
/// [`DebugBackend`].
pub trait Backend: 'static {
    /// Whether debug mode's runtime checks run (regular sequences, tensor rank, …).
    const CHECKS: bool;

    /// Whether whole-tensor operations run on all cores: `tensor_gemm` is the multithreaded
    /// `matrixmultiply` GEMM then, and the triple loop that defines it otherwise.
    const PARALLEL: bool;

    /// `map f s`.
    fn map<'a, T, U, F>(s: &[T], f: F) -> Seq<'a, U>
    where
        T: Sync,
        U: Send,
        F: Fn(&T) -> U + Sync + Send;

    /// `map2 f a b`; the sequences must have the same length.
    fn map2<'a, T, U, V, F>(site: &Site, a: &[T], b: &[U], f: F) -> Seq<'a, V>
    where
        T: Sync,
        U: Sync,
        V: Send,
        F: Fn(&T, &U) -> V + Sync + Send;

    /// `map f s` written over `s` itself (its owner holds it alone: [`map_owned`]).
    fn update<T, F>(s: &mut [T], f: F)
    where
        T: Send + Sync,
        F: Fn(&T) -> T + Sync + Send;

    /// `map2 f a b` written over `a` itself ([`map2_owned`]); the sequences must have the same
    /// length.
    fn update2<T, U, F>(site: &Site, a: &mut [T], b: &[U], f: F)
    where
        T: Send + Sync,
        U: Sync,
        F: Fn(&T, &U) -> T + Sync + Send;

    /// The elements of a new sequence written over the elements of `s`, which its owner holds
    /// alone ([`tabulate_over`]): `fill(lo, part)` writes the positions `lo..lo + part.len()`,
    /// the parts in parallel where that pays.
    fn refill<U, F>(s: &mut [U], fill: F)
    where
        U: Send + Sync,
        F: Fn(usize, &mut [U]) + Sync + Send;

    /// `map f (create n g)` without the created sequence: `f` applied to `g`'s element at each
    /// position `0..n` (`n` is not negative: `create` checked it).
    fn tabulate<'a, U, F>(n: i64, f: F) -> Seq<'a, U>
    where
        U: Send,
        F: Fn(i64) -> U + Sync + Send;

    /// The elements of the positions `0..n` that `p` reads ([`Peeled`]: a `create` whose reads
    /// are proven in range for most positions), in order; fails at `site` if a reader gives
    /// fewer elements than positions.
    fn tabulate_peeled<'a, U, S, F, I, J>(site: &Site, p: Peeled<S, F>) -> Seq<'a, U>
    where
        U: Send,
        S: Fn(usize, usize) -> I + Sync + Send,
        F: Fn(usize, usize) -> J + Sync + Send,
        I: Iterator<Item = U>,
        J: Iterator<Item = U>;

    /// `reduce f ne s`, assuming `f` is associative with neutral element `ne`. `op` names `f` in
    /// the message of debug mode's check of its laws, which fails at `site` (as for every
    /// reduction, `scan` and `hist` below).
    fn reduce<T, F>(site: &Site, op: &str, s: &[T], ne: T, f: F) -> T
    where
        T: Law + Clone + Send + Sync,
        F: Fn(T, T) -> T + Sync + Send;

    /// `reduce f ne (map g s)` without building the intermediate sequence.
    fn map_reduce<T, U, G, F>(site: &Site, op: &str, s: &[T], ne: U, g: G, f: F) -> U
    where
        T: Sync,
        U: Law + Clone + Send + Sync,
        G: Fn(&T) -> U + Sync + Send,
        F: Fn(U, U) -> U + Sync + Send;

    /// `reduce f ne (create n g)` without building the created sequence (`n` is not negative).
    fn tabulate_reduce<U, G, F>(site: &Site, op: &str, n: i64, ne: U, g: G, f: F) -> U
    where
        U: Law + Clone + Send + Sync,
        G: Fn(i64) -> U + Sync + Send,
        F: Fn(U, U) -> U + Sync + Send;

    /// `reduce f ne (map2 g a b)` without building the intermediate sequence (a dot product);
    /// the sequences must have the same length.
    #[allow(clippy::too_many_arguments)]
    fn map2_reduce<T, U, V, G, F>(site: &Site, op: &str, a: &[T], b: &[U], ne: V, g: G, f: F) -> V
    where
        T: Sync,
        U: Sync,
        V: Law + Clone + Send + Sync,
        G: Fn(&T, &U) -> V + Sync + Send,
        F: Fn(V, V) -> V + Sync + Send;

    /// `flatten s`: the concatenation of the inner sequences.
    fn flatten<'a, T>(s: &[Seq<'a, T>]) -> Seq<'a, T>
    where
        T: Clone + Send + Sync;

    /// `hist f ne k is vs`: `k` bins, each starting as `ne`; for every `j < n`, the value
    /// `vs[j]` is combined into bin `is[j]` with `f` (an index outside `0..k` is skipped, as in
    /// Futhark). `n` and `nv` are the lengths of the index and value sequences, which must be
    /// equal. `index(lo, hi)` and `value(lo, hi)` give the elements `lo..hi` of each in order
    /// (generated code reads a slice, a `create` or the rows of a `flatten` so, without building
    /// it). Assumes `f` is associative with neutral element `ne`.
    #[allow(clippy::too_many_arguments)]
    fn hist<'a, T, I, V, F, II, VI>(
        site: &Site,
        op: &str,
        k: i64,
        ne: T,
        n: usize,
        nv: usize,
        index: I,
        value: V,
        f: F,
    ) -> Seq<'a, T>
    where
        T: Law + Clone + Send + Sync,
        I: Fn(usize, usize) -> II + Sync + Send,
        V: Fn(usize, usize) -> VI + Sync + Send,
        II: Iterator<Item = i64>,
        VI: Iterator<Item = T>,
        F: Fn(T, T) -> T + Sync + Send;

    /// `map(post, scan(f, ne, xs))` without building `xs`: the inclusive scan of the elements
    /// that `read(lo, hi)` gives for the positions `lo..hi` of `0..n` (exactly one per position
    /// when `exact`; any number, in order, for a filtered input), each result through `post` as
    /// it is written. `cheap`: reading the elements twice costs less than storing them (the
    /// optimizer's decision, `Input::cheap`). Assumes `f` is associative with neutral element
    /// `ne`.
    #[allow(clippy::too_many_arguments)]
    fn scan_map<'a, T, U, R, I, F, P>(
        site: &Site,
        op: &str,
        n: usize,
        exact: bool,
        cheap: bool,
        ne: T,
        read: R,
        f: F,
        post: P,
    ) -> Seq<'a, U>
    where
        T: Law + Clone + Send + Sync,
        U: Send,
        R: Fn(usize, usize) -> I + Sync + Send,
        I: Iterator<Item = T>,
        F: Fn(T, T) -> T + Sync + Send,
        P: Fn(&T) -> U + Sync + Send;

    /// `scan(f, ne, xs)` without building `xs`: [`Backend::scan_map`] with no consuming map.
    #[allow(clippy::too_many_arguments)]
    fn scan<'a, T, R, I, F>(
        site: &Site,
        op: &str,
        n: usize,
        exact: bool,
        cheap: bool,
        ne: T,
        read: R,
        f: F,
    ) -> Seq<'a, T>
    where
        T: Law + Clone + Send + Sync,
        R: Fn(usize, usize) -> I + Sync + Send,
        I: Iterator<Item = T>,
        F: Fn(T, T) -> T + Sync + Send;

    /// The elements that `read(lo, hi)` gives for the positions `lo..hi` of `0..n`, in order: a
    /// `filter` with the maps around it, fused (the input's stages drop elements).
    fn filter<'a, T, R, I>(n: usize, read: R) -> Seq<'a, T>
    where
        T: Send,
        R: Fn(usize, usize) -> I + Sync + Send,
        I: Iterator<Item = T>;

    /// `reduce f ne` of the elements that `read(lo, hi)` gives for the positions `lo..hi` of
    /// `0..n` (a filtered input), assuming `f` is associative with neutral element `ne`.
    fn read_reduce<T, R, I, F>(site: &Site, op: &str, n: usize, ne: T, read: R, f: F) -> T
    where
        T: Law + Clone + Send + Sync,
        R: Fn(usize, usize) -> I + Sync + Send,
        I: Iterator<Item = T>,
        F: Fn(T, T) -> T + Sync + Send;

    /// `scatter dest is vs`: `dest` with, for every `j < n`, `vs[j]` at `is[j]` (an index
    /// outside `dest` is skipped, as in Futhark; of two equal indices, the sequential backends
    /// keep the later value and `cpu` either). `n` and `nv` are the lengths of the index and
    /// value sequences, which must be equal; `index` and `value` read them by ranges, as for
    /// [`Backend::hist`]. `dest` is updated in place when nothing else holds it. `cpu` writes
    /// numbers and `bool`s ([`OpenType::which`]) in parallel, as relaxed atomic stores (two equal
    /// indices are then a race that keeps one of the values, never undefined behaviour; debug
    /// mode reports them), and other values in order.
    fn scatter<'a, T, I, V, II, VI>(
        site: &Site,
        dest: Seq<'a, T>,
        n: usize,
        nv: usize,
        index: I,
        value: V,
    ) -> Seq<'a, T>
    where
        T: Clone + Send + Sync + OpenType,
        I: Fn(usize, usize) -> II + Sync + Send,
        V: Fn(usize, usize) -> VI + Sync + Send,
        II: Iterator<Item = i64>,
        VI: Iterator<Item = T>;

    /// `par_loop n f`: `f i` for every `i` in `0..n`, in any order. (`f` is `Clone` so that each
    /// task can work on its own copy.)
    fn par_loop<F>(n: i64, f: F)
    where
        F: Fn(i64) + Clone + Sync + Send;

    /// `par_loop n slow` whose iterations `a..b` (clamped to `0..=n`) may run through
    /// `fast(lo, hi)` instead, which runs the iterations `lo..hi` (the same ones: its reads of
    /// sequences through slices of the chunk, in range there). Debug mode runs `slow` for every
    /// iteration, as `par_loop`, recording what each touches.
    fn par_loop_peeled<S, F>(n: i64, a: i64, b: i64, slow: S, fast: F)
    where
        S: Fn(i64) + Clone + Sync + Send,
        F: Fn(usize, usize) + Clone + Sync + Send;

    /// `map` of a function that fills one row of `w` elements per element of `s` (given the
    /// element and its row, which starts as `U::default()`s): the rows are views of one buffer.
    /// Generated code runs `map(|j| { …; map(g, ks) }, s)` this way, `ks` fixed (see the code
    /// generator's `rows` module). `cheap`: the code generator found no loop, call or keyword in
    /// the function (its cost per row element is a few operations), so a parallel backend may
    /// run a small map on the calling thread.
    fn map_rows<'a, T, U, F>(s: &[T], w: usize, cheap: bool, f: F) -> Seq<'a, Seq<'a, U>>
    where
        T: Sync,
        U: Scalar,
        F: Fn(&T, &mut RowOut<'_, U>) + Sync + Send;

    /// `par_loop n` over a grid of rows of `w > 0`: `f(k0, j0, j1)` for segments of one row each
    /// that together cover `0..n` once, in any order — index `k` is `k0 + (j - j0)` for one
    /// segment and one `j` in `j0..j1`, and `j = k % w`. Generated code runs a loop whose
    /// function starts with `let j = k % w;` (and `let`s that are the same along a row, such as
    /// `k / w`) this way: see the code generator's `grid` module. `n <= 0` does nothing.
    fn par_rows<F>(n: i64, w: i64, f: F)
    where
        F: Fn(i64, i64, i64) + Clone + Sync + Send;
}

/// `f(k0, j0, j1)` for the segments of rows of `w > 0` that cover `lo..hi`: one division per
/// segment.
#[inline(always)]
fn rows_of<F: Fn(i64, i64, i64)>(lo: i64, hi: i64, w: i64, f: &F) {
    let mut k = lo;
    while k < hi {
        let j0 = k % w;
        let j1 = w.min(j0.saturating_add(hi - k));
        f(k, j0, j1);
        k += j1 - j0;
    }
}

/// The sequential backend: the reference semantics.
#[derive(Debug, Clone, Copy)]
pub enum SeqBackend {}

/// The multicore backend: rayon's work-stealing pool (all cores by default; `RAYON_NUM_THREADS`
/// limits it).
#[derive(Debug, Clone, Copy)]
pub enum CpuBackend {}

/// Debug mode: the sequential backend with the runtime checks.
#[derive(Debug, Clone, Copy)]
pub enum DebugBackend {}

/// Nested parallelism on the `cpu` target: a keyword whose own level already gives every worker
/// several tasks marks its tasks (this flag, per thread, while a task runs), and the keywords
/// nested inside them run sequentially — as a hand-written rayon program parallelizes the outer
/// loop only. Measured on the Parboil ports: rayon's splitting and joining of short inner
/// sequences (a dot product per element of a `map`) was most of their time.
mod nesting {
    use std::cell::Cell;

    thread_local! {
        static SATURATED: Cell<bool> = const { Cell::new(false) };
    }

    /// Whether this thread runs a task of a level that saturates the workers.
    #[inline]
    pub(super) fn saturated() -> bool {
        SATURATED.with(Cell::get)
    }

    /// Whether a level of `tasks` parallel items saturates the workers.
    #[inline]
    pub(super) fn saturates(tasks: usize) -> bool {
        tasks >= crate::policy::SATURATING_TASKS_PER_THREAD * crate::granularity::threads()
    }

    /// Sets the flag until dropped (restoring it also when a task panics).
    pub(super) struct Guard(bool);

    impl Guard {
        #[inline]
        pub(super) fn new() -> Guard {
            Guard(SATURATED.with(|c| c.replace(true)))
        }
    }

    impl Drop for Guard {
        #[inline]
        fn drop(&mut self) {
            SATURATED.with(|c| c.set(self.0))
        }
    }
}

/// `create n f`: `[f 0, …, f (n-1)]` on backend `B` — Futhark's `tabulate`, a parallel keyword:
/// in order on the sequential backends, in parallel on `cpu`. A count means Rust's `0..n`, so a
/// negative `n` gives the empty sequence (as `par_loop` runs zero times).
#[doc(hidden)]
pub fn create<'a, B, T, F>(_site: &Site, n: i64, f: F) -> Seq<'a, T>
where
    B: Backend,
    T: Send,
    F: Fn(i64) -> T + Sync + Send,
{
    B::tabulate(n.max(0), f)
}

/// How a level of `n` positions whose element function has type `F` runs on `cpu`: `None` on
/// the calling thread (one position, one thread, nested in a level that saturates the workers
/// ([`nesting`]), or too small for threads to pay (`granularity`)); else the level to hand to
/// [`level`] or [`reduced`].
#[inline]
fn parallel_level<F: ?Sized>(n: usize) -> Option<Level> {
    if n <= 1 || nesting::saturated() || crate::granularity::threads() <= 1 {
        return None;
    }
    let at = Level::of::<F>(n);
    (!at.sequential()).then_some(at)
}

/// `map f s` where `s` is the last use of a local (the optimizer's `moves`) and `f` gives
/// elements of its type: written over `s`'s elements when nothing else holds them, as
/// hand-written code updates its buffer (a loop's `x = map(…, x)` allocates nothing then); a new
/// sequence otherwise.
#[doc(hidden)]
pub fn map_owned<'a, B, T, F>(mut s: Seq<'a, T>, f: F) -> Seq<'a, T>
where
    B: Backend,
    T: Clone + Send + Sync,
    F: Fn(&T) -> T + Sync + Send,
{
    if s.is_unique() {
        B::update(s.make_mut(), f);
        s
    } else {
        B::map(&s, f)
    }
}

/// `create(n, f)` written into the storage of `spare`, a version of a loop's sequence that the
/// loop no longer reads (the optimizer's `Facts::spares`), when nothing else holds it and it has
/// `n` elements: a loop that replaces its sequence each iteration alternates between two buffers,
/// as hand-written code swaps two; a new sequence otherwise.
#[doc(hidden)]
pub fn tabulate_over<'a, B, U, F>(mut spare: Seq<'a, U>, n: i64, f: F) -> Seq<'a, U>
where
    B: Backend,
    U: Clone + Send + Sync,
    F: Fn(i64) -> U + Sync + Send,
{
    if n > 0 && spare.len() == n as usize && spare.is_unique() {
        B::refill(spare.make_mut(), |lo: usize, part: &mut [U]| {
            for (k, x) in part.iter_mut().enumerate() {
                *x = f((lo + k) as i64);
            }
        });
        spare
    } else {
        drop(spare);
        B::tabulate(n, f)
    }
}

/// [`Backend::tabulate_peeled`] written into the storage of `spare` as [`tabulate_over`] writes.
#[doc(hidden)]
pub fn tabulate_peeled_over<'a, B, U, S, F, I, J>(
    site: &Site,
    mut spare: Seq<'a, U>,
    p: Peeled<S, F>,
) -> Seq<'a, U>
where
    B: Backend,
    U: Clone + Send + Sync,
    S: Fn(usize, usize) -> I + Sync + Send,
    F: Fn(usize, usize) -> J + Sync + Send,
    I: Iterator<Item = U>,
    J: Iterator<Item = U>,
{
    if !p.is_empty() && spare.len() == p.len() && spare.is_unique() {
        B::refill(spare.make_mut(), |lo: usize, part: &mut [U]| {
            p.assign(site, lo, part)
        });
        spare
    } else {
        drop(spare);
        B::tabulate_peeled(site, p)
    }
}

/// `map2 f a b` written over `a` as [`map_owned`] writes over its sequence.
#[doc(hidden)]
pub fn map2_owned<'a, B, T, U, F>(site: &Site, mut a: Seq<'a, T>, b: &[U], f: F) -> Seq<'a, T>
where
    B: Backend,
    T: Clone + Send + Sync,
    U: Sync,
    F: Fn(&T, &U) -> T + Sync + Send,
{
    if a.is_unique() {
        B::update2(site, a.make_mut(), b, f);
        a
    } else {
        B::map2(site, &a, b, f)
    }
}

/// How a reduction of `n` elements whose functions have type `F` runs on `cpu`: `None` on the
/// calling thread as one fold, nested in a level that saturates the workers ([`nesting`]); else
/// its level over the chunks' partial results ([`reduced`]). A reduction too small for threads
/// still folds by the same chunks, on the calling thread (`granularity`'s sequential plan), so
/// that its result never depends on which plan a measure chose: floats are not associative.
#[inline]
fn reduction_level<F: ?Sized>(n: usize) -> Option<Level> {
    if nesting::saturated() {
        return None;
    }
    Some(Level::of::<F>(n.div_ceil(fill::grain(n))))
}

/// The `n` results of one parallel level, written in place (`fill::par_fill`), its tasks marked
/// when the level saturates the workers (see [`nesting`]).
fn level<U, F>(at: Level, n: usize, fill: F) -> Vec<U>
where
    U: Send,
    F: Fn(usize, &mut Slots<'_, U>) + Sync + Send,
{
    let grain = fill::grain(n);
    if nesting::saturates(n) {
        fill::par_fill(at, n, grain, nesting::Guard::new, fill)
    } else {
        fill::par_fill(at, n, grain, || (), fill)
    }
}

/// A reduction of `n` elements: `part(lo, hi, ne)` folds each chunk `lo..hi` in a plain loop
/// (the element function inlined), the chunks in parallel (`level`); then the chunks' results are combined in
/// order, so an associative `f` with neutral element `ne` gives the sequential result.
fn reduced<U, P, F>(at: Level, n: usize, ne: U, part: P, f: &F) -> U
where
    U: Clone + Send + Sync,
    P: Fn(usize, usize, U) -> U + Sync + Send,
    F: Fn(U, U) -> U,
{
    let grain = fill::grain(n);
    let chunks = n.div_ceil(grain);
    if at.sequential() {
        // The same chunks and the same combination, on this thread, without the partials'
        // buffer.
        let _task = nesting::saturates(chunks).then(nesting::Guard::new);
        let mut acc = ne.clone();
        for c in 0..chunks {
            let lo = c * grain;
            acc = f(acc, part(lo, (lo + grain).min(n), ne.clone()));
        }
        return acc;
    }
    let partials = level(at, chunks, |c, slots| {
        slots.fill_with(|k| {
            let lo = (c + k) * grain;
            part(lo, (lo + grain).min(n), ne.clone())
        })
    });
    partials.into_iter().fold(ne, f)
}

#[cold]
fn map2_lengths(site: &Site, a: usize, b: usize) -> ! {
    site.fail(format_args!(
        "map2 on sequences of different lengths ({a} and {b})"
    ))
}

/// The checks every target makes before a `hist`: the lengths. The number of bins is a count,
/// Rust's `0..k`: a negative one is no bins (every index is then outside and skipped).
fn hist_checks(site: &Site, k: i64, n: usize, nv: usize) -> usize {
    if n != nv {
        site.fail(format_args!(
            "hist with {n} indices but {nv} values (the sequences must have the same length)"
        ));
    }
    k.max(0) as usize
}

/// Combines the values `lo..hi` into `bins`, in order. Every value is computed, also one whose
/// index is out of range, so that the result and the failures are those of the materialized
/// sequences.
#[inline]
fn hist_into<T, I, V, F, II, VI>(bins: &mut [T], lo: usize, hi: usize, index: &I, value: &V, f: &F)
where
    T: Clone,
    I: Fn(usize, usize) -> II,
    V: Fn(usize, usize) -> VI,
    II: Iterator<Item = i64>,
    VI: Iterator<Item = T>,
    F: Fn(T, T) -> T,
{
    let k = bins.len() as u64;
    // `zip` takes the index before the value, as the sequences would be computed.
    for (i, v) in index(lo, hi).zip(value(lo, hi)) {
        // A negative index becomes a large unsigned one: one comparison checks both ends.
        if (i as u64) < k {
            let b = &mut bins[i as usize];
            *b = f(b.clone(), v);
        }
    }
}

macro_rules! sequential_backend {
    ($name:ident, $checks:expr) => {
        impl Backend for $name {
            const CHECKS: bool = $checks;
            const PARALLEL: bool = false;

            fn map<'a, T, U, F>(s: &[T], f: F) -> Seq<'a, U>
            where
                T: Sync,
                U: Send,
                F: Fn(&T) -> U + Sync + Send,
            {
                Seq::from_exact_iter(s.iter().map(f))
            }

            fn tabulate<'a, U, F>(n: i64, f: F) -> Seq<'a, U>
            where
                U: Send,
                F: Fn(i64) -> U + Sync + Send,
            {
                Seq::from_exact_iter((0..n.max(0)).map(f))
            }

            fn update<T, F>(s: &mut [T], f: F)
            where
                T: Send + Sync,
                F: Fn(&T) -> T + Sync + Send,
            {
                for x in s {
                    *x = f(x);
                }
            }

            fn refill<U, F>(s: &mut [U], fill: F)
            where
                U: Send + Sync,
                F: Fn(usize, &mut [U]) + Sync + Send,
            {
                fill(0, s);
            }

            fn update2<T, U, F>(site: &Site, a: &mut [T], b: &[U], f: F)
            where
                T: Send + Sync,
                U: Sync,
                F: Fn(&T, &U) -> T + Sync + Send,
            {
                if a.len() != b.len() {
                    map2_lengths(site, a.len(), b.len());
                }
                for (x, y) in a.iter_mut().zip(b) {
                    *x = f(x, y);
                }
            }

            fn tabulate_peeled<'a, U, S, F, I, J>(site: &Site, p: Peeled<S, F>) -> Seq<'a, U>
            where
                U: Send,
                S: Fn(usize, usize) -> I + Sync + Send,
                F: Fn(usize, usize) -> J + Sync + Send,
                I: Iterator<Item = U>,
                J: Iterator<Item = U>,
            {
                let (out, ()) = slots::filled(p.len(), |slots| p.fill(site, 0, slots));
                Seq::from_vec(out)
            }

            fn map2<'a, T, U, V, F>(site: &Site, a: &[T], b: &[U], f: F) -> Seq<'a, V>
            where
                T: Sync,
                U: Sync,
                V: Send,
                F: Fn(&T, &U) -> V + Sync + Send,
            {
                if a.len() != b.len() {
                    map2_lengths(site, a.len(), b.len());
                }
                Seq::from_exact_iter(a.iter().zip(b).map(|(x, y)| f(x, y)))
            }

            fn reduce<T, F>(site: &Site, op: &str, s: &[T], ne: T, f: F) -> T
            where
                T: Law + Clone + Send + Sync,
                F: Fn(T, T) -> T + Sync + Send,
            {
                if Self::CHECKS {
                    check_reduce(site, op, s, &ne, &f);
                }
                s.iter().cloned().fold(ne, f)
            }

            fn map_reduce<T, U, G, F>(site: &Site, op: &str, s: &[T], ne: U, g: G, f: F) -> U
            where
                T: Sync,
                U: Law + Clone + Send + Sync,
                G: Fn(&T) -> U + Sync + Send,
                F: Fn(U, U) -> U + Sync + Send,
            {
                if Self::CHECKS {
                    let mapped: Vec<U> = s.iter().map(&g).collect();
                    check_reduce(site, op, &mapped, &ne, &f);
                }
                s.iter().map(g).fold(ne, f)
            }

            fn tabulate_reduce<U, G, F>(site: &Site, op: &str, n: i64, ne: U, g: G, f: F) -> U
            where
                U: Law + Clone + Send + Sync,
                G: Fn(i64) -> U + Sync + Send,
                F: Fn(U, U) -> U + Sync + Send,
            {
                if Self::CHECKS {
                    let created: Vec<U> = (0..n).map(&g).collect();
                    check_reduce(site, op, &created, &ne, &f);
                }
                (0..n.max(0)).map(g).fold(ne, f)
            }

            fn map2_reduce<T, U, V, G, F>(
                site: &Site,
                op: &str,
                a: &[T],
                b: &[U],
                ne: V,
                g: G,
                f: F,
            ) -> V
            where
                T: Sync,
                U: Sync,
                V: Law + Clone + Send + Sync,
                G: Fn(&T, &U) -> V + Sync + Send,
                F: Fn(V, V) -> V + Sync + Send,
            {
                if a.len() != b.len() {
                    map2_lengths(site, a.len(), b.len());
                }
                if Self::CHECKS {
                    let mapped: Vec<V> = a.iter().zip(b).map(|(x, y)| g(x, y)).collect();
                    check_reduce(site, op, &mapped, &ne, &f);
                }
                a.iter().zip(b).map(|(x, y)| g(x, y)).fold(ne, f)
            }

            fn flatten<'a, T>(s: &[Seq<'a, T>]) -> Seq<'a, T>
            where
                T: Clone + Send + Sync,
            {
                crate::intrinsics::flatten(s)
            }

            fn hist<'a, T, I, V, F, II, VI>(
                site: &Site,
                op: &str,
                k: i64,
                ne: T,
                n: usize,
                nv: usize,
                index: I,
                value: V,
                f: F,
            ) -> Seq<'a, T>
            where
                T: Law + Clone + Send + Sync,
                I: Fn(usize, usize) -> II + Sync + Send,
                V: Fn(usize, usize) -> VI + Sync + Send,
                II: Iterator<Item = i64>,
                VI: Iterator<Item = T>,
                F: Fn(T, T) -> T + Sync + Send,
            {
                let k = hist_checks(site, k, n, nv);
                if Self::CHECKS {
                    // The laws on the values that land in a bin, computed in the order the
                    // other backends compute them, so that a failure in them is theirs.
                    let binned: Vec<T> = index(0, n)
                        .zip(value(0, n))
                        .filter_map(|(i, v)| usize::try_from(i).is_ok_and(|i| i < k).then_some(v))
                        .collect();
                    check_laws(site, "hist", op, &binned, &ne, &f);
                }
                let mut bins = vec![ne; k];
                hist_into(&mut bins, 0, n, &index, &value, &f);
                Seq::from_vec(bins)
            }

            fn scan<'a, T, R, I, F>(
                site: &Site,
                op: &str,
                n: usize,
                exact: bool,
                cheap: bool,
                ne: T,
                read: R,
                f: F,
            ) -> Seq<'a, T>
            where
                T: Law + Clone + Send + Sync,
                R: Fn(usize, usize) -> I + Sync + Send,
                I: Iterator<Item = T>,
                F: Fn(T, T) -> T + Sync + Send,
            {
                Self::scan_map(site, op, n, exact, cheap, ne, read, f, T::clone)
            }

            fn scan_map<'a, T, U, R, I, F, P>(
                site: &Site,
                op: &str,
                n: usize,
                _exact: bool,
                _cheap: bool,
                ne: T,
                read: R,
                f: F,
                post: P,
            ) -> Seq<'a, U>
            where
                T: Law + Clone + Send + Sync,
                U: Send,
                R: Fn(usize, usize) -> I + Sync + Send,
                I: Iterator<Item = T>,
                F: Fn(T, T) -> T + Sync + Send,
                P: Fn(&T) -> U + Sync + Send,
            {
                if Self::CHECKS {
                    let elements: Vec<T> = read(0, n).collect();
                    check_laws(site, "scan", op, &elements, &ne, &f);
                }
                Seq::from_vec(streams::scan_into(Vec::new(), ne, read(0, n), &f, &post).0)
            }

            fn filter<'a, T, R, I>(n: usize, read: R) -> Seq<'a, T>
            where
                T: Send,
                R: Fn(usize, usize) -> I + Sync + Send,
                I: Iterator<Item = T>,
            {
                Seq::from_vec(read(0, n).collect())
            }

            fn read_reduce<T, R, I, F>(site: &Site, op: &str, n: usize, ne: T, read: R, f: F) -> T
            where
                T: Law + Clone + Send + Sync,
                R: Fn(usize, usize) -> I + Sync + Send,
                I: Iterator<Item = T>,
                F: Fn(T, T) -> T + Sync + Send,
            {
                if Self::CHECKS {
                    let elements: Vec<T> = read(0, n).collect();
                    check_reduce(site, op, &elements, &ne, &f);
                }
                read(0, n).fold(ne, f)
            }

            fn scatter<'a, T, I, V, II, VI>(
                site: &Site,
                mut dest: Seq<'a, T>,
                n: usize,
                nv: usize,
                index: I,
                value: V,
            ) -> Seq<'a, T>
            where
                T: Clone + Send + Sync + OpenType,
                I: Fn(usize, usize) -> II + Sync + Send,
                V: Fn(usize, usize) -> VI + Sync + Send,
                II: Iterator<Item = i64>,
                VI: Iterator<Item = T>,
            {
                if $checks && n == nv {
                    check_scatter(site, dest.len(), index(0, n));
                }
                streams::scatter_checks(site, n, nv);
                streams::scatter_into(dest.make_mut(), 0, n, &index, &value);
                dest
            }

            fn par_loop<F>(n: i64, f: F)
            where
                F: Fn(i64) + Clone + Sync + Send,
            {
                if $checks {
                    // Debug mode: the tensor elements each iteration touches are recorded.
                    crate::races::tracked_par_loop(n, f)
                } else {
                    (0..n.max(0)).for_each(f)
                }
            }

            fn par_rows<F>(n: i64, w: i64, f: F)
            where
                F: Fn(i64, i64, i64) + Clone + Sync + Send,
            {
                rows_of(0, n, w, &f)
            }

            fn par_loop_peeled<S, F>(n: i64, a: i64, b: i64, slow: S, fast: F)
            where
                S: Fn(i64) + Clone + Sync + Send,
                F: Fn(usize, usize) + Clone + Sync + Send,
            {
                if $checks {
                    Self::par_loop(n, slow)
                } else {
                    crate::peeled::seq_loop_peeled(n, a, b, slow, fast)
                }
            }

            fn map_rows<'a, T, U, F>(s: &[T], w: usize, _cheap: bool, f: F) -> Seq<'a, Seq<'a, U>>
            where
                T: Sync,
                U: Scalar,
                F: Fn(&T, &mut RowOut<'_, U>) + Sync + Send,
            {
                let (buf, ()) = slots::filled(s.len() * w, |slots| {
                    for x in s {
                        slots.part(w, |row| RowOut::run(row, |row| f(x, row)))
                    }
                });
                Seq::rows(buf, s.len(), w)
            }
        }
    };
}

sequential_backend!(SeqBackend, false);
sequential_backend!(DebugBackend, true);

impl Backend for CpuBackend {
    const CHECKS: bool = false;
    const PARALLEL: bool = true;

    fn map<'a, T, U, F>(s: &[T], f: F) -> Seq<'a, U>
    where
        T: Sync,
        U: Send,
        F: Fn(&T) -> U + Sync + Send,
    {
        let Some(at) = parallel_level::<F>(s.len()) else {
            return SeqBackend::map(s, f);
        };
        let fill = |lo: usize, slots: &mut Slots<'_, U>| {
            slots.extend(s[lo..].iter().map(&f));
        };
        Seq::from_vec(level(at, s.len(), fill))
    }

    fn tabulate<'a, U, F>(n: i64, f: F) -> Seq<'a, U>
    where
        U: Send,
        F: Fn(i64) -> U + Sync + Send,
    {
        let Some(at) = parallel_level::<F>(n.max(0) as usize) else {
            return SeqBackend::tabulate(n, f);
        };
        let n = n.max(0) as usize;
        let fill = |lo: usize, slots: &mut Slots<'_, U>| {
            slots.fill_with(|k| f((lo + k) as i64));
        };
        Seq::from_vec(level(at, n, fill))
    }

    fn update<T, F>(s: &mut [T], f: F)
    where
        T: Send + Sync,
        F: Fn(&T) -> T + Sync + Send,
    {
        Self::refill(s, move |_, part: &mut [T]| {
            for x in part {
                *x = f(x);
            }
        });
    }

    fn refill<U, F>(s: &mut [U], fill: F)
    where
        U: Send + Sync,
        F: Fn(usize, &mut [U]) + Sync + Send,
    {
        let Some(at) = parallel_level::<F>(s.len()) else {
            return SeqBackend::refill(s, fill);
        };
        let (n, saturates) = (s.len(), nesting::saturates(s.len()));
        caller_runs::run_adaptive(Pool::Global, at, n, fill::grain(n), s, &|lo, _, part| {
            // As `level`'s tasks: the keywords inside run sequentially when this level
            // saturates the workers.
            let _task = saturates.then(nesting::Guard::new);
            fill(lo as usize, part);
        });
    }

    fn update2<T, U, F>(site: &Site, a: &mut [T], b: &[U], f: F)
    where
        T: Send + Sync,
        U: Sync,
        F: Fn(&T, &U) -> T + Sync + Send,
    {
        let Some(at) = parallel_level::<F>(a.len()) else {
            return SeqBackend::update2(site, a, b, f);
        };
        if a.len() != b.len() {
            map2_lengths(site, a.len(), b.len());
        }
        let (n, saturates) = (a.len(), nesting::saturates(a.len()));
        let body = |_, _, (xs, ys): (&mut [T], &[U])| {
            let _task = saturates.then(nesting::Guard::new);
            for (x, y) in xs.iter_mut().zip(ys) {
                *x = f(x, y);
            }
        };
        caller_runs::run_adaptive(Pool::Global, at, n, fill::grain(n), (a, b), &body);
    }

    fn tabulate_peeled<'a, U, S, F, I, J>(site: &Site, p: Peeled<S, F>) -> Seq<'a, U>
    where
        U: Send,
        S: Fn(usize, usize) -> I + Sync + Send,
        F: Fn(usize, usize) -> J + Sync + Send,
        I: Iterator<Item = U>,
        J: Iterator<Item = U>,
    {
        let Some(at) = parallel_level::<(S, F)>(p.len()) else {
            return SeqBackend::tabulate_peeled(site, p);
        };
        Seq::from_vec(level(at, p.len(), |lo, slots| p.fill(site, lo, slots)))
    }

    fn map2<'a, T, U, V, F>(site: &Site, a: &[T], b: &[U], f: F) -> Seq<'a, V>
    where
        T: Sync,
        U: Sync,
        V: Send,
        F: Fn(&T, &U) -> V + Sync + Send,
    {
        let Some(at) = parallel_level::<F>(a.len()) else {
            return SeqBackend::map2(site, a, b, f);
        };
        if a.len() != b.len() {
            map2_lengths(site, a.len(), b.len());
        }
        let fill = |lo: usize, slots: &mut Slots<'_, V>| {
            slots.extend(a[lo..].iter().zip(&b[lo..]).map(|(x, y)| f(x, y)));
        };
        Seq::from_vec(level(at, a.len(), fill))
    }

    fn reduce<T, F>(site: &Site, op: &str, s: &[T], ne: T, f: F) -> T
    where
        T: Law + Clone + Send + Sync,
        F: Fn(T, T) -> T + Sync + Send,
    {
        let Some(at) = reduction_level::<F>(s.len()) else {
            return SeqBackend::reduce(site, op, s, ne, f);
        };
        let part = |lo: usize, hi: usize, a| s[lo..hi].iter().cloned().fold(a, &f);
        reduced(at, s.len(), ne, part, &f)
    }

    fn map_reduce<T, U, G, F>(site: &Site, op: &str, s: &[T], ne: U, g: G, f: F) -> U
    where
        T: Sync,
        U: Law + Clone + Send + Sync,
        G: Fn(&T) -> U + Sync + Send,
        F: Fn(U, U) -> U + Sync + Send,
    {
        let Some(at) = reduction_level::<(G, F)>(s.len()) else {
            return SeqBackend::map_reduce(site, op, s, ne, g, f);
        };
        let part = |lo: usize, hi: usize, a| s[lo..hi].iter().map(&g).fold(a, &f);
        reduced(at, s.len(), ne, part, &f)
    }

    fn tabulate_reduce<U, G, F>(site: &Site, op: &str, n: i64, ne: U, g: G, f: F) -> U
    where
        U: Law + Clone + Send + Sync,
        G: Fn(i64) -> U + Sync + Send,
        F: Fn(U, U) -> U + Sync + Send,
    {
        let Some(at) = reduction_level::<(G, F)>(n.max(0) as usize) else {
            return SeqBackend::tabulate_reduce(site, op, n, ne, g, f);
        };
        let part = |lo: usize, hi: usize, a| (lo as i64..hi as i64).map(&g).fold(a, &f);
        reduced(at, n.max(0) as usize, ne, part, &f)
    }

    #[allow(clippy::too_many_arguments)]
    fn map2_reduce<T, U, V, G, F>(site: &Site, op: &str, a: &[T], b: &[U], ne: V, g: G, f: F) -> V
    where
        T: Sync,
        U: Sync,
        V: Law + Clone + Send + Sync,
        G: Fn(&T, &U) -> V + Sync + Send,
        F: Fn(V, V) -> V + Sync + Send,
    {
        let Some(at) = reduction_level::<(G, F)>(a.len()) else {
            return SeqBackend::map2_reduce(site, op, a, b, ne, g, f);
        };
        if a.len() != b.len() {
            map2_lengths(site, a.len(), b.len());
        }
        let part = |lo: usize, hi: usize, acc| {
            (a[lo..hi].iter().zip(&b[lo..hi]))
                .map(|(x, y)| g(x, y))
                .fold(acc, &f)
        };
        reduced(at, a.len(), ne, part, &f)
    }

    fn flatten<'a, T>(s: &[Seq<'a, T>]) -> Seq<'a, T>
    where
        T: Clone + Send + Sync,
    {
        if nesting::saturated() {
            return SeqBackend::flatten(s);
        }
        // One allocation of the exact length, each row cloned into its own part of it in
        // parallel (rayon's `collect` of a `flat_map` gathers per-task vectors and copies them
        // again).
        let lens: Vec<usize> = s.iter().map(|x| x.len()).collect();
        let rows: Vec<&Seq<'a, T>> = s.iter().collect();
        let grain = fill::grain(rows.len());
        let (out, _) = slots::par_filled_parts(
            &lens,
            rows,
            grain,
            || (),
            |_, x, part| {
                part.extend(x.iter().cloned());
            },
        );
        Seq::from_vec(out)
    }

    fn hist<'a, T, I, V, F, II, VI>(
        site: &Site,
        op: &str,
        k: i64,
        ne: T,
        n: usize,
        nv: usize,
        index: I,
        value: V,
        f: F,
    ) -> Seq<'a, T>
    where
        T: Law + Clone + Send + Sync,
        I: Fn(usize, usize) -> II + Sync + Send,
        V: Fn(usize, usize) -> VI + Sync + Send,
        II: Iterator<Item = i64>,
        VI: Iterator<Item = T>,
        F: Fn(T, T) -> T + Sync + Send,
    {
        if nesting::saturated() {
            return SeqBackend::hist(site, op, k, ne, n, nv, index, value, f);
        }
        let k = hist_checks(site, k, n, nv);
        // One private histogram per contiguous chunk of the input (one chunk per worker), merged
        // bin by bin in the order of the chunks: each bin then combines its values in input
        // order, so an associative `f` gives the sequential result. Filling and merging the
        // private histograms streams through memory while the updates are scattered, about ten
        // times dearer each: worth it unless the bins outnumber the values
        // (`policy::HIST_PRIVATE_BELOW_BINS_PER_VALUE`).
        let threads = crate::granularity::threads();
        let chunks = if n.saturating_mul(policy::HIST_PRIVATE_BELOW_BINS_PER_VALUE) >= k {
            threads.min(n).max(1)
        } else {
            1
        };
        if chunks == 1 {
            let mut bins = vec![ne; k];
            hist_into(&mut bins, 0, n, &index, &value, &f);
            return Seq::from_vec(bins);
        }
        let per = n.div_ceil(chunks);
        // One task per worker: what it runs inside is sequential.
        let mut partial: Vec<Vec<T>> = fill::par_fill(
            Level::parallel(),
            chunks,
            1,
            nesting::Guard::new,
            |c, slots| {
                slots.fill_with(|d| {
                    let c = c + d;
                    let mut bins = vec![ne.clone(); k];
                    // With more workers than values per worker, the last chunks may be empty.
                    let (lo, hi) = ((c * per).min(n), ((c + 1) * per).min(n));
                    hist_into(&mut bins, lo, hi, &index, &value, &f);
                    bins
                })
            },
        );
        let rest = partial.split_off(1);
        let mut bins = partial.pop().expect("at least two chunks");
        let grain =
            (k / (threads * policy::HIST_MERGE_CHUNKS_PER_THREAD)).max(policy::HIST_MERGE_MIN_BINS);
        // One partial histogram at a time over the whole chunk: each bin still combines the
        // partials in chunk order, and the loop over the bins is one that vectorizes.
        let merge = |lo: usize, out: &mut [T]| {
            for p in &rest {
                let len = out.len();
                for (x, y) in out.iter_mut().zip(&p[lo..lo + len]) {
                    *x = f(x.clone(), y.clone());
                }
            }
        };
        caller_runs::run(Pool::Global, k, grain, &mut bins[..], &|lo, _, out| {
            merge(lo as usize, out)
        });
        Seq::from_vec(bins)
    }

    #[allow(clippy::too_many_arguments)]
    fn scan<'a, T, R, I, F>(
        site: &Site,
        op: &str,
        n: usize,
        exact: bool,
        cheap: bool,
        ne: T,
        read: R,
        f: F,
    ) -> Seq<'a, T>
    where
        T: Law + Clone + Send + Sync,
        R: Fn(usize, usize) -> I + Sync + Send,
        I: Iterator<Item = T>,
        F: Fn(T, T) -> T + Sync + Send,
    {
        if streams::sequential(n) {
            return SeqBackend::scan(site, op, n, exact, cheap, ne, read, f);
        }
        Seq::from_vec(streams::par_scan_in_place(
            n,
            fill::grain(n),
            exact,
            cheap,
            ne,
            &read,
            &f,
        ))
    }

    fn scan_map<'a, T, U, R, I, F, P>(
        site: &Site,
        op: &str,
        n: usize,
        exact: bool,
        cheap: bool,
        ne: T,
        read: R,
        f: F,
        post: P,
    ) -> Seq<'a, U>
    where
        T: Law + Clone + Send + Sync,
        U: Send,
        R: Fn(usize, usize) -> I + Sync + Send,
        I: Iterator<Item = T>,
        F: Fn(T, T) -> T + Sync + Send,
        P: Fn(&T) -> U + Sync + Send,
    {
        if streams::sequential(n) {
            return SeqBackend::scan_map(site, op, n, exact, cheap, ne, read, f, post);
        }
        Seq::from_vec(streams::par_scan(
            n,
            fill::grain(n),
            exact,
            cheap,
            ne,
            &read,
            &f,
            &post,
        ))
    }

    fn filter<'a, T, R, I>(n: usize, read: R) -> Seq<'a, T>
    where
        T: Send,
        R: Fn(usize, usize) -> I + Sync + Send,
        I: Iterator<Item = T>,
    {
        if streams::sequential(n) {
            return SeqBackend::filter(n, read);
        }
        Seq::from_vec(streams::par_filter(n, fill::grain(n), &read))
    }

    fn read_reduce<T, R, I, F>(site: &Site, op: &str, n: usize, ne: T, read: R, f: F) -> T
    where
        T: Law + Clone + Send + Sync,
        R: Fn(usize, usize) -> I + Sync + Send,
        I: Iterator<Item = T>,
        F: Fn(T, T) -> T + Sync + Send,
    {
        let Some(at) = reduction_level::<(R, F)>(n) else {
            return SeqBackend::read_reduce(site, op, n, ne, read, f);
        };
        let part = |lo: usize, hi: usize, a| read(lo, hi).fold(a, &f);
        reduced(at, n, ne, part, &f)
    }

    fn scatter<'a, T, I, V, II, VI>(
        site: &Site,
        dest: Seq<'a, T>,
        n: usize,
        nv: usize,
        index: I,
        value: V,
    ) -> Seq<'a, T>
    where
        T: Clone + Send + Sync + OpenType,
        I: Fn(usize, usize) -> II + Sync + Send,
        V: Fn(usize, usize) -> VI + Sync + Send,
        II: Iterator<Item = i64>,
        VI: Iterator<Item = T>,
    {
        if streams::sequential(n) {
            return SeqBackend::scatter(site, dest, n, nv, index, value);
        }
        streams::scatter_checks(site, n, nv);
        let mut out = streams::owned(dest);
        match T::which() {
            Some(w) => streams::par_scatter(w, &mut out, n, fill::grain(n), &index, &value),
            // Values that are not numbers cannot be stored atomically: written in order.
            None => streams::scatter_into(&mut out, 0, n, &index, &value),
        }
        Seq::from_vec(out)
    }

    fn par_loop_peeled<S, F>(n: i64, a: i64, b: i64, slow: S, fast: F)
    where
        S: Fn(i64) + Clone + Sync + Send,
        F: Fn(usize, usize) + Clone + Sync + Send,
    {
        if nesting::saturated() {
            return SeqBackend::par_loop_peeled(n, a, b, slow, fast);
        }
        let (a, b) = peeled::bounds(n.max(0) as usize, a, b);
        in_chunks(n, |lo, hi| {
            let (slow, fast) = (slow.clone(), fast.clone());
            let [x, y, z] = peeled::parts(a, b, lo as usize, hi as usize);
            for i in x {
                slow(i as i64)
            }
            fast(y.start, y.end);
            for i in z {
                slow(i as i64)
            }
        })
    }

    fn par_loop<F>(n: i64, f: F)
    where
        F: Fn(i64) + Clone + Sync + Send,
    {
        // Each task runs a contiguous chunk in a plain loop, so that the body is inlined into it
        // (rayon calls a per-item closure through a reference and does not inline it).
        if nesting::saturated() {
            return SeqBackend::par_loop(n, f);
        }
        in_chunks(n, |lo, hi| {
            // A local copy of the body (generated bodies are `move` closures over references and
            // `Copy` values) lets the compiler keep what it captures in registers.
            let f = f.clone();
            for i in lo..hi {
                f(i)
            }
        })
    }

    fn map_rows<'a, T, U, F>(s: &[T], w: usize, cheap: bool, f: F) -> Seq<'a, Seq<'a, U>>
    where
        T: Sync,
        U: Scalar,
        F: Fn(&T, &mut RowOut<'_, U>) + Sync + Send,
    {
        let small = cheap && s.len().saturating_mul(w) < CHEAP_ROWS_SEQUENTIAL_BELOW;
        let at = parallel_level::<F>(s.len()).filter(|_| w != 0 && !small);
        let Some(at) = at else {
            return SeqBackend::map_rows(s, w, cheap, f);
        };
        let (n, saturates) = (s.len(), nesting::saturates(s.len()));
        let task = || saturates.then(nesting::Guard::new);
        let buf = slots::par_filled(
            Pool::Global,
            at,
            n,
            w,
            fill::grain(n),
            task,
            |lo, len, rows| {
                for x in &s[lo..lo + len] {
                    rows.part(w, |row| RowOut::run(row, |row| f(x, row)))
                }
            },
        );
        Seq::rows(buf, s.len(), w)
    }

    fn par_rows<F>(n: i64, w: i64, f: F)
    where
        F: Fn(i64, i64, i64) + Clone + Sync + Send,
    {
        // The chunks of `par_loop`, each run as its row segments.
        if nesting::saturated() {
            return rows_of(0, n, w, &f);
        }
        in_chunks(n, |lo, hi| rows_of(lo, hi, w, &f.clone()))
    }
}

/// `run(lo, hi)` for the contiguous chunks that cover `0..n` (`n <= 0`: none), in parallel.
/// [`policy::CHUNKS_PER_THREAD`] chunks per thread leave work stealing room to balance uneven
/// iterations; a level of enough chunks marks its tasks saturated (see [`nesting`]).
fn in_chunks(n: i64, run: impl Fn(i64, i64) + Sync) {
    let n = n.max(0);
    let threads = crate::granularity::threads() as i64;
    let chunk = (n / (threads * policy::CHUNKS_PER_THREAD as i64)).max(1);
    let chunks = (n + chunk - 1) / chunk;
    caller_runs::run(
        Pool::Global,
        n as usize,
        chunk as usize,
        (),
        &|lo, len, ()| {
            let saturating = policy::SATURATING_TASKS_PER_THREAD as i64 * threads;
            let _nested = (chunks >= saturating).then(nesting::Guard::new);
            run(lo, lo + len as i64)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    const SITE: Site = Site::new("b.rs", 1, 1);

    fn keywords<B: Backend>() -> (Vec<i64>, Vec<i64>, i64, i64, i64) {
        let s: Vec<i64> = (1..=1000).collect();
        let m = B::map(&s, |x| x * 2).into_vec();
        assert_eq!(B::tabulate(1000, |j| (j + 1) * 2).into_vec(), m);
        assert!(B::tabulate(0, |j| j).is_empty());
        let m2 = B::map2(&SITE, &s, &m, |x, y| x + y).into_vec();
        let r = B::reduce(&SITE, "add", &s, 0, |a, b| a + b);
        let mr = B::map_reduce(&SITE, "add", &s, 0, |x| x * x, |a, b| a + b);
        assert_eq!(
            B::map2_reduce(&SITE, "add", &s, &s, 0, |x, y| x * y, |a, b| a + b),
            mr
        );
        let nested = vec![
            Seq::from_vec(vec![1_i64, 2]),
            Seq::empty(),
            Seq::from_vec(vec![3]),
        ];
        assert_eq!(&*B::flatten(&nested), &[1, 2, 3]);
        let hits = AtomicI64::new(0);
        B::par_loop(100, |i| {
            hits.fetch_add(i, Ordering::Relaxed);
        });
        (m, m2, r, mr, hits.into_inner())
    }

    /// A float reduction gives the same bits whichever plan granularity picks for a call (on
    /// the calling thread or on the pool): the same chunks, combined in the same order.
    #[test]
    fn a_float_reduction_does_not_depend_on_its_plan() {
        let s: Vec<f64> = (0..300)
            .map(|i| ((i * 7919) % 1000) as f64 / 7.0 * 10f64.powi(i % 7))
            .collect();
        let grain = fill::grain(s.len());
        let want = s
            .chunks(grain)
            .map(|c| c.iter().fold(0.0, |a, b| a + b))
            .fold(0.0, |a, b| a + b);
        let one_fold = s.iter().fold(0.0, |a, b| a + b);
        assert_ne!(
            want.to_bits(),
            one_fold.to_bits(),
            "the chunks must matter here"
        );
        for _ in 0..500 {
            let got = CpuBackend::reduce(&SITE, "add", &s, 0.0, |a, b| a + b);
            assert_eq!(got.to_bits(), want.to_bits());
        }
    }

    /// Granularity on `cpu`: a keyword over a few cheap elements runs on the calling thread,
    /// every call; one whose elements take long still spreads over the workers.
    #[test]
    fn small_levels_stay_on_the_calling_thread_and_large_ones_do_not() {
        let me = std::thread::current().id();
        // A probe that this thread's descheduling (other tests run beside) stretched past the
        // threshold sends a few calls to the pool: most calls, not all, stay here.
        let mut stayed = 0;
        for _ in 0..1000 {
            let ids = CpuBackend::tabulate(5, |_| std::thread::current().id());
            stayed += usize::from(ids.iter().all(|&id| id == me));
            let sum = CpuBackend::reduce(&SITE, "add", &[1_i64, 2, 3, 4, 5], 0, |a, b| a + b);
            assert_eq!(sum, 15);
        }
        assert!(
            stayed >= 900,
            "only {stayed} of 1000 5-element creates stayed on the thread"
        );
        if crate::granularity::threads() < 2 {
            println!("skipped: the large level's spread needs two threads (rayon has one here)");
            return;
        }
        let slow = |_: i64| {
            std::thread::sleep(std::time::Duration::from_micros(200));
            std::thread::current().id()
        };
        let ids = CpuBackend::tabulate(200, slow);
        assert!(
            ids.iter().any(|&id| id != me),
            "200 elements of 200 µs each ran on one thread"
        );
    }

    /// `create` on the sequential backend and, past the parallel threshold, on `cpu`; a negative
    /// length fails at the site on both.
    #[test]
    fn create_on_each_backend() {
        assert_eq!(
            &*create::<SeqBackend, _, _>(&SITE, 3, |i| i * i),
            &[0, 1, 4]
        );
        let big = create::<CpuBackend, _, _>(&SITE, 10_001, |i| i * i);
        assert_eq!(big.len(), 10_001);
        assert!(big.iter().enumerate().all(|(i, &x)| x == (i * i) as i64));
        // A negative count is Rust's empty `0..n`, and `f` is never called.
        for n in [-1, i64::MIN] {
            assert!(create::<CpuBackend, i64, _>(&SITE, n, |_| panic!("no element")).is_empty());
            assert!(create::<SeqBackend, i64, _>(&SITE, n, |_| panic!("no element")).is_empty());
            assert!(create::<DebugBackend, i64, _>(&SITE, n, |_| panic!("no element")).is_empty());
        }
    }

    #[test]
    fn backends_agree() {
        let seq = keywords::<SeqBackend>();
        assert_eq!(seq.2, 500_500);
        assert_eq!(seq.4, 4950);
        assert_eq!(keywords::<CpuBackend>(), seq);
        assert_eq!(keywords::<DebugBackend>(), seq);
    }

    #[test]
    fn flatten_clones_every_row_in_order() {
        // Irregular and empty rows, many of them, of numbers and of sequences (`Clone`, not
        // `Copy`).
        let rows: Vec<Seq<'static, i64>> = (0..300_i64)
            .map(|r| Seq::from_vec((0..(r * 7) % 13).map(|c| r * 100 + c).collect()))
            .collect();
        let want: Vec<i64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        assert_eq!(&*CpuBackend::flatten(&rows), &want[..]);
        assert_eq!(&*SeqBackend::flatten(&rows), &want[..]);
        let nested: Vec<Seq<'static, Seq<'static, i64>>> = (0..50)
            .map(|r| Seq::from_vec(rows[r..r + (r % 4)].to_vec()))
            .collect();
        let got = CpuBackend::flatten(&nested);
        let want: Vec<Vec<i64>> = nested
            .iter()
            .flat_map(|r| r.iter().map(|x| x.to_vec()))
            .collect();
        assert_eq!(got.iter().map(|x| x.to_vec()).collect::<Vec<_>>(), want);
        assert!(CpuBackend::flatten::<i64>(&[]).is_empty());
    }

    /// Every index once, segments within one row, with its column, for widths below, at and above the chunk
    /// sizes, on every backend.
    #[test]
    fn par_rows_cover_every_index_once_with_its_row_and_column() {
        fn check<B: Backend>(n: i64, w: i64) {
            let seen: Vec<AtomicI64> = (0..n.max(0)).map(|_| AtomicI64::new(0)).collect();
            B::par_rows(n, w, |k0, j0, j1| {
                assert!(0 <= j0 && j0 < j1 && j1 <= w, "segment {j0}..{j1} of {w}");
                for j in j0..j1 {
                    let k = k0 + (j - j0);
                    assert_eq!((k0 / w, j), (k / w, k % w), "k = {k}");
                    seen[k as usize].fetch_add(1, Ordering::Relaxed);
                }
            });
            assert!(
                seen.iter().all(|c| c.load(Ordering::Relaxed) == 1),
                "n={n} w={w}"
            );
        }
        for (n, w) in [
            (0, 3),
            (-5, 2),
            (1, 1),
            (7, 3),
            (1000, 7),
            (1000, 1000),
            (999, 2000),
            (4096, 64),
        ] {
            check::<SeqBackend>(n, w);
            check::<DebugBackend>(n, w);
            check::<CpuBackend>(n, w);
        }
    }

    #[test]
    fn par_loop_with_negative_count_does_nothing() {
        CpuBackend::par_loop(-3, |_| panic!("no iteration"));
        SeqBackend::par_loop(-3, |_| panic!("no iteration"));
    }

    /// Which iterations of a peeled loop ran through `slow` (1) and `fast` (2), each once.
    fn peeled_runs<B: Backend>(n: i64, a: i64, b: i64) -> Vec<i64> {
        let ran: Vec<AtomicI64> = (0..n.max(0)).map(|_| AtomicI64::new(0)).collect();
        let ran = &ran;
        B::par_loop_peeled(
            n,
            a,
            b,
            move |i| {
                ran[i as usize].fetch_add(1, Ordering::Relaxed);
            },
            move |lo, hi| {
                for r in &ran[lo..hi] {
                    r.fetch_add(2, Ordering::Relaxed);
                }
            },
        );
        ran.iter().map(|r| r.load(Ordering::Relaxed)).collect()
    }

    #[test]
    fn a_peeled_loop_runs_every_iteration_once_through_the_right_body() {
        for (n, a, b) in [
            (0, 0, 0),
            (-2, 0, 5),
            (10, 1, 9),
            (10, -4, 40),
            (10, 7, 3),
            (5000, 2, 4990),
        ] {
            let want: Vec<i64> = (0..n.max(0))
                .map(|i| if i >= a.max(0) && i < b.min(n) { 2 } else { 1 })
                .collect();
            assert_eq!(peeled_runs::<SeqBackend>(n, a, b), want, "{n} {a} {b}");
            assert_eq!(peeled_runs::<CpuBackend>(n, a, b), want, "{n} {a} {b}");
            // Debug mode records each iteration's accesses: all through `slow`.
            let all_slow = vec![1; n.max(0) as usize];
            assert_eq!(
                peeled_runs::<DebugBackend>(n, a, b),
                all_slow,
                "{n} {a} {b}"
            );
        }
        let acc = crate::peeled::seq_loop_acc_peeled(
            Vec::new(),
            6,
            2,
            4,
            |mut v: Vec<i64>, i| {
                v.push(i);
                v
            },
            |mut v, lo, hi| {
                v.extend((lo..hi).map(|i| 100 + i as i64));
                v
            },
        );
        assert_eq!(acc, [0, 1, 102, 103, 4, 5]);
        let order = std::cell::RefCell::new(Vec::new());
        crate::peeled::seq_loop_peeled(
            5,
            3,
            9,
            |i| order.borrow_mut().push(i),
            |lo, hi| order.borrow_mut().push(100 * (lo + hi) as i64),
        );
        assert_eq!(order.into_inner(), [0, 1, 2, 800]);
    }

    #[test]
    fn map2_checks_lengths() {
        let r = std::panic::catch_unwind(|| {
            CpuBackend::map2(&SITE, &[1_i64], &[1_i64, 2], |a, b| a + b)
        });
        let msg = r.unwrap_err().downcast_ref::<String>().cloned().unwrap();
        assert!(
            msg.contains("map2 on sequences of different lengths (1 and 2)"),
            "{msg}"
        );
    }

    fn hist_of<B: Backend>(n: usize, k: i64) -> (Vec<i64>, Vec<i64>) {
        // Indices out of range (negative, k and beyond) are skipped.
        let index = |lo: usize, hi: usize| (lo..hi).map(move |j| (j as i64 * 7919) % (k + 3) - 1);
        let value = |lo: usize, hi: usize| (lo..hi).map(|j| j as i64);
        let sum = B::hist(&SITE, "add", k, 0, n, n, index, value, |a, b| a + b).into_vec();
        // "The first value": associative, not commutative, so merging out of order shows.
        let first = B::hist(&SITE, "first", k, -1, n, n, index, value, |a, b| {
            if a == -1 { b } else { a }
        })
        .into_vec();
        (sum, first)
    }

    #[test]
    fn hist_backends_agree_and_keep_order() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for (n, k) in [
            (0, 0),
            (0, 5),
            (10, 0),
            (10, 3),
            (100_000, 17),
            (5000, 4000),
        ] {
            let seq = hist_of::<SeqBackend>(n, k);
            assert_eq!(seq.0.len(), k as usize);
            let expected: i64 = (0..n as i64)
                .filter(|&j| (0..k).contains(&((j * 7919) % (k + 3) - 1)))
                .sum();
            assert_eq!(seq.0.iter().sum::<i64>(), expected);
            assert_eq!(
                pool.install(|| hist_of::<CpuBackend>(n, k)),
                seq,
                "n={n} k={k}"
            );
            assert_eq!(hist_of::<DebugBackend>(n, k), seq);
        }
    }

    #[test]
    fn hist_checks_bins_and_lengths() {
        let none = CpuBackend::hist(
            &SITE,
            "add",
            -1,
            0_i64,
            2,
            2,
            |lo, hi| (lo..hi).map(|j| j as i64),
            |lo, hi| (lo..hi).map(|_| 1),
            |a, b| a + b,
        );
        assert!(none.is_empty(), "a negative number of bins is none");
        let r = std::panic::catch_unwind(|| {
            CpuBackend::hist(
                &SITE,
                "add",
                3,
                0_i64,
                2,
                1,
                |lo, hi| (lo..hi).map(|j| j as i64),
                |lo, hi| (lo..hi).map(|_| 1),
                |a, b| a + b,
            )
        });
        let msg = r.unwrap_err().downcast_ref::<String>().cloned().unwrap();
        assert!(
            msg.contains("hist with 2 indices but 1 values") && msg.contains("b.rs:1:1"),
            "{msg}"
        );
    }

    #[test]
    fn keywords_nested_in_a_saturated_level_run_in_order() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let outer: Vec<i64> = (0..64).collect();
        let orders = pool.install(|| {
            CpuBackend::map(&outer, |_| {
                let seen = std::sync::Mutex::new(Vec::new());
                CpuBackend::par_loop(1000, |i| seen.lock().unwrap().push(i));
                let seen = seen.into_inner().unwrap();
                seen.windows(2).all(|w| w[0] < w[1]) && seen.len() == 1000
            })
            .into_vec()
        });
        assert!(orders.iter().all(|&in_order| in_order));
        // The flag does not outlive the level: a top-level loop is parallel again (it runs all
        // iterations either way).
        assert!(!nesting::saturated());
    }
}
