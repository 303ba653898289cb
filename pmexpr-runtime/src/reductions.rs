//! The reductions as generated code calls them: on backend `B`, whose debug instance first checks
//! the operator's laws ([`crate::laws`]), so that the check is one constant test.

use crate::backend::Backend;
use crate::laws::{Law, check_laws, check_reduce};
use crate::seq::Seq;
use crate::site::Site;

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
