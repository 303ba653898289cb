//! The module graph of a crate, read from its sources: a module depends on the modules whose items
//! it names (`crate::…` and `super::…` paths, test modules left out; a module naming its own
//! ancestor, e.g. for a re-export, does not count). Shared by the runtime's and the core's
//! `module_graph` tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every module under `src` (`cuda::arg`) with the text of its file, test modules cut off.
pub fn modules(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                let mut p = prefix.to_vec();
                p.push(name);
                walk(&path, &p, out);
            } else if path.extension().is_some_and(|e| e == "rs") && name != "tests" {
                let mut p = prefix.to_vec();
                if name != "mod" && name != "lib" {
                    p.push(name);
                }
                let text = std::fs::read_to_string(&path).expect("a source file");
                let code = match text.find("#[cfg(test)]\nmod tests") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                };
                let code: String = code
                    .lines()
                    .map(|l| l.split("//").next().unwrap_or(""))
                    .collect::<Vec<_>>()
                    .join("\n");
                out.insert(p.join("::"), code);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, &[], &mut out);
    out
}

/// The path that starts at byte `i` of `code`: identifiers joined by `::`.
fn path_at(code: &str, i: usize) -> Vec<&str> {
    let rest = &code[i..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(rest.len());
    rest[..end].split("::").filter(|s| !s.is_empty()).collect()
}

/// Module → the modules it depends on.
pub fn graph(mods: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let resolve = |parts: &[&str]| -> Option<String> {
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|m| mods.contains_key(m))
    };
    let mut g = BTreeMap::new();
    for (m, code) in mods {
        let here: Vec<&str> = m.split("::").filter(|s| !s.is_empty()).collect();
        let mut deps = BTreeSet::new();
        for (i, _) in code
            .match_indices("crate::")
            .chain(code.match_indices("super::"))
        {
            if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let p = path_at(code, i);
            let mut full: Vec<&str> = if p[0] == "crate" {
                Vec::new()
            } else {
                here[..here.len().saturating_sub(1)].to_vec()
            };
            full.extend(&p[1..]);
            if let Some(t) = resolve(&full)
                && !t.is_empty()
                && &t != m
                && !m.starts_with(&format!("{t}::"))
            {
                deps.insert(t);
            }
        }
        g.insert(m.clone(), deps);
    }
    g
}

/// A cycle of the graph, if it has one.
pub fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        m: &str,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == m) {
            let mut c = stack[i..].to_vec();
            c.push(m.to_string());
            return Some(c);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, d, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|m| visit(g, m, &mut Vec::new(), &mut done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_found() {
        let mut g = BTreeMap::new();
        g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
        g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
        g.insert("c".to_string(), BTreeSet::new());
        assert_eq!(
            cycle(&g),
            Some(vec!["a".to_string(), "b".to_string(), "a".to_string()])
        );
    }
}
