//! Definitions and entry points: `def`s, and the boundary where captured values and results
//! cross as their primitive leaves.

use super::code::{
    Code, comment, field_name, indent, is_one_tuple, let_line, record_code, var_name, with_lets,
};
use super::expr::{Gen, R, Tail};
use super::{EntryParam, EntryResult, EntrySignature, GenError, Leaf, instantiation_note};
use std::collections::{HashMap, HashSet};

use crate::ast::{Expr, ExprKind, Param, VarId};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::{Def, Origin};
use crate::tailrec::TailLoop;
use crate::types::{Label, Type};

/// `a, b, ` for names `a`, `b` (nothing for none): the start of a tuple that goes on.
fn tuple_prefix(names: &[&str]) -> String {
    names.iter().map(|n| format!("{n}, ")).collect()
}

impl Gen<'_, '_> {
    // ----- definitions -----

    /// `def name [n]… params`, after the comment that names a `#[pmexpr]` function's source; the
    /// parameters in `sizes` typed with their size (see `loop_def`).
    fn def_header(&self, d: &Def, name: &str, sizes: &HashMap<VarId, String>) -> R<String> {
        let mut text = String::new();
        if let Origin::Item(item) = &d.origin {
            text.push_str(&comment(&format!(
                "#[pmexpr] fn {} at {}",
                item.name, item.location
            )));
        }
        text.push_str("def ");
        text.push_str(name);
        let params = d.lambda().0;
        for n in params.iter().filter_map(|p| sizes.get(&p.ident.id)) {
            text.push_str(&format!(" [{n}]"));
        }
        for p in params {
            text.push(' ');
            match sizes.get(&p.ident.id) {
                Some(n) => {
                    let t = self.sized_ty(&p.ty, n)?;
                    text.push_str(&format!("({}: {t})", self.binder(p)));
                }
                None => text.push_str(&self.def_param(p)?),
            }
        }
        Ok(text)
    }

    /// `def name params = body`.
    pub(super) fn def(&mut self, d: &Def, name: &str) -> R<String> {
        let mut text = self.def_header(d, name, &HashMap::new())?;
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
        let (params, body) = d.lambda();
        let tail = TailParts::of(body, d.ident.id);
        let picked = result_params(params, &body.ty, &tail.exits);
        // The arrays whose size the loop keeps, given a size parameter of the `def`: Futhark gives
        // a loop's array state a new, unknown size unless its pattern names one, and a function
        // whose result has an unknown size cannot be a `map`'s or `tabulate`'s function.
        let mut sizes: HashMap<VarId, String> = HashMap::new();
        for (i, p) in params.iter().enumerate() {
            let returned = picked.iter().flatten().any(|q| *q == p.ident.id);
            let wanted = if l.varying[i] {
                tail.keeps(i, p.ident.id)
            } else {
                returned
            };
            if wanted && p.ident.name != "_" && flat_array(&p.ty) {
                sizes.insert(p.ident.id, self.fresh("n"));
            }
        }
        let mut text = self.def_header(d, name, &sizes)?;
        // A wildcard parameter is never read: it needs no place in the state.
        let varying: Vec<(usize, String)> = params
            .iter()
            .enumerate()
            .filter(|(i, p)| l.varying[*i] && p.ident.name != "_")
            .map(|(i, p)| (i, self.binder(p)))
            .collect();
        let go = self.fresh("go");
        let result = self.fresh("r");
        let placeholder = self.loop_placeholder(params, &body.ty, &picked)?;
        let names: Vec<&str> = varying.iter().map(|(_, n)| n.as_str()).collect();
        let mut pattern = Vec::new();
        for (i, n) in &varying {
            pattern.push(match sizes.get(&params[*i].ident.id) {
                Some(size) => format!("{n}: {}", self.sized_ty(&params[*i].ty, size)?),
                None => n.clone(),
            });
        }
        let result_pattern = match self.sized_result_ty(&body.ty, &picked, &sizes)? {
            Some(t) => format!("{result}: {t}"),
            None => result.clone(),
        };
        let state = format!(
            "({go}, {}{result_pattern})",
            tuple_prefix(&pattern.iter().map(String::as_str).collect::<Vec<_>>())
        );
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

    /// `[n]t` for a one-dimensional array type `[]t`.
    fn sized_ty(&self, t: &Type, n: &str) -> R<String> {
        let Type::Seq(elem) = t else {
            return Ok(self.ty(t)?.to_string());
        };
        Ok(format!("[{n}]{}", self.ty(elem)?))
    }

    /// The type of a loop's result slot when one of its parts is a parameter with a size.
    fn sized_result_ty(
        &self,
        t: &Type,
        picked: &[Option<VarId>],
        sizes: &HashMap<VarId, String>,
    ) -> R<Option<String>> {
        let size = |k: usize| {
            picked
                .get(k)
                .copied()
                .flatten()
                .and_then(|id| sizes.get(&id))
        };
        match t {
            Type::Seq(_) => Ok(match size(0) {
                Some(n) => Some(self.sized_ty(t, n)?),
                None => None,
            }),
            Type::Record(fs) if !is_one_tuple(fs) && (0..fs.len()).any(|k| size(k).is_some()) => {
                let mut parts = Vec::new();
                for (k, (l, ft)) in fs.iter().enumerate() {
                    let shown = match size(k) {
                        Some(n) => self.sized_ty(ft, n)?,
                        None => self.ty(ft)?.to_string(),
                    };
                    parts.push((field_name(l), shown));
                }
                Ok(Some(if Type::is_tuple_record(fs) {
                    let ts: Vec<String> = parts.into_iter().map(|(_, t)| t).collect();
                    format!("({})", ts.join(", "))
                } else {
                    let ts: Vec<String> = parts
                        .into_iter()
                        .map(|(l, t)| format!("{l}: {t}"))
                        .collect();
                    format!("{{{}}}", ts.join(", "))
                }))
            }
            _ => Ok(None),
        }
    }

    /// The first value of a loop's result slot: in each part that every exit of the function
    /// returns the same parameter in ([`result_params`]), that parameter, whose sizes are then the
    /// result's: an empty array of size 0 there made the sizes of the function's result unknown,
    /// and Futhark refused a `map` or `tabulate` of it ("anonymous sizes"), as in a loop that
    /// fills an array and returns it. Elsewhere a default value.
    fn loop_placeholder(&self, params: &[Param], t: &Type, picked: &[Option<VarId>]) -> R<String> {
        let param = |k: usize| {
            let id = picked.get(k).copied().flatten()?;
            params.iter().find(|p| p.ident.id == id)
        };
        match t {
            Type::Seq(_) => {
                if let Some(p) = param(0) {
                    return Ok(self.binder(p));
                }
            }
            Type::Record(fs) if !is_one_tuple(fs) => {
                let mut parts = Vec::new();
                for (k, (l, ft)) in fs.iter().enumerate() {
                    let code = match param(k) {
                        Some(p) => Code::atom(self.binder(p)),
                        None => self.default_value(ft)?,
                    };
                    parts.push((field_name(l), code));
                }
                return Ok(record_code(fs, parts).closed_text());
            }
            _ => {}
        }
        Ok(self.default_value(t)?.closed_text())
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
            let outs = match &body.ty {
                // A tuple or record bound by a pattern, its fields then flattened: the sizes of
                // its arrays come into scope with it (`pm_result.0` of a `let`-bound tuple whose
                // sizes the value's own `let`s bind was a "scope violation" in Futhark 0.25).
                Type::Record(fs) if !is_one_tuple(fs) => {
                    let names: Vec<String> =
                        (0..fs.len()).map(|k| format!("pm_result_{k}")).collect();
                    let pattern = if Type::is_tuple_record(fs) {
                        format!("({})", names.join(", "))
                    } else {
                        let parts: Vec<String> = (fs.iter().zip(&names))
                            .map(|((l, _), n)| format!("{} = {n}", field_name(l)))
                            .collect();
                        format!("{{{}}}", parts.join(", "))
                    };
                    lines.push(let_line(&pattern, &value));
                    let mut outs = Vec::new();
                    for ((_, ft), n) in fs.iter().zip(&names) {
                        outs.extend(self.flatten_result(ft, n, 0)?);
                    }
                    outs
                }
                _ => {
                    lines.push(let_line("pm_result", &value));
                    self.flatten_result(&body.ty, "pm_result", 0)?
                }
            };
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

/// The tail positions of the body of a tail-recursive `f`: the values it returns (neither a call
/// of `f` nor `never`), the arguments of its calls of `f`, and the `let`s on the way to them.
struct TailParts<'e> {
    exits: Vec<&'e Expr>,
    calls: Vec<&'e [Expr]>,
    lets: HashMap<VarId, &'e Expr>,
}

impl<'e> TailParts<'e> {
    fn of(body: &'e Expr, f: VarId) -> Self {
        let mut parts = TailParts {
            exits: Vec::new(),
            calls: Vec::new(),
            lets: HashMap::new(),
        };
        let mut todo = vec![body];
        while let Some(mut e) = todo.pop() {
            loop {
                match &e.kind {
                    ExprKind::Let {
                        binder,
                        value,
                        body,
                        ..
                    } => {
                        parts.lets.insert(binder.ident.id, value);
                        e = body;
                    }
                    ExprKind::RecLet { body, .. } => e = body,
                    ExprKind::Match { pat, then, .. } if pat.irrefutable() => e = then,
                    ExprKind::Match {
                        then, otherwise, ..
                    } => {
                        todo.push(then);
                        e = otherwise;
                    }
                    ExprKind::App { func, args } if matches!(&func.kind, ExprKind::Var { ident, .. } if ident.id == f) =>
                    {
                        parts.calls.push(args);
                        break;
                    }
                    ExprKind::Never(_) => break,
                    _ => {
                        parts.exits.push(e);
                        break;
                    }
                }
            }
        }
        parts
    }

    /// Whether every call passes, as argument `i`, parameter `p` or what `set`s, `if`s and
    /// `let`s make of it: an array of `p`'s size.
    fn keeps(&self, i: usize, p: VarId) -> bool {
        let mut seen = HashSet::new();
        let mut todo: Vec<&Expr> = Vec::new();
        for args in &self.calls {
            match args.get(i) {
                Some(a) => todo.push(a),
                None => return false,
            }
        }
        while let Some(e) = todo.pop() {
            if !seen.insert(e.id) {
                continue;
            }
            match &e.kind {
                ExprKind::Var { ident, .. } if ident.id == p => {}
                ExprKind::Var { ident, .. } => match self.lets.get(&ident.id) {
                    Some(v) => todo.push(v),
                    None => return false,
                },
                ExprKind::App { func, args }
                    if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Set))
                        && args.len() == 3 =>
                {
                    todo.push(&args[0]);
                }
                ExprKind::App { func, args }
                    if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Reverse))
                        && args.len() == 1 =>
                {
                    todo.push(&args[0]);
                }
                // A `map`'s result has its (first) input's size, a `scan`'s its input's and a
                // `scatter`'s its destination's.
                ExprKind::Keyword { kw, args } => match (kw, &args[..]) {
                    (Keyword::Map | Keyword::Map2, [_, s, ..])
                    | (Keyword::Scan, [_, _, s])
                    | (Keyword::Scatter, [s, _, _]) => todo.push(s),
                    _ => return false,
                },
                ExprKind::Let { body, .. } => todo.push(body),
                ExprKind::Match {
                    pat,
                    then,
                    otherwise,
                    ..
                } => {
                    todo.push(then);
                    if !pat.irrefutable() {
                        todo.push(otherwise);
                    }
                }
                _ => return false,
            }
        }
        true
    }
}

/// Per part of a loop's result (the whole of it, or each field of a tuple or record), the
/// parameter that every exit returns there, if there is one.
fn result_params(params: &[Param], t: &Type, exits: &[&Expr]) -> Vec<Option<VarId>> {
    let param = |e: &Expr| match &e.kind {
        ExprKind::Var { ident, .. } => params
            .iter()
            .find(|p| p.ident.id == ident.id && p.ident.name != "_")
            .map(|p| p.ident.id),
        _ => None,
    };
    let agreed = |picked: &mut dyn Iterator<Item = Option<&Expr>>| -> Option<VarId> {
        let mut found = None;
        for x in picked {
            let p = x.and_then(param)?;
            if found.is_some_and(|q| q != p) {
                return None;
            }
            found = Some(p);
        }
        found
    };
    match t {
        Type::Seq(_) => vec![agreed(&mut exits.iter().map(|x| Some(*x)))],
        Type::Record(fs) if !is_one_tuple(fs) => fs
            .iter()
            .map(|(l, ft)| {
                let mut fields = exits.iter().map(|x| match &x.kind {
                    ExprKind::Record(es) => es.iter().find(|(m, _)| m == l).map(|(_, e)| e),
                    _ => None,
                });
                matches!(ft, Type::Seq(_))
                    .then(|| agreed(&mut fields))
                    .flatten()
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A one-dimensional array: `[]t` of a primitive `t`.
fn flat_array(t: &Type) -> bool {
    matches!(t, Type::Seq(e) if !matches!(**e, Type::Seq(_) | Type::Tensor(_) | Type::Record(_) | Type::Arrow(..)))
}
