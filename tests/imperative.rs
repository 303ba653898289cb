//! Imperative Rust inside `accelerate!`: mutable locals, assignment and compound assignment (to
//! locals and to fields of tuple and record locals), `if`/`match` whose arms assign, `for` over
//! ranges and sequences, `while`, `loop` with `break`, `break value` and `continue`, `return`
//! from a `fn` or a closure. Each construct runs on every target — at the top of a site, inside
//! the function of `map` (a Futhark-class site) and inside a `par_loop` (a CUDA-class site,
//! through `#[pmexpr]` functions, which are ordinary Rust functions too) — and agrees with the
//! same tokens compiled as plain Rust ([`same!`]). `wide`: code as wide as rustc builds.

mod common;
mod wide;

use std::ops::Index;

use common::{cuda_targets, on_every_target, ran_on_futhark, same_failure};
use pmexpr::cuda::launches_on_this_thread;
use pmexpr::{Record, Tensor, accelerate, pmexpr, with_target};

/// Runs a block as plain Rust and inside `accelerate!` on every target (see
/// [`common::on_every_target`]), checks that they agree, and returns the value. The captured
/// sequences are listed first: plain Rust sees each through [`Ix`], which indexes and measures
/// with `i64`, as PMExpr does.
macro_rules! same {
    ([$($seq:ident),*] $acc:ident ! (backend = $b:ident, { $($t:tt)* })) => {{
        #[allow(unused_mut, unused_assignments, clippy::all)]
        let plain = { $(let $seq = Ix(&$seq);)* { $($t)* } };
        let accelerated = on_every_target(|| like(&plain, $acc!(backend = $b, { $($t)* })));
        assert_eq!(accelerated, plain);
        plain
    }};
    ([$($seq:ident),*] $acc:ident ! ({ $($t:tt)* })) => {{
        #[allow(unused_mut, unused_assignments, clippy::all)]
        let plain = { $(let $seq = Ix(&$seq);)* { $($t)* } };
        let accelerated = on_every_target(|| like(&plain, $acc!({ $($t)* })));
        assert_eq!(accelerated, plain);
        plain
    }};
}

/// `v`, of the type of `_model` (the result of a site converts to the type asked of it).
fn like<T>(_model: &T, v: T) -> T {
    v
}

/// A sequence as PMExpr sees it, for the plain-Rust side of [`same!`]: indexed by `i64` or
/// `usize`, its length and its `iter().enumerate()` counting in Rust's `usize`.
#[derive(Clone, Copy)]
struct Ix<'a, T>(&'a [T]);

impl<T> Index<i64> for Ix<'_, T> {
    type Output = T;
    fn index(&self, i: i64) -> &T {
        &self.0[usize::try_from(i).expect("an index")]
    }
}

impl<T> Index<usize> for Ix<'_, T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.0[i]
    }
}

impl<'a, T> Ix<'a, T> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn iter(&self) -> Elements<'a, T> {
        Elements(self.0.iter())
    }

    fn to_vec(&self) -> Vec<T>
    where
        T: Clone,
    {
        self.0.to_vec()
    }
}

impl<'a, T: Copy> IntoIterator for Ix<'a, T> {
    type Item = T;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, T>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().copied()
    }
}

/// `Ix::iter`: `&T`s.
struct Elements<'a, T>(std::slice::Iter<'a, T>);

impl<'a, T> Iterator for Elements<'a, T> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        self.0.next()
    }
}

/// Checks that `f` launches `kernels` kernels on each CUDA target (it runs there, not on the
/// CPU).
fn launches<T>(kernels: u64, f: impl Fn() -> T) {
    for t in cuda_targets() {
        let before = launches_on_this_thread();
        with_target(t, &f);
        assert_eq!(
            launches_on_this_thread() - before,
            kernels,
            "kernels on {t}"
        );
    }
}

/// PMExpr's `create` for the plain-Rust side.
fn create<B>(n: i64, f: impl Fn(i64) -> B) -> Vec<B> {
    (0..n).map(f).collect()
}

/// PMExpr's `map` for the plain-Rust side.
fn map<A: Copy, B>(f: impl Fn(A) -> B, s: Ix<'_, A>) -> Vec<B> {
    s.0.iter().map(|&x| f(x)).collect()
}

// ----- mutable locals and assignment -----

#[test]
fn mutable_locals_and_compound_assignment() {
    let (a, b) = (17_i64, 5_i64);
    same!([] accelerate!(backend = cpu, {
        let mut x = a;
        x += b;
        x -= 3;
        x *= b;
        x /= 2;
        x %= 11;
        let mut y: i64 = x * 2;
        y = y + x;
        x = y - x;
        (x, y)
    }));
    let f = 2.5_f64;
    same!([] accelerate!(backend = cpu, {
        let mut g = f;
        g *= g;
        g -= 0.25;
        g /= 2.0;
        g
    }));
    // `bool`s: `&=`, `|=` and `^=` evaluate their right-hand side whatever the left one is.
    same!([] accelerate!(backend = cpu, {
        let mut all = true;
        let mut any = false;
        let mut odd = false;
        all &= a > 3;
        all &= b > 7;
        any |= a > 20;
        any |= b > 1;
        odd ^= a > 3;
        odd ^= b > 3;
        (all, any, odd)
    }));
    // Integers: the bit operators' compound assignments, shifts by any integer amount.
    same!([] accelerate!(backend = cpu, {
        let mut h = a;
        h <<= 3;
        h |= b;
        h ^= 0x55;
        h &= 0xff0;
        h >>= b - 3;
        let mut w = -a;
        w >>= 2;
        w <<= 60;
        (h, w)
    }));
}

#[test]
fn the_right_hand_side_is_evaluated_first() {
    let a = 3_i64;
    same!([] accelerate!(backend = cpu, {
        let mut x = a;
        x += {
            x = 10;
            1
        };
        let mut y = x;
        let z = y + {
            y = 100;
            y
        };
        (x, y, z)
    }));
}

#[test]
fn shadowing_a_mutable_local_keeps_it() {
    let a = 3_i64;
    same!([] accelerate!(backend = cpu, {
        let mut x = a;
        let mut total: i64 = 0;
        for i in 0..4 {
            x += i;
            let x = 1000;
            total += x;
        }
        let y = {
            let x = 7;
            x * 2
        };
        (x, total, y)
    }));
}

#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct Body {
    x: f64,
    v: f64,
}

#[test]
fn fields_of_tuples_and_records() {
    let n = 4_i64;
    same!([] accelerate!(backend = cpu, {
        let mut p = (1, 2.5, true);
        p.0 += n;
        p.1 = p.1 * 2.0;
        p.2 = !p.2;
        let mut q = ((1, 2), 3);
        q.0.1 *= 10;
        (p, q)
    }));
    let b0 = Body { x: 1.0, v: 0.5 };
    same!([] accelerate!(backend = cpu, {
        let mut b = b0;
        for _ in 0..n {
            b.x += b.v;
            b.v *= 0.9;
        }
        b
    }));
}

#[test]
fn if_and_match_arms_assign() {
    let s: Vec<i64> = vec![3, -1, 4, 1, -5, 9, 2, 6, 0, -3];
    same!([s] accelerate!(backend = cpu, {
        let mut pos: i64 = 0;
        let mut neg: i64 = 0;
        let mut zero: i64 = 0;
        let mut last = 0;
        for x in s {
            if x > 0 {
                pos += x;
            } else if x < 0 {
                neg -= x;
            } else {
                zero += 1;
            }
            last = match x % 3 {
                0 => {
                    zero += 10;
                    x
                }
                1 | -1 => last + 1,
                _ => last,
            };
        }
        (pos, neg, zero, last)
    }));
}

// ----- `for` -----

#[test]
fn for_over_ranges() {
    let (a, b) = (-3_i64, 11_i64);
    same!([] accelerate!(backend = cpu, {
        let mut up: i64 = 0;
        for i in a..b {
            up = up * 3 % 1000 + i;
        }
        let mut incl: i64 = 0;
        for i in a..=b {
            incl = incl * 3 % 1000 + i;
        }
        let mut down: i64 = 0;
        for i in (a..b).rev() {
            down = down * 3 % 1000 + i;
        }
        let mut incl_down: i64 = 0;
        for i in (a..=b).rev() {
            incl_down = incl_down * 3 % 1000 + i;
        }
        let mut stepped: i64 = 0;
        for i in (a..b).step_by(3) {
            stepped = stepped * 3 % 1000 + i;
        }
        let mut stepped_incl: i64 = 0;
        for i in (a..=b).step_by(7) {
            stepped_incl = stepped_incl * 3 % 1000 + i;
        }
        let mut stepped_down: i64 = 0;
        for i in (a..b).rev().step_by(4) {
            stepped_down = stepped_down * 3 % 1000 + i;
        }
        let mut empty: i64 = 0;
        for i in b..a {
            empty += i;
        }
        for i in (b..=a).rev() {
            empty += i;
        }
        (up, incl, down, incl_down, stepped, stepped_incl, stepped_down, empty)
    }));
}

#[test]
fn for_over_sequences() {
    let s: Vec<i64> = (0..50).map(|i| (i * 37) % 23 - 11).collect();
    let e: Vec<i64> = vec![];
    same!([s, e] accelerate!(backend = cpu, {
        let mut a: i64 = 0;
        for x in s {
            a = a * 7 % 10007 + x;
        }
        let mut b: i64 = 0;
        for &x in s.iter() {
            b += x * x;
        }
        let mut c: i64 = 0;
        for (i, &x) in s.iter().enumerate() {
            c += i as i64 * x;
        }
        let mut d: i64 = 0;
        for x in e {
            d += x;
        }
        (a, b, c, d)
    }));
    let ps: Vec<(i64, f64)> = (0..20).map(|i| (i, i as f64 / 4.0)).collect();
    same!([ps] accelerate!(backend = cpu, {
        let mut acc = 0.0;
        for (k, w) in ps {
            if k % 2 == 0 {
                acc += w;
            }
        }
        acc
    }));
}

/// `enumerate`'s index is Rust's `usize` in every spelling that gives one, inside closures too,
/// and indexes a sequence as Rust's does.
#[test]
fn the_index_of_enumerate_is_a_usize() {
    let s: Vec<i64> = (0..40).map(|i| (i * 29) % 17 - 8).collect();
    let qs: Vec<i64> = vec![-8, 0, 3, 100];
    let e: Vec<i64> = vec![];
    same!([s, e] accelerate!(backend = cpu, {
        let mut n: usize = 0;
        for (j, _x) in s.iter().enumerate() {
            n += j;
        }
        let mut m: usize = 0;
        for (j, &x) in s.iter().enumerate() {
            if x > 0 {
                m += j * 2;
            }
        }
        let mut t: i64 = 0;
        for (j, x) in s.into_iter().enumerate() {
            t += x * s[j] + s[s.len() - 1 - j];
        }
        let mut u: usize = 0;
        for (j, x) in s.iter().copied().enumerate() {
            if x < 0 {
                u = j;
            }
        }
        let mut w: usize = 7;
        for (j, _) in e.iter().enumerate() {
            w += j;
        }
        (n, m, t, u, w)
    }));
    // Inside a closure that `map` calls.
    same!([s, qs] accelerate!(backend = cpu, {
        map(
            |q| {
                let mut last: usize = s.len();
                for (j, &x) in s.iter().enumerate() {
                    if x == q {
                        last = j;
                    }
                }
                last
            },
            qs,
        )
    }));
    // The result asked as a `usize`, on every target.
    let n: usize = on_every_target(|| {
        accelerate!(backend = cpu, {
            let mut n: usize = 0;
            for (j, _x) in s.iter().enumerate() {
                n += j;
            }
            n
        })
    });
    assert_eq!(n, (0..s.len()).sum::<usize>());
}

#[test]
fn nested_for_loops() {
    let n = 9_i64;
    same!([] accelerate!(backend = cpu, {
        let mut count: i64 = 0;
        let mut sum: i64 = 0;
        for i in 0..n {
            for j in i..n {
                if (i + j) % 3 == 0 {
                    count += 1;
                    sum += i * j;
                }
            }
        }
        (count, sum)
    }));
}

// ----- `while`, `loop`, `break`, `continue` -----

#[test]
fn while_loops() {
    let n = 27_i64;
    same!([] accelerate!(backend = cpu, {
        let mut x = n;
        let mut steps: i64 = 0;
        while x != 1 {
            x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
            steps += 1;
        }
        steps
    }));
    same!([] accelerate!(backend = cpu, {
        let mut i: i64 = 0;
        let mut s: i64 = 0;
        while i < 100 {
            i += 1;
            if i % 3 == 0 {
                continue;
            }
            if s > 1000 {
                break;
            }
            s += i;
        }
        (i, s)
    }));
}

#[test]
fn loop_with_break_values() {
    let n = 1000_i64;
    same!([] accelerate!(backend = cpu, {
        let mut k: i64 = 1;
        let first = loop {
            k += 1;
            if k * k > n {
                break k;
            }
        };
        let mut j: i64 = 0;
        let found = loop {
            j += 1;
            if j > 50 {
                break false;
            }
            if j % 7 == 0 && j % 5 == 0 {
                break true;
            }
        };
        (first, k, found, j)
    }));
}

#[test]
fn break_and_continue_in_for_loops() {
    let s: Vec<i64> = vec![5, 8, -2, 7, 0, 3, 12, -9, 4];
    same!([s] accelerate!(backend = cpu, {
        let mut sum: i64 = 0;
        let mut seen: i64 = 0;
        for &x in s.iter() {
            if x < 0 {
                continue;
            }
            seen += 1;
            if x > 10 {
                break;
            }
            sum += x;
        }
        let mut first_zero: i64 = -1;
        for (i, &x) in s.iter().enumerate() {
            if x == 0 {
                first_zero = i as i64;
                break;
            }
        }
        (sum, seen, first_zero)
    }));
}

#[test]
fn labelled_loops() {
    let n = 6_i64;
    same!([] accelerate!(backend = cpu, {
        let mut total: i64 = 0;
        'outer: for i in 0..n {
            if i == 4 {
                break 'outer;
            }
            'inner: for j in 0..n {
                if j > i {
                    break 'inner;
                }
                if j == 1 {
                    continue 'inner;
                }
                total += i * 10 + j;
            }
        }
        total
    }));
}

#[test]
fn while_let_loops() {
    let n = 40_i64;
    // Runs while the pattern matches: a literal in a tuple, its other parts bound.
    same!([] accelerate!(backend = cpu, {
        let mut state = (true, n, 0_i64);
        let mut steps = 0;
        'run: while let (true, x, acc) = state {
            steps += 1;
            if steps > 1_000 {
                break 'run;
            }
            if x % 7 == 3 {
                state = (true, x - 1, acc);
                continue;
            }
            state = (x > 1, x / 2 + x % 3, acc + x);
        }
        (state, steps)
    }));
}

#[test]
fn jumps_to_outer_loops() {
    let n = 7_i64;
    // `continue 'rows` and `break 'rows` from an inner loop, with state in both loops.
    same!([] accelerate!(backend = cpu, {
        let mut s: i64 = 0;
        let mut rows = 0;
        'rows: for i in 0..n {
            let mut k = 0;
            for j in 0..n {
                if j > i {
                    continue 'rows;
                }
                if i * j == 20 {
                    break 'rows;
                }
                k += 1;
                s += i * 100 + j;
            }
            rows += k;
        }
        (s, rows)
    }));
    // Three levels: from the innermost to each loop around it, in `while` and `loop` too.
    same!([] accelerate!(backend = cpu, {
        let mut log: i64 = 0;
        let mut a = 0;
        'a: while a < n {
            a += 1;
            let mut b = 0;
            'b: loop {
                b += 1;
                if b > a {
                    break;
                }
                for c in (0..n).rev() {
                    if c == b {
                        continue 'b;
                    }
                    if c + b == 9 {
                        continue 'a;
                    }
                    if a * b * c == 60 {
                        break 'a;
                    }
                    if c < 2 {
                        break 'b;
                    }
                    log = log * 3 % 1_000_003 + a * 49 + b * 7 + c;
                }
            }
        }
        (log, a)
    }));
}

/// A `#[pmexpr]` function whose loop carries a sequence it writes, called by `map`: a loop in
/// every position, whatever its trip count.
#[pmexpr]
fn spin_counts(n: i64) -> i64 {
    let mut a = [0i64; 4];
    let mut i = 0;
    while i < n {
        a[(i % 4) as usize] += i % 3;
        i += 1;
    }
    a[0] * 1_000_000 + a[3]
}

#[test]
fn a_pmexpr_function_loop_carries_a_sequence() {
    let ns: Vec<i64> = vec![0, 5, 1_000_003, 2_000_000];
    let want: Vec<i64> = ns.iter().map(|&n| spin_counts(n)).collect();
    on_every_target(|| {
        let got: Vec<i64> = accelerate!(map(|n: i64| spin_counts(n), ns));
        assert_eq!(got, want);
    });
}

/// A search with `continue 'outer`, as a `#[pmexpr]` function called by `map`: every target,
/// Futhark's and CUDA's loops included.
#[pmexpr]
fn first_divisor_pair(n: i64) -> i64 {
    let mut found = -1;
    'outer: for a in 2..n {
        for b in 2..n {
            if a * b > n {
                continue 'outer;
            }
            if a * b == n {
                found = a * 1000 + b;
                break 'outer;
            }
        }
    }
    found
}

/// `return` from two and three loops deep, with a tuple result, and a `return;` of a unit `fn`
/// inside a `fn` item of a block.
#[pmexpr]
fn find_pair(n: i64) -> (i64, i64) {
    for a in 1..n {
        let mut b = a;
        while b < n {
            if a * b == n && a != b {
                return (a, b);
            }
            for c in 0..3 {
                if a * b * c > 2 * n {
                    return (-a, c);
                }
            }
            b += 1;
        }
    }
    (0, 0)
}

#[test]
fn return_from_nested_loops() {
    let xs: Vec<i64> = (1..90).collect();
    let want: Vec<(i64, i64)> = xs.iter().map(|&x| find_pair(x)).collect();
    let got: Vec<(i64, (i64, i64))> = on_every_target(|| {
        accelerate!(map(
            |x| {
                fn smallest_square_above(n: i64) -> i64 {
                    let mut k = 0;
                    loop {
                        for d in 0..2 {
                            if (k + d) * (k + d) > n {
                                return k + d;
                            }
                        }
                        k += 2;
                    }
                }
                (smallest_square_above(x), find_pair(x))
            },
            xs
        ))
    });
    let squares: Vec<i64> = xs
        .iter()
        .map(|&x| (0..).find(|k: &i64| k * k > x).expect("some square"))
        .collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), squares);
    assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), want);
    assert_eq!(find_pair(12), (2, 6));
}

#[test]
fn jumps_to_outer_loops_in_functions_on_every_target() {
    let xs: Vec<i64> = (1..120).collect();
    let want: Vec<i64> = xs.iter().map(|&x| first_divisor_pair(x)).collect();
    let got: Vec<i64> = on_every_target(|| accelerate!(map(first_divisor_pair, xs)));
    assert_eq!(got, want);
    assert_eq!(first_divisor_pair(91), 7013);
}

// ----- `return` -----

#[test]
fn return_from_fns_and_closures() {
    let s: Vec<i64> = vec![4, 9, 16, 25, 36, 49];
    same!([s] accelerate!(backend = cpu, {
        fn first_divisor(n: i64) -> i64 {
            for d in 2..n {
                if n % d == 0 {
                    return d;
                }
            }
            n
        }
        let position = |x: i64| -> i64 {
            for i in 0..s.len() {
                if s[i] == x {
                    return i as i64;
                }
            }
            -1
        };
        let clamp = |x: i64| -> i64 {
            if x < 10 {
                return 10;
            }
            if x > 30 {
                return 30;
            }
            x
        };
        (position(25), position(7), first_divisor(91), first_divisor(13), clamp(3), clamp(20), clamp(40))
    }));
}

#[test]
fn mutable_parameters() {
    let s: Vec<i64> = vec![12, 7, 100, 1, 64];
    same!([s] accelerate!({
        fn digits(mut x: i64) -> i64 {
            let mut d: i64 = 1;
            while x >= 10 {
                x /= 10;
                d += 1;
            }
            d
        }
        map(|mut x: i64| {
            let n = digits(x);
            x *= 2;
            x + n
        }, s)
    }));
}

// ----- inside `map`: Futhark-class sites -----

#[test]
fn loops_inside_map() {
    let s: Vec<i64> = (1..200).collect();
    let got = same!([s] accelerate!({
        map(|n: i64| {
            let mut x = n;
            let mut steps: i64 = 0;
            while x != 1 {
                if x % 2 == 0 {
                    x /= 2;
                } else {
                    x = 3 * x + 1;
                }
                steps += 1;
            }
            let mut divisors: i64 = 0;
            for d in 1..=n {
                if d * d > n {
                    break;
                }
                if n % d == 0 {
                    divisors += 1;
                }
            }
            steps * 1000 + divisors
        }, s)
    }));
    assert_eq!(got[26], 111 * 1000 + 2);
}

fn collatz_site(s: &[i64]) -> Vec<i64> {
    accelerate!(map(
        |n: i64| {
            let mut x = n;
            let mut steps = 0;
            while x != 1 {
                x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
                steps += 1;
            }
            steps
        },
        s
    ))
}

#[test]
fn a_futhark_class_site_with_a_while_loop_runs_on_futhark() {
    let s: Vec<i64> = (1..300).collect();
    let got = on_every_target(|| collatz_site(&s));
    assert_eq!(got[26], 111);
    ran_on_futhark(1, || collatz_site(&s));
}

// ----- inside `par_loop`: CUDA-class sites -----

/// The number of steps of the Collatz sequence from `n` to 1: a `while` loop.
#[pmexpr]
fn collatz(n: i64) -> i64 {
    let mut x = n;
    let mut steps: i64 = 0;
    while x != 1 {
        if x % 2 == 0 {
            x /= 2;
        } else {
            x = 3 * x + 1;
        }
        steps += 1;
    }
    steps
}

/// Whether `n` is prime: a `for` loop with an early `return`.
#[pmexpr]
fn is_prime(n: i64) -> bool {
    if n < 2 {
        return false;
    }
    for d in 2..n {
        if d * d > n {
            break;
        }
        if n % d == 0 {
            return false;
        }
    }
    true
}

/// The integer square root by bisection: `loop` with `break` values and tuple state.
#[pmexpr]
fn isqrt(n: i64) -> i64 {
    let (mut lo, mut hi) = (0, n + 1);
    loop {
        if hi - lo <= 1 {
            break lo;
        }
        let mid = (lo + hi) / 2;
        if mid * mid <= n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

/// A digit sum with `continue` over a reversed, stepped range.
#[pmexpr]
fn odd_digit_sum(mut n: i64) -> i64 {
    let mut s = 0;
    for _ in (0..20).rev().step_by(1) {
        if n == 0 {
            break;
        }
        let d = n % 10;
        n /= 10;
        if d % 2 == 0 {
            continue;
        }
        s += d;
    }
    s
}

#[test]
fn pmexpr_functions_with_loops_agree_with_rust() {
    let xs: Vec<i64> = (1..400).collect();
    let want: Vec<(i64, bool, i64, i64)> = xs
        .iter()
        .map(|&x| (collatz(x), is_prime(x), isqrt(x), odd_digit_sum(x)))
        .collect();
    let got: Vec<(i64, bool, i64, i64)> = on_every_target(|| {
        accelerate!(map(
            |x| (collatz(x), is_prime(x), isqrt(x), odd_digit_sum(x)),
            xs
        ))
    });
    assert_eq!(got, want);
    assert_eq!(isqrt(99), 9);
    assert!(is_prime(97) && !is_prime(91));
}

#[test]
fn loops_inside_cuda_kernels() {
    let n = 300_usize;
    let run = || {
        let input = Tensor::<i64>::from_vec((1..=n as i64).collect(), &[n]);
        let out = Tensor::<i64>::zeros(&[n, 4]);
        let m = n as i64;
        accelerate!(par_loop(m, |i| {
            let x = tensor_get(input, [i]);
            tensor_set(out, [i, 0], collatz(x));
            tensor_set(out, [i, 1], if is_prime(x) { 1 } else { 0 });
            tensor_set(out, [i, 2], isqrt(x));
            tensor_set(out, [i, 3], odd_digit_sum(x));
        }));
        out.to_vec()
    };
    let got = on_every_target(run);
    launches(1, run);
    let want: Vec<i64> = (1..=n as i64)
        .flat_map(|x| [collatz(x), is_prime(x) as i64, isqrt(x), odd_digit_sum(x)])
        .collect();
    assert_eq!(got, want);
}

#[test]
fn imperative_code_written_in_the_kernel() {
    let n = 64_usize;
    let run = || {
        let out = Tensor::<f64>::zeros(&[n]);
        let m = n as i64;
        accelerate!(par_loop(m, |i| {
            let mut acc = 0.0;
            let mut k = 0;
            while k <= i {
                acc += 1.0 / (k + 1) as f64;
                k += 1;
            }
            for j in (0..i).step_by(2) {
                if j > 20 {
                    break;
                }
                acc -= 0.01;
            }
            tensor_set(out, [i], acc);
        }));
        out.to_vec()
    };
    let got = on_every_target(run);
    launches(1, run);
    let want: Vec<f64> = (0..n as i64)
        .map(|i| {
            let mut acc = 0.0;
            let mut k = 0;
            while k <= i {
                acc += 1.0 / (k + 1) as f64;
                k += 1;
            }
            for j in (0..i).step_by(2) {
                if j > 20 {
                    break;
                }
                acc -= 0.01;
            }
            acc
        })
        .collect();
    assert_eq!(got, want);
}

/// PMExpr's `par_loop` and tensor intrinsics as plain Rust, for the plain side of
/// [`same_par!`]: the same tokens run as a sequential loop over `Tensor`'s own accessors.
mod plain {
    use pmexpr::{Element, Tensor};

    pub fn par_loop(n: i64, f: impl Fn(i64)) {
        (0..n).for_each(f)
    }

    pub fn seq_loop(n: i64, f: impl FnMut(i64)) {
        (0..n).for_each(f)
    }

    fn at<const N: usize>(ix: [i64; N]) -> [usize; N] {
        ix.map(|i| usize::try_from(i).expect("an index"))
    }

    pub fn tensor_get<T: Element, const N: usize>(t: &Tensor<T>, ix: [i64; N]) -> T {
        t.get(&at(ix)).expect("an index in range")
    }

    pub fn tensor_set<T: Element, const N: usize>(t: &Tensor<T>, ix: [i64; N], v: T) {
        t.set(&at(ix), v).expect("an index in range")
    }
}

/// Runs `par_loop(…)` as plain Rust ([`plain`]) and inside `accelerate!` on every target, each
/// over fresh copies of the tensors it writes, `ts` (the sequences `seqs` seen through [`Ix`],
/// the tensors it only reads, `rs`, through references by plain Rust); checks that the written
/// tensors end equal, that the CUDA targets run the loop as one kernel, and returns their
/// elements.
macro_rules! same_par {
    ([$($seq:ident),*] [$($r:ident),*] [$($t:ident),*] $acc:ident ! ($($body:tt)*)) => {{
        let plain = {
            $(let $seq = Ix(&$seq);)*
            $(let $r = &$r;)*
            $(let $t = &$t.clone();)*
            #[allow(unused_variables, unused_mut, unused_assignments, clippy::all)]
            {
                use plain::*;
                $($body)*;
            }
            ($($t.to_vec(),)*)
        };
        let run = || {
            $(let $t = $t.clone();)*
            $acc!($($body)*);
            ($($t.to_vec(),)*)
        };
        assert_eq!(on_every_target(run), plain);
        launches(1, run);
        plain
    }};
}

/// Loops of every kind inside a `par_loop`'s body that read and write tensors: each is a
/// function of its state inside the loop's body (Rust's `fn` item, a loop inside the kernel),
/// which takes what it reads as parameters.
#[test]
fn loops_in_a_par_loop_body_read_and_write_tensors() {
    let n = 6_usize;
    let m = n as i64;
    let u = Tensor::<i64>::from_fn(&[n], |ix| ix[0] as i64 * 3 - 4);
    let grid = Tensor::<i64>::from_fn(&[4, n], |ix| (ix[0] * 7 + ix[1]) as i64 % 5);
    let t = Tensor::<i64>::zeros(&[n]);
    let w = Tensor::<i64>::zeros(&[n, 4]);
    let s: Vec<i64> = vec![2, -1, 5];
    // `for` over a range, reading `u` at the loop's own index (the reproducer).
    let (got,) = same_par!([] [u] [t] accelerate!(par_loop(3i64, |i| tensor_set(t, [i], {
        let mut m = 0i64;
        for j in 0..2 {
            m += tensor_get(u, [i]);
        }
        m
    }))));
    assert_eq!(got, [-8, -2, 4, 0, 0, 0]);
    // `for` over a sequence, and over a range reading a column of `grid` (a strided line).
    same_par!([s] [u, grid] [t] accelerate!(par_loop(m, |i| {
        let mut acc = 0i64;
        for x in s {
            acc += x * tensor_get(u, [i]);
        }
        for r in 0..4 {
            acc += tensor_get(grid, [r, i]);
        }
        tensor_set(t, [i], acc)
    })));
    // `while` that writes a row of `w`, and `loop` with `break value`.
    same_par!([] [u, grid] [t, w] accelerate!(par_loop(m, |i| {
        let mut k = 0i64;
        while k < 4 {
            tensor_set(w, [i, k], tensor_get(u, [i]) * k + tensor_get(grid, [k, i]));
            k += 1;
        }
        let mut c = 0i64;
        let found = loop {
            if tensor_get(u, [i]) + c * 2 > 5 {
                break c;
            }
            c += 1;
        };
        tensor_set(t, [i], found)
    })));
    // Nested loops, the inner one reading what the outer one writes, and `break`/`continue`.
    same_par!([] [u] [w] accelerate!(par_loop(m, |i| {
        for j in 0..4 {
            let mut l = 0i64;
            while l < 3 {
                l += 1;
                if l == 2 {
                    continue;
                }
                tensor_set(w, [i, j], tensor_get(w, [i, j]) + tensor_get(u, [i]) * l);
            }
            if tensor_get(w, [i, j]) > 20 {
                break;
            }
        }
    })));
    // In a `seq_loop` inside the body too.
    same_par!([] [u] [t] accelerate!(par_loop(m, |i| {
        seq_loop(3, |k| {
            let mut x = tensor_get(t, [i]);
            for j in 0..k {
                x += tensor_get(u, [i]) + j;
            }
            tensor_set(t, [i], x)
        })
    })));
}

/// The same loops inside the element function of `map` and `create`, reading captured sequences
/// (a Futhark-class site: the functions of their state are loops of the element function).
#[test]
fn loops_in_element_functions_read_captured_sequences() {
    let s: Vec<i64> = (0..40).map(|x| (x * 13) % 17 - 3).collect();
    let k: Vec<i64> = vec![3, 1, 4];
    let n = 20_i64;
    let v: Vec<i64> = (0..n).collect();
    same!([s, k, v] accelerate!({
        map(|x: i64| {
            let mut acc = 0i64;
            for j in 0..3 {
                acc += s[x + j] * k[j];
            }
            for y in k {
                acc -= y;
            }
            let mut l = 0i64;
            while l < 2 {
                acc += s[l];
                l += 1;
            }
            acc
        }, v)
    }));
    same!([s, k] accelerate!({
        create(n, |i: i64| {
            let mut c = 0i64;
            let first = loop {
                if s[i + c] > 5 || c > 10 {
                    break c;
                }
                c += 1;
            };
            let mut total = 0i64;
            for a in 0..2 {
                for b in 0..3i64 {
                    total += s[i + a] * k[b];
                }
            }
            first * 1000 + total
        })
    }));
    // Captured tensors too, where the site names the CPU targets (a Futhark-class site has none).
    let u = Tensor::<i64>::from_fn(&[40], |ix| ix[0] as i64 % 7 - 2);
    let run = || -> (Vec<i64>, Vec<i64>) {
        accelerate!(
            backend = cpu,
            (
                map(
                    |x: i64| {
                        let mut m = 0i64;
                        for j in 0..3 {
                            m += tensor_get(u, [x + j]) * k[j];
                        }
                        m
                    },
                    v
                ),
                create(n, |i: i64| {
                    let mut c = 0i64;
                    loop {
                        if tensor_get(u, [i + c]) > 2 || c == 10 {
                            break c;
                        }
                        c += 1;
                    }
                }),
            )
        )
    };
    let at = |i: i64| plain::tensor_get(&u, [i]);
    let want = (
        (v.iter())
            .map(|&x| (0..3).map(|j| at(x + j) * k[j as usize]).sum())
            .collect(),
        (0..n)
            .map(|i| (0..).find(|&c| at(i + c) > 2 || c == 10).unwrap())
            .collect(),
    );
    assert_eq!(on_every_target(run), want);
}

// ----- elements of sequences assigned -----

#[derive(Record, Debug, Clone, Copy, PartialEq)]
struct Cell {
    alive: bool,
    age: i64,
}

#[test]
fn elements_of_mutable_sequences_are_assigned() {
    let s: Vec<i64> = (0..60).map(|x| (x * 37) % 11).collect();
    let n = s.len();
    // A histogram: compound assignment of an element, its index read from another sequence.
    let counts = same!([s] accelerate!({
        let mut counts = vec![0i64; 11];
        for i in 0..n {
            counts[s[i] as usize] += 1;
        }
        counts
    }));
    assert_eq!(counts.iter().sum::<i64>(), 60);
    // Every form: `=`, each compound operator, a sequence of sequences, fields of tuples and
    // records inside a sequence, `vec!` of elements and of a length, a mutable copy of a captured
    // one, `swap` and `fill`. (Array literals and `[x; n]`: in `loops_carry_sequences`.)
    same!([s] accelerate!({
        let mut a = vec![1i64, 2, 3, 4];
        a[0] = 10;
        a[1] -= 5;
        a[2] *= a[3];
        a[3] <<= 2;
        a[3] |= 1;
        let mut grid = vec![vec![0i64; 3]; 2];
        grid[1][2] = 7;
        grid[0][1] += grid[1][2] * 2;
        let mut pairs = vec![(0i64, 0.5f64); 3];
        pairs[1].0 = 4;
        pairs[2].1 *= 3.0;
        let mut cells = vec![Cell { alive: false, age: 0 }; 2];
        cells[1].alive = true;
        cells[1].age += 3;
        let mut t = s.to_vec();
        t[0] = -1;
        let mut z = vec![0.0f64; 4];
        z[3] = 1.5;
        a.swap(0, 3);
        grid[1].swap(0, 2);
        let mut w = vec![1i64; 3];
        w.fill(a[0] + 1);
        (a, grid, pairs, cells, t, z, w)
    }));
}

#[test]
fn an_element_assignment_evaluates_its_value_first() {
    same!([] accelerate!(backend = cpu, {
        let mut a = vec![0i64; 4];
        let mut j: usize = 0;
        a[j] = {
            j += 1;
            j as i64 * 10
        };
        (a, j)
    }));
}

#[test]
fn an_element_out_of_range_fails_at_the_site() {
    let k = 4_i64;
    same_failure("tests/imperative.rs", "Out of bounds access", || {
        let _ = accelerate!({
            let mut a = vec![0i64; 4];
            a[k] = 1;
            a
        });
    });
}

#[test]
fn loops_carry_sequences() {
    let s: Vec<i64> = (0..40).collect();
    let n = s.len();
    // A permutation reversed by swaps in a `while`, a running prefix written in a `for`.
    same!([s] accelerate!({
        let mut p = s.to_vec();
        let mut lo = 0;
        let mut hi = n - 1;
        while lo < hi {
            if lo % 2 == 0 {
                p.swap(lo, hi);
            } else {
                let t = p[lo];
                p[lo] = p[hi];
                p[hi] = t;
            }
            lo += 1;
            hi -= 1;
        }
        let mut prefix = vec![0i64; n + 1];
        for i in 0..n {
            prefix[i + 1] = prefix[i] + p[i];
        }
        (p, prefix)
    }));
    // Inside the function of a `map`: each element's own small array, written in a loop.
    same!([s] accelerate!({
        map(|x: i64| {
            let mut digits = [0i64; 10];
            let mut y = x * 7919;
            while y > 0 {
                digits[(y % 10) as usize] += 1;
                y /= 10;
            }
            digits[1] * 100 + digits[9]
        }, s)
    }));
}

/// Writes in place never reach a version that is still read: a copy taken inside the loop, the
/// sequence the loop started from (a captured one, and a local one read after the loop), and an
/// element read before its write keep their values.
#[test]
fn writes_in_loops_leave_older_versions_alone() {
    let s: Vec<i64> = (0..8).collect();
    let n = s.len();
    same!([s] accelerate!(backend = cpu, {
        let mut a = s.to_vec();
        let mut keep = a.clone();
        let mut olds = 0;
        for i in 0..3 * n {
            if i == n {
                keep = a.clone();
            }
            let old = a[i % n];
            a[i % n] += i as i64;
            olds += old;
        }
        (a, keep, olds, s[0usize], s[n - 1])
    }));
    same!([] accelerate!({
        let start = vec![1i64; n];
        let mut a = start.clone();
        let mut i = 0;
        while i < n {
            a[i] = a[i] * 2 + start[i];
            i += 1;
        }
        (a, start)
    }));
}

/// A loop whose state is a sequence, 10^7 iterations long, on a thread of the CPU target's pool
/// (the function of a `map` over two elements) and on every other target: it runs as a loop, and
/// the stack does not grow with the trip count.
#[test]
fn a_long_loop_carrying_a_sequence_does_not_grow_the_stack() {
    let n = 10_000_000_i64;
    let ks: Vec<i64> = vec![1, 2];
    let got = on_every_target(|| {
        accelerate!(backend = cpu, {
            map(
                |k: i64| {
                    let mut a = [0i64; 4];
                    let mut i = 0;
                    while i < n {
                        a[(i % 4) as usize] += k;
                        i += 1;
                    }
                    a[0] + a[3]
                },
                ks,
            )
        })
    });
    assert_eq!(got, vec![n / 2, n]);
}

// ----- a loop that is long -----

#[test]
fn a_long_loop_does_not_grow_the_stack() {
    let n = 2_000_000_i64;
    same!([] accelerate!(backend = cpu, {
        let mut s: i64 = 0;
        let mut i: i64 = 0;
        while i < n {
            s += i % 7;
            i += 1;
        }
        let mut t: i64 = 0;
        for j in 0..n {
            t += j % 5;
        }
        (s, t)
    }));
}

/// Host code of a CUDA-class site: a `for` loop whose body launches a kernel per step, and a
/// `while` whose condition reads a tensor the kernels write (each step a launch, the tensors
/// staying on the device between them).
#[test]
fn loops_in_host_code_launch_kernels() {
    let n = 256_usize;
    let steps = 5_i64;
    let run = || {
        let t = Tensor::<f64>::from_fn(&[n], |ix| ix[0] as f64);
        let m = n as i64;
        accelerate!({
            for s in 0..steps {
                par_loop(m, |i| {
                    tensor_set(t, [i], tensor_get(t, [i]) * 0.5 + int2float(s))
                });
            }
            let mut rounds = 0;
            while tensor_get(t, [0]) < 100.0 {
                par_loop(m, |i| tensor_set(t, [i], tensor_get(t, [i]) + 10.0));
                rounds += 1;
            }
            rounds
        });
        t.to_vec()
    };
    let got = on_every_target(run);
    launches(5 + 10, run);
    let mut want: Vec<f64> = (0..n).map(|i| i as f64).collect();
    for s in 0..steps {
        want.iter_mut().for_each(|x| *x = *x * 0.5 + s as f64);
    }
    while want[0] < 100.0 {
        want.iter_mut().for_each(|x| *x += 10.0);
    }
    assert_eq!(got, want);
}

// ----- `if`s whose arms may both go on and may jump -----

/// A `for` whose body has `if`s both arms of which may reach what follows while an inner `if`
/// may `continue` or `break`, and a `return` elsewhere in the loop: lowered with a join on a tag
/// (what follows written once). Also a plain Rust function.
#[pmexpr]
fn skipping_sum(n: i64) -> i64 {
    let mut x = 0;
    for i in 0..n {
        if i % 3 == 0 {
            if i % 2 == 0 {
                continue;
            }
            x += 100;
        }
        match i % 5 {
            0 => {
                if x > 5000 {
                    break;
                }
                x += 1;
            }
            1 => x += 2,
            _ => {}
        }
        if x == 7 * n {
            return -x;
        }
        x += i;
    }
    x
}

#[test]
fn arms_that_may_jump_and_go_on() {
    let n = 40_i64;
    same!([] accelerate!(backend = cpu, {
        let mut x: i64 = 0;
        let mut k: i64 = 0;
        while k < n {
            k += 1;
            if k % 3 == 0 {
                if k % 2 == 0 {
                    continue;
                }
                x += 100;
            }
            match k % 5 {
                0 => {
                    if x > 1000 {
                        break;
                    }
                    x += 1;
                }
                1 => x += 2,
                _ => {}
            }
            x += k;
        }
        (x, k)
    }));
    let s: Vec<i64> = (0..120).collect();
    let got = same!([s] accelerate!({
        map(|n: i64| {
            let mut x: i64 = 0;
            for i in 0..n {
                if i % 3 == 0 {
                    if i % 2 == 0 {
                        continue;
                    }
                    x += 100;
                }
                if i % 7 == 6 {
                    if x > 2000 {
                        break;
                    }
                    x -= 1;
                }
                x += i;
            }
            x
        }, s)
    }));
    assert!(got.iter().any(|&x| x > 2000));
    let want: Vec<i64> = s.iter().map(|&n| skipping_sum(n)).collect();
    let got = on_every_target(|| accelerate!(map(|n| skipping_sum(n), s)));
    assert_eq!(got, want);
    assert!(want.iter().any(|&x| x < 0) && want.iter().any(|&x| x > 5000));
    let m = s.len();
    let run = || {
        let out = Tensor::<i64>::zeros(&[m]);
        let k = m as i64;
        accelerate!(par_loop(k, |i| tensor_set(out, [i], skipping_sum(i))));
        out.to_vec()
    };
    assert_eq!(on_every_target(run), want);
    launches(1, run);
}

// ----- the benchmark's workloads (`examples/imperative.rs`) -----

/// Each workload of `pmexpr_suite::imperative` written imperatively agrees with its functional
/// spelling, and the search that stops at its first hit with the one that scans everything, on
/// every target, at a small size; the search also against plain Rust.
#[test]
fn the_benchmark_pairs_agree() {
    use pmexpr_suite::imperative::*;
    let mut rng = pmexpr_suite::Rng::new(30);
    let (xs, ys) = (rng.floats(50), rng.floats(50));
    let cs = rng.floats(9);
    let points = rng.floats(100);
    let starts: Vec<i64> = (1..300).collect();
    let sorted: Vec<i64> = (0..200).map(|i| i * 5).collect();
    let queries = rng.ints(300, 0, 1100);
    let keys = rng.ints(1000, 0, 256);
    let want: Vec<i64> = queries
        .iter()
        .map(|&q| sorted.iter().position(|&v| v >= q).map_or(-1, |i| i as i64))
        .collect();
    assert!(want.contains(&-1) && want.iter().any(|&i| i > 0));
    on_every_target(|| {
        assert_eq!(nbody_imperative(&xs, &ys), nbody_functional(&xs, &ys));
        assert_eq!(
            horner_imperative(&cs, &points),
            horner_functional(&cs, &points)
        );
        assert_eq!(collatz_imperative(&starts), collatz_functional(&starts));
        assert_eq!(search_with_break(&sorted, &queries), want);
        assert_eq!(search_without_break(&sorted, &queries), want);
        assert_eq!(nbody_imperative(&xs, &ys), hand::nbody_rayon(&xs, &ys));
        assert_eq!(
            horner_imperative(&cs, &points),
            hand::horner_seq(&cs, &points)
        );
        assert_eq!(collatz_imperative(&starts), hand::collatz_rayon(&starts));
        assert_eq!(hand::search_rayon(&sorted, &queries), want);
        assert_eq!(hand::search_seq(&sorted, &queries), want);
        let sorted_blocks = block_sort(&keys, 100);
        assert_eq!(sorted_blocks, hand::block_sort_seq(&keys, 100));
        assert_eq!(sorted_blocks, hand::block_sort_rayon(&keys, 100));
        assert_eq!(count_into(1003), hand::count_into_seq(1003));
        let (bx, by) = ([0.1, 0.5, 0.9, 0.3, 0.7], [0.2, 0.8, 0.4, 0.6, 0.1]);
        let steps = nbody_steps(&bx, &by, 300);
        assert_eq!(steps, hand::nbody_steps_seq(&bx, &by, 300));
        assert_eq!(steps, hand::nbody_steps_rayon(&bx, &by, 300));
        let cells: Vec<bool> = (0..37 * 23).map(|i| (i * i + i / 3) % 3 == 0).collect();
        assert_eq!(
            life_step(&cells, 37, 23),
            hand::life_step_seq(&cells, 37, 23)
        );
        assert_eq!(
            life_step(&cells, 37, 23),
            hand::life_step_rayon(&cells, 37, 23)
        );
        // fannkuch-redux's published results for 7: checksum 228, 16 flips at most.
        for blocks in [1, 5, 24] {
            assert_eq!(fannkuch(7, blocks), (228, 16), "{blocks} parts");
        }
        assert_eq!(fannkuch(6, 7), hand::fannkuch_seq(6, 7));
        assert_eq!(fannkuch(1, 3), (0, 0));
        let s: Vec<f64> = (0..101).map(|i| ((i * 37) % 11) as f64).collect();
        assert_eq!(stencil(&s, 17), hand::stencil_seq(&s, 17));
        assert_eq!(stencil(&s, 17), hand::stencil_rayon(&s, 17));
        assert_eq!(stencil(&s[..1], 3), s[..1].to_vec());
        assert_eq!(stencil(&[], 3), Vec::<f64>::new());
        let wall: Vec<i64> = (0..13 * 29).map(|i| (i * 7919) % 10).collect();
        assert_eq!(
            pathfinder(&wall, 13, 29),
            hand::pathfinder_seq(&wall, 13, 29)
        );
        assert_eq!(
            pathfinder(&wall, 13, 29),
            hand::pathfinder_rayon(&wall, 13, 29)
        );
        assert_eq!(pathfinder(&wall[..1], 1, 1), vec![wall[0]]);
    });
    assert_eq!(hand::fannkuch_rayon(7, 24), (228, 16));
    assert_eq!(hand::fannkuch_seq(7, 1), (228, 16));
    assert_eq!(hand::nbody_seq(&xs, &ys), hand::nbody_rayon(&xs, &ys));
    let mut each = keys[..100].to_vec();
    each.sort();
    assert_eq!(hand::block_sort_seq(&keys, 100)[0], each);
}

#[test]
fn conditional_writes_in_loops() {
    let s: Vec<i64> = (0..300).map(|i| (i * 7919) % 1000).collect();
    let n = s.len();
    // A sieve: the inner loop writes only where the flag is not set yet; a running maximum
    // per bucket; a branch that writes in both arms, one of them a swap.
    same!([s] accelerate!({
        let mut composite = vec![false; 200];
        let mut count = 0i64;
        for p in 2..200 {
            if !composite[p] {
                count += 1;
                let mut j = p * p;
                while j < 200 {
                    if !composite[j] {
                        composite[j] = true;
                    }
                    j += p;
                }
            }
        }
        let mut best = vec![-1i64; 8];
        for i in 0..n {
            let k = (s[i] % 8) as usize;
            if s[i] > best[k] {
                best[k] = s[i];
            }
            if i % 7 == 0 {
                best.swap(k, (k + 1) % 8);
            } else {
                best[0] += 0;
            }
        }
        (count, composite, best)
    }));
    // Empty and one-element inputs.
    let s: Vec<i64> = vec![5];
    let n = s.len();
    same!([s] accelerate!({
        let mut a = vec![0i64; n];
        for i in 0..n {
            if s[i] > 0 {
                a[i] = s[i];
            }
        }
        a
    }));
}
