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
    /// `i8`: computed as `i8`, wrapping like Rust's in a release build.
    I8,
    /// `i16`.
    I16,
    /// `isize`: 64 bits wide on every target pmexpr supports (its C and Futhark types are
    /// those of `i64`), a type of its own in Rust.
    Isize,
    /// `u8`: unsigned, wrapping; `>>` is a logical shift.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `usize`: 64 bits wide, as `isize`, with the C and Futhark types of `u64`.
    Usize,
}

/// What a number is, arithmetically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Uint,
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
    pub const ALL: [Number; 13] = [
        Number::I64,
        Number::F64,
        Number::I32,
        Number::F32,
        Number::Bool,
        Number::I8,
        Number::I16,
        Number::Isize,
        Number::U8,
        Number::U16,
        Number::U32,
        Number::U64,
        Number::Usize,
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
            Number::I8 => ("i8", "i8", "signed char", 1, Kind::Int),
            Number::I16 => ("i16", "i16", "short", 2, Kind::Int),
            // pmexpr's targets are 64-bit: `isize` and `usize` have the layout of `i64` and
            // `u64`, so they share their C and Futhark types (`from_futhark_name` reads `i64`
            // back as `I64`, which comes first).
            Number::Isize => ("isize", "i64", "long long", 8, Kind::Int),
            Number::U8 => ("u8", "u8", "unsigned char", 1, Kind::Uint),
            Number::U16 => ("u16", "u16", "unsigned short", 2, Kind::Uint),
            Number::U32 => ("u32", "u32", "unsigned int", 4, Kind::Uint),
            Number::U64 => ("u64", "u64", "unsigned long long", 8, Kind::Uint),
            Number::Usize => ("usize", "u64", "unsigned long long", 8, Kind::Uint),
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

    /// Whether it is an integer type, signed or unsigned (`i64`, `u8`, `usize`, …).
    pub const fn is_int(self) -> bool {
        matches!(self.facts().kind, Kind::Int | Kind::Uint)
    }

    /// Whether it is an unsigned integer type (`u8 u16 u32 u64 usize`): its `>>` is logical,
    /// its `MIN` is 0, and its C type is `unsigned`.
    pub const fn is_unsigned(self) -> bool {
        matches!(self.facts().kind, Kind::Uint)
    }

    /// Whether it is a signed integer type (`i8 i16 i32 i64 isize`).
    pub const fn is_signed_int(self) -> bool {
        matches!(self.facts().kind, Kind::Int)
    }

    /// `MIN..=MAX` of an integer type, as `i128`s (`None` for floats and `bool`): the range a
    /// literal of the type must lie in.
    pub const fn int_range(self) -> Option<(i128, i128)> {
        if !self.is_int() {
            return None;
        }
        let bits = self.bits();
        Some(if self.is_unsigned() {
            (0, (1_i128 << bits) - 1)
        } else {
            (-(1_i128 << (bits - 1)), (1_i128 << (bits - 1)) - 1)
        })
    }

    /// The unsigned integer type of an integer type's width (`u32` for `i32` and `u32`, `usize`
    /// for `isize`): the type of Rust's `abs_diff`. `None` for floats and `bool`.
    pub const fn unsigned(self) -> Option<Number> {
        Some(match self {
            Number::I8 | Number::U8 => Number::U8,
            Number::I16 | Number::U16 => Number::U16,
            Number::I32 | Number::U32 => Number::U32,
            Number::I64 | Number::U64 => Number::U64,
            Number::Isize | Number::Usize => Number::Usize,
            _ => return None,
        })
    }

    /// The width in bits (`bool`: 8, its storage).
    pub const fn bits(self) -> u32 {
        self.facts().size as u32 * 8
    }

    /// The number a Rust type name names (`"u8"`), if any: the inverse of
    /// [`Number::rust_name`], for the compiler's reading of annotations, literal suffixes and
    /// `as` casts.
    pub fn from_rust_name(name: &str) -> Option<Number> {
        Number::ALL.into_iter().find(|n| n.rust_name() == name)
    }

    /// Whether it is a floating-point type (`f64`, `f32`).
    pub const fn is_float(self) -> bool {
        matches!(self.facts().kind, Kind::Float)
    }

    /// Whether it is a number arithmetic applies to (not `bool`).
    pub const fn is_arithmetic(self) -> bool {
        !matches!(self.facts().kind, Kind::Bool)
    }

    /// The arithmetic numbers (all but `bool`) in the order Rust's documentation lists them:
    /// signed integers by width, then unsigned ones, then floats, the pointer-sized integer after
    /// the 64-bit one — for the texts that name them all.
    pub fn arithmetic() -> Vec<Number> {
        let mut all: Vec<Number> = Number::ALL
            .into_iter()
            .filter(|n| n.is_arithmetic())
            .collect();
        all.sort_by_key(|n| {
            let class = if n.is_float() {
                2
            } else if n.is_unsigned() {
                1
            } else {
                0
            };
            (class, n.size(), n.rust_name().ends_with("size"))
        });
        all
    }

    /// The names of [`Number::arithmetic`] in a sentence: `"i8, i16, …, f32 {last} f64"`.
    pub fn arithmetic_names(last: &str) -> String {
        let names: Vec<&str> = Number::arithmetic()
            .into_iter()
            .map(Number::rust_name)
            .collect();
        match names.split_last() {
            Some((tail, rest)) if !rest.is_empty() => format!("{} {last} {tail}", rest.join(", ")),
            _ => names.join(""),
        }
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
    fn the_arithmetic_numbers_are_named_in_rusts_order() {
        assert_eq!(
            Number::arithmetic_names("and"),
            "i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32 and f64"
        );
    }

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
        assert_eq!(Number::I8.size(), size_of::<i8>());
        assert_eq!(Number::I16.size(), size_of::<i16>());
        assert_eq!(Number::Isize.size(), size_of::<isize>());
        assert_eq!(Number::U8.size(), size_of::<u8>());
        assert_eq!(Number::U16.size(), size_of::<u16>());
        assert_eq!(Number::U32.size(), size_of::<u32>());
        assert_eq!(Number::U64.size(), size_of::<u64>());
        assert_eq!(Number::Usize.size(), size_of::<usize>());
        let names: Vec<String> = Number::ALL.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "i64", "f64", "i32", "f32", "bool", "i8", "i16", "isize", "u8", "u16", "u32",
                "u64", "usize"
            ]
        );
        let c: Vec<&str> = Number::ALL.iter().map(|n| n.c_type()).collect();
        assert_eq!(
            c,
            [
                "long long",
                "double",
                "int",
                "float",
                "bool",
                "signed char",
                "short",
                "long long",
                "unsigned char",
                "unsigned short",
                "unsigned int",
                "unsigned long long",
                "unsigned long long"
            ]
        );
        for n in Number::ALL {
            assert_eq!(Number::from_rust_name(n.rust_name()), Some(n));
            assert_eq!(n.bits() as usize, 8 * n.size(), "{n}");
            assert_eq!(n.is_unsigned(), n.rust_name().starts_with('u'), "{n}");
            assert_eq!(n.is_signed_int(), n.rust_name().starts_with('i'), "{n}");
        }
        assert_eq!(Number::from_rust_name("i128"), None);
        assert_eq!(Number::from_rust_name("Int"), None);
        assert!(Number::ALL.iter().all(|n| {
            let kinds = [n.is_int(), n.is_float(), !n.is_arithmetic()];
            kinds.iter().filter(|k| **k).count() == 1
        }));
        assert!(Number::I32.is_int() && Number::F32.is_float() && !Number::Bool.is_arithmetic());
    }

    #[test]
    fn futhark_names_read_back() {
        // `isize` and `usize` share the Futhark types of `i64` and `u64`, which read back as
        // those: every Futhark name reads back as the first number of that name.
        for n in Number::ALL {
            let back = Number::from_futhark_name(n.futhark_name()).unwrap();
            assert_eq!(back.futhark_name(), n.futhark_name());
            assert_eq!(back.size(), n.size());
            assert_eq!(back.is_unsigned(), n.is_unsigned());
        }
        for n in Number::ALL
            .into_iter()
            .filter(|n| !matches!(n, Number::Isize | Number::Usize))
        {
            assert_eq!(Number::from_futhark_name(n.futhark_name()), Some(n));
        }
        assert_eq!(Number::from_futhark_name("i64"), Some(Number::I64));
        assert_eq!(Number::from_futhark_name("u64"), Some(Number::U64));
        for other in ["f16", "[]i64", "I64", "usize", ""] {
            assert_eq!(Number::from_futhark_name(other), None, "{other}");
        }
    }
}
