//! Number instantiation: what a numeric type variable stands for in one module, and which
//! modules a site gets.

use std::collections::BTreeMap;

pub use crate::codegen::numbers::MAX_INSTANTIATIONS;
use crate::codegen::numbers::{self, Choice, Number};
use crate::infer::Numeric;
use crate::types::{TyVar, Type};

/// The Rust type a numeric type variable stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NumType {
    /// `i64`.
    I64,
    /// `f64`.
    F64,
    /// `i32`: `int`, wrapping like Rust's `i32`.
    I32,
    /// `f32`: `float`, computed in single precision (never widened to `double`).
    F32,
    /// `bool` (only for a variable that is only compared, [`Numeric::Scalar`]).
    Bool,
}

impl NumType {
    /// The PMExpr type for the 64-bit numbers and `bool`. The 32-bit ones have none (PMExpr's
    /// `Int` and `Float` are `i64` and `f64`): their type variables stay variables in the
    /// generator's instantiated types, and [`Gen::num`] tells what they stand for.
    pub(super) fn ty(self) -> Option<Type> {
        match self {
            NumType::I64 => Some(Type::Int),
            NumType::F64 => Some(Type::Float),
            NumType::Bool => Some(Type::Bool),
            NumType::I32 | NumType::F32 => None,
        }
    }

    /// The Rust name of the type (`"i64"`, [`Number::name`]): how the runtime picks a module.
    pub fn tag(self) -> &'static str {
        let n = match self {
            NumType::I64 => Number::I64,
            NumType::F64 => Number::F64,
            NumType::I32 => Number::I32,
            NumType::F32 => Number::F32,
            NumType::Bool => Number::Bool,
        };
        n.name()
    }

    /// The C++ type.
    pub(super) fn c_type(self) -> &'static str {
        match self {
            NumType::I64 => "long long",
            NumType::F64 => "double",
            NumType::I32 => "int",
            NumType::F32 => "float",
            NumType::Bool => "bool",
        }
    }

    pub(super) fn is_float(self) -> bool {
        matches!(self, NumType::F64 | NumType::F32)
    }
}

/// What each numeric type variable left in a site's program stands for. The generated code is
/// monomorphic, so a host that cannot know the captured values' types at build time generates
/// one module per instantiation it may need (their names differ: [`instantiation_suffix`]).
pub type Instantiation = BTreeMap<TyVar, NumType>;

impl From<Number> for NumType {
    fn from(n: Number) -> NumType {
        match n {
            Number::I64 => NumType::I64,
            Number::F64 => NumType::F64,
            Number::I32 => NumType::I32,
            Number::F32 => NumType::F32,
            Number::Bool => NumType::Bool,
        }
    }
}

/// The instantiation of a choice of [`Number`]s.
fn of(choice: Choice) -> Instantiation {
    choice.into_iter().map(|(v, n)| (v, n.into())).collect()
}

/// The instantiation that makes every numeric type variable its default: `f64` for a float (a
/// float literal's type), `i64` for any other (the default of inference for a number nothing
/// fixes).
pub fn default_instantiation(numeric: &[(TyVar, Numeric)]) -> Instantiation {
    of(numbers::uniform(numeric, Number::I64))
}

/// The same variables as `f64` where they may be (an integer, [`Numeric::Int`], stays `i64`).
pub fn float_instantiation(numeric: &[(TyVar, Numeric)]) -> Instantiation {
    of(numbers::uniform(numeric, Number::F64))
}

/// The distinct instantiations a host generates modules for: [`numbers::instantiations`], the
/// uniform ones first ([`default_instantiation`], [`float_instantiation`], then all `i32`, all
/// `f32`, all `bool`), at most [`MAX_INSTANTIATIONS`]. Numbers of other types (beyond the cap)
/// find no module and run on the CPU targets.
pub fn instantiations(numeric: &[(TyVar, Numeric)]) -> Vec<Instantiation> {
    numbers::instantiations(numeric)
        .into_iter()
        .map(of)
        .collect()
}

/// The part of a module's names that tells its instantiation: empty without type variables, else
/// `_` and the types in variable order (`_f64`, `_i64_f64`).
pub fn instantiation_suffix(inst: &Instantiation) -> String {
    inst.values().map(|t| format!("_{}", t.tag())).collect()
}
