//! The numbers a site's number type variables can stand for, and which combinations of them the
//! GPU generators emit code for: one list, in one order, under one cap, for both the CUDA
//! modules ([`super::cuda::instantiations`]) and the Futhark entry points
//! ([`super::futhark::instantiations`]), which both instantiate with the one [`Number`] type
//! that the runtime shares (`pmexpr-abi`).
//!
//! A number type variable left by monomorphization ([`crate::infer::Numeric`]) is fixed by the
//! Rust types of the captured values, which the build cannot know. At run time the generated
//! Rust code asks for the module or entry of the types rustc picked: the list of their
//! `pmexpr_runtime::Scalar::NUMBER`s, one per variable in the order of
//! [`crate::mono::Mono::numeric`]. A combination that has no module or entry (one past
//! [`MAX_INSTANTIATIONS`]) runs on the CPU targets: the runtime's lookup finds nothing and falls
//! back.

use std::collections::BTreeMap;

pub use pmexpr_abi::Number;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::infer::Numeric;
use crate::types::{TyVar, Type};

/// The number a ground PMExpr type ([`Type::Num`]) is: the paper's `Int` is `i64`, `Float`
/// `f64`, `Bool` `bool`.
pub fn of_type(t: &Type) -> Option<Number> {
    t.as_number()
}

/// The ground PMExpr type that is `n` ([`Type::number`]).
pub fn ground_type(n: Number) -> Type {
    Type::number(n)
}

/// `n` as a value of generated Rust code: `<i64 as rt::Scalar>::NUMBER`, the runtime's number of
/// the Rust type, which the generated code compares with the numbers of the captured values'
/// types to pick a CUDA module or a Futhark entry point.
pub fn rust_value(n: Number, rt: &TokenStream) -> TokenStream {
    let ty = format_ident!("{}", n.rust_name());
    quote!(<#ty as #rt::Scalar>::NUMBER)
}

/// The types a variable of each kind may stand for, the default first, in the order of
/// [`Number::ALL`]: those the runtime's trait of the kind is implemented for (`Num`: the 12
/// arithmetic numbers; `Scalar`: those and `bool`; `Int`: the 10 integers; `Float`: `f64 f32`),
/// and for a type only moved or counted (`Open`) the numbers and `bool`: other Rust types it may
/// be (tuples, nested `Vec`s) get no code.
pub fn choices(kind: Numeric) -> Vec<Number> {
    let fits = |n: Number| match kind {
        Numeric::Num => n.is_arithmetic(),
        // A type only moved or counted may be any number or `bool` (else no code is generated
        // for it and the site runs on the CPU: `rust::generate_site`).
        Numeric::Scalar | Numeric::Open => true,
        Numeric::Int => n.is_int(),
        Numeric::Bits => n.is_int() || n == Number::Bool,
        Numeric::Float => n.is_float(),
        // Naming another variable, it follows that one's ([`derive`]); naming itself, any
        // unsigned integer.
        Numeric::Unsigned(_) => n.is_unsigned(),
        Numeric::OfUnsigned(u) => n.unsigned() == Some(u),
    };
    Number::ALL.into_iter().filter(|n| fits(*n)).collect()
}

/// One choice of a [`Number`] for each number type variable of a site.
pub type Choice = BTreeMap<TyVar, Number>;

/// The most instantiations [`instantiations`] lists for one site (each is a CUDA module that the
/// build compiles and the binary embeds, and a Futhark entry point).
pub const MAX_INSTANTIATIONS: usize = 32;

/// The order in which mixes of numbers get code after the uniform ones: the types Rust programs
/// hold their data and sizes in most (`i64`, `f64`, `usize`, `i32`, `f32`) first.
const PREFERENCE: [Number; 13] = [
    Number::I64,
    Number::F64,
    Number::Usize,
    Number::I32,
    Number::F32,
    Number::U32,
    Number::U64,
    Number::U8,
    Number::Bool,
    Number::I8,
    Number::I16,
    Number::U16,
    Number::Isize,
];

/// Every variable as `like` where its kind allows, else as the number of its kind with the same
/// width (an integer variable under `f32` is `i32`, a float one under `i64` is `f64`; under
/// `bool`, a number is its kind's default).
pub fn uniform(numeric: &[(TyVar, Numeric)], like: Number) -> Choice {
    let mut choice = numeric
        .iter()
        .filter(|(v, k)| !derived(*v, *k))
        .map(|(v, k)| {
            let c = choices(*k);
            let t = if c.contains(&like) {
                like
            } else if !like.is_arithmetic() {
                c[0]
            } else {
                *c.iter().find(|t| t.size() == like.size()).unwrap_or(&c[0])
            };
            (*v, t)
        })
        .collect();
    derive(numeric, &mut choice);
    choice
}

/// Whether variable `v` of kind `k` follows another's number: the unsigned type of another
/// variable's width (`abs_diff`'s result).
fn derived(v: TyVar, k: Numeric) -> bool {
    matches!(k, Numeric::Unsigned(w) if w != v)
}

/// Gives each [`derived`] variable its number from the one it follows (a chain, such as
/// `x.abs_diff(y).abs_diff(z)`, in as many rounds as it is long).
fn derive(numeric: &[(TyVar, Numeric)], choice: &mut Choice) {
    for _ in 0..numeric.len() {
        let mut changed = false;
        for (v, k) in numeric {
            if let Numeric::Unsigned(w) = k
                && derived(*v, *k)
                && let Some(n) = choice.get(w).and_then(|n| n.unsigned())
                && choice.insert(*v, n) != Some(n)
            {
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// The distinct instantiations the GPU generators emit code for, in a fixed order: first every
/// variable alike as far as its kind allows, for each of the 13 numbers of [`Number::ALL`] —
/// `i64` (the default), `f64`, `i32`, `f32`, `bool`, `i8`, `i16`, `isize`, `u8`, `u16`, `u32`,
/// `u64`, `usize` ([`uniform`]) — then the mixes, by rank: each variable's choices ordered by
/// `PREFERENCE`, all the mixes of its first two choices before any with a third, and so on (so
/// a `usize` count with `f64` elements, or `i32` values beside `i64` ones, have code), at most
/// [`MAX_INSTANTIATIONS`] in all. The uniform ones come first so that the cap never drops them:
/// every number has code for a site whose variables are all of it; the mixes past the cap run on
/// the CPU targets, said once on stderr.
pub fn instantiations(numeric: &[(TyVar, Numeric)]) -> Vec<Choice> {
    let mut out: Vec<Choice> = Vec::new();
    let add = |i: Choice, out: &mut Vec<Choice>| {
        if out.len() < MAX_INSTANTIATIONS && !out.contains(&i) {
            out.push(i);
        }
    };
    for like in Number::ALL {
        add(uniform(numeric, like), &mut out);
    }
    let rank = |n: &Number| {
        PREFERENCE
            .iter()
            .position(|p| p == n)
            .unwrap_or(PREFERENCE.len())
    };
    // The variables whose numbers are chosen; the derived ones follow.
    let free: Vec<(TyVar, Numeric)> = (numeric.iter().copied())
        .filter(|(v, k)| !derived(*v, *k))
        .collect();
    let choices: Vec<Vec<Number>> = free
        .iter()
        .map(|(_, k)| {
            let mut c = choices(*k);
            c.sort_by_key(rank);
            c
        })
        .collect();
    let widest = choices.iter().map(Vec::len).max().unwrap_or(0);
    // Rank `r`: an odometer over each variable's first `r + 1` choices, the mixes that use an
    // `r`-th one. Stops once the cap is reached, however many variables.
    for r in 1..widest {
        let limits: Vec<usize> = choices.iter().map(|c| c.len().min(r + 1)).collect();
        let mut digits = vec![0_usize; free.len()];
        loop {
            if out.len() >= MAX_INSTANTIATIONS {
                return out;
            }
            if digits.contains(&r) {
                let mut inst = free
                    .iter()
                    .zip(&digits)
                    .zip(&choices)
                    .map(|(((v, _), d), c)| (*v, c[*d]))
                    .collect();
                derive(numeric, &mut inst);
                add(inst, &mut out);
            }
            let mut k = digits.len();
            loop {
                if k == 0 {
                    break;
                }
                k -= 1;
                digits[k] += 1;
                if digits[k] < limits[k] {
                    break;
                }
                digits[k] = 0;
            }
            if digits.iter().all(|d| *d == 0) {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
