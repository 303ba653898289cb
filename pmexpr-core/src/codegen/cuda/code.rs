//! Names and literals: C identifiers for PMExpr names and fields, C++ literals.

use crate::ast::VarId;
use crate::types::Label;

/// A C identifier for a PMExpr name with its unique identifier: `x_7`. Non-ASCII characters and
/// leading underscores go; the identifier suffix keeps names apart from C++ keywords, the
/// prelude's `pm_*` and the generated temporaries (which have no `_`).
pub(super) fn c_ident(name: &str, id: VarId) -> String {
    if name == format!("lambda{}", id.0) {
        return name.to_string();
    }
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let clean = clean.trim_start_matches('_');
    let clean = if clean.is_empty() || clean.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v{clean}")
    } else {
        clean.to_string()
    };
    format!("{clean}_{}", id.0)
}

/// C++ keywords that are also legal Rust field names.
pub(super) const CPP_KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "case",
    "catch",
    "char",
    "class",
    "compl",
    "concept",
    "const_cast",
    "constexpr",
    "consteval",
    "constinit",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "double",
    "dynamic_cast",
    "explicit",
    "export",
    "float",
    "friend",
    "goto",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "short",
    "signed",
    "sizeof",
    "static_assert",
    "static_cast",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "xor",
    "xor_eq",
];

/// The C name of a record field: `_0` for a tuple position, the name otherwise (with `_`
/// appended to a C++ keyword).
pub(super) fn field_name(l: &Label) -> String {
    match l {
        Label::Index(i) => format!("_{i}"),
        Label::Name(n) => {
            let clean: String = n
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            if CPP_KEYWORDS.contains(&clean.as_str()) || clean.starts_with('_') {
                format!("{clean}_")
            } else {
                clean
            }
        }
    }
}

/// Whether a C expression is a name or a literal (cheap and safe to repeat).
pub(super) fn is_atom(c: &str) -> bool {
    !c.is_empty()
        && c.chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
}

pub(super) fn int_lit(i: i64) -> String {
    if i == i64::MIN {
        "(-9223372036854775807LL - 1LL)".into()
    } else if i < 0 {
        format!("({i}LL)")
    } else {
        format!("{i}LL")
    }
}

pub(super) fn float_lit(x: f64) -> String {
    if x.is_nan() {
        "__longlong_as_double(0x7ff8000000000000LL)".into()
    } else if x.is_infinite() {
        let bits = if x > 0.0 {
            "0x7ff0000000000000LL"
        } else {
            "(long long)0xfff0000000000000ULL"
        };
        format!("__longlong_as_double({bits})")
    } else {
        // `{:?}` prints the shortest text that reads back exactly, always with a `.` or an `e`,
        // which is also a C++ `double` literal.
        let s = format!("{x:?}");
        if x.is_sign_negative() {
            format!("({s})")
        } else {
            s
        }
    }
}

/// An `i32` literal (C++ `int`).
pub(super) fn int32_lit(i: i32) -> String {
    if i == i32::MIN {
        "(-2147483647 - 1)".into()
    } else if i < 0 {
        format!("({i})")
    } else {
        i.to_string()
    }
}

/// An `f32` literal (C++ `float`): never a `double`, which would widen the arithmetic around it.
pub(super) fn float32_lit(x: f32) -> String {
    if x.is_nan() {
        "__int_as_float(0x7fc00000)".into()
    } else if x.is_infinite() {
        // 0xff800000 as an `int`: a hexadecimal literal that large would be unsigned.
        let bits = if x > 0.0 { "0x7f800000" } else { "(-8388608)" };
        format!("__int_as_float({bits})")
    } else {
        // `{:?}` prints the shortest text that reads back as this `f32`, always with a `.` or an
        // `e`; with `f` it is a C++ `float` literal, which the compiler rounds the same way.
        let s = format!("{x:?}f");
        if x.is_sign_negative() {
            format!("({s})")
        } else {
            s
        }
    }
}

/// A literal as C++: a value, or a call that records that it does not fit and gives 0.
pub(super) enum Literal {
    Value(String),
    Fails(String),
}

pub(super) const UNIT: &str = "pm_unit{}";
