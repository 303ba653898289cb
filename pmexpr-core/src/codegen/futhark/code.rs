//! Fragments of Futhark code and their layout, literals, and the names of variables and fields.

use crate::ast::{Lit, VarId};
use crate::codegen::numbers::Number;
use crate::types::{Label, Type};

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

/// A line comment; line breaks in `text` (a file name can hold one) become spaces, so that the
/// rest cannot escape the comment.
pub(super) fn comment(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("-- {line}\n")
}

/// Futhark's reserved words (language reference, "Reserved names and symbols").
pub(super) const KEYWORDS: &[&str] = &[
    "true", "false", "if", "then", "else", "def", "let", "loop", "in", "val", "for", "do", "with",
    "local", "open", "include", "import", "type", "entry", "module", "while", "assert", "match",
    "case",
];

/// A user's name as the stem of a Futhark identifier: ASCII letters, digits and single `_`s,
/// starting with a letter, never starting with a generated prefix (`pm_`, `site_`).
pub(super) fn stem(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'v');
    }
    if out == "pm" || out.starts_with("pm_") || out == "site" || out.starts_with("site_") {
        out.insert_str(0, "u_");
    }
    out
}

/// The Futhark name of a variable: its stem, `_` and its identifier.
pub(super) fn var_name(names: &[String], id: VarId) -> String {
    let name = names.get(id.0 as usize).map_or("v", String::as_str);
    format!("{}_{}", stem(name), id.0)
}

/// The Futhark name of a record field.
pub(super) fn field_name(l: &Label) -> String {
    match l {
        Label::Index(i) => i.to_string(),
        Label::Name(n) => {
            let mut s = stem(n);
            if KEYWORDS.contains(&s.as_str()) {
                s.push('_');
            }
            s
        }
    }
}

pub(super) fn is_one_tuple(fs: &[(Label, Type)]) -> bool {
    fs.len() == 1 && fs[0].0 == Label::Index(0)
}

// ---------------------------------------------------------------------------------------------
// Code fragments
// ---------------------------------------------------------------------------------------------

/// How a fragment of Futhark code combines with what surrounds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Never needs parentheses: names, literals, parenthesized or bracketed forms.
    Atom,
    /// An application or operator: parenthesized as an argument or operand.
    Closed,
    /// A form that extends as far right as possible (`if`, `match`, `loop`, `with`):
    /// parenthesized everywhere but in tail position.
    Open,
    /// A `let … in …` chain: open, and merged into an enclosing chain that ends with it.
    Lets,
}

/// A fragment of Futhark code. Lines after the first are indented relative to the first.
#[derive(Debug, Clone)]
pub(super) struct Code {
    pub(super) text: String,
    pub(super) kind: Kind,
}

impl Code {
    pub(super) fn atom(text: impl Into<String>) -> Code {
        Code {
            text: text.into(),
            kind: Kind::Atom,
        }
    }

    pub(super) fn closed(text: impl Into<String>) -> Code {
        Code {
            text: text.into(),
            kind: Kind::Closed,
        }
    }

    pub(super) fn open(text: impl Into<String>) -> Code {
        Code {
            text: text.into(),
            kind: Kind::Open,
        }
    }

    /// As an argument or operand.
    pub(super) fn arg(&self) -> String {
        match self.kind {
            Kind::Atom => self.text.clone(),
            _ => paren(&self.text),
        }
    }

    /// Where an application is fine but an open form must be closed (then-branches, case bodies,
    /// tuple fields, indices).
    pub(super) fn closed_text(&self) -> String {
        match self.kind {
            Kind::Open | Kind::Lets => paren(&self.text),
            Kind::Atom | Kind::Closed => self.text.clone(),
        }
    }

    pub(super) fn is_multiline(&self) -> bool {
        self.text.contains('\n')
    }

    /// Whether the fragment can be written twice without computing anything twice.
    pub(super) fn is_name(&self) -> bool {
        self.kind == Kind::Atom
            && !self.text.is_empty()
            && self
                .text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    }
}

pub(super) fn paren(text: &str) -> String {
    format!("({})", indent(text, 1))
}

/// Indents every line but the first by `n` spaces.
pub(super) fn indent(text: &str, n: usize) -> String {
    text.replace('\n', &format!("\n{}", " ".repeat(n)))
}

/// `let pat = value` as a line of a `let` chain.
pub(super) fn let_line(pat: &str, value: &Code) -> String {
    if value.is_multiline() {
        format!("let {pat} =\n  {}", indent(&value.text, 2))
    } else {
        format!("let {pat} = {}", value.text)
    }
}

/// `let … in body`; a body that is itself a chain continues this one (`in` is optional before a
/// `let`).
pub(super) fn with_lets(lines: Vec<String>, body: Code) -> Code {
    if lines.is_empty() {
        return body;
    }
    let mut text = lines.join("\n");
    if body.kind == Kind::Lets {
        text.push('\n');
        text.push_str(&body.text);
    } else {
        text.push_str("\nin ");
        text.push_str(&indent(&body.text, 3));
    }
    Code {
        text,
        kind: Kind::Lets,
    }
}

/// `f a b …` with every part as an argument.
pub(super) fn apply_text(f: &str, args: &[Code]) -> Code {
    let mut text = f.to_string();
    for a in args {
        text.push(' ');
        text.push_str(&a.arg());
    }
    Code::closed(text)
}

/// `a op b`.
pub(super) fn binop(a: &Code, op: &str, b: &Code) -> Code {
    Code::closed(format!("{} {op} {}", a.arg(), b.arg()))
}

/// `a op b` for floats with the NaN test `nan` (`f64.isnan`) made explicitly: IEEE's meaning,
/// whatever Futhark's simplifier does with equal operands (see `Gen::nan_test`). A NaN `a` makes
/// `!=` true and the others false; otherwise the comparison decides (a NaN `b` makes it false,
/// or true for `!=`, as IEEE says). `a` is pure: naming it twice costs nothing after CSE.
pub(super) fn nan_safe(nan: &str, a: &Code, op: &str, b: &Code) -> Code {
    let (a_text, cmp) = (a.arg(), binop(a, op, b).closed_text());
    if op == "!=" {
        Code::closed(format!("{nan} {a_text} || {cmp}"))
    } else {
        Code::closed(format!("!({nan} {a_text}) && {cmp}"))
    }
}

/// A record value from its fields' code: a tuple, `()`, or a record with named fields.
pub(super) fn record_code(tys: &[(Label, Type)], parts: Vec<(String, Code)>) -> Code {
    if Type::is_tuple_record(tys) {
        let fields: Vec<String> = parts.iter().map(|(_, c)| c.closed_text()).collect();
        Code::atom(format!("({})", fields.join(", ")))
    } else {
        let fields: Vec<String> = parts
            .iter()
            .map(|(l, c)| format!("{l} = {}", c.closed_text()))
            .collect();
        Code::atom(format!("{{{}}}", fields.join(", ")))
    }
}

/// `if c1 then a1 else if c2 then a2 … else b`: the innermost tests on one line while the
/// whole of them is short, the others one `if`, `then` and `else` per line, each `else if` at
/// the first one's indentation (nested, a chain of k tests was indented k levels deep: k² text).
pub(super) fn if_chain(branches: Vec<(Code, Code)>, last: Code) -> Code {
    let mut tail = last.text;
    let mut tail_is_if = false;
    let mut n = branches.len();
    while n > 0 {
        let (c, a) = &branches[n - 1];
        let one = format!(
            "if {} then {} else {tail}",
            c.closed_text(),
            a.closed_text()
        );
        if one.contains('\n') || one.len() > 80 {
            break;
        }
        tail = one;
        tail_is_if = true;
        n -= 1;
    }
    if n == 0 {
        return Code::open(tail);
    }
    let mut text = String::new();
    for (c, a) in &branches[..n] {
        text.push_str("if ");
        text.push_str(&indent(&c.closed_text(), 3));
        text.push_str("\nthen ");
        text.push_str(&indent(&a.closed_text(), 5));
        text.push_str("\nelse ");
    }
    if tail_is_if {
        text.push_str(&tail);
    } else {
        text.push_str(&indent(&tail, 5));
    }
    Code::open(text)
}

/// The suffixes of an integer and of a float literal of number type `prim` (`i64`, `f64` when
/// not given or not that kind of number).
pub(super) fn literal_suffixes(prim: Option<Number>) -> (&'static str, &'static str) {
    let (int, float) = (Number::I64.futhark_name(), Number::F64.futhark_name());
    match prim {
        Some(p) if p.is_int() => (p.futhark_name(), float),
        Some(p) if p.is_float() => (int, p.futhark_name()),
        _ => (int, float),
    }
}

/// Whether the integer `i` is a value of the integer type `n`.
fn int_fits(i: i128, n: Number) -> bool {
    n.int_range().is_some_and(|(lo, hi)| (lo..=hi).contains(&i))
}

/// A literal of number type `prim` (`i64` or `f64` when not given), with its type as a suffix.
/// An integer that does not fit its type (an `i32`, a `u8`, …) is the run-time error the CPU
/// targets report.
pub(super) fn lit(l: &Lit, prim: Option<Number>) -> Code {
    let (int, float) = literal_suffixes(prim);
    // An `f32` literal is its `f32` reading (infinite beyond `f32::MAX`), written as the
    // shortest text that reads back as it.
    if let (Lit::Float(_, y), Some(Number::F32)) = (*l, prim) {
        return Code::atom(match y {
            _ if y.is_nan() => format!("{float}.nan"),
            _ if y.is_infinite() && y > 0.0 => format!("{float}.inf"),
            _ if y.is_infinite() => format!("({float}.neg {float}.inf)"),
            _ if y.is_sign_negative() => format!("(-{:?}{float})", -y),
            _ => format!("{y:?}{float}"),
        });
    }
    match *l {
        Lit::Int(i) if prim.is_some_and(|n| n.is_int() && !int_fits(i, n)) => {
            Code::atom(format!("(assert false 0{int})"))
        }
        // With no type given the literal is an `i64`: one outside it fails in the same way.
        Lit::Int(i) if i64::try_from(i).is_err() && prim.is_none() => {
            Code::atom(format!("(assert false 0{int})"))
        }
        Lit::Int(i) if i == i128::from(i64::MIN) => Code::atom("i64.lowest"),
        Lit::Int(i) if i < 0 => Code::atom(format!("(-{}{int})", i.unsigned_abs())),
        Lit::Int(i) => Code::atom(format!("{i}{int}")),
        Lit::Float(x, _) if x.is_nan() => Code::atom(format!("{float}.nan")),
        Lit::Float(x, _) if x.is_infinite() && x > 0.0 => Code::atom(format!("{float}.inf")),
        Lit::Float(x, _) if x.is_infinite() => Code::atom(format!("({float}.neg {float}.inf)")),
        // `{:?}` writes `1.0`, `0.1`, `1e-7`, `1.5e300`: all Futhark float literals.
        Lit::Float(x, _) if x.is_sign_negative() => Code::atom(format!("(-{:?}{float})", -x)),
        Lit::Float(x, _) => Code::atom(format!("{x:?}{float}")),
        Lit::Bool(b) => Code::atom(b.to_string()),
        Lit::Unit => Code::atom("()"),
    }
}
