//! Definitions and entry points: `def`s, and the boundary where captured values and results
//! cross as their primitive leaves.

use super::code::{
    Code, comment, field_name, indent, is_one_tuple, let_line, record_code, var_name, with_lets,
};
use super::expr::{Gen, R, Tail};
use super::{EntryParam, EntryResult, EntrySignature, GenError, Leaf, instantiation_note};
use crate::ast::Param;
use crate::lift::{Def, Origin};
use crate::tailrec::TailLoop;
use crate::types::{Label, Type};

/// `a, b, ` for names `a`, `b` (nothing for none): the start of a tuple that goes on.
fn tuple_prefix(names: &[&str]) -> String {
    names.iter().map(|n| format!("{n}, ")).collect()
}

impl Gen<'_, '_> {
    // ----- definitions -----

    /// `def name params`, after the comment that names a `#[pmexpr]` function's source.
    fn def_header(&self, d: &Def, name: &str) -> R<String> {
        let mut text = String::new();
        if let Origin::Item(item) = &d.origin {
            text.push_str(&comment(&format!(
                "#[pmexpr] fn {} at {}",
                item.name, item.location
            )));
        }
        text.push_str("def ");
        text.push_str(name);
        for p in d.lambda().0 {
            text.push(' ');
            text.push_str(&self.def_param(p)?);
        }
        Ok(text)
    }

    /// `def name params = body`.
    pub(super) fn def(&mut self, d: &Def, name: &str) -> R<String> {
        let mut text = self.def_header(d, name)?;
        let body = self.expr(d.lambda().1)?;
        text.push_str(" =\n  ");
        text.push_str(&indent(&body.text, 2));
        Ok(text)
    }

    /// `def name params = …` of a tail-recursive function ([`crate::tailrec`]): a `loop … while`
    /// over the parameters that its calls change and the result, which starts as a placeholder
    /// value of its type and is the last state's.
    pub(super) fn loop_def(&mut self, d: &Def, name: &str, l: &TailLoop) -> R<String> {
        if l.calls == 0 {
            return self.def(d, name);
        }
        let mut text = self.def_header(d, name)?;
        let (params, body) = d.lambda();
        // A wildcard parameter is never read: it needs no place in the state.
        let varying: Vec<(usize, String)> = params
            .iter()
            .enumerate()
            .filter(|(i, p)| l.varying[*i] && p.ident.name != "_")
            .map(|(i, p)| (i, self.binder(p)))
            .collect();
        let go = self.fresh("go");
        let result = self.fresh("r");
        let placeholder = self.default_value(&body.ty)?.closed_text();
        let names: Vec<&str> = varying.iter().map(|(_, n)| n.as_str()).collect();
        let state = format!("({go}, {}{result})", tuple_prefix(&names));
        let init = format!("(true, {}{placeholder})", tuple_prefix(&names));
        let skipped = "_, ".repeat(names.len() + 1);
        self.tail = Some(Tail {
            f: d.ident.id,
            varying,
            result: result.clone(),
        });
        let step = self.tail_expr(body);
        self.tail = None;
        let step = step?;
        text.push_str(&format!(
            " =\n  let ({skipped}{result}) =\n    loop {state} = {init} while {go} do\n      {}\n  in {result}",
            indent(&step.text, 6)
        ));
        Ok(text)
    }

    /// A parameter of a `def`, annotated with its type unless it is a function over arrays (whose
    /// anonymous sizes would become the `def`'s size parameters: inference does better).
    pub(super) fn def_param(&self, p: &Param) -> R<String> {
        let name = self.binder(p);
        let t = self.ty(&p.ty)?;
        Ok(if t.has_function_over_arrays() {
            name
        } else {
            format!("({name}: {t})")
        })
    }

    /// A parameter of a lambda, annotated when its type holds no array and no function.
    pub(super) fn lambda_param(&self, name: &str, t: &Type) -> R<String> {
        let ft = self.ty(t)?;
        Ok(if ft.has_array() || ft.has_function() {
            name.to_string()
        } else {
            format!("({name}: {ft})")
        })
    }

    /// The entry point of an accelerated binding, and its signature.
    pub(super) fn entry(&mut self, d: &Def, site: &str, name: &str) -> R<(String, EntrySignature)> {
        let (params, body) = d.lambda();
        let mut header = comment(&format!(
            "accelerate! at {site}{}",
            instantiation_note(self.inst)
        ));
        let mut sig_params = Vec::new();
        let mut param_text = Vec::new();
        let mut rebuild = Vec::new();
        for p in params {
            let (param, text, line) = self.entry_param(p)?;
            param_text.extend(text);
            rebuild.extend(line);
            sig_params.push(param);
        }
        let result_ty = self.ty(&body.ty)?;
        let paths = leaf_paths(&body.ty)?;
        if paths.is_empty() {
            return Err(GenError::Unsupported(
                "a site whose value is `()` (a Futhark entry point returns values)".into(),
            ));
        }
        let leaves: Vec<Leaf> = paths
            .into_iter()
            .enumerate()
            .map(|(k, (path, ty))| {
                Ok(Leaf {
                    name: format!("out{k}"),
                    path,
                    ty: self.ty(&ty)?,
                })
            })
            .collect::<R<_>>()?;
        let out_ty = match leaves.as_slice() {
            [one] => one.ty.to_string(),
            many => {
                let ts: Vec<String> = many.iter().map(|l| l.ty.to_string()).collect();
                format!("({})", ts.join(", "))
            }
        };
        let value = self.expr(body)?;
        let mut lines = rebuild;
        let result = if result_ty.has_struct() {
            lines.push(let_line("pm_result", &value));
            let outs = self.flatten_result(&body.ty, "pm_result", 0)?;
            Code::atom(if outs.len() == 1 {
                outs[0].clone()
            } else {
                format!("({})", outs.join(", "))
            })
        } else {
            value
        };
        let body = with_lets(lines, result);
        header.push_str(&format!(
            "entry {name}{}{} : {out_ty} =",
            if param_text.is_empty() { "" } else { " " },
            param_text.join(" ")
        ));
        let text = format!("{header}\n  {}", indent(&body.text, 2));
        let sig = EntrySignature {
            site: site.to_string(),
            name: name.to_string(),
            instantiation: self.inst.clone(),
            params: sig_params,
            result: EntryResult {
                ty: result_ty,
                leaves,
            },
        };
        Ok((text, sig))
    }

    /// A captured variable as entry parameters: its signature, the parameter declarations, and the
    /// `let` line that rebuilds it from its leaves (when it holds records).
    pub(super) fn entry_param(
        &mut self,
        p: &Param,
    ) -> R<(EntryParam, Vec<String>, Option<String>)> {
        let var = var_name(self.cx.names, p.ident.id);
        let ty = self.ty(&p.ty)?;
        let paths = leaf_paths(&p.ty)?;
        let whole = !ty.has_struct();
        let leaves: Vec<Leaf> = paths
            .into_iter()
            .enumerate()
            .map(|(k, (path, t))| {
                Ok(Leaf {
                    name: if whole {
                        var.clone()
                    } else {
                        format!("{var}__{k}")
                    },
                    path,
                    ty: self.ty(&t)?,
                })
            })
            .collect::<R<_>>()?;
        let decls = leaves
            .iter()
            .map(|l| format!("({}: {})", l.name, l.ty))
            .collect();
        let line = if whole {
            None
        } else {
            let access: Vec<Access> = leaves
                .iter()
                .map(|l| Access {
                    name: l.name.clone(),
                    idx: Vec::new(),
                })
                .collect();
            let built = self.rebuild(&p.ty, &access, 0)?;
            Some(let_line(&var, &built))
        };
        let param = EntryParam {
            name: p.ident.name.clone(),
            ty,
            leaves,
        };
        Ok((param, decls, line))
    }

    /// A value of type `t` from its leaves (in [`leaf_paths`] order).
    pub(super) fn rebuild(&mut self, t: &Type, leaves: &[Access], depth: usize) -> R<Code> {
        if !self.ty(t)?.has_struct() {
            return Ok(first_leaf(leaves)?.code());
        }
        match t {
            Type::Seq(e) => {
                let first = first_leaf(leaves)?;
                let i = format!("pm_i{depth}");
                let inner: Vec<Access> = leaves
                    .iter()
                    .map(|a| {
                        let mut a = a.clone();
                        a.idx.push(i.clone());
                        a
                    })
                    .collect();
                let body = self.rebuild(e, &inner, depth + 1)?;
                Ok(Code::closed(format!(
                    "map (\\{i} -> {}) (indices {})",
                    body.text,
                    first.code().arg()
                )))
            }
            Type::Record(fs) if is_one_tuple(fs) => self.rebuild(&fs[0].1, leaves, depth),
            Type::Record(fs) => {
                let mut rest = leaves;
                let mut parts = Vec::new();
                for (l, ft) in fs {
                    let n = leaf_paths(ft)?.len();
                    let (mine, after) = rest.split_at(n);
                    rest = after;
                    let code = self.rebuild(ft, mine, depth)?;
                    parts.push((field_name(l), code));
                }
                Ok(record_code(fs, parts))
            }
            _ => Ok(first_leaf(leaves)?.code()),
        }
    }

    /// The leaves of the value named `code` (an atom) of type `t`, as expressions.
    pub(super) fn flatten_result(&self, t: &Type, code: &str, depth: usize) -> R<Vec<String>> {
        if !self.ty(t)?.has_struct() {
            return Ok(vec![code.to_string()]);
        }
        match t {
            Type::Seq(e) => {
                let r = format!("pm_r{depth}");
                let inner = self.flatten_result(e, &r, depth + 1)?;
                let array = if code.contains('.') {
                    format!("({code})")
                } else {
                    code.to_string()
                };
                Ok(inner
                    .into_iter()
                    .map(|x| format!("(map (\\{r} -> {x}) {array})"))
                    .collect())
            }
            Type::Record(fs) if is_one_tuple(fs) => self.flatten_result(&fs[0].1, code, depth),
            Type::Record(fs) => {
                let mut out = Vec::new();
                for (l, ft) in fs {
                    let field = format!("{code}.{}", field_name(l));
                    out.extend(self.flatten_result(ft, &field, depth)?);
                }
                Ok(out)
            }
            _ => Ok(vec![code.to_string()]),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Leaves: the primitive parts of a value that crosses the boundary
// ---------------------------------------------------------------------------------------------

/// A leaf of a value being rebuilt: a parameter, indexed by the enclosing `map`s' variables.
#[derive(Debug, Clone)]
pub(super) struct Access {
    name: String,
    idx: Vec<String>,
}

impl Access {
    pub(super) fn code(&self) -> Code {
        if self.idx.is_empty() {
            Code::atom(self.name.clone())
        } else {
            Code::closed(format!("{}[{}]", self.name, self.idx.join(", ")))
        }
    }
}

/// The first leaf: types without records have exactly one.
pub(super) fn first_leaf(leaves: &[Access]) -> R<&Access> {
    leaves.first().ok_or_else(|| {
        GenError::Unsupported("a sequence of `()` crossing into Futhark code".into())
    })
}

/// The leaves of a type: the paths of record labels to its primitives, with the type of each
/// leaf (one sequence level per sequence crossed).
pub(super) fn leaf_paths(t: &Type) -> R<Vec<(Vec<Label>, Type)>> {
    fn go(
        t: &Type,
        path: &mut Vec<Label>,
        rank: usize,
        out: &mut Vec<(Vec<Label>, Type)>,
    ) -> R<()> {
        match t {
            Type::Num(_) | Type::Var(_) => {
                let mut leaf = t.clone();
                for _ in 0..rank {
                    leaf = Type::seq(leaf);
                }
                out.push((path.clone(), leaf));
            }
            Type::Seq(e) => go(e, path, rank + 1, out)?,
            Type::Record(fs) => {
                for (l, ft) in fs {
                    path.push(l.clone());
                    go(ft, path, rank, out)?;
                    path.pop();
                }
            }
            Type::Tensor(_) => return Err(GenError::Tensor),
            Type::Arrow(..) => {
                return Err(GenError::Unsupported(
                    "a function crossing into Futhark code".into(),
                ));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    go(t, &mut Vec::new(), 0, &mut out)?;
    Ok(out)
}
