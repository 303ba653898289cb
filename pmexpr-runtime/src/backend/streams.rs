//! `scan`, `filter` (a compaction) and `scatter` on `cpu`, and the pieces the sequential
//! backends share with it.
//!
//! The input of a `scan` or a `filter` is read by ranges of positions (`read(lo, hi)`, the fused
//! producers applied as each element is read), cut into the same chunks (`policy::CHUNKS_PER_THREAD` per thread)
//! in both passes of a two-pass algorithm:
//!
//! - **`scan`.** When the elements are cheap to read (the optimizer's decision) and none is
//!   filtered out, the first pass reduces each chunk, the chunks' carries are scanned in order on
//!   the calling thread, and the second pass reads each chunk again and scans it from its carry,
//!   writing the results in place (reduce-then-scan: two reads and one write of the input's
//!   size). Otherwise the first pass scans each chunk on its own into a buffer, and the second
//!   adds the chunk's carry to each element as it writes it (scan-then-propagate: each element is
//!   made once). Both are work-efficient (about `2n` applications of the operator); an
//!   associative operator with its neutral element gives the sequential result, as for `reduce`.
//! - **`filter`.** The first pass collects each chunk's elements into a buffer of the chunk's
//!   size, the second moves them to their offsets in the result (one allocation of the exact
//!   length). Both passes run in parallel. (Counting first and reading again was slower even for
//!   a test of `x % 3` over numbers: 1.25–1.30× rayon's `filter().collect()`, against 0.84–0.95×.)
//! - **`scatter`.** The destination is copied in parallel unless nothing else holds it; numbers
//!   and `bool`s are then written by chunks of the input in parallel, as relaxed atomic stores of
//!   the same size (plain `mov`s on x86-64 and AArch64), so that two equal indices are a race
//!   with one winner, never undefined behaviour (debug mode reports them). Other values are
//!   written in order.

use super::{level, nesting};
use crate::granularity::Level;
use crate::policy;
use crate::prim::{Same, Which};
use crate::raw::atomic::{self, AtomicBits};
use crate::raw::caller_runs::{self, Pool};
use crate::raw::slots::{self, Slots};
use crate::seq::Seq;
use crate::site::Site;

/// Whether a `scan`, `filter` or `scatter` of `n` positions runs on the calling thread: below
/// [`policy::SEQUENTIAL_BELOW`], nested in a level that already saturates the workers, or with one thread
/// (where a two-pass algorithm would only read the input twice: measured 1.5× the sequential
/// loop for a scan of additions).
pub(super) fn sequential(n: usize) -> bool {
    n < policy::SEQUENTIAL_BELOW || nesting::saturated() || crate::granularity::threads() == 1
}

/// Appends the inclusive scan of `xs` from `acc`, each result through `post`, to `out`; returns
/// it and the last accumulator.
pub(super) fn scan_into<T: Clone, U>(
    mut out: Vec<U>,
    mut acc: T,
    xs: impl Iterator<Item = T>,
    f: &impl Fn(T, T) -> T,
    post: &impl Fn(&T) -> U,
) -> (Vec<U>, T) {
    out.reserve(xs.size_hint().0);
    for x in xs {
        acc = f(acc, x);
        out.push(post(&acc));
    }
    (out, acc)
}

/// The results of the parts `lens` (in order, one allocation): part `c` is written by
/// `fill(c, data[c], slots)` into its `lens[c]` slots, the parts in parallel; every slot must be
/// written (an internal error otherwise, before any result is read).
fn fill_parts<U, D, F>(lens: &[usize], data: Vec<D>, fill: F) -> Vec<U>
where
    U: Send,
    D: Send,
    F: Fn(usize, D, &mut Slots<'_, U>) -> usize + Sync,
{
    fill_parts_with(lens, data, |c, d, slots| (fill(c, d, slots), ())).0
}

/// [`fill_parts`] whose `fill` also gives a value per part (besides how many results it wrote):
/// the results, and the values in part order.
fn fill_parts_with<U, D, Q, F>(lens: &[usize], data: Vec<D>, fill: F) -> (Vec<U>, Vec<Q>)
where
    U: Send,
    D: Send,
    Q: Send,
    F: Fn(usize, D, &mut Slots<'_, U>) -> (usize, Q) + Sync,
{
    let saturates = nesting::saturates(lens.len());
    let task = || saturates.then(nesting::Guard::new);
    slots::par_filled_parts(lens, data, 1, task, |c, d, slots| fill(c, d, slots).1)
}

/// The carries of the chunks whose last accumulators (or `None`, for a chunk without elements)
/// are `lasts`: the first is `ne`, each next one `f(carry, last)`.
fn carries<'t, T: Clone + 't>(
    ne: &T,
    lasts: impl Iterator<Item = Option<&'t T>>,
    f: &impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut out = vec![ne.clone()];
    for last in lasts {
        let carry = out.last().expect("the first carry").clone();
        out.push(match last {
            Some(x) => f(carry, x.clone()),
            None => carry,
        });
    }
    out.pop();
    out
}

/// The chunk `c` of `0..n` in chunks of `grain`.
#[inline]
fn chunk(c: usize, grain: usize, n: usize) -> (usize, usize) {
    (c * grain, ((c + 1) * grain).min(n))
}

/// The two-pass parallel scan (see the module documentation) over chunks of `grain` positions.
#[allow(clippy::too_many_arguments)]
pub(super) fn par_scan<T, U, R, I, F, P>(
    n: usize,
    grain: usize,
    exact: bool,
    cheap: bool,
    ne: T,
    read: &R,
    f: &F,
    post: &P,
) -> Vec<U>
where
    T: Clone + Send + Sync,
    U: Send,
    R: Fn(usize, usize) -> I + Sync + Send,
    I: Iterator<Item = T>,
    F: Fn(T, T) -> T + Sync + Send,
    P: Fn(&T) -> U + Sync + Send,
{
    let grain = grain.max(1);
    let chunks = n.div_ceil(grain);
    if cheap && exact {
        // Each chunk's reduction, and how many elements it gives.
        let sums: Vec<T> = level(Level::parallel(), chunks, |c0, slots| {
            slots.fill_with(|k| {
                let (lo, hi) = chunk(c0 + k, grain, n);
                read(lo, hi).fold(ne.clone(), f)
            })
        });
        let carries = carries(&ne, sums.iter().map(Some), f);
        drop(sums);
        let lens: Vec<usize> = (0..chunks)
            .map(|c| chunk(c, grain, n))
            .map(|(lo, hi)| hi - lo)
            .collect();
        fill_parts(&lens, carries, |c, mut acc: T, slots| {
            let (lo, hi) = chunk(c, grain, n);
            let scanned = read(lo, hi).map(|x| {
                acc = f(acc.clone(), x);
                post(&acc)
            });
            slots.extend(scanned)
        })
    } else {
        // Each chunk's own scan, from the neutral element.
        let keep = |x: &T| x.clone();
        let locals: Vec<Vec<T>> = level(Level::parallel(), chunks, |c0, slots| {
            slots.fill_with(|k| {
                let (lo, hi) = chunk(c0 + k, grain, n);
                scan_into(Vec::new(), ne.clone(), read(lo, hi), f, &keep).0
            })
        });
        let carries = carries(&ne, locals.iter().map(|l| l.last()), f);
        let lens: Vec<usize> = locals.iter().map(Vec::len).collect();
        let data: Vec<(Vec<T>, T)> = locals.into_iter().zip(carries).collect();
        fill_parts(&lens, data, |c, (local, carry), slots| {
            if c == 0 {
                // The first chunk's scan is the sequential one already.
                slots.extend(local.iter().map(post))
            } else {
                slots.extend(local.into_iter().map(|x| post(&f(carry.clone(), x))))
            }
        })
    }
}

/// [`par_scan`] whose results are the accumulators themselves (no consuming maps): for costly
/// elements, each chunk is scanned into its own part of the result and the carries are then
/// applied in place, as the best hand-written scan does (no buffer besides the result).
pub(super) fn par_scan_in_place<T, R, I, F>(
    n: usize,
    grain: usize,
    exact: bool,
    cheap: bool,
    ne: T,
    read: &R,
    f: &F,
) -> Vec<T>
where
    T: Clone + Send + Sync,
    R: Fn(usize, usize) -> I + Sync + Send,
    I: Iterator<Item = T>,
    F: Fn(T, T) -> T + Sync + Send,
{
    if cheap || !exact {
        return par_scan(n, grain, exact, cheap, ne, read, f, &T::clone);
    }
    let grain = grain.max(1);
    let chunks = n.div_ceil(grain);
    let lens: Vec<usize> = (0..chunks)
        .map(|c| chunk(c, grain, n))
        .map(|(lo, hi)| hi - lo)
        .collect();
    // Each chunk's own scan from the neutral element, in place, and its last accumulator.
    let (mut out, lasts) = fill_parts_with(&lens, vec![(); chunks], |c, (), slots| {
        let (lo, hi) = chunk(c, grain, n);
        let mut acc = ne.clone();
        let scanned = read(lo, hi).map(|x| {
            acc = f(acc.clone(), x);
            acc.clone()
        });
        let written = slots.extend(scanned);
        (written, acc)
    });
    let carries = carries(&ne, lasts.iter().map(Some), f);
    // Every chunk but the first (whose scan is the sequential one) takes its carry.
    let mut parts: Vec<(&mut [T], T)> = Vec::with_capacity(chunks);
    let mut rest = &mut out[..];
    for (&len, carry) in lens.iter().zip(carries) {
        let (part, tail) = rest.split_at_mut(len);
        parts.push((part, carry));
        rest = tail;
    }
    let saturates = nesting::saturates(chunks);
    caller_runs::run(
        Pool::Global,
        parts.len().saturating_sub(1),
        1,
        &mut parts[1.min(chunks)..],
        &|_, _, ps: &mut [(&mut [T], T)]| {
            let _nested = saturates.then(nesting::Guard::new);
            for (part, carry) in ps.iter_mut() {
                for y in part.iter_mut() {
                    *y = f(carry.clone(), y.clone());
                }
            }
        },
    );
    out
}

/// The parallel compaction (see the module documentation) over chunks of `grain` positions.
pub(super) fn par_filter<T, R, I>(n: usize, grain: usize, read: &R) -> Vec<T>
where
    T: Send,
    R: Fn(usize, usize) -> I + Sync + Send,
    I: Iterator<Item = T>,
{
    let grain = grain.max(1);
    let chunks = n.div_ceil(grain);
    let locals: Vec<Vec<T>> = level(Level::parallel(), chunks, |c0, slots| {
        slots.fill_with(|k| {
            let (lo, hi) = chunk(c0 + k, grain, n);
            // Room for every element of the chunk: never grown (and copied) as it fills.
            let mut local = Vec::with_capacity(hi - lo);
            local.extend(read(lo, hi));
            local
        })
    });
    let lens: Vec<usize> = locals.iter().map(Vec::len).collect();
    fill_parts(&lens, locals, |_, local, slots| slots.extend(local))
}

/// The check every target makes before a `scatter`: the lengths of the indices and the values.
pub(super) fn scatter_checks(site: &Site, n: usize, nv: usize) {
    if n != nv {
        site.fail(format_args!(
            "scatter with {n} indices but {nv} values (the sequences must have the same length)"
        ));
    }
}

/// Writes the values `lo..hi` into `out` at their indices, in order, skipping an index outside
/// `out`. Every value is computed, also one whose index is out of range, so that the failures
/// are those of the materialized sequences.
pub(super) fn scatter_into<T, I, V, II, VI>(
    out: &mut [T],
    lo: usize,
    hi: usize,
    index: &I,
    value: &V,
) where
    I: Fn(usize, usize) -> II,
    V: Fn(usize, usize) -> VI,
    II: Iterator<Item = i64>,
    VI: Iterator<Item = T>,
{
    let k = out.len() as u64;
    // `zip` takes the index before the value, as the sequences would be computed.
    for (i, v) in index(lo, hi).zip(value(lo, hi)) {
        // A negative index becomes a large unsigned one: one comparison checks both ends.
        if (i as u64) < k {
            out[i as usize] = v;
        }
    }
}

/// The elements of `dest` in a `Vec` of their own: moved when nothing else holds them, copied in
/// parallel otherwise.
pub(super) fn owned<T: Clone + Send + Sync>(dest: Seq<'_, T>) -> Vec<T> {
    dest.into_vec_with(|s| {
        // A copy costs the same per element of a type: one level per element type.
        level(Level::of::<T>(s.len()), s.len(), |lo, slots| {
            slots.extend(s[lo..].iter().cloned());
        })
    })
}

/// `scatter` of numbers or `bool`s (`which` of them `T` is) into `out` on `cpu`: the values by
/// chunks of `grain` positions in parallel, each stored atomically.
pub(super) fn par_scatter<T, I, V, II, VI>(
    which: Which<T>,
    out: &mut [T],
    n: usize,
    grain: usize,
    index: &I,
    value: &V,
) where
    I: Fn(usize, usize) -> II + Sync + Send,
    V: Fn(usize, usize) -> VI + Sync + Send,
    II: Iterator<Item = i64>,
    VI: Iterator<Item = T>,
{
    match which {
        Which::I64(w) => stores(w, out, n, grain, index, value),
        Which::F64(w) => stores(w, out, n, grain, index, value),
        Which::I32(w) => stores(w, out, n, grain, index, value),
        Which::F32(w) => stores(w, out, n, grain, index, value),
        Which::Bool(w) => stores(w, out, n, grain, index, value),
        Which::I8(w) => stores(w, out, n, grain, index, value),
        Which::I16(w) => stores(w, out, n, grain, index, value),
        Which::Isize(w) => stores(w, out, n, grain, index, value),
        Which::U8(w) => stores(w, out, n, grain, index, value),
        Which::U16(w) => stores(w, out, n, grain, index, value),
        Which::U32(w) => stores(w, out, n, grain, index, value),
        Which::U64(w) => stores(w, out, n, grain, index, value),
        Which::Usize(w) => stores(w, out, n, grain, index, value),
    }
}

/// [`par_scatter`] for one primitive type `C`, which `T` is (`same` proves it).
fn stores<T, C, I, V, II, VI>(
    same: Same<T, C>,
    out: &mut [T],
    n: usize,
    grain: usize,
    index: &I,
    value: &V,
) where
    C: AtomicBits,
    I: Fn(usize, usize) -> II + Sync + Send,
    V: Fn(usize, usize) -> VI + Sync + Send,
    II: Iterator<Item = i64>,
    VI: Iterator<Item = T>,
{
    let cells = atomic::atomics(same.slice_mut(out));
    let k = cells.len() as u64;
    let grain = grain.max(1);
    let saturates = nesting::saturates(n.div_ceil(grain));
    caller_runs::run(Pool::Global, n, grain, (), &|lo, len, ()| {
        let _nested = saturates.then(nesting::Guard::new);
        let (lo, hi) = (lo as usize, lo as usize + len);
        for (i, v) in index(lo, hi).zip(value(lo, hi)) {
            if (i as u64) < k {
                C::store(&cells[i as usize], atomic::same_value(&same, v));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::Scalar;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool")
    }

    /// Every grain (one element per chunk, chunks that do not divide `n`, one chunk), filtered
    /// or not, cheap or not, agrees with the sequential scan.
    #[test]
    fn the_parallel_scan_is_the_sequential_one() {
        let pool = pool(3);
        for n in [0, 1, 2, 7, 100, 1001] {
            let xs: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 101 - 50).collect();
            let read = |lo: usize, hi: usize| xs[lo..hi].iter().copied();
            let odd = |lo: usize, hi: usize| xs[lo..hi].iter().copied().filter(|x| x % 2 != 0);
            let f = |a: i64, b: i64| a.wrapping_add(b);
            let post = |x: &i64| (*x, x * 2);
            let want =
                |it: &mut dyn Iterator<Item = i64>| scan_into(Vec::new(), 0, it, &f, &post).0;
            let (all, odds) = (want(&mut read(0, n)), want(&mut odd(0, n)));
            for grain in [1, 3, 64, n.max(1)] {
                for cheap in [false, true] {
                    let got = pool.install(|| par_scan(n, grain, true, cheap, 0, &read, &f, &post));
                    assert_eq!(got, all, "n={n} grain={grain} cheap={cheap}");
                    let got =
                        pool.install(|| par_scan_in_place(n, grain, true, cheap, 0, &read, &f));
                    let firsts: Vec<i64> = all.iter().map(|p| p.0).collect();
                    assert_eq!(got, firsts, "in place: n={n} grain={grain} cheap={cheap}");
                    let got = pool.install(|| par_scan(n, grain, false, cheap, 0, &odd, &f, &post));
                    assert_eq!(got, odds, "filtered: n={n} grain={grain} cheap={cheap}");
                    let got = pool.install(|| par_filter(n, grain, &odd));
                    assert_eq!(got, odd(0, n).collect::<Vec<_>>());
                }
            }
        }
    }

    /// A non-commutative operator (the first non-zero element): the chunks' carries are combined
    /// in order.
    #[test]
    fn carries_are_combined_in_order() {
        let xs: Vec<i64> = (0..500).map(|i| if i % 7 == 0 { 0 } else { i }).collect();
        let first = |a: i64, b: i64| if a == 0 { b } else { a };
        let read = |lo: usize, hi: usize| xs[lo..hi].iter().copied();
        let want = scan_into(Vec::new(), 0, read(0, 500), &first, &|x: &i64| *x).0;
        for cheap in [false, true] {
            let got = pool(4).install(|| par_scan(500, 9, true, cheap, 0, &read, &first, &|x| *x));
            assert_eq!(got, want);
            let got = pool(4).install(|| par_scan_in_place(500, 9, true, cheap, 0, &read, &first));
            assert_eq!(got, want);
        }
    }

    #[test]
    fn a_failing_part_fails_before_its_results_are_used() {
        let r = std::panic::catch_unwind(|| {
            fill_parts(
                &[2, 3],
                vec![(), ()],
                |c, (), slots: &mut Slots<'_, String>| {
                    slots.extend((0..if c == 1 { 1 } else { 2 }).map(|i| i.to_string()))
                },
            )
        });
        let msg = r.unwrap_err().downcast_ref::<String>().cloned().unwrap();
        assert!(
            msg.contains("internal error: a part of 3 results got 1"),
            "{msg}"
        );
    }

    #[test]
    fn scatter_writes_every_kind_of_number_and_skips_indices_out_of_range() {
        fn check<T: Scalar>(dest: Vec<T>, vs: Vec<T>) {
            let n = vs.len();
            let k = dest.len() as i64;
            // Each position of `dest` at most once, some indices outside it.
            let is: Vec<i64> = (0..n as i64)
                .map(|j| {
                    if j % 5 == 4 {
                        k + j
                    } else {
                        (j * 3) % (k + 1) - 1
                    }
                })
                .collect();
            let index = |lo: usize, hi: usize| is[lo..hi].iter().copied();
            let value = |lo: usize, hi: usize| vs[lo..hi].iter().copied();
            let mut want = dest.clone();
            scatter_into(&mut want, 0, n, &index, &value);
            let mut got = dest;
            pool(3).install(|| par_scatter(T::WHICH, &mut got, n, 7, &index, &value));
            assert_eq!(got, want);
        }
        check::<i64>(vec![0; 40], (1..=30).collect());
        check::<f64>(vec![0.5; 40], (1..=30).map(|i| i as f64).collect());
        check::<i32>(vec![-1; 40], (1..=30).collect());
        check::<f32>(vec![0.0; 40], (1..=30).map(|i| i as f32).collect());
        check::<bool>(vec![false; 40], (1..=30).map(|i| i % 3 == 0).collect());
    }
}
