//! Debug mode's checks of what the parallel backends assume beyond the paper's runtime checks:
//!
//! - **`par_loop` iterations are independent.** While a `par_loop` runs under the debug backend,
//!   every tensor element an iteration reads or writes is recorded (by its address, so views made
//!   with `tensor_sub`/`tensor_slice` count as the tensor they view). Two iterations writing one
//!   element, or one iteration reading an element that another writes, fail at the site with the
//!   tensor, the element and the two iterations. Nested `par_loop`s are checked at every level.
//!   Cost: one hash-map entry per element touched, for the duration of the loop.
//! - **`reduce`'s operator is associative with its neutral element** (and `hist`'s and `scan`'s,
//!   which the messages name). Checked on the actual
//!   elements before the reduction: every element `x` against the neutral element on both sides
//!   (`f(ne, x) = x = f(x, ne)`); associativity, `f(f(a, b), c) = f(a, f(b, c))`, on every
//!   consecutive triple `s[3k], s[3k+1], s[3k+2]` and on `n` more triples drawn with a fixed-seed
//!   generator (with repetition, so that one- and two-element sequences are checked too). Checking
//!   all n³ triples would change the complexity; this sample costs about 6n calls of the operator
//!   in all, a constant factor over the reduction. Floats compare within a relative 1e-9 (`f64`)
//!   or 1e-5 (`f32`, whose rounding step is about 6e-8) of the largest magnitude involved, since a
//!   parallel sum rounds differently by design.
//!
//! - **`scatter` writes each element once.** The indices that fall inside the destination are
//!   checked to be distinct before the values are written (one hash-map entry per index).
//!
//! The checks run only under the debug backend (`Backend::CHECKS`), which generated code tests
//! with a constant (in [`crate::reductions`] and the tensor accessors here): the other backends
//! carry no trace of them.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::func::Func;
use crate::seq::Seq;
use crate::site::Site;
use crate::tensor::{Element, TensorRef};

/// A value whose equality `reduce`'s law checks can test: exact for integers and `bool`, within a
/// relative tolerance for floats, field by field and element by element for records and
/// sequences. Tensors and functions are not compared (always equal).
#[doc(hidden)]
pub trait Law {
    /// Whether `self` and `other` are the same value; `scale` is the largest magnitude among the
    /// values that produced them (floats compare relative to it).
    fn same(&self, other: &Self, scale: f64) -> bool;
    /// The largest magnitude of a float in the value (0 where there is none).
    fn magnitude(&self) -> f64;
    /// The value as a failure message shows it.
    fn show(&self) -> String;
}

macro_rules! exact {
    ($($t:ty),*) => {$(
        impl Law for $t {
            #[inline]
            fn same(&self, other: &Self, _: f64) -> bool { self == other }
            #[inline]
            fn magnitude(&self) -> f64 { 0.0 }
            fn show(&self) -> String { format!("{self:?}") }
        }
    )*};
}
exact!(i64, i32, bool, i8, i16, isize, u8, u16, u32, u64, usize, ());

macro_rules! float {
    ($($t:ty: $tol:expr),*) => {$(
        impl Law for $t {
            #[inline]
            fn same(&self, other: &Self, scale: f64) -> bool {
                let (a, b) = (f64::from(*self), f64::from(*other));
                a == b
                    || (a.is_nan() && b.is_nan())
                    || (a - b).abs() <= $tol * scale.max(a.abs()).max(b.abs())
            }
            #[inline]
            fn magnitude(&self) -> f64 {
                let m = f64::from(*self).abs();
                if m.is_finite() { m } else { 0.0 }
            }
            fn show(&self) -> String { format!("{self:?}") }
        }
    )*};
}
float!(f64: 1e-9, f32: 1e-5);

macro_rules! tuple {
    ($(($($t:ident $n:tt $_c:ident $_r:ident),+))*) => {$(
        impl<$($t: Law),+> Law for ($($t,)+) {
            fn same(&self, other: &Self, scale: f64) -> bool {
                true $(&& self.$n.same(&other.$n, scale))+
            }
            fn magnitude(&self) -> f64 {
                0.0_f64 $(.max(self.$n.magnitude()))+
            }
            fn show(&self) -> String {
                let fields: Vec<String> = vec![$(self.$n.show()),+];
                if fields.len() == 1 {
                    format!("({},)", fields[0])
                } else {
                    format!("({})", fields.join(", "))
                }
            }
        }
    )*};
}
for_tuples!(tuple);

impl<T: Law> Law for Seq<'_, T> {
    fn same(&self, other: &Self, scale: f64) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a.same(b, scale))
    }
    fn magnitude(&self) -> f64 {
        self.iter().map(Law::magnitude).fold(0.0, f64::max)
    }
    fn show(&self) -> String {
        const SHOWN: usize = 8;
        let mut parts: Vec<String> = self.iter().take(SHOWN).map(Law::show).collect();
        if self.len() > SHOWN {
            parts.push(format!("… ({} elements)", self.len()));
        }
        format!("[{}]", parts.join(", "))
    }
}

impl<T: Element> Law for TensorRef<'_, T> {
    fn same(&self, _: &Self, _: f64) -> bool {
        true
    }
    fn magnitude(&self) -> f64 {
        0.0
    }
    fn show(&self) -> String {
        format!("a tensor of shape {:?}", self.shape())
    }
}

impl<A, B> Law for Func<'_, A, B> {
    fn same(&self, _: &Self, _: f64) -> bool {
        true
    }
    fn magnitude(&self) -> f64 {
        0.0
    }
    fn show(&self) -> String {
        "a function".into()
    }
}

/// Checks `reduce`'s assumptions on the elements `s` it is about to reduce with `f` and `ne` (see
/// the module documentation for what is sampled); fails at `site` naming the operator `op`, the
/// elements (by position) and the values that break the law.
#[doc(hidden)]
pub fn check_reduce<T, F>(site: &Site, op: &str, s: &[T], ne: &T, f: &F)
where
    T: Law + Clone,
    F: Fn(T, T) -> T,
{
    check_laws(site, "reduce", op, s, ne, f)
}

/// [`check_reduce`] for the keyword `keyword` (`reduce` or `hist`), which its messages name.
pub(crate) fn check_laws<T, F>(site: &Site, keyword: &str, op: &str, s: &[T], ne: &T, f: &F)
where
    T: Law + Clone,
    F: Fn(T, T) -> T,
{
    let call = |a: &T, b: &T| f(a.clone(), b.clone());
    for (i, x) in s.iter().enumerate() {
        let scale = x.magnitude().max(ne.magnitude());
        for (left, r) in [(true, call(ne, x)), (false, call(x, ne))] {
            if !r.same(x, scale) {
                let shown = if left {
                    format!("f({}, {})", ne.show(), x.show())
                } else {
                    format!("f({}, {})", x.show(), ne.show())
                };
                site.fail(format_args!(
                    "`{keyword}` assumes that {} is a neutral element of {op}, but it is not for element {i}: with f = {op}, {shown} is {}, not {} (backends that reduce in parallel use the neutral element once per chunk, so the result would depend on the backend)",
                    ne.show(),
                    r.show(),
                    x.show()
                ));
            }
        }
    }
    let n = s.len();
    let triple = |i: usize, j: usize, k: usize| {
        let (a, b, c) = (&s[i], &s[j], &s[k]);
        let left = call(&call(a, b), c);
        let right = call(a, &call(b, c));
        let scale = a.magnitude().max(b.magnitude()).max(c.magnitude());
        if !left.same(&right, scale) {
            site.fail(format_args!(
                "`{keyword}` assumes that {op} is associative, but it is not on elements {i}, {j} and {k} (a, b, c = {}, {}, {}): with f = {op}, f(f(a, b), c) is {} but f(a, f(b, c)) is {} (backends that reduce in parallel group the elements differently, so the result would depend on the backend)",
                a.show(),
                b.show(),
                c.show(),
                left.show(),
                right.show()
            ));
        }
    };
    for k in 0..n / 3 {
        triple(3 * k, 3 * k + 1, 3 * k + 2);
    }
    // A fixed-seed xorshift: the same triples on every run, so that a failure reproduces.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ n as u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for i in 0..n {
        let (j, k) = (next(), next());
        triple(i, j, k);
    }
}

/// Checks that no two of `indices` (in order) are the same position of a destination of `len`
/// elements (indices outside it are skipped, as `scatter` skips them); fails at `site` naming the
/// two positions and the element.
#[doc(hidden)]
pub fn check_scatter(site: &Site, len: usize, indices: impl Iterator<Item = i64>) {
    let mut first: HashMap<i64, usize> = HashMap::new();
    for (j, i) in indices.enumerate() {
        if !(0..len as i64).contains(&i) {
            continue;
        }
        if let Some(&before) = first.get(&i) {
            site.fail(format_args!(
                "write conflict in `scatter`: positions {before} and {j} of the indices both write element {i} of the destination (a `scatter` may write its elements in any order, in parallel, so each element may be written by one position only)"
            ));
        }
        first.insert(i, j);
    }
}

/// No iteration (iterations are `0..n`, never negative).
const NONE: i64 = -1;

/// What iterations of one running `par_loop` did to one tensor element (24 bytes: debug mode
/// keeps one per element touched).
struct Touched {
    writer: i64,
    /// Up to two distinct reading iterations: enough to find one that differs from a writer.
    readers: [i64; 2],
}

impl Default for Touched {
    fn default() -> Self {
        Touched {
            writer: NONE,
            readers: [NONE; 2],
        }
    }
}

/// One running `par_loop` under the debug backend.
struct Loop {
    iteration: i64,
    elements: HashMap<usize, Touched>,
}

thread_local! {
    /// The `par_loop`s running on this thread under the debug backend, innermost last.
    static LOOPS: RefCell<Vec<Loop>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f(i)` for `i` in `0..n` in order, recording the tensor elements each iteration touches
/// (the debug backend's `par_loop`).
pub(crate) fn tracked_par_loop(n: i64, f: impl Fn(i64)) {
    /// Ends the loop's record also when an iteration fails, so that a caught failure does not
    /// leave it to the next loop on this thread.
    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            LOOPS.with(|l| l.borrow_mut().pop());
        }
    }
    LOOPS.with(|l| {
        l.borrow_mut().push(Loop {
            iteration: 0,
            elements: HashMap::new(),
        })
    });
    let _guard = Guard;
    for i in 0..n.max(0) {
        LOOPS.with(|l| {
            if let Some(top) = l.borrow_mut().last_mut() {
                top.iteration = i;
            }
        });
        f(i);
    }
}

/// Records a read (`write` false) or write of the element of `tensor` at `index` (a full index,
/// or a linear position with `linear`) by the running `par_loop` iterations, and fails at `site`
/// when another iteration of one of those loops wrote it, or (for a write) read it. Bounds are
/// checked as the access itself checks them.
#[doc(hidden)]
pub fn track<T: Element>(
    site: &Site,
    tensor: &str,
    t: &TensorRef<'_, T>,
    index: &[i64],
    linear: bool,
    write: bool,
) {
    if LOOPS.with(|l| l.borrow().is_empty()) {
        return;
    }
    let key = if linear {
        t.linear_address(site, index[0])
    } else {
        t.address(site, index)
    };
    let conflict = LOOPS.with(|l| {
        let mut loops = l.borrow_mut();
        // Innermost first: its iterations are the ones that differ by the least.
        for lp in loops.iter_mut().rev() {
            let me = lp.iteration;
            let e = lp.elements.entry(key).or_default();
            let w = e.writer;
            if write {
                if w != NONE && w != me {
                    return Some(format!("iterations {w} and {me} both write"));
                }
                if let Some(r) = e.readers.iter().find(|&&r| r != NONE && r != me) {
                    return Some(format!("iteration {r} reads, and iteration {me} writes,"));
                }
                e.writer = me;
            } else {
                if w != NONE && w != me {
                    return Some(format!("iteration {w} writes, and iteration {me} reads,"));
                }
                match e.readers {
                    [a, _] if a == me => {}
                    [NONE, _] => e.readers[0] = me,
                    [_, NONE] => e.readers[1] = me,
                    _ => {}
                }
            }
        }
        None
    });
    if let Some(what) = conflict {
        let element = if linear {
            format!("linear position {}", index[0])
        } else {
            format!("{index:?}")
        };
        site.fail(format_args!(
            "write conflict in `par_loop`: {what} element {element} of tensor `{tensor}` (the iterations of a `par_loop` may run in any order, in parallel, so each element may be written by one iteration and then read only by it)"
        ));
    }
}

/// `tensor_get`; with `checks` (debug mode), recorded for the running `par_loop`s.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_get<T: Element>(
    checks: bool,
    site: &Site,
    name: &str,
    t: TensorRef<'_, T>,
    index: &[i64],
) -> T {
    if checks {
        track(site, name, &t, index, false, false);
    }
    t.get(site, index)
}

/// `tensor_set`; with `checks` (debug mode), recorded for the running `par_loop`s.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_set<T: Element>(
    checks: bool,
    site: &Site,
    name: &str,
    t: TensorRef<'_, T>,
    index: &[i64],
    value: T,
) {
    if checks {
        track(site, name, &t, index, false, true);
    }
    t.set(site, index, value)
}

/// `tensor_linear_get`; with `checks` (debug mode), recorded for the running `par_loop`s.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_linear_get<T: Element>(
    checks: bool,
    site: &Site,
    name: &str,
    t: TensorRef<'_, T>,
    i: i64,
) -> T {
    if checks {
        track(site, name, &t, &[i], true, false);
    }
    t.linear_get(site, i)
}

/// `tensor_linear_set`; with `checks` (debug mode), recorded for the running `par_loop`s.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_linear_set<T: Element>(
    checks: bool,
    site: &Site,
    name: &str,
    t: TensorRef<'_, T>,
    i: i64,
    value: T,
) {
    if checks {
        track(site, name, &t, &[i], true, true);
    }
    t.linear_set(site, i, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: Site = Site::new("src/main.rs", 3, 9);

    fn failure(f: impl FnOnce()) -> Option<String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .err()
            .map(|p| p.downcast_ref::<String>().cloned().unwrap_or_default())
    }

    #[test]
    fn lawful_operators_pass_and_floats_compare_within_tolerance() {
        let s: Vec<i64> = (1..=100).collect();
        check_reduce(&SITE, "`addi`", &s, &0, &|a: i64, b: i64| a.wrapping_add(b));
        check_reduce(&SITE, "max", &s, &i64::MIN, &|a: i64, b: i64| a.max(b));
        // Sums of floats regroup with rounding differences: not a broken law.
        let xs: Vec<f64> = (0..1000)
            .map(|i| 0.1 * i as f64 + 1e-3 / (i as f64 + 1.0))
            .collect();
        check_reduce(&SITE, "`addf`", &xs, &0.0, &|a: f64, b: f64| a + b);
        let ps: Vec<(i64, f64)> = (0..50).map(|i| (i, i as f64)).collect();
        check_reduce(
            &SITE,
            "pair",
            &ps,
            &(0, 0.0),
            &|a: (i64, f64), b: (i64, f64)| (a.0 + b.0, a.1 + b.1),
        );
    }

    #[test]
    fn broken_laws_are_found_on_short_sequences_too() {
        // One element: the neutral element is tried on it.
        let m = failure(|| check_reduce(&SITE, "`subi`", &[5_i64], &0, &|a: i64, b: i64| a - b));
        let m = m.expect("subi has no neutral element");
        assert!(
            m.starts_with("pmexpr: accelerate! at src/main.rs:3:9: "),
            "{m}"
        );
        assert!(m.contains("f(0, 5) is -5, not 5"), "{m}");
        // Two elements, a lawful neutral element, a non-associative operator: sampled triples
        // repeat elements, so they find it.
        let f = |a: i64, b: i64| {
            if a == 0 {
                b
            } else if b == 0 {
                a
            } else {
                a + 2 * b
            }
        };
        let m = failure(|| check_reduce(&SITE, "the closure", &[1_i64, 3], &0, &f));
        assert!(
            m.expect("not associative")
                .contains("the closure is associative, but it is not")
        );
        // Empty: nothing to check.
        check_reduce(&SITE, "`subi`", &[] as &[i64], &0, &|a: i64, b: i64| a - b);
    }

    #[test]
    fn loop_record_ends_when_an_iteration_fails() {
        let r = failure(|| tracked_par_loop(3, |i| assert!(i < 1, "iteration {i} fails")));
        assert!(r.is_some());
        assert!(LOOPS.with(|l| l.borrow().is_empty()));
    }
}
