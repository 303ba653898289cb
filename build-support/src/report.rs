//! The messages the hook shows through Cargo.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pmexpr_core::registry::{ItemKind, Registry, RegistryItem, relative_path};

/// `cargo:warning=` lines for a message; one per line of it, since Cargo reads one directive
/// per line.
pub(crate) fn warning(message: &str) -> impl Iterator<Item = String> + '_ {
    message.lines().map(|line| format!("cargo:warning={line}"))
}

/// One warning per `#[pmexpr]` function name defined more than once, naming every definition:
/// a call by that name cannot tell them apart.
pub(crate) fn duplicate_fns(registry: &Registry) -> Vec<String> {
    let mut by_name: BTreeMap<&str, Vec<&RegistryItem>> = BTreeMap::new();
    for item in registry.items.iter().filter(|i| i.kind == ItemKind::Fn) {
        by_name.entry(&item.name).or_default().push(item);
    }
    by_name
        .into_iter()
        .filter(|(_, items)| items.len() > 1)
        .flat_map(|(name, items)| {
            let places: Vec<String> = items.iter().map(|i| location(i)).collect();
            let message = format!(
                "pmexpr: `#[pmexpr] fn {name}` is defined more than once, at {}",
                places.join(" and ")
            );
            warning(&message).collect::<Vec<_>>()
        })
        .collect()
}

fn location(item: &RegistryItem) -> String {
    item.location()
}

/// One warning per file that the scan skipped.
pub(crate) fn skipped_files(root: &Path, skipped: &[(PathBuf, String)]) -> Vec<String> {
    skipped
        .iter()
        .flat_map(|(path, reason)| {
            let message = format!("pmexpr: skipped {}: {reason}", relative_path(root, path));
            warning(&message).collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fn_item(name: &str, file: &str, line: usize) -> RegistryItem {
        RegistryItem {
            kind: ItemKind::Fn,
            name: name.into(),
            file: file.into(),
            line,
            column: 4,
            source: String::new(),
        }
    }

    #[test]
    fn one_warning_per_duplicated_name() {
        let mut record = fn_item("f", "src/c.rs", 1);
        record.kind = ItemKind::Record;
        let registry = Registry::new(
            vec![
                fn_item("g", "src/a.rs", 3),
                fn_item("f", "src/a.rs", 1),
                fn_item("g", "src/b.rs", 7),
                record,
            ],
            vec![],
        );
        assert_eq!(
            duplicate_fns(&registry),
            [
                "cargo:warning=pmexpr: `#[pmexpr] fn g` is defined more than once, at src/a.rs:3:4 and src/b.rs:7:4"
            ]
        );
    }

    #[test]
    fn multi_line_messages_become_several_warnings() {
        let lines: Vec<_> = warning("a\nb").collect();
        assert_eq!(lines, ["cargo:warning=a", "cargo:warning=b"]);
    }
}
