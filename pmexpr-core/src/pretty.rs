//! A readable printout of lifted and extracted programs, in the syntax a user writes inside
//! `accelerate!`: what the site dump shows, and the canonical text the build hook writes.

use std::collections::HashMap;
use std::fmt::Write;

use crate::ast::{Expr, ExprKind, Form, Input, Lit, Pat, PatKind, Soac, Source, Stage, VarId};
use crate::intrinsics::Intrinsic;
use crate::lift::{Binding, Origin};
use crate::types::Label;

/// Prints top-level bindings, one `let` (or `rec` group) per definition.
pub fn bindings(bs: &[Binding], names: &[String]) -> String {
    // Top-level names are printed bare when unique, with their identifier otherwise.
    let mut count: HashMap<&str, usize> = HashMap::new();
    for d in bs.iter().flat_map(|b| b.defs()) {
        *count.entry(d.ident.name.as_str()).or_default() += 1;
    }
    let mut top: HashMap<VarId, String> = HashMap::new();
    for d in bs.iter().flat_map(|b| b.defs()) {
        let n = &d.ident.name;
        let shown = if count[n.as_str()] > 1 {
            format!("{n}_{}", d.ident.id.0)
        } else {
            n.clone()
        };
        top.insert(d.ident.id, shown);
    }
    let p = Printer { names, top: &top };
    let mut out = String::new();
    for b in bs {
        let rec = matches!(b, Binding::Rec(_));
        for d in b.defs() {
            let origin = match &d.origin {
                Origin::Site => "  // the accelerated binding".to_string(),
                Origin::Local => String::new(),
                Origin::Item(i) => format!("  // #[pmexpr] fn {} at {}", i.name, i.location),
            };
            let kw = if rec { "let rec" } else { "let" };
            let _ = writeln!(
                out,
                "{kw} {}: {} = {};{origin}",
                top[&d.ident.id],
                d.value.ty,
                p.expr(&d.value)
            );
        }
    }
    out
}

/// Prints one expression (the optimizer's output, in the site dump and its tests).
pub fn expr(e: &Expr, names: &[String]) -> String {
    let top = HashMap::new();
    Printer { names, top: &top }.expr(e)
}

struct Printer<'a> {
    names: &'a [String],
    top: &'a HashMap<VarId, String>,
}

impl Printer<'_> {
    fn name(&self, id: VarId, name: &str) -> String {
        self.top.get(&id).cloned().unwrap_or_else(|| {
            self.names
                .get(id.0 as usize)
                .filter(|n| *n == name)
                .cloned()
                .unwrap_or_else(|| name.to_string())
        })
    }

    fn expr(&self, e: &Expr) -> String {
        let mut out = String::new();
        self.write(e, &mut out);
        out
    }

    /// Writes `e` at the end of `out`: one buffer for the whole printout, not a string per node
    /// copied into its parent's (which made a chain of k `let`s cost k²).
    fn write(&self, e: &Expr, out: &mut String) {
        match &e.kind {
            ExprKind::Var { ident, .. } => out.push_str(&self.name(ident.id, &ident.name)),
            ExprKind::Lit(l) => out.push_str(&lit(l)),
            ExprKind::Intrinsic(i) => out.push_str(&i.to_string()),
            ExprKind::Lam { params, body } => {
                out.push('|');
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{}: {}", p.ident.name, p.ty);
                }
                out.push_str("| ");
                self.write(body, out);
            }
            // The compiler's own operators on numbers (`a + b`, `-a` as written) print as written.
            ExprKind::App { func, args } => match (&func.kind, &args[..]) {
                (ExprKind::Intrinsic(Intrinsic::NumNeg), [x]) => {
                    out.push('-');
                    self.atom(x, out);
                }
                (ExprKind::Intrinsic(Intrinsic::NumAbs), [x]) => {
                    self.atom(x, out);
                    out.push_str(".abs()");
                }
                (ExprKind::Intrinsic(i), [l, r])
                    if let Some(o) = i.operator().filter(|_| i.is_generic_numeric()) =>
                {
                    out.push('(');
                    self.write(l, out);
                    let _ = write!(out, " {} ", o.symbol);
                    self.write(r, out);
                    out.push(')');
                }
                _ => {
                    self.atom(func, out);
                    out.push('(');
                    self.list(args, out);
                    out.push(')');
                }
            },
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                let _ = write!(out, "{{ let {}: {} = ", binder.ident.name, binder.ty);
                self.write(value, out);
                out.push_str("; ");
                self.write(body, out);
                out.push_str(" }");
            }
            ExprKind::RecLet { fns, body, .. } => {
                out.push_str("{ ");
                for f in fns {
                    let _ = write!(out, "fn {}(", self.name(f.ident.id, &f.ident.name));
                    for (i, p) in f.params.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        out.push_str(&p.ident.name);
                    }
                    out.push_str(") = ");
                    self.write(&f.body, out);
                    out.push_str("; ");
                }
                self.write(body, out);
                out.push_str(" }");
            }
            ExprKind::Match {
                scrutinee,
                pat: p,
                then,
                otherwise,
            } => {
                out.push_str("match ");
                self.write(scrutinee, out);
                out.push_str(" { ");
                pat(p, out);
                out.push_str(" => ");
                self.write(then, out);
                out.push_str(", _ => ");
                self.write(otherwise, out);
                out.push_str(" }");
            }
            ExprKind::Never(_) => out.push_str("never!()"),
            ExprKind::Record(fs) => {
                let tuple = fs
                    .iter()
                    .enumerate()
                    .all(|(i, (l, _))| *l == Label::Index(i as u32));
                out.push_str(if tuple { "(" } else { "{ " });
                for (i, (l, x)) in fs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    if !tuple {
                        let _ = write!(out, "{l}: ");
                    }
                    self.write(x, out);
                }
                out.push_str(match (tuple, fs.len()) {
                    (true, 1) => ",)",
                    (true, _) => ")",
                    (false, _) => " }",
                });
            }
            ExprKind::Proj { expr, label } => {
                self.atom(expr, out);
                let _ = write!(out, ".{label}");
            }
            ExprKind::Seq(es) => {
                out.push('[');
                self.list(es, out);
                out.push(']');
            }
            ExprKind::Keyword { kw, args } => {
                out.push_str(kw.name());
                out.push('(');
                self.list(args, out);
                out.push(')');
            }
            ExprKind::Soac(s) => {
                out.push_str("fused ");
                self.soac(s, out);
            }
            // Lowered by the parser's caller: shown only if a printout is asked of the parser's
            // own output.
            ExprKind::Imp(_) => out.push_str("<imperative>"),
        }
    }

    /// Expressions separated by commas.
    fn list(&self, es: &[Expr], out: &mut String) {
        for (i, x) in es.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.write(x, out);
        }
    }

    /// A fused composition, printed as the unfused program it stands for.
    fn soac(&self, s: &Soac, out: &mut String) {
        let mut all = String::new();
        for (i, input) in s.inputs.iter().enumerate() {
            if i > 0 {
                all.push_str(", ");
            }
            self.input(input, &mut all);
        }
        let combined = |f: &Option<Expr>, out: &mut String| match f {
            Some(f) => {
                if s.inputs.len() == 2 {
                    out.push_str("map2(");
                } else {
                    let _ = write!(out, "map{}(", s.inputs.len());
                }
                self.write(f, out);
                let _ = write!(out, ", {all})");
            }
            None => out.push_str(&all),
        };
        match &s.form {
            Form::Map { f } => combined(f, out),
            Form::Reduce { op, ne, f } => {
                out.push_str("reduce(");
                self.write(op, out);
                out.push_str(", ");
                self.write(ne, out);
                out.push_str(", ");
                combined(f, out);
                out.push(')');
            }
            Form::Foldl { f, acc } => {
                out.push_str("foldl(");
                self.write(f, out);
                out.push_str(", ");
                self.write(acc, out);
                let _ = write!(out, ", {all})");
            }
            Form::Hist { op, ne, k } => {
                out.push_str("hist(");
                self.write(op, out);
                out.push_str(", ");
                self.write(ne, out);
                out.push_str(", ");
                self.write(k, out);
                let _ = write!(out, ", {all})");
            }
            Form::Scan { op, ne, post } => {
                // The consuming maps, the last outermost.
                for m in post.iter().rev() {
                    out.push_str("map(");
                    self.write(m, out);
                    out.push_str(", ");
                }
                out.push_str("scan(");
                self.write(op, out);
                out.push_str(", ");
                self.write(ne, out);
                let _ = write!(out, ", {all})");
                for _ in post {
                    out.push(')');
                }
            }
            Form::Scatter { dest } => {
                out.push_str("scatter(");
                self.write(dest, out);
                let _ = write!(out, ", {all})");
            }
        }
    }

    /// An input: its source inside the stages applied to it, the last outermost.
    fn input(&self, i: &Input, out: &mut String) {
        for stage in i.stages.iter().rev() {
            let (name, f) = match stage {
                Stage::Map(m) => ("map(", m),
                Stage::Filter(p) => ("filter(", p),
            };
            out.push_str(name);
            self.write(f, out);
            out.push_str(", ");
        }
        match &i.source {
            Source::Seq(s) => self.write(s, out),
            Source::Range { n, g } => {
                out.push_str("create(");
                self.write(n, out);
                out.push_str(", ");
                self.write(g, out);
                out.push(')');
            }
            Source::Flat(rows) => {
                out.push_str("flatten(");
                self.write(rows, out);
                out.push(')');
            }
        }
        for _ in &i.stages {
            out.push(')');
        }
    }

    fn atom(&self, e: &Expr, out: &mut String) {
        match &e.kind {
            ExprKind::Var { .. } | ExprKind::Intrinsic(_) | ExprKind::App { .. } => {
                self.write(e, out)
            }
            _ => {
                out.push('(');
                self.write(e, out);
                out.push(')');
            }
        }
    }
}

fn lit(l: &Lit) -> String {
    match l {
        Lit::Int(i) => i.to_string(),
        Lit::Float(f, _) => format!("{f:?}"),
        Lit::Bool(b) => b.to_string(),
        Lit::Unit => "()".into(),
    }
}

fn pat(p: &Pat, out: &mut String) {
    match &p.kind {
        PatKind::Wild => out.push('_'),
        PatKind::Bind(i) => out.push_str(&i.name),
        PatKind::Lit(l) => out.push_str(&lit(l)),
        PatKind::Record(fs) => {
            out.push_str("{ ");
            for (i, (l, p)) in fs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{l}: ");
                pat(p, out);
            }
            out.push_str(" }");
        }
    }
}
