//! The CPU backends: how the parallel keywords run.
//!
//! Generated code for an accelerated expression is one function generic over [`Backend`]; it is
//! instantiated once per CPU backend and the target chosen at run time picks the instance. The
//! sequential backend is the semantics (the paper's `demote`: `reduce` is a left fold, `par_loop`
//! runs its iterations in order); the multicore backend runs the same closures on rayon's thread
//! pool; the debug backend is the sequential one with the runtime checks of debug mode switched on
//! (`B::CHECKS` is a constant, so the other backends carry no trace of them).

use rayon::prelude::*;

use crate::seq::Seq;
use crate::site::Site;

/// How the parallel keywords of PMExpr execute. Implemented by [`SeqBackend`], [`CpuBackend`] and
/// [`DebugBackend`].
pub trait Backend: 'static {
    /// Whether debug mode's runtime checks run (regular sequences, tensor rank, …).
    const CHECKS: bool;

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

    /// `reduce f ne s`, assuming `f` is associative with neutral element `ne`.
    fn reduce<T, F>(s: &[T], ne: T, f: F) -> T
    where
        T: Clone + Send + Sync,
        F: Fn(T, T) -> T + Sync + Send;

    /// `reduce f ne (map g s)` without building the intermediate sequence.
    fn map_reduce<T, U, G, F>(s: &[T], ne: U, g: G, f: F) -> U
    where
        T: Sync,
        U: Clone + Send + Sync,
        G: Fn(&T) -> U + Sync + Send,
        F: Fn(U, U) -> U + Sync + Send;

    /// `flatten s`: the concatenation of the inner sequences.
    fn flatten<'a, T>(s: &[Seq<'a, T>]) -> Seq<'a, T>
    where
        T: Clone + Send + Sync;

    /// `par_loop n f`: `f i` for every `i` in `0..n`, in any order. (`f` is `Clone` so that each
    /// task can work on its own copy.)
    fn par_loop<F>(n: i64, f: F)
    where
        F: Fn(i64) + Clone + Sync + Send;
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

#[cold]
fn map2_lengths(site: &Site, a: usize, b: usize) -> ! {
    site.fail(format_args!(
        "map2 on sequences of different lengths ({a} and {b})"
    ))
}

macro_rules! sequential_backend {
    ($name:ident, $checks:expr) => {
        impl Backend for $name {
            const CHECKS: bool = $checks;

            fn map<'a, T, U, F>(s: &[T], f: F) -> Seq<'a, U>
            where
                T: Sync,
                U: Send,
                F: Fn(&T) -> U + Sync + Send,
            {
                Seq::from_vec(s.iter().map(f).collect())
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
                Seq::from_vec(a.iter().zip(b).map(|(x, y)| f(x, y)).collect())
            }

            fn reduce<T, F>(s: &[T], ne: T, f: F) -> T
            where
                T: Clone + Send + Sync,
                F: Fn(T, T) -> T + Sync + Send,
            {
                s.iter().cloned().fold(ne, f)
            }

            fn map_reduce<T, U, G, F>(s: &[T], ne: U, g: G, f: F) -> U
            where
                T: Sync,
                U: Clone + Send + Sync,
                G: Fn(&T) -> U + Sync + Send,
                F: Fn(U, U) -> U + Sync + Send,
            {
                s.iter().map(g).fold(ne, f)
            }

            fn flatten<'a, T>(s: &[Seq<'a, T>]) -> Seq<'a, T>
            where
                T: Clone + Send + Sync,
            {
                crate::intrinsics::flatten(s)
            }

            fn par_loop<F>(n: i64, f: F)
            where
                F: Fn(i64) + Clone + Sync + Send,
            {
                if $checks {
                    // Debug mode: the tensor elements each iteration touches are recorded.
                    crate::laws::tracked_par_loop(n, f)
                } else {
                    (0..n.max(0)).for_each(f)
                }
            }
        }
    };
}

sequential_backend!(SeqBackend, false);
sequential_backend!(DebugBackend, true);

impl Backend for CpuBackend {
    const CHECKS: bool = false;

    fn map<'a, T, U, F>(s: &[T], f: F) -> Seq<'a, U>
    where
        T: Sync,
        U: Send,
        F: Fn(&T) -> U + Sync + Send,
    {
        Seq::from_vec(s.par_iter().map(f).collect())
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
        Seq::from_vec(
            a.par_iter()
                .zip(b.par_iter())
                .map(|(x, y)| f(x, y))
                .collect(),
        )
    }

    fn reduce<T, F>(s: &[T], ne: T, f: F) -> T
    where
        T: Clone + Send + Sync,
        F: Fn(T, T) -> T + Sync + Send,
    {
        s.par_iter().cloned().reduce(|| ne.clone(), f)
    }

    fn map_reduce<T, U, G, F>(s: &[T], ne: U, g: G, f: F) -> U
    where
        T: Sync,
        U: Clone + Send + Sync,
        G: Fn(&T) -> U + Sync + Send,
        F: Fn(U, U) -> U + Sync + Send,
    {
        s.par_iter().map(g).reduce(|| ne.clone(), f)
    }

    fn flatten<'a, T>(s: &[Seq<'a, T>]) -> Seq<'a, T>
    where
        T: Clone + Send + Sync,
    {
        Seq::from_vec(s.par_iter().flat_map_iter(|x| x.iter().cloned()).collect())
    }

    fn par_loop<F>(n: i64, f: F)
    where
        F: Fn(i64) + Clone + Sync + Send,
    {
        // Each task runs a contiguous chunk in a plain loop, so that the body is inlined into it
        // (rayon calls a per-item closure through a reference and does not inline it). Eight
        // chunks per thread leave work stealing room to balance uneven iterations.
        let n = n.max(0);
        let threads = rayon::current_num_threads() as i64;
        let chunk = (n / (threads * 8)).max(1);
        let chunks = (n + chunk - 1) / chunk;
        (0..chunks as usize).into_par_iter().for_each(|c| {
            // A local copy of the body (generated bodies are `move` closures over references and
            // `Copy` values) lets the compiler keep what it captures in registers.
            let f = f.clone();
            let lo = c as i64 * chunk;
            let hi = (lo + chunk).min(n);
            for i in lo..hi {
                f(i)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    const SITE: Site = Site::new("b.rs", 1, 1);

    fn keywords<B: Backend>() -> (Vec<i64>, Vec<i64>, i64, i64, i64) {
        let s: Vec<i64> = (1..=1000).collect();
        let m = B::map(&s, |x| x * 2).into_vec();
        let m2 = B::map2(&SITE, &s, &m, |x, y| x + y).into_vec();
        let r = B::reduce(&s, 0, |a, b| a + b);
        let mr = B::map_reduce(&s, 0, |x| x * x, |a, b| a + b);
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

    #[test]
    fn backends_agree() {
        let seq = keywords::<SeqBackend>();
        assert_eq!(seq.2, 500_500);
        assert_eq!(seq.4, 4950);
        assert_eq!(keywords::<CpuBackend>(), seq);
        assert_eq!(keywords::<DebugBackend>(), seq);
    }

    #[test]
    fn par_loop_with_negative_count_does_nothing() {
        CpuBackend::par_loop(-3, |_| panic!("no iteration"));
        SeqBackend::par_loop(-3, |_| panic!("no iteration"));
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
}
