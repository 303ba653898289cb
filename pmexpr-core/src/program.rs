//! The whole crate's accelerated program: every site's lifted program merged into one spine, so that
//! a `#[pmexpr]` function used by several sites is one binding, then extracted per backend (the
//! paper's `Extract(I_F, e_acc)` and `Extract(I_C, e_acc)`).

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

use crate::ast::{Expr, ExprKind, Pat, PatKind, VarId};
use crate::classify::Backend;
use crate::extract::extract;
use crate::lift::{Binding, Def, Origin};
use crate::pretty;
use crate::site::SiteProgram;

/// The merged program of a crate.
#[derive(Debug, Clone)]
pub struct CrateProgram {
    /// The bindings of every site, shared `#[pmexpr]` functions once, in dependency order.
    pub bindings: Vec<Binding>,
    /// The name of every identifier.
    pub names: Vec<String>,
    /// Each site: its name, its accelerated binding and its backend.
    pub sites: Vec<(String, VarId, Backend)>,
}

/// Merges the programs of the crate's sites (named, e.g. by `file:line:column`).
pub fn merge(sites: &[(String, &SiteProgram)]) -> CrateProgram {
    let mut names: Vec<String> = Vec::new();
    let mut bindings = Vec::new();
    let mut items: HashMap<String, VarId> = HashMap::new();
    let mut out_sites = Vec::new();
    for (site_name, p) in sites {
        let lifted = &p.lifted;
        let mut map: HashMap<VarId, VarId> = HashMap::new();
        // A `#[pmexpr]` function already merged is the same binding: map it, skip its copy.
        let mut skip: BTreeSet<VarId> = BTreeSet::new();
        for d in lifted.bindings.iter().flat_map(|b| b.defs()) {
            if let Origin::Item(_) = &d.origin {
                let key = format!("{}: {}", d.ident.name, d.value.ty);
                if let Some(g) = items.get(&key) {
                    map.insert(d.ident.id, *g);
                    skip.insert(d.ident.id);
                }
            }
        }
        let mut fresh = |id: VarId, map: &mut HashMap<VarId, VarId>| -> VarId {
            *map.entry(id).or_insert_with(|| {
                names.push(
                    lifted
                        .names
                        .get(id.0 as usize)
                        .cloned()
                        .unwrap_or_default(),
                );
                VarId(names.len() as u32 - 1)
            })
        };
        for b in &lifted.bindings {
            let defs: Vec<Def> = b
                .defs()
                .iter()
                .filter(|d| !skip.contains(&d.ident.id))
                .map(|d| {
                    let mut d = d.clone();
                    d.ident.id = fresh(d.ident.id, &mut map);
                    remap(&mut d.value, &mut |id| fresh(id, &mut map));
                    if let Origin::Item(_) = &d.origin {
                        items.insert(format!("{}: {}", d.ident.name, d.value.ty), d.ident.id);
                    }
                    d
                })
                .collect();
            match b {
                Binding::Let(_) if defs.len() == 1 => {
                    bindings.push(Binding::Let(defs.into_iter().next().expect("one")))
                }
                Binding::Rec(_) if !defs.is_empty() => bindings.push(Binding::Rec(defs)),
                _ => {}
            }
        }
        out_sites.push((site_name.clone(), map[&lifted.accelerated], p.backend));
    }
    CrateProgram {
        bindings,
        names,
        sites: out_sites,
    }
}

impl CrateProgram {
    /// The accelerated program of one backend: `Extract(I_backend, e_acc)`.
    pub fn extract_for(&self, backend: Backend) -> (BTreeSet<VarId>, Vec<Binding>) {
        let ids: BTreeSet<VarId> = self
            .sites
            .iter()
            .filter(|(_, _, b)| *b == backend)
            .map(|(_, a, _)| *a)
            .collect();
        extract(&ids, &self.bindings)
    }

    /// The readable printout of both backends' programs.
    pub fn print(&self) -> String {
        let mut out = String::new();
        for backend in [Backend::Futhark, Backend::Cuda] {
            let (_, program) = self.extract_for(backend);
            let sites: Vec<&str> = self
                .sites
                .iter()
                .filter(|(_, _, b)| *b == backend)
                .map(|(n, _, _)| n.as_str())
                .collect();
            let _ = writeln!(out, "// {backend} program, sites: {}", sites.join(", "));
            out.push_str(&pretty::bindings(&program, &self.names));
            out.push('\n');
        }
        out
    }
}

/// Renames every identifier of `e`, binders included.
fn remap(e: &mut Expr, f: &mut impl FnMut(VarId) -> VarId) {
    match &mut e.kind {
        ExprKind::Var { ident, .. } => ident.id = f(ident.id),
        ExprKind::Lam { params, .. } => params.iter_mut().for_each(|p| p.ident.id = f(p.ident.id)),
        ExprKind::Let { binder, .. } => binder.ident.id = f(binder.ident.id),
        ExprKind::RecLet { fns, .. } => {
            for d in fns {
                d.ident.id = f(d.ident.id);
                d.params.iter_mut().for_each(|p| p.ident.id = f(p.ident.id));
            }
        }
        ExprKind::Match { pat, .. } => remap_pat(pat, f),
        _ => {}
    }
    e.children_mut(&mut |c| remap(c, f));
}

fn remap_pat(p: &mut Pat, f: &mut impl FnMut(VarId) -> VarId) {
    match &mut p.kind {
        PatKind::Bind(i) => i.id = f(i.id),
        PatKind::Record(fs) => fs.iter_mut().for_each(|(_, p)| remap_pat(p, f)),
        PatKind::Wild | PatKind::Lit(_) => {}
    }
}
