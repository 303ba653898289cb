//! The vocabulary that pmexpr's compiler (`pmexpr-core`, with the build hook) and its runtime
//! (`pmexpr-runtime`) share, so that generated code and the runtime that runs it agree by
//! construction rather than by matching names:
//!
//! - [`Number`]: the Rust types a number type of a site can be (and `bool`), with what each
//!   code generator and the runtime need to know of them ([`Number::rust_name`],
//!   [`Number::c_type`], [`Number::futhark_name`], [`Number::size`], …). The CUDA modules and the
//!   Futhark entry points of a site are generated per choice of numbers, and generated code
//!   asks for one by these values (the runtime's `Scalar::NUMBER` of each captured type); the
//!   only text parsed into a number is what an outside tool writes, the Futhark compiler's
//!   manifest ([`Number::from_futhark_name`]).
//! - [`MAX_TUPLE`]: the most fields a tuple or a record has inside `accelerate!`, which the
//!   compiler checks and the runtime's marshaling traits are implemented up to.
//!
//! The crate has no dependencies: the runtime depends on it without depending on the compiler.
//! Each fact of a number is a field of one table row (the match of the private `Number::facts`):
//! a new number type is a new variant, its row, and its place in [`Number::ALL`].

#![warn(missing_docs)]

use std::fmt;

/// The most fields a tuple or a record (a `#[derive(pmexpr::Record)]` struct) has inside
/// `accelerate!`: the compiler rejects more (tuple types, projections, derived structs), and the
/// runtime implements its marshaling traits for tuples of 1 to this many fields, so every value
/// the compiler accepts crosses.
pub const MAX_TUPLE: usize = 12;

/// A Rust type that a number type of a site can be: the types the runtime's number traits
/// (`Num`, `Int`, `Float`, `Scalar`) are implemented for, `bool` included (a value only
/// compared, moved or counted).
///
/// The order of the variants is the order of [`Number::ALL`]: the default first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Number {
    /// `i64`: PMExpr's `Int`, the default of an integer nothing else fixes.
    I64,
    /// `f64`: PMExpr's `Float`, the default of a float literal.
    F64,
    /// `i32`: computed as `i32` (wrapping like Rust's), never widened.
    I32,
    /// `f32`: computed in single precision, never widened to `f64`.
    F32,
    /// `bool`.
    Bool,
}

/// What a number is, arithmetically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Float,
    Bool,
}

/// Everything known about one number: one row per [`Number`].
struct Facts {
    rust: &'static str,
    futhark: &'static str,
    c: &'static str,
    size: usize,
    kind: Kind,
}

impl Number {
    /// Every number, in the order the GPU generators list uniform instantiations (every number
    /// type variable of a site alike): the default `i64` first.
    pub const ALL: [Number; 5] = [
        Number::I64,
        Number::F64,
        Number::I32,
        Number::F32,
        Number::Bool,
    ];

    /// The one table of facts.
    const fn facts(self) -> Facts {
        let (rust, futhark, c, size, kind) = match self {
            Number::I64 => ("i64", "i64", "long long", 8, Kind::Int),
            Number::F64 => ("f64", "f64", "double", 8, Kind::Float),
            Number::I32 => ("i32", "i32", "int", 4, Kind::Int),
            Number::F32 => ("f32", "f32", "float", 4, Kind::Float),
            // C++'s `bool` is one byte, as Rust's.
            Number::Bool => ("bool", "bool", "bool", 1, Kind::Bool),
        };
        Facts {
            rust,
            futhark,
            c,
            size,
            kind,
        }
    }

    /// The Rust type, as generated code and messages write it (`i64`); also [`Number`]'s
    /// `Display`.
    pub const fn rust_name(self) -> &'static str {
        self.facts().rust
    }

    /// The Futhark primitive type (`i64`), which is also the module of its functions
    /// (`f64.sqrt`) and the name the Futhark compiler's manifest gives it.
    pub const fn futhark_name(self) -> &'static str {
        self.facts().futhark
    }

    /// The number that the Futhark compiler's manifest names `name` (`"i64"`), if any: where the
    /// manifest's text becomes a [`Number`], once, at the boundary.
    pub fn from_futhark_name(name: &str) -> Option<Number> {
        Number::ALL.into_iter().find(|n| n.futhark_name() == name)
    }

    /// The CUDA C++ type (`long long`).
    pub const fn c_type(self) -> &'static str {
        self.facts().c
    }

    /// The size in bytes, which is also the alignment: in Rust, in CUDA C++ (kernel parameters,
    /// device memory) and in Futhark's C API.
    pub const fn size(self) -> usize {
        self.facts().size
    }

    /// Whether it is an integer type (`i64`, `i32`).
    pub const fn is_int(self) -> bool {
        matches!(self.facts().kind, Kind::Int)
    }

    /// Whether it is a floating-point type (`f64`, `f32`).
    pub const fn is_float(self) -> bool {
        matches!(self.facts().kind, Kind::Float)
    }

    /// Whether it is a number arithmetic applies to (not `bool`).
    pub const fn is_arithmetic(self) -> bool {
        !matches!(self.facts().kind, Kind::Bool)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_variant_once_in_declaration_order() {
        let mut sorted = Number::ALL;
        sorted.sort();
        assert_eq!(sorted, Number::ALL);
        for (k, n) in Number::ALL.into_iter().enumerate() {
            assert_eq!(n as usize, k, "{n}");
        }
    }

    #[test]
    fn the_facts_are_those_of_the_rust_types() {
        assert_eq!(Number::I64.size(), size_of::<i64>());
        assert_eq!(Number::F64.size(), size_of::<f64>());
        assert_eq!(Number::I32.size(), size_of::<i32>());
        assert_eq!(Number::F32.size(), size_of::<f32>());
        assert_eq!(Number::Bool.size(), size_of::<bool>());
        let names: Vec<String> = Number::ALL.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["i64", "f64", "i32", "f32", "bool"]);
        let c: Vec<&str> = Number::ALL.iter().map(|n| n.c_type()).collect();
        assert_eq!(c, ["long long", "double", "int", "float", "bool"]);
        assert!(Number::ALL.iter().all(|n| {
            let kinds = [n.is_int(), n.is_float(), !n.is_arithmetic()];
            kinds.iter().filter(|k| **k).count() == 1
        }));
        assert!(Number::I32.is_int() && Number::F32.is_float() && !Number::Bool.is_arithmetic());
    }

    #[test]
    fn futhark_names_read_back() {
        for n in Number::ALL {
            assert_eq!(Number::from_futhark_name(n.futhark_name()), Some(n));
        }
        for other in ["u8", "f16", "[]i64", "I64", ""] {
            assert_eq!(Number::from_futhark_name(other), None, "{other}");
        }
    }
}
