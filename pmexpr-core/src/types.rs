//! PMExpr types (paper appendix, Figure "base language": ground types, arrows, records, sequences
//! and tensors), printed the way a Rust user writes them.

use std::fmt;

use crate::error::SpanRange;
pub use pmexpr_abi::Number;

/// The most fields a tuple or a record has inside `accelerate!`: the one arity limit of the
/// compiler (tuple types and projections, derived structs), shared with the runtime, whose
/// marshaling traits are implemented for tuples of exactly up to this many fields
/// ([`pmexpr_abi::MAX_TUPLE`]), so every value the compiler accepts crosses.
pub use pmexpr_abi::MAX_TUPLE;

/// A record label: a tuple position (`t.0`) or a field name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    /// A tuple position.
    Index(u32),
    /// A named field.
    Name(String),
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Index(i) => write!(f, "{i}"),
            Label::Name(n) => f.write_str(n),
        }
    }
}

/// A type variable of inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TyVar(pub u32);

/// A PMExpr type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    /// A number or `bool`, one row of [`Number`] each: the paper's `Int`, `Float` and `Bool`
    /// are `i64`, `f64` and `bool` ([`Type::INT`], [`Type::FLOAT`], [`Type::BOOL`]); beyond
    /// the paper, Rust's other numbers (`u8`, `i32`, `usize`, `f32`, …), named in the
    /// expression (an annotation, a literal's suffix, an `as`) or by the captured values.
    Num(Number),
    /// `[T]`: an immutable sequence (`Vec<T>` in Rust).
    Seq(Box<Type>),
    /// `Tensor[T]`: a mutable, shaped array of any number or `bool`.
    Tensor(Box<Type>),
    /// `T1 -> T2`.
    Arrow(Box<Type>, Box<Type>),
    /// A record, fields sorted by label; the empty record is the unit type `()`.
    Record(Vec<(Label, Type)>),
    /// A type not yet known.
    Var(TyVar),
}

impl Type {
    /// The paper's `Int`: `i64`.
    pub const INT: Type = Type::Num(Number::I64);
    /// The paper's `Float`: `f64`.
    pub const FLOAT: Type = Type::Num(Number::F64);
    /// The paper's `Bool`: `bool`.
    pub const BOOL: Type = Type::Num(Number::Bool);

    /// The type that is the number (or `bool`) `n`.
    pub const fn number(n: Number) -> Type {
        Type::Num(n)
    }

    /// The number (or `bool`) this type is, if it is one.
    pub fn as_number(&self) -> Option<Number> {
        match self {
            Type::Num(n) => Some(*n),
            _ => None,
        }
    }

    /// Whether this is one of the paper's ground types, `i64`, `f64` or `bool` (`Int`, `Float`
    /// and `Bool`), whose operators are the paper's intrinsics (`addi`, `addf`, `eqb`).
    pub fn is_paper_ground(&self) -> bool {
        matches!(self, Type::Num(Number::I64 | Number::F64 | Number::Bool))
    }

    /// The unit type `()` (the empty record).
    pub fn unit() -> Type {
        Type::Record(Vec::new())
    }

    /// `[t]`.
    pub fn seq(t: Type) -> Type {
        Type::Seq(Box::new(t))
    }

    /// `Tensor[t]`.
    pub fn tensor(t: Type) -> Type {
        Type::Tensor(Box::new(t))
    }

    /// `a -> b`.
    pub fn arrow(a: Type, b: Type) -> Type {
        Type::Arrow(Box::new(a), Box::new(b))
    }

    /// `p1 -> … -> pn -> ret`.
    pub fn arrows(
        params: impl IntoIterator<Item = Type, IntoIter: DoubleEndedIterator>,
        ret: Type,
    ) -> Type {
        params
            .into_iter()
            .rev()
            .fold(ret, |acc, p| Type::arrow(p, acc))
    }

    /// A tuple `(t0, t1, …)` as a record with labels `0, 1, …`.
    pub fn tuple(ts: Vec<Type>) -> Type {
        Type::Record(
            ts.into_iter()
                .enumerate()
                .map(|(i, t)| (Label::Index(i as u32), t))
                .collect(),
        )
    }

    /// Whether this is the unit type.
    pub fn is_unit(&self) -> bool {
        matches!(self, Type::Record(f) if f.is_empty())
    }

    /// Whether this is a function type.
    pub fn is_arrow(&self) -> bool {
        matches!(self, Type::Arrow(..))
    }

    /// Splits `p1 -> … -> pn -> r` into at most `n` parameters and the rest.
    pub fn split_arrows(&self, n: usize) -> (Vec<&Type>, &Type) {
        let mut params = Vec::new();
        let mut t = self;
        while params.len() < n {
            match t {
                Type::Arrow(a, b) => {
                    params.push(&**a);
                    t = b;
                }
                _ => break,
            }
        }
        (params, t)
    }

    /// Whether any type variable occurs in this type.
    pub fn has_vars(&self) -> bool {
        match self {
            Type::Num(_) => false,
            Type::Seq(t) | Type::Tensor(t) => t.has_vars(),
            Type::Arrow(a, b) => a.has_vars() || b.has_vars(),
            Type::Record(fs) => fs.iter().any(|(_, t)| t.has_vars()),
            Type::Var(_) => true,
        }
    }

    /// Whether a function type occurs anywhere in this type.
    pub fn has_arrow(&self) -> bool {
        match self {
            Type::Num(_) | Type::Var(_) => false,
            Type::Seq(t) | Type::Tensor(t) => t.has_arrow(),
            Type::Arrow(..) => true,
            Type::Record(fs) => fs.iter().any(|(_, t)| t.has_arrow()),
        }
    }

    /// Whether a sequence of sequences occurs anywhere in this type (the values that debug mode
    /// checks for regularity).
    pub fn has_nested_seq(&self) -> bool {
        match self {
            Type::Num(_) | Type::Var(_) | Type::Arrow(..) => false,
            Type::Seq(t) => t.has_seq() || t.has_nested_seq(),
            Type::Tensor(t) => t.has_nested_seq(),
            Type::Record(fs) => fs.iter().any(|(_, t)| t.has_nested_seq()),
        }
    }

    fn has_seq(&self) -> bool {
        match self {
            Type::Seq(_) => true,
            Type::Record(fs) => fs.iter().any(|(_, t)| t.has_seq()),
            _ => false,
        }
    }

    /// Whether a record is a tuple (labels `0..n`).
    pub fn is_tuple_record(fields: &[(Label, Type)]) -> bool {
        fields
            .iter()
            .enumerate()
            .all(|(i, (l, _))| *l == Label::Index(i as u32))
    }
}

/// Prints the type as Rust code would name it (`Vec<i64>`, `(i64, f64)`, `fn(i64) -> bool`);
/// unknown parts print as `_`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Num(n) => f.write_str(n.rust_name()),
            Type::Seq(t) => write!(f, "Vec<{t}>"),
            Type::Tensor(t) => write!(f, "Tensor<{t}>"),
            Type::Arrow(..) => {
                let mut params = Vec::new();
                let mut t = self;
                while let Type::Arrow(a, b) = t {
                    params.push(a.to_string());
                    t = b;
                }
                write!(f, "fn({}) -> {t}", params.join(", "))
            }
            Type::Record(fs) if Type::is_tuple_record(fs) => match fs.len() {
                0 => f.write_str("()"),
                1 => write!(f, "({},)", fs[0].1),
                _ => {
                    let parts: Vec<String> = fs.iter().map(|(_, t)| t.to_string()).collect();
                    write!(f, "({})", parts.join(", "))
                }
            },
            Type::Record(fs) => {
                let parts: Vec<String> = fs.iter().map(|(l, t)| format!("{l}: {t}")).collect();
                write!(f, "{{ {} }}", parts.join(", "))
            }
            Type::Var(_) => f.write_str("_"),
        }
    }
}

/// A type written by the user (a Rust type inside `accelerate!`), before inference turns `_`
/// into fresh variables.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeAnn {
    /// A number or `bool` (`i64`, `u8`, `f32`, `bool`, …).
    Num(Number),
    /// `Vec<T>`, `[T]`, `&[T]`, `[T; N]`.
    Seq(Box<TypeAnn>),
    /// `Tensor<T>`.
    Tensor(Box<TypeAnn>),
    /// `fn(A, B) -> C`, `impl Fn(A, B) -> C`.
    Arrow(Vec<TypeAnn>, Box<TypeAnn>),
    /// A tuple, `()` included.
    Tuple(Vec<TypeAnn>),
    /// A `#[derive(pmexpr::Record)]` struct, by name (in a struct's definition, before the
    /// parser expands it with [`crate::record::Records`]).
    Named(String),
    /// A struct's record type: its fields by name.
    Record(Vec<(String, TypeAnn)>),
    /// `_`.
    Infer,
}

/// A type annotation with the span of the user's tokens.
#[derive(Debug, Clone)]
pub struct Annotation {
    /// The type written.
    pub ann: TypeAnn,
    /// Where it was written.
    pub span: SpanRange,
}

/// The largest type, in parts (`Vec<(i64, f64)>` has 4), that inference writes out; a bigger one
/// is an error rather than exponential time and memory. Rust's own limit on type length is
/// 1,048,576 by default; the generated code spells out each type several times.
pub const MAX_TYPE_SIZE: usize = 10_000;

/// The deepest type inference accepts: the generated code spells each type for rustc, whose trait
/// solver and drop check stop at 128 nested obligations: a sequence literal nested 32 deep
/// compiles, 60 deep does not.
pub const MAX_TYPE_DEPTH: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_rust_names() {
        let t = Type::arrows(
            [Type::seq(Type::INT), Type::FLOAT],
            Type::tuple(vec![Type::BOOL, Type::unit()]),
        );
        assert_eq!(t.to_string(), "fn(Vec<i64>, f64) -> (bool, ())");
        assert_eq!(Type::tensor(Type::Var(TyVar(0))).to_string(), "Tensor<_>");
        assert_eq!(Type::tuple(vec![Type::INT]).to_string(), "(i64,)");
    }

    #[test]
    fn nested_sequences() {
        assert!(!Type::seq(Type::INT).has_nested_seq());
        assert!(Type::seq(Type::seq(Type::INT)).has_nested_seq());
        assert!(Type::seq(Type::tuple(vec![Type::seq(Type::INT)])).has_nested_seq());
        assert!(Type::tuple(vec![Type::seq(Type::seq(Type::INT))]).has_nested_seq());
    }
}
