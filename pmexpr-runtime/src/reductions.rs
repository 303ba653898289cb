//! The reductions (and `scan` and `scatter`) as generated code calls them: on backend `B`, whose
//! debug instance first checks the operator's laws, or that no two indices of a `scatter` are
//! equal ([`crate::laws`], [`crate::races`]), so that the check is one constant test.

use crate::backend::Backend;
use crate::laws::{Law, check_laws, check_reduce};
use crate::numeric::OpenType;
use crate::races::check_scatter;
use crate::seq::Seq;
use crate::site::Site;

/// `create n f`: `[f 0, …, f (n-1)]` on backend `B` — Futhark's `tabulate`, a parallel keyword:
/// in order on the sequential backends, in parallel on `cpu`. A negative `n` fails at `site`.
#[doc(hidden)]
pub fn create<'a, B, T, F>(site: &Site, n: i64, f: F) -> Seq<'a, T>
where
    B: Backend,
    T: Send,
    F: Fn(i64) -> T + Sync + Send,
{
    if n < 0 {
        site.fail(format_args!("create with negative length: {n}"));
    }
    B::tabulate(n, f)
}

/// `scan(f, ne, xs)` on backend `B` (see [`Backend::scan`]), whose debug instance first checks
/// the operator's laws on the elements, as for `reduce` (the `cpu` target scans by chunks,
/// Futhark's `scan` assumes them too).
#[doc(hidden)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn scan<'a, B: Backend, T, R, I, F>(
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
    if B::CHECKS {
        let elements: Vec<T> = read(0, n).collect();
        check_laws(site, "scan", op, &elements, &ne, &f);
    }
    B::scan(n, exact, cheap, ne, read, f)
}

/// `map(post, scan(f, ne, xs))` on backend `B` (see [`Backend::scan_map`]), checked as
/// [`scan`].
#[doc(hidden)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn scan_map<'a, B: Backend, T, U, R, I, F, P>(
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
    if B::CHECKS {
        let elements: Vec<T> = read(0, n).collect();
        check_laws(site, "scan", op, &elements, &ne, &f);
    }
    B::scan_map(n, exact, cheap, ne, read, f, post)
}

/// `reduce f ne` of the elements `read` gives (a filtered input, see [`Backend::read_reduce`])
/// on backend `B`, whose debug instance first checks the operator's laws on them.
#[doc(hidden)]
#[inline(always)]
pub fn read_reduce<B: Backend, T, R, I, F>(
    site: &Site,
    op: &str,
    n: usize,
    ne: T,
    read: R,
    f: F,
) -> T
where
    T: Law + Clone + Send + Sync,
    R: Fn(usize, usize) -> I + Sync + Send,
    I: Iterator<Item = T>,
    F: Fn(T, T) -> T + Sync + Send,
{
    if B::CHECKS {
        let elements: Vec<T> = read(0, n).collect();
        check_reduce(site, op, &elements, &ne, &f);
    }
    B::read_reduce(n, ne, read, f)
}

/// `scatter dest is vs` on backend `B` (see [`Backend::scatter`]), whose debug instance first
/// checks that no two indices inside `dest` are equal (the `cpu` target and Futhark write them
/// in any order).
#[doc(hidden)]
#[inline(always)]
pub fn scatter<'a, B: Backend, T, I, V, II, VI>(
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
    if B::CHECKS && n == nv {
        check_scatter(site, dest.len(), index(0, n));
    }
    B::scatter(site, dest, n, nv, index, value)
}

/// `reduce` on backend `B`, whose debug instance first checks the operator's laws (generated
/// code calls this, so that the check is one constant test).
#[doc(hidden)]
#[inline(always)]
pub fn reduce<B: Backend, T, F>(site: &Site, op: &str, s: &[T], ne: T, f: F) -> T
where
    T: Law + Clone + Send + Sync,
    F: Fn(T, T) -> T + Sync + Send,
{
    if B::CHECKS {
        check_reduce(site, op, s, &ne, &f);
    }
    B::reduce(s, ne, f)
}

/// `hist f ne k is vs` on backend `B`, whose debug instance first checks the operator's laws on
/// the values that land in a bin (`f` must be associative with neutral element `ne`, as for
/// `reduce`: the `cpu` target combines private histograms, Futhark's `hist` assumes it too).
/// The indices and values are computed in the order the backend computes them, so a failure in
/// them is the one the other targets report.
#[doc(hidden)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn hist<'a, B: Backend, T, I, V, F, II, VI>(
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
    if B::CHECKS && k >= 0 && n == nv {
        let binned: Vec<T> = index(0, n)
            .zip(value(0, n))
            .filter_map(|(i, v)| (0..k).contains(&i).then_some(v))
            .collect();
        check_laws(site, "hist", op, &binned, &ne, &f);
    }
    B::hist(site, k, ne, n, nv, index, value, f)
}

/// `reduce f ne (map g s)` on backend `B`, whose debug instance first checks the operator's laws
/// on the mapped elements.
#[doc(hidden)]
#[inline(always)]
pub fn map_reduce<B: Backend, T, U, G, F>(site: &Site, op: &str, s: &[T], ne: U, g: G, f: F) -> U
where
    T: Sync,
    U: Law + Clone + Send + Sync,
    G: Fn(&T) -> U + Sync + Send,
    F: Fn(U, U) -> U + Sync + Send,
{
    if B::CHECKS {
        let mapped: Vec<U> = s.iter().map(&g).collect();
        check_reduce(site, op, &mapped, &ne, &f);
    }
    B::map_reduce(s, ne, g, f)
}

/// `reduce f ne (create n g)` on backend `B` (`n` is not negative), whose debug instance first
/// checks the operator's laws on the created elements.
#[doc(hidden)]
#[inline(always)]
pub fn tabulate_reduce<B: Backend, U, G, F>(site: &Site, op: &str, n: i64, ne: U, g: G, f: F) -> U
where
    U: Law + Clone + Send + Sync,
    G: Fn(i64) -> U + Sync + Send,
    F: Fn(U, U) -> U + Sync + Send,
{
    if B::CHECKS {
        let created: Vec<U> = (0..n).map(&g).collect();
        check_reduce(site, op, &created, &ne, &f);
    }
    B::tabulate_reduce(n, ne, g, f)
}

/// `reduce f ne (map2 g a b)` on backend `B`, whose debug instance first checks the operator's
/// laws on the mapped elements.
#[doc(hidden)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn map2_reduce<B: Backend, T, U, V, G, F>(
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
    if B::CHECKS && a.len() == b.len() {
        let mapped: Vec<V> = a.iter().zip(b).map(|(x, y)| g(x, y)).collect();
        check_reduce(site, op, &mapped, &ne, &f);
    }
    B::map2_reduce(site, a, b, ne, g, f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{CpuBackend, SeqBackend};

    const SITE: Site = Site::new("r.rs", 2, 3);

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
        for r in [
            std::panic::catch_unwind(|| create::<CpuBackend, _, _>(&SITE, -1, |i| i).len()),
            std::panic::catch_unwind(|| create::<SeqBackend, _, _>(&SITE, -1, |i| i).len()),
        ] {
            let e = r.expect_err("fails");
            let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(msg.contains("create with negative length: -1"), "{msg}");
        }
    }
}
