//! The proc macros' fallback when the build hook did not run: a `#[pmexpr]` function found by
//! name in the package's sources, with its position found in the text (tokens parsed from a
//! string inside a proc macro carry none), for the error that says to add the hook.

use std::fs;
use std::path::Path;

use super::items::{collect_items, parse_source};
use super::walk::{DEFAULT_DIRS, relative_path, source_files};
use super::{ItemKind, RegistryItem};

/// Finds a `#[pmexpr]` function called `name` in the default directories of the package at
/// `root` (the first in file order), for the error that the proc macro reports when the build
/// hook did not run. Files that cannot be read or parsed are passed over.
///
/// Inside a proc macro, tokens parsed from a string carry no file positions, so the line and
/// column come from the text instead: the first `fn <name>` preceded, since the end of the
/// previous item, by a mention of `pmexpr` (else the first `fn <name>` at all). When the text
/// search finds nothing (say the name is written `r#name` in one place and `name` in the other),
/// the line and column are 0.
pub fn find_pmexpr_fn_in_sources(root: &Path, name: &str) -> Option<RegistryItem> {
    source_files(root, DEFAULT_DIRS, &[])
        .into_iter()
        .find_map(|path| find_pmexpr_fn_in_file(&path, &relative_path(root, &path), name))
}

/// The `#[pmexpr]` fn called `name` in the file at `path`, shown as `file` (see
/// [`find_pmexpr_fn_in_sources`] for how its position is found).
pub fn find_pmexpr_fn_in_file(path: &Path, file: &str, name: &str) -> Option<RegistryItem> {
    let text = fs::read_to_string(path).ok()?;
    let items = parse_source(&text, |_, ast| collect_items(ast, file, &|_| (0, 0))).ok()?;
    let mut item = items
        .into_iter()
        .find(|item| item.kind == ItemKind::Fn && item.name == name)?;
    (item.line, item.column) = locate_fn_in_text(&text, name).unwrap_or((0, 0));
    Some(item)
}

/// The 1-based (line, column) of the name in the best `fn <name>` of `text` (see
/// [`find_pmexpr_fn_in_sources`]).
fn locate_fn_in_text(text: &str, name: &str) -> Option<(usize, usize)> {
    let candidates: Vec<usize> = text
        .match_indices(name)
        .map(|(at, _)| at)
        .filter(|&at| is_fn_name_at(text, at, name))
        .collect();
    let marked = candidates.iter().copied().find(|&at| {
        let before = &text[..at];
        let item_start = before.rfind([';', '}']).map_or(0, |i| i + 1);
        before[item_start..].contains("pmexpr")
    });
    let at = marked.or_else(|| candidates.first().copied())?;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count() + 1;
    Some((line, column))
}

/// Whether `name` at byte `at` is a whole identifier preceded by the keyword `fn`.
fn is_fn_name_at(text: &str, at: usize, name: &str) -> bool {
    let is_ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let after = text[at + name.len()..].chars().next();
    if after.is_some_and(is_ident_char) {
        return false;
    }
    let before = text[..at].trim_end();
    if before.len() == at {
        return false; // no whitespace between `fn` and the name
    }
    let Some(rest) = before.strip_suffix("fn") else {
        return false;
    };
    !rest.chars().next_back().is_some_and(is_ident_char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textual_position_falls_back_to_the_first_fn_then_to_zero() {
        assert_eq!(
            locate_fn_in_text("struct fn_x;\n\tfn é() {}", "é"),
            Some((2, 5))
        );
        assert_eq!(locate_fn_in_text("fn gg() {} fn_g", "g"), None);
    }
}
