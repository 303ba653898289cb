//! Number instantiation: what a numeric type variable stands for in one module, and which
//! modules a site gets.

use std::collections::BTreeMap;

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

    /// The Rust name of the type (`"i64"`): how the runtime picks a module.
    pub fn tag(self) -> &'static str {
        match self {
            NumType::I64 => "i64",
            NumType::F64 => "f64",
            NumType::I32 => "i32",
            NumType::F32 => "f32",
            NumType::Bool => "bool",
        }
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

/// The types a variable of each kind may stand for, the default first. `bool` for a variable
/// that is only compared is not among them (such sites run on the CPU targets when it is one).
pub(super) fn choices(kind: Numeric) -> &'static [NumType] {
    match kind {
        // An open type's site runs on the CPU under the CUDA targets (`rust::generate_site`); its
        // modules, as for numbers, keep the hook's per-site code uniform.
        Numeric::Num | Numeric::Scalar | Numeric::Open => {
            &[NumType::I64, NumType::F64, NumType::I32, NumType::F32]
        }
        Numeric::Int => &[NumType::I64, NumType::I32],
        Numeric::Float => &[NumType::F64, NumType::F32],
    }
}

/// Every variable as `like` where its kind allows, else as the number of its kind with the same
/// width (an integer variable under `f32` is `i32`, a float one under `i64` is `f64`).
pub(super) fn uniform(numeric: &[(TyVar, Numeric)], like: NumType) -> Instantiation {
    numeric
        .iter()
        .map(|(v, k)| {
            let c = choices(*k);
            let t = if c.contains(&like) {
                like
            } else {
                let wide = matches!(like, NumType::I64 | NumType::F64);
                *c.iter()
                    .find(|t| matches!(t, NumType::I64 | NumType::F64) == wide)
                    .unwrap_or(&c[0])
            };
            (*v, t)
        })
        .collect()
}

/// The instantiation that makes every numeric type variable its default: `f64` for a float (a
/// float literal's type), `i64` for any other (the default of inference for a number nothing
/// fixes).
pub fn default_instantiation(numeric: &[(TyVar, Numeric)]) -> Instantiation {
    uniform(numeric, NumType::I64)
}

/// The same variables as `f64` where they may be (an integer, [`Numeric::Int`], stays `i64`).
pub fn float_instantiation(numeric: &[(TyVar, Numeric)]) -> Instantiation {
    uniform(numeric, NumType::F64)
}

/// The most instantiations [`instantiations`] lists for one site (each is a module that the
/// build compiles and the binary embeds).
pub const MAX_INSTANTIATIONS: usize = 16;

/// The distinct instantiations a host generates modules for, in a fixed order: first every
/// variable alike as far as its kind allows — `i64` ([`default_instantiation`]), `f64`
/// ([`float_instantiation`]), `i32`, `f32` — then every other combination of the types each
/// variable may be (`i64`, `f64`, `i32`, `f32` for a number, only the integers for an integer,
/// the floats for a float), the last variable varying fastest, at most [`MAX_INSTANTIATIONS`] in
/// all. Numbers of other types (beyond the cap, or a compared-only variable as `bool`) find no
/// module and run on the CPU targets.
pub fn instantiations(numeric: &[(TyVar, Numeric)]) -> Vec<Instantiation> {
    let mut out: Vec<Instantiation> = Vec::new();
    let add = |i: Instantiation, out: &mut Vec<Instantiation>| {
        if out.len() < MAX_INSTANTIATIONS && !out.contains(&i) {
            out.push(i);
        }
    };
    for like in [NumType::I64, NumType::F64, NumType::I32, NumType::F32] {
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

/// The part of a module's names that tells its instantiation: empty without type variables, else
/// `_` and the types in variable order (`_f64`, `_i64_f64`).
pub fn instantiation_suffix(inst: &Instantiation) -> String {
    inst.values().map(|t| format!("_{}", t.tag())).collect()
}
