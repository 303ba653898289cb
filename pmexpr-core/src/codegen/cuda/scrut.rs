//! The value a `match` scrutinizes, as the generator holds it (its own module: the expression
//! and pattern generators both use it, and the pattern generator uses the expression generator).

use super::code::field_name;
use crate::types::Label;

/// The value a pattern matches: a C expression, or the fields of a record literal (matched one by
/// one, without building the record).
#[derive(Debug, Clone)]
pub(super) enum Scrut {
    Value(String),
    /// The struct's C name and the fields' values in label order.
    Fields(String, Vec<(Label, Scrut)>),
}

impl Scrut {
    pub(super) fn field(&self, l: &Label) -> Scrut {
        match self {
            Scrut::Value(s) => Scrut::Value(format!("{s}.{}", field_name(l))),
            Scrut::Fields(_, fs) => fs
                .iter()
                .find(|(k, _)| k == l)
                .map_or_else(|| Scrut::Value(String::new()), |(_, v)| v.clone()),
        }
    }

    /// The whole value as a C expression.
    pub(super) fn c(&self) -> String {
        match self {
            Scrut::Value(s) => s.clone(),
            Scrut::Fields(name, fs) => {
                let items: Vec<String> = fs.iter().map(|(_, v)| v.c()).collect();
                format!("{name}{{{}}}", items.join(", "))
            }
        }
    }
}
