//! `Peeled`: the positions `0..n` of a `create` (or of a `map` over positions) whose element
//! function reads sequences at the position plus constants, `s[k - 1]`, `s[k]`, `s[k + 1]`. For
//! the positions `a..b` every such read is in range (the generated code computes `a` and `b` from
//! the offsets and the sequences' lengths); there the elements come from `fast`, which reads each
//! chunk's slices of the sequences (`&s[lo + c..hi + c]`, indexed from 0), so that the compiler
//! drops the reads' bounds checks and can vectorize. The positions before `a` and from `b` on
//! (the ends a stencil guards with `if k == 0`) come from `slow`, the element function as
//! written, so that they fail, or not, as written.
//!
//! Both readers give the elements of a range `lo..hi` of positions as an iterator: exactly
//! `hi - lo` of them, in order. The backends check that count where they write slots
//! (`Peeled::fill`): a reader is a closure, which the type system cannot hold to it.

use std::iter::Chain;
use std::ops::Range;

use crate::raw::slots::Slots;
use crate::site::Site;

/// The positions `0..n` read in three parts: `0..a` and `b..n` by `slow`, `a..b` by `fast`.
#[derive(Debug, Clone, Copy)]
pub struct Peeled<S, F> {
    n: usize,
    a: usize,
    b: usize,
    slow: S,
    fast: F,
}

impl<S, F, I, J, T> Peeled<S, F>
where
    S: Fn(usize, usize) -> I,
    F: Fn(usize, usize) -> J,
    I: Iterator<Item = T>,
    J: Iterator<Item = T>,
{
    /// `n` positions, those in `a..b` read by `fast`; `a` and `b` are clamped to `0..=n`
    /// (`b` to `a..=n`), so any values are safe.
    #[inline(always)]
    pub fn new(n: usize, a: i64, b: i64, slow: S, fast: F) -> Self {
        let (a, b) = bounds(n, a, b);
        Peeled {
            n,
            a,
            b,
            slow,
            fast,
        }
    }

    /// The number of positions.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no positions.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The positions `lo..hi` in their three parts: before `a` (slow), `a..b` (fast), from `b`
    /// (slow); each part empty where the range does not reach it.
    #[inline(always)]
    fn parts(&self, lo: usize, hi: usize) -> [Range<usize>; 3] {
        parts(self.a, self.b, lo, hi)
    }

    /// The elements of the positions `lo..hi`, in order.
    #[inline(always)]
    pub fn iter(&self, lo: usize, hi: usize) -> Chain<Chain<I, J>, I> {
        let [x, y, z] = self.parts(lo, hi);
        (self.slow)(x.start, x.end)
            .chain((self.fast)(y.start, y.end))
            .chain((self.slow)(z.start, z.end))
    }

    /// `f` folded over the elements of the positions `lo..hi` from `acc`: three loops, the fast
    /// one over the chunk's slices.
    #[inline(always)]
    pub fn fold<A>(&self, lo: usize, hi: usize, acc: A, mut f: impl FnMut(A, T) -> A) -> A {
        let [x, y, z] = self.parts(lo, hi);
        let acc = (self.slow)(x.start, x.end).fold(acc, &mut f);
        let acc = (self.fast)(y.start, y.end).fold(acc, &mut f);
        (self.slow)(z.start, z.end).fold(acc, f)
    }

    /// Writes the elements of the positions `lo..lo + slots.len()` into `slots`, every slot.
    ///
    /// # Panics
    /// Through `site`, when a reader gives fewer elements than positions (generated readers
    /// never do).
    #[inline(always)]
    pub(crate) fn fill(&self, site: &Site, lo: usize, slots: &mut Slots<'_, T>) {
        let [x, y, z] = self.parts(lo, lo + slots.len());
        write(site, slots, x.len(), (self.slow)(x.start, x.end));
        write(site, slots, y.len(), (self.fast)(y.start, y.end));
        write(site, slots, z.len(), (self.slow)(z.start, z.end));
    }

    /// Writes the elements of the positions `lo..lo + part.len()` over `part`'s (a spare
    /// buffer's, `backend::tabulate_peeled_over`), every one.
    ///
    /// # Panics
    /// As [`Peeled::fill`].
    #[inline(always)]
    pub(crate) fn assign(&self, site: &Site, lo: usize, part: &mut [T]) {
        let [x, y, z] = self.parts(lo, lo + part.len());
        let (px, rest) = part.split_at_mut(x.len());
        let (py, pz) = rest.split_at_mut(y.len());
        assign(site, px, (self.slow)(x.start, x.end));
        assign(site, py, (self.fast)(y.start, y.end));
        assign(site, pz, (self.slow)(z.start, z.end));
    }
}

fn assign<T>(site: &Site, part: &mut [T], values: impl Iterator<Item = T>) {
    let mut written = 0;
    for (x, v) in part.iter_mut().zip(values) {
        *x = v;
        written += 1;
    }
    if written != part.len() {
        short(site, written, part.len());
    }
}

/// `a` and `b` clamped to `0..=n` and `a..=n`.
#[inline(always)]
pub(crate) fn bounds(n: usize, a: i64, b: i64) -> (usize, usize) {
    let a = a.clamp(0, n as i64) as usize;
    (a, b.clamp(a as i64, n as i64) as usize)
}

/// The positions `lo..hi` in three parts: before `a`, `a..b`, from `b` (`a <= b`); each part empty
/// where the range does not reach it.
#[inline(always)]
pub(crate) fn parts(a: usize, b: usize, lo: usize, hi: usize) -> [Range<usize>; 3] {
    let cut = |x: usize| x.clamp(lo, hi.max(lo));
    let (a, b) = (cut(a), cut(b));
    [lo..a, a..b, b..hi.max(lo)]
}

/// The iterations `lo..hi` of a loop over `0..n` in three parts: before `a`, `a..b`, from `b`
/// (`a` and `b` clamped as [`Peeled::new`] does); a plain loop's chunk runs the middle part
/// through slices.
#[inline(always)]
pub fn peel_parts(n: i64, a: i64, b: i64, lo: usize, hi: usize) -> [Range<usize>; 3] {
    let (a, b) = bounds(n.max(0) as usize, a, b);
    parts(a, b, lo, hi)
}

/// A counted loop over `0..n` whose body reads sequences at its variable plus offsets: the
/// iterations `a..b` (where every such read is in range) run through `fast(lo, hi)`, which runs
/// the iterations `lo..hi` in order with the reads through slices of the chunk; the others
/// through `slow`, the body as written. In order: `0..a`, then `a..b`, then `b..n`.
#[inline(always)]
pub fn seq_loop_peeled(
    n: i64,
    a: i64,
    b: i64,
    mut slow: impl FnMut(i64),
    fast: impl FnOnce(usize, usize),
) {
    let n = n.max(0) as usize;
    let (a, b) = bounds(n, a, b);
    (0..a as i64).for_each(&mut slow);
    fast(a, b);
    (b as i64..n as i64).for_each(slow);
}

/// [`seq_loop_peeled`] carrying an accumulator: `seq_loop_acc acc n f`, the iterations `a..b`
/// through `fast(acc, lo, hi)`.
#[inline(always)]
pub fn seq_loop_acc_peeled<A>(
    acc: A,
    n: i64,
    a: i64,
    b: i64,
    mut slow: impl FnMut(A, i64) -> A,
    fast: impl FnOnce(A, usize, usize) -> A,
) -> A {
    let n = n.max(0) as usize;
    let (a, b) = bounds(n, a, b);
    let acc = (0..a as i64).fold(acc, &mut slow);
    let acc = fast(acc, a, b);
    (b as i64..n as i64).fold(acc, slow)
}

/// Writes `values` into the next `n` slots: the loop over a plain slice (`zip` of two exact-size
/// iterators), so it vectorizes as that one would; counted, since a reader's length is not
/// trusted.
#[inline(always)]
fn write<T>(site: &Site, slots: &mut Slots<'_, T>, n: usize, values: impl Iterator<Item = T>) {
    let written = slots.extend_n(n, values);
    if written != n {
        short(site, written, n);
    }
}

#[cold]
#[inline(never)]
fn short(site: &Site, written: usize, wanted: usize) -> ! {
    site.fail(format_args!(
        "internal error: a reader of positions gave {written} elements for {wanted} positions"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::slots::filled;

    fn site() -> Site {
        Site::new("peeled.rs", 1, 1)
    }

    #[test]
    fn the_parts_cover_every_range_once_in_order() {
        // Slow elements are negative, fast ones positive: each position read by the right one.
        let slow = |lo: usize, hi: usize| (lo..hi).map(|k| -(k as i64));
        let fast = |lo: usize, hi: usize| (lo..hi).map(|k| k as i64);
        for (a, b) in [(0, 10), (2, 8), (3, 3), (-5, 20), (9, 2), (0, 0), (10, 10)] {
            let p = Peeled::new(10, a, b, slow, fast);
            let want: Vec<i64> = (0..10)
                .map(|k| {
                    let fast = (a.max(0)..b.min(10)).contains(&k);
                    if fast { k } else { -k }
                })
                .collect();
            for lo in 0..=10 {
                for hi in lo..=10 {
                    let got: Vec<i64> = p.iter(lo, hi).collect();
                    assert_eq!(got, want[lo..hi], "a={a} b={b} {lo}..{hi}");
                    let folded = p.fold(lo, hi, Vec::new(), |mut v, x| {
                        v.push(x);
                        v
                    });
                    assert_eq!(folded, got);
                    let (filled, ()) = filled(hi - lo, |slots| p.fill(&site(), lo, slots));
                    assert_eq!(filled, got);
                }
            }
        }
    }

    #[test]
    fn a_reader_that_gives_too_few_elements_fails_at_the_site() {
        let slow = |lo: usize, hi: usize| (lo..hi).map(|k| k as i64);
        let fast = |lo: usize, hi: usize| (lo..hi.saturating_sub(1)).map(|k| k as i64);
        let p = Peeled::new(8, 2, 6, slow, fast);
        let r = std::panic::catch_unwind(|| {
            filled(8, |slots| p.fill(&site(), 0, slots));
        });
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<String>().unwrap();
        assert!(
            msg.contains("peeled.rs:1:1") && msg.contains("gave 3 elements for 4 positions"),
            "{msg}"
        );
    }
}
