//! Annotations: the type a [`TypeAnn`] written in the source stands for (`_` a fresh variable),
//! with the limits on tuple size and the rule that tensors hold numbers.

use super::{Infer, Kind};
use crate::ast::Param;
use crate::error::{Error, SpanRange};
use crate::types::{Annotation, Label, MAX_TUPLE, Type, TypeAnn};

impl Infer<'_> {
    /// Tensors hold `i64` or `f64`.
    pub(super) fn tensor_elements_numeric(&mut self, t: &Type) {
        match self.find(t) {
            // A tensor holds numbers or `bool`s.
            Type::Tensor(a) => {
                let _ = self.constrain(&a, Kind::Eq);
            }
            Type::Seq(a) => self.tensor_elements_numeric(&a),
            Type::Arrow(a, b) => {
                self.tensor_elements_numeric(&a);
                self.tensor_elements_numeric(&b);
            }
            Type::Record(fs) => fs.iter().for_each(|(_, t)| self.tensor_elements_numeric(t)),
            _ => {}
        }
    }

    pub(super) fn ann_type(&mut self, a: &Annotation) -> Type {
        let t = self.ann_type_raw(&a.ann);
        if std::mem::take(&mut self.oversized_tuple) {
            self.check_tuple_size(MAX_TUPLE + 1, a.span);
        }
        if let Some(bad) = self.non_numeric_tensor(&t) {
            self.errors.push(Error::new(
                a.span,
                format!("tensors hold numbers or bool, not `{bad}`"),
            ));
            // Reported here: the rest of the expression sees an unknown type, not a second error.
            return self.fresh();
        }
        self.tensor_elements_numeric(&t);
        t
    }

    /// The element type of a tensor in `t` that cannot be a tensor element, if any.
    fn non_numeric_tensor(&self, t: &Type) -> Option<Type> {
        match self.find(t) {
            Type::Tensor(a) => match self.find(&a) {
                Type::Num(_) | Type::Var(_) => None,
                other => Some(self.shown(&other)),
            },
            Type::Seq(a) => self.non_numeric_tensor(&a),
            Type::Arrow(a, b) => self
                .non_numeric_tensor(&a)
                .or_else(|| self.non_numeric_tensor(&b)),
            Type::Record(fs) => fs.iter().find_map(|(_, t)| self.non_numeric_tensor(t)),
            _ => None,
        }
    }

    pub(super) fn ann_type_raw(&mut self, a: &TypeAnn) -> Type {
        match a {
            TypeAnn::Num(n) => Type::Num(*n),
            TypeAnn::Seq(t) => Type::seq(self.ann_type_raw(t)),
            TypeAnn::Tensor(t) => Type::tensor(self.ann_type_raw(t)),
            TypeAnn::Arrow(ps, r) => {
                let mut ps: Vec<Type> = ps.iter().map(|p| self.ann_type_raw(p)).collect();
                if ps.is_empty() {
                    // `fn() -> T` takes `()`, as `|| e` and `f()` do.
                    ps.push(Type::unit());
                }
                let r = self.ann_type_raw(r);
                Type::arrows(ps, r)
            }
            TypeAnn::Tuple(ts) => {
                let ts: Vec<Type> = ts.iter().map(|t| self.ann_type_raw(t)).collect();
                if ts.len() > MAX_TUPLE {
                    self.oversized_tuple = true;
                }
                Type::tuple(ts)
            }
            TypeAnn::Record(fs) => {
                if fs.len() > MAX_TUPLE {
                    self.oversized_tuple = true;
                }
                let mut fs: Vec<(Label, Type)> = fs
                    .iter()
                    .map(|(l, t)| (Label::Name(l.clone()), self.ann_type_raw(t)))
                    .collect();
                fs.sort_by(|a, b| a.0.cmp(&b.0));
                Type::Record(fs)
            }
            // The parser expands struct names; one left here is already reported.
            TypeAnn::Named(_) | TypeAnn::Infer => self.fresh(),
        }
    }

    pub(super) fn check_tuple_size(&mut self, n: usize, span: SpanRange) {
        if n > MAX_TUPLE {
            self.errors.push(
                Error::new(
                    span,
                    format!("tuples inside `accelerate!` have at most {MAX_TUPLE} fields, this one has {n}"),
                )
                .help("nest tuples to hold more values"),
            );
        }
    }

    pub(super) fn param_type(&mut self, p: &mut Param) -> Type {
        let t = match &p.ann {
            Some(a) => self.ann_type(&a.clone()),
            None => self.fresh(),
        };
        p.ty = t.clone();
        t
    }
}
