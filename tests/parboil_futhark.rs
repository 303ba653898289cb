//! The Futhark programs generated for the Parboil ports, kept as reviewed golden files under
//! `tests/golden/parboil/` (`PMEXPR_BLESS=1 cargo test --test parboil_futhark` rewrites them).
//!
//! Each golden file is one benchmark cut out of the crate's generated program
//! (`OUT_DIR/pmexpr/futhark/program.fut`, written by the build hook whether or not `futhark` is
//! installed): the site's entry for the original's number types, as a `def`, with every
//! definition it uses, and an `entry main` that takes the original's inputs in the original's
//! order (converting what our port takes differently), so that `futhark bench` times it on the
//! original's data beside the original. The generated names' numbers, which depend on the other
//! sites of the crate, are renumbered in order of appearance, so that the files change only when
//! the benchmark's own code does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The crate's generated Futhark program.
fn program() -> String {
    let path = concat!(env!("OUT_DIR"), "/pmexpr/futhark/program.fut");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The identifiers of a text (Futhark names: letters, digits, `_`, `'`).
fn idents(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '\''))
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic()))
        .collect()
}

/// The top-level blocks of the program (separated by blank lines) by the name they define.
fn blocks(program: &str) -> Vec<(String, String)> {
    program
        .split("\n\n")
        .filter_map(|b| {
            let line = b.lines().find(|l| !l.starts_with("--"))?;
            let name = line
                .strip_prefix("def ")
                .or_else(|| line.strip_prefix("entry "))?
                .split_whitespace()
                .next()?;
            Some((name.to_string(), b.trim_end().to_string()))
        })
        .collect()
}

/// The entry `entry` and every block it reaches, in program order, the entry as `def NEW`.
fn cut(program: &str, entry: &str, new: &str) -> String {
    let blocks = blocks(program);
    let by_name: BTreeMap<&str, &str> = blocks
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_str()))
        .collect();
    assert!(
        by_name.contains_key(entry),
        "no entry {entry} in the generated program"
    );
    let mut keep = BTreeSet::new();
    let mut todo = vec![entry.to_string()];
    while let Some(n) = todo.pop() {
        if !keep.insert(n.clone()) {
            continue;
        }
        for id in idents(by_name[n.as_str()]) {
            if by_name.contains_key(id) && !keep.contains(id) {
                todo.push(id.to_string());
            }
        }
    }
    let mut out = Vec::new();
    for (n, b) in &blocks {
        if keep.contains(n) {
            let b = if n == entry {
                // The comment naming the site's file and line goes too: the name says it.
                b.lines()
                    .filter(|l| !l.starts_with("--"))
                    .collect::<Vec<_>>()
                    .join("\n")
                    .replacen(&format!("entry {entry} "), &format!("def {new} "), 1)
            } else {
                b.clone()
            };
            out.push(b);
        }
    }
    renumber(&out.join("\n\n"))
}

/// Renumbers every `_N` part of a name in order of first appearance (the numbers are the
/// crate-wide identifiers of the generator).
fn renumber(text: &str) -> String {
    let mut map: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let in_name = i > 0 && (chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_');
        if chars[i] == '_' && in_name && i + 1 < chars.len() && chars[i + 1].is_ascii_digit() {
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            let ends_name = j == chars.len() || !(chars[j].is_ascii_alphanumeric());
            if ends_name {
                let n: String = chars[i + 1..j].iter().collect();
                let next = map.len() + 1;
                let m = *map.entry(n).or_insert(next);
                out.push_str(&format!("_{m}"));
                i = j;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Compares with `tests/golden/parboil/NAME.fut` or rewrites it under `PMEXPR_BLESS=1`.
fn golden(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/parboil")
        .join(format!("{name}.fut"));
    if std::env::var("PMEXPR_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, text).expect("write the golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}); PMEXPR_BLESS=1 writes it",
            path.display()
        )
    });
    assert!(
        expected == text,
        "{} differs from the generated program (PMEXPR_BLESS=1 rewrites it):\n{text}",
        path.display()
    );
}

/// The golden file of one benchmark: header, the cut-out program, the `main` adapter.
fn check(bench: &str, file: &str, site: &str, main: &str) {
    let p = program();
    let prefix = format!("site_src_parboil_{file}_rs_");
    let entry = idents(&p)
        .into_iter()
        .find(|id| id.starts_with(&prefix) && id.ends_with(site))
        .unwrap_or_else(|| panic!("no entry {prefix}…{site}"))
        .to_string();
    let new = format!("{}_pmexpr", bench.replace('-', "_"));
    let text = format!(
        "-- The Futhark program pmexpr generates for the Parboil `{bench}` port\n\
         -- (src/parboil/{file}.rs), cut out of the crate's program with what it uses.\n\
         -- `main` takes the original's inputs, so that `futhark bench` runs it on the\n\
         -- original's data: see BENCHMARKS.md. Checked by tests/parboil_futhark.rs.\n\n{}\n\n{}\n",
        cut(&p, &entry, &new),
        main.trim()
    );
    golden(bench, &text);
}

#[test]
fn sgemm() {
    check(
        "sgemm",
        "sgemm",
        "_f32",
        "entry main [n][m][p] (ass: [n][m]f32) (bss: [m][p]f32) (css: [n][p]f32) (alpha: f32) (beta: f32) : [][]f32 =\n  sgemm_pmexpr bss beta alpha ass css",
    );
}

#[test]
fn mri_q() {
    check(
        "mri-q",
        "mriq",
        "_f32",
        "entry main [numK][numX] (kx: [numK]f32) (ky: [numK]f32) (kz: [numK]f32) (x: [numX]f32) (y: [numX]f32) (z: [numX]f32) (phiR: [numK]f32) (phiI: [numK]f32) : ([]f32, []f32) =\n  mri_q_pmexpr phiR phiI kx ky kz x y z",
    );
}

#[test]
fn stencil() {
    check(
        "stencil",
        "stencil",
        "_f32_i64_i64",
        "entry main [ny][nz] (iterations: i32) (nx: i32) (A0_slice: [ny][nz]f32) : [][]f32 =\n  stencil_pmexpr A0_slice (i64.i32 nx) (i64.i32 iterations)",
    );
}

#[test]
fn histo() {
    check(
        "histo",
        "histo",
        "_i32_i32",
        "entry main [img_width][img_height] (histo_width: i32) (histo_height: i32) (img: [img_width][img_height]i32) : []i32 =\n  histo_pmexpr img (i32.u8 u8.highest) (i64.i32 histo_height) (i64.i32 histo_width)",
    );
}

#[test]
fn tpacf() {
    check(
        "tpacf",
        "tpacf",
        "_i32",
        "entry main [numD][numRs] (datapointsx: [numD]f64) (datapointsy: [numD]f64) (randompointsx: [numRs][numD]f64) (randompointsy: [numRs][numD]f64) : []i32 =\n  tpacf_pmexpr 1 datapointsx datapointsy randompointsx randompointsy",
    );
}
