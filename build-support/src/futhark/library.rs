//! Building the Futhark library of a crate: `futhark <flavour> --library` over the generated
//! program, the C compiled with the `cc` crate (a static library for `c` and `multicore`, a shared
//! one for `cuda`), and the glue of every site whose entry points the manifest confirms.
//!
//! Layout under `OUT_DIR/pmexpr/futhark/`: `program.fut` (written by the hook before), `lib/`
//! (`pmexpr_futhark.{c,h,json}`, the compiled library, a stamp), `glue/<site>.rs`. An unchanged
//! program is not compiled again. Without a library, `glue/` is removed, so that no site includes
//! stale glue.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use pmexpr_abi::Number;
use pmexpr_core::codegen::futhark::{CrateFuthark, EntrySignature};
use pmexpr_core::mangle::{fnv1a, glue_file};
use pmexpr_core::types::TyVar;

use super::Flavour;
use super::glue::{Linkage, check, site_glue};
use super::manifest::Manifest;
use crate::write::write_if_changed;

/// The base name of the generated C files.
const BASE: &str = "pmexpr_futhark";

/// What the hook tells Cargo and the user after building the library.
#[derive(Debug, Default)]
pub struct Built {
    /// `cargo:` directives (link search path and library, the environment of the crate).
    pub directives: Vec<String>,
    /// Warnings (entry points left out).
    pub warnings: Vec<String>,
    /// The sites that got glue.
    pub sites: Vec<String>,
}

/// The directory of the library's files.
pub fn futhark_dir(out_dir: &Path) -> PathBuf {
    out_dir.join("pmexpr").join("futhark")
}

/// Removes every site's glue (when there is no library to call).
pub fn remove_glue(out_dir: &Path) {
    let _ = fs::remove_dir_all(futhark_dir(out_dir).join("glue"));
}

/// Builds the library and the glue; an error says why the Futhark-class sites run on the CPU.
pub fn build(
    out_dir: &Path,
    compiler: &Path,
    flavour: Flavour,
    program: &CrateFuthark,
    numeric_order: &HashMap<String, Vec<TyVar>>,
) -> Result<Built, String> {
    let dir = futhark_dir(out_dir);
    let lib_dir = dir.join("lib");
    fs::create_dir_all(&lib_dir)
        .map_err(|e| format!("cannot create {}: {e}", lib_dir.display()))?;
    let source = &program.program.source;
    // A different compiler (or the same one updated in place), or another version of this
    // helper, compiles again.
    let compiler_time = fs::metadata(compiler)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let id = format!(
        "{:016x}",
        fnv1a(
            format!(
                "{source}\n{}\n{}\n{compiler_time}\n{}",
                flavour.command(),
                compiler.display(),
                // Another version of this helper may leave out other entries.
                env!("CARGO_PKG_VERSION")
            )
            .as_bytes()
        )
    );
    let lib_name = format!("{BASE}_{}", &id[..12]);
    let artifact = match flavour {
        Flavour::Cuda => lib_dir.join(format!("lib{lib_name}.so")),
        _ => lib_dir.join(format!("lib{lib_name}.a")),
    };
    let stamp = lib_dir.join("stamp");
    let manifest_path = lib_dir.join(format!("{BASE}.json"));
    let fresh = fs::read_to_string(&stamp).is_ok_and(|s| s == id)
        && artifact.is_file()
        && manifest_path.is_file();
    let mut rejected: Vec<(String, String)> = Vec::new();
    if !fresh {
        let _ = fs::remove_file(&stamp);
        rejected = compile_program(compiler, flavour, source, &lib_dir)?;
        compile_c(flavour, &lib_dir, &lib_name)?;
        write_if_changed(&lib_dir.join("rejected.txt"), &rejected_text(&rejected))
            .map_err(|e| format!("cannot write in {}: {e}", lib_dir.display()))?;
        fs::write(&stamp, &id).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
        // Libraries of earlier programs are never linked again.
        if let Ok(listing) = fs::read_dir(&lib_dir) {
            for f in listing.filter_map(|e| e.ok().map(|e| e.path())) {
                let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                if name.starts_with(&format!("lib{BASE}_")) && f != artifact {
                    let _ = fs::remove_file(&f);
                }
            }
        }
    } else if let Ok(text) = fs::read_to_string(lib_dir.join("rejected.txt")) {
        rejected = text
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(e, why)| (e.to_string(), why.replace("\\n", "\n")))
            .collect();
    }
    let manifest_text = fs::read_to_string(&manifest_path)
        .map_err(|e| format!("cannot read {}: {e}", manifest_path.display()))?;
    let mut manifest = Manifest::parse(&manifest_text)?;
    // Futhark 0.24 declares the raw values functions in its header but not in its manifest.
    if let Ok(header) = fs::read_to_string(lib_dir.join(format!("{BASE}.h"))) {
        manifest.values_raw_from_header(&header);
    }

    let mut built = Built::default();
    // The entries by site, each checked against the manifest.
    let mut by_site: BTreeMap<&str, Vec<(&EntrySignature, Vec<Number>)>> = BTreeMap::new();
    for sig in &program.program.entries {
        if let Some((_, why)) = rejected.iter().find(|(e, _)| *e == sig.name) {
            built.warnings.push(format!(
                "pmexpr: the Futhark compiler rejected the code generated for accelerate! at {}, which runs on the CPU targets for those number types (expected when the site builds sequences of different lengths, which Futhark arrays cannot hold; otherwise a bug in pmexpr's Futhark generator: please report it):\n{why}",
                sig.site
            ));
            continue;
        }
        if let Err(why) = check(&manifest, sig) {
            built.warnings.push(format!(
                "pmexpr: the Futhark library cannot be called for accelerate! at {} ({why}); it runs on the CPU targets for those number types",
                sig.site
            ));
            continue;
        }
        let order = numeric_order.get(&sig.site).cloned().unwrap_or_default();
        let numbers: Option<Vec<Number>> = order
            .iter()
            .map(|v| sig.instantiation.get(v).copied())
            .collect();
        let Some(numbers) = numbers else {
            continue;
        };
        by_site.entry(&sig.site).or_default().push((sig, numbers));
    }
    let shared = artifact.display().to_string();
    let linkage = match flavour {
        Flavour::Cuda => Linkage::Shared(&shared),
        _ => Linkage::Static(&lib_name),
    };
    let glue_dir = dir.join("glue");
    let mut keep = Vec::new();
    for (site, entries) in &by_site {
        let text = site_glue(&manifest, &id, linkage, site, entries)?;
        let file = glue_file(out_dir, site);
        write_if_changed(&file, &text)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        keep.push(file);
        built.sites.push(site.to_string());
    }
    // Glue of sites that no longer exist would be harmless, but stale: remove it.
    if let Ok(listing) = fs::read_dir(&glue_dir) {
        for f in listing.filter_map(|e| e.ok().map(|e| e.path())) {
            if !keep.contains(&f) {
                let _ = fs::remove_file(f);
            }
        }
    }
    if flavour != Flavour::Cuda {
        // The glue's `#[link]` names the library; Cargo passes the search path to every target.
        built.directives.push(format!(
            "cargo:rustc-link-search=native={}",
            lib_dir.display()
        ));
    }
    built.directives.push(format!(
        "cargo:rustc-env=PMEXPR_FUTHARK_LIBRARY={}",
        flavour.command()
    ));
    // Which compiler made it: an older one than the generator targets leaves entries out.
    if let Some((a, b, c)) = super::compiler_version(compiler) {
        built.directives.push(format!(
            "cargo:rustc-env=PMEXPR_FUTHARK_VERSION={a}.{b}.{c}"
        ));
    }
    Ok(built)
}

/// The most rounds of leaving out rejected entry points before giving up (the compiler reports
/// one error per round; an older compiler may reject a few dozen of a large crate's entries).
const MAX_ROUNDS: usize = 64;

/// Compiles the program to C, leaving out the entry points (and the definitions only they use)
/// where the Futhark compiler reports errors, so that one bad entry does not cost every site its
/// library. Returns the entries left out, each with the compiler's message.
fn compile_program(
    compiler: &Path,
    flavour: Flavour,
    source: &str,
    lib_dir: &Path,
) -> Result<Vec<(String, String)>, String> {
    let file = lib_dir.join("program.fut");
    let mut blocks = program_blocks(source);
    let mut rejected = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let text: String = blocks.iter().map(|b| format!("{}\n\n", b.text)).collect();
        fs::write(&file, &text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let errors = match run_futhark(compiler, flavour, &file, lib_dir)? {
            None => return Ok(rejected),
            Some(errors) => errors,
        };
        let lines = error_lines(&errors, "program.fut");
        let at: Vec<usize> = lines.iter().filter_map(|l| block_at(&blocks, *l)).collect();
        if at.is_empty() {
            return Err(failure(flavour, &file, &errors));
        }
        let removed = remove_with_dependents(&mut blocks, &at);
        let why: String = (error_text(&errors).lines())
            .take(12)
            .collect::<Vec<_>>()
            .join("\n");
        rejected.extend(removed.into_iter().map(|e| (e, why.clone())));
        if !blocks.iter().any(|b| b.entry.is_some()) {
            return Err(failure(flavour, &file, &errors));
        }
    }
    Err(format!(
        "`futhark {} --library` still failed after leaving out {} entry points",
        flavour.command(),
        rejected.len()
    ))
}

/// One top-level block of the generated program (it separates them with blank lines).
#[derive(Debug, Clone)]
struct Block {
    text: String,
    /// The name it defines (`def` or `entry`).
    name: Option<String>,
    /// The entry point's name, when it is one.
    entry: Option<String>,
}

fn program_blocks(source: &str) -> Vec<Block> {
    source
        .split("\n\n")
        .map(str::trim_end)
        .filter(|b| !b.trim().is_empty())
        .map(|b| {
            let decl = b.lines().find(|l| !l.starts_with("--")).unwrap_or("");
            let word = |kw: &str| {
                decl.strip_prefix(kw)
                    .and_then(|r| r.split(|c: char| c.is_whitespace() || c == ':').next())
                    .map(str::to_string)
            };
            let entry = word("entry ");
            Block {
                text: b.to_string(),
                name: entry.clone().or_else(|| word("def ")),
                entry,
            }
        })
        .collect()
}

/// The lines (1-based) of `file` that the compiler's errors point at (`file:line:column`). The
/// warnings printed before the first error are left out: an unused variable in a good site must
/// not cost that site its entry points.
fn error_lines(errors: &str, file: &str) -> Vec<usize> {
    let errors = error_text(errors);
    let mut out = Vec::new();
    for (k, _) in errors.match_indices(file) {
        let rest = &errors[k + file.len()..];
        let digits: String = rest
            .strip_prefix(':')
            .map(|r| r.chars().take_while(char::is_ascii_digit).collect())
            .unwrap_or_default();
        if let Ok(l) = digits.parse() {
            out.push(l);
        }
    }
    out
}

/// The compiler's messages from the first error on (not the warnings it prints before); all of
/// them when no line starts with `Error`.
fn error_text(errors: &str) -> &str {
    let mut at = 0;
    for line in errors.split_inclusive('\n') {
        if line.starts_with("Error") {
            return &errors[at..];
        }
        at += line.len();
    }
    errors
}

/// The block that holds line `line` of the program (its blocks joined by blank lines).
fn block_at(blocks: &[Block], line: usize) -> Option<usize> {
    let mut start = 1;
    for (i, b) in blocks.iter().enumerate() {
        let n = b.text.lines().count();
        if (start..start + n).contains(&line) {
            return Some(i);
        }
        start += n + 1;
    }
    None
}

/// Removes the blocks `at` and every block that uses a name they define, transitively (generated
/// names are unique, so a whole-word match is a use); returns the entry points removed.
fn remove_with_dependents(blocks: &mut Vec<Block>, at: &[usize]) -> Vec<String> {
    let mut gone: Vec<String> = Vec::new();
    let mut remove: Vec<bool> = (0..blocks.len()).map(|i| at.contains(&i)).collect();
    loop {
        for (i, b) in blocks.iter().enumerate() {
            if remove[i]
                && let Some(n) = &b.name
                && !gone.contains(n)
            {
                gone.push(n.clone());
            }
        }
        let mut changed = false;
        for (i, b) in blocks.iter().enumerate() {
            if !remove[i] && gone.iter().any(|n| uses(&b.text, n)) {
                remove[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut entries = Vec::new();
    let mut k = 0;
    blocks.retain(|b| {
        let r = remove[k];
        k += 1;
        if r && let Some(e) = &b.entry {
            entries.push(e.clone());
        }
        !r
    });
    entries
}

/// Whether `text` uses the identifier `name` as a whole word.
fn uses(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '\'';
    text.match_indices(name).any(|(k, _)| {
        let before = text[..k].chars().next_back();
        let after = text[k + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

fn rejected_text(rejected: &[(String, String)]) -> String {
    rejected
        .iter()
        .map(|(e, why)| format!("{e}\t{}\n", why.replace('\n', "\\n")))
        .collect()
}

fn failure(flavour: Flavour, file: &Path, errors: &str) -> String {
    let shown: Vec<&str> = errors.lines().take(30).collect();
    format!(
        "`futhark {} --library` failed on {} (a bug in pmexpr's Futhark generator: please report it):\n{}",
        flavour.command(),
        file.display(),
        shown.join("\n")
    )
}

/// `futhark <flavour> --library -o lib/pmexpr_futhark <file>`: `None` on success, else the
/// compiler's messages.
fn run_futhark(
    compiler: &Path,
    flavour: Flavour,
    program: &Path,
    lib_dir: &Path,
) -> Result<Option<String>, String> {
    let out = Command::new(compiler)
        .arg(flavour.command())
        .arg("--library")
        .arg("-o")
        .arg(lib_dir.join(BASE))
        .arg(program)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", compiler.display()))?;
    if out.status.success() {
        return Ok(None);
    }
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    Ok(Some(text))
}

/// Compiles `lib/pmexpr_futhark.c`: a static library for `c` and `multicore`, a shared library
/// for `cuda` (its CUDA headers from `$CUDA_HOME/include`, else `$CUDA_PATH/include`, else
/// `/usr/local/cuda/include`; loaded only on a machine with a GPU).
fn compile_c(flavour: Flavour, lib_dir: &Path, lib_name: &str) -> Result<(), String> {
    let c_file = lib_dir.join(format!("{BASE}.c"));
    let mut build = cc::Build::new();
    build
        .file(&c_file)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .warnings(false)
        .debug(false)
        // The generated C is the hot loop: optimize it even in debug builds.
        .opt_level(3)
        .std("c99")
        .out_dir(lib_dir);
    if flavour == Flavour::Multicore {
        build.flag("-pthread");
    }
    match flavour {
        Flavour::C | Flavour::Multicore => build
            .try_compile(lib_name)
            .map_err(|e| format!("the C compiler failed on {}: {e}", c_file.display())),
        Flavour::Cuda => {
            let cuda_home = ["CUDA_HOME", "CUDA_PATH"]
                .iter()
                .find_map(std::env::var_os)
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/usr/local/cuda"));
            build.include(cuda_home.join("include")).pic(true);
            let compiler = build
                .try_get_compiler()
                .map_err(|e| format!("no C compiler: {e}"))?;
            let so = lib_dir.join(format!("lib{lib_name}.so"));
            let mut cmd = compiler.to_command();
            // Not linked against the driver or NVRTC, which the build machine need not have: the
            // runtime loads both (globally) before it opens this library, on a machine with a GPU.
            cmd.arg("-shared")
                .arg("-o")
                .arg(&so)
                .arg(&c_file)
                .args(["-lm", "-pthread"]);
            let out = cmd
                .output()
                .map_err(|e| format!("cannot run the C compiler: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let shown: Vec<&str> = stderr.lines().take(20).collect();
                Err(format!(
                    "the C compiler failed on {} for the cuda flavour (are `cuda.h` and `nvrtc.h` in $CUDA_HOME/include?):\n{}",
                    c_file.display(),
                    shown.join("\n")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "-- header\n-- more\n\ndef f_1 (x: i64) =\n  x + 1\n\ndef g_2 (x: i64) =\n  f_1 x\n\n-- accelerate! at a\nentry site_a (s: []i64) : []i64 =\n  map g_2 s\n\n-- accelerate! at b\nentry site_b (s: []i64) : i64 =\n  reduce (+) 0 s\n\ndef f_10 (x: i64) =\n  x\n";

    #[test]
    fn a_rejected_definition_takes_the_entries_that_use_it() {
        let mut blocks = program_blocks(PROGRAM);
        let names: Vec<Option<&str>> = blocks.iter().map(|b| b.name.as_deref()).collect();
        assert_eq!(
            names,
            [
                None,
                Some("f_1"),
                Some("g_2"),
                Some("site_a"),
                Some("site_b"),
                Some("f_10")
            ]
        );
        // Line 5 is the body of `f_1`; the warning before the error (at `site_b`) is not an error.
        let errors = "Warning at /tmp/x/program.fut:16:3-5:\n  Unused variable.\n\nError at /tmp/x/program.fut:5:3-7:\nCannot unify.";
        let lines = error_lines(errors, "program.fut");
        assert_eq!(lines, [5]);
        let at: Vec<usize> = lines.iter().filter_map(|l| block_at(&blocks, *l)).collect();
        assert_eq!(at, [1]);
        let removed = remove_with_dependents(&mut blocks, &at);
        assert_eq!(removed, ["site_a"]);
        let left: Vec<&str> = blocks.iter().filter_map(|b| b.name.as_deref()).collect();
        // `f_10` does not use `f_1`: whole words only.
        assert_eq!(left, ["site_b", "f_10"]);
        assert!(uses("map g_2 s", "g_2") && !uses("g_20 x", "g_2"));
        let saved = rejected_text(&[("site_a".into(), "line 1\nline 2".into())]);
        assert_eq!(saved, "site_a\tline 1\\nline 2\n");
    }
}
