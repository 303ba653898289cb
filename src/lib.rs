//! `pmexpr-suite`: the examples, integration tests and benchmarks of pmexpr (not published).
//!
//! This library holds what they share: deterministic input data, the ODE example's accelerated
//! expression ([`ode`]), the neural-network example's training, data loaders and hand-written
//! baselines ([`nn`]), the Parboil ports with their hand-written baselines ([`parboil`]), the
//! program shapes of the CPU benchmarks with theirs ([`shapes`]), and imperative loops beside
//! their functional spelling ([`imperative`]), and the generator of differential test programs
//! ([`progen`]).

pub mod imperative;
pub mod nn;
pub mod ode;
pub mod parboil;
pub mod parity;
pub mod progen;
pub mod shapes;

/// A point of the plane: a `#[derive(pmexpr::Record)]` struct that `accelerate!` sites in other
/// files of the package use (the build hook shows them its definition).
#[derive(pmexpr::Record, Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
}

/// The squared distance of a point from the origin, for `accelerate!` sites and Rust code alike.
#[pmexpr::pmexpr]
pub fn norm2(p: Point) -> f64 {
    p.x * p.x + p.y * p.y
}

/// A deterministic pseudo-random sequence (SplitMix64), so that examples, tests and benchmarks
/// use the same inputs on every machine without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator with the given seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An integer in `lo..hi`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo) as u64) as i64
    }

    /// A float in `[0, 1)`.
    pub fn float(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// `n` integers in `lo..hi`.
    pub fn ints(&mut self, n: usize, lo: i64, hi: i64) -> Vec<i64> {
        (0..n).map(|_| self.int(lo, hi)).collect()
    }

    /// `n` floats in `[0, 1)`.
    pub fn floats(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.float()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let a = Rng::new(7).ints(100, -5, 5);
        assert_eq!(a, Rng::new(7).ints(100, -5, 5));
        assert!(a.iter().all(|x| (-5..5).contains(x)));
        assert!(
            Rng::new(1)
                .floats(100)
                .iter()
                .all(|x| (0.0..1.0).contains(x))
        );
    }
}

/// `x + 1`, written in PMExpr: the `#[pmexpr]` functions of this package are visible to every
/// `accelerate!` of its examples and tests (through the build hook in `build.rs`), and callable
/// from Rust.
#[pmexpr::pmexpr]
pub fn inc(x: i64) -> i64 {
    addi(x, 1)
}

/// The sum of the squares of a sequence: a `#[pmexpr]` function that uses another one's
/// parallel keywords.
#[pmexpr::pmexpr]
pub fn sum_of_squares(s: Vec<i64>) -> i64 {
    reduce(addi, 0, map(|x| x * x, s))
}

/// Whether a sequence has an even length: a `#[pmexpr]` function whose helper is mutually
/// recursive with one in another module ([`parity::odd_from`]).
#[pmexpr::pmexpr]
pub fn even_len(s: Vec<i64>) -> bool {
    even_from(length(s))
}

/// Whether `n` is even, counting down through [`parity::odd_from`].
#[pmexpr::pmexpr]
pub fn even_from(n: i64) -> bool {
    if n == 0 { true } else { parity_odd(n - 1) }
}

/// `n` stepped down to 0 one at a time through [`parity::steps_down`], plus `acc` (mutual
/// recursion across modules).
#[pmexpr::pmexpr]
pub fn steps_up(n: i64, acc: i64) -> i64 {
    if n == 0 {
        acc
    } else {
        steps_down(n - 1) + acc + 1
    }
}
