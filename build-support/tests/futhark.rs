//! Every Futhark program pmexpr generates type-checks with the Futhark compiler (`futhark check`):
//! the golden corpus of the Futhark code generator (`pmexpr-core/tests/golden/futhark`) and the
//! program of this repository's Futhark-class `accelerate!` sites (scanned as the build hook
//! scans them).
//!
//! The compiler is found as the hook finds it (`PMEXPR_FUTHARK`, else `PATH`). Without it the test
//! says that it skipped and why, and passes: the compiler is not in the package registries that
//! this project's machines reach. The programs are always generated, so a generator failure on
//! the repository's sites fails here everywhere.

use std::path::{Path, PathBuf};
use std::process::Command;

use pmexpr_build::{futhark, scan};
use pmexpr_core::program::{FUTHARK_FILE, compile_crate};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("build-support is inside the repository")
        .to_path_buf()
}

/// `(name, program)`: the golden files and the repository's program.
fn programs() -> Vec<(String, String)> {
    let root = repository();
    let mut out = Vec::new();
    let golden = root.join("pmexpr-core/tests/golden/futhark");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&golden)
        .expect("the golden Futhark corpus exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fut"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable golden file");
        out.push((f.display().to_string(), text));
    }
    // `tests/runtime_checks.rs` holds sites that break the accelerated backends' assumptions on
    // purpose (an irregular `map(|n| create(n, …), s)`, which Futhark rightly rejects; the hook
    // leaves such entries out and the site runs on the CPU).
    let scan = scan(
        &root,
        &["src", "examples", "tests", "benches"],
        &[
            PathBuf::from("tests/ui"),
            PathBuf::from("tests/runtime_checks.rs"),
        ],
    );
    let output = compile_crate(&scan.registry, false);
    let program = output
        .files
        .into_iter()
        .find(|(name, _)| name == FUTHARK_FILE)
        .map(|(_, text)| text)
        .expect("this repository has Futhark-class sites, so a program is generated");
    assert!(
        program.contains("entry site_examples_listing1_rs_58_20"),
        "the second site of Listing 1 has an entry point"
    );
    // Every site leaves nothing out but what tests/runtime_checks.rs plants (excluded above).
    assert!(
        !program.contains("not generated: "),
        "entries were left out of the repository's program:\n{}",
        program.lines().take(40).collect::<Vec<_>>().join("\n")
    );
    out.push(("the repository's Futhark-class sites".into(), program));
    out
}

#[test]
fn generated_futhark_type_checks() {
    let programs = programs();
    let Some(compiler) = futhark::find_compiler() else {
        println!(
            "skipped: `futhark check` of {} generated programs: the futhark compiler is not on PATH \
             (or named by PMEXPR_FUTHARK)",
            programs.len()
        );
        return;
    };
    let version = futhark::compiler_version(&compiler);
    if version.is_none_or(|v| v < futhark::TARGET_VERSION) {
        println!(
            "skipped: `futhark check` of {} generated programs: {} is version {version:?}, older \
             than the {:?} the generator writes for",
            programs.len(),
            compiler.display(),
            futhark::TARGET_VERSION
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("pmexpr-futhark-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let mut failures = Vec::new();
    for (i, (name, text)) in programs.iter().enumerate() {
        let file = dir.join(format!("program{i}.fut"));
        std::fs::write(&file, text).expect("the program is written");
        let out = Command::new(&compiler).arg("check").arg(&file).output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => failures.push(format!("{name}:\n{}", String::from_utf8_lossy(&o.stderr))),
            Err(e) => failures.push(format!("{name}: cannot run {}: {e}", compiler.display())),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    println!(
        "futhark check: {} generated programs type-check ({})",
        programs.len(),
        compiler.display()
    );
}
