//! A readable printout of lifted and extracted programs, in the syntax a user writes inside
//! `accelerate!`: what the site dump shows, and the canonical text the build hook writes.

use std::collections::HashMap;
use std::fmt::Write;

use crate::ast::{Expr, ExprKind, Form, Input, Lit, Pat, PatKind, Soac, Source, VarId};
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
        match &e.kind {
            ExprKind::Var { ident, .. } => self.name(ident.id, &ident.name),
            ExprKind::Lit(l) => lit(l),
            ExprKind::Intrinsic(i) => i.name().to_string(),
            ExprKind::Lam { params, body } => {
                let ps: Vec<String> = params
                    .iter()
                    .map(|p| format!("{}: {}", p.ident.name, p.ty))
                    .collect();
                format!("|{}| {}", ps.join(", "), self.expr(body))
            }
            // The compiler's own operators on numbers (`a + b`, `-a` as written) print as written.
            ExprKind::App { func, args } => match (&func.kind, &args[..]) {
                (ExprKind::Intrinsic(Intrinsic::NumNeg), [x]) => format!("-{}", self.atom(x)),
                (ExprKind::Intrinsic(Intrinsic::NumAbs), [x]) => format!("{}.abs()", self.atom(x)),
                (ExprKind::Intrinsic(i), [l, r])
                    if let Some(o) = i.operator().filter(|_| i.is_generic_numeric()) =>
                {
                    format!("({} {} {})", self.expr(l), o.symbol, self.expr(r))
                }
                _ => {
                    let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                    format!("{}({})", self.atom(func), args.join(", "))
                }
            },
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => format!(
                "{{ let {}: {} = {}; {} }}",
                binder.ident.name,
                binder.ty,
                self.expr(value),
                self.expr(body)
            ),
            ExprKind::RecLet { fns, body, .. } => {
                let fs: Vec<String> = fns
                    .iter()
                    .map(|f| {
                        let ps: Vec<&str> =
                            f.params.iter().map(|p| p.ident.name.as_str()).collect();
                        format!(
                            "fn {}({}) = {};",
                            self.name(f.ident.id, &f.ident.name),
                            ps.join(", "),
                            self.expr(&f.body)
                        )
                    })
                    .collect();
                format!("{{ {} {} }}", fs.join(" "), self.expr(body))
            }
            ExprKind::Match {
                scrutinee,
                pat: p,
                then,
                otherwise,
            } => format!(
                "match {} {{ {} => {}, _ => {} }}",
                self.expr(scrutinee),
                pat(p),
                self.expr(then),
                self.expr(otherwise)
            ),
            ExprKind::Never(_) => "never!()".into(),
            ExprKind::Record(fs) => {
                let tuple = fs
                    .iter()
                    .enumerate()
                    .all(|(i, (l, _))| *l == Label::Index(i as u32));
                let items: Vec<String> = fs
                    .iter()
                    .map(|(l, x)| {
                        if tuple {
                            self.expr(x)
                        } else {
                            format!("{l}: {}", self.expr(x))
                        }
                    })
                    .collect();
                if tuple && items.len() == 1 {
                    format!("({},)", items[0])
                } else if tuple {
                    format!("({})", items.join(", "))
                } else {
                    format!("{{ {} }}", items.join(", "))
                }
            }
            ExprKind::Proj { expr, label } => format!("{}.{label}", self.atom(expr)),
            ExprKind::Seq(es) => {
                let items: Vec<String> = es.iter().map(|x| self.expr(x)).collect();
                format!("[{}]", items.join(", "))
            }
            ExprKind::Keyword { kw, args } => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{}({})", kw.name(), args.join(", "))
            }
            ExprKind::Soac(s) => format!("fused {}", self.soac(s)),
            // Lowered by the parser's caller: shown only if a printout is asked of the parser's
            // own output.
            ExprKind::Imp(_) => "<imperative>".into(),
        }
    }

    /// A fused composition, printed as the unfused program it stands for.
    fn soac(&self, s: &Soac) -> String {
        let inputs: Vec<String> = s.inputs.iter().map(|i| self.input(i)).collect();
        let all = inputs.join(", ");
        let combined = |f: &Option<Expr>| match f {
            Some(f) if inputs.len() == 2 => format!("map2({}, {all})", self.expr(f)),
            Some(f) => format!("map{}({}, {all})", inputs.len(), self.expr(f)),
            None => all.clone(),
        };
        match &s.form {
            Form::Map { f } => combined(f),
            Form::Reduce { op, ne, f } => {
                format!(
                    "reduce({}, {}, {})",
                    self.expr(op),
                    self.expr(ne),
                    combined(f)
                )
            }
            Form::Foldl { f, acc } => format!("foldl({}, {}, {all})", self.expr(f), self.expr(acc)),
            Form::Hist { op, ne, k } => format!(
                "hist({}, {}, {}, {all})",
                self.expr(op),
                self.expr(ne),
                self.expr(k)
            ),
        }
    }

    fn input(&self, i: &Input) -> String {
        let mut text = match &i.source {
            Source::Seq(s) => self.expr(s),
            Source::Range { n, g } => format!("create({}, {})", self.expr(n), self.expr(g)),
            Source::Flat(rows) => format!("flatten({})", self.expr(rows)),
        };
        for m in &i.maps {
            text = format!("map({}, {text})", self.expr(m));
        }
        text
    }

    fn atom(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Var { .. } | ExprKind::Intrinsic(_) | ExprKind::App { .. } => self.expr(e),
            _ => format!("({})", self.expr(e)),
        }
    }
}

fn lit(l: &Lit) -> String {
    match l {
        Lit::Int(i) => i.to_string(),
        Lit::Float(f) => format!("{f:?}"),
        Lit::Bool(b) => b.to_string(),
        Lit::Unit => "()".into(),
    }
}

fn pat(p: &Pat) -> String {
    match &p.kind {
        PatKind::Wild => "_".into(),
        PatKind::Bind(i) => i.name.clone(),
        PatKind::Lit(l) => lit(l),
        PatKind::Record(fs) => {
            let items: Vec<String> = fs.iter().map(|(l, p)| format!("{l}: {}", pat(p))).collect();
            format!("{{ {} }}", items.join(", "))
        }
    }
}
