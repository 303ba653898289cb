//! Types: the instantiated PMExpr types, their C++ spelling, kernel parameter layouts and the
//! record structs a module defines.

use super::Gen;
use super::abi::CLayout;
use super::code::field_name;
use super::{Result, unsupported};
use crate::codegen::numbers::{self, Number};
use crate::error::SpanRange;
use crate::types::Type;

/// A record type the module defines.
pub(super) struct RecordStruct {
    pub(super) name: String,
    /// The Rust spelling, for the comment.
    pub(super) rust: String,
    pub(super) fields: Vec<(String, String)>,
}

impl<'a> Gen<'a> {
    /// The type with the numeric type variables instantiated: each becomes the type of its
    /// number ([`Type::number`]).
    pub(super) fn ity(&self, t: &Type, span: SpanRange) -> Result<Type> {
        Ok(match t {
            Type::Var(v) => match self.inst.get(v) {
                Some(n) => numbers::ground_type(*n),
                None => {
                    return unsupported(
                        span,
                        format!("the numeric type variable {} has no instantiation", v.0),
                    );
                }
            },
            Type::Num(_) => t.clone(),
            Type::Seq(a) => Type::seq(self.ity(a, span)?),
            Type::Tensor(a) => Type::tensor(self.ity(a, span)?),
            Type::Arrow(a, b) => Type::arrow(self.ity(a, span)?, self.ity(b, span)?),
            Type::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(l, t)| Ok((l.clone(), self.ity(t, span)?)))
                    .collect::<Result<_>>()?,
            ),
        })
    }

    /// The number (or `bool`) an instantiated type is, if it is one.
    pub(super) fn num(&self, t: &Type) -> Option<Number> {
        match t {
            Type::Var(v) => self.inst.get(v).copied(),
            _ => numbers::of_type(t),
        }
    }

    /// An instantiated type as Rust spells it, for comments (`Tensor<f32>`; [`Type`]'s own
    /// printout shows a variable as `_`).
    pub(super) fn shown(&self, t: &Type) -> String {
        let list = |ts: &mut dyn Iterator<Item = &Type>| -> Vec<String> {
            ts.map(|t| self.shown(t)).collect()
        };
        match t {
            Type::Var(v) => self
                .inst
                .get(v)
                .map_or_else(|| t.to_string(), |n| n.rust_name().to_string()),
            Type::Seq(a) => format!("Vec<{}>", self.shown(a)),
            Type::Tensor(a) => format!("Tensor<{}>", self.shown(a)),
            Type::Arrow(..) => {
                let mut params = Vec::new();
                let mut r = t;
                while let Type::Arrow(a, b) = r {
                    params.push(self.shown(a));
                    r = b;
                }
                format!("fn({}) -> {}", params.join(", "), self.shown(r))
            }
            Type::Record(fs) if Type::is_tuple_record(fs) => {
                let parts = list(&mut fs.iter().map(|(_, t)| t));
                match parts.len() {
                    0 => "()".into(),
                    1 => format!("({},)", parts[0]),
                    _ => format!("({})", parts.join(", ")),
                }
            }
            Type::Record(fs) => {
                let parts: Vec<String> = fs
                    .iter()
                    .map(|(l, t)| format!("{l}: {}", self.shown(t)))
                    .collect();
                format!("{{ {} }}", parts.join(", "))
            }
            Type::Num(_) => t.to_string(),
        }
    }

    /// The C type of a (possibly not instantiated) PMExpr type; defines record structs on first
    /// use, fields first.
    pub(super) fn c_type(&mut self, t: &Type, span: SpanRange) -> Result<String> {
        let t = self.ity(t, span)?;
        self.c_type_of(&t, span)
    }

    pub(super) fn c_type_of(&mut self, t: &Type, span: SpanRange) -> Result<String> {
        Ok(match t {
            // A number or `bool`; a variable without one is `ity`'s error.
            Type::Num(_) | Type::Var(_) => match self.num(t) {
                Some(n) => n.c_type().into(),
                None => {
                    let t = self.ity(t, span)?;
                    return self.c_type_of(&t, span);
                }
            },
            Type::Record(fs) if fs.is_empty() => "pm_unit".into(),
            Type::Seq(a) => format!("pm_seq<{}>", self.c_type_of(a, span)?),
            Type::Tensor(a) => match self.num(a) {
                Some(_) => format!("pm_tensor<{}>", self.c_type_of(a, span)?),
                _ => {
                    return unsupported(
                        span,
                        format!(
                            "a tensor of `{}` (tensors hold numbers or bool)",
                            self.shown(a)
                        ),
                    );
                }
            },
            Type::Record(fs) => {
                if let Some(&i) = self.record_index.get(t) {
                    return Ok(self.records[i].name.clone());
                }
                let mut fields = Vec::new();
                for (l, ft) in fs {
                    fields.push((field_name(l), self.c_type_of(ft, span)?));
                }
                let stem = if Type::is_tuple_record(fs) {
                    "tuple"
                } else {
                    "record"
                };
                let name = format!("{stem}{}", self.records.len());
                self.record_index.insert(t.clone(), self.records.len());
                self.records.push(RecordStruct {
                    name: name.clone(),
                    rust: self.shown(t),
                    fields,
                });
                name
            }
            Type::Arrow(..) => {
                return unsupported(
                    span,
                    format!("a value of function type `{}` in CUDA code", self.shown(t)),
                );
            }
        })
    }

    /// The C return type: `void` for unit.
    pub(super) fn ret_type(&mut self, t: &Type, span: SpanRange) -> Result<String> {
        if self.ity(t, span)?.is_unit() {
            Ok("void".into())
        } else {
            self.c_type(t, span)
        }
    }

    pub(super) fn layout(&mut self, t: &Type, span: SpanRange) -> Result<CLayout> {
        let t = self.ity(t, span)?;
        Ok(match &t {
            Type::Num(_) | Type::Var(_) => match self.num(&t) {
                Some(n) => CLayout::Number(n),
                None => {
                    return unsupported(span, format!("a kernel parameter of type `{t}`"));
                }
            },
            Type::Record(fs) if fs.is_empty() => CLayout::Unit,
            Type::Seq(a) => CLayout::Seq(Box::new(self.layout(a, span)?)),
            Type::Tensor(a) => CLayout::Tensor(Box::new(self.layout(a, span)?)),
            Type::Record(fs) => {
                let name = self.c_type_of(&t, span)?;
                let mut fields = Vec::new();
                for (l, ft) in fs {
                    fields.push((field_name(l), self.layout(ft, span)?));
                }
                CLayout::Struct { name, fields }
            }
            Type::Arrow(..) => {
                return unsupported(
                    span,
                    format!("a kernel parameter of type `{}`", self.shown(&t)),
                );
            }
        })
    }

    pub(super) fn is_unit(&self, t: &Type) -> bool {
        matches!(t, Type::Record(fs) if fs.is_empty())
    }
}
