//! Debug mode's checks of the laws that the parallel backends assume of an operator:
//! **`reduce`'s operator is associative with its neutral element** (and `hist`'s and `scan`'s,
//! which the messages name). Checked on the actual
//! elements before the reduction: every element `x` against the neutral element on both sides
//! (`f(ne, x) = x = f(x, ne)`); associativity, `f(f(a, b), c) = f(a, f(b, c))`, on every
//! consecutive triple `s[3k], s[3k+1], s[3k+2]` and on `n` more triples drawn with a fixed-seed
//! generator (with repetition, so that one- and two-element sequences are checked too). Checking
//! all n³ triples would change the complexity; this sample costs about 6n calls of the operator
//! in all, a constant factor over the reduction. Floats compare within a relative 1e-9 (`f64`)
//! or 1e-5 (`f32`, whose rounding step is about 6e-8) of the largest magnitude involved, since a
//! parallel sum rounds differently by design.
//!
//! The applications of the operator that only a check makes are the check's, not the program's:
//! where one fails at the site (an overflow that a Rust debug build reports, on elements that
//! the reduction never combines), that check is skipped ([`crate::site`]'s `probe`), and the
//! program's own reduction reports what it does compute.
//!
//! The checks run only under the debug backend (`Backend::CHECKS`), which its methods test with a
//! constant (in [`crate::backend`]): the other backends carry no trace of them. The
//! write conflicts of `par_loop` and `scatter` are [`crate::races`]'.

use crate::func::Func;
use crate::seq::Seq;
use crate::site::{Site, probe};
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
    // Each check's applications are its own, not the program's: one that fails (an overflow
    // a Rust debug build reports, a division by zero) skips the check, since the program's
    // reduction fails on its own where it computes that failure.
    let call = |a: &T, b: &T| probe(|| f(a.clone(), b.clone()));
    for (i, x) in s.iter().enumerate() {
        let scale = x.magnitude().max(ne.magnitude());
        for (left, r) in [(true, call(ne, x)), (false, call(x, ne))] {
            let Some(r) = r else { continue };
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
        let (Some(left), Some(right)) = (
            call(a, b).and_then(|ab| call(&ab, c)),
            call(b, c).and_then(|bc| call(a, &bc)),
        ) else {
            return;
        };
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
    fn a_failure_inside_a_law_check_is_not_the_programs() {
        use crate::numeric::Num;
        // Debug mode's checked `+` and `*`: `f(f(100, 100), 100)` overflows an `i8`, though
        // reducing `[100]` never adds two elements.
        let add = |a: i8, b: i8| i8::add_at(true, &SITE, a, b);
        check_reduce(&SITE, "the closure", &[100_i8], &0, &add);
        check_reduce(&SITE, "the closure", &[100_i8, -100, 27], &0, &add);
        let mul = |a: u16, b: u16| u16::mul_at(true, &SITE, a, b);
        check_reduce(&SITE, "the closure", &[300_u16, 2, 7], &1, &mul);
        // A broken law is still found on the applications that do not fail: 0 is no neutral
        // element of `-`, and `|a, b| a + 2 * b` (100 overflows its triples) is not associative
        // on 1, 2 and 3.
        let sub = |a: i8, b: i8| i8::sub_at(true, &SITE, a, b);
        let m = failure(|| check_reduce(&SITE, "the closure", &[100_i8, 1], &0, &sub));
        assert!(
            m.expect("subtraction")
                .contains("0 is a neutral element of the closure, but it is not for element 0")
        );
        let skew = |a: i8, b: i8| {
            if a == 0 {
                b
            } else if b == 0 {
                a
            } else {
                i8::add_at(true, &SITE, a, i8::mul_at(true, &SITE, 2, b))
            }
        };
        let m = failure(|| check_reduce(&SITE, "the closure", &[1_i8, 2, 3, 100], &0, &skew));
        assert!(
            m.expect("not associative")
                .contains("the closure is associative, but it is not on elements 0, 1 and 2")
        );
        // Failing on its own, the operator still fails outside the checks.
        let m = failure(|| {
            add(100, 100);
        })
        .expect("overflows");
        assert!(m.contains("attempt to add with overflow"), "{m}");
    }
}
