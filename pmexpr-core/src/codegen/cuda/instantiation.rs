//! Number instantiation: what a numeric type variable stands for in one module, and which
//! modules a site gets.

use std::collections::BTreeMap;

pub use crate::codegen::numbers::MAX_INSTANTIATIONS;
use crate::codegen::numbers::{self, Number};
use crate::infer::Numeric;
use crate::types::TyVar;

/// What each numeric type variable left in a site's program stands for (a [`Number`]: `i32` is
/// `int`, wrapping like Rust's `i32`; `f32` is `float`, computed in single precision, never
/// widened to `double`). The generated code is monomorphic, so a host that cannot know the
/// captured values' types at build time generates one module per instantiation it may need
/// (their names differ: [`instantiation_suffix`]).
pub type Instantiation = BTreeMap<TyVar, Number>;

/// The instantiation that makes every numeric type variable its default: `f64` for a float (a
/// float literal's type), `i64` for any other (the default of inference for a number nothing
/// fixes).
pub fn default_instantiation(numeric: &[(TyVar, Numeric)]) -> Instantiation {
    numbers::uniform(numeric, Number::I64)
}

/// The same variables as `f64` where they may be (an integer, [`Numeric::Int`], stays `i64`).
pub fn float_instantiation(numeric: &[(TyVar, Numeric)]) -> Instantiation {
    numbers::uniform(numeric, Number::F64)
}

/// The distinct instantiations a host generates modules for: [`numbers::instantiations`], the
/// uniform ones first ([`default_instantiation`], [`float_instantiation`], then all `i32`, all
/// `f32`, all `bool`), at most [`MAX_INSTANTIATIONS`]. Numbers of other types (beyond the cap)
/// find no module and run on the CPU targets.
pub fn instantiations(numeric: &[(TyVar, Numeric)]) -> Vec<Instantiation> {
    numbers::instantiations(numeric)
}

/// The part of a module's names that tells its instantiation: empty without type variables, else
/// `_` and the Rust types in variable order (`_f64`, `_i64_f64`).
pub fn instantiation_suffix(inst: &Instantiation) -> String {
    inst.values()
        .map(|t| format!("_{}", t.rust_name()))
        .collect()
}
