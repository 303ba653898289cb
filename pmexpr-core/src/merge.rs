//! The whole crate's accelerated program: every site's lifted program merged into one spine, so that
//! a `#[pmexpr]` function used by several sites is one binding, then extracted per backend (the
//! paper's `Extract(I_F, e_acc)` and `Extract(I_C, e_acc)`). The Futhark generator reads it; the
//! build hook ([`crate::program`]) makes it.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

use crate::ast::VarId;
use crate::classify::Backend;
use crate::extract::extract;
use crate::infer::Numeric;
use crate::lift::{Binding, Def, Origin};
use crate::pretty;
use crate::site::SiteProgram;
use crate::types::TyVar;

/// The merged program of a crate.
#[derive(Debug, Clone)]
pub struct CrateProgram {
    /// The bindings of every site, shared `#[pmexpr]` functions once, in dependency order.
    pub bindings: Vec<Binding>,
    /// The name of every identifier.
    pub names: Vec<String>,
    /// Each site: its name, its accelerated binding and its backend.
    pub sites: Vec<(String, VarId, Backend)>,
    /// The numeric type variables each site's captured values fix, by accelerated binding.
    pub numeric: HashMap<VarId, Vec<(TyVar, Numeric)>>,
}

/// Merges the programs of the crate's sites (named, e.g. by `file:line:column`).
pub fn merge(sites: &[(String, &SiteProgram)]) -> CrateProgram {
    let mut names: Vec<String> = Vec::new();
    let mut bindings = Vec::new();
    let mut items: HashMap<String, VarId> = HashMap::new();
    let mut out_sites = Vec::new();
    let mut numeric = HashMap::new();
    for (site_name, p) in sites {
        let lifted = &p.lifted;
        let mut map: HashMap<VarId, VarId> = HashMap::new();
        // A `#[pmexpr]` function already merged is the same binding: map it, skip its copy.
        let mut skip: BTreeSet<VarId> = BTreeSet::new();
        for d in lifted.bindings.iter().flat_map(|b| b.defs()) {
            if let Origin::Item(_) = &d.origin
                && let Some(g) = items.get(&item_key(d))
            {
                map.insert(d.ident.id, *g);
                skip.insert(d.ident.id);
            }
        }
        let mut fresh = |id: VarId, map: &mut HashMap<VarId, VarId>| -> VarId {
            *map.entry(id).or_insert_with(|| {
                names.push(lifted.names.get(id.0 as usize).cloned().unwrap_or_default());
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
                    d.value.rename(&mut |id| fresh(id, &mut map));
                    if let Origin::Item(_) = &d.origin {
                        items.insert(item_key(&d), d.ident.id);
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
        let accelerated = map[&lifted.accelerated];
        out_sites.push((site_name.clone(), accelerated, p.backend));
        numeric.insert(accelerated, p.numeric.clone());
    }
    CrateProgram {
        bindings,
        names,
        sites: out_sites,
        numeric,
    }
}

/// A `#[pmexpr]` function's identity across sites: its name at its (monomorphic) type. The type
/// variables count too: a number type that a site's captured values fix is that site's own, so a
/// function over it is shared only with a site whose number types have the same variables (the
/// Futhark generator instantiates them per site).
fn item_key(d: &Def) -> String {
    format!("{}: {:?}", d.ident.name, d.value.ty)
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

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::merge;
    use crate::classify::Backend;
    use crate::pipeline::compile_for_test;

    /// Two sites that use one `#[pmexpr]` function: it is extracted once, and each site keeps its
    /// own backend.
    #[test]
    fn shared_function_is_extracted_once() {
        let items = [
            ("g", "fn g(x: i64) -> i64 { addi(x, 1) }"),
            ("h", "fn h(x: i64) -> i64 { muli(x, 2) }"),
        ];
        let a = compile_for_test(quote!(map(g, s)), &items)
            .unwrap()
            .program
            .unwrap();
        let b = compile_for_test(quote!(reduce(addi, 0, map(|x| g(h(x)), s))), &items)
            .unwrap()
            .program
            .unwrap();
        let c = compile_for_test(quote!(par_loop(n, |i| tensor_set(t, [i], g(i)))), &items)
            .unwrap()
            .program
            .unwrap();
        let merged = merge(&[("a".into(), &a), ("b".into(), &b), ("c".into(), &c)]);
        let (_, futhark) = merged.extract_for(Backend::Futhark);
        let count = |name: &str, bs: &[crate::lift::Binding]| {
            bs.iter()
                .flat_map(|b| b.defs())
                .filter(|d| d.ident.name == name)
                .count()
        };
        assert_eq!(count("g", &futhark), 1);
        assert_eq!(count("h", &futhark), 1);
        assert_eq!(count("accelerate", &futhark), 2);
        let (_, cuda) = merged.extract_for(Backend::Cuda);
        assert_eq!(count("g", &cuda), 1);
        assert_eq!(count("h", &cuda), 0);
        assert_eq!(count("accelerate", &cuda), 1);
        let printed = merged.print();
        assert!(
            printed.contains("// Futhark program, sites: a, b"),
            "{printed}"
        );
    }
}
