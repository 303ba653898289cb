//! The source scan: every `#[pmexpr]` function, `Record` struct and `accelerate!` site of a
//! package.

use std::fs;
use std::path::{Path, PathBuf};

use pmexpr_core::registry::{
    Registry, RegistryItem, SiteSource, collect_items, parse_source, relative_path, source_files,
};
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};

/// What [`scan`] found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// The items and sites of all the files that parsed.
    pub registry: Registry,
    /// Every `.rs` file read (or tried), in scan order.
    pub files: Vec<PathBuf>,
    /// The files that could not be read or parsed, with the reason; they contribute nothing.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Scans the `.rs` files under `dirs` (relative to the package root `root`, recursively, in
/// sorted order) except those under one of `exclude` (relative to `root`, files or directories).
///
/// Items are found among the top-level items and nested inline modules of each file; sites
/// anywhere in its tokens, including inside other macro invocations. A file that cannot be read
/// or parsed is recorded in [`Scan::skipped`] and otherwise ignored: it may well be a
/// compile-fail test, and rustc reports real syntax errors better than the hook could.
pub fn scan(root: &Path, dirs: &[&str], exclude: &[PathBuf]) -> Scan {
    let files = source_files(root, dirs, exclude);
    let mut items = Vec::new();
    let mut sites = Vec::new();
    let mut skipped = Vec::new();
    for path in &files {
        match scan_file(root, path) {
            Ok((file_items, file_sites)) => {
                items.extend(file_items);
                sites.extend(file_sites);
            }
            Err(reason) => skipped.push((path.clone(), reason)),
        }
    }
    Scan {
        registry: Registry::new(items, sites),
        files,
        skipped,
    }
}

/// The items and sites of one file.
fn scan_file(root: &Path, path: &Path) -> Result<(Vec<RegistryItem>, Vec<SiteSource>), String> {
    let text = fs::read_to_string(path).map_err(|e| e.to_string())?;
    let file = relative_path(root, path);
    // On the stack `parse_source` sized for the file's nesting: the sites' tokens are printed
    // there (a recursion over their groups).
    parse_source(&text, |tokens, ast| {
        let items = collect_items(ast, &file, &position);
        let mut sites = Vec::new();
        collect_sites(tokens.clone(), &file, &mut sites);
        (items, sites)
    })
    .map_err(|e| {
        let (line, column) = position(e.span());
        format!("{line}:{column}: {e}")
    })
}

/// The 1-based line and column of a token parsed from a string by the build script.
fn position(span: Span) -> (usize, usize) {
    // proc-macro2 counts lines from 1 and columns (in characters) from 0.
    let start = span.start();
    (start.line, start.column + 1)
}

/// Collects the `accelerate!` sites among `tokens`, descending into every group (so that sites
/// inside `assert_eq!(…)` or any other macro are found) except the input of a site itself: a site
/// nested in another is part of that site's code, not a site of its own.
fn collect_sites(tokens: TokenStream, file: &str, out: &mut Vec<SiteSource>) {
    // Groups still to visit, the innermost last: no recursion (a file may nest deeply).
    let mut todo: Vec<(Vec<TokenTree>, usize)> = vec![(tokens.into_iter().collect(), 0)];
    while let Some((tokens, i)) = todo.last_mut() {
        if *i >= tokens.len() {
            todo.pop();
            continue;
        }
        if let Some(site) = site_at(tokens, *i, file) {
            out.push(site);
            *i += 3; // `accelerate`, `!` and the group
            continue;
        }
        let inner = match &tokens[*i] {
            TokenTree::Group(group) => Some(group.stream().into_iter().collect()),
            _ => None,
        };
        *i += 1;
        if let Some(inner) = inner {
            todo.push((inner, 0));
        }
    }
}

/// The site whose `accelerate` identifier is `tokens[i]`, if it is one: `accelerate!`,
/// `pmexpr::accelerate!` or `::pmexpr::accelerate!` followed by a delimited group.
fn site_at(tokens: &[TokenTree], i: usize, file: &str) -> Option<SiteSource> {
    let TokenTree::Ident(name) = &tokens[i] else {
        return None;
    };
    let (Some(TokenTree::Punct(bang)), Some(TokenTree::Group(input))) =
        (tokens.get(i + 1), tokens.get(i + 2))
    else {
        return None;
    };
    if name != "accelerate"
        || bang.as_char() != '!'
        || input.delimiter() == Delimiter::None
        || !is_pmexpr_prefix(&tokens[..i])
    {
        return None;
    }
    let (line, column) = position(name.span());
    Some(SiteSource::new(file, line, column, &input.stream()))
}

/// Whether the tokens before a macro name leave it a path to pmexpr's macro: no path at all, or
/// `pmexpr::` preceded by nothing or a leading `::` (not by another path segment, as in
/// `other::pmexpr::accelerate!`).
fn is_pmexpr_prefix(before: &[TokenTree]) -> bool {
    let Some(before) = strip_path_sep(before) else {
        return true;
    };
    let Some((TokenTree::Ident(krate), before)) = before.split_last() else {
        return false;
    };
    if krate != "pmexpr" {
        return false;
    }
    match strip_path_sep(before) {
        None => true,
        // `::pmexpr`, unless the `::` continues a path (`a::pmexpr`, `<T>::pmexpr`).
        Some(before) => !before.last().is_some_and(is_path_end),
    }
}

/// Whether a token can end a path segment before `::`.
fn is_path_end(token: &TokenTree) -> bool {
    match token {
        TokenTree::Ident(_) => true,
        TokenTree::Punct(p) => p.as_char() == '>',
        _ => false,
    }
}

/// The tokens before a trailing `::`, if they end with one.
fn strip_path_sep(tokens: &[TokenTree]) -> Option<&[TokenTree]> {
    match tokens {
        [rest @ .., TokenTree::Punct(a), TokenTree::Punct(b)]
            if a.as_char() == ':'
                && b.as_char() == ':'
                && a.spacing() == proc_macro2::Spacing::Joint =>
        {
            Some(rest)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TempDir;
    use pmexpr_core::registry::ItemKind;

    fn scan_one(text: &str) -> Scan {
        let dir = TempDir::new();
        dir.write("src/lib.rs", text);
        scan(&dir.path, &["src"], &[])
    }

    fn sites(scan: &Scan) -> Vec<(usize, usize, &str)> {
        let sites = &scan.registry.sites;
        sites
            .iter()
            .map(|s| (s.line, s.column, s.tokens.as_str()))
            .collect()
    }

    #[test]
    fn finds_fns_with_every_attribute_spelling_in_nested_modules() {
        let scan = scan_one(
            "#[pmexpr]\nfn a(x: i64) -> i64 { addi(x, 1) }\n\
             mod m {\n    #[pmexpr::pmexpr] pub fn b() {}\n    mod n {\n        #[::pmexpr::pmexpr]\n        pub(crate) fn c() {}\n    }\n}\n\
             #[other::pmexpr] fn not_ours() {}\nfn plain() {}\n",
        );
        let items: Vec<_> = scan
            .registry
            .items
            .iter()
            .map(|i| (i.kind, i.name.as_str(), i.file.as_str(), i.line, i.column))
            .collect();
        assert_eq!(
            items,
            [
                (ItemKind::Fn, "a", "src/lib.rs", 2, 4),
                (ItemKind::Fn, "b", "src/lib.rs", 4, 30),
                (ItemKind::Fn, "c", "src/lib.rs", 7, 23),
            ]
        );
        assert_eq!(
            scan.registry.items[0].source,
            "fn a (x : i64) -> i64 { addi (x , 1) }"
        );
    }

    #[test]
    fn finds_records_among_other_derives() {
        let scan = scan_one(
            "#[derive(Debug, Clone, pmexpr::Record)]\npub struct P { pub x: i64 }\n\
             #[derive(Record)] struct Q(i64);\n#[derive(::pmexpr::Record, Copy)] struct R;\n\
             #[derive(Debug)] struct NotARecord;\n",
        );
        let records: Vec<_> = scan.registry.items.iter().map(|i| &i.name).collect();
        assert_eq!(records, ["P", "Q", "R"]);
        assert!(
            scan.registry
                .items
                .iter()
                .all(|i| i.kind == ItemKind::Record)
        );
        assert_eq!(
            scan.registry.find_record("P")[0].source,
            "struct P { x : i64 }"
        );
        assert_eq!(
            (scan.registry.items[0].line, scan.registry.items[0].column),
            (2, 12)
        );
    }

    #[test]
    fn finds_sites_inside_other_macros_with_every_delimiter_and_path() {
        let scan = scan_one(concat!(
            "fn main() {\n",
            "    assert_eq!(accelerate!(x), 3);\n",
            "    println!(\"{}\", pmexpr::accelerate!(1 + 2));\n",
            "    let v = ::pmexpr::accelerate![a, b];\n",
            "    let é = accelerate! { map(f, v) };\n",
            "}\n",
        ));
        assert_eq!(
            sites(&scan),
            [
                (2, 16, "x"),
                (3, 28, "1 + 2"),
                (4, 23, "a , b"),
                (5, 13, "map (f , v)"),
            ]
        );
    }

    #[test]
    fn a_file_that_nests_deeply_is_scanned() {
        // rustc accepts it: the scan must not overflow the build script's stack (the parse, the
        // search for sites and the site's tokens all recurse over the nesting).
        let deep = format!("{}1{}", "(".repeat(20_000), ")".repeat(20_000));
        let scan = scan_one(&format!(
            "fn main() {{\n    let a = {deep};\n    let b = accelerate!(map(|x| {deep}, s));\n}}\n"
        ));
        assert_eq!(sites(&scan).len(), 1);
    }

    #[test]
    fn differently_formatted_copies_of_a_site_share_the_key_the_macro_computes() {
        let scan = scan_one(concat!(
            "fn f() {\n",
            "    let a = accelerate!(reduce(addi, 0, map(|x| x + 1, s)));\n",
            "    let b = accelerate!(\n",
            "        reduce( addi , 0 ,\n",
            "            map(| x |x+1, s) ) // the same site\n",
            "    );\n",
            "    let c = accelerate!(reduce(addi, 1, map(|x| x + 1, s)));\n",
            "}\n",
        ));
        let keys: Vec<u64> = scan.registry.sites.iter().map(|s| s.key).collect();
        // What the macro sees: the tokens as rustc hands them over, here with other spacing.
        let macro_input: TokenStream = "reduce(addi,0,map(|x|x+1,s))".parse().unwrap();
        let key = pmexpr_core::mangle::site_key(&macro_input);
        assert_eq!(keys[..2], [key, key]);
        assert_ne!(keys[2], key);
    }

    #[test]
    fn ignores_other_paths_and_nested_sites() {
        let scan = scan_one(concat!(
            "fn f() {\n",
            "    other::accelerate!(1);\n",
            "    x::pmexpr::accelerate!(2);\n",
            "    accelerate(3);\n",
            "    accelerate!(accelerate!(4));\n",
            "    // accelerate!(5)\n",
            "    let s = \"accelerate!(6)\";\n",
            "}\n",
            "macro_rules! accelerate { () => {} }\n",
        ));
        assert_eq!(sites(&scan), [(5, 5, "accelerate ! (4)")]);
    }

    #[test]
    fn excludes_directories_and_files() {
        let dir = TempDir::new();
        dir.write("src/lib.rs", "fn f() { accelerate!(1) }");
        dir.write("tests/ui/bad.rs", "fn f() { accelerate!(2) }");
        dir.write("tests/ui/deeper/bad.rs", "fn f() { accelerate!(3) }");
        dir.write("tests/skip.rs", "fn f() { accelerate!(4) }");
        dir.write("tests/keep.rs", "fn f() { accelerate!(5) }");
        let exclude = [PathBuf::from("tests/ui"), PathBuf::from("tests/skip.rs")];
        let scan = scan(&dir.path, &["src", "tests", "benches"], &exclude);
        let files: Vec<_> = scan.registry.sites.iter().map(|s| &s.file).collect();
        assert_eq!(files, ["src/lib.rs", "tests/keep.rs"]);
        assert_eq!(scan.files.len(), 2);
    }

    #[test]
    fn skips_unparsable_and_unreadable_files() {
        let dir = TempDir::new();
        dir.write("src/a.rs", "fn broken( { accelerate!(1)");
        dir.write("src/b.rs", "#[pmexpr] fn g() {}");
        fs::write(dir.path.join("src/c.rs"), b"fn \xff() {}").unwrap();
        let scan = scan(&dir.path, &["src"], &[]);
        assert_eq!(scan.files.len(), 3);
        let skipped: Vec<_> = scan
            .skipped
            .iter()
            .map(|(p, _)| relative_path(&dir.path, p))
            .collect();
        assert_eq!(skipped, ["src/a.rs", "src/c.rs"]);
        assert!(scan.skipped[0].1.starts_with("1:"), "{}", scan.skipped[0].1);
        assert_eq!(scan.registry.find_fn("g").len(), 1);
        assert!(scan.registry.sites.is_empty());
    }

    #[test]
    fn order_is_deterministic() {
        let dir = TempDir::new();
        for name in ["z", "a", "m", "a/b", "a/b/c"] {
            dir.write(
                &format!("src/{name}.rs"),
                "#[pmexpr] fn g() {}\nfn f() { accelerate!(1); accelerate!(2) }",
            );
        }
        let first = scan(&dir.path, &["src"], &[]);
        let second = scan(&dir.path, &["src"], &[]);
        assert_eq!(first.registry, second.registry);
        assert_eq!(first.files, second.files);
        let files: Vec<_> = first.registry.items.iter().map(|i| &i.file).collect();
        assert_eq!(
            files,
            [
                "src/a.rs",
                "src/a/b.rs",
                "src/a/b/c.rs",
                "src/m.rs",
                "src/z.rs"
            ]
        );
        let columns: Vec<_> = first.registry.sites[..2].iter().map(|s| s.column).collect();
        assert_eq!(columns, [10, 26]);
    }
}
