//! Extraction (paper appendix, Algorithm 1 `Extract`): keeps exactly the bindings that the given
//! accelerated bindings reach, transitively, so that code used by several sites is extracted once
//! and sequential-only code never reaches a backend.

use std::collections::{BTreeSet, HashMap};

use crate::ast::VarId;
use crate::lift::Binding;

/// `Extract(I, e)`: the identifiers of every extracted binding and the extracted program.
///
/// The lifted program is the spine `b1 in b2 in … in bn in {}`; like the paper's recursion, this
/// walks it bottom-up (from the last binding to the first), so a binding is kept when a binding
/// after it that is kept uses it.
pub fn extract(ids: &BTreeSet<VarId>, bindings: &[Binding]) -> (BTreeSet<VarId>, Vec<Binding>) {
    let mut ids = ids.clone();
    let mut kept = Vec::new();
    for binding in bindings.iter().rev() {
        match binding {
            // Lines 4–11: the members that are used, closed under their mutual uses (the
            // fixpoint), then everything their bodies use.
            Binding::Rec(defs) => {
                // A worklist over the members (each body's free variables computed once): the
                // fixpoint iterated over the whole group cost k³ on a cycle of k functions.
                let index: HashMap<VarId, usize> = defs
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (d.ident.id, i))
                    .collect();
                let mut used = vec![false; defs.len()];
                let mut todo: Vec<usize> = Vec::new();
                for (i, d) in defs.iter().enumerate() {
                    if ids.contains(&d.ident.id) {
                        used[i] = true;
                        todo.push(i);
                    }
                }
                let mut uses: Vec<BTreeSet<VarId>> = vec![BTreeSet::new(); defs.len()];
                while let Some(i) = todo.pop() {
                    let free = defs[i].value.free_vars();
                    for y in &free {
                        if let Some(&j) = index.get(y)
                            && !used[j]
                        {
                            used[j] = true;
                            todo.push(j);
                        }
                    }
                    uses[i] = free;
                }
                if !used.contains(&true) {
                    continue;
                }
                let mut members = Vec::new();
                for (i, d) in defs.iter().enumerate() {
                    if used[i] {
                        ids.extend(std::mem::take(&mut uses[i]));
                        ids.insert(d.ident.id);
                        members.push(d.clone());
                    }
                }
                kept.push(Binding::Rec(members));
            }
            // Lines 12–17: kept when used, adding what its body uses.
            Binding::Let(def) => {
                if ids.contains(&def.ident.id) {
                    ids.extend(def.value.free_vars());
                    kept.push(binding.clone());
                }
            }
        }
    }
    kept.reverse();
    (ids, kept)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use quote::quote;

    use super::extract;
    use crate::lift::{Binding, Lifted};
    use crate::pipeline::compile_for_test;

    fn names(l: &Lifted, ids: &BTreeSet<crate::ast::VarId>) -> Vec<String> {
        let mut v: Vec<String> = ids.iter().map(|i| l.names[i.0 as usize].clone()).collect();
        v.sort();
        v
    }

    /// Listing 1 → Listing 2 of the paper: `f` is lifted with `c` as a parameter, `s` and `c`
    /// become parameters of the accelerated binding, and the extracted identifiers are exactly
    /// `{a, f, g}` (an unused `#[pmexpr]` function is not extracted).
    #[test]
    fn listing_2_extracts_a_f_g() {
        let site = compile_for_test(
            quote!({
                let f = |x| muli(c, g(x));
                let s2 = map(f, s);
                reduce(addi, 0, s2)
            }),
            &[
                ("g", "fn g(x: i64) -> i64 { addi(x, 1) }"),
                ("unused", "fn unused(x: i64) -> i64 { g(x) }"),
            ],
        )
        .unwrap();
        let p = site.program.unwrap();
        let l = &p.lifted;
        assert_eq!(names(l, &p.extracted_ids), ["accelerate", "f", "g"]);
        let mut params: Vec<&str> = l.params.iter().map(|p| p.ident.name.as_str()).collect();
        params.sort();
        assert_eq!(params, ["c", "s"]);
        // `let f = lam c. lam x. muli c (g x)`, used as `map (f c) s`.
        let defs = l.defs();
        let f = defs
            .values()
            .find(|d| d.ident.name == "f")
            .expect("f is lifted");
        let crate::ast::ExprKind::Lam { params, .. } = &f.value.kind else {
            panic!("f is a lambda")
        };
        let f_params: Vec<&str> = params.iter().map(|p| p.ident.name.as_str()).collect();
        assert_eq!(f_params, ["c", "x"]);
        let printed = crate::pretty::bindings(&p.extracted, &l.names);
        assert!(printed.contains("map(f(c), s)"), "{printed}");
        assert!(!printed.contains("unused"), "{printed}");
    }

    /// Recursive lets: the used members of a group, closed under their uses (the fixpoint), and
    /// nothing else.
    #[test]
    fn recursive_let_fixpoint() {
        let site = compile_for_test(
            quote!({
                fn even(n: i64) -> bool {
                    if n == 0 { true } else { odd(n - 1) }
                }
                fn odd(n: i64) -> bool {
                    if n == 0 { false } else { even(n - 1) }
                }
                fn never_used(n: i64) -> i64 {
                    never_used(n)
                }
                par_loop(length(s), |i| {
                    tensor_set(t, [i], if even(get(s, i)) { 1 } else { 0 })
                })
            }),
            &[],
        )
        .unwrap();
        let p = site.program.unwrap();
        let l = &p.lifted;
        let extracted = names(l, &p.extracted_ids);
        assert!(extracted.contains(&"even".to_string()), "{extracted:?}");
        assert!(extracted.contains(&"odd".to_string()), "{extracted:?}");
        assert!(!extracted.contains(&"never_used".to_string()));
        // A group whose member is not reached keeps only the reached ones: add an unreached member
        // to the `even`/`odd` group by hand.
        let mut bindings = l.bindings.clone();
        let extra = bindings
            .iter()
            .flat_map(|b| b.defs())
            .find(|d| d.ident.name == "never_used")
            .cloned()
            .unwrap();
        for b in &mut bindings {
            if let Binding::Rec(ds) = b
                && ds.iter().any(|d| d.ident.name == "even")
            {
                ds.push(extra.clone());
            }
        }
        let (ids, kept) = extract(&BTreeSet::from([l.accelerated]), &bindings);
        assert!(!names(l, &ids).contains(&"never_used".to_string()));
        let group = kept
            .iter()
            .find(|b| b.defs().iter().any(|d| d.ident.name == "even"))
            .unwrap();
        let mut members: Vec<&str> = group.defs().iter().map(|d| d.ident.name.as_str()).collect();
        members.sort();
        assert_eq!(members, ["even", "odd"]);
    }
}
