//! `#[pmexpr]` functions mutually recursive with functions of the crate root: the build hook
//! shows every `#[pmexpr]` function of the package to every other, whatever its module.

/// Whether `n` is odd, counting down through [`crate::even_from`].
#[pmexpr::pmexpr]
pub fn parity_odd(n: i64) -> bool {
    if n == 0 { false } else { even_from(n - 1) }
}

/// `n` stepped down to 0 one at a time, alternating with [`crate::steps_up`].
#[pmexpr::pmexpr]
pub fn steps_down(n: i64) -> i64 {
    if n == 0 { 0 } else { steps_up(n - 1, 1) }
}
