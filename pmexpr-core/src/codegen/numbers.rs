//! The numbers a site's number type variables can stand for, and which combinations of them the
//! GPU generators emit code for: one list, in one order, under one cap, for both the CUDA
//! modules ([`super::cuda::instantiations`]) and the Futhark entry points
//! ([`super::futhark::instantiations`]), which map each [`Number`] to their own type.
//!
//! A number type variable left by monomorphization ([`crate::infer::Numeric`]) is fixed by the
//! Rust types of the captured values, which the build cannot know. At run time the generated
//! Rust code asks for the module or entry of the types rustc picked: the list of their
//! `pmexpr_runtime::Scalar::NAME`s (`"i64"`, `"f64"`, `"i32"`, `"f32"`, `"bool"`), one per
//! variable in the order of [`crate::mono::Mono::numeric`]; [`Number::name`] is that name. A
//! combination that has no module or entry (one past [`MAX_INSTANTIATIONS`]) runs on the CPU
//! targets: the runtime's lookup finds nothing and falls back.

use std::collections::BTreeMap;

use crate::infer::Numeric;
use crate::types::TyVar;

/// A Rust type a number type variable can stand for: the types the runtime's number traits
/// (`Num`, `Int`, `Float`, `Scalar`) are implemented for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Number {
    /// `i64`.
    I64,
    /// `f64`.
    F64,
    /// `i32`.
    I32,
    /// `f32`.
    F32,
    /// `bool` (only for a variable that is only compared, [`Numeric::Scalar`]).
    Bool,
}

impl Number {
    /// Every number, in the order uniform instantiations are listed.
    pub const ALL: [Number; 5] = [
        Number::I64,
        Number::F64,
        Number::I32,
        Number::F32,
        Number::Bool,
    ];

    /// The Rust name of the type (`"i64"`): what the runtime's `Scalar::NAME` gives, and so how
    /// it picks a module or an entry point.
    pub fn name(self) -> &'static str {
        match self {
            Number::I64 => "i64",
            Number::F64 => "f64",
            Number::I32 => "i32",
            Number::F32 => "f32",
            Number::Bool => "bool",
        }
    }

    /// Whether this is a 64-bit type (`i64`, `f64`).
    fn is_wide(self) -> bool {
        matches!(self, Number::I64 | Number::F64)
    }
}

/// The types a variable of each kind may stand for, the default first: those the runtime's trait
/// of the kind is implemented for (`Num`: `i64 f64 i32 f32`; `Scalar`: those and `bool`; `Int`:
/// `i64 i32`; `Float`: `f64 f32`), and for a type only moved or counted (`Open`) the numbers and
/// `bool`: other Rust types it may be (tuples, nested `Vec`s) get no code.
pub fn choices(kind: Numeric) -> &'static [Number] {
    match kind {
        Numeric::Num => &[Number::I64, Number::F64, Number::I32, Number::F32],
        // A type only moved or counted may be any number or `bool` (else no code is generated
        // for it and the site runs on the CPU: `rust::generate_site`).
        Numeric::Scalar | Numeric::Open => &Number::ALL,
        Numeric::Int => &[Number::I64, Number::I32],
        Numeric::Float => &[Number::F64, Number::F32],
    }
}

/// One choice of a [`Number`] for each number type variable of a site.
pub type Choice = BTreeMap<TyVar, Number>;

/// The most instantiations [`instantiations`] lists for one site (each is a CUDA module that the
/// build compiles and the binary embeds, and a Futhark entry point).
pub const MAX_INSTANTIATIONS: usize = 16;

/// Every variable as `like` where its kind allows, else as the number of its kind with the same
/// width (an integer variable under `f32` is `i32`, a float one under `i64` is `f64`; under
/// `bool`, a number is its kind's default).
pub fn uniform(numeric: &[(TyVar, Numeric)], like: Number) -> Choice {
    numeric
        .iter()
        .map(|(v, k)| {
            let c = choices(*k);
            let t = if c.contains(&like) {
                like
            } else if like == Number::Bool {
                c[0]
            } else {
                *c.iter()
                    .find(|t| t.is_wide() == like.is_wide())
                    .unwrap_or(&c[0])
            };
            (*v, t)
        })
        .collect()
}

/// The distinct instantiations the GPU generators emit code for, in a fixed order: first every
/// variable alike as far as its kind allows — `i64` (the default), `f64`, `i32`, `f32`, `bool`
/// ([`uniform`]) — then every other combination of [`choices`], the last variable varying
/// fastest, at most [`MAX_INSTANTIATIONS`] in all. The uniform ones come first so that the cap
/// never drops them: with three or more variables of a kind not every combination fits, and
/// the others run on the CPU targets.
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
    // An odometer over the choices: stops once the cap is reached, however many variables.
    let mut digits = vec![0_usize; numeric.len()];
    while out.len() < MAX_INSTANTIATIONS {
        let inst = numeric
            .iter()
            .zip(&digits)
            .map(|((v, k), d)| (*v, choices(*k)[*d]))
            .collect();
        add(inst, &mut out);
        let mut k = digits.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            digits[k] += 1;
            if digits[k] < choices(numeric[k].1).len() {
                break;
            }
            digits[k] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests;
