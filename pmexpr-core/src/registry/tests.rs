//! The registry's tests: its data, its text format, the directory walk and the macros' search.

use std::fs;
use std::path::PathBuf;

use super::*;

fn item(kind: ItemKind, name: &str, file: &str, line: usize, source: &str) -> RegistryItem {
    RegistryItem {
        kind,
        name: name.into(),
        file: file.into(),
        line,
        column: 4,
        source: source.into(),
    }
}

/// A site with any text as its tokens (the format must carry text that does not parse too).
fn site(file: &str, line: usize, column: usize, tokens: &str) -> SiteSource {
    SiteSource {
        file: file.into(),
        line,
        column,
        tokens: tokens.into(),
        key: 0x0123_4567_89ab_cdef,
    }
}

/// A temporary directory unique to this process and test, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("pmexpr-core-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.0.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn round_trip_awkward_sources() {
    let registry = Registry::new(
        vec![
            item(ItemKind::Fn, "g", "src/lib.rs", 3, "fn g() {\n}\nend\n"),
            item(
                ItemKind::Record,
                "Été",
                "src/é x.rs",
                1,
                "fn 1 2 3 4 5\nsite 1 1 1 1\n",
            ),
            item(ItemKind::Fn, "h", "src/lib.rs", 9, ""),
            item(ItemKind::Fn, "crlf", "src/lib.rs", 12, "a\r\nb\n\n\n"),
            item(
                ItemKind::Alias,
                "Real",
                "src/lib.rs",
                14,
                "type Real = f64 ;",
            ),
        ],
        vec![
            site("src/lib.rs", 7, 13, "x + 1"),
            site("src/main.rs", 1, 1, "\"pmexpr-registry 1\nend\" 😀"),
            site("src/lib.rs", 7, 2, ""),
        ],
    );
    let text = registry.to_text();
    assert!(text.starts_with("pmexpr-registry 3\n"));
    assert_eq!(Registry::from_text(&text), Ok(registry));
}

#[test]
fn new_sorts_by_file_line_column() {
    let registry = Registry::new(
        vec![
            item(ItemKind::Fn, "b", "src/b.rs", 1, ""),
            item(ItemKind::Fn, "a2", "src/a.rs", 10, ""),
            item(ItemKind::Fn, "a1", "src/a.rs", 2, ""),
        ],
        vec![site("src/a.rs", 3, 9, ""), site("src/a.rs", 3, 2, "")],
    );
    let names: Vec<_> = registry.items.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["a1", "a2", "b"]);
    assert_eq!(registry.sites[0].column, 2);
}

#[test]
fn from_text_rejects_damaged_files() {
    let text = Registry::new(
        vec![item(ItemKind::Fn, "g", "src/lib.rs", 3, "fn g")],
        vec![],
    )
    .to_text();
    // Truncated anywhere, including just before `end`.
    for cut in 0..text.len() {
        assert!(Registry::from_text(&text[..cut]).is_err(), "cut at {cut}");
    }
    assert!(Registry::from_text(&text.replace("fn 3", "fn x")).is_err());
    assert!(Registry::from_text(&text.replace("registry 3", "registry 2")).is_err());
    assert!(Registry::from_text(&text.replace(" 4\n", " 99\n")).is_err());
    assert!(Registry::from_text(&format!("{text}more")).is_err());
    assert!(Registry::from_text(&text.replace("fn 3", "enum 3")).is_err());
}

#[test]
fn from_text_rejects_a_length_inside_a_character() {
    let text = Registry::new(vec![], vec![site("é", 1, 1, "")]).to_text();
    let damaged = text.replace("site 1 1 2 16 0", "site 1 1 1 17 0");
    assert_ne!(damaged, text);
    assert!(Registry::from_text(&damaged).is_err());
}

#[test]
fn find_by_kind_and_name() {
    let registry = Registry::new(
        vec![
            item(ItemKind::Fn, "g", "src/a.rs", 1, ""),
            item(ItemKind::Record, "g", "src/a.rs", 5, ""),
            item(ItemKind::Fn, "g", "src/b.rs", 1, ""),
        ],
        vec![],
    );
    assert_eq!(registry.find_fn("g").len(), 2);
    assert_eq!(registry.find_record("g")[0].line, 5);
    assert!(registry.find_fn("h").is_empty());
}

#[test]
fn load_missing_present_and_damaged() {
    let dir = TempDir::new("load");
    assert_eq!(Registry::load(&dir.0), None);
    let registry = Registry::new(vec![], vec![site("src/lib.rs", 1, 1, "1")]);
    dir.write(Registry::FILE_NAME, &registry.to_text());
    assert_eq!(Registry::load(&dir.0), Some(Ok(registry)));
    dir.write(Registry::FILE_NAME, "garbage");
    assert!(matches!(Registry::load(&dir.0), Some(Err(_))));
}

#[test]
fn source_files_are_sorted_and_excluded() {
    let dir = TempDir::new("files");
    for path in [
        "src/b.rs",
        "src/a/z.rs",
        "src/a.rs",
        "src/notes.txt",
        "tests/ui/x.rs",
    ] {
        dir.write(path, "");
    }
    dir.write("tests/t.rs", "");
    let files = source_files(&dir.0, DEFAULT_DIRS, &[PathBuf::from("tests/ui")]);
    let names: Vec<_> = files.iter().map(|f| relative_path(&dir.0, f)).collect();
    assert_eq!(names, ["src/a/z.rs", "src/a.rs", "src/b.rs", "tests/t.rs"]);
}

#[test]
fn finds_a_fn_in_the_sources_with_a_textual_position() {
    let dir = TempDir::new("find");
    dir.write("src/lib.rs", "mod m;\n// fn g is in m\n");
    dir.write(
        "src/m.rs",
        "fn g_other() {}\nfn g() {} // not marked\nmod inner {\n    #[pmexpr]\n    fn  g(x: i64) -> i64 { x }\n}\n",
    );
    let found = find_pmexpr_fn_in_sources(&dir.0, "g").unwrap();
    assert_eq!(
        (found.file.as_str(), found.line, found.column),
        ("src/m.rs", 5, 9)
    );
    assert_eq!(found.source, "fn g (x : i64) -> i64 { x }");
    assert_eq!(find_pmexpr_fn_in_sources(&dir.0, "h"), None);
}

#[test]
fn a_test_or_example_file_keeps_its_functions_to_itself() {
    let item = |file: &str| RegistryItem {
        kind: ItemKind::Fn,
        name: "f".into(),
        file: file.into(),
        line: 1,
        column: 1,
        source: "fn f(x: i64) -> i64 { x }".into(),
    };
    let registry = Registry::new(
        vec![
            item("src/lib.rs"),
            item("tests/a.rs"),
            item("tests/common/mod.rs"),
            item("examples/b.rs"),
        ],
        Vec::new(),
    );
    let seen = |file: &str| registry.prelude_for(Some(Path::new(file))).len();
    // The library's and the shared test module's functions, and the file's own.
    assert_eq!(seen("tests/a.rs"), 3);
    assert_eq!(seen("/home/u/pkg/tests/a.rs"), 3);
    assert_eq!(seen("tests/other.rs"), 2);
    assert_eq!(seen("examples/b.rs"), 3);
    assert_eq!(seen("src/lib.rs"), 2);
    assert_eq!(registry.prelude().len(), 4);
}

#[test]
fn a_test_file_keeps_its_structs_and_aliases_to_itself() {
    let registry = Registry::new(
        vec![
            item(
                ItemKind::Record,
                "B",
                "tests/a.rs",
                1,
                "struct B { x : i64 }",
            ),
            item(
                ItemKind::Record,
                "B",
                "tests/b.rs",
                1,
                "struct B { y : f64 }",
            ),
            item(ItemKind::Alias, "R", "tests/a.rs", 2, "type R = f64 ;"),
            item(ItemKind::Alias, "R", "tests/b.rs", 2, "type R = i64 ;"),
            item(
                ItemKind::Alias,
                "L",
                "src/lib.rs",
                2,
                "type L = Vec < R > ;",
            ),
        ],
        Vec::new(),
    );
    use crate::types::{Number, TypeAnn};
    let a = registry.records_for(Some(Path::new("tests/a.rs")));
    assert_eq!(
        a.expand("B").unwrap(),
        TypeAnn::Record(vec![("x".into(), TypeAnn::Num(Number::I64))])
    );
    assert_eq!(a.expand("R").unwrap(), TypeAnn::Num(Number::F64));
    let b = registry.records_for(Some(Path::new("/pkg/tests/b.rs")));
    assert_eq!(
        b.expand("L").unwrap(),
        TypeAnn::Seq(Box::new(TypeAnn::Num(Number::I64)))
    );
    // Seen from everywhere, the two are ambiguous.
    assert!(registry.records().expand("B").is_err());
    assert!(registry.records().expand("R").is_err());
}
