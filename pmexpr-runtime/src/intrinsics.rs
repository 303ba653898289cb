//! The intrinsics of PMExpr that can fail or that need more than one line of Rust: sequence
//! operations, integer division, and the sequential loops.
//!
//! Every check here is one that safe Rust would make anyway (an index, a division), so it is made
//! in every mode, and a failure is reported at the `accelerate!` site with the reference
//! implementation's wording instead of a bare panic from inside the runtime.

use crate::seq::Seq;
use crate::site::Site;

/// `divi`: integer division rounding toward zero; `i64::MIN / -1` fails, as Rust panics.
#[inline]
pub fn divi(site: &Site, a: i64, b: i64) -> i64 {
    <i64 as crate::numeric::Num>::div(site, a, b)
}

/// `modi`: the remainder of `divi` (the sign follows the dividend); `i64::MIN % -1` fails.
#[inline]
pub fn modi(site: &Site, a: i64, b: i64) -> i64 {
    <i64 as crate::numeric::Num>::rem(site, a, b)
}

/// `floorfi`: the largest integer not above `x` (saturating; NaN gives 0).
#[inline]
pub fn floorfi(x: f64) -> i64 {
    x.floor() as i64
}

#[cold]
fn bad_index(site: &Site, i: i64, len: usize) -> ! {
    if i < 0 {
        site.fail(format_args!("Negative index used to access sequence: {i}"))
    } else {
        site.fail(format_args!(
            "Out of bounds access in sequence: index {i} for a sequence of length {len}"
        ))
    }
}

/// `get s i`.
#[inline]
pub fn get<'s, T>(site: &Site, s: &'s [T], i: i64) -> &'s T {
    // One comparison per access: a negative `i` is at least 2^63 as a `u64`, past the end of any
    // slice of sized elements (at most `isize::MAX` bytes), so only zero-sized ones need the sign
    // test (`size_of` is a constant: the test leaves the other instances). `try_from` fails where
    // `usize` is narrower than `i64`, where a plain `as` would wrap to a valid index.
    match usize::try_from(i as u64).ok().and_then(|u| s.get(u)) {
        Some(x) if size_of::<T>() != 0 || i >= 0 => x,
        _ => bad_index(site, i, s.len()),
    }
}

/// `set s i v`: a sequence equal to `s` but with `v` at `i`. Updates in place when `s` is the only
/// holder of its elements.
#[inline(always)]
pub fn set<'a, T: Clone>(site: &Site, mut s: Seq<'a, T>, i: i64, v: T) -> Seq<'a, T> {
    set_mut(site, &mut s, i, v);
    s
}

/// `set s i v` written into `s` itself: the write of a loop that owns its sequence (the code
/// generator's `write_in_place`), in place when `s` is the only holder of its elements, as
/// [`set`].
#[inline(always)]
pub fn set_mut<T: Clone>(site: &Site, s: &mut Seq<'_, T>, i: i64, v: T) {
    if i < 0 || i as u64 >= s.len() as u64 {
        bad_index(site, i, s.len());
    }
    s.make_mut()[i as usize] = v;
}

/// A loop's own sequence, held unshared for the whole loop (the generator's `views.rs`): its
/// elements read and written as a slice, the uniqueness checked once, when the loop starts.
pub struct View<'v, T>(&'v mut [T]);

impl<'v, T: Clone> View<'v, T> {
    /// The elements of `s` to read and write, copied first unless `s` holds them alone.
    #[inline(always)]
    pub fn of(s: &'v mut Seq<'_, T>) -> Self {
        View(s.make_mut())
    }
}

impl<T> View<'_, T> {
    /// The elements.
    #[inline(always)]
    pub fn as_slice(&self) -> &[T] {
        self.0
    }

    /// The number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// [`set_mut`] through a loop's [`View`]: the write of `a[i] = v`, checked against the length.
#[inline(always)]
pub fn set_view<T>(site: &Site, s: &mut View<'_, T>, i: i64, v: T) {
    if i < 0 || i as u64 >= s.0.len() as u64 {
        bad_index(site, i, s.0.len());
    }
    s.0[i as usize] = v;
}

/// `head s`.
#[inline]
pub fn head<'s, T>(site: &Site, s: &'s [T]) -> &'s T {
    match s.first() {
        Some(x) => x,
        None => site.fail("Head on empty sequence"),
    }
}

/// `tail s`: a view, O(1).
pub fn tail<'a, T>(site: &Site, s: &Seq<'a, T>) -> Seq<'a, T> {
    if s.is_empty() {
        site.fail("Tail on empty sequence");
    }
    s.view(1..s.len())
}

/// `concat a b`.
pub fn concat<'a, T: Clone>(a: &[T], b: &[T]) -> Seq<'a, T> {
    let mut v = Vec::with_capacity(a.len() + b.len());
    v.extend_from_slice(a);
    v.extend_from_slice(b);
    Seq::from_vec(v)
}

/// `reverse s`.
pub fn reverse<'a, T: Clone>(s: &[T]) -> Seq<'a, T> {
    Seq::from_exact_iter(s.iter().rev().cloned())
}

/// `subsequence s offset len`: at most `len` elements from `offset` (a view, O(1)); an offset past
/// the end gives the empty sequence, as in MExpr.
pub fn subsequence<'a, T>(site: &Site, s: &Seq<'a, T>, offset: i64, len: i64) -> Seq<'a, T> {
    if offset < 0 {
        site.fail(format_args!("Subsequence using negative index: {offset}"));
    }
    if len < 0 {
        site.fail(format_args!("Subsequence using negative length: {len}"));
    }
    let start = (offset as u64).min(s.len() as u64) as usize;
    let end = (start as u64)
        .saturating_add(len as u64)
        .min(s.len() as u64) as usize;
    s.view(start..end)
}

/// `foldl f acc s`.
#[inline]
pub fn foldl<A, T>(s: &[T], acc: A, f: impl FnMut(A, &T) -> A) -> A {
    s.iter().fold(acc, f)
}

/// `foldl f acc s` that stops once `settled(acc)` holds. The code generator calls it only for a
/// step function that returns a settled accumulator unchanged, so the result is `foldl`'s.
#[inline]
pub fn foldl_until<A, T>(
    s: &[T],
    acc: A,
    settled: impl Fn(&A) -> bool,
    f: impl FnMut(A, &T) -> A,
) -> A {
    fold_until(s.iter(), acc, settled, f)
}

/// `seq_loop n f`: `f 0; …; f (n-1)` in order.
#[inline]
pub fn seq_loop(n: i64, f: impl FnMut(i64)) {
    (0..n.max(0)).for_each(f)
}

/// `seq_loop_acc acc n f`: `f (… (f (f acc 0) 1) …) (n-1)`.
#[inline]
pub fn seq_loop_acc<A>(acc: A, n: i64, f: impl FnMut(A, i64) -> A) -> A {
    (0..n.max(0)).fold(acc, f)
}

/// `seq_loop_acc acc n f` that stops once `settled(acc)` holds. The code generator calls it only
/// for a step function that returns a settled accumulator unchanged (a bounded `while`), so the
/// result is `seq_loop_acc`'s.
#[inline]
pub fn seq_loop_acc_until<A>(
    acc: A,
    n: i64,
    settled: impl Fn(&A) -> bool,
    f: impl FnMut(A, i64) -> A,
) -> A {
    fold_until(0..n.max(0), acc, settled, f)
}

/// The fold of `xs` into `acc` by `f`, stopped before the first element at which
/// `settled(acc)` holds.
#[inline(always)]
fn fold_until<A, X>(
    xs: impl Iterator<Item = X>,
    mut acc: A,
    settled: impl Fn(&A) -> bool,
    mut f: impl FnMut(A, X) -> A,
) -> A {
    for x in xs {
        if settled(&acc) {
            break;
        }
        acc = f(acc, x);
    }
    acc
}

/// `flatten s`: the concatenation of the inner sequences.
pub fn flatten<'a, T: Clone>(s: &[Seq<'a, T>]) -> Seq<'a, T> {
    let mut v = Vec::with_capacity(flat_len(s));
    for x in s {
        v.extend_from_slice(x);
    }
    Seq::from_vec(v)
}

/// The length of `flatten s`.
#[inline]
pub fn flat_len<T>(s: &[Seq<'_, T>]) -> usize {
    s.iter().map(|x| x.len()).sum()
}

/// The elements `lo..hi` (clamped to the length) of `flatten s`, read from the rows in place:
/// what a consumer that reads the flattened sequence once, in order, takes instead of building
/// it (`hist` over `flatten`).
pub fn flat_range<'s, 'a, T>(s: &'s [Seq<'a, T>], lo: usize, hi: usize) -> FlatRange<'s, 'a, T> {
    let (mut row, mut skip) = (0, lo);
    while row < s.len() && skip >= s[row].len() {
        skip -= s[row].len();
        row += 1;
    }
    let (cur, rest): (&[T], &[Seq<'a, T>]) = match s.get(row) {
        Some(r) => (&r.as_slice()[skip..], &s[row + 1..]),
        None => (&[], &[]),
    };
    let total = hi.saturating_sub(lo);
    let cur = &cur[..cur.len().min(total)];
    FlatRange {
        cur: cur.iter(),
        rows: rest.iter(),
        left: total - cur.len(),
    }
}

/// The iterator of [`flat_range`]: the part of the current row still to give, the rows after
/// it, and how many elements are to come from them. The current part ends where the range
/// does, so that the step within a row is one comparison, as a slice's.
pub struct FlatRange<'s, 'a, T> {
    cur: std::slice::Iter<'s, T>,
    rows: std::slice::Iter<'s, Seq<'a, T>>,
    left: usize,
}

impl<'s, T> FlatRange<'s, '_, T> {
    /// The first element of the next non-empty row, which becomes the current part.
    #[cold]
    fn next_row(&mut self) -> Option<&'s T> {
        while self.left > 0 {
            let r = self.rows.next()?.as_slice();
            let r = &r[..r.len().min(self.left)];
            self.left -= r.len();
            self.cur = r.iter();
            if let Some(x) = self.cur.next() {
                return Some(x);
            }
        }
        None
    }
}

impl<'s, T> Iterator for FlatRange<'s, '_, T> {
    type Item = &'s T;

    #[inline]
    fn next(&mut self) -> Option<&'s T> {
        match self.cur.next() {
            Some(x) => Some(x),
            None => self.next_row(),
        }
    }
}

/// `never!()`: a branch the program asserts is unreachable was reached. (Typed `T` rather than
/// `!`, so that generated code can use it where a value of a known type is expected.)
#[cold]
pub fn never<T>(site: &Site) -> T {
    site.fail("reached `never!()`")
}

/// No arm of a `match` (or pattern of a `let`) matched: `match` inside `accelerate!` is not
/// checked for exhaustiveness.
#[cold]
pub fn no_match<T>(site: &Site) -> T {
    site.fail("no pattern matched the value (`match` inside `accelerate!` is not checked for exhaustiveness)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_range_reads_the_rows_in_place() {
        let rows: Vec<Seq<'static, i64>> = [vec![1, 2], vec![], vec![3], vec![4, 5, 6]]
            .into_iter()
            .map(Seq::from_vec)
            .collect();
        let flat = flatten(&rows).into_vec();
        assert_eq!(flat_len(&rows), flat.len());
        for lo in 0..=flat.len() + 1 {
            for hi in 0..=flat.len() + 1 {
                let got: Vec<i64> = flat_range(&rows, lo, hi).copied().collect();
                let want = flat.get(lo..hi.min(flat.len())).unwrap_or(&[]);
                assert_eq!(got, want, "{lo}..{hi}");
            }
        }
        assert_eq!(flat_range::<i64>(&[], 0, 3).count(), 0);
    }

    const SITE: Site = Site::new("i.rs", 2, 3);

    fn message<R>(f: impl FnOnce() -> R) -> String {
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .err()
            .expect("fails");
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    #[test]
    fn division() {
        assert_eq!(divi(&SITE, -7, 2), -3);
        assert_eq!(modi(&SITE, -7, 2), -1);
        assert_eq!(divi(&SITE, i64::MIN + 1, -1), i64::MAX);
        // Rust panics on these in every build.
        assert!(message(|| divi(&SITE, i64::MIN, -1)).ends_with("attempt to divide with overflow"));
        assert!(
            message(|| modi(&SITE, i64::MIN, -1))
                .ends_with("attempt to calculate the remainder with overflow")
        );
        // `modi` is Rust's remainder (sign of the dividend) at the edges of `i64`.
        let edges = [
            i64::MIN,
            i64::MIN + 1,
            -7,
            -2,
            -1,
            1,
            2,
            3,
            7,
            i64::MAX - 1,
            i64::MAX,
        ];
        for a in edges.iter().copied().chain([0]) {
            for b in edges.into_iter().filter(|&b| (a, b) != (i64::MIN, -1)) {
                assert_eq!(modi(&SITE, a, b), a.wrapping_rem(b), "{a} % {b}");
            }
        }
        assert_eq!(
            message(|| divi(&SITE, 1, 0)),
            "pmexpr: accelerate! at i.rs:2:3: Division by zero"
        );
        assert!(message(|| modi(&SITE, 1, 0)).ends_with("Division by zero"));
        assert_eq!(floorfi(-1.5), -2);
    }

    #[test]
    fn sequence_access() {
        let s = Seq::from_vec(vec![1_i64, 2, 3]);
        assert_eq!(*get(&SITE, &s, 2), 3);
        assert!(message(|| *get(&SITE, &s, 3)).contains("Out of bounds access in sequence"));
        assert!(message(|| *get(&SITE, &s, -1)).contains("Negative index used to access sequence"));
        assert!(message(|| *get(&SITE, &s, i64::MIN)).contains("Negative index"));
        // Zero-sized elements: no length bounds a negative index once it is a `u64`.
        let units = vec![(); usize::MAX];
        assert_eq!(*get(&SITE, &units, i64::MAX), ());
        assert!(message(|| *get(&SITE, &units, -1)).contains("Negative index"));
        assert_eq!(&*set(&SITE, s.clone(), 0, 9), &[9, 2, 3]);
        assert_eq!(&*s, &[1, 2, 3], "set does not change its argument");
        assert!(message(|| set(&SITE, s.clone(), 5, 0)).contains("Out of bounds"));
        assert_eq!(*head(&SITE, &s), 1);
        assert_eq!(&*tail(&SITE, &s), &[2, 3]);
        let e: Seq<i64> = Seq::empty();
        assert_eq!(
            message(|| *head(&SITE, &e)),
            "pmexpr: accelerate! at i.rs:2:3: Head on empty sequence"
        );
        assert!(message(|| tail(&SITE, &e)).contains("Tail on empty sequence"));
    }

    #[test]
    fn building_sequences() {
        let s = Seq::from_vec(vec![1_i64, 2, 3, 4]);
        assert_eq!(&*concat(&s, &[5]), &[1, 2, 3, 4, 5]);
        assert_eq!(&*reverse(&s), &[4, 3, 2, 1]);
        assert_eq!(&*subsequence(&SITE, &s, 1, 2), &[2, 3]);
        assert_eq!(&*subsequence(&SITE, &s, 3, 10), &[4]);
        assert!(subsequence(&SITE, &s, 9, 1).is_empty());
        assert!(
            message(|| subsequence(&SITE, &s, -1, 1)).contains("Subsequence using negative index")
        );
        assert!(
            message(|| subsequence(&SITE, &s, 0, -1)).contains("Subsequence using negative length")
        );
        assert_eq!(foldl(&s, 0, |a, x| a * 10 + x), 1234);
        assert_eq!(seq_loop_acc(1, 4, |a, i| a * (i + 1)), 24);
        let nested = vec![
            Seq::from_vec(vec![1_i64]),
            Seq::empty(),
            Seq::from_vec(vec![2, 3]),
        ];
        assert_eq!(&*flatten(&nested), &[1, 2, 3]);
        let mut seen = vec![];
        seq_loop(3, |i| seen.push(i));
        assert_eq!(seen, vec![0, 1, 2]);
    }
}
